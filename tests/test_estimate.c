/* Lowering and estimate on small hand-built models; each expected size is worked out by hand
 * next to its assertion (formats: ../shared/docs/facts/compile.md; layout: include/nb/atc.h). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.h"
#include "nb/estimate.h"
#include "nb/ref.h"
#include "lowering_helpers.h"
#include "recipe.h"

static nb_op_table ops;

static int setup(void **state)
{
    (void)state;
    nb_status st = {0};
    return nb_op_table_load(nb_op_table_default_path(), &ops, &st) == NB_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    nb_op_table_free(&ops);
    return 0;
}

/* Loads, folds and estimates mm (freed) with options o. */
static void estimate_with(mb_model *mm, const nb_npu_opts *o, nb_estimate *e);

/* Loads, folds and estimates mm (freed). */
static void estimate(mb_model *mm, nb_estimate *e)
{
    nb_npu_opts o = {.weight_bits = 8};
    estimate_with(mm, &o, e);
}

static void estimate_with(mb_model *mm, const nb_npu_opts *o, nb_estimate *e)
{
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    if (nb_estimate_model(m, &ops, o, e, &st))
        fail_msg("%s", st.msg);
    nb_model_free(m);
}

static char last_msg[1024];

/* Loads, folds and estimates mm (freed), which must fail; returns the error and keeps its
 * message in last_msg. */
static nb_err estimate_err(mb_model *mm, const nb_npu_opts *o)
{
    nb_model *m = load_folded(mm);
    nb_status st = {0};
    nb_estimate e;
    nb_err err = nb_estimate_model(m, &ops, o, &e, &st);
    if (!err)
        nb_estimate_free(&e);
    snprintf(last_msg, sizeof last_msg, "%s", st.msg);
    nb_model_free(m);
    return err;
}

static const nb_npu_task *task(const nb_estimate *e, const char *name)
{
    for (int i = 0; i < e->g.n_k; i++)
        if (!strcmp(e->g.k[i].name, name))
            return &e->g.k[i];
    fail_msg("no task '%s'", name);
    return NULL;
}

static bool has_rewrite(const nb_estimate *e, const char *text)
{
    for (int i = 0; i < e->g.n_rewrites; i++)
        if (strstr(e->g.rewrites[i], text))
            return true;
    return false;
}

static float *zeros(size_t n) { return calloc(n, sizeof(float)); }

/* The arena map agrees with the plan: each activation tensor written by a task has one
 * slot, at its arena_offset, with its bytes and lifetime; slots alive at one task never
 * overlap; the arena is the highest slot end (rounded up to NB_EXEOM_ALIGN) and the bytes
 * alive at arena_peak_task are the lower bound. */
static void check_arena_map(const nb_estimate *e)
{
    int placed = 0;
    for (int i = 0; i < e->g.n_t; i++)
        placed += e->g.t[i].role == NB_T_ACTIVATION && e->g.t[i].first >= 0;
    assert_int_equal(e->n_arena_map, placed);
    int64_t top = 0, at_peak = 0;
    for (int i = 0; i < e->n_arena_map; i++) {
        const nb_arena_slot *a = &e->arena_map[i];
        const nb_npu_tensor *t = &e->g.t[a->tensor];
        assert_int_equal(t->role, NB_T_ACTIVATION);
        assert_int_equal(a->offset, e->arena_offset[a->tensor]);
        assert_int_equal(a->offset % NB_EXEOM_ALIGN, 0);
        assert_int_equal(a->bytes, t->bytes);
        assert_int_equal(a->first, t->first);
        assert_int_equal(a->last, t->last < t->first ? t->first : t->last);
        assert_true(a->last < e->g.n_k);
        int64_t size = (a->bytes + NB_EXEOM_ALIGN - 1) / NB_EXEOM_ALIGN * NB_EXEOM_ALIGN;
        top = a->offset + size > top ? a->offset + size : top;
        if (a->first <= e->arena_peak_task && e->arena_peak_task <= a->last)
            at_peak += size;
        for (int j = 0; j < i; j++) {
            const nb_arena_slot *b = &e->arena_map[j];
            if (b->last < a->first || a->last < b->first || !a->bytes || !b->bytes)
                continue;
            assert_true(a->offset + a->bytes <= b->offset || b->offset + b->bytes <= a->offset);
        }
    }
    assert_int_equal(top, e->arena.arena);
    assert_int_equal(at_peak, e->arena.lower_bound);
}

