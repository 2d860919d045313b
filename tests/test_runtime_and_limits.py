"""The runtime's own word and the process's limits: the runtime child's lines as recorded on a real NVIDIA H200
(tests/fixtures/h200/runtime-limits.log, from benchmarks/run_runtime_limits.sh), read into facts, judged, and linked
as causes of the symptoms they produce."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rocm_doctor.checks.process_limits import (ProcessAddressSpaceLimited, ProcessCpusRestricted,
                                               ProcessOpenFilesLimited)
from rocm_doctor.checks.runtime_status import GpuRuntimeRefuses
from rocm_doctor.checks.torch_install import TorchSeesGpu
from rocm_doctor.engine.model import Finding, Severity, Status
from rocm_doctor.engine.relations import link
from rocm_doctor.facts.command import CommandResult
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.facts.keys import OWN_LIMITS_KEY, RUNTIME_PROBE_KEY
from rocm_doctor.interpret import runtime_facts

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "fixtures" / "h200" / "runtime-limits.log"
CHILD = ROOT / "rocm_doctor" / "probes" / "_runtime_child.py"


def recorded(situation: str) -> list[str]:
    """The runtime child's lines for one situation of the recorded run (the tiny torch program's line dropped)."""
    lines, inside = [], False
    for line in LOG.read_text().splitlines():
        if line.startswith("=== "):
            inside = line.split(":")[0] == f"=== {situation}"
            continue
        if inside and line.startswith('{"api"') or inside and line.startswith('{"step"'):
            lines.append(line)
    assert lines, situation
    return lines


PLAIN_LIMITS = next(line for line in LOG.read_text().splitlines() if '"step": "limits"' in line)


def facts_of(lines: list[str], flavour: str = "cuda", **extra) -> Facts:
    observations = Observations()
    observations.add_command(RUNTIME_PROBE_KEY, CommandResult(
        argv=["python3", "_runtime_child.py"], returncode=0, stdout="\n".join(lines) + "\n"))
    facts = Facts(observations)
    runtime_facts.interpret(observations, facts)
    facts.set("torch.flavour", flavour)
    for key, value in extra.items():
        facts.set(key, value)
    return facts


def limits_line(**changes) -> str:
    """The plain run's limits record with the values a situation set (the recorded run printed it once)."""
    record = json.loads(PLAIN_LIMITS)
    record.update(changes)
    return json.dumps(record)


def test_the_plain_h200_answers_success_everywhere_and_its_limits_are_read():
    facts = facts_of([PLAIN_LIMITS] + recorded("plain"))
    status = facts["runtime.status"]
    assert status["state"] == "ok"
    calls = {c["call"]: c for c in status["apis"]["cuda-driver"]["calls"]}
    assert calls["cuInit"]["name"] == "CUDA_SUCCESS" and calls["cuDeviceGetCount"]["value"] == 1
    assert status["apis"]["cuda-runtime"]["path"].endswith("libcudart.so.13")
    limits = facts["process.limits"]
    assert limits["cpu_count"] == 16 and len(limits["affinity"]) == 16
    assert limits["rlimits"]["RLIMIT_NOFILE"] == {"soft": 20000, "hard": 20000}
    assert GpuRuntimeRefuses().run(facts).status == Status.OK
    for check in (ProcessAddressSpaceLimited, ProcessOpenFilesLimited, ProcessCpusRestricted):
        assert check().run(facts).status == Status.OK, check.id


def test_a_repeated_visibility_index_is_the_drivers_invalid_device():
    finding = GpuRuntimeRefuses().run(facts_of(recorded("cvd-0,0")))
    assert finding.status == Status.FAIL
    assert "cuInit() returned CUDA_ERROR_INVALID_DEVICE (101)" in finding.message
    assert any("cudaErrorInvalidDevice" in e for e in finding.evidence)


def test_hsa_failing_on_an_nvidia_machine_is_not_judged_for_a_cuda_torch():
    lines = recorded("plain")
    assert any('"hsa_init", "code": 4104' in line for line in lines)  # no /dev/kfd on that machine
    assert GpuRuntimeRefuses().run(facts_of(lines)).status == Status.OK


