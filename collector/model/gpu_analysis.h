/* GPU library calls (struct pw_rec_api records: CUDA runtime, cuBLAS/cuBLASLt, cuDNN, NCCL) -> the GPU part
 * of a rank's model: memory operations, allocations, GEMM shapes, collectives, kernel launches, cuDNN graph
 * executions, errors by status code, synchronisation, devices and streams, and the approximate median
 * duration of every GPU call.
 *
 * Every figure here is what the CPU saw: the time a call took on the calling thread, not the time its work
 * took on the GPU (that needs CUPTI). Memory is bounded by the distinct shapes, kernels, codes and live
 * allocations, not by the number of events; each table has a bound past which the rest is counted in one
 * "other" entry, so totals stay exact. Sums saturate at UINT64_MAX rather than wrap.
 *
 * analysis.c drives it: pw_gpu_proc_init() when a raw file starts, pw_gpu_event() for every record of an
 * api kind (pw_kind_is_api()), pw_gpu_proc_end() when the file is read, pw_gpu_finish() once per rank when
 * every file is read, pw_gpu_report_free() with the model.
 */
#ifndef PW_GPU_ANALYSIS_H
#define PW_GPU_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_record.h"
#include "../lib/rawfile.h"
#include "gpu_names.h"
#include "model.h"

#define PW_GPU_MAX_SHAPES 4096    /* distinct GEMM shapes per rank */
#define PW_GPU_MAX_KERNELS 4096   /* distinct kernel names per rank */
#define PW_GPU_MAX_ERRORS 1024    /* distinct (call, status code) pairs per rank */
#define PW_GPU_MAX_DNN_GRAPHS 1024 /* distinct cudnnBackendExecute operation masks per rank */
#define PW_GPU_MAX_DEVICES 64     /* distinct device ids per rank */
#define PW_GPU_MAX_STREAMS 65536  /* distinct streams per device */
#define PW_GPU_MAX_LIVE_ALLOCS (1u << 20) /* live allocations tracked per process */
#define PW_GPU_LAUNCH_CONFIGS 8   /* launch configurations per kernel among which the most frequent is found */

/* Durations in log buckets with 16 sub-buckets per power of two: below 16 ns one bucket per ns, then
 * [2^e * (16+s)/16, 2^e * (17+s)/16) for s in 0..15. A bucket's middle is within 1/32 (about 3 %) of any
 * value in it, so a median read from it is approximate, within ~4 %. */
#define PW_MEDIAN_BUCKETS (16 + 60 * 16)
unsigned pw_median_bucket(uint64_t ns);
/* The middle of bucket b (its value, for the exact buckets below 16 ns). */
uint64_t pw_median_bucket_mid(unsigned b);

struct pw_gpu_copy_stat {
	uint64_t count;    /* calls, failed ones included */
	uint64_t bytes;    /* bytes of the successful ones */
	uint64_t total_ns; /* CPU time in the calls */
	uint64_t failed;
	uint64_t async_count; /* ...Async calls: their time is the enqueue, not the transfer */
	/* HtoD and DtoH: whether the host side was pinned (inside a live cudaMallocHost/cudaHostAlloc/
	 * cudaHostRegister range of the same process) or pageable; count + bytes + time of each */
	uint64_t pinned_count, pinned_bytes, pinned_ns;
	uint64_t pageable_count, pageable_bytes, pageable_ns;
};

struct pw_gpu_memset_stat {
	uint64_t count;
	uint64_t bytes; /* of the successful calls */
	uint64_t total_ns;
};

/* Per process, then for the rank: peaks are the largest process's, counts are summed. */
struct pw_gpu_alloc_stat {
	uint64_t device_peak_bytes;      /* cudaMalloc/cudaMallocPitch + cudaMallocAsync live at once */
	uint64_t device_allocs;          /* successful device allocations */
	uint64_t device_frees;           /* frees that released a device allocation seen before */
	uint64_t failed_allocs;          /* failed allocations of any kind */
	uint64_t largest_failed_bytes;   /* the largest request among them */
	uint64_t host_pinned_peak_bytes; /* cudaMallocHost/cudaHostAlloc + cudaHostRegister live at once */
	uint64_t managed_peak_bytes;     /* cudaMallocManaged live at once */
	uint64_t host_pinned_allocs;
	uint64_t managed_allocs;
	uint64_t unknown_frees; /* frees of an address no live allocation started at (ignored) */
	uint64_t untracked;     /* allocations past PW_GPU_MAX_LIVE_ALLOCS live ones (not counted as live) */
};

/* One GEMM shape: (call, m, n, k, batch, data type, transa, transb). */
struct pw_gemm_stat {
	uint16_t ev;
	uint8_t dtype; /* cudaDataType_t */
	uint8_t transa, transb;
	uint64_t m, n, k, batch;
	uint64_t count;    /* calls, failed ones included */
	uint64_t total_ns; /* CPU time in the calls */
	uint64_t flops;    /* 2*m*n*k*batch per successful call, x4 for complex types (gpu_analysis.c) */
};

/* What fell past a table's bound: calls and time (and FLOPs or bytes where the table has them). */
struct pw_gpu_other {
	uint64_t count;
	uint64_t total_ns;
	uint64_t flops;
};

struct pw_coll_stat {
	uint64_t count;
	uint64_t bytes;    /* of the successful calls, as nccl-tests counts them (see gpu_analysis.c) */
	double bus_bytes;  /* bytes times nccl-tests' bus factor of each call */
	uint64_t total_ns; /* CPU time in the calls: for asynchronous NCCL calls, the enqueue */
};

