"""Bounded HTTP GETs for the two places rocm-doctor touches the network (`data update`, `check --online`).

Every request has (connect, read) timeouts, an overall deadline and a size cap enforced while streaming, and
uses the proxies of the environment (requests' trust_env, kept on). Failures become one HttpError whose `kind`
says which part failed (dns, connect, proxy, tls, timeout, http, too-large), so findings can say what to fix.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests

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


def get(url: str, limits: Limits = Limits(), session: Optional[requests.Session] = None) -> Response:
    """The body of a 2xx answer, or HttpError. Redirects are followed (within the same limits; with an
    HttpsOnlySession, only to https)."""
    session = session or requests.Session()
    started = time.monotonic()
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
