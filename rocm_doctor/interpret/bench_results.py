"""The `bench.results` fact in the interpret pass (rocm_doctor.gpu.bench.facts.interpret): without results the
bench checks' skips say how to run the benchmark instead of "not collected"; `check --bench` and a replayed
snapshot with results re-judge them in rocm_doctor.gpu.bench.facts.attach as before."""

from __future__ import annotations

from rocm_doctor.gpu.bench.facts import interpret

__all__ = ["interpret"]