struct pw_kernel_stat {
	char *name; /* the kernel's name, "(unknown)" when none was recorded, "CUDA graph" for graph launches */
	uint64_t launches;
	uint64_t failed;   /* launch calls that returned an error (not in launches: they launched nothing) */
	uint64_t total_ns; /* CPU time in the launch calls, failed ones included */
	uint32_t grid[3], block[3]; /* the most frequent launch configuration (zeros for graphs) */
	uint64_t config_count;      /* launches seen with that configuration (a lower bound past 8 of them) */
};

struct pw_gpu_error_stat {
	uint16_t ev;
	int64_t code; /* the status the call returned */
	uint64_t count;
};

struct pw_dnn_graph_stat {
	uint64_t mask; /* PW_K_DNN arg0: bit t for each cudnnBackendDescriptorType_t t in the plan */
	uint64_t count;
	uint64_t total_ns;
};

struct pw_gpu_device_stat {
	int32_t id;
	uint64_t streams; /* distinct streams that work was submitted to (per process: handles are) */
};

struct pw_gpu_work; /* the tables' indexes and the median histograms, freed by pw_gpu_finish() */

struct pw_gpu_report {
	uint64_t records; /* GPU library calls seen */
	struct pw_gpu_copy_stat copies[PW_DIR_COUNT];
	struct pw_gpu_memset_stat memset;
	struct pw_gpu_alloc_stat alloc;
	struct pw_gemm_stat *gemms; /* sorted by total_ns, longest first, after pw_gpu_finish() */
	size_t ngemms;
	struct pw_gpu_other gemm_other; /* calls of shapes past PW_GPU_MAX_SHAPES */
	uint64_t gemm_calls;
	uint64_t gemm_flops; /* every GEMM of the rank, saturating */
	struct pw_coll_stat colls[PW_EV_COUNT]; /* by event (only NCCL collectives) */
	struct pw_kernel_stat *kernels; /* sorted by launches, most first */
	size_t nkernels;
	struct pw_gpu_other kernel_other; /* launches of names past PW_GPU_MAX_KERNELS (count, total_ns) */
	struct pw_gpu_error_stat *errors; /* sorted by count, most first */
	size_t nerrors;
	uint64_t errors_other; /* failed calls past PW_GPU_MAX_ERRORS distinct pairs */
	struct pw_dnn_graph_stat *dnn_graphs; /* sorted by total_ns */
	size_t ndnn_graphs;
	struct pw_gpu_other dnn_other;
	uint64_t sync_count; /* PW_K_GPU_SYNC calls: the thread waited for the device */
	uint64_t sync_ns;
	struct pw_gpu_device_stat *devices; /* sorted by id */
	size_t ndevices;
	uint64_t devices_other; /* records from devices past PW_GPU_MAX_DEVICES */
	struct pw_gpu_work *work;
};

/* The allocations of one process image, by address (an AVL tree in an array: frees find theirs, copies
 * find the allocation a pointer falls inside). Embedded in analysis.c's per-file state. */
struct pw_gpu_alloc_node;
struct pw_gpu_proc {
	uint32_t serial; /* distinguishes this image's stream handles from another's */
	struct pw_gpu_alloc_node *nodes;
	uint32_t root;
	uint32_t free_list;
	uint32_t nnodes, cap; /* nodes[0] is the null node */
	uint64_t live; /* allocations in the tree */
	uint64_t device_live, pinned_live, managed_live;
	struct pw_gpu_alloc_stat stat; /* this process's peaks and counts */
	int seen;                      /* any GPU record */
};

void pw_gpu_proc_init(struct pw_gpu_proc *gp, uint32_t serial);
/* One record of an api kind. *gpu is created on the rank's first one. Returns 0, or -1 when out of memory
 * (the record is then partly counted). */
int pw_gpu_event(struct pw_gpu_report **gpu, struct pw_gpu_proc *gp, const struct pw_raw_event *e, uint64_t dur);
/* The height of the process's allocation tree (for tests: an AVL tree of n nodes is at most 1.44 log2(n)
 * high). */
unsigned pw_gpu_proc_height(const struct pw_gpu_proc *gp);
/* Folds the process's allocation figures into the rank's and frees its tree. */
void pw_gpu_proc_end(struct pw_gpu_report *gpu, struct pw_gpu_proc *gp);
/* Sorts the tables, sets the approximate median_ns of each GPU-domain call in calls (whose min_ns and
 * max_ns bound it), frees the working state. gpu may be NULL (no GPU call). */
void pw_gpu_finish(struct pw_gpu_report *gpu, struct pw_call_stat calls[PW_EV_COUNT]);
void pw_gpu_report_free(struct pw_gpu_report *gpu);

/* Whether events of domain d are GPU library calls. */
static inline int pw_domain_is_gpu(enum pw_domain d)
{
	return d >= PW_DOM_CUDART && d <= PW_DOM_NCCL;
}

/* The bytes a collective or point-to-point record moved, as nccl-tests counts them (see gpu_analysis.c),
 * saturating; nranks gets the communicator size (1 when unknown). */
uint64_t pw_coll_bytes(const struct pw_rec_api *a, uint64_t *nranks);

/* nccl-tests' bus bandwidth factor for collective ev among nranks ranks: AllReduce 2(n-1)/n, AllGather and
 * ReduceScatter (n-1)/n, the others 1. */
double pw_coll_bus_factor(int ev, uint64_t nranks);

/* Saturating arithmetic for figures read from untrusted records. */
static inline uint64_t pw_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
static inline uint64_t pw_sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
