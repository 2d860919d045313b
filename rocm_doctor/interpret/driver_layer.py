"""linux.* facts about loading amdgpu: Secure Boot (mokutil), the DKMS builds, the module modprobe would load
(modinfo), what blocks it (modprobe.d, kernel command line), the firmware files on disk and the kernel log."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret.kernel_events import kernel_log_text
from rocm_doctor.parsers.dkms import parse_dkms_status
from rocm_doctor.parsers.kernel_log import parse_kernel_log
from rocm_doctor.parsers.modinfo import parse_modinfo
from rocm_doctor.parsers.modprobe_conf import blocks, cmdline_blocks, parse_modprobe_conf
from rocm_doctor.parsers.mokutil import parse_sb_state
from rocm_doctor.facts.keys import (DKMS_STATUS_KEY, FIRMWARE_DIRS, KERNEL_CMDLINE_FILE as CMDLINE, LINUX_AMDGPU_BLOCKS,
                                    LINUX_AMDGPU_MODINFO, LINUX_DKMS_AMDGPU, LINUX_FIRMWARE, LINUX_KERNEL_LOG,
                                    LINUX_SECURE_BOOT, MODINFO_KEY, MODPROBE_DIRS, SECURE_BOOT_KEY)


def _text(observations: Observations, key: str):
    """(stdout + stderr, None) of a command, or (None, why it gave nothing to read)."""
    result = observations.command(key)
    if result is None:
        return None, f"{key} was not run"
    if result.error or result.timed_out:
        return None, result.describe()
    return (result.stdout or "") + "\n" + (result.stderr or ""), None


def _secure_boot(observations: Observations):
    text, why = _text(observations, SECURE_BOOT_KEY)
    parsed = parse_sb_state(text) if text is not None else None
    return (parsed, "") if parsed else (None, why or "mokutil --sb-state printed nothing")


def _dkms(observations: Observations):
    text, why = _text(observations, DKMS_STATUS_KEY)
    if text is None:
        return None, why
    return [row for row in parse_dkms_status(text) if row["module"] == "amdgpu"], ""


def _modinfo(observations: Observations):
    result = observations.command(MODINFO_KEY)
    if result is None or result.error or result.timed_out:
        return None, result.describe() if result is not None else "modinfo amdgpu was not run"
    parsed = parse_modinfo(result.stdout)
    if parsed is None:
        return {"found": False, "error": (result.stderr or "").strip() or result.describe()}, ""
    return dict(parsed, found=True), ""


def _blocks(observations: Observations):
    listed = [observations.file(d) for d in MODPROBE_DIRS if observations.file(d) is not None]
    cmdline = observations.file(CMDLINE)
    if not listed and cmdline is None:
        return None, "neither the modprobe.d folders nor /proc/cmdline were read"
    found = []
    for folder in listed:
        for name in folder.entries or []:
            record = observations.file(f"{folder.path}/{name}")
            if record is not None and record.content is not None:
                found += [dict(b, file=record.path) for b in blocks(parse_modprobe_conf(record.content))]
    raw = cmdline.content if cmdline is not None and cmdline.content is not None else None
    return {"modprobe": found, "cmdline": cmdline_blocks(raw) if raw is not None else [],
            "cmdline_read": raw is not None, "folders": [f.path for f in listed]}, ""


def _firmware(observations: Observations):
    listed = [observations.file(d) for d in FIRMWARE_DIRS if observations.file(d) is not None]
    if not listed:
        return None, "the firmware folders were not listed"
    names = sorted({n for record in listed for n in record.entries or []})
    return {"folders": {r.path: (len(r.entries) if r.entries is not None else None) for r in listed},
            "names": names}, ""


def _kernel_log(observations: Observations):
    """The amdgpu load failures in this boot's kernel log (the one interpret/kernel_events.py chose)."""
    text, _key, why = kernel_log_text(observations)
    return (parse_kernel_log(text), "") if text is not None else (None, why)


FACTS = ((LINUX_SECURE_BOOT, _secure_boot), (LINUX_DKMS_AMDGPU, _dkms), (LINUX_AMDGPU_MODINFO, _modinfo),
         (LINUX_AMDGPU_BLOCKS, _blocks), (LINUX_FIRMWARE, _firmware), (LINUX_KERNEL_LOG, _kernel_log))


def interpret(observations: Observations, facts: Facts) -> None:
    facts.set_read(FACTS, observations, ("linux",))
