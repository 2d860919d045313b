"""GPU UUIDs in the visibility variables, judged against the GPUs that are really there: nvidia-smi's GPU and MIG
UUIDs for CUDA_VISIBLE_DEVICES, rocminfo's for HIP_VISIBLE_DEVICES, and for ROCR_VISIBLE_DEVICES what rocminfo
(which applies it) lists against KFD (which does not). The runtimes read the entries in order and stop at the first
that names no device, so such an entry hides itself and everything after it."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.facts import RUN_ENV
from rocm_doctor.facts.keys import ENV_KNOWN, KFD_NODES, ROCMINFO_AGENTS, ROCMINFO_STATUS
from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.visible_devices import index, parse_visible

from rocm_doctor.checks.gpu_state import gpus, label
from rocm_doctor.checks.symptoms import TORCH_GPU_WORK
from rocm_doctor.checks.visibility import set_in_rc_file



def _normal(uuid: str) -> str:
    return uuid.strip().lower()


def _matches(entry: str, known: list[str]) -> bool:
    """CUDA accepts a unique prefix of a UUID; the old MIG form is MIG-GPU-<uuid>/<gi>/<ci>."""
    wanted = _normal(entry)
    if wanted.startswith("mig-gpu-"):
        wanted = wanted[len("mig-"):].split("/")[0]
    bare = wanted.removeprefix("gpu-").removeprefix("mig-")
    return any(k.startswith(wanted) or k.removeprefix("gpu-").removeprefix("mig-").startswith(bare)
               for k in map(_normal, known))


def _nvidia_ids(facts) -> tuple[list[str], list[str]]:
    """(lines naming each NVIDIA GPU and MIG device, their UUIDs) from nvidia-smi."""
    lines, uuids = [], []
    for gpu in (g for g in gpus(facts) if g.get("vendor") == "nvidia"):
        lines.append(f"{label(gpu)}: {gpu.get('uuid')}")
        uuids.append(gpu.get("uuid") or "")
        for mig in gpu.get("mig_devices") or []:
            lines.append(f"  MIG {mig.get('profile')} device {mig.get('device')}: {mig.get('uuid')}")
            uuids.append(mig.get("uuid") or "")
    return lines, [u for u in uuids if u]


def _rocminfo_ids(facts) -> tuple[list[str], list[str]]:
    agents = [a for a in facts.get(ROCMINFO_AGENTS) or [] if isinstance(a, dict) and a.get("device_type") == "GPU"]
    real = [a for a in agents if a.get("uuid") and not str(a["uuid"]).upper().endswith("-XX")]
    return ([f"GPU {i} ({a.get('marketing_name') or a.get('name')}): {a['uuid']}" for i, a in enumerate(real)],
            [a["uuid"] for a in real])


class GpuVisibilityUnknownId(Check):
    id = "gpu-visibility-unknown-id"
    title = "GPU UUIDs in the visibility variables"
    area = "environment"
    severity = Severity.HIGH
    requires = (ENV_KNOWN,)
    explains = tuple(Explains(target, when_failing) for target in TORCH_GPU_WORK)

    def run(self, facts):
        findings = []
        for name in [n for n in reversed(visibility_variables()) if n != "GPU_DEVICE_ORDINAL"]:  # indices only
            value = facts.env.get(name)
            entries, bad = parse_visible(value) if value is not None else ([], [])
            if not entries or bad or all(index(e) is not None for e in entries):
                continue  # unset, empty, malformed or indices only: gpu-visibility-env judges those
            finding = self._judge(facts, name, value, entries)
            if finding is not None:
                findings.append(finding)
        return findings or self.ok("no GPU UUID in a visibility variable, or every one names a GPU here")

    def _judge(self, facts, name: str, value: str, entries: list[str]):
        if name == "ROCR_VISIBLE_DEVICES":
            return self._rocr(facts, name, value)
        lines, known = _nvidia_ids(facts) if name == "CUDA_VISIBLE_DEVICES" else _rocminfo_ids(facts)
        if name == "HIP_VISIBLE_DEVICES" and "ROCR_VISIBLE_DEVICES" in facts.env:
            known = []  # rocminfo then lists only what ROCR_VISIBLE_DEVICES left
        if not known:
            source = "nvidia-smi" if name == "CUDA_VISIBLE_DEVICES" else "rocminfo (without ROCR_VISIBLE_DEVICES)"
            return self.skip(f"{name}={value} names GPUs by UUID, but {source} listed no GPU UUIDs to check them "
                             "against", subject=name)
        picked = []
        for entry in entries:
            number = index(entry)
            if not (number is not None and 0 <= number < len(known) or number is None and _matches(entry, known)):
                break
            picked.append(entry)
        if len(picked) == len(entries):
            return self.ok(f"{name}={value}: every entry names a GPU here", subject=name)
        stop = entries[len(picked)]
        evidence = [f"{name}={value!r}", "GPUs here:"] + lines
        remedy = [f"Use one of these instead, or unset {name}:"] + lines
        if not picked:
            return self._selects_nothing(facts, name, f"{stop} matches none of the GPUs here, and the runtime stops "
                                         "reading at it, so torch sees no GPU.", evidence, remedy,
                                         {"entry": stop, "known": known})
        return self.warn(f"{name}={value} selects only {', '.join(picked)}: {stop} matches no GPU here, and the "
                         "runtime ignores it and every entry after it.", subject=name, evidence=evidence,
                         remediation=remedy, data={"entry": stop, "known": known})

    def _rocr(self, facts, name: str, value: str):
        nodes = [n for n in facts.get(KFD_NODES) or [] if isinstance(n, dict) and n.get("kind") == "gpu"]
        status = facts.get(ROCMINFO_STATUS) or {}
        agents = [a for a in facts.get(ROCMINFO_AGENTS) or []
                  if isinstance(a, dict) and a.get("device_type") == "GPU"]
        run = facts.get(RUN_ENV)
        if isinstance(run, dict) and run.get("env") is not None and status.get("environment") != RUN_ENV:
            return self.skip(f"{name}={value} is judged in {run['label']}, but rocminfo ran in this shell's "
                             "environment (a snapshot of an older rocm-doctor), so what it lists with the variable set "
                             "cannot be told", subject=name)
        if not nodes or status.get("state") not in ("ok", "unrecognized") or agents:
            return self.skip(f"{name}={value} names GPUs by UUID; rocminfo listed GPUs with it set, or KFD or "
                             "rocminfo could not be read, so it cannot be told to select nothing", subject=name)
        lines = [f"KFD node {n.get('node')}: {n.get('name') or n.get('gfx')}" for n in nodes]
        return self._selects_nothing(facts, name, f"with it set rocminfo lists no GPU, while KFD lists {len(nodes)}.",
                                     [f"{name}={value!r}", "rocminfo: no GPU agent"] + lines,
                                     ["Unset it, or use a UUID that rocminfo prints (Uuid: GPU-…) when the variable "
                                      "is not set."], {"kfd_gpus": len(nodes)})

    def _selects_nothing(self, facts, name: str, why: str, evidence: list[str], remedy: list[str], data: dict):
        return self.fail(f"{name}={facts.env.get(name)} selects no GPU: {why}", subject=name, evidence=evidence,
                         remediation=remedy, fix=S.unset_where_set(name, set_in_rc_file(facts, name)), data=data)
