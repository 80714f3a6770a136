/* Record format: the one header both the preload (writer) and the collector (reader) use.
 *
 * A record is a multiple of 8 bytes and starts with struct pw_rec_hdr. Its size is in the header, so a
 * reader can step over types it does not know. Event ids, their domain, name and kind come from one
 * X-macro table (PW_EVENT_LIST) so writer and reader can never disagree. Bump PW_FORMAT_VERSION on any
 * change that an older reader would misread.
 */
#ifndef PW_RECORD_H
#define PW_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define PW_FORMAT_VERSION 10u

/* Domains: the unit of --trace=LIST selection and the "domain" column of the report. */
#define PW_DOMAIN_LIST(X) \
	X(IO, "io")           \
	X(STDIO, "stdio")     \
	X(PROCESS, "process") \
	X(DL, "dl")           \
	X(WAIT, "wait")       \
	X(CUDART, "cudart")   \
	X(CUBLAS, "cublas")   \
	X(CUBLASLT, "cublaslt") \
	X(CUDNN, "cudnn")     \
	X(NCCL, "nccl")       \
	X(GPU, "gpu")         \
	X(NVTX, "nvtx")       \
	X(MPI, "mpi")         \
	X(META, "meta")

enum pw_domain {
#define PW_X(id, str) PW_DOM_##id,
	PW_DOMAIN_LIST(PW_X)
#undef PW_X
	PW_DOM_COUNT
};

/* What the analysis does with an event: which figures its fields feed. For every file event arg0 is the
 * file descriptor (stdio wrappers record fileno() of the stream), so one fd -> path map serves both. */
enum pw_event_kind {
	PW_K_PLAIN,  /* counted and timed only */
	PW_K_OPEN,   /* arg0 = new fd (-1 on failure), arg1 = path string ref; struct pw_rec_open */
	PW_K_FDINFO, /* not a call: arg0 = fd inherited at start, arg1 = what it refers to */
	PW_K_CLOSE,  /* arg0 = fd */
	PW_K_READ,   /* arg0 = fd, arg1 = bytes moved (from the return value, not the request) */
	PW_K_WRITE,  /* arg0 = fd, arg1 = bytes moved */
	PW_K_MMAP,   /* arg0 = fd, arg1 = length mapped */
	PW_K_FORK,   /* arg0 = child pid, arg1 = string ref: the program a spawn ran or a vfork child exec'd, 0: none */
	PW_K_WAIT,   /* arg0 = pid reaped (0 or -1: none), arg1 = wait status in waitpid() form */
	PW_K_EXIT,   /* arg0 = exit status */
	PW_K_DLOPEN, /* arg1 = path string ref; the duration is the load time */
	PW_K_SLEEP,  /* the thread waits: on time, I/O readiness or another thread */
	PW_K_EXEC,   /* an exec that failed: arg1 = path string ref (one that succeeds ends the segment) */
	PW_K_DUP,    /* arg0 = new fd (-1 on failure), arg1 = the fd it duplicates */
	/* GPU library calls: struct pw_rec_api, ret = the library's status code (0 = success everywhere). */
	PW_K_GPU_LAUNCH, /* arg0 = function address, arg1 = kernel name string ref (0: unknown),
			  * a[0] = grid.x | grid.y << 32, a[1] = grid.z | block.x << 32, a[2] = block.y | block.z << 32,
			  * sub = dynamic shared memory bytes */
	PW_K_GPU_GRAPH,  /* arg0 = graph exec handle */
	PW_K_GPU_MEMCPY, /* arg0 = bytes, a[0] = dst, a[1] = src, a[2] = dst device | src device << 32 (peer
			  * copies), sub = enum pw_copy_dir | PW_API_ASYNC */
	PW_K_GPU_MEMSET, /* arg0 = bytes, a[0] = address, sub = PW_API_ASYNC when asynchronous */
	PW_K_GPU_ALLOC,  /* arg0 = bytes asked for, arg1 = address returned (0 on failure), sub = enum pw_mem */
	PW_K_GPU_FREE,   /* arg1 = address, sub = enum pw_mem */
	PW_K_GPU_SYNC,   /* the thread waits for the device: arg0 = stream or event waited for, arg1 = the event
			  * of cudaStreamWaitEvent */
	PW_K_GPU_API,    /* other runtime calls: arg0 = the stream/event/device the call made or used */
	PW_K_GEMM,       /* a[0] = m, a[1] = n, a[2] = k, a[3] = batch count, arg0 = compute type (-1 if none),
			  * sub = data type (cudaDataType_t) | transa << 8 | transb << 16 */
	PW_K_DNN,        /* arg0 = for graph executions, the operations in the plan: bit t set for each
			  * cudnnBackendDescriptorType_t t among them (bit 63: some unknown) */
	PW_K_COLL,       /* NCCL collective or point-to-point: arg0 = element count, a[0] = communicator,
			  * a[1] = root or peer (-1: none), a[2] = nranks | rank << 32 (0: unknown),
			  * sub = ncclDataType_t | ncclRedOp_t << 8 */
	PW_K_COMM,       /* NCCL communicator set-up and groups: a[0] = communicator, a[2] = nranks | rank << 32 */
	/* What the GPU did, from CUPTI's activity records: struct pw_rec_gpu, times in CLOCK_MONOTONIC ns. */
	PW_K_ACT_KERNEL,   /* arg1 = kernel name string ref (as CUPTI gives it: mangled), a[0..2] = grid and block
			    * packed as PW_K_GPU_LAUNCH's, arg0 = registers per thread | (static + dynamic shared
			    * memory bytes) << 32; ret = for a kernel a CUDA graph ran (its correlation id is the
			    * graph launch's), CUPTI's graphId | the low 32 bits of its graphNodeId << 32, else 0 */
	PW_K_ACT_MEMCPY,   /* arg0 = bytes, arg1 = enum pw_copy_dir | source enum pw_act_mem << 8 | destination
			    * enum pw_act_mem << 16; a copy between devices (PW_COPY_PEER, CUPTI's MEMCPY2): a[0] =
			    * source device | destination device << 32 */
	PW_K_ACT_MEMSET,   /* arg0 = bytes, arg1 = value (low 32 bits) | enum pw_act_mem << 32 */
	PW_K_ACT_API,      /* a CUDA runtime or driver call as CUPTI saw it, so kernels that libraries launch through
			    * the driver find their launching thread: arg0 = CUPTI callback id (cbid), arg1 =
			    * PW_ACT_API_RUNTIME or PW_ACT_API_DRIVER, a[0] = the calling thread's kernel tid */
	PW_K_ACT_EXTCORR,  /* correlation = the CUPTI correlation id of a CUDA call made while the wrapper's external
			    * id was pushed, arg0 = that external id (struct pw_rec_api corr), arg1 = external kind;
			    * no times */
	PW_K_ACT_OVERHEAD, /* time CUPTI or the driver spent on profiling: arg0 = CUpti_ActivityOverheadKind,
			    * arg1 = CUpti_ActivityObjectKind, a[0] = the object's id (thread id or device) */
	PW_K_ACT_DEVICE,   /* a device: device = its id, arg1 = name string ref, arg0 = global memory bandwidth
			    * in KB/s, a[0] = global memory bytes, a[1] = multiprocessors | compute capability major
			    * << 32 | minor << 48; no times */
	PW_K_ACT_DROPPED,  /* activity records lost since the previous such record: arg0 = records CUPTI dropped
			    * (cuptiActivityGetNumDroppedRecords), arg1 = CUPTI's requests for a buffer refused
			    * because the pool had none free (the records this cost are among arg0's),
			    * t0 = t1 = when counted */
	PW_K_ACT_STATUS,   /* how GPU activity recording went, once per process that loaded a CUDA library:
			    * arg0 = enum pw_act_state, arg1 = the libcupti path string ref, ret = the CUptiResult of
			    * the call that failed (0 none), a[0] = cuptiGetVersion(), a[1] = enum pw_act_clock;
			    * t0 = t1 = when */
	/* NVTX (the program's own annotations, received as NVTX's injection library): struct pw_rec_range,
	 * t0 = t1 = when, arg0 = NVTX domain id (0: the default domain) | category << 32. */
	PW_K_RANGE_PUSH,  /* nvtxRangePush*: arg1 = message string ref, ret = the level pushed (0: outermost) */
	PW_K_RANGE_POP,   /* nvtxRangePop: ret = the level popped, -1 when the thread had none open */
	PW_K_RANGE_START, /* nvtxRangeStart*: arg1 = message string ref, ret = the range id returned (never 0) */
	PW_K_RANGE_END,   /* nvtxRangeEnd: ret = the range id, from any thread */
	PW_K_MARK,        /* nvtxMark*: arg1 = message string ref */
	/* A name given to something (struct pw_rec_call): arg0 = what is named (per event), arg1 = the name's
	 * string ref; t0 = t1 = when. */
	PW_K_NVTX_NAME,
	/* The capture window (struct pw_rec_call) of the process and of the children it forked, which share it:
	 * arg0 = enum pw_capture_reason, arg1 = the range name's string ref (0: none), ret = the occurrence or
	 * step number that opened or closed it (0-based, -1: none); t0 = t1 = when. */
	PW_K_CAPTURE,
	/* Call stacks (struct pw_rec_call unless said otherwise): */
	PW_K_MODULE, /* a loaded object, so that stacks can be symbolised after the process is gone (struct
		      * pw_rec_module): arg0 = load bias, arg1 = path string ref; t0 = t1 = when seen */
	PW_K_PYSTACK, /* the Python frames of the thread's earlier records flagged PW_STACK_PY_PENDING, taken when
		       * the thread held the GIL again: a stack (PW_REC_STACK) with Python frames only */
	PW_K_SAMPLE,  /* a CPU-time sample of the thread (--sample): arg0 = the sampling period in ns, arg1 = the
		       * CPU time it stands for (pw_get_sample), its stack (PW_REC_STACK) starts at the
		       * interrupted instruction; t0 = t1 = when */
	/* MPI calls (struct pw_rec_call; ret = the MPI error code, err = PW_ERR_NO_ERRNO when it is not
	 * MPI_SUCCESS). Ranks are in the call's communicator; bytes are count x MPI_Type_size. */
	PW_K_MPI_INIT, /* MPI_Init/Init_thread: arg0 = rank in MPI_COMM_WORLD (-1: unknown), arg1 = its size */
	PW_K_MPI_COLL, /* a collective: arg0 = bytes this rank contributes (what it sends, or for Bcast what the
			* root sends), arg1 = communicator size | (root + 1) << 32 (0: no root) */
	PW_K_MPI_P2P,  /* point-to-point: arg0 = bytes (sent, or received when known from the status, else the
			* receive buffer's size; Sendrecv: sent + received), arg1 = peer rank (the actual source of a
			* receive when the status gives it; -1: any or unknown) */
	PW_K_MPI_WAIT, /* completion of nonblocking requests: arg0 = requests passed, arg1 = index completed
			* (Waitany; -1 otherwise) */
	PW_K_CHDIR,    /* the working directory changed: arg0 = the descriptor fchdir was given (-1: chdir), arg1 =
			* string ref of the working directory after the call as the kernel names it (getcwd: absolute,
			* no symlinks), 0 when the call failed or getcwd did */
	/* What recording one call costs this process, measured once at its start (preload/cost.c): ret calls of
	 * a dummy function took arg0 ticks through a wrapper that records them (into a scratch lane) and arg1
	 * ticks called plainly (the medians of a few dozen blocks); t0..t1 = the measurement itself. */
	PW_K_COST,
	/* File metadata (the meta domain) and descriptors that are not files: */
	PW_K_STAT,     /* a stat-family or access call naming a path: arg0 = the directory descriptor the path is
			* relative to (AT_FDCWD: the working directory), arg1 = path string ref (an empty path with
			* AT_EMPTY_PATH: the descriptor itself) */
	PW_K_STAT_FD,  /* fstat: arg0 = fd */
	PW_K_DIR_READ, /* readdir, getdents64: arg0 = the directory's fd (a stream's dirfd()), arg1 = bytes
			* (getdents64; 0 for readdir), ret = 1 when readdir gave an entry, 0 at the end */
	PW_K_CHANNEL,  /* descriptors made for a pipe or sockets (pipe, pipe2, socketpair, socket, accept):
			* pw_put_channel below; named as /proc/PID/fd names them (pipe:[ino], socket:[ino]) */
};

