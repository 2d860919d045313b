"""The environment-variable catalog (data/env_catalog.json): its rows, lookups, typo matching, value grammars, the
checks that judge an environment against it, and that the code base holds no second list of variable names."""

import ast
import importlib
import json
from pathlib import Path

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Severity, Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.knowledge import env_catalog, legacy, perf_switches
from rocm_doctor.knowledge.env_catalog import CLASSES, lookup, names_of_class, nearest, role, rows
from rocm_doctor.parsers import env_grammar
from rocm_doctor.parsers.env_grammar import KINDS, is_on, problem
from rocm_doctor.interpret import run_env

REPO = Path(__file__).resolve().parents[1]
checks_env = importlib.import_module("rocm_doctor.checks.env_catalog")
gpu_env = importlib.import_module("rocm_doctor.checks.gpu_env")
visibility = importlib.import_module("rocm_doctor.checks.visibility")


def facts_of(env, **facts):
    built = Facts(Observations(env=dict(env)))
    built.set("platform.os", facts.pop("os", "linux"))
    run_env.interpret(built.observations, built)  # the environment given is the one seen
    for key, value in facts.items():
        built.set(key, value)
    return built


def by_id(check_cls, facts):
    return {f.id: f for f in run_one(check_cls, facts)}


# -- the table --------------------------------------------------------------------------------------------------


def test_every_row_is_complete_and_named_once():
    table = env_catalog.table()
    seen = set()
    for row in rows():
        assert row.name not in seen, row.name
        seen.add(row.name)
        assert row.cls in CLASSES and env_grammar.kind(row.grammar) in KINDS, row
        assert row.owner and row.effect and row.source in table["sources"], row
        if row.cls in ("logs", "debug-only") and not row.quiet:
            assert row.cost, f"{row.name}: a switch reported as left on says what it costs"
    assert len(seen) > 600


def test_the_documented_sets_the_sources_cite_are_all_there():
    must = {
        # CUDA Programming Guide table
        "CUDA_VISIBLE_DEVICES", "CUDA_MANAGED_FORCE_DEVICE_ALLOC", "CUDA_DEVICE_ORDER", "CUDA_CACHE_DISABLE",
        "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "CUDA_FORCE_PTX_JIT", "CUDA_DISABLE_PTX_JIT", "CUDA_LAUNCH_BLOCKING",
        "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_AUTO_BOOST", "CUDA_DEVICE_WAITS_ON_EXCEPTION",
        "CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT", "CUDA_FORCE_JIT", "CUDA_MODULE_LOADING",
        "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
        # PyTorch's CUDA, ProcessGroupNCCL, debugging and TunableOp pages
        "PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NVML_BASED_CUDA_CHECK",
        "TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT", "TORCH_CUDNN_V8_API_DISABLED", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
        "TORCH_NCCL_USE_COMM_NONBLOCKING", "TORCH_NCCL_AVOID_RECORD_STREAMS", "TORCH_CUDNN_V8_API_DEBUG",
        "CUBLAS_WORKSPACE_CONFIG", "CUDNN_CONV_WSCAP_DBG", "CUBLASLT_WORKSPACE_SIZE", "CUDNN_ERRATA_JSON_FILE",
        "NVIDIA_TF32_OVERRIDE", "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_NAN_CHECK", "TORCH_SHOW_CPP_STACKTRACES",
        "TORCH_CPP_LOG_LEVEL", "TORCH_LOGS", "PYTORCH_TUNABLEOP_ENABLED", "PYTORCH_TUNABLEOP_MAX_WARMUP_ITERATIONS",
        "PYTORCH_HIP_ALLOC_CONF", "TORCH_USE_CUDA_DSA", "TORCH_BLAS_PREFER_HIPBLASLT",
        # HIP, CLR, ROCr
        "HIP_VISIBLE_DEVICES", "AMD_LOG_LEVEL", "AMD_LOG_MASK", "AMD_SERIALIZE_KERNEL", "AMD_SERIALIZE_COPY",
        "HIP_LAUNCH_BLOCKING", "GPU_MAX_HW_QUEUES", "HIP_FORCE_DEV_KERNARG", "GPU_DUMP_CODE_OBJECT", "HSA_CU_MASK",
        "ROC_GLOBAL_CU_MASK", "HIP_FORCE_QUEUE_PROFILING", "HIPRTC_COMPILE_OPTIONS_APPEND", "AMD_COMGR_SAVE_TEMPS",
        "HIP_HIDDEN_FREE_MEM", "GPU_SINGLE_ALLOC_PERCENT", "AMD_DIRECT_DISPATCH", "ROCR_VISIBLE_DEVICES",
        "HSA_NO_SCRATCH_RECLAIM", "HSA_XNACK", "HSA_ENABLE_SDMA", "HSA_ENABLE_PEER_SDMA", "HSA_DISABLE_CACHE",
        "HSAKMT_DEBUG_LEVEL", "HSA_OVERRIDE_GFX_VERSION",
        # MIOpen, rocBLAS, hipBLASLt, Tensile
        "MIOPEN_ENABLE_LOGGING", "MIOPEN_LOG_LEVEL", "MIOPEN_FIND_MODE", "MIOPEN_FIND_ENFORCE",
        "MIOPEN_DEBUG_CONV_WINOGRAD", "MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F6X3", "MIOPEN_GEMM_ENFORCE_BACKEND",
        "MIOPEN_DEBUG_ATTN_SOFTMAX", "MIOPEN_DRIVER_SUBNORM_PERCENTAGE", "ROCBLAS_USE_HIPBLASLT", "ROCBLAS_LAYER",
        "ROCBLAS_CHECK_NUMERICS", "HIPBLASLT_LOG_LEVEL", "HIPBLASLT_TUNING_FILE", "TENSILE_SOLUTION_SELECTION_METHOD",
        "TENSILE_STREAMK_MAX_CUS",
        # NCCL and RCCL, from their sources
        "NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "NCCL_P2P_DISABLE", "NCCL_IB_HCA", "NCCL_ALGO", "NCCL_NVLS_ENABLE",
        "RCCL_MSCCL_ENABLE",
    }
    missing = sorted(n for n in must if lookup(n) is None)
    assert not missing


