"""Reads the sourced tables in data/ (the user's updated copy first, when one is installed)."""
