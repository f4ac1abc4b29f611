/* nanobench atc --nb_input_scale "name:2^-k" (a nanobench extension; the vendor's ATC has
 * no such flag): the compiled model computes as if its input were multiplied by s (a power
 * of two), so that fp16 tensors whose float values are beyond 65504 (the STFT and power
 * spectrum of int16-scaled audio) stay in range, and the scale is taken back where the math
 * allows, at no run-time cost:
 * - s enters at the cube ops the input reaches first: their AscendQuant quantizes the input
 *   as before (the int8 values and the fp16 input are the model's), their deq_scale
 *   multiplies by s, so their output holds s x the model's;
 * - the AscendQuant of a later cube op divides its scale by the factor its input carries (the
 *   same int8 values), and the op's deq_scale multiplies by it (its output carries it on);
 * - linear ops carry a factor f (Pow(x, p) makes it f^p); a constant added to a scaled
 *   tensor, and a Clip's bounds, are scaled with it;
 * - a Log turns the factor into an offset (log(f x) = log x + ln f), which a Mul or Div by a
 *   constant scales and the next Add or Sub of a constant absorbs into its constant;
 * - where the factor cannot go on (an op that is not linear, a model output), a cube op whose
 *   output leads there leaves its output unscaled (its deq_scale unchanged); with none, the
 *   option is refused, naming the op.
 * The NPU then holds scale x v + offset of each ONNX value v: NAME.dbg records it per tensor,
 * so that dumps are compared in the model's units. share/doc/exeom.md, docs/fp16-range.md. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/exeom.h"

/* the largest calibrated magnitude the advice lets reach an AscendQuant: one binade of
   headroom under fp16's 65504 for values beyond the calibration's clip */
#define ADVICE_LIMIT 32752.0

typedef struct sctx {
    nb_graph *g;
    nb_npu_layer *ls;
    int nl;
    int nv;           /* values planned (constants made by apply come after them) */
    double *f, *a;    /* the NPU holds f v + a */
    double *r;        /* a value the input reaches before any cube op: the factor that the
                         cube ops reading it put on their output (1: none) */
    int *org;         /* the layer whose scaled output the state comes from, -1 the input */
    bool *reset;      /* per layer: its output leaves unscaled */
    bool apply;
    nb_scale_plan *p;
    char why[600];    /* the first op the state cannot go through */
    int fail_org;
    nb_status *st;
    nb_err err;       /* an error of apply (nomem, a constant of another type) */
    int n_reached;    /* cube ops the input reaches first */
    const char *cpu;  /* --cpu_nodes: the MCU's CPU takes back each input's state in float32 */
} sctx;

static bool is_const(const sctx *c, int v)
{
    return v >= 0 && c->g->values[v].const_val != NULL;
}
static double F(const sctx *c, int v) { return v >= 0 && v < c->nv && !is_const(c, v) ? c->f[v] : 1; }
static double A(const sctx *c, int v) { return v >= 0 && v < c->nv && !is_const(c, v) ? c->a[v] : 0; }
static int ORG(const sctx *c, int v) { return v >= 0 && v < c->nv ? c->org[v] : -1; }
static bool ident(const sctx *c, int v) { return F(c, v) == 1 && A(c, v) == 0; }
static double R(const sctx *c, int v) { return v >= 0 && v < c->nv && !is_const(c, v) ? c->r[v] : 1; }

/* "2^-15" for a power of two, else %g */
static const char *fmt_factor(double f, char *buf, size_t len)
{
    int e;
    double m = frexp(f, &e);
    if (m == 0.5)
        snprintf(buf, len, "2^%d", e - 1);
    else
        snprintf(buf, len, "%.6g", f);
    return buf;
}

static void set_out(sctx *c, const nb_node *n, double f, double a, int org)
{
    for (int j = 0; j < n->n_out; j++) {
        int v = n->out[j];
        if (v >= 0 && v < c->nv)
            c->f[v] = f, c->a[v] = a, c->org[v] = org;
    }
}

