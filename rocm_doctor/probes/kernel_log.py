"""This boot's kernel log, where the GPU drivers report what the runtime only sees as a failed call: amdgpu ring
timeouts, page faults and resets, PSP/SMU failures, NVIDIA Xid errors. journalctl first (a user in the adm or
systemd-journal group may read it while dmesg is restricted), dmesg when the journal gave no kernel line. Every
level is kept: amdgpu logs its resets, failed ones included, at info level. A refusal is recorded like any output,
and so is a command that stops early: its exit status and the lines it printed are kept."""

from __future__ import annotations

from rocm_doctor.facts.keys import DMESG_KEY, JOURNAL_KEY
from rocm_doctor.parsers.gpu_events import messages
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux",)
JOURNAL_LINES = 5000  # the end of this boot, kept under the recorder's 1 MB output cap
JOURNAL = (JOURNAL_KEY,
           ["journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic", "-n", str(JOURNAL_LINES)])
DMESG = (DMESG_KEY, ["dmesg"])


def collect(recorder: Recorder) -> None:
    """Past the recorder's cap the newest lines are kept (the record says how many bytes went); dmesg is read too
    when the journal stopped before its end, so that a complete log can be judged instead of a part."""
    recorder.with_fallback(lambda: recorder.command(*JOURNAL, keep_tail=True),
                           lambda journal: not journal.ok or not messages(journal.stdout), *DMESG, keep_tail=True)
