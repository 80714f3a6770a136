/* The record decoder: validates the bytes the collector copied out of one lane of a producer's segment. The
 * producer is untrusted (design property 5): every size, type and PAD place is checked here, in the copy. */
#ifndef PW_LANE_WALK_H
#define PW_LANE_WALK_H

#include <stdint.h>

struct pw_lane_visitor {
	void *ctx;
	/* a stretch of valid records, in order, ready to be written as one RECORDS chunk */
	void (*records)(void *ctx, const uint8_t *recs, uint64_t len);
	/* a string the records of the next stretch reference (the arena reference, never 0) */
	void (*string)(void *ctx, uint64_t ref);
};

struct pw_lane_walk_result {
	uint64_t records; /* valid records handed over */
	uint64_t refused; /* records of unknown type (a PAD with flags too) or bad size, and a corrupt tail (once) */
};

/* Walks buf[0, avail): a lane's readable bytes linearised, the first `first` of them up to the lane's end (a PAD
 * record may only appear before that point; it sends the walk to `first`). Valid records reach v->records in
 * stretches; the strings they reference reach v->string before the stretch that holds them. */
struct pw_lane_walk_result pw_lane_walk(const uint8_t *buf, uint64_t avail, uint64_t first,
					const struct pw_lane_visitor *v);

#endif
