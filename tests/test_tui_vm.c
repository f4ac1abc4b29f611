/* The workbench's view-model (app/tui/vm.c) against values worked by hand: table sorting
 * (stable, NaN last both ways), selection and search, number formatting, the sparkline,
 * bars, histogram bins, the arena map's peak and grid, progress rate and ETA, and the file
 * picker's listing. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vm.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void order_is(const vm_table *t, const int *rows, int n)
{
    assert_int_equal(t->nrows, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(vm_table_row_of(t, i), rows[i]);
}

/* rows 0..4: a 0.5, b "-" (NaN), c 0.9, d 0.5, e 0.1.
 * cos ascending: e a d c b (a before d: insertion order; NaN last);
 * descending: c a d e b (ties still a before d, NaN still last);
 * name descending: e d c b a. */
static void test_sort(void **state)
{
    (void)state;
    vm_table t = {0};
    const char *titles[] = {"name", "cos"};
    int widths[] = {8, 8};
    bool num[] = {false, true};
    vm_table_init(&t, 2, titles, widths, num);
    const char *rows[5][2] = {{"a", "0.5"}, {"b", "-"}, {"c", "0.9"}, {"d", "0.5"}, {"e", "0.1"}};
    for (int i = 0; i < 5; i++)
        assert_int_equal(vm_table_add(&t, rows[i], NULL, VM_TAG_NONE), i);
    assert_true(isnan(t.nums[1 * 2 + 1]));
    NEAR(t.nums[2 * 2 + 1], 0.9, 0);
    assert_int_equal(t.sel, 0);
    assert_int_equal(t.sort_col, -1);

    vm_table_sort(&t, 1, false);
    order_is(&t, (int[]){4, 0, 3, 2, 1}, 5);
    assert_string_equal(vm_table_cell(&t, 0, 0), "e");
    assert_int_equal(t.sel, 1); /* row 0 ("a") stays selected, now at position 1 */

    vm_table_sort(&t, 1, true);
    order_is(&t, (int[]){2, 0, 3, 4, 1}, 5);
    assert_int_equal(t.sel, 1);

    vm_table_sort(&t, 0, true);
    order_is(&t, (int[]){4, 3, 2, 1, 0}, 5);
    assert_int_equal(t.sel, 4);

    /* a row added to a sorted table goes to its place (after its equals) */
    vm_table_sort(&t, 1, false);
    const char *f[] = {"f", "0.5"};
    assert_int_equal(vm_table_add(&t, f, NULL, VM_TAG_BAD), 5);
    order_is(&t, (int[]){4, 0, 3, 5, 2, 1}, 6);
    assert_int_equal(vm_table_row_of(&t, t.sel), 0);
    assert_int_equal(t.tags[5], VM_TAG_BAD);

    /* explicit numbers win over the text */
    const char *g[] = {"g", "x"};
    double gn[] = {NAN, 0.0};
    vm_table_add(&t, g, gn, VM_TAG_NONE);
    assert_int_equal(vm_table_row_of(&t, 0), 6);

    vm_table_sort(&t, -1, false);
    order_is(&t, (int[]){0, 1, 2, 3, 4, 5, 6}, 7);
    assert_string_equal(vm_table_cell(&t, 3, 0), "d");
    assert_string_equal(vm_table_cell(&t, 7, 0), "");
    assert_string_equal(vm_table_cell(&t, 0, 2), "");
    assert_int_equal(vm_table_row_of(&t, 7), -1);

    vm_table_clear(&t);
    assert_int_equal(t.nrows, 0);
    assert_int_equal(t.sel, -1);
    assert_int_equal(t.ncols, 2);
    vm_table_add(&t, NULL, NULL, VM_TAG_NONE);
    assert_string_equal(vm_table_cell(&t, 0, 1), "");
    assert_true(isnan(t.nums[1]));
    vm_table_free(&t);
}

/* 10 rows, a page of 3: +5 from 0 selects 5 and scrolls to top 3; -100 clamps to 0;
 * selecting 9 scrolls to 7; +100 from 0 clamps to 9. */
