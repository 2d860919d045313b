"""The keys that cross from observing to interpreting to judging, in one place: where each probe records what it
saw (a command's key, a file or folder read, a probe value, a registry key), each fact's name, and which interpreter
owns each fact.

A probe records under these names and an interpreter reads them back from a live run or a snapshot, so both
import them from here and neither spells one itself; interpreters, checks and reports name facts by the constants
below the same way. FACTS names the one interpreter that sets each fact; the interpreters run in the order their
REQUIRES and this table give (rocm_doctor/interpret/__init__.py).
"""

from __future__ import annotations

from typing import Optional

# --- Observations, by the probe that records them (rocm_doctor/probes/<name>.py) ---

# amd_tools: the commands run (key -> argv in its LINUX_COMMANDS).
HIPCONFIG_FULL_KEY = "hipconfig-full"
HIPCONFIG_VERSION_KEY = "hipconfig-version"
ROCMINFO_KEY = "rocminfo"
ROCM_SMI_KEY = "rocm-smi-json"
AMD_SMI_STATIC_KEY = "amd-smi-static-json"
AMD_SMI_LIST_KEY = "amd-smi-list-json"
AGENT_ENUMERATOR_KEY = "rocm-agent-enumerator"
AMDGPU_ARCH_KEY = "amdgpu-arch"

# gpu_live and gpu_sample: nvidia-smi's and the AMD tools' live queries, the DRM cards' folder and the files read in
# an amdgpu card's device folder, each listed process's status file and its parents', and the probe value of the
# doctor's own pid and the pids it started (not another program's use of the GPU).
NVIDIA_SMI_QUERY_KEY = "nvidia-smi-query-gpu"
NVIDIA_SMI_LIST_KEY = "nvidia-smi-list"
NVIDIA_SMI_APPS_KEY = "nvidia-smi-compute-apps"
AMD_SMI_METRIC_KEY = "amd-smi-metric-json"
AMD_SMI_PROCESS_KEY = "amd-smi-process-json"
ROCM_SMI_LIVE_KEY = "rocm-smi-live-json"
DRM_DIR = "/sys/class/drm"
CARD_UEVENT = "uevent"
CARD_BUSY = "gpu_busy_percent"
CARD_VRAM_USED = "mem_info_vram_used"
CARD_VRAM_TOTAL = "mem_info_vram_total"
CARD_PERF_LEVEL = "power_dpm_force_performance_level"
CARD_FILES = (CARD_BUSY, CARD_VRAM_USED, CARD_VRAM_TOTAL, CARD_PERF_LEVEL)
PID_STATUS_FILE = "/proc/{pid}/status"
LIVE_SELF_KEY = "gpu.live.self"

# container_security: files read, and the probe value of /dev/kfd mapping attempts.
SELINUX_ENFORCE = "/sys/fs/selinux/enforce"
SECURITY_LABEL = "/proc/self/attr/current"
APPARMOR_LABEL = "/proc/self/attr/apparmor/current"
PROC_STATUS = "/proc/self/status"
DEVICE_MAP_KEY = "linux.device_map"

# kernel_driver: the commands run, and the folders listed.
SECURE_BOOT_KEY = "mokutil-sb-state"
DKMS_STATUS_KEY = "dkms-status"
MODINFO_KEY = "modinfo-amdgpu"
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/usr/lib/modprobe.d",
                 "/lib/modprobe.d")
FIRMWARE_DIRS = ("/lib/firmware/updates/amdgpu", "/lib/firmware/amdgpu", "/usr/lib/firmware/updates/amdgpu",
                 "/usr/lib/firmware/amdgpu")

# kernel_log: the kernel's messages, from the journal, else from dmesg.
JOURNAL_KEY = "journalctl-kernel"
DMESG_KEY = "dmesg-kernel"
DMESG_WARNINGS_KEY = "dmesg-warnings"  # older snapshots: `dmesg --level=err,warn`

# kfd: the topology folder and its nodes' files; linux_access: the device groups whose membership is recorded, the
# DRI folder listed, the amdgpu module's folder and files, and the kernel's command line.
KFD_NODES_DIR = "/sys/class/kfd/kfd/topology/nodes"
NODE_PROPERTIES = "properties"  # the files read in each node's folder
NODE_NAME = "name"
NODE_FILES = (NODE_PROPERTIES, NODE_NAME, "gpu_id")
DEVICE_GROUPS = ("render", "video")
DRI_DIR = "/dev/dri"
AMDGPU_MODULE_DIR = "/sys/module/amdgpu"
AMDGPU_VERSION_FILE = AMDGPU_MODULE_DIR + "/version"
AMDGPU_INITSTATE_FILE = AMDGPU_MODULE_DIR + "/initstate"
KERNEL_CMDLINE_FILE = "/proc/cmdline"

