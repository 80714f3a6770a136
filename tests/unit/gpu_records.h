/* GPU records for the tests of what is made from them (the trace, the SQLite export): a wrapped launch, a kernel,
 * the external correlation that ties them, a CUDA call as CUPTI saw it. Include after raw_writer.h. */
#ifndef PW_TEST_GPU_RECORDS_H
#define PW_TEST_GPU_RECORDS_H

#define CUPTI_TID 4242 /* the thread that delivers activity buffers */

/* A wrapped cudaLaunchKernel (grid 4x1x1, block 128x1x1) whose external correlation id is corr. */
static inline struct pw_rec_api launch(uint32_t tid, uint64_t t0, uint64_t t1, uint64_t corr, uint64_t name_ref)
{
	struct pw_rec_api r = mkapi(PW_EV_CUDA_LAUNCH_KERNEL, tid, t0, t1, 0, 0x4000, name_ref, 0);
	pw_put_dims(r.a, (struct pw_dims){.grid = {4, 1, 1}, .block = {128, 1, 1}});
	r.corr = corr;
	return r;
}

/* A kernel of grid 128x2x1, block 256x1x1, 32 registers a thread and 1024 bytes of shared memory. */
static inline struct pw_rec_gpu kernel(uint64_t t0, uint64_t t1, int32_t device, uint32_t stream, uint32_t corr,
				       uint64_t name_ref)
{
	struct pw_rec_gpu r = mkact(PW_EV_GPU_KERNEL, CUPTI_TID, t0, t1, device, stream, corr,
				    32 | (uint64_t)1024 << 32, name_ref);
	pw_put_dims(r.a, (struct pw_dims){.grid = {128, 2, 1}, .block = {256, 1, 1}});
	return r;
}

/* CUPTI's word that its correlation id corr was made while the external id ext was pushed. */
static inline struct pw_rec_gpu extcorr(uint32_t corr, uint64_t ext)
{
	return mkact(PW_EV_GPU_EXTCORR, CUPTI_TID, 0, 0, -1, 0, corr, ext, 1);
}

/* A CUDA call as CUPTI saw it, made by thread tid. */
static inline struct pw_rec_gpu cupti_api(uint32_t tid, uint64_t t0, uint64_t t1, uint32_t corr, uint32_t cbid,
					  int driver)
{
	struct pw_rec_gpu r = mkact(PW_EV_GPU_API, CUPTI_TID, t0, t1, -1, 0, corr, cbid,
				    driver ? PW_ACT_API_DRIVER : PW_ACT_API_RUNTIME);
	r.a[0] = tid;
	return r;
}

#endif
