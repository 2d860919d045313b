"""One format interface and one app object: no command module writes to the terminal itself, the exit codes are
declared once, and every kind of result renders through the formats, its JSON in the common envelope and valid
against data/report.schema.json."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from rich.console import Console

from rocm_doctor.cli.app import App, DoctorUsageError
from rocm_doctor.cli.main import cli
from rocm_doctor.report.format import FORMATS, Json, NoView
from rocm_doctor.testing.stages import bench_report

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = Path(__file__).parent / "snapshots"
FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = SNAPSHOTS / "linux-rx6600xt-gfx1032-rocm6.3-torch-lacks-gfx1032.json"
HEALTHY = SNAPSHOTS / "linux-2x-mi100-gfx908-healthy.json"

CLICK_WRITERS = {"echo", "secho", "echo_via_pager", "confirm", "prompt"}
# (module, function) still writing for itself, each with its reason; delete an entry once it is gone
KNOWN_WRITERS = {("data.py", "show")}  # the human `data show` listing, being rewritten in place


def direct_writes(source: str) -> list[tuple[str, int, str]]:
    """(enclosing top-level function, line, what) for each write to the terminal that bypasses the app object:
    click's echo and prompts, print, a rich console or sys.stdout/stderr written to, rich imported."""
    found = []
    for top in ast.parse(source).body:
        name = getattr(top, "name", "<module>")
        for node in ast.walk(top):
            what = None
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    if func.value.id == "click" and func.attr in CLICK_WRITERS:
                        what = f"click.{func.attr}"
                elif isinstance(func, ast.Name) and func.id in ("print", "console", "Console"):
                    what = func.id
            elif isinstance(node, ast.Attribute) and node.attr in ("write", "writelines"):
                stream = node.value
                if (isinstance(stream, ast.Attribute) and stream.attr in ("stdout", "stderr")
                        and isinstance(stream.value, ast.Name) and stream.value.id == "sys"):
                    what = f"sys.{stream.attr}.{node.attr}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(m == "rich" or m.startswith("rich.") for m in modules):
                    what = "rich imported"
            if what:
                found.append((name, node.lineno, what))
    return found


def test_the_scan_finds_each_kind_of_direct_write():
    source = ("import click\nimport sys\nfrom rich.console import Console\n"
              "def a():\n    click.echo('x')\n    print('y')\n    sys.stderr.write('z')\n    console().print('w')\n")
    assert [w for _, _, w in direct_writes(source)] == [
        "rich imported", "click.echo", "print", "sys.stderr.write", "console"]


def test_no_command_module_writes_to_the_terminal_itself():
    offenders = []
    for path in sorted((ROOT / "rocm_doctor" / "cli").glob("*.py")):
        if path.name == "app.py":  # the app object: the one place that writes
            continue
        for function, line, what in direct_writes(path.read_text(encoding="utf-8")):
            if (path.name, function) not in KNOWN_WRITERS:
                offenders.append(f"cli/{path.name}:{line} {function}: {what}")
    assert not offenders, "write through the app object (cli/app.py) instead:\n" + "\n".join(offenders)
    for module, function in KNOWN_WRITERS:  # an entry whose write is gone is removed from the list
        source = (ROOT / "rocm_doctor" / "cli" / module).read_text(encoding="utf-8")
        assert any(f == function for f, _, _ in direct_writes(source)), (module, function)


# the entry points that run outside the app object: the torchrun worker prints its rank's lines for torchrun
OWN_ENTRY_POINTS = {"rocm_doctor/distributed/__main__.py"}


