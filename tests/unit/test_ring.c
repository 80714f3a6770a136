#define _GNU_SOURCE
/* Unit tests for common/pw_ring: segment layout and validation, lane reserve/commit/consume (including the
 * PAD at the lane end and drop counting), the shared lane's try-lock, and the string arena.
 *
 * The consumer here (drain_lane) walks records the way the collector does: from tail to head, a PAD means
 * "continue at the next lane start", any other record is size8 * 8 bytes. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../common/pw_ring.h"

/* The consumer's view, as the collector takes it: the layout read and checked once, then used from the copy. */
static int seg_validate(const struct pw_seg_header *h, uint64_t size)
{
	struct pw_seg_geometry g;
	return pw_seg_geometry_read(h, size, &g);
}

static const char *arena_get(struct pw_seg_header *h, uint64_t size, pw_strref ref, uint32_t *len)
{
	struct pw_seg_geometry g;
	return pw_seg_geometry_read(h, size, &g) < 0 ? NULL : pw_arena_get_in(h, &g, ref, len);
}

/* The producer's: space handed out, then filled. */
static pw_strref arena_put(struct pw_seg_header *h, const char *str, size_t len)
{
	pw_strref ref = pw_arena_alloc(h, len);
	if (ref)
		pw_arena_fill(h, ref, str, len);
	return ref;
}

#define LANE_SIZE 4096u
#define LANES 3u
#define ARENA_SIZE 4096u
#define SHARED_LANE (LANES - 1)

struct seg {
	struct pw_seg_header *h;
	uint64_t size;
};

static struct pw_seg_header *seg_alloc(uint32_t lanes, uint64_t lane_size, uint64_t arena_size, uint64_t *size)
{
	uint32_t hs = 0;
	uint64_t total = pw_seg_layout(lanes, lane_size, arena_size, &hs);
	assert_true(total > 0);
	assert_int_equal(total % 4096, 0);
	struct pw_seg_header *h = aligned_alloc(4096, total);
	assert_non_null(h);
	memset(h, 0, total);
	assert_int_equal(pw_seg_init(h, lanes, lane_size, arena_size), 0);
	*size = total;
	return h;
}

static int setup(void **state)
{
	struct seg *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	s->h = seg_alloc(LANES, LANE_SIZE, ARENA_SIZE, &s->size);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct seg *s = *state;
	free(s->h);
	free(s);
	return 0;
}

static struct pw_lane *lane_of(struct pw_seg_header *h, uint32_t i)
{
	return &pw_seg_lanes(h)[i];
}

/* ---- record helpers ---- */

/* A test record: header, then the sequence number, then (size8 - 2) words derived from seq and lane. */
static uint64_t pattern(uint64_t seq, uint32_t lane, uint32_t word)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)lane << 56) ^ ((uint64_t)word * 0x0101010101010101ull);
}

static void fill_rec(uint8_t *rec, uint32_t lane, uint8_t size8, uint64_t seq)
{
	struct pw_rec_hdr hd = {PW_EV_READ, size8, (uint8_t)(seq & 0x7f), 1000 + lane};
	memcpy(rec, &hd, sizeof hd);
	if (size8 >= 2)
		memcpy(rec + 8, &seq, 8);
	for (uint32_t w = 2; w < size8; w++) {
		uint64_t v = pattern(seq, lane, w);
		memcpy(rec + 8 * w, &v, 8);
	}
}

/* Returns 0 when rec is intact, else the word number (1-based) that differs. */
static int check_rec(const uint8_t *rec, uint32_t lane, uint64_t *seq_out)
{
	struct pw_rec_hdr hd;
	uint64_t seq;
	memcpy(&hd, rec, sizeof hd);
	memcpy(&seq, rec + 8, 8);
	*seq_out = seq;
	if (hd.type != PW_EV_READ || hd.size8 < 2 || hd.err != (uint8_t)(seq & 0x7f) || hd.tid != 1000 + lane)
		return 1;
	for (uint32_t w = 2; w < hd.size8; w++) {
		uint64_t v;
		memcpy(&v, rec + 8 * w, 8);
		if (v != pattern(seq, lane, w))
			return (int)w + 1;
	}
	return 0;
}

/* Producer side of an owned lane: reserve, fill, commit. Returns 0 or -1 (full, counted as dropped).
 * *wrapped is set when the record went to the lane start behind a PAD. */
static int put_rec(struct pw_seg_header *h, uint32_t lane, uint8_t size8, uint64_t seq, int *wrapped)
{
	struct pw_lane *l = lane_of(h, lane);
	uint8_t *data = pw_seg_lane_data(h, lane);
	uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
	struct pw_reservation r;
	if (pw_lane_reserve(h, l, data, size8 * 8u, &r) < 0)
		return -1;
	if (wrapped)
		*wrapped = r.new_head - size8 * 8u != head;
	fill_rec(r.rec, lane, size8, seq);
	pw_lane_commit(l, &r);
	return 0;
}

struct drain_stats {
	uint64_t records;
	uint64_t pads;
	uint64_t bytes;   /* tail advance */
	int bad;          /* first problem seen, 0 if none */
	uint64_t last_seq; /* of the last record, UINT64_MAX before the first */
};

enum {
	BAD_NONE,
	BAD_PAD_HEADER,  /* a PAD whose header is not {PAD, 1, 0, 0} */
	BAD_SIZE,        /* size8 == 0 or the record runs past the lane end or past head */
	BAD_PAYLOAD,     /* check_rec failed */
	BAD_ORDER,       /* sequence numbers not strictly increasing */
	BAD_END,         /* the walk did not end exactly at head */
};

