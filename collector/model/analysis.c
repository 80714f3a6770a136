#define _GNU_SOURCE
#include "../lib/hash_index.h"
#include "analysis.h"

#include "../../common/pw_session.h"
#include "../lib/file_names.h"
#include "../lib/paths.h"
#include "../lib/session_files.h"
#include "../symbols/symbolize.h"
#include "call_stacks.h"
#include "findings.h"
#include "gpu_activity.h"
#include "gpu_analysis.h"
#include "ranges.h"
#include "timeline.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -1)
#define FD_TABLE_MAX (1u << 18)
#define FD_BINDINGS 4

/* One binding of a descriptor number. */
struct fd_binding {
	uint64_t from_ns;  /* the end of the open/dup that made it (the number is taken by then) */
	uint64_t until_ns; /* the start of the close (or of the call that replaced it) */
	uint64_t ns;       /* in its open and the calls on it before its first write: its save's first calls */
	int32_t file;      /* file index + 1, 0 for a file whose path is unknown */
	uint32_t save;     /* index + 1 into the image's saves from its first write on (a dup shares its
			    * source's), else 0 */
};

/* What one descriptor number referred to over time: the last FD_BINDINGS bindings, oldest first. The
 * records of a process come lane by lane, so one thread's close(5) and another's open() that got 5 again
 * can arrive in either order; a read is attributed by its time to the binding that held then. */
struct fd_history {
	struct fd_binding b[FD_BINDINGS];
	uint32_t n;
};

/* An open of a file (with its dups) in which the file was written, open to close: one save of a checkpoint
 * rewritten in place, so that six saves of one file are not one file written once. */
struct save {
	uint32_t file; /* index into the rank's files */
	uint64_t bytes;
	uint64_t ns; /* in the calls on it but reads: open, writes, syncs, close (binding_time) */
};

static uint64_t hash_str(const char *s, size_t len)
{
	return pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, s, len));
}

/* An element of arr (elements of stride bytes that start with their name) looked for by name. */
struct name_probe {
	const void *arr;
	size_t stride;
	const char *s;
	size_t len;
};

static int name_eq(const void *ctx, uint32_t pos)
{
	const struct name_probe *p = ctx;
	const char *cand = *(char *const *)((const char *)p->arr + (size_t)pos * p->stride);
	return strncmp(cand, p->s, p->len) == 0 && cand[p->len] == '\0';
}

/* The position of the element of arr named s[0..len) (hash h), or (size_t)-1. */
static size_t index_find(const struct pw_hix *ix, const void *arr, size_t stride, const char *s, size_t len,
			 uint64_t h)
{
	struct name_probe p = {arr, stride, s, len};
	int64_t pos = pw_hix_find(ix, h, name_eq, &p);
	return pos < 0 ? (size_t)-1 : (size_t)pos;
}

static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return arr;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(arr, ncap * elem);
	if (!n)
		return NULL;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	*cap = ncap;
	return n;
}

/* A NUL-terminated copy of len bytes that may themselves hold NULs (argv). */
static char *dup_bytes(const char *s, size_t len)
{
	char *d = malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = 0;
	}
	return d;
}

struct rank_state {
	struct pw_rank_report r;
	int min_world; /* the smallest world size its processes were given */
	size_t procs_cap, files_cap, libs_cap;
	struct pw_hix files_ix, libs_ix;
};

/* A child reaped by a wait: which pid, its status, who waited and on which host (pids repeat across hosts). */
struct reaped {
	int pid;
	int status;
	int waiter;
	const char *host;
};

/* A vfork child that exec'd: it records itself from its exec on, unless what it exec'd cannot be profiled
 * (static, set-user-ID); then this is all the report has of it. (A fork child records from the fork.) */
struct spawned {
	int pid, ppid, proc_rank;
	size_t rank; /* index of the parent's rank_state */
	uint64_t start_ns, end_ns;
	char *exec_path;
};

#define BLOCKED_DEPTH 64
struct blocked_span {
	uint64_t start;
	uint64_t ns[4]; /* counted per category of note_main_blocked */
};

struct pending_io {
	int64_t fd;
	uint64_t t0_ns, dur_ns, bytes;
	int write;
	uint32_t seen_on; /* the file it was on when read, index + 1 (0: none): the binding may be forgotten by the
			   * image's end (FD_BINDINGS per descriptor) */
	uint32_t seen_save; /* likewise its save (a write's), index + 1 (0: none) */
};

#define PENDING_MAX 65536u
#define SAVES_MAX 65536u /* saves per image (24 bytes each): a later one's writes count on its file alone */

/* State while one raw file is read. */
struct file_ctx {
	struct blocked_span blocked[BLOCKED_DEPTH]; /* the main thread's blocked calls (note_main_blocked) */
	size_t nblocked;
	struct analysis_state *as;
	struct rank_state *rs;
	struct pw_proc *proc; /* re-fetched through proc_index: the array may move */
	size_t proc_index;
	struct fd_history *fds; /* by fd number */
	size_t fd_cap;
	/* reads and writes on a descriptor bound to no file, or to one not ended yet, when they were read: a
	 * thread's lane can reach the file before the lane holding the descriptor's open or close; looked up
	 * again once the image is read (the first PENDING_MAX; later ones count where they were read) */
	struct pending_io *pending;
	size_t npending, pending_cap;
	struct save *saves; /* folded into the files' figures at the image's end (fold_saves) */
	size_t nsaves, saves_cap;
	uint32_t *tids;
	size_t ntids, tids_cap;
	uint64_t lost[1024];
	int salvaged; /* past the SALVAGE chunk: the records are salvage's */
	uint64_t last_ns;
	struct pw_gpu_proc gpu; /* this image's GPU allocations */
	struct pw_act_file act; /* this image's correlation tables (GPU activity) */
	struct pw_ranges_file *ranges; /* this image's open NVTX ranges and capture records */
	struct pw_stacks_file *stacks; /* this image's modules, stacks and events waiting for Python frames */
	double ns_per_tick; /* of the image's clock */
	int oom;
};

struct analysis_state {
	uint32_t files; /* raw files read so far: numbers each image for the GPU analysis */
	struct rank_state *ranks;
	size_t nranks, ranks_cap;
	struct reaped *reaped;
	size_t nreaped, reaped_cap;
	struct spawned *spawned;
	size_t nspawned, spawned_cap;
	struct pw_symbolizer *sym; /* one for every file: its cache of modules is shared across processes */
	const struct pw_tl_limits *timeline_limits; /* NULL: the trace's */
};

/* The group of a rank, or of the launcher processes of a host (rank < 0). */
static struct rank_state *rank_get(struct analysis_state *as, int rank, const char *host, size_t host_len)
{
	if (rank < 0)
		rank = PW_RANK_LAUNCHER;
	for (size_t i = 0; i < as->nranks; i++) {
		const struct pw_rank_report *r = &as->ranks[i].r;
		if (r->rank == rank && (rank != PW_RANK_LAUNCHER || (r->host ? strlen(r->host) == host_len &&
									      memcmp(r->host, host, host_len) == 0
									: host_len == 0)))
			return &as->ranks[i];
	}
	struct rank_state *n = grow(as->ranks, &as->ranks_cap, as->nranks + 1, sizeof *n);
	if (!n)
		return NULL;
	as->ranks = n;
	struct rank_state *rs = &as->ranks[as->nranks++];
	memset(rs, 0, sizeof *rs);
	rs->r.rank = rank;
	rs->r.start_ns = UINT64_MAX;
	if (host_len && !(rs->r.host = strndup(host, host_len)))
		return NULL;
	for (int e = 0; e < PW_EV_COUNT; e++) {
		rs->r.calls[e].min_ns = UINT64_MAX;
		rs->r.nested[e].min_ns = UINT64_MAX;
	}
	return rs;
}

/* Pipes and sockets, as /proc/PID/fd names them and as the channel records are named (bind_channel). */
static int is_stream_name(const char *path)
{
	return strncmp(path, "pipe:[", 6) == 0 || strncmp(path, "socket:[", 8) == 0;
}

static size_t file_index(struct file_ctx *c, const char *path, size_t len)
{
	struct rank_state *rs = c->rs;
	uint64_t h = hash_str(path, len);
	size_t i = index_find(&rs->files_ix, rs->r.files, sizeof(struct pw_file_stat), path, len, h);
	if (i != (size_t)-1)
		return i;
	struct pw_file_stat *n = grow(rs->r.files, &rs->files_cap, rs->r.nfiles + 1, sizeof *n);
	char *copy = strndup(path, len);
	if (!n || !copy || pw_hix_add(&rs->files_ix, h, (uint32_t)rs->r.nfiles) < 0) {
		if (n)
			rs->r.files = n;
		free(copy);
		c->oom = 1;
		return (size_t)-1;
	}
	rs->r.files = n;
	rs->r.files[rs->r.nfiles].path = copy;
	rs->r.files[rs->r.nfiles].stream = is_stream_name(copy);
	return rs->r.nfiles++;
}

