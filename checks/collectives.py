"""Several GPUs: collectives that hang or return wrong data, bandwidth far under the interconnect, peers without
direct access, NCCL/RCCL variables that turn transports off, and kernel settings known to hang multi-GPU work.

The first four read the fact `collectives.results` (set by `rocm-doctor check --collectives`,
`rocm-doctor bench --collectives` or the fleet worker); without it they are skipped with the reason. The last two
read the environment and `linux.kernel_cmdline` and run in every `check`.
"""

from __future__ import annotations

import statistics

from rocm_doctor.checks import collectives_expectations as expectations
from rocm_doctor.knowledge.collectives_env import transport_settings
from rocm_doctor.parsers.collectives_formulas import human_bytes
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Platform, Severity, Status
from rocm_doctor.facts.keys import (COLLECTIVES_RESULTS, ENV_KNOWN, GPU_INVENTORY, KFD_NODES, LINUX_KERNEL_CMDLINE,
                                    TORCH_DEVICE_COUNT, TORCH_HIP)

from rocm_doctor.checks.amd_common import kernel_parameter_steps
from rocm_doctor.checks.visibility import set_in_rc_file

NOT_RUN = "the collectives did not run (rocm-doctor check --collectives or rocm-doctor bench --collectives runs them)"
LOW, VERY_LOW = 0.5, 0.2  # fractions of the published figure
PEAK_FROM_BYTES = 32 << 20  # bus bandwidth peaks are read from sizes of at least 32 MiB
REMEDY_ENV = ("Unset NCCL_P2P_DISABLE / NCCL_P2P_LEVEL=LOC / NCCL_ALGO / NCCL_PROTO if they are set "
              "(see nccl-transport-disabled).")


def _results(facts):
    value = facts.get(COLLECTIVES_RESULTS)
    if value is None:
        value = facts.observations.probes.get("collectives")
    return value if isinstance(value, dict) else None


class _CollectivesCheck(Check):
    """Skips when the collectives did not run; otherwise `judge(facts, results)` gives the verdict."""

    area = "multi-gpu"
    requires = (COLLECTIVES_RESULTS,)

    def run(self, facts):
        results = _results(facts)
        if results is None:
            return self.skip(NOT_RUN)
        if not results.get("ran"):
            return self.skip(f"the collectives did not run: {results.get('detail')}")
        return self.judge(facts, results)

    def judge(self, facts, results):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def where(results) -> str:
        n = results.get("world_size")
        return f"{n} ranks, {results.get('backend')} on {results.get('device')}"


class CollectiveHang(_CollectivesCheck):
    id = "collective-hang"
    title = "Completion of collectives across the GPUs"
    severity = Severity.CRITICAL

    def judge(self, facts, results):
        hang = results.get("hang")
        if hang:
            evidence = [f"rank {rank}: {text}" for rank, text in (hang.get("ranks") or {}).items()]
            evidence.append(f"watchdog: {hang.get('reason')}")
            for rank in results.get("ranks") or []:
                for line in (rank.get("stderr_tail") or [])[-3:]:
                    evidence.append(f"rank {rank.get('rank')} stderr: {line}")
            return self.fail(
                f"{hang.get('summary')} ({self.where(results)}); every rank was killed",
                evidence=evidence,
                remediation=[
                    "Re-run with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,P2P) to see which transport the ranks "
                    "were using when they stopped.",
                    "On AMD: check the IOMMU setting (iommu-multi-gpu-hang-risk) and the kernel log (dmesg) for amdgpu "
                    "or IO_PAGE_FAULT errors; try HSA_FORCE_FINE_GRAIN_PCIE=1 on PCIe-connected GPUs.",
                    "Try NCCL_P2P_DISABLE=1 once as a diagnosis: if the hang goes away, peer-to-peer between these GPUs "
                    "is broken (BIOS ACS/IOMMU settings, a PCIe switch, or the driver).",
                ],
                data={"hang": hang},
            )
        if results.get("state") == "failed":
            errors = results.get("errors") or []
            evidence = [f"rank {e.get('rank')}" + (f" in {e.get('op')} of {human_bytes(e.get('bytes') or 0)}" if e.get("op") else "")
                        + f": {e.get('error')}" for e in errors[:8]]
            return self.fail(f"the collectives failed: {results.get('detail')} ({self.where(results)})",
                             evidence=evidence,
                             remediation=["Read the first rank's error above; re-run with NCCL_DEBUG=INFO for NCCL/RCCL "
                                          "initialisation problems."],
                             data={"errors": errors})
        done = len(results.get("results") or [])
        return self.ok(f"{done} collective measurements completed on every rank ({self.where(results)})")