/* Consumer: reads every record published in lane, checks it, releases the space. Mirrors the collector:
 * header first; PAD => continue at the next lane start; else step size8 * 8 bytes. With strict set, every
 * sequence number must be the previous plus one (no drops expected), else only increasing. */
static void drain_lane(struct pw_seg_header *h, uint32_t lane, struct drain_stats *st, int strict)
{
	struct pw_lane *l = lane_of(h, lane);
	const uint8_t *data = pw_seg_lane_data(h, lane);
	uint64_t size = h->lane_size;
	uint64_t tail;
	uint64_t avail = pw_lane_readable(l, &tail);
	uint64_t head = tail + avail;
	uint64_t start = tail;
	while (tail < head) {
		uint64_t off = tail & (size - 1);
		struct pw_rec_hdr hd;
		memcpy(&hd, data + off, sizeof hd);
		if (hd.type == PW_EV_PAD) {
			if ((hd.size8 != 1 || hd.err != 0 || hd.tid != 0) && !st->bad)
				st->bad = BAD_PAD_HEADER;
			st->pads++;
			tail += size - off;
			continue;
		}
		uint64_t len = (uint64_t)hd.size8 * 8;
		if (len == 0 || off + len > size || tail + len > head) {
			if (!st->bad)
				st->bad = BAD_SIZE;
			tail = head;
			break;
		}
		uint64_t seq;
		if (check_rec(data + off, lane, &seq) && !st->bad)
			st->bad = BAD_PAYLOAD;
		if (st->last_seq != UINT64_MAX) {
			int ok = strict ? seq == st->last_seq + 1 : seq > st->last_seq;
			if (!ok && !st->bad)
				st->bad = BAD_ORDER;
		}
		st->last_seq = seq;
		st->records++;
		tail += len;
	}
	if (tail != head && !st->bad)
		st->bad = BAD_END;
	st->bytes += tail - start;
	pw_lane_release(l, tail);
}

static void stats_init(struct drain_stats *st)
{
	memset(st, 0, sizeof *st);
	st->last_seq = UINT64_MAX;
}

/* ---- layout, init, validate ---- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint64_t expected_header_size(uint32_t lanes)
{
	return align_up(align_up(sizeof(struct pw_seg_header), PW_CACHELINE) + lanes * sizeof(struct pw_lane), 4096);
}

static void test_layout_sizes(void **state)
{
	uint32_t hs = 0;
	/* a lane's control block is three cache lines: producer, consumer, claim/lock */
	assert_int_equal(sizeof(struct pw_lane), 3 * PW_CACHELINE);
	assert_int_equal(offsetof(struct pw_lane, tail), PW_CACHELINE);
	assert_int_equal(offsetof(struct pw_lane, owner), 2 * PW_CACHELINE);

	/* the header, with its per-thread drop table, and 3 lanes' control blocks: two pages */
	assert_int_equal(expected_header_size(3), 8192);
	assert_int_equal(pw_seg_layout(3, 4096, 4096, &hs), 8192 + 3 * 4096 + 4096);
	assert_int_equal(hs, 8192);

	/* the arena is rounded up to pages */
	hs = 0;
	assert_int_equal(pw_seg_layout(2, 8192, 5000, &hs), expected_header_size(2) + 2 * 8192 + 8192);
	assert_int_equal(hs, expected_header_size(2));

	/* many lanes: the control blocks spill into more header pages */
	hs = 0;
	uint64_t hdr = expected_header_size(1024);
	assert_true(hdr > 4096);
	assert_int_equal(hdr % 4096, 0);
	assert_int_equal(pw_seg_layout(1024, 4096, 4096, &hs), hdr + 1024ull * 4096 + 4096);
	assert_int_equal(hs, hdr);

	/* the largest accepted sizes */
	assert_int_equal(pw_seg_layout(2, 1ull << 32, 1ull << 32, &hs), expected_header_size(2) + (2ull << 32) + (1ull << 32));
}