/* The binding of fd at time t: the latest one made before t and not ended by t; NULL if none. */
static struct fd_binding *binding_at(const struct file_ctx *c, int64_t fd, uint64_t t)
{
	if (fd < 0 || (uint64_t)fd >= c->fd_cap)
		return NULL;
	struct fd_history *h = &c->fds[fd];
	for (int i = (int)h->n - 1; i >= 0; i--)
		if (h->b[i].from_ns <= t && t < h->b[i].until_ns)
			return &h->b[i];
	return NULL;
}

static struct pw_file_stat *file_of_binding(const struct file_ctx *c, const struct fd_binding *b)
{
	return b && b->file ? &c->rs->r.files[b->file - 1] : NULL;
}

static struct pw_file_stat *file_of_fd(struct file_ctx *c, int64_t fd, uint64_t t)
{
	return file_of_binding(c, binding_at(c, fd, t));
}

/* The save of binding b, made at its first write (or dup); NULL for a binding on no file, a pipe or a
 * socket, or past SAVES_MAX. */
static struct save *save_of(struct file_ctx *c, struct fd_binding *b)
{
	const struct pw_file_stat *f = file_of_binding(c, b);
	if (!f || f->stream || (!b->save && c->nsaves == SAVES_MAX))
		return NULL;
	if (!b->save) {
		if (pw_reserve(&c->saves, &c->saves_cap, c->nsaves + 1, sizeof *c->saves)) {
			c->oom = 1;
			return NULL;
		}
		c->saves[c->nsaves] = (struct save){(uint32_t)(b->file - 1), 0, b->ns};
		b->save = (uint32_t)++c->nsaves;
	}
	return &c->saves[b->save - 1];
}

/* The time of a call on binding b but a read (an open, a write, an fstat, a sync, a truncation, a close): its
 * save's once it has one. */
static void binding_time(struct file_ctx *c, struct fd_binding *b, uint64_t dur)
{
	if (b && b->save)
		c->saves[b->save - 1].ns += dur;
	else if (b)
		b->ns += dur;
}

/* Binds fd to a file from time t on, after an open of ns (0: not an open) or as a dup sharing save (index +
 * 1, 0: none); an unknown file ((size_t)-1: path not recorded) binds it to nothing, so the fd's earlier file
 * does not collect another file's I/O. A binding made after t (seen first) ends this one where it starts. */
static void fd_bind(struct file_ctx *c, int64_t fd, size_t file, uint64_t t, uint64_t ns, uint32_t save)
{
	if (fd < 0 || fd >= FD_TABLE_MAX)
		return;
	if ((uint64_t)fd >= c->fd_cap) {
		size_t old = c->fd_cap;
		struct fd_history *n = grow(c->fds, &c->fd_cap, (size_t)fd + 1, sizeof *n);
		if (!n) {
			c->oom = 1;
			return;
		}
		c->fds = n;
		memset(c->fds + old, 0, (c->fd_cap - old) * sizeof *n);
	}
	struct fd_history *h = &c->fds[fd];
	uint32_t at = h->n;
	while (at > 0 && h->b[at - 1].from_ns > t)
		at--;
	if (h->n == FD_BINDINGS) { /* forget the oldest */
		if (at == 0)
			return;
		memmove(h->b, h->b + 1, (FD_BINDINGS - 1) * sizeof h->b[0]);
		h->n--;
		at--;
	}
	memmove(h->b + at + 1, h->b + at, (h->n - at) * sizeof h->b[0]);
	h->n++;
	h->b[at] = (struct fd_binding){.from_ns = t,
				       .until_ns = at + 1 < h->n ? h->b[at + 1].from_ns : UINT64_MAX,
				       .ns = ns,
				       .file = file == (size_t)-1 ? 0 : (int32_t)file + 1,
				       .save = save};
	if (at > 0 && h->b[at - 1].until_ns > t)
		h->b[at - 1].until_ns = t;
}

/* Ends the binding fd had at time t (a close). */
static void fd_unbind(struct file_ctx *c, int64_t fd, uint64_t t)
{
	struct fd_binding *b = binding_at(c, fd, t);
	if (b)
		b->until_ns = t;
}

/* The file a call that names a path names (an open, a stat): a relative path taken from the directory it was
 * relative to, the working directory the record carries or the directory descriptor (bound at the call's
 * start), so that one file has one name. A relative path whose directory is not known (a descriptor opened
 * behind our back) stays as written. Returns the file's index, or (size_t)-1. */
static size_t named_file(struct file_ctx *c, const struct pw_raw_event *e)
{
	const char *dir = e->cwd;
	size_t dir_len = e->cwd_len;
	if (e->dirfd != AT_FDCWD) {
		const struct pw_file_stat *d = file_of_fd(c, e->dirfd, e->t0_ns);
		dir = d && !d->stream ? d->path : NULL;
		dir_len = dir ? strlen(dir) : 0;
	}
	char path[8192];
	size_t len = pw_path_resolve(dir, dir_len, e->dirfd == AT_FDCWD, e->str, e->str_len, path, sizeof path);
	return len ? file_index(c, path, len) : file_index(c, e->str, e->str_len);
}

/* What a record does to the descriptors. Returns the file an open or a descriptor named at start bound, else
 * (size_t)-1. */
static size_t follow_fd(struct file_ctx *c, const struct pw_raw_event *e)
{
	int64_t fd, from;
	struct fd_binding *src;
	const struct save *save;
	size_t file = (size_t)-1;
	int open = pw_events[e->rec->h.type].kind == PW_K_OPEN;
	switch (pw_fd_effect_of(e, &fd, &from)) {
	case PW_FD_BIND:
		file = open ? named_file(c, e) : file_index(c, e->str, e->str_len);
		fd_bind(c, fd, file, e->t1_ns, open && e->t1_ns > e->t0_ns ? e->t1_ns - e->t0_ns : 0, 0);
		break;
	case PW_FD_UNBIND: /* a close, or an open whose path was not recorded */
		if (pw_events[e->rec->h.type].kind == PW_K_CLOSE)
			fd_unbind(c, fd, e->t0_ns);
		else
			fd_bind(c, fd, (size_t)-1, e->t1_ns, 0, 0);
		break;
	case PW_FD_COPY: /* the same open file: its writes are the source's save */
		src = binding_at(c, from, e->t0_ns);
		save = save_of(c, src);
		fd_bind(c, fd, src && src->file ? (size_t)src->file - 1 : (size_t)-1, e->t1_ns, 0,
			save ? (uint32_t)(save - c->saves) + 1 : 0);
		break;
	case PW_FD_NONE:
		break;
	}
	return file;
}

/* The descriptors a pipe, socket pair, socket or accept made, bound to the names the kernel gives them (an
 * inode not recorded binds to nothing). */
static void bind_channel(struct file_ctx *c, const struct pw_raw_event *e)
{
	if (e->rec->h.err)
		return;
	struct pw_channel ch = pw_get_channel(e->rec->arg0, e->rec->arg1);
	int pipe = e->rec->h.type == PW_EV_PIPE || e->rec->h.type == PW_EV_PIPE2;
	for (int i = 0; i < 2; i++) {
		if (ch.fd[i] < 0)
			continue;
		char name[32];
		int n = snprintf(name, sizeof name, "%s:[%u]", pipe ? "pipe" : "socket", ch.ino[i]);
		fd_bind(c, ch.fd[i], ch.ino[i] ? file_index(c, name, (size_t)n) : (size_t)-1, e->t1_ns, 0, 0);
	}
}

/* The file a metadata call names: an empty path is the descriptor's own file (AT_EMPTY_PATH). */
static struct pw_file_stat *stat_file(struct file_ctx *c, const struct pw_raw_event *e)
{
	if (!e->str_len)
		return file_of_fd(c, e->dirfd, e->t0_ns);
	size_t i = named_file(c, e);
	return i == (size_t)-1 ? NULL : &c->rs->r.files[i];
}