/* Why a capture window opened or closed (PW_K_CAPTURE arg0). */
enum pw_capture_reason {
	PW_CAPTURE_PROFILER_API = 1, /* cudaProfilerStart / cudaProfilerStop */
	PW_CAPTURE_NVTX = 2,         /* --capture-range=nvtx:NAME: an occurrence of the range began or ended */
	PW_CAPTURE_SCHEDULE = 3,     /* --schedule over the step range */
	PW_CAPTURE_TIMER = 4,        /* --delay / --duration */
	PW_CAPTURE_ON_DEMAND = 5,    /* profwrap start|stop PID, or SIGUSR2 */
	PW_CAPTURE_INITIAL = 6,      /* the state the process started in (a fork child: its parent's) */
	PW_CAPTURE_STEPS = 7,        /* no window: the name of --step-range's range, said once at the start, so
				      * that the trace names its occurrences ProfilerStep#N */
};

/* Whether records of this kind are struct pw_rec_api (GPU library calls). */
static inline int pw_kind_is_api(enum pw_event_kind k)
{
	return k >= PW_K_GPU_LAUNCH && k <= PW_K_COMM;
}

/* Whether records of this kind are struct pw_rec_range (NVTX ranges and marks). */
static inline int pw_kind_is_range(enum pw_event_kind k)
{
	return k >= PW_K_RANGE_PUSH && k <= PW_K_MARK;
}

/* Whether records of this kind are struct pw_rec_gpu (GPU activity, times in ns rather than ticks). */
static inline int pw_kind_is_activity(enum pw_event_kind k)
{
	return k >= PW_K_ACT_KERNEL && k <= PW_K_ACT_STATUS;
}

/* Direction of a copy: the values of cudaMemcpyKind, plus peer copies between devices. DEFAULT means the
 * runtime inferred it from the addresses (unified addressing); the analysis infers it the same way from
 * the allocations it saw. */
enum pw_copy_dir {
	PW_COPY_HTOH = 0,
	PW_COPY_HTOD = 1,
	PW_COPY_DTOH = 2,
	PW_COPY_DTOD = 3,
	PW_COPY_DEFAULT = 4,
	PW_COPY_PEER = 5,
};
#define PW_COPY_DIR_MASK 0xffu
#define PW_API_ASYNC 0x100u /* sub flag: the call only enqueued the work (…Async) */
#define PW_API_PTSZ 0x200u  /* sub flag: the per-thread default stream variant (_ptsz/_ptds) was called */

/* Where the memory of a GPU copy or memset was: the values of CUpti_ActivityMemoryKind. Copies between
 * pageable host memory and the device are staged through a pinned buffer and do not overlap with compute. */
enum pw_act_mem {
	PW_ACT_MEM_UNKNOWN = 0,
	PW_ACT_MEM_PAGEABLE = 1,
	PW_ACT_MEM_PINNED = 2,
	PW_ACT_MEM_DEVICE = 3,
	PW_ACT_MEM_ARRAY = 4,
	PW_ACT_MEM_MANAGED = 5,
	PW_ACT_MEM_DEVICE_STATIC = 6,
	PW_ACT_MEM_MANAGED_STATIC = 7,
};

#define PW_ACT_API_RUNTIME 1u
#define PW_ACT_API_DRIVER 2u

/* PW_K_ACT_STATUS arg0. */
enum pw_act_state {
	PW_ACT_RECORDING = 1,  /* activity recording is on */
	PW_ACT_NO_CUPTI = 2,   /* no libcupti could be loaded: GPU calls are recorded, GPU activity is not */
	PW_ACT_FAILED = 3,     /* libcupti loaded, but a call needed to record failed (ret says which code) */
	PW_ACT_DISABLED = 4,   /* the gpu domain is not traced (--trace) */
	PW_ACT_NO_DRIVER = 5,  /* no CUDA driver (libcuda.so.1) could be loaded: CUPTI is not touched */
	PW_ACT_DRIVER_UNUSABLE = 6, /* the driver loaded cannot serve CUPTI: a stub library, or older than the runtime
				     * (ret = cuDriverGetVersion's CUresult, a[0] = the version it gave, a[2] = the
				     * runtime's major version, 0 when unknown); CUPTI is not touched */
	PW_ACT_OTHER_CLIENT = 7, /* another CUPTI client (torch.profiler) began using CUPTI's activity API at t0:
				  * profwrap stepped back (what it had was flushed first) and records no activity
				  * after; CPU-side calls are still recorded */
	PW_ACT_FORKED = 8,       /* a fork child of a process in which CUPTI recorded: CUDA was in use in the
				  * parent, so neither CUDA nor CUPTI can be used in the child */
};

/* PW_K_ACT_STATUS a[1]: how CUPTI's timestamps were put on CLOCK_MONOTONIC. */
enum pw_act_clock {
	PW_ACT_CLOCK_CALLBACK = 1, /* CUPTI took its timestamps from ours (cuptiActivityRegisterTimestampCallback) */
	PW_ACT_CLOCK_OFFSET = 2,   /* CUPTI's own clock, shifted by an offset measured at start */
};

/* What an allocation or free is of. */
enum pw_mem {
	PW_MEM_DEVICE = 1,          /* cudaMalloc, cudaMallocPitch */
	PW_MEM_DEVICE_ASYNC = 2,    /* cudaMallocAsync/cudaFreeAsync: stream-ordered */
	PW_MEM_HOST_PINNED = 3,     /* cudaMallocHost, cudaHostAlloc, cudaFreeHost */
	PW_MEM_HOST_REGISTERED = 4, /* cudaHostRegister/cudaHostUnregister: pinned in place */
	PW_MEM_MANAGED = 5,         /* cudaMallocManaged (freed with cudaFree) */
};