static void test_layout_rejects(void **state)
{
	uint32_t hs = 0;
	/* lane sizes that are not powers of two */
	assert_int_equal(pw_seg_layout(3, 4097, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 6144, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 12288, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, (1ull << 20) + 4096, 4096, &hs), 0);
	/* tiny or huge lanes */
	assert_int_equal(pw_seg_layout(3, 0, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 8, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 2048, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 4095, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 1ull << 33, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 1ull << 63, 4096, &hs), 0);
	/* too few lanes (one owned lane and the shared one at least), too many */
	assert_int_equal(pw_seg_layout(0, 4096, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(1, 4096, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(1025, 4096, 4096, &hs), 0);
	assert_int_equal(pw_seg_layout(UINT32_MAX, 4096, 4096, &hs), 0);
	/* tiny or huge arenas */
	assert_int_equal(pw_seg_layout(3, 4096, 0, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 4096, 4095, &hs), 0);
	assert_int_equal(pw_seg_layout(3, 4096, (1ull << 32) + 1, &hs), 0);
	assert_int_equal(hs, 0); /* untouched on rejection */
	/* the boundaries themselves are accepted */
	assert_int_not_equal(pw_seg_layout(2, 4096, 4096, &hs), 0);
	assert_int_not_equal(pw_seg_layout(1024, 4096, 4096, &hs), 0);
}

static void test_init_fields(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	assert_int_equal(h->magic, PW_SEG_MAGIC);
	assert_int_equal(h->version, PW_FORMAT_VERSION);
	assert_int_equal(h->header_size, expected_header_size(LANES));
	assert_int_equal(h->lane_count, LANES);
	assert_int_equal(h->lane_size, LANE_SIZE);
	assert_int_equal(h->arena_offset, expected_header_size(LANES) + LANES * LANE_SIZE);
	assert_int_equal(h->arena_size, ARENA_SIZE);
	assert_int_equal(h->segment_size, s->size);
	assert_int_equal(s->size, expected_header_size(LANES) + LANES * LANE_SIZE + ARENA_SIZE);
	assert_int_equal(atomic_load(&h->arena_used), 8);
	assert_int_equal(atomic_load(&h->arena_dropped), 0);
	assert_int_equal(atomic_load(&h->state), PW_STATE_RUNNING);
	/* lane control blocks sit after the header, inside header_size; data follows, lane after lane */
	assert_true((uint8_t *)pw_seg_lanes(h) >= (uint8_t *)h + sizeof *h);
	assert_int_equal((uintptr_t)pw_seg_lanes(h) % PW_CACHELINE, 0);
	assert_true((uint8_t *)&pw_seg_lanes(h)[LANES] <= (uint8_t *)h + h->header_size);
	for (uint32_t i = 0; i < LANES; i++) {
		assert_ptr_equal(pw_seg_lane_data(h, i), (uint8_t *)h + expected_header_size(LANES) + i * LANE_SIZE);
		assert_int_equal(atomic_load(&lane_of(h, i)->head), 0);
		assert_int_equal(atomic_load(&lane_of(h, i)->tail), 0);
		assert_int_equal(atomic_load(&lane_of(h, i)->dropped), 0);
		assert_int_equal(atomic_load(&lane_of(h, i)->lock), 0);
	}
	assert_ptr_equal(pw_seg_lane_data(h, LANES), (uint8_t *)h + h->arena_offset);
	assert_int_equal(seg_validate(h, s->size), 0);
	assert_int_equal(seg_validate(h, s->size + 4096), 0);
}

static void test_init_rejects(void **state)
{
	struct pw_seg_header h;
	memset(&h, 0, sizeof h);
	assert_int_equal(pw_seg_init(&h, 3, 6144, 4096), -EINVAL);
	assert_int_equal(pw_seg_init(&h, 1, 4096, 4096), -EINVAL);
	assert_int_equal(pw_seg_init(&h, 3, 4096, 100), -EINVAL);
	assert_int_equal(h.magic, 0); /* nothing written */
	assert_int_equal(h.segment_size, 0);
}

/* Copies the initialised segment header into a scratch header, applies a change, validates. */
static void test_validate(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	uint64_t sz = s->size;
	struct pw_seg_header save;
	memcpy(&save, h, sizeof save);

#define EXPECT_INVALID(stmt)                                         \
	do {                                                         \
		stmt;                                                \
		assert_int_equal(seg_validate(h, sz), -EINVAL);   \
		memcpy(h, &save, sizeof save);                       \
		assert_int_equal(seg_validate(h, sz), 0);         \
	} while (0)

	assert_int_equal(seg_validate(h, sz), 0);
	EXPECT_INVALID(h->magic = 0);
	EXPECT_INVALID(h->magic = PW_SEG_MAGIC ^ 1);
	EXPECT_INVALID(h->version = PW_FORMAT_VERSION + 1);
	EXPECT_INVALID(h->version = 0);
	EXPECT_INVALID(h->header_size += 4096);
	EXPECT_INVALID(h->header_size = 0);
	EXPECT_INVALID(h->lane_count = LANES + 1);
	EXPECT_INVALID(h->lane_count = 1);
	EXPECT_INVALID(h->lane_size = LANE_SIZE * 2);
	EXPECT_INVALID(h->lane_size = LANE_SIZE + 8);
	EXPECT_INVALID(h->arena_offset = h->arena_offset + 8);
	EXPECT_INVALID(h->arena_offset = 0);
	EXPECT_INVALID(h->arena_size = ARENA_SIZE * 2);
	EXPECT_INVALID(h->arena_size = 0);
	EXPECT_INVALID(h->segment_size = sz + 4096);
	EXPECT_INVALID(h->segment_size = sz - 4096);
	/* 2 lanes and an 8 KiB arena make the same segment_size and header_size: arena_offset must follow */
	EXPECT_INVALID((h->lane_count = 2, h->arena_size = 2 * ARENA_SIZE));
#undef EXPECT_INVALID
	h->lane_count = 2;
	h->arena_size = 2 * ARENA_SIZE;
	h->arena_offset = expected_header_size(2) + 2 * LANE_SIZE;
	assert_int_equal(seg_validate(h, sz), 0);
	memcpy(h, &save, sizeof save);

	/* the mapping must cover the whole segment */
	assert_int_equal(seg_validate(h, sz - 1), -EINVAL);
	assert_int_equal(seg_validate(h, sz - 4096), -EINVAL);
	assert_int_equal(seg_validate(h, sizeof *h - 1), -EINVAL);
	assert_int_equal(seg_validate(h, 0), -EINVAL);
	assert_int_equal(seg_validate(h, sz), 0);
}

/* ---- lanes ---- */

/* One call record through reserve/commit/readable/release, compared byte for byte. */
static void test_roundtrip_exact_bytes(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, 0);
	uint8_t *data = pw_seg_lane_data(h, 0);
	struct pw_rec_call rec = {
		.h = {PW_EV_WRITE, sizeof rec / 8, 9, 4242},
		.t0 = 0x1122334455667788ull,
		.t1 = 0x99aabbccddeeff00ull,
		.ret = -1,
		.arg0 = 7,
		.arg1 = 0xfeedfacecafebeefull,
	};
	struct pw_reservation r;
	uint64_t tail = 99;

	assert_int_equal(pw_lane_reserve(h, l, data, sizeof rec, &r), 0);
	assert_ptr_equal(r.rec, data);
	assert_int_equal(r.new_head, 48);
	memcpy(r.rec, &rec, sizeof rec);
	/* reserved but not committed: nothing readable */
	assert_int_equal(pw_lane_readable(l, &tail), 0);
	assert_int_equal(tail, 0);
	pw_lane_commit(l, &r);
	assert_int_equal(pw_lane_readable(l, &tail), 48);
	assert_int_equal(tail, 0);
	assert_memory_equal(data, &rec, sizeof rec);
	struct pw_rec_call back;
	memcpy(&back, data, sizeof back);
	assert_int_equal(back.h.type, PW_EV_WRITE);
	assert_int_equal(back.h.size8, 6);
	assert_int_equal(back.h.err, 9);
	assert_int_equal(back.h.tid, 4242);
	assert_int_equal(back.ret, -1);
	assert_int_equal(back.arg1, 0xfeedfacecafebeefull);
	pw_lane_release(l, tail + 48);
	assert_int_equal(pw_lane_readable(l, &tail), 0);
	assert_int_equal(tail, 48);

	/* a second record follows directly; the smallest and the largest record sizes */
	assert_int_equal(pw_lane_reserve(h, l, data, 8, &r), 0);
	assert_ptr_equal(r.rec, data + 48);
	assert_int_equal(r.new_head, 56);
	memset(r.rec, 0xab, 8);
	pw_lane_commit(l, &r);
	assert_int_equal(pw_lane_reserve(h, l, data, 2040, &r), 0);
	assert_ptr_equal(r.rec, data + 56);
	assert_int_equal(r.new_head, 56 + 2040);
	pw_lane_commit(l, &r);
	assert_int_equal(pw_lane_readable(l, &tail), 8 + 2040);
	assert_int_equal(tail, 48);
	assert_int_equal(atomic_load(&l->dropped), 0);
	/* other lanes are untouched */
	assert_int_equal(atomic_load(&lane_of(h, 1)->head), 0);
}

/* Deterministic wrap: 73 records of 56 bytes end at 4088; the next one goes to offset 0 behind an 8-byte PAD. */
static void test_wrap_pad_exact(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, 0);
	uint8_t *data = pw_seg_lane_data(h, 0);
	struct drain_stats st;
	int wrapped = -1;

	for (uint64_t i = 0; i < 73; i++) {
		assert_int_equal(put_rec(h, 0, 7, i, &wrapped), 0);
		assert_int_equal(wrapped, 0);
	}
	assert_int_equal(atomic_load(&l->head), 4088);
	/* the lane is 4088/4096 full: a 56-byte record needs 8 + 56 bytes, and does not fit */
	assert_int_equal(put_rec(h, 0, 7, 73, &wrapped), -1);
	assert_int_equal(atomic_load(&l->dropped), 1);
	assert_int_equal(atomic_load(&l->head), 4088);

	/* the consumer frees exactly one record: 8 (PAD) + 56 now fits, exactly */
	pw_lane_release(l, 56);
	assert_int_equal(put_rec(h, 0, 7, 74, &wrapped), 0);
	assert_int_equal(wrapped, 1);
	assert_int_equal(atomic_load(&l->head), 4088 + 8 + 56);
	struct pw_rec_hdr pad;
	memcpy(&pad, data + 4088, sizeof pad);
	assert_int_equal(pad.type, PW_EV_PAD);
	assert_int_equal(pad.size8, 1);
	assert_int_equal(pad.err, 0);
	assert_int_equal(pad.tid, 0);
	uint64_t seq;
	assert_int_equal(check_rec(data, 0, &seq), 0);
	assert_int_equal(seq, 74);
	/* now the lane is exactly full */
	assert_int_equal(put_rec(h, 0, 1, 75, NULL), -1);
	assert_int_equal(atomic_load(&l->dropped), 2);

	/* the consumer (already past record 0) reads 72 records, the PAD, record 74 */
	stats_init(&st);
	st.last_seq = 0;
	drain_lane(h, 0, &st, 0);
	assert_int_equal(st.bad, BAD_NONE);
	assert_int_equal(st.records, 73);
	assert_int_equal(st.pads, 1);
	assert_int_equal(st.last_seq, 74);
	assert_int_equal(st.bytes, 4088 + 8 + 56 - 56);
	assert_int_equal(atomic_load(&l->tail), 4088 + 8 + 56);
}

