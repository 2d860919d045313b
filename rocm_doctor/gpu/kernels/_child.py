"""Runs operator cases in the *target* interpreter and prints one JSON line per event, flushed.

Stand-alone on purpose (standard library and torch only): the target environment need not have rocm-doctor
installed. Reads a JSON payload from stdin:

  device          "cuda" (the GPU; also ROCm) or "cpu"
  only            categories to run (list) or null
  cases           case names to run (list) or null for all
  exclude         case names to leave out
  extra_modules   paths of extra case files (tests inject faulty cases this way); they may
                  `from _doctor_cases import case`
  profile         run cases marked `profile` under torch's profiler and report their device kernels and backend
                  ops (event "profiles", after the last case and after a case that failed)
  case_timeout_s  a watchdog (faulthandler, independent of the GIL) ends the process when one case exceeds it
  seed            base seed for the inputs
  gate, gate_s    a file to wait for (at most gate_s seconds) after importing torch and before touching the GPU:
                  a child started ahead of its turn, while another computes
  hold, hold_s    a file to wait for (at most hold_s seconds) before the first case; on NVIDIA the driver
                  starts meanwhile
  workdir         the folder to compute from once torch is imported

Events (key "event"): start, hello (torch and devices), plan (the cases), begin (before each case), result
(after each), profiles (each attributed case's kernels and ops), fatal (nothing can run), done. When the process
dies, the last "begin" without a "result" names the case that killed it.
"""

import contextlib
import faulthandler
import functools
import importlib.util
import math
import os
import sys
import time
import traceback
import warnings
import zlib


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()
childlib.leave_script_folder(__file__)
emit = childlib.Emitter("event")
suite_profile = childlib.load_sibling(__file__, "_profile.py")
error_text = functools.partial(childlib.error_text, limit=2000)

BASE_TOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2, "int64": 0.0, "int32": 0.0}
TF32_TOL = 5e-3


class Unavailable(Exception):
    """The case cannot run here (feature missing, GPU-only case on the CPU device); carries the reason."""


class Ctx:
    """What a case's build function gets: torch, the device, the dtype, and seeded input makers."""

    Unavailable = Unavailable

    def __init__(self, torch, device, dtype_name, seed):
        self.torch = torch
        self.F = torch.nn.functional
        self.device = device
        self.device_type = torch.device(device).type
        self.dtype_name = dtype_name
        self.dtype = getattr(torch, dtype_name, None) if dtype_name in BASE_TOL else torch.float32
        self.gen = torch.Generator().manual_seed(seed)
        # Drawn in float32 where the case's dtype holds no more: the same numbers once rounded to it, and the
        # CPU draws them about five times faster than float64 ones (seconds over the suite's inputs).
        narrow = self.dtype in (torch.float32, torch.float16, torch.bfloat16)
        self.draw = torch.float32 if narrow else torch.float64

    def _round(self, x):
        if self.dtype is not None and self.dtype.is_floating_point and self.dtype != self.torch.float64:
            return x.to(self.dtype).double()
        return x

    def randn(self, *shape, scale=1.0):
        return self._round(self.torch.randn(*shape, generator=self.gen, dtype=self.draw).double() * scale)

    def rand(self, *shape):
        return self._round(self.torch.rand(*shape, generator=self.gen, dtype=self.draw).double())

    def randint(self, low, high, shape):
        return self.torch.randint(low, high, shape, generator=self.gen)

    def dev(self, x, dtype=None):
        return x.to(device=self.device, dtype=dtype or self.dtype)

    @staticmethod
    def backward(out, grad):
        """The same gradients as out.backward(grad) (d sum(out * grad) / d out is grad), without handing torch a
        gradient tensor: for one it imports its symbolic-shapes module and sympy, seconds in a fresh process."""
        (out * grad).sum().backward()

    def sync(self):
        if self.device_type == "cuda":
            self.torch.cuda.synchronize()

    def unavailable(self, reason):
        raise Unavailable(reason)


def all_cases(torch, payload, device_type, device_count):
    builtin = childlib.load_sibling(__file__, "_cases.py")
    cases = list(builtin.CASES) + list(builtin.dynamic_cases(torch, device_type, device_count))
    for index, path in enumerate(payload.get("extra_modules") or []):
        module = childlib.load_module(path, "_doctor_extra_cases_%d" % index)
        cases.extend(getattr(module, "CASES", []))
        if hasattr(module, "dynamic_cases"):
            cases.extend(module.dynamic_cases(torch, device_type, device_count))
    return cases


def select(cases, payload):
    only = set(payload.get("only") or [])
    names = payload.get("cases")
    exclude = set(payload.get("exclude") or [])
    chosen = []
    for case in cases:
        if only and case["category"] not in only:
            continue
        if names is not None and case["name"] not in names:
            continue
        if case["name"] in exclude:
            continue
        chosen.append(case)
    if names is not None:  # keep the order the parent asked for
        order = {name: i for i, name in enumerate(names)}
        chosen.sort(key=lambda c: order.get(c["name"], len(order)))
    return chosen


