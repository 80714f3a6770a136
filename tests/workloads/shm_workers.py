"""DataLoader-like workers that hold POSIX shared memory: forks N workers; each creates a segment of MIB MiB
with multiprocessing.shared_memory, writes every byte, tells the parent, and waits until all have done so
(so they hold it at once), then unlinks it and exits 0. A worker killed by SIGBUS (a full /dev/shm) shows
in the parent's output.

    shm_workers.py N MIB

Prints one line per worker, `worker I: exit 0` or `worker I: signal S`, in order."""
import os
import select
import sys
from multiprocessing import shared_memory


def worker(size, ready, go):
    shm = shared_memory.SharedMemory(create=True, size=size)
    shm.buf[:size] = b"\x01" * size
    os.write(ready, b"r")
    os.read(go, 1)
    shm.close()
    shm.unlink()
    os._exit(0)


def died(pid):
    """Whether the child has ended (still waitable afterwards)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def main():
    n, mib = int(sys.argv[1]), int(sys.argv[2])
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            worker(mib << 20, ready_w, go_r)
        pids.append(pid)
    got = 0
    while got < n and not any(died(p) for p in pids):
        if select.select([ready_r], [], [], 0.1)[0]:
            got += len(os.read(ready_r, n - got))
    os.write(go_w, b"g" * n)
    for i, pid in enumerate(pids):
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            print("worker %d: signal %d" % (i, os.WTERMSIG(status)))
        else:
            print("worker %d: exit %d" % (i, os.WEXITSTATUS(status)))


main()
