"""Every error signature matches its example line, examples taken from fixtures are verbatim there, and the check
ids are the ones the checks use."""

from pathlib import Path

import pytest

from rocm_doctor.knowledge import signatures
from rocm_doctor.knowledge.store import load

FIXTURES = Path(__file__).parent / "fixtures"
ROWS = load("error_signatures.json")["signatures"]
CHECKS = {"amdgpu-dkms-not-built", "amdgpu-init-failed", "gpu-peer-access-missing", "secure-boot-blocks-amdgpu",
          "windows-driver-too-old", "bench-bf16-slow", "gpu-visibility-env",
          "gpu-runtime-refuses", "process-address-space-limited", "amdgpu-firmware-not-answering",
          "platform-supported", "amdgpu-gpu-reset", "amdgpu-firmware-missing", "amdgpu-page-fault", "amdgpu-ring-timeout",
          "container-gpu-devices", "container-shm-small", "dll-shadowing", "gfx-not-in-torch-arch-list",
          "gfx-support-matrix", "gpu-compute-mode-restricted", "gpu-hang-power-state", "gpu-kernels-failed",
          "gpu-memory-held", "hip-runtime-mismatch", "hiprtc-headers-missing", "hsa-override-gfx-version",
          "igpu-enumerated-first", "iommu-multi-gpu-hang-risk", "kernel-log-unreadable", "miopen-db-not-writable",
          "nvidia-driver-older-than-torch-cuda", "nvidia-xid", "os-support-matrix", "python-version",
          "rocblas-library-coverage", "rocm-device-access", "rocm-install-incomplete", "rocm-kernel-driver",
          "rocm-packages-mixed", "rocm-paths", "rocm-repos-mixed", "rocm-runtime-sees-no-gpu",
          "sm-not-in-torch-arch-list", "torch-build-mismatch", "torch-cuda-unavailable", "torch-family-mismatch",
          "torch-not-installed",
          "windows-gpu-not-enumerated", "windows-vc-runtime-missing", "wsl-rocm-support"}


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_signature_matches_its_example(row):
    context = row.get("requires_example", "Exception code: 0xc0000005")  # a real line of the same paste
    text = row["example"] + ("\n" + context if row.get("requires") else "")
    assert row["id"] in [found.id for found in signatures.match(text)]
    assert row["check"] in CHECKS and set(row.get("related", ())) <= CHECKS


@pytest.mark.parametrize("row", [row for row in ROWS if row.get("fixture")], ids=lambda row: row["id"])
def test_fixture_examples_are_verbatim_and_found(row):
    text = (FIXTURES / row["fixture"]).read_text(encoding="utf-8", errors="replace")
    assert row["example"] in text
    assert row["id"] in [found.id for found in signatures.match(text)]


def test_ids_are_unique():
    assert len({row["id"] for row in ROWS}) == len(ROWS)


def test_match_returns_id_meaning_check_line():
    (found,) = signatures.match("boot ok\nRuntimeError: HIP error: invalid device function\n")
    sig_id, meaning, check, line = found
    assert (sig_id, check, line) == ("hip-invalid-device-function", "gfx-not-in-torch-arch-list",
                                     "RuntimeError: HIP error: invalid device function")
    assert meaning


def test_requires_guards_the_dll_signature():
    assert signatures.match("loaded amdhip64_7.dll") == []
    assert signatures.signature("amdsmi-error-34")["harmless"] is True


def test_wsl_out_of_resources_fixture_points_at_device_access():
    text = (FIXTURES / "rocminfo/wsl-rx7800xt-rocm6.4.2-no-wsl-build-out-of-resources.txt").read_text(encoding="utf-8")
    assert "rocm-device-access" in [found.check for found in signatures.match(text)]


def test_every_signature_check_is_a_registered_check():
    """A row may only point at (or relate to) a check that exists, so `explain <id>` and the finding are real."""
    from rocm_doctor.engine.registry import load_registry

    registered = set(load_registry(include_plugins=False).ids())
    missing = {(row["id"], check) for row in ROWS for check in [row["check"], *row.get("related", ())]
               if check not in registered}
    assert not missing


def test_no_signature_is_slow_on_a_long_line():
    """A log line of a few hundred kB (a binary dump, a minified blob) must not make a pattern backtrack for minutes:
    a pattern that starts with an unanchored run is quadratic in the line's length."""
    import time

    start = time.perf_counter()
    for filler in ("x", " ", "a ", "|", "/opt/rocm", "'"):
        signatures.match(filler * (200_000 // len(filler)))
    assert time.perf_counter() - start < 20


def test_a_meaning_says_what_its_thread_showed_not_how_often_a_cause_is_met():
    import re

    hedge = re.compile(r"\b(usually|most often|often|typically|likely|probably|in most cases)\b", re.IGNORECASE)
    hedged = [(row["id"], key) for row in ROWS for key in ("meaning", "fix") if hedge.search(row.get(key) or "")]
    assert hedged == []
