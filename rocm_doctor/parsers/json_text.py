"""JSON from files a user hands over (snapshots, reports, data packs), with a nesting limit. Pure.

The standard parser stops at Python's recursion limit with a RecursionError, and a document just under it still
breaks the code that walks it (redaction, replay); real snapshots and reports nest about a dozen levels.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200
# Containers and items, counted on the text before it is parsed (an upper bound: brackets and commas in strings
# count too): 240 MB of `[[],[],…]` would need gigabytes as Python objects. Real snapshots hold a few 10,000.
MAX_CONTAINERS = 1_000_000
MAX_ITEMS = 4_000_000


class TooDeep(ValueError):
    """The document nests deeper than MAX_DEPTH, or holds more than the structure limits; the message is one line."""


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, or TooDeep for a document nested deeper than `max_depth` or with more containers or items than
    the limits (json.JSONDecodeError as usual)."""
    containers = text.count("[") + text.count("{")
    if containers > MAX_CONTAINERS or text.count(",") > MAX_ITEMS:
        raise TooDeep(f"more than {MAX_CONTAINERS:,} lists and objects or {MAX_ITEMS:,} items")
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"nested deeper than {max_depth} levels") from None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise TooDeep(f"nested deeper than {max_depth} levels")
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return value
