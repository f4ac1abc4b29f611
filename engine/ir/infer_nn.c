/* nanobench: shape inference of the nn operators (ONNX Operators.md, opset 11-18, and the
 * attribute forms of opsets 1-10): Conv, ConvTranspose, MatMul, Gemm, MaxPool, AveragePool,
 * LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool (infer_ops.h conventions).
 *
 * Spatial attributes (kernel_shape, strides, dilations, pads) are checked whatever is
 * unknown: a count that disagrees with the number of spatial dims, a stride, dilation or
 * kernel size below 1, or a negative pad is NB_ERR_ATTR. Every size is computed with
 * overflow checks; a fully known output is checked against NB_MAX_TENSOR_BYTES.
 */
#include <inttypes.h>
#include <string.h>

#include "infer_ops.h"

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } autopad;

/* What the spatial attributes of a Conv, ConvTranspose or pool say. */
typedef struct spatial {
    int nsp;                   /* number of spatial dims, -1 unknown */
    int64_t k[NB_MAX_RANK];    /* kernel_shape, -1 where absent */
    int64_t s[NB_MAX_RANK];    /* strides (default 1) */
    int64_t d[NB_MAX_RANK];    /* dilations (default 1) */
    int64_t pb[NB_MAX_RANK];   /* pads at the beginning (default 0) */
    int64_t pe[NB_MAX_RANK];   /* pads at the end (default 0) */
    bool has_k;                /* kernel_shape was given */
    autopad ap;
} spatial;