class CollectiveWrongResult(_CollectivesCheck):
    id = "collective-wrong-result"
    title = "Correctness of the data from collectives"
    severity = Severity.CRITICAL

    def judge(self, facts, results):
        bad = [r for r in results.get("results") or [] if r.get("correct") is False]
        random = results.get("random_check") or {}
        evidence = []
        for row in bad:
            line = (f"{row['op']} of {row['size']}: wrong on rank(s) {', '.join(map(str, row.get('ranks_wrong') or []))}"
                    f", largest error {row.get('max_err'):g}")
            if row.get("bad_source_ranks"):
                line += f"; the data that came from rank(s) {', '.join(map(str, row['bad_source_ranks']))} was wrong"
            evidence.append(line)
        if random and random.get("correct") is False:
            evidence.append(f"random-data all_reduce of {random.get('size')}: differs from the CPU reference sum by up to "
                            f"{random.get('max_abs_err'):.3g} (tolerance {random.get('tolerance'):.3g}) on rank(s) "
                            f"{', '.join(map(str, random.get('ranks_wrong') or []))}")
        if evidence:
            sources = sorted({s for row in bad for s in row.get("bad_source_ranks") or []})
            hint = f" (all-gather points at rank(s) {', '.join(map(str, sources))})" if sources else ""
            return self.fail(f"{len(evidence)} collective result(s) were wrong{hint} ({self.where(results)})",
                             evidence=evidence,
                             remediation=[
                                 "The results were wrong and no error was raised, which does not tell where the data "
                                 "went wrong: the peer-to-peer or DMA path, a GPU, or the library. Run the same with "
                                 "NCCL_P2P_DISABLE=1: if the results are then right, the peer-to-peer path is at "
                                 "fault; check IOMMU/ACS settings and the driver.",
                                 "Run rocm-doctor kernels on the GPU of the suspect rank to rule out the GPU itself.",
                             ],
                             data={"wrong": bad, "random_check": random})
        checked = [r for r in results.get("results") or [] if r.get("correct") is True]
        if not checked and not random:
            return self.skip("no result was checked (the run stopped before the first correctness pass)")
        note = f"; random all_reduce of {random.get('size')} matches the CPU reference" if random.get("correct") else ""
        return self.ok(f"{len(checked)} results matched the expected values{note} ({self.where(results)})")


class CollectiveBandwidthLow(_CollectivesCheck):
    id = "collective-bandwidth-low"
    title = "Collective and peer-copy bandwidth against what the interconnect should do"
    severity = Severity.HIGH

    def judge(self, facts, results):
        if results.get("device") != "cuda":
            return self.skip("bandwidth is only judged on GPUs (this run used the CPU)")
        names = [d.get("name") for d in results.get("devices") or []]
        env = results.get("env") or facts.env or {}
        rows = [r for r in results.get("results") or [] if r.get("busbw_gbs") is not None]
        peaks = {}
        for op in ("all_reduce", "all_gather", "broadcast"):
            mine = [r for r in rows if r["op"] == op]
            big = [r for r in mine if (r.get("bytes") or 0) >= PEAK_FROM_BYTES] or mine
            if big:
                best = max(big, key=lambda r: r["busbw_gbs"])
                peaks[op] = best
        evidence = [f"{op} peak busbw {r['busbw_gbs']:.1f} GB/s at {r['size']} (algbw {r['algbw_gbs']:.1f} GB/s)"
                    for op, r in peaks.items()]
        problems = []
        expect = expectations.allreduce_expectation(names, results.get("world_size") or 0,
                                                    expectations.nvls_enabled(env), results.get("scope", "local"))
        if expect and "all_reduce" in peaks:
            got = peaks["all_reduce"]["busbw_gbs"]
            fraction = got / expect["busbw_gbs"]
            evidence.append(f"expected all_reduce busbw for {expect['match']}: {expect['busbw_gbs']:g} GB/s "
                            f"({expect['source']}); measured {fraction:.0%} of it")
            if fraction < LOW:
                problems.append((fraction, f"all_reduce busbw {got:.1f} GB/s is {fraction:.0%} of the "
                                           f"{expect['busbw_gbs']:g} GB/s published for {expect['match']}"))
        peers = results.get("peers") or {}
        copies = [c for c in peers.get("copies") or [] if isinstance(c.get("gbs"), (int, float))]
        copy_expect = expectations.peer_copy_expectation(names)
        if copies:
            median = statistics.median(c["gbs"] for c in copies)
            evidence.append(f"peer copy over {len(copies)} GPU pairs: median {median:.1f} GB/s, "
                            f"min {min(c['gbs'] for c in copies):.1f} GB/s ({peers.get('convention')})")
            if copy_expect:
                evidence.append(f"expected peer copy: {copy_expect['gbs']:g} GB/s ({copy_expect['source']})")
            for c in copies:
                if copy_expect and c["gbs"] < LOW * copy_expect["gbs"]:
                    fraction = c["gbs"] / copy_expect["gbs"]
                    problems.append((fraction, f"copy GPU {c['src']} -> GPU {c['dst']} runs at {c['gbs']:.1f} GB/s, "
                                               f"{fraction:.0%} of the {copy_expect['gbs']:g} GB/s published"))
                elif len(copies) > 2 and c["gbs"] < LOW * median:
                    problems.append((c["gbs"] / median, f"copy GPU {c['src']} -> GPU {c['dst']} runs at "
                                                         f"{c['gbs']:.1f} GB/s, under half the median pair ({median:.1f})"))
        transports = [t for t in transport_settings(env) if t["level"] == "warn"]
        remedy = [REMEDY_ENV] if transports else []
        remedy += ["Compare with the GPU topology (nvidia-smi topo or rocm-smi --showtopo prints it): pairs linked only "
                   "through PCIe or the CPU are much slower than NVLink/xGMI pairs.",
                   "Check that no other job uses the GPUs, and that the GPUs are not throttled (clocks, power cap)."]
        data = {"peaks": peaks, "expectation": expect, "peer_copy_expectation": copy_expect}
        if problems:
            worst = min(problems, key=lambda p: p[0])
            status = Status.FAIL if worst[0] < VERY_LOW else Status.WARN
            if transports:
                evidence.append("set in the environment: " + ", ".join(f"{t['name']}={t['value']}" for t in transports))
            return self.finding(status, worst[1] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                                evidence=evidence + [p[1] for p in problems], remediation=remedy, data=data)
        if not expect and "all_reduce" in peaks:
            raw = "; ".join(f"{op} {r['busbw_gbs']:.1f} GB/s busbw at {r['size']}" for op, r in peaks.items())
            return self.info(f"no published all-reduce figure for {results.get('world_size')}x "
                             f"{names[0] if names else 'these GPUs'}; measured: {raw}", evidence=evidence, data=data)
        if not peaks:
            return self.skip("no bandwidth was measured")
        return self.ok("; ".join(evidence[:1] + [e for e in evidence if e.startswith("expected all_reduce")]),
                       evidence=evidence, data=data)


