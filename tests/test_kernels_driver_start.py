"""The kernel and bench children start the NVIDIA driver and the device's primary context while torch imports
(_childlib.start_driver), through a stand-in for libcuda here: which calls it makes, what it records, and when it
does nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

CHILDLIB = Path(__file__).resolve().parents[1] / "rocm_doctor" / "_childlib.py"


@pytest.fixture(scope="module")
def child():
    spec = importlib.util.spec_from_file_location("_doctor_childlib_under_test", CHILDLIB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeCuda:
    def __init__(self, init_status=0):
        self.calls, self.init_status = [], init_status

    def cuInit(self, flags):  # noqa: N802 - the driver's names
        self.calls.append("cuInit")
        return self.init_status

    def cuDeviceGet(self, handle, ordinal):  # noqa: N802
        self.calls.append(("cuDeviceGet", ordinal))
        return 0

    def cuDevicePrimaryCtxRetain(self, context, handle):  # noqa: N802
        self.calls.append("cuDevicePrimaryCtxRetain")
        return 0


def run(child, device, index=None, lib=None, error=None, gated=False):
    def load(name):
        assert name == "libcuda.so.1"
        if error:
            raise error
        return lib

    thread, record = child.start_driver(device, index, gated=gated, load=load)
    if thread is not None:
        thread.join(10)
    return thread, record


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver start is for Linux")
def test_the_driver_and_the_devices_primary_context_start_in_a_thread(child):
    lib = FakeCuda()
    _thread, record = run(child, "cuda:1", lib=lib)
    assert lib.calls == ["cuInit", ("cuDeviceGet", 1), "cuDevicePrimaryCtxRetain"]
    assert record["status"] == 0 and record["seconds"] >= 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver start is for Linux")
def test_the_bench_childs_auto_device_starts_the_gpu_its_index_names(child):
    lib = FakeCuda()
    run(child, "auto", 2, lib=lib)
    assert lib.calls == ["cuInit", ("cuDeviceGet", 2), "cuDevicePrimaryCtxRetain"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver start is for Linux")
def test_a_driver_that_fails_to_start_is_recorded_and_nothing_more_is_asked(child):
    lib = FakeCuda(init_status=100)  # CUDA_ERROR_NO_DEVICE
    _thread, record = run(child, "cuda", lib=lib)
    assert lib.calls == ["cuInit"] and record["status"] == 100
    _thread, record = run(child, "cuda", error=OSError("libcuda.so.1: cannot open shared object file"))
    assert record == {"status": "no libcuda.so.1"}


@pytest.mark.parametrize("device, gated", [("cpu", False), ("cuda", True), ("auto", True)])
def test_nothing_starts_on_the_cpu_device_or_in_a_child_waiting_for_its_turn(child, device, gated):
    lib = FakeCuda()
    assert run(child, device, lib=lib, gated=gated) == (None, None) and lib.calls == []
