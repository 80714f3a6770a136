/* The rank's timeline as the trace shows it (see timeline.h). */
#define _GNU_SOURCE
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

#include "gpu_activity.h"
#include "gpu_analysis.h"

const struct pw_tl_limits pw_tl_trace_limits = {
	.calls = PW_TL_MAX_CALLS,
	.gpu_events = PW_TL_MAX_GPU_EVENTS,
	.gpu_bytes = PW_TL_MAX_GPU_BYTES,
	.range_events = PW_TL_MAX_RANGE_EVENTS,
	.samples = PW_TL_MAX_SAMPLES,
	.strings_bytes = PW_TL_STRINGS_MAX,
};

/* ids are offsets into one u32-indexed string block, so strings stop short of 4 GiB */
const struct pw_tl_limits pw_tl_whole_limits = {
	.calls = UINT64_MAX,
	.gpu_events = UINT64_MAX,
	.gpu_bytes = UINT64_MAX,
	.range_events = UINT64_MAX,
	.samples = UINT64_MAX,
	.strings_bytes = UINT32_MAX - 1,
	.whole_strings = 1,
};

/* ---- interned strings ---- */

struct string_key {
	const struct pw_timeline *tl;
	const char *s;
	size_t len;
};

static int string_eq(const void *ctx, uint32_t pos)
{
	const struct string_key *k = ctx;
	const char *have = k->tl->strings + pos;
	return strncmp(have, k->s, k->len) == 0 && have[k->len] == '\0';
}

/* The id of s[0..len) (NUL bytes in it end it), added on first sight; NONE when out of room. */
static uint32_t intern(struct pw_timeline *tl, const char *s, size_t len)
{
	const char *nul = memchr(s, '\0', len);
	if (nul)
		len = (size_t)(nul - s);
	struct string_key k = {tl, s, len};
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, s, len));
	int64_t pos = pw_hix_find(&tl->string_ix, h, string_eq, &k);
	if (pos >= 0)
		return (uint32_t)pos;
	if (tl->strings_len + len + 1 > tl->limits.strings_bytes) {
		tl->strings_refused++;
		return PW_TL_NONE;
	}
	if (pw_reserve(&tl->strings, &tl->strings_cap, tl->strings_len + len + 1, 1)) {
		tl->oom = 1;
		return PW_TL_NONE;
	}
	uint32_t id = (uint32_t)tl->strings_len;
	if (pw_hix_add(&tl->string_ix, h, id)) {
		tl->oom = 1;
		return PW_TL_NONE;
	}
	memcpy(tl->strings + id, s, len);
	tl->strings[id + len] = '\0';
	tl->strings_len += len + 1;
	return id;
}

/* The first max bytes of s (not inside a UTF-8 sequence) and "..." when longer. */
static uint32_t intern_head(struct pw_timeline *tl, const char *s, size_t len, size_t max)
{
	if (len <= max || tl->limits.whole_strings)
		return intern(tl, s, len);
	size_t n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	char *buf = malloc(n + 4);
	if (!buf) {
		tl->oom = 1;
		return PW_TL_NONE;
	}
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 3);
	uint32_t id = intern(tl, buf, n + 3);
	free(buf);
	return id;
}

const char *pw_tl_cut_path(const char *s, size_t len, char buf[PW_TL_PATH_MAX], size_t *cut_len)
{
	if (len <= PW_TL_PATH_MAX) {
		*cut_len = len;
		return s;
	}
	const char *tail = s + len - (PW_TL_PATH_MAX - 3);
	while (tail < s + len && ((unsigned char)*tail & 0xc0) == 0x80)
		tail++;
	size_t tail_len = (size_t)(s + len - tail);
	memcpy(buf, "...", 3);
	memcpy(buf + 3, tail, tail_len);
	*cut_len = 3 + tail_len;
	return buf;
}

static uint32_t intern_path(struct pw_timeline *tl, const char *s, size_t len)
{
	char buf[PW_TL_PATH_MAX];
	size_t n = len;
	const char *cut = tl->limits.whole_strings ? s : pw_tl_cut_path(s, len, buf, &n);
	return intern(tl, cut, n);
}

