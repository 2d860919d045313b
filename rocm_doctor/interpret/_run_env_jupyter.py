"""The environment a Jupyter kernel runs in, from what the run_env probe recorded: the Jupyter server's environment
plus kernel.json's env. The server's own environment cannot be read from here; it is taken as this shell's (a
server started from a terminal inherits it), and the fact says so. Pure."""

from __future__ import annotations

import re

from rocm_doctor.facts.keys import JUPYTER_KERNEL_KEY as KERNEL_KEY, JUPYTER_LIST_KEY as LIST_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers import kernelspec

SERVER = ("the Jupyter server's environment could not be read; it is taken as this shell's. A server started from a "
          "desktop launcher, a systemd unit or JupyterHub has its own, without what ~/.bashrc sets")


def compose(observations: Observations, request: dict) -> dict:
    name = str(request.get("name") or "")
    run: dict = {"kind": "jupyter", "name": name, "label": f"the Jupyter kernel '{name}' environment",
                 "notes": [], "files": [], "sources": {}}
    found = observations.probes.get(KERNEL_KEY) or {}
    path = found.get("kernel_json")
    if not path:
        known = _listed(observations)
        where = "; ".join(found.get("searched") or []) or "the Jupyter kernel folders"
        others = f" (kernels there: {', '.join(sorted(known))})" if known else ""
        return dict(run, problem=f"no Jupyter kernel named {name} in {where}{others}", env=None)
    record = observations.file(path)
    if record is None or record.content is None:
        return dict(run, problem=f"cannot read {path}: {record.error if record else 'not read'}", env=None)
    spec, problem = kernelspec.kernel_json(record.content)
    if problem:
        return dict(run, problem=f"{path}: {problem}", env=None)
    folder = re.split(r"[\\/]", (found.get("resource_dir") or "").rstrip("\\/"))[-1]
    if folder:  # the kernel's own spelling: Jupyter matches names without case, a rewrite must not add a twin
        run.update(name=folder, label=f"the Jupyter kernel '{folder}' environment")
    env = kernelspec.kernel_environment(observations.env, spec["env"])
    run["sources"].update({var: f"kernel.json env ({path})" for var in spec["env"]})
    run["notes"].append(SERVER)
    run["notes"] += [f"kernel.json sets {var}={value}: the $ reference is filled in from the server's environment "
                     "(jupyter_client 7 and newer; older ones take it literally)"
                     for var, value in spec["env"].items() if re.search(r"\$\{?[A-Za-z_]", value)]
    run.update(env=env, resource_dir=found.get("resource_dir") or "", kernel_json=path, spec_env=spec["env"],
               command={"path": spec["argv"][0], "argv": spec["argv"]},
               basis="the Jupyter server's environment (taken as this shell's) plus kernel.json's env")
    return run


def _listed(observations: Observations) -> list[str]:
    result = observations.command(LIST_KEY)
    if result is None or result.returncode != 0:
        return []
    specs, _ = kernelspec.kernelspec_list(result.stdout)
    return list(specs)