static void test_move(void **state)
{
    (void)state;
    vm_table t = {0};
    const char *titles[] = {"n"};
    vm_table_init(&t, 1, titles, NULL, NULL);
    for (int i = 0; i < 10; i++) {
        char s[8];
        snprintf(s, sizeof s, "%d", i);
        const char *c[] = {s};
        vm_table_add(&t, c, NULL, 0);
    }
    vm_table_move(&t, 5, 3);
    assert_int_equal(t.sel, 5);
    assert_int_equal(t.top, 3);
    vm_table_move(&t, -1, 3);
    assert_int_equal(t.sel, 4);
    assert_int_equal(t.top, 3);
    vm_table_move(&t, -100, 3);
    assert_int_equal(t.sel, 0);
    assert_int_equal(t.top, 0);
    vm_table_select(&t, 9, 3);
    assert_int_equal(t.top, 7);
    vm_table_select(&t, 0, 3);
    vm_table_move(&t, 100, 3);
    assert_int_equal(t.sel, 9);
    assert_int_equal(t.top, 7);
    vm_table_move(&t, 2147483647, 3);
    assert_int_equal(t.sel, 9);
    vm_table_free(&t);
}

/* names Conv_1 relu_2 CONV_3 gemm, op column: "conv" matches 0 and 2 case-insensitively,
 * forward from 2 wraps to 0, backward from 0 wraps to 2. */
static void test_find(void **state)
{
    (void)state;
    vm_table t = {0};
    const char *titles[] = {"layer", "op"};
    vm_table_init(&t, 2, titles, NULL, NULL);
    const char *rows[4][2] = {{"Conv_1", "Conv"}, {"relu_2", "Relu"}, {"CONV_3", "conv"}, {"gemm", "Gemm"}};
    for (int i = 0; i < 4; i++)
        vm_table_add(&t, rows[i], NULL, 0);
    assert_int_equal(vm_table_find(&t, "conv", 0, 1), 2);
    assert_int_equal(vm_table_find(&t, "conv", 2, 1), 0);
    assert_int_equal(vm_table_find(&t, "conv", 0, -1), 2);
    assert_int_equal(vm_table_find(&t, "conv", 2, -1), 0);
    assert_int_equal(vm_table_find(&t, "conv", -1, 1), 0);
    assert_int_equal(vm_table_find(&t, "conv", -1, -1), 2);
    assert_int_equal(vm_table_find(&t, "RELU", 3, 1), 1);
    assert_int_equal(vm_table_find(&t, "gEMm", 3, 1), 3); /* only itself: found after a full turn */
    assert_int_equal(vm_table_find(&t, "xyz", 0, 1), -1);
    assert_int_equal(vm_table_find(&t, "", 0, 1), -1);
    /* the search follows the display order */
    vm_table_sort(&t, 0, false); /* CONV_3 Conv_1 gemm relu_2 */
    assert_int_equal(vm_table_find(&t, "conv", -1, 1), 0);
    assert_string_equal(vm_table_cell(&t, vm_table_find(&t, "conv", 0, 1), 0), "Conv_1");
    vm_table_free(&t);
}

