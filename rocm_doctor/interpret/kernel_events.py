"""linux.kernel_log_access (which kernel log was read, or why none could be) and linux.gpu_events (the GPU failures
in it). The log is this boot's: journalctl -k -b, else dmesg, else an older snapshot's `dmesg --level=err,warn`. A
command that printed kernel lines and then failed is read in part: its lines are judged and the access fact says how
it ended; so does one whose output was cut at the recorder's cap (how many bytes, the oldest or the newest)."""

from __future__ import annotations

from rocm_doctor.facts.command import signal_name
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (DMESG_KEY, DMESG_WARNINGS_KEY, JOURNAL_KEY, LINUX_GPU_EVENTS,
                                    LINUX_KERNEL_LOG_ACCESS)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.gpu_events import hint_groups, messages, parse_gpu_events, plain, refusals
from rocm_doctor.parsers.untrusted_text import shown

# (observation key, what it holds): the first that gave kernel lines and ran to its end is the log read.
SOURCES = ((JOURNAL_KEY, "all levels"), (DMESG_KEY, "all levels"), (DMESG_WARNINGS_KEY, "errors and warnings only"))


def _said(result) -> str:
    return (result.stdout or "") + "\n" + (result.stderr or "")


def _source(observations: Observations):
    """(record, key, levels) of the log read: the first source that printed kernel lines and ran to its end, else
    the first that printed some before it stopped (read in part); (None, None, why) when none printed any."""
    why, partial = [], None
    for key, levels in SOURCES:
        result = observations.command(key)
        if result is None:
            continue
        if result.error is None and messages(result.stdout):
            if result.ok:
                return result, key, levels
            partial = partial or (result, key, levels)
            continue
        why.append(_outcome(result))
    return partial or (None, None, "; ".join(why) or "the kernel log was not read")


def kernel_log_text(observations: Observations):
    """(the log as dmesg prints it, its key, its levels), or (None, None, why none could be read)."""
    result, key, levels = _source(observations)
    return (plain(result.stdout), key, levels) if result is not None else (None, None, levels)


def _outcome(result) -> str:
    """What a source that was not read said: a refusal, a failure to run, an empty log, or where it stopped."""
    command = " ".join(result.argv)
    if result.error:
        return result.describe()
    if messages(result.stdout):
        return f"`{command}` {_ending(result)}"
    if result.timed_out:
        return result.describe()
    said = refusals(_said(result))
    if said:
        return f"`{command}`: {said[-1]}"
    return f"`{command}` printed no kernel line" + (f" (exit code {result.returncode})" if result.returncode else "")


def stopped(result) -> str:
    """How a command that printed kernel lines ended early, in words: "dmesg exited with status 1 after printing
    812 lines"."""
    program = result.argv[0].rsplit("/", 1)[-1] if result.argv else "the command"
    return f"{program} {_ending(result)}"


def _ending(result) -> str:
    if result.timed_out:
        ended = f"did not finish within {result.timeout_s:g} s"
    elif result.signal:
        ended = f"was killed by signal {signal_name(result.signal)}"
    else:
        ended = f"exited with status {result.returncode}"
    return f"{ended} after printing {len(messages(result.stdout))} lines"


def _last_words(result) -> list[str]:
    """The last lines a command that stopped early wrote on stderr: the error it stopped with, screened as the log's
    own lines are (a wrapper or a damaged journal can print anything)."""
    return [shown(line.strip()) for line in (result.stderr or "").splitlines() if line.strip()][-2:]


def _access(observations: Observations) -> dict | None:
    tried = [observations.command(key) for key, _ in SOURCES if observations.command(key) is not None]
    if not tried:
        return None
    read, key, levels = _source(observations)
    said = list(dict.fromkeys(line for result in tried for line in refusals(_said(result))))
    journal = observations.command(SOURCES[0][0])
    partial = read is not None and not read.ok
    cut = read.stdout_truncated_bytes if read is not None else 0
    return {
        "readable": read is not None, "source": key, "levels": levels if read is not None else None,
        "command": " ".join(read.argv) if read is not None else None,
        "messages": len(messages(read.stdout)) if read is not None else 0,
        "stopped": stopped(read) if partial else None,  # the log was read in part: how its command ended
        "stopped_with": _last_words(read) if partial else [],
        "not_read_bytes": cut, "not_read": ("oldest" if read.kept_tail else "newest") if cut else None,
        "refused": bool(said) and read is None, "said": said,
        "groups": list(dict.fromkeys(g for result in tried for g in hint_groups(_said(result)))),
        "journalctl": journal is not None and journal.error != "not found",
        "tried": [f"`{' '.join(result.argv)}`: read" + (" in part" if partial else "") if result is read
                  else _outcome(result) for result in tried],
    }


def interpret(observations: Observations, facts: Facts) -> None:
    if facts.os != "linux":
        for key in (LINUX_KERNEL_LOG_ACCESS, LINUX_GPU_EVENTS):
            facts.set_missing(key, f"not collected on {facts.os}")
        return
    access = _access(observations)
    if access is None:
        facts.set_missing(LINUX_KERNEL_LOG_ACCESS, "the kernel log was not read (a snapshot without it)")
        facts.set_missing(LINUX_GPU_EVENTS, "the kernel log was not read (a snapshot without it)")
        return
    facts.set(LINUX_KERNEL_LOG_ACCESS, access)
    read, key, levels = _source(observations)
    if read is None:
        facts.set_missing(LINUX_GPU_EVENTS, "this boot's kernel log could not be read: " + "; ".join(access["tried"]))
        return
    facts.set(LINUX_GPU_EVENTS, dict(parse_gpu_events(read.stdout), source=key, levels=levels))
