/* nanobench: shape inference of quantization operators (ONNX Operators.md, opset 10-18):
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
 * ConvInteger, QLinearConv.
 *
 * Scales and zero points are checked here (per-tensor, per-axis, per-row/column, per output
 * channel) whenever their shapes are known, so that the kernels in engine/ref/k_quant.c can
 * index them without further checks at run time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "infer_ops.h"

/* ---------------------------------------------------------------- helpers */

static bool is_q8(nb_dtype t) { return t == NB_UINT8 || t == NB_INT8; }

/* Input i, when its type is known, must be one of the 8-bit integer types. */
static nb_err need_q8(nb_infer_ctx *c, int i, const char *what)
{
    if (nb_has_in(c, i) && c->in[i].dtype != NB_UNDEFINED && !is_q8(c->in[i].dtype))
        return nb_fail(c->st, NB_ERR_GRAPH, "%s must be int8 or uint8, not %s", what,
                       nb_dtype_name(c->in[i].dtype));
    return NB_OK;
}

/* Input i, when its type is known, must be float (scales). */
static nb_err need_float(nb_infer_ctx *c, int i, const char *what)
{
    if (nb_has_in(c, i) && c->in[i].dtype != NB_UNDEFINED && c->in[i].dtype != NB_FLOAT &&
        c->in[i].dtype != NB_FLOAT16)
        return nb_fail(c->st, NB_ERR_GRAPH, "%s must be float, not %s", what,
                       nb_dtype_name(c->in[i].dtype));
    return NB_OK;
}

/* Inputs i and j (both given with known types) must have the same type. */
static nb_err same_type(nb_infer_ctx *c, int i, int j, const char *wi, const char *wj)
{
    if (nb_has_in(c, i) && nb_has_in(c, j) && c->in[i].dtype != NB_UNDEFINED &&
        c->in[j].dtype != NB_UNDEFINED && c->in[i].dtype != c->in[j].dtype)
        return nb_fail(c->st, NB_ERR_GRAPH, "%s is %s but %s is %s", wi,
                       nb_dtype_name(c->in[i].dtype), wj, nb_dtype_name(c->in[j].dtype));
    return NB_OK;
}

/* Number of elements of input i, or -1 when unknown (or absent). */
static int64_t numel_of(const nb_infer_ctx *c, int i)
{
    if (!nb_has_in(c, i) || c->in[i].rank < 0)
        return -1;
    int64_t n = 1;
    for (int d = 0; d < c->in[i].rank; d++) {
        if (c->in[i].dims[d] < 0)
            return -1;
        if (!nb_mul_ok(n, c->in[i].dims[d], &n))
            return -1;
    }
    return n;
}

/* Input i must hold exactly one element (a per-tensor parameter), when known. */
static nb_err need_scalar(nb_infer_ctx *c, int i, const char *what)
{
    int64_t n = numel_of(c, i);
    if (n >= 0 && n != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must be a scalar (per tensor), it has %" PRId64
                       " elements", what, n);
    return NB_OK;
}

/* Parameters i and j (scale and zero point) must have the same number of elements. */
static nb_err same_count(nb_infer_ctx *c, int i, int j, const char *wi, const char *wj)
{
    int64_t a = numel_of(c, i), b = numel_of(c, j);
    if (a >= 0 && b >= 0 && a != b)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " elements but %s has %" PRId64,
                       wi, a, wj, b);
    return NB_OK;
}

/* ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear */

/* Scale input is (per-tensor) a scalar or one element, or (per-axis) a 1-D tensor whose length
 * is dim `axis` of x; the zero point has the scale's shape (Operators.md, opset 13). */
