"""Bounded HTTP GETs for the two places rocm-doctor touches the network (`data update`, `check --online`).

Every request has (connect, read) timeouts, one deadline for all of it — connecting, the response headers, the
body and every redirect — and a size cap enforced while streaming, and uses the proxies of the environment
(requests' trust_env, kept on). A server that trickles a header byte every second never trips a read timeout, so
the request runs in a worker thread and, at the deadline, the sockets it opened are shut down (which ends any
read at once) and the caller gets its answer. Failures become one HttpError whose `kind` says which part failed
(dns, connect, proxy, tls, timeout, http, too-large), so findings can say what to fix.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter

USER_AGENT = "rocm-doctor"


@dataclass(frozen=True)
class Limits:
    connect_s: float = 10.0
    read_s: float = 30.0
    deadline_s: float = 120.0
    max_bytes: int = 20 * 1024 * 1024


class HttpError(Exception):
    def __init__(self, kind: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass
class Response:
    url: str
    status: int
    body: bytes
    elapsed_s: float


class HttpsOnlySession(requests.Session):
    """Follows a redirect only to another https URL: the check runs before the request to the new place is sent."""

    def get_redirect_target(self, resp):
        target = super().get_redirect_target(resp)
        if target is not None:
            scheme = urlsplit(urljoin(resp.url, target)).scheme.lower()
            if scheme != "https":
                raise HttpError("insecure", f"{display_url(resp.url)} redirects to a {scheme or 'relative'} URL; "
                                            "only https is followed")
        return target


_SOCKETS: dict[int, list[socket.socket]] = {}  # worker thread id -> the sockets its request opened
_LOCK = threading.Lock()


class _Watched:
    """A connection that registers its socket with the worker thread that opened it."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        with _LOCK:
            _SOCKETS.setdefault(threading.get_ident(), []).append(self.sock)  # type: ignore[attr-defined]


class _HTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose connections (direct or through an http(s) proxy) can be cut at the deadline."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)

    def proxy_manager_for(self, proxy: str, **kwargs: Any):
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_POOLS)
        return manager


def get(url: str, limits: Limits = Limits(), session: Optional[requests.Session] = None) -> Response:
    """The body of a 2xx answer, or HttpError, within `limits.deadline_s` for all of it. Redirects are followed
    (within the same deadline; with an HttpsOnlySession, only to https)."""
    session = session or requests.Session()
    for adapter in list(session.adapters.values()):
        adapter.close()
    session.mount("https://", _WatchedAdapter())  # fresh pools: no socket of an earlier request is reused
    session.mount("http://", _WatchedAdapter())
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def work() -> None:
        try:
            outcome["response"] = _get(url, limits, session, started)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            with _LOCK:
                _SOCKETS.pop(threading.get_ident(), None)

    worker = threading.Thread(target=work, name="rocm-doctor-http", daemon=True)
    worker.start()
    worker.join(limits.deadline_s)
    if worker.is_alive():
        _cut(worker.ident)
        worker.join(1.0)
        raise HttpError("timeout", f"{display_url(url)} did not finish within {limits.deadline_s:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["response"]


def _cut(ident: Optional[int]) -> None:
    """Shut down the sockets a worker's request opened: a read blocked on them returns at once."""
    with _LOCK:
        sockets = list(_SOCKETS.get(ident or -1, []))
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _get(url: str, limits: Limits, session: requests.Session, started: float) -> Response:
    try:
        with session.get(url, stream=True, timeout=(limits.connect_s, limits.read_s),
                         headers={"User-Agent": USER_AGENT}) as resp:
            if not 200 <= resp.status_code < 300:
                raise HttpError("http", f"{display_url(url)} answered HTTP {resp.status_code} {resp.reason or ''}".rstrip(),
                                status=resp.status_code)
            declared = resp.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limits.max_bytes:
                raise HttpError("too-large", f"{display_url(url)} is {int(declared):,} bytes; the limit is {limits.max_bytes:,}")
            chunks, total = [], 0
            for chunk in _chunks(resp):
                total += len(chunk)
                if total > limits.max_bytes:
                    raise HttpError("too-large", f"{display_url(url)} sent more than {limits.max_bytes:,} bytes")
                if time.monotonic() - started > limits.deadline_s:
                    raise HttpError("timeout", f"{display_url(url)} did not finish within {limits.deadline_s:g} s")
                chunks.append(chunk)
            return Response(url=resp.url, status=resp.status_code, body=b"".join(chunks),
                            elapsed_s=time.monotonic() - started)
    except requests.exceptions.RequestException as exc:
        raise classify(exc, url, limits) from None


def _chunks(resp: requests.Response):
    """Whatever has arrived, as soon as it arrives (read1), so the deadline also stops a server that trickles."""
    raw = resp.raw
    if not hasattr(raw, "read1"):  # urllib3 < 2: fixed-size reads, the deadline is checked per KiB
        yield from resp.iter_content(1024)
        return
    while True:
        try:
            chunk = raw.read1(64 * 1024, decode_content=True)
        except Exception as exc:  # urllib3's own errors: make them requests' so classify() reads them
            raise requests.exceptions.ConnectionError(exc) from None
        if not chunk:
            return
        yield chunk


def classify(exc: requests.exceptions.RequestException, url: str, limits: Limits) -> HttpError:
    """One line a user can act on, from requests' nested exception chain."""
    text = str(exc)
    where = display_url(url)
    if isinstance(exc, requests.exceptions.ProxyError):
        return HttpError("proxy", f"the proxy for {where} failed: {_short(text)}")
    if isinstance(exc, requests.exceptions.SSLError):
        return HttpError("tls", f"TLS verification failed for {where}: {_short(text)}")
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return HttpError("timeout", f"could not connect to {where} within {limits.connect_s:g} s")
    if isinstance(exc, requests.exceptions.ReadTimeout) or "Read timed out" in text:
        return HttpError("timeout", f"{where} sent nothing for {limits.read_s:g} s")
    if isinstance(exc, requests.exceptions.ConnectionError):
        lowered = text.lower()
        if "name or service not known" in lowered or "nodename nor servname" in lowered or "getaddrinfo failed" in lowered \
                or "temporary failure in name resolution" in lowered or "failed to resolve" in lowered:
            return HttpError("dns", f"cannot resolve the host of {where}")
        return HttpError("connect", f"cannot connect to {where}: {_short(text)}")
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                        requests.exceptions.InvalidSchema)):
        return HttpError("url", f"not a usable URL: {where}")
    return HttpError("error", f"{where}: {type(exc).__name__}: {_short(text)}")


def proxy_for(url: str) -> Optional[str]:
    """The proxy requests will use for this URL (from HTTPS_PROXY/NO_PROXY...), without its credentials."""
    proxies = requests.utils.get_environ_proxies(url)
    chosen = requests.utils.select_proxy(url, proxies)
    return display_url(chosen) if chosen else None


def display_url(url: str) -> str:
    """The URL without user:password@, safe for messages and observations."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
