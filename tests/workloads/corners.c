/* Process-model corners, one mode per case (tests/integration/test_process_corners.py). Each mode prints on
 * stdout only what is the same with and without a profiler (exit codes, descriptor numbers, what it did), and
 * on stderr one line "facts {JSON}" with the figures that vary from run to run (how many writes threads made
 * while running flat out). Files are written under DIR, one per process, so that a report's files[] gives
 * every process's writes exactly.
 *
 *   corners writes N PATH CODE        open PATH, N writes of 16 bytes, close, exit(CODE)
 *   corners fork_threads T F K DIR    T threads write to /dev/null, malloc and dladdr flat out while the main thread
 *                                     forks F children; child i writes K times to DIR/fork-i and exits 10+i
 *                                     (exit() for odd i, _exit() for even); a child not done in 20 s is killed
 *   corners vfork K DIR               vfork + exec of `writes K DIR/vfork-exec 21`; vfork + _exit(22) after
 *                                     a write to the parent's memory, which a real vfork shares
 *   corners spawn K DIR               posix_spawn `writes K DIR/spawn 23`, posix_spawnp `writes K DIR/spawnp 24`
 *   corners daemon K DIR              daemon(0, 0), then K writes to DIR/daemon, DIR/daemon.done, exit(0)
 *   corners clone_vm W DIR            clone(CLONE_VM|CLONE_THREAD|..., no CLONE_SETTLS): the clone writes W
 *                                     times to DIR/clone-child while the creating thread writes W times to
 *                                     DIR/clone-parent
 *   corners clone_fork K DIR [threaded]  clone(SIGCHLD) without CLONE_VM, on a 16 KiB stack: the child
 *                                     writes K times to DIR/clone-fork and returns 25 from its function
 *                                     (threaded: a thread has run and ended before); first a clone()
 *                                     without a stack, which fails
 *   corners clone_vfork K DIR         clone(CLONE_VM|CLONE_VFORK|SIGCHLD) + exec of `writes K DIR/clone-vfork 26`
 *   corners dlclose LIB N             dlopen LIB (the CUDA runtime), N rounds of calls, dlclose, keep its old
 *                                     address taken, dlopen again, N rounds again, dlclose
 *   corners env MODE K DIR [LIB]      set LD_PRELOAD as MODE says (unset, empty, other, replace: LIB, envp: an
 *                                     environment of its own), fork + exec `writes K DIR/env-MODE 27`, then K
 *                                     writes of its own to DIR/env-parent
 *   corners closeall MODE K DIR       close every descriptor from 3 (MODE: loop, closefrom, close_range, proc:
 *                                     after counting those fcntl(F_GETFD) and dup() take, dup2, dup3) and then
 *                                     K writes to DIR/after-MODE; MODE fork_exec: a child closes everything
 *                                     and execs `writes K DIR/after-fork-exec 28`
 *   corners waitfile PATH SECS        exit 0 once PATH exists, 1 after SECS seconds
 *   corners exitcode CODE             print a line, exit(CODE) */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *self; /* this program, for exec */
static char line16[16] = "0123456789abcde\n";

static void die(const char *what)
{
	fprintf(stderr, "corners: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long arg_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < 0) {
		fprintf(stderr, "corners: bad number %s\n", s);
		exit(2);
	}
	return v;
}

static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
	if (snprintf(buf, size, "%s/%s", dir, name) >= (int)size) {
		fprintf(stderr, "corners: path too long\n");
		exit(2);
	}
}

/* open, n writes of 16 bytes, close: 2 + n wrapped calls. Returns the descriptor open gave, -1 on failure. */
static int write_file(const char *path, long n)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	for (long i = 0; i < n; i++)
		if (write(fd, line16, sizeof line16) != (ssize_t)sizeof line16) {
			close(fd);
			return -1;
		}
	close(fd);
	return fd;
}

/* Waits for pid up to secs seconds; kills it when it does not end. Returns its exit code, 128+signal, or -1
 * when it hung. */
static int wait_child(pid_t pid, int secs)
{
	struct timespec tick = {0, 1000000};
	for (long waited = 0; waited < secs * 1000L; waited++) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0)
			die("waitpid");
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void exec_writes(long k, const char *path, int code)
{
	char n[32], c[16];
	snprintf(n, sizeof n, "%ld", k);
	snprintf(c, sizeof c, "%d", code);
	char *argv[] = {(char *)self, "writes", n, (char *)path, c, NULL};
	execv(self, argv);
	_exit(127);
}

/* ---- fork while other threads write flat out ---- */

