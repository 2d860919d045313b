"""JSON from files a user hands over (snapshots, reports, data packs), with a nesting limit. Pure.

The standard parser stops at Python's recursion limit with a RecursionError, and a document just under it still
breaks the code that walks it (redaction, replay); real snapshots and reports nest about a dozen levels.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200


class TooDeep(ValueError):
    """The document nests deeper than MAX_DEPTH; the message is one line."""


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, or TooDeep for a document nested deeper than `max_depth` (json.JSONDecodeError as usual)."""
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
