"""gpu.inventory: one list of AMD GPUs merged from every source, and gpu.inventory.disagreements between them.

Sources, hardware truth first: KFD sysfs and amd-smi/rocm-smi (they read the kernel's gfx_target_version), then
rocminfo and torch (they go through the HSA runtime, so HSA_OVERRIDE_GFX_VERSION changes what they report), then
PCI (presence only). CPU agents and NPUs are not GPUs. Records are joined on the KFD node, then the PCI bus, then a
device id unique on both sides, then position when both lists have the same length (PCI only onto GPUs that no
source placed on a bus, such as rocm-smi's CSV rows).
"""

from __future__ import annotations

from rocm_doctor.facts import words
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import (GPU_INVENTORY, GPU_INVENTORY_DISAGREEMENTS, GPU_PCI, KFD_NODES, ROCMINFO_AGENTS,
                                    SMI_DEVICES, TORCH_DEVICES)
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret.gpu_targets import HARDWARE_SOURCES, override_for
from rocm_doctor.parsers import gfx as gfxlib
from rocm_doctor.parsers.rocminfo import gpu_agents

REQUIRES = (GPU_PCI, KFD_NODES, ROCMINFO_AGENTS, SMI_DEVICES, TORCH_DEVICES)
SOURCE_FACTS = {"kfd": KFD_NODES, "rocminfo": ROCMINFO_AGENTS, "smi": SMI_DEVICES, "torch": TORCH_DEVICES,
                "pci": GPU_PCI}
GFX_PRIORITY = ("kfd", "amd-smi", "rocm-smi", "rocminfo", "torch")
NAME_PRIORITY = ("rocminfo", "amd-smi", "rocm-smi", "torch")


def _bus(bdf: str | None) -> str | None:
    """`0000:03:00.0` or `03:00.0` → `03:00` (bus and device; rocminfo and torch know no domain or function)."""
    if not bdf:
        return None
    parts = str(bdf).lower().split(":")
    return f"{parts[-2]}:{parts[-1].split('.')[0]}" if len(parts) >= 2 else None


def _real_uuid(uuid: str | None) -> str | None:
    return uuid if uuid and not uuid.upper().endswith("-XX") else None


def _entries(facts: Facts) -> list[tuple[str, list[dict]]]:
    """(source, [entry]) per source; an entry has the join keys and what the source says about the GPU."""
    kfd = [
        {"node": n.get("node"), "bus": _bus(n.get("bdf")), "device_id": n.get("device_id"), "gfx": n.get("gfx"),
         "bdf": n.get("bdf")}
        for n in facts.get(KFD_NODES) or [] if n.get("kind") == "gpu"
    ]
    rocminfo = [
        {"node": a.get("node"), "bus": _bus(a.get("pci_bus")), "device_id": a.get("chip_id"), "gfx": a.get("gfx"),
         "target_id": a.get("target_id"), "name": a.get("marketing_name"), "uuid": _real_uuid(a.get("uuid")),
         "igpu": a.get("is_apu")}
        for a in gpu_agents(facts.get(ROCMINFO_AGENTS) or [])
    ]
    smi_source = "smi"
    smi = []
    for d in facts.get(SMI_DEVICES) or []:
        smi_source = d.get("source", "smi")
        smi.append({"node": d.get("node_id", d.get("node")), "bus": _bus(d.get("bdf")), "device_id": d.get("device_id"),
                    "gfx": d.get("gfx"), "name": d.get("name"), "uuid": d.get("uuid"), "bdf": d.get("bdf")})
    torch = []
    for d in facts.get(TORCH_DEVICES) or []:
        arch = d.get("gcnArchName")
        if not gfxlib.base_gfx(arch):
            continue  # not a ROCm device
        bus = d.get("pci_bus_id")
        torch.append({"bus": f"{bus:02x}:{d.get('pci_device_id') or 0:02x}" if isinstance(bus, int) else None,
                      "gfx": gfxlib.base_gfx(arch), "target_id": gfxlib.target_id(arch), "name": d.get("name"),
                      "igpu": None if d.get("is_integrated") is None else bool(d.get("is_integrated"))})
    pci = [{"bus": _bus(d.get("slot")), "device_id": d.get("device_id"), "gfx": None, "bdf": d.get("slot")}
           for d in facts.get(GPU_PCI) or [] if d.get("vendor") == "amd"]
    return [("kfd", kfd), ("rocminfo", rocminfo), (smi_source, smi), ("torch", torch), ("pci", pci)]


def _match(entry: dict, records: list[dict], source: str) -> dict | None:
    free = [r for r in records if source not in r["sources"]]
    for key in ("node", "bus"):
        if entry.get(key) is not None:
            hits = [r for r in free if r.get(key) == entry[key]]
            if hits:
                return hits[0]
    if entry.get("device_id"):
        hits = [r for r in free if r.get("device_id") == entry["device_id"]]
        if len(hits) == 1:
            return hits[0]
    return None


