/* nanobench: shape inference of normalisation, softmax, reduction, index and resampling
 * operators (ONNX Operators.md, opset 11-18, plus the attribute forms of opset 1-10):
 * BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, LRN,
 * MeanVarianceNormalization, Softmax, LogSoftmax, Hardmax, Reduce*, ArgMax, ArgMin, CumSum,
 * TopK, Resize, Upsample. Conventions: infer_ops.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "infer_ops.h"

/* ---------------------------------------------------------------- helpers */

static void set_out(nb_infer_ctx *c, int o, nb_dtype dtype, int rank, const int64_t *dims)
{
    if (o < c->n_out)
        nb_tinfo_set(&c->out[o], dtype, rank, dims);
}

/* Float element types only (ONNX also allows double and bfloat16, which nanobench does not
 * store). */
static nb_err need_float(nb_infer_ctx *c, int i)
{
    nb_dtype t = c->in[i].dtype;
    if (t == NB_UNDEFINED || t == NB_FLOAT || t == NB_FLOAT16)
        return NB_OK;
    return nb_fail(c->st, NB_ERR_UNSUPPORTED, "input %d of type %s is not supported (float "
                   "types only)", i, nb_dtype_name(t));
}

/* Numeric element types (reductions, ArgMax, TopK, CumSum): no BOOL. */
static nb_err need_numeric(nb_infer_ctx *c, int i)
{
    nb_dtype t = c->in[i].dtype;
    if (t == NB_BOOL)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "input %d of type BOOL is not supported", i);
    return NB_OK;
}

/* Checks that every output with a static shape has a representable size. */
static nb_err check_outputs(nb_infer_ctx *c)
{
    for (int o = 0; o < c->n_out; o++) {
        const nb_tinfo *t = &c->out[o];
        if (!nb_tinfo_static(t))
            continue;
        int64_t n;
        size_t es = nb_dtype_size(t->dtype);
        nb_err e = nb_shape_numel(t->rank, t->dims, es ? es : 1, &n, c->st);
        if (e)
            return e;
    }
    return NB_OK;
}

/* Known number of elements of input i, or -1. */
static int64_t in_numel(const nb_infer_ctx *c, int i)
{
    const nb_tinfo *t = &c->in[i];
    if (t->value)
        return t->value->numel;
    if (t->rank < 0)
        return -1;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0 || !nb_mul_ok(n, t->dims[d], &n))
            return -1;
    }
    return n;
}

/* A per-channel parameter (input i) must be 1-D of length C (C < 0: unknown). */
static nb_err check_channel_param(nb_infer_ctx *c, int i, int64_t C, const char *what)
{
    const nb_tinfo *t = &c->in[i];
    if (t->rank < 0)
        return NB_OK;
    if (t->rank != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must be 1-D, not of rank %d", what, t->rank);
    if (C >= 0 && t->dims[0] >= 0 && t->dims[0] != C)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " values for %" PRId64 " channels",
                       what, t->dims[0], C);
    return NB_OK;
}

/* ---------------------------------------------------------------- normalisations */

/* BatchNormalization (opset 6-15): Y has X's shape; the statistics are per channel (dim 1).
 * training_mode=1 (opset 14+) adds running_mean and running_var; opset < 14 in training
 * (more than one output) adds mean, var, saved_mean, saved_var. spatial=0 (opset < 9) takes
 * parameters shaped like X without its batch dim. */
