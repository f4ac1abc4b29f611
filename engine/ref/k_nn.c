/* nanobench: reference kernels of the nn operators (ONNX Operators.md, opset 11-18, and the
 * attribute forms of opsets 1-10): Conv, ConvTranspose, MatMul, Gemm, MaxPool, AveragePool,
 * LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool.
 *
 * float32 throughout. FLOAT16 data (and MaxPool's INT8/UINT8) is converted to float32,
 * computed, and converted back; MatMul of integers is computed exactly (wrapping) in 64 bits.
 * Conv, ConvTranspose, MatMul and Gemm run on OpenBLAS cblas_sgemm: Conv as W x im2col(X)
 * per image and group (X itself for 1x1 stride-1 unpadded kernels), ConvTranspose as
 * col2im(W^T x X). Spatial loops work on 3-D geometry: 1-D and 2-D operators get leading
 * spatial dims of size 1. Conv's im2col is done a block of output rows at a time (about
 * 256 KiB of columns, so they stay in L2 while sgemm packs them); the im2col / col2im
 * columns live in a per-thread scratch buffer that is reused from one call to the next.
 *
 * Shape inference (engine/ir/infer_nn.c) has run on the same inputs just before a kernel:
 * attributes are valid and the outputs have the inferred shapes, from which the kernels
 * take the output sizes.
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

/* ---------------------------------------------------------------- scratch buffers */

/* Per-thread reusable buffers. Buffers above SCRATCH_KEEP bytes are released after use so
 * that one large model does not pin memory for the life of the thread. */
#define SCRATCH_SLOTS 2
#define SCRATCH_KEEP ((size_t)64 << 20)

typedef struct scratch {
    void *p;
    size_t cap; /* bytes */
} scratch;

static _Thread_local scratch tls_scratch[SCRATCH_SLOTS];
static pthread_key_t scratch_key;
static bool scratch_key_ok;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

/* Thread exit: frees that thread's buffers (the main thread's stay reachable to the end). */
static void scratch_destroy(void *arg)
{
    scratch *s = arg;
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        free(s[i].p);
        s[i].p = NULL;
        s[i].cap = 0;
    }
}

static void scratch_key_init(void)
{
    scratch_key_ok = pthread_key_create(&scratch_key, scratch_destroy) == 0;
}

/* Scratch slot with at least n bytes (64-byte aligned, uninitialised). */
static void *scratch_get(int slot, size_t n, nb_status *st)
{
    scratch *s = &tls_scratch[slot];
    if (n <= s->cap)
        return s->p;
    pthread_once(&scratch_once, scratch_key_init);
    free(s->p);
    s->p = NULL;
    s->cap = 0;
    size_t sz = (n + 63) & ~(size_t)63;
    s->p = aligned_alloc(64, sz ? sz : 64);
    if (!s->p) {
        nb_fail(st, NB_ERR_NOMEM, "out of memory (%zu bytes of scratch)", n);
        return NULL;
    }
    s->cap = sz;
    if (scratch_key_ok)
        pthread_setspecific(scratch_key, tls_scratch);
    return s->p;
}

/* After use: drops a slot that has grown past SCRATCH_KEEP. */
static void scratch_trim(int slot)
{
    scratch *s = &tls_scratch[slot];
    if (s->cap > SCRATCH_KEEP) {
        free(s->p);
        s->p = NULL;
        s->cap = 0;
    }
}

