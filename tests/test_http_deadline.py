"""One deadline for a whole request: a loopback server that trickles its header bytes, or a chain of slow
redirects, is cut at the deadline, though no single read ever waits as long as the read timeout."""

import socket
import threading
import time

import pytest

from rocm_doctor.knowledge import http as nethttp

LIMITS = nethttp.Limits(connect_s=1.0, read_s=1.0, deadline_s=2.0, max_bytes=64 * 1024)


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def serve(answer):
    """A loopback server running `answer(connection, count)` for each connection; returns its URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    count = [0]

    def loop():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            count[0] += 1
            threading.Thread(target=answer, args=(conn, count[0]), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", listener, count


def trickle(conn, _):
    """A header byte every 0.2 s, forever: each read gets a byte well within the read timeout."""
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        while True:
            conn.sendall(b"X")
            time.sleep(0.2)
    except OSError:
        pass
    finally:
        conn.close()


def slow_redirect(conn, n):
    try:
        conn.recv(65536)
        time.sleep(0.6)
        conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: /hop{n}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                     .encode())
    except OSError:
        pass
    finally:
        conn.close()


@pytest.mark.parametrize("answer", [trickle, slow_redirect], ids=["trickled-headers", "slow-redirects"])
def test_the_deadline_covers_headers_and_redirects(answer):
    url, listener, count = serve(answer)
    started = time.monotonic()
    try:
        with pytest.raises(nethttp.HttpError) as caught:
            nethttp.get(url + "/", LIMITS)
    finally:
        listener.close()
    took = time.monotonic() - started
    assert caught.value.kind == "timeout" and "within 2 s" in str(caught.value)
    assert took < LIMITS.deadline_s + 2.0  # cut at the deadline, not after the server gives up
    if answer is slow_redirect:
        assert 2 <= count[0] <= 5  # it followed redirects until the deadline, not past it


def test_a_request_within_the_deadline_returns_its_body():
    def ok(conn, _):
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        conn.close()

    url, listener, _ = serve(ok)
    try:
        assert nethttp.get(url + "/", LIMITS).body == b"ok"
    finally:
        listener.close()