def test_patterns_resolve_and_classes_list_their_names():
    assert lookup("HSA_OVERRIDE_GFX_VERSION_2").name == "HSA_OVERRIDE_GFX_VERSION_<n>"
    assert lookup("HSA_OVERRIDE_GFX_VERSION_X") is None and lookup("NOT_A_GPU_VARIABLE") is None
    assert "TORCH_USE_CUDA_DSA" in names_of_class("build-time") and "CUDA_LAUNCH_BLOCKING" in names_of_class("debug-only")
    with pytest.raises(ValueError):
        names_of_class("noisy")
    assert role("visibility") == ("ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "HIP_VISIBLE_DEVICES",
                                  "CUDA_VISIBLE_DEVICES")
    assert role("install-root") == ("ROCM_PATH", "HIP_PATH") and role("cpu-threads")[0] == "MKL_NUM_THREADS"


def test_kernel_breaking_switches_are_marked():
    breaking = {row.name for row in rows() if row.breaks == "gpu-kernels"}
    assert {"CUDA_FORCE_PTX_JIT", "CUDA_DISABLE_PTX_JIT", "CUDA_FORCE_JIT", "CUDA_DISABLE_JIT"} <= breaking
    assert "no kernel image is available for execution on the device" in lookup("CUDA_FORCE_PTX_JIT").cost


def test_tables_that_add_data_to_variables_only_name_catalogued_ones():
    """perf_switches.json and legacy_values.json key their per-switch data by name: each name (or family) is in
    the catalog, which is the one list of names."""
    for row in perf_switches.table()["switches"]:
        pattern = row["variable"]
        if pattern.endswith("*"):
            assert any(name.startswith(pattern[:-1]) for name in env_catalog.names()), pattern
        else:
            assert lookup(pattern) is not None, pattern
    assert all(lookup(name) is not None for name in legacy.variables())