/* ---------------------------------------------------------------- helpers */

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* The indices i in [0, n) with 0 <= i * step + off < limit form [*lo, *hi). */
static void valid_range(int64_t off, int64_t step, int64_t limit, int64_t n, int64_t *lo,
                        int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : ceil_div(-off, step);
    int64_t h = limit - off <= 0 ? 0 : ceil_div(limit - off, step);
    if (h > n)
        h = n;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* Largest product one cube op may ask for (multiply-accumulates): 2^40, about a minute of
 * one core. A Nano model needs well under 10^9 per layer; beyond this a crafted model would
 * keep the reference busy for hours instead of failing. */
#define NB_MAX_MACS ((int64_t)1 << 40)

/* cblas takes int dimensions; m x n x kk is held to NB_MAX_MACS. */
static nb_err blas_dims(nb_kctx *k, int64_t m, int64_t n, int64_t kk)
{
    if (m > INT_MAX || n > INT_MAX || kk > INT_MAX)
        return nb_fail(k->st, NB_ERR_UNSUPPORTED, "matrix dimension above %d for BLAS", INT_MAX);
    int64_t macs;
    if (!nb_mul_ok(m, n, &macs) || !nb_mul_ok(macs, kk, &macs) || macs > NB_MAX_MACS)
        return nb_fail(k->st, NB_ERR_UNSUPPORTED, "a %lld x %lld x %lld product is more than "
                       "2^40 multiply-accumulates; the reference does not run it",
                       (long long)m, (long long)n, (long long)kk);
    return NB_OK;
}

/* Row-major C[m, n] = alpha * op(A) op(B) + beta * C through cblas_sgemm; dims > 0.
 * A single row or column goes to cblas_sgemv: OpenBLAS's sgemm packs the whole of B on
 * every call, which for a [1,1536] x [1536,128] Gemm costs 6x the product itself. */
static inline void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t kk, float alpha,
                         const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                         float *c, int64_t ldc)
{
    if (m == 1) { /* c[n] = alpha * op(B)^T a + beta * c; a has stride lda when A is [k,1] */
        cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? (int)n : (int)kk,
                    tb ? (int)kk : (int)n, alpha, b, (int)ldb, a, ta ? (int)lda : 1, beta, c, 1);
        return;
    }
    if (n == 1) { /* c[m] (stride ldc) = alpha * op(A) b + beta * c */
        cblas_sgemv(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? (int)kk : (int)m,
                    ta ? (int)m : (int)kk, alpha, a, (int)lda, b, tb ? 1 : (int)ldb, beta, c,
                    (int)ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)kk, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* rows x cols of y := bias[row] (or 0 without bias). */
NB_REF_AVX2_CLONES static void fill_rows(float *y, int64_t rows, int64_t cols, const float *bias)
{
    if (!bias) {
        memset(y, 0, sizeof(float) * (size_t)(rows * cols));
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        float v = bias[r], blk[8] = {v, v, v, v, v, v, v, v};
        float *p = y + r * cols;
        int64_t i = 0;
        for (; i + 8 <= cols; i += 8) /* fixed-size copies: vector stores at -O2 */
            memcpy(p + i, blk, sizeof blk);
        for (; i < cols; i++)
            p[i] = v;
    }
}

/* ---------------------------------------------------------------- other element types */

static bool via_f32_type(nb_dtype t)
{
    return t == NB_FLOAT16 || t == NB_INT8 || t == NB_UINT8;
}

static void to_f32(const nb_tensor *t, float *d)
{
    switch (t->dtype) {
    case NB_FLOAT16:
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = nb_half_to_float(((const uint16_t *)t->data)[i]);
        break;
    case NB_INT8:
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = ((const int8_t *)t->data)[i];
        break;
    case NB_UINT8:
        for (int64_t i = 0; i < t->numel; i++)
            d[i] = ((const uint8_t *)t->data)[i];
        break;
    default:
        break;
    }
}

/* float32 back to t's type (round to nearest; int8 values are the inputs' exactly). */
static void from_f32(const float *s, nb_tensor *t)
{
    switch (t->dtype) {
    case NB_FLOAT16:
        for (int64_t i = 0; i < t->numel; i++)
            ((uint16_t *)t->data)[i] = nb_float_to_half(s[i]);
        break;
    case NB_INT8:
        for (int64_t i = 0; i < t->numel; i++)
            ((int8_t *)t->data)[i] = (int8_t)lrintf(fminf(fmaxf(s[i], -128.0f), 127.0f));
        break;
    case NB_UINT8:
        for (int64_t i = 0; i < t->numel; i++)
            ((uint8_t *)t->data)[i] = (uint8_t)lrintf(fminf(fmaxf(s[i], 0.0f), 255.0f));
        break;
    default:
        break;
    }
}

/* Runs the float32 kernel fn on float32 copies of the FLOAT16 / INT8 / UINT8 inputs and
 * outputs of k, then converts the outputs back (ONNX Runtime's CPU approach for half). */
static nb_err via_f32(nb_kctx *k, nb_kernel_fn fn)
{
    nb_tensor *in[8] = {0}, *out[4] = {0};
    bool own_in[8] = {0}, own_out[4] = {0};
    nb_err e = NB_OK;
    if (k->n_in > 8 || k->n_out > 4)
        return nb_fail(k->st, NB_ERR_INTERNAL, "too many inputs or outputs");
    for (int i = 0; i < k->n_in && !e; i++) {
        in[i] = k->in[i];
        if (!in[i] || !via_f32_type(in[i]->dtype))
            continue;
        e = nb_tensor_new_uninit(NB_FLOAT, in[i]->rank, in[i]->dims, &in[i], k->st);
        if (!e) {
            own_in[i] = true;
            to_f32(k->in[i], in[i]->data);
        }
    }
    for (int o = 0; o < k->n_out && !e; o++) {
        out[o] = k->out[o];
        if (!out[o] || !via_f32_type(out[o]->dtype))
            continue;
        e = nb_tensor_new_uninit(NB_FLOAT, out[o]->rank, out[o]->dims, &out[o], k->st);
        own_out[o] = !e;
    }
    if (!e) {
        nb_kctx k2 = *k;
        k2.in = in;
        k2.out = out;
        e = fn(&k2);
    }
    for (int o = 0; o < k->n_out; o++)
        if (own_out[o]) {
            if (!e)
                from_f32(out[o]->data, k->out[o]);
            nb_tensor_free(out[o]);
        }
    for (int i = 0; i < k->n_in; i++)
        if (own_in[i])
            nb_tensor_free(in[i]);
    return e;
}

/* float32 kernel directly, through via_f32 for the converted types, else unsupported. */
static nb_err dispatch(nb_kctx *k, nb_kernel_fn fn)
{
    for (int i = 0; i < k->n_in; i++) {
        const nb_tensor *t = k->in[i];
        if (t && t->dtype != NB_FLOAT && via_f32_type(t->dtype))
            return via_f32(k, fn);
        if (t && t->dtype != NB_FLOAT)
            return nb_fail(k->st, NB_ERR_UNSUPPORTED, "input %d of type %s is not supported",
                           i, nb_dtype_name(t->dtype));
    }
    return fn(k);
}

/* ---------------------------------------------------------------- spatial geometry */

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } autopad;

/* One operator's spatial geometry on 3 dims (leading dims of size 1 for 1-D and 2-D). */
typedef struct geom {
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
    int64_t isz, osz, ksz; /* products of in, out, k */
} geom;

static autopad read_autopad(const nb_node *n)
{
    const char *s = nb_attr_str(n, "auto_pad", "NOTSET");
    if (!strcmp(s, "SAME_UPPER"))
        return PAD_SAME_UPPER;
    if (!strcmp(s, "SAME_LOWER"))
        return PAD_SAME_LOWER;
    if (!strcmp(s, "VALID"))
        return PAD_VALID;
    return PAD_NOTSET;
}

/* Ints attribute value i of n expected values, or dflt when the attribute is absent. */
static int64_t attr_at(const nb_node *n, const char *name, int i, int count, int64_t dflt)
{
    int c;
    const int64_t *v = nb_attr_ints(n, name, &c);
    if (!v || c == 0)
        return dflt;
    if (c == count + 2 && !strcmp(name, "output_shape"))
        i += 2;
    return i < c ? v[i] : dflt;
}

/* Geometry of x -> y with kernel dims kdims (from W or kernel_shape). transpose: the
 * ConvTranspose rules for the pads. */
static nb_err make_geom(nb_kctx *k, const nb_tensor *x, const nb_tensor *y,
                        const int64_t *kdims, bool transpose, geom *g)
{
    const nb_node *n = k->node;
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > 3)
        return nb_fail(k->st, NB_ERR_UNSUPPORTED, "%d spatial dims (1 to 3 are supported)", nsp);
    autopad ap = read_autopad(n);
    int nos;
    nb_attr_ints(n, "output_shape", &nos);
    g->isz = g->osz = g->ksz = 1;
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - nsp);
        if (j < 0) {
            g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
            g->pb[i] = g->pe[i] = 0;
            continue;
        }
        g->in[i] = x->dims[2 + j];
        g->out[i] = y->dims[2 + j];
        g->k[i] = kdims[j];
        g->s[i] = attr_at(n, "strides", j, nsp, 1);
        g->d[i] = attr_at(n, "dilations", j, nsp, 1);
        int64_t ek = (g->k[i] - 1) * g->d[i] + 1, total;
        if (!transpose) {
            /* Conv / pools: SAME pads (out - 1) * s + ek - in in total, the odd one at the
               end for SAME_UPPER, at the beginning for SAME_LOWER */
            total = ek - (g->in[i] - (g->out[i] - 1) * g->s[i]); /* no overflow: ek <= 2^56 */
        } else {
            /* ConvTranspose: s * (in - 1) + output_padding + ek - out in total when
               output_shape is given or auto_pad is SAME_*, the odd one at the end for
               SAME_UPPER, at the beginning otherwise (ONNX ConvTranspose; a negative total,
               an output_shape beyond the full output, pads nothing) */
            total = g->s[i] * (g->in[i] - 1) + attr_at(n, "output_padding", j, nsp, 0) + ek -
                    g->out[i];
        }
        if (total < 0)
            total = 0;
        if (transpose && nos > 0) {
            g->pb[i] = ap != PAD_SAME_UPPER ? total - total / 2 : total / 2;
            g->pe[i] = total - g->pb[i];
        } else if (ap == PAD_VALID) {
            g->pb[i] = g->pe[i] = 0;
        } else if (ap == PAD_SAME_UPPER || ap == PAD_SAME_LOWER) {
            g->pb[i] = (transpose ? ap != PAD_SAME_UPPER : ap == PAD_SAME_LOWER)
                           ? total - total / 2 : total / 2;
            g->pe[i] = total - g->pb[i];
        } else {
            g->pb[i] = attr_at(n, "pads", j, 2 * nsp, 0);
            g->pe[i] = attr_at(n, "pads", j + nsp, 2 * nsp, 0);
        }
        g->isz *= g->in[i];
        g->osz *= g->out[i];
        if (!nb_mul_ok(g->ksz, g->k[i], &g->ksz)) /* only Conv uses it: W holds that many */
            g->ksz = INT64_MAX;
    }
    return NB_OK;
}