static void test_fmt(void **state)
{
    (void)state;
    char b[32];
    vm_fmt_bytes(b, sizeof b, 812);
    assert_string_equal(b, "812 B");
    vm_fmt_bytes(b, sizeof b, 0);
    assert_string_equal(b, "0 B");
    vm_fmt_bytes(b, sizeof b, 1023);
    assert_string_equal(b, "1023 B");
    vm_fmt_bytes(b, sizeof b, 1024);
    assert_string_equal(b, "1.00 KiB");
    vm_fmt_bytes(b, sizeof b, 1536);
    assert_string_equal(b, "1.50 KiB");
    vm_fmt_bytes(b, sizeof b, 14.2 * 1024);
    assert_string_equal(b, "14.2 KiB");
    vm_fmt_bytes(b, sizeof b, 102400);
    assert_string_equal(b, "100 KiB");
    vm_fmt_bytes(b, sizeof b, 1.34 * 1048576);
    assert_string_equal(b, "1.34 MiB");
    vm_fmt_bytes(b, sizeof b, 3.0 * 1073741824);
    assert_string_equal(b, "3.00 GiB");
    vm_fmt_bytes(b, sizeof b, NAN);
    assert_string_equal(b, "nan");
    vm_fmt_bytes(b, 4, 1536); /* truncated, terminated */
    assert_string_equal(b, "1.5");

    vm_fmt_num(b, sizeof b, 1.0 / 3, 6);
    assert_string_equal(b, "0.3333");
    vm_fmt_num(b, sizeof b, 0.5, 8);
    assert_string_equal(b, "0.5");
    vm_fmt_num(b, sizeof b, 123456789, 6); /* 1.2e+08 is 7 wide */
    assert_string_equal(b, "1e+08");
    vm_fmt_num(b, sizeof b, 123456789, 9);
    assert_string_equal(b, "123456789");
    vm_fmt_num(b, sizeof b, 0.99999994, 12);
    assert_string_equal(b, "0.99999994");
    vm_fmt_num(b, sizeof b, -2.5, 4);
    assert_string_equal(b, "-2.5");
    vm_fmt_num(b, sizeof b, NAN, 8);
    assert_string_equal(b, "nan");
    vm_fmt_num(b, sizeof b, -INFINITY, 8);
    assert_string_equal(b, "-inf");
    vm_fmt_num(b, sizeof b, -1e100, 3);
    assert_string_equal(b, "***");

    vm_fmt_ms(b, sizeof b, 0.38);
    assert_string_equal(b, "0.38 ms");
    vm_fmt_ms(b, sizeof b, 13.6);
    assert_string_equal(b, "13.6 ms");
    vm_fmt_ms(b, sizeof b, 250);
    assert_string_equal(b, "250 ms");
    vm_fmt_ms(b, sizeof b, 1200);
    assert_string_equal(b, "1.20 s");
    vm_fmt_ms(b, sizeof b, 0.004);
    assert_string_equal(b, "0.004 ms");
    vm_fmt_ms(b, sizeof b, 0);
    assert_string_equal(b, "0.00 ms");
}

/* levels over [0, 8]: lo 0, hi 7, the middle 4 -> 4, 3.5 -> 3, outside clamped, NaN -1. */
/* long names keep their end; sort marks stay apart from the title */
static void test_fit(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(vm_fit_tail(b, sizeof b, "tf.math.maximum_6/Maximum", 30, false), 25);
    assert_string_equal(b, "tf.math.maximum_6/Maximum");
    assert_int_equal(vm_fit_tail(b, sizeof b, "tf.math.maximum_6/Maximum", 12, false), 12);
    assert_string_equal(b, "~m_6/Maximum");
    assert_int_equal(vm_fit_tail(b, sizeof b, "tf.math.maximum_6/Maximum", 12, true), 12);
    assert_string_equal(b, "\u2026m_6/Maximum");
    /* UTF-8 counted as characters: "\u00e9" is one */
    assert_int_equal(vm_fit_tail(b, sizeof b, "caf\u00e9/conv_\u00e9", 5, true), 5);
    assert_string_equal(b, "\u2026nv_\u00e9");
    assert_int_equal(vm_fit_tail(b, sizeof b, "abc", 0, true), 0);
    assert_string_equal(b, "");

    assert_int_equal(vm_header(b, sizeof b, "cycles", 9, -1, false), 8);
    assert_string_equal(b, "cycles v");
    assert_int_equal(vm_header(b, sizeof b, "main", 6, 1, false), 6);
    assert_string_equal(b, "main ^");
    assert_int_equal(vm_header(b, sizeof b, "SQNR dB", 8, 1, true), 8);
    assert_string_equal(b, "SQNR d \u25b2"); /* shortened: the mark stays, a space before it */
    assert_int_equal(vm_header(b, sizeof b, "SQNR dB", 9, -1, true), 9);
    assert_string_equal(b, "SQNR dB \u25bc");
    assert_int_equal(vm_header(b, sizeof b, "layer", 3, 0, false), 3);
    assert_string_equal(b, "lay");
    assert_int_equal(vm_header(b, sizeof b, "#", 1, 1, false), 1);
    assert_string_equal(b, "^");
}

