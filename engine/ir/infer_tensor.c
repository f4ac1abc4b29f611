/* nanobench: shape inference of tensor (data movement) operators (ONNX Operators.md,
 * opset 11-18, plus the attribute forms of opset 1-10 used by older models): reshaping
 * (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout), layout (Transpose, Concat,
 * Split, Slice, Pad, Tile, Expand, SpaceToDepth, DepthToSpace), indexing (Gather*,
 * Scatter*, OneHot, NonZero, ReverseSequence, Trilu), generators (Shape, Size,
 * ConstantOfShape, Range, EyeLike). Conventions: infer_ops.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "infer_ops.h"

#define MAXV 64 /* largest list of ints read from an input (split sizes, pads) */

/* ---------------------------------------------------------------- helpers */

/* Element count of a tinfo: -1 when unknown, -2 on overflow. */
static int64_t tinfo_numel(const nb_tinfo *t)
{
    if (!nb_tinfo_static(t))
        return -1;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++)
        if (!nb_mul_ok(n, t->dims[d], &n))
            return -2;
    return n;
}

/* Product of dims[from..to): -1 when a dim is unknown, -2 on overflow. */
static int64_t dims_prod(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++) {
        if (dims[d] < 0)
            return -1;
        if (!nb_mul_ok(n, dims[d], &n))
            return -2;
    }
    return n;
}

static nb_err too_big(nb_infer_ctx *c, const char *what)
{
    return nb_fail(c->st, NB_ERR_SHAPE, "%s is too large", what);
}

static nb_err check_rank(nb_infer_ctx *c, int r)
{
    if (r > NB_MAX_RANK)
        return nb_fail(c->st, NB_ERR_SHAPE, "output rank %d exceeds the maximum %d", r,
                       NB_MAX_RANK);
    return NB_OK;
}

/* Checks that a shape with all dims known fits in memory (NB_MAX_TENSOR_BYTES). */
static nb_err check_size(nb_infer_ctx *c, nb_dtype dt, int rank, const int64_t *dims)
{
    int64_t numel;
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0)
            return NB_OK;
    size_t es = nb_dtype_size(dt);
    return nb_shape_numel(rank, dims, es ? es : 1, &numel, c->st);
}

/* Ints from input i (when present: *given) or, for older opsets, attribute attr. *known is
 * false when the input is given but its value is not known yet. */
static nb_err ints_in_or_attr(nb_infer_ctx *c, int i, const char *attr, int64_t *v, int max,
                              int *n, bool *given, bool *known, const char *what)
{
    *n = 0;
    *given = false;
    *known = true;
    if (i >= 0) {
        if (attr && nb_attr_find(c->node, attr))
            return nb_fail(c->st, NB_ERR_ATTR, "'%s' is an attribute, but at opset %d it is "
                           "input %d (ONNX Runtime refuses it too)", attr, c->opset, i);
        if (!nb_has_in(c, i))
            return NB_OK;
        *given = true;
        if (!c->in[i].value) {
            *known = false;
            return NB_OK;
        }
        return nb_const_ints(c, i, v, max, n, what);
    }
    int cnt;
    const int64_t *a = nb_attr_ints(c->node, attr, &cnt);
    if (!a)
        return NB_OK;
    if (cnt > max)
        return nb_fail(c->st, NB_ERR_ATTR, "%s has %d values (max %d)", what, cnt, max);
    *given = true;
    memcpy(v, a, sizeof(int64_t) * (size_t)cnt);
    *n = cnt;
    return NB_OK;
}

/* Normalises a list of axes against rank, rejecting duplicates (NB_ERR_ATTR). */
static nb_err norm_axes(nb_infer_ctx *c, int64_t *axes, int n, int rank, const char *what)
{
    bool seen[NB_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int a;
        nb_err e = nb_norm_axis(axes[i], rank, &a, what, c->st);
        if (e)
            return e;
        if (seen[a])
            return nb_fail(c->st, NB_ERR_ATTR, "%s %d is repeated", what, a);
        seen[a] = true;
        axes[i] = a;
    }
    return NB_OK;
}

static bool is_index_type(nb_dtype t)
{
    return t == NB_UNDEFINED || t == NB_INT64 || t == NB_INT32;
}

static nb_err check_index_type(nb_infer_ctx *c, int i, const char *what)
{
    if (!is_index_type(c->in[i].dtype))
        return nb_fail(c->st, NB_ERR_GRAPH, "%s must be INT32 or INT64, not %s", what,
                       nb_dtype_name(c->in[i].dtype));
    return NB_OK;
}

/* Known scalar (or one-element) value of input i as double; false when unknown. */
static bool scalar_value(const nb_infer_ctx *c, int i, double *v)
{
    const nb_tensor *t = c->in[i].value;
    if (!t || t->numel != 1)
        return false;
    *v = nb_tensor_get_f64(t, 0);
    return true;
}

/* ---------------------------------------------------------------- aliasing ops */

/* Identity (Operators.md, opset 1-16): output = input. */
static nb_err infer_identity(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* Dropout (Operators.md, opset 1-13): output 0 has the input's type and shape; the
 * optional mask output 1 is BOOL (opset 10+; the input type before) of the same shape.
 * ratio (attribute up to opset 11, input from 12) must be in [0, 1). */
static nb_err infer_dropout(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 3);
    if (e)
        return e;
    double ratio = 0.5;
    const nb_attr *ra = nb_attr_find(c->node, "ratio");
    if (ra && c->opset < 12) {
        ratio = nb_attr_float(c->node, "ratio", 0.5f);
        if (!(ratio >= 0.0 && ratio < 1.0))
            return nb_fail(c->st, NB_ERR_ATTR, "ratio %g is outside [0, 1)", ratio);
    }
    if (nb_has_in(c, 1) && scalar_value(c, 1, &ratio) && !(ratio >= 0.0 && ratio < 1.0))
        return nb_fail(c->st, NB_ERR_ATTR, "ratio %g is outside [0, 1)", ratio);
    if (nb_has_in(c, 2) && c->in[2].dtype != NB_UNDEFINED && c->in[2].dtype != NB_BOOL)
        return nb_fail(c->st, NB_ERR_GRAPH, "training_mode must be BOOL");
    nb_out_same(c, 0, 0);
    if (c->n_out > 1) {
        nb_out_same(c, 1, 0);
        c->out[1].dtype = c->opset >= 10 ? NB_BOOL : c->in[0].dtype;
    }
    return NB_OK;
}

/* Reshape (Operators.md, opset 5-14; 'shape' attribute up to opset 4): 0 copies the input
 * dim at that index (an actual 0 with allowzero=1, opset 14), one -1 is inferred from the
 * element count, which the result must keep. */
