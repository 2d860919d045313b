"""Timing of the redactor and the record-time mask on adversarial inputs (docs/security.md quotes its figures).

Run by hand: `python tests/bench_redact.py`; not collected by pytest (no timing is asserted in the tests)."""

import time

from rocm_doctor.parsers import secret_values
from rocm_doctor.report.redact import redact

CASES = {
    "gfx-run": "gfx-1032-" * 4000, "dash-words": "a-" * 16000, "spaces-then-equals": " " * 32000 + "=",
    "serial-spaces": "serial: x" + " " * 32000 + "y", "tokens": "token" * 6500, "e-mail": "a." * 16000 + "@",
    "url": "a+" * 16000 + "://", "assignments": "a=" * 16000, "password-labels": "password:" * 3600,
    "options": "--password " * 3000, "colons": ":" * 32000, "brackets": "[" * 32000,
}

if __name__ == "__main__":
    for name, text in CASES.items():
        for times in (1, 2):
            sample = text * times
            started = time.perf_counter()
            redact({"stages": {"log": sample}, "env": {"X": sample}})
            redacted = time.perf_counter() - started
            started = time.perf_counter()
            secret_values.mask_structure({"log": sample})
            masked = time.perf_counter() - started
            print(f"{name:20s} {len(sample) // 1024:3d} KB  redact {redacted:6.3f} s  mask {masked:6.3f} s")