/* im2col of the output rows [r0, r1) (row r is (od, oh) = (r / OH, r % OH)):
 * col[(c, kd, kh, kw), (r - r0) * OW + ow] = x[c, od*sd - pd + kd*dd, oh*sh - ph + kh*dh,
 * ow*sw - pw + kw*dw], 0 in the padding. */
/* The zero loops of im2col stay loops: the compilers made each a call to memset, of one
 * float at a 'same'-padded edge (12,000 calls per embedding_model inference). */
#if defined(__clang__)
#define NB_NO_LOOP_MEMSET __attribute__((no_builtin("memset")))
#elif defined(__GNUC__)
#define NB_NO_LOOP_MEMSET __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NB_NO_LOOP_MEMSET
#endif

NB_NO_LOOP_MEMSET NB_REF_AVX2_CLONES static void im2col(const float *x, int64_t channels, const geom *g, int64_t r0, int64_t r1,
                   float *col)
{
    const int64_t ih_n = g->in[1], iw_n = g->in[2], oh_n = g->out[1], ow_n = g->out[2];
    const int64_t sh = g->s[1], sw = g->s[2], ncol = (r1 - r0) * ow_n;
    /* stride 1 in the two inner dims and rows of equal length ('same' width): the valid
       rows of one output depth map to one contiguous run of x, copied at once, after which
       the columns that wrapped into a neighbouring row are zeroed */
    const bool runs = sw == 1 && sh == 1 && iw_n == ow_n;
    float *dst = col;
    for (int64_t c = 0; c < channels; c++) {
        const float *xc = x + c * g->isz;
        for (int64_t kd = 0; kd < g->k[0]; kd++)
            for (int64_t kh = 0; kh < g->k[1]; kh++)
                for (int64_t kw = 0; kw < g->k[2]; kw++, dst += ncol) {
                    int64_t woff = kw * g->d[2] - g->pb[2], hoff = kh * g->d[1] - g->pb[1];
                    int64_t lo, hi, hlo, hhi;
                    valid_range(woff, sw, iw_n, ow_n, &lo, &hi);
                    valid_range(hoff, sh, ih_n, oh_n, &hlo, &hhi);
                    for (int64_t r = r0; r < r1;) {
                        int64_t od = r / oh_n, oh0 = r % oh_n;
                        int64_t n = (r1 - r < oh_n - oh0 ? r1 - r : oh_n - oh0); /* rows */
                        float *d = dst + (r - r0) * ow_n;
                        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                        int64_t a = oh0 > hlo ? oh0 : hlo, b = oh0 + n < hhi ? oh0 + n : hhi;
                        r += n;
                        if (id < 0 || id >= g->in[0] || lo == hi || a >= b) {
                            memset(d, 0, sizeof(float) * (size_t)(n * ow_n));
                            continue;
                        }
                        const float *xd = xc + id * ih_n * iw_n;
                        if (runs) {
                            int64_t j0 = (a - oh0) * ow_n + lo, j1 = (b - 1 - oh0) * ow_n + hi;
                            for (int64_t j = 0; j < j0; j++)
                                d[j] = 0.0f;
                            memcpy(d + j0, xd + ((a + hoff) * iw_n + lo + woff),
                                   sizeof(float) * (size_t)(j1 - j0));
                            for (int64_t j = j1; j < n * ow_n; j++)
                                d[j] = 0.0f;
                            if (lo > 0 || hi < ow_n)
                                for (int64_t oh = a; oh < b; oh++) {
                                    float *row = d + (oh - oh0) * ow_n;
                                    for (int64_t ow = 0; ow < lo; ow++)
                                        row[ow] = 0.0f;
                                    for (int64_t ow = hi; ow < ow_n; ow++)
                                        row[ow] = 0.0f;
                                }
                            continue;
                        }
                        memset(d, 0, sizeof(float) * (size_t)((a - oh0) * ow_n));
                        for (int64_t oh = a; oh < b; oh++) {
                            float *row = d + (oh - oh0) * ow_n;
                            const float *src = xd + (oh * sh + hoff) * iw_n;
                            for (int64_t ow = 0; ow < lo; ow++)
                                row[ow] = 0.0f;
                            if (sw == 1)
                                memcpy(row + lo, src + lo + woff, sizeof(float) * (size_t)(hi - lo));
                            else
                                for (int64_t ow = lo; ow < hi; ow++)
                                    row[ow] = src[ow * sw + woff];
                            for (int64_t ow = hi; ow < ow_n; ow++)
                                row[ow] = 0.0f;
                        }
                        memset(d + (b - oh0) * ow_n, 0, sizeof(float) * (size_t)((oh0 + n - b) * ow_n));
                    }
                }
    }
}

/* y[m, o] += col[(m, kd, kh, kw), (id, ih, iw)] where o = i*s - p + k*d lies in the
 * output (the transpose of im2col). */
