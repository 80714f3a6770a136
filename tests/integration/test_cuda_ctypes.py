"""A Python program that loads the (fake) CUDA runtime itself, after start, with ctypes and RTLD_LOCAL: the
library is in no scope RTLD_NEXT sees, and ctypes finds each function with dlsym on its own handle. The
calls are recorded all the same, with exact counts and bytes; and a lookup in the global scope still fails
as it does without profwrap (the runtime is private to its handle)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

SCRIPT = r'''
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL)
ptrs = []
for size in (4096, 8192, 12288):
    p = ctypes.c_void_p()
    rc = lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size))
    assert rc == 0, rc
    ptrs.append(p)
host = ctypes.create_string_buffer(4096)
for i in range(2):
    rc = lib.cudaMemcpy(ptrs[0], host, ctypes.c_size_t(1000 + i), 1)  # cudaMemcpyHostToDevice
    assert rc == 0, rc
huge = ctypes.c_void_p()
print("oom", lib.cudaMalloc(ctypes.byref(huge), ctypes.c_size_t(1 << 60)))
for p in ptrs:
    assert lib.cudaFree(p) == 0
print("sync", lib.cudaDeviceSynchronize())
try:
    ctypes.CDLL(None).cudaMalloc
    print("global: found")
except AttributeError:
    print("global: not found")
'''


def test():
    lib = os.path.join(fakes_dir(), "libcudart.so.13")
    with open("prog.py", "w") as f:
        f.write(SCRIPT)
    plain = run([PYTHON, "prog.py", lib])
    check_eq(plain.rc, 0, "the script without profwrap\n" + plain.describe())
    check("global: not found" in plain.out, "without profwrap the global scope found cudaMalloc\n" + plain.describe())
    r, rep = profile([PYTHON, "prog.py", lib], "OUT")
    check_eq(r.out, plain.out, "the script's output under profwrap vs without")
    ctx = "\ncalls:\n" + describe_calls(rep)
    check_eq(count(rep, "cudart", "cudaMalloc"), 4, "cudart.cudaMalloc count" + ctx)
    check_eq(call(rep, "cudart", "cudaMalloc")["errors"], 1, "cudart.cudaMalloc errors")
    check_eq(count(rep, "cudart", "cudaFree"), 3, "cudart.cudaFree count")
    check_eq(count(rep, "cudart", "cudaMemcpy"), 2, "cudart.cudaMemcpy count")
    check_eq(count(rep, "cudart", "cudaDeviceSynchronize"), 1, "cudart.cudaDeviceSynchronize count")
    htod = [m for m in rep["memcpy"] if m["kind"] == "HtoD"]
    check(htod, "no HtoD copies in %r", rep["memcpy"])
    check_eq((htod[0]["count"], htod[0]["bytes"]), (2, 2001), "HtoD (count, bytes)")
    check_eq(rep["allocations"]["device_peak_bytes"], 4096 + 8192 + 12288, "device_peak_bytes")
    oom = [e for e in rep["gpu_errors"] if e["call"] == "cudaMalloc"]
    check(oom and oom[0]["code"] == 2, "the failed cudaMalloc is not cudaErrorMemoryAllocation (2): %r",
          rep["gpu_errors"])


main(test)