static atomic_int stop_threads;
static atomic_long thread_writes;
static atomic_int threads_started;
static int devnull;

static void *flat_out(void *unused)
{
	(void)unused;
	char buf[64] = {0};
	long n = 0;
	atomic_fetch_add(&threads_started, 1);
	while (!atomic_load_explicit(&stop_threads, memory_order_relaxed)) {
		if (write(devnull, buf, sizeof buf) != (ssize_t)sizeof buf)
			die("write /dev/null");
		void *p = malloc(64 + (size_t)(n & 1023)); /* the allocator's lock, held at times when fork comes */
		if (!p)
			die("malloc");
		free(p);
		Dl_info info;
		if ((n & 15) == 0 && !dladdr((void *)flat_out, &info)) /* and the loader's */
			die("dladdr");
		n++;
	}
	atomic_fetch_add(&thread_writes, n);
	return NULL;
}

static int mode_fork_threads(long threads, long forks, long k, const char *dir)
{
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0)
		die("/dev/null");
	pthread_t tids[64];
	if (threads < 1 || threads > 64)
		return 2;
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, flat_out, NULL))
			die("pthread_create");
	while (atomic_load(&threads_started) < threads)
		sched_yield();
	int hung = 0;
	for (long i = 0; i < forks; i++) {
		fflush(stdout); /* a child that calls exit() flushes what it inherited */
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			char path[4096], name[32];
			snprintf(name, sizeof name, "fork-%ld", i);
			path_in(path, sizeof path, dir, name);
			if (write_file(path, k) < 0)
				_exit(100);
			if (i % 2)
				exit((int)(10 + i));
			_exit((int)(10 + i));
		}
		int code = wait_child(pid, 20);
		hung += code < 0;
		printf("fork child %ld: %d\n", i, code);
	}
	atomic_store(&stop_threads, 1);
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	close(devnull);
	fprintf(stderr, "facts {\"thread_writes\": %ld}\n", atomic_load(&thread_writes));
	return hung ? 3 : 0;
}

/* ---- vfork, posix_spawn ---- */

static volatile int vfork_child_wrote;

static int mode_vfork(long k, const char *dir)
{
	char path[4096];
	path_in(path, sizeof path, dir, "vfork-exec");
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0)
		exec_writes(k, path, 21);
	if (pid < 0)
		die("vfork");
	printf("vfork exec: %d\n", wait_child(pid, 20));
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		vfork_child_wrote = 1;
		_exit(22);
	}
	if (pid < 0)
		die("vfork");
	printf("vfork _exit: %d, the child's write seen by the parent: %d\n", wait_child(pid, 20), vfork_child_wrote);
	return 0;
}