/* A record that ends exactly at the lane end needs no PAD. */
static void test_wrap_exact_fit_no_pad(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, 1);
	struct drain_stats st;
	int wrapped = -1;

	for (uint64_t i = 0; i < 64; i++)
		assert_int_equal(put_rec(h, 1, 8, i, &wrapped), 0);
	assert_int_equal(atomic_load(&l->head), 4096);
	assert_int_equal(put_rec(h, 1, 1, 64, NULL), -1);
	assert_int_equal(atomic_load(&l->dropped), 1);
	stats_init(&st);
	drain_lane(h, 1, &st, 1);
	assert_int_equal(st.bad, BAD_NONE);
	assert_int_equal(st.records, 64);
	assert_int_equal(st.pads, 0);
	assert_int_equal(st.last_seq, 63);
	assert_int_equal(put_rec(h, 1, 8, 65, &wrapped), 0);
	assert_int_equal(wrapped, 0);
	assert_int_equal(atomic_load(&l->head), 4096 + 64);
	uint64_t seq;
	assert_int_equal(check_rec(pw_seg_lane_data(h, 1), 1, &seq), 0);
	assert_int_equal(seq, 65);
}

/* Many fill/drain rounds with record sizes 1..31 words: records land at every offset and across the lane end;
 * the consumer must see every record once, in order, intact, and one PAD per wrap the producer made. */