static nb_err check_axis_params(nb_infer_ctx *c, const char *sname, const char *zname)
{
    const nb_tinfo *x = &c->in[0], *s = &c->in[1];
    nb_err e;
    if ((e = same_count(c, 1, 2, sname, zname)))
        return e;
    int64_t n = numel_of(c, 1);
    if (s->rank <= 0 || n == 1)
        return NB_OK; /* per tensor, or not known yet */
    if (s->rank > 1) {
        if (n < 0)
            return NB_OK;
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must be a scalar or a 1-D tensor, not rank %d",
                       sname, s->rank);
    }
    if (n < 0 || x->rank < 0)
        return NB_OK;
    /* per axis */
    int axis;
    if ((e = nb_norm_axis(nb_attr_int(c->node, "axis", 1), x->rank, &axis, "axis", c->st)))
        return e;
    if (x->dims[axis] >= 0 && n != x->dims[axis])
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " elements, x has %" PRId64
                       " along axis %d", sname, n, x->dims[axis], axis);
    return NB_OK;
}

/* QuantizeLinear (Operators.md, opset 10/13): y = saturate(round(x / y_scale) + y_zero_point),
 * round half to even; y has x's shape and the zero point's type (uint8 without one). */
static nb_err infer_QuantizeLinear(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    if (e)
        return e;
    nb_dtype xt = c->in[0].dtype;
    if (xt != NB_UNDEFINED && xt != NB_FLOAT && xt != NB_FLOAT16 && xt != NB_INT32)
        return nb_fail(c->st, NB_ERR_GRAPH, "x must be float or int32, not %s",
                       nb_dtype_name(xt));
    if ((e = need_float(c, 1, "y_scale")))
        return e;
    nb_dtype yt = NB_UINT8;
    if (nb_has_in(c, 2)) {
        nb_dtype zt = c->in[2].dtype;
        if (zt != NB_UNDEFINED && !is_q8(zt) && zt != NB_UINT16 && zt != NB_INT16)
            return nb_fail(c->st, NB_ERR_GRAPH, "y_zero_point must be int8 or uint8, not %s",
                           nb_dtype_name(zt));
        yt = zt;
    }
    int64_t od = nb_attr_int(c->node, "output_dtype", 0);
    if (od != 0) {
        if (od != NB_UINT8 && od != NB_INT8 && od != NB_UINT16 && od != NB_INT16)
            return nb_fail(c->st, NB_ERR_ATTR, "output_dtype %" PRId64 " is not supported", od);
        if (nb_has_in(c, 2) && yt != NB_UNDEFINED && yt != (nb_dtype)od)
            return nb_fail(c->st, NB_ERR_ATTR, "output_dtype %s differs from y_zero_point's %s",
                           nb_dtype_name((nb_dtype)od), nb_dtype_name(yt));
        yt = (nb_dtype)od;
    }
    if ((e = check_axis_params(c, "y_scale", "y_zero_point")))
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = yt;
    return NB_OK;
}

/* DequantizeLinear (Operators.md, opset 10/13): y = (x - x_zero_point) * x_scale, float, x's
 * shape; x is int8, uint8 or int32 and the zero point has x's type. */
static nb_err infer_DequantizeLinear(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    if (e)
        return e;
    nb_dtype xt = c->in[0].dtype;
    if (xt != NB_UNDEFINED && !is_q8(xt) && xt != NB_INT32 && xt != NB_UINT16 && xt != NB_INT16)
        return nb_fail(c->st, NB_ERR_GRAPH, "x must be int8, uint8 or int32, not %s",
                       nb_dtype_name(xt));
    if ((e = need_float(c, 1, "x_scale")) || (e = same_type(c, 0, 2, "x", "x_zero_point")) ||
        (e = check_axis_params(c, "x_scale", "x_zero_point")))
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = c->in[1].dtype == NB_FLOAT16 ? NB_FLOAT16 : NB_FLOAT;
    return NB_OK;
}

/* DynamicQuantizeLinear (Operators.md, opset 11): y (uint8, x's shape), y_scale (float
 * scalar), y_zero_point (uint8 scalar). */
