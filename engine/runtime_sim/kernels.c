/* nanobench simulated NPU: the kernels (cube and vector) on data in its NPU layout. Every
 * operand was checked against its kernel at load (sim.c), so the indices below stay inside
 * each tensor's logical dims, whose layout size equals its bytes. Numerics:
 * share/doc/npu-numerics.md. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cube_simd.h"
#include "nb/ref.h"
#include "sim_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define TD(i_) (&m->x.t[(i_)])

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void odo_inc(int64_t *idx, const int32_t *dims, int rank)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

/* Row iteration: the offset of a row (all dims but the last at idx) and the table of the
   last dim's offsets; a rank-0 tensor is one row of one element at 0. */
static const int64_t zero_off[1] = {0};
static inline int64_t row_base(const nb_sim_model *m, const nb_exeom_tensor *t, const int64_t *idx)
{
    int64_t *const *o = m->off + 6 * (t - m->x.t);
    int64_t e = 0;
    for (int d = 0; d + 1 < t->rank; d++)
        e += o[d][idx[d]];
    return e;
}
static inline const int64_t *last_off(const nb_sim_model *m, const nb_exeom_tensor *t)
{
    return t->rank ? m->off[6 * (t - m->x.t) + t->rank - 1] : zero_off;
}
static inline int64_t last_dim(const nb_exeom_tensor *t) { return t->rank ? t->dims[t->rank - 1] : 1; }
static inline int64_t rows_of(const nb_exeom_tensor *t)
{
    int64_t r = 1;
    for (int d = 0; d + 1 < t->rank; d++)
        r *= t->dims[d];
    return r;
}
#define ROW_NEXT(idx, t) odo_inc((idx), (t)->dims, (t)->rank > 0 ? (t)->rank - 1 : 0)

static void flat_to_idx(int64_t i, const nb_exeom_tensor *t, int64_t *idx)
{
    for (int d = t->rank - 1; d >= 0; d--) {
        idx[d] = i % t->dims[d];
        i /= t->dims[d];
    }
}

static double *scratch(nb_sim_model *m, size_t n)
{
    if (n > m->scratch_n) {
        double *p = realloc(m->scratch, n * sizeof *p);
        if (!p)
            return NULL;
        m->scratch = p;
        m->scratch_n = n;
    }
    return m->scratch;
}

static double f16r(double v) { return F16V(sim_f16(v)); } /* round to fp16 */
static int32_t sat32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}
static float deq_at(const uint8_t *p, int64_t c) { return rdf(p + 8 * c); }

/* ---- copies in logical order (TransData, Cast, Reshape, Squeeze, ...) ---- */
static void copy_logical(const nb_sim_model *m, const nb_exeom_tensor *x, const uint8_t *xp, const nb_exeom_tensor *y,
                         uint8_t *yp)
{
    int64_t n = nb_sim_numel(y);
    bool flat_x = x->format != FMT_NC1HWC0 && x->format != FMT_NZ && x->format != FMT_FZ;
    bool flat_y = y->format != FMT_NC1HWC0 && y->format != FMT_NZ && y->format != FMT_FZ;
    if (flat_x && flat_y && x->dtype == y->dtype) {
        memmove(yp, xp, y->bytes);
        return;
    }
    if (x->rank == y->rank && !memcmp(x->dims, y->dims, sizeof(int32_t) * (size_t)x->rank)) {
        int64_t L = last_dim(x), rows = n ? rows_of(x) : 0, idx[6] = {0};
        const int64_t *ox = last_off(m, x), *oy = last_off(m, y);
        for (int64_t r = 0; r < rows; r++) {
            int64_t bx = row_base(m, x, idx), by = row_base(m, y, idx);
            if (x->dtype == DT_F16 && y->dtype == DT_F16)
                for (int64_t w = 0; w < L; w++)
                    wr16(yp + 2 * (by + oy[w]), rd16(xp + 2 * (bx + ox[w])));
            else
                for (int64_t w = 0; w < L; w++)
                    sim_store(y->dtype, yp, by + oy[w], sim_load(x->dtype, xp, bx + ox[w]));
            ROW_NEXT(idx, x);
        }
        return;
    }
    int64_t ix[6] = {0}, iy[6] = {0};
    for (int64_t i = 0; i < n; i++) {
        sim_store(y->dtype, yp, sim_ph(m, y, iy), sim_load(x->dtype, xp, sim_ph(m, x, ix)));
        odo_inc(ix, x->dims, x->rank);
        odo_inc(iy, y->dims, y->rank);
    }
}

/* ---- AscendQuant / AscendDequant ---- */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
/* The same AscendDequant on 16 channels x hw pixels with the F16C conversions, 8 lanes at
   a time (AVX2): one rounding to nearest even from fp32 as sim_f16f, the activation on the
   rounded value, then the fp16 bits fixed up as the scalar path writes them: an infinity
   (beyond 65504, also after LeakyRelu's product) clamps to +-65504 and is counted, a NaN is
   0x7E00. Results bit-identical to the scalar path. */
/* fp16 bits h with an all-ones exponent fixed up as sim_f16 writes them: an infinity to
   +-65504 (its sign kept; counted into *sat), a NaN to 0x7E00. The common case, no such
   lane, costs one test. */
__attribute__((target("avx2,f16c"))) static inline __m128i f16_fixup(__m128i h, uint64_t *sat)
{
    const __m128i expo = _mm_set1_epi16(0x7C00);
    __m128i top = _mm_cmpeq_epi16(_mm_and_si128(h, expo), expo);
    if (_mm_testz_si128(top, top))
        return h;
    __m128i zm = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x03FF)), _mm_setzero_si128());
    __m128i isinf = _mm_and_si128(top, zm), isnan = _mm_andnot_si128(zm, top);
    *sat += (uint64_t)__builtin_popcount((unsigned)_mm_movemask_epi8(isinf)) / 2;
    h = _mm_blendv_epi8(h, _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16((short)0x8000)),
                                        _mm_set1_epi16(0x7BFF)), isinf);
    return _mm_blendv_epi8(h, _mm_set1_epi16(0x7E00), isnan);
}

__attribute__((target("avx2,f16c"))) static void
dequant_block_avx2(const int32_t *acc, uint16_t *out, int64_t hw, const float *d16, int act,
                   float alpha)
{
    const __m256 zero = _mm256_setzero_ps(), a = _mm256_set1_ps(alpha);
    const __m256 d[2] = {_mm256_loadu_ps(d16), _mm256_loadu_ps(d16 + 8)};
    uint64_t sat = 0;
    for (int64_t p = 0; p < hw; p++)
        for (int q = 0; q < 2; q++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(acc + p * 16 + 8 * q));
            __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(v), d[q]);
            __m128i h = f16_fixup(_mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT), &sat);
            if (act == 1 || act == 2) { /* on the rounded (and clamped) value */
                __m256 yh = _mm256_cvtph_ps(h);
                if (act == 1) /* negatives and -0 to +0; a NaN stays */
                    yh = _mm256_andnot_ps(_mm256_cmp_ps(yh, zero, _CMP_LE_OQ), yh);
                else /* by the sign bit, as the scalar path: -0 too (-0 x alpha) */
                    yh = _mm256_blendv_ps(yh, _mm256_mul_ps(yh, a), yh);
                h = f16_fixup(_mm256_cvtps_ph(yh, _MM_FROUND_TO_NEAREST_INT), &sat);
            }
            _mm_storeu_si128((__m128i *)(void *)(out + p * 16 + 8 * q), h);
        }
    nb_sim_saturations += sat;
}

#define NB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))

/* f16_fixup on 16 lanes */
NB_AVX512 static inline __m256i f16_fixup16(__m256i h, uint64_t *sat)
{
    const __m256i expo = _mm256_set1_epi16(0x7C00);
    __m256i top = _mm256_cmpeq_epi16(_mm256_and_si256(h, expo), expo);
    if (_mm256_testz_si256(top, top))
        return h;
    __m256i zm = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x03FF)),
                                    _mm256_setzero_si256());
    __m256i isinf = _mm256_and_si256(top, zm), isnan = _mm256_andnot_si256(zm, top);
    *sat += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(isinf)) / 2;
    h = _mm256_blendv_epi8(h, _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16((short)0x8000)),
                                              _mm256_set1_epi16(0x7BFF)), isinf);
    return _mm256_blendv_epi8(h, _mm256_set1_epi16(0x7E00), isnan);
}

/* dequant_block_avx2 with the 16 channels of a pixel in one 512-bit register: the same
   operations per lane (fp32 product, one rounding to fp16, the activation on the rounded
   value, the same fix-ups), so the same bits */
NB_AVX512 static void dequant_block_avx512(const int32_t *acc, uint16_t *out, int64_t hw,
                                           const float *d16, int act, float alpha)
{
    const __m512 zero = _mm512_setzero_ps(), a = _mm512_set1_ps(alpha), d = _mm512_loadu_ps(d16);
    uint64_t sat = 0;
    for (int64_t p = 0; p < hw; p++) {
        __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(acc + p * 16)), d);
        __m256i h = f16_fixup16(_mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT), &sat);
        if (act == 1 || act == 2) { /* on the rounded (and clamped) value */
            __m512 yh = _mm512_cvtph_ps(h);
            if (act == 1) /* negatives and -0 to +0; a NaN stays */
                yh = _mm512_mask_mov_ps(yh, _mm512_cmp_ps_mask(yh, zero, _CMP_LE_OQ), zero);
            else /* by the sign bit: -0 too (-0 x alpha) */
                yh = _mm512_mask_mul_ps(
                    yh, _mm512_cmplt_epi32_mask(_mm512_castps_si512(yh), _mm512_setzero_si512()),
                    yh, a);
            h = f16_fixup16(_mm512_cvtps_ph(yh, _MM_FROUND_TO_NEAREST_INT), &sat);
        }
        _mm256_storeu_si256((__m256i *)(void *)(out + p * 16), h);
    }
    nb_sim_saturations += sat;
}

/* quant16_avx2 on hw pixels of 16 channels (src at 16 fp16 per pixel, dst at 32 int8 per
   pixel), one 512-bit register a pixel: the same fp32 product, rounding to nearest even,
   offset, clamp and NaN to 0 per lane, so the same int8 values */
NB_AVX512 static void quant_block_avx512(const uint16_t *src, int8_t *dst, int64_t hw,
                                         float scale, float offset)
{
    const __m512 sc = _mm512_set1_ps(scale), off = _mm512_set1_ps(offset);
    const __m512 lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f);
    for (int64_t p = 0; p < hw; p++) {
        __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(src + 16 * p)));
        __m512 r = _mm512_add_ps(
            _mm512_roundscale_ps(_mm512_mul_ps(x, sc), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
            off);
        r = _mm512_max_ps(lo, _mm512_min_ps(hi, r));
        r = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), r); /* NaN enters as 0 */
        _mm_storeu_si128((__m128i *)(void *)(dst + 32 * p), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
    }
}

/* maxmin_avx2, 16 at a time; returns a multiple of 16 */
NB_AVX512 static int64_t maxmin_avx512(const uint16_t *x, uint16_t *y, int64_t n, float c,
                                       uint16_t cb, bool mx)
{
    const __m512 cv = _mm512_set1_ps(c);
    const __m256i cbits = _mm256_set1_epi16((short)cb);
    int64_t e = 0;
    for (; e + 16 <= n; e += 16) {
        __m256i xb = _mm256_loadu_si256((const __m256i *)(const void *)(x + e));
        __m512 v = _mm512_cvtph_ps(xb);
        __mmask16 take = (mx ? _mm512_cmp_ps_mask(v, cv, _CMP_GT_OQ)
                             : _mm512_cmp_ps_mask(v, cv, _CMP_LT_OQ)) |
                         _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        _mm256_storeu_si256((__m256i *)(void *)(y + e), _mm256_mask_blend_epi16(take, cbits, xb));
    }
    return e;
}

/* the answers of have_f16c and sim_have_avx2 (-1: not asked yet), forgotten in a fork's
   child (pthread_atfork), which reads NANOBENCH_SIM_SCALAR again: "once per process" */
static int f16c_known = -1, avx2_known = -1;
static void paths_forget(void) { f16c_known = avx2_known = -1; }

/* F16C and SSE4.1 by CPUID, and the AVX register state enabled by the OS (F16C is
   VEX-encoded); NANOBENCH_SIM_SCALAR forces the plain path (its test). */
static int have_f16c(void)
{
    static int registered;
    if (f16c_known < 0) {
        unsigned a, b, c, d;
        int known = 0;
        if (!registered)
            registered = 1, pthread_atfork(NULL, NULL, paths_forget);
        if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1) && (c >> 19 & 1) && (c >> 27 & 1)) {
            unsigned lo, hi;
            __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            known = (lo & 6) == 6;
        }
        if (getenv("NANOBENCH_SIM_SCALAR"))
            known = 0;
        f16c_known = known;
    }
    return f16c_known;
}

