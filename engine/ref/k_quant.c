/* nanobench: reference kernels of quantization operators (ONNX Operators.md, opset 10-18):
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
 * ConvInteger, QLinearConv.
 *
 * Integer products are exact and accumulate modulo 2^32 (the int32 accumulator of the
 * spec: "accumulation may overflow if and only if in 32 bits"). Requantization follows
 * ONNX Runtime: the multiplier a_scale * b_scale / y_scale is computed in float32, then
 * y = saturate(round_half_even(float(acc) * multiplier) + y_zero_point). Quantization is
 * saturate(round_half_even(x / scale) + zero_point) in float32; NaN quantizes to 0 (what
 * ONNX Runtime produces on x86).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

/* ---------------------------------------------------------------- element helpers */

static void q_range(nb_dtype t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case NB_INT8: *lo = -128, *hi = 127; break;
    case NB_UINT16: *lo = 0, *hi = 65535; break;
    case NB_INT16: *lo = -32768, *hi = 32767; break;
    case NB_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    default: *lo = 0, *hi = 255; break;
    }
}

/* v (an integer-valued float) saturated to [lo, hi]; NaN gives 0. */
static inline int32_t q_sat(float v, int32_t lo, int32_t hi)
{
    if (v != v)
        return 0 < lo ? lo : 0 > hi ? hi : 0;
    if (v <= (float)lo)
        return lo;
    if (v >= (float)hi)
        return hi;
    return (int32_t)v;
}

/* Element i of an integer tensor as int32. */
static inline int32_t q_load(const nb_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case NB_UINT8: return ((const uint8_t *)t->data)[i];
    case NB_INT8: return ((const int8_t *)t->data)[i];
    case NB_UINT16: return ((const uint16_t *)t->data)[i];
    case NB_INT16: return ((const int16_t *)t->data)[i];
    case NB_INT32: return ((const int32_t *)t->data)[i];
    default: return (int32_t)nb_tensor_get_i64(t, i);
    }
}

/* Stores an already saturated value. */
static inline void q_store(nb_tensor *t, int64_t i, int32_t v)
{
    switch (t->dtype) {
    case NB_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case NB_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case NB_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    case NB_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
    case NB_INT32: ((int32_t *)t->data)[i] = v; break;
    default: break;
    }
}

/* Element i of a FLOAT / FLOAT16 tensor. */
static inline float f_load(const nb_tensor *t, int64_t i)
{
    return t->dtype == NB_FLOAT ? ((const float *)t->data)[i] : (float)nb_tensor_get_f64(t, i);
}

/* Writes a FLOAT or FLOAT16 (rounded to nearest even) element. */
static inline void f_store(nb_tensor *t, int64_t i, float v)
{
    if (t->dtype == NB_FLOAT)
        ((float *)t->data)[i] = v;
    else
        ((uint16_t *)t->data)[i] = nb_float_to_half(v);
}

/* saturate(round_half_even(v) + zp) */
static inline int32_t q_round(float v, int32_t zp, int32_t lo, int32_t hi)
{
    return q_sat(nearbyintf(v) + (float)zp, lo, hi);
}

/* Optional input i, NULL when omitted. */
static const nb_tensor *opt_in(const nb_kctx *k, int i) { return i < k->n_in ? k->in[i] : NULL; }

/* ---------------------------------------------------------------- Quantize / Dequantize */

/* Per-tensor or per-axis layout of a scale: element i of x uses parameter
 * (i / inner) % count. */
typedef struct axis_map {
    int64_t count, inner;
} axis_map;

/* Per tensor (one element) or per axis (1-D, length dims[axis], axis default 1) layout of a
 * Quantize/DequantizeLinear scale; the zero point has the scale's size (Operators.md, opset 13). */
