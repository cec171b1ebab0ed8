"""Reaching devices through Nornir: inventory, credentials, connections, reading."""
