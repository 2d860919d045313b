"""Node reports and the fleet diff: what differs between nodes, so the odd node stands out (pure functions).

A *node report* is one node's diagnosis: {"kind": "rocm-doctor-node", "node": {...}, "summary": {...},
"report": <the `rocm-doctor check --json` object>, "collectives": <local results or None>}. `diff` takes a list
of them (also plain `check --json` reports, or earlier fleet reports, which are expanded to their nodes) and
returns the fleet report, in the common envelope (kind `fleet`); rocm_doctor/report/fleet_view.py renders it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Optional, Sequence

from rocm_doctor import __version__
from rocm_doctor.compare import fields
from rocm_doctor.compare.engine import (STATUS_ORDER, differences as field_differences, finding_statuses, flatten, key,
                                         status_differences)
from rocm_doctor.parsers.secret_values import mask_structure
from rocm_doctor.report.envelope import envelope

NODE_KIND = "rocm-doctor-node"
FLEET_KIND = "fleet"
FLEET_KINDS = (FLEET_KIND, "rocm-doctor-fleet")  # the second: fleet reports written before they had the envelope
NODE_SCHEMA = 1
BANDWIDTH_ODD = 0.8  # a node under 80% of the fleet median is odd


# ------------------------------------------------------------------------------------------- node side


def summarize(facts: Any, env: Mapping[str, str], extras: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The comparable facts of one node: versions, drivers, GPUs, relevant env (pure over facts and env). The fields
    are those of `rocm-doctor diff` (rocm_doctor.compare.fields), so a node and a run are read the same way."""
    from rocm_doctor.knowledge.collectives_env import relevant_env

    extras = dict(extras or {})
    summary = fields.values(facts, ("os", "kernel", "python", "torch", "torch_cuda", "torch_hip", "rocm",
                                    "driver_amdgpu"))
    summary.update(driver_nvidia=extras.pop("driver_nvidia", None), nccl=extras.pop("nccl", None))
    summary.update(fields.values(facts, ("gpu_count", "gpus")))
    summary["env"] = relevant_env(env)
    summary.update(extras)
    return summary


def node_report(report: Mapping[str, Any], summary: Mapping[str, Any], node: Mapping[str, Any],
                collectives: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    return {"kind": NODE_KIND, "schema_version": NODE_SCHEMA, "tool": {"name": "rocm-doctor", "version": __version__},
            "node": dict(node), "summary": dict(summary), "report": dict(report),
            "collectives": dict(collectives) if collectives else None}


# ------------------------------------------------------------------------------------------- the diff


def expand(inputs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Node reports from node reports, fleet reports (their nodes) and plain `check --json` reports."""
    nodes = []
    for item in inputs:
        if not isinstance(item, Mapping):
            continue
        if item.get("kind") in FLEET_KINDS:
            nodes.extend(dict(n) for n in item.get("node_reports") or [])
        elif item.get("kind") == NODE_KIND:
            nodes.append(dict(item))
        elif "findings" in item and "schema_version" in item:  # a plain check report
            platform = item.get("platform") or {}
            nodes.append(node_report(item, {"os": platform.get("os"), "kernel": platform.get("release"),
                                            "python_target": (item.get("target") or {}).get("python")},
                                     {"hostname": item.get("_name") or None}))
    return nodes


def _names(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    raw = [str((n.get("node") or {}).get("hostname") or f"node{i}") for i, n in enumerate(nodes)]
    counts = Counter(raw)
    names = []
    for i, (name, node) in enumerate(zip(raw, nodes)):
        if counts[name] > 1:
            tag = (node.get("node") or {}).get("node_rank")
            name = f"{name}[{tag if tag is not None else i}]"
        names.append(name)
    return names


def _majority(values: Sequence[Any]) -> tuple[Any, bool]:
    """(most common value, whether it is a strict majority-by-count winner)."""
    counts = Counter(map(key, values)).most_common()
    if not counts:
        return None, False
    top = counts[0]
    unique = len(counts) == 1 or counts[1][1] < top[1]
    value = next(v for v in values if key(v) == top[0])
    return value, unique


def _bandwidth(node: Mapping[str, Any]) -> dict[str, float]:
    """op -> peak busbw of the node's local collectives (GB/s)."""
    results = node.get("collectives") or {}
    peaks: dict[str, float] = {}
    for row in results.get("results") or []:
        if isinstance(row.get("busbw_gbs"), (int, float)):
            peaks[row["op"]] = max(peaks.get(row["op"], 0.0), float(row["busbw_gbs"]))
    return peaks


def diff(inputs: Iterable[Mapping[str, Any]], world: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The fleet report over node reports: fields that differ, findings that differ, bandwidth, odd nodes."""
    nodes = expand(inputs)
    names = _names(nodes)
    differing, same = field_differences([flatten(n.get("summary") or {}) for n in nodes])
    differences = []
    odd_count: Counter = Counter()
    odd_why: dict[str, list[str]] = {name: [] for name in names}
    for field, values in differing:
        majority, unique = _majority(values)
        odd = [names[i] for i, v in enumerate(values) if unique and key(v) != key(majority)]
        for name in odd:
            odd_count[name] += 1
            odd_why[name].append(f"{field}={values[names.index(name)]!r} (others: {majority!r})")
        differences.append({"field": field, "values": dict(zip(names, values)),
                            "majority": majority if unique else None, "odd": odd})

    finding_diffs = []
    for check, values in status_differences([finding_statuses(n.get("report") or {}) for n in nodes]):
        majority, unique = _majority(values)
        odd = [names[i] for i, v in enumerate(values) if unique and v != majority]
        for name in odd:
            odd_count[name] += 1
            odd_why[name].append(f"{check}: {values[names.index(name)]} (others: {majority})")
        finding_diffs.append({"check": check, "statuses": dict(zip(names, values)),
                              "majority": majority if unique else None, "odd": odd})

    bandwidth = []
    peaks = [_bandwidth(n) for n in nodes]
    for op in sorted({op for p in peaks for op in p}):
        values = {names[i]: p.get(op) for i, p in enumerate(peaks)}
        measured = sorted(v for v in values.values() if v is not None)
        median = measured[len(measured) // 2] if measured else None
        odd = [name for name, v in values.items() if v is not None and median and v < BANDWIDTH_ODD * median]
        for name in odd:
            odd_count[name] += 1
            odd_why[name].append(f"{op} busbw {values[name]:.1f} GB/s vs fleet median {median:.1f}")
        bandwidth.append({"op": op, "busbw_gbs": values, "median": median, "odd": odd})

    counts = []
    for name, node in zip(names, nodes):
        summary = Counter(f.get("status") for f in (node.get("report") or {}).get("findings") or [])
        counts.append({"node": name, **{s: summary.get(s, 0) for s in STATUS_ORDER}})

    odd_nodes = [{"node": name, "differences": odd_count[name], "why": odd_why[name]}
                 for name in sorted(odd_count, key=lambda n: (-odd_count[n], n))] if len(nodes) > 2 else []
    if len(nodes) == 2 and (differences or finding_diffs):
        odd_nodes = []  # with two nodes there is no majority: list the differences, name no culprit
    return mask_structure(envelope(  # shared by design: no secret of any node (findings, URLs, command lines) in it
        FLEET_KIND,
        nodes=[{"name": name, **(n.get("node") or {})} for name, n in zip(names, nodes)],
        differences=differences,
        finding_differences=finding_diffs,
        finding_counts=counts,
        bandwidth=bandwidth,
        odd_nodes=odd_nodes,
        world_collectives=dict(world) if world else None,
        same=same,
        node_reports=nodes,
    ))