static void test_wrap_fill_drain_rounds(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, 0);
	struct drain_stats st;
	stats_init(&st);
	uint64_t seq = 0, wraps = 0, bytes = 0;

	for (int round = 0; round < 500; round++) {
		/* write until the lane is nearly full: stop at the first failure, which is then retried after a drain */
		int n = 0;
		for (;;) {
			uint8_t size8 = (uint8_t)(2 + (seq * 7 + round) % 30);
			int wrapped = 0;
			uint64_t head0 = atomic_load(&l->head);
			if (put_rec(h, 0, size8, seq, &wrapped) < 0)
				break;
			bytes += atomic_load(&l->head) - head0;
			wraps += wrapped;
			seq++;
			n++;
		}
		assert_true(n > 0);
		drain_lane(h, 0, &st, 1);
		assert_int_equal(st.bad, BAD_NONE);
		assert_int_equal(st.records, seq);
		assert_int_equal(st.pads, wraps);
		assert_int_equal(st.bytes, bytes);
		assert_int_equal(atomic_load(&l->tail), atomic_load(&l->head));
		/* partial drains too: leave the lane half full on odd rounds */
		if (round & 1) {
			for (int k = 0; k < 10; k++) {
				uint8_t size8 = (uint8_t)(2 + (seq * 3) % 30);
				int wrapped = 0;
				uint64_t head0 = atomic_load(&l->head);
				assert_int_equal(put_rec(h, 0, size8, seq, &wrapped), 0);
				bytes += atomic_load(&l->head) - head0;
				wraps += wrapped;
				seq++;
			}
		}
	}
	drain_lane(h, 0, &st, 1);
	assert_int_equal(st.bad, BAD_NONE);
	assert_int_equal(st.records, seq);
	assert_int_equal(st.last_seq, seq - 1);
	assert_true(wraps > 100);
	assert_int_equal(st.pads, wraps);
	/* one failed reserve per round ended each fill */
	assert_int_equal(atomic_load(&l->dropped), 500);
	assert_int_equal(atomic_load(&l->head), bytes);
}

/* Write until full; every failed reserve counts exactly once; freed space is reused. */
static void test_full_lane_drop_count(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, 0);
	uint64_t seq = 0, ok = 0, failed = 0;

	while (put_rec(h, 0, 2, seq, NULL) == 0) {
		ok++;
		seq++;
	}
	failed++;
	seq++;
	assert_int_equal(ok, LANE_SIZE / 16);
	assert_int_equal(atomic_load(&l->dropped), 1);
	for (int i = 0; i < 37; i++, seq++, failed++)
		assert_int_equal(put_rec(h, 0, 2, seq, NULL), -1);
	assert_int_equal(atomic_load(&l->dropped), 38);
	assert_int_equal(atomic_load(&l->head), LANE_SIZE);

	/* the consumer frees 5 records: exactly 5 more fit, then drops resume */
	pw_lane_release(l, 5 * 16);
	for (int i = 0; i < 5; i++, seq++, ok++)
		assert_int_equal(put_rec(h, 0, 2, seq, NULL), 0);
	assert_int_equal(put_rec(h, 0, 2, seq++, NULL), -1);
	failed++;
	assert_int_equal(atomic_load(&l->dropped), failed);
	assert_int_equal(atomic_load(&l->dropped), 39);

	/* a record larger than the free space fails even though smaller ones would fit */
	pw_lane_release(l, 6 * 16);
	assert_int_equal(put_rec(h, 0, 3, seq++, NULL), -1);
	failed++;
	assert_int_equal(put_rec(h, 0, 2, seq++, NULL), 0);
	ok++;
	assert_int_equal(atomic_load(&l->dropped), 40);

	/* the consumer reads all that was kept: in increasing order, received + dropped == produced */
	struct drain_stats st;
	stats_init(&st);
	st.last_seq = 5; /* records 0..5 were released above without reading */
	drain_lane(h, 0, &st, 0);
	assert_int_equal(st.bad, BAD_NONE);
	assert_int_equal(st.records + 6, ok);
	assert_int_equal(ok + failed, seq);
	assert_int_equal(atomic_load(&l->dropped), failed);
	/* empty again: a full lane's worth fits */
	for (uint64_t i = 0; i < LANE_SIZE / 16; i++)
		assert_int_equal(put_rec(h, 0, 2, seq++, NULL), 0);
	assert_int_equal(put_rec(h, 0, 2, seq++, NULL), -1);
	assert_int_equal(atomic_load(&l->dropped), 41);
}

/* The shared lane: one thread holds the try-lock between reserve and commit; another thread's reserve fails at
 * once and counts as dropped; after the commit the lock is free again. */
static void test_shared_lane_trylock(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, SHARED_LANE);
	uint8_t *data = pw_seg_lane_data(h, SHARED_LANE);
	struct pw_reservation a = {0}, b = {0};

	assert_int_equal(pw_shared_lane_reserve(h, l, data, 16, &a), 0);
	assert_int_equal(atomic_load(&l->lock), 1);
	assert_ptr_equal(a.rec, data);
	fill_rec(a.rec, SHARED_LANE, 2, 0);

	/* "thread B" while A holds the lock */
	assert_int_equal(pw_shared_lane_reserve(h, l, data, 16, &b), -1);
	assert_int_equal(atomic_load(&l->dropped), 1);
	assert_int_equal(pw_shared_lane_reserve(h, l, data, 48, &b), -1);
	assert_int_equal(atomic_load(&l->dropped), 2);
	assert_int_equal(atomic_load(&l->lock), 1);
	assert_int_equal(atomic_load(&l->head), 0);

	pw_shared_lane_commit(l, &a);
	assert_int_equal(atomic_load(&l->lock), 0);
	assert_int_equal(atomic_load(&l->head), 16);

	assert_int_equal(pw_shared_lane_reserve(h, l, data, 16, &b), 0);
	assert_ptr_equal(b.rec, data + 16);
	fill_rec(b.rec, SHARED_LANE, 2, 1);
	pw_shared_lane_commit(l, &b);
	assert_int_equal(atomic_load(&l->lock), 0);
	assert_int_equal(atomic_load(&l->dropped), 2);

	struct drain_stats st;
	stats_init(&st);
	drain_lane(h, SHARED_LANE, &st, 1);
	assert_int_equal(st.bad, BAD_NONE);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.last_seq, 1);
}

