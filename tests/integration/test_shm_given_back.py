"""/dev/shm given back: a thread's lane memory returns to /dev/shm once the thread has ended and the collector
has read the lane, so a program that later needs the space finds it. In a mount namespace with a 64 MiB tmpfs
on /dev/shm (Docker's default), 16 threads each write 200,000 times (their 2 MiB lanes fill) and end; then the
program waits until /dev/shm has 40 MiB free (at most 30 s) and takes 40 MiB of its own (shm_open +
posix_fallocate), as DataLoader workers pass batches. Before, profwrap kept the ended threads' 32 MiB and the
program's 40 MiB never fit. Also: every write is counted (events + drops), and the report states the most
/dev/shm the process's segment held (more than the 16 lanes' worth, less than the tmpfs)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

THREADS, WRITES = 16, 200000
MOUNT = 'mount -t tmpfs -o size=64m profwrap-test /dev/shm && exec "$@"'

SOURCE = r"""
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
static int writes;
static void *writer(void *arg)
{
	int fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < writes; i++)
		if (write(fd, "x", 1) != 1)
			abort();
	close(fd);
	return arg;
}
int main(int argc, char **argv)
{
	int threads = atoi(argv[1]);
	writes = atoi(argv[2]);
	unsigned long long want = 40ull << 20;
	pthread_t t[64];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	struct statvfs sv;
	int waited = 0;
	while (statvfs("/dev/shm", &sv) == 0 && (unsigned long long)sv.f_bavail * sv.f_frsize < want + (1 << 20) &&
	       waited < 3000) {
		struct timespec ms10 = {0, 10000000};
		nanosleep(&ms10, NULL);
		waited++;
	}
	char name[64];
	snprintf(name, sizeof name, "/own-%d", (int)getpid());
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	int rc = fd < 0 ? -1 : posix_fallocate(fd, 0, (off_t)want);
	shm_unlink(name);
	printf("%s\n", rc == 0 ? "40 MiB taken" : "no room for 40 MiB");
	return rc == 0 ? 0 : 3;
}
"""


def in_small_shm(args):
    return run(["unshare", "--mount", "--propagation", "private", "sh", "-c", MOUNT, "sh"] + list(args),
               timeout=180)


def test():
    if not shutil.which("unshare"):
        skip("no unshare: cannot give the test a /dev/shm of its own")
    probe = in_small_shm(["true"])
    if probe.rc != 0:
        skip("cannot mount a tmpfs on /dev/shm in a mount namespace (%s)" % probe.err.strip()[:200])
    prog = build_c("shm_after_threads", SOURCE, ldflags=["-lpthread"])
    cmd = [prog, str(THREADS), str(WRITES)]
    plain = in_small_shm(cmd)
    check_eq((plain.rc, plain.out), (0, "40 MiB taken\n"), "without profwrap (the test's premise)\n" + plain.describe())
    r = in_small_shm([PROFWRAP, "-q", "-o", "OUT", "--"] + cmd)
    check_eq((r.rc, r.out), (0, "40 MiB taken\n"), "under profwrap\n" + r.describe())
    rep = load_report("OUT")
    writes = count(rep, "io", "write")
    check_eq(writes + rep["dropped_events"] >= THREADS * WRITES, True,
             "writes %d + dropped %d cover the %d made" % (writes, rep["dropped_events"], THREADS * WRITES))
    peak = rep["profwrap_cost"]["shm_peak_bytes"]
    check_range(peak, 2 << 20, 64 << 20, "profwrap_cost.shm_peak_bytes")
    check_eq(rep["profwrap_cost"]["shm_peak_pid"], rep["processes"][0]["pid"], "profwrap_cost.shm_peak_pid")
    note("16 threads ended, then 40 MiB of the program's own fit; profwrap's segment held at most %.1f MiB"
         % (peak / 1048576.0))


main(test)
