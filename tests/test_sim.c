/* The simulated NPU's arithmetic, element by element, against values worked by hand
 * (share/doc/npu-numerics.md): fp16 rounding and saturation, AscendQuant, AscendDequant
 * with its fused activations, the Tanh/Sigmoid tables and their small-input error. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "nb/sim.h"

/* ---- a tiny exeom built byte by byte (share/doc/exeom.md), for the kernels the compiler
   does not emit yet (int4 weights), for int16 activations (the compiler's own in test_exeom's
   test_sim_matmul_int16) and for hand-checked layouts ---- */
typedef struct xt {
    int dtype, format, role, rank, dims[6];
    uint32_t place;
} xt;
typedef struct xk {
    int kernel, unit, n_in, n_out, in[8], out[4];
    uint8_t params[32];
} xk;

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Builds the file; weights[] holds the weight section (placed by each weight's place). */
static uint8_t *build(const xt *t, int nt, const xk *k, int nk, const uint8_t *weights,
                      uint32_t wbytes, uint32_t arena, size_t *len)
{
    size_t n = 64 + 48 * (size_t)nt + 64 * (size_t)nk + wbytes;
    uint8_t *b = calloc(1, n);
    memcpy(b, "NBXO", 4);
    put16(b + 4, 1);
    put16(b + 6, 1);
    put32(b + 8, (uint32_t)nt);
    put32(b + 12, (uint32_t)nk);
    int ins = 0, outs = 0;
    for (int i = 0; i < nt; i++)
        ins += t[i].role == 0, outs += t[i].role == 1;
    put32(b + 16, (uint32_t)ins);
    put32(b + 20, (uint32_t)outs);
    put32(b + 24, arena);
    uint32_t off[3] = {64, 64 + 48 * (uint32_t)nt, 64 + 48 * (uint32_t)nt + 64 * (uint32_t)nk};
    uint32_t sz[3] = {48 * (uint32_t)nt, 64 * (uint32_t)nk, wbytes};
    for (int i = 0; i < nt; i++) {
        uint8_t *d = b + off[0] + 48 * i;
        d[0] = (uint8_t)t[i].dtype, d[1] = (uint8_t)t[i].format, d[2] = (uint8_t)t[i].role;
        d[3] = (uint8_t)t[i].rank;
        for (int j = 0; j < 6; j++)
            put32(d + 4 + 4 * j, (uint32_t)t[i].dims[j]);
        nb_exeom_tensor e = {.dtype = (uint8_t)t[i].dtype, .format = (uint8_t)t[i].format,
                             .rank = (uint8_t)t[i].rank};
        memcpy(e.dims, t[i].dims, sizeof e.dims);
        put32(d + 28, (uint32_t)nb_sim_tensor_bytes(&e));
        put32(d + 32, t[i].place);
        put16(d + 36, 0xFFFF);
        put16(d + 38, 0xFFFF);
    }
    for (int i = 0; i < nk; i++) {
        uint8_t *d = b + off[1] + 64 * i;
        put16(d, (uint32_t)k[i].kernel);
        d[2] = (uint8_t)k[i].unit, d[3] = (uint8_t)k[i].n_in, d[4] = (uint8_t)k[i].n_out;
        for (int j = 0; j < 8; j++)
            put16(d + 8 + 2 * j, j < k[i].n_in ? (uint32_t)k[i].in[j] : 0xFFFF);
        for (int j = 0; j < 4; j++)
            put16(d + 24 + 2 * j, j < k[i].n_out ? (uint32_t)k[i].out[j] : 0xFFFF);
        memcpy(d + 32, k[i].params, 32);
    }
    memcpy(b + off[2], weights, wbytes);
    for (int s = 0; s < 3; s++) {
        put32(b + 28 + 12 * s, off[s]);
        put32(b + 32 + 12 * s, sz[s]);
        put32(b + 36 + 12 * s, (uint32_t)crc32(crc32(0L, Z_NULL, 0), b + off[s], sz[s]));
    }
    *len = n;
    return b;
}

static void quant_params(uint8_t *p, float scale, float offset, int bits)
{
    memcpy(p, &scale, 4);
    memcpy(p + 4, &offset, 4);
    p[8] = (uint8_t)bits;
}

/* Loads, runs with input values in (logical order), returns output values. */
static void run_model(const uint8_t *file, size_t len, const double *in, int n_in_vals,
                      double *out, int n_out_vals)
{
    nb_sim_model *m = NULL;
    nb_status st = {0};
    if (nb_sim_load(file, len, NULL, &m, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(m);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(m, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(m, 0)];
    uint8_t *ib = calloc(1, ti->bytes), *ob = calloc(1, to->bytes);
    for (int i = 0; i < n_in_vals; i++)
        nb_sim_set(ti, ib, i, in[i]);
    const void *ins[1] = {ib};
    void *outs[1] = {ob};
    if (nb_sim_execute(m, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    for (int i = 0; i < n_out_vals; i++)
        out[i] = nb_sim_get(to, ob, i);
    free(ib), free(ob);
    nb_sim_free(m);
}

/* The model run on in, in a child with the environment variable var set to val (the
 * simulator reads its path switches once per process), into b. */
static void run_child(const char *var, const char *val, const uint8_t *f, size_t len,
                      const double *in, int n_in, double *b, int n_out)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    int pid = fork();
    if (pid == 0) {
        close(fd[0]);
        setenv(var, val, 1);
        run_model(f, len, in, n_in, b, n_out);
        size_t want = sizeof(double) * (size_t)n_out;
        _exit(write(fd[1], b, want) == (ssize_t)want ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0, want = sizeof(double) * (size_t)n_out;
    while (got < want) {
        ssize_t n = read(fd[0], (char *)b + got, want - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == want);
}

/* The model run twice on in: the plain path (NANOBENCH_SIM_SCALAR, read once per process:
 * in a child) into b, and the F16C path (where the CPU has it) into a. */
static void run_both(const uint8_t *f, size_t len, const double *in, int n_in, double *a,
                     double *b, int n_out)
{
    run_child("NANOBENCH_SIM_SCALAR", "1", f, len, in, n_in, b, n_out);
    run_model(f, len, in, n_in, a, n_out);
}

static void put_f32(uint8_t *w, uint32_t at, float v) { memcpy(w + at, &v, 4); }

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

/* MatMul s16 x s8: x [1,3] = (300, -200, 1000) quantized to int16 (scale 1, offset 0),
 * W [2,3] = [[1, 2, 3], [-1, 0, 2]], bias (5, -5), deq_scale (0.5, 0.25):
 * acc0 = 5 + 300 - 400 + 3000 = 2905, x 0.5 = 1452.5 -> fp16 1452 (spacing 1: a tie, to
 * even); acc1 = -5 - 300 + 2000 = 1695, x 0.25 = 423.75 (exact). */
static void test_matmul_s16s8(void **state)
{
    (void)state;
    /* tensors: 0 x fp16 ND in, 1 x int16 NZ, 2 W int8 NZ [2,3], 3 bias, 4 deq, 5 acc int32 NZ,
       6 y fp16 ND out */
    xt t[7] = {{1, 2, 0, 2, {1, 3}, 0},   {6, 29, 2, 2, {1, 3}, 0},
               {2, 29, 3, 2, {2, 3}, 0},   {3, 2, 3, 1, {16}, 512},
               {10, 2, 3, 1, {16}, 576},   {3, 29, 2, 2, {1, 2}, 1024},
               {1, 2, 1, 2, {1, 2}, 0}};
    uint8_t w[704] = {0};
    /* W N x K in FRACTAL_NZ (C0 32): (n, k) at (n % 16) * 32 + k for one block */
    int8_t wv[2][3] = {{1, 2, 3}, {-1, 0, 2}};
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 3; k++)
            w[n * 32 + k] = (uint8_t)wv[n][k];
    put32(w + 512, 5);
    put32(w + 516, (uint32_t)-5);
    put_f32(w, 576, 0.5f);
    put_f32(w, 584, 0.25f);
    xk k[3] = {{1, 0, 1, 1, {0}, {1}, {0}}, {7, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}},
               {2, 0, 1, 1, {5}, {6}, {0}}};
    quant_params(k[0].params, 1.0f, 0.0f, 16);
    size_t len;
    uint8_t *f = build(t, 7, k, 3, w, sizeof w, 4096, &len);
    double in[3] = {300, -200, 1000}, out[2];
    run_model(f, len, in, 3, out, 2);
    assert_true(out[0] == 1452.0);
    assert_true(out[1] == 423.75);
    free(f);
}

/* A MatMul of two activations (attention's Q x K^T), batched by head: x [1, 2, 2, 3] and
 * B [1, 2, 3, 2] are both fp16 inputs, each through its own AscendQuant (scale 1; offsets 3
 * and -2, which the cube takes off again: acc = sum (qx - 3) (qb + 2)), bias 0, deq_scale
 * 1. Head 0: [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]; head 1:
 * [[-1, 0, 2], [3, -2, 1]] x [[2, 1], [-1, 0], [0, 3]] = [[-2, 5], [8, 6]]. A B shared by
 * the heads (head 0's) would give head 1 [[1, 2], [4, -1]]. */
static void test_matmul_two_activations(void **state)
{
    (void)state;
    xt t[8] = {{1, 2, 0, 4, {1, 2, 2, 3}, 0},    {1, 2, 0, 4, {1, 2, 3, 2}, 1},
               {2, 29, 2, 4, {1, 2, 2, 3}, 0},   {2, 29, 2, 4, {1, 2, 3, 2}, 1024},
               {3, 2, 3, 1, {16}, 0},            {10, 2, 3, 1, {16}, 64},
               {3, 29, 2, 4, {1, 2, 2, 2}, 2048}, {1, 2, 1, 4, {1, 2, 2, 2}, 0}};
    uint8_t w[192] = {0};
    for (int c = 0; c < 16; c++)
        put_f32(w, 64 + 8 * (uint32_t)c, 1.0f);
    xk k[4] = {{1, 0, 1, 1, {0}, {2}, {0}}, {1, 0, 1, 1, {1}, {3}, {0}},
               {7, 1, 4, 1, {2, 3, 4, 5}, {6}, {0}}, {2, 0, 1, 1, {6}, {7}, {0}}};
    quant_params(k[0].params, 1.0f, 3.0f, 8);
    quant_params(k[1].params, 1.0f, -2.0f, 8);
    size_t len;
    uint8_t *f = build(t, 8, k, 4, w, sizeof w, 8192, &len);
    nb_sim_model *m = NULL;
    nb_status st = {0};
    if (nb_sim_load(f, len, NULL, &m, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(m);
    const double xv[12] = {1, 2, 3, 4, 5, 6, -1, 0, 2, 3, -2, 1},
                 bv[12] = {1, 0, 0, 1, 1, 1, 2, 1, -1, 0, 0, 3};
    const nb_exeom_tensor *tx = &x->t[nb_sim_input_tensor(m, 0)],
                          *tb = &x->t[nb_sim_input_tensor(m, 1)],
                          *ty = &x->t[nb_sim_output_tensor(m, 0)];
    uint8_t *ib0 = calloc(1, tx->bytes), *ib1 = calloc(1, tb->bytes), *ob = calloc(1, ty->bytes);
    for (int i = 0; i < 12; i++) {
        nb_sim_set(tx, ib0, i, xv[i]);
        nb_sim_set(tb, ib1, i, bv[i]);
    }
    const void *ins[2] = {ib0, ib1};
    void *outs[1] = {ob};
    if (nb_sim_execute(m, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    const double want[8] = {4, 5, 10, 11, -2, 5, 8, 6};
    for (int i = 0; i < 8; i++)
        assert_true(nb_sim_get(ty, ob, i) == want[i]);
    free(ib0), free(ib1), free(ob);
    nb_sim_free(m);
    free(f);
}

/* MatMul s8 x s4: x (3, -2, 5) with AscendQuant (scale 1, offset 1): q = (4, -1, 6);
 * W int4 [[7, -8, 1], [-1, 2, -3]] (two per byte, low nibble first), bias (0, 10), deq
 * (1, 0.5): acc0 = 28 + 8 + 6 = 42; acc1 = 10 - 4 - 2 - 18 = -14, x 0.5 = -7. */
static void test_matmul_s8s4(void **state)
{
    (void)state;
    xt t[7] = {{1, 2, 0, 2, {1, 3}, 0},   {2, 29, 2, 2, {1, 3}, 0},
               {29, 29, 3, 2, {2, 3}, 0},  {3, 2, 3, 1, {16}, 512},
               {10, 2, 3, 1, {16}, 576},   {3, 29, 2, 2, {1, 2}, 1024},
               {1, 2, 1, 2, {1, 2}, 0}};
    uint8_t w[704] = {0};
    /* int4 FRACTAL_NZ, C0 = 64: element (n, k) = (n % 16) * 64 + k, byte e / 2 */
    int wv[2][3] = {{7, -8, 1}, {-1, 2, -3}};
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 3; k++) {
            int e = n * 64 + k;
            w[e / 2] |= (uint8_t)((wv[n][k] & 15) << (4 * (e & 1)));
        }
    put32(w + 512, 0);
    put32(w + 516, 10);
    put_f32(w, 576, 1.0f);
    put_f32(w, 584, 0.5f);
    xk k[3] = {{1, 0, 1, 1, {0}, {1}, {0}}, {7, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}},
               {2, 0, 1, 1, {5}, {6}, {0}}};
    quant_params(k[0].params, 1.0f, 1.0f, 8);
    size_t len;
    uint8_t *f = build(t, 7, k, 3, w, sizeof w, 4096, &len);
    double in[3] = {3, -2, 5}, out[2];
    run_model(f, len, in, 3, out, 2);
    assert_true(out[0] == 42.0);
    assert_true(out[1] == -7.0);
    free(f);
}

/* Depthwise Conv (group 2) 1x3, pads 1 left and right, on x [1,2,1,3] = [[1,2,3],[0,-1,4]]
 * quantized with scale 1, offset -2: q = [[-1,0,1],[-2,-3,2]]; the padding reads the zero
 * point -2. W ch0 (1,1,1), ch1 (1,-1,2), bias 0, deq 1:
 * ch0: (-2 - 1 + 0, -1 + 0 + 1, 0 + 1 - 2) = (-3, 0, -1);
 * ch1: (-2 + 2 - 6, -2 + 3 + 4, -3 - 2 - 4) = (-6, 5, -9). */
static void test_conv_depthwise(void **state)
{
    (void)state;
    xt t[7] = {{1, 2, 0, 4, {1, 2, 1, 3}, 0},  {2, 3, 2, 4, {1, 2, 1, 3}, 0},
               {2, 4, 3, 4, {2, 1, 1, 3}, 0},  {3, 2, 3, 1, {16}, 1536},
               {10, 2, 3, 1, {16}, 1600},      {3, 3, 2, 4, {1, 2, 1, 3}, 1024},
               {1, 3, 1, 4, {1, 2, 1, 3}, 0}};
    uint8_t w[1728] = {0};
    /* FRACTAL_Z [Cout 2, Cin/g 1, 1, 3], C0 32: (co, 0, 0, kw) at kw * 512 + co * 32 */
    int wv[2][3] = {{1, 1, 1}, {1, -1, 2}};
    for (int co = 0; co < 2; co++)
        for (int kw = 0; kw < 3; kw++)
            w[kw * 512 + co * 32] = (uint8_t)(int8_t)wv[co][kw];
    put_f32(w, 1600, 1.0f);
    put_f32(w, 1608, 1.0f);
    xk k[3] = {{1, 0, 1, 1, {0}, {1}, {0}}, {5, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}},
               {2, 0, 1, 1, {5}, {6}, {0}}};
    quant_params(k[0].params, 1.0f, -2.0f, 8);
    /* kh kw sh sw pt pl pb pr dh dw group */
    uint16_t cp[11] = {1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 2};
    for (int i = 0; i < 11; i++)
        put16(k[1].params + 2 * i, cp[i]);
    size_t len;
    uint8_t *f = build(t, 7, k, 3, w, sizeof w, 4096, &len);
    double in[6] = {1, 2, 3, 0, -1, 4}, out[6];
    run_model(f, len, in, 6, out, 6);
    double want[6] = {-3, 0, -1, -6, 5, -9};
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == want[i]);
    /* the same file with a Conv stride of 0 is refused, naming the task */
    put16(k[1].params + 4, 0);
    free(f);
    f = build(t, 7, k, 3, w, sizeof w, 4096, &len);
    nb_sim_model *m = NULL;
    nb_status st = {0};
    assert_int_not_equal(nb_sim_load(f, len, NULL, &m, &st), NB_OK);
    assert_non_null(strstr(st.msg, "task 1 (Conv)"));
    free(f);
}

/* A one-channel filter bank (an STFT's shape) on the AVX2 GEMM path, whose taps are copied
 * from a dense copy of the channel, against the plain loops and the hand-worked sums: x [1,1,
 * 1,10] = 1..10 quantized with scale 1, offset -2 (q = x - 2, the padding reads the zero point
 * -2), W [2,1,1,5]: ch0 (1,1,1,1,1), ch1 (1,-1,2,0,-3), stride 2, pads 3 left and 2 right:
 * the padded row P = (-2,-2,-2, -1,0,1,...,8, -2,-2), output j sums P[2j .. 2j + 4] x W:
 * ch0 (-7, 0, 10, 20, 30, 17), ch1 (-4, -7, -9, -11, -13, 21); windows at both edges cover
 * the padding. */
static void test_conv_filter_bank(void **state)
{
    (void)state;
    xt t[7] = {{1, 2, 0, 4, {1, 1, 1, 10}, 0}, {2, 3, 2, 4, {1, 1, 1, 10}, 0},
               {2, 4, 3, 4, {2, 1, 1, 5}, 0},  {3, 2, 3, 1, {16}, 2560},
               {10, 2, 3, 1, {16}, 2624},      {3, 3, 2, 4, {1, 2, 1, 6}, 1024},
               {1, 3, 1, 4, {1, 2, 1, 6}, 0}};
    uint8_t w[2752] = {0};
    /* FRACTAL_Z [Cout 2, Cin 1, 1, 5], C0 32: (co, 0, 0, kw) at kw * 512 + co * 32 */
    int wv[2][5] = {{1, 1, 1, 1, 1}, {1, -1, 2, 0, -3}};
    for (int co = 0; co < 2; co++)
        for (int kw = 0; kw < 5; kw++)
            w[kw * 512 + co * 32] = (uint8_t)(int8_t)wv[co][kw];
    put_f32(w, 2624, 1.0f);
    put_f32(w, 2632, 1.0f);
    xk k[3] = {{1, 0, 1, 1, {0}, {1}, {0}}, {5, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}},
               {2, 0, 1, 1, {5}, {6}, {0}}};
    quant_params(k[0].params, 1.0f, -2.0f, 8);
    /* kh kw sh sw pt pl pb pr dh dw group */
    uint16_t cp[11] = {1, 5, 1, 2, 0, 3, 0, 2, 1, 1, 1};
    for (int i = 0; i < 11; i++)
        put16(k[1].params + 2 * i, cp[i]);
    size_t len;
    uint8_t *f = build(t, 7, k, 3, w, sizeof w, 4096, &len);
    double in[10], a[12], b[12];
    for (int i = 0; i < 10; i++)
        in[i] = i + 1;
    run_both(f, len, in, 10, a, b, 12);
    double want[12] = {-7, 0, 10, 20, 30, 17, -4, -7, -9, -11, -13, 21};
    for (int i = 0; i < 12; i++) {
        assert_memory_equal(&a[i], &b[i], sizeof(double));
        assert_true(a[i] == want[i]);
    }
    free(f);
}

/* The cube's paths give the same exact int32 sums (issue 39): 60 pseudo-random
 * convolutions (odd channel counts, 1 to 70 channels, strides, dilations, padding, groups and
 * depthwise, 1-channel filter banks with up to 40 taps, int8 and int16 x) run with
 * NANOBENCH_SIM_CUBE at portable (the plain loops), avx2 (the 16-bit GEMM) and vnni (AVX-512
 * VNNI; a path the CPU lacks falls back to the best it has), each in a child, the conv's
 * int32 output read directly, every value against the direct sum written out below: x
 * quantized with scale 1 and offset zp (q = clamp(in + zp) for integer in), zp outside x,
 * acc = bias + sum over the group's taps of q x W. */
static void test_conv_cube_paths(void **state)
{
    (void)state;
    uint32_t r = 4242;
#define RND(n) (r = r * 1103515245u + 12345u, (int)((r >> 8) % (uint32_t)(n)))
    for (int it = 0; it < 60; it++) {
        int N = 1 + RND(2), H = 1 + RND(8), W = 1 + RND(10), KH = 1 + RND(3), KW = 1 + RND(3);
        int sh = 1 + RND(2), sw = 1 + RND(2), dh = 1 + RND(2), dw = 1 + RND(2);
        int pt = RND(3), pl = RND(3), pb = RND(3), pr = RND(3), g = 1, C, Co;
        int kind = RND(4), bits = RND(3) ? 8 : 16, zp = RND(21) - 10;
        if (kind == 0) { /* depthwise, a channel multiplier of 1 or 2 */
            C = 1 + RND(40), g = C, Co = C * (1 + RND(2));
        } else if (kind == 1) { /* groups of 2 or 3 */
            g = 2 + RND(2), C = g * (1 + RND(12)), Co = g * (1 + RND(12));
        } else if (kind == 2) { /* a 1-channel filter bank: long 1-D taps */
            C = 1, Co = 1 + RND(40), H = 1, KH = 1, pt = pb = 0, dh = 1, W = 20 + RND(60);
            KW = 2 + RND(39), dw = RND(4) ? 1 : 2, sw = 1 + RND(4);
        } else {
            C = 1 + RND(70), Co = 1 + RND(40);
        }
        int OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
        int OW = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
        int span_h = dh * (KH - 1) + 1, span_w = dw * (KW - 1) + 1; /* the loader's rules */
        if (H + pt + pb < span_h || W + pl + pr < span_w || pt >= span_h + H ||
            pb >= span_h + H || pl >= span_w + W || pr >= span_w + W) {
            it--;
            continue;
        }
        int cg = C / g, xd = bits == 8 ? 2 : 6;
        nb_exeom_tensor e[6] = {{0}};
        xt t[6] = {{1, 2, 0, 4, {N, C, H, W}, 0},        {xd, 3, 2, 4, {N, C, H, W}, 0},
                   {2, 4, 3, 4, {Co, cg, KH, KW}, 0},    {3, 2, 3, 1, {Co}, 0},
                   {10, 2, 3, 1, {Co}, 0},               {3, 3, 1, 4, {N, Co, OH, OW}, 0}};
        int64_t sz[6];
        for (int i = 0; i < 6; i++) {
            e[i].dtype = (uint8_t)t[i].dtype, e[i].format = (uint8_t)t[i].format;
            e[i].rank = (uint8_t)t[i].rank;
            memcpy(e[i].dims, t[i].dims, sizeof e[i].dims);
            sz[i] = (nb_sim_tensor_bytes(&e[i]) + 63) / 64 * 64;
        }
        t[3].place = (uint32_t)sz[2], t[4].place = (uint32_t)(sz[2] + sz[3]);
        uint32_t wbytes = (uint32_t)(sz[2] + sz[3] + sz[4]);
        uint8_t *w = calloc(1, wbytes);
        int *wv = malloc(sizeof(int) * (size_t)(Co * cg * KH * KW)), *bias = malloc(sizeof(int) * (size_t)Co);
        int N1 = (Co + 15) / 16;
        for (int co = 0; co < Co; co++) {
            bias[co] = RND(20001) - 10000;
            put32(w + t[3].place + 4 * co, (uint32_t)bias[co]);
            put_f32(w, t[4].place + 8 * (uint32_t)co, 1.0f);
            for (int c = 0; c < cg; c++)
                for (int kh = 0; kh < KH; kh++)
                    for (int kw = 0; kw < KW; kw++) {
                        int v = RND(256) - 128, tile = ((c / 32) * KH + kh) * KW + kw;
                        wv[((co * cg + c) * KH + kh) * KW + kw] = v;
                        /* FRACTAL_Z, C0 32: (co, c, kh, kw) in tile (c / 32, kh, kw) */
                        w[((tile * N1 + co / 16) * 16 + co % 16) * 32 + c % 32] = (uint8_t)(int8_t)v;
                    }
        }
        xk k[2] = {{1, 0, 1, 1, {0}, {1}, {0}}, {5, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}}};
        quant_params(k[0].params, 1.0f, (float)zp, bits);
        uint16_t cp[11] = {(uint16_t)KH, (uint16_t)KW, (uint16_t)sh, (uint16_t)sw, (uint16_t)pt,
                           (uint16_t)pl, (uint16_t)pb, (uint16_t)pr, (uint16_t)dh, (uint16_t)dw,
                           (uint16_t)g};
        for (int i = 0; i < 11; i++)
            put16(k[1].params + 2 * i, cp[i]);
        size_t len;
        uint8_t *f = build(t, 6, k, 2, w, wbytes, (uint32_t)sz[1], &len);
        int nin = N * C * H * W, nout = N * Co * OH * OW, lim = bits == 8 ? 127 : 32767;
        double *in = malloc(sizeof(double) * (size_t)nin), *got = malloc(sizeof(double) * (size_t)nout);
        int *q = malloc(sizeof(int) * (size_t)nin);
        for (int i = 0; i < nin; i++) {
            in[i] = bits == 8 ? RND(281) - 140 : RND(4001) - 2000;
            q[i] = (int)in[i] + zp < -lim - 1 ? -lim - 1 : (int)in[i] + zp > lim ? lim : (int)in[i] + zp;
        }
        const char *paths[3] = {"portable", "avx2", "vnni"};
        for (int pi = 0; pi < 3; pi++) {
            run_child("NANOBENCH_SIM_CUBE", paths[pi], f, len, in, nin, got, nout);
            for (int n = 0; n < N; n++)
                for (int co = 0; co < Co; co++)
                    for (int oh = 0; oh < OH; oh++)
                        for (int ow = 0; ow < OW; ow++) {
                            int64_t acc = bias[co];
                            int gi = co / (Co / g);
                            for (int c = 0; c < cg; c++)
                                for (int kh = 0; kh < KH; kh++)
                                    for (int kw = 0; kw < KW; kw++) {
                                        int ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                                        int xv = ih < 0 || ih >= H || iw < 0 || iw >= W ? zp
                                                 : q[((n * C + gi * cg + c) * H + ih) * W + iw];
                                        acc += (int64_t)xv * wv[((co * cg + c) * KH + kh) * KW + kw];
                                    }
                            double v = got[((n * Co + co) * OH + oh) * OW + ow];
                            if (v != (double)acc)
                                fail_msg("case %d (%s): N %d C %d Co %d g %d %dx%d x%d K %dx%d s %d,%d "
                                         "d %d,%d: y[%d,%d,%d,%d] %.0f, want %lld",
                                         it, paths[pi], N, C, Co, g, H, W, bits, KH, KW, sh, sw,
                                         dh, dw, n, co, oh, ow, v, (long long)acc);
                        }
        }
        free(in), free(got), free(q), free(w), free(wv), free(bias), free(f);
    }
#undef RND
}

/* The same for MatMul with constant int8 weights: 30 pseudo-random [B, M, K] x [N, K]^T
 * (odd sizes, K up to 300 across several 32-lane blocks), each path against the direct sum
 * acc = bias + sum_k q(x) W (x quantized with scale 1, offset 0: q = clamp(in)). */
static void test_matmul_cube_paths(void **state)
{
    (void)state;
    uint32_t r = 777;
#define RND(n) (r = r * 1103515245u + 12345u, (int)((r >> 8) % (uint32_t)(n)))
    for (int it = 0; it < 30; it++) {
        int B = 1 + RND(2), M = 1 + RND(40), K = 1 + RND(300), N = 1 + RND(50), rk = B > 1 ? 3 : 2;
        xt t[6] = {{1, 2, 0, rk, {0}, 0},      {2, 29, 2, rk, {0}, 0},
                   {2, 29, 3, 2, {N, K}, 0},   {3, 2, 3, 1, {N}, 0},
                   {10, 2, 3, 1, {N}, 0},      {3, 29, 1, rk, {0}, 0}};
        int xd[3] = {B, M, K}, yd[3] = {B, M, N};
        for (int i = 0; i < rk; i++) {
            t[0].dims[i] = t[1].dims[i] = xd[3 - rk + i];
            t[5].dims[i] = yd[3 - rk + i];
        }
        int64_t sz[6];
        for (int i = 0; i < 6; i++) {
            nb_exeom_tensor e = {.dtype = (uint8_t)t[i].dtype, .format = (uint8_t)t[i].format,
                                 .rank = (uint8_t)t[i].rank};
            memcpy(e.dims, t[i].dims, sizeof e.dims);
            sz[i] = (nb_sim_tensor_bytes(&e) + 63) / 64 * 64;
        }
        t[3].place = (uint32_t)sz[2], t[4].place = (uint32_t)(sz[2] + sz[3]);
        uint32_t wbytes = (uint32_t)(sz[2] + sz[3] + sz[4]);
        uint8_t *w = calloc(1, wbytes);
        int *wv = malloc(sizeof(int) * (size_t)(N * K)), *bias = malloc(sizeof(int) * (size_t)N);
        int N1 = (N + 15) / 16;
        for (int n = 0; n < N; n++) {
            bias[n] = RND(20001) - 10000;
            put32(w + t[3].place + 4 * n, (uint32_t)bias[n]);
            put_f32(w, t[4].place + 8 * (uint32_t)n, 1.0f);
            for (int k = 0; k < K; k++) { /* FRACTAL_NZ, C0 32 */
                wv[n * K + k] = RND(256) - 128;
                w[(n / 16) * 512 + (n % 16) * 32 + (k / 32) * N1 * 512 + k % 32] =
                    (uint8_t)(int8_t)wv[n * K + k];
            }
        }
        xk k[2] = {{1, 0, 1, 1, {0}, {1}, {0}}, {7, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}}};
        quant_params(k[0].params, 1.0f, 0.0f, 8);
        size_t len;
        uint8_t *f = build(t, 6, k, 2, w, wbytes, (uint32_t)sz[1], &len);
        int nin = B * M * K, nout = B * M * N;
        double *in = malloc(sizeof(double) * (size_t)nin), *got = malloc(sizeof(double) * (size_t)nout);
        for (int i = 0; i < nin; i++)
            in[i] = RND(281) - 140;
        const char *paths[3] = {"portable", "avx2", "vnni"};
        for (int pi = 0; pi < 3; pi++) {
            run_child("NANOBENCH_SIM_CUBE", paths[pi], f, len, in, nin, got, nout);
            for (int b = 0; b < B; b++)
                for (int i = 0; i < M; i++)
                    for (int n = 0; n < N; n++) {
                        int64_t acc = bias[n];
                        for (int kk = 0; kk < K; kk++) {
                            double v = in[(b * M + i) * K + kk];
                            acc += (int64_t)(v > 127 ? 127 : v < -128 ? -128 : v) * wv[n * K + kk];
                        }
                        double v = got[(b * M + i) * N + n];
                        if (v != (double)acc)
                            fail_msg("case %d (%s): B %d M %d K %d N %d: y[%d,%d,%d] %.0f, want %lld",
                                     it, paths[pi], B, M, K, N, b, i, n, v, (long long)acc);
                    }
        }
        free(in), free(got), free(w), free(wv), free(bias), free(f);
    }
#undef RND
}

/* The F16C paths of AscendQuant and AscendDequant (16 channels of NC1HWC0 at once) give
 * the same bits as the plain ones (inputs with ties, values beyond int8 and a NaN): a 1x1 Conv 16 -> 16 channels on 8x8 pixels with pseudo-random int8 weights,
 * deq_scales from 1e-4 to 300 (some products saturate at 65504) and a fused LeakyRelu,
 * run twice, once with NANOBENCH_SIM_SCALAR (read once per process: so in a child). */
static void test_dequant_paths(void **state)
{
    (void)state;
    /* the input already in NC1HWC0: the AscendQuant's NC1HWC0 -> NC1HWC0 path */
    /* ... then Max(y, -20) against a constant: its F16C path too */
    xt t[9] = {{1, 3, 0, 4, {1, 16, 8, 8}, 0},  {2, 3, 2, 4, {1, 16, 8, 8}, 0},
               {2, 4, 3, 4, {16, 16, 1, 1}, 0},  {3, 2, 3, 1, {16}, 512},
               {10, 2, 3, 1, {16}, 576},         {3, 3, 2, 4, {1, 16, 8, 8}, 2048},
               {1, 3, 2, 4, {1, 16, 8, 8}, 6145}, {1, 2, 3, 0, {0}, 704},
               {1, 3, 1, 4, {1, 16, 8, 8}, 0}};
    uint8_t w[736] = {0};
    put16(w + 704, 0xCD00); /* fp16 -20 */
    uint32_t r = 12345;
    for (int co = 0; co < 16; co++)
        for (int ci = 0; ci < 16; ci++) {
            r = r * 1103515245u + 12345u;
            w[co * 32 + ci] = (uint8_t)(r >> 16);
        }
    for (int co = 0; co < 16; co++) {
        put32(w + 512 + 4 * co, (uint32_t)(co * 37 - 300));
        /* channel 0 at 1e-14: its products (|acc| < 3e5) round to +-0 in fp16 (below 2^-25); -0 is
           negative to LeakyRelu: -0 x alpha, +0 for a negative alpha */
        put_f32(w, 576 + 8 * (uint32_t)co, co ? (float)(1e-4 * pow(10, co / 2.5)) : 1e-14f);
    }
    xk k[4] = {{1, 0, 1, 1, {0}, {1}, {0}}, {5, 1, 4, 1, {1, 2, 3, 4}, {5}, {0}},
               {2, 0, 1, 1, {5}, {6}, {0}}, {16, 0, 2, 1, {6, 7}, {8}, {0}}};
    quant_params(k[0].params, 1.0f, 0.0f, 8);
    uint16_t cp[11] = {1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1};
    for (int i = 0; i < 11; i++)
        put16(k[1].params + 2 * i, cp[i]);
    k[2].params[0] = 2; /* LeakyRelu */
    double in[1024], a[1024], b[1024];
    for (int i = 0; i < 1024; i++) { /* halves (ties to even), beyond int8, one NaN */
        r = r * 1103515245u + 12345u;
        in[i] = (double)((int)(r >> 16) % 600 - 300) / 2;
    }
    in[77] = NAN;
    /* LeakyRelu's alpha 0.1, then -0.5: channel 0's -0 stays -0 (-0 x 0.1), then becomes +0
       (-0 x -0.5); the Max(y, -20) after keeps either (a breaker found the fast path kept
       -0 for a negative alpha) */
    for (int pass = 0; pass < 2; pass++) {
        float alpha = pass ? -0.5f : 0.1f;
        memcpy(k[2].params + 4, &alpha, 4);
        size_t len;
        /* the AscendDequant's output at an odd arena offset: the fast path stores by bytes
           (a fuzzed exeom placed it so; a typed 16-bit store there is undefined) */
        uint8_t *f = build(t, 9, k, 4, w, sizeof w, 8200, &len);
        /* the plain path in a child (NANOBENCH_SIM_SCALAR is read once per process) */
        run_both(f, len, in, 1024, a, b, 1024);
        for (int i = 0; i < 1024; i++)
            assert_memory_equal(&a[i], &b[i], sizeof(double));
        int saturated = 0, floor20 = 0, leaky = 0, zero_neg = 0, zero_pos = 0;
        for (int i = 0; i < 1024; i++)
            saturated += a[i] == 65504.0, floor20 += a[i] == -20.0,
                leaky += a[i] < 0 && a[i] > -20;
        for (int i = 0; i < 64; i++) /* channel 0 of y [1, 16, 8, 8] */
            zero_neg += a[i] == 0 && signbit(a[i]), zero_pos += a[i] == 0 && !signbit(a[i]);
        /* saturation seen; with alpha 0.1 LeakyRelu's negatives and the Max's constant too
           (with -0.5 no value stays negative) */
        assert_true(saturated > 0 && (pass || (floor20 > 0 && leaky > 0)));
        assert_true(pass ? zero_pos > 0 && zero_neg == 0 : zero_neg > 0);
        free(f);
    }
}

/* One reduction over the last axis of an fp16 [1, n] input (kernel 39 ReduceMean or 42
 * ReduceSum, keepdims), n copies of v: returns the result, *sat the clamped results. */
static double reduce_row(int kernel, int n, double v, uint64_t *sat)
{
    xt t[2] = {{1, 2, 0, 2, {1, n}, 0}, {1, 2, 1, 2, {1, 1}, 0}};
    xk k[1] = {{kernel, 0, 1, 1, {0}, {1}, {0}}};
    k[0].params[0] = 2, k[0].params[1] = 1; /* axes {1}, keepdims */
    uint8_t w[32] = {0};
    size_t len;
    uint8_t *f = build(t, 2, k, 1, w, sizeof w, 0, &len);
    nb_sim_model *m = NULL;
    nb_status st = {0};
    if (nb_sim_load(f, len, NULL, &m, &st))
        fail_msg("%s", st.msg);
    const nb_exeom *x = nb_sim_exeom(m);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(m, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(m, 0)];
    uint8_t *ib = calloc(1, ti->bytes), *ob = calloc(1, to->bytes);
    for (int i = 0; i < n; i++)
        nb_sim_set(ti, ib, i, v);
    const void *ins[1] = {ib};
    void *outs[1] = {ob};
    if (nb_sim_execute(m, ins, outs, NULL, NULL, &st))
        fail_msg("%s", st.msg);
    double y = nb_sim_get(to, ob, 0);
    *sat = nb_sim_task_saturations(m, 0);
    free(ib), free(ob), free(f);
    nb_sim_free(m);
    return y;
}

/* A mean multiplies by fp16(1/n) before the fp16 running sum (hey_jarvis's LayerNorm
 * variance: 128 squares near 70^2); a plain sum of the same values saturates. */
static void test_reduce_mean(void **state)
{
    (void)state;
    uint64_t sat;
    /* ReduceSum of 128 x 4096: 15 adds reach 61440, the 16th is 65536 > 65504 and clamps,
       as do the 112 after it: 113 clamped results, 65504 */
    assert_true(reduce_row(42, 128, 4096, &sat) == 65504.0);
    assert_int_equal(sat, 113);
    /* ReduceMean of the same: 4096 x 2^-7 = 32 exactly (1/128 is an fp16), and 128 adds
       of 32 stay exact (multiples of 32 up to 4096 have 8 significant bits): 4096, where
       the sum-then-divide order gave 65504 / 128 = 511.75 */
    assert_true(reduce_row(39, 128, 4096, &sat) == 4096.0);
    assert_int_equal(sat, 0);
    /* 128 x 4900 (70^2): the terms are 4900 / 128 = 38.28125 = 1225 x 2^-5, exact; the sum
       rounds to its own ulp at each add: the first 26 adds land on 998 (ulp 2^-4 .. 0.5:
       38.25 .. 38.5 per add), then every add in [1024, 4096) is +38 (ulp 1, then 2: 38.28
       rounds to 38), 81 adds to 998 + 3078 = 4076, then in [4096, 8192) ulp 4 rounds it to
       +40, 21 adds to 4076 + 840 = 4916 (float: 4900, 0.33% off; the plain sum clamps at
       the 14th add: 13 x 4900 = 63700, 14 x 4900 = 68600) */
    assert_true(reduce_row(39, 128, 4900, &sat) == 4916.0);
    assert_int_equal(sat, 0);
    assert_true(reduce_row(42, 128, 4900, &sat) == 65504.0);
    assert_int_equal(sat, 115);
    /* n = 3: 1/3 rounds to the fp16 0.33325195 (0x3555); 3 x 0.33325195 = 0.99975586 lies
       halfway between the fp16s 0.99951172 and 1 (2047.5 ulps of 2^-11): ties to even, 1;
       three terms of 1 add up to 3 exactly */
    assert_true(nb_sim_f16(1.0 / 3) == 0x3555);
    assert_true(reduce_row(39, 3, 3.0, &sat) == 3.0);
    assert_int_equal(sat, 0);
}

/* A Clip whose lower bound the model computes (melspectrogram's top_db floor: Clip(x,
 * ReduceMax(x) - 80)) reads it from its operand; a constant bound is a parameter. Here
 * y = Clip(x, ReduceMax(x), +inf) = max(x) everywhere. */
static void test_clip_runtime_bound(void **state)
{
    (void)state;
    xt t[4] = {{1, 2, 0, 2, {1, 4}, 0}, {1, 2, 2, 2, {1, 1}, 0}, {1, 2, 3, 0, {0}, 0},
               {1, 2, 1, 2, {1, 4}, 0}};
    xk k[2] = {{40, 0, 1, 1, {0}, {1}, {0}}, {26, 0, 3, 1, {0, 1, 2}, {3}, {0}}};
    k[0].params[0] = 2, k[0].params[1] = 1; /* ReduceMax over axis 1, keepdims */
    float lo = -INFINITY, hi = INFINITY;     /* what the compiler writes for a run-time bound */
    memcpy(k[1].params, &lo, 4);
    memcpy(k[1].params + 4, &hi, 4);
    uint8_t w[32] = {0};
    put16(w, 0x7C00); /* the max: a weight (fp16 +inf), read as the parameter */
    size_t len;
    uint8_t *f = build(t, 4, k, 2, w, sizeof w, 32, &len);
    double in[4] = {1, -2, 3.5, 0}, out[4];
    run_model(f, len, in, 4, out, 4);
    for (int i = 0; i < 4; i++)
        assert_true(out[i] == 3.5);
    free(f);
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
    /* every key, the CPU's included */
    assert_memory_equal(&d, &f, sizeof d);
}

/* The F16C path of MaxPool (one C0 block of 16 fp16 lanes per output pixel) gives the bits
 * of the plain one: 3x3, stride 2, pad 1 over [1,16,8,8] NC1HWC0 (the padded windows at the
 * edges), values with ties, +0 against -0 in channel 7 (the first maximum kept) and a NaN in
 * channel 6 (it wins its windows: the plain path decides those), run twice as above. Hand-
 * worked: output (0, 0) of channel 0 is the max of x[0..1][0..1] of channel 0. */
static void test_maxpool_paths(void **state)
{
    (void)state;
    xt t[2] = {{1, 3, 0, 4, {1, 16, 8, 8}, 0}, {1, 3, 1, 4, {1, 16, 4, 4}, 0}};
    xk k[1] = {{36, 0, 1, 1, {0}, {1}, {0}}};
    uint16_t wp[11] = {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1};
    for (int i = 0; i < 11; i++)
        put16(k[0].params + 2 * i, wp[i]);
    size_t len;
    uint8_t w[32] = {0};
    uint8_t *f = build(t, 2, k, 1, w, sizeof w, 4096, &len);
    double in[1024], a[256], b[256];
    uint32_t r = 777;
    for (int i = 0; i < 1024; i++) { /* logical NCHW order: c = i / 64 */
        r = r * 1103515245u + 12345u;
        in[i] = (double)((int)(r >> 16) % 64 - 32) / 4;
        if (i / 64 == 7)
            in[i] = (i & 1) ? -0.0 : 0.0;
    }
    in[6 * 64 + 9] = NAN; /* channel 6, h 1, w 1: in the windows of outputs (0,0) .. (1,1) */
    run_both(f, len, in, 1024, a, b, 256);
    for (int i = 0; i < 256; i++)
        assert_memory_equal(&a[i], &b[i], sizeof(double));
    double m00 = fmax(fmax(in[0], in[1]), fmax(in[8], in[9]));
    assert_true(a[0] == m00);
    assert_true(isnan(a[6 * 16])); /* channel 6, output (0, 0) */
    assert_true(a[7 * 16] == 0 && !signbit(a[7 * 16])); /* +0 first at (0, 0) */
    free(f);
}

/* The AVX2 AscendQuant of NC1HWC0 fp16 blocks into int8 (8 lanes at a time) and Max(x, c) on
 * fp16 bits (8 at a time) give the bits of the plain loops: x [1,16,3,3] with ties at half
 * steps, values beyond int8, a NaN (enters as 0) and -0; run twice as above. Hand-worked,
 * scale 4, offset 1: x = 0.375 -> 1.5 -> 2 (even) + 1 = 3; x = 0.625 -> 2.5 -> 2 + 1 = 3;
 * x = 40 -> 161 -> 127; NaN -> 0. Max with c = 0.25 (an fp16 scalar weight): max(-1, 0.25) =
 * 0.25, max(NaN, 0.25) = NaN (the NaN wins, as in the plain loop). */
static void test_quant_max_paths(void **state)
{
    (void)state;
    xt t[3] = {{1, 3, 0, 4, {1, 16, 3, 3}, 0}, {2, 3, 1, 4, {1, 16, 3, 3}, 0},
               {1, 3, 1, 4, {1, 16, 3, 3}, 0}};
    xk k[1] = {{1, 0, 1, 1, {0}, {1}, {0}}};
    quant_params(k[0].params, 4.0f, 1.0f, 8);
    size_t len;
    uint8_t w[32] = {0};
    uint8_t *f = build(t, 2, k, 1, w, sizeof w, 4096, &len);
    double in[144], a[144], b[144];
    uint32_t r = 4242;
    for (int i = 0; i < 144; i++) {
        r = r * 1103515245u + 12345u;
        in[i] = (double)((int)(r >> 16) % 400 - 200) / 16; /* -12.5 .. 12.4375, 1/16 steps */
    }
    in[0] = 0.375, in[1] = 0.625, in[2] = 40, in[3] = NAN, in[4] = -0.0, in[100] = NAN;
    run_both(f, len, in, 144, a, b, 144);
    for (int i = 0; i < 144; i++)
        assert_memory_equal(&a[i], &b[i], sizeof(double));
    assert_true(a[0] == 3 && a[1] == 3 && a[2] == 127 && a[3] == 0 && a[4] == 1);
    free(f);
    /* Max(x, c): c a fp16 weight [1] */
    xt t2[3] = {{1, 2, 0, 2, {1, 64}, 0}, {1, 2, 3, 1, {1}, 0}, {1, 2, 1, 2, {1, 64}, 0}};
    xk k2[1] = {{16, 0, 2, 1, {0, 1}, {2}, {0}}};
    uint8_t w2[32] = {0};
    put16(w2, 0x3400); /* 0.25 */
    f = build(t2, 3, k2, 1, w2, sizeof w2, 256, &len);
    double in2[64], a2[64], b2[64];
    for (int i = 0; i < 64; i++)
        in2[i] = (double)(i % 9 - 4) / 8; /* -0.5 .. 0.5 */
    in2[5] = -1, in2[17] = NAN, in2[20] = 0.25;
    run_both(f, len, in2, 64, a2, b2, 64);
    for (int i = 0; i < 64; i++)
        assert_memory_equal(&a2[i], &b2[i], sizeof(double));
    assert_true(a2[5] == 0.25 && isnan(a2[17]) && a2[20] == 0.25);
    assert_true(a2[8] == 0.5); /* i = 8: (8 % 9 - 4) / 8 = 0.5 > 0.25 */
    free(f);
}

/* Exp and Log on every fp16 input (issue 22): the fast path's table gives the bits of the
 * definition (the plain loop: the double result rounded once to fp16) on all 65536 inputs,
 * and counts what it clamps. Hand-worked: exp(x) reaches fp16's overflow threshold 65520 for
 * x >= ln 65520 = 11.09035; the fp16 values from 11.09375 (11 + 12/128) to 15.9921875 are
 * 628, those of [16, 65504] 12 binades x 1024 = 12288, and +inf (given as 65504: the NPU's
 * fp16 holds no infinity) 1: 12917 clamped. Log: nothing clamps (log 65504 = 11.09), +-0 are
 * the log of 0 (2). */
static void test_exp_log_table(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        xt t[2] = {{1, 2, 0, 2, {1, 65536}, 0}, {1, 2, 1, 2, {1, 65536}, 0}};
        xk k[1] = {{f ? 23 : 22, 0, 1, 1, {0}, {1}, {0}}};
        uint8_t w[32] = {0};
        size_t len;
        uint8_t *file = build(t, 2, k, 1, w, sizeof w, 32, &len);
        double *in = malloc(sizeof(double) * 65536), *a = malloc(sizeof(double) * 65536),
               *b = malloc(sizeof(double) * 65536);
        for (uint32_t h = 0; h < 65536; h++)
            in[h] = nb_sim_f16_value((uint16_t)h);
        run_both(file, len, in, 65536, a, b, 65536);
        for (uint32_t h = 0; h < 65536; h++)
            if (memcmp(&a[h], &b[h], sizeof(double)))
                fail_msg("%s(fp16 0x%04x): %.9g fast, %.9g plain", f ? "log" : "exp", h, a[h],
                         b[h]);
        assert_true(a[0x3C00] == (f ? 0.0 : nb_sim_f16_value(nb_sim_f16(exp(1.0)))));
        /* the counts of the fast path */
        nb_sim_model *m = NULL;
        nb_status st = {0};
        assert_int_equal(nb_sim_load(file, len, NULL, &m, &st), NB_OK);
        const nb_exeom *x = nb_sim_exeom(m);
        const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(m, 0)];
        const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(m, 0)];
        uint8_t *ib = calloc(1, ti->bytes), *ob = calloc(1, to->bytes);
        for (uint32_t h = 0; h < 65536; h++)
            nb_sim_set(ti, ib, h, in[h]);
        const void *ins[1] = {ib};
        void *outs[1] = {ob};
        assert_int_equal(nb_sim_execute(m, ins, outs, NULL, NULL, &st), NB_OK);
        assert_int_equal(nb_sim_task_saturations(m, 0), f ? 0 : 12917);
        assert_int_equal(nb_sim_task_log_zeros(m, 0), f ? 2 : 0);
        free(ib), free(ob);
        nb_sim_free(m);
        free(in), free(a), free(b), free(file);
    }
}