/* A full shared lane: the reserve fails, counts the drop and does not keep the lock. */
static void test_shared_lane_full_releases_lock(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	struct pw_lane *l = lane_of(h, SHARED_LANE);
	uint8_t *data = pw_seg_lane_data(h, SHARED_LANE);
	struct pw_reservation r;
	int n = 0;

	while (pw_shared_lane_reserve(h, l, data, 64, &r) == 0) {
		fill_rec(r.rec, SHARED_LANE, 8, (uint64_t)n++);
		pw_shared_lane_commit(l, &r);
	}
	assert_int_equal(n, LANE_SIZE / 64);
	assert_int_equal(atomic_load(&l->lock), 0);
	assert_int_equal(atomic_load(&l->dropped), 1);
	assert_int_equal(pw_shared_lane_reserve(h, l, data, 8, &r), -1);
	assert_int_equal(atomic_load(&l->lock), 0);
	assert_int_equal(atomic_load(&l->dropped), 2);
}

/* ---- threads ---- */

#define MT_RECORDS 1000000u
#define MT_LANE_SIZE (1u << 16)

struct mt_ctx {
	struct pw_seg_header *h;
	_Atomic int producers_left;
	struct drain_stats st[2];
	uint64_t produced[2];
	uint64_t failed[2];
};

struct mt_prod {
	struct mt_ctx *c;
	uint32_t lane;
};

static void *mt_producer(void *arg)
{
	struct mt_prod *p = arg;
	struct pw_seg_header *h = p->c->h;
	uint64_t failed = 0;
	struct pw_lane *l = lane_of(h, p->lane);
	for (uint64_t seq = 0; seq < MT_RECORDS; seq++) {
		uint8_t size8 = (uint8_t)(2 + seq % 13);
		if (put_rec(h, p->lane, size8, seq, NULL) < 0) {
			/* the record is lost; let the consumer catch up to half a lane before going on, so that most
			 * records cross between the threads and the lane wraps many times under concurrency */
			failed++;
			while (atomic_load_explicit(&l->head, memory_order_relaxed) -
				       atomic_load_explicit(&l->tail, memory_order_acquire) >
			       MT_LANE_SIZE / 2)
				sched_yield();
		}
	}
	p->c->produced[p->lane] = MT_RECORDS;
	p->c->failed[p->lane] = failed;
	atomic_fetch_sub(&p->c->producers_left, 1);
	return NULL;
}

static void *mt_consumer(void *arg)
{
	struct mt_ctx *c = arg;
	for (;;) {
		/* read the flag first: a drain after seeing 0 gets everything */
		int left = atomic_load_explicit(&c->producers_left, memory_order_acquire);
		drain_lane(c->h, 0, &c->st[0], 0);
		drain_lane(c->h, 1, &c->st[1], 0);
		if (left == 0)
			break;
	}
	return NULL;
}

/* 2 producer threads on their own lanes, 1 consumer: every record arrives once, in order per lane, intact;
 * received + dropped == produced, and the lane's dropped counter equals the producer's failed reserves. */
static void test_threads_two_producers_one_consumer(void **state)
{
	uint64_t size;
	struct mt_ctx *c = calloc(1, sizeof *c);
	assert_non_null(c);
	c->h = seg_alloc(3, MT_LANE_SIZE, 4096, &size);
	atomic_store(&c->producers_left, 2);
	stats_init(&c->st[0]);
	stats_init(&c->st[1]);
	struct mt_prod p[2] = {{c, 0}, {c, 1}};
	pthread_t tp[2], tc;
	assert_int_equal(pthread_create(&tc, NULL, mt_consumer, c), 0);
	assert_int_equal(pthread_create(&tp[0], NULL, mt_producer, &p[0]), 0);
	assert_int_equal(pthread_create(&tp[1], NULL, mt_producer, &p[1]), 0);
	pthread_join(tp[0], NULL);
	pthread_join(tp[1], NULL);
	pthread_join(tc, NULL);

	for (int i = 0; i < 2; i++) {
		struct pw_lane *l = lane_of(c->h, (uint32_t)i);
		uint64_t dropped = atomic_load(&l->dropped);
		print_message("  lane %d: received %llu, dropped %llu, pads %llu\n", i,
			      (unsigned long long)c->st[i].records, (unsigned long long)dropped,
			      (unsigned long long)c->st[i].pads);
		assert_int_equal(c->st[i].bad, BAD_NONE);
		assert_int_equal(c->produced[i], MT_RECORDS);
		assert_int_equal(dropped, c->failed[i]);
		assert_int_equal(c->st[i].records + dropped, MT_RECORDS);
		/* the pacing above keeps losses to a small part; the lane wrapped about once per 64 KiB moved */
		assert_true(c->st[i].records > MT_RECORDS / 2);
		assert_true(c->st[i].pads > 100);
		assert_int_equal(atomic_load(&l->head), atomic_load(&l->tail));
		assert_int_equal(c->st[i].bytes, atomic_load(&l->head));
	}
	free(c->h);
	free(c);
}

