/* Writing raw traces for the tests of their reader and of the analysis: each helper asserts that the write
 * went through. Include after <cmocka.h> and collector/lib/rawfile.h. */
#ifndef PW_TEST_RAW_WRITER_H
#define PW_TEST_RAW_WRITER_H

#include <string.h>

static inline void put_chunk(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	assert_int_equal(pw_raw_write_chunk(fd, type, a, alen, b, blen), 0);
}

/* PROC chunk: the struct, then argv (argv_len bytes, may hold NULs), exe and host. */
static inline void put_proc(int fd, struct pw_raw_proc p, const char *argv, uint32_t argv_len, const char *exe,
		     const char *host)
{
	p.argv_len = argv_len;
	p.exe_len = (uint32_t)strlen(exe);
	p.host_len = (uint32_t)strlen(host);
	char strs[512];
	size_t n = (size_t)p.argv_len + p.exe_len + p.host_len;
	assert_true(n <= sizeof strs);
	memcpy(strs, argv, p.argv_len);
	memcpy(strs + p.argv_len, exe, p.exe_len);
	memcpy(strs + p.argv_len + p.exe_len, host, p.host_len);
	put_chunk(fd, PW_CHUNK_PROC, &p, sizeof p, strs, n);
}

static inline void put_string(int fd, uint64_t ref, const char *s)
{
	struct pw_raw_string h = {ref, (uint32_t)strlen(s), 0};
	put_chunk(fd, PW_CHUNK_STRING, &h, sizeof h, s, strlen(s));
}

static inline void put_clock(int fd, uint64_t ticks, uint64_t ns)
{
	struct pw_clock_pair p = {ticks, ns};
	put_chunk(fd, PW_CHUNK_CLOCK, &p, sizeof p, NULL, 0);
}

static inline void put_records(int fd, const struct pw_rec_call *r, size_t n)
{
	put_chunk(fd, PW_CHUNK_RECORDS, r, n * sizeof *r, NULL, 0);
}

static inline void put_lost(int fd, uint32_t lane, uint64_t total)
{
	struct pw_raw_lost l = {lane, 0, total};
	put_chunk(fd, PW_CHUNK_LOST, &l, sizeof l, NULL, 0);
}

static inline void put_end(int fd, const struct pw_raw_end *e)
{
	put_chunk(fd, PW_CHUNK_END, e, sizeof *e, NULL, 0);
}

static inline struct pw_rec_call mkrec(uint16_t type, uint32_t tid, uint64_t t0, uint64_t t1, int64_t ret, uint64_t arg0,
				uint64_t arg1, uint8_t err)
{
	struct pw_rec_call r;
	memset(&r, 0, sizeof r);
	r.h.type = type;
	r.h.size8 = sizeof r / 8;
	r.h.err = err;
	r.h.tid = tid;
	r.t0 = t0;
	r.t1 = t1;
	r.ret = ret;
	r.arg0 = arg0;
	r.arg1 = arg1;
	return r;
}

/* A GPU library call record (struct pw_rec_api): the common part as mkrec, h.err PW_ERR_NO_ERRNO when
 * failed, stream 0 and device 0; the kind's fields (sub, a[]) are set by the caller. */
static inline struct pw_rec_api mkapi(uint16_t type, uint32_t tid, uint64_t t0, uint64_t t1, int64_t ret, uint64_t arg0,
			       uint64_t arg1, int failed)
{
	struct pw_rec_api r;
	memset(&r, 0, sizeof r);
	r.c = mkrec(type, tid, t0, t1, ret, arg0, arg1, failed ? PW_ERR_NO_ERRNO : 0);
	r.c.h.size8 = sizeof r / 8;
	return r;
}

static inline void put_api_records(int fd, const struct pw_rec_api *r, size_t n)
{
	put_chunk(fd, PW_CHUNK_RECORDS, r, n * sizeof *r, NULL, 0);
}

/* A GPU activity record (struct pw_rec_gpu): t0/t1 in CLOCK_MONOTONIC ns as the reader delivers them (no
 * clock conversion), the delivering thread tid; a[] and context are set by the caller. */
static inline struct pw_rec_gpu mkact(uint16_t type, uint32_t tid, uint64_t t0_ns, uint64_t t1_ns, int32_t device,
				      uint32_t stream, uint32_t correlation, uint64_t arg0, uint64_t arg1)
{
	struct pw_rec_gpu r;
	memset(&r, 0, sizeof r);
	r.c = mkrec(type, tid, t0_ns, t1_ns, 0, arg0, arg1, 0);
	r.c.h.size8 = sizeof r / 8;
	r.device = device;
	r.stream = stream;
	r.correlation = correlation;
	return r;
}

static inline void put_act_records(int fd, const struct pw_rec_gpu *r, size_t n)
{
	put_chunk(fd, PW_CHUNK_RECORDS, r, n * sizeof *r, NULL, 0);
}

#endif