/* Transpose of the last two dims of an ND fp16 tensor (8 x 8 tiles): x [2,17,11] with
 * x[b][i][j] = 1000 b + 16 i + j (exact in fp16) and perm (0, 2, 1): y[b][j][i] is that
 * value, the tile edges (17 and 11 are not multiples of 8) included. */
static void test_transpose_tiles(void **state)
{
    (void)state;
    xt t[2] = {{1, 2, 0, 3, {2, 17, 11}, 0}, {1, 2, 1, 3, {2, 11, 17}, 0}};
    xk k[1] = {{33, 0, 1, 1, {0}, {1}, {0}}};
    k[0].params[0] = 3, k[0].params[1] = 0, k[0].params[2] = 2, k[0].params[3] = 1;
    uint8_t w[32] = {0};
    size_t len;
    uint8_t *f = build(t, 2, k, 1, w, sizeof w, 32, &len);
    double in[374], out[374];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 17; i++)
            for (int j = 0; j < 11; j++)
                in[(b * 17 + i) * 11 + j] = 1000 * b + 16 * i + j;
    run_model(f, len, in, 374, out, 374);
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < 11; j++)
            for (int i = 0; i < 17; i++)
                assert_true(out[(b * 11 + j) * 17 + i] == 1000 * b + 16 * i + j);
    free(f);
}

