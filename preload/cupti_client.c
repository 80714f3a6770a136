/* CUPTI as another client in the process calls it: torch.profiler's Kineto, linked into libtorch, imports
 * libcupti's activity API, and CUPTI has one set of buffer callbacks, enabled kinds and settings for the whole
 * process. The calls of another client that change them are wrapped, only watched: before the first one goes
 * through, profwrap steps back (pw_cupti_other_client, cupti.c), so that neither client gets the other's
 * buffers, records, clock or settings. profwrap's own calls reach libcupti through the handle it opened, not
 * through these symbols, and anything called while the internal guard is held is passed straight through.
 *
 * Queries, flushes and external correlation ids change nothing of profwrap's and are not wrapped; nor is
 * cuptiSubscribe (the callback API): libraries subscribe without ever recording activity. */
#define _GNU_SOURCE
#include <cupti_activity.h>

#include "pw_gpu.h"

#define PW_CUPTI_CLIENT_CALL(name, params, args)                                                          \
	PW_GPU_DEFINE(CUPTI, CUptiResult, name, params)                                                   \
	{                                                                                                 \
		PW_GPU_RESOLVE(name, CUPTI_ERROR_NOT_INITIALIZED);                                        \
		if (pw_self.guard != PW_GUARD_INTERNAL && pw_cupti_other_client)                          \
			pw_cupti_other_client(#name);                                                     \
		return real_##name args;                                                                  \
	}

PW_CUPTI_CLIENT_CALL(cuptiActivityRegisterCallbacks,
		     (CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed),
		     (requested, completed))
PW_CUPTI_CLIENT_CALL(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))
PW_CUPTI_CLIENT_CALL(cuptiActivityDisable, (CUpti_ActivityKind kind), (kind))
PW_CUPTI_CLIENT_CALL(cuptiActivityEnableContext, (CUcontext context, CUpti_ActivityKind kind), (context, kind))
PW_CUPTI_CLIENT_CALL(cuptiActivityDisableContext, (CUcontext context, CUpti_ActivityKind kind), (context, kind))
PW_CUPTI_CLIENT_CALL(cuptiActivityEnableAndDump, (CUpti_ActivityKind kind), (kind))
PW_CUPTI_CLIENT_CALL(cuptiActivityEnableRuntimeApi, (CUpti_CallbackId cbid, uint8_t enable), (cbid, enable))
PW_CUPTI_CLIENT_CALL(cuptiActivityEnableDriverApi, (CUpti_CallbackId cbid, uint8_t enable), (cbid, enable))
PW_CUPTI_CLIENT_CALL(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc fn), (fn))
PW_CUPTI_CLIENT_CALL(cuptiActivitySetAttribute, (CUpti_ActivityAttribute attr, size_t *size, void *value),
		     (attr, size, value))
PW_CUPTI_CLIENT_CALL(cuptiActivityFlushPeriod, (uint32_t ms), (ms))
PW_CUPTI_CLIENT_CALL(cuptiSetThreadIdType, (CUpti_ActivityThreadIdType type), (type))
PW_CUPTI_CLIENT_CALL(cuptiFinalize, (void), ())
