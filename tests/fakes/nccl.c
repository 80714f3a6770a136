/* Fake libnccl.so.2: one rank per process. Communicators of one rank (ncclCommInitRank with nranks 1,
 * ncclCommInitAll with one device, ncclCommSplit), collectives that copy send to receive buffers (what they
 * compute with one rank) and take bytes / FAKEGPU_NCCL_BW (default 10 GB/s, at least 1 us) on the stream,
 * and point-to-point operations with oneself paired inside ncclGroupStart/ncclGroupEnd.
 * As NVIDIA's library, the p-prefixed names (pncclAllReduce) are the definitions and the plain names weak
 * aliases of them. No public CUDA name is called (tests/fakes/README.md). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#include "fakegpu.h"

#define NC_COMM_MAGIC 0x4e43434du
#define NC_ID_MAGIC "fakenccl"

struct ncclComm {
	uint32_t magic;
	int nranks, rank, device;
};

/* A send or receive waiting inside a group for its other half. */
struct nc_p2p {
	int is_send;
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ncclDataType_t datatype;
	int peer;
	ncclComm_t comm;
	cudaStream_t stream;
};

static _Thread_local int t_group_depth;
static _Thread_local struct nc_p2p *t_pending;
static _Thread_local size_t t_npending, t_cap_pending;
static _Thread_local char t_last_error[256];

static ncclResult_t nc_fail(ncclResult_t r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Returns r, leaving the message for ncclGetLastError. */
static ncclResult_t nc_fail(ncclResult_t r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t_last_error, sizeof(t_last_error), fmt, ap);
	va_end(ap);
	return r;
}

static size_t nc_type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8:
	case ncclUint8:
	case ncclFloat8e4m3:
	case ncclFloat8e5m2: return 1;
	case ncclFloat16:
	case ncclBfloat16: return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32: return 4;
	case ncclInt64:
	case ncclUint64:
	case ncclFloat64: return 8;
	default: return 0;
	}
}

static int comm_ok(ncclComm_t c)
{
	return c != NULL && c->magic == NC_COMM_MAGIC;
}

/* Work of the calls inside a group, launched by the outermost ncclGroupEnd as NCCL does: one kernel per
 * stream and kernel name, taking the time of all of its calls. */
struct nc_deferred {
	cudaStream_t stream;
	uint64_t ns;
	char name[128];
};
static _Thread_local struct nc_deferred *t_deferred;
static _Thread_local size_t t_ndeferred, t_cap_deferred;

static ncclResult_t nc_defer(cudaStream_t stream, uint64_t ns, const char *name)
{
	for (size_t i = 0; i < t_ndeferred; i++)
		if (t_deferred[i].stream == stream && strcmp(t_deferred[i].name, name) == 0) {
			t_deferred[i].ns += ns;
			return ncclSuccess;
		}
	if (t_ndeferred == t_cap_deferred) {
		size_t cap = t_cap_deferred ? t_cap_deferred * 2 : 8;
		struct nc_deferred *n = realloc(t_deferred, cap * sizeof(*n));

		if (n == NULL)
			return nc_fail(ncclSystemError, "fake NCCL: out of memory");
		t_deferred = n;
		t_cap_deferred = cap;
	}
	t_deferred[t_ndeferred] = (struct nc_deferred){ stream, ns, "" };
	snprintf(t_deferred[t_ndeferred++].name, sizeof(t_deferred[0].name), "%s", name);
	return ncclSuccess;
}

static ncclResult_t nc_time(cudaStream_t stream, size_t bytes, const char *name)
{
	double ns = (double)bytes * 1e9 / fakegpu_env_double("FAKEGPU_NCCL_BW", 10e9);
	uint64_t t = ns < 1000 ? 1000 : (uint64_t)ns;

	if (fakegpu_stream_check(stream) != cudaSuccess)
		return nc_fail(ncclUnhandledCudaError, "fake NCCL: invalid stream");
	if (t_group_depth > 0)
		return nc_defer(stream, t, name);
	if (fakegpu_enqueue_named(stream, t, name) != cudaSuccess)
		return nc_fail(ncclUnhandledCudaError, "fake NCCL: invalid stream");
	return ncclSuccess;
}

