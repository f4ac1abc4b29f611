/* nanobench: shape inference of recurrent operators (ONNX Operators.md, opset 11-18):
 * RNN, GRU and LSTM, with direction, layout (opset 14), activations, clip, and the
 * optional inputs (B, sequence_lens, initial_h, initial_c, P) and outputs (Y, Y_h, Y_c).
 *
 * Every attribute is checked here (NB_ERR_ATTR), and every dim the inputs give is checked
 * against the others (NB_ERR_SHAPE), so the kernels in engine/ref/k_rnn.c can trust what
 * they receive at run time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "infer_ops.h"

typedef enum { RK_RNN, RK_GRU, RK_LSTM } rnn_kind;

/* Gates per direction (W rows = gates x hidden_size) and activations per direction. */
static const int kind_gates[] = {1, 3, 4};
static const int kind_acts[] = {1, 2, 3};
static const char *const kind_name[] = {"RNN", "GRU", "LSTM"};

/* Activation names of Operators.md (RNN, GRU, LSTM), matched without regard to case. */
static bool known_activation(const char *s)
{
    static const char *const names[] = {"Relu",      "Tanh",        "Sigmoid",
                                        "Affine",    "LeakyRelu",   "ThresholdedRelu",
                                        "ScaledTanh", "HardSigmoid", "Elu",
                                        "Softsign",  "Softplus"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *a = names[i], *b = s;
        while (*a && *b) {
            char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
            char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
            if (ca != cb)
                break;
            a++;
            b++;
        }
        if (!*a && !*b)
            return true;
    }
    return false;
}

/* *v := d when *v is unknown; error when both are known and differ. */
static nb_err unify(nb_infer_ctx *c, int64_t *v, int64_t d, const char *what)
{
    if (d < 0)
        return NB_OK;
    if (*v >= 0 && *v != d)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s is %" PRId64 ", expected %" PRId64, what, d,
                       *v);
    *v = d;
    return NB_OK;
}

/* hidden_size from a dim that must be mult x hidden_size. */
static nb_err unify_multiple(nb_infer_ctx *c, int64_t *h, int64_t d, int64_t mult,
                             const char *what)
{
    if (d < 0)
        return NB_OK;
    if (d % mult != 0)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s is %" PRId64 ", not a multiple of %" PRId64,
                       what, d, mult);
    char w[96];
    snprintf(w, sizeof w, "hidden_size (from %s)", what);
    return unify(c, h, d / mult, w);
}

/* Input i, when given with a known rank, must have rank r. */
static nb_err need_rank(nb_infer_ctx *c, int i, int r, const char *what)
{
    if (nb_has_in(c, i) && c->in[i].rank >= 0 && c->in[i].rank != r)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must have rank %d, not %d", what, r,
                       c->in[i].rank);
    return NB_OK;
}

/* Dim d of input i, or -1 when the input is absent or its rank unknown. */
static int64_t dim_of(const nb_infer_ctx *c, int i, int d)
{
    if (!nb_has_in(c, i) || c->in[i].rank <= d)
        return -1;
    return c->in[i].dims[d];
}

/* Dim d of input i, when known, must be num_directions (1, or 2 for bidirectional). */
static nb_err check_ndir(nb_infer_ctx *c, int i, int d, int ndir, const char *what)
{
    int64_t v = dim_of(c, i, d);
    if (v >= 0 && v != ndir)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s dim %d is %" PRId64 ", num_directions is %d",
                       what, d, v, ndir);
    return NB_OK;
}

/* Common rules of RNN, GRU and LSTM (Operators.md, opset 14, layout 0):
 *   X [seq_length, batch_size, input_size], W [num_directions, G*hidden_size, input_size],
 *   R [num_directions, G*hidden_size, hidden_size], B [num_directions, 2*G*hidden_size],
 *   sequence_lens [batch_size] (int32), initial_h / initial_c [num_directions, batch_size,
 *   hidden_size], P [num_directions, 3*hidden_size] (LSTM);
 *   Y [seq_length, num_directions, batch_size, hidden_size], Y_h / Y_c [num_directions,
 *   batch_size, hidden_size]; G = 1 (RNN), 3 (GRU, zrh), 4 (LSTM, iofc).
 * layout 1 swaps the first two dims of X, initial_h/c, Y_h/c, and Y is [batch_size,
 * seq_length, num_directions, hidden_size]. */