static nb_err infer_batchnorm(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 5, 5);
    if (e)
        return e;
    for (int i = 0; i < 5 && !e; i++)
        e = need_float(c, i);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    float eps = nb_attr_float(c->node, "epsilon", 1e-5f);
    float mom = nb_attr_float(c->node, "momentum", 0.9f);
    if (!(eps >= 0) || !isfinite(mom))
        return nb_fail(c->st, NB_ERR_ATTR, "epsilon must be >= 0 and momentum finite");
    int64_t tm = nb_attr_int(c->node, "training_mode", 0);
    if (tm != 0 && tm != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "training_mode must be 0 or 1, not %" PRId64, tm);
    bool spatial = c->opset < 9 ? nb_attr_int(c->node, "spatial", 1) != 0 : true;
    int64_t C = -1;
    if (x->rank >= 0) {
        if (x->rank < 2)
            return nb_fail(c->st, NB_ERR_SHAPE, "X must have rank >= 2 (N x C x ...), not %d",
                           x->rank);
        C = x->dims[1];
    }
    static const char *const names[] = {"", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++) {
        const nb_tinfo *p = &c->in[i];
        if (!spatial && p->rank >= 0 && x->rank >= 0 && p->rank == x->rank - 1) {
            for (int d = 0; d < p->rank; d++)
                if (p->dims[d] >= 0 && x->dims[d + 1] >= 0 && p->dims[d] != x->dims[d + 1])
                    return nb_fail(c->st, NB_ERR_SHAPE, "%s does not match X's shape (spatial=0)",
                                   names[i]);
            continue;
        }
        if ((e = check_channel_param(c, i, C, names[i])))
            return e;
    }
    nb_out_same(c, 0, 0);
    for (int o = 1; o < c->n_out; o++) {
        nb_dtype dt = c->in[3].dtype;
        if (c->in[3].rank >= 0)
            set_out(c, o, dt, c->in[3].rank, c->in[3].dims);
        else if (C >= 0)
            set_out(c, o, dt, 1, &C);
        else
            set_out(c, o, dt, 1, NULL);
    }
    return NB_OK;
}

/* InstanceNormalization (opset 6): per (n, c) statistics over the spatial dims; scale and B
 * are [C]. */
static nb_err infer_instancenorm(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    for (int i = 0; i < 3 && !e; i++)
        e = need_float(c, i);
    if (e)
        return e;
    if (!(nb_attr_float(c->node, "epsilon", 1e-5f) >= 0))
        return nb_fail(c->st, NB_ERR_ATTR, "epsilon must be >= 0");
    const nb_tinfo *x = &c->in[0];
    int64_t C = -1;
    if (x->rank >= 0) {
        if (x->rank < 2)
            return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank >= 2 (N x C x ...), not %d",
                           x->rank);
        C = x->dims[1];
    }
    if ((e = check_channel_param(c, 1, C, "scale")) || (e = check_channel_param(c, 2, C, "B")))
        return e;
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* Unidirectional broadcast of input i to dims[0..r) (LayerNormalization Scale and B). */
static nb_err check_bcast_to(nb_infer_ctx *c, int i, int r, const int64_t *dims, const char *what)
{
    const nb_tinfo *t = &c->in[i];
    if (t->rank < 0)
        return NB_OK;
    if (t->rank > r)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s of rank %d does not broadcast to the %d "
                       "normalised dims", what, t->rank, r);
    for (int d = 0; d < t->rank; d++) {
        int64_t a = t->dims[d], b = dims[r - t->rank + d];
        if (a >= 0 && b >= 0 && a != 1 && a != b)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s dim %d (%" PRId64 ") does not broadcast to "
                           "%" PRId64, what, d, a, b);
    }
    return NB_OK;
}

/* LayerNormalization (opset 17): statistics over dims [axis, rank); Mean and InvStdDev are
 * X's shape with those dims set to 1, of type stash_type. */
static nb_err infer_layernorm(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 3);
    for (int i = 0; i < c->n_in && !e; i++)
        if (nb_has_in(c, i))
            e = need_float(c, i);
    if (e)
        return e;
    if (!(nb_attr_float(c->node, "epsilon", 1e-5f) >= 0))
        return nb_fail(c->st, NB_ERR_ATTR, "epsilon must be >= 0");
    int64_t stash = nb_attr_int(c->node, "stash_type", 1);
    nb_dtype sdt = (stash == NB_FLOAT || stash == NB_FLOAT16) ? (nb_dtype)stash : NB_UNDEFINED;
    if (sdt == NB_UNDEFINED && c->n_out > 1)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "stash_type %" PRId64 " is not supported "
                       "(FLOAT or FLOAT16)", stash);
    const nb_tinfo *x = &c->in[0];
    nb_out_same(c, 0, 0);
    if (x->rank < 0) {
        nb_out_unknown(c, 1, sdt);
        nb_out_unknown(c, 2, sdt);
        return NB_OK;
    }
    int axis;
    if ((e = nb_norm_axis(nb_attr_int(c->node, "axis", -1), x->rank, &axis, "axis", c->st)))
        return e;
    int r = x->rank - axis;
    if ((e = check_bcast_to(c, 1, r, x->dims + axis, "Scale")))
        return e;
    if (nb_has_in(c, 2) && (e = check_bcast_to(c, 2, r, x->dims + axis, "B")))
        return e;
    int64_t sd[NB_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        sd[d] = d < axis ? x->dims[d] : 1;
    set_out(c, 1, sdt, x->rank, sd);
    set_out(c, 2, sdt, x->rank, sd);
    return NB_OK;
}

