"""What libprofwrap.so puts in the program's global scope: its wrappers and intended entry points, nothing
else, and nothing through its dependencies.

- Every symbol it exports (defined, global or weak, default or protected visibility) is a function of a
  library it wraps (libc, the CUDA libraries of the contract snapshot, libcupti, MPI, liburing) or an intended
  entry point (NVTX's InitializeInjectionNvtx2).
- It needs nothing but the C library: a dependency's exports would sit in the global scope too (libunwind's
  _Unwind_* and backtrace did).
- In a profiled Python that loads libstdc++ (as PyTorch does), `_Unwind_RaiseException` binds to libgcc_s, as
  without profwrap: C++ exceptions are unwound by the same library (LD_DEBUG=bindings with LD_BIND_NOW)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

LIB = os.path.join(BIN_DIR, "libprofwrap.so")
HERE = os.path.dirname(os.path.abspath(__file__))
CONTRACT = os.path.join(HERE, "..", "contract", "cuda-imports.txt")
ENTRY_POINTS = {"InitializeInjectionNvtx2"}
SYSTEM_LIBS = {"libc.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libm.so.6"}


def exported(path):
    """Names a library exports for binding: defined, GLOBAL or WEAK, DEFAULT or PROTECTED."""
    out = subprocess.run(["readelf", "-W", "--dyn-syms", path], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(":").isdigit():
            continue
        bind, vis, ndx, name = f[4], f[5], f[6], f[7]
        if ndx != "UND" and bind in ("GLOBAL", "WEAK") and vis in ("DEFAULT", "PROTECTED"):
            names.add(name.split("@")[0])
    return names


def first(paths):
    return next((p for p in paths if os.path.exists(p)), None)


def test():
    libc = first(["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6"])
    check(libc is not None, "no libc.so.6 found")
    allowed = exported(libc) | ENTRY_POINTS
    with open(CONTRACT) as f:
        allowed |= {l.split()[2] for l in f if l.startswith("export ")}
    ours = exported(LIB)
    cupti = first(["/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"])
    mpi = first(["/usr/lib/x86_64-linux-gnu/libmpi.so.40", "/usr/lib/x86_64-linux-gnu/libmpi.so"])
    uring = first(["/usr/lib/x86_64-linux-gnu/liburing.so.2", "/usr/lib64/liburing.so.2"])
    # where the real library is not installed, its prefix stands for it (the wrappers of each are few)
    allowed |= exported(cupti) if cupti else {n for n in ours if n.startswith("cupti")}
    allowed |= exported(mpi) if mpi else {n for n in ours if n.startswith("MPI_")}
    # liburing's set-up functions; io_uring_queue_init_mem is liburing 2.5's
    allowed |= exported(uring) | {"io_uring_queue_init_mem"} if uring else {n for n in ours if n.startswith("io_uring_")}
    check_eq(sorted(ours - allowed), [], "libprofwrap.so exports that wrap nothing")

    dyn = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
    check_eq(sorted(needed - SYSTEM_LIBS), [], "libprofwrap.so's dependencies beyond the C library")

    code = "import ctypes; ctypes.CDLL('libstdc++.so.6')"
    env = dict(os.environ, LD_DEBUG="bindings", LD_BIND_NOW="1")
    r, _ = profile([sys.executable, "-c", code], "OUT", env=env)
    binds = [l for l in r.err.splitlines() if "`_Unwind_RaiseException'" in l and "libstdc++" in l.split("to")[0]]
    check(binds, "no binding of libstdc++'s _Unwind_RaiseException in LD_DEBUG's output:\n%s", r.err[-2000:])
    for line in binds:
        target = line.split(" to ", 1)[1].split(":")[0]
        # under `make test SAN=1` AddressSanitizer's runtime intercepts it by design, in front of libgcc_s
        check("libgcc_s" in target or "libasan" in target,
              "libstdc++'s _Unwind_RaiseException binds to %s, not libgcc_s:\n%s", target, line)


main(test)
