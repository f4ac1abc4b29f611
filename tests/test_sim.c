/* The simulated NPU's arithmetic, element by element, against values worked by hand
 * (share/doc/npu-numerics.md): fp16 rounding and saturation, AscendQuant, AscendDequant
 * with its fused activations, the Tanh/Sigmoid tables and their small-input error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nb/sim.h"

/* Round to nearest even, saturating at 65504 (never infinity). */
static void test_f16_rounding(void **state)
{
    (void)state;
    assert_int_equal(nb_sim_f16(1.0), 0x3C00);
    assert_int_equal(nb_sim_f16(65504.0), 0x7BFF);
    assert_int_equal(nb_sim_f16(65519.0), 0x7BFF);   /* IEEE rounds this down to 65504 too */
    assert_int_equal(nb_sim_f16(65520.0), 0x7BFF);   /* IEEE: infinity; the NPU saturates */
    assert_int_equal(nb_sim_f16(1e9), 0x7BFF);
    assert_int_equal(nb_sim_f16(-70000.0), 0xFBFF);
    assert_int_equal(nb_sim_f16(INFINITY), 0x7BFF);
    assert_int_equal(nb_sim_f16(NAN) & 0x7C00, 0x7C00); /* NaN stays NaN */
    /* 2049 lies halfway between 2048 (even mantissa) and 2050: 2048; 2051 -> 2052 */
    assert_int_equal(nb_sim_f16(2049.0), 0x6800);
    assert_int_equal(nb_sim_f16(2051.0), 0x6802);
    assert_int_equal(nb_sim_f16(0.1), 0x2E66);
    assert_int_equal(nb_sim_f16(-0.1), 0xAE66);
    /* subnormals: 2^-24 is the smallest; 2^-25 is halfway to 0 (even): 0; 0.75 2^-24 -> 1 */
    assert_int_equal(nb_sim_f16(ldexp(1, -24)), 0x0001);
    assert_int_equal(nb_sim_f16(ldexp(1, -25)), 0x0000);
    assert_int_equal(nb_sim_f16(0.75 * ldexp(1, -24)), 0x0001);
    assert_true(nb_sim_f16_value(0x7BFF) == 65504.0f);
    assert_true(nb_sim_f16_value(0x3555) == 0.33325195f);
}

/* q = saturate(round_half_even(x * scale) + offset) */
static void test_quant(void **state)
{
    (void)state;
    assert_int_equal(nb_sim_quant(nb_sim_f16(1.0), 10.0f, 3.0f, 8), 13);
    assert_int_equal(nb_sim_quant(nb_sim_f16(100.0), 10.0f, 3.0f, 8), 127);   /* 1003 */
    assert_int_equal(nb_sim_quant(nb_sim_f16(-100.0), 10.0f, 3.0f, 8), -128);
    assert_int_equal(nb_sim_quant(nb_sim_f16(0.25), 2.0f, 0.0f, 8), 0);       /* 0.5 -> 0 */
    assert_int_equal(nb_sim_quant(nb_sim_f16(1.5), 1.0f, 0.0f, 8), 2);        /* even */
    assert_int_equal(nb_sim_quant(nb_sim_f16(2.5), 1.0f, 0.0f, 8), 2);
    assert_int_equal(nb_sim_quant(nb_sim_f16(-2.5), 1.0f, -1.0f, 8), -3);     /* -2 - 1 */
    assert_int_equal(nb_sim_quant(nb_sim_f16(1000.0), 100.0f, 0.0f, 16), 32767);
    assert_int_equal(nb_sim_quant(nb_sim_f16(3.0), 100.0f, 5.0f, 16), 305);
}

