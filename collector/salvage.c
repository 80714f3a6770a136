#define _GNU_SOURCE
#include "salvage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/pw_clock.h"
#include "../common/pw_ring.h"
#include "../common/pw_session.h"
#include "ingest/drain.h"
#include "lib/rawfile.h"
#include "lib/session_files.h"
#include "render.h"

#define SHM_DIR "/dev/shm"

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A process is gone when /proc has no entry for it or only its zombie. */
static int process_alive(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* This user's segment names in /dev/shm ("profwrap.<uid>.<pid>.<nonce>"), as a NULL-terminated array the caller
 * frees with free_names. */
static char **segment_names(void)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "profwrap.%d.", (int)getuid());
	DIR *d = opendir(SHM_DIR);
	size_t n = 0, cap = 16;
	char **names = calloc(cap, sizeof *names);
	if (!d || !names) {
		if (d)
			closedir(d);
		return names;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (n + 1 == cap) {
			char **more = realloc(names, 2 * cap * sizeof *names);
			if (!more)
				break;
			names = more;
			cap *= 2;
		}
		if ((names[n] = strdup(e->d_name)))
			names[++n] = NULL;
	}
	closedir(d);
	return names;
}

static void free_names(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* A segment opened for salvage: mapped read-write, private to this user, its layout checked. */
struct segment {
	char name[PW_SHM_NAME_MAX]; /* "/profwrap...." */
	void *map;
	uint64_t size;
	pid_t pid;
	uint32_t clock_kind;
	uint64_t start_realtime_ns;
	char output[4096];  /* its output directory, "" when it has none */
	char session[3072]; /* its session directory, "" when it has none */
};

static void segment_close(struct segment *g)
{
	if (g->map)
		munmap(g->map, g->size);
	g->map = NULL;
}

/* Opens and maps /dev/shm/<leaf>. Returns 0, or -1 when it is not a readable segment of ours. The header is
 * read once here into the struct; reading past a truncated segment cannot happen (the size is fstat's). */
static int segment_open(const char *leaf, struct segment *g)
{
	memset(g, 0, sizeof *g);
	snprintf(g->name, sizeof g->name, "/%s", leaf);
	int fd = shm_open(g->name, O_RDWR, 0);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != getuid() || (st.st_mode & 077) ||
	    (uint64_t)st.st_size < sizeof(struct pw_seg_header)) {
		close(fd);
		return -1;
	}
	g->size = (uint64_t)st.st_size;
	g->map = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (g->map == MAP_FAILED) {
		g->map = NULL;
		return -1;
	}
	struct pw_seg_geometry geo;
	struct pw_seg_header *h = g->map;
	if (pw_seg_geometry_read(h, g->size, &geo) < 0) {
		segment_close(g);
		return -1;
	}
	g->pid = h->pid;
	g->clock_kind = h->clock_kind;
	g->start_realtime_ns = h->start_realtime_ns;
	uint32_t len = 0;
	const char *out = pw_arena_get_in(h, &geo, h->output_ref, &len);
	if (out && len < sizeof g->output)
		snprintf(g->output, sizeof g->output, "%.*s", (int)len, out);
	const char *session = pw_arena_get_in(h, &geo, h->session_ref, &len);
	if (session && len < sizeof g->session)
		snprintf(g->session, sizeof g->session, "%.*s", (int)len, session);
	return 0;
}

/* Whether the collector of a session runs: it holds <session>/alive locked. A segment without a session is
 * nobody's to wait for. */
