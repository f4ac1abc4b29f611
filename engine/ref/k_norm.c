/* nanobench: reference kernels of normalisation, softmax, reduction, index and resampling
 * operators (ONNX Operators.md, opset 11-18, plus the attribute forms of opset 1-10).
 *
 * float32 is computed in float32 (statistics of the normalisations in double, then
 * rounded); FLOAT16 is widened to float32, computed, and rounded back; integer reductions,
 * ArgMax, TopK and CumSum are exact in 64 bits and wrap to the output type. Shapes and
 * attributes have been checked by the infer functions (infer_norm.c), which the executor
 * runs on the actual inputs before each kernel.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

/* ---------------------------------------------------------------- element conversion */

#define CONV_CASES(DST, SRCT, N)                                                      \
    case NB_FLOAT: CONV_LOOP(float, DST, SRCT, N); break;                             \
    case NB_UINT8: CONV_LOOP(uint8_t, DST, SRCT, N); break;                           \
    case NB_INT8: CONV_LOOP(int8_t, DST, SRCT, N); break;                             \
    case NB_UINT16: CONV_LOOP(uint16_t, DST, SRCT, N); break;                         \
    case NB_INT16: CONV_LOOP(int16_t, DST, SRCT, N); break;                           \
    case NB_INT32: CONV_LOOP(int32_t, DST, SRCT, N); break;                           \
    case NB_INT64: CONV_LOOP(int64_t, DST, SRCT, N); break;                           \
    case NB_UINT32: CONV_LOOP(uint32_t, DST, SRCT, N); break;                         \
    case NB_UINT64: CONV_LOOP(uint64_t, DST, SRCT, N); break;                         \
    case NB_BOOL: CONV_LOOP(uint8_t, DST, SRCT, N); break;

#define CONV_LOOP(T, DST, SRC, N)                                                     \
    do {                                                                              \
        const T *s_ = (const T *)(SRC);                                               \
        for (int64_t i_ = 0; i_ < (N); i_++)                                          \
            (DST)[i_] = s_[i_];                                                       \
    } while (0)

/* t's elements as float. */
static void to_f32(const nb_tensor *t, float *dst)
{
    switch (t->dtype) {
        CONV_CASES(dst, t->data, t->numel)
    case NB_FLOAT16:
        for (int64_t i = 0; i < t->numel; i++)
            dst[i] = nb_half_to_float(((const uint16_t *)t->data)[i]);
        break;
    default:
        memset(dst, 0, sizeof(float) * (size_t)t->numel);
        break;
    }
}

/* t's elements as double. */
static void to_f64(const nb_tensor *t, double *dst)
{
    switch (t->dtype) {
        CONV_CASES(dst, t->data, t->numel)
    case NB_FLOAT16:
        for (int64_t i = 0; i < t->numel; i++)
            dst[i] = nb_half_to_float(((const uint16_t *)t->data)[i]);
        break;
    default:
        memset(dst, 0, sizeof(double) * (size_t)t->numel);
        break;
    }
}

/* t's elements as int64 (floats truncated). ordered: UINT64 values get their top bit flipped
 * so that signed comparison orders them (undo with from_i64(..., true)). */
static void to_i64(const nb_tensor *t, int64_t *dst, bool ordered)
{
    switch (t->dtype) {
        CONV_CASES(dst, t->data, t->numel)
    case NB_FLOAT16:
        for (int64_t i = 0; i < t->numel; i++)
            dst[i] = (int64_t)nb_half_to_float(((const uint16_t *)t->data)[i]);
        break;
    default:
        memset(dst, 0, sizeof(int64_t) * (size_t)t->numel);
        break;
    }
    if (ordered && t->dtype == NB_UINT64)
        for (int64_t i = 0; i < t->numel; i++)
            dst[i] = (int64_t)((uint64_t)dst[i] ^ ((uint64_t)1 << 63));
}
#undef CONV_LOOP

/* float -> integer: NaN -> 0, saturating; round to nearest (round) or toward zero. */
static inline int64_t f2i(double v, bool round, double lo, double hi)
{
    if (isnan(v))
        return 0;
    v = round ? nearbyint(v) : trunc(v);
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
    return (int64_t)v;
}

#define STORE_INT(T, LO, HI)                                                          \
    do {                                                                              \
        T *d_ = t->data;                                                              \
        for (int64_t i = 0; i < t->numel; i++)                                        \
            d_[i] = (T)f2i(src[i], round, LO, HI);                                    \
    } while (0)

/* Writes float/double values src into t (any stored dtype). */
#define DEFINE_FROM(NAME, ST)                                                         \
    static void NAME(nb_tensor *t, const ST *src, bool round)                         \
    {                                                                                 \
        switch (t->dtype) {                                                           \
        case NB_FLOAT:                                                                \
            for (int64_t i = 0; i < t->numel; i++)                                    \
                ((float *)t->data)[i] = (float)src[i];                                \
            break;                                                                    \
        case NB_FLOAT16:                                                              \
            for (int64_t i = 0; i < t->numel; i++)                                    \
                ((uint16_t *)t->data)[i] = nb_float_to_half((float)src[i]);           \
            break;                                                                    \
        case NB_UINT8: STORE_INT(uint8_t, 0, 255); break;                             \
        case NB_INT8: STORE_INT(int8_t, -128, 127); break;                            \
        case NB_UINT16: STORE_INT(uint16_t, 0, 65535); break;                         \
        case NB_INT16: STORE_INT(int16_t, -32768, 32767); break;                      \
        case NB_INT32: STORE_INT(int32_t, -2147483648.0, 2147483647.0); break;        \
        case NB_UINT32: STORE_INT(uint32_t, 0, 4294967295.0); break;                  \
        case NB_INT64: STORE_INT(int64_t, -9.2233720368547758e18, 9.2233720368547758e18); break; \
        case NB_UINT64: STORE_INT(uint64_t, 0, 9.2233720368547758e18); break;         \
        case NB_BOOL:                                                                 \
            for (int64_t i = 0; i < t->numel; i++)                                    \
                ((uint8_t *)t->data)[i] = src[i] != 0;                                \
            break;                                                                    \
        default: break;                                                               \
        }                                                                             \
    }
DEFINE_FROM(from_f32, float)
DEFINE_FROM(from_f64, double)
#undef STORE_INT

/* Writes int64 values into t, wrapping to its width (ordered: undo to_i64's UINT64 flip). */
static void from_i64(nb_tensor *t, const int64_t *src, bool ordered)
{
    int64_t n = t->numel;
    switch (t->dtype) {
#define ST(DT, T) case DT: for (int64_t i = 0; i < n; i++) ((T *)t->data)[i] = (T)src[i]; break;
        ST(NB_UINT8, uint8_t) ST(NB_INT8, int8_t) ST(NB_UINT16, uint16_t) ST(NB_INT16, int16_t)
        ST(NB_INT32, int32_t) ST(NB_INT64, int64_t) ST(NB_UINT32, uint32_t)
        ST(NB_BOOL, uint8_t)
#undef ST
    case NB_UINT64:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)t->data)[i] = (uint64_t)src[i] ^ (ordered ? (uint64_t)1 << 63 : 0);
        break;
    case NB_FLOAT:
        for (int64_t i = 0; i < n; i++)
            ((float *)t->data)[i] = (float)src[i];
        break;
    case NB_FLOAT16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)t->data)[i] = nb_float_to_half((float)src[i]);
        break;
    default: break;
    }
}

static void *xalloc(int64_t n, size_t es)
{
    return malloc((size_t)(n > 0 ? n : 1) * es);
}

static nb_err nomem(nb_status *st)
{
    return nb_fail(st, NB_ERR_NOMEM, "out of memory");
}

/* A float32 view of an input (its own data when FLOAT) or a float32 buffer for an output
 * (written back by fbuf_store). */
typedef struct fbuf {
    float *p;
    bool own;
} fbuf;

static nb_err fbuf_in(const nb_tensor *t, fbuf *b, nb_status *st)
{
    b->own = t->dtype != NB_FLOAT;
    if (!b->own) {
        b->p = t->data;
        return NB_OK;
    }
    b->p = xalloc(t->numel, sizeof(float));
    if (!b->p)
        return nomem(st);
    to_f32(t, b->p);
    return NB_OK;
}

static nb_err fbuf_out(nb_tensor *t, fbuf *b, nb_status *st)
{
    b->own = t->dtype != NB_FLOAT;
    b->p = b->own ? xalloc(t->numel, sizeof(float)) : t->data;
    return b->p ? NB_OK : nomem(st);
}

static void fbuf_store(nb_tensor *t, fbuf *b, bool round)
{
    if (b->own && b->p)
        from_f32(t, b->p, round);
}

static void fbuf_free(fbuf *b)
{
    if (b->own)
        free(b->p);
    b->p = NULL;
    b->own = false;
}

