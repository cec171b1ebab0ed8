"""Distributed runs: a plan cut into shards, each read as a single run would, and joined."""
