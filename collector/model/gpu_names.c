/* Names and sizes of the GPU libraries' enumerations (see gpu_names.h). The values are those of the CUDA 13
 * headers (driver_types.h, cublas_api.h, library_types.h), cuDNN 9 (cudnn_graph.h) and NCCL 2 (nccl.h); the
 * values of these enumerations are stable across releases (they are part of the libraries' ABI). */
#define _GNU_SOURCE
#include "gpu_names.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct code_name {
	int32_t code;
	const char *name;
};

/* cudaError_t (driver_types.h) */
static const struct code_name cuda_errors[] = {
	{0, "cudaSuccess"},
	{1, "cudaErrorInvalidValue"},
	{2, "cudaErrorMemoryAllocation"},
	{3, "cudaErrorInitializationError"},
	{4, "cudaErrorCudartUnloading"},
	{5, "cudaErrorProfilerDisabled"},
	{6, "cudaErrorProfilerNotInitialized"},
	{7, "cudaErrorProfilerAlreadyStarted"},
	{8, "cudaErrorProfilerAlreadyStopped"},
	{9, "cudaErrorInvalidConfiguration"},
	{12, "cudaErrorInvalidPitchValue"},
	{13, "cudaErrorInvalidSymbol"},
	{16, "cudaErrorInvalidHostPointer"},
	{17, "cudaErrorInvalidDevicePointer"},
	{18, "cudaErrorInvalidTexture"},
	{19, "cudaErrorInvalidTextureBinding"},
	{20, "cudaErrorInvalidChannelDescriptor"},
	{21, "cudaErrorInvalidMemcpyDirection"},
	{22, "cudaErrorAddressOfConstant"},
	{23, "cudaErrorTextureFetchFailed"},
	{24, "cudaErrorTextureNotBound"},
	{25, "cudaErrorSynchronizationError"},
	{26, "cudaErrorInvalidFilterSetting"},
	{27, "cudaErrorInvalidNormSetting"},
	{28, "cudaErrorMixedDeviceExecution"},
	{31, "cudaErrorNotYetImplemented"},
	{32, "cudaErrorMemoryValueTooLarge"},
	{34, "cudaErrorStubLibrary"},
	{35, "cudaErrorInsufficientDriver"},
	{36, "cudaErrorCallRequiresNewerDriver"},
	{37, "cudaErrorInvalidSurface"},
	{43, "cudaErrorDuplicateVariableName"},
	{44, "cudaErrorDuplicateTextureName"},
	{45, "cudaErrorDuplicateSurfaceName"},
	{46, "cudaErrorDevicesUnavailable"},
	{49, "cudaErrorIncompatibleDriverContext"},
	{52, "cudaErrorMissingConfiguration"},
	{53, "cudaErrorPriorLaunchFailure"},
	{65, "cudaErrorLaunchMaxDepthExceeded"},
	{66, "cudaErrorLaunchFileScopedTex"},
	{67, "cudaErrorLaunchFileScopedSurf"},
	{68, "cudaErrorSyncDepthExceeded"},
	{69, "cudaErrorLaunchPendingCountExceeded"},
	{98, "cudaErrorInvalidDeviceFunction"},
	{100, "cudaErrorNoDevice"},
	{101, "cudaErrorInvalidDevice"},
	{102, "cudaErrorDeviceNotLicensed"},
	{103, "cudaErrorSoftwareValidityNotEstablished"},
	{127, "cudaErrorStartupFailure"},
	{200, "cudaErrorInvalidKernelImage"},
	{201, "cudaErrorDeviceUninitialized"},
	{205, "cudaErrorMapBufferObjectFailed"},
	{206, "cudaErrorUnmapBufferObjectFailed"},
	{207, "cudaErrorArrayIsMapped"},
	{208, "cudaErrorAlreadyMapped"},
	{209, "cudaErrorNoKernelImageForDevice"},
	{210, "cudaErrorAlreadyAcquired"},
	{211, "cudaErrorNotMapped"},
	{212, "cudaErrorNotMappedAsArray"},
	{213, "cudaErrorNotMappedAsPointer"},
	{214, "cudaErrorECCUncorrectable"},
	{215, "cudaErrorUnsupportedLimit"},
	{216, "cudaErrorDeviceAlreadyInUse"},
	{217, "cudaErrorPeerAccessUnsupported"},
	{218, "cudaErrorInvalidPtx"},
	{219, "cudaErrorInvalidGraphicsContext"},
	{220, "cudaErrorNvlinkUncorrectable"},
	{221, "cudaErrorJitCompilerNotFound"},
	{222, "cudaErrorUnsupportedPtxVersion"},
	{223, "cudaErrorJitCompilationDisabled"},
	{224, "cudaErrorUnsupportedExecAffinity"},
	{225, "cudaErrorUnsupportedDevSideSync"},
	{226, "cudaErrorContained"},
	{300, "cudaErrorInvalidSource"},
	{301, "cudaErrorFileNotFound"},
	{302, "cudaErrorSharedObjectSymbolNotFound"},
	{303, "cudaErrorSharedObjectInitFailed"},
	{304, "cudaErrorOperatingSystem"},
	{400, "cudaErrorInvalidResourceHandle"},
	{401, "cudaErrorIllegalState"},
	{402, "cudaErrorLossyQuery"},
	{500, "cudaErrorSymbolNotFound"},
	{600, "cudaErrorNotReady"},
	{700, "cudaErrorIllegalAddress"},
	{701, "cudaErrorLaunchOutOfResources"},
	{702, "cudaErrorLaunchTimeout"},
	{703, "cudaErrorLaunchIncompatibleTexturing"},
	{704, "cudaErrorPeerAccessAlreadyEnabled"},
	{705, "cudaErrorPeerAccessNotEnabled"},
	{708, "cudaErrorSetOnActiveProcess"},
	{709, "cudaErrorContextIsDestroyed"},
	{710, "cudaErrorAssert"},
	{711, "cudaErrorTooManyPeers"},
	{712, "cudaErrorHostMemoryAlreadyRegistered"},
	{713, "cudaErrorHostMemoryNotRegistered"},
	{714, "cudaErrorHardwareStackError"},
	{715, "cudaErrorIllegalInstruction"},
	{716, "cudaErrorMisalignedAddress"},
	{717, "cudaErrorInvalidAddressSpace"},
	{718, "cudaErrorInvalidPc"},
	{719, "cudaErrorLaunchFailure"},
	{720, "cudaErrorCooperativeLaunchTooLarge"},
	{721, "cudaErrorTensorMemoryLeak"},
	{800, "cudaErrorNotPermitted"},
	{801, "cudaErrorNotSupported"},
	{802, "cudaErrorSystemNotReady"},
	{803, "cudaErrorSystemDriverMismatch"},
	{804, "cudaErrorCompatNotSupportedOnDevice"},
	{805, "cudaErrorMpsConnectionFailed"},
	{806, "cudaErrorMpsRpcFailure"},
	{807, "cudaErrorMpsServerNotReady"},
	{808, "cudaErrorMpsMaxClientsReached"},
	{809, "cudaErrorMpsMaxConnectionsReached"},
	{810, "cudaErrorMpsClientTerminated"},
	{811, "cudaErrorCdpNotSupported"},
	{812, "cudaErrorCdpVersionMismatch"},
	{900, "cudaErrorStreamCaptureUnsupported"},
	{901, "cudaErrorStreamCaptureInvalidated"},
	{902, "cudaErrorStreamCaptureMerge"},
	{903, "cudaErrorStreamCaptureUnmatched"},
	{904, "cudaErrorStreamCaptureUnjoined"},
	{905, "cudaErrorStreamCaptureIsolation"},
	{906, "cudaErrorStreamCaptureImplicit"},
	{907, "cudaErrorCapturedEvent"},
	{908, "cudaErrorStreamCaptureWrongThread"},
	{909, "cudaErrorTimeout"},
	{910, "cudaErrorGraphExecUpdateFailure"},
	{911, "cudaErrorExternalDevice"},
	{912, "cudaErrorInvalidClusterSize"},
	{913, "cudaErrorFunctionNotLoaded"},
	{914, "cudaErrorInvalidResourceType"},
	{915, "cudaErrorInvalidResourceConfiguration"},
	{999, "cudaErrorUnknown"},
};

