"""Per-platform render, collect and driver wiring; the registry is in flatfab.platforms.registry."""
