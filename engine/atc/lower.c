/* nanobench: lowering of the float IR to the Nano's tasks and tensors (include/nb/atc.h).
 * The estimate reads sizes off this graph, and the compiler will write it out, so that the
 * two cannot disagree. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/atc.h"
#include "nb/ir.h"
#include "nb/ref.h"

const char *nb_format_name(nb_format f)
{
    switch (f) {
    case NB_FMT_NCHW: return "NCHW";
    case NB_FMT_NHWC: return "NHWC";
    case NB_FMT_ND: return "ND";
    case NB_FMT_NC1HWC0: return "NC1HWC0";
    case NB_FMT_FRACTAL_Z: return "FRACTAL_Z";
    case NB_FMT_FRACTAL_NZ: return "FRACTAL_NZ";
    }
    return "?";
}

/* The lowering of one graph: the model's, or an If branch's, which reads the values of the
 * graph that encloses it through its parent context. */
typedef struct lctx {
    const nb_graph *g;
    const nb_op_table *ops;
    const nb_npu_opts *o;
    nb_npu_graph *n;
    struct lctx *parent;
    char *prefix;   /* put before task names: "" at top level, "<If>/<branch>/" in branches */
    int *vt;        /* value -> tensor as produced (-1) */
    int *vt_alt;    /* value -> tensor after a TransData to the other format (-1) */
    int *vh;        /* value -> the fp16 Cast of a CPU task's float32 output, for the NPU's
                       readers (-1) */
    bool cpu_reader; /* tensor_in for a CPU task (or a float32 output): a float32 value as
                        it is, without the Cast to fp16 */
    int *vq;        /* value -> int8 tensor written by an AscendQuant (-1) */
    int *vw;        /* value -> cube weight tensor (quantized, in FRACTAL_Z or _NZ) (-1) */
    int *uses;      /* value -> number of reading nodes (branch reads included) */
    bool *skip;     /* node -> folded into another task */
    int *alias;     /* value -> value whose tensor it shares (folded BatchNormalization) */
    bool *oom;      /* shared by the contexts of one lowering */
} lctx;

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = len < 0 ? NULL : malloc((size_t)len + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int64_t nd_bytes(int rank, const int64_t *d, nb_dtype t)
{
    int64_t e = 1;
    for (int i = 0; i < rank; i++)
        if (d[i] < 0 || !nb_mul_ok(e, d[i], &e))
            return -1;
    int64_t bits;
    if (!nb_mul_ok(e, nb_npu_bits(t), &bits))
        return -1;
    return (bits + 7) / 8;
}

static int add_tensor(lctx *c, char *name, nb_dtype dt, nb_format f, int rank,
                      const int64_t *dims, nb_npu_role role, int64_t bytes)
{
    nb_npu_graph *n = c->n;
    if (!name || !nb_grow((void **)&n->t, &n->cap_t, n->n_t, sizeof *n->t)) {
        free(name);
        *c->oom = true;
        return -1;
    }
    nb_npu_tensor *t = &n->t[n->n_t];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->dtype = dt;
    t->format = f;
    t->rank = rank < 0 ? 0 : rank;
    for (int i = 0; i < t->rank; i++)
        t->dims[i] = dims[i];
    if (bytes < 0) {
        if (f == NB_FMT_NC1HWC0)
            bytes = nb_nc1hwc0_bytes(t->rank, t->dims, dt);
        else if (f == NB_FMT_FRACTAL_NZ)
            bytes = nb_fractal_nz_bytes(t->rank, t->dims, dt);
        else
            bytes = nd_bytes(t->rank, t->dims, dt);
    }
    t->bytes = bytes < 0 ? 0 : bytes;
    t->role = role;
    t->first = t->last = -1;
    return n->n_t++;
}

static int add_task(lctx *c, char *name, const char *op, const char *onnx_op, nb_task_unit u,
                    bool inserted)
{
    nb_npu_graph *n = c->n;
    if (!name || !nb_grow((void **)&n->k, &n->cap_k, n->n_k, sizeof *n->k)) {
        free(name);
        *c->oom = true;
        return -1;
    }
    nb_npu_task *k = &n->k[n->n_k];
    memset(k, 0, sizeof *k);
    k->name = name;
    k->op_type = strdup(op);
    k->onnx_op = strdup(onnx_op);
    k->unit = u;
    k->inserted = inserted;
    if (!k->op_type || !k->onnx_op)
        *c->oom = true;
    return n->n_k++;
}

static void task_in(lctx *c, int k, int t)
{
    if (k < 0 || t < 0)
        return;
    nb_npu_task *tk = &c->n->k[k];
    if (!nb_grow((void **)&tk->in, &tk->cap_in, tk->n_in, sizeof(int))) {
        *c->oom = true;
        return;
    }
    tk->in[tk->n_in++] = t;
    nb_npu_tensor *x = &c->n->t[t];
    if (x->last < k)
        x->last = k;
}

static void task_out(lctx *c, int k, int t)
{
    if (k < 0 || t < 0)
        return;
    nb_npu_task *tk = &c->n->k[k];
    if (!nb_grow((void **)&tk->out, &tk->cap_out, tk->n_out, sizeof(int))) {
        *c->oom = true;
        return;
    }
    tk->out[tk->n_out++] = t;
    nb_npu_tensor *x = &c->n->t[t];
    if (x->first < 0 || x->first > k)
        x->first = k;
    if (x->last < k)
        x->last = k;
}

static void rewrite(lctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rewrite(lctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!nb_strlist_vaddf(&c->n->rewrites, &c->n->n_rewrites, fmt, ap))
        *c->oom = true;
    va_end(ap);
}

/* The context that owns value *v, with *v its id there: a folded BatchNormalization's
 * output stands for its Conv's, and a branch's read of an enclosing value is that value. */
static lctx *owner(lctx *c, int *v)
{
    while (*v >= 0) {
        if (c->alias[*v] >= 0)
            *v = c->alias[*v];
        else if (c->parent && c->g->values[*v].outer >= 0)
            *v = c->g->values[*v].outer, c = c->parent;
        else
            break;
    }
    return c;
}

static nb_dtype npu_type(nb_dtype t) { return t == NB_FLOAT ? NB_FLOAT16 : t; }

static bool is_const(const lctx *c, int v) { return v >= 0 && c->g->values[v].const_val; }

/* The tensor value v was produced into (-1: none yet). */
static int produced(lctx *c, int v)
{
    c = owner(c, &v);
    return v < 0 ? -1 : c->vt[v];
}

/* The tensor of constant value v as a vector-op operand (ND, made once; fp16 for floats and
 * int32 for int64 index data, the NPU's widest integer). */
static int const_tensor(lctx *c, int v)
{
    c = owner(c, &v);
    if (c->vt[v] >= 0)
        return c->vt[v];
    const nb_tensor *t = c->g->values[v].const_val;
    nb_dtype dt = t->dtype == NB_INT64 ? NB_INT32 : npu_type(t->dtype);
    c->vt[v] = add_tensor(c, strdup(c->g->values[v].name), dt, NB_FMT_ND, t->rank, t->dims,
                          NB_T_WEIGHT, -1);
    return c->vt[v];
}

/* The NPU format of an activation of rank r that a spatial op reads or writes: NC1HWC0 for
 * [N,C,L] and [N,C,H,W], ND otherwise ([N,C] has no spatial dims to block). */
static nb_format spatial_format(int r) { return r == 3 || r == 4 ? NB_FMT_NC1HWC0 : NB_FMT_ND; }

/* The tensor of value v in format f: as produced, or through a TransData (made once).
 * The copies (TransData, Cast, AscendQuant) of a value are kept in its owner's context when
 * the reading graph is that owner, else in the reader's own: an If branch's copy of an
 * enclosing value is made among the branch's tasks, which run only when the branch is
 * taken, so the other branch cannot reuse it (it did: the then branch's Conv read the else
 * branch's TransData and AscendQuant, skipped when then ran, and gave zeros). */
static int tensor_in(lctx *c, int v, nb_format f, const char *consumer)
{
    bool f32_ok = c->cpu_reader;
    lctx *reader = c;
    int rv = v;
    c = owner(c, &v);
    if (v < 0)
        return -1;
    if (is_const(c, v))
        return const_tensor(c, v);
    bool own = reader == c; /* else a branch's read of an enclosing value */
    int *vh = own ? &c->vh[v] : &reader->vh[rv], *vt_alt = own ? &c->vt_alt[v]
                                                               : &reader->vt_alt[rv];
    int t = c->vt[v];
    if (t >= 0 && !f32_ok && c->n->t[t].dtype == NB_FLOAT && c->n->t[t].role == NB_T_ACTIVATION) {
        /* a CPU task's float32 output read by the NPU: the boundary's Cast to fp16, made once
           (values beyond 65504 clamp there, as any fp16 write) */
        if (*vh < 0) {
            const nb_npu_tensor src = c->n->t[t]; /* a copy: add_tensor may move the array */
            int k = add_task(c, dupf("%s/Cast_fp16", consumer), "Cast", "Cast", NB_TASK_VECTOR,
                             true);
            int h = add_tensor(c, dupf("%s/fp16", src.name), NB_FLOAT16, NB_FMT_ND, src.rank,
                               src.dims, NB_T_ACTIVATION, -1);
            task_in(c, k, t);
            task_out(c, k, h);
            c->n->n_cast++;
            *vh = h;
        }
        t = *vh;
    }
    if (t < 0 || c->n->t[t].format == f || c->n->t[t].rank < 3 ||
        (f == NB_FMT_NC1HWC0 && spatial_format(c->n->t[t].rank) != NB_FMT_NC1HWC0))
        return t;
    if (*vt_alt >= 0 && c->n->t[*vt_alt].format == f)
        return *vt_alt;
    const nb_npu_tensor src = c->n->t[t]; /* a copy: add_tensor may move the array */
    int k = add_task(c, dupf("%s/TransData_%s", consumer, nb_format_name(f)), "TransData",
                     "TransData", NB_TASK_VECTOR, true);
    int o = add_tensor(c, dupf("%s/%s", src.name, nb_format_name(f)), src.dtype, f, src.rank,
                       src.dims, NB_T_ACTIVATION, -1);
    task_in(c, k, t);
    task_out(c, k, o);
    c->n->n_transdata++;
    *vt_alt = o;
    return o;
}

/* The int8 (dt NB_INT8) or int16 (NB_INT16: the cube's s16 x s8) version of activation v
 * in format f for a cube op (an AscendQuant, made once per value, format and type). */
static int quant_in(lctx *c, int v, nb_format f, const char *consumer, nb_dtype dt)
{
    lctx *reader = c;
    int rv = v;
    c = owner(c, &v);
    if (v < 0)
        return -1;
    int *vq = reader == c ? &c->vq[v] : &reader->vq[rv]; /* a branch's own (tensor_in) */
    if (*vq >= 0 && c->n->t[*vq].format == f && c->n->t[*vq].dtype == dt)
        return *vq;
    int src = tensor_in(reader, rv, f == NB_FMT_FRACTAL_NZ ? NB_FMT_ND : f, consumer);
    if (src < 0)
        return -1;
    nb_dtype sd = c->n->t[src].dtype;
    if (dt == NB_INT8 ? sd == NB_INT8 || sd == NB_UINT8 : sd == dt)
        return src;
    const nb_npu_tensor s = c->n->t[src]; /* a copy: add_tensor may move the array */
    int k = add_task(c, dupf("%s/AscendQuant", consumer), "AscendQuant", "AscendQuant",
                     NB_TASK_VECTOR, true);
    int o = add_tensor(c, dupf("%s/%s", s.name, dt == NB_INT16 ? "int16" : "int8"), dt, f,
                       s.rank, s.dims, NB_T_ACTIVATION, -1);
    task_in(c, k, src);
    task_out(c, k, o);
    c->n->n_quant++;
    *vq = o;
    return o;
}

/* The type of the cube op n's quantized input x: int16 when the options name it (its
 * layer's dst_bits 16), int8 otherwise. */
static nb_dtype act_type(const lctx *c, const nb_node *n, const char *name)
{
    for (int i = 0; i < c->o->n_act16_nodes && c->o->act16_nodes; i++) {
        const char *a = c->o->act16_nodes[i];
        if (a && ((n->name && !strcmp(a, n->name)) || !strcmp(a, name)))
            return NB_INT16;
    }
    return NB_INT8;
}

/* The type of cube op n's weights: int4 when the options name it (its layer's
 * weight_bits 4) or every layer is int4, int8 otherwise. */
static nb_dtype weight_type(const lctx *c, const nb_node *n, const char *name)
{
    if (c->o->weight_bits == 4)
        return NB_NPU_INT4;
    for (int i = 0; i < c->o->n_w4_nodes && c->o->w4_nodes; i++) {
        const char *a = c->o->w4_nodes[i];
        if (a && ((n->name && !strcmp(a, n->name)) || !strcmp(a, name)))
            return NB_NPU_INT4;
    }
    return NB_INT8;
}

/* The quantized cube weight of constant value v, with the logical shape dims (N x K for
 * matrices) in format f and type wt: made once per value, layout, type and shape, so that
 * ops sharing a weight share its copy. */
static int weight_tensor(lctx *c, int v, nb_format f, int rank, const int64_t *dims,
                         int64_t bytes, nb_dtype wt)
{
    c = owner(c, &v);
    const char *name = c->g->values[v].name;
    /* a copy in this layout already? (names are unique per value until the final pass) */
    for (int w = c->vw[v] >= 0 ? c->vw[v] : c->n->n_t; w < c->n->n_t; w++) {
        const nb_npu_tensor *t = &c->n->t[w];
        if (t->role == NB_T_WEIGHT && t->format == f && t->rank == rank && t->dtype == wt &&
            !strcmp(t->name, name) &&
            !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank))
            return w;
    }
    int w = add_tensor(c, strdup(name), wt, f, rank, dims, NB_T_WEIGHT, bytes);
    if (c->vw[v] < 0)
        c->vw[v] = w;
    return w;
}