class GpuPeerAccessMissing(_CollectivesCheck):
    id = "gpu-peer-access-missing"
    title = "Direct peer access between each pair of GPUs"
    severity = Severity.MEDIUM

    def run(self, facts):
        results = _results(facts)
        if results is None:
            return self.skip(NOT_RUN)
        peers = results.get("peers") or {}
        matrix = peers.get("matrix")
        if not matrix:
            return self.skip("the peer-access matrix was not measured (needs two or more GPUs)")
        n = len(matrix)
        missing = [(i, j) for i in range(n) for j in range(n) if i != j and matrix[i][j] is False]
        unknown = [(i, j) for i in range(n) for j in range(n) if i != j and matrix[i][j] is None]
        rows = ["     " + " ".join(f"{j:>3}" for j in range(n))]
        for i in range(n):
            rows.append(f"{i:>3}: " + " ".join("  -" if i == j else ("yes" if matrix[i][j] else
                                                                     (" no" if matrix[i][j] is False else "  ?"))
                                               for j in range(n)))
        evidence = ["torch.cuda.can_device_access_peer(src, dst), src per row:"] + rows
        copies = {(c.get("src"), c.get("dst")): c for c in peers.get("copies") or []}
        if missing:
            names = [d.get("name") for d in (results.get("probe") or {}).get("devices") or results.get("devices") or []]
            nvlink = expectations.family(names) == "nvlink4"
            for i, j in missing[:8]:
                c = copies.get((i, j)) or {}
                if c.get("gbs"):
                    evidence.append(f"GPU {i} -> GPU {j}: no peer access; copy measured {c['gbs']:.1f} GB/s (through host)")
            status = Status.FAIL if nvlink else Status.WARN
            return self.finding(
                status,
                f"{len(missing)} of {n * (n - 1)} GPU pairs have no direct peer access: "
                + ", ".join(f"{i}->{j}" for i, j in missing[:8]) + (" ..." if len(missing) > 8 else ""),
                evidence=evidence,
                remediation=[
                    "Without peer access NCCL/RCCL stage traffic through host memory: expect a fraction of the bandwidth.",
                    "Check the IOMMU mode (iommu=pt, see iommu-multi-gpu-hang-risk) and PCIe ACS in the BIOS; on "
                    "consumer NVIDIA cards peer access over PCIe is often disabled by the driver.",
                    "Whether these GPUs sit in a virtual machine could not be told from here: GPUs passed through "
                    "to one separately reach each other only where the hypervisor exposes peer access.",
                ],
                data={"missing": missing, "matrix": matrix},
            )
        if unknown:
            return self.info(f"peer access could not be queried for {len(unknown)} pair(s)", evidence=evidence)
        return self.ok(f"all {n * (n - 1)} GPU pairs have direct peer access", evidence=evidence)


