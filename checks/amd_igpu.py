"""The HIP device 0 that torch uses by default is an integrated GPU while a discrete one exists: one check on every
platform, reading gpu.inventory on Linux/WSL and hipInfo's device list (windows.hipinfo) on Windows."""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.engine import remedy as S
from rocm_doctor.facts import words
from rocm_doctor.facts.keys import GPU_INVENTORY, WINDOWS_HIPINFO
from rocm_doctor.knowledge import overrides
from rocm_doctor.knowledge.env_catalog import visibility_variables
from rocm_doctor.parsers.visible_devices import entries, visible_order

from rocm_doctor.checks.amd_common import OVERRIDE, gpus, integrated, label, override_for, real_gfx


class IgpuEnumeratedFirst(Check):
    id = "igpu-enumerated-first"
    title = "The GPU at HIP device 0"
    area = "amd"
    severity = Severity.MEDIUM
    platforms = (Platform.LINUX, Platform.WSL, Platform.WINDOWS)
    requires = ()  # per platform: gpu.inventory (Linux/WSL) or windows.hipinfo (Windows), checked in run

    def run(self, facts):
        key = WINDOWS_HIPINFO if facts.os == "windows" else GPU_INVENTORY
        if not facts.has(key):
            return self.skip(f"needs {words.about(key)}: {facts.why_missing(key)}")
        return self._windows(facts) if facts.os == "windows" else self._linux(facts)

    def _linux(self, facts):
        found, env = gpus(facts), facts.env
        if len(found) < 2:
            return self.skip("fewer than two AMD GPUs")
        discrete = [g for g in found if not integrated(facts, g)]
        order = visible_order(found, env, visibility_variables())
        if not discrete or not order:
            return self.skip("no discrete AMD GPU" if not discrete else "the visibility variables hide every GPU "
                             "(see gpu-visibility-env)")
        first = order[0]
        evidence = [f"{label(g)}: {real_gfx(facts, g)}{' (integrated)' if integrated(facts, g) else ''}" for g in found]
        evidence += [f"{v}={env[v]}" for v in visibility_variables()
                     if v in env]
        if not integrated(facts, first):
            return self.ok(f"HIP device 0 is the discrete {first.get('name') or 'GPU'} ({real_gfx(facts, first)})",
                           evidence=evidence)
        wanted = ",".join(str(found.index(g)) for g in discrete)
        uuids = [g["uuid"] for g in discrete if g.get("uuid")]
        message = (f"HIP device 0 is the integrated {first.get('name') or 'GPU'} ({real_gfx(facts, first)}); the "
                   f"discrete {discrete[0].get('name') or 'GPU'} is device {found.index(discrete[0])}. torch's default "
                   "'cuda' device is device 0, so work lands on the iGPU (slow, shared memory) or fails when torch "
                   "has no code for its gfx.")
        override = override_for(facts, first)
        if override and override[0] == OVERRIDE and not overrides.matches_family(override[1], real_gfx(facts, first)):
            message += (f" {OVERRIDE}={override[1]} also applies to the iGPU, whose {real_gfx(facts, first)} is not of "
                        "that family: hide the iGPU, or give the override per device (see hsa-override-gfx-version).")
        remediation = [f"Or pick the device in code: torch.device('cuda:{found.index(discrete[0])}')",
                       "Or disable the iGPU in the BIOS if no display is connected to it."]
        hide = S.alternative(
            "hide the iGPU from every ROCm program, rocminfo included, with ROCR_VISIBLE_DEVICES",
            S.set_env("ROCR_VISIBLE_DEVICES", ",".join(uuids) if len(uuids) == len(discrete) else wanted,
                      note="only the discrete GPU(s) reach the ROCm runtime"),
            why_not_first="it hides the iGPU from every ROCm program, not only from HIP ones like torch"
                          + ("; UUIDs from rocminfo stay right when the order changes" if uuids else ""))
        return self.warn(message, evidence=evidence, remediation=remediation,
                         data={"igpu": real_gfx(facts, first), "hip_visible_devices": wanted},
                         fix=[S.set_env("HIP_VISIBLE_DEVICES", wanted, note="make the discrete GPU device 0")],
                         alternatives=[hide])

    def _windows(self, facts):
        """hipInfo's order is HIP's order; remedies in PowerShell and cmd."""
        devices = facts[WINDOWS_HIPINFO].get("devices") or []
        if len(devices) < 2:
            return self.skip("fewer than two HIP devices")
        first = devices[0]
        discrete = [d for d in devices if d.get("is_integrated") is False]
        if not first.get("is_integrated") or not discrete:
            return self.ok(f"device 0 is {first.get('name')} ({first.get('gfx')})")
        visible = (facts.env.get("HIP_VISIBLE_DEVICES") or facts.env.get("CUDA_VISIBLE_DEVICES") or "").strip()
        target = discrete[0]
        evidence = [f"hipInfo device#{d['index']}: {d.get('name')} {d.get('gfx')} "
                    f"isIntegrated={int(bool(d.get('is_integrated')))}" for d in devices]
        if visible:
            evidence.append(f"HIP_VISIBLE_DEVICES/CUDA_VISIBLE_DEVICES = {visible}")
            if entries(visible)[0] == str(target["index"]):
                return self.ok(f"the iGPU enumerates first, but *_VISIBLE_DEVICES={visible} selects {target.get('name')}")
        return self.warn(
            f"HIP device 0 is the integrated {first.get('name')} ({first.get('gfx')}); the {target.get('name')} "
            f"({target.get('gfx')}) is device {target['index']}. PyTorch's default 'cuda' device is device 0, so work "
            "lands on the iGPU (slow, little memory) or fails if torch has no code for its gfx.",
            evidence=evidence,
            remediation=[
                "Or select the device in code: torch.device('cuda:%d')" % target["index"],
                "Or disable the iGPU in the BIOS / Device Manager if you do not use it for display.",
            ],
            data={"igpu": first.get("gfx"), "dgpu_index": target["index"]},
            fix=[S.set_env("HIP_VISIBLE_DEVICES", str(target["index"]), note="make the discrete GPU device 0")],
        )
