/* pw_cupti_convert: hand-made records of the real CUPTI structs (cupti_activity.h, CUDA 13, and the CUDA 12
 * versions that libcupti.so.12 writes) -> struct pw_rec_gpu. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cupti_activity.h>
#if __has_include(<cupti_activity_deprecated.h>)
#include <cupti_activity_deprecated.h>
#define HAVE_CUDA12_STRUCTS 1
#endif

#include "../../preload/cupti_records.h"

/* A fake arena: the reference is 1000 + the index of the pointer in a small table, so a test sees which
 * string was interned and how often. */
struct interned {
	const char *seen[8];
	int n;
	int calls;
};

static pw_strref intern(const char *s, void *ctx)
{
	struct interned *in = ctx;
	in->calls++;
	for (int i = 0; i < in->n; i++)
		if (in->seen[i] == s)
			return 1000u + (pw_strref)i;
	in->seen[in->n] = s;
	return 1000u + (pw_strref)in->n++;
}

static void test_kernel(void **state)
{
	(void)state;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 40;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 3072;
	k.start = 5000;
	k.end = 7500;
	k.deviceId = 3;
	k.contextId = 9;
	k.streamId = 14;
	k.gridX = 80;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.correlationId = 77;
	k.name = "_Z6matmulPfS_S_i";
	struct interned in = {{0}, 0, 0};
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 100, intern, &in), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_KERNEL);
	assert_int_equal(r.c.h.size8 * 8, sizeof r);
	assert_int_equal(r.c.h.tid, 0);
	assert_int_equal(r.c.t0, 5100);
	assert_int_equal(r.c.t1, 7600);
	assert_int_equal(r.device, 3);
	assert_int_equal(r.context, 9);
	assert_int_equal(r.stream, 14);
	assert_int_equal(r.correlation, 77);
	assert_int_equal(r.c.arg1, 1000);
	assert_ptr_equal(in.seen[0], k.name);
	assert_int_equal(r.c.arg0, 40u | (uint64_t)4096 << 32);
	assert_int_equal(r.a[0], 80u | (uint64_t)2 << 32);
	assert_int_equal(r.a[1], 1u | (uint64_t)256 << 32);
	assert_int_equal(r.a[2], 1u | (uint64_t)1 << 32);
	assert_true(pw_kind_is_activity(pw_events[r.c.h.type].kind));
	assert_int_equal(r.c.ret, 0); /* not a graph's */

	/* a node of a CUDA graph: graphId, and the low half of graphNodeId */
	k.graphId = 12;
	k.graphNodeId = (uint64_t)12 << 32 | 5;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 100, intern, &in), 1);
	assert_int_equal(r.c.ret, 12 | (int64_t)5 << 32);
	k.graphId = 0;
	k.graphNodeId = 0;

	/* the older KERNEL kind has the same layout; a nameless kernel interns nothing */
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	k.name = NULL;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 0, intern, &in), 1);
	assert_int_equal(r.c.arg1, 0);
	assert_int_equal(in.calls, 2); /* the two named conversions above */
	assert_int_equal(r.c.t0, 5000);
}

static void test_incomplete_times(void **state)
{
	(void)state;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	struct interned in = {{0}, 0, 0};
	struct pw_rec_gpu r;
	/* forced flush of a kernel that has not run: no times, and the offset is not added to nothing */
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 123456, intern, &in), 1);
	assert_int_equal(r.c.t0, 0);
	assert_int_equal(r.c.t1, 0);
	/* an end before the start is no interval either */
	k.start = 900;
	k.end = 800;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 0, intern, &in), 1);
	assert_int_equal(r.c.t0, 0);
	assert_int_equal(r.c.t1, 0);
	/* CUPTI's own clock ahead of ours: a negative offset */
	k.start = 10000;
	k.end = 10500;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, -4000, intern, &in), 1);
	assert_int_equal(r.c.t0, 6000);
	assert_int_equal(r.c.t1, 6500);
}

