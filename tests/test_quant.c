/* engine/quant: AMCT's config in protobuf text format (every field, the override priority,
 * errors with line:col); the calibration algorithms on hand-worked histograms. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "model_builder.h"
#include "nb/quant.h"
#include "tmpdir.h"

static nb_err parse(const char *text, nb_quant_config *c, nb_status *st)
{
    return nb_quant_config_parse(text, strlen(text), "cfg.txt", c, st);
}

/* The seed's example and every field the issue names. */
static void test_config_fields(void **state)
{
    (void)state;
    const char *text =
        "# AMCT calibration config\n"
        "batch_num : 2\n"
        "fakequant_precision_mode: FORCE_FP16_QUANT\n"
        "activation_offset : false\n"
        "do_fusion: false\n"
        "skip_fusion_layers: \"bn1\"\n"
        "skip_layers: \"conv_first\" skip_layers: 'conv_last'\n"
        "skip_layer_types: [\"Resize\", \"Softmax\"]\n"
        "common_config : { ifmr_quantize : { dst_type: INT8 search_range_start : 0.7\n"
        "  search_range_end : 1.3 search_step : 0.02 max_percentile : 0.99999 "
        "min_percentile : 0.9999 } arq_quantize { channel_wise: true } }\n"
        "override_layer_types : { layer_type : \"Gemm\" calibration_config : {\n"
        "  arq_quantize { channel_wise: false quant_bits: 4 } } }\n"
        "override_layer_configs { layer_name: \"conv1\" calibration_config {\n"
        "  hfmg_quantize { num_of_bins: 2048 asymmetric: true dst_type: INT16 } } }\n";
    nb_quant_config c;
    nb_status st = {0};
    if (parse(text, &c, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(c.batch_num, 2);
    assert_true(c.batch_num_set);
    assert_true(c.force_fp16_quant);
    assert_false(c.activation_offset);
    assert_false(c.do_fusion);
    assert_int_equal(c.n_skip_fusion, 1);
    assert_string_equal(c.skip_fusion_layers[0], "bn1");
    assert_int_equal(c.n_skip_layers, 2);
    assert_string_equal(c.skip_layers[1], "conv_last");
    assert_int_equal(c.n_skip_types, 2);
    assert_string_equal(c.skip_layer_types[1], "Softmax");
    assert_true(nb_quant_config_skips(&c, "conv_first", "Conv"));
    assert_true(nb_quant_config_skips(&c, "x", "Resize"));
    assert_false(nb_quant_config_skips(&c, "conv1", "Conv"));
    /* common: IFMR with the given values */
    const nb_calib_cfg *k = nb_quant_config_for(&c, "conv9", "Conv");
    assert_int_equal(k->act, NB_ACT_IFMR);
    assert_float_equal(k->search_step, 0.02f, 1e-7);
    assert_float_equal(k->max_percentile, 0.99999f, 1e-7);
    assert_float_equal(k->min_percentile, 0.9999f, 1e-7);
    assert_true(k->channel_wise);
    assert_int_equal(k->weight_bits, 8);
    /* by type: Gemm takes per-tensor int4 weights and keeps common's IFMR step */
    k = nb_quant_config_for(&c, "fc", "Gemm");
    assert_false(k->channel_wise);
    assert_int_equal(k->weight_bits, 4);
    assert_int_equal(k->act, NB_ACT_IFMR);
    assert_float_equal(k->search_step, 0.02f, 1e-7);
    /* by name wins over by type: conv1 is a Conv with HFMG, 2048 bins, int16 asymmetric */
    k = nb_quant_config_for(&c, "conv1", "Gemm");
    assert_int_equal(k->act, NB_ACT_HFMG);
    assert_int_equal(k->num_of_bins, 2048);
    assert_int_equal(k->asymmetric, 1);
    assert_int_equal(k->act_bits, 16);
    assert_true(k->channel_wise);
    nb_quant_config_free(&c);
}

/* An empty config is AMCT's defaults. */
static void test_config_defaults(void **state)
{
    (void)state;
    nb_quant_config c;
    nb_status st = {0};
    assert_int_equal(parse("  # nothing\n", &c, &st), NB_OK);
    assert_int_equal(c.batch_num, 1);
    assert_false(c.batch_num_set);
    assert_true(c.activation_offset);
    assert_true(c.do_fusion);
    const nb_calib_cfg *k = nb_quant_config_for(&c, "a", "Conv");
    assert_int_equal(k->act, NB_ACT_IFMR);
    assert_float_equal(k->search_range_start, 0.7f, 1e-7);
    assert_float_equal(k->search_range_end, 1.3f, 1e-7);
    assert_float_equal(k->search_step, 0.01f, 1e-7);
    assert_float_equal(k->max_percentile, 0.999999f, 1e-7);
    assert_float_equal(k->min_percentile, 0.999999f, 1e-7);
    assert_int_equal(k->num_of_bins, 4096);
    assert_int_equal(k->asymmetric, -1);
    assert_int_equal(k->act_bits, 8);
    nb_quant_config_free(&c);
}

/* Each error names the file, line and column of the culprit. */
static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"batch_num: 2\nbatch_nmu: 3\n", "cfg.txt:2:1: unknown field 'batch_nmu' in the config"},
        {"batch_num: 0\n", "cfg.txt:1:12: 'batch_num' is an integer in 1..1000000, not '0'"},
        {"batch_num: 2\nbatch_num: 3\n", "cfg.txt:2:1: 'batch_num' is given twice (first at line 1)"},
        {"activation_offset: yes\n", "cfg.txt:1:20: 'activation_offset' is true or false, not 'yes'"},
        {"common_config {\n  ifmr_quantize { search_step: -1 }\n}\n",
         "cfg.txt:2:32: 'search_step' is a number in (0, 10], not '-1'"},
        {"common_config { ifmr_quantize {} hfmg_quantize {} }\n",
         "cfg.txt:1:34: ifmr_quantize and hfmg_quantize are one choice"},
        {"common_config { hfmg_quantize { num_of_bins: 1000 } }\n",
         "cfg.txt:1:46: num_of_bins is 1024, 2048, 4096 or 8192, not 1000"},
        {"common_config { arq_quantize { quant_bits: 2 } }\n",
         "cfg.txt:1:44: quant_bits is 8 or 4 (the cube takes s8 and s4 weights), not 2"},
        {"common_config { arq_quantize { quant_bits: 6 } }\n",
         "cfg.txt:1:44: quant_bits is 8 or 4"},
        {"common_config { ifmr_quantize { dst_type: INT4 } }\n",
         "cfg.txt:1:43: dst_type is INT8 or INT16, not 'INT4'"},
        {"skip_layers: conv1\n", "cfg.txt:1:14: 'skip_layers' is a string in quotes"},
        {"common_config {\n  arq_quantize { channel_wise: true }\n", "cfg.txt:3:1: '}' expected"},
        {"skip_layers: \"abc\n", "cfg.txt:1:14: string not closed on its line"},
        {"batch_num 2\n", "cfg.txt:1:11: ':' or '{' expected after 'batch_num'"},
        {"override_layer_types { calibration_config { } }\n",
         "cfg.txt:1:1: override_layer_types without layer_type"},
        {"override_layer_types { layer_type: \"Conv\" calibration_config { } }\n"
         "override_layer_types { layer_type: \"Conv\" calibration_config { } }\n",
         "cfg.txt:2:1: layer_type \"Conv\" is given twice (first at line 1)"},
        {"fakequant_precision_mode: FORCE_FP32\n",
         "cfg.txt:1:27: fakequant_precision_mode is FORCE_FP16_QUANT, not 'FORCE_FP32'"},
        {"common_config: 3\n", "cfg.txt:1:1: 'common_config' is a message"},
        {"ifmr_quantize { }\n", "cfg.txt:1:1: unknown field 'ifmr_quantize' in the config"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nb_quant_config c;
        nb_status st = {0};
        assert_int_equal(parse(cases[i].text, &c, &st), NB_ERR_FORMAT);
        if (!strstr(st.msg, cases[i].msg))
            fail_msg("case %zu: got '%s', want '%s'", i, st.msg, cases[i].msg);
    }
}