# -- typos ------------------------------------------------------------------------------------------------------

TYPO_CASES = [
    ("CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"),
    ("HSA_OVERIDE_GFX_VERSION", "HSA_OVERRIDE_GFX_VERSION"),
    ("HSA_OVERIDE_GFX_VERSION_1", "HSA_OVERRIDE_GFX_VERSION_1"),
    ("cuda_visible_devices", "CUDA_VISIBLE_DEVICES"),
    ("ROCR_VISIBLE_DEVICE", "ROCR_VISIBLE_DEVICES"),
    ("CUDA_LAUNCH_BLOKING", "CUDA_LAUNCH_BLOCKING"),
    ("MIOPEN_FIND_MOD", "MIOPEN_FIND_MODE"),
    ("HSA_XNAK", "HSA_XNACK"),
    ("PYTORCH_CUDA_ALOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"),
    # not misspellings: catalogued, other software's, numbered variants, too far
    ("CUDA_VISIBLE_DEVICES", None), ("PATH", None), ("CUDA_HOME", None), ("CUDA_PATH", None), ("ROCM_HOME", None),
    ("NVIDIA_VISIBLE_DEVICES", None), ("HIP_VISIBLE_DEVICES_2", None), ("CUDA_VISIBLE_DEV", None),
]


@pytest.mark.parametrize("name,right", TYPO_CASES, ids=[c[0] for c in TYPO_CASES])
def test_nearest_finds_the_spelling_meant(name, right):
    assert nearest(name) == right


def test_nearest_gives_no_answer_on_a_tie():
    assert lookup("NCCL_IB_TC") and lookup("NCCL_IB_SL")
    assert nearest("NCCL_IB_TL") is None  # one edit from NCCL_IB_TC and from NCCL_IB_SL


# -- grammars ---------------------------------------------------------------------------------------------------

GRAMMAR_CASES = [
    ("device-list", "0,0", 2, "device 0 is listed twice (entries 1 and 2)"),
    ("device-list", "0, 1, 0", None, "device 0 is listed twice (entries 1 and 3)"),
    ("device-list", "0,3", 2, "entry 2 names device 3, but only 2 GPU(s) exist"),
    ("device-list", "0,,1", None, "entry 2 '' is not a device index or a GPU UUID"),
    ("index-list", "GPU-8932f937", None, "entry 1 'GPU-8932f937' is not a device index"),
    ("device-list", "GPU-8932f937,1", 2, None),
    ("device-list", "1,0", 2, None),
    ("int", "eight", None, "'eight' is not an integer"),
    ("int:1..32", "64", None, "64 is outside 1..32"),
    ("int:1..", "0", None, "0 is outside 1.."),
    ("int", "0x7FFFFFFF", None, None),
    ("bool", "2", None, "'2' is not a boolean (0 or 1)"),
    ("bool", "True", None, None),
    ("enum:FASTEST_FIRST|PCI_BUS_ID", "pci_bus_id", None, None),
    ("enum:FASTEST_FIRST|PCI_BUS_ID", "PCI", None, "'PCI' is not one of FASTEST_FIRST, PCI_BUS_ID"),
    ("cublas-workspace", ":4096:8", None, None),
    ("cublas-workspace", ":4096:2:16:8", None, None),
    ("cublas-workspace", "4096:8", None, "'4096:8' is not :SIZE:COUNT (e.g. :4096:8)"),
    ("kv-list", "expandable_segments:True,oops", None, "'oops' is not a key:value pair"),
    ("gfx-version", "10.3", None, "'10.3' is not major.minor.stepping (e.g. 11.0.0)"),
    ("gfx-version", "11.0.0", None, None),
    ("path", " ", None, "the value is empty, not a path"),
    ("text", "anything, at all", None, None),
]


@pytest.mark.parametrize("grammar,value,gpus,reason", GRAMMAR_CASES, ids=[f"{c[0]}={c[1]!r}" for c in GRAMMAR_CASES])
def test_grammar_reasons_are_exact(grammar, value, gpus, reason):
    found = problem(grammar, value, gpus)
    assert (found is None) if reason is None else found.startswith(reason), found


