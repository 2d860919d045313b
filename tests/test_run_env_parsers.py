"""The grammars of a service's and a kernel's environment, on real `systemctl show`, `systemctl cat`,
`systemctl show-environment` outputs and kernel.json files (tests/fixtures/systemd, tests/fixtures/jupyter), and
systemd's own rules for the corners the real outputs do not reach."""

from rocm_doctor.parsers import kernelspec, systemd_env, systemd_unit


def test_systemctl_cat_of_ollama_with_an_override_drop_in(fixture_text):
    files = systemd_unit.cat_files(fixture_text("systemd/ollama-systemctl-cat-override-conf-hsa-11.0.0-780m-igpu.txt"))
    assert [f["file"] for f in files] == ["/etc/systemd/system/ollama.service",
                                          "/etc/systemd/system/ollama.service.d/override.conf"]
    service = {d["key"]: d["value"] for d in files[0]["directives"] if d["section"] == "Service"}
    assert service["ExecStart"] == "/usr/local/bin/ollama serve" and service["User"] == "ollama"
    assert [d["key"] for d in files[1]["directives"]] == ["Environment"]  # the stray ``` line is no directive
    origins, notes = systemd_unit.environment_origins(files)
    assert origins == {"PATH": "/etc/systemd/system/ollama.service",
                       "HSA_OVERRIDE_GFX_VERSION": "/etc/systemd/system/ollama.service.d/override.conf"}
    assert notes == []
    pairs, _ = systemd_env.assignments(files[1]["directives"][0]["value"])
    assert pairs == [("HSA_OVERRIDE_GFX_VERSION", "11.0.0")]


def test_environment_path_dollar_path_is_taken_literally(fixture_text):
    files = systemd_unit.cat_files(fixture_text("systemd/ollama-systemctl-cat-environment-path-dollar-path-literal.txt"))
    directives = files[0]["directives"]
    assert "use_gpu" not in " ".join(d["key"] for d in directives)  # `#use_gpu = true` is a comment
    environment = [d for d in directives if d["key"] == "Environment"]
    pairs, notes = systemd_env.assignments(environment[0]["value"])
    assert pairs == [("PATH", "$PATH")]
    assert any("does not expand $ references" in n for n in notes)
    _, notes = systemd_unit.environment_origins(files)
    assert notes and notes[0].startswith("/etc/systemd/system/ollama.service:14: PATH=$PATH")


def test_environment_files_property_in_both_forms(fixture_text):
    new = systemd_unit.show_properties(fixture_text(
        "systemd/debian-systemd244-systemctl-show-ssh-environmentfiles-ignore-errors.txt"))
    assert systemd_unit.environment_files(new["EnvironmentFiles"]) == [{"path": "/etc/default/ssh", "optional": True}]
    user = systemd_unit.show_properties(fixture_text(
        "systemd/debian-systemd244-systemctl-show-user-runtime-unit-environmentfiles.txt"))
    assert systemd_unit.environment_files(user["EnvironmentFiles"])[0]["path"] == "/etc/default/foo"
    old = systemd_unit.show_properties(fixture_text(
        "systemd/docker-2016-systemctl-show-environmentfile-old-key-fragmentpath-empty-environment.txt"))
    assert systemd_unit.environment_files(old["EnvironmentFile"]) == [{"path": "/etc/sysconfig/docker",
                                                                      "optional": True}]
    assert systemd_unit.first(old, "FragmentPath") == "/etc/systemd/system/docker.service"
    assert old["Environment"] == [""] and systemd_env.assignments("") == ([], [])
    # several files on one line, a '-' kept by an older systemd, a unit file's own form
    assert systemd_unit.environment_files(["/a (ignore_errors=no) -/b (ignore_errors=yes)", "-/c"]) == [
        {"path": "/a", "optional": False}, {"path": "/b", "optional": True}, {"path": "/c", "optional": True}]


def test_drop_in_paths(fixture_text):
    props = systemd_unit.show_properties(fixture_text("systemd/debian-systemd244-systemctl-show-ssh-dropinpaths.txt"))
    words, _ = systemd_env.split_words(systemd_unit.first(props, "DropInPaths"), strict=False)
    assert words == ["/etc/systemd/system/ssh.service.d/override.conf"]


def test_unquoted_environment_property_of_an_older_systemd(fixture_text):
    props = systemd_unit.show_properties(fixture_text(
        "systemd/systemd-2017-systemctl-show-manager-environment-unquoted-excerpt.txt"))
    pairs, _ = systemd_env.assignments(props["Environment"][0], strict=False)
    env = dict(pairs)
    assert list(env)[:6] == ["COLORTERM", "DISPLAY", "HISTSIZE", "HOME", "HOSTNAME", "LANG"]
    assert env["LANG"] == "en_GB.UTF-8" and env["LS_COLORS"].startswith("rs=0:di=38;5;33:")