/* AMCT's scale and offset, worked by hand. */
/* The rounding keys (issue 40): weight_round in common_config and the overrides, AMCT's
 * ada_quantize with its fields, the defaults, and the errors. */
static void test_config_weight_round(void **state)
{
    (void)state;
    const char *text =
        "common_config { weight_round: ADAROUND }\n"
        "override_layer_configs { layer_name: \"a\" calibration_config { weight_round: NEAREST } }\n"
        "override_layer_configs { layer_name: \"b\" calibration_config {\n"
        "  arq_quantize { quant_bits: 4 } weight_round: ADAROUND } }\n"
        "override_layer_types { layer_type: \"Gemm\" calibration_config {\n"
        "  ada_quantize { num_iteration: 100 reg_param: 0.02 beta_range_start: 10\n"
        "                 beta_range_end: 3 warm_start: 0.1 channel_wise: false } } }\n"
        "override_layer_types { layer_type: \"Conv\" calibration_config {\n"
        "  ifmr_quantize { dst_type: INT16 } } }\n";
    nb_quant_config c;
    nb_status st = {0};
    if (parse(text, &c, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(c.common.weight_round, NB_ROUND_ADAROUND);
    const nb_calib_cfg *a = nb_quant_config_for(&c, "a", "MatMul"),
                       *b = nb_quant_config_for(&c, "b", "MatMul"),
                       *g = nb_quant_config_for(&c, "g", "Gemm"),
                       *cv = nb_quant_config_for(&c, "c", "Conv");
    assert_int_equal(a->weight_round, NB_ROUND_NEAREST);
    assert_true(a->weight_round_given);
    assert_int_equal(b->weight_round, NB_ROUND_ADAROUND);
    assert_int_equal(b->weight_bits, 4);
    assert_true(b->weight_round_given);
    assert_int_equal(g->weight_round, NB_ROUND_ADAROUND);
    assert_true(g->weight_round_given);
    assert_int_equal(g->ada.iters, 100);
    assert_float_equal(g->ada.reg, 0.02, 1e-7);
    assert_float_equal(g->ada.beta_start, 10, 0);
    assert_float_equal(g->ada.beta_end, 3, 0);
    assert_float_equal(g->ada.warm, 0.1, 1e-7);
    assert_false(g->channel_wise);
    /* an override that does not set the rounding inherits common_config's, not as its own */
    assert_int_equal(cv->weight_round, NB_ROUND_ADAROUND);
    assert_false(cv->weight_round_given);
    assert_int_equal(cv->act_bits, 16);
    nb_quant_config_free(&c);
    /* the defaults: nearest; AdaRound's AMCT values with 500 steps */
    nb_calib_cfg d;
    nb_calib_defaults(&d);
    assert_int_equal(d.weight_round, NB_ROUND_NEAREST);
    assert_int_equal(d.ada.iters, 500);
    assert_float_equal(d.ada.reg, 0.01, 1e-7);
    assert_float_equal(d.ada.beta_start, 20, 0);
    assert_float_equal(d.ada.beta_end, 2, 0);
    assert_float_equal(d.ada.warm, 0.2, 1e-7);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"common_config { weight_round: UP }",
         "cfg.txt:1:31: weight_round is NEAREST or ADAROUND, not 'UP'"},
        {"common_config { arq_quantize { } ada_quantize { } }",
         "cfg.txt:1:34: arq_quantize and ada_quantize are one choice (oneof wts_quant_algo)"},
        {"common_config { weight_round: NEAREST ada_quantize { } }",
         "cfg.txt:1:39: weight_round and ada_quantize both choose the rounding"},
        {"common_config { ada_quantize { num_iteration: -1 } }",
         "cfg.txt:1:47: 'num_iteration' is an integer in 0..1000000, not '-1'"},
        {"common_config { ada_quantize { lr: 1 } }",
         "cfg.txt:1:32: unknown field 'lr' in ada_quantize (known: num_iteration, reg_param, "
         "beta_range_start, beta_range_end, warm_start, channel_wise, quant_bits)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nb_status e = {0};
        assert_int_equal(parse(bad[i].text, &c, &e), NB_ERR_FORMAT);
        assert_string_equal(e.msg, bad[i].msg);
    }
    nb_weight_round r;
    assert_true(nb_weight_round_parse("AdaRound", &r));
    assert_int_equal(r, NB_ROUND_ADAROUND);
    assert_true(nb_weight_round_parse("nearest", &r));
    assert_int_equal(r, NB_ROUND_NEAREST);
    assert_false(nb_weight_round_parse("down", &r));
}

/* AdaRound on a hand-worked 2 x 2 case where the best rounding is not the nearest. Scales
 * 1 (w is in units of the integer step); every sample is x_p = t_p (0.9, 1), t_p = 1..8, the
 * same as the quantized input (xq = x). A row's error on sample p is t_p (0.9 (a - w0) +
 * (b - w1)) for integers (a, b):
 * row 0, w = (0.4, 0.3): nearest (0, 0) gives 0.9 x -0.4 - 0.3 = -0.66; (1, 0) 0.54 - 0.3 =
 * 0.24; (0, 1) -0.36 + 0.7 = 0.34; (1, 1) 1.24: (1, 0) is the least, 0.4 rounds up.
 * row 1, w = (-0.4, -0.3): the mirror image, (-1, 0): -0.4 rounds down.
 * Each row differs from nearest in one weight: 2 changed. */
static void test_adaround_2x2(void **state)
{
    (void)state;
    const float w[4] = {0.4f, 0.3f, -0.4f, -0.3f}, scale[2] = {1, 1};
    float x[16];
    for (int p = 0; p < 8; p++)
        x[2 * p] = 0.9f * (float)(p + 1), x[2 * p + 1] = (float)(p + 1);
    nb_ada_params pr;
    nb_ada_defaults(&pr);
    int8_t q[4];
    int64_t changed = -1;
    nb_status st = {0};
    assert_int_equal(nb_adaround(w, scale, 2, 2, x, x, 8, 8, &pr, q, &changed, &st), NB_OK);
    assert_int_equal(q[0], 1);
    assert_int_equal(q[1], 0);
    assert_int_equal(q[2], -1);
    assert_int_equal(q[3], 0);
    assert_int_equal(changed, 2);
    /* a row whose nearest rounding is exact stays: w = (2, -3) */
    const float w2[2] = {2, -3};
    assert_int_equal(nb_adaround(w2, scale, 1, 2, x, x, 8, 8, &pr, q, &changed, &st), NB_OK);
    assert_int_equal(q[0], 2);
    assert_int_equal(q[1], -3);
    assert_int_equal(changed, 0);
    /* no samples: refused */
    assert_int_equal(nb_adaround(w2, scale, 1, 2, x, x, 0, 8, &pr, q, &changed, &st), NB_ERR_ARG);
}

static void test_qparams(void **state)
{
    (void)state;
    nb_qparams q;
    /* symmetric [-1, 2]: the larger bound 2 is positive: scale 2/127 */
    nb_qparams_from_range(-1, 2, 8, false, &q);
    assert_float_equal(q.scale, 2.0 / 127, 1e-9);
    assert_int_equal(q.offset, 0);
    /* 1.0 / (2/127) = 63.5 rounds half to even: 64 -> 64 x 2/127 */
    assert_int_equal(nb_quantize_value(1.0, &q), 64);
    assert_float_equal(nb_fake_quant(1.0, &q), 64 * (double)q.scale, 1e-12);
    assert_int_equal(nb_quantize_value(-5.0, &q), -128); /* saturates */
    /* symmetric [-4, 2]: the larger bound is negative: scale 4/128, -4 -> -128 */
    nb_qparams_from_range(-4, 2, 8, false, &q);
    assert_float_equal(q.scale, 4.0 / 128, 1e-9);
    assert_int_equal(nb_quantize_value(-4.0, &q), -128);
    /* asymmetric [-1, 3]: scale 4/255, offset -128 - round(-63.75) = -64 */
    nb_qparams_from_range(-1, 3, 8, true, &q);
    assert_float_equal(q.scale, 4.0 / 255, 1e-9);
    assert_int_equal(q.offset, -64);
    assert_int_equal(nb_quantize_value(3.0, &q), 127);
    /* asymmetric [1, 3] widens to [0, 3]: scale 3/255, offset -128; 3 -> 127 -> 3 */
    nb_qparams_from_range(1, 3, 8, true, &q);
    assert_float_equal(q.scale, 3.0 / 255, 1e-9);
    assert_int_equal(q.offset, -128);
    assert_float_equal(nb_fake_quant(3.0, &q), 3.0, 1e-6);
    /* int16 (the cube's s16 x s8): [-1, 1] -> 1/32767 */
    nb_qparams_from_range(-1, 1, 16, false, &q);
    assert_float_equal(q.scale, 1.0 / 32767, 1e-12);
    /* an all-zero tensor: scale 1, not 0 */
    nb_qparams_from_range(0, 0, 8, false, &q);
    assert_float_equal(q.scale, 1.0, 0);
}

/* The histogram merges batches by widening and re-spreading (HFMG). */
static void test_hist_merge(void **state)
{
    (void)state;
    nb_hist h;
    nb_status st = {0};
    assert_int_equal(nb_hist_init(&h, 4, &st), NB_OK);
    /* batch 1: {0,1,2,3} over [0,3], bins of 0.75: one each */
    const float b1[4] = {0, 1, 2, 3}, b2[1] = {-3};
    assert_int_equal(nb_hist_add(&h, b1, 4, &st), NB_OK);
    for (int b = 0; b < 4; b++)
        assert_float_equal(h.count[b], 1, 1e-12);
    /* batch 2: {-3} widens to [-3,3], bins of 1.5: the old [0,1.5) -> bin 2 (2), [1.5,3]
       -> bin 3 (2), and -3 -> bin 0 */
    assert_int_equal(nb_hist_add(&h, b2, 1, &st), NB_OK);
    const double want[4] = {1, 0, 2, 2};
    for (int b = 0; b < 4; b++)
        assert_float_equal(h.count[b], want[b], 1e-12);
    assert_float_equal(h.total, 5, 0);
    assert_float_equal(h.min, -3, 0);
    assert_float_equal(h.max, 3, 0);
    /* median: 2.5 samples: bin 0 holds 1, bin 2 the next 2: -3 + (2 + 1.5/2) x 1.5 = 1.125 */
    assert_float_equal(nb_hist_quantile(&h, 0.5), 1.125, 1e-12);
    const float bad[2] = {1, NAN};
    assert_int_equal(nb_hist_add(&h, bad, 2, &st), NB_ERR_DATA);
    assert_non_null(strstr(st.msg, "NaN at element 1"));
    nb_hist_free(&h);
    /* a range wider than FLT_MAX ([-3e38, 3e38]): the ends land in the end bins (the bin
       index used to overflow in float and send 3e38 to bin 0) */
    assert_int_equal(nb_hist_init(&h, 4, &st), NB_OK);
    const float wide[2] = {-3e38f, 3e38f};
    assert_int_equal(nb_hist_add(&h, wide, 2, &st), NB_OK);
    assert_float_equal(h.count[0], 1, 0);
    assert_float_equal(h.count[3], 1, 0);
    nb_hist_free(&h);
}

/* 2 bins over [-1, 1], one sample in each (centres -0.5 and 0.5). */
static void two_bins(nb_hist *h)
{
    nb_status st = {0};
    const float x[2] = {-1, 1};
    assert_int_equal(nb_hist_init(h, 2, &st), NB_OK);
    assert_int_equal(nb_hist_add(h, x, 2, &st), NB_OK);
}

/* IFMR on the two-bin histogram, search 0.5 .. 1.0 by 0.5: the percentile points are
 * +-0.999998 (0.999999 of 2 samples: 1.999998 -> -1 + 1.999998 x 1); candidate 0.5 puts
 * the centres +-0.5 on the grid (0.499999/127 steps: error ~1e-12), candidate 1.0 leaves
 * 0.5 / (0.999998/127) = 63.5 -> 64 steps (error 2 x 0.0039^2): 0.5 wins. */
static void test_ifmr(void **state)
{
    (void)state;
    nb_hist h;
    two_bins(&h);
    nb_calib_cfg cfg;
    nb_calib_defaults(&cfg);
    cfg.search_range_start = 0.5f;
    cfg.search_range_end = 1.0f;
    cfg.search_step = 0.5f;
    nb_qparams q;
    nb_status st = {0};
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_IFMR, &cfg, false, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 0.499999, 1e-6);
    assert_float_equal(q.clip_min, -0.499999, 1e-6);
    assert_float_equal(q.scale, 0.499999 / 127, 1e-9);
    /* asymmetric: the min stays at -0.999998, the max is searched: 0.5 wins again
       (range 1.499997 / 255, offset -128 + 170 = 42) */
    cfg.asymmetric = 1;
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_IFMR, &cfg, false, &q, &st), NB_OK);
    assert_float_equal(q.clip_min, -0.999998, 1e-6);
    assert_float_equal(q.clip_max, 0.499999, 1e-6);
    assert_int_equal(q.offset, 42);
    nb_hist_free(&h);
}

