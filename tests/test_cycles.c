/* The cycle model against the seed's table (../shared/docs/nano-toolchain.md, "Typical
 * models"): three models of the table's classes and sizes, built here, compiled (with
 * placeholder int8 weights: cycles do not depend on their values) and loaded in the
 * simulator; each must land within 2x of the seed's time at 64 MHz
 * (share/doc/cycle-model.md has the fit):
 *   CNN, 0.2 MB ("smart gesture", 2.9 ms): five 3x3 Conv + Relu on a [1,1,32,32] input;
 *   CNN+RNN, 0.5 MB ("wake-up", 7.2 ms): two 1-D Conv on [1,40,100] features, then two GRU
 *     (hidden 192) over the 25 frames left after the strides;
 *   Transformer, 0.7 MB (15 ms): the Keyword Transformer KWT-1's encoder (Berg et al. 2021):
 *     12 layers, d = 64, 98 frames, one head, MLP 320 (KWT-1 has 256: 0.59 MB).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lowering_helpers.h"
#include "model_builder.h"
#include "nb/exeom.h"
#include "nb/sim.h"
#include "tmpdir.h"

static nb_op_table ops;

static int setup(void **state)
{
    nb_status st = {0};
    if (nb_op_table_load(nb_op_table_default_path(), &ops, &st))
        fail_msg("%s", st.msg);
    return setup_dir(state);
}

static int teardown(void **state)
{
    nb_op_table_free(&ops);
    return teardown_dir(state);
}

/* ---- building ---- */
/* names live as long as the test (the builder keeps pointers to them) */
static char pool[4096][32];
static int pool_n;
static char *keep(const char *s)
{
    char *p = pool[pool_n++ % 4096];
    snprintf(p, 32, "%s", s);
    return p;
}
static int seq;
static char *nm(const char *p)
{
    static char buf[64][32];
    static int at;
    char *s = buf[at++ % 64];
    snprintf(s, 32, "%s%d", p, seq++);
    return s;
}

static float *filled(int64_t n)
{
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((i % 7) - 3) * 0.01f;
    return v;
}

static void init(mb_model *m, const char *name, int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    float *v = filled(n);
    mb_init_floats(m, name, rank, dims, v, (size_t)n);
    free(v);
}

/* y = Relu(Conv(x, W)) with W [co, ci, k(, k)], stride s, pads k/2 */
static const char *conv_relu(mb_model *m, const char *x, int64_t ci, int64_t co, int k, int s,
                             int two_d)
{
    char w[32], c[32], y[32];
    snprintf(w, sizeof w, "%s", nm("W"));
    snprintf(c, sizeof c, "%s", nm("c"));
    snprintf(y, sizeof y, "%s", nm("r"));
    int64_t d4[4] = {co, ci, k, k}, d3[3] = {co, ci, k};
    init(m, w, two_d ? 4 : 3, two_d ? d4 : d3);
    Onnx__NodeProto *n = mb_node(m, "Conv", (const char *[]){x, w, NULL}, (const char *[]){c, NULL});
    n->name = keep(c);
    int64_t st2[2] = {s, s}, p4[4] = {k / 2, k / 2, k / 2, k / 2};
    mb_attr_ints(n, "strides", two_d ? 2 : 1, st2);
    mb_attr_ints(n, "pads", two_d ? 4 : 2, p4);
    mb_node(m, "Relu", (const char *[]){c, NULL}, (const char *[]){y, NULL})->name = keep(y);
    static char out[64][32];
    static int at;
    char *o = out[at++ % 64];
    snprintf(o, 32, "%s", y);
    return o;
}

static nb_model *cnn(void)
{
    mb_model *m = mb_new(13);
    int64_t dx[4] = {1, 1, 32, 32}, dy[4] = {1, 64, 8, 8};
    mb_input(m, "x", 1, 4, dx);
    const char *t = conv_relu(m, "x", 1, 32, 3, 1, 1);
    t = conv_relu(m, t, 32, 64, 3, 2, 1);
    t = conv_relu(m, t, 64, 64, 3, 1, 1);
    t = conv_relu(m, t, 64, 128, 3, 2, 1);
    t = conv_relu(m, t, 128, 64, 3, 1, 1);
    mb_node(m, "Identity", (const char *[]){t, NULL}, (const char *[]){"y", NULL})->name = "out";
    mb_output(m, "y", 1, 4, dy);
    return load_folded(m);
}

