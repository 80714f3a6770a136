/* fakegpu.h: the private interface of the fake libcudart.so.13 (tests/fakes/cudart.c) for the other fake
 * libraries (cuBLAS, cuBLASLt, cuDNN, NCCL) and the fake CUPTI.
 *
 * The fakes never call a public CUDA name (cudaXxx, cublasXxx, ...) through the dynamic linker: the profiler
 * interposes those names and would count the fakes' internal calls as the program's. Work that a library
 * enqueues on the simulated device goes through these fakegpu_* functions instead, which libcudart exports
 * next to the public API (same version node, libcudart.so.13).
 *
 * Times are CLOCK_MONOTONIC nanoseconds. Functions returning int return a cudaError_t value. */
#ifndef FAKEGPU_H
#define FAKEGPU_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#define FAKEGPU_API __attribute__((visibility("default")))

/* Enqueues ns nanoseconds of work on stream (NULL: the legacy default stream of the calling thread's current
 * device; cudaStreamLegacy and cudaStreamPerThread are understood), after the work already there and, as
 * CUDA orders them, the legacy stream's and the blocking streams' work. name names the operation for
 * activity records (NULL: none). Returns cudaSuccess, cudaErrorInvalidResourceHandle for a stream that is
 * not (or no longer) a stream, cudaErrorNoDevice when the fake has no device. */
FAKEGPU_API int fakegpu_enqueue(cudaStream_t stream, uint64_t ns);
FAKEGPU_API int fakegpu_enqueue_named(cudaStream_t stream, uint64_t ns, const char *name);

/* cudaSuccess when stream is a valid stream handle (NULL, cudaStreamLegacy, cudaStreamPerThread or a live
 * stream), else as fakegpu_enqueue. */
FAKEGPU_API int fakegpu_stream_check(cudaStream_t stream);

/* The device the stream belongs to, into *device. */
FAKEGPU_API int fakegpu_stream_device(cudaStream_t stream, int *device);

/* The calling thread's current device (cudaSetDevice), -1 when the fake has no device. */
FAKEGPU_API int fakegpu_current_device(void);

/* Number of simulated devices (FAKEGPU_DEVICES). */
FAKEGPU_API int fakegpu_device_count(void);

/* CLOCK_MONOTONIC now, in ns. */
FAKEGPU_API uint64_t fakegpu_now_ns(void);

/* The environment variable name as a number (strtod syntax, with an optional K, M or G binary suffix), or def
 * when unset, empty or malformed. */
FAKEGPU_API double fakegpu_env_double(const char *name, double def);

/* Activity records: one per operation that runs on the simulated device (kernels, copies, memsets, library
 * work, graph launches), delivered to the callback on the enqueuing thread, inside the public call that
 * enqueued the work, after the fake's lock is released. For a fake CUPTI (tests/fakes/cupti.c). */
enum fakegpu_activity_kind {
	FAKEGPU_ACT_KERNEL = 1, /* cudaLaunchKernel family: name = the kernel's symbol (dladdr), grid/block */
	FAKEGPU_ACT_MEMCPY = 2, /* bytes, copy_kind = the resolved cudaMemcpyKind (Default resolved) */
	FAKEGPU_ACT_MEMSET = 3, /* bytes, value */
	FAKEGPU_ACT_LIBRARY = 4, /* fakegpu_enqueue*: work enqueued by cuBLAS/cuDNN/NCCL; name as given */
	FAKEGPU_ACT_GRAPH = 5,  /* cudaGraphLaunch: one per node, all with the launch's correlation id; name =
				 * the node's kernel, handle = the graph exec */
	FAKEGPU_ACT_API = 6,    /* a runtime call that enqueued nothing (api, its times, a correlation id of its own) */
	FAKEGPU_ACT_UNLOAD = 7, /* not work: a kernel of a module being unregistered (name), for a fake CUPTI to
				 * forget (__cudaUnregisterFatBinary) */
};

/* What memory a copy or memset touched, from the fake's allocation tables; numbered as CUPTI's
 * CUpti_ActivityMemoryKind. */
enum fakegpu_mem_kind {
	FAKEGPU_MEM_UNKNOWN = 0,
	FAKEGPU_MEM_PAGEABLE = 1,      /* host memory the tables do not know */
	FAKEGPU_MEM_PINNED = 2,        /* cudaMallocHost, cudaHostAlloc, cudaHostRegister */
	FAKEGPU_MEM_DEVICE = 3,        /* cudaMalloc, cudaMallocPitch, cudaMallocAsync */
	FAKEGPU_MEM_MANAGED = 5,       /* cudaMallocManaged */
	FAKEGPU_MEM_DEVICE_STATIC = 6, /* a symbol (cudaMemcpyToSymbol, cudaMemcpyFromSymbol) */
};

struct fakegpu_activity {
	enum fakegpu_activity_kind kind;
	int device;
	uint64_t stream_id;      /* 0: the legacy default stream; others count up from 1 as streams are made */
	uint64_t correlation_id; /* counts up from 1 per enqueued operation, process-wide */
	uint64_t start_ns, end_ns;
	const char *name; /* valid during the callback only; NULL when unknown */
	uint64_t bytes;
	int copy_kind;
	unsigned int grid[3], block[3];
	/* The public function that enqueued the work, as the library names it ("cudaMemcpyAsync_ptsz";
	 * "fakegpu_enqueue_named" or "fakegpu_enqueue" for library work); a string literal. */
	const char *api;
	uint64_t api_start_ns; /* when that function was entered */
	uint64_t api_end_ns;   /* when it returns, for one that waits for the work (synchronous copies); 0 when
				* it returns at once, after the callback */
	const void *handle;    /* kernels: the host function standing for the kernel; graphs: the graph exec */
	uint64_t shared_bytes; /* kernels: the dynamic shared memory asked for */
	int value;             /* memsets: the value */
	enum fakegpu_mem_kind src_mem, dst_mem; /* copies: source and destination; memsets: dst_mem */
	int src_device, dst_device; /* copies between two devices (cudaMemcpyPeer*): them; otherwise -1 */
	uint32_t graph_node;        /* graphs: the node's 1-based position in the graph (0: a graph of one node) */
};

typedef void (*fakegpu_activity_fn)(const struct fakegpu_activity *act, void *arg);

/* Sets (fn != NULL) or clears the activity callback; one at a time, process-wide. */
FAKEGPU_API void fakegpu_set_activity_callback(fakegpu_activity_fn fn, void *arg);

/* Initialises the simulated driver, as the real CUPTI's activity API initialises the CUDA driver: a process
 * forked afterwards cannot use CUDA (every runtime call fails with cudaErrorInitializationError). */
FAKEGPU_API void fakegpu_init_driver(void);

#endif /* FAKEGPU_H */