def test_no_pipeline_module_writes_to_the_terminal():
    """Probes, interpreters, stages, the engine and fix tell the command what they are doing through a callback
    (a stage's `progress`); only the app object writes, so no stage draws over a status line or a JSON output."""
    offenders = []
    for path in sorted((ROOT / "rocm_doctor").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.split("/")[1] in ("cli", "report") or relative in OWN_ENTRY_POINTS:
            continue
        offenders += [f"{relative}:{line} {function}: {what}"
                      for function, line, what in direct_writes(path.read_text(encoding="utf-8"))]
    assert not offenders, "pass a progress callback from the command instead:\n" + "\n".join(offenders)
    for relative in OWN_ENTRY_POINTS:
        assert direct_writes((ROOT / relative).read_text(encoding="utf-8")), relative


def test_collective_progress_goes_to_the_callback():
    from rocm_doctor.distributed.stage import progress_notes

    shown = []
    note = progress_notes(shown.append)
    note({"coll": "begin", "phase": "timed", "rank": 0, "op": "all_reduce", "bytes": 1 << 20})
    note({"coll": "begin", "phase": "timed", "rank": 1, "op": "all_reduce", "bytes": 1 << 20})
    note({"coll": "done", "rank": 0})
    assert shown == ["collectives: all_reduce 1 MiB"]


def test_exit_codes_are_declared_once():
    declared = []
    for path in sorted((ROOT / "rocm_doctor").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign):
                names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                declared += [(path.relative_to(ROOT).as_posix(), n) for n in names if n.startswith("EXIT_")]
    assert {path for path, _ in declared} == {"rocm_doctor/cli/app.py"}, declared
    assert sorted(n for _, n in declared) == ["EXIT_CANNOT_RUN", "EXIT_CLOSED_PIPE", "EXIT_OK", "EXIT_PROBLEMS"]


@pytest.fixture
def run(tmp_path):
    """`rocm-doctor ARGS` in this process, with its run history and fix journal in the test's folder."""
    env = {"ROCM_DOCTOR_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path), "NO_COLOR": "1"}

    def invoke(*args: str):
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def test_every_command_json_is_in_the_envelope_and_fits_the_schema(run, report_schema):
    paste = str(FIXTURES / "errors" / "linux-cuda-torch-illegal-memory-access-encountered.txt")
    fleet = [str(FIXTURES / "fleet" / f"gpu-node-0{n}.json") for n in (1, 2, 3)]
    outputs = {
        "diagnosis": run("check", "--from", str(BROKEN), "--json"),
        "checks": run("checks", "--json"),
        "explain": run("explain", "gpu-visibility-env", "--json"),
        "data": run("data", "show", "--json"),
        "fleet": run("fleet", "diff", *fleet, "--json"),
        "diff": run("diff", str(HEALTHY), str(BROKEN), "--json"),
        "history": run("diff", "--list", "--json"),
        "fix-plan": run("fix", "--dry-run", "--json", "--from", str(BROKEN)),
        "fix-history": run("fix", "--history", "--json"),
    }
    outputs["triage"] = run("triage", paste, "--json")
    for kind, result in outputs.items():
        document = json.loads(result.output)
        assert result.exit_code in (0, 1), (kind, result.output)
        assert document["kind"] == ("diagnosis" if kind == "triage" else kind)
        assert document["schema_version"] == 2 and document["tool"]["name"] == "rocm-doctor", kind
        assert document["redacted"] is (kind == "diff"), kind  # a diff is redacted; check's own output is not
        jsonschema.validate(document, report_schema)
    assert json.loads(outputs["explain"].output)["check"]["id"] == "gpu-visibility-env"
    assert json.loads(outputs["fleet"].output)["odd_nodes"][0]["node"] == "gpu-node-03"


def stage_results():
    """A result of each GPU stage, as the children record them (a real H200 bench; a kernels run that stopped at
    the device; collectives that could not start)."""
    from rocm_doctor.engine import diagnosis
    from rocm_doctor.engine.model import Finding, Status
    from rocm_doctor.facts import snapshot
    from rocm_doctor.report.bench_view import BenchResult
    from rocm_doctor.report.collectives_view import CollectivesResult
    from rocm_doctor.report.kernels_view import KernelsResult
    from rocm_doctor.report.results import SnapshotResult

    bench = json.loads((FIXTURES / "h200" / "bench-matmul-cublas-workspace-results.json").read_text(encoding="utf-8"))
    failed = Finding(id="gpu-kernel-crash", check="gpu-kernel-crash", status=Status.FAIL, title="t", message="m")
    observations = snapshot.from_dict(json.loads(HEALTHY.read_text(encoding="utf-8")))
    judged = bench_report(bench)
    return {
        "bench": BenchResult(bench, judged.stages["bench"]["analysis"], judged.findings, judged.diagnosis),
        "kernels": KernelsResult({"python": "/usr/bin/python3", "suite": {"device": "cuda", "counts": {},
                                  "fatal": {"stage": "device", "error": "no GPU"}}}, [failed],
                                 diagnosis.build([failed])),
        "bench-collectives": CollectivesResult("/usr/bin/python3", {"ran": False, "detail": "one GPU"}, [],
                                               diagnosis.build([])),
        "snapshot": SnapshotResult(observations),
    }


def test_each_stage_result_in_every_format(report_schema):
    for kind, result in stage_results().items():
        document = json.loads(Json.text(result))
        assert (document["kind"], document["schema_version"], document["redacted"]) == (kind, 2, False)
        jsonschema.validate(document, report_schema)
        if kind == "snapshot":
            continue  # JSON is its only form
        shown = Shown()
        FORMATS["human"]().emit(result, shown)
        assert shown.text().strip(), kind
        with pytest.raises(NoView):
            FORMATS["markdown"]().emit(result, shown)
    assert "Collectives did not run: one GPU" in Shown.of(stage_results()["bench-collectives"])
    assert "no case ran" in Shown.of(stage_results()["kernels"])


def test_a_format_a_result_lacks_is_one_line_from_the_app():
    app = App()
    app.use("markdown")
    with pytest.raises(DoctorUsageError, match="^there is no Markdown view of bench$"):
        app.show(stage_results()["bench"])


class Shown:
    """An Output that keeps what a format wrote."""

    terminal = False

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.out = Console(file=self.buffer, width=100, no_color=True)

    def width(self):
        return None

    def write(self, text: str = "", nl: bool = True) -> None:
        self.buffer.write(text + ("\n" if nl else ""))

    def text(self) -> str:
        return self.buffer.getvalue()

    @classmethod
    def of(cls, result) -> str:
        shown = cls()
        FORMATS["human"]().emit(result, shown)
        return shown.text()