/* HFMG on 64 bins over [-8, 8] with the mass uniform on [-4, 4] (bins 16..47): the empty
 * tails are trimmed (less error for the same data), trimming into the mass clips more
 * than it saves (per unit mass, one bin of 0.25 clipped costs 0.25^3/3/8 = 6.5e-4, the
 * finer grid saves (8^2 - 7.75^2)/256^2/12 = 5e-6): the range is [-4, 4]. */
static void test_hfmg(void **state)
{
    (void)state;
    nb_hist h;
    nb_status st = {0};
    assert_int_equal(nb_hist_init(&h, 64, &st), NB_OK);
    float x[2] = {-8, 8};
    assert_int_equal(nb_hist_add(&h, x, 2, &st), NB_OK);
    memset(h.count, 0, sizeof(double) * 64);
    h.total = 0;
    for (int b = 16; b < 48; b++)
        h.count[b] = 100, h.total += 100;
    nb_calib_cfg cfg;
    nb_calib_defaults(&cfg);
    nb_qparams q;
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_HFMG, &cfg, false, &q, &st), NB_OK);
    assert_float_equal(q.clip_min, -4, 1e-9);
    assert_float_equal(q.clip_max, 4, 1e-9);
    assert_float_equal(q.scale, 4.0 / 127, 1e-9);
    nb_hist_free(&h);
}