/* ---- versions, ids, errors ---- */

ncclResult_t pncclGetVersion(int *version)
{
	if (version == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: version is NULL");
	*version = NCCL_VERSION_CODE;
	return ncclSuccess;
}

ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId)
{
	static _Thread_local unsigned int counter;
	struct timespec ts;

	if (uniqueId == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: uniqueId is NULL");
	clock_gettime(CLOCK_REALTIME, &ts);
	memset(uniqueId, 0, sizeof(*uniqueId));
	snprintf(uniqueId->internal, sizeof(uniqueId->internal), "%s:%ld:%u:%lld.%09ld", NC_ID_MAGIC, (long)getpid(),
		 counter++, (long long)ts.tv_sec, ts.tv_nsec);
	return ncclSuccess;
}

const char *pncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

const char *pncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return t_last_error;
}

/* ---- communicators ---- */

static ncclResult_t comm_new(ncclComm_t *out, int nranks, int rank, int device)
{
	struct ncclComm *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return nc_fail(ncclSystemError, "fake NCCL: out of memory");
	*c = (struct ncclComm){ .magic = NC_COMM_MAGIC, .nranks = nranks, .rank = rank, .device = device };
	*out = c;
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank,
			      const ncclConfig_t *config)
{
	int device = fakegpu_current_device();

	if (comm == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: comm is NULL");
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return nc_fail(ncclInvalidArgument, "fake NCCL: rank %d, nranks %d", rank, nranks);
	if (nranks != 1)
		return nc_fail(ncclInvalidArgument, "fake NCCL: one rank per process (nranks %d)", nranks);
	if (strncmp(id->internal, NC_ID_MAGIC, strlen(NC_ID_MAGIC)) != 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: unique id not from ncclGetUniqueId");
	if (config != NULL && (config->magic != 0xcafebeef || config->size < offsetof(ncclConfig_t, blocking)))
		return nc_fail(ncclInvalidArgument, "fake NCCL: config not initialized with NCCL_CONFIG_INITIALIZER");
	if (device < 0)
		return nc_fail(ncclUnhandledCudaError, "fake NCCL: no device");
	return comm_new(comm, nranks, rank, device);
}

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	return init_rank(comm, nranks, &commId, rank, NULL);
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
				     ncclConfig_t *config)
{
	return init_rank(comm, nranks, &commId, rank, config);
}

/* ndev communicators of ndev ranks; only one-rank ones can run collectives in the fake. */
ncclResult_t pncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
	int ndevices = fakegpu_device_count();

	if (comm == NULL || ndev < 1)
		return nc_fail(ncclInvalidArgument, "fake NCCL: comm NULL or ndev %d", ndev);
	for (int i = 0; i < ndev; i++) {
		int d = devlist ? devlist[i] : i;

		if (d < 0 || d >= ndevices)
			return nc_fail(ncclInvalidArgument, "fake NCCL: invalid device %d", d);
	}
	for (int i = 0; i < ndev; i++) {
		ncclResult_t r = comm_new(&comm[i], ndev, i, devlist ? devlist[i] : i);

		if (r != ncclSuccess) {
			for (int j = 0; j < i; j++) {
				comm[j]->magic = 0;
				free(comm[j]);
			}
			return r;
		}
	}
	return ncclSuccess;
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
	(void)key, (void)config;
	if (!comm_ok(comm) || newcomm == NULL || (color < 0 && color != NCCL_SPLIT_NOCOLOR))
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid split arguments");
	if (comm->nranks != 1)
		return nc_fail(ncclInvalidUsage, "fake NCCL: split needs a one-rank communicator");
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	return comm_new(newcomm, 1, 0, comm->device);
}

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
	return comm_ok(comm) ? ncclSuccess : nc_fail(ncclInvalidArgument, "fake NCCL: invalid communicator");
}

static ncclResult_t comm_free(ncclComm_t comm)
{
	if (comm == NULL)
		return ncclSuccess;
	if (!comm_ok(comm))
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid communicator");
	comm->magic = 0;
	free(comm);
	return ncclSuccess;
}

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
	return comm_free(comm);
}

