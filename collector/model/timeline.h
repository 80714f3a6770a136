/* The rank's timeline as the trace shows it (report_trace.c renders it): part of the model, built in the
 * analysis' one pass over each raw trace, bounded however long the run was, so that the trace writer never
 * opens a raw trace and names what the other reports name (a read's file is the one the analysis bound its
 * descriptor to at that time).
 *
 * - Calls: at most PW_TL_MAX_CALLS kept, chosen online by duration (power-of-two buckets): the buckets above
 *   a floor whole, the floor's bucket every 2^k-th event (an even sample over the run), the ones below not
 *   at all. When the budget fills, the rule is made stricter (the floor's stride doubled, or the floor
 *   raised) and the kept events it no longer keeps are dropped; a stricter rule only drops, so what is kept
 *   at the end is exactly what the final rule keeps of every call the rank made. Per thread, every call is
 *   counted (count, time, extent), so the calls not kept are shown as one folded slice per thread.
 * - GPU work (kernels, copies, memsets): the same rule, with a budget of PW_TL_MAX_GPU_EVENTS events and about
 *   PW_TL_MAX_GPU_BYTES bytes of file (kernel names are long); counted per stream. Each keeps what enqueued
 *   it: the wrapped library call (its thread and start) or CUPTI's record of the CUDA call, resolved when its
 *   raw file ends, while that file's correlation tables still exist (gpu_activity.h).
 * - NVTX ranges and marks: the first PW_TL_MAX_RANGE_EVENTS drawn, push/pop pairs as one slice, start/end as
 *   async begin/end by id; CPU samples: the first PW_TL_MAX_SAMPLES.
 * - Strings (paths of calls that carry one, kernel names, range names) are interned once each, cut to what
 *   the trace shows; a path of a descriptor is the model's file, by index.
 *
 * analysis.c drives it: pw_tl_image() when a raw file starts, pw_tl_call() for every call the report counts,
 * pw_tl_gpu(), pw_tl_range(), pw_tl_sample() for the other records, pw_tl_image_end() when the file ends. */
#ifndef PW_TIMELINE_H
#define PW_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_record.h"
#include "../lib/hash_index.h"
#include "../lib/rawfile.h"
#include "model.h"

#define PW_TL_MAX_CALLS 300000u
#define PW_TL_MAX_RANGE_EVENTS 400000u /* NVTX range begins, ends and marks */
#define PW_TL_OPEN_RANGES 1024u        /* ranges open at once per image, waiting for their end */
#define PW_TL_MAX_GPU_EVENTS 100000u
#define PW_TL_MAX_GPU_BYTES (48u << 20)
#define PW_TL_GPU_EVENT_BYTES 400u /* what a GPU event and its flow take in the file, its name aside */
#define PW_TL_MAX_SAMPLES 200000u
#define PW_TL_PATH_MAX 160u        /* bytes of a path kept; a longer one keeps its end behind "..." */
#define PW_TL_LAUNCH_KERNEL_MAX 120u /* bytes of a kernel name in a launch call's name */
#define PW_TL_KERNEL_MAX 4096u     /* bytes of a kernel's name on its GPU track (longer: garbage, cut) */
#define PW_TL_RANGE_NAME_MAX 127u
#define PW_TL_DEVICE_SLOTS 64u     /* device ids with a track group of their own; the others share slot 64 */
#define PW_TL_STRINGS_MAX (32u << 20) /* bytes of interned strings; past them a call's path is not kept */
#define PW_TL_NONE UINT32_MAX

/* What a timeline keeps: the trace's budgets above (pw_tl_trace_limits), or every event and every string
 * whole (pw_tl_whole_limits: an export wants them all, and its writer streams them to disk). */
struct pw_tl_limits {
	uint64_t calls, gpu_events, gpu_bytes, range_events, samples, strings_bytes;
	int whole_strings; /* paths, range and kernel names kept uncut */
};
extern const struct pw_tl_limits pw_tl_trace_limits, pw_tl_whole_limits;

/* Which events of one kind are kept: buckets above floor whole, floor's bucket every 2^stride-th event (by
 * its order of arrival in that bucket), those below none. Stricter only ever. */
struct pw_tl_rule {
	unsigned floor;
	unsigned stride; /* log2 */
	uint64_t seen[PW_DURATION_BUCKETS]; /* events per duration bucket (pw_duration_bucket) */
	uint64_t bytes[PW_DURATION_BUCKETS];/* what they would take in the file (GPU work) */
	uint64_t max_n, max_bytes;
};

