/* The exeom writer and parser (engine/compile, share/doc/exeom.md): a small quantized Conv
 * written, parsed back and compared with the lowering, its packed weights and parameters
 * checked by hand, and corrupt files refused. */
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

#include "dbg.pb-c.h"
#include "model_builder.h"
#include "nb/exeom.h"
#include "nb/sim.h"
#include "nb/ref.h"
#include "lowering_helpers.h"
#include "recipe.h"
#include "tmpdir.h"

static nb_op_table ops;

static int setup(void **state)
{
    nb_status st = {0};
    if (nb_op_table_load(nb_op_table_default_path(), &ops, &st))
        return -1;
    return setup_dir(state);
}

static int teardown(void **state)
{
    nb_op_table_free(&ops);
    return teardown_dir(state);
}

/* y = LeakyRelu(Conv(x, W)), x [1,3,4,4], W [2,3,1,1], as the float form the compiler
 * lowers (the LeakyRelu fused into the Conv's AscendDequant); the layer's data as the deploy model gives it: int8 W [[1, -2, 3], [4, 5, -6]],
 * bias [7, -8], deq_scale fp32 bits of 0.5 and 0.25, AscendQuant scale 8 offset -3. */
static nb_model *conv_model(void)
{
    const int64_t dx[] = {1, 3, 4, 4}, dw[] = {2, 3, 1, 1}, dy[] = {1, 2, 4, 4};
    const float w[6] = {1, -2, 3, 4, 5, -6};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_init_floats(mm, "W", 4, dw, w, 6);
    mb_node(mm, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL})->name =
        "conv";
    Onnx__NodeProto *lr = mb_node(mm, "LeakyRelu", (const char *[]){"c", NULL},
                                  (const char *[]){"y", NULL});
    lr->name = "lrelu";
    mb_attr_float(lr, "alpha", 0.125f);
    return load_folded(mm);
}

static int8_t w_q[6] = {1, -2, 3, 4, 5, -6};
static int32_t bias[2] = {7, -8};
static uint64_t deq[2] = {0x3F000000u, 0x3E800000u};

static nb_npu_layer conv_layer(void)
{
    nb_npu_layer l = {.node = "conv", .quant_scale = 8, .quant_offset = -3, .act_bits = 8,
                      .w_rank = 4, .w_dims = {2, 3, 1, 1}, .w_numel = 6, .w = w_q,
                      .channels = 2, .bias = bias, .deq_scale = deq};
    return l;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    uint8_t *buf = NULL;
    nb_status st = {0};
    if (nb_read_file(path, &buf, len, &st))
        fail_msg("%s", st.msg);
    return buf;
}