/* cublasStatus_t (cublas_api.h), also cuBLASLt's */
static const struct code_name cublas_status[] = {
	{0, "CUBLAS_STATUS_SUCCESS"},
	{1, "CUBLAS_STATUS_NOT_INITIALIZED"},
	{3, "CUBLAS_STATUS_ALLOC_FAILED"},
	{7, "CUBLAS_STATUS_INVALID_VALUE"},
	{8, "CUBLAS_STATUS_ARCH_MISMATCH"},
	{11, "CUBLAS_STATUS_MAPPING_ERROR"},
	{13, "CUBLAS_STATUS_EXECUTION_FAILED"},
	{14, "CUBLAS_STATUS_INTERNAL_ERROR"},
	{15, "CUBLAS_STATUS_NOT_SUPPORTED"},
	{16, "CUBLAS_STATUS_LICENSE_ERROR"},
};

/* cudnnStatus_t (cudnn_graph.h); 2001 is the deprecated CUDNN_STATUS_INVALID_VALUE */
static const struct code_name cudnn_status[] = {
	{0, "CUDNN_STATUS_SUCCESS"},
	{1001, "CUDNN_STATUS_NOT_INITIALIZED"},
	{1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"},
	{1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"},
	{1004, "CUDNN_STATUS_DEPRECATED"},
	{1005, "CUDNN_STATUS_LICENSE_ERROR"},
	{1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"},
	{1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
	{1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"},
	{2000, "CUDNN_STATUS_BAD_PARAM"},
	{2001, "CUDNN_STATUS_INVALID_VALUE"},
	{2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER"},
	{2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER"},
	{2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED"},
	{2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"},
	{2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"},
	{2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"},
	{2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"},
	{2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES"},
	{2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE"},
	{2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH"},
	{2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE"},
	{3000, "CUDNN_STATUS_NOT_SUPPORTED"},
	{3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN"},
	{3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE"},
	{3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE"},
	{3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"},
	{3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"},
	{3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"},
	{3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"},
	{3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING"},
	{3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"},
	{3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"},
	{3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING"},
	{3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM"},
	{3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"},
	{3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"},
	{4000, "CUDNN_STATUS_INTERNAL_ERROR"},
	{4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"},
	{4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE"},
	{4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
	{4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
	{4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM"},
	{4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED"},
	{5000, "CUDNN_STATUS_EXECUTION_FAILED"},
	{5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"},
	{5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS"},
	{5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART"},
	{5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND"},
};

/* ncclResult_t (nccl.h) */
static const struct code_name nccl_results[] = {
	{0, "ncclSuccess"},
	{1, "ncclUnhandledCudaError"},
	{2, "ncclSystemError"},
	{3, "ncclInternalError"},
	{4, "ncclInvalidArgument"},
	{5, "ncclInvalidUsage"},
	{6, "ncclRemoteError"},
	{7, "ncclInProgress"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *find_code(const struct code_name *t, size_t n, int64_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *pw_gpu_status_name(enum pw_domain dom, int64_t code)
{
	switch (dom) {
	case PW_DOM_CUDART:
		return find_code(cuda_errors, COUNT(cuda_errors), code);
	case PW_DOM_CUBLAS:
	case PW_DOM_CUBLASLT:
		return find_code(cublas_status, COUNT(cublas_status), code);
	case PW_DOM_CUDNN:
		return find_code(cudnn_status, COUNT(cudnn_status), code);
	case PW_DOM_NCCL:
		return find_code(nccl_results, COUNT(nccl_results), code);
	default:
		return NULL;
	}
}

static const char *status_type(enum pw_domain dom)
{
	switch (dom) {
	case PW_DOM_CUDART:
		return "cudaError_t";
	case PW_DOM_CUBLAS:
	case PW_DOM_CUBLASLT:
		return "cublasStatus_t";
	case PW_DOM_CUDNN:
		return "cudnnStatus_t";
	case PW_DOM_NCCL:
		return "ncclResult_t";
	default:
		return "status";
	}
}

void pw_gpu_format_status(char *buf, size_t len, enum pw_domain dom, int64_t code)
{
	const char *name = pw_gpu_status_name(dom, code);
	if (name)
		snprintf(buf, len, "%s (%" PRId64 ")", name, code);
	else
		snprintf(buf, len, "%s %" PRId64, status_type(dom), code);
}

/* cudaDataType_t (library_types.h): name and element size in bits */
static const struct {
	const char *name;
	unsigned bits;
} cuda_dtypes[] = {
	[0] = {"CUDA_R_32F", 32},     [1] = {"CUDA_R_64F", 64},      [2] = {"CUDA_R_16F", 16},
	[3] = {"CUDA_R_8I", 8},       [4] = {"CUDA_C_32F", 64},      [5] = {"CUDA_C_64F", 128},
	[6] = {"CUDA_C_16F", 32},     [7] = {"CUDA_C_8I", 16},       [8] = {"CUDA_R_8U", 8},
	[9] = {"CUDA_C_8U", 16},      [10] = {"CUDA_R_32I", 32},     [11] = {"CUDA_C_32I", 64},
	[12] = {"CUDA_R_32U", 32},    [13] = {"CUDA_C_32U", 64},     [14] = {"CUDA_R_16BF", 16},
	[15] = {"CUDA_C_16BF", 32},   [16] = {"CUDA_R_4I", 4},       [17] = {"CUDA_C_4I", 8},
	[18] = {"CUDA_R_4U", 4},      [19] = {"CUDA_C_4U", 8},       [20] = {"CUDA_R_16I", 16},
	[21] = {"CUDA_C_16I", 32},    [22] = {"CUDA_R_16U", 16},     [23] = {"CUDA_C_16U", 32},
	[24] = {"CUDA_R_64I", 64},    [25] = {"CUDA_C_64I", 128},    [26] = {"CUDA_R_64U", 64},
	[27] = {"CUDA_C_64U", 128},   [28] = {"CUDA_R_8F_E4M3", 8},  [29] = {"CUDA_R_8F_E5M2", 8},
	[30] = {"CUDA_R_8F_UE8M0", 8}, [31] = {"CUDA_R_6F_E2M3", 6}, [32] = {"CUDA_R_6F_E3M2", 6},
	[33] = {"CUDA_R_4F_E2M1", 4},
};

const char *pw_cuda_dtype_name(unsigned t)
{
	return t < COUNT(cuda_dtypes) ? cuda_dtypes[t].name : NULL;
}

unsigned pw_cuda_dtype_bits(unsigned t)
{
	return t < COUNT(cuda_dtypes) ? cuda_dtypes[t].bits : 0;
}

int pw_cuda_dtype_is_complex(unsigned t)
{
	const char *name = pw_cuda_dtype_name(t);
	return name && strncmp(name, "CUDA_C_", 7) == 0;
}

void pw_cuda_format_dtype(char *buf, size_t len, unsigned t)
{
	const char *name = pw_cuda_dtype_name(t);
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "type %u", t);
}

/* ncclDataType_t (nccl.h) */
static const struct {
	const char *name;
	unsigned size;
} nccl_dtypes[] = {
	{"ncclInt8", 1},     {"ncclUint8", 1},    {"ncclInt32", 4},      {"ncclUint32", 4},
	{"ncclInt64", 8},    {"ncclUint64", 8},   {"ncclFloat16", 2},    {"ncclFloat32", 4},
	{"ncclFloat64", 8},  {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
};

const char *pw_nccl_dtype_name(unsigned t)
{
	return t < COUNT(nccl_dtypes) ? nccl_dtypes[t].name : NULL;
}

unsigned pw_nccl_dtype_size(unsigned t)
{
	return t < COUNT(nccl_dtypes) ? nccl_dtypes[t].size : 0;
}

const char *pw_nccl_redop_name(unsigned op)
{
	static const char *const names[] = {"sum", "prod", "max", "min", "avg"};
	if (op < COUNT(names))
		return names[op];
	return "user op";
}

const char *pw_cublas_op_name(unsigned op)
{
	static const char *const names[] = {"N", "T", "C", "CONJG"};
	return op < COUNT(names) ? names[op] : "?";
}

/* cudnnBackendDescriptorType_t (cudnn_graph.h), without CUDNN_BACKEND_, OPERATION_ and _DESCRIPTOR */
static const char *const cudnn_descriptors[] = {
	"PointwiseDesc",        /* 0 POINTWISE (the descriptor, not the operation) */
	"ConvolutionDesc",      /* 1 CONVOLUTION */
	"Engine",               /* 2 */
	"EngineCfg",            /* 3 */
	"EngineHeur",           /* 4 */
	"ExecutionPlan",        /* 5 */
	"IntermediateInfo",     /* 6 */
	"KnobChoice",           /* 7 */
	"KnobInfo",             /* 8 */
	"LayoutInfo",           /* 9 */
	"ConvolutionForward",   /* 10 OPERATION_CONVOLUTION_FORWARD */
	"ConvolutionBackwardFilter",
	"ConvolutionBackwardData",
	"Pointwise",            /* 13 OPERATION_POINTWISE */
	"GenStats",
	"OperationGraph",       /* 15 */
	"VariantPack",
	"Tensor",
	"MatmulDesc",           /* 18 MATMUL (the descriptor, not the operation) */
	"Matmul",               /* 19 OPERATION_MATMUL */
	"BnFinalizeStatistics", /* 20 */
	"ReductionDesc",        /* 21 REDUCTION */
	"Reduction",            /* 22 OPERATION_REDUCTION */
	"BnBwdWeights",
	"ResampleDesc",         /* 24 RESAMPLE */
	"ResampleFwd",
	"ResampleBwd",
	"Concat",
	"Signal",
	"NormForward",
	"NormBackward",         /* 30 */
	"Reshape",
	"RngDesc",              /* 32 RNG */
	"Rng",                  /* 33 OPERATION_RNG */
	"KernelCache",
	"PagedCacheLoad",
	"BlockScaleQuantize",
	"BlockScaleDequantize",
	"DeviceProp",
	"ExpandBandMatrix",
	"ContractBandMatrix",   /* 40 */
	"SdpaFwd",
	"MoeGroupedMatmul",
	"SdpaBwd",              /* 43 */
};

const char *pw_cudnn_descriptor_name(unsigned t)
{
	return t < COUNT(cudnn_descriptors) ? cudnn_descriptors[t] : NULL;
}

void pw_cudnn_format_ops(char *buf, size_t len, uint64_t mask)
{
	if (!len)
		return;
	if (!mask) {
		snprintf(buf, len, "(none)");
		return;
	}
	size_t used = 0;
	buf[0] = 0;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(mask >> bit & 1))
			continue;
		char part[32];
		const char *name = bit == 63 ? "unknown" : pw_cudnn_descriptor_name(bit);
		if (!name) {
			snprintf(part, sizeof part, "type%u", bit);
			name = part;
		}
		int n = snprintf(buf + used, len - used, "%s%s", used ? "+" : "", name);
		if (n < 0 || (size_t)n >= len - used) {
			/* does not fit: end with "..." where there is room for it */
			if (len >= 4) {
				size_t at = used + 3 < len ? used : len - 4;
				snprintf(buf + at, len - at, "...");
			}
			return;
		}
		used += (size_t)n;
	}
}

const char *pw_gpu_dir_name(enum pw_gpu_dir d)
{
	static const char *const names[PW_DIR_COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
	return (unsigned)d < PW_DIR_COUNT ? names[d] : "?";
}

const char *pw_gpu_mem_name(unsigned mem)
{
	switch (mem) {
	case PW_MEM_DEVICE:
		return "device";
	case PW_MEM_DEVICE_ASYNC:
		return "device (stream-ordered)";
	case PW_MEM_HOST_PINNED:
		return "host pinned";
	case PW_MEM_HOST_REGISTERED:
		return "host registered";
	case PW_MEM_MANAGED:
		return "managed";
	default:
		return "unknown";
	}
}

const char *pw_act_mem_name(unsigned kind)
{
	static const char *const names[] = {
		[PW_ACT_MEM_UNKNOWN] = "unknown",     [PW_ACT_MEM_PAGEABLE] = "pageable",
		[PW_ACT_MEM_PINNED] = "pinned",       [PW_ACT_MEM_DEVICE] = "device",
		[PW_ACT_MEM_ARRAY] = "array",         [PW_ACT_MEM_MANAGED] = "managed",
		[PW_ACT_MEM_DEVICE_STATIC] = "device_static", [PW_ACT_MEM_MANAGED_STATIC] = "managed_static",
	};
	return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *pw_copy_dir_name(unsigned dir)
{
	switch (dir) {
	case PW_COPY_HTOH:
		return "HtoH";
	case PW_COPY_HTOD:
		return "HtoD";
	case PW_COPY_DTOH:
		return "DtoH";
	case PW_COPY_DTOD:
		return "DtoD";
	case PW_COPY_PEER:
		return "PtoP";
	default:
		return "other";
	}
}

int pw_is_nccl_kernel(const char *name, size_t len)
{
	static const char *const prefixes[] = {"ncclDevKernel_", "ncclSymkDevKernel_", "ncclKernel_"};
	size_t i = 0;
	if (!name)
		return 0;
	if (len >= 2 && name[0] == '_' && name[1] == 'Z') /* _Z<length of the name><name><parameters> */
		for (i = 2; i < len && name[i] >= '0' && name[i] <= '9'; i++)
			;
	for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++) {
		size_t n = strlen(prefixes[p]);
		if (len - i >= n && memcmp(name + i, prefixes[p], n) == 0)
			return 1;
	}
	return 0;
}

/* The name of a CUDA call CUPTI saw, for the calls that launch work (the numbers are CUPTI's callback ids,
 * CUpti_driver_api_trace_cbid and CUpti_runtime_api_trace_cbid, which never change meaning). */
const char *pw_cupti_api_name(int driver, uint32_t cbid)
{
	static const struct {
		uint16_t cbid;
		uint8_t driver;
		const char *name;
	} names[] = {
		{307, 1, "cuLaunchKernel"},        {442, 1, "cuLaunchKernel_ptsz"},
		{477, 1, "cuLaunchCooperativeKernel"}, {478, 1, "cuLaunchCooperativeKernel_ptsz"},
		{514, 1, "cuGraphLaunch"},         {515, 1, "cuGraphLaunch_ptsz"},
		{652, 1, "cuLaunchKernelEx"},      {653, 1, "cuLaunchKernelEx_ptsz"},
		{211, 0, "cudaLaunchKernel"},      {214, 0, "cudaLaunchKernel_ptsz"},
		{269, 0, "cudaLaunchCooperativeKernel"}, {270, 0, "cudaLaunchCooperativeKernel_ptsz"},
		{311, 0, "cudaGraphLaunch"},       {312, 0, "cudaGraphLaunch_ptsz"},
		{430, 0, "cudaLaunchKernelExC"},   {431, 0, "cudaLaunchKernelExC_ptsz"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].cbid == cbid && names[i].driver == !!driver)
			return names[i].name;
	return driver ? "CUDA driver call" : "CUDA runtime call";
}
