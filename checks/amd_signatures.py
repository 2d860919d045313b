"""Known error messages in what torch printed and in a log the user passed (`check --log FILE`), matched to their
cause and to the check that diagnoses it."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains
from rocm_doctor.facts.keys import (LOG_KEY, LOG_MACHINE, ROCMINFO_STATUS, TORCH_AVAILABLE_ERROR, TORCH_FAMILY,
                                    TORCH_IMPORT_ERROR, TORCH_PROBE, TORCH_WARNINGS)
from rocm_doctor.knowledge import signatures

from rocm_doctor.checks.signature_fix import fill

WSL_CHECKS = {"rocm-device-access": "wsl-rocm-support", "rocm-kernel-driver": "wsl-rocm-support"}
# The table has no platform column: rows for messages the Windows runtime prints name the Windows check; off
# Windows the same text ("no ROCm-capable device is detected") is diagnosed by the torch check.
NON_WINDOWS_CHECKS = {"windows-gpu-not-enumerated": "torch-cuda-unavailable"}
UNSUPPORTED_GPU = "gfx-support-matrix"  # the check a message points at when it says ROCm cannot support the GPU


def kfd_refuses_gpu(cause, _symptom, facts) -> bool:
    """A message that KFD does not support the GPU explains /dev/kfd failing to open with 'Cannot allocate
    memory': a KFD with no GPU it supports has nothing to open (the driver is loaded; no DKMS build changes that)."""
    return ((cause.data or {}).get("check") == UNSUPPORTED_GPU
            and (facts.get(ROCMINFO_STATUS) or {}).get("state") == "kfd-no-memory")


def texts(facts) -> list[tuple[str, str]]:
    """(where, text) of every message source."""
    out = []
    probe = facts.get(TORCH_PROBE) or {}
    if probe.get("stderr_tail"):
        out.append(("torch probe stderr", probe["stderr_tail"]))
    for key, where in ((TORCH_IMPORT_ERROR, "import torch"), (TORCH_AVAILABLE_ERROR, "torch.cuda.is_available()")):
        if facts.get(key):
            out.append((where, facts[key]))
    if facts.get(TORCH_WARNINGS):
        out.append(("torch warnings", "\n".join(facts[TORCH_WARNINGS])))
    for module, outcome in ((facts.get(TORCH_FAMILY) or {}).get("imports") or {}).items():
        said = "\n".join(filter(None, [outcome.get("traceback") or outcome.get("error"), outcome.get("nms_error"),
                                       *(outcome.get("warnings") or [])]))
        if said:
            out.append((f"import {module}", said))
    log = facts.get(LOG_KEY) or {}
    if log.get("text"):
        out.append((f"log {log.get('path')}", log["text"]))
    return out


class KnownErrorSignatures(Check):
    id = "known-error-signatures"
    title = "Known GPU error messages in torch's output or the given log"
    area = "amd"
    severity = Severity.MEDIUM
    explains = (Explains("rocm-kernel-driver", kfd_refuses_gpu),)

    def run(self, facts):
        sources = texts(facts)
        if not sources:
            return self.skip("no torch output or log to read")
        findings, seen = [], set()
        for where, text in sources:
            for match in signatures.match(text):
                if match.id in seen:
                    continue
                seen.add(match.id)
                check = WSL_CHECKS.get(match.check, match.check) if facts.os == "wsl" else match.check
                check = check if facts.os == "windows" else NON_WINDOWS_CHECKS.get(check, check)
                row = signatures.signature(match.id) or {}
                message = f"{where}: '{match.line[:240]}' — {match.meaning}"
                remediation = [f"See the {check} finding; rocm-doctor explain {check} describes it."]
                if row.get("fix"):  # the message's own fix, for when that check cannot run (a paste alone)
                    remediation.insert(0, fill(row["fix"], facts.get(LOG_MACHINE) or {}, match.line))
                if row.get("established") is False:
                    findings.append(self.info(f"{message}; the thread it was seen in established no cause, so it "
                                              "names none here.", subject=match.id, evidence=[match.line],
                                              data={"check": check, "signature": match.id, "established": False}))
                elif row.get("harmless"):
                    findings.append(self.info(message + " (harmless).", subject=match.id, severity=Severity.LOW,
                                              evidence=[match.line], data={"check": check}))
                else:
                    findings.append(self.warn(f"{message}; look at {check}.", subject=match.id, evidence=[match.line],
                                              title="A known GPU error message is in torch's output or the given log",
                                              remediation=remediation, data={"check": check, "signature": match.id}))
        return findings or self.ok(f"no known error message in {', '.join(w for w, _ in sources)}")