static void test_memcpy(void **state)
{
	(void)state;
	static const struct {
		uint8_t cupti;
		unsigned dir;
	} kinds[] = {
		{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, PW_COPY_HTOD}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, PW_COPY_DTOH},
		{CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, PW_COPY_HTOD}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, PW_COPY_DTOH},
		{CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, PW_COPY_DTOD}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, PW_COPY_DTOD},
		{CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, PW_COPY_HTOH}, {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, PW_COPY_PEER},
		{CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, PW_COPY_DEFAULT},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = kinds[i].cupti;
		m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.bytes = 8u << 20;
		m.start = 1000;
		m.end = 2000;
		m.deviceId = 1;
		m.contextId = 2;
		m.streamId = 7;
		m.correlationId = 501;
		struct pw_rec_gpu r;
		assert_int_equal(pw_cupti_convert((CUpti_Activity *)&m, &r, 0, intern, NULL), 1);
		assert_int_equal(r.c.h.type, PW_EV_GPU_MEMCPY);
		assert_int_equal(r.c.arg0, 8u << 20);
		assert_int_equal(r.c.arg1 & 0xff, kinds[i].dir);
		assert_int_equal((r.c.arg1 >> 8) & 0xff, PW_ACT_MEM_PAGEABLE);
		assert_int_equal((r.c.arg1 >> 16) & 0xff, PW_ACT_MEM_DEVICE);
		assert_int_equal(r.device, 1);
		assert_int_equal(r.stream, 7);
		assert_int_equal(r.correlation, 501);
		assert_int_equal(r.c.t1 - r.c.t0, 1000);
	}
	/* our memory kinds are CUPTI's values */
	assert_int_equal(PW_ACT_MEM_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
	assert_int_equal(PW_ACT_MEM_MANAGED, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
	assert_int_equal(PW_ACT_MEM_MANAGED_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
}

static void test_memset(void **state)
{
	(void)state;
	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0xab;
	m.bytes = 4096;
	m.start = 10;
	m.end = 30;
	m.deviceId = 0;
	m.streamId = 3;
	m.correlationId = 9;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&m, &r, 0, intern, NULL), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_MEMSET);
	assert_int_equal(r.c.arg0, 4096);
	assert_int_equal(r.c.arg1, 0xabu | (uint64_t)PW_ACT_MEM_DEVICE << 32);
	assert_int_equal(r.stream, 3);
	assert_int_equal(r.correlation, 9);
}

/* A copy between devices (MEMCPY2): a PtoP copy with both devices; the device it ran on is the record's. */
static void test_peer_copy(void **state)
{
	(void)state;
	CUpti_ActivityMemcpyPtoP4 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1 << 20;
	m.start = 100;
	m.end = 600;
	m.deviceId = 1;
	m.streamId = 5;
	m.srcDeviceId = 1;
	m.dstDeviceId = 3;
	m.correlationId = 77;
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&m, &r, 10, intern, NULL), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_MEMCPY);
	assert_int_equal(r.c.arg0, 1 << 20);
	assert_int_equal(r.c.arg1, PW_COPY_PEER | (uint64_t)PW_ACT_MEM_DEVICE << 8 | (uint64_t)PW_ACT_MEM_DEVICE << 16);
	assert_int_equal(r.a[0], 1u | (uint64_t)3 << 32);
	assert_int_equal(r.device, 1);
	assert_int_equal(r.stream, 5);
	assert_int_equal(r.correlation, 77);
	assert_int_equal(r.c.t0, 110);
	assert_int_equal(r.c.t1, 610);
}

static void test_api_and_correlation(void **state)
{
	(void)state;
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = 307; /* any callback id: it is passed on */
	a.start = 100;
	a.end = 180;
	a.processId = 4242;
	a.threadId = 4243;
	a.correlationId = 600;
	a.returnValue = 0;
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&a, &r, 0, intern, NULL), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_API);
	assert_int_equal(r.c.arg0, 307);
	assert_int_equal(r.c.arg1, PW_ACT_API_DRIVER);
	assert_int_equal(r.a[0], 4243);
	assert_int_equal(r.correlation, 600);
	assert_int_equal(r.device, -1);
	assert_int_equal(r.c.t0, 100);
	assert_int_equal(r.c.t1, 180);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.returnValue = 2;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&a, &r, 0, intern, NULL), 1);
	assert_int_equal(r.c.arg1, PW_ACT_API_RUNTIME);
	assert_int_equal(r.c.ret, 2);

	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof x);
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = PW_CUPTI_EXT_KIND;
	x.externalId = 0x123456789abcull;
	x.correlationId = 600;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&x, &r, 555, intern, NULL), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_EXTCORR);
	assert_int_equal(r.c.arg0, 0x123456789abcull);
	assert_int_equal(r.c.arg1, PW_CUPTI_EXT_KIND);
	assert_int_equal(r.correlation, 600);
	assert_int_equal(r.c.t0, 0); /* no times, and none invented from the offset */
	assert_int_equal(r.c.t1, 0);
	/* Kineto's kinds, and every other one, are not profwrap's */
	for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
		x.externalKind = (CUpti_ExternalCorrelationKind)k;
		assert_int_equal(pw_cupti_convert((CUpti_Activity *)&x, &r, 0, intern, NULL), k == PW_CUPTI_EXT_KIND);
	}
}