/* A cube op's constant parameters: bias int32 and deq_scale (uint64) per output channel,
 * padded to 16 channels. */
static void cube_params(lctx *c, int k, const char *name, int64_t channels)
{
    int64_t padded = (channels + 15) / 16 * 16, d[1] = {padded};
    int b = add_tensor(c, dupf("%s/bias", name), NB_INT32, NB_FMT_ND, 1, d, NB_T_WEIGHT, -1);
    int q = add_tensor(c, dupf("%s/deq_scale", name), NB_UINT64, NB_FMT_ND, 1, d, NB_T_WEIGHT,
                       -1);
    if (b >= 0 && q >= 0)
        c->n->t[b].gen = 3, c->n->t[q].gen = 4;
    task_in(c, k, b);
    task_in(c, k, q);
}

/* The int32 accumulator of a cube task and its AscendDequant to fp16, which becomes value
 * v's tensor (named as the value, or value/cube when a run-time bias Add follows). */
static int dequant_out(lctx *c, int k, int v, const char *name, nb_format f, bool add_follows)
{
    const nb_value *val = &c->g->values[v];
    int acc = add_tensor(c, dupf("%s/int32", val->name), NB_INT32, f, val->rank, val->dims,
                         NB_T_ACTIVATION, -1);
    task_out(c, k, acc);
    int dq = add_task(c, dupf("%s/AscendDequant", name), "AscendDequant", "AscendDequant",
                      NB_TASK_VECTOR, true);
    int o = add_tensor(c, add_follows ? dupf("%s/cube", val->name) : strdup(val->name),
                       NB_FLOAT16, f == NB_FMT_FRACTAL_NZ ? NB_FMT_ND : f, val->rank,
                       val->dims, NB_T_ACTIVATION, -1);
    task_in(c, dq, acc);
    task_out(c, dq, o);
    c->n->n_dequant++;
    c->vt[v] = o;
    return o;
}

static bool in_list(const char *op, const char *const *l)
{
    for (; *l; l++)
        if (!strcmp(op, *l))
            return true;
    return false;
}

static bool spatial_op(const char *op)
{
    static const char *const s[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
                                    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
                                    "BatchNormalization", "InstanceNormalization",
                                    "SpaceToDepth", "DepthToSpace", "ConvInteger",
                                    "QLinearConv", NULL};
    return in_list(op, s);
}

static bool elementwise_op(const char *op)
{
    static const char *const s[] = {"Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid",
                                    "Tanh", "Clip", "Elu", "PRelu", "Abs", "Neg", "Exp", "Log",
                                    "Pow", "Round", "Max", "Min", "Equal", "Greater", "And",
                                    "Or", "Where", "Cast", "Identity", "Sqrt", "Erf",
                                    "HardSigmoid", NULL};
    return in_list(op, s);
}

/* Constant input i of op that the vector unit takes as a parameter in the task descriptor
 * (shapes, axes, pads, repeats, sizes), not as a weight tensor: ATC folds these into the
 * op's attributes. */
static bool param_input(const char *op, int i)
{
    static const char *const from1[] = {"Reshape", "Slice", "Tile", "Squeeze", "Unsqueeze",
                                        "Gather",
                                        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                        "ReduceL2", "ReduceL1", "ReduceProd", "Split",
                                        "Expand", "TopK", "Resize", "Upsample", NULL};
    if (i >= 1 && in_list(op, from1))
        return true;
    return (!strcmp(op, "Pad") && i >= 1 && i <= 3) || (!strcmp(op, "Dropout") && i >= 1) ||
           (!strcmp(op, "ConstantOfShape") && i == 0);
}

/* True for value v written by an ArgMax: ONNX's int64 indices, int32 on the NPU (CANN's
 * ArgMaxD writes int32; an index of a tensor of the Nano's memory fits). */
static bool argmax_index(const lctx *c, int v)
{
    int p = c->g->values[v].producer;
    return p >= 0 && !strcmp(c->g->nodes[p].op_type, "ArgMax");
}

/* True for an int64 model input (silero_vad's sample rate sr): int32 on the NPU, the run
 * converting the given values (saturated, as any integer input). */
static bool int64_model_input(const lctx *c, int v)
{
    return !c->parent && c->g->values[v].is_input && c->g->values[v].dtype == NB_INT64;
}

/* True for a Gather's indices (input i = 1) that the task reads as an int32 tensor, input 1
 * (CANN's GatherV2): more than the 6 the task descriptor holds, or computed at run time (an
 * ArgMax's); up to 6 constant indices are parameters (exeom.md). */
static bool gather_indices_tensor(const lctx *c, const nb_node *n, int i)
{
    if (i != 1 || strcmp(n->op_type, "Gather") != 0 || n->in[1] < 0)
        return false;
    const nb_tensor *t = c->g->values[n->in[1]].const_val;
    return !t || t->numel > 6;
}

/* Why the NPU cannot run node n as it stands, or "" (checked after the op table). */
static void runtime_reason(const lctx *c, const nb_node *n, char *why, size_t len)
{
    why[0] = 0;
    if (spatial_op(n->op_type) && n->n_in > 0 && n->in[0] >= 0 &&
        c->g->values[n->in[0]].rank > 4) {
        snprintf(why, len, "rank-%d input '%s': NC1HWC0 holds at most two spatial dims",
                 c->g->values[n->in[0]].rank, c->g->values[n->in[0]].name);
        return;
    }
    for (int k = 0; k < n->n_in + n->n_out && !why[0]; k++) {
        int v = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        const nb_tensor *cv = v >= 0 && is_const(c, v) ? c->g->values[v].const_val : NULL;
        if (cv && k < n->n_in && cv->dtype == NB_INT64 && !param_input(n->op_type, k))
            for (int64_t i = 0; i < cv->numel && !why[0]; i++) { /* an int32 weight */
                int64_t x = nb_tensor_get_i64(cv, i);
                if (x < INT32_MIN || x > INT32_MAX)
                    snprintf(why, len, "int64 constant '%s' holds %lld, beyond the NPU's int32",
                             c->g->values[v].name, (long long)x);
            }
        if (v < 0 || is_const(c, v))
            continue;
        const nb_value *val = &c->g->values[v];
        bool dyn = val->rank < 0;
        for (int d = 0; d < val->rank && !dyn; d++)
            dyn = val->dims[d] < 0;
        if (dyn)
            snprintf(why, len, "dynamic shape of '%s'", val->name);
        else if ((val->dtype == NB_INT64 && !argmax_index(c, v) && !int64_model_input(c, v)) ||
                 val->dtype == NB_DOUBLE ||
                 val->dtype == NB_UINT64 || val->dtype == NB_STRING)
            snprintf(why, len, "%s tensor '%s' at run time (the NPU has fp16, int8, int32)",
                     nb_dtype_name(val->dtype), val->name);
    }
}

/* Task k writes node n's outputs, each a new ND tensor of the type type_of gives. */
static void nd_outputs_as(lctx *c, const nb_node *n, int k, nb_dtype (*type_of)(nb_dtype))
{
    for (int o = 0; o < n->n_out; o++) {
        int v = n->out[o];
        if (v < 0)
            continue;
        const nb_value *val = &c->g->values[v];
        int t = add_tensor(c, strdup(val->name), type_of(val->dtype), NB_FMT_ND, val->rank,
                           val->dims, NB_T_ACTIVATION, -1);
        task_out(c, k, t);
        c->vt[v] = t;
    }
}

/* ... of its NPU type. */
static void nd_outputs(lctx *c, const nb_node *n, int k) { nd_outputs_as(c, n, k, npu_type); }

/* The type a CPU task's output has in the exeom: float32 for float (the M-core's; an NPU
 * reader takes it through a Cast to fp16, tensor_in), int32 for int64 (the NPU's widest
 * integer), else its own. */
static nb_dtype cpu_io_type(nb_dtype t) { return t == NB_INT64 ? NB_INT32 : t; }

/* A constant a CPU task reads: a weight in the constant's own type (the MCU's core computes
 * in float32: the value exactly), int64 as int32 (the caller checked that every value
 * fits). */
static int cpu_const_tensor(lctx *c, int v)
{
    lctx *o = owner(c, &v);
    const nb_tensor *t = o->g->values[v].const_val;
    return add_tensor(o, strdup(o->g->values[v].name), t->dtype == NB_INT64 ? NB_INT32 : t->dtype,
                      NB_FMT_ND, t->rank, t->dims, NB_T_WEIGHT, -1);
}

/* An op the NPU does not run (why): a task of the MCU's core, reading and writing ND.
 * When the reference can run the node and the exeom can carry it (nb_cpu_node_model), it is
 * a CpuOnnx task: the node's inputs (constants as weights in their own type), then the
 * one-node model as a UINT8 weight (gen 5); its outputs fp16 / int32 (cpu_io_type). Else
 * a task nothing runs, with why (estimate lists it, atc refuses it). */
