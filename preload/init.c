/* Start and end of the preload: configuration, the process's segment, the collector connection (starting
 * the collector in preload-only mode), thread lanes, and fork handling. Everything here runs with the
 * calling thread's guard held, so what it calls that is itself wrapped goes straight to libc. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/pw_rank.h"
#include "../common/pw_session.h"
#include "pw_gpu.h"
#include "pw_own_fds.h"
#include "pw_preload.h"

__thread struct pw_thread pw_self __attribute__((tls_model("initial-exec")));
_Atomic uint32_t pw_recording;
struct pw_seg_header *pw_seg;
struct pw_config pw_cfg;

static pthread_key_t lane_key;
static int said_passive;
static int start_argc;
static int spawning_collector; /* our own forks: their children must not start sessions (or take the lock) */
static char **start_argv;

#define PW_CONNECT_WAIT_MS 3000

void *pw_resolve(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		char msg[160];
		int n = snprintf(msg, sizeof msg, "profwrap: cannot find the real %s, aborting\n", name);
		if (n > 0)
			(void)!syscall(SYS_write, 2, msg, (size_t)n);
		abort();
	}
	return p;
}

void pw_resolve_slot(struct pw_real_slot *slot)
{
	void *p = pw_resolve(slot->name, slot->version);
	memcpy(slot->fn, &p, sizeof p);
}

void pw_resolve_all(void)
{
	extern struct pw_real_slot __start_pw_real[] __attribute__((visibility("hidden")));
	extern struct pw_real_slot __stop_pw_real[] __attribute__((visibility("hidden")));
	for (struct pw_real_slot *s = __start_pw_real; s < __stop_pw_real; s++) {
		void *cur;
		memcpy(&cur, s->fn, sizeof cur);
		if (!cur)
			pw_resolve_slot(s);
	}
}

/* One line on stderr, once per process, unless quiet. */
static void say_passive(const char *why)
{
	if (said_passive || pw_cfg.quiet)
		return;
	said_passive = 1;
	char msg[512];
	int n = snprintf(msg, sizeof msg, "profwrap: %s; process %d runs unprofiled\n", why, (int)getpid());
	if (n > 0)
		(void)!write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return dflt;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	return *end || s[0] == '-' ? dflt : (uint64_t)v;
}

/* The output and session directories. Returns 0 when a session is configured, -1 when the preload has
 * nothing to report to. */
static int config_session(struct pw_config *c)
{
	char why[300];
	const char *out = getenv(PW_ENV_OUTPUT);
	const char *sdir = getenv(PW_ENV_SESSION_DIR);
	if (out)
		snprintf(c->output, sizeof c->output, "%s", out);
	if (sdir && *sdir) {
		snprintf(c->session_dir, sizeof c->session_dir, "%s", sdir);
		return 0;
	}
	if (!out || !*out)
		return -1;
	/* %h, %p, %r, %q{VAR}: each process expands them for itself (the CLI passes an expanded path) */
	if (pw_expand_output(out, c->output, sizeof c->output, why, sizeof why) < 0) {
		if (!c->quiet)
			dprintf(2, "profwrap: %s=%s; this process is not profiled\n", PW_ENV_OUTPUT, why);
		return -1;
	}
	c->preload_only = 1;
	return pw_session_dir_for_output(c->output, c->session_dir, sizeof c->session_dir) ? -1 : 0;
}

/* Returns 0 when a session is configured, -1 when the preload has nothing to report to. A setting whose value
 * is refused takes its default: a slip in a job's environment neither leaves the job unprofiled nor harms it,
 * and costs one notice per process, which names the first value refused. */
