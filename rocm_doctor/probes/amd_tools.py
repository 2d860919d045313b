"""Runs the ROCm command-line tools whose output the parsers read. Each may be missing, hang or crash."""

from __future__ import annotations

import os
import shutil

from rocm_doctor.facts.keys import (AGENT_ENUMERATOR_KEY, AMD_SMI_LIST_KEY, AMD_SMI_STATIC_KEY, AMDGPU_ARCH_KEY,
                                    HIPCONFIG_FULL_KEY, HIPCONFIG_VERSION_KEY, ROCM_SMI_KEY, ROCMINFO_KEY)
from rocm_doctor.knowledge.env_catalog import role
from rocm_doctor.probes._base import Recorder

# key -> argv (the first element is looked up on PATH, then in ROCm's bin folder)
LINUX_COMMANDS = {
    HIPCONFIG_FULL_KEY: ["hipconfig", "--full"],
    HIPCONFIG_VERSION_KEY: ["hipconfig", "--version"],
    ROCMINFO_KEY: ["rocminfo"],
    ROCM_SMI_KEY: ["rocm-smi", "--showproductname", "--showhw", "--json"],
    AMD_SMI_STATIC_KEY: ["amd-smi", "static", "--json"],
    AMD_SMI_LIST_KEY: ["amd-smi", "list", "--json"],
    AGENT_ENUMERATOR_KEY: ["rocm_agent_enumerator"],
    AMDGPU_ARCH_KEY: ["amdgpu-arch"],
}
# The tools that go through the HSA runtime or read HIP's variables: what they list depends on the environment
# (ROCR_VISIBLE_DEVICES, HSA_OVERRIDE_GFX_VERSION, HIP_PATH, ROCM_TARGET_LST), so they run in the one the checks
# judge (a service's under --unit). rocm-smi and amd-smi ask the driver, whatever those variables say.
JUDGED_ENV_COMMANDS = (HIPCONFIG_FULL_KEY, HIPCONFIG_VERSION_KEY, ROCMINFO_KEY, AGENT_ENUMERATOR_KEY, AMDGPU_ARCH_KEY)


def rocm_bin_dirs(env) -> list[str]:
    dirs = []
    for variable in role("install-root"):
        if env.get(variable):
            dirs.append(os.path.join(env[variable], "bin"))
    dirs.append("/opt/rocm/bin")
    return dirs


def resolve(tool: str, env) -> str | None:
    """PATH first (what the user's shell would run), then ROCm's own bin folders."""
    found = shutil.which(tool, path=env.get("PATH"))
    if found:
        return found
    for folder in rocm_bin_dirs(env):
        candidate = os.path.join(folder, tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def collect(recorder: Recorder) -> None:
    if recorder.context.platform_os not in ("linux", "wsl"):
        return
    env, judged = recorder.context.env, recorder.context.judged_env()

    def run(key: str, argv: list[str]):
        if key in JUDGED_ENV_COMMANDS:  # the service's PATH may lack the folder this shell finds the tool in
            executable = resolve(argv[0], judged) or resolve(argv[0], env) or argv[0]
            return lambda: recorder.tool_command(key, [executable, *argv[1:]])
        executable = resolve(argv[0], env) or argv[0]  # unresolved: the runner records "not found"
        return lambda: recorder.command(key, [executable, *argv[1:]], env=dict(env))

    recorder.side_by_side(*(run(key, argv) for key, argv in LINUX_COMMANDS.items()))  # none needs another's output
