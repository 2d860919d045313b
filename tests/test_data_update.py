"""`data update` against a real HTTP server on 127.0.0.1: good, corrupt, wrong checksum, stalled, oversized, 404,
bad tables; each refusal leaves the installed data as it was. And the store reads a valid installed bundle first."""

import hashlib
import http.server
import json
import subprocess
import sys
import tempfile
import threading
import time
from importlib import resources

import pytest

from rocm_doctor.knowledge import http as nethttp
from rocm_doctor.knowledge import store, update

FAST = nethttp.Limits(connect_s=1.0, read_s=1.0, deadline_s=3.0, max_bytes=2 * 1024 * 1024)


def make_bundle(version="2099.1.1", edit=None, drop=None):
    """A bundle of the embedded tables, optionally edited, with a manifest that matches it."""
    root = resources.files("rocm_doctor.data")
    names = update.required_files()
    files = {n: root.joinpath(n).read_text(encoding="utf-8") for n in names if n != drop}
    if edit:
        for name, fn in edit.items():
            files[name] = json.dumps(fn(json.loads(files[name])), indent=1)
    manifest = {"data_version": version, "generated": version.replace(".", "-"),
                "files": [{"name": n, "sha256": hashlib.sha256(t.encode()).hexdigest(), "about": ""} for n, t in files.items()]}
    bundle = {"format": update.FORMAT, "format_version": 1, "manifest": manifest, "files": files}
    return json.dumps(bundle).encode()


def marked(value):
    return lambda table: dict(table, x_test_marker=value)


