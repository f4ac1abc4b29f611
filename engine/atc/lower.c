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

typedef struct lctx {
    const nb_graph *g;
    const nb_op_table *ops;
    nb_npu_opts o;
    nb_npu_graph *n;
    int *vt;        /* value -> tensor as produced (-1) */
    int *vt_alt;    /* value -> tensor after a TransData to the other format (-1) */
    int *vq;        /* value -> int8 tensor written by an AscendQuant (-1) */
    int *uses;      /* value -> number of reading nodes */
    bool *skip;     /* node -> folded into another task */
    int *alias;     /* value -> value whose tensor it shares (folded BatchNormalization) */
    nb_status *st;
    bool oom;
} lctx;

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
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
        c->oom = true;
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
        c->oom = true;
        return -1;
    }
    nb_npu_task *k = &n->k[n->n_k];
    memset(k, 0, sizeof *k);
    k->name = name;
    k->op_type = strdup(op);
    k->onnx_op = strdup(onnx_op);
    k->unit = u;
    k->inserted = inserted;
    for (int i = 0; i < 8; i++)
        k->in[i] = k->out[i] = -1;
    if (!k->op_type || !k->onnx_op)
        c->oom = true;
    return n->n_k++;
}

static void task_in(lctx *c, int k, int t)
{
    if (k < 0 || t < 0 || c->n->k[k].n_in == 8)
        return;
    c->n->k[k].in[c->n->k[k].n_in++] = t;
    nb_npu_tensor *x = &c->n->t[t];
    if (x->last < k)
        x->last = k;
}

static void task_out(lctx *c, int k, int t)
{
    if (k < 0 || t < 0 || c->n->k[k].n_out == 8)
        return;
    c->n->k[k].out[c->n->k[k].n_out++] = t;
    nb_npu_tensor *x = &c->n->t[t];
    if (x->first < 0 || x->first > k)
        x->first = k;
    if (x->last < k)
        x->last = k;
}

