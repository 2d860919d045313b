"""Signed data packs: the Ed25519 library against RFC 8032's vectors, the signature document, keys as openssl
writes them, https-only redirects against a real TLS server, and the meaning checks on the shipped data."""

import base64
import datetime as dt
import hashlib
import http.server
import json
import shutil
import ssl
import subprocess
import threading

import pytest
import requests

from rocm_doctor.knowledge import pack_checks, signing, update
from rocm_doctor.knowledge import http as nethttp

# RFC 8032, section 7.1, tests 1-3: secret key, public key, message, signature.
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]
L = 2**252 + 27742317777372353535851937790883648493


@pytest.mark.parametrize("secret, public, message, signature", RFC8032)
def test_rfc8032_vectors(secret, public, message, signature):
    secret, public, message, signature = map(bytes.fromhex, (secret, public, message, signature))
    assert signing.public_key(secret) == public
    assert signing.sign_message(secret, message) == signature
    assert signing.verify(public, message, signature)
    assert not signing.verify(public, message + b"\0", signature)


def test_verification_is_strict():
    secret, public, message, signature = map(bytes.fromhex, RFC8032[1])
    flipped = bytes([signature[0] ^ 1]) + signature[1:]
    assert not signing.verify(public, message, flipped)
    s = int.from_bytes(signature[32:], "little")
    malleable = signature[:32] + (s + L).to_bytes(32, "little")  # same point equation, S >= L: refused
    assert not signing.verify(public, message, malleable)
    assert not signing.verify(public[:31], message, signature) and not signing.verify(public, message, signature[:63])
    assert not signing.verify(b"\xff" * 32, message, signature)  # not a point on the curve


def test_the_signature_document_round_trips_and_names_the_trusted_signer(monkeypatch):
    seed = b"\x01" * 32
    kid = signing.key_id(signing.public_key(seed))
    monkeypatch.setattr(signing, "TRUSTED_KEYS", {kid: {"signer": "release team",
                                                        "public_key": signing.public_key(seed).hex()}})
    document = signing.sign(b"pack", seed)
    forged = dict(json.loads(document), signer="someone else")
    assert signing.check(b"pack", json.dumps(forged)) == {"key_id": kid, "signer": "release team",
                                                          "algorithm": "ed25519"}
    with pytest.raises(signing.SignatureError, match="does not match the downloaded pack"):
        signing.check(b"pack!", document)
    with pytest.raises(signing.SignatureError, match="only ed25519"):
        signing.check(b"pack", json.dumps(dict(json.loads(document), algorithm="rsa")))
    with pytest.raises(signing.SignatureError, match="not JSON"):
        signing.check(b"pack", "<html>")


def test_the_shipped_key_is_well_formed():
    assert signing.TRUSTED_KEYS
    for kid, entry in signing.TRUSTED_KEYS.items():
        public = bytes.fromhex(entry["public_key"])
        assert len(public) == 32 and signing.key_id(public) == kid and entry["signer"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_a_key_made_by_openssl_signs_packs(tmp_path):
    key = tmp_path / "key.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    spki = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-outform", "DER"], check=True,
                          capture_output=True).stdout
    seed = signing.read_private_key(key)
    assert signing.public_key(seed) == spki[-32:]
    signature = base64.b64decode(json.loads(signing.sign(b"pack", seed))["signature"])
    message = signing.CONTEXT + hashlib.sha256(b"pack").digest()
    assert signing.verify(spki[-32:], message, signature)
    (tmp_path / "msg").write_bytes(message)
    (tmp_path / "sig").write_bytes(signature)
    subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-out", str(tmp_path / "pub.pem")], check=True)
    checked = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(tmp_path / "pub.pem"), "-rawin",
                              "-in", str(tmp_path / "msg"), "-sigfile", str(tmp_path / "sig")], capture_output=True, text=True)
    if "unknown option" in checked.stderr or "-rawin" in checked.stderr:
        pytest.skip("this openssl cannot verify raw Ed25519 messages")
    assert checked.returncode == 0 and "Signature Verified Successfully" in checked.stdout  # OpenSSL agrees


def test_other_key_files_are_refused_with_one_line(tmp_path):
    bad = tmp_path / "rsa.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(signing.SignatureError, match="is not an Ed25519 private key in PKCS#8 PEM form"):
        signing.read_private_key(bad)
    with pytest.raises(signing.SignatureError, match="cannot read the signing key"):
        signing.read_private_key(tmp_path / "missing.pem")


def test_a_redirect_away_from_https_is_refused_before_it_is_followed():
    response = requests.Response()
    response.url, response.status_code = "https://data.example/pack.json", 302
    response.headers["Location"] = "http://data.example/pack.json"
    with pytest.raises(nethttp.HttpError, match="redirects to a http URL; only https is followed"):
        nethttp.HttpsOnlySession().get_redirect_target(response)
    response.headers["Location"] = "/elsewhere.json"  # relative: stays https
    assert nethttp.HttpsOnlySession().get_redirect_target(response) == "/elsewhere.json"


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    """An https server on 127.0.0.1 (self-signed) whose /pack.json redirects to a plain http server."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):  # requests lets these override session.verify
        monkeypatch.delenv(name, raising=False)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    plain_hits = []

    class Plain(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            plain_hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Plain)

    class Redirect(Plain):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{plain.server_address[1]}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

    secure = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    for server in (plain, secure):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{secure.server_address[1]}", str(cert), plain_hits
    for server in (plain, secure):
        server.shutdown()
        server.server_close()


def test_https_to_http_redirect_against_a_real_tls_server(tls_server):
    url, cert, plain_hits = tls_server
    session = nethttp.HttpsOnlySession()
    session.verify = cert
    with pytest.raises(nethttp.HttpError) as refused:
        nethttp.get(url + "/pack.json", nethttp.Limits(connect_s=2, read_s=2, deadline_s=5), session)
    assert refused.value.kind == "insecure" and plain_hits == []
    ordinary = requests.Session()
    ordinary.verify = cert
    assert nethttp.get(url + "/pack.json", nethttp.Limits(connect_s=2, read_s=2, deadline_s=5), ordinary).body == b"{}"
    assert plain_hits == ["/pack.json"]  # what an ordinary session would have done


def test_the_shipped_data_passes_its_own_meaning_checks():
    tables = {name: json.loads(update.embedded_text(name)) for name in update.required_files()}
    assert pack_checks.problems(tables, update.allowed_hosts()) == []
    assert pack_checks.version_problem(update.embedded_manifest()) is None
    assert {"download.pytorch.org", "rocm.nightlies.amd.com", "repo.radeon.com"} <= update.allowed_hosts()


@pytest.mark.parametrize("version, generated, problem", [
    ("2026.12.01", "2026-12-01", None),
    ("2026.12.01.3", "2026-12-01", None),
    ("2026.12.1", None, None),
    ("9999.99.99-../../x", None, "is not a version"),
    ("2026.12.01\n", None, "is not a version"),
    ("２０２６.12.01", None, "is not a version"),
    ("2026.13.01", None, "names no real date"),
    ("2026.12.04", None, "is dated after today"),
    ("2026.12.01", "2026-11-30", "is not the date of data_version"),
    (None, "2026-12-01", "is not a version"),
])
def test_data_versions(version, generated, problem):
    manifest = {"data_version": version} if generated is None else {"data_version": version, "generated": generated}
    found = pack_checks.version_problem(manifest, today=dt.date(2026, 12, 1))
    assert (found is None) if problem is None else (problem in found)
    assert (update.data_version(manifest) != ()) == (problem is None or "date" in problem)
