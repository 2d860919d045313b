"""GPU library environment checks, data-driven: logging switches, MIOpen folders, caching-allocator config."""

import importlib
import os

import pytest

from rocm_doctor.engine.engine import run_one
from rocm_doctor.engine.model import Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import amd_derived, run_env
from rocm_doctor.probes import miopen_dirs

gpu_env = importlib.import_module("rocm_doctor.checks.gpu_env")


def facts_of(env=None, probes=None, flavour="rocm", os_name="linux"):
    facts = Facts(Observations(env=dict(env or {}), probes=dict(probes or {})))
    facts.set("platform.os", os_name)
    amd_derived.interpret(facts.observations, facts)  # miopen.dirs from the probe value
    run_env.interpret(facts.observations, facts)  # the environment given is the one seen
    if flavour:
        facts.set("torch.flavour", flavour)
    return facts


def statuses(check_cls, facts):
    return {f.id: f for f in run_one(check_cls, facts)}


# -- logging ---------------------------------------------------------------------------------------------------

LOGGING_CASES = [
    ({"MIOPEN_ENABLE_LOGGING": "1"}, ["gpu-library-logging-enabled:MIOPEN_ENABLE_LOGGING"]),
    ({"MIOPEN_LOG_LEVEL": "6"}, ["gpu-library-logging-enabled:MIOPEN_LOG_LEVEL"]),
    ({"MIOPEN_LOG_LEVEL": "4"}, []),
    ({"MIOPEN_LOG_LEVEL": "3", "MIOPEN_ENABLE_LOGGING": "0"}, []),
    ({"ROCBLAS_LAYER": "2"}, ["gpu-library-logging-enabled:ROCBLAS_LAYER"]),
    ({"ROCBLAS_LAYER": "0"}, []),
    ({"HIPBLASLT_LOG_LEVEL": "2", "AMD_LOG_LEVEL": "3"},
     ["gpu-library-logging-enabled:AMD_LOG_LEVEL", "gpu-library-logging-enabled:HIPBLASLT_LOG_LEVEL"]),
    ({"AMD_LOG_LEVEL": "0"}, []),
    ({"CUBLAS_LOGINFO_DBG": "1", "CUBLAS_LOGDEST_DBG": "stderr"}, ["gpu-library-logging-enabled:CUBLAS_LOGINFO_DBG"]),
    ({"CUBLASLT_LOG_LEVEL": "5"}, ["gpu-library-logging-enabled:CUBLASLT_LOG_LEVEL"]),
    ({"CUDNN_LOGLEVEL_DBG": "2"}, ["gpu-library-logging-enabled:CUDNN_LOGLEVEL_DBG"]),
    ({"CUDNN_LOGLEVEL_DBG": "0"}, []),
    ({"CUDA_LAUNCH_BLOCKING": "1"}, ["gpu-library-logging-enabled:CUDA_LAUNCH_BLOCKING"]),
    ({"CUDA_LAUNCH_BLOCKING": "0", "AMD_SERIALIZE_KERNEL": "3"}, ["gpu-library-logging-enabled:AMD_SERIALIZE_KERNEL"]),
    ({"MIOPEN_LOG_LEVEL": "verbose"}, ["gpu-library-logging-enabled:MIOPEN_LOG_LEVEL"]),
]


@pytest.mark.parametrize("env,warned", LOGGING_CASES, ids=[",".join(sorted(e)) + "=" + str(len(w)) for e, w in LOGGING_CASES])
def test_logging_switches(env, warned):
    found = statuses(gpu_env.GpuLibraryLogging, facts_of(env))
    bad = sorted(k for k, f in found.items() if f.status is Status.WARN)
    assert bad == sorted(warned)
    if not warned:
        assert [f.status for f in found.values()] == [Status.OK]


def test_logging_remediation_matches_the_shell():
    [linux] = run_one(gpu_env.GpuLibraryLogging, facts_of({"AMD_LOG_LEVEL": "4"}))
    [windows] = run_one(gpu_env.GpuLibraryLogging, facts_of({"AMD_LOG_LEVEL": "4"}, os_name="windows"))
    from rocm_doctor.report.diagnosis_view import commands

    assert [s.summary() for s in linux.fix] == ["unset AMD_LOG_LEVEL (process)"] == [s.summary() for s in windows.fix]
    assert commands(linux.fix[0], "bash") == ["unset AMD_LOG_LEVEL"]
    assert "Remove-Item" in commands(windows.fix[0], "powershell")[0]


# -- allocator config ------------------------------------------------------------------------------------------

