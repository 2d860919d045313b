"""MIOpen's find-mode grammar, its log lines and find-database records, on real logs from public threads
(tests/fixtures/miopen/, sources in tests/fixtures/INDEX.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocm_doctor.parsers.miopen_log import direction_of, find_db_record, find_mode, parse_find_db, parse_log

FIXTURES = Path(__file__).parent / "fixtures" / "miopen"


def log(name: str) -> dict:
    return parse_log((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("value, mode, number, is_set, valid", [
    (None, "DYNAMIC_HYBRID", 5, False, True),
    ("", "DYNAMIC_HYBRID", 5, False, True),
    ("  ", "DYNAMIC_HYBRID", 5, False, True),
    ("fast", "FAST", 2, True, True),
    ("2", "FAST", 2, True, True),
    ("Normal", "NORMAL", 1, True, True),
    ("3", "HYBRID", 3, True, True),
    ("4", "FAST_HYBRID", 4, True, True),
    ("dynamic_hybrid", "DYNAMIC_HYBRID", 5, True, True),
    ("trust_verify_full", "TRUST_VERIFY_FULL", 7, True, True),
    ("9", "DYNAMIC_HYBRID", 5, True, False),
    ("quick", "DYNAMIC_HYBRID", 5, True, False),
])
def test_find_mode_grammar(value, mode, number, is_set, valid):
    result = find_mode(value)
    assert (result["mode"], result["number"], result["set"], result["valid"]) == (mode, number, is_set, valid)
    assert result["on_miss"]


def test_fast_mode_says_it_skips_the_search():
    assert "no search" in find_mode("FAST")["on_miss"]
    assert find_mode(None)["default"] and not find_mode("1")["default"]


def test_rx9070_log_with_elapsed_times():
    result = log("linux-rx9070-gfx1201-rocm7.2-miopen3.5.1-dynamic-hybrid-elapsed-timestamps-slow-conv-excerpt.txt")
    assert result["find_mode"] == {"mode": "DYNAMIC_HYBRID", "number": 5}
    assert result["miopen_version"] == "3.5.1.5b515cf1bc" and result["hip_version"] == "7.2.26015"
    assert result["devices"] == ["gfx1201"]
    assert result["problems"][0].startswith("./bin/MIOpenDriver conv -n 32 -c 64 -H 256 -W 256")
    assert result["db"]["filesystems"][0]["name"] == "EXT2/3/4_SUPER_MAGIC" and not result["db"]["networked"]
    assert result["miopen_lines"] == 16  # every line but the script's own "Testing float32..."


def test_windows_naive_solver_chosen_and_stored():
    result = log("windows-gfx1150-therock-miopen3.5.1-naive-conv-fp16-nhwc-selected-and-stored-in-ufdb-excerpt.txt")
    assert result["naive"] == ["ConvDirectNaiveConvFwd"]
    chosen = result["chosen"][0]
    assert chosen["solver"] == "ConvDirectNaiveConvFwd" and chosen["direction"] == "fwd"
    assert chosen["kernel"] == "naive_conv_ab_nonpacked_fwd_nhwc_half_double_half" and chosen["time_ms"] == 2732.67
    record = result["records"]["64-256-256-3x3-64-256-256-32-1x1-1x1-1x1-0-NHWC-NHWC-NHWC-FP16-F"]
    assert record["dtype"] == "FP16" and record["direction"] == "fwd" and record["best"] == "ConvDirectNaiveConvFwd"
    assert result["db"]["stored"] == 1
    assert result["db"]["files"] == ["C:\\\\Users\\\\astre\\\\.miopen\\\\db\\\\gfx1150_8.HIP.3_5_1_e8713f2b2e.ufdb.txt"]


def test_windows_naive_kernel_runs():
    result = log("windows-gfx1150-therock-naive-conv-fp32-nhwc-invoker-kernel-runs-excerpt.txt")
    assert result["kernels"] == ["naive_conv_ab_nonpacked_fwd_nhwc_float_double_float"]
    assert result["naive"] == result["kernels"]
    assert "--in_layout NHWC" in result["problems"][0] and len(result["problems"]) == 1  # repeated command kept once


def test_gfx1150_user_find_db_lookup():
    result = log("linux-gfx1150-miopen3.3.0-dynamic-hybrid-user-ufdb-lookup-excerpt.txt")
    assert result["find_mode"]["mode"] == "DYNAMIC_HYBRID" and result["miopen_version"] == "3.3.0"
    assert result["db"]["files"] == ["/home/simeon/.config/miopen/gfx1150_6.HIP.3_3_0_.ufdb.txt"]
    assert result["db"]["filesystems"][0]["magic"] == "0x9123683e" and not result["db"]["networked"]


def test_mi300x_home_on_nfs():
    result = log("linux-mi300x-gfx942-miopen3.5.1-home-on-nfs-dynamic-hybrid-driver-excerpt.txt")
    assert result["devices"] == ["gfx942:sramecc+:xnack-"]
    assert result["db"]["networked"] == ["/home/AMD/anarao/.config"]
    assert result["db"]["unreadable"] == ["/home/AMD/anarao/.cache/dvc-tmp/gfx942_38.HIP.3_5_1_b3811300ed-dirty.ufdb.txt"]
    assert result["miopen_version"] == "3.5.1.decfa6a173"


def test_gfx1030_normal_find_regenerates():
    result = log("linux-gfx1030-rocm6.0-miopen3.1.0-find-mode-normal-find-db-regenerating-excerpt.txt")
    assert result["find_mode"] == {"mode": "NORMAL", "number": 1}
    assert result["db"]["regenerating"] == 1
    assert result["warnings"] == ["hipMemGetInfo error, status: 1"] and not result["errors"]


def test_old_log_perf_db_unreadable_and_records_merged():
    result = log("linux-gfx906-miopen-driver-2019-user-perfdb-unreadable-find-db-records-inserted-excerpt.txt")
    assert result["db"]["unreadable"] == ["/home/john/.config/miopen//gfx906_60.cd.updb.txt"]
    assert result["db"]["perf_db_misses"] == 2
    record = result["records"]["32-32-32-3x3-32-30-30-100-0x0-1x1-1x1-0-NCHW-FP32-F"]
    assert [s["solver"] for s in record["solutions"]] == ["ConvBinWinogradRxS", "gemm"]  # fastest first
    assert record["solutions"][0]["time_ms"] == 0.12496 and record["solutions"][1]["workspace"] == 1036800


def test_winograd_chosen_per_call():
    result = log("linux-gfx1031-a1111-webui-winograd-chosen-per-call-excerpt.txt")
    assert [(c["solver"], c["direction"]) for c in result["chosen"]] == [("ConvBinWinogradRxSf2x3g1", "fwd")]
    assert result["chosen"][0]["time_ms"] == 0.20044 and not result["naive"]


def test_old_format_gemm_chosen_and_wrapped_paste():
    result = log("linux-miopen-find-gemm-chosen-over-direct-old-record-format-excerpt.txt")
    assert result["chosen"][0]["solver"] == "gemm" and result["chosen"][0]["time_ms"] == 0.528608
    assert result["records"]["1024-14-14-1x1-512-7-7-64-0x0-2x2-1x1-0-NCHW-FP32-F"]["best"] == "ConvAsm1x1U"
    assert result["db"]["regenerating"] == 1


def test_filesystem_error_on_the_user_find_db():
    result = log("linux-gfx906-miopen2.11-system-kdb-unreadable-then-ufdb-permissions-filesystem-error.txt")
    assert result["db"]["system_db_missing"] == ["/opt/rocm/miopen/share/miopen/db/gfx906_60.kdb"]
    assert any("filesystem_error" in e for e in result["errors"])
    assert result["db"]["files"] == ["/home/ssml/singh/.config/miopen//gfx906_60.HIP.2_11_0_993628deb.ufdb.txt"]


def test_find_db_in_tmp_with_gemm_fallback():
    result = log("linux-tensorflow-miopen-find-db-in-tmp-gemm-fallback-regenerating-excerpt.txt")
    assert result["db"]["files"] == ["/tmp/miopen-tmp-f51f-0c93-6672-1e9e/miopen.test.find_db"]
    assert result["db"]["regenerating"] == 1


def test_user_find_db_file_records():
    db = parse_find_db((FIXTURES / "ufdb-records-fp16-winograd-igemm-gemm-and-naive-timings-excerpt.txt").read_text())
    assert len(db) == 3
    first = db["320-152-104-3x3-4-152-104-2-1x1-1x1-1x1-0-NCHW-FP16-F"]
    assert first["best"] == "ConvWinoFuryRxS<2-3>" and first["dtype"] == "FP16" and first["direction"] == "fwd"
    naive = [s for s in first["solutions"] if s["naive"]]
    assert naive[0]["solver"] == "ConvDirectNaiveConvFwd" and naive[0]["time_ms"] == 31.6595
    big = db["384-152-104-3x3-384-152-104-2-1x1-1x1-1x1-0-NCHW-FP16-F"]
    assert big["best"] == "ConvBinWinogradRxSf2x3g1" and big["solutions"][-1]["time_ms"] == 1849.16


def test_miopen_3_6_lines_without_the_backend_name():
    result = log("linux-strixhalo-gfx1151-miopen3.6.0-rocm10-wheel-every-solver-invalid-elapsed-time-excerpt.txt")
    assert result["miopen_lines"] == 4
    assert len(result["errors"]) == 2 and "Invalid elapsed time" in result["errors"][0]
    assert not result["chosen"]


def test_only_naive_solvers_applicable():
    result = log("linux-gfx1201-torch2.9.1-rocm7.11-nightly-find-normal-only-naive-solvers-applicable-excerpt.txt")
    assert result["applicable"] == ["ConvDirectNaiveConvFwd", "ConvDirectNaiveConvBwd"]
    assert result["only_naive"] and result["naive"] == result["applicable"]
    assert not log("linux-gfx1031-a1111-webui-winograd-chosen-per-call-excerpt.txt")["only_naive"]


def test_records_tolerate_garbage_and_directions():
    assert find_db_record("not a record") == []
    assert find_db_record("A:1.5,0,algo;broken;B:0.5,16,algo")[0]["solver"] == "B"
    assert parse_find_db("junk\n=x\nkey-FP32-W=S:1,0,miopenConvolutionBwdWeightsAlgoGEMM\n")["key-FP32-W"]["direction"] \
        == "bwd-weights"
    assert direction_of("ConvDirectNaiveConvWrw") == "bwd-weights"
    assert direction_of("miopenConvolutionBwdDataAlgoGEMM") == "bwd-data"
    assert direction_of("gemm") is None
    assert parse_log("")["miopen_lines"] == 0 and parse_log("\x00\xff garbage")["chosen"] == []


def test_every_fixture_is_sourced_and_tested():
    index = (FIXTURES.parent / "INDEX.md").read_text(encoding="utf-8")
    here = Path(__file__).read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        assert f"| miopen/{path.name} | https://" in index, path.name
        assert path.name in here, path.name
