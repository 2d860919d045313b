"""The local collectives stage: one rank per GPU of this machine, children of the target interpreter.

`run_local(python, LocalOptions(...))` returns the `collectives.results` fact: first a probe child (torch, GPUs,
peer-access matrix and per-pair copy bandwidth), then one child per rank over the size sweep (see
`_collectives_child.py`), all under the watchdogs of `launch`. Never raises for what the children do.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from rocm_doctor.distributed import launch as launcher
from rocm_doctor.knowledge.collectives_env import relevant_env
from rocm_doctor.distributed.results import SCHEMA, assemble, peers_from_probe
from rocm_doctor.engine.child import run_child

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
OPS = ["all_reduce", "all_gather", "broadcast"]

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # device -> preset -> plan
    "cuda": {
        "full": {"sizes": [KiB * 4 ** i for i in range(11)], "warmup": 5, "iters": 20,
                 "random_check_bytes": 16 * MiB, "peer_bytes": 256 * MiB, "peer_iters": 10},  # 1 KiB .. 1 GiB
        "quick": {"sizes": [KiB, 64 * KiB, MiB, 16 * MiB, 256 * MiB], "warmup": 3, "iters": 10,
                  "random_check_bytes": 4 * MiB, "peer_bytes": 64 * MiB, "peer_iters": 5},
        "tiny": {"sizes": [KiB, 64 * KiB], "warmup": 1, "iters": 3, "random_check_bytes": 64 * KiB,
                 "peer_bytes": MiB, "peer_iters": 2},
    },
    "cpu": {
        "full": {"sizes": [KiB, 16 * KiB, 256 * KiB], "warmup": 2, "iters": 5, "random_check_bytes": 64 * KiB},
        "quick": {"sizes": [KiB, 64 * KiB], "warmup": 1, "iters": 3, "random_check_bytes": 16 * KiB},
        "tiny": {"sizes": [KiB, 4 * KiB], "warmup": 1, "iters": 2, "random_check_bytes": 4 * KiB},
    },
}


@dataclass
class LocalOptions:
    device: str = "auto"  # auto | cuda | cpu ("cuda" is also the ROCm/HIP GPU)
    world_size: Optional[int] = None  # default: every GPU torch sees; 2 on CPU
    preset: str = "full"
    peers: bool = True
    watchdogs: launcher.Watchdogs = field(default_factory=launcher.Watchdogs)
    probe_timeout_s: float = 300.0
    env: Optional[Mapping[str, str]] = None
    sizes: Optional[list[int]] = None  # overrides the preset's sizes
    on_record: Optional[Callable[[dict], None]] = None


def not_run(reason: str, **extra: Any) -> dict[str, Any]:
    return {"schema": SCHEMA, "ran": False, "state": "not-run", "detail": reason, "results": [], **extra}


def plan_for(device: str, preset: str, sizes: Optional[list[int]] = None) -> dict[str, Any]:
    plan = dict(PRESETS["cuda" if device == "cuda" else "cpu"].get(preset) or PRESETS["cpu"]["tiny"])
    if sizes:
        plan["sizes"] = list(sizes)
    plan["ops"] = list(OPS)
    plan["preset"] = preset
    return plan


def probe(python: str, options: LocalOptions, env: Mapping[str, str], plan: Mapping[str, Any]) -> dict[str, Any]:
    """Run the probe child: torch, vendor, GPUs and (for 2+ GPUs) the peer matrix and copies."""
    payload = {"mode": "probe", "peers": options.peers and options.device != "cpu",
               "peer_bytes": plan.get("peer_bytes", 64 * MiB), "peer_iters": plan.get("peer_iters", 5)}
    run = run_child(python, launcher.CHILD, payload, timeout=options.probe_timeout_s, env=env, marker="coll")
    imported = next((r for r in run.records if r.get("coll") == "import"), {})
    devices = next((r for r in run.records if r.get("coll") == "devices"), {})
    error = next((r.get("error") for r in run.records if r.get("coll") == "error"), None)
    return {"state": run.state, "detail": error or run.detail, "vendor": imported.get("vendor"),
            "torch": imported.get("torch"), "nccl": imported.get("nccl"), "available": devices.get("available"),
            "count": devices.get("count") or 0, "devices": devices.get("devices") or [],
            "backends": devices.get("backends") or {}, "peers": peers_from_probe(run.records),
            "imported": bool(imported), "stderr_tail": run.stderr_tail}


def run_local(python: str, options: Optional[LocalOptions] = None) -> dict[str, Any]:
    options = options or LocalOptions()
    started = time.monotonic()
    env = dict(os.environ if options.env is None else options.env)
    wanted = options.device
    if wanted == "cpu":  # no GPU to probe: the ranks report torch themselves (saves one torch import)
        info = {"state": "skipped", "detail": "CPU run", "imported": True, "available": False, "count": 0,
                "devices": [], "backends": {"gloo": True}, "peers": None, "vendor": None}
    else:
        info = probe(python, options, env, plan_for("cuda", options.preset, options.sizes))
    base = {"probe": {k: v for k, v in info.items() if k != "peers"}, "peers": info["peers"],
            "env": relevant_env(env)}
    if not info["imported"]:
        return not_run(f"torch could not be imported in {python}: {info['detail']}", **base)
    count = int(info["count"])
    if wanted == "auto":
        wanted = "cuda" if info["available"] and count >= 2 else None
        if wanted is None:
            reason = ("only one GPU is visible: there is nothing to run collectives across" if count == 1
                      else "torch sees no GPU (use `rocm-doctor bench --collectives --device cpu` to test gloo on CPU)")
            return not_run(reason, **base)
    if wanted == "cuda":
        if count < 2:
            return not_run(f"collectives on GPUs need at least two GPUs; torch sees {count}", **base)
        backend = "nccl"
        if not info["backends"].get("nccl"):
            return not_run("this torch has no NCCL/RCCL backend (torch.distributed.is_nccl_available() is False)",
                           **base)
        world = min(options.world_size or count, count)
    else:
        backend = "gloo"
        if not info["backends"].get("gloo"):
            return not_run("this torch has no gloo backend", **base)
        world = options.world_size or 2
    if info["state"] == "hung" and wanted == "cuda":
        base["probe"]["note"] = "the peer-copy probe hung; collectives were still attempted"

    plan = plan_for(wanted, options.preset, options.sizes)
    payload = {"mode": "rank", "device": wanted, "backend": backend, "ops": plan["ops"], "sizes": plan["sizes"],
               "warmup": plan["warmup"], "iters": plan["iters"], "random_check_bytes": plan.get("random_check_bytes"),
               "seed": random.randrange(1, 2 ** 31),
               "pg_timeout_s": max(30.0, options.watchdogs.op_s * 4)}
    port = launcher.free_port()
    outcome = launcher.launch(python, payload, launcher.local_rank_envs(world, port), env=env,
                              watchdogs=options.watchdogs, on_record=options.on_record)
    results = assemble([r.to_dict() for r in outcome.ranks], world_size=world, device=wanted, backend=backend,
                       watchdog=outcome.watchdog, watchdog_kind=outcome.watchdog_kind, probe=info, env=base["env"],
                       plan={k: v for k, v in plan.items()}, seconds=round(time.monotonic() - started, 3))
    results["probe"] = base["probe"]
    return results