static void test_conv_rgb_and_depthwise(void **state)
{
    (void)state;
    /* x [1,3,8,8] -> Conv c1 (W [8,3,3,3], pads 1) -> [1,8,8,8] -> depthwise Conv c2
       (W [8,1,3,3], group 8, pads 1) -> y [1,8,8,8] */
    const int64_t dx[4] = {1, 3, 8, 8}, dy[4] = {1, 8, 8, 8}, dw1[4] = {8, 3, 3, 3},
                  dw2[4] = {8, 1, 3, 3}, pads[4] = {1, 1, 1, 1};
    float *w1 = zeros(216), *w2 = zeros(72);
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dy);
    mb_init_floats(mm, "w1", 4, dw1, w1, 216);
    mb_init_floats(mm, "w2", 4, dw2, w2, 72);
    Onnx__NodeProto *c1 = mb_node(mm, "Conv", (const char *[]){"x", "w1", NULL},
                                  (const char *[]){"h", NULL});
    mb_attr_ints(c1, "pads", 4, pads);
    c1->name = "c1";
    Onnx__NodeProto *c2 = mb_node(mm, "Conv", (const char *[]){"h", "w2", NULL},
                                  (const char *[]){"y", NULL});
    mb_attr_ints(c2, "pads", 4, pads);
    mb_attr_int(c2, "group", 8);
    c2->name = "c2";
    nb_estimate e;
    estimate(mm, &e);
    free(w1), free(w2);
    /* the RGB input quantized into NC1HWC0: 1 x ceil(3/32)=1 x 8 x 8 x 32 = 2048 B int8,
       for 192 values */
    const nb_npu_task *q = task(&e, "c1/AscendQuant");
    assert_int_equal(e.g.t[q->out[0]].bytes, 2048);
    assert_int_equal(e.g.t[q->out[0]].format, NB_FMT_NC1HWC0);
    /* c1 weights FRACTAL_Z int8: ceil(3/32)=1 x 3 x 3 x ceil(8/16)=1 x 16 x 32 = 4608;
       bias 16 x 4 + deq_scale 16 x 8 = 192 (8 channels padded to 16): 4800 */
    assert_int_equal(task(&e, "c1")->weight_bytes, 4608 + 192);
    /* depthwise W [8,1,3,3]: Cin 1 padded to 32 and Cout 8 to 16: 1 x 9 x 1 x 16 x 32 =
       4608 B for 72 weights (64x), + 192 */
    assert_int_equal(task(&e, "c2")->weight_bytes, 4608 + 192);
    /* MACs: c1 1 x 8 x 64 outputs x 3 x 9 = 13824; c2 8 x 64 x 1 x 9 = 4608 */
    assert_int_equal(task(&e, "c1")->macs, 13824);
    assert_int_equal(task(&e, "c2")->macs, 4608);
    assert_int_equal(e.macs, 13824 + 4608);
    /* TOTAL_WEIGHT_SIZE: 4608 + 64 + 128 per conv (each 32-byte aligned): 9600 */
    assert_int_equal(e.weight_bytes, 9600);
    /* two quant/dequant pairs; two TransData: the ND input x into NC1HWC0 before its
       AscendQuant, and the NC1HWC0 result back to ND for the output buffer (ATC does the
       same at graph inputs and outputs without --input_fp16_nodes layouts) */
    assert_int_equal(e.g.n_quant, 2);
    assert_int_equal(e.g.n_dequant, 2);
    assert_int_equal(e.g.n_transdata, 2);
    assert_int_equal(e.n_unsupported, 0);
    /* exeom = 64 header + 48 per tensor + 64 per task + weights */
    assert_int_equal(e.exeom_bytes, 64 + 48 * e.g.n_t + 64 * e.g.n_k + 9600);
    assert_int_equal(e.mem_bytes, e.weight_bytes + 64 * e.g.n_k + e.io_bytes + e.arena.arena);
    assert_true(e.arena.arena >= e.arena.lower_bound);
    /* the arena: x in NC1HWC0 fp16 2048 (tasks 0..1), int8 2048 (1..2), c1's int32
       accumulator 1 x 1 x 8 x 8 x 16 x 4 = 4096 (2..3), fp16 2048 (3..4), c2's int8 copy 2048
       (4..5), accumulator 4096 (5..6), fp16 2048 (6..7, read by the TransData to the output):
       7 slots, the peak 2048 + 4096 = 6144 first at task 2 */
    check_arena_map(&e);
    assert_int_equal(e.n_arena_map, 7);
    assert_int_equal(e.arena.lower_bound, 6144);
    assert_int_equal(e.arena_peak_task, 2);
    static const int64_t bytes[7] = {2048, 2048, 4096, 2048, 2048, 4096, 2048};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(e.arena_map[i].bytes, bytes[i]);
        assert_int_equal(e.arena_map[i].first, i);
        assert_int_equal(e.arena_map[i].last, i + 1);
    }
    nb_estimate_free(&e);
}

static void test_gemm_nz_and_rewrites(void **state)
{
    (void)state;
    /* x [1,2,50] -> Flatten -> [1,100] -> Gemm (B const [100,70]) -> BatchNormalization?
       no: Gemm -> Div by a constant -> y [1,70] */
    const int64_t dx[3] = {1, 2, 50}, db[2] = {100, 70}, dy[2] = {1, 70};
    float *bv = zeros(7000), two = 2.0f;
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y", 1, 2, dy);
    mb_init_floats(mm, "B", 2, db, bv, 7000);
    mb_init_floats(mm, "two", 0, NULL, &two, 1);
    mb_node(mm, "Flatten", (const char *[]){"x", NULL}, (const char *[]){"f", NULL})->name = "fl";
    mb_node(mm, "Gemm", (const char *[]){"f", "B", NULL}, (const char *[]){"g", NULL})->name = "gm";
    mb_node(mm, "Div", (const char *[]){"g", "two", NULL}, (const char *[]){"y", NULL})->name = "dv";
    nb_estimate e;
    estimate(mm, &e);
    free(bv);
    /* B [100,70] (K x N) int8 stored N x K in FRACTAL_NZ: K along C0, ceil(100/32)=4 x N in
       rows, ceil(70/16)=5 = 20 tiles of 512 B = 10240; bias and deq_scale for 70 -> 80
       channels: 320 + 640 */
    assert_int_equal(task(&e, "gm")->weight_bytes, 10240 + 960);
    assert_int_equal(task(&e, "gm")->macs, 100 * 70);
    assert_true(has_rewrite(&e, "Flatten 'fl' -> Reshape"));
    assert_true(has_rewrite(&e, "Div 'dv' by a constant -> Mul"));
    assert_true(has_rewrite(&e, "Gemm 'gm' with a constant B kept as one cube op"));
    assert_string_equal(task(&e, "fl")->op_type, "Reshape");
    assert_string_equal(task(&e, "dv")->op_type, "Mul");
    assert_int_equal(e.n_unsupported, 0);
    nb_estimate_free(&e);
}

/* x [1,4,4,4] -> Conv 'cv' (W [4,4,1,1]) -> c -> BatchNormalization 'bn' -> bn_out; y is
 * bn_out, or Relu(x) when bn_out is "" (the BatchNormalization's output omitted). */