/* AVX2 by CPUID leaf 7 (with have_f16c's AVX state); NANOBENCH_SIM_SCALAR: none */
int sim_have_avx2(void)
{
    if (avx2_known < 0) {
        unsigned a, b, c, d;
        avx2_known = have_f16c() && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 5 & 1);
    }
    return avx2_known;
}

/* AVX-512 (F, BW, VL) for the conversions around the cube: where the cube path is VNNI */
static int have_avx512(void) { return sim_have_avx2() && sim_cube_path() == 2; }

/* MaxPool of one output pixel of a C0 block (16 fp16 lanes) with the F16C conversions: the
   window's valid taps' rows (n of them at rows[]) maxed lane by lane, the first maximum kept
   (max(v, best) keeps best on equal values: +-0 as the scalar path), written as the fp16 it
   came from. False when a lane holds a NaN (the scalar path decides then); an empty window
   writes -65504. Bit-identical to the scalar loop. */
__attribute__((target("f16c,sse4.1"))) static bool
maxpool_px_f16c(const uint16_t *const *rows, int n, uint16_t *out)
{
    if (n == 0) {
        const uint16_t empty = 0xFBFF; /* stored by bytes: the arena may place out anywhere */
        for (int l = 0; l < 16; l++)
            memcpy(out + l, &empty, 2);
        return true;
    }
    __m128 best[4], nan = _mm_setzero_ps();
    for (int q = 0; q < 4; q++)
        best[q] = _mm_set1_ps(-INFINITY);
    for (int t = 0; t < n; t++)
        for (int q = 0; q < 4; q++) {
            __m128i h;
            memcpy(&h, rows[t] + 4 * q, 8);
            __m128 v = _mm_cvtph_ps(h);
            nan = _mm_or_ps(nan, _mm_cmpunord_ps(v, v));
            best[q] = _mm_max_ps(v, best[q]);
        }
    if (_mm_movemask_ps(nan))
        return false;
    for (int q = 0; q < 4; q++) { /* a lane of -inf only kept the start, -65504 */
        __m128 b = _mm_blendv_ps(best[q], _mm_set1_ps(-65504.0f),
                                 _mm_cmpeq_ps(best[q], _mm_set1_ps(-INFINITY)));
        __m128i h = _mm_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT);
        memcpy(out + 4 * q, &h, 8);
    }
    return true;
}
/* max(x, c) or min(x, c) on fp16 bits, 4 at a time (a NaN x wins, as in the plain loop);
   returns how many elements it did (a multiple of 4). c is not NaN. */
__attribute__((target("f16c,sse4.1"))) static int64_t
maxmin_f16c(const uint16_t *x, uint16_t *y, int64_t n, float c, uint16_t cb, bool mx)
{
    const __m128 cv = _mm_set1_ps(c);
    const __m128i cbits = _mm_set1_epi16((short)cb);
    int64_t e = 0;
    for (; e + 4 <= n; e += 4) {
        __m128i xb = _mm_loadl_epi64((const __m128i *)(const void *)(x + e));
        __m128 v = _mm_cvtph_ps(xb);
        __m128 take = _mm_or_ps(mx ? _mm_cmpgt_ps(v, cv) : _mm_cmplt_ps(v, cv),
                                _mm_cmpunord_ps(v, v));
        __m128i m = _mm_castps_si128(take);
        m = _mm_packs_epi32(m, m); /* 32-bit masks to 16-bit */
        __m128i r = _mm_or_si128(_mm_and_si128(m, xb), _mm_andnot_si128(m, cbits));
        _mm_storel_epi64((__m128i *)(void *)(y + e), r);
    }
    return e;
}

/* max(x, c) / min(x, c) as maxmin_f16c, 8 at a time (AVX2); returns a multiple of 8. */
__attribute__((target("avx2,f16c"))) static int64_t
maxmin_avx2(const uint16_t *x, uint16_t *y, int64_t n, float c, uint16_t cb, bool mx)
{
    const __m256 cv = _mm256_set1_ps(c);
    const __m128i cbits = _mm_set1_epi16((short)cb);
    int64_t e = 0;
    for (; e + 8 <= n; e += 8) {
        __m128i xb = _mm_loadu_si128((const __m128i *)(const void *)(x + e));
        __m256 v = _mm256_cvtph_ps(xb);
        __m256 gt = _mm256_cmp_ps(v, cv, _CMP_GT_OQ), lt = _mm256_cmp_ps(v, cv, _CMP_LT_OQ);
        __m256 take = _mm256_or_ps(mx ? gt : lt, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        __m256i m = _mm256_castps_si256(take);
        __m128i m16 = _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
        __m128i r = _mm_or_si128(_mm_and_si128(m16, xb), _mm_andnot_si128(m16, cbits));
        _mm_storeu_si128((__m128i *)(void *)(y + e), r);
    }
    return e;
}

/* quant16_f16c's AscendQuant, 8 lanes at a time (AVX2): the same fp32 product, rounding,
   offset, clamp and NaN to 0 per lane, so the same int8 values. */
__attribute__((target("avx2,f16c"))) static void
quant16_avx2(const uint16_t *src, int8_t *dst, float scale, float offset)
{
    const __m256 sc = _mm256_set1_ps(scale), off = _mm256_set1_ps(offset);
    const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
    __m256i q[2];
    for (int i = 0; i < 2; i++) {
        __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + 8 * i));
        __m256 x = _mm256_cvtph_ps(h);
        __m256 r = _mm256_add_ps(_mm256_round_ps(_mm256_mul_ps(x, sc),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                 off);
        r = _mm256_max_ps(lo, _mm256_min_ps(hi, r));
        r = _mm256_and_ps(r, _mm256_cmp_ps(x, x, _CMP_ORD_Q)); /* NaN enters as 0 */
        q[i] = _mm256_cvtps_epi32(r);
    }
    /* int32 lanes (q0: 0-7, q1: 8-15) -> int16 in order -> int8 */
    __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8);
    __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
    _mm_storeu_si128((__m128i *)(void *)dst, b);
}

/* AscendQuant of one pixel's 16 fp16 channels into int8 (F16C + SSE4.1), as sim_quant:
   round half to even after the fp32 product, offset, saturation, NaN to 0. */
__attribute__((target("f16c,sse4.1"))) static void
quant16_f16c(const uint16_t *src, int8_t *dst, float scale, float offset)
{
    const __m128 sc = _mm_set1_ps(scale), off = _mm_set1_ps(offset);
    const __m128 lo = _mm_set1_ps(-128.0f), hi = _mm_set1_ps(127.0f);
    __m128i q[4];
    for (int i = 0; i < 4; i++) {
        __m128i h = _mm_loadl_epi64((const __m128i *)(const void *)(src + 4 * i));
        __m128 x = _mm_cvtph_ps(h);
        __m128 r = _mm_add_ps(_mm_round_ps(_mm_mul_ps(x, sc),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), off);
        r = _mm_max_ps(lo, _mm_min_ps(hi, r));
        r = _mm_and_ps(r, _mm_cmpord_ps(x, x)); /* NaN enters as 0 */
        q[i] = _mm_cvtps_epi32(r);
    }
    __m128i b = _mm_packs_epi16(_mm_packs_epi32(q[0], q[1]), _mm_packs_epi32(q[2], q[3]));
    _mm_storeu_si128((__m128i *)(void *)dst, b);
}
#endif

static void k_quant(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    if (x->format == FMT_NC1HWC0 && y->format == FMT_NC1HWC0 && k->bits == 8 && x->rank >= 3) {
        /* fp16 blocks of 16 channels into int8 blocks of 32, pixel by pixel */
        int64_t C = x->dims[1], hw = x->dims[2] * (x->rank == 4 ? x->dims[3] : 1);
        int64_t C1x = (C + 15) / 16, C1y = (C + 31) / 32;
#if defined(__x86_64__) && defined(__GNUC__)
        if (have_avx512()) {
            for (int64_t n = 0; n < x->dims[0]; n++)
                for (int64_t c1 = 0; c1 < C1x; c1++)
                    quant_block_avx512((const uint16_t *)(const void *)(xp + 2 * ((n * C1x + c1) * hw * 16)),
                                       (int8_t *)(yp + (n * C1y + c1 / 2) * hw * 32 + (c1 % 2) * 16),
                                       hw, k->f[0], k->f[1]);
            return;
        }
        if (have_f16c()) { /* 16 channels of a pixel at a time (pad lanes: never read) */
            bool wide = sim_have_avx2();
            for (int64_t n = 0; n < x->dims[0]; n++)
                for (int64_t c1 = 0; c1 < C1x; c1++)
                    for (int64_t p = 0; p < hw; p++) {
                        const uint16_t *s = (const uint16_t *)(const void *)(xp + 2 * (((n * C1x + c1) * hw + p) * 16));
                        int8_t *d = (int8_t *)(yp + ((n * C1y + c1 / 2) * hw + p) * 32 + (c1 % 2) * 16);
                        if (wide)
                            quant16_avx2(s, d, k->f[0], k->f[1]);
                        else
                            quant16_f16c(s, d, k->f[0], k->f[1]);
                    }
            return;
        }
#endif
        for (int64_t n = 0; n < x->dims[0]; n++)
            for (int64_t c = 0; c < C; c++) {
                const uint8_t *src = xp + 2 * ((n * C1x + c / 16) * hw * 16 + c % 16);
                uint8_t *dst = yp + (n * C1y + c / 32) * hw * 32 + c % 32;
                for (int64_t p = 0; p < hw; p++)
                    dst[p * 32] = (uint8_t)(int8_t)sim_quant(rd16(src + 32 * p), k->f[0],
                                                             k->f[1], 8);
            }
        return;
    }
    int64_t L = last_dim(x), rows = nb_sim_numel(x) ? rows_of(x) : 0, idx[6] = {0};
    const int64_t *ox = last_off(m, x), *oy = last_off(m, y);
    /* int8 from a last dim of consecutive fp16: 16 at a time as quant_block_avx512, then
       placed one by one */
    bool vec = false;
#if defined(__x86_64__) && defined(__GNUC__)
    vec = k->bits == 8 && L >= 16 && have_avx512();
    for (int64_t w = 1; vec && w < L; w++)
        vec = ox[w] == ox[0] + w;
#endif
    for (int64_t r = 0; r < rows; r++) {
        int64_t bx = row_base(m, x, idx), by = row_base(m, y, idx), w0 = 0;
#if defined(__x86_64__) && defined(__GNUC__)
        for (; vec && w0 + 16 <= L; w0 += 16) {
            int8_t q16[16];
            quant_block_avx512((const uint16_t *)(const void *)(xp + 2 * (bx + ox[w0])), q16, 1,
                               k->f[0], k->f[1]);
            for (int i = 0; i < 16; i++)
                yp[by + oy[w0 + i]] = (uint8_t)q16[i];
        }
#endif
        for (int64_t w = w0; w < L; w++) {
            int32_t q = sim_quant(rd16(xp + 2 * (bx + ox[w])), k->f[0], k->f[1], k->bits);
            if (k->bits == 16)
                wr16(yp + 2 * (by + oy[w]), (uint16_t)(int16_t)q);
            else
                yp[by + oy[w]] = (uint8_t)(int8_t)q;
        }
        ROW_NEXT(idx, x);
    }
}


static void k_dequant(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *dq = sim_ptr(m, k->deq);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t L = last_dim(x), rows = nb_sim_numel(x) ? rows_of(x) : 0, idx[6] = {0};
    const int64_t *ox = last_off(m, x), *oy = last_off(m, y);
    int ax = k->chan_axis;
    bool per_elem = ax == x->rank - 1;
    if (x->format == FMT_NC1HWC0 && y->format == FMT_NC1HWC0 && ax == 1 && x->rank >= 3) {
        /* int32 and fp16 both have C0 = 16: one walk over the layout, 16 channels a block */
        int64_t C = x->dims[1], C1 = (C + 15) / 16, hw = x->dims[2] * (x->rank == 4 ? x->dims[3] : 1);
        float d16[16];
        for (int64_t n = 0; n < x->dims[0]; n++)
            for (int64_t c1 = 0; c1 < C1; c1++) {
                int lanes = C - c1 * 16 < 16 ? (int)(C - c1 * 16) : 16;
                for (int i = 0; i < 16; i++) /* pad lanes: scale 0, never read */
                    d16[i] = i < lanes ? deq_at(dq, c1 * 16 + i) : 0.0f;
                int64_t base = (n * C1 + c1) * hw * 16;
#if defined(__x86_64__) && defined(__GNUC__)
                if (have_avx512()) {
                    dequant_block_avx512((const int32_t *)(const void *)(xp + 4 * base),
                                         (uint16_t *)(void *)(yp + 2 * base), hw, d16, k->act,
                                         k->f[0]);
                    continue;
                }
                if (sim_have_avx2()) {
                    dequant_block_avx2((const int32_t *)(const void *)(xp + 4 * base),
                                       (uint16_t *)(void *)(yp + 2 * base), hw, d16, k->act,
                                       k->f[0]);
                    continue;
                }
#endif
                for (int64_t p = 0; p < hw; p++)
                    for (int i = 0; i < lanes; i++) {
                        int64_t e = base + p * 16 + i;
                        wr16(yp + 2 * e, sim_dequant(rd32(xp + 4 * e), d16[i], k->act, k->f[0]));
                    }
            }
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t bx = row_base(m, x, idx), by = row_base(m, y, idx);
        float d = per_elem ? 0 : deq_at(dq, idx[ax]);
        for (int64_t w = 0; w < L; w++) {
            int32_t acc = rd32(xp + 4 * (bx + ox[w]));
            wr16(yp + 2 * (by + oy[w]),
                 sim_dequant(acc, per_elem ? deq_at(dq, w) : d, k->act, k->f[0]));
        }
        ROW_NEXT(idx, x);
    }
}

