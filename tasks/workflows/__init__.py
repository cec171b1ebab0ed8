"""Nornir orchestration: the only layer that talks to devices."""
