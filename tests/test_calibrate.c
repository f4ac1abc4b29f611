#define _POSIX_C_SOURCE 200809L
/* calibrate's decisions through its entry point (nb_calibrate, issue 18), on models built
 * here and batches in memory: a Conv's BatchNormalization folded (its weights and bias), ARQ's
 * per-channel weight scales, and the bias corrected for the weights' quantization error.
 * Every expected number is worked by hand next to its test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "model_builder.h"
#include "nb/quant.h"
#include "tmpdir.h"

/* y = BatchNormalization(Conv(x, W), scale [2, 4], B [0.5, -1], mean [1, 0], var [0, 3],
 * epsilon 1), x [1,2,4,4], W [2,2,1,1] = [[1, -2], [0.5, 0.25]] (make_fixture's conv_bn).
 * Folded: a = scale / sqrt(var + eps) = [2 / 1, 4 / 2] = [2, 2]; W' = a W = [[2, -4], [1, 0.5]];
 * b' = a (0 - mean) + B = [-2 + 0.5, 0 - 1] = [-1.5, -1]. ARQ, symmetric per output channel:
 * scale_w = max |W'| / 127 = [4 / 127, 1 / 127]. Without bias correction the bias is b'. */
static void test_bn_folded(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t dx[] = {1, 2, 4, 4}, dw[] = {2, 2, 1, 1}, dc[] = {2};
    const float w[4] = {1, -2, 0.5f, 0.25f}, sc[2] = {2, 4}, b[2] = {0.5f, -1},
                mean[2] = {1, 0}, var[2] = {0, 3};
    mb_input(m, "x", 1, 4, dx);
    mb_output(m, "y", 1, 4, dx);
    mb_init_floats(m, "W", 4, dw, w, 4);
    mb_init_floats(m, "s", 1, dc, sc, 2);
    mb_init_floats(m, "B", 1, dc, b, 2);
    mb_init_floats(m, "mean", 1, dc, mean, 2);
    mb_init_floats(m, "var", 1, dc, var, 2);
    const char *ci[] = {"x", "W", NULL}, *co[] = {"c", NULL};
    mb_node(m, "Conv", ci, co)->name = (char *)"conv";
    const char *bi[] = {"c", "s", "B", "mean", "var", NULL}, *bo[] = {"y", NULL};
    Onnx__NodeProto *bn = mb_node(m, "BatchNormalization", bi, bo);
    bn->name = (char *)"bn";
    mb_attr_float(bn, "epsilon", 1.0f);
    char path[512], save[512];
    snprintf(path, sizeof path, "%s/conv_bn.onnx", tmpdir);
    snprintf(save, sizeof save, "%s/bn/c", tmpdir);
    assert_int_equal(mb_write(m, path), 0);
    mb_free(m);
    nb_tensor *x = NULL;
    nb_status st = {0};
    assert_int_equal(nb_tensor_new(NB_FLOAT, 4, dx, &x, &st), NB_OK);
    for (int i = 0; i < 32; i++)
        ((float *)x->data)[i] = (float)sin(i);
    const nb_tensor *batches[1] = {x};
    nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                           .n_batches = 1, .no_bias_correction = true};
    nb_calibrate_result r;
    assert_int_equal(nb_calibrate(&o, &r, &st), NB_OK);
    assert_int_equal(r.n_layers, 1);
    assert_string_equal(r.layers[0].name, "conv");
    assert_string_equal(r.layers[0].fused_bn, "bn");
    assert_int_equal(r.layers[0].channels, 2);
    assert_float_equal(r.layers[0].scale_w[0], 4.0f / 127, 1e-9);
    assert_float_equal(r.layers[0].scale_w[1], 1.0f / 127, 1e-9);
    assert_float_equal(r.layers[0].bias[0], -1.5, 1e-6);
    assert_float_equal(r.layers[0].bias[1], -1.0, 1e-6);
    nb_calibrate_result_free(&r);
    nb_tensor_free(x);
}