static int config_load(void)
{
	struct pw_config *c = &pw_cfg;
	struct pw_settings set;
	char first[400] = "", why[300];
	memset(c, 0, sizeof *c);
	int refused = pw_settings_from_env(&set, getenv, 0, first, sizeof first);
	c->quiet = set.value[PW_SET_QUIET] != 0;
	c->lane_size = set.value[PW_SET_RING_SIZE];
	c->lanes = (uint32_t)set.value[PW_SET_LANES];
	c->arena_size = set.value[PW_SET_ARENA_SIZE]; /* backed as it fills: stacks take up to three quarters */
	c->domain_mask = (uint32_t)set.value[PW_SET_TRACE];
	c->follow_fork = set.value[PW_SET_FOLLOW_FORK] != 0;
	c->root_pid = pw_parse_nonneg_int(getenv("PROFWRAP_ROOT_PID"));
	c->clock = set.value[PW_SET_CLOCK] == PW_CLOCK_SETTING_TSC	  ? "tsc"
		   : set.value[PW_SET_CLOCK] == PW_CLOCK_SETTING_MONOTONIC ? "monotonic"
									   : NULL;
	c->cupti = getenv(PW_ENV_CUPTI);
	if (c->cupti && !*c->cupti)
		c->cupti = NULL;
	c->cupti_buffer_size = (set.value[PW_SET_CUPTI_BUFFER_SIZE] + 4095) & ~(uint64_t)4095;
	c->cupti_buffers = (uint32_t)set.value[PW_SET_CUPTI_BUFFERS];
	c->cupti_flush_ms = (uint32_t)set.value[PW_SET_CUPTI_FLUSH_MS];
	if (pw_capture_from_env(&c->capture, why, sizeof why) < 0 && !refused++)
		snprintf(first, sizeof first, "%s", why);
	pw_capture_describe(&c->capture, c->capture_text, sizeof c->capture_text);
	struct pw_stack_settings st;
	if (pw_stacks_from_env(&st, why, sizeof why) < 0 && !refused++)
		snprintf(first, sizeof first, "%s", why);
	c->stacks = st.mode;
	c->stack_threshold_ns = st.threshold_ns;
	c->sample_hz = st.sample_hz;
	c->capture_t0 = env_u64(PW_ENV_CAPTURE_T0, 0);
	if (!c->capture_t0)
		c->capture_t0 = pw_clock_mono_ns();
	if (config_session(c) < 0)
		return -1;
	if (refused == 1 && !c->quiet)
		dprintf(2, "profwrap: %s; the default is used\n", first);
	else if (refused && !c->quiet)
		dprintf(2, "profwrap: %s; the defaults are used for it and %d other refused setting%s\n", first,
			refused - 1, refused == 2 ? "" : "s");
	return 0;
}

static char *read_small_file(const char *path, char *buf, size_t size, ssize_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*len = 0;
	if (fd < 0)
		return NULL;
	ssize_t n, total = 0;
	while (total < (ssize_t)size && (n = read(fd, buf + total, size - (size_t)total)) > 0)
		total += n;
	close(fd);
	*len = total;
	return buf;
}

int pw_read_io(uint64_t *rchar, uint64_t *wchar)
{
	char buf[1024];
	ssize_t len;
	if (!read_small_file("/proc/self/io", buf, sizeof buf - 1, &len) || len <= 0)
		return -1;
	buf[len] = 0;
	char *r = strstr(buf, "rchar: "), *w = strstr(buf, "wchar: ");
	if (!r || !w)
		return -1;
	*rchar = strtoull(r + 7, NULL, 10);
	*wchar = strtoull(w + 7, NULL, 10);
	return (int)len;
}

/* The coverage check's window opens once the image is set up: what the exec, the loader and profwrap read
 * until now is not the program's. */
static void note_io_start(void)
{
	struct pw_seg_header *h = pw_seg;
	if (!h)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL); /* a fork child's state was just reset */
	pw_loads_baseline();
	int len = pw_read_io(&h->io_start_rchar, &h->io_start_wchar);
	if (len >= 0) {
		h->io_start_rchar += (uint64_t)len; /* this read itself, counted after its figures */
		h->io_start_valid = 1;
	}
	pw_guard_leave(guard);
}

/* What profwrap leaves free in /dev/shm for the program: a quarter of it, at least 16 MiB. A program that
 * needs more than what is left when profwrap grows may still run short, but never because profwrap took
 * the last of it. */
#define PW_SHM_KEEP_MIN (16ull << 20)

/* Whether len more bytes of fd's file system can be taken while leaving the program its share. */
static int shm_has_room(int fd, uint64_t len)
{
	struct statvfs sv;
	if (fstatvfs(fd, &sv) < 0)
		return 1; /* unknown: fallocate decides */
	uint64_t total = (uint64_t)sv.f_blocks * sv.f_frsize, avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	uint64_t keep = total / 4 > PW_SHM_KEEP_MIN ? total / 4 : PW_SHM_KEEP_MIN;
	return avail >= len + keep;
}

/* Backs [off, off+len) of the segment with memory (see segment_create), if /dev/shm has room for it beside
 * what it keeps for the program. Returns 0 or -1. */
static int back_range(uint64_t off, uint64_t len)
{
	int fd = pw_own_fd_hold(PW_OWN_SEGMENT);
	if (fd < 0)
		return -1;
	int rc = shm_has_room(fd, len) && posix_fallocate(fd, (off_t)off, (off_t)len) == 0 ? 0 : -1;
	pw_own_fd_release(PW_OWN_SEGMENT);
	return rc;
}

/* A lane is backed in steps as its head advances, so a thread that records little takes little. */
#define PW_LANE_STEP (64u << 10)
/* After /dev/shm refused a step, the thread drops its records without asking again for this long. */
#define PW_LANE_RETRY_NS 10000000ull

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sets t's limit from what its lane has backed: none once it is whole. */
static void lane_limit(struct pw_thread *t, uint64_t backed, uint64_t lane_size)
{
	t->lane_backed = backed >= lane_size ? UINT64_MAX : backed;
}

