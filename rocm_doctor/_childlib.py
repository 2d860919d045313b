"""What the child scripts share. Runs inside the *target* interpreter: standard library only, never torch.

The children (probes/_torch_child.py, gpu/kernels/_child.py, gpu/bench/_bench_child.py,
distributed/_collectives_child.py, windows/_sdk_child.py) run by path in an interpreter that need not have
rocm-doctor installed, so each loads this file by path as the module `_doctor_childlib`, and their sibling
modules import it under that name. The parent side is rocm_doctor/engine/child.py: it keeps the stdout lines
that are JSON objects carrying the child's marker key and waits for the closing record {marker: "done"}.
"""

import contextlib
import faulthandler
import importlib.util
import json
import os
import sys
import threading
import time
import traceback

DONE = "done"
TIMEOUT_EXIT = 124  # the status `timeout(1)` uses, so a parent can tell a deadline from a crash


def json_line(value):
    """`value` as one line of JSON; what JSON cannot hold (a torch.dtype, a path) is written as str()."""
    return json.dumps(value, default=str) + "\n"


def _write(stream, line):
    stream.write(line)
    stream.flush()


def write_line(value):
    """Print `value` as one JSON line and flush it, for a child that answers with one object."""
    _write(sys.stdout, json_line(value))


class Emitter:
    """`emit(kind, **values)` prints one JSON object per line on stdout, flushed at once, so that the parent
    keeps every record up to the moment a child crashes or hangs.

    `marker` is the key that names the record's kind: the parent reads only lines carrying it. `context` holds
    keys added to every record that does not set them itself (the bench's current section). `mirror_to` copies
    each line to a file the parent follows while the child runs. Thread-safe: a watchdog thread may emit too.
    """

    def __init__(self, marker, context=None):
        self.marker = marker
        self.context = dict(context or {})
        self.mirror = None
        self._lock = threading.Lock()

    def __call__(self, _kind, **values):
        values[self.marker] = _kind
        for key, value in self.context.items():
            values.setdefault(key, value)
        line = json_line(values)
        with self._lock:
            _write(sys.stdout, line)
            if self.mirror is not None:
                try:
                    _write(self.mirror, line)
                except OSError:
                    pass

    def finish(self, _kind, **values):
        """Emit a record that ends the run early (torch missing, no device), then the closing record."""
        self(_kind, **values)
        self(DONE)

    def mirror_to(self, path):
        """Append every later line to `path` too; a file that cannot be opened only loses the copy."""
        try:
            self.mirror = open(path, "a", encoding="utf-8")
        except OSError:
            pass


def error_text(exc, limit=None, last_line=False, bare_type=False):
    """An exception as a record field: the lines Python prints for it (`Type: message`), cut to `limit` characters.

    `last_line` keeps only the line with the message (a SyntaxError or an exception with notes prints several);
    `bare_type` writes the class name without its module (`DistBackendError`, not
    `torch.distributed.DistBackendError`) followed by str(exc).
    """
    if bare_type:
        text = ("%s: %s" % (type(exc).__name__, exc)).strip()
    else:
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if last_line:
        text = text.splitlines()[-1]
    return text[:limit]


def read_payload():
    """The JSON object the parent wrote on stdin; {} when it wrote nothing."""
    raw = sys.stdin.read()
    return json.loads(raw) if raw.strip() else {}


def leave_script_folder(script):
    """Drop the script's own folder from the front of sys.path: the parent's modules beside it (plan.py,
    harness.py, ...) must not shadow anything the target imports."""
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(script)):
        del sys.path[0]


def enter_work_folder(folder):
    """Compute from `folder` (the parent's work folder, the same on every run; see engine/child.py work_folder),
    whatever folder the doctor was started in. Called after `import torch`: site has made sys.path absolute by then,
    so what imports later resolves as before."""
    if folder:
        try:
            os.chdir(folder)
        except OSError:
            pass


