"""The package repositories against the installed ROCm (rocm-repos-mixed): a repository line that names no release,
the same repository in two files, or a release other than the installed one, which the next install or upgrade
half mixes in."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import ROCM_REPOS
from rocm_doctor.knowledge import versions

from rocm_doctor.checks.amd_common import rocm_version


def _minor(text: str) -> str | None:
    parsed = versions.parse(text)
    return f"{parsed[0]}.{parsed[1]}" if parsed else None


def _where(entry: dict) -> str:
    return f"{entry['file']}:{entry['line_no']}: {entry['url']}" + (f" {entry['suite']}" if entry.get("suite") else "")


class RocmReposMixed(Check):
    id = "rocm-repos-mixed"
    title = "ROCm releases in the package repositories"
    area = "amd"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_REPOS,)
    docs = ("https://github.com/ROCm/ROCm/issues/1183", "https://github.com/ROCm/ROCm/issues/5558")

    def run(self, facts):
        repos = facts[ROCM_REPOS]
        enabled = [e for e in repos["entries"] if e["enabled"]]
        if not enabled:
            return self.skip("no repo.radeon.com repository is enabled")
        evidence = [_where(e) for e in enabled] + ([f"/opt: {', '.join(repos['opt_rocm'])}"] if repos["opt_rocm"] else [])
        unnamed = [e for e in enabled if e["kind"] == "rocm" and not e["release"] and e["version"] != "latest"]
        unnamed += [e for e in enabled if e["placeholder"] and e not in unnamed]
        if unnamed:
            return self.warn(f"{_where(unnamed[0])} names no release ('{unnamed[0]['version']}'): repo.radeon.com has a "
                             "folder per release, so the package manager finds nothing or an old tree there.",
                             evidence=evidence, remediation=[
                                 "Put the release in the path (rocm/apt/6.4, amdgpu/6.4/ubuntu), or reinstall "
                                 "amdgpu-install for the release you want, which writes these files."])
        seen: dict = {}
        for entry in enabled:
            key = (entry["url"], entry.get("suite"))
            if key in seen and seen[key] != entry["file"]:
                return self.warn(f"{entry['url']} is configured twice, in {seen[key]} and {entry['file']}: apt warns "
                                 "'configured multiple times' and both copies must be kept in step.",
                                 evidence=evidence, remediation=[f"Keep one of the two files ({entry['file']} or "
                                                                 f"{seen[key]}) and delete the other."])
            seen[key] = entry["file"]
        version, where = rocm_version(facts)
        releases = sorted({_minor(e["release"]) for e in enabled if e["kind"] == "rocm" and e["release"]} - {None})
        if version and releases and _minor(version) not in releases:
            return self.warn(f"the ROCm repository names {', '.join(releases)} but the installed ROCm is {version} "
                             f"(from {where}): the next install or upgrade mixes packages of two releases.",
                             evidence=evidence, remediation=[
                                 f"Point the repository at {_minor(version)} to stay on the installed release, or "
                                 "upgrade all of ROCm to the repository's release (amdgpu-install of that release)."])
        if len(releases) > 1:
            return self.info(f"repositories for several ROCm releases are enabled ({', '.join(releases)}): a "
                             "multi-version install needs each release's packages by their versioned names.",
                             evidence=evidence)
        return self.ok("the ROCm repositories name " + (", ".join(releases) or "no ROCm release")
                       + (f", the installed {version}" if version else ""), evidence=evidence)
