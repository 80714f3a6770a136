/* What the GPU did, from CUPTI's activity records (struct pw_rec_gpu, pw_kind_is_activity()): the part of
 * a rank's model that gpu_analysis.c cannot give, since it sees only the CPU side of the library calls.
 *
 * - Kernels in the form of PyTorch's key_averages, per (name, device, stream): count, total, min, max.
 * - Per device: span (first activity start to last end), busy time (the union of the kernel, memcpy and
 *   memset intervals, not their sum), idle time and gaps, launch latency (launch call to kernel start) and
 *   queue depth at launch.
 * - Correlation: a kernel's CUPTI correlation id -> external id (PW_K_ACT_EXTCORR) -> the wrapped library call
 *   whose pw_rec_api.corr it is (its thread, start and event); failing that, the CUPTI API record with that
 *   correlation id (thread, start). Kernels are counted linked to a wrapped call, linked only to a CUPTI API
 *   record, or unlinked; GPU time is summed per wrapped call ("GPU time by call").
 * - GPU copies and memsets by (device, direction, source and destination memory kind).
 * - Every idle gap classified by what its launching thread (the one that enqueued the work that ended it)
 *   was doing: see enum pw_gap_class; the largest gaps per device kept with that thread's calls in them.
 * - Recording status, losses and devices.
 *
 * Memory: the operations (kernels, copies, memsets) are kept as compact entries, 48 bytes each, linear in
 * their number; correlation tables live for one raw file; distinct kernel rows and copy rows are bounded,
 * the rest counted in per-device "other" figures so totals stay exact. Sums saturate.
 *
 * analysis.c drives it: pw_act_file_init() when a raw file starts, pw_act_event() for every record of an
 * activity kind, pw_act_api() for every record of an api kind, pw_act_file_end() when the file is read,
 * pw_act_finish() once per rank when every file is read (it reads the rank's raw files a second time for
 * the gaps, see gpu_activity.c), pw_act_report_free() with the model.
 */
#ifndef PW_GPU_ACTIVITY_H
#define PW_GPU_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_record.h"
#include "../lib/rawfile.h"

#define PW_ACT_MAX_KERNEL_ROWS 4096 /* distinct (kernel name, device, stream) per rank */
#define PW_ACT_MAX_NAME 8192        /* bytes of a kernel name kept; longer names are cut */
#define PW_ACT_MAX_DEVICES 64       /* distinct device ids per rank */
#define PW_ACT_MAX_COPY_ROWS 512    /* distinct (device, direction, source, destination) per rank */
#define PW_ACT_MAX_GRAPH_ROWS 256   /* distinct (CUDA graph, device) per rank */
#define PW_ACT_TOP_GAPS 5           /* largest idle gaps kept per device */
#define PW_ACT_GAP_CALLS 6          /* calls listed per kept gap (the rest summed as "other calls") */
#define PW_ACT_LAUNCH_GAP_NS 100000 /* a gap shorter than this, with no other cause, is launch overhead */
#define PW_ACT_SMALL_COPY 65536     /* a copy of fewer bytes is "small" */

/* Why the GPU was idle, first rule that applies, for a gap [g0, g1) whose launching thread is T:
 * SYNC: T was in a synchronising call at g0 (PW_K_GPU_SYNC, or a PW_K_GPU_MEMCPY without PW_API_ASYNC,
 * with t0 <= g0 <= t1): it was waiting for the GPU when the GPU ran dry, and what it had waited (g0 - t0)
 * plus T's time in the gap in synchronising calls cover at least half the gap: without the wait, the work
 * it waited for could have covered most of what T did next. A call that waited briefly (a weights copy
 * before a long set-up) leaves the gap to the rules below;
 * INPUT: T's reads (PW_K_READ) and waits on other threads or processes (poll, ppoll, select, pselect,
 * epoll_wait, epoll_pwait, condition variables, semaphores, joins, mutexes held by another thread, PW_K_WAIT)
 * cover at least half the gap;
 * SLEEP: T's sleeps (nanosleep, clock_nanosleep, usleep, sleep) cover at least half;
 * LAUNCH: the gap is shorter than PW_ACT_LAUNCH_GAP_NS: T was between launches;
 * CPU: otherwise, T computed on the CPU without recorded I/O or waits;
 * UNKNOWN: the work that ended the gap is linked to no thread. */
