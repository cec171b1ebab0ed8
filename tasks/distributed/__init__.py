"""Distributed runs on Celery + Redis: shard tasks on workers, a coordinator that merges.

Imported only by the distributed commands (`verify/audit --distributed`, `rollout --dry-run
--distributed`, `worker`, `beat`): plan, render, check and a single-process verify never
import Celery.
"""
