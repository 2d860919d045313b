"""Where GPU variables are set for every new shell: lines of ~/.bashrc, ~/.zshrc, ~/.profile, ~/.bash_profile,
fish's config and /etc/environment that name a variable of rocm_doctor.knowledge.gpu_env_vars (the override, the
visibility variables, the legacy HIP values, the logging and speed switches): a check that unsets one of them also
unsets it for new shells where such a line sets it.

Only the matching lines are recorded (never the whole file: rc files hold tokens and other secrets), and in them
the values of secret assignments and options (`HF_TOKEN='…'`, `--wandb-key=…`, `curl -u user:pass`, URL user
info) are masked before they are recorded, so neither a snapshot nor a finding's evidence carries them."""

from __future__ import annotations

import os
import re

from rocm_doctor.facts.keys import SHELL_RC_KEY as KEY
from rocm_doctor.knowledge import gpu_env_vars
from rocm_doctor.parsers import shell_secrets
from rocm_doctor.probes._base import Recorder

PLATFORMS = ("linux", "wsl")
FILES = ("~/.bashrc", "~/.bash_profile", "~/.profile", "~/.zshrc", "~/.zshenv", "~/.config/fish/config.fish",
         "/etc/environment")
NAME = re.compile(r"\b[A-Z][A-Z0-9_]*\b")


def matching_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, variable, line with its secrets masked) for uncommented lines naming a watched variable, one
    entry per variable the line names."""
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        names = [n for n in dict.fromkeys(NAME.findall(line)) if gpu_env_vars.matters(n)]
        hits += [(number, name, shell_secrets.mask(line.strip())[:300]) for name in names]
    return hits


def collect(recorder: Recorder) -> None:
    home = recorder.context.env.get("HOME") or os.path.expanduser("~")
    found = []
    for name in FILES:
        path = name.replace("~", home, 1)
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(1_000_000)
        except OSError:
            continue
        found += [{"file": name, "line_no": n, "variable": v, "line": line} for n, v, line in matching_lines(text)]
    recorder.put(KEY, found)
