"""Setup connectivity: the package index that the torch remediation installs from answers from this machine."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Check, Severity
from rocm_doctor.facts.keys import ONLINE_INDEX_KEY

PROXY_VARS = "HTTPS_PROXY / HTTP_PROXY / NO_PROXY"


class PackageIndexUnreachable(Check):
    id = "package-index-unreachable"
    title = "Access to the PyTorch package index from this machine"
    area = "network"
    severity = Severity.MEDIUM
    requires = (ONLINE_INDEX_KEY,)
    docs = ("https://pip.pypa.io/en/stable/user_guide/#using-a-proxy-server",)

    def run(self, facts):
        results = facts[ONLINE_INDEX_KEY]
        return [self._one(r, subject=r.get("url") if len(results) > 1 else None) for r in results]

    def _one(self, r, subject):
        url, proxy = r.get("url", "?"), r.get("proxy")
        route = f"through the proxy {proxy}" if proxy else "directly (no proxy configured)"
        evidence = [f"index: {url}", f"route: {route}"]
        if r.get("reachable"):
            took = f" in {r['elapsed_s']:.2f} s" if isinstance(r.get("elapsed_s"), (int, float)) else ""
            return self.ok(f"{url} answered{took}, {route}", evidence=evidence, subject=subject)
        evidence.append(f"error: {r.get('error', 'unknown')}")
        gone = r.get("error_kind") == "http" and r.get("status") == 404
        return self.warn(
            f"{url} cannot be reached {route}: {r.get('error', 'unknown error')}; the pip command of the fixes "
            "would fail here",
            evidence=evidence, remediation=_advice(r.get("error_kind"), r.get("status"), proxy), subject=subject,
            fix=[S.run_command(["rocm-doctor", "data", "update"], description="fetch current wheel indexes",
                               note="the index in the data tables no longer exists")] if gone else [],
            data={"url": url, "error_kind": r.get("error_kind"), "status": r.get("status"), "proxy": proxy},
        )


def _advice(kind, status, proxy):
    if kind == "http" and status == 407:
        return [f"The proxy {proxy} wants credentials: put them in the proxy URL (http://user:pass@host:port) or "
                "use pip's --proxy."]
    if kind == "http" and status == 404:
        return ["The index URL no longer exists: the wheel indexes in the data tables are out of date."]
    if kind == "http":
        return ["The index answered with an error; retry later, or check that a proxy or mirror is not rewriting it."]
    if kind == "tls":
        return ["A TLS-inspecting proxy needs its CA certificate: pass it to pip with --cert FILE or set PIP_CERT "
                "and REQUESTS_CA_BUNDLE."]
    if kind == "proxy":
        return [f"The proxy {proxy} failed: check the address in {PROXY_VARS} and that it is running."]
    if proxy:
        return [f"The proxy {proxy} did not get through: check {PROXY_VARS} (a host in NO_PROXY bypasses it)."]
    return [f"Without a proxy this machine cannot reach the index: if your network needs one, set {PROXY_VARS} "
            "to it (e.g. http://proxy.example:3128); otherwise check DNS and the firewall, or download the "
            "wheels elsewhere and install them with pip --no-index --find-links DIR."]
