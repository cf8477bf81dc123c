"""``proofgym view``: a read-only web viewer of runs, sessions and the evidence behind each reward."""