def test_an_address_space_limit_below_the_context_is_the_root_of_torchs_no_gpu():
    lines = [limits_line(RLIMIT_AS=[4 << 30, 4 << 30])] + recorded("ulimit-v-4GiB")
    facts = facts_of(lines, **{"torch.available": False, "torch.available_error": None, "torch.warnings": []})
    limit = ProcessAddressSpaceLimited().run(facts)
    assert limit.status == Status.FAIL and "4.0 GiB" in limit.message
    runtime = GpuRuntimeRefuses().run(facts)
    assert "CUDA_ERROR_OUT_OF_MEMORY" in runtime.message
    torch = TorchSeesGpu().run(facts)
    assert "torch gave no reason" not in torch.message and "CUDA_ERROR_OUT_OF_MEMORY" in torch.message
    link([limit, runtime, torch], [ProcessAddressSpaceLimited, GpuRuntimeRefuses, TorchSeesGpu], facts)
    assert not limit.caused_by and runtime.caused_by == [limit.id] and limit.id in torch.caused_by


def test_an_address_space_limit_above_the_measured_need_is_information():
    facts = facts_of([limits_line(RLIMIT_AS=[64 << 30, None])] + recorded("ulimit-v-64GiB"))
    assert ProcessAddressSpaceLimited().run(facts).status == Status.INFO


def test_a_low_open_file_limit_explains_busy_or_unavailable_kernels():
    facts = facts_of([limits_line(RLIMIT_NOFILE=[32, 20000])] + recorded("ulimit-n-32"))
    limit = ProcessOpenFilesLimited().run(facts)
    assert limit.status == Status.FAIL and "only 32 files" in limit.message
    assert "ulimit -n 1024" in limit.fix[0].text
    kernels = Finding(id="gpu-kernels-failed", check="gpu-kernels-failed", status=Status.FAIL, title="",
                      message="81 of 81 operator kernels raised errors on NVIDIA H200",
                      evidence=["add-float32 [elementwise]: CUDA error: CUDA-capable device(s) is/are busy or "
                                "unavailable"], severity=Severity.HIGH)
    sdpa = Finding(id="sdpa-math-fallback", check="sdpa-math-fallback", status=Status.WARN, title="",
                   message="only the math backend ran", severity=Severity.MEDIUM)
    link([limit, kernels, sdpa], [ProcessOpenFilesLimited], facts)
    assert kernels.caused_by == [limit.id] and sdpa.caused_by == [limit.id]


def test_an_open_file_limit_below_the_usual_warns_only_where_kernels_ran():
    facts = facts_of([limits_line(RLIMIT_NOFILE=[256, 256])] + recorded("ulimit-n-256"))
    limit = ProcessOpenFilesLimited().run(facts)
    assert limit.status == Status.WARN and "ulimit -n 256" in limit.fix[0].text
    unrelated = Finding(id="gpu-kernels-failed", check="gpu-kernels-failed", status=Status.FAIL, title="",
                        message="1 of 81 operator kernels raised errors", evidence=["fft: cuFFT error"],
                        severity=Severity.HIGH)
    link([limit, unrelated], [ProcessOpenFilesLimited], facts)
    assert not unrelated.caused_by


def test_one_cpu_of_sixteen_warns_with_torchs_thread_count():
    facts = facts_of([limits_line(affinity=[0])] + recorded("taskset-0"), **{"torch.threads": 1})
    finding = ProcessCpusRestricted().run(facts)
    assert finding.status == Status.WARN and "1 of the machine's 16 CPUs" in finding.message
    assert "CPU affinity 0 " in finding.evidence[0] and "torch.get_num_threads() in the target interpreter: 1" \
        in finding.evidence


def test_a_cgroup_quota_counts_as_fewer_cpus():
    facts = facts_of([limits_line(cgroup_files={"cpu.max": "1200000 100000"})] + recorded("plain"))
    finding = ProcessCpusRestricted().run(facts)
    assert finding.status == Status.INFO and "12 of the machine's 16" in finding.message


def test_a_runtime_that_hangs_in_cuinit_is_named():
    lines = [PLAIN_LIMITS, '{"api": "cuda-driver", "loaded": true, "path": "libcuda.so.1", "step": "library"}',
             '{"api": "cuda-driver", "call": "cuInit", "step": "calling"}']
    observations = Observations()
    observations.add_command(RUNTIME_PROBE_KEY, CommandResult(
        argv=["python3"], returncode=-9, timed_out=True, timeout_s=30, stdout="\n".join(lines)))
    facts = Facts(observations)
    runtime_facts.interpret(observations, facts)
    facts.set("torch.flavour", "cuda")
    finding = GpuRuntimeRefuses().run(facts)
    assert finding.status == Status.FAIL and "cuInit() hung" in finding.message


