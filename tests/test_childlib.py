"""The library every child script loads by path: its line format, error capture, payload, module loading and
watchdog, in process and in an isolated interpreter that has nothing but the standard library."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_doctor import _childlib as lib
from rocm_doctor.distributed.launch import CHILD as COLLECTIVES_CHILD
from rocm_doctor.engine.child import parse_json_lines

LIB = Path(lib.__file__)


def load_by_path(code: str) -> str:
    """A `python -c` program that loads the library by path, as the children do, then runs `code`."""
    return (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('_doctor_childlib', {str(LIB)!r})\n"
        "lib = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(lib)\n" + code
    )


def test_each_record_is_one_flushed_json_line_with_the_marker_after_the_values(capsys):
    emit = lib.Emitter("stage")
    emit("device", index=0, path=Path("/dev/kfd"))
    emit("fault", kind="stall")  # a value may be called "kind": the record's kind is positional
    out = capsys.readouterr().out
    assert out == ('{"index": 0, "path": "/dev/kfd", "stage": "device"}\n'
                   '{"kind": "stall", "stage": "fault"}\n')
    assert [r["stage"] for r in parse_json_lines(out, "stage")] == ["device", "fault"]


def test_context_fills_keys_a_record_leaves_out_and_the_mirror_gets_the_same_lines(capsys, tmp_path):
    emit = lib.Emitter("bench", context={"section": None})
    mirror = tmp_path / "progress.jsonl"
    emit.mirror_to(str(mirror))
    emit("start")
    emit.context["section"] = "matmul"
    emit("matmul", dtype="fp16")
    emit("section_timeout", section="launch")
    emit.finish("device", error="no GPU")
    out = capsys.readouterr().out
    assert [json.loads(line) for line in out.splitlines()] == [
        {"bench": "start", "section": None},
        {"dtype": "fp16", "bench": "matmul", "section": "matmul"},
        {"section": "launch", "bench": "section_timeout"},
        {"error": "no GPU", "bench": "device", "section": "matmul"},
        {"bench": "done", "section": "matmul"},
    ]
    emit.mirror.close()
    assert mirror.read_text(encoding="utf-8") == out


def test_a_progress_file_that_cannot_be_opened_only_loses_the_copy(capsys, tmp_path):
    emit = lib.Emitter("bench")
    emit.mirror_to(str(tmp_path / "missing" / "progress.jsonl"))
    emit("start")
    assert emit.mirror is None and capsys.readouterr().out == '{"bench": "start"}\n'


def test_write_line_prints_one_object():
    stream = io.StringIO()
    real, sys.stdout = sys.stdout, stream
    try:
        lib.write_line({"sdk_dirs": [], "python": "C:\\Python\\python.exe"})
    finally:
        sys.stdout = real
    assert json.loads(stream.getvalue()) == {"sdk_dirs": [], "python": "C:\\Python\\python.exe"}
    assert stream.getvalue().count("\n") == 1


def test_error_text_styles():
    try:
        json.loads("{")
    except ValueError as exc:
        decode_error = exc
    assert lib.error_text(decode_error).startswith("json.decoder.JSONDecodeError: Expecting property name")
    assert lib.error_text(decode_error, bare_type=True).startswith("JSONDecodeError: Expecting property name")
    assert lib.error_text(RuntimeError("x" * 3000), limit=2000) == "RuntimeError: " + "x" * 1986
    assert lib.error_text(ValueError(), bare_type=True) == "ValueError:"
    try:
        compile("def broken(:\n", "case.py", "exec")
    except SyntaxError as exc:
        syntax_error = exc
    assert len(lib.error_text(syntax_error).splitlines()) > 1
    assert lib.error_text(syntax_error, last_line=True).startswith("SyntaxError: ")


@pytest.mark.parametrize("raw,payload", [("", {}), (" \n", {}), ('{"device": "cpu"}', {"device": "cpu"})])
def test_read_payload(monkeypatch, raw, payload):
    monkeypatch.setattr(sys, "stdin", io.StringIO(raw))
    assert lib.read_payload() == payload


def test_leave_script_folder_drops_only_the_scripts_own_folder(monkeypatch, tmp_path):
    script = tmp_path / "child.py"
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/usr/lib/python3"])
    lib.leave_script_folder(str(script))
    assert sys.path == ["/usr/lib/python3"]
    lib.leave_script_folder(str(script))
    assert sys.path == ["/usr/lib/python3"]


def test_a_sibling_is_registered_before_it_runs_so_the_next_can_import_it(tmp_path):
    (tmp_path / "_parts_first.py").write_text("VALUE = 21\n", encoding="utf-8")
    (tmp_path / "_parts_second.py").write_text("from _doctor_parts_first import VALUE\nDOUBLE = 2 * VALUE\n",
                                                encoding="utf-8")
    try:
        first = lib.load_sibling(str(tmp_path / "child.py"), "_parts_first.py")
        second = lib.load_sibling(str(tmp_path / "child.py"), "_parts_second.py")
        assert sys.modules["_doctor_parts_first"] is first and second.DOUBLE == 42
    finally:
        sys.modules.pop("_doctor_parts_first", None)
        sys.modules.pop("_doctor_parts_second", None)


def test_the_library_needs_only_the_standard_library_and_its_watchdog_reports_before_exiting():
    code = load_by_path(
        "import time\n"
        "emit = lib.Emitter('bench', context={'section': 'hang'})\n"
        "lib.Watchdog(0.3, lambda: emit('section_timeout', timeout_s=0.3))\n"
        "emit('section_start')\n"
        "time.sleep(30)\n"
    )
    # -S: no site-packages at all, so neither torch nor rocm-doctor can be imported.
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=20)
    assert run.returncode == lib.TIMEOUT_EXIT, run.stderr
    assert [r["bench"] for r in parse_json_lines(run.stdout, "bench")] == ["section_start", "section_timeout"]


def test_deadline_dumps_the_tracebacks_and_ends_the_process():
    code = load_by_path("import time\nwith lib.deadline(0.3):\n    time.sleep(30)\n")
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=20)
    assert run.returncode != 0 and "Timeout (" in run.stderr


def test_a_real_child_run_by_path_reports_a_bad_payload_as_a_record():
    run = subprocess.run([sys.executable, "-I", str(COLLECTIVES_CHILD)], input="{not json", capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    [record] = parse_json_lines(run.stdout, "coll")
    assert record["coll"] == "error" and record["error"].startswith("bad payload: Expecting property name")


@pytest.mark.slow
def test_a_real_child_reports_an_exception_with_its_traceback(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no RANK: the rank mode fails after importing torch
    run = subprocess.run([sys.executable, "-I", str(COLLECTIVES_CHILD)], input='{"mode": "rank"}', env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stderr
    error = parse_json_lines(run.stdout, "coll")[-1]
    assert error["coll"] == "error" and error["error"] == "KeyError: 'RANK'"
    assert "Traceback (most recent call last)" in error["traceback"] and "run_rank" in error["traceback"]
