"""The one pipeline every command runs: observe (or replay) → interpret → checks → stages → relations →
Diagnosis. `check`, `report`, `fix`, `kernels` and `bench` differ only in the options and stages they pass: a
stage-only command (`kernels`, `bench`, `bench --collectives`) asks for the scope "stages", which observes only the
environment, the platform and the target interpreter and judges only what its stages measured."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from rocm_doctor import inputfile
from rocm_doctor.engine import diagnosis, relations
from rocm_doctor.engine.shells import detect_shell
from rocm_doctor.engine.engine import Selection, run_checks, validate_selection
from rocm_doctor.engine.pipeline import Progress, Stage, run_stages
from rocm_doctor.engine.registry import Registry, load_registry
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import LOG_KEY as USER_LOG_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import interpret, interpreter_modules, run_env
from rocm_doctor.probes import ProbeContext, TargetError, choose_python, collect, detect_os
from rocm_doctor.report import versions
from rocm_doctor.report.model import Report

MACHINE, STAGES = "machine", "stages"  # what a request observes and judges (Options.scope)
LIVE_STATE = "gpu-state"  # the area of the checks that judge what each GPU is doing now


@dataclass
class Options:
    python: Optional[str] = None
    from_file: Optional[Path] = None
    only: Sequence[str] = ()
    skip: Sequence[str] = ()
    torch_timeout_s: float = 60.0
    command_timeout_s: float = 10.0
    env: Optional[Mapping[str, str]] = None
    log: Optional[dict] = None  # a user's log to match against known errors (`check --log`), kept in the snapshot
    online: bool = False  # probe the package index reachability (`--online`)
    stages: Sequence[Stage] = ()  # GPU stages to run after the checks (rocm_doctor.stages); a replay re-reads all
    progress: Progress = None  # told what a stage is doing, for a terminal that would otherwise stay blank
    run_target: Optional[dict] = None  # --unit / --user-unit / --kernel: {kind, name, scope} (probes/run_env.py)
    meanwhile: Optional[Callable[[], None]] = None  # the caller's work while the probes run (importing its format)
    # STAGES: a command for its stages alone; no probe runs, no skip reason is asked, and the checks that judge are
    # those requiring the stages' facts plus the checks of `areas`
    scope: str = MACHINE
    areas: Sequence[str] = ()
    watch: bool = True  # sample the live GPU state around the stages (a live run with stages)


def observe(options: Options, meanwhile: Optional[Callable[[], None]] = None) -> Observations:
    """Live collection, a stage-only command's few observations, or the snapshot given with --from (raises
    SnapshotError / TargetError on bad input). `meanwhile` runs while the probes wait on their commands; where no
    probe runs, it runs first.

    A log given with `check --log` joins the observations either way, so a maintainer can replay a user's snapshot
    together with the user's log.
    """
    if options.from_file is None and options.scope == MACHINE:
        observations = _collect_live(options, meanwhile)
    else:
        if meanwhile is not None:
            meanwhile()
        observations = load_snapshot(options.from_file) if options.from_file is not None else _observe_scope(options)
    if options.log is not None:
        observations.add_probe(USER_LOG_KEY, options.log)
    return observations


def load_snapshot(path: Path) -> Observations:
    """A snapshot or report file, read bounded (rocm_doctor.inputfile); raises SnapshotError with one line."""
    try:
        raw = inputfile.read(path)
    except inputfile.InputError as exc:
        raise snapshot.SnapshotError(str(exc)) from None
    return snapshot.parse(raw, str(path))


def _observe_scope(options: Options) -> Observations:
    """What a stage-only command observes: the environment, the platform and the interpreter the stages run in
    (raises TargetError for a bad --python), and for a watched stage the GPU's live state before it starts, so what
    else computes on the GPU or holds its clocks is judged as `check` judges it and explains the figures it lowers."""
    env = _env(options)
    python, reason = choose_python(options.python, env)
    platform_os = detect_os()
    observations = Observations(platform={"os": platform_os}, env=env, target={"python": python, "reason": reason})
    if options.watch and LIVE_STATE in options.areas:
        before = Observations.from_dict(_sampler(env, platform_os)())
        observations.commands.update(before.commands)
        observations.files.update(before.files)
        observations.probes.update(before.probes)
    return observations


def _collect_live(options: Options, meanwhile: Optional[Callable[[], None]]) -> Observations:
    env = _env(options)
    python, reason = choose_python(options.python, env)
    context = ProbeContext(
        python=python,
        python_reason=reason,
        platform_os=detect_os(),
        env=env,
        command_timeout_s=options.command_timeout_s,
        torch_timeout_s=options.torch_timeout_s,
        online=options.online,
        run_target=options.run_target,
        python_given=bool(options.python),
    )
    observations = collect(context, meanwhile)
    problem = run_env.problem_of(observations) if options.run_target else None
    if problem:
        raise TargetError(problem)
    return observations


def diagnose(options: Options) -> tuple[Report, Facts]:
    selection = Selection(only=tuple(options.only), skip=tuple(options.skip))
    loaded: list = []

    def load_judges() -> None:
        """Import the checks, the interpreters and what the caller asks for: the doctor's own slowest start-up
        work, done while the probes wait on the torch child."""
        loaded.append(load_registry())
        interpreter_modules({})  # import errors are recorded when interpret() lists them again
        if options.meanwhile is not None:
            options.meanwhile()

    if selection.only or selection.skip:
        load_judges()
        validate_selection(loaded[0], selection)  # before any probing: a typo should fail fast
    if options.from_file is None and options.run_target is None:
        # a service's interpreter is known only later; a stage-only command overlaps loading the checks instead
        _start_early(options)
    try:
        if options.scope == MACHINE:
            _say(options, f"reading {options.from_file}" if options.from_file is not None else
                 "probing the machine: the GPU tools, driver and library files, and torch in the target interpreter")
        observations = observe(options, None if loaded else load_judges)
        _probes_done(options, observations)
        registry = loaded[0]
        source = str(options.from_file) if options.from_file else "live"
        if options.scope == MACHINE:
            _say(options, f"judging what was seen: {len(registry.checks)} checks")
        return _judge(observations, registry, selection, options, source)
    finally:
        for stage in options.stages:
            stage.discard_early()


def _start_early(options: Options) -> None:
    """Let the stages begin what needs no facts (the kernel suite's children import torch) while the probes run."""
    env = _env(options)
    try:
        python, _ = choose_python(options.python, env)
    except Exception:  # observing raises the same error with its message
        return
    for stage in options.stages:
        stage.start_early(python, env)


def _probes_done(options: Options, observations: Observations) -> None:
    """Tell the stages the probes have ended, with the sampler their watched run will use (what _start_early
    began ran in the doctor's own environment, the one the stages are then judged in)."""
    sample = None
    if options.from_file is None and options.run_target is None and options.stages and options.watch:
        sample = _sampler(_env(options), observations.platform.get("os") or detect_os())
    for stage in options.stages:
        stage.probes_done(sample)


def _env(options: Options) -> dict[str, str]:
    """The environment a request observes and its stages run in: the doctor's own unless the caller gave one."""
    return dict(os.environ if options.env is None else options.env)


def _say(options: Options, text: str) -> None:
    """Tell the progress line (when there is one) what the run is doing now."""
    if options.progress is not None:
        options.progress(text)


def replay(observations: Observations, source: str, options: Optional[Options] = None) -> tuple[Report, Facts]:
    """Recorded observations (a stored run, a snapshot) judged by today's parsers and checks, as `check --from`;
    with a stage-only `options`, a stage result recorded elsewhere (the world's collectives) judged as its command
    would."""
    return _judge(observations, load_registry(), Selection(), options or Options(), source)


def judge_recorded(stage: Stage, result: dict, env: Optional[Mapping[str, str]] = None,
                   source: str = "recorded") -> tuple[Report, Facts]:
    """A stage result measured elsewhere (the world's collectives that torchrun gathered, a stored benchmark)
    judged as the stage-only command that measures it would, in the environment `env` it ran in."""
    observations = Observations(env=dict(env or {}), probes={stage.probe_key: result})
    return replay(observations, source, Options(scope=STAGES, stages=[stage]))


def _judge(observations: Observations, registry, selection: Selection, options: Options,
           source: str) -> tuple[Report, Facts]:
    facts = interpret(observations)
    live, scoped = source == "live", options.scope == STAGES
    findings = run_checks(_of_areas(registry, options.areas) if scoped else registry, facts, selection)
    if scoped or live:
        stage_list = list(options.stages)
    else:
        from rocm_doctor.stages import replayed

        stage_list = replayed()
    sample = _sampler(facts.env, facts.os) if live and stage_list and options.watch else None
    staged = run_stages(stage_list, registry, facts, findings, selection, replay=not live,
                        progress=options.progress, sample=sample, asked=scoped)
    findings = relations.link(staged.findings, registry.checks, facts)
    report = Report(
        findings=findings,
        diagnosis=diagnosis.build(findings, no_gpu=diagnosis.no_gpu_seen(facts)),
        stages=staged.stages,
        target={**observations.target, "shell": detect_shell(facts.shell_env, facts.os),
                **run_env.report_target(facts)},
        platform={k: observations.platform.get(k) for k in ("os", "system", "release", "machine")},
        source=source,
        versions=versions.build(facts.values_dict(), facts.missing_dict()),
    )
    return report, facts


def _of_areas(registry: Registry, areas: Sequence[str]) -> Registry:
    """The registry cut to the checks of `areas` (its load problems kept): a stage-only command's static checks."""
    return Registry(checks=[c for c in registry.checks if c.area in areas], problems=registry.problems)


def _sampler(env: Mapping[str, str], platform_os: str):
    """Samples of the live GPU state: the one before a watched stage-only command, and those a live run's stages
    run between (the same tools the live-state probe uses)."""
    from rocm_doctor.probes.gpu_sample import sampler

    return sampler(env, platform_os)
