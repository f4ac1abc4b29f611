/* Reference executor on small hand-built graphs; every expected value is worked out by
 * hand next to the assertion. */
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

#include "model_builder.h"
#include "nb/ref.h"

static nb_model *load(mb_model *mm, bool fold)
{
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    if (nb_model_load_mem(b, n, "t.onnx", "/tmp", NULL, &m, &st))
        fail_msg("%s", st.msg);
    if (fold && nb_ref_fold(m, &st))
        fail_msg("%s", st.msg);
    free(b);
    mb_free(mm);
    return m;
}

static nb_tensor *tensor_f(int rank, const int64_t *dims, const float *v)
{
    nb_tensor *t;
    nb_status st = {0};
    assert_int_equal(nb_tensor_new(NB_FLOAT, rank, dims, &t, &st), NB_OK);
    memcpy(t->data, v, t->nbytes);
    return t;
}

/* y = (x + b) * 2 with x [2,3], b [3] broadcast along rows. */
static void test_broadcast_add_mul(void **state)
{
    (void)state;
    const int64_t d23[] = {2, 3}, d3[] = {3};
    const float bv[3] = {10, 20, 30}, two = 2;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d23);
    mb_output(mm, "y", 1, 2, d23);
    mb_init_floats(mm, "b", 1, d3, bv, 3);
    mb_init_floats(mm, "two", 0, NULL, &two, 1);
    mb_node(mm, "Add", (const char *[]){"x", "b", NULL}, (const char *[]){"s", NULL});
    mb_node(mm, "Mul", (const char *[]){"s", "two", NULL}, (const char *[]){"y", NULL});
    nb_model *m = load(mm, true);
    nb_exec *ex;
    nb_status st = {0};
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    const float xv[6] = {1, 2, 3, 4, 5, 6};
    nb_tensor *x = tensor_f(2, d23, xv);
    const char *names[] = {"x"};
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    const nb_tensor *y = nb_exec_output(ex, 0);
    /* (1+10)*2=22 (2+20)*2=44 (3+30)*2=66 (4+10)*2=28 (5+20)*2=50 (6+30)*2=72 */
    const float expect[6] = {22, 44, 66, 28, 50, 72};
    assert_memory_equal(y->data, expect, sizeof expect);
    nb_tensor_free(x);
    /* a wrong input shape is a clear argument error, not a crash */
    const int64_t d32[] = {3, 2};
    x = tensor_f(2, d32, xv);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "[2,3]"));
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
}

/* If with branches that read the outer tensor x:
 *   then: t = x * 3      else: e = x - 1
 * condition c = Greater(sum-free x[0] , 0) is data dependent (x is [1]). */
static mb_model *if_model(void)
{
    const int64_t d1[] = {1};
    const float three = 3, one = 1, zero = 0;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 1, d1);
    mb_output(mm, "y", 1, 1, d1);
    mb_init_floats(mm, "three", 0, NULL, &three, 1);
    mb_init_floats(mm, "one", 0, NULL, &one, 1);
    mb_init_floats(mm, "zero", 0, NULL, &zero, 1);
    mb_node(mm, "Greater", (const char *[]){"x", "zero", NULL}, (const char *[]){"c1", NULL});
    Onnx__GraphProto *tg = mb_graph("then");
    mb_gnode(tg, "Mul", (const char *[]){"x", "three", NULL}, (const char *[]){"t", NULL});
    mb_goutput(tg, "t", 1, 1, d1);
    Onnx__GraphProto *eg = mb_graph("else");
    mb_gnode(eg, "Sub", (const char *[]){"x", "one", NULL}, (const char *[]){"e", NULL});
    mb_goutput(eg, "e", 1, 1, d1);
    /* the If reads a [1] bool: reshape-free since Greater of [1] and [] is [1] */
    Onnx__NodeProto *n = mb_node(mm, "If", (const char *[]){"c1", NULL}, (const char *[]){"y", NULL});
    mb_attr_graph(n, "then_branch", tg);
    mb_attr_graph(n, "else_branch", eg);
    return mm;
}