/* ---- the keep rule ---- */

static void rule_init(struct pw_tl_rule *k, uint64_t max_n, uint64_t max_bytes)
{
	*k = (struct pw_tl_rule){.max_n = max_n, .max_bytes = max_bytes};
}

static int rule_admits(const struct pw_tl_rule *k, unsigned bucket, unsigned seq_tz)
{
	return bucket > k->floor || (bucket == k->floor && seq_tz >= k->stride);
}

/* The trailing zeros of an event's order in its bucket: it is in every sample of stride up to that. */
static unsigned seq_tz_of(uint64_t seq)
{
	return seq ? (unsigned)__builtin_ctzll(seq) : 63u;
}

/* Counts an event of duration dur (and file bytes) in the rule; returns its trailing zeros (seq_tz). */
static unsigned rule_count(struct pw_tl_rule *k, unsigned bucket, uint64_t bytes)
{
	unsigned tz = seq_tz_of(k->seen[bucket]++);
	k->bytes[bucket] = pw_sat_add(k->bytes[bucket], bytes);
	return tz;
}

/* How many events of those seen the rule keeps, and about how many bytes they take. */
static uint64_t rule_kept(const struct pw_tl_rule *k, uint64_t *bytes)
{
	uint64_t n = 0, b = 0;
	for (unsigned i = k->floor + 1; i < PW_DURATION_BUCKETS; i++) {
		n += k->seen[i];
		b = pw_sat_add(b, k->bytes[i]);
	}
	uint64_t seen = k->seen[k->floor];
	uint64_t sampled = k->stride ? (seen >> k->stride) + ((seen & ((1ull << k->stride) - 1)) != 0) : seen;
	n += sampled;
	if (seen)
		b = pw_sat_add(b, (uint64_t)((double)k->bytes[k->floor] * ((double)sampled / (double)seen)));
	*bytes = b;
	return n;
}

/* Makes the rule one step stricter: the floor's bucket halved, or, once it would keep one event at most,
 * dropped whole and the next bucket made the floor. Returns 0 when it is as strict as it can be. */
static int rule_tighten_step(struct pw_tl_rule *k)
{
	if (k->stride < 63 && (k->seen[k->floor] >> k->stride) > 1) {
		k->stride++;
	} else if (k->floor + 1 < PW_DURATION_BUCKETS) {
		k->floor++;
		k->stride = 0;
	} else if (k->stride < 63) {
		k->stride++;
	} else {
		return 0;
	}
	return 1;
}

/* Makes the rule stricter until what it keeps fits max_n events and, by its estimate, max_bytes (the
 * estimate takes the floor's sample to have its bucket's mean size; the caller checks the bytes kept). */
static void rule_tighten(struct pw_tl_rule *k, uint64_t max_n, uint64_t max_bytes)
{
	uint64_t bytes;
	while ((rule_kept(k, &bytes) > max_n || bytes > max_bytes) && rule_tighten_step(k))
		;
}

/* The budget less a margin, so that one tightening makes room for many events, not one. */
static uint64_t with_margin(uint64_t max)
{
	return max - max / 64;
}

uint64_t pw_tl_rule_threshold_ns(const struct pw_tl_rule *k)
{
	unsigned b = k->stride ? k->floor + 1 : k->floor;
	if (b == 0)
		return 0;
	return b < PW_DURATION_BUCKETS ? (uint64_t)1 << (b - 1) : UINT64_MAX;
}

static uint64_t duration(uint64_t t0, uint64_t t1)
{
	return t1 > t0 ? t1 - t0 : 0;
}

/* ---- threads and streams ---- */

struct thread_key {
	const struct pw_timeline *tl;
	uint32_t image, tid;
};

static int thread_eq(const void *ctx, uint32_t pos)
{
	const struct thread_key *k = ctx;
	const struct pw_tl_thread *t = &k->tl->threads[pos];
	return t->image == k->image && t->tid == k->tid;
}