static void on_proc(void *ctx, const struct pw_raw_proc_view *v)
{
	struct file_ctx *c = ctx;
	c->rs = rank_get(c->as, v->proc->rank, v->host, v->proc->host_len);
	if (!c->rs) {
		c->oom = 1;
		return;
	}
	struct rank_state *rs = c->rs;
	struct pw_proc *n = grow(rs->r.procs, &rs->procs_cap, rs->r.nprocs + 1, sizeof *n);
	if (!n) {
		c->oom = 1;
		c->rs = NULL;
		return;
	}
	rs->r.procs = n;
	c->proc_index = rs->r.nprocs++;
	struct pw_proc *p = &rs->r.procs[c->proc_index];
	p->pid = v->proc->pid;
	p->ppid = v->proc->ppid;
	p->rank = v->proc->rank;
	p->image = v->proc->image;
	p->argv = dup_bytes(v->argv, v->proc->argv_len);
	for (uint32_t i = 0; p->argv && i < v->proc->argv_len; i++)
		if (p->argv[i] == 0)
			p->argv[i] = ' ';
	p->exe = strndup(v->exe, v->proc->exe_len);
	p->start_ns = v->start_ns;
	p->exit_code = -1;
	c->ns_per_tick = v->ns_per_tick;
	p->timeline_image = PW_TL_NONE;
	if (!rs->r.timeline && !(rs->r.timeline = pw_tl_new(c->as->timeline_limits)))
		c->oom = 1;
	else if (rs->r.timeline)
		p->timeline_image = pw_tl_image(rs->r.timeline, v->start_ns);
	c->last_ns = v->start_ns;
	if (v->proc->world_size > rs->r.world_size)
		rs->r.world_size = v->proc->world_size;
	if (rs->r.nprocs == 1 || v->proc->world_size < rs->min_world)
		rs->min_world = v->proc->world_size;
	if (!rs->r.host && v->proc->host_len)
		rs->r.host = strndup(v->host, v->proc->host_len);
	if (v->start_ns < rs->r.start_ns) {
		rs->r.start_ns = v->start_ns;
		rs->r.start_realtime_ns = v->proc->start_realtime_ns;
	}
}

static void note_tid(struct file_ctx *c, uint32_t tid)
{
	for (size_t i = c->ntids; i-- > 0;)
		if (c->tids[i] == tid)
			return;
	uint32_t *n = grow(c->tids, &c->tids_cap, c->ntids + 1, sizeof *n);
	if (!n)
		return;
	c->tids = n;
	c->tids[c->ntids++] = tid;
}

static void note_reaped(struct file_ctx *c, const struct pw_proc *p, const struct pw_rec_call *rec)
{
	struct reaped *n = grow(c->as->reaped, &c->as->reaped_cap, c->as->nreaped + 1, sizeof *n);
	if (n) {
		c->as->reaped = n;
		c->as->reaped[c->as->nreaped++] = (struct reaped){(int)rec->arg0, (int)rec->arg1, p->pid, c->rs->r.host};
	}
}

static int same_host(const char *a, const char *b)
{
	return !a || !b || strcmp(a, b) == 0;
}

static void note_spawned(struct file_ctx *c, const struct pw_proc *p, const struct pw_raw_event *e)
{
	const struct pw_rec_call *rec = e->rec;
	if (rec->h.type != PW_EV_VFORK || rec->h.err || (int64_t)rec->arg0 <= 0 || !e->str)
		return;
	struct spawned *n = grow(c->as->spawned, &c->as->spawned_cap, c->as->nspawned + 1, sizeof *n);
	if (!n) {
		c->oom = 1;
		return;
	}
	c->as->spawned = n;
	struct spawned *s = &n[c->as->nspawned++];
	*s = (struct spawned){.pid = (int)rec->arg0, .ppid = p->pid, .proc_rank = p->rank,
			      .rank = (size_t)(c->rs - c->as->ranks),
			      .start_ns = e->t0_ns, .end_ns = e->t1_ns};
	s->exec_path = strndup(e->str, e->str_len);
}

/* The vfork children that exec'd and never recorded themselves, as processes of their parent's rank that
 * ended in that exec, their status from the parent's wait (apply_status). */
static void add_unrecorded_children(struct analysis_state *as)
{
	for (size_t i = 0; i < as->nspawned; i++) {
		struct spawned *s = &as->spawned[i];
		struct rank_state *rs = &as->ranks[s->rank];
		int seen = 0;
		for (size_t r = 0; r < as->nranks && !seen; r++) {
			const struct pw_rank_report *rr = &as->ranks[r].r;
			if (!same_host(rr->host, rs->r.host))
				continue;
			for (size_t j = 0; j < rr->nprocs && !seen; j++)
				seen = rr->procs[j].pid == s->pid && rr->procs[j].ppid == s->ppid;
		}
		struct pw_proc *n = seen || !s->exec_path ? NULL
						       : grow(rs->r.procs, &rs->procs_cap, rs->r.nprocs + 1, sizeof *n);
		if (n) {
			rs->r.procs = n;
			struct pw_proc *p = &n[rs->r.nprocs++];
			*p = (struct pw_proc){.pid = s->pid, .ppid = s->ppid, .rank = s->proc_rank, .start_ns = s->start_ns,
					      .end_ns = s->end_ns, .how = PW_END_EXECED, .exit_code = -1,
					      .timeline_image = PW_TL_NONE};
			p->argv = strdup(s->exec_path);
			p->exe = strdup(s->exec_path);
			p->exec_path = s->exec_path;
			s->exec_path = NULL;
		}
		free(s->exec_path);
	}
	free(as->spawned);
	as->spawned = NULL;
	as->nspawned = 0;
}

/* Hands e to this image's call stacks, made on first use. Returns 0 or -1 when out of memory. */
static int stack_event(struct file_ctx *c, const struct pw_proc *p, const struct pw_raw_event *e)
{
	if (!c->stacks && !(c->stacks = pw_stacks_file_init(p->exe)))
		return -1;
	return pw_stacks_event(c->stacks, e);
}

/* The main thread's blocked time, each moment once: a thread's records come in the order its calls ended, so
 * an outer call (MPI_Allreduce) comes after the calls nested in it (its polls, its reads of sockets), whose
 * time it then takes over. The stack holds the intervals counted so far that a later outer call may contain;
 * past its depth the two oldest are merged (an outer call that holds only the second of them then counts a
 * little twice). A call on a pipe or a socket (stream) waits for another process (a shell reading the output
 * of `$(cmd)`, a loader's queue). */
static void note_main_blocked(struct file_ctx *c, struct pw_proc *p, const struct pw_raw_event *e,
			      enum pw_event_kind kind, int mpi, int stream)
{
	enum { WAIT, CHILD, MPI, STREAM, CATEGORIES };
	int cat = mpi ? MPI : stream ? STREAM : kind == PW_K_WAIT ? CHILD : -1;
	if (cat < 0 && (kind == PW_K_SLEEP || kind == PW_K_GPU_SYNC))
		cat = WAIT;
	if (cat < 0 || e->t1_ns < e->t0_ns)
		return;
	uint64_t *total[CATEGORIES] = {&p->main_wait_ns, &p->main_child_wait_ns, &p->main_mpi_ns, &p->main_stream_ns};
	struct blocked_span *st = c->blocked;
	while (c->nblocked && st[c->nblocked - 1].start >= e->t0_ns) {
		c->nblocked--;
		for (int k = 0; k < CATEGORIES; k++)
			*total[k] -= st[c->nblocked].ns[k];
	}
	if (c->nblocked == BLOCKED_DEPTH) {
		for (int k = 0; k < CATEGORIES; k++)
			st[1].ns[k] += st[0].ns[k];
		st[1].start = st[0].start;
		memmove(st, st + 1, (BLOCKED_DEPTH - 1) * sizeof *st);
		c->nblocked--;
	}
	struct blocked_span *top = &st[c->nblocked++];
	memset(top, 0, sizeof *top);
	top->start = e->t0_ns;
	top->ns[cat] = e->t1_ns - e->t0_ns;
	*total[cat] += top->ns[cat];
}

/* Whether a call is a collective over the whole world (every rank makes it, in the same order): an MPI or
 * NCCL collective whose communicator has the world's size (any size when the world's is unknown). */
static int is_world_collective(const struct file_ctx *c, const struct pw_raw_event *e)
{
	enum pw_event ev = e->rec->h.type;
	enum pw_event_kind kind = pw_events[ev].kind;
	uint32_t comm_size;
	if (kind == PW_K_MPI_COLL)
		comm_size = pw_get_mpi_comm(e->rec->arg1).size;
	else if (kind == PW_K_COLL && ev != PW_EV_NCCL_SEND && ev != PW_EV_NCCL_RECV)
		comm_size = pw_get_nccl(((const struct pw_rec_api *)e->rec)->a, 0).nranks;
	else
		return 0;
	int world = c->rs->r.world_size;
	return comm_size > 1 && (world <= 1 || comm_size == (uint32_t)world);
}

