/* The GPU part of a rank's model (see gpu_analysis.h). Conventions:
 *
 * - A call "failed" when its record's h.err is set (the preload sets it when the status is a failure).
 *   Failed calls count as calls and their time counts; bytes, FLOPs and live memory come only from
 *   successful ones.
 * - Copies: the direction is the one the call was given; PW_COPY_DEFAULT (cudaMemcpyDefault, the runtime
 *   infers it) is inferred here the same way: an address inside a live device, stream-ordered or managed
 *   allocation of the process is on the device, any other is host memory. For HtoD and DtoH the host side
 *   (src of HtoD, dst of DtoH) is pinned when it falls inside a live cudaMallocHost/cudaHostAlloc/
 *   cudaHostRegister range of the same process, else pageable.
 * - GEMM FLOPs: 2*m*n*k per matrix product (one multiply and one add per term), times the batch count (the
 *   preload records 1 for the calls that take none; a batch of 0 does no work), times 4 for complex data
 *   types (CUDA_C_*): a complex multiply-add is four real multiplies and four real adds. Saturates at
 *   UINT64_MAX.
 * - Collective bytes, as nccl-tests counts them: count x the data type's size, except ncclAllGather (count is
 *   what each rank sends: the received buffer, count x size x nranks) and ncclReduceScatter (count is what
 *   each rank receives: the sent buffer, count x size x nranks); nranks 0 (unknown) is taken as 1. A data
 *   type the table does not know moves 0 bytes.
 */
#define _GNU_SOURCE
#include "gpu_analysis.h"

#include "../../common/pw_session.h"
#include "../lib/hash_index.h"

#include <stdlib.h>
#include <string.h>

#define KERNEL_NAME_MAX 4096 /* bytes of a kernel name kept and compared; longer names are cut */

/* ---- working state ---- */

struct launch_config {
	uint32_t grid[3], block[3];
	uint64_t count;
};

struct pw_gpu_work {
	uint64_t *hist[PW_EV_COUNT]; /* PW_MEDIAN_BUCKETS each, made at the event's first call */
	struct pw_hix gemm_ix, kernel_ix, error_ix, dnn_ix;
	size_t gemms_cap, kernels_cap, errors_cap, dnn_cap, devices_cap, configs_cap, streams_cap;
	struct launch_config (*configs)[PW_GPU_LAUNCH_CONFIGS]; /* parallel to kernels */
	struct pw_keys *streams; /* parallel to devices: the (process, stream) keys each device saw */
};

static struct pw_gpu_report *report_new(void)
{
	struct pw_gpu_report *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->work = calloc(1, sizeof *g->work);
	if (!g->work) {
		free(g);
		return NULL;
	}
	return g;
}

static void work_free(struct pw_gpu_work *w)
{
	if (!w)
		return;
	for (int i = 0; i < PW_EV_COUNT; i++)
		free(w->hist[i]);
	pw_hix_free(&w->gemm_ix);
	pw_hix_free(&w->kernel_ix);
	pw_hix_free(&w->error_ix);
	pw_hix_free(&w->dnn_ix);
	free(w->configs);
	for (size_t i = 0; i < w->streams_cap; i++)
		pw_keys_free(&w->streams[i]);
	free(w->streams);
	free(w);
}

/* ---- medians ---- */

unsigned pw_median_bucket(uint64_t ns)
{
	if (ns < 16)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= 4 */
	unsigned sub = (unsigned)(ns >> (e - 4)) & 15u;
	return 16u + (e - 4) * 16u + sub;
}

uint64_t pw_median_bucket_mid(unsigned b)
{
	if (b < 16)
		return b;
	if (b >= PW_MEDIAN_BUCKETS)
		return UINT64_MAX;
	unsigned e = (b - 16) / 16 + 4, sub = (b - 16) % 16;
	uint64_t lo = (uint64_t)(16 + sub) << (e - 4), width = (uint64_t)1 << (e - 4);
	return lo + width / 2;
}

/* The lower median (the value of rank ceil(count/2)) read from the histogram, kept within [min, max]. */
static uint64_t median_of(const uint64_t *hist, uint64_t count, uint64_t min, uint64_t max)
{
	if (!hist || !count)
		return 0;
	uint64_t want = count / 2 + count % 2, seen = 0;
	uint64_t mid = max;
	for (unsigned b = 0; b < PW_MEDIAN_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want) {
			mid = pw_median_bucket_mid(b);
			break;
		}
	}
	if (mid < min)
		mid = min;
	if (mid > max)
		mid = max;
	return mid;
}

/* ---- allocations: an AVL tree by address, nodes in an array, index 0 the null node ---- */

struct pw_gpu_alloc_node {
	uint64_t addr;
	uint64_t bytes;
	uint32_t left, right;
	uint8_t mem; /* enum pw_mem */
	int8_t height;
};

