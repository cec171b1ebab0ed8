"""Rollout plans (runbooks/*.yaml): phases, device selection, gates and failure policy."""