/* Backs the next step of t's own lane, unless /dev/shm refused one less than PW_LANE_RETRY_NS ago. Returns
 * 0, or -1 (counting nothing: a thread that claims a lane falls back to the shared one). */
static int lane_back_next(struct pw_thread *t)
{
	struct pw_seg_header *h = pw_seg;
	struct pw_lane *l = t->lane;
	uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
	uint64_t have = atomic_load_explicit(&l->backed, memory_order_relaxed);
	if (head + PW_LANE_SLACK <= have) {
		lane_limit(t, have, h->lane_size);
		return 0;
	}
	uint64_t now = coarse_ns();
	if (now >= t->lane_retry_at) {
		uint64_t want = (head + PW_LANE_SLACK + PW_LANE_STEP - 1) & ~(uint64_t)(PW_LANE_STEP - 1);
		if (want > h->lane_size)
			want = h->lane_size;
		uint64_t off = (uint64_t)(t->data - (uint8_t *)h);
		if (back_range(off + have, want - have) == 0) {
			atomic_store_explicit(&l->backed, (uint32_t)want, memory_order_relaxed);
			lane_limit(t, want, h->lane_size);
			return 0;
		}
		t->lane_retry_at = now + PW_LANE_RETRY_NS;
	}
	return -1;
}

/* A record that found no room in /dev/shm: one drop, on lane l. */
static void count_shm_drop(struct pw_lane *l)
{
	atomic_fetch_add_explicit(&l->dropped, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pw_seg->shm_refused, 1, memory_order_relaxed);
}

int pw_lane_grow(struct pw_thread *t)
{
	if (lane_back_next(t) == 0)
		return 0;
	count_shm_drop(t->lane);
	return -1;
}

/* The arena is backed in steps as it fills: the step that holds an entry is reserved before it is written. */
static _Atomic uint64_t arena_backed; /* arena bytes from its start known to be backed */

pw_strref pw_intern_bytes(const char *s, size_t len)
{
	struct pw_seg_header *h = pw_seg;
	if (!h || !s)
		return 0;
	pw_strref ref = pw_arena_alloc(h, len);
	if (!ref)
		return 0;
	uint64_t end = ref + pw_arena_entry_size(len);
	uint64_t backed = atomic_load_explicit(&arena_backed, memory_order_acquire);
	if (end > backed) {
		uint64_t from = backed; /* not from ref: a thread whose entry lies in between relies on this mark */
		uint64_t to = (end + PW_ARENA_STEP - 1) & ~(uint64_t)(PW_ARENA_STEP - 1);
		if (to > h->arena_size)
			to = h->arena_size;
		if (back_range(h->arena_offset + from, to - from) < 0) {
			atomic_fetch_add_explicit(&h->arena_dropped, 1, memory_order_relaxed);
			return 0;
		}
		while (backed < to && !atomic_compare_exchange_weak_explicit(&arena_backed, &backed, to,
									     memory_order_release, memory_order_acquire))
			;
	}
	pw_arena_fill(h, ref, s, len);
	return ref;
}

pw_strref pw_intern_path(const char *path)
{
	return path ? pw_intern_bytes(path, strlen(path)) : 0;
}

pw_strref pw_once(struct pw_once_slot *slots, size_t nslots, uint64_t key,
		  pw_strref (*make)(uint64_t key, const void *arg), const void *arg)
{
	/* the high bits of a multiplicative hash: addresses differ in their middle bits */
	size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32);
	for (unsigned i = 0; i < PW_ONCE_PROBES; i++) {
		struct pw_once_slot *slot = &slots[(h + i) & (nslots - 1)];
		uint64_t cur = atomic_load_explicit(&slot->key, memory_order_acquire);
		if (cur == 0 && atomic_compare_exchange_strong_explicit(&slot->key, &cur, key, memory_order_acq_rel,
									memory_order_acquire)) {
			pw_strref ref = make(key, arg);
			atomic_store_explicit(&slot->ref, ref, memory_order_release);
			return ref;
		}
		if (cur == key) {
			pw_strref ref = atomic_load_explicit(&slot->ref, memory_order_acquire);
			return ref ? ref : make(key, arg); /* being filled, or its making failed */
		}
	}
	return 0;
}

/* In a fork child, the process that forked: its parent may have exited already (daemon() does at once) and
 * the child been given to another. */
static pid_t forked_by;

