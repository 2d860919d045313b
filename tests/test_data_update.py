"""`data update` against a real HTTP server on 127.0.0.1 (plain http, so allow_http): good, corrupt, badly signed,
stalled, oversized, 404, bad tables; each refusal leaves the installed data as it was. And the store reads a valid
installed bundle first. Packs are signed with a test key the tests trust in place of the shipped one."""

import base64
import hashlib
import http.server
import json
import os
import sys
import threading
import time
from importlib import resources

import pytest
from click.testing import CliRunner

from rocm_doctor.cli.main import cli as doctor_cli
from rocm_doctor.knowledge import signing, store, update
from rocm_doctor.knowledge import http as nethttp

FAST = nethttp.Limits(connect_s=1.0, read_s=1.0, deadline_s=3.0, max_bytes=2 * 1024 * 1024)
SEED = bytes(range(32))
KEY_ID = signing.key_id(signing.public_key(SEED))
EMBEDDED = update.embedded_manifest()["data_version"]


def v(n):
    """A data version after the embedded one: the embedded date with a release number."""
    return f"{EMBEDDED}.{n}"


@pytest.fixture(autouse=True)
def trust_the_test_key(monkeypatch):
    monkeypatch.setattr(signing, "TRUSTED_KEYS", {KEY_ID: {"signer": "test signer",
                                                           "public_key": signing.public_key(SEED).hex()}})


