/* fakeblas.h: the matrix product shared by the fake cuBLAS and cuBLASLt (compiled into each; static). Column
 * major, as cuBLAS: element (i, j) of a matrix with leading dimension ld is at i + j * ld. */
#ifndef FAKEBLAS_H
#define FAKEBLAS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>
#include <library_types.h>

#include "fakegpu.h"

/* IEEE binary16 <-> binary32, round to nearest even. */
static inline float fb_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
	float f;

	if (exp == 0 && man == 0) {
		bits = sign;
	} else if (exp == 0) { /* subnormal: normalise */
		exp = 127 - 15 + 1;
		while (!(man & 0x400u)) {
			man <<= 1;
			exp--;
		}
		bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | (man << 13);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline uint16_t fb_float_to_half(float f)
{
	uint32_t x, sign, ax;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u); /* NaN */
	if (ax >= 0x477ff000u)
		return (uint16_t)(sign | 0x7c00u); /* >= 65520: infinity */
	if (ax >= 0x38800000u) {            /* normal */
		uint32_t r = ax - 0x38000000u;

		r += 0xfffu + ((r >> 13) & 1u);
		return (uint16_t)(sign | (r >> 13));
	} else { /* subnormal or zero: units of 2^-24 */
		uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e, q, rem, half;

		if (shift > 24)
			return (uint16_t)sign;
		q = m >> shift;
		rem = m & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (q & 1u)))
			q++;
		return (uint16_t)(sign | q);
	}
}

static inline size_t fb_type_size(cudaDataType t)
{
	switch (t) {
	case CUDA_R_16F: return 2;
	case CUDA_R_32F: return 4;
	case CUDA_R_64F: return 8;
	default: return 0;
	}
}

static inline double fb_load(const void *p, cudaDataType t, int64_t i)
{
	switch (t) {
	case CUDA_R_16F: return fb_half_to_float(((const uint16_t *)p)[i]);
	case CUDA_R_32F: return ((const float *)p)[i];
	default: return ((const double *)p)[i];
	}
}

static inline void fb_store(void *p, cudaDataType t, int64_t i, double v)
{
	switch (t) {
	case CUDA_R_16F: ((uint16_t *)p)[i] = fb_float_to_half((float)v); break;
	case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
	default: ((double *)p)[i] = v; break;
	}
}

/* Whether cuBLAS supports this compute type with these matrix types (the fakes know the real 16F, 32F and
 * 64F cases), and the type of alpha and beta it implies, into *scale. */
static inline int fb_types_ok(cublasComputeType_t ct, cudaDataType a, cudaDataType b, cudaDataType c,
			      cudaDataType *scale)
{
	if (a != b)
		return 0;
	switch (ct) {
	case CUBLAS_COMPUTE_16F:
	case CUBLAS_COMPUTE_16F_PEDANTIC:
		*scale = CUDA_R_16F;
		return a == CUDA_R_16F && c == CUDA_R_16F;
	case CUBLAS_COMPUTE_32F:
	case CUBLAS_COMPUTE_32F_PEDANTIC:
	case CUBLAS_COMPUTE_32F_FAST_16F:
	case CUBLAS_COMPUTE_32F_FAST_16BF:
	case CUBLAS_COMPUTE_32F_FAST_TF32:
		*scale = CUDA_R_32F;
		return (a == CUDA_R_32F && c == CUDA_R_32F) || (a == CUDA_R_16F && (c == CUDA_R_16F || c == CUDA_R_32F));
	case CUBLAS_COMPUTE_64F:
	case CUBLAS_COMPUTE_64F_PEDANTIC:
		*scale = CUDA_R_64F;
		return a == CUDA_R_64F && c == CUDA_R_64F;
	default:
		return 0;
	}
}

/* D = alpha * op(A) * op(B) + beta * C, op(A) m x k, op(B) k x n. C is not read when beta is 0, A and B not
 * when alpha is 0 (BLAS). D may be C (same layout). Products above FAKEGPU_GEMM_MAX_MACS multiply-adds
 * (default 2^30) are timed but not computed, so a large shape in a test cannot take minutes. */
struct fb_gemm {
	cublasOperation_t ta, tb;
	int64_t m, n, k;
	cudaDataType at, bt, ct, dt;
	int acc64; /* accumulate in double (64F compute), else in float */
	double alpha, beta;
	const void *A, *B, *C;
	void *D;
	int64_t lda, ldb, ldc, ldd;
	int relu;         /* cuBLASLt epilogue */
	const void *bias; /* cuBLASLt epilogue: m elements of type dt, NULL: none */
};