static void test_overhead_and_device(void **state)
{
	(void)state;
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof o);
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = 10;
	o.objectId.pt.threadId = 11;
	o.start = 1;
	o.end = 5;
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&o, &r, 0, intern, NULL), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_OVERHEAD);
	assert_int_equal(r.c.arg0, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);
	assert_int_equal(r.c.arg1, CUPTI_ACTIVITY_OBJECT_THREAD);
	assert_int_equal(r.a[0], 11);
	o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
	o.objectId.dcs.deviceId = 2;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&o, &r, 0, intern, NULL), 1);
	assert_int_equal(r.a[0], 2);

	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 1;
	d.name = "NVIDIA H100 80GB HBM3";
	d.globalMemoryBandwidth = 3352000000ull;
	d.globalMemorySize = 85ull << 30;
	d.numMultiprocessors = 132;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	struct interned in = {{0}, 0, 0};
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&d, &r, 0, intern, &in), 1);
	assert_int_equal(r.c.h.type, PW_EV_GPU_DEVICE);
	assert_int_equal(r.device, 1);
	assert_int_equal(r.c.arg1, 1000);
	assert_ptr_equal(in.seen[0], d.name);
	assert_int_equal(r.c.arg0, 3352000000ull);
	assert_int_equal(r.a[0], 85ull << 30);
	assert_int_equal(r.a[1], 132u | (uint64_t)9 << 32);
}

static void test_kinds_not_kept(void **state)
{
	(void)state;
	CUpti_Activity a;
	memset(&a, 0, sizeof a);
	static const CUpti_ActivityKind others[] = {CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_CONTEXT,
						    CUPTI_ACTIVITY_KIND_NAME, CUPTI_ACTIVITY_KIND_INVALID};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		a.kind = others[i];
		struct pw_rec_gpu r;
		assert_int_equal(pw_cupti_convert(&a, &r, 0, intern, NULL), 0);
	}
}

#ifdef HAVE_CUDA12_STRUCTS
/* What libcupti.so.12 writes: the previous struct versions, read through the same code. */
static void test_cuda12_records(void **state)
{
	(void)state;
	CUpti_ActivityKernel9 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 4000;
	k.deviceId = 2;
	k.streamId = 5;
	k.gridX = 7;
	k.blockZ = 3;
	k.correlationId = 99;
	k.name = "k12";
	struct interned in = {{0}, 0, 0};
	struct pw_rec_gpu r;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&k, &r, 0, intern, &in), 1);
	assert_int_equal(r.c.t1 - r.c.t0, 3000);
	assert_int_equal(r.device, 2);
	assert_int_equal(r.stream, 5);
	assert_int_equal(r.correlation, 99);
	assert_int_equal(r.a[0] & 0xffffffffu, 7);
	assert_int_equal(r.a[2] >> 32, 3);
	assert_ptr_equal(in.seen[0], k.name);

	CUpti_ActivityMemcpy5 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.bytes = 12345;
	m.start = 1;
	m.end = 2;
	m.correlationId = 3;
	assert_int_equal(pw_cupti_convert((CUpti_Activity *)&m, &r, 0, intern, &in), 1);
	assert_int_equal(r.c.arg0, 12345);
	assert_int_equal(r.c.arg1, PW_COPY_DTOH | PW_ACT_MEM_DEVICE << 8 | PW_ACT_MEM_PINNED << 16);
	assert_int_equal(r.correlation, 3);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_incomplete_times),
		cmocka_unit_test(test_memcpy),
		cmocka_unit_test(test_memset),
		cmocka_unit_test(test_peer_copy),
		cmocka_unit_test(test_api_and_correlation),
		cmocka_unit_test(test_overhead_and_device),
		cmocka_unit_test(test_kinds_not_kept),
#ifdef HAVE_CUDA12_STRUCTS
		cmocka_unit_test(test_cuda12_records),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
