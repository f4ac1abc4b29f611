/* nanobench: reference kernels of element-wise operators (ONNX Operators.md, opset 11-18).
 *
 * float32 has dedicated loops per operator (vectorisable); FLOAT16 is computed in float32
 * and rounded to half per element (ONNX Runtime does the same on CPU); integer types are
 * computed exactly in 64 bits and wrapped to the output type.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref_internal.h"

/* ---------------------------------------------------------------- element access */

static inline void set_f64(nb_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case NB_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case NB_FLOAT16: ((uint16_t *)t->data)[i] = nb_float_to_half((float)v); break;
    case NB_BOOL: ((uint8_t *)t->data)[i] = v != 0.0; break;
    default: {
        /* float -> integer: truncate toward zero; NaN -> 0; saturate out of range (ONNX
           leaves it undefined, C makes it UB) */
        int64_t iv;
        if (isnan(v))
            iv = 0;
        else if (v >= 9.2233720368547758e18)
            iv = INT64_MAX;
        else if (v <= -9.2233720368547758e18)
            iv = INT64_MIN;
        else
            iv = (int64_t)v;
        switch (t->dtype) {
        case NB_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)iv; break;
        case NB_INT8: ((int8_t *)t->data)[i] = (int8_t)iv; break;
        case NB_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)iv; break;
        case NB_INT16: ((int16_t *)t->data)[i] = (int16_t)iv; break;
        case NB_INT32: ((int32_t *)t->data)[i] = (int32_t)iv; break;
        case NB_INT64: ((int64_t *)t->data)[i] = iv; break;
        case NB_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)iv; break;
        case NB_UINT64:
            ((uint64_t *)t->data)[i] = v >= 1.8446744073709552e19 ? UINT64_MAX
                                       : v > 9.2233720368547758e18 ? (uint64_t)v : (uint64_t)iv;
            break;
        default: break;
        }
    }
    }
}

static inline void set_i64(nb_tensor *t, int64_t i, int64_t v)
{
    switch (t->dtype) {
    case NB_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case NB_FLOAT16: ((uint16_t *)t->data)[i] = nb_float_to_half((float)v); break;
    case NB_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case NB_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case NB_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case NB_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    case NB_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
    case NB_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case NB_INT64: ((int64_t *)t->data)[i] = v; break;
    case NB_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)v; break;
    case NB_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
    default: break;
    }
}

static inline uint64_t get_u64(const nb_tensor *t, int64_t i)
{
    return t->dtype == NB_UINT64 ? ((const uint64_t *)t->data)[i] : (uint64_t)nb_tensor_get_i64(t, i);
}

static inline bool is_int(nb_dtype d) { return !nb_dtype_is_float(d); }

/* ---------------------------------------------------------------- unary */

typedef struct uparams {
    float alpha, beta, gamma, lambd, bias;
} uparams;

/* 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below (no overflow, no cancellation); both sides
 * are computed so that the choice is a select, not a branch. */
static inline float sigmoidf(float x)
{
    float e = expf(-fabsf(x));
    float d = 1.0f / (1.0f + e);
    return x >= 0 ? d : e * d;
}