static void cpu_task(lctx *c, const nb_node *n, const char *name, const char *why)
{
    int *ins = malloc(sizeof(int) * ((size_t)n->n_in + 1)), n_ins = 0;
    if (!ins) {
        *c->oom = true;
        return;
    }
    uint8_t *blob = NULL;
    size_t blen = 0;
    char cwhy[160] = "";
    nb_status st;
    /* --nb_input_scale: what the NPU holds of each input, taken back by the task */
    double *isc = malloc(sizeof(double) * ((size_t)n->n_in + 1)),
           *ioff = malloc(sizeof(double) * ((size_t)n->n_in + 1));
    bool scaled = false;
    for (int i = 0; isc && ioff && i < n->n_in; i++) {
        int v = n->in[i];
        bool top = !c->parent && c->o->value_scale && v >= 0 && v < c->o->n_values;
        isc[i] = top ? c->o->value_scale[v] : 1;
        ioff[i] = top ? c->o->value_offset[v] : 0;
        scaled |= isc[i] != 1 || ioff[i] != 0;
    }
    nb_err ce = !isc || !ioff ? NB_ERR_NOMEM
                              : nb_cpu_node_model(c->g, n, scaled ? isc : NULL,
                                                  scaled ? ioff : NULL, &blob, &blen, cwhy,
                                                  sizeof cwhy, &st);
    free(isc), free(ioff);
    if (ce) {
        *c->oom = true;
        free(ins);
        return;
    }
    for (int i = 0; i < n->n_in && blob; i++) /* constants in range first: no tensor made */
        if (n->in[i] >= 0 && is_const(c, n->in[i]) &&
            c->g->values[n->in[i]].const_val->dtype == NB_INT64) {
            const nb_tensor *t = c->g->values[n->in[i]].const_val;
            for (int64_t j = 0; j < t->numel && blob; j++)
                if (nb_tensor_get_i64(t, j) < INT32_MIN || nb_tensor_get_i64(t, j) > INT32_MAX) {
                    snprintf(cwhy, sizeof cwhy, "constant '%s' holds %lld, beyond int32",
                             c->g->values[n->in[i]].name, (long long)nb_tensor_get_i64(t, j));
                    free(blob);
                    blob = NULL;
                }
        }
    c->cpu_reader = blob != NULL; /* another CPU task's float32 output as it is */
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0)
            ins[n_ins++] = blob && is_const(c, n->in[i])
                               ? cpu_const_tensor(c, n->in[i])
                               : tensor_in(c, n->in[i], NB_FMT_ND, name);
    c->cpu_reader = false;
    int k = add_task(c, strdup(name), n->op_type, n->op_type, NB_TASK_CPU, false);
    if (k < 0) {
        free(ins);
        free(blob);
        return;
    }
    if (blob)
        snprintf(c->n->k[k].reason, sizeof c->n->k[k].reason, "%.300s; the MCU's CPU runs it "
                 "(float32)", why);
    else
        snprintf(c->n->k[k].reason, sizeof c->n->k[k].reason, "%.250s%s%.120s", why,
                 cwhy[0] ? "; not on the CPU: " : "", cwhy);
    for (int i = 0; i < n_ins; i++)
        task_in(c, k, ins[i]);
    free(ins);
    if (!blob) {
        nd_outputs(c, n, k);
        return;
    }
    int64_t bl = (int64_t)blen;
    int bt = add_tensor(c, dupf("%s/cpu_model", name), NB_UINT8, NB_FMT_ND, 1, &bl, NB_T_WEIGHT,
                        -1);
    if (bt < 0) {
        free(blob);
        return;
    }
    c->n->t[bt].gen = 5;
    c->n->t[bt].blob = blob;
    task_in(c, k, bt);
    c->n->k[k].cpu_ok = true;
    /* its multiply-accumulates, as the simulator's CPU cycle model counts them (unpadded) */
    const nb_value *y0 = n->n_out > 0 && n->out[0] >= 0 ? &c->g->values[n->out[0]] : NULL;
    const nb_value *x0 = n->n_in > 0 && n->in[0] >= 0 ? &c->g->values[n->in[0]] : NULL;
    const nb_value *w1 = n->n_in > 1 && n->in[1] >= 0 ? &c->g->values[n->in[1]] : NULL;
    int64_t ny = 1, nx = 1;
    for (int d = 0; y0 && d < y0->rank; d++)
        ny *= y0->dims[d];
    for (int d = 0; x0 && d < x0->rank; d++)
        nx *= x0->dims[d];
    if ((!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "ConvTranspose")) && w1 &&
        w1->rank >= 3 && y0 && x0) {
        int64_t taps = 1;
        for (int d = 2; d < w1->rank; d++)
            taps *= w1->dims[d];
        c->n->k[k].macs = (!strcmp(n->op_type, "Conv") ? ny : nx) * w1->dims[1] * taps;
    } else if ((!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm")) && x0 && y0 &&
               x0->rank >= 1) {
        bool ta = !strcmp(n->op_type, "Gemm") && nb_attr_int(n, "transA", 0);
        c->n->k[k].macs = ny * x0->dims[ta && x0->rank == 2 ? 0 : x0->rank - 1];
    }
    nd_outputs_as(c, n, k, cpu_io_type);
}

static int bias_index(const char *op)
{
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "Gemm"))
        return 2;
    return !strcmp(op, "QLinearConv") ? 8 : -1;
}

static bool conv_op(const char *op) { return strstr(op, "Conv") != NULL; }

static int weight_index(const char *op) { return !strncmp(op, "QLinear", 7) ? 3 : 1; }

/* Why a cube op cannot run as one cube task, or "". */
static void cube_reason(const lctx *c, const nb_node *n, char *why, size_t len)
{
    int wi = weight_index(n->op_type);
    why[0] = 0;
    if (n->n_in <= wi || n->in[wi] < 0)
        snprintf(why, len, "%s without weights", n->op_type);
    else if (conv_op(n->op_type) && !is_const(c, n->in[wi]))
        snprintf(why, len, "run-time weights '%s': the cube's FRACTAL_Z weights are "
                 "constants, quantized offline", c->g->values[n->in[wi]].name);
    else if (conv_op(n->op_type) && c->g->values[n->in[wi]].rank < 3)
        snprintf(why, len, "%s weights of rank %d", n->op_type, c->g->values[n->in[wi]].rank);
    else if (!strcmp(n->op_type, "ConvTranspose") && nb_attr_int(n, "group", 1) != 1)
        snprintf(why, len, "grouped ConvTranspose (group %lld): calibrate does not quantize it "
                 "yet", (long long)nb_attr_int(n, "group", 1));
    else if (!conv_op(n->op_type) &&
             (c->g->values[n->in[wi]].rank < 1 || c->g->values[n->in[0]].rank < 1))
        snprintf(why, len, "%s of a scalar operand: the cube takes matrices", n->op_type);
    else if (!strcmp(n->op_type, "MatMul") && !is_const(c, n->in[wi])) {
        /* two activations: B [..., K, N] with x's batch dims (leading 1s aside) or none */
        const nb_value *x = &c->g->values[n->in[0]], *b = &c->g->values[n->in[wi]];
        int xa = 0, ba = 0;
        int64_t bb = 1;
        for (int d = 0; d + 2 < b->rank; d++)
            bb *= b->dims[d];
        while (xa + 2 < x->rank && x->dims[xa] == 1)
            xa++;
        while (ba + 2 < b->rank && b->dims[ba] == 1)
            ba++;
        bool same = x->rank - 2 - xa == b->rank - 2 - ba;
        for (int d = 0; same && xa + d + 2 < x->rank; d++)
            same = x->dims[xa + d] == b->dims[ba + d];
        if (x->rank < 2 || b->rank < 2)
            snprintf(why, len, "MatMul of two activations with a vector operand (x of rank %d, "
                     "B of rank %d): the cube takes matrices", x->rank, b->rank);
        else if (bb != 1 && !same) {
            char xs[96], bs[96];
            nb_shape_str(x->rank, x->dims, ',', xs, sizeof xs);
            nb_shape_str(b->rank, b->dims, ',', bs, sizeof bs);
            snprintf(why, len, "MatMul of two activations broadcasting x %s against B %s: "
                     "the cube reads B with x's batch dims, or one B for all", xs, bs);
        }
    }
}

/* What to do about an op the Nano lacks, for the reason text ("" when nothing simple). */
static const char *hint(const char *op)
{
    static const char *const h[][2] = {
        {"AveragePool", " (a depthwise Conv with constant 1/k weights runs on the cube)"},
        {"Erf", " (GELU: its tanh or sigmoid form runs on the vector unit)"},
        {"Resize", " (nearest by integer factors, asymmetric + floor or half_pixel + "
                   "round_prefer_*, is rewritten as Reshape, Tile, Reshape; bilinear: a "
                   "ConvTranspose of fixed weights)"},
        {"Expand", " (Tile runs on the vector unit)"},
        {"Softplus", " (Log(1 + Exp(x)): Exp, Add, Log run on the vector unit)"}};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
        if (!strcmp(op, h[i][0]))
            return h[i][1];
    return "";
}

/* An operand of a decomposition step: node input i ('x'), a constant k ('k'), or the result
 * of step i ('t'). */
typedef struct operand {
    char kind;
    int i;
    float k;
} operand;

typedef struct dstep {
    const char *op;
    int n_in;
    operand in[3];
    bool to_bool; /* the step yields BOOL (comparisons) */
} dstep;

/* Resize, nearest, by integer factors along the spatial dims (a U-Net's or a decoder's
 * upsampling; torch's F.interpolate(mode="nearest") exports asymmetric + floor): y[.., h,
 * w] = x[.., h / s, w / s] exactly when the source index rounds down, which holds for
 * asymmetric + floor, and for half_pixel / pytorch_half_pixel with round_prefer_floor or
 * round_prefer_ceil ((h + 0.5) / s - 0.5 is never a tie). Rewritten as Reshape (a unit dim
 * after each scaled dim) -> Tile (s there) -> Reshape, exact, on the vector unit. False
 * (the op goes on as unsupported, with its hint) for any other form. */
static bool lower_resize(lctx *c, const nb_node *n, const char *name)
{
    if (strcmp(n->op_type, "Resize") || n->n_in < 3 || n->n_out != 1 || n->out[0] < 0 ||
        n->in[0] < 0 || !nb_op_table_find(c->ops, "Reshape", c->g->opset) ||
        !nb_op_table_find(c->ops, "Tile", c->g->opset))
        return false;
    const nb_value *x = &c->g->values[n->in[0]], *y = &c->g->values[n->out[0]];
    const char *mode = nb_attr_str(n, "mode", "nearest"),
               *ct = nb_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
               *nm = nb_attr_str(n, "nearest_mode", "round_prefer_floor");
    bool exact = (!strcmp(ct, "asymmetric") && !strcmp(nm, "floor")) ||
                 ((!strcmp(ct, "half_pixel") || !strcmp(ct, "pytorch_half_pixel")) &&
                  (!strcmp(nm, "round_prefer_floor") || !strcmp(nm, "round_prefer_ceil")));
    if (strcmp(mode, "nearest") || !exact || x->rank < 3 || x->rank > 4 || y->rank != x->rank)
        return false;
    int64_t s[NB_MAX_RANK];
    for (int d = 0; d < x->rank; d++) { /* the factors, from the output's known dims */
        if (x->dims[d] <= 0 || y->dims[d] <= 0 || y->dims[d] % x->dims[d])
            return false;
        s[d] = y->dims[d] / x->dims[d];
    }
    /* given as scales, each must be that integer itself (x 2.2 on 3 gives 6 too, but reads
       x[floor(h / 2.2)], not x[h / 2]) */
    const nb_value *sv = n->n_in > 2 && n->in[2] >= 0 ? &c->g->values[n->in[2]] : NULL;
    const nb_tensor *sc = sv ? sv->const_val : NULL;
    if (sv && !sc && (n->n_in < 4 || n->in[3] < 0))
        return false; /* scales computed at run time */
    for (int d = 0; sc && sc->numel > 0 && d < x->rank; d++)
        if (sc->numel != x->rank || nb_tensor_get_f64(sc, d) != (double)s[d])
            return false;
    if (s[0] != 1 || s[1] != 1)
        return false; /* batch and channels stay */
    int64_t mid[NB_MAX_RANK], til[NB_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        mid[r] = x->dims[d], til[r++] = x->dims[d];
        if (d >= 2)
            mid[r] = 1, til[r++] = s[d];
    }
    if (r > 6)
        return false;
    int t_in = tensor_in(c, n->in[0], NB_FMT_ND, name);
    const char *ops[3] = {"Reshape", "Tile", "Reshape"};
    int prev = t_in;
    for (int i = 0; i < 3; i++) {
        bool last = i == 2;
        int k = add_task(c, last ? strdup(name) : dupf("%s/%s%d", name, ops[i], i), ops[i],
                         "Resize", NB_TASK_VECTOR, true);
        if (k < 0)
            return true;
        c->n->k[k].inserted = !last;
        task_in(c, k, prev);
        int t = add_tensor(c, last ? strdup(y->name) : dupf("%s/%s%d", y->name, ops[i], i),
                           npu_type(x->dtype), NB_FMT_ND, last ? y->rank : r,
                           last ? y->dims : i == 0 ? mid : til, NB_T_ACTIVATION, -1);
        task_out(c, k, t);
        prev = t;
    }
    c->vt[n->out[0]] = prev;
    rewrite(c, "Resize '%s' (nearest, x%lld by %lld) -> Reshape, Tile, Reshape (exact)", name,
            (long long)s[2], (long long)(x->rank == 4 ? s[3] : 1));
    return true;
}

/* Rewrites an op the Nano lacks into vector ops it has, when the ops the rewrite needs are
 * in the table: Sqrt(x) -> Pow(x, 0.5); Div(x, y) -> Mul(x, Pow(y, -1)); HardSigmoid(x) ->
 * Clip(Add(Mul(x, alpha), beta), 0, 1); GreaterOrEqual(a, b) -> Or(Greater(a, b),
 * Equal(a, b)) and LessOrEqual(a, b) the same with b, a; Less(a, b) -> Greater(b, a);
 * Erf(u) -> Tanh(2 / sqrt(pi) (u + 0.08943 u^3)), GELU's tanh form written for erf (x =
 * sqrt(2) u in 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); the largest deviation
 * from erf over all u is 3.58e-4, at u = -1.83, by numpy over [-6, 6] in steps of 6e-5):
 * torch's default nn.GELU exports as Erf; Softplus(x) -> Log(Add(Exp(x), 1)) (fp16's Exp
 * overflows above x = 11.09: +inf there, where Softplus is x). Float inputs only. Reported
 * as rewrites; returns false when n is none of these. */
