/* The comparison metrics (engine/accucmp, share/doc/metrics.md) against vectors worked by
 * hand, with their edge cases (zeros, a scalar, NaN and infinity, fp16 saturation), and the
 * thresholds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nb/accucmp.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* x = (1, 2, 3, 4) against y = (1, 2, 3, 5): one element off by 1.
 * cos = 34 / sqrt(30 x 39) = 0.993994; max abs 1; accumulated relative |4/5 - 1| = 0.2;
 * relative Euclidean 1 / sqrt(39) = 0.160128; MAE 1/4; RMSE sqrt(1/4) = 0.5; max relative
 * 0.2, mean relative 0.05; SQNR 10 log10(39) = 15.9106 dB; means 2.5 and 2.75, stds
 * sqrt(1.25) = 1.118034 and sqrt(8.75 / 4) = 1.479020; KL: P_x = (0, 1/3, 2/3, 1) -> p_x
 * (0, 1/6, 1/3, 1/2), P_y = (0, 1/4, 1/2, 1) -> p_y (0, 1/7, 2/7, 4/7) (zeros floored at
 * FLT_EPSILON, negligible): 1/6 ln(7/6) + 1/3 ln(7/6) + 1/2 ln(7/8) = 1/2 ln(49/48)
 * = 0.0103096. */
static void test_hand_vector(void **state)
{
    (void)state;
    double x[4] = {1, 2, 3, 4}, y[4] = {1, 2, 3, 5};
    nb_cmp_metrics m;
    nb_cmp_metrics_compute(x, y, 4, &m);
    assert_int_equal(m.n, 4);
    NEAR(m.cos, 34 / sqrt(1170.0), 1e-12);
    NEAR(m.max_abs, 1, 0);
    NEAR(m.acc_rel, 0.2, 1e-12);
    NEAR(m.red, 1 / sqrt(39.0), 1e-12);
    NEAR(m.mae, 0.25, 1e-12);
    NEAR(m.rmse, 0.5, 1e-12);
    NEAR(m.max_rel, 0.2, 1e-12);
    NEAR(m.mean_rel, 0.05, 1e-12);
    NEAR(m.sqnr_db, 10 * log10(39.0), 1e-9);
    NEAR(m.mean_x, 2.5, 1e-12);
    NEAR(m.mean_y, 2.75, 1e-12);
    NEAR(m.std_x, sqrt(1.25), 1e-12);
    NEAR(m.std_y, sqrt(8.75 / 4), 1e-12);
    NEAR(m.kl, 0.5 * log(49.0 / 48.0), 1e-6);
    assert_int_equal(m.nan_x + m.nan_y + m.inf_x + m.inf_y + m.sat_x, 0);
}

/* Both sides zero: cosine 1 (the vendor's "both norms <= eps"), errors 0, SQNR +inf. Only
 * the golden side zero: cosine NaN with the reason, relative errors 0 (|y| <= eps counts
 * 0), relative Euclidean distance +inf. */
static void test_zeros(void **state)
{
    (void)state;
    double z[2] = {0, 0}, x[2] = {1, 0};
    nb_cmp_metrics m;
    nb_cmp_metrics_compute(z, z, 2, &m);
    assert_true(m.cos == 1.0 && m.max_abs == 0 && m.red == 0 && isinf(m.sqnr_db));
    nb_cmp_metrics_compute(x, z, 2, &m);
    assert_true(isnan(m.cos));
    assert_non_null(strstr(m.note, "all the data is zero in the golden dump"));
    assert_true(m.acc_rel == 0 && m.max_rel == 0 && isinf(m.red) && m.max_abs == 1);
    nb_cmp_metrics_compute(z, x, 2, &m);
    assert_non_null(strstr(m.note, "all the data is zero in the NPU dump"));
}

/* A scalar: cosine 1 ("this tensor is scalar"), the errors as usual: |2 - 4| = 2, 0.5. */
static void test_scalar(void **state)
{
    (void)state;
    double x = 2, y = 4;
    nb_cmp_metrics m;
    nb_cmp_metrics_compute(&x, &y, 1, &m);
    assert_true(m.cos == 1.0);
    assert_non_null(strstr(m.note, "scalar"));
    NEAR(m.max_abs, 2, 0);
    NEAR(m.max_rel, 0.5, 1e-15);
}

/* NaN in golden and infinity on the NPU side: counted, the pairs left out; a value at the
 * fp16 limit counted as saturation. */