static nb_err infer_reshape(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 5;
    nb_err e = nb_need_inputs(c, in_form ? 2 : 1, in_form ? 2 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t allowzero = nb_attr_int(c->node, "allowzero", 0);
    if (allowzero != 0 && allowzero != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "allowzero must be 0 or 1, not %" PRId64, allowzero);
    int64_t shp[NB_MAX_RANK], dims[NB_MAX_RANK];
    int n;
    bool given, known;
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, "shape", shp, NB_MAX_RANK, &n, &given, &known,
                             "shape")))
        return e;
    if (!given)
        return nb_fail(c->st, NB_ERR_ATTR, "attribute 'shape' is missing");
    if (!known) {
        int r = (c->in[1].rank == 1 && c->in[1].dims[0] >= 0) ? (int)c->in[1].dims[0] : -1;
        if (c->in[1].rank > 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "shape must be a 1-D tensor");
        if ((e = check_rank(c, r)))
            return e;
        nb_tinfo_set(&c->out[0], x->dtype, r, NULL);
        return NB_OK;
    }
    int neg = -1;
    bool zero = false;
    for (int i = 0; i < n; i++) {
        int64_t s = shp[i];
        if (s == -1) {
            if (neg >= 0)
                return nb_fail(c->st, NB_ERR_SHAPE, "shape has more than one -1");
            neg = i;
            dims[i] = -1;
        } else if (s < -1) {
            return nb_fail(c->st, NB_ERR_SHAPE, "shape value %" PRId64 " is invalid", s);
        } else if (s == 0 && !allowzero) {
            if (x->rank >= 0 && i >= x->rank)
                return nb_fail(c->st, NB_ERR_SHAPE,
                               "shape[%d] = 0 copies a dim the rank-%d input does not have", i,
                               x->rank);
            dims[i] = x->rank >= 0 ? x->dims[i] : -1;
        } else {
            dims[i] = s;
            zero |= s == 0;
        }
    }
    if (zero && neg >= 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "shape has both 0 and -1 with allowzero=1");
    int64_t in_n = tinfo_numel(x);
    if (in_n == -2)
        return too_big(c, "input size");
    if (neg >= 0) {
        /* dims copied by 0 from an unknown input dim cancel out: the -1 is known when every
           other input and output dim is */
        bool copied[NB_MAX_RANK] = {false};
        int64_t p = 1;
        bool all = x->rank >= 0;
        for (int i = 0; i < n; i++)
            copied[i] = shp[i] == 0 && !allowzero && dims[i] < 0;
        for (int i = 0; i < n; i++) {
            if (i == neg || copied[i])
                continue;
            if (dims[i] < 0)
                all = false;
            else if (!nb_mul_ok(p, dims[i], &p))
                return too_big(c, "shape");
        }
        if (all && in_n < 0) {
            in_n = 1;
            for (int d = 0; all && d < x->rank; d++) {
                if (d < n && copied[d])
                    continue;
                if (x->dims[d] < 0)
                    all = false;
                else if (!nb_mul_ok(in_n, x->dims[d], &in_n))
                    return too_big(c, "input size");
            }
            if (!all)
                in_n = -1;
        }
        if (all && in_n >= 0) {
            if (p == 0)
                return nb_fail(c->st, NB_ERR_SHAPE, "cannot infer the -1 dim next to a 0 dim");
            if (in_n % p)
                return nb_fail(c->st, NB_ERR_SHAPE,
                               "cannot reshape %" PRId64 " elements into a multiple of %" PRId64,
                               in_n, p);
            dims[neg] = in_n / p;
        }
    } else if (in_n >= 0) {
        int64_t p = dims_prod(dims, 0, n);
        if (p == -2)
            return too_big(c, "shape");
        if (p >= 0 && p != in_n) {
            char a[160], b[160];
            return nb_fail(c->st, NB_ERR_SHAPE, "cannot reshape %s (%" PRId64 " elements) to %s",
                           nb_shape_str(x->rank, x->dims, ',', a, sizeof a), in_n,
                           nb_shape_str(n, dims, ',', b, sizeof b));
        }
    }
    nb_tinfo_set(&c->out[0], x->dtype, n, dims);
    return NB_OK;
}

/* Flatten (Operators.md, opset 1-13): [prod(d[0:axis]), prod(d[axis:])], axis in [-r, r]. */
static nb_err infer_flatten(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t axis = nb_attr_int(c->node, "axis", 1);
    int64_t dims[2] = {-1, -1};
    if (x->rank >= 0) {
        if (axis < -(int64_t)x->rank || axis > x->rank)
            return nb_fail(c->st, NB_ERR_ATTR, "axis %" PRId64 " is out of range for rank %d",
                           axis, x->rank);
        int a = (int)(axis < 0 ? axis + x->rank : axis);
        dims[0] = dims_prod(x->dims, 0, a);
        dims[1] = dims_prod(x->dims, a, x->rank);
        if (dims[0] == -2 || dims[1] == -2)
            return too_big(c, "input size");
    }
    nb_tinfo_set(&c->out[0], x->dtype, 2, dims);
    return NB_OK;
}

/* Squeeze (Operators.md, opset 1-13; axes attribute up to 12, input from 13): removes the
 * listed size-1 dims, or every size-1 dim when axes is absent. */
static nb_err infer_squeeze(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 13;
    nb_err e = nb_need_inputs(c, 1, in_form ? 2 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t axes[NB_MAX_RANK], dims[NB_MAX_RANK];
    int n;
    bool given, known;
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, "axes", axes, NB_MAX_RANK, &n, &given, &known,
                             "axes")))
        return e;
    if (given && known && n == 0)
        given = false; /* an empty axes input squeezes every size-1 dim (as onnxruntime) */
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    if (given && !known) {
        int r = -1;
        if (c->in[1].rank == 1 && c->in[1].dims[0] >= 0 && c->in[1].dims[0] <= x->rank)
            r = x->rank - (int)c->in[1].dims[0];
        nb_tinfo_set(&c->out[0], x->dtype, r, NULL);
        return NB_OK;
    }
    bool drop[NB_MAX_RANK] = {false};
    if (given) {
        if ((e = norm_axes(c, axes, n, x->rank, "axis")))
            return e;
        for (int i = 0; i < n; i++) {
            int64_t d = x->dims[axes[i]];
            if (d >= 0 && d != 1)
                return nb_fail(c->st, NB_ERR_SHAPE, "cannot squeeze axis %d of size %" PRId64,
                               (int)axes[i], d);
            drop[axes[i]] = true;
        }
    } else {
        for (int d = 0; d < x->rank; d++) {
            if (x->dims[d] < 0) {
                nb_out_unknown(c, 0, x->dtype);
                return NB_OK;
            }
            drop[d] = x->dims[d] == 1;
        }
    }
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!drop[d])
            dims[r++] = x->dims[d];
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* Unsqueeze (Operators.md, opset 1-13; axes attribute up to 12, input from 13): inserts
 * size-1 dims at the listed positions of the output (axes in [-(r+n), r+n-1]). */