/* fp16(fp32(acc) x deq_scale), then Relu / LeakyRelu */
static void test_dequant(void **state)
{
    (void)state;
    /* 1000 x 0.001f = 1.0000000475 in fp32 -> 1.0 in fp16 */
    assert_int_equal(nb_sim_dequant(1000, 0.001f, 0, 0), 0x3C00);
    assert_int_equal(nb_sim_dequant(33, 0.5f, 0, 0), nb_sim_f16(16.5));
    assert_int_equal(nb_sim_dequant(-1000, 0.001f, 1, 0), 0x0000);            /* Relu */
    /* LeakyRelu 0.1: -1.0 x 0.1f (= -0.100000001490116) -> fp16 -0.1 (0xAE66) */
    assert_int_equal(nb_sim_dequant(-1000, 0.001f, 2, 0.1f), 0xAE66);
    /* 2^30 x 1 saturates at 65504, not infinity */
    assert_int_equal(nb_sim_dequant(1 << 30, 1.0f, 0, 0), 0x7BFF);
    assert_int_equal(nb_sim_dequant(-(1 << 30), 1.0f, 1, 0), 0x0000);
}

/* The tables: 512 steps of 1/16 over [-16, 16), fraction truncated to 8 bits. */
static void test_tables(void **state)
{
    (void)state;
    assert_int_equal(nb_sim_table_tanh(nb_sim_f16(0.0)), 0x0000);
    assert_int_equal(nb_sim_table_sigmoid(nb_sim_f16(0.0)), 0x3800); /* 0.5 */
    /* x = 2^-10: step 256, fraction 2^-10 x 16 = 1/64 = 4/256 (exact in 8 bits);
       T[257] = fp16(tanh(1/16)) = 2045 x 2^-15 (0x2BFD); y = 4/256 x 2045 x 2^-15 =
       2045 x 2^-21, bits 0x13FD, against tanh(2^-10) ~ 2^-10 (0x1400): 0.15% low */
    assert_int_equal(nb_sim_table_tanh(0x1400), 0x13FD);
    /* x = 2^-14: the fraction 2^-10 truncates to 0 in 8 bits: y = T[256] = 0, all of the
       value lost: the small-input error of a table function */
    assert_int_equal(nb_sim_table_tanh(0x0400), 0x0000);
    /* beyond the range: the end entries fp16(tanh(+-16)) = +-1 */
    assert_int_equal(nb_sim_table_tanh(nb_sim_f16(100.0)), 0x3C00);
    assert_int_equal(nb_sim_table_tanh(nb_sim_f16(-100.0)), 0xBC00);
    /* sigmoid(1) on a table point (position 272, fraction 0): fp16(0.7310585786) = 0x39D9 */
    assert_int_equal(nb_sim_table_sigmoid(nb_sim_f16(1.0)), 0x39D9);
}

/* The cycle model's defaults are the documented ones (share/npu-cycles.conf). */
static void test_cycle_params(void **state)
{
    (void)state;
    nb_cycle_params d, f;
    nb_cycle_params_default(&d);
    nb_status st = {0};
    if (nb_cycle_params_load(NB_SOURCE_DIR "/share/npu-cycles.conf", &f, &st))
        fail_msg("%s", st.msg);
    assert_true(d.cube_ops_s8s8 == 250 && f.cube_ops_s8s8 == 250); /* 16 Gops / 64 MHz */
    assert_true(d.vector_lanes == f.vector_lanes && d.task_overhead == f.task_overhead &&
                d.weight_bytes_per_cycle == f.weight_bytes_per_cycle &&
                d.act_bytes_per_cycle == f.act_bytes_per_cycle &&
                d.cube_ops_s16s8 == f.cube_ops_s16s8 && d.cube_ops_s8s4 == f.cube_ops_s8s4 &&
                d.vector_table_cost == f.vector_table_cost &&
                d.vector_math_cost == f.vector_math_cost);
}

int main(void)
{
    nb_sim_numerics_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_rounding), cmocka_unit_test(test_quant),
        cmocka_unit_test(test_dequant),      cmocka_unit_test(test_tables),
        cmocka_unit_test(test_cycle_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