void pw_gpu_proc_init(struct pw_gpu_proc *gp, uint32_t serial)
{
	memset(gp, 0, sizeof *gp);
	gp->serial = serial;
}

static int height(const struct pw_gpu_proc *gp, uint32_t n)
{
	return n ? gp->nodes[n].height : 0;
}

static void update(struct pw_gpu_proc *gp, uint32_t n)
{
	int l = height(gp, gp->nodes[n].left), r = height(gp, gp->nodes[n].right);
	gp->nodes[n].height = (int8_t)(1 + (l > r ? l : r));
}

static uint32_t rotate_right(struct pw_gpu_proc *gp, uint32_t n)
{
	struct pw_gpu_alloc_node *N = gp->nodes;
	uint32_t l = N[n].left;
	N[n].left = N[l].right;
	N[l].right = n;
	update(gp, n);
	update(gp, l);
	return l;
}

static uint32_t rotate_left(struct pw_gpu_proc *gp, uint32_t n)
{
	struct pw_gpu_alloc_node *N = gp->nodes;
	uint32_t r = N[n].right;
	N[n].right = N[r].left;
	N[r].left = n;
	update(gp, n);
	update(gp, r);
	return r;
}

static uint32_t rebalance(struct pw_gpu_proc *gp, uint32_t n)
{
	struct pw_gpu_alloc_node *N = gp->nodes;
	update(gp, n);
	int balance = height(gp, N[n].left) - height(gp, N[n].right);
	if (balance > 1) {
		uint32_t l = N[n].left;
		if (height(gp, N[l].left) < height(gp, N[l].right))
			N[n].left = rotate_left(gp, l);
		return rotate_right(gp, n);
	}
	if (balance < -1) {
		uint32_t r = N[n].right;
		if (height(gp, N[r].right) < height(gp, N[r].left))
			N[n].right = rotate_right(gp, r);
		return rotate_left(gp, n);
	}
	return n;
}

/* Inserts node fresh (its address not in the tree) under n; returns the subtree's new root. The depth of
 * an AVL tree is at most 1.44 log2(n), so the recursion stays shallow whatever the addresses. */
static uint32_t tree_insert(struct pw_gpu_proc *gp, uint32_t n, uint32_t fresh)
{
	if (!n)
		return fresh;
	if (gp->nodes[fresh].addr < gp->nodes[n].addr)
		gp->nodes[n].left = tree_insert(gp, gp->nodes[n].left, fresh);
	else
		gp->nodes[n].right = tree_insert(gp, gp->nodes[n].right, fresh);
	return rebalance(gp, n);
}

static uint32_t remove_min(struct pw_gpu_proc *gp, uint32_t n, uint32_t *min)
{
	if (!gp->nodes[n].left) {
		*min = n;
		return gp->nodes[n].right;
	}
	gp->nodes[n].left = remove_min(gp, gp->nodes[n].left, min);
	return rebalance(gp, n);
}

/* Unlinks the node of addr from under n into *removed (0 when absent); returns the new subtree root. */
static uint32_t tree_remove(struct pw_gpu_proc *gp, uint32_t n, uint64_t addr, uint32_t *removed)
{
	if (!n)
		return 0;
	struct pw_gpu_alloc_node *N = gp->nodes;
	if (addr < N[n].addr) {
		N[n].left = tree_remove(gp, N[n].left, addr, removed);
	} else if (addr > N[n].addr) {
		N[n].right = tree_remove(gp, N[n].right, addr, removed);
	} else {
		*removed = n;
		uint32_t l = N[n].left, r = N[n].right;
		if (!l)
			return r;
		if (!r)
			return l;
		uint32_t m = 0;
		r = remove_min(gp, r, &m);
		N[m].left = l;
		N[m].right = r;
		return rebalance(gp, m);
	}
	return rebalance(gp, n);
}

static uint32_t tree_find(const struct pw_gpu_proc *gp, uint64_t addr)
{
	uint32_t n = gp->root;
	while (n && gp->nodes[n].addr != addr)
		n = addr < gp->nodes[n].addr ? gp->nodes[n].left : gp->nodes[n].right;
	return n;
}

/* The allocation p falls inside, or NULL. */
static const struct pw_gpu_alloc_node *tree_containing(const struct pw_gpu_proc *gp, uint64_t p)
{
	uint32_t n = gp->root, best = 0;
	while (n) {
		if (gp->nodes[n].addr <= p) {
			best = n;
			n = gp->nodes[n].right;
		} else {
			n = gp->nodes[n].left;
		}
	}
	if (best && p - gp->nodes[best].addr < gp->nodes[best].bytes)
		return &gp->nodes[best];
	return NULL;
}