/* numpy's pairwise summation of float32 (8 accumulators, blocks of 128), so that sums match
 * the reference outputs closely. */
static float pairwise_sum(const float *a, int64_t n)
{
    if (n < 8) {
        float r = 0.0f;
        for (int64_t i = 0; i < n; i++)
            r += a[i];
        return r;
    }
    if (n <= 128) {
        float r[8];
        int64_t i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* Splits a shape at axis into outer x n x inner. */
static void split_axis(const nb_tensor *t, int axis, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= t->dims[d];
    *n = t->rank ? t->dims[axis] : 1;
    for (int d = axis + 1; d < t->rank; d++)
        *inner *= t->dims[d];
}

static int norm_axis(int64_t a, int r)
{
    return (int)(a < 0 ? a + r : a);
}

/* ---------------------------------------------------------------- softmax family */

enum { SM_SOFT, SM_LOG, SM_HARD };

/* One row of n contiguous elements. */
static void softmax_row(const float *x, float *y, int64_t n, int kind)
{
    if (n == 0)
        return;
    float m = x[0];
    int64_t bi = 0;
    for (int64_t i = 1; i < n; i++)
        if (x[i] > m) {
            m = x[i];
            bi = i;
        }
    if (kind == SM_HARD) {
        for (int64_t i = 0; i < n; i++)
            y[i] = 0.0f;
        y[bi] = 1.0f;
        return;
    }
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        float e = expf(x[i] - m);
        y[i] = e;
        s += e;
    }
    if (kind == SM_SOFT) {
        float fs = (float)s;
        for (int64_t i = 0; i < n; i++)
            y[i] /= fs;
    } else {
        float ls = (float)log(s);
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) - ls;
    }
}

/* n rows of `inner` elements each (the axis is not the last one): column-wise. */
static void softmax_cols(const float *x, float *y, int64_t n, int64_t inner, int kind,
                         float *m, double *s, int64_t *bi)
{
    for (int64_t i = 0; i < inner; i++) {
        m[i] = x[i];
        bi[i] = 0;
        s[i] = 0;
    }
    for (int64_t j = 1; j < n; j++)
        for (int64_t i = 0; i < inner; i++)
            if (x[j * inner + i] > m[i]) {
                m[i] = x[j * inner + i];
                bi[i] = j;
            }
    if (kind == SM_HARD) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < inner; i++)
                y[j * inner + i] = bi[i] == j ? 1.0f : 0.0f;
        return;
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < inner; i++) {
            float e = expf(x[j * inner + i] - m[i]);
            y[j * inner + i] = e;
            s[i] += e;
        }
    if (kind == SM_SOFT) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < inner; i++)
                y[j * inner + i] /= (float)s[i];
    } else {
        for (int64_t i = 0; i < inner; i++)
            s[i] = log(s[i]);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < inner; i++)
                y[j * inner + i] = (x[j * inner + i] - m[i]) - (float)s[i];
    }
}

/* Softmax, LogSoftmax, Hardmax. opset < 13: rows of the 2-D coercion of X at axis (default 1);
 * opset >= 13: along axis (default -1). Softmax = exp(x - max) / sum, LogSoftmax =
 * (x - max) - log(sum); Hardmax = 1 at the first maximum of each row. */
static nb_err k_softmax(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    const char *op = k->node->op_type;
    int kind = !strcmp(op, "Softmax") ? SM_SOFT : !strcmp(op, "LogSoftmax") ? SM_LOG : SM_HARD;
    bool legacy = k->opset < 13;
    int r = x->rank;
    int axis = norm_axis(nb_attr_int(k->node, "axis", legacy ? 1 : -1), r);
    int64_t outer = 1, n = 1, inner = 1;
    if (legacy) {
        for (int d = 0; d < r; d++)
            *(d < axis ? &outer : &n) *= x->dims[d];
    } else {
        split_axis(x, axis, &outer, &n, &inner);
    }
    if (y->numel == 0)
        return NB_OK;
    fbuf xb, yb;
    nb_err e = fbuf_in(x, &xb, k->st);
    if (e)
        return e;
    if ((e = fbuf_out(y, &yb, k->st))) {
        fbuf_free(&xb);
        return e;
    }
    float *m = NULL;
    double *s = NULL;
    int64_t *bi = NULL;
    if (inner > 1) {
        m = xalloc(inner, sizeof *m);
        s = xalloc(inner, sizeof *s);
        bi = xalloc(inner, sizeof *bi);
        if (!m || !s || !bi)
            e = nomem(k->st);
    }
    for (int64_t o = 0; o < outer && !e; o++) {
        const float *xp = xb.p + o * n * inner;
        float *yp = yb.p + o * n * inner;
        if (inner == 1)
            softmax_row(xp, yp, n, kind);
        else
            softmax_cols(xp, yp, n, inner, kind, m, s, bi);
    }
    if (!e)
        fbuf_store(y, &yb, false);
    free(m);
    free(s);
    free(bi);
    fbuf_free(&xb);
    fbuf_free(&yb);
    return e;
}

/* ---------------------------------------------------------------- normalisations */

/* Loads up to n float parameter tensors (NULL entries stay NULL). */
static nb_err load_params(nb_kctx *k, const int *idx, int n, fbuf *b)
{
    for (int i = 0; i < n; i++) {
        b[i].p = NULL;
        b[i].own = false;
    }
    for (int i = 0; i < n; i++) {
        if (idx[i] >= k->n_in || !k->in[idx[i]])
            continue;
        nb_err e = fbuf_in(k->in[idx[i]], &b[i], k->st);
        if (e) {
            for (int j = 0; j < i; j++)
                fbuf_free(&b[j]);
            return e;
        }
    }
    return NB_OK;
}

/* Mean and (population) variance of n floats with stride 1, in double. */
static void mean_var(const float *x, int64_t n, double *mean, double *var)
{
    double s = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        s += x[i];
    double m = n ? s / (double)n : 0;
    for (int64_t i = 0; i < n; i++) {
        double d = x[i] - m;
        q += d * d;
    }
    *mean = m;
    *var = n ? q / (double)n : 0;
}

/* BatchNormalization (opset 6-15): y = scale * (x - mean) / sqrt(var + epsilon) + B per
 * channel. Training (training_mode=1 at opset 14+; more than one output before) uses the
 * batch statistics (mean and population variance over every axis but 1) and outputs
 * running_mean = mean * momentum + batch_mean * (1 - momentum) (same for var); opset < 14
 * then also outputs saved_mean and saved_var (the batch statistics). */
static nb_err k_batchnorm(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    float eps = nb_attr_float(k->node, "epsilon", 1e-5f);
    float mom = nb_attr_float(k->node, "momentum", 0.9f);
    int n_present = 0;
    for (int o = 0; o < k->n_out; o++)
        n_present += k->out[o] != NULL;
    bool train = k->opset >= 14 ? nb_attr_int(k->node, "training_mode", 0) != 0 : n_present > 1;
    int64_t N = x->dims[0], C = x->dims[1], S = 1;
    for (int d = 2; d < x->rank; d++)
        S *= x->dims[d];
    if (k->in[1]->numel != C && k->in[1]->numel == C * S) {
        /* spatial=0 (opset < 9): one parameter per element of a sample */
        C *= S;
        S = 1;
    }
    static const int pidx[] = {1, 2, 3, 4};
    fbuf p[4], xb, yb;
    nb_err e = load_params(k, pidx, 4, p);
    if (e)
        return e;
    double *bm = NULL, *bv = NULL;
    if ((e = fbuf_in(x, &xb, k->st)))
        goto out0;
    if ((e = fbuf_out(y, &yb, k->st)))
        goto out1;
    bm = xalloc(C, sizeof *bm);
    bv = xalloc(C, sizeof *bv);
    if (!bm || !bv) {
        e = nomem(k->st);
        goto out2;
    }
    for (int64_t c = 0; c < C; c++) {
        if (!train) {
            bm[c] = p[2].p[c];
            bv[c] = p[3].p[c];
            continue;
        }
        double s = 0, q = 0, cnt = (double)(N * S);
        for (int64_t n = 0; n < N; n++) {
            const float *xp = xb.p + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++)
                s += xp[i];
        }
        double m = cnt > 0 ? s / cnt : 0;
        for (int64_t n = 0; n < N; n++) {
            const float *xp = xb.p + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++)
                q += (xp[i] - m) * (xp[i] - m);
        }
        bm[c] = m;
        bv[c] = cnt > 0 ? q / cnt : 0;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            float a = (float)(p[0].p[c] / sqrt(bv[c] + eps));
            float m = (float)bm[c], b = p[1].p[c];
            const float *xp = xb.p + (n * C + c) * S;
            float *yp = yb.p + (n * C + c) * S;
            for (int64_t i = 0; i < S; i++)
                yp[i] = (xp[i] - m) * a + b;
        }
    fbuf_store(y, &yb, false);
    /* extra outputs: running mean/var (opset 14+: 1, 2; before: mean, var, saved_mean,
     * saved_var) */
    for (int o = 1; o < k->n_out && o <= 4; o++) {
        nb_tensor *t = k->out[o];
        if (!t)
            continue;
        fbuf ob;
        if ((e = fbuf_out(t, &ob, k->st)))
            goto out2;
        for (int64_t c = 0; c < t->numel && c < C; c++) {
            double v;
            if (o == 3 || o == 4)
                v = o == 3 ? bm[c] : bv[c];
            else if (!train)
                v = o == 1 ? p[2].p[c] : p[3].p[c];
            else
                v = (o == 1 ? p[2].p[c] : p[3].p[c]) * (double)mom +
                    (o == 1 ? bm[c] : bv[c]) * (1.0 - (double)mom);
            ob.p[c] = (float)v;
        }
        fbuf_store(t, &ob, false);
        fbuf_free(&ob);
    }
