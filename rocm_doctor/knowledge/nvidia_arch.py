"""Which NVIDIA GPUs the code in a CUDA build runs on, and which download.pytorch.org CUDA index has code for a GPU.

NVIDIA's rule (its architecture compatibility guides): machine code (a cubin, `sm_XY`) runs on GPUs of the same
major compute capability (CC) with an equal or higher minor; arch-specific code (`sm_90a`) only on that exact CC;
family code (`sm_100f`) on the same major with an equal or higher minor; PTX (`compute_XY`) is JIT-compiled by the
driver for any CC at or above its own (`compute_90a` only for 9.0, `compute_100f` within major 10). The exceptions
PyTorch keeps (integrated GPUs, a renumbered CC) and the wheels' CC lists are data/nvidia_arch.json.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from rocm_doctor.knowledge.cuda_driver import cuda_key, index_cuda
from rocm_doctor.knowledge.store import load

_ENTRY = re.compile(r"^(sm|compute)_(\d+)([af]?)$")
CC = tuple[int, int]  # a compute capability: (major, minor)


class Code(NamedTuple):
    entry: str  # as torch.cuda.get_arch_list() prints it: "sm_90a", "compute_120"
    ptx: bool
    cc: CC
    suffix: str  # "", "a" (arch-specific) or "f" (family)


def parse(entry: str) -> Optional[Code]:
    """"sm_120" -> Code("sm_120", False, (12, 0), ""); None for what is not a CUDA target name."""
    match = _ENTRY.match(str(entry).strip())
    if not match or len(match.group(2)) < 2:
        return None
    digits = match.group(2)
    return Code(match.group(0), match.group(1) == "compute", (int(digits[:-1]), int(digits[-1])), match.group(3))


def cc_of(text: str) -> CC:
    major, minor = str(text).split(".")
    return int(major), int(minor)


def sm_name(cc: CC) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def _table() -> dict:
    return load("nvidia_arch.json")


def runs_natively(code: Code, device: CC) -> bool:
    """The GPU of CC `device` runs this machine code as it is (no JIT)."""
    if code.ptx:
        return False
    if code.cc == tuple(device):
        return True
    if code.suffix == "a":
        return False
    table = _table()
    exception = next((row for row in table["exceptions"] if cc_of(row["code"]) == code.cc), {})
    if tuple(device) in [cc_of(cc) for cc in exception.get("also_on", ())]:
        return True
    integrated = [cc_of(cc) for cc in table["integrated"]["ccs"]]
    if tuple(device) in integrated or code.cc in integrated:
        return False
    if tuple(device) in [cc_of(cc) for cc in exception.get("not_on", ())]:
        return False
    return device[0] == code.cc[0] and device[1] >= code.cc[1]


def jit_compiles(code: Code, device: CC) -> bool:
    """The driver can JIT-compile this PTX for the GPU of CC `device`."""
    if not code.ptx:
        return False
    if code.suffix == "a":
        return tuple(device) == code.cc
    if code.suffix == "f":
        return device[0] == code.cc[0] and device[1] >= code.cc[1]
    return tuple(device) >= code.cc


def code_for(arch_list, device: CC) -> tuple[Optional[str], Optional[str]]:
    """(the entry whose machine code runs on the GPU, the entry whose PTX the driver can compile for it): the
    closest CC of each, None where the list has none."""
    codes = [code for code in map(parse, arch_list or ()) if code]
    return (_closest([code for code in codes if runs_natively(code, device)]),
            _closest([code for code in codes if jit_compiles(code, device)]))


def _closest(codes: list[Code]) -> Optional[str]:
    return max(codes, key=lambda code: code.cc).entry if codes else None


def first_cuda(device: CC) -> Optional[dict]:
    """{"cc", "architecture", "cuda", "source"}: the first CUDA toolkit that builds machine code for this CC."""
    return next((row for row in _table()["first_cuda"] if cc_of(row["cc"]) == tuple(device)), None)


def host_arch(machine: Optional[str]) -> str:
    return "aarch64" if str(machine or "").lower() in ("aarch64", "arm64") else "x86_64"


def wheel_archs(index: str, machine: Optional[str]) -> Optional[list[str]]:
    """The machine code ("sm_90", ...) in a download.pytorch.org CUDA index's torch wheels ("cu128" or its URL) for
    this host, or None when the table does not record that index."""
    entry = _table()["wheel_archs"].get(str(index).rstrip("/").rsplit("/", 1)[-1])
    return [sm_name(cc_of(cc)) for cc in entry[host_arch(machine)]] if entry else None


def _cuda_of_index(index: str) -> tuple[int, int]:
    return cuda_key(index_cuda(index)) or (0, 0)


def index_for(device: CC, machine: Optional[str], torch_version: Optional[str]) -> Optional[str]:
    """The download.pytorch.org CUDA index to install a torch with machine code for this GPU from: among the
    installed torch release's indexes first, then each release's from the newest, the one of the lowest CUDA whose
    wheels cover the GPU (the lowest CUDA asks the least of the NVIDIA driver); None when no recorded index does."""
    wheels = load("torch_wheels.json")
    release = re.match(r"\s*(\d+\.\d+)", str(torch_version or ""))
    rows = list(reversed(wheels["releases"]))
    rows.sort(key=lambda row: not (release and row["torch"] == release.group(1)))  # stable: the installed first
    for row in rows:
        for index in sorted(set(row["cuda_indexes"]) | set(row.get("cuda_experimental", ())), key=_cuda_of_index):
            archs = wheel_archs(index, machine) or []
            if any(runs_natively(code, device) for code in map(parse, archs) if code):
                return wheels["index_base"] + index
    return None
