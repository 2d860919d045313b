"""fix on the environment of a systemd unit (its rocm-doctor drop-in) and of a Jupyter kernel (kernel.json's env):
the text written (systemd's quoting, edits in place, other lines and keys kept), apply and undo byte for byte in a
temporary HOME and XDG_CONFIG_HOME, a refusal in one line when the folder is not writable, and end to end with a
fake systemctl on PATH."""

import json
import os
import stat
from pathlib import Path

import pytest

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.diagnosis import build
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.run_env import dropin_path, steps_for
from rocm_doctor.engine.steps import StepError
from rocm_doctor.fix import apply, changes, dropin, journal, kerneljson, rcfile, render, undo
from rocm_doctor.parsers import systemd_unit
from rocm_doctor.parsers.systemd_env import assignments

FIXTURES = Path(__file__).parent / "fixtures"
UNIT = "ollama.service"
SYSTEM_DROPIN = f"/etc/systemd/system/{UNIT}.d/rocm-doctor.conf"


def _environment_of(dropin_text: str) -> dict:
    """What systemd takes from a drop-in: its [Service] Environment= assignments, read by the unit parser."""
    files = systemd_unit.cat_files(f"# /x/{UNIT}.d/rocm-doctor.conf\n" + dropin_text)
    out = {}
    for directive in files[0]["directives"]:
        if directive["section"] == "Service" and directive["key"] == "Environment":
            out.update(assignments(directive["value"])[0])
    return out


# ---- the drop-in's text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["10.3.0", "a b", 'say "hi"', "C:\\dir\\", "$PATH:/opt/rocm/bin", "50%", "tab\there",
                                   "two\nlines", "café"])
def test_a_value_is_quoted_so_that_systemd_reads_it_back(value):
    line = S.unit_env(UNIT, SYSTEM_DROPIN, "X", value).line()
    text = dropin.with_line("", "X", line)
    assert text.splitlines()[1:] == ["[Service]", line] and "\n" not in line
    got = _environment_of(text)["X"]
    assert got.replace("%%", "%") == value  # systemd turns %% into % when it loads the unit
    assert ("%%" in line) == ("%" in value)


def test_a_new_drop_in_and_an_unset():
    assert dropin.with_line("", "HSA_OVERRIDE_GFX_VERSION", 'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0"') == (
        f"{dropin.HEADER}\n[Service]\nEnvironment=\"HSA_OVERRIDE_GFX_VERSION=10.3.0\"\n")
    assert S.unit_env(UNIT, SYSTEM_DROPIN, "HIP_VISIBLE_DEVICES", None).line() == "UnsetEnvironment=HIP_VISIBLE_DEVICES"


def test_an_existing_drop_in_is_edited_in_place():
    before = ("# mine\r\n[Service]\r\nEnvironment=\"A=1\" \"B=2\"\r\nEnvironment=\"HIP_VISIBLE_DEVICES=0\"\r\n"
              "Nice=5\r\n\r\n[Install]\r\nWantedBy=default.target")
    unset = dropin.with_line(before, "HIP_VISIBLE_DEVICES", "UnsetEnvironment=HIP_VISIBLE_DEVICES")
    assert unset == before.replace('Environment="HIP_VISIBLE_DEVICES=0"', "UnsetEnvironment=HIP_VISIBLE_DEVICES")
    assert dropin.current(unset, "HIP_VISIBLE_DEVICES") == "UnsetEnvironment=HIP_VISIBLE_DEVICES"
    assert dropin.current(unset, "A") is None  # a line that sets two variables is the user's, never ours
    added = dropin.with_line(unset, "C", 'Environment="C=3"')
    assert added == unset.replace("Nice=5\r\n", 'Nice=5\r\nEnvironment="C=3"\r\n')  # last in [Service], CRLF kept
    assert dropin.with_line(added, "C", 'Environment="C=3"') == added  # a second run changes nothing


def test_a_line_added_after_a_continued_line_stays_its_own():
    before = '[Service]\nEnvironment="A=1" \\\n    "B=2" \\\n'
    added = dropin.with_line(before, "C", 'Environment="C=3"')
    assert added.startswith(before) and added.endswith('\nEnvironment="C=3"\n')
    assert _environment_of(added)["C"] == "3" and _environment_of(added)["B"] == "2"


