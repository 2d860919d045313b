"""GPU runtime failures in a kernel log, as `journalctl -k` or `dmesg` print it in any of their timestamp styles
(monotonic, ISO, syslog months, `dmesg -T`/`-H`, none): amdgpu ring timeouts and MES hangs, GPU page faults, GPU
resets, PSP/SMU and IP-block failures, "Fatal error during GPU init", and NVIDIA `NVRM: Xid` lines. Each class keeps
its first lines (with the PCI address, process and pid where printed) and a count. Pure; never raises."""

from __future__ import annotations

import re

from rocm_doctor.parsers.kernel_log import INIT_FAILED
from rocm_doctor.parsers.untrusted_text import shown, shown_all

MAX_EVENTS = 12  # per class: the first events are kept with their lines; the count covers all of them
SHOWN_PER_KEY = 6  # per Xid code

# A journal/syslog header: "Jan 09 18:55:45 host kernel:", "2024-01-01T12:00:00+0000 host kernel:" or journalctl's
# short-monotonic "[    5.1] host kernel:". Only the kernel's lines (ident "kernel") are read; "name[pid]:" lines
# come from programs in a full journal pasted by a user.
_IDENT = r"(?P<ident>kernel|[^\s:\[]+\[\d+\])"
_HEADERS = (
    re.compile(r"^(?P<stamp>[^\W\d_]{3,}\.?\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2})\s+(?:(?P<host>[^\s:]+)\s+)?" + _IDENT
               + r":\s?(?P<rest>.*)$"),
    re.compile(r"^(?P<stamp>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+"
               r"(?:(?P<host>[^\s:]+)\s+)?" + _IDENT + r":\s?(?P<rest>.*)$"),
    re.compile(r"^\[\s*(?P<stamp>\d+\.\d+)\]\s+(?P<host>[^\s:]+)\s+(?P<ident>kernel):\s?(?P<rest>.*)$"),
)
# dmesg's own stamp: seconds since boot, -T wall clock, -H relative forms, --time-format=iso.
_DMESG_STAMP = re.compile(
    r"^\[\s*(?P<stamp>[+-]?\d+\.\d+|[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}"
    r"|[A-Z][a-z]{2}\d{1,2} \d{2}:\d{2})\]\s?(?P<rest>.*)$"
    r"|^(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[.,]\d+[+-]\d{2}:?\d{2})\s(?P<isorest>.*)$")
_MARKER = re.compile(r"^-- .* --$")  # journalctl's "-- No entries --", "-- Boot ... --"
# What journalctl and dmesg say about themselves (a refusal, the hint about the journal's groups), not kernel lines.
_NOTICE = re.compile(r"^(?:Hint: |\s+Users in |\s+Pass -q|\s+turn off this notice|No journal files were|dmesg: |"
                     r"Failed to open )")

