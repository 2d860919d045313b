"""An environment that remembers which variables were read from it: the engine uses it to tell which findings
judged a service's or kernel's environment (see rocm_doctor/engine/run_env.py)."""

from __future__ import annotations

LISTED = "*"  # in `reads` once every name was listed: a name absent from the environment was read as absent


class ReadTracking(dict):
    """A dict of variables whose `reads` collects every name looked up (get, [], in) or listed (iteration,
    keys, items, values: every name, and LISTED)."""

    def __init__(self, values) -> None:
        super().__init__(values)
        self.reads: set = set()

    def __getitem__(self, name):
        self.reads.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.reads.add(name)
        return super().get(name, default)

    def __contains__(self, name) -> bool:
        self.reads.add(name)
        return super().__contains__(name)

    def _all(self) -> None:
        self.reads.update(super().keys())
        self.reads.add(LISTED)

    def __iter__(self):
        self._all()
        return super().__iter__()

    def keys(self):
        self._all()
        return super().keys()

    def items(self):
        self._all()
        return super().items()

    def values(self):
        self._all()
        return super().values()

    def copy(self) -> dict:
        self._all()
        return dict(super().items())
