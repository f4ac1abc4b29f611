/* NPU formats, arena planner and op table (engine/atc); every expected size is worked out
 * by hand next to its assertion from the formulas in ../shared/docs/facts/compile.md. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nb/atc.h"
#include "tmpdir.h"

static void test_c0(void **state)
{
    (void)state;
    assert_int_equal(nb_c0(NB_FLOAT16), 16); /* 16 x 2 B = one 32-byte row */
    assert_int_equal(nb_c0(NB_INT8), 32);
    assert_int_equal(nb_c0(NB_UINT8), 32);
    assert_int_equal(nb_c0(NB_NPU_INT4), 64);
    assert_int_equal(nb_c0(NB_FLOAT), 16);   /* GE's default kCubeSize */
    assert_int_equal(nb_c0(NB_STRING), 0);
}

static void test_nc1hwc0(void **state)
{
    (void)state;
    /* a 3-channel input padded to C0: fp16 [1,3,8,8] = 1 x ceil(3/16)=1 x 8 x 8 x 16 = 1024
       elements = 2048 B, against 3 x 64 x 2 = 384 B logical (5.33x) */
    const int64_t rgb[4] = {1, 3, 8, 8};
    assert_int_equal(nb_nc1hwc0_bytes(4, rgb, NB_FLOAT16), 2048);
    /* int8: C0 = 32, 1 x 1 x 8 x 8 x 32 = 2048 B against 192 B (10.67x) */
    assert_int_equal(nb_nc1hwc0_bytes(4, rgb, NB_INT8), 2048);
    /* 17 channels take two C1 blocks: 1 x 2 x 4 x 4 x 16 x 2 B = 1024 */
    const int64_t c17[4] = {1, 17, 4, 4};
    assert_int_equal(nb_nc1hwc0_bytes(4, c17, NB_FLOAT16), 1024);
    /* rank 3 [N, C, L] is H = 1, W = L: fp16 [1,16,96] = 1 x 1 x 1 x 96 x 16 x 2 = 3072 */
    const int64_t ncl[3] = {1, 16, 96};
    assert_int_equal(nb_nc1hwc0_bytes(3, ncl, NB_FLOAT16), 3072);
    const int64_t bad[4] = {1, -3, 8, 8};
    assert_int_equal(nb_nc1hwc0_bytes(4, bad, NB_FLOAT16), -1);
    const int64_t huge[4] = {(int64_t)1 << 40, 16, (int64_t)1 << 20, 16};
    assert_int_equal(nb_nc1hwc0_bytes(4, huge, NB_FLOAT16), -1); /* overflow */
}

static void test_fractal_z(void **state)
{
    (void)state;
    /* depthwise int8 [64,1,3,3]: ceil(1/32)=1 x 9 x ceil(64/16)=4 x 16 x 32 = 18432 B for
       576 weights: each single input channel padded to C0 = 32 (32x) */
    assert_int_equal(nb_fractal_z_bytes(64, 1, 3, 3, NB_INT8), 18432);
    /* int8 [16,16,3,3]: 1 x 9 x 1 x 16 x 32 = 4608 B against 2304 (Cin 16 -> 32) */
    assert_int_equal(nb_fractal_z_bytes(16, 16, 3, 3, NB_INT8), 4608);
    /* fp16 1x1 [32,32]: 2 x 1 x 1 x 2 x 16 x 16 = 1024 elements = 2048 B, no padding */
    assert_int_equal(nb_fractal_z_bytes(32, 32, 1, 1, NB_FLOAT16), 2048);
    /* int4 [16,64,1,1]: 1 x 1 x 1 x 1 x 16 x 64 = 1024 elements x 4 bits = 512 B */
    assert_int_equal(nb_fractal_z_bytes(16, 64, 1, 1, NB_NPU_INT4), 512);
    /* Cout 17 takes two groups of 16: int8 [17,32,1,1] = 1 x 1 x 1 x 2 x 16 x 32 = 1024 */
    assert_int_equal(nb_fractal_z_bytes(17, 32, 1, 1, NB_INT8), 1024);
}