/* Several threads on the shared lane with no consumer: once it is full every reserve fails, some on the lock
 * and some on the full lane while holding the lock. Every failure must be counted: successes + dropped ==
 * attempts (the header promises atomic counting since several threads may drop at once). A lost update needs
 * two drops at the same instant, so this catches one with high probability on a machine with 2 or more CPUs,
 * not with certainty; it cannot fail when the counting is right. */
#define SH_THREADS 4
#define SH_ATTEMPTS 2000000

struct sh_ctx {
	struct pw_seg_header *h;
	_Atomic uint64_t ok;
	_Atomic int go;
};

static void *sh_thread(void *arg)
{
	struct sh_ctx *c = arg;
	struct pw_seg_header *h = c->h;
	struct pw_lane *l = lane_of(h, SHARED_LANE);
	uint8_t *data = pw_seg_lane_data(h, SHARED_LANE);
	uint64_t ok = 0;
	while (!atomic_load(&c->go))
		;
	for (int i = 0; i < SH_ATTEMPTS; i++) {
		struct pw_reservation r;
		if (pw_shared_lane_reserve(h, l, data, 16, &r) == 0) {
			memset(r.rec, 0, 16);
			pw_shared_lane_commit(l, &r);
			ok++;
		}
	}
	atomic_fetch_add(&c->ok, ok);
	return NULL;
}

static void test_shared_lane_threads_drop_accounting(void **state)
{
	struct seg *s = *state;
	struct sh_ctx c = {.h = s->h};
	pthread_t t[SH_THREADS];
	for (int i = 0; i < SH_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, sh_thread, &c), 0);
	atomic_store(&c.go, 1);
	for (int i = 0; i < SH_THREADS; i++)
		pthread_join(t[i], NULL);
	struct pw_lane *l = lane_of(s->h, SHARED_LANE);
	uint64_t ok = atomic_load(&c.ok), dropped = atomic_load(&l->dropped);
	print_message("  shared lane: ok %llu, dropped %llu, attempts %llu\n", (unsigned long long)ok,
		      (unsigned long long)dropped, (unsigned long long)SH_THREADS * SH_ATTEMPTS);
	assert_int_equal(ok, LANE_SIZE / 16);
	assert_int_equal(atomic_load(&l->lock), 0);
	assert_int_equal(ok + dropped, (uint64_t)SH_THREADS * SH_ATTEMPTS);
}

/* ---- string arena ---- */

static void test_arena_roundtrip(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	uint32_t len = 99;
	/* garbage where the strings go: the NUL must be written, not found */
	memset((char *)h + h->arena_offset + 8, 0xaa, h->arena_size - 8);

	pw_strref a = arena_put(h, "hello", 5);
	assert_int_equal(a, 8); /* the first string follows the reserved 0 slot */
	assert_int_equal(atomic_load(&h->arena_used), 8 + 16);
	const char *p = arena_get(h, s->size, a, &len);
	assert_non_null(p);
	assert_int_equal(len, 5);
	assert_memory_equal(p, "hello", 6); /* NUL included */

	/* only len bytes are taken, and a NUL added */
	pw_strref b = arena_put(h, "/usr/lib/libfoo.so.1 trailing", 20);
	assert_int_equal(b, 24);
	assert_int_equal(atomic_load(&h->arena_used), 24 + 32);
	p = arena_get(h, s->size, b, &len);
	assert_non_null(p);
	assert_int_equal(len, 20);
	assert_memory_equal(p, "/usr/lib/libfoo.so.1", 21);

	/* embedded NULs (argv) and the empty string */
	pw_strref c = arena_put(h, "ls\0-l\0/tmp", 10);
	assert_int_equal(c, 56);
	p = arena_get(h, s->size, c, &len);
	assert_non_null(p);
	assert_int_equal(len, 10);
	assert_memory_equal(p, "ls\0-l\0/tmp", 11);
	pw_strref e = arena_put(h, "", 0);
	assert_int_equal(e, 56 + 24);
	p = arena_get(h, s->size, e, &len);
	assert_non_null(p);
	assert_int_equal(len, 0);
	assert_int_equal(p[0], 0);

	/* earlier strings are unchanged */
	p = arena_get(h, s->size, a, &len);
	assert_non_null(p);
	assert_int_equal(len, 5);
	assert_string_equal(p, "hello");
	assert_int_equal(atomic_load(&h->arena_dropped), 0);
}

static void test_arena_refs_aligned(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	char buf[64];
	memset(buf, 'x', sizeof buf);
	uint64_t prev = 0;
	for (size_t n = 0; n < 40; n++) {
		buf[0] = (char)('A' + n % 26);
		pw_strref r = arena_put(h, buf, n);
		assert_int_not_equal(r, 0);
		assert_int_equal(r % 8, 0);
		assert_true(r > prev);
		/* entry: 8-byte header, the bytes, a NUL, padded to 8 */
		if (prev)
			assert_int_equal(r - prev, (8 + (n - 1) + 1 + 7) & ~7ull);
		prev = r;
		uint32_t len;
		const char *p = arena_get(h, s->size, r, &len);
		assert_non_null(p);
		assert_int_equal(len, n);
		assert_memory_equal(p, buf, n);
		assert_int_equal(p[n], 0);
	}
}