/* GroupNormalization (opset 18): channels split into num_groups groups; statistics per
 * (n, group); scale and bias have num_groups values (opset 18) or C values (opset 21). */
static nb_err infer_groupnorm(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    for (int i = 0; i < 3 && !e; i++)
        e = need_float(c, i);
    if (e)
        return e;
    const nb_attr *ga = nb_attr_find(c->node, "num_groups");
    if (!ga || ga->type != NB_ATTR_INT || ga->i <= 0)
        return nb_fail(c->st, NB_ERR_ATTR, "num_groups must be given and > 0");
    if (!(nb_attr_float(c->node, "epsilon", 1e-5f) >= 0))
        return nb_fail(c->st, NB_ERR_ATTR, "epsilon must be >= 0");
    int64_t G = ga->i, C = -1;
    const nb_tinfo *x = &c->in[0];
    if (x->rank >= 0) {
        if (x->rank < 2)
            return nb_fail(c->st, NB_ERR_SHAPE, "X must have rank >= 2 (N x C x ...), not %d",
                           x->rank);
        C = x->dims[1];
        if (C >= 0 && C % G != 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "%" PRId64 " channels do not split into %" PRId64
                           " groups", C, G);
    }
    for (int i = 1; i < 3; i++) {
        const nb_tinfo *p = &c->in[i];
        if (p->rank < 0)
            continue;
        if (p->rank != 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s must be 1-D", i == 1 ? "scale" : "bias");
        if (p->dims[0] >= 0 && p->dims[0] != G && (C < 0 || p->dims[0] != C))
            return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " values (num_groups %" PRId64
                           " or C expected)", i == 1 ? "scale" : "bias", p->dims[0], G);
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* LRN (opset 1-13): Y has X's shape; size is required and positive. */
static nb_err infer_lrn(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = need_float(c, 0);
    if (e)
        return e;
    const nb_attr *s = nb_attr_find(c->node, "size");
    if (!s || s->type != NB_ATTR_INT || s->i <= 0)
        return nb_fail(c->st, NB_ERR_ATTR, "size must be given and > 0");
    if (c->in[0].rank >= 0 && c->in[0].rank < 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank >= 2 (N x C x ...), not %d",
                       c->in[0].rank);
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* MeanVarianceNormalization (opset 9-13): Y has X's shape; axes (default [0,2,3]) must be
 * valid, distinct axes of X. */
static nb_err infer_mvn(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = need_float(c, 0);
    if (e)
        return e;
    int r = c->in[0].rank;
    if (r >= 0) {
        int n;
        const int64_t *ax = nb_attr_ints(c->node, "axes", &n);
        static const int64_t dflt[] = {0, 2, 3};
        if (!ax) {
            ax = dflt;
            n = 3;
        }
        bool seen[NB_MAX_RANK] = {false};
        for (int i = 0; i < n; i++) {
            int a;
            if ((e = nb_norm_axis(ax[i], r, &a, "axis", c->st)))
                return e;
            if (seen[a])
                return nb_fail(c->st, NB_ERR_ATTR, "axis %d is given twice", a);
            seen[a] = true;
        }
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* ---------------------------------------------------------------- softmax family */

/* Softmax, LogSoftmax, Hardmax: Y has X's shape. opset < 13: X is coerced to 2-D at axis
 * (default 1, range [-r, r]); opset >= 13: along axis (default -1, range [-r, r-1]). */
static nb_err infer_softmax(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = need_float(c, 0);
    if (e)
        return e;
    int r = c->in[0].rank;
    if (r >= 0) {
        bool legacy = c->opset < 13;
        int64_t axis = nb_attr_int(c->node, "axis", legacy ? 1 : -1);
        int a;
        if (legacy && r == 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank >= 1");
        /* axis == rank is valid in the 2-D coercion (rows of one element) */
        if (!(legacy && axis == r) && (e = nb_norm_axis(axis, r, &a, "axis", c->st)))
            return e;
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* ---------------------------------------------------------------- reductions */

/* First opset where the op takes axes as input 1 instead of an attribute. */
static int axes_input_opset(const char *op)
{
    return !strcmp(op, "ReduceSum") ? 13 : 18;
}

/* Reduce* (opset 1-18): axes from the attribute or (ReduceSum 13+, others 18+) input 1;
 * empty axes reduce everything unless noop_with_empty_axes; keepdims (default 1) keeps the
 * reduced dims as 1. Axes must be distinct and in range. */
static nb_err infer_reduce(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 2);
    if (!e)
        e = need_numeric(c, 0);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    nb_dtype dt = x->dtype;
    int64_t keep = nb_attr_int(c->node, "keepdims", 1);
    int64_t noop = nb_attr_int(c->node, "noop_with_empty_axes", 0);
    if (keep != 0 && keep != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "keepdims must be 0 or 1");
    if (noop != 0 && noop != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "noop_with_empty_axes must be 0 or 1");
    int64_t axes[NB_MAX_RANK];
    int n = 0;
    bool from_input = nb_has_in(c, 1);
    if (from_input) {
        if (c->opset < axes_input_opset(c->node->op_type))
            return nb_fail(c->st, NB_ERR_GRAPH, "axes as an input needs opset %d",
                           axes_input_opset(c->node->op_type));
        nb_dtype at = c->in[1].dtype;
        if (at != NB_UNDEFINED && at != NB_INT64)
            return nb_fail(c->st, NB_ERR_GRAPH, "axes must be INT64, not %s", nb_dtype_name(at));
        if (c->in[1].rank > 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "axes must be 1-D");
        if (!c->in[1].value) {
            /* unknown axes: with keepdims the rank stays; dims of 1 stay 1 */
            int64_t na = in_numel(c, 1);
            if (x->rank >= 0 && keep) {
                int64_t d[NB_MAX_RANK];
                for (int i = 0; i < x->rank; i++)
                    d[i] = x->dims[i] == 1 ? 1 : -1;
                set_out(c, 0, dt, x->rank, d);
            } else if (x->rank >= 0 && na > 0 && na <= x->rank) {
                set_out(c, 0, dt, x->rank - (int)na, NULL);
            } else {
                nb_out_unknown(c, 0, dt);
            }
            return NB_OK;
        }
        if ((e = nb_const_ints(c, 1, axes, NB_MAX_RANK, &n, "axes")))
            return e;
    } else {
        const int64_t *a = nb_attr_ints(c->node, "axes", &n);
        if (n > NB_MAX_RANK)
            return nb_fail(c->st, NB_ERR_ATTR, "%d axes for rank <= %d", n, NB_MAX_RANK);
        for (int i = 0; i < n; i++)
            axes[i] = a[i];
    }
    if (n == 0 && noop && (from_input || c->opset >= axes_input_opset(c->node->op_type))) {
        nb_out_same(c, 0, 0);
        return NB_OK;
    }
    if (x->rank < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    bool red[NB_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int a;
        if ((e = nb_norm_axis(axes[i], x->rank, &a, "axis", c->st)))
            return e;
        if (red[a])
            return nb_fail(c->st, NB_ERR_ATTR, "axis %d is given twice", a);
        red[a] = true;
    }
    int64_t d[NB_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        bool rd = n == 0 || red[i];
        if (!rd)
            d[r++] = x->dims[i];
        else if (keep)
            d[r++] = 1;
    }
    set_out(c, 0, dt, r, d);
    return NB_OK;
}

/* ArgMax, ArgMin (opset 1-13): INT64 indices along axis (default 0), keepdims (default 1);
 * the axis must not be empty. */
static nb_err infer_argminmax(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = need_numeric(c, 0);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t keep = nb_attr_int(c->node, "keepdims", 1);
    int64_t last = nb_attr_int(c->node, "select_last_index", 0);
    if ((keep != 0 && keep != 1) || (last != 0 && last != 1))
        return nb_fail(c->st, NB_ERR_ATTR, "keepdims and select_last_index must be 0 or 1");
    if (x->rank < 0) {
        nb_out_unknown(c, 0, NB_INT64);
        return NB_OK;
    }
    int a;
    if ((e = nb_norm_axis(nb_attr_int(c->node, "axis", 0), x->rank, &a, "axis", c->st)))
        return e;
    if (x->dims[a] == 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s over an empty axis", c->node->op_type);
    int64_t d[NB_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != a)
            d[r++] = x->dims[i];
        else if (keep)
            d[r++] = 1;
    }
    set_out(c, 0, NB_INT64, r, d);
    return NB_OK;
}

/* CumSum (opset 11-14): Y has X's shape; axis is a scalar (or 1-element) INT32/INT64 input
 * in [-r, r-1]. */
static nb_err infer_cumsum(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e)
        e = need_numeric(c, 0);
    if (e)
        return e;
    nb_dtype at = c->in[1].dtype;
    if (at != NB_UNDEFINED && at != NB_INT32 && at != NB_INT64)
        return nb_fail(c->st, NB_ERR_GRAPH, "axis must be INT32 or INT64, not %s",
                       nb_dtype_name(at));
    int64_t na = in_numel(c, 1);
    if (c->in[1].rank > 1 || (na >= 0 && na != 1))
        return nb_fail(c->st, NB_ERR_SHAPE, "axis must be a scalar");
    int64_t ex = nb_attr_int(c->node, "exclusive", 0), rv = nb_attr_int(c->node, "reverse", 0);
    if ((ex != 0 && ex != 1) || (rv != 0 && rv != 1))
        return nb_fail(c->st, NB_ERR_ATTR, "exclusive and reverse must be 0 or 1");
    if (c->in[1].value && c->in[0].rank >= 0) {
        int a;
        if ((e = nb_norm_axis(nb_tensor_get_i64(c->in[1].value, 0), c->in[0].rank, &a, "axis",
                              c->st)))
            return e;
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* TopK (opset 1-11): values and INT64 indices of X's shape with dim axis (default -1) = K;
 * K is the attribute k (opset < 10) or a 1-element INT64 input; 0 <= K <= dim. */
static nb_err infer_topk(nb_infer_ctx *c)
{
    bool kin = c->opset >= 10;
    nb_err e = nb_need_inputs(c, kin ? 2 : 1, kin ? 2 : 1);
    if (!e)
        e = need_numeric(c, 0);
    if (e)
        return e;
    int64_t lg = nb_attr_int(c->node, "largest", 1), so = nb_attr_int(c->node, "sorted", 1);
    if ((lg != 0 && lg != 1) || (so != 0 && so != 1))
        return nb_fail(c->st, NB_ERR_ATTR, "largest and sorted must be 0 or 1");
    int64_t K = -1;
    bool kknown = true;
    if (!kin) {
        const nb_attr *ka = nb_attr_find(c->node, "k");
        if (!ka || ka->type != NB_ATTR_INT)
            return nb_fail(c->st, NB_ERR_ATTR, "attribute k is missing");
        K = ka->i;
    } else {
        nb_dtype kt = c->in[1].dtype;
        if (kt != NB_UNDEFINED && kt != NB_INT64)
            return nb_fail(c->st, NB_ERR_GRAPH, "K must be INT64, not %s", nb_dtype_name(kt));
        int64_t nk = in_numel(c, 1);
        if (c->in[1].rank > 1 || (nk >= 0 && nk != 1))
            return nb_fail(c->st, NB_ERR_SHAPE, "K must be a 1-D tensor of one value");
        kknown = c->in[1].value != NULL;
        if (kknown)
            K = nb_tensor_get_i64(c->in[1].value, 0);
    }
    if (kknown && K < 0)
        return nb_fail(c->st, NB_ERR_ATTR, "K must be >= 0, not %" PRId64, K);
    const nb_tinfo *x = &c->in[0];
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        nb_out_unknown(c, 1, NB_INT64);
        return NB_OK;
    }
    int a;
    if ((e = nb_norm_axis(nb_attr_int(c->node, "axis", -1), x->rank, &a, "axis", c->st)))
        return e;
    if (kknown && x->dims[a] >= 0 && K > x->dims[a])
        return nb_fail(c->st, NB_ERR_SHAPE, "K = %" PRId64 " is larger than the axis (%" PRId64
                       ")", K, x->dims[a]);
    int64_t d[NB_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[a] = kknown ? K : -1;
    set_out(c, 0, x->dtype, x->rank, d);
    set_out(c, 1, NB_INT64, x->rank, d);
    return NB_OK;
}

/* ---------------------------------------------------------------- Resize, Upsample */

static bool str_in(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

/* State of an optional 1-D input: 0 absent or empty, 1 non-empty with known values,
 * 2 non-empty with unknown values, 3 unknown whether empty. */
static int opt_input(const nb_infer_ctx *c, int i)
{
    if (i < 0 || !nb_has_in(c, i))
        return 0;
    if (c->in[i].value)
        return c->in[i].value->numel > 0 ? 1 : 0;
    int64_t n = in_numel(c, i);
    return n == 0 ? 0 : n > 0 ? 2 : 3;
}

/* Resize's string and 0/1 attributes valid (cubic only for Resize 11+). */
static nb_err resize_check_attrs(nb_infer_ctx *c, bool up)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear", NULL};
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize", NULL};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                      NULL};
    static const char *const pols[] = {"stretch", "not_larger", "not_smaller", NULL};
    const char *mode = nb_attr_str(c->node, "mode", "nearest");
    const char *ctm = nb_attr_str(c->node, "coordinate_transformation_mode", "half_pixel");
    const char *nm = nb_attr_str(c->node, "nearest_mode", "round_prefer_floor");
    const char *pol = nb_attr_str(c->node, "keep_aspect_ratio_policy", "stretch");
    if (!str_in(mode, modes) || (!strcmp(mode, "cubic") && (up || c->opset < 11)))
        return nb_fail(c->st, NB_ERR_ATTR, "mode '%s' is not valid", mode);
    if (!str_in(ctm, ctms))
        return nb_fail(c->st, NB_ERR_ATTR, "coordinate_transformation_mode '%s' is not valid", ctm);
    if (!str_in(nm, nms))
        return nb_fail(c->st, NB_ERR_ATTR, "nearest_mode '%s' is not valid", nm);
    if (!str_in(pol, pols))
        return nb_fail(c->st, NB_ERR_ATTR, "keep_aspect_ratio_policy '%s' is not valid", pol);
    int64_t ex = nb_attr_int(c->node, "exclude_outside", 0), aa = nb_attr_int(c->node, "antialias", 0);
    if ((ex != 0 && ex != 1) || (aa != 0 && aa != 1))
        return nb_fail(c->st, NB_ERR_ATTR, "exclude_outside and antialias must be 0 or 1");
    return NB_OK;
}

/* Resize's axes (opset 18's attribute, distinct, or all of the rank r) into axes, *na. */
static nb_err resize_axes(nb_infer_ctx *c, bool up, int r, int *axes, int *na_out)
{
    nb_err e;
    int na = r;
    int nax;
    const int64_t *ax = up || c->opset < 18 ? NULL : nb_attr_ints(c->node, "axes", &nax);
    if (ax) {
        bool seen[NB_MAX_RANK] = {false};
        if (nax > r)
            return nb_fail(c->st, NB_ERR_ATTR, "%d axes for rank %d", nax, r);
        for (int i = 0; i < nax; i++) {
            if ((e = nb_norm_axis(ax[i], r, &axes[i], "axis", c->st)))
                return e;
            if (seen[axes[i]])
                return nb_fail(c->st, NB_ERR_ATTR, "axis %d is given twice", axes[i]);
            seen[axes[i]] = true;
        }
        na = nax;
    } else {
        for (int i = 0; i < r; i++)
            axes[i] = i;
    }
    *na_out = na;
    return NB_OK;
}

/* The output dims d along the axes from constant scales (input i_scales, or Upsample 7's
   attribute): floor(scale x in), -1 where in is unknown. */
static nb_err resize_from_scales(nb_infer_ctx *c, bool up, int i_scales, const int *axes, int na,
                                 int64_t *d)
{
    const nb_tinfo *x = &c->in[0];
    const float *sv;
    int ns;
    if (up && c->opset < 9) {
        sv = nb_attr_floats(c->node, "scales", &ns);
        if (!sv)
            return nb_fail(c->st, NB_ERR_ATTR, "attribute scales is missing");
    } else {
        const nb_tensor *t = c->in[i_scales].value;
        sv = t->data;
        ns = (int)(t->numel > NB_MAX_RANK + 1 ? NB_MAX_RANK + 1 : t->numel);
    }
    if (ns != na)
        return nb_fail(c->st, NB_ERR_SHAPE, "%d scales for %d axes", ns, na);
    for (int i = 0; i < na; i++) {
        if (!(sv[i] > 0) || !isfinite(sv[i]))
            return nb_fail(c->st, NB_ERR_ATTR, "scale %g must be > 0", (double)sv[i]);
        int64_t in = x->dims[axes[i]];
        if (in < 0) {
            d[axes[i]] = -1;
            continue;
        }
        double o = floor((double)sv[i] * (double)in);
        if (o > (double)NB_MAX_TENSOR_BYTES)
            return nb_fail(c->st, NB_ERR_SHAPE, "output dim %g is too large", o);
        d[axes[i]] = (int64_t)o;
    }
    return NB_OK;
}

/* The output dims d along the axes from constant sizes (input i_sizes): as given (stretch),
   or one scale for all the axes (not_larger / not_smaller), out = round_half_up(s x in). */
static nb_err resize_from_sizes(nb_infer_ctx *c, int i_sizes, const int *axes, int na,
                                const char *pol, int64_t *d)
{
    const nb_tinfo *x = &c->in[0];
    const nb_tensor *t = c->in[i_sizes].value;
    if (t->numel != na)
        return nb_fail(c->st, NB_ERR_SHAPE, "%" PRId64 " sizes for %d axes", t->numel, na);
    const int64_t *sz = t->data;
    for (int i = 0; i < na; i++) {
        if (sz[i] < 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "size %" PRId64 " is negative", sz[i]);
        int64_t in = x->dims[axes[i]];
        if (in == 0 && sz[i] > 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "cannot resize an empty dim to %" PRId64,
                           sz[i]);
    }
    if (!strcmp(pol, "stretch")) {
        for (int i = 0; i < na; i++)
            d[axes[i]] = sz[i];
    } else {
        double s = 0;
        bool known = true;
        for (int i = 0; i < na; i++) {
            int64_t in = x->dims[axes[i]];
            if (in <= 0) {
                known = known && in == 0;
                continue;
            }
            double q = (double)sz[i] / (double)in;
            if (i == 0 || (!strcmp(pol, "not_larger") ? q < s : q > s))
                s = q;
        }
        for (int i = 0; i < na; i++) {
            int64_t in = x->dims[axes[i]];
            d[axes[i]] = !known || in < 0 ? -1 : (int64_t)(s * (double)in + 0.5);
        }
    }
    return NB_OK;
}

/* Resize (opset 10-18) and Upsample (opset 7-9): inputs X, roi, scales, sizes (opset 11+;
 * opset 10 and Upsample 9: X, scales; Upsample 7: attribute scales). Exactly one of scales
 * and sizes; out = floor(in * scale), or sizes (keep_aspect_ratio_policy not_larger /
 * not_smaller: one scale for all the axes, out = round_half_up(scale * in)). opset 18 axes
 * restricts scales/sizes/roi to those axes. */
static nb_err infer_resize(nb_infer_ctx *c)
{
    bool up = !strcmp(c->node->op_type, "Upsample");
    int i_scales = -1, i_sizes = -1;
    nb_err e;
    if (up) {
        e = nb_need_inputs(c, c->opset >= 9 ? 2 : 1, c->opset >= 9 ? 2 : 1);
        i_scales = c->opset >= 9 ? 1 : -1;
    } else if (c->opset < 11) {
        e = nb_need_inputs(c, 2, 2);
        i_scales = 1;
    } else {
        e = nb_need_inputs(c, 1, 4);
        i_scales = 2;
        i_sizes = 3;
    }
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    if (x->dtype == NB_BOOL)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "Resize of BOOL is not supported");
    if ((e = resize_check_attrs(c, up)))
        return e;
    const char *ctm = nb_attr_str(c->node, "coordinate_transformation_mode", "half_pixel");
    const char *pol = nb_attr_str(c->node, "keep_aspect_ratio_policy", "stretch");
    for (int i = 1; i < c->n_in; i++) {
        nb_dtype t = c->in[i].dtype;
        if (nb_has_in(c, i) && c->in[i].rank > 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "input %d must be 1-D", i);
        if (i == i_sizes && t != NB_UNDEFINED && t != NB_INT64)
            return nb_fail(c->st, NB_ERR_GRAPH, "sizes must be INT64, not %s", nb_dtype_name(t));
        if (i == i_scales && t != NB_UNDEFINED && t != NB_FLOAT)
            return nb_fail(c->st, NB_ERR_GRAPH, "scales must be FLOAT, not %s", nb_dtype_name(t));
    }
    int s_state = up && c->opset < 9 ? 1 : opt_input(c, i_scales);
    int z_state = opt_input(c, i_sizes);
    if ((s_state == 1 || s_state == 2) && (z_state == 1 || z_state == 2))
        return nb_fail(c->st, NB_ERR_ATTR, "only one of scales and sizes may be given");
    if (!s_state && !z_state)
        return nb_fail(c->st, NB_ERR_ATTR, "one of scales and sizes must be given");
    bool crop = !up && c->opset >= 11 && !strcmp(ctm, "tf_crop_and_resize");
    if (crop && opt_input(c, 1) == 0)
        return nb_fail(c->st, NB_ERR_ATTR, "tf_crop_and_resize needs roi");
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int r = x->rank;
    /* axes (opset 18) */
    int na = r;
    int axes[NB_MAX_RANK];
    if ((e = resize_axes(c, up, r, axes, &na)))
        return e;
    if (crop) {
        int64_t nr = in_numel(c, 1);
        if (nr >= 0 && nr != 2 * na)
            return nb_fail(c->st, NB_ERR_SHAPE, "roi has %" PRId64 " values, expects %d", nr,
                           2 * na);
    }
    int64_t d[NB_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)r);
    if (s_state == 1) {
        if ((e = resize_from_scales(c, up, i_scales, axes, na, d)))
            return e;
    } else if (z_state == 1) {
        if ((e = resize_from_sizes(c, i_sizes, axes, na, pol, d)))
            return e;
    } else {
        for (int i = 0; i < na; i++)
            d[axes[i]] = -1;
    }
    set_out(c, 0, x->dtype, r, d);
    return check_outputs(c);
}

const nb_infer_entry nb_infer_ops_norm[] = {
    {"ArgMax", infer_argminmax},
    {"ArgMin", infer_argminmax},
    {"BatchNormalization", infer_batchnorm},
    {"CumSum", infer_cumsum},
    {"GroupNormalization", infer_groupnorm},
    {"Hardmax", infer_softmax},
    {"InstanceNormalization", infer_instancenorm},
    {"LayerNormalization", infer_layernorm},
    {"LogSoftmax", infer_softmax},
    {"LRN", infer_lrn},
    {"MeanVarianceNormalization", infer_mvn},
    {"ReduceL1", infer_reduce},
    {"ReduceL2", infer_reduce},
    {"ReduceLogSum", infer_reduce},
    {"ReduceLogSumExp", infer_reduce},
    {"ReduceMax", infer_reduce},
    {"ReduceMean", infer_reduce},
    {"ReduceMin", infer_reduce},
    {"ReduceProd", infer_reduce},
    {"ReduceSum", infer_reduce},
    {"ReduceSumSquare", infer_reduce},
    {"Resize", infer_resize},
    {"Softmax", infer_softmax},
    {"TopK", infer_topk},
    {"Upsample", infer_resize},
    {NULL, NULL},
};
