/* ONNX import: good models load as built; bad input gets the right error kind, a message
 * naming the file or tensor, and never a crash. Models are built in memory with the
 * protobuf-c bindings (model_builder.c); values checked are written next to each test. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "model_builder.h"
#include "nb/ref.h"


static const int64_t d23[] = {2, 3};

/* y = Relu(x): the smallest valid model. */
static mb_model *relu_model(int opset)
{
    mb_model *m = mb_new(opset);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    return m;
}

/* Loads bytes; returns the error code and leaves the message in st. */
static nb_err load_bytes(const uint8_t *b, size_t n, nb_status *st)
{
    nb_model *m = NULL;
    nb_err e = nb_model_load_mem(b, n, "test.onnx", tmpdir, NULL, &m, st);
    assert_true(e ? m == NULL : m != NULL);
    nb_model_free(m);
    return e;
}

static nb_err load_model(mb_model *mm, nb_status *st)
{
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_err e = load_bytes(b, n, st);
    free(b);
    mb_free(mm);
    return e;
}

static void test_valid_model_loads(void **state)
{
    (void)state;
    nb_status st = {0};
    size_t n;
    mb_model *mm = relu_model(13);
    uint8_t *b = mb_pack(mm, &n);
    nb_model *m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "relu.onnx", tmpdir, NULL, &m, &st), NB_OK);
    assert_int_equal(m->opset, 13);
    assert_int_equal(m->graph->n_inputs, 1);
    assert_int_equal(m->graph->n_outputs, 1);
    assert_int_equal(m->graph->n_nodes, 1);
    const nb_value *y = &m->graph->values[m->graph->outputs[0]];
    assert_int_equal(y->rank, 2);
    assert_int_equal(y->dims[0], 2);
    assert_int_equal(y->dims[1], 3);
    assert_int_equal(y->dtype, NB_FLOAT);
    nb_model_free(m);
    free(b);
    mb_free(mm);
}

static void test_empty_file(void **state)
{
    (void)state;
    nb_status st = {0};
    assert_int_equal(load_bytes((const uint8_t *)"", 0, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "test.onnx"));
    assert_non_null(strstr(st.msg, "empty"));
}

static void test_random_bytes(void **state)
{
    (void)state;
    uint8_t b[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof b; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (uint8_t)(x >> 16);
    }
    nb_status st = {0};
    assert_int_equal(load_bytes(b, sizeof b, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "test.onnx"));
}

static void test_text_file(void **state)
{
    (void)state;
    const char *text = "This is a README, not a model.\nSecond line.\n";
    nb_status st = {0};
    assert_int_equal(load_bytes((const uint8_t *)text, strlen(text), &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "not an ONNX model"));
}

static void test_truncated_model(void **state)
{
    (void)state;
    size_t n;
    mb_model *mm = relu_model(13);
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    /* a cut inside the graph message breaks the protobuf framing */
    assert_int_equal(load_bytes(b, n / 2, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "test.onnx"));
    /* every truncation point is rejected; a cut on a field boundary leaves a model that
       misses a required part (graph, outputs or opset) */
    for (size_t cut = 1; cut < n; cut++) {
        nb_err e = load_bytes(b, cut, &st);
        assert_true(e == NB_ERR_FORMAT || e == NB_ERR_OPSET || e == NB_ERR_GRAPH);
    }
    free(b);
    mb_free(mm);
}

static void test_opset_outside_range(void **state)
{
    (void)state;
    nb_status st = {0};
    /* opset 6 and before: refused with the converter hint; 7..10 are converted */
    assert_int_equal(load_model(relu_model(6), &st), NB_ERR_OPSET);
    assert_non_null(strstr(st.msg, "opset 6"));
    assert_non_null(strstr(st.msg, "version_converter"));
    assert_int_equal(load_model(relu_model(7), &st), NB_OK);
    assert_int_equal(load_model(relu_model(10), &st), NB_OK);
    assert_int_equal(load_model(relu_model(19), &st), NB_ERR_OPSET);
    assert_non_null(strstr(st.msg, "opset 19"));
    assert_int_equal(load_model(relu_model(11), &st), NB_OK);
    assert_int_equal(load_model(relu_model(18), &st), NB_OK);
}