static struct pw_tl_thread *thread_get(struct pw_timeline *tl, uint32_t tid)
{
	struct thread_key k = {tl, tl->image, tid};
	uint64_t h = pw_hix_hash(pw_hash_combine(pw_hash_mix(tl->image), tid));
	int64_t pos = pw_hix_find(&tl->thread_ix, h, thread_eq, &k);
	if (pos >= 0)
		return &tl->threads[pos];
	if (pw_reserve(&tl->threads, &tl->threads_cap, tl->nthreads + 1, sizeof *tl->threads) ||
	    pw_hix_add(&tl->thread_ix, h, (uint32_t)tl->nthreads)) {
		tl->oom = 1;
		return NULL;
	}
	struct pw_tl_thread *t = &tl->threads[tl->nthreads++];
	*t = (struct pw_tl_thread){.image = tl->image, .tid = tid, .first_ns = UINT64_MAX};
	return t;
}

struct stream_key {
	const struct pw_timeline *tl;
	uint32_t image, slot, stream;
};

static int stream_eq(const void *ctx, uint32_t pos)
{
	const struct stream_key *k = ctx;
	const struct pw_tl_stream *s = &k->tl->streams[pos];
	return s->image == k->image && s->slot == k->slot && s->stream == k->stream;
}

static struct pw_tl_stream *stream_get(struct pw_timeline *tl, uint32_t slot, uint32_t stream)
{
	struct stream_key k = {tl, tl->image, slot, stream};
	uint64_t h = pw_hix_hash(pw_hash_combine(pw_hash_combine(pw_hash_mix(tl->image), slot), stream));
	int64_t pos = pw_hix_find(&tl->stream_ix, h, stream_eq, &k);
	if (pos >= 0)
		return &tl->streams[pos];
	if (pw_reserve(&tl->streams, &tl->streams_cap, tl->nstreams + 1, sizeof *tl->streams) ||
	    pw_hix_add(&tl->stream_ix, h, (uint32_t)tl->nstreams)) {
		tl->oom = 1;
		return NULL;
	}
	struct pw_tl_stream *s = &tl->streams[tl->nstreams++];
	*s = (struct pw_tl_stream){.image = tl->image, .slot = slot, .stream = stream, .first_ns = UINT64_MAX};
	return s;
}

static void extend(uint64_t *first, uint64_t *last, uint64_t t0, uint64_t t1)
{
	if (t0 < *first)
		*first = t0;
	if (t1 > *last)
		*last = t1;
}

/* ---- the timeline ---- */

struct pw_timeline *pw_tl_new(const struct pw_tl_limits *limits)
{
	struct pw_timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->limits = limits ? *limits : pw_tl_trace_limits;
	rule_init(&tl->call_rule, tl->limits.calls, UINT64_MAX);
	rule_init(&tl->gpu_rule, tl->limits.gpu_events, tl->limits.gpu_bytes);
	tl->image = PW_TL_NONE;
	return tl;
}

void pw_tl_free(struct pw_timeline *tl)
{
	if (!tl)
		return;
	free(tl->images);
	free(tl->threads);
	pw_hix_free(&tl->thread_ix);
	free(tl->streams);
	pw_hix_free(&tl->stream_ix);
	free(tl->calls);
	free(tl->apis);
	free(tl->gpus);
	free(tl->ranges);
	free(tl->samples);
	free(tl->strings);
	pw_hix_free(&tl->string_ix);
	free(tl);
}

uint32_t pw_tl_image(struct pw_timeline *tl, uint64_t start_ns)
{
	if (pw_reserve(&tl->images, &tl->images_cap, tl->nimages + 1, sizeof *tl->images)) {
		tl->oom = 1;
		return tl->image = PW_TL_NONE;
	}
	struct pw_tl_image *im = &tl->images[tl->nimages];
	im->start_ns = start_ns;
	memset(im->device_names, 0xff, sizeof im->device_names);
	tl->npushes = 0;
	tl->nstarts = 0;
	return tl->image = (uint32_t)tl->nimages++;
}

