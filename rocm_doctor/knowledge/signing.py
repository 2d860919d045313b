"""Detached signatures of data packs: who may publish support data, and the check before anything is installed.

A pack PACK.json is published with PACK.json.sig, a small JSON document holding an Ed25519 signature over
`CONTEXT + sha256(pack bytes)`. Only the keys in TRUSTED_KEYS, shipped in this package, are accepted; the
signer's name shown to the user comes from this table, never from the signature file. A maintainer signs with
`rocm-doctor data pack DIR -o PACK.json --sign KEY.pem`, where KEY.pem is an Ed25519 private key in the PKCS#8
PEM form `openssl genpkey -algorithm ed25519` writes; its public key is added here before a release. The Ed25519
arithmetic is the `cryptography` package's (OpenSSL underneath), not this module's.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Mapping, Optional

from rocm_doctor.parsers import json_text

FORMAT = "rocm-doctor-data-signature"
VERSION = 1
ALGORITHM = "ed25519"
CONTEXT = b"rocm-doctor data pack, signature v1\0"
SUFFIX = ".sig"

# key id (the first 16 hex digits of the public key's sha256) -> who holds the private key, and the key.
TRUSTED_KEYS: dict[str, dict[str, str]] = {
    "525d34d994aeffa8": {
        "signer": "rocm-doctor data maintainers (2026 key)",
        "public_key": "d7628ec36c291a6aaa99fe9f25bba984eb168b00ec72a9463c4d77595f9a1695",
    },
}

_PKCS8_ED25519 = bytes.fromhex("302e020100300506032b657004220420")
_PEM = re.compile(r"-----BEGIN PRIVATE KEY-----(.*?)-----END PRIVATE KEY-----", re.S)


class SignatureError(Exception):
    """The pack is not signed by a trusted key; one line for the user."""


def key_id(public: bytes) -> str:
    return hashlib.sha256(public).hexdigest()[:16]


def _message(raw: bytes) -> bytes:
    return CONTEXT + hashlib.sha256(raw).digest()


def public_key(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte Ed25519 seed (RFC 8032's secret key)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
    return public.public_bytes(Encoding.Raw, PublicFormat.Raw)


def sign_message(seed: bytes, message: bytes) -> bytes:
    """The 64-byte Ed25519 signature of `message` by the seed's key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(seed).sign(message)


def verify(public: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is the key `public`'s Ed25519 signature of `message`; malformed input is False. The
    library is imported here, not with the module: a copy without it (run from a folder by path) still reads the
    shipped tables, and only a downloaded pack, which it cannot verify, is refused."""
    if len(public) != 32 or len(signature) != 64:
        return False
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def read_private_key(path: Path) -> bytes:
    """The 32-byte seed of an Ed25519 private key in PKCS#8 PEM (`openssl genpkey -algorithm ed25519`)."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise SignatureError(f"cannot read the signing key {path}: {getattr(exc, 'strerror', None) or exc}") from None
    match = _PEM.search(text)
    try:
        der = base64.b64decode("".join(match.group(1).split()), validate=True) if match else b""
    except (binascii.Error, ValueError):
        der = b""
    if len(der) != 48 or not der.startswith(_PKCS8_ED25519):
        raise SignatureError(f"{path} is not an Ed25519 private key in PKCS#8 PEM form "
                             "(make one with: openssl genpkey -algorithm ed25519 -out KEY.pem)")
    return der[len(_PKCS8_ED25519):]


def sign(raw: bytes, seed: bytes) -> str:
    """The signature document for the pack bytes `raw`."""
    public = public_key(seed)
    document = {"format": FORMAT, "version": VERSION, "algorithm": ALGORITHM, "key_id": key_id(public),
                "sha256": hashlib.sha256(raw).hexdigest(),
                "signature": base64.b64encode(sign_message(seed, _message(raw))).decode("ascii")}
    return json.dumps(document, indent=1) + "\n"


def check(raw: bytes, signature_text: str, trusted: Optional[Mapping[str, Mapping[str, str]]] = None) -> dict[str, Any]:
    """Who signed `raw` ({key_id, signer, algorithm}), or SignatureError naming what is wrong."""
    trusted = TRUSTED_KEYS if trusted is None else trusted
    try:
        document = json_text.loads(signature_text)
    except ValueError:
        raise SignatureError("the signature file is not JSON") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("version") != VERSION:
        raise SignatureError(f"the signature file is not a {FORMAT} version {VERSION}")
    if document.get("algorithm") != ALGORITHM:
        raise SignatureError(f"the signature uses {document.get('algorithm')!r}; only {ALGORITHM} is accepted")
    kid = document.get("key_id")
    entry = trusted.get(kid) if isinstance(kid, str) else None
    if entry is None:
        raise SignatureError(f"the pack is signed by key {kid!r}, which this rocm-doctor does not trust")
    try:
        signature = base64.b64decode(str(document.get("signature", "")), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("the signature is not base64") from None
    if not verify(bytes.fromhex(entry["public_key"]), _message(raw), signature):
        raise SignatureError(f"the signature by {entry['signer']} does not match the downloaded pack "
                             "(altered, or another pack than the one signed)")
    return {"key_id": kid, "signer": entry["signer"], "algorithm": ALGORITHM}


def signer_of(meta_signature: Any) -> Optional[str]:
    """The trusted signer recorded for an installed pack, or None (unsigned, or a key no longer trusted)."""
    if not isinstance(meta_signature, dict) or not isinstance(meta_signature.get("key_id"), str):
        return None
    entry = TRUSTED_KEYS.get(meta_signature["key_id"])
    return entry["signer"] if entry else None