static inline float softplusf(float x)
{
    return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

static inline float roundevenf(float x) { return rintf(x); /* default mode: nearest even */ }

#define UNARY_LIST(X)                                                                   \
    X(Abs, fabsf(v))                                                                    \
    X(Acos, acosf(v))                                                                   \
    X(Acosh, acoshf(v))                                                                 \
    X(Asin, asinf(v))                                                                   \
    X(Asinh, asinhf(v))                                                                 \
    X(Atan, atanf(v))                                                                   \
    X(Atanh, atanhf(v))                                                                 \
    X(Ceil, ceilf(v))                                                                   \
    X(Celu, fmaxf(0.0f, v) + fminf(0.0f, p->alpha * (expf(v / p->alpha) - 1.0f)))       \
    X(Cos, cosf(v))                                                                     \
    X(Cosh, coshf(v))                                                                   \
    X(Elu, v < 0 ? p->alpha * (expf(v) - 1.0f) : v)                                     \
    X(Erf, erff(v))                                                                     \
    X(Exp, expf(v))                                                                     \
    X(Floor, floorf(v))                                                                 \
    X(HardSigmoid, fmaxf(0.0f, fminf(1.0f, p->alpha * v + p->beta)))                    \
    X(HardSwish, v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f)))                         \
    X(LeakyRelu, v < 0 ? p->alpha * v : v)                                              \
    X(Log, logf(v))                                                                     \
    X(Mish, v * tanhf(softplusf(v)))                                                    \
    X(Neg, -v)                                                                          \
    X(Reciprocal, 1.0f / v)                                                             \
    X(Relu, v < 0 ? 0.0f : v)                                                           \
    X(Round, roundevenf(v))                                                             \
    X(Selu, v <= 0 ? p->gamma * (p->alpha * expf(v) - p->alpha) : p->gamma * v)         \
    X(Sigmoid, sigmoidf(v))                                                             \
    X(Sign, (float)((v > 0) - (v < 0)))                                                 \
    X(Sin, sinf(v))                                                                     \
    X(Sinh, sinhf(v))                                                                   \
    X(Softplus, softplusf(v))                                                           \
    X(Softsign, v / (1.0f + fabsf(v)))                                                  \
    X(Sqrt, sqrtf(v))                                                                   \
    X(Tan, tanf(v))                                                                     \
    X(Tanh, tanhf(v))                                                                   \
    X(ThresholdedRelu, v > p->alpha ? v : 0.0f)                                         \
    X(Shrink, v < -p->lambd ? v + p->bias : (v > p->lambd ? v - p->bias : 0.0f))

#define UNARY_FN(NAME, EXPR)                                                            \
    NB_REF_AVX2_CLONES static void u_##NAME(const float *x, float *y, int64_t n,        \
                                            const uparams *pp)                         \
    {                                                                                   \
        const uparams P = *pp, *p = &P; /* locals: y cannot alias the parameters */     \
        (void)p;                                                                        \
        for (int64_t i = 0; i < n; i++) {                                               \
            float v = x[i];                                                             \
            y[i] = (EXPR);                                                              \
        }                                                                               \
    }
UNARY_LIST(UNARY_FN)

typedef void (*unary_loop)(const float *, float *, int64_t, const uparams *);

static void unary_params(const nb_node *n, uparams *p)
{
    const char *op = n->op_type;
    p->alpha = nb_attr_float(n, "alpha", !strcmp(op, "LeakyRelu") ? 0.01f
                                         : !strcmp(op, "HardSigmoid") ? 0.2f
                                         : !strcmp(op, "Selu") ? 1.67326319217681884765625f
                                                               : 1.0f);
    p->beta = nb_attr_float(n, "beta", 0.5f);
    p->gamma = nb_attr_float(n, "gamma", 1.05070102214813232421875f);
    p->lambd = nb_attr_float(n, "lambd", 0.5f);
    p->bias = nb_attr_float(n, "bias", 0.0f);
}

/* Integer forms of the unary ops that accept integers. */
static nb_err unary_int(nb_kctx *k, const char *op)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    bool u64 = x->dtype == NB_UINT64;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t v = nb_tensor_get_i64(x, i);
        int64_t r;
        if (!strcmp(op, "Abs"))
            r = u64 || v >= 0 ? v : (int64_t)(0 - (uint64_t)v);
        else if (!strcmp(op, "Neg"))
            r = (int64_t)(0 - (uint64_t)v);
        else if (!strcmp(op, "Relu"))
            r = !u64 && v < 0 ? 0 : v;
        else if (!strcmp(op, "Sign"))
            r = u64 ? (v != 0) : (v > 0) - (v < 0);
        else if (!strcmp(op, "Ceil") || !strcmp(op, "Floor") || !strcmp(op, "Round"))
            r = v;
        else
            return nb_fail(k->st, NB_ERR_UNSUPPORTED, "%s on %s is not supported", op,
                           nb_dtype_name(x->dtype));
        set_i64(y, i, r);
    }
    return NB_OK;
}

