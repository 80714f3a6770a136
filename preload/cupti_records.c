/* CUPTI activity records -> struct pw_rec_gpu. See cupti_records.h. */
#include "cupti_records.h"

#include <stddef.h>
#include <string.h>

#if __has_include(<cupti_activity_deprecated.h>)
#include <cupti_activity_deprecated.h>
/* CUDA 12's libcupti writes the previous versions of these structs: every field read here must sit where
 * the CUDA 13 struct has it. */
#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f " moved")
#define SAME_KERNEL(f) SAME_OFFSET(CUpti_ActivityKernel10, CUpti_ActivityKernel9, f)
SAME_KERNEL(registersPerThread);
SAME_KERNEL(start);
SAME_KERNEL(end);
SAME_KERNEL(deviceId);
SAME_KERNEL(contextId);
SAME_KERNEL(streamId);
SAME_KERNEL(gridX);
SAME_KERNEL(blockZ);
SAME_KERNEL(staticSharedMemory);
SAME_KERNEL(dynamicSharedMemory);
SAME_KERNEL(correlationId);
SAME_KERNEL(name);
SAME_KERNEL(graphNodeId);
SAME_KERNEL(graphId);
#define SAME_MEMCPY(f) SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy5, f)
SAME_MEMCPY(copyKind);
SAME_MEMCPY(srcKind);
SAME_MEMCPY(dstKind);
SAME_MEMCPY(bytes);
SAME_MEMCPY(start);
SAME_MEMCPY(end);
SAME_MEMCPY(deviceId);
SAME_MEMCPY(contextId);
SAME_MEMCPY(streamId);
SAME_MEMCPY(correlationId);
#define SAME_PEER(f) SAME_OFFSET(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP3, f)
SAME_PEER(copyKind);
SAME_PEER(srcKind);
SAME_PEER(dstKind);
SAME_PEER(bytes);
SAME_PEER(start);
SAME_PEER(end);
SAME_PEER(deviceId);
SAME_PEER(contextId);
SAME_PEER(streamId);
SAME_PEER(srcDeviceId);
SAME_PEER(dstDeviceId);
SAME_PEER(correlationId);
#define SAME_MEMSET(f) SAME_OFFSET(CUpti_ActivityMemset4, CUpti_ActivityMemset3, f)
SAME_MEMSET(value);
SAME_MEMSET(bytes);
SAME_MEMSET(start);
SAME_MEMSET(end);
SAME_MEMSET(deviceId);
SAME_MEMSET(contextId);
SAME_MEMSET(streamId);
SAME_MEMSET(correlationId);
SAME_MEMSET(memoryKind);
#define SAME_OVERHEAD(f) SAME_OFFSET(CUpti_ActivityOverhead3, CUpti_ActivityOverhead2, f)
SAME_OVERHEAD(overheadKind);
SAME_OVERHEAD(objectKind);
SAME_OVERHEAD(objectId);
SAME_OVERHEAD(start);
SAME_OVERHEAD(end);
#define SAME_DEVICE(f) SAME_OFFSET(CUpti_ActivityDevice5, CUpti_ActivityDevice4, f)
SAME_DEVICE(globalMemoryBandwidth);
SAME_DEVICE(globalMemorySize);
SAME_DEVICE(numMultiprocessors);
SAME_DEVICE(computeCapabilityMajor);
SAME_DEVICE(computeCapabilityMinor);
SAME_DEVICE(id);
SAME_DEVICE(name);
#endif

static void set_times(struct pw_rec_gpu *out, uint64_t start, uint64_t end, int64_t ns_offset)
{
	if (start == 0 || end < start) {
		out->c.t0 = out->c.t1 = 0;
		return;
	}
	out->c.t0 = start + (uint64_t)ns_offset;
	out->c.t1 = end + (uint64_t)ns_offset;
}

static void init(struct pw_rec_gpu *out, enum pw_event ev, int32_t device, uint32_t context, uint32_t stream,
		 uint32_t correlation)
{
	memset(out, 0, sizeof *out);
	out->c.h.type = (uint16_t)ev;
	out->c.h.size8 = sizeof *out / 8;
	out->device = device;
	out->context = context;
	out->stream = stream;
	out->correlation = correlation;
}

