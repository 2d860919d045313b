"""NVIDIA Xid errors in this boot's kernel log (`NVRM: Xid (PCI:...): CODE, pid=..., name=..., text`): one finding
per code, read against NVIDIA's Xid catalog (data/nvidia_xid.json) for what it means, where to look first and
what to do. A GPU that fell off the bus or an uncorrectable memory error explains every failure on that GPU;
an application fault explains the failed kernels and the CUDA error messages."""

from __future__ import annotations

import re
from collections import defaultdict

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Severity
from rocm_doctor.engine.relations import Explains
from rocm_doctor.facts.keys import LINUX_GPU_EVENTS
from rocm_doctor.knowledge import xid as catalog

from rocm_doctor.checks.kernel_log import REBOOT, _KernelLogCheck, events, read_from, times, where
from rocm_doctor.checks.symptoms import KERNEL_FAILURES, TORCH_SEES_NO_GPU

SHOWN = 4
ECC_CODES = (48, 63, 64, 92, 94, 95, 140)
SEVERITY = {"gpu-lost": Severity.CRITICAL, "app-killed": Severity.HIGH, "link": Severity.HIGH,
            "degraded": Severity.MEDIUM, "informational": Severity.LOW}
POWER_CYCLE = ("Power the machine off completely, wait a minute and start it again: a warm reboot may not bring "
               "back a GPU that fell off the bus")
_RECOVERY = re.compile(r"recovery action changed from .*? to (?P<action>.+)$")
RECOVERY_CODE = 154  # "GPU Recovery Action Changed": what another Xid left the GPU needing


def effect_failing(*effects: str):
    """A failing Xid finding whose effect (gpu-lost, app-killed, link) reaches the symptom."""
    def holds(cause, _symptom, _facts=None) -> bool:
        return cause.status.value == "fail" and (cause.data or {}).get("effect") in effects
    return holds


def _code_failing(codes):
    def holds(cause, _symptom, _facts=None) -> bool:
        return cause.status.value == "fail" and (cause.data or {}).get("code") in codes
    return holds


def _recovery_after(cause, symptom, _facts=None) -> bool:
    """A failing Xid explains the recovery action (Xid 154) the driver then logged for the same GPU: NVIDIA's
    catalog has 154 report what another Xid left the GPU needing."""
    devices = set((cause.data or {}).get("devices") or ())
    return (cause.status.value == "fail" and (symptom.data or {}).get("code") == RECOVERY_CODE
            and (cause.data or {}).get("code") != RECOVERY_CODE
            and bool(devices & set((symptom.data or {}).get("devices") or ())))


def _short(pci: str) -> str:
    """"0000:01:00.0" and "0000:01:00" name the same GPU (Xid lines leave the function out)."""
    return pci.rsplit(".", 1)[0] if pci and pci.count(":") == 2 and "." in pci else pci


class NvidiaXid(_KernelLogCheck):
    id = "nvidia-xid"
    title = "NVIDIA Xid errors in this boot's kernel log"
    severity = Severity.HIGH
    docs = (catalog.CATALOG_URL, "https://docs.nvidia.com/deploy/xid-errors/index.html")
    explains = (
        tuple(Explains(t, effect_failing("gpu-lost")) for t in (*TORCH_SEES_NO_GPU, "gpu-kernel*", "bench-*",
                                                                "collective-*"))
        + tuple(Explains(t, effect_failing("app-killed")) for t in KERNEL_FAILURES)
        + tuple(Explains(t, effect_failing("link")) for t in ("collective-*", "gpu-peer-access-missing"))
        + (Explains("gpu-ecc-errors", _code_failing(ECC_CODES)),  # CUDA error messages: data/error_signatures.json
           Explains("nvidia-xid", _recovery_after)))

    def run(self, facts):
        found = events(facts, "xid")
        by_code = defaultdict(list)
        for event in found["events"]:
            by_code[event["code"]].append(event)
        lost = [e for e in events(facts, "nvidia_lost")["events"]
                if _short(e.get("device") or "") not in {_short(x["device"]) for x in by_code.get(79, [])}]
        if lost:
            by_code[79] += [dict(e, code=79, pid=None, process=None, text="fallen off the bus") for e in lost]
        if not by_code:
            return self._clean(facts)
        counts = found.get("counts") or {}
        return [self._finding(facts, code, lines, counts.get(str(code)) or len(lines)) for code, lines in
                sorted(by_code.items())]

    def _clean(self, facts):
        return self.ok(f"no NVIDIA Xid error in this boot's kernel log ({facts[LINUX_GPU_EVENTS].get('messages', 0)}"
                       " lines read)", evidence=[read_from(facts)])

    def _finding(self, facts, code: int, lines: list, count: int):
        devices = list(dict.fromkeys(_short(e["device"]) for e in lines if e.get("device")))
        who = list(dict.fromkeys(f"{e['process']} (pid {e['pid']})" if e.get("process") else f"pid {e['pid']}"
                                 for e in lines if e.get("pid")))
        evidence = [e["line"] for e in lines[:SHOWN]]
        if count > len(evidence):
            evidence.append(f"... and {count - len(evidence)} more Xid {code} lines in this boot's kernel log")
        evidence.append(read_from(facts))
        row = catalog.code(code)
        seen = (f"Xid {code}" + (f" ({row['description']})" if row else "") + f" was logged {times(count)} this boot"
                + where(devices) + (f" for {', '.join(who[:3])}" if who else ""))
        data = {"code": code, "count": count, "devices": devices, "pids": [e["pid"] for e in lines if e.get("pid")]}
        if row is None:
            return self.warn(f"{seen}; rocm-doctor's Xid table does not list this code, so what it means is not "
                             "told here.", subject=str(code), evidence=evidence, severity=Severity.MEDIUM,
                             remediation=["Look the code up in NVIDIA's Xid catalog; the line's text says which "
                                          "engine reported it."], data=dict(data, effect=None))
        data.update(effect=row["effect"], fault=row["fault"])
        evidence.append(f"NVIDIA's Xid catalog: {row['mnemonic']}; first action {row['immediate']}"
                        + (f", then {row['investigatory']}" if row["investigatory"] else ""))
        message = f"{seen}: {row['meaning']}."
        if code == RECOVERY_CODE:
            action = next((m["action"] for m in map(_RECOVERY.search, (e.get("text") or "" for e in lines)) if m), None)
            message += f" It asks for: {action}." if action else ""
        remediation = [row["first"] + ".", f"First to look at: {catalog.fault_class(row['fault'])}"
                       + (f" (NVIDIA's listing names: {', '.join(row['causes'])})." if row["causes"] else ".")]
        status = row["status"]
        if status == "info":
            return self.info(message, subject=str(code), evidence=evidence, severity=Severity.LOW, data=data,
                             remediation=remediation)
        finding = self.fail if status == "fail" else self.warn
        steps = ([S.advice(POWER_CYCLE if row["immediate"] == "RESTART_BM" else REBOOT)]
                 if status == "fail" and row["effect"] == "gpu-lost" else [])
        return finding(message, subject=str(code), evidence=evidence, severity=SEVERITY[row["effect"]], data=data,
                       remediation=remediation, fix=steps)