/* A vector op passes on the input's reach (the values are the model's: any op) */
static void pass_reach(sctx *c, const nb_node *n)
{
    double r = 1;
    for (int j = 0; j < n->n_in && r == 1; j++)
        r = R(c, n->in[j]);
    for (int j = 0; j < n->n_out; j++)
        if (n->out[j] >= 0 && n->out[j] < c->nv)
            c->r[n->out[j]] = r;
}

static bool fail(sctx *c, int v, const char *fmt, ...)
{
    if (!c->why[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, sizeof c->why, fmt, ap);
        va_end(ap);
        c->fail_org = ORG(c, v);
    }
    return false;
}

static void note(sctx *c, const char *fmt, ...)
{
    if (!c->apply || !c->p)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (!nb_strlist_vaddf(&c->p->notes, &c->p->n_notes, fmt, ap) && !c->err)
        c->err = nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
    va_end(ap);
}

static int layer_of_node(const sctx *c, const char *name)
{
    for (int i = 0; i < c->nl; i++)
        if (!strcmp(c->ls[i].node, name))
            return i;
    return -1;
}

/* Input slot j of node ni (a float constant) becomes mul x c + add, as a new constant (the
   old one may have other readers). Apply mode only. */
static void scale_const(sctx *c, int ni, int j, double mul, double add)
{
    if (!c->apply || c->err)
        return;
    nb_graph *g = c->g;
    int v = g->nodes[ni].in[j];
    const nb_tensor *t = g->values[v].const_val;
    if (t->dtype != NB_FLOAT) {
        c->err = nb_fail(c->st, NB_ERR_UNSUPPORTED, "--nb_input_scale: node '%s': constant '%s' "
                         "is %s (float32 constants are scaled)", g->nodes[ni].name,
                         g->values[v].name, nb_dtype_name(t->dtype));
        return;
    }
    nb_tensor *nt = NULL;
    if (nb_tensor_clone(t, &nt, c->st)) {
        c->err = c->st->code;
        return;
    }
    float *d = nt->data;
    for (int64_t i = 0; i < nt->numel; i++)
        d[i] = (float)(mul * d[i] + add); /* +-inf stays (mul > 0) */
    size_t len = strlen(g->values[v].name) + 48;
    char *name = malloc(len);
    if (!name) {
        nb_tensor_free(nt);
        c->err = nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        return;
    }
    snprintf(name, len, "%s/nb_input_scale", g->values[v].name);
    for (int k = 1; nb_graph_find(g, name) >= 0; k++)
        snprintf(name, len, "%s/nb_input_scale_%d", g->values[v].name, k);
    int id = nb_graph_add_value(g, name);
    free(name);
    if (id < 0) {
        nb_tensor_free(nt);
        c->err = nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        return;
    }
    nb_value *old = &g->values[v], *nv = &g->values[id]; /* after the values grew */
    nv->dtype = old->dtype;
    nv->rank = old->rank;
    memcpy(nv->dims, old->dims, sizeof nv->dims);
    nv->const_val = nt;
    nv->is_initializer = true;
    g->nodes[ni].in[j] = id;
    if (t->numel == 1)
        note(c, "%s: constant %s %.6g -> %.6g", g->nodes[ni].name, old->name,
             nb_tensor_get_f64(t, 0), nb_tensor_get_f64(nt, 0));
    else
        note(c, "%s: constant %s (%lld values) x %.6g %+.6g", g->nodes[ni].name, old->name,
             (long long)t->numel, mul, add);
}

static bool is_op(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(op, list[i]))
            return true;
    return false;
}

