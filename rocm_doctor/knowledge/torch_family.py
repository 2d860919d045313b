"""Which torchvision, torchaudio and Triton releases belong to a torch release (data/torch_family.json), and what
a wheel's local version label says about where it was built: "+rocm6.2" and "+cu121" name a download.pytorch.org
index, "+rocm7.14.0a20260521" an AMD TheRock build, "+rocm7.2.0.git7e1940d4" an AMD repo.radeon.com build,
"+fdea156" a build from source, and no label at all a wheel from PyPI."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from rocm_doctor.knowledge.store import load

_LOCAL_ROCM = re.compile(r"rocm(?:sdk)?(\d+(?:\.\d+)*)(a\d+|rc\d+)?")
_CUDA = re.compile(r"^cu(\d+)$")
_SOURCE = re.compile(r"^(?:git)?[0-9a-f]{6,40}$")
_RELEASE = re.compile(r"^(\d+)\.(\d+)")


class Build(NamedTuple):
    """What a version string says about its wheel. `kind`: rocm, cuda, cpu, xpu or None (not told by the label);
    `origin`: pytorch.org, therock, amd, source or pypi; `tag`: what wheels built together share ("rocm6.2",
    "cu121", "rocm7.2.0"); `index`: the download.pytorch.org index name, where the label names one."""

    public: str
    local: Optional[str]
    kind: Optional[str]
    origin: str
    tag: Optional[str]
    index: Optional[str]
    nightly: bool


def _pytorch_rocm_indexes() -> set[str]:
    wheels = load("torch_wheels.json")
    return set(wheels["index_archs"]) | {index for row in wheels["releases"] for index in row["rocm_indexes"]}


def build_of(version: Optional[str]) -> Build:
    public, _, local = str(version or "").strip().partition("+")
    local = local or None
    nightly = ".dev" in public or bool(re.search(r"(a|rc)\d+$", public))
    if not local:
        return Build(public, None, None, "pypi", None, None, nightly)
    lowered = local.lower()
    if lowered in ("cpu", "xpu"):
        return Build(public, local, lowered, "pytorch.org", lowered, lowered, nightly)
    cuda = _CUDA.match(lowered)
    if cuda:
        return Build(public, local, "cuda", "pytorch.org", lowered, lowered, nightly)
    rocm = _LOCAL_ROCM.search(lowered)
    if rocm:
        name = f"rocm{rocm.group(1)}"
        if lowered == name and name in _pytorch_rocm_indexes():
            return Build(public, local, "rocm", "pytorch.org", name, name, nightly)
        origin = "amd" if ".git" in lowered or ".lw" in lowered else "therock"
        return Build(public, local, "rocm", origin, name, None, nightly or bool(rocm.group(2)))
    if _SOURCE.match(lowered):
        return Build(public, local, None, "source", None, None, nightly)
    return Build(public, local, None, "source", lowered, None, nightly)


def release_of(version: Optional[str]) -> Optional[str]:
    """"2.5.1+rocm6.2" -> "2.5"; "0.20.1" -> "0.20"."""
    match = _RELEASE.match(str(version or ""))
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


def row_for(torch_version: Optional[str]) -> Optional[dict]:
    """The table row of this torch release, or None when the table does not hold it."""
    release = release_of(torch_version)
    return next((row for row in load("torch_family.json")["releases"] if row["torch"] == release), None)


def expected(torch_version: Optional[str], companion: str) -> Optional[str]:
    """The release of `companion` built for this torch ("2.5.1" -> torchvision "0.20"), else None."""
    row = row_for(torch_version)
    return row.get(companion) if row else None


def expected_point(torch_version: Optional[str], companion: str) -> Optional[str]:
    """The exact companion release where the point releases do not follow torch's ("2.0.1" -> torchvision
    "0.15.2"), else None."""
    row = row_for(torch_version) or {}
    public = str(torch_version or "").partition("+")[0]
    return ((row.get("points") or {}).get(public) or {}).get(companion)


def pairs_with(companion: str, version: Optional[str]) -> list[str]:
    """The torch releases the table pairs this companion release with ("0.16.1" -> ["2.1"])."""
    release = release_of(version)
    return [row["torch"] for row in load("torch_family.json")["releases"] if row.get(companion) == release]


def stable_abi_from(companion: str) -> Optional[str]:
    """The first release of `companion` built against torch's stable ABI (it then serves every later torch)."""
    entry = load("torch_family.json")["stable_abi"].get(companion)
    return entry["from"] if entry else None


def serves_every_later_torch(companion: str, version: Optional[str], torch_version: Optional[str]) -> bool:
    """Whether a stable-ABI release of `companion` covers this torch (torchaudio 2.11 with torch 2.13)."""
    first, release, torch_release = stable_abi_from(companion), release_of(version), release_of(torch_version)
    if not (first and release and torch_release):
        return False
    return _key(first) <= _key(release) <= _key(torch_release)


def triton_package(kind: Optional[str]) -> str:
    """The Triton distribution download.pytorch.org's wheels of this kind pin (pytorch-triton-rocm for ROCm)."""
    packages = load("torch_family.json")["triton_packages"]
    return packages["rocm"] if kind == "rocm" else packages["cuda"]


def index_url(build: Build) -> Optional[str]:
    """The download.pytorch.org index the label names ("rocm6.2" -> .../whl/rocm6.2; nightlies under nightly/)."""
    if not build.index:
        return None
    base = load("torch_wheels.json")["index_base"]
    return f"{base}nightly/{build.index}" if build.nightly else f"{base}{build.index}"