/* An opset-9 TopK (k attribute, TopK-1) is imported as opset 11's (K an INT64 [1] input,
 * ONNX Changelog TopK-10), the model's opset 11, the file's 9, and one warning says so; a
 * BatchNormalization-7 with spatial=0 is refused naming the node and the opset. */
static void test_legacy_opset_converted(void **state)
{
    (void)state;
    static const int64_t d24[2] = {2, 4}, d22[2] = {2, 2};
    mb_model *mm = mb_new(9);
    mb_input(mm, "x", 1, 2, d24);
    mb_output(mm, "v", 1, 2, d22);
    Onnx__NodeProto *n = mb_node(mm, "TopK", (const char *[]){"x", NULL},
                                 (const char *[]){"v", "i", NULL});
    mb_attr_int(n, "k", 2);
    size_t len;
    uint8_t *b = mb_pack(mm, &len);
    mb_free(mm);
    nb_model *m = NULL;
    nb_status st = {0};
    assert_int_equal(nb_model_load_mem(b, len, "t9.onnx", tmpdir, NULL, &m, &st), NB_OK);
    free(b);
    assert_int_equal(m->opset, 11);
    assert_int_equal(m->opset_file, 9);
    const nb_graph *g = m->graph;
    assert_int_equal(g->n_nodes, 1);
    const nb_node *t = &g->nodes[0];
    assert_string_equal(t->op_type, "TopK");
    assert_int_equal(t->n_in, 2);
    assert_int_equal(t->n_attr, 0);
    const nb_value *k = &g->values[t->in[1]];
    assert_string_equal(k->name, "TopK_0/k");
    assert_non_null(k->const_val);
    assert_int_equal(k->const_val->numel, 1);
    assert_int_equal(nb_tensor_get_i64(k->const_val, 0), 2);
    assert_int_equal(g->values[t->out[0]].dims[1], 2); /* inferred from K */
    bool said = false;
    for (int i = 0; i < m->n_warnings; i++)
        said |= strstr(m->warnings[i],
                       "opset 9 model imported as opset 11, converted: 1 TopK") != NULL;
    assert_true(said);
    nb_model_free(m);

    static const int64_t d3[1] = {3}, d23b[2] = {2, 3};
    mm = mb_new(7);
    mb_input(mm, "x", 1, 2, d23b);
    mb_output(mm, "y", 1, 2, d23b);
    static const float one[3] = {1, 1, 1};
    const char *names[4] = {"s", "b", "m", "v"};
    for (int i = 0; i < 4; i++)
        mb_init_floats(mm, names[i], 1, d3, one, 3);
    n = mb_node(mm, "BatchNormalization", (const char *[]){"x", "s", "b", "m", "v", NULL},
                (const char *[]){"y", NULL});
    mb_attr_int(n, "spatial", 0);
    assert_int_equal(load_model(mm, &st), NB_ERR_UNSUPPORTED);
    assert_non_null(
        strstr(st.msg, "node 'BatchNormalization_0' (BatchNormalization, opset 7): spatial=0"));
    assert_null(strchr(st.msg, '\n'));
}

static void test_cycle(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_node(m, "Add", (const char *[]){"x", "b", NULL}, (const char *[]){"a", NULL});
    mb_node(m, "Relu", (const char *[]){"a", NULL}, (const char *[]){"b", NULL});
    mb_node(m, "Relu", (const char *[]){"b", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "cycle"));
}

static void test_input_not_produced(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_node(m, "Add", (const char *[]){"x", "ghost", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "'ghost'"));
}

static void test_negative_dim(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t bad[] = {2, -3};
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_init_floats(m, "w", 2, bad, NULL, 0);
    mb_node(m, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_SHAPE);
    assert_non_null(strstr(st.msg, "'w'"));
}

static void test_overflowing_dims(void **state)
{
    (void)state;
    /* 2^31 x 2^31 floats = 2^64 bytes: rejected before any allocation */
    const int64_t huge[] = {(int64_t)1 << 31, (int64_t)1 << 31};
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, huge);
    mb_output(m, "y", 1, 2, huge);
    mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_SHAPE);
    m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_init_raw(m, "w", 2, huge, NULL, 16);
    mb_node(m, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    assert_int_equal(load_model(m, &st), NB_ERR_SHAPE);
    assert_non_null(strstr(st.msg, "'w'"));
}

