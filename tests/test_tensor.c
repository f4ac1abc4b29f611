/* Tensors, IEEE half conversion, .npy and .bin I/O. Expected values are worked out by hand
 * next to each assertion. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "nb/tensor.h"


static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void test_half_conversion(void **state)
{
    (void)state;
    /* binary16: sign 1, exponent 5 (bias 15), mantissa 10 */
    assert_int_equal(nb_float_to_half(1.0f), 0x3C00);      /* 2^0 */
    assert_int_equal(nb_float_to_half(-2.0f), 0xC000);     /* sign, 2^1 */
    assert_int_equal(nb_float_to_half(65504.0f), 0x7BFF);  /* largest finite */
    assert_int_equal(nb_float_to_half(65520.0f), 0x7C00);  /* halfway to 2^16: rounds to inf */
    assert_int_equal(nb_float_to_half(0x1p-24f), 0x0001);  /* smallest subnormal */
    /* 2049 lies halfway between 2048 and 2050 (spacing 2 at 2^11): ties to even -> 2048 */
    assert_int_equal(nb_float_to_half(2049.0f), 0x6800);
    /* 2051 lies halfway between 2050 and 2052: even mantissa is 2052 = 0x6802 */
    assert_int_equal(nb_float_to_half(2051.0f), 0x6802);
    /* 1/3 = 1.0101..b x 2^-2: exponent 13, mantissa 0x155.55.. rounds down: 0x3555 */
    assert_int_equal(nb_float_to_half(1.0f / 3.0f), 0x3555);
    assert_true(nb_half_to_float(0x3555) == 0.333251953125f);
    assert_true(isinf(nb_half_to_float(0x7C00)));
    assert_true(isnan(nb_half_to_float(0x7E00)));
    /* bfloat16 keeps the top 16 bits of binary32: 1.0 = 0x3F80 */
    assert_int_equal(nb_float_to_bf16(1.0f), 0x3F80);
    assert_true(nb_bf16_to_float(0x4049) == 3.140625f);
}

static void test_shape_numel(void **state)
{
    (void)state;
    int64_t n;
    nb_status st = {0};
    const int64_t ok[] = {2, 3, 4};
    assert_int_equal(nb_shape_numel(3, ok, 4, &n, &st), NB_OK);
    assert_int_equal(n, 24);
    const int64_t neg[] = {2, -1};
    assert_int_equal(nb_shape_numel(2, neg, 4, &n, &st), NB_ERR_SHAPE);
    assert_non_null(strstr(st.msg, "negative"));
    const int64_t over[] = {(int64_t)1 << 40, (int64_t)1 << 40};
    assert_int_equal(nb_shape_numel(2, over, 4, &n, &st), NB_ERR_SHAPE);
    const int64_t big[] = {(int64_t)1 << 31, (int64_t)1 << 31}; /* 2^62 elements: too large */
    assert_int_equal(nb_shape_numel(2, big, 4, &n, &st), NB_ERR_SHAPE);
    const int64_t zero[] = {0, 5};
    assert_int_equal(nb_shape_numel(2, zero, 4, &n, &st), NB_OK);
    assert_int_equal(n, 0);
    /* empty, but loops over the other dims would run 2^62 times: refused like a full one */
    const int64_t zero_big[] = {0, (int64_t)1 << 62};
    assert_int_equal(nb_shape_numel(2, zero_big, 4, &n, &st), NB_ERR_SHAPE);
}

static void test_npy_roundtrip(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/a.npy", tmpdir);
    nb_status st = {0};
    const int64_t dims[] = {2, 3};
    nb_tensor *t;
    assert_int_equal(nb_tensor_new(NB_FLOAT, 2, dims, &t, &st), NB_OK);
    for (int i = 0; i < 6; i++)
        ((float *)t->data)[i] = (float)i * 0.5f - 1.0f;
    assert_int_equal(nb_npy_write(path, t, &st), NB_OK);
    /* the header is padded so that the data starts at a multiple of 64 bytes */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    assert_int_equal(ftell(f), 128 + 24);
    fclose(f);
    nb_tensor *r;
    assert_int_equal(nb_npy_read(path, &r, &st), NB_OK);
    assert_int_equal(r->dtype, NB_FLOAT);
    assert_int_equal(r->rank, 2);
    assert_int_equal(r->dims[1], 3);
    assert_memory_equal(r->data, t->data, 24);
    nb_tensor_free(r);
    nb_tensor_free(t);
    /* a scalar int64 */
    assert_int_equal(nb_tensor_new(NB_INT64, 0, NULL, &t, &st), NB_OK);
    *(int64_t *)t->data = -7;
    assert_int_equal(nb_npy_write(path, t, &st), NB_OK);
    assert_int_equal(nb_npy_read(path, &r, &st), NB_OK);
    assert_int_equal(r->rank, 0);
    assert_int_equal(*(int64_t *)r->data, -7);
    nb_tensor_free(r);
    nb_tensor_free(t);
}