def test_switches_are_on_by_their_own_rule():
    assert is_on("5", {"above": 4}) and not is_on("4", {"above": 4}) and is_on("verbose", {"above": 4})
    assert is_on("INFO", {"values": ["INFO", "TRACE"]}) and not is_on("WARN", {"values": ["INFO", "TRACE"]})
    assert is_on("1") and not is_on("off") and not is_on("")


# -- the checks -------------------------------------------------------------------------------------------------


def test_a_value_outside_its_grammar_is_reported_with_the_reason():
    found = by_id(checks_env.EnvValueInvalid, facts_of({"CUDA_DEVICE_MAX_CONNECTIONS": "64", "HSA_XNACK": "1",
                                                        "MIOPEN_FIND_MODE": "FASTEST"}))
    bad = found["env-value-invalid:CUDA_DEVICE_MAX_CONNECTIONS"]
    assert bad.status is Status.WARN and "64 is outside 1..32" in bad.message
    assert found["env-value-invalid:MIOPEN_FIND_MODE"].data["reason"].startswith("'FASTEST' is not one of 1, 2")
    assert "env-value-invalid:HSA_XNACK" not in found
    assert [s.summary() for s in bad.fix] == ["unset CUDA_DEVICE_MAX_CONNECTIONS (process)"]


def test_values_other_checks_judge_are_left_to_them():
    env = {"PYTORCH_CUDA_ALLOC_CONF": "garbage", "CUDA_VISIBLE_DEVICES": "0,0", "HSA_OVERRIDE_GFX_VERSION": "10.3"}
    assert [f.status for f in run_one(checks_env.EnvValueInvalid, facts_of(env))] == [Status.OK]


def test_a_build_time_variable_at_run_time_is_information():
    found = by_id(checks_env.EnvBuildTimeAtRunTime, facts_of({"TORCH_USE_CUDA_DSA": "1"}))
    finding = found["env-build-time-variable:TORCH_USE_CUDA_DSA"]
    assert finding.status is Status.INFO and "has no effect here" in finding.message and not finding.fix


def test_a_misspelt_name_gets_the_right_spelling_and_a_rename():
    [finding] = run_one(checks_env.EnvNameMisspelt, facts_of({"CUDA_VISIBLE_DEVICE": "1", "PATH": "/usr/bin"}))
    assert finding.status is Status.WARN and finding.data["spelling"] == "CUDA_VISIBLE_DEVICES"
    assert [s.summary() for s in finding.fix] == ["set CUDA_VISIBLE_DEVICES=1 (process)",
                                                  "unset CUDA_VISIBLE_DEVICE (process)"]