enum pw_gap_class {
	PW_GAP_SYNC,
	PW_GAP_INPUT,
	PW_GAP_SLEEP,
	PW_GAP_LAUNCH,
	PW_GAP_CPU,
	PW_GAP_UNKNOWN,
	PW_GAP_CLASSES
};
/* "sync", "input", "sleep", "launch", "cpu", "unknown". */
const char *pw_gap_class_name(enum pw_gap_class c);

/* The kinds of GPU operation. */
enum pw_act_op_kind { PW_ACT_OP_KERNEL = 1, PW_ACT_OP_MEMCPY = 2, PW_ACT_OP_MEMSET = 3 };

/* The kernels one CUDA graph ran (CUPTI's graphId, one numbering per process) on one device. */
struct pw_act_graph_row {
	uint32_t graph_id;
	int32_t device;
	uint32_t file; /* the raw file (process image) it was seen in: pw_act_file.serial */
	uint64_t launches; /* graph launches that ran kernels (distinct correlation ids) */
	uint64_t kernels, total_ns;
};

struct pw_act_kernel_row {
	char *name; /* whole, as CUPTI gave it (mangled); "(unknown)" when none */
	int32_t device;
	uint32_t stream; /* CUPTI's stream id */
	uint64_t count, total_ns, min_ns, max_ns;
};

/* Copies (memset 0) and memsets (memset 1; dir 0 and src 0 then). */
struct pw_act_copy_row {
	int32_t device;
	uint8_t memset;
	uint8_t dir; /* enum pw_copy_dir */
	uint8_t src, dst; /* enum pw_act_mem; a memset's memory kind is dst */
	uint64_t count, bytes, total_ns;
};

struct pw_act_time_stat {
	uint64_t count, total_ns, min_ns, max_ns;
};

struct pw_act_device {
	int32_t id;
	/* from the PW_K_ACT_DEVICE record, when there was one */
	int has_info;
	char *name;
	uint32_t sms, cc_major, cc_minor;
	uint64_t memory_bytes, bandwidth_kbps;
	/* from the operations */
	uint64_t kernels, memcpys, memsets;
	uint64_t first_ns, last_ns; /* first start, last end */
	uint64_t span_ns, busy_ns, idle_ns;
	uint64_t kernel_ns, memcpy_ns, memset_ns; /* sums: overlapping work counts twice here, not in busy */
	uint64_t gaps, longest_gap_ns;
	uint64_t idle_by_class[PW_GAP_CLASSES];
	uint64_t launches; /* kernels with a known launch time: the samples of the two figures below */
	uint64_t latency_mean_ns, latency_p50_ns, latency_p95_ns, latency_max_ns;
	double queue_mean;
	uint64_t queue_max;
	struct pw_act_time_stat kernel_other; /* kernels past PW_ACT_MAX_KERNEL_ROWS rows */
};

/* A recorded call of the launching thread inside a kept gap: time (of the call inside the gap) per event. */
struct pw_act_gap_call {
	uint16_t ev;
	uint64_t count;
	uint64_t ns;
};

struct pw_act_gap {
	int32_t device;
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	uint64_t duration_ns;
	int pid;      /* of the launching thread, 0 when unknown */
	uint32_t tid; /* the launching thread, 0 when unknown */
	enum pw_gap_class cls;
	uint16_t sync_ev; /* the synchronising call T was in at the start when the gap is SYNC, else 0 */
	struct pw_act_gap_call calls[PW_ACT_GAP_CALLS]; /* by time, most first */
	size_t ncalls;
	uint64_t other_calls_ns; /* calls past PW_ACT_GAP_CALLS */
	uint64_t running_ns;     /* the rest of the gap: no recorded call ("running") */
	const char *next;        /* what ended the gap: the kernel's name, "memcpy HtoD", "memset" */
};

struct pw_act_class {
	uint64_t gaps;
	uint64_t idle_ns;
	uint64_t call_ns[PW_EV_COUNT];    /* the launching threads' calls inside these gaps, per event */
	uint64_t call_count[PW_EV_COUNT];
	uint64_t sync_ns[PW_EV_COUNT];    /* SYNC: idle after each synchronising call, and how many gaps */
	uint64_t sync_gaps[PW_EV_COUNT];
};

