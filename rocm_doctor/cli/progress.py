"""A one-line status on stderr while a command works (only on a terminal): what the doctor is doing now."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator, Optional

from rocm_doctor.cli.app import console


@contextlib.contextmanager
def stage_progress(enabled: bool = True, first: str = "starting") -> Iterator[Optional[Callable[[str], None]]]:
    """Yields a callback that shows its text as the current status (`first` until it is called), or None when
    nothing should be shown."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    with console(stderr=True).status(first) as status:
        yield lambda text: status.update(text)
