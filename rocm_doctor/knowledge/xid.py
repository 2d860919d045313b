"""NVIDIA Xid codes (data/nvidia_xid.json): what each means, who is likely at fault, NVIDIA's resolution buckets
and what to do first, for the `NVRM: Xid` lines of the kernel log."""

from __future__ import annotations

from rocm_doctor.knowledge.store import load

CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


def code(number: int) -> dict | None:
    """The row of an Xid code, or None for a code the table does not list."""
    return next((row for row in load("nvidia_xid.json")["codes"] if row["code"] == number), None)


def fault_class(name: str) -> str:
    """What a `fault` value of a row means, in words for people."""
    return load("nvidia_xid.json")["fault_classes"].get(name, name)