/* ---- calls ---- */

/* Drops the kept calls the rule no longer keeps (their threads count them folded), in order. */
static void compact_calls(struct pw_timeline *tl)
{
	size_t n = 0, napis = 0;
	for (size_t i = 0; i < tl->ncalls; i++) {
		struct pw_tl_call c = tl->calls[i];
		uint64_t dur = duration(c.t0, c.t1);
		if (!rule_admits(&tl->call_rule, pw_duration_bucket(dur), c.seq_tz)) {
			tl->threads[c.thread].kept--;
			tl->threads[c.thread].kept_ns -= dur;
			continue;
		}
		if (c.api != PW_TL_NONE) {
			tl->apis[napis] = tl->apis[c.api];
			c.api = (uint32_t)napis++;
		}
		tl->calls[n++] = c;
	}
	tl->ncalls = n;
	tl->napis = napis;
}

/* The fields of a GPU library call beyond the common part. Returns the index, or NONE when out of memory. */
static uint32_t add_api(struct pw_timeline *tl, const struct pw_raw_event *e)
{
	const struct pw_rec_api *a = (const struct pw_rec_api *)e->rec;
	if (pw_reserve_max(&tl->apis, &tl->apis_cap, tl->napis + 1, sizeof *tl->apis, tl->limits.calls)) {
		tl->oom = 1;
		return PW_TL_NONE;
	}
	struct pw_tl_api *x = &tl->apis[tl->napis];
	*x = (struct pw_tl_api){.stream = a->stream, .corr = a->corr, .device = a->device, .sub = a->sub,
				.launch_name = PW_TL_NONE};
	memcpy(x->a, a->a, sizeof x->a);
	enum pw_event_kind kind = pw_events[a->c.h.type].kind;
	if (kind == PW_K_COLL) {
		uint64_t nranks;
		x->coll_bytes = pw_coll_bytes(a, &nranks);
	}
	if (kind == PW_K_GPU_LAUNCH && e->str)
		x->launch_name = intern_head(tl, e->str, e->str_len, PW_TL_LAUNCH_KERNEL_MAX);
	return (uint32_t)tl->napis++;
}

void pw_tl_call(struct pw_timeline *tl, const struct pw_raw_event *e, uint32_t file)
{
	if (!tl || tl->image == PW_TL_NONE)
		return;
	const struct pw_rec_call *rec = e->rec;
	struct pw_tl_thread *th = thread_get(tl, rec->h.tid);
	if (!th)
		return;
	uint64_t dur = duration(e->t0_ns, e->t1_ns);
	extend(&th->first_ns, &th->last_ns, e->t0_ns, e->t1_ns);
	th->calls++;
	th->calls_ns += dur;
	unsigned bucket = pw_duration_bucket(dur);
	unsigned tz = rule_count(&tl->call_rule, bucket, 0);
	if (!rule_admits(&tl->call_rule, bucket, tz))
		return;
	if (tl->ncalls >= tl->limits.calls) {
		rule_tighten(&tl->call_rule, with_margin(tl->limits.calls), UINT64_MAX);
		compact_calls(tl);
		if (!rule_admits(&tl->call_rule, bucket, tz))
			return;
	}
	if (pw_reserve_max(&tl->calls, &tl->calls_cap, tl->ncalls + 1, sizeof *tl->calls, tl->limits.calls)) {
		tl->oom = 1;
		return;
	}
	uint32_t thread = (uint32_t)(th - tl->threads);
	struct pw_tl_call c = {.t0 = e->t0_ns, .t1 = e->t1_ns, .ret = rec->ret, .arg0 = rec->arg0, .arg1 = rec->arg1,
			       .stack_ref = e->stack_ref, .thread = thread, .path = PW_TL_NONE, .api = PW_TL_NONE,
			       .type = rec->h.type, .err = rec->h.err, .seq_tz = (uint8_t)tz};
	if (pw_kind_is_api(pw_events[rec->h.type].kind))
		c.api = add_api(tl, e);
	else if (file != PW_TL_NONE)
		c.path = PW_TL_FILE | file;
	else if (e->str)
		c.path = intern_path(tl, e->str, e->str_len);
	tl->calls[tl->ncalls++] = c;
	tl->threads[thread].kept++;
	tl->threads[thread].kept_ns += dur;
}

