/* nanobench: shape inference of element-wise operators (ONNX Operators.md, opset 11-18):
 * unary math and activations, numpy-broadcast binary arithmetic, comparisons and logic,
 * variadic Max/Min/Sum/Mean, Where, Clip, PRelu, Cast/CastLike. */
#include <string.h>

#include "infer_ops.h"

/* Input type constraints (ONNX Operators.md, "Type Constraints"; onnxruntime refuses the
 * others): logic takes BOOL only, math on floats takes FLOAT/FLOAT16, arithmetic takes any
 * number but not BOOL. Without this a Not over INT64 would compute bytes of garbage. */
typedef enum { T_ANY, T_BOOL, T_FLOAT, T_NUMBER, T_SIGNED } tclass;
static const struct {
    const char *op;
    tclass t;
} type_rules[] = {
    {"Not", T_BOOL}, {"And", T_BOOL}, {"Or", T_BOOL}, {"Xor", T_BOOL},
    {"Acos", T_FLOAT}, {"Acosh", T_FLOAT}, {"Asin", T_FLOAT}, {"Asinh", T_FLOAT},
    {"Atan", T_FLOAT}, {"Atanh", T_FLOAT}, {"Cos", T_FLOAT}, {"Cosh", T_FLOAT},
    {"Sin", T_FLOAT}, {"Sinh", T_FLOAT}, {"Tan", T_FLOAT}, {"Tanh", T_FLOAT},
    {"Ceil", T_FLOAT}, {"Floor", T_FLOAT}, {"Round", T_FLOAT}, {"Erf", T_FLOAT},
    {"Exp", T_FLOAT}, {"Log", T_FLOAT}, {"Sqrt", T_FLOAT}, {"Reciprocal", T_FLOAT},
    {"Sigmoid", T_FLOAT}, {"HardSigmoid", T_FLOAT}, {"HardSwish", T_FLOAT},
    {"LeakyRelu", T_FLOAT}, {"Selu", T_FLOAT}, {"Elu", T_FLOAT}, {"Celu", T_FLOAT},
    {"Mish", T_FLOAT}, {"Softplus", T_FLOAT}, {"Softsign", T_FLOAT},
    {"ThresholdedRelu", T_FLOAT}, {"IsNaN", T_FLOAT}, {"IsInf", T_FLOAT}, {"Mean", T_FLOAT},
    {"Abs", T_NUMBER}, {"Sign", T_NUMBER}, {"Relu", T_SIGNED}, {"Neg", T_SIGNED},
    {"Add", T_NUMBER}, {"Sub", T_NUMBER}, {"Mul", T_NUMBER}, {"Div", T_NUMBER},
    {"Mod", T_NUMBER}, {"Pow", T_NUMBER}, {"Max", T_NUMBER}, {"Min", T_NUMBER},
    {"Sum", T_NUMBER}, {"Greater", T_NUMBER}, {"Less", T_NUMBER},
    {"GreaterOrEqual", T_NUMBER}, {"LessOrEqual", T_NUMBER}, {"Clip", T_NUMBER},
    {"PRelu", T_NUMBER}, {"Shrink", T_NUMBER},
};

static nb_err check_types(nb_infer_ctx *c)
{
    tclass t = T_ANY;
    const char *op = c->node->op_type;
    for (size_t i = 0; i < sizeof type_rules / sizeof type_rules[0]; i++)
        if (type_rules[i].op[0] == op[0] && !strcmp(type_rules[i].op, op)) {
            t = type_rules[i].t;
            break;
        }
    /* Pow's exponent and the optional inputs of Clip follow their own rules */
    int n = !strcmp(c->node->op_type, "Pow") || !strcmp(c->node->op_type, "Clip") ? 1 : c->n_in;
    for (int i = 0; i < n && t != T_ANY; i++) {
        nb_dtype d = c->in[i].dtype;
        if (d == NB_UNDEFINED)
            continue;
        bool ok = t == T_BOOL     ? d == NB_BOOL
                  : t == T_FLOAT  ? nb_dtype_is_float(d)
                  : t == T_SIGNED ? nb_dtype_is_signed(d)
                                  : d != NB_BOOL;
        if (!ok)
            return nb_fail(c->st, NB_ERR_GRAPH, "input %d is %s; %s takes %s", i,
                           nb_dtype_name(d), c->node->op_type,
                           t == T_BOOL ? "BOOL" : t == T_FLOAT ? "floating-point tensors"
                           : t == T_SIGNED ? "signed numbers" : "numbers, not BOOL");
    }
    return NB_OK;
}

/* Same dtype and shape as input 0. */
static nb_err infer_unary(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = check_types(c);
    if (e)
        return e;
    nb_out_same(c, 0, 0);
    return NB_OK;
}

/* Bool result with the shape of input 0 (IsNaN, IsInf). */
static nb_err infer_unary_bool(nb_infer_ctx *c)
{
    nb_err e = nb_need_inputs(c, 1, 1);
    if (!e)
        e = check_types(c);
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
        e = check_types(c);
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
        e = check_types(c);
    if (!e && c->in[1].dtype == NB_BOOL)
        e = nb_fail(c->st, NB_ERR_GRAPH, "input 1 is BOOL; Pow takes numbers, not BOOL");
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
        e = check_types(c);
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
    if (!e)
        e = check_types(c);
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
    if (!e)
        e = check_types(c);
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
