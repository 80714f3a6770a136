/* MPI: initialisation (the process's rank and world size), collectives with the bytes this rank contributes
 * and the communicator's size, point-to-point calls with bytes and peer, and waits.
 *
 * One libprofwrap.so serves every MPI: no MPI header is included and no MPI library linked. The two ABIs in
 * use differ in their handles and constants:
 *   - OpenMPI: handles are pointers (MPI_Comm is struct ompi_communicator_t *, MPI_COMM_WORLD the address of
 *     ompi_mpi_comm_world);
 *   - the MPICH ABI (MPICH, Intel MPI, MVAPICH): handles are int (MPI_COMM_WORLD is (MPI_Comm)0x44000000).
 * Handle parameters are declared as one pointer-sized opaque type, pw_mpi_h. On x86-64 (System V) and
 * aarch64 (AAPCS64) an int argument travels in a 64-bit register or an 8-byte stack slot, whose upper half
 * the callee ignores, so a wrapper that passes the 64-bit value through unchanged hands the real function
 * exactly what the caller passed. A handle is never compared or printed here, only passed on (to the real
 * function and to the helpers below); the constants that differ are picked once the implementation is known
 * (struct mpi_abi).
 *
 * The real functions are found as the GPU libraries' are (pw_gpu.h: the MPI library loaded late and
 * privately, as mpi4py's extension module loads it, is found too), preferring the profiling interface:
 * PMPI_<name> is called, so that an MPI library whose MPI_<name> calls other MPI_ functions is not
 * counted twice; MPI_<name> of the library only where it has no PMPI_<name>.
 *
 * Nothing here calls MPI before MPI_Init or after MPI_Finalize: the helpers (PMPI_Comm_rank, PMPI_Comm_size,
 * PMPI_Type_size, PMPI_Get_count) are called only in the fill statements of calls that require MPI to be
 * initialised, only when that call succeeded (its arguments are then valid: a helper cannot fail and invoke an
 * error handler that the program's failing call did not), and with the internal guard held. A failed call is
 * recorded with what its arguments give without asking MPI (bytes 0). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "pw_gpu.h"

/* An MPI handle (communicator, datatype) of either ABI: see above. */
typedef struct pw_mpi_opaque *pw_mpi_h;

/* What a wrapper returns when no loaded library defines the function: 16 is MPI_ERR_OTHER in OpenMPI and
 * MPI_ERR_INTERN in MPICH, an error class either way. */
#define PW_MPI_NO_LIBRARY 16

/* The constants that differ between the ABIs. Verified against:
 *   OpenMPI 4.1 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h: MPI_ANY_SOURCE -1, MPI_PROC_NULL -2,
 *     MPI_UNDEFINED -32766, MPI_IN_PLACE ((void *) 1), MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE
 *     ((MPI_Status *) 0), MPI_COMM_WORLD OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world) (its address),
 *     struct ompi_status_public_t {int MPI_SOURCE; int MPI_TAG; int MPI_ERROR; int _cancelled; size_t _ucount;}
 *   MPICH pmodels/mpich src/include/mpi.h.in (MPICH2 1.x to 4.x alike): MPI_PROC_NULL (-1), MPI_ANY_SOURCE
 *     (-2), MPI_UNDEFINED (-32766), MPI_IN_PLACE (void *) -1, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE
 *     (MPI_Status *)1, MPI_COMM_WORLD ((MPI_Comm)0x44000000), typedef struct MPI_Status {int count_lo;
 *     int count_hi_and_cancelled; int MPI_SOURCE; int MPI_TAG; int MPI_ERROR;} (MPICH2: count, cancelled).
 * MPI_UNDEFINED and MPI_SUCCESS (0) are the same in both. */
struct mpi_abi {
	int known;              /* 0: neither ABI; MPI is then asked nothing */
	pw_mpi_h world;         /* MPI_COMM_WORLD (OpenMPI's: ompi_world) */
	const void *in_place;   /* MPI_IN_PLACE */
	const void *status_ignore; /* MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE */
	int any_source;         /* MPI_ANY_SOURCE */
	int proc_null;          /* MPI_PROC_NULL */
	int source_index;       /* MPI_SOURCE in MPI_Status, in ints */
};
#define MPI_UNDEFINED_ (-32766)

/* ---- the real functions ---- */

/* MPI_<name>'s real function: PMPI_<name> and, where a library lacks it, MPI_<name>, both taken from the
 * MPI library (wrapper: the preload's definition of MPI_<name>, NULL for a function only called here). */