/* Header fields that describe the process: pid, rank, clock origin, argv, executable, host. */
static void describe_process(struct pw_seg_header *h, enum pw_clock_kind clock)
{
	struct timespec rt;
	h->pid = getpid();
	h->ppid = forked_by ? forked_by : getppid();
	h->rank = pw_rank_detect(getenv);
	h->world_size = pw_world_size_detect(getenv);
	h->clock_kind = clock;
	h->clock0 = pw_clock_pair_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	h->start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	h->domain_mask = pw_cfg.domain_mask;

	char buf[8192];
	ssize_t len;
	if (read_small_file("/proc/self/cmdline", buf, sizeof buf, &len) && len > 0)
		h->argv_ref = pw_intern_bytes(buf, (size_t)len - (buf[len - 1] == 0));
	else if (start_argv && start_argc > 0)
		h->argv_ref = pw_intern_path(start_argv[0]);
	len = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (len > 0)
		h->exe_ref = pw_intern_bytes(buf, (size_t)len);
	if (gethostname(buf, sizeof buf - 1) == 0) {
		buf[sizeof buf - 1] = 0;
		h->host_ref = pw_intern_bytes(buf, strlen(buf));
	}
	if (pw_cfg.session_dir[0])
		h->session_ref = pw_intern_bytes(pw_cfg.session_dir, strlen(pw_cfg.session_dir));
	if (pw_cfg.output[0] == '/')
		h->output_ref = pw_intern_bytes(pw_cfg.output, strlen(pw_cfg.output));
	else if (pw_cfg.output[0] && getcwd(buf, sizeof buf) &&
		 strlen(buf) + 1 + strlen(pw_cfg.output) < sizeof buf) {
		strcat(strcat(buf, "/"), pw_cfg.output);
		h->output_ref = pw_intern_bytes(buf, strlen(buf));
	}
}

void pw_process_set_rank(int rank, int world_size)
{
	struct pw_seg_header *h = pw_seg;
	if (!h || rank < 0 || world_size < 1)
		return;
	__atomic_store_n(&h->rank, rank, __ATOMIC_RELAXED);
	__atomic_store_n(&h->world_size, world_size, __ATOMIC_RELAXED);
}

/* This process reaches no report of its own: it is named in the collector's list of those it could not take,
 * which exists while the collector runs (a process that outlived the session finds none and says nothing). */
static int note_unrecorded(enum pw_unrecorded_why why)
{
	char path[3200];
	struct pw_unrecorded u = {.magic = PW_UNRECORDED_MAGIC, .pid = getpid(), .why = why};
	if (pw_session_path(pw_cfg.session_dir, PW_SESSION_UNRECORDED, path, sizeof path))
		return -1;
	int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	u.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	u.ppid = forked_by ? forked_by : getppid();
	u.rank = pw_rank_detect(getenv);
	u.world_size = pw_world_size_detect(getenv);
	ssize_t len;
	if (read_small_file("/proc/self/cmdline", u.argv, sizeof u.argv, &len) && len > 0)
		u.argv_len = (uint32_t)(len - (len < (ssize_t)sizeof u.argv && u.argv[len - 1] == 0));
	ssize_t n = write(fd, &u, sizeof u); /* one write: the records of processes that fail at once do not mix */
	close(fd);
	return n == (ssize_t)sizeof u ? 0 : -1;
}

/* Creates, sizes and maps this process's segment; its descriptor stays open (PW_OWN_SEGMENT), for passing to
 * the collector and backing lanes later. */
static struct pw_seg_header *segment_create(char *name, size_t name_size)
{
	uint32_t header_size;
	uint64_t size = pw_seg_layout(pw_cfg.lanes + 1, pw_cfg.lane_size, pw_cfg.arena_size, &header_size);
	if (!size) {
		say_passive("invalid ring, lane or arena size");
		return NULL;
	}
	/* a random nonce: names in /dev/shm are listed to every user, and one nobody can guess cannot be taken
	 * first */
	if (pw_shm_name((int)getuid(), getpid(), pw_random_u64(), name, name_size))
		return NULL;
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		say_passive("cannot create shared memory (shm_open failed)");
		return NULL;
	}
	fd = pw_own_fd_move_high(fd);
	pw_own_fd_note(PW_OWN_SEGMENT, fd);
	/* Pages of shared memory are taken when first written, and a write to a full /dev/shm is a SIGBUS in
	 * the target. So memory is reserved before it is used: the header here, before it is written, a lane
	 * when a thread claims it, the arena step by step as it fills. */
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)size) == 0 && back_range(0, header_size) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		pw_own_fd_close(PW_OWN_SEGMENT);
		shm_unlink(name);
		/* the collector's report and its one line name it; without a collector to tell, this process says it */
		if (note_unrecorded(PW_UNRECORDED_NO_SHM) < 0)
			say_passive("cannot size, reserve or map shared memory (is /dev/shm full?)");
		return NULL;
	}
	pw_seg_init(p, pw_cfg.lanes + 1, pw_cfg.lane_size, pw_cfg.arena_size);
	return p;
}