/* y = Gemm(x [1,2], W [2,2] = [[1, 0.3], [-0.5, 2]], b = [0.1, 0.2], transB = 1): output
 * channel c is row c of W. ARQ: scale_w = [1 / 127, 2 / 127]. Quantized: row 0: 1 -> 127
 * (exact), 0.3 / (1/127) = 38.1 -> 38 -> 38 / 127 = 0.2992126, error -0.0007874; row 1:
 * -0.5 / (2/127) = -31.75 -> -32 -> -0.5039370, error -0.0039370; 2 -> 127 (exact).
 * Batches x = (1, 2) and (3, 4): the input's channel means m = (2, 3). The corrected bias
 * b_c = b - sum_k error[c][k] m[k]: b_c0 = 0.1 + 0.0007874 x 3 = 0.1023622, b_c1 = 0.2 +
 * 0.0039370 x 2 = 0.2078740. With correction off, b itself. */
static void test_bias_corrected(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t dx[] = {1, 2}, dw[] = {2, 2}, db[] = {2};
    const float w[4] = {1, 0.3f, -0.5f, 2}, b[2] = {0.1f, 0.2f};
    mb_input(m, "x", 1, 2, dx);
    mb_output(m, "y", 1, 2, dx);
    mb_init_floats(m, "W", 2, dw, w, 4);
    mb_init_floats(m, "b", 1, db, b, 2);
    const char *gi[] = {"x", "W", "b", NULL}, *go[] = {"y", NULL};
    Onnx__NodeProto *g = mb_node(m, "Gemm", gi, go);
    g->name = (char *)"gemm";
    mb_attr_int(g, "transB", 1);
    char path[512], save[512];
    snprintf(path, sizeof path, "%s/gemm.onnx", tmpdir);
    assert_int_equal(mb_write(m, path), 0);
    mb_free(m);
    nb_status st = {0};
    nb_tensor *x1 = NULL, *x2 = NULL;
    assert_int_equal(nb_tensor_new(NB_FLOAT, 2, dx, &x1, &st), NB_OK);
    assert_int_equal(nb_tensor_new(NB_FLOAT, 2, dx, &x2, &st), NB_OK);
    ((float *)x1->data)[0] = 1, ((float *)x1->data)[1] = 2;
    ((float *)x2->data)[0] = 3, ((float *)x2->data)[1] = 4;
    const nb_tensor *batches[2] = {x1, x2};
    for (int corr = 1; corr >= 0; corr--) {
        snprintf(save, sizeof save, "%s/gemm%d/g", tmpdir, corr);
        nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                               .n_batches = 2, .no_bias_correction = !corr};
        nb_calibrate_result r;
        assert_int_equal(nb_calibrate(&o, &r, &st), NB_OK);
        assert_float_equal(r.layers[0].scale_w[0], 1.0f / 127, 1e-9);
        assert_float_equal(r.layers[0].scale_w[1], 2.0f / 127, 1e-9);
        assert_float_equal(r.layers[0].bias[0], corr ? 0.1023622 : 0.1, 1e-6);
        assert_float_equal(r.layers[0].bias[1], corr ? 0.2078740 : 0.2, 1e-6);
        assert_int_equal(r.batch_num, 2);
        nb_calibrate_result_free(&r);
    }
    /* a batch of another shape: refused with the batch named, nothing written */
    const int64_t bad_d[] = {1, 3};
    nb_tensor *bad = NULL;
    assert_int_equal(nb_tensor_new(NB_FLOAT, 2, bad_d, &bad, &st), NB_OK);
    const nb_tensor *bad_batches[1] = {bad};
    snprintf(save, sizeof save, "%s/gemm_bad/g", tmpdir);
    nb_calibrate_opts o = {.model = path, .save_path = save, .batches = bad_batches,
                           .n_batches = 1};
    nb_calibrate_result r;
    assert_int_equal(nb_calibrate(&o, &r, &st), NB_ERR_DATA);
    assert_string_equal(st.msg, "batch 0 of input 0: FLOAT [1,3], but input 'x' is FLOAT [1,2]");
    nb_calibrate_result_free(&r);
    nb_tensor_free(bad);
    nb_tensor_free(x1);
    nb_tensor_free(x2);
}