_AMD_DEVICE = re.compile(r"\bamdgpu (?P<dev>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
_RING_TIMEOUT = re.compile(r"\bring (?P<ring>\S+) timeout, (?:signaled seq=\d+, emitted seq=\d+|(?P<soft>but soft "
                           r"recovered))")
_MES = re.compile(r"\bMES(?:\(\d+\))? failed to respon(?:d|se) to msg=(?P<msg>\w+)")
_RING_RESET = re.compile(r"\bRing (?P<ring>\S+) reset (?P<outcome>succeeded|failed)")
# A process as a ring timeout's next line or a page fault names it: "*ERROR* Process information: process X pid …"
# (older kernels; after "amdgpu:" too, where its colon must not start the bare shape, or the name would be
# "information: process X"), "amdgpu:  Process X pid …" (newer kernels) and "for process X pid …" in a fault.
_PROCESS = re.compile(r"(?:Process information: process|\b(?:for|in) process|(?:^|:)\s*Process(?! information: ))\s"
                      r"(?P<name>.*?)\s*pid (?P<pid>\d+) thread (?P<thread>.*?)\s*pid (?P<tid>\d+)")
_PAGE_FAULT = re.compile(r"\[(?P<hub>[a-z]+hub\d*)\]\s+(?:(?P<retry>retry|no-retry)\s+)?(?:VMC )?page fault\s*"
                         r"\((?P<detail>[^)]*?)(?:,\s*for process (?P<name>.*?)\s*pid (?P<pid>\d+) thread .*? pid \d+)?"
                         r"\)")
_RUNTIME_FAULT = re.compile(r"Memory access fault by GPU node-(?P<node>\d+) .*?on address (?P<address>[^\s.]+)")
_FAULT_ADDRESS = re.compile(r"\b(?:in page starting at address|at page) (?P<address>0x[0-9a-fA-F]+)")
_FAULT_STATUS = re.compile(r"\b(?:GC|MM)?VM_L2_PROTECTION_FAULT_STATUS:(?P<status>0x[0-9A-Fa-f]+)")
_FAULT_CLIENT = re.compile(r"Faulty UTCL2 client ID: (?P<client>.+)$")
_SUPPRESSED = re.compile(r"\b\w*process_interrupt: (?P<n>\d+) callbacks suppressed")
_RESET_BEGIN = re.compile(r"\bGPU reset begin!(?:\.\s*Source:\s*(?P<source>\d+))?")
_RESET_OK = re.compile(r"\bGPU reset(?:\(\d+\))? succeeded")
_RESET_FAILED = re.compile(r"\bGPU reset(?:\(\d+\))? failed|\bASIC reset failed|\bGPU reset end with ret = -\d+")
_RESET_METHOD = re.compile(r"\b(?P<method>MODE1|MODE2|BACO|mode1|mode2|PCI CONFIG)\s+reset\b")
_RESET_CONTEXT = re.compile(r"VRAM is lost due to GPU reset|\b(?:PSP|SMU) is resuming")
# The GPU finished coming up: a PSP or SMU failure after this is no init failure (an SMU hang at run time).
_UP = re.compile(r"kfd kfd: amdgpu: added device|active_cu_number|\[drm\] Initialized amdgpu")
_IP_BLOCK = re.compile(r"\b(?P<phase>sw_init|hw_init|late_init|resume) of IP block <(?P<block>[^>]+)> failed "
                       r"(?P<err>-?\d+)")
_PSP = re.compile(r"\bpsp\b", re.IGNORECASE)
_SMU = re.compile(r"\bsmu\b|\[powerplay\]", re.IGNORECASE)
_FAILS = re.compile(r"\bfail|not done with your previous command|not ready|timed? ?out", re.IGNORECASE)
_TA_COMMAND = re.compile(r"psp gfx command (?:LOAD_TA|UNLOAD_TA|INVOKE_CMD)\(0x[0-9A-Fa-f]+\) failed")
_HARMLESS_FIRMWARE = ("SMU driver if version not matched", "ta ucode is not available")
_FILE_LOAD = ("Direct firmware load", 'firmware "amdgpu/')  # missing firmware files: parsers/kernel_log.py reads those

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[^)]*\): (?P<code>\d+),?"
                  r"\s*(?P<rest>.*)$")
_XID_PID = re.compile(r"^pid=(?P<pid>[^,]*),\s*(?:name=(?P<name>[^,]*),\s*)?(?P<text>.*)$")
_PCI = re.compile(r"\b(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\b")
_PROCESS_WINDOW = 4  # a process or address line belongs to an event printed at most this many lines before

REFUSALS = ("read kernel buffer failed", "No journal files were opened due to insufficient permissions",
            "You are currently not seeing messages from", "Failed to open journal", "Permission denied")
_HINT_GROUPS = re.compile(r"Users in (?:the |groups )?(?P<groups>'[^']+'(?:,\s*'[^']+')*) (?:group )?can see all")


def messages(text: str) -> list[tuple[str, str]]:
    """(stamp, message) of every kernel line, the journal header and dmesg stamp taken off ("" when none)."""
    out = []
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if not line.strip() or _MARKER.match(line.strip()) or _NOTICE.match(line):
            continue
        stamp, rest = "", line
        for header in _HEADERS:
            found = header.match(line)
            if found:
                if found["ident"] != "kernel":
                    rest = None
                else:
                    stamp, rest = found["stamp"], found["rest"]
                break
        if rest is None:
            continue
        inner = _DMESG_STAMP.match(rest)
        if inner:
            stamp, rest = (inner["stamp"], inner["rest"]) if inner["stamp"] else (inner["iso"], inner["isorest"])
        out.append((stamp, rest))
    return out


def plain(text: str) -> str:
    """The kernel lines as dmesg prints them ("[stamp] message"), for parsers that read dmesg's shape."""
    return "\n".join(f"[{stamp}] {message}" if stamp else message for stamp, message in messages(text))