static void test_raw_data_short(void **state)
{
    (void)state;
    const float v[6] = {1, 2, 3, 4, 5, 6};
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_init_raw(m, "w", 2, d23, v, 20); /* 5 floats for a 2x3 tensor */
    mb_node(m, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_DATA);
    assert_non_null(strstr(st.msg, "raw_data is 20 bytes"));
    assert_non_null(strstr(st.msg, "24"));
}

/* The same 2x3 initializer in raw_data and in float_data loads to the same values; a graph
 * input that is also an initializer is a constant, not an input. */
static void test_initializer_forms(void **state)
{
    (void)state;
    const float v[6] = {1.5f, -2, 3, 4, 5, 6.25f};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d23);
    mb_input(mm, "w_raw", 1, 2, d23); /* also an initializer below */
    mb_output(mm, "y", 1, 2, d23);
    mb_init_raw(mm, "w_raw", 2, d23, v, sizeof v);
    mb_init_floats(mm, "w_typed", 2, d23, v, 6);
    mb_node(mm, "Add", (const char *[]){"x", "w_raw", NULL}, (const char *[]){"s", NULL});
    mb_node(mm, "Add", (const char *[]){"s", "w_typed", NULL}, (const char *[]){"y", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, NULL, &m, &st), NB_OK);
    assert_int_equal(m->graph->n_inputs, 1);
    const nb_value *a = &m->graph->values[nb_graph_find(m->graph, "w_raw")];
    const nb_value *c = &m->graph->values[nb_graph_find(m->graph, "w_typed")];
    assert_non_null(a->const_val);
    assert_non_null(c->const_val);
    assert_memory_equal(a->const_val->data, v, sizeof v);
    assert_memory_equal(c->const_val->data, v, sizeof v);
    nb_model_free(m);
    free(b);
    mb_free(mm);
}

static void test_external_data(void **state)
{
    (void)state;
    char path[512], data[512];
    const float v[6] = {1, 2, 3, 4, 5, 6};
    /* inside the folder: loads */
    snprintf(data, sizeof data, "%s/w.bin", tmpdir);
    FILE *f = fopen(data, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(v, 1, sizeof v, f), sizeof v);
    fclose(f);
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d23);
    mb_output(mm, "y", 1, 2, d23);
    mb_init_external(mm, "w", 2, d23, "w.bin");
    mb_node(mm, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    snprintf(path, sizeof path, "%s/ext.onnx", tmpdir);
    assert_int_equal(mb_write(mm, path), 0);
    mb_free(mm);
    nb_status st = {0};
    nb_model *m = NULL;
    assert_int_equal(nb_model_load(path, NULL, &m, &st), NB_OK);
    assert_memory_equal(m->graph->values[nb_graph_find(m->graph, "w")].const_val->data, v,
                        sizeof v);
    nb_model_free(m);
    /* escaping the folder: rejected, relative or absolute */
    const char *bad[] = {"../w.bin", "/etc/passwd", "sub/../../w.bin"};
    for (int i = 0; i < 3; i++) {
        mm = mb_new(13);
        mb_input(mm, "x", 1, 2, d23);
        mb_output(mm, "y", 1, 2, d23);
        mb_init_external(mm, "w", 2, d23, bad[i]);
        mb_node(mm, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
        char sub[512];
        snprintf(sub, sizeof sub, "%s/inner", tmpdir);
        mkdir(sub, 0777);
        snprintf(path, sizeof path, "%s/inner/ext.onnx", tmpdir);
        /* ../w.bin exists (it is tmpdir/w.bin) but is outside tmpdir/inner */
        assert_int_equal(mb_write(mm, path), 0);
        mb_free(mm);
        m = NULL;
        assert_int_equal(nb_model_load(path, NULL, &m, &st), NB_ERR_EXTERNAL);
        assert_null(m);
        assert_non_null(strstr(st.msg, "'w'"));
    }
}

static void test_input_shape_override(void **state)
{
    (void)state;
    const int64_t dyn[] = {-1, 3};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dyn);
    mb_output(mm, "y", 1, 2, dyn);
    mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts o = {.input_shape = "x:4,3"};
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, &o, &m, &st), NB_OK);
    const nb_value *y = &m->graph->values[m->graph->outputs[0]];
    assert_int_equal(y->dims[0], 4); /* inferred through Relu */
    assert_int_equal(y->dims[1], 3);
    nb_model_free(m);
    const char *bad[] = {"x:4,5", "x:4", "z:1,3", "x:4,,3", "x:a,3", "x4,3", "x:1~4,3"};
    for (int i = 0; i < 7; i++) {
        nb_load_opts ob = {.input_shape = bad[i]};
        m = NULL;
        assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, &ob, &m, &st), NB_ERR_ARG);
        assert_non_null(strstr(st.msg, "--input_shape"));
    }
    free(b);
    mb_free(mm);
}