static nb_err k_unary(nb_kctx *k)
{
    static const struct {
        const char *op;
        unary_loop fn;
    } table[] = {
#define UNARY_ENTRY(NAME, EXPR) {#NAME, u_##NAME},
        UNARY_LIST(UNARY_ENTRY)
#undef UNARY_ENTRY
    };
    const char *op = k->node->op_type;
    unary_loop fn = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].op, op))
            fn = table[i].fn;
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    if (!fn)
        return nb_fail(k->st, NB_ERR_INTERNAL, "no loop for %s", op);
    if (is_int(x->dtype))
        return unary_int(k, op);
    uparams p;
    unary_params(k->node, &p);
    if (x->dtype == NB_FLOAT) {
        fn(x->data, y->data, x->numel, &p);
        return NB_OK;
    }
    /* FLOAT16: widen, compute, round */
    float buf[256];
    for (int64_t i = 0; i < x->numel; i += 256) {
        int64_t m = x->numel - i < 256 ? x->numel - i : 256;
        for (int64_t j = 0; j < m; j++)
            buf[j] = nb_half_to_float(((const uint16_t *)x->data)[i + j]);
        fn(buf, buf, m, &p);
        for (int64_t j = 0; j < m; j++)
            ((uint16_t *)y->data)[i + j] = nb_float_to_half(buf[j]);
    }
    return NB_OK;
}

static nb_err k_not(nb_kctx *k)
{
    const uint8_t *x = k->in[0]->data;
    uint8_t *y = k->out[0]->data;
    for (int64_t i = 0; i < k->in[0]->numel; i++)
        y[i] = !x[i];
    return NB_OK;
}

static nb_err k_isnan_isinf(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    uint8_t *y = k->out[0]->data;
    bool nan = !strcmp(k->node->op_type, "IsNaN");
    int64_t pos = nb_attr_int(k->node, "detect_positive", 1);
    int64_t neg = nb_attr_int(k->node, "detect_negative", 1);
    for (int64_t i = 0; i < x->numel; i++) {
        double v = nb_tensor_get_f64(x, i);
        y[i] = nan ? isnan(v) != 0 : (isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
    }
    return NB_OK;
}

/* ---------------------------------------------------------------- binary */

typedef enum binop {
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MOD, B_FMOD, B_MAX, B_MIN, B_PRELU,
    B_EQ, B_GT, B_GE, B_LT, B_LE, B_AND, B_OR, B_XOR
} binop;

/* numpy maximum/minimum: NaN in a propagates (b's NaN does through the comparison);
 * written as selects so that the loops have no data-dependent branch. */
static inline float maxf_nan(float a, float b)
{
    float r = a > b ? a : b;
    return a != a ? a : r;
}
static inline float minf_nan(float a, float b)
{
    float r = a < b ? a : b;
    return a != a ? a : r;
}

/* Pow with the exponent 2 made exact (x*x), as numpy and ONNX Runtime compute it. */
static inline float powf_exact(float a, float b) { return b == 2.0f ? a * a : powf(a, b); }

#define BIN_LIST(X)                                 \
    X(ADD, a + b)                                   \
    X(SUB, a - b)                                   \
    X(MUL, a * b)                                   \
    X(DIV, a / b)                                   \
    X(POW, powf_exact(a, b))                        \
    X(FMOD, fmodf(a, b))                            \
    X(MAX, maxf_nan(a, b))                          \
    X(MIN, minf_nan(a, b))                          \
    X(PRELU, a < 0 ? a * b : a)

/* out = f(a, b) over a broadcast: it walks the outer dims (rank - 1 of them), the last dim
 * runs as an inner loop with strides sa, sb (0 = broadcast, 1 = contiguous). */
#define BIN_FN(NAME, EXPR)                                                                   \
    NB_REF_AVX2_CLONES static void b_##NAME(const float *A, const float *B, float *Y,        \
                                            nb_bcast *it,                                    \
                         int64_t total, int64_t inner, int64_t sa, int64_t sb)               \
    {                                                                                        \
        if (sa == 1 && sb == 1) {                                                            \
            for (int64_t o = 0; o < total; o += inner) {                                     \
                const float *pa = A + it->oa, *pb = B + it->ob;                              \
                float *py = Y + o;                                                           \
                for (int64_t i = 0; i < inner; i++) {                                        \
                    float a = pa[i], b = pb[i];                                              \
                    py[i] = (EXPR);                                                          \
                }                                                                            \
                nb_bcast_next(it);                                                           \
            }                                                                                \
        } else if (sa == 1 && sb == 0) {                                                     \
            for (int64_t o = 0; o < total; o += inner) {                                     \
                const float *pa = A + it->oa;                                                \
                const float b = B[it->ob];                                                   \
                float *py = Y + o;                                                           \
                for (int64_t i = 0; i < inner; i++) {                                        \
                    float a = pa[i];                                                         \
                    py[i] = (EXPR);                                                          \
                }                                                                            \
                nb_bcast_next(it);                                                           \
            }                                                                                \
        } else {                                                                             \
            for (int64_t o = 0; o < total; o += inner) {                                     \
                const float *pa = A + it->oa, *pb = B + it->ob;                              \
                float *py = Y + o;                                                           \
                for (int64_t i = 0; i < inner; i++) {                                        \
                    float a = pa[i * sa], b = pb[i * sb];                                    \
                    py[i] = (EXPR);                                                          \
                }                                                                            \
                nb_bcast_next(it);                                                           \
            }                                                                                \
        }                                                                                    \
    }