out2:
    free(bm);
    free(bv);
    fbuf_free(&yb);
out1:
    fbuf_free(&xb);
out0:
    for (int i = 0; i < 4; i++)
        fbuf_free(&p[i]);
    return e;
}

/* InstanceNormalization (opset 6): y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c],
 * mean and population variance over the spatial dims of each (n, c). */
static nb_err k_instancenorm(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    double eps = nb_attr_float(k->node, "epsilon", 1e-5f);
    int64_t N = x->dims[0], C = x->dims[1], S = 1;
    for (int d = 2; d < x->rank; d++)
        S *= x->dims[d];
    static const int pidx[] = {1, 2};
    fbuf p[2], xb, yb;
    nb_err e = load_params(k, pidx, 2, p);
    if (e)
        return e;
    if (!(e = fbuf_in(x, &xb, k->st))) {
        if (!(e = fbuf_out(y, &yb, k->st))) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < C; c++) {
                    const float *xp = xb.p + (n * C + c) * S;
                    float *yp = yb.p + (n * C + c) * S;
                    double m, v;
                    mean_var(xp, S, &m, &v);
                    float a = (float)(p[0].p[c] / sqrt(v + eps)), fm = (float)m, b = p[1].p[c];
                    for (int64_t i = 0; i < S; i++)
                        yp[i] = (xp[i] - fm) * a + b;
                }
            fbuf_store(y, &yb, false);
            fbuf_free(&yb);
        }
        fbuf_free(&xb);
    }
    fbuf_free(&p[0]);
    fbuf_free(&p[1]);
    return e;
}

/* Expands parameter t (float values v) to the `cols` elements of dims[0..r) (unidirectional
 * broadcast). Returns v itself when it already has that many elements. */
static float *expand_param(const nb_tensor *t, float *v, int r, const int64_t *dims, int64_t cols)
{
    if (t->numel == cols)
        return v;
    float *o = xalloc(cols, sizeof(float));
    if (!o)
        return NULL;
    nb_bcast it;
    nb_bcast_init(&it, r, dims, t, NULL, NULL);
    for (int64_t i = 0; i < cols; i++, nb_bcast_next(&it))
        o[i] = v[it.oa];
    return o;
}

/* LayerNormalization (opset 17): for each of the prod(dims[:axis]) rows, mean and population
 * variance over dims [axis, rank) (computed in stash_type precision or better),
 * y = (x - mean) * InvStdDev * Scale + B with InvStdDev = 1 / sqrt(var + epsilon); Scale and
 * B broadcast to the normalised dims. */
static nb_err k_layernorm(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int axis = norm_axis(nb_attr_int(k->node, "axis", -1), x->rank);
    double eps = nb_attr_float(k->node, "epsilon", 1e-5f);
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < x->rank; d++)
        *(d < axis ? &rows : &cols) *= x->dims[d];
    static const int pidx[] = {1, 2};
    fbuf p[2], xb, yb, mb = {NULL, false}, ib = {NULL, false};
    float *sc = NULL, *bi = NULL;
    nb_tensor *tm = k->n_out > 1 ? k->out[1] : NULL, *ti = k->n_out > 2 ? k->out[2] : NULL;
    nb_err e = load_params(k, pidx, 2, p);
    if (e)
        return e;
    if ((e = fbuf_in(x, &xb, k->st)))
        goto out0;
    if ((e = fbuf_out(y, &yb, k->st)))
        goto out1;
    if ((tm && (e = fbuf_out(tm, &mb, k->st))) || (ti && (e = fbuf_out(ti, &ib, k->st))))
        goto out2;
    sc = expand_param(k->in[1], p[0].p, x->rank - axis, x->dims + axis, cols);
    bi = p[1].p ? expand_param(k->in[2], p[1].p, x->rank - axis, x->dims + axis, cols) : NULL;
    if (!sc || (p[1].p && !bi)) {
        e = nomem(k->st);
        goto out2;
    }
    for (int64_t r = 0; r < rows; r++) {
        const float *xp = xb.p + r * cols;
        float *yp = yb.p + r * cols;
        double m, v;
        mean_var(xp, cols, &m, &v);
        double inv = 1.0 / sqrt(v + eps);
        float fm = (float)m, fi = (float)inv;
        if (bi)
            for (int64_t i = 0; i < cols; i++)
                yp[i] = (xp[i] - fm) * fi * sc[i] + bi[i];
        else
            for (int64_t i = 0; i < cols; i++)
                yp[i] = (xp[i] - fm) * fi * sc[i];
        if (mb.p)
            mb.p[r] = fm;
        if (ib.p)
            ib.p[r] = fi;
    }
    fbuf_store(y, &yb, false);
    if (tm)
        fbuf_store(tm, &mb, false);
    if (ti)
        fbuf_store(ti, &ib, false);
out2:
    if (sc != p[0].p)
        free(sc);
    if (bi != p[1].p)
        free(bi);
    fbuf_free(&mb);
    fbuf_free(&ib);
    fbuf_free(&yb);
out1:
    fbuf_free(&xb);
out0:
    fbuf_free(&p[0]);
    fbuf_free(&p[1]);
    return e;
}

/* GroupNormalization (opset 18): channels in num_groups contiguous groups; mean and
 * population variance per (n, group) over its channels and spatial dims;
 * y = scale * (x - mean) / sqrt(var + epsilon) + bias with scale/bias per group (opset 18)
 * or per channel (opset 21 form). */
static nb_err k_groupnorm(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t G = nb_attr_int(k->node, "num_groups", 1);
    double eps = nb_attr_float(k->node, "epsilon", 1e-5f);
    int64_t N = x->dims[0], C = x->dims[1], S = 1;
    for (int d = 2; d < x->rank; d++)
        S *= x->dims[d];
    int64_t cpg = C / G;
    bool per_channel = k->in[1]->numel == C && C != G;
    static const int pidx[] = {1, 2};
    fbuf p[2], xb, yb;
    nb_err e = load_params(k, pidx, 2, p);
    if (e)
        return e;
    if (!(e = fbuf_in(x, &xb, k->st))) {
        if (!(e = fbuf_out(y, &yb, k->st))) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t g = 0; g < G; g++) {
                    const float *xp = xb.p + (n * C + g * cpg) * S;
                    float *yp = yb.p + (n * C + g * cpg) * S;
                    double m, v;
                    mean_var(xp, cpg * S, &m, &v);
                    double inv = 1.0 / sqrt(v + eps);
                    for (int64_t cc = 0; cc < cpg; cc++) {
                        int64_t pi = per_channel ? g * cpg + cc : g;
                        float a = (float)(p[0].p[pi] * inv), b = p[1].p[pi], fm = (float)m;
                        for (int64_t i = 0; i < S; i++)
                            yp[cc * S + i] = (xp[cc * S + i] - fm) * a + b;
                    }
                }
            fbuf_store(y, &yb, false);
            fbuf_free(&yb);
        }
        fbuf_free(&xb);
    }
    fbuf_free(&p[0]);
    fbuf_free(&p[1]);
    return e;
}

/* LRN (opset 1-13): square_sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]
 * (clipped), y = x / (bias + alpha / size * square_sum) ^ beta. */
