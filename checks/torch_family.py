"""torchvision, torchaudio and the Triton package are built for the installed torch: the same release (the pin each
carries, else data/torch_family.json) and the same index (the local version label: +rocm6.2 beside +rocm6.2, not
+cu121 and not PyPI's unlabelled CUDA wheel). A companion built for another torch is what "operator torchvision::nms
does not exist", "Couldn't load custom C++ ops" and torchaudio's "undefined symbol" mean."""

from __future__ import annotations

import re

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from rocm_doctor.engine.installs import install_into
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains
from rocm_doctor.facts.facts import target_python
from rocm_doctor.facts.keys import (PLATFORM_MACHINE, PYTHON_TARGET, PYTHON_TARGET_VERSION, TORCH_FAMILY, TORCH_FLAVOUR,
                                    TORCH_VERSION)
from rocm_doctor.knowledge import torch_family as table
from rocm_doctor.knowledge.wheels import cuda_index, therock_multi_arch

from rocm_doctor.checks.torch_install import _amd_gfx, _amd_index, _amd_plan_is_direct, _gpu_vendors, flavour_name

COMPANIONS = ("torchvision", "torchaudio")
RETIRED = ("torchtext", "torchdata")
TRITONS = ("triton", "pytorch-triton", "pytorch-triton-rocm")
SHOWN = ("torch", *COMPANIONS, *RETIRED, *TRITONS)
# what a companion's compiled operators say when they were built for another torch build
OPS_FAILED = re.compile(r"torchvision::nms does not exist|Couldn't load custom C\+\+ ops|undefined symbol|"
                        r"No such operator torchvision|Failed to load image Python extension", re.IGNORECASE)
SYSTEMS = {"linux": "Linux", "wsl": "Linux", "windows": "Windows", "macos": "Darwin"}


def origin(facts, name: str, package: dict) -> str:
    """Where a package came from, in words: the index its label names, PyPI, a source build; with its installer."""
    build = table.build_of(package.get("version"))
    url = ((package.get("direct_url") or {}) if isinstance(package.get("direct_url"), dict) else {}).get("url")
    if url:
        where = f"from {url}"
    elif build.origin == "pytorch.org":
        where = f"from the download.pytorch.org {build.index} index"
    elif build.origin == "therock":
        where = f"an AMD TheRock build for ROCm {build.tag[4:]}"
    elif build.origin == "amd":
        where = f"an AMD build for ROCm {build.tag[4:]}"
    elif build.origin == "source":
        where = "built from source"
    elif name == "torch" or facts.os != "linux":
        where = "from PyPI"
    else:
        where = "from PyPI, where the Linux wheels are CUDA builds"
    installer = package.get("installer")
    return f"{where}, installed by {installer}" if installer and installer != "pip" else where


def kind_of(facts, name: str, package: dict) -> str | None:
    """rocm, cuda, cpu or None: the label's word, torch's own answer for torch, PyPI's build for the OS."""
    build = table.build_of(package.get("version"))
    if build.kind:
        return build.kind
    if name == "torch" and facts.get(TORCH_FLAVOUR) and facts.get(TORCH_VERSION) == package.get("version"):
        return facts.get(TORCH_FLAVOUR)
    if build.origin == "pypi":
        return "cuda" if facts.os in ("linux", "wsl") else "cpu"
    return None


def describe(facts, name: str, package: dict) -> str:
    return f"{name} {package.get('version')} ({origin(facts, name, package)})"


def installed_torch(facts, torch: dict) -> str:
    return f"the installed torch is {torch.get('version')} ({origin(facts, 'torch', torch)})"


def _requirements(package: dict) -> list[Requirement]:
    """The pins a package carries, names normalised as the package keys are (pytorch_triton_rocm -> -rocm)."""
    out = []
    for line in package.get("requires") or ():
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        requirement.name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        out.append(requirement)
    return out