static void col2im(const float *col, int64_t channels, const geom *g, float *y)
{
    const int64_t oh_n = g->out[1], ow_n = g->out[2], iw_n = g->in[2], sw = g->s[2];
    const float *src = col;
    for (int64_t c = 0; c < channels; c++) {
        float *yc = y + c * g->osz;
        for (int64_t kd = 0; kd < g->k[0]; kd++)
            for (int64_t kh = 0; kh < g->k[1]; kh++)
                for (int64_t kw = 0; kw < g->k[2]; kw++) {
                    int64_t woff = kw * g->d[2] - g->pb[2], lo, hi;
                    valid_range(woff, sw, ow_n, iw_n, &lo, &hi);
                    for (int64_t id = 0; id < g->in[0]; id++) {
                        int64_t od = id * g->s[0] - g->pb[0] + kd * g->d[0];
                        for (int64_t ih = 0; ih < g->in[1]; ih++, src += iw_n) {
                            int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->d[1];
                            if (od < 0 || od >= g->out[0] || oh < 0 || oh >= oh_n)
                                continue;
                            float *row = yc + (od * oh_n + oh) * ow_n;
                            if (sw == 1) {
                                float *r = row + woff;
                                for (int64_t iw = lo; iw < hi; iw++)
                                    r[iw] += src[iw];
                            } else {
                                for (int64_t iw = lo; iw < hi; iw++)
                                    row[iw * sw + woff] += src[iw];
                            }
                        }
                    }
                }
    }
}

/* ---------------------------------------------------------------- Conv */

/* Few output positions of a one-channel kernel along the last dim (an STFT's filter bank
 * on a short chunk: 257 filters of 512 taps, 8 frames): y[m, n] += W[m, :] . window n,
 * each window a row of X itself (or a zero-padded copy at an edge). sgemm would pack all
 * of W for 8 columns (a third of melspectrogram's time on a 110 ms chunk); here each W row
 * is read once and the windows stay in L1. */
NB_REF_AVX2_CLONES static void conv_windows(const float *w, int64_t m, int64_t kw,
                                            const float *const *win, int64_t n, float *y,
                                            int64_t ldy)
{
    for (int64_t r = 0; r < m; r++) {
        const float *wr = w + r * kw;
        int64_t c = 0;
        for (; c + 4 <= n; c += 4) { /* four windows: four independent sums of one W row */
            const float *x0 = win[c], *x1 = win[c + 1], *x2 = win[c + 2], *x3 = win[c + 3];
            float s0[8] = {0}, s1[8] = {0}, s2[8] = {0}, s3[8] = {0};
            int64_t j = 0;
            for (; j + 8 <= kw; j += 8)
                for (int k = 0; k < 8; k++) {
                    float wv = wr[j + k];
                    s0[k] += wv * x0[j + k];
                    s1[k] += wv * x1[j + k];
                    s2[k] += wv * x2[j + k];
                    s3[k] += wv * x3[j + k];
                }
            float t[4] = {0, 0, 0, 0};
            for (; j < kw; j++) {
                t[0] += wr[j] * x0[j], t[1] += wr[j] * x1[j];
                t[2] += wr[j] * x2[j], t[3] += wr[j] * x3[j];
            }
            const float *sv[4] = {s0, s1, s2, s3};
            for (int q = 0; q < 4; q++) {
                const float *a = sv[q];
                y[r * ldy + c + q] += t[q] + (((a[0] + a[4]) + (a[1] + a[5])) +
                                              ((a[2] + a[6]) + (a[3] + a[7])));
            }
        }
        for (; c < n; c++) {
            const float *xv = win[c];
            float s8[8] = {0}, t = 0;
            int64_t j = 0;
            for (; j + 8 <= kw; j += 8)
                for (int k = 0; k < 8; k++)
                    s8[k] += wr[j + k] * xv[j + k];
            for (; j < kw; j++)
                t += wr[j] * xv[j];
            y[r * ldy + c] += t + (((s8[0] + s8[4]) + (s8[1] + s8[5])) +
                                   ((s8[2] + s8[6]) + (s8[3] + s8[7])));
        }
    }
}

/* Most output positions conv_windows takes per image and group. */
#define WINDOWS_MAX 16


/* im2col block target: the columns of a block stay in L2 while sgemm packs them. */
#define COL_BLOCK_BYTES ((int64_t)256 << 10)

/* Conv (ONNX Conv-1/11): Y[n, m, o] = B[m] + sum over the channels c of m's group and the
 * kernel offsets j of X[n, c, o*s - pads_begin + j*d] * W[m, c, j], zero outside X. Per
 * image and group, per block of output rows, one sgemm W_g [M/g, C/g*K] x im2col(X_g)
 * [C/g*K, block] accumulating onto the bias; for a 1x1 kernel with stride 1 and no pads
 * X_g [C/g, O] is the right operand itself. */
static nb_err k_conv_f32(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *w = k->in[1];
    const nb_tensor *b = k->n_in > 2 ? k->in[2] : NULL;
    nb_tensor *y = k->out[0];
    geom g;
    nb_err e = make_geom(k, x, y, w->dims + 2, false, &g);
    if (e)
        return e;
    int64_t group = nb_attr_int(k->node, "group", 1);
    int64_t n_img = x->dims[0], ch = x->dims[1], m = w->dims[0];
    int64_t cg = ch / group, mg = m / group, kk = cg * g.ksz;
    const float *xd = x->data, *wd = w->data, *bd = b ? b->data : NULL;
    float *yd = y->data;
    if (y->numel == 0)
        return NB_OK;
    bool pointwise = g.ksz == 1 && g.pb[0] == 0 && g.pb[1] == 0 && g.pb[2] == 0 &&
                     g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && g.osz == g.isz;
    if ((e = blas_dims(k, mg, g.osz, kk)))
        return e;
    int64_t rows = g.out[0] * g.out[1], ow_n = g.out[2], block = rows;
    float *col = NULL;
    /* one input channel, a kernel along the last dim only, undilated, few positions, the
       rows of X those of Y (no D or H kernel, stride or pad): conv_windows */
    bool windows = !pointwise && cg == 1 && g.k[0] == 1 && g.k[1] == 1 && g.d[2] == 1 &&
                   g.s[0] == 1 && g.s[1] == 1 && g.pb[0] == 0 && g.pb[1] == 0 &&
                   g.pe[0] == 0 && g.pe[1] == 0 && g.osz <= WINDOWS_MAX && g.k[2] > 1;
    if (windows) {
        /* the edge windows' zero-padded copies */
        if (!(col = scratch_get(0, (size_t)(g.osz * g.k[2]) * sizeof(float), k->st)))
            return k->st->code;
    } else if (!pointwise && kk > 0) {
        int64_t row_bytes, n;
        if (!nb_mul_ok(kk, ow_n * (int64_t)sizeof(float), &row_bytes))
            return nb_fail(k->st, NB_ERR_SHAPE, "im2col rows of %lld x %lld are too large",
                           (long long)kk, (long long)ow_n);
        block = row_bytes > 0 ? COL_BLOCK_BYTES / row_bytes : rows;
        block = block < 1 ? 1 : block > rows ? rows : block;
        if (!nb_mul_ok(block, row_bytes, &n) || n > NB_MAX_TENSOR_BYTES)
            return nb_fail(k->st, NB_ERR_SHAPE, "im2col buffer of %lld x %lld is too large",
                           (long long)kk, (long long)(block * ow_n));
        if (!(col = scratch_get(0, (size_t)n, k->st)))
            return k->st->code;
    }
    for (int64_t img = 0; img < n_img; img++)
        for (int64_t gi = 0; gi < group; gi++) {
            const float *xg = xd + (img * ch + gi * cg) * g.isz;
            const float *wg = wd + gi * mg * kk;
            float *yg = yd + (img * m + gi * mg) * g.osz;
            fill_rows(yg, mg, g.osz, bd ? bd + gi * mg : NULL);
            if (kk == 0 || mg == 0)
                continue;
            if (pointwise) {
                sgemm(false, false, mg, g.osz, kk, 1.0f, wg, kk, xg, g.osz, 1.0f, yg, g.osz);
                continue;
            }
            if (windows) {
                const float *win[WINDOWS_MAX];
                const int64_t iw_n = g.in[2], kw = g.k[2];
                for (int64_t o = 0; o < g.osz; o++) {
                    int64_t r = o / ow_n, ow = o % ow_n, start = ow * g.s[2] - g.pb[2];
                    const float *xr = xg + r * iw_n;
                    if (start >= 0 && start + kw <= iw_n) {
                        win[o] = xr + start;
                        continue;
                    }
                    float *pad = col + o * kw; /* an edge window: zeros outside X */
                    for (int64_t j = 0; j < kw; j++)
                        pad[j] = start + j >= 0 && start + j < iw_n ? xr[start + j] : 0.0f;
                    win[o] = pad;
                }
                conv_windows(wg, mg, kw, win, g.osz, yg, g.osz);
                continue;
            }
            for (int64_t r0 = 0; r0 < rows; r0 += block) {
                int64_t r1 = r0 + block < rows ? r0 + block : rows, nc = (r1 - r0) * ow_n;
                im2col(xg, cg, &g, r0, r1, col);
                sgemm(false, false, mg, nc, kk, 1.0f, wg, kk, col, nc, 1.0f, yg + r0 * ow_n,
                      g.osz);
            }
        }
    scratch_trim(0);
    return NB_OK;
}

