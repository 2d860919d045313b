"""rocm.repos: the repo.radeon.com repositories configured for the package manager, per file and line, and the
/opt/rocm-* folders installed, from the package_repos probe."""

from __future__ import annotations

from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.package_repos import parse_repo_file
from rocm_doctor.facts.keys import OPT_DIR, REPO_DIRS, ROCM_REPOS


def interpret(observations: Observations, facts: Facts) -> None:
    listed = [observations.file(d) for d, _ in REPO_DIRS if observations.file(d) is not None]
    if not listed:
        facts.set_missing(ROCM_REPOS, "the package repository folders were not read")
        return
    entries = []
    for folder in listed:
        for name in folder.entries or []:
            record = observations.file(f"{folder.path}/{name}")
            if record is not None and record.content is not None:
                entries += [dict(e, file=record.path) for e in parse_repo_file(record.content)]
    opt = observations.file(OPT_DIR)
    facts.set(ROCM_REPOS, {"entries": entries, "opt_rocm": sorted(e for e in (opt.entries if opt else None) or []
                                                                     if e.startswith("rocm-"))})