static nb_err k_lrn(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    float alpha = nb_attr_float(k->node, "alpha", 1e-4f);
    float beta = nb_attr_float(k->node, "beta", 0.75f);
    float bias = nb_attr_float(k->node, "bias", 1.0f);
    int64_t size = nb_attr_int(k->node, "size", 1);
    int64_t lo_half = (size - 1) / 2, hi_half = size - 1 - lo_half;
    float a = (float)((double)alpha / (double)size);
    int64_t N = x->dims[0], C = x->dims[1], S = 1;
    for (int d = 2; d < x->rank; d++)
        S *= x->dims[d];
    fbuf xb, yb;
    nb_err e = fbuf_in(x, &xb, k->st);
    if (e)
        return e;
    float *sq = xalloc(S, sizeof *sq);
    if (!sq)
        e = nomem(k->st);
    if (!e && !(e = fbuf_out(y, &yb, k->st))) {
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < C; c++) {
                int64_t c0 = c - lo_half < 0 ? 0 : c - lo_half;
                int64_t c1 = c + hi_half > C - 1 ? C - 1 : c + hi_half;
                for (int64_t i = 0; i < S; i++)
                    sq[i] = 0.0f;
                for (int64_t cc = c0; cc <= c1; cc++) {
                    const float *xp = xb.p + (n * C + cc) * S;
                    for (int64_t i = 0; i < S; i++)
                        sq[i] += xp[i] * xp[i];
                }
                const float *xp = xb.p + (n * C + c) * S;
                float *yp = yb.p + (n * C + c) * S;
                for (int64_t i = 0; i < S; i++)
                    yp[i] = xp[i] / powf(bias + a * sq[i], beta);
            }
        fbuf_store(y, &yb, false);
        fbuf_free(&yb);
    }
    free(sq);
    fbuf_free(&xb);
    return e;
}

/* ---------------------------------------------------------------- reduction plan */

/* A reduction over some axes: the input's dims with size-1 dims dropped and neighbours of
 * the same kind (reduced or kept) merged; ost = stride of each dim in the output (0 for
 * reduced dims). The output (with or without keepdims) is in row-major order of the kept
 * dims. */
typedef struct rplan {
    int n;
    int64_t dims[NB_MAX_RANK];
    bool red[NB_MAX_RANK];
    int64_t ost[NB_MAX_RANK];
    int64_t inumel, onumel, count;
} rplan;

static void rplan_init(rplan *p, int rank, const int64_t *dims, const bool *red)
{
    p->n = 0;
    p->inumel = p->onumel = p->count = 1;
    for (int d = 0; d < rank; d++) {
        p->inumel *= dims[d];
        *(red[d] ? &p->count : &p->onumel) *= dims[d];
        if (dims[d] == 1)
            continue;
        if (p->n && p->red[p->n - 1] == red[d]) {
            p->dims[p->n - 1] *= dims[d];
        } else {
            p->dims[p->n] = dims[d];
            p->red[p->n] = red[d];
            p->n++;
        }
    }
    if (!p->n) {
        p->dims[0] = 1;
        p->red[0] = false;
        p->n = 1;
    }
    int64_t s = 1;
    for (int d = p->n - 1; d >= 0; d--) {
        p->ost[d] = p->red[d] ? 0 : s;
        if (!p->red[d])
            s *= p->dims[d];
    }
}

/* Walks the plan's outer dims (all but the last): out offset of each inner run. */
typedef struct rwalk {
    int64_t idx[NB_MAX_RANK];
    int64_t oo;
} rwalk;

static inline void rwalk_next(const rplan *p, rwalk *w)
{
    for (int d = p->n - 2; d >= 0; d--) {
        w->oo += p->ost[d];
        if (++w->idx[d] < p->dims[d])
            return;
        w->oo -= p->ost[d] * p->dims[d];
        w->idx[d] = 0;
    }
}

typedef enum rop { RO_SUM, RO_PROD, RO_MAX, RO_MIN } rop;

static inline float fmax_nan(float a, float v) { return (v > a || v != v) ? v : a; }
static inline float fmin_nan(float a, float v) { return (v < a || v != v) ? v : a; }

/* acc[out] = op over the reduced elements of x (float32 accumulation; contiguous runs are
 * summed pairwise). */
static void reduce_f32(const rplan *p, const float *x, float *acc, rop op)
{
    float init = op == RO_SUM ? 0.0f : op == RO_PROD ? 1.0f : op == RO_MAX ? -INFINITY : INFINITY;
    for (int64_t o = 0; o < p->onumel; o++)
        acc[o] = init;
    if (!p->inumel)
        return;
    int last = p->n - 1;
    int64_t inner = p->dims[last], outer = p->inumel / inner;
    bool rin = p->red[last];
    rwalk w = {{0}, 0};
    for (int64_t k = 0; k < outer; k++, x += inner, rwalk_next(p, &w)) {
        float *a = acc + w.oo;
        if (rin) {
            float q = a[0];
            switch (op) {
            case RO_SUM: q += pairwise_sum(x, inner); break;
            case RO_PROD: for (int64_t i = 0; i < inner; i++) q *= x[i]; break;
            case RO_MAX: for (int64_t i = 0; i < inner; i++) q = fmax_nan(q, x[i]); break;
            case RO_MIN: for (int64_t i = 0; i < inner; i++) q = fmin_nan(q, x[i]); break;
            }
            a[0] = q;
        } else {
            switch (op) {
            case RO_SUM: for (int64_t i = 0; i < inner; i++) a[i] += x[i]; break;
            case RO_PROD: for (int64_t i = 0; i < inner; i++) a[i] *= x[i]; break;
            case RO_MAX: for (int64_t i = 0; i < inner; i++) a[i] = fmax_nan(a[i], x[i]); break;
            case RO_MIN: for (int64_t i = 0; i < inner; i++) a[i] = fmin_nan(a[i], x[i]); break;
            }
        }
    }
}

/* Same over int64 values (sums and products wrap modulo 2^64). */
static void reduce_i64(const rplan *p, const int64_t *x, int64_t *acc, rop op)
{
    int64_t init = op == RO_SUM ? 0 : op == RO_PROD ? 1 : op == RO_MAX ? INT64_MIN : INT64_MAX;
    for (int64_t o = 0; o < p->onumel; o++)
        acc[o] = init;
    if (!p->inumel)
        return;
    int last = p->n - 1;
    int64_t inner = p->dims[last], outer = p->inumel / inner;
    bool rin = p->red[last];
    rwalk w = {{0}, 0};
    for (int64_t k = 0; k < outer; k++, x += inner, rwalk_next(p, &w)) {
        int64_t *a = acc + w.oo;
        int64_t step = rin ? 0 : 1;
        for (int64_t i = 0; i < inner; i++) {
            int64_t *q = a + i * step;
            switch (op) {
            case RO_SUM: *q = (int64_t)((uint64_t)*q + (uint64_t)x[i]); break;
            case RO_PROD: *q = (int64_t)((uint64_t)*q * (uint64_t)x[i]); break;
            case RO_MAX: *q = x[i] > *q ? x[i] : *q; break;
            case RO_MIN: *q = x[i] < *q ? x[i] : *q; break;
            }
        }
    }
}

/* Reduced axes of a Reduce* node: the axes attribute, or input 1 (ReduceSum from opset 13,
 * the others from 18); empty means all, or nothing with noop_with_empty_axes. */
static void reduce_axes(const nb_kctx *k, bool *red, bool *noop)
{
    int r = k->in[0]->rank;
    int n = 0;
    int64_t axes[NB_MAX_RANK];
    bool from_input = k->n_in > 1 && k->in[1];
    if (from_input) {
        n = (int)(k->in[1]->numel < NB_MAX_RANK ? k->in[1]->numel : NB_MAX_RANK);
        for (int i = 0; i < n; i++)
            axes[i] = nb_tensor_get_i64(k->in[1], i);
    } else {
        const int64_t *a = nb_attr_ints(k->node, "axes", &n);
        n = n < NB_MAX_RANK ? n : NB_MAX_RANK;
        for (int i = 0; i < n; i++)
            axes[i] = a[i];
    }
    int in_opset = !strcmp(k->node->op_type, "ReduceSum") ? 13 : 18;
    *noop = n == 0 && nb_attr_int(k->node, "noop_with_empty_axes", 0) &&
            (from_input || k->opset >= in_opset);
    for (int d = 0; d < r; d++)
        red[d] = n == 0;
    for (int i = 0; i < n; i++)
        red[norm_axis(axes[i], r)] = true;
}

typedef enum rkind {
    RK_SUM, RK_MEAN, RK_MAX, RK_MIN, RK_PROD, RK_L1, RK_L2, RK_LOGSUM, RK_LOGSUMEXP, RK_SUMSQ
} rkind;

static rkind reduce_kind(const char *op)
{
    static const struct {
        const char *op;
        rkind k;
    } t[] = {{"ReduceSum", RK_SUM},       {"ReduceMean", RK_MEAN},  {"ReduceMax", RK_MAX},
             {"ReduceMin", RK_MIN},       {"ReduceProd", RK_PROD},  {"ReduceL1", RK_L1},
             {"ReduceL2", RK_L2},         {"ReduceLogSum", RK_LOGSUM},
             {"ReduceLogSumExp", RK_LOGSUMEXP}, {"ReduceSumSquare", RK_SUMSQ}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].op, op))
            return t[i].k;
    return RK_SUM;
}

/* Float path of the reductions: Sum, Mean (sum / count), Max, Min, Prod (float32), L1
 * (sum |x|), L2 (sqrt(sum x^2)), SumSquare, LogSum (log(sum)), LogSumExp
 * (max + log(sum exp(x - max)), stable). Empty reductions give the identity (0, 1, -inf,
 * +inf; Mean NaN). */