# miopen_dirs: the probe value of MIOpen's cache and database folders.
MIOPEN_DIRS_KEY = "miopen.dirs"

# os_layer: the os-release files, the files that tell a container, glibc's version, and the probe value of
# /dev/shm's size.
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
DOCKERENV_FILE = "/.dockerenv"
CONTAINERENV_FILE = "/run/.containerenv"
INIT_CGROUP_FILE = "/proc/1/cgroup"
CONTAINER_FILES = (DOCKERENV_FILE, CONTAINERENV_FILE, INIT_CGROUP_FILE)
LDD_KEY = "ldd-version"
SHM_KEY = "dev-shm"

# package_repos, rocm_libs and rocm_paths: the /opt listing each of them reads.
OPT_DIR = "/opt"

# package_repos: repository folders and the file endings read in each.
REPO_DIRS = (("/etc/apt/sources.list.d", (".list", ".sources")), ("/etc/yum.repos.d", (".repo",)),
             ("/etc/zypp/repos.d", (".repo",)))

# pci: the display devices in sysfs (a probe value), lspci's listing, and Windows' video controllers from WMI.
PCI_SYSFS_KEY = "pci.sysfs"
LSPCI_KEY = "lspci"
WMI_VIDEO_KEY = "wmi-video-controllers"

# rocm_packages: the package managers' lists, the /opt/rocm links and their listing, and the firmware commands.
DPKG_PACKAGES_KEY = "dpkg-rocm-packages"
RPM_PACKAGES_KEY = "rpm-rocm-packages"
LINK_PATHS = ("/opt/rocm", "/etc/alternatives/rocm")
LS_OPT_ROCM_KEY = "ls-opt-rocm"
FIRMWARE_KEY = "rocm-smi-showfwinfo"
AMD_SMI_FIRMWARE_KEY = "amd-smi-firmware"

# run_env: what was asked for (--unit, --user-unit, --kernel), the commands and files read for it.
REQUEST_KEY = "run.request"  # probe value: {kind: systemd|jupyter, name, scope: system|user}
INTERPRETER_KEY = "run.interpreter"  # probe value: {program, path, exists}
SYSTEMD_SHOW_KEY = "systemctl-show-unit"
SYSTEMD_SHOW_ENV_KEY = "systemctl-show-environment"
SYSTEMD_CAT_KEY = "systemctl-cat-unit"
SYSTEMD_GLOBS_KEY = "run.env_file_globs"
JUPYTER_LIST_KEY = "jupyter-kernelspec-list"
JUPYTER_KERNEL_KEY = "run.kernel"  # probe value: {resource_dir, kernel_json, searched}

# runtime_status: the runtime child's command, and the doctor's own limits (the target's processes inherit them).
RUNTIME_PROBE_KEY = "runtime-probe"
OWN_LIMITS_KEY = "process.limits.doctor"

# torch_probe and torch_family: the children of the target interpreter; rocm_paths, rocm_libs, shell_rc, online:
# probe values.
TORCH_PROBE_KEY = "torch-probe"
GCC_KEY = "gcc-version"  # torch_probe: the C++ compiler torch.compile and extensions build with
TORCH_FAMILY_KEY = "torch-family"
ROCM_PATHS_KEY = "rocm.paths"
ROCM_LIBS_KEY = "rocm.libs"
SHELL_RC_KEY = "shell.rc"
ONLINE_INDEX_KEY = "online.package_index"

# `check --log FILE`: the user's log, a probe value read into the fact of the same name; `triage`: what the pasted
# files state (the tools and programs each one holds).
LOG_KEY = "user.log"
PASTE_KEY = "user.paste"

# Windows (windows_env, windows_hip, windows_runtime, windows_vs through probes/windows_record.py): registry
# reads land in probes[REGISTRY_PREFIX + probe], filtered folder scans in probes[DIR_SCAN_PREFIX + probe].
REGISTRY_PREFIX = "windows.registry."
DIR_SCAN_PREFIX = "windows.dir_scan."
USER_ENV_KEY = ("HKCU", "Environment")
MACHINE_ENV_KEY = ("HKLM", r"SYSTEM\CurrentControlSet\Control\Session Manager\Environment")
DISPLAY_CLASS_KEY = ("HKLM", r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}")
AMD_CN_KEY = ("HKLM", r"SOFTWARE\AMD\CN")
CURRENT_VERSION_KEY = ("HKLM", r"SOFTWARE\Microsoft\Windows NT\CurrentVersion")
SDK_COMMAND_KEY = "windows-rocm-sdk"
HIPINFO_COMMAND_KEY = "hipinfo"
VSWHERE_KEY = "vswhere"
VSWHERE_VC_KEY = "vswhere-vctools"

