"""linux.kernel_log_access (which kernel log was read, or why none could be) and linux.gpu_events (the GPU failures
in it). The log is this boot's: journalctl -k -b, else dmesg, else an older snapshot's `dmesg --level=err,warn`."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.gpu_events import hint_groups, messages, parse_gpu_events, plain, refusals

ORDER = 15
# (observation key, what it holds): the first that gave kernel lines is the log read.
SOURCES = (("journalctl-kernel", "all levels"), ("dmesg-kernel", "all levels"),
           ("dmesg-warnings", "errors and warnings only"))


def _said(result) -> str:
    return (result.stdout or "") + "\n" + (result.stderr or "")


def _source(observations: Observations):
    """(record, key, levels) of the first source that gave kernel lines; (None, None, why) when none did."""
    why = []
    for key, levels in SOURCES:
        result = observations.command(key)
        if result is None:
            continue
        if not (result.error or result.timed_out) and messages(result.stdout):
            return result, key, levels
        why.append(_outcome(result))
    return None, None, "; ".join(why) or "the kernel log was not read"


def kernel_log_text(observations: Observations):
    """(the log as dmesg prints it, its key, its levels), or (None, None, why none could be read)."""
    result, key, levels = _source(observations)
    return (plain(result.stdout), key, levels) if result is not None else (None, None, levels)


def _outcome(result) -> str:
    """What a source that gave no kernel line said: a refusal, a failure to run, or an empty log."""
    command = " ".join(result.argv)
    if result.error or result.timed_out:
        return result.describe()
    said = refusals(_said(result))
    if said:
        return f"`{command}`: {said[-1]}"
    return f"`{command}` printed no kernel line" + (f" (exit code {result.returncode})" if result.returncode else "")


def _access(observations: Observations) -> dict | None:
    tried = [observations.command(key) for key, _ in SOURCES if observations.command(key) is not None]
    if not tried:
        return None
    read, key, levels = _source(observations)
    said = list(dict.fromkeys(line for result in tried for line in refusals(_said(result))))
    journal = observations.command(SOURCES[0][0])
    return {
        "readable": read is not None, "source": key, "levels": levels if read is not None else None,
        "command": " ".join(read.argv) if read is not None else None,
        "messages": len(messages(read.stdout)) if read is not None else 0,
        "truncated": bool(read is not None and read.stdout_truncated_bytes),
        "refused": bool(said) and read is None, "said": said,
        "groups": list(dict.fromkeys(g for result in tried for g in hint_groups(_said(result)))),
        "journalctl": journal is not None and journal.error != "not found",
        "tried": [f"`{' '.join(result.argv)}`: read" if result is read else _outcome(result) for result in tried],
    }


def interpret(observations: Observations, facts: Facts) -> None:
    if facts.os != "linux":
        for key in ("linux.kernel_log_access", "linux.gpu_events"):
            facts.set_missing(key, f"not collected on {facts.os}")
        return
    access = _access(observations)
    if access is None:
        facts.set_missing("linux.kernel_log_access", "the kernel log was not read (a snapshot without it)")
        facts.set_missing("linux.gpu_events", "the kernel log was not read (a snapshot without it)")
        return
    facts.set("linux.kernel_log_access", access)
    read, key, levels = _source(observations)
    if read is None:
        facts.set_missing("linux.gpu_events", "this boot's kernel log could not be read: " + "; ".join(access["tried"]))
        return
    facts.set("linux.gpu_events", dict(parse_gpu_events(read.stdout), source=key, levels=levels))