static int note_collective(struct pw_coll_entries *ce, uint64_t t0_ns)
{
	if (ce->n >= PW_COLL_ENTRIES_MAX) {
		ce->truncated = 1;
		return 0;
	}
	uint64_t *n = grow(ce->ns, &ce->cap, ce->n + 1, sizeof *n);
	if (!n)
		return -1;
	ce->ns = n;
	ce->ns[ce->n++] = t0_ns;
	return 0;
}

/* What the GPU did is not a call: it arrives late, from CUPTI's own thread, which is no program thread. It
 * goes to the GPU activity model and the timeline only (no call figures, no thread, no process end). */
static void on_activity(struct file_ctx *c, const struct pw_raw_event *e)
{
	if (pw_act_event(&c->rs->r.act, &c->act, e))
		c->oom = 1;
	pw_tl_gpu(c->rs->r.timeline, e);
}

/* NVTX ranges, names and capture windows are annotations, not calls. */
static void on_annotation(struct file_ctx *c, const struct pw_proc *p, const struct pw_raw_event *e)
{
	if (!c->ranges)
		c->ranges = pw_ranges_file_init(p->pid, p->start_ns);
	if (pw_ranges_event(&c->rs->r.ranges, c->ranges, e))
		c->oom = 1;
	pw_tl_range(c->rs->r.timeline, e);
}

/* Loaded objects, deferred Python frames and CPU samples are for the stacks (and samples for the
 * timeline), not calls. */
static void on_stack_record(struct file_ctx *c, const struct pw_proc *p, const struct pw_raw_event *e,
			    enum pw_event_kind kind)
{
	if (stack_event(c, p, e))
		c->oom = 1;
	if (kind == PW_K_SAMPLE)
		pw_tl_sample(c->rs->r.timeline, e);
}

/* A record outside the capture window: followed (descriptors, reaped children), counted nowhere. */
static void on_outside(struct file_ctx *c, const struct pw_proc *p, const struct pw_raw_event *e,
		       enum pw_event_kind kind)
{
	if (kind == PW_K_OPEN || kind == PW_K_DUP || kind == PW_K_CLOSE)
		follow_fd(c, e);
	else if (kind == PW_K_CHANNEL)
		bind_channel(c, e);
	else if (kind == PW_K_WAIT && (int64_t)e->rec->arg0 > 0)
		note_reaped(c, p, e->rec);
	else if (kind == PW_K_FORK)
		note_spawned(c, p, e);
}

/* The call's count, time and failure on its event's row (the nested table for a call inside another). */
static struct pw_call_stat *count_call(struct file_ctx *c, struct pw_proc *p, const struct pw_raw_event *e,
				       uint64_t dur)
{
	p->events++;
	p->salvaged_events += c->salvaged;
	struct pw_call_stat *cs = e->nested ? &c->rs->r.nested[e->rec->h.type] : &c->rs->r.calls[e->rec->h.type];
	cs->count++;
	cs->total_ns += dur;
	if (dur < cs->min_ns)
		cs->min_ns = dur;
	if (dur > cs->max_ns)
		cs->max_ns = dur;
	if (e->rec->h.err)
		cs->errors++;
	return cs;
}

static void note_dlopen(struct file_ctx *c, const struct pw_raw_event *e, uint64_t dur)
{
	const char *path = e->str ? e->str : "(main program)";
	size_t len = e->str ? e->str_len : strlen(path);
	struct rank_state *rs = c->rs;
	uint64_t h = hash_str(path, len);
	size_t i = index_find(&rs->libs_ix, rs->r.libs, sizeof(struct pw_lib_stat), path, len, h);
	if (i == (size_t)-1) {
		struct pw_lib_stat *n = grow(rs->r.libs, &rs->libs_cap, rs->r.nlibs + 1, sizeof *n);
		char *copy = strndup(path, len);
		if (!n || !copy || pw_hix_add(&rs->libs_ix, h, (uint32_t)rs->r.nlibs) < 0) {
			if (n)
				rs->r.libs = n;
			free(copy);
			return;
		}
		rs->r.libs = n;
		rs->r.libs[rs->r.nlibs].path = copy;
		i = rs->r.nlibs++;
	}
	rs->r.libs[i].loads++;
	rs->r.libs[i].load_ns += dur;
	if (e->rec->h.err || !e->rec->ret)
		rs->r.libs[i].failures++;
}

/* The file a call on a descriptor was on at its time (an open: the file it opened), as an index into the
 * rank's files, else PW_TL_NONE. */
static uint32_t file_number(const struct file_ctx *c, const struct pw_file_stat *f)
{
	return f ? (uint32_t)(f - c->rs->r.files) : PW_TL_NONE;
}

/* A file call's time by what it was on: the meta domain's share of a file's time; the calls on pipes and
 * sockets (and those that made them), which are not file I/O. Returns whether the call was one of those. */
static int note_file_domain(struct file_ctx *c, struct pw_file_stat *f, const struct pw_raw_event *e,
			    enum pw_event_kind kind, uint64_t dur)
{
	enum pw_domain d = pw_events[e->rec->h.type].domain;
	if (d != PW_DOM_IO && d != PW_DOM_STDIO && d != PW_DOM_META)
		return 0;
	if (f && d == PW_DOM_META)
		f->meta_ns += dur;
	if (kind != PW_K_CHANNEL && !(f && f->stream))
		return 0;
	c->rs->r.stream_ns += dur;
	return 1;
}

/* A read or a write on file f; a write is also its save's (sv; NULL: none). */
static void count_file_io(struct pw_proc *p, struct pw_file_stat *f, struct save *sv, int write, uint64_t t0,
			  uint64_t dur, uint64_t bytes)
{
	if (sv) {
		sv->bytes += bytes;
		sv->ns += dur;
	}
	if (!write && !f->stream && (!p->first_read_ns || t0 < p->first_read_ns))
		p->first_read_ns = t0;
	f->reads += !write;
	f->writes += write;
	if (write)
		f->write_bytes += bytes;
	else
		f->read_bytes += bytes;
	f->time_ns += dur;
}

/* What a call did, by its kind: bytes, files, children, libraries, GPU work. Returns the file it was on, and in
 * *stream whether that was a pipe or a socket. */
static uint32_t account_call(struct file_ctx *c, struct pw_proc *p, struct pw_call_stat *cs,
			     const struct pw_raw_event *e, enum pw_event_kind kind, uint64_t dur, int *stream)
{
	const struct pw_rec_call *rec = e->rec;
	struct pw_file_stat *f = NULL;
	int pended = 0; /* a read or write looked up again at the image's end (count_pending_io) */
	switch (kind) {
	case PW_K_OPEN: {
		size_t fi = follow_fd(c, e); /* also when the fd is past the fd table */
		if (fi != (size_t)-1) {
			f = &c->rs->r.files[fi];
			f->opens++;
			f->time_ns += dur;
		}
		break;
	}
	case PW_K_DUP:
		follow_fd(c, e);
		break;
	case PW_K_READ:
	case PW_K_WRITE: {
		cs->bytes += rec->arg1;
		if (kind == PW_K_READ)
			p->seen_read_bytes += rec->arg1;
		else
			p->seen_write_bytes += rec->arg1;
		struct fd_binding *bd = binding_at(c, (int64_t)rec->arg0, e->t0_ns);
		struct save *sv = kind == PW_K_WRITE ? save_of(c, bd) : NULL;
		f = file_of_binding(c, bd);
		/* on no binding yet, or on one not ended yet, which a close or reopen read later (another thread's
		 * lane) may end before this call: looked up again at the image's end, while there is room */
		if ((!f || bd->until_ns == UINT64_MAX) && (int64_t)rec->arg0 >= 0 && c->npending < PENDING_MAX &&
		    !pw_reserve(&c->pending, &c->pending_cap, c->npending + 1, sizeof *c->pending)) {
			c->pending[c->npending++] = (struct pending_io){(int64_t)rec->arg0, e->t0_ns, dur, rec->arg1,
								 kind == PW_K_WRITE,
								 f ? file_number(c, f) + 1 : 0,
								 sv ? (uint32_t)(sv - c->saves) + 1 : 0};
			pended = 1;
		} else if (f) {
			count_file_io(p, f, sv, kind == PW_K_WRITE, e->t0_ns, dur, rec->arg1);
		}
		break;
	}
	case PW_K_MPI_COLL:
	case PW_K_MPI_P2P:
		cs->bytes += rec->arg0;
		break;
	case PW_K_MMAP: {
		cs->bytes += rec->arg1;
		struct fd_binding *bd = binding_at(c, (int64_t)rec->arg0, e->t0_ns);
		if ((f = file_of_binding(c, bd)))
			f->time_ns += dur;
		binding_time(c, bd, dur);
		break;
	}
	case PW_K_CLOSE: {
		struct fd_binding *bd = binding_at(c, (int64_t)rec->arg0, e->t0_ns);
		if ((f = file_of_binding(c, bd)))
			f->time_ns += dur;
		binding_time(c, bd, dur);
		follow_fd(c, e);
		break;
	}
	case PW_K_PLAIN:
		if (rec->h.type == PW_EV_IO_URING_SETUP && rec->ret >= 0)
			p->io_uring_rings++;
		if (pw_events[rec->h.type].domain == PW_DOM_IO || pw_events[rec->h.type].domain == PW_DOM_META) {
			struct fd_binding *bd = binding_at(c, (int64_t)rec->arg0, e->t0_ns);
			if ((f = file_of_binding(c, bd)))
				f->time_ns += dur;
			binding_time(c, bd, dur); /* fsync, ftruncate, lseek, fflush */
		}
		break;
	case PW_K_STAT_FD: {
		struct fd_binding *bd = rec->h.err ? NULL : binding_at(c, (int64_t)rec->arg0, e->t0_ns);
		if ((f = file_of_binding(c, bd))) {
			f->stats++;
			f->time_ns += dur;
		}
		binding_time(c, bd, dur);
		break;
	}
	case PW_K_STAT:
		if (!rec->h.err && e->str && (f = stat_file(c, e))) {
			f->stats++;
			f->time_ns += dur;
		}
		break;
	case PW_K_DIR_READ:
		if (!rec->h.err && (f = file_of_fd(c, (int64_t)rec->arg0, e->t0_ns))) {
			f->dir_reads++;
			f->time_ns += dur;
		}
		break;
	case PW_K_CHANNEL:
		bind_channel(c, e);
		break;
	case PW_K_WAIT:
		if ((int64_t)rec->arg0 > 0)
			note_reaped(c, p, rec);
		break;
	case PW_K_FORK:
		note_spawned(c, p, e);
		break;
	case PW_K_DLOPEN:
		note_dlopen(c, e, dur);
		break;
	default:
		if (pw_kind_is_api(kind) && (pw_gpu_event(&c->rs->r.gpu, &c->gpu, e, dur) ||
					      pw_act_api(&c->rs->r.act, &c->act, e, dur)))
			c->oom = 1;
		break;
	}
	*stream = note_file_domain(c, f, e, kind, dur); /* a pended call: by the file it was on when read */
	return pended ? PW_TL_NONE : file_number(c, f); /* the timeline names a pended call's file later */
}