static nb_err infer_DynamicQuantizeLinear(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    if (c->n_out > 3)
        return nb_fail(c->st, NB_ERR_GRAPH, "has %d outputs, expects 3", c->n_out);
    if ((e = need_float(c, 0, "x")))
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = NB_UINT8;
    if (c->n_out > 1)
        nb_tinfo_set(&c->out[1], NB_FLOAT, 0, NULL);
    if (c->n_out > 2)
        nb_tinfo_set(&c->out[2], NB_UINT8, 0, NULL);
    return NB_OK;
}

/* ---------------------------------------------------------------- MatMulInteger, QLinearMatMul */

/* numpy.matmul shape of inputs ia and ib (1-D operands promoted then dropped; batch dims
 * broadcast). */
static nb_err matmul_shape(nb_infer_ctx *c, int ia, int ib, nb_tinfo *out)
{
    const nb_tinfo *a = &c->in[ia], *b = &c->in[ib];
    if (a->rank == 0 || b->rank == 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "matmul operands must have rank >= 1");
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return NB_OK;
    }
    int64_t ka = a->dims[a->rank - 1], kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return nb_fail(c->st, NB_ERR_SHAPE, "inner dims differ (%" PRId64 " and %" PRId64 ")",
                       ka, kb);
    int ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0, r;
    int64_t dims[NB_MAX_RANK];
    nb_err e = nb_broadcast_shape(ra, a->dims, rb, b->dims, &r, dims, c->st);
    if (e)
        return e;
    if (a->rank >= 2)
        dims[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        dims[r++] = b->dims[b->rank - 1];
    out->rank = r;
    memcpy(out->dims, dims, sizeof(int64_t) * (size_t)r);
    return NB_OK;
}

/* A per-row parameter of operand `op` (rank r, [..., M, K]) is one element, a 1-D tensor of
 * M, or an N-D tensor [..., M, 1]; a per-column parameter of [..., K, N] is one element, a
 * 1-D tensor of N or [..., 1, N]. */
static nb_err check_rowcol_param(nb_infer_ctx *c, int p, int op, bool row, const char *what)
{
    if (!nb_has_in(c, p) || c->in[p].rank < 0 || numel_of(c, p) == 1)
        return NB_OK;
    const nb_tinfo *t = &c->in[p], *o = &c->in[op];
    int64_t want = -1; /* M (row) or N (column) */
    if (o->rank >= 2)
        want = row ? o->dims[o->rank - 2] : o->dims[o->rank - 1];
    else if (o->rank == 1)
        want = 1;
    if (t->rank == 0)
        return NB_OK;
    if (t->rank == 1) {
        if (t->dims[0] >= 0 && want >= 0 && t->dims[0] != want)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " elements, expected %" PRId64
                           " (per %s)", what, t->dims[0], want, row ? "row" : "column");
        return NB_OK;
    }
    if (o->rank >= 0 && t->rank > o->rank)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has rank %d, above its operand's %d", what,
                       t->rank, o->rank);
    int64_t one = t->dims[t->rank - (row ? 1 : 2)], v = t->dims[t->rank - (row ? 2 : 1)];
    if (one >= 0 && one != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must have shape [..., %s]", what,
                       row ? "M, 1" : "1, N");
    if (v >= 0 && want >= 0 && v != want && v != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " %s, expected %" PRId64, what, v,
                       row ? "rows" : "columns", want);
    return NB_OK;
}

/* MatMulInteger (Operators.md, opset 10): Y = (A - a_zero_point) * (B - b_zero_point) as
 * numpy.matmul, int32; a_zero_point per tensor or per row, b_zero_point per tensor or
 * per column. */
static nb_err infer_MatMulInteger(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 4);
    if (e)
        return e;
    if ((e = need_q8(c, 0, "A")) || (e = need_q8(c, 1, "B")) ||
        (e = same_type(c, 0, 2, "A", "a_zero_point")) ||
        (e = same_type(c, 1, 3, "B", "b_zero_point")) ||
        (e = check_rowcol_param(c, 2, 0, true, "a_zero_point")) ||
        (e = check_rowcol_param(c, 3, 1, false, "b_zero_point")))
        return e;
    c->out[0].dtype = NB_INT32;
    return matmul_shape(c, 0, 1, &c->out[0]);
}