static nb_err reduce_float(nb_kctx *k, const rplan *p, rkind kind)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    fbuf xb, yb;
    nb_err e = fbuf_in(x, &xb, k->st);
    if (e)
        return e;
    if ((e = fbuf_out(y, &yb, k->st))) {
        fbuf_free(&xb);
        return e;
    }
    float *tmp = NULL, *m = NULL;
    const float *src = xb.p;
    int64_t n = x->numel;
    if (kind == RK_L1 || kind == RK_L2 || kind == RK_SUMSQ || kind == RK_LOGSUMEXP) {
        tmp = xalloc(n, sizeof *tmp);
        if (!tmp) {
            e = nomem(k->st);
            goto out;
        }
        src = tmp;
    }
    switch (kind) {
    case RK_L1:
        for (int64_t i = 0; i < n; i++)
            tmp[i] = fabsf(xb.p[i]);
        break;
    case RK_L2:
    case RK_SUMSQ:
        for (int64_t i = 0; i < n; i++)
            tmp[i] = xb.p[i] * xb.p[i];
        break;
    case RK_LOGSUMEXP: {
        m = xalloc(p->onumel, sizeof *m);
        if (!m) {
            e = nomem(k->st);
            goto out;
        }
        reduce_f32(p, xb.p, m, RO_MAX);
        for (int64_t o = 0; o < p->onumel; o++)
            if (!isfinite(m[o]))
                m[o] = 0.0f;
        int last = p->n - 1;
        int64_t inner = p->dims[last], outer = n / (inner ? inner : 1);
        rwalk w = {{0}, 0};
        for (int64_t q = 0; q < outer; q++, rwalk_next(p, &w)) {
            const float *xp = xb.p + q * inner;
            float *tp = tmp + q * inner;
            if (p->red[last]) {
                float mo = m[w.oo];
                for (int64_t i = 0; i < inner; i++)
                    tp[i] = expf(xp[i] - mo);
            } else {
                const float *mo = m + w.oo;
                for (int64_t i = 0; i < inner; i++)
                    tp[i] = expf(xp[i] - mo[i]);
            }
        }
        break;
    }
    default:
        break;
    }
    rop op = kind == RK_MAX ? RO_MAX : kind == RK_MIN ? RO_MIN : kind == RK_PROD ? RO_PROD : RO_SUM;
    reduce_f32(p, src, yb.p, op);
    float cnt = (float)p->count;
    for (int64_t o = 0; o < p->onumel; o++) {
        float v = yb.p[o];
        switch (kind) {
        case RK_MEAN: v = v / cnt; break;
        case RK_L2: v = sqrtf(v); break;
        case RK_LOGSUM: v = logf(v); break;
        case RK_LOGSUMEXP: v = logf(v) + m[o]; break;
        default: break;
        }
        yb.p[o] = v;
    }
    fbuf_store(y, &yb, false);
out:
    free(tmp);
    free(m);
    fbuf_free(&xb);
    fbuf_free(&yb);
    return e;
}

/* Smallest / largest value of an integer dtype (empty ReduceMax / ReduceMin). */
static int64_t int_limit(nb_dtype t, bool max)
{
    switch (t) {
    case NB_UINT8: case NB_BOOL: return max ? 255 : 0;
    case NB_INT8: return max ? 127 : -128;
    case NB_UINT16: return max ? 65535 : 0;
    case NB_INT16: return max ? 32767 : -32768;
    case NB_INT32: return max ? INT32_MAX : INT32_MIN;
    case NB_UINT32: return max ? (int64_t)UINT32_MAX : 0;
    default: return max ? INT64_MAX : INT64_MIN; /* INT64; UINT64 in ordered form */
    }
}

/* Reduce* (opset 1-18): see reduce_axes and reduce_float; integer data is reduced exactly in
 * 64 bits (L2, LogSum, LogSumExp through float32, truncated back). */
static nb_err k_reduce(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    bool red[NB_MAX_RANK], noop;
    reduce_axes(k, red, &noop);
    if (noop) {
        memcpy(y->data, x->data, y->nbytes);
        return NB_OK;
    }
    rplan p;
    rplan_init(&p, x->rank, x->dims, red);
    rkind kind = reduce_kind(k->node->op_type);
    if (nb_dtype_is_float(x->dtype))
        return reduce_float(k, &p, kind);
    if (kind == RK_L2 || kind == RK_LOGSUM || kind == RK_LOGSUMEXP) {
        /* through float32: y's dtype is an integer type, stored truncated */
        nb_tensor *ft = NULL;
        nb_err e = nb_tensor_new_uninit(NB_FLOAT, y->rank, y->dims, &ft, k->st);
        if (e)
            return e;
        nb_tensor *save = k->out[0];
        k->out[0] = ft;
        e = reduce_float(k, &p, kind);
        k->out[0] = save;
        if (!e)
            from_f32(y, ft->data, false);
        nb_tensor_free(ft);
        return e;
    }
    bool ordered = kind == RK_MAX || kind == RK_MIN;
    int64_t *xv = xalloc(x->numel, sizeof *xv), *acc = xalloc(p.onumel, sizeof *acc);
    if (!xv || !acc) {
        free(xv);
        free(acc);
        return nomem(k->st);
    }
    to_i64(x, xv, ordered);
    if (kind == RK_L1)
        for (int64_t i = 0; i < x->numel; i++)
            xv[i] = xv[i] < 0 ? (int64_t)(0 - (uint64_t)xv[i]) : xv[i];
    if (kind == RK_SUMSQ)
        for (int64_t i = 0; i < x->numel; i++)
            xv[i] = (int64_t)((uint64_t)xv[i] * (uint64_t)xv[i]);
    rop op = kind == RK_MAX ? RO_MAX : kind == RK_MIN ? RO_MIN : kind == RK_PROD ? RO_PROD : RO_SUM;
    reduce_i64(&p, xv, acc, op);
    if (kind == RK_MEAN)
        for (int64_t o = 0; o < p.onumel; o++)
            acc[o] = p.count ? acc[o] / p.count : 0;
    if (ordered && p.count == 0) {
        int64_t lim = int_limit(x->dtype, kind == RK_MIN);
        for (int64_t o = 0; o < p.onumel; o++)
            acc[o] = lim;
    }
    from_i64(y, acc, ordered);
    free(xv);
    free(acc);
    return NB_OK;
}

/* MeanVarianceNormalization (opset 9-13): over axes (default [0, 2, 3]),
 * y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9), the variance computed in double as
 * the mean squared deviation. */
static nb_err k_mvn(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int n;
    const int64_t *ax = nb_attr_ints(k->node, "axes", &n);
    static const int64_t dflt[] = {0, 2, 3};
    if (!ax) {
        ax = dflt;
        n = 3;
    }
    bool red[NB_MAX_RANK] = {false};
    for (int i = 0; i < n; i++)
        red[norm_axis(ax[i], x->rank)] = true;
    rplan p;
    rplan_init(&p, x->rank, x->dims, red);
    fbuf xb, yb;
    nb_err e = fbuf_in(x, &xb, k->st);
    if (e)
        return e;
    double *m = xalloc(p.onumel, sizeof *m), *v = xalloc(p.onumel, sizeof *v);
    if (!m || !v || (e = fbuf_out(y, &yb, k->st))) {
        free(m);
        free(v);
        fbuf_free(&xb);
        return e ? e : nomem(k->st);
    }
    for (int64_t o = 0; o < p.onumel; o++)
        m[o] = v[o] = 0;
    int last = p.n - 1;
    int64_t inner = p.dims[last], outer = x->numel / (inner ? inner : 1);
    bool rin = p.red[last];
    double cnt = p.count ? (double)p.count : 1;
    for (int pass = 0; pass < 3; pass++) {
        rwalk w = {{0}, 0};
        for (int64_t q = 0; q < outer; q++, rwalk_next(&p, &w)) {
            const float *xp = xb.p + q * inner;
            float *yp = yb.p + q * inner;
            for (int64_t i = 0; i < inner; i++) {
                int64_t o = w.oo + (rin ? 0 : i);
                if (pass == 0) {
                    m[o] += xp[i];
                } else if (pass == 1) {
                    double d = xp[i] - m[o];
                    v[o] += d * d;
                } else {
                    yp[i] = (float)((xp[i] - m[o]) / v[o]);
                }
            }
        }
        for (int64_t o = 0; o < p.onumel; o++) {
            if (pass == 0)
                m[o] /= cnt;
            else if (pass == 1)
                v[o] = sqrt(v[o] / cnt) + 1e-9;
        }
    }
    fbuf_store(y, &yb, false);
    fbuf_free(&yb);
    fbuf_free(&xb);
    free(m);
    free(v);
    return NB_OK;
}