/* A call the report counts. */
/* What startup_bound needs (model.h): loads, opens and stats, and the first GPU library call. */
static void note_startup(struct file_ctx *c, const struct pw_raw_event *e, enum pw_event_kind kind, uint64_t dur)
{
	struct pw_rank_report *r = &c->rs->r;
	if (pw_kind_is_api(kind)) {
		if (!r->first_gpu_call_ns || e->t0_ns < r->first_gpu_call_ns)
			r->first_gpu_call_ns = e->t0_ns;
		return;
	}
	enum pw_startup_kind k = kind == PW_K_DLOPEN ? PW_STARTUP_LOAD
				 : kind == PW_K_OPEN ? PW_STARTUP_OPEN
				 : kind == PW_K_STAT || kind == PW_K_STAT_FD ? PW_STARTUP_STAT
									     : (enum pw_startup_kind)-1;
	if ((int)k < 0 || r->nstartup >= PW_STARTUP_MAX)
		return;
	if (pw_reserve(&r->startup, &r->startup_cap, r->nstartup + 1, sizeof *r->startup)) {
		c->oom = 1;
		return;
	}
	r->startup[r->nstartup++] = (struct pw_startup_call){e->t0_ns, dur, (uint8_t)k};
}

static void on_call(struct file_ctx *c, struct pw_proc *p, const struct pw_raw_event *e, enum pw_event_kind kind)
{
	uint64_t dur = e->t1_ns > e->t0_ns ? e->t1_ns - e->t0_ns : 0;
	note_startup(c, e, kind, dur);
	struct pw_call_stat *cs = count_call(c, p, e, dur);
	if (e->nested) {
		pw_tl_call(c->rs->r.timeline, e, PW_TL_NONE);
		return;
	}
	if (e->stack_ref && stack_event(c, p, e))
		c->oom = 1;
	if (is_world_collective(c, e) && note_collective(&c->rs->r.coll[kind == PW_K_COLL ? PW_COLL_NCCL : PW_COLL_MPI],
							 e->t0_ns))
		c->oom = 1;
	int stream = 0;
	uint32_t file = account_call(c, p, cs, e, kind, dur, &stream);
	if (e->rec->h.tid == (uint32_t)p->pid)
		note_main_blocked(c, p, e, kind, pw_events[e->rec->h.type].domain == PW_DOM_MPI, stream);
	pw_tl_call(c->rs->r.timeline, e, file);
}

/* Ticks of the image's clock as ns, saturating (the file is untrusted). */
static uint64_t ticks_ns(const struct file_ctx *c, double ticks)
{
	double ns = ticks * c->ns_per_tick;
	return !(ns < 1.8e19) ? UINT64_MAX : ns > 0 ? (uint64_t)ns : 0;
}

/* The cost of one record, as the image measured it at its start (preload/cost.c): what a recorded call took
 * beyond a plain one. A block where the plain calls took longer (an interrupt) gives 0. */
static void note_record_cost(struct file_ctx *c, struct pw_proc *p, const struct pw_rec_call *rec)
{
	if (rec->ret <= 0)
		return;
	double extra = rec->arg0 > rec->arg1 ? (double)(rec->arg0 - rec->arg1) : 0.0;
	p->record_ns = extra * c->ns_per_tick / (double)rec->ret;
	p->record_measured = 1;
}

static void on_event(void *ctx, const struct pw_raw_event *e)
{
	struct file_ctx *c = ctx;
	if (!c->rs)
		return;
	enum pw_event_kind kind = pw_events[e->rec->h.type].kind;
	struct pw_proc *p = &c->rs->r.procs[c->proc_index];
	p->records++;
	if (pw_kind_is_activity(kind)) {
		on_activity(c, e);
		return;
	}
	if (kind == PW_K_COST) {
		note_record_cost(c, p, e->rec);
		return;
	}
	if (pw_kind_is_range(kind) || kind == PW_K_NVTX_NAME || kind == PW_K_CAPTURE) {
		on_annotation(c, p, e);
		return;
	}
	if (e->t1_ns > c->last_ns)
		c->last_ns = e->t1_ns;
	if (c->ntids == 0 || c->tids[c->ntids - 1] != e->rec->h.tid)
		note_tid(c, e->rec->h.tid);
	if (kind == PW_K_FDINFO)
		follow_fd(c, e);
	else if (kind == PW_K_MODULE || kind == PW_K_PYSTACK || kind == PW_K_SAMPLE)
		on_stack_record(c, p, e, kind);
	else if (e->outside)
		on_outside(c, p, e, kind);
	else
		on_call(c, p, e, kind);
}

static void on_lost(void *ctx, uint32_t lane, uint64_t total)
{
	struct file_ctx *c = ctx;
	if (lane < sizeof c->lost / sizeof c->lost[0] && total > c->lost[lane])
		c->lost[lane] = total;
}

static void on_thread_lost(void *ctx, uint32_t tid, uint64_t total)
{
	struct file_ctx *c = ctx;
	if (!c->rs)
		return;
	struct pw_proc *p = &c->rs->r.procs[c->proc_index];
	for (size_t i = 0; i < p->nthread_drops; i++)
		if (p->thread_drops[i].tid == tid) {
			p->thread_drops[i].dropped += total; /* a tid reused after its thread ended: a second slot */
			return;
		}
	struct pw_thread_drop *n = realloc(p->thread_drops, (p->nthread_drops + 1) * sizeof *n);
	if (!n) {
		c->oom = 1;
		return;
	}
	p->thread_drops = n;
	p->thread_drops[p->nthread_drops++] = (struct pw_thread_drop){tid, total};
}

static void on_salvage(void *ctx, const struct pw_raw_salvage *sv)
{
	struct file_ctx *c = ctx;
	c->salvaged = 1;
	if (c->rs)
		c->rs->r.procs[c->proc_index].salvaged_at = sv->realtime_ns;
}