/* HFMG keeps a sparse tail when clipping it costs more than quantizing over it: 64 bins over
 * [0, 16] (width 0.25), 10^6 samples uniform in bins 0..3 ([0, 1)) and 5 in bin 63 (mass
 * 5e-6, under one trim step of 1e-5). Trimming bin 63 clips those 5 samples by about 15
 * each: error 5 x 15^2 = 1125. The untrimmed range at 16 bits (asymmetric, step 16 / 65535)
 * errs by 10^6 x step^2 / 12 = 5e-3. So [0, 16]; PyTorch's search, which takes the first
 * trim whatever it costs, gave [0, 4] (the right edge of the last occupied bin before). */
static void test_hfmg_sparse_tail(void **state)
{
    (void)state;
    nb_hist h;
    nb_status st = {0};
    assert_int_equal(nb_hist_init(&h, 64, &st), NB_OK);
    float x[2] = {0, 16};
    assert_int_equal(nb_hist_add(&h, x, 2, &st), NB_OK);
    memset(h.count, 0, sizeof(double) * 64);
    for (int b = 0; b < 4; b++)
        h.count[b] = 250000;
    h.count[63] = 5;
    h.total = 1000005;
    nb_calib_cfg cfg;
    nb_calib_defaults(&cfg);
    cfg.act_bits = 16;
    nb_qparams q;
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_HFMG, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_min, 0, 1e-9);
    assert_float_equal(q.clip_max, 16, 1e-9);
    nb_hist_free(&h);
}