/* 56-byte entries (47 characters) fill the 4096-byte arena exactly: 73 fit after the 8 reserved bytes. */
static void test_arena_full(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	char str[48];
	pw_strref refs[73];
	uint32_t len;

	for (int i = 0; i < 73; i++) {
		memset(str, 'a' + i % 26, 47);
		str[47] = 0;
		refs[i] = arena_put(h, str, 47);
		assert_int_equal(refs[i], 8 + 56 * (uint64_t)i);
	}
	assert_int_equal(atomic_load(&h->arena_used), 4096);
	assert_int_equal(atomic_load(&h->arena_dropped), 0);
	assert_int_equal(arena_put(h, "x", 1), 0);
	assert_int_equal(atomic_load(&h->arena_dropped), 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(arena_put(h, str, 47), 0);
	assert_int_equal(atomic_load(&h->arena_dropped), 6);
	/* what was stored stays readable, the last entry included */
	for (int i = 0; i < 73; i++) {
		const char *p = arena_get(h, s->size, refs[i], &len);
		assert_non_null(p);
		assert_int_equal(len, 47);
		assert_int_equal(p[0], 'a' + i % 26);
		assert_int_equal(p[46], 'a' + i % 26);
		assert_int_equal(p[47], 0);
	}
	/* nothing was written past the arena */
	assert_null(arena_get(h, s->size, 4096, &len));
}

static void test_arena_get_refuses(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	uint32_t len = 12345;

	pw_strref a = arena_put(h, "hello", 5); /* entry [8, 24) */
	assert_int_equal(a, 8);
	assert_int_equal(atomic_load(&h->arena_used), 24);

	/* "no string", below the first entry, misaligned */
	assert_null(arena_get(h, s->size, 0, &len));
	assert_null(arena_get(h, s->size, 4, &len));
	assert_null(arena_get(h, s->size, 9, &len));
	assert_null(arena_get(h, s->size, 12, &len));
	assert_null(arena_get(h, s->size, 15, &len));
	/* at or past arena_used, past the arena, huge */
	assert_null(arena_get(h, s->size, 24, &len));
	assert_null(arena_get(h, s->size, 32, &len));
	assert_null(arena_get(h, s->size, ARENA_SIZE, &len));
	assert_null(arena_get(h, s->size, ARENA_SIZE + 8, &len));
	assert_null(arena_get(h, s->size, 1ull << 40, &len));
	assert_null(arena_get(h, s->size, UINT64_MAX - 15, &len));
	assert_int_equal(len, 12345); /* untouched on refusal */

	/* a mapping that does not cover the arena */
	assert_null(arena_get(h, s->size - 1, a, &len));
	assert_non_null(arena_get(h, s->size, a, &len));
	assert_int_equal(len, 5);
}

/* A stored length that runs past the written range (a scribbling producer) is refused. */
static void test_arena_get_refuses_long_length(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	uint32_t len = 0;
	pw_strref a = arena_put(h, "hello", 5); /* entry [8, 24): 8 header bytes, room for 7 + NUL */
	uint8_t *entry = (uint8_t *)h + h->arena_offset + a;
	uint32_t l32;

	l32 = 7;
	memcpy(entry, &l32, 4);
	assert_non_null(arena_get(h, s->size, a, &len));
	assert_int_equal(len, 7);
	l32 = 8;
	memcpy(entry, &l32, 4);
	assert_null(arena_get(h, s->size, a, &len));
	l32 = 4096;
	memcpy(entry, &l32, 4);
	assert_null(arena_get(h, s->size, a, &len));
	l32 = UINT32_MAX;
	memcpy(entry, &l32, 4);
	assert_null(arena_get(h, s->size, a, &len));

	/* arena_used from the producer is not trusted beyond the arena */
	l32 = 5;
	memcpy(entry, &l32, 4);
	atomic_store(&h->arena_used, 1ull << 40);
	const char *p = arena_get(h, s->size, a, &len);
	assert_non_null(p);
	assert_int_equal(len, 5);
	assert_null(arena_get(h, s->size, ARENA_SIZE, &len));
	l32 = ARENA_SIZE;
	memcpy(entry, &l32, 4);
	assert_null(arena_get(h, s->size, a, &len));
	l32 = ARENA_SIZE - 8 - 8 - 1;
	memcpy(entry, &l32, 4);
	assert_non_null(arena_get(h, s->size, a, &len));
	assert_int_equal(len, ARENA_SIZE - 17);
	l32 = ARENA_SIZE - 8 - 8;
	memcpy(entry, &l32, 4);
	assert_null(arena_get(h, s->size, a, &len));
}

/* The largest 8-aligned ref, 2^64 - 8: ref + 8 wraps to 0 in a bounds check written as ref + 8 > used. Refs come
 * from records, which the producer writes: the reader must refuse it like any other ref past arena_used. Kept
 * apart (and last) because a sanitizer may stop the program on the pointer arithmetic it leads to. */
static void test_arena_get_refuses_wrapping_ref(void **state)
{
	struct seg *s = *state;
	struct pw_seg_header *h = s->h;
	uint32_t len = 12345;
	assert_int_equal(arena_put(h, "hello", 5), 8);
	assert_null(arena_get(h, s->size, UINT64_MAX - 7, &len));
	assert_int_equal(len, 12345);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_sizes),
		cmocka_unit_test(test_layout_rejects),
		cmocka_unit_test_setup_teardown(test_init_fields, setup, teardown),
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test_setup_teardown(test_validate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_exact_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap_pad_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap_exact_fit_no_pad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap_fill_drain_rounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_lane_drop_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_lane_trylock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_lane_full_releases_lock, setup, teardown),
		cmocka_unit_test(test_threads_two_producers_one_consumer),
		cmocka_unit_test_setup_teardown(test_shared_lane_threads_drop_accounting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_refs_aligned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_get_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_get_refuses_long_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arena_get_refuses_wrapping_ref, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