/* Connects to the collector's socket. While its backlog is full (a burst of process starts: a shell loop, a
 * build, a pool of workers) connect waits for room, up to PW_CONNECT_WAIT_MS in all: a collector that stopped
 * accepting holds a process up no longer than that. Returns the descriptor, or -errno (-ENOENT or
 * -ECONNREFUSED: no collector listens; -EAGAIN: it did not take the connection in time). */
static int connect_socket(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path)
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	uint64_t deadline = coarse_ns() + PW_CONNECT_WAIT_MS * 1000000ull;
	int err = EAGAIN;
	for (;;) {
		uint64_t now = coarse_ns(), left_us = deadline > now ? (deadline - now) / 1000 : 0;
		struct timeval wait = {(time_t)(left_us / 1000000), (suseconds_t)(left_us % 1000000)};
		/* the wait for room in the backlog is bounded by the socket's send timeout (0 would be none) */
		if (!left_us || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait) < 0)
			break;
		if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
			err = 0;
			break;
		}
		if (errno != EINTR) { /* a signal handler ran: the time left is waited again */
			err = errno;
			break;
		}
	}
	if (err) {
		close(fd);
		return -err;
	}
	return pw_own_fd_move_high(fd);
}

/* The collector binary beside this library (build tree) or in ../bin (installed). */
static int find_collector(char *buf, size_t size)
{
	const char *env = getenv(PW_ENV_COLLECTOR);
	if (env && *env)
		return snprintf(buf, size, "%s", env) < (int)size && access(buf, X_OK) == 0 ? 0 : -1;
	Dl_info info;
	if (!dladdr((void *)find_collector, &info) || !info.dli_fname)
		return -1;
	char dir[PATH_MAX];
	if (!realpath(info.dli_fname, dir))
		return -1;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = {"profwrap-collector", "../bin/profwrap-collector",
					  "../libexec/profwrap/profwrap-collector"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
		if (snprintf(buf, size, "%s/%s", dir, rel[i]) < (int)size && access(buf, X_OK) == 0)
			return 0;
	return -1;
}

/* Starts a detached collector for this output directory (double fork, own session, no LD_PRELOAD), so a
 * launcher that kills its job's process group does not take it down before it has written. */
static void spawn_collector(const char *collector, int ready_fd)
{
	extern char **environ;
	spawning_collector = 1; /* stays set in the children, which only exec the collector */
	pid_t pid = fork();
	if (pid != 0) {
		spawning_collector = 0;
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	/* Only the pipe that says "listening" goes along: stdio to /dev/null (a launcher waiting for the job's
	 * output must not wait for the collector), none of the program's descriptors. */
	int devnull = open("/dev/null", O_RDWR);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 || dup2(ready_fd, 3) < 0)
		_exit(127);
	close_range(4, ~0u, 0);
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; env && i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[k++] = environ[i];
	char *argv[] = {(char *)collector, "--serve", "--session-dir", pw_cfg.session_dir,
			"--output", pw_cfg.output, "--detached", "--ready-fd", "3", NULL};
	execve(collector, argv, env ? env : environ);
	_exit(127);
}

#define PW_START_FAILED_RETRY_S 30

/* Whether a collector for this session failed to start in the last PW_START_FAILED_RETRY_S seconds: then the
 * job's other processes go passive at once instead of each trying again. */
static int start_failed_recently(const char *marker)
{
	struct stat st;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return stat(marker, &st) == 0 && now.tv_sec - st.st_mtime < PW_START_FAILED_RETRY_S;
}

/* Starts the collector and waits until it listens (it writes to the pipe) or gives up (end of file). */
static int start_collector(const char *collector)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	spawn_collector(collector, ready[1]);
	close(ready[1]);
	struct pollfd pfd = {ready[0], POLLIN, 0};
	char b = 0;
	int ok = poll(&pfd, 1, PW_CONNECT_WAIT_MS) == 1 && read(ready[0], &b, 1) == 1 && b == 'R';
	close(ready[0]);
	return ok ? 0 : -1;
}

/* Preload-only mode: connect to the node's collector for this output directory, starting it if none runs.
 * The lock makes sure only one process of the job starts it. A fork child never starts one (it must not
 * wait inside fork): its parent's collector is there, or the child runs unprofiled. */