static void test_nonfinite_and_saturation(void **state)
{
    (void)state;
    double x[4] = {1, 2, INFINITY, 65504}, y[4] = {1, NAN, 3, 70000};
    nb_cmp_metrics m;
    nb_cmp_metrics_compute(x, y, 4, &m);
    assert_int_equal(m.n, 2);       /* (1, 1) and (65504, 70000) */
    assert_int_equal(m.nan_y, 1);
    assert_int_equal(m.inf_x, 1);
    assert_int_equal(m.sat_x, 1);
    NEAR(m.max_abs, 4496, 0);
    NEAR(m.max_rel, 4496 / 70000.0, 1e-12);
    double nx[2] = {NAN, NAN}, ny[2] = {1, 2};
    nb_cmp_metrics_compute(nx, ny, 2, &m);
    assert_int_equal(m.n, 0);
    assert_true(isnan(m.cos) && isnan(m.rmse));
}

/* The vendor's thresholds: cos < 0.99, red > 0.05, kl > 0.005, rmse > 1, mre > 1. */
static void test_thresholds(void **state)
{
    (void)state;
    nb_cmp_thresholds t;
    nb_cmp_thresholds_default(&t);
    double x[4] = {1, 2, 3, 4}, y[4] = {1, 2, 3, 5};
    nb_cmp_metrics m;
    nb_cmp_metrics_compute(x, y, 4, &m);
    char why[64];
    /* cos 0.994 passes, red 0.16 and kl 0.0103 fail, rmse 0.5 and mre 0.05 pass */
    assert_true(nb_cmp_fails(&m, &t, why, sizeof why));
    assert_string_equal(why, "red, kl");
    nb_status st = {0};
    assert_int_equal(nb_cmp_thresholds_parse("red=0.2,kl=0.02", &t, &st), NB_OK);
    assert_false(nb_cmp_fails(&m, &t, why, sizeof why));
    assert_string_equal(why, "");
    assert_int_equal(nb_cmp_thresholds_parse("cos=high", &t, &st), NB_ERR_ARG);
    assert_int_equal(nb_cmp_thresholds_parse("snr=3", &t, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "unknown metric 'snr'"));
}

/* x = (1, 2, 3, 4, 5) against y = (1, 2.5, 2, 4, 0): errors x - y = (0, -0.5, 1, 0, 5),
 * |e| = (0, 0.5, 1, 0, 5). Worst 3: 4 (5), 2 (1), 1 (0.5); all 5: then 0 and 3 (both 0, the
 * lower index first); more than n asked: n. With a NaN on the NPU side at 3 and an
 * infinity on the golden side at 0, both rank first (as +inf, by index: 0, 3), then 4. */
static void test_worst_k(void **state)
{
    (void)state;
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 2.5, 2, 4, 0};
    int64_t idx[8];
    assert_int_equal(nb_cmp_worst_k(x, y, 5, 3, idx), 3);
    assert_int_equal(idx[0], 4);
    assert_int_equal(idx[1], 2);
    assert_int_equal(idx[2], 1);
    assert_int_equal(nb_cmp_worst_k(x, y, 5, 8, idx), 5);
    const int64_t all[5] = {4, 2, 1, 0, 3};
    for (int i = 0; i < 5; i++)
        assert_int_equal(idx[i], all[i]);
    assert_int_equal(nb_cmp_worst_k(x, y, 5, 0, idx), 0);
    assert_int_equal(nb_cmp_worst_k(x, y, 0, 3, idx), 0);
    x[3] = NAN;
    y[0] = INFINITY;
    assert_int_equal(nb_cmp_worst_k(x, y, 5, 3, idx), 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 3);
    assert_int_equal(idx[2], 4);
}

/* The errors e = (0, -0.5, 1, 0, 5) of test_worst_k in 4 bins: range [-0.5, 5], width
 * 5.5 / 4 = 1.375, edges -0.5, 0.875, 2.25, 3.625, 5; counts: [-0.5, 0.875) holds 0, -0.5,
 * 0 -> 3; [0.875, 2.25) holds 1; [2.25, 3.625) none; [3.625, 5] holds 5 (the last bin is
 * closed). numpy.histogram([0, -0.5, 1, 0, 5], 4) gives the same. */