static int cmp_thread_drop(const void *a, const void *b)
{
	const struct pw_thread_drop *x = a, *y = b;
	if (x->dropped != y->dropped)
		return x->dropped < y->dropped ? 1 : -1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void on_end(void *ctx, const struct pw_raw_end *end, uint64_t end_ns, const char *exec_path)
{
	struct file_ctx *c = ctx;
	if (!c->rs)
		return;
	struct pw_proc *p = &c->rs->r.procs[c->proc_index];
	p->how = (int)end->how;
	p->unrecorded_why = (int)end->unrecorded_why;
	if (end->how == PW_END_EXITED)
		p->exit_code = end->exit_status & 0xff;
	if (end_ns)
		p->end_ns = end_ns;
	if (exec_path && !p->exec_path)
		p->exec_path = strdup(exec_path);
	p->io_rchar = end->io_rchar;
	p->io_wchar = end->io_wchar;
	p->io_valid = end->io_valid == 1;
	p->io_start_valid = end->io_start_valid == 1;
	p->io_start = end->io_start_rchar + end->io_start_wchar;
	p->io_left_out = end->io_own + end->io_loader;
	p->io_unflushed = end->io_unflushed;
	p->io_unread = end->io_unread;
	p->skipped += end->bad_records;
	p->dropped += end->guard_skipped; /* calls a signal handler made while its thread was writing a record */
	c->rs->r.strings_dropped += end->arena_dropped;
	c->rs->r.shm_refused += end->shm_refused;
	if (end->shm_peak > c->rs->r.own_cost.shm_peak) {
		c->rs->r.own_cost.shm_peak = end->shm_peak;
		c->rs->r.own_cost.shm_peak_pid = p->pid;
	}
	p->stacks += end->stacks;
	p->stacks_ns = pw_sat_add(p->stacks_ns, ticks_ns(c, (double)end->stack_ticks));
	if (pw_stacks_note_end(&c->rs->r.stacks, end->stacks_dropped, end->samples_skipped))
		c->oom = 1;
}

/* The reads and writes whose descriptor was bound to no file when they were read, looked up again now that
 * the image is read: counted on their file, and named so on the timeline (before pw_tl_image_end). */
static void count_pending_io(struct file_ctx *c)
{
	struct pw_proc *p = &c->rs->r.procs[c->proc_index];
	struct pw_tl_binding *bound = c->npending ? malloc(c->npending * sizeof *bound) : NULL;
	size_t nbound = 0;
	for (size_t i = 0; i < c->npending; i++) {
		const struct pending_io *q = &c->pending[i];
		struct fd_binding *bd = binding_at(c, q->fd, q->t0_ns);
		struct pw_file_stat *f = file_of_binding(c, bd);
		struct save *sv = q->write && f ? save_of(c, bd) : NULL;
		if (!f && q->seen_on) {
			f = &c->rs->r.files[q->seen_on - 1];
			sv = q->seen_save ? &c->saves[q->seen_save - 1] : NULL;
		}
		if (!f)
			continue;
		count_file_io(p, f, sv, q->write, q->t0_ns, q->dur_ns, q->bytes);
		if (bound)
			bound[nbound++] = (struct pw_tl_binding){q->t0_ns, q->fd, file_number(c, f)};
	}
	if (c->npending && !bound)
		c->oom = 1;
	pw_tl_bind_files(c->rs->r.timeline, bound, nbound);
	free(bound);
}

/* The image's saves, once its writes are all counted, into their files' figures (model.h). */
static void fold_saves(struct file_ctx *c)
{
	for (size_t i = 0; i < c->nsaves; i++) {
		const struct save *s = &c->saves[i];
		if (!s->bytes)
			continue; /* not written: a dup's source, a binding a write was first thought to be on */
		struct pw_file_stat *f = &c->rs->r.files[s->file];
		if (!f->saves || s->bytes < f->save_min_bytes)
			f->save_min_bytes = s->bytes;
		if (s->bytes > f->save_max_bytes)
			f->save_max_bytes = s->bytes;
		if (s->ns > f->save_max_ns)
			f->save_max_ns = s->ns;
		f->saves++;
	}
}

static int read_one(struct analysis_state *as, const char *path, char *err, size_t errlen)
{
	struct file_ctx c = {.as = as};
	static const struct pw_raw_visitor v = {.proc = on_proc, .event = on_event, .lost = on_lost, .end = on_end,
						.thread_lost = on_thread_lost, .salvage = on_salvage};
	uint64_t skipped = 0;
	pw_gpu_proc_init(&c.gpu, as->files++);
	pw_act_file_init(&c.act);
	int rc = pw_raw_read(path, &v, &c, &skipped, err, errlen);
	pw_gpu_proc_end(c.rs ? c.rs->r.gpu : NULL, &c.gpu);
	size_t first_op = c.act.first_op; /* pw_act_file_end resets it */
	if (pw_act_file_end(c.rs ? c.rs->r.act : NULL, &c.act, path,
			    c.rs ? c.rs->r.procs[c.proc_index].pid : 0))
		c.oom = 1;
	if (c.rs) {
		count_pending_io(&c);
		fold_saves(&c);
	}
	if (c.rs && c.rs->r.timeline) {
		pw_tl_image_end(c.rs->r.timeline, &c.act);
		c.oom |= c.rs->r.timeline->oom;
	}
	pw_act_file_free(&c.act);
	if (c.ranges && c.rs) {
		/* the GPU work this image launched, now linked to its launching threads */
		const struct pw_act_report *act = c.rs->r.act;
		for (size_t i = first_op; first_op != SIZE_MAX && i < pw_act_op_count(act); i++) {
			uint32_t tid;
			uint64_t launch, dur;
			if (pw_act_op_launch(act, i, &tid, &launch, &dur))
				pw_ranges_gpu_op(c.ranges, tid, launch, dur);
		}
		const struct pw_proc *p = &c.rs->r.procs[c.proc_index];
		if (pw_ranges_file_end(c.rs->r.ranges, c.ranges, p->end_ns ? p->end_ns : c.last_ns))
			c.oom = 1;
	} else {
		pw_ranges_file_end(NULL, c.ranges, 0);
	}
	if (c.stacks && c.rs && !as->sym && !(as->sym = pw_sym_new()))
		c.oom = 1;
	if (pw_stacks_file_end(c.rs ? &c.rs->r.stacks : NULL, c.stacks, as->sym,
			       c.rs ? &c.rs->r.procs[c.proc_index] : NULL))
		c.oom = 1;
	free(c.pending);
	free(c.saves);
	if (rc == 0 && c.rs) {
		struct pw_proc *p = &c.rs->r.procs[c.proc_index];
		p->raw_path = strdup(path);
		p->skipped += skipped;
		for (size_t i = 0; i < sizeof c.lost / sizeof c.lost[0]; i++)
			p->dropped += c.lost[i];
		if (p->nthread_drops > 1)
			qsort(p->thread_drops, p->nthread_drops, sizeof *p->thread_drops, cmp_thread_drop);
		if (!p->end_ns)
			p->end_ns = c.last_ns;
		p->threads = c.ntids;
	}
	free(c.fds);
	free(c.tids);
	if (rc == 0 && c.oom)
		return ERR("out of memory reading %s", path);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_rank(const void *a, const void *b)
{
	const struct pw_rank_report *x = a, *y = b;
	/* ranks in order, then the launcher processes by host */
	if ((x->rank == PW_RANK_LAUNCHER) != (y->rank == PW_RANK_LAUNCHER))
		return x->rank == PW_RANK_LAUNCHER ? 1 : -1;
	if (x->rank == PW_RANK_LAUNCHER)
		return strcmp(x->host ? x->host : "", y->host ? y->host : "");
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct pw_proc *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* One session file: the command a CLI ran and how its target ended. */
struct session_file {
	char *command;
	int target_pid, target_status, cli_pid;
	char *host;
};

static void read_session_file(const char *path, struct session_file *sf)
{
	char *line = NULL;
	size_t cap = 0;
	memset(sf, 0, sizeof *sf);
	sf->target_status = -1;
	/* only a regular file: a FIFO named like a session file must not hang the report */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* getline: a line longer than any buffer must not be read on as lines of its own */
	while (getline(&line, &cap, f) >= 0) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "command=", 8) == 0 && !sf->command)
			sf->command = strdup(line + 8);
		else if (strncmp(line, "target_pid=", 11) == 0)
			sf->target_pid = atoi(line + 11);
		else if (strncmp(line, "target_status=", 14) == 0)
			sf->target_status = atoi(line + 14);
		else if (strncmp(line, "cli_pid=", 8) == 0)
			sf->cli_pid = atoi(line + 8);
		else if (strncmp(line, "host=", 5) == 0 && !sf->host)
			sf->host = strdup(line + 5);
	}
	free(line);
	fclose(f);
}

static void apply_status(struct pw_analysis *a, const struct reaped *w);

/* OUT/raw/session.txt (a CLI run), and session-<rank>-<host>-<pid>.txt of each rank's CLI when a launcher started
 * one profwrap per rank: how each CLI's target ended. The analysis keeps the first one's command. A
 * preload-only session's file (session-o-<hash>.txt) names no command and no target. */