def test_a_real_override_conf_keeps_its_lines():
    cat = (FIXTURES / "systemd/ollama-systemctl-cat-override-conf-hsa-11.0.0-780m-igpu.txt").read_text()
    override = cat.split("# /etc/systemd/system/ollama.service.d/override.conf\n", 1)[1]
    edited = dropin.with_line(override, "HSA_OVERRIDE_GFX_VERSION", 'Environment="HSA_OVERRIDE_GFX_VERSION=11.0.2"')
    assert edited == override.replace("11.0.0", "11.0.2")
    without = "[Unit]\nDescription=x"
    assert dropin.with_line(without, "A", 'Environment="A=1"') == without + '\n[Service]\nEnvironment="A=1"\n'


def test_bad_unit_steps_are_refused():
    for bad in (dict(unit="../x", path=SYSTEM_DROPIN),
                dict(unit=UNIT, path="/etc/systemd/system/other.d/rocm-doctor.conf"),
                dict(unit=UNIT, path="relative/ollama.service.d/rocm-doctor.conf")):
        with pytest.raises(StepError):
            S.unit_env(name="A", value="1", **bad)
    with pytest.raises(StepError):
        S.kernel_env("k", "/home/u/kernel.py", "A", "1")


def test_setting_and_unsetting_one_variable_of_one_unit_contradict_each_other():
    set_it, unset_it = (S.unit_env(UNIT, SYSTEM_DROPIN, "A", value) for value in ("1", None))
    other_unit = S.unit_env("b.service", "/etc/systemd/system/b.service.d/rocm-doctor.conf", "A", None)
    findings = [Finding(id=f"f{n}", check=f"f{n}", status=Status.FAIL, title="t", message="m", fix=[step])
                for n, step in enumerate((set_it, unset_it, other_unit))]
    plan = build(findings).plan
    assert [item.step for item in plan.items] == [set_it, other_unit]
    assert [item.id for item in plan.items][0].startswith("set-a-ollama-service-")


# ---- kernel.json -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["jupyter/nsls2-conda-env-python-kernel.json",
                                     "jupyter/hpc-pytorch-module-load-wrapper-script-kernel.json"])