def test_a_misspelling_beside_the_right_name_only_removes_the_wrong_one():
    [finding] = run_one(checks_env.EnvNameMisspelt, facts_of({"HSA_OVERIDE_GFX_VERSION": "10.3.0",
                                                              "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}))
    assert "that value is the one in effect" in finding.message
    assert [s.summary() for s in finding.fix] == ["unset HSA_OVERIDE_GFX_VERSION (process)"]


def test_case_is_no_misspelling_on_windows():
    env = {"cuda_visible_devices": "0"}
    assert [f.status for f in run_one(checks_env.EnvNameMisspelt, facts_of(env, os="windows"))] == [Status.OK]
    assert run_one(checks_env.EnvNameMisspelt, facts_of(env))[0].status is Status.WARN


def test_a_ptx_jit_switch_is_named_as_breaking_kernels():
    [finding] = run_one(gpu_env.GpuLibraryLogging, facts_of({"CUDA_FORCE_PTX_JIT": "1"}))
    assert finding.status is Status.WARN and finding.severity is Severity.HIGH
    assert finding.data == {"variable": "CUDA_FORCE_PTX_JIT", "value": "1", "library": "CUDA driver",
                            "class": "debug-only", "breaks": "gpu-kernels"}
    assert "no kernel image is available for execution on the device" in finding.message


@pytest.mark.parametrize("env", [{"CUDA_FORCE_PTX_JIT": "0"}, {"CUBLASLT_LOG_FILE": "/tmp/x"},
                                 {"NCCL_DEBUG": "WARN"}, {"TORCH_SHOW_CPP_STACKTRACES": "1"}])
def test_switches_that_are_off_or_cost_nothing_are_not_reported(env):
    assert [f.status for f in run_one(gpu_env.GpuLibraryLogging, facts_of(env))] == [Status.OK]


def test_debug_switches_of_every_library_are_reported_with_their_cost():
    found = by_id(gpu_env.GpuLibraryLogging, facts_of({"NCCL_DEBUG": "INFO", "HSA_DISABLE_CACHE": "1",
                                                       "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}))
    assert "L2" in found["gpu-library-logging-enabled:HSA_DISABLE_CACHE"].message
    assert "cudaMalloc" in found["gpu-library-logging-enabled:PYTORCH_NO_CUDA_MEMORY_CACHING"].message
    assert found["gpu-library-logging-enabled:NCCL_DEBUG"].status is Status.WARN


NVIDIA_ONE = {"gpu.pci": [{"vendor": "nvidia", "vendor_id": "0x10de", "device_id": "0x2335", "source": "sysfs"}]}


def test_a_repeated_visibility_index_fails():
    [finding] = run_one(visibility.GpuVisibilityEnv, facts_of({"CUDA_VISIBLE_DEVICES": "0,0"}, **NVIDIA_ONE))
    assert finding.status is Status.FAIL and "names device 0 twice (entries 1 and 2)" in finding.message
    assert finding.data["repeated"] == "0" and "CUDA_VISIBLE_DEVICES=0." in finding.remediation[0]


def test_a_plain_visibility_selection_stays_information():
    [finding] = run_one(visibility.GpuVisibilityEnv, facts_of({"CUDA_VISIBLE_DEVICES": "0"}, **NVIDIA_ONE))
    assert finding.status is Status.INFO


# -- one list ---------------------------------------------------------------------------------------------------


def _name_lists(path: Path, root: Path = REPO):
    """Literal tuples, lists and sets in a module holding two or more catalogued variable names."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str) and lookup(e.value) is not None]
            if len(names) >= 2:
                yield f"{path.relative_to(root)}:{node.lineno}: {names}"


def test_the_code_base_holds_no_second_list_of_variable_names():
    """Any literal collection of two or more catalogued names in rocm_doctor/ or checks/ is a second list: read
    names_of_class(), role() or lookup() instead. Per-name data (a dict keyed by a name, a rule row naming one
    variable) is no list: it adds data to a catalogued name, as perf_switches.json does."""
    found = [hit for root in ("rocm_doctor", "checks") for path in sorted((REPO / root).rglob("*.py"))
             for hit in _name_lists(path)]
    assert not found, "\n".join(found)


def test_the_scan_sees_a_second_list(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('VIS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")\nONE = ("CUDA_VISIBLE_DEVICES", 1)\n')
    assert [hit.split(":")[1] for hit in _name_lists(module, tmp_path)] == ["1"]


def test_the_catalog_file_is_the_shipped_data():
    data = json.loads((REPO / "data" / "env_catalog.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in data["variables"]] == [row.name for row in rows()]


def test_per_name_data_in_code_names_catalogued_variables():
    """Data keyed by a variable's name beside the code that uses it (the logging the kernels child turns on, the
    MIOpen folders' defaults, the collective transports' rules) adds to catalogued names, never new ones."""
    from rocm_doctor.knowledge import collectives_env as envinfo
    from rocm_doctor.gpu.kernels import liblogs
    from rocm_doctor.probes import miopen_dirs

    for name in {**liblogs.AMD_LOG_ENV, **liblogs.NVIDIA_LOG_ENV}:
        assert lookup(name) is not None and lookup(name).cls in ("logs", "tunes", "paths"), name
    assert all(lookup(name).cls == "paths" for name in miopen_dirs.VARIABLES)
    assert all(lookup(rule[0]) is not None for rule in envinfo._TRANSPORT_RULES)