BIN_LIST(BIN_FN)

typedef void (*bin_loop)(const float *, const float *, float *, nb_bcast *, int64_t, int64_t,
                         int64_t, int64_t);

static bin_loop float_loop(binop op)
{
    switch (op) {
#define BIN_CASE(NAME, EXPR) case B_##NAME: return b_##NAME;
        BIN_LIST(BIN_CASE)
#undef BIN_CASE
    default: return NULL;
    }
}

/* Collapses the iteration: the output shape with size-1 dims dropped is walked with the
 * last dim as the inner loop. */
static void run_float_binary(binop op, const nb_tensor *a, const nb_tensor *b, nb_tensor *y)
{
    bin_loop fn = float_loop(op);
    nb_bcast it;
    if (y->numel == 0)
        return;
    if (a->numel == y->numel && (b->numel == y->numel || b->numel == 1)) {
        /* same shape, or a scalar b: one flat loop */
        int64_t n = y->numel;
        nb_bcast_init(&it, 0, &n, NULL, NULL, NULL);
        fn(a->data, b->data, y->data, &it, n, n, 1, b->numel == 1 ? 0 : 1);
        return;
    }
    if (y->rank == 0) {
        nb_bcast_init(&it, 0, y->dims, NULL, NULL, NULL);
        fn(a->data, b->data, y->data, &it, 1, 1, 0, 0);
        return;
    }
    nb_bcast_init(&it, y->rank, y->dims, a, b, NULL);
    int last = y->rank - 1;
    int64_t inner = y->dims[last];
    int64_t sa = it.sa[last], sb = it.sb[last];
    it.rank = last; /* the iterator walks the outer dims only */
    fn(a->data, b->data, y->data, &it, y->numel, inner, sa, sb);
}

