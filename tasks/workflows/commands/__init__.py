"""The commands' workflows: what verify, audit, rollout, rollback, watch and render do."""
