"""The per-gfx kernel files of the libraries torch loads: rocBLAS Tensile libraries, hipBLASLt, MIOpen kernel
databases. A gfx without rocBLAS files aborts the first matmul ("Cannot read TensileLibrary.dat ... for GPU arch")."""

from __future__ import annotations

import posixpath

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import ROCM_LIBRARIES, TORCH_FILE, TORCH_FLAVOUR, TORCH_LIBRARIES

from rocm_doctor.checks.amd_common import effective_gfx, gpus, integrated, label, override_for
from rocm_doctor.checks.torch_install import flavour_name

LIBRARY_FILES = {"rocblas": "librocblas.so", "hipblaslt": "libhipblaslt.so"}


def used_folders(facts) -> dict[str, dict]:
    """library → the listed folder its loaded .so reads kernels from (torch's own, else the active ROCm's)."""
    listed = [f for f in facts.get(ROCM_LIBRARIES) or [] if f.get("exists")]
    loaded = facts.get(TORCH_LIBRARIES) or []
    torch_lib = posixpath.join(posixpath.dirname(facts.get(TORCH_FILE) or ""), "lib")
    out = {}
    for library in ("rocblas", "hipblaslt", "miopen"):
        so = next((p for p in loaded if posixpath.basename(p).startswith(LIBRARY_FILES.get(library, "-"))), None)
        wanted = [posixpath.join(posixpath.dirname(so), library, "library")] if so else []
        if facts.get(TORCH_FLAVOUR) == "rocm":
            wanted.append(posixpath.join(torch_lib, library, "library"))
        candidates = [f for f in listed if f["library"] == library]
        folder = next((f for w in wanted for f in candidates if f["path"] == w), None) or next(
            (f for f in candidates if f["owner"] != "torch"), None)
        if folder:
            out[library] = folder
    return out


class RocblasLibraryCoverage(Check):
    id = "rocblas-library-coverage"
    title = "rocBLAS, hipBLASLt and MIOpen kernels for the GPU"
    area = "amd"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)
    requires = (ROCM_LIBRARIES,)

    def run(self, facts):
        found = [g for g in gpus(facts) if not integrated(facts, g)] or gpus(facts)
        if not found:
            return self.skip("no AMD GPU found")
        if facts.get(TORCH_FLAVOUR) in ("cpu", "cuda"):
            return self.skip(f"torch is a {flavour_name(facts[TORCH_FLAVOUR])} build (see torch-build-mismatch)")
        folders = used_folders(facts)
        if "rocblas" not in folders:
            return self.skip("no rocBLAS kernel folder was found (torch's lib/rocblas/library, /opt/rocm/lib/...)")
        findings = []
        for gpu in found:
            gfx = effective_gfx(facts, gpu)
            if gfx:
                findings += self._one(facts, gpu, gfx, folders)
        return findings or self.skip("the GPUs' gfx is unknown")

    def _one(self, facts, gpu, gfx, folders):
        subject = str(gpu.get("index"))
        override = override_for(facts, gpu)
        via = f" ({override[0]}={override[1]})" if override else ""
        evidence = [f"{label(gpu)} loads {gfx} kernels{via}"] + [
            f"{lib}: {f['path']} ({f['files']} files; gfx: {', '.join(f['gfx']) or 'none'})" for lib, f in folders.items()]
        rocblas = folders["rocblas"]
        out = []
        if gfx not in rocblas["gfx"]:
            out.append(self.fail(
                f"{rocblas['path']} has no rocBLAS kernels for {gfx}: the first matmul, linear layer or bmm aborts "
                f"with 'rocBLAS error: Cannot read .../TensileLibrary.dat ... for GPU arch : {gfx}'.",
                subject=f"{subject}-rocblas", evidence=evidence,
                remediation=[f"Use a torch / ROCm build that ships {gfx} (see gfx-not-in-torch-arch-list and "
                             "gfx-support-matrix for the closest working path).",
                             "Or point ROCBLAS_TENSILE_LIBPATH at a rocBLAS library folder built for it."],
                data={"gfx": gfx, "folder": rocblas["path"]}))
        else:
            out.append(self.ok(f"rocBLAS has {gfx} kernels ({rocblas['path']})", subject=f"{subject}-rocblas",
                               evidence=evidence))
        for library, effect in (("hipblaslt", "hipBLASLt GEMMs fall back to hipBLAS/rocBLAS (a 'hipBLASLt on an "
                                              "unsupported architecture' warning); slower, not broken"),
                                ("miopen", "MIOpen compiles its kernels at first use: the first convolutions are slow")):
            folder = folders.get(library)
            if folder and gfx not in folder["gfx"]:
                out.append(self.info(f"{folder['path']} has no {gfx} files: {effect}.", subject=f"{subject}-{library}",
                                     evidence=evidence))
        return out