static nb_err infer_recurrent(nb_infer_ctx *c, rnn_kind kind)
{
    const nb_node *n = c->node;
    int max_in = kind == RK_LSTM ? 8 : 6, max_out = kind == RK_LSTM ? 3 : 2;
    int64_t G = kind_gates[kind];
    nb_err e = nb_need_inputs(c, 3, max_in);
    if (e)
        return e;
    if (c->n_out > max_out)
        return nb_fail(c->st, NB_ERR_GRAPH, "%s has at most %d outputs, not %d",
                       kind_name[kind], max_out, c->n_out);

    /* attributes */
    const char *dir = nb_attr_str(n, "direction", "forward");
    int ndir;
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
        ndir = 1;
    else if (!strcmp(dir, "bidirectional"))
        ndir = 2;
    else
        return nb_fail(c->st, NB_ERR_ATTR, "direction '%s' is not forward, reverse or "
                       "bidirectional", dir);
    int64_t layout = nb_attr_int(n, "layout", 0);
    if (layout != 0 && layout != 1)
        return nb_fail(c->st, NB_ERR_ATTR, "layout must be 0 or 1, not %" PRId64, layout);
    int64_t H = -1;
    const nb_attr *a = nb_attr_find(n, "hidden_size");
    if (a) {
        if (a->type != NB_ATTR_INT || a->i <= 0)
            return nb_fail(c->st, NB_ERR_ATTR, "hidden_size must be a positive int");
        H = a->i;
    }
    a = nb_attr_find(n, "clip");
    if (a) {
        float clip = a->type == NB_ATTR_FLOAT ? a->f : a->type == NB_ATTR_INT ? (float)a->i : -1;
        if (!(clip > 0))
            return nb_fail(c->st, NB_ERR_ATTR, "clip must be a positive float");
    }
    a = nb_attr_find(n, "activations");
    if (a) {
        int per = kind_acts[kind];
        if (a->type != NB_ATTR_STRINGS)
            return nb_fail(c->st, NB_ERR_ATTR, "activations must be a list of strings");
        if (a->n != per && a->n != per * ndir)
            return nb_fail(c->st, NB_ERR_ATTR, "activations has %d names, %s %s needs %d",
                           a->n, dir, kind_name[kind], per * ndir);
        for (int i = 0; i < a->n; i++)
            if (!known_activation(a->strings[i]))
                return nb_fail(c->st, NB_ERR_ATTR, "activation '%s' is not one of Relu, Tanh, "
                               "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                               "HardSigmoid, Elu, Softsign, Softplus", a->strings[i]);
    }
    for (int i = 0; i < 2; i++) {
        const char *nm = i ? "activation_beta" : "activation_alpha";
        a = nb_attr_find(n, nm);
        if (a && a->type != NB_ATTR_FLOATS && a->type != NB_ATTR_FLOAT)
            return nb_fail(c->st, NB_ERR_ATTR, "%s must be a list of floats", nm);
    }

    /* element types: T for every input but sequence_lens (int32) */
    nb_dtype t = c->in[0].dtype;
    for (int i = 0; i < c->n_in; i++) {
        if (i == 4 || !nb_has_in(c, i))
            continue;
        nb_dtype d = c->in[i].dtype;
        if (d == NB_UNDEFINED)
            continue;
        if (d != NB_FLOAT && d != NB_FLOAT16)
            return nb_fail(c->st, NB_ERR_GRAPH, "input %d is %s; %s takes float or float16", i,
                           nb_dtype_name(d), kind_name[kind]);
        if (t == NB_UNDEFINED)
            t = d;
        else if (d != t)
            return nb_fail(c->st, NB_ERR_GRAPH, "input types differ (%s and %s)",
                           nb_dtype_name(t), nb_dtype_name(d));
    }
    if (nb_has_in(c, 4) && c->in[4].dtype != NB_UNDEFINED && c->in[4].dtype != NB_INT32 &&
        c->in[4].dtype != NB_INT64)
        return nb_fail(c->st, NB_ERR_GRAPH, "sequence_lens must be int32, not %s",
                       nb_dtype_name(c->in[4].dtype));

    /* ranks */
    static const char *const in_names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h",
                                           "initial_c", "P"};
    static const int in_ranks[] = {3, 3, 3, 2, 1, 3, 3, 2};
    for (int i = 0; i < c->n_in; i++)
        if ((e = need_rank(c, i, in_ranks[i], in_names[i])))
            return e;

    /* directions */
    int hd = layout ? 1 : 0; /* position of num_directions in initial_h / initial_c */
    if ((e = check_ndir(c, 1, 0, ndir, "W")) || (e = check_ndir(c, 2, 0, ndir, "R")) ||
        (e = check_ndir(c, 3, 0, ndir, "B")) || (e = check_ndir(c, 5, hd, ndir, "initial_h")) ||
        (e = check_ndir(c, 6, hd, ndir, "initial_c")) || (e = check_ndir(c, 7, 0, ndir, "P")))
        return e;

    /* hidden_size */
    if ((e = unify(c, &H, dim_of(c, 2, 2), "hidden_size (R dim 2)")) ||
        (e = unify(c, &H, dim_of(c, 5, 2), "hidden_size (initial_h dim 2)")) ||
        (e = unify(c, &H, dim_of(c, 6, 2), "hidden_size (initial_c dim 2)")) ||
        (e = unify_multiple(c, &H, dim_of(c, 1, 1), G, "W dim 1")) ||
        (e = unify_multiple(c, &H, dim_of(c, 2, 1), G, "R dim 1")) ||
        (e = unify_multiple(c, &H, dim_of(c, 3, 1), 2 * G, "B dim 1")) ||
        (e = unify_multiple(c, &H, dim_of(c, 7, 1), 3, "P dim 1")))
        return e;
    int64_t gh;
    if (H >= 0 && !nb_mul_ok(H, 2 * G, &gh))
        return nb_fail(c->st, NB_ERR_SHAPE, "hidden_size %" PRId64 " is too large", H);

    /* batch, sequence, input */
    int64_t seq = dim_of(c, 0, layout ? 1 : 0), batch = -1, input = -1;
    int bd = layout ? 0 : 1; /* position of batch_size in X, initial_h, initial_c */
    if ((e = unify(c, &batch, dim_of(c, 0, bd), "batch_size (X)")) ||
        (e = unify(c, &batch, dim_of(c, 4, 0), "batch_size (sequence_lens)")) ||
        (e = unify(c, &batch, dim_of(c, 5, bd), "batch_size (initial_h)")) ||
        (e = unify(c, &batch, dim_of(c, 6, bd), "batch_size (initial_c)")) ||
        (e = unify(c, &input, dim_of(c, 0, 2), "input_size (X dim 2)")) ||
        (e = unify(c, &input, dim_of(c, 1, 2), "input_size (W dim 2)")))
        return e;

    /* outputs */
    int64_t y[4], yh[3];
    if (layout == 0) {
        y[0] = seq, y[1] = ndir, y[2] = batch, y[3] = H;
        yh[0] = ndir, yh[1] = batch, yh[2] = H;
    } else {
        y[0] = batch, y[1] = seq, y[2] = ndir, y[3] = H;
        yh[0] = batch, yh[1] = ndir, yh[2] = H;
    }
    for (int o = 0; o < c->n_out; o++) {
        if (o == 0)
            nb_tinfo_set(&c->out[o], t, 4, y);
        else
            nb_tinfo_set(&c->out[o], t, 3, yh);
    }
    return NB_OK;
}

