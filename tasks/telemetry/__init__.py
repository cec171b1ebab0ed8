"""Streaming telemetry: counters and state watched while jobs run (gNMI subscriptions, or
polling where a platform has none), judged into live lossless-health findings."""
