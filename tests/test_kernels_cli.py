"""`rocm-doctor kernels` and the confirm stage inside `check`, as real processes on the CPU device."""

import json

import pytest

from rocm_doctor.gpu.kernels import liblogs

pytestmark = pytest.mark.slow


def test_kernels_json_on_cpu_writes_the_file(doctor, tmp_path):
    out = tmp_path / "kernels.json"
    proc = doctor("kernels", "--device", "cpu", "--only", "sdpa", "--only", "norm", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert json.loads(out.read_text()) == document
    suite = document["stage"]["suite"]
    assert {r["category"] for r in suite["results"]} == {"sdpa", "norm"}
    assert suite["counts"]["ok"] >= 10 and suite["counts"]["unavailable"] == 4
    ids = {f["id"]: f["status"] for f in document["findings"]}
    assert ids["gpu-kernels-failed"] == "ok" and ids["gpu-kernels-wrong-result"] == "ok"
    assert document["stage"]["library_logs"]["ran"] is False
    assert document["diagnosis"]["root_causes"] == [] and document["diagnosis"]["headline"]  # the same shape as check's


def test_kernels_human_summary(doctor):
    proc = doctor("kernels", "--device", "cpu", "--only", "fft")
    assert proc.returncode == 0, proc.stderr
    assert "Outcomes: 3 ok" in proc.stdout
    # the title claims nothing of a GPU on a CPU run; the message names the device
    assert "Errors from operator kernels: 3 operator kernels ran correctly on cpu" in proc.stdout
    assert "on the GPU" not in proc.stdout.split("Outcomes:", 1)[1].split("[skip]", 1)[0]
    assert "gpu-kernels-failed:" not in proc.stdout  # titles label the findings, not ids


def test_kernels_rejects_unknown_category(doctor):
    proc = doctor("kernels", "--device", "cpu", "--only", "bogus")
    assert proc.returncode == 2 and "unknown category: bogus" in proc.stderr


def test_check_skips_the_stage_without_a_gpu(doctor):
    proc = doctor("check", "--json", "--only", "gpu-kernels-failed")
    report = json.loads(proc.stdout)
    assert report["stages"]["kernels"]["ran"] is False
    assert "torch does not see a GPU" in report["stages"]["kernels"]["reason"]
    [finding] = [f for f in report["findings"] if f["check"] == "gpu-kernels-failed"]
    assert finding["status"] == "skip"
    proc = doctor("check", "--json", "--no-gpu", "--only", "gpu-kernels-failed")
    assert "kernels" not in json.loads(proc.stdout)["stages"]


def test_log_capping_keeps_head_and_tail():
    text = "A" * 100_000 + "TAIL"
    kept, dropped = liblogs.cap_text(text, cap=1000)
    assert len(kept.encode()) < 1100 and kept.startswith("A") and kept.endswith("TAIL")
    assert dropped == len(text) - 1000 and "bytes cut by rocm-doctor" in kept
    assert liblogs.cap_text("short", cap=1000) == ("short", 0)


def test_log_summary_on_real_library_logs(fixture_text):
    miopen = fixture_text("logs/miopen/linux-ubuntu24.04-rx7800xt-gfx1101-override-11.0.0-miopen-loglevel6-"
                          "rocblas-layer3-callgemm-free-invalid-pointer-excerpt.txt")
    counts = liblogs.summarize(miopen)
    assert counts.get("MIOpen", 0) > 0
    bench = fixture_text("logs/rocblas_layer/migraphx-bert-rocblas_layer2-bench-trace-rocmlir.txt")
    assert liblogs.summarize(bench).get("rocBLAS", 0) > 0
    hipblaslt = fixture_text("logs/hipblaslt/windows-gfx1100-therock7.2-lstm-hipblaslt-bench-log.txt")
    assert liblogs.summarize(hipblaslt).get("hipBLASLt", 0) > 0


def test_log_env_per_vendor():
    assert liblogs.log_env("amd") == {"MIOPEN_ENABLE_LOGGING": "1", "MIOPEN_LOG_LEVEL": "5", "ROCBLAS_LAYER": "2",
                                      "HIPBLASLT_LOG_LEVEL": "2", "AMD_LOG_LEVEL": "3"}
    assert liblogs.log_env("nvidia")["CUDNN_LOGDEST_DBG"] == "stderr"
    assert liblogs.log_env("cpu") is None
    assert liblogs.capture("python", "cpu")["ran"] is False


@pytest.mark.parametrize("args,when", [([], "needed"), (["--logs"], "always"), (["--no-logs"], "never")])
def test_kernels_captures_library_logs_by_the_same_rule_as_check_unless_asked(monkeypatch, args, when):
    from click.testing import CliRunner

    from rocm_doctor.cli.main import cli
    from rocm_doctor.gpu.kernels import stage as kernel_stage

    seen = []

    def stop(facts, options, early=None):
        if early is not None:
            early.stop()
        seen.append(options.library_logs)
        raise KeyboardInterrupt

    monkeypatch.setattr(kernel_stage, "confirm", stop)
    monkeypatch.setattr(kernel_stage.KernelStage, "start_early", lambda self, python, env: None)
    CliRunner().invoke(cli, ["kernels", "--json", *args])
    assert seen == [when]