/* ---------------------------------------------------------------- ArgMax, ArgMin, CumSum */

/* ArgMax, ArgMin (opset 1-13): index of the first (select_last_index: last) maximum /
 * minimum along axis; NaN is ignored unless the whole slice is NaN. */
static nb_err k_argminmax(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    int64_t *y = k->out[0]->data;
    bool max = !strcmp(k->node->op_type, "ArgMax");
    bool last = nb_attr_int(k->node, "select_last_index", 0) != 0;
    int axis = norm_axis(nb_attr_int(k->node, "axis", 0), x->rank);
    int64_t outer, n, inner;
    split_axis(x, axis, &outer, &n, &inner);
    if (k->out[0]->numel == 0)
        return NB_OK;
    bool fl = nb_dtype_is_float(x->dtype);
    fbuf xb = {NULL, false};
    int64_t *xi = NULL;
    nb_err e = NB_OK;
    if (fl)
        e = fbuf_in(x, &xb, k->st);
    else if (!(xi = xalloc(x->numel, sizeof *xi)))
        e = nomem(k->st);
    else
        to_i64(x, xi, true);
    if (e)
        return e;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, bi = 0;
            if (fl) {
                const float *p = xb.p + base;
                float b = p[0];
                for (int64_t j = 1; j < n; j++) {
                    float v = p[j * inner];
                    bool better = max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
                    if (better || (b != b && v == v)) {
                        b = v;
                        bi = j;
                    }
                }
            } else {
                const int64_t *p = xi + base;
                int64_t b = p[0];
                for (int64_t j = 1; j < n; j++) {
                    int64_t v = p[j * inner];
                    if (max ? (last ? v >= b : v > b) : (last ? v <= b : v < b)) {
                        b = v;
                        bi = j;
                    }
                }
            }
            y[o * inner + i] = bi;
        }
    fbuf_free(&xb);
    free(xi);
    return NB_OK;
}

/* CumSum (opset 11-14): running sum along axis; exclusive starts at 0 (the element itself
 * excluded); reverse runs from the end. float32 accumulation, integers exact (wrapping). */
static nb_err k_cumsum(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int axis = norm_axis(nb_tensor_get_i64(k->in[1], 0), x->rank);
    bool excl = nb_attr_int(k->node, "exclusive", 0) != 0;
    bool rev = nb_attr_int(k->node, "reverse", 0) != 0;
    int64_t outer, n, inner;
    split_axis(x, axis, &outer, &n, &inner);
    if (x->numel == 0)
        return NB_OK;
    bool fl = nb_dtype_is_float(x->dtype);
    nb_err e = NB_OK;
    fbuf xb = {NULL, false}, yb = {NULL, false};
    int64_t *xi = NULL, *yi = NULL;
    void *acc = xalloc(inner, 8);
    if (!acc)
        return nomem(k->st);
    if (fl) {
        if (!(e = fbuf_in(x, &xb, k->st)))
            e = fbuf_out(y, &yb, k->st);
    } else {
        xi = xalloc(x->numel, sizeof *xi);
        yi = xalloc(x->numel, sizeof *yi);
        if (!xi || !yi)
            e = nomem(k->st);
        else
            to_i64(x, xi, false);
    }
    for (int64_t o = 0; o < outer && !e; o++) {
        if (fl)
            memset(acc, 0, sizeof(float) * (size_t)inner);
        else
            memset(acc, 0, sizeof(int64_t) * (size_t)inner);
        for (int64_t jj = 0; jj < n; jj++) {
            int64_t j = rev ? n - 1 - jj : jj;
            int64_t off = (o * n + j) * inner;
            if (fl) {
                float *a = acc;
                const float *xp = xb.p + off;
                float *yp = yb.p + off;
                if (excl)
                    for (int64_t i = 0; i < inner; i++) {
                        yp[i] = a[i];
                        a[i] += xp[i];
                    }
                else
                    for (int64_t i = 0; i < inner; i++) {
                        a[i] += xp[i];
                        yp[i] = a[i];
                    }
            } else {
                int64_t *a = acc;
                const int64_t *xp = xi + off;
                int64_t *yp = yi + off;
                for (int64_t i = 0; i < inner; i++) {
                    int64_t s = (int64_t)((uint64_t)a[i] + (uint64_t)xp[i]);
                    yp[i] = excl ? a[i] : s;
                    a[i] = s;
                }
            }
        }
    }
    if (!e) {
        if (fl)
            fbuf_store(y, &yb, false);
        else
            from_i64(y, yi, false);
    }
    free(acc);
    free(xi);
    free(yi);
    fbuf_free(&xb);
    fbuf_free(&yb);
    return e;
}

/* ---------------------------------------------------------------- TopK */

/* Stable bottom-up merge sort of the indices a[0..n) by key v (BEFORE(p, q): p goes first);
 * b is scratch of n. */
#define DEFINE_MSORT(NAME, KT, BEFORE)                                                \
    static void NAME(const KT *v, int64_t *a, int64_t *b, int64_t n)                  \
    {                                                                                 \
        int64_t *src = a, *dst = b;                                                   \
        for (int64_t w = 1; w < n; w *= 2) {                                          \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                               \
                int64_t mid = lo + w < n ? lo + w : n;                                \
                int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                         \
                int64_t i = lo, j = mid, o = lo;                                      \
                while (i < mid && j < hi) {                                           \
                    KT p = v[src[j]], q = v[src[i]];                                  \
                    dst[o++] = (BEFORE(p, q)) ? src[j++] : src[i++];                  \
                }                                                                     \
                while (i < mid)                                                       \
                    dst[o++] = src[i++];                                              \
                while (j < hi)                                                        \
                    dst[o++] = src[j++];                                              \
            }                                                                         \
            int64_t *t = src;                                                         \
            src = dst;                                                                \
            dst = t;                                                                  \
        }                                                                             \
        if (src != a)                                                                 \
            memcpy(a, src, sizeof(int64_t) * (size_t)n);                              \
    }
/* NaN counts as the largest value (first when largest, last when smallest). */
#define F_GT(p, q) ((p) > (q) || ((p) != (p) && (q) == (q)))
#define F_LT(p, q) ((p) < (q) || ((q) != (q) && (p) == (p)))
#define I_GT(p, q) ((p) > (q))
#define I_LT(p, q) ((p) < (q))
DEFINE_MSORT(msort_f_desc, float, F_GT)
DEFINE_MSORT(msort_f_asc, float, F_LT)
DEFINE_MSORT(msort_i_desc, int64_t, I_GT)
DEFINE_MSORT(msort_i_asc, int64_t, I_LT)

/* TopK (opset 1-11): the K largest (largest=1) or smallest elements along axis, sorted,
 * equal values in index order; outputs the values and their INT64 indices. */
static nb_err k_topk(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *yv = k->out[0], *yi = k->n_out > 1 ? k->out[1] : NULL;
    int axis = norm_axis(nb_attr_int(k->node, "axis", -1), x->rank);
    bool largest = nb_attr_int(k->node, "largest", 1) != 0;
    int64_t K = k->opset >= 10 ? nb_tensor_get_i64(k->in[1], 0) : nb_attr_int(k->node, "k", 0);
    int64_t outer, n, inner;
    split_axis(x, axis, &outer, &n, &inner);
    if (K == 0 || x->numel == 0)
        return NB_OK;
    bool fl = nb_dtype_is_float(x->dtype);
    nb_err e = NB_OK;
    fbuf xb = {NULL, false}, vb = {NULL, false};
    int64_t *xi = NULL, *vi = NULL;
    float *kf = NULL;
    int64_t *ki = NULL;
    int64_t *ix = xalloc(n, sizeof *ix), *tmp = xalloc(n, sizeof *tmp);
    if (!ix || !tmp) {
        e = nomem(k->st);
    } else if (fl) {
        kf = xalloc(n, sizeof *kf);
        if (!kf)
            e = nomem(k->st);
        else if (!(e = fbuf_in(x, &xb, k->st)) && yv)
            e = fbuf_out(yv, &vb, k->st);
    } else {
        ki = xalloc(n, sizeof *ki);
        xi = xalloc(x->numel, sizeof *xi);
        vi = xalloc(yv ? yv->numel : 1, sizeof *vi);
        if (!ki || !xi || !vi)
            e = nomem(k->st);
        else
            to_i64(x, xi, true);
    }
    for (int64_t o = 0; o < outer && !e; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, obase = o * K * inner + i;
            for (int64_t j = 0; j < n; j++)
                ix[j] = j;
            if (fl) {
                for (int64_t j = 0; j < n; j++)
                    kf[j] = xb.p[base + j * inner];
                (largest ? msort_f_desc : msort_f_asc)(kf, ix, tmp, n);
                if (vb.p)
                    for (int64_t t = 0; t < K; t++)
                        vb.p[obase + t * inner] = kf[ix[t]];
            } else {
                for (int64_t j = 0; j < n; j++)
                    ki[j] = xi[base + j * inner];
                (largest ? msort_i_desc : msort_i_asc)(ki, ix, tmp, n);
                for (int64_t t = 0; t < K; t++)
                    vi[obase + t * inner] = ki[ix[t]];
            }
            if (yi)
                for (int64_t t = 0; t < K; t++)
                    ((int64_t *)yi->data)[obase + t * inner] = ix[t];
        }
    if (!e && yv) {
        if (fl)
            fbuf_store(yv, &vb, false);
        else
            from_i64(yv, vi, true);
    }
    free(ix);
    free(tmp);
    free(kf);
    free(ki);
    free(xi);
    free(vi);
    fbuf_free(&xb);
    fbuf_free(&vb);
    return e;
}

