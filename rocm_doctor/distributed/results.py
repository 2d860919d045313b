"""Turn what every rank printed into the `collectives.results` fact (pure: rank dicts in, one dict out).

The same function serves the local stage (the parent holds every rank) and the fleet (rank 0 gathers each node's
rank dicts over gloo), so a fleet's world collectives read exactly like a single machine's.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping, Optional, Sequence

from rocm_doctor.parsers.collectives_formulas import algbw_gbs, bus_factor, human_bytes

SCHEMA = 1
HANG_WORDS = ("timed out", "timeout", "watchdog", "deadline")


def _records(rank: Mapping[str, Any], kind: str) -> list[dict]:
    return [r for r in rank.get("records") or [] if r.get("coll") == kind]


def _first(ranks: Sequence[Mapping[str, Any]], kind: str) -> dict:
    for rank in ranks:
        found = _records(rank, kind)
        if found:
            return found[0]
    return {}


def position(rank: Mapping[str, Any]) -> dict[str, Any]:
    """Where a rank was when it stopped: the last collective it began and had not finished, else its last record."""
    records = rank.get("records") or []
    open_begin = None
    for record in records:
        kind = record.get("coll")
        if kind == "begin":
            open_begin = record
        elif kind in ("result", "random_check", "ready"):
            open_begin = None
    steps = sum(1 for r in records if r.get("coll") == "begin")
    last = records[-1] if records else {}
    if open_begin is not None:
        return {"in": True, "op": open_begin.get("op"), "bytes": open_begin.get("bytes"),
                "phase": open_begin.get("phase"), "steps": steps,
                "text": f"in {open_begin.get('op')} of {human_bytes(open_begin.get('bytes') or 0)}"
                        f" ({open_begin.get('phase')})"}
    text = f"after '{last.get('coll')}'" if last else "before printing anything (starting up)"
    if last.get("coll") == "fault":
        text = (f"stopped before {last.get('op')} of {human_bytes(last.get('bytes') or 0)}"
                f" (test fault)")
    return {"in": False, "op": last.get("op"), "bytes": last.get("bytes"), "phase": None, "steps": steps,
            "text": text}


def describe_hang(ranks: Sequence[Mapping[str, Any]], reason: str) -> dict[str, Any]:
    """What was running when the run stopped making progress, per rank, and which ranks lagged behind."""
    where = {int(r["rank"]): position(r) for r in ranks}
    inside = {k: v for k, v in where.items() if v["in"]}
    most = max((v["steps"] for v in where.values()), default=0)
    laggards = sorted(k for k, v in where.items() if v["steps"] < most or not v["in"]) if inside else []
    op = nbytes = phase = None
    if inside:
        # the collective the most advanced ranks were waiting in
        lead = max(inside.items(), key=lambda kv: kv[1]["steps"])[1]
        op, nbytes, phase = lead["op"], lead["bytes"], lead["phase"]
    waiting = sorted(k for k, v in inside.items() if (v["op"], v["bytes"], v["phase"]) == (op, nbytes, phase))
    if op:
        summary = f"{op} of {human_bytes(nbytes or 0)} ({phase}) did not complete"
        if waiting:
            summary += f": rank{'s' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))} waited in it"
        behind = [k for k in laggards if k not in waiting]
        if behind:
            summary += "; " + "; ".join(f"rank {k} {where[k]['text']}" for k in behind)
    else:
        summary = "no collective was running: " + "; ".join(f"rank {k} {v['text']}" for k, v in sorted(where.items()))
    return {"op": op, "bytes": nbytes, "phase": phase, "waiting_ranks": waiting,
            "lagging_ranks": [k for k in laggards if k not in waiting],
            "ranks": {str(k): v["text"] for k, v in sorted(where.items())}, "reason": reason, "summary": summary}


def assemble(
    ranks: Sequence[Mapping[str, Any]],
    *,
    world_size: int,
    device: str,
    backend: str,
    watchdog: Optional[str] = None,
    watchdog_kind: Optional[str] = None,
    probe: Optional[Mapping[str, Any]] = None,
    env: Optional[Mapping[str, str]] = None,
    plan: Optional[Mapping[str, Any]] = None,
    seconds: Optional[float] = None,
    scope: str = "local",
) -> dict[str, Any]:
    ranks = sorted(ranks, key=lambda r: int(r.get("rank", 0)))
    imported = _first(ranks, "import")
    devices = [{"rank": int(r["rank"]), **{k: v for k, v in d.items() if k != "coll"}}
               for r in ranks for d in _records(r, "device")[:1]]
    hosts = {int(r["rank"]): s.get("host") for r in ranks for s in _records(r, "start")[:1]}

    results = _join_results(ranks, world_size)
    random = _join_random(ranks)
    errors = []
    for rank in ranks:
        for record in _records(rank, "error"):
            where = position(rank)
            errors.append({"rank": int(rank["rank"]), "op": where.get("op"), "bytes": where.get("bytes"),
                           "error": record.get("error"), "traceback": record.get("traceback")})
        if rank.get("state") in ("crashed", "not-run") and not _records(rank, "error"):
            errors.append({"rank": int(rank["rank"]), "op": position(rank).get("op"),
                           "bytes": position(rank).get("bytes"), "error": rank.get("detail"),
                           "stderr_tail": rank.get("stderr_tail")})

    timed_out_errors = [e for e in errors if any(w in str(e.get("error") or "").lower() for w in HANG_WORDS)]
    hang = None
    if watchdog_kind in ("progress", "total", "startup") or timed_out_errors:
        reason = watchdog or "; ".join(f"rank {e['rank']}: {e['error']}" for e in timed_out_errors[:3])
        hang = describe_hang(ranks, reason)
        hang["watchdog"] = watchdog_kind or "collective timeout"
    if hang:
        state, detail = "hung", hang["summary"]
    elif errors or watchdog_kind == "failure":
        state = "failed"
        detail = "; ".join(f"rank {e['rank']}: {e['error']}" for e in errors[:3]) or (watchdog or "a rank failed")
    elif not ranks or any(r.get("state") != "ok" for r in ranks):
        state, detail = "failed", "not every rank completed"
    else:
        state, detail = "ok", "every rank completed"

    return {
        "schema": SCHEMA,
        "ran": True,
        "scope": scope,
        "state": state,
        "detail": detail,
        "device": device,
        "backend": backend,
        "world_size": world_size,
        "vendor": imported.get("vendor") or (probe or {}).get("vendor"),
        "torch": imported.get("torch"),
        "torch_cuda": imported.get("cuda"),
        "torch_hip": imported.get("hip"),
        "nccl_version": imported.get("nccl") if backend == "nccl" else None,
        "devices": devices,
        "hosts": {str(k): v for k, v in sorted(hosts.items())},
        "timing": "host clock around back-to-back launches after warm-up, one synchronize (nccl-tests default); "
                  "time = mean over ranks; algbw = S / t; busbw = algbw x factor (nccl-tests PERFORMANCE.md)",
        "plan": dict(plan or {}),
        "results": results,
        "random_check": random,
        "hang": hang,
        "errors": errors,
        "watchdog": watchdog,
        "peers": (probe or {}).get("peers"),
        "env": dict(env or {}),
        "ranks": [{k: v for k, v in r.items() if k != "records"} | {"position": position(r)["text"]} for r in ranks],
        "seconds": seconds,
    }


def _join_results(ranks: Sequence[Mapping[str, Any]], world_size: int) -> list[dict[str, Any]]:
    by_key: dict[tuple, dict[int, dict]] = {}
    order: list[tuple] = []
    for rank in ranks:
        for record in _records(rank, "result"):
            key = (record.get("op"), record.get("bytes"))
            if key not in by_key:
                by_key[key] = {}
                order.append(key)
            by_key[key][int(rank["rank"])] = record
    rows = []
    for key in order:
        per_rank = by_key[key]
        op, nbytes = key
        times = [r["time_s"] for r in per_rank.values() if isinstance(r.get("time_s"), (int, float))]
        mean = statistics.fmean(times) if times else None
        alg = algbw_gbs(nbytes, mean) if mean else None
        wrong = sorted(k for k, r in per_rank.items() if r.get("correct") is False)
        chunks = sorted({c for r in per_rank.values() for c in r.get("bad_chunks") or []})
        complete = len(per_rank) == world_size
        rows.append({
            "op": op,
            "bytes": nbytes,
            "size": human_bytes(nbytes),
            "elements": next(iter(per_rank.values())).get("elements"),
            "dtype": next(iter(per_rank.values())).get("dtype"),
            "iters": next(iter(per_rank.values())).get("iters"),
            "ranks_reported": sorted(per_rank),
            "time_us": round(mean * 1e6, 3) if mean else None,
            "time_us_max": round(max(times) * 1e6, 3) if times else None,
            "algbw_gbs": _sig(alg),
            "busbw_gbs": _sig(alg * bus_factor(op, world_size)) if alg is not None else None,
            "correct": (not wrong) if complete else (False if wrong else None),
            "ranks_wrong": wrong,
            "bad_source_ranks": chunks,
            "max_err": max((r.get("max_err") or 0.0) for r in per_rank.values()),
        })
    return rows


def _sig(value: Optional[float], digits: int = 6) -> Optional[float]:
    return None if value is None else float(f"{value:.{digits}g}")


def _join_random(ranks: Sequence[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    records = {int(r["rank"]): rec for r in ranks for rec in _records(r, "random_check")[:1]}
    if not records:
        return None
    first = next(iter(records.values()))
    wrong = sorted(k for k, r in records.items() if not r.get("correct"))
    return {"op": first.get("op"), "bytes": first.get("bytes"), "size": human_bytes(first.get("bytes") or 0),
            "seed": first.get("seed"), "correct": not wrong, "ranks_wrong": wrong,
            "max_abs_err": max(r.get("max_abs_err") or 0.0 for r in records.values()),
            "tolerance": first.get("tolerance"), "ranks_reported": sorted(records)}


def peers_from_probe(records: Iterable[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """The peer-access matrix and per-pair copy bandwidth from the probe child's records."""
    records = list(records)
    matrix = next((r.get("matrix") for r in records if r.get("coll") == "peer_matrix"), None)
    copies = [{k: v for k, v in r.items() if k not in ("coll", "rank")} for r in records if r.get("coll") == "peer_copy"]
    if matrix is None and not copies:
        return None
    started = [r for r in records if r.get("coll") == "peer_begin"]
    unfinished = None
    if len(started) > len(copies):
        last = started[-1]
        unfinished = {"src": last.get("src"), "dst": last.get("dst"), "bytes": last.get("bytes")}
    return {"matrix": matrix, "copies": copies, "unfinished": unfinished,
            "convention": "bytes copied once / time (unidirectional, as nvbandwidth's memcpy tests count them)"}


def summary_lines(results: Mapping[str, Any]) -> list[str]:
    """Plain text table of the measured sizes (for evidence, the bench render and docs)."""
    lines = []
    for row in results.get("results") or []:
        ok = {True: "ok", False: "WRONG", None: "?"}[row.get("correct")]
        time_us = f"{row['time_us']:.1f} us" if row.get("time_us") is not None else "-"
        alg = _gbs(row.get("algbw_gbs"))
        bus = _gbs(row.get("busbw_gbs"))
        lines.append(f"{row['op']:<11} {row['size']:>9}  {time_us:>12}  algbw {alg:>8} GB/s  busbw {bus:>8} GB/s  {ok}")
    return lines


def _gbs(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value >= 1 else f"{value:.3g}"