static int mem_is_device(unsigned mem)
{
	return mem == PW_MEM_DEVICE || mem == PW_MEM_DEVICE_ASYNC;
}

static int mem_is_pinned(unsigned mem)
{
	return mem == PW_MEM_HOST_PINNED || mem == PW_MEM_HOST_REGISTERED;
}

/* The live-bytes counter of memory kind mem, or NULL for a kind the analysis does not know. */
static uint64_t *live_of(struct pw_gpu_proc *gp, unsigned mem)
{
	if (mem_is_device(mem))
		return &gp->device_live;
	if (mem_is_pinned(mem))
		return &gp->pinned_live;
	if (mem == PW_MEM_MANAGED)
		return &gp->managed_live;
	return NULL;
}

static void note_peaks(struct pw_gpu_proc *gp)
{
	struct pw_gpu_alloc_stat *s = &gp->stat;
	if (gp->device_live > s->device_peak_bytes)
		s->device_peak_bytes = gp->device_live;
	if (gp->pinned_live > s->host_pinned_peak_bytes)
		s->host_pinned_peak_bytes = gp->pinned_live;
	if (gp->managed_live > s->managed_peak_bytes)
		s->managed_peak_bytes = gp->managed_live;
}

/* Returns 0, or -1 when out of memory. */
static int alloc_track(struct pw_gpu_proc *gp, uint64_t addr, uint64_t bytes, unsigned mem)
{
	uint64_t *live = live_of(gp, mem);
	if (!live || !addr)
		return 0;
	uint32_t n = tree_find(gp, addr);
	if (n) {
		/* its free was not recorded (dropped): the new allocation replaces it */
		uint64_t *old = live_of(gp, gp->nodes[n].mem);
		*old -= *old < gp->nodes[n].bytes ? *old : gp->nodes[n].bytes;
	} else {
		if (gp->live >= PW_GPU_MAX_LIVE_ALLOCS) {
			gp->stat.untracked++;
			return 0;
		}
		if (gp->free_list) {
			n = gp->free_list;
			gp->free_list = gp->nodes[n].left;
		} else {
			if (!gp->nnodes)
				gp->nnodes = 1; /* the null node */
			size_t cap = gp->cap;
			if (pw_reserve(&gp->nodes, &cap, (size_t)gp->nnodes + 1, sizeof *gp->nodes))
				return -1;
			gp->cap = (uint32_t)cap;
			n = gp->nnodes++;
		}
		gp->nodes[n] = (struct pw_gpu_alloc_node){.addr = addr, .height = 1};
		gp->root = tree_insert(gp, gp->root, n);
		gp->live++;
	}
	gp->nodes[n].bytes = bytes;
	gp->nodes[n].mem = (uint8_t)mem;
	*live = pw_sat_add(*live, bytes);
	note_peaks(gp);
	return 0;
}

static void alloc_release(struct pw_gpu_proc *gp, uint64_t addr)
{
	uint32_t n = 0;
	if (gp->root)
		gp->root = tree_remove(gp, gp->root, addr, &n);
	if (!n) {
		gp->stat.unknown_frees++;
		return;
	}
	uint64_t *live = live_of(gp, gp->nodes[n].mem);
	*live -= *live < gp->nodes[n].bytes ? *live : gp->nodes[n].bytes;
	if (mem_is_device(gp->nodes[n].mem))
		gp->stat.device_frees++;
	gp->nodes[n].left = gp->free_list;
	gp->free_list = n;
	gp->live--;
}

static int on_device(const struct pw_gpu_proc *gp, uint64_t p)
{
	const struct pw_gpu_alloc_node *a = tree_containing(gp, p);
	return a && (mem_is_device(a->mem) || a->mem == PW_MEM_MANAGED);
}

static int is_pinned(const struct pw_gpu_proc *gp, uint64_t p)
{
	const struct pw_gpu_alloc_node *a = tree_containing(gp, p);
	return a && mem_is_pinned(a->mem);
}

unsigned pw_gpu_proc_height(const struct pw_gpu_proc *gp)
{
	return (unsigned)height(gp, gp->root);
}