static nb_err infer_unsqueeze(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 13;
    nb_err e = nb_need_inputs(c, in_form ? 2 : 1, in_form ? 2 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t axes[NB_MAX_RANK], dims[NB_MAX_RANK];
    int n;
    bool given, known;
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, "axes", axes, NB_MAX_RANK, &n, &given, &known,
                             "axes")))
        return e;
    if (!given)
        return nb_fail(c->st, NB_ERR_ATTR, "attribute 'axes' is missing");
    if (!known) {
        int r = -1;
        if (x->rank >= 0 && c->in[1].rank == 1 && c->in[1].dims[0] >= 0) {
            if (x->rank + c->in[1].dims[0] > NB_MAX_RANK)
                return check_rank(c, NB_MAX_RANK + 1);
            r = x->rank + (int)c->in[1].dims[0];
        }
        nb_tinfo_set(&c->out[0], x->dtype, r, NULL);
        return NB_OK;
    }
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int r = x->rank + n;
    if ((e = check_rank(c, r)))
        return e;
    if ((e = norm_axes(c, axes, n, r, "axis")))
        return e;
    bool ins[NB_MAX_RANK] = {false};
    for (int i = 0; i < n; i++)
        ins[axes[i]] = true;
    for (int d = 0, k = 0; d < r; d++)
        dims[d] = ins[d] ? 1 : x->dims[k++];
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* ---------------------------------------------------------------- layout */

/* Transpose (Operators.md, opset 1-13): out.dims[i] = in.dims[perm[i]]; perm defaults to
 * the reversed axes and must be a permutation of 0..r-1. */
static nb_err infer_transpose(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int n;
    const int64_t *perm = nb_attr_ints(c->node, "perm", &n);
    if (perm) {
        bool seen[NB_MAX_RANK] = {false};
        if (n > NB_MAX_RANK || (x->rank >= 0 && n != x->rank))
            return nb_fail(c->st, NB_ERR_ATTR, "perm has %d values for rank %d", n, x->rank);
        for (int i = 0; i < n; i++) {
            if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
                return nb_fail(c->st, NB_ERR_ATTR, "perm is not a permutation of 0..%d", n - 1);
            seen[perm[i]] = true;
        }
    }
    if (x->rank < 0) {
        nb_tinfo_set(&c->out[0], x->dtype, perm ? n : -1, NULL);
        return NB_OK;
    }
    int64_t dims[NB_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        dims[i] = x->dims[perm ? perm[i] : x->rank - 1 - i];
    nb_tinfo_set(&c->out[0], x->dtype, x->rank, dims);
    return NB_OK;
}

/* Concat (Operators.md, opset 1-13): inputs of one rank agree on every dim but axis, whose
 * sizes add up; axis is required from opset 4 (default 1 before). */
static nb_err infer_concat(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, -1);
    if (e)
        return e;
    const nb_attr *aa = nb_attr_find(c->node, "axis");
    if (!aa && c->opset >= 4)
        return nb_fail(c->st, NB_ERR_ATTR, "attribute 'axis' is missing");
    int64_t axis = nb_attr_int(c->node, "axis", 1);
    nb_dtype dt = NB_UNDEFINED;
    int r = -1;
    bool any_unknown_rank = false;
    for (int i = 0; i < c->n_in; i++) {
        const nb_tinfo *t = &c->in[i];
        if (t->dtype != NB_UNDEFINED) {
            if (dt != NB_UNDEFINED && t->dtype != dt)
                return nb_fail(c->st, NB_ERR_GRAPH, "input types differ (%s and %s)",
                               nb_dtype_name(dt), nb_dtype_name(t->dtype));
            dt = t->dtype;
        }
        if (t->rank < 0) {
            any_unknown_rank = true;
            continue;
        }
        if (r >= 0 && t->rank != r)
            return nb_fail(c->st, NB_ERR_SHAPE, "inputs have ranks %d and %d", r, t->rank);
        r = t->rank;
    }
    if (r < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    if (r == 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "cannot concatenate scalars");
    int a;
    if ((e = nb_norm_axis(axis, r, &a, "axis", c->st)))
        return e;
    int64_t dims[NB_MAX_RANK];
    for (int d = 0; d < r; d++)
        dims[d] = d == a ? (any_unknown_rank ? -1 : 0) : -1;
    for (int i = 0; i < c->n_in; i++) {
        const nb_tinfo *t = &c->in[i];
        if (t->rank < 0)
            continue;
        for (int d = 0; d < r; d++) {
            int64_t v = t->dims[d];
            if (d == a) {
                if (v < 0 || dims[d] < 0)
                    dims[d] = -1;
                else if (v > INT64_MAX - dims[d])
                    return too_big(c, "concatenated size");
                else
                    dims[d] += v;
            } else if (v >= 0) {
                if (dims[d] >= 0 && dims[d] != v)
                    return nb_fail(c->st, NB_ERR_SHAPE,
                                   "inputs differ in dim %d (%" PRId64 " and %" PRId64 ")", d,
                                   dims[d], v);
                dims[d] = v;
            }
        }
    }
    nb_tinfo_set(&c->out[0], dt, r, dims);
    return NB_OK;
}

/* Split (Operators.md, opset 1-18): sizes from the 'split' attribute (up to opset 12) or
 * input (13+) must add up to the axis dim; without them the dim is split into n_out equal
 * parts, or with num_outputs (18) into parts of ceil(dim/n), the last one smaller. */
static nb_err infer_split(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 13;
    nb_err e = nb_need_inputs(c, 1, in_form ? 2 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int nout = c->n_out;
    int64_t sp[MAXV];
    int n;
    bool given, known;
    if (nout < 1 || nout > MAXV)
        return nb_fail(c->st, NB_ERR_GRAPH, "has %d outputs (1..%d)", nout, MAXV);
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, "split", sp, MAXV, &n, &given, &known,
                             "split")))
        return e;
    if (given && known && n == 0)
        given = false; /* an empty split is an equal split (as onnxruntime) */
    const nb_attr *na = nb_attr_find(c->node, "num_outputs");
    if (na && c->opset >= 18) {
        if (given)
            return nb_fail(c->st, NB_ERR_ATTR, "split and num_outputs are both given");
        if (na->type != NB_ATTR_INT || na->i != nout)
            return nb_fail(c->st, NB_ERR_ATTR, "num_outputs %" PRId64 " but the node has %d "
                           "outputs", na->i, nout);
    }
    if (given && known) {
        if (n != nout)
            return nb_fail(c->st, NB_ERR_ATTR, "split has %d values for %d outputs", n, nout);
        for (int i = 0; i < n; i++)
            if (sp[i] < 0)
                return nb_fail(c->st, NB_ERR_ATTR, "split value %" PRId64 " is negative", sp[i]);
    }
    for (int o = 0; o < nout; o++)
        nb_out_same(c, o, 0);
    if (x->rank < 0)
        return NB_OK;
    int a;
    if ((e = nb_norm_axis(nb_attr_int(c->node, "axis", 0), x->rank, &a, "axis", c->st)))
        return e;
    int64_t dim = x->dims[a];
    if (given && !known) {
        for (int o = 0; o < nout; o++)
            c->out[o].dims[a] = -1;
        return NB_OK;
    }
    if (given) {
        int64_t sum = 0;
        for (int i = 0; i < n; i++) {
            if (sp[i] > INT64_MAX - sum)
                return too_big(c, "split sum");
            sum += sp[i];
        }
        if (dim >= 0 && sum != dim)
            return nb_fail(c->st, NB_ERR_SHAPE, "split sizes add up to %" PRId64
                           ", the axis has %" PRId64, sum, dim);
        for (int o = 0; o < nout; o++)
            c->out[o].dims[a] = sp[o];
        return NB_OK;
    }
    if (dim < 0) {
        for (int o = 0; o < nout; o++)
            c->out[o].dims[a] = -1;
        return NB_OK;
    }
    int64_t chunk, last;
    if (na && c->opset >= 18) {
        chunk = dim / nout + (dim % nout != 0);
        last = dim - chunk * (nout - 1);
        if (last < 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "cannot split %" PRId64 " into %d parts", dim,
                           nout);
    } else {
        if (dim % nout)
            return nb_fail(c->st, NB_ERR_SHAPE,
                           "axis of size %" PRId64 " cannot be split into %d equal parts", dim,
                           nout);
        chunk = last = dim / nout;
    }
    for (int o = 0; o < nout; o++)
        c->out[o].dims[a] = o == nout - 1 ? last : chunk;
    return NB_OK;
}