# triage: the tool outputs cut from a pasted log (parsers/paste_tools.py) are recorded as the commands that print
# them; beside the keys above (ROCMINFO_KEY, HIPCONFIG_FULL_KEY, ROCM_SMI_KEY, AMD_SMI_STATIC_KEY,
# HIPINFO_COMMAND_KEY, DMESG_KEY), the NVIDIA and OpenCL tools only a paste shows.
NVIDIA_SMI_TABLE_KEY = "nvidia-smi"
DEVICE_QUERY_KEY = "devicequery"
CLINFO_KEY = "clinfo"

# --- Facts, by the interpreter that owns each (rocm_doctor/interpret/<owner>.py) ---
# Checks, interpreters and everything else name a fact by these constants, never by its spelling
# (tests/test_fact_keys.py). A fact read from the probe value of the same name uses that value's constant above:
# DEVICE_MAP_KEY, LOG_KEY, MIOPEN_DIRS_KEY, ONLINE_INDEX_KEY, ROCM_PATHS_KEY.

# run_env: the environment checks judge (Facts.env reads it, so every other interpreter runs after run_env).
RUN_ENV = "run.env"
ENV_KNOWN = "env.known"  # the environment was seen: on a machine always; from a paste where it states a variable

# platform_facts: platform.<item> for each item the platform probe describes (probes/_platform.py); Facts.os reads
# platform.os, so every other interpreter runs after platform_facts.
PLATFORM_PREFIX = "platform."
PLATFORM_OS = "platform.os"
PLATFORM_SYSTEM = "platform.system"
PLATFORM_RELEASE = "platform.release"
PLATFORM_VERSION = "platform.version"
PLATFORM_MACHINE = "platform.machine"
PLATFORM_DOCTOR_PYTHON = "platform.doctor_python"
PLATFORM_DOCTOR_EXECUTABLE = "platform.doctor_executable"
PLATFORM_WINDOWS_BUILD = "platform.windows_build"
PLATFORM_OS_RELEASE = "platform.os_release"
GPU_PCI = "gpu.pci"

# amd_derived (and ROCM_PATHS_KEY, MIOPEN_DIRS_KEY, LOG_KEY)
ROCM_LIBRARIES = "rocm.libraries"
SHELL_RC_LINES = "shell.rc_lines"

# amd_tools
AMDGPU_ARCH_TARGETS = "amdgpu_arch.targets"
HIP_CONFIG = "hip.config"
HIP_VERSION = "hip.version"
ROCM_AGENT_ENUMERATOR_TARGETS = "rocm_agent_enumerator.targets"
ROCMINFO_AGENTS = "rocminfo.agents"
ROCMINFO_STATUS = "rocminfo.status"
SMI_DEVICES = "smi.devices"
SMI_PROBLEMS = "smi.problems"
TOOLS_GARBLED = "tools.garbled"

# container_security (and DEVICE_MAP_KEY)
LINUX_SECURITY = "linux.security"

# driver_layer
LINUX_AMDGPU_BLOCKS = "linux.amdgpu_blocks"
LINUX_AMDGPU_MODINFO = "linux.amdgpu_modinfo"
LINUX_DKMS_AMDGPU = "linux.dkms_amdgpu"
LINUX_FIRMWARE = "linux.firmware"
LINUX_KERNEL_LOG = "linux.kernel_log"
LINUX_SECURE_BOOT = "linux.secure_boot"

# driver_release
LINUX_AMDGPU_DRIVER = "linux.amdgpu_driver"

# gpu_inventory, gpu_live, gpu_targets
GPU_INVENTORY = "gpu.inventory"
GPU_INVENTORY_DISAGREEMENTS = "gpu.inventory.disagreements"
GPU_LIVE = "gpu.live"
GPU_TARGETS = "gpu.targets"

# kernel_events
LINUX_GPU_EVENTS = "linux.gpu_events"
LINUX_KERNEL_LOG_ACCESS = "linux.kernel_log_access"