/* Fixing the symbolic dim "N" of x fixes the "N" of y too (both declared [N,3]). */
static void test_input_shape_symbols(void **state)
{
    (void)state;
    const int64_t dyn[] = {-1, 3};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dyn);
    mb_input(mm, "y", 1, 2, dyn);
    mb_output(mm, "z", 1, 2, dyn);
    mb_node(mm, "Add", (const char *[]){"x", "y", NULL}, (const char *[]){"z", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts o = {.input_shape = "x:4,3"};
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, &o, &m, &st), NB_OK);
    assert_int_equal(m->graph->values[nb_graph_find(m->graph, "y")].dims[0], 4);
    assert_int_equal(m->graph->values[nb_graph_find(m->graph, "z")].dims[0], 4);
    nb_model_free(m);
    nb_load_opts bad = {.input_shape = "x:4,3;y:5,3"};
    m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, &bad, &m, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "'N'"));
    free(b);
    mb_free(mm);
}

static void test_parse_input_shape(void **state)
{
    (void)state;
    nb_shape_override *o;
    int n;
    nb_status st = {0};
    assert_int_equal(nb_parse_input_shape("x1:1,16,96;in:put:2,3", &o, &n, &st), NB_OK);
    assert_int_equal(n, 2);
    assert_string_equal(o[0].name, "x1");
    assert_int_equal(o[0].rank, 3);
    assert_int_equal(o[0].dims[2], 96);
    assert_string_equal(o[1].name, "in:put"); /* the last ':' separates the dims */
    assert_int_equal(o[1].dims[1], 3);
    nb_shape_overrides_free(o, n);
    assert_int_equal(nb_parse_input_shape("x:1,2;x:3", &o, &n, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "twice"));
    assert_int_equal(nb_parse_input_shape(":1,2", &o, &n, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "\":1,2\""));
}

static void test_constant_node_and_unused_output(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d23);
    mb_output(mm, "y", 1, 2, d23);
    Onnx__NodeProto *c = mb_node(mm, "Constant", NULL, (const char *[]){"k", NULL});
    mb_attr_float(c, "value_float", 2.5f);
    mb_node(mm, "Mul", (const char *[]){"x", "k", NULL}, (const char *[]){"y", NULL});
    mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"dead", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, NULL, &m, &st), NB_OK);
    const nb_value *k = &m->graph->values[nb_graph_find(m->graph, "k")];
    assert_non_null(k->const_val);
    assert_true(*(float *)k->const_val->data == 2.5f);
    assert_int_equal(m->graph->n_nodes, 2); /* the Constant is a value, not a node */
    assert_int_equal(m->n_warnings, 1);
    assert_non_null(strstr(m->warnings[0], "'dead'"));
    nb_model_free(m);
    free(b);
    mb_free(mm);
}

static void test_other_domain_rejected(void **state)
{
    (void)state;
    mb_model *mm = relu_model(13);
    mm->graph.node[0]->domain = "com.microsoft";
    nb_status st = {0};
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    assert_int_equal(load_bytes(b, n, &st), NB_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.msg, "com.microsoft"));
    free(b);
    mb_free(mm);
}

/* Prepends a length-delimited field (tag byte, varint length) in front of the len bytes
 * that end at buf + end; returns the new start. */