static void test_fractal_nz(void **state)
{
    (void)state;
    /* int8 [100,70]: ceil(70/32)=3 x ceil(100/16)=7 = 21 tiles of 16 x 32 = 512 B -> 10752 */
    const int64_t m[2] = {100, 70};
    assert_int_equal(nb_fractal_nz_bytes(2, m, NB_INT8), 10752);
    /* fp16 [16,16]: one 16 x 16 x 2 B tile */
    const int64_t sq[2] = {16, 16};
    assert_int_equal(nb_fractal_nz_bytes(2, sq, NB_FLOAT16), 512);
    /* 1-D fp16 [20]: H = 1 -> 1 row block, ceil(20/16) = 2 column blocks: 2 tiles, 1024 B */
    const int64_t v[1] = {20};
    assert_int_equal(nb_fractal_nz_bytes(1, v, NB_FLOAT16), 1024);
    /* batched int8 [3,16,32]: 3 x one tile = 1536 */
    const int64_t b[3] = {3, 16, 32};
    assert_int_equal(nb_fractal_nz_bytes(3, b, NB_INT8), 1536);
    /* a scalar (MatMul of two vectors) is a 1 x 1 matrix: one int8 tile, 512 B */
    assert_int_equal(nb_fractal_nz_bytes(0, NULL, NB_INT8), 512);
}

/* True when no two buffers alive at a common step overlap in [offset, offset + size). */
static bool plan_valid(int n, const nb_live_buf *b, const int64_t *off, int64_t arena)
{
    for (int i = 0; i < n; i++) {
        if (off[i] < 0 || off[i] + b[i].size > arena)
            return false;
        for (int j = i + 1; j < n; j++) {
            bool time = !(b[i].last < b[j].first || b[j].last < b[i].first);
            bool space = off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size;
            if (time && space && b[i].size && b[j].size)
                return false;
        }
    }
    return true;
}

static void test_planner_beats_greedy_by_size(void **state)
{
    (void)state;
    /* (size, first step, last step):  A 4 [0,0]  B 1 [1,3]  C 3 [0,1]  D 1 [2,4]  E 4 [2,2]
     * Lower bound: step 0 holds A + C = 7, step 2 holds B + D + E = 6: 7.
     * Greedy by size, first fit: A@0, E@0 (not alive with A), C@4 (alive with A), then B,
     * alive with C [4,7) and E [0,4), goes to 7: arena 8.
     * By size x lifetime (C 6, A 4, E 4, B 3, D 3): C@0, A@3, E@0, B@4 (after E), D@5:
     * arena 7 = the lower bound. */
    const nb_live_buf b[5] = {{4, 0, 0}, {1, 1, 3}, {3, 0, 1}, {1, 2, 4}, {4, 2, 2}};
    int64_t off[5];
    nb_arena_plan p;
    nb_status st = {0};
    assert_int_equal(nb_plan_arena(5, b, 1, off, &p, &st), NB_OK);
    assert_int_equal(p.lower_bound, 7);
    assert_int_equal(p.greedy_by_size, 8);
    assert_int_equal(p.arena, 7);
    assert_true(plan_valid(5, b, off, p.arena));
    assert_string_equal(p.strategy, "size-x-lifetime/first-fit");
}

static void test_planner_alignment_and_errors(void **state)
{
    (void)state;
    /* 10 B and 20 B alive together, 16-byte alignment: 16 + 32 = 48, offsets 0 and 32 or
       32 and 0; a third buffer alive alone reuses offset 0 */
    const nb_live_buf b[3] = {{10, 0, 1}, {20, 1, 2}, {40, 3, 3}};
    int64_t off[3];
    nb_arena_plan p;
    nb_status st = {0};
    assert_int_equal(nb_plan_arena(3, b, 16, off, &p, &st), NB_OK);
    assert_int_equal(p.lower_bound, 48);
    assert_int_equal(p.arena, 48);
    for (int i = 0; i < 3; i++)
        assert_int_equal(off[i] % 16, 0);
    assert_int_equal(off[2], 0);
    assert_int_equal(nb_plan_arena(3, b, 3, off, &p, &st), NB_ERR_ARG);
    const nb_live_buf bad[1] = {{8, 2, 1}};
    assert_int_equal(nb_plan_arena(1, bad, 1, off, &p, &st), NB_ERR_ARG);
    assert_int_equal(nb_plan_arena(0, NULL, 1, NULL, &p, &st), NB_OK);
    assert_int_equal(p.arena, 0);
}

/* Random cases (fixed seed): every plan is valid, no smaller than the lower bound and no
 * larger than greedy-by-size. */
static void test_planner_random(void **state)
{
    (void)state;
    uint32_t s = 12345;
    int at_bound = 0, cases = 300;
    for (int c = 0; c < cases; c++) {
        nb_live_buf b[40];
        int64_t off[40];
        int n = 5 + (int)(nb_mulberry32(&s) % 36);
        for (int i = 0; i < n; i++) {
            b[i].size = 1 + nb_mulberry32(&s) % 4096;
            b[i].first = (int)(nb_mulberry32(&s) % 30);
            b[i].last = b[i].first + (int)(nb_mulberry32(&s) % 6);
        }
        nb_arena_plan p;
        nb_status st = {0};
        assert_int_equal(nb_plan_arena(n, b, 1, off, &p, &st), NB_OK);
        assert_true(plan_valid(n, b, off, p.arena));
        assert_true(p.arena >= p.lower_bound);
        assert_true(p.arena <= p.greedy_by_size);
        at_bound += p.arena == p.lower_bound;
    }
    print_message("random plans: %d of %d at the lower bound\n", at_bound, cases);
}