void pw_gpu_proc_end(struct pw_gpu_report *gpu, struct pw_gpu_proc *gp)
{
	if (gpu && gp->seen) {
		struct pw_gpu_alloc_stat *r = &gpu->alloc, *p = &gp->stat;
		if (p->device_peak_bytes > r->device_peak_bytes)
			r->device_peak_bytes = p->device_peak_bytes;
		if (p->host_pinned_peak_bytes > r->host_pinned_peak_bytes)
			r->host_pinned_peak_bytes = p->host_pinned_peak_bytes;
		if (p->managed_peak_bytes > r->managed_peak_bytes)
			r->managed_peak_bytes = p->managed_peak_bytes;
		if (p->largest_failed_bytes > r->largest_failed_bytes)
			r->largest_failed_bytes = p->largest_failed_bytes;
		r->device_allocs = pw_sat_add(r->device_allocs, p->device_allocs);
		r->device_frees = pw_sat_add(r->device_frees, p->device_frees);
		r->failed_allocs = pw_sat_add(r->failed_allocs, p->failed_allocs);
		r->host_pinned_allocs = pw_sat_add(r->host_pinned_allocs, p->host_pinned_allocs);
		r->managed_allocs = pw_sat_add(r->managed_allocs, p->managed_allocs);
		r->unknown_frees = pw_sat_add(r->unknown_frees, p->unknown_frees);
		r->untracked = pw_sat_add(r->untracked, p->untracked);
	}
	free(gp->nodes);
	pw_gpu_proc_init(gp, gp->serial);
}

/* ---- the tables ---- */

/* GEMM shapes */
struct gemm_key {
	const struct pw_gpu_report *g;
	const struct pw_gemm_stat *k;
};

static int gemm_eq(const void *ctx, uint32_t pos)
{
	const struct gemm_key *c = ctx;
	const struct pw_gemm_stat *a = &c->g->gemms[pos], *b = c->k;
	return a->ev == b->ev && a->dtype == b->dtype && a->transa == b->transa && a->transb == b->transb &&
	       a->m == b->m && a->n == b->n && a->k == b->k && a->batch == b->batch;
}

static uint64_t gemm_flops(const struct pw_gemm_stat *s)
{
	uint64_t f = pw_sat_mul(pw_sat_mul(pw_sat_mul(pw_sat_mul(2, s->m), s->n), s->k), s->batch);
	return pw_cuda_dtype_is_complex(s->dtype) ? pw_sat_mul(f, 4) : f;
}

static int note_gemm(struct pw_gpu_report *g, const struct pw_rec_api *a, uint64_t dur, int failed)
{
	struct pw_gpu_work *w = g->work;
	struct pw_gemm shape = pw_get_gemm(a->a, a->sub);
	struct pw_gemm_stat k = {
		.ev = a->c.h.type,
		.dtype = shape.dtype,
		.transa = shape.transa,
		.transb = shape.transb,
		.m = shape.m,
		.n = shape.n,
		.k = shape.k,
		.batch = shape.batch,
	};
	uint64_t flops = failed ? 0 : gemm_flops(&k);
	g->gemm_calls++;
	g->gemm_flops = pw_sat_add(g->gemm_flops, flops);
	uint64_t key[5] = {(uint64_t)k.ev | (uint64_t)k.dtype << 16 | (uint64_t)k.transa << 24 |
				   (uint64_t)k.transb << 32,
			   k.m, k.n, k.k, k.batch};
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, key, sizeof key));
	struct gemm_key ctx = {g, &k};
	int64_t pos = pw_hix_find(&w->gemm_ix, h, gemm_eq, &ctx);
	struct pw_gpu_other *o = &g->gemm_other;
	struct pw_gemm_stat *s = NULL;
	int rc = 0;
	if (pos >= 0) {
		s = &g->gemms[pos];
	} else if (g->ngemms < PW_GPU_MAX_SHAPES) {
		if (pw_reserve(&g->gemms, &w->gemms_cap, g->ngemms + 1, sizeof *g->gemms) ||
		    pw_hix_add(&w->gemm_ix, h, (uint32_t)g->ngemms))
			rc = -1;
		else
			s = &g->gemms[g->ngemms++];
		if (s)
			*s = k;
	}
	if (s) {
		s->count++;
		s->total_ns = pw_sat_add(s->total_ns, dur);
		s->flops = pw_sat_add(s->flops, flops);
	} else {
		o->count++;
		o->total_ns = pw_sat_add(o->total_ns, dur);
		o->flops = pw_sat_add(o->flops, flops);
	}
	return rc;
}

/* Kernels */
struct kernel_key {
	const struct pw_gpu_report *g;
	const char *name;
	size_t len;
};

static int kernel_eq(const void *ctx, uint32_t pos)
{
	const struct kernel_key *c = ctx;
	const char *name = c->g->kernels[pos].name;
	return strlen(name) == c->len && memcmp(name, c->name, c->len) == 0;
}

/* Space-saving count of the kernel's launch configurations: a configuration not among the tracked ones
 * takes the place of the least frequent (inheriting its count), so the most frequent one is exact while a
 * kernel has at most PW_GPU_LAUNCH_CONFIGS of them and still found when it dominates. */
