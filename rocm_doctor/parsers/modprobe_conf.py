"""modprobe.d files and the kernel command line → the directives that keep a module from loading. Pure."""

from __future__ import annotations

_NEVER = ("/bin/false", "/usr/bin/false", "/bin/true", "/usr/bin/true")
CMDLINE_LISTS = ("modprobe.blacklist", "module_blacklist", "rd.driver.blacklist", "module.blacklist")


def parse_modprobe_conf(text: str) -> list[dict]:
    """{line_no, command, module, args} per directive; `\\` continues a line, `#` starts a comment."""
    out, pending, start = [], "", 0
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        words = (pending + line).split()
        pending = ""
        if len(words) >= 2:
            out.append({"line_no": start, "command": words[0], "module": words[1], "args": words[2:],
                        "line": " ".join(words)})
    return out


def blocks(entries: list[dict], module: str = "amdgpu") -> list[dict]:
    """Directives that stop `module` from loading: `blacklist` (no autoload by alias), `install M /bin/false`."""
    found = []
    for entry in entries:
        same = entry["module"].replace("-", "_") == module
        if same and entry["command"] == "blacklist":
            found.append(dict(entry, effect="blacklist"))
        elif same and entry["command"] == "install" and entry["args"][:1] and entry["args"][0] in _NEVER:
            found.append(dict(entry, effect="install-disabled"))
    return found


def cmdline_blocks(cmdline: str, module: str = "amdgpu") -> list[str]:
    """Kernel parameters that keep `module` from loading or from driving the GPU: nomodeset,
    <module>.modeset=0, and `module` in modprobe.blacklist / module_blacklist / rd.driver.blacklist."""
    found = []
    for token in (cmdline or "").split():
        name, _, value = token.partition("=")
        if name == "nomodeset" or (name == f"{module}.modeset" and value == "0"):
            found.append(token)
        elif name in CMDLINE_LISTS and module in value.replace("-", "_").split(","):
            found.append(token)
    return found