/* AdaRound through nb_calibrate (issue 40): y = Conv(x [1,2,6,6], W [3,2,3,3], pads 1), W
 * and four calibration batches from sin and cos (no bias correction: the weights alone
 * differ). Each batch gives every one of its 6 x 6 output positions as a sample (a quota of
 * 4096 / 4 a batch), 144 in all. The layer's output error against float on the calibration
 * data (the evaluation's default: the first 8 calibration batches, here all four) is at
 * most nearest's: nb_adaround keeps a row's learned rounding only when it is better on both
 * its learning and its held-out samples, and these are all the positions the evaluation
 * sees. The config's override for the layer wins over the option; common_config's
 * weight_round alone applies it. */
static void test_adaround_conv(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t dx[] = {1, 2, 6, 6}, dw[] = {3, 2, 3, 3}, dy[] = {1, 3, 6, 6};
    float w[54];
    for (int i = 0; i < 54; i++)
        w[i] = (float)(0.5 * sin(1.7 * i + 0.3));
    mb_input(m, "x", 1, 4, dx);
    mb_output(m, "y", 1, 4, dy);
    mb_init_floats(m, "W", 4, dw, w, 54);
    Onnx__NodeProto *c = mb_node(m, "Conv", (const char *[]){"x", "W", NULL},
                                 (const char *[]){"y", NULL});
    c->name = (char *)"conv";
    mb_attr_ints(c, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    char path[512], save[512], cfg[512];
    snprintf(path, sizeof path, "%s/ada_conv.onnx", tmpdir);
    assert_int_equal(mb_write(m, path), 0);
    mb_free(m);
    nb_status st = {0};
    nb_tensor *x[4] = {NULL};
    for (int b = 0; b < 4; b++) {
        assert_int_equal(nb_tensor_new(NB_FLOAT, 4, dx, &x[b], &st), NB_OK);
        for (int i = 0; i < 72; i++) /* correlated channels: the rounding's choice matters */
            ((float *)x[b]->data)[i] = (float)(sin(0.37 * i + b) + 0.5 * cos(0.11 * i * (b + 1)));
    }
    const nb_tensor *batches[4] = {x[0], x[1], x[2], x[3]};
    double sqnr[2];
    for (int ada = 0; ada < 2; ada++) {
        snprintf(save, sizeof save, "%s/ada_conv%d/c", tmpdir, ada);
        nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                               .n_batches = 4, .no_bias_correction = true,
                               .weight_round_set = true,
                               .weight_round = ada ? NB_ROUND_ADAROUND : NB_ROUND_NEAREST};
        nb_calibrate_result r;
        if (nb_calibrate(&o, &r, &st))
            fail_msg("%s", st.msg);
        assert_int_equal(r.layers[0].weight_round, ada ? NB_ROUND_ADAROUND : NB_ROUND_NEAREST);
        assert_int_equal(r.layers[0].ada_samples, ada ? 144 : 0);
        if (ada)
            assert_true(r.layers[0].ada_changed > 0);
        sqnr[ada] = r.layers[0].out_sqnr;
        nb_calibrate_result_free(&r);
    }
    print_message("conv layer output SQNR on the calibration data: nearest %.3f dB, adaround %.3f dB\n", sqnr[0], sqnr[1]);
    assert_true(sqnr[1] >= sqnr[0]);
    /* the layer's override wins over the option; common_config alone applies */
    static const char *const cfgs[2] = {
        "override_layer_configs { layer_name: \"conv\" calibration_config { weight_round: "
        "NEAREST } }\n",
        "common_config { weight_round: ADAROUND }\n"};
    for (int k = 0; k < 2; k++) {
        snprintf(cfg, sizeof cfg, "%s/ada%d.cfg", tmpdir, k);
        FILE *f = fopen(cfg, "w");
        assert_non_null(f);
        fprintf(f, "batch_num: 4\n%s", cfgs[k]);
        fclose(f);
        snprintf(save, sizeof save, "%s/ada_cfg%d/c", tmpdir, k);
        nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                               .n_batches = 4, .config_path = cfg, .weight_round_set = k == 0,
                               .weight_round = NB_ROUND_ADAROUND};
        nb_calibrate_result r;
        if (nb_calibrate(&o, &r, &st))
            fail_msg("%s", st.msg);
        assert_int_equal(r.layers[0].weight_round, k ? NB_ROUND_ADAROUND : NB_ROUND_NEAREST);
        nb_calibrate_result_free(&r);
    }
    for (int b = 0; b < 4; b++)
        nb_tensor_free(x[b]);
}

