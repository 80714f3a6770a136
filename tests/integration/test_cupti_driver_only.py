"""Which libcupti for a program of the driver API alone (tests/workloads/driver_api.c: libcuda.so.1 opened with
dlopen, as nvcc's static runtime does; no libcudart), with the fake libcuda.so.1 in a directory of its own (the
system's) and libcupti.so.13 in another (the toolkit's), both on LD_LIBRARY_PATH, no unversioned libcupti.so. libcuda.so.1's name says nothing of the CUDA
version, so profwrap looks for libcupti.so.13 then .so.12 by the loader's search; it must find the .13 there,
and record GPU activity (status recording), with the program's output unchanged."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes = fakes_dir()
    prog = workload("driver_api")
    # the driver in the system's directory, CUDA's libraries in the toolkit's
    driver, toolkit = os.path.abspath("driver"), os.path.abspath("toolkit")
    for d, names in ((driver, ("libcuda.so.1",)), (toolkit, ("libcupti.so.13", "libcudart.so.13"))):
        os.mkdir(d)
        for name in names:
            os.symlink(os.path.join(fakes, name), os.path.join(d, name))
    env = dict(os.environ, LD_LIBRARY_PATH=driver + ":" + toolkit)
    plain = run([prog], env=env)
    check_eq(plain.rc, 0, "the workload without profwrap\n" + plain.describe())
    r, rep = profile([prog], "OUT", env=env)
    check_eq(r.out, plain.out, "the program's output under profwrap vs without")
    act = rep["gpu_activity"]
    check_eq(act["status"], "recording", "GPU activity status (%r)" % act.get("not_recorded_why"))
    check_eq(os.path.basename(act["cupti_path"] or ""), "libcupti.so.13", "the libcupti profwrap loaded")


main(test)
