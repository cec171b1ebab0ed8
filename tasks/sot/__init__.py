"""The source of truth (Nautobot): import, write-back, audit, and the test service."""