static nb_err axis_setup(nb_kctx *k, const nb_tensor *x, const nb_tensor *s, const nb_tensor *zp,
                         axis_map *m)
{
    m->count = 1;
    m->inner = x->numel ? x->numel : 1;
    if (zp && zp->numel != s->numel)
        return nb_fail(k->st, NB_ERR_SHAPE, "scale and zero point sizes differ");
    if (s->numel == 1)
        return NB_OK;
    if (s->rank != 1)
        return nb_fail(k->st, NB_ERR_SHAPE, "scale must be a scalar or a 1-D tensor");
    int axis;
    nb_err e = nb_norm_axis(nb_attr_int(k->node, "axis", 1), x->rank, &axis, "axis", k->st);
    if (e)
        return e;
    if (x->dims[axis] != s->numel)
        return nb_fail(k->st, NB_ERR_SHAPE, "scale has %lld elements, x has %lld along axis %d",
                       (long long)s->numel, (long long)x->dims[axis], axis);
    m->count = s->numel;
    m->inner = 1;
    for (int d = axis + 1; d < x->rank; d++)
        m->inner *= x->dims[d];
    return NB_OK;
}

/* QuantizeLinear (Operators.md, opset 10/13): y = saturate(round(x / y_scale) + y_zero_point),
 * round half to even, per tensor or per axis. */
static nb_err k_QuantizeLinear(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *s = k->in[1], *zp = opt_in(k, 2);
    nb_tensor *y = k->out[0];
    axis_map m;
    nb_err e = axis_setup(k, x, s, zp, &m);
    if (e)
        return e;
    int32_t lo, hi;
    q_range(y->dtype, &lo, &hi);
    if (m.inner == 0)
        return NB_OK;
    for (int64_t i = 0, blk = 0; i < x->numel; i += m.inner, blk++) {
        int64_t p = blk % m.count;
        float sc = f_load(s, p);
        int32_t z = zp ? q_load(zp, p) : 0;
        int64_t end = i + m.inner;
        if (x->dtype == NB_FLOAT && y->dtype == NB_UINT8) {
            const float *xd = x->data;
            uint8_t *yd = y->data;
            for (int64_t j = i; j < end; j++)
                yd[j] = (uint8_t)q_round(xd[j] / sc, z, lo, hi);
        } else if (x->dtype == NB_FLOAT && y->dtype == NB_INT8) {
            const float *xd = x->data;
            int8_t *yd = y->data;
            for (int64_t j = i; j < end; j++)
                yd[j] = (int8_t)q_round(xd[j] / sc, z, lo, hi);
        } else {
            for (int64_t j = i; j < end; j++) {
                float xv = x->dtype == NB_INT32 ? (float)((const int32_t *)x->data)[j]
                                                : f_load(x, j);
                q_store(y, j, q_round(xv / sc, z, lo, hi));
            }
        }
    }
    return NB_OK;
}

/* DequantizeLinear (Operators.md, opset 10/13): y = (x - x_zero_point) * x_scale, per tensor
 * or per axis. */
static nb_err k_DequantizeLinear(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *s = k->in[1], *zp = opt_in(k, 2);
    nb_tensor *y = k->out[0];
    axis_map m;
    nb_err e = axis_setup(k, x, s, zp, &m);
    if (e)
        return e;
    if (m.inner == 0)
        return NB_OK;
    for (int64_t i = 0, blk = 0; i < x->numel; i += m.inner, blk++) {
        int64_t p = blk % m.count;
        float sc = f_load(s, p);
        int64_t z = zp ? q_load(zp, p) : 0;
        for (int64_t j = i; j < i + m.inner; j++)
            f_store(y, j, (float)((int64_t)q_load(x, j) - z) * sc);
    }
    return NB_OK;
}

/* DynamicQuantizeLinear (Operators.md, opset 11): range [min(0, min x), max(0, max x)],
 * y_scale = range / 255, y_zero_point = round(saturate(0 - min / y_scale)),
 * y = saturate(round(x / y_scale) + y_zero_point), uint8. An all-zero range takes scale 1
 * (as ONNX Runtime) instead of dividing by zero. */