/* A quantized cube op: the factor of its input goes into its AscendQuant and deq_scale. */
static bool visit_cube(sctx *c, int ni, int li)
{
    const nb_node *n = &c->g->nodes[ni];
    nb_npu_layer *l = &c->ls[li];
    int x = n->n_in ? n->in[0] : -1;
    if (A(c, x) != 0)
        return fail(c, x, "'%s' (%s) reads '%s' with an offset (%+.6g), which its AscendQuant "
                    "cannot take back", n->name, n->op_type, c->g->values[x].name, A(c, x));
    double fx = F(c, x), fb = 1;
    if (l->b_scale > 0 && n->n_in > 1 && !is_const(c, n->in[1])) {
        if (A(c, n->in[1]) != 0)
            return fail(c, n->in[1], "'%s' (%s) reads an offset in its second operand",
                        n->name, n->op_type);
        fb = F(c, n->in[1]);
    }
    bool rnn = l->r != NULL;
    for (int j = 1; rnn && j < n->n_in; j++)
        if (n->in[j] >= 0 && !ident(c, n->in[j]))
            return fail(c, n->in[j], "'%s' (%s) reads '%s' scaled: a recurrent layer's state "
                        "is not scaled", n->name, n->op_type, c->g->values[n->in[j]].name);
    double g = rnn || c->reset[li] ? 1 : fx * fb * R(c, x);
    if (c->apply && (fx != 1 || fb != 1 || g != 1)) {
        char b1[32], b2[32];
        l->quant_scale = (float)(l->quant_scale / fx);
        if (fb != 1)
            l->b_scale = (float)(l->b_scale / fb);
        for (int64_t i = 0; g != 1 && i < l->channels; i++) {
            float d;
            uint32_t bits = (uint32_t)l->deq_scale[i];
            memcpy(&d, &bits, 4);
            d = (float)(d * g);
            memcpy(&bits, &d, 4);
            l->deq_scale[i] = bits;
        }
        if (g != 1 && fx * fb == 1)
            note(c, "%s: deq_scale x %s (reads the input: its int8 values as before): its "
                 "output holds %s x the model's", n->name, fmt_factor(g, b2, sizeof b2), b2);
        else if (g != 1)
            note(c, "%s: AscendQuant scale / %s (the same int8 values), deq_scale x %s: its "
                 "output holds %s x the model's", n->name, fmt_factor(fx * fb, b1, sizeof b1),
                 fmt_factor(g, b2, sizeof b2), b2);
        else
            note(c, "%s: AscendQuant scale / %s (the same int8 values); its output as the "
                 "model's", n->name, fmt_factor(fx * fb, b1, sizeof b1));
    }
    if (c->reset[li] && !rnn && (fx * fb != 1 || R(c, x) != 1))
        note(c, "%s: its output left as the model's (a scale would reach an op after it that "
             "cannot carry it)", n->name);
    set_out(c, n, 1, 0, -1);
    if (R(c, x) != 1 && !rnn)
        c->n_reached++;
    if (!rnn && n->n_out && n->out[0] >= 0 && n->out[0] < c->nv)
        c->f[n->out[0]] = g, c->org[n->out[0]] = g != 1 ? li : -1;
    return true;
}

/* A node visit's view of its data inputs: the node, its op, the inputs that are not
   constants (vin: their input slots), and the state (f x + a) of the first one carrying
   one, with the layer it comes from. */
typedef struct vnode {
    int ni;
    const nb_node *n;
    const char *op;
    int vin[16], nvar, first;
    double f, a;
    int org;
    const char *vname;
} vnode;

#define STATE_TXT fmt_factor(f, fb, sizeof fb), a

/* an op that reads its data in input 0 only (pass: any state; homog: no offset): the other
   inputs must be as the model's, the output carries the state */
static bool visit_pass(sctx *c, const vnode *s, bool homog)
{
    nb_graph *g = c->g;
    const nb_node *n = s->n;
    const char *op = s->op, *vname = s->vname;
    int first = s->first;
    double f = s->f, a = s->a;
    char fb[32];
    for (int k = 0; k < s->nvar; k++)
        if (s->vin[k] != 0 && !ident(c, n->in[s->vin[k]]))
            return fail(c, n->in[s->vin[k]], "'%s' (%s) reads '%s' scaled in input %d", n->name,
                        op, g->values[n->in[s->vin[k]]].name, s->vin[k]);
    if (n->in[0] != first)
        return fail(c, first, "'%s' (%s) reads '%s' scaled", n->name, op, vname);
    if (!strcmp(op, "Cast")) {
        int64_t to = nb_attr_int(n, "to", 1);
        if (to != 1 && to != 10 && to != 11)
            return fail(c, first, "'%s' (Cast to an integer type) reads '%s' held as %s x "
                        "%+g", n->name, vname, STATE_TXT);
    }
    if (homog && a != 0)
        return fail(c, first, "'%s' (%s) reads '%s' with an offset (%+.6g) it cannot carry",
                    n->name, op, vname, a);
    set_out(c, n, f, a, s->org);
    return true;
}