static void write_conv(const char *path, nb_model **m, nb_estimate *e)
{
    *m = conv_model();
    nb_status st = {0};
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(*m, &ops, &o, e, &st))
        fail_msg("%s", st.msg);
    nb_npu_layer l = conv_layer();
    int64_t bytes = 0;
    if (nb_exeom_write(path, *m, e, &l, 1, "Ascend035A", &bytes, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(bytes, e->exeom_bytes);
}

/* Written, parsed back: every descriptor as the lowering has it, the size the estimate's. */
static void test_round_trip(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/conv.exeom", tmpdir);
    nb_model *m;
    nb_estimate e;
    write_conv(path, &m, &e);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    assert_int_equal((int64_t)len, e.exeom_bytes);
    nb_exeom x;
    nb_status st = {0};
    if (nb_exeom_parse(buf, len, &x, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(x.soc, 1);
    assert_int_equal(x.n_tensors, e.g.n_t);
    assert_int_equal(x.n_tasks, e.g.n_k);
    assert_int_equal(x.n_inputs, 1);
    assert_int_equal(x.n_outputs, 1);
    assert_int_equal(x.arena_bytes, e.arena.arena);
    assert_int_equal(x.weight_bytes, e.weight_bytes);
    for (int i = 0; i < e.g.n_t; i++) {
        const nb_npu_tensor *t = &e.g.t[i];
        assert_int_equal(x.t[i].format, t->format);
        assert_int_equal(x.t[i].rank, t->rank);
        assert_int_equal(x.t[i].bytes, t->bytes);
        for (int d = 0; d < t->rank; d++)
            assert_int_equal(x.t[i].dims[d], t->dims[d]);
        if (t->role == NB_T_ACTIVATION && e.arena_offset[i] >= 0)
            assert_int_equal(x.t[i].place, e.arena_offset[i]);
    }
    int conv = -1, quant = -1, lrelu = -1;
    for (int k = 0; k < e.g.n_k; k++) {
        assert_int_equal(x.k[k].n_in, e.g.k[k].n_in);
        assert_int_equal(x.k[k].kernel, nb_exeom_kernel_id(e.g.k[k].op_type));
        for (int j = 0; j < e.g.k[k].n_in; j++)
            assert_int_equal(x.k[k].in[j], e.g.k[k].in[j]);
        if (!strcmp(e.g.k[k].op_type, "Conv"))
            conv = k;
        else if (!strcmp(e.g.k[k].op_type, "AscendQuant"))
            quant = k;
        else if (!strcmp(e.g.k[k].op_type, "AscendDequant"))
            lrelu = k; /* the LeakyRelu runs inside it */
    }
    assert_true(conv >= 0 && quant >= 0 && lrelu >= 0);
    /* AscendQuant: f32 scale 8 (0x41000000), f32 offset -3 (0xC0400000), dst_bits 8 */
    const uint8_t *p = x.k[quant].params;
    assert_int_equal(le32(p), 0x41000000);
    assert_int_equal(le32(p + 4), 0xC0400000u);
    assert_int_equal(p[8], 8);
    /* Conv 1x1: kh kw sh sw 1, pads 0, dilations 1, group 1 (u16 each) */
    p = x.k[conv].params;
    static const uint8_t conv_p[24] = {1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                       1, 0, 1, 0, 1, 0, 0, 0};
    assert_memory_equal(p, conv_p, 24);
    /* the AscendDequant runs the LeakyRelu (fused activation 2), alpha 0.125 = 0x3E000000 */
    p = x.k[lrelu].params;
    assert_int_equal(p[0], 2);
    assert_int_equal(le32(p + 4), 0x3E000000);
    for (int k = 0; k < e.g.n_k; k++)
        assert_string_not_equal(e.g.k[k].op_type, "LeakyRelu");
    /* the Conv's weights: FRACTAL_Z of [2, 3, 1, 1] int8, (1, 1, 16, 32) = 512 bytes, W[co][ci]
       at co * 32 + ci; then its bias [7, -8] padded to 16 int32, then deq_scale */
    const nb_exeom_tensor *wt = &x.t[x.k[conv].in[1]], *bt = &x.t[x.k[conv].in[2]],
                          *dt = &x.t[x.k[conv].in[3]];
    assert_int_equal(wt->format, 4);
    assert_int_equal(wt->bytes, 512);
    const int8_t *wd = (const int8_t *)(x.weights + wt->place);
    for (int co = 0; co < 2; co++)
        for (int ci = 0; ci < 32; ci++)
            assert_int_equal(wd[co * 32 + ci], ci < 3 ? w_q[co * 3 + ci] : 0);
    for (int i = 64; i < 512; i++)
        assert_int_equal(wd[i], 0);
    assert_int_equal(bt->bytes, 64);
    assert_int_equal(bt->place % 32, 0);
    const uint8_t *bd = x.weights + bt->place;
    assert_int_equal((int32_t)le32(bd), 7);
    assert_int_equal((int32_t)le32(bd + 4), -8);
    const uint8_t *dd = x.weights + dt->place;
    assert_int_equal(le32(dd), 0x3F000000);
    assert_int_equal(le32(dd + 8), 0x3E800000);
    nb_exeom_free(&x);
    free(buf);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* The simulator runs the written Conv: x [1,3,4,4] is 0 except pixel (0,0) = (0.5, -0.25,
 * 1.0). AscendQuant (scale 8, offset -3): q = (1, -5, 5) there, -3 elsewhere. Cube, bias
 * (7, -8): channel 0 at (0,0): 7 + 1x1 + (-2)(-5) + 3x5 = 33, elsewhere 7 + (1-2+3)(-3) = 1;
 * channel 1: -8 + 4 - 25 - 30 = -59, elsewhere -8 + (4+5-6)(-3) = -17. AscendDequant
 * (0.5, 0.25) with the fused LeakyRelu (0.125): 16.5, 0.5; -14.75 x 0.125 = -1.84375,
 * -4.25 x 0.125 = -0.53125 (all exact in fp16). */
static void test_sim_conv(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/simconv.exeom", tmpdir);
    nb_model *m;
    nb_estimate e;
    write_conv(path, &m, &e);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    nb_sim_model *sm = NULL;
    nb_status st = {0};
    if (nb_sim_load(buf, len, NULL, &sm, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(sm, 0)];
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes);
    nb_sim_set(ti, in, 0 * 16, 0.5);
    nb_sim_set(ti, in, 1 * 16, -0.25);
    nb_sim_set(ti, in, 2 * 16, 1.0);
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < 16; p++) {
            double want = c == 0 ? (p ? 0.5 : 16.5) : (p ? -0.53125 : -1.84375);
            assert_true(nb_sim_get(to, out, c * 16 + p) == want);
        }
    assert_true(nb_sim_total_macs(sm) == 2 * 3 * 16);
    free(in), free(out), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* Estimates m (8-bit weights, no quantized layers), writes NAME.exeom, checks its size is
 * the estimate's and loads it on the simulator (*buf: the file, freed by the caller). */
static nb_sim_model *compile_and_load(nb_model *m, const char *name, nb_estimate *e,
                                      uint8_t **buf)
{
    nb_status st = {0};
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(m, &ops, &o, e, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(e->n_unsupported, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.exeom", tmpdir, name);
    int64_t bytes = 0;
    if (nb_exeom_write(path, m, e, NULL, 0, "Ascend035A", &bytes, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(bytes, e->exeom_bytes);
    size_t len;
    *buf = slurp(path, &len);
    nb_sim_model *sm = NULL;
    if (nb_sim_load(*buf, len, NULL, &sm, &st))
        fail_msg("%s", st.msg);
    return sm;
}

/* Slice on the NPU, worked by hand: x FLOAT [1, 20, 3, 5] holding x[c][h][w] = 15c + 5h + w
 * (exact in fp16: at most 299), Slice(starts [2, -1], ends [17, -4], axes [1, 3], steps
 * [3, -1]). Along C (20, two C1 blocks of NC1HWC0, not one byte run): 2, 5, 8, 11, 14;
 * along W (5): start -1 -> 4, end -4 -> 1, step -1: 4, 3, 2. So y [1, 5, 3, 3],
 * y[i][h][j] = 15 (2 + 3i) + 5h + (4 - j). A second Slice of the same x along H alone
 * (starts [1], ends [100] clamped to 3, axes [-2]): y2 [1, 20, 2, 5] = x[c][1 + h][w]. A third
 * with step 2^63 - 1 (starts [1], ends [3], axes [2]): one element, y3 [1, 20, 1, 5] =
 * x[c][1][w], counted without overflow. */
static void test_sim_slice(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    const int64_t dx[] = {1, 20, 3, 5}, dy[] = {1, 5, 3, 3}, dy2[] = {1, 20, 2, 5}, d2[] = {2},
                  d1[] = {1};
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_output(mm, "y2", 1, 4, dy2);
    const int64_t dy3[] = {1, 20, 1, 5};
    mb_output(mm, "y3", 1, 4, dy3);
    const int64_t s3[] = {1}, e3[] = {3}, a3[] = {2}, st3[] = {INT64_MAX};
    mb_init_ints64(mm, "s3", 1, (const int64_t[]){1}, s3, 1);
    mb_init_ints64(mm, "e3", 1, (const int64_t[]){1}, e3, 1);
    mb_init_ints64(mm, "a3", 1, (const int64_t[]){1}, a3, 1);
    mb_init_ints64(mm, "st3", 1, (const int64_t[]){1}, st3, 1);
    mb_node(mm, "Slice", (const char *[]){"x", "s3", "e3", "a3", "st3", NULL},
            (const char *[]){"y3", NULL})->name = (char *)"slice_big_step";
    const int64_t starts[] = {2, -1}, ends[] = {17, -4}, axes[] = {1, 3}, steps[] = {3, -1};
    const int64_t s2[] = {1}, e2[] = {100}, a2[] = {-2};
    mb_init_ints64(mm, "starts", 1, d2, starts, 2);
    mb_init_ints64(mm, "ends", 1, d2, ends, 2);
    mb_init_ints64(mm, "axes", 1, d2, axes, 2);
    mb_init_ints64(mm, "steps", 1, d2, steps, 2);
    mb_init_ints64(mm, "s2", 1, d1, s2, 1);
    mb_init_ints64(mm, "e2", 1, d1, e2, 1);
    mb_init_ints64(mm, "a2", 1, d1, a2, 1);
    Onnx__NodeProto *n = mb_node(mm, "Slice", (const char *[]){"x", "starts", "ends", "axes",
                                 "steps", NULL}, (const char *[]){"y", NULL});
    n->name = (char *)"slice";
    n = mb_node(mm, "Slice", (const char *[]){"x", "s2", "e2", "a2", NULL},
                (const char *[]){"y2", NULL});
    n->name = (char *)"slice_h";
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    uint8_t *buf = NULL;
    nb_sim_model *sm = compile_and_load(m, "slice", &e, &buf);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)];
    /* the outputs by shape: y [1,5,3,3], y2 [1,20,2,5], y3 [1,20,1,5] */
    const nb_exeom_tensor *to = NULL, *to2 = NULL, *to3 = NULL;
    int oi[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) {
        const nb_exeom_tensor *t = &x->t[nb_sim_output_tensor(sm, i)];
        int which = t->dims[1] == 5 ? 0 : t->dims[2] == 2 ? 1 : 2;
        oi[which] = i;
        *(which == 0 ? &to : which == 1 ? &to2 : &to3) = t;
    }
    assert_true(oi[0] >= 0 && oi[1] >= 0 && oi[2] >= 0);
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes), *out2 = calloc(1, to2->bytes),
            *out3 = calloc(1, to3->bytes);
    for (int c = 0; c < 20; c++)
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 5; w++)
                nb_sim_set(ti, in, (c * 3 + h) * 5 + w, 15 * c + 5 * h + w);
    const void *ins[1] = {in};
    void *outs[3];
    outs[oi[0]] = out, outs[oi[1]] = out2, outs[oi[2]] = out3;
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    for (int c = 0; c < 20; c++)
        for (int w = 0; w < 5; w++) {
            assert_true(nb_sim_get(to3, out3, c * 5 + w) == 15 * c + 5 + w);
        }
    free(out3);
    assert_int_equal(nb_sim_numel(to), 45);
    for (int i = 0; i < 5; i++)
        for (int h = 0; h < 3; h++)
            for (int j = 0; j < 3; j++)
                assert_true(nb_sim_get(to, out, (i * 3 + h) * 3 + j) ==
                            15 * (2 + 3 * i) + 5 * h + (4 - j));
    for (int c = 0; c < 20; c++)
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 5; w++)
                assert_true(nb_sim_get(to2, out2, (c * 2 + h) * 5 + w) == 15 * c + 5 * (1 + h) + w);
    free(in), free(out), free(out2), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* Gather of constant indices on the NPU, worked by hand: x FLOAT [1, 20, 3, 5] holding
 * x[c][h][w] = 15c + 5h + w. Gather(x, [[19, -20], [3, 7]], axis 1): y [1, 2, 2, 3, 5],
 * y[a][b][h][w] = x[idx[a][b]][h][w] with -20 -> 0 (along C of NC1HWC0: not a byte run);
 * Gather(x, -1 (a scalar), axis 3): y2 [1, 20, 3] = x[c][h][4] (the LSTM's Y[-1] pattern). */
static void test_sim_gather(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    const int64_t dx[] = {1, 20, 3, 5}, dy[] = {1, 2, 2, 3, 5}, dy2[] = {1, 20, 3}, di[] = {2, 2};
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 5, dy);
    mb_output(mm, "y2", 1, 3, dy2);
    const int64_t idx[] = {19, -20, 3, 7}, last[] = {-1};
    mb_init_ints64(mm, "idx", 2, di, idx, 4);
    mb_init_ints64(mm, "last", 0, NULL, last, 1);
    Onnx__NodeProto *n = mb_node(mm, "Gather", (const char *[]){"x", "idx", NULL},
                                 (const char *[]){"y", NULL});
    n->name = (char *)"gather_c";
    mb_attr_int(n, "axis", 1);
    n = mb_node(mm, "Gather", (const char *[]){"x", "last", NULL}, (const char *[]){"y2", NULL});
    n->name = (char *)"gather_last";
    mb_attr_int(n, "axis", 3);
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    uint8_t *buf = NULL;
    nb_sim_model *sm = compile_and_load(m, "gather", &e, &buf);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(sm, 0)];
    const nb_exeom_tensor *to2 = &x->t[nb_sim_output_tensor(sm, 1)];
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes), *out2 = calloc(1, to2->bytes);
    for (int c = 0; c < 20; c++)
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 5; w++)
                nb_sim_set(ti, in, (c * 3 + h) * 5 + w, 15 * c + 5 * h + w);
    const void *ins[1] = {in};
    void *outs[2] = {out, out2};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    const int norm[4] = {19, 0, 3, 7};
    for (int j = 0; j < 4; j++)
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 5; w++)
                assert_true(nb_sim_get(to, out, (j * 3 + h) * 5 + w) == 15 * norm[j] + 5 * h + w);
    for (int c = 0; c < 20; c++)
        for (int h = 0; h < 3; h++)
            assert_true(nb_sim_get(to2, out2, c * 3 + h) == 15 * c + 5 * h + 4);
    free(in), free(out), free(out2), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* Pad on the NPU, worked by hand: x FLOAT [1, 2, 3, 4], x[c][h][w] = 12c + 4h + w.
 * constant 7.5, pads (0,0,1,2 | 0,0,0,1): y [1,2,4,7] is 7.5 where h = 0 or w < 2 or w = 6,
 *   else x[c][h-1][w-2];
 * reflect, pads (0,0,0,2 | 0,0,0,2): y2 [1,2,3,8], w reads 2,1,0,1,2,3,2,1 (ONNX's reflect of
 *   a row 0 1 2 3 by 2: the edge element not repeated);
 * edge, pads (0,0,1,0 | 0,0,1,0): y3 [1,2,5,4], h reads 0,0,1,2,2. */
static void test_sim_pad(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    const int64_t dx[] = {1, 2, 3, 4}, dy[] = {1, 2, 4, 7}, dy2[] = {1, 2, 3, 8},
                  dy3[] = {1, 2, 5, 4}, d8[] = {8};
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_output(mm, "y2", 1, 4, dy2);
    mb_output(mm, "y3", 1, 4, dy3);
    const int64_t p1[] = {0, 0, 1, 2, 0, 0, 0, 1}, p2[] = {0, 0, 0, 2, 0, 0, 0, 2},
                  p3[] = {0, 0, 1, 0, 0, 0, 1, 0};
    const float cv = 7.5f;
    mb_init_ints64(mm, "p1", 1, d8, p1, 8);
    mb_init_ints64(mm, "p2", 1, d8, p2, 8);
    mb_init_ints64(mm, "p3", 1, d8, p3, 8);
    mb_init_floats(mm, "cv", 0, NULL, &cv, 1);
    mb_node(mm, "Pad", (const char *[]){"x", "p1", "cv", NULL}, (const char *[]){"y", NULL})
        ->name = (char *)"pad_c";
    Onnx__NodeProto *n = mb_node(mm, "Pad", (const char *[]){"x", "p2", NULL},
                                 (const char *[]){"y2", NULL});
    n->name = (char *)"pad_r";
    mb_attr_string(n, "mode", "reflect");
    n = mb_node(mm, "Pad", (const char *[]){"x", "p3", NULL}, (const char *[]){"y3", NULL});
    n->name = (char *)"pad_e";
    mb_attr_string(n, "mode", "edge");
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    uint8_t *buf = NULL;
    nb_sim_model *sm = compile_and_load(m, "pad", &e, &buf);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)], *to[3] = {NULL};
    int oi[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) { /* by shape: the last dims 7, 8, 4 */
        const nb_exeom_tensor *t = &x->t[nb_sim_output_tensor(sm, i)];
        int which = t->dims[3] == 7 ? 0 : t->dims[3] == 8 ? 1 : 2;
        oi[which] = i, to[which] = t;
    }
    assert_true(oi[0] >= 0 && oi[1] >= 0 && oi[2] >= 0);
    uint8_t *in = calloc(1, ti->bytes), *out[3];
    void *outs[3];
    for (int j = 0; j < 3; j++)
        outs[oi[j]] = out[j] = calloc(1, to[j]->bytes);
    for (int i = 0; i < 24; i++) /* row-major [1,2,3,4]: the flat index is 12c + 4h + w */
        nb_sim_set(ti, in, i, i);
    const void *ins[1] = {in};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    const int refl[8] = {2, 1, 0, 1, 2, 3, 2, 1}, edge[5] = {0, 0, 1, 2, 2};
    for (int c = 0; c < 2; c++) {
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 7; w++)
                assert_true(nb_sim_get(to[0], out[0], (c * 4 + h) * 7 + w) ==
                            (h == 0 || w < 2 || w == 6 ? 7.5 : 12 * c + 4 * (h - 1) + w - 2));
        for (int h = 0; h < 3; h++)
            for (int w = 0; w < 8; w++)
                assert_true(nb_sim_get(to[1], out[1], (c * 3 + h) * 8 + w) ==
                            12 * c + 4 * h + refl[w]);
        for (int h = 0; h < 5; h++)
            for (int w = 0; w < 4; w++)
                assert_true(nb_sim_get(to[2], out[2], (c * 5 + h) * 4 + w) ==
                            12 * c + 4 * edge[h] + w);
    }
    free(in), free(out[0]), free(out[1]), free(out[2]), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* HardSigmoid on the NPU (atc: Clip(Add(Mul(x, alpha), beta), 0, 1)), worked by hand with
 * alpha 0.25, beta 0.5 (exact in fp16): x = -4, -2, -1, 0, 1, 2, 4, 8 gives
 * 0.25 x + 0.5 = -0.5, 0, 0.25, 0.5, 0.75, 1, 1.5, 2.5, clamped: 0, 0, 0.25, 0.5, 0.75, 1, 1, 1
 * (the Clip's bounds were read from the HardSigmoid node, which has none: +-inf, and the
 * NPU gave -0.5 and 2.5; a helper's find). */
static void test_sim_hardsigmoid(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    const int64_t d[] = {1, 8};
    mb_input(mm, "x", 1, 2, d);
    mb_output(mm, "y", 1, 2, d);
    Onnx__NodeProto *n = mb_node(mm, "HardSigmoid", (const char *[]){"x", NULL},
                                 (const char *[]){"y", NULL});
    mb_attr_float(n, "alpha", 0.25f);
    mb_attr_float(n, "beta", 0.5f);
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    uint8_t *buf = NULL;
    nb_sim_model *sm = compile_and_load(m, "hsig", &e, &buf);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)],
                          *to = &x->t[nb_sim_output_tensor(sm, 0)];
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes);
    const double xv[8] = {-4, -2, -1, 0, 1, 2, 4, 8}, yv[8] = {0, 0, 0.25, 0.5, 0.75, 1, 1, 1};
    for (int i = 0; i < 8; i++)
        nb_sim_set(ti, in, i, xv[i]);
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    for (int i = 0; i < 8; i++)
        assert_true(nb_sim_get(to, out, i) == yv[i]);
    free(in), free(out), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* Tile and SpaceToDepth on the NPU, worked by hand: x FLOAT [1, 2, 4, 4] holding its flat
 * index 16c + 4h + w. Tile(x, repeats [1, 2, 1, 2]): y [1, 4, 4, 8] = x[c mod 2][h][w mod 4].
 * SpaceToDepth(x, blocksize 2), ONNX's DCR order: y2 [1, 8, 2, 2],
 * y2[(2 bh + bw) 2 + c][h][w] = x[c][2h + bh][2w + bw]. */