static void note_config(struct launch_config *cfg, const uint32_t grid[3], const uint32_t block[3])
{
	size_t min = 0;
	for (size_t i = 0; i < PW_GPU_LAUNCH_CONFIGS; i++) {
		if (cfg[i].count && !memcmp(cfg[i].grid, grid, sizeof cfg[i].grid) &&
		    !memcmp(cfg[i].block, block, sizeof cfg[i].block)) {
			cfg[i].count++;
			return;
		}
		if (cfg[i].count < cfg[min].count)
			min = i;
	}
	memcpy(cfg[min].grid, grid, sizeof cfg[min].grid);
	memcpy(cfg[min].block, block, sizeof cfg[min].block);
	cfg[min].count++;
}

static int note_launch(struct pw_gpu_report *g, const struct pw_raw_event *e, const struct pw_rec_api *a,
		       enum pw_event_kind kind, uint64_t dur, int failed)
{
	struct pw_gpu_work *w = g->work;
	int named = kind == PW_K_GPU_LAUNCH && e->str && e->str_len && e->str[0];
	const char *name = kind == PW_K_GPU_GRAPH ? "CUDA graph" : named ? e->str : "(unknown)";
	size_t len = named ? e->str_len : strlen(name);
	if (len > KERNEL_NAME_MAX)
		len = KERNEL_NAME_MAX;
	if (memchr(name, 0, len))
		len = strlen(name); /* a name with a NUL in it ends there (the NUL is within len) */
	uint64_t h = pw_hix_hash(pw_hash_bytes(PW_HASH_SEED, name, len));
	struct kernel_key ctx = {g, name, len};
	int64_t pos = pw_hix_find(&w->kernel_ix, h, kernel_eq, &ctx);
	int rc = 0;
	if (pos < 0 && g->nkernels < PW_GPU_MAX_KERNELS) {
		char *copy = strndup(name, len);
		if (!copy || pw_reserve(&g->kernels, &w->kernels_cap, g->nkernels + 1, sizeof *g->kernels) ||
		    pw_reserve(&w->configs, &w->configs_cap, g->nkernels + 1, sizeof *w->configs) ||
		    pw_hix_add(&w->kernel_ix, h, (uint32_t)g->nkernels)) {
			free(copy);
			rc = -1;
		} else {
			pos = (int64_t)g->nkernels++;
			g->kernels[pos].name = copy;
		}
	}
	if (pos < 0) {
		if (!failed)
			g->kernel_other.count++;
		g->kernel_other.total_ns = pw_sat_add(g->kernel_other.total_ns, dur);
		return rc;
	}
	struct pw_kernel_stat *k = &g->kernels[pos];
	if (failed)
		k->failed++;
	else
		k->launches++;
	k->total_ns = pw_sat_add(k->total_ns, dur);
	if (kind == PW_K_GPU_LAUNCH) {
		struct pw_dims dims = pw_get_dims(a->a);
		note_config(w->configs[pos], dims.grid, dims.block);
	}
	return rc;
}

/* Errors by (call, status) */
struct error_key {
	const struct pw_gpu_report *g;
	uint16_t ev;
	int64_t code;
};

static int error_eq(const void *ctx, uint32_t pos)
{
	const struct error_key *c = ctx;
	return c->g->errors[pos].ev == c->ev && c->g->errors[pos].code == c->code;
}

static int note_error(struct pw_gpu_report *g, uint16_t ev, int64_t code)
{
	struct pw_gpu_work *w = g->work;
	uint64_t h = pw_hix_hash(pw_hash_combine((uint64_t)code, ev));
	struct error_key ctx = {g, ev, code};
	int64_t pos = pw_hix_find(&w->error_ix, h, error_eq, &ctx);
	if (pos < 0 && g->nerrors < PW_GPU_MAX_ERRORS) {
		if (pw_reserve(&g->errors, &w->errors_cap, g->nerrors + 1, sizeof *g->errors) ||
		    pw_hix_add(&w->error_ix, h, (uint32_t)g->nerrors)) {
			g->errors_other++;
			return -1;
		}
		pos = (int64_t)g->nerrors++;
		g->errors[pos] = (struct pw_gpu_error_stat){.ev = ev, .code = code};
	}
	if (pos < 0)
		g->errors_other++;
	else
		g->errors[pos].count++;
	return 0;
}

/* cudnnBackendExecute by operation mask */
struct dnn_key {
	const struct pw_gpu_report *g;
	uint64_t mask;
};

static int dnn_eq(const void *ctx, uint32_t pos)
{
	const struct dnn_key *c = ctx;
	return c->g->dnn_graphs[pos].mask == c->mask;
}