static const char *gru(mb_model *m, const char *x, int64_t in, int64_t h, int64_t T,
                       const char *name)
{
    char w[32], r[32], b[32], y[32];
    snprintf(w, sizeof w, "%s_W", name);
    snprintf(r, sizeof r, "%s_R", name);
    snprintf(b, sizeof b, "%s_B", name);
    snprintf(y, sizeof y, "%s_Y", name);
    int64_t dw[3] = {1, 3 * h, in}, dr[3] = {1, 3 * h, h}, db[2] = {1, 6 * h};
    init(m, w, 3, dw);
    init(m, r, 3, dr);
    init(m, b, 2, db);
    Onnx__NodeProto *n = mb_node(m, "GRU", (const char *[]){x, w, r, b, NULL},
                                 (const char *[]){y, NULL});
    n->name = keep(name);
    mb_attr_int(n, "hidden_size", h);
    mb_attr_int(n, "linear_before_reset", 1);
    /* Y [T, 1, 1, h] -> [T, 1, h] */
    static char sq[4][32];
    static int at;
    char *o = sq[at++ % 4];
    snprintf(o, 32, "%s_sq", name);
    int64_t axes[1] = {1}; /* opset 11: Squeeze's axes are an attribute */
    Onnx__NodeProto *q = mb_node(m, "Squeeze", (const char *[]){y, NULL}, (const char *[]){o, NULL});
    q->name = keep(o);
    mb_attr_ints(q, "axes", 1, axes);
    (void)T;
    return o;
}

static nb_model *cnn_rnn(void)
{
    mb_model *m = mb_new(11);
    int64_t dx[3] = {1, 40, 100}, dy[3] = {25, 1, 192};
    mb_input(m, "x", 1, 3, dx);
    const char *t = conv_relu(m, "x", 40, 128, 3, 2, 0);  /* [1,128,50] */
    t = conv_relu(m, t, 128, 128, 3, 2, 0);              /* [1,128,25] */
    int64_t perm[3] = {2, 0, 1};
    Onnx__NodeProto *tr = mb_node(m, "Transpose", (const char *[]){t, NULL},
                                  (const char *[]){"seq", NULL});
    tr->name = "to_seq";
    mb_attr_ints(tr, "perm", 3, perm); /* [25, 1, 128] */
    const char *g1 = gru(m, "seq", 128, 192, 25, "gru1");
    const char *g2 = gru(m, g1, 192, 192, 25, "gru2");
    mb_node(m, "Identity", (const char *[]){g2, NULL}, (const char *[]){"y", NULL})->name = "out";
    mb_output(m, "y", 1, 3, dy);
    return load_folded(m);
}

static const char *node2(mb_model *m, const char *op, const char *a, const char *b)
{
    char *s = keep(nm(op));
    mb_node(m, op, (const char *[]){a, b, NULL}, (const char *[]){s, NULL})->name = s;
    return s;
}

static const char *weight(mb_model *m, int rank, const int64_t *dims)
{
    char *s = keep(nm("w"));
    init(m, s, rank, dims);
    return s;
}

static const char *scalar(mb_model *m, float v)
{
    char *s = keep(nm("k"));
    mb_init_floats(m, s, 0, NULL, &v, 1);
    return s;
}

/* LayerNorm over the last dim, decomposed as an opset-13 export writes it */
static const char *layer_norm(mb_model *m, const char *x, int64_t d)
{
    const char *mu = node2(m, "ReduceMean", x, NULL);
    int64_t ax[1] = {-1};
    m->graph.node[m->graph.n_node - 1]->n_input = 1;
    mb_attr_ints(m->graph.node[m->graph.n_node - 1], "axes", 1, ax);
    const char *xc = node2(m, "Sub", x, mu);
    const char *sq = node2(m, "Mul", xc, xc);
    const char *var = node2(m, "ReduceMean", sq, NULL);
    m->graph.node[m->graph.n_node - 1]->n_input = 1;
    mb_attr_ints(m->graph.node[m->graph.n_node - 1], "axes", 1, ax);
    const char *ve = node2(m, "Add", var, scalar(m, 1e-5f));
    const char *sd = node2(m, "Sqrt", ve, NULL);
    m->graph.node[m->graph.n_node - 1]->n_input = 1;
    const char *nx = node2(m, "Div", xc, sd);
    int64_t dd[1] = {d};
    const char *g = node2(m, "Mul", nx, weight(m, 1, dd));
    return node2(m, "Add", g, weight(m, 1, dd));
}