static void test_sim_tile_s2d(void **state)
{
    (void)state;
    mb_model *mm = mb_new(13);
    const int64_t dx[] = {1, 2, 4, 4}, dy[] = {1, 4, 4, 8}, dy2[] = {1, 8, 2, 2}, d4[] = {4};
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_output(mm, "y2", 1, 4, dy2);
    const int64_t rep[] = {1, 2, 1, 2};
    mb_init_ints64(mm, "rep", 1, d4, rep, 4);
    mb_node(mm, "Tile", (const char *[]){"x", "rep", NULL}, (const char *[]){"y", NULL})->name =
        (char *)"tile";
    Onnx__NodeProto *n = mb_node(mm, "SpaceToDepth", (const char *[]){"x", NULL},
                                 (const char *[]){"y2", NULL});
    n->name = (char *)"s2d";
    mb_attr_int(n, "blocksize", 2);
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    uint8_t *buf = NULL;
    nb_sim_model *sm = compile_and_load(m, "tile_s2d", &e, &buf);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)], *to[2] = {NULL};
    int oi[2] = {-1, -1};
    for (int i = 0; i < 2; i++) { /* by shape: C 4 (Tile), C 8 (SpaceToDepth) */
        const nb_exeom_tensor *t = &x->t[nb_sim_output_tensor(sm, i)];
        int which = t->dims[1] == 4 ? 0 : 1;
        oi[which] = i, to[which] = t;
    }
    assert_true(oi[0] >= 0 && oi[1] >= 0);
    uint8_t *in = calloc(1, ti->bytes), *out[2];
    void *outs[2];
    for (int j = 0; j < 2; j++)
        outs[oi[j]] = out[j] = calloc(1, to[j]->bytes);
    for (int i = 0; i < 32; i++)
        nb_sim_set(ti, in, i, i);
    const void *ins[1] = {in};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    for (int c = 0; c < 4; c++)
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 8; w++)
                assert_true(nb_sim_get(to[0], out[0], (c * 4 + h) * 8 + w) ==
                            16 * (c % 2) + 4 * h + w % 4);
    for (int oc = 0; oc < 8; oc++)
        for (int h = 0; h < 2; h++)
            for (int w = 0; w < 2; w++) {
                int c = oc % 2, blk = oc / 2, bh = blk / 2, bw = blk % 2;
                assert_true(nb_sim_get(to[1], out[1], (oc * 2 + h) * 2 + w) ==
                            16 * c + 4 * (2 * h + bh) + 2 * w + bw);
            }
    free(in), free(out[0]), free(out[1]), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* y = 10 log10(Conv(x, W)^2): a 4-tap "STFT" of int16-scaled samples, its power, the Log
 * and the dB scaling of melspectrogram (Transpose, Pow 2, Clip(p, 1e-10), Log, Mul 10,
 * Div ln 10, Sub 0). The layer: int8 W [1, 1, 1, 1], AscendQuant scale 1/256, deq_scale
 * 256. */