uint64_t pw_tl_calls_sampled(const struct pw_timeline *tl)
{
	const struct pw_tl_rule *k = &tl->call_rule;
	uint64_t n = 0;
	for (size_t i = 0; k->stride && i < tl->ncalls; i++)
		n += pw_duration_bucket(duration(tl->calls[i].t0, tl->calls[i].t1)) == k->floor;
	return n;
}

/* ---- GPU work ---- */

static unsigned device_slot(int32_t device)
{
	return device >= 0 && device < (int32_t)PW_TL_DEVICE_SLOTS ? (unsigned)device : PW_TL_DEVICE_SLOTS;
}

/* What a GPU event takes in the trace, with its flow. */
static uint64_t gpu_event_bytes(size_t name_len)
{
	return PW_TL_GPU_EVENT_BYTES + (name_len < PW_TL_KERNEL_MAX ? name_len : PW_TL_KERNEL_MAX);
}

static void compact_gpus(struct pw_timeline *tl)
{
	size_t n = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < tl->ngpus; i++) {
		const struct pw_tl_gpu *g = &tl->gpus[i];
		uint64_t dur = duration(g->t0, g->t1);
		if (!rule_admits(&tl->gpu_rule, pw_duration_bucket(dur), g->seq_tz)) {
			tl->streams[g->stream].kept--;
			tl->streams[g->stream].kept_ns -= dur;
			continue;
		}
		bytes += gpu_event_bytes(g->name_len);
		tl->gpus[n++] = *g;
	}
	tl->ngpus = n;
	tl->gpu_bytes = bytes;
}

static void note_device_name(struct pw_timeline *tl, const struct pw_raw_event *e, int32_t device)
{
	unsigned slot = device_slot(device);
	if (slot < PW_TL_DEVICE_SLOTS && e->str && e->str_len) {
		uint32_t *name = &tl->images[tl->image].device_names[slot];
		if (*name == PW_TL_NONE)
			*name = intern_head(tl, e->str, e->str_len, 128);
	}
}

/* Room for one more event of this many bytes: the rule tightened, and the kept events it no longer keeps
 * dropped, until the kept ones leave it. The rule's byte estimate can be low (a sample of a bucket may
 * hold its longest names), so the bytes actually kept decide, a step at a time. Returns 0 when no rule
 * leaves room. */
static int gpu_room(struct pw_timeline *tl, uint64_t bytes)
{
	const struct pw_tl_limits *l = &tl->limits;
	if (tl->ngpus < l->gpu_events && tl->gpu_bytes + bytes <= l->gpu_bytes)
		return 1;
	rule_tighten(&tl->gpu_rule, with_margin(l->gpu_events), with_margin(l->gpu_bytes));
	compact_gpus(tl);
	while (tl->ngpus >= l->gpu_events || tl->gpu_bytes + bytes > with_margin(l->gpu_bytes)) {
		if (!rule_tighten_step(&tl->gpu_rule))
			return 0;
		compact_gpus(tl);
	}
	return 1;
}

