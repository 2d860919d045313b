"""A Windows registry value with its type (REG_SZ or REG_EXPAND_SZ), kept apart from the registry seam.

Both the seam (`winenv`) and the real winreg implementation (`_winreg_real`) use it; neither imports the other
for it, so the Windows-only module stays a leaf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

REG_SZ = 1
REG_EXPAND_SZ = 2
TYPE_NAMES = {REG_SZ: "REG_SZ", REG_EXPAND_SZ: "REG_EXPAND_SZ"}


@dataclass(frozen=True)
class RegValue:
    value: str
    type: int = REG_SZ

    @property
    def type_name(self) -> str:
        return TYPE_NAMES.get(self.type, str(self.type))

    def to_dict(self) -> dict:
        return {"value": self.value, "type": self.type_name}

    @classmethod
    def from_dict(cls, raw: Optional[dict]) -> Optional["RegValue"]:
        if raw is None:
            return None
        names = {v: k for k, v in TYPE_NAMES.items()}
        kind = raw.get("type", "REG_SZ")
        return cls(value=raw["value"], type=names.get(kind, kind) if isinstance(kind, str) else int(kind))