/* GPU library calls, named as the library names them. A _ptsz/_ptds variant records the event of its base
 * name with PW_API_PTSZ in sub. */
#define PW_GPU_EVENT_LIST(X)                                                                 \
	X(CUDA_LAUNCH_KERNEL, CUDART, "cudaLaunchKernel", PW_K_GPU_LAUNCH)                  \
	X(CUDA_LAUNCH_KERNEL_EXC, CUDART, "cudaLaunchKernelExC", PW_K_GPU_LAUNCH)           \
	X(CUDA_LAUNCH_COOPERATIVE_KERNEL, CUDART, "cudaLaunchCooperativeKernel", PW_K_GPU_LAUNCH) \
	X(CUDA_GRAPH_LAUNCH, CUDART, "cudaGraphLaunch", PW_K_GPU_GRAPH)                     \
	X(CUDA_MEMCPY, CUDART, "cudaMemcpy", PW_K_GPU_MEMCPY)                               \
	X(CUDA_MEMCPY_ASYNC, CUDART, "cudaMemcpyAsync", PW_K_GPU_MEMCPY)                    \
	X(CUDA_MEMCPY_2D, CUDART, "cudaMemcpy2D", PW_K_GPU_MEMCPY)                          \
	X(CUDA_MEMCPY_2D_ASYNC, CUDART, "cudaMemcpy2DAsync", PW_K_GPU_MEMCPY)               \
	X(CUDA_MEMCPY_3D, CUDART, "cudaMemcpy3D", PW_K_GPU_MEMCPY)                          \
	X(CUDA_MEMCPY_3D_ASYNC, CUDART, "cudaMemcpy3DAsync", PW_K_GPU_MEMCPY)               \
	X(CUDA_MEMCPY_TO_SYMBOL, CUDART, "cudaMemcpyToSymbol", PW_K_GPU_MEMCPY)             \
	X(CUDA_MEMCPY_TO_SYMBOL_ASYNC, CUDART, "cudaMemcpyToSymbolAsync", PW_K_GPU_MEMCPY)  \
	X(CUDA_MEMCPY_FROM_SYMBOL, CUDART, "cudaMemcpyFromSymbol", PW_K_GPU_MEMCPY)         \
	X(CUDA_MEMCPY_FROM_SYMBOL_ASYNC, CUDART, "cudaMemcpyFromSymbolAsync", PW_K_GPU_MEMCPY) \
	X(CUDA_MEMCPY_PEER, CUDART, "cudaMemcpyPeer", PW_K_GPU_MEMCPY)                      \
	X(CUDA_MEMCPY_PEER_ASYNC, CUDART, "cudaMemcpyPeerAsync", PW_K_GPU_MEMCPY)           \
	X(CUDA_MEMSET, CUDART, "cudaMemset", PW_K_GPU_MEMSET)                               \
	X(CUDA_MEMSET_ASYNC, CUDART, "cudaMemsetAsync", PW_K_GPU_MEMSET)                    \
	X(CUDA_MEMSET_2D, CUDART, "cudaMemset2D", PW_K_GPU_MEMSET)                          \
	X(CUDA_MEMSET_2D_ASYNC, CUDART, "cudaMemset2DAsync", PW_K_GPU_MEMSET)               \
	X(CUDA_MALLOC, CUDART, "cudaMalloc", PW_K_GPU_ALLOC)                                \
	X(CUDA_MALLOC_PITCH, CUDART, "cudaMallocPitch", PW_K_GPU_ALLOC)                     \
	X(CUDA_FREE, CUDART, "cudaFree", PW_K_GPU_FREE)                                     \
	X(CUDA_MALLOC_ASYNC, CUDART, "cudaMallocAsync", PW_K_GPU_ALLOC)                     \
	X(CUDA_FREE_ASYNC, CUDART, "cudaFreeAsync", PW_K_GPU_FREE)                          \
	X(CUDA_MALLOC_HOST, CUDART, "cudaMallocHost", PW_K_GPU_ALLOC)                       \
	X(CUDA_HOST_ALLOC, CUDART, "cudaHostAlloc", PW_K_GPU_ALLOC)                         \
	X(CUDA_FREE_HOST, CUDART, "cudaFreeHost", PW_K_GPU_FREE)                            \
	X(CUDA_MALLOC_MANAGED, CUDART, "cudaMallocManaged", PW_K_GPU_ALLOC)                 \
	X(CUDA_HOST_REGISTER, CUDART, "cudaHostRegister", PW_K_GPU_ALLOC)                   \
	X(CUDA_HOST_UNREGISTER, CUDART, "cudaHostUnregister", PW_K_GPU_FREE)                \
	X(CUDA_DEVICE_SYNCHRONIZE, CUDART, "cudaDeviceSynchronize", PW_K_GPU_SYNC)          \
	X(CUDA_STREAM_SYNCHRONIZE, CUDART, "cudaStreamSynchronize", PW_K_GPU_SYNC)          \
	X(CUDA_EVENT_SYNCHRONIZE, CUDART, "cudaEventSynchronize", PW_K_GPU_SYNC)            \
	X(CUDA_STREAM_WAIT_EVENT, CUDART, "cudaStreamWaitEvent", PW_K_GPU_API)              \
	X(CUDA_STREAM_QUERY, CUDART, "cudaStreamQuery", PW_K_GPU_API)                       \
	X(CUDA_EVENT_QUERY, CUDART, "cudaEventQuery", PW_K_GPU_API)                         \
	X(CUDA_STREAM_CREATE, CUDART, "cudaStreamCreate", PW_K_GPU_API)                     \
	X(CUDA_STREAM_CREATE_WITH_FLAGS, CUDART, "cudaStreamCreateWithFlags", PW_K_GPU_API) \
	X(CUDA_STREAM_CREATE_WITH_PRIORITY, CUDART, "cudaStreamCreateWithPriority", PW_K_GPU_API) \
	X(CUDA_STREAM_DESTROY, CUDART, "cudaStreamDestroy", PW_K_GPU_API)                   \
	X(CUDA_EVENT_CREATE, CUDART, "cudaEventCreate", PW_K_GPU_API)                       \
	X(CUDA_EVENT_CREATE_WITH_FLAGS, CUDART, "cudaEventCreateWithFlags", PW_K_GPU_API)   \
	X(CUDA_EVENT_DESTROY, CUDART, "cudaEventDestroy", PW_K_GPU_API)                     \
	X(CUDA_EVENT_RECORD, CUDART, "cudaEventRecord", PW_K_GPU_API)                       \
	X(CUDA_EVENT_RECORD_WITH_FLAGS, CUDART, "cudaEventRecordWithFlags", PW_K_GPU_API)   \
	X(CUDA_SET_DEVICE, CUDART, "cudaSetDevice", PW_K_GPU_API)                           \
	X(CUDA_GET_DEVICE, CUDART, "cudaGetDevice", PW_K_GPU_API)                           \
	X(CUDA_PROFILER_START, CUDART, "cudaProfilerStart", PW_K_GPU_API)                   \
	X(CUDA_PROFILER_STOP, CUDART, "cudaProfilerStop", PW_K_GPU_API)                     \
	X(CUBLAS_CREATE, CUBLAS, "cublasCreate_v2", PW_K_GPU_API)                           \
	X(CUBLAS_DESTROY, CUBLAS, "cublasDestroy_v2", PW_K_GPU_API)                         \
	X(CUBLAS_SGEMM, CUBLAS, "cublasSgemm_v2", PW_K_GEMM)                                \
	X(CUBLAS_DGEMM, CUBLAS, "cublasDgemm_v2", PW_K_GEMM)                                \
	X(CUBLAS_HGEMM, CUBLAS, "cublasHgemm", PW_K_GEMM)                                   \
	X(CUBLAS_CGEMM, CUBLAS, "cublasCgemm_v2", PW_K_GEMM)                                \
	X(CUBLAS_ZGEMM, CUBLAS, "cublasZgemm_v2", PW_K_GEMM)                                \
	X(CUBLAS_SGEMM_STRIDED_BATCHED, CUBLAS, "cublasSgemmStridedBatched", PW_K_GEMM)     \
	X(CUBLAS_DGEMM_STRIDED_BATCHED, CUBLAS, "cublasDgemmStridedBatched", PW_K_GEMM)     \
	X(CUBLAS_HGEMM_STRIDED_BATCHED, CUBLAS, "cublasHgemmStridedBatched", PW_K_GEMM)     \
	X(CUBLAS_SGEMM_BATCHED, CUBLAS, "cublasSgemmBatched", PW_K_GEMM)                    \
	X(CUBLAS_DGEMM_BATCHED, CUBLAS, "cublasDgemmBatched", PW_K_GEMM)                    \
	X(CUBLAS_HGEMM_BATCHED, CUBLAS, "cublasHgemmBatched", PW_K_GEMM)                    \
	X(CUBLAS_GEMM_EX, CUBLAS, "cublasGemmEx", PW_K_GEMM)                                \
	X(CUBLAS_GEMM_STRIDED_BATCHED_EX, CUBLAS, "cublasGemmStridedBatchedEx", PW_K_GEMM)  \
	X(CUBLAS_GEMM_BATCHED_EX, CUBLAS, "cublasGemmBatchedEx", PW_K_GEMM)                 \
	X(CUBLASLT_MATMUL, CUBLASLT, "cublasLtMatmul", PW_K_GEMM)                           \
	X(CUDNN_CONV_FWD, CUDNN, "cudnnConvolutionForward", PW_K_DNN)                       \
	X(CUDNN_CONV_BWD_DATA, CUDNN, "cudnnConvolutionBackwardData", PW_K_DNN)             \
	X(CUDNN_CONV_BWD_FILTER, CUDNN, "cudnnConvolutionBackwardFilter", PW_K_DNN)         \
	X(CUDNN_CONV_BIAS_ACT_FWD, CUDNN, "cudnnConvolutionBiasActivationForward", PW_K_DNN) \
	X(CUDNN_BN_FWD_TRAINING, CUDNN, "cudnnBatchNormalizationForwardTraining", PW_K_DNN) \
	X(CUDNN_BN_FWD_INFERENCE, CUDNN, "cudnnBatchNormalizationForwardInference", PW_K_DNN) \
	X(CUDNN_BN_BWD, CUDNN, "cudnnBatchNormalizationBackward", PW_K_DNN)                 \
	X(CUDNN_SOFTMAX_FWD, CUDNN, "cudnnSoftmaxForward", PW_K_DNN)                        \
	X(CUDNN_SOFTMAX_BWD, CUDNN, "cudnnSoftmaxBackward", PW_K_DNN)                       \
	X(CUDNN_RNN_FWD, CUDNN, "cudnnRNNForward", PW_K_DNN)                                \
	X(CUDNN_RNN_BWD_DATA, CUDNN, "cudnnRNNBackwardData_v8", PW_K_DNN)                   \
	X(CUDNN_RNN_BWD_WEIGHTS, CUDNN, "cudnnRNNBackwardWeights_v8", PW_K_DNN)             \
	X(CUDNN_BACKEND_EXECUTE, CUDNN, "cudnnBackendExecute", PW_K_DNN)                    \
	X(NCCL_ALL_REDUCE, NCCL, "ncclAllReduce", PW_K_COLL)                                \
	X(NCCL_BROADCAST, NCCL, "ncclBroadcast", PW_K_COLL)                                 \
	X(NCCL_REDUCE, NCCL, "ncclReduce", PW_K_COLL)                                       \
	X(NCCL_ALL_GATHER, NCCL, "ncclAllGather", PW_K_COLL)                                \
	X(NCCL_REDUCE_SCATTER, NCCL, "ncclReduceScatter", PW_K_COLL)                        \
	X(NCCL_SEND, NCCL, "ncclSend", PW_K_COLL)                                           \
	X(NCCL_RECV, NCCL, "ncclRecv", PW_K_COLL)                                           \
	X(NCCL_GROUP_START, NCCL, "ncclGroupStart", PW_K_COMM)                              \
	X(NCCL_GROUP_END, NCCL, "ncclGroupEnd", PW_K_COMM)                                  \
	X(NCCL_COMM_INIT_RANK, NCCL, "ncclCommInitRank", PW_K_COMM)                         \
	X(NCCL_COMM_INIT_RANK_CONFIG, NCCL, "ncclCommInitRankConfig", PW_K_COMM)            \
	X(NCCL_COMM_INIT_ALL, NCCL, "ncclCommInitAll", PW_K_COMM)                           \
	X(NCCL_COMM_SPLIT, NCCL, "ncclCommSplit", PW_K_COMM)                                \
	X(NCCL_COMM_DESTROY, NCCL, "ncclCommDestroy", PW_K_COMM)                            \
	X(NCCL_COMM_ABORT, NCCL, "ncclCommAbort", PW_K_COMM)

