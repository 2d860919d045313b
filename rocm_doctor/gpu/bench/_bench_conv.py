"""The convolution section: forward and backward of common conv shapes per dtype and memory layout, the first call
against later calls, the kernels the library chose (profiler names), cudnn.benchmark off and on, and on ROCm
MIOpen's find mode as set, its user database and a log of what it chose. Loaded by path by _bench_child.py.

Each pass runs in a fresh process (this child started again with one `conv_pass` section), because what is
measured is first use: the conv algorithm caches of torch, cuDNN and MIOpen live for a process, and MIOpen reads
its find mode once per process. With `in_process`, the first pass (default or benchmark, not a second process or
the logged one) runs in the benchmark's own process instead, when no section that convolves has begun in it: the
first use is the same, without a second torch import. Each fresh process is started while the pass before it
measures: it imports torch and waits at its gate, touching the GPU only when its turn comes.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from _doctor_bench_common import emit, error_text, free_memory, measure
from _doctor_bench_profile import profile

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bench_child.py")
LOG_ENV = {"MIOPEN_ENABLE_LOGGING": "1", "MIOPEN_LOG_LEVEL": "5"}
LOG_CAP = 64 * 1024
STARTUP_S = 20.0  # of a pass's time, kept for its torch import and GPU initialisation
CONVOLVING = ("cnn", "compare", "sweep")  # sections that run convolutions, so a later first use is not the first
FIRST_USE = ("default", "benchmark")  # passes that may run in the benchmark's process (no second process, no log)
DB_SUFFIXES = (".ufdb.txt", ".fdb.txt", ".updb.txt", ".udb", ".ukdb", ".kdb", ".db")
DEFAULT_SHAPES = [
    {"name": "SimpleCNN conv1", "n": 64, "c": 3, "k": 16, "h": 32, "w": 32, "r": 3, "pad": 1},
    {"name": "SimpleCNN conv2", "n": 64, "c": 16, "k": 32, "h": 16, "w": 16, "r": 3, "pad": 1},
    {"name": "3x3", "n": 32, "c": 64, "k": 64, "h": 128, "w": 128, "r": 3, "pad": 1},
    {"name": "1x1", "n": 32, "c": 256, "k": 64, "h": 56, "w": 56, "r": 1, "pad": 0},
    {"name": "depthwise", "n": 32, "c": 256, "k": 256, "h": 56, "w": 56, "r": 3, "pad": 1, "groups": 256},
]


def conv_work(shape, itemsize):
    """FLOPs of forward + input gradient + weight gradient (each 2*N*K*(C/g)*R*S*Ho*Wo), and the fewest bytes
    the three must move (each tensor read twice and its gradient or output written once)."""
    n, c, k, h, w, r = (int(shape[key]) for key in ("n", "c", "k", "h", "w", "r"))
    groups, pad, stride = int(shape.get("groups", 1)), int(shape.get("pad", 0)), int(shape.get("stride", 1))
    ho, wo = (h + 2 * pad - r) // stride + 1, (w + 2 * pad - r) // stride + 1
    flops = 3 * 2.0 * n * k * (c // groups) * r * r * ho * wo
    elements = n * c * h * w + n * k * ho * wo + k * (c // groups) * r * r
    return flops, 3.0 * elements * itemsize, (ho, wo)


def db_files(path, limit=40, sample=16 * 1024):
    """The database and kernel-cache files under `path` (two levels); for a text find database its record count
    and its last `sample` bytes (whole lines), which the parent parses for the solvers stored."""
    files = []
    for root, dirs, names in os.walk(path):
        if root[len(path):].count(os.sep) >= 2:
            dirs[:] = []
        for name in sorted(names):
            if name.endswith(DB_SUFFIXES) and len(files) < limit:
                full = os.path.join(root, name)
                entry = {"name": os.path.relpath(full, path), "bytes": os.path.getsize(full)}
                if name.endswith(".ufdb.txt") and entry["bytes"] < (16 << 20):
                    with open(full, "rb") as handle:
                        data = handle.read()
                    entry["records"] = sum(1 for line in data.splitlines() if b"=" in line)
                    tail = data[-sample:]
                    entry["sample"] = (tail if len(data) <= sample else tail.partition(b"\n")[2]).decode(
                        "utf-8", "replace")
                files.append(entry)
    return files


def db_folders(env):
    """MIOpen's user database and kernel cache folders: where, writable, and which database files they hold."""
    home = env.get("HOME") or env.get("USERPROFILE") or ""
    out = {}
    for variable, default in (("MIOPEN_USER_DB_PATH", (".config", "miopen")),
                              ("MIOPEN_CUSTOM_CACHE_DIR", (".cache", "miopen"))):
        path = env.get(variable) or (os.path.join(home, *default) if home else "")
        if not path:
            continue
        path = os.path.expanduser(path)
        info = {"path": path, "source": "env" if env.get(variable) else "default", "exists": os.path.isdir(path)}
        probe = path
        while probe and not os.path.exists(probe) and os.path.dirname(probe) != probe:
            probe = os.path.dirname(probe)
        info["writable"] = bool(probe and os.path.isdir(probe) and os.access(probe, os.W_OK | os.X_OK))
        try:
            info["files"] = db_files(path) if info["exists"] else []
        except OSError as exc:
            info["error"] = error_text(exc)
        out[variable] = info
    return out