static void test_histogram(void **state)
{
    (void)state;
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 2.5, 2, 4, 0};
    double edges[5];
    int64_t counts[4], out = -1;
    nb_status st = {0};
    assert_int_equal(nb_cmp_error_histogram(x, y, 5, 4, edges, counts, &out, &st), NB_OK);
    const double we[5] = {-0.5, 0.875, 2.25, 3.625, 5};
    const int64_t wc[4] = {3, 1, 0, 1};
    for (int i = 0; i < 5; i++)
        NEAR(edges[i], we[i], 1e-15);
    for (int i = 0; i < 4; i++)
        assert_int_equal(counts[i], wc[i]);
    assert_int_equal(out, 0);
    /* a value on an inner edge goes to the bin above: e = (0, 1, 2) in 2 bins, edges 0, 1,
       2: [0, 1) holds 0, [1, 2] holds 1 and 2 */
    double a[3] = {0, 1, 2}, z[3] = {0, 0, 0}, e3[3];
    int64_t c2[2];
    assert_int_equal(nb_cmp_error_histogram(a, z, 3, 2, e3, c2, NULL, &st), NB_OK);
    assert_true(e3[0] == 0 && e3[1] == 1 && e3[2] == 2 && c2[0] == 1 && c2[1] == 2);
    /* every error 3 (x = 3, y = 0): the range [2.5, 3.5]; 2 bins, edges 2.5, 3, 3.5: both
       in the upper bin (numpy: [0, 2]) */
    double t[2] = {3, 3};
    assert_int_equal(nb_cmp_error_histogram(t, z, 2, 2, e3, c2, NULL, &st), NB_OK);
    assert_true(e3[0] == 2.5 && e3[1] == 3 && e3[2] == 3.5 && c2[0] == 0 && c2[1] == 2);
    /* NaN and infinity left out and counted; none finite: range [0, 1], counts 0 */
    double nx[2] = {NAN, 1}, ny[2] = {0, INFINITY};
    assert_int_equal(nb_cmp_error_histogram(nx, ny, 2, 2, e3, c2, &out, &st), NB_OK);
    assert_true(out == 2 && e3[0] == 0 && e3[1] == 0.5 && e3[2] == 1 && c2[0] == 0 && c2[1] == 0);
    /* a scaled position that rounds onto the wrong side of an edge is moved: e = 0.3 in
       10 bins over [0, 1] (the extremes 0 and 1 present): (0.3 - 0) / 1 x 10 rounds to
       exactly 3 -> bin 3, but edges[3] = 3 x 0.1 = 0.30000000000000004 > 0.3, so 0.3
       belongs to bin 2 (numpy's correction step does the same) */
    double p[3] = {0, 0.3, 1}, e11[11];
    int64_t c10[10];
    assert_int_equal(nb_cmp_error_histogram(p, z, 3, 10, e11, c10, NULL, &st), NB_OK);
    assert_int_equal(c10[0], 1);
    assert_int_equal(c10[2], 1);
    assert_int_equal(c10[3], 0);
    assert_int_equal(c10[9], 1);
    /* bins out of range */
    assert_int_equal(nb_cmp_error_histogram(x, y, 5, 0, edges, counts, NULL, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "bins 0"));
    assert_int_equal(nb_cmp_error_histogram(x, y, 5, NB_CMP_MAX_BINS + 1, edges, counts, NULL,
                                            &st), NB_ERR_ARG);
}

/* Flat index to NCHW: dims (2, 3, 4): 23 = 1 x 12 + 2 x 4 + 3 -> (1, 2, 3); 13 -> (1, 0, 1);
 * 0 -> (0, 0, 0); rank 1: itself. */
static void test_unravel(void **state)
{
    (void)state;
    const int64_t dims[3] = {2, 3, 4};
    int64_t idx[3];
    nb_cmp_unravel(23, 3, dims, idx);
    assert_true(idx[0] == 1 && idx[1] == 2 && idx[2] == 3);
    nb_cmp_unravel(13, 3, dims, idx);
    assert_true(idx[0] == 1 && idx[1] == 0 && idx[2] == 1);
    nb_cmp_unravel(0, 3, dims, idx);
    assert_true(idx[0] == 0 && idx[1] == 0 && idx[2] == 0);
    const int64_t d1[1] = {7};
    nb_cmp_unravel(5, 1, d1, idx);
    assert_int_equal(idx[0], 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_vector), cmocka_unit_test(test_zeros),
        cmocka_unit_test(test_scalar), cmocka_unit_test(test_nonfinite_and_saturation),
        cmocka_unit_test(test_thresholds), cmocka_unit_test(test_worst_k),
        cmocka_unit_test(test_histogram), cmocka_unit_test(test_unravel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
