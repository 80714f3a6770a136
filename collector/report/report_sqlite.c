/* rank<R>.sqlite: the rank's events in nsys's tables where nsys has the same data (see report_sqlite.h). */
#define _GNU_SOURCE
#include "report_sqlite.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/pw_record.h"
#include "../../common/pw_session.h"
#include "../lib/hash_index.h"
#include "../model/call_stacks.h"
#include "../model/gpu_activity.h"
#include "../model/gpu_names.h"
#include "../model/ranges.h"
#include "../model/timeline.h"
#include "../symbols/demangle.h"

/* nsys's NVTX event types (ENUM_NSYS_EVENT_TYPE), which its queries filter on */
#define NSYS_NVTX_MARK 34
#define NSYS_NVTX_PUSH_POP 59
#define NSYS_NVTX_START_END 60

/* The tables nsys has, with nsys's names for the columns profwrap can fill, then profwrap's own. The call
 * tables of nsys (OSRT_API, CUPTI_ACTIVITY_KIND_RUNTIME, CUBLAS_EVENTS, CUDNN_EVENTS) are views of
 * PROFWRAP_CALLS, so that a call is stored once; they are made once the domains' numbers are known. */
static const char schema[] =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds(id), priority INTEGER,"
	" globalTid INTEGER);"
	"CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, totalMemory INTEGER, memoryBandwidth INTEGER,"
	" smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),"
	" shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),"
	" registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
	" blockZ INTEGER, sharedMemory INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER,"
	" srcDeviceId INTEGER, dstDeviceId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER);"
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
	"CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
	" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,"
	" textId INTEGER REFERENCES StringIds(id), domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,"
	" doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL);"
	"CREATE TABLE PROFWRAP_META (name TEXT NOT NULL PRIMARY KEY, value);"
	"CREATE TABLE PROFWRAP_DOMAINS (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL);"
	"CREATE TABLE PROFWRAP_PROCESSES (globalPid INTEGER NOT NULL, pid INTEGER NOT NULL, ppid INTEGER,"
	" rank INTEGER, exe TEXT, argv TEXT, start INTEGER, end INTEGER, exitCode INTEGER, signal INTEGER,"
	" threads INTEGER, events INTEGER, dropped INTEGER);"
	"CREATE TABLE PROFWRAP_FILES (id INTEGER NOT NULL PRIMARY KEY, path TEXT NOT NULL, stream INTEGER NOT NULL,"
	" opens INTEGER, reads INTEGER, writes INTEGER, readBytes INTEGER, writeBytes INTEGER, timeNs INTEGER,"
	" metaNs INTEGER, stats INTEGER, dirReads INTEGER);"
	"CREATE TABLE PROFWRAP_CALLS (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,"
	" nameId INTEGER NOT NULL REFERENCES StringIds(id), domainId INTEGER NOT NULL REFERENCES PROFWRAP_DOMAINS(id),"
	" correlationId INTEGER, returnValue INTEGER, errno INTEGER, fd INTEGER, bytes INTEGER,"
	" fileId INTEGER REFERENCES PROFWRAP_FILES(id), pathId INTEGER REFERENCES StringIds(id),"
	" callchainId INTEGER);"
	"CREATE TABLE PROFWRAP_CUPTI_API (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER NOT NULL,"
	" nameId INTEGER NOT NULL REFERENCES StringIds(id), correlationId INTEGER NOT NULL, driver INTEGER NOT NULL);"
	"CREATE TABLE PROFWRAP_STACK_FRAMES (stackId INTEGER NOT NULL, depth INTEGER NOT NULL, function TEXT,"
	" file TEXT, line INTEGER, module TEXT, python INTEGER NOT NULL);"
	"CREATE TABLE PROFWRAP_SAMPLES (start INTEGER NOT NULL, globalTid INTEGER NOT NULL, periodNs INTEGER,"
	" cpuNs INTEGER, stackId INTEGER);";

/* CUPTI's memcpy kinds (CUpti_ActivityMemcpyKind) and memory kinds (CUpti_ActivityMemoryKind, which enum
 * pw_act_mem copies), with labels as nsys shows them */