static nb_err k_conv(nb_kctx *k) { return dispatch(k, k_conv_f32); }

/* ---------------------------------------------------------------- ConvTranspose */

/* ConvTranspose (ONNX ConvTranspose-1/11): the gradient of Conv, Y[n, m, i*s - pads_begin +
 * j*d] += X[n, c, i] * W[c, m, j] (+ B[m]); output_padding and output_shape only size Y.
 * Per image and group one sgemm W_g^T [M/g*K, C/g] x X_g [C/g, I] then col2im into Y; for
 * a 1x1 kernel with stride 1 and no pads the sgemm writes Y directly. */
static nb_err k_convtranspose_f32(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *w = k->in[1];
    const nb_tensor *b = k->n_in > 2 ? k->in[2] : NULL;
    nb_tensor *y = k->out[0];
    geom g;
    nb_err e = make_geom(k, x, y, w->dims + 2, true, &g);
    if (e)
        return e;
    int64_t group = nb_attr_int(k->node, "group", 1);
    int64_t n_img = x->dims[0], ch = x->dims[1], mg = w->dims[1], m = mg * group;
    int64_t cg = ch / group, kk = mg * g.ksz;
    const float *xd = x->data, *wd = w->data, *bd = b ? b->data : NULL;
    float *yd = y->data;
    if (y->numel == 0)
        return NB_OK;
    bool pointwise = g.ksz == 1 && g.pb[0] == 0 && g.pb[1] == 0 && g.pb[2] == 0 &&
                     g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && g.osz == g.isz;
    if ((e = blas_dims(k, kk, g.isz, cg)))
        return e;
    float *col = NULL;
    if (!pointwise && cg > 0 && g.isz > 0) {
        int64_t n;
        if (!nb_mul_ok(kk, g.isz, &n) || n > NB_MAX_TENSOR_BYTES / (int64_t)sizeof(float))
            return nb_fail(k->st, NB_ERR_SHAPE, "col2im buffer of %lld x %lld is too large",
                           (long long)kk, (long long)g.isz);
        if (!(col = scratch_get(0, (size_t)n * sizeof(float), k->st)))
            return k->st->code;
    }
    for (int64_t img = 0; img < n_img; img++)
        for (int64_t gi = 0; gi < group; gi++) {
            const float *xg = xd + (img * ch + gi * cg) * g.isz;
            const float *wg = wd + gi * cg * kk;
            float *yg = yd + (img * m + gi * mg) * g.osz;
            fill_rows(yg, mg, g.osz, bd ? bd + gi * mg : NULL);
            if (cg == 0 || kk == 0 || g.isz == 0)
                continue;
            if (pointwise) {
                sgemm(true, false, mg, g.isz, cg, 1.0f, wg, kk, xg, g.isz, 1.0f, yg, g.osz);
                continue;
            }
            sgemm(true, false, kk, g.isz, cg, 1.0f, wg, kk, xg, g.isz, 0.0f, col, g.isz);
            col2im(col, mg, &g, yg);
        }
    scratch_trim(0);
    return NB_OK;
}

static nb_err k_convtranspose(nb_kctx *k) { return dispatch(k, k_convtranspose_f32); }

/* ---------------------------------------------------------------- MatMul */