/* GPU activity (CUPTI), one event per record kind. */
#define PW_ACT_EVENT_LIST(X)                                              \
	X(GPU_KERNEL, GPU, "kernel", PW_K_ACT_KERNEL)                     \
	X(GPU_MEMCPY, GPU, "memcpy (GPU)", PW_K_ACT_MEMCPY)               \
	X(GPU_MEMSET, GPU, "memset (GPU)", PW_K_ACT_MEMSET)               \
	X(GPU_API, GPU, "CUDA API (CUPTI)", PW_K_ACT_API)                 \
	X(GPU_EXTCORR, GPU, "external correlation", PW_K_ACT_EXTCORR)     \
	X(GPU_OVERHEAD, GPU, "CUPTI overhead", PW_K_ACT_OVERHEAD)         \
	X(GPU_DEVICE, GPU, "device", PW_K_ACT_DEVICE)                     \
	X(GPU_DROPPED, GPU, "activity dropped", PW_K_ACT_DROPPED)         \
	X(GPU_STATUS, GPU, "activity status", PW_K_ACT_STATUS)

/* NVTX: ranges, marks and the names a program gives to its threads, categories, domains and CUDA objects. */
#define PW_NVTX_EVENT_LIST(X)                                             \
	X(NVTX_PUSH, NVTX, "range push", PW_K_RANGE_PUSH)                 \
	X(NVTX_POP, NVTX, "range pop", PW_K_RANGE_POP)                    \
	X(NVTX_START, NVTX, "range start", PW_K_RANGE_START)              \
	X(NVTX_END, NVTX, "range end", PW_K_RANGE_END)                    \
	X(NVTX_MARK, NVTX, "mark", PW_K_MARK)                             \
	X(NVTX_NAME_DOMAIN, NVTX, "name domain", PW_K_NVTX_NAME)          \
	X(NVTX_NAME_CATEGORY, NVTX, "name category", PW_K_NVTX_NAME)      \
	X(NVTX_NAME_THREAD, NVTX, "name thread", PW_K_NVTX_NAME)          \
	X(NVTX_NAME_STREAM, NVTX, "name stream", PW_K_NVTX_NAME)          \
	X(NVTX_NAME_DEVICE, NVTX, "name device", PW_K_NVTX_NAME)          \
	X(NVTX_NAME_CONTEXT, NVTX, "name context", PW_K_NVTX_NAME)        \
	X(NVTX_NAME_EVENT, NVTX, "name event", PW_K_NVTX_NAME)            \
	X(CAPTURE_START, PROCESS, "capture start", PW_K_CAPTURE)          \
	X(CAPTURE_STOP, PROCESS, "capture stop", PW_K_CAPTURE)          \
	X(MODULE, PROCESS, "module", PW_K_MODULE)                         \
	X(PY_STACK, PROCESS, "python stack", PW_K_PYSTACK)                \
	X(CPU_SAMPLE, PROCESS, "cpu sample", PW_K_SAMPLE)

/* MPI (preload/mpi.c), named as the standard names them. */
#define PW_MPI_EVENT_LIST(X)                                                     \
	X(MPI_INIT, MPI, "MPI_Init", PW_K_MPI_INIT)                              \
	X(MPI_INIT_THREAD, MPI, "MPI_Init_thread", PW_K_MPI_INIT)                \
	X(MPI_FINALIZE, MPI, "MPI_Finalize", PW_K_PLAIN)                         \
	X(MPI_BARRIER, MPI, "MPI_Barrier", PW_K_MPI_COLL)                        \
	X(MPI_BCAST, MPI, "MPI_Bcast", PW_K_MPI_COLL)                            \
	X(MPI_REDUCE, MPI, "MPI_Reduce", PW_K_MPI_COLL)                          \
	X(MPI_ALLREDUCE, MPI, "MPI_Allreduce", PW_K_MPI_COLL)                    \
	X(MPI_ALLGATHER, MPI, "MPI_Allgather", PW_K_MPI_COLL)                    \
	X(MPI_ALLGATHERV, MPI, "MPI_Allgatherv", PW_K_MPI_COLL)                  \
	X(MPI_ALLTOALL, MPI, "MPI_Alltoall", PW_K_MPI_COLL)                      \
	X(MPI_ALLTOALLV, MPI, "MPI_Alltoallv", PW_K_MPI_COLL)                    \
	X(MPI_REDUCE_SCATTER, MPI, "MPI_Reduce_scatter", PW_K_MPI_COLL)          \
	X(MPI_REDUCE_SCATTER_BLOCK, MPI, "MPI_Reduce_scatter_block", PW_K_MPI_COLL) \
	X(MPI_SCAN, MPI, "MPI_Scan", PW_K_MPI_COLL)                              \
	X(MPI_SEND, MPI, "MPI_Send", PW_K_MPI_P2P)                               \
	X(MPI_RECV, MPI, "MPI_Recv", PW_K_MPI_P2P)                               \
	X(MPI_ISEND, MPI, "MPI_Isend", PW_K_MPI_P2P)                             \
	X(MPI_IRECV, MPI, "MPI_Irecv", PW_K_MPI_P2P)                             \
	X(MPI_SENDRECV, MPI, "MPI_Sendrecv", PW_K_MPI_P2P)                       \
	X(MPI_WAIT, MPI, "MPI_Wait", PW_K_MPI_WAIT)                              \
	X(MPI_WAITALL, MPI, "MPI_Waitall", PW_K_MPI_WAIT)                        \
	X(MPI_WAITANY, MPI, "MPI_Waitany", PW_K_MPI_WAIT)