/* GPU time of the operations a call enqueued. */
struct pw_act_call_time {
	uint64_t kernels, kernel_ns;
	uint64_t copies, copy_ns; /* memcpys and memsets */
};

struct pw_act_work; /* the operations and the per-rank indexes: freed by pw_act_finish() */

struct pw_act_report {
	/* how recording went: the most telling PW_K_ACT_STATUS of the rank's processes (stepped back for
	 * another client, recording, failed, no libcupti or driver or a fork child, disabled); 0 when no process
	 * sent one */
	int state; /* enum pw_act_state */
	int64_t error_code; /* CUptiResult of the call that failed */
	char *cupti_path;
	uint64_t cupti_version;
	uint64_t driver_version; /* PW_ACT_DRIVER_UNUSABLE: what cuDriverGetVersion gave (0: nothing) */
	uint64_t runtime_major;  /* PW_ACT_DRIVER_UNUSABLE: the CUDA runtime's major version (0: unknown) */
	int clock; /* enum pw_act_clock, 0 when unknown */
	uint64_t other_client_ns; /* PW_ACT_OTHER_CLIENT: when profwrap stepped back for another CUPTI client */
	uint64_t fork_children;   /* PW_ACT_FORKED: fork children that called CUDA after their parent had used it */
	uint64_t records; /* activity records CUPTI delivered (every kind but PW_K_ACT_STATUS and _DROPPED) */
	uint64_t dropped; /* records CUPTI dropped (PW_K_ACT_DROPPED arg0) */
	uint64_t buffers_refused; /* records in buffers refused for want of a free one (arg1) */
	uint64_t overhead_ns, overhead_records;
	uint64_t bad_records; /* operations without times, with end before start, or on a bad device id */

	uint64_t kernels, memcpys, memsets; /* operations kept */
	uint64_t kernels_linked;     /* to a wrapped call */
	uint64_t kernels_linked_api; /* only to a CUPTI API record */
	uint64_t kernels_unlinked;
	uint64_t kernel_median_ns; /* of every kernel of the rank (the lower median) */

	struct pw_act_device *devices; /* sorted by id; devices_other: operations on devices past the bound */
	size_t ndevices;
	uint64_t devices_other;
	struct pw_act_kernel_row *kernel_rows; /* by device id, then total time, longest first */
	size_t nkernel_rows;
	/* kernels CUDA graphs ran (left out of launch latency and queue depth: they were launched by the graph's
	 * launch, not each by a call): per graph, by total time, longest first; those past the row bound */
	struct pw_act_graph_row *graph_rows;
	size_t ngraph_rows;
	uint64_t graph_kernels;
	struct pw_act_graph_row graphs_other;
	struct pw_act_copy_row *copy_rows; /* by device id, memcpys before memsets, then total time */
	size_t ncopy_rows;
	struct pw_act_time_stat copy_other; /* copies and memsets past PW_ACT_MAX_COPY_ROWS rows */
	uint64_t copy_other_bytes;

	struct pw_act_gap *gaps; /* the PW_ACT_TOP_GAPS largest per device, by device id then duration */
	size_t ngaps;
	struct pw_act_class classes[PW_GAP_CLASSES];
	uint64_t gaps_total;

	struct pw_act_call_time by_call[PW_EV_COUNT]; /* by the wrapped call that enqueued the work */
	struct pw_act_call_time by_api_only;          /* linked only to a CUPTI API record */
	struct pw_act_call_time unlinked;

	/* for the findings */
	uint64_t pageable_count, pageable_bytes, pageable_ns; /* copies with a pageable side */
	uint64_t pinned_count, pinned_bytes, pinned_ns;       /* copies with a pinned side and no pageable one */
	uint64_t small_copy_calls, small_copy_cpu_ns; /* successful PW_K_GPU_MEMCPY calls under PW_ACT_SMALL_COPY */
	uint64_t small_copy_gpu_ns;                   /* the GPU time of the copies they enqueued */
	uint64_t coll_kernels, coll_kernel_ns; /* kernels of NCCL calls (or unlinked, named nccl*) */
	uint64_t coll_linked_ns;               /* of those, the ones linked to a PW_K_COLL call */
	double coll_bus_bytes;                 /* the bus bytes of the linked calls, each counted once */
	int32_t coll_device;                   /* the device with the most collective kernel time */