static nb_err k_DynamicQuantizeLinear(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    nb_tensor *ys = k->n_out > 1 ? k->out[1] : NULL, *yz = k->n_out > 2 ? k->out[2] : NULL;
    float mn = 0.0f, mx = 0.0f;
    for (int64_t i = 0; i < x->numel; i++) {
        float v = f_load(x, i);
        if (!isfinite(v))
            return nb_fail(k->st, NB_ERR_DATA, "input holds %s at element %" PRId64 ": there is "
                           "no finite range to quantize", v != v ? "NaN" : "Inf", i);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    if (!isfinite(scale)) /* max - min beyond FLT_MAX */
        return nb_fail(k->st, NB_ERR_DATA, "input range [%g, %g] is beyond float32",
                       (double)mn, (double)mx);
    int32_t zp = q_sat(nearbyintf(0.0f - mn / scale), 0, 255);
    if (y) {
        uint8_t *yd = y->data;
        for (int64_t i = 0; i < x->numel; i++)
            yd[i] = (uint8_t)q_round(f_load(x, i) / scale, zp, 0, 255);
    }
    if (ys)
        ((float *)ys->data)[0] = scale;
    if (yz)
        ((uint8_t *)yz->data)[0] = (uint8_t)zp;
    return NB_OK;
}

/* ---------------------------------------------------------------- matmul */

/* Geometry of numpy.matmul over A [..., M, K] and B [..., K, N] (1-D operands promoted). */
typedef struct mm_geom {
    int64_t M, K, N;
    int64_t na, nb, ny;      /* batch counts of A, B, Y */
    int64_t *aidx, *bidx;    /* per Y batch: batch index into A and B */
} mm_geom;

/* numpy.matmul geometry, and the A / B batch of every output batch (broadcast). */
static nb_err mm_setup(nb_kctx *k, const nb_tensor *A, const nb_tensor *B, const nb_tensor *Y,
                       mm_geom *g)
{
    memset(g, 0, sizeof *g);
    if (A->rank < 1 || B->rank < 1)
        return nb_fail(k->st, NB_ERR_SHAPE, "matmul operands must have rank >= 1");
    g->K = A->dims[A->rank - 1];
    g->M = A->rank >= 2 ? A->dims[A->rank - 2] : 1;
    int64_t kb = B->rank >= 2 ? B->dims[B->rank - 2] : B->dims[0];
    g->N = B->rank >= 2 ? B->dims[B->rank - 1] : 1;
    if (kb != g->K)
        return nb_fail(k->st, NB_ERR_SHAPE, "inner dims differ (%lld and %lld)",
                       (long long)g->K, (long long)kb);
    nb_tensor va, vb;
    memset(&va, 0, sizeof va);
    memset(&vb, 0, sizeof vb);
    va.rank = A->rank > 2 ? A->rank - 2 : 0;
    vb.rank = B->rank > 2 ? B->rank - 2 : 0;
    memcpy(va.dims, A->dims, sizeof(int64_t) * (size_t)va.rank);
    memcpy(vb.dims, B->dims, sizeof(int64_t) * (size_t)vb.rank);
    int r;
    int64_t bd[NB_MAX_RANK];
    nb_err e = nb_broadcast_shape(va.rank, va.dims, vb.rank, vb.dims, &r, bd, k->st);
    if (e)
        return e;
    g->na = g->nb = g->ny = 1;
    bool ok = true;
    for (int d = 0; d < va.rank; d++)
        ok &= nb_mul_ok(g->na, va.dims[d], &g->na);
    for (int d = 0; d < vb.rank; d++)
        ok &= nb_mul_ok(g->nb, vb.dims[d], &g->nb);
    for (int d = 0; d < r; d++)
        ok &= nb_mul_ok(g->ny, bd[d], &g->ny);
    int64_t want = -1;
    if (!ok || !nb_mul_ok(g->ny, g->M, &want) || !nb_mul_ok(want, g->N, &want) || want != Y->numel)
        return nb_fail(k->st, NB_ERR_SHAPE, "output has %lld elements, expected %lld",
                       (long long)Y->numel, (long long)want);
    if (want == 0)
        return NB_OK; /* nothing to compute (run_matmul returns on an empty Y) */
    g->aidx = malloc(sizeof(int64_t) * (size_t)(g->ny + 1));
    g->bidx = malloc(sizeof(int64_t) * (size_t)(g->ny + 1));
    if (!g->aidx || !g->bidx) {
        free(g->aidx);
        free(g->bidx);
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    }
    nb_bcast it;
    nb_bcast_init(&it, r, bd, &va, &vb, NULL);
    for (int64_t i = 0; i < g->ny; i++, nb_bcast_next(&it)) {
        g->aidx[i] = it.oa;
        g->bidx[i] = it.ob;
    }
    return NB_OK;
}

/* Releases mm_setup's index arrays. */
static void mm_free(mm_geom *g)
{
    free(g->aidx);
    free(g->bidx);
}

/* Expands a per-row (row = true: A's [..., M, 1]) or per-column (B's [..., 1, N]) parameter
 * over the operand's batches: out[batch * L + i], L = M or N. One element is per tensor; a
 * 1-D tensor is per row / column for every batch; an N-D one broadcasts to the operand's
 * batch dims (Operators.md, MatMulInteger / QLinearMatMul). */
static nb_err expand_param(nb_kctx *k, const nb_tensor *p, const nb_tensor *op, bool row,
                           int64_t L, int64_t nbatch, const char *what, double **out)
{
    int64_t total;
    if (!nb_mul_ok(nbatch, L, &total) || total > NB_MAX_TENSOR_BYTES / (int64_t)sizeof(double))
        return nb_fail(k->st, NB_ERR_SHAPE, "%s: %lld x %lld parameters are too many", what,
                       (long long)nbatch, (long long)L);
    double *v = malloc(sizeof(double) * (size_t)(total ? total : 1));
    if (!v)
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    *out = v;
    if (!p) {
        for (int64_t i = 0; i < total; i++)
            v[i] = 0.0;
        return NB_OK;
    }
    if (p->numel == 1) {
        double x = nb_tensor_get_f64(p, 0);
        for (int64_t i = 0; i < total; i++)
            v[i] = x;
        return NB_OK;
    }
    /* target: operand shape with the reduced dim (K) set to 1 */
    nb_tensor tgt, pv;
    memset(&tgt, 0, sizeof tgt);
    pv = *p;
    if (op->rank == 1) {
        tgt.rank = 1;
        tgt.dims[0] = 1;
    } else {
        tgt.rank = op->rank;
        memcpy(tgt.dims, op->dims, sizeof(int64_t) * (size_t)op->rank);
        tgt.dims[op->rank - (row ? 1 : 2)] = 1;
    }
    if (p->rank == 1 && row) {
        pv.rank = 2;
        pv.dims[0] = p->dims[0];
        pv.dims[1] = 1;
    }
    bool ok = pv.rank <= tgt.rank;
    for (int d = 0; ok && d < pv.rank; d++) {
        int64_t pd = pv.dims[d], td = tgt.dims[tgt.rank - pv.rank + d];
        ok = pd == td || pd == 1;
    }
    if (!ok) {
        free(v);
        *out = NULL;
        return nb_fail(k->st, NB_ERR_SHAPE, "%s does not fit a per-%s parameter of its operand",
                       what, row ? "row" : "column");
    }
    nb_bcast it;
    nb_bcast_init(&it, tgt.rank, tgt.dims, &pv, NULL, NULL);
    for (int64_t i = 0; i < total; i++, nb_bcast_next(&it))
        v[i] = nb_tensor_get_f64(p, it.oa);
    return NB_OK;
}

/* int32 copy of an operand minus its expanded zero point. */
static nb_err sub_zp(nb_kctx *k, const nb_tensor *t, const double *zp, bool row, int64_t M,
                     int64_t K, int64_t N, int32_t **out)
{
    int32_t *v = malloc(sizeof(int32_t) * (size_t)(t->numel ? t->numel : 1));
    if (!v)
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    if (row) { /* A: [batch, M, K], zp [batch, M] */
        for (int64_t i = 0; i < t->numel; i++)
            v[i] = q_load(t, i) - (int32_t)zp[i / K];
    } else { /* B: [batch, K, N], zp [batch, N] */
        for (int64_t i = 0; i < t->numel; i++)
            v[i] = q_load(t, i) - (int32_t)zp[(i / (K * N)) * N + i % N];
    }
    (void)M;
    *out = v;
    return NB_OK;
}

/* Shared body of MatMulInteger and QLinearMatMul. With ys == NULL the int32 accumulators
 * are written; otherwise each is requantized with a_scale[row] * b_scale[col] / y_scale. */
static nb_err run_matmul(nb_kctx *k, const nb_tensor *A, const nb_tensor *azp,
                         const nb_tensor *as, const nb_tensor *B, const nb_tensor *bzp,
                         const nb_tensor *bs, const nb_tensor *ys, const nb_tensor *yzp,
                         nb_tensor *Y)
{
    mm_geom g;
    nb_err e = mm_setup(k, A, B, Y, &g);
    if (e)
        return e;
    if (Y->numel == 0)
        return NB_OK;
    double *za = NULL, *zb = NULL, *sa = NULL, *sb = NULL;
    int32_t *ai = NULL, *bi = NULL;
    uint32_t *acc = NULL;
    if ((e = expand_param(k, azp, A, true, g.M, g.na, "a_zero_point", &za)) ||
        (e = expand_param(k, bzp, B, false, g.N, g.nb, "b_zero_point", &zb)) ||
        (e = sub_zp(k, A, za, true, g.M, g.K, g.N, &ai)) ||
        (e = sub_zp(k, B, zb, false, g.M, g.K, g.N, &bi)))
        goto out;
    if (ys) {
        if ((e = expand_param(k, as, A, true, g.M, g.na, "a_scale", &sa)) ||
            (e = expand_param(k, bs, B, false, g.N, g.nb, "b_scale", &sb)))
            goto out;
        if (ys->numel != 1 || yzp->numel != 1) {
            e = nb_fail(k->st, NB_ERR_SHAPE, "y_scale and y_zero_point must be scalars");
            goto out;
        }
    }
    acc = malloc(sizeof(uint32_t) * (size_t)(g.N ? g.N : 1));
    if (!acc) {
        e = nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    int32_t lo = 0, hi = 0, yz = 0;
    float yscale = 1.0f;
    if (ys) {
        q_range(Y->dtype, &lo, &hi);
        yscale = f_load(ys, 0);
        yz = q_load(yzp, 0);
    }
    for (int64_t ob = 0; ob < g.ny; ob++) {
        const int32_t *a = ai + g.aidx[ob] * g.M * g.K;
        const int32_t *b = bi + g.bidx[ob] * g.K * g.N;
        for (int64_t i = 0; i < g.M; i++) {
            memset(acc, 0, sizeof(uint32_t) * (size_t)g.N);
            for (int64_t kk = 0; kk < g.K; kk++) {
                int32_t av = a[i * g.K + kk];
                if (!av)
                    continue;
                const int32_t *brow = b + kk * g.N;
                for (int64_t j = 0; j < g.N; j++)
                    acc[j] += (uint32_t)(av * brow[j]);
            }
            int64_t yo = (ob * g.M + i) * g.N;
            if (!ys) {
                int32_t *yd = Y->data;
                for (int64_t j = 0; j < g.N; j++)
                    yd[yo + j] = (int32_t)acc[j];
                continue;
            }
            float sai = (float)sa[g.aidx[ob] * g.M + i];
            const double *sbj = sb + g.bidx[ob] * g.N;
            for (int64_t j = 0; j < g.N; j++) {
                float mult = sai * (float)sbj[j] / yscale;
                q_store(Y, yo + j, q_round((float)(int32_t)acc[j] * mult, yz, lo, hi));
            }
        }
    }
out:
    free(za), free(zb), free(sa), free(sb), free(ai), free(bi), free(acc);
    mm_free(&g);
    return e;
}

/* MatMulInteger (Operators.md, opset 10): Y = (A - a_zero_point) * (B - b_zero_point), int32,
 * numpy.matmul shapes; zero points per tensor, per row of A, per column of B. */
static nb_err k_MatMulInteger(nb_kctx *k)
{
    return run_matmul(k, k->in[0], opt_in(k, 2), NULL, k->in[1], opt_in(k, 3), NULL, NULL,
                      NULL, k->out[0]);
}

/* QLinearMatMul (Operators.md, opset 10): y = saturate(round((a - a_zp) * (b - b_zp) *
 * (a_scale * b_scale / y_scale)) + y_zp). */
static nb_err k_QLinearMatMul(nb_kctx *k)
{
    return run_matmul(k, k->in[0], k->in[2], k->in[1], k->in[3], k->in[5], k->in[4], k->in[6],
                      k->in[7], k->out[0]);
}

/* ---------------------------------------------------------------- convolution */

#define CONV_SP 3

typedef struct conv_geom {
    int64_t N, C, M, group;
    int64_t in[CONV_SP], k[CONV_SP], out[CONV_SP], s[CONV_SP], d[CONV_SP], pb[CONV_SP];
} conv_geom;

/* Conv geometry (Operators.md, Conv): explicit pads, or auto_pad SAME_UPPER/SAME_LOWER
 * (total = max(0, (out - 1) * stride + (k - 1) * dilation + 1 - in), the odd one at the end
 * for SAME_UPPER, at the beginning for SAME_LOWER) or VALID. 1 to 3 spatial axes; missing
 * axes are size 1. */
static nb_err conv_setup(nb_kctx *k, const nb_tensor *x, const nb_tensor *w, const nb_tensor *y,
                         conv_geom *g)
{
    const nb_node *n = k->node;
    int sp = x->rank - 2;
    memset(g, 0, sizeof *g);
    if (sp < 1 || sp > CONV_SP || w->rank != x->rank || y->rank != x->rank)
        return nb_fail(k->st, NB_ERR_UNSUPPORTED, "convolution over %d spatial axes (1 to %d "
                       "are implemented)", sp, CONV_SP);
    int ns = 0, nd = 0, np = 0;
    const int64_t *strides = nb_attr_ints(n, "strides", &ns);
    const int64_t *dil = nb_attr_ints(n, "dilations", &nd);
    const int64_t *pads = nb_attr_ints(n, "pads", &np);
    const char *ap = nb_attr_str(n, "auto_pad", "NOTSET");
    bool upper = !strcmp(ap, "SAME_UPPER"), lower = !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID");
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->M = w->dims[0];
    g->group = nb_attr_int(n, "group", 1);
    if (g->group < 1 || g->M % g->group || w->dims[1] * g->group != g->C || y->dims[0] != g->N ||
        y->dims[1] != g->M)
        return nb_fail(k->st, NB_ERR_SHAPE, "channels of x, w and y do not agree with group");
    for (int i = 0; i < CONV_SP; i++) {
        if (i >= sp) {
            g->in[i] = g->k[i] = g->out[i] = g->s[i] = g->d[i] = 1;
            g->pb[i] = 0;
            continue;
        }
        g->in[i] = x->dims[2 + i];
        g->k[i] = w->dims[2 + i];
        g->out[i] = y->dims[2 + i];
        g->s[i] = strides && i < ns ? strides[i] : 1;
        g->d[i] = dil && i < nd ? dil[i] : 1;
        int64_t ext = (g->k[i] - 1) * g->d[i] + 1;
        if (upper || lower) {
            int64_t total = (g->out[i] - 1) * g->s[i] + ext - g->in[i];
            total = total < 0 ? 0 : total;
            g->pb[i] = upper ? total / 2 : total - total / 2;
        } else if (valid) {
            g->pb[i] = 0;
        } else {
            g->pb[i] = pads && i < np ? pads[i] : 0;
        }
        if (g->s[i] < 1 || g->d[i] < 1)
            return nb_fail(k->st, NB_ERR_ATTR, "strides and dilations must be >= 1");
    }
    return NB_OK;
}

/* Shared body of ConvInteger and QLinearConv: im2col of (x - x_zp) per image and group, then
 * exact integer products with (w - w_zp[m]) accumulated modulo 2^32 (plus the int32 bias B).
 * With ys == NULL the accumulators are written as int32; otherwise requantized with
 * x_scale * w_scale[m] / y_scale. */
static nb_err run_conv(nb_kctx *k, const nb_tensor *x, const nb_tensor *xzp,
                       const nb_tensor *xs, const nb_tensor *w, const nb_tensor *wzp,
                       const nb_tensor *ws, const nb_tensor *ys, const nb_tensor *yzp,
                       const nb_tensor *bias, nb_tensor *y)
{
    conv_geom g;
    nb_err e = conv_setup(k, x, w, y, &g);
    if (e)
        return e;
    if (y->numel == 0)
        return NB_OK;
    if (xzp && xzp->numel != 1)
        return nb_fail(k->st, NB_ERR_SHAPE, "x_zero_point must be a scalar");
    if ((wzp && wzp->numel != 1 && wzp->numel != g.M) || (ws && ws->numel != 1 && ws->numel != g.M))
        return nb_fail(k->st, NB_ERR_SHAPE, "w scale / zero point must be scalars or have one "
                       "value per output channel (%lld)", (long long)g.M);
    if (bias && bias->numel != g.M)
        return nb_fail(k->st, NB_ERR_SHAPE, "B must have one value per output channel");
    if (ys && (ys->numel != 1 || yzp->numel != 1 || xs->numel != 1))
        return nb_fail(k->st, NB_ERR_SHAPE, "x_scale, y_scale and y_zero_point must be scalars");
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group;
    const int64_t kvol = g.k[0] * g.k[1] * g.k[2], ospat = g.out[0] * g.out[1] * g.out[2];
    const int64_t ispat = g.in[0] * g.in[1] * g.in[2];
    const int64_t CK = Cg * kvol;
    int64_t colsz;
    if (!nb_mul_ok(CK, ospat, &colsz) || colsz > NB_MAX_TENSOR_BYTES / 4)
        return nb_fail(k->st, NB_ERR_SHAPE, "im2col buffer of %lld x %lld is too large",
                       (long long)CK, (long long)ospat);
    int32_t *col = malloc(sizeof(int32_t) * (size_t)(colsz ? colsz : 1));
    int32_t *wi = malloc(sizeof(int32_t) * (size_t)(w->numel ? w->numel : 1));
    uint32_t *acc = malloc(sizeof(uint32_t) * (size_t)(ospat ? ospat : 1));
    if (!col || !wi || !acc) {
        free(col), free(wi), free(acc);
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    }
    for (int64_t m = 0; m < g.M; m++) {
        int32_t z = wzp ? q_load(wzp, wzp->numel == 1 ? 0 : m) : 0;
        for (int64_t j = 0; j < CK; j++)
            wi[m * CK + j] = q_load(w, m * CK + j) - z;
    }
    const int32_t xz = xzp ? q_load(xzp, 0) : 0;
    int32_t lo = 0, hi = 0, yz = 0;
    float xscale = 1.0f, yscale = 1.0f;
    if (ys) {
        q_range(y->dtype, &lo, &hi);
        xscale = f_load(xs, 0);
        yscale = f_load(ys, 0);
        yz = q_load(yzp, 0);
    }
    for (int64_t nn = 0; nn < g.N; nn++) {
        for (int64_t gr = 0; gr < g.group; gr++) {
            /* im2col: col[(c * kvol + kidx) * ospat + o] = x - x_zp, 0 in the padding */
            int32_t *cp = col;
            for (int64_t c = 0; c < Cg; c++) {
                int64_t xbase = (nn * g.C + gr * Cg + c) * ispat;
                for (int64_t k0 = 0; k0 < g.k[0]; k0++)
                    for (int64_t k1 = 0; k1 < g.k[1]; k1++)
                        for (int64_t k2 = 0; k2 < g.k[2]; k2++)
                            for (int64_t o0 = 0; o0 < g.out[0]; o0++) {
                                int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
                                bool in0 = i0 >= 0 && i0 < g.in[0];
                                for (int64_t o1 = 0; o1 < g.out[1]; o1++) {
                                    int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                                    bool in1 = in0 && i1 >= 0 && i1 < g.in[1];
                                    int64_t rb = xbase + (i0 * g.in[1] + i1) * g.in[2];
                                    for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
                                        int64_t i2 = o2 * g.s[2] - g.pb[2] + k2 * g.d[2];
                                        *cp++ = in1 && i2 >= 0 && i2 < g.in[2]
                                                    ? q_load(x, rb + i2) - xz
                                                    : 0;
                                    }
                                }
                            }
            }
            for (int64_t mm = 0; mm < Mg; mm++) {
                int64_t m = gr * Mg + mm;
                uint32_t b0 = bias ? (uint32_t)q_load(bias, m) : 0u;
                for (int64_t o = 0; o < ospat; o++)
                    acc[o] = b0;
                const int32_t *wr = wi + m * CK;
                for (int64_t j = 0; j < CK; j++) {
                    int32_t wv = wr[j];
                    if (!wv)
                        continue;
                    const int32_t *cr = col + j * ospat;
                    for (int64_t o = 0; o < ospat; o++)
                        acc[o] += (uint32_t)(wv * cr[o]);
                }
                int64_t yo = (nn * g.M + m) * ospat;
                if (!ys) {
                    int32_t *yd = y->data;
                    for (int64_t o = 0; o < ospat; o++)
                        yd[yo + o] = (int32_t)acc[o];
                    continue;
                }
                float mult = xscale * f_load(ws, ws->numel == 1 ? 0 : m) / yscale;
                for (int64_t o = 0; o < ospat; o++)
                    q_store(y, yo + o, q_round((float)(int32_t)acc[o] * mult, yz, lo, hi));
            }
        }
    }
    free(col), free(wi), free(acc);
    return NB_OK;
}

/* ConvInteger (Operators.md, opset 10): y = Conv(x - x_zero_point, w - w_zero_point) in int32;
 * padding contributes x_zero_point (zero after the subtraction). */
static nb_err k_ConvInteger(nb_kctx *k)
{
    return run_conv(k, k->in[0], opt_in(k, 2), NULL, k->in[1], opt_in(k, 3), NULL, NULL, NULL,
                    NULL, k->out[0]);
}

/* QLinearConv (Operators.md, opset 10): y = saturate(round((Conv(x - x_zp, w - w_zp) + B) *
 * (x_scale * w_scale / y_scale)) + y_zp), w_scale / w_zp per tensor or per output channel. */
static nb_err k_QLinearConv(nb_kctx *k)
{
    return run_conv(k, k->in[0], k->in[2], k->in[1], k->in[3], k->in[5], k->in[4], k->in[6],
                    k->in[7], opt_in(k, 8), k->out[0]);
}

const nb_kernel_entry nb_kernels_quant[] = {
    {"ConvInteger", k_ConvInteger, 0},
    {"DequantizeLinear", k_DequantizeLinear, 0},
    {"DynamicQuantizeLinear", k_DynamicQuantizeLinear, 0},
    {"MatMulInteger", k_MatMulInteger, 0},
    {"QLinearConv", k_QLinearConv, 0},
    {"QLinearMatMul", k_QLinearMatMul, 0},
    {"QuantizeLinear", k_QuantizeLinear, 0},
    {NULL, NULL, 0},
};
