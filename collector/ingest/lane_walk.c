#define _GNU_SOURCE
#include "lane_walk.h"

#include <string.h>

#include "../../common/pw_record.h"
#include "../lib/rawfile.h"

static void flush(const struct pw_lane_visitor *v, const uint8_t *buf, uint64_t from, uint64_t to)
{
	if (to > from)
		v->records(v->ctx, buf + from, to - from);
}

static void strings_of(const struct pw_lane_visitor *v, const uint8_t *rec, uint16_t raw_type, uint64_t rsize)
{
	uint16_t type = PW_REC_TYPE(raw_type);
	if (pw_kind_has_string(pw_events[type].kind)) {
		struct pw_rec_call rc;
		memcpy(&rc, rec, sizeof rc);
		if (rc.arg1)
			v->string(v->ctx, rc.arg1);
	}
	if (type == PW_EV_MODULE) { /* its path (above), its build-id and its image */
		struct pw_rec_module m;
		memcpy(&m, rec, sizeof m);
		if (m.build_id)
			v->string(v->ctx, m.build_id);
		if (m.image)
			v->string(v->ctx, m.image);
	}
	if (pw_rec_has_dir(type, rsize - (raw_type & PW_REC_STACK ? 8 : 0))) { /* its path and working directory */
		struct pw_rec_open o;
		memcpy(&o, rec, sizeof o);
		if (o.cwd)
			v->string(v->ctx, o.cwd);
	}
	if (raw_type & PW_REC_STACK) {
		uint64_t stack;
		memcpy(&stack, rec + rsize - 8, sizeof stack);
		stack &= ~PW_STACK_PY_PENDING;
		if (stack)
			v->string(v->ctx, stack);
	}
}

struct pw_lane_walk_result pw_lane_walk(const uint8_t *buf, uint64_t avail, uint64_t first,
					const struct pw_lane_visitor *v)
{
	struct pw_lane_walk_result r = {0, 0};
	uint64_t pos = 0, run = 0;
	while (pos + sizeof(struct pw_rec_hdr) <= avail) {
		struct pw_rec_hdr rh;
		memcpy(&rh, buf + pos, sizeof rh);
		if (rh.type == PW_EV_PAD) {
			if (pos >= first)
				break; /* a PAD past the lane's end is corrupt */
			flush(v, buf, run, pos);
			pos = run = first;
			continue;
		}
		uint64_t rsize = (uint64_t)rh.size8 * 8;
		if (rsize < sizeof rh || pos + rsize > avail)
			break;
		uint16_t type = PW_REC_TYPE(rh.type);
		/* a PAD with flags is no PAD the producer writes, nor a record the raw trace reader takes */
		if (type == PW_EV_PAD || type >= PW_EV_COUNT ||
		    rsize < pw_event_min_size(type) + (rh.type & PW_REC_STACK ? 8 : 0)) {
			flush(v, buf, run, pos);
			r.refused++;
			pos = run = pos + rsize;
			continue;
		}
		strings_of(v, buf + pos, rh.type, rsize);
		r.records++;
		pos += rsize;
	}
	flush(v, buf, run, pos);
	if (pos < avail && pos + sizeof(struct pw_rec_hdr) <= avail)
		r.refused++;
	return r;
}