static int64_t prod(const int64_t *d, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

/* Batch iteration of MatMul: offsets (in matrices) of A and B for each output matrix. */
static void batch_iter(const nb_tensor *a, const nb_tensor *b, int ra, int rb, const nb_tensor *y,
                       int ry, nb_bcast *it)
{
    nb_tensor ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    ta.rank = ra;
    tb.rank = rb;
    memcpy(ta.dims, a->dims, sizeof(int64_t) * (size_t)ra);
    memcpy(tb.dims, b->dims, sizeof(int64_t) * (size_t)rb);
    nb_bcast_init(it, ry, y->dims, &ta, &tb, NULL);
}

/* MatMul (ONNX MatMul-1/9/13, numpy.matmul semantics): per broadcast batch index,
 * Y[.., M, N] = A[.., M, K] x B[.., K, N]; 1-D A is a row and 1-D B a column. When B has no
 * batch (or only 1s), A's batch folds into M: one sgemm. */
static nb_err k_matmul_f32(nb_kctx *k)
{
    const nb_tensor *a = k->in[0], *b = k->in[1];
    nb_tensor *y = k->out[0];
    int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, kk = a->dims[a->rank - 1];
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int ry = ra > rb ? ra : rb;
    int64_t nba = prod(a->dims, ra), nbb = prod(b->dims, rb), nby = prod(y->dims, ry);
    const float *ad = a->data, *bd = b->data;
    float *yd = y->data;
    nb_err e;
    if (y->numel == 0)
        return NB_OK;
    if (kk == 0) {
        memset(yd, 0, y->nbytes);
        return NB_OK;
    }
    if (nbb == 1) {
        if ((e = blas_dims(k, nba * m, n, kk)))
            return e;
        sgemm(false, false, nba * m, n, kk, 1.0f, ad, kk, bd, n, 0.0f, yd, n);
        return NB_OK;
    }
    if ((e = blas_dims(k, m, n, kk)))
        return e;
    nb_bcast it;
    batch_iter(a, b, ra, rb, y, ry, &it);
    for (int64_t i = 0; i < nby; i++, nb_bcast_next(&it))
        sgemm(false, false, m, n, kk, 1.0f, ad + it.oa * m * kk, kk, bd + it.ob * kk * n, n, 0.0f,
              yd + i * m * n, n);
    return NB_OK;
}

static inline uint64_t get_u(const nb_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case NB_INT32: return (uint64_t)(int64_t)((const int32_t *)t->data)[i];
    case NB_UINT32: return ((const uint32_t *)t->data)[i];
    case NB_INT64: return (uint64_t)((const int64_t *)t->data)[i];
    default: return ((const uint64_t *)t->data)[i];
    }
}

/* MatMul of INT32 / INT64 / UINT32 / UINT64: exact products and sums modulo 2^64, wrapped
 * to the output type (ONNX Runtime's integer MatMul wraps likewise). */
static nb_err k_matmul_int(nb_kctx *k)
{
    const nb_tensor *a = k->in[0], *b = k->in[1];
    nb_tensor *y = k->out[0];
    int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, kk = a->dims[a->rank - 1];
    int64_t n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int ry = ra > rb ? ra : rb;
    int64_t nby = prod(y->dims, ry);
    nb_bcast it;
    batch_iter(a, b, ra, rb, y, ry, &it);
    for (int64_t bi = 0; bi < nby; bi++, nb_bcast_next(&it)) {
        int64_t oa = it.oa * m * kk, ob = it.ob * kk * n, oy = bi * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                uint64_t s = 0;
                for (int64_t t = 0; t < kk; t++)
                    s += get_u(a, oa + i * kk + t) * get_u(b, ob + t * n + j);
                int64_t o = oy + i * n + j;
                switch (y->dtype) {
                case NB_INT32: ((int32_t *)y->data)[o] = (int32_t)s; break;
                case NB_UINT32: ((uint32_t *)y->data)[o] = (uint32_t)s; break;
                case NB_INT64: ((int64_t *)y->data)[o] = (int64_t)s; break;
                default: ((uint64_t *)y->data)[o] = s; break;
                }
            }
    }
    return NB_OK;
}

static nb_err k_matmul(nb_kctx *k)
{
    nb_dtype t = k->in[0]->dtype;
    if (t == NB_INT32 || t == NB_INT64 || t == NB_UINT32 || t == NB_UINT64)
        return k_matmul_int(k);
    return dispatch(k, k_matmul_f32);
}

/* ---------------------------------------------------------------- Gemm */

/* Gemm (ONNX Gemm-1/6/7/9/11/13): Y = alpha * A' B' + beta * C, C broadcast
 * unidirectionally to [M, N]: Y is filled with beta * C and one sgemm accumulates. */
static nb_err k_gemm_f32(nb_kctx *k)
{
    const nb_tensor *a = k->in[0], *b = k->in[1];
    const nb_tensor *c = k->n_in > 2 ? k->in[2] : NULL;
    nb_tensor *y = k->out[0];
    bool ta = nb_attr_int(k->node, "transA", 0) != 0, tb = nb_attr_int(k->node, "transB", 0) != 0;
    float alpha = nb_attr_float(k->node, "alpha", 1.0f), beta = nb_attr_float(k->node, "beta", 1.0f);
    int64_t m = y->dims[0], n = y->dims[1], kk = a->dims[ta ? 0 : 1];
    float *yd = y->data;
    bool use_c = c && beta != 0.0f;
    nb_err e;
    if (y->numel == 0)
        return NB_OK;
    if (use_c) {
        const float *cd = c->data;
        int64_t cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        int64_t s0 = c->rank == 2 && c->dims[0] != 1 ? cn : 0, s1 = cn != 1 ? 1 : 0;
        for (int64_t i = 0; i < m; i++) {
            const float *cr = cd + i * s0;
            float *yr = yd + i * n;
            if (s1)
                for (int64_t j = 0; j < n; j++)
                    yr[j] = beta * cr[j];
            else
                for (int64_t j = 0; j < n; j++)
                    yr[j] = beta * cr[0];
        }
    }
    if (kk == 0) {
        if (!use_c)
            memset(yd, 0, y->nbytes);
        return NB_OK;
    }
    if ((e = blas_dims(k, m, n, kk)))
        return e;
    sgemm(ta, tb, m, n, kk, alpha, a->data, a->dims[1], b->data, b->dims[1], use_c ? 1.0f : 0.0f,
          yd, n);
    return NB_OK;
}

static nb_err k_gemm(nb_kctx *k) { return dispatch(k, k_gemm_f32); }

/* ---------------------------------------------------------------- pools */

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

/* Per spatial dim and output position: first valid input position, number of valid taps,
 * and number of taps inside the padded input (count_include_pad); per offset c of the inner
 * kernel dim, the outputs [wlo[c], whi[c]) whose tap c is inside the input. */
typedef struct pool_tab {
    int64_t *first[3], *n[3], *npad[3];
    int64_t *wlo, *whi;
    int64_t c_lo, c_hi; /* the inner-dim kernel offsets with taps inside X */
    int64_t *mem;
} pool_tab;