def _merge(sources: list[tuple[str, list[dict]]]) -> list[dict]:
    records: list[dict] = []
    for source, entries in sources:
        unmatched = []
        for entry in entries:
            record = _match(entry, records, source)
            if record is None:
                unmatched.append(entry)
            else:
                _absorb(record, source, entry)
        free = [r for r in records if source not in r["sources"]]
        positional = len(entries) == len(records) and (source != "pci" or _unplaced(free, unmatched))
        for entry in unmatched:
            if positional and free:
                _absorb(free.pop(0), source, entry)
            else:
                records.append(_absorb({"sources": {}, "said": {}}, source, entry))
    return records


def _unplaced(free: list[dict], entries: list[dict]) -> bool:
    """PCI (presence only) joins by position only GPUs no source gave a bus, whose device id, when known, a PCI
    record shares: the other source listed the same GPUs without saying where. Otherwise a PCI device that is not
    joined on its bus is a GPU of its own (one the runtime does not list)."""
    ids = {e.get("device_id") for e in entries}
    return all(r.get("bus") is None and r.get("device_id") in (None, *ids) for r in free)


def _absorb(record: dict, source: str, entry: dict) -> dict:
    record["sources"][source] = entry.get("gfx")
    record["said"][source] = entry
    for key in ("node", "bus", "device_id", "bdf"):
        if record.get(key) is None and entry.get(key) is not None:
            record[key] = entry[key]
    return record


def _first(record: dict, field: str, order) -> object:
    for source in order:
        value = record["said"].get(source, {}).get(field)
        if value is not None:
            return value
    return None


def _igpu(record: dict, gfx: str | None) -> bool | None:
    votes = [e.get("igpu") for e in record["said"].values() if e.get("igpu") is not None]
    if True in votes:
        return True
    if votes:
        return False
    return True if gfx in gfxlib.INTEGRATED_TARGETS else None


def _finish(index: int, record: dict) -> dict:
    gfx = _first(record, "gfx", GFX_PRIORITY)
    targets = [e.get("target_id") for e in record["said"].values() if e.get("target_id")]
    return {
        "index": index,
        "gfx": gfx,
        "target_id": next((t for t in targets if gfxlib.base_gfx(t) == gfx), None),
        "name": _first(record, "name", NAME_PRIORITY),
        "igpu": _igpu(record, gfx),
        "device_id": record.get("device_id"),
        "uuid": _first(record, "uuid", ("rocminfo", "amd-smi", "rocm-smi")),
        "node": record.get("node"),
        "bdf": record.get("bdf"),
        "sources": dict(record["sources"]),
    }


def disagreements(inventory: list[dict], env: dict, counts: dict[str, int]) -> list[str]:
    notes = []
    for gpu in inventory:
        said = {s: g for s, g in gpu["sources"].items() if g}
        if len(set(said.values())) <= 1:
            continue
        label = f"GPU {gpu['index']}" + (f" ({gpu['name']})" if gpu["name"] else "")
        note = f"{label}: " + ", ".join(f"{source} says {gfx}" for source, gfx in said.items())
        override = override_for(env, gpu)
        hardware = next((said[s] for s in HARDWARE_SOURCES if s in said), None)
        if override and hardware:
            variable, value = override
            target = gfxlib.from_override(value)
            note += (f"; {variable}={value} is in effect, so the HSA runtime (rocminfo, torch) reports "
                     f"{target or 'an invalid target'} instead of the hardware's {hardware}")
        notes.append(note)
    if len(set(counts.values())) > 1:
        notes.append("sources list different numbers of GPUs: "
                     + ", ".join(f"{source} {count}" for source, count in counts.items()))
    return notes


def interpret(observations: Observations, facts: Facts) -> None:
    present = [key for key in SOURCE_FACTS.values() if facts.has(key)]
    if not present:
        reasons = "; ".join(f"{words.about(key)}: {facts.why_missing(key)}" for key in SOURCE_FACTS.values())
        facts.set_missing(GPU_INVENTORY, f"no GPU source was available ({reasons})")
        facts.set_missing(GPU_INVENTORY_DISAGREEMENTS, "no GPU source was available")
        return
    sources = _entries(facts)
    inventory = [_finish(i, r) for i, r in enumerate(_merge(sources))]
    counts = {
        source: len(entries)
        for source, entries in sources
        if facts.has(SOURCE_FACTS.get(source, SMI_DEVICES)) and not (source == "pci" and facts.os == "wsl")
    }  # WSL shows no PCI display devices: the GPU is behind /dev/dxg
    facts.set(GPU_INVENTORY, inventory)
    facts.set(GPU_INVENTORY_DISAGREEMENTS, disagreements(inventory, facts.env, counts))