static int note_dnn_graph(struct pw_gpu_report *g, uint64_t mask, uint64_t dur)
{
	struct pw_gpu_work *w = g->work;
	uint64_t h = pw_hix_hash(pw_hash_mix(mask));
	struct dnn_key ctx = {g, mask};
	int64_t pos = pw_hix_find(&w->dnn_ix, h, dnn_eq, &ctx);
	int rc = 0;
	if (pos < 0 && g->ndnn_graphs < PW_GPU_MAX_DNN_GRAPHS) {
		if (pw_reserve(&g->dnn_graphs, &w->dnn_cap, g->ndnn_graphs + 1, sizeof *g->dnn_graphs) ||
		    pw_hix_add(&w->dnn_ix, h, (uint32_t)g->ndnn_graphs)) {
			rc = -1;
		} else {
			pos = (int64_t)g->ndnn_graphs++;
			g->dnn_graphs[pos].mask = mask;
		}
	}
	if (pos < 0) {
		g->dnn_other.count++;
		g->dnn_other.total_ns = pw_sat_add(g->dnn_other.total_ns, dur);
	} else {
		g->dnn_graphs[pos].count++;
		g->dnn_graphs[pos].total_ns = pw_sat_add(g->dnn_graphs[pos].total_ns, dur);
	}
	return rc;
}

/* Collectives */
double pw_coll_bus_factor(int ev, uint64_t nranks)
{
	if (nranks < 1)
		nranks = 1;
	double n = (double)nranks;
	switch (ev) {
	case PW_EV_NCCL_ALL_REDUCE:
		return 2.0 * (n - 1.0) / n;
	case PW_EV_NCCL_ALL_GATHER:
	case PW_EV_NCCL_REDUCE_SCATTER:
	case PW_EV_NCCL_ALL_TO_ALL:
	case PW_EV_NCCL_GATHER:
	case PW_EV_NCCL_SCATTER:
		return (n - 1.0) / n;
	default:
		return 1.0;
	}
}

uint64_t pw_coll_bytes(const struct pw_rec_api *a, uint64_t *nranks)
{
	uint16_t ev = a->c.h.type;
	struct pw_nccl coll = pw_get_nccl(a->a, a->sub);
	*nranks = coll.nranks ? coll.nranks : 1;
	uint64_t bytes = pw_sat_mul(a->c.arg0, pw_nccl_dtype_size(coll.dtype));
	/* count is per rank for these: the whole exchange is nranks times it */
	if (ev == PW_EV_NCCL_ALL_GATHER || ev == PW_EV_NCCL_REDUCE_SCATTER || ev == PW_EV_NCCL_ALL_TO_ALL ||
	    ev == PW_EV_NCCL_GATHER || ev == PW_EV_NCCL_SCATTER)
		bytes = pw_sat_mul(bytes, *nranks);
	return bytes;
}

static void note_coll(struct pw_gpu_report *g, const struct pw_rec_api *a, uint64_t dur, int failed)
{
	uint16_t ev = a->c.h.type;
	struct pw_coll_stat *s = &g->colls[ev];
	uint64_t nranks;
	uint64_t bytes = pw_coll_bytes(a, &nranks);
	s->count++;
	s->total_ns = pw_sat_add(s->total_ns, dur);
	if (!failed) {
		s->bytes = pw_sat_add(s->bytes, bytes);
		s->bus_bytes += (double)bytes * pw_coll_bus_factor(ev, nranks);
	}
}

/* Copies and memsets */
static void note_memcpy(struct pw_gpu_proc *gp, struct pw_gpu_report *g, const struct pw_rec_api *a, uint64_t dur,
			int failed)
{
	struct pw_copy_call copy = pw_get_copy_call(a->a);
	uint64_t dst = copy.dst, src = copy.src, host = 0;
	enum pw_gpu_dir d;
	switch (a->sub & PW_COPY_DIR_MASK) {
	case PW_COPY_HTOH:
		d = PW_DIR_HTOH;
		break;
	case PW_COPY_HTOD:
		d = PW_DIR_HTOD;
		break;
	case PW_COPY_DTOH:
		d = PW_DIR_DTOH;
		break;
	case PW_COPY_DTOD:
		d = PW_DIR_DTOD;
		break;
	case PW_COPY_PEER:
		d = PW_DIR_PTOP;
		break;
	default: { /* PW_COPY_DEFAULT, and values this reader does not know: inferred from the addresses */
		int src_dev = on_device(gp, src), dst_dev = on_device(gp, dst);
		d = src_dev ? (dst_dev ? PW_DIR_DTOD : PW_DIR_DTOH) : (dst_dev ? PW_DIR_HTOD : PW_DIR_HTOH);
		break;
	}
	}
	struct pw_gpu_copy_stat *s = &g->copies[d];
	uint64_t bytes = failed ? 0 : a->c.arg0;
	s->count++;
	s->bytes = pw_sat_add(s->bytes, bytes);
	s->total_ns = pw_sat_add(s->total_ns, dur);
	s->failed += (uint64_t)failed;
	s->async_count += (a->sub & PW_API_ASYNC) != 0;
	if (d != PW_DIR_HTOD && d != PW_DIR_DTOH)
		return;
	host = d == PW_DIR_HTOD ? src : dst;
	if (is_pinned(gp, host)) {
		s->pinned_count++;
		s->pinned_bytes = pw_sat_add(s->pinned_bytes, bytes);
		s->pinned_ns = pw_sat_add(s->pinned_ns, dur);
	} else {
		s->pageable_count++;
		s->pageable_bytes = pw_sat_add(s->pageable_bytes, bytes);
		s->pageable_ns = pw_sat_add(s->pageable_ns, dur);
	}
}