/* Max, Min, Concat, Clip: op(f x + a, f c + a) = f op(x, c) + a, every input in one state,
   the constants scaled to it */
static bool visit_affine(sctx *c, const vnode *s)
{
    nb_graph *g = c->g;
    const nb_node *n = s->n;
    const char *op = s->op, *vname = s->vname;
    int first = s->first;
    double f = s->f, a = s->a;
    char fb[32];
    if (nb_attr_find(n, "min") || nb_attr_find(n, "max"))
        return fail(c, first, "'%s' (Clip) has its bounds as attributes (opset < 11)",
                    n->name);
    for (int k = 0; k < s->nvar; k++) {
        int v = n->in[s->vin[k]];
        if (F(c, v) != f || A(c, v) != a)
            return fail(c, first, "'%s' (%s) reads '%s' held as %s x %+g and '%s' held "
                        "otherwise", n->name, op, vname, STATE_TXT, g->values[v].name);
    }
    for (int j = 0; j < n->n_in; j++)
        if (is_const(c, n->in[j]))
            scale_const(c, s->ni, j, f, a);
    set_out(c, n, f, a, s->org);
    return true;
}

/* Add, Sub: two tensors of one factor (the offsets add), or a tensor and a constant that
   absorbs the offset */
static bool visit_add(sctx *c, const vnode *s)
{
    nb_graph *g = c->g;
    const nb_node *n = s->n;
    const char *op = s->op;
    double f = s->f, a = s->a;
    bool sub = !strcmp(op, "Sub");
    int x0 = n->in[0], x1 = n->n_in > 1 ? n->in[1] : -1;
    if (s->nvar == 2) {
        if (F(c, x0) != F(c, x1))
            return fail(c, s->first, "'%s' (%s) adds '%s' and '%s', scaled apart", n->name, op,
                        g->values[x0].name, g->values[x1].name);
        set_out(c, n, F(c, x0), sub ? A(c, x0) - A(c, x1) : A(c, x0) + A(c, x1),
                ORG(c, x0) >= 0 ? ORG(c, x0) : ORG(c, x1));
        return true;
    }
    /* x (f, a) and a constant k: the constant becomes f k -+ a, the output f (x op k) */
    int cj = is_const(c, x0) ? 0 : 1;
    scale_const(c, s->ni, cj, f, sub ? a : -a);
    set_out(c, n, f, 0, s->org);
    return true;
}

/* Mul, Div: two tensors without offsets (the factors multiply or divide), or a tensor and
   a constant (the offset scales with a scalar constant) */
static bool visit_mul(sctx *c, const vnode *s)
{
    nb_graph *g = c->g;
    const nb_node *n = s->n;
    const char *op = s->op, *vname = s->vname;
    int first = s->first, org = s->org;
    double f = s->f, a = s->a;
    bool div = !strcmp(op, "Div");
    int x0 = n->in[0], x1 = n->n_in > 1 ? n->in[1] : -1;
    if (s->nvar == 2) {
        if (A(c, x0) != 0 || A(c, x1) != 0)
            return fail(c, first, "'%s' (%s) multiplies tensors with offsets", n->name, op);
        set_out(c, n, div ? F(c, x0) / F(c, x1) : F(c, x0) * F(c, x1), 0,
                ORG(c, x0) >= 0 ? ORG(c, x0) : ORG(c, x1));
        return true;
    }
    int cj = is_const(c, x0) ? 0 : 1;
    const nb_tensor *k = g->values[n->in[cj]].const_val;
    if (div && cj == 0) { /* k / (f x) = (1/f) (k / x) */
        if (a != 0)
            return fail(c, first, "'%s' (Div) divides by '%s' with an offset", n->name,
                        vname);
        set_out(c, n, 1 / f, 0, org);
        return true;
    }
    if (a != 0 && k->numel != 1)
        return fail(c, first, "'%s' (%s) scales '%s', which has an offset, per element",
                    n->name, op, vname);
    double kv = k->numel == 1 ? nb_tensor_get_f64(k, 0) : 1;
    set_out(c, n, f, a == 0 ? 0 : div ? a / kv : a * kv, org);
    return true;
}

