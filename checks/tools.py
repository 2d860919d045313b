"""External tools that misbehaved while the doctor ran them: hung, crashed, or printed garbage or floods."""

from __future__ import annotations

from rocm_doctor.checks.gpu_env import logging_switch
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.command import signal_name
from rocm_doctor.facts.keys import SMI_PROBLEMS, TORCH_PROBE_KEY

OWN_CHILDREN = (TORCH_PROBE_KEY,)  # judged by their own checks
# Tools that talk to the GPU driver: one of them that hangs may be waiting on the driver, which the kernel log can
# show. The others (journalctl, dpkg-query, systemctl, mokutil, ...) wait on something else.
GPU_TOOLS = ("rocminfo", "rocm-smi", "amd-smi", "nvidia-smi", "hipinfo", "rocm_agent_enumerator", "clinfo")


def _talks_to_the_gpu(argv) -> bool:
    name = str(argv[0]).replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe") if argv else ""
    return name in GPU_TOOLS


def _volume_hint(facts) -> str:
    """What this environment says about a flood of output: the logging switches set in it, or that none is."""
    on = [f"{name}={value}" for name, value in sorted(facts.env.items()) if logging_switch(name, value)]
    if on:
        return (f"{', '.join(on)} is set here and makes the GPU libraries log (gpu-library-logging-enabled): unset "
                "it and re-run.")
    return ("No GPU library logging switch is set here, so why it printed so much could not be told: run the command "
            "by hand to see what it repeats.")


class ExternalToolMisbehaved(Check):
    id = "external-tool-misbehaved"
    title = "Results of the diagnostic tools"
    area = "rocm-doctor"
    severity = Severity.MEDIUM

    def run(self, facts):
        findings = []
        for key, result in sorted(facts.observations.commands.items()):
            if key in OWN_CHILDREN or result.error:
                continue
            command = " ".join(result.argv)
            if result.timed_out:
                findings.append(self.warn(
                    f"`{command}` did not finish within {result.timeout_s:g} s and was killed; its facts are missing.",
                    subject=key, evidence=[result.describe()],
                    remediation=["Run the same command by hand: whether it waits on a stuck GPU driver or runtime could not "
                                 "be told from here (the kernel log, dmesg, shows a stuck driver); the other findings "
                                 "did not depend on it."
                                 if _talks_to_the_gpu(result.argv) else
                                 "Run the same command by hand to see what it waits for; the findings that need its "
                                 "output say so, the others did not depend on it."]))
            elif result.signal:
                findings.append(self.warn(
                    f"`{command}` was killed by {signal_name(result.signal)}; its output may be incomplete.",
                    subject=key, evidence=[result.describe(), *result.stderr.strip().splitlines()[-5:]],
                    remediation=["Run the same command by hand to see the crash; the kernel log (dmesg) shows whether the "
                                 "driver was involved."
                                 + (" An SMI tool that aborts is a known packaging bug on some distributions and does "
                                    "not mean the GPU is broken." if "smi" in key else "")]))
            elif result.truncated and not result.kept_tail:  # a log keeps its newest part: its own check says so
                dropped = result.stdout_truncated_bytes + result.stderr_truncated_bytes
                findings.append(self.warn(
                    f"`{command}` printed far more than expected; {dropped:,} bytes beyond the cap were dropped.",
                    subject=key, evidence=[result.describe()],
                    remediation=[_volume_hint(facts)]))
            elif result.invalid_utf8:
                findings.append(self.info(
                    f"`{command}` printed bytes that are not UTF-8; they were replaced before parsing.",
                    subject=key, evidence=[result.describe()]))
        findings += self._smi_errors(facts, {f.id.partition(":")[2] for f in findings})
        return findings or self.ok(f"{len(facts.observations.commands)} command(s) ran without hangs or crashes")

    def _smi_errors(self, facts, reported: set) -> list:
        """Error lines amd-smi / rocm-smi printed while exiting normally (smi.problems): a crash is reported above."""
        by_tool: dict[str, list[str]] = {}
        for line in facts.get(SMI_PROBLEMS) or []:
            tool, _, text = str(line).partition(": ")
            by_tool.setdefault(tool, []).append(text)
        keys = {tool: [k for k, r in facts.observations.commands.items() if r.argv and r.argv[0].endswith(tool)]
                for tool in by_tool}
        return [self.warn(
            f"`{tool}` printed errors; the GPUs it lists may be incomplete.", subject=tool, evidence=lines[:6],
            remediation=["Errors from an SMI tool do not by themselves mean the GPU is broken: builds with a "
                         "packaging bug print them on healthy GPUs (an assertion or 'map::at' on an unexpected sysfs "
                         "file); the inventory also reads KFD and rocminfo."])
            for tool, lines in sorted(by_tool.items()) if not set(keys[tool]) & reported]