/* ---- cube: Conv ---- */
static inline int32_t dot32(const int8_t *a, const int8_t *b)
{
    int32_t s = 0;
    for (int i = 0; i < 32; i++)
        s += (int32_t)a[i] * b[i];
    return s;
}

static inline int32_t ld_int(int dtype, const uint8_t *p, int64_t e)
{
    switch (dtype) {
    case DT_I8: return (int8_t)p[e];
    case DT_I16: return (int16_t)rd16(p + 2 * e);
    default: { /* int4 */
        int v = (p[e / 2] >> (4 * (e & 1))) & 15;
        return v >= 8 ? v - 16 : v;
    }
    }
}

/* W[co][c][kh][kw] of a convolution's weights w (W[co][c][kw] of a 1-D one), whatever their
   layout (the per-dim offset tables) */
static inline int32_t conv_w(const nb_sim_model *m, const nb_exeom_tensor *w, const uint8_t *wp,
                             int64_t co, int64_t c, int64_t kh, int64_t kw)
{
    const int64_t idx[4] = {co, c, w->rank == 4 ? kh : kw, kw};
    return ld_int(w->dtype, wp, sim_ph(m, w, idx));
}

#if defined(__x86_64__) && defined(__GNUC__)
/* the geometry of a convolution task for cube_simd.c */
static sim_conv_geom conv_geom(const nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    int r = x->rank;
    sim_conv_geom g = {.N = x->dims[0], .C = x->dims[1], .H = r == 4 ? x->dims[2] : 1,
                       .W = x->dims[r - 1], .Co = y->dims[1], .OH = r == 4 ? y->dims[2] : 1,
                       .OW = y->dims[r - 1], .KH = k->kh, .KW = k->kw, .sh = k->sh,
                       .sw = k->sw, .pt = k->pt, .pl = k->pl, .dh = k->dh, .dw = k->dw,
                       .zp = k->x_off, .c0 = sim_c0(x->dtype), .i8 = x->dtype == DT_I8};
    return g;
}

/* The packed weights of an s8 x s8 or s16 x s8 convolution of one group (sim_task.wpk), when
   a SIMD cube path applies (sim_cube_path() >= 1): x and y in NC1HWC0 (y int32), and every
   sum, bias included, within int32: Kg x max|x| x max|w| + max|bias| < 2^31 (max|x| 128 or
   32768 by x's dtype, max|w| and max|bias| read from the tensors), so that the 32-bit lanes
   are exact and no sum saturates. On AVX-512 VNNI with int8 x and its zero point within
   int8, the block of sim_vnni_pack_s8 (pk_state 2; wpk then holds that block, not int16
   pairs), else the 16-bit pairs (pk_state 1). Built at the task's first execution, once.
   Sets k->pk_state; NB_ERR_NOMEM only. */
static nb_err conv_pack(nb_sim_model *m, sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]), *y = TD(k->out[0]);
    const uint8_t *wp = sim_ptr(m, k->in[1]), *bp = sim_ptr(m, k->in[2]);
    int r = x->rank;
    k->pk_state = -1;
    if (sim_cube_path() < 1 || k->group != 1 || w->dtype != DT_I8 ||
        (x->dtype != DT_I8 && x->dtype != DT_I16) || x->format != FMT_NC1HWC0 ||
        y->format != FMT_NC1HWC0 || y->dtype != DT_I32 || (r != 3 && r != 4))
        return NB_OK;
    int64_t C = x->dims[1], Co = y->dims[1], KH = k->kh, KW = k->kw;
    int64_t Kg = KH * KW * C, Kp = Kg + (Kg & 1), Cb = cdiv(Co, 16);
    if (Kg <= 0 || Co <= 0 || Kg > (1 << 20))
        return NB_OK;
    int64_t wmax = 0, bmax = 0;
    for (int64_t co = 0; co < Co; co++) {
        int64_t b = rd32(bp + 4 * co);
        bmax = b < 0 ? (-b > bmax ? -b : bmax) : (b > bmax ? b : bmax);
    }
    int16_t *pk = calloc((size_t)(Cb * Kp * 16), sizeof *pk);
    if (!pk)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    for (int64_t co = 0; co < Co; co++)
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++)
                for (int64_t c = 0; c < C; c++) {
                    int32_t v = conv_w(m, w, wp, co, c, kh, kw);
                    int64_t kg = (kh * KW + kw) * C + c;
                    pk[((co / 16 * (Kp / 2) + kg / 2) * 16 + co % 16) * 2 + kg % 2] = (int16_t)v;
                    wmax = v < 0 ? (-v > wmax ? -v : wmax) : (v > wmax ? v : wmax);
                }
    int64_t xmax = x->dtype == DT_I8 ? 128 : 32768;
    if ((double)Kg * (double)xmax * (double)wmax + (double)bmax >= 2147483648.0) {
        free(pk);
        return NB_OK;
    }
    if (sim_cube_path() == 2 && x->dtype == DT_I8 && k->x_off >= -128 && k->x_off <= 127) {
        int8_t *w8 = malloc((size_t)(Co * Kg));
        int32_t *b32 = malloc(sizeof *b32 * (size_t)Co);
        void *blk = NULL;
        if (w8 && b32) {
            for (int64_t co = 0; co < Co; co++) {
                b32[co] = rd32(bp + 4 * co);
                for (int64_t kg = 0; kg < Kg; kg++) /* pk's pair layout, back to [co][kg] */
                    w8[co * Kg + kg] =
                        (int8_t)pk[((co / 16 * (Kp / 2) + kg / 2) * 16 + co % 16) * 2 + kg % 2];
            }
            sim_conv_geom g = conv_geom(m, k);
            blk = sim_vnni_pack_s8(&g, w8, b32);
        }
        free(w8), free(b32), free(pk);
        if (!blk)
            return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
        k->wpk = blk;
        k->pk_state = 2;
        return NB_OK;
    }
    k->wpk = pk;
    k->pk_state = 1;
    return NB_OK;
}


/* rows 0..5 of the im2col block A (int16, Kp each) against the 16 output channels of one
   weight block b (Kp/2 pairs of 16 x 2): pairs of 16-bit products summed into 32-bit lanes
   (vpmaddwd), exact under conv_pack's bound; plus the bias, into out[6][16]. 12 accumulators,
   the 2 weight vectors and a broadcast: 15 of the 16 ymm registers. */
__attribute__((target("avx2"))) static void
gemm_6x16(const int16_t *A, int64_t Kp, const int16_t *b, const int32_t *bias, int32_t *out)
{
    __m256i c00 = _mm256_loadu_si256((const __m256i *)(const void *)bias);
    __m256i c01 = _mm256_loadu_si256((const __m256i *)(const void *)(bias + 8));
    __m256i c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01;
    __m256i c40 = c00, c41 = c01, c50 = c00, c51 = c01;
    const int16_t *a0 = A, *a1 = A + Kp, *a2 = A + 2 * Kp, *a3 = A + 3 * Kp, *a4 = A + 4 * Kp,
                  *a5 = A + 5 * Kp;
#define NB_ROW(ar, x0, x1)                                                                   \
    do {                                                                                     \
        int32_t v;                                                                           \
        memcpy(&v, ar + kk, 4);                                                              \
        __m256i xv = _mm256_set1_epi32(v);                                                   \
        x0 = _mm256_add_epi32(x0, _mm256_madd_epi16(xv, b0));                                \
        x1 = _mm256_add_epi32(x1, _mm256_madd_epi16(xv, b1));                                \
    } while (0)
    for (int64_t kk = 0; kk < Kp; kk += 2, b += 32) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + 16));
        NB_ROW(a0, c00, c01);
        NB_ROW(a1, c10, c11);
        NB_ROW(a2, c20, c21);
        NB_ROW(a3, c30, c31);
        NB_ROW(a4, c40, c41);
        NB_ROW(a5, c50, c51);
    }
#undef NB_ROW
    __m256i *o = (__m256i *)(void *)out;
    _mm256_storeu_si256(o, c00), _mm256_storeu_si256(o + 1, c01);
    _mm256_storeu_si256(o + 2, c10), _mm256_storeu_si256(o + 3, c11);
    _mm256_storeu_si256(o + 4, c20), _mm256_storeu_si256(o + 5, c21);
    _mm256_storeu_si256(o + 6, c30), _mm256_storeu_si256(o + 7, c31);
    _mm256_storeu_si256(o + 8, c40), _mm256_storeu_si256(o + 9, c41);
    _mm256_storeu_si256(o + 10, c50), _mm256_storeu_si256(o + 11, c51);
}

/* 16 values of an NC1HWC0 row of x (int8 sign-extended, or int16) into dst */
__attribute__((target("avx2"))) static inline void widen16(const uint8_t *src, bool i8, int16_t *dst)
{
    __m256i v = i8 ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)src))
                   : _mm256_loadu_si256((const __m256i *)(const void *)src);
    _mm256_storeu_si256((__m256i *)(void *)dst, v);
}

/* The convolution as one 16-bit GEMM per block of 64 output pixels (conv_pack's weights):
   im2col of the block into int16 rows of Kp ((kh, kw, ci), the zero point outside x), then
   6 pixels x 16 output channels at a time (gemm_6x16; 12 with sim_vnni_gemm16_12x16 on
   AVX-512 VNNI), stored into y's NC1HWC0 int32 rows
   (C0 16: one weight block is one C0 row), the pad lanes past Co left as they were. Sums
   identical to the plain loops' (exact int32 under conv_pack's bound). */
__attribute__((target("avx2"))) static nb_err
conv_gemm16(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    bool i8 = x->dtype == DT_I8;
    int64_t N = x->dims[0], C = x->dims[1], H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t Co = y->dims[1], OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    int64_t KH = k->kh, KW = k->kw, Kg = KH * KW * C, Kp = Kg + (Kg & 1), Cb = cdiv(Co, 16);
    int64_t c0 = sim_c0(x->dtype), C1x = cdiv(C, c0), esz = i8 ? 1 : 2, P = OH * OW;
    /* pixels per im2col block, per GEMM call: 6 (AVX2), 12 (AVX-512 VNNI, 32 registers) */
    const bool z = sim_cube_path() == 2;
    const int64_t BLK = z ? 72 : 66, MR = z ? 12 : 6;
    int16_t *A = malloc(sizeof *A * (size_t)(BLK * Kp + 64)); /* slack: widen16's tail */
    int32_t *bias = calloc((size_t)(Cb * 16), sizeof *bias), out[16 * 12];
    if (!A || !bias) {
        free(A), free(bias);
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    }
    for (int64_t co = 0; co < Co; co++)
        bias[co] = rd32(bp + 4 * co);
    const int16_t zp = (int16_t)k->x_off;
    /* one channel (a 1-D filter bank such as an STFT's): that channel once as dense int16
       rows, so that a pixel's taps are a copy of KW values (dilation 1) rather than a strided
       gather with a bounds test per tap */
    int16_t *xs = NULL;
    if (C == 1 && k->dw == 1) {
        xs = malloc(sizeof *xs * (size_t)(N * H * W + 1));
        if (!xs) {
            free(A), free(bias);
            return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
        }
        for (int64_t i = 0; i < N * H * W; i++)
            xs[i] = i8 ? (int8_t)xp[i * c0] : (int16_t)rd16(xp + 2 * i * c0);
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t p0 = 0; p0 < P; p0 += BLK) {
            int64_t np = P - p0 < BLK ? P - p0 : BLK, npad = (np + MR - 1) / MR * MR;
            for (int64_t q = 0; q < npad; q++) {
                int16_t *row = A + q * Kp;
                if (q >= np) { /* rows past the block: computed, never stored */
                    memset(row, 0, sizeof *row * (size_t)Kp);
                    continue;
                }
                int64_t oh = (p0 + q) / OW, ow = (p0 + q) % OW;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                    if (xs) { /* one channel, dilation 1: the taps in range copied */
                        int64_t iw0 = ow * k->sw - k->pl;
                        int64_t lo = iw0 < 0 ? -iw0 : 0, hi = W - iw0 < KW ? W - iw0 : KW;
                        if (ih < 0 || ih >= H || hi <= lo)
                            lo = hi = 0;
                        for (int64_t kw = 0; kw < lo; kw++)
                            row[kw] = zp;
                        if (hi > lo)
                            memcpy(row + lo, xs + (n * H + ih) * W + iw0 + lo,
                                   sizeof *row * (size_t)(hi - lo));
                        for (int64_t kw = hi > lo ? hi : 0; kw < KW; kw++)
                            row[kw] = zp;
                        row += KW;
                        continue;
                    }
                    if (C == 1) { /* one channel (a 1-D filter bank): a strided gather */
                        bool in_h = ih >= 0 && ih < H;
                        const uint8_t *xb = in_h ? xp + esz * ((n * H + ih) * W * c0) : xp;
                        int64_t iw = ow * k->sw - k->pl;
                        for (int64_t kw = 0; kw < KW; kw++, iw += k->dw)
                            row[kw] = !in_h || iw < 0 || iw >= W ? zp
                                      : i8 ? (int8_t)xb[iw * c0] : (int16_t)rd16(xb + 2 * iw * c0);
                        row += KW;
                        continue;
                    }
                    for (int64_t kw = 0; kw < KW; kw++, row += C) {
                        int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            for (int64_t c = 0; c < C; c++)
                                row[c] = zp;
                            continue;
                        }
                        /* whole C0 rows, 16 lanes at a time: the lanes past C (x's pad
                           lanes, in its bytes) land where the next tap, row or the pad
                           element is written after, or in A's slack */
                        for (int64_t c1 = 0; c1 < C1x; c1++) {
                            const uint8_t *xr = xp + esz * ((((n * C1x + c1) * H + ih) * W + iw) * c0);
                            int64_t nl = C - c1 * c0 < c0 ? C - c1 * c0 : c0;
                            if (nl < 8) /* a few channels: one by one */
                                for (int64_t l = 0; l < nl; l++)
                                    row[c1 * c0 + l] = i8 ? (int8_t)xr[l] : (int16_t)rd16(xr + 2 * l);
                            else
                                for (int64_t l = 0; l < nl; l += 16)
                                    widen16(xr + esz * l, i8, row + c1 * c0 + l);
                        }
                    }
                }
                if (Kp > Kg)
                    A[q * Kp + Kg] = 0;
            }
            for (int64_t cb = 0; cb < Cb; cb++) {
                const int16_t *b = k->wpk + cb * Kp * 16;
                int64_t nl = Co - cb * 16 < 16 ? Co - cb * 16 : 16;
                for (int64_t q = 0; q < np; q += MR) {
                    if (z)
                        sim_vnni_gemm16_12x16(A + q * Kp, Kp, b, bias + cb * 16, out);
                    else
                        gemm_6x16(A + q * Kp, Kp, b, bias + cb * 16, out);
                    for (int64_t t = 0; t < MR && q + t < np; t++) {
                        uint8_t *yr = yp + 4 * (((n * Cb + cb) * P + p0 + q + t) * 16);
                        memcpy(yr, out + 16 * t, sizeof(int32_t) * (size_t)nl);
                    }
                }
            }
        }
    free(A), free(bias), free(xs);
    return NB_OK;
}
#endif