def make_bundle(version=None, edit=None, drop=None):
    """A bundle of the embedded tables, optionally edited, with a manifest that matches it."""
    root = resources.files("rocm_doctor.data")
    names = update.required_files()
    files = {n: root.joinpath(n).read_text(encoding="utf-8") for n in names if n != drop}
    if edit:
        for name, fn in edit.items():
            files[name] = json.dumps(fn(json.loads(files[name])), indent=1)
    version = version or v(1)
    manifest = {"data_version": version, "generated": "-".join(version.split(".")[:3]),
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

    def publish(self, name, raw, signed=None, **opts):
        """Serve `raw` with a signature of `signed` (default: of `raw` itself) by the test key."""
        self.routes[f"/{name}"] = (200, raw, opts)
        self.routes[f"/{name}.sig"] = (200, signing.sign(raw if signed is None else signed, SEED).encode(), {})
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
    update.update(server.publish("v1.json", make_bundle(v(1), edit={"torch_wheels.json": marked("v1")})), limits=FAST, allow_http=True)
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v1"
    return tree(data_dir)


def test_good_bundle_installs_and_the_store_reads_it_first(server, data_dir, installed_v1):
    url = server.publish("v2.json", make_bundle(v(2), edit={"torch_wheels.json": marked("v2")}))
    result = update.update(url, limits=FAST, allow_http=True)
    assert result["data_version"] == v(2) and result["signed_by"] == "test signer"
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v2"
    assert "x_test_marker" not in store.load("gpu_catalog.json")
    assert len(list((data_dir / "bundles").iterdir())) == 1  # the old bundle was pruned
    assert update.installed().meta["source"] == url


@pytest.mark.parametrize("case, expect", [
    ("corrupt", "does not match the downloaded pack"),
    ("signed-another-pack", "does not match the downloaded pack"),
    ("stall", "sent nothing for 1 s"),
    ("trickle", "did not finish within 3 s"),
    ("oversized", "the limit is"),
    ("oversized-streamed", "sent more than"),
    ("missing", "HTTP 404"),
    ("unsigned", "HTTP 404"),
    ("not-json", "not valid JSON"),
    ("missing-table", "lacks the required table gpu_catalog.json"),
    ("table-not-json", "torch_wheels.json does not match the sha256"),
    ("table-wrong-shape", "lacks the key(s) "),
    ("older", "older than the data built into"),
    ("bad-name", "may not install"),
])
def test_bad_downloads_leave_the_old_data(server, data_dir, installed_v1, case, expect):
    good = make_bundle(v(3))
    if case == "corrupt":
        url = server.publish("b.json", good[:-10] + b"XXXXXXXXXX", signed=good)
    elif case == "signed-another-pack":
        url = server.publish("b.json", good, signed=make_bundle(v(4)))
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
    elif case == "unsigned":
        url = server.publish("b.json", good)
        del server.routes["/b.json.sig"]
    elif case == "not-json":
        url = server.publish("b.json", b"<html>captive portal</html>")
    elif case == "missing-table":
        url = server.publish("b.json", make_bundle(v(3), drop="gpu_catalog.json"))
    elif case == "table-not-json":
        raw = json.loads(make_bundle(v(3)))
        raw["files"]["torch_wheels.json"] = "{not json"
        url = server.publish("b.json", json.dumps(raw).encode())
    elif case == "table-wrong-shape":
        url = server.publish("b.json", make_bundle(v(3), edit={"torch_wheels.json": lambda t: {"about": "x"}}))
    elif case == "older":
        url = server.publish("b.json", make_bundle("2000.01.01"))
    elif case == "bad-name":
        raw = json.loads(make_bundle(v(3)))
        raw["files"]["../escape.json"] = "{}"
        raw["manifest"]["files"].append({"name": "../escape.json", "sha256": hashlib.sha256(b"{}").hexdigest()})
        url = server.publish("b.json", json.dumps(raw).encode())
    started = time.monotonic()
    with pytest.raises(update.UpdateError, match=expect.replace("(", r"\(").replace(")", r"\)")):
        update.update(url, limits=FAST, allow_http=True)
    assert time.monotonic() - started < 6
    assert tree(data_dir) == installed_v1
    store.load.cache_clear()
    assert store.load("torch_wheels.json")["x_test_marker"] == "v1"


def test_bad_first_download_leaves_the_embedded_data(server, data_dir):
    with pytest.raises(update.UpdateError):
        update.update(server.publish("b.json", b"garbage", signed=b"other"), limits=FAST, allow_http=True)
    assert update.installed() is None
    assert "x_test_marker" not in store.load("torch_wheels.json")


def test_tampered_installed_table_falls_back_to_embedded(data_dir, installed_v1):
    bundle = update.installed()
    bundle.path("torch_wheels.json").write_text('{"x_test_marker": "tampered"}')
    store.load.cache_clear()
    assert "x_test_marker" not in store.load("torch_wheels.json")
    assert "x_test_marker" not in str(store.load("gpu_catalog.json"))[:0]  # other tables still load


def test_embedded_data_newer_than_the_download_wins(data_dir, installed_v1, monkeypatch):
    monkeypatch.setattr(update, "embedded_manifest", lambda: {"data_version": v(9), "files": []})
    store.load.cache_clear()
    assert update.installed() is None
    assert "x_test_marker" not in store.load("torch_wheels.json")


def test_user_data_dir_locations(tmp_path):
    assert update.user_data_dir({update.DIR_ENV: "/x/y"}).as_posix() == "/x/y"
    if sys.platform != "win32":
        assert update.user_data_dir({"XDG_DATA_HOME": "/xdg"}).as_posix() == "/xdg/rocm-doctor/data"


class Ran:
    def __init__(self, result):
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def cli(args, env):
    """In this process, so that the test key is trusted; `env` is set over the process environment."""
    return Ran(CliRunner().invoke(doctor_cli, args, env=env, catch_exceptions=False))


def test_cli_update_show_reset(server, data_dir, tmp_path, isolated_env):
    env = dict(isolated_env, **{update.DIR_ENV: str(data_dir)})
    shown = json.loads(cli(["data", "show", "--json"], env).stdout)
    assert shown["active"]["origin"] == "embedded" and shown["tables"]
    assert all("sources" in t for t in shown["tables"])

    bad = cli(["data", "update", "--allow-http", "--url", f"{server.url}/none.json"], env)
    assert bad.returncode == 2 and "HTTP 404" in bad.stderr and "unchanged" in bad.stderr

    url = server.publish("d.json", make_bundle(v(5)))
    ok = cli(["data", "update", "--allow-http", "--url", url], env)
    assert ok.returncode == 0, ok.stderr
    assert f"installed data version {v(5)}" in ok.stdout and "signed by test signer" in ok.stdout
    assert "warning: fetching data over plain http" in ok.stderr
    shown = json.loads(cli(["data", "show", "--json"], env).stdout)
    assert shown["active"]["origin"] == "installed" and shown["active"]["data_version"] == v(5)
    assert shown["active"]["signed_by"] == "test signer" and shown["active"]["key_id"] == KEY_ID
    text = cli(["data", "show"], env).stdout
    assert f"Data in use: an installed update, version {v(5)}" in text and f"signed by test signer (key {KEY_ID})" in text
    assert "Built into rocm-doctor: version " in text  # what `data reset` goes back to

    assert cli(["data", "reset"], env).returncode == 0
    assert json.loads(cli(["data", "show", "--json"], env).stdout)["active"]["origin"] == "embedded"


def test_cli_pack_makes_a_bundle_update_accepts(server, data_dir, tmp_path, isolated_env):
    src = tmp_path / "release"
    src.mkdir()
    raw = json.loads(make_bundle(v(6)))
    for name, text in raw["files"].items():
        (src / name).write_text(text)
    (src / "manifest.json").write_text(json.dumps(raw["manifest"]))
    key = tmp_path / "key.pem"
    key.write_text(PEM)
    env = dict(isolated_env, **{update.DIR_ENV: str(data_dir)})
    packed = cli(["data", "pack", str(src), "-o", str(tmp_path / "out.json"), "--sign", str(key)], env)
    assert packed.returncode == 0, packed.stderr
    assert f"signed with key {KEY_ID} (test signer)" in packed.stdout
    body = (tmp_path / "out.json").read_bytes()
    assert (tmp_path / "out.json.sha256").read_text().split()[0] == hashlib.sha256(body).hexdigest()
    url = server.publish("out.json", body)
    server.routes["/out.json.sig"] = (200, (tmp_path / "out.json.sig").read_bytes(), {})
    assert update.update(url, limits=FAST, allow_http=True)["data_version"] == v(6)

    unsigned = cli(["data", "pack", str(src), "-o", str(tmp_path / "plain.json")], env)
    assert unsigned.returncode == 0 and "unsigned" in unsigned.stdout
    assert not (tmp_path / "plain.json.sig").exists()


# The PKCS#8 PEM form of SEED, as `openssl pkey` writes it.
PEM = ("-----BEGIN PRIVATE KEY-----\n"
       + base64.b64encode(bytes.fromhex("302e020100300506032b657004220420") + SEED).decode()
       + "\n-----END PRIVATE KEY-----\n")


def test_plain_http_is_refused_before_any_request(server, data_dir):
    url = server.publish("h.json", make_bundle(v(7)))
    with pytest.raises(update.UpdateError, match="is not an https URL; plain http needs --allow-http"):
        update.update(url, limits=FAST)
    with pytest.raises(update.UpdateError, match="is not an https URL"):
        update.update("file:///etc/passwd", limits=FAST, allow_http=True)
    assert server.requests == [] and update.installed() is None


def test_an_http_channel_from_the_environment_needs_allow_http(server, data_dir, isolated_env):
    url = server.publish("e.json", make_bundle(v(7)))
    env = dict(isolated_env, **{update.DIR_ENV: str(data_dir), update.URL_ENV: url})
    refused = cli(["data", "update"], env)
    assert refused.returncode == 2 and "plain http needs --allow-http" in refused.stderr
    assert server.requests == []
    allowed = cli(["data", "update", "--allow-http"], env)
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stderr.startswith("rocm-doctor: warning: fetching data over plain http")


def overrides_edit(fn):
    def edit(table):
        fn(table)
        return table
    return {"overrides.json": edit}


def wheels_edit(fn):
    def edit(table):
        fn(table)
        return table
    return {"torch_wheels.json": edit}


def _cross_family(table):
    table["families"][0].update(value="11.0.0", **{"as": "gfx1100"})  # gfx1031..gfx1036 told to run RDNA3 code


def _move_card(table):
    table["families"][1]["covers"].append("gfx1032")


def _cdna_as_vega(table):
    table["families"][4]["covers"].append("gfx90a")  # gfx90a (CDNA2) told to run gfx900 (Vega) code


def _other_host(table):
    table["therock"]["multi_arch"]["stable"] = "https://evil.example/rocm/whl-multi-arch/"


def _http_index(table):
    table["index_base"] = "http://download.pytorch.org/whl/"


def _no_source(table):
    del table["families"][0]["source"]


def _unknown_source(table):
    table["families"][0]["also"] = ["NOWHERE"]


@pytest.mark.parametrize("version, edit, expect", [
    ("9999.99.99-../../x", None, "is not a version of the form YYYY.MM.DD"),
    ("2026.02.30", None, "names no real date"),
    ("2999.01.01", None, "is dated after today"),
    (None, overrides_edit(_cross_family), "crosses GPU generations"),
    (None, overrides_edit(_move_card), "11.0.0 (gfx1100) for 'gfx1032' crosses GPU generations"),
    (None, overrides_edit(_cdna_as_vega), "9.0.0 (gfx900) for 'gfx90a' crosses GPU generations"),
    (None, wheels_edit(_other_host), "points at evil.example, not one of the known hosts"),
    (None, wheels_edit(_http_index), "holds a URL that is not https: http://download.pytorch.org/whl/"),
    (None, overrides_edit(_no_source), "overrides.json.families[0] has no source"),
    (None, overrides_edit(_unknown_source), "names 'NOWHERE', which is not in the sources of overrides.json"),
], ids=["traversal-version", "no-date", "future", "cross-family", "card-moved", "gfx9-family", "other-host", "http-index",
        "row-without-source", "unknown-source"])
def test_signed_packs_that_mean_the_wrong_thing_are_refused(server, data_dir, installed_v1, version, edit, expect):
    url = server.publish("s.json", make_bundle(version or v(3), edit=edit))  # signed by the trusted key
    with pytest.raises(update.UpdateError) as refused:
        update.update(url, limits=FAST, allow_http=True)
    assert expect in str(refused.value)
    assert tree(data_dir) == installed_v1


def test_another_index_host_needs_to_be_named(server, data_dir):
    url = server.publish("o.json", make_bundle(v(3), edit=wheels_edit(_other_host)))
    result = update.update(url, limits=FAST, allow_http=True, allow_hosts=["evil.example"])
    assert result["data_version"] == v(3)


def test_a_key_this_rocm_doctor_does_not_trust_is_refused(server, data_dir, installed_v1):
    raw = make_bundle(v(3))
    url = server.publish("k.json", raw)
    server.routes["/k.json.sig"] = (200, signing.sign(raw, b"\x07" * 32).encode(), {})
    with pytest.raises(update.UpdateError, match="which this rocm-doctor does not trust"):
        update.update(url, limits=FAST, allow_http=True)
    assert tree(data_dir) == installed_v1


def test_an_installed_pack_without_a_trusted_signer_is_not_read(data_dir, installed_v1, monkeypatch):
    meta_path = update.installed().folder / update.INSTALLED
    meta = json.loads(meta_path.read_text())
    assert meta["signature"] == {"key_id": KEY_ID, "signer": "test signer", "algorithm": "ed25519"}
    monkeypatch.setattr(signing, "TRUSTED_KEYS", {})  # the key was withdrawn in a later release
    store.load.cache_clear()
    assert update.installed() is None and "x_test_marker" not in store.load("torch_wheels.json")
    monkeypatch.undo()
    trust = {KEY_ID: {"signer": "test signer", "public_key": signing.public_key(SEED).hex()}}
    monkeypatch.setattr(signing, "TRUSTED_KEYS", trust)
    del meta["signature"]  # what an earlier rocm-doctor installed, unsigned
    meta_path.write_text(json.dumps(meta))
    store.load.cache_clear()
    assert update.installed() is None and "x_test_marker" not in store.load("torch_wheels.json")


def test_an_installed_bundle_is_verified_again_at_every_load(data_dir, installed_v1):
    """A bundle planted in the folder (tables and an installed.json naming the trusted key) is not read."""
    folder = update.installed().folder
    planted = json.loads((folder / "torch_wheels.json").read_text())
    planted["x_test_marker"] = "planted"
    text = json.dumps(planted)
    (folder / "torch_wheels.json").write_text(text)
    meta = json.loads((folder / update.INSTALLED).read_text())
    meta["files"]["torch_wheels.json"] = hashlib.sha256(text.encode()).hexdigest()
    (folder / update.INSTALLED).write_text(json.dumps(meta))
    store.load.cache_clear()
    assert update.installed() is None and "x_test_marker" not in store.load("torch_wheels.json")


def test_a_rollback_to_an_older_signed_pack_is_refused(server, data_dir, installed_v1):
    update.update(server.publish("v3.json", make_bundle(v(3))), limits=FAST, allow_http=True)
    update.uninstall()  # the newest version seen is kept when the data is reset
    with pytest.raises(update.UpdateError, match="rollback is refused"):
        update.update(server.publish("v2.json", make_bundle(v(2))), limits=FAST, allow_http=True)
    assert update.installed() is None


def test_an_expired_pack_is_refused(server, data_dir):
    bundle = json.loads(make_bundle(v(4)))
    bundle["manifest"]["expires"] = "2026-01-01"
    with pytest.raises(update.UpdateError, match="expired on 2026-01-01"):
        update.update(server.publish("old.json", json.dumps(bundle).encode()), limits=FAST, allow_http=True)


def test_as_root_a_data_folder_others_can_write_is_not_read(data_dir, installed_v1, monkeypatch):
    from rocm_doctor import safefile

    really_root = os.geteuid() == 0
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    if really_root:
        assert update.installed() is not None  # root's own folder is read
    data_dir.chmod(0o777)
    try:
        assert update.installed() is None
        assert safefile.untrusted_by_root(data_dir).startswith(f"refusing to use {data_dir} as root: ")
    finally:
        data_dir.chmod(0o755)


@pytest.mark.parametrize("spec, problem", [
    ("torch[device-{gfx}]", None),
    ("torch==2.9.0", None),
    ("evil-package[device-{gfx}]", "names the package 'evil-package'"),
    ("torch[device-{0}]", "placeholder other than {gfx}"),
    ("torch[device-{gfx.__class__}]", "placeholder other than {gfx}"),
    ("torch --index-url https://evil.example/simple", "is not a package spec"),
])
def test_a_pack_may_name_only_the_packages_the_code_allows(spec, problem):
    from rocm_doctor.knowledge import pack_checks

    found = pack_checks.spec_problems("torch_wheels.json", {"therock": {"multi_arch": {"torch_spec": spec}}})
    assert (found == []) if problem is None else (len(found) == 1 and problem in found[0])


def test_a_long_string_in_a_pack_is_scanned_for_urls_once():
    """A guard: 2 MiB of letters made the URL scan start again at every letter (minutes); a URL in it is found."""
    from rocm_doctor.knowledge import pack_checks

    text = "a" * (2 << 20) + " https://evil.example/simple"
    assert list(pack_checks.urls({"note": text})) == ["https://evil.example/simple"]