/* Slice (Operators.md, opset 1-13; starts/ends/axes attributes up to opset 9, inputs with
 * steps from 10): per axis, negative start/end count from the end; then, for step > 0,
 * both clamp to [0, dim], for step < 0 start clamps to [0, dim-1] and end to [-1, dim-1];
 * the length is ceil((end - start) / step), at least 0. */
static nb_err infer_slice(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 10;
    nb_err e = nb_need_inputs(c, in_form ? 3 : 1, in_form ? 5 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t st[NB_MAX_RANK], en[NB_MAX_RANK], ax[NB_MAX_RANK], sp[NB_MAX_RANK];
    int ns, ne, na, nsp;
    bool gs, ge, ga, gsp, ks, ke, ka, ksp;
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, "starts", st, NB_MAX_RANK, &ns, &gs, &ks,
                             "starts")) ||
        (e = ints_in_or_attr(c, in_form ? 2 : -1, "ends", en, NB_MAX_RANK, &ne, &ge, &ke,
                             "ends")) ||
        (e = ints_in_or_attr(c, in_form ? 3 : -1, "axes", ax, NB_MAX_RANK, &na, &ga, &ka,
                             "axes")))
        return e;
    if (in_form) {
        if ((e = ints_in_or_attr(c, 4, NULL, sp, NB_MAX_RANK, &nsp, &gsp, &ksp, "steps")))
            return e;
    } else {
        gsp = false;
        ksp = true;
        nsp = 0;
    }
    if (!gs || !ge)
        return nb_fail(c->st, NB_ERR_ATTR, "starts and ends are required");
    bool all_known = ks && ke && ka && ksp;
    if (ks && ke && ns != ne)
        return nb_fail(c->st, NB_ERR_SHAPE, "starts has %d values, ends %d", ns, ne);
    if (all_known && ((ga && na != ns) || (gsp && nsp != ns)))
        return nb_fail(c->st, NB_ERR_SHAPE, "starts, ends, axes and steps differ in length");
    for (int i = 0; ksp && i < nsp; i++)
        if (sp[i] == 0)
            return nb_fail(c->st, NB_ERR_ATTR, "steps must not be 0");
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int r = x->rank;
    int64_t dims[NB_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    int cnt = ga ? na : ns;
    if (ka && ga && (e = norm_axes(c, ax, na, r, "axis")))
        return e;
    if (!ka || (!ga && !ks)) {
        for (int d = 0; d < r; d++)
            dims[d] = -1;
        nb_tinfo_set(&c->out[0], x->dtype, r, dims);
        return NB_OK;
    }
    if (!ga) {
        if (ns > r)
            return nb_fail(c->st, NB_ERR_SHAPE, "%d starts for rank %d", ns, r);
        for (int i = 0; i < ns; i++)
            ax[i] = i;
    }
    for (int i = 0; i < cnt; i++) {
        int a = (int)ax[i];
        int64_t d = x->dims[a];
        if (!all_known || d < 0) {
            dims[a] = -1;
            continue;
        }
        int64_t s = st[i], t = en[i], step = gsp ? sp[i] : 1;
        if (s < 0)
            s += d;
        if (t < 0)
            t += d;
        int64_t len;
        if (step > 0) {
            s = s < 0 ? 0 : (s > d ? d : s);
            t = t < 0 ? 0 : (t > d ? d : t);
            len = t > s ? (t - s - 1) / step + 1 : 0;
        } else {
            s = s < 0 ? 0 : (s > d - 1 ? d - 1 : s);
            t = t < -1 ? -1 : (t > d - 1 ? d - 1 : t);
            len = s > t ? (s - t - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1 : 0;
        }
        dims[a] = len;
    }
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* Pad (Operators.md, opset 1-18; pads/value attributes up to opset 10, inputs from 11, axes
 * input from 18): out.dims[a] = dims[a] + pads[begin] + pads[end] (negative pads crop);
 * modes constant, reflect, edge. */
static nb_err infer_pad(nb_infer_ctx *c)
{
    bool in_form = c->opset >= 11;
    nb_err e = nb_need_inputs(c, in_form ? 2 : 1, in_form ? 4 : 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    const char *mode = nb_attr_str(c->node, "mode", "constant");
    bool constant = !strcmp(mode, "constant");
    if (!constant && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        return nb_fail(c->st, NB_ERR_ATTR, "mode '%s' is not supported (constant, reflect, edge)",
                       mode);
    int64_t pads[2 * NB_MAX_RANK], axes[NB_MAX_RANK];
    int np, na = 0;
    bool gp, kp, ga = false, ka = true;
    if ((e = ints_in_or_attr(c, in_form ? 1 : -1, c->opset < 2 ? "paddings" : "pads", pads,
                             2 * NB_MAX_RANK, &np, &gp, &kp, "pads")))
        return e;
    if (!gp)
        return nb_fail(c->st, NB_ERR_ATTR, "pads are missing");
    if (in_form && nb_has_in(c, 2) && c->in[2].rank > 0) {
        int64_t n = dims_prod(c->in[2].dims, 0, c->in[2].rank);
        if (n >= 0 && n != 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "constant_value must be a scalar");
    }
    if (in_form && c->n_in > 3 &&
        (e = ints_in_or_attr(c, 3, NULL, axes, NB_MAX_RANK, &na, &ga, &ka, "axes")))
        return e;
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int r = x->rank;
    int64_t dims[NB_MAX_RANK];
    if (!kp || !ka) {
        nb_tinfo_set(&c->out[0], x->dtype, r, NULL);
        return NB_OK;
    }
    if (!ga) {
        na = r;
        for (int i = 0; i < r; i++)
            axes[i] = i;
    } else if ((e = norm_axes(c, axes, na, r, "axis"))) {
        return e;
    }
    if (np != 2 * na)
        return nb_fail(c->st, NB_ERR_SHAPE, "pads has %d values, expected %d", np, 2 * na);
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    for (int i = 0; i < na; i++) {
        int a = (int)axes[i];
        int64_t d = x->dims[a], b = pads[i], en = pads[i + na];
        if (d < 0)
            continue;
        if (b > INT64_MAX / 4 || en > INT64_MAX / 4 || b < -INT64_MAX / 4 || en < -INT64_MAX / 4)
            return too_big(c, "pads");
        int64_t o = d + b + en;
        if (o < 0 || b < -d || en < -d)
            return nb_fail(c->st, NB_ERR_SHAPE, "pads %" PRId64 ",%" PRId64
                           " crop more than axis %d of size %" PRId64 " has", b, en, a, d);
        if (!constant && d == 0 && o > 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "%s padding of an empty axis %d", mode, a);
        dims[a] = o;
    }
    if ((e = check_size(c, x->dtype, r, dims)))
        return e;
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* Tile (Operators.md, opset 6-13): out.dims[i] = dims[i] * repeats[i], repeats a 1-D
 * INT64 tensor with one non-negative value per input dim. */
static nb_err infer_tile(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t rep[NB_MAX_RANK], dims[NB_MAX_RANK];
    int n;
    if (!c->in[1].value) {
        nb_tinfo_set(&c->out[0], x->dtype, x->rank, NULL);
        return NB_OK;
    }
    if ((e = nb_const_ints(c, 1, rep, NB_MAX_RANK, &n, "repeats")))
        return e;
    if (x->rank >= 0 && n != x->rank)
        return nb_fail(c->st, NB_ERR_SHAPE, "repeats has %d values for rank %d", n, x->rank);
    for (int i = 0; i < n; i++)
        if (rep[i] < 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "repeats value %" PRId64 " is negative", rep[i]);
    if (x->rank < 0) {
        nb_tinfo_set(&c->out[0], x->dtype, n, NULL);
        return NB_OK;
    }
    for (int i = 0; i < n; i++) {
        if (rep[i] == 0)
            dims[i] = 0;
        else if (x->dims[i] < 0)
            dims[i] = -1;
        else if (!nb_mul_ok(x->dims[i], rep[i], &dims[i]))
            return too_big(c, "tiled shape");
    }
    if ((e = check_size(c, x->dtype, n, dims)))
        return e;
    nb_tinfo_set(&c->out[0], x->dtype, n, dims);
    return NB_OK;
}

/* Expand (Operators.md, opset 8-13): numpy broadcast of the input shape and the shape
 * input (either may have the larger rank). */
static nb_err infer_expand(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t shp[NB_MAX_RANK], dims[NB_MAX_RANK];
    int n, r;
    if (!c->in[1].value) {
        int ns = c->in[1].rank == 1 ? (int)c->in[1].dims[0] : -1;
        if (c->in[1].rank == 1 && c->in[1].dims[0] > NB_MAX_RANK)
            return check_rank(c, NB_MAX_RANK + 1);
        r = (x->rank < 0 || ns < 0) ? -1 : (x->rank > ns ? x->rank : ns);
        nb_tinfo_set(&c->out[0], x->dtype, r, NULL);
        return NB_OK;
    }
    if ((e = nb_const_ints(c, 1, shp, NB_MAX_RANK, &n, "shape")))
        return e;
    for (int i = 0; i < n; i++)
        if (shp[i] < 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "shape value %" PRId64 " is negative", shp[i]);
    if (x->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    if ((e = nb_broadcast_shape(x->rank, x->dims, n, shp, &r, dims, c->st)))
        return e;
    if ((e = check_size(c, x->dtype, r, dims)))
        return e;
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* SpaceToDepth (Operators.md, opset 1-13): [N,C,H,W] -> [N, C*b*b, H/b, W/b]. */
static nb_err infer_space_to_depth(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t b = nb_attr_int(c->node, "blocksize", 0), bb;
    if (b <= 0 || !nb_mul_ok(b, b, &bb))
        return nb_fail(c->st, NB_ERR_ATTR, "blocksize %" PRId64 " is invalid", b);
    if (x->rank < 0) {
        nb_tinfo_set(&c->out[0], x->dtype, 4, NULL);
        return NB_OK;
    }
    if (x->rank != 4)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank 4, not %d", x->rank);
    int64_t dims[4] = {x->dims[0], -1, -1, -1};
    if (x->dims[1] >= 0 && !nb_mul_ok(x->dims[1], bb, &dims[1]))
        return too_big(c, "channels");
    for (int d = 2; d < 4; d++) {
        if (x->dims[d] >= 0 && x->dims[d] % b)
            return nb_fail(c->st, NB_ERR_SHAPE, "dim %d (%" PRId64 ") is not a multiple of "
                           "blocksize %" PRId64, d, x->dims[d], b);
        dims[d] = x->dims[d] >= 0 ? x->dims[d] / b : -1;
    }
    nb_tinfo_set(&c->out[0], x->dtype, 4, dims);
    return NB_OK;
}

/* DepthToSpace (Operators.md, opset 1-13; mode DCR default, CRD from 11):
 * [N,C,H,W] -> [N, C/(b*b), H*b, W*b]. */
static nb_err infer_depth_to_space(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t b = nb_attr_int(c->node, "blocksize", 0), bb;
    if (b <= 0 || !nb_mul_ok(b, b, &bb))
        return nb_fail(c->st, NB_ERR_ATTR, "blocksize %" PRId64 " is invalid", b);
    const char *mode = nb_attr_str(c->node, "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return nb_fail(c->st, NB_ERR_ATTR, "mode '%s' is not DCR or CRD", mode);
    if (x->rank < 0) {
        nb_tinfo_set(&c->out[0], x->dtype, 4, NULL);
        return NB_OK;
    }
    if (x->rank != 4)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank 4, not %d", x->rank);
    int64_t dims[4] = {x->dims[0], -1, -1, -1};
    if (x->dims[1] >= 0) {
        if (x->dims[1] % bb)
            return nb_fail(c->st, NB_ERR_SHAPE, "channels (%" PRId64 ") are not a multiple of "
                           "blocksize^2 (%" PRId64 ")", x->dims[1], bb);
        dims[1] = x->dims[1] / bb;
    }
    for (int d = 2; d < 4; d++)
        if (x->dims[d] >= 0 && !nb_mul_ok(x->dims[d], b, &dims[d]))
            return too_big(c, "output dims");
    nb_tinfo_set(&c->out[0], x->dtype, 4, dims);
    return NB_OK;
}

/* ---------------------------------------------------------------- indexing */

/* Gather (Operators.md, opset 1-13): out shape = data[:axis] + indices + data[axis+1:]. */
static nb_err infer_gather(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e)
        e = check_index_type(c, 1, "indices");
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0], *ind = &c->in[1];
    int a = 0;
    if (x->rank >= 0 &&
        (e = nb_norm_axis(nb_attr_int(c->node, "axis", 0), x->rank, &a, "axis", c->st)))
        return e;
    if (x->rank < 0 || ind->rank < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int r = x->rank + ind->rank - 1;
    if ((e = check_rank(c, r)))
        return e;
    int64_t dims[NB_MAX_RANK];
    int k = 0;
    for (int d = 0; d < a; d++)
        dims[k++] = x->dims[d];
    for (int d = 0; d < ind->rank; d++)
        dims[k++] = ind->dims[d];
    for (int d = a + 1; d < x->rank; d++)
        dims[k++] = x->dims[d];
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

/* Shared checks of GatherElements / ScatterElements: data and indices of one rank, indices
 * no larger than data on every axis but 'axis'. */
static nb_err check_elements(nb_infer_ctx *c, const nb_tinfo *x, const nb_tinfo *ind, int *axis)
{
    nb_err e;
    *axis = 0;
    if (x->rank >= 0 &&
        (e = nb_norm_axis(nb_attr_int(c->node, "axis", 0), x->rank, axis, "axis", c->st)))
        return e;
    if (x->rank < 0 || ind->rank < 0)
        return NB_OK;
    if (x->rank != ind->rank)
        return nb_fail(c->st, NB_ERR_SHAPE, "indices have rank %d, data %d", ind->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != *axis && x->dims[d] >= 0 && ind->dims[d] > x->dims[d])
            return nb_fail(c->st, NB_ERR_SHAPE, "indices dim %d (%" PRId64 ") exceeds the "
                           "data's (%" PRId64 ")", d, ind->dims[d], x->dims[d]);
    return NB_OK;
}

/* GatherElements (Operators.md, opset 11-13): output has the indices' shape. */
static nb_err infer_gather_elements(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    int a;
    if (!e)
        e = check_index_type(c, 1, "indices");
    if (!e)
        e = check_elements(c, &c->in[0], &c->in[1], &a);
    if (e)
        return e;
    nb_tinfo_set(&c->out[0], c->in[0].dtype, c->in[1].rank, c->in[1].dims);
    return NB_OK;
}

/* GatherND (Operators.md, opset 11-13; batch_dims from 12): indices [..., k] address
 * data[b + k:] slices; out shape = indices[:-1] + data[batch_dims + k:]. */
static nb_err infer_gather_nd(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e && c->in[1].dtype != NB_UNDEFINED && c->in[1].dtype != NB_INT64)
        e = nb_fail(c->st, NB_ERR_GRAPH, "indices must be INT64");
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0], *ind = &c->in[1];
    int64_t b = nb_attr_int(c->node, "batch_dims", 0);
    if (b < 0 || b >= NB_MAX_RANK)
        return nb_fail(c->st, NB_ERR_ATTR, "batch_dims %" PRId64 " is invalid", b);
    if ((x->rank >= 0 && x->rank <= b) || (ind->rank >= 0 && ind->rank <= b))
        return nb_fail(c->st, NB_ERR_ATTR, "batch_dims %" PRId64 " must be less than both ranks",
                       b);
    if (x->rank < 0 || ind->rank < 0 || ind->dims[ind->rank - 1] < 0) {
        nb_out_unknown(c, 0, x->dtype);
        return NB_OK;
    }
    int64_t k = ind->dims[ind->rank - 1];
    if (k < 1 || k > x->rank - b)
        return nb_fail(c->st, NB_ERR_SHAPE, "indices' last dim %" PRId64 " must be in [1, %d]", k,
                       x->rank - (int)b);
    for (int d = 0; d < b; d++)
        if (x->dims[d] >= 0 && ind->dims[d] >= 0 && x->dims[d] != ind->dims[d])
            return nb_fail(c->st, NB_ERR_SHAPE, "batch dim %d differs (%" PRId64 " and %" PRId64
                           ")", d, x->dims[d], ind->dims[d]);
    int r = ind->rank - 1 + x->rank - (int)b - (int)k;
    if ((e = check_rank(c, r)))
        return e;
    int64_t dims[NB_MAX_RANK];
    int n = 0;
    for (int d = 0; d < ind->rank - 1; d++)
        dims[n++] = ind->dims[d];
    for (int d = (int)(b + k); d < x->rank; d++)
        dims[n++] = x->dims[d];
    nb_tinfo_set(&c->out[0], x->dtype, r, dims);
    return NB_OK;
}

static nb_err check_reduction(nb_infer_ctx *c)
{
    const char *red = nb_attr_str(c->node, "reduction", "none");
    if (!strcmp(red, "none") || !strcmp(red, "add") || !strcmp(red, "mul") ||
        ((!strcmp(red, "max") || !strcmp(red, "min")) && c->opset >= 18))
        return NB_OK;
    return nb_fail(c->st, NB_ERR_ATTR, "reduction '%s' is not supported", red);
}

/* ScatterElements (Operators.md, opset 11-18; reduction add/mul from 16, max/min from 18)
 * and Scatter (opset 9-10): output = data with updates written at the indices along axis;
 * indices and updates have one shape. */
static nb_err infer_scatter_elements(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    int a;
    if (!e)
        e = check_index_type(c, 1, "indices");
    if (!e)
        e = check_reduction(c);
    if (!e)
        e = check_elements(c, &c->in[0], &c->in[1], &a);
    if (e)
        return e;
    const nb_tinfo *ind = &c->in[1], *u = &c->in[2];
    if (ind->rank >= 0 && u->rank >= 0) {
        bool ok = ind->rank == u->rank;
        for (int d = 0; ok && d < u->rank; d++)
            ok = ind->dims[d] < 0 || u->dims[d] < 0 || ind->dims[d] == u->dims[d];
        if (!ok)
            return nb_fail(c->st, NB_ERR_SHAPE, "updates and indices differ in shape");
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* ScatterND (Operators.md, opset 11-18; reduction add/mul from 16, max/min from 18):
 * indices [..., k], updates of shape indices[:-1] + data[k:]. */
static nb_err infer_scatter_nd(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    if (!e && c->in[1].dtype != NB_UNDEFINED && c->in[1].dtype != NB_INT64)
        e = nb_fail(c->st, NB_ERR_GRAPH, "indices must be INT64");
    if (!e)
        e = check_reduction(c);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0], *ind = &c->in[1], *u = &c->in[2];
    if (x->rank >= 0 && ind->rank >= 0 && u->rank >= 0) {
        if (ind->rank < 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "indices must have rank >= 1");
        int64_t k = ind->dims[ind->rank - 1];
        if (k >= 0) {
            if (k > x->rank)
                return nb_fail(c->st, NB_ERR_SHAPE, "indices' last dim %" PRId64
                               " exceeds the data rank %d", k, x->rank);
            bool ok = u->rank == ind->rank - 1 + x->rank - (int)k;
            for (int d = 0; ok && d < u->rank; d++) {
                int64_t want = d < ind->rank - 1 ? ind->dims[d] : x->dims[k + d - (ind->rank - 1)];
                ok = want < 0 || u->dims[d] < 0 || u->dims[d] == want;
            }
            if (!ok)
                return nb_fail(c->st, NB_ERR_SHAPE, "updates must have shape indices[:-1] + "
                               "data[%" PRId64 ":]", k);
        }
    }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* Trilu (Operators.md, opset 14): keeps the upper (upper=1) or lower triangle of the last
 * two dims, offset by the diagonal k (optional scalar input). */
static nb_err infer_trilu(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 2);
    if (e)
        return e;
    if (c->in[0].rank >= 0 && c->in[0].rank < 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank >= 2, not %d", c->in[0].rank);
    if (nb_has_in(c, 1) && c->in[1].rank > 0 && dims_prod(c->in[1].dims, 0, c->in[1].rank) > 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "k must be a scalar");
    if (nb_has_in(c, 1) && c->in[1].dtype != NB_UNDEFINED && c->in[1].dtype != NB_INT64)
        return nb_fail(c->st, NB_ERR_GRAPH, "k must be INT64");
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* OneHot (Operators.md, opset 9-11): output rank r+1 with a new axis of size depth at
 * 'axis'; values [off, on] give the output type. */
static nb_err infer_onehot(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    if (e)
        return e;
    const nb_tinfo *ind = &c->in[0];
    nb_dtype dt = c->in[2].dtype;
    if (c->in[2].rank >= 0 && (c->in[2].rank != 1 || (c->in[2].dims[0] >= 0 &&
                                                      c->in[2].dims[0] != 2)))
        return nb_fail(c->st, NB_ERR_SHAPE, "values must be a 1-D tensor of 2 elements");
    if (c->in[1].rank > 0 && dims_prod(c->in[1].dims, 0, c->in[1].rank) > 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "depth must be a scalar");
    int64_t depth = -1;
    double dv;
    if (scalar_value(c, 1, &dv)) {
        if (!(dv >= 0.0 && dv < 9.0e18))
            return nb_fail(c->st, NB_ERR_SHAPE, "depth %.0f is invalid", dv);
        depth = (int64_t)dv;
    }
    if (ind->rank < 0) {
        nb_out_unknown(c, 0, dt);
        return NB_OK;
    }
    int r = ind->rank + 1, a;
    if ((e = check_rank(c, r)) ||
        (e = nb_norm_axis(nb_attr_int(c->node, "axis", -1), r, &a, "axis", c->st)))
        return e;
    int64_t dims[NB_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++)
        dims[d] = d == a ? depth : ind->dims[k++];
    if ((e = check_size(c, dt, r, dims)))
        return e;
    nb_tinfo_set(&c->out[0], dt, r, dims);
    return NB_OK;
}

/* NonZero (Operators.md, opset 9-13): INT64 [rank, number of non-zero elements]; the count
 * is known when the input value is (a scalar counts as rank 1, as numpy does). */
static nb_err infer_nonzero(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t dims[2] = {x->rank < 0 ? -1 : (x->rank == 0 ? 1 : x->rank), -1};
    const nb_tensor *v = x->value;
    if (v) {
        int64_t n = 0;
        size_t es = nb_dtype_size(v->dtype);
        const uint8_t *p = v->data;
        for (int64_t i = 0; i < v->numel; i++) {
            bool nz;
            if (v->dtype == NB_FLOAT)
                nz = ((const float *)v->data)[i] != 0.0f;
            else if (v->dtype == NB_FLOAT16)
                nz = (((const uint16_t *)v->data)[i] & 0x7fff) != 0;
            else {
                nz = false;
                for (size_t b = 0; b < es; b++)
                    nz |= p[(size_t)i * es + b] != 0;
            }
            n += nz;
        }
        dims[1] = n;
    }
    nb_tinfo_set(&c->out[0], NB_INT64, 2, dims);
    return NB_OK;
}

/* ReverseSequence (Operators.md, opset 10): output has the input's shape; batch_axis and
 * time_axis are 0 and 1 in either order; sequence_lens has one entry per batch. */
static nb_err infer_reverse_sequence(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e)
        e = check_index_type(c, 1, "sequence_lens");
    if (e)
        return e;
    int64_t ba = nb_attr_int(c->node, "batch_axis", 1), ta = nb_attr_int(c->node, "time_axis", 0);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return nb_fail(c->st, NB_ERR_ATTR, "batch_axis %" PRId64 " and time_axis %" PRId64
                       " must be 0 and 1", ba, ta);
    const nb_tinfo *x = &c->in[0], *l = &c->in[1];
    if (x->rank >= 0 && x->rank < 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must have rank >= 2");
    if (l->rank >= 0 && l->rank != 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "sequence_lens must be 1-D");
    if (x->rank >= 0 && l->rank == 1 && x->dims[ba] >= 0 && l->dims[0] >= 0 &&
        x->dims[ba] != l->dims[0])
        return nb_fail(c->st, NB_ERR_SHAPE, "sequence_lens has %" PRId64 " entries for batch %"
                       PRId64, l->dims[0], x->dims[ba]);
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* ---------------------------------------------------------------- generators */

/* Shape (Operators.md, opset 1-15; start/end from 15): INT64 1-D of the dims in
 * [start, end), both clamped to [0, r] after adding r to negatives. The value is set
 * whenever those dims are known, so that shape arithmetic folds at import. */
static nb_err infer_shape(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_tinfo *x = &c->in[0];
    int64_t len = -1;
    if (x->rank < 0) {
        nb_tinfo_set(&c->out[0], NB_INT64, 1, &len);
        return NB_OK;
    }
    int64_t r = x->rank;
    int64_t s = c->opset >= 15 ? nb_attr_int(c->node, "start", 0) : 0;
    int64_t en = c->opset >= 15 ? nb_attr_int(c->node, "end", r) : r;
    if (s < 0)
        s = s < -r ? 0 : s + r;
    if (en < 0)
        en = en < -r ? 0 : en + r;
    s = s > r ? r : s;
    en = en > r ? r : en;
    len = en > s ? en - s : 0;
    nb_tinfo_set(&c->out[0], NB_INT64, 1, &len);
    for (int64_t d = s; d < en; d++)
        if (x->dims[d] < 0)
            return NB_OK;
    return nb_new_value_i64(x->dims + s, (int)len, false, &c->out[0].value, c->st);
}

/* Size (Operators.md, opset 1-13): INT64 scalar element count, set as the value when the
 * input shape is known. */
static nb_err infer_size(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_tinfo_set(&c->out[0], NB_INT64, 0, NULL);
    int64_t n = tinfo_numel(&c->in[0]);
    if (n == -2)
        return too_big(c, "input size");
    if (n < 0)
        return NB_OK;
    return nb_new_value_i64(&n, 1, true, &c->out[0].value, c->st);
}

/* ConstantOfShape (Operators.md, opset 9): a tensor of the shape given by the INT64 input,
 * filled with the one-element 'value' attribute (default float 0). */
static nb_err infer_constant_of_shape(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_dtype dt = NB_FLOAT;
    const nb_attr *va = nb_attr_find(c->node, "value");
    if (va) {
        if (va->type != NB_ATTR_TENSOR || !va->t || va->t->numel != 1)
            return nb_fail(c->st, NB_ERR_ATTR, "value must be a one-element tensor");
        dt = va->t->dtype;
    }
    if (c->in[0].dtype != NB_UNDEFINED && c->in[0].dtype != NB_INT64)
        return nb_fail(c->st, NB_ERR_GRAPH, "input must be INT64");
    if (!c->in[0].value) {
        int r = c->in[0].rank == 1 ? (int)c->in[0].dims[0] : -1;
        if (c->in[0].rank == 1 && c->in[0].dims[0] > NB_MAX_RANK)
            return check_rank(c, NB_MAX_RANK + 1);
        nb_tinfo_set(&c->out[0], dt, r, NULL);
        return NB_OK;
    }
    int64_t dims[NB_MAX_RANK];
    int n;
    if ((e = nb_const_ints(c, 0, dims, NB_MAX_RANK, &n, "shape")))
        return e;
    for (int i = 0; i < n; i++)
        if (dims[i] < 0)
            return nb_fail(c->st, NB_ERR_SHAPE, "shape value %" PRId64 " is negative", dims[i]);
    if ((e = check_size(c, dt, n, dims)))
        return e;
    nb_tinfo_set(&c->out[0], dt, n, dims);
    return NB_OK;
}

/* Range (Operators.md, opset 11): 1-D of max(ceil((limit - start) / delta), 0) elements
 * start + i * delta; the three scalar inputs share one type. */
static nb_err infer_range(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    if (e)
        return e;
    nb_dtype dt = c->in[0].dtype;
    for (int i = 0; i < 3; i++) {
        if (c->in[i].dtype != NB_UNDEFINED && dt != NB_UNDEFINED && c->in[i].dtype != dt)
            return nb_fail(c->st, NB_ERR_GRAPH, "inputs have different types");
        if (c->in[i].rank > 0 && dims_prod(c->in[i].dims, 0, c->in[i].rank) > 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "input %d must be a scalar", i);
    }
    int64_t n = -1;
    const nb_tensor *ts = c->in[0].value, *tl = c->in[1].value, *td = c->in[2].value;
    if (ts && tl && td) {
        if (ts->numel != 1 || tl->numel != 1 || td->numel != 1)
            return nb_fail(c->st, NB_ERR_SHAPE, "start, limit and delta must be scalars");
        if (nb_dtype_is_float(ts->dtype)) {
            double s = nb_tensor_get_f64(ts, 0), l = nb_tensor_get_f64(tl, 0);
            double d = nb_tensor_get_f64(td, 0);
            if (dt == NB_FLOAT) { /* the count as float32 arithmetic gives it */
                s = (float)s;
                l = (float)l;
                d = (float)d;
            }
            double q = ceil((l - s) / d);
            if (d == 0.0 || isnan(q) || q > 9.0e18)
                return nb_fail(c->st, NB_ERR_SHAPE, "range %g to %g by %g is invalid", s, l, d);
            n = q > 0 ? (int64_t)q : 0;
        } else {
            int64_t s = nb_tensor_get_i64(ts, 0), l = nb_tensor_get_i64(tl, 0);
            int64_t d = nb_tensor_get_i64(td, 0);
            if (d == 0)
                return nb_fail(c->st, NB_ERR_SHAPE, "delta must not be 0");
            uint64_t diff, step;
            if (d > 0) {
                diff = l > s ? (uint64_t)l - (uint64_t)s : 0;
                step = (uint64_t)d;
            } else {
                diff = s > l ? (uint64_t)s - (uint64_t)l : 0;
                step = (uint64_t)0 - (uint64_t)d;
            }
            uint64_t q = diff / step + (diff % step != 0);
            if (q > (uint64_t)INT64_MAX)
                return too_big(c, "range");
            n = (int64_t)q;
        }
        if ((e = check_size(c, dt, 1, &n)))
            return e;
    }
    nb_tinfo_set(&c->out[0], dt, 1, &n);
    return NB_OK;
}

/* EyeLike (Operators.md, opset 9): a 2-D tensor of the input's shape with ones on the
 * diagonal k; type from the 'dtype' attribute, else the input's. */
static nb_err infer_eyelike(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_dtype dt = c->in[0].dtype;
    const nb_attr *da = nb_attr_find(c->node, "dtype");
    if (da) {
        dt = (nb_dtype)da->i;
        if (!nb_dtype_supported(dt))
            return nb_fail(c->st, NB_ERR_UNSUPPORTED, "cast to %s is not supported (the Nano "
                           "has no such type)", nb_dtype_name(dt));
    }
    if (c->in[0].rank >= 0 && c->in[0].rank != 2)
        return nb_fail(c->st, NB_ERR_SHAPE, "input must be 2-D, not rank %d", c->in[0].rank);
    nb_tinfo_set(&c->out[0], dt, 2, c->in[0].rank == 2 ? c->in[0].dims : NULL);
    return NB_OK;
}

const nb_infer_entry nb_infer_ops_tensor[] = {
    {"Concat", infer_concat},
    {"ConstantOfShape", infer_constant_of_shape},
    {"DepthToSpace", infer_depth_to_space},
    {"Dropout", infer_dropout},
    {"Expand", infer_expand},
    {"EyeLike", infer_eyelike},
    {"Flatten", infer_flatten},
    {"Gather", infer_gather},
    {"GatherElements", infer_gather_elements},
    {"GatherND", infer_gather_nd},
    {"Identity", infer_identity},
    {"NonZero", infer_nonzero},
    {"OneHot", infer_onehot},
    {"Pad", infer_pad},
    {"Range", infer_range},
    {"Reshape", infer_reshape},
    {"ReverseSequence", infer_reverse_sequence},
    {"Scatter", infer_scatter_elements},
    {"ScatterElements", infer_scatter_elements},
    {"ScatterND", infer_scatter_nd},
    {"Shape", infer_shape},
    {"Size", infer_size},
    {"Slice", infer_slice},
    {"SpaceToDepth", infer_space_to_depth},
    {"Split", infer_split},
    {"Squeeze", infer_squeeze},
    {"Tile", infer_tile},
    {"Transpose", infer_transpose},
    {"Trilu", infer_trilu},
    {"Unsqueeze", infer_unsqueeze},
    {NULL, NULL},
};
