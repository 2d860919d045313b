"""Builders for the rows PyTorch's own build scripts give, read at a commit and saved under tests/fixtures/sources/:
the compute capabilities each CUDA variant of the Linux wheels is built for (.ci/manywheel/build_cuda.sh); the CUDA
and ROCm indexes of each torch release (pytorch/test-infra's binary build matrix at the commit that made it the
stable release); and the newest torch on PyPI past the table's rows, from PyPI's JSON metadata."""

from __future__ import annotations

import re

from source_parsers import source_entry

BUILD_CUDA = "pytorch-build_cuda.sh-arch-lists.sh"
BUILD_CUDA_QUOTE = '12.8) TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};10.0;12.0" ;;'
PYPI_TORCH = "pypi-torch-2.15.0.json.txt"
UNSPLIT = ("the matrix names no stable CUDA before 2.7: which of its CUDA indexes were stable and which experimental "
           "is PT-REL's")
MATRIX = re.compile(r"^pytorch-test-infra-build-matrix-(\d+\.\d+)(-candidate)?\.txt$")
WHEEL_METADATA = re.compile(r"^pypi-torch-(\d+\.\d+)\.\d+-metadata\.txt$")
_TOOLKIT_PIN = re.compile(r'^Requires-Dist: cuda-toolkit\[[^\]]*\]==(\d+)\.(\d+)\.\d+; platform_system == "Linux"$',
                          re.M)
_AARCH64_ONLY = re.compile(r'\$\(\[\[ "\$ARCH" == "aarch64" \]\] && echo "([\d.;]+)" \|\| echo ""\)')


def build_arch_lists(text: str) -> dict[str, dict[str, list[str]]]:
    """build_cuda.sh's TORCH_CUDA_ARCH_LIST per CUDA version, machine code only ("+PTX" dropped), for x86_64 and
    for aarch64 after the script's filter: {"12.8": {"x86_64": [...], "aarch64": [...]}}."""
    base = re.search(r'^TORCH_CUDA_ARCH_LIST="([\d.;]+)"', text, re.M).group(1)
    dropped = re.search(r'remove_archs "\$arch_list" ((?:"[\d.]+" ?)+)', text).group(1).replace('"', "").split()
    result, cuda = {}, None
    for line in text.split("case ${CUDA_VERSION} in", 1)[1].splitlines():
        label = re.match(r"^\s+(\d+\.\d+)\)", line)
        cuda = label.group(1) if label else cuda
        value = re.search(r'TORCH_CUDA_ARCH_LIST="(.*)"(?=\s*(?:;;|#|$))', line)
        if not (cuda and value) or "//" in value.group(1):
            continue
        listed = value.group(1).replace("${TORCH_CUDA_ARCH_LIST}", base)
        lists = {}
        for arch in ("x86_64", "aarch64"):
            chosen = _AARCH64_ONLY.sub(lambda m: m.group(1) if arch == "aarch64" else "", listed)
            ccs = [cc.replace("+PTX", "") for cc in chosen.split(";") if cc]
            lists[arch] = [cc for cc in ccs if arch == "x86_64" or cc not in dropped]
        result[cuda] = lists
    return result


def wheel_arch_rows(table: dict, texts: dict) -> None:
    """The wheel rows resting on the build script take its lists; one that names it beside another source agrees
    with it or records the disagreement."""
    table["sources"]["PT-BUILD-CUDA"] = source_entry(BUILD_CUDA, texts[BUILD_CUDA], BUILD_CUDA_QUOTE)
    built = build_arch_lists(texts[BUILD_CUDA])
    for index, row in table["wheel_archs"].items():
        cuda = f"{index[2:-1]}.{index[-1]}"
        if cuda not in built:
            continue
        if row["source"] == "PT-BUILD-CUDA":
            row.update(built[cuda])
        elif "PT-BUILD-CUDA" in row.get("also", []):
            same = all(row[arch] == built[cuda][arch] for arch in ("x86_64", "aarch64"))
            assert same or row.get("disagreement"), f"{index}: the build script gives {built[cuda]}"


def newest_on_pypi(table: dict, texts: dict) -> None:
    """A torch release PyPI has that the table has no row for: its version, the day its wheels were uploaded and
    the CUDA toolkit its Linux wheels there pin; its download.pytorch.org indexes stay unknown until read."""
    text = texts[PYPI_TORCH]
    version = re.search(r'^"version": "([^"]+)"$', text, re.M).group(1)
    uploaded = sorted(re.findall(r'"upload_time": "(\d{4}-\d\d-\d\d)T', text))[0]
    cuda = re.search(r'cuda-toolkit\[[^\]]*\]==([\d.]+); platform_system == \\"Linux\\"', text).group(1)
    minor = ".".join(version.split(".")[:2])
    assert minor not in {row["torch"] for row in table["releases"]}, f"torch {minor} has a row: drop this"
    table["sources"]["PYPI-TORCH"] = source_entry(PYPI_TORCH, text, f'"version": "{version}"')
    table["torch_after_table"] = {
        "torch": version, "released": uploaded, "pypi_linux_cuda_toolkit": cuda, "source": "PYPI-TORCH",
        "note": f"torch {version} is on PyPI (wheels uploaded {uploaded}); its Linux wheels there pin cuda-toolkit "
                f"{cuda}. Its download.pytorch.org ROCm and CUDA indexes were not read (the host does not resolve "
                "from here), so it has no row in `releases`; a torch newer than the newest row is judged from the "
                "machine (its own arch list and Requires-Dist)"}