/* the exact fp32 GEMM path (k->wf, built at load): im2col of up to 2048 output pixels, one
   sgemm; integer sums below 2^24 */
static nb_err conv_fp32(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    int64_t N = x->dims[0], C = x->dims[1], H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t Co = y->dims[1], OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    int64_t KH = k->kh, KW = k->kw, C1y = cdiv(Co, 16);
    /* im2col (rows of kh, kw, then the real channels; the zero point outside) of up
       to 2048 output pixels, then one fp32 GEMM against the weights: integer sums
       below 2^24, so exact whatever the order */
    int64_t C1x = cdiv(C, 32), Kg = KH * KW * C;
    int64_t P = OH * OW, blk = P < 2048 ? P : 2048;
    float *A = malloc(sizeof(float) * (size_t)(blk * Kg + 1));
    float *Cm = malloc(sizeof(float) * (size_t)(blk * Co + 1));
    if (!A || !Cm) {
        free(A), free(Cm);
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    }
    const float zp = (float)k->x_off;
    int32_t *bias32 = malloc(sizeof(int32_t) * (size_t)(Co + 1));
    if (!bias32) {
        free(A), free(Cm);
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    }
    bool small_bias = true; /* every |bias| < 2^30 */
    for (int64_t co = 0; co < Co; co++) {
        bias32[co] = rd32(bp + 4 * co);
        small_bias &= bias32[co] > -(1 << 30) && bias32[co] < (1 << 30);
    }
    (void)small_bias;
    for (int64_t n = 0; n < N; n++)
        for (int64_t p0 = 0; p0 < P; p0 += blk) {
            int64_t np = P - p0 < blk ? P - p0 : blk;
            for (int64_t q = 0; q < np; q++) {
                int64_t oh = (p0 + q) / OW, ow = (p0 + q) % OW;
                float *row = A + q * Kg;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                    for (int64_t kw = 0; kw < KW; kw++, row += C) {
                        int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            for (int64_t c = 0; c < C; c++)
                                row[c] = zp;
                            continue;
                        }
                        for (int64_t c1 = 0; c1 < C1x; c1++) {
                            const int8_t *xr = (const int8_t *)xp +
                                               (((n * C1x + c1) * H + ih) * W + iw) * 32;
                            int64_t nl = C - c1 * 32 < 32 ? C - c1 * 32 : 32;
                            float *dst = row + c1 * 32;
                            for (int64_t l = 0; l < nl; l++)
                                dst[l] = xr[l];
                        }
                    }
                }
            }
            nb_sgemm_rm((int)np, (int)Co, (int)Kg, A, (int)Kg, k->wf, (int)Co, Cm, (int)Co);
            /* into NC1HWC0 (C0 16): pixel p of block c1 at ((n C1 + c1) OH OW + p) 16 */
            int64_t plane = OH * OW * 16;
            for (int64_t q = 0; q < np; q++) {
                const float *cr = Cm + q * Co;
                uint8_t *yb = yp + 4 * (n * C1y * plane + (p0 + q) * 16);
                for (int64_t c1 = 0; c1 < C1y; c1++) {
                    int64_t nl = Co - c1 * 16 < 16 ? Co - c1 * 16 : 16;
#ifdef __SSE2__
                    if (nl == 16 && small_bias) { /* the sums are integers below 2^24 and
                                                    |bias| < 2^30: no int32 overflow */
                        for (int v = 0; v < 16; v += 4) {
                            __m128i s4 = _mm_cvtps_epi32(_mm_loadu_ps(cr + c1 * 16 + v));
                            __m128i b4 = _mm_loadu_si128(
                                (const __m128i *)(const void *)(bias32 + c1 * 16 + v));
                            _mm_storeu_si128((__m128i *)(void *)(yb + 4 * (c1 * plane + v)),
                                             _mm_add_epi32(s4, b4));
                        }
                        continue;
                    }
#endif
                    for (int64_t l = 0; l < nl; l++)
                        wr32(yb + 4 * (c1 * plane + l),
                             sat32((int64_t)bias32[c1 * 16 + l] + (int64_t)cr[c1 * 16 + l]));
                }
            }
        }
    free(A), free(Cm), free(bias32);
    return NB_OK;
}

/* s8 x s8, one group, without the fp32 weights: the cube's tile loop */
static nb_err conv_tiles(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    int64_t N = x->dims[0], C = x->dims[1], H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t Co = y->dims[1], OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    int64_t KH = k->kh, KW = k->kw, C1y = cdiv(Co, 16);
    /* the cube's tile loop: 32 input channels of x (one C0 row) against 32 of each
       output channel's FRACTAL_Z row */
    int64_t C1x = cdiv(C, 32), N1 = cdiv(Co, 16);
    int64_t ntap = C1x * KH * KW;
    const int16_t *w16 = m->w16[k->in[1]];
    int16_t *xt = malloc(sizeof *xt * (size_t)(ntap * 32 + 1));
    const int16_t **wt = malloc(sizeof *wt * (size_t)(ntap + 1));
    int32_t *l32 = malloc(sizeof *l32 * (size_t)(Co * 32 + 1));
    int64_t *acc = malloc(sizeof *acc * (size_t)(Co + 1));
    if (!xt || !wt || !l32 || !acc) {
        free(xt), free(wt), free(l32), free(acc);
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    }
    memset(l32, 0, sizeof(int32_t) * (size_t)Co * 32); /* zeroed again at each flush */
#ifdef __SSE2__
    const int used_lanes = 4; /* the pmaddwd sums land in 4 lanes per channel */
#else
    const int used_lanes = 32;
#endif
    /* channels past C meet zero weights: with few channels, only the real ones */
    int lanes = C < 16 ? (int)C : 32;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                /* the taps of this output pixel: one C0 row of x each (the zero point
                   outside), against the FRACTAL_Z block of the same (c1, kh, kw) */
                int64_t nt = 0;
                for (int64_t c1 = 0; c1 < C1x; c1++)
                    for (int64_t kh = 0; kh < KH; kh++) {
                        int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                        for (int64_t kw = 0; kw < KW; kw++) {
                            int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                            int16_t *dst = xt + nt * 32;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                                const int8_t *xr = (const int8_t *)xp +
                                                   (((n * C1x + c1) * H + ih) * W + iw) * 32;
                                for (int i = 0; i < 32; i++)
                                    dst[i] = xr[i];
                            } else {
                                for (int i = 0; i < 32; i++)
                                    dst[i] = (int16_t)k->x_off;
                            }
                            wt[nt] = w16 + ((c1 * KH + kh) * KW + kw) * N1 * 512;
                            nt++;
                        }
                    }
                /* tap by tap, every output channel: the weights stream in order */
                for (int64_t co = 0; co < Co; co++)
                    acc[co] = rd32(bp + 4 * co);
                for (int64_t j = 0; j < nt; j++) {
                    const int16_t *a = xt + j * 32, *wj = wt[j];
                    if (lanes == 32) {
#ifdef __SSE2__
                        /* pairs of 16-bit products summed into 32-bit lanes (pmaddwd):
                           4 lanes per output channel, exact */
                        __m128i a0 = _mm_loadu_si128((const __m128i *)a);
                        __m128i a1 = _mm_loadu_si128((const __m128i *)(a + 8));
                        __m128i a2 = _mm_loadu_si128((const __m128i *)(a + 16));
                        __m128i a3 = _mm_loadu_si128((const __m128i *)(a + 24));
                        for (int64_t co = 0; co < Co; co++) {
                            const __m128i *b = (const __m128i *)(wj + co * 32);
                            __m128i *l = (__m128i *)(l32 + co * 32);
                            __m128i sum = _mm_add_epi32(
                                _mm_add_epi32(_mm_madd_epi16(a0, _mm_loadu_si128(b)),
                                              _mm_madd_epi16(a1, _mm_loadu_si128(b + 1))),
                                _mm_add_epi32(_mm_madd_epi16(a2, _mm_loadu_si128(b + 2)),
                                              _mm_madd_epi16(a3, _mm_loadu_si128(b + 3))));
                            _mm_storeu_si128(l, _mm_add_epi32(_mm_loadu_si128(l), sum));
                        }
#else
                        for (int64_t co = 0; co < Co; co++) {
                            int32_t *l = l32 + co * 32;
                            const int16_t *b = wj + co * 32;
                            for (int i = 0; i < 32; i++)
                                l[i] += (int32_t)a[i] * b[i];
                        }
#endif
                    }
                    else
                        for (int64_t co = 0; co < Co; co++) {
                            const int16_t *b = wj + co * 32;
                            int32_t p = 0;
                            for (int i = 0; i < lanes; i++)
                                p += (int32_t)a[i] * b[i];
                            acc[co] += p;
                        }
                    if (lanes == 32 && ((j & 1023) == 1023 || j == nt - 1))
                        for (int64_t co = 0; co < Co; co++) /* each lane stays in int32 */
                            for (int i = 0; i < used_lanes; i++)
                                acc[co] += l32[co * 32 + i], l32[co * 32 + i] = 0;
                }
                for (int64_t co = 0; co < Co; co++)
                    wr32(yp + 4 * ((((n * C1y + co / 16) * OH + oh) * OW + ow) * 16 + co % 16),
                         sat32(acc[co]));
            }
    free(xt), free(wt), free(l32), free(acc);
    return NB_OK;
}