static bool decompose(lctx *c, const nb_node *n, const char *name)
{
    const char *op = n->op_type;
    dstep st[5];
    int ns = 0;
    const char *what = NULL;
    int a = 0, b = 1;
    if (n->n_in < 1 || n->in[0] < 0 || !nb_dtype_is_float(c->g->values[n->in[0]].dtype) ||
        n->n_out != 1 || n->out[0] < 0)
        return false;
    if (!strcmp(op, "Sqrt") && n->n_in == 1) {
        st[ns++] = (dstep){"Pow", 2, {{'x', 0, 0}, {'k', 0, 0.5f}}, false};
        what = "Pow(x, 0.5)";
    } else if (!strcmp(op, "Div") && n->n_in == 2) {
        st[ns++] = (dstep){"Pow", 2, {{'x', 1, 0}, {'k', 0, -1.0f}}, false};
        st[ns++] = (dstep){"Mul", 2, {{'x', 0, 0}, {'t', 0, 0}}, false};
        what = "Mul(x, Pow(y, -1))";
    } else if (!strcmp(op, "HardSigmoid")) {
        st[ns++] = (dstep){"Mul", 2, {{'x', 0, 0}, {'k', 0, nb_attr_float(n, "alpha", 0.2f)}},
                           false};
        st[ns++] = (dstep){"Add", 2, {{'t', 0, 0}, {'k', 0, nb_attr_float(n, "beta", 0.5f)}},
                           false};
        st[ns++] = (dstep){"Clip", 3, {{'t', 1, 0}, {'k', 0, 0}, {'k', 0, 1}}, false};
        what = "Clip(Add(Mul(x, alpha), beta), 0, 1)";
    } else if ((!strcmp(op, "GreaterOrEqual") || !strcmp(op, "LessOrEqual")) && n->n_in == 2) {
        if (op[0] == 'L')
            a = 1, b = 0;
        st[ns++] = (dstep){"Greater", 2, {{'x', a, 0}, {'x', b, 0}}, true};
        st[ns++] = (dstep){"Equal", 2, {{'x', a, 0}, {'x', b, 0}}, true};
        st[ns++] = (dstep){"Or", 2, {{'t', 0, 0}, {'t', 1, 0}}, true};
        what = op[0] == 'L' ? "Or(Greater(b, a), Equal(b, a))" : "Or(Greater(a, b), Equal(a, b))";
    } else if (!strcmp(op, "Less") && n->n_in == 2) {
        st[ns++] = (dstep){"Greater", 2, {{'x', 1, 0}, {'x', 0, 0}}, true};
        what = "Greater(b, a)";
    } else if (!strcmp(op, "Erf") && n->n_in == 1) {
        st[ns++] = (dstep){"Pow", 2, {{'x', 0, 0}, {'k', 0, 3.0f}}, false};
        st[ns++] = (dstep){"Mul", 2, {{'t', 0, 0}, {'k', 0, 0.08943f}}, false};
        st[ns++] = (dstep){"Add", 2, {{'x', 0, 0}, {'t', 1, 0}}, false};
        st[ns++] = (dstep){"Mul", 2, {{'t', 2, 0}, {'k', 0, 1.1283791670955126f}}, false};
        st[ns++] = (dstep){"Tanh", 1, {{'t', 3, 0}}, false};
        what = "Tanh(1.12838 (u + 0.08943 u^3)), GELU's tanh form: within 3.58e-4 of erf";
    } else if (!strcmp(op, "Softplus") && n->n_in == 1) {
        st[ns++] = (dstep){"Exp", 1, {{'x', 0, 0}}, false};
        st[ns++] = (dstep){"Add", 2, {{'t', 0, 0}, {'k', 0, 1.0f}}, false};
        st[ns++] = (dstep){"Log", 1, {{'t', 1, 0}}, false};
        what = "Log(Add(Exp(x), 1)); +inf above x = 11.09, where fp16's Exp overflows";
    } else {
        return false;
    }
    for (int i = 0; i < ns; i++)
        if (!nb_op_table_find(c->ops, st[i].op, c->g->opset))
            return false;
    /* the format of the first input carries through, as for any element-wise op */
    nb_format f0 = NB_FMT_ND;
    int t0 = produced(c, n->in[0]);
    if (t0 >= 0)
        f0 = c->n->t[t0].format;
    const nb_value *out = &c->g->values[n->out[0]];
    int res[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; i < ns; i++) {
        int ins[3], shape_of = -1; /* an index: add_tensor may move c->n->t */
        for (int j = 0; j < st[i].n_in; j++) {
            const operand *o = &st[i].in[j];
            if (o->kind == 'x')
                ins[j] = tensor_in(c, n->in[o->i], f0, name);
            else if (o->kind == 't')
                ins[j] = res[o->i];
            else {
                ins[j] = add_tensor(c, dupf("%s/%s_k%d", name, st[i].op, j), NB_FLOAT16,
                                    NB_FMT_ND, 0, NULL, NB_T_WEIGHT, -1);
                if (ins[j] >= 0) {
                    c->n->t[ins[j]].gen = 1;
                    c->n->t[ins[j]].scalar = o->k;
                }
            }
            if (j == 0 && ins[j] >= 0)
                shape_of = ins[j];
        }
        bool last = i == ns - 1;
        int k = add_task(c, last ? strdup(name) : dupf("%s/%s", name, st[i].op), st[i].op, op,
                         NB_TASK_VECTOR, true);
        if (k < 0)
            return true;
        c->n->k[k].inserted = !last;
        for (int j = 0; j < st[i].n_in; j++)
            task_in(c, k, ins[j]);
        /* an intermediate has its first operand's shape, or the output's when it broadcasts */
        int rank = out->rank;
        int64_t dims[NB_MAX_RANK];
        memcpy(dims, out->dims, sizeof dims);
        if (!last && shape_of >= 0 && st[i].in[0].kind != 'k' && st[i].op[0] == 'P') {
            rank = c->n->t[shape_of].rank;
            memcpy(dims, c->n->t[shape_of].dims, sizeof dims);
        }
        nb_format f = f0 == NB_FMT_NC1HWC0 ? spatial_format(rank) : NB_FMT_ND;
        int t = add_tensor(c, last ? strdup(out->name) : dupf("%s/%s", out->name, st[i].op),
                           st[i].to_bool ? NB_BOOL : NB_FLOAT16, f, rank, dims,
                           NB_T_ACTIVATION, -1);
        task_out(c, k, t);
        res[i] = t;
    }
    c->vt[n->out[0]] = res[ns - 1];
    rewrite(c, "%s '%s' -> %s", op, name, what);
    return true;
}

static void lower_cube(lctx *c, const nb_node *n, int ni, const char *name);

/* A Relu or LeakyRelu that alone reads the output of an AscendDequant runs inside it (the
 * dequantization's fused activation): no task of its own, and the AscendDequant's output
 * tensor takes the activation's name. False when n is not so placed. */
static bool fuse_into_dequant(lctx *c, const nb_node *n, const char *name)
{
    bool leaky = !strcmp(n->op_type, "LeakyRelu");
    if ((!leaky && strcmp(n->op_type, "Relu")) || n->n_in != 1 || n->in[0] < 0 ||
        n->n_out != 1 || n->out[0] < 0)
        return false;
    int v = n->in[0];
    const nb_value *val = &c->g->values[v];
    if (val->outer >= 0 || val->is_output || c->uses[v] != 1)
        return false;
    /* the output of a BatchNormalization folded into the cube op: the cube op's own (calibrate
       fuses them alike, and atc then fuses this Relu: the estimate must see the same) */
    for (int hops = 0; c->alias[v] >= 0 && hops < 8; hops++)
        v = c->alias[v];
    if (c->vt[v] < 0)
        return false;
    int t = c->vt[v], k = -1;
    for (int i = c->n->n_k - 1; i >= 0 && k < 0; i--)
        for (int j = 0; j < c->n->k[i].n_out; j++)
            if (c->n->k[i].out[j] == t)
                k = i;
    if (k < 0 || strcmp(c->n->k[k].op_type, "AscendDequant") || c->n->k[k].fused_act)
        return false;
    nb_npu_task *dq = &c->n->k[k];
    char *node = strdup(n->name), *tn = strdup(c->g->values[n->out[0]].name);
    if (!node || !tn) {
        free(node), free(tn);
        *c->oom = true;
        return true;
    }
    dq->fused_act = leaky ? 2 : 1;
    dq->fused_alpha = leaky ? nb_attr_float(n, "alpha", 0.01f) : 0;
    dq->fused_node = node;
    free(c->n->t[t].name);
    c->n->t[t].name = tn;
    c->vt[n->out[0]] = t;
    rewrite(c, "%s '%s' fused into '%s'", n->op_type, name, dq->name);
    return true;
}
static void lower_rnn(lctx *c, const nb_node *n, const nb_op_support *sup, const char *name);
static void rnn_reason(const lctx *c, const nb_node *n, const nb_op_support *sup, char *why,
                       size_t len);
static void lower_if(lctx *c, const nb_node *n, const char *name);

/* Softmax, LogSoftmax of opset 1-12 normalize x flattened to 2-D at axis (default 1), where
 * the vector unit's kernel (opset 13's) normalizes one axis: for an axis that is not the
 * last, Reshape to [prod(dims before), prod(dims from axis)] -> the op over its last dim ->
 * Reshape back (ONNX Changelog, Softmax-13). False (nothing added) when not needed. */
static bool lower_softmax_opset12(lctx *c, const nb_node *n, const char *name)
{
    if ((strcmp(n->op_type, "Softmax") && strcmp(n->op_type, "LogSoftmax")) ||
        c->g->opset >= 13 || n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 || n->out[0] < 0)
        return false;
    const nb_value *x = &c->g->values[n->in[0]], *y = &c->g->values[n->out[0]];
    int64_t axis = nb_attr_int(n, "axis", 1);
    if (x->rank < 1)
        return false;
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank || axis == x->rank - 1)
        return false;
    int64_t d2[2] = {1, 1};
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] < 0)
            return false;
        d2[d < axis ? 0 : 1] *= x->dims[d];
    }
    int xi = tensor_in(c, n->in[0], NB_FMT_ND, name);
    int k1 = add_task(c, dupf("%s/flatten", name), "Reshape", n->op_type, NB_TASK_VECTOR, true);
    int f = add_tensor(c, dupf("%s/2d", name), NB_FLOAT16, NB_FMT_ND, 2, d2, NB_T_ACTIVATION, -1);
    task_in(c, k1, xi);
    task_out(c, k1, f);
    int k2 = add_task(c, strdup(name), n->op_type, n->op_type, NB_TASK_VECTOR, false);
    int s2 = add_tensor(c, dupf("%s/2d_out", name), NB_FLOAT16, NB_FMT_ND, 2, d2,
                        NB_T_ACTIVATION, -1);
    task_in(c, k2, f);
    task_out(c, k2, s2);
    int k3 = add_task(c, dupf("%s/unflatten", name), "Reshape", n->op_type, NB_TASK_VECTOR, true);
    int o = add_tensor(c, strdup(y->name), npu_type(y->dtype), NB_FMT_ND, y->rank, y->dims,
                       NB_T_ACTIVATION, -1);
    task_in(c, k3, s2);
    task_out(c, k3, o);
    c->vt[n->out[0]] = o;
    rewrite(c, "%s '%s' of opset %d over axis %lld: Reshape to [%lld, %lld], the op over the "
            "last dim, Reshape back", n->op_type, name, c->g->opset, (long long)axis,
            (long long)d2[0], (long long)d2[1]);
    return true;
}

/* LogSoftmax, which the Nano's list lacks, as Log(Softmax(x)) on the vector unit (both
 * listed): an inserted Softmax task "<node>/Softmax" over the node's axis (opset 1-12: x
 * flattened to 2-D at axis, as lower_softmax_opset12), then the Log task "<node>". fp16
 * holds softmax values down to 2^-24, so an output below ln(2^-24) = -16.6 becomes -inf
 * (the rewrite says so). False (nothing added) when Softmax or Log is not in the table or a
 * dim is unknown where the flattening needs it. */