/* ---------------------------------------------------------------- Resize, Upsample */

enum { RM_NEAREST, RM_LINEAR, RM_CUBIC };
enum { CT_HALF, CT_HALF_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP };
enum { NM_RPF, NM_RPC, NM_FLOOR, NM_CEIL, NM_LEGACY };

typedef struct rsz {
    int mode, ctm, nm;
    bool antialias, exclude;
    double A, extrap;
} rsz;

/* Interpolation taps of one axis: for each output index, n input indices (clamped to the
 * axis: edge padding) and weights; outside[j] (tf_crop_and_resize) marks outputs that take
 * extrapolation_value. */
typedef struct rtaps {
    int64_t n;
    int64_t *idx;
    double *w;
    uint8_t *outside;
    bool identity;
} rtaps;

static double cubic_w(double x, double A)
{
    x = fabs(x);
    if (x <= 1)
        return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2)
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* Builds the taps of an axis of in -> out elements with scale (out/in or the given scale) and
 * lw = scale * in (the "output_width" of the ONNX reference), following
 * onnx/reference/ops/op_resize.py: x_original from the coordinate transformation mode,
 * ratio in (0, 1] from its floor, neighbours taken in edge-padded data. */
static nb_err resize_taps(const rsz *z, int64_t in, int64_t out, double scale, double lw,
                          double rs, double re, rtaps *t, nb_status *st)
{
    int64_t n;
    double s_aa = scale < 1 ? scale : 1;
    int64_t start;
    if (z->mode == RM_NEAREST) {
        n = 1;
        start = 0;
    } else if (z->mode == RM_LINEAR) {
        start = z->antialias ? (int64_t)floor(-1.0 / s_aa) + 1 : 0;
        n = 2 - 2 * start;
    } else {
        start = z->antialias ? (int64_t)floor(-2.0 / s_aa) + 1 : -1;
        n = 2 - 2 * start;
    }
    /* antialiased taps span about 2/scale (linear) or 4/scale (cubic) inputs */
    int64_t total;
    if ((n > 4 * in + 16 && n > 16) || !nb_mul_ok(out, n, &total) ||
        total > NB_MAX_TENSOR_BYTES / (int64_t)sizeof(double))
        return nb_fail(st, NB_ERR_SHAPE, "resize scale %g is too small", scale);
    t->n = n;
    t->idx = xalloc(out * n, sizeof *t->idx);
    t->w = xalloc(out * n, sizeof *t->w);
    t->outside = z->ctm == CT_CROP ? xalloc(out, 1) : NULL;
    if (!t->idx || !t->w || (z->ctm == CT_CROP && !t->outside))
        return nomem(st);
    bool ident = in == out;
    for (int64_t x = 0; x < out; x++) {
        double xo, xd = (double)x, ind = (double)in;
        int64_t *ix = t->idx + x * n;
        double *w = t->w + x * n;
        switch (z->ctm) {
        case CT_HALF_SYM: {
            double adj = (double)out / lw, off = ind / 2 * (1 - adj);
            xo = off + (xd + 0.5) / scale - 0.5;
            break;
        }
        case CT_PYTORCH: xo = out > 1 ? (xd + 0.5) / scale - 0.5 : 0; break;
        case CT_ALIGN: xo = lw == 1 || x == 0 ? 0 : xd * (ind - 1) / (lw - 1); break;
        case CT_ASYM: xo = xd / scale; break;
        case CT_TF_NN: xo = (xd + 0.5) / scale; break;
        case CT_CROP:
            xo = lw == 1 ? (re - rs) * (ind - 1) / 2 : xd * (re - rs) * (ind - 1) / (lw - 1);
            xo += rs * (ind - 1);
            break;
        default: xo = (xd + 0.5) / scale - 0.5; break;
        }
        if (t->outside) {
            t->outside[x] = xo < 0 || xo > ind - 1 || isnan(xo);
            if (t->outside[x]) {
                for (int64_t j = 0; j < n; j++) {
                    ix[j] = 0;
                    w[j] = 0;
                }
                ident = false;
                continue;
            }
        }
        if (!isfinite(xo))
            xo = 0;
        double fl = floor(xo), ratio;
        int64_t base;
        if (xo == fl) {
            ratio = 1;
            base = (int64_t)fl - 1;
        } else {
            ratio = xo - fl;
            base = (int64_t)fl;
        }
        if (z->mode == RM_NEAREST) {
            bool up;
            switch (z->nm) {
            case NM_RPC: up = ratio >= 0.5; break;
            case NM_FLOOR: up = ratio == 1; break;
            case NM_CEIL: up = true; break;
            case NM_LEGACY: up = scale < 1 || ratio == 1; break; /* ceil when downsampling */
            default: up = ratio > 0.5; break;
            }
            ix[0] = up ? base + 1 : base;
            w[0] = 1;
        } else if (!z->antialias && z->mode == RM_LINEAR) {
            ix[0] = base;
            ix[1] = base + 1;
            w[0] = 1 - ratio;
            w[1] = ratio;
        } else if (!z->antialias) {
            double A = z->A;
            for (int64_t j = 0; j < 4; j++)
                ix[j] = base - 1 + j;
            w[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
            w[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
            w[2] = ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1;
            w[3] = ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) *
                       ((1 - ratio) + 1) - 4 * A;
        } else {
            double sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double arg = ((double)(start + j) - ratio) * s_aa, c;
                if (z->mode == RM_LINEAR) {
                    c = 1 - fabs(arg);
                    c = c < 0 ? 0 : c > 1 ? 1 : c;
                } else {
                    c = cubic_w(arg, z->A);
                }
                ix[j] = base + start + j;
                w[j] = c;
                sum += c;
            }
            for (int64_t j = 0; j < n; j++)
                w[j] /= sum;
        }
        if (z->exclude) {
            double sum = 0;
            for (int64_t j = 0; j < n; j++) {
                if (ix[j] < 0 || ix[j] >= in)
                    w[j] = 0;
                sum += w[j];
            }
            if (sum != 0)
                for (int64_t j = 0; j < n; j++)
                    w[j] /= sum;
        }
        for (int64_t j = 0; j < n; j++) {
            ix[j] = ix[j] < 0 ? 0 : ix[j] >= in ? in - 1 : ix[j];
            if (w[j] != 0 && (w[j] != 1 || ix[j] != x))
                ident = false;
        }
    }
    t->identity = ident;
    return NB_OK;
}

static void rtaps_free(rtaps *t)
{
    free(t->idx);
    free(t->w);
    free(t->outside);
}

/* The interpolation attributes of a Resize / Upsample node (legacy: Upsample or opset < 11,
 * asymmetric coordinates and the legacy nearest rounding) into z. */
static void resize_attrs(const nb_node *nd, bool legacy, rsz *z)
{
    const char *mode = nb_attr_str(nd, "mode", "nearest");
    const char *ctm = nb_attr_str(nd, "coordinate_transformation_mode", "half_pixel");
    const char *nm = nb_attr_str(nd, "nearest_mode", "round_prefer_floor");
    z->mode = !strcmp(mode, "cubic") ? RM_CUBIC : !strcmp(mode, "nearest") ? RM_NEAREST : RM_LINEAR;
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize"};
    z->ctm = CT_HALF;
    for (int i = 0; i < 7; i++)
        if (!strcmp(ctm, ctms[i]))
            z->ctm = i;
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    z->nm = NM_RPF;
    for (int i = 0; i < 4; i++)
        if (!strcmp(nm, nms[i]))
            z->nm = i;
    if (legacy) {
        z->ctm = CT_ASYM;
        z->nm = NM_LEGACY;
    }
    z->antialias = !legacy && z->mode != RM_NEAREST && nb_attr_int(nd, "antialias", 0) != 0;
    z->exclude = !legacy && nb_attr_int(nd, "exclude_outside", 0) != 0;
    z->A = nb_attr_float(nd, "cubic_coeff_a", -0.75f);
    z->extrap = nb_attr_float(nd, "extrapolation_value", 0.0f);
}