static nb_model *transformer(void)
{
    mb_model *m = mb_new(13);
    const int64_t T = 98, D = 64, F = 320; /* KWT-1 (Berg et al. 2021) with MLP 320: 98 frames */
    int64_t dx[2] = {T, D};
    mb_input(m, "x", 1, 2, dx);
    const char *h = "x";
    int64_t dd[2] = {D, D}, df1[2] = {D, F}, df2[2] = {F, D};
    for (int l = 0; l < 12; l++) {
        const char *q = node2(m, "MatMul", h, weight(m, 2, dd));
        const char *k = node2(m, "MatMul", h, weight(m, 2, dd));
        const char *v = node2(m, "MatMul", h, weight(m, 2, dd));
        const char *kt = node2(m, "Transpose", k, NULL);
        m->graph.node[m->graph.n_node - 1]->n_input = 1;
        int64_t perm[2] = {1, 0};
        mb_attr_ints(m->graph.node[m->graph.n_node - 1], "perm", 2, perm);
        const char *s = node2(m, "MatMul", q, kt);                 /* [T, T] */
        const char *ss = node2(m, "Mul", s, scalar(m, 0.125f)); /* 1/sqrt(64) */
        const char *p = node2(m, "Softmax", ss, NULL);
        m->graph.node[m->graph.n_node - 1]->n_input = 1;
        mb_attr_int(m->graph.node[m->graph.n_node - 1], "axis", -1);
        const char *a = node2(m, "MatMul", p, v);                   /* [T, D] */
        const char *o = node2(m, "MatMul", a, weight(m, 2, dd));
        const char *r1 = layer_norm(m, node2(m, "Add", h, o), D);
        const char *f1 = node2(m, "MatMul", r1, weight(m, 2, df1));
        const char *f1r = node2(m, "Relu", f1, NULL);
        m->graph.node[m->graph.n_node - 1]->n_input = 1;
        const char *f2 = node2(m, "MatMul", f1r, weight(m, 2, df2));
        h = layer_norm(m, node2(m, "Add", r1, f2), D);
    }
    mb_node(m, "Identity", (const char *[]){h, NULL}, (const char *[]){"y", NULL})->name = "out";
    mb_output(m, "y", 1, 2, dx);
    return load_folded(m);
}

/* ---- compile with placeholder layers, load, count ---- */
static const nb_node *node_named(const nb_model *m, const char *name)
{
    for (int i = 0; i < m->graph->n_nodes; i++)
        if (!strcmp(m->graph->nodes[i].name, name))
            return &m->graph->nodes[i];
    return NULL;
}

/* Every cube layer of m with zero int8 weights of its dims, unit scales, and bias /
   deq_scale arrays long enough; writes the exeom and loads it. *weights: int8 weight bytes. */
static nb_sim_model *compile(nb_model *m, const char *name, double *weight_mb)
{
    nb_estimate e;
    nb_status st = {0};
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(m, &ops, &o, &e, &st))
        fail_msg("%s: %s", name, st.msg);
    nb_npu_layer *ls = calloc((size_t)m->graph->n_nodes + 1, sizeof *ls);
    int nl = 0;
    double wbytes = 0;
    for (int i = 0; i < m->graph->n_nodes; i++) {
        const nb_node *nd = &m->graph->nodes[i];
        bool rnn = !strcmp(nd->op_type, "GRU") || !strcmp(nd->op_type, "LSTM");
        if (strcmp(nd->op_type, "Conv") && strcmp(nd->op_type, "MatMul") && !rnn)
            continue;
        const nb_tensor *w = m->graph->values[nd->in[1]].const_val;
        nb_npu_layer *l = &ls[nl++];
        l->node = (char *)nd->name;
        l->act_bits = 8;
        l->quant_scale = 1;
        l->h_scale = 1;
        l->b_scale = w ? 0 : 1; /* a MatMul of two activations (attention) */
        l->channels = 4096;
        if (w) {
            l->w_rank = w->rank;
            memcpy(l->w_dims, w->dims, sizeof(int64_t) * (size_t)w->rank);
            l->w_numel = w->numel;
            l->w = calloc((size_t)w->numel + 1, 1);
            wbytes += (double)w->numel;
        }
        if (rnn) {
            const nb_tensor *r = m->graph->values[nd->in[2]].const_val;
            l->channels = w->dims[1];
            memcpy(l->r_dims, r->dims, sizeof l->r_dims);
            l->r_numel = r->numel;
            l->r = calloc((size_t)r->numel + 1, 1);
            l->bias_r = calloc((size_t)l->channels, sizeof(int32_t));
            l->deq_r = calloc((size_t)l->channels, sizeof(uint64_t));
            wbytes += (double)r->numel;
        }
        l->bias = calloc((size_t)l->channels, sizeof(int32_t));
        l->deq_scale = calloc((size_t)l->channels, sizeof(uint64_t));
    }
    char path[700];
    snprintf(path, sizeof path, "%s/%s.exeom", tmpdir, name);
    int64_t bytes = 0;
    if (nb_exeom_write(path, m, &e, ls, nl, "Ascend035A", &bytes, &st))
        fail_msg("%s: %s", name, st.msg);
    for (int i = 0; i < nl; i++)
        free(ls[i].w), free(ls[i].r), free(ls[i].bias), free(ls[i].deq_scale), free(ls[i].bias_r),
            free(ls[i].deq_r);
    free(ls);
    nb_estimate_free(&e);
    uint8_t *buf = NULL;
    size_t len = 0;
    nb_sim_model *sm = NULL;
    if (nb_read_file(path, &buf, &len, &st) || nb_sim_load(buf, len, NULL, &sm, &st))
        fail_msg("%s: %s", name, st.msg);
    free(buf);
    *weight_mb = wbytes / 1e6;
    (void)node_named;
    return sm;
}