/* s16 x s8, s8 x s4 and grouped convolutions: the plain loops */
static nb_err conv_plain(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *wp = sim_ptr(m, k->in[1]);
    const uint8_t *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    int64_t N = x->dims[0], H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t Co = y->dims[1], OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    int64_t KH = k->kh, KW = k->kw, g = k->group, cin_g = w->dims[1], cout_g = Co / g;
    /* s16 x s8, s8 x s4, and grouped convolutions: each output pixel's taps of a group
       gathered once (the zero point outside), then each of the group's output channels
       summed over them against its row of the weights, gathered once per task into
       [Co][Kg] (Kg = the group's channels x kh x kw) at the first execution; int64 sums,
       exact */
    int64_t ix[4], Kg = cin_g * KH * KW;
    sim_task *km = (sim_task *)(uintptr_t)k; /* the cache of this task's weights */
    if (!km->wt) {
        int16_t *wt = malloc(sizeof *wt * (size_t)(Co * Kg + 1));
        if (!wt)
            return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
        for (int64_t co = 0; co < Co; co++)
            for (int64_t cg = 0; cg < cin_g; cg++)
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++)
                        wt[co * Kg + (cg * KH + kh) * KW + kw] =
                            (int16_t)conv_w(m, w, wp, co, cg, kh, kw);
        km->wt = wt;
    }
    int32_t *a = malloc(sizeof *a * (size_t)(Kg + 1));
    if (!a)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    for (int64_t n = 0; n < N; n++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t iy[4] = {n, 0, r == 4 ? oh : ow, ow};
                for (int64_t gi = 0; gi < g; gi++) {
                    for (int64_t cg = 0; cg < cin_g; cg++)
                        for (int64_t kh = 0; kh < KH; kh++) {
                            int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                                int32_t xv = k->x_off;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                                    ix[0] = n, ix[1] = gi * cin_g + cg;
                                    if (r == 4)
                                        ix[2] = ih, ix[3] = iw;
                                    else
                                        ix[2] = iw;
                                    xv = ld_int(x->dtype, xp, sim_ph(m, x, ix));
                                }
                                a[(cg * KH + kh) * KW + kw] = xv;
                            }
                        }
                    for (int64_t co = gi * cout_g; co < (gi + 1) * cout_g; co++) {
                        const int16_t *wr = km->wt + co * Kg;
                        int64_t acc = rd32(bp + 4 * co);
                        for (int64_t t = 0; t < Kg; t++)
                            acc += (int64_t)a[t] * wr[t];
                        iy[1] = co;
                        wr32(yp + 4 * sim_ph(m, y, iy), sat32(acc));
                    }
                }
            }
    free(a);
    return NB_OK;
}

/* Conv (and the convolutions of other tasks): y int32 = conv(x, W) + bias, the zero point
   outside x. The SIMD paths (sim_cube_path(): AVX-512 VNNI, AVX2) where conv_pack applies,
   else the portable ones; every path's sums are the same exact integers. */
static nb_err k_conv(nb_sim_model *m, const sim_task *k, nb_status *st)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (k->kid == K_CONV && k->pk_state == 0) {
        nb_err pe = conv_pack(m, (sim_task *)(uintptr_t)k, st);
        if (pe)
            return pe;
    }
    if (k->pk_state == 2) {
        sim_conv_geom g = conv_geom(m, k);
        if (sim_vnni_conv_s8(&g, k->wpk, sim_ptr(m, k->in[0]), sim_ptr(m, k->out[0])))
            return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
        return NB_OK;
    }
    if (k->pk_state == 1)
        return conv_gemm16(m, k, st);
#endif
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]);
    if (k->wf)
        return conv_fp32(m, k, st);
    if (x->dtype == DT_I8 && w->dtype == DT_I8 && k->group == 1)
        return conv_tiles(m, k, st);
    return conv_plain(m, k, st);
}

static void k_convt(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *wp = sim_ptr(m, k->in[1]);
    const uint8_t *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    int64_t N = x->dims[0], H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t Co = y->dims[1], OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    int64_t g = k->group, cout_g = w->dims[1], cin_g = x->dims[1] / g;
    int64_t ix[4], iw_[4];
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < Co; co++) {
            int64_t gi = co / cout_g;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t acc = rd32(bp + 4 * co);
                    for (int64_t cg = 0; cg < cin_g; cg++) {
                        int64_t ci = gi * cin_g + cg;
                        for (int64_t kh = 0; kh < k->kh; kh++)
                            for (int64_t kw = 0; kw < k->kw; kw++) {
                                /* the tap reads x where oh = ih sh - pt + kh dh; elsewhere
                                   the zero-inserted input holds float 0, the zero point */
                                int64_t th = oh + k->pt - kh * k->dh, tw = ow + k->pl - kw * k->dw;
                                int32_t xv = k->x_off;
                                if (th >= 0 && tw >= 0 && th % k->sh == 0 && tw % k->sw == 0 &&
                                    th / k->sh < H && tw / k->sw < W) {
                                    ix[0] = n, ix[1] = ci;
                                    if (r == 4)
                                        ix[2] = th / k->sh, ix[3] = tw / k->sw;
                                    else
                                        ix[2] = tw / k->sw;
                                    xv = ld_int(x->dtype, xp, sim_ph(m, x, ix));
                                }
                                iw_[0] = ci, iw_[1] = co % cout_g;
                                if (r == 4)
                                    iw_[2] = kh, iw_[3] = kw;
                                else
                                    iw_[2] = kw;
                                acc += (int64_t)xv * ld_int(w->dtype, wp, sim_ph(m, w, iw_));
                            }
                    }
                    int64_t iy[4] = {n, co, r == 4 ? oh : ow, ow};
                    wr32(yp + 4 * sim_ph(m, y, iy), sat32(acc));
                }
        }
}

/* ---- cube: MatMul, Gemm ---- */
/* The s8 x s8 MatMul with constant weights on AVX-512 VNNI (sim_vnni_matmul_s8): the
   weights packed at the task's first execution (wpk, pk_state 2; -1 when the path does not
   apply: another CPU or path, or a sum that could leave int32: K1 x 32 x 128 x max|w| +
   max|bias| >= 2^31), then y written element by element as the plain loop does. False when
   the plain loop is to run (also when out of memory). */
static bool matmul_vnni(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *wp = sim_ptr(m, k->in[1]);
    const uint8_t *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t M = k->M, N = k->N, B = k->batch, K1 = cdiv(k->K, 32), M1 = cdiv(M, 16);
    sim_task *km = (sim_task *)(uintptr_t)k; /* the cache of this task's packed weights */
    if (km->pk_state == 0) {
        km->pk_state = -1;
        int64_t wmax = 0, bmax = 0, N1 = cdiv(N, 16);
        int32_t *b32 = malloc(sizeof *b32 * (size_t)(N + 1));
        if (sim_cube_path() < 2 || N <= 0 || K1 <= 0 || !b32) {
            free(b32);
            return false;
        }
        for (int64_t n = 0; n < N; n++) {
            b32[n] = rd32(bp + 4 * n);
            int64_t a = b32[n] < 0 ? -(int64_t)b32[n] : b32[n];
            bmax = a > bmax ? a : bmax;
            for (int64_t kk = 0; kk < K1 * 32; kk++) {
                int64_t v = (int8_t)wp[(n / 16) * 512 + (n % 16) * 32 + (kk / 32) * N1 * 512 + kk % 32];
                wmax = (v < 0 ? -v : v) > wmax ? (v < 0 ? -v : v) : wmax;
            }
        }
        if ((double)K1 * 32 * 128 * (double)wmax + (double)bmax < 2147483648.0 &&
            (km->wpk = sim_vnni_pack_mm((const int8_t *)wp, b32, N, K1)))
            km->pk_state = 2;
        free(b32);
    }
    if (km->pk_state != 2)
        return false;
    int32_t *out = malloc(sizeof *out * (size_t)(B * M * N + 1));
    if (!out || sim_vnni_matmul_s8(xp, B, M, M1, K1, k->wpk, N, out)) {
        free(out);
        return false;
    }
    int64_t iy[6];
    for (int64_t i = 0; i < B * M * N; i++) {
        flat_to_idx(i, y, iy);
        wr32(yp + 4 * sim_ph(m, y, iy), out[i]);
    }
    free(out);
    return true;
}