static void rewrite(lctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rewrite(lctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **r = realloc(c->n->rewrites, sizeof(char *) * (size_t)(c->n->n_rewrites + 1));
    if (!r) {
        c->oom = true;
        return;
    }
    c->n->rewrites = r;
    if (!(r[c->n->n_rewrites] = strdup(buf)))
        c->oom = true;
    else
        c->n->n_rewrites++;
}

static int resolve(const lctx *c, int v)
{
    while (v >= 0 && c->alias[v] >= 0)
        v = c->alias[v];
    return v;
}

static nb_dtype npu_type(nb_dtype t) { return t == NB_FLOAT ? NB_FLOAT16 : t; }

static bool is_const(const lctx *c, int v) { return v >= 0 && c->g->values[v].const_val; }

/* The tensor of constant value v as a vector-op operand (fp16 ND, made once). */
static int const_tensor(lctx *c, int v)
{
    if (c->vt[v] >= 0)
        return c->vt[v];
    const nb_tensor *t = c->g->values[v].const_val;
    c->vt[v] = add_tensor(c, strdup(c->g->values[v].name), npu_type(t->dtype), NB_FMT_ND,
                          t->rank, t->dims, NB_T_WEIGHT, -1);
    return c->vt[v];
}

/* The tensor of value v in format f: as produced, or through a TransData (made once). */
static int tensor_in(lctx *c, int v, nb_format f, const char *consumer)
{
    v = resolve(c, v);
    if (v < 0)
        return -1;
    if (is_const(c, v))
        return const_tensor(c, v);
    int t = c->vt[v];
    if (t < 0 || c->n->t[t].format == f || c->n->t[t].rank < 3)
        return t;
    if (c->vt_alt[v] >= 0 && c->n->t[c->vt_alt[v]].format == f)
        return c->vt_alt[v];
    const nb_npu_tensor srcv = c->n->t[t]; /* a copy: add_tensor may move the array */
    const nb_npu_tensor *src = &srcv;
    int k = add_task(c, dupf("%s/TransData_%s", consumer, nb_format_name(f)), "TransData",
                     "TransData", NB_TASK_VECTOR, true);
    int o = add_tensor(c, dupf("%s/%s", src->name, nb_format_name(f)), src->dtype, f, src->rank,
                       src->dims, NB_T_ACTIVATION, -1);
    task_in(c, k, t);
    task_out(c, k, o);
    c->n->n_transdata++;
    c->vt_alt[v] = o;
    return o;
}

/* The int8 version of activation v in format f for a cube op (an AscendQuant, made once). */
static int quant_in(lctx *c, int v, nb_format f, const char *consumer)
{
    v = resolve(c, v);
    if (v < 0)
        return -1;
    if (c->vq[v] >= 0)
        return c->vq[v];
    int src = tensor_in(c, v, f == NB_FMT_FRACTAL_NZ ? NB_FMT_ND : f, consumer);
    if (src < 0)
        return -1;
    if (c->n->t[src].dtype == NB_INT8 || c->n->t[src].dtype == NB_UINT8)
        return src;
    const nb_npu_tensor sv = c->n->t[src]; /* a copy: add_tensor may move the array */
    const nb_npu_tensor *s = &sv;
    int k = add_task(c, dupf("%s/AscendQuant", consumer), "AscendQuant", "AscendQuant",
                     NB_TASK_VECTOR, true);
    int o = add_tensor(c, dupf("%s/int8", s->name), NB_INT8, f, s->rank, s->dims,
                       NB_T_ACTIVATION, -1);
    task_in(c, k, src);
    task_out(c, k, o);
    c->n->n_quant++;
    c->vq[v] = o;
    return o;
}

/* A cube op's constant parameters: bias int32 and deq_scale (uint64) per output channel,
 * padded to 16 channels. Returns their bytes. */
static int64_t cube_params(lctx *c, int k, const char *name, int64_t channels)
{
    int64_t padded = (channels + 15) / 16 * 16, d[1] = {padded};
    int b = add_tensor(c, dupf("%s/bias", name), NB_INT32, NB_FMT_ND, 1, d, NB_T_WEIGHT, -1);
    int q = add_tensor(c, dupf("%s/deq_scale", name), NB_UINT64, NB_FMT_ND, 1, d, NB_T_WEIGHT,
                       -1);
    task_in(c, k, b);
    task_in(c, k, q);
    return padded * 4 + padded * 8;
}

/* The int32 accumulator of a cube task and its AscendDequant to fp16, which becomes value
 * v's tensor. */
static void dequant_out(lctx *c, int k, int v, const char *name, nb_format f)
{
    const nb_value *val = &c->g->values[v];
    int acc = add_tensor(c, dupf("%s/int32", val->name), NB_INT32, f, val->rank, val->dims,
                         NB_T_ACTIVATION, -1);
    task_out(c, k, acc);
    int dq = add_task(c, dupf("%s/AscendDequant", name), "AscendDequant", "AscendDequant",
                      NB_TASK_VECTOR, true);
    int o = add_tensor(c, strdup(val->name), NB_FLOAT16, f == NB_FMT_FRACTAL_NZ ? NB_FMT_ND : f,
                       val->rank, val->dims, NB_T_ACTIVATION, -1);
    task_in(c, dq, acc);
    task_out(c, dq, o);
    c->n->n_dequant++;
    c->vt[v] = o;
}

static bool spatial_op(const char *op)
{
    static const char *const s[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
                                    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
                                    "BatchNormalization", "InstanceNormalization",
                                    "SpaceToDepth", "DepthToSpace"};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (!strcmp(op, s[i]))
            return true;
    return false;
}

static bool elementwise_op(const char *op)
{
    static const char *const s[] = {"Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid",
                                    "Tanh", "Clip", "Elu", "PRelu", "Abs", "Neg", "Exp", "Log",
                                    "Pow", "Round", "Max", "Min", "Equal", "Greater", "And",
                                    "Or", "Where", "Cast", "Identity", "Sqrt", "Erf",
                                    "HardSigmoid"};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (!strcmp(op, s[i]))
            return true;
    return false;
}

/* Why the NPU cannot run node n as it stands, or "" (checked after the op table). */
static void runtime_reason(const lctx *c, const nb_node *n, char *why, size_t len)
{
    why[0] = 0;
    for (int k = 0; k < n->n_in + n->n_out && !why[0]; k++) {
        int v = k < n->n_in ? n->in[k] : n->out[k - n->n_in];
        if (v < 0 || is_const(c, v))
            continue;
        const nb_value *val = &c->g->values[v];
        bool dyn = val->rank < 0;
        for (int d = 0; d < val->rank && !dyn; d++)
            dyn = val->dims[d] < 0;
        if (dyn)
            snprintf(why, len, "dynamic shape of '%s'", val->name);
        else if (val->dtype == NB_INT64 || val->dtype == NB_DOUBLE || val->dtype == NB_UINT64 ||
                 val->dtype == NB_STRING)
            snprintf(why, len, "%s tensor '%s' at run time (the NPU has fp16, int8, int32)",
                     nb_dtype_name(val->dtype), val->name);
    }
}

static void lower_cube(lctx *c, const nb_node *n, int ni);
static void lower_rnn(lctx *c, const nb_node *n, const nb_op_support *sup);

static void lower_node(lctx *c, int ni)
{
    const nb_node *n = &c->g->nodes[ni];
    const char *op = n->op_type;
    bool flatten = !strcmp(op, "Flatten");
    bool div_const = !strcmp(op, "Div") && n->n_in == 2 && is_const(c, n->in[1]) &&
                     nb_dtype_is_float(c->g->values[n->in[1]].const_val->dtype);
    const char *npu_op = flatten ? "Reshape" : div_const ? "Mul" : op;
    const nb_op_support *sup = nb_op_table_find(c->ops, npu_op, c->g->opset);
    char why[160] = "";
    if (!sup)
        snprintf(why, sizeof why, "%s is not in the Nano's op list", op);
    else
        runtime_reason(c, n, why, sizeof why);
    if (!why[0] && sup && (sup->unit == NB_UNIT_CUBE_VECTOR)) {
        lower_rnn(c, n, sup);
        return;
    }
    if (!why[0] && sup && sup->unit == NB_UNIT_CUBE) {
        lower_cube(c, n, ni);
        return;
    }
    if (!why[0] && flatten)
        rewrite(c, "Flatten '%s' -> Reshape", n->name);
    if (!why[0] && div_const)
        rewrite(c, "Div '%s' by a constant -> Mul by its reciprocal", n->name);
    /* a vector task (or a CPU task with its reason); the TransData its inputs need come
       first in the task order */
    bool spatial = spatial_op(op), ew = elementwise_op(op);
    nb_format f0 = NB_FMT_ND;
    if (ew && n->n_in > 0 && n->in[0] >= 0) {
        int t0 = c->vt[resolve(c, n->in[0])];
        if (t0 >= 0)
            f0 = c->n->t[t0].format;
    }
    if (spatial)
        f0 = NB_FMT_NC1HWC0;
    int ins[8], n_ins = 0;
    int64_t wbytes = 0;
    for (int i = 0; i < n->n_in && n_ins < 8; i++) {
        if (n->in[i] < 0)
            continue;
        int t = tensor_in(c, n->in[i], (i == 0 || ew) ? f0 : NB_FMT_ND, n->name);
        ins[n_ins++] = t;
        if (is_const(c, n->in[i]) && t >= 0)
            wbytes += c->n->t[t].bytes;
    }
    int k = add_task(c, strdup(n->name), why[0] ? op : npu_op, op,
                     why[0] ? NB_TASK_CPU : NB_TASK_VECTOR, false);
    if (k < 0)
        return;
    snprintf(c->n->k[k].reason, sizeof c->n->k[k].reason, "%s", why);
    c->n->k[k].weight_bytes = wbytes;
    for (int i = 0; i < n_ins; i++)
        task_in(c, k, ins[i]);
    for (int o = 0; o < n->n_out; o++) {
        int v = n->out[o];
        if (v < 0)
            continue;
        const nb_value *val = &c->g->values[v];
        nb_format f = (spatial || ew) && val->rank >= 3 ? f0 : NB_FMT_ND;
        int t = add_tensor(c, strdup(val->name), npu_type(val->dtype), f, val->rank, val->dims,
                           NB_T_ACTIVATION, -1);
        task_out(c, k, t);
        c->vt[v] = t;
    }
}

/* Conv, ConvTranspose, MatMul, Gemm and the integer forms. */
static void lower_cube(lctx *c, const nb_node *n, int ni)
{
    const char *op = n->op_type;
    nb_dtype wt = c->o.weight_bits == 4 ? NB_NPU_INT4 : NB_INT8;
    bool conv = strstr(op, "Conv") != NULL, transpose = !strcmp(op, "ConvTranspose");
    bool qlinear = !strncmp(op, "QLinear", 7);
    int xi = 0, wi = qlinear ? 3 : 1;
    const nb_value *y = &c->g->values[n->out[0]];
    const nb_value *w = n->n_in > wi && n->in[wi] >= 0 ? &c->g->values[n->in[wi]] : NULL;
    const nb_value *x = &c->g->values[n->in[xi]];
    int64_t wbytes = 0, macs = 0, channels = 1;
    nb_format fx = conv ? NB_FMT_NC1HWC0 : NB_FMT_FRACTAL_NZ;
    /* the AscendQuant (and TransData) of the operands come before the cube task */
    int xq = quant_in(c, n->in[xi], fx, n->name);
    int wq = w && !is_const(c, n->in[wi]) ? quant_in(c, n->in[wi], NB_FMT_FRACTAL_NZ, n->name)
                                          : -1;
    int k = add_task(c, strdup(n->name), op, op, NB_TASK_CUBE, false);
    if (k < 0)
        return;
    nb_npu_task *task;
    task_in(c, k, xq);
    if (conv && w && w->rank >= 3) {
        int64_t kh = w->rank == 4 ? w->dims[2] : 1, kw = w->dims[w->rank - 1];
        int64_t group = nb_attr_int(n, "group", 1);
        /* W is [Cout, Cin/g, k] for Conv and [Cin, Cout/g, k] for ConvTranspose: FRACTAL_Z
           of its two leading dims as they stand */
        wbytes = nb_fractal_z_bytes(w->dims[0], w->dims[1], kh, kw, wt);
        channels = transpose ? w->dims[1] * group : w->dims[0];
        int64_t ksz = kh * kw, spatial = 1;
        const nb_value *sp = transpose ? x : y;
        for (int d = 2; d < sp->rank; d++)
            spatial *= sp->dims[d];
        macs = sp->dims[0] * (transpose ? w->dims[0] * w->dims[1] : w->dims[0] * w->dims[1]) *
               spatial * ksz;
    } else if (w) {
        bool tb = !strcmp(op, "Gemm") && nb_attr_int(n, "transB", 0);
        int64_t kdim = w->rank >= 2 ? w->dims[w->rank - (tb ? 1 : 2)] : w->dims[0];
        channels = w->rank >= 2 ? w->dims[w->rank - (tb ? 2 : 1)] : 1;
        if (is_const(c, n->in[wi]))
            wbytes = nb_fractal_nz_bytes(w->rank, w->dims, wt);
        int64_t rows = 1;
        for (int d = 0; d + 1 < y->rank; d++)
            rows *= y->dims[d];
        macs = rows * channels * kdim;
        if (!strcmp(op, "Gemm") && is_const(c, n->in[wi]))
            rewrite(c, "Gemm '%s' with a constant B kept as one cube op", n->name);
    }
    if (w && is_const(c, n->in[wi])) {
        int wt_i = add_tensor(c, strdup(w->name), wt, conv ? NB_FMT_FRACTAL_Z : NB_FMT_FRACTAL_NZ,
                              w->rank, w->dims, NB_T_WEIGHT, wbytes);
        task_in(c, k, wt_i);
    } else if (w) {
        task_in(c, k, wq);
    }
    task = &c->n->k[k];
    task->macs = macs;
    task->weight_bytes = wbytes + cube_params(c, k, n->name, channels);
    /* a BatchNormalization that only reads this output folds into the weights and bias */
    int v = n->out[0];
    if ((conv || !strcmp(op, "Gemm")) && c->uses[v] == 1 && !y->is_output) {
        for (int j = ni + 1; j < c->g->n_nodes; j++) {
            const nb_node *b = &c->g->nodes[j];
            if (strcmp(b->op_type, "BatchNormalization") || b->n_in < 5 || b->in[0] != v)
                continue;
            bool consts = true;
            for (int q = 1; q < 5; q++)
                consts &= is_const(c, b->in[q]);
            if (!consts)
                break;
            c->skip[j] = true;
            c->alias[b->out[0]] = v;
            rewrite(c, "BatchNormalization '%s' folded into %s '%s'", b->name, op, n->name);
            break;
        }
    }
    dequant_out(c, k, v, n->name, conv ? NB_FMT_NC1HWC0 : NB_FMT_FRACTAL_NZ);
}

/* LSTM and GRU: one cube+vector task per time step (seq_len 1 each), sharing one copy of
 * W, R and the bias; longer sequences are unrolled and reported. */
static void lower_rnn(lctx *c, const nb_node *n, const nb_op_support *sup)
{
    bool lstm = !strcmp(n->op_type, "LSTM");
    const nb_value *x = &c->g->values[n->in[0]], *w = &c->g->values[n->in[1]];
    const nb_value *r = &c->g->values[n->in[2]];
    int gates = lstm ? 4 : 3;
    int64_t seq = x->dims[0], batch = x->dims[1], in_sz = x->dims[2];
    int64_t dirs = w->dims[0], hid = r->dims[2];
    char why[160] = "";
    if (sup->max_directions && dirs > sup->max_directions)
        snprintf(why, sizeof why, "%s with %lld directions: the Nano runs %d", n->op_type,
                 (long long)dirs, sup->max_directions);
    else if (nb_attr_int(n, "layout", 0) != 0)
        snprintf(why, sizeof why, "%s with layout 1 (batch first)", n->op_type);
    if (why[0]) {
        int ins[8], n_ins = 0;
        for (int i = 0; i < n->n_in && n_ins < 8; i++)
            if (n->in[i] >= 0)
                ins[n_ins++] = tensor_in(c, n->in[i], NB_FMT_ND, n->name);
        int k = add_task(c, strdup(n->name), n->op_type, n->op_type, NB_TASK_CPU, false);
        if (k < 0)
            return;
        snprintf(c->n->k[k].reason, sizeof c->n->k[k].reason, "%s", why);
        for (int i = 0; i < n_ins; i++)
            task_in(c, k, ins[i]);
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] >= 0) {
                const nb_value *val = &c->g->values[n->out[o]];
                int t = add_tensor(c, strdup(val->name), npu_type(val->dtype), NB_FMT_ND,
                                   val->rank, val->dims, NB_T_ACTIVATION, -1);
                task_out(c, k, t);
                c->vt[n->out[o]] = t;
            }
        return;
    }
    nb_dtype wt = c->o.weight_bits == 4 ? NB_NPU_INT4 : NB_INT8;
    int wq = add_tensor(c, strdup(w->name), wt, NB_FMT_FRACTAL_NZ, w->rank, w->dims,
                        NB_T_WEIGHT, -1);
    int rq = add_tensor(c, strdup(r->name), wt, NB_FMT_FRACTAL_NZ, r->rank, r->dims,
                        NB_T_WEIGHT, -1);
    int64_t bias_d[1] = {(2 * gates * hid + 15) / 16 * 16};
    int bq = add_tensor(c, dupf("%s/bias", n->name), NB_INT32, NB_FMT_ND, 1, bias_d,
                        NB_T_WEIGHT, -1);
    int xq = quant_in(c, n->in[0], NB_FMT_FRACTAL_NZ, n->name);
    int64_t hd[2] = {batch, hid};
    int h = n->n_in > 5 && n->in[5] >= 0 ? tensor_in(c, n->in[5], NB_FMT_ND, n->name) : -1;
    int cst = lstm && n->n_in > 6 && n->in[6] >= 0 ? tensor_in(c, n->in[6], NB_FMT_ND, n->name)
                                                    : -1;
    const nb_value *yv = n->n_out > 0 && n->out[0] >= 0 ? &c->g->values[n->out[0]] : NULL;
    int y = yv ? add_tensor(c, strdup(yv->name), NB_FLOAT16, NB_FMT_ND, yv->rank, yv->dims,
                            NB_T_ACTIVATION, -1)
               : -1;
    if (seq > 1)
        rewrite(c, "%s '%s' unrolled into %lld steps sharing one weight copy", n->op_type,
                n->name, (long long)seq);
    for (int64_t s = 0; s < seq; s++) {
        char *name = seq > 1 ? dupf("%s/t%lld", n->name, (long long)s) : strdup(n->name);
        int hq = -1;
        if (h >= 0) { /* the state enters the cube as int8 */
            int k = add_task(c, dupf("%s/t%lld/AscendQuant", n->name, (long long)s),
                             "AscendQuant", "AscendQuant", NB_TASK_VECTOR, true);
            hq = add_tensor(c, dupf("%s/h%lld/int8", n->name, (long long)s), NB_INT8,
                            NB_FMT_FRACTAL_NZ, 2, hd, NB_T_ACTIVATION, -1);
            task_in(c, k, h);
            task_out(c, k, hq);
            c->n->n_quant++;
        }
        int k = add_task(c, name, n->op_type, n->op_type, NB_TASK_CUBE, false);
        if (k < 0)
            return;
        task_in(c, k, xq);
        task_in(c, k, wq);
        task_in(c, k, rq);
        task_in(c, k, bq);
        task_in(c, k, hq);
        task_in(c, k, cst);
        c->n->k[k].macs = batch * gates * hid * (in_sz + hid);
        if (s == 0)
            c->n->k[k].weight_bytes =
                c->n->t[wq].bytes + c->n->t[rq].bytes + c->n->t[bq].bytes;
        h = add_tensor(c, dupf("%s/h%lld", n->name, (long long)(s + 1)), NB_FLOAT16, NB_FMT_ND,
                       2, hd, NB_T_ACTIVATION, -1);
        task_out(c, k, h);
        if (lstm) {
            cst = add_tensor(c, dupf("%s/c%lld", n->name, (long long)(s + 1)), NB_FLOAT16,
                             NB_FMT_ND, 2, hd, NB_T_ACTIVATION, -1);
            task_out(c, k, cst);
        }
        task_out(c, k, y); /* each step writes its slice of Y */
    }
    if (yv)
        c->vt[n->out[0]] = y;
    if (n->n_out > 1 && n->out[1] >= 0)
        c->vt[n->out[1]] = h;
    if (lstm && n->n_out > 2 && n->out[2] >= 0)
        c->vt[n->out[2]] = cst;
}

