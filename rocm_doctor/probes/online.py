"""Setup connectivity (only with `--online`): can this machine reach the package index that the remediation's
pip command would use, through the proxy its environment configures? The outcome is recorded, never raised."""

from __future__ import annotations

from typing import Any, Mapping

from rocm_doctor.facts.keys import ONLINE_INDEX_KEY as KEY
from rocm_doctor.knowledge import http
from rocm_doctor.probes._base import Recorder

URL_ENV = "ROCM_DOCTOR_INDEX_URL"  # check these (space-separated) instead, e.g. an internal mirror
LIMITS = http.Limits(connect_s=5.0, read_s=10.0, deadline_s=20.0, max_bytes=512 * 1024)


def index_urls(env: Mapping[str, str]) -> list[str]:
    if env.get(URL_ENV):
        return env[URL_ENV].split()
    from rocm_doctor.knowledge.wheels import latest_rocm_index

    return [latest_rocm_index().rstrip("/") + "/"]


def check_index(url: str, limits: http.Limits = LIMITS) -> dict[str, Any]:
    """Reachability of one index: status, time, the proxy used, or which part failed."""
    record: dict[str, Any] = {"url": http.display_url(url)}
    try:
        record["proxy"] = http.proxy_for(url)
    except Exception:  # a malformed proxy variable is itself reported by the request below
        record["proxy"] = None
    try:
        response = http.get(url, limits)
        record.update(reachable=True, status=response.status, elapsed_s=round(response.elapsed_s, 3))
    except http.HttpError as exc:
        # an index page larger than we care to read still proves the index answers
        record.update(reachable=exc.kind == "too-large", status=exc.status, error_kind=exc.kind, error=str(exc))
    return record


def collect(recorder: Recorder) -> None:
    if not recorder.context.online:
        return
    urls = index_urls(recorder.context.env)
    recorder.put(KEY, {"checked": [check_index(url) for url in urls]})