def conv_env(ctx):
    torch = ctx.torch
    cudnn = torch.backends.cudnn
    record = {"is_hip": ctx.is_hip, "cudnn_available": bool(cudnn.is_available()), "cudnn_enabled": bool(cudnn.enabled),
              "benchmark": bool(cudnn.benchmark), "deterministic": bool(cudnn.deterministic),
              "allow_tf32": bool(getattr(cudnn, "allow_tf32", False))}
    try:
        record["cudnn_version"] = cudnn.version()
    except Exception as exc:
        record["cudnn_version_error"] = error_text(exc)
    for name in sorted(os.environ):
        if name.startswith("MIOPEN_"):  # every MIOpen setting: find mode and enforcement, databases, cache
            record.setdefault("env", {})[name] = os.environ[name]
    return record


def cap(text, limit=LOG_CAP):
    """Head (3/4) and tail (1/4) of a long text, with the number of characters cut."""
    if len(text) <= limit:
        return text, 0
    head, tail = text[: limit * 3 // 4], text[-(limit // 4):]
    return head + "\n[... cut ...]\n" + tail, len(text) - len(head) - len(tail)


class Pending:
    """A pass's fresh process (this child again, with one `conv_pass` section), started ahead of its turn: it
    imports torch and waits at its gate, without touching the GPU, while the pass before it measures. `finish` lets
    it go and re-emits its records with the pass; `timeout` covers the whole process, its start-up included."""

    def __init__(self, ctx, label, params, timeout, extra_env=None):
        self.label, self.extra_env, self.started = label, extra_env or {}, time.monotonic()
        self.folder = tempfile.TemporaryDirectory(prefix="rocm-doctor-conv-")
        self.gate = os.path.join(self.folder.name, "go")
        payload = {"device": "cuda" if ctx.is_cuda else "cpu", "device_index": ctx.device.index or 0,
                   "watchdog": True, "gate": self.gate, "gate_s": timeout,
                   "sections": [{"name": "conv", "kind": "conv_pass", "timeout_s": max(5.0, timeout - STARTUP_S),
                                 "params": params}]}
        stdin = os.path.join(self.folder.name, "payload.json")
        with open(stdin, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        with open(stdin, "rb") as handle:
            self.proc = subprocess.Popen([sys.executable, CHILD], stdin=handle, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, errors="replace",
                                         env=dict(os.environ, **self.extra_env))

    def drop(self):
        """Not run after all: ended before it touched the GPU."""
        self.proc.kill()
        self.proc.communicate()
        self.folder.cleanup()

    def finish(self, timeout, keep_stderr=False):
        """Let it go and wait for it, at most `timeout` s from now."""
        waited = time.monotonic() - self.started
        open(self.gate, "w").close()
        state = "ok"
        try:
            stdout, stderr = self.proc.communicate(timeout=timeout)
            if self.proc.returncode:
                state = "exit %d" % self.proc.returncode
        except subprocess.TimeoutExpired:
            state = "timeout"
            self.proc.kill()
            stdout, stderr = self.proc.communicate()
        self.folder.cleanup()
        measured, startup, setup = 0, None, None
        for line in stdout.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            kind = record.pop("bench", None) if isinstance(record, dict) else None
            if kind == "import":
                startup = record.get("seconds")
            elif kind == "conv_setup":
                setup = record.get("autograd_s")
            elif kind in ("conv", "conv_error", "conv_unmeasured"):
                record.pop("section", None)
                emit(kind, pass_name=self.label, **record)
                measured += kind != "conv_unmeasured"
            elif kind in ("section_error", "section_timeout", "device") and record.get("error"):
                state = "%s: %s" % (kind, record["error"])
        info = {"pass_name": self.label, "state": state, "records": measured, "import_s": startup,
                "seconds": round(time.monotonic() - self.started - waited, 3), "started_ahead_s": round(waited, 3),
                "autograd_setup_s": setup, "env": self.extra_env}
        text, cut = cap(stderr)
        if keep_stderr:
            info.update(log=text, log_cut=cut)
        elif state != "ok":
            info["stderr_tail"] = text[-2000:]
        emit("conv_pass", **info)


def start(ctx, passes, index, left):
    """The fresh process of passes[index], started now; None past the last."""
    if index >= len(passes):
        return None
    label, options = passes[index]
    return Pending(ctx, label, options, max(left, 1.0), extra_env=LOG_ENV if label == "miopen-log" else None)


def section_conv(ctx, params):
    """The orchestrating side, in the benchmark's own child: the passes share what is left of `budget_s`."""
    started, budget = time.monotonic(), float(params.get("budget_s", 120.0))
    emit("conv_env", **conv_env(ctx))
    miopen = ctx.is_hip or bool(params.get("miopen"))
    if miopen:
        emit("conv_db", when="before", folders=db_folders(os.environ))
    sizes = {k: params[k] for k in ("shapes", "dtypes", "layouts", "rep_ms", "max_iters", "profile") if k in params}
    passes = [("default", dict(sizes, benchmark=False))]
    if miopen:  # the find database a first process filled serves the next one, when MIOpen could write it
        passes.append(("default-again", dict(sizes, benchmark=False, profile=False)))
    passes.append(("benchmark", dict(sizes, benchmark=True, profile=False,
                                     pass_budget_s=params.get("benchmark_budget_s"))))
    if miopen:
        shapes = [s for s in params.get("shapes", DEFAULT_SHAPES) if s["name"] == params.get("log_shape", "3x3")]
        passes.append(("miopen-log", {"shapes": shapes, "dtypes": params.get("log_dtypes", ["fp32", "fp16"]),
                                      "layouts": ["nchw"], "benchmark": False, "profile": False, "repeats": 1,
                                      "rep_ms": 0}))
    wanted = params.get("passes")
    passes = [(label, options) for label, options in passes if not wanted or label in wanted]
    convolved = [name for name in ctx.sections_run if name in CONVOLVING]
    here = passes.pop(0) if passes and passes[0][0] in FIRST_USE and params.get("in_process") and not convolved \
        else None
    # Each fresh process starts while the pass before it measures, so its torch import is off the clock.
    pending = start(ctx, passes, 0, budget - (time.monotonic() - started))
    if here:
        run_here(ctx, *here)
    for index, (label, _options) in enumerate(passes):
        current, left = pending, budget - (time.monotonic() - started)
        if label == "miopen-log":  # what the timed passes left in the database folders
            emit("conv_db", when="after", folders=db_folders(os.environ))
        pending = start(ctx, passes, index + 1, left)
        if left < STARTUP_S / 2:
            current.drop()
            emit("conv_pass", pass_name=label, state="not run: the section's time budget is used", records=0)
            continue
        current.finish(left, keep_stderr=label == "miopen-log")


def run_here(ctx, label, params):
    """A pass in this process; what a fresh process reports for it, without its start-up."""
    torch, started, measured = ctx.torch, time.monotonic(), 0
    saved = torch.backends.cudnn.benchmark
    try:
        setup = gradient_setup(torch)
        for kind, record in pass_records(ctx, params):
            emit(kind, pass_name=label, **record)
            measured += kind == "conv"
    finally:
        torch.backends.cudnn.benchmark = saved
    emit("conv_pass", pass_name=label, state="ok", seconds=round(time.monotonic() - started, 3), records=measured,
         import_s=None, autograd_setup_s=setup, process="benchmark", env={})


def conv_backend(torch, x, weight, shape):
    try:
        pad, stride, groups = int(shape.get("pad", 0)), int(shape.get("stride", 1)), int(shape.get("groups", 1))
        return str(torch._C._select_conv_backend(x, weight, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0],
                                                 groups)).rsplit(".", 1)[-1]
    except Exception as exc:
        return "unknown (%s)" % error_text(exc)


def one_config(ctx, shape, dname, layout, params):
    torch = ctx.torch
    dtype = ctx.dtype(dname)
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    n, c, k, h, w, r = (int(shape[key]) for key in ("n", "c", "k", "h", "w", "r"))
    groups, pad, stride = int(shape.get("groups", 1)), int(shape.get("pad", 0)), int(shape.get("stride", 1))
    flops, min_bytes, (ho, wo) = conv_work(shape, torch.empty((), dtype=dtype).element_size())
    conv = torch.nn.Conv2d(c, k, r, stride=stride, padding=pad, groups=groups, bias=False)
    conv = conv.to(device=ctx.device, dtype=dtype, memory_format=fmt)
    x = torch.randn(n, c, h, w, device=ctx.device, dtype=dtype).contiguous(memory_format=fmt).requires_grad_(True)
    grad = torch.randn(n, k, ho, wo, device=ctx.device, dtype=dtype).contiguous(memory_format=fmt)

    def step():
        torch.autograd.grad(conv(x), (x, conv.weight), grad)

    first = []
    for _ in range(int(params.get("repeats", 2))):
        ctx.sync()
        t = time.perf_counter()
        step()
        ctx.sync()
        first.append((time.perf_counter() - t) * 1000.0)
    record = {"shape": shape["name"], "dtype": dname, "layout": layout, "flops": flops, "min_bytes": min_bytes,
              "first_ms": first[0], "second_ms": first[1] if len(first) > 1 else None,
              "backend": conv_backend(torch, x, conv.weight, shape), "dims": [n, c, k, h, w, r, groups]}
    if params.get("rep_ms", 20.0):
        stats = measure(ctx, step, rep_ms=float(params.get("rep_ms", 20.0)), warmup_ms=2.0,
                        max_iters=int(params.get("max_iters", 50)))
        record.update(stats, tflops=flops / (stats["median_ms"] * 1e-3) / 1e12,
                      gbs=min_bytes / (stats["median_ms"] * 1e-3) / 1e9)
    if params.get("profile", True):
        prof = profile(ctx, step, 1, top=4)
        record["kernels"] = [{"name": kr["name"], "us": kr["self_device_us_per_call"]} for kr in prof["top_kernels"]]
        record["ops"] = [op["name"] for op in prof["top_host_ops"] if "conv" in op["name"]][:4]
    return record


def gradient_setup(torch):
    """Seconds of a gradient call's Python side the first time: it imports sympy (seconds), paid here and not
    inside the first convolution's time."""
    started = time.perf_counter()
    try:
        probe = torch.ones(1, requires_grad=True)
        torch.autograd.grad(probe * 2.0, probe, torch.ones(1))
    except Exception:  # not measured; the convolutions' own records say what fails
        return None
    return round(time.perf_counter() - started, 3)


def config_order(shapes, dtypes, layouts):
    """Every (shape, dtype, layout) once, ordered so that any first few span the shapes and the dtype-layout
    pairs: round r gives shape i the pair (i + r) mod the number of pairs. A pass cut short by its budget has then
    measured some of each rather than the first shapes alone."""
    pairs = [(dname, layout) for dname in dtypes for layout in layouts]
    return [(shape,) + pairs[(index + round_) % len(pairs)]
            for round_ in range(len(pairs)) for index, shape in enumerate(shapes)] if pairs else []


def pass_records(ctx, params):
    """(kind, record) for each shape, dtype and layout, with cudnn.benchmark as asked. With `pass_budget_s`, no
    configuration after the first starts once the pass has measured that long; each left out gets a
    `conv_unmeasured` record."""
    torch = ctx.torch
    torch.backends.cudnn.benchmark = bool(params.get("benchmark", False))
    configs = config_order(params.get("shapes", DEFAULT_SHAPES), params.get("dtypes", ["fp32", "fp16", "bf16"]),
                           params.get("layouts", ["nchw", "channels_last"]))
    began, budget = time.monotonic(), params.get("pass_budget_s")
    for index, (shape, dname, layout) in enumerate(configs):
        if budget is not None and index and time.monotonic() - began > budget:
            for shape, dname, layout in configs[index:]:
                yield "conv_unmeasured", {"shape": shape["name"], "dtype": dname, "layout": layout,
                                          "budget_s": budget}
            return
        try:
            yield "conv", dict(one_config(ctx, shape, dname, layout, params),
                               benchmark=torch.backends.cudnn.benchmark)
        except Exception as exc:
            yield "conv_error", {"shape": shape["name"], "dtype": dname, "layout": layout, "error": error_text(exc)}
        free_memory(ctx)


def section_conv_pass(ctx, params):
    """One pass in a fresh process (this child started again for it)."""
    emit("conv_setup", autograd_s=gradient_setup(ctx.torch))
    for kind, record in pass_records(ctx, params):
        emit(kind, **record)