static mb_model *conv_bn_model(const char *bn_out)
{
    const int64_t dx[4] = {1, 4, 4, 4}, dw[4] = {4, 4, 1, 1}, d4[1] = {4};
    float w[16] = {0}, one[4] = {1, 1, 1, 1}, zero[4] = {0};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 4, dx);
    mb_output(mm, "y", 1, 4, dx);
    mb_init_floats(mm, "w", 4, dw, w, 16);
    mb_init_floats(mm, "s", 1, d4, one, 4);
    mb_init_floats(mm, "b", 1, d4, zero, 4);
    mb_init_floats(mm, "mu", 1, d4, zero, 4);
    mb_init_floats(mm, "var", 1, d4, one, 4);
    mb_node(mm, "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"c", NULL})->name = "cv";
    mb_node(mm, "BatchNormalization", (const char *[]){"c", "s", "b", "mu", "var", NULL},
            (const char *[]){bn_out, NULL})->name = "bn";
    if (!bn_out[0])
        mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    return mm;
}

/* Conv -> Relu: the Relu runs inside the Conv's AscendDequant (no task of its own; the
 * dequantized tensor takes the Relu's output name); a Relu whose input another node also
 * reads stays a task. */
static void test_relu_fused_into_dequant(void **state)
{
    (void)state;
    for (int shared = 0; shared < 2; shared++) {
        const int64_t dx[4] = {1, 4, 4, 4}, dw[4] = {4, 4, 1, 1};
        float w[16] = {0};
        mb_model *mm = mb_new(13);
        mb_input(mm, "x", 1, 4, dx);
        mb_output(mm, "y", 1, 4, dx);
        mb_init_floats(mm, "w", 4, dw, w, 16);
        mb_node(mm, "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"c", NULL})
            ->name = "cv";
        mb_node(mm, "Relu", (const char *[]){"c", NULL}, (const char *[]){shared ? "r" : "y", NULL})
            ->name = "relu";
        if (shared) { /* y = relu(c) + c: c has two readers */
            mb_node(mm, "Add", (const char *[]){"r", "c", NULL}, (const char *[]){"y", NULL})
                ->name = "add";
        }
        nb_estimate e;
        estimate(mm, &e);
        int relu_tasks = 0;
        for (int i = 0; i < e.g.n_k; i++)
            relu_tasks += !strcmp(e.g.k[i].op_type, "Relu");
        const nb_npu_task *dq = task(&e, "cv/AscendDequant");
        assert_int_equal(relu_tasks, shared ? 1 : 0);
        assert_int_equal(dq->fused_act, shared ? 0 : 1);
        assert_int_equal(has_rewrite(&e, "Relu 'relu' fused into 'cv/AscendDequant'"), !shared);
        if (!shared) {
            assert_string_equal(dq->fused_node, "relu");
            assert_string_equal(e.g.t[dq->out[0]].name, "y");
        }
        nb_estimate_free(&e);
    }
}

static void test_bn_folded_and_lstm_unrolled(void **state)
{
    (void)state;
    /* Conv -> BatchNormalization folds; LSTM over 3 steps unrolls */
    nb_estimate e;
    estimate(conv_bn_model("y"), &e);
    assert_true(has_rewrite(&e, "BatchNormalization 'bn' folded into Conv 'cv'"));
    for (int i = 0; i < e.g.n_k; i++)
        assert_string_not_equal(e.g.k[i].op_type, "BatchNormalization");
    nb_estimate_free(&e);

    /* a BatchNormalization whose output is omitted ("") is not folded (it used to write
       alias[-1]) */
    estimate(conv_bn_model(""), &e);
    assert_false(has_rewrite(&e, "folded"));
    nb_estimate_free(&e);

    /* LSTM: X [3,1,8], hidden 16: 3 tasks, weights once, stored N x K as ONNX holds them:
       W [1,64,8] int8 FRACTAL_NZ is ceil(8/32)=1 x ceil(64/16)=4 tiles = 2048 B, R [1,64,16]
       also 4 tiles = 2048 B, bias int32 2 x 4 x 16 = 128 -> 128 x 4 = 512 B, deq_scale
       uint64 (W's rows then R's) 128 x 8 = 1024 B: 5632 on the first step only */
    const int64_t dX[3] = {3, 1, 8}, dW[3] = {1, 64, 8}, dR[3] = {1, 64, 16},
                  dY[4] = {3, 1, 1, 16};
    float *W = zeros(512), *R = zeros(1024);
    mb_model *mm = mb_new(14);
    mb_input(mm, "X", 1, 3, dX);
    mb_output(mm, "Y", 1, 4, dY);
    mb_init_floats(mm, "W", 3, dW, W, 512);
    mb_init_floats(mm, "R", 3, dR, R, 1024);
    Onnx__NodeProto *l = mb_node(mm, "LSTM", (const char *[]){"X", "W", "R", NULL},
                                 (const char *[]){"Y", NULL});
    l->name = "lstm";
    mb_attr_int(l, "hidden_size", 16);
    estimate(mm, &e);
    free(W), free(R);
    assert_true(has_rewrite(&e, "LSTM 'lstm' unrolled into 3 steps sharing one weight copy"));
    assert_int_equal(task(&e, "lstm/t0")->weight_bytes, 2048 + 2048 + 512 + 1024);
    assert_int_equal(task(&e, "lstm/t1")->weight_bytes, 0);
    /* MACs per step: 1 x 4 x 16 x (8 + 16) = 1536 */
    assert_int_equal(task(&e, "lstm/t2")->macs, 1536);
    assert_int_equal(e.macs, 3 * 1536);
    assert_int_equal(e.weight_bytes, 2048 + 2048 + 512 + 1024);
    nb_estimate_free(&e);
}

static void test_unsupported_reasons(void **state)
{
    (void)state;
    /* Sin: not in the list (Erf, which was, is now rewritten); bidirectional LSTM; an INT64 tensor at run time; a dynamic dim
       inside the graph (NonZero's count) */
    const int64_t d3[2] = {1, 3}, dX[3] = {1, 1, 4}, dW[3] = {2, 8, 4}, dR[3] = {2, 8, 2};
    float *W = zeros(64), *R = zeros(32);
    mb_model *mm = mb_new(13);
    mb_input(mm, "a", 1, 2, d3);
    mb_input(mm, "i", 7, 2, d3);
    mb_input(mm, "X", 1, 3, dX);
    mb_output(mm, "e", 1, 2, d3);
    mb_output(mm, "j", 7, 2, d3);
    mb_output(mm, "r", 1, -1, NULL);
    mb_output(mm, "Y", 1, -1, NULL);
    mb_init_floats(mm, "W", 3, dW, W, 64);
    mb_init_floats(mm, "R", 3, dR, R, 32);
    mb_node(mm, "Sin", (const char *[]){"a", NULL}, (const char *[]){"e", NULL})->name = "sin";
    mb_node(mm, "Neg", (const char *[]){"i", NULL}, (const char *[]){"j", NULL})->name = "neg";
    mb_node(mm, "NonZero", (const char *[]){"a", NULL}, (const char *[]){"nz", NULL})->name =
        "nonzero";
    Onnx__NodeProto *cast = mb_node(mm, "Cast", (const char *[]){"nz", NULL},
                                    (const char *[]){"r", NULL});
    cast->name = "cast";
    mb_attr_int(cast, "to", 1);
    Onnx__NodeProto *l = mb_node(mm, "LSTM", (const char *[]){"X", "W", "R", NULL},
                                 (const char *[]){"Y", NULL});
    l->name = "bilstm";
    mb_attr_int(l, "hidden_size", 2);
    mb_attr_string(l, "direction", "bidirectional");
    nb_estimate e;
    estimate(mm, &e);
    free(W), free(R);
    assert_int_equal(task(&e, "sin")->unit, NB_TASK_CPU);
    /* the reference runs Sin: a CpuOnnx task of the MCU's core, in the exeom */
    assert_string_equal(task(&e, "sin")->reason,
                        "Sin is not in the Nano's op list; the MCU's CPU runs it (float32)");
    assert_true(task(&e, "sin")->cpu_ok);
    assert_true(task(&e, "neg")->cpu_ok);
    assert_true(task(&e, "bilstm")->cpu_ok);
    /* Cast of NonZero's count: a shape known only at run time, which no task holds */
    assert_false(task(&e, "cast")->cpu_ok);
    assert_non_null(strstr(task(&e, "cast")->reason, "; not on the CPU: input 'nz' has a shape "
                                                     "known only at run time"));
    /* the int64 input i is int32 on the NPU; Neg's int64 result j is not */
    assert_non_null(strstr(task(&e, "neg")->reason, "INT64 tensor 'j' at run time"));
    assert_non_null(strstr(task(&e, "cast")->reason, "dynamic shape of 'nz'"));
    assert_non_null(strstr(task(&e, "bilstm")->reason, "LSTM with 2 directions"));
    /* nothing runs NonZero (its count is known only at run time) and the Cast of it; Sin,
       Neg and the LSTM run on the MCU's core */
    assert_int_equal(e.n_unsupported, 2);
    assert_false(task(&e, "nonzero")->cpu_ok);
    nb_estimate_free(&e);
}

/* What the lowering refuses outright (NB_ERR_SHAPE, NB_ERR_ARG), with the message. */
static void test_refused_inputs(void **state)
{
    (void)state;
    const int64_t dn[2] = {2, -1};
    mb_model *mm = mb_new(13);
    mb_input(mm, "d", 1, 2, dn);
    mb_output(mm, "r", 1, 2, dn);
    mb_node(mm, "Relu", (const char *[]){"d", NULL}, (const char *[]){"r", NULL});
    assert_int_equal(estimate_err(mm, NULL), NB_ERR_SHAPE);
    assert_non_null(strstr(last_msg, "input 'd' has dynamic dims [2,N]"));
    const int64_t d[2] = {2, 3};
    mm = mb_new(13);
    mb_input(mm, "x", 1, 2, d);
    mb_output(mm, "y", 1, 2, d);
    mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    nb_npu_opts o = {.weight_bits = 8, .input_fp16_nodes = "x;other"};
    assert_int_equal(estimate_err(mm, &o), NB_ERR_ARG);
    assert_string_equal(last_msg, "--input_fp16_nodes: 'other' is not an input of the model");
}

/* Gemm B is stored N x K (K along C0), whatever transB says; a weight read by two ops is
 * one copy. x [1,100] -> Gemm g1 (Bt [70,100], transB 1) -> [1,70];
 * x -> Gemm g2 (B [100,70]) and x2 [1,100] -> Gemm g3 (the same B) */
static void test_gemm_transb_and_shared_weight(void **state)
{
    (void)state;
    const int64_t dx[2] = {1, 100}, dbt[2] = {70, 100}, db[2] = {100, 70}, dy[2] = {1, 70};
    float *bt = zeros(7000), *b = zeros(7000);
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dx);
    mb_input(mm, "x2", 1, 2, dx);
    mb_output(mm, "y1", 1, 2, dy);
    mb_output(mm, "y2", 1, 2, dy);
    mb_output(mm, "y3", 1, 2, dy);
    mb_init_floats(mm, "Bt", 2, dbt, bt, 7000);
    mb_init_floats(mm, "B", 2, db, b, 7000);
    Onnx__NodeProto *g1 = mb_node(mm, "Gemm", (const char *[]){"x", "Bt", NULL},
                                  (const char *[]){"y1", NULL});
    g1->name = "g1";
    mb_attr_int(g1, "transB", 1);
    mb_node(mm, "Gemm", (const char *[]){"x", "B", NULL}, (const char *[]){"y2", NULL})->name =
        "g2";
    mb_node(mm, "Gemm", (const char *[]){"x2", "B", NULL}, (const char *[]){"y3", NULL})->name =
        "g3";
    nb_estimate e;
    estimate(mm, &e);
    free(bt), free(b);
    /* N x K = [70,100] int8 FRACTAL_NZ: ceil(100/32)=4 x ceil(70/16)=5 tiles = 10240 B,
       transposed or not; bias + deq_scale for 70 -> 80 channels: 320 + 640 = 960 per op */
    assert_int_equal(task(&e, "g1")->weight_bytes, 10240 + 960);
    assert_int_equal(task(&e, "g2")->weight_bytes, 10240 + 960);
    assert_int_equal(task(&e, "g3")->weight_bytes, 960); /* B is g2's copy */
    assert_int_equal(e.weight_bytes, 2 * 10240 + 3 * 960);
    /* g1 and g2 read the same int8 x: one AscendQuant; x2 takes another */
    assert_int_equal(e.g.n_quant, 2);
    assert_int_equal(task(&e, "g1")->macs, 7000);
    nb_estimate_free(&e);
}