static void test_if_data_dependent(void **state)
{
    (void)state;
    nb_model *m = load(if_model(), true);
    assert_int_equal(m->graph->n_nodes, 2); /* Greater, If: nothing to fold */
    nb_exec *ex;
    nb_status st = {0};
    nb_exec_opts eo = {.keep_all = true};
    assert_int_equal(nb_exec_create(m, &eo, &ex, &st), NB_OK);
    const int64_t d1[] = {1};
    const char *names[] = {"x"};
    float v = 2.5f;
    nb_tensor *x = tensor_f(1, d1, &v);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    assert_true(*(float *)nb_exec_output(ex, 0)->data == 7.5f); /* then: 2.5 * 3 */
    assert_non_null(nb_exec_get(ex, "t"));
    assert_null(nb_exec_get(ex, "e"));
    nb_tensor_free(x);
    v = -4.0f;
    x = tensor_f(1, d1, &v);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    assert_true(*(float *)nb_exec_output(ex, 0)->data == -5.0f); /* else: -4 - 1 */
    assert_non_null(nb_exec_get(ex, "e"));
    assert_null(nb_exec_get(ex, "t"));
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
}

/* nb_kctx.rnn_cube_h: the state entering the recurrent product is what the hook leaves;
 * the state itself is not changed. RNN (hidden 1, W = R = 1, no bias, Tanh) on x = [0.3,
 * 0.2], the hook rounding to steps of 0.5: h1 = tanh(0.3 + R x 0) = 0.2913126; the product
 * reads round(0.2913126 / 0.5) x 0.5 = 0.5, so h2 = tanh(0.2 + 0.5) = tanh(0.7) = 0.6043678
 * (without the hook tanh(0.4913126) = 0.4551). */
static void halves(void *user, float *h, int64_t n)
{
    (void)user;
    for (int64_t i = 0; i < n; i++)
        h[i] = 0.5f * nearbyintf(h[i] / 0.5f);
}

static void test_rnn_cube_h(void **state)
{
    (void)state;
    const int64_t dx[] = {2, 1, 1}, dw[] = {1, 1, 1}, dy[] = {2, 1, 1, 1};
    const float one = 1.0f, xv[2] = {0.3f, 0.2f};
    mb_model *mm = mb_new(14);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_init_floats(mm, "W", 3, dw, &one, 1);
    mb_init_floats(mm, "R", 3, dw, &one, 1);
    Onnx__NodeProto *n = mb_node(mm, "RNN", (const char *[]){"x", "W", "R", NULL},
                                 (const char *[]){"y", NULL});
    mb_attr_int(n, "hidden_size", 1);
    nb_model *m = load(mm, false);
    const nb_node *nd = &m->graph->nodes[0];
    nb_tensor *ins[3] = {tensor_f(3, dx, xv), m->graph->values[nd->in[1]].const_val,
                         m->graph->values[nd->in[2]].const_val};
    nb_tensor *y;
    nb_status st = {0};
    assert_int_equal(nb_tensor_new(NB_FLOAT, 4, dy, &y, &st), NB_OK);
    for (int hook = 0; hook < 2; hook++) {
        nb_kctx k = {.graph = m->graph, .node = nd, .opset = 14, .n_in = 3, .in = ins,
                     .n_out = 1, .out = &y, .st = &st,
                     .rnn_cube_h = hook ? halves : NULL};
        assert_int_equal(nb_kernel_lookup("RNN")(&k), NB_OK);
        const float *yv = y->data;
        assert_float_equal(yv[0], tanh(0.3), 1e-6);
        assert_float_equal(yv[1], hook ? tanh(0.7) : tanh(0.2 + tanh(0.3)), 1e-6);
    }
    nb_tensor_free(ins[0]);
    nb_tensor_free(y);
    nb_model_free(m);
}

/* Loads a model expected to be refused; returns the error and leaves the message in st. */
static nb_err load_err(mb_model *mm, nb_status *st)
{
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_model *m = NULL;
    nb_err e = nb_model_load_mem(b, n, "t.onnx", "/tmp", NULL, &m, st);
    assert_true(e ? m == NULL : m != NULL);
    nb_model_free(m);
    free(b);
    mb_free(mm);
    return e;
}

static void test_if_malformed(void **state)
{
    (void)state;
    nb_status st = {0};
    /* a branch that declares an input: If branches take none */
    const int64_t d1[] = {1};
    mb_model *mm = if_model();
    mb_ginput(mm->graph.node[1]->attribute[0]->g, "p", 1, 1, d1);
    assert_int_equal(load_err(mm, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "then_branch declares 1 inputs"));
    /* a float condition */
    mm = if_model();
    mm->graph.node[1]->input[0] = "x";
    assert_int_equal(load_err(mm, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "condition must be bool"));
}