class Server:
    """Serves `routes[path] = (status, body, options)`; options: stall (s before the body), trickle, no_length."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        routes, requests = self.routes, self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                requests.append(self.path)
                status, body, opts = routes.get(self.path, (404, b"not found", {}))
                self.send_response(status)
                if not opts.get("no_length"):
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if opts.get("stall"):
                    time.sleep(opts["stall"])
                try:
                    if opts.get("trickle"):
                        for i in range(0, len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(opts["trickle"])
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(self, name, raw, checksum=None, **opts):
        self.routes[f"/{name}"] = (200, raw, opts)
        digest = checksum or hashlib.sha256(raw).hexdigest()
        self.routes[f"/{name}.sha256"] = (200, f"{digest}  {name}\n".encode(), {})
        return f"{self.url}/{name}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "userdata"
    monkeypatch.setenv(update.DIR_ENV, str(folder))
    store.load.cache_clear()
    yield folder
    store.load.cache_clear()


def tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def installed_v1(server, data_dir):
    update.update(server.publish("v1.json", make_bundle("2099.1.1", edit={"torch_wheels.json": marked("v1")})), limits=FAST)
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v1"
    return tree(data_dir)


def test_good_bundle_installs_and_the_store_reads_it_first(server, data_dir, installed_v1):
    url = server.publish("v2.json", make_bundle("2099.2.1", edit={"torch_wheels.json": marked("v2")}))
    result = update.update(url, limits=FAST)
    assert result["data_version"] == "2099.2.1"
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v2"
    assert "x_test_marker" not in store.load("gpu_catalog.json")
    assert len(list((data_dir / "bundles").iterdir())) == 1  # the old bundle was pruned
    assert update.installed().meta["source"] == url


@pytest.mark.parametrize("case, expect", [
    ("corrupt", "checksum mismatch"),
    ("wrong-checksum", "checksum mismatch"),
    ("stall", "sent nothing for 1 s"),
    ("trickle", "did not finish within 3 s"),
    ("oversized", "the limit is"),
    ("oversized-streamed", "sent more than"),
    ("missing", "HTTP 404"),
    ("missing-checksum", "HTTP 404"),
    ("not-json", "not valid JSON"),
    ("missing-table", "lacks the required table gpu_catalog.json"),
    ("table-not-json", "torch_wheels.json does not match the sha256"),
    ("table-wrong-shape", "lacks the key(s) "),
    ("older", "older than the data built into"),
    ("bad-name", "may not install"),
])
def test_bad_downloads_leave_the_old_data(server, data_dir, installed_v1, case, expect):
    good = make_bundle("2099.3.1")
    if case == "corrupt":
        url = server.publish("b.json", good[:-10] + b"XXXXXXXXXX", checksum=hashlib.sha256(good).hexdigest())
    elif case == "wrong-checksum":
        url = server.publish("b.json", good, checksum="0" * 64)
    elif case == "stall":
        url = server.publish("b.json", good, stall=3)
    elif case == "trickle":
        url = server.publish("b.json", good[:200], trickle=0.1)
    elif case == "oversized":
        url = server.publish("b.json", b" " * (FAST.max_bytes + 1))
    elif case == "oversized-streamed":
        url = server.publish("b.json", b" " * (FAST.max_bytes + 100_000), no_length=True)
    elif case == "missing":
        url = f"{server.url}/nothing-here.json"
    elif case == "missing-checksum":
        url = server.publish("b.json", good)
        del server.routes["/b.json.sha256"]
    elif case == "not-json":
        url = server.publish("b.json", b"<html>captive portal</html>")
    elif case == "missing-table":
        url = server.publish("b.json", make_bundle("2099.3.1", drop="gpu_catalog.json"))
    elif case == "table-not-json":
        raw = json.loads(make_bundle("2099.3.1"))
        raw["files"]["torch_wheels.json"] = "{not json"
        url = server.publish("b.json", json.dumps(raw).encode())
    elif case == "table-wrong-shape":
        url = server.publish("b.json", make_bundle("2099.3.1", edit={"torch_wheels.json": lambda t: {"about": "x"}}))
    elif case == "older":
        url = server.publish("b.json", make_bundle("2000.1.1"))
    elif case == "bad-name":
        raw = json.loads(make_bundle("2099.3.1"))
        raw["files"]["../escape.json"] = "{}"
        raw["manifest"]["files"].append({"name": "../escape.json", "sha256": hashlib.sha256(b"{}").hexdigest()})
        url = server.publish("b.json", json.dumps(raw).encode())
    started = time.monotonic()
    with pytest.raises(update.UpdateError, match=expect.replace("(", r"\(").replace(")", r"\)")):
        update.update(url, limits=FAST)
    assert time.monotonic() - started < 6
    assert tree(data_dir) == installed_v1
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v1"


def test_bad_first_download_leaves_the_embedded_data(server, data_dir):
    with pytest.raises(update.UpdateError):
        update.update(server.publish("b.json", b"garbage", checksum="1" * 64), limits=FAST)
    assert update.installed() is None
    assert "x_test_marker" not in store.load("torch_wheels.json")


def test_tampered_installed_table_falls_back_to_embedded(data_dir, installed_v1):
    bundle = update.installed()
    bundle.path("torch_wheels.json").write_text('{"x_test_marker": "tampered"}')
    store.load.cache_clear()
    assert "x_test_marker" not in store.load("torch_wheels.json")
    assert "x_test_marker" not in str(store.load("gpu_catalog.json"))[:0]  # other tables still load


def test_embedded_data_newer_than_the_download_wins(data_dir, installed_v1, monkeypatch):
    monkeypatch.setattr(update, "embedded_manifest", lambda: {"data_version": "2100.1.1", "files": []})
    store.load.cache_clear()
    assert update.installed() is None
    assert "x_test_marker" not in store.load("torch_wheels.json")


def test_user_data_dir_locations(tmp_path):
    assert update.user_data_dir({update.DIR_ENV: "/x/y"}).as_posix() == "/x/y"
    if sys.platform != "win32":
        assert update.user_data_dir({"XDG_DATA_HOME": "/xdg"}).as_posix() == "/xdg/rocm-doctor/data"


def cli(args, env):
    return subprocess.run([sys.executable, "-m", "rocm_doctor", *args], capture_output=True, text=True, env=env, timeout=60,
                          cwd=tempfile.gettempdir())  # not the checkout: the installed package runs


def test_cli_update_show_reset(server, data_dir, tmp_path, isolated_env):
    env = dict(isolated_env, **{update.DIR_ENV: str(data_dir)})
    shown = json.loads(cli(["data", "show", "--json"], env).stdout)
    assert shown["active"]["origin"] == "embedded" and shown["tables"]
    assert all("sources" in t for t in shown["tables"])

    bad = cli(["data", "update", "--url", f"{server.url}/none.json"], env)
    assert bad.returncode == 2 and "HTTP 404" in bad.stderr and "unchanged" in bad.stderr

    url = server.publish("d.json", make_bundle("2099.5.1"))
    ok = cli(["data", "update", "--url", url], env)
    assert ok.returncode == 0, ok.stderr
    assert "installed data version 2099.5.1" in ok.stdout
    shown = json.loads(cli(["data", "show", "--json"], env).stdout)
    assert shown["active"]["origin"] == "installed" and shown["active"]["data_version"] == "2099.5.1"
    assert "Data in use: installed" in cli(["data", "show"], env).stdout

    assert cli(["data", "reset"], env).returncode == 0
    assert json.loads(cli(["data", "show", "--json"], env).stdout)["active"]["origin"] == "embedded"


def test_cli_pack_makes_a_bundle_update_accepts(server, data_dir, tmp_path, isolated_env):
    src = tmp_path / "release"
    src.mkdir()
    raw = json.loads(make_bundle("2099.6.1"))
    for name, text in raw["files"].items():
        (src / name).write_text(text)
    (src / "manifest.json").write_text(json.dumps(raw["manifest"]))
    env = dict(isolated_env, **{update.DIR_ENV: str(data_dir)})
    packed = cli(["data", "pack", str(src), "-o", str(tmp_path / "out.json")], env)
    assert packed.returncode == 0, packed.stderr
    body = (tmp_path / "out.json").read_bytes()
    url = server.publish("out.json", body, checksum=(tmp_path / "out.json.sha256").read_text().split()[0])
    assert update.update(url, limits=FAST)["data_version"] == "2099.6.1"