void pw_tl_gpu(struct pw_timeline *tl, const struct pw_raw_event *e)
{
	if (!tl || tl->image == PW_TL_NONE)
		return;
	const struct pw_rec_gpu *g = (const struct pw_rec_gpu *)e->rec;
	enum pw_event_kind kind = pw_events[g->c.h.type].kind;
	tl->gpu_records++;
	if (kind == PW_K_ACT_DROPPED)
		tl->gpu_dropped = pw_sat_add(tl->gpu_dropped, g->c.arg0);
	if (kind == PW_K_ACT_DEVICE)
		note_device_name(tl, e, g->device);
	if (kind != PW_K_ACT_KERNEL && kind != PW_K_ACT_MEMCPY && kind != PW_K_ACT_MEMSET)
		return;
	if (!e->t0_ns || e->t0_ns < tl->images[tl->image].start_ns || e->t1_ns < e->t0_ns) {
		tl->gpu_unplaced++;
		return;
	}
	struct pw_tl_stream *s = stream_get(tl, device_slot(g->device), g->stream);
	if (!s)
		return;
	uint64_t dur = duration(e->t0_ns, e->t1_ns);
	extend(&s->first_ns, &s->last_ns, e->t0_ns, e->t1_ns);
	s->events++;
	s->events_ns = pw_sat_add(s->events_ns, dur);
	int kernel = kind == PW_K_ACT_KERNEL;
	uint64_t bytes = gpu_event_bytes(kernel && e->str ? e->str_len : 0);
	unsigned bucket = pw_duration_bucket(dur);
	unsigned tz = rule_count(&tl->gpu_rule, bucket, bytes);
	if (!rule_admits(&tl->gpu_rule, bucket, tz))
		return;
	if (!gpu_room(tl, bytes) || !rule_admits(&tl->gpu_rule, bucket, tz))
		return;
	if (pw_reserve_max(&tl->gpus, &tl->gpus_cap, tl->ngpus + 1, sizeof *tl->gpus, tl->limits.gpu_events)) {
		tl->oom = 1;
		return;
	}
	uint32_t stream = (uint32_t)(s - tl->streams);
	struct pw_tl_gpu x = {.t0 = e->t0_ns, .t1 = e->t1_ns, .arg0 = g->c.arg0, .arg1 = g->c.arg1,
			      .stream = stream, .corr = g->correlation, .name = PW_TL_NONE, .device = g->device,
			      .kind = (uint8_t)kind, .seq_tz = (uint8_t)tz};
	memcpy(x.a, g->a, sizeof x.a);
	if (kernel && e->str) {
		x.name = intern_head(tl, e->str, e->str_len, PW_TL_KERNEL_MAX);
		x.name_len = (uint16_t)(e->str_len < PW_TL_KERNEL_MAX ? e->str_len : PW_TL_KERNEL_MAX);
	}
	tl->gpus[tl->ngpus++] = x;
	tl->gpu_bytes += bytes;
	tl->streams[stream].kept++;
	tl->streams[stream].kept_ns += dur;
}

uint64_t pw_tl_gpu_sampled(const struct pw_timeline *tl)
{
	const struct pw_tl_rule *k = &tl->gpu_rule;
	uint64_t n = 0;
	for (size_t i = 0; k->stride && i < tl->ngpus; i++)
		n += pw_duration_bucket(duration(tl->gpus[i].t0, tl->gpus[i].t1)) == k->floor;
	return n;
}