/* Pow, Sqrt, Reciprocal (the factor to the power), Log (the factor becomes an offset), Neg
   (the offset negated) */
static bool visit_power(sctx *c, const vnode *s)
{
    nb_graph *g = c->g;
    const nb_node *n = s->n;
    const char *op = s->op, *vname = s->vname;
    int first = s->first, org = s->org;
    double f = s->f, a = s->a;
    if (n->in[0] != first || s->nvar != 1)
        return fail(c, first, "'%s' (%s) reads '%s' scaled in its exponent", n->name, op,
                    vname);
    if (!strcmp(op, "Neg")) {
        set_out(c, n, f, -a, org);
        return true;
    }
    if (a != 0)
        return fail(c, first, "'%s' (%s) reads '%s' with an offset (%+.6g)", n->name, op,
                    vname, a);
    if (!strcmp(op, "Log")) { /* log(f x) = log x + ln f */
        set_out(c, n, 1, log(f), org);
        return true;
    }
    double p = !strcmp(op, "Sqrt") ? 0.5 : !strcmp(op, "Reciprocal") ? -1 : NAN;
    if (!strcmp(op, "Pow")) {
        const nb_tensor *e = n->n_in > 1 && is_const(c, n->in[1]) ? g->values[n->in[1]].const_val : NULL;
        if (!e || e->numel != 1)
            return fail(c, first, "'%s' (Pow) has no constant scalar exponent", n->name);
        p = nb_tensor_get_f64(e, 0);
    }
    set_out(c, n, pow(f, p), 0, org);
    return true;
}

/* Node ni: its outputs' state (f x + a) from its inputs', or false with why the state
   cannot go through it (fail). */
static bool visit(sctx *c, int ni)
{
    nb_graph *g = c->g;
    const nb_node *n = &g->nodes[ni];
    const char *op = n->op_type;
    int li = layer_of_node(c, n->name);
    if (li >= 0)
        return visit_cube(c, ni, li);
    pass_reach(c, n);
    if (c->cpu && nb_list_has(c->cpu, n->name, strlen(n->name))) {
        /* a node on the MCU's CPU: its task takes each input's f x + a back to x in float32
           (a power of two: exact), its outputs are the model's (nb_cpu_node_model) */
        set_out(c, n, 1, 0, -1);
        return true;
    }
    /* the data inputs (not constants) and whether any carries a state */
    vnode s = {.ni = ni, .n = n, .op = op, .nvar = 0, .first = -1};
    bool all_ident = true;
    for (int j = 0; j < n->n_in; j++) {
        int v = n->in[j];
        if (v < 0 || is_const(c, v))
            continue;
        if (s.nvar < 16)
            s.vin[s.nvar++] = j;
        if (!ident(c, v)) {
            all_ident = false;
            if (s.first < 0)
                s.first = v;
        }
    }
    set_out(c, n, 1, 0, -1);
    if (all_ident)
        return true;
    char fb[32];
    int first = s.first;
    double f = s.f = F(c, first), a = s.a = A(c, first);
    int org = s.org = ORG(c, first);
    const char *vname = s.vname = g->values[first].name;
    static const char *const pass[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                       "Transpose", "Identity", "Dropout", "MaxPool",
                                       "GlobalMaxPool", "ReduceMax", "ReduceMin", "ReduceMean",
                                       "GlobalAveragePool", "Slice", "Split", "Tile", "Expand",
                                       "SpaceToDepth", "DepthToSpace", "Cast", "Resize", NULL};
    static const char *const homog[] = {"Relu", "LeakyRelu", "PRelu", "ReduceSum", "ReduceL2",
                                        "Abs", NULL};
    static const char *const affine[] = {"Max", "Min", "Concat", "Clip", NULL};
    if (is_op(op, pass) || is_op(op, homog))
        return visit_pass(c, &s, is_op(op, homog));
    if (is_op(op, affine))
        return visit_affine(c, &s);
    if (!strcmp(op, "Add") || !strcmp(op, "Sub"))
        return visit_add(c, &s);
    if (!strcmp(op, "Mul") || !strcmp(op, "Div"))
        return visit_mul(c, &s);
    if (!strcmp(op, "Pow") || !strcmp(op, "Sqrt") || !strcmp(op, "Reciprocal") ||
        !strcmp(op, "Log") || !strcmp(op, "Neg"))
        return visit_power(c, &s);
    if (!strcmp(op, "Exp") && f == 1) { /* exp(x + a) = e^a exp(x) */
        set_out(c, n, exp(a), 0, org);
        return true;
    }
    if ((!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) && f == 1 && s.nvar == 1) {
        set_out(c, n, 1, 0, -1); /* shift-invariant */
        return true;
    }
    if (a != 0)
        return fail(c, first, "'%s' (%s) reads '%s' with an offset (%+.6g)", n->name, op, vname,
                    a);
    return fail(c, first, "'%s' (%s), which is not linear, reads '%s' held as %s x the model's",
                n->name, op, vname, fmt_factor(f, fb, sizeof fb));
}
#undef STATE_TXT