static bool add_ok(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* ceil(a / b) for a >= 0, b > 0, without overflow. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* Sets out[o] and, when its shape is fully known, checks its size can be allocated. */
static nb_err set_out(nb_infer_ctx *c, int o, nb_dtype dtype, int rank, const int64_t *dims)
{
    if (o >= c->n_out)
        return NB_OK;
    nb_tinfo_set(&c->out[o], dtype, rank, dims);
    if (!nb_tinfo_static(&c->out[o]))
        return NB_OK;
    size_t es = nb_dtype_size(dtype);
    int64_t numel;
    return nb_shape_numel(rank, dims, es ? es : 1, &numel, c->st);
}

/* Element types the float kernels take (ONNX allows double too, which nanobench does not
 * store). extra_int8: MaxPool also takes INT8 and UINT8 (opset 12). */
static nb_err check_float_type(nb_infer_ctx *c, int i, bool extra_int8)
{
    nb_dtype t = c->in[i].dtype;
    if (t == NB_UNDEFINED || t == NB_FLOAT || t == NB_FLOAT16)
        return NB_OK;
    if (extra_int8 && (t == NB_INT8 || t == NB_UINT8))
        return NB_OK;
    return nb_fail(c->st, NB_ERR_UNSUPPORTED, "input %d of type %s is not supported (float "
                   "types only)", i, nb_dtype_name(t));
}

static nb_err same_type(nb_infer_ctx *c, int i, int j)
{
    nb_dtype a = c->in[i].dtype, b = c->in[j].dtype;
    if (a != NB_UNDEFINED && b != NB_UNDEFINED && a != b)
        return nb_fail(c->st, NB_ERR_GRAPH, "inputs %d and %d have different types (%s and %s)",
                       i, j, nb_dtype_name(a), nb_dtype_name(b));
    return NB_OK;
}

static nb_err read_autopad(nb_infer_ctx *c, autopad *ap)
{
    const char *s = nb_attr_str(c->node, "auto_pad", "NOTSET");
    if (!strcmp(s, "NOTSET") || !s[0])
        *ap = PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER"))
        *ap = PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER"))
        *ap = PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID"))
        *ap = PAD_VALID;
    else
        return nb_fail(c->st, NB_ERR_ATTR, "auto_pad '%s' is not NOTSET, SAME_UPPER, "
                       "SAME_LOWER or VALID", s);
    return NB_OK;
}

/* Counts of an ints attribute must agree with the number of spatial dims; an empty list
 * counts as absent. nsp < 0: deduced from the attribute. */
static nb_err agree_count(nb_infer_ctx *c, const char *name, int count, int per_dim, int *nsp)
{
    if (!count)
        return NB_OK;
    if (count % per_dim)
        return nb_fail(c->st, NB_ERR_ATTR, "%s has %d values, expected %d per spatial dim",
                       name, count, per_dim);
    int n = count / per_dim;
    if (*nsp < 0)
        *nsp = n;
    else if (n != *nsp)
        return nb_fail(c->st, NB_ERR_ATTR, "%s has %d values; %d spatial dims need %d", name,
                       count, *nsp, *nsp * per_dim);
    return NB_OK;
}

/* Bound of kernel extents, pads and strides: no input is that large, and sums of a few of
 * them stay far from int64 overflow in the kernels. */
#define NB_MAX_EXTENT ((int64_t)1 << 56)

/* Reads and checks kernel_shape, strides, dilations, pads and auto_pad (ONNX Conv and pool
 * attributes). nsp is the number of spatial dims when the input rank is known, else -1. */
static nb_err read_spatial(nb_infer_ctx *c, int nsp, spatial *sp)
{
    int nk, ns, nd, np;
    const int64_t *k = nb_attr_ints(c->node, "kernel_shape", &nk);
    const int64_t *s = nb_attr_ints(c->node, "strides", &ns);
    const int64_t *d = nb_attr_ints(c->node, "dilations", &nd);
    const int64_t *p = nb_attr_ints(c->node, "pads", &np);
    nb_err e;
    memset(sp, 0, sizeof *sp);
    if ((e = agree_count(c, "kernel_shape", nk, 1, &nsp)) ||
        (e = agree_count(c, "strides", ns, 1, &nsp)) ||
        (e = agree_count(c, "dilations", nd, 1, &nsp)) ||
        (e = agree_count(c, "pads", np, 2, &nsp)))
        return e;
    if (nsp > NB_MAX_RANK - 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "%d spatial dims (max %d)", nsp, NB_MAX_RANK - 2);
    sp->nsp = nsp;
    sp->has_k = nk > 0;
    for (int i = 0; i < (nsp > 0 ? nsp : 0); i++) {
        sp->k[i] = nk ? k[i] : -1;
        sp->s[i] = ns ? s[i] : 1;
        sp->d[i] = nd ? d[i] : 1;
        sp->pb[i] = np ? p[i] : 0;
        sp->pe[i] = np ? p[i + nsp] : 0;
        if (nk && k[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "kernel_shape[%d] = %" PRId64 " (must be >= 1)",
                           i, k[i]);
        if (sp->s[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "strides[%d] = %" PRId64 " (must be >= 1)", i,
                           sp->s[i]);
        if (sp->d[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "dilations[%d] = %" PRId64 " (must be >= 1)", i,
                           sp->d[i]);
        if (sp->pb[i] < 0 || sp->pe[i] < 0)
            return nb_fail(c->st, NB_ERR_ATTR, "pads of spatial dim %d are negative (%" PRId64
                           ", %" PRId64 ")", i, sp->pb[i], sp->pe[i]);
        if (sp->pb[i] > NB_MAX_EXTENT || sp->pe[i] > NB_MAX_EXTENT || sp->s[i] > NB_MAX_EXTENT)
            return nb_fail(c->st, NB_ERR_ATTR, "pads or stride of spatial dim %d above 2^56", i);
    }
    return read_autopad(c, &sp->ap);
}

/* Effective kernel extent (k - 1) * d + 1 of spatial dim i; -1 when k is unknown. */
static nb_err extent(nb_infer_ctx *c, const spatial *sp, int i, int64_t *ek)
{
    *ek = -1;
    if (sp->k[i] < 0)
        return NB_OK;
    int64_t v;
    /* above 2^56 no input could be that large; the bound keeps every later sum of
       extents, pads and sizes far from int64 overflow */
    if (!nb_mul_ok(sp->k[i] - 1, sp->d[i], &v) || !add_ok(v, 1, ek) || *ek > NB_MAX_EXTENT)
        return nb_fail(c->st, NB_ERR_ATTR, "kernel %" PRId64 " with dilation %" PRId64
                       " spans more than 2^56 positions", sp->k[i], sp->d[i]);
    return NB_OK;
}

/* Output length of spatial dim i of Conv or a pool (ONNX Conv / MaxPool "output spatial
 * shape"): NOTSET floor((in + pb + pe - ek) / s) + 1, or with ceil_mode the ceiling, less a
 * last window that would start in the end padding (as ONNX Runtime and PyTorch do);
 * VALID floor((in - ek) / s) + 1; SAME_UPPER / SAME_LOWER ceil(in / s). -1 when unknown;
 * a result below 1 is NB_ERR_SHAPE. */
static nb_err spatial_out(nb_infer_ctx *c, const spatial *sp, int i, int64_t in, bool ceil_mode,
                          int64_t *out)
{
    int64_t ek, padded;
    nb_err e = extent(c, sp, i, &ek);
    *out = -1;
    if (e || in < 0)
        return e;
    if (sp->ap == PAD_SAME_UPPER || sp->ap == PAD_SAME_LOWER) {
        *out = ceil_div(in, sp->s[i]);
    } else {
        if (ek < 0)
            return NB_OK;
        if (sp->ap == PAD_VALID)
            padded = in;
        else if (!add_ok(in, sp->pb[i], &padded) || !add_ok(padded, sp->pe[i], &padded))
            return nb_fail(c->st, NB_ERR_ATTR, "pads of spatial dim %d overflow", i);
        if (padded < ek)
            return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d: the kernel extent %" PRId64
                           " is larger than the padded input %" PRId64, i, ek, padded);
        int64_t num = padded - ek;
        *out = (ceil_mode ? ceil_div(num, sp->s[i]) : num / sp->s[i]) + 1;
        if (ceil_mode && sp->ap == PAD_NOTSET) {
            int64_t start; /* the last window must start inside the input or begin padding */
            if (nb_mul_ok(*out - 1, sp->s[i], &start) && start >= in + sp->pb[i])
                (*out)--;
        }
    }
    if (*out < 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d: output size %" PRId64
                       " (input %" PRId64 ")", i, *out, in);
    return NB_OK;
}

/* Number of spatial dims from the input ranks: X rank (must be >= 3: N, C, spatial...),
 * else the weight rank; -1 when neither is known. */
static nb_err spatial_rank(nb_infer_ctx *c, int w, int *nsp)
{
    int rx = c->in[0].rank, rw = w >= 0 ? c->in[w].rank : -1;
    *nsp = -1;
    if (rx >= 0 && rx < 3)
        return nb_fail(c->st, NB_ERR_SHAPE, "X has rank %d, expected N x C x spatial dims "
                       "(rank >= 3)", rx);
    if (rw >= 0 && rw < 3)
        return nb_fail(c->st, NB_ERR_SHAPE, "W has rank %d, expected rank >= 3", rw);
    if (rx >= 0 && rw >= 0 && rx != rw)
        return nb_fail(c->st, NB_ERR_SHAPE, "X has rank %d and W rank %d", rx, rw);
    if (rx >= 0)
        *nsp = rx - 2;
    else if (rw >= 0)
        *nsp = rw - 2;
    return NB_OK;
}

/* Kernel size from kernel_shape, checked against W's spatial dims (NB_ERR_ATTR), or taken
 * from W when kernel_shape is absent. */
static nb_err kernel_from_w(nb_infer_ctx *c, spatial *sp)
{
    const nb_tinfo *w = &c->in[1];
    if (w->rank < 0 || sp->nsp < 0)
        return NB_OK;
    for (int i = 0; i < sp->nsp; i++) {
        int64_t wk = w->dims[2 + i];
        if (sp->has_k && wk >= 0 && wk != sp->k[i])
            return nb_fail(c->st, NB_ERR_ATTR, "kernel_shape[%d] = %" PRId64 " but W has %"
                           PRId64, i, sp->k[i], wk);
        if (!sp->has_k)
            sp->k[i] = wk;
    }
    return NB_OK;
}

/* Optional bias B of Conv / ConvTranspose: a 1-D tensor of M values. */
static nb_err check_bias(nb_infer_ctx *c, int64_t m)
{
    if (!nb_has_in(c, 2) || c->in[2].rank < 0)
        return NB_OK;
    const nb_tinfo *b = &c->in[2];
    if (b->rank != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "B has rank %d, expected 1", b->rank);
    if (m >= 0 && b->dims[0] >= 0 && b->dims[0] != m)
        return nb_fail(c->st, NB_ERR_SHAPE, "B has %" PRId64 " values for %" PRId64
                       " output channels", b->dims[0], m);
    return NB_OK;
}

static nb_err read_group(nb_infer_ctx *c, int64_t *group)
{
    *group = nb_attr_int(c->node, "group", 1);
    if (*group < 1)
        return nb_fail(c->st, NB_ERR_ATTR, "group = %" PRId64 " (must be >= 1)", *group);
    return NB_OK;
}

/* Conv (Conv-1/11): X [N, C, D1..Dn], W [M, C/group, k1..kn], optional B [M] ->
 * Y [N, M, O1..On] with Oi from spatial_out. */
static nb_err infer_conv(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    int nsp;
    int64_t group;
    spatial sp;
    if (e || (e = check_float_type(c, 0, false)) || (e = same_type(c, 0, 1)) ||
        (e = spatial_rank(c, 1, &nsp)) || (e = read_spatial(c, nsp, &sp)) ||
        (e = read_group(c, &group)) || (e = kernel_from_w(c, &sp)))
        return e;
    const nb_tinfo *x = &c->in[0], *w = &c->in[1];
    int64_t ch = x->rank >= 0 ? x->dims[1] : -1;
    int64_t m = w->rank >= 0 ? w->dims[0] : -1, cg = w->rank >= 0 ? w->dims[1] : -1;
    if (ch >= 0 && cg >= 0) {
        int64_t want;
        if (!nb_mul_ok(cg, group, &want) || want != ch)
            return nb_fail(c->st, NB_ERR_SHAPE, "X has %" PRId64 " channels, W expects %" PRId64
                           " x group %" PRId64, ch, cg, group);
    }
    if (ch >= 0 && ch % group)
        return nb_fail(c->st, NB_ERR_SHAPE, "%" PRId64 " channels do not divide into %" PRId64
                       " groups", ch, group);
    if (m >= 0 && m % group)
        return nb_fail(c->st, NB_ERR_SHAPE, "%" PRId64 " output channels do not divide into %"
                       PRId64 " groups", m, group);
    if ((e = check_bias(c, m)))
        return e;
    nb_dtype dt = x->dtype != NB_UNDEFINED ? x->dtype : w->dtype;
    if (sp.nsp < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    int64_t dims[NB_MAX_RANK];
    dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    dims[1] = m;
    for (int i = 0; i < sp.nsp; i++)
        if ((e = spatial_out(c, &sp, i, x->rank >= 0 ? x->dims[2 + i] : -1, false,
                             &dims[2 + i])))
            return e;
    return set_out(c, 0, dt, sp.nsp + 2, dims);
}

/* ConvTranspose (ConvTranspose-1/11): X [N, C, D1..Dn], W [C, M/group, k1..kn], optional
 * B [M] -> Y [N, M, O1..On] with Oi = output_shape[i] when given, in * s for SAME_*, else
 * s * (in - 1) + output_padding + (k - 1) * d + 1 - pads_begin - pads_end. */
static nb_err infer_convtranspose(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    int nsp;
    int64_t group;
    spatial sp;
    if (e || (e = check_float_type(c, 0, false)) || (e = same_type(c, 0, 1)) ||
        (e = spatial_rank(c, 1, &nsp)))
        return e;
    int nop, nos;
    const int64_t *op = nb_attr_ints(c->node, "output_padding", &nop);
    const int64_t *os = nb_attr_ints(c->node, "output_shape", &nos);
    if (nsp >= 0 && nos == nsp + 2) { /* the N, C, spatial form */
        os += 2;
        nos -= 2;
    }
    if ((e = agree_count(c, "output_padding", nop, 1, &nsp)) ||
        (e = agree_count(c, "output_shape", nos, 1, &nsp)) || (e = read_spatial(c, nsp, &sp)) ||
        (e = read_group(c, &group)) || (e = kernel_from_w(c, &sp)))
        return e;
    for (int i = 0; i < nop; i++)
        if (op[i] < 0 || (op[i] >= sp.s[i] && op[i] >= sp.d[i]))
            return nb_fail(c->st, NB_ERR_ATTR, "output_padding[%d] = %" PRId64 " must be at "
                           "least 0 and smaller than the stride %" PRId64 " or the dilation %"
                           PRId64, i, op[i], sp.s[i], sp.d[i]);
    for (int i = 0; i < nos; i++)
        if (os[i] < 1)
            return nb_fail(c->st, NB_ERR_ATTR, "output_shape[%d] = %" PRId64 " (must be >= 1)",
                           i, os[i]);
    const nb_tinfo *x = &c->in[0], *w = &c->in[1];
    int64_t ch = x->rank >= 0 ? x->dims[1] : -1;
    int64_t wc = w->rank >= 0 ? w->dims[0] : -1, mg = w->rank >= 0 ? w->dims[1] : -1;
    int64_t m = -1;
    if (ch >= 0 && wc >= 0 && ch != wc)
        return nb_fail(c->st, NB_ERR_SHAPE, "X has %" PRId64 " channels, W %" PRId64, ch, wc);
    if (ch < 0)
        ch = wc;
    if (ch >= 0 && ch % group)
        return nb_fail(c->st, NB_ERR_SHAPE, "%" PRId64 " channels do not divide into %" PRId64
                       " groups", ch, group);
    if (mg >= 0 && !nb_mul_ok(mg, group, &m))
        return nb_fail(c->st, NB_ERR_SHAPE, "output channels %" PRId64 " x group %" PRId64
                       " overflow", mg, group);
    if ((e = check_bias(c, m)))
        return e;
    nb_dtype dt = x->dtype != NB_UNDEFINED ? x->dtype : w->dtype;
    if (sp.nsp < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    int64_t dims[NB_MAX_RANK];
    dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    dims[1] = m;
    for (int i = 0; i < sp.nsp; i++) {
        int64_t in = x->rank >= 0 ? x->dims[2 + i] : -1, ek, v = 0, *o = &dims[2 + i];
        if ((e = extent(c, &sp, i, &ek)))
            return e;
        *o = -1;
        if (in >= 0 && ek >= 0 && /* the full output, also when output_shape is given */
            (!nb_mul_ok(in > 0 ? in - 1 : 0, sp.s[i], &v) || !add_ok(v, nop ? op[i] : 0, &v) ||
             !add_ok(v, ek, &v)))
            return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d: output size overflows", i);
        if (nos) {
            *o = os[i];
        } else if (in >= 0 && in < 1) {
            return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d of X is empty", i);
        } else if (in >= 0 && (sp.ap == PAD_SAME_UPPER || sp.ap == PAD_SAME_LOWER)) {
            if (!nb_mul_ok(in, sp.s[i], o))
                return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d: output size overflows", i);
        } else if (in >= 0 && ek >= 0) {
            bool valid = sp.ap == PAD_VALID;
            *o = v - (valid ? 0 : sp.pb[i]) - (valid ? 0 : sp.pe[i]);
            if (*o < 1)
                return nb_fail(c->st, NB_ERR_SHAPE, "spatial dim %d: output size %" PRId64
                               " (the pads exceed the full output)", i, *o);
        }
    }
    return set_out(c, 0, dt, sp.nsp + 2, dims);
}

/* MatMul (MatMul-1/9/13, numpy.matmul): a 1-D A is [1, K] and a 1-D B [K, 1], the added
 * dim being removed from the result; the batch dims (all but the last two) broadcast. */
static nb_err infer_matmul(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (e || (e = same_type(c, 0, 1)))
        return e;
    const nb_tinfo *a = &c->in[0], *b = &c->in[1];
    nb_dtype dt = a->dtype != NB_UNDEFINED ? a->dtype : b->dtype;
    if (dt != NB_UNDEFINED && dt != NB_FLOAT && dt != NB_FLOAT16 && dt != NB_INT32 &&
        dt != NB_INT64 && dt != NB_UINT32 && dt != NB_UINT64)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "MatMul of %s is not supported",
                       nb_dtype_name(dt));
    if (a->rank == 0 || b->rank == 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "MatMul of a scalar");
    if (a->rank < 0 || b->rank < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return nb_fail(c->st, NB_ERR_SHAPE, "A has %" PRId64 " columns, B %" PRId64 " rows",
                       ka, kb);
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0, r;
    int64_t dims[NB_MAX_RANK + 2];
    if ((e = nb_broadcast_shape(ra, a->dims, rb, b->dims, &r, dims, c->st)))
        return nb_prefix(c->st, "batch dims");
    if (a->rank >= 2)
        dims[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        dims[r++] = b->dims[b->rank - 1];
    return set_out(c, 0, dt, r, dims);
}

/* Gemm (Gemm-1/6/7/9/11/13): Y = alpha * A' * B' + beta * C with A' = transA ? A^T : A
 * ([M, K]), B' = transB ? B^T : B ([K, N]), and C (optional from opset 11) broadcast
 * unidirectionally to [M, N]. */
static nb_err infer_gemm(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    if (e || (e = check_float_type(c, 0, false)) || (e = same_type(c, 0, 1)))
        return e;
    const nb_tinfo *a = &c->in[0], *b = &c->in[1];
    nb_dtype dt = a->dtype != NB_UNDEFINED ? a->dtype : b->dtype;
    bool ta = nb_attr_int(c->node, "transA", 0) != 0, tb = nb_attr_int(c->node, "transB", 0) != 0;
    if (a->rank >= 0 && a->rank != 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "A has rank %d, expected 2", a->rank);
    if (b->rank >= 0 && b->rank != 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "B has rank %d, expected 2", b->rank);
    int64_t m = a->rank == 2 ? a->dims[ta ? 1 : 0] : -1, ka = a->rank == 2 ? a->dims[ta ? 0 : 1] : -1;
    int64_t kb = b->rank == 2 ? b->dims[tb ? 1 : 0] : -1, n = b->rank == 2 ? b->dims[tb ? 0 : 1] : -1;
    if (ka >= 0 && kb >= 0 && ka != kb)
        return nb_fail(c->st, NB_ERR_SHAPE, "A' has %" PRId64 " columns, B' %" PRId64 " rows",
                       ka, kb);
    if (nb_has_in(c, 2) && c->in[2].rank >= 0) {
        const nb_tinfo *cc = &c->in[2];
        int64_t want[2] = {m, n};
        if (cc->rank > 2)
            return nb_fail(c->st, NB_ERR_SHAPE, "C has rank %d, expected at most 2", cc->rank);
        for (int i = 0; i < cc->rank; i++) {
            int64_t d = cc->dims[i], t = want[2 - cc->rank + i];
            if (d >= 0 && t >= 0 && d != 1 && d != t)
                return nb_fail(c->st, NB_ERR_SHAPE, "C dim %d is %" PRId64 ", does not "
                               "broadcast to %" PRId64, i, d, t);
        }
    }
    int64_t dims[2] = {m, n};
    return set_out(c, 0, dt, 2, dims);
}

/* Shared by MaxPool, AveragePool and LpPool (ONNX MaxPool-1/8/10/11/12, AveragePool-1/7/
 * 10/11/19, LpPool-1/2/11/18): X [N, C, D1..Dn] -> Y [N, C, O1..On]; kernel_shape is
 * required; MaxPool's optional Indices output is INT64 of Y's shape. */
static nb_err infer_pool(nb_infer_ctx *c, bool is_max)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    int nsp;
    spatial sp;
    if (e || (e = check_float_type(c, 0, is_max)) || (e = spatial_rank(c, -1, &nsp)) ||
        (e = read_spatial(c, nsp, &sp)))
        return e;
    if (!sp.has_k)
        return nb_fail(c->st, NB_ERR_ATTR, "kernel_shape is missing");
    for (int i = 0; i < sp.nsp; i++) {
        /* a pad as large as the window would make a window of padding only (ONNX Runtime
           refuses it too: "Pad should be smaller than kernel") */
        int64_t ek;
        if ((e = extent(c, &sp, i, &ek)))
            return e;
        if (sp.ap == PAD_NOTSET && (sp.pb[i] >= ek || sp.pe[i] >= ek))
            return nb_fail(c->st, NB_ERR_ATTR, "pads (%" PRId64 ", %" PRId64 ") of spatial dim "
                           "%d must be smaller than the kernel extent %" PRId64, sp.pb[i],
                           sp.pe[i], i, ek);
    }
    int64_t ceil_mode = nb_attr_int(c->node, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "ceil_mode = %" PRId64 " (must be 0 or 1)", ceil_mode);
    int64_t so = nb_attr_int(c->node, "storage_order", 0);
    if (so != 0 && so != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "storage_order = %" PRId64 " (must be 0 or 1)", so);
    int64_t cip = nb_attr_int(c->node, "count_include_pad", 0);
    if (cip != 0 && cip != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "count_include_pad = %" PRId64 " (must be 0 or 1)",
                       cip);
    const nb_tinfo *x = &c->in[0];
    int64_t dims[NB_MAX_RANK];
    dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    dims[1] = x->rank >= 0 ? x->dims[1] : -1;
    for (int i = 0; i < sp.nsp; i++)
        if ((e = spatial_out(c, &sp, i, x->rank >= 0 ? x->dims[2 + i] : -1, ceil_mode != 0,
                             &dims[2 + i])))
            return e;
    if ((e = set_out(c, 0, x->dtype, sp.nsp + 2, dims)))
        return e;
    if (c->n_out > 1 && !is_max)
        return nb_fail(c->st, NB_ERR_GRAPH, "has %d outputs, expects 1", c->n_out);
    if (c->n_out > 2)
        return nb_fail(c->st, NB_ERR_GRAPH, "has %d outputs, expects 1 or 2", c->n_out);
    return set_out(c, 1, NB_INT64, sp.nsp + 2, dims);
}

static nb_err infer_maxpool(nb_infer_ctx *c) { return infer_pool(c, true); }
static nb_err infer_avgpool(nb_infer_ctx *c) { return infer_pool(c, false); }

/* LpPool: p (int, a float in LpPool-1) must be positive. */
static nb_err infer_lppool(nb_infer_ctx *c)
{
    if (!(nb_attr_float(c->node, "p", 2.0f) > 0.0f))
        return nb_fail(c->st, NB_ERR_ATTR, "p must be positive");
    return infer_pool(c, false);
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: X [N, C, D1..Dn] -> [N, C, 1, .., 1]. */
static nb_err infer_global_pool(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e || (e = check_float_type(c, 0, false)))
        return e;
    if (!strcmp(c->node->op_type, "GlobalLpPool") && !(nb_attr_float(c->node, "p", 2.0f) > 0.0f))
        return nb_fail(c->st, NB_ERR_ATTR, "p must be positive");
    const nb_tinfo *x = &c->in[0];
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    if (x->rank < 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "X has rank %d, expected N x C x spatial dims",
                       x->rank);
    int64_t dims[NB_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        dims[i] = i < 2 ? x->dims[i] : 1;
    return set_out(c, 0, x->dtype, x->rank, dims);
}

const nb_infer_entry nb_infer_ops_nn[] = {
    {"AveragePool", infer_avgpool},
    {"Conv", infer_conv},
    {"ConvTranspose", infer_convtranspose},
    {"Gemm", infer_gemm},
    {"GlobalAveragePool", infer_global_pool},
    {"GlobalLpPool", infer_global_pool},
    {"GlobalMaxPool", infer_global_pool},
    {"LpPool", infer_lppool},
    {"MatMul", infer_matmul},
    {"MaxPool", infer_maxpool},
    {NULL, NULL},
};