static nb_err pool_tab_make(nb_kctx *k, const geom *g, pool_tab *t)
{
    /* offsets c of the inner kernel dim whose tap can fall inside X for some output:
       0 <= c * d - pb + ow * s < in, ow in [0, out); the others are skipped, so a huge
       kernel (SAME pads cover it) costs nothing */
    int64_t span, c_hi = g->k[2], c_lo = 0;
    if (!nb_mul_ok(g->out[2] - 1, g->s[2], &span))
        span = INT64_MAX / 2;
    if (g->pb[2] - span > 0)
        c_lo = ceil_div(g->pb[2] - span, g->d[2]);
    if (g->in[2] + g->pb[2] >= 0 && ceil_div(g->in[2] + g->pb[2], g->d[2]) < c_hi)
        c_hi = ceil_div(g->in[2] + g->pb[2], g->d[2]);
    if (c_lo > c_hi)
        c_lo = c_hi;
    t->c_lo = c_lo;
    t->c_hi = c_hi;
    int64_t total = 3 * (g->out[0] + g->out[1] + g->out[2]) + 2 * (c_hi - c_lo);
    t->mem = malloc(sizeof(int64_t) * (size_t)total);
    if (!t->mem)
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    int64_t *p = t->mem;
    for (int i = 0; i < 3; i++) {
        t->first[i] = p;
        t->n[i] = p + g->out[i];
        t->npad[i] = p + 2 * g->out[i];
        p += 3 * g->out[i];
        for (int64_t o = 0; o < g->out[i]; o++) {
            int64_t start = o * g->s[i] - g->pb[i], lo, hi, plo, phi;
            valid_range(start, g->d[i], g->in[i], g->k[i], &lo, &hi);
            valid_range(start + g->pb[i], g->d[i], g->in[i] + g->pb[i] + g->pe[i], g->k[i],
                        &plo, &phi);
            t->first[i][o] = start + lo * g->d[i];
            t->n[i][o] = hi - lo;
            t->npad[i][o] = phi - plo;
        }
    }
    t->wlo = p; /* indexed by c - c_lo */
    t->whi = p + (c_hi - c_lo);
    for (int64_t c = c_lo; c < c_hi; c++)
        valid_range(c * g->d[2] - g->pb[2], g->s[2], g->in[2], g->out[2], &t->wlo[c - c_lo],
                    &t->whi[c - c_lo]);
    return NB_OK;
}

/* What one row of pool outputs needs. */
typedef enum { ROW_MAX, ROW_MAX_NAN, ROW_MAX_IDX, ROW_AVG, ROW_LP1, ROW_LP2, ROW_LP } row_mode;

typedef struct pool_job {
    const geom *g;
    const pool_tab *t;
    const float *xp; /* the (image, channel) plane of X */
    int64_t base;    /* flat index of the plane in X (Indices) */
    bool colmajor;   /* storage_order 1 */
    float p;
} pool_job;

/* Accumulates the taps of output row (od, oh) into yr (and ir for ROW_MAX_IDX): for each
 * valid (depth, height) tap and each offset of the inner kernel dim, one pass over the
 * outputs whose tap is inside X. ROW_MAX is branch-free and may lose a NaN when a later tap
 * of the window is a number: it returns true when it saw a NaN, and the caller redoes the
 * row with ROW_MAX_NAN. */
NB_REF_AVX2_CLONES static bool pool_row(const pool_job *j, int64_t od, int64_t oh, float *yr, int64_t *ir,
                     row_mode mode)
{
    const geom *g = j->g;
    const pool_tab *t = j->t;
    const int64_t id_n = g->in[0], ih_n = g->in[1], iw_n = g->in[2], ow_n = g->out[2];
    const int64_t sw = g->s[2], dw = g->d[2], pw = g->pb[2];
    const float p = j->p;
    bool nan = false;
    float init = mode <= ROW_MAX_IDX ? -INFINITY : 0.0f;
    for (int64_t ow = 0; ow < ow_n; ow++)
        yr[ow] = init;
    if (ir)
        for (int64_t ow = 0; ow < ow_n; ow++)
            ir[ow] = -1;
    for (int64_t a = 0; a < t->n[0][od]; a++) {
        int64_t id = t->first[0][od] + a * g->d[0];
        for (int64_t b = 0; b < t->n[1][oh]; b++) {
            int64_t ih = t->first[1][oh] + b * g->d[1];
            const float *xr = j->xp + (id * ih_n + ih) * iw_n;
            /* Indices: flat index of tap (id, ih, iw) is base + row + iw * step */
            int64_t row = j->base + (j->colmajor ? id + ih * id_n : (id * ih_n + ih) * iw_n);
            int64_t step = j->colmajor ? id_n * ih_n : 1;
            int64_t c = t->c_lo;
            if (mode == ROW_MAX && sw == 2 && dw == 1 && pw == 0 && t->c_hi - c == 2 && c == 0) {
                /* the common 2-wide window of stride 2 without pads: both taps of an output in
                   one pass (a constant stride the vectorizer takes), the same max order as
                   the loop below (tap 0, then tap 1) */
                int64_t lo = t->wlo[0] > t->wlo[1] ? t->wlo[0] : t->wlo[1];
                int64_t hi = t->whi[0] < t->whi[1] ? t->whi[0] : t->whi[1];
                for (int64_t ow = t->wlo[0]; ow < lo && ow < t->whi[0]; ow++) {
                    float v = xr[2 * ow], m = yr[ow];
                    nan |= v != v;
                    yr[ow] = m > v ? m : v;
                }
                for (int64_t ow = t->wlo[1]; ow < lo && ow < t->whi[1]; ow++) {
                    float v = xr[2 * ow + 1], m = yr[ow];
                    nan |= v != v;
                    yr[ow] = m > v ? m : v;
                }
                bool n2 = false;
                for (int64_t ow = lo; ow < hi; ow++) {
                    float v0 = xr[2 * ow], v1 = xr[2 * ow + 1], m = yr[ow];
                    n2 |= (v0 != v0) | (v1 != v1);
                    m = m > v0 ? m : v0;
                    yr[ow] = m > v1 ? m : v1;
                }
                nan |= n2;
                for (int64_t ow = hi > lo ? hi : lo; ow < t->whi[0]; ow++) {
                    float v = xr[2 * ow], m = yr[ow];
                    nan |= v != v;
                    yr[ow] = m > v ? m : v;
                }
                for (int64_t ow = hi > lo ? hi : lo; ow < t->whi[1]; ow++) {
                    float v = xr[2 * ow + 1], m = yr[ow];
                    nan |= v != v;
                    yr[ow] = m > v ? m : v;
                }
                continue;
            }
            for (; c < t->c_hi; c++) {
                const int64_t off = c * dw - pw, lo = t->wlo[c - t->c_lo],
                              hi = t->whi[c - t->c_lo];
                switch (mode) {
                case ROW_MAX:
                    for (int64_t ow = lo; ow < hi; ow++) {
                        float v = xr[ow * sw + off], m = yr[ow];
                        nan |= v != v;
                        yr[ow] = m > v ? m : v; /* maxss */
                    }
                    break;
                case ROW_MAX_NAN:
                    for (int64_t ow = lo; ow < hi; ow++) {
                        float v = xr[ow * sw + off], m = yr[ow];
                        yr[ow] = (v > m || v != v) ? v : m; /* the last NaN stays */
                    }
                    break;
                case ROW_MAX_IDX:
                    for (int64_t ow = lo; ow < hi; ow++) {
                        float v = xr[ow * sw + off], m = yr[ow];
                        if (v > m || (v != v && m == m) || ir[ow] < 0) {
                            yr[ow] = v;
                            ir[ow] = row + (ow * sw + off) * step;
                        }
                    }
                    break;
                case ROW_AVG:
                    for (int64_t ow = lo; ow < hi; ow++)
                        yr[ow] += xr[ow * sw + off];
                    break;
                case ROW_LP1:
                    for (int64_t ow = lo; ow < hi; ow++)
                        yr[ow] += fabsf(xr[ow * sw + off]);
                    break;
                case ROW_LP2:
                    for (int64_t ow = lo; ow < hi; ow++) {
                        float v = xr[ow * sw + off];
                        yr[ow] += v * v;
                    }
                    break;
                case ROW_LP:
                    for (int64_t ow = lo; ow < hi; ow++)
                        yr[ow] += powf(fabsf(xr[ow * sw + off]), p);
                    break;
                }
            }
        }
    }
    return nan;
}