# kfd (linux.device_access and linux.groups are also the probe values they are read from)
KFD_NODES = "kfd.nodes"
LINUX_AMDGPU_MODULE = "linux.amdgpu_module"
LINUX_DEVICE_ACCESS = "linux.device_access"
LINUX_GROUPS = "linux.groups"
LINUX_KERNEL_CMDLINE = "linux.kernel_cmdline"

# log_facts, paste_facts, nvidia_driver (and online_facts: ONLINE_INDEX_KEY)
LOG_MACHINE = "log.machine"
PASTE_SUMMARY = "paste.summary"
NVIDIA_DRIVER = "nvidia.driver"

# os_layer (OS_RELEASE above is the files os.release is read from)
OS_CONTAINER = "os.container"
OS_GLIBC = "os.glibc"
OS_KERNEL = "os.kernel"
OS_RELEASE_FACT = "os.release"
OS_SHM = "os.shm"

# package_repos, runtime_facts, rocm_packages
ROCM_REPOS = "rocm.repos"
PROCESS_LIMITS = "process.limits"
RUNTIME_STATUS = "runtime.status"
GPU_FIRMWARE = "gpu.firmware"
ROCM_OPT_LINK = "rocm.opt_link"
ROCM_PACKAGES = "rocm.packages"

# stage_results: what the GPU stages measured; STAGE_FACTS below: what a stage's interpret step derives from it.
BENCH_RESULTS = "bench.results"
COLLECTIVES_RESULTS = "collectives.results"
GPU_KERNELS = "gpu.kernels"
BENCH_FIGURES = "bench.figures"

# torch_facts: the target interpreter and torch.* (but torch.family, torch_family's).
TORCH_PREFIX = "torch."
PYTHON_TARGET = "python.target"
PYTHON_TARGET_VERSION = "python.target.version"
TORCH_PROBE = "torch.probe"
TORCH_INSTALLED = "torch.installed"
TORCH_IMPORT_ERROR = "torch.import_error"
TORCH_VERSION = "torch.version"
TORCH_FILE = "torch.file"
TORCH_HIP = "torch.hip"
TORCH_CUDA_VERSION = "torch.cuda_version"
TORCH_FLAVOUR = "torch.flavour"
TORCH_NUMPY = "torch.numpy"
TORCH_BYTECODE = "torch.bytecode"
TORCH_AVAILABLE = "torch.available"
TORCH_AVAILABLE_ERROR = "torch.available_error"
TORCH_WARNINGS = "torch.warnings"
TORCH_THREADS = "torch.threads"
TORCH_DEVICE_COUNT = "torch.device_count"
TORCH_ARCH_LIST = "torch.arch_list"
TORCH_DEVICES = "torch.devices"
TORCH_LIBRARIES = "torch.libraries"
TORCH_HOST = "torch.host"
TORCH_FAMILY = "torch.family"  # torch_family

# windows_dlls, windows_env
WINDOWS_DLLS = "windows.dlls"
WINDOWS_ENV_SCOPES = "windows.env.scopes"
WINDOWS_PATH = "windows.path"

# windows_hip
WINDOWS_DRIVER = "windows.driver"
WINDOWS_HIP_HIP_PATH = "windows.hip.hip_path"
WINDOWS_HIP_INSTALLS = "windows.hip.installs"
WINDOWS_HIPINFO = "windows.hipinfo"
WINDOWS_ROCM_SDK = "windows.rocm_sdk"

# windows_layer
WINDOWS_DRIVER_NEEDS = "windows.driver_needs"
WINDOWS_DRIVER_RELEASE = "windows.driver_release"
WINDOWS_OS = "windows.os"
WINDOWS_VC_RUNTIME = "windows.vc_runtime"

# windows_vs
WINDOWS_CXX_HEADERS = "windows.cxx_headers"
WINDOWS_DEVSHELL = "windows.devshell"
WINDOWS_SDK_UCRT = "windows.sdk.ucrt"
WINDOWS_VS = "windows.vs"

