/* NCCL: collectives and point-to-point calls with element count, data type, reduction, root or peer, and
 * the communicator's size and this process's rank in it (asked of NCCL, which only reads them from the
 * communicator); communicator set-up and groups. */
#define _GNU_SOURCE
#include <nccl.h>

#include "pw_gpu.h"

/* ncclInProgress is how a non-blocking communicator answers: not a failure. */
#define PW_NCCL(ev, name, params, args, ...)                                                              \
	PW_GPU_WRAP(NCCL, ncclResult_t, ncclSystemError, NCCL, ev, 0, name, params, args,                 \
		    if (ret == ncclInProgress) r.c.h.err = 0;                                             \
		    __VA_ARGS__)

PW_GPU_HELPER(NCCL, ncclResult_t, ncclCommCount, (const ncclComm_t, int *));
PW_GPU_HELPER(NCCL, ncclResult_t, ncclCommUserRank, (const ncclComm_t, int *));

/* A communicator with its size and this rank in it, as far as NCCL says. */
static struct pw_nccl comm_info(ncclComm_t comm)
{
	struct pw_nccl info = {.comm = (uint64_t)(uintptr_t)comm, .peer = -1};
	int n = 0, rank = 0;
	if (!comm || !real_ncclCommCount || !real_ncclCommUserRank || real_ncclCommCount(comm, &n) != ncclSuccess ||
	    real_ncclCommUserRank(comm, &rank) != ncclSuccess || n <= 0 || rank < 0)
		return info;
	info.nranks = (uint32_t)n;
	info.rank = (uint32_t)rank;
	return info;
}

static void coll_fields(struct pw_rec_api *r, size_t count, ncclDataType_t type, ncclRedOp_t op, int64_t peer,
			ncclComm_t comm, cudaStream_t stream)
{
	struct pw_nccl info = comm_info(comm);
	info.peer = peer;
	info.dtype = (uint8_t)type;
	info.op = (uint8_t)op;
	pw_put_nccl(r, info);
	r->c.arg0 = count;
	r->stream = (uint64_t)(uintptr_t)stream;
	if (pw_self.nccl_group_ext)
		r->corr = pw_self.nccl_group_ext; /* its work is launched by the group's end */
}

#define NO_OP ncclSum /* collectives without a reduction: the field is left at 0 */

PW_NCCL(NCCL_ALL_REDUCE, ncclAllReduce,
	(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, op, comm, stream), coll_fields(&r, count, type, op, -1, comm, stream))

PW_NCCL(NCCL_BROADCAST, ncclBroadcast,
	(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, root, comm, stream), coll_fields(&r, count, type, NO_OP, root, comm, stream))

/* NCCL's legacy broadcast, in place: the root's buffer is the others' receive buffer. */
PW_NCCL(NCCL_BCAST, ncclBcast,
	(void *buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm, cudaStream_t stream),
	(buff, count, type, root, comm, stream), coll_fields(&r, count, type, NO_OP, root, comm, stream))

PW_NCCL(NCCL_REDUCE, ncclReduce,
	(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, op, root, comm, stream), coll_fields(&r, count, type, op, root, comm, stream))

PW_NCCL(NCCL_ALL_GATHER, ncclAllGather,
	(const void *send, void *recv, size_t count, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream),
	(send, recv, count, type, comm, stream), coll_fields(&r, count, type, NO_OP, -1, comm, stream))

PW_NCCL(NCCL_REDUCE_SCATTER, ncclReduceScatter,
	(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, op, comm, stream), coll_fields(&r, count, type, op, -1, comm, stream))

PW_NCCL(NCCL_SEND, ncclSend,
	(const void *send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream),
	(send, count, type, peer, comm, stream), coll_fields(&r, count, type, NO_OP, peer, comm, stream))

PW_NCCL(NCCL_RECV, ncclRecv,
	(void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream),
	(recv, count, type, peer, comm, stream), coll_fields(&r, count, type, NO_OP, peer, comm, stream))

