#define _GNU_SOURCE
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/pw_clock.h"
#include "../common/pw_ring.h"
#include "../common/pw_session.h"
#include "analysis.h"
#include "lane_walk.h"
#include "rawfile.h"

#define MAX_PRODUCERS 4096
#define DRAIN_MIN_MS 1
#define DRAIN_MAX_MS 4
#define CLOCK_EVERY_NS 1000000000ull
#define DETACHED_IDLE_START_MS 30000

/* A set of string references already written to a producer's raw file. */
struct refset {
	uint64_t *slots;
	size_t cap;
	size_t used;
};

struct producer {
	int sock;
	pid_t pid;
	struct pw_seg_header *h;
	struct pw_seg_geometry geo; /* checked once; the header itself is the producer's to scribble on */
	int raw_fd;
	int write_failed;
	int broken; /* reading its segment faulted (it was truncated): nothing more is read from it */
	uint64_t *lost_seen;
	struct refset strings;
	uint64_t events;
	uint64_t dropped;
	uint64_t bad_records;
	uint64_t last_clock_ns;
	char raw_name[320];  /* its raw trace, in OUT/raw */
	int32_t rank, world; /* as written in the PROC chunk */
};

struct pid_images {
	pid_t pid;
	uint32_t images;
};

struct pending {
	int sock;
	uint64_t since_ns;
};

struct server {
	const struct pw_serve_opts *o;
	char raw_dir[4096];
	int listen_fd;
	struct producer *prod[MAX_PRODUCERS];
	size_t nprod;
	struct pending pend[64];
	size_t npend;
	char **raw_names; /* the raw traces this collector wrote: the only ones it analyses */
	size_t nraw, raw_cap;
	struct pid_images *pids; /* images seen per pid: an exec'd image is the next */
	size_t npids, pids_cap;
	uint8_t *buf; /* one lane's worth, linearised */
	uint64_t buf_size;
	struct pw_clock_pair start_pair;
	struct pw_live_status *live;
	uint64_t processes;
	uint64_t events;
	uint64_t dropped;
};

static volatile sig_atomic_t stop_requested;

/* A producer can truncate its segment under the collector's mapping; reading there raises SIGBUS. Reads
 * of a segment run with the guard armed: the fault jumps back, and only that producer is given up. */
