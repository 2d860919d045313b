"""data/perf_switches.json: every row sourced and dated, its values and figures well formed, and the loader that
says which switches an environment sets for the build being measured."""

import fnmatch

import pytest

from rocm_doctor.gpu.bench.plan import SECTION_ORDER
from rocm_doctor.knowledge import perf_switches as P

TABLE = P.table()
ROWS = TABLE["switches"]
# The line keys of the analysis start with their section, except the host copies of the memory section.
KEY_SECTION = {"host": "memory"}
ASKED_FOR = ("AMD_SERIALIZE_KERNEL", "AMD_SERIALIZE_COPY", "HSA_ENABLE_SDMA", "HIP_LAUNCH_BLOCKING",
             "MIOPEN_FIND_MODE", "MIOPEN_DEBUG_*", "ROCBLAS_LAYER", "HIPBLASLT_LOG_LEVEL", "CUDA_LAUNCH_BLOCKING",
             "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "TORCH_CUDNN_V8_API_DISABLED",
             "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCH_SHOW_CPP_STACKTRACES", "TORCH_CUDNN_SDPA_DEPRIORITIZED",
             "OMP_NUM_THREADS")


def test_the_variables_the_issue_names_are_all_in_the_table():
    assert set(ASKED_FOR) <= {row["variable"] for row in ROWS}
    assert len({row["variable"] for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r["variable"] for r in ROWS])
def test_every_row_is_sourced_dated_and_well_formed(row):
    source = TABLE["sources"][row["source"]]
    assert (source.get("url") or source.get("document")) and source["read"]
    assert row["vendor"] in P.VENDORS and row["side"] in P.SIDES and len(row["changes"]) > 20
    assert row["values"] and all(isinstance(v, str) and v for v in row["values"])
    assert set(row["sections"]) <= set(SECTION_ORDER)
    for figure in row["figures"]:
        prefix = figure.split(".")[0]
        assert KEY_SECTION.get(prefix, prefix) in row["sections"], figure


def test_values_that_matter():
    assert P.matters(["1"], "1") and not P.matters(["1"], "0")
    assert P.matters(["nonzero"], "3") and not P.matters(["nonzero"], "off") and not P.matters(["nonzero"], "")
    assert P.matters(["*"], "8") and P.matters(["fast"], "FAST")


def test_set_in_keeps_the_build_s_switches_with_values_that_matter():
    env = {"CUDA_LAUNCH_BLOCKING": "1", "AMD_SERIALIZE_KERNEL": "3", "AMD_LOG_LEVEL": "0", "OMP_NUM_THREADS": "4",
           "MIOPEN_DEBUG_CONV_FFT": "0", "HSA_ENABLE_SDMA": "1", "PATH": "/usr/bin"}
    assert [s.describe() for s in P.set_in(env, "nvidia")] == ["CUDA_LAUNCH_BLOCKING=1", "OMP_NUM_THREADS=4"]
    amd = [s.describe() for s in P.set_in(env, "amd")]
    assert amd == ["AMD_SERIALIZE_KERNEL=3", "MIOPEN_DEBUG_CONV_FFT=0", "OMP_NUM_THREADS=4"]
    assert [s.describe() for s in P.set_in(env, "nvidia", cpu_device=True)] == ["OMP_NUM_THREADS=4"]
    (switch,) = P.set_in({"NVIDIA_TF32_OVERRIDE": "0"}, "nvidia")
    assert switch.url.startswith("https://") and switch.read and switch.figures == ("matmul.tf32",)


def test_family_rows_match_by_prefix_only():
    family = next(r for r in ROWS if r["variable"].endswith("*"))
    assert fnmatch.fnmatchcase("MIOPEN_DEBUG_FIND_ONLY_SOLVER", family["variable"])
    assert not P.set_in({"XMIOPEN_DEBUG_CONV_GEMM": "0"}, "amd")