/* RNN (Operators.md, opset 14): Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi), f = Tanh. */
static nb_err infer_RNN(nb_infer_ctx *c) { return infer_recurrent(c, RK_RNN); }

/* GRU (Operators.md, opset 14): zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz), rt likewise,
 * ht = g(Xt*(Wh^T) + (rt (.) Ht-1)*(Rh^T) + Rbh + Wbh) (or with linear_before_reset,
 * g(Xt*(Wh^T) + (rt (.) (Ht-1*(Rh^T) + Rbh)) + Wbh)), Ht = (1 - zt) (.) ht + zt (.) Ht-1. */
static nb_err infer_GRU(nb_infer_ctx *c) { return infer_recurrent(c, RK_GRU); }

/* LSTM (Operators.md, opset 14): it = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Pi (.) Ct-1 + Wbi + Rbi),
 * ft likewise with Pf, ct = g(Xt*(Wc^T) + Ht-1*(Rc^T) + Wbc + Rbc), Ct = ft (.) Ct-1 +
 * it (.) ct, ot = f(... + Po (.) Ct ...), Ht = ot (.) h(Ct). */
static nb_err infer_LSTM(nb_infer_ctx *c) { return infer_recurrent(c, RK_LSTM); }

const nb_infer_entry nb_infer_ops_rnn[] = {
    {"GRU", infer_GRU},
    {"LSTM", infer_LSTM},
    {"RNN", infer_RNN},
    {NULL, NULL},
};