static int collector_alive(const char *session)
{
	char path[3200];
	if (!session[0] || pw_session_path(session, PW_SESSION_ALIVE, path, sizeof path))
		return 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/* What a raw trace holds, by a walk over its chunk headers. */
struct raw_state {
	uint64_t whole;  /* bytes of whole chunks */
	int has_end;
	int has_proc;
	struct pw_raw_proc proc;
};

static int raw_scan(int fd, struct raw_state *st)
{
	struct stat sb;
	struct pw_raw_file_header fh;
	memset(st, 0, sizeof *st);
	if (fstat(fd, &sb) < 0 || pread(fd, &fh, sizeof fh, 0) != (ssize_t)sizeof fh ||
	    memcmp(fh.magic, PW_RAW_MAGIC, sizeof fh.magic) != 0 || fh.header_size != sizeof fh)
		return -1;
	uint64_t off = sizeof fh, size = (uint64_t)sb.st_size;
	while (off + sizeof(struct pw_raw_chunk) <= size) {
		struct pw_raw_chunk c;
		if (pread(fd, &c, sizeof c, (off_t)off) != (ssize_t)sizeof c)
			break;
		uint64_t next = off + sizeof c + (((uint64_t)c.len + 7) & ~7ull);
		if (next > size || (c.type == 0 && c.len == 0)) /* cut short, or the zeros a crash can leave */
			break;
		if (off == sizeof fh && c.type == PW_CHUNK_PROC && c.len >= sizeof st->proc &&
		    pread(fd, &st->proc, sizeof st->proc, (off_t)(off + sizeof c)) == (ssize_t)sizeof st->proc)
			st->has_proc = 1;
		st->has_end |= c.type == PW_CHUNK_END;
		off = next;
	}
	st->whole = off;
	return st->has_proc ? 0 : -1;
}

/* "...-<pid>.pwt" or "...-<pid>.<image>.pwt" */
static int raw_name_has_pid(const char *name, pid_t pid)
{
	char tail[32];
	size_t n = strlen(name);
	int k = snprintf(tail, sizeof tail, "-%d.", (int)pid);
	if (n < 4 || strcmp(name + n - 4, ".pwt") != 0)
		return 0;
	for (const char *at = strstr(name, tail); at; at = strstr(at + 1, tail)) {
		const char *rest = at + k;
		if (strcmp(rest, "pwt") == 0)
			return 1;
		size_t digits = strspn(rest, "0123456789");
		if (digits && strcmp(rest + digits, ".pwt") == 0)
			return 1;
	}
	return 0;
}

enum raw_match { RAW_NONE, RAW_RESUME, RAW_FINISHED, RAW_BUSY };

/* Finds g's raw trace in raw_dir: the file of that pid and start time. RAW_RESUME gives it open (locked, cut
 * back to its whole chunks, at its end) in *res; RAW_FINISHED: it has its END (the collector died before
 * removing the segment); RAW_BUSY: a live collector holds it. */
static enum raw_match find_raw(const char *raw_dir, const struct segment *g, struct pw_raw_resume *res,
			       char *name, size_t namelen)
{
	DIR *d = opendir(raw_dir);
	enum raw_match m = RAW_NONE;
	if (!d)
		return m;
	for (struct dirent *e; m == RAW_NONE && (e = readdir(d));) {
		if (!raw_name_has_pid(e->d_name, g->pid))
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		struct raw_state st;
		if (fd < 0)
			continue;
		/* scanned once locked: another salvage may have finished the file in the meantime */
		int locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
		if (raw_scan(fd, &st) < 0 || st.proc.pid != g->pid || st.proc.start_realtime_ns != g->start_realtime_ns) {
			close(fd);
			continue;
		}
		if (!locked) {
			m = RAW_BUSY;
		} else if (st.has_end) {
			m = RAW_FINISHED;
		} else if (ftruncate(fd, (off_t)st.whole) == 0 && lseek(fd, (off_t)st.whole, SEEK_SET) >= 0) {
			snprintf(name, namelen, "%s", e->d_name);
			*res = (struct pw_raw_resume){fd, st.whole, name, st.proc.rank, st.proc.world_size};
			m = RAW_RESUME;
			continue; /* keeps fd */
		}
		close(fd);
	}
	closedir(d);
	return m;
}

/* Salvages one segment of out into d. Returns 1 when its records were written, 0 when it was left as it was. */
static int salvage_segment(struct pw_drain *d, struct segment *g, struct pw_salvage_result *r)
{
	if (collector_alive(g->session)) { /* it will drain this one, or has the hello still to read */
		r->busy++;
		return 0;
	}
	struct pw_raw_resume res = {.fd = -1};
	char name[NAME_MAX + 1];
	enum raw_match m = find_raw(d->raw_dir, g, &res, name, sizeof name);
	if (m == RAW_BUSY) {
		r->busy++;
		return 0;
	}
	if (m == RAW_FINISHED) {
		shm_unlink(g->name);
		return 0;
	}
	int resume = m == RAW_RESUME; /* else the collector died before it started the file: a new one */
	/* the calibration pairs written from here on must be in the ticks of the process's records */
	pw_clock_init(g->clock_kind == PW_CLOCK_TSC ? "tsc" : "monotonic");
	struct pw_producer *p = pw_producer_adopt(d, g->map, g->size, g->name, resume ? &res : NULL);
	if (!p) {
		if (resume)
			close(res.fd);
		return 0;
	}
	g->map = NULL; /* the producer's now */
	uint64_t events = d->events, dropped = d->dropped;
	int alive = process_alive(g->pid);
	pw_producer_finish(d, p, alive);
	int fd = shm_open(g->name, O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0) { /* its records could not all be written (out of disk space): they wait there */
		r->kept++;
		close(fd);
	}
	r->processes++;
	r->running += alive != 0;
	r->events += d->events - events;
	r->dropped += d->dropped - dropped;
	return 1;
}

/* Whether a segment's session is one of those that wrote into the output directory (its session files): a
 * segment of an earlier run, gone from the directory (-f), or of another that never wrote there, is not its. */
static int of_sessions(char *const *sessions, const char *session)
{
	for (size_t i = 0; session[0] && sessions[i]; i++)
		if (strcmp(sessions[i], session) == 0)
			return 1;
	return 0;
}

int pw_salvage(const char *out, int quiet, struct pw_salvage_result *r, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct pw_drain d = {.quiet = quiet};
	memset(r, 0, sizeof *r);
	if (!realpath(out, real))
		return fail(err, errlen, "%s: %s", out, strerror(errno));
	if (snprintf(d.raw_dir, sizeof d.raw_dir, "%s/raw", real) >= (int)sizeof d.raw_dir)
		return fail(err, errlen, "%s: path too long", out);
	struct stat st;
	if (lstat(d.raw_dir, &st) < 0 || !S_ISDIR(st.st_mode)) /* a link named raw: not ours to write through */
		return fail(err, errlen, "%s: no raw traces here (not a profwrap output directory)", out);
	char **sessions = pw_session_dirs(d.raw_dir);
	if (!sessions)
		return fail(err, errlen, "out of memory");
	pw_drain_catch_faults();
	char **names = segment_names();
	for (size_t i = 0; names && names[i]; i++) {
		struct segment g;
		if (segment_open(names[i], &g) < 0)
			continue;
		char seg_real[PATH_MAX];
		if (g.output[0] && realpath(g.output, seg_real) && strcmp(seg_real, real) == 0 &&
		    of_sessions(sessions, g.session))
			salvage_segment(&d, &g, r);
		segment_close(&g);
	}
	free_names(names);
	pw_session_dirs_free(sessions);
	pw_drain_free(&d);
	return 0;
}

/* Renders dir's reports again after a salvage wrote into it. */
static void render(const char *dir, int quiet)
{
	char err[1024];
	if (pw_render(dir, NULL, 0, 0, NULL, err, sizeof err) < 0 && !quiet)
		fprintf(stderr, "profwrap: %s\n", err);
}

/* Session directories "s-<pid>-<nonce>" of CLIs that are gone: their socket, status and lock, then the
 * directory. Preload-only directories ("o-<hash>") stay: their lock is how a job's processes agree on who
 * starts its collector, and a stale socket there is replaced by the next collector. */
static void clean_sessions(struct pw_clean_result *r)
{
	char base[3072];
	if (pw_session_base(base, sizeof base) < 0)
		return;
	DIR *d = opendir(base);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		int pid;
		char rest[64];
		if (sscanf(e->d_name, "s-%d-%63s", &pid, rest) != 2 || pid <= 0 || process_alive(pid))
			continue;
		char path[3200];
		static const char *const leaves[] = {"sock", "status", "lock"};
		int dfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
			unlinkat(dfd, leaves[i], 0);
		close(dfd);
		snprintf(path, sizeof path, "%s/%s", base, e->d_name);
		r->sessions_removed += rmdir(path) == 0;
	}
	closedir(d);
}

