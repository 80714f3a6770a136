/* Fuzz target: the collector's readers of an untrusted producer's segment (common/pw_ring.c): the layout check
 * (pw_seg_geometry_read) and the string arena reader (pw_arena_get_in), with the lanes drained as the
 * collector drains them (copied out by head and tail, walked by pw_lane_walk, each string a record references
 * looked up in the arena).
 *
 * Input, little-endian: u32 size of the mapping (kept to 16 .. 1 MiB), u16 n then n bytes written at the
 * segment's start (header and lane control blocks), u16 m then m bytes written at lane 0's data (when the
 * layout was accepted), the rest written at the arena's start.
 *
 * Checked: an accepted layout lies inside the mapping (lane control blocks inside the header, lanes before the
 * arena, the arena inside the mapping); every string the arena reader returns lies inside the arena's
 * written range with its length and is read through; no read of the segment outside the mapping. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/ingest/lane_walk.h"
#include "../../common/pw_ring.h"

#define MAX_MAPPING (1u << 20)
#define MAX_LANES_DRAINED 8
#define MAX_REFS_SCANNED 8192

struct seg {
	uint8_t *base;
	struct pw_seg_geometry g;
	uint64_t sum;
};

static uint64_t take(const uint8_t **p, size_t *left, void *out, size_t n)
{
	size_t k = n < *left ? n : *left;
	memset(out, 0, n);
	memcpy(out, *p, k);
	*p += k;
	*left -= k;
	return k;
}

/* Looks ref up; a string found must lie inside the arena's written part. */
static void lookup(struct seg *s, pw_strref ref)
{
	struct pw_seg_header *h = (struct pw_seg_header *)s->base;
	uint32_t len = 0;
	const char *str = pw_arena_get_in(h, &s->g, ref, &len);
	if (!str)
		return;
	uint64_t used = atomic_load_explicit(&h->arena_used, memory_order_relaxed);
	if (used > s->g.arena_size)
		used = s->g.arena_size;
	FUZZ_CHECK(fuzz_inside(s->base + s->g.arena_offset, used, str, len));
	s->sum += fuzz_touch(str, len);
}

static void drained_records(void *ctx, const uint8_t *recs, uint64_t len)
{
	struct seg *s = ctx;
	s->sum += fuzz_touch(recs, len);
}

static void drained_string(void *ctx, uint64_t ref)
{
	lookup(ctx, ref);
}

/* As the collector drains a lane (collector/ingest/drain.c): [tail, head) copied out of the segment, at most a lane's
 * worth, split where the lane's end falls, then walked. */
static void drain(struct seg *s, uint32_t lane, uint8_t *buf)
{
	struct pw_seg_header *h = (struct pw_seg_header *)s->base;
	struct pw_lane *l = &pw_seg_lanes(h)[lane];
	FUZZ_CHECK((uint8_t *)(l + 1) <= s->base + s->g.header_size);
	uint64_t size = s->g.lane_size, tail;
	uint64_t avail = pw_lane_readable(l, &tail);
	if (!avail || avail > size)
		return;
	const uint8_t *data = pw_seg_lane_data_in(s->base, &s->g, lane);
	FUZZ_CHECK(data + size <= s->base + s->g.arena_offset);
	uint64_t off = tail & (size - 1);
	uint64_t first = size - off < avail ? size - off : avail;
	memcpy(buf, data + off, first);
	memcpy(buf + first, data, avail - first);
	struct pw_lane_visitor v = {s, drained_records, drained_string};
	pw_lane_walk(buf, avail, first, &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data;
	size_t left = size;
	uint32_t mapped;
	uint16_t n;
	take(&p, &left, &mapped, sizeof mapped);
	if (mapped < 16)
		mapped = 16;
	if (mapped > MAX_MAPPING)
		mapped = MAX_MAPPING;
	struct seg s = {calloc(1, mapped), {0}, 0};
	FUZZ_CHECK(s.base != NULL);
	take(&p, &left, &n, sizeof n);
	take(&p, &left, s.base, n < mapped ? n : mapped);
	if (pw_seg_geometry_read((const struct pw_seg_header *)s.base, mapped, &s.g) < 0) {
		free(s.base);
		return 0;
	}
	const struct pw_seg_geometry *g = &s.g;
	FUZZ_CHECK(g->mapped_size == mapped && g->lane_count >= 1);
	FUZZ_CHECK(g->header_size >= sizeof(struct pw_seg_header));
	FUZZ_CHECK(g->arena_offset == g->header_size + (uint64_t)g->lane_count * g->lane_size);
	FUZZ_CHECK(g->arena_offset <= mapped && g->arena_size <= mapped - g->arena_offset);

	take(&p, &left, &n, sizeof n);
	uint8_t *lane0 = pw_seg_lane_data_in(s.base, g, 0);
	size_t k = n < g->lane_size ? n : (size_t)g->lane_size;
	take(&p, &left, lane0, k);
	k = left < g->arena_size ? left : (size_t)g->arena_size;
	take(&p, &left, s.base + g->arena_offset, k);

	struct pw_seg_header *h = (struct pw_seg_header *)s.base;
	pw_strref refs[] = {h->argv_ref, h->exe_ref, h->host_ref, h->exec_ref, 0, 1, 7, g->arena_size,
			    g->arena_size - 8, UINT64_MAX, UINT64_MAX - 7, atomic_load(&h->arena_used)};
	for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
		lookup(&s, refs[i]);
	for (uint64_t ref = 8, i = 0; ref < g->arena_size && i < MAX_REFS_SCANNED; ref += 8, i++)
		lookup(&s, ref);

	uint8_t *buf = malloc(g->lane_size);
	FUZZ_CHECK(buf != NULL);
	for (uint32_t lane = 0; lane < g->lane_count && lane < MAX_LANES_DRAINED; lane++)
		drain(&s, lane, buf);
	free(buf);
	free(s.base);
	return 0;
}
