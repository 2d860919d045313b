"""Input that would never end or never parse: JSON nested past any real document, and timeouts of nan or inf
seconds. Each is refused with exit 2 and a short message, never a traceback or a hang."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from rocm_doctor.cli.main import cli
from rocm_doctor.parsers import json_text


def nested(levels: int, kind: str = "list") -> str:
    return "[" * levels + "]" * levels if kind == "list" else '{"a":' * levels + "1" + "}" * levels


def test_shallow_documents_parse_as_usual():
    assert json_text.loads('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    assert json_text.loads(nested(json_text.MAX_DEPTH)) is not None


@pytest.mark.parametrize("levels", [json_text.MAX_DEPTH + 1, 100_000])
@pytest.mark.parametrize("kind", ["list", "object"])
def test_deep_documents_are_refused(levels, kind):
    with pytest.raises(json_text.TooDeep, match=f"nested deeper than {json_text.MAX_DEPTH} levels"):
        json_text.loads(nested(levels, kind))


def test_syntax_errors_stay_json_errors():
    with pytest.raises(json.JSONDecodeError):
        json_text.loads("{")


def _doctor(*args, cwd):
    return subprocess.run([sys.executable, "-m", "rocm_doctor", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


@pytest.mark.parametrize("args", [("check", "--from"), ("report", "--from"), ("fleet", "diff")])
def test_a_deep_file_is_one_line_and_exit_2(tmp_path, args):
    (tmp_path / "deep.json").write_text(nested(100_000))
    result = _doctor(*args, "deep.json", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "nested deeper than 200 levels" in lines[0] and "internal error" not in lines[0]


@pytest.mark.parametrize("option", ["--torch-timeout", "--command-timeout"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "soon"])
def test_timeouts_must_be_finite_and_positive(option, value):
    result = CliRunner().invoke(cli, ["check", "--from", "missing.json", option, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.output
    expected = "is not a number of seconds" if value == "soon" else "is not a finite number of seconds of at least"
    assert expected in result.output


def test_a_finite_timeout_is_taken():
    from rocm_doctor.cli.options import Seconds

    assert Seconds(0.5).convert("1.5", None, None) == 1.5
    assert Seconds(0.5).convert(2, None, None) == 2.0


@pytest.mark.parametrize("value", ["nan", "inf", "0"])
def test_the_fleet_worker_refuses_endless_timeouts(value, capsys):
    from rocm_doctor.distributed.__main__ import parse_args

    with pytest.raises(SystemExit) as exited:
        parse_args(["--timeout", value])
    assert exited.value.code == 2 and "finite, positive number of seconds" in capsys.readouterr().err
