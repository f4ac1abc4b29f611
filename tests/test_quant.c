/* engine/quant: AMCT's config in protobuf text format (every field, the override priority,
 * errors with line:col); the calibration algorithms on hand-worked histograms. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nb/quant.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_fields),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