static const struct {
	int id;
	const char *name, *label;
} copy_kinds[] = {
	{0, "CUDA_MEMCPY_OPER_UNKNOWN", "[CUDA memcpy Unknown]"},
	{1, "CUDA_MEMCPY_OPER_HTOD", "[CUDA memcpy Host-to-Device]"},
	{2, "CUDA_MEMCPY_OPER_DTOH", "[CUDA memcpy Device-to-Host]"},
	{3, "CUDA_MEMCPY_OPER_HTOA", "[CUDA memcpy Host-to-Array]"},
	{4, "CUDA_MEMCPY_OPER_ATOH", "[CUDA memcpy Array-to-Host]"},
	{5, "CUDA_MEMCPY_OPER_ATOA", "[CUDA memcpy Array-to-Array]"},
	{6, "CUDA_MEMCPY_OPER_ATOD", "[CUDA memcpy Array-to-Device]"},
	{7, "CUDA_MEMCPY_OPER_DTOA", "[CUDA memcpy Device-to-Array]"},
	{8, "CUDA_MEMCPY_OPER_DTOD", "[CUDA memcpy Device-to-Device]"},
	{9, "CUDA_MEMCPY_OPER_HTOH", "[CUDA memcpy Host-to-Host]"},
	{10, "CUDA_MEMCPY_OPER_PTOP", "[CUDA memcpy Peer-to-Peer]"},
}, mem_kinds[] = {
	{0, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
	{1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
	{2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
	{3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
	{4, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
	{5, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
	{6, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
	{7, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
};

/* enum pw_copy_dir -> CUpti_ActivityMemcpyKind */
static int cupti_copy_kind(unsigned dir)
{
	static const int kinds[] = {[PW_COPY_HTOH] = 9, [PW_COPY_HTOD] = 1, [PW_COPY_DTOH] = 2,
				    [PW_COPY_DTOD] = 8, [PW_COPY_DEFAULT] = 0, [PW_COPY_PEER] = 10};
	return dir < sizeof kinds / sizeof kinds[0] ? kinds[dir] : 0;
}

enum stmt {
	ST_STRING, ST_THREAD_NAME, ST_GPU, ST_KERNEL, ST_MEMCPY, ST_MEMSET, ST_NVTX, ST_META, ST_DOMAIN, ST_PROCESS,
	ST_FILE, ST_CALL, ST_CUPTI_API, ST_FRAME, ST_SAMPLE, ST_COUNT
};

static const char *const inserts[ST_COUNT] = {
	[ST_STRING] = "INSERT INTO StringIds VALUES (?,?)",
	[ST_THREAD_NAME] = "INSERT INTO ThreadNames VALUES (?,?,?)",
	[ST_GPU] = "INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?)",
	[ST_KERNEL] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?)",
	[ST_NVTX] = "INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_META] = "INSERT INTO PROFWRAP_META VALUES (?,?)",
	[ST_DOMAIN] = "INSERT INTO PROFWRAP_DOMAINS VALUES (?,?)",
	[ST_PROCESS] = "INSERT INTO PROFWRAP_PROCESSES VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_FILE] = "INSERT INTO PROFWRAP_FILES VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_CALL] = "INSERT INTO PROFWRAP_CALLS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_CUPTI_API] = "INSERT INTO PROFWRAP_CUPTI_API VALUES (?,?,?,?,?,?)",
	[ST_FRAME] = "INSERT INTO PROFWRAP_STACK_FRAMES VALUES (?,?,?,?,?,?,?)",
	[ST_SAMPLE] = "INSERT INTO PROFWRAP_SAMPLES VALUES (?,?,?,?,?)",
};

/* A kernel's names as nsys keeps them: demangled, short (the function's own name), mangled. */
struct kernel_names {
	int64_t demangled, short_name, mangled;
};

struct table {
	sqlite3_stmt *one, *many; /* an INSERT of one row, of a batch */
	int cols, batch, rows;    /* rows: waiting in cells */
	struct cell *cells;
};

struct export {
	sqlite3 *db;
	struct table tables[ST_COUNT];
	const struct pw_rank_report *r;
	const struct pw_timeline *tl;
	const struct pw_proc *proc; /* the image being written */
	const struct pw_stack_image *stacks;
	int failed;
	/* StringIds: the timeline's strings at their offsets, then the others numbered from next_string */
	int64_t next_string;
	int64_t event_names[PW_EV_COUNT]; /* 0: not written yet */
	struct pw_keys kernel_keys;       /* by the timeline string of the kernel's name */
	struct kernel_names *kernels;
	size_t kernels_cap;
	struct pw_tl_launches launches; /* the image's calls that enqueued GPU work */
	struct pw_keys api_keys; /* the image's correlation ids of CUDA calls only CUPTI saw, written once */
	struct pw_keys api_name_keys; /* those calls' names, by driver << 32 | callback id */
	int64_t *api_names;
	size_t api_names_cap;
	struct pw_keys start_keys; /* the image's open NVTX start/end ranges, by id */
	size_t *starts;
	size_t starts_cap;
};

/* A row waiting in its table's batch: a value per column. */
struct cell {
	int64_t i;
	double d;
	const char *s; /* a string that outlives the batch (the model's or the timeline's) */
	uint8_t type;  /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT or SQLITE_TEXT */
};

/* Rows go in batches of one INSERT with many VALUES lists: a statement's set-up costs as much as a row's
 * values. A table whose rows carry strings that do not outlive the row (StringIds) has batches of one. */
#define BATCH_ROWS 64

static struct cell *begin_row(struct export *x, enum stmt s)
{
	struct table *t = &x->tables[s];
	struct cell *row = t->cells + (size_t)t->rows * (size_t)t->cols;
	for (int c = 0; c < t->cols; c++)
		row[c].type = SQLITE_NULL;
	return row;
}

static void bind_cells(struct export *x, sqlite3_stmt *st, const struct cell *cells, int n)
{
	for (int c = 0; c < n; c++) {
		int rc = SQLITE_OK;
		switch (cells[c].type) {
		case SQLITE_INTEGER: rc = sqlite3_bind_int64(st, c + 1, cells[c].i); break;
		case SQLITE_FLOAT: rc = sqlite3_bind_double(st, c + 1, cells[c].d); break;
		case SQLITE_TEXT: rc = sqlite3_bind_text(st, c + 1, cells[c].s, -1, SQLITE_STATIC); break;
		default: rc = sqlite3_bind_null(st, c + 1); break;
		}
		if (rc != SQLITE_OK)
			x->failed = 1;
	}
}

static void step(struct export *x, sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		x->failed = 1;
	sqlite3_reset(st);
}

/* Writes the table's waiting rows: a whole batch at once, fewer one by one. */
static void flush(struct export *x, enum stmt s)
{
	struct table *t = &x->tables[s];
	if (t->rows == t->batch) {
		bind_cells(x, t->many, t->cells, t->rows * t->cols);
		step(x, t->many);
	} else {
		for (int r = 0; r < t->rows; r++) {
			bind_cells(x, t->one, t->cells + (size_t)r * (size_t)t->cols, t->cols);
			step(x, t->one);
		}
	}
	t->rows = 0;
}

/* The row (begun by begin_row) is whole. Rows of other tables may have been made meanwhile (a string's). */
static void end_row(struct export *x, const struct cell *row)
{
	for (int s = 0; s < ST_COUNT; s++) {
		struct table *t = &x->tables[s];
		if (row >= t->cells && row < t->cells + (size_t)t->batch * (size_t)t->cols) {
			if (++t->rows == t->batch)
				flush(x, (enum stmt)s);
			return;
		}
	}
}

static void bind_int(struct cell *row, int col, int64_t v)
{
	row[col - 1] = (struct cell){.i = v, .type = SQLITE_INTEGER};
}

static void bind_double(struct cell *row, int col, double v)
{
	row[col - 1] = (struct cell){.d = v, .type = SQLITE_FLOAT};
}

static void bind_text(struct cell *row, int col, const char *s)
{
	if (s)
		row[col - 1] = (struct cell){.s = s, .type = SQLITE_TEXT};
}

/* A time as the database keeps it: ns since the rank's start. */
static int64_t rel(const struct export *x, uint64_t ns)
{
	return (int64_t)(ns - x->r->start_ns);
}

static int64_t global_pid(int pid)
{
	return (int64_t)((uint64_t)(uint32_t)pid & 0xffffff) << 24;
}

static int64_t global_tid(int pid, uint32_t tid)
{
	return global_pid(pid) | (tid & 0xffffff);
}

/* A string the timeline does not hold, as a new StringIds row. */
static int64_t add_string(struct export *x, const char *s)
{
	int64_t id = x->next_string++;
	struct cell *st = begin_row(x, ST_STRING);
	bind_int(st, 1, id);
	bind_text(st, 2, s); /* StringIds' batches are of one row: written now */
	end_row(x, st);
	return id;
}

static int64_t event_name(struct export *x, unsigned type)
{
	if (!x->event_names[type])
		x->event_names[type] = add_string(x, pw_events[type].name);
	return x->event_names[type];
}

/* The timeline's strings, each with its offset as its id. */
static void write_timeline_strings(struct export *x)
{
	const struct pw_timeline *tl = x->tl;
	for (size_t at = 0; at < tl->strings_len; at += strlen(tl->strings + at) + 1) {
		struct cell *st = begin_row(x, ST_STRING);
		bind_int(st, 1, (int64_t)at);
		bind_text(st, 2, tl->strings + at);
		end_row(x, st);
	}
	x->next_string = (int64_t)tl->strings_len + 1;
}

/* The function's own name in a demangled name, as nsys's shortName: no return type, scope, template
 * arguments or parameters ("void at::native::k<4>(int)" -> "k"). */
static void short_name(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), end = n, depth = 0;
	for (size_t i = 0; i < n; i++) { /* the parameter list: the first '(' outside template arguments */
		if (name[i] == '<')
			depth++;
		else if (name[i] == '>' && depth)
			depth--;
		else if (name[i] == '(' && !depth && i > 0) {
			end = i;
			break;
		}
	}
	if (end > 0 && name[end - 1] == '>') { /* template arguments */
		size_t d = 0, i = end;
		while (i-- > 0) {
			if (name[i] == '>')
				d++;
			else if (name[i] == '<' && --d == 0)
				break;
		}
		if (i != (size_t)-1)
			end = i;
	}
	size_t start = end;
	depth = 0;
	while (start > 0) { /* back to the scope's "::" or the return type's space, outside template arguments */
		char c = name[start - 1];
		if (c == '>')
			depth++;
		else if (c == '<' && depth)
			depth--;
		else if (!depth && (c == ' ' || c == ':'))
			break;
		start--;
	}
	if (start == end) {
		snprintf(buf, len, "%s", name);
		return;
	}
	snprintf(buf, len, "%.*s", (int)(end - start), name + start);
}

/* A kernel's name ids; NULL when out of memory. */
static const struct kernel_names *kernel_names(struct export *x, uint32_t name)
{
	static const struct kernel_names unknown_ids = {0, 0, 0};
	int added;
	int64_t at = pw_keys_add(&x->kernel_keys, name, &added);
	if (at < 0 || (added && pw_reserve(&x->kernels, &x->kernels_cap, (size_t)at + 1, sizeof *x->kernels))) {
		x->failed = 1;
		return &unknown_ids;
	}
	struct kernel_names *k = &x->kernels[at];
	if (!added)
		return k;
	const char *mangled = pw_tl_string(x->tl, name);
	if (!mangled) {
		k->demangled = k->short_name = add_string(x, "kernel (name unknown)");
		k->mangled = -1;
		return k;
	}
	static char demangled[1 << 16], shortened[4096];
	int was_mangled = pw_demangle(mangled, demangled, sizeof demangled);
	k->mangled = was_mangled ? (int64_t)name : -1;
	k->demangled = was_mangled ? add_string(x, demangled) : (int64_t)name;
	short_name(was_mangled ? demangled : mangled, shortened, sizeof shortened);
	k->short_name = strcmp(shortened, was_mangled ? demangled : mangled) == 0 ? k->demangled
										   : add_string(x, shortened);
	return k;
}

/* The name of a CUDA call CUPTI saw, once in StringIds. */
static int64_t cupti_api_name(struct export *x, int driver, uint32_t cbid)
{
	int added;
	int64_t at = pw_keys_add(&x->api_name_keys, (uint64_t)!!driver << 32 | cbid, &added);
	if (at < 0 || (added && pw_reserve(&x->api_names, &x->api_names_cap, (size_t)at + 1, sizeof *x->api_names))) {
		x->failed = 1;
		return 0;
	}
	if (added)
		x->api_names[at] = add_string(x, pw_cupti_api_name(driver, cbid));
	return x->api_names[at];
}

/* The image's calls that enqueued GPU work (the GPU events' launchers), before its calls are written, and
 * the CUDA calls only CUPTI saw (a library launching through the driver) as PROFWRAP_CUPTI_API rows. */
static void note_launches(struct export *x, size_t gpus, size_t gpus_end)
{
	for (size_t i = gpus; i < gpus_end; i++) {
		const struct pw_tl_gpu *g = &x->tl->gpus[i];
		int added;
		if (g->source == PW_ACT_SRC_API && g->src_tid) {
			if (pw_keys_add(&x->api_keys, g->corr, &added) < 0) {
				x->failed = 1;
				return;
			}
			if (!added)
				continue;
			struct cell *st = begin_row(x, ST_CUPTI_API);
			bind_int(st, 1, rel(x, g->src_t0));
			bind_int(st, 2, rel(x, g->src_t1));
			bind_int(st, 3, global_tid(x->proc->pid, g->src_tid));
			bind_int(st, 4, cupti_api_name(x, g->src_driver, g->src_cbid));
			bind_int(st, 5, g->corr);
			bind_int(st, 6, g->src_driver);
			end_row(x, st);
			continue;
		}
		if (pw_tl_launches_note(&x->launches, g) < 0) {
			x->failed = 1;
			return;
		}
	}
}

static int kind_has_fd(enum pw_event_kind k)
{
	return k == PW_K_OPEN || k == PW_K_CLOSE || k == PW_K_READ || k == PW_K_WRITE || k == PW_K_MMAP ||
	       k == PW_K_STAT_FD || k == PW_K_DIR_READ;
}

static void write_call(struct export *x, const struct pw_tl_call *c)
{
	const struct pw_event_info *info = &pw_events[c->type];
	uint32_t tid = x->tl->threads[c->thread].tid;
	struct cell *st = begin_row(x, ST_CALL);
	bind_int(st, 1, rel(x, c->t0));
	bind_int(st, 2, rel(x, c->t1));
	bind_int(st, 3, global_tid(x->proc->pid, tid));
	bind_int(st, 4, event_name(x, c->type));
	bind_int(st, 5, info->domain);
	const struct pw_tl_launch *l = c->api != PW_TL_NONE ? pw_tl_launches_find(&x->launches, tid, c->t0) : NULL;
	if (l)
		bind_int(st, 6, l->corr);
	bind_int(st, 7, c->ret);
	if (c->err && c->err != PW_ERR_NO_ERRNO && c->api == PW_TL_NONE)
		bind_int(st, 8, c->err);
	if (kind_has_fd(info->kind))
		bind_int(st, 9, (int64_t)c->arg0);
	if (info->kind == PW_K_READ || info->kind == PW_K_WRITE)
		bind_int(st, 10, (int64_t)c->arg1);
	if (c->path != PW_TL_NONE && c->api == PW_TL_NONE) {
		if (c->path & PW_TL_FILE)
			bind_int(st, 11, c->path & ~PW_TL_FILE);
		else
			bind_int(st, 12, c->path);
	}
	if (c->stack_ref) {
		uint32_t stack = pw_stacks_lookup(x->stacks, tid, c->t0, c->stack_ref);
		if (stack != PW_STACKS_NONE)
			bind_int(st, 13, stack);
	}
	end_row(x, st);
}

static void bind_gpu_common(struct export *x, struct cell *st, const struct pw_tl_gpu *g)
{
	bind_int(st, 1, rel(x, g->t0));
	bind_int(st, 2, rel(x, g->t1));
	bind_int(st, 3, g->device);
	bind_int(st, 5, x->tl->streams[g->stream].stream);
	bind_int(st, 6, g->corr);
	bind_int(st, 7, global_pid(x->proc->pid));
}

static void write_gpu(struct export *x, const struct pw_tl_gpu *g)
{
	struct cell *st;
	if (g->kind == PW_K_ACT_KERNEL) {
		const struct kernel_names *k = kernel_names(x, g->name);
		struct pw_kernel_use use = pw_get_kernel_use(g->arg0, 0);
		struct pw_dims d = pw_get_dims(g->a);
		st = begin_row(x, ST_KERNEL);
		bind_gpu_common(x, st, g);
		bind_int(st, 8, k->demangled);
		bind_int(st, 9, k->short_name);
		if (k->mangled >= 0)
			bind_int(st, 10, k->mangled);
		bind_int(st, 11, use.registers);
		for (int i = 0; i < 3; i++) {
			bind_int(st, 12 + i, d.grid[i]);
			bind_int(st, 15 + i, d.block[i]);
		}
		bind_int(st, 18, use.shared_bytes);
	} else if (g->kind == PW_K_ACT_MEMCPY) {
		struct pw_act_copy where = pw_get_act_memcpy(g->arg1);
		st = begin_row(x, ST_MEMCPY);
		bind_gpu_common(x, st, g);
		bind_int(st, 8, (int64_t)g->arg0);
		bind_int(st, 9, cupti_copy_kind(where.dir));
		bind_int(st, 10, where.src);
		bind_int(st, 11, where.dst);
		if (where.dir == PW_COPY_PEER) {
			bind_int(st, 12, (int32_t)g->a[0]);
			bind_int(st, 13, (int32_t)(g->a[0] >> 32));
		}
	} else {
		struct pw_act_copy where = pw_get_act_memset(g->arg1);
		st = begin_row(x, ST_MEMSET);
		bind_gpu_common(x, st, g);
		bind_int(st, 8, where.value);
		bind_int(st, 9, (int64_t)g->arg0);
		bind_int(st, 10, where.dst);
	}
	end_row(x, st);
}

/* An NVTX payload in nsys's column for its type (nvtxPayloadType_t: 1 uint64, 2 int64, 3 double, 4 uint32,
 * 5 int32, 6 float). */
static void bind_payload(struct cell *st, uint32_t type, uint64_t payload)
{
	union {
		uint64_t u;
		double d;
		float f;
		uint32_t u32;
	} v = {.u = payload};
	switch (type) {
	case 1: bind_int(st, 12, (int64_t)payload); break;
	case 2: bind_int(st, 13, (int64_t)payload); break;
	case 3: bind_double(st, 14, v.d); break;
	case 4: bind_int(st, 15, (uint32_t)payload); break;
	case 5: bind_int(st, 16, (int32_t)payload); break;
	case 6: bind_double(st, 17, v.f); break;
	default: break;
	}
}

/* A range from r, ended at t1 by thread end_tid when has_end. */
static void write_nvtx_row(struct export *x, const struct pw_tl_range *r, int type, uint64_t t1, int has_end,
			   uint32_t end_tid)
{
	struct cell *st = begin_row(x, ST_NVTX);
	bind_int(st, 1, rel(x, r->t0));
	if (has_end)
		bind_int(st, 2, rel(x, t1));
	bind_int(st, 3, type);
	if (type == NSYS_NVTX_START_END)
		bind_int(st, 4, (int64_t)r->id);
	bind_int(st, 5, (int64_t)r->category);
	bind_text(st, 7, pw_tl_string(x->tl, r->name));
	bind_int(st, 8, global_tid(x->proc->pid, r->tid));
	if (has_end)
		bind_int(st, 9, global_tid(x->proc->pid, end_tid));
	if (r->name != PW_TL_NONE)
		bind_int(st, 10, r->name);
	bind_int(st, 11, r->domain);
	bind_payload(st, r->payload_type, r->payload);
	end_row(x, st);
}

/* A push/pop range or a mark as one row; a start/end range as one row at its end (or at the image's end,
 * with no end, when it never ended). */
static void write_range(struct export *x, size_t i)
{
	const struct pw_tl_range *r = &x->tl->ranges[i];
	if (r->ph == 'X') {
		write_nvtx_row(x, r, NSYS_NVTX_PUSH_POP, r->t1, 1, r->tid);
	} else if (r->ph == 'i') {
		write_nvtx_row(x, r, NSYS_NVTX_MARK, 0, 0, 0);
	} else if (r->ph == 'b') {
		int added;
		int64_t at = pw_keys_add(&x->start_keys, r->id, &added);
		if (at < 0 || pw_reserve(&x->starts, &x->starts_cap, (size_t)at + 1, sizeof *x->starts)) {
			x->failed = 1;
			return;
		}
		if (!added && x->starts[at] != SIZE_MAX) /* an id reused while open: the first never ended */
			write_nvtx_row(x, &x->tl->ranges[x->starts[at]], NSYS_NVTX_START_END, 0, 0, 0);
		x->starts[at] = i;
	} else {
		int64_t at = pw_keys_find(&x->start_keys, r->id);
		if (at < 0 || x->starts[at] == SIZE_MAX)
			return;
		write_nvtx_row(x, &x->tl->ranges[x->starts[at]], NSYS_NVTX_START_END, r->t0, 1, r->tid);
		x->starts[at] = SIZE_MAX;
	}
}

static void write_open_starts(struct export *x)
{
	for (size_t at = 0; at < x->start_keys.n; at++)
		if (x->starts[at] != SIZE_MAX)
			write_nvtx_row(x, &x->tl->ranges[x->starts[at]], NSYS_NVTX_START_END, 0, 0, 0);
}

static void write_sample(struct export *x, const struct pw_tl_sample *s)
{
	struct cell *st = begin_row(x, ST_SAMPLE);
	bind_int(st, 1, rel(x, s->t0));
	bind_int(st, 2, global_tid(x->proc->pid, s->tid));
	bind_int(st, 3, (int64_t)s->period_ns);
	bind_int(st, 4, (int64_t)s->cpu_ns);
	uint32_t stack = pw_stacks_lookup(x->stacks, s->tid, s->t0, s->stack_ref);
	if (stack != PW_STACKS_NONE)
		bind_int(st, 5, stack);
	end_row(x, st);
}

/* Cursors into the timeline: an image's events follow the previous image's. */
struct cursors {
	size_t calls, gpus, ranges, samples;
};

static size_t advance(size_t from, size_t n, uint32_t image, uint32_t (*image_of)(const struct pw_timeline *, size_t),
		      const struct pw_timeline *tl)
{
	while (from < n && image_of(tl, from) == image)
		from++;
	return from;
}

static uint32_t call_image(const struct pw_timeline *tl, size_t i)
{
	return tl->threads[tl->calls[i].thread].image;
}

static uint32_t gpu_image(const struct pw_timeline *tl, size_t i)
{
	return tl->streams[tl->gpus[i].stream].image;
}

static uint32_t range_image(const struct pw_timeline *tl, size_t i)
{
	return tl->ranges[i].image;
}

static uint32_t sample_image(const struct pw_timeline *tl, size_t i)
{
	return tl->samples[i].image;
}

/* Skips to image's first event of a kind (images are appended in the order they are read, so every kind's
 * events are in image order). */
static size_t skip_to(size_t from, size_t n, uint32_t image, uint32_t (*image_of)(const struct pw_timeline *, size_t),
		      const struct pw_timeline *tl)
{
	while (from < n && image_of(tl, from) < image)
		from++;
	return from;
}

static void write_image(struct export *x, const struct pw_proc *p, struct cursors *c)
{
	const struct pw_timeline *tl = x->tl;
	uint32_t im = p->timeline_image;
	x->proc = p;
	x->stacks = pw_stacks_image(x->r->stacks, p);
	size_t g0 = skip_to(c->gpus, tl->ngpus, im, gpu_image, tl), g1 = advance(g0, tl->ngpus, im, gpu_image, tl);
	note_launches(x, g0, g1);
	size_t c0 = skip_to(c->calls, tl->ncalls, im, call_image, tl);
	size_t c1 = advance(c0, tl->ncalls, im, call_image, tl);
	for (size_t i = c0; i < c1 && !x->failed; i++)
		write_call(x, &tl->calls[i]);
	for (size_t i = g0; i < g1 && !x->failed; i++)
		write_gpu(x, &tl->gpus[i]);
	size_t r0 = skip_to(c->ranges, tl->nranges, im, range_image, tl);
	size_t r1 = advance(r0, tl->nranges, im, range_image, tl);
	for (size_t i = r0; i < r1 && !x->failed; i++)
		write_range(x, i);
	write_open_starts(x);
	size_t s0 = skip_to(c->samples, tl->nsamples, im, sample_image, tl);
	size_t s1 = advance(s0, tl->nsamples, im, sample_image, tl);
	for (size_t i = s0; i < s1 && !x->failed; i++)
		write_sample(x, &tl->samples[i]);
	*c = (struct cursors){c1, g1, r1, s1};
	pw_tl_launches_reset(&x->launches);
	pw_keys_free(&x->api_keys);
	pw_keys_free(&x->start_keys);
}

static void write_meta(struct export *x, const char *name, const char *text, int64_t value)
{
	struct cell *st = begin_row(x, ST_META);
	bind_text(st, 1, name);
	if (text)
		bind_text(st, 2, text);
	else
		bind_int(st, 2, value);
	end_row(x, st);
}

static void write_model_tables(struct export *x)
{
	const struct pw_rank_report *r = x->r;
	write_meta(x, "rank", NULL, r->rank);
	write_meta(x, "worldSize", NULL, r->world_size > 0 ? r->world_size : 1);
	write_meta(x, "host", r->host ? r->host : "", 0);
	write_meta(x, "command", r->command ? r->command : "", 0);
	write_meta(x, "startMonotonicNs", NULL, (int64_t)r->start_ns);
	write_meta(x, "startRealtimeNs", NULL, (int64_t)r->start_realtime_ns);
	write_meta(x, "wallNs", NULL, (int64_t)r->wall_ns);
	write_meta(x, "formatVersion", NULL, PW_FORMAT_VERSION);
	write_meta(x, "timeUnit", "ns since the rank's start", 0);
	for (int d = 0; d < PW_DOM_COUNT; d++) {
		struct cell *st = begin_row(x, ST_DOMAIN);
		bind_int(st, 1, d);
		bind_text(st, 2, pw_domain_names[d]);
		end_row(x, st);
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct pw_proc *p = &r->procs[i];
		struct cell *st = begin_row(x, ST_PROCESS);
		bind_int(st, 1, global_pid(p->pid));
		bind_int(st, 2, p->pid);
		bind_int(st, 3, p->ppid);
		bind_int(st, 4, p->rank);
		bind_text(st, 5, p->exe);
		bind_text(st, 6, p->argv);
		bind_int(st, 7, rel(x, p->start_ns));
		bind_int(st, 8, rel(x, p->end_ns));
		if (p->exit_code >= 0)
			bind_int(st, 9, p->exit_code);
		if (p->signal)
			bind_int(st, 10, p->signal);
		bind_int(st, 11, (int64_t)p->threads);
		bind_int(st, 12, (int64_t)p->events);
		bind_int(st, 13, (int64_t)p->dropped);
		end_row(x, st);
		/* its main thread named by its program, as nsys names threads by their comm */
		const char *exe = p->exe && *p->exe ? p->exe : p->argv;
		if (exe) {
			const char *base = strrchr(exe, '/');
			st = begin_row(x, ST_THREAD_NAME);
			bind_int(st, 1, add_string(x, base ? base + 1 : exe));
			bind_int(st, 3, global_tid(p->pid, (uint32_t)p->pid));
			end_row(x, st);
		}
	}
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct pw_file_stat *f = &r->files[i];
		struct cell *st = begin_row(x, ST_FILE);
		bind_int(st, 1, (int64_t)i);
		bind_text(st, 2, f->path ? f->path : "?");
		bind_int(st, 3, f->stream);
		bind_int(st, 4, (int64_t)f->opens);
		bind_int(st, 5, (int64_t)f->reads);
		bind_int(st, 6, (int64_t)f->writes);
		bind_int(st, 7, (int64_t)f->read_bytes);
		bind_int(st, 8, (int64_t)f->write_bytes);
		bind_int(st, 9, (int64_t)f->time_ns);
		bind_int(st, 10, (int64_t)f->meta_ns);
		bind_int(st, 11, (int64_t)f->stats);
		bind_int(st, 12, (int64_t)f->dir_reads);
		end_row(x, st);
	}
	const struct pw_stack_report *sr = r->stacks;
	for (size_t s = 0; sr && s < sr->nstacks && !x->failed; s++) {
		const struct pw_stack_entry *e = &sr->stacks[s];
		for (uint32_t d = 0; d < e->len; d++) {
			const struct pw_stack_frame *f = &sr->frames[sr->frame_ids[e->first + d]];
			struct cell *st = begin_row(x, ST_FRAME);
			bind_int(st, 1, (int64_t)s);
			bind_int(st, 2, d);
			bind_text(st, 3, f->function);
			bind_text(st, 4, f->file);
			if (f->line)
				bind_int(st, 5, f->line);
			bind_text(st, 6, f->module);
			bind_int(st, 7, f->python);
			end_row(x, st);
		}
	}
}

/* The GPUs the rank used, as CUPTI described them (nsys's memoryBandwidth is in bytes per second). */
static void write_gpus(struct export *x)
{
	const struct pw_act_report *act = x->r->act;
	for (size_t i = 0; act && i < act->ndevices; i++) {
		const struct pw_act_device *d = &act->devices[i];
		struct cell *st = begin_row(x, ST_GPU);
		bind_int(st, 1, d->id);
		if (d->has_info) {
			bind_text(st, 2, d->name);
			bind_int(st, 3, (int64_t)d->memory_bytes);
			bind_int(st, 4, (int64_t)d->bandwidth_kbps * 1000);
			bind_int(st, 5, d->sms);
			bind_int(st, 6, d->cc_major);
			bind_int(st, 7, d->cc_minor);
		}
		end_row(x, st);
	}
}

static int exec_sql(struct export *x, const char *sql)
{
	if (sqlite3_exec(x->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		x->failed = 1;
	return x->failed ? -1 : 0;
}

static void write_enums(struct export *x)
{
	char sql[256];
	for (size_t i = 0; i < sizeof copy_kinds / sizeof copy_kinds[0]; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (%d,'%s','%s')", copy_kinds[i].id,
			 copy_kinds[i].name, copy_kinds[i].label);
		exec_sql(x, sql);
	}
	for (size_t i = 0; i < sizeof mem_kinds / sizeof mem_kinds[0]; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (%d,'%s','%s')", mem_kinds[i].id,
			 mem_kinds[i].name, mem_kinds[i].label);
		exec_sql(x, sql);
	}
}

/* nsys's call tables, as views of PROFWRAP_CALLS by domain; eventClass holds profwrap's domain
 * (PROFWRAP_DOMAINS). CUDA calls only CUPTI saw are runtime calls too. */
static void write_views(struct export *x)
{
	char sql[1024];
	static const char calls[] = "SELECT start, end, domainId AS eventClass, globalTid, correlationId, nameId";
	snprintf(sql, sizeof sql,
		 "CREATE VIEW OSRT_API AS %s, returnValue, 0 AS nestingLevel, callchainId FROM PROFWRAP_CALLS"
		 " WHERE domainId IN (%d,%d,%d,%d,%d,%d);",
		 calls, PW_DOM_IO, PW_DOM_STDIO, PW_DOM_PROCESS, PW_DOM_DL, PW_DOM_WAIT, PW_DOM_META);
	exec_sql(x, sql);
	snprintf(sql, sizeof sql,
		 "CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS %s, returnValue, callchainId FROM PROFWRAP_CALLS"
		 " WHERE domainId = %d UNION ALL SELECT start, end, %d AS eventClass, globalTid, correlationId, nameId,"
		 " NULL AS returnValue, NULL AS callchainId FROM PROFWRAP_CUPTI_API;",
		 calls, PW_DOM_CUDART, PW_DOM_CUDART);
	exec_sql(x, sql);
	snprintf(sql, sizeof sql,
		 "CREATE VIEW CUBLAS_EVENTS AS %s FROM PROFWRAP_CALLS WHERE domainId IN (%d,%d);"
		 "CREATE VIEW CUDNN_EVENTS AS %s FROM PROFWRAP_CALLS WHERE domainId = %d;",
		 calls, PW_DOM_CUBLAS, PW_DOM_CUBLASLT, calls, PW_DOM_CUDNN);
	exec_sql(x, sql);
}

/* A table's INSERTs: inserts[s] for one row, and the same with batch VALUES lists. */
static int prepare_table(struct export *x, enum stmt s)
{
	struct table *t = &x->tables[s];
	const char *values = strstr(inserts[s], "(?");
	for (const char *c = values; *c; c++)
		t->cols += *c == '?';
	t->batch = s == ST_STRING ? 1 : BATCH_ROWS;
	size_t list = strlen(values), head = (size_t)(values - inserts[s]);
	char *sql = malloc(head + (size_t)t->batch * (list + 1) + 1);
	t->cells = calloc((size_t)t->batch * (size_t)t->cols, sizeof *t->cells);
	if (!sql || !t->cells) {
		free(sql);
		return -1;
	}
	char *at = sql + head;
	memcpy(sql, inserts[s], head);
	for (int r = 0; r < t->batch; r++) {
		if (r)
			*at++ = ',';
		memcpy(at, values, list);
		at += list;
	}
	*at = '\0';
	int rc = sqlite3_prepare_v3(x->db, inserts[s], -1, SQLITE_PREPARE_PERSISTENT, &t->one, NULL) == SQLITE_OK &&
			 sqlite3_prepare_v3(x->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->many, NULL) == SQLITE_OK
		 ? 0
		 : -1;
	free(sql);
	return rc;
}

static int open_db(struct export *x, const char *tmp)
{
	if (sqlite3_open_v2(tmp, &x->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return -1;
	/* one writer and a file made anew: no journal, no syncs until the end, pages large for fast appends */
	if (exec_sql(x, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			"PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536; PRAGMA temp_store=MEMORY;") < 0 ||
	    exec_sql(x, schema) < 0 || exec_sql(x, "BEGIN") < 0)
		return -1;
	for (int s = 0; s < ST_COUNT; s++)
		if (prepare_table(x, (enum stmt)s) < 0)
			return -1;
	return 0;
}

static void close_db(struct export *x)
{
	for (int s = 0; s < ST_COUNT; s++) {
		sqlite3_finalize(x->tables[s].one);
		sqlite3_finalize(x->tables[s].many);
		free(x->tables[s].cells);
	}
	if (x->db)
		sqlite3_close(x->db);
	pw_keys_free(&x->kernel_keys);
	pw_keys_free(&x->api_name_keys);
	free(x->api_names);
	pw_tl_launches_free(&x->launches);
	pw_keys_free(&x->api_keys);
	pw_keys_free(&x->start_keys);
	free(x->kernels);
	free(x->starts);
}

/* The images in the order the timeline numbered them, each with its process. */
static void write_images(struct export *x)
{
	const struct pw_rank_report *r = x->r;
	const struct pw_proc **procs = calloc(x->tl->nimages ? x->tl->nimages : 1, sizeof *procs);
	if (!procs) {
		x->failed = 1;
		return;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].timeline_image < x->tl->nimages)
			procs[r->procs[i].timeline_image] = &r->procs[i];
	struct cursors c = {0};
	for (size_t im = 0; im < x->tl->nimages && !x->failed; im++)
		if (procs[im])
			write_image(x, procs[im], &c);
	free(procs);
}

int pw_write_rank_sqlite(const struct pw_analysis *a, const struct pw_rank_report *r, const char *path, char *err,
			 size_t errlen)
{
	(void)a;
	static const struct pw_timeline empty = {.image = PW_TL_NONE};
	/* one thread writes, and sqlite3 keeps no counts: no locks or statistics per row (refused, harmlessly,
	 * once sqlite3 is in use) */
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	char tmp[4400];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = pw_create_file(tmp); /* made anew with the reports' mode, never through a planted link */
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	struct export x = {.r = r, .tl = r->timeline ? r->timeline : &empty};
	int rc = open_db(&x, tmp);
	if (rc == 0) {
		write_timeline_strings(&x);
		write_model_tables(&x);
		write_gpus(&x);
		write_enums(&x);
		write_images(&x);
		write_views(&x);
		for (int s = 0; s < ST_COUNT; s++)
			flush(&x, (enum stmt)s);
		rc = x.failed ? -1 : exec_sql(&x, "COMMIT");
	}
	const char *why = x.db ? sqlite3_errmsg(x.db) : "out of memory";
	if (rc < 0)
		snprintf(err, errlen, "cannot write %s: %s", path, x.failed && !strcmp(why, "not an error") ? "out of memory" : why);
	close_db(&x);
	if (rc == 0 && rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	return rc;
}