static bool lower_logsoftmax(lctx *c, const nb_node *n, const char *name)
{
    if (strcmp(n->op_type, "LogSoftmax") || n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 ||
        n->out[0] < 0 || !nb_dtype_is_float(c->g->values[n->in[0]].dtype) ||
        !nb_op_table_find(c->ops, "Softmax", c->g->opset) ||
        !nb_op_table_find(c->ops, "Log", c->g->opset))
        return false;
    const nb_value *x = &c->g->values[n->in[0]], *y = &c->g->values[n->out[0]];
    if (x->rank < 1)
        return false;
    int64_t axis = nb_attr_int(n, "axis", c->g->opset >= 13 ? -1 : 1);
    if (axis < 0)
        axis += x->rank;
    bool flat = c->g->opset < 13 && axis != x->rank - 1;
    int64_t d2[2] = {1, 1};
    for (int d = 0; flat && d < x->rank; d++) {
        if (x->dims[d] < 0)
            return false;
        d2[d < axis ? 0 : 1] *= x->dims[d];
    }
    int rank = flat ? 2 : x->rank;
    int64_t dims[NB_MAX_RANK];
    memcpy(dims, flat ? d2 : x->dims, sizeof(int64_t) * (size_t)rank);
    int cur = tensor_in(c, n->in[0], NB_FMT_ND, name);
    if (flat) {
        int k = add_task(c, dupf("%s/flatten", name), "Reshape", n->op_type, NB_TASK_VECTOR, true);
        int t = add_tensor(c, dupf("%s/2d", name), NB_FLOAT16, NB_FMT_ND, 2, d2,
                           NB_T_ACTIVATION, -1);
        task_in(c, k, cur);
        task_out(c, k, t);
        cur = t;
    }
    int ks = add_task(c, dupf("%s/Softmax", name), "Softmax", n->op_type, NB_TASK_VECTOR, true);
    int ts = add_tensor(c, dupf("%s/softmax", name), NB_FLOAT16, NB_FMT_ND, rank, dims,
                        NB_T_ACTIVATION, -1);
    task_in(c, ks, cur);
    task_out(c, ks, ts);
    int kl = add_task(c, strdup(name), "Log", n->op_type, NB_TASK_VECTOR, false);
    int tl = flat ? add_tensor(c, dupf("%s/2d_out", name), NB_FLOAT16, NB_FMT_ND, 2, d2,
                               NB_T_ACTIVATION, -1)
                  : add_tensor(c, strdup(y->name), npu_type(y->dtype), NB_FMT_ND, y->rank,
                               y->dims, NB_T_ACTIVATION, -1);
    task_in(c, kl, ts);
    task_out(c, kl, tl);
    if (flat) {
        int k = add_task(c, dupf("%s/unflatten", name), "Reshape", n->op_type, NB_TASK_VECTOR,
                         true);
        int o = add_tensor(c, strdup(y->name), npu_type(y->dtype), NB_FMT_ND, y->rank, y->dims,
                           NB_T_ACTIVATION, -1);
        task_in(c, k, tl);
        task_out(c, k, o);
        tl = o;
    }
    c->vt[n->out[0]] = tl;
    if (flat)
        rewrite(c, "LogSoftmax '%s' of opset %d over axis %lld -> Reshape to [%lld, %lld], "
                "Log(Softmax) over the last dim, Reshape back; outputs below -16.6 (fp16's "
                "smallest softmax, 2^-24) become -inf", name, c->g->opset, (long long)axis,
                (long long)d2[0], (long long)d2[1]);
    else
        rewrite(c, "LogSoftmax '%s' -> Log(Softmax(x)); outputs below -16.6 (fp16's smallest "
                "softmax, 2^-24) become -inf", name);
    return true;
}

/* Split along an axis of known output sizes: one Slice task per output ("<node>/<o>", the
 * exeom's Slice kernel; compile/exeom.c gives each its start), each reading the same input.
 * False (nothing added) when an output's shape is not known. */
static bool lower_split(lctx *c, const nb_node *n, const char *name)
{
    if (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1)
        return false;
    for (int o = 0; o < n->n_out; o++) {
        if (n->out[o] < 0)
            return false;
        const nb_value *v = &c->g->values[n->out[o]];
        if (v->rank < 0 || v->rank != c->g->values[n->in[0]].rank)
            return false;
        for (int d = 0; d < v->rank; d++)
            if (v->dims[d] < 0)
                return false;
    }
    int x = tensor_in(c, n->in[0], NB_FMT_ND, name);
    for (int o = 0; o < n->n_out; o++) {
        const nb_value *v = &c->g->values[n->out[o]];
        int k = add_task(c, dupf("%s/%d", name, o), "Slice", "Split", NB_TASK_VECTOR, false);
        if (k < 0)
            return true;
        task_in(c, k, x);
        int t = add_tensor(c, strdup(v->name), npu_type(v->dtype), NB_FMT_ND, v->rank, v->dims,
                           NB_T_ACTIVATION, -1);
        task_out(c, k, t);
        c->vt[n->out[o]] = t;
    }
    if (n->n_out > 1)
        rewrite(c, "Split '%s' -> %d Slices", name, n->n_out);
    return true;
}

/* What of a Slice the exeom cannot hold (share/doc/exeom.md): starts, ends, axes or steps
 * computed at run time, or more than 3 axes sliced (compile/exeom.c encodes 3). */
static void slice_reason(const lctx *c, const nb_node *n, char *why, size_t len)
{
    if (n->n_in < 3) /* opset 1-9: attributes */
        return;
    for (int i = 1; i < n->n_in && i < 5; i++)
        if (n->in[i] >= 0 && !is_const(c, n->in[i])) {
            snprintf(why, len, "Slice %s computed at run time (the exeom takes constants)",
                     i == 1 ? "starts" : i == 2 ? "ends" : i == 3 ? "axes" : "steps");
            return;
        }
    const nb_value *x = &c->g->values[n->in[0]], *y = &c->g->values[n->out[0]];
    int sliced = 0;
    for (int d = 0; d < x->rank && d < y->rank; d++)
        sliced += x->dims[d] != y->dims[d];
    if (sliced > 3)
        snprintf(why, len, "Slice along %d axes (the exeom holds 3: split it in two Slices)",
                 sliced);
}

/* Node n as a CPU task when no NPU task can hold it (too many operands, a value of more
   than 6 dims) or --cpu_nodes names it; true when it made one. */
static bool cpu_first(lctx *c, const nb_node *n, const char *name)
{
    const char *op = n->op_type;
    /* what no task of the exeom holds, NPU or CPU: more operands than a descriptor has, a
       value of more than 6 dims (estimate says so as atc would) */
    int n_ops = 0, big_rank = 0;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && !is_const(c, n->in[i])) {
            n_ops++;
            big_rank = c->g->values[n->in[i]].rank > 6 ? c->g->values[n->in[i]].rank : big_rank;
        }
    for (int i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && c->g->values[n->out[i]].rank > 6)
            big_rank = c->g->values[n->out[i]].rank;
    /* (a Split is one Slice task per output) */
    bool too_many = n_ops > NB_EXEOM_MAX_IN || (n->n_out > NB_EXEOM_MAX_OUT && strcmp(op, "Split"));
    if (strcmp(op, "If") && (too_many || big_rank)) {
        char why[360];
        if (big_rank)
            snprintf(why, sizeof why, "a value of rank %d (the exeom holds 6 dims)", big_rank);
        else
            snprintf(why, sizeof why, "%d inputs and %d outputs (a task holds %d and %d)", n_ops,
                     n->n_out, NB_EXEOM_MAX_IN, NB_EXEOM_MAX_OUT);
        cpu_task(c, n, name, why);
        return true;
    }
    if (c->o->cpu_nodes && strcmp(op, "If") &&
        nb_list_has(c->o->cpu_nodes, n->name, strlen(n->name))) {
        /* a calibrated cube op (the deploy model's, of the NPU's domain) stays with the NPU's
           int8 operands: only a float node moves */
        cpu_task(c, n, name, strcmp(n->domain, "") && strcmp(n->domain, "ai.onnx")
                                 ? "placed by --cpu_nodes, but quantized "
                                   "(calibrate --cpu_nodes keeps it float)"
                                 : "placed by --cpu_nodes");
        return true;
    }
    return false;
}

/* Dropout at inference (y = x; exporters leave it in): an Identity, while its mask is not
   read and training_mode is absent or a constant false */
static bool dropout_identity(lctx *c, const nb_node *n)
{
    return !strcmp(n->op_type, "Dropout") &&
           (n->n_out < 2 || n->out[1] < 0 ||
            (c->uses[n->out[1]] == 0 && !c->g->values[n->out[1]].is_output)) &&
           (n->n_in < 3 || n->in[2] < 0 ||
            (is_const(c, n->in[2]) && c->g->values[n->in[2]].const_val &&
             c->g->values[n->in[2]].const_val->numel == 1 &&
             nb_tensor_get_f64(c->g->values[n->in[2]].const_val, 0) == 0));
}

/* an AveragePool whose window is the whole spatial extent, without pads (DS-CNN's AvgPool2d
   before its classifier): exactly a GlobalAveragePool */
static bool avgpool_global(lctx *c, const nb_node *n)
{
    const char *op = n->op_type;
    bool gap = false;
    if (!strcmp(op, "AveragePool") && n->n_in >= 1 && n->in[0] >= 0) {
        const nb_value *x = &c->g->values[n->in[0]];
        int nk = 0, np = 0;
        const int64_t *ks = nb_attr_ints(n, "kernel_shape", &nk), *ps = nb_attr_ints(n, "pads", &np);
        const char *ap = nb_attr_str(n, "auto_pad", "NOTSET");
        gap = x->rank >= 3 && nk == x->rank - 2 && (!strcmp(ap, "NOTSET") || !strcmp(ap, "VALID"));
        for (int d = 0; gap && d < nk; d++)
            gap = ks[d] == x->dims[d + 2] && x->dims[d + 2] > 0;
        for (int d = 0; gap && ps && d < np; d++)
            gap = ps[d] == 0;
    }
    return gap;
}

/* Why an NPU vector task cannot run node n (why[0] stays 0 when one can): no kernel yet, a
   Slice, Pad or Gather the exeom cannot encode. */
static void vector_reason(lctx *c, const nb_node *n, const char *npu_op, char *why, size_t len)
{
    const char *op = n->op_type;
    if (!why[0] && !nb_npu_has_kernel(npu_op)) /* listed by the Nano, not compiled yet */
        snprintf(why, len, "%s has no kernel in nanobench's exeom yet", op);
    if (!why[0] && !strcmp(op, "Slice"))
        slice_reason(c, n, why, len);
    if (!why[0] && !strcmp(op, "Pad")) { /* constant pads within int16, no axes (exeom.md) */
        const char *mode = nb_attr_str(n, "mode", "constant");
        const nb_tensor *pt = n->n_in > 1 && n->in[1] >= 0 ? c->g->values[n->in[1]].const_val
                                                            : NULL;
        if (n->n_in > 3 && n->in[3] >= 0)
            snprintf(why, len, "Pad with axes (opset 18): the exeom takes every axis's "
                     "pads");
        else if (!pt || (n->n_in > 2 && n->in[2] >= 0 && !is_const(c, n->in[2])))
            snprintf(why, len, "Pad pads or value computed at run time (the exeom takes "
                     "constants)");
        else if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
            snprintf(why, len, "Pad mode '%.20s' (the exeom has constant, reflect, "
                     "edge)", mode);
        for (int64_t i = 0; pt && !why[0] && i < pt->numel; i++) {
            int64_t v = nb_tensor_get_i64(pt, i);
            if (v < -32768 || v > 32767)
                snprintf(why, len, "Pad of %lld (the exeom holds int16 pads)",
                         (long long)v);
        }
    }
    if (!why[0] && !strcmp(op, "Gather") && (n->n_in < 2 || n->in[1] < 0))
        snprintf(why, len, "Gather without indices");
    else if (!why[0] && !strcmp(op, "Gather") && c->g->values[n->in[1]].const_val &&
             c->g->values[n->in[1]].const_val->numel == 0)
        snprintf(why, len, "Gather of no indices (an empty output: no task to run)");
}

/* Node n as one vector task npu_op (div_const: its divisor as a reciprocal weight; dropout:
   its ratio not read); the TransData its inputs need come first in the task order. Takes
   name. */