/* An If whose condition is known only at run time: both branches are lowered (their
 * weights both count), the If is a CPU task after them. x [1,4]; then: MatMul by Wt
 * [4,8]; else: MatMul by We [4,8]. */
static void test_if_branches_lowered(void **state)
{
    (void)state;
    const int64_t dx[2] = {1, 4}, dw[2] = {4, 8}, dy[2] = {1, 8}, d1[1] = {1};
    float *wt = zeros(32), *we = zeros(32);
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dx);
    mb_input(mm, "cond", 9, 1, d1);
    mb_output(mm, "y", 1, 2, dy);
    mb_init_floats(mm, "Wt", 2, dw, wt, 32);
    mb_init_floats(mm, "We", 2, dw, we, 32);
    Onnx__GraphProto *tg = mb_graph("then");
    mb_gnode(tg, "MatMul", (const char *[]){"x", "Wt", NULL}, (const char *[]){"t", NULL})
        ->name = "mt";
    mb_goutput(tg, "t", 1, 2, dy);
    Onnx__GraphProto *eg = mb_graph("else");
    mb_gnode(eg, "MatMul", (const char *[]){"x", "We", NULL}, (const char *[]){"el", NULL})
        ->name = "me";
    mb_goutput(eg, "el", 1, 2, dy);
    Onnx__NodeProto *n = mb_node(mm, "If", (const char *[]){"cond", NULL},
                                 (const char *[]){"y", NULL});
    n->name = "sel";
    mb_attr_graph(n, "then_branch", tg);
    mb_attr_graph(n, "else_branch", eg);
    nb_estimate e;
    estimate(mm, &e);
    free(wt), free(we);
    /* each W [4,8] stored [8,4] int8 FRACTAL_NZ: ceil(4/32)=1 x ceil(8/16)=1 tile = 512 B, + bias and
       deq_scale for 8 -> 16 channels: 64 + 128 */
    assert_int_equal(task(&e, "sel/then_branch/mt")->unit, NB_TASK_CUBE);
    assert_int_equal(task(&e, "sel/then_branch/mt")->weight_bytes, 512 + 192);
    assert_int_equal(task(&e, "sel/else_branch/me")->weight_bytes, 512 + 192);
    assert_int_equal(e.weight_bytes, 2 * (512 + 192));
    /* then: AscendQuant of x, MatMul, AscendDequant; else: its own AscendQuant of x,
       MatMul, AscendDequant = 6 tasks; then the If. (x's int8 is not shared between the
       branches: only the taken branch's tasks run, so a copy made among the then branch's
       tasks is not there when else runs; sharing it gave zeros, issue 37) */
    const nb_npu_task *k = task(&e, "sel");
    assert_int_equal(k->unit, NB_TASK_CPU);
    assert_non_null(strstr(k->reason, "the CPU picks the branch taken (its 6 branch tasks run "
                           "on the NPU)"));
    assert_non_null(task(&e, "sel/then_branch/mt/AscendQuant"));
    assert_non_null(task(&e, "sel/else_branch/me/AscendQuant"));
    assert_true(nb_task_in_exeom(k)); /* the exeom holds it: not NOT_SUPPORT_OP_TYPE */
    assert_int_equal(e.g.n_k, 7);
    assert_int_equal(e.n_unsupported, 0);
    assert_int_equal(e.macs, 2 * 32);
    nb_estimate_free(&e);
}

