"""KFD topology sysfs (`/sys/class/kfd/kfd/topology/nodes/N/properties`) → one node description. Pure; never raises.

The properties file is `name value` pairs, one per line, all integers. The KFD view is the hardware truth on
Linux: it is not affected by HSA_OVERRIDE_GFX_VERSION, unlike rocminfo and torch.
"""

from __future__ import annotations

from rocm_doctor.parsers import gfx as gfxlib


def parse_properties(text: str | None) -> dict[str, int]:
    """`gfx_target_version 100302` lines → {"gfx_target_version": 100302, ...}; lines that are not pairs are skipped."""
    values: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _hex(value) -> str | None:
    return f"0x{value:04x}" if isinstance(value, int) and value > 0 else None


def describe_node(node_id, properties_text: str | None, name_text: str | None = None) -> dict:
    """{node, kind: cpu|gpu|unknown, gfx, gfx_target_version, device_id, vendor_id, simd_count, cu_count, bdf, ...}.

    A node with SIMDs is a GPU (an APU's CPU cores appear on a node of their own); gfx_target_version 0 is a CPU.
    """
    props = parse_properties(properties_text)
    simd = props.get("simd_count")
    location = props.get("location_id")
    per_cu = props.get("simd_per_cu")
    kind = "unknown" if simd is None else ("gpu" if simd > 0 else "cpu")
    return {
        "node": int(node_id) if str(node_id).isdigit() else node_id,
        "kind": kind,
        "name": (name_text or "").strip() or None,
        "gfx": gfxlib.from_kfd_version(props.get("gfx_target_version")),
        "gfx_target_version": props.get("gfx_target_version"),
        "device_id": _hex(props.get("device_id")),
        "vendor_id": _hex(props.get("vendor_id")),
        "simd_count": simd,
        "cu_count": simd // per_cu if simd and per_cu else None,
        "cpu_cores_count": props.get("cpu_cores_count"),
        "drm_render_minor": props.get("drm_render_minor"),
        "unique_id": props.get("unique_id"),
        "bdf": (f"{props.get('domain', 0):04x}:{location >> 8:02x}:{(location >> 3) & 0x1f:02x}.{location & 7}"
                if location else None),
        "local_mem_size": props.get("local_mem_size"),
        "properties": props,
    }