static nb_model *stft_db_model(const char *tail_op)
{
    const int64_t dx[] = {1, 1, 4}, dw[] = {1, 1, 4}, dy[] = {1, 1, 1}, d0[] = {0};
    const float w[4] = {1, 1, 1, 1}, two = 2, lo = 1e-10f, hi = INFINITY, ten = 10,
                ln10 = 2.3025851249694824f, zero = 0;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y", 1, 3, dy);
    mb_init_floats(mm, "W", 3, dw, w, 4);
    mb_init_floats(mm, "two", 0, d0, &two, 1);
    mb_init_floats(mm, "lo", 0, d0, &lo, 1);
    mb_init_floats(mm, "hi", 0, d0, &hi, 1);
    mb_init_floats(mm, "ten", 0, d0, &ten, 1);
    mb_init_floats(mm, "ln10", 0, d0, &ln10, 1);
    mb_init_floats(mm, "zero", 0, d0, &zero, 1);
    mb_node(mm, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL})->name =
        "stft";
    if (tail_op) { /* y = tail_op(c): an op the scale cannot go through */
        mb_node(mm, tail_op, (const char *[]){"c", NULL}, (const char *[]){"y", NULL})->name =
            "tail";
        return load_folded(mm);
    }
    Onnx__NodeProto *tr = mb_node(mm, "Transpose", (const char *[]){"c", NULL},
                                  (const char *[]){"t", NULL});
    tr->name = "tr";
    mb_attr_ints(tr, "perm", 3, (const int64_t[]){0, 2, 1});
    mb_node(mm, "Pow", (const char *[]){"t", "two", NULL}, (const char *[]){"p", NULL})->name =
        "pow";
    mb_node(mm, "Clip", (const char *[]){"p", "lo", "hi", NULL}, (const char *[]){"q", NULL})
        ->name = "clip";
    mb_node(mm, "Log", (const char *[]){"q", NULL}, (const char *[]){"l", NULL})->name = "log";
    mb_node(mm, "Mul", (const char *[]){"l", "ten", NULL}, (const char *[]){"m", NULL})->name =
        "mul";
    mb_node(mm, "Div", (const char *[]){"m", "ln10", NULL}, (const char *[]){"d", NULL})->name =
        "div";
    mb_node(mm, "Sub", (const char *[]){"d", "zero", NULL}, (const char *[]){"y", NULL})->name =
        "sub";
    return load_folded(mm);
}