/* The same If with a constant condition: import inlines the else branch. */
static void test_if_constant_inlined(void **state)
{
    (void)state;
    mb_model *mm = if_model();
    /* replace Greater(x, zero) by Greater(zero, one): constant false */
    mm->graph.node[0]->input[0] = "zero";
    mm->graph.node[0]->input[1] = "one";
    nb_model *m = load(mm, true);
    const nb_graph *g = m->graph;
    for (int i = 0; i < g->n_nodes; i++)
        assert_string_not_equal(g->nodes[i].op_type, "If");
    nb_exec *ex;
    nb_status st = {0};
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    const int64_t d1[] = {1};
    const char *names[] = {"x"};
    float v = 10.0f;
    nb_tensor *x = tensor_f(1, d1, &v);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    assert_true(*(float *)nb_exec_get(ex, "y")->data == 9.0f); /* else: 10 - 1 */
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
}

/* Where + Cast: y = Where(x > 0, x, 0.5 * x) cast to int32 (truncation toward zero). */
static void test_where_cast(void **state)
{
    (void)state;
    const int64_t d4[] = {4};
    const float half = 0.5f, zero = 0;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 1, d4);
    mb_output(mm, "y", 6, 1, d4);
    mb_init_floats(mm, "half", 0, NULL, &half, 1);
    mb_init_floats(mm, "zero", 0, NULL, &zero, 1);
    mb_node(mm, "Greater", (const char *[]){"x", "zero", NULL}, (const char *[]){"pos", NULL});
    mb_node(mm, "Mul", (const char *[]){"x", "half", NULL}, (const char *[]){"hx", NULL});
    mb_node(mm, "Where", (const char *[]){"pos", "x", "hx", NULL}, (const char *[]){"w", NULL});
    Onnx__NodeProto *c = mb_node(mm, "Cast", (const char *[]){"w", NULL}, (const char *[]){"y", NULL});
    mb_attr_int(c, "to", 6);
    nb_model *m = load(mm, true);
    nb_exec *ex;
    nb_status st = {0};
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    const float xv[4] = {3.7f, -3.0f, -5.0f, 0.0f};
    nb_tensor *x = tensor_f(1, d4, xv);
    const char *names[] = {"x"};
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    const nb_tensor *y = nb_exec_output(ex, 0);
    assert_int_equal(y->dtype, NB_INT32);
    /* 3.7 -> 3; -3 -> -1.5 -> -1; -5 -> -2.5 -> -2; 0 -> 0 * 0.5 = 0 */
    const int32_t expect[4] = {3, -1, -2, 0};
    assert_memory_equal(y->data, expect, sizeof expect);
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
}

/* Pools whose kernel is far larger than the input: SAME pads cover it, every window holds
 * the whole input x = [1, -2, 3, 0.5, -1]; max 3, mean (1 - 2 + 3 + 0.5 - 1) / 5 = 0.3 (pads
 * not counted). The kernel loops only over taps inside X, so 2^40 costs nothing. */
static void test_pool_huge_kernel(void **state)
{
    (void)state;
    const int64_t d5[] = {1, 1, 5}, big = (int64_t)1 << 40;
    const float xv[5] = {1, -2, 3, 0.5f, -1};
    const char *ops[2] = {"MaxPool", "AveragePool"};
    const float want[2] = {3.0f, 0.3f};
    for (int o = 0; o < 2; o++) {
        mb_model *mm = mb_new(13);
        mb_input(mm, "x", 1, 3, d5);
        mb_output(mm, "y", 1, 3, d5);
        Onnx__NodeProto *n = mb_node(mm, ops[o], (const char *[]){"x", NULL},
                                     (const char *[]){"y", NULL});
        mb_attr_ints(n, "kernel_shape", 1, &big);
        mb_attr_string(n, "auto_pad", "SAME_UPPER");
        nb_model *m = load(mm, false);
        nb_exec *ex;
        nb_status st = {0};
        assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
        nb_tensor *x = tensor_f(3, d5, xv);
        const char *names[] = {"x"};
        assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
        const float *y = nb_exec_output(ex, 0)->data;
        for (int i = 0; i < 5; i++)
            assert_float_equal(y[i], want[o], 1e-6);
        nb_tensor_free(x);
        nb_exec_free(ex);
        nb_model_free(m);
    }
}

