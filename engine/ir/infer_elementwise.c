/* nanobench: shape inference of element-wise operators (ONNX Operators.md, opset 11-18):
 * unary math and activations, numpy-broadcast binary arithmetic, comparisons and logic,
 * variadic Max/Min/Sum/Mean, Where, Clip, PRelu, Cast/CastLike. */
#include <string.h>

#include "infer_ops.h"

/* Same dtype and shape as input 0. */
static nb_err infer_unary(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* Bool result with the shape of input 0 (IsNaN, IsInf). */
static nb_err infer_unary_bool(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = NB_BOOL;
    return NB_OK;
}

static nb_err broadcast_inputs(nb_infer_ctx *c, int first, int count, nb_tinfo *out)
{
    out->rank = 0;
    for (int i = first; i < first + count; i++) {
        if (c->in[i].rank < 0) {
            out->rank = -1;
            return NB_OK;
        }
    }
    int r = 0;
    int64_t dims[NB_MAX_RANK];
    for (int i = first; i < first + count; i++) {
        int64_t nd[NB_MAX_RANK];
        int nr;
        nb_err e = nb_broadcast_shape(r, dims, c->in[i].rank, c->in[i].dims, &nr, nd, c->st);
        if (e)
            return e;
        r = nr;
        memcpy(dims, nd, sizeof(int64_t) * (size_t)r);
    }
    out->rank = r;
    memcpy(out->dims, dims, sizeof(int64_t) * (size_t)r);
    return NB_OK;
}

static nb_err same_types(nb_infer_ctx *c, int first, int count)
{
    nb_dtype t = NB_UNDEFINED;
    for (int i = first; i < first + count; i++) {
        nb_dtype d = c->in[i].dtype;
        if (d == NB_UNDEFINED)
            continue;
        if (t != NB_UNDEFINED && d != t)
            return nb_fail(c->st, NB_ERR_GRAPH, "input types differ (%s and %s)",
                           nb_dtype_name(t), nb_dtype_name(d));
        t = d;
    }
    return NB_OK;
}

/* Binary numpy broadcast, result type of input 0 (Add, Sub, Mul, Div, Mod, And, Or, Xor). */
static nb_err infer_binary(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e)
        e = same_types(c, 0, 2);
    if (!e)
        e = broadcast_inputs(c, 0, 2, &c->out[0]);
    c->out[0].dtype = c->in[0].dtype;
    return e;
}

/* Pow: the exponent may have another numeric type (opset 12+). */
static nb_err infer_pow(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (!e)
        e = broadcast_inputs(c, 0, 2, &c->out[0]);
    c->out[0].dtype = c->in[0].dtype;
    return e;
}

/* Comparisons: broadcast, bool result. */
static nb_err infer_compare(nb_infer_ctx *c)
{
    nb_err e = infer_binary(c);
    c->out[0].dtype = NB_BOOL;
    return e;
}

/* Max, Min, Sum, Mean: 1..n inputs broadcast together. */
static nb_err infer_variadic(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, -1);
    if (!e)
        e = same_types(c, 0, c->n_in);
    if (!e)
        e = broadcast_inputs(c, 0, c->n_in, &c->out[0]);
    c->out[0].dtype = c->in[0].dtype;
    return e;
}

static nb_err infer_where(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 3, 3);
    if (!e && c->in[0].dtype != NB_UNDEFINED && c->in[0].dtype != NB_BOOL)
        e = nb_fail(c->st, NB_ERR_GRAPH, "condition must be BOOL, not %s",
                    nb_dtype_name(c->in[0].dtype));
    if (!e)
        e = same_types(c, 1, 2);
    if (!e)
        e = broadcast_inputs(c, 0, 3, &c->out[0]);
    c->out[0].dtype = c->in[1].dtype;
    return e;
}

/* PRelu: slope broadcasts to X (unidirectional); result has X's shape. */
static nb_err infer_prelu(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (e)
        return e;
    nb_out_same(c, 0, 0);
    if (c->opset < 7 && c->in[1].rank == 1 && c->in[0].rank >= 2 &&
        c->in[1].dims[0] == c->in[0].dims[1])
        return NB_OK; /* opset 6: a [C] slope applies along the channel axis */
    if (c->in[0].rank >= 0 && c->in[1].rank >= 0) {
        nb_tinfo t;
        if ((e = broadcast_inputs(c, 0, 2, &t)))
            return e;
        bool ok = t.rank == c->in[0].rank;
        for (int d = 0; ok && d < t.rank; d++)
            ok = c->in[0].dims[d] < 0 || t.dims[d] < 0 || t.dims[d] == c->in[0].dims[d];
        if (!ok)
            return nb_fail(c->st, NB_ERR_SHAPE, "slope does not broadcast to X");
    }
    return NB_OK;
}

