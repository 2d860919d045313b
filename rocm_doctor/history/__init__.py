"""The history of `check` runs and the comparison of two runs: what changed since the last good run."""
