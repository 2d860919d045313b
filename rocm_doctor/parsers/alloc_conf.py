"""PyTorch's caching-allocator config grammar (PYTORCH_ALLOC_CONF, and the older PYTORCH_CUDA_ALLOC_CONF and
PYTORCH_HIP_ALLOC_CONF): comma-separated `key:value` pairs, a `[interval:divisions,...]` list for
roundup_power2_divisions. Read the way c10's ConfigTokenizer and AllocatorConfig read it, with torch's own error
messages, so a value that would raise at the first GPU allocation is caught before. Pure; never raises.
"""

from __future__ import annotations

import re
from typing import Any, Optional

MIN_SPLIT_MB = 20  # kLargeBuffer / 1 MB in c10
MAX_REGISTER_THREADS = 128
BOOL_KEYS = {
    "expandable_segments": "expandable_segments",
    "release_lock_on_cudamalloc": "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc": "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register": "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register": "pinned_use_hip_host_register",
    "pinned_use_background_threads": "pinned_use_background_threads",
    "graph_capture_record_stream_reuse": "graph_capture_record_stream_reuse",
}
SIZE_KEYS = ("max_split_size_mb", "max_non_split_rounding_mb")
COUNT_KEYS = ("pinned_max_round_threshold_mb", "pinned_max_cached_size_mb", "large_segment_size_mb")
KNOWN_KEYS = (
    {"backend", "garbage_collection_threshold", "roundup_power2_divisions", "pinned_num_register_threads",
     "per_process_memory_fraction"}
    | set(BOOL_KEYS) | set(SIZE_KEYS) | set(COUNT_KEYS)
)


def _tokens(text: str) -> list[str]:
    """c10's lexer: split on , : [ ] (kept as tokens), drop spaces."""
    tokens, buf = [], []
    for ch in text:
        if ch in ",:[]":
            if buf:
                tokens.append("".join(buf))
                buf = []
            tokens.append(ch)
        elif ch != " ":
            buf.append(ch)
    if buf:
        tokens.append("".join(buf))
    return tokens


def _int(text: str) -> Optional[int]:
    return int(text) if re.fullmatch(r"[+-]?\d+", text or "") else None


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _validate(key: str, value: Any) -> Optional[str]:
    """torch's error message for a bad value, or None when the value is accepted."""
    if isinstance(value, list) and key != "roundup_power2_divisions":
        return f"{key} does not take a [...] list"
    if key in BOOL_KEYS:
        if value not in ("True", "False"):
            return f"Expected a single True/False argument for {BOOL_KEYS[key]} (got {value!r}; only True or False, capitalised)"
        return None
    if key in SIZE_KEYS:
        number = _int(value)
        if number is None:
            return f"{key} needs a whole number of MB (got {value!r}; torch's std::stoi fails on it)"
        if number < MIN_SPLIT_MB:
            return f"CachingAllocator option {key} too small, must be >= {MIN_SPLIT_MB}"
        return None
    if key in COUNT_KEYS:
        number = _int(value)
        if number is None or number < 0:
            return f"{key} needs a non-negative whole number of MB (got {value!r})"
        return None
    if key == "garbage_collection_threshold":
        try:
            number = float(value)
        except ValueError:
            return f"garbage_collection_threshold needs a number (got {value!r}; torch's std::stod fails on it)"
        if not 0.0 < number < 1.0:
            return "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"
        return None
    if key == "per_process_memory_fraction":
        try:
            number = float(value)
        except ValueError:
            return f"per_process_memory_fraction needs a number (got {value!r})"
        if not 0.0 <= number <= 1.0:
            return "per_process_memory_fraction must be in [0.0, 1.0]"
        return None
    if key == "backend":
        if value not in ("native", "cudaMallocAsync", "hipMallocAsync"):
            return "Unknown allocator backend, options are native and cudaMallocAsync (hipMallocAsync on ROCm)"
        return None
    if key == "pinned_num_register_threads":
        number = _int(value)
        if number is None:
            return f"pinned_num_register_threads needs a whole number (got {value!r})"
        if not _pow2(number):
            return "Number of register threads has to be power of 2"
        if number > MAX_REGISTER_THREADS:
            return f"Number of register threads should be less than or equal to {MAX_REGISTER_THREADS}"
        return None
    if key == "roundup_power2_divisions":
        if isinstance(value, list):
            for interval, divisions in value:
                number = _int(divisions)
                if number is None:
                    return f"Error parsing roundup_power2_divisions value ({divisions!r})"
                if number != 0 and not _pow2(number):
                    return "For roundups, the divisons has to be power of 2 or 0 to disable roundup"
                if interval != ">":
                    size = _int(interval)
                    if size is None or not _pow2(size):
                        return "For roundups, the intervals have to be power of 2"
            return None
        number = _int(value)
        if number is None or not _pow2(number):
            return "For roundups, the divisons has to be power of 2"
        return None
    return None


def parse_alloc_conf(text: str) -> dict[str, Any]:
    """{"settings": {key: value}, "errors": [(key, message)], "unknown": [key]} for an *_ALLOC_CONF value."""
    tokens = _tokens(text or "")
    settings: dict[str, Any] = {}
    errors: list[tuple[str, str]] = []
    unknown: list[str] = []
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == ",":
            i += 1
            continue
        if key in ":[]":
            errors.append((key, f"Error parsing CachingAllocator::AllocatorConfig settings: unexpected {key!r}"))
            break
        if i + 1 >= len(tokens) or tokens[i + 1] != ":":
            errors.append((key, f"Error parsing CachingAllocator::AllocatorConfig settings, expected : after {key}"))
            break
        i += 2
        if i >= len(tokens) or tokens[i] in ",]":
            errors.append((key, f"Error, expecting {key} value"))
            i += 1
            continue
        if tokens[i] == "[":
            items, i = [], i + 1
            while i < len(tokens) and tokens[i] != "]":
                if tokens[i] == ",":
                    i += 1
                    continue
                if i + 2 < len(tokens) and tokens[i + 1] == ":":
                    items.append((tokens[i], tokens[i + 2]))
                    i += 3
                else:
                    errors.append((key, f"Error parsing {key} value"))
                    i = len(tokens)
            if i >= len(tokens):
                if not any(k == key for k, _ in errors):
                    errors.append((key, "Expected closing bracket ']' in ConfigTokenizer but reached end of config"))
            value: Any = items
            i += 1
        else:
            value = tokens[i]
            i += 1
        settings[key] = value
        if key not in KNOWN_KEYS:
            unknown.append(key)
            continue
        message = _validate(key, value)
        if message:
            errors.append((key, message))
    return {"settings": settings, "errors": errors, "unknown": unknown}
