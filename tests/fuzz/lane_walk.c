/* Fuzz target: the record decoder (collector/ingest/lane_walk.c), which the collector runs on the bytes it copied out
 * of a lane of an untrusted producer's segment.
 *
 * Input: u16 split (little-endian), then the lane's readable bytes linearised. first = split % (bytes + 1)
 * is where the lane's end fell (a PAD before it sends the walk there).
 *
 * Checked: every stretch handed over lies in the buffer, after the previous one; each is a run of records the
 * raw trace reader would take (size, type, room for a stack reference); every string a record of a stretch
 * references was announced (nonzero) since the previous stretch; the counts returned match what was handed
 * over. */
#define _GNU_SOURCE
#include "fuzz.h"

#include "../../collector/ingest/lane_walk.h"
#include "../../collector/lib/rawfile.h"
#include "../../common/pw_record.h"

struct walk {
	const uint8_t *buf;
	uint64_t avail;
	uint64_t end;     /* end of the last stretch */
	uint64_t records; /* records in the stretches */
	uint64_t *announced; /* since the last stretch: at most two per record of 8 bytes or more */
	size_t nannounced, cap;
	uint64_t sum;
};

static int was_announced(const struct walk *w, uint64_t ref)
{
	for (size_t i = 0; i < w->nannounced; i++)
		if (w->announced[i] == ref)
			return 1;
	return 0;
}

static void on_string(void *ctx, uint64_t ref)
{
	struct walk *w = ctx;
	FUZZ_CHECK(ref != 0);
	FUZZ_CHECK(w->nannounced < w->cap);
	w->announced[w->nannounced++] = ref;
}

static void on_records(void *ctx, const uint8_t *recs, uint64_t len)
{
	struct walk *w = ctx;
	FUZZ_CHECK(len > 0);
	FUZZ_CHECK(fuzz_inside(w->buf, w->avail, recs, len));
	FUZZ_CHECK((uint64_t)(recs - w->buf) >= w->end);
	w->end = (uint64_t)(recs - w->buf) + len;
	uint64_t r = 0;
	while (r < len) {
		struct pw_rec_hdr h;
		FUZZ_CHECK(len - r >= sizeof h);
		memcpy(&h, recs + r, sizeof h);
		uint64_t rsize = (uint64_t)h.size8 * 8;
		uint16_t type = PW_REC_TYPE(h.type);
		int stacked = (h.type & PW_REC_STACK) != 0;
		FUZZ_CHECK(rsize >= sizeof h && rsize <= len - r);
		FUZZ_CHECK(type != PW_EV_PAD && type < PW_EV_COUNT);
		FUZZ_CHECK(rsize >= pw_event_min_size(type) + (stacked ? 8 : 0));
		struct pw_rec_call c;
		memcpy(&c, recs + r, sizeof c);
		if (pw_kind_has_string(pw_events[type].kind) && c.arg1)
			FUZZ_CHECK(was_announced(w, c.arg1));
		if (type == PW_EV_MODULE) {
			struct pw_rec_module m;
			memcpy(&m, recs + r, sizeof m);
			if (m.build_id)
				FUZZ_CHECK(was_announced(w, m.build_id));
		}
		if (stacked) {
			uint64_t stack;
			memcpy(&stack, recs + r + rsize - 8, sizeof stack);
			stack &= ~PW_STACK_PY_PENDING;
			if (stack)
				FUZZ_CHECK(was_announced(w, stack));
		}
		w->sum += fuzz_touch(recs + r, rsize);
		w->records++;
		r += rsize;
	}
	w->nannounced = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint16_t split;
	memcpy(&split, data, sizeof split);
	size_t avail = size - 2;
	uint8_t *buf = fuzz_copy(data + 2, avail);
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		abort();
	w->buf = buf;
	w->avail = avail;
	w->cap = avail / 4 + 1;
	w->announced = malloc(w->cap * sizeof *w->announced);
	if (!w->announced)
		abort();
	uint64_t first = split % (avail + 1);
	struct pw_lane_visitor v = {w, on_records, on_string};
	struct pw_lane_walk_result r = pw_lane_walk(buf, avail, first, &v);
	FUZZ_CHECK(r.records == w->records);
	/* every refusal steps over at least a record header's worth of bytes, or ends the walk */
	FUZZ_CHECK(r.refused <= avail / sizeof(struct pw_rec_hdr) + 1);
	free(w->announced);
	free(w);
	free(buf);
	return 0;
}
