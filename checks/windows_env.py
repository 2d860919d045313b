"""Windows environment checks: variables in the User vs Machine scopes vs this shell, PATH length against setx's
1024-character limit, PATH folders that do not exist, and HSA_OVERRIDE_GFX_VERSION (which Windows ignores)."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts.keys import WINDOWS_ENV_SCOPES, WINDOWS_PATH
from rocm_doctor.parsers import windows_paths as paths
from rocm_doctor.knowledge.windows_scopes import SETX_LIMIT, conflicts, new_shell_value, stale

WINDOWS = (Platform.WINDOWS,)
NEW_SHELL = ("Programs started earlier (the terminal app itself, VS Code, Explorer-launched IDEs) keep the environment "
             "they started with: restart them, or sign out and back in.")
SETTINGS_UI = ("Settings UI: Start > type \"environment variables\" > \"Edit environment variables for your account\" "
               "(User) or \"Edit the system environment variables\" > Environment Variables... (Machine, needs admin)")
NO_SETX = ("Do not change PATH with setx: it cuts values at 1024 characters, and a setx PATH with %PATH% in it also "
           "copies the Machine PATH into your User PATH; edit it in the Settings UI instead.")


class _WindowsEnvCheck(Check):
    area = "windows-env"
    platforms = WINDOWS


def _scopes(facts):
    scopes = facts[WINDOWS_ENV_SCOPES]
    return scopes.get("process") or {}, scopes.get("user"), scopes.get("machine")


class EnvScopeConflict(_WindowsEnvCheck):
    id = "env-scope-conflict"
    title = "GPU variables in the User and Machine scopes"
    severity = Severity.MEDIUM
    requires = (WINDOWS_ENV_SCOPES,)

    def run(self, facts):
        process, user, machine = _scopes(facts)
        found = conflicts(user, machine)
        if not found:
            return self.ok("no GPU-related variable is set in both scopes with different values")
        out = []
        for item in found:
            name = item["name"]
            out.append(
                self.warn(
                    f"{name} is set for the machine ({item['machine']}) and for your user ({item['user']}); the User "
                    f"value wins in new shells, which hides the machine-wide one (e.g. one an installer updated).",
                    subject=name,
                    evidence=[f"Machine {name} = {item['machine']}", f"User {name} = {item['user']}",
                              f"this shell: {name} = {process.get(name.upper())}"],
                    remediation=[f"Open a new terminal afterwards. {NEW_SHELL}"],
                    data=item,
                    fix=[S.unset_env(name, scope="user", note="the Machine value applies again")],
                    alternatives=[S.alternative(
                        "keep your User value: delete the Machine copy", S.unset_env(name, scope="machine"),
                        why_not_first="needs administrator, and a machine-wide installer updates the Machine "
                                      "value, not yours")],
                )
            )
        return out


class EnvSetButShellStale(_WindowsEnvCheck):
    id = "env-set-but-shell-stale"
    title = "This shell's environment against the registry"
    explains = ("hip-sdk-version-mismatch",)
    severity = Severity.MEDIUM
    requires = (WINDOWS_ENV_SCOPES,)

    def run(self, facts):
        process, user, machine = _scopes(facts)
        found = stale(process, user, machine)
        if not found:
            return self.ok("GPU-related variables and PATH entries in this shell match the registry")
        out = []
        for item in found:
            name = item["name"]
            if "missing_entries" in item:
                entries = item["missing_entries"]
                out.append(
                    self.warn(
                        f"{len(entries)} folder{'s' if len(entries) != 1 else ''} of the {item['scope'].title()} PATH "
                        f"{'are' if len(entries) != 1 else 'is'} not in this shell's PATH: the shell started before they "
                        "were added (or something removed them from it).",
                        subject=f"Path:{item['scope']}",
                        evidence=[f"missing: {e}" for e in entries[:12]],
                        remediation=[f"Or open a new terminal: it gets the same Path. {NEW_SHELL}"],
                        fix=[S.set_env("Path", new_shell_value("Path", user, machine) or "", scope="process",
                                       note="the Path a new shell gets: Machine, then User")],
                        data=item,
                    )
                )
                continue
            if item["process"] is None:
                message = (f"{name} is set for the {item['scope']} ({item['registry']}) but not in this shell: the shell "
                           "(or the app that started it) predates the change.")
            else:
                message = (f"{name} in this shell is {item['process']!r}, but a new shell would get {item['registry']!r}: "
                           "either this shell predates a change, or it was set by hand here.")
            out.append(
                self.warn(
                    message,
                    subject=name,
                    evidence=[f"registry ({item['scope']}): {name} = {item['registry']}", f"this shell: {name} = {item['process']}"],
                    remediation=[f"Or open a new terminal: it gets the registry's value. {NEW_SHELL}"],
                    fix=[S.set_env(name, item["registry"], scope="process", note="the value a new shell gets")
                         if item["registry"] is not None else S.unset_env(name, scope="process")],
                    data=item,
                )
            )
        return out


class PathTooLongForSetx(_WindowsEnvCheck):
    id = "path-too-long-for-setx"
    title = "PATH against setx's 1024-character limit"
    severity = Severity.MEDIUM
    requires = (WINDOWS_PATH,)

    def run(self, facts):
        scopes = facts[WINDOWS_PATH]["scopes"]
        out = []
        for scope in ("user", "machine"):
            item = scopes.get(scope)
            if not item:
                continue
            length = item["length"]
            evidence = [f"{scope.title()} PATH: {length} characters, {len(item['entries'])} entries ({item.get('type')})"]
            if length == SETX_LIMIT:
                last = (item.get("raw_entries") or [""])[-1]
                out.append(
                    self.warn(
                        f"the {scope.title()} PATH is exactly {SETX_LIMIT} characters, the length a setx PATH cuts it "
                        f"to; the length alone cannot tell a cut value from one that long. If setx cut it, the entries "
                        f"after the cut are gone and the last one may be a fragment ({last!r}).",
                        subject=scope,
                        evidence=evidence + [f"last entry: {last}"],
                        remediation=[
                            "Rebuild the lost entries: reinstall or repair the programs whose folders are missing, or "
                            "restore the value from a backup (System Restore keeps registry copies).",
                            NO_SETX, SETTINGS_UI,
                        ],
                        data={"scope": scope, "length": length},
                    )
                )
            elif length > SETX_LIMIT:
                out.append(
                    self.warn(
                        f"the {scope.title()} PATH is {length} characters, over setx's {SETX_LIMIT}: a setx PATH "
                        f"(a common instruction in install guides) would silently cut it to {SETX_LIMIT} and lose every "
                        "entry after that.",
                        subject=scope,
                        evidence=evidence,
                        remediation=[
                            NO_SETX, SETTINGS_UI,
                            "Shorten it: remove folders that no longer exist (see path-entries-missing) and duplicates.",
                        ],
                        data={"scope": scope, "length": length},
                    )
                )
        lengths = ", ".join(f"{s}: {scopes[s]['length']}" for s in ("user", "machine") if scopes.get(s))
        return out or self.ok(f"User and Machine PATH are under {SETX_LIMIT} characters ({lengths})")


class PathEntriesMissing(_WindowsEnvCheck):
    id = "path-entries-missing"
    title = "Folders listed in PATH"
    severity = Severity.LOW
    requires = (WINDOWS_PATH,)

    def run(self, facts):
        folders = facts[WINDOWS_PATH]["folders"]
        missing = [f for f in folders if f.get("exists") is False and (f.get("error") in (None, "not found"))]
        unexpanded = [f for f in folders if f.get("unexpanded")]
        if not missing and not unexpanded:
            return self.ok(f"all {len(folders)} PATH folders exist")
        evidence = [f"missing: {f['path']} ({', '.join(f['scopes'])})" for f in missing[:20]]
        evidence += [f"cannot expand: {f['path']} ({', '.join(f['scopes'])})" for f in unexpanded[:10]]
        scopes = facts[WINDOWS_PATH]["scopes"]
        steps = [S.path_remove(raw_entry(scopes.get(scope), f["path"]), "Path", scope=scope,
                               note="the folder does not exist")
                 for scope in ("user", "machine") for f in missing if scope in f["scopes"]]
        remediation = [] if steps else [
            "These entries come from this shell only (e.g. an activation script); a new shell drops them."]
        return self.info(
            f"{len(missing) + len(unexpanded)} PATH entr{'ies' if len(missing) + len(unexpanded) != 1 else 'y'} "
            "point to folders that do not exist (left-overs of uninstalled tools, e.g. an old HIP SDK). Harmless alone, "
            "but they lengthen PATH and a later install there would be picked up unexpectedly.",
            evidence=evidence,
            remediation=remediation,
            data={"missing": [f["path"] for f in missing], "unexpanded": [f["path"] for f in unexpanded]},
            fix=steps,
        )


def raw_entry(scope: dict | None, folder: str) -> str:
    """The entry as the registry value spells it (%VARS% unexpanded) for an expanded PATH folder."""
    scope = scope or {}
    pairs = zip(scope.get("entries") or [], scope.get("raw_entries") or [])
    return next((raw for expanded, raw in pairs if paths.same(expanded, folder)), folder)


class HsaOverrideOnWindows(_WindowsEnvCheck):
    id = "hsa-override-on-windows"
    title = "HSA_OVERRIDE_GFX_VERSION on Windows, which ignores it"
    severity = Severity.MEDIUM
    requires = (WINDOWS_ENV_SCOPES,)
    docs = ("https://github.com/ROCm/TheRock/issues/1719", "https://github.com/ROCm/ROCm/issues/2654")

    def run(self, facts):
        process, user, machine = _scopes(facts)
        where = []
        for scope, table in (("process", process), ("user", user or {}), ("machine", machine or {})):
            for key, value in table.items():
                if key.upper().startswith("HSA_OVERRIDE_GFX_VERSION"):
                    name = value["name"] if isinstance(value, dict) else key
                    text = value["value"] if isinstance(value, dict) else value
                    where.append((scope, name, text))
        if not where:
            return self.ok("HSA_OVERRIDE_GFX_VERSION is not set")
        remediation = [
            "For a GPU your torch build lacks, install a build for its gfx family instead (AMD's TheRock wheels, "
            "https://repo.amd.com/rocm/whl-multi-arch/); on Windows the override is not an option."
        ]
        return self.warn(
            "HSA_OVERRIDE_GFX_VERSION is set, but it has no effect on Windows: the Windows HIP runtime does not go "
            "through ROCr/HSA, which is what reads it. If a guide told you to set it to make an unsupported GPU work, "
            "that advice is for Linux.",
            evidence=[f"{scope}: {name} = {text}" for scope, name, text in where],
            remediation=remediation,
            data={"set_in": [s for s, _, _ in where]},
            fix=[S.unset_env(name, scope=scope, note="it has no effect on Windows") for scope, name, _ in where],
        )