static void test_spark(void **state)
{
    (void)state;
    assert_int_equal(vm_spark_level(0, 0, 8), 0);
    assert_int_equal(vm_spark_level(8, 0, 8), 7);
    assert_int_equal(vm_spark_level(4, 0, 8), 4);
    assert_int_equal(vm_spark_level(3.5, 0, 8), 3);
    assert_int_equal(vm_spark_level(7.99, 0, 8), 7);
    assert_int_equal(vm_spark_level(-1, 0, 8), 0);
    assert_int_equal(vm_spark_level(9, 0, 8), 7);
    assert_int_equal(vm_spark_level(0.5, 0, 1), 4);
    assert_int_equal(vm_spark_level(NAN, 0, 8), -1);

    double v[] = {0, 4, 8, NAN, 7.99};
    char out[64];
    assert_int_equal(vm_sparkline(v, 5, 0, 8, false, out, sizeof out), 5);
    assert_string_equal(out, "_+@ @");
    assert_int_equal(vm_sparkline(v, 5, 0, 8, true, out, sizeof out), 5);
    assert_string_equal(out, "\xe2\x96\x81\xe2\x96\x85\xe2\x96\x88 \xe2\x96\x88"); /* ▁▅█ █ */
    /* room for 4 bytes: one block character */
    assert_int_equal(vm_sparkline(v, 5, 0, 8, true, out, 5), 1);
    assert_string_equal(out, "\xe2\x96\x81");
    assert_int_equal(vm_sparkline(v, 5, 0, 8, false, out, 3), 2);
    assert_string_equal(out, "_+");
    assert_int_equal(vm_sparkline(v, 0, 0, 8, false, out, sizeof out), 0);
    assert_string_equal(out, "");
}

static void test_bar(void **state)
{
    (void)state;
    assert_int_equal(vm_bar_len(5, 10, 20), 10);
    assert_int_equal(vm_bar_len(0.01, 10, 20), 1); /* positive: at least one cell */
    assert_int_equal(vm_bar_len(0, 10, 20), 0);
    assert_int_equal(vm_bar_len(10, 10, 20), 20);
    assert_int_equal(vm_bar_len(15, 10, 20), 20);
    assert_int_equal(vm_bar_len(2.5, 10, 5), 1); /* 1.25 */
    assert_int_equal(vm_bar_len(3, 10, 5), 2);   /* 1.5 rounds up */
    assert_int_equal(vm_bar_len(-3, 10, 5), 0);
    assert_int_equal(vm_bar_len(3, 0, 5), 0);
    assert_int_equal(vm_bar_len(NAN, 10, 5), 0);
}

/* four bins over [0, 1]: [0, .25) [.25, .5) [.5, .75) [.75, 1]; 0 and 0.1 -> bin 0, 0.25 ->
 * 1, 0.5 and 0.74 -> 2, 0.75 and 1.0 (hi inclusive) -> 3; -0.1, 1.1 and NaN not counted. */
static void test_hist(void **state)
{
    (void)state;
    double v[] = {0, 0.1, 0.25, 0.5, 0.74, 0.75, 1.0, -0.1, 1.1, NAN};
    int64_t c[4];
    assert_int_equal(vm_hist(v, 10, 0, 1, 4, c), 7);
    assert_int_equal(c[0], 2);
    assert_int_equal(c[1], 1);
    assert_int_equal(c[2], 2);
    assert_int_equal(c[3], 2);
    /* one bin takes everything inside */
    int64_t one;
    assert_int_equal(vm_hist(v, 10, 0, 1, 1, &one), 7);
    assert_int_equal(one, 7);
    /* lo == hi: the values equal to it, in the last bin */
    double z[] = {2, 2, 3};
    assert_int_equal(vm_hist(z, 3, 2, 2, 4, c), 2);
    assert_int_equal(c[3], 2);
    assert_int_equal(c[0] + c[1] + c[2], 0);
    assert_int_equal(vm_hist(z, 3, 3, 2, 4, c), 0);
}