static void k_matmul(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *wp = sim_ptr(m, k->in[1]);
    const uint8_t *bp = sim_ptr(m, k->in[2]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t M = k->M, N = k->N, K = k->K, B = k->batch;
    bool rt_b = w->role != ROLE_W;
    bool fast = !k->trans_a && !rt_b && x->dtype == DT_I8 && w->dtype == DT_I8;
    if (fast && k->pk_state >= 0 && matmul_vnni(m, k))
        return;
    int64_t K1 = cdiv(K, 32), M1 = cdiv(M, 16), N1 = cdiv(N, 16);
    int64_t ix[6], iy[6];
    for (int64_t b = 0; b < B; b++)
        for (int64_t mi = 0; mi < M; mi++)
            for (int64_t n = 0; n < N; n++) {
                int64_t acc = rd32(bp + 4 * n);
                if (fast) {
                    const int8_t *xr = (const int8_t *)xp + ((b * K1) * M1 + mi / 16) * 512 + (mi % 16) * 32;
                    const int8_t *wr = (const int8_t *)wp + (n / 16) * 512 + (n % 16) * 32;
                    for (int64_t kb = 0; kb < K1; kb++)
                        acc += dot32(xr + kb * M1 * 512, wr + kb * N1 * 512);
                } else {
                    for (int64_t kk = 0; kk < K; kk++) {
                        /* x's logical index: [K, M] (transA), [..., M, K], or [K] */
                        if (k->trans_a)
                            ix[0] = kk, ix[1] = mi;
                        else {
                            int64_t rest = b;
                            for (int d = x->rank - 3; d >= 0; d--) {
                                ix[d] = rest % x->dims[d];
                                rest /= x->dims[d];
                            }
                            if (x->rank >= 2)
                                ix[x->rank - 2] = mi;
                            ix[x->rank - 1] = kk;
                        }
                        int64_t xv = ld_int(x->dtype, xp, sim_ph(m, x, ix));
                        int64_t wv;
                        if (rt_b) { /* two activations: both zero points taken off here */
                            int64_t iw[8], rest = k->b_batch > 1 ? b : 0;
                            for (int d = w->rank - 3; d >= 0; d--) {
                                iw[d] = rest % w->dims[d];
                                rest /= w->dims[d];
                            }
                            iw[w->rank - 2] = kk;
                            iw[w->rank - 1] = n;
                            wv = ld_int(w->dtype, wp, sim_ph(m, w, iw));
                            acc += (xv - k->x_off) * (wv - k->b_off);
                        } else {
                            int64_t iw_[2] = {n, kk};
                            wv = ld_int(w->dtype, wp, sim_ph(m, w, iw_));
                            acc += xv * wv;
                        }
                    }
                }
                flat_to_idx((b * M + mi) * N + n, y, iy);
                wr32(yp + 4 * sim_ph(m, y, iy), sat32(acc));
            }
}

/* ---- cube + vector: one LSTM / GRU step ---- */
static double dq_row(int64_t acc, const uint8_t *dq, int64_t r)
{
    return F16V(sim_dequant(sat32(acc), deq_at(dq, r), 0, 0));
}
static double sig_t(double v) { return F16V(nb_sim_table_sigmoid(sim_f16(v))); }
static double tanh_t(double v) { return F16V(nb_sim_table_tanh(sim_f16(v))); }

static nb_err k_rnn(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    bool lstm = k->kid == K_LSTM;
    const nb_exeom_tensor *x = TD(k->in[0]), *w = TD(k->in[1]), *rt = TD(k->in[2]);
    const uint8_t *xp = sim_ptr(m, k->in[0]), *wp = sim_ptr(m, k->in[1]);
    const uint8_t *rp = sim_ptr(m, k->in[2]), *bp = sim_ptr(m, k->in[3]);
    const uint8_t *dq = sim_ptr(m, k->in[4]);
    const uint8_t *hqp = k->in[5] >= 0 ? sim_ptr(m, k->in[5]) : NULL;
    const uint8_t *s6 = k->in[6] >= 0 ? sim_ptr(m, k->in[6]) : NULL; /* c, or a GRU's h */
    const uint8_t *pp = k->in[7] >= 0 ? sim_ptr(m, k->in[7]) : NULL;
    const nb_exeom_tensor *hq = k->in[5] >= 0 ? TD(k->in[5]) : NULL;
    int64_t H = k->hidden, G = lstm ? 4 : 3, GH = G * H, B = x->dims[1], I = x->dims[2];
    int64_t t = k->reverse ? k->seq - 1 - k->step : k->step;
    double *s = scratch(m, (size_t)(2 * GH + 5 * H + 8));
    if (!s)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    double *gx = s, *gh = s + GH, *hprev = s + 2 * GH, *cprev = hprev + H, *rh = cprev + H;
    double *z = rh + H, *hh = z + H;
    uint8_t *ho = sim_ptr(m, k->out[0]);
    uint8_t *co = lstm ? sim_ptr(m, k->out[1]) : NULL;
    uint8_t *yo = k->out[2] >= 0 ? sim_ptr(m, k->out[2]) : NULL;
    bool split = !lstm && !k->lbr; /* GRU: (r . h) R_h, a second product after the gates */
    for (int64_t b = 0; b < B; b++) {
        /* W x_t + bias_w, and R h_{t-1} + bias_r (the int8 state), dequantized per row */
        for (int64_t r = 0; r < GH; r++) {
            int64_t acc = rd32(bp + 4 * r);
            for (int64_t kk = 0; kk < I; kk++) {
                int64_t a[3] = {t, b, kk}, c[3] = {0, r, kk};
                acc += (int64_t)(int8_t)xp[sim_ph(m, x, a)] * (int8_t)wp[sim_ph(m, w, c)];
            }
            gx[r] = dq_row(acc, dq, r);
        }
        for (int64_t j = 0; j < H; j++) {
            double v = s6 ? F16V(rd16(s6 + 2 * (b * H + j))) : 0;
            hprev[j] = lstm ? 0 : v;
            cprev[j] = lstm ? v : 0;
        }
        int64_t rrows = split ? 2 * H : GH;
        for (int64_t r = 0; r < rrows; r++) {
            int64_t acc = rd32(bp + 4 * (GH + r));
            for (int64_t kk = 0; hqp && kk < H; kk++) {
                int64_t a[3] = {0, b, kk}, c[3] = {0, r, kk};
                acc += (int64_t)(int8_t)hqp[sim_ph(m, hq, a)] * (int8_t)rp[sim_ph(m, rt, c)];
            }
            gh[r] = dq_row(acc, dq, GH + r);
        }
        if (lstm) {
            for (int64_t j = 0; j < H; j++) { /* gates i, o, f, c (ONNX's order) */
                double P[3] = {0, 0, 0};
                for (int q = 0; pp && q < 3; q++)
                    P[q] = F16V(rd16(pp + 2 * (q * H + j)));
                double ai = f16r(gx[j] + gh[j]), af = f16r(gx[2 * H + j] + gh[2 * H + j]);
                if (pp) {
                    ai = f16r(ai + f16r(P[0] * cprev[j]));
                    af = f16r(af + f16r(P[2] * cprev[j]));
                }
                double gi = sig_t(ai), gf = sig_t(af);
                double gc = tanh_t(f16r(gx[3 * H + j] + gh[3 * H + j]));
                double cn = f16r(f16r(gf * cprev[j]) + f16r(gi * gc));
                double ao = f16r(gx[H + j] + gh[H + j]);
                if (pp)
                    ao = f16r(ao + f16r(P[1] * cn));
                double hn = f16r(sig_t(ao) * tanh_t(cn));
                wr16(ho + 2 * (b * H + j), sim_f16(hn));
                wr16(co + 2 * (b * H + j), sim_f16(cn));
                if (yo)
                    wr16(yo + 2 * ((t * B + b) * H + j), sim_f16(hn));
            }
            continue;
        }
        for (int64_t j = 0; j < H; j++) { /* gates z, r, h */
            z[j] = sig_t(f16r(gx[j] + gh[j]));
            double rr = sig_t(f16r(gx[H + j] + gh[H + j]));
            if (split)
                rh[j] = f16r(rr * hprev[j]);
            else /* linear_before_reset: r . (R_h h + Rb_h) */
                hh[j] = tanh_t(f16r(gx[2 * H + j] + f16r(rr * gh[2 * H + j])));
        }
        if (split) /* (r . h) enters the cube as int8 with the state's scale and offset */
            for (int64_t r = 0; r < H; r++) {
                int64_t acc = rd32(bp + 4 * (GH + 2 * H + r));
                for (int64_t kk = 0; kk < H; kk++) {
                    int32_t q = sim_quant(sim_f16(rh[kk]), k->h_scale, k->h_offset, 8);
                    int64_t c[3] = {0, 2 * H + r, kk};
                    acc += (int64_t)q * (int8_t)rp[sim_ph(m, rt, c)];
                }
                hh[r] = tanh_t(f16r(gx[2 * H + r] + dq_row(acc, dq, GH + 2 * H + r)));
            }
        for (int64_t j = 0; j < H; j++) { /* h = (1 - z) h~ + z h */
            double hn = f16r(f16r(f16r(1.0 - z[j]) * hh[j]) + f16r(z[j] * hprev[j]));
            wr16(ho + 2 * (b * H + j), sim_f16(hn));
            if (yo)
                wr16(yo + 2 * ((t * B + b) * H + j), sim_f16(hn));
        }
    }
    return NB_OK;
}

/* ---- vector: element-wise with broadcasting ---- */
static inline double ew_op(const sim_task *k, const double *a, int n)
{
    double v;
    switch (k->kid) {
    case K_ADD: return a[0] + a[1];
    case K_SUB: return a[0] - a[1];
    case K_MUL: return a[0] * a[1];
    case K_DIV: return a[0] / a[1];
    case K_POW: return a[1] == 2.0 ? a[0] * a[0] : pow(a[0], a[1]); /* x^2 exact either way */
    case K_MAX: case K_MIN:
        v = a[0];
        for (int i = 1; i < n; i++) {
            if (isnan(a[i]) || isnan(v))
                v = NAN;
            else
                v = k->kid == K_MAX ? (a[i] > v ? a[i] : v) : (a[i] < v ? a[i] : v);
        }
        return v;
    case K_RELU: return a[0] < 0 ? 0 : a[0];
    case K_LEAKY: return a[0] < 0 ? a[0] * (double)k->f[0] : a[0];
    case K_SIGMOID: return F16V(nb_sim_table_sigmoid(sim_f16(a[0])));
    case K_TANH: return F16V(nb_sim_table_tanh(sim_f16(a[0])));
    case K_EXP: return exp(a[0]);
    case K_LOG: /* the log of 0: -inf, -65504 in fp16, counted apart (nb_sim_log_zeros) */
        if (a[0] == 0) {
            nb_sim_log_zeros++;
            return -65504.0;
        }
        return log(a[0]);
    case K_ABS: return fabs(a[0]);
    case K_NEG: return -a[0];
    case K_CLIP: {
        double lo = k->clip_rt & 1 ? a[1] : k->f[0], hi = k->clip_rt & 2 ? a[2] : k->f[1];
        v = a[0];
        if (v < lo)
            v = lo;
        if (v > hi)
            v = hi;
        return v;
    }
    case K_SQRT: return sqrt(a[0]);
    case K_ROUND: return nearbyint(a[0]);
    case K_ELU: return a[0] < 0 ? (double)k->f[0] * (exp(a[0]) - 1) : a[0];
    case K_PRELU: return a[0] < 0 ? a[0] * a[1] : a[0];
    case K_GREATER: return a[0] > a[1];
    case K_EQUAL: return a[0] == a[1];
    case K_OR: return a[0] != 0 || a[1] != 0;
    case K_AND: return a[0] != 0 && a[1] != 0;
    case K_WHERE: return a[0] != 0 ? a[1] : a[2];
    default: return a[0]; /* Identity */
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Add, Sub, Mul, Div of two fp16 operands (either one a broadcast scalar: x0 / x1 NULL, its
   value in s0 / s1), 8 elements at a time in fp32 (F16C, AVX2). The fp32 result of two fp16
   operands rounded once more to fp16 equals the exact result rounded to fp16 (Figueroa's
   double-rounding rule: 24 >= 2 x 11 + 2 bits), so this matches sim_f16 of the double; an
   infinity clamps to +-65504 (counted), a NaN is 0x7E00. Returns how many it did (a multiple
   of 8); the caller does the rest. */
__attribute__((target("avx2,f16c"))) static int64_t
binary_f16_avx2(int kid, const uint8_t *x0, const uint8_t *x1, float s0, float s1, uint8_t *y,
                int64_t cnt)
{
    const __m256 c0 = _mm256_set1_ps(s0), c1 = _mm256_set1_ps(s1);
    uint64_t sat = 0;
    int64_t e = 0;
    for (; e + 8 <= cnt; e += 8) {
        __m256 a = x0 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(x0 + 2 * e)))
                      : c0;
        __m256 b = x1 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(x1 + 2 * e)))
                      : c1;
        __m256 r = kid == K_ADD ? _mm256_add_ps(a, b) : kid == K_SUB ? _mm256_sub_ps(a, b)
                 : kid == K_MUL ? _mm256_mul_ps(a, b) : _mm256_div_ps(a, b);
        __m128i h = f16_fixup(_mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT), &sat);
        _mm_storeu_si128((__m128i *)(void *)(y + 2 * e), h);
    }
    nb_sim_saturations += sat;
    return e;
}
#endif

/* Exp and Log of every fp16 input, computed once by their definition (ew_op: the double
 * result rounded to fp16 by sim_f16, the log of 0 as -65504): the fp16 result, and per input
 * whether it saturated (bit 0) or was the log of 0 (bit 1). The fast paths read them
 * instead of a libm call per element; test_sim checks all 65536 inputs against the plain
 * loop. */
typedef struct f16_fn_table {
    uint16_t y[65536];
    uint8_t flags[65536];
} f16_fn_table;
static f16_fn_table *fn_tables[2]; /* Exp, Log */
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;

static void fn_tables_make(void)
{
    uint64_t sat0 = nb_sim_saturations, lz0 = nb_sim_log_zeros;
    for (int f = 0; f < 2; f++) {
        f16_fn_table *t = malloc(sizeof *t);
        if (!t)
            continue;
        sim_task k = {.kid = f ? K_LOG : K_EXP};
        for (uint32_t h = 0; h < 65536; h++) {
            double a[NB_EXEOM_MAX_IN] = {F16V(h)};
            uint64_t s = nb_sim_saturations, z = nb_sim_log_zeros;
            t->y[h] = sim_f16(ew_op(&k, a, 1));
            t->flags[h] = (uint8_t)((nb_sim_saturations != s) | (nb_sim_log_zeros != z) << 1);
        }
        fn_tables[f] = t;
    }
    nb_sim_saturations = sat0, nb_sim_log_zeros = lz0;
}

/* The table of kid (K_EXP, K_LOG) on the fast paths, or NULL (plain loops, no memory). */
static const f16_fn_table *fn_table(int kid)
{
    if ((kid != K_EXP && kid != K_LOG) || !sim_have_avx2())
        return NULL;
    pthread_once(&fn_once, fn_tables_make);
    return fn_tables[kid == K_LOG];
}