def test_kernel_json_gets_the_variable_and_keeps_everything_else(fixture):
    original = (FIXTURES / fixture).read_bytes()
    path = Path("/k/kernel.json")
    edited = kerneljson.with_env(original, path, "HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    twice = kerneljson.with_env(edited, path, "HIP_VISIBLE_DEVICES", "0")
    before, after = json.loads(original), json.loads(twice)
    assert list(after) == [*before, "env"] and all(after[k] == before[k] for k in before)
    assert list(after["env"].items()) == [("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), ("HIP_VISIBLE_DEVICES", "0")]
    head = original.decode().rstrip().rstrip("}").rstrip()
    assert twice.decode().startswith(head)  # every byte before "env" as it was
    assert kerneljson.current(twice, path, "HIP_VISIBLE_DEVICES") == '"HIP_VISIBLE_DEVICES": "0"'
    back = kerneljson.with_env(kerneljson.with_env(twice, path, "HIP_VISIBLE_DEVICES", None), path,
                               "HSA_OVERRIDE_GFX_VERSION", None)
    assert json.loads(back) == {**before, "env": {}}
    assert kerneljson.with_env(back, path, "NOT_THERE", None) == back


def test_an_existing_env_is_edited_where_it_is():
    original = b'{\n  "env": {\n    "A": "1",\n    "B": "caf\xc3\xa9"\n  },\n  "argv": ["python"]\n}\n'
    edited = kerneljson.with_env(original, Path("kernel.json"), "A", "2").decode()
    assert edited == '{\n  "env": {\n    "A": "2",\n    "B": "café"\n  },\n  "argv": ["python"]\n}\n'


@pytest.mark.parametrize("content, words", [
    ((FIXTURES / "jupyter/singularity-kernel-missing-comma-malformed.json").read_bytes(), "is not valid JSON"),
    (b'{"argv": ["python"], "env": ["A"]}', "env is not an object"),
    (b"\xff\xfe{}", "is not UTF-8"),
])
def test_a_kernel_json_that_cannot_be_edited_is_refused_in_one_line(content, words):
    with pytest.raises(rcfile.RcFileError) as err:
        kerneljson.with_env(content, Path("/k/kernel.json"), "A", "1")
    assert words in str(err.value) and "nothing was changed" in str(err.value) and "\n" not in str(err.value)


# ---- apply and undo ---------------------------------------------------------------------------------------------


def _items(*steps):
    return build([Finding(id="service-env-differs:X", check="service-env-differs", status=Status.FAIL, title="t",
                          message="m", fix=list(steps))]).plan.items


def _ctx(home, env=None):
    return changes.Context(os="linux", shell="bash", home=home, env=env or {"HOME": str(home)})


def _apply(items, ctx, state):
    previews = changes.preview_all(items, ctx)
    apply.preflight(previews, ctx)
    return apply.apply_plan(items, ctx, journal.Journal.create(state, {}))


def _user_unit_steps(env, *changed):
    run = {"kind": "systemd", "scope": "user", "name": UNIT}
    return steps_for(run, dict(changed), env)


@pytest.mark.parametrize("existing", [None, b"[Service]\nEnvironment=\"HSA_OVERRIDE_GFX_VERSION=9.0.0\"\nNice=5"])
def test_a_user_units_drop_in_goes_under_xdg_config_home_and_undoes_exactly(tmp_path, existing):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}
    path = xdg / "systemd/user" / f"{UNIT}.d/rocm-doctor.conf"
    if existing is not None:
        path.parent.mkdir(parents=True)
        path.write_bytes(existing)
        path.chmod(0o640)
    steps = _user_unit_steps(env, ("HSA_OVERRIDE_GFX_VERSION", "10.3.0"), ("HIP_VISIBLE_DEVICES", None))
    assert [s.kind for s in steps] == ["unit_env", "unit_env", "run_command", "run_command"]
    assert steps[0].path == str(path) and steps[0].user
    assert [s.argv() for s in steps[2:]] == [["systemctl", "--user", "daemon-reload"],
                                             ["systemctl", "--user", "restart", UNIT]]
    report = _apply(_items(*steps), _ctx(home, env), tmp_path / "state")
    assert [r.outcome for r in report.results] == ["applied", "applied", "skipped", "skipped"], report.error
    text = path.read_text()
    assert 'Environment="HSA_OVERRIDE_GFX_VERSION=10.3.0"' in text and "UnsetEnvironment=HIP_VISIBLE_DEVICES" in text
    assert "9.0.0" not in text and ("Nice=5" in text) == (existing is not None)
    again = _apply(_items(*steps), _ctx(home, env), tmp_path / "state")
    assert [r.outcome for r in again.results][:2] == ["already-applied", "already-applied"]

    result = undo.undo_run(journal.find(tmp_path / "state", None))
    assert result.error is None and {i.outcome for i in result.items} == {undo.RESTORED}
    if existing is None:
        assert not xdg.exists()  # the file and every folder fix made for it are gone
    else:
        assert path.read_bytes() == existing and stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_drop_in_edited_after_the_fix_is_left_as_it_is(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    (step, *_follow_up) = _user_unit_steps(env, ("A", "1"))
    assert step.path == str(home / ".config/systemd/user" / f"{UNIT}.d/rocm-doctor.conf")
    _apply(_items(step), _ctx(home, env), tmp_path / "state")
    Path(step.path).write_text(Path(step.path).read_text() + "Nice=5\n")
    (item,) = undo.undo_run(journal.find(tmp_path / "state", None)).items
    assert item.outcome == undo.LEFT and "changed since fix wrote it" in item.message
    assert Path(step.path).read_text().endswith("Nice=5\n")


def test_kernel_json_apply_and_undo_are_byte_exact(tmp_path):
    original = (FIXTURES / "jupyter/omero-venv-python-kernel.json").read_bytes()
    path = tmp_path / "home/.local/share/jupyter/kernels/omero/kernel.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    path.chmod(0o600)
    run = {"kind": "jupyter", "name": "omero", "kernel_json": str(path)}
    steps = steps_for(run, {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {})
    assert [s.kind for s in steps] == ["kernel_env", "advice"]
    report = _apply(_items(*steps), _ctx(tmp_path / "home"), tmp_path / "state")
    assert report.results[0].outcome == "applied", report.error
    assert json.loads(path.read_text())["env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert undo.undo_run(journal.find(tmp_path / "state", None)).items[0].outcome == undo.RESTORED
    assert path.read_bytes() == original and stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.fixture
def unprivileged(monkeypatch):
    """This process as an ordinary user: not root, and a folder's write bit is what os.access answers."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: real(p, mode, **kw) and (
        not mode & os.W_OK or bool(os.stat(p).st_mode & stat.S_IWUSR)))


def test_a_system_units_drop_in_without_permission_is_refused_and_nothing_is_written(tmp_path, unprivileged):
    units = tmp_path / "etc/systemd/system"
    units.mkdir(parents=True)
    units.chmod(0o555)
    rc = tmp_path / "home/.bashrc"
    rc.parent.mkdir()
    step = S.unit_env(UNIT, str(units / f"{UNIT}.d/rocm-doctor.conf"), "HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    items = _items(S.set_env("OTHER", "1"), step)
    ctx = _ctx(rc.parent)
    previews = changes.preview_all(items, ctx)
    assert render.label(previews[1], dry_run=True).startswith("will apply, needs root: re-run with sudo -E")
    with pytest.raises(apply.ApplyError) as err:
        apply.preflight(previews, ctx)
    message = str(err.value)
    assert message == (f"writing {step.path} needs root; nothing was changed: re-run with sudo -E (-E keeps your "
                       "shell's variables, which the plan compares)")
    assert list(units.iterdir()) == [] and not rc.exists()


def test_a_user_unit_in_a_read_only_folder_is_refused_in_one_line(tmp_path, unprivileged):
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    xdg.chmod(0o555)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(xdg)}
    step = _user_unit_steps(env, ("A", "1"))[0]
    with pytest.raises(apply.ApplyError) as err:
        apply.preflight(changes.preview_all(_items(step), _ctx(tmp_path, env)), _ctx(tmp_path, env))
    assert str(err.value) == f"cannot create files in {xdg}; nothing was changed"
    assert list(xdg.iterdir()) == []


def test_a_kernel_json_broken_since_the_check_is_refused_before_anything_changes(tmp_path):
    path = tmp_path / "kernel.json"
    broken = (FIXTURES / "jupyter/singularity-kernel-missing-comma-malformed.json").read_bytes()
    path.write_bytes(broken)
    ctx = _ctx(tmp_path)
    previews = changes.preview_all(_items(S.set_env("OTHER", "1"), S.kernel_env("k", str(path), "A", "1")), ctx)
    with pytest.raises(apply.ApplyError) as err:
        apply.preflight(previews, ctx)
    assert "is not valid JSON" in str(err.value) and "\n" not in str(err.value)
    assert path.read_bytes() == broken and not (tmp_path / ".bashrc").exists()


def test_a_value_set_in_an_environment_file_is_changed_there():
    run = {"kind": "systemd", "scope": "system", "name": UNIT,
           "sources": {"HSA_OVERRIDE_GFX_VERSION": "EnvironmentFile /etc/default/ollama"}}
    (advice, *_follow_up) = steps_for(run, {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {})
    assert advice.kind == "advice" and "in /etc/default/ollama" in advice.text
    assert dropin_path(run, {}) == SYSTEM_DROPIN
    unset_by_the_unit = dict(run, sources={}, unset=["HSA_OVERRIDE_GFX_VERSION"])
    (advice, *_follow_up) = steps_for(unset_by_the_unit, {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {})
    assert advice.kind == "advice" and "out of the UnsetEnvironment= setting" in advice.text
    (removal, *_follow_up) = steps_for(unset_by_the_unit, {"HSA_OVERRIDE_GFX_VERSION": None}, {})
    assert removal.kind == "unit_env"


# ---- end to end ------------------------------------------------------------------------------------------------


def _fake_user_systemctl(fake_bin, tmp_path):
    """A user manager that knows ollama.service, whose Environment= sets HIP_VISIBLE_DEVICES empty (every GPU
    hidden); it records its arguments."""
    (tmp_path / "show.txt").write_text(
        "Id=ollama.service\nLoadState=loaded\nEnvironment=HIP_VISIBLE_DEVICES= \"PATH=/usr/bin:/bin\"\n"
        "ExecStart={ path=/usr/local/bin/ollama ; argv[]=/usr/local/bin/ollama serve ; ignore_errors=no ; "
        "start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n"
        "FragmentPath=/home/u/.config/systemd/user/ollama.service\nDropInPaths=\n")
    fake_bin.add("systemctl", f"""\
        echo "$*" >> '{tmp_path}/calls.txt'
        case "$*" in
          *show-environment*) printf 'LANG=C.UTF-8\\nPATH=/usr/bin:/bin\\n' ;;
          *"--user show ollama"*) cat '{tmp_path}/show.txt' ;;
          *show*) printf 'LoadState=not-found\\n' ;;
        esac
        """)


def test_dry_run_apply_and_undo_of_a_user_unit_end_to_end(doctor, fake_bin, tmp_path, isolated_env):
    _fake_user_systemctl(fake_bin, tmp_path)
    env = dict(isolated_env, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    dropin_file = tmp_path / "xdg/systemd/user/ollama.service.d/rocm-doctor.conf"
    args = ("--user-unit", "ollama", "--no-gpu", "--only", "gpu-visibility-env:HIP_VISIBLE_DEVICES")
    dry = doctor("fix", "--dry-run", *args, env=env)
    assert dry.returncode == 0, dry.stderr
    assert f"unset HIP_VISIBLE_DEVICES for the user unit ollama.service (UnsetEnvironment=HIP_VISIBLE_DEVICES in " \
           f"{dropin_file})  [will apply]" in dry.stdout
    assert f"{dropin_file} (a new file) will hold:\n      {dropin.HEADER}\n      [Service]\n" \
           "      UnsetEnvironment=HIP_VISIBLE_DEVICES\n" in dry.stdout
    assert "\n      systemctl --user daemon-reload\n" in dry.stdout
    assert "\n      systemctl --user restart ollama.service\n" in dry.stdout
    assert not dropin_file.exists() and not (tmp_path / "state").exists()
    calls = (tmp_path / "calls.txt").read_text()
    assert "daemon-reload" not in calls and "restart" not in calls
    guide = " ".join((Path(__file__).parents[1] / "docs" / "guide.md").read_text(encoding="utf-8").split())
    assert "`fix --dry-run` marks it *will apply*" in guide and "the reload and the restart are printed" in guide

    applied = doctor("fix", "--yes", *args, env=env)
    assert applied.returncode == 1, applied.stderr  # the reload and the restart are left to the user
    assert dropin_file.read_text() == f"{dropin.HEADER}\n[Service]\nUnsetEnvironment=HIP_VISIBLE_DEVICES\n"
    assert "gpu-visibility-env:HIP_VISIBLE_DEVICES: written; systemd reads it once you run the reload" in applied.stdout
    assert "Still to do (fix runs none of these):" in applied.stdout
    assert "daemon-reload" not in (tmp_path / "calls.txt").read_text()  # fix restarts nothing

    undone = doctor("fix", "--undo", "--yes", env=env)
    assert undone.returncode == 0, undone.stderr
    assert not (tmp_path / "xdg").exists()


def test_a_kernels_env_end_to_end(doctor, tmp_path, isolated_env):
    home = Path(isolated_env["HOME"])
    folder = home / ".local/share/jupyter/kernels/rocm"
    folder.mkdir(parents=True)
    original = json.dumps({"argv": ["/nonexistent/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                           "display_name": "ROCm", "env": {"HIP_VISIBLE_DEVICES": ""}}, indent=1) + "\n"
    (folder / "kernel.json").write_text(original)
    args = ("--kernel", "rocm", "--no-gpu", "--only", "gpu-visibility-env:HIP_VISIBLE_DEVICES")
    dry = doctor("fix", "--dry-run", *args)
    assert '~/.local/share/jupyter/kernels/rocm/kernel.json in "env" removes: "HIP_VISIBLE_DEVICES"' in dry.stdout
    assert "Restart the kernel 'rocm'" in dry.stdout
    applied = doctor("fix", "--yes", *args)
    assert json.loads((folder / "kernel.json").read_text())["env"] == {}
    assert "gpu-visibility-env:HIP_VISIBLE_DEVICES: resolved" in applied.stdout, applied.stdout  # re-checked --kernel
    assert doctor("fix", "--undo", "--yes").returncode == 0
    assert (folder / "kernel.json").read_text() == original