/* GPU library calls added after the MPI events (ids are stored, so they go at the end). __cudaLaunchKernel is
 * the launch that nvcc's host stubs make for `kernel<<<...>>>()` (CUDA 12 and later); ncclAlltoAll, ncclGather
 * and ncclScatter are NCCL 2.28's; then what the PyTorch wheel imports besides: the complex batched GEMMs,
 * cublasSgemmEx, cuDNN's batch normalisation with fused activation (its training path), pooling and spatial
 * transformer, ncclBcast (NCCL's in-place broadcast), and cuDNN's algorithm searches, which run every
 * algorithm of a convolution on the GPU (PyTorch's cudnn.benchmark). */
#define PW_GPU_EVENT_LIST_LATER(X)                                                                      \
	X(CUDA_NVCC_LAUNCH_KERNEL, CUDART, "__cudaLaunchKernel", PW_K_GPU_LAUNCH)                      \
	X(NCCL_ALL_TO_ALL, NCCL, "ncclAlltoAll", PW_K_COLL)                                             \
	X(NCCL_GATHER, NCCL, "ncclGather", PW_K_COLL)                                                   \
	X(NCCL_SCATTER, NCCL, "ncclScatter", PW_K_COLL)                                                 \
	X(CUBLAS_CGEMM_BATCHED, CUBLAS, "cublasCgemmBatched", PW_K_GEMM)                                \
	X(CUBLAS_ZGEMM_BATCHED, CUBLAS, "cublasZgemmBatched", PW_K_GEMM)                                \
	X(CUBLAS_CGEMM_STRIDED_BATCHED, CUBLAS, "cublasCgemmStridedBatched", PW_K_GEMM)                 \
	X(CUBLAS_ZGEMM_STRIDED_BATCHED, CUBLAS, "cublasZgemmStridedBatched", PW_K_GEMM)                 \
	X(CUBLAS_SGEMM_EX, CUBLAS, "cublasSgemmEx", PW_K_GEMM)                                          \
	X(CUDNN_BN_FWD_TRAINING_EX, CUDNN, "cudnnBatchNormalizationForwardTrainingEx", PW_K_DNN)        \
	X(CUDNN_BN_BWD_EX, CUDNN, "cudnnBatchNormalizationBackwardEx", PW_K_DNN)                        \
	X(CUDNN_POOLING_FWD, CUDNN, "cudnnPoolingForward", PW_K_DNN)                                    \
	X(CUDNN_SPATIAL_TF_GRID_FWD, CUDNN, "cudnnSpatialTfGridGeneratorForward", PW_K_DNN)             \
	X(CUDNN_SPATIAL_TF_GRID_BWD, CUDNN, "cudnnSpatialTfGridGeneratorBackward", PW_K_DNN)            \
	X(CUDNN_SPATIAL_TF_SAMPLER_FWD, CUDNN, "cudnnSpatialTfSamplerForward", PW_K_DNN)                \
	X(CUDNN_SPATIAL_TF_SAMPLER_BWD, CUDNN, "cudnnSpatialTfSamplerBackward", PW_K_DNN)               \
	X(NCCL_BCAST, NCCL, "ncclBcast", PW_K_COLL)                                                     \
	X(CUDNN_FIND_CONV_FWD, CUDNN, "cudnnFindConvolutionForwardAlgorithmEx", PW_K_DNN)               \
	X(CUDNN_FIND_CONV_BWD_DATA, CUDNN, "cudnnFindConvolutionBackwardDataAlgorithmEx", PW_K_DNN)     \
	X(CUDNN_FIND_CONV_BWD_FILTER, CUDNN, "cudnnFindConvolutionBackwardFilterAlgorithmEx", PW_K_DNN)

/* File calls added after the GPU ones (ids are stored, so they go at the end): the working directory, which
 * relative paths are resolved against. */
#define PW_IO_EVENT_LIST_LATER(X)                         \
	X(CHDIR, IO, "chdir", PW_K_CHDIR)                 \
	X(FCHDIR, IO, "fchdir", PW_K_CHDIR)

/* File metadata (the meta domain: stat family, access, directory listing), named by their base names (stat64
 * and glibc's older __xstat record stat), then descriptors that are not files, more readiness waits, mutex
 * waits (only a pthread_mutex_lock that had to wait) and the I/O calls added with them. */
#define PW_LATER_EVENT_LIST(X)                                                \
	X(STAT, META, "stat", PW_K_STAT)                                      \
	X(LSTAT, META, "lstat", PW_K_STAT)                                    \
	X(FSTAT, META, "fstat", PW_K_STAT_FD)                                 \
	X(FSTATAT, META, "fstatat", PW_K_STAT)                                \
	X(STATX, META, "statx", PW_K_STAT)                                    \
	X(ACCESS, META, "access", PW_K_STAT)                                  \
	X(FACCESSAT, META, "faccessat", PW_K_STAT)                            \
	X(OPENDIR, META, "opendir", PW_K_OPEN)                                \
	X(FDOPENDIR, META, "fdopendir", PW_K_PLAIN)                           \
	X(READDIR, META, "readdir", PW_K_DIR_READ)                            \
	X(GETDENTS64, META, "getdents64", PW_K_DIR_READ)                      \
	X(CLOSEDIR, META, "closedir", PW_K_CLOSE)                             \
	X(PIPE, IO, "pipe", PW_K_CHANNEL)                                     \
	X(PIPE2, IO, "pipe2", PW_K_CHANNEL)                                   \
	X(SOCKET, IO, "socket", PW_K_CHANNEL)                                 \
	X(SOCKETPAIR, IO, "socketpair", PW_K_CHANNEL)                         \
	X(ACCEPT, IO, "accept", PW_K_CHANNEL)                                 \
	X(ACCEPT4, IO, "accept4", PW_K_CHANNEL)                               \
	X(PPOLL, WAIT, "ppoll", PW_K_SLEEP)                                   \
	X(PSELECT, WAIT, "pselect", PW_K_SLEEP)                               \
	X(EPOLL_PWAIT, WAIT, "epoll_pwait", PW_K_SLEEP)                       \
	X(MUTEX_LOCK, WAIT, "pthread_mutex_lock", PW_K_SLEEP)                 \
	X(PREADV2, IO, "preadv2", PW_K_READ)                                  \
	X(PWRITEV2, IO, "pwritev2", PW_K_WRITE)                               \
	X(FALLOCATE, IO, "fallocate", PW_K_PLAIN)                             \
	X(FTRUNCATE, IO, "ftruncate", PW_K_PLAIN)

/* Character stdio and what the coverage check needs (appended: ids are stored). The character calls of
 * stdio (putc, fputc, putchar, getc, fgetc, getchar, their _unlocked forms and the inline macros'
 * __overflow/__uflow) are not recorded one by one: their bytes are counted per stream and written as one record per buffer flush or refill (preload/stdio.c),
 * arg1 = the bytes since the stream's previous such record. io_uring_setup: ret = the ring's descriptor, arg0 =
 * -1, arg1 = the entries asked for; the I/O done through a ring is seen neither by the wrappers nor by the
 * kernel's rchar/wchar. setlocale: arg0 = -1, arg1 = the bytes libc read itself in the call (the locale alias
 * file), as the kernel counted them. */
#define PW_CHAR_IO_EVENT_LIST(X)                                    \
	X(PUTC_BUFFERED, STDIO, "putc (per buffer)", PW_K_WRITE)    \
	X(GETC_BUFFERED, STDIO, "getc (per buffer)", PW_K_READ)     \
	X(FSCANF, STDIO, "fscanf", PW_K_READ)                       \
	X(DPRINTF, STDIO, "dprintf", PW_K_WRITE)                    \
	X(IO_URING_SETUP, IO, "io_uring_setup", PW_K_PLAIN)         \
	X(SETLOCALE, IO, "setlocale (libc's reads)", PW_K_READ)