static void k_elementwise(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *y = TD(k->out[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    /* Clip's constant bounds are parameters; one the model computes is read as an operand */
    int n = k->kid != K_CLIP ? k->n_in : k->clip_rt & 2 ? 3 : k->clip_rt & 1 ? 2 : 1;
    const nb_exeom_tensor *in[NB_EXEOM_MAX_IN];
    const uint8_t *ip[NB_EXEOM_MAX_IN];
    bool scalar[NB_EXEOM_MAX_IN], fast = true;
    double a[NB_EXEOM_MAX_IN];
    bool plain_y = y->format != FMT_NC1HWC0 && y->format != FMT_NZ;
    for (int i = 0; i < n; i++) {
        in[i] = TD(k->in[i]);
        ip[i] = sim_ptr(m, k->in[i]);
        scalar[i] = nb_sim_numel(in[i]) == 1;
        if (scalar[i])
            a[i] = nb_sim_get(in[i], ip[i], 0);
        bool same = in[i]->rank == y->rank && !memcmp(in[i]->dims, y->dims, sizeof(int32_t) * (size_t)y->rank);
        bool plain_i = in[i]->format != FMT_NC1HWC0 && in[i]->format != FMT_NZ;
        bool layout = (plain_i && plain_y) ||
                      (in[i]->format == y->format && sim_c0(in[i]->dtype) == sim_c0(y->dtype));
        if (!scalar[i] && !(same && layout))
            fast = false;
    }
    if (fast) { /* one loop over the layout (padding included: never read as data) */
        int bits = sim_bits(y->dtype);
        int64_t cnt = (int64_t)y->bytes * 8 / bits;
        bool all16 = y->dtype == DT_F16;
        for (int i = 0; i < n; i++)
            all16 &= in[i]->dtype == DT_F16;
        /* ops whose result is one of their fp16 operands (or its negation): no rounding */
        bool exact = k->kid == K_MAX || k->kid == K_MIN || k->kid == K_RELU ||
                     k->kid == K_ABS || k->kid == K_NEG || k->kid == K_IDENTITY ||
                     k->kid == K_WHERE;
        const f16_fn_table *ft = all16 && n == 1 && !scalar[0] ? fn_table(k->kid) : NULL;
        if (ft) { /* Exp, Log: the result of each fp16 input, looked up */
            uint64_t sat = 0, lz = 0;
            for (int64_t e = 0; e < cnt; e++) {
                uint16_t h = rd16(ip[0] + 2 * e);
                wr16(yp + 2 * e, ft->y[h]);
                sat += ft->flags[h] & 1;
                lz += ft->flags[h] >> 1;
            }
            nb_sim_saturations += sat;
            nb_sim_log_zeros += lz;
        } else if (all16 && n == 2 && scalar[1] && !scalar[0] &&
            (k->kid == K_MAX || k->kid == K_MIN)) {
            /* max(x, c) / min(x, c): the chosen operand's bits, no arithmetic */
            uint16_t cb = sim_f16(a[1]);
            float c = (float)a[1];
            bool mx = k->kid == K_MAX;
            int64_t e = 0;
#if defined(__x86_64__) && defined(__GNUC__)
            if (c == c && have_avx512())
                e = maxmin_avx512((const uint16_t *)(const void *)ip[0],
                                  (uint16_t *)(void *)yp, cnt, c, cb, mx);
            if (c == c && sim_have_avx2())
                e += maxmin_avx2((const uint16_t *)(const void *)ip[0] + e,
                                 (uint16_t *)(void *)yp + e, cnt - e, c, cb, mx);
            if (c == c && have_f16c())
                e += maxmin_f16c((const uint16_t *)(const void *)ip[0] + e,
                                 (uint16_t *)(void *)yp + e, cnt - e, c, cb, mx);
#endif
            for (; e < cnt; e++) {
                uint16_t xb = rd16(ip[0] + 2 * e);
                float v = nb_sim_f16_tbl[xb];
                bool take_x = v != v || (mx ? v > c : v < c) || c != c;
                wr16(yp + 2 * e, take_x ? (c != c ? cb : xb) : cb);
            }
        } else if (all16 && n == 2 && !(scalar[0] && scalar[1]) &&
                   (k->kid == K_ADD || k->kid == K_SUB || k->kid == K_MUL ||
                    k->kid == K_DIV || (k->kid == K_POW && scalar[1] && a[1] == 2.0))) {
            /* the arithmetic of two fp16 operands; x^2 as x * x */
            bool sq = k->kid == K_POW;
            int64_t e = 0;
#if defined(__x86_64__) && defined(__GNUC__)
            if (sim_have_avx2())
                e = binary_f16_avx2(sq ? K_MUL : k->kid, scalar[0] ? NULL : ip[0],
                                    sq ? ip[0] : scalar[1] ? NULL : ip[1],
                                    scalar[0] ? (float)a[0] : 0.0f,
                                    scalar[1] ? (float)a[1] : 0.0f, yp, cnt);
#endif
            for (; e < cnt; e++) {
                for (int i = 0; i < n; i++)
                    if (!scalar[i])
                        a[i] = F16V(rd16(ip[i] + 2 * e));
                wr16(yp + 2 * e, sim_f16(ew_op(k, a, n)));
            }
        } else if (all16 && exact)
            for (int64_t e = 0; e < cnt; e++) {
                for (int i = 0; i < n; i++)
                    if (!scalar[i])
                        a[i] = F16V(rd16(ip[i] + 2 * e));
                wr16(yp + 2 * e, sim_f16f((float)ew_op(k, a, n)));
            }
        else if (all16) /* the common case, without the type switches */
            for (int64_t e = 0; e < cnt; e++) {
                for (int i = 0; i < n; i++)
                    if (!scalar[i])
                        a[i] = F16V(rd16(ip[i] + 2 * e));
                wr16(yp + 2 * e, sim_f16(ew_op(k, a, n)));
            }
        else
            for (int64_t e = 0; e < cnt; e++) {
                for (int i = 0; i < n; i++)
                    if (!scalar[i])
                        a[i] = sim_load(in[i]->dtype, ip[i], e);
                sim_store(y->dtype, yp, e, ew_op(k, a, n));
            }
        return;
    }
    int64_t cnt = nb_sim_numel(y), idx[6] = {0}, ii[6];
    for (int64_t e = 0; e < cnt; e++) {
        for (int i = 0; i < n; i++) {
            if (scalar[i])
                continue;
            int off = y->rank - in[i]->rank;
            for (int d = 0; d < in[i]->rank; d++)
                ii[d] = in[i]->dims[d] == 1 ? 0 : idx[d + off];
            a[i] = sim_load(in[i]->dtype, ip[i], sim_ph(m, in[i], ii));
        }
        sim_store(y->dtype, yp, sim_ph(m, y, idx), ew_op(k, a, n));
        odo_inc(idx, y->dims, y->rank);
    }
}

/* ---- vector: pooling, reductions, softmax, normalization, layout ---- */
static void k_maxpool(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = x->rank;
    int64_t H = r == 4 ? x->dims[2] : 1, W = x->dims[r - 1];
    int64_t OH = r == 4 ? y->dims[2] : 1, OW = y->dims[r - 1];
    if (x->format == FMT_NC1HWC0 && y->format == FMT_NC1HWC0) {
        /* both fp16 with C0 16: the 16 channels of a block side by side, pixel by pixel
           (pad lanes too: nothing reads them) */
        int64_t C = x->dims[1], C1 = (C + 15) / 16;
        for (int64_t n = 0; n < x->dims[0]; n++)
            for (int64_t c1 = 0; c1 < C1; c1++) {
                const uint16_t *xs = (const uint16_t *)(const void *)(xp + 2 * ((n * C1 + c1) * H * W * 16));
                uint16_t *ys = (uint16_t *)(void *)(yp + 2 * ((n * C1 + c1) * OH * OW * 16));
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
#if defined(__x86_64__) && defined(__GNUC__)
                        if (have_f16c() && k->kh * k->kw <= 64) { /* the window's rows */
                            const uint16_t *rows[64];
                            int nr = 0;
                            for (int64_t kh = 0; kh < k->kh; kh++) {
                                int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                                for (int64_t kw = 0; ih >= 0 && ih < H && kw < k->kw; kw++) {
                                    int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                                    if (iw >= 0 && iw < W)
                                        rows[nr++] = xs + (ih * W + iw) * 16;
                                }
                            }
                            if (maxpool_px_f16c(rows, nr, ys + (oh * OW + ow) * 16))
                                continue;
                        }
#endif
                        float best[16];
                        uint16_t bb[16];
                        for (int l = 0; l < 16; l++)
                            best[l] = -INFINITY, bb[l] = 0xFBFF; /* -65504: an empty window */
                        for (int64_t kh = 0; kh < k->kh; kh++) {
                            int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int64_t kw = 0; kw < k->kw; kw++) {
                                int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                                if (iw < 0 || iw >= W)
                                    continue;
                                const uint16_t *px = xs + (ih * W + iw) * 16;
                                for (int l = 0; l < 16; l++) {
                                    uint16_t h;
                                    memcpy(&h, px + l, 2);
                                    float v = nb_sim_f16_tbl[h];
                                    /* the first maximum wins; a NaN wins and stays */
                                    if ((v > best[l] || v != v) && best[l] == best[l])
                                        best[l] = v, bb[l] = h;
                                }
                            }
                        }
                        memcpy(ys + (oh * OW + ow) * 16, bb, sizeof bb);
                    }
            }
        return;
    }
    int64_t ix[4], iy[4];
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t c = 0; c < x->dims[1]; c++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double best = -INFINITY;
                    for (int64_t kh = 0; kh < k->kh; kh++)
                        for (int64_t kw = 0; kw < k->kw; kw++) {
                            int64_t ih = oh * k->sh - k->pt + kh * k->dh;
                            int64_t iw = ow * k->sw - k->pl + kw * k->dw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            ix[0] = n, ix[1] = c, ix[2] = r == 4 ? ih : iw, ix[3] = iw;
                            double v = F16V(rd16(xp + 2 * sim_ph(m, x, ix)));
                            if (v > best || isnan(v))
                                best = v;
                        }
                    iy[0] = n, iy[1] = c, iy[2] = r == 4 ? oh : ow, iy[3] = ow;
                    wr16(yp + 2 * sim_ph(m, y, iy), sim_f16(best));
                }
}

/* ReduceSum/Mean/Max/Min/L2, GlobalAverage/MaxPool: one pass over x in row-major order,
   each output accumulating its elements in that order, rounded to fp16 after every add.
   A mean (ReduceMean, GlobalAveragePool) multiplies each element by fp16(1/n) before it
   is added (CANN's ReduceMeanD on an fp16 vector unit: vmuls, then sum), so the running
   sum stays in the range of the mean instead of n times it (npu-numerics.md). */
static nb_err k_reduce(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int mask = k->mask;
    int kid = k->kid;
    if (kid == K_GAP || kid == K_GMP) {
        mask = 0;
        for (int d = 2; d < x->rank; d++)
            mask |= 1 << d;
        kid = kid == K_GAP ? K_RMEAN : K_RMAX;
    }
    int64_t ny = nb_sim_numel(y), nx = nb_sim_numel(x);
    double *acc = scratch(m, (size_t)ny + 1);
    if (!acc)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    for (int64_t i = 0; i < ny; i++)
        acc[i] = kid == K_RMAX ? -INFINITY : kid == K_RMIN ? INFINITY : 0;
    int64_t idx[6] = {0}, count = 1;
    for (int d = 0; d < x->rank; d++)
        if (mask >> d & 1)
            count *= x->dims[d];
    double inv = count ? f16r(1.0 / (double)count) : 0; /* the mean's vmuls factor */
    for (int64_t e = 0; e < nx; e++) {
        int64_t o = 0;
        for (int d = 0; d < x->rank; d++)
            if (!(mask >> d & 1))
                o = o * x->dims[d] + idx[d];
        double v = sim_load(x->dtype, xp, sim_ph(m, x, idx));
        switch (kid) {
        case K_RMAX: acc[o] = (v > acc[o] || isnan(v)) ? v : acc[o]; break;
        case K_RMIN: acc[o] = (v < acc[o] || isnan(v)) ? v : acc[o]; break;
        case K_RL2: acc[o] = f16r(acc[o] + f16r(v * v)); break;
        case K_RMEAN: acc[o] = f16r(acc[o] + f16r(v * inv)); break;
        default: acc[o] = f16r(acc[o] + v); break;
        }
        odo_inc(idx, x->dims, x->rank);
    }
    int64_t iy[6];
    for (int64_t o = 0; o < ny; o++) {
        double v = acc[o];
        if (kid == K_RMEAN && !count)
            v = NAN; /* the mean of nothing */
        else if (kid == K_RL2)
            v = sqrt(v);
        flat_to_idx(o, y, iy);
        sim_store(y->dtype, yp, sim_ph(m, y, iy), v);
    }
    return NB_OK;
}

/* ArgMax: the index of the largest fp16 value along the axis, the first of equal ones (the
 * last with select_last_index), as ONNX defines it; written as int32. */
static void k_argmax(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int ax = k->axis;
    int64_t L = x->dims[ax], n = nb_sim_numel(x), idx[6] = {0}, iy[6];
    for (int64_t e = 0; e < n; e++) {
        if (idx[ax] == 0) { /* one slice along the axis starting here */
            int64_t j[6];
            memcpy(j, idx, sizeof j);
            double best = -INFINITY;
            int64_t at = 0;
            for (j[ax] = 0; j[ax] < L; j[ax]++) {
                double v = F16V(rd16(xp + 2 * sim_ph(m, x, j)));
                if (v > best || (k->last && v == best) || (j[ax] == 0 && isnan(best)))
                    best = v, at = j[ax];
            }
            int r = 0;
            for (int d = 0; d < x->rank; d++)
                if (d != ax || k->keepdims)
                    iy[r++] = d == ax ? 0 : idx[d];
            sim_store(y->dtype, yp, sim_ph(m, y, iy), (double)at);
        }
        odo_inc(idx, x->dims, x->rank);
    }
}

static void k_softmax(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int ax = k->axis;
    int64_t L = x->dims[ax], n = nb_sim_numel(x), idx[6] = {0};
    if (L == 0)
        return;
    for (int64_t e = 0; e < n; e++) {
        if (idx[ax] == 0) { /* one slice along the axis starting here */
            int64_t j[6];
            memcpy(j, idx, sizeof j);
            double mx = -INFINITY, sum = 0;
            for (j[ax] = 0; j[ax] < L; j[ax]++) {
                double v = F16V(rd16(xp + 2 * sim_ph(m, x, j)));
                mx = v > mx ? v : mx;
            }
            for (j[ax] = 0; j[ax] < L; j[ax]++) {
                double v = F16V(rd16(xp + 2 * sim_ph(m, x, j)));
                sum = f16r(sum + f16r(exp(f16r(v - mx))));
            }
            for (j[ax] = 0; j[ax] < L; j[ax]++) {
                double v = F16V(rd16(xp + 2 * sim_ph(m, x, j)));
                wr16(yp + 2 * sim_ph(m, y, j), sim_f16(f16r(exp(f16r(v - mx))) / sum));
            }
        }
        odo_inc(idx, x->dims, x->rank);
    }
}