/* MinMax, Percentile and KL on simple data. */
static void test_minmax_percentile_kl(void **state)
{
    (void)state;
    nb_hist h;
    nb_status st = {0};
    nb_calib_cfg cfg;
    nb_calib_defaults(&cfg);
    nb_qparams q;
    /* 100000 samples i / 100000 on 4096 bins over [0, 0.99999] */
    assert_int_equal(nb_hist_init(&h, 4096, &st), NB_OK);
    float *x = malloc(sizeof(float) * 100000);
    for (int i = 0; i < 100000; i++)
        x[i] = (float)i / 100000;
    assert_int_equal(nb_hist_add(&h, x, 100000, &st), NB_OK);
    /* MinMax: [0, 0.99999], asymmetric: scale 0.99999 / 255, offset -128 */
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_MINMAX, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 0.99999, 1e-7);
    assert_float_equal(q.scale, 0.99999 / 255, 1e-9);
    assert_int_equal(q.offset, -128);
    /* Percentile 99.999 %: the point with 99999 samples below: 0.99998 (one bin holds ~24
       samples, so within a bin width 2.4e-4) */
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_PERCENTILE, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 0.99998, 2.5e-4);
    assert_float_equal(q.clip_min, 0.00001, 2.5e-4);
    /* KL: |x| uniform on [0, amax]: P = Q at 2048 bins (every level the same), any
       smaller threshold folds mass into its last bin: threshold 2048.5 bins of amax/2048.
       Symmetric activations: [-T, T], offset 0 (TensorRT) */
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, false, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 2048.5 * 0.99999 / 2048, 1e-6);
    assert_float_equal(q.clip_min, -q.clip_max, 0);
    assert_int_equal(q.offset, 0);
    /* asymmetric activations and data >= 0: the same T on [0, T] with 256 levels (P = Q
       again at 2048 bins merged 8 to a level), offset -128 */
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 2048.5 * 0.99999 / 2048, 1e-6);
    assert_float_equal(q.clip_min, 0, 0);
    assert_int_equal(q.offset, -128);
    nb_hist_free(&h);
    /* mostly non-negative (a ReLU after a bias): x - 0.05, min -0.05 within a tenth of the
       max. One-sided: x - min is the same uniform [0, 0.99999], so the same 2048.5 bins of
       0.99999 / 2048 from the minimum: [-0.05, -0.05 + 1.0000388], not the |x| search's
       symmetric range with the negatives taking half the levels */
    assert_int_equal(nb_hist_init(&h, 4096, &st), NB_OK);
    for (int i = 0; i < 100000; i++)
        x[i] = (float)i / 100000 - 0.05f;
    assert_int_equal(nb_hist_add(&h, x, 100000, &st), NB_OK);
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_min, -0.05, 1e-7);
    assert_float_equal(q.clip_max, -0.05 + 2048.5 * 0.99999 / 2048, 1e-5);
    nb_hist_free(&h);
    /* data well above 0 (a log-mel feature): x + 3.5, uniform on [3.5, 4.49999]. From 0 the
       candidates below 3.5 hold every value in their last bin (P = Q = one spike, KL 0);
       from the minimum it is the uniform case again: 2048.5 bins of 0.99999 / 2048 above
       3.5, and the asymmetric grid still holds 0 */
    assert_int_equal(nb_hist_init(&h, 4096, &st), NB_OK);
    for (int i = 0; i < 100000; i++)
        x[i] = (float)i / 100000 + 3.5f;
    assert_int_equal(nb_hist_add(&h, x, 100000, &st), NB_OK);
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_max, 3.5 + 2048.5 * 0.99999 / 2048, 1e-5);
    assert_float_equal(q.clip_min, 0, 0);
    nb_hist_free(&h);
    /* signed data on an asymmetric grid: x = 1.5 i / 1e5 - 0.5 on [-0.5, 0.999985]. The |x|
       histogram is two flat steps meeting at a level edge (0.5 = 1024 of 2048 bins, 16 bins
       to each of the 128 levels), so P = Q at the full width again and T = 2048.5 bins. The
       grid then spans the data, [-0.5, 0.999985], not [-T, T]: no levels below -0.5 */
    assert_int_equal(nb_hist_init(&h, 4096, &st), NB_OK);
    for (int i = 0; i < 100000; i++)
        x[i] = 1.5f * (float)i / 100000 - 0.5f;
    assert_int_equal(nb_hist_add(&h, x, 100000, &st), NB_OK);
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    assert_float_equal(q.clip_min, -0.5, 1e-7);
    assert_float_equal(q.clip_max, h.max, 0);
    assert_float_equal(q.scale, (h.max + 0.5) / 255, 1e-8);
    nb_hist_free(&h);
    /* a ReLU's spike: x = -ln(1 - (i + 0.5) / 1e5) (exponential: dense near 0, a long tail) alone, then with 100000
       zeros added. bins[0] takes bins[1]'s count (NVIDIA's entropy calibrator), so both
       histograms become the same and so do their thresholds. With the spike kept, Q spreads
       it over its level's bins at every width and the search clips far more of the tail:
       3.05 instead of 10.6 with the zeros (measured with that line taken out) */
    double alone;
    assert_int_equal(nb_hist_init(&h, 4096, &st), NB_OK);
    for (int i = 0; i < 100000; i++)
        x[i] = (float)-log1p(-(i + 0.5) / 100000);
    assert_int_equal(nb_hist_add(&h, x, 100000, &st), NB_OK);
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    alone = q.clip_max;
    float *zeros = calloc(100000, sizeof(float));
    assert_non_null(zeros);
    assert_int_equal(nb_hist_add(&h, zeros, 100000, &st), NB_OK);
    free(zeros);
    assert_int_equal(nb_act_calibrate(&h, NB_ACT_KL, &cfg, true, &q, &st), NB_OK);
    print_message("KL on the exponential: %g alone, %g with the zeros\n", alone, q.clip_max);
    assert_float_equal(q.clip_max, alone, 0);
    free(x);
    nb_hist_free(&h);
}

