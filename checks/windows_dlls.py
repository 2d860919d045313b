"""Windows DLL provenance: torch must load its own HIP runtime and ROCm libraries, and only one HIP runtime."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import WINDOWS_DLLS, WINDOWS_PATH
from rocm_doctor.parsers import windows_paths as paths

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU
from rocm_doctor.checks.windows_env import raw_entry

WINDOWS = (Platform.WINDOWS,)


def _path_steps(facts, folders) -> list:
    """Remove the folders from this shell's Path and from whichever registry scope holds them."""
    scopes = (facts.get(WINDOWS_PATH) or {}).get("scopes") or {}
    steps = [S.path_remove(f, "Path", scope="process", note="its DLLs shadow torch's own") for f in folders]
    for scope in ("user", "machine"):
        entries = (scopes.get(scope) or {}).get("entries") or []
        steps += [S.path_remove(raw_entry(scopes.get(scope), f), "Path", scope=scope, note="its DLLs shadow torch's own")
                  for f in folders if any(paths.same(f, e) for e in entries)]
    return steps


def _shell_only(facts, folders) -> list[str]:
    """Advice for folders no registry scope holds: an activation script or a hand-made change put them there."""
    scopes = (facts.get(WINDOWS_PATH) or {}).get("scopes") or {}
    shell_only = [f for f in folders if not any(
        paths.same(f, e) for s in ("user", "machine") for e in (scopes.get(s) or {}).get("entries") or [])]
    return ["Set only in this shell (by an activation script or by hand): " + "; ".join(shell_only)
            + " — remove it from that script too."] if shell_only else []


class DllShadowing(Check):
    id = "dll-shadowing"
    title = "Where torch's HIP/ROCm DLLs come from: its own folder, System32 or PATH"
    explains = ("hip-runtime-loaded-twice", *TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "windows-dlls"
    severity = Severity.CRITICAL
    platforms = WINDOWS
    requires = (WINDOWS_DLLS,)
    docs = ("https://github.com/ROCm/ROCm/issues/5941",)

    def run(self, facts):
        dlls = facts[WINDOWS_DLLS]
        own = dlls["own_copies"]
        if not own:
            return self.skip("torch ships no HIP/ROCm DLLs of its own here (no ROCm torch, or its folders were not scanned)")
        loaded = dlls.get("loaded")
        if loaded is not None:
            foreign = [d for d in loaded if not d["own"] and d["name"].lower() in own]
            if not foreign:
                names = sorted({d["name"] for d in loaded})
                return self.ok("torch loaded its own " + (", ".join(names) if names else "libraries"))
            evidence = [f"loaded {d['path']}; torch ships {own[d['name'].lower()][0]}" for d in foreign]
            sys32 = [d for d in foreign if d["system32"]]
            folders = sorted({d["folder"] for d in foreign if not d["system32"]})
            remediation = _shell_only(facts, folders)
            if sys32:
                remediation += [
                    f"{d['path']} won over torch's copy. If it came with the AMD driver, something in this process "
                    "loaded the driver's runtime before torch (another package importing HIP first): import torch first, "
                    "or update torch / the rocm-sdk wheels to a build that matches the driver. If you copied it there by "
                    "hand (an old HIP SDK guide), remove it and reinstall the driver with AMD's clean-install option."
                    for d in sys32
                ]
            remediation.append("If torch's own copies were replaced, reinstall the torch and rocm-sdk wheels you use "
                               "(pip's --force-reinstall --no-deps keeps the rest of the environment).")
            return self.fail(
                f"torch loaded {', '.join(d['name'] for d in foreign)} from outside its own folders "
                f"({', '.join(sorted({d['folder'] for d in foreign}))}) although it ships its own copy. A HIP runtime or "
                "library of another version in the same process is the usual cause of access violations "
                "(0xC0000005 in amdhip64_*.dll) and 'invalid device function' errors.",
                evidence=evidence,
                remediation=remediation,
                data={"foreign": [d["path"] for d in foreign]},
                fix=_path_steps(facts, folders),
            )
        # System32's copies come with the display driver (it installs amdhip64_*.dll there); System32 stays on PATH.
        risky = [p for p in dlls.get("on_path") or [] if not p["own"] and p["name"].lower() in own
                 and not paths.same(p["folder"], dlls.get("system32") or "")]
        if not risky:
            return self.ok("no copy of torch's HIP/ROCm DLLs on PATH outside System32 (which DLLs torch loaded is "
                           f"unknown: {dlls.get('loaded_why_missing')})")
        folders = sorted({p["folder"] for p in risky}, key=lambda f: min(p["position"] for p in risky if p["folder"] == f))
        return self.warn(
            f"PATH folders hold their own copies of DLLs torch ships ({', '.join(sorted({p['name'] for p in risky}))}); "
            "if anything loads them first, torch ends up with a foreign HIP runtime. Which DLLs torch loaded is unknown "
            f"({dlls.get('loaded_why_missing')}).",
            evidence=[f"PATH[{p['position']}] {p['folder']}\\{p['name']}" for p in risky],
            remediation=_shell_only(facts, folders),
            fix=_path_steps(facts, folders),
        )


class HipRuntimeLoadedTwice(Check):
    id = "hip-runtime-loaded-twice"
    title = "HIP runtimes loaded in the torch process"
    explains = (*TORCH_SEES_NO_GPU, *GPU_WORK)
    area = "windows-dlls"
    severity = Severity.CRITICAL
    platforms = WINDOWS
    requires = (WINDOWS_DLLS,)

    def run(self, facts):
        loaded = facts[WINDOWS_DLLS].get("loaded")
        if loaded is None:
            return self.skip(f"the DLLs torch loaded are unknown: {facts[WINDOWS_DLLS].get('loaded_why_missing')}")
        runtimes = []
        for item in loaded:
            if item["runtime"] and not any(paths.same(item["path"], r["path"]) for r in runtimes):
                runtimes.append(item)
        if len(runtimes) < 2:
            return self.ok(f"one HIP runtime: {runtimes[0]['path']}" if runtimes else "no HIP runtime loaded")
        others = [r for r in runtimes if not r["own"]]
        folders = sorted({r["folder"] for r in others if not r["system32"]})
        return self.fail(
            f"{len(runtimes)} HIP runtimes are loaded in one process ({', '.join(r['path'] for r in runtimes)}). Two "
            "runtimes fight over the same driver: crashes (0xC0000005), hangs or 'invalid device function' follow.",
            evidence=[f"loaded: {r['path']}" + (" (torch's own)" if r["own"] else "") for r in runtimes],
            fix=_path_steps(facts, folders),
            remediation=_shell_only(facts, folders) + [
                "What loaded the other runtime could not be told from the list of loaded files, only where each "
                "was loaded from (the evidence). A second GPU package imported in the same process (an older "
                "onnxruntime/ZLUDA/HIP SDK build) or a HIP SDK bin folder on PATH loads one. Use one ROCm "
                "generation per environment.",
            ],
            data={"runtimes": [r["path"] for r in runtimes]},
        )