static int connect_or_start_collector(const char *sock, int in_fork_child)
{
	int fd = connect_socket(sock);
	/* a collector that is there but busy is not replaced: a second one would take over its socket */
	if (fd >= 0 || !pw_cfg.preload_only || in_fork_child || (fd != -ENOENT && fd != -ECONNREFUSED))
		return fd;
	char base[3072], lock[3200], failed[3200], collector[PATH_MAX];
	if (pw_session_base(base, sizeof base) || pw_private_dir(base) || pw_private_dir(pw_cfg.session_dir) ||
	    pw_session_path(pw_cfg.session_dir, "lock", lock, sizeof lock) ||
	    pw_session_path(pw_cfg.session_dir, "start-failed", failed, sizeof failed) ||
	    start_failed_recently(failed))
		return -ENOENT;
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0)
		return -ENOENT;
	flock(lfd, LOCK_EX);
	fd = connect_socket(sock);
	if ((fd == -ENOENT || fd == -ECONNREFUSED) && !start_failed_recently(failed)) {
		if (find_collector(collector, sizeof collector) == 0 && start_collector(collector) == 0)
			fd = connect_socket(sock);
		if (fd == -ENOENT || fd == -ECONNREFUSED)
			close(open(failed, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
	}
	close(lfd);
	return fd;
}

static int send_hello(int sock, const char *shm_name, int shm_fd)
{
	struct pw_hello hello = {.magic = PW_HELLO_MAGIC, .version = PW_FORMAT_VERSION, .pid = getpid()};
	snprintf(hello.shm_name, sizeof hello.shm_name, "%s", shm_name);
	struct iovec iov = {&hello, sizeof hello};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &shm_fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof hello ? 0 : -1;
}

/* Records what every descriptor open at start refers to (a forked worker reads files its parent opened;
 * stdin/stdout are named too), so the report can name the files their reads and writes go to. */
#define PW_FD_INFO_MAX 1024
static void note_inherited_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int own = dirfd(d), noted = 0;
	struct dirent *de;
	while ((de = readdir(d)) && noted < PW_FD_INFO_MAX) {
		int fd = pw_parse_nonneg_int(de->d_name);
		if (fd < 0 || fd == own || pw_own_fd_number(fd))
			continue;
		char link[64], target[1024];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		uint64_t now = pw_clock_ticks();
		pw_emit_call(PW_EV_FD_INFO, now, now, 0, (uint64_t)fd, pw_intern_bytes(target, (size_t)n), 0);
		noted++;
	}
	closedir(d);
}

/* Sets up this process's segment and connection; leaves the preload passive on any failure. */
static void session_start(int in_fork_child)
{
	char sock[3200], name[PW_SHM_NAME_MAX];
	if (!pw_cfg.follow_fork && pw_cfg.root_pid > 0 && pw_cfg.root_pid != getpid())
		return;
	enum pw_clock_kind clock = pw_clock_init(pw_cfg.clock);
	if (pw_session_path(pw_cfg.session_dir, "sock", sock, sizeof sock)) {
		say_passive("session path too long");
		return;
	}
	int fd = connect_or_start_collector(sock, in_fork_child);
	if (fd == -EAGAIN) {
		if (note_unrecorded(PW_UNRECORDED_BUSY) < 0)
			say_passive("the collector did not take this process in time");
		return;
	}
	if (fd < 0) {
		/* Under the CLI this is a process that outlived the session (or another user's, which the session's
		 * socket keeps out): nothing to say on the program's stderr. */
		if (pw_cfg.preload_only)
			say_passive("no collector is listening");
		return;
	}
	struct pw_seg_header *h = segment_create(name, sizeof name);
	if (!h) {
		close(fd);
		return;
	}
	pw_seg = h;
	describe_process(h, clock);
	if (send_hello(fd, name, pw_own_fd_get(PW_OWN_SEGMENT)) < 0) {
		close(fd);
		pw_own_fd_close(PW_OWN_SEGMENT);
		munmap(h, h->segment_size);
		shm_unlink(name);
		pw_seg = NULL;
		if (note_unrecorded(PW_UNRECORDED_BUSY) < 0)
			say_passive("the collector did not take this process");
		return;
	}
	pw_own_fd_note(PW_OWN_COLLECTOR, fd);
	pw_cwd_note(); /* a fork child's pw_cwd names an entry of its parent's arena */
	atomic_store_explicit(&pw_recording, pw_cfg.domain_mask, memory_order_relaxed);
	pw_capture_start(in_fork_child);
	pw_cost_note();
	pw_stacks_start();
	note_inherited_fds();
}

static void lane_release(void *unused)
{
	(void)unused;
	struct pw_thread *t = &pw_self;
	pw_sample_thread_end(t);
	pw_pyfn_thread_end();
	pw_py_thread_end();
	if (t->lane && !t->shared)
		atomic_store_explicit(&t->lane->owner, 0, memory_order_release);
	t->lane = NULL;
}

void pw_thread_at_end(void)
{
	pthread_setspecific(lane_key, (void *)1);
}

/* Claims lane i for t if no thread owns it (and, with drained_only, the collector has emptied it), backing
 * its first step. Returns 0 when claimed, 1 when not free, -1 when /dev/shm has no room for it. */