/* ARQ: per channel and per tensor, int8 and int4, hand-worked. */
static void test_arq(void **state)
{
    (void)state;
    /* Conv W [2, 3]: channel 0 max|w| 1.27 -> scale 0.01; channel 1 max 0.127 -> 0.001 */
    const float w[6] = {1.27f, -0.635f, 0.0f, 0.127f, 0.05f, -0.0005f};
    float s[2];
    int8_t q[6];
    nb_status st = {0};
    assert_int_equal(nb_arq_quantize(w, 1, 2, 3, 8, true, s, q, &st), NB_OK);
    assert_float_equal(s[0], 0.01, 1e-7);
    assert_float_equal(s[1], 0.001, 1e-8);
    /* -0.635 / 0.01 = -63.5 -> -64 (half to even); 0.05/0.001 = 50; -0.5 -> -0 */
    const int8_t want[6] = {127, -64, 0, 127, 50, 0};
    assert_memory_equal(q, want, 6);
    /* per tensor: one scale 0.01 for both; 0.127 -> 12.7 -> 13 */
    assert_int_equal(nb_arq_quantize(w, 1, 2, 3, 8, false, s, q, &st), NB_OK);
    assert_float_equal(s[1], 0.01, 1e-7);
    assert_int_equal(q[3], 13);
    /* int4 (s8 x s4): levels +-7, channel 0 scale 1.27/7; -0.635 -> -3.5 -> -4 */
    assert_int_equal(nb_arq_quantize(w, 1, 2, 3, 4, true, s, q, &st), NB_OK);
    assert_float_equal(s[0], 1.27 / 7, 1e-7);
    assert_int_equal(q[0], 7);
    assert_int_equal(q[1], -4);
    /* MatMul B [K=2, N=2] channels along the last axis: outer K, inner 1 */
    const float b[4] = {1, 2, -0.5f, 4};
    assert_int_equal(nb_arq_quantize(b, 2, 2, 1, 8, true, s, q, &st), NB_OK);
    assert_float_equal(s[0], 1.0 / 127, 1e-8);
    assert_float_equal(s[1], 4.0 / 127, 1e-8);
    assert_int_equal(q[2], -64); /* -0.5 x 127 = -63.5 -> -64 */
    const float nan_w[2] = {1, NAN};
    assert_int_equal(nb_arq_quantize(nan_w, 1, 1, 2, 8, true, s, q, &st), NB_ERR_DATA);
    assert_non_null(strstr(st.msg, "NaN in the weights at element 1"));
}

/* Writes the deploy model of layer l of src to dst and decodes it. */
static Onnx__ModelProto *deploy_and_read(const char *src, const char *dst, const nb_qlayer *l)
{
    nb_status st = {0};
    if (nb_write_deploy(src, dst, l, 1, &st))
        fail_msg("%s", st.msg);
    uint8_t *buf;
    size_t len;
    assert_int_equal(nb_read_file(dst, &buf, &len, &st), NB_OK);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(mp);
    return mp;
}

/* The deploy model's int32 bias and deq_scale, by hand. x [1,2] -> Gemm (B [2,2] with
 * transB = 1, C = [1, -2]); int8 weights [[1, 2], [3, -4]], scale_d 0.5, offset_d 3,
 * scale_w [0.25, 0.5]: deq_scale = [0.125, 0.25] (fp32 bits 0x3E000000, 0x3E800000);
 * bias = round(C / deq_scale) - offset_d x channel sums = [8 - 3 x 3, -8 - 3 x -1]
 * = [-1, -5]. */