/* X(ID, domain, "name", kind). Append only: ids are stored in raw traces. */
#define PW_EVENT_LIST(X)                                  \
	X(PAD, IO, "pad", PW_K_PLAIN)                     \
	X(OPEN, IO, "open", PW_K_OPEN)                    \
	X(OPENAT, IO, "openat", PW_K_OPEN)                \
	X(CREAT, IO, "creat", PW_K_OPEN)                  \
	X(CLOSE, IO, "close", PW_K_CLOSE)                 \
	X(READ, IO, "read", PW_K_READ)                    \
	X(PREAD, IO, "pread", PW_K_READ)                  \
	X(READV, IO, "readv", PW_K_READ)                  \
	X(PREADV, IO, "preadv", PW_K_READ)                \
	X(WRITE, IO, "write", PW_K_WRITE)                 \
	X(PWRITE, IO, "pwrite", PW_K_WRITE)               \
	X(WRITEV, IO, "writev", PW_K_WRITE)               \
	X(PWRITEV, IO, "pwritev", PW_K_WRITE)             \
	X(LSEEK, IO, "lseek", PW_K_PLAIN)                 \
	X(FSYNC, IO, "fsync", PW_K_PLAIN)                 \
	X(FDATASYNC, IO, "fdatasync", PW_K_PLAIN)         \
	X(MMAP, IO, "mmap", PW_K_MMAP)                    \
	X(MUNMAP, IO, "munmap", PW_K_PLAIN)               \
	X(FOPEN, STDIO, "fopen", PW_K_OPEN)               \
	X(FDOPEN, STDIO, "fdopen", PW_K_PLAIN)           \
	X(FCLOSE, STDIO, "fclose", PW_K_CLOSE)            \
	X(FREAD, STDIO, "fread", PW_K_READ)               \
	X(FWRITE, STDIO, "fwrite", PW_K_WRITE)            \
	X(FGETS, STDIO, "fgets", PW_K_READ)               \
	X(FPUTS, STDIO, "fputs", PW_K_WRITE)              \
	X(FPRINTF, STDIO, "fprintf", PW_K_WRITE)          \
	X(VFPRINTF, STDIO, "vfprintf", PW_K_WRITE)        \
	X(GETDELIM, STDIO, "getdelim", PW_K_READ)         \
	X(FFLUSH, STDIO, "fflush", PW_K_PLAIN)            \
	X(FORK, PROCESS, "fork", PW_K_FORK)               \
	X(VFORK, PROCESS, "vfork", PW_K_FORK)             \
	X(POSIX_SPAWN, PROCESS, "posix_spawn", PW_K_FORK) \
	X(EXECVE, PROCESS, "execve", PW_K_EXEC)           \
	X(EXIT, PROCESS, "exit", PW_K_EXIT)               \
	X(EXIT_NOW, PROCESS, "_exit", PW_K_EXIT)          \
	X(WAIT, PROCESS, "wait", PW_K_WAIT)               \
	X(WAITPID, PROCESS, "waitpid", PW_K_WAIT)         \
	X(WAITID, PROCESS, "waitid", PW_K_WAIT)           \
	X(DLOPEN, DL, "dlopen", PW_K_DLOPEN)              \
	X(DLCLOSE, DL, "dlclose", PW_K_PLAIN)             \
	X(NANOSLEEP, WAIT, "nanosleep", PW_K_SLEEP)       \
	X(CLOCK_NANOSLEEP, WAIT, "clock_nanosleep", PW_K_SLEEP) \
	X(USLEEP, WAIT, "usleep", PW_K_SLEEP)             \
	X(SLEEP, WAIT, "sleep", PW_K_SLEEP)               \
	X(POLL, WAIT, "poll", PW_K_SLEEP)                 \
	X(SELECT, WAIT, "select", PW_K_SLEEP)             \
	X(EPOLL_WAIT, WAIT, "epoll_wait", PW_K_SLEEP)     \
	X(COND_WAIT, WAIT, "pthread_cond_wait", PW_K_SLEEP) \
	X(COND_TIMEDWAIT, WAIT, "pthread_cond_timedwait", PW_K_SLEEP) \
	X(PTHREAD_JOIN, WAIT, "pthread_join", PW_K_SLEEP) \
	X(SEM_WAIT, WAIT, "sem_wait", PW_K_SLEEP)         \
	X(PUTS, STDIO, "puts", PW_K_WRITE)                \
	X(PRINTF, STDIO, "printf", PW_K_WRITE)            \
	X(WAIT3, PROCESS, "wait3", PW_K_WAIT)             \
	X(WAIT4, PROCESS, "wait4", PW_K_WAIT)             \
	X(POSIX_SPAWNP, PROCESS, "posix_spawnp", PW_K_FORK) \
	X(SEM_TIMEDWAIT, WAIT, "sem_timedwait", PW_K_SLEEP) \
	X(FD_INFO, IO, "fd-info", PW_K_FDINFO)            \
	X(DUP, IO, "dup", PW_K_DUP)                       \
	X(DUP2, IO, "dup2", PW_K_DUP)                     \
	X(DUP3, IO, "dup3", PW_K_DUP)                     \
	X(FCNTL_DUPFD, IO, "fcntl(F_DUPFD)", PW_K_DUP)   \
	PW_GPU_EVENT_LIST(X)                              \
	PW_ACT_EVENT_LIST(X)                              \
	PW_NVTX_EVENT_LIST(X)                             \
	PW_MPI_EVENT_LIST(X)                              \
	PW_GPU_EVENT_LIST_LATER(X)                        \
	PW_IO_EVENT_LIST_LATER(X)                         \
	X(RECORD_COST, PROCESS, "record cost", PW_K_COST) \
	PW_LATER_EVENT_LIST(X)                            \
	PW_CHAR_IO_EVENT_LIST(X)

enum pw_event {
#define PW_X(id, dom, name, kind) PW_EV_##id,
	PW_EVENT_LIST(PW_X)
#undef PW_X
	PW_EV_COUNT
};

/* Every record starts with this. size is in 8-byte units; err is the errno of a failed call (0 if none,
 * errno values on Linux fit in a byte; PW_ERR_NO_ERRNO for a call that failed without setting errno, such as
 * dlopen); tid is the kernel thread id of the writer. */
#define PW_ERR_NO_ERRNO 255
/* type flag: the record was written outside the capture window. Only calls that the reader needs to follow
 * descriptors and processes (opens, closes, duplicates, process events) are recorded there; the report uses
 * them for that and counts them nowhere. Readers mask it off (PW_REC_TYPE). */
#define PW_REC_OUTSIDE 0x8000u
/* type flag: the record's last 8 bytes (counted in size8) are a stack reference: the arena offset of a stack
 * (struct pw_stack below) captured for this call, possibly with PW_STACK_PY_PENDING set. */
#define PW_REC_STACK 0x4000u
/* type flag: a GPU library call made from inside another one on the same thread (cuDNN calling
 * cublasLtMatmul): its time is inside the outer call's and its GPU work belongs to the outer call (no
 * external id of its own), so the report counts it apart and adds it to no total. */
#define PW_REC_NESTED 0x2000u
#define PW_REC_TYPE(type) ((type) & ~(PW_REC_OUTSIDE | PW_REC_STACK | PW_REC_NESTED))
struct pw_rec_hdr {
	uint16_t type;
	uint8_t size8;
	uint8_t err;
	uint32_t tid;
};

/* A timed call. Times are in the clock units of the writing process (see pw_clock.h); ret is the call's
 * return value as a signed 64-bit integer (pointers as their address); arg0/arg1 per the event's kind. */
struct pw_rec_call {
	struct pw_rec_hdr h;
	uint64_t t0;
	uint64_t t1;
	int64_t ret;
	uint64_t arg0;
	uint64_t arg1;
};

/* An open (PW_K_OPEN): the call part (arg0 = new fd, arg1 = path), then what a relative path was relative to,
 * so that the reader can name the file whatever order the threads' records reach it in. An older reader sees
 * the call part only; an older writer's records end there (pw_rec_call's size: a path as written). */
struct pw_rec_open {
	struct pw_rec_call c;
	int64_t dirfd; /* openat's directory descriptor; AT_FDCWD for the working directory and for other opens */
	uint64_t cwd;  /* string ref of the working directory (its absolute name, without symlinks) when the path
			* was relative to it; 0 for any other path, or when it had no name */
};

/* A GPU library call (kinds for which pw_kind_is_api()): a pw_rec_call whose arg0/arg1 follow the kind, so
 * code that reads only the common part (times, status, string reference in arg1) needs no special case,
 * then where it ran and the kind's further fields. ret is the status code the library returned; h.err is
 * PW_ERR_NO_ERRNO when that code is a failure (cudaErrorNotReady from a query is not one), else 0. */
struct pw_rec_api {
	struct pw_rec_call c;
	uint64_t stream; /* cudaStream_t (0: the legacy default stream, or none) */
	int32_t device;  /* the calling thread's current device, -1 if unknown */
	uint32_t sub;    /* per kind */
	uint64_t a[4];   /* per kind */
	uint64_t corr;   /* the external correlation id pushed to CUPTI around the call (0: none), which
			  * PW_K_ACT_EXTCORR records tie to the GPU work the call enqueued */
};

/* What the GPU did (kinds for which pw_kind_is_activity()), converted from a CUPTI activity record in the
 * buffer-completed callback. Unlike every other record, t0/t1 are CLOCK_MONOTONIC nanoseconds (the clock
 * CUPTI was given), the GPU-side start and end; h.tid is the thread that delivered the buffer, not one that
 * did the work. */
