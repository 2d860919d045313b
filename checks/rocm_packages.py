"""The ROCm packages the package manager holds: two releases (or AMD's and the distribution's builds) installed at
once (rocm-packages-mixed), an install or upgrade dpkg did not finish (rocm-install-incomplete), and /opt/rocm
pointing at another release or nowhere (rocm-opt-link)."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import ROCM_OPT_LINK, ROCM_PACKAGES, ROCM_PATHS_KEY
from rocm_doctor.knowledge import versions

from rocm_doctor.checks.layer_common import family
from rocm_doctor.checks.symptoms import DRIVER_SYMPTOMS, RUNTIME_SYMPTOMS

SHOWN = 6  # package names named per release in a message


def _key(release: str) -> tuple:
    parsed = versions.parse(release) or (0, 0, None)
    return tuple(0 if part is None else part for part in parsed[:3])


def _releases(rows: list[dict]) -> dict[str, list[str]]:
    """Release → package names of AMD's non-versioned ROCm packages; a release without a point ("4.0", from
    `rocm-rel-4.0`) joins the point release of the same minor when there is one."""
    found: dict[str, list[str]] = {}
    for row in rows:
        if row["kind"] == "rocm" and row["built_by"] == "amd" and not row["versioned"] and row["release"]:
            found.setdefault(row["release"], []).append(row["name"])
    for release in [r for r in found if r.count(".") == 1]:
        fuller = next((r for r in found if r.startswith(release + ".")), None)
        if fuller:
            found[fuller] += found.pop(release)
    return dict(sorted(found.items(), key=lambda item: _key(item[0]), reverse=True))


def _names(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def installed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["status"] != "rc"]


def _tool(facts, manager: str) -> str:
    if manager == "rpm":
        return {"suse": "zypper"}.get(family(facts) or "", "dnf")
    return "apt-get"


class RocmPackagesMixed(Check):
    id = "rocm-packages-mixed"
    title = "Releases and sources of the installed ROCm packages"
    explains = RUNTIME_SYMPTOMS + ("rocm-opt-link",)
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_PACKAGES,)
    docs = ("https://github.com/ROCm/ROCm/issues/3654", "https://github.com/ROCm/ROCm/issues/1568")

    def run(self, facts):
        packages = facts[ROCM_PACKAGES]
        rows = installed(packages["rows"])
        if not [r for r in rows if r["kind"] == "rocm"]:
            return self.skip(f"no ROCm package is installed ({packages['manager']})")
        releases = _releases(rows)
        versioned = sorted({r["versioned"] for r in rows if r["kind"] == "rocm" and r["versioned"]}, key=_key)
        distro = [r for r in rows if r["kind"] == "rocm" and r["built_by"] == "distribution"]
        evidence = [f"{release}: {_names(names)}" for release, names in releases.items()]
        evidence += [f"{r['name']} {r['version']} (the distribution's build)" for r in distro]
        evidence += [f"versioned: ROCm {v}" for v in versioned]
        tool = _tool(facts, packages["manager"])
        if len(releases) > 1:
            newest, *older = releases
            names = [n for release in older for n in releases[release]]
            upgrade = ["sudo", tool, "install", "--only-upgrade", *names] if tool == "apt-get" else \
                ["sudo", tool, "upgrade" if tool == "dnf" else "update", *names]
            return self.warn(
                f"ROCm packages of {len(releases)} releases are installed at once: {newest} "
                f"({len(releases[newest])} packages) and " + "; ".join(f"{r} ({_names(releases[r])})" for r in older)
                + ". One process then loads libraries of two releases, which fails with missing symbols or "
                "libraries (an upgrade that stopped halfway).", evidence=evidence,
                fix=[S.run_command(upgrade, needs_admin=True, description=f"upgrade the {', '.join(older)} packages "
                                   f"to {newest}")],
                alternatives=[S.alternative(f"remove the {', '.join(older)} packages", S.run_command(
                    ["sudo", tool, "remove", *names], needs_admin=True, description="remove the older packages"),
                    why_not_first=f"a package ROCm {newest} still depends on goes with them")],
                remediation=[f"The upgrade takes {newest} only when the ROCm repository names it (see "
                             "rocm-repos-mixed)."])
        if releases and distro:
            (release, names), = releases.items()
            return self.warn(
                f"the distribution's own ROCm packages ({_names([r['name'] for r in distro])}) are installed beside "
                f"AMD's ROCm {release}: their libraries (libhsa-runtime64, libamdhip64 ...) sit on the default "
                "library path, so a program can load the distribution's older runtime instead of AMD's.",
                evidence=evidence, fix=[S.run_command(["sudo", tool, "remove", *[r["name"] for r in distro]],
                                                      needs_admin=True, description="remove the distribution's "
                                                      "ROCm packages")])
        if versioned:
            single = f" and the non-versioned ROCm {next(iter(releases))}" if releases else ""
            return self.info(
                f"ROCm {', '.join(versioned)} are installed as versioned packages (a multi-version install){single}; "
                "/opt/rocm points at one of them." + (" AMD recommends not to combine non-versioned and versioned "
                                                      "installs." if releases else ""), evidence=evidence)
        if releases:
            (release, names), = releases.items()
            return self.ok(f"{len(names)} ROCm packages, all of release {release}", evidence=evidence)
        return self.ok(f"{len(distro)} ROCm packages, all built by the distribution", evidence=evidence)


def _broken(status: str) -> bool:
    """dpkg states of a package dpkg did not finish: unpacked (U), half-configured (F), half-installed (H), awaiting
    or pending triggers (W, t), or reinstall-required (R)."""
    return len(status) >= 2 and (status[1] in "UFHWt" or status[2:3] == "R")


class RocmInstallIncomplete(Check):
    id = "rocm-install-incomplete"
    title = "dpkg's install state of the ROCm and amdgpu packages"
    explains = DRIVER_SYMPTOMS + ("rocm-opt-link", "rocm-packages-mixed")
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_PACKAGES,)
    docs = ("https://github.com/ROCm/ROCm/issues/3701",)

    def run(self, facts):
        packages = facts[ROCM_PACKAGES]
        if packages["manager"] != "dpkg":
            return self.skip("rpm keeps no half-installed state to judge")
        rows = packages["rows"]
        broken = [r for r in rows if _broken(r["status"])]
        leftovers = [r for r in rows if r["status"] == "rc"]
        evidence = [f"{r['status']}  {r['name']} {r['version'] or ''}".rstrip() for r in broken + leftovers]
        if broken:
            half = [r["name"] for r in broken if r["status"][1] == "H" or r["status"][2:3] == "R"]
            steps = [S.run_command(["sudo", "dpkg", "--configure", "-a"], needs_admin=True,
                                   description="finish configuring the packages dpkg left unconfigured"),
                     S.run_command(["sudo", "apt-get", "-f", "install"], needs_admin=True,
                                   description="let apt complete or repair their dependencies")]
            if half:
                steps.append(S.run_command(["sudo", "apt-get", "install", "--reinstall", *half], needs_admin=True,
                                           description="unpack the half-installed packages again"))
            driver = [r for r in broken if r["name"].startswith("amdgpu-dkms")]
            return self.fail(
                f"dpkg did not finish {len(broken)} package(s): "
                + ", ".join(f"{r['name']} ({r['status']})" for r in broken)
                + ". An interrupted install leaves files and scripts of the package half in place"
                + (", and amdgpu-dkms unconfigured means its DKMS build did not complete." if driver else "."),
                evidence=evidence, fix=steps, remediation=[
                    "If configuring amdgpu-dkms fails again, its build log is under /var/lib/dkms/amdgpu/ (see "
                    "amdgpu-dkms-not-built)."] if driver else [])
        if leftovers:
            return self.info(f"{len(leftovers)} ROCm or amdgpu package(s) were removed but kept their configuration "
                             f"files ({_names([r['name'] for r in leftovers])}): harmless.", evidence=evidence)
        if not rows:
            return self.ok("dpkg lists no ROCm or amdgpu package, so none is half-installed")
        return self.ok(f"all {len(rows)} ROCm and amdgpu packages are fully installed")


class RocmOptLink(Check):
    id = "rocm-opt-link"
    title = "The /opt/rocm link against the installed ROCm release"
    explains = ("rocm-paths", "hip-runtime-mismatch", "rocm-runtime-sees-no-gpu", "torch-probe-crashed")
    area = "amd"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_OPT_LINK,)
    docs = ("https://github.com/ROCm/ROCm/issues/1568",)

    def run(self, facts):
        link = facts[ROCM_OPT_LINK]
        opt = link["entries"].get("/opt/rocm")
        alternative = link["entries"].get("/etc/alternatives/rocm")
        root = next((i for i in (facts.get(ROCM_PATHS_KEY) or {}).get("installs") or [] if i.get("path") == "/opt/rocm"), {})
        rows = installed((facts.get(ROCM_PACKAGES) or {}).get("rows") or [])
        releases = list(_releases(rows))
        versioned = {r["versioned"] for r in rows if r["kind"] == "rocm" and r["versioned"]}
        evidence = [f"ls -ld: {line}" for line in link["lines"]] + [f"ls: {p}: no such file" for p in link["missing"]]
        if root.get("realpath"):
            evidence.append(f"/opt/rocm resolves to {root['realpath']}" + (f" (.info/version {root['version']})"
                                                                           if root.get("version") else ""))
        tool = "alternatives" if (facts.get(ROCM_PACKAGES) or {}).get("manager") == "rpm" else "update-alternatives"
        if opt is None and "/opt/rocm" not in link["missing"]:
            return self.skip("ls did not list /opt/rocm", evidence=evidence)
        if opt is None:
            if not releases:
                return self.skip("there is no /opt/rocm and no non-versioned ROCm package that would create it")
            return self.warn(f"/opt/rocm does not exist, though ROCm {releases[0]} packages are installed (rocm-core "
                             "creates it): tools and builds that look in /opt/rocm find nothing.", evidence=evidence,
                             fix=[self._reinstall_core(facts)])
        if opt.get("type") == "link" and root.get("exists") is False:
            dangling = (alternative or {}).get("target") or opt.get("target")
            return self.fail(
                f"/opt/rocm is a link to {opt['target']}" + (f", which points at {dangling}" if alternative else "")
                + ", and that does not exist: every tool and library path through /opt/rocm is broken.",
                evidence=evidence, fix=[S.run_command(["sudo", tool, "--config", "rocm"], needs_admin=True,
                                                      description="choose an installed ROCm for /opt/rocm")],
                alternatives=self._relink(releases or sorted(versioned, key=_key, reverse=True)),
                remediation=["In a container, /etc/alternatives must be there too when only /opt is mounted from "
                             "the host."])
        target = root.get("realpath") or ""
        points_at = target.rsplit("/rocm-", 1)[1] if "/rocm-" in target else None
        if points_at and releases and len(releases) == 1 and releases[0] != points_at and points_at not in versioned:
            return self.warn(f"/opt/rocm points at {target}, but the installed ROCm packages are {releases[0]}: what "
                             "runs through /opt/rocm is another release than the one the package manager keeps up "
                             "to date.", evidence=evidence,
                             fix=[S.run_command(["sudo", tool, "--set", "rocm", f"/opt/rocm-{releases[0]}"],
                                                needs_admin=True, description=f"point /opt/rocm at ROCm {releases[0]}")])
        if points_at and root.get("version") and not root["version"].startswith(points_at):
            return self.warn(f"{target}/.info/version says {root['version']}, not {points_at}: the folder holds files "
                             "of another release.", evidence=evidence,
                             remediation=["Reinstall rocm-core of the release the folder is named for."])
        return self.ok(f"/opt/rocm → {target or opt.get('target') or 'a folder'}"
                       + (f", the installed ROCm {releases[0]}" if releases else ""), evidence=evidence)

    @staticmethod
    def _reinstall_core(facts):
        manager = (facts.get(ROCM_PACKAGES) or {}).get("manager")
        argv = ["sudo", "dnf", "reinstall", "rocm-core"] if manager == "rpm" else \
            ["sudo", "apt-get", "install", "--reinstall", "rocm-core"]
        return S.run_command(argv, needs_admin=True, description="reinstall rocm-core, which creates /opt/rocm")

    @staticmethod
    def _relink(releases):
        if not releases:
            return []
        return [S.alternative(f"link /opt/rocm to /opt/rocm-{releases[0]} by hand", S.run_command(
            ["sudo", "ln", "-sfn", f"/opt/rocm-{releases[0]}", "/opt/rocm"], needs_admin=True,
            description=f"point /opt/rocm at /opt/rocm-{releases[0]}"),
            why_not_first="the alternatives entry rocm-core keeps is then out of step with the link")]