static void lower_vector(lctx *c, const nb_node *n, char *name, const char *npu_op,
                         bool div_const, bool dropout)
{
    const char *op = n->op_type;
    bool spatial = spatial_op(op), ew = elementwise_op(op);
    nb_format f0 = NB_FMT_ND;
    if (ew && n->n_in > 0) {
        int t0 = produced(c, n->in[0]);
        if (t0 >= 0)
            f0 = c->n->t[t0].format;
    }
    if (spatial)
        f0 = spatial_format(c->g->values[n->in[0]].rank);
    int *ins = malloc(sizeof(int) * ((size_t)n->n_in + 1)), n_ins = 0;
    if (!ins) {
        free(name);
        *c->oom = true;
        return;
    }
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0 ||
            (is_const(c, n->in[i]) && param_input(op, i) && !gather_indices_tensor(c, n, i)) ||
            (dropout && i >= 1)) /* Dropout's ratio, constant or not, is not read at inference */
            continue;
        if (div_const && i == 1) { /* the divisor's reciprocal, a weight of its own */
            const nb_value *dv = &c->g->values[n->in[1]];
            const nb_tensor *dt = dv->const_val;
            int r = add_tensor(c, dupf("%s/reciprocal", name), NB_FLOAT16, NB_FMT_ND, dt->rank,
                               dt->dims, NB_T_WEIGHT, -1);
            if (r >= 0) {
                c->n->t[r].gen = 2;
                c->n->t[r].src = strdup(dv->name);
                if (!c->n->t[r].src)
                    *c->oom = true;
            }
            ins[n_ins++] = r;
            continue;
        }
        ins[n_ins++] = tensor_in(c, n->in[i], (i == 0 || ew) ? f0 : NB_FMT_ND, name);
    }
    int k = add_task(c, name, npu_op, op, NB_TASK_VECTOR, false);
    if (k < 0) {
        free(ins);
        return;
    }
    for (int i = 0; i < n_ins; i++)
        task_in(c, k, ins[i]);
    free(ins);
    for (int o = 0; o < n->n_out; o++) {
        int v = n->out[o];
        if (v < 0)
            continue;
        const nb_value *val = &c->g->values[v];
        nb_format f = (spatial || ew) && f0 == NB_FMT_NC1HWC0 ? spatial_format(val->rank)
                                                             : NB_FMT_ND;
        /* ArgMax's int64 indices are int32 on the NPU (argmax_index) */
        nb_dtype dt = argmax_index(c, v) ? NB_INT32 : npu_type(val->dtype);
        int t = add_tensor(c, strdup(val->name), dt, f, val->rank, val->dims, NB_T_ACTIVATION,
                           -1);
        task_out(c, k, t);
        c->vt[v] = t;
    }
}

static void lower_node(lctx *c, int ni)
{
    const nb_node *n = &c->g->nodes[ni];
    const char *op = n->op_type;
    char *name = dupf("%s%s", c->prefix, n->name);
    if (!name) {
        *c->oom = true;
        return;
    }
    if (cpu_first(c, n, name)) {
        free(name);
        return;
    }
    bool flatten = !strcmp(op, "Flatten");
    bool div_const = !strcmp(op, "Div") && n->n_in == 2 && is_const(c, n->in[1]) &&
                     nb_dtype_is_float(c->g->values[n->in[1]].const_val->dtype);
    /* Dropout at inference: an Identity (dropout_identity) */
    bool dropout = dropout_identity(c, n);
    /* an AveragePool over the whole spatial extent: a GlobalAveragePool (avgpool_global) */
    bool gap = avgpool_global(c, n);
    const char *npu_op = flatten ? "Reshape" : div_const ? "Mul" : dropout ? "Identity"
                         : gap ? "GlobalAveragePool" : op;
    const nb_op_support *sup = nb_op_table_find(c->ops, npu_op, c->g->opset);
    char why[360] = "";
    if (!strcmp(op, "If") && n->n_attr > 0) {
        lower_if(c, n, name);
        free(name);
        return;
    }
    runtime_reason(c, n, why, sizeof why);
    if (!sup && !why[0] && lower_logsoftmax(c, n, name)) {
        free(name);
        return;
    }
    if (!sup && !why[0] && decompose(c, n, name)) {
        free(name);
        return;
    }
    if (!sup && !why[0] && lower_resize(c, n, name)) {
        free(name);
        return;
    }
    if (!sup)
        snprintf(why, sizeof why, "%s is not in the Nano's op list%s", op, hint(op));
    if (!why[0] && sup->unit == NB_UNIT_CUBE_VECTOR) {
        rnn_reason(c, n, sup, why, sizeof why);
        if (!why[0]) {
            lower_rnn(c, n, sup, name);
            free(name);
            return;
        }
    }
    if (!why[0] && sup->unit == NB_UNIT_CUBE) {
        cube_reason(c, n, why, sizeof why);
        if (!why[0]) {
            lower_cube(c, n, ni, name);
            free(name);
            return;
        }
    }
    if (!why[0] && !strcmp(op, "Split") && lower_split(c, n, name)) {
        free(name);
        return;
    }
    if (!why[0])
        vector_reason(c, n, npu_op, why, sizeof why);
    if (why[0]) {
        cpu_task(c, n, name, why);
        free(name);
        return;
    }
    if (fuse_into_dequant(c, n, name)) {
        free(name);
        return;
    }
    if (lower_softmax_opset12(c, n, name)) {
        free(name);
        return;
    }
    if (flatten)
        rewrite(c, "Flatten '%s' -> Reshape", name);
    if (div_const)
        rewrite(c, "Div '%s' by a constant -> Mul by its reciprocal", name);
    if (dropout)
        rewrite(c, "Dropout '%s' (inference: y = x) -> Identity", name);
    if (gap)
        rewrite(c, "AveragePool '%s' over the whole spatial extent -> GlobalAveragePool", name);
    lower_vector(c, n, name, npu_op, div_const, dropout);
}

/* Conv, ConvTranspose, MatMul, Gemm and the integer forms, with constant conv weights
 * (cube_reason). Matrix weights are stored as N x K in FRACTAL_NZ (K along C0, N in rows of
 * 16, as FRACTAL_Z does for conv weights): a Gemm's transB = 1 B as it is, a MatMul's B
 * [K, N] transposed at compile time, a 1-D B [K] as 1 x K. */
static void lower_cube(lctx *c, const nb_node *n, int ni, const char *name)
{
    const char *op = n->op_type;
    bool conv = conv_op(op), transpose = !strcmp(op, "ConvTranspose"), gemm = !strcmp(op, "Gemm");
    nb_dtype wt = weight_type(c, n, name);
    int wi = weight_index(op), bi = bias_index(op);
    const nb_value *y = &c->g->values[n->out[0]];
    const nb_value *w = &c->g->values[n->in[wi]];
    const nb_value *x = &c->g->values[n->in[0]];
    bool wconst = is_const(c, n->in[wi]);
    bool run_bias = bi >= 0 && n->n_in > bi && n->in[bi] >= 0 && !is_const(c, n->in[bi]);
    int64_t macs = 0, channels = 1;
    nb_format fx = conv ? NB_FMT_NC1HWC0 : NB_FMT_FRACTAL_NZ;
    int wrank = w->rank;
    int64_t wd[NB_MAX_RANK];
    memcpy(wd, w->dims, sizeof wd);
    int64_t wbytes = -1; /* by the tensor's format */
    if (conv) {
        int64_t kh = w->rank == 4 ? w->dims[2] : 1, kw = w->dims[w->rank - 1];
        int64_t group = nb_attr_int(n, "group", 1);
        /* W is [Cout, Cin/g, k] for Conv and [Cin, Cout/g, k] for ConvTranspose: FRACTAL_Z
           of its two leading dims as they stand */
        wbytes = nb_fractal_z_bytes(w->dims[0], w->dims[1], kh, kw, wt);
        channels = transpose ? w->dims[1] * group : w->dims[0];
        int64_t spatial = 1;
        const nb_value *sp = transpose ? x : y;
        for (int d = 2; d < sp->rank; d++)
            spatial *= sp->dims[d];
        macs = sp->dims[0] * w->dims[0] * w->dims[1] * spatial * kh * kw;
    } else {
        /* the weight is stored as the N x K matrix: each output column's K values along
           C0, as FRACTAL_Z puts a conv's input channels (the cube's weight tile is C0 of K
           by 16 of N); a Gemm with transB = 1 already holds B so */
        if (wrank == 1) { /* MatMul's 1-D B [K]: N = 1 */
            wrank = 2;
            wd[0] = 1;
            wd[1] = w->dims[0];
        } else if (!(gemm && nb_attr_int(n, "transB", 0))) {
            wd[wrank - 2] = w->dims[wrank - 1];
            wd[wrank - 1] = w->dims[wrank - 2];
        }
        int64_t kdim = wd[wrank - 1];
        channels = wd[wrank - 2];
        int64_t rows = 1; /* y without its N dim (which a 1-D B drops) */
        for (int d = 0; d + (w->rank == 1 ? 0 : 1) < y->rank; d++)
            rows *= y->dims[d];
        macs = rows * channels * kdim;
        if (gemm && wconst)
            rewrite(c, "Gemm '%s' with a constant B kept as one cube op", name);
    }
    /* the AscendQuant (and TransData) of the operands come before the cube task */
    nb_dtype xt = act_type(c, n, name);
    if (xt == NB_INT16)
        rewrite(c, "%s '%s': int16 input (dst_bits 16), the cube's s16 x s8", op, name);
    int xq = quant_in(c, n->in[0], fx, name, xt);
    int wq = wconst ? -1 : quant_in(c, n->in[wi], NB_FMT_FRACTAL_NZ, name, NB_INT8);
    int k = add_task(c, strdup(name), op, op, NB_TASK_CUBE, false);
    if (k < 0)
        return;
    task_in(c, k, xq);
    if (wconst)
        task_in(c, k, weight_tensor(c, n->in[wi], conv ? NB_FMT_FRACTAL_Z : NB_FMT_FRACTAL_NZ,
                                    wrank, wd, wbytes, wt));
    else
        task_in(c, k, wq);
    c->n->k[k].macs = macs;
    cube_params(c, k, name, channels);
    /* a BatchNormalization that only reads this output folds into the weights and bias */
    int v = n->out[0];
    if ((conv || gemm) && wconst && !run_bias && c->uses[v] == 1 && !y->is_output) {
        for (int j = ni + 1; j < c->g->n_nodes; j++) {
            const nb_node *b = &c->g->nodes[j];
            if (strcmp(b->op_type, "BatchNormalization") || b->n_in < 5 || b->in[0] != v ||
                b->n_out < 1 || b->out[0] < 0)
                continue;
            bool consts = true;
            for (int q = 1; q < 5; q++)
                consts &= is_const(c, b->in[q]);
            if (!consts)
                break;
            c->skip[j] = true;
            c->alias[b->out[0]] = v;
            rewrite(c, "BatchNormalization '%s%s' folded into %s '%s'", c->prefix, b->name, op,
                    name);
            break;
        }
    }
    int dq = dequant_out(c, k, v, name, conv ? NB_FMT_NC1HWC0 : NB_FMT_FRACTAL_NZ, run_bias);
    if (run_bias) { /* a bias computed at run time: added on the vector unit */
        int bt = tensor_in(c, n->in[bi], NB_FMT_ND, name);
        const nb_npu_tensor d = c->n->t[dq];
        int ka = add_task(c, dupf("%s/Add_bias", name), "Add", "Add", NB_TASK_VECTOR, true);
        int o = add_tensor(c, strdup(y->name), NB_FLOAT16, d.format, d.rank, d.dims,
                           NB_T_ACTIVATION, -1);
        task_in(c, ka, dq);
        task_in(c, ka, bt);
        task_out(c, ka, o);
        c->vt[v] = o;
        rewrite(c, "%s '%s': the run-time bias '%s' is added by a vector Add", op, name,
                c->g->values[n->in[bi]].name);
    }
}

/* True when attribute name of n, if present, is the list of strings dflt (n_dflt of them,
 * repeated per direction). */
static bool default_strings(const nb_node *n, const char *name, const char *const *dflt,
                            int n_dflt)
{
    const nb_attr *a = nb_attr_find(n, name);
    if (!a)
        return true;
    for (int i = 0; i < a->n; i++)
        if (!a->strings || strcmp(a->strings[i], dflt[i % n_dflt]))
            return false;
    return true;
}

/* include/nb/atc.h */
void nb_npu_rnn_reason(const nb_graph *g, const nb_node *n, int max_directions, char *why,
                       size_t len)
{
    static const char *const lstm_act[] = {"Sigmoid", "Tanh", "Tanh"};
    static const char *const gru_act[] = {"Sigmoid", "Tanh"};
    bool lstm = !strcmp(n->op_type, "LSTM");
    why[0] = 0;
    if (n->n_in < 3 || n->in[1] < 0 || n->in[2] < 0 || !g->values[n->in[1]].const_val ||
        !g->values[n->in[2]].const_val) {
        snprintf(why, len, "%s with run-time W or R: the cube's weights are constants",
                 n->op_type);
        return;
    }
    const nb_value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const nb_value *r = &g->values[n->in[2]];
    if (x->rank != 3 || w->rank != 3 || r->rank != 3) {
        snprintf(why, len, "%s with X, W or R not of rank 3", n->op_type);
        return;
    }
    int64_t dirs = w->dims[0], seq = x->dims[0];
    if (max_directions && dirs > max_directions)
        snprintf(why, len, "%s with %lld directions: the Nano runs %d", n->op_type,
                 (long long)dirs, max_directions);
    else if (nb_attr_int(n, "layout", 0) != 0)
        snprintf(why, len, "%s with layout 1 (batch first)", n->op_type);
    else if (!default_strings(n, "activations", lstm ? lstm_act : gru_act, lstm ? 3 : 2))
        snprintf(why, len, "%s with activations other than %s: the Nano's gates are fixed",
                 n->op_type, lstm ? "Sigmoid, Tanh, Tanh" : "Sigmoid, Tanh");
    else if (nb_attr_find(n, "clip"))
        snprintf(why, len, "%s with clip: the Nano's gates do not clip", n->op_type);
    else if (lstm && nb_attr_int(n, "input_forget", 0))
        snprintf(why, len, "LSTM with input_forget (coupled gates)");
    else if (n->n_in > 4 && n->in[4] >= 0) {
        const nb_tensor *sl = g->values[n->in[4]].const_val;
        bool full = sl != NULL;
        for (int64_t i = 0; full && i < sl->numel; i++)
            full = nb_tensor_get_i64(sl, i) == seq;
        if (!full)
            snprintf(why, len, "%s with sequence_lens '%s' shorter than (or not known as) "
                     "seq_len %lld: the unrolled steps run every step", n->op_type,
                     g->values[n->in[4]].name, (long long)seq);
    }
}