int pw_clean(int quiet, struct pw_clean_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	char **names = segment_names();
	if (!names)
		return fail(err, errlen, "out of memory");
	for (size_t i = 0; names[i]; i++) {
		int uid, pid;
		char leaf[PW_SHM_NAME_MAX + 1];
		struct stat st;
		snprintf(leaf, sizeof leaf, "/%s", names[i]);
		if (sscanf(names[i], "profwrap.%d.%d.", &uid, &pid) != 2 || process_alive(pid)) {
			r->in_use++;
			continue;
		}
		struct segment g;
		if (segment_open(names[i], &g) == 0) {
			if (collector_alive(g.session)) {
				r->in_use++;
				segment_close(&g);
				continue;
			}
			char dir[4096];
			snprintf(dir, sizeof dir, "%s", g.output);
			segment_close(&g);
			struct pw_salvage_result sr = {0};
			char why[512];
			if (dir[0] && pw_salvage(dir, quiet, &sr, why, sizeof why) == 0 && sr.processes) {
				r->segments_salvaged += sr.processes;
				render(dir, quiet);
				snprintf(r->salvaged_into, sizeof r->salvaged_into, "%s", dir);
			}
			if (sr.busy || sr.kept)
				continue; /* a live collector is finishing them, or they wait for room on the disk */
		}
		/* Salvaged if it could be; what is left of a dead process is garbage now. */
		int fd = shm_open(leaf, O_RDONLY, 0);
		uint64_t size = fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
		if (fd >= 0)
			close(fd);
		if (shm_unlink(leaf) == 0) {
			r->segments_removed++;
			r->bytes_removed += size;
		}
	}
	free_names(names);
	clean_sessions(r);
	return 0;
}