static void check(nb_model *m, const char *name, double mb_lo, double mb_hi, double seed_ms)
{
    double mb = 0;
    nb_sim_model *sm = compile(m, name, &mb);
    double ms = (double)nb_sim_total_cycles(sm) / 64e3;
    print_message("%-12s %.2f MB int8 weights, %.1f M MACs, %llu cycles = %.2f ms at 64 MHz "
                  "(seed %.1f ms, ratio %.2f)\n", name, mb, (double)nb_sim_total_macs(sm) / 1e6,
                  (unsigned long long)nb_sim_total_cycles(sm), ms, seed_ms, ms / seed_ms);
    /* where the cycles go, by kernel (for share/doc/cycle-model.md) */
    const nb_exeom *xe = nb_sim_exeom(sm);
    double by[64] = {0};
    for (uint32_t k = 0; k < xe->n_tasks; k++)
        by[xe->k[k].kernel < 64 ? xe->k[k].kernel : 0] += (double)nb_sim_profile(sm, (int)k)->cycles;
    for (int i = 1; i < 64; i++)
        if (by[i] > 0.02 * (double)nb_sim_total_cycles(sm))
            print_message("    %-16s %5.1f%%\n", nb_exeom_kernel_name(i),
                          100 * by[i] / (double)nb_sim_total_cycles(sm));
    assert_true(mb >= mb_lo && mb <= mb_hi);   /* the seed's size class */
    assert_true(ms >= seed_ms / 2 && ms <= seed_ms * 2);
    /* the inputs run: the model executes to the end on zeros */
    const nb_exeom *x = nb_sim_exeom(sm);
    void *in[8], *out[8];
    for (uint32_t i = 0; i < x->n_inputs; i++)
        in[i] = calloc(1, x->t[nb_sim_input_tensor(sm, (int)i)].bytes + 1);
    for (uint32_t i = 0; i < x->n_outputs; i++)
        out[i] = calloc(1, x->t[nb_sim_output_tensor(sm, (int)i)].bytes + 1);
    nb_status st = {0};
    if (nb_sim_execute(sm, (const void *const *)in, out, NULL, NULL, &st))
        fail_msg("%s: %s", name, st.msg);
    for (uint32_t i = 0; i < x->n_inputs; i++)
        free(in[i]);
    for (uint32_t i = 0; i < x->n_outputs; i++)
        free(out[i]);
    nb_sim_free(sm);
    nb_model_free(m);
}

static void test_cnn(void **state)
{
    (void)state;
    check(cnn(), "cnn", 0.1, 0.3, 2.9);
}

static void test_cnn_rnn(void **state)
{
    (void)state;
    check(cnn_rnn(), "cnn_rnn", 0.4, 0.6, 7.2);
}

static void test_transformer(void **state)
{
    (void)state;
    check(transformer(), "transformer", 0.6, 0.8, 15.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cnn),
        cmocka_unit_test(test_cnn_rnn),
        cmocka_unit_test(test_transformer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