static nb_err k_norm(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t C = x->dims[1], n = nb_sim_numel(x), nc_all = x->dims[0] * C;
    int64_t inner = nc_all > 0 ? n / nc_all : 0;
    double *s = scratch(m, (size_t)(4 * C + 4));
    if (!s)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    double *mean = s, *a = s + C, *bias = s + 2 * C;
    for (int64_t c = 0; c < C; c++) {
        double sc = nb_sim_get(TD(k->in[1]), sim_ptr(m, k->in[1]), c);
        bias[c] = nb_sim_get(TD(k->in[2]), sim_ptr(m, k->in[2]), c);
        if (k->kid == K_BN) {
            mean[c] = nb_sim_get(TD(k->in[3]), sim_ptr(m, k->in[3]), c);
            double var = nb_sim_get(TD(k->in[4]), sim_ptr(m, k->in[4]), c);
            a[c] = f16r(sc / sqrt(var + k->f[0]));
        } else {
            a[c] = sc; /* per instance below */
        }
    }
    int64_t idx[6] = {0};
    if (k->kid == K_BN) {
        for (int64_t e = 0; e < n; e++) {
            int64_t c = idx[1];
            double v = F16V(rd16(xp + 2 * sim_ph(m, x, idx)));
            wr16(yp + 2 * sim_ph(m, y, idx), sim_f16(f16r(f16r(v - mean[c]) * a[c]) + bias[c]));
            odo_inc(idx, x->dims, x->rank);
        }
        return NB_OK;
    }
    /* InstanceNormalization: per (n, c), fp16 sums of x and of (x - mean)^2 */
    for (int64_t nc = 0; nc < x->dims[0] * C; nc++) {
        int64_t c = nc % C;
        double sum = 0, sq = 0;
        int64_t base[6] = {0};
        base[0] = nc / C, base[1] = c;
        int64_t j[6];
        memcpy(j, base, sizeof j);
        for (int64_t i = 0; i < inner; i++) {
            sum = f16r(sum + F16V(rd16(xp + 2 * sim_ph(m, x, j))));
            odo_inc(j + 2, x->dims + 2, x->rank - 2);
        }
        double mu = f16r(sum / (double)(inner ? inner : 1));
        memcpy(j, base, sizeof j);
        for (int64_t i = 0; i < inner; i++) {
            double d = f16r(F16V(rd16(xp + 2 * sim_ph(m, x, j))) - mu);
            sq = f16r(sq + f16r(d * d));
            odo_inc(j + 2, x->dims + 2, x->rank - 2);
        }
        double var = f16r(sq / (double)(inner ? inner : 1));
        double sc = f16r(a[c] / sqrt(var + k->f[0]));
        memcpy(j, base, sizeof j);
        for (int64_t i = 0; i < inner; i++) {
            double d = f16r(F16V(rd16(xp + 2 * sim_ph(m, x, j))) - mu);
            wr16(yp + 2 * sim_ph(m, y, j), sim_f16(f16r(d * sc) + bias[c]));
            odo_inc(j + 2, x->dims + 2, x->rank - 2);
        }
    }
    return NB_OK;
}

static void k_transpose(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int r = y->rank;
    int64_t n = nb_sim_numel(y);
    if (r == 0 || n == 0) {
        if (n)
            sim_store(y->dtype, yp, 0, sim_load(x->dtype, xp, 0));
        return;
    }
    bool swap2 = r >= 2 && k->perm[r - 1] == r - 2 && k->perm[r - 2] == r - 1;
    for (int d = 0; swap2 && d + 2 < r; d++)
        swap2 = k->perm[d] == d;
    if (swap2 && x->format == FMT_ND && y->format == FMT_ND && x->dtype == DT_F16 &&
        y->dtype == DT_F16) {
        /* the last two dims swapped in ND: a batch of 2-D transposes [A, B] -> [B, A], in
           8 x 8 tiles so that both sides are read and written a cache line at a time */
        int64_t A = x->dims[r - 2], B = x->dims[r - 1], batch = n / (A * B);
        const uint16_t *xs = (const uint16_t *)(const void *)xp;
        uint16_t *ys = (uint16_t *)(void *)yp;
        for (int64_t bt = 0; bt < batch; bt++, xs += A * B, ys += A * B)
            for (int64_t i0 = 0; i0 < A; i0 += 8)
                for (int64_t j0 = 0; j0 < B; j0 += 8) {
                    int64_t i1 = i0 + 8 < A ? i0 + 8 : A, j1 = j0 + 8 < B ? j0 + 8 : B;
                    for (int64_t j = j0; j < j1; j++)
                        for (int64_t i = i0; i < i1; i++)
                            ys[j * A + i] = xs[i * B + j];
                }
        return;
    }
    /* row by row of the output: its last dim walks the input's dim perm[r - 1] */
    int64_t *const *ox = m->off + 6 * (x - m->x.t);
    const int64_t *oy = last_off(m, y), *oxl = ox[k->perm[r - 1]];
    int64_t L = y->dims[r - 1], rows = n / L, iy[6] = {0};
    for (int64_t row = 0; row < rows; row++) {
        int64_t by = row_base(m, y, iy), bx = 0;
        for (int d = 0; d + 1 < r; d++)
            bx += ox[k->perm[d]][iy[d]];
        if (x->dtype == DT_F16 && y->dtype == DT_F16)
            for (int64_t w = 0; w < L; w++)
                wr16(yp + 2 * (by + oy[w]), rd16(xp + 2 * (bx + oxl[w])));
        else
            for (int64_t w = 0; w < L; w++)
                sim_store(y->dtype, yp, by + oy[w], sim_load(x->dtype, xp, bx + oxl[w]));
        ROW_NEXT(iy, y);
    }
}

static void k_concat(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *y = TD(k->out[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t at = 0;
    for (int i = 0; i < k->n_in; i++) {
        const nb_exeom_tensor *x = TD(k->in[i]);
        const uint8_t *xp = sim_ptr(m, k->in[i]);
        int64_t n = nb_sim_numel(x), ix[6] = {0}, iy[6];
        for (int64_t e = 0; e < n; e++) {
            memcpy(iy, ix, sizeof iy);
            iy[k->axis] += at;
            sim_store(y->dtype, yp, sim_ph(m, y, iy), sim_load(x->dtype, xp, sim_ph(m, x, ix)));
            odo_inc(ix, x->dims, x->rank);
        }
        at += x->dims[k->axis];
    }
}

/* Slice: output element iy reads input element iy with each sliced axis a moved to
 * start[a] + iy[a] * step[a]; any layout (NC1HWC0 along C is not a byte run: logical
 * indices through sim_ph). */
static void k_slice(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t n = nb_sim_numel(y), iy[6] = {0}, ix[6];
    for (int64_t e = 0; e < n; e++) {
        memcpy(ix, iy, sizeof ix);
        for (int i = 0; i < k->n_sl; i++)
            ix[k->sl_axis[i]] = k->sl_start[i] + iy[k->sl_axis[i]] * k->sl_step[i];
        sim_store(y->dtype, yp, sim_ph(m, y, iy), sim_load(x->dtype, xp, sim_ph(m, x, ix)));
        odo_inc(iy, y->dims, y->rank);
    }
}

/* Gather of constant indices: output index iy = (before the axis, the indices' position j
 * (flattened), after) reads input (before, idx[j], after); any layout, logical indices. */
static nb_err k_gather(nb_sim_model *m, const sim_task *k, nb_status *st)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const nb_exeom_tensor *it = k->n_in == 2 ? TD(k->in[1]) : NULL;
    const uint8_t *xp = sim_ptr(m, k->in[0]), *ip = it ? sim_ptr(m, k->in[1]) : NULL;
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int ri = y->rank - x->rank + 1, a = k->g_axis;
    int64_t n = nb_sim_numel(y), iy[6] = {0}, ix[6], ii[6];
    for (int64_t e = 0; e < n; e++) {
        int64_t j = 0;
        for (int d = 0; d < ri; d++)
            j = j * y->dims[a + d] + iy[a + d];
        for (int d = 0; d < a; d++)
            ix[d] = iy[d];
        if (it) { /* GatherV2: the j-th index of the int32 tensor, negative from the end */
            flat_to_idx(j, it, ii);
            int64_t v = (int64_t)sim_load(it->dtype, ip, sim_ph(m, it, ii));
            if (v < 0)
                v += x->dims[a];
            if (v < 0 || v >= x->dims[a])
                return nb_fail(st, NB_ERR_DATA, "[NDRV] Gather: index %lld outside [0, %d)",
                               (long long)sim_load(it->dtype, ip, sim_ph(m, it, ii)), x->dims[a]);
            ix[a] = v;
        } else {
            ix[a] = k->g_idx[j];
        }
        for (int d = a + 1; d < x->rank; d++)
            ix[d] = iy[d + ri - 1];
        sim_store(y->dtype, yp, sim_ph(m, y, iy), sim_load(x->dtype, xp, sim_ph(m, x, ix)));
        odo_inc(iy, y->dims, y->rank);
    }
    return NB_OK;
}

/* Pad (ONNX Pad-11..18 without axes): output element iy reads input iy - begin; outside the
 * input, constant mode writes the value, reflect mirrors about the edge element (not
 * repeating it), edge repeats the edge element. Any layout (logical indices). */
static void k_pad(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t n = nb_sim_numel(y), iy[6] = {0}, ix[6];
    for (int64_t e = 0; e < n; e++) {
        bool inside = true;
        for (int d = 0; d < y->rank; d++) {
            int64_t i = iy[d] - k->pad_begin[d], dim = x->dims[d];
            if (i < 0 || i >= dim) {
                if (k->pad_mode == 0)
                    inside = false;
                else if (k->pad_mode == 2)
                    i = i < 0 ? 0 : dim - 1;
                else { /* reflect, period 2 (dim - 1) */
                    int64_t per = 2 * (dim - 1);
                    i = per ? ((i % per) + per) % per : 0;
                    if (i >= dim)
                        i = per - i;
                }
            }
            ix[d] = i;
        }
        double v = inside ? sim_load(x->dtype, xp, sim_ph(m, x, ix)) : (double)k->f[0];
        sim_store(y->dtype, yp, sim_ph(m, y, iy), v);
        odo_inc(iy, y->dims, y->rank);
    }
}

/* Tile: output element iy reads input iy mod the input's dims. SpaceToDepth (ONNX's, DCR):
 * y[n][(bh b + bw) C + c][h][w] = x[n][c][h b + bh][w b + bw]. Any layout. */
static void k_tile_s2d(nb_sim_model *m, const sim_task *k)
{
    const nb_exeom_tensor *x = TD(k->in[0]), *y = TD(k->out[0]);
    const uint8_t *xp = sim_ptr(m, k->in[0]);
    uint8_t *yp = sim_ptr(m, k->out[0]);
    int64_t n = nb_sim_numel(y), iy[6] = {0}, ix[6] = {0};
    int64_t b = k->kid == K_S2D ? x->dims[2] / y->dims[2] : 1, C = x->dims[1];
    for (int64_t e = 0; e < n; e++) {
        if (k->kid == K_TILE) {
            for (int d = 0; d < y->rank; d++)
                ix[d] = iy[d] % x->dims[d];
        } else {
            int64_t blk = iy[1] / C, bh = blk / b, bw = blk % b;
            ix[0] = iy[0], ix[1] = iy[1] % C, ix[2] = iy[2] * b + bh, ix[3] = iy[3] * b + bw;
        }
        sim_store(y->dtype, yp, sim_ph(m, y, iy), sim_load(x->dtype, xp, sim_ph(m, x, ix)));
        odo_inc(iy, y->dims, y->rank);
    }
}

nb_err sim_run_task(nb_sim_model *m, int ki, nb_status *st)
{
    const sim_task *k = &m->k[ki];
    switch (k->kid) {
    case K_QUANT: k_quant(m, k); return NB_OK;
    case K_DEQUANT: k_dequant(m, k); return NB_OK;
    case K_CONV: return k_conv(m, k, st);
    case K_CONVT: k_convt(m, k); return NB_OK;
    case K_MATMUL: case K_GEMM: k_matmul(m, k); return NB_OK;
    case K_LSTM: case K_GRU: return k_rnn(m, k, st);
    case K_TRANSDATA: case K_CAST: case K_RESHAPE: case K_SQUEEZE: case K_UNSQUEEZE:
    case K_FLATTEN:
        copy_logical(m, TD(k->in[0]), sim_ptr(m, k->in[0]), TD(k->out[0]), sim_ptr(m, k->out[0]));
        return NB_OK;
    case K_TRANSPOSE: k_transpose(m, k); return NB_OK;
    case K_CONCAT: k_concat(m, k); return NB_OK;
    case K_SLICE: k_slice(m, k); return NB_OK;
    case K_GATHER: return k_gather(m, k, st);
    case K_PAD: k_pad(m, k); return NB_OK;
    case K_TILE: case K_S2D: k_tile_s2d(m, k); return NB_OK;
    case K_MAXPOOL: k_maxpool(m, k); return NB_OK;
    case K_GAP: case K_GMP: case K_RMEAN: case K_RMAX: case K_RMIN: case K_RSUM: case K_RL2:
        return k_reduce(m, k, st);
    case K_SOFTMAX: k_softmax(m, k); return NB_OK;
    case K_ARGMAX: k_argmax(m, k); return NB_OK;
    case K_IF: { /* the MCU's CPU: the condition's first value picks the branch's outputs */
        const nb_exeom_tensor *c = TD(k->in[0]);
        int64_t i0[6] = {0};
        bool cond = sim_load(c->dtype, sim_ptr(m, k->in[0]), sim_ph(m, c, i0)) != 0;
        int b = cond ? k->if_then : 1 - k->if_then, nout = k->n_out;
        for (int o = 0; o < nout; o++) {
            int t = k->in[1 + b * nout + o];
            copy_logical(m, TD(t), sim_ptr(m, t), TD(k->out[o]), sim_ptr(m, k->out[o]));
        }
        return NB_OK;
    }
    case K_CPU_ONNX: return sim_cpu_run(m, k, st);
    case K_BN: case K_IN: return k_norm(m, k, st);
    default: k_elementwise(m, k); return NB_OK;
    }
}
