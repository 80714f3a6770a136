/* Makes the seeds of the lane_walk and arena fuzz targets from raw traces of real runs: each trace's records
 * are written again into a segment by the producer's own functions (pw_arena_alloc/fill for the strings they
 * reference, pw_lane_reserve/commit into lane 0, which puts the PAD where the lane wraps), then saved as the
 * arena target reads a segment, and linearised as the collector drains a lane for the lane_walk target.
 *
 * usage: segments LANE_DIR ARENA_DIR FILE.pwt...   (run by mkcorpus.py) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../collector/lib/rawfile.h"
#include "../../../common/pw_ring.h"

#define LANE_SIZE 4096u
#define ARENA_SIZE 16384u
#define SEEDS_PER_FILE 3

struct str {
	uint64_t old_ref;
	char *bytes;
	uint32_t len;
	pw_strref new_ref; /* in the segment being built, 0: not yet */
};

struct trace {
	char argv[512], exe[512], host[256];
	uint32_t argv_len, exe_len, host_len;
	struct pw_raw_proc proc;
	uint8_t *recs; /* records as read, back to back (flags put back) */
	size_t len, cap;
	struct str *strs;
	size_t nstrs;
};

static void die(const char *what)
{
	fprintf(stderr, "segments: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void keep_string(struct trace *t, uint64_t ref, const void *bytes, uint32_t len)
{
	if (!ref || !bytes)
		return;
	for (size_t i = 0; i < t->nstrs; i++)
		if (t->strs[i].old_ref == ref)
			return;
	struct str *n = realloc(t->strs, (t->nstrs + 1) * sizeof *n);
	if (!n)
		die("realloc");
	t->strs = n;
	n[t->nstrs].old_ref = ref;
	n[t->nstrs].len = len;
	n[t->nstrs].new_ref = 0;
	if (!(n[t->nstrs].bytes = malloc(len ? len : 1)))
		die("malloc");
	memcpy(n[t->nstrs].bytes, bytes, len);
	t->nstrs++;
}

static void on_proc(void *ctx, const struct pw_raw_proc_view *p)
{
	struct trace *t = ctx;
	memcpy(&t->proc, p->proc, sizeof t->proc);
	t->argv_len = t->proc.argv_len < sizeof t->argv ? t->proc.argv_len : sizeof t->argv;
	t->exe_len = t->proc.exe_len < sizeof t->exe ? t->proc.exe_len : sizeof t->exe;
	t->host_len = t->proc.host_len < sizeof t->host ? t->proc.host_len : sizeof t->host;
	memcpy(t->argv, p->argv, t->argv_len);
	memcpy(t->exe, p->exe, t->exe_len);
	memcpy(t->host, p->host, t->host_len);
}

static void on_event(void *ctx, const struct pw_raw_event *e)
{
	struct trace *t = ctx;
	size_t rsize = (size_t)e->rec->h.size8 * 8;
	if (t->len + rsize > t->cap) {
		t->cap = t->cap ? t->cap * 2 : 65536;
		if (!(t->recs = realloc(t->recs, t->cap)))
			die("realloc");
	}
	uint8_t *r = t->recs + t->len;
	memcpy(r, e->rec, rsize);
	uint16_t type = e->rec->h.type | (e->outside ? PW_REC_OUTSIDE : 0) | (e->stack_ref ? PW_REC_STACK : 0);
	memcpy(r, &type, sizeof type);
	t->len += rsize;
	if (e->str)
		keep_string(t, e->rec->arg1, e->str, e->str_len);
	if (e->build_id)
		keep_string(t, ((const struct pw_rec_module *)e->rec)->build_id, e->build_id, e->build_id_len);
	if (e->stack)
		keep_string(t, e->stack_ref & ~PW_STACK_PY_PENDING, e->stack, e->stack_len);
}

/* The reference of old_ref's string in the segment (allocated and filled on first use), else old_ref: a
 * dangling reference is a case worth keeping. */
static uint64_t remap(struct trace *t, struct pw_seg_header *h, uint64_t old_ref)
{
	for (size_t i = 0; i < t->nstrs; i++) {
		struct str *s = &t->strs[i];
		if (s->old_ref != old_ref)
			continue;
		if (!s->new_ref && (s->new_ref = pw_arena_alloc(h, s->len)))
			pw_arena_fill(h, s->new_ref, s->bytes, s->len);
		return s->new_ref ? s->new_ref : old_ref;
	}
	return old_ref;
}

static void save(const char *dir, const char *base, int k, const void *a, size_t alen, const void *b, size_t blen)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s-%d", dir, base, k);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) || fclose(f) != 0)
		die(path);
}

/* Writes records from *pos on into a fresh segment whose lane 0 starts at start, until the lane is full;
 * saves the two seeds. */
static void one_segment(struct trace *t, size_t *pos, uint64_t start, const char *lane_dir, const char *arena_dir,
			const char *base, int k)
{
	uint32_t header_size;
	uint64_t total = pw_seg_layout(2, LANE_SIZE, ARENA_SIZE, &header_size);
	struct pw_seg_header *h = calloc(1, total);
	if (!total || !h || pw_seg_init(h, 2, LANE_SIZE, ARENA_SIZE) < 0)
		die("segment");
	h->pid = t->proc.pid;
	h->ppid = t->proc.ppid;
	h->rank = t->proc.rank;
	h->world_size = t->proc.world_size;
	h->clock_kind = t->proc.clock_kind;
	h->clock0 = t->proc.clock0;
	h->argv_ref = pw_arena_alloc(h, t->argv_len);
	h->exe_ref = pw_arena_alloc(h, t->exe_len);
	h->host_ref = pw_arena_alloc(h, t->host_len);
	pw_arena_fill(h, h->argv_ref, t->argv, t->argv_len);
	pw_arena_fill(h, h->exe_ref, t->exe, t->exe_len);
	pw_arena_fill(h, h->host_ref, t->host, t->host_len);
	for (size_t i = 0; i < t->nstrs; i++)
		t->strs[i].new_ref = 0;
	struct pw_lane *l = &pw_seg_lanes(h)[0];
	atomic_store(&l->head, start);
	atomic_store(&l->tail, start);
	l->cached_tail = start;
	uint8_t *data = pw_seg_lane_data(h, 0);
	while (*pos < t->len) {
		uint8_t rec[2048];
		struct pw_rec_call c;
		memcpy(&c, t->recs + *pos, sizeof c);
		size_t rsize = (size_t)c.h.size8 * 8;
		memcpy(rec, t->recs + *pos, rsize);
		uint16_t type = PW_REC_TYPE(c.h.type);
		if (pw_kind_has_string(pw_events[type].kind))
			c.arg1 = remap(t, h, c.arg1);
		memcpy(rec + offsetof(struct pw_rec_call, arg1), &c.arg1, sizeof c.arg1);
		if (type == PW_EV_MODULE) {
			uint64_t id;
			memcpy(&id, rec + offsetof(struct pw_rec_module, build_id), sizeof id);
			id = remap(t, h, id);
			memcpy(rec + offsetof(struct pw_rec_module, build_id), &id, sizeof id);
		}
		if (c.h.type & PW_REC_STACK) {
			uint64_t ref;
			memcpy(&ref, rec + rsize - 8, sizeof ref);
			ref = remap(t, h, ref & ~PW_STACK_PY_PENDING) | (ref & PW_STACK_PY_PENDING);
			memcpy(rec + rsize - 8, &ref, sizeof ref);
		}
		struct pw_reservation r;
		if (pw_lane_reserve(h, l, data, (uint32_t)rsize, &r) < 0)
			break;
		memcpy(r.rec, rec, rsize);
		pw_lane_commit(l, &r);
		*pos += rsize;
	}
	/* the arena target's input: mapping size, header, lane 0, the arena's used part */
	uint64_t used = atomic_load(&h->arena_used);
	size_t alen = 4 + 2 + header_size + 2 + LANE_SIZE;
	uint8_t *a = malloc(alen);
	if (!a)
		die("malloc");
	uint32_t mapped = (uint32_t)total;
	uint16_t n = (uint16_t)header_size, m = LANE_SIZE;
	memcpy(a, &mapped, 4);
	memcpy(a + 4, &n, 2);
	memcpy(a + 6, h, header_size);
	memcpy(a + 6 + header_size, &m, 2);
	memcpy(a + 8 + header_size, data, LANE_SIZE);
	save(arena_dir, base, k, a, alen, (uint8_t *)h + h->arena_offset, used);
	free(a);
	/* the lane_walk target's input: the readable bytes as the collector copies them out */
	uint64_t tail, avail = pw_lane_readable(l, &tail);
	uint64_t off = tail & (LANE_SIZE - 1);
	uint16_t first = (uint16_t)(LANE_SIZE - off < avail ? LANE_SIZE - off : avail);
	uint8_t *lin = malloc(2 + avail);
	if (!lin)
		die("malloc");
	memcpy(lin, &first, 2);
	memcpy(lin + 2, data + off, first);
	memcpy(lin + 2 + first, data, avail - first);
	save(lane_dir, base, k, lin, 2 + avail, NULL, 0);
	free(lin);
	free(h);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: segments LANE_DIR ARENA_DIR FILE.pwt...\n");
		return 2;
	}
	static const struct pw_raw_visitor v = {.proc = on_proc, .event = on_event};
	for (int i = 3; i < argc; i++) {
		struct trace t;
		memset(&t, 0, sizeof t);
		uint64_t skipped = 0;
		char err[512];
		if (pw_raw_read(argv[i], &v, &t, &skipped, err, sizeof err) < 0) {
			fprintf(stderr, "segments: %s\n", err);
			return 1;
		}
		const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		/* lanes starting at 0, and near their end so that the records wrap */
		static const uint64_t starts[SEEDS_PER_FILE] = {0, LANE_SIZE - 200, 3 * LANE_SIZE - 48};
		size_t pos = 0;
		for (int k = 0; k < SEEDS_PER_FILE && pos < t.len; k++)
			one_segment(&t, &pos, starts[k], argv[1], argv[2], base, k);
		for (size_t j = 0; j < t.nstrs; j++)
			free(t.strs[j].bytes);
		free(t.strs);
		free(t.recs);
	}
	return 0;
}
