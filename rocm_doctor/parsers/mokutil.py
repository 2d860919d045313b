"""`mokutil --sb-state` → whether Secure Boot makes the kernel refuse unsigned modules. Pure; never raises."""

from __future__ import annotations

UNSUPPORTED = ("doesn't support secure boot", "efi variables are not supported", "not supported on this system")


def parse_sb_state(text: str) -> dict | None:
    """{"state": enabled|disabled|unsupported|unknown, "validation_disabled", "setup_mode", "enforcing"}; None for
    empty output. "SecureBoot validation is disabled in shim" means enabled in firmware but modules are not checked."""
    lower = (text or "").lower()
    if not lower.strip():
        return None
    validation_off = "validation is disabled in shim" in lower
    setup = "setup mode" in lower
    if "secureboot enabled" in lower:
        state = "enabled"
    elif "secureboot disabled" in lower:
        state = "disabled"
    elif any(words in lower for words in UNSUPPORTED):
        state = "unsupported"
    else:
        state = "unknown"
    return {"state": state, "validation_disabled": validation_off, "setup_mode": setup,
            "enforcing": state == "enabled" and not validation_off}