def _applies(facts, requirement: Requirement) -> bool:
    """Whether a requirement's marker holds for the target interpreter (platform, machine, Python version)."""
    if requirement.marker is None:
        return True
    env = dict(default_environment())
    env["platform_system"] = SYSTEMS.get(facts.os, env["platform_system"])
    env["sys_platform"] = {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[env["platform_system"]]
    if facts.get(PLATFORM_MACHINE):
        env["platform_machine"] = str(facts.get(PLATFORM_MACHINE))
    python = str(facts.get(PYTHON_TARGET_VERSION) or "")
    if re.match(r"\d+\.\d+", python):
        env["python_full_version"] = python
        env["python_version"] = ".".join(python.split(".")[:2])
    try:
        return requirement.marker.evaluate(dict(env, extra=""))
    except Exception:  # a marker packaging cannot evaluate here: the pin is taken as meant for this machine
        return True


def _satisfies(version: str | None, requirement: Requirement) -> bool:
    try:
        return requirement.specifier.contains(Version(str(version)), prereleases=True)
    except InvalidVersion:
        return True


def pin_problems(facts, name: str, package: dict, torch: dict) -> list[str]:
    """The pin the companion's own metadata carries on torch, against the torch installed."""
    return [f"{describe(facts, name, package)} requires torch{requirement.specifier}, but "
            f"{installed_torch(facts, torch)}"
            for requirement in _requirements(package)
            if requirement.name == "torch" and _applies(facts, requirement)
            and not _satisfies(torch.get("version"), requirement)]


def release_problem(facts, name: str, package: dict, torch: dict) -> str | None:
    """The companion's release against the one the table pairs with torch's release."""
    version, torch_version = package.get("version"), torch.get("version")
    if table.build_of(version).origin == "therock":  # AMD's nightlies pair their own builds; the pin decides
        return None
    want = table.expected(torch_version, name)
    if not want or table.release_of(version) == want or table.serves_every_later_torch(name, version, torch_version):
        return None
    built_for = table.pairs_with(name, version)
    for_what = f"is built for torch {' / '.join(built_for)}" if built_for else f"is not the {want} release"
    return (f"{describe(facts, name, package)} {for_what}, but {installed_torch(facts, torch)}, whose {name} is "
            f"{want}")


def index_problem(facts, name: str, package: dict, torch: dict) -> str | None:
    """The companion's build (ROCm, CUDA, CPU; the index's ROCm or CUDA version) against torch's."""
    mine, theirs = table.build_of(package.get("version")), table.build_of(torch.get("version"))
    kind, torch_kind = kind_of(facts, name, package), kind_of(facts, "torch", torch)
    if kind and torch_kind and kind != torch_kind:
        return (f"{describe(facts, name, package)} is a {flavour_name(kind)} build, but "
                f"{installed_torch(facts, torch)}, a {flavour_name(torch_kind)} build")
    if not (mine.tag and theirs.tag) or mine.tag == theirs.tag:
        return None
    if table.serves_every_later_torch(name, package.get("version"), torch.get("version")):
        if not (kind == "cuda" and mine.tag[:4] != theirs.tag[:4]):  # a stable-ABI build needs the CUDA major only
            return None
    return (f"{describe(facts, name, package)} comes from another index than torch: {mine.tag} beside "
            f"{theirs.tag} ({installed_torch(facts, torch)})")


def triton_problems(facts, family: dict, torch: dict) -> tuple[list[str], list[str]]:
    """(problems the install fixes, stray providers) for the Triton package torch pins: its own Requires-Dist, else
    (a pasted list) the table by torch's release, for torch from download.pytorch.org or PyPI."""
    packages = family["packages"]
    installed = {n: packages[n] for n in TRITONS if n in packages}
    pins = [r for r in _requirements(torch) if r.name in TRITONS and _applies(facts, r)]
    problems = []
    for pin in pins:
        have = installed.get(pin.name)
        if have is None:
            problems.append(f"torch {torch.get('version')} requires {pin.name}{pin.specifier}, which is not "
                            "installed: torch.compile has no compiler")
        elif not _satisfies(have.get("version"), pin):
            problems.append(f"torch {torch.get('version')} requires {pin.name}{pin.specifier}, but "
                            f"{describe(facts, pin.name, have)} is installed")
    wanted = {pin.name for pin in pins}
    if not pins and family.get("source") == "log" and table.build_of(torch.get("version")).origin in (
            "pytorch.org", "pypi"):
        name = table.triton_package(kind_of(facts, "torch", torch))
        want = (table.row_for(torch.get("version")) or {}).get("triton")
        have = installed.get(name)
        if have is not None:
            wanted = {name}
        if want and have and table.release_of(have.get("version")) != table.release_of(want):
            problems.append(f"{describe(facts, name, have)} is not the Triton {table.release_of(want)} that torch "
                            f"{torch.get('version')} pins")
    strays = [describe(facts, n, p) for n, p in installed.items() if wanted and n not in wanted]
    return problems, strays


def import_evidence(family: dict) -> tuple[list[str], bool]:
    """(evidence lines, whether a companion's compiled operators failed to load) from the import attempts."""
    lines, ops_failed = [], False
    for module, outcome in (family.get("imports") or {}).items():
        said = outcome.get("error") or (outcome.get("nms_error") if outcome.get("nms") is False else None)
        if said:
            lines.append(f"import {module}: {said}")
            ops_failed = ops_failed or bool(OPS_FAILED.search(said))
        ops_failed = ops_failed or any(OPS_FAILED.search(w) for w in outcome.get("warnings") or [])
    return lines, ops_failed


def wrong_for_gpu(facts, torch: dict) -> bool:
    """torch is the build torch-build-mismatch rejects: not ROCm on an AMD-only machine, not CUDA on NVIDIA only."""
    vendors = _gpu_vendors(facts)
    kind = kind_of(facts, "torch", torch)
    if "amd" in vendors and "nvidia" not in vendors:
        return kind not in (None, "rocm")
    if "nvidia" in vendors and "amd" not in vendors:
        return kind not in (None, "cuda")
    return False


def replaces_torch(cause, _symptom, _facts=None) -> bool:
    """The family step reinstalls torch for the GPU too: the torch-build-mismatch finding is one side of it."""
    return bool((cause.data or {}).get("replaces_torch"))


class TorchFamilyMatches(Check):
    id = "torch-family-mismatch"
    title = "torchvision, torchaudio and Triton builds against the installed torch"
    area = "torch"
    severity = Severity.HIGH
    requires = (TORCH_FAMILY,)
    explains = (Explains("torch-build-mismatch", when=replaces_torch),)

    def run(self, facts):
        family = facts[TORCH_FAMILY]
        packages = family["packages"]
        torch = packages.get("torch")
        listing = self._listing(facts, family)
        if not torch:
            why = ("the log names torch's companions but no torch version" if family.get("source") == "log" else
                   "torch is not installed in the target interpreter (see torch-not-installed)")
            return self.skip(why, evidence=listing)
        problems = []
        for name in COMPANIONS + RETIRED:
            if name in packages:
                found = pin_problems(facts, name, packages[name], torch)
                found = found or [p for p in (release_problem(facts, name, packages[name], torch),) if p]
                index = index_problem(facts, name, packages[name], torch)
                problems += found + ([index] if index else [])
        triton, strays = triton_problems(facts, family, torch)
        problems += triton
        companions = [n for n in COMPANIONS if n in packages]
        if not problems and companions and wrong_for_gpu(facts, torch):
            problems.append(f"torch {torch.get('version')} is a {flavour_name(kind_of(facts, 'torch', torch))} "
                            f"build, the wrong one for this GPU (see torch-build-mismatch), and the companions "
                            f"installed with it ({', '.join(companions)}) are built for it: replacing torch alone "
                            "would leave them built for another torch")
        imported, ops_failed = import_evidence(family)
        findings = []
        if strays:
            findings.append(self.warn(
                f"{'; '.join(strays)} is installed beside the Triton package torch pins: both install the module "
                "triton, and the one installed last is the one torch.compile gets.", subject="triton",
                severity=Severity.MEDIUM, evidence=listing,
                remediation=["Uninstall the Triton package torch does not pin, then reinstall the one it pins."]))
        if problems or ops_failed:
            findings.append(self._mismatch(facts, family, problems, imported, listing))
        elif imported:
            findings.append(self.warn(f"{imported[0]} (the versions and builds pair, so the cause lies elsewhere).",
                                      evidence=imported + listing))
        else:
            findings.append(self.ok(self._summary(facts, family), evidence=listing))
        return findings

    def _mismatch(self, facts, family, problems, imported, listing):
        if not problems:
            problems = ["the releases and builds pair, but a companion's compiled operators do not load with this "
                        "torch: it was built for another torch build"]
        message = "; ".join(problems) + "."
        if family.get("source") == "log":
            message += f" (read from the log {family.get('where') or ''})"
        step, why, replaces = self._install(facts, family)
        remediation = [] if step else ["Install torch, torchvision and torchaudio together, in one pip command, from "
                                       "the index torch came from."]
        return self.fail(message + (f" Install them together from {why}." if step else ""),
                         evidence=imported + listing, remediation=remediation, fix=[step] if step else [],
                         data={"problems": problems, "replaces_torch": replaces})

    def _install(self, facts, family):
        """(step, where from in words, whether it changes torch's build): one pip install of torch and its
        installed companions from torch's own index, or from the index for this GPU when torch is the wrong build."""
        packages = family["packages"]
        torch = packages["torch"]
        build = table.build_of(torch.get("version"))
        companions = [n for n in COMPANIONS if n in packages]
        vendors = _gpu_vendors(facts)
        kind = kind_of(facts, "torch", torch)
        python = target_python(facts, "python")
        extra = ["--force-reinstall"]
        amd_only, nvidia_only = "amd" in vendors and "nvidia" not in vendors, "nvidia" in vendors and "amd" not in vendors
        wrong = wrong_for_gpu(facts, torch)
        if wrong and amd_only:
            if not _amd_plan_is_direct(facts):
                return None, "", True
            index, why, specs = _amd_index(facts)
            return self._step(facts, python, list(specs) + companions, index, extra), why, True
        if wrong:
            index = cuda_index(torch.get("version"))
            return self._step(facts, python, ["torch"] + companions, index, extra), f"the CUDA index {index}", True
        index = table.index_url(build)
        if index and build.nightly:
            return self._step(facts, python, ["torch"] + companions, index, extra + ["--pre"]), index, False
        if index:
            return self._step(facts, python, self._pinned(torch, companions), index, extra), index, False
        multi = therock_multi_arch(_amd_gfx(facts)) if build.origin == "therock" and _amd_gfx(facts) else None
        if multi:
            args = extra + (["--pre"] if multi["channel"] == "nightly" else [])
            why = f"AMD's TheRock {multi['channel']} multi-arch index {multi['index']}"
            return self._step(facts, python, [multi["torch"]] + companions, multi["index"], args), why, False
        if amd_only and _amd_plan_is_direct(facts):
            index, why, specs = _amd_index(facts)
            why += " (torch's own build has no pip index to take its companions from)"
            return self._step(facts, python, list(specs) + companions, index, extra), why, False
        if nvidia_only or kind == "cuda":
            index = cuda_index(torch.get("version"))
            return self._step(facts, python, self._pinned(torch, companions), index, extra), index, False
        return None, "", False

    @staticmethod
    def _pinned(torch: dict, companions: list[str]) -> list[str]:
        """torch at its release, each companion at the release the table pairs with it (pip picks the point)."""
        version = table.build_of(torch.get("version")).public
        specs = [f"torch=={version}"]
        for name in companions:
            point, want = table.expected_point(version, name), table.expected(version, name)
            specs.append(f"{name}=={point}" if point else f"{name}=={want}.*" if want else name)
        return specs

    @staticmethod
    def _step(facts, python, packages, index, extra):
        return install_into(facts.get(PYTHON_TARGET), python, packages, index, extra_args=extra,
                            note="install torch and its companions in one command from one index, so each is built "
                                 "for the others")

    @staticmethod
    def _listing(facts, family) -> list[str]:
        """The family the way collect_env lists it, with where each came from."""
        packages = family["packages"]
        lines = [f"{name}=={packages[name].get('version')} ({origin(facts, name, packages[name])})"
                 for name in SHOWN if name in packages]
        lines += [f"also installed, shadowed: {item.get('name')}=={item.get('version')} in {item.get('location')}"
                  for item in family.get("shadowed") or []]
        return lines

    @staticmethod
    def _summary(facts, family) -> str:
        packages = family["packages"]
        names = ", ".join(f"{name} {packages[name].get('version')}" for name in SHOWN if name in packages)
        if len(packages) == 1:
            return f"{names}: no companion installed"
        return f"{names}: built for one another"