static int64_t imod(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* Generic path: integer types exactly in 64 bits, FLOAT16 through float, comparisons
 * of any type. */
static void run_generic_binary(binop op, const nb_tensor *a, const nb_tensor *b, nb_tensor *y)
{
    nb_bcast it;
    nb_bcast_init(&it, y->rank, y->dims, a, b, NULL);
    bool fl = nb_dtype_is_float(a->dtype);
    bool u64 = a->dtype == NB_UINT64;
    for (int64_t i = 0; i < y->numel; i++, nb_bcast_next(&it)) {
        if (fl || (op == B_POW)) {
            double x = nb_tensor_get_f64(a, it.oa), z = nb_tensor_get_f64(b, it.ob);
            float xf = (float)x, zf = (float)z;
            double r;
            switch (op) {
            case B_ADD: r = xf + zf; break;
            case B_SUB: r = xf - zf; break;
            case B_MUL: r = xf * zf; break;
            case B_DIV: r = xf / zf; break;
            case B_POW: r = fl ? powf_exact(xf, zf) : pow(x, z); break;
            case B_FMOD: case B_MOD: r = fmodf(xf, zf); break;
            case B_MAX: r = maxf_nan(xf, zf); break;
            case B_MIN: r = minf_nan(xf, zf); break;
            case B_PRELU: r = xf < 0 ? xf * zf : xf; break;
            case B_EQ: r = x == z; break;
            case B_GT: r = x > z; break;
            case B_GE: r = x >= z; break;
            case B_LT: r = x < z; break;
            case B_LE: r = x <= z; break;
            default: r = 0; break;
            }
            set_f64(y, i, r);
            continue;
        }
        if (u64) {
            uint64_t x = get_u64(a, it.oa), z = get_u64(b, it.ob), r;
            switch (op) {
            case B_ADD: r = x + z; break;
            case B_SUB: r = x - z; break;
            case B_MUL: r = x * z; break;
            case B_DIV: r = z ? x / z : 0; break;
            case B_MOD: case B_FMOD: r = z ? x % z : 0; break;
            case B_MAX: r = x > z ? x : z; break;
            case B_MIN: r = x < z ? x : z; break;
            case B_EQ: r = x == z; break;
            case B_GT: r = x > z; break;
            case B_GE: r = x >= z; break;
            case B_LT: r = x < z; break;
            case B_LE: r = x <= z; break;
            case B_AND: r = x && z; break;
            case B_OR: r = x || z; break;
            case B_XOR: r = (x != 0) != (z != 0); break;
            default: r = 0; break;
            }
            set_i64(y, i, (int64_t)r);
            continue;
        }
        int64_t x = nb_tensor_get_i64(a, it.oa), z = nb_tensor_get_i64(b, it.ob), r;
        switch (op) {
        case B_ADD: r = (int64_t)((uint64_t)x + (uint64_t)z); break;
        case B_SUB: r = (int64_t)((uint64_t)x - (uint64_t)z); break;
        case B_MUL: r = (int64_t)((uint64_t)x * (uint64_t)z); break;
        case B_DIV: r = z == 0 ? 0 : (z == -1 ? (int64_t)(0 - (uint64_t)x) : x / z); break;
        case B_MOD: r = z == -1 ? 0 : imod(x, z); break;
        case B_FMOD: r = (z == 0 || z == -1) ? 0 : x % z; break;
        case B_MAX: r = x > z ? x : z; break;
        case B_MIN: r = x < z ? x : z; break;
        case B_PRELU: r = x < 0 ? x * z : x; break;
        case B_EQ: r = x == z; break;
        case B_GT: r = x > z; break;
        case B_GE: r = x >= z; break;
        case B_LT: r = x < z; break;
        case B_LE: r = x <= z; break;
        case B_AND: r = x && z; break;
        case B_OR: r = x || z; break;
        case B_XOR: r = (x != 0) != (z != 0); break;
        default: r = 0; break;
        }
        set_i64(y, i, r);
    }
}

static binop op_of(const nb_node *n)
{
    static const struct {
        const char *op;
        binop b;
    } t[] = {{"Add", B_ADD},   {"Sub", B_SUB},         {"Mul", B_MUL},   {"Div", B_DIV},
             {"Pow", B_POW},   {"Mod", B_MOD},         {"Max", B_MAX},   {"Min", B_MIN},
             {"PRelu", B_PRELU}, {"Equal", B_EQ},      {"Greater", B_GT}, {"GreaterOrEqual", B_GE},
             {"Less", B_LT},   {"LessOrEqual", B_LE},  {"And", B_AND},   {"Or", B_OR},
             {"Xor", B_XOR},   {"Sum", B_ADD},         {"Mean", B_ADD}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].op, n->op_type)) {
            if (t[i].b == B_MOD && nb_attr_int(n, "fmod", 0))
                return B_FMOD;
            return t[i].b;
        }
    return B_ADD;
}

static bool float_fast(binop op, const nb_tensor *a, const nb_tensor *b, const nb_tensor *y)
{
    return a->dtype == NB_FLOAT && b->dtype == NB_FLOAT && y->dtype == NB_FLOAT &&
           op <= B_PRELU && op != B_MOD;
}

static nb_err k_binary(nb_kctx *k)
{
    binop op = op_of(k->node);
    const nb_tensor *a = k->in[0], *b = k->in[1];
    if (op == B_MOD && nb_dtype_is_float(a->dtype) && !nb_attr_int(k->node, "fmod", 0))
        return nb_fail(k->st, NB_ERR_ATTR, "Mod of floats needs fmod=1");
    nb_tensor *slope = NULL;
    if (op == B_PRELU && k->opset < 7 && b->rank == 1 && a->rank >= 2 && b->dims[0] == a->dims[1]) {
        /* opset 6: a [C] slope applies along the channel axis: view it as [C,1,...,1] */
        int64_t d[NB_MAX_RANK];
        for (int i = 0; i < a->rank - 1; i++)
            d[i] = i == 0 ? b->dims[0] : 1;
        nb_err e = nb_tensor_view(b, a->rank - 1, d, &slope, k->st);
        if (e)
            return e;
        b = slope;
    }
    if (float_fast(op, a, b, k->out[0]))
        run_float_binary(op, a, b, k->out[0]);
    else
        run_generic_binary(op, a, b, k->out[0]);
    nb_tensor_free(slope);
    return NB_OK;
}

/* Max, Min, Sum, Mean: folded pairwise over the inputs (broadcast each step to the output
 * shape, as the result of any prefix broadcasts to the final shape). */