static size_t wrap_field(uint8_t *buf, size_t start, size_t end, uint8_t tag)
{
    uint64_t len = end - start;
    uint8_t v[10];
    int nv = 0;
    do {
        v[nv++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
        len >>= 7;
    } while (len);
    start -= (size_t)nv;
    memcpy(buf + start, v, (size_t)nv);
    buf[--start] = tag;
    return start;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    /* ModelProto.graph(7) > GraphProto.input(11) > ValueInfoProto.type(2) > then 50000 x
       (TypeProto.sequence_type(4) > Sequence.elem_type(1)): decoding this recursively would
       overflow the stack; it is refused before decoding. */
    size_t cap = 2000000, end = cap, start = cap;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    for (int i = 0; i < 50000; i++) {
        start = wrap_field(buf, start, end, 0x0a);
        start = wrap_field(buf, start, end, 0x22);
    }
    start = wrap_field(buf, start, end, 0x12);
    start = wrap_field(buf, start, end, 0x5a);
    start = wrap_field(buf, start, end, 0x3a);
    nb_status st = {0};
    assert_int_equal(load_bytes(buf + start, end - start, &st), NB_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.msg, "nested more than"));
    free(buf);
}

static void test_node_outputs_checked(void **state)
{
    (void)state;
    nb_status st = {0};
    /* Relu has one output: a second one is a broken graph, not a value to compute */
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", "extra", NULL});
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "'extra'"));
    /* a node without outputs */
    m = relu_model(13);
    mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){NULL});
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "no outputs"));
}

static void test_control_chars_in_names(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    mb_node(m, "Add", (const char *[]){"x", "gh\nost\t", NULL}, (const char *[]){"y", NULL});
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "'gh?ost?'")); /* one line whatever the names hold */
}

static void test_attribute_types(void **state)
{
    (void)state;
    nb_status st = {0};
    /* Softmax axis given as FLOAT: refused, not read as the default axis */
    mb_model *m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "y", 1, 2, d23);
    Onnx__NodeProto *n = mb_node(m, "Softmax", (const char *[]){"x", NULL},
                                 (const char *[]){"y", NULL});
    mb_attr_float(n, "axis", 0.0f);
    assert_int_equal(load_model(m, &st), NB_ERR_ATTR);
    assert_non_null(strstr(st.msg, "'axis' must be INT, the model gives FLOAT"));
    /* Split at opset 13 takes split as input 1: the attribute form is refused */
    const int64_t sp[2] = {1, 1}, d13[] = {1, 3};
    m = mb_new(13);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "a", 1, 2, d13);
    mb_output(m, "b", 1, 2, d13);
    n = mb_node(m, "Split", (const char *[]){"x", NULL}, (const char *[]){"a", "b", NULL});
    mb_attr_int(n, "axis", 0);
    mb_attr_ints(n, "split", 2, sp);
    assert_int_equal(load_model(m, &st), NB_ERR_ATTR);
    assert_non_null(strstr(st.msg, "at opset 13 it is input 1"));
    /* the same at opset 11 is the attribute form: it loads */
    m = mb_new(11);
    mb_input(m, "x", 1, 2, d23);
    mb_output(m, "a", 1, 2, d13);
    mb_output(m, "b", 1, 2, d13);
    n = mb_node(m, "Split", (const char *[]){"x", NULL}, (const char *[]){"a", "b", NULL});
    mb_attr_int(n, "axis", 0);
    mb_attr_ints(n, "split", 2, sp);
    assert_int_equal(load_model(m, &st), NB_OK);
}

static void test_input_without_type(void **state)
{
    (void)state;
    mb_model *m = relu_model(13);
    m->graph.input[0]->type = NULL;
    nb_status st = {0};
    assert_int_equal(load_model(m, &st), NB_ERR_GRAPH);
    assert_non_null(strstr(st.msg, "graph input 'x' has no type"));
}

static void test_declared_output_contradicts(void **state)
{
    (void)state;
    const int64_t d24[] = {2, 4};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d23);
    mb_output(mm, "y", 1, 2, d24); /* Relu of [2,3] is [2,3] */
    mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_status st = {0};
    nb_model *m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, NULL, &m, &st), NB_OK);
    assert_int_equal(m->n_warnings, 1);
    assert_non_null(strstr(m->warnings[0], "'y' is declared [2,4] but computes to [2,3]"));
    const nb_value *y = &m->graph->values[m->graph->outputs[0]];
    assert_int_equal(y->dims[1], 3);
    nb_model_free(m);
    free(b);
    mb_free(mm);
}

/* weights_in_place: a large raw_data initializer is taken over, not copied; its values are
 * the same, and freeing the model frees it once (ASan checks the pairing). */
