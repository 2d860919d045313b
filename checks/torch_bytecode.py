"""torch's modules load from compiled bytecode (torch-bytecode-not-cached). Without it every process that imports
torch compiles its Python source again: seconds at each start, and again on the first use of torch.optim,
autograd with a gradient tensor or torch.compile, which import more of torch."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import PYTHON_TARGET_VERSION, TORCH_BYTECODE

ENOUGH = 0.9  # a few modules loaded from elsewhere (generated, zipped) do not make a slow start


def _why(state: dict) -> str:
    if state.get("dont_write_bytecode"):
        if state.get("variable"):
            return f"PYTHONDONTWRITEBYTECODE={state['variable']} is set, so Python does not store what it compiles"
        return "Python runs with -B, so it does not store what it compiles"
    if state.get("pycache_prefix"):
        return (f"Python stores what it compiles under {state['pycache_prefix']} (PYTHONPYCACHEPREFIX) and did not "
                "store torch's there")
    if not state.get("folder_writable"):
        return f"this user cannot write to {state.get('folder')}, so Python cannot store what it compiles there"
    return "Python did not store what it compiled"


def newer_python_files(version) -> str:
    """compileall's -x pattern for the files torch ships for a newer Python than the target's, named for it
    (torch 2.13's testing/_internal/py312_intrinsics.py holds 3.12 syntax): compiling them fails with a
    SyntaxError and compileall then exits 1 though every other module got its bytecode. Version unknown: every
    file named for a Python version (none is imported at startup)."""
    try:
        minor = int(str(version).split(".")[1])
    except (IndexError, ValueError):
        return r"py3[0-9]+_[^/\\]*[.]py$"
    tens, ones = divmod(minor, 10)
    newer = ([f"{tens}[{ones + 1}-9]"] if ones < 9 else []) + ([f"[{tens + 1}-9][0-9]"] if tens < 9 else [])
    return rf"py3({'|'.join(newer)})_[^/\\]*[.]py$"


class TorchBytecodeNotCached(Check):
    id = "torch-bytecode-not-cached"
    title = "Compiled bytecode for torch's modules"
    area = "torch"
    severity = Severity.LOW
    requires = (TORCH_BYTECODE,)
    docs = ("https://docs.python.org/3/using/cmdline.html#envvar-PYTHONDONTWRITEBYTECODE",
            "https://docs.python.org/3/library/compileall.html")

    def run(self, facts):
        state = facts[TORCH_BYTECODE]
        modules, cached = int(state.get("modules") or 0), int(state.get("cached") or 0)
        if not modules:
            return self.skip("torch was loaded from no Python source file (a frozen or zipped install)")
        seconds = state.get("import_s")
        took = f"; importing torch took {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
        evidence = [f"{cached} of {modules} torch modules imported had compiled bytecode on disk{took}",
                    f"torch's folder: {state.get('folder')}"]
        if cached >= ENOUGH * modules:
            return self.ok(f"{cached} of {modules} torch modules load from compiled bytecode{took}", evidence=evidence)
        folder = state.get("folder") or "torch's folder"
        compile_step = S.run_command(
            [target_python(facts), "-m", "compileall", "-q", "-j", "0", "-x",
             newer_python_files(facts.get(PYTHON_TARGET_VERSION)), folder],
            description=f"compile torch's modules once, into {folder}",
            needs_admin=not state.get("folder_writable") and not state.get("pycache_prefix"),
            note="Python reads stored bytecode even when told not to write it")
        return self.warn(
            f"{modules - cached} of the {modules} torch modules this process imported have no compiled bytecode: "
            f"{_why(state)}. Every process that imports torch compiles them again{took}; the first torch.optim "
            "optimizer, gradient call or torch.compile in a process pays the same for the modules they import.",
            evidence=evidence,
            remediation=[f"Compile torch once with `python -m compileall` (as the owner of {folder}); Python then "
                         "loads the stored bytecode whatever PYTHONDONTWRITEBYTECODE says."],
            fix=[compile_step])
