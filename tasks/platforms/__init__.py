"""Per-platform render, collect and driver wiring; the registry is in tasks.platforms.registry."""
