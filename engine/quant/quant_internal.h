/* engine/quant's own definitions, shared by its files. */
#ifndef NB_QUANT_INTERNAL_H
#define NB_QUANT_INTERNAL_H

/* The hot loops of the calibration (the search's scores, ARQ, the weights' dequantization)
 * built twice, for AVX2 and for the baseline, the copy picked at load for the CPU (GCC's
 * target_clones) -- AVX2 alone, not FMA: the same IEEE operations per element, so the
 * values do not depend on the copy taken (as engine/ref's NB_REF_AVX2_CLONES). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NB_QUANT_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NB_QUANT_AVX2_CLONES
#endif

#endif