static int note_alloc(struct pw_gpu_proc *gp, const struct pw_rec_api *a, int failed)
{
	struct pw_gpu_alloc_stat *s = &gp->stat;
	unsigned mem = a->sub;
	if (failed) {
		s->failed_allocs++;
		if (a->c.arg0 > s->largest_failed_bytes)
			s->largest_failed_bytes = a->c.arg0;
		return 0;
	}
	if (mem_is_device(mem))
		s->device_allocs++;
	else if (mem_is_pinned(mem))
		s->host_pinned_allocs++;
	else if (mem == PW_MEM_MANAGED)
		s->managed_allocs++;
	return alloc_track(gp, a->c.arg1, a->c.arg0, mem);
}

/* Devices and streams */
static int work_kind(enum pw_event_kind k)
{
	return k == PW_K_GPU_LAUNCH || k == PW_K_GPU_GRAPH || k == PW_K_GPU_MEMCPY || k == PW_K_GPU_MEMSET ||
	       k == PW_K_GEMM || k == PW_K_DNN || k == PW_K_COLL;
}

/* Returns 1 when key was added, 0 when it was there or the set is full, -1 when out of memory. */
static int stream_key_add(struct pw_keys *s, uint64_t key)
{
	if (s->n >= PW_GPU_MAX_STREAMS)
		return 0;
	int added;
	return pw_keys_add(s, key, &added) < 0 ? -1 : added;
}
static int note_device(struct pw_gpu_report *g, const struct pw_gpu_proc *gp, const struct pw_rec_api *a,
		       enum pw_event_kind kind)
{
	struct pw_gpu_work *w = g->work;
	if (a->device < 0)
		return 0;
	size_t i = 0;
	while (i < g->ndevices && g->devices[i].id != a->device)
		i++;
	if (i == g->ndevices) {
		if (g->ndevices >= PW_GPU_MAX_DEVICES) {
			g->devices_other++;
			return 0;
		}
		if (pw_reserve(&g->devices, &w->devices_cap, g->ndevices + 1, sizeof *g->devices) ||
		    pw_reserve(&w->streams, &w->streams_cap, g->ndevices + 1, sizeof *w->streams))
			return -1;
		g->devices[g->ndevices++].id = a->device;
	}
	if (!work_kind(kind))
		return 0;
	/* Stream handles are per process; the per-thread default stream is per thread (sub carries
	 * PW_API_PTSZ only for copies and memsets: other kinds use sub for their own fields). */
	uint64_t stream = a->stream;
	if (!stream && (a->sub & PW_API_PTSZ) && (kind == PW_K_GPU_MEMCPY || kind == PW_K_GPU_MEMSET))
		stream = (uint64_t)1 << 63 | a->c.h.tid;
	int added = stream_key_add(&w->streams[i], pw_hash_combine(stream, gp->serial));
	if (added < 0)
		return -1;
	g->devices[i].streams += (uint64_t)added;
	return 0;
}

/* ---- the visitor's entry point ---- */

