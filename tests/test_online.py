"""Setup connectivity (`check --online`) against a real HTTP server on 127.0.0.1: reachable, 404, stalled,
refused, through the configured proxy; off unless asked; the check turns each record into a finding."""

import http.server
import json
import socket
import threading
import time

import pytest

from rocm_doctor.engine.model import Status
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.observations import Observations
from rocm_doctor.interpret import online_facts
from rocm_doctor.knowledge import http as nethttp
from rocm_doctor.probes import online
from rocm_doctor.probes._base import ProbeContext, Recorder

FAST = nethttp.Limits(connect_s=1.0, read_s=1.0, deadline_s=3.0, max_bytes=64 * 1024)


@pytest.fixture
def server():
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            if "stall" in self.path:
                time.sleep(3)
            status = 404 if "missing" in self.path else 200
            body = b"<html><a href='torch-2.9.0+rocm6.4-cp312.whl'>torch</a></html>"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads, httpd.block_on_close = True, False
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.seen = seen
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_reachable(server):
    record = online.check_index(f"{server.url}/whl/rocm6.4/", FAST)
    assert record["reachable"] is True and record["status"] == 200 and record["proxy"] is None


@pytest.mark.parametrize("path, kind, status", [("/missing/", "http", 404), ("/stall/", "timeout", None)])
def test_unreachable(server, path, kind, status):
    started = time.monotonic()
    record = online.check_index(server.url + path, FAST)
    assert time.monotonic() - started < 3
    assert record["reachable"] is False and record["error_kind"] == kind and record["status"] == status


def test_refused():
    record = online.check_index(f"http://127.0.0.1:{closed_port()}/whl/", FAST)
    assert record["reachable"] is False and record["error_kind"] == "connect"


def test_goes_through_the_configured_proxy(server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://user:pw@127.0.0.1:{server.server_address[1]}")
    record = online.check_index("http://download.pytorch.invalid/whl/rocm6.4/", FAST)
    assert record["reachable"] is True
    assert record["proxy"] == server.url  # shown without its credentials
    assert server.seen == ["http://download.pytorch.invalid/whl/rocm6.4/"]  # the proxy got the absolute URL


def test_broken_proxy_is_reported(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")
    record = online.check_index("http://download.pytorch.invalid/whl/", FAST)
    assert record["reachable"] is False and record["error_kind"] == "proxy"


def findings(facts):
    from rocm_doctor.engine.engine import run_one
    from rocm_doctor.checks.online import PackageIndexUnreachable

    return run_one(PackageIndexUnreachable, facts)


def test_off_by_default_and_the_check_says_how_to_enable(server):
    obs = Observations()
    online.collect(Recorder(obs, ProbeContext(python="p", python_reason="r", platform_os="linux",
                                              env={online.URL_ENV: server.url + "/"})))
    assert obs.probes == {} and server.seen == []
    facts = Facts(obs)
    online_facts.interpret(obs, facts)
    [finding] = findings(facts)
    assert finding.status is Status.SKIP and "--online" in finding.message


def test_probe_records_and_check_reports(server, monkeypatch):
    monkeypatch.setattr(online, "LIMITS", FAST)
    obs = Observations()
    env = {online.URL_ENV: f"{server.url}/whl/rocm6.4/ {server.url}/missing/"}
    online.collect(Recorder(obs, ProbeContext(python="p", python_reason="r", platform_os="linux", env=env, online=True)))
    records = obs.probes[online.KEY]["checked"]
    assert [r["reachable"] for r in records] == [True, False]
    json.dumps(obs.to_dict())  # the record is plain JSON: it goes into snapshots and replays
    facts = Facts(obs)
    online_facts.interpret(obs, facts)
    ok, bad = findings(facts)
    assert ok.status is Status.OK and "directly (no proxy configured)" in ok.message
    assert bad.status is Status.WARN and "HTTP 404" in bad.message
    assert [step.argv() for step in bad.fix] == [["rocm-doctor", "data", "update"]]
    assert bad.id == f"package-index-unreachable:{server.url}/missing/"


def test_default_index_is_the_newest_rocm_wheel_index():
    from rocm_doctor.knowledge.wheels import latest_rocm_index

    assert online.index_urls({}) == [latest_rocm_index().rstrip("/") + "/"]


def test_cli_check_online(doctor, isolated_env, server):
    env = dict(isolated_env, **{online.URL_ENV: f"{server.url}/whl/rocm6.4/"})
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(name, None)
    result = doctor("check", "--online", "--json", "--only", "package-index-unreachable", env=env)
    data = json.loads(result.stdout)
    [finding] = data["findings"]
    assert finding["status"] == "ok", finding
    offline = json.loads(doctor("check", "--json", "--only", "package-index-unreachable", env=env).stdout)
    assert offline["findings"][0]["status"] == "skip"