/* Log's input of 0: -inf, written as fp16's -65504 and counted as the log of 0, not as
 * saturation. x = (0, 1, 2, 0.5): log gives -inf, 0, 0.693147 and -0.693147; fp16's step
 * in [0.5, 1) is 2^-11, and 0.693147 / 2^-11 = 1419.56 rounds to 1420: 0.693359375. */
static void test_log_of_zero(void **state)
{
    (void)state;
    xt t[2] = {{1, 2, 0, 2, {1, 4}, 0}, {1, 2, 1, 2, {1, 4}, 0}};
    xk k[1] = {{23, 0, 1, 1, {0}, {1}, {0}}};
    uint8_t w[32] = {0};
    size_t len;
    uint8_t *f = build(t, 2, k, 1, w, sizeof w, 32, &len);
    nb_sim_model *m = NULL;
    nb_status st = {0};
    assert_int_equal(nb_sim_load(f, len, NULL, &m, &st), NB_OK);
    const nb_exeom *x = nb_sim_exeom(m);
    const nb_exeom_tensor *ti = &x->t[nb_sim_input_tensor(m, 0)];
    const nb_exeom_tensor *to = &x->t[nb_sim_output_tensor(m, 0)];
    uint8_t ib[8] = {0}, ob[8] = {0};
    const double in[4] = {0, 1, 2, 0.5};
    for (int i = 0; i < 4; i++)
        nb_sim_set(ti, ib, i, in[i]);
    const void *ins[1] = {ib};
    void *outs[1] = {ob};
    assert_int_equal(nb_sim_execute(m, ins, outs, NULL, NULL, &st), NB_OK);
    assert_true(nb_sim_get(to, ob, 0) == -65504.0);
    assert_true(nb_sim_get(to, ob, 1) == 0.0);
    assert_true(nb_sim_get(to, ob, 2) == 0.693359375);
    assert_true(nb_sim_get(to, ob, 3) == -0.693359375);
    assert_int_equal(nb_sim_task_log_zeros(m, 0), 1);
    assert_int_equal(nb_sim_task_saturations(m, 0), 0);
    nb_sim_free(m);
    free(f);
}

int main(void)
{
    nb_sim_numerics_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_rounding), cmocka_unit_test(test_quant),
        cmocka_unit_test(test_dequant),      cmocka_unit_test(test_tables),
        cmocka_unit_test(test_cycle_params), cmocka_unit_test(test_matmul_s16s8),
        cmocka_unit_test(test_conv_filter_bank), cmocka_unit_test(test_conv_cube_paths),
        cmocka_unit_test(test_matmul_cube_paths),
        cmocka_unit_test(test_matmul_two_activations),
        cmocka_unit_test(test_matmul_s8s4),  cmocka_unit_test(test_conv_depthwise),
        cmocka_unit_test(test_dequant_paths), cmocka_unit_test(test_maxpool_paths), cmocka_unit_test(test_log_of_zero), cmocka_unit_test(test_reduce_mean),
        cmocka_unit_test(test_clip_runtime_bound), cmocka_unit_test(test_quant_max_paths),
        cmocka_unit_test(test_exp_log_table),
        cmocka_unit_test(test_transpose_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