def refusals(text: str) -> list[str]:
    """The lines of a journalctl/dmesg output that say the log could not be read for want of permission."""
    return [shown(line.strip()) for line in (text or "").splitlines() if any(words in line for words in REFUSALS)]


def hint_groups(text: str) -> list[str]:
    """The groups journalctl's hint names as able to read the whole journal ('adm', 'systemd-journal', ...)."""
    found = _HINT_GROUPS.search(" ".join((text or "").split()))
    return re.findall(r"'([^']+)'", found["groups"]) if found else []


def _shown(stamp: str, message: str) -> str:
    return (f"[{stamp}] " if stamp else "") + message.strip()


class _Class:
    """One class of events: the first MAX_EVENTS kept (or, with `per`, the first of each value of that key, so a
    flood of one Xid code cannot hide another), every one counted, the devices named."""

    def __init__(self, per: str | None = None) -> None:
        self.count, self.events, self.devices, self.per, self.counts = 0, [], [], per, {}

    def add(self, event: dict) -> dict:
        self.count += 1
        if event.get("device") and event["device"] not in self.devices:
            self.devices.append(event["device"])
        key = str(event.get(self.per)) if self.per else ""
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] <= (SHOWN_PER_KEY if self.per else MAX_EVENTS):
            self.events.append(event)
        return event

    def to_dict(self, **extra) -> dict:
        return {"count": self.count, "events": self.events, "devices": self.devices,
                **({"counts": self.counts} if self.per else {}), **extra}


def _process(found) -> dict:
    """The process a line names; the kernel prints an empty name and pid 0 when it does not know it."""
    if found is None or not found["pid"] or found["pid"] == "0":
        return {}
    return {"process": found["name"].strip() or None, "pid": int(found["pid"])}