/* Cube ops the NPU cannot take as they stand, and a bias computed at run time. */
static void test_cube_operands(void **state)
{
    (void)state;
    /* Conv with run-time weights w [2,1,1,1] -> CPU; Conv (const W [2,1,1,1]) with a
       run-time bias b [2] -> cube task, then an inserted vector Add; a 5-D Conv -> CPU */
    const int64_t dx[4] = {1, 1, 4, 4}, dw[4] = {2, 1, 1, 1}, dy[4] = {1, 2, 4, 4},
                  db[1] = {2}, dx5[5] = {1, 1, 2, 4, 4}, dw5[5] = {2, 1, 1, 1, 1},
                  dy5[5] = {1, 2, 2, 4, 4};
    float w[2] = {1, 2};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 4, dx);
    mb_input(mm, "w", 1, 4, dw);
    mb_input(mm, "b", 1, 1, db);
    mb_input(mm, "x5", 1, 5, dx5);
    mb_output(mm, "y1", 1, 4, dy);
    mb_output(mm, "y2", 1, 4, dy);
    mb_output(mm, "y5", 1, 5, dy5);
    mb_init_floats(mm, "W", 4, dw, w, 2);
    mb_init_floats(mm, "W5", 5, dw5, w, 2);
    mb_node(mm, "Conv", (const char *[]){"x", "w", NULL}, (const char *[]){"y1", NULL})->name =
        "dynw";
    mb_node(mm, "Conv", (const char *[]){"x", "W", "b", NULL}, (const char *[]){"y2", NULL})
        ->name = "dynb";
    mb_node(mm, "Conv", (const char *[]){"x5", "W5", NULL}, (const char *[]){"y5", NULL})
        ->name = "c3d";
    nb_estimate e;
    estimate(mm, &e);
    assert_int_equal(task(&e, "dynw")->unit, NB_TASK_CPU);
    assert_non_null(strstr(task(&e, "dynw")->reason, "run-time weights 'w'"));
    assert_int_equal(task(&e, "dynb")->unit, NB_TASK_CUBE);
    assert_int_equal(task(&e, "dynb/Add_bias")->unit, NB_TASK_VECTOR);
    assert_true(has_rewrite(&e, "Conv 'dynb': the run-time bias 'b' is added by a vector Add"));
    assert_int_equal(task(&e, "c3d")->unit, NB_TASK_CPU);
    assert_non_null(strstr(task(&e, "c3d")->reason, "rank-5 input 'x5'"));
    /* both CPU tasks run on the MCU's core: each reads its node, a one-node ONNX model, as
       its last input (a UINT8 weight of the model's serialized size) */
    int64_t blobs = 0;
    for (int i = 0; i < 2; i++) {
        const nb_npu_task *k = task(&e, i ? "c3d" : "dynw");
        assert_true(k->cpu_ok);
        const nb_npu_tensor *b = &e.g.t[k->in[k->n_in - 1]];
        assert_int_equal(b->gen, 5);
        assert_int_equal(b->dtype, NB_UINT8);
        assert_true(b->bytes > 20);
        blobs += (b->bytes + 31) / 32 * 32;
    }
    /* the weights: dynb's W [2,1,1,1] in FRACTAL_Z, 1 x 1 x 1 x 1 x 16 x 32 = 512 B, and
       its bias + deq_scale for 16 channels, 192 B; W5 goes with the CPU task in float32 ND
       (the core's type: 2 x 4 B, aligned to 32); and the two node models */
    assert_int_equal(e.weight_bytes, 512 + 64 + 128 + 32 + blobs);
    nb_estimate_free(&e);

    /* MatMul of two run-time operands: two AscendQuant, with distinct names */
    const int64_t da[2] = {2, 3}, dbb[2] = {3, 4}, dc[2] = {2, 4};
    mm = mb_new(13);
    mb_input(mm, "a", 1, 2, da);
    mb_input(mm, "bb", 1, 2, dbb);
    mb_output(mm, "c", 1, 2, dc);
    mb_node(mm, "MatMul", (const char *[]){"a", "bb", NULL}, (const char *[]){"c", NULL})->name =
        "mm";
    estimate(mm, &e);
    assert_int_equal(e.g.n_quant, 2);
    assert_int_equal(task(&e, "mm/AscendQuant")->unit, NB_TASK_VECTOR);
    assert_int_equal(task(&e, "mm/AscendQuant_1")->unit, NB_TASK_VECTOR);
    assert_int_equal(task(&e, "mm")->macs, 2 * 4 * 3);
    assert_int_equal(e.weight_bytes, 64 + 128); /* bias + deq_scale, 4 -> 16 channels */
    nb_estimate_free(&e);
}