/* QLinearMatMul (Operators.md, opset 10): y = saturate(round((a - a_zp) * (b - b_zp) *
 * a_scale * b_scale / y_scale) + y_zp) with numpy.matmul shapes; y has y_zero_point's type. */
static nb_err infer_QLinearMatMul(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 8, 8);
    if (e)
        return e;
    if ((e = need_q8(c, 0, "a")) || (e = need_q8(c, 3, "b")) || (e = need_q8(c, 7, "y_zero_point")) ||
        (e = need_float(c, 1, "a_scale")) || (e = need_float(c, 4, "b_scale")) ||
        (e = need_float(c, 6, "y_scale")) || (e = same_type(c, 0, 2, "a", "a_zero_point")) ||
        (e = same_type(c, 3, 5, "b", "b_zero_point")) ||
        (e = same_count(c, 1, 2, "a_scale", "a_zero_point")) ||
        (e = same_count(c, 4, 5, "b_scale", "b_zero_point")) ||
        (e = check_rowcol_param(c, 1, 0, true, "a_scale")) ||
        (e = check_rowcol_param(c, 2, 0, true, "a_zero_point")) ||
        (e = check_rowcol_param(c, 4, 3, false, "b_scale")) ||
        (e = check_rowcol_param(c, 5, 3, false, "b_zero_point")) ||
        (e = need_scalar(c, 6, "y_scale")) || (e = need_scalar(c, 7, "y_zero_point")))
        return e;
    c->out[0].dtype = c->in[7].dtype;
    return matmul_shape(c, 0, 3, &c->out[0]);
}

/* ---------------------------------------------------------------- ConvInteger, QLinearConv */

/* Conv output shape (Operators.md, Conv): x [N, C, D1..Dn], w [M, C/group, k1..kn];
 * out_i = floor((D_i + pad_begin_i + pad_end_i - ((k_i - 1) * dilation_i + 1)) / stride_i) + 1
 * (NOTSET/VALID), or ceil(D_i / stride_i) (SAME_UPPER/SAME_LOWER). */