def test_the_child_runs_here_without_a_gpu_and_records_limits():
    done = subprocess.run([sys.executable, str(CHILD)], capture_output=True, text=True, timeout=60)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert records[0]["step"] == "limits" and "RLIMIT_NOFILE" in records[0] and records[-1] == {"step": "done"}
    drivers = [r for r in records if r.get("api") == "cuda-driver" and r["step"] == "library"]
    assert drivers and drivers[0]["loaded"] in (True, False)


def test_a_cgroup_below_one_cuda_process_fails_and_a_larger_one_is_information():
    from rocm_doctor.checks.process_limits import ProcessCgroupCapped
    assert ProcessCgroupCapped().run(facts_of([PLAIN_LIMITS] + recorded("plain"))).status == Status.OK  # "max"
    small = facts_of([limits_line(cgroup_files={"memory.max": str(512 << 20), "pids.max": "8"})] + recorded("plain"))
    finding = ProcessCgroupCapped().run(small)
    assert finding.status == Status.FAIL and "0.50 GiB" in finding.message and "task limit of 8" in finding.message
    roomy = facts_of([limits_line(cgroup_files={"memory.max": str(64 << 30), "pids.max": "4096"})] + recorded("plain"))
    assert ProcessCgroupCapped().run(roomy).status == Status.INFO


def test_a_ptx_jit_switch_is_the_root_of_kernels_failing_with_no_kernel_image():
    from rocm_doctor.checks.gpu_env import GpuLibraryLogging
    facts = facts_of(recorded("CUDA_FORCE_PTX_JIT"))
    facts.env["CUDA_FORCE_PTX_JIT"] = "1"
    switch = GpuLibraryLogging().run(facts)[0]
    assert switch.status == Status.WARN and switch.data["breaks"] == "gpu-kernels"
    said = "add-float32 [elementwise]: CUDA error: no kernel image is available for execution on the device"
    kernels = Finding(id="gpu-kernels-failed", check="gpu-kernels-failed", status=Status.FAIL, title="",
                      message="75 of 81 operator kernels raised errors", evidence=[said], severity=Severity.HIGH)
    other = Finding(id="gpu-kernel-hang", check="gpu-kernel-hang", status=Status.FAIL, title="",
                    message="a kernel hung", evidence=["matmul: no answer within 30 s"], severity=Severity.HIGH)
    link([switch, kernels, other], [GpuLibraryLogging], facts)
    assert kernels.caused_by == [switch.id] and not other.caused_by


def test_a_repeated_visibility_index_leads_and_the_runtime_status_folds_under_it():
    from rocm_doctor.checks.visibility import GpuVisibilityEnv
    facts = facts_of(recorded("cvd-0,0"), **{"torch.available": False, "torch.available_error": None,
                                               "torch.warnings": []})
    facts.env["CUDA_VISIBLE_DEVICES"] = "0,0"
    visibility = [f for f in GpuVisibilityEnv().run(facts) if f.is_problem]
    runtime = GpuRuntimeRefuses().run(facts)
    assert visibility and "0" in visibility[0].message
    link(visibility + [runtime], [GpuVisibilityEnv, GpuRuntimeRefuses], facts)
    assert runtime.caused_by == [visibility[0].id]


def test_a_child_that_could_not_start_leaves_the_doctors_own_limits():
    observations = Observations()
    observations.add_command(RUNTIME_PROBE_KEY, CommandResult(
        argv=["python3"], error="OSError: [Errno 24] Too many open files"))
    own = json.loads(limits_line(RLIMIT_NOFILE=[32, 20000]))
    observations.probes[OWN_LIMITS_KEY] = own
    facts = Facts(observations)
    runtime_facts.interpret(observations, facts)
    facts.set("torch.flavour", "cuda")
    assert facts["runtime.status"]["state"] == "not-run"
    limit = ProcessOpenFilesLimited().run(facts)
    assert limit.status == Status.FAIL and "rocm-doctor's own process" in limit.evidence[0]
    assert GpuRuntimeRefuses().run(facts).status == Status.SKIP