static void read_sessions(struct pw_analysis *a, const char *out_dir)
{
	char raw[4352], path[4700];
	int first = 1;
	a->target_status = -1;
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	DIR *d = opendir(raw);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!pw_is_session_file(de->d_name))
			continue;
		struct session_file sf;
		snprintf(path, sizeof path, "%s/%s", raw, de->d_name);
		read_session_file(path, &sf);
		if (sf.target_pid > 0 && sf.target_status >= 0) {
			struct reaped target = {sf.target_pid, sf.target_status, sf.cli_pid, sf.host};
			apply_status(a, &target);
		}
		if (first && (sf.command || sf.target_pid > 0)) {
			first = 0;
			a->command = sf.command;
			a->target_pid = sf.target_pid;
			a->target_status = sf.target_status;
			a->cli_pid = sf.cli_pid;
			a->cli_host = sf.host;
		} else {
			free(sf.command);
			free(sf.host);
		}
	}
	if (d)
		closedir(d);
}


/* A parent's wait (or the CLI's) says how a child ended: the signal that killed it, or its exit code when the
 * child's own record has none. Applied to the last image of the child of that waiter on that host. */
static void apply_status(struct pw_analysis *a, const struct reaped *w)
{
	struct pw_proc *last = NULL;
	for (size_t r = 0; r < a->nranks; r++) {
		if (!same_host(a->ranks[r].host, w->host))
			continue;
		for (size_t i = 0; i < a->ranks[r].nprocs; i++) {
			struct pw_proc *p = &a->ranks[r].procs[i];
			if (p->pid == w->pid && (w->waiter <= 0 || p->ppid == w->waiter) &&
			    (!last || p->start_ns > last->start_ns))
				last = p;
		}
	}
	if (!last)
		return;
	if (WIFSIGNALED(w->status)) {
		last->signal = WTERMSIG(w->status);
		last->exit_code = -1;
	} else if (WIFEXITED(w->status) && last->exit_code < 0) {
		last->exit_code = WEXITSTATUS(w->status);
	}
}

static int was_reaped_by(const struct analysis_state *as, int pid, int waiter)
{
	for (size_t i = 0; i < as->nreaped; i++)
		if (as->reaped[i].pid == pid && as->reaped[i].waiter == waiter)
			return 1;
	return 0;
}

/* The kernel adds a reaped child's I/O counters to its parent's: take out what the children did before
 * the parent's counters were read, or mark the parent's counters unusable when a child's share is unknown
 * (killed before it could report, or reaped by a wait the profiler did not see). */
static void split_children_io(struct pw_analysis *a, const struct analysis_state *as)
{
	for (size_t r = 0; r < a->nranks; r++)
		for (size_t i = 0; i < a->ranks[r].nprocs; i++) {
			struct pw_proc *p = &a->ranks[r].procs[i];
			if (!p->io_valid)
				continue;
			for (size_t r2 = 0; r2 < a->nranks; r2++) {
				if (!same_host(a->ranks[r].host, a->ranks[r2].host))
					continue;
				for (size_t j = 0; j < a->ranks[r2].nprocs; j++) {
					const struct pw_proc *c = &a->ranks[r2].procs[j];
					if (c->ppid != p->pid || c->how == PW_END_EXECED || c->end_ns > p->end_ns)
						continue;
					if (c->io_valid && was_reaped_by(as, c->pid, p->pid))
						p->io_children += c->io_rchar + c->io_wchar;
					else
						p->io_uncertain = 1;
				}
			}
		}
}

/* What profwrap cost the rank (model.h): the parts summed over its processes, then their total. */
static void sum_own_cost(struct pw_rank_report *r)
{
	struct pw_own_cost *o = &r->own_cost;
	double records_ns = 0;
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct pw_proc *p = &r->procs[i];
		o->records += p->records;
		o->records_measured += p->record_measured ? p->records : 0;
		records_ns += (double)p->records * p->record_ns;
		o->stacks += p->stacks;
		o->stacks_ns = pw_sat_add(o->stacks_ns, p->stacks_ns);
	}
	o->records_ns = !(records_ns < 1.8e19) ? UINT64_MAX : (uint64_t)(records_ns + 0.5);
	o->cupti_ns = r->act ? r->act->overhead_ns : 0;
	o->total_ns = pw_sat_add(pw_sat_add(o->records_ns, o->stacks_ns), o->cupti_ns);
	o->wall_share = r->wall_ns ? (double)o->total_ns / (double)r->wall_ns : 0.0;
}

/* Whether p is the last image of its pid in r. */
static int last_image(const struct pw_rank_report *r, const struct pw_proc *p)
{
	for (size_t j = 0; j < r->nprocs; j++)
		if (r->procs[j].pid == p->pid && r->procs[j].image > p->image)
			return 0;
	return 1;
}

/* The coverage check of one pid, last its last image. The kernel's counters span every image (exec keeps
 * them): each image's window runs from the end of its set-up to its exit or exec, less what profwrap and the
 * loader moved in it, plus what libc flushed after the counters were read; the bytes of children it reaped
 * (the kernel adds them in) come off. An image of an older file has no start: its window starts at 0, and an
 * earlier image without counters (exec'd) leaves its bytes to the next one's. The check cannot be made when
 * the last image's counters, or a child's, were never read. */
static void check_pid(struct pw_rank_report *r, const struct pw_proc *last)
{
	uint64_t windows = 0, raw = 0, left_out = 0, seen = 0, end = last->io_rchar + last->io_wchar;
	int ok = last->io_valid && !last->io_uncertain;
	for (size_t j = 0; j < r->nprocs && ok; j++) {
		const struct pw_proc *q = &r->procs[j];
		if (q->pid != last->pid)
			continue;
		seen += q->seen_read_bytes + q->seen_write_bytes + q->io_unread;
		if (!q->io_valid) {
			ok = q->how == PW_END_EXECED;
			continue;
		}
		uint64_t q_end = q->io_rchar + q->io_wchar, q_start = q->io_start_valid ? q->io_start : 0;
		uint64_t window = q_end > q_start ? q_end - q_start : 0;
		uint64_t out = q->io_left_out < window ? q->io_left_out : window;
		raw += window;
		windows += window - out + q->io_unflushed;
		left_out += out;
	}
	if (!ok) {
		if (!r->io_unchecked++)
			r->io_unchecked_pid = last->pid;
		return;
	}
	left_out += end > raw ? end - raw : 0; /* before each image's window: the exec and the loader */
	r->io_checked++;
	r->kernel_bytes += windows > last->io_children ? windows - last->io_children : 0;
	r->seen_bytes += seen;
	r->io_left_out += left_out;
}

void pw_process_of(const struct pw_rank_report *r, const struct pw_proc *first, struct pw_process *p)
{
	memset(p, 0, sizeof *p);
	p->first = first;
	p->pid = first->pid;
	p->start_ns = first->start_ns;
	for (const struct pw_proc *q = first; q; q = pw_next_image(r, q)) {
		p->last = q;
		p->main_wait_ns += q->main_wait_ns;
		p->main_child_wait_ns += q->main_child_wait_ns;
		p->main_mpi_ns += q->main_mpi_ns;
		p->main_stream_ns += q->main_stream_ns;
		p->seen_read_bytes += q->seen_read_bytes;
		if (q->first_read_ns && !p->first_read_ns)
			p->first_read_ns = q->first_read_ns;
	}
	p->end_ns = p->last->end_ns;
}

int pw_rank_main_process(const struct pw_rank_report *r, struct pw_process *p)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		if (r->procs[i].replaced_one)
			continue;
		pw_process_of(r, &r->procs[i], p);
		uint64_t life = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
		if (p->main_child_wait_ns <= life / 2)
			return 0;
	}
	if (!r->nprocs)
		return -1;
	pw_process_of(r, &r->procs[0], p);
	return 0;
}

static int cmp_pid_index(const void *a, const void *b, void *procs)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int px = ((const struct pw_proc *)procs)[x].pid, py = ((const struct pw_proc *)procs)[y].pid;
	if (px != py)
		return px < py ? -1 : 1;
	return (x > y) - (x < y);
}

/* Joins each pid's images into exec chains, the procs sorted by start: an image that ended in exec is followed
 * by the next image of its pid; one that exited ends its chain (a later image is a new process of a reused
 * pid). */
static void link_images(struct pw_rank_report *r)
{
	size_t *order = malloc((r->nprocs ? r->nprocs : 1) * sizeof *order);
	for (size_t i = 0; i < r->nprocs; i++) {
		r->procs[i].next_image = PW_PROC_NONE;
		r->procs[i].replaced_one = 0;
		if (order)
			order[i] = i;
	}
	if (!order) {
		fprintf(stderr, "profwrap: out of memory joining the images of rank %d's processes\n", r->rank);
		return;
	}
	qsort_r(order, r->nprocs, sizeof *order, cmp_pid_index, r->procs);
	for (size_t k = 1; k < r->nprocs; k++) {
		struct pw_proc *prev = &r->procs[order[k - 1]], *next = &r->procs[order[k]];
		if (prev->pid == next->pid && prev->how == PW_END_EXECED) {
			prev->next_image = order[k];
			next->replaced_one = 1;
		}
	}
	free(order);
}