/* An LSTM whose sequence_lens may be shorter than seq_len: unrolled steps would run them
 * all, so it stays on the CPU; with sequence_lens all equal to seq_len it is unrolled. */
static void test_lstm_sequence_lens(void **state)
{
    (void)state;
    const int64_t dX[3] = {2, 1, 4}, dW[3] = {1, 8, 4}, dR[3] = {1, 8, 2}, d1[1] = {1},
                  dB[2] = {1, 16};
    float *W = zeros(32), *R = zeros(16), *B = zeros(16), two = 2;
    for (int full = 0; full < 2; full++) {
        mb_model *mm = mb_new(13);
        mb_input(mm, "X", 1, 3, dX);
        mb_output(mm, "Y", 1, -1, NULL);
        mb_init_floats(mm, "W", 3, dW, W, 32);
        mb_init_floats(mm, "R", 3, dR, R, 16);
        mb_init_floats(mm, "B", 2, dB, B, 16);
        if (full) { /* a constant [2] (cast to int32 by a Cast the fold removes) */
            mb_init_floats(mm, "lenf", 1, d1, &two, 1);
            Onnx__NodeProto *cn = mb_node(mm, "Cast", (const char *[]){"lenf", NULL},
                                          (const char *[]){"len", NULL});
            mb_attr_int(cn, "to", 6);
        } else {
            mb_input(mm, "len", 6, 1, d1);
        }
        Onnx__NodeProto *l = mb_node(mm, "LSTM", (const char *[]){"X", "W", "R", "B", "len",
                                                                 NULL},
                                     (const char *[]){"Y", NULL});
        l->name = "lstm";
        mb_attr_int(l, "hidden_size", 2);
        nb_estimate e;
        estimate(mm, &e);
        if (full) {
            assert_true(has_rewrite(&e, "LSTM 'lstm' unrolled into 2 steps"));
            assert_int_equal(e.n_unsupported, 0);
        } else {
            assert_int_equal(task(&e, "lstm")->unit, NB_TASK_CPU);
            assert_non_null(strstr(task(&e, "lstm")->reason, "sequence_lens 'len'"));
        }
        nb_estimate_free(&e);
    }
    free(W), free(R), free(B);
}