PW_NCCL(NCCL_ALL_TO_ALL, ncclAlltoAll,
	(const void *send, void *recv, size_t count, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream),
	(send, recv, count, type, comm, stream), coll_fields(&r, count, type, NO_OP, -1, comm, stream))

PW_NCCL(NCCL_GATHER, ncclGather,
	(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, root, comm, stream), coll_fields(&r, count, type, NO_OP, root, comm, stream))

PW_NCCL(NCCL_SCATTER, ncclScatter,
	(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
	 cudaStream_t stream),
	(send, recv, count, type, root, comm, stream), coll_fields(&r, count, type, NO_OP, root, comm, stream))

/* Groups: NCCL enqueues the work of the calls between the outermost ncclGroupStart and ncclGroupEnd (batched
 * send/recv, all-to-all, coalesced collectives) inside ncclGroupEnd. One external id is pushed at the start
 * and popped after the end; the calls of the group carry it (pw_gpu_ext_push pushes none for them), so the
 * kernels that the end launches are tied to the group's collectives. */
static void group_started(struct pw_rec_api *r, ncclResult_t ret)
{
	if (ret != ncclSuccess)
		return;
	if (pw_self.nccl_group_depth++ == 0 && pw_cupti_on())
		pw_self.nccl_group_ext = pw_cupti_push();
	r->corr = pw_self.nccl_group_ext;
}

static void group_end(void)
{
	if (pw_self.nccl_group_depth && --pw_self.nccl_group_depth == 0 && pw_self.nccl_group_ext) {
		pw_cupti_pop();
		pw_self.nccl_group_ext = 0;
	}
}

static void group_ended(struct pw_rec_api *r)
{
	r->corr = pw_self.nccl_group_ext;
	group_end();
}

/* An end that is not recorded (the capture window closed inside the group) ends the group all the same,
 * before the call: its work is not recorded either. */
#define GROUP_END_UNRECORDED()                                                    \
	if (pw_self.nccl_group_depth && !pw_should_record(PW_DOM_NCCL))           \
	group_end()

PW_NCCL(NCCL_GROUP_START, ncclGroupStart, (void), (), group_started(&r, ret))
PW_GPU_WRAP_HOOKED(GROUP_END_UNRECORDED(), NCCL, ncclResult_t, ncclSystemError, NCCL, NCCL_GROUP_END, 0, ncclGroupEnd,
		   (void), (), if (ret == ncclInProgress) r.c.h.err = 0;
		   group_ended(&r))

/* The communicator a set-up call made, read only when it succeeded. */
static void comm_made(struct pw_rec_api *r, ncclResult_t ret, const ncclComm_t *comm)
{
	if ((ret != ncclSuccess && ret != ncclInProgress) || !comm)
		return;
	pw_put_nccl(r, comm_info(*comm));
}

PW_NCCL(NCCL_COMM_INIT_RANK, ncclCommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank),
	(comm, nranks, id, rank), comm_made(&r, ret, comm))

PW_NCCL(NCCL_COMM_INIT_RANK_CONFIG, ncclCommInitRankConfig,
	(ncclComm_t * comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config),
	(comm, nranks, id, rank, config), comm_made(&r, ret, comm))

PW_NCCL(NCCL_COMM_INIT_ALL, ncclCommInitAll, (ncclComm_t * comms, int ndev, const int *devices), (comms, ndev, devices),
	comm_made(&r, ret, ndev > 0 ? comms : NULL))

PW_NCCL(NCCL_COMM_SPLIT, ncclCommSplit, (ncclComm_t comm, int color, int key, ncclComm_t *made, ncclConfig_t *config),
	(comm, color, key, made, config), comm_made(&r, ret, made))

PW_NCCL(NCCL_COMM_DESTROY, ncclCommDestroy, (ncclComm_t comm), (comm),
	pw_put_nccl(&r, (struct pw_nccl){.comm = (uint64_t)(uintptr_t)comm, .peer = -1}))
PW_NCCL(NCCL_COMM_ABORT, ncclCommAbort, (ncclComm_t comm), (comm),
	pw_put_nccl(&r, (struct pw_nccl){.comm = (uint64_t)(uintptr_t)comm, .peer = -1}))
