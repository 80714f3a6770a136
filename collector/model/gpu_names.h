/* Names and sizes of the GPU libraries' enumerations, for the reports. The collector builds on machines
 * without CUDA, so these are small tables of our own, with the values of the CUDA 13 / cuDNN 9 / NCCL 2
 * headers (driver_types.h, cublas_api.h, cudnn_graph.h, nccl.h, library_types.h); no CUDA header is
 * included. Values the tables do not know get a generic name with the number. */
#ifndef PW_GPU_NAMES_H
#define PW_GPU_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pw_record.h"

/* The name of status code `code` as the library of domain `dom` names it ("cudaErrorMemoryAllocation",
 * "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_BAD_PARAM", "ncclInvalidArgument"), or NULL when the table
 * does not know it. cuBLASLt shares cuBLAS's cublasStatus_t. */
const char *pw_gpu_status_name(enum pw_domain dom, int64_t code);
/* "cudaErrorMemoryAllocation (2)"; an unknown code: "cudaError_t 1234" (the library's type and the number). */
void pw_gpu_format_status(char *buf, size_t len, enum pw_domain dom, int64_t code);

/* cudaDataType_t: "CUDA_R_32F", or NULL; its element size in bits (4-bit and 6-bit types exist), 0 if
 * unknown; whether it is complex (CUDA_C_*). */
const char *pw_cuda_dtype_name(unsigned t);
unsigned pw_cuda_dtype_bits(unsigned t);
int pw_cuda_dtype_is_complex(unsigned t);
/* The name, or "type N". */
void pw_cuda_format_dtype(char *buf, size_t len, unsigned t);

/* ncclDataType_t: "ncclFloat32" or NULL; its size in bytes, 0 if unknown. */
const char *pw_nccl_dtype_name(unsigned t);
unsigned pw_nccl_dtype_size(unsigned t);
/* ncclRedOp_t: "sum", "prod", "max", "min", "avg", or NULL (values from ncclNumOps on are ops the program
 * created, such as ncclRedOpCreatePreMulSum: "user op"). */
const char *pw_nccl_redop_name(unsigned op);

/* Whether a kernel name (as CUPTI gives it: mangled, or plain for extern "C") is one of NCCL's device
 * kernels: ncclDevKernel_* and ncclSymkDevKernel_* (NCCL 2.19 and later), ncclKernel_* (before). */
int pw_is_nccl_kernel(const char *name, size_t len);

/* cublasOperation_t: "N", "T", "C", "CONJG", or "?". */
const char *pw_cublas_op_name(unsigned op);

/* cudnnBackendDescriptorType_t t: the operation's short name ("ConvolutionForward", "Pointwise",
 * "Matmul", "SdpaFwd"), or NULL for a value the table does not know. */
const char *pw_cudnn_descriptor_name(unsigned t);
/* The operations of a cudnnBackendExecute plan, from the PW_K_DNN mask (bit t for each descriptor type t,
 * bit 63 for one the preload could not name), joined by '+' in bit order: "ConvolutionForward+Pointwise";
 * "type44" for a bit the table does not know, "unknown" for bit 63, "(none)" for an empty mask. Cut with
 * "..." when it does not fit len. */
void pw_cudnn_format_ops(char *buf, size_t len, uint64_t mask);

/* enum pw_mem: "device", "device (stream-ordered)", "host pinned", "host registered", "managed", or
 * "unknown". */
const char *pw_gpu_mem_name(unsigned mem);

/* Copy directions as the reports name them. */
enum pw_gpu_dir {
	PW_DIR_HTOD,
	PW_DIR_DTOH,
	PW_DIR_DTOD,
	PW_DIR_HTOH,
	PW_DIR_PTOP,
	PW_DIR_COUNT
};
/* "HtoD", "DtoH", "DtoD", "HtoH", "PtoP". */
const char *pw_gpu_dir_name(enum pw_gpu_dir d);

/* enum pw_act_mem (CUpti_ActivityMemoryKind) as the reports name it: "pageable", "pinned", "device",
 * "array", "managed", "device_static", "managed_static", "unknown" (also for values past the table). */
const char *pw_act_mem_name(unsigned kind);
/* enum pw_copy_dir of a GPU copy record: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", or "other" (the copy kinds
 * CUPTI reports that have no direction of ours, and values past the table). */
const char *pw_copy_dir_name(unsigned dir);

/* The name of a CUDA call CUPTI saw (its callback id, CUpti_driver_api_trace_cbid or
 * CUpti_runtime_api_trace_cbid) for the calls that launch work; "CUDA driver call" or "CUDA runtime call" for
 * the others. */
const char *pw_cupti_api_name(int driver, uint32_t cbid);

#endif