def _channel_values(text: str, name: str) -> dict[str, object]:
    """A per-channel dict of the matrix (`NAME = {"nightly": ..., "test": ..., "release": ...}`): channel -> its list
    of versions, or its one version."""
    block = re.search(rf"^{name} = {{\n(.*?)^}}", text, re.M | re.S).group(1)
    values: dict[str, object] = {}
    for channel, listed, single in re.findall(r'^\s+"(\w+)": (?:\[([^\]]*)\]|"([^"]*)"),?$', block, re.M):
        values[channel] = re.findall(r'"([^"]+)"', listed) if single == "" else single
    return values


def _version(cuda: str) -> tuple[int, ...]:
    return tuple(int(part) for part in cuda.split("."))


def matrix_row(text: str, channel: str) -> dict:
    """One channel of the matrix as a `releases` row's indexes: the torch release it carries, every ROCm index
    (the matrix's order, newest last), the CUDA indexes up to the channel's stable CUDA and those past it; a matrix
    that names no stable CUDA (before 2.7) gives its CUDA indexes unsplit, as `cuda`."""
    which = {"release": "STABLE", "test": "CANDIDATE"}[channel]
    torch = re.search(rf'^CURRENT_{which}_VERSION = "(\d+\.\d+)\.\d+"$', text, re.M).group(1)
    cuda = _channel_values(text, "CUDA_ARCHES_DICT")[channel]
    row = {"torch": torch, "rocm_indexes": [f"rocm{v}" for v in _channel_values(text, "ROCM_ARCHES_DICT")[channel]]}
    if "STABLE_CUDA_VERSIONS = {" not in text:
        return dict(row, cuda=[f"cu{v.replace('.', '')}" for v in cuda])
    stable = _version(_channel_values(text, "STABLE_CUDA_VERSIONS")[channel])
    row.update(cuda_indexes=[f"cu{v.replace('.', '')}" for v in cuda if _version(v) <= stable],
               cuda_experimental=[f"cu{v.replace('.', '')}" for v in cuda if _version(v) > stable])
    return {key: value for key, value in row.items() if value}


def _matrix_quote(text: str, channel: str) -> str:
    """The ROCm dict of the matrix up to the channel's line: the words the row's ROCm indexes rest on."""
    start = text.index("ROCM_ARCHES_DICT = {")
    return text[start:text.index("\n", text.index(f'    "{channel}": ', start))]


def release_matrix_rows(table: dict, texts: dict) -> None:
    """Each saved matrix at the commit that made a torch release stable gives that release's row (its indexes and
    source; the row's release month is kept). A release-candidate matrix (the test channel before the release went
    live) only checks the row it names: a difference is recorded as the row's `disagreement`."""
    matrices = sorted((found for found in map(MATRIX.match, texts) if found), key=lambda m: _version(m.group(1)))
    for found in matrices:
        name = found.group(0)
        release, channel = found.group(1), "test" if found.group(2) else "release"
        key = f"PT-MATRIX-{release}" + ("-RC" if found.group(2) else "")
        table["sources"][key] = source_entry(name, texts[name], _matrix_quote(texts[name], channel))
        built = matrix_row(texts[name], channel)
        assert built["torch"] == release, f"{name}: the {channel} channel carries torch {built['torch']}"
        rows = table["releases"]
        row = next((r for r in rows if r["torch"] == release), None)
        assert row, f"{name}: no row for torch {release}: add one with its release month"
        if channel == "release" and "cuda" in built:
            split = {k: row[k] for k in ("cuda_indexes", "cuda_experimental") if k in row}
            assert sorted(built.pop("cuda")) == sorted(sum(split.values(), [])), f"{name}: CUDA differs from {row}"
            rows[rows.index(row)] = dict(built, **split, source=key, also=["PT-REL"], date=row["date"],
                                         note=UNSPLIT)
            continue
        if channel == "release":
            rows[rows.index(row)] = dict(built, source=key, date=row["date"])
            continue
        released = _released_wheel(texts, release, built)
        if released:
            table["sources"][released[0]] = released[1]
            rows[rows.index(row)] = dict(built, source=key, also=[released[0]], date=row["date"], note=(
                "the release's own matrix was not read (the matrix's history here ends before the release); this is "
                f"its release candidate's, and the released Linux wheels on PyPI pin {released[2]}, the candidate's "
                "stable CUDA"))
            continue
        row["also"] = [key]
        differs = [field for field in ("rocm_indexes", "cuda_indexes", "cuda_experimental")
                   if row.get(field, []) != built.get(field, [])]
        row.pop("disagreement", None)
        if differs:
            row["disagreement"] = f"{key} (the release candidate's matrix) gives " + "; ".join(
                f"{field} {', '.join(built.get(field, [])) or 'none'}" for field in differs)


def _released_wheel(texts: dict, release: str, built: dict):
    """The saved core metadata of a released wheel of `release` that pins the CUDA toolkit the candidate's matrix
    calls stable (its newest stable CUDA index): (source key, source entry, the pin), else None."""
    for name in sorted(texts):
        found = WHEEL_METADATA.match(name)
        pin = _TOOLKIT_PIN.search(texts[name]) if found and found.group(1) == release else None
        if pin and built.get("cuda_indexes") and f"cu{pin.group(1)}{pin.group(2)}" == built["cuda_indexes"][-1]:
            version = re.search(r"^Version: (\S+)$", texts[name], re.M).group(1)
            return (f"PYPI-TORCH-{version}", source_entry(name, texts[name], pin.group(0)),
                    f"cuda-toolkit {pin.group(1)}.{pin.group(2)}")
    return None