/* GCC vectorises the inner loop below at -O3 only (its -O2 cost model refuses loops that need a remainder);
 * clang does at -O2. */
#if defined(__GNUC__) && !defined(__clang__)
#define FB_VECTORIZE __attribute__((optimize("O3")))
#else
#define FB_VECTORIZE
#endif

/* All-float32 products: the same arithmetic as the general loop below (each sum accumulated in float over l
 * in order, then alpha and beta applied in double), with op(A) made contiguous and the sums of a column kept
 * side by side so the inner loop runs over memory in order. 0, or -1 when out of memory. */
FB_VECTORIZE static inline int fb_gemm_f32(const struct fb_gemm *g)
{
	const float *A = g->A, *B = g->B, *C = g->C;
	float *D = g->D, *at = NULL, *restrict acc;
	int64_t lda = g->lda;

	if (g->ta != CUBLAS_OP_N && g->alpha != 0 && g->k > 0) {
		at = malloc((size_t)g->m * (size_t)g->k * sizeof(float));
		if (at == NULL)
			return -1;
		for (int64_t l = 0; l < g->k; l++)
			for (int64_t i = 0; i < g->m; i++)
				at[i + l * g->m] = A[l + i * g->lda];
		A = at;
		lda = g->m;
	}
	acc = malloc((size_t)g->m * sizeof(float));
	if (acc == NULL) {
		free(at);
		return -1;
	}
	for (int64_t j = 0; j < g->n; j++) {
		memset(acc, 0, (size_t)g->m * sizeof(float));
		if (g->alpha != 0) {
			for (int64_t l = 0; l < g->k; l++) {
				float b = g->tb == CUBLAS_OP_N ? B[l + j * g->ldb] : B[j + l * g->ldb];
				const float *restrict a = A + l * lda;

				for (int64_t i = 0; i < g->m; i++)
					acc[i] += a[i] * b;
			}
		}
		for (int64_t i = 0; i < g->m; i++) {
			double v = g->alpha * (double)acc[i];

			if (g->beta != 0)
				v += g->beta * (double)C[i + j * g->ldc];
			if (g->bias != NULL)
				v += (double)((const float *)g->bias)[i];
			if (g->relu && v < 0)
				v = 0;
			D[i + j * g->ldd] = (float)v;
		}
	}
	free(acc);
	free(at);
	return 0;
}

static inline void fb_gemm(const struct fb_gemm *g)
{
	double limit = fakegpu_env_double("FAKEGPU_GEMM_MAX_MACS", 1073741824.0);

	if ((double)g->m * (double)g->n * (double)g->k > limit)
		return;
	if (g->at == CUDA_R_32F && g->bt == CUDA_R_32F && g->ct == CUDA_R_32F && g->dt == CUDA_R_32F && !g->acc64 &&
	    fb_gemm_f32(g) == 0)
		return;
	for (int64_t j = 0; j < g->n; j++) {
		for (int64_t i = 0; i < g->m; i++) {
			double acc = 0, v;
			float facc = 0;

			if (g->alpha != 0) {
				for (int64_t l = 0; l < g->k; l++) {
					double a = fb_load(g->A, g->at, g->ta == CUBLAS_OP_N ? i + l * g->lda : l + i * g->lda);
					double b = fb_load(g->B, g->bt, g->tb == CUBLAS_OP_N ? l + j * g->ldb : j + l * g->ldb);

					if (g->acc64)
						acc += a * b;
					else
						facc += (float)a * (float)b;
				}
			}
			v = g->alpha * (g->acc64 ? acc : (double)facc);
			if (g->beta != 0)
				v += g->beta * fb_load(g->C, g->ct, i + j * g->ldc);
			if (g->bias != NULL)
				v += fb_load(g->bias, g->dt, i);
			if (g->relu && v < 0)
				v = 0;
			fb_store(g->D, g->dt, i + j * g->ldd, v);
		}
	}
}

/* Device time of a product of this many flops: FAKEGPU_FLOPS flop/s (default 1e13), at least 1 us. */
static inline uint64_t fb_gemm_ns(double flops)
{
	double ns = flops / (fakegpu_env_double("FAKEGPU_FLOPS", 1e13) / 1e9);

	return ns < 1000 ? 1000 : (uint64_t)ns;
}

#endif /* FAKEBLAS_H */