/* The threshold the rule came to: the shortest duration kept whole (0: every event kept). */
uint64_t pw_tl_rule_threshold_ns(const struct pw_tl_rule *k);

/* A thread of an image, every call of it counted. */
struct pw_tl_thread {
	uint32_t image, tid;
	uint64_t first_ns, last_ns; /* extent of its calls */
	uint64_t calls, calls_ns;
	uint64_t kept, kept_ns;
};

/* A stream of a device of an image, every kernel, copy and memset counted. */
struct pw_tl_stream {
	uint32_t image;
	uint32_t slot; /* device slot, PW_TL_DEVICE_SLOTS for a device id out of range */
	uint32_t stream;
	uint64_t first_ns, last_ns;
	uint64_t events, events_ns;
	uint64_t kept, kept_ns;
};

/* A kept call. path: a model file (PW_TL_FILE | index into the rank's files), an interned string, or NONE. */
#define PW_TL_FILE 0x80000000u
struct pw_tl_call {
	uint64_t t0, t1;
	int64_t ret;
	uint64_t arg0, arg1;
	uint64_t stack_ref;
	uint32_t thread; /* index into threads */
	uint32_t path;
	uint32_t api; /* index into apis for a GPU library call, else NONE */
	uint16_t type;
	uint8_t err;
	uint8_t seq_tz; /* trailing zeros of its order in its bucket (63 for the first): the rule's sample */
};

/* What a GPU library call said beyond the common part (struct pw_rec_api), and its bytes when a
 * collective (the model's count). */
struct pw_tl_api {
	uint64_t stream;
	uint64_t a[4];
	uint64_t corr;
	uint64_t coll_bytes;
	int32_t device;
	uint32_t sub;
	uint32_t launch_name; /* a launch's kernel name, cut (interned), else NONE */
};

struct pw_tl_gpu {
	uint64_t t0, t1;
	uint64_t arg0, arg1;
	uint64_t a[3];
	uint64_t ext; /* the external correlation id (has_ext) */
	uint64_t src_t0, src_t1;
	uint32_t stream; /* index into streams */
	uint32_t corr;
	uint32_t name; /* a kernel's name (interned, cut), else NONE */
	int32_t device;
	uint32_t src_tid;
	uint16_t src_cbid;
	uint16_t name_len; /* the bytes its name counts in the budget (gpu_event_bytes) */
	uint8_t kind; /* PW_K_ACT_KERNEL, _MEMCPY or _MEMSET */
	uint8_t seq_tz;
	uint8_t has_ext;
	uint8_t source; /* enum pw_act_source (gpu_activity.h): what enqueued it */
	uint8_t src_driver;
};

/* A drawn NVTX event: a push/pop range ('X', t1 its pop), a start or end by id ('b', 'e'), a mark ('i'). */
struct pw_tl_range {
	uint64_t t0, t1;
	uint64_t id;
	uint64_t category, payload;
	uint32_t image, tid, domain, payload_type;
	uint32_t name;
	char ph;
};

struct pw_tl_sample {
	uint64_t t0;
	uint64_t period_ns;
	uint64_t cpu_ns; /* the CPU time the sample stands for */
	uint64_t stack_ref;
	uint32_t image, tid;
};

struct pw_tl_image {
	uint64_t start_ns;
	uint32_t device_names[PW_TL_DEVICE_SLOTS]; /* interned, NONE when unknown */
};

struct pw_tl_open_push {
	uint32_t tid, domain;
	int64_t level; /* the push's level (its record's ret), which its pop's names */
	uint64_t t0_ns, category, payload;
	uint32_t payload_type;
	uint32_t name;
};

struct pw_tl_open_start {
	uint64_t id;
	uint32_t name;
};

struct pw_timeline {
	struct pw_tl_image *images;
	size_t nimages, images_cap;
	struct pw_tl_thread *threads;
	size_t nthreads, threads_cap;
	struct pw_hix thread_ix; /* (image, tid) */
	struct pw_tl_stream *streams;
	size_t nstreams, streams_cap;
	struct pw_hix stream_ix; /* (image, slot, stream) */

	struct pw_tl_rule call_rule;
	struct pw_tl_call *calls;
	size_t ncalls, calls_cap;
	struct pw_tl_api *apis;
	size_t napis, apis_cap;

	struct pw_tl_rule gpu_rule;
	struct pw_tl_gpu *gpus;
	size_t ngpus, gpus_cap;
	uint64_t gpu_bytes;      /* of the kept GPU events */
	uint64_t gpu_records;    /* activity records of every kind */
	uint64_t gpu_unplaced;   /* kernels, copies, memsets with impossible times, not drawn */
	uint64_t gpu_dropped;    /* activity records CUPTI said it lost */