/* A [0, 100) tasks 0-1, B [100, 150) tasks 1-2, C [0, 60) tasks 2-3.
 * live: task 0 100, task 1 150, task 2 110, task 3 60 -> peak at task 1, 150 bytes.
 * Grid 4 x 4 over 200 bytes and 4 tasks (rows of 50 bytes, a task per column):
 *   [0, 50):    A A C C
 *   [50, 100):  A A C C   (C reaches 60)
 *   [100, 150): . B B .
 *   [150, 200): . . . .
 * Two columns (two tasks each): [0, 50) A C; [100, 150) B B. */
static void test_arena(void **state)
{
    (void)state;
    vm_arena_tensor ts[] = {{"A", 0, 100, 0, 1}, {"B", 100, 50, 1, 2}, {"C", 0, 60, 2, 3}};
    int64_t peak = -1;
    assert_int_equal(vm_arena_peak(ts, 3, &peak), 1);
    assert_int_equal(peak, 150);
    assert_int_equal(vm_arena_peak(ts, 0, &peak), -1);
    assert_int_equal(peak, 0);

    int g[16];
    vm_arena_grid(ts, 3, 4, 200, 4, 4, g);
    int want[16] = {0, 0, 2, 2, 0, 0, 2, 2, -1, 1, 1, -1, -1, -1, -1, -1};
    for (int i = 0; i < 16; i++)
        assert_int_equal(g[i], want[i]);
    int g2[8];
    vm_arena_grid(ts, 3, 4, 200, 4, 2, g2);
    int want2[8] = {0, 2, 0, 2, 1, 1, -1, -1};
    for (int i = 0; i < 8; i++)
        assert_int_equal(g2[i], want2[i]);
    /* more columns than tasks: each task two columns wide; one row for the whole arena,
       where two tensors cover a cell the first one (task 1: A and B -> A; task 2: B and C
       -> B) */
    int g3[8];
    vm_arena_grid(ts, 3, 4, 200, 1, 8, g3);
    int want3[8] = {0, 0, 0, 0, 1, 1, 2, 2};
    for (int i = 0; i < 8; i++)
        assert_int_equal(g3[i], want3[i]);
}

static void test_progress(void **state)
{
    (void)state;
    double rate, eta;
    vm_progress(5, 20, 2.5, &rate, &eta); /* 2 per second, 15 left: 7.5 s */
    NEAR(rate, 2, 1e-12);
    NEAR(eta, 7.5, 1e-12);
    vm_progress(0, 20, 1, &rate, &eta);
    NEAR(rate, 0, 0);
    NEAR(eta, -1, 0);
    vm_progress(20, 20, 4, &rate, &eta);
    NEAR(rate, 5, 1e-12);
    NEAR(eta, 0, 0);
    vm_progress(3, 0, 1, &rate, &eta); /* total unknown */
    NEAR(rate, 3, 1e-12);
    NEAR(eta, -1, 0);
    vm_progress(3, 10, 0, &rate, &eta); /* no time yet */
    NEAR(eta, -1, 0);
}

