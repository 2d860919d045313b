"""Shared reading of the Windows facts for the windows_* checks (no checks here): what ROCm pieces the machine has,
to decide whether a missing compiler or header matters here."""

from __future__ import annotations
from rocm_doctor.facts.keys import TORCH_FLAVOUR, TORCH_HIP, TORCH_VERSION, WINDOWS_HIP_INSTALLS, WINDOWS_ROCM_SDK


def rocm_stack(facts) -> list[str]:
    """Reasons to believe this machine runs ROCm/HIP code; empty when nothing ROCm is installed."""
    reasons = []
    if facts.get(TORCH_FLAVOUR) == "rocm":
        reasons.append(f"torch {facts.get(TORCH_VERSION)} is a ROCm build (HIP {facts.get(TORCH_HIP)})")
    sdk = facts.get(WINDOWS_ROCM_SDK) or {}
    packages = sdk.get("packages") or {}
    therock = sorted(n for n in packages if n.startswith("rocm-sdk") or n == "rocm")
    if therock:
        reasons.append("TheRock packages " + ", ".join(f"{n} {packages[n]}" for n in therock))
    installs = [i for i in facts.get(WINDOWS_HIP_INSTALLS) or [] if i.get("exists")]
    if installs:
        reasons.append("HIP SDK " + ", ".join(i.get("version") or i["path"] for i in installs))
    return reasons