#define PW_MPI_REAL(name, params, wrapper)        \
	static int(*real_PMPI_##name) params;     \
	static int(*real_MPI_##name) params;      \
	PW_GPU_SLOT(MPI, PMPI_##name, NULL);      \
	PW_GPU_SLOT(MPI, MPI_##name, wrapper)

/* The function to call: PMPI_<name> when the library has it. */
#define PW_MPI_FN(name) (real_PMPI_##name ? real_PMPI_##name : real_MPI_##name)

PW_MPI_REAL(Comm_rank, (pw_mpi_h, int *), NULL);
PW_MPI_REAL(Comm_size, (pw_mpi_h, int *), NULL);
PW_MPI_REAL(Type_size, (pw_mpi_h, int *), NULL);
PW_MPI_REAL(Get_count, (const void *, pw_mpi_h, int *), NULL);

/* The loader's dlopen, called directly (through this library's export it would be recorded). */
PW_REAL(void *, dlopen, (const char *, int));
PW_REAL(int, dlclose, (void *));

static const struct mpi_abi abi_ompi = {1, NULL, (const void *)1, NULL, -1, -2, 0};
static const struct mpi_abi abi_mpich = {1, (pw_mpi_h)(uintptr_t)0x44000000, (const void *)-1, (const void *)1,
					 -2, -1, 2};
static const struct mpi_abi abi_unknown = {0, NULL, NULL, NULL, 0, 0, 0};
static void *ompi_world;          /* OpenMPI's MPI_COMM_WORLD, stored before abi */
static const struct mpi_abi *abi; /* NULL until detected */

/* sym in the global scope, else in the library that holds fn (NULL: neither defines it). The global scope
 * comes first: a program that names MPI_COMM_WORLD has its own copy of ompi_mpi_comm_world (a copy
 * relocation), which is the one MPI uses, and the library's is then never initialised. A library loaded
 * privately (mpi4py) is not in that scope, and no program has a copy of its symbols. */
static void *mpi_symbol(const char *sym, const char *lib_path)
{
	void *p = dlsym(RTLD_DEFAULT, sym);
	if (!p && lib_path) {
		void *h = real_dlopen(lib_path[0] ? lib_path : NULL, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = dlsym(h, sym);
			real_dlclose(h);
		}
	}
	if (!p)
		dlerror(); /* our failed lookup is not the program's error */
	return p;
}

/* Detects the implementation once, from the library that holds fn (a real MPI function the program called):
 * OpenMPI when ompi_mpi_comm_world is defined, the MPICH ABI when MPIR_Dup_fn is (every MPICH-derived mpi.h
 * names it in MPI_DUP_FN, so every library of that ABI defines it). Anything else, and the MPI 5 standard ABI
 * (libmpi_abi.so, whose handles are neither), is unknown: its calls are timed, and MPI is asked nothing.
 * Threads that detect at the same time store the same values. Guard held. */
static const struct mpi_abi *mpi_abi_of(void *fn)
{
	const struct mpi_abi *a = __atomic_load_n(&abi, __ATOMIC_ACQUIRE);
	if (PW_LIKELY(a))
		return a;
	PW_RESOLVE(dlopen);
	PW_RESOLVE(dlclose);
	Dl_info info;
	const char *lib = fn && dladdr(fn, &info) ? info.dli_fname : NULL;
	const char *base = lib ? strrchr(lib, '/') : NULL;
	base = base ? base + 1 : lib;
	void *world = NULL;
	if (base && strncmp(base, "libmpi_abi.", 11) == 0)
		a = &abi_unknown;
	else if ((world = mpi_symbol("ompi_mpi_comm_world", lib)) != NULL)
		a = &abi_ompi;
	else if (mpi_symbol("MPIR_Dup_fn", lib))
		a = &abi_mpich;
	else
		a = &abi_unknown;
	if (world)
		__atomic_store_n(&ompi_world, world, __ATOMIC_RELAXED);
	__atomic_store_n(&abi, a, __ATOMIC_RELEASE); /* publishes ompi_world too */
	return a;
}

static pw_mpi_h comm_world(const struct mpi_abi *mpi)
{
	return mpi->world ? mpi->world : (pw_mpi_h)__atomic_load_n(&ompi_world, __ATOMIC_RELAXED);
}

/* ---- what the fill statements ask MPI (guard held, the call succeeded) ---- */

/* count elements of type in bytes; 0 when count is 0 (the type is then not looked at: it may be any handle) or
 * the size is unknown. */
static uint64_t type_bytes(int64_t count, pw_mpi_h type)
{
	int size = 0;
	if (count <= 0 || !PW_MPI_FN(Type_size) || PW_MPI_FN(Type_size)(type, &size) != 0 || size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

static int comm_size(pw_mpi_h comm)
{
	int n = 0;
	if (!PW_MPI_FN(Comm_size) || PW_MPI_FN(Comm_size)(comm, &n) != 0 || n < 0)
		return 0;
	return n;
}

static int comm_rank(pw_mpi_h comm)
{
	int r = -1;
	if (!PW_MPI_FN(Comm_rank) || PW_MPI_FN(Comm_rank)(comm, &r) != 0)
		return -1;
	return r;
}

static int64_t sum_counts(const int *counts, int n)
{
	int64_t s = 0;
	for (int i = 0; counts && i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

/* A collective's record: bytes this rank contributes, the communicator's size and the root + 1 (0: none). */
static void coll(struct pw_rec_call *r, int ret, uint64_t bytes, int size, int root)
{
	if (ret != 0)
		bytes = 0;
	r->arg0 = bytes;
	r->arg1 = pw_put_mpi_comm((struct pw_mpi_comm){.size = (uint32_t)size, .root = root});
}

/* ---- the wrapper ---- */

/* The wrapper of MPI_<name>, recording event ev: the variadic part is the statements that fill `r` (struct
 * pw_rec_call: arg0, arg1) from the parameters, `ret` and `mpi` (struct mpi_abi), run with the internal guard
 * held, and only when the ABI is known (MPI_Init's always: it says -1 itself). unrecorded is a statement run
 * after the call when it is not recorded (`ret` is its result). */
#define PW_MPI_WRAP_UNRECORDED(unrecorded, ev, name, params, args, ...)                                   \
	PW_EXPORT int MPI_##name params;                                                                  \
	PW_MPI_REAL(name, params, (void *)MPI_##name);                                                    \
	PW_EXPORT int MPI_##name params                                                                   \
	{                                                                                                 \
		if (PW_UNLIKELY(!real_PMPI_##name && !real_MPI_##name) &&                                 \
		    pw_gpu_resolve(&pw_gpu_slot_MPI_##name) < 0)                                          \
			return PW_MPI_NO_LIBRARY;                                                         \
		int (*fn_) params = PW_MPI_FN(name);                                                      \
		if (!pw_should_record(PW_DOM_MPI)) {                                                      \
			int ret = fn_ args;                                                               \
			unrecorded;                                                                       \
			return ret;                                                                       \
		}                                                                                         \
		struct pw_rec_call r;                                                                     \
		r.t0 = pw_clock_ticks();                                                                  \
		int ret = fn_ args;                                                                       \
		r.t1 = pw_clock_ticks();                                                                  \
		struct pw_guarded was_ = pw_guard_enter(PW_GUARD_INTERNAL);                               \
		r.h.type = PW_EV_##ev;                                                                    \
		r.h.size8 = sizeof r / 8;                                                                 \
		r.h.err = ret ? PW_ERR_NO_ERRNO : 0;                                                      \
		r.h.tid = 0;                                                                              \
		r.ret = ret;                                                                              \
		r.arg0 = 0;                                                                               \
		r.arg1 = 0;                                                                               \
		const struct mpi_abi *mpi = mpi_abi_of((void *)fn_);                                      \
		if (mpi->known || (int)PW_EVKIND_##ev == (int)PW_K_MPI_INIT) {                            \
			__VA_ARGS__;                                                                      \
		}                                                                                         \
		pw_record_done(&r, sizeof r, pw_call_wants_stack(r.t0, r.t1), was_);                      \
		return ret;                                                                               \
	}

#define PW_MPI_WRAP(ev, name, params, args, ...) PW_MPI_WRAP_UNRECORDED((void)0, ev, name, params, args, __VA_ARGS__)

/* ---- initialisation ---- */

/* After a successful MPI_Init/MPI_Init_thread: the rank and size of MPI_COMM_WORLD, which become the
 * process's (pw_process_set_rank); -1 and 0 when the call failed or the ABI is unknown. Guard held. */
static void init_fields(struct pw_rec_call *r, int ret, void *fn)
{
	int rank = -1, size = 0;
	const struct mpi_abi *mpi = mpi_abi_of(fn);
	if (ret == 0 && mpi->known) {
		rank = comm_rank(comm_world(mpi));
		size = comm_size(comm_world(mpi));
		pw_process_set_rank(rank, size);
	}
	r->arg0 = (uint64_t)(int64_t)rank;
	r->arg1 = (uint64_t)size;
}

/* The same when the call is not recorded (another domain, the window closed): the process still takes
 * MPI's rank, if it is profiled at all (a passive preload asks MPI nothing). */
static void init_unrecorded(int ret, void *fn)
{
	if (ret != 0 || !pw_seg || pw_self.guard)
		return;
	struct pw_guarded guard = pw_guard_enter(PW_GUARD_INTERNAL);
	struct pw_rec_call r;
	init_fields(&r, ret, fn);
	pw_guard_leave(guard);
}

PW_MPI_WRAP_UNRECORDED(init_unrecorded(ret, (void *)fn_), MPI_INIT, Init, (int *argc, char ***argv), (argc, argv),
		       init_fields(&r, ret, (void *)fn_))
PW_MPI_WRAP_UNRECORDED(init_unrecorded(ret, (void *)fn_), MPI_INIT_THREAD, Init_thread,
		       (int *argc, char ***argv, int required, int *provided), (argc, argv, required, provided),
		       init_fields(&r, ret, (void *)fn_))
PW_MPI_WRAP(MPI_FINALIZE, Finalize, (void), (), (void)0)

/* ---- collectives ---- */

#define IN_PLACE(buf) ((const void *)(buf) == mpi->in_place)
#define SIZE(comm) (ret == 0 ? comm_size(comm) : 0)

PW_MPI_WRAP(MPI_BARRIER, Barrier, (pw_mpi_h comm), (comm), coll(&r, ret, 0, SIZE(comm), -1))

PW_MPI_WRAP(MPI_BCAST, Bcast, (void *buf, int count, pw_mpi_h type, int root, pw_mpi_h comm),
	    (buf, count, type, root, comm), coll(&r, ret, type_bytes(count, type), SIZE(comm), root))

PW_MPI_WRAP(MPI_REDUCE, Reduce,
	    (const void *send, void *recv, int count, pw_mpi_h type, pw_mpi_h op, int root, pw_mpi_h comm),
	    (send, recv, count, type, op, root, comm), coll(&r, ret, type_bytes(count, type), SIZE(comm), root))

PW_MPI_WRAP(MPI_ALLREDUCE, Allreduce,
	    (const void *send, void *recv, int count, pw_mpi_h type, pw_mpi_h op, pw_mpi_h comm),
	    (send, recv, count, type, op, comm), coll(&r, ret, type_bytes(count, type), SIZE(comm), -1))

PW_MPI_WRAP(MPI_SCAN, Scan, (const void *send, void *recv, int count, pw_mpi_h type, pw_mpi_h op, pw_mpi_h comm),
	    (send, recv, count, type, op, comm), coll(&r, ret, type_bytes(count, type), SIZE(comm), -1))

/* In place, a rank's contribution is already in the receive buffer: its own block. */
PW_MPI_WRAP(MPI_ALLGATHER, Allgather,
	    (const void *send, int scount, pw_mpi_h stype, void *recv, int rcount, pw_mpi_h rtype, pw_mpi_h comm),
	    (send, scount, stype, recv, rcount, rtype, comm),
	    coll(&r, ret, IN_PLACE(send) ? type_bytes(rcount, rtype) : type_bytes(scount, stype), SIZE(comm), -1))

static uint64_t allgatherv_bytes(const struct mpi_abi *mpi, int ret, const void *send, int scount, pw_mpi_h stype,
				 const int *rcounts, pw_mpi_h rtype, pw_mpi_h comm)
{
	if (ret != 0)
		return 0;
	if (!IN_PLACE(send))
		return type_bytes(scount, stype);
	int me = comm_rank(comm);
	return me >= 0 && rcounts ? type_bytes(rcounts[me], rtype) : 0;
}

PW_MPI_WRAP(MPI_ALLGATHERV, Allgatherv,
	    (const void *send, int scount, pw_mpi_h stype, void *recv, const int *rcounts, const int *displs,
	     pw_mpi_h rtype, pw_mpi_h comm),
	    (send, scount, stype, recv, rcounts, displs, rtype, comm),
	    coll(&r, ret, allgatherv_bytes(mpi, ret, send, scount, stype, rcounts, rtype, comm), SIZE(comm), -1))

/* What a rank sends to all ranks, itself included. */
static void alltoall_fields(struct pw_rec_call *r, const struct mpi_abi *mpi, int ret, const void *send, int scount,
			    pw_mpi_h stype, int rcount, pw_mpi_h rtype, pw_mpi_h comm)
{
	int n = SIZE(comm);
	uint64_t block = IN_PLACE(send) ? type_bytes(rcount, rtype) : type_bytes(scount, stype);
	coll(r, ret, ret == 0 ? block * (uint64_t)n : 0, n, -1);
}

PW_MPI_WRAP(MPI_ALLTOALL, Alltoall,
	    (const void *send, int scount, pw_mpi_h stype, void *recv, int rcount, pw_mpi_h rtype, pw_mpi_h comm),
	    (send, scount, stype, recv, rcount, rtype, comm),
	    alltoall_fields(&r, mpi, ret, send, scount, stype, rcount, rtype, comm))

static void alltoallv_fields(struct pw_rec_call *r, const struct mpi_abi *mpi, int ret, const void *send,
			     const int *scounts, pw_mpi_h stype, const int *rcounts, pw_mpi_h rtype, pw_mpi_h comm)
{
	int n = SIZE(comm);
	uint64_t bytes = 0;
	if (ret == 0)
		bytes = IN_PLACE(send) ? type_bytes(sum_counts(rcounts, n), rtype)
				       : type_bytes(sum_counts(scounts, n), stype);
	coll(r, ret, bytes, n, -1);
}

PW_MPI_WRAP(MPI_ALLTOALLV, Alltoallv,
	    (const void *send, const int *scounts, const int *sdispls, pw_mpi_h stype, void *recv, const int *rcounts,
	     const int *rdispls, pw_mpi_h rtype, pw_mpi_h comm),
	    (send, scounts, sdispls, stype, recv, rcounts, rdispls, rtype, comm),
	    alltoallv_fields(&r, mpi, ret, send, scounts, stype, rcounts, rtype, comm))

/* A rank contributes the whole vector that is reduced and scattered. */
static void reduce_scatter_fields(struct pw_rec_call *r, int ret, const int *rcounts, pw_mpi_h type, pw_mpi_h comm)
{
	int n = SIZE(comm);
	coll(r, ret, ret == 0 ? type_bytes(sum_counts(rcounts, n), type) : 0, n, -1);
}

PW_MPI_WRAP(MPI_REDUCE_SCATTER, Reduce_scatter,
	    (const void *send, void *recv, const int *rcounts, pw_mpi_h type, pw_mpi_h op, pw_mpi_h comm),
	    (send, recv, rcounts, type, op, comm), reduce_scatter_fields(&r, ret, rcounts, type, comm))

static void reduce_scatter_block_fields(struct pw_rec_call *r, int ret, int rcount, pw_mpi_h type, pw_mpi_h comm)
{
	int n = SIZE(comm);
	coll(r, ret, ret == 0 ? type_bytes(rcount, type) * (uint64_t)n : 0, n, -1);
}

PW_MPI_WRAP(MPI_REDUCE_SCATTER_BLOCK, Reduce_scatter_block,
	    (const void *send, void *recv, int rcount, pw_mpi_h type, pw_mpi_h op, pw_mpi_h comm),
	    (send, recv, rcount, type, op, comm), reduce_scatter_block_fields(&r, ret, rcount, type, comm))

/* ---- point-to-point ---- */

/* A rank as a record's peer: -1 for MPI_ANY_SOURCE and MPI_PROC_NULL (no rank). */
static int64_t peer_of(const struct mpi_abi *mpi, int rank)
{
	return rank == mpi->any_source || rank == mpi->proc_null ? -1 : rank;
}

static void p2p(struct pw_rec_call *r, int ret, uint64_t bytes, int64_t peer)
{
	r->arg0 = ret == 0 ? bytes : 0;
	r->arg1 = (uint64_t)peer;
}

static uint64_t send_bytes(const struct mpi_abi *mpi, int count, pw_mpi_h type, int dest)
{
	return dest == mpi->proc_null ? 0 : type_bytes(count, type);
}

/* A finished receive: the bytes received and the actual source, from the status when the caller passed one,
 * else the buffer's size and the source argument. */
static void recv_info(const struct mpi_abi *mpi, const void *status, int count, pw_mpi_h type, int source,
		      uint64_t *bytes, int64_t *peer)
{
	*peer = peer_of(mpi, source);
	if (source == mpi->proc_null || count <= 0) {
		*bytes = 0;
		return;
	}
	*bytes = type_bytes(count, type);
	if (!status || status == mpi->status_ignore)
		return;
	*peer = peer_of(mpi, ((const int *)status)[mpi->source_index]);
	int got = 0;
	if (PW_MPI_FN(Get_count) && PW_MPI_FN(Get_count)(status, type, &got) == 0 && got != MPI_UNDEFINED_ &&
	    got >= 0)
		*bytes = type_bytes(got, type); /* MPI_UNDEFINED: not whole elements; the buffer's size stays */
}

#define SEND_FIELDS(count, type, dest) p2p(&r, ret, send_bytes(mpi, count, type, dest), peer_of(mpi, dest))

PW_MPI_WRAP(MPI_SEND, Send, (const void *buf, int count, pw_mpi_h type, int dest, int tag, pw_mpi_h comm),
	    (buf, count, type, dest, tag, comm), SEND_FIELDS(count, type, dest))

PW_MPI_WRAP(MPI_ISEND, Isend,
	    (const void *buf, int count, pw_mpi_h type, int dest, int tag, pw_mpi_h comm, void *request),
	    (buf, count, type, dest, tag, comm, request), SEND_FIELDS(count, type, dest))

static void recv_fields(struct pw_rec_call *r, const struct mpi_abi *mpi, int ret, const void *status, int count,
			pw_mpi_h type, int source)
{
	uint64_t bytes = 0;
	int64_t peer = peer_of(mpi, source);
	if (ret == 0)
		recv_info(mpi, status, count, type, source, &bytes, &peer);
	p2p(r, ret, bytes, peer);
}

PW_MPI_WRAP(MPI_RECV, Recv,
	    (void *buf, int count, pw_mpi_h type, int source, int tag, pw_mpi_h comm, void *status),
	    (buf, count, type, source, tag, comm, status), recv_fields(&r, mpi, ret, status, count, type, source))

/* Nothing is received yet: the buffer's size, and the source asked for. */
PW_MPI_WRAP(MPI_IRECV, Irecv,
	    (void *buf, int count, pw_mpi_h type, int source, int tag, pw_mpi_h comm, void *request),
	    (buf, count, type, source, tag, comm, request),
	    recv_fields(&r, mpi, ret, mpi->status_ignore, count, type, source))

static void sendrecv_fields(struct pw_rec_call *r, const struct mpi_abi *mpi, int ret, int scount, pw_mpi_h stype,
			    int dest, int rcount, pw_mpi_h rtype, int source, const void *status)
{
	uint64_t received = 0;
	int64_t from = 0;
	if (ret == 0)
		recv_info(mpi, status, rcount, rtype, source, &received, &from);
	p2p(r, ret, ret == 0 ? send_bytes(mpi, scount, stype, dest) + received : 0, peer_of(mpi, dest));
}

PW_MPI_WRAP(MPI_SENDRECV, Sendrecv,
	    (const void *sbuf, int scount, pw_mpi_h stype, int dest, int stag, void *rbuf, int rcount, pw_mpi_h rtype,
	     int source, int rtag, pw_mpi_h comm, void *status),
	    (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status),
	    sendrecv_fields(&r, mpi, ret, scount, stype, dest, rcount, rtype, source, status))

/* ---- completion ---- */

PW_MPI_WRAP(MPI_WAIT, Wait, (void *request, void *status), (request, status), r.arg0 = 1, r.arg1 = (uint64_t)-1)

PW_MPI_WRAP(MPI_WAITALL, Waitall, (int count, void *requests, void *statuses), (count, requests, statuses),
	    r.arg0 = (uint64_t)(count > 0 ? count : 0), r.arg1 = (uint64_t)-1)

/* index is MPI_UNDEFINED when every request was inactive. */
PW_MPI_WRAP(MPI_WAITANY, Waitany, (int count, void *requests, int *index, void *status),
	    (count, requests, index, status), r.arg0 = (uint64_t)(count > 0 ? count : 0),
	    r.arg1 = (uint64_t)(int64_t)(ret == 0 && index && *index != MPI_UNDEFINED_ ? *index : -1))
