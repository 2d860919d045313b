"""Library attribution inside the kernel child: one torch profiler session for the suite, split by case.

Loaded by _child.py inside the target interpreter (standard library and torch only). The attributed cases run
after the others (the plan, and so the report, keeps the suite's order) in one session that opens at the first of
them; each runs inside a record_function range named after it, and when the session ends its raw Kineto events are
split by those ranges. Per case it reports the device kernels that ran in the range and the aten ops that say which
backend served an operator. On an H200 with torch 2.11 a session per case cost about 0.7 s over the 27 cases, and
reading one session through torch's function_events 0.3-0.5 s; the raw events take about 0.1 s. (Torch before
about 2.4 reads function_events as the session ends whatever is asked; there only the sessions are saved.)
"""

import bisect
import contextlib

OP_HINTS = ("scaled_dot_product", "cudnn", "miopen", "mkldnn", "slow_conv", "_fft_", "thnn", "_efficient_attention",
            "_flash_attention", "mps_")
MARK = "rocm-doctor-case:"
KERNELS_KEPT, OPS_KEPT = 40, 20


def profiler_fault(text):
    """Whether an error a case raised came from the profiler (Kineto) rather than from the operator."""
    text = text.lower()
    return "profiler" in text or "kineto" in text


def attributed_last(cases, profile):
    """The cases in the order to run them: those marked `profile` last when attribution is on, else as given."""
    if not profile:
        return list(cases)
    return [c for c in cases if not c.get("profile")] + [c for c in cases if c.get("profile")]


class SuiteProfile:
    """The open session and the cases recorded in it. `case(name)` wraps one case; `finish()` ends the session and
    returns each case's kernels and ops. A session that cannot start or end gives each of its cases an error."""

    def __init__(self, torch, gpu, childlib, error_text):
        self.torch, self.gpu, self.childlib, self.error_text = torch, gpu, childlib, error_text
        self.session = None
        self.names = []
        self.broken = None

    def _start(self):
        try:
            session = self.childlib.profiler(self.torch, self.gpu)
            session.__enter__()
        except Exception as exc:
            self.broken = self.error_text(exc)
            return
        self.session = session

    @contextlib.contextmanager
    def case(self, name):
        """Run the block as case `name` inside the session, which starts on first use."""
        if self.session is None and self.broken is None:
            self._start()
        self.names.append(name)
        if self.session is None:
            yield
            return
        with self.torch.autograd.profiler.record_function(MARK + name):
            yield

    def abandon(self, error):
        """The session failed under a case: end it, and give its cases and every later one `error`."""
        session, self.session, self.broken = self.session, None, error
        if session is not None:
            try:
                session.__exit__(None, None, None)
            except Exception:
                pass

    def drop(self, name):
        """Leave a case out of what `finish` reports: it could not run here, so it has nothing to attribute."""
        if name in self.names:
            self.names.remove(name)

    def finish(self):
        """End the session: {case: {"activity", "kernels", "ops"}}, or {case: {"error"}} where that failed."""
        session, names = self.session, self.names
        self.session, self.names = None, []
        if session is None:
            return {name: {"error": self.broken} for name in names} if self.broken else {}
        try:
            session.__exit__(None, None, None)
            events = [Event(raw) for raw in session.kineto_results.events()]
        except Exception as exc:
            return {name: {"error": self.error_text(exc)} for name in names}
        return split(events, names, self.gpu)


def split(events, names, gpu):
    """{case: {"activity", "kernels", "ops"}} for the cases `names`, from the session's events (Event objects).

    A device kernel belongs to the case whose range holds the CPU call that launched it (its linked correlation):
    the CPU side keeps the ranges' clock, where a GPU timestamp may not (ROCm's tracer before torch 2.6), and a
    kernel a failed case queued may start after its range has closed. A kernel with no launcher is placed by its
    own start."""
    found = {name: {"activity": "cuda" if gpu else "cpu", "kernels": [], "ops": []} for name in names}
    ranges = sorted((e.start, e.end, e.name[len(MARK):]) for e in events if e.name.startswith(MARK) and not e.device)
    starts = [start for start, _end, _name in ranges]

    def case_of(time_ns):
        index = bisect.bisect_right(starts, time_ns) - 1
        if index < 0 or time_ns > ranges[index][1]:
            return None
        return found.get(ranges[index][2])

    # The CPU calls a kernel can name: operators and ranges. A runtime call (cudaLaunchKernel) links to its operator
    # itself, and its own correlation counts in another series, which may repeat an operator's number.
    called_at = {e.correlation: e.start for e in events if not e.device and e.correlation > 0 and e.linked <= 0}
    launchers = {e.linked for e in events if e.device and e.linked > 0}
    launched_at = sorted(start for correlation, start in called_at.items() if correlation in launchers)
    for event in events:
        if event.name.startswith(MARK):
            continue
        if event.device:
            profile = case_of(called_at.get(event.linked, event.start))
            if profile is not None and gpu and event.name not in profile["kernels"]:
                profile["kernels"].append(event.name)
            continue
        profile = case_of(event.start)
        if (profile is not None and event.name.startswith("aten::") and any(hint in event.name for hint in OP_HINTS)
                and event.name not in profile["ops"]):
            # On a GPU keep only ops that launched device work themselves or through the ops inside them: the
            # float64 CPU reference runs in the same range.
            if not gpu or _any_between(launched_at, event.start, event.end):
                profile["ops"].append(event.name)
    for profile in found.values():
        profile["kernels"] = profile["kernels"][:KERNELS_KEPT]
        profile["ops"] = profile["ops"][:OPS_KEPT]
    return found


class Event:
    """What attribution needs of one of the session's events, read once (nanoseconds on the profiler's clock)."""

    __slots__ = ("name", "device", "start", "end", "correlation", "linked")

    def __init__(self, raw):
        self.name = raw.name()
        self.device = str(raw.device_type()).endswith("CUDA")
        if hasattr(raw, "start_ns"):
            self.start, self.end = raw.start_ns(), raw.start_ns() + raw.duration_ns()
        else:  # torch before 2.1 counts in microseconds
            self.start, self.end = raw.start_us() * 1000, (raw.start_us() + raw.duration_us()) * 1000
        self.correlation, self.linked = raw.correlation_id(), raw.linked_correlation_id()


def _any_between(sorted_times, start, end):
    index = bisect.bisect_left(sorted_times, start)
    return index < len(sorted_times) and sorted_times[index] <= end