ncclResult_t pncclCommAbort(ncclComm_t comm)
{
	return comm_free(comm);
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
	if (!comm_ok(comm) || asyncError == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid arguments");
	*asyncError = ncclSuccess;
	return ncclSuccess;
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm_ok(comm) || count == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid arguments");
	*count = comm->nranks;
	return ncclSuccess;
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!comm_ok(comm) || device == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid arguments");
	*device = comm->device;
	return ncclSuccess;
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm_ok(comm) || rank == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid arguments");
	*rank = comm->rank;
	return ncclSuccess;
}

/* ---- collectives ---- */

/* NCCL's argument checks, in its order; op < 0 means the collective takes none, root < 0 likewise. */
static ncclResult_t coll_check(ncclComm_t comm, const void *sendbuff, const void *recvbuff, size_t count,
			       ncclDataType_t datatype, int op, int root, cudaStream_t stream)
{
	if (comm == NULL)
		return nc_fail(ncclInvalidArgument, "fake NCCL: comm is NULL");
	if (!comm_ok(comm))
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid communicator");
	if (root >= 0 && root >= comm->nranks)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	if ((int)datatype < 0 || datatype >= ncclNumTypes)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid type %d", (int)datatype);
	if (op != -1 && (op < 0 || op >= ncclNumOps))
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid reduction operation %d", op);
	if (count > 0 && (sendbuff == NULL || recvbuff == NULL))
		return nc_fail(ncclInvalidArgument, "fake NCCL: NULL buffer");
	if (fakegpu_stream_check(stream) != cudaSuccess)
		return nc_fail(ncclUnhandledCudaError, "fake NCCL: invalid stream");
	if (comm->nranks != 1)
		return nc_fail(ncclInvalidUsage, "fake NCCL: collectives run on one-rank communicators only");
	return ncclSuccess;
}

/* NCCL's device kernels are C++ functions of one argument, so CUPTI gives their mangled names:
 * _Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE (NCCL 2.30's strings). */
#define NC_KERNEL_ARGS "24ncclDevKernelArgsStorageILm4096EE"
#define NC_SENDRECV "_Z22ncclDevKernel_SendRecv" NC_KERNEL_ARGS

/* The kernel NCCL would run for collective coll ("AllReduce") with reduction op (-1: none) on datatype, named
 * as NCCL names its device kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL, mangled), into buf. */
static const char *kernel_name(char *buf, size_t len, const char *coll, int op, ncclDataType_t datatype)
{
	char base[96];

	static const char *const types[] = { "i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16",
					     "f8e4m3", "f8e5m2" };
	const char *type = (unsigned int)datatype < sizeof(types) / sizeof(types[0]) ? types[datatype] : "u8";
	int is_float = datatype >= ncclFloat16;
	const char *opname;

	switch (op) {
	case -1:
		snprintf(base, sizeof(base), "ncclDevKernel_%s_RING_LL", coll);
		snprintf(buf, len, "_Z%zu%s" NC_KERNEL_ARGS, strlen(base), base);
		return buf;
	case ncclSum: opname = "Sum"; break;
	case ncclProd: opname = "Prod"; break;
	case ncclMax: case ncclMin: opname = "MinMax"; break;
	case ncclAvg: opname = is_float ? "PreMulSum" : "SumPostDiv"; break;
	default: opname = "PreMulSum"; break; /* ncclRedOpCreatePreMulSum's */
	}
	snprintf(base, sizeof(base), "ncclDevKernel_%s_%s_%s_RING_LL", coll, opname, type);
	snprintf(buf, len, "_Z%zu%s" NC_KERNEL_ARGS, strlen(base), base);
	return buf;
}

/* With one rank, every collective leaves the send buffer's count elements in the receive buffer, in the
 * kernel named kernel. */
static ncclResult_t coll_move(ncclComm_t comm, const void *sendbuff, void *recvbuff, size_t count,
			      ncclDataType_t datatype, int op, int root, cudaStream_t stream, const char *kernel)
{
	ncclResult_t r = coll_check(comm, sendbuff, recvbuff, count, datatype, op, root, stream);
	size_t bytes;

	if (r != ncclSuccess)
		return r;
	bytes = count * nc_type_size(datatype);
	if (bytes > 0 && sendbuff != recvbuff)
		memmove(recvbuff, sendbuff, bytes);
	return nc_time(stream, bytes, kernel);
}

/* A collective with a kernel of its own (ncclDevKernel_AllReduce_Sum_f32_RING_LL, mangled). */
static ncclResult_t coll_run(ncclComm_t comm, const void *sendbuff, void *recvbuff, size_t count,
			     ncclDataType_t datatype, int op, int root, cudaStream_t stream, const char *coll)
{
	char name[128];

	return coll_move(comm, sendbuff, recvbuff, count, datatype, op, root, stream,
			 kernel_name(name, sizeof(name), coll, op, datatype));
}

ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
			    ncclComm_t comm, cudaStream_t stream)
{
	return coll_run(comm, sendbuff, recvbuff, count, datatype, (int)op, -1, stream, "AllReduce");
}

ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			    ncclComm_t comm, cudaStream_t stream)
{
	if (root < 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	return coll_run(comm, sendbuff, recvbuff, count, datatype, -1, root, stream, "Broadcast");
}

ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
			cudaStream_t stream)
{
	if (root < 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	return coll_run(comm, buff, buff, count, datatype, -1, root, stream, "Broadcast");
}

ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
			 int root, ncclComm_t comm, cudaStream_t stream)
{
	if (root < 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	return coll_run(comm, sendbuff, recvbuff, count, datatype, (int)op, root, stream, "Reduce");
}

ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
			    ncclComm_t comm, cudaStream_t stream)
{
	return coll_run(comm, sendbuff, recvbuff, sendcount, datatype, -1, -1, stream, "AllGather");
}

ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
				ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return coll_run(comm, sendbuff, recvbuff, recvcount, datatype, (int)op, -1, stream, "ReduceScatter");
}