static char warned[2048];
static void keep_warning(void *user, const char *msg)
{
    (void)user;
    snprintf(warned, sizeof warned, "%s", msg);
}

/* The guard of a chosen algorithm (issue 26), on a long tail: x [1, 1024] holds 1000 small
 * values k / 1000 (k = 0..999) and 24 values of 100; y = Gemm(x, W [1024, 1] of ones).
 * MinMax's range [0, 100] keeps the tail exact; its error is on the small values, at most
 * half a step of 100/255: energy 24 x 100^2 + sum (k/1000)^2 = 240333, noise at most
 * 1000 x 0.196^2 = 38.4, so MinMax's input SQNR is above 10 log10(240333 / 38.4) = 38 dB.
 * IFMR told to start from the 90th percentile (max_percentile 0.9, search 0.7 .. 1.3): the
 * 90th percentile of the 1024 values is the 922nd, 0.922 (within a histogram bin of
 * 100 / 4096 = 0.024), so it clips at most at 1.3 x (0.922 + 0.024) = 1.23: the 24 tail
 * values lose at least 98.77 each, noise at least 24 x 98.77^2 = 234130, an SQNR under
 * 10 log10(240333 / 234130) = 0.114 dB: more than 6 dB
 * under MinMax's, so the warning names the algorithm, the layer and both figures. auto
 * keeps the better range (MinMax's among its five) and says nothing. */
static void test_clipping_guard(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t dx[] = {1, 1024}, dw[] = {1024, 1}, dy[] = {1, 1};
    static float w[1024];
    for (int i = 0; i < 1024; i++)
        w[i] = 1;
    mb_input(m, "x", 1, 2, dx);
    mb_output(m, "y", 1, 2, dy);
    mb_init_floats(m, "W", 2, dw, w, 1024);
    const char *gi[] = {"x", "W", NULL}, *go[] = {"y", NULL};
    mb_node(m, "Gemm", gi, go)->name = (char *)"tail";
    char path[512], save[512], cfg[512];
    snprintf(path, sizeof path, "%s/tail.onnx", tmpdir);
    assert_int_equal(mb_write(m, path), 0);
    mb_free(m);
    snprintf(cfg, sizeof cfg, "%s/tail.cfg", tmpdir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "common_config {\n  ifmr_quantize {\n    max_percentile: 0.9\n"
               "    min_percentile: 0.9\n    search_range_start: 0.7\n"
               "    search_range_end: 1.3\n    search_step: 0.01\n  }\n}\n");
    fclose(f);
    nb_status st = {0};
    nb_tensor *x = NULL;
    assert_int_equal(nb_tensor_new(NB_FLOAT, 2, dx, &x, &st), NB_OK);
    for (int k = 0; k < 1024; k++)
        ((float *)x->data)[k] = k < 1000 ? (float)k / 1000 : 100;
    const nb_tensor *batches[1] = {x};
    for (int autoalgo = 0; autoalgo < 2; autoalgo++) {
        warned[0] = 0;
        snprintf(save, sizeof save, "%s/tail%d/t", tmpdir, autoalgo);
        nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                               .n_batches = 1, .config_path = cfg, .algo_set = true,
                               .algo = autoalgo ? NB_ACT_AUTO : NB_ACT_IFMR,
                               .warn = keep_warning};
        nb_calibrate_result r;
        assert_int_equal(nb_calibrate(&o, &r, &st), NB_OK);
        if (!autoalgo) {
            assert_true(r.layers[0].clip_max <= 1.23);
            assert_true(r.layers[0].act_sqnr < 0.114);
            assert_non_null(strstr(warned, "ifmr clips what 1 of 1 layers use"));
            assert_non_null(strstr(warned, "'tail'"));
        } else {
            assert_true(r.layers[0].act_sqnr > 38);
            assert_int_equal(warned[0], 0);
        }
        nb_calibrate_result_free(&r);
    }
    nb_tensor_free(x);
}