/* Pool pads as large as the window, ConvTranspose output_padding not below the stride:
 * attribute errors (ONNX Runtime and PyTorch refuse both). */
static void test_window_attrs_checked(void **state)
{
    (void)state;
    const int64_t d5[] = {1, 1, 5}, k2 = 2, pads[2] = {2, 0}, s2 = 2, op2 = 2, w3[] = {1, 1, 2};
    const float wv[2] = {1, 1};
    nb_status st = {0};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 3, d5);
    mb_output(mm, "y", 1, -1, NULL);
    Onnx__NodeProto *n = mb_node(mm, "MaxPool", (const char *[]){"x", NULL},
                                 (const char *[]){"y", NULL});
    mb_attr_ints(n, "kernel_shape", 1, &k2);
    mb_attr_ints(n, "pads", 2, pads);
    assert_int_equal(load_err(mm, &st), NB_ERR_ATTR);
    assert_non_null(strstr(st.msg, "smaller than the kernel extent 2"));
    mm = mb_new(13);
    mb_input(mm, "x", 1, 3, d5);
    mb_output(mm, "y", 1, -1, NULL);
    mb_init_floats(mm, "w", 3, w3, wv, 2);
    n = mb_node(mm, "ConvTranspose", (const char *[]){"x", "w", NULL},
                (const char *[]){"y", NULL});
    mb_attr_ints(n, "strides", 1, &s2);
    mb_attr_ints(n, "output_padding", 1, &op2);
    assert_int_equal(load_err(mm, &st), NB_ERR_ATTR);
    assert_non_null(strstr(st.msg, "output_padding[0] = 2"));
}

/* Limits that keep a crafted model from running for hours or computing garbage. */
static void test_compute_and_type_limits(void **state)
{
    (void)state;
    nb_status st = {0};
    /* Conv 1-D: W [1, 1, 2^20], X [1, 1, 2^21]: (2^20 + 1) outputs x 2^20 taps is just
       over 2^40 multiply-accumulates: refused before any im2col buffer exists */
    const int64_t dx[] = {1, 1, ((int64_t)1 << 21)}, dw[] = {1, 1, ((int64_t)1 << 20)};
    float *wv = calloc((size_t)1 << 20, sizeof(float));
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y", 1, -1, NULL);
    mb_init_floats(mm, "w", 3, dw, wv, (size_t)1 << 20);
    mb_node(mm, "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    nb_model *m = load(mm, false);
    free(wv);
    nb_exec *ex;
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    nb_tensor *x;
    assert_int_equal(nb_tensor_new(NB_FLOAT, 3, dx, &x, &st), NB_OK);
    const char *names[] = {"x"};
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.msg, "1 x 1048577 x 1048576"));
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
    /* DynamicQuantizeLinear of a tensor holding -inf has no finite range */
    const int64_t d3[] = {3};
    mm = mb_new(13);
    mb_input(mm, "x", 1, 1, d3);
    mb_output(mm, "y", 2, 1, d3);
    mb_node(mm, "DynamicQuantizeLinear", (const char *[]){"x", NULL},
            (const char *[]){"y", "s", "z", NULL});
    m = load(mm, false);
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    const float xv[3] = {1.0f, -INFINITY, 2.0f};
    x = tensor_f(1, d3, xv);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_ERR_DATA);
    assert_non_null(strstr(st.msg, "Inf at element 1"));
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
    /* Not over INT64: ONNX types Not as bool only */
    mm = mb_new(13);
    mb_input(mm, "x", 7, 1, d3);
    mb_output(mm, "y", 7, 1, d3);
    mb_node(mm, "Not", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    assert_int_equal(load_err(mm, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "input 0 is INT64; Not takes BOOL"));
    /* a pool window over more than 2^56 positions */
    const int64_t d5[] = {1, 1, 5}, k57 = (int64_t)1 << 57;
    mm = mb_new(13);
    mb_input(mm, "x", 1, 3, d5);
    mb_output(mm, "y", 1, -1, NULL);
    Onnx__NodeProto *n = mb_node(mm, "MaxPool", (const char *[]){"x", NULL},
                                 (const char *[]){"y", NULL});
    mb_attr_ints(n, "kernel_shape", 1, &k57);
    mb_attr_string(n, "auto_pad", "SAME_UPPER");
    assert_int_equal(load_err(mm, &st), NB_ERR_ATTR);
    assert_non_null(strstr(st.msg, "2^56"));
}