struct pw_rec_gpu {
	struct pw_rec_call c;
	int32_t device;       /* -1 when none */
	uint32_t stream;      /* CUPTI's stream id (not the cudaStream_t handle) */
	uint32_t correlation; /* CUPTI's correlation id: the CUDA call that enqueued the work */
	uint32_t context;     /* CUPTI's context id */
	uint64_t a[3];        /* per kind */
};

/* ---- Per-kind payloads: how the fields of pw_rec_api and pw_rec_gpu that depend on the kind are packed.
 * Written here once: the preload packs with pw_put_*, the collector unpacks with pw_get_*, and neither
 * shifts a field by hand. The getters take the fields themselves, so that a copy of them (the model's
 * timeline keeps a[] and sub) reads the same way. ---- */

/* Launch geometry: a[0..2] of a launch call (PW_K_GPU_LAUNCH) and of a kernel (PW_EV_GPU_KERNEL). */
struct pw_dims {
	uint32_t grid[3], block[3];
};

static inline void pw_put_dims(uint64_t a[3], struct pw_dims d)
{
	a[0] = (uint64_t)d.grid[0] | (uint64_t)d.grid[1] << 32;
	a[1] = (uint64_t)d.grid[2] | (uint64_t)d.block[0] << 32;
	a[2] = (uint64_t)d.block[1] | (uint64_t)d.block[2] << 32;
}

static inline struct pw_dims pw_get_dims(const uint64_t a[3])
{
	return (struct pw_dims){
		.grid = {(uint32_t)a[0], (uint32_t)(a[0] >> 32), (uint32_t)a[1]},
		.block = {(uint32_t)(a[1] >> 32), (uint32_t)a[2], (uint32_t)(a[2] >> 32)},
	};
}

/* A matrix product (PW_K_GEMM): D is m x n, op(A) m x k, batch of them; a[0..3]. dtype (cudaDataType) and
 * the transposes (cublasOperation_t) are in sub; arg0 is the compute type. */
struct pw_gemm {
	uint64_t m, n, k, batch;
	uint8_t dtype, transa, transb;
};

static inline void pw_put_gemm(struct pw_rec_api *r, struct pw_gemm g)
{
	r->a[0] = g.m, r->a[1] = g.n, r->a[2] = g.k, r->a[3] = g.batch;
	r->sub = (uint32_t)g.dtype | (uint32_t)g.transa << 8 | (uint32_t)g.transb << 16;
}

static inline struct pw_gemm pw_get_gemm(const uint64_t a[4], uint32_t sub)
{
	return (struct pw_gemm){.m = a[0], .n = a[1], .k = a[2], .batch = a[3], .dtype = (uint8_t)sub,
				.transa = (uint8_t)(sub >> 8), .transb = (uint8_t)(sub >> 16)};
}

/* An NCCL call (PW_K_COLL, PW_K_COMM): a[0] the communicator, a[1] a send's or receive's peer or a rooted
 * collective's root (-1: none), a[2] the communicator's size and this rank in it (0 and 0: unknown); a
 * collective's sub is its ncclDataType_t and ncclRedOp_t, its arg0 the count of elements. */
struct pw_nccl {
	uint64_t comm;
	int64_t peer;
	uint32_t nranks, rank;
	uint8_t dtype, op;
};

static inline void pw_put_nccl(struct pw_rec_api *r, struct pw_nccl n)
{
	r->a[0] = n.comm;
	r->a[1] = (uint64_t)n.peer;
	r->a[2] = (uint64_t)n.nranks | (uint64_t)n.rank << 32;
	r->sub = (uint32_t)n.dtype | (uint32_t)n.op << 8;
}

static inline struct pw_nccl pw_get_nccl(const uint64_t a[4], uint32_t sub)
{
	return (struct pw_nccl){.comm = a[0], .peer = (int64_t)a[1], .nranks = (uint32_t)a[2],
				.rank = (uint32_t)(a[2] >> 32), .dtype = (uint8_t)sub, .op = (uint8_t)(sub >> 8)};
}

/* A copy call (PW_K_GPU_MEMCPY): a[0] the destination, a[1] the source; a peer copy's devices in a[2]. The
 * direction and PW_API_ASYNC are in sub, the bytes in arg0. */
struct pw_copy_call {
	uint64_t dst, src;
	int32_t dst_device, src_device; /* a peer copy's */
};

static inline void pw_put_copy_call(struct pw_rec_api *r, struct pw_copy_call c)
{
	r->a[0] = c.dst;
	r->a[1] = c.src;
	r->a[2] = (uint64_t)(uint32_t)c.dst_device | (uint64_t)(uint32_t)c.src_device << 32;
}

static inline struct pw_copy_call pw_get_copy_call(const uint64_t a[3])
{
	return (struct pw_copy_call){.dst = a[0], .src = a[1], .dst_device = (int32_t)(uint32_t)a[2],
				     .src_device = (int32_t)(uint32_t)(a[2] >> 32)};
}

/* A kernel's resources (PW_EV_GPU_KERNEL arg0) and the graph it ran in (ret: graph id, node id's low 32
 * bits; 0: none). */
struct pw_kernel_use {
	uint32_t registers, shared_bytes;
	uint32_t graph, graph_node;
};

static inline void pw_put_kernel_use(struct pw_rec_gpu *g, struct pw_kernel_use u)
{
	g->c.arg0 = (uint64_t)u.registers | (uint64_t)u.shared_bytes << 32;
	g->c.ret = (int64_t)((uint64_t)u.graph | (uint64_t)u.graph_node << 32);
}

static inline struct pw_kernel_use pw_get_kernel_use(uint64_t arg0, int64_t ret)
{
	return (struct pw_kernel_use){.registers = (uint32_t)arg0, .shared_bytes = (uint32_t)(arg0 >> 32),
				      .graph = (uint32_t)ret, .graph_node = (uint32_t)((uint64_t)ret >> 32)};
}

/* Where a GPU copy's or memset's memory was (enum pw_act_mem) and a copy's direction: arg1 of
 * PW_EV_GPU_MEMCPY (dir, src << 8, dst << 16) and PW_EV_GPU_MEMSET (the value, dst << 32). */
struct pw_act_copy {
	uint8_t dir; /* enum pw_copy_dir; a memset's is 0 */
	uint8_t src, dst;
	uint32_t value; /* a memset's */
};

static inline uint64_t pw_put_act_memcpy(struct pw_act_copy c)
{
	return (uint64_t)c.dir | (uint64_t)c.src << 8 | (uint64_t)c.dst << 16;
}

static inline uint64_t pw_put_act_memset(struct pw_act_copy c)
{
	return (uint64_t)c.value | (uint64_t)c.dst << 32;
}

static inline struct pw_act_copy pw_get_act_memcpy(uint64_t arg1)
{
	return (struct pw_act_copy){.dir = (uint8_t)arg1, .src = (uint8_t)(arg1 >> 8), .dst = (uint8_t)(arg1 >> 16)};
}

static inline struct pw_act_copy pw_get_act_memset(uint64_t arg1)
{
	return (struct pw_act_copy){.dst = (uint8_t)(arg1 >> 32), .value = (uint32_t)arg1};
}

/* A peer copy's devices (PW_EV_GPU_MEMCPY with PW_COPY_PEER): a[0]. */
static inline uint64_t pw_put_act_peer(uint32_t src_device, uint32_t dst_device)
{
	return (uint64_t)src_device | (uint64_t)dst_device << 32;
}

static inline void pw_get_act_peer(uint64_t a0, uint32_t *src_device, uint32_t *dst_device)
{
	*src_device = (uint32_t)a0;
	*dst_device = (uint32_t)(a0 >> 32);
}

/* A device (PW_EV_GPU_DEVICE): a[0] its memory, a[1] SMs and compute capability; arg0 its bandwidth. */
struct pw_device_info {
	uint64_t memory_bytes;
	uint32_t sms;
	uint16_t cc_major, cc_minor;
};

static inline void pw_put_device_info(struct pw_rec_gpu *g, struct pw_device_info d)
{
	g->a[0] = d.memory_bytes;
	g->a[1] = (uint64_t)d.sms | (uint64_t)d.cc_major << 32 | (uint64_t)d.cc_minor << 48;
}

static inline struct pw_device_info pw_get_device_info(const uint64_t a[2])
{
	return (struct pw_device_info){.memory_bytes = a[0], .sms = (uint32_t)a[1],
				       .cc_major = (uint16_t)(a[1] >> 32), .cc_minor = (uint16_t)(a[1] >> 48)};
}

/* The state of GPU activity recording (PW_EV_GPU_STATUS; arg0 the state, ret a failure's code): a[0] CUPTI's
 * version, or the driver's for PW_ACT_DRIVER_UNUSABLE; a[1] how CUPTI's clock was put on ours; a[2] for
 * PW_ACT_DRIVER_UNUSABLE the runtime's major version (0: unknown). */
struct pw_act_status_info {
	uint32_t version;
	uint32_t clock; /* enum pw_act_clock, 0: none */
	uint32_t runtime_major;
};