/* The placement advice (issue 21): y = Log(MatMul(Pow(x, 2), I)), x [1,4], nodes pow, mm,
 * log; minmax on two batches, loud x = (30000, 20000, 10000, 5000) and quiet x = (10, 20,
 * 30, 40). mm's input is the power: loud (9e8, 4e8, 1e8, 2.5e7), quiet (100, 400, 900, 1600);
 * its range [0, 9e8]. At int16 the step is 9e8 / 65535 = 13733: the quiet batch's four values
 * are all below half of it (6867) and round to 0, the loud batch's none: 1 of 2 inputs loses
 * more than 20% (100% on input 1), so no quantization the cube takes holds it. At int8 (step
 * 9e8 / 255 = 3.53e6) 4 of the 8 nonzero values round to 0 (0.5): INT16 is advised too (on
 * the NPU it is the better of the two). The nodes for the CPU: mm; back from it, the power (9e8 >
 * 65504, fp16 cannot hold it) made by pow, whose input x is the model's; forward, mm's output
 * (9e8) read by log, whose output (ln 9e8 = 20.6) fp16 holds: "pow;mm;log". */
static void test_cpu_advice(void **state)
{
    (void)state;
    mb_model *m = mb_new(13);
    const int64_t dx[] = {1, 4}, dw[] = {4, 4}, d0[] = {0};
    float eye[16] = {0}, two = 2;
    for (int i = 0; i < 4; i++)
        eye[5 * i] = 1;
    mb_input(m, "x", 1, 2, dx);
    mb_output(m, "y", 1, 2, dx);
    mb_init_floats(m, "W", 2, dw, eye, 16);
    mb_init_floats(m, "two", 0, d0, &two, 1);
    mb_node(m, "Pow", (const char *[]){"x", "two", NULL}, (const char *[]){"p", NULL})->name =
        (char *)"pow";
    mb_node(m, "MatMul", (const char *[]){"p", "W", NULL}, (const char *[]){"e", NULL})->name =
        (char *)"mm";
    mb_node(m, "Log", (const char *[]){"e", NULL}, (const char *[]){"y", NULL})->name =
        (char *)"log";
    char path[512], save[512];
    snprintf(path, sizeof path, "%s/power.onnx", tmpdir);
    snprintf(save, sizeof save, "%s/power/p", tmpdir);
    assert_int_equal(mb_write(m, path), 0);
    mb_free(m);
    nb_status st = {0};
    nb_tensor *x[2] = {NULL, NULL};
    const float v[2][4] = {{30000, 20000, 10000, 5000}, {10, 20, 30, 40}};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(nb_tensor_new(NB_FLOAT, 2, dx, &x[b], &st), NB_OK);
        memcpy(x[b]->data, v[b], sizeof v[b]);
    }
    const nb_tensor *batches[2] = {x[0], x[1]};
    nb_calibrate_opts o = {.model = path, .save_path = save, .batches = batches,
                           .n_batches = 2, .algo_set = true, .algo = NB_ACT_MINMAX,
                           .no_bias_correction = true};
    nb_calibrate_result r;
    assert_int_equal(nb_calibrate(&o, &r, &st), NB_OK);
    assert_int_equal(r.n_layers, 1);
    const nb_calib_layer_report *l = &r.layers[0];
    assert_string_equal(l->name, "mm");
    assert_float_equal(l->clip_max, 9e8, 1e3);
    assert_float_equal(l->zeroed16, 1.0, 1e-9);
    assert_int_equal(l->zeroed16_input, 1);
    assert_int_equal(l->zeroed16_over, 1);
    assert_true(l->suggests_cpu);
    assert_float_equal(l->zeroed, 0.5, 1e-6);
    assert_true(l->suggests_int16);
    assert_non_null(r.cpu_nodes);
    assert_string_equal(r.cpu_nodes, "pow;mm;log");
    nb_calibrate_result_free(&r);
    /* calibrated with that advice: mm stays float, no layer left, no advice */
    o.cpu_nodes = "pow;mm;log";
    snprintf(save, sizeof save, "%s/power/q", tmpdir);
    assert_int_equal(nb_calibrate(&o, &r, &st), NB_OK);
    assert_int_equal(r.n_layers, 0);
    assert_null(r.cpu_nodes);
    nb_calibrate_result_free(&r);
    for (int b = 0; b < 2; b++)
        nb_tensor_free(x[b]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_folded),
        cmocka_unit_test(test_bias_corrected),
        cmocka_unit_test(test_clipping_guard),
        cmocka_unit_test(test_cpu_advice),
        cmocka_unit_test(test_adaround_conv),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