def test_show_environment(fixture_text):
    env = systemd_env.show_environment(fixture_text("systemd/ubuntu-systemctl-show-environment-lang-path.txt"))
    assert env == {"LANG": "en_US.UTF-8", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    quoted = systemd_env.show_environment(fixture_text(
        "systemd/popos-systemd248-user-show-environment-dollar-quote-double-quoted.txt"))
    # $'…' is undone once; systemd 248 had quoted the value twice, which stays visible
    assert quoted == {"NIX_PROFILES": "$'/nix/var/nix/profiles/default /home/jarrad/.nix-profile'"}


def test_systemd_quoting_rules():
    words, problem = systemd_env.split_words('"VAR1=word1 word2" VAR2=word3 "VAR3=$word 5 6" A="b c"\\x41 \'D=e\\tf\'')
    assert problem is None
    assert words == ["VAR1=word1 word2", "VAR2=word3", "VAR3=$word 5 6", "A=b cA", "D=e\tf"]
    _, problem = systemd_env.split_words('"unclosed')
    assert problem == 'an unclosed " quote'
    pairs, notes = systemd_env.assignments('OK=1 "BAD')
    assert pairs == [("OK", "1")] and "ignores the rest" in notes[0]  # systemd keeps the words before the error
    pairs, notes = systemd_env.assignments("HOME_CACHE=%h/.cache 9X=1")
    assert pairs == [("HOME_CACHE", "%h/.cache")]
    assert any("%h is a systemd specifier" in n for n in notes) and any("9X=1" in n for n in notes)


def test_environment_file_rules():
    pairs, notes = systemd_env.env_file(
        "# comment\n; comment\nexport FOO=bar\n  A = \"x y\"  \nB='q'r  \nC=plain  value   \n"
        "D=\"a\\$b \\n\"\nE=line\\\n cont\nF='multi\nline'\nno equals sign\nG=\n")
    assert pairs == [("A", "x y"), ("B", "qr"), ("C", "plain  value"), ("D", "a$b \\n"), ("E", "line cont"),
                     ("F", "multi\nline"), ("G", "")]
    assert notes == ["'export FOO=…' in an environment file: systemd does not know 'export' and ignores the line"]


def test_exec_start_forms():
    shown = systemd_unit.exec_start("{ path=/usr/local/bin/ollama ; argv[]=/usr/local/bin/ollama serve ; "
                                    "ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; "
                                    "status=0/0 }")
    assert shown == {"path": "/usr/local/bin/ollama", "argv": ["/usr/local/bin/ollama", "serve"]}
    assert systemd_unit.exec_start("-/opt/venv/bin/python main.py --listen")["argv"][0] == "/opt/venv/bin/python"
    assert systemd_unit.exec_start("") is None


def test_kernelspec_list_annotated_by_its_author_is_not_json(fixture_text):
    specs, problem = kernelspec.kernelspec_list(fixture_text("jupyter/macos-kernelspec-list-json-annotated-with-comments.txt"))
    assert specs == {} and problem.startswith("jupyter kernelspec list --json output is not valid JSON")
    listing = '{"kernelspecs": {"Python3": {"resource_dir": "/k/python3", "spec": {"argv": ["python", "-m", ' \
              '"ipykernel_launcher", "-f", "{connection_file}"], "env": {}, "display_name": "Python 3"}}}}'
    specs, problem = kernelspec.kernelspec_list(listing)
    assert problem is None and specs["python3"]["resource_dir"] == "/k/python3"
    assert specs["python3"]["spec"]["argv"][2] == "ipykernel_launcher"


def test_kernel_json_files(fixture_text):
    spec, problem = kernelspec.kernel_json(fixture_text("jupyter/nsls2-conda-env-python-kernel.json"))
    assert problem is None and spec["argv"][0] == "/opt/conda_envs/collection-2020-2.0rc9/bin/python"
    assert kernelspec.is_python(spec["argv"][0]) and spec["argv"][-1] == "widget"  # extra ipykernel options
    assert spec["env"] == {} and spec["display_name"] == "Collection (2020-2.0rc9)"
    wrapper, _ = kernelspec.kernel_json(fixture_text("jupyter/hpc-pytorch-module-load-wrapper-script-kernel.json"))
    assert not kernelspec.is_python(wrapper["argv"][0])
    omero, _ = kernelspec.kernel_json(fixture_text("jupyter/omero-venv-python-kernel.json"))
    assert kernelspec.is_python(omero["argv"][0]) and omero["argv"][1:] == ["-m", "ipykernel", "-f", "{connection_file}"]
    spec, problem = kernelspec.kernel_json(fixture_text("jupyter/singularity-kernel-missing-comma-malformed.json"))
    assert spec is None and problem.startswith("kernel.json is not valid JSON (Expecting ',' delimiter")
    assert kernelspec.kernel_json('{"argv": []}')[1].startswith("kernel.json has no argv")
    assert kernelspec.kernel_json('{"argv": ["python"], "env": {"A": 1}}')[1] == "kernel.json's env is not an object of strings"


def test_kernel_environment_fills_in_dollar_references_like_jupyter_client():
    env = kernelspec.kernel_environment({"LD_LIBRARY_PATH": "/usr/lib", "PYTHONEXECUTABLE": "/x"},
                                        {"LD_LIBRARY_PATH": "/opt/rocm/lib:${LD_LIBRARY_PATH}", "X": "$NOPE"})
    assert env == {"LD_LIBRARY_PATH": "/opt/rocm/lib:/usr/lib", "X": "$NOPE"}
    assert [kernelspec.is_python(p) for p in ("python3.12", "C:\\x\\python.exe", "/usr/bin/python3t", "ipython")] == [
        True, True, True, False]