static void test_unsupported_op_listed(void **state)
{
    (void)state;
    const int64_t d4[] = {4};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 1, d4);
    mb_output(mm, "y", 1, 1, d4);
    mb_node(mm, "FancyOp", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    nb_model *m = load(mm, true);
    nb_exec *ex = NULL;
    nb_status st = {0};
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.msg, "FancyOp"));
    assert_null(ex);
    nb_model_free(m);
}

/* Conv 1-D of one input channel, few output positions (the windows path: each window a
 * slice of X, zero-padded copies at the edges):
 *   x = [1 2 3 4 5], W0 = [1 0 -1], W1 = [1 1 1], B = [0.5, 0], pads 1 1, stride 2
 *   positions start at -1, 1, 3: windows [0 1 2], [2 3 4], [4 5 0]
 *   y0 = 0-2+.5 = -1.5, 2-4+.5 = -1.5, 4-0+.5 = 4.5;  y1 = 3, 9, 9
 * and the same with 20 taps of W0 = 1..20 over x = 1..20, no pads, stride 1 (one
 * window, the 8-wide sums and their tail): y = sum k^2 = 2870. */
static void test_conv_one_channel_windows(void **state)
{
    (void)state;
    const int64_t dx[3] = {1, 1, 5}, dw[3] = {2, 1, 3}, db[1] = {2}, dy[3] = {1, 2, 3};
    const float wv[6] = {1, 0, -1, 1, 1, 1}, bv[2] = {0.5f, 0};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y", 1, 3, dy);
    mb_init_floats(mm, "w", 3, dw, wv, 6);
    mb_init_floats(mm, "b", 1, db, bv, 2);
    Onnx__NodeProto *n = mb_node(mm, "Conv", (const char *[]){"x", "w", "b", NULL},
                                 (const char *[]){"y", NULL});
    const int64_t pads[2] = {1, 1}, strides[1] = {2};
    mb_attr_ints(n, "pads", 2, pads);
    mb_attr_ints(n, "strides", 1, strides);
    nb_model *m = load(mm, true);
    nb_exec *ex;
    nb_status st = {0};
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    const float xv[5] = {1, 2, 3, 4, 5};
    nb_tensor *x = tensor_f(3, dx, xv);
    const char *names[] = {"x"};
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    const float expect[6] = {-1.5f, -1.5f, 4.5f, 3, 9, 9};
    assert_memory_equal(nb_exec_output(ex, 0)->data, expect, sizeof expect);
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);

    const int64_t dx2[3] = {1, 1, 20}, dw2[3] = {1, 1, 20}, dy2[3] = {1, 1, 1};
    float w2[20], x2[20];
    for (int i = 0; i < 20; i++)
        w2[i] = x2[i] = (float)(i + 1);
    mm = mb_new(13);
    mb_input(mm, "x", 1, 3, dx2);
    mb_output(mm, "y", 1, 3, dy2);
    mb_init_floats(mm, "w", 3, dw2, w2, 20);
    mb_node(mm, "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    m = load(mm, true);
    assert_int_equal(nb_exec_create(m, NULL, &ex, &st), NB_OK);
    x = tensor_f(3, dx2, x2);
    assert_int_equal(nb_exec_run(ex, 1, names, &x, &st), NB_OK);
    assert_true(((const float *)nb_exec_output(ex, 0)->data)[0] == 2870.0f);
    nb_tensor_free(x);
    nb_exec_free(ex);
    nb_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_add_mul),
        cmocka_unit_test(test_conv_one_channel_windows),
        cmocka_unit_test(test_if_data_dependent),
        cmocka_unit_test(test_rnn_cube_h),
        cmocka_unit_test(test_if_constant_inlined),
        cmocka_unit_test(test_if_malformed),
        cmocka_unit_test(test_where_cast),
        cmocka_unit_test(test_unsupported_op_listed),
        cmocka_unit_test(test_pool_huge_kernel),
        cmocka_unit_test(test_window_attrs_checked),
        cmocka_unit_test(test_compute_and_type_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