	struct pw_act_work *work;
};

/* Per raw file: the correlation tables of one process image (correlation ids are per process). Embedded in
 * analysis.c's per-file state. */
struct pw_act_wrapped;
struct pw_act_corr;
struct pw_act_file {
	struct pw_act_wrapped *wrapped; /* api records with an external id */
	size_t nwrapped, wrapped_cap;
	struct pw_act_corr *ext; /* correlation -> external id */
	size_t next, ext_cap;
	struct pw_act_corr *api; /* correlation -> CUPTI API record (thread, start) */
	size_t napi, api_cap;
	size_t first_op; /* the first operation of this file in the rank's list, SIZE_MAX when none yet */
	uint32_t serial; /* distinct per file: CUPTI's correlation and graph ids are per process */
};

void pw_act_file_init(struct pw_act_file *f);
/* One record of an activity kind. *act is created on the rank's first one. Returns 0, or -1 when out of
 * memory (the record is then not, or partly, counted). */
int pw_act_event(struct pw_act_report **act, struct pw_act_file *f, const struct pw_raw_event *e);
/* One record of an api kind (a GPU library call that took dur ns on its thread). Same contract. */
int pw_act_api(struct pw_act_report **act, struct pw_act_file *f, const struct pw_raw_event *e, uint64_t dur);
/* Links the file's operations to their calls. path is the raw file (read again by pw_act_finish()), pid its
 * process. act may be NULL (no GPU record in the file). Returns 0 or -1. */
int pw_act_file_end(struct pw_act_report *act, struct pw_act_file *f, const char *path, int pid);

/* What enqueued GPU work: the wrapped library call whose external id CUPTI tied to its correlation id (for an
 * NCCL group, the call its time is taken for), else CUPTI's record of the CUDA call. */
enum pw_act_source { PW_ACT_SRC_NONE, PW_ACT_SRC_WRAPPED, PW_ACT_SRC_API };
struct pw_act_launcher {
	enum pw_act_source source;
	uint32_t tid;
	uint64_t t0, t1; /* t1: of an API record */
	uint32_t cbid;   /* of an API record: CUPTI's callback id */
	int driver;      /* of an API record: a driver call */
	int has_ext;
	uint64_t ext;
};
/* What enqueued the work of correlation id corr in the file, after pw_act_file_end(). */
void pw_act_file_launcher(const struct pw_act_file *f, uint32_t corr, struct pw_act_launcher *out);
/* Frees the file's correlation tables (when the file is done with). */
void pw_act_file_free(struct pw_act_file *f);
/* Computes the devices' figures, the gaps and their causes (reading the raw files of the launching threads
 * again), sorts the tables and frees the working state. act may be NULL. Returns 0, or -1 when out of
 * memory (the figures are then partial). */
int pw_act_finish(struct pw_act_report *act);
void pw_act_report_free(struct pw_act_report *act);

/* Whether the rank has GPU operations from CUPTI (kernels, copies or memsets). */
int pw_act_recorded(const struct pw_act_report *act);
/* Why it has none, in words: "no libcupti could be loaded", "CUPTI failed (CUptiResult 17)", "the gpu domain
 * is not traced", "recording, but no CUPTI records arrived", "no CUPTI records". */
void pw_act_why_missing(char *buf, size_t len, const struct pw_act_report *act);
/* "recording", "no_cupti", "failed", "disabled", "none". */
const char *pw_act_state_name(int state);
/* The device entry of id, or NULL. */
const struct pw_act_device *pw_act_device_of(const struct pw_act_report *act, int32_t id);

/* The GPU operations recorded so far (pw_act_op_launch reads them), for the NVTX ranges' GPU time. */
size_t pw_act_op_count(const struct pw_act_report *a);
/* Operation i once its file has ended: the thread that launched it, when, and how long it ran. Returns 0
 * when its launching thread is unknown. */
int pw_act_op_launch(const struct pw_act_report *a, size_t i, uint32_t *tid, uint64_t *launch_ns, uint64_t *dur_ns);

#endif