# Each fact's owner. A key ending in ".*" stands for every key under it.
FACTS = {
    RUN_ENV: "run_env", ENV_KNOWN: "run_env",
    PLATFORM_PREFIX + "*": "platform_facts", GPU_PCI: "platform_facts",
    ROCM_LIBRARIES: "amd_derived", ROCM_PATHS_KEY: "amd_derived", SHELL_RC_LINES: "amd_derived", LOG_KEY: "amd_derived",
    MIOPEN_DIRS_KEY: "amd_derived",
    AMDGPU_ARCH_TARGETS: "amd_tools", HIP_CONFIG: "amd_tools", HIP_VERSION: "amd_tools",
    ROCM_AGENT_ENUMERATOR_TARGETS: "amd_tools", ROCMINFO_AGENTS: "amd_tools", ROCMINFO_STATUS: "amd_tools",
    SMI_DEVICES: "amd_tools", SMI_PROBLEMS: "amd_tools", TOOLS_GARBLED: "amd_tools",
    DEVICE_MAP_KEY: "container_security", LINUX_SECURITY: "container_security",
    LINUX_AMDGPU_BLOCKS: "driver_layer", LINUX_AMDGPU_MODINFO: "driver_layer", LINUX_DKMS_AMDGPU: "driver_layer",
    LINUX_FIRMWARE: "driver_layer", LINUX_KERNEL_LOG: "driver_layer", LINUX_SECURE_BOOT: "driver_layer",
    LINUX_AMDGPU_DRIVER: "driver_release",
    GPU_INVENTORY: "gpu_inventory", GPU_INVENTORY_DISAGREEMENTS: "gpu_inventory",
    GPU_LIVE: "gpu_live",
    GPU_TARGETS: "gpu_targets",
    LINUX_GPU_EVENTS: "kernel_events", LINUX_KERNEL_LOG_ACCESS: "kernel_events",
    KFD_NODES: "kfd", LINUX_AMDGPU_MODULE: "kfd", LINUX_DEVICE_ACCESS: "kfd", LINUX_GROUPS: "kfd",
    LINUX_KERNEL_CMDLINE: "kfd",
    LOG_MACHINE: "log_facts", PASTE_SUMMARY: "paste_facts",
    NVIDIA_DRIVER: "nvidia_driver",
    ONLINE_INDEX_KEY: "online_facts",
    OS_CONTAINER: "os_layer", OS_GLIBC: "os_layer", OS_KERNEL: "os_layer", OS_RELEASE_FACT: "os_layer",
    OS_SHM: "os_layer",
    ROCM_REPOS: "package_repos",
    PROCESS_LIMITS: "runtime_facts", RUNTIME_STATUS: "runtime_facts",
    GPU_FIRMWARE: "rocm_packages", ROCM_OPT_LINK: "rocm_packages", ROCM_PACKAGES: "rocm_packages",
    BENCH_RESULTS: "stage_results", COLLECTIVES_RESULTS: "stage_results", GPU_KERNELS: "stage_results",
    PYTHON_TARGET: "torch_facts", PYTHON_TARGET_VERSION: "torch_facts", TORCH_PREFIX + "*": "torch_facts",
    TORCH_FAMILY: "torch_family",
    WINDOWS_DLLS: "windows_dlls",
    WINDOWS_ENV_SCOPES: "windows_env", WINDOWS_PATH: "windows_env",
    WINDOWS_DRIVER: "windows_hip", WINDOWS_HIP_HIP_PATH: "windows_hip", WINDOWS_HIP_INSTALLS: "windows_hip",
    WINDOWS_HIPINFO: "windows_hip", WINDOWS_ROCM_SDK: "windows_hip",
    WINDOWS_DRIVER_NEEDS: "windows_layer", WINDOWS_DRIVER_RELEASE: "windows_layer", WINDOWS_OS: "windows_layer",
    WINDOWS_VC_RUNTIME: "windows_layer",
    WINDOWS_CXX_HEADERS: "windows_vs", WINDOWS_DEVSHELL: "windows_vs", WINDOWS_SDK_UCRT: "windows_vs",
    WINDOWS_VS: "windows_vs",
}
# Facts a GPU stage's interpret step sets, once per run, from the result the stage provides (fact -> stage name).
# gpu/bench/stage.py sets BENCH_FIGURES: each figure, the card's expected figure, what was seen around it.
STAGE_FACTS = {BENCH_FIGURES: "bench"}
# Facts derived from another: missing whenever it is, so a check that requires both is said to lack only that one.
DERIVED_FROM = {GPU_TARGETS: GPU_INVENTORY, BENCH_FIGURES: BENCH_RESULTS}

def owner(key: str) -> Optional[str]:
    """The interpreter that sets `key`: its own entry, else the longest "prefix.*" entry above it."""
    if key in FACTS:
        return FACTS[key]
    parts = key.split(".")
    for end in range(len(parts) - 1, 0, -1):
        found = FACTS.get(".".join(parts[:end]) + ".*")
        if found:
            return found
    return None