/* One propagation from the inputs' factors: true when every output is as the model's. */
static bool propagate(sctx *c, const double *in_f)
{
    nb_graph *g = c->g;
    c->why[0] = 0;
    c->fail_org = -1;
    c->n_reached = 0;
    for (int v = 0; v < c->nv; v++)
        c->f[v] = 1, c->a[v] = 0, c->r[v] = in_f[v], c->org[v] = -1;
    for (int i = 0; i < g->n_nodes && !c->err; i++)
        if (!visit(c, i))
            return false;
    if (c->err)
        return false;
    for (int o = 0; o < g->n_outputs; o++) {
        int v = g->outputs[o];
        char fb[32];
        if (!ident(c, v))
            return fail(c, v, "the output '%s' would hold %s x %+g of the model's value",
                        g->values[v].name, fmt_factor(F(c, v), fb, sizeof fb), A(c, v));
    }
    return true;
}

/* Propagates, leaving unscaled the output of each cube op whose factor reaches an op it
   cannot go through, until it goes through or no cube op is left to blame. */
static bool solve(sctx *c, const double *in_f)
{
    for (int round = 0; round <= c->nl; round++) {
        if (propagate(c, in_f))
            return true;
        if (c->err || c->fail_org < 0 || c->reset[c->fail_org])
            return false;
        c->reset[c->fail_org] = true;
    }
    return false;
}

/* "2^-15", "0.000030517578125": a power of two in [2^-24, 2^24]; else NAN */
static double parse_factor(const char *s)
{
    char *end = NULL;
    double v;
    if (!strncmp(s, "2^", 2)) {
        long e = strtol(s + 2, &end, 10);
        if (end == s + 2 || *end || e < -24 || e > 24)
            return NAN;
        return ldexp(1, (int)e);
    }
    v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || !isfinite(v))
        return NAN;
    int e;
    if (frexp(v, &e) != 0.5 || e - 1 < -24 || e - 1 > 24)
        return NAN;
    return v;
}

