"""Spawn cost from a process of a given size: holds MIB MiB of touched memory, then starts N short children
with subprocess.run (CPython's _posixsubprocess: vfork where it can) and prints `spawn.py: ms_per_spawn=X`. A fork
copies the parent's page tables, so its cost grows with MIB; a vfork's does not.

    spawn.py MIB N"""
import subprocess
import sys
import time

mib, n = int(sys.argv[1]), int(sys.argv[2])
held = bytearray(mib << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
true = "/bin/true"
subprocess.run([true])  # the first spawn loads what the others reuse
t = time.monotonic()
for _ in range(n):
    subprocess.run([true])
print("spawn.py: ms_per_spawn=%.3f" % ((time.monotonic() - t) / n * 1e3))
