"""Comparing machines: one node with another (`fleet diff`) or one run with another (`diff`) is the same
comparison of the same facts. `fields` says which facts matter and where each comes from, `engine` finds what
differs, `relevance` ties each difference to the checks that now report a problem."""