static sigjmp_buf fault_jump;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
	if (fault_armed) {
		fault_armed = 0;
		siglongjmp(fault_jump, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

#define SEGMENT_READ_BEGIN(p, on_fault_stmt)          \
	if (sigsetjmp(fault_jump, 1)) {               \
		(p)->broken = 1;                      \
		on_fault_stmt;                        \
	}                                             \
	fault_armed = 1
#define SEGMENT_READ_END() fault_armed = 0

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(void)
{
	return pw_clock_mono_ns();
}

static int refset_add(struct refset *s, uint64_t ref)
{
	if ((s->used + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		uint64_t *n = calloc(ncap, sizeof *n);
		if (!n)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			size_t j = (size_t)(s->slots[i] * 0x9e3779b97f4a7c15ull >> 17) & (ncap - 1);
			while (n[j])
				j = (j + 1) & (ncap - 1);
			n[j] = s->slots[i];
		}
		free(s->slots);
		s->slots = n;
		s->cap = ncap;
	}
	size_t i = (size_t)(ref * 0x9e3779b97f4a7c15ull >> 17) & (s->cap - 1);
	while (s->slots[i]) {
		if (s->slots[i] == ref)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i] = ref;
	s->used++;
	return 1;
}

static void log_line(const struct server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(const struct server *s, const char *fmt, ...)
{
	if (s->o->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("profwrap-collector: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void raw_chunk(struct server *s, struct producer *p, uint32_t type, const void *a, size_t alen, const void *b,
		      size_t blen)
{
	if (p->raw_fd < 0 || p->write_failed)
		return;
	int rc = pw_raw_write_chunk(p->raw_fd, type, a, alen, b, blen);
	if (rc < 0) {
		p->write_failed = 1;
		log_line(s, "cannot write the raw trace of pid %d: %s; its later records are lost", (int)p->pid,
			 strerror(-rc));
	}
}

static void write_clock(struct server *s, struct producer *p)
{
	struct pw_clock_pair pair = pw_clock_pair_now();
	raw_chunk(s, p, PW_CHUNK_CLOCK, &pair, sizeof pair, NULL, 0);
	p->last_clock_ns = pair.ns;
}

/* "<rank>-<host>-<pid>[.<image>].pwt", "launcher-..." for a process without a rank: several nodes' collectors
 * may write into one directory, where pids repeat. */
static void raw_name(char *buf, size_t size, int32_t rank, const char *host, uint32_t host_len, int pid, uint32_t k)
{
	char safe[65];
	pw_host_file_part(safe, sizeof safe, host, host_len);
	char r[16];
	if (rank >= 0)
		snprintf(r, sizeof r, "%d", (int)rank);
	else
		snprintf(r, sizeof r, "launcher");
	if (k == 0)
		snprintf(buf, size, "%s-%s-%d.pwt", r, safe, pid);
	else
		snprintf(buf, size, "%s-%s-%d.%u.pwt", r, safe, pid, k);
}

static int note_raw_name(struct server *s, const char *name)
{
	if (s->nraw == s->raw_cap) {
		size_t cap = s->raw_cap ? s->raw_cap * 2 : 64;
		char **n = realloc(s->raw_names, cap * sizeof *n);
		if (!n)
			return -1;
		s->raw_names = n;
		s->raw_cap = cap;
	}
	return (s->raw_names[s->nraw] = strdup(name)) ? (int)s->nraw++ : -1;
}

/* The image number of a process that connects: 0, or n after its n-th exec (the images of a pid connect in
 * order; the most recent pids are looked at first). */
static uint32_t next_image(struct server *s, pid_t pid)
{
	for (size_t i = s->npids; i-- > 0;)
		if (s->pids[i].pid == pid)
			return s->pids[i].images++;
	if (s->npids == s->pids_cap) {
		size_t cap = s->pids_cap ? s->pids_cap * 2 : 64;
		struct pid_images *n = realloc(s->pids, cap * sizeof *n);
		if (!n)
			return 0;
		s->pids = n;
		s->pids_cap = cap;
	}
	s->pids[s->npids++] = (struct pid_images){pid, 1};
	return 0;
}

/* Opens OUT/raw/<name>, never reusing a name (a file of an earlier run, or of another node's collector, stays). */
static int open_raw(struct server *s, struct producer *p, uint32_t *image)
{
	char path[4352];
	uint32_t host_len = 0;
	const char *host = pw_arena_get_in(p->h, &p->geo, p->h->host_ref, &host_len);
	*image = next_image(s, p->pid);
	for (uint32_t k = *image; k < *image + 10000; k++) {
		raw_name(p->raw_name, sizeof p->raw_name, p->rank, host, host_len, (int)p->pid, k);
		snprintf(path, sizeof path, "%s/%s", s->raw_dir, p->raw_name);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
		if (fd >= 0) {
			if (note_raw_name(s, p->raw_name) < 0)
				log_line(s, "out of memory: %s will only be in `profwrap report`", path);
			return fd;
		}
		if (errno != EEXIST) {
			log_line(s, "cannot create %s: %s", path, strerror(errno));
			return -1;
		}
	}
	return -1;
}

static void producer_free(struct producer *p)
{
	if (p->sock >= 0)
		close(p->sock);
	if (p->raw_fd >= 0)
		close(p->raw_fd);
	if (p->h)
		munmap(p->h, p->geo.mapped_size);
	free(p->lost_seen);
	free(p->strings.slots);
	free(p);
}

/* Receives a hello: the message and the segment's descriptor. Returns the descriptor, or -1. */
static int receive_hello(int sock, struct pw_hello *hello)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {hello, sizeof *hello};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	int fd = -1;
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (fd >= 0 && (n != (ssize_t)sizeof *hello || hello->magic != PW_HELLO_MAGIC ||
			hello->version != PW_FORMAT_VERSION)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The PROC chunk: what describes the process, from its header and arena (read under the fault guard). */
static void write_proc(struct server *s, struct producer *p, uint32_t image)
{
	struct pw_seg_header *h = p->h;
	struct pw_raw_proc proc = {h->pid, h->ppid, p->rank, p->world, h->clock_kind, h->domain_mask,
				   h->clock0, h->start_realtime_ns, 0, 0, 0, image};
	const char *strs[3];
	uint32_t lens[3] = {0, 0, 0};
	pw_strref refs[3] = {h->argv_ref, h->exe_ref, h->host_ref};
	size_t total = 0;
	for (int i = 0; i < 3; i++) {
		strs[i] = pw_arena_get_in(h, &p->geo, refs[i], &lens[i]);
		if (!strs[i])
			lens[i] = 0;
		total += lens[i];
	}
	proc.argv_len = lens[0];
	proc.exe_len = lens[1];
	proc.host_len = lens[2];
	char *buf = malloc(total + 1);
	if (!buf)
		return;
	for (int i = 0, at = 0; i < 3; at += (int)lens[i], i++)
		memcpy(buf + at, strs[i] ? strs[i] : "", lens[i]);
	raw_chunk(s, p, PW_CHUNK_PROC, &proc, sizeof proc, buf, total);
	free(buf);
}

/* Checks the segment's layout (keeping the copy) and starts the raw trace with the process's description.
 * Reads of the segment run under the fault guard. Returns 0, or -1 after logging why. */
static int producer_load(struct server *s, struct producer *p)
{
	SEGMENT_READ_BEGIN(p, return -1);
	if (pw_seg_geometry_read(p->h, p->geo.mapped_size, &p->geo) < 0 || p->h->pid != p->pid) {
		SEGMENT_READ_END();
		log_line(s, "refused pid %d: its shared memory header is inconsistent", (int)p->pid);
		return -1;
	}
	if (p->geo.lane_size > s->buf_size) {
		uint8_t *nb = realloc(s->buf, p->geo.lane_size);
		if (!nb) {
			SEGMENT_READ_END();
			return -1;
		}
		s->buf = nb;
		s->buf_size = p->geo.lane_size;
	}
	uint32_t image = 0;
	p->rank = p->h->rank < 0 ? -1 : p->h->rank;
	p->world = p->h->world_size < 1 ? 1 : p->h->world_size;
	p->lost_seen = calloc(p->geo.lane_count, sizeof *p->lost_seen);
	if (!p->lost_seen || (p->raw_fd = open_raw(s, p, &image)) < 0 || pw_raw_write_header(p->raw_fd) < 0) {
		SEGMENT_READ_END();
		return -1;
	}
	write_proc(s, p, image);
	SEGMENT_READ_END();
	return 0;
}

/* Takes a producer from its hello: same user (SO_PEERCRED), the pid it claims, a segment it owns, private,
 * and self-consistent. The segment's name is removed at once: the mappings keep it alive, and nothing is
 * left in /dev/shm whatever happens to either side. Returns NULL after logging why it was refused. */
static struct producer *producer_open(struct server *s, int sock)
{
	struct pw_hello hello;
	struct ucred cred;
	socklen_t clen = sizeof cred;
	struct stat st;
	struct producer *p = NULL;
	int shm_fd = receive_hello(sock, &hello);
	if (shm_fd < 0) {
		log_line(s, "refused a connection: not a profwrap %u producer", PW_FORMAT_VERSION);
		goto fail;
	}
	hello.shm_name[sizeof hello.shm_name - 1] = 0;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != getuid() ||
	    cred.pid != hello.pid) {
		log_line(s, "refused pid %d: not the same user, or not the process it claims to be", hello.pid);
		goto fail;
	}
	if (fstat(shm_fd, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 077) ||
	    (size_t)st.st_size < sizeof(struct pw_seg_header)) {
		log_line(s, "refused pid %d: its shared memory is not private to this user", hello.pid);
		goto fail;
	}
	if (strncmp(hello.shm_name, "/profwrap.", 10) == 0)
		shm_unlink(hello.shm_name);
	p = calloc(1, sizeof *p);
	if (!p)
		goto fail;
	p->sock = -1;
	p->raw_fd = -1;
	p->pid = hello.pid;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (m == MAP_FAILED) {
		log_line(s, "refused pid %d: cannot map its shared memory: %s", hello.pid, strerror(errno));
		goto fail;
	}
	p->h = m;
	p->geo.mapped_size = (uint64_t)st.st_size;
	if (producer_load(s, p) < 0)
		goto fail;
	close(shm_fd);
	p->sock = sock;
	raw_chunk(s, p, PW_CHUNK_CLOCK, &s->start_pair, sizeof s->start_pair, NULL, 0);
	write_clock(s, p);
	s->processes++;
	return p;
fail:
	if (p)
		producer_free(p);
	if (shm_fd >= 0)
		close(shm_fd);
	close(sock);
	return NULL;
}

/* Writes one string chunk for ref unless this file already has it. */
static void emit_string(struct server *s, struct producer *p, uint64_t ref)
{
	if (!ref || refset_add(&p->strings, ref) != 1)
		return;
	uint32_t len;
	const char *str = pw_arena_get_in(p->h, &p->geo, ref, &len);
	if (!str)
		return;
	struct pw_raw_string hdr = {ref, len, 0};
	raw_chunk(s, p, PW_CHUNK_STRING, &hdr, sizeof hdr, str, len);
}

struct drain_ctx {
	struct server *s;
	struct producer *p;
};

static void drained_records(void *ctx, const uint8_t *recs, uint64_t len)
{
	struct drain_ctx *c = ctx;
	raw_chunk(c->s, c->p, PW_CHUNK_RECORDS, recs, len, NULL, 0);
}

static void drained_string(void *ctx, uint64_t ref)
{
	struct drain_ctx *c = ctx;
	emit_string(c->s, c->p, ref);
}

/* Drains one lane: copies [tail, head) out of shared memory (so a misbehaving producer cannot change what
 * was validated), writes the valid records as RECORDS chunks, and frees the space. Returns bytes consumed. */
static uint64_t drain_lane(struct server *s, struct producer *p, uint32_t lane)
{
	struct pw_lane *l = &pw_seg_lanes(p->h)[lane];
	uint64_t size = p->geo.lane_size, tail;
	uint64_t avail = pw_lane_readable(l, &tail);
	if (!avail)
		return 0;
	if (avail > size) {
		p->bad_records++;
		pw_lane_release(l, tail + avail);
		return 0;
	}
	const uint8_t *data = pw_seg_lane_data_in(p->h, &p->geo, lane);
	uint64_t off = tail & (size - 1);
	uint64_t first = size - off < avail ? size - off : avail;
	memcpy(s->buf, data + off, first);
	memcpy(s->buf + first, data, avail - first);

	struct drain_ctx ctx = {s, p};
	struct pw_lane_visitor v = {&ctx, drained_records, drained_string};
	struct pw_lane_walk_result r = pw_lane_walk(s->buf, avail, first, &v);
	p->events += r.records;
	s->events += r.records;
	p->bad_records += r.refused;
	if (!p->write_failed)
		pw_lane_release(l, tail + avail);
	return avail;
}

static uint64_t drain_producer(struct server *s, struct producer *p)
{
	if (p->write_failed || p->broken)
		return 0;
	volatile uint64_t moved = 0;
	SEGMENT_READ_BEGIN(p, {
		log_line(s, "pid %d truncated its shared memory; its later records are lost", (int)p->pid);
		return moved;
	});
	struct pw_lane *lanes = pw_seg_lanes(p->h);
	for (uint32_t i = 0; i < p->geo.lane_count; i++) {
		moved += drain_lane(s, p, i);
		uint64_t d = atomic_load_explicit(&lanes[i].dropped, memory_order_relaxed);
		if (d != p->lost_seen[i]) {
			struct pw_raw_lost lost = {i, 0, d};
			raw_chunk(s, p, PW_CHUNK_LOST, &lost, sizeof lost, NULL, 0);
			s->dropped += d - p->lost_seen[i];
			p->dropped += d - p->lost_seen[i];
			p->lost_seen[i] = d;
		}
	}
	SEGMENT_READ_END();
	if (now_ns() - p->last_clock_ns > CLOCK_EVERY_NS)
		write_clock(s, p);
	return moved;
}

static size_t ranks_seen(const struct pw_analysis *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->nranks; i++)
		n += a->ranks[i].rank != PW_RANK_LAUNCHER;
	return n;
}

/* MPI_Init told the process its rank (the launcher's environment may have said none or another): the PROC
 * chunk, first in the file, gets it in place, and the file the name of that rank, so the analysis puts the
 * whole process, records from before MPI_Init included, under the rank MPI gave it. */
static void set_rank(struct server *s, struct producer *p, int32_t rank, int32_t world)
{
	char path[4352], to[4352], name[sizeof p->raw_name];
	snprintf(path, sizeof path, "%s/%s", s->raw_dir, p->raw_name);
	int fd = open(path, O_WRONLY | O_CLOEXEC); /* not the O_APPEND descriptor: pwrite would append */
	int32_t v[2] = {rank, world};
	off_t at = (off_t)(sizeof(struct pw_raw_file_header) + sizeof(struct pw_raw_chunk) +
			   offsetof(struct pw_raw_proc, rank));
	_Static_assert(offsetof(struct pw_raw_proc, world_size) == offsetof(struct pw_raw_proc, rank) + 4,
		       "rank and world_size are written together");
	if (fd < 0 || pwrite(fd, v, sizeof v, at) != (ssize_t)sizeof v) {
		log_line(s, "cannot set the MPI rank %d of pid %d in %s", (int)rank, (int)p->pid, path);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	/* "<rank>-<rest>" -> "<new rank>-<rest>", never over another file */
	const char *rest = strchr(p->raw_name, '-');
	snprintf(name, sizeof name, "%d%s", (int)rank, rest ? rest : "");
	snprintf(to, sizeof to, "%s/%s", s->raw_dir, name);
	if (renameat2(AT_FDCWD, path, AT_FDCWD, to, RENAME_NOREPLACE) < 0)
		return; /* the file keeps its name; the rank inside it is what counts */
	for (size_t i = 0; i < s->nraw; i++)
		if (strcmp(s->raw_names[i], p->raw_name) == 0) {
			char *n = strdup(name);
			if (n) {
				free(s->raw_names[i]);
				s->raw_names[i] = n;
			}
		}
}

/* The process is gone (or the session is over): last drain, END chunk, and the segment is removed unless
 * its records could not be written (then it stays for salvage). */
static void producer_finish(struct server *s, struct producer *p, int still_running)
{
	volatile int32_t rank = -1, world = 0; /* set under the fault guard (setjmp) */
	drain_producer(s, p);
	struct pw_raw_end end = {0};
	end.how = PW_END_VANISHED;
	end.bad_records = p->bad_records;
	if (!p->broken) {
		SEGMENT_READ_BEGIN(p, goto write_end);
		struct pw_seg_header *h = p->h;
		uint32_t state = atomic_load_explicit(&h->state, memory_order_acquire);
		end.how = still_running		      ? PW_END_RUNNING
			  : state == PW_STATE_EXITED  ? PW_END_EXITED
			  : state == PW_STATE_EXECING ? PW_END_EXECED
			  : state == PW_STATE_EXITING ? PW_END_DIED_IN_EXIT
						      : PW_END_VANISHED;
		end.exit_status = h->exit_status;
		end.end_ticks = end.how == PW_END_EXITED || end.how == PW_END_EXECED ? h->end_ticks : 0;
		if (end.how == PW_END_EXECED) {
			end.exec_ref = h->exec_ref;
			emit_string(s, p, h->exec_ref);
		}
		end.io_rchar = h->io_rchar;
		end.io_wchar = h->io_wchar;
		end.io_valid = h->io_valid;
		end.arena_dropped = atomic_load(&h->arena_dropped);
		end.guard_skipped = atomic_load(&h->guard_skipped);
		end.stacks_dropped = atomic_load(&h->stacks_dropped);
		end.samples_skipped = atomic_load(&h->samples_skipped);
		rank = __atomic_load_n(&h->rank, __ATOMIC_RELAXED);
		world = __atomic_load_n(&h->world_size, __ATOMIC_RELAXED);
		SEGMENT_READ_END();
	}
write_end:
	write_clock(s, p);
	raw_chunk(s, p, PW_CHUNK_END, &end, sizeof end, NULL, 0);
	if (rank >= 0 && world >= 1 && (rank != p->rank || world != p->world))
		set_rank(s, p, rank, world);
	producer_free(p);
}

static int listen_on(struct server *s, const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		log_line(s, "socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	mode_t old = umask(077);
	int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&addr, sizeof addr);
	umask(old);
	if (rc < 0 || listen(fd, 128) < 0) {
		log_line(s, "cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int make_dir(const char *path, mode_t mode)
{
	struct stat st;
	if (mkdir(path, mode) == 0 || (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	return -1;
}

static void map_live_status(struct server *s)
{
	char path[3200];
	if (pw_session_path(s->o->session_dir, "status", path, sizeof path))
		return;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (ftruncate(fd, sizeof *s->live) == 0) {
		void *m = mmap(NULL, sizeof *s->live, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			s->live = m;
			s->live->magic = PW_LIVE_MAGIC;
		}
	}
	close(fd);
}

static void update_live(struct server *s)
{
	if (!s->live)
		return;
	s->live->events = s->events;
	s->live->dropped = s->dropped;
	s->live->producers = s->nprod;
	s->live->processes = s->processes;
}

/* Takes new connections while there is room for their hellos; the rest wait in the listen backlog (their
 * processes are not held up: connecting does not wait for the accept). */
static void accept_all(struct server *s)
{
	while (s->npend < sizeof s->pend / sizeof s->pend[0]) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		s->pend[s->npend++] = (struct pending){fd, now_ns()};
	}
}

int pw_serve(const struct pw_serve_opts *o)
{
	struct server srv = {.o = o, .listen_fd = -1};
	struct server *s = &srv;
	char sock_path[3200];
	int rc = 1;

	signal(SIGPIPE, SIG_IGN);
	struct sigaction fault = {.sa_handler = on_fault};
	sigaction(SIGBUS, &fault, NULL);
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigaction(SIGTERM, &sa, NULL);
	if (o->detached)
		sigaction(SIGINT, &sa, NULL);
	else
		signal(SIGINT, SIG_IGN); /* Ctrl-C is for the target; the CLI ends the session when it has ended */
	pw_clock_init(getenv(PW_ENV_CLOCK));
	s->start_pair = pw_clock_pair_now();

	if (snprintf(s->raw_dir, sizeof s->raw_dir, "%s/raw", o->output) >= (int)sizeof s->raw_dir ||
	    make_dir(o->output, 0777) < 0 || make_dir(s->raw_dir, 0700) < 0) {
		fprintf(stderr, "profwrap-collector: cannot create %s: %s\n", s->raw_dir, strerror(errno));
		return 1;
	}
	if (pw_session_path(o->session_dir, "sock", sock_path, sizeof sock_path) ||
	    (s->listen_fd = listen_on(s, sock_path)) < 0)
		return 1;
	map_live_status(s);
	if (o->ready_fd >= 0) {
		(void)!write(o->ready_fd, "R", 1);
		close(o->ready_fd);
	}

	uint64_t end_requested_at = 0, last_producer_at = now_ns(), started = now_ns();
	int had_producer = 0, timeout = DRAIN_MIN_MS;
	struct pollfd pfd[MAX_PRODUCERS + 66];
	while (!stop_requested) {
		size_t n = 0;
		pfd[n++] = (struct pollfd){s->listen_fd, POLLIN, 0};
		pfd[n++] = (struct pollfd){o->control_fd, POLLIN, 0};
		for (size_t i = 0; i < s->npend; i++)
			pfd[n++] = (struct pollfd){s->pend[i].sock, POLLIN, 0};
		for (size_t i = 0; i < s->nprod; i++)
			pfd[n++] = (struct pollfd){s->prod[i]->sock, POLLIN, 0};
		int ready = poll(pfd, n, timeout);
		if (ready < 0 && errno != EINTR)
			break;

		size_t npend = s->npend; /* those polled; accept_all() appends more */
		if (pfd[0].revents & POLLIN)
			accept_all(s);
		if (o->control_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			char b[256];
			ssize_t r = read(o->control_fd, b, sizeof b);
			if (r <= 0 && !end_requested_at)
				end_requested_at = now_ns();
		}
		/* Hellos, in the order the connections came (an exec'd image connects after the image it replaced):
		 * pending sockets polled are at pfd[2 .. 2+npend); those accepted just now follow, unpolled. */
		size_t kept = 0, total_pend = s->npend;
		for (size_t i = 0; i < total_pend; i++) {
			short re = i < npend ? pfd[2 + i].revents : 0;
			int expired = now_ns() - s->pend[i].since_ns > 5000000000ull;
			if (!(re & (POLLIN | POLLHUP | POLLERR)) && !expired) {
				s->pend[kept++] = s->pend[i];
				continue;
			}
			int fd = s->pend[i].sock;
			if (!(re & POLLIN)) {
				close(fd);
				continue;
			}
			int fl = fcntl(fd, F_GETFL);
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			struct producer *p = producer_open(s, fd);
			if (p && s->nprod < MAX_PRODUCERS) {
				s->prod[s->nprod++] = p;
				had_producer = 1;
			} else if (p) {
				log_line(s, "too many processes at once; pid %d is not recorded", (int)p->pid);
				producer_finish(s, p, 0);
			}
		}
		s->npend = kept;
		/* Ends: end of file on a producer's connection. Producers are at pfd[2+npend ..). */
		size_t base = 2 + npend;
		size_t nprod_before = n - base;
		for (size_t i = nprod_before; i-- > 0;) {
			if (!(pfd[base + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char b[64];
			ssize_t r = recv(s->prod[i]->sock, b, sizeof b, MSG_DONTWAIT);
			if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
				continue;
			producer_finish(s, s->prod[i], 0);
			s->prod[i] = s->prod[--s->nprod];
			last_producer_at = now_ns();
		}

		uint64_t moved = 0;
		for (size_t i = 0; i < s->nprod; i++)
			moved += drain_producer(s, s->prod[i]);
		timeout = moved ? DRAIN_MIN_MS : (timeout * 2 > DRAIN_MAX_MS ? DRAIN_MAX_MS : timeout * 2);
		update_live(s);
		if (s->nprod)
			last_producer_at = now_ns();

		uint64_t now = now_ns();
		if (end_requested_at && ((!s->nprod && !s->npend) || now - end_requested_at > (uint64_t)o->grace_ms * 1000000))
			break;
		if (o->detached && !s->nprod && !s->npend &&
		    ((had_producer && now - last_producer_at > (uint64_t)o->linger_ms * 1000000) ||
		     (!had_producer && now - started > (uint64_t)DETACHED_IDLE_START_MS * 1000000)))
			break;
	}

	for (size_t i = 0; i < s->nprod; i++)
		producer_finish(s, s->prod[i], 1);
	s->nprod = 0;
	for (size_t i = 0; i < s->npend; i++)
		close(s->pend[i].sock);
	update_live(s);
	close(s->listen_fd);
	unlink(sock_path);
	free(s->buf);

	struct pw_analysis a;
	char err[512];
	if (!had_producer) {
		/* The CLI explains this itself (exec failed, or a static or setuid target). */
		if (o->detached)
			log_line(s, "no process connected; nothing to report");
		rc = PW_SERVE_NOTHING_RECORDED;
	} else if (pw_analyze_files(o->output, s->raw_names, s->nraw, &a, err, sizeof err) < 0) {
		fprintf(stderr, "profwrap-collector: %s\n", err);
	} else {
		int wr = pw_write_reports(&a, err, sizeof err);
		rc = wr < 0 ? 1 : 0;
		if (wr < 0)
			fprintf(stderr, "profwrap-collector: %s\n", err);
		else if (wr > 0 && ranks_seen(&a) > 1 && !o->quiet)
			/* one collector for the job, and some of its ranks made no report (one per rank: the last
			 * rank's collector writes the summary; they are silent) */
			fprintf(stderr, "profwrap: no summary.txt: %s; `profwrap merge %s` writes it from the reports there\n",
				err, o->output);
		pw_analysis_free(&a);
	}
	for (size_t i = 0; i < s->nraw; i++)
		free(s->raw_names[i]);
	free(s->raw_names);
	free(s->pids);
	if (s->live)
		munmap(s->live, sizeof *s->live);
	/* The CLI removes its session directory; a detached collector leaves only the lock, which the next
	 * job's processes must find in place to agree on who starts the next collector. */
	char status_path[3200];
	if (o->detached && pw_session_path(o->session_dir, "status", status_path, sizeof status_path) == 0)
		unlink(status_path);
	return rc;
}
