"""Sourced, dated data shipped with rocm-doctor (read through importlib.resources)."""