static int claim_lane(struct pw_thread *t, struct pw_seg_header *h, uint32_t i, int drained_only)
{
	struct pw_lane *l = &pw_seg_lanes(h)[i];
	uint32_t free_owner = 0;
	if (atomic_load_explicit(&l->owner, memory_order_relaxed) != 0 ||
	    (drained_only && atomic_load_explicit(&l->head, memory_order_relaxed) !=
				     atomic_load_explicit(&l->tail, memory_order_relaxed)) ||
	    !atomic_compare_exchange_strong_explicit(&l->owner, &free_owner, t->tid, memory_order_acquire,
						     memory_order_relaxed))
		return 1;
	t->lane = l;
	t->data = pw_seg_lane_data(h, i);
	t->shared = 0;
	lane_limit(t, atomic_load_explicit(&l->backed, memory_order_relaxed), h->lane_size);
	if (pw_lane_short(t) && lane_back_next(t) < 0) {
		t->lane = NULL;
		atomic_store_explicit(&l->owner, 0, memory_order_release);
		return -1;
	}
	return 0;
}

int pw_thread_attach(struct pw_thread *t)
{
	struct pw_seg_header *h = pw_seg;
	if (!h)
		return -1;
	if (!t->tid)
		t->tid = (uint32_t)PW_SYSCALL(SYS_gettid);
	struct pw_lane *lanes = pw_seg_lanes(h);
	uint32_t shared = h->lane_count - 1;
	/* A lane the collector has emptied first: a lane left by a thread that ended keeps that thread's records
	 * until drained, and threads that start as others end (a pool, a burst that starves the collector of
	 * CPU) would otherwise fill one lane one after the other. */
	for (int drained_only = 1; drained_only >= 0; drained_only--)
		for (uint32_t i = 0; i < shared; i++) {
			int rc = claim_lane(t, h, i, drained_only);
			if (rc > 0)
				continue;
			if (rc < 0)
				goto share; /* no memory for a lane of its own */
			pthread_setspecific(lane_key, (void *)1);
			pw_sample_thread_start(t);
			return 0;
		}
share:
	/* The shared lane is backed whole at its first use: its threads write under its lock, one record each,
	 * so no one of them can grow it. */
	if (atomic_load_explicit(&lanes[shared].backed, memory_order_acquire) < h->lane_size) {
		/* Several threads may back it at once: harmless, fallocate is idempotent. */
		uint64_t now = coarse_ns();
		if (now < t->lane_retry_at ||
		    back_range((uint64_t)(pw_seg_lane_data(h, shared) - (uint8_t *)h), h->lane_size) < 0) {
			if (now >= t->lane_retry_at)
				t->lane_retry_at = now + PW_LANE_RETRY_NS;
			count_shm_drop(&lanes[shared]);
			pw_note_thread_drop(t);
			return -1;
		}
		atomic_store_explicit(&lanes[shared].backed, (uint32_t)h->lane_size, memory_order_release);
	}
	t->lane = &lanes[shared];
	t->data = pw_seg_lane_data(h, shared);
	t->shared = 1;
	t->lane_backed = UINT64_MAX;
	pthread_setspecific(lane_key, (void *)1); /* for lane_release's end of the sample timer */
	pw_sample_thread_start(t);
	return 0;
}


void pw_note_thread_drop(struct pw_thread *t)
{
	struct pw_seg_header *h = pw_seg;
	if (!h || t->drop_slot > PW_DROP_SLOTS)
		return; /* the table is full: the lanes' counters still have it */
	if (!t->drop_slot) {
		t->drop_slot = PW_DROP_SLOTS + 1;
		for (uint32_t i = 0; i < PW_DROP_SLOTS; i++) {
			uint32_t none = 0;
			if (atomic_load_explicit(&h->thread_drops[i].tid, memory_order_relaxed) == 0 &&
			    atomic_compare_exchange_strong_explicit(&h->thread_drops[i].tid, &none, t->tid,
								    memory_order_relaxed, memory_order_relaxed)) {
				t->drop_slot = (uint16_t)(i + 1);
				break;
			}
		}
		if (t->drop_slot > PW_DROP_SLOTS)
			return;
	}
	atomic_fetch_add_explicit(&h->thread_drops[t->drop_slot - 1].dropped, 1, memory_order_relaxed);
}

void pw_count_dropped(struct pw_thread *t, uint32_t n)
{
	if (!t->lane && pw_thread_attach(t) < 0)
		return;
	atomic_fetch_add_explicit(&t->lane->dropped, n, memory_order_relaxed);
	while (n--)
		pw_note_thread_drop(t);
}

void pw_note_guard_skip(void)
{
	if (pw_seg)
		atomic_fetch_add_explicit(&pw_seg->guard_skipped, 1, memory_order_relaxed);
}

