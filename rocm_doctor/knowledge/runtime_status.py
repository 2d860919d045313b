"""The GPU runtimes' own status codes (data/runtime_status.json): what a CUresult, cudaError_t, hipError_t or
hsa_status_t that the driver returned means, the causes a primary source gives, and the check that judges the usual
cause, so a failed cuInit/hipInit/hsa_init is named instead of "torch gave no reason"."""

from __future__ import annotations

from typing import Optional, Union

from rocm_doctor.knowledge.store import load

TABLE = "runtime_status.json"
FIELDS = ("api", "name", "code", "meaning", "causes", "points_to", "source")


def _index() -> tuple[dict, dict, dict]:
    """(api, code) -> row (the first name of a code: an alias never wins), name -> row, api -> names in order."""
    by_code: dict[tuple[str, int], dict] = {}
    by_name: dict[str, dict] = {}
    names: dict[str, list[str]] = {}
    for row in load(TABLE)["statuses"]:
        if not row.get("alias_of"):
            by_code.setdefault((row["api"], row["code"]), row)
        by_name[row["name"]] = row
        names.setdefault(row["api"], []).append(row["name"])
    return by_code, by_name, names


def _public(row: Optional[dict]) -> Optional[dict]:
    if row is None:
        return None
    out = {key: row[key] for key in FIELDS}
    out["causes"] = [{"text": cause["text"], "source": cause["source"]} for cause in row["causes"]]
    return out


def describe(api: str, code: Union[int, str]) -> Optional[dict]:
    """The status `code` (a number, or an enum name such as "CUDA_ERROR_NO_DEVICE") of `api` ("cuda-driver",
    "cuda-runtime", "hip", "hsa"); None when the table has no such status for that api (a newer runtime's code)."""
    by_code, by_name, _ = _index()
    if isinstance(code, str) and code.strip().lstrip("-").isdigit():
        code = int(code.strip())
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return _public(by_code.get((api, code)))
    if isinstance(code, str):
        row = by_name.get(code.strip())
        return _public(row) if row is not None and row["api"] == api else None
    return None


def by_name(name: str) -> Optional[dict]:
    """The status of any api by its enum name ("cudaErrorDevicesUnavailable", "HSA_STATUS_ERROR_OUT_OF_RESOURCES")."""
    return _public(_index()[1].get(name.strip())) if isinstance(name, str) else None


def names(api: str) -> list[str]:
    """Every enum name of `api` in header order (aliases included); empty for an unknown api."""
    return list(_index()[2].get(api, ()))
