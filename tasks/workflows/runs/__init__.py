"""A change run's bookkeeping: its journal, its lock, its state, what it works from."""
