"""Kernel names across a module unload (tests/workloads/cuda_module_unload.c on the fake libraries): the first
module's kernel runs, the module is unregistered, and CUPTI gives its kernel's name string to the next module's
kernel. profwrap converts what CUPTI holds before the unload goes through, and from then on interns names by
their text, not by CUPTI's pointer: each kernel keeps its own name and count, in CUPTI's kernels and in the
launches alike."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403


def test():
    fakes_dir()
    prog = workload("cuda_module_unload")
    plain = run([prog])
    check_eq(plain.rc, 0, "the workload's exit status without profwrap\n" + plain.describe())
    expect = {e[1]: int(e[2]) for e in parse_expect(plain.out) if e[0] == "kernel"}
    r, rep = profile([prog], "OUT")
    ran = {}
    for k in rep["kernels"]:
        ran[k["name"]] = ran.get(k["name"], 0) + k["count"]
    check_eq(ran, expect, "kernels CUPTI recorded, by name")
    launched = {k["name"]: k["launches"] for k in rep["kernels_launched"]}
    check_eq(launched, expect, "launches, by kernel name")


main(test)