class NcclTransportDisabled(Check):
    id = "nccl-transport-disabled"
    title = "NCCL/RCCL transports turned off by an environment variable"
    area = "multi-gpu"
    severity = Severity.MEDIUM
    requires = (ENV_KNOWN,)

    def run(self, facts):
        settings = transport_settings(facts.env or {})
        if not settings:
            return self.ok("no NCCL/RCCL variable disables a transport or forces an algorithm")
        findings = []
        for s in settings:
            message = f"{s['name']}={s['value']}: {s['effect']}"
            remedy = [f"Keep {s['name']} only if it was set on purpose for this machine; remove it from job scripts "
                      "too."]
            if s["level"] == "warn":
                findings.append(self.warn(message, subject=s["name"], remediation=remedy, data=s,
                                          fix=S.unset_where_set(s["name"], set_in_rc_file(facts, s["name"]))))
            else:
                findings.append(self.info(message, subject=s["name"], data=s,
                                          remediation=[] if s["name"] == "NCCL_NVLS_ENABLE" else [
                                              f"Unset {s['name']} unless it was set on purpose for this machine."]))
        return findings


IOMMU_ON = ("amd_iommu=on", "intel_iommu=on", "iommu=on", "iommu=force", "iommu=nopt")
IOMMU_OFF = ("amd_iommu=off", "intel_iommu=off", "iommu=off")


class IommuMultiGpuHangRisk(Check):
    id = "iommu-multi-gpu-hang-risk"
    title = "The IOMMU mode and its risk of multi-GPU hangs (AMD)"
    area = "multi-gpu"
    severity = Severity.HIGH
    platforms = (Platform.LINUX,)
    requires = (LINUX_KERNEL_CMDLINE,)

    @staticmethod
    def amd_gpu_count(facts) -> int:
        counts = []
        inventory = facts.get(GPU_INVENTORY)
        if isinstance(inventory, list):
            counts.append(len(inventory))
        nodes = facts.get(KFD_NODES)
        if isinstance(nodes, list):
            counts.append(sum(1 for n in nodes if n.get("kind") == "gpu"))
        if facts.get(TORCH_HIP) and isinstance(facts.get(TORCH_DEVICE_COUNT), int):
            counts.append(facts.get(TORCH_DEVICE_COUNT))
        return max(counts, default=0)

    def run(self, facts):
        cmdline = facts[LINUX_KERNEL_CMDLINE] or {}
        gpus = self.amd_gpu_count(facts)
        if gpus < 2:
            return self.skip(f"needs two or more AMD GPUs (found {gpus})")
        tokens = str(cmdline.get("raw") or "").split()
        iommu = [t for t in tokens if "iommu" in t]
        amdgpu = [t for t in tokens if t.startswith("amdgpu.")]
        evidence = [f"kernel command line IOMMU settings: {' '.join(iommu) or '(none)'}"]
        if amdgpu:
            evidence.append(f"amdgpu parameters on the command line: {' '.join(amdgpu)}")
        data = {"iommu": iommu, "amdgpu": amdgpu, "amd_gpus": gpus}
        remedy = ["Or turn the IOMMU off in the BIOS if nothing else on the machine needs it."]
        if "iommu=pt" in tokens:
            return self.ok(f"iommu=pt is set ({gpus} AMD GPUs)", evidence=evidence, data=data)
        if any(t in tokens for t in IOMMU_OFF):
            return self.ok(f"the IOMMU is turned off on the kernel command line ({gpus} AMD GPUs)",
                           evidence=evidence, data=data)
        on = [t for t in tokens if t in IOMMU_ON]
        if on:
            fix, alternatives = kernel_parameter_steps(facts, "iommu=pt", "let the GPUs' DMA bypass IOMMU translation")
            return self.warn(f"{' '.join(on)} without iommu=pt on a machine with {gpus} AMD GPUs: AMD lists "
                             "application hangs on multi-GPU systems with the IOMMU translating DMA",
                             evidence=evidence, remediation=remedy, data=data, fix=fix, alternatives=alternatives)
        return self.info(f"no IOMMU mode on the kernel command line ({gpus} AMD GPUs): the firmware/kernel default "
                         "applies; if multi-GPU work hangs, add iommu=pt", evidence=evidence, data=data,
                         remediation=["If multi-GPU work hangs: add iommu=pt to the kernel command line "
                                      "(/etc/default/grub, or grubby on Fedora/RHEL) and reboot."])