/* A hand-written numpy header: int32 (2,2), values 1..4. */
static void test_npy_handwritten(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/h.npy", tmpdir);
    const char hdr[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }";
    uint8_t buf[256];
    size_t hl = sizeof hdr - 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hl + 1);
    buf[9] = 0;
    memcpy(buf + 10, hdr, hl);
    buf[10 + hl] = '\n';
    int32_t v[4] = {1, 2, 3, 4};
    memcpy(buf + 11 + hl, v, 16);
    write_bytes(path, buf, 11 + hl + 16);
    nb_status st = {0};
    nb_tensor *t;
    assert_int_equal(nb_npy_read(path, &t, &st), NB_OK);
    assert_int_equal(t->dtype, NB_INT32);
    assert_int_equal(((int32_t *)t->data)[3], 4);
    nb_tensor_free(t);
    /* data cut short: 12 of 16 bytes */
    write_bytes(path, buf, 11 + hl + 12);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, path));
    /* trailing bytes after the 16 the shape needs: the header does not describe the file */
    memset(buf + 11 + hl + 16, 0, 4);
    write_bytes(path, buf, 11 + hl + 20);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "20 bytes, shape needs 16"));
    /* 'Falsey' is not False */
    char *fo = strstr((char *)buf + 10, "False,");
    fo[5] = 'y';
    write_bytes(path, buf, 11 + hl + 16);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
    fo[5] = ',';
    /* a key given twice: "'shape': (2, 2)" becomes "'shape': (2,'shape'" */
    memcpy(strstr((char *)buf + 10, "(2, 2)") + 3, "'shape'", 7);
    write_bytes(path, buf, 11 + hl + 16);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "twice"));
    memcpy(strstr((char *)buf + 10, "(2,'shape'") + 3, " 2), }\n", 7);
    /* fortran order is refused */
    memcpy(strstr((char *)buf + 10, "False"), "True ", 5);
    write_bytes(path, buf, 11 + hl + 16);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "fortran"));
    /* float64 is not a Nano type */
    const char hdr8[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
    hl = sizeof hdr8 - 1;
    buf[8] = (uint8_t)(hl + 1);
    memcpy(buf + 10, hdr8, hl);
    buf[10 + hl] = '\n';
    memset(buf + 11 + hl, 0, 8);
    write_bytes(path, buf, 11 + hl + 8);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_UNSUPPORTED);
    /* not npy at all */
    write_bytes(path, "hello", 5);
    assert_int_equal(nb_npy_read(path, &t, &st), NB_ERR_FORMAT);
}

static void test_bin_size_mismatch(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/x.bin", tmpdir);
    float v[5] = {0};
    write_bytes(path, v, sizeof v);
    const int64_t dims[] = {2, 3};
    nb_status st = {0};
    nb_tensor *t;
    assert_int_equal(nb_bin_read(path, NB_FLOAT, 2, dims, &t, &st), NB_ERR_DATA);
    assert_non_null(strstr(st.msg, "20 bytes"));
    assert_non_null(strstr(st.msg, "24"));
    const int64_t dims5[] = {5};
    assert_int_equal(nb_bin_read(path, NB_FLOAT, 1, dims5, &t, &st), NB_OK);
    assert_int_equal(t->numel, 5);
    nb_tensor_free(t);
}

static void test_atomic_write_leaves_no_file_on_error(void **state)
{
    (void)state;
    nb_status st = {0};
    assert_int_equal(nb_write_file_atomic("/nonexistent-dir/x.npy", "a", 1, &st), NB_ERR_IO);
    assert_non_null(strstr(st.msg, "/nonexistent-dir/x.npy"));
}

/* Live tensor bytes are held to the budget (here NANOBENCH_MEM_BUDGET_MB=256, set in main):
 * two uninitialised tensors of just over half the budget cannot both exist; the second is
 * a shape error naming its shape, and the first still frees cleanly. */
static void test_memory_budget(void **state)
{
    (void)state;
    int64_t budget = nb_mem_budget(), before = nb_mem_live();
    assert_true(budget == (int64_t)256 << 20);
    int64_t half = budget / 2 + 64, d = half; /* INT8: one byte per element */
    nb_tensor *a = NULL, *b = NULL;
    nb_status st = {0};
    assert_int_equal(nb_tensor_new_uninit(NB_INT8, 1, &d, &a, &st), NB_OK);
    assert_true(nb_mem_live() == before + half);
    assert_int_equal(nb_tensor_new_uninit(NB_INT8, 1, &d, &b, &st), NB_ERR_SHAPE);
    assert_null(b);
    assert_non_null(strstr(st.msg, "budget"));
    nb_tensor_free(a);
    assert_true(nb_mem_live() == before);
    /* a 0 dim does not hide an overflow in the others, wherever it stands */
    const int64_t z[3] = {(int64_t)1 << 62, 0, (int64_t)1 << 62};
    int64_t n;
    assert_int_equal(nb_shape_numel(3, z, 4, &n, &st), NB_ERR_SHAPE);
    assert_non_null(strstr(st.msg, "overflows"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_conversion),
        cmocka_unit_test(test_shape_numel),
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test(test_npy_handwritten),
        cmocka_unit_test(test_bin_size_mismatch),
        cmocka_unit_test(test_atomic_write_leaves_no_file_on_error),
        cmocka_unit_test(test_memory_budget),
    };
    setenv("NANOBENCH_MEM_BUDGET_MB", "256", 1); /* before the first allocation */
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