def test_a_services_own_limits_replace_the_shells():
    from rocm_doctor.facts.keys import REQUEST_KEY, SYSTEMD_SHOW_KEY as SHOW_KEY
    show = ("Id=ollama.service\nLoadState=loaded\nLimitNOFILE=524288\nLimitNOFILESoft=64\nLimitAS=infinity\n"
            "LimitASSoft=infinity\nTasksMax=4915\nMemoryMax=infinity\nCPUAffinity=0-1\nCPUQuotaPerSecUSec=infinity\n")
    observations = Observations()
    observations.add_command(RUNTIME_PROBE_KEY, CommandResult(
        argv=["python3"], returncode=0, stdout=PLAIN_LIMITS + '\n{"step": "done"}\n'))
    observations.add_command(SHOW_KEY, CommandResult(argv=["systemctl", "show", "ollama"], returncode=0, stdout=show))
    observations.probes[REQUEST_KEY] = {"kind": "systemd", "name": "ollama.service", "scope": "system"}
    facts = Facts(observations)
    runtime_facts.interpret(observations, facts)
    limits = facts["process.limits"]
    assert limits["rlimits"]["RLIMIT_NOFILE"] == {"soft": 64, "hard": 524288}
    assert limits["rlimits"]["RLIMIT_AS"] == {"soft": None, "hard": None} and limits["affinity"] == [0, 1]
    assert limits["cgroup"]["pids.max"] == "4915"
    finding = ProcessOpenFilesLimited().run(facts)
    assert finding.status == Status.WARN and "ollama.service (systemctl show)" in finding.evidence[0]
    assert ProcessCpusRestricted().run(facts).status == Status.WARN  # 2 of 16


def test_unit_limit_values_as_systemctl_prints_them():
    from rocm_doctor.parsers.unit_limits import unit_limits
    assert unit_limits({}) == {}
    out = unit_limits({"LimitNOFILE": ["4096"], "CPUQuotaPerSecUSec": ["1.500s"], "CPUAffinity": ["0 2-3"],
                       "MemoryMax": ["8589934592"], "TasksMax": ["infinity"]})
    assert out["RLIMIT_NOFILE"] == [4096, 4096] and out["affinity"] == [0, 2, 3]
    assert out["cgroup_files"] == {"cpu.max": "150000 100000", "memory.max": "8589934592"}
    assert unit_limits({"CPUQuotaPerSecUSec": ["500ms"]})["cgroup_files"]["cpu.max"] == "50000 100000"
    assert unit_limits({"LimitAS": ["garbage"]})["RLIMIT_AS"] == [None, None]


def test_a_rocm_torch_is_judged_by_rocr_and_hip_and_the_status_points_at_its_check():
    lines = [PLAIN_LIMITS,  # the child's lines on a ROCm machine whose /dev/kfd this user may not open (shape only)
             '{"api": "hsa", "loaded": true, "path": "/venv/lib/python3.12/site-packages/torch/lib/'
             'libhsa-runtime64.so", "step": "library"}',
             '{"api": "hsa", "call": "hsa_init", "step": "calling"}',
             '{"api": "hsa", "call": "hsa_init", "code": 4104, "name": null, "text": "HSA_STATUS_ERROR_OUT_OF_RESOURCES:'
             ' The runtime failed to allocate the necessary resources.", "step": "returned"}',
             '{"step": "done"}']
    facts = facts_of(lines, flavour="rocm")
    finding = GpuRuntimeRefuses().run(facts)
    assert finding.id == "gpu-runtime-refuses:hsa" and "HSA_STATUS_ERROR_OUT_OF_RESOURCES (4104)" in finding.message
    assert finding.data["points_to"] == "rocm-device-access"
    access = Finding(id="rocm-device-access", check="rocm-device-access", status=Status.FAIL, title="",
                     message="this user cannot open /dev/kfd", severity=Severity.CRITICAL)
    link([access, finding], [], facts)
    assert finding.caused_by == [access.id] and access.confirmed_by[0]["kind"] == "runtime-status"
    assert GpuRuntimeRefuses().run(facts_of(lines, flavour="cuda")).status == Status.SKIP  # no CUDA runtime answered


def test_a_cuda_torch_without_the_drivers_libcuda_is_named():
    lines = [PLAIN_LIMITS, '{"api": "cuda-driver", "loaded": false, "tried": ["libcuda.so.1: libcuda.so.1: cannot '
             'open shared object file: No such file or directory"], "step": "library"}', '{"step": "done"}']
    finding = GpuRuntimeRefuses().run(facts_of(lines))
    assert finding.status == Status.FAIL and "libcuda could not be loaded" in finding.message
    assert "cannot open shared object file" in finding.evidence[0]


def test_an_address_space_limit_under_a_rocm_torch_says_its_need_was_not_measured():
    facts = facts_of([limits_line(RLIMIT_AS=[4 << 30, 4 << 30])] + recorded("plain"), flavour="rocm")
    finding = ProcessAddressSpaceLimited().run(facts)
    assert finding.status == Status.WARN and "was not measured here" in finding.message