/* CUpti_ActivityMemcpyKind -> enum pw_copy_dir: arrays are device memory. */
static unsigned copy_dir(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return PW_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return PW_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return PW_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return PW_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return PW_COPY_PEER;
	default:
		return PW_COPY_DEFAULT;
	}
}

int pw_cupti_convert(const CUpti_Activity *rec, struct pw_rec_gpu *out, int64_t ns_offset,
		     pw_cupti_intern_fn intern, void *ctx)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		init(out, PW_EV_GPU_KERNEL, (int32_t)k->deviceId, k->contextId, k->streamId, k->correlationId);
		set_times(out, k->start, k->end, ns_offset);
		out->c.arg1 = k->name ? intern(k->name, ctx) : 0;
		pw_put_kernel_use(out, (struct pw_kernel_use){
			.registers = k->registersPerThread,
			.shared_bytes = (uint32_t)k->staticSharedMemory + (uint32_t)k->dynamicSharedMemory,
			.graph = k->graphId,
			.graph_node = (uint32_t)k->graphNodeId,
		});
		pw_put_dims(out->a, (struct pw_dims){{(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ},
						     {(uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ}});
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
		init(out, PW_EV_GPU_MEMCPY, (int32_t)m->deviceId, m->contextId, m->streamId, m->correlationId);
		set_times(out, m->start, m->end, ns_offset);
		out->c.arg0 = m->bytes;
		out->c.arg1 = pw_put_act_memcpy((struct pw_act_copy){(uint8_t)copy_dir(m->copyKind), m->srcKind, m->dstKind, 0});
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
		init(out, PW_EV_GPU_MEMCPY, (int32_t)m->deviceId, m->contextId, m->streamId, m->correlationId);
		set_times(out, m->start, m->end, ns_offset);
		out->c.arg0 = m->bytes;
		out->c.arg1 = pw_put_act_memcpy((struct pw_act_copy){PW_COPY_PEER, m->srcKind, m->dstKind, 0});
		out->a[0] = pw_put_act_peer(m->srcDeviceId, m->dstDeviceId);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		init(out, PW_EV_GPU_MEMSET, (int32_t)m->deviceId, m->contextId, m->streamId, m->correlationId);
		set_times(out, m->start, m->end, ns_offset);
		out->c.arg0 = m->bytes;
		out->c.arg1 = pw_put_act_memset((struct pw_act_copy){.dst = (uint8_t)m->memoryKind, .value = m->value});
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		init(out, PW_EV_GPU_API, -1, 0, 0, a->correlationId);
		set_times(out, a->start, a->end, ns_offset);
		out->c.arg0 = a->cbid;
		out->c.arg1 = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? PW_ACT_API_RUNTIME : PW_ACT_API_DRIVER;
		out->c.ret = a->returnValue;
		out->a[0] = a->threadId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = (const CUpti_ActivityExternalCorrelation *)rec;
		if (x->externalKind != PW_CUPTI_EXT_KIND)
			return 0;
		init(out, PW_EV_GPU_EXTCORR, -1, 0, 0, x->correlationId);
		out->c.arg0 = x->externalId;
		out->c.arg1 = (uint64_t)x->externalKind;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = (const CUpti_ActivityOverhead3 *)rec;
		init(out, PW_EV_GPU_OVERHEAD, -1, 0, 0, 0);
		set_times(out, o->start, o->end, ns_offset);
		out->c.arg0 = (uint64_t)o->overheadKind;
		out->c.arg1 = (uint64_t)o->objectKind;
		if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
			out->a[0] = o->objectId.pt.threadId;
		else
			out->a[0] = o->objectId.dcs.deviceId;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE: {
		const CUpti_ActivityDevice5 *d = (const CUpti_ActivityDevice5 *)rec;
		init(out, PW_EV_GPU_DEVICE, (int32_t)d->id, 0, 0, 0);
		out->c.arg1 = d->name ? intern(d->name, ctx) : 0;
		out->c.arg0 = d->globalMemoryBandwidth;
		pw_put_device_info(out, (struct pw_device_info){d->globalMemorySize, d->numMultiprocessors,
								(uint16_t)d->computeCapabilityMajor,
								(uint16_t)d->computeCapabilityMinor});
		return 1;
	}
	default:
		return 0;
	}
}
