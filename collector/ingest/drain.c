#define _GNU_SOURCE
#include "drain.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/pw_clock.h"
#include "../../common/pw_session.h"
#include "../lib/file_names.h"
#include "../lib/rawfile.h"
#include "lane_walk.h"

#define CLOCK_EVERY_NS 1000000000ull

struct pid_images {
	pid_t pid;
	uint32_t images;
};

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

void pw_drain_catch_faults(void)
{
	struct sigaction sa = {.sa_handler = on_fault};
	sigaction(SIGBUS, &sa, NULL);
}

static uint64_t now_ns(void)
{
	return pw_clock_mono_ns();
}

void pw_collector_log(int quiet, const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("profwrap-collector: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#define log_line(s, ...) pw_collector_log((s)->quiet, __VA_ARGS__)

static void raw_chunk(struct pw_drain *s, struct pw_producer *p, uint32_t type, const void *a, size_t alen, const void *b,
		      size_t blen)
{
	if (p->raw_fd < 0 || p->write_failed)
		return;
	int rc = pw_raw_write_chunk(p->raw_fd, type, a, alen, b, blen);
	if (rc < 0) {
		/* Disk full, say: the file is cut back to its last whole chunk, and the lanes keep what was not
		 * written (their tails stay), so `profwrap salvage` can finish the file once there is room. */
		p->write_failed = 1;
		if (ftruncate(p->raw_fd, (off_t)p->raw_size) < 0)
			p->raw_size = 0;
		log_line(s, "cannot write the raw trace of pid %d: %s; its records stay in shared memory for "
			 "`profwrap salvage`", (int)p->pid, strerror(-rc));
		return;
	}
	p->raw_size += sizeof(struct pw_raw_chunk) + ((alen + blen + 7) & ~(size_t)7);
}

static void write_clock(struct pw_drain *s, struct pw_producer *p)
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

static int note_raw_name(struct pw_drain *s, const char *name)
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
static uint32_t next_image(struct pw_drain *s, pid_t pid)
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
static int open_raw(struct pw_drain *s, struct pw_producer *p, const char *host, uint32_t host_len,
		    uint32_t *image)
{
	char path[4352];
	*image = next_image(s, p->pid);
	for (uint32_t k = *image; k < *image + 10000; k++) {
		raw_name(p->raw_name, sizeof p->raw_name, p->rank, host, host_len, (int)p->pid, k);
		snprintf(path, sizeof path, "%s/%s", s->raw_dir, p->raw_name);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
		if (fd >= 0) {
			/* held while this collector writes it: salvage leaves a locked file alone */
			flock(fd, LOCK_EX | LOCK_NB);
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

static void producer_free(struct pw_producer *p)
{
	if (p->sock >= 0)
		close(p->sock);
	if (p->raw_fd >= 0)
		close(p->raw_fd);
	if (p->h)
		munmap(p->h, p->geo.mapped_size);
	free(p->lost_seen);
	pw_keys_free(&p->strings);
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
static void write_proc(struct pw_drain *s, struct pw_producer *p, uint32_t image)
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

/* Checks the segment's layout (keeping the copy) and sizes the copy buffer for its lanes. Returns 0, or -1
 * after logging why. Called under the fault guard. */
static int producer_check(struct pw_drain *s, struct pw_producer *p)
{
	if (pw_seg_geometry_read(p->h, p->geo.mapped_size, &p->geo) < 0 || p->h->pid != p->pid) {
		log_line(s, "refused pid %d: its shared memory header is inconsistent", (int)p->pid);
		return -1;
	}
	if (p->geo.lane_size > s->buf_size) {
		uint8_t *nb = realloc(s->buf, p->geo.lane_size);
		if (!nb)
			return -1;
		s->buf = nb;
		s->buf_size = p->geo.lane_size;
	}
	p->lost_seen = calloc(p->geo.lane_count, sizeof *p->lost_seen);
	return p->lost_seen ? 0 : -1;
}

/* Starts the producer's raw trace: a new file with the header and the PROC chunk. A file that could not be
 * started is removed (the records stay in shared memory). Returns 0 or -1. Called under the fault guard. */
static int producer_start_raw(struct pw_drain *s, struct pw_producer *p)
{
	uint32_t image = 0;
	p->rank = p->h->rank < 0 ? -1 : p->h->rank;
	p->world = p->h->world_size < 1 ? 1 : p->h->world_size;
	uint32_t host_len = 0;
	const char *host = pw_arena_get_in(p->h, &p->geo, p->h->host_ref, &host_len);
	if ((p->raw_fd = open_raw(s, p, host, host_len, &image)) < 0)
		return -1;
	if (pw_raw_write_header(p->raw_fd) == 0) {
		p->raw_size = sizeof(struct pw_raw_file_header);
		write_proc(s, p, image);
		if (!p->write_failed)
			return 0;
	}
	char path[4352];
	snprintf(path, sizeof path, "%s/%s", s->raw_dir, p->raw_name);
	log_line(s, "cannot start %s: %s", path, strerror(errno));
	unlink(path);
	if (s->nraw && strcmp(s->raw_names[s->nraw - 1], p->raw_name) == 0)
		free(s->raw_names[--s->nraw]);
	close(p->raw_fd);
	p->raw_fd = -1;
	return -1;
}

static int producer_load(struct pw_drain *s, struct pw_producer *p)
{
	SEGMENT_READ_BEGIN(p, return -1);
	int rc = producer_check(s, p) < 0 || producer_start_raw(s, p) < 0 ? -1 : 0;
	SEGMENT_READ_END();
	return rc;
}

/* Takes a producer from its hello: same user (SO_PEERCRED), the pid it claims, a segment it owns, private,
 * and self-consistent. The segment keeps its name until its END chunk is written (pw_producer_finish), so
 * that salvage finds it if this collector dies. Returns NULL after logging why it was refused. */
struct pw_producer *pw_producer_open(struct pw_drain *s, int sock)
{
	struct pw_hello hello;
	struct ucred cred;
	socklen_t clen = sizeof cred;
	struct stat st;
	struct pw_producer *p = NULL;
	int shm_fd = receive_hello(sock, &hello);
	if (shm_fd < 0) {
		log_line(s, "refused a connection: not a profwrap %u producer", PW_FORMAT_VERSION);
		goto fail;
	}
	hello.shm_name[sizeof hello.shm_name - 1] = 0;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != getuid()) {
		log_line(s, "refused pid %d: its connection is not from this user (uid %d)", hello.pid,
			 clen == sizeof cred ? (int)cred.uid : -1);
		goto fail;
	}
	if (cred.pid != hello.pid) {
		log_line(s, "refused pid %d: its connection is from pid %d", hello.pid, (int)cred.pid);
		goto fail;
	}
	if (fstat(shm_fd, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 077) ||
	    (size_t)st.st_size < sizeof(struct pw_seg_header)) {
		log_line(s, "refused pid %d: its shared memory is not private to this user", hello.pid);
		goto fail;
	}
	p = calloc(1, sizeof *p);
	if (!p)
		goto fail;
	p->sock = -1;
	p->raw_fd = -1;
	p->pid = hello.pid;
	/* the name is removed at the end: only one that names this process's segment, not another's */
	if (pw_shm_name_is_of(hello.shm_name, (int)getuid(), hello.pid))
		snprintf(p->shm_name, sizeof p->shm_name, "%s", hello.shm_name);
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

/* The guarded part of pw_producer_adopt: the segment's layout, then the raw trace to continue or start. */
static int adopt_load(struct pw_drain *s, struct pw_producer *p, const struct pw_raw_resume *resume)
{
	SEGMENT_READ_BEGIN(p, return -1);
	p->pid = p->h->pid;
	int rc = producer_check(s, p);
	if (rc == 0 && resume) {
		p->raw_fd = resume->fd;
		p->raw_size = resume->size;
		p->rank = resume->rank;
		p->world = resume->world;
		snprintf(p->raw_name, sizeof p->raw_name, "%s", resume->name);
		rc = note_raw_name(s, p->raw_name) < 0 ? -1 : 0;
	} else if (rc == 0) {
		rc = producer_start_raw(s, p);
	}
	SEGMENT_READ_END();
	return rc;
}

struct pw_producer *pw_producer_adopt(struct pw_drain *s, void *map, uint64_t map_size, const char *shm_name,
				      const struct pw_raw_resume *resume)
{
	struct pw_producer *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->sock = -1;
	p->raw_fd = -1;
	p->h = map;
	p->geo.mapped_size = map_size;
	snprintf(p->shm_name, sizeof p->shm_name, "%s", shm_name);
	if (adopt_load(s, p, resume) < 0) {
		if (resume)
			p->raw_fd = -1; /* the caller's */
		p->h = NULL;        /* the caller's mapping */
		producer_free(p);
		return NULL;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct pw_raw_salvage mark = {(uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec};
	raw_chunk(s, p, PW_CHUNK_SALVAGE, &mark, sizeof mark, NULL, 0);
	write_clock(s, p);
	s->processes++;
	return p;
}

/* Writes one string chunk for ref unless this file already has it. */
static void emit_string(struct pw_drain *s, struct pw_producer *p, uint64_t ref)
{
	int added;
	if (!ref || pw_keys_add(&p->strings, ref, &added) < 0 || !added)
		return;
	uint32_t len;
	const char *str = pw_arena_get_in(p->h, &p->geo, ref, &len);
	if (!str)
		return;
	struct pw_raw_string hdr = {ref, len, 0};
	raw_chunk(s, p, PW_CHUNK_STRING, &hdr, sizeof hdr, str, len);
}

struct drain_ctx {
	struct pw_drain *s;
	struct pw_producer *p;
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
static uint64_t drain_lane(struct pw_drain *s, struct pw_producer *p, uint32_t lane)
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

/* What the process's segment holds of /dev/shm now: its header, its lanes' backed bytes, its arena's steps.
 * Only the consumer takes memory back (reclaim_lane), so the largest value seen before each reclaim is the
 * peak. Under the fault guard. */
static void note_shm_held(struct pw_producer *p, struct pw_lane *lanes)
{
	uint64_t held = p->geo.header_size;
	uint64_t arena = (atomic_load_explicit(&p->h->arena_used, memory_order_relaxed) + PW_ARENA_STEP - 1) &
			 ~(uint64_t)(PW_ARENA_STEP - 1);
	held += arena < p->geo.arena_size ? arena : p->geo.arena_size;
	for (uint32_t i = 0; i < p->geo.lane_count; i++) {
		uint64_t b = atomic_load_explicit(&lanes[i].backed, memory_order_relaxed);
		held += b < p->geo.lane_size ? b : p->geo.lane_size;
	}
	if (held > p->shm_peak)
		p->shm_peak = held;
}

/* A lane whose thread ended, drained: its pages go back to /dev/shm (MADV_REMOVE frees a shared memory
 * range's pages and their space), and the next thread that claims it backs it anew as it fills. Under the
 * fault guard. */
static void reclaim_lane(struct pw_producer *p, struct pw_lane *l, uint32_t i)
{
	if (!pw_lane_reclaim_begin(l))
		return;
	uint64_t len = atomic_load_explicit(&l->backed, memory_order_relaxed);
	len = len < p->geo.lane_size ? (len + 4095) & ~(uint64_t)4095 : p->geo.lane_size;
	madvise(pw_seg_lane_data_in(p->h, &p->geo, i), len, MADV_REMOVE);
	pw_lane_reclaim_end(l);
}

uint64_t pw_producer_drain(struct pw_drain *s, struct pw_producer *p)
{
	if (p->write_failed || p->broken)
		return 0;
	volatile uint64_t moved = 0;
	SEGMENT_READ_BEGIN(p, {
		log_line(s, "pid %d truncated its shared memory; its later records are lost", (int)p->pid);
		return moved;
	});
	struct pw_lane *lanes = pw_seg_lanes(p->h);
	note_shm_held(p, lanes);
	for (uint32_t i = 0; i < p->geo.lane_count; i++) {
		moved += drain_lane(s, p, i);
		if (i + 1 < p->geo.lane_count && !p->write_failed)
			reclaim_lane(p, &lanes[i], i);
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

/* MPI_Init told the process its rank (the launcher's environment may have said none or another): the PROC
 * chunk, first in the file, gets it in place, and the file the name of that rank, so the analysis puts the
 * whole process, records from before MPI_Init included, under the rank MPI gave it. */
static void set_rank(struct pw_drain *s, struct pw_producer *p, int32_t rank, int32_t world)
{
	char path[4352], to[4352], name[sizeof p->raw_name];
	snprintf(path, sizeof path, "%s/%s", s->raw_dir, p->raw_name);
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC); /* not the O_APPEND descriptor: pwrite would append */
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

/* The segment's per-thread drop counts, as THREAD_LOST chunks. Called under the fault guard. */
static void write_thread_drops(struct pw_drain *s, struct pw_producer *p)
{
	for (uint32_t i = 0; i < PW_DROP_SLOTS; i++) {
		struct pw_raw_thread_lost l = {atomic_load_explicit(&p->h->thread_drops[i].tid, memory_order_relaxed), 0,
					       atomic_load_explicit(&p->h->thread_drops[i].dropped, memory_order_relaxed)};
		if (l.tid && l.dropped_total)
			raw_chunk(s, p, PW_CHUNK_THREAD_LOST, &l, sizeof l, NULL, 0);
	}
}

/* The stacks the process's threads took, and their ticks, from its lanes' counters. Under the fault guard. */
static void sum_stack_costs(const struct pw_producer *p, struct pw_raw_end *end)
{
	struct pw_lane *lanes = pw_seg_lanes(p->h);
	for (uint32_t i = 0; i < p->geo.lane_count; i++) {
		end->stacks += atomic_load_explicit(&lanes[i].stacks, memory_order_relaxed);
		end->stack_ticks += atomic_load_explicit(&lanes[i].stack_ticks, memory_order_relaxed);
	}
}

/* The process is gone (or the session is over): last drain, END chunk, and the segment is removed unless
 * its records could not be written (then it stays for salvage). */
void pw_producer_finish(struct pw_drain *s, struct pw_producer *p, int still_running)
{
	volatile int32_t rank = -1, world = 0; /* set under the fault guard (setjmp) */
	pw_producer_drain(s, p);
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
		end.shm_refused = atomic_load(&h->shm_refused);
		sum_stack_costs(p, &end);
		end.io_start_rchar = h->io_start_rchar;
		end.io_start_wchar = h->io_start_wchar;
		end.io_start_valid = h->io_start_valid;
		end.io_own = atomic_load(&h->io_own);
		end.io_loader = atomic_load(&h->io_loader);
		end.io_unflushed = h->io_unflushed;
		end.io_unread = atomic_load(&h->io_unread);
		note_shm_held(p, pw_seg_lanes(h));
		end.shm_peak = p->shm_peak;
		write_thread_drops(s, p);
		rank = __atomic_load_n(&h->rank, __ATOMIC_RELAXED);
		world = __atomic_load_n(&h->world_size, __ATOMIC_RELAXED);
		SEGMENT_READ_END();
	}
write_end:
	write_clock(s, p);
	raw_chunk(s, p, PW_CHUNK_END, &end, sizeof end, NULL, 0);
	if (p->write_failed)
		log_line(s, "pid %d: records kept in shared memory (%s): `profwrap salvage %.*s` writes them once "
			 "there is room", (int)p->pid, p->shm_name, (int)(strlen(s->raw_dir) - 4), s->raw_dir);
	else if (p->shm_name[0])
		shm_unlink(p->shm_name);
	if (rank >= 0 && world >= 1 && (rank != p->rank || world != p->world))
		set_rank(s, p, rank, world);
	producer_free(p);
}

void pw_drain_unrecorded(struct pw_drain *s, const struct pw_unrecorded *u)
{
	struct pw_producer p = {.sock = -1, .raw_fd = -1, .pid = u->pid};
	char host[256] = "";
	uint32_t image, argv_len = u->argv_len < sizeof u->argv ? u->argv_len : sizeof u->argv;
	gethostname(host, sizeof host - 1);
	p.rank = u->rank < 0 ? -1 : u->rank;
	p.world = u->world_size < 1 ? 1 : u->world_size;
	if ((p.raw_fd = open_raw(s, &p, host, (uint32_t)strlen(host), &image)) < 0)
		return;
	/* its start on the monotonic clock, as its ticks (none were read), from when it wrote its record */
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec, mono = pw_clock_mono_ns();
	uint64_t ago = real > u->start_realtime_ns ? real - u->start_realtime_ns : 0;
	struct pw_clock_pair start = {mono > ago ? mono - ago : mono, mono > ago ? mono - ago : mono};
	struct pw_raw_proc proc = {u->pid, u->ppid, p.rank, p.world, PW_CLOCK_MONOTONIC, 0, start, u->start_realtime_ns,
				   argv_len, 0, (uint32_t)strlen(host), image};
	char strs[sizeof u->argv + sizeof host];
	memcpy(strs, u->argv, argv_len);
	memcpy(strs + argv_len, host, proc.host_len);
	struct pw_raw_end end = {.how = PW_END_UNRECORDED, .end_ticks = start.ticks, .unrecorded_why = u->why};
	if (pw_raw_write_header(p.raw_fd) == 0) {
		p.raw_size = sizeof(struct pw_raw_file_header);
		raw_chunk(s, &p, PW_CHUNK_PROC, &proc, sizeof proc, strs, argv_len + proc.host_len);
		raw_chunk(s, &p, PW_CHUNK_END, &end, sizeof end, NULL, 0);
	}
	s->processes++;
	close(p.raw_fd);
}

void pw_drain_free(struct pw_drain *s)
{
	for (size_t i = 0; i < s->nraw; i++)
		free(s->raw_names[i]);
	free(s->raw_names);
	free(s->pids);
	free(s->buf);
	*s = (struct pw_drain){0};
}