/* Clip: opset 11+ takes min and max as optional scalar inputs; opset < 11 as attributes. */
static nb_err infer_clip(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 3);
    if (e)
        return e;
    for (int i = 1; i < c->n_in; i++)
        if (nb_has_in(c, i) && c->in[i].rank > 0) {
            int64_t n = 1;
            for (int d = 0; d < c->in[i].rank; d++)
                n = c->in[i].dims[d] < 0 ? -1 : n * c->in[i].dims[d];
            if (n > 1)
                return nb_fail(c->st, NB_ERR_SHAPE, "%s must be a scalar", i == 1 ? "min" : "max");
        }
    nb_out_same(c, 0, 0);
    return NB_OK;
}

static nb_err check_to(nb_infer_ctx *c, nb_dtype to)
{
    if (!nb_dtype_supported(to))
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "cast to %s is not supported (the Nano has "
                       "no such type)", nb_dtype_name(to));
    return NB_OK;
}

static nb_err infer_cast(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (e)
        return e;
    const nb_attr *a = nb_attr_find(c->node, "to");
    if (!a || a->type != NB_ATTR_INT)
        return nb_fail(c->st, NB_ERR_ATTR, "attribute 'to' is missing");
    if ((e = check_to(c, (nb_dtype)a->i)))
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = (nb_dtype)a->i;
    return NB_OK;
}

static nb_err infer_castlike(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 2, 2);
    if (e)
        return e;
    if (c->in[1].dtype != NB_UNDEFINED && (e = check_to(c, c->in[1].dtype)))
        return e;
    nb_out_same(c, 0, 0);
    c->out[0].dtype = c->in[1].dtype;
    return NB_OK;
}

const nb_infer_entry nb_infer_ops_elementwise[] = {
    {"Abs", infer_unary},          {"Acos", infer_unary},       {"Acosh", infer_unary},
    {"Add", infer_binary},         {"And", infer_compare},      {"Asin", infer_unary},
    {"Asinh", infer_unary},        {"Atan", infer_unary},       {"Atanh", infer_unary},
    {"Cast", infer_cast},          {"CastLike", infer_castlike}, {"Ceil", infer_unary},
    {"Celu", infer_unary},         {"Clip", infer_clip},        {"Cos", infer_unary},
    {"Cosh", infer_unary},         {"Div", infer_binary},       {"Elu", infer_unary},
    {"Equal", infer_compare},      {"Erf", infer_unary},        {"Exp", infer_unary},
    {"Floor", infer_unary},        {"Greater", infer_compare},  {"GreaterOrEqual", infer_compare},
    {"HardSigmoid", infer_unary},  {"HardSwish", infer_unary},  {"IsInf", infer_unary_bool},
    {"IsNaN", infer_unary_bool},   {"LeakyRelu", infer_unary},  {"Less", infer_compare},
    {"LessOrEqual", infer_compare}, {"Log", infer_unary},       {"Max", infer_variadic},
    {"Mean", infer_variadic},      {"Min", infer_variadic},     {"Mish", infer_unary},
    {"Mod", infer_binary},         {"Mul", infer_binary},       {"Neg", infer_unary},
    {"Not", infer_unary},          {"Or", infer_compare},       {"PRelu", infer_prelu},
    {"Pow", infer_pow},            {"Reciprocal", infer_unary}, {"Relu", infer_unary},
    {"Round", infer_unary},        {"Selu", infer_unary},       {"Shrink", infer_unary},
    {"Sigmoid", infer_unary},      {"Sign", infer_unary},       {"Sin", infer_unary},
    {"Sinh", infer_unary},         {"Softplus", infer_unary},   {"Softsign", infer_unary},
    {"Sqrt", infer_unary},         {"Sub", infer_binary},       {"Sum", infer_variadic},
    {"Tan", infer_unary},          {"Tanh", infer_unary},       {"ThresholdedRelu", infer_unary},
    {"Where", infer_where},        {"Xor", infer_compare},
    {NULL, NULL},
};
