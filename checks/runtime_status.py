"""What the GPU driver and runtime answered themselves (runtime.status, from the runtime child in the target
interpreter): cuInit / cudaGetDeviceCount for a CUDA torch, hsa_init / hipInit / hipGetDeviceCount for a ROCm one.

torch turns these into "no GPU" or an error with the code's number; the runtime's status names the reason, and
data/runtime_status.json (from NVIDIA's and AMD's headers) says what it means and which check diagnoses it."""

from __future__ import annotations

from rocm_doctor.checks.symptoms import GPU_WORK, TORCH_SEES_NO_GPU
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.engine.relations import Explains, when_failing
from rocm_doctor.facts.keys import RUNTIME_STATUS, TORCH_FLAVOUR
from rocm_doctor.knowledge import runtime_status

APIS_OF = {"cuda": ("cuda-driver", "cuda-runtime"), "rocm": ("hsa", "hip")}
NAMES = {"cuda-driver": "the CUDA driver", "cuda-runtime": "the CUDA runtime", "hip": "the HIP runtime",
         "hsa": "ROCr (the HSA runtime)"}


def refusals(status: dict, flavour: str) -> list[tuple[str, dict, dict]]:
    """(api, call, table row or {}) for each call of torch's runtimes that returned an error."""
    out = []
    for api in APIS_OF.get(flavour, ()):
        for call in ((status.get("apis") or {}).get(api) or {}).get("calls") or []:
            if call.get("code") not in (0, None):
                out.append((api, call, runtime_status.describe(api, call.get("code")) or {}))
    return out


def _said(api: str, call: dict, row: dict) -> str:
    name = row.get("name") or call.get("name") or f"status {call.get('code')}"
    return f"{call.get('call')}() returned {name} ({call.get('code')})"


class GpuRuntimeRefuses(Check):
    id = "gpu-runtime-refuses"
    title = "GPU runtime start-up and GPU discovery"
    area = "torch"
    severity = Severity.CRITICAL
    requires = (RUNTIME_STATUS, TORCH_FLAVOUR)
    explains = tuple(Explains(t, when_failing) for t in (*TORCH_SEES_NO_GPU, *GPU_WORK))
    docs = ("https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
            "https://rocm.docs.amd.com/projects/HIP/en/latest/reference/error_codes.html")

    def run(self, facts):
        status, flavour = facts[RUNTIME_STATUS], facts[TORCH_FLAVOUR]
        if flavour not in APIS_OF:
            return self.skip(f"torch is a {flavour} build: no GPU runtime of its own to ask")
        apis = status.get("apis") or {}
        for api in APIS_OF[flavour]:
            pending = (apis.get(api) or {}).get("pending")
            if pending and status.get("state") in ("hung", "crashed"):
                return self.fail(
                    f"{NAMES[api]} did not answer: {pending}() {status.get('state')} ({status.get('detail')}); torch "
                    "blocks or dies at the same call",
                    subject=api, evidence=[f"library: {(apis.get(api) or {}).get('path')}"],
                    remediation=["Look at the kernel log (dmesg) for GPU driver errors and at the driver findings; "
                                 "a GPU that hangs at initialisation often needs a driver reload or a reboot."],
                    data={"api": api, "call": pending, "state": status.get("state")})
        # torch loads the driver's libcuda only when it first asks for a GPU, so one that cannot be loaded is why it
        # finds none; the runtimes torch links (libcudart, libamdhip64) loaded with torch, so the child not finding
        # one of them says only that it looked elsewhere.
        driver = apis.get("cuda-driver") or {}
        if flavour == "cuda" and driver.get("loaded") is False:
            return self.fail(
                "the NVIDIA driver's libcuda could not be loaded, so this CUDA build of torch cannot reach a GPU",
                subject="cuda-driver", evidence=[f"tried: {t}" for t in driver.get("tried") or []],
                remediation=["Install or expose the driver's user-space library (in a container: the GPU runtime's "
                             "device and library mounts)."],
                data={"api": "cuda-driver", "tried": driver.get("tried")})
        refused = refusals(status, flavour)
        if refused:
            api, call, row = refused[0]
            evidence = [f"{NAMES[a]}: {_said(a, c, r)}" + (f": {c.get('text')}" if c.get("text") else "")
                        for a, c, r in refused]
            evidence += [f"library: {(apis.get(a) or {}).get('path')}" for a in dict.fromkeys(a for a, _, _ in refused)]
            meaning = row.get("meaning") or call.get("text") or "no meaning recorded for this status"
            causes = [c.get("text") for c in row.get("causes") or [] if c.get("text")]
            return self.fail(
                f"{NAMES[api]} refuses to start: {_said(api, call, row)} — {meaning}",
                subject=api, evidence=evidence,
                remediation=[f"Usual cause: {c}" for c in causes] or [
                    "The findings above this one (limits, variables, driver) name what the status points at."],
                data={"api": api, "call": call.get("call"), "code": call.get("code"), "name": row.get("name"),
                      "points_to": row.get("points_to")})
        agents = (apis.get("hsa") or {}).get("agents")
        if flavour == "rocm" and agents is not None and not any(a.get("gpu") for a in agents):
            return self.fail(
                "ROCr starts but lists no GPU agent: the HIP runtime and torch find no GPU",
                subject="hsa", evidence=[f"agents: {', '.join(str(a.get('name')) for a in agents) or 'none'}"],
                remediation=["See the device access and kernel driver findings: ROCr lists a GPU only when the "
                             "amdgpu driver's KFD exposes it and this user may open /dev/kfd and its render node."],
                data={"api": "hsa", "agents": agents, "points_to": "rocm-device-access"})
        answered = []
        for api in APIS_OF[flavour]:
            calls = (apis.get(api) or {}).get("calls") or []
            if calls:
                answered.append(f"{NAMES[api]}: " + ", ".join(
                    f"{c.get('call')}() = {'ok' if c.get('value') is None else c.get('value')}" for c in calls))
        if not answered:
            return self.skip(f"the runtime probe {status.get('state')}: {status.get('detail')}; no runtime answered")
        return self.ok("; ".join(answered))