/* An unrolled recurrence: 6000 steps, each step's state (256 B) alive for two steps and one
 * output (64 B per step, 6000 x 64 B) alive throughout, plus an input quantized at step 0.
 * Only 3 buffers meet at any step, so the conflict lists are short; the plan must still
 * reach the lower bound 384000 + 2 x 256 and be valid. */
static void test_planner_long_chain(void **state)
{
    (void)state;
    enum { STEPS = 6000 };
    nb_live_buf *b = calloc(STEPS + 1, sizeof *b);
    int64_t *off = calloc(STEPS + 1, sizeof *off);
    assert_non_null(b);
    assert_non_null(off);
    for (int i = 0; i < STEPS; i++)
        b[i] = (nb_live_buf){.size = 256, .first = i, .last = i + 1};
    b[STEPS] = (nb_live_buf){.size = 64 * STEPS, .first = 0, .last = STEPS};
    nb_arena_plan p;
    nb_status st = {0};
    assert_int_equal(nb_plan_arena(STEPS + 1, b, 32, off, &p, &st), NB_OK);
    assert_int_equal(p.lower_bound, 64 * STEPS + 2 * 256);
    assert_int_equal(p.arena, p.lower_bound);
    assert_true(plan_valid(STEPS + 1, b, off, p.arena));
    free(b), free(off);
}

static void test_op_table(void **state)
{
    (void)state;
    nb_op_table t;
    nb_status st = {0};
    if (nb_op_table_load(nb_op_table_default_path(), &t, &st))
        fail_msg("%s", st.msg);
    assert_int_equal(t.n, 63); /* 53 vector, 8 cube, LSTM and GRU */
    const nb_op_support *o = nb_op_table_find(&t, "Conv", 13);
    assert_non_null(o);
    assert_int_equal(o->unit, NB_UNIT_CUBE);
    o = nb_op_table_find(&t, "LSTM", 14);
    assert_non_null(o);
    assert_int_equal(o->unit, NB_UNIT_CUBE_VECTOR);
    assert_int_equal(o->max_seq_len, 1);
    assert_int_equal(o->max_directions, 1);
    assert_non_null(nb_op_table_find(&t, "Softmax", 13));
    assert_null(nb_op_table_find(&t, "Div", 13)); /* rewritten to Mul, or unsupported */
    assert_null(nb_op_table_find(&t, "Relu", 19)); /* opset outside 11..18 */
    nb_op_table_free(&t);
    /* a broken table names its file and line */
    char path[512];
    snprintf(path, sizeof path, "%s/ops.tsv", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("# comment\nop\tunit\topset_min\topset_max\tconstraints\tnote\nRelu\tvector\t11\t18\n"
          "Conv\tgpu\t11\t18\n", f);
    fclose(f);
    assert_int_equal(nb_op_table_load(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "ops.tsv:4: unit 'gpu'"));
    f = fopen(path, "w");
    fputs("op\tunit\topset_min\topset_max\tconstraints\tnote\nLSTM\tcube\t11\t18\tsteps=2\n", f);
    fclose(f);
    assert_int_equal(nb_op_table_load(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "unknown constraint 'steps'"));
    /* the same op twice for overlapping opsets (a copy-paste slip) is refused; disjoint
       ranges are two revisions of the op */
    f = fopen(path, "w");
    fputs("op\tunit\topset_min\topset_max\tconstraints\tnote\nRelu\tvector\t11\t13\n"
          "Relu\tvector\t14\t18\nRelu\tvector\t13\t18\n", f);
    fclose(f);
    assert_int_equal(nb_op_table_load(path, &t, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "ops.tsv:4: Relu is listed again for opsets 13..18"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c0),
        cmocka_unit_test(test_nc1hwc0),
        cmocka_unit_test(test_fractal_z),
        cmocka_unit_test(test_fractal_nz),
        cmocka_unit_test(test_planner_beats_greedy_by_size),
        cmocka_unit_test(test_planner_alignment_and_errors),
        cmocka_unit_test(test_planner_random),
        cmocka_unit_test(test_planner_long_chain),
        cmocka_unit_test(test_op_table),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
