"""Runs inside the *target* interpreter and measures; prints one JSON object per line, one per measurement.

Stand-alone on purpose (standard library and torch only): the target environment need not have rocm-doctor
installed. The payload comes as JSON on stdin:

    {"device": "auto"|"cuda"|"cpu", "device_index": 0, "progress_file": PATH|null, "watchdog": true,
     "hold_dir": PATH|null, "gate": PATH|null, "sections": [{"name": "matmul", "timeout_s": 60, "params": {...}}, ...]}

Every record carries "bench" (its kind) and "section"; each section is framed by "section_start" and
"section_end" records, and the run ends with {"bench": "done"}. A watchdog thread ends the process with a
"section_timeout" record when a section overruns its budget, so the parent can start a fresh child for the
sections that are left. With a "hold_dir", each section waits after its "section_start" record until the parent
drops a "<section>.go" file there. With a "gate", the child imports torch and then waits for that file before it
touches the GPU (a process started ahead of its turn). Nothing here decides whether a figure is good: the parent does that.

The sections live beside this file (_bench_sections.py, _bench_sdpa.py, _bench_decoder.py, _bench_cnn.py,
_bench_conv.py, on top of _bench_common.py and _bench_profile.py), loaded by path like the shared child library.
"""

import functools
import importlib.util
import os
import platform
import sys
import time
import traceback


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()
childlib.leave_script_folder(__file__)
common = childlib.load_sibling(__file__, "_bench_common.py")
sections = childlib.load_sibling(__file__, "_bench_sections.py")
sdpa = childlib.load_sibling(__file__, "_bench_sdpa.py")
childlib.load_sibling(__file__, "_bench_profile.py")
decoder = childlib.load_sibling(__file__, "_bench_decoder.py")
cnn = childlib.load_sibling(__file__, "_bench_cnn.py")
conv = childlib.load_sibling(__file__, "_bench_conv.py")
emit, error_text = common.emit, common.error_text

SECTIONS = {
    "matmul": sections.section_matmul,
    "memory": sections.section_memory,
    "launch": sections.section_launch,
    "sdpa": sdpa.section_sdpa,
    "compare": sections.section_compare,
    "cnn": cnn.section_cnn,
    "sweep": cnn.section_sweep,
    "conv": conv.section_conv,
    "conv_pass": conv.section_conv_pass,
    "decoder": decoder.section_decoder,
    "reference": sections.section_reference,
    "hang": sections.section_hang,
}


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(torch, device):
    info = {"type": device.type, "index": device.index}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        for name in ("name", "gcnArchName", "total_memory", "major", "minor", "multi_processor_count",
                     "L2_cache_size", "pci_bus_id", "pci_device_id", "pci_domain_id", "is_integrated"):
            value = getattr(props, name, None)
            if value is not None:
                info[name] = value
    else:
        info["name"] = cpu_name()
    return info


def hold(payload, name):
    """Wait (at most hold_s) for the parent's go for this section: it samples the GPU's state first, so its
    nvidia-smi / amd-smi query never runs while a figure is being measured."""
    folder = payload.get("hold_dir")
    if folder:
        childlib.wait_for(os.path.join(folder, name + ".go"), payload.get("hold_s", 5))


def main():
    payload = childlib.read_payload()
    if payload.get("progress_file"):
        emit.mirror_to(payload["progress_file"])
    emit("start", python=sys.version.split()[0], executable=sys.executable, pid=os.getpid())
    started = time.monotonic()
    driver, driver_start = childlib.start_driver(payload.get("device", "auto"), payload.get("device_index"),
                                                 gated=bool(payload.get("gate")))
    try:
        import torch
    except BaseException as exc:  # torch's import can raise anything, including SystemExit
        emit.finish("import", ok=False, error=error_text(exc))
        return
    childlib.enter_work_folder(payload.get("workdir"))
    if driver is not None:
        driver_start["before_import_ended"] = not driver.is_alive()
    emit("import", ok=True, seconds=round(time.monotonic() - started, 3), version=torch.__version__,
         cuda=getattr(torch.version, "cuda", None), hip=getattr(torch.version, "hip", None),
         driver_start=dict(driver_start) if driver_start is not None else None)
    if payload.get("gate") and not childlib.wait_for(payload["gate"], payload.get("gate_s", 600)):
        emit.finish("device", error="started ahead of its turn, and its turn never came")
        return

    threads = childlib.usable_cores()
    # A thread count the environment fixes is what the user's programs get, so the CPU figures keep it.
    fixed = [name for name in payload.get("thread_variables") or [] if os.environ.get(name)]
    if not fixed:
        torch.set_num_threads(threads)
    emit("cpu", name=cpu_name(), threads=torch.get_num_threads(), cpu_count=os.cpu_count(), affinity=threads,
         threads_set_by=fixed[0] if fixed else None)

    wanted = payload.get("device", "auto")
    index = int(payload.get("device_index", 0) or 0)
    try:
        available = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if available else 0
    except Exception as exc:
        available, count = False, 0
        emit("device_note", note="torch.cuda.is_available() raised: " + error_text(exc))
    if wanted == "cpu" or (wanted == "auto" and not available):
        device = torch.device("cpu")
    elif not available:
        emit.finish("device", error="no GPU is usable from this torch (torch.cuda.is_available() is False)")
        return
    elif index >= count:
        emit.finish("device", error="device index %d out of range: this torch sees %d GPU(s)" % (index, count))
        return
    else:
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    try:
        ctx = common.Ctx(torch, device)
        emit("device", **describe(torch, device))
    except Exception as exc:
        emit.finish("device", error=error_text(exc))
        return

    for section in payload.get("sections", []):
        name = section["name"]
        kind = section.get("kind", name)
        emit.context["section"] = name
        timeout = float(section.get("timeout_s", 60))
        emit("section_start", timeout_s=timeout)
        hold(payload, name)
        watchdog = None
        if payload.get("watchdog", True):
            watchdog = childlib.Watchdog(timeout, functools.partial(emit, "section_timeout", section=name,
                                                                    timeout_s=timeout))
        t = time.monotonic()
        state, error = "ok", None
        ctx.sections_run.append(kind)  # before it runs: one that fails part way may have convolved
        try:
            SECTIONS[kind](ctx, section.get("params") or {})
        except Exception as exc:
            state, error = "error", error_text(exc)
            emit("section_error", error=error, traceback=traceback.format_exc(limit=6))
        finally:
            if watchdog is not None:
                watchdog.cancel()
        try:
            common.free_memory(ctx)
        except Exception:
            pass
        emit("section_end", state=state, error=error, seconds=round(time.monotonic() - t, 3))
        emit.context["section"] = None
    emit("done", seconds=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
    childlib.exit_now()