static nb_err sctx_init(sctx *c, nb_graph *g, nb_npu_layer *ls, int nl, nb_status *st)
{
    memset(c, 0, sizeof *c);
    c->g = g, c->ls = ls, c->nl = nl, c->nv = g->n_values, c->st = st;
    c->f = malloc(sizeof(double) * ((size_t)c->nv + 1));
    c->a = malloc(sizeof(double) * ((size_t)c->nv + 1));
    c->r = malloc(sizeof(double) * ((size_t)c->nv + 1));
    c->org = malloc(sizeof(int) * ((size_t)c->nv + 1));
    c->reset = calloc((size_t)nl + 1, sizeof(bool));
    if (!c->f || !c->a || !c->r || !c->org || !c->reset)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

static void sctx_free(sctx *c)
{
    free(c->f), free(c->a), free(c->r), free(c->org), free(c->reset);
}

nb_err nb_input_scale_apply(nb_model *m, nb_npu_layer *ls, int n_layers, const char *spec,
                            const char *cpu_nodes, nb_scale_plan *p, nb_status *st)
{
    memset(p, 0, sizeof *p);
    nb_graph *g = m->graph;
    sctx c;
    nb_err e = sctx_init(&c, g, ls, n_layers, st);
    c.cpu = cpu_nodes;
    double *in_f = e ? NULL : malloc(sizeof(double) * ((size_t)c.nv + 1));
    char *copy = e ? NULL : strdup(spec);
    if (!e && (!in_f || !copy))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int v = 0; !e && v < c.nv; v++)
        in_f[v] = 1;
    char *save = NULL, named[600] = "";
    for (char *part = e ? NULL : strtok_r(copy, ";", &save); part && !e;
         part = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(part, ':');
        double f = colon ? parse_factor(colon + 1) : NAN;
        if (!colon || colon == part || isnan(f)) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: Value [%s] for parameter [--nb_input_scale] "
                        "is invalid: \"input_name:2^-k\", a power of two from 2^-24 to 2^24 "
                        "(written 2^-15 or 0.000030517578125)", part);
            break;
        }
        *colon = 0;
        int v = nb_graph_find(g, part);
        if (v < 0 || !g->values[v].is_input || g->values[v].is_initializer) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: --nb_input_scale names '%s', which is not an "
                        "input of the model", part);
            break;
        }
        if (g->values[v].dtype != NB_FLOAT && g->values[v].dtype != NB_FLOAT16) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: --nb_input_scale: input '%s' is %s, not "
                        "float", part, nb_dtype_name(g->values[v].dtype));
            break;
        }
        in_f[v] = f;
        double *ns = realloc(p->input_scale, sizeof(double) * ((size_t)p->n_inputs + 1));
        if (ns)
            p->input_scale = ns;
        if (!ns || !nb_strlist_addf(&p->inputs, &p->n_inputs, "%s", part)) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        p->input_scale[p->n_inputs - 1] = f;
        char fb[32];
        snprintf(named + strlen(named), sizeof named - strlen(named), "%s'%s' x %s",
                 named[0] ? ", " : "", part, fmt_factor(f, fb, sizeof fb));
    }
    bool solved = !e && solve(&c, in_f);
    if (solved && !c.n_reached)
        e = nb_fail(st, NB_ERR_UNSUPPORTED, "--nb_input_scale: %s reaches no cube op, where the "
                    "scale would enter", named);
    else if (!e && !solved)
        e = c.err ? c.err
                  : nb_fail(st, NB_ERR_UNSUPPORTED, "--nb_input_scale: %s cannot be taken back: "
                            "%s%s", named, c.why,
                            c.fail_org < 0 ? " (no cube op before it whose output could stay "
                                             "unscaled)" : "");
    if (!e) { /* the solved propagation again, changing the layers and constants */
        c.apply = true;
        c.p = p;
        if (!propagate(&c, in_f))
            e = c.err ? c.err : nb_fail(st, NB_ERR_INTERNAL, "--nb_input_scale: %s", c.why);
    }
    if (!e) {
        p->n_values = g->n_values;
        p->scale = malloc(sizeof(double) * ((size_t)p->n_values + 1));
        p->offset = malloc(sizeof(double) * ((size_t)p->n_values + 1));
        if (!p->scale || !p->offset)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        for (int v = 0; !e && v < p->n_values; v++)
            p->scale[v] = F(&c, v), p->offset[v] = A(&c, v);
        for (int i = 0; !e && i < n_layers; i++)
            p->n_reset += c.reset[i];
    }
    free(copy);
    free(in_f);
    sctx_free(&c);
    if (e)
        nb_scale_plan_free(p);
    return e;
}