static nb_err k_variadic(nb_kctx *k)
{
    binop op = op_of(k->node);
    nb_tensor *y = k->out[0];
    nb_tensor *acc = NULL;
    nb_err e;
    if (k->n_in == 1) {
        memcpy(y->data, k->in[0]->data, y->nbytes);
        return NB_OK;
    }
    for (int i = 1; i < k->n_in; i++) {
        const nb_tensor *a = i == 1 ? k->in[0] : acc;
        nb_tensor *dst = y;
        if (i + 1 < k->n_in || a == y) {
            nb_tensor *tmp;
            if ((e = nb_tensor_new_uninit(y->dtype, y->rank, y->dims, &tmp, k->st))) {
                nb_tensor_free(acc);
                return e;
            }
            dst = tmp;
        }
        if (float_fast(op, a, k->in[i], dst))
            run_float_binary(op, a, k->in[i], dst);
        else
            run_generic_binary(op, a, k->in[i], dst);
        if (acc && acc != dst)
            nb_tensor_free(acc);
        acc = dst == y ? NULL : dst;
        if (dst == y)
            break;
    }
    if (acc) {
        memcpy(y->data, acc->data, y->nbytes);
        nb_tensor_free(acc);
    }
    if (!strcmp(k->node->op_type, "Mean")) {
        for (int64_t i = 0; i < y->numel; i++) {
            if (y->dtype == NB_FLOAT)
                ((float *)y->data)[i] /= (float)k->n_in;
            else
                set_f64(y, i, nb_tensor_get_f64(y, i) / k->n_in);
        }
    }
    return NB_OK;
}

/* Where(cond, X, Y): X where cond else Y, three-way broadcast. */
static nb_err k_where(nb_kctx *k)
{
    const nb_tensor *c = k->in[0], *x = k->in[1], *yv = k->in[2];
    nb_tensor *out = k->out[0];
    nb_bcast it;
    nb_bcast_init(&it, out->rank, out->dims, c, x, yv);
    size_t es = nb_dtype_size(out->dtype);
    const uint8_t *cd = c->data;
    for (int64_t i = 0; i < out->numel; i++, nb_bcast_next(&it)) {
        const char *src = cd[it.oa] ? (const char *)x->data + it.ob * (int64_t)es
                                    : (const char *)yv->data + it.oc * (int64_t)es;
        memcpy((char *)out->data + i * (int64_t)es, src, es);
    }
    return NB_OK;
}

/* Clip: opset 11+ min/max inputs (optional), opset 6-10 attributes. */
static nb_err k_clip(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    if (x->dtype == NB_FLOAT || x->dtype == NB_FLOAT16) {
        float lo = -INFINITY, hi = INFINITY;
        if (k->opset < 11) {
            lo = nb_attr_float(k->node, "min", -INFINITY);
            hi = nb_attr_float(k->node, "max", INFINITY);
        }
        if (k->n_in > 1 && k->in[1])
            lo = (float)nb_tensor_get_f64(k->in[1], 0);
        if (k->n_in > 2 && k->in[2])
            hi = (float)nb_tensor_get_f64(k->in[2], 0);
        if (x->dtype == NB_FLOAT) {
            const float *xd = x->data;
            float *yd = y->data;
            for (int64_t i = 0; i < x->numel; i++) {
                float v = xd[i];
                v = v < lo ? lo : v;
                yd[i] = v > hi ? hi : v;
            }
        } else {
            for (int64_t i = 0; i < x->numel; i++) {
                float v = (float)nb_tensor_get_f64(x, i);
                v = v < lo ? lo : v;
                set_f64(y, i, v > hi ? hi : v);
            }
        }
        return NB_OK;
    }
    bool u64 = x->dtype == NB_UINT64;
    for (int64_t i = 0; i < x->numel; i++) {
        if (u64) {
            uint64_t v = get_u64(x, i);
            if (k->n_in > 1 && k->in[1] && v < get_u64(k->in[1], 0))
                v = get_u64(k->in[1], 0);
            if (k->n_in > 2 && k->in[2] && v > get_u64(k->in[2], 0))
                v = get_u64(k->in[2], 0);
            set_i64(y, i, (int64_t)v);
        } else {
            int64_t v = nb_tensor_get_i64(x, i);
            if (k->n_in > 1 && k->in[1] && v < nb_tensor_get_i64(k->in[1], 0))
                v = nb_tensor_get_i64(k->in[1], 0);
            if (k->n_in > 2 && k->in[2] && v > nb_tensor_get_i64(k->in[2], 0))
                v = nb_tensor_get_i64(k->in[2], 0);
            set_i64(y, i, v);
        }
    }
    return NB_OK;
}