def usable_cores():
    """The CPU cores this process may run on (its affinity where the OS tells it), at least 1."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def load_module(path, name):
    """Run the file at `path` as module `name`. It is registered in sys.modules before it runs, so the files it
    loads in turn can import it by that name (case files do `from _doctor_cases import case`)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_sibling(script, filename):
    """Load `filename` from the folder of `script` as `_doctor_<name>`: `_cases.py` becomes `_doctor_cases`."""
    name = "_doctor_" + os.path.splitext(filename)[0].lstrip("_")
    return load_module(os.path.join(os.path.dirname(os.path.abspath(script)), filename), name)


def start_driver(device, index=None, gated=False, load=None):
    """On Linux with the NVIDIA driver, start it (cuInit) and create the device's primary context in a thread while
    torch imports: the first CUDA call pays both after the import otherwise, and torch's runtime takes over the same
    primary context. `device` is the child's device ("cuda", "cuda:1", "auto", "cpu"); `index` the GPU where the
    device does not name one. Nothing for a gated child (it touches no GPU before its turn), on the CPU device, or
    where libcuda is missing (ROCm, no GPU: torch's own calls then report what fails). Returns (thread, record); the
    record gets the driver's status codes and the seconds taken once the thread ends."""
    device = str(device)
    if gated or not device.startswith(("cuda", "auto")) or not sys.platform.startswith("linux"):
        return None, None
    ordinal = int(device.partition(":")[2] or index or 0)
    record = {}

    def run():
        import ctypes

        began = time.monotonic()
        try:
            lib = (load or ctypes.CDLL)("libcuda.so.1")
        except OSError:
            record.update(status="no libcuda.so.1")
            return
        handle, context = ctypes.c_int(), ctypes.c_void_p()
        status = lib.cuInit(0)
        if status == 0:
            status = lib.cuDeviceGet(ctypes.byref(handle), ordinal)
        if status == 0:
            status = lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), handle)
        record.update(status=status, seconds=round(time.monotonic() - began, 3))

    thread = threading.Thread(target=run, name="cuda-driver-start", daemon=True)
    thread.start()
    return thread, record


def wait_for(path, timeout_s, poll_s=0.005):
    """Wait until the file `path` exists (the parent's go) or `timeout_s` pass; True when it appeared. A child
    started ahead of its turn waits here, before it touches the GPU, so that only one process computes on it."""
    deadline = time.monotonic() + float(timeout_s)
    while not os.path.exists(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


class Watchdog:
    """Ends the process with status 124 when `timeout_s` pass before `cancel()`, once `last_words()` has told the
    parent why. A timer thread: it cannot fire while a call holds the GIL, so the parent keeps its own timeout."""

    def __init__(self, timeout_s, last_words):
        self.timer = threading.Timer(timeout_s, self._fire, args=(last_words,))
        self.timer.daemon = True
        self.timer.start()

    @staticmethod
    def _fire(last_words):
        last_words()
        os._exit(TIMEOUT_EXIT)

    def cancel(self):
        self.timer.cancel()


@contextlib.contextmanager
def deadline(timeout_s):
    """Inside the block, a process still running after `timeout_s` prints every thread's traceback to stderr and
    exits. faulthandler's own thread does it, so it fires even while a call holds the GIL."""
    faulthandler.dump_traceback_later(timeout_s, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def profiler(torch, device_work):
    """torch's autograd profiler through Kineto, with device activity when `device_work`: the events and averages
    torch.profiler.profile gives (that class wraps this one), without the torch._inductor import its first
    session makes — most of the 4–6 s that session costs (measured on an H200)."""
    if not device_work:
        return torch.autograd.profiler.profile(use_kineto=True)
    try:
        return torch.autograd.profiler.profile(use_device="cuda", use_kineto=True)
    except TypeError:  # torch before use_device
        return torch.autograd.profiler.profile(use_cuda=True, use_kineto=True)


def exit_now():
    """End the child at once after its last record: every line is already flushed, and Python's finalization of
    torch (its objects, atexit hooks, the modules) took about a second at the end of each GPU child."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
