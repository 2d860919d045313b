"""`rocm-doctor data`: which support data is in use (embedded or updated), and fetching a newer bundle."""

from __future__ import annotations

import re
from pathlib import Path

import click

from rocm_doctor.cli.app import DoctorGroup, DoctorUsageError, pass_app


@click.group("data", cls=DoctorGroup)
def command():
    """Show or update the support tables (GPU catalog, support matrices, wheel indexes)."""


@command.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (with every source).")
@click.option("--sources", is_flag=True, help="List every table's sources: title, address, version, date read, quote.")
@pass_app
def show(app, as_json, sources):
    """Version and date of the data in use, where it comes from, and a line per table (--sources lists what each
    table was read from)."""
    from rocm_doctor.knowledge import update

    info = _describe()
    if as_json:
        from rocm_doctor.report.results import DataResult

        app.show(DataResult(info), "json")
        return
    active = info["active"]
    version = f"version {active.get('data_version') or 'unknown'} ({active.get('generated') or 'undated'})"
    if active["origin"] == "installed":
        click.echo(f"Data in use: an installed update, {version}")
        click.echo(f"  from {active['source']}, installed {active['installed_at']}, in {active['folder']}")
        click.echo(f"  signed by {active['signed_by']} (key {active['key_id']})")
    else:
        click.echo(f"Data in use: the copy built into rocm-doctor, {version}")
    embedded = info["embedded"]
    if active["origin"] == "installed" or not embedded["manifest"]:  # else the line above said it
        click.echo(f"Built into rocm-doctor: version {embedded.get('data_version') or 'unknown'} "
                   f"({embedded.get('generated') or 'undated'})"
                   + ("" if embedded["manifest"] else " — no data/manifest.json in this build"))
    click.echo(f"User data folder: {info['user_data_dir']} (set {update.DIR_ENV} to move it)")
    click.echo(f"Update channel: {info['channel']}")
    click.echo("")
    for table in info["tables"]:
        if not sources:
            click.echo(f"{table['name']}: {_source_summary(table['sources'])}")
            continue
        click.echo(f"\n{table['name']}: {table.get('about') or ''}".rstrip())
        for key, source in table["sources"].items():
            click.echo(f"  [{key}] {_source_text(source)}")
    if not sources:
        click.echo("\n--sources lists each table's sources; --json has everything.")


@command.command("update")
@click.option("--url", metavar="URL", help="Bundle to fetch (default: the release channel; see `data show`).")
@click.option("--allow-http", is_flag=True, help="Accept a plain http URL (the signature is still required).")
@click.option("--allow-index-host", "hosts", multiple=True, metavar="HOST",
              help="Accept wheel-index URLs on HOST too (default: only the hosts the shipped data uses).")
@pass_app
def update_cmd(app, url, allow_http, hosts):
    """Download the latest data bundle, verify its signature and tables, and install it for this user."""
    from rocm_doctor.knowledge import http, update

    url = url or update.default_url()
    if allow_http and url.lower().startswith("http:"):
        app.warn("fetching data over plain http: anyone on the way can see it and hold it back; only the signature "
                 "protects it")
    try:
        result = update.update(url, allow_http=allow_http, allow_hosts=hosts)
    except update.UpdateError as exc:
        raise DoctorUsageError(f"data update from {http.display_url(url)} failed: {exc}; "
                               "the data in use is unchanged") from None
    app.write(f"installed data version {result['data_version']} ({result['generated']}) "
               f"with {len(result['files'])} tables in {result['folder']}, signed by {result['signed_by']}")


@command.command("reset")
@pass_app
def reset(app):
    """Remove the downloaded data; the embedded data is used again."""
    from rocm_doctor.knowledge import update

    try:
        removed = update.uninstall()
    except update.UpdateError as exc:
        raise DoctorUsageError(f"data reset: {exc}") from None
    app.write("downloaded data removed; using the embedded data" if removed else "no downloaded data installed")