static void rnn_reason(const lctx *c, const nb_node *n, const nb_op_support *sup, char *why,
                       size_t len)
{
    nb_npu_rnn_reason(c->g, n, sup->max_directions, why, len);
}

/* LSTM and GRU: one cube+vector task per time step (seq_len 1 each), sharing one copy of
 * W, R (each N x K as ONNX stores them: [dirs, gates x hidden, input]), the bias and the
 * peepholes; longer sequences are unrolled and reported. */
static void lower_rnn(lctx *c, const nb_node *n, const nb_op_support *sup, const char *name)
{
    (void)sup;
    bool lstm = !strcmp(n->op_type, "LSTM");
    const nb_value *x = &c->g->values[n->in[0]], *w = &c->g->values[n->in[1]];
    const nb_value *r = &c->g->values[n->in[2]];
    int gates = lstm ? 4 : 3;
    int64_t seq = x->dims[0], batch = x->dims[1], in_sz = x->dims[2];
    int64_t dirs = w->dims[0], hid = r->dims[2];
    int64_t wd[3] = {dirs, gates * hid, in_sz}, rd[3] = {dirs, gates * hid, hid};
    nb_dtype rwt = c->o->weight_bits == 4 ? NB_NPU_INT4 : NB_INT8; /* estimate's option */
    int wq = weight_tensor(c, n->in[1], NB_FMT_FRACTAL_NZ, 3, wd, -1, rwt);
    int rq = weight_tensor(c, n->in[2], NB_FMT_FRACTAL_NZ, 3, rd, -1, rwt);
    int64_t bias_d[1] = {dirs * ((2 * gates * hid + 15) / 16 * 16)};
    int bq = add_tensor(c, dupf("%s/bias", name), NB_INT32, NB_FMT_ND, 1, bias_d, NB_T_WEIGHT,
                        -1);
    /* the dequantization of the two products, W x (deq_scale_w) and R x h (deq_scale_r), per
       gate row: uint64 as a cube op's, laid out as the bias */
    int dsq = add_tensor(c, dupf("%s/deq_scale", name), NB_UINT64, NB_FMT_ND, 1, bias_d,
                         NB_T_WEIGHT, -1);
    if (bq >= 0 && dsq >= 0)
        c->n->t[bq].gen = 3, c->n->t[dsq].gen = 4;
    int pq = lstm && n->n_in > 7 && n->in[7] >= 0 ? tensor_in(c, n->in[7], NB_FMT_ND, name)
                                                   : -1;
    int xq = quant_in(c, n->in[0], NB_FMT_FRACTAL_NZ, name, NB_INT8);
    int64_t hd[3] = {dirs, batch, hid}; /* the state of each direction */
    int h = n->n_in > 5 && n->in[5] >= 0 ? tensor_in(c, n->in[5], NB_FMT_ND, name) : -1;
    int cst = lstm && n->n_in > 6 && n->in[6] >= 0 ? tensor_in(c, n->in[6], NB_FMT_ND, name)
                                                    : -1;
    const nb_value *yv = n->n_out > 0 && n->out[0] >= 0 ? &c->g->values[n->out[0]] : NULL;
    int y = yv ? add_tensor(c, strdup(yv->name), NB_FLOAT16, NB_FMT_ND, yv->rank, yv->dims,
                            NB_T_ACTIVATION, -1)
               : -1;
    if (seq > 1)
        rewrite(c, "%s '%s' unrolled into %lld steps sharing one weight copy", n->op_type,
                name, (long long)seq);
    for (int64_t s = 0; s < seq && !*c->oom; s++) {
        char *sname = seq > 1 ? dupf("%s/t%lld", name, (long long)s) : strdup(name);
        int hq = -1;
        if (h >= 0) { /* the state enters the cube as int8 */
            int k = add_task(c, dupf("%s/t%lld/AscendQuant", name, (long long)s),
                             "AscendQuant", "AscendQuant", NB_TASK_VECTOR, true);
            hq = add_tensor(c, dupf("%s/h%lld/int8", name, (long long)s), NB_INT8,
                            NB_FMT_FRACTAL_NZ, 3, hd, NB_T_ACTIVATION, -1);
            task_in(c, k, h);
            task_out(c, k, hq);
            c->n->n_quant++;
        }
        int k = add_task(c, sname, n->op_type, n->op_type, NB_TASK_CUBE, false);
        if (k < 0)
            return;
        task_in(c, k, xq);
        task_in(c, k, wq);
        task_in(c, k, rq);
        task_in(c, k, bq);
        task_in(c, k, dsq);
        task_in(c, k, hq);
        /* slot 6: an LSTM's cell state; a GRU's state h in fp16, which its update
           (1 - z) h~ + z h reads besides the int8 copy entering R */
        task_in(c, k, lstm ? cst : h);
        task_in(c, k, pq);
        c->n->k[k].macs = dirs * batch * gates * hid * (in_sz + hid);
        h = add_tensor(c, dupf("%s/h%lld", name, (long long)(s + 1)), NB_FLOAT16, NB_FMT_ND, 3,
                       hd, NB_T_ACTIVATION, -1);
        task_out(c, k, h);
        if (lstm) {
            cst = add_tensor(c, dupf("%s/c%lld", name, (long long)(s + 1)), NB_FLOAT16,
                             NB_FMT_ND, 3, hd, NB_T_ACTIVATION, -1);
            task_out(c, k, cst);
        }
        task_out(c, k, y); /* each step writes its slice of Y */
    }
    if (yv)
        c->vt[n->out[0]] = y;
    /* the last step's state is Y_h (and Y_c): it takes the value's name, so that NAME.dbg
       and the outputs of a run name it as the model does */
    for (int o = 1; o < (lstm ? 3 : 2); o++) {
        int t = o == 1 ? h : cst;
        if (n->n_out <= o || n->out[o] < 0 || t < 0)
            continue;
        c->vt[n->out[o]] = t;
        if (c->n->t[t].role == NB_T_ACTIVATION || c->n->t[t].role == NB_T_OUTPUT) {
            char *nm = strdup(c->g->values[n->out[o]].name);
            if (!nm) {
                *c->oom = true;
                continue;
            }
            free(c->n->t[t].name);
            c->n->t[t].name = nm;
        }
    }
}

static bool ctx_init(lctx *c, const nb_graph *g, lctx *parent, char *prefix)
{
    size_t nv = (size_t)g->n_values + 1;
    c->g = g;
    c->parent = parent;
    c->prefix = prefix;
    c->vt = malloc(sizeof(int) * nv);
    c->vt_alt = malloc(sizeof(int) * nv);
    c->vh = malloc(sizeof(int) * nv);
    c->vq = malloc(sizeof(int) * nv);
    c->vw = malloc(sizeof(int) * nv);
    c->alias = malloc(sizeof(int) * nv);
    c->uses = calloc(nv, sizeof(int));
    c->skip = calloc((size_t)g->n_nodes + 1, sizeof(bool));
    if (!prefix || !c->vt || !c->vt_alt || !c->vh || !c->vq || !c->vw || !c->alias || !c->uses ||
        !c->skip)
        return false;
    for (int v = 0; v < g->n_values; v++)
        c->vt[v] = c->vt_alt[v] = c->vh[v] = c->vq[v] = c->vw[v] = c->alias[v] = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                c->uses[n->in[k]]++;
        for (int k = 0; k < n->n_implicit; k++)
            c->uses[n->implicit[k]]++;
    }
    return true;
}

static void ctx_free(lctx *c)
{
    free(c->vt), free(c->vt_alt), free(c->vh), free(c->vq), free(c->vw), free(c->alias), free(c->uses);
    free(c->skip), free(c->prefix);
}

static void lower_nodes(lctx *c)
{
    const nb_graph *g = c->g;
    for (int i = 0; i < g->n_nodes && !*c->oom; i++) {
        const nb_node *n = &g->nodes[i];
        bool folded = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++)
            folded &= n->out[k] < 0 || is_const(c, n->out[k]);
        if (folded || c->skip[i])
            continue;
        lower_node(c, i);
    }
}

/* If: the CPU evaluates the condition and runs one branch, so the tasks of both branches
 * are compiled (in the order the model lists them; their weights both count); the If is a CPU
 * task after them that reads the condition and the branch outputs and writes its outputs.
 * The arena plan therefore holds both branches' results at once: an upper bound. */
static void lower_if(lctx *c, const nb_node *n, const char *name)
{
    int n_br = 0, total = 0, br_first[2] = {0, 0}, br_count[2] = {0, 0};
    int *outs = malloc(sizeof(int) * ((size_t)n->n_attr * (size_t)(n->n_out + 1) + 1));
    if (!outs) {
        *c->oom = true;
        return;
    }
    for (int a = 0; a < n->n_attr && !*c->oom; a++) {
        const nb_graph *sub = n->attrs[a].g;
        if (!sub)
            continue;
        lctx b = {.ops = c->ops, .o = c->o, .n = c->n, .oom = c->oom};
        if (!ctx_init(&b, sub, c, dupf("%s/%s/", name, n->attrs[a].name))) {
            ctx_free(&b);
            *c->oom = true;
            break;
        }
        int before = c->n->n_k;
        lower_nodes(&b);
        total += c->n->n_k - before;
        for (int o = 0; o < n->n_out; o++)
            outs[n_br * n->n_out + o] =
                o < sub->n_outputs ? tensor_in(&b, sub->outputs[o], NB_FMT_ND, name) : -1;
        /* the branch's tasks, with the layout or type copies of its outputs the If reads */
        if (n_br < 2)
            br_first[n_br] = before, br_count[n_br] = c->n->n_k - before;
        n_br++;
        ctx_free(&b);
    }
    char why[360];
    /* what the Nano does: its CPU reads the condition and takes the branch's outputs; both
       branches' tasks run on the NPU before it (exeom.md) */
    snprintf(why, sizeof why, "If on a condition known only at run time: the CPU picks the "
             "branch taken (its %d branch tasks run on the NPU)", total);
    int k = add_task(c, strdup(name), "If", "If", NB_TASK_CPU, false);
    if (k < 0 || *c->oom) {
        free(outs);
        return;
    }
    /* the select copies one shape: every branch's output o as the If's output o, known */
    bool same = n_br == 2;
    for (int o = 0; o < n->n_out && same; o++) {
        const nb_value *val = n->out[o] >= 0 ? &c->g->values[n->out[o]] : NULL;
        same = val && val->rank >= 0;
        for (int d = 0; same && d < val->rank; d++)
            same = val->dims[d] >= 0;
        for (int b = 0; b < n_br && same; b++) {
            int t = outs[b * n->n_out + o];
            same = t >= 0 && c->n->t[t].rank == val->rank &&
                   !memcmp(c->n->t[t].dims, val->dims, sizeof(int64_t) * (size_t)val->rank);
        }
    }
    c->n->k[k].cpu_ok = same;
    for (int b = 0; b < 2; b++)
        c->n->k[k].br_first[b] = br_first[b], c->n->k[k].br_count[b] = br_count[b];
    if (!same)
        snprintf(why, sizeof why, "If whose branches give outputs of other shapes (or of "
                 "shapes known only at run time): the CPU's select copies one shape");
    snprintf(c->n->k[k].reason, sizeof c->n->k[k].reason, "%s", why);
    task_in(c, k, tensor_in(c, n->in[0], NB_FMT_ND, name));
    for (int i = 0; i < n_br * n->n_out; i++)
        task_in(c, k, outs[i]);
    for (int o = 0; o < n->n_out; o++) {
        int v = n->out[o];
        if (v < 0)
            continue;
        /* branches may differ in shape: the output buffer holds the larger */
        int64_t bytes = 0;
        for (int b = 0; b < n_br; b++) {
            int t = outs[b * n->n_out + o];
            if (t >= 0 && c->n->t[t].bytes > bytes)
                bytes = c->n->t[t].bytes;
        }
        const nb_value *val = &c->g->values[v];
        int t = add_tensor(c, strdup(val->name), npu_type(val->dtype), NB_FMT_ND, val->rank,
                           val->dims, NB_T_ACTIVATION, -1);
        if (t >= 0 && c->n->t[t].bytes < bytes)
            c->n->t[t].bytes = bytes;
        task_out(c, k, t);
        c->vt[v] = t;
    }
    free(outs);
}

