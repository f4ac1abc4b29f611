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
    assert_non_null(strstr(st.msg, "batch 0 of input 0: not of input 'x''s dtype and shape"));
    nb_calibrate_result_free(&r);
    nb_tensor_free(bad);
    nb_tensor_free(x1);
    nb_tensor_free(x2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_folded),
        cmocka_unit_test(test_bias_corrected),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