def describe(torch, device_type):
    version = getattr(torch, "version", None)
    hip, cuda = getattr(version, "hip", None), getattr(version, "cuda", None)
    info = {
        "torch": torch.__version__,
        "hip": hip,
        "cuda": cuda,
        "vendor": "cpu" if device_type == "cpu" else ("amd" if hip else "nvidia"),
    }
    try:
        info["matmul_allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
        info["cudnn_allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
        info["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    except Exception:
        pass
    if device_type == "cuda":
        devices = []
        for index in range(torch.cuda.device_count()):
            try:
                props = torch.cuda.get_device_properties(index)
                devices.append({
                    "index": index,
                    "name": props.name,
                    "arch": ((getattr(props, "gcnArchName", None) if hip else None)
                             or "sm_%d%d" % (props.major, props.minor)),
                    "total_memory": props.total_memory,
                })
            except Exception as exc:
                devices.append({"index": index, "error": error_text(exc)})
        info["devices"] = devices
        for key, getter in (
            ("cudnn_version", lambda: torch.backends.cudnn.version()),
            ("preferred_blas_library", lambda: str(torch.backends.cuda.preferred_blas_library())),
            ("flash_sdp_enabled", lambda: torch.backends.cuda.flash_sdp_enabled()),
            ("mem_efficient_sdp_enabled", lambda: torch.backends.cuda.mem_efficient_sdp_enabled()),
            ("cudnn_sdp_enabled", lambda: torch.backends.cuda.cudnn_sdp_enabled()),
            ("math_sdp_enabled", lambda: torch.backends.cuda.math_sdp_enabled()),
            ("is_flash_attention_available", lambda: torch.backends.cuda.is_flash_attention_available()),
        ):
            try:
                info[key] = getter()
            except Exception:
                pass
    return info


def to_pairs(outcome):
    if isinstance(outcome, dict):
        return list(outcome.get("pairs") or [])
    if isinstance(outcome, tuple) and len(outcome) == 2 and not isinstance(outcome[0], tuple):
        return [outcome]
    return list(outcome)


def relative_error(torch, out, ref):
    """‖out − ref‖ / ‖ref‖ in float64 on the CPU; (error, note). Non-finite output gives nan."""
    if not isinstance(out, torch.Tensor):
        out = torch.as_tensor(out)
    if not isinstance(ref, torch.Tensor):
        ref = torch.as_tensor(ref)
    o = out.detach().cpu()
    r = ref.detach().cpu()
    complex_ = o.is_complex() or r.is_complex()
    o = o.to(torch.complex128 if complex_ else torch.float64)
    r = r.to(torch.complex128 if complex_ else torch.float64)
    if tuple(o.shape) != tuple(r.shape):
        return float("inf"), "shape %s, expected %s" % (tuple(o.shape), tuple(r.shape))
    if o.numel() == 0:
        return 0.0, None
    if not bool(torch.isfinite(o).all()):
        bad = int((~torch.isfinite(o)).sum())
        return float("nan"), "%d non-finite value(s) in the output" % bad
    diff = float(torch.linalg.vector_norm((o - r).flatten()))
    den = float(torch.linalg.vector_norm(r.flatten()))
    return (diff / den if den > 0 else diff), None


def run_case(torch, case, payload, device, device_type, profiles):
    name = case["name"]
    record = {"case": name, "category": case["category"], "dtype": case["dtype"]}
    tol = case.get("tol")
    if tol is None:
        tol = BASE_TOL.get(case["dtype"], 1e-4)
    if case.get("tf32") and device_type != "cpu" and case["dtype"] == "float32":
        tol = max(tol, TF32_TOL)
    if case.get("gpu_only") and device_type == "cpu":
        record.update(outcome="unavailable", reason="needs a CUDA/ROCm device; this run uses the CPU device")
        return record
    seed = int(payload.get("seed", 1234)) + zlib.crc32(name.encode("utf-8")) % 100000

    def seeded():
        torch.manual_seed(seed)
        return Ctx(torch, device, case["dtype"], seed)

    ctx = seeded()
    started = time.perf_counter()
    attributed = payload.get("profile", True) and case.get("profile")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with profiles.case(name) if attributed else contextlib.nullcontext():
                    outcome = case["build"](ctx)
                    ctx.sync()
            except Exception as exc:
                if not attributed or not suite_profile.profiler_fault(error_text(exc)):
                    raise
                profiles.abandon(error_text(exc))  # the profiler failed, not the operator: run it again without
                ctx = seeded()
                outcome = case["build"](ctx)
                ctx.sync()
            errors, notes = [], []
            explicit = outcome.get("error") if isinstance(outcome, dict) else None
            if explicit is not None:
                errors.append(float(explicit))
            for out, ref in to_pairs(outcome):
                err, note = relative_error(torch, out, ref)
                errors.append(err)
                if note:
                    notes.append(note)
        warning_texts = []
        for w in caught:
            text = str(w.message).strip()
            if text and text not in warning_texts:
                warning_texts.append(text[:500])
    except Unavailable as exc:
        profiles.drop(name)
        record.update(outcome="unavailable", reason=str(exc), seconds=round(time.perf_counter() - started, 4))
        return record
    except Exception as exc:
        record.update(
            outcome="error",
            error=error_text(exc),
            traceback=traceback.format_exc(limit=6)[-3000:],
            seconds=round(time.perf_counter() - started, 4),
        )
        return record
    if isinstance(outcome, dict) and outcome.get("tol") is not None:
        tol = float(outcome["tol"])
    worst = max(errors) if errors else float("nan")
    if any(math.isnan(e) for e in errors):
        worst = float("nan")
    finite = math.isfinite(worst)
    passed = finite and worst <= tol
    record.update(
        outcome="ok" if passed else "wrong",
        rel_err=worst if finite else None,
        rel_err_text="%.3g" % worst,
        tol=tol,
        seconds=round(time.perf_counter() - started, 4),
    )
    if notes:
        record["notes"] = notes
    if warning_texts:
        record["warnings"] = warning_texts[:6]
    if isinstance(outcome, dict) and outcome.get("info"):
        record["info"] = outcome["info"]
    return record


def emit_profiles(profiles, timeout):
    """End the attribution session and print what it recorded per case (event "profiles"), with the seconds that
    reading it took."""
    started = time.monotonic()
    with childlib.deadline(timeout):
        found = profiles.finish()
    if found:
        emit("profiles", cases=found, seconds=round(time.monotonic() - started, 3))


def bound_threads(torch):
    """Half the usable cores, 8 at most, for the CPU references. With torch's default of a thread per core, one
    other busy core made the cases 6x slower on a 16-core host, and the doctor's own judging slowed them in `check`;
    with 8 threads they took about the same alone and beside a busy core (docs/measurements.md). A smaller setting
    of the user's is kept."""
    try:  # a torch without thread control keeps its own
        threads = max(1, min(8, childlib.usable_cores() // 2, torch.get_num_threads()))
        torch.set_num_threads(threads)
    except Exception:
        return None
    return threads


def main():
    faulthandler.enable()
    payload = childlib.read_payload()
    emit("start", python=sys.version.split()[0], executable=sys.executable, pid=os.getpid())
    started = time.monotonic()
    driver, driver_start = childlib.start_driver(payload.get("device") or "cuda", gated=bool(payload.get("gate")))
    try:
        import torch
    except BaseException as exc:
        emit.finish("fatal", stage="import", error=error_text(exc))
        return
    import_s = round(time.monotonic() - started, 3)
    childlib.enter_work_folder(payload.get("workdir"))
    cpu_threads = bound_threads(torch)
    if driver is not None:
        driver_start["before_import_ended"] = not driver.is_alive()
    if payload.get("gate") and not childlib.wait_for(payload["gate"], payload.get("gate_s", 600)):
        emit.finish("fatal", stage="gate", error="started ahead of its turn, and its turn never came")
        return
    held_s = None
    if payload.get("hold"):  # unlike a gate, the driver may start during the import; it only waits to compute
        held = time.monotonic()
        childlib.wait_for(payload["hold"], payload.get("hold_s", 120))
        held_s = round(time.monotonic() - held, 3)
    device = payload.get("device") or "cuda"
    device_type = device.split(":")[0]
    if device_type not in ("cuda", "cpu"):
        emit.finish("fatal", stage="device", error="unsupported device %r (use cuda or cpu)" % device)
        return
    if device_type == "cuda":
        try:
            available = torch.cuda.is_available()
        except Exception:
            available = False
        if not available:
            emit.finish("fatal", stage="device",
                        error="torch.cuda.is_available() is False: no GPU visible to this torch")
            return
    count = torch.cuda.device_count() if device_type == "cuda" else 0
    started_driver = {"driver_start": dict(driver_start)} if driver_start is not None else {}
    emit("hello", import_s=import_s, held_s=held_s, device=device, device_type=device_type, device_count=count,
         cpu_threads=cpu_threads, **started_driver, **describe(torch, device_type))
    try:
        cases = select(all_cases(torch, payload, device_type, count), payload)
    except Exception as exc:
        emit.finish("fatal", stage="cases", error=error_text(exc), traceback=traceback.format_exc(limit=6))
        return
    emit("plan", cases=[{"name": c["name"], "category": c["category"], "dtype": c["dtype"],
                         "core": bool(c.get("core")), "log": bool(c.get("log"))} for c in cases])
    timeout = float(payload.get("case_timeout_s") or 60)
    suite_started = time.monotonic()
    profiles = suite_profile.SuiteProfile(torch, device_type == "cuda", childlib, error_text)
    for case in suite_profile.attributed_last(cases, payload.get("profile", True)):
        emit("begin", case=case["name"], timeout_s=timeout)
        with childlib.deadline(timeout):
            record = run_case(torch, case, payload, device, device_type, profiles)
        emit("result", **record)
        if record["outcome"] in ("wrong", "error"):
            # A failed case's kernels are what a user needs most: read them now, in case a later case kills the
            # child before the session ends.
            emit_profiles(profiles, timeout)
    emit_profiles(profiles, timeout)
    emit("done", seconds=round(time.monotonic() - started, 3), suite_s=round(time.monotonic() - suite_started, 3))


if __name__ == "__main__":
    main()
    childlib.exit_now()