	struct pw_tl_range *ranges;
	size_t nranges, ranges_cap;
	uint64_t ranges_not_drawn;
	struct pw_tl_open_push pushes[PW_TL_OPEN_RANGES]; /* of the image being read */
	size_t npushes;
	struct pw_tl_open_start starts[PW_TL_OPEN_RANGES];
	size_t nstarts;

	struct pw_tl_sample *samples;
	size_t nsamples, samples_cap;
	uint64_t samples_not_drawn;

	char *strings; /* interned strings, each NUL-terminated; an id is an offset */
	size_t strings_len, strings_cap;
	struct pw_hix string_ix;
	uint64_t strings_refused;

	uint32_t image; /* the image being read */
	int oom;
	struct pw_tl_limits limits;
};

/* A timeline that keeps what limits say (NULL: the trace's). */
struct pw_timeline *pw_tl_new(const struct pw_tl_limits *limits);
void pw_tl_free(struct pw_timeline *tl);

/* A raw file starts: its image's number (pw_proc.timeline_image), or PW_TL_NONE when out of memory. */
uint32_t pw_tl_image(struct pw_timeline *tl, uint64_t start_ns);
/* A call the report counts. file: the model's file the call is on (its descriptor's binding, or an open's
 * path), PW_TL_NONE when none. */
void pw_tl_call(struct pw_timeline *tl, const struct pw_raw_event *e, uint32_t file);
/* An activity record (kernel, copy, memset; the device names; the losses). */
void pw_tl_gpu(struct pw_timeline *tl, const struct pw_raw_event *e);
/* An NVTX range, mark or name record. */
void pw_tl_range(struct pw_timeline *tl, const struct pw_raw_event *e);
void pw_tl_sample(struct pw_timeline *tl, const struct pw_raw_event *e);

/* A read or write on a descriptor that was bound to no file when the call was kept (its thread's lane reached
 * the raw file before the open's), and the file it was on after all. */
struct pw_tl_binding {
	uint64_t t0_ns;
	int64_t fd;
	uint32_t file;
};
/* Names the files of the image's kept calls that bindings (sorted here) stand for; before pw_tl_image_end. */
void pw_tl_bind_files(struct pw_timeline *tl, struct pw_tl_binding *bindings, size_t n);

struct pw_act_file; /* gpu_activity.h */
/* The raw file is read: what enqueued each of its kept GPU events, from its correlation tables. */
void pw_tl_image_end(struct pw_timeline *tl, const struct pw_act_file *act);

/* A path as the timeline keeps one: whole when it fits PW_TL_PATH_MAX bytes, else "..." and its last bytes
 * (not inside a UTF-8 sequence), since a path's end says most. Returns the bytes (s itself, or buf) and
 * their count in *cut_len. */
const char *pw_tl_cut_path(const char *s, size_t len, char buf[PW_TL_PATH_MAX], size_t *cut_len);

/* An interned string. */
static inline const char *pw_tl_string(const struct pw_timeline *tl, uint32_t id)
{
	return id == PW_TL_NONE ? NULL : tl->strings + id;
}

/* The wrapped calls of an image that enqueued GPU work, by thread and start, with the correlation id CUPTI gave
 * the work: what the writers put on the call (Kineto's runtime events carry it; nsys's runtime table too). */
struct pw_tl_launch {
	uint32_t tid, corr;
	uint64_t t0;
};
struct pw_tl_launches {
	struct pw_keys keys;
	struct pw_tl_launch *at; /* at keys' positions */
	size_t cap;
};
/* Notes the launching call of GPU event g when it is a wrapped call. Returns 0, or -1 when out of memory. */
int pw_tl_launches_note(struct pw_tl_launches *l, const struct pw_tl_gpu *g);
/* The launch of thread tid that started at t0, or NULL. */
const struct pw_tl_launch *pw_tl_launches_find(const struct pw_tl_launches *l, uint32_t tid, uint64_t t0);
/* Forgets the launches (for the next image); _free also gives back the memory. */
void pw_tl_launches_reset(struct pw_tl_launches *l);
void pw_tl_launches_free(struct pw_tl_launches *l);

/* Of the kept calls and GPU events, those of the rule's sampled bucket (below the threshold). */
uint64_t pw_tl_calls_sampled(const struct pw_timeline *tl);
uint64_t pw_tl_gpu_sampled(const struct pw_timeline *tl);

#endif