static int compare_bindings(const void *a, const void *b)
{
	const struct pw_tl_binding *x = a, *y = b;
	if (x->t0_ns != y->t0_ns)
		return x->t0_ns < y->t0_ns ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

void pw_tl_bind_files(struct pw_timeline *tl, struct pw_tl_binding *bindings, size_t n)
{
	if (!tl || tl->image == PW_TL_NONE || !n)
		return;
	qsort(bindings, n, sizeof *bindings, compare_bindings);
	/* this image's calls are the last ones kept: compaction keeps the order */
	for (size_t i = tl->ncalls; i-- > 0 && tl->threads[tl->calls[i].thread].image == tl->image;) {
		struct pw_tl_call *c = &tl->calls[i];
		enum pw_event_kind kind = pw_events[c->type].kind;
		if (c->path != PW_TL_NONE || c->api != PW_TL_NONE || (kind != PW_K_READ && kind != PW_K_WRITE))
			continue;
		struct pw_tl_binding key = {c->t0, (int64_t)c->arg0, 0};
		const struct pw_tl_binding *b = bsearch(&key, bindings, n, sizeof *bindings, compare_bindings);
		if (b)
			c->path = PW_TL_FILE | b->file;
	}
}

void pw_tl_image_end(struct pw_timeline *tl, const struct pw_act_file *act)
{
	if (!tl || tl->image == PW_TL_NONE)
		return;
	/* this image's GPU events are the last ones kept: compaction keeps the order */
	for (size_t i = tl->ngpus; i-- > 0 && tl->streams[tl->gpus[i].stream].image == tl->image;) {
		struct pw_tl_gpu *g = &tl->gpus[i];
		struct pw_act_launcher l;
		if (!g->corr)
			continue;
		pw_act_file_launcher(act, g->corr, &l);
		g->has_ext = (uint8_t)l.has_ext;
		g->ext = l.ext;
		g->source = (uint8_t)l.source;
		g->src_tid = l.tid;
		g->src_t0 = l.t0;
		g->src_t1 = l.t1;
		g->src_cbid = (uint16_t)l.cbid;
		g->src_driver = (uint8_t)l.driver;
	}
	tl->image = PW_TL_NONE;
}

/* ---- NVTX ---- */

static struct pw_tl_range *add_range(struct pw_timeline *tl)
{
	if (pw_reserve_max(&tl->ranges, &tl->ranges_cap, tl->nranges + 1, sizeof *tl->ranges, tl->limits.range_events)) {
		tl->oom = 1;
		return NULL;
	}
	return &tl->ranges[tl->nranges++];
}

/* A push: kept open until its pop, which draws it as one slice. */
static void open_push(struct pw_timeline *tl, const struct pw_raw_event *e, uint32_t name)
{
	const struct pw_rec_range *rr = (const struct pw_rec_range *)e->rec;
	if (tl->npushes == PW_TL_OPEN_RANGES) {
		tl->ranges_not_drawn++;
		return;
	}
	tl->pushes[tl->npushes++] = (struct pw_tl_open_push){
		.tid = rr->c.h.tid, .domain = pw_get_nvtx_scope(rr->c.arg0).domain, .level = rr->c.ret,
		.t0_ns = e->t0_ns, .category = pw_get_nvtx_scope(rr->c.arg0).category,
		.payload = rr->payload, .payload_type = rr->payload_type, .name = name};
}

/* A pop: the thread's innermost push of its domain, drawn; nothing when its push was not recorded (before
 * the window) or not kept (the open pushes were full): a pop deeper than that innermost push is its own
 * push's. (Domains past the preload's per-domain levels share one count, so a shallower pop still closes
 * the innermost push.) */
static void close_push(struct pw_timeline *tl, const struct pw_raw_event *e)
{
	const struct pw_rec_call *rec = e->rec;
	uint32_t domain = pw_get_nvtx_scope(rec->arg0).domain;
	size_t i = tl->npushes;
	while (i-- > 0 && !(tl->pushes[i].tid == rec->h.tid && tl->pushes[i].domain == domain))
		;
	if (i == (size_t)-1 || rec->ret > tl->pushes[i].level)
		return;
	const struct pw_tl_open_push o = tl->pushes[i];
	memmove(&tl->pushes[i], &tl->pushes[i + 1], (tl->npushes - i - 1) * sizeof *tl->pushes);
	tl->npushes--;
	struct pw_tl_range *r = add_range(tl);
	if (r)
		*r = (struct pw_tl_range){.t0 = o.t0_ns, .t1 = e->t0_ns, .category = o.category, .payload = o.payload,
					  .image = tl->image, .tid = o.tid, .domain = o.domain,
					  .payload_type = o.payload_type, .name = o.name, .ph = 'X'};
}

void pw_tl_range(struct pw_timeline *tl, const struct pw_raw_event *e)
{
	enum pw_event_kind kind = pw_events[e->rec->h.type].kind;
	if (!tl || tl->image == PW_TL_NONE || !pw_kind_is_range(kind))
		return;
	if (tl->nranges >= tl->limits.range_events) {
		tl->ranges_not_drawn++;
		return;
	}
	const struct pw_rec_range *rr = (const struct pw_rec_range *)e->rec;
	size_t name_len = e->str_len < PW_TL_RANGE_NAME_MAX || tl->limits.whole_strings ? e->str_len
											  : PW_TL_RANGE_NAME_MAX;
	uint32_t name = e->str ? intern(tl, e->str, name_len) : PW_TL_NONE;
	if (kind == PW_K_RANGE_PUSH) {
		open_push(tl, e, name);
		return;
	}
	if (kind == PW_K_RANGE_POP) {
		close_push(tl, e);
		return;
	}
	uint64_t id = (uint64_t)rr->c.ret;
	if (kind == PW_K_RANGE_START) {
		if (tl->nstarts == PW_TL_OPEN_RANGES) { /* its end could not be matched: not drawn */
			tl->ranges_not_drawn++;
			return;
		}
		tl->starts[tl->nstarts++] = (struct pw_tl_open_start){id, name};
	} else if (kind == PW_K_RANGE_END) {
		size_t i = 0;
		while (i < tl->nstarts && tl->starts[i].id != id)
			i++;
		if (i == tl->nstarts) { /* its start was not drawn */
			tl->ranges_not_drawn++;
			return;
		}
		name = tl->starts[i].name;
		tl->starts[i] = tl->starts[--tl->nstarts];
	}
	struct pw_tl_range *r = add_range(tl);
	if (r)
		*r = (struct pw_tl_range){.t0 = e->t0_ns, .id = id, .category = pw_get_nvtx_scope(rr->c.arg0).category, .payload = rr->payload,
					  .image = tl->image, .tid = rr->c.h.tid, .domain = pw_get_nvtx_scope(rr->c.arg0).domain,
					  .payload_type = rr->payload_type, .name = name,
					  .ph = kind == PW_K_MARK ? 'i' : kind == PW_K_RANGE_START ? 'b' : 'e'};
}

/* ---- CPU samples ---- */

void pw_tl_sample(struct pw_timeline *tl, const struct pw_raw_event *e)
{
	if (!tl || tl->image == PW_TL_NONE)
		return;
	if (tl->nsamples >= tl->limits.samples) {
		tl->samples_not_drawn++;
		return;
	}
	if (pw_reserve_max(&tl->samples, &tl->samples_cap, tl->nsamples + 1, sizeof *tl->samples, tl->limits.samples)) {
		tl->oom = 1;
		return;
	}
	struct pw_sample s = pw_get_sample(e->rec->arg0, e->rec->arg1);
	tl->samples[tl->nsamples++] = (struct pw_tl_sample){.t0 = e->t0_ns, .period_ns = s.period_ns,
							     .cpu_ns = s.cpu_ns, .stack_ref = e->stack_ref,
							     .image = tl->image, .tid = e->rec->h.tid};
}

/* ---- launches ---- */

static uint64_t launch_key(uint32_t tid, uint64_t t0)
{
	return t0 * 0x9e3779b97f4a7c15ull ^ tid;
}

int pw_tl_launches_note(struct pw_tl_launches *l, const struct pw_tl_gpu *g)
{
	if (g->source != PW_ACT_SRC_WRAPPED)
		return 0;
	int added;
	int64_t at = pw_keys_add(&l->keys, launch_key(g->src_tid, g->src_t0), &added);
	if (at < 0 || (added && pw_reserve(&l->at, &l->cap, (size_t)at + 1, sizeof *l->at)))
		return -1;
	if (added)
		l->at[at] = (struct pw_tl_launch){g->src_tid, g->corr, g->src_t0};
	return 0;
}

const struct pw_tl_launch *pw_tl_launches_find(const struct pw_tl_launches *l, uint32_t tid, uint64_t t0)
{
	int64_t at = pw_keys_find(&l->keys, launch_key(tid, t0));
	return at >= 0 && l->at[at].tid == tid && l->at[at].t0 == t0 ? &l->at[at] : NULL;
}

void pw_tl_launches_reset(struct pw_tl_launches *l)
{
	pw_keys_free(&l->keys);
}

void pw_tl_launches_free(struct pw_tl_launches *l)
{
	pw_keys_free(&l->keys);
	free(l->at);
	*l = (struct pw_tl_launches){0};
}