static void test_deploy_bias(void **state)
{
    (void)state;
    const int64_t dx[2] = {1, 2}, dw[2] = {2, 2}, dc[1] = {2};
    const float w[4] = {0.25f, 0.5f, 1.5f, -2.0f}, c[2] = {1, -2};
    mb_model *mm = mb_new(13);
    mb_input(mm, "x", 1, 2, dx);
    mb_output(mm, "y", 1, 2, dx);
    mb_init_floats(mm, "B", 2, dw, w, 4);
    mb_init_floats(mm, "C", 1, dc, c, 2);
    Onnx__NodeProto *gm = mb_node(mm, "Gemm", (const char *[]){"x", "B", "C", NULL},
                                  (const char *[]){"y", NULL});
    gm->name = "g";
    mb_attr_int(gm, "transB", 1);
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/gemm.onnx", tmpdir);
    snprintf(dst, sizeof dst, "%s/gemm_deploy.onnx", tmpdir);
    assert_int_equal(mb_write(mm, src), 0);
    mb_free(mm);
    const int8_t wq[4] = {1, 2, 3, -4};
    const float sw[2] = {0.25f, 0.5f};
    nb_qlayer l = {.node = "g", .act_bits = 8, .scale_d = 0.5f, .offset_d = 3, .channels = 2,
                   .scale_w = sw, .w_q = wq, .w_rank = 2, .w_dims = dw, .w_numel = 4,
                   .w_axis = 0};
    Onnx__ModelProto *mp = deploy_and_read(src, dst, &l);
    const Onnx__GraphProto *g = mp->graph;
    int found = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!strcmp(t->name, "g/bias_int32")) {
            int32_t b[2];
            memcpy(b, t->raw_data.data, sizeof b);
            assert_int_equal(b[0], -1);
            assert_int_equal(b[1], -5);
            found++;
        } else if (!strcmp(t->name, "g/deq_scale")) {
            uint64_t d[2];
            memcpy(d, t->raw_data.data, sizeof d);
            assert_int_equal(d[0], 0x3E000000u);
            assert_int_equal(d[1], 0x3E800000u);
            found++;
        } else {
            assert_string_not_equal(t->name, "B"); /* the float weights are gone */
        }
    }
    assert_int_equal(found, 2);
    /* AscendQuant (scale 1/0.5 = 2, offset 3), the Gemm in the NPU domain, AscendDequant */
    assert_int_equal(g->n_node, 3);
    assert_string_equal(g->node[0]->op_type, "AscendQuant");
    assert_float_equal(g->node[0]->attribute[0]->f, 2.0, 0);
    assert_float_equal(g->node[0]->attribute[1]->f, 3.0, 0);
    assert_string_equal(g->node[1]->domain, NB_NPU_DOMAIN);
    assert_string_equal(g->node[1]->input[2], "g/bias_int32");
    assert_string_equal(g->node[2]->op_type, "AscendDequant");
    assert_string_equal(g->node[2]->output[0], "y");
    onnx__model_proto__free_unpacked(mp, NULL);
    /* the compiler reads it back: one layer 'g' with the same int8 weights, bias, deq_scale
       and AscendQuant (scale 2, offset 3), and a standard Gemm on x in the float form */
    nb_npu_input in;
    nb_status st = {0};
    if (nb_read_npu_input(dst, NULL, NULL, tmpdir, &in, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(in.form, 1);
    assert_int_equal(in.n_layers, 1);
    const nb_npu_layer *nl = &in.layers[0];
    assert_string_equal(nl->node, "g");
    assert_float_equal(nl->quant_scale, 2.0, 0);
    assert_float_equal(nl->quant_offset, 3.0, 0);
    assert_memory_equal(nl->w, wq, 4);
    assert_int_equal(nl->channels, 2);
    assert_int_equal(nl->bias[0], -1);
    assert_int_equal(nl->bias[1], -5);
    assert_int_equal(nl->deq_scale[0], 0x3E000000u);
    Onnx__ModelProto *fm = onnx__model_proto__unpack(NULL, in.len, in.onnx);
    assert_non_null(fm);
    assert_int_equal(fm->graph->n_node, 1);
    assert_string_equal(fm->graph->node[0]->op_type, "Gemm");
    assert_string_equal(fm->graph->node[0]->input[0], "x");
    assert_string_equal(fm->graph->node[0]->output[0], "y");
    onnx__model_proto__free_unpacked(fm, NULL);
    nb_npu_input_free(&in);
}

/* The deploy form of a GRU, by hand: x [1,1,2] -> GRU (hidden 1: 3 gate rows), W [1,3,2]
 * with int8 rows [1, 2], [3, -4], [0, 5] (sums 3, -1, 5), scale_w [0.25, 0.5, 1], R [1,3,1]
 * int8 [2], [-3], [1], scale_r [0.5, 0.25, 2], B = Wb [1, -2, 0.75], Rb [0.5, 0.0625, -1];
 * scale_d 0.5, offset_d 2, scale_h 0.125. deq_scale_w = 0.5 x scale_w = [0.125, 0.25, 0.5]
 * (fp32 bits 0x3E000000, 0x3E800000, 0x3F000000); bias_w = round(Wb / deq_scale_w) - 2 x
 * sums = [8 - 6, -8 + 2, round(1.5) - 10] = [2, -6, -8] (1.5 rounds to even 2);
 * deq_scale_r = 0.125 x scale_r = [0.0625, 0.03125, 0.25] (0x3D800000, 0x3D000000,
 * 0x3E800000); bias_r = round(Rb / deq_scale_r) = [8, 2, -4]; h_scale = 1 / 0.125 = 8. */
static void test_deploy_rnn(void **state)
{
    (void)state;
    const int64_t dx[3] = {1, 1, 2}, dw[3] = {1, 3, 2}, dr[3] = {1, 3, 1}, db[2] = {1, 6};
    const int64_t dy[3] = {1, 1, 1};
    const float w[6] = {0}, r[3] = {0}, b[6] = {1, -2, 0.75f, 0.5f, 0.0625f, -1};
    mb_model *mm = mb_new(14);
    mb_input(mm, "x", 1, 3, dx);
    mb_output(mm, "y_h", 1, 3, dy);
    mb_init_floats(mm, "W", 3, dw, w, 6);
    mb_init_floats(mm, "R", 3, dr, r, 3);
    mb_init_floats(mm, "B", 2, db, b, 6);
    Onnx__NodeProto *gn = mb_node(mm, "GRU", (const char *[]){"x", "W", "R", "B", NULL},
                                  (const char *[]){"", "y_h", NULL});
    gn->name = "gru";
    mb_attr_int(gn, "hidden_size", 1);
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/gru.onnx", tmpdir);
    snprintf(dst, sizeof dst, "%s/gru_deploy.onnx", tmpdir);
    assert_int_equal(mb_write(mm, src), 0);
    mb_free(mm);
    const int8_t wq[6] = {1, 2, 3, -4, 0, 5}, rq[3] = {2, -3, 1};
    const float sw[3] = {0.25f, 0.5f, 1}, sr[3] = {0.5f, 0.25f, 2};
    nb_qlayer l = {.node = "gru", .act_bits = 8, .scale_d = 0.5f, .offset_d = 2, .channels = 3,
                   .scale_w = sw, .w_q = wq, .w_rank = 3, .w_dims = dw, .w_numel = 6,
                   .w_axis = 1, .r_q = rq, .scale_r = sr, .r_dims = dr, .r_numel = 3,
                   .scale_h = 0.125f, .offset_h = 0};
    Onnx__ModelProto *mp = deploy_and_read(src, dst, &l);
    const Onnx__GraphProto *g = mp->graph;
    static const struct {
        const char *name;
        int64_t v[3];
    } want[4] = {{"gru/bias_w_int32", {2, -6, -8}},
                 {"gru/bias_r_int32", {8, 2, -4}},
                 {"gru/deq_scale_w", {0x3E000000, 0x3E800000, 0x3F000000}},
                 {"gru/deq_scale_r", {0x3D800000, 0x3D000000, 0x3E800000}}};
    int found = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        assert_string_not_equal(t->name, "B"); /* folded into the two int32 biases */
        for (int k = 0; k < 4; k++) {
            if (strcmp(t->name, want[k].name))
                continue;
            for (int c = 0; c < 3; c++) {
                int64_t v;
                if (k < 2) {
                    int32_t x;
                    memcpy(&x, t->raw_data.data + 4 * c, 4);
                    v = x;
                } else {
                    uint64_t x;
                    memcpy(&x, t->raw_data.data + 8 * c, 8);
                    v = (int64_t)x;
                }
                assert_int_equal(v, want[k].v[c]);
            }
            found++;
        }
    }
    assert_int_equal(found, 4);
    assert_int_equal(g->n_node, 2);
    assert_string_equal(g->node[0]->op_type, "AscendQuant");
    const Onnx__NodeProto *n = g->node[1];
    assert_string_equal(n->op_type, "GRU");
    assert_string_equal(n->domain, NB_NPU_DOMAIN);
    assert_int_equal(n->n_input, 7);
    assert_string_equal(n->input[0], "gru/x_int8");
    assert_string_equal(n->input[2], "gru/r_int8");
    assert_string_equal(n->output[1], "y_h");
    bool h_scale = false;
    for (size_t a = 0; a < n->n_attribute; a++)
        if (!strcmp(n->attribute[a]->name, "h_scale")) {
            assert_float_equal(n->attribute[a]->f, 8.0, 0);
            h_scale = true;
        }
    assert_true(h_scale);
    onnx__model_proto__free_unpacked(mp, NULL);
}