static void touch(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* a folder with folders zeta and alpha, files b.onnx, a.onnx, notes.txt, hidden .h.onnx
 * and .hdir: with ".onnx": .. alpha zeta a.onnx b.onnx; with NULL notes.txt too. */
static void test_list_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/nb_tui_vm_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[512];
    const char *dirs[] = {"zeta", "alpha", ".hdir"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    const char *files[] = {"b.onnx", "a.onnx", "notes.txt", ".h.onnx", "M.ONNX"};
    for (int i = 0; i < 5; i++)
        touch(dir, files[i]);

    vm_dirent *e;
    int n = vm_list_dir(dir, ".onnx", &e);
    const char *want[] = {"..", "alpha", "zeta", "M.ONNX", "a.onnx", "b.onnx"};
    bool wdir[] = {true, true, true, false, false, false};
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++) {
        assert_string_equal(e[i].name, want[i]);
        assert_int_equal(e[i].dir, wdir[i]);
    }
    free(e);
    n = vm_list_dir(dir, NULL, &e);
    assert_int_equal(n, 7);
    assert_string_equal(e[6].name, "notes.txt");
    free(e);

    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(vm_list_dir(p, NULL, &e), -1);
    assert_null(e);

    n = vm_list_dir("/", NULL, &e);
    assert_true(n > 0);
    for (int i = 0; i < n; i++)
        assert_string_not_equal(e[i].name, "..");
    free(e);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A cut never splits a word with a digit in it: the whole word goes, with its blanks. */
static void test_whole_numbers(void **state)
{
    (void)state;
    /* "cosine 0.99, max |diff| 2.674e-05", the number at bytes 24..32: with 27 bytes of room
       the cut falls inside it, so 23 ("cosine 0.99, max |diff|", the blank dropped) */
    const char *s = "cosine 0.99, max |diff| 2.674e-05";
    assert_int_equal(vm_whole_numbers(s, 27), 23);
    /* inside "|diff|" (no digit): as it falls */
    assert_int_equal(vm_whole_numbers(s, 20), 20);
    /* between words: as it falls (byte 23 is the blank before the number) */
    assert_int_equal(vm_whole_numbers(s, 23), 23);
    assert_int_equal(vm_whole_numbers(s, 24), 24);
    /* the first word: nothing before it to keep, as it falls */
    assert_int_equal(vm_whole_numbers("123456", 3), 3);
    /* all of it fits */
    assert_int_equal(vm_whole_numbers(s, strlen(s)), strlen(s));
    /* "0.99," holds a digit: a cut at byte 10 ("cosine 0.9") drops it: 6 */
    assert_int_equal(vm_whole_numbers(s, 10), 6);
    /* a unit goes with its number (issue 38): "arena 4.25 KiB" cut inside "KiB" (12 bytes,
       "arena 4.25 K") or right before it (11, "arena 4.25 ") keeps "arena" (5) */
    const char *u = "ok  arena 4.25 KiB";
    assert_int_equal(vm_whole_numbers(u, 16), 9);
    assert_int_equal(vm_whole_numbers(u, 15), 9);
    /* after the unit, between words: as it falls */
    assert_int_equal(vm_whole_numbers("4.25 KiB peak", 8), 8);
    /* a short word after a word without digits is no unit: "3 layers ok" cut in "ok" */
    assert_int_equal(vm_whole_numbers("3 layers ok", 10), 10);
    /* a unit after the first word, the number: nothing before it, as it falls */
    assert_int_equal(vm_whole_numbers("4.25 KiB", 6), 6);
}

/* The table's columns at a width (issue 38): numbers never cut, names shrink first, the
   others scrolled with tb->left */
static void test_layout(void **state)
{
    (void)state;
    vm_table tb = {0};
    static const char *const titles[] = {"layer", "op", "MACs", "shape", "cosine"};
    static const int widths[] = {24, 6, 4, 6, 8};
    static const bool numeric[] = {false, false, true, false, true};
    vm_table_init(&tb, 5, titles, widths, numeric);
    tb.cols[0].keep_tail = true;
    const char *r0[] = {"model/conv2d_8/Conv2D_quant", "Conv", "1234567", "[1,3,224,224]", "0.999"};
    vm_table_add(&tb, r0, NULL, 0);
    int x[VM_MAX_COLS], w[VM_MAX_COLS], c[VM_MAX_COLS], left;
    bool more;
    /* wide enough for all: layer 24 + op 6 + MACs 7 (its cell) + shape 13 (its cell) +
       cosine 8 + 4 gaps = 62 */
    assert_int_equal(vm_table_layout(&tb, 62, true, x, w, c, &left, &more), 5);
    assert_false(more);
    assert_int_equal(w[2], 7);
    assert_int_equal(w[3], 13);
    assert_int_equal(x[4], 54);
    /* 56: the name shrinks by 6 (to 18), everything else whole */
    assert_int_equal(vm_table_layout(&tb, 56, true, x, w, c, &left, &more), 5);
    assert_int_equal(w[0], 18);
    assert_int_equal(w[4], 8);
    /* 40: the name at VM_NAME_MIN (16); 3 cells kept for the hint, room 37: layer 16, op 6,
       MACs 7 (16+1+6+1+7 = 31); shape (13) does not fit in 37 - 32 = 5: left out */
    assert_int_equal(vm_table_layout(&tb, 40, true, x, w, c, &left, &more), 3);
    assert_true(more);
    assert_int_equal(w[0], VM_NAME_MIN);
    assert_int_equal(c[2], 2);
    /* scrolled one column: the name stays (frozen), op hidden; layer 16 + MACs 7 + shape 13
       + 2 gaps = 38 > 37: shape left out again */
    tb.left = 1;
    assert_int_equal(vm_table_layout(&tb, 40, true, x, w, c, &left, &more), 2);
    assert_int_equal(c[0], 0);
    assert_int_equal(c[1], 2);
    assert_true(more);
    /* two columns on: layer, shape, cosine = 16 + 13 + 8 + 2 = 39 > 37: cosine out */
    tb.left = 2;
    assert_int_equal(vm_table_layout(&tb, 40, true, x, w, c, &left, &more), 2);
    assert_int_equal(c[1], 3);
    assert_int_equal(w[1], 13);
    /* the scroll clamped to the last column */
    tb.left = 99;
    assert_int_equal(vm_table_layout(&tb, 40, true, x, w, c, &left, &more), 2);
    assert_int_equal(left, 3);
    assert_int_equal(c[1], 4);
    assert_false(more);
    vm_table_free(&tb);
}

/* history diff's text folded for a narrow viewer (issue 38): lines laid out as
   app/cmd_history.c prints them ("%c %-26s %-30s %-30s") */
static void test_diff_fold(void **state)
{
    (void)state;
    char in[1024];
    snprintf(in, sizeof in,
             "%-28s %-30s %-30s\n"
             "parameters\n"
             "%c %-26s %-30s %-30s\n"
             "%c %-26s %-30s %-30s\n"
             "%c %-26s %-30s %-30s\n"
             "metrics%-21s %-14s %-14s %s\n",
             "", "A", "B", '*', "model", "/tmp/a/conv.onnx", "-", ' ', "soc_version", "Ascend035A",
             "Ascend035A", '*', "argv", "[\"nanobench\",\"--db\",\"/tmp/x/runs.db\",\"estimate\"]",
             "[\"nanobench\",\"compare\"]", "", "A", "B", "B - A");
    char *out = vm_diff_fold(in, 60);
    assert_non_null(out);
    /* "model" (29 + 30 + 1 + 1 = 61 bytes without its trailing blanks) is folded; the
       soc_version line (71) too; the argv line's A is longer than its column: it ends at its
       first blank; the "A B" header (61 > 60) folds without a key line; metrics stays */
    char want[1024];
    snprintf(want, sizeof want,
             "    A  A\n    B  B\n"
             "parameters\n"
             "* model\n    A  /tmp/a/conv.onnx\n    B  -\n"
             "  soc_version\n    A  Ascend035A\n    B  Ascend035A\n"
             "* argv\n    A  [\"nanobench\",\"--db\",\"/tmp/x/runs.db\",\"estimate\"]\n"
             "    B  [\"nanobench\",\"compare\"]\n"
             "metrics%-21s %-14s %-14s %s\n", "", "A", "B", "B - A");
    assert_string_equal(out, want);
    free(out);
    /* wide enough: unchanged */
    out = vm_diff_fold(in, 200);
    assert_string_equal(out, in);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_numbers), cmocka_unit_test(test_layout),
        cmocka_unit_test(test_diff_fold),
        cmocka_unit_test(test_sort),     cmocka_unit_test(test_move),
        cmocka_unit_test(test_find),     cmocka_unit_test(test_fmt),
        cmocka_unit_test(test_spark),    cmocka_unit_test(test_bar),
        cmocka_unit_test(test_hist),     cmocka_unit_test(test_arena),
        cmocka_unit_test(test_progress), cmocka_unit_test(test_list_dir),
        cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