/* Ops the Nano lacks, rewritten into vector ops it has (a, b: FLOAT [1,4] inputs). */
static void test_vector_decompositions(void **state)
{
    (void)state;
    const int64_t d[2] = {1, 4};
    mb_model *mm = mb_new(13);
    mb_input(mm, "a", 1, 2, d);
    mb_input(mm, "b", 1, 2, d);
    const char *outs[] = {"s", "q", "h", "g", "l"};
    for (int i = 0; i < 5; i++)
        mb_output(mm, outs[i], i < 3 ? 1 : 9, 2, d);
    mb_node(mm, "Sqrt", (const char *[]){"a", NULL}, (const char *[]){"s", NULL})->name = "sq";
    mb_node(mm, "Div", (const char *[]){"a", "b", NULL}, (const char *[]){"q", NULL})->name =
        "dv";
    mb_node(mm, "HardSigmoid", (const char *[]){"a", NULL}, (const char *[]){"h", NULL})->name =
        "hs";
    mb_node(mm, "GreaterOrEqual", (const char *[]){"a", "b", NULL},
            (const char *[]){"g", NULL})->name = "ge";
    mb_node(mm, "Less", (const char *[]){"a", "b", NULL}, (const char *[]){"l", NULL})->name =
        "ls";
    nb_estimate e;
    estimate(mm, &e);
    assert_int_equal(e.n_unsupported, 0);
    assert_true(has_rewrite(&e, "Sqrt 'sq' -> Pow(x, 0.5)"));
    assert_true(has_rewrite(&e, "Div 'dv' -> Mul(x, Pow(y, -1))"));
    assert_true(has_rewrite(&e, "HardSigmoid 'hs' -> Clip(Add(Mul(x, alpha), beta), 0, 1)"));
    assert_true(has_rewrite(&e, "GreaterOrEqual 'ge' -> Or(Greater(a, b), Equal(a, b))"));
    assert_true(has_rewrite(&e, "Less 'ls' -> Greater(b, a)"));
    assert_string_equal(task(&e, "sq")->op_type, "Pow");
    assert_string_equal(task(&e, "dv/Pow")->op_type, "Pow");
    assert_string_equal(task(&e, "dv")->op_type, "Mul");
    assert_string_equal(task(&e, "hs/Mul")->op_type, "Mul");
    assert_string_equal(task(&e, "hs/Add")->op_type, "Add");
    assert_string_equal(task(&e, "hs")->op_type, "Clip");
    assert_string_equal(task(&e, "ge/Greater")->op_type, "Greater");
    assert_string_equal(task(&e, "ge/Equal")->op_type, "Equal");
    assert_string_equal(task(&e, "ge")->op_type, "Or");
    assert_int_equal(e.g.t[task(&e, "ge")->out[0]].dtype, NB_BOOL);
    assert_string_equal(task(&e, "ls")->op_type, "Greater");
    assert_int_equal(e.g.n_k, 1 + 2 + 3 + 3 + 1);
    /* six fp16 scalar constants (0.5; -1; alpha, beta, 0, 1), 2 B each, 32-byte aligned */
    assert_int_equal(e.weight_bytes, 6 * 32);
    nb_estimate_free(&e);
}

/* Regressions from a breaker's cases: a Concat of 12 inputs reads them all; a MatMul by a
 * 1-D B counts every row; a weight read in two layouts is one copy per layout; each layer's
 * weight bytes (32-byte aligned) sum to TOTAL_WEIGHT_SIZE. */
static void test_many_operands_and_layouts(void **state)
{
    (void)state;
    const int64_t d[2] = {1, 64}, dc[2] = {1, 768};
    mb_model *mm = mb_new(13);
    char names[12][8];
    const char *ins[13];
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof names[i], "x%d", i);
        mb_input(mm, names[i], 1, 2, d);
        ins[i] = names[i];
    }
    ins[12] = NULL;
    mb_output(mm, "c", 1, 2, dc);
    Onnx__NodeProto *cc = mb_node(mm, "Concat", ins, (const char *[]){"c", NULL});
    cc->name = "cat";
    mb_attr_int(cc, "axis", 1);
    nb_estimate e;
    estimate(mm, &e);
    assert_int_equal(task(&e, "cat")->n_in, 12);
    nb_estimate_free(&e);

    /* A [4,8,64] x B [64] -> [4,8]: 32 rows of 64 MACs = 2048; B as 1 x 64 (N x K), read
       again by a Gemm with transB = 0 as [64, 1] (K x N) -> the same N x K copy */
    const int64_t da[3] = {4, 8, 64}, db[1] = {64}, dy[2] = {4, 8}, dg[2] = {1, 64},
                  db2[2] = {64, 1}, dgy[2] = {1, 1};
    float *b = zeros(64);
    mm = mb_new(13);
    mb_input(mm, "a", 1, 3, da);
    mb_input(mm, "g", 1, 2, dg);
    mb_output(mm, "y", 1, 2, dy);
    mb_output(mm, "gy", 1, 2, dgy);
    mb_output(mm, "cy", 1, 2, dgy);
    mb_init_floats(mm, "B", 1, db, b, 64);
    mb_init_floats(mm, "B2", 2, db2, b, 64);
    mb_node(mm, "MatMul", (const char *[]){"a", "B", NULL}, (const char *[]){"y", NULL})->name =
        "mv";
    mb_node(mm, "Gemm", (const char *[]){"g", "B2", NULL}, (const char *[]){"gy", NULL})->name =
        "gm";
    Onnx__NodeProto *g2 = mb_node(mm, "Gemm", (const char *[]){"g", "B2", NULL},
                                  (const char *[]){"cy", NULL});
    g2->name = "gm2";
    estimate(mm, &e);
    free(b);
    assert_int_equal(task(&e, "mv")->macs, 2048);
    /* B [64] as [1,64] int8 FRACTAL_NZ: 2 x 1 tiles = 1024; B2 stored [1,64] too: 1024 at
       gm, none at gm2 (the same copy); each op's bias + deq_scale: 64 + 128 */
    assert_int_equal(task(&e, "mv")->weight_bytes, 1024 + 192);
    assert_int_equal(task(&e, "gm")->weight_bytes, 1024 + 192);
    assert_int_equal(task(&e, "gm2")->weight_bytes, 192);
    int64_t sum = 0;
    for (int i = 0; i < e.g.n_k; i++)
        sum += e.g.k[i].weight_bytes;
    assert_int_equal(sum, e.weight_bytes);
    nb_estimate_free(&e);
}

/* ATC's --input_fp16_nodes / --output_type: x [2,3] -> Relu -> y. By default both buffers
 * are fp16: 6 x 2 + 6 x 2 = 24 B. With x not listed and FP32 outputs, both are float32 (24 B
 * each, 48 B) and two Casts are inserted. */
