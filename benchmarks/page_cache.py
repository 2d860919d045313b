"""How much of torch's GPU libraries (torch's lib folder and the `nvidia` wheels' beside it, the collective
libraries left out) the kernel's page cache holds, and a way to drop them from it, so a warm machine can be measured
as a freshly started one's disk would serve it. Linux only; dropping needs no privileges (clean pages of files no
process maps).

    python3 benchmarks/page_cache.py resident|evict
"""

import ctypes
import ctypes.util
import glob
import mmap
import os
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def library_files():
    """The shared libraries of torch's lib folder and of the `nvidia` wheels on this interpreter's path."""
    found = set()
    for entry in filter(None, sys.path):
        for pattern in (("torch", "lib"), ("nvidia", "*", "lib"), ("nvidia", "*", "*", "lib")):
            for path in glob.glob(os.path.join(entry, *pattern, "*.so*")):
                if "nccl" not in os.path.basename(path) and os.path.isfile(path):
                    found.add(os.path.realpath(path))
    return sorted(found)


def resident_bytes(path, libc):
    """Bytes of `path` in the page cache, from mincore(2) over a read-only mapping."""
    size = os.path.getsize(path)
    if not size:
        return 0
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    fd = os.open(path, os.O_RDONLY)
    try:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        pages = (size + PAGE - 1) // PAGE
        vector = (ctypes.c_ubyte * pages)()
        libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vector)
        libc.munmap(ctypes.c_void_p(address), ctypes.c_size_t(size))
        return sum(1 for page in vector if page & 1) * PAGE
    finally:
        os.close(fd)


def main(action):
    files = library_files()
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    total = sum(os.path.getsize(f) for f in files)
    if action == "evict":
        for path in files:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    held = sum(resident_bytes(f, libc) for f in files)
    print(f"page cache ({action}): {len(files)} libraries, {total / 1e6:.0f} MB, resident {held / 1e6:.0f} MB "
          f"({100 * held / max(total, 1):.0f}%)")


if __name__ == "__main__":
    main(sys.argv[1])
