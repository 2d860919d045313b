"""Runs inside the *target* interpreter to describe the torch family: torch, torchvision, torchaudio, the Triton
package and the retired torchtext / torchdata. Prints one JSON object per line, per stage.

Standard library only. The installed metadata is read first and without importing anything of the family, because
the imports are what crash when a companion was built for another torch. Where the metadata disagree (a companion
pins another torch, or comes from another build: +cu121 beside +rocm6.2), `import torchvision` (with the lookup of
its compiled `nms` operator) and `import torchaudio` are tried, each announced before it starts, so the parent knows
which one crashed or hung. Where they agree, the imports are left out: each costs a torch import beside the torch
probe's own, seconds of `check`.
"""

import importlib
import importlib.util
import json
import os
import re
import sys
import traceback
import warnings

FAMILY = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "pytorch-triton-rocm", "torchtext",
          "torchdata")
IMPORTS = ("torchvision", "torchaudio")
NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()
childlib.leave_script_folder(__file__)
emit = childlib.Emitter("stage")
error_text = childlib.error_text


def normalise(name):
    return re.sub(r"[-_.]+", "-", name or "").lower()


def family_requirements(dist):
    """The Requires-Dist lines that name a family member ("torch==2.5.1", "pytorch-triton-rocm==3.1.0; ...")."""
    out = []
    for line in dist.requires or ():
        match = NAME.match(line)
        if match and normalise(match.group(1)) in FAMILY:
            out.append(line)
    return out


def read_json(dist, name):
    text = dist.read_text(name)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return {"unreadable": text[:300]}


def describe(dist):
    installer = dist.read_text("INSTALLER")
    return {
        "name": normalise(dist.metadata.get("Name")),
        "version": dist.version,
        "requires": family_requirements(dist),
        "installer": installer.strip() if installer else None,
        "direct_url": read_json(dist, "direct_url.json"),
        "location": str(dist.locate_file("")),
    }


def packages():
    """Every installed family distribution in sys.path order (the first of a name is the one Python imports)."""
    try:
        from importlib import metadata
    except ImportError:
        emit("packages", error="importlib.metadata needs Python 3.8 or newer")
        return []
    found = []
    for dist in metadata.distributions():
        try:
            if normalise(dist.metadata.get("Name")) in FAMILY:
                found.append(describe(dist))
        except Exception as exc:  # one broken dist-info must not hide the others
            found.append({"name": None, "error": error_text(exc, limit=300)})
    emit("packages", packages=found)
    return found


def public(version):
    return (version or "").split("+", 1)[0]


def local(version):
    return (version or "").partition("+")[2] or None


def disagreement(found, module):
    """Why `module`'s metadata disagree with the torch installed first on sys.path, or None."""
    first = {}
    for item in found:
        first.setdefault(item.get("name"), item)
    torch, companion = first.get("torch"), first.get(module)
    if not torch or not companion:
        return None
    if local(companion.get("version")) != local(torch.get("version")):
        return "%s %s beside torch %s" % (module, companion.get("version"), torch.get("version"))
    for line in companion.get("requires") or ():
        match = re.match(r"\s*torch\s*==\s*([^;,\s]+)", line)
        if match and public(match.group(1)) != public(torch.get("version")):
            return "%s requires %s; torch is %s" % (module, line.split(";")[0].strip(), torch.get("version"))
    return None


def try_import(module):
    emit("importing", module=module)
    record = {"module": module}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            importlib.import_module(module)
            record["ok"] = True
        except BaseException as exc:  # an extension built for another torch can raise anything
            record.update(ok=False, error=error_text(exc, limit=2000), traceback=traceback.format_exc(limit=12))
        record["warnings"] = [str(item.message)[:500] for item in caught][:10]
    if module == "torchvision" and record["ok"]:
        try:
            import torch

            torch.ops.torchvision.nms
            record["nms"] = True
        except Exception as exc:
            record.update(nms=False, nms_error=error_text(exc, limit=500))
    emit("import", **record)


def main():
    emit("start", python=sys.version.split()[0], executable=sys.executable)
    found = packages()
    names = [item.get("name") for item in found]
    for module in IMPORTS:
        if module not in names:
            continue
        why = disagreement(found, module)
        if why:
            try_import(module)
        else:
            emit("import_skipped", module=module, reason="its metadata agree with torch's")
    emit("done")


if __name__ == "__main__":
    main()
