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

#define PW_FORMAT_VERSION 6u

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
	X(MPI, "mpi")

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
	PW_K_OPEN,   /* arg0 = new fd (-1 on failure), arg1 = path string ref */
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
	PW_K_SAMPLE,  /* a CPU-time sample of the thread (--sample): arg0 = the sampling period in ns, its stack
		       * (PW_REC_STACK) starts at the interrupted instruction; t0 = t1 = when */
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
};

/* Why a capture window opened or closed (PW_K_CAPTURE arg0). */
enum pw_capture_reason {
	PW_CAPTURE_PROFILER_API = 1, /* cudaProfilerStart / cudaProfilerStop */
	PW_CAPTURE_NVTX = 2,         /* --capture-range=nvtx:NAME: an occurrence of the range began or ended */
	PW_CAPTURE_SCHEDULE = 3,     /* --schedule over the step range */
	PW_CAPTURE_TIMER = 4,        /* --delay / --duration */
	PW_CAPTURE_ON_DEMAND = 5,    /* profwrap start|stop PID, or SIGUSR2 */
	PW_CAPTURE_INITIAL = 6,      /* the state the process started in (a fork child: its parent's) */
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
	PW_GPU_EVENT_LIST_LATER(X)

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

/* An NVTX range or mark (kinds for which pw_kind_is_range()). */
struct pw_rec_range {
	struct pw_rec_call c;
	uint64_t payload;      /* the event attributes' payload, as its 8 bytes (0: none) */
	uint32_t payload_type; /* nvtxPayloadType_t (0: none) */
	uint32_t color;        /* ARGB (0: none) */
};

/* A loaded object (PW_K_MODULE). */
struct pw_rec_module {
	struct pw_rec_call c;
	uint64_t lo, hi;     /* addresses [lo, hi) its PT_LOAD segments cover */
	uint64_t build_id;   /* string ref of the lower-case hex NT_GNU_BUILD_ID note (0: none) */
	uint64_t reserved;
};

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