static void finish_rank(struct pw_analysis *a, struct pw_rank_report *r)
{
	qsort(r->procs, r->nprocs, sizeof *r->procs, cmp_proc);
	link_images(r);
	r->end_ns = 0;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct pw_proc *p = &r->procs[i];
		if (p->end_ns > r->end_ns)
			r->end_ns = p->end_ns;
		r->events += p->events;
		r->dropped += p->dropped;
		r->skipped += p->skipped;
		if (p->raw_path && !p->how && !r->unfinished++)
			r->unfinished_pid = p->pid;
		if (last_image(r, p))
			check_pid(r, p);
		if (p->io_uring_rings && !r->io_uring_procs++)
			r->io_uring_pid = p->pid;
		if (!r->command && p->argv)
			r->command = strdup(a->command && a->target_pid == p->pid ? a->command : p->argv);
	}
	if (r->start_ns == UINT64_MAX)
		r->start_ns = r->end_ns;
	r->wall_ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
	r->coverage = r->kernel_bytes ? (double)r->seen_bytes / (double)r->kernel_bytes : 1.0;
	sum_own_cost(r);
	if (r->world_size < 1)
		r->world_size = 1;
	for (int e = 0; e < PW_EV_COUNT; e++) {
		if (!r->calls[e].count)
			r->calls[e].min_ns = 0;
		if (!r->nested[e].count)
			r->nested[e].min_ns = 0;
	}
	for (int f = 0; f < PW_COLL_FAMILIES; f++)
		if (r->coll[f].n)
			qsort(r->coll[f].ns, r->coll[f].n, sizeof *r->coll[f].ns, cmp_u64);
	pw_gpu_finish(r->gpu, r->calls);
	/* Out of memory here leaves partial GPU figures; the rest of the report stands. */
	pw_ranges_finish(r->ranges);
	pw_stacks_finish(r->stacks);
	if (pw_act_finish(r->act) || pw_findings_build(r))
		fprintf(stderr, "profwrap: out of memory analysing the GPU activity of rank %d\n", r->rank);
}

static int analyze_files(const char *out_dir, char *const *names_in, size_t n,
			 const struct pw_tl_limits *timeline_limits, struct pw_analysis *a, char *err, size_t errlen);

static int analyze_dir(const char *out_dir, const struct pw_tl_limits *timeline_limits, struct pw_analysis *a,
		       char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	char raw[4352];
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	DIR *d = opendir(raw);
	if (!d)
		return ERR("cannot read %s: %s (is %s a profwrap output directory?)", raw, strerror(errno), out_dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".pwt") != 0)
			continue;
		char **nn = grow(names, &cap, n + 1, sizeof *nn);
		if (!nn)
			break;
		names = nn;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (!n) {
		free(names);
		return ERR("no raw traces in %s: nothing was recorded", raw);
	}
	int rc = analyze_files(out_dir, names, n, timeline_limits, a, err, errlen);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int pw_analyze(const char *out_dir, struct pw_analysis *a, char *err, size_t errlen)
{
	return analyze_dir(out_dir, NULL, a, err, errlen);
}

int pw_analyze_whole(const char *out_dir, struct pw_analysis *a, char *err, size_t errlen)
{
	return analyze_dir(out_dir, &pw_tl_whole_limits, a, err, errlen);
}

/* Launcher processes are rank 0 when no process of the run has a rank (a plain `profwrap CMD`), unless all
 * say they belong to a job of several ranks (srun's SLURM_NTASKS, say): then this collector saw only a
 * node's launchers, and rank 0 is another node's. */
static void rank_the_rankless(struct analysis_state *as)
{
	for (size_t i = 0; i < as->nranks; i++)
		if (as->ranks[i].r.rank != PW_RANK_LAUNCHER || as->ranks[i].min_world > 1)
			return;
	if (as->nranks) {
		struct pw_rank_report *r = &as->ranks[0].r;
		r->rank = 0;
		for (size_t i = 0; i < r->nprocs; i++)
			r->procs[i].rank = 0;
	}
}

int pw_analyze_files(const char *out_dir, char *const *names_in, size_t n, struct pw_analysis *a, char *err,
		     size_t errlen)
{
	return analyze_files(out_dir, names_in, n, NULL, a, err, errlen);
}

static int analyze_files(const char *out_dir, char *const *names_in, size_t n,
			 const struct pw_tl_limits *timeline_limits, struct pw_analysis *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	char raw[4352];
	snprintf(raw, sizeof raw, "%s/raw", out_dir);
	char **names = malloc((n ? n : 1) * sizeof *names);
	if (!names)
		return ERR("out of memory");
	memcpy(names, names_in, n * sizeof *names);
	qsort(names, n, sizeof *names, cmp_str);

	struct analysis_state as = {.timeline_limits = timeline_limits};
	for (size_t i = 0; i < n; i++) {
		char path[4608];
		snprintf(path, sizeof path, "%s/%s", raw, names[i] ? names[i] : "");
		char ferr[512] = "";
		/* One unreadable or damaged file does not hide the others: say it (one line naming the file and the
		 * offset), go on. A damaged file was read as far as it is whole. */
		if (!names[i] || read_one(&as, path, ferr, sizeof ferr) < 0 || ferr[0])
			fprintf(stderr, "profwrap: %s\n", names[i] ? ferr : "out of memory");
	}
	free(names);
	pw_sym_free(as.sym); /* every stack is symbolised by now */
	add_unrecorded_children(&as);
	rank_the_rankless(&as);

	a->out_dir = strdup(out_dir);
	a->nranks = as.nranks;
	a->ranks = calloc(as.nranks ? as.nranks : 1, sizeof *a->ranks);
	if (!a->ranks || !a->out_dir) {
		free(as.reaped);
		return ERR("out of memory");
	}
	for (size_t i = 0; i < as.nranks; i++) {
		a->ranks[i] = as.ranks[i].r;
		pw_hix_free(&as.ranks[i].files_ix);
		pw_hix_free(&as.ranks[i].libs_ix);
	}
	free(as.ranks);
	if (!a->nranks) {
		free(as.reaped);
		pw_analysis_free(a);
		return ERR("no readable raw trace in %s", raw);
	}
	qsort(a->ranks, a->nranks, sizeof *a->ranks, cmp_rank);
	for (size_t i = 0; i < as.nreaped; i++)
		apply_status(a, &as.reaped[i]);
	read_sessions(a, out_dir);
	split_children_io(a, &as);
	free(as.reaped);
	for (size_t i = 0; i < a->nranks; i++)
		finish_rank(a, &a->ranks[i]);
	return 0;
}

void pw_analysis_free(struct pw_analysis *a)
{
	for (size_t r = 0; r < a->nranks; r++) {
		struct pw_rank_report *rr = &a->ranks[r];
		for (size_t i = 0; i < rr->nprocs; i++) {
			free(rr->procs[i].argv);
			free(rr->procs[i].exe);
			free(rr->procs[i].raw_path);
			free(rr->procs[i].exec_path);
			free(rr->procs[i].thread_drops);
		}
		for (size_t i = 0; i < rr->nfiles; i++)
			free(rr->files[i].path);
		for (size_t i = 0; i < rr->nlibs; i++)
			free(rr->libs[i].path);
		free(rr->procs);
		free(rr->files);
		free(rr->libs);
		free(rr->host);
		free(rr->command);
		pw_gpu_report_free(rr->gpu);
		pw_act_report_free(rr->act);
		pw_ranges_free(rr->ranges);
		pw_stacks_free(rr->stacks);
		pw_findings_free(rr->findings, rr->nfindings);
		free(rr->startup);
		pw_tl_free(rr->timeline);
		for (int f = 0; f < PW_COLL_FAMILIES; f++)
			free(rr->coll[f].ns);
	}
	free(a->ranks);
	free(a->out_dir);
	free(a->command);
	free(a->cli_host);
	memset(a, 0, sizeof *a);
}

void pw_rank_file_base(const struct pw_rank_report *r, char *buf, size_t size)
{
	if (r->rank != PW_RANK_LAUNCHER) {
		snprintf(buf, size, "rank%d", r->rank);
		return;
	}
	char host[65];
	pw_host_file_part(host, sizeof host, r->host, r->host ? strlen(r->host) : 0);
	snprintf(buf, size, "launcher-%s", host);
}