/* MaxPool (ONNX MaxPool-1/8/10/11/12): the maximum of each window's taps inside X, NaN
 * propagating (numpy / PyTorch); Indices holds the flat index into X of the first maximum
 * in window order, with the spatial offset column-major for storage_order 1. A window with
 * no tap inside X gives -inf and index -1.
 * AveragePool (ONNX AveragePool-1/7/10/11): the mean of the taps inside X, or their sum
 * divided by the number of taps inside the padded input for count_include_pad.
 * LpPool (ONNX LpPool-1/2/11/18): (sum of |x|^p over the taps inside X)^(1/p). */
static nb_err k_pool_f32(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    nb_tensor *ind = k->n_out > 1 ? k->out[1] : NULL;
    const char *op = k->node->op_type;
    int nsp = x->rank - 2, nk;
    const int64_t *ks = nb_attr_ints(k->node, "kernel_shape", &nk);
    if (nk != nsp)
        return nb_fail(k->st, NB_ERR_ATTR, "kernel_shape has %d values for %d spatial dims", nk,
                       nsp);
    geom g;
    pool_tab t = {0};
    nb_err e = make_geom(k, x, y, ks, false, &g);
    if (e || y->numel == 0 || (e = pool_tab_make(k, &g, &t)))
        return e;
    bool cip = nb_attr_int(k->node, "count_include_pad", 0) != 0;
    pool_job j = {.g = &g, .t = &t, .colmajor = nb_attr_int(k->node, "storage_order", 0) != 0,
                  .p = nb_attr_float(k->node, "p", 2.0f)};
    row_mode mode = !strcmp(op, "MaxPool") ? (ind ? ROW_MAX_IDX : ROW_MAX)
                    : !strcmp(op, "AveragePool") ? ROW_AVG
                    : j.p == 1.0f ? ROW_LP1 : j.p == 2.0f ? ROW_LP2 : ROW_LP;
    int64_t planes = x->dims[0] * x->dims[1], ow_n = g.out[2];
    for (int64_t pl = 0; pl < planes; pl++) {
        j.xp = (const float *)x->data + pl * g.isz;
        j.base = pl * g.isz;
        for (int64_t od = 0; od < g.out[0]; od++)
            for (int64_t oh = 0; oh < g.out[1]; oh++) {
                int64_t orow = (pl * g.out[0] * g.out[1] + od * g.out[1] + oh) * ow_n;
                float *yr = (float *)y->data + orow;
                int64_t *ir = ind ? (int64_t *)ind->data + orow : NULL;
                if (pool_row(&j, od, oh, yr, ir, mode))
                    pool_row(&j, od, oh, yr, ir, ROW_MAX_NAN);
                if (mode == ROW_AVG) {
                    int64_t n2 = cip ? t.npad[0][od] * t.npad[1][oh] : t.n[0][od] * t.n[1][oh];
                    const int64_t *nw = cip ? t.npad[2] : t.n[2];
                    for (int64_t ow = 0; ow < ow_n; ow++)
                        yr[ow] /= (float)(n2 * nw[ow]);
                } else if (mode == ROW_LP2) {
                    for (int64_t ow = 0; ow < ow_n; ow++)
                        yr[ow] = sqrtf(yr[ow]);
                } else if (mode == ROW_LP) {
                    for (int64_t ow = 0; ow < ow_n; ow++)
                        yr[ow] = powf(yr[ow], 1.0f / j.p);
                }
            }
    }
    free(t.mem);
    return NB_OK;
}

static nb_err k_pool(nb_kctx *k) { return dispatch(k, k_pool_f32); }

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool (ONNX, opset 1/2): the pool over all
 * spatial positions of each (image, channel) plane. */
static nb_err k_global_pool_f32(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    const char *op = k->node->op_type;
    pool_kind kind = !strcmp(op, "GlobalMaxPool") ? POOL_MAX
                     : !strcmp(op, "GlobalAveragePool") ? POOL_AVG : POOL_LP;
    float p = nb_attr_float(k->node, "p", 2.0f);
    int64_t planes = x->rank >= 2 ? x->dims[0] * x->dims[1] : 1;
    int64_t n = planes ? x->numel / planes : 0;
    const float *xd = x->data;
    float *yd = y->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = xd + pl * n;
        float r;
        if (kind == POOL_MAX) {
            r = -INFINITY;
            for (int64_t i = 0; i < n; i++)
                if (xp[i] > r || (xp[i] != xp[i] && r == r)) /* the first NaN propagates */
                    r = xp[i];
        } else if (kind == POOL_AVG) {
            float s = 0.0f;
            for (int64_t i = 0; i < n; i++)
                s += xp[i];
            r = s / (float)n;
        } else {
            float s = 0.0f;
            if (p == 2.0f)
                for (int64_t i = 0; i < n; i++)
                    s += xp[i] * xp[i];
            else
                for (int64_t i = 0; i < n; i++)
                    s += powf(fabsf(xp[i]), p);
            r = p == 2.0f ? sqrtf(s) : powf(s, 1.0f / p);
        }
        yd[pl] = r;
    }
    return NB_OK;
}

static nb_err k_global_pool(nb_kctx *k) { return dispatch(k, k_global_pool_f32); }

const nb_kernel_entry nb_kernels_nn[] = {
    {"AveragePool", k_pool, 0},
    {"Conv", k_conv, 0},
    {"ConvTranspose", k_convtranspose, 0},
    {"Gemm", k_gemm, 0},
    {"GlobalAveragePool", k_global_pool, 0},
    {"GlobalLpPool", k_global_pool, 0},
    {"GlobalMaxPool", k_global_pool, 0},
    {"LpPool", k_pool, 0},
    {"MatMul", k_matmul, 0},
    {"MaxPool", k_pool, 0},
    {NULL, NULL, 0},
};