/* nb_check_layers: a tensor under the layer's name is fine ("c/ReadVariableOp:0", as
 * TensorFlow exports name them); one the writers would add ("c/act_q") is refused, and so is
 * a layer name that no node of the file has. */
static void test_check_layers(void **state)
{
    (void)state;
    const int64_t d[2] = {1, 2}, dw[2] = {2, 2};
    const float w[4] = {1, 2, 3, 4};
    for (int v = 0; v < 2; v++) {
        mb_model *mm = mb_new(13);
        mb_input(mm, "x", 1, 2, d);
        mb_output(mm, "y", 1, 2, d);
        mb_init_floats(mm, "W", 2, dw, w, 4);
        const char *mid = v ? "c/act_q" : "c/ReadVariableOp:0";
        mb_node(mm, "Relu", (const char *[]){"x", NULL}, (const char *[]){mid, NULL});
        mb_node(mm, "MatMul", (const char *[]){mid, "W", NULL}, (const char *[]){"y", NULL})
            ->name = "c";
        char src[512];
        snprintf(src, sizeof src, "%s/check%d.onnx", tmpdir, v);
        assert_int_equal(mb_write(mm, src), 0);
        mb_free(mm);
        nb_qlayer l = {.node = "c"};
        nb_status st = {0};
        assert_int_equal(nb_check_layers(src, &l, 1, &st), v ? NB_ERR_UNSUPPORTED : NB_OK);
        if (v)
            assert_non_null(strstr(st.msg, "tensor 'c/act_q' would clash"));
        l.node = "nope";
        assert_int_equal(nb_check_layers(src, &l, 1, &st), NB_ERR_UNSUPPORTED);
        assert_non_null(strstr(st.msg, "layer 'nope' has no name in the file"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_fields),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_qparams),
        cmocka_unit_test(test_hist_merge),
        cmocka_unit_test(test_ifmr),
        cmocka_unit_test(test_hfmg),
        cmocka_unit_test(test_hfmg_sparse_tail),
        cmocka_unit_test(test_minmax_percentile_kl),
        cmocka_unit_test(test_arq),
        cmocka_unit_test(test_deploy_bias),
        cmocka_unit_test(test_deploy_rnn),
        cmocka_unit_test(test_check_layers),
        cmocka_unit_test(test_config_weight_round),
        cmocka_unit_test(test_adaround_2x2),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