int pw_gpu_event(struct pw_gpu_report **gpup, struct pw_gpu_proc *gp, const struct pw_raw_event *e, uint64_t dur)
{
	const struct pw_rec_api *a = (const struct pw_rec_api *)e->rec;
	uint16_t ev = a->c.h.type;
	if (ev >= PW_EV_COUNT || !pw_kind_is_api(pw_events[ev].kind))
		return 0;
	const struct pw_event_info *info = &pw_events[ev];
	struct pw_gpu_report *g = *gpup;
	if (!g && !(g = *gpup = report_new()))
		return -1;
	struct pw_gpu_work *w = g->work;
	int failed = a->c.h.err != 0, rc = 0;
	gp->seen = 1;
	g->records++;

	if (pw_domain_is_gpu(info->domain)) {
		if (!w->hist[ev] && !(w->hist[ev] = calloc(PW_MEDIAN_BUCKETS, sizeof *w->hist[ev])))
			rc = -1;
		else
			w->hist[ev][pw_median_bucket(dur)]++;
	}
	if (failed && note_error(g, ev, a->c.ret))
		rc = -1;
	if (note_device(g, gp, a, info->kind))
		rc = -1;

	switch (info->kind) {
	case PW_K_GPU_LAUNCH:
	case PW_K_GPU_GRAPH:
		/* A launch that failed launched nothing: its kernel's row counts it apart, as failed. */
		if (note_launch(g, e, a, info->kind, dur, failed))
			rc = -1;
		break;
	case PW_K_GPU_MEMCPY:
		note_memcpy(gp, g, a, dur, failed);
		break;
	case PW_K_GPU_MEMSET:
		g->memset.count++;
		g->memset.total_ns = pw_sat_add(g->memset.total_ns, dur);
		if (!failed)
			g->memset.bytes = pw_sat_add(g->memset.bytes, a->c.arg0);
		break;
	case PW_K_GPU_ALLOC:
		if (note_alloc(gp, a, failed))
			rc = -1;
		break;
	case PW_K_GPU_FREE:
		if (!failed && a->c.arg1) /* freeing NULL does nothing */
			alloc_release(gp, a->c.arg1);
		break;
	case PW_K_GPU_SYNC:
		g->sync_count++;
		g->sync_ns = pw_sat_add(g->sync_ns, dur);
		break;
	case PW_K_GEMM:
		if (note_gemm(g, a, dur, failed))
			rc = -1;
		break;
	case PW_K_DNN:
		if (ev == PW_EV_CUDNN_BACKEND_EXECUTE && note_dnn_graph(g, a->c.arg0, dur))
			rc = -1;
		break;
	case PW_K_COLL:
		note_coll(g, a, dur, failed);
		break;
	default:
		break;
	}
	return rc;
}

/* ---- finishing ---- */

static int by_gemm_time(const void *x, const void *y)
{
	const struct pw_gemm_stat *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->ev > b->ev) - (a->ev < b->ev);
}

static int by_launches(const void *x, const void *y)
{
	const struct pw_kernel_stat *a = x, *b = y;
	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	if (a->failed != b->failed)
		return a->failed > b->failed ? -1 : 1;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int by_error_count(const void *x, const void *y)
{
	const struct pw_gpu_error_stat *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->ev != b->ev)
		return a->ev < b->ev ? -1 : 1;
	return (a->code > b->code) - (a->code < b->code);
}

static int by_dnn_time(const void *x, const void *y)
{
	const struct pw_dnn_graph_stat *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return (a->mask > b->mask) - (a->mask < b->mask);
}

static int by_device_id(const void *x, const void *y)
{
	const struct pw_gpu_device_stat *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

void pw_gpu_finish(struct pw_gpu_report *g, struct pw_call_stat calls[PW_EV_COUNT])
{
	if (!g || !g->work)
		return;
	struct pw_gpu_work *w = g->work;
	for (int ev = 0; ev < PW_EV_COUNT; ev++)
		if (w->hist[ev])
			calls[ev].median_ns = median_of(w->hist[ev], calls[ev].count, calls[ev].min_ns, calls[ev].max_ns);
	/* each kernel's most frequent launch configuration, before the kernels move */
	for (size_t i = 0; i < g->nkernels; i++) {
		const struct launch_config *cfg = w->configs[i], *best = NULL;
		for (size_t c = 0; c < PW_GPU_LAUNCH_CONFIGS; c++)
			if (cfg[c].count && (!best || cfg[c].count > best->count))
				best = &cfg[c];
		if (best) {
			memcpy(g->kernels[i].grid, best->grid, sizeof best->grid);
			memcpy(g->kernels[i].block, best->block, sizeof best->block);
			g->kernels[i].config_count = best->count;
		}
	}
	if (g->ngemms)
		qsort(g->gemms, g->ngemms, sizeof *g->gemms, by_gemm_time);
	if (g->nkernels)
		qsort(g->kernels, g->nkernels, sizeof *g->kernels, by_launches);
	if (g->nerrors)
		qsort(g->errors, g->nerrors, sizeof *g->errors, by_error_count);
	if (g->ndnn_graphs)
		qsort(g->dnn_graphs, g->ndnn_graphs, sizeof *g->dnn_graphs, by_dnn_time);
	if (g->ndevices)
		qsort(g->devices, g->ndevices, sizeof *g->devices, by_device_id);
	work_free(w);
	g->work = NULL;
}

void pw_gpu_report_free(struct pw_gpu_report *g)
{
	if (!g)
		return;
	work_free(g->work);
	for (size_t i = 0; i < g->nkernels; i++)
		free(g->kernels[i].name);
	free(g->gemms);
	free(g->kernels);
	free(g->errors);
	free(g->dnn_graphs);
	free(g->devices);
	free(g);
}
