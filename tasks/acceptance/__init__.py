"""Acceptance runs: pairwise and collective tests between GPU servers, judged against a
reference, with the fabric's counters before and after."""