@command.command("pack")
@click.argument("data_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), required=True)
@click.option("--sign", "key", type=click.Path(path_type=Path, dir_okay=False), metavar="KEY.pem",
              help="Ed25519 private key (PKCS#8 PEM, `openssl genpkey -algorithm ed25519`) to sign with.")
@pass_app
def pack(app, data_dir, output, key):
    """Release tooling: bundle DATA_DIR (with its manifest.json) into OUTPUT, OUTPUT.sha256 and, with --sign,
    OUTPUT.sig (`data update` installs only signed packs)."""
    from rocm_doctor import safefile
    from rocm_doctor.knowledge import signing, update

    try:
        seed = signing.read_private_key(key) if key else None
        raw = update.build_bundle(data_dir)
        update.verify(raw)  # a stale manifest or a pack that data update would refuse fails here
        safefile.write(output, raw)
        safefile.write(output.with_name(output.name + ".sha256"), update.checksum_line(raw, output.name))
        if seed is not None:
            safefile.write(output.with_name(output.name + signing.SUFFIX), signing.sign(raw, seed))
    except (OSError, ValueError, KeyError, update.UpdateError, signing.SignatureError) as exc:
        raise DoctorUsageError(f"cannot pack {data_dir}: {exc}") from None
    if seed is None:
        app.write(f"wrote {output} and {output.name}.sha256 (unsigned: data update refuses it until it is signed)")
        return

    public = signing.public_key(seed)
    kid = signing.key_id(public)
    trusted = signing.TRUSTED_KEYS.get(kid)
    who = trusted["signer"] if trusted else f"not trusted yet: add public key {public.hex()} to knowledge/signing.py"
    app.write(f"wrote {output}, {output.name}.sha256 and {output.name}{signing.SUFFIX}; signed with key {kid} ({who})")


def _describe() -> dict:
    from rocm_doctor.knowledge import signing, update
    from rocm_doctor.knowledge.store import load

    manifest = update.embedded_manifest()
    embedded = {"manifest": manifest is not None,
                "data_version": (manifest or {}).get("data_version"), "generated": (manifest or {}).get("generated")}
    bundle = update.installed()
    if bundle is not None:
        m = bundle.meta.get("manifest") or {}
        active = {"origin": "installed", "data_version": m.get("data_version"), "generated": m.get("generated"),
                  "source": bundle.meta.get("source"), "installed_at": bundle.meta.get("installed_at"),
                  "folder": str(bundle.folder), "signed_by": signing.signer_of(bundle.meta.get("signature")),
                  "key_id": (bundle.meta.get("signature") or {}).get("key_id")}
    else:
        active = {"origin": "embedded", **{k: embedded[k] for k in ("data_version", "generated")}}
    tables = []
    abouts = {e.get("name"): e.get("about") for e in ((bundle.meta.get("manifest") if bundle else manifest) or {}).get("files", [])
              if isinstance(e, dict)}
    for name in update.required_files():
        try:
            table = load(name)
        except (OSError, ValueError):
            continue
        sources = table.get("sources", {}) if isinstance(table, dict) else {}
        tables.append({"name": name, "about": abouts.get(name) or (table.get("about") if isinstance(table, dict) else None),
                       "sources": sources if isinstance(sources, dict) else {}})
    return {"active": active, "embedded": embedded, "user_data_dir": str(update.user_data_dir()),
            "channel": update.default_url(), "tables": tables}


# Where a source can be read again: an address or a repository's file ("owner/name:path@ref"), the page's version,
# the read date and the quoted words; a document of this repository's own (a saved copy) is not an address.
_SHOWN = ("title", "url", "also_url", "document", "version", "read", "quote", "verified", "why", "note")
_REPOSITORY_FILE = re.compile(r"^[\w.-]+/[\w.-]+[:@]")


def _source_summary(sources: dict) -> str:
    """How many sources a table has, how many were checked against a quote, and when they were read."""
    rows = [s for s in sources.values() if isinstance(s, dict)]
    if not sources:
        return "no sources recorded"
    verified = sum(1 for s in rows if s.get("verified") is True)
    dates = sorted({str(s["read"]) for s in rows if s.get("read")})
    when = f", read {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "") if dates else ""
    return f"{len(sources)} source(s), {verified} verified against a quote{when}"


def _source_text(source) -> str:
    if not isinstance(source, dict):
        return str(source)
    shown = {k: v for k, v in source.items() if k in _SHOWN}
    if not _REPOSITORY_FILE.match(str(shown.get("document", ""))):
        shown.pop("document", None)
    return ", ".join(f"{k}: {v}" for k, v in shown.items())