ALLOC_CASES = [
    ("expandable_segments:True", "ok", None),
    ("expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.6", "ok", None),
    ("backend:cudaMallocAsync", "ok", None),
    ("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", "ok", None),
    ("roundup_power2_divisions:4", "ok", None),
    ("pinned_use_cuda_host_register:True,pinned_num_register_threads:8", "ok", None),
    ("release_lock_on_hipmalloc:False", "ok", None),
    (" expandable_segments : True ", "ok", None),
    ("expandable_segments:maybe", "fail", "Expected a single True/False argument for expandable_segments"),
    ("expandable_segments:true", "fail", "Expected a single True/False argument for expandable_segments"),
    ("garbage_collection_threshold:1.5", "fail", "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"),
    ("garbage_collection_threshold:abc", "fail", "garbage_collection_threshold needs a number"),
    ("max_split_size_mb:10", "fail", "CachingAllocator option max_split_size_mb too small, must be >= 20"),
    ("max_split_size_mb:lots", "fail", "max_split_size_mb needs a whole number of MB"),
    ("roundup_power2_divisions:3", "fail", "For roundups, the divisons has to be power of 2"),
    ("roundup_power2_divisions:[300:2]", "fail", "For roundups, the intervals have to be power of 2"),
    ("roundup_power2_divisions:[256:3]", "fail", "the divisons has to be power of 2 or 0"),
    ("roundup_power2_divisions:[256:2", "fail", "Expected closing bracket ']'"),
    ("backend:magic", "fail", "Unknown allocator backend, options are native and cudaMallocAsync"),
    ("pinned_num_register_threads:3", "fail", "Number of register threads has to be power of 2"),
    ("pinned_num_register_threads:256", "fail", "less than or equal to 128"),
    ("expandable_segments", "fail", "expected : after expandable_segments"),
    ("max_split_size_mb:", "fail", "Error, expecting max_split_size_mb value"),
    ("expandable_segment:True", "warn", "expandable_segment"),
    ("expandable_segments:True,foo:1", "warn", "foo"),
]


@pytest.mark.parametrize("value,status,text", ALLOC_CASES, ids=[c[0] for c in ALLOC_CASES])
@pytest.mark.parametrize("variable", ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"])
def test_alloc_conf(variable, value, status, text):
    [finding] = run_one(gpu_env.AllocConfInvalid, facts_of({variable: value}))
    assert finding.id == f"alloc-conf-invalid:{variable}"
    assert finding.status.value == status, finding.message
    if text:
        assert text in finding.message


def test_alloc_conf_unset_is_ok():
    [finding] = run_one(gpu_env.AllocConfInvalid, facts_of({}))
    assert finding.status is Status.OK and "no allocator configuration" in finding.message


# -- MIOpen folders --------------------------------------------------------------------------------------------

def test_miopen_probe_and_check_on_real_folders(tmp_path):
    writable = tmp_path / "db"
    writable.mkdir()
    locked = tmp_path / "locked"
    locked.mkdir()
    cache = locked / "cache" / "miopen"
    locked.chmod(0o500)
    try:
        env = {"HOME": str(tmp_path), "MIOPEN_USER_DB_PATH": str(writable), "MIOPEN_CUSTOM_CACHE_DIR": str(cache)}
        dirs = miopen_dirs.folders(env)
    finally:
        locked.chmod(0o700)
    assert dirs["MIOPEN_USER_DB_PATH"] == {"path": str(writable), "source": "env", "exists": True, "is_dir": True,
                                           "writable": True}
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    assert dirs["MIOPEN_CUSTOM_CACHE_DIR"]["writable"] is False
    assert dirs["MIOPEN_CUSTOM_CACHE_DIR"]["nearest_parent"] == str(locked)
    found = statuses(gpu_env.MiopenDbNotWritable, facts_of(env, probes={"miopen.dirs": dirs}))
    assert list(found) == ["miopen-db-not-writable:MIOPEN_CUSTOM_CACHE_DIR"]
    finding = found["miopen-db-not-writable:MIOPEN_CUSTOM_CACHE_DIR"]
    assert finding.status is Status.WARN and "cannot be created" in finding.message


def test_miopen_defaults_under_home(tmp_path):
    dirs = miopen_dirs.folders({"HOME": str(tmp_path)})
    assert dirs["MIOPEN_USER_DB_PATH"]["path"] == str(tmp_path / ".config" / "miopen")
    assert dirs["MIOPEN_CUSTOM_CACHE_DIR"]["source"] == "default"
    assert all(d["writable"] for d in dirs.values())
    [finding] = run_one(gpu_env.MiopenDbNotWritable, facts_of(probes={"miopen.dirs": dirs}))
    assert finding.status is Status.OK


@pytest.mark.parametrize("dirs,flavour,status", [
    (None, "rocm", Status.SKIP),
    ({"MIOPEN_USER_DB_PATH": {"path": "/x", "source": "default", "exists": False, "writable": False}}, "cuda",
     Status.SKIP),
    ({"MIOPEN_USER_DB_PATH": {"path": "/x", "source": "env", "exists": True, "is_dir": False, "writable": False}},
     "cuda", Status.WARN),
    ({"MIOPEN_USER_DB_PATH": {"path": "/ro", "source": "default", "exists": True, "is_dir": True, "writable": False}},
     "rocm", Status.WARN),
])
def test_miopen_check_cases(dirs, flavour, status):
    probes = {"miopen.dirs": dirs} if dirs is not None else {}
    [finding] = run_one(gpu_env.MiopenDbNotWritable, facts_of(probes=probes, flavour=flavour))
    assert finding.status is status
