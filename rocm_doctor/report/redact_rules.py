"""The redaction rules as data: which environment variables are kept, which names mean a secret, and the patterns
for things that identify a person or a machine. Kept apart from the walker so the lists are easy to review.
"""

from __future__ import annotations

import math
import re

from rocm_doctor.knowledge import env_catalog
from rocm_doctor.parsers import shell_secrets
from rocm_doctor.parsers.secret_patterns import HARMLESS_VALUES

MIN_SECRET_LEN = 6


# A variable whose name contains one of these is a secret, whatever else it is (even HIP_API_KEY).
SECRET_WORDS = (
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH", "COOKIE", "SESSION",
    "PRIVATE", "SIGNATURE", "SALT", "DSN", "WEBHOOK", "CONNECTION_STRING", "CONN_STR",
)
_SECRET_NAME = re.compile("|".join(SECRET_WORDS))
# ...except these, which only look like it.
NOT_SECRET = {"SSH_AUTH_SOCK", "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP", "XDG_SESSION_ID",
              "DESKTOP_SESSION", "GNOME_KEYRING_CONTROL"}

# Kept verbatim (after the text rules: home -> ~, user, host, IPs...): what a GPU setup diagnosis needs.
ALLOWED_PREFIXES = (
    "ROCM", "HIP", "HSA_", "HCC_", "AMD", "GPU_", "ROCR_", "ROCBLAS_", "ROCFFT_", "ROCPROF", "HIPBLASLT_", "TENSILE_",
    "MIOPEN_", "RCCL_", "NCCL_", "MIGRAPHX_", "CUDA", "NVIDIA_", "CUBLAS", "CUDNN", "NVCC", "TORCH", "PYTORCH_",
    "TRITON_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "LLVM_", "DEVICE_LIB", "XLA_", "JAX_", "CONDA", "PYTHON", "PIP_",
    "UV_", "VIRTUAL_ENV", "LD_", "DYLD_", "LC_", "XDG_", "WSL", "CMAKE_", "PROCESSOR_", "PROGRAMFILES", "VS",
)
ALLOWED_NAMES = {
    "PATH", "PATHEXT", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "PKG_CONFIG_PATH",
    "HOME", "USER", "USERNAME", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "PWD", "OLDPWD", "TMPDIR", "TEMP",
    "TMP", "HOSTNAME", "COMPUTERNAME", "CC", "CXX", "FC", "DISPLAY", "WAYLAND_DISPLAY", "NO_COLOR", "SHLVL",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "CURL_CA_BUNDLE", "SYSTEMROOT", "WINDIR", "OS", "NUMBER_OF_PROCESSORS", "LOCALAPPDATA", "APPDATA",
    "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "SYSTEMDRIVE", "COMSPEC", "PSMODULEPATH", "NAME", "CI",
    "CONTAINER", "SINGULARITY_NAME", "APPTAINER_NAME", "SLURM_JOB_ID",
}
USER_VARIABLES = {"USER", "USERNAME", "LOGNAME", "SUDO_USER"}
HOME_VARIABLES = {"HOME", "USERPROFILE"}
HOST_VARIABLES = {"HOSTNAME", "COMPUTERNAME", "HOST", "NAME"}
DOMAIN_VARIABLES = {"USERDOMAIN", "USERDNSDOMAIN", "USERDOMAIN_ROAMINGPROFILE"}


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper not in NOT_SECRET and (bool(_SECRET_NAME.search(upper)) or shell_secrets.secret_name(name))


NOT_SECRET_KEYS = {"KEY", "KEYS", "KEY_ID", "KEYID", "PUBLIC_KEY"}  # structure keys that name, not hold, a key


def is_secret_key(name: str) -> bool:
    """A key of structured data (JSON, a record) whose string value is a secret: `"api_key": "…"`."""
    return name.upper() not in NOT_SECRET_KEYS and shell_secrets.secret_name(name)  # not SESSION: a log's key


def is_allowed_name(name: str) -> bool:
    upper = name.upper()
    return upper in ALLOWED_NAMES or upper.startswith(ALLOWED_PREFIXES) or env_catalog.lookup(upper) is not None


def looks_random(value: str) -> bool:
    """A long single token mixing letters and digits with high entropy: an API key whatever its name."""
    if len(value) < 16 or any(c.isspace() for c in value) or value.startswith(("/", "~", ".")) or "\\" in value:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    counts = {c: value.count(c) for c in set(value)}
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.5


def trivial_id(value: str) -> bool:
    """Serials and UUIDs that identify nothing: N/A, all zeros, rocminfo's GPU-XX."""
    stripped = value.strip().strip('"').lower()
    if stripped in HARMLESS_VALUES or stripped in ("n/a", "na", "unknown", "not supported", "[not supported]"):
        return True
    if stripped.endswith("-xx"):
        return True
    digits = stripped[2:] if stripped.startswith("0x") else stripped
    return set(digits) <= set("0-")


# -- text patterns (applied in this order by Redactor._text, after the secret ones, which live with the parsers
# in parsers/secret_patterns.py: they mask the text other users control before it is shown, too)
EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
HOME_PATH = re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\+Users\\+)(?P<name>[^/\\\s\"'<>:;,]+)")
SERIAL_LINE = re.compile(
    r"(?im)(?P<label>\b(?:asic[_ ]serial|serial[_ ]number|board[_ ]serial|product[_ ]serial|fru[_ ]serial|serial|unique[_ ]id|guid)"
    r"\"?\s*[:=]\s*\"?)(?P<value>[^\s\",](?:[^\",\n]*[^\s\",])?)(?=\s*\"|\s*,|[ \t\r]*$)"
)
GPU_UUID = re.compile(r"\b(?P<prefix>(?:GPU|MIG)-)(?P<id>(?!XX\b)[0-9A-Fa-f]{8}(?:-?[0-9A-Fa-f]{4,12}){0,4})\b")
UUID = re.compile(r"\b[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b")
MAC = re.compile(r"(?<![\w:.-])[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?![\w:-])")
IPV6_CANDIDATE = re.compile(r"(?<![\w:.<])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:)?(?![\w:.])")
IPV4 = re.compile(
    r"(?<![\w.+-])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w-]|\.\d)"
)
IDENTIFIER_KEY = re.compile(r"(?i)(serial|uuid|unique[_ ]?id|guid)")
# A dotted quad right after one of these is a version (`MIOpen version 3.3.0.0`, `Driver Version: 24.10.1.2`).
VERSION_BEFORE = re.compile(
    r"(?i)\b(?:version|ver|v|release|rev|revision|build|driver|firmware|fw|bios|vbios|package|pkg|miopen|rocm|hip"
    r"|amdgpu|adrenalin|torch|python|cuda|nccl|rccl|rocblas|hipblaslt|rocprofiler|roctracer)\.?[\"']?\s*[:=]?\s*[\"']?$"
)