/* NCCL 2.28's all-to-all, gather and scatter are grouped sends and receives: they run its SendRecv kernel. */
ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
			   cudaStream_t stream)
{
	return coll_move(comm, sendbuff, recvbuff, count, datatype, -1, -1, stream, NC_SENDRECV);
}

ncclResult_t pncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			 ncclComm_t comm, cudaStream_t stream)
{
	if (root < 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	return coll_move(comm, sendbuff, recvbuff, count, datatype, -1, root, stream, NC_SENDRECV);
}

ncclResult_t pncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			  ncclComm_t comm, cudaStream_t stream)
{
	if (root < 0)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid root %d", root);
	return coll_move(comm, sendbuff, recvbuff, count, datatype, -1, root, stream, NC_SENDRECV);
}

/* ---- point to point ---- */

/* Completes a send with its receive: the data moves, and the time goes on the receive's stream (and the
 * send's, when it is another). */
static ncclResult_t p2p_complete(const struct nc_p2p *s, const struct nc_p2p *r)
{
	size_t bytes = r->count * nc_type_size(r->datatype);
	ncclResult_t res;

	if (bytes > 0 && s->sendbuff != r->recvbuff)
		memmove(r->recvbuff, s->sendbuff, bytes);
	res = nc_time(r->stream, bytes, NC_SENDRECV);
	if (res == ncclSuccess && s->stream != r->stream)
		res = nc_time(s->stream, bytes, NC_SENDRECV);
	return res;
}