/* ---- unique names: the dumps and the debug file name tasks and tensors ---- */

static char **sort_names;

static int cmp_name(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    int r = strcmp(sort_names[a], sort_names[b]);
    return r ? r : (a > b) - (a < b);
}

static bool exists_sorted(char **names, const int *idx, int n, const char *s)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2, r = strcmp(names[idx[mid]], s);
        if (!r)
            return true;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Renames the second and later holders of a name (in array order) to name_1, name_2, ...,
 * skipping suffixes that another name already has. names[i] are heap strings. */
static bool unique_names(char **names, int n)
{
    if (n < 2)
        return true;
    int *idx = malloc(sizeof(int) * (size_t)n);
    char **orig = malloc(sizeof(char *) * (size_t)n);
    if (!idx || !orig) {
        free(idx), free(orig);
        return false;
    }
    for (int i = 0; i < n; i++)
        idx[i] = i, orig[i] = names[i];
    sort_names = orig;
    qsort(idx, (size_t)n, sizeof(int), cmp_name);
    bool ok = true;
    for (int s = 0; s < n;) {
        int e = s + 1;
        while (e < n && !strcmp(orig[idx[e]], orig[idx[s]]))
            e++;
        for (int q = s + 1, suffix = 1; q < e && ok; q++, suffix++) {
            char *nm;
            while ((nm = dupf("%s_%d", orig[idx[s]], suffix)) &&
                   exists_sorted(orig, idx, n, nm)) {
                free(nm);
                suffix++;
            }
            if (!nm) {
                ok = false;
                break;
            }
            names[idx[q]] = nm; /* orig keeps the old pointer until the end */
        }
        s = e;
    }
    for (int i = 0; i < n; i++)
        if (names[i] != orig[i])
            free(orig[i]);
    free(idx), free(orig);
    return ok;
}

static bool unique_graph_names(nb_npu_graph *g)
{
    int n = g->n_t > g->n_k ? g->n_t : g->n_k;
    char **names = malloc(sizeof(char *) * ((size_t)n + 1));
    if (!names)
        return false;
    for (int i = 0; i < g->n_k; i++)
        names[i] = g->k[i].name;
    bool ok = unique_names(names, g->n_k);
    for (int i = 0; i < g->n_k; i++)
        g->k[i].name = names[i];
    /* a constant of the model keeps its value's name in src: two tensors of one constant (an
       NPU task's fp16 copy and a CPU task's float32 one) are named name and name_1 */
    for (int i = 0; i < g->n_t && ok; i++)
        if (g->t[i].role == NB_T_WEIGHT && g->t[i].gen == 0 && !g->t[i].src)
            ok = (g->t[i].src = strdup(g->t[i].name)) != NULL;
    for (int i = 0; i < g->n_t; i++)
        names[i] = g->t[i].name;
    ok = ok && unique_names(names, g->n_t);
    for (int i = 0; i < g->n_t; i++)
        g->t[i].name = names[i];
    free(names);
    return ok;
}

/* Whether graph input v is fed as fp16: it is not float, or --input_fp16_nodes is not
 * given, or it names v. */
static bool fp16_input(const nb_value *v, const char *list)
{
    return !list || v->dtype != NB_FLOAT || nb_list_has(list, v->name, strlen(v->name));
}

/* Refuses what the lowering cannot take: an input of unknown shape, and an
 * --input_fp16_nodes entry that names no input. */
static nb_err check_inputs(const nb_graph *g, const nb_npu_opts *o, nb_status *st)
{
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        if (v->rank < 0)
            return nb_fail(st, NB_ERR_SHAPE, "input '%s' has an unknown rank; give its shape "
                           "with --input_shape \"%s:d0,d1,...\"", v->name, v->name);
        bool dyn = false;
        char shape[256] = "";
        size_t len = 0;
        for (int d = 0; d < v->rank; d++) {
            dyn |= v->dims[d] < 0;
            if (len >= sizeof shape)
                continue;
            if (v->dims[d] >= 0)
                len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", d ? "," : "",
                                        (long long)v->dims[d]);
            else
                len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%.40s", d ? "," : "",
                                        v->dim_params[d] ? v->dim_params[d] : "?");
        }
        if (dyn)
            return nb_fail(st, NB_ERR_SHAPE, "input '%s' has dynamic dims [%s]; the NPU needs "
                           "one shape: give it with --input_shape \"%s:...\"", v->name, shape,
                           v->name);
    }
    for (const char *p = o->input_fp16_nodes; p && *p;) {
        const char *end = strchr(p, ';');
        int l = end ? (int)(end - p) : (int)strlen(p);
        bool found = l == 0;
        for (int i = 0; i < g->n_inputs && !found; i++) {
            const char *nm = g->values[g->inputs[i]].name;
            found = (int)strlen(nm) == l && !strncmp(nm, p, (size_t)l);
        }
        if (!found)
            return nb_fail(st, NB_ERR_ARG, "--input_fp16_nodes: '%.*s' is not an input of the "
                           "model", l, p);
        p = end ? end + 1 : NULL;
    }
    return NB_OK;
}

/* Whether g or one of its branches has a node named name (len bytes). */
static bool has_node(const nb_graph *g, const char *name, size_t len)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        if (strlen(n->name) == len && !strncmp(n->name, name, len))
            return true;
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g && has_node(n->attrs[a].g, name, len))
                return true;
    }
    return false;
}

/* include/nb/atc.h */
nb_err nb_npu_check_cpu_nodes(const nb_graph *g, const char *list, nb_status *st)
{
    bool any = false;
    for (const char *p = list; p && *p; p++)
        any |= *p != ';' && *p != ' ';
    if (list && !any)
        return nb_fail(st, NB_ERR_ARG, "--cpu_nodes names no node");
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && !has_node(g, p, len))
            return nb_fail(st, NB_ERR_ARG, "--cpu_nodes names '%.*s', which is no node of the "
                           "model", (int)(len > 200 ? 200 : len), p);
        p = end ? end + 1 : p + len;
    }
    return NB_OK;
}

nb_err nb_npu_lower(const struct nb_model *m, const nb_op_table *ops, const nb_npu_opts *o,
                    nb_npu_graph *out, nb_status *st)
{
    memset(out, 0, sizeof *out);
    const nb_graph *g = m->graph;
    nb_npu_opts opts = o ? *o : (nb_npu_opts){0};
    opts.weight_bits = opts.weight_bits == 4 ? 4 : 8;
    nb_err e = check_inputs(g, &opts, st);
    if (!e)
        e = nb_npu_check_cpu_nodes(g, opts.cpu_nodes, st);
    if (e)
        return e;
    bool oom = false;
    lctx c = {.ops = ops, .o = &opts, .n = out, .oom = &oom};
    if (!ctx_init(&c, g, NULL, strdup(""))) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* graph inputs: their own buffers, fp16 for the float inputs named by
       --input_fp16_nodes (all when it is not given), else float32 and a Cast to fp16 */
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        if (v->dtype == NB_INT64) { /* int32 on the NPU (int64_model_input) */
            c.vt[g->inputs[i]] = add_tensor(&c, strdup(v->name), NB_INT32, NB_FMT_ND, v->rank,
                                            v->dims, NB_T_INPUT, -1);
            continue;
        }
        if (fp16_input(v, opts.input_fp16_nodes)) {
            c.vt[g->inputs[i]] = add_tensor(&c, strdup(v->name), npu_type(v->dtype), NB_FMT_ND,
                                            v->rank, v->dims, NB_T_INPUT, -1);
            continue;
        }
        int in = add_tensor(&c, strdup(v->name), NB_FLOAT, NB_FMT_ND, v->rank, v->dims,
                            NB_T_INPUT, -1);
        int k = add_task(&c, dupf("%s/Cast", v->name), "Cast", "Cast", NB_TASK_VECTOR, true);
        int h = add_tensor(&c, dupf("%s/fp16", v->name), NB_FLOAT16, NB_FMT_ND, v->rank,
                           v->dims, NB_T_ACTIVATION, -1);
        task_in(&c, k, in);
        task_out(&c, k, h);
        out->n_cast++;
        c.vt[g->inputs[i]] = h;
    }
    lower_nodes(&c);
    /* graph outputs: their own buffers in ND (a TransData where the producer wrote 5HD),
       bound in the model's order */
    int n_outs = 0;
    for (int i = 0; i < g->n_outputs && !oom; i++) {
        int v = g->outputs[i];
        lctx *oc = owner(&c, &v);
        c.cpu_reader = opts.output_fp32; /* a CPU task's float32 output leaves as it is */
        int t = tensor_in(&c, g->outputs[i], NB_FMT_ND, g->values[g->outputs[i]].name);
        c.cpu_reader = false;
        if (t >= 0 && is_const(oc, v)) {
            /* a constant output: its weight copied into the output buffer */
            const nb_npu_tensor src = out->t[t]; /* a copy: add_tensor may move the array */
            int k = add_task(&c, dupf("%s/Identity", src.name), "Identity", "Identity",
                             NB_TASK_VECTOR, true);
            int o2 = add_tensor(&c, dupf("%s/out", src.name), src.dtype, NB_FMT_ND, src.rank,
                                src.dims, NB_T_ACTIVATION, -1);
            task_in(&c, k, t);
            task_out(&c, k, o2);
            t = o2;
        }
        if (t >= 0 && opts.output_fp32 && out->t[t].dtype == NB_FLOAT16) {
            /* --output_type FP32: a Cast into a float32 output buffer */
            const nb_npu_tensor src = out->t[t]; /* a copy: add_tensor may move the array */
            int k = add_task(&c, dupf("%s/Cast", src.name), "Cast", "Cast", NB_TASK_VECTOR,
                             true);
            int f32 = add_tensor(&c, dupf("%s/fp32", src.name), NB_FLOAT, NB_FMT_ND, src.rank,
                                 src.dims, NB_T_ACTIVATION, -1);
            task_in(&c, k, t);
            task_out(&c, k, f32);
            out->n_cast++;
            t = f32;
        }
        if (t >= 0 && out->t[t].role == NB_T_ACTIVATION) { /* not an input passed through */
            out->t[t].role = NB_T_OUTPUT;
            out->t[t].out_index = n_outs++;
            out->t[t].last = out->n_k;
        }
    }
    for (int i = 0; i < out->n_t; i++)
        if (out->t[i].role == NB_T_INPUT)
            out->t[i].first = 0;
    /* each weight counts at the first task that reads it (a weight no task reads, such as
       the W of a zero-step LSTM, is not in the exeom) */
    bool *seen = calloc((size_t)out->n_t + 1, sizeof(bool));
    if (!seen)
        oom = true;
    for (int k = 0; k < out->n_k && seen; k++)
        for (int j = 0; j < out->k[k].n_in; j++) {
            int t = out->k[k].in[j];
            if (out->t[t].role != NB_T_WEIGHT || seen[t])
                continue;
            seen[t] = true;
            out->k[k].weight_bytes += (out->t[t].bytes + NB_EXEOM_ALIGN - 1) / NB_EXEOM_ALIGN *
                                      NB_EXEOM_ALIGN;
        }
    for (int t = 0; t < out->n_t && seen; t++) /* unread weights: no bytes */
        if (out->t[t].role == NB_T_WEIGHT && !seen[t])
            out->t[t].bytes = 0;
    free(seen);
    if (!oom && !unique_graph_names(out))
        oom = true;
    if (oom)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
done:
    ctx_free(&c);
    if (e)
        nb_npu_graph_free(out);
    return e;
}

void nb_npu_graph_free(nb_npu_graph *g)
{
    for (int i = 0; i < g->n_t; i++) {
        free(g->t[i].name);
        free(g->t[i].src);
        free(g->t[i].blob);
    }
    for (int i = 0; i < g->n_k; i++) {
        free(g->k[i].in);
        free(g->k[i].out);
        free(g->k[i].name);
        free(g->k[i].op_type);
        free(g->k[i].onnx_op);
        free(g->k[i].fused_node);
    }
    for (int i = 0; i < g->n_rewrites; i++)
        free(g->rewrites[i]);
    free(g->t);
    free(g->k);
    free(g->rewrites);
    memset(g, 0, sizeof *g);
}