/* Per axis of x: the scale sc, the scaled length lw (input length x scale) and the crop
 * roi start rs and end re (tf_crop_and_resize), from scales (a tensor, or sattr's nsattr
 * floats) or sizes (with keep_aspect_ratio_policy) over the axes (opset 18, else all). */
typedef struct rgeom {
    double sc[NB_MAX_RANK], lw[NB_MAX_RANK], rs[NB_MAX_RANK], re[NB_MAX_RANK];
} rgeom;

static void resize_geometry(const nb_kctx *k, bool legacy, const rsz *z, const nb_tensor *roi,
                            const nb_tensor *scales, const float *sattr,
                            const nb_tensor *sizes, rgeom *g)
{
    const nb_tensor *x = k->in[0];
    const nb_node *nd = k->node;
    int r = x->rank;
    const char *pol = nb_attr_str(nd, "keep_aspect_ratio_policy", "stretch");
    double *sc = g->sc, *lw = g->lw, *rs = g->rs, *re = g->re;
    /* axes (opset 18) */
    int axes[NB_MAX_RANK], na = r;
    int nax = 0;
    const int64_t *ax = legacy || k->opset < 18 ? NULL : nb_attr_ints(nd, "axes", &nax);
    if (ax) {
        na = nax;
        for (int i = 0; i < na; i++)
            axes[i] = norm_axis(ax[i], r);
    } else {
        for (int i = 0; i < r; i++)
            axes[i] = i;
    }
    for (int d = 0; d < r; d++) {
        sc[d] = 1;
        lw[d] = (double)x->dims[d];
        rs[d] = 0;
        re[d] = 1;
    }
    if (scales || sattr) {
        for (int i = 0; i < na; i++) {
            int d = axes[i];
            sc[d] = scales ? ((const float *)scales->data)[i] : sattr[i];
            lw[d] = sc[d] * (double)x->dims[d];
        }
    } else if (sizes) {
        const int64_t *sz = sizes->data;
        if (!strcmp(pol, "stretch")) {
            for (int i = 0; i < na; i++) {
                int d = axes[i];
                sc[d] = x->dims[d] ? (double)sz[i] / (double)x->dims[d] : 1;
                lw[d] = (double)sz[i];
            }
        } else {
            double s = 0;
            bool first = true;
            for (int i = 0; i < na; i++) {
                int64_t in = x->dims[axes[i]];
                if (!in)
                    continue;
                double q = (double)sz[i] / (double)in;
                if (first || (!strcmp(pol, "not_larger") ? q < s : q > s))
                    s = q;
                first = false;
            }
            for (int i = 0; i < na; i++) {
                sc[axes[i]] = s;
                lw[axes[i]] = s * (double)x->dims[axes[i]];
            }
        }
    }
    if (z->ctm == CT_CROP && roi)
        for (int i = 0; i < na && na + i < roi->numel; i++) {
            rs[axes[i]] = nb_tensor_get_f64(roi, i);
            re[axes[i]] = nb_tensor_get_f64(roi, na + i);
        }
}

/* One axis's interpolation: src [outer, in, inner] -> dst [outer, out, inner] with the
 * axis's taps t, extrap for the outputs outside the crop. */
static void resize_axis(const rtaps *t, double extrap, const double *cur, double *nxt,
                        int64_t outer, int64_t in, int64_t out, int64_t inner)
{
    int64_t n = t->n;
    for (int64_t o = 0; o < outer; o++) {
        const double *src = cur + o * in * inner;
        double *dst = nxt + o * out * inner;
        for (int64_t j = 0; j < out; j++) {
            double *yr = dst + j * inner;
            const int64_t *ix = t->idx + j * n;
            const double *w = t->w + j * n;
            if (t->outside && t->outside[j]) {
                for (int64_t i = 0; i < inner; i++)
                    yr[i] = extrap;
            } else if (inner == 1) {
                double s = 0;
                for (int64_t q = 0; q < n; q++)
                    s += w[q] * src[ix[q]];
                yr[0] = s;
            } else {
                for (int64_t i = 0; i < inner; i++)
                    yr[i] = 0;
                for (int64_t q = 0; q < n; q++) {
                    double wq = w[q];
                    const double *xr = src + ix[q] * inner;
                    for (int64_t i = 0; i < inner; i++)
                        yr[i] += wq * xr[i];
                }
            }
        }
    }
}

/* Resize (opset 10-18) and Upsample (opset 7-9): separable interpolation, one axis at a
 * time from the last to the first (the nesting order of the ONNX reference), in double.
 * Upsample and Resize-10 use asymmetric coordinates and nearest = floor (ceil when
 * downsampling, as ONNX Runtime). Integer data is rounded to nearest. */
static nb_err k_resize(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    const nb_node *nd = k->node;
    bool legacy = !strcmp(nd->op_type, "Upsample") || k->opset < 11;
    int r = x->rank;
    const nb_tensor *roi = NULL, *scales = NULL, *sizes = NULL;
    const float *sattr = NULL;
    int nsattr = 0;
    if (legacy) {
        if (k->n_in > 1)
            scales = k->in[1];
        else
            sattr = nb_attr_floats(nd, "scales", &nsattr);
    } else {
        roi = k->n_in > 1 ? k->in[1] : NULL;
        scales = k->n_in > 2 ? k->in[2] : NULL;
        sizes = k->n_in > 3 ? k->in[3] : NULL;
    }
    if (scales && scales->numel == 0)
        scales = NULL;
    if (sizes && sizes->numel == 0)
        sizes = NULL;
    rsz z;
    resize_attrs(nd, legacy, &z);
    if (y->numel == 0)
        return NB_OK;
    rgeom g;
    resize_geometry(k, legacy, &z, roi, scales, sattr, sizes, &g);
    /* taps of every axis */
    rtaps taps[NB_MAX_RANK];
    memset(taps, 0, sizeof taps);
    nb_err e = NB_OK;
    for (int d = 0; d < r && !e; d++)
        e = resize_taps(&z, x->dims[d], y->dims[d], g.sc[d], g.lw[d], g.rs[d], g.re[d],
                        &taps[d], k->st);
    double *cur = NULL, *nxt = NULL;
    int64_t cdims[NB_MAX_RANK];
    memcpy(cdims, x->dims, sizeof(int64_t) * (size_t)r);
    if (!e && !(cur = xalloc(x->numel, sizeof *cur)))
        e = nomem(k->st);
    if (!e)
        to_f64(x, cur);
    for (int d = r - 1; d >= 0 && !e; d--) {
        const rtaps *t = &taps[d];
        if (t->identity)
            continue;
        int64_t outer = 1, inner = 1, in = cdims[d], out = y->dims[d], total;
        for (int i = 0; i < d; i++)
            outer *= cdims[i];
        for (int i = d + 1; i < r; i++)
            inner *= cdims[i];
        if (!nb_mul_ok(outer, out, &total) || !nb_mul_ok(total, inner, &total) ||
            total > NB_MAX_TENSOR_BYTES / (int64_t)sizeof(double)) {
            e = nb_fail(k->st, NB_ERR_SHAPE, "resize intermediate is too large");
            break;
        }
        if (!(nxt = xalloc(total, sizeof *nxt))) {
            e = nomem(k->st);
            break;
        }
        resize_axis(t, z.extrap, cur, nxt, outer, in, out, inner);
        free(cur);
        cur = nxt;
        nxt = NULL;
        cdims[d] = out;
    }
    if (!e)
        from_f64(y, cur, true);
    free(cur);
    for (int d = 0; d < r; d++)
        rtaps_free(&taps[d]);
    return e;
}

const nb_kernel_entry nb_kernels_norm[] = {
    {"ArgMax", k_argminmax, 0},
    {"ArgMin", k_argminmax, 0},
    {"BatchNormalization", k_batchnorm, 0},
    {"CumSum", k_cumsum, 0},
    {"GroupNormalization", k_groupnorm, 0},
    {"Hardmax", k_softmax, 0},
    {"InstanceNormalization", k_instancenorm, 0},
    {"LayerNormalization", k_layernorm, 0},
    {"LogSoftmax", k_softmax, 0},
    {"LRN", k_lrn, 0},
    {"MeanVarianceNormalization", k_mvn, 0},
    {"ReduceL1", k_reduce, 0},
    {"ReduceL2", k_reduce, 0},
    {"ReduceLogSum", k_reduce, 0},
    {"ReduceLogSumExp", k_reduce, 0},
    {"ReduceMax", k_reduce, 0},
    {"ReduceMean", k_reduce, 0},
    {"ReduceMin", k_reduce, 0},
    {"ReduceProd", k_reduce, 0},
    {"ReduceSum", k_reduce, 0},
    {"ReduceSumSquare", k_reduce, 0},
    {"Resize", k_resize, 0},
    {"Softmax", k_softmax, 0},
    {"TopK", k_topk, 0},
    {"Upsample", k_resize, 0},
    {NULL, NULL, 0},
};