void pw_note_exit(int status, int finished)
{
	struct pw_seg_header *h = pw_seg;
	if (!h)
		return;
	/* _exit (finished) is async-signal-safe, and called from signal handlers that may have interrupted a GPU
	 * call of this thread, inside which CUDA and CUPTI hold their locks (CUPTI writes a launch's records there):
	 * a flush then would wait for this thread forever, so it is made only outside any GPU call. (A signal that
	 * interrupts profwrap's own code records no exit at all.) What CUPTI holds when it is not made, at most a
	 * flush period's work, is lost. */
	if (pw_cupti_at_exit && (!finished || !pw_self.gpu_depth))
		pw_cupti_at_exit();
	if (!finished) {
		uint64_t unread = 0;
		pw_stdio_at_exit(&h->io_unflushed, &unread);
		atomic_fetch_add_explicit(&h->io_unread, unread, memory_order_relaxed);
		pw_count_loads();
	}
	int len = pw_read_io(&h->io_rchar, &h->io_wchar);
	if (len >= 0) {
		/* this read is counted after its figures, in the kernel's total a parent gets at the reap */
		h->io_rchar += (uint64_t)len;
		atomic_fetch_add_explicit(&h->io_own, (uint64_t)len, memory_order_relaxed);
		h->io_valid = 1;
	}
	h->exit_status = status;
	h->end_ticks = pw_clock_ticks();
	atomic_store_explicit(&h->state, finished ? PW_STATE_EXITED : PW_STATE_EXITING, memory_order_release);
}

/* Runs after the program's atexit handlers and the destructors of libraries loaded after this one: the
 * exit that pw_note_exit(status, 0) saw begin has gone through. */
__attribute__((destructor)) static void pw_fini(void)
{
	struct pw_seg_header *h = pw_seg;
	if (h && atomic_load_explicit(&h->state, memory_order_acquire) == PW_STATE_EXITING)
		atomic_store_explicit(&h->state, PW_STATE_EXITED, memory_order_release);
}

void pw_start_thread(const char *name, void *(*fn)(void *), size_t stack_size)
{
	/* held while it is created: a thread of the profiler's own is not sampled (pw_sample_new_thread) */
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, stack_size);
	pthread_t t;
	if (pthread_create(&t, &attr, fn, NULL) == 0)
		pthread_setname_np(t, name);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pw_guard_leave(guard);
}

/* Child side of fork: never write into the parent's segment or keep its connection open (the collector
 * would not see the parent end). A followed child starts its own session; the thread that forked is the
 * child's only thread, so resetting its state is enough. */
void pw_after_fork_child(void)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	pw_loader_after_fork();
	pw_stacks_after_fork();
	atomic_store_explicit(&pw_recording, 0, memory_order_relaxed);
	forked_by = pw_seg ? pw_seg->pid : 0;
	if (pw_seg)
		munmap(pw_seg, pw_seg->segment_size);
	pw_seg = NULL;
	pw_own_fd_close(PW_OWN_COLLECTOR);
	pw_own_fd_close(PW_OWN_SEGMENT);
	atomic_store_explicit(&arena_backed, 0, memory_order_relaxed);
	memset(&pw_self, 0, sizeof pw_self);
	pw_guard_set(PW_GUARD_INTERNAL); /* cleared with the rest: the new session's own calls are not the program's */
	pw_cwd_after_fork();
	pw_gpu_after_fork();
	pw_meta_after_fork();
	pw_stdio_after_fork();
	if (pw_cfg.follow_fork && !spawning_collector) {
		session_start(1);
		note_io_start();
	}
	pw_guard_leave(guard);
}

/* NVTX3 calls the library NVTX_INJECTION64_PATH names (nvtx.c): this one, unless the user chose another
 * tool. Set in the environment, so that the program's children inherit it. */
static void be_nvtx_tool(void)
{
	Dl_info self;
	if (getenv("NVTX_INJECTION64_PATH") || !dladdr((void *)be_nvtx_tool, &self) || !self.dli_fname)
		return;
	char path[PATH_MAX];
	if (realpath(self.dli_fname, path))
		setenv("NVTX_INJECTION64_PATH", path, 0);
}

__attribute__((constructor)) static void pw_init(int argc, char **argv)
{
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	pw_resolve_all();
	pw_gpu_scan();
	start_argc = argc;
	start_argv = argv;
	if (config_load() == 0) {
		pthread_key_create(&lane_key, lane_release);
		pthread_atfork(NULL, NULL, pw_after_fork_child);
		pw_pyfn_config();
		pw_py_detect(RTLD_DEFAULT); /* the python executable exports the C API */
		session_start(0);
		pw_gpu_scan(); /* again, now that records can be written: starts CUPTI if CUDA is loaded */
		be_nvtx_tool();
		note_io_start();
	}
	pw_guard_leave(guard);
}