/* Cast / CastLike: float -> int truncates toward zero; to BOOL is x != 0; FLOAT16 rounds to
 * nearest even (ONNX Operators.md, Cast). */
static nb_err k_cast(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    if (x->dtype == y->dtype) {
        memcpy(y->data, x->data, y->nbytes);
        return NB_OK;
    }
    if (x->dtype == NB_FLOAT && y->dtype == NB_FLOAT16) {
        for (int64_t i = 0; i < x->numel; i++)
            ((uint16_t *)y->data)[i] = nb_float_to_half(((const float *)x->data)[i]);
        return NB_OK;
    }
    if (nb_dtype_is_float(x->dtype)) {
        for (int64_t i = 0; i < x->numel; i++)
            set_f64(y, i, nb_tensor_get_f64(x, i));
    } else if (x->dtype == NB_UINT64) {
        for (int64_t i = 0; i < x->numel; i++) {
            uint64_t v = ((const uint64_t *)x->data)[i];
            if (nb_dtype_is_float(y->dtype))
                set_f64(y, i, (double)v);
            else
                set_i64(y, i, (int64_t)v);
        }
    } else {
        for (int64_t i = 0; i < x->numel; i++) {
            int64_t v = nb_tensor_get_i64(x, i);
            if (nb_dtype_is_float(y->dtype))
                set_f64(y, i, (double)v);
            else
                set_i64(y, i, v);
        }
    }
    return NB_OK;
}

const nb_kernel_entry nb_kernels_elementwise[] = {
    {"Abs", k_unary, 0},        {"Acos", k_unary, 0},        {"Acosh", k_unary, 0},
    {"Add", k_binary, 0},       {"And", k_binary, 0},        {"Asin", k_unary, 0},
    {"Asinh", k_unary, 0},      {"Atan", k_unary, 0},        {"Atanh", k_unary, 0},
    {"Cast", k_cast, 0},        {"CastLike", k_cast, 0},     {"Ceil", k_unary, 0},
    {"Celu", k_unary, 0},       {"Clip", k_clip, 0},         {"Cos", k_unary, 0},
    {"Cosh", k_unary, 0},       {"Div", k_binary, 0},        {"Elu", k_unary, 0},
    {"Equal", k_binary, 0},     {"Erf", k_unary, 0},         {"Exp", k_unary, 0},
    {"Floor", k_unary, 0},      {"Greater", k_binary, 0},    {"GreaterOrEqual", k_binary, 0},
    {"HardSigmoid", k_unary, 0}, {"HardSwish", k_unary, 0},  {"IsInf", k_isnan_isinf, 0},
    {"IsNaN", k_isnan_isinf, 0}, {"LeakyRelu", k_unary, 0},  {"Less", k_binary, 0},
    {"LessOrEqual", k_binary, 0}, {"Log", k_unary, 0},       {"Max", k_variadic, 0},
    {"Mean", k_variadic, 0},    {"Min", k_variadic, 0},      {"Mish", k_unary, 0},
    {"Mod", k_binary, 0},       {"Mul", k_binary, 0},        {"Neg", k_unary, 0},
    {"Not", k_not, 0},          {"Or", k_binary, 0},         {"PRelu", k_binary, 0},
    {"Pow", k_binary, 0},       {"Reciprocal", k_unary, 0},  {"Relu", k_unary, 0},
    {"Round", k_unary, 0},      {"Selu", k_unary, 0},        {"Shrink", k_unary, 0},
    {"Sigmoid", k_unary, 0},    {"Sign", k_unary, 0},        {"Sin", k_unary, 0},
    {"Sinh", k_unary, 0},       {"Softplus", k_unary, 0},    {"Softsign", k_unary, 0},
    {"Sqrt", k_unary, 0},       {"Sub", k_binary, 0},        {"Sum", k_variadic, 0},
    {"Tan", k_unary, 0},        {"Tanh", k_unary, 0},        {"ThresholdedRelu", k_unary, 0},
    {"Where", k_where, 0},      {"Xor", k_binary, 0},
    {NULL, NULL, 0},
};