static ncclResult_t p2p_post(int is_send, const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			     int peer, ncclComm_t comm, cudaStream_t stream)
{
	struct nc_p2p op = { .is_send = is_send, .sendbuff = sendbuff, .recvbuff = recvbuff, .count = count,
			     .datatype = datatype, .peer = peer, .comm = comm, .stream = stream };
	ncclResult_t r = coll_check(comm, is_send ? sendbuff : recvbuff, is_send ? sendbuff : recvbuff, count, datatype,
				    -1, -1, stream);

	if (r != ncclSuccess)
		return r;
	if (peer < 0 || peer >= comm->nranks)
		return nc_fail(ncclInvalidArgument, "fake NCCL: invalid peer %d", peer);
	for (size_t i = 0; i < t_npending; i++) {
		struct nc_p2p *o = &t_pending[i];

		if (o->is_send != is_send && o->comm == comm && o->peer == peer && o->count == count &&
		    o->datatype == datatype) {
			struct nc_p2p other = *o;

			t_pending[i] = t_pending[--t_npending];
			return is_send ? p2p_complete(&op, &other) : p2p_complete(&other, &op);
		}
	}
	if (t_group_depth == 0)
		return nc_fail(ncclInvalidUsage, "fake NCCL: a %s with oneself needs its other half in the same group",
			       is_send ? "send" : "receive");
	if (t_npending == t_cap_pending) {
		size_t cap = t_cap_pending ? t_cap_pending * 2 : 8;
		struct nc_p2p *n = realloc(t_pending, cap * sizeof(*n));

		if (n == NULL)
			return nc_fail(ncclSystemError, "fake NCCL: out of memory");
		t_pending = n;
		t_cap_pending = cap;
	}
	t_pending[t_npending++] = op;
	return ncclSuccess;
}

ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
		       cudaStream_t stream)
{
	return p2p_post(1, sendbuff, NULL, count, datatype, peer, comm, stream);
}

ncclResult_t pncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
		       cudaStream_t stream)
{
	return p2p_post(0, NULL, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t pncclGroupStart(void)
{
	t_group_depth++;
	return ncclSuccess;
}

/* The outermost ncclGroupEnd fails (ncclInvalidUsage) when a send or receive is left without its other half:
 * NCCL would wait for it forever. */
ncclResult_t pncclGroupEnd(void)
{
	if (t_group_depth == 0)
		return nc_fail(ncclInvalidUsage, "fake NCCL: ncclGroupEnd without ncclGroupStart");
	if (--t_group_depth > 0)
		return ncclSuccess;
	if (t_npending > 0) {
		size_t n = t_npending;

		t_npending = 0;
		t_ndeferred = 0;
		return nc_fail(ncclInvalidUsage, "fake NCCL: %zu send/receive operations without their other half", n);
	}
	for (size_t i = 0; i < t_ndeferred; i++)
		if (fakegpu_enqueue_named(t_deferred[i].stream, t_deferred[i].ns, t_deferred[i].name) != cudaSuccess) {
			t_ndeferred = 0;
			return nc_fail(ncclUnhandledCudaError, "fake NCCL: invalid stream");
		}
	t_ndeferred = 0;
	return ncclSuccess;
}

/* The public names, weak aliases of the p-prefixed definitions as in NVIDIA's library. */
#define NC_ALIAS(name) extern __typeof__(p##name) name __attribute__((weak, alias("p" #name)));
NC_ALIAS(ncclGetVersion)
NC_ALIAS(ncclGetUniqueId)
NC_ALIAS(ncclGetErrorString)
NC_ALIAS(ncclGetLastError)
NC_ALIAS(ncclCommInitRank)
NC_ALIAS(ncclCommInitRankConfig)
NC_ALIAS(ncclCommInitAll)
NC_ALIAS(ncclCommSplit)
NC_ALIAS(ncclCommFinalize)
NC_ALIAS(ncclCommDestroy)
NC_ALIAS(ncclCommAbort)
NC_ALIAS(ncclCommGetAsyncError)
NC_ALIAS(ncclCommCount)
NC_ALIAS(ncclCommCuDevice)
NC_ALIAS(ncclCommUserRank)
NC_ALIAS(ncclAllReduce)
NC_ALIAS(ncclBroadcast)
NC_ALIAS(ncclBcast)
NC_ALIAS(ncclReduce)
NC_ALIAS(ncclAllGather)
NC_ALIAS(ncclReduceScatter)
NC_ALIAS(ncclAlltoAll)
NC_ALIAS(ncclGather)
NC_ALIAS(ncclScatter)
NC_ALIAS(ncclSend)
NC_ALIAS(ncclRecv)
NC_ALIAS(ncclGroupStart)
NC_ALIAS(ncclGroupEnd)