class _Reader:
    def __init__(self) -> None:
        self.timeouts, self.faults, self.resets = _Class(), _Class(), _Class()
        self.firmware, self.init_failed, self.xid, self.lost = _Class(), _Class(), _Class(per="code"), _Class()
        self.ring_resets, self.suppressed, self.methods = [], 0, []
        self.begun = self.succeeded = self.failed = 0
        self.resuming = False
        self.up: set = set()  # devices that finished init ("*": one the line did not name)
        self.recent: list[tuple[int, dict]] = []  # (line number, event) that a process/address line may complete
        self.last_nvrm_pci = None

    def read(self, index: int, stamp: str, message: str) -> None:
        line = _shown(stamp, message)
        device = (_AMD_DEVICE.search(message) or {"dev": None})["dev"] if "amdgpu" in message else None
        base = {"line": line, "device": device}
        if _UP.search(message):
            self.up.add(device or "*")
        if "NVRM" in message:
            self._nvidia(base, message)
        elif self._hang(index, base, message) or self._fault(index, base, message):
            return
        elif self._reset(base, message) or self._firmware(base, message):
            return
        elif any(words in message for words in INIT_FAILED):
            self.init_failed.add(dict(base))
        else:
            self._complete(index, device, message)

    def _hang(self, index, base, message) -> bool:
        timeout, mes, ring_reset = _RING_TIMEOUT.search(message), _MES.search(message), _RING_RESET.search(message)
        if timeout:
            event = self.timeouts.add(dict(base, kind="soft-recovered" if timeout["soft"] else "timeout",
                                           ring=timeout["ring"], **_process(_PROCESS.search(message))))
            self.recent.append((index, event))
        elif mes:
            self.timeouts.add(dict(base, kind="mes", ring=None, message=mes["msg"]))
        elif ring_reset:
            self.ring_resets.append(dict(base, ring=ring_reset["ring"], ok=ring_reset["outcome"] == "succeeded"))
        return bool(timeout or mes or ring_reset)

    def _fault(self, index, base, message) -> bool:
        fault, runtime = _PAGE_FAULT.search(message), _RUNTIME_FAULT.search(message)
        if fault:
            event = self.faults.add(dict(base, hub=fault["hub"], retry=fault["retry"], detail=fault["detail"],
                                         **_process(fault)))
            self.recent.append((index, event))
        elif runtime:
            self.faults.add(dict(base, hub=None, node=int(runtime["node"]), address=runtime["address"]))
        suppressed = _SUPPRESSED.search(message)
        if suppressed:
            self.suppressed += int(suppressed["n"])
        return bool(fault or runtime or suppressed)

    def _complete(self, index, device, message) -> None:
        """A process, address, status or client line printed after the event it belongs to."""
        self.recent = [(i, e) for i, e in self.recent if index - i <= _PROCESS_WINDOW]
        event = next((e for i, e in reversed(self.recent) if e.get("device") == device), None)
        if event is None:
            return
        for pattern, key in ((_FAULT_ADDRESS, "address"), (_FAULT_STATUS, "status"), (_FAULT_CLIENT, "client")):
            found = pattern.search(message)
            if found and key not in event:
                event[key] = found[key].strip()
        process = _process(_PROCESS.search(message))
        if process and "pid" not in event:
            event.update(process)

    def _reset(self, base, message) -> bool:
        begin, ok, failed = _RESET_BEGIN.search(message), _RESET_OK.search(message), _RESET_FAILED.search(message)
        method = _RESET_METHOD.search(message)
        if begin:
            self.begun += 1
            self.resets.add(dict(base, stage="begin", source=begin["source"]))
            self.resuming = True
        elif ok or failed:
            self.succeeded, self.failed = self.succeeded + bool(ok), self.failed + bool(failed)
            self.resets.add(dict(base, stage="succeeded" if ok else "failed"))
            self.resuming = False
        elif method and method["method"].upper() not in self.methods:
            self.methods.append(method["method"].upper())
        if _RESET_CONTEXT.search(message):
            self.resuming = True
        return bool(begin or ok or failed or method)

    def _firmware(self, base, message) -> bool:
        block = _IP_BLOCK.search(message)
        if block:
            phase = "reset" if block["phase"] == "resume" or self.resuming else "init"
            self.firmware.add(dict(base, block=block["block"], phase=phase, error=int(block["err"]),
                                   harmless=False))
            return True
        if any(words in message for words in _FILE_LOAD):
            return False
        kind = "psp" if _PSP.search(message) else "smu" if _SMU.search(message) else None
        harmless = any(words in message for words in _HARMLESS_FIRMWARE) or bool(_TA_COMMAND.search(message))
        if kind is None or not (harmless or _FAILS.search(message)) or "successfully" in message:
            return False
        phase = "reset" if self.resuming else "runtime" if {base["device"], "*"} & self.up else "init"
        self.firmware.add(dict(base, block=kind, phase=phase, error=None, harmless=harmless))
        return True

    def _nvidia(self, base, message) -> None:
        xid = _XID.search(message)
        if xid:
            who = _XID_PID.match(xid["rest"])
            pid = who["pid"].strip("'") if who else None
            self.xid.add(dict(base, device=xid["pci"], code=int(xid["code"]),
                              pid=int(pid) if pid and pid.isdigit() else None,
                              process=(who["name"] or "").strip() or None if who else None,
                              text=(who["text"] if who else xid["rest"]).strip()))
            return
        pci = _PCI.search(message)
        if "The NVIDIA GPU" in message and pci:
            self.last_nvrm_pci = pci["pci"]
        if "fallen off the bus" in message:
            self.lost.add(dict(base, device=pci["pci"] if pci else self.last_nvrm_pci))

    def result(self, count: int) -> dict:
        return {
            "messages": count,
            "ring_timeouts": self.timeouts.to_dict(ring_resets=self.ring_resets[:MAX_EVENTS]),
            "page_faults": self.faults.to_dict(suppressed=self.suppressed),
            "resets": self.resets.to_dict(begun=self.begun, succeeded=self.succeeded, failed=self.failed,
                                          methods=self.methods),
            "firmware": self.firmware.to_dict(),
            "init_failed": self.init_failed.to_dict(),
            "xid": self.xid.to_dict(),
            "nvidia_lost": self.lost.to_dict(),
        }


def parse_gpu_events(text: str) -> dict:
    """Every class of GPU failure in the log, each {"count", "events", "devices"} (see the module docstring)."""
    reader, read = _Reader(), messages(text)
    for index, (stamp, message) in enumerate(read):
        try:
            reader.read(index, stamp, message)
        except (TypeError, ValueError, IndexError, KeyError):  # a line no pattern foresaw; the others still count
            continue
    return shown_all(reader.result(len(read)))  # the lines and names kept are other users' text