static void test_boundary_casts(void **state)
{
    (void)state;
    const int64_t d[2] = {2, 3};
    for (int v = 0; v < 2; v++) {
        mb_model *mm = mb_new(13);
        mb_input(mm, "x", 1, 2, d);
        mb_output(mm, "y", 1, 2, d);
        mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
        nb_npu_opts o = {.weight_bits = 8, .input_fp16_nodes = v ? "" : NULL,
                         .output_fp32 = v == 1};
        nb_estimate e;
        estimate_with(mm, &o, &e);
        assert_int_equal(e.g.n_cast, v ? 2 : 0);
        assert_int_equal(e.io_bytes, v ? 48 : 24);
        nb_estimate_free(&e);
    }
}

/* The real openWakeWord models (tests/data/fetch_models.sh) give the sizes recorded in
 * tests/oracle/estimate_expected.tsv: a change in lowering or planning that moves a number
 * shows here, and the note of the change must say why. */
static void test_real_models_stable(void **state)
{
    (void)state;
    char dir[1024];
    nb_models_dir(dir, sizeof dir);
    FILE *f = fopen(NB_SOURCE_DIR "/tests/oracle/estimate_expected.tsv", "r");
    assert_non_null(f);
    char line[1024];
    int rows = 0;
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        char model[128], shape[256], unsup[256];
        long long w, mem, ex, ar, lb, macs;
        if (sscanf(line, "%127s %255s %lld %lld %lld %lld %lld %lld %255s", model, shape, &w,
                   &mem, &ex, &ar, &lb, &macs, unsup) != 9)
            fail_msg("bad row: %s", line);
        nb_model *m;
        nb_estimate e;
        load_and_estimate(dir, model, shape, &ops, &m, &e);
        char got[256] = "";
        for (int i = 0; i < e.n_unsupported; i++) { /* sorted by name, as the file */
            int best = -1;
            for (int k = 0; k < e.n_unsupported; k++)
                if (!strstr(got, e.unsupported[k].op) &&
                    (best < 0 || strcmp(e.unsupported[k].op, e.unsupported[best].op) < 0))
                    best = k;
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "",
                     e.unsupported[best].op);
        }
        print_message("%-22s weight %8lld mem %8lld exeom %8lld arena %7lld / bound %7lld\n",
                      model, (long long)e.weight_bytes, (long long)e.mem_bytes,
                      (long long)e.exeom_bytes, (long long)e.arena.arena,
                      (long long)e.arena.lower_bound);
        assert_int_equal(e.weight_bytes, w);
        int64_t layer_sum = 0; /* the -p column adds up to TOTAL_WEIGHT_SIZE */
        for (int k = 0; k < e.g.n_k; k++)
            layer_sum += e.g.k[k].weight_bytes;
        assert_int_equal(layer_sum, w);
        assert_int_equal(e.mem_bytes, mem);
        assert_int_equal(e.exeom_bytes, ex);
        assert_int_equal(e.arena.arena, ar);
        assert_int_equal(e.arena.lower_bound, lb);
        assert_int_equal(e.macs, macs);
        assert_string_equal(got[0] ? got : "-", unsup);
        check_arena_map(&e);
        nb_estimate_free(&e);
        nb_model_free(m);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 9);
}

/* What no task holds, NPU or CPU: a Concat of 9 run-time inputs (a task descriptor has 8
 * operands) is a task nothing runs, as atc will refuse it; a Split into 5 is 5 Slices. */
static void test_operand_limits(void **state)
{
    (void)state;
    const int64_t d[2] = {1, 2}, dy[2] = {1, 18}, dz[2] = {1, 10};
    static const char *const names[9] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    mb_model *mm = mb_new(13);
    for (int i = 0; i < 9; i++)
        mb_input(mm, names[i], 1, 2, d);
    mb_output(mm, "y", 1, 2, dy);
    const char *ins[10];
    for (int i = 0; i < 9; i++)
        ins[i] = names[i];
    ins[9] = NULL;
    Onnx__NodeProto *cat = mb_node(mm, "Concat", ins, (const char *[]){"y", NULL});
    cat->name = "cat9";
    mb_attr_int(cat, "axis", 1);
    nb_estimate e;
    estimate(mm, &e);
    assert_int_equal(task(&e, "cat9")->unit, NB_TASK_CPU);
    assert_false(task(&e, "cat9")->cpu_ok);
    assert_non_null(strstr(task(&e, "cat9")->reason, "9 inputs and 1 outputs (a task holds 8 and 4)"));
    assert_int_equal(e.n_unsupported, 1);
    nb_estimate_free(&e);
    mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dz);
    static const char *const outs[6] = {"o1", "o2", "o3", "o4", "o5", NULL};
    for (int i = 0; i < 5; i++)
        mb_output(mm, outs[i], 1, 2, d);
    Onnx__NodeProto *sp = mb_node(mm, "Split", (const char *[]){"x", NULL}, outs);
    sp->name = "split5";
    mb_attr_int(sp, "axis", 1);
    estimate(mm, &e);
    assert_int_equal(e.n_unsupported, 0);
    nb_estimate_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_rgb_and_depthwise),
        cmocka_unit_test(test_gemm_nz_and_rewrites),
        cmocka_unit_test(test_bn_folded_and_lstm_unrolled),
        cmocka_unit_test(test_relu_fused_into_dequant),
        cmocka_unit_test(test_unsupported_reasons),
        cmocka_unit_test(test_operand_limits),
        cmocka_unit_test(test_refused_inputs),
        cmocka_unit_test(test_gemm_transb_and_shared_weight),
        cmocka_unit_test(test_if_branches_lowered),
        cmocka_unit_test(test_cube_operands),
        cmocka_unit_test(test_lstm_sequence_lens),
        cmocka_unit_test(test_vector_decompositions),
        cmocka_unit_test(test_many_operands_and_layouts),
        cmocka_unit_test(test_boundary_casts),
        cmocka_unit_test(test_real_models_stable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