static int mode_spawn(long k, const char *dir)
{
	char path[4096], n[32], dirbuf[4096], pathvar[8192];
	snprintf(n, sizeof n, "%ld", k);
	path_in(path, sizeof path, dir, "spawn");
	char *argv[] = {(char *)self, "writes", n, path, "23", NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
	if (rc)
		return 2;
	printf("posix_spawn: %d\n", wait_child(pid, 20));
	/* posix_spawnp searches the caller's PATH: put this program's directory first */
	snprintf(dirbuf, sizeof dirbuf, "%s", self);
	char *slash = strrchr(dirbuf, '/');
	if (!slash)
		return 2;
	*slash = 0;
	snprintf(pathvar, sizeof pathvar, "%s:%s", dirbuf, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", pathvar, 1);
	char path2[4096];
	path_in(path2, sizeof path2, dir, "spawnp");
	char *argv2[] = {slash + 1, "writes", n, path2, "24", NULL};
	rc = posix_spawnp(&pid, slash + 1, NULL, NULL, argv2, environ);
	if (rc)
		return 2;
	printf("posix_spawnp: %d\n", wait_child(pid, 20));
	return 0;
}

/* ---- daemon() ---- */

static int mode_daemon(long k, const char *dir)
{
	char path[4096], tmp[4096], done[4096];
	path_in(path, sizeof path, dir, "daemon");
	path_in(tmp, sizeof tmp, dir, "daemon.tmp");
	path_in(done, sizeof done, dir, "daemon.done");
	printf("daemon starting\n");
	fflush(stdout);
	if (daemon(0, 0) < 0)
		die("daemon");
	/* the daemon: stdio is /dev/null now, its directory is / */
	if (write_file(path, k) < 0 || write_file(tmp, 0) < 0 || rename(tmp, done) < 0)
		exit(1);
	exit(0);
}

static int mode_waitfile(const char *path, long secs)
{
	struct timespec tick = {0, 5000000};
	for (long i = 0; i < secs * 200; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return 1;
}

/* ---- clone ---- */

#define CLONE_STACK (256 << 10)
#define SMALL_STACK (16 << 10)

struct clone_job {
	int fd;
	long n;
	const char *path;
	atomic_int ok;
};

static int clone_writer(void *arg)
{
	struct clone_job *j = arg;
	long good = 0;
	for (long i = 0; i < j->n; i++)
		good += write(j->fd, line16, sizeof line16) == (ssize_t)sizeof line16;
	atomic_store(&j->ok, good == j->n);
	return 0;
}

static void *clone_stack(size_t size)
{
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		die("mmap");
	return (char *)stack + size;
}

static int mode_clone_vm(long w, const char *dir)
{
	char child_path[4096], parent_path[4096];
	path_in(child_path, sizeof child_path, dir, "clone-child");
	path_in(parent_path, sizeof parent_path, dir, "clone-parent");
	struct clone_job job = {.fd = open(child_path, O_CREAT | O_TRUNC | O_WRONLY, 0600), .n = w};
	int mine = open(parent_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (job.fd < 0 || mine < 0)
		die("open");
	/* The kernel clears ctid and wakes it when the thread has gone: then its stack may be freed. */
	static _Atomic pid_t ctid;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
		    CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID;
	pid_t ptid = 0;
	void *top = clone_stack(CLONE_STACK);
	int tid = clone(clone_writer, top, flags, &job, &ptid, NULL, &ctid);
	if (tid < 0)
		die("clone");
	long good = 0;
	for (long i = 0; i < w; i++)
		good += write(mine, line16, sizeof line16) == (ssize_t)sizeof line16;
	pid_t cur;
	while ((cur = atomic_load(&ctid)) != 0)
		syscall(SYS_futex, &ctid, FUTEX_WAIT, cur, NULL, NULL, 0);
	munmap((char *)top - CLONE_STACK, CLONE_STACK);
	close(job.fd);
	close(mine);
	printf("clone_vm: child %s, creator %s\n", atomic_load(&job.ok) ? "ok" : "failed",
	       good == w ? "ok" : "failed");
	return 0;
}

static int clone_file_writer(void *arg)
{
	struct clone_job *j = arg;
	return write_file(j->path, j->n) < 0 ? 100 : 25;
}

static void *nothing(void *unused)
{
	return unused;
}

static int mode_clone_fork(long k, const char *dir, int threaded)
{
	char path[4096];
	path_in(path, sizeof path, dir, "clone-fork");
	struct clone_job job = {.path = path, .n = k};
	if (threaded) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			die("pthread");
	}
	errno = 0;
	int none = clone(clone_file_writer, NULL, SIGCHLD, &job);
	printf("clone without a stack: %d, errno %s\n", none, errno == EINVAL ? "EINVAL" : "other");
	void *top = clone_stack(SMALL_STACK);
	fflush(stdout);
	pid_t pid = clone(clone_file_writer, top, SIGCHLD, &job);
	if (pid < 0)
		die("clone");
	printf("clone_fork: %d\n", wait_child(pid, 20));
	munmap((char *)top - SMALL_STACK, SMALL_STACK);
	return 0;
}

static int clone_execer(void *arg)
{
	struct clone_job *j = arg;
	exec_writes(j->n, j->path, 26);
	return 127;
}

static int mode_clone_vfork(long k, const char *dir)
{
	char path[4096];
	path_in(path, sizeof path, dir, "clone-vfork");
	struct clone_job job = {.path = path, .n = k};
	void *top = clone_stack(SMALL_STACK);
	fflush(stdout);
	pid_t pid = clone(clone_execer, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &job);
	if (pid < 0)
		die("clone");
	printf("clone_vfork: %d\n", wait_child(pid, 20));
	munmap((char *)top - SMALL_STACK, SMALL_STACK);
	return 0;
}

/* ---- dlclose of the CUDA runtime ---- */

struct extent {
	const char *name;
	uintptr_t lo, hi;
};

static int find_extent(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct extent *e = data;
	const char *base = strrchr(info->dlpi_name, '/');
	if (!base || strcmp(base + 1, e->name) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (!e->lo || lo < e->lo)
			e->lo = lo;
		if (hi > e->hi)
			e->hi = hi;
	}
	return 1;
}

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*sync_fn)(void);

/* One round: a cudaMalloc, a copy in, a synchronisation and a free per iteration. Returns 0 when all
 * succeeded. */
static int cuda_round(void *h, long n)
{
	malloc_fn cmalloc = (malloc_fn)dlsym(h, "cudaMalloc");
	free_fn cfree = (free_fn)dlsym(h, "cudaFree");
	memcpy_fn cmemcpy = (memcpy_fn)dlsym(h, "cudaMemcpy");
	sync_fn csync = (sync_fn)dlsym(h, "cudaDeviceSynchronize");
	if (!cmalloc || !cfree || !cmemcpy || !csync)
		return 1;
	char host[256] = {1};
	int bad = 0;
	for (long i = 0; i < n; i++) {
		void *d = NULL;
		bad |= cmalloc(&d, 4096);
		bad |= cmemcpy(d, host, sizeof host, 1 /* cudaMemcpyHostToDevice */);
		bad |= csync();
		bad |= cfree(d);
	}
	return bad;
}

static int mode_dlclose(const char *lib, long n)
{
	const char *base = strrchr(lib, '/');
	struct extent e = {base ? base + 1 : lib, 0, 0};
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 2;
	printf("round 1: %s\n", cuda_round(h, n) ? "failed" : "ok");
	dl_iterate_phdr(find_extent, &e);
	if (dlclose(h))
		return 2;
	/* Where it was stays taken while it is away: a reload, when it was unloaded, must be elsewhere. */
	void *hold = NULL;
	int unloaded = dlopen(lib, RTLD_NOW | RTLD_NOLOAD) == NULL;
	if (unloaded && e.hi > e.lo)
		hold = mmap((void *)e.lo, e.hi - e.lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	else if (!unloaded)
		dlclose(h); /* the probe's reference */
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 2;
	struct extent again = {e.name, 0, 0};
	dl_iterate_phdr(find_extent, &again);
	printf("round 2: %s\n", cuda_round(h, n) ? "failed" : "ok");
	dlclose(h);
	if (hold && hold != MAP_FAILED)
		munmap(hold, e.hi - e.lo);
	fprintf(stderr, "facts {\"unloaded\": %s, \"moved\": %s}\n", unloaded ? "true" : "false",
		again.lo != e.lo ? "true" : "false");
	return 0;
}

/* ---- LD_PRELOAD changed by the program ---- */

static int mode_env(const char *mode, long k, const char *dir, const char *lib)
{
	char path[4096], name[64], n[32];
	snprintf(name, sizeof name, "env-%s", mode);
	path_in(path, sizeof path, dir, name);
	snprintf(n, sizeof n, "%ld", k);
	char *argv[] = {(char *)self, "writes", n, path, "27", NULL};
	char *own_env[] = {"PATH=/usr/bin:/bin", NULL};
	char **env = environ;
	if (strcmp(mode, "unset") == 0)
		unsetenv("LD_PRELOAD");
	else if (strcmp(mode, "empty") == 0)
		setenv("LD_PRELOAD", "", 1);
	else if (strcmp(mode, "other") == 0)
		setenv("LD_PRELOAD", "libc.so.6", 1);
	else if (strcmp(mode, "replace") == 0 && lib)
		setenv("LD_PRELOAD", lib, 1);
	else if (strcmp(mode, "envp") == 0)
		env = own_env;
	else
		return 2;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execve(self, argv, env);
		_exit(127);
	}
	if (pid < 0)
		die("fork");
	printf("env %s: child %d\n", mode, wait_child(pid, 20));
	char mine[4096];
	path_in(mine, sizeof mine, dir, "env-parent");
	return write_file(mine, k) < 0 ? 1 : 0;
}

/* ---- closing every descriptor ---- */

/* The highest descriptor number a close-everything loop goes to. */
static int fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	return rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
}

/* As Python's subprocess does when it cannot use close_range: close what /proc/self/fd lists (with a
 * profiler, its own descriptors too, which do not close). */
static void close_listed(void)
{
	int fds[4096], n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		die("opendir");
	struct dirent *de;
	while ((de = readdir(d)) && n < 4096) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* dup2/dup3 over every number of the upper range where a program's descriptors are not (the profiler keeps
 * its own there), then close them. Returns how many calls failed. */
static int dup_over(int three)
{
	int lim = fd_limit(), hi = lim < 1024 ? lim : 1024, lo = hi - 128 < 3 ? 3 : hi - 128, failed = 0;
	int src = open("/dev/null", O_RDONLY);
	if (src < 0)
		die("/dev/null");
	for (int fd = lo; fd < hi; fd++)
		failed += (three ? dup3(src, fd, O_CLOEXEC) : dup2(src, fd)) != fd;
	for (int fd = lo; fd < hi; fd++)
		failed += close(fd) < 0;
	close(src);
	return failed;
}

static int close_all(const char *mode)
{
	if (strcmp(mode, "loop") == 0) {
		int lim = fd_limit(), failed = 0;
		for (int fd = 3; fd < lim; fd++)
			failed += close(fd) < 0;
		printf("closed by loop: %d failed\n", failed);
	} else if (strcmp(mode, "closefrom") == 0) {
		closefrom(3);
		printf("closefrom\n");
	} else if (strcmp(mode, "close_range") == 0) {
		printf("close_range: %d\n", close_range(3, ~0u, 0));
	} else if (strcmp(mode, "proc") == 0) {
		int lim = fd_limit(), open_fds = 0, dups = 0;
		for (int fd = 3; fd < lim; fd++) {
			open_fds += fcntl(fd, F_GETFD) >= 0;
			int d = dup(fd);
			if (d >= 0) {
				dups++;
				close(d);
			}
		}
		close_listed();
		printf("open above 2: %d, duplicated: %d; closed as listed\n", open_fds, dups);
	} else if (strcmp(mode, "dup2") == 0 || strcmp(mode, "dup3") == 0) {
		printf("%s over the upper range: %d failed\n", mode, dup_over(mode[3] == '3'));
	} else {
		return -1;
	}
	return 0;
}

static int mode_closeall(const char *mode, long k, const char *dir)
{
	char path[4096], name[64];
	if (strcmp(mode, "fork_exec") == 0) {
		path_in(path, sizeof path, dir, "after-fork-exec");
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			closefrom(3);
			exec_writes(k, path, 28);
		}
		if (pid < 0)
			die("fork");
		printf("fork_exec: %d\n", wait_child(pid, 20));
		return 0;
	}
	if (close_all(mode) < 0)
		return 2;
	snprintf(name, sizeof name, "after-%s", mode);
	path_in(path, sizeof path, dir, name);
	int fd = write_file(path, k);
	printf("after %s: fd %d\n", mode, fd);
	int again = open("/dev/null", O_RDONLY);
	printf("next fd %d\n", again);
	close(again);
	return fd < 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc < 2) {
		fprintf(stderr, "usage: corners MODE ARGS... (see the source)\n");
		return 2;
	}
	const char *m = argv[1];
	int rc = 2;
	if (strcmp(m, "writes") == 0 && argc == 5) {
		rc = write_file(argv[3], arg_long(argv[2])) < 0 ? 100 : (int)arg_long(argv[4]);
		printf("writes %s done\n", argv[2]);
	} else if (strcmp(m, "fork_threads") == 0 && argc == 6) {
		rc = mode_fork_threads(arg_long(argv[2]), arg_long(argv[3]), arg_long(argv[4]), argv[5]);
	} else if (strcmp(m, "vfork") == 0 && argc == 4) {
		rc = mode_vfork(arg_long(argv[2]), argv[3]);
	} else if (strcmp(m, "spawn") == 0 && argc == 4) {
		rc = mode_spawn(arg_long(argv[2]), argv[3]);
	} else if (strcmp(m, "daemon") == 0 && argc == 4) {
		rc = mode_daemon(arg_long(argv[2]), argv[3]);
	} else if (strcmp(m, "waitfile") == 0 && argc == 4) {
		rc = mode_waitfile(argv[2], arg_long(argv[3]));
	} else if (strcmp(m, "clone_vm") == 0 && argc == 4) {
		rc = mode_clone_vm(arg_long(argv[2]), argv[3]);
	} else if (strcmp(m, "clone_fork") == 0 && (argc == 4 || (argc == 5 && strcmp(argv[4], "threaded") == 0))) {
		rc = mode_clone_fork(arg_long(argv[2]), argv[3], argc == 5);
	} else if (strcmp(m, "clone_vfork") == 0 && argc == 4) {
		rc = mode_clone_vfork(arg_long(argv[2]), argv[3]);
	} else if (strcmp(m, "dlclose") == 0 && argc == 4) {
		rc = mode_dlclose(argv[2], arg_long(argv[3]));
	} else if (strcmp(m, "env") == 0 && (argc == 5 || argc == 6)) {
		rc = mode_env(argv[2], arg_long(argv[3]), argv[4], argc == 6 ? argv[5] : NULL);
	} else if (strcmp(m, "closeall") == 0 && argc == 5) {
		rc = mode_closeall(argv[2], arg_long(argv[3]), argv[4]);
	} else if (strcmp(m, "exitcode") == 0 && argc == 3) {
		printf("exit code %s\n", argv[2]);
		rc = (int)arg_long(argv[2]);
	} else {
		fprintf(stderr, "corners: unknown mode or wrong arguments: %s\n", m);
	}
	fflush(stdout);
	return rc;
}
