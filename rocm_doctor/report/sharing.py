"""What check's own screen says about sharing it. A live run shows the user's own environment as it is set (the
user's to see; only text other users control is screened, docs/security.md), so its footer says so and names the
redacted copy; a script reads the same from the envelope's `redacted` (report/envelope.py)."""

from __future__ import annotations

from rocm_doctor.report.model import Report

LIVE = ("Not redacted: this shows values of your own environment as they are set. To share it, "
        "`rocm-doctor report` writes a redacted copy.")


def screen_note(report: Report) -> str:
    """The line under check's summary, or "" where it would not be true: a replay shows what its file holds (a
    redacted report stays redacted) and triage what was pasted, neither of them this user's environment."""
    return LIVE if report.source == "live" else ""