/* Compiles m with its layer (scaled by spec, or not), runs x = 25600 x 4; returns y and the
 * clamped fp16 results of the run. */
static double run_stft_db(nb_model *m, const char *spec, nb_scale_plan *plan, uint64_t *sat,
                          uint64_t *deq_bits)
{
    int8_t wq[4] = {1, 1, 1, 1};
    int32_t b[1] = {0};
    uint64_t dq[1] = {0x43800000u}; /* 256.0f */
    nb_npu_layer l = {.node = "stft", .quant_scale = 1.0f / 256, .quant_offset = 0,
                      .act_bits = 8, .w_rank = 3, .w_dims = {1, 1, 4}, .w_numel = 4, .w = wq,
                      .channels = 1, .bias = b, .deq_scale = dq};
    nb_status st = {0};
    if (spec && nb_input_scale_apply(m, &l, 1, spec, NULL, plan, &st))
        fail_msg("%s", st.msg);
    assert_true(l.quant_scale == 1.0f / 256); /* it reads the input: the same int8 values */
    *deq_bits = dq[0];
    nb_estimate e;
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(m, &ops, &o, &e, &st))
        fail_msg("%s", st.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/stft_db.exeom", tmpdir);
    int64_t bytes = 0;
    if (nb_exeom_write(path, m, &e, &l, 1, "Ascend035A", &bytes, &st))
        fail_msg("%s", st.msg);
    /* NAME.dbg: the power spectrum's tensor holds 2^-20 x its value, the output as it is */
    char dbg[600];
    snprintf(dbg, sizeof dbg, "%s/stft_db.dbg", tmpdir);
    if (nb_dbg_write(dbg, "t.onnx", m, &e, path, spec ? plan : NULL, &st))
        fail_msg("%s", st.msg);
    size_t dl;
    uint8_t *db = slurp(dbg, &dl);
    Nanobench__Dbg__Dbg *d = nanobench__dbg__dbg__unpack(NULL, dl, db);
    assert_non_null(d);
    int seen = 0;
    for (size_t i = 0; i < d->n_tensors; i++) {
        const Nanobench__Dbg__Tensor *t = d->tensors[i];
        if (!strcmp(t->onnx_value, "p"))
            assert_true(t->value_scale == (spec ? ldexp(1, -20) : 0) && t->value_offset == 0), seen++;
        if (!strcmp(t->onnx_value, "d"))
            assert_true(spec ? fabs(t->value_offset - -60.20599913) < 1e-6 && t->value_scale == 1
                             : t->value_scale == 0), seen++;
        if (!strcmp(t->onnx_value, "y"))
            assert_true(t->value_scale == 0 && t->value_offset == 0), seen++;
    }
    assert_true(seen >= 3);
    nanobench__dbg__dbg__free_unpacked(d, NULL);
    free(db);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    nb_sim_model *sm = NULL;
    if (nb_sim_load(buf, len, NULL, &sm, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(sm);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(sm, 0)];
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes);
    for (int i = 0; i < 4; i++)
        nb_sim_set(ti, in, i, 25600);
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    double y = nb_sim_get(to, out, 0);
    *sat = 0;
    for (uint32_t k = 0; k < x->n_tasks; k++)
        *sat += nb_sim_task_saturations(sm, (int)k);
    free(in), free(out), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    return y;
}

/* --nb_input_scale on melspectrogram's shape of graph, worked by hand. x = 25600 x 4
 * quantizes to 100 x 4 (scale 1/256), the cube sums 400, x 256 = 102400: beyond fp16.
 * The float model: 20 log10(102400) = 100.206. */
