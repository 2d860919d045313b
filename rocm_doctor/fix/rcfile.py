"""The one managed block rocm-doctor owns in a shell rc file, and safe writes of that file.

Everything outside `# >>> rocm-doctor >>>` ... `# <<< rocm-doctor <<<` is preserved byte for byte (line endings,
a missing final newline, odd bytes). Inside, each entry is a key line (`# rocm-doctor: ["env", "NAME"]`) followed
by its shell code; setting the same key again replaces the entry, so the block is never duplicated and applying the
same step twice changes nothing. Files are written through rocm_doctor.safefile (a temporary file beside them,
atomically renamed), so an interrupted write leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Optional

from rocm_doctor import safefile

BEGIN = "# >>> rocm-doctor >>>"
END = "# <<< rocm-doctor <<<"
HEADER = "# Managed by `rocm-doctor fix`; `rocm-doctor fix --undo` reverts it. Edits inside may be overwritten."
KEY_PREFIX = "# rocm-doctor: "
# In a file with Windows line endings the shell reads each line's \r into its last word (HSA_OVERRIDE_GFX_VERSION
# becomes "10.3.0\r", which the runtime rejects); a trailing comment takes the \r instead.
CR_GUARD = " #"


class RcFileError(OSError):
    """A file cannot be read or written; the message is one line for the user."""


# ---- text ------------------------------------------------------------------------------------------------------


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def find_block(text: str) -> Optional[tuple[int, int]]:
    """Character span of the first managed block, including the end marker's line break."""
    offset = 0
    start = None
    for line in _lines(text):
        bare = line.rstrip("\r\n")
        if start is None and bare.strip() == BEGIN:
            start = offset
        elif start is not None and bare.strip() == END:
            return start, offset + len(line)
        offset += len(line)
    return None


def block_text(text: str) -> Optional[str]:
    span = find_block(text)
    return text[span[0] : span[1]] if span else None


def entries(text: str) -> list[tuple[list, str]]:
    """(key, code) pairs of the managed block, in order; code lines joined with '\\n'."""
    body = block_text(text)
    if body is None:
        return []
    out: list[tuple[list, str]] = []
    for line in _lines(body)[1:-1]:
        bare = _code_line(line)
        if bare.startswith(KEY_PREFIX):
            try:
                key = json.loads(bare[len(KEY_PREFIX) :])
            except ValueError:
                continue
            out.append((key, ""))
        elif out and not bare.startswith("#"):
            key, code = out[-1]
            out[-1] = (key, f"{code}\n{bare}" if code else bare)
    return out


def _code_line(line: str) -> str:
    """A block line as the shell runs it: a carriage return before the line break is part of it, unless the
    guard takes it."""
    bare = line[:-1] if line.endswith("\n") else line
    if bare.startswith("#"):
        return bare.rstrip("\r")
    if bare.endswith(CR_GUARD + "\r"):
        return bare[: -len(CR_GUARD) - 1]
    return bare


def render_block(items: list[tuple[list, str]], nl: str) -> str:
    lines = [BEGIN, HEADER]
    for key, code in items:
        lines.append(KEY_PREFIX + json.dumps(key))
        lines.extend(line.rstrip("\r") + (CR_GUARD if nl == "\r\n" else "") for line in code.split("\n"))
    lines.append(END)
    return nl.join(lines) + nl


def code_for(text: str, key: list) -> Optional[str]:
    for existing, code in entries(text):
        if existing == key:
            return code
    return None


def with_entry(text: str, key: list, code: str) -> str:
    """`text` with the block entry `key` set to `code` (added at the end of the block, or replaced in place)."""
    items = entries(text)
    for index, (existing, _old) in enumerate(items):
        if existing == key:
            items[index] = (key, code)
            break
    else:
        items.append((key, code))
    nl = newline_of(text)
    return replace_block(text, render_block(items, nl))


def replace_block(text: str, block: Optional[str]) -> str:
    """Put `block` where the managed block is (or at the end); None removes the block."""
    span = find_block(text)
    if span is not None:
        return text[: span[0]] + (block or "") + text[span[1] :]
    if block is None:
        return text
    joint = newline_of(text) if text and not text.endswith(("\n", "\r")) else ""
    return text + joint + block


# ---- files -----------------------------------------------------------------------------------------------------


def read(path: Path) -> Optional[bytes]:
    """The file's bytes, or None when it does not exist; a FIFO or device there is refused (reading would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise RcFileError(f"{path} is not a regular file (a pipe or device); nothing was changed")
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except RcFileError:
        raise
    except OSError as exc:
        raise RcFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def real_target(path: Path) -> Path:
    """Write through symlinks (dotfile managers link ~/.bashrc into a repository)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_writable(path: Path, home: Optional[Path] = None) -> None:
    """Raise RcFileError (one line) when writing `path` would fail or should not happen."""
    if home is not None and not home.is_dir():
        raise RcFileError(f"home folder {home} does not exist; nothing was changed")
    target = real_target(path)
    if target.exists():
        mode = target.stat().st_mode
        # Honour the read-only bit even when running as root: the user made the file read-only on purpose.
        if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
            raise RcFileError(f"{path} is read-only; nothing was changed (make it writable or apply the plan by hand)")
    parent = _existing_parent(target.parent)
    if not os.access(parent, os.W_OK):
        raise RcFileError(f"cannot create files in {parent}; nothing was changed")


def _existing_parent(folder: Path) -> Path:
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def missing_folders(folder: Path) -> list[str]:
    """The folders a write into `folder` creates, deepest first: undo removes them again."""
    out = []
    while not folder.exists() and folder.parent != folder:
        out.append(str(folder))
        folder = folder.parent
    return out


def remove_empty(folders: list[str]) -> None:
    """Remove the folders a write created (deepest first), where nothing else was put in them since."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            continue
        except OSError:
            return  # not empty: the folders above it are not empty either


def atomic_write(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Replace `path` (through its symlinks) with `data` atomically; a device or FIFO there is refused."""
    try:
        real_target(path).parent.mkdir(parents=True, exist_ok=True)
        safefile.write(path, data, mode=mode, stream=False)
    except OSError as exc:
        raise RcFileError(f"{exc}; it was left unchanged" if isinstance(exc, safefile.WriteError)
                          else f"cannot write {path}: {exc.strerror or exc}; nothing was changed") from None


def remove(path: Path) -> None:
    try:
        real_target(path).unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise RcFileError(f"cannot remove {path}: {exc.strerror or exc}") from None


def rc_path(shell: str, home: Path, env: dict, os_name: str) -> Path:
    """Which file the user's shell reads at start-up, for persistent user-scope changes."""
    if shell == "zsh":
        return Path(env.get("ZDOTDIR") or home) / ".zshrc"
    if shell == "fish":
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        return config / "fish" / "conf.d" / "rocm-doctor.fish"
    if shell == "bash":
        return home / (".bash_profile" if os_name == "macos" else ".bashrc")
    return home / ".profile"
