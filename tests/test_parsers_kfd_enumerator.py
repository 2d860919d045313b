"""KFD sysfs node properties, rocm_agent_enumerator and amdgpu-arch output."""

from rocm_doctor.parsers.agent_enumerator import parse_target_lines
from rocm_doctor.parsers.kfd_sysfs import describe_node, parse_properties

GPU_NODE = """cpu_cores_count 0
simd_count 64
mem_banks_count 1
gfx_target_version 100302
vendor_id 4098
device_id 29695
location_id 3072
domain 0
drm_render_minor 128
simd_per_cu 2
unique_id 3907510656470549549
"""
CPU_NODE = "cpu_cores_count 12\nsimd_count 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\n"


def test_gpu_node():
    node = describe_node("1", GPU_NODE, "ip discovery\n")
    assert (node["node"], node["kind"], node["gfx"], node["device_id"]) == (1, "gpu", "gfx1032", "0x73ff")
    assert (node["vendor_id"], node["cu_count"], node["drm_render_minor"]) == ("0x1002", 32, 128)
    assert node["bdf"] == "0000:0c:00.0" and node["name"] == "ip discovery"


def test_cpu_node():
    node = describe_node("0", CPU_NODE)
    assert (node["kind"], node["gfx"], node["device_id"], node["cpu_cores_count"]) == ("cpu", None, None, 12)


def test_properties_tolerate_noise():
    assert parse_properties("a 1\nbroken\nb x\n c  -2 \n\n") == {"a": 1, "c": -2}
    assert describe_node("7", None)["kind"] == "unknown"


def test_agent_enumerator_cpu_and_gpus():
    result = parse_target_lines("gfx000\ngfx1030\ngfx90c\ngfx1030\n")
    assert result["gpus"] == ["gfx1030", "gfx90c", "gfx1030"] and result["cpu_agents"] == 1


def test_amdgpu_arch_target_ids_and_errors():
    result = parse_target_lines("gfx942:sramecc+:xnack-\nFailed to 'hsa_init' (HSA_STATUS_ERROR_OUT_OF_RESOURCES)\n")
    assert result["gpus"] == ["gfx942"] and result["target_ids"] == ["gfx942:sramecc+:xnack-"]
    assert result["errors"] == ["Failed to 'hsa_init' (HSA_STATUS_ERROR_OUT_OF_RESOURCES)"]