static void test_input_scale(void **state)
{
    (void)state;
    uint64_t sat, deq_bits;
    nb_scale_plan plan = {0};
    /* unscaled: the Conv clamps at 65504, so does its square (2 clamped results); ln 65504 = 11.0899 -> fp16
       11.09375 (ulp 2^-7), x 10 = 110.9375, x fp16(1/ln 10) = 0.43432617 -> 48.18 -> 48.1875
       (ulp 2^-5) */
    nb_model *m = stft_db_model(NULL);
    assert_true(run_stft_db(m, NULL, NULL, &sat, &deq_bits) == 48.1875);
    assert_int_equal(sat, 2);
    nb_model_free(m);
    /* x 2^-10: deq_scale 256 x 2^-10 = 0.25 (0x3E800000), the Conv gives 100, its square
       10000 (both exact); ln 10000 = 9.21034 -> 9.2109375, x 10 = 92.109375 -> 92.125
       (ulp 2^-4), x 0.43432617 = 40.0123 -> 40; the Sub's constant 0 becomes 10 ln(2^-20) /
       ln 10 = -60.206, in fp16 -60.21875: 40 + 60.21875 = 100.21875, a tie between 100.1875
       and 100.25 (ulp 2^-4): 100.25, 0.044 from the float model's 100.206 */
    m = stft_db_model(NULL);
    assert_true(run_stft_db(m, "x:2^-10", &plan, &sat, &deq_bits) == 100.25);
    assert_int_equal(sat, 0);
    assert_int_equal(deq_bits, 0x3E800000u);
    /* what the NPU holds of each value: c x 2^-10, p x 2^-20, then offsets from the Log */
    double s, o;
    assert_true(nb_scale_plan_get(&plan, m->graph, "c", &s, &o) && s == ldexp(1, -10) && o == 0);
    assert_true(nb_scale_plan_get(&plan, m->graph, "t", &s, &o) && s == ldexp(1, -10) && o == 0);
    assert_true(nb_scale_plan_get(&plan, m->graph, "q", &s, &o) && s == ldexp(1, -20) && o == 0);
    assert_true(nb_scale_plan_get(&plan, m->graph, "l", &s, &o) && s == 1 &&
                fabs(o - 20 * log(0.5)) < 1e-12);
    assert_true(nb_scale_plan_get(&plan, m->graph, "d", &s, &o) && s == 1 &&
                fabs(o - -60.20599913) < 1e-6);
    assert_false(nb_scale_plan_get(&plan, m->graph, "y", &s, &o)); /* the output: as the model */
    assert_false(nb_scale_plan_get(&plan, m->graph, "x", &s, &o)); /* the input too */
    assert_true(nb_scale_plan_input(&plan, "x") == ldexp(1, -10));
    /* the Clip's bound and the Sub's constant are new constants; the old ones kept */
    const nb_node *sub = NULL, *clip = NULL;
    for (int i = 0; i < m->graph->n_nodes; i++) {
        if (!strcmp(m->graph->nodes[i].name, "sub"))
            sub = &m->graph->nodes[i];
        if (!strcmp(m->graph->nodes[i].name, "clip"))
            clip = &m->graph->nodes[i];
    }
    assert_non_null(sub);
    assert_non_null(clip);
    const nb_value *k = &m->graph->values[sub->in[1]];
    assert_string_equal(k->name, "zero/nb_input_scale");
    assert_true(nb_tensor_get_f64(k->const_val, 0) == (double)(float)-60.20599913279624);
    assert_true(nb_tensor_get_f64(m->graph->values[clip->in[1]].const_val, 0) ==
                (double)(float)(1e-10f * ldexp(1, -20)));
    assert_int_equal(plan.n_reset, 0);
    assert_int_equal(plan.n_notes, 4); /* the Conv, the Clip's two bounds, the Sub */
    nb_scale_plan_free(&plan);
    nb_model_free(m);
    /* a scale an op cannot carry (Sigmoid): the Conv's output stays unscaled */
    m = stft_db_model("Sigmoid");
    int8_t wq[4] = {1, 1, 1, 1};
    int32_t b[1] = {0};
    uint64_t dq[1] = {0x43800000u};
    nb_npu_layer l = {.node = "stft", .quant_scale = 1.0f / 256, .act_bits = 8, .w_rank = 3,
                      .w_dims = {1, 1, 4}, .w_numel = 4, .w = wq, .channels = 1, .bias = b,
                      .deq_scale = dq};
    nb_status st = {0};
    assert_int_equal(nb_input_scale_apply(m, &l, 1, "x:2^-10", NULL, &plan, &st), NB_OK);
    assert_int_equal(plan.n_reset, 1);
    assert_true(dq[0] == 0x43800000u && l.quant_scale == 1.0f / 256);
    nb_scale_plan_free(&plan);
    /* refused: not a power of two, out of range, not an input, no cube op reached */
    assert_int_equal(nb_input_scale_apply(m, &l, 1, "x:3", NULL, &plan, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "power of two"));
    assert_int_equal(nb_input_scale_apply(m, &l, 1, "x:2^-25", NULL, &plan, &st), NB_ERR_ARG);
    assert_int_equal(nb_input_scale_apply(m, &l, 1, "W:2^-10", NULL, &plan, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "not an input"));
    assert_int_equal(nb_input_scale_apply(m, &l, 0, "x:2^-10", NULL, &plan, &st),
                     NB_ERR_UNSUPPORTED);
    assert_non_null(strstr(st.msg, "reaches no cube op"));
    nb_model_free(m);
    /* the advice: the layer's calibrated input range, 127 x 256 = 32512 in fp16's range */
    m = stft_db_model(NULL);
    nb_scale_advice *adv = NULL;
    int n_adv = 0;
    l.quant_scale = 1.0f / 1e6f; /* a range of 1.27e8: beyond 65504 before any cube op */
    if (nb_input_scale_advise(m, &l, 1, &adv, &n_adv, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(n_adv, 1);
    assert_string_equal(adv[0].layer, "stft");
    assert_int_equal(adv[0].power, 0); /* the input itself: no scale can reach it */
    free(adv);
    nb_model_free(m);
}

/* int16 activations (a layer's dst_bits 16, the cube's s16 x s8), by hand: y = MatMul(x, W),
 * x [1,20] with x_i = (-1)^i 100 (i + 1) (beyond int8: int16 with scale 1, offset 0), W
 * [20,2] int8 with W[i][0] = 1 and W[i][1] = i % 3 - 1, bias (5, -3), deq_scale 0.5. The sums
 * -1000 and -1900, plus the bias, times 0.5: y = (-497.5, -951.5), exact in fp16. The
 * AscendQuant writes int16 FRACTAL_NZ (C0 16: 2 x 16 columns x 16 rows x 2 bytes = 1024,
 * where int8 would be 512) with dst_bits 16, and the file is the estimate's size. */
static nb_model *matmul20_model(void)
{
    const int64_t dx[] = {1, 20}, dw[] = {20, 2}, dy[] = {1, 2};
    float w[40];
    for (int i = 0; i < 20; i++)
        w[2 * i] = 1, w[2 * i + 1] = (float)(i % 3 - 1);
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dx);
    mb_output(mm, "y", 1, 2, dy);
    mb_init_floats(mm, "W", 2, dw, w, 40);
    mb_node(mm, "MatMul", (const char *[]){"x", "W", NULL}, (const char *[]){"y", NULL})->name =
        "mm";
    return load_folded(mm);
}

static void test_sim_matmul_int16(void **state)
{
    (void)state;
    int8_t wq[40];
    for (int i = 0; i < 20; i++)
        wq[2 * i] = 1, wq[2 * i + 1] = (int8_t)(i % 3 - 1);
    int32_t b[2] = {5, -3};
    uint64_t dq[2] = {0x3F000000u, 0x3F000000u}; /* 0.5f */
    nb_npu_layer l = {.node = "mm", .quant_scale = 1, .quant_offset = 0, .act_bits = 16,
                      .w_rank = 2, .w_dims = {20, 2}, .w_numel = 40, .w = wq, .channels = 2,
                      .bias = b, .deq_scale = dq};
    nb_model *m = matmul20_model();
    nb_status st = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/mm16.exeom", tmpdir);
    int64_t bytes = 0;
    /* a lowering not told of the int16 layer: the writer refuses rather than contradict it */
    nb_estimate e;
    nb_npu_opts o8 = {.weight_bits = 8};
    if (nb_estimate_model(m, &ops, &o8, &e, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(nb_exeom_write(path, m, &e, &l, 1, "Ascend035A", &bytes, &st),
                     NB_ERR_INTERNAL);
    assert_non_null(strstr(st.msg, "dst_bits 16"));
    int64_t bytes8 = e.exeom_bytes, mem8 = e.mem_bytes;
    nb_estimate_free(&e);
    const char *act16[] = {"mm"};
    nb_npu_opts o = {.weight_bits = 8, .act16_nodes = act16, .n_act16_nodes = 1};
    if (nb_estimate_model(m, &ops, &o, &e, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(e.exeom_bytes, bytes8); /* no weight or task more */
    assert_true(e.mem_bytes >= mem8);
    if (nb_exeom_write(path, m, &e, &l, 1, "Ascend035A", &bytes, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(bytes, e.exeom_bytes);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    assert_int_equal((int64_t)len, e.exeom_bytes);
    nb_sim_model *sm = NULL;
    if (nb_sim_load(buf, len, NULL, &sm, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(sm);
    int quant = -1, cube = -1;
    for (uint32_t k = 0; k < x->n_tasks; k++) {
        if (x->k[k].kernel == 1)
            quant = (int)k;
        if (x->k[k].kernel == 7)
            cube = (int)k;
    }
    assert_true(quant >= 0 && cube > quant);
    assert_int_equal(x->k[quant].params[8], 16);
    const nb_exeom_tensor *q = &x->t[x->k[quant].out[0]];
    assert_int_equal(q->dtype, 6);   /* INT16 */
    assert_int_equal(q->format, 29); /* FRACTAL_NZ */
    assert_int_equal(q->bytes, 1024);
    assert_int_equal(x->k[cube].in[0], x->k[quant].out[0]);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(sm, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(sm, 0)];
    uint8_t *in = calloc(1, ti->bytes), *out = calloc(1, to->bytes);
    for (int i = 0; i < 20; i++)
        nb_sim_set(ti, in, i, (i % 2 ? -1 : 1) * 100.0 * (i + 1));
    const void *ins[1] = {in};
    void *outs[1] = {out};
    if (nb_sim_execute(sm, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    assert_true(nb_sim_get(to, out, 0) == -497.5);
    assert_true(nb_sim_get(to, out, 1) == -951.5);
    free(in), free(out), free(buf);
    nb_sim_free(sm);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* The same inputs give the same bytes. */
static void test_deterministic(void **state)
{
    (void)state;
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.exeom", tmpdir);
    snprintf(b, sizeof b, "%s/b.exeom", tmpdir);
    nb_model *m1, *m2;
    nb_estimate e1, e2;
    write_conv(a, &m1, &e1);
    write_conv(b, &m2, &e2);
    size_t la, lb;
    uint8_t *ba = slurp(a, &la), *bb = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba), free(bb);
    nb_estimate_free(&e1), nb_estimate_free(&e2);
    nb_model_free(m1), nb_model_free(m2);
}

/* A flipped byte in a section, a cut file, a wrong magic, a descriptor pointing outside:
 * refused, naming what is wrong. */
static void test_corrupt(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/c.exeom", tmpdir);
    nb_model *m;
    nb_estimate e;
    write_conv(path, &m, &e);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    nb_exeom x;
    nb_status st = {0};
    buf[64 + 5] ^= 1; /* in the tensor section */
    assert_int_equal(nb_exeom_parse(buf, len, &x, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "section 0: CRC-32 mismatch"));
    buf[64 + 5] ^= 1;
    assert_int_equal(nb_exeom_parse(buf, len - 100, &x, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "outside the file"));
    assert_int_equal(nb_exeom_parse(buf, 10, &x, &st), NB_ERR_FORMAT);
    buf[0] = 'X';
    assert_int_equal(nb_exeom_parse(buf, len, &x, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "magic"));
    free(buf);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* NAME.dbg: a Conv with a BatchNormalization folded into it covers both nodes; every task
 * and tensor is there by index; the exeom's size and CRC pair the files. */
static void test_dbg(void **state)
{
    (void)state;
    const int64_t dx[] = {1, 3, 4, 4}, dw[] = {2, 3, 1, 1}, dc[] = {2};
    const float w[6] = {1, -2, 3, 4, 5, -6}, one[2] = {1, 1}, zero[2] = {0, 0};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, (const int64_t[]){1, 2, 4, 4});
    mb_init_floats(mm, "W", 4, dw, w, 6);
    mb_init_floats(mm, "s", 1, dc, one, 2);
    mb_init_floats(mm, "b", 1, dc, zero, 2);
    mb_init_floats(mm, "mu", 1, dc, zero, 2);
    mb_init_floats(mm, "var", 1, dc, one, 2);
    mb_node(mm, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL})->name =
        "conv";
    mb_node(mm, "BatchNormalization", (const char *[]){"c", "s", "b", "mu", "var", NULL},
            (const char *[]){"y", NULL})->name = "bn";
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    nb_npu_opts o = {.weight_bits = 8};
    if (nb_estimate_model(m, &ops, &o, &e, &st))
        fail_msg("%s", st.msg);
    char ex[512], dbg[512];
    snprintf(ex, sizeof ex, "%s/bn.exeom", tmpdir);
    snprintf(dbg, sizeof dbg, "%s/bn.dbg", tmpdir);
    nb_npu_layer l = conv_layer();
    int64_t bytes;
    if (nb_exeom_write(ex, m, &e, &l, 1, "Ascend035B", &bytes, &st) ||
        nb_dbg_write(dbg, "bn.onnx", m, &e, ex, NULL, &st))
        fail_msg("%s", st.msg);
    size_t len;
    uint8_t *buf = slurp(dbg, &len);
    Nanobench__Dbg__Dbg *d = nanobench__dbg__dbg__unpack(NULL, len, buf);
    assert_non_null(d);
    assert_int_equal(d->exeom_bytes, bytes);
    assert_int_equal(d->n_tasks, e.g.n_k);
    assert_int_equal(d->n_tensors, e.g.n_t);
    bool found = false, dq_found = false;
    for (size_t i = 0; i < d->n_tasks; i++) {
        assert_int_equal(d->tasks[i]->index, i);
        if (!strcmp(d->tasks[i]->name, "conv")) {
            assert_int_equal(d->tasks[i]->n_covers, 2);
            assert_string_equal(d->tasks[i]->covers[0], "conv");
            assert_string_equal(d->tasks[i]->covers[1], "bn");
            assert_string_equal(d->tasks[i]->unit, "cube");
            found = true;
        }
        if (!strcmp(d->tasks[i]->name, "conv/AscendDequant")) { /* writes the BN's value */
            assert_int_equal(d->tasks[i]->n_covers, 2);
            assert_string_equal(d->tasks[i]->covers[0], "conv");
            assert_string_equal(d->tasks[i]->covers[1], "bn");
            dq_found = true;
        }
        if (!strcmp(d->tasks[i]->name, "conv/AscendQuant")) {
            assert_true(d->tasks[i]->inserted);
            assert_string_equal(d->tasks[i]->onnx_node, "conv");
        }
    }
    assert_true(found && dq_found);
    nanobench__dbg__dbg__free_unpacked(d, NULL);
    free(buf);
    nb_estimate_free(&e);
    nb_model_free(m);
}

/* Every real model of tests/oracle/estimate_expected.tsv that the exeom can hold (no If,
 * no LSTM/GRU yet) written with zero int8 weights for each cube layer: the file is the
 * estimate's TOTAL_EXEOM_SIZE, to the byte; the others are refused naming the task. */
static void test_real_models_size(void **state)
{
    (void)state;
    char dir[1024], out[600];
    nb_models_dir(dir, sizeof dir);
    FILE *f = fopen(NB_SOURCE_DIR "/tests/oracle/estimate_expected.tsv", "r");
    assert_non_null(f);
    char line[1024];
    int written = 0, refused = 0;
    assert_non_null(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        char model[128], shape[256];
        long long w, mem, ex;
        if (sscanf(line, "%127s %255s %lld %lld %lld", model, shape, &w, &mem, &ex) != 5)
            fail_msg("bad row: %s", line);
        nb_model *m;
        nb_estimate e;
        load_and_estimate(dir, model, shape, &ops, &m, &e);
        nb_status st = {0};
        /* a layer record per cube task: zero weights of the model's weight dims */
        nb_npu_layer *ls = calloc((size_t)e.g.n_k + 1, sizeof *ls);
        int nl = 0;
        for (int k = 0; k < e.g.n_k; k++) {
            const nb_npu_task *t = &e.g.k[k];
            if (t->unit != NB_TASK_CUBE || !strcmp(t->op_type, "LSTM") || !strcmp(t->op_type, "GRU"))
                continue;
            /* a branch's layer: "<If>/<branch>_branch/<node>", the node in the branch */
            const char *plain = t->name;
            for (const char *p = t->name; (p = strstr(p, "_branch/")) != NULL; p += 8)
                plain = p + 8;
            const nb_node *nd = NULL;
            const nb_graph *sg = m->graph;
            for (int i = 0; i < m->graph->n_nodes && !nd; i++) {
                const nb_node *n = &m->graph->nodes[i];
                if (!strcmp(n->name, plain))
                    nd = n;
                for (int a = 0; a < n->n_attr && !nd; a++)
                    for (int j = 0; n->attrs[a].g && j < n->attrs[a].g->n_nodes && !nd; j++)
                        if (!strcmp(n->attrs[a].g->nodes[j].name, plain))
                            nd = &n->attrs[a].g->nodes[j], sg = n->attrs[a].g;
            }
            if (!nd)
                fail_msg("%s: no node for task '%s'", model, t->name);
            const nb_tensor *wt = sg->values[nd->in[1]].const_val; /* W is input 1 */
            nb_npu_layer *l = &ls[nl++];
            l->node = (char *)plain; /* not freed: the test frees w, bias, deq_scale */
            l->act_bits = 8;
            l->quant_scale = 1;
            l->w_rank = wt->rank;
            memcpy(l->w_dims, wt->dims, sizeof(int64_t) * (size_t)wt->rank);
            l->w_numel = wt->numel;
            l->w = calloc((size_t)wt->numel + 1, 1);
            l->channels = 4096; /* more than any layer has: the writer takes what it needs */
            l->bias = calloc(4096, sizeof(int32_t));
            l->deq_scale = calloc(4096, sizeof(uint64_t));
        }
        snprintf(out, sizeof out, "%s/%s.exeom", tmpdir, model);
        int64_t bytes = 0;
        nb_err err = nb_exeom_write(out, m, &e, ls, nl, "Ascend035A", &bytes, &st);
        if (err) { /* an If (CPU) or an LSTM/GRU: refused with the task's name */
            if (!(strstr(st.msg, "runs on the CPU") || strstr(st.msg, "LSTM") || strstr(st.msg, "GRU")))
                fail_msg("%s: %s", model, st.msg);
            assert_true(strstr(st.msg, "runs on the CPU") || strstr(st.msg, "LSTM") ||
                        strstr(st.msg, "GRU"));
            refused++;
        } else {
            print_message("%-22s exeom %lld bytes = estimate %lld\n", model, (long long)bytes,
                          ex);
            assert_int_equal(bytes, ex);
            size_t len;
            uint8_t *buf = slurp(out, &len);
            nb_exeom x;
            if (nb_exeom_parse(buf, len, &x, &st))
                fail_msg("%s: %s", model, st.msg);
            nb_exeom_free(&x);
            free(buf);
            written++;
        }
        for (int i = 0; i < nl; i++)
            free(ls[i].w), free(ls[i].bias), free(ls[i].deq_scale);
        free(ls);
        nb_estimate_free(&e);
        nb_model_free(m);
    }
    fclose(f);
    print_message("%d written, %d refused (LSTM)\n", written, refused);
    assert_true(written >= 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_sim_conv),
        cmocka_unit_test(test_sim_slice), cmocka_unit_test(test_sim_gather),
        cmocka_unit_test(test_sim_pad),
        cmocka_unit_test(test_sim_hardsigmoid), cmocka_unit_test(test_sim_tile_s2d),
        cmocka_unit_test(test_input_scale), cmocka_unit_test(test_sim_matmul_int16),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_dbg),
        cmocka_unit_test(test_real_models_size),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
