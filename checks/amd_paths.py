"""ROCm install paths: ROCM_PATH / HIP_PATH point at installs, ROCm's bin folder is on PATH, PATH and
LD_LIBRARY_PATH do not mix ROCm versions or name folders that are gone."""

from __future__ import annotations

import re

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import ROCM_PATHS_KEY
from rocm_doctor.knowledge.env_catalog import role

from rocm_doctor.checks.visibility import set_in_rc_file

_ROOT = re.compile(r"^(/opt/rocm(?:-[^/]+)?|/usr/lib64/rocm|/usr/lib/rocm)(?=/|$)")


def root_of(entry: dict) -> str | None:
    """The ROCm install an entry belongs to, by its resolved path (/opt/rocm → /opt/rocm-6.2.0)."""
    match = _ROOT.match(entry.get("realpath") or entry.get("entry") or "")
    return match.group(1) if match else None


class RocmPaths(Check):
    id = "rocm-paths"
    title = "ROCm paths and the install they lead to"
    area = "amd"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_PATHS_KEY,)

    def run(self, facts):
        paths = facts[ROCM_PATHS_KEY]
        installs = [i for i in paths["installs"] if i.get("exists")]
        findings = self._variables(facts, paths) + self._missing_entries(paths) + self._mixed(paths)
        if not installs and not findings:
            return self.skip("no ROCm install and no ROCm variable found")
        on_path = {root_of({"entry": e.get(key)}) for e in paths["PATH"] for key in ("entry", "realpath")
                   if e.get("exists") and (e.get("entry") or "").rstrip("/").endswith("/bin")}
        active = next((i for i in installs if i.get("active")), installs[0] if installs else None)
        if active and not on_path & {root_of({"entry": active.get(key)}) for key in ("path", "realpath")}:
            findings.append(self.info(
                f"{active['path']}/bin is not on PATH: rocm-doctor found the tools there anyway, but your shell "
                "does not run hipcc, rocminfo or amd-smi by name.", subject="bin", severity=Severity.LOW,
                fix=[S.path_prepend(f"{active['path']}/bin", note="ROCm's tools by name")]))
        return findings or self.ok("ROCm " + ", ".join(f"{i['path']} ({i.get('version') or 'version unknown'})"
                                                       for i in installs))

    def _variables(self, facts, paths):
        findings = []
        there = [i for i in paths["installs"] if i.get("exists")]
        installed = min(there, key=lambda i: (not i.get("active"), i.get("path") != "/opt/rocm"), default=None)
        for variable in role("install-root"):
            value = (facts.env.get(variable) or "").rstrip("/")
            record = next((i for i in paths["installs"] if i.get("path") == value), None)
            if value and record is not None and not record.get("exists"):
                unset = S.unset_where_set(variable, set_in_rc_file(facts, variable))
                point = [S.set_env(variable, installed["path"], note="the ROCm install that is there")] \
                    if installed else []
                findings.append(self.fail(
                    f"{variable}={value} does not exist: builds and tools that read it (hipcc, CMake, "
                    "torch extensions) look for ROCm in the wrong place.", subject=variable,
                    evidence=[f"{variable}={value}"], fix=point or unset,
                    alternatives=[S.alternative(f"unset {variable}: tools then look in /opt/rocm", *unset,
                                                why_not_first="a build that needs it set then stops")] if point else []))
        return findings

    def _missing_entries(self, paths):
        findings = []
        for variable in ("PATH", "LD_LIBRARY_PATH"):
            gone = [e["entry"] for e in paths[variable] if not e.get("exists") and "rocm" in e["entry"].lower()]
            if gone:
                findings.append(self.warn(
                    f"{variable} names ROCm folders that do not exist ({', '.join(gone)}): left over from an "
                    "uninstalled or upgraded ROCm.", subject=f"{variable}-missing", severity=Severity.LOW,
                    evidence=[f"{variable}: {e}" for e in gone],
                    remediation=[f"Remove them from {variable} where it is set (~/.bashrc, ~/.profile, /etc/environment)."],
                    fix=[S.path_remove(e, variable) for e in gone]))
        return findings

    def _mixed(self, paths):
        findings = []
        for variable in ("PATH", "LD_LIBRARY_PATH"):
            roots = list(dict.fromkeys(r for e in paths[variable] if e.get("exists") and (r := root_of(e))))
            if len(roots) > 1:
                findings.append(self.warn(
                    f"{variable} mixes {len(roots)} ROCm installs ({', '.join(roots)}); the first, {roots[0]}, wins "
                    "for every name they share, so tools and libraries of different releases meet in one process.",
                    subject=f"{variable}-mixed", evidence=[f"{variable}: {e['entry']} → {e.get('realpath')}"
                                                           for e in paths[variable] if root_of(e)],
                    remediation=[f"Keep one ROCm in {variable}: remove the entries of the others."]))
        return findings