static nb_err conv_shape(nb_infer_ctx *c, int ix, int iw, nb_tinfo *out)
{
    const nb_node *n = c->node;
    const nb_tinfo *x = &c->in[ix], *w = &c->in[iw];
    int nk = 0, ns = 0, nd = 0, np = 0;
    const int64_t *ks = nb_attr_ints(n, "kernel_shape", &nk);
    const int64_t *strides = nb_attr_ints(n, "strides", &ns);
    const int64_t *dil = nb_attr_ints(n, "dilations", &nd);
    const int64_t *pads = nb_attr_ints(n, "pads", &np);
    int64_t group = nb_attr_int(n, "group", 1);
    const char *ap = nb_attr_str(n, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID");
    if (!same && !valid && strcmp(ap, "NOTSET") && ap[0])
        return nb_fail(c->st, NB_ERR_ATTR, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                       "or VALID", ap);
    if (group < 1)
        return nb_fail(c->st, NB_ERR_ATTR, "group must be >= 1, not %" PRId64, group);
    /* number of spatial axes */
    int sp = -1;
    if (x->rank >= 0)
        sp = x->rank - 2;
    else if (w->rank >= 0)
        sp = w->rank - 2;
    else if (ks)
        sp = nk;
    if (x->rank >= 0 && x->rank < 3)
        return nb_fail(c->st, NB_ERR_SHAPE, "x must have rank >= 3, not %d", x->rank);
    if (w->rank >= 0 && w->rank < 3)
        return nb_fail(c->st, NB_ERR_SHAPE, "w must have rank >= 3, not %d", w->rank);
    if (x->rank >= 0 && w->rank >= 0 && x->rank != w->rank)
        return nb_fail(c->st, NB_ERR_SHAPE, "x has rank %d but w rank %d", x->rank, w->rank);
    if (sp >= 0) {
        if ((ks && nk != sp) || (strides && ns != sp) || (dil && nd != sp) ||
            (pads && np != 2 * sp))
            return nb_fail(c->st, NB_ERR_ATTR, "kernel_shape, strides, dilations need %d values "
                           "and pads %d", sp, 2 * sp);
    }
    for (int i = 0; i < nk; i++)
        if (ks[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "kernel_shape values must be >= 1");
    for (int i = 0; i < ns; i++)
        if (strides[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "strides must be >= 1");
    for (int i = 0; i < nd; i++)
        if (dil[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "dilations must be >= 1");
    for (int i = 0; i < np; i++)
        if (pads[i] < 0 || pads[i] > ((int64_t)1 << 40))
            return nb_fail(c->st, NB_ERR_ATTR, "pads must be in 0..2^40");
    if (pads && (same || valid)) {
        bool zero = true;
        for (int i = 0; i < np; i++)
            zero &= pads[i] == 0;
        if (!zero)
            return nb_fail(c->st, NB_ERR_ATTR, "pads cannot be used with auto_pad %s", ap);
    }
    /* channels */
    int64_t C = x->rank >= 0 ? x->dims[1] : -1, M = w->rank >= 0 ? w->dims[0] : -1;
    int64_t cg = w->rank >= 0 ? w->dims[1] : -1;
    if (M >= 0 && M % group != 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "w has %" PRId64 " filters, not a multiple of group "
                       "%" PRId64, M, group);
    if (C >= 0 && cg >= 0) {
        int64_t want;
        if (!nb_mul_ok(cg, group, &want) || want != C)
            return nb_fail(c->st, NB_ERR_SHAPE, "x has %" PRId64 " channels, w expects %" PRId64
                           " x group %" PRId64, C, cg, group);
    }
    if (sp < 0) {
        out->rank = -1;
        return NB_OK;
    }
    if (sp + 2 > NB_MAX_RANK)
        return nb_fail(c->st, NB_ERR_SHAPE, "too many spatial axes");
    out->rank = sp + 2;
    out->dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    out->dims[1] = M;
    for (int i = 0; i < sp; i++) {
        int64_t in = x->rank >= 0 ? x->dims[2 + i] : -1;
        if (in > ((int64_t)1 << 60))
            return nb_fail(c->st, NB_ERR_SHAPE, "spatial axis %d is too large", i);
        int64_t kw = w->rank >= 0 ? w->dims[2 + i] : -1;
        if (ks) {
            if (kw >= 0 && kw != ks[i])
                return nb_fail(c->st, NB_ERR_SHAPE, "kernel_shape[%d] = %" PRId64 " but w has %"
                               PRId64, i, ks[i], kw);
            kw = ks[i];
        }
        int64_t s = strides ? strides[i] : 1, d = dil ? dil[i] : 1;
        int64_t o = -1;
        if (in >= 0 && same) {
            o = in / s + (in % s != 0);
        } else if (in >= 0 && kw >= 0) {
            int64_t ext;
            if (!nb_mul_ok(kw - 1, d, &ext) || ext > ((int64_t)1 << 40))
                return nb_fail(c->st, NB_ERR_ATTR, "dilated kernel is too large");
            ext += 1;
            int64_t total = in + (pads && !valid ? pads[i] + pads[i + sp] : 0);
            if (total < ext)
                return nb_fail(c->st, NB_ERR_SHAPE, "spatial axis %d: padded input %" PRId64
                               " is smaller than the dilated kernel %" PRId64, i, total, ext);
            o = (total - ext) / s + 1;
        }
        out->dims[2 + i] = o;
    }
    return NB_OK;
}

/* ConvInteger (Operators.md, opset 10): Conv of (x - x_zero_point) and (w - w_zero_point)
 * in int32; x_zero_point per tensor, w_zero_point per tensor or per output channel. */
static nb_err infer_ConvInteger(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 4);
    if (e)
        return e;
    if ((e = need_q8(c, 0, "x")) || (e = need_q8(c, 1, "w")) ||
        (e = same_type(c, 0, 2, "x", "x_zero_point")) ||
        (e = same_type(c, 1, 3, "w", "w_zero_point")) || (e = need_scalar(c, 2, "x_zero_point")))
        return e;
    int64_t nz = numel_of(c, 3), M = c->in[1].rank >= 1 ? c->in[1].dims[0] : -1;
    if (nz > 1 && M >= 0 && nz != M)
        return nb_fail(c->st, NB_ERR_SHAPE, "w_zero_point has %" PRId64 " elements, w has %"
                       PRId64 " output channels", nz, M);
    c->out[0].dtype = NB_INT32;
    return conv_shape(c, 0, 1, &c->out[0]);
}

/* QLinearConv (Operators.md, opset 10): y = saturate(round((Conv(x - x_zp, w - w_zp) + B) *
 * x_scale * w_scale / y_scale) + y_zp); w_scale/w_zp per tensor or per output channel, B
 * int32 [M]; y has y_zero_point's type. */
static nb_err infer_QLinearConv(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 8, 9);
    if (e)
        return e;
    if ((e = need_q8(c, 0, "x")) || (e = need_q8(c, 3, "w")) || (e = need_q8(c, 7, "y_zero_point")) ||
        (e = need_float(c, 1, "x_scale")) || (e = need_float(c, 4, "w_scale")) ||
        (e = need_float(c, 6, "y_scale")) || (e = same_type(c, 0, 2, "x", "x_zero_point")) ||
        (e = same_type(c, 3, 5, "w", "w_zero_point")) || (e = need_scalar(c, 1, "x_scale")) ||
        (e = need_scalar(c, 2, "x_zero_point")) || (e = need_scalar(c, 6, "y_scale")) ||
        (e = need_scalar(c, 7, "y_zero_point")) ||
        (e = same_count(c, 4, 5, "w_scale", "w_zero_point")))
        return e;
    int64_t M = c->in[3].rank >= 1 ? c->in[3].dims[0] : -1;
    for (int i = 4; i <= 5; i++) {
        int64_t nz = numel_of(c, i);
        if (nz > 1 && M >= 0 && nz != M)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " elements, w has %" PRId64
                           " output channels", i == 4 ? "w_scale" : "w_zero_point", nz, M);
    }
    if (nb_has_in(c, 8)) {
        if (c->in[8].dtype != NB_UNDEFINED && c->in[8].dtype != NB_INT32)
            return nb_fail(c->st, NB_ERR_GRAPH, "B must be int32, not %s",
                           nb_dtype_name(c->in[8].dtype));
        int64_t nb = numel_of(c, 8);
        if (c->in[8].rank > 1 || (nb >= 0 && M >= 0 && nb != M))
            return nb_fail(c->st, NB_ERR_SHAPE, "B must be a 1-D tensor of the %" PRId64
                           " output channels", M);
    }
    c->out[0].dtype = c->in[7].dtype;
    return conv_shape(c, 0, 3, &c->out[0]);
}

const nb_infer_entry nb_infer_ops_quant[] = {
    {"ConvInteger", infer_ConvInteger},
    {"DequantizeLinear", infer_DequantizeLinear},
    {"DynamicQuantizeLinear", infer_DynamicQuantizeLinear},
    {"MatMulInteger", infer_MatMulInteger},
    {"QLinearConv", infer_QLinearConv},
    {"QLinearMatMul", infer_QLinearMatMul},
    {"QuantizeLinear", infer_QuantizeLinear},
    {NULL, NULL},
};