static void test_weights_in_place(void **state)
{
    (void)state;
    const int64_t d[1] = {2048};
    float *v = malloc(sizeof(float) * 2048);
    for (int i = 0; i < 2048; i++)
        v[i] = (float)i * 0.5f;
    mb_model *mm = mb_new(13);
    const int64_t dx[1] = {2048};
    mb_input(mm, "x", 1, 1, dx);
    mb_output(mm, "y", 1, 1, dx);
    mb_init_raw(mm, "w", 1, d, v, sizeof(float) * 2048);
    mb_node(mm, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    size_t n;
    uint8_t *b = mb_pack(mm, &n);
    nb_load_opts lo = {.weights_in_place = true};
    nb_status st = {0};
    nb_model *m = NULL;
    assert_int_equal(nb_model_load_mem(b, n, "t.onnx", tmpdir, &lo, &m, &st), NB_OK);
    const nb_tensor *w = m->graph->values[nb_graph_find(m->graph, "w")].const_val;
    assert_non_null(w);
    assert_memory_equal(w->data, v, sizeof(float) * 2048);
    nb_model_free(m);
    free(b);
    free(v);
    mb_free(mm);
}

/* Large raw_data lifted out of the protobuf decode (nb_model_load): the values are the
 * file's, copied once; with weights_deferred, those that only weight inputs read stay in the
 * file until folding or nb_tensor_materialize needs them. Model: Conv weight Wc (4608 bytes),
 * T (8192 bytes) read by Reshape, an unnamed Constant K (4800 bytes) read by MatMul, A
 * (4400 bytes) folded by Add(A, A) into s = 2A. */
static void test_weights_lifted(void **state)
{
    (void)state;
    float *wc = malloc(sizeof(float) * 1152), *tv = malloc(sizeof(float) * 2048),
          *kv = malloc(sizeof(float) * 1200), *av = malloc(sizeof(float) * 1100);
    for (int i = 0; i < 1152; i++)
        wc[i] = (float)i * 0.25f - 7.0f;
    for (int i = 0; i < 2048; i++)
        tv[i] = (float)(i % 97) - 0.5f;
    for (int i = 0; i < 1200; i++)
        kv[i] = 1.0f / (float)(i + 1);
    for (int i = 0; i < 1100; i++)
        av[i] = (float)i * 3.0f;
    mb_model *mm = mb_new(13);
    const int64_t dx[4] = {1, 4, 8, 8}, dw[4] = {32, 4, 3, 3}, dt[1] = {2048}, dk[2] = {6, 200},
                  da[1] = {1100}, dsh[1] = {2}, shv[2] = {64, 32}, dm[4] = {1, 32, 6, 200},
                  dr[2] = {64, 32};
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "m", 1, 4, dm);
    mb_output(mm, "r", 1, 2, dr);
    mb_output(mm, "s", 1, 1, da);
    mb_init_raw(mm, "Wc", 4, dw, wc, sizeof(float) * 1152);
    mb_init_raw(mm, "T", 1, dt, tv, sizeof(float) * 2048);
    mb_init_raw(mm, "A", 1, da, av, sizeof(float) * 1100);
    mb_init_ints64(mm, "shape", 1, dsh, shv, 2);
    mb_constant_raw(mm, "K", NULL, 2, dk, kv, sizeof(float) * 1200);
    mb_node(mm, "Conv", (const char *[]){"x", "Wc", NULL}, (const char *[]){"c", NULL});
    mb_node(mm, "MatMul", (const char *[]){"c", "K", NULL}, (const char *[]){"m", NULL});
    mb_node(mm, "Reshape", (const char *[]){"T", "shape", NULL}, (const char *[]){"r", NULL});
    mb_node(mm, "Add", (const char *[]){"A", "A", NULL}, (const char *[]){"s", NULL});
    char path[600];
    snprintf(path, sizeof path, "%s/lifted.onnx", tmpdir);
    assert_int_equal(mb_write(mm, path), 0);
    nb_status st = {0};
    for (int deferred = 0; deferred < 2; deferred++) {
        nb_load_opts lo = {.weights_deferred = deferred != 0};
        nb_model *m = NULL;
        assert_int_equal(nb_model_load(path, &lo, &m, &st), NB_OK);
        nb_graph *g = m->graph;
        nb_tensor *w = g->values[nb_graph_find(g, "Wc")].const_val;
        nb_tensor *k = g->values[nb_graph_find(g, "K")].const_val;
        nb_tensor *t = g->values[nb_graph_find(g, "T")].const_val;
        nb_tensor *a = g->values[nb_graph_find(g, "A")].const_val;
        assert_non_null(w);
        assert_non_null(k);
        /* only weight inputs read Wc, K and A: deferred in a shapes-only load */
        assert_int_equal(nb_tensor_is_deferred(w), deferred);
        assert_int_equal(nb_tensor_is_deferred(k), deferred);
        assert_int_equal(nb_tensor_is_deferred(a), deferred);
        assert_false(nb_tensor_is_deferred(t)); /* Reshape reads it */
        assert_memory_equal(t->data, tv, sizeof(float) * 2048);
        assert_int_equal(w->rank, 4);
        assert_int_equal(w->dims[0], 32);
        assert_int_equal(k->dims[1], 200);
        /* element reads go to the file while deferred */
        assert_true(nb_tensor_get_f64(w, 7) == (double)wc[7]);
        assert_true(nb_tensor_get_f64(k, 1199) == (double)kv[1199]);
        /* folding reads A: s = A + A */
        assert_int_equal(nb_ref_fold(m, &st), NB_OK);
        const nb_tensor *sv = g->values[nb_graph_find(g, "s")].const_val;
        assert_non_null(sv);
        assert_false(nb_tensor_is_deferred(a));
        for (int i = 0; i < 1100; i += 99)
            assert_true(((const float *)sv->data)[i] == av[i] * 2.0f);
        assert_int_equal(nb_tensor_materialize(w, &st), NB_OK);
        assert_int_equal(nb_tensor_materialize(k, &st), NB_OK);
        assert_false(nb_tensor_is_deferred(w));
        assert_int_equal((uintptr_t)w->data % 64, 0);
        assert_memory_equal(w->data, wc, sizeof(float) * 1152);
        assert_memory_equal(k->data, kv, sizeof(float) * 1200);
        nb_model_free(m);
    }
    /* tensors of If branches are lifted too; Identity reads values: never deferred */
    mb_model *br = mb_new(13);
    const int64_t d100[1] = {100}, d1[1] = {1};
    mb_input(br, "cond", 9, 0, d1);
    mb_output(br, "y", 1, 1, d100);
    Onnx__GraphProto *then_g = mb_graph("then_g"), *else_g = mb_graph("else_g");
    mb_ginit_raw(then_g, "tw", 1, d100, tv, 400);
    mb_gnode(then_g, "Identity", (const char *[]){"tw", NULL}, (const char *[]){"ty", NULL});
    mb_goutput(then_g, "ty", 1, 1, d100);
    const int64_t dm11[2] = {100, 11}, d11[1] = {11};
    mb_ginit_raw(then_g, "tm", 2, dm11, tv, 4400); /* a weight: deferred in its branch */
    mb_gnode(then_g, "MatMul", (const char *[]){"tw", "tm", NULL}, (const char *[]){"tz", NULL});
    mb_goutput(then_g, "tz", 1, 1, d11);
    mb_ginit_raw(else_g, "ew", 1, d100, tv + 100, 400);
    mb_gnode(else_g, "Identity", (const char *[]){"ew", NULL}, (const char *[]){"ey", NULL});
    mb_goutput(else_g, "ey", 1, 1, d100);
    mb_gnode(else_g, "Identity", (const char *[]){"ey", NULL}, (const char *[]){"ez", NULL});
    mb_goutput(else_g, "ez", 1, 1, d11);
    mb_output(br, "z", 1, 1, d11);
    Onnx__NodeProto *ifn = mb_node(br, "If", (const char *[]){"cond", NULL},
                                   (const char *[]){"y", "z", NULL});
    mb_attr_graph(ifn, "then_branch", then_g);
    mb_attr_graph(ifn, "else_branch", else_g);
    snprintf(path, sizeof path, "%s/branches.onnx", tmpdir);
    assert_int_equal(mb_write(br, path), 0);
    for (int deferred = 0; deferred < 2; deferred++) {
        nb_load_opts lo = {.weights_deferred = deferred != 0};
        nb_model *m = NULL;
        assert_int_equal(nb_model_load(path, &lo, &m, &st), NB_OK);
        const nb_node *n = &m->graph->nodes[0];
        assert_string_equal(n->op_type, "If");
        for (int a = 0; a < n->n_attr; a++) {
            const nb_graph *sg = n->attrs[a].g;
            bool then = !strcmp(n->attrs[a].name, "then_branch");
            const nb_tensor *w = sg->values[nb_graph_find(sg, then ? "tw" : "ew")].const_val;
            assert_non_null(w);
            assert_false(nb_tensor_is_deferred(w));
            assert_memory_equal(w->data, tv + (then ? 0 : 100), 400);
            if (then) {
                nb_tensor *tm = sg->values[nb_graph_find(sg, "tm")].const_val;
                assert_int_equal(nb_tensor_is_deferred(tm), deferred);
                assert_true(nb_tensor_get_f64(tm, 1099) == (double)tv[1099]);
                assert_int_equal(nb_tensor_materialize(tm, &st), NB_OK);
                assert_memory_equal(tm->data, tv, 4400);
            }
        }
        nb_model_free(m);
    }
    /* the file truncated under a shapes-only load's deferred weights: reading them is no
       SIGBUS but zeros, and the model says its file changed */
    {
        nb_load_opts lo = {.weights_deferred = true};
        nb_model *m = NULL;
        snprintf(path, sizeof path, "%s/lifted.onnx", tmpdir);
        assert_int_equal(nb_model_load(path, &lo, &m, &st), NB_OK);
        assert_false(nb_model_file_changed(m));
        assert_int_equal(truncate(path, 64), 0);
        nb_tensor *w = m->graph->values[nb_graph_find(m->graph, "Wc")].const_val;
        assert_true(nb_tensor_is_deferred(w));
        assert_true(nb_tensor_get_f64(w, 1151) == 0.0);
        assert_int_equal(nb_tensor_materialize(w, &st), NB_OK);
        assert_true(((const float *)w->data)[1151] == 0.0f);
        assert_true(nb_model_file_changed(m));
        nb_model_free(m);
    }
    /* a lifted payload shorter than its dims: the same error as without lifting */
    mb_model *bad = mb_new(13);
    const int64_t d8[1] = {2048};
    mb_input(bad, "x", 1, 1, d8);
    mb_output(bad, "y", 1, 1, d8);
    mb_init_raw(bad, "w", 1, d8, tv, 4096);
    mb_node(bad, "Add", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    snprintf(path, sizeof path, "%s/short.onnx", tmpdir);
    assert_int_equal(mb_write(bad, path), 0);
    for (int deferred = 0; deferred < 2; deferred++) {
        nb_load_opts lo = {.weights_deferred = deferred != 0};
        nb_model *m = NULL;
        nb_status s2 = {0};
        assert_int_equal(nb_model_load(path, &lo, &m, &s2), NB_ERR_DATA);
        assert_non_null(strstr(s2.msg, "raw_data is 4096 bytes, but FLOAT dims need 8192"));
        assert_null(m);
    }
    free(wc);
    free(tv);
    free(kv);
    free(av);
    mb_free(mm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_model_loads),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_text_file),
        cmocka_unit_test(test_truncated_model),
        cmocka_unit_test(test_opset_outside_range),
        cmocka_unit_test(test_legacy_opset_converted),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_input_not_produced),
        cmocka_unit_test(test_negative_dim),
        cmocka_unit_test(test_overflowing_dims),
        cmocka_unit_test(test_raw_data_short),
        cmocka_unit_test(test_initializer_forms),
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_input_shape_override),
        cmocka_unit_test(test_input_shape_symbols),
        cmocka_unit_test(test_parse_input_shape),
        cmocka_unit_test(test_constant_node_and_unused_output),
        cmocka_unit_test(test_other_domain_rejected),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_node_outputs_checked),
        cmocka_unit_test(test_control_chars_in_names),
        cmocka_unit_test(test_attribute_types),
        cmocka_unit_test(test_declared_output_contradicts),
        cmocka_unit_test(test_input_without_type),
        cmocka_unit_test(test_weights_in_place),
        cmocka_unit_test(test_weights_lifted),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