void nb_scale_plan_free(nb_scale_plan *p)
{
    free(p->scale), free(p->offset), free(p->input_scale);
    for (int i = 0; i < p->n_inputs; i++)
        free(p->inputs[i]);
    free(p->inputs);
    for (int i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    free(p->notes);
    memset(p, 0, sizeof *p);
}

double nb_scale_plan_input(const nb_scale_plan *p, const char *input)
{
    for (int i = 0; p && i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i], input))
            return p->input_scale[i];
    return 0;
}

bool nb_scale_plan_get(const nb_scale_plan *p, const nb_graph *g, const char *value,
                       double *scale, double *offset)
{
    *scale = 1, *offset = 0;
    int v = p && p->scale ? nb_graph_find(g, value) : -1;
    if (v < 0 || v >= p->n_values)
        return false;
    *scale = p->scale[v], *offset = p->offset[v];
    return *scale != 1 || *offset != 0;
}

/* The calibrated magnitude of a layer's input (in what the NPU holds), from its AscendQuant:
   x = (q - offset) / scale for q in the int8 (int16) range. */
static double layer_range(const nb_npu_layer *l)
{
    double qmin = l->act_bits == 16 ? -32768 : -128, qmax = l->act_bits == 16 ? 32767 : 127;
    double lo = (qmin - l->quant_offset) / l->quant_scale, hi = (qmax - l->quant_offset) / l->quant_scale;
    return fmax(fabs(lo), fabs(hi));
}

nb_err nb_input_scale_advise(const nb_model *m, const nb_npu_layer *ls, int n_layers,
                             nb_scale_advice **out, int *n_out, nb_status *st)
{
    *out = NULL, *n_out = 0;
    nb_graph *g = m->graph;
    nb_scale_advice *adv = calloc((size_t)n_layers + 1, sizeof *adv);
    sctx c;
    nb_err e = sctx_init(&c, g, (nb_npu_layer *)ls, n_layers, st);
    double *in_f = e ? NULL : malloc(sizeof(double) * ((size_t)c.nv + 1));
    int *node_of = e ? NULL : malloc(sizeof(int) * ((size_t)n_layers + 1));
    if (!e && (!in_f || !adv || !node_of))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int na = 0;
    for (int li = 0; !e && li < n_layers; li++) {
        node_of[li] = -1;
        for (int k = 0; k < g->n_nodes && node_of[li] < 0; k++)
            if (!strcmp(g->nodes[k].name, ls[li].node) && g->nodes[k].n_in)
                node_of[li] = k;
        double R = layer_range(&ls[li]);
        if (R > 65504 && node_of[li] >= 0)
            adv[na++] = (nb_scale_advice){.input = "", .layer = ls[li].node, .range = R};
    }
    /* per float input: the power of two its scale reaches each such layer's input with */
    for (int i = 0; !e && na && i < g->n_inputs; i++) {
        int iv = g->inputs[i];
        if (g->values[iv].dtype != NB_FLOAT && g->values[iv].dtype != NB_FLOAT16)
            continue;
        for (int v = 0; v < c.nv; v++)
            in_f[v] = v == iv ? 2 : 1;
        memset(c.reset, 0, sizeof(bool) * (size_t)n_layers);
        bool ok = solve(&c, in_f);
        if (!ok) { /* not undoable; the layers' powers still tell */
            memset(c.reset, 0, sizeof(bool) * (size_t)n_layers);
            propagate(&c, in_f);
        }
        for (int k = 0; k < na; k++) {
            int li = 0;
            while (ls[li].node != adv[k].layer) /* adv[k] was made from one of them */
                li++;
            int x = g->nodes[node_of[li]].in[0];
            int pw = (int)lround(log2(F(&c, x)));
            if (pw <= adv[k].power)
                continue;
            adv[k].input = g->values[iv].name;
            adv[k].power = pw;
            adv[k].suggest = ldexp(1, (int)floor(log2(ADVICE_LIMIT / adv[k].range) / pw));
            adv[k].undoable = ok;
        }
    }
    free(in_f);
    free(node_of);
    sctx_free(&c);
    if (e || !na) {
        free(adv);
        return e;
    }
    *out = adv, *n_out = na;
    return NB_OK;
}
