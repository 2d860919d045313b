"""Analysis lines for the convolution section: TFLOP/s per shape, dtype and layout against the card's peak, the
kernels and backend that ran, first calls against later ones in each fresh process, cudnn.benchmark off and on,
and on ROCm MIOpen's find mode, its database folders and what its log says it chose.

How far a dense 3x3 convolution falls below the GEMM rate of the same dtype (a slow solver: a naive kernel, a
missing library) is judged by the checks (checks/bench_judge.py). The summary goes to values["conv"].
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from rocm_doctor.gpu.bench.lines import make_line, records
from rocm_doctor.gpu.kernels.attribution import backend_of_op, library_of
from rocm_doctor.parsers.miopen_log import find_mode, parse_find_db, parse_log

if TYPE_CHECKING:
    from rocm_doctor.gpu.bench.analysis import Analysis

JUDGED_SHAPE = "3x3"  # the shape whose rate the checks judge against the GEMM rate (checks/bench_judge.py)
SLOW_KERNEL = re.compile(r"naive|slow_conv|_slow|fallback|im2col", re.I)
PASS_LABELS = {"default": "fresh process, cudnn.benchmark off (the default)",
               "default-again": "a second fresh process, benchmark off (finds what the first stored)",
               "benchmark": "fresh process, cudnn.benchmark on", "miopen-log": "fresh process with MIOpen logging"}


def _peak_key(a: Analysis, dtype: str, env: dict[str, Any]) -> str:
    """fp32 convs run as TF32 on NVIDIA Ampere and newer while cudnn.allow_tf32 is on (torch's default)."""
    if dtype == "fp32" and env.get("allow_tf32") and not a.hip and int(a.device.get("major") or 0) >= 8:
        return "tf32"
    return dtype


def _kernel_text(rec: dict[str, Any], vendor: Optional[str]) -> tuple[str, list[str]]:
    kernels = rec.get("kernels") or []
    names = [k["name"] for k in kernels]
    slow = [n for n in names if SLOW_KERNEL.search(n)]
    slow += [op for op in rec.get("ops") or [] if backend_of_op(op) == "native slow conv (fallback)"]
    if not kernels:
        return "", slow
    top = kernels[0]
    library = library_of(top["name"], vendor)
    return f"kernel {top['name'][:90]}" + (f" ({library})" if library else ""), slow


def conv(a: Analysis) -> None:
    out = a.values.setdefault("conv", {})
    env = (records(a.results, "conv", "conv_env") or [{}])[0]
    if not records(a.results, "conv"):
        return
    vendor = "amd" if a.hip else "nvidia" if a.on_gpu else None
    by_pass: dict[str, list[dict[str, Any]]] = {}
    for rec in records(a.results, "conv", "conv"):
        by_pass.setdefault(rec.get("pass_name") or "default", []).append(rec)
    for rec in records(a.results, "conv", "conv_error"):
        a.add(make_line("conv", f"conv.error.{rec.get('pass_name')}.{rec['shape']}.{rec['dtype']}.{rec['layout']}",
                        f"{rec['shape']} {rec['dtype']} {rec['layout']}", None, "TFLOP/s",
                        explanation=f"failed: {rec.get('error')}"))
    configs, naive = {}, []
    for rec in by_pass.get("default", []):
        key = f"{rec['shape']}.{rec['dtype']}.{rec['layout']}"
        peak_key = _peak_key(a, rec["dtype"], env)
        peak = a.peak(peak_key) if a.on_gpu else None
        tflops = rec.get("tflops")
        explanation, fraction = [], tflops / peak if tflops and peak else None
        kernel, slow = _kernel_text(rec, vendor)
        if slow:
            naive.append({"config": key, "names": slow})
        explanation += [x for x in (kernel, f"backend {rec.get('backend')}" if rec.get("backend") else "") if x]
        if rec.get("median_ms"):
            explanation.append(f"first call {rec['first_ms']:.2f} ms, later {rec['median_ms']:.3f} ms")
        if rec["shape"] != JUDGED_SHAPE and rec.get("gbs") and a.bandwidth_peak():
            explanation.append(f"moves at least {rec['gbs']:.0f} GB/s of {a.bandwidth_peak():.0f}")
        configs[key] = {"tflops": tflops, "fraction": fraction, "median_ms": rec.get("median_ms"),
                        "first_ms": rec.get("first_ms"), "kernel": kernel, "peak_key": peak_key}
        a.add(make_line("conv", f"conv.{key}", f"{rec['shape']} {rec['dtype']} {rec['layout']}", tflops, "TFLOP/s",
                        expected=peak, fraction=fraction, explanation="; ".join(explanation),
                        context={"config": key, "judged": rec["shape"] == JUDGED_SHAPE, "gemm_tflops": (
                            a.values.get("matmul_median_tflops") or {}).get(peak_key) if a.on_gpu else None},
                        peak_key=peak_key, dims=rec.get("dims"), kernels=rec.get("kernels"), ops=rec.get("ops"),
                        gbs=rec.get("gbs")))
    judged = {k: c for k, c in configs.items() if k.startswith(JUDGED_SHAPE + ".") and c["tflops"]}
    out.update(configs=configs, naive=naive, env=env,
               fastest=max(judged, key=lambda k: judged[k]["tflops"]) if judged else None)
    _passes(a, out, by_pass)
    _benchmark(a, out, by_pass)
    _miopen(a, out, env)


def _first_call_cost(recs: list[dict[str, Any]]) -> Optional[float]:
    """ms the first calls cost above the same calls once warm (the second call when no steady time was taken)."""
    costs = [r["first_ms"] - (r.get("median_ms") or r.get("second_ms") or 0.0) for r in recs if r.get("first_ms")]
    return sum(max(0.0, c) for c in costs) if costs else None


def _unmeasured(a: Analysis, name: Optional[str]) -> tuple[list[str], Optional[float]]:
    """The configurations a pass left out once its time budget was used, and that budget."""
    left = [r for r in records(a.results, "conv", "conv_unmeasured") if r.get("pass_name") == name]
    return [f"{r['shape']} {r['dtype']} {r['layout']}" for r in left], (left[0].get("budget_s") if left else None)




def _passes(a: Analysis, out: dict[str, Any], by_pass: dict[str, list[dict[str, Any]]]) -> None:
    cost = {}
    for rec in records(a.results, "conv", "conv_pass"):
        name = rec.get("pass_name")
        recs = by_pass.get(name, [])
        cost[name] = _first_call_cost(recs)
        left, budget = _unmeasured(a, name)
        text = f"{len(recs)} of {len(recs) + len(left)} configurations" if left else f"{len(recs)} configurations"
        text += f", torch import {rec['import_s']:.1f} s" if rec.get("import_s") else ""
        if rec.get("autograd_setup_s"):
            text += f", torch's gradient set-up {rec['autograd_setup_s']:.1f} s (before the first convolution)"
        if rec.get("state") != "ok":
            text = f"{rec.get('state')}; " + text
        worst = max(recs, key=lambda r: r.get("first_ms") or 0.0, default=None)
        if worst:
            text += f"; slowest first call {worst['first_ms']:.1f} ms ({worst['shape']} {worst['dtype']} {worst['layout']}"
            text += ", the first convolution in the process)" if worst is recs[0] else ")"
        later = sorted(max(0.0, r["first_ms"] - (r.get("median_ms") or r.get("second_ms") or 0.0))
                       for r in recs[1:] if r.get("first_ms"))
        if later:
            out.setdefault("first_call_typical_ms", {})[name] = later[len(later) // 2]
            text += f"; a new shape's first call costs {later[len(later) // 2]:.1f} ms (median)"
        if left:
            text += f"; none started after the pass's {budget:g} s budget, so not measured: {', '.join(left)}"
        label = PASS_LABELS.get(name, name) if a.on_gpu else "fresh process"  # no cuDNN or MIOpen on the CPU
        if rec.get("process") == "benchmark":
            label = label.replace("fresh process", "the benchmark's process before any other convolution")
        a.add(make_line("conv", f"conv.pass.{name}", f"first-call cost, {label}", cost[name],
                        "ms", explanation=text, state=rec.get("state"), seconds=rec.get("seconds")))
    out["first_call_ms"] = cost
    first, again = cost.get("default"), cost.get("default-again")
    if a.hip and first and again is not None:
        kept = again < 0.5 * first
        out["db_kept_results"] = kept
        a.add(make_line("conv", "conv.db.reuse", "find database across processes", again / first, "ratio",
                        explanation=(f"the second process paid {again:.0f} ms of first calls against {first:.0f} ms: "
                                     + ("MIOpen found what the first process stored" if kept else
                                        "nothing was kept, so every new process searches again"))))


def _benchmark(a: Analysis, out: dict[str, Any], by_pass: dict[str, list[dict[str, Any]]]) -> None:
    off = {f"{r['shape']}.{r['dtype']}.{r['layout']}": r for r in by_pass.get("default", []) if r.get("median_ms")}
    on = {f"{r['shape']}.{r['dtype']}.{r['layout']}": r for r in by_pass.get("benchmark", []) if r.get("median_ms")}
    common = sorted(set(off) & set(on))
    if not common:
        return
    ratios = sorted(off[k]["median_ms"] / on[k]["median_ms"] for k in common)
    median = ratios[len(ratios) // 2]
    best = max(common, key=lambda k: off[k]["median_ms"] / on[k]["median_ms"])
    extra = (_first_call_cost([on[k] for k in common]) or 0.0) - (_first_call_cost([off[k] for k in common]) or 0.0)
    left, budget = _unmeasured(a, "benchmark")
    out["benchmark"] = {"median_speedup": median, "best": best, "best_speedup": off[best]["median_ms"] / on[best]["median_ms"],
                        "extra_first_call_ms": extra, "configurations": len(common), "not_measured": left}
    search = f"its search adds {extra:.0f} ms to the first calls" if extra > 0 else "no first-call cost measured"
    if left:
        search += (f"; {len(left)} more were not measured with it on: no configuration starts after the pass's "
                   f"{budget:g} s budget, which the first calls had used")
    a.add(make_line("conv", "conv.benchmark", "cudnn.benchmark on: later calls, speed-up over off", median, "x",
                    explanation=f"median of {len(common)} configurations (range {ratios[0]:.2f}-{ratios[-1]:.2f}x, "
                                f"best {best} {out['benchmark']['best_speedup']:.2f}x); {search}"))


def _miopen(a: Analysis, out: dict[str, Any], env: dict[str, Any]) -> None:
    dbs = {r.get("when"): r.get("folders") or {} for r in records(a.results, "conv", "conv_db")}
    if not (a.hip or dbs):
        return
    mode = find_mode((env.get("env") or {}).get("MIOPEN_FIND_MODE"))
    info: dict[str, Any] = {"find_mode": mode}
    how = ("as set" if mode["set"] else "unset: MIOpen's default") + ("" if mode["valid"] else f"; {mode['note']}")
    a.add(make_line("conv", "conv.miopen.find_mode", f"MIOPEN_FIND_MODE {mode['mode']} ({mode['number']})", None, "",
                    explanation=f"{how}; on a miss {mode['on_miss']}", find_mode=mode))
    user = (dbs.get("before") or {}).get("MIOPEN_USER_DB_PATH")
    if user:
        after = (dbs.get("after") or {}).get("MIOPEN_USER_DB_PATH") or user
        records_before = sum(f.get("records") or 0 for f in user.get("files") or [])
        records_after = sum(f.get("records") or 0 for f in after.get("files") or [])
        stored = {}
        for entry in after.get("files") or []:
            stored.update(parse_find_db(entry.get("sample") or ""))
        naive = sorted(key for key, record in stored.items() if record["solutions"][0]["naive"])
        info.update(db_writable=user.get("writable"), db_path=user.get("path"), db_records_before=records_before,
                    db_records_after=records_after, db_naive_best=naive)
        state = "writable" if user.get("writable") else "NOT writable (see miopen-db-not-writable)"
        text = (f"{state}; {len(user.get('files') or [])} database files, {records_before} find records before the "
                f"passes, {records_after} after")
        if naive:
            text += f"; {len(naive)} of the {len(stored)} records read have a naive solver as the fastest ({naive[0]})"
        a.add(make_line("conv", "conv.miopen.db", f"user find database {user.get('path')}", None, "",
                        explanation=text, folders=dbs))
    log = next((r for r in records(a.results, "conv", "conv_pass") if r.get("pass_name") == "miopen-log"), None)
    if log and log.get("log") is not None:
        parsed = parse_log(log["log"])
        info["log"] = parsed
        chosen = ", ".join(f"{c['solver']} ({c.get('direction') or '?'})" for c in parsed["chosen"][:6]) or "none logged"
        parts = [f"chose {chosen}"]
        if parsed["find_mode"]:
            parts.append(f"find mode logged {parsed['find_mode']['mode']}({parsed['find_mode']['number']})")
        if parsed["naive"]:
            parts.append(("only naive solvers applicable: " if parsed["only_naive"] else "naive fallback: ")
                         + ", ".join(parsed["naive"][:3]))
        db = parsed["db"]
        if db["regenerating"] or db["stored"]:
            parts.append(f"find-db misses searched {db['regenerating']}, records stored {db['stored']}")
        if db["unreadable"] or db["networked"]:
            parts.append("database trouble: " + ", ".join(db["unreadable"] + [f"{p} on a network filesystem"
                                                                               for p in db["networked"]]))
        if parsed["errors"]:
            parts.append(f"errors: {parsed['errors'][0][:120]}")
        a.add(make_line("conv", "conv.miopen.log", f"MIOpen log of the 3x3 first calls ({parsed['miopen_lines']} lines)",
                        None, "", explanation="; ".join(parts), log_cut=log.get("log_cut")))
    out["miopen"] = info