static inline void pw_put_act_status(struct pw_rec_gpu *g, struct pw_act_status_info s)
{
	g->a[0] = s.version, g->a[1] = s.clock, g->a[2] = s.runtime_major;
}

static inline struct pw_act_status_info pw_get_act_status(const uint64_t a[3])
{
	return (struct pw_act_status_info){.version = (uint32_t)a[0], .clock = (uint32_t)a[1],
					   .runtime_major = (uint32_t)a[2]};
}

/* An NVTX range or mark (kinds for which pw_kind_is_range()). */
struct pw_rec_range {
	struct pw_rec_call c;
	uint64_t payload;      /* the event attributes' payload, as its 8 bytes (0: none) */
	uint32_t payload_type; /* nvtxPayloadType_t (0: none) */
	uint32_t color;        /* ARGB (0: none) */
};

/* An NVTX record's domain (0: the default one) and category: arg0 of ranges, marks and category names. */
struct pw_nvtx_scope {
	uint32_t domain, category;
};

static inline uint64_t pw_put_nvtx_scope(struct pw_nvtx_scope s)
{
	return (uint64_t)s.domain | (uint64_t)s.category << 32;
}

static inline struct pw_nvtx_scope pw_get_nvtx_scope(uint64_t arg0)
{
	return (struct pw_nvtx_scope){.domain = (uint32_t)arg0, .category = (uint32_t)(arg0 >> 32)};
}

/* An MPI collective's communicator (PW_K_MPI_COLL arg1; arg0 the bytes this rank contributes): its size
 * and the root (-1: none). */
struct pw_mpi_comm {
	uint32_t size;
	int32_t root;
};

static inline uint64_t pw_put_mpi_comm(struct pw_mpi_comm c)
{
	return (uint64_t)c.size | (uint64_t)(uint32_t)(c.root + 1) << 32;
}

static inline struct pw_mpi_comm pw_get_mpi_comm(uint64_t arg1)
{
	return (struct pw_mpi_comm){.size = (uint32_t)arg1, .root = (int32_t)(uint32_t)(arg1 >> 32) - 1};
}

/* Descriptors made for a pipe or sockets (PW_K_CHANNEL): arg0 = the first descriptor | the second << 32,
 * arg1 = their inodes likewise (the kernel numbers pipes and sockets with 32 bits: get_next_ino). A call that
 * makes one descriptor (socket, accept) has -1 and 0 for the second; a failed call -1 for both; an inode
 * that could not be read is 0. */
struct pw_channel {
	int32_t fd[2];
	uint32_t ino[2];
};

static inline uint64_t pw_put_channel_fds(int32_t first, int32_t second)
{
	return (uint64_t)(uint32_t)first | (uint64_t)(uint32_t)second << 32;
}

static inline uint64_t pw_put_channel_inos(uint32_t first, uint32_t second)
{
	return (uint64_t)first | (uint64_t)second << 32;
}

static inline struct pw_channel pw_get_channel(uint64_t arg0, uint64_t arg1)
{
	return (struct pw_channel){.fd = {(int32_t)(uint32_t)arg0, (int32_t)(uint32_t)(arg0 >> 32)},
				   .ino = {(uint32_t)arg1, (uint32_t)(arg1 >> 32)}};
}

/* A loaded object (PW_K_MODULE). */
struct pw_rec_module {
	struct pw_rec_call c;
	uint64_t lo, hi;     /* addresses [lo, hi) its PT_LOAD segments cover */
	uint64_t build_id;   /* string ref of the lower-case hex NT_GNU_BUILD_ID note (0: none) */
	uint64_t image;      /* string ref of the object's ELF image as mapped, for one no file holds (the vDSO);
			      * 0: none */
};
#define PW_MODULE_IMAGE_MAX (64u << 10) /* the largest image recorded, and read */

/* A CPU sample (PW_K_SAMPLE): the period asked for (arg0), and the thread's CPU time since its previous
 * sample, or since its timer started (arg1): the CPU-time timer fires at the scheduler's tick, so one
 * sample may stand for several periods. Traces older than arg1 hold 0 there: one period. */
struct pw_sample {
	uint64_t period_ns, cpu_ns;
};

static inline void pw_put_sample(struct pw_rec_call *c, struct pw_sample s)
{
	c->arg0 = s.period_ns;
	c->arg1 = s.cpu_ns ? s.cpu_ns : 1; /* 0 is an older trace's */
}

static inline struct pw_sample pw_get_sample(uint64_t arg0, uint64_t arg1)
{
	return (struct pw_sample){.period_ns = arg0, .cpu_ns = arg1 ? arg1 : arg0};
}

/* A call stack, stored once per distinct content in the string arena (its reference is the stack id):
 *
 *   struct pw_stack | uint64_t native[native] | python frames
 *
 * native holds return addresses, innermost first (with PW_STACK_INTERRUPTED, native[0] is the instruction a
 * sample interrupted). Each Python frame, innermost first, is struct pw_py_frame followed by file_len bytes
 * of file name and func_len bytes of function name, padded to 8 bytes. A reader checks every length against
 * the entry's size (pw_stack_parse). */
#define PW_STACK_MAGIC 0x4b545350u /* "PSTK" */
#define PW_STACK_INTERRUPTED 1u
#define PW_STACK_TRUNCATED 2u /* deeper frames were left out */
/* A stack reference's top bit: the thread's Python frames were not readable then (it did not hold the GIL);
 * they follow in the thread's next PW_K_PYSTACK record. */
#define PW_STACK_PY_PENDING (1ull << 63)
#define PW_STACK_MAX_NATIVE 64
#define PW_STACK_MAX_PYTHON 48
struct pw_stack {
	uint32_t magic;
	uint16_t native;
	uint16_t python;
	uint32_t flags;
	uint32_t reserved;
};
struct pw_py_frame {
	uint32_t line;
	uint16_t file_len;
	uint16_t func_len;
};

/* A checked view of a stack's bytes. */
struct pw_stack_view {
	uint32_t flags;
	uint32_t native_count;
	const uint8_t *native; /* native_count little-endian uint64_t, possibly unaligned: read with memcpy */
	uint32_t python_count;
	const uint8_t *python; /* the first Python frame */
	const uint8_t *end;
};

/* Checks len bytes at p as a stack. Returns 0 with *v filled, or -1 when they are not a whole stack. */
int pw_stack_parse(const void *p, size_t len, struct pw_stack_view *v);

/* The i-th native address of a parsed stack. */
uint64_t pw_stack_native(const struct pw_stack_view *v, uint32_t i);

/* Steps through the Python frames of a parsed stack: *pos starts at v->python. Returns 1 with the frame's
 * fields (strings not NUL-terminated), or 0 at the end. */
int pw_stack_py_next(const struct pw_stack_view *v, const uint8_t **pos, uint32_t *line, const char **file,
		     uint32_t *file_len, const char **func, uint32_t *func_len);

/* Bytes a Python frame with these name lengths takes in a stack. */
static inline size_t pw_py_frame_size(size_t file_len, size_t func_len)
{
	return (sizeof(struct pw_py_frame) + file_len + func_len + 7) & ~(size_t)7;
}

/* The digit-folded form of an NVTX message into buf, NUL-terminated (every run of digits -> '#': "step 12" ->
 * "step #"), which the preload interns past its distinct-text budget and the report groups rows by. Returns
 * its length, at most size - 1. */
size_t pw_range_fold(const char *name, size_t len, char *buf, size_t size);

/* Takes out of name, in place, the decorations that number a range's occurrences: PyTorch's ", seq = N",
 * ", op_id = N" and ", input_op_ids = [...]" (emit_nvtx, record_function under it), so that one action is one
 * row. ", sizes = [...]" stays: it tells shapes apart. Returns the new length. The preload takes them out of
 * the messages it interns (else each occurrence is a text of its own), the collector out of the names it reads. */
size_t pw_range_undecorate(char *name);

/* A string reference: an offset into the process's string arena (pw_ring.h), 0 meaning "none". */
typedef uint64_t pw_strref;

struct pw_event_info {
	const char *name;
	enum pw_domain domain;
	enum pw_event_kind kind;
};

extern const struct pw_event_info pw_events[PW_EV_COUNT];
extern const char *const pw_domain_names[PW_DOM_COUNT];

/* The smallest size a record of event type ev may have; 0 for an unknown type. */
static inline size_t pw_event_min_size(unsigned ev)
{
	if (ev >= PW_EV_COUNT)
		return 0;
	enum pw_event_kind k = pw_events[ev].kind;
	return pw_kind_is_api(k)	? sizeof(struct pw_rec_api)
	       : pw_kind_is_activity(k) ? sizeof(struct pw_rec_gpu)
	       : pw_kind_is_range(k)	? sizeof(struct pw_rec_range)
	       : k == PW_K_MODULE	? sizeof(struct pw_rec_module)
					: sizeof(struct pw_rec_call);
}

/* Returns the domain whose name is name, or -1. */
int pw_domain_from_name(const char *name, size_t len);

#endif
