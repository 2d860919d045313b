"""Builders for the rows PyTorch's own build scripts give, read at a commit and saved under tests/fixtures/sources/:
the compute capabilities each CUDA variant of the Linux wheels is built for (.ci/manywheel/build_cuda.sh); and the
newest torch on PyPI past the table's rows, from PyPI's JSON metadata."""

from __future__ import annotations

import re

from source_parsers import source_entry

BUILD_CUDA = "pytorch-build_cuda.sh-arch-lists.sh"
BUILD_CUDA_QUOTE = '12.8) TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};10.0;12.0" ;;'
PYPI_TORCH = "pypi-torch-2.15.0.json.txt"
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