nb_err nb_npu_lower(const struct nb_model *m, const nb_op_table *ops, const nb_npu_opts *o,
                    nb_npu_graph *out, nb_status *st)
{
    memset(out, 0, sizeof *out);
    const nb_graph *g = m->graph;
    int nv = g->n_values;
    lctx c = {.g = g, .ops = ops, .n = out, .st = st};
    c.o.weight_bits = o && o->weight_bits == 4 ? 4 : 8;
    c.vt = malloc(sizeof(int) * ((size_t)nv + 1));
    c.vt_alt = malloc(sizeof(int) * ((size_t)nv + 1));
    c.vq = malloc(sizeof(int) * ((size_t)nv + 1));
    c.alias = malloc(sizeof(int) * ((size_t)nv + 1));
    c.uses = calloc((size_t)nv + 1, sizeof(int));
    c.skip = calloc((size_t)g->n_nodes + 1, sizeof(bool));
    nb_err e = NB_OK;
    if (!c.vt || !c.vt_alt || !c.vq || !c.alias || !c.uses || !c.skip) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int v = 0; v < nv; v++)
        c.vt[v] = c.vt_alt[v] = c.vq[v] = c.alias[v] = -1;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0)
                c.uses[g->nodes[i].in[k]]++;
    /* graph inputs: their own buffers, fp16 for the float inputs named by
       --input_fp16_nodes (all when it is not given), else float32 and a Cast to fp16 */
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        bool fp16 = true;
        if (o && o->input_fp16_nodes && v->dtype == NB_FLOAT) {
            fp16 = false;
            const char *p = o->input_fp16_nodes;
            size_t nl = strlen(v->name);
            while (p && *p && !fp16) {
                const char *end = strchr(p, ';');
                size_t l = end ? (size_t)(end - p) : strlen(p);
                fp16 = l == nl && !strncmp(p, v->name, l);
                p = end ? end + 1 : NULL;
            }
        }
        if (fp16) {
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
    for (int i = 0; i < g->n_nodes && !c.oom; i++) {
        const nb_node *n = &g->nodes[i];
        bool folded = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++)
            folded &= n->out[k] < 0 || is_const(&c, n->out[k]);
        if (folded || c.skip[i])
            continue;
        lower_node(&c, i);
    }
    /* graph outputs: their own buffers in ND (a TransData where the producer wrote 5HD) */
    for (int i = 0; i < g->n_outputs && !c.oom; i++) {
        int v = resolve(&c, g->outputs[i]);
        if (is_const(&c, v))
            continue;
        int t = tensor_in(&c, v, NB_FMT_ND, g->values[g->outputs[i]].name);
        if (t >= 0 && o && o->output_fp32 && out->t[t].dtype == NB_FLOAT16) {
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
        if (t >= 0 && out->t[t].role == NB_T_ACTIVATION) {
            out->t[t].role = NB_T_OUTPUT;
            out->t[t].last = out->n_k;
        }
    }
    for (int i = 0; i < out->n_t; i++)
        if (out->t[i].role == NB_T_INPUT)
            out->t[i].first = 0;
    if (c.oom)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
done:
    free(c.vt), free(c.vt_alt), free(c.vq), free(c.alias), free(c.uses), free(c.skip);
    if (e)
        nb_npu_graph_free(out);
    return e;
}

void nb_npu_graph_free(nb_npu_graph *g)
{
    for (int i = 0; i < g->n_t; i++)
        free(g->t[i].name);
    for (int i = 0; i < g->n_k; i++) {
        free(g->k[i].name);
        free(g->k[i].op_type);
        free(g->k[i].onnx_op);
    }
    for (int i = 0; i < g->n_rewrites; i++)
        free(g->rewrites[i]);
    free(g->t);
    free(g->k);
    free(g->rewrites);
    memset(g, 0, sizeof *g);
}
