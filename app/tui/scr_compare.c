/* nanobench TUI: the Compare screen, the per-layer diff browser. F5 runs the float model
 * on the Run step's input (`nanobench infer MODEL --input ... --dump WORK/<stem>/golden/..`)
 * and, when it ends, `nanobench compare file_compare -m NPU_DUMP -g GOLDEN -out
 * WORK/<stem>/compare --json`. The golden dumps stay in WORK/<stem>/golden/dump with a
 * manifest (the model, the inputs and input_shape they are of, files by size and time): F5
 * on the same takes them again, a new golden run replaces them once it succeeded. The table shows one row per matched layer in network order
 * (op type, cosine, max abs / max relative error, SQNR; a cell over its threshold in the
 * bad colour) with a sparkline of cosine along the depth above it; the first layer over
 * threshold is selected with its likely cause. Enter runs `compare layer ... --json` for
 * the selected layer and shows its error histogram, worst elements, golden against NPU
 * values and the NPU tasks fused into it. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nb/db.h"
#include "nb/tensor.h"
#include "scr_util.h"
#include "tui.h"

/* CC_MARK: "!" on a layer over threshold (the over column names them on a wide pane), so
   that it shows without colour */
enum { CC_IDX, CC_MARK, CC_OP, CC_COS, CC_ABS, CC_REL, CC_SQNR, CC_RED, CC_RMSE, CC_KL, CC_OVER,
       CC_LAYER, CC_N };

typedef enum { PH_IDLE, PH_INFER, PH_COMPARE, PH_LAYER } phase;

/* A row over threshold as compare's verdict counts it: "fails" (the accuracy rule and fp16's
 * resolution applied), or any threshold crossed for rows of older JSON without it. */
static bool row_fails(const json_t *r)
{
    const json_t *f = json_object_get(r, "fails");
    return json_is_boolean(f) ? json_is_true(f) : json_array_size(json_object_get(r, "over")) > 0;
}

typedef struct cmp_scr {
    json_t *res;          /* file_compare --json, NULL before */
    json_t **rows;        /* per table row: its row of res (borrowed) */
    double *cos;          /* per table row: cosine (network order) */
    int nrows;
    vm_table tb;
    bool init, wide;
    int built_wd;         /* the pane width the table was built for */
    size_t prefix;        /* the leading "model/" every layer name shares */
    int col[CC_N];        /* table column of each CC_*, -1 when not shown */
    int page, tab_y, tab_h;
    int first_over;       /* table row of the first layer over threshold, -1 when none */
    int n_over;
    phase ph;
    char model[PATH_MAX]; /* the float model when t->model is not set ('m') */
    char golden[PATH_MAX];/* the golden dump folder of the running or last infer */
    char gbase[PATH_MAX]; /* WORK/<stem>/golden: dump/ and manifest.json */
    json_t *manifest;     /* what the running infer dumps (model, inputs, input_shape) */
    bool reused;          /* the comparison being made takes the golden dumps there were */
    char layer[1024];     /* the layer of the running `compare layer` */
    int64_t compare_id;   /* the recorded file_compare run */
    int64_t run_of;       /* the Run step's run the comparison is of */
    char dump_of[PATH_MAX]; /* the NPU and golden dumps the result compared */
    char golden_of[PATH_MAX];
    char pending_dump[PATH_MAX]; /* the NPU dump of the comparison being made */
    bool place_sel;       /* put the selection a third down the page at the next draw */
    tui_state saved_state;/* the step's state while a layer job runs */
    char saved_note[96];
    char err[512];
} cmp_scr;

static cmp_scr *C(tui *t)
{
    if (!t->scr[STEP_COMPARE]) {
        cmp_scr *s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        s->first_over = -1;
        t->scr[STEP_COMPARE] = s;
    }
    return t->scr[STEP_COMPARE];
}

static const char *float_model(tui *t)
{
    cmp_scr *s = C(t);
    return t->model[0] ? t->model : s->model;
}

/* ---- the table ---- */

/* The CC_* column a name of over[] (cos, red, kl, rmse, mre...) colours, -1 for none. */
static int over_col(const char *m)
{
    if (!strncmp(m, "cos", 3))
        return CC_COS;
    if (!strcmp(m, "red"))
        return CC_RED;
    if (!strcmp(m, "rmse"))
        return CC_RMSE;
    if (!strcmp(m, "kl"))
        return CC_KL;
    if (!strcmp(m, "max_abs_error") || !strcmp(m, "mae_max"))
        return CC_ABS;
    if (!strcmp(m, "max_relative_error"))
        return CC_REL;
    return -1;
}

static void fmt_cell(char *buf, size_t len, double v, int width, bool sqnr)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (sqnr && isinf(v))
        snprintf(buf, len, v > 0 ? "inf" : "-inf");
    else if (sqnr)
        snprintf(buf, len, "%.1f", v);
    else
        vm_fmt_num(buf, len, v, width);
}

/* (Re)builds the table from res for a pane wd cells wide: narrow (#, !, op, cosine, max abs,
 * max rel from 72 cells, SQNR, layer) or wide (#, op, cosine, max abs, max rel, SQNR, RED,
 * RMSE, KL, over, layer). The layer column keeps the end of long names. Keeps the sort (by
 * title) and the selected row. */
static void build(tui *t, cmp_scr *s, int wd)
{
    (void)t;
    s->built_wd = wd;
    bool wide = wd >= 120;
    char sort_title[24] = "";
    bool desc = false;
    int sel_row = -1;
    if (s->init) {
        if (s->tb.sort_col >= 0)
            snprintf(sort_title, sizeof sort_title, "%s", s->tb.cols[s->tb.sort_col].title);
        desc = s->tb.sort_desc;
        if (s->tb.sel >= 0 && s->tb.nrows)
            sel_row = vm_table_row_of(&s->tb, s->tb.sel);
        vm_table_free(&s->tb);
    }
    static const char *const all_t[CC_N] = {"#", "!", "op", "cosine", "max abs", "max rel",
                                            "SQNR", "RED", "RMSE", "KL", "over", "layer"};
    static const int all_w[CC_N] = {3, 1, 13, 8, 7, 7, 5, 8, 8, 8, 18, 30};
    const char *titles[CC_N];
    int widths[CC_N];
    bool numeric[CC_N];
    int nc = 0;
    for (int c = 0; c < CC_N; c++) {
        if ((!wide && (c == CC_RED || c == CC_RMSE || c == CC_KL || c == CC_OVER ||
                       (c == CC_REL && wd < 72))) ||
            (wide && c == CC_MARK)) {
            s->col[c] = -1;
            continue;
        }
        s->col[c] = nc;
        titles[nc] = all_t[c];
        widths[nc] = all_w[c];
        numeric[nc] = c != CC_OP && c != CC_OVER && c != CC_LAYER && c != CC_MARK;
        nc++;
    }
    if (wide) { /* room: the op column as wide as the longest op names */
        widths[s->col[CC_OP]] = 14;
        widths[s->col[CC_IDX]] = 4;
        widths[s->col[CC_ABS]] = widths[s->col[CC_REL]] = 8;
        widths[s->col[CC_SQNR]] = 6;
    }
    vm_table_init(&s->tb, nc, titles, widths, numeric);
    s->tb.cols[s->col[CC_LAYER]].keep_tail = true;
    s->init = true;
    s->wide = wide;
    su_fit_cols(&s->tb, nc - 1, wd, 10);
    for (int r = 0; r < s->nrows; r++) {
        json_t *o = s->rows[r];
        double v[CC_N];
        for (int c = 0; c < CC_N; c++)
            v[c] = NAN;
        json_t *ix = json_object_get(o, "index");
        v[CC_IDX] = json_is_number(ix) ? json_number_value(ix) : (double)r;
        v[CC_COS] = su_num(o, "cosine");
        v[CC_ABS] = su_num(o, "max_abs_error");
        v[CC_REL] = su_num(o, "max_relative_error");
        v[CC_SQNR] = su_num(o, "sqnr_db");
        v[CC_RED] = su_num(o, "red");
        if (isnan(v[CC_RED]))
            v[CC_RED] = su_num(o, "relative_euclidean_distance");
        v[CC_RMSE] = su_num(o, "rmse");
        v[CC_KL] = su_num(o, "kl");
        char txt[CC_N][48], over[64] = "";
        for (int c = 0; c < CC_N; c++)
            fmt_cell(txt[c], sizeof txt[c], v[c], c == CC_COS ? 8 : 7, c == CC_SQNR);
        snprintf(txt[CC_IDX], sizeof txt[CC_IDX], "%.0f", v[CC_IDX]);
        if (!isnan(v[CC_COS]))
            snprintf(txt[CC_COS], sizeof txt[CC_COS], "%.6f", v[CC_COS]);
        json_t *ov = json_object_get(o, "over");
        size_t k;
        json_t *m;
        json_array_foreach(ov, k, m) {
            size_t at = strlen(over);
            snprintf(over + at, sizeof over - at, "%s%s", at ? "," : "",
                     json_string_value(m) ? json_string_value(m) : "?");
        }
        /* narrow: without the prefix every name shares, and without a last component that
           repeats the op column ("conv2d_8/Conv2D" for ".../conv2d_8/Conv2D/AscendDequant")
           so that the names that differ only in the middle differ in the cell's tail */
        char shortname[1024];
        const char *lname = su_str(o, "layer");
        if (!wide)
            lname = su_short_name(lname, s->prefix, su_str(o, "op_type"), shortname,
                                  sizeof shortname);
        const char *cells[CC_N];
        double nums[CC_N];
        for (int c = 0; c < CC_N; c++) {
            if (s->col[c] < 0)
                continue;
            cells[s->col[c]] = c == CC_OP ? su_str(o, "op_type") : c == CC_LAYER
                                   ? lname : c == CC_OVER ? over
                                   : c == CC_MARK ? (row_fails(o) ? "!" : "") : txt[c];
            nums[s->col[c]] = v[c];
        }
        int row = vm_table_add(&s->tb, cells, nums,
                               su_num(o, "saturations") > 0 ? VM_TAG_WARN : VM_TAG_NONE);
        if (row < 0)
            break;
        bool any = row_fails(o); /* crossed, and not passed by the accuracy rule */
        if (any) {
            s->tb.celltags[(size_t)row * (size_t)nc + (size_t)s->col[CC_IDX]] = VM_TAG_BAD;
            for (int c = CC_MARK; c <= CC_OVER; c += CC_OVER - CC_MARK)
                if (s->col[c] >= 0)
                    s->tb.celltags[(size_t)row * (size_t)nc + (size_t)s->col[c]] = VM_TAG_BAD;
        }
        json_array_foreach(ov, k, m) {
            int c = json_string_value(m) ? over_col(json_string_value(m)) : -1;
            if (c >= 0 && s->col[c] >= 0)
                s->tb.celltags[(size_t)row * (size_t)nc + (size_t)s->col[c]] = VM_TAG_BAD;
        }
        /* a thresholded metric within its threshold: good */
        static const int thr_cols[] = {CC_COS, CC_RED, CC_RMSE, CC_KL};
        for (size_t q = 0; q < sizeof thr_cols / sizeof thr_cols[0]; q++) {
            int c = thr_cols[q];
            int *ct = s->col[c] >= 0 ? &s->tb.celltags[(size_t)row * (size_t)nc +
                                                        (size_t)s->col[c]] : NULL;
            if (ct && *ct == VM_TAG_NONE && !isnan(v[c]))
                *ct = VM_TAG_GOOD;
        }
    }
    int sc = -1;
    for (int c = 0; c < nc && sort_title[0]; c++)
        if (!strcmp(s->tb.cols[c].title, sort_title))
            sc = c;
    vm_table_sort(&s->tb, sc, desc);
    if (sel_row >= 0)
        for (int p = 0; p < s->tb.nrows; p++)
            if (vm_table_row_of(&s->tb, p) == sel_row)
                vm_table_select(&s->tb, p, s->page > 0 ? s->page : 10);
}

static void clear_result(cmp_scr *s)
{
    json_decref(s->res);
    s->res = NULL;
    free(s->rows);
    free(s->cos);
    s->rows = NULL;
    s->cos = NULL;
    s->nrows = 0;
    s->first_over = -1;
    s->n_over = 0;
    s->prefix = 0;
    if (s->init)
        vm_table_clear(&s->tb);
}

/* Takes file_compare's result: the matched rows (a cosine that is a number), the first
 * over threshold. */
static void take_result(tui *t, cmp_scr *s, json_t *o)
{
    clear_result(s);
    s->res = o;
    json_t *rows = json_object_get(o, "rows");
    size_t n = json_array_size(rows);
    s->rows = calloc(n + 1, sizeof *s->rows);
    s->cos = calloc(n + 1, sizeof *s->cos);
    if (!s->rows || !s->cos)
        return;
    const char *first = su_str(json_object_get(o, "first_over_threshold"), "layer");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        json_t *cmp = json_object_get(r, "compared");
        if (json_is_boolean(cmp) ? !json_is_true(cmp) : !json_is_number(json_object_get(r, "cosine")))
            continue; /* listed, not compared (quantize, layout, accumulators) */
        if (row_fails(r))
            s->n_over++;
        if (s->first_over < 0 && *first && !strcmp(su_str(r, "layer"), first))
            s->first_over = s->nrows;
        s->cos[s->nrows] = su_num(r, "cosine");
        s->rows[s->nrows++] = r;
    }
    const char **names = malloc(sizeof(char *) * ((size_t)s->nrows + 1));
    if (names) {
        for (int k = 0; k < s->nrows; k++)
            names[k] = su_str(s->rows[k], "layer");
        s->prefix = su_common_prefix(names, s->nrows);
        free(names);
    }
    if (s->first_over < 0) /* no name given: the first row with something over */
        for (int k = 0; k < s->nrows; k++)
            if (row_fails(s->rows[k])) {
                s->first_over = k;
                break;
            }
    if (s->init) {
        s->tb.sort_col = -1;
        s->tb.sel = -1;
    }
    build(t, s, t->main ? getmaxx(t->main) : 80);
    vm_table_sort(&s->tb, -1, false);
    int page = s->page > 0 ? s->page : 10;
    vm_table_select(&s->tb, s->first_over >= 0 ? s->first_over : 0, page);
    s->place_sel = true; /* placed at the next draw, which knows the page */
}

/* The table row index of the selected display position, -1 when none. */
static int sel_row(cmp_scr *s)
{
    if (!s->init || s->tb.sel < 0 || !s->tb.nrows)
        return -1;
    int r = vm_table_row_of(&s->tb, s->tb.sel);
    return r >= 0 && r < s->nrows ? r : -1;
}

/* Keeps the selection inside a window of page rows and the window inside the table (after
 * a resize the old top may leave rows empty). */
static void clamp_top(vm_table *tb, int page)
{
    if (tb->top > tb->nrows - page)
        tb->top = tb->nrows - page;
    if (tb->top < 0)
        tb->top = 0;
    if (tb->sel >= 0 && tb->sel < tb->top)
        tb->top = tb->sel;
    if (tb->sel >= 0 && tb->sel >= tb->top + page)
        tb->top = tb->sel - page + 1;
}

/* ---- drawing ---- */

/* The cosine sparkline over width cells (a cell takes the lowest cosine of its layers when
 * there are more layers than cells), and under it the selected layer (^) and the first
 * over threshold (x). */
static void draw_spark(tui *t, cmp_scr *s, WINDOW *w, int y, int x, int width)
{
    if (width < 4 || s->nrows < 1)
        return;
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < s->nrows; r++)
        if (!isnan(s->cos[r])) {
            lo = s->cos[r] < lo ? s->cos[r] : lo;
            hi = s->cos[r] > hi ? s->cos[r] : hi;
        }
    if (!(lo < hi)) {
        lo = isfinite(lo) ? lo - 1e-6 : 0;
        hi = isfinite(hi) ? hi : 1;
    }
    char range[64], l[32], h[32];
    vm_fmt_num(l, sizeof l, lo, 8);
    vm_fmt_num(h, sizeof h, hi, 8);
    snprintf(range, sizeof range, " %s..%s", l, h);
    int avail = width - (int)strlen(range);
    if (avail < 8)
        avail = width;
    /* a layer takes up to 3 cells when there is room, a cell several layers when not */
    int reps = s->nrows < avail ? avail / s->nrows : 1;
    reps = reps > 3 ? 3 : reps;
    int cells = s->nrows * reps < avail ? s->nrows * reps : avail;
    double *v = malloc(sizeof(double) * (size_t)cells);
    if (!v)
        return;
    for (int c = 0; c < cells; c++) {
        int a = (int)((int64_t)c * s->nrows / cells), b = (int)((int64_t)(c + 1) * s->nrows / cells);
        if (b <= a)
            b = a + 1;
        double m = NAN;
        for (int r = a; r < b && r < s->nrows; r++)
            if (!isnan(s->cos[r]) && (isnan(m) || s->cos[r] < m))
                m = s->cos[r];
        v[c] = m;
    }
    char buf[4096];
    vm_sparkline(v, cells, lo, hi, t->utf8, buf, sizeof buf);
    free(v);
    su_put(t, w, y, x, cells, tui_tag_attr(t, VM_TAG_GOOD), "%s", buf);
    if (avail < width)
        su_put(t, w, y, x + cells, width - cells, tui_tag_attr(t, VM_TAG_DIM), "%s", range);
    /* the marks under it: the first layer over threshold (x), the selected one (^) */
    if (s->first_over >= 0)
        su_put(t, w, y + 1, x + (int)((int64_t)s->first_over * cells / s->nrows), 1,
               tui_tag_attr(t, VM_TAG_BAD) | A_BOLD, "x");
    int sr = sel_row(s);
    if (sr >= 0)
        su_put(t, w, y + 1, x + (int)((int64_t)sr * cells / s->nrows), 1, A_BOLD, "^");
}

static void draw(tui *t, WINDOW *w)
{
    cmp_scr *s = C(t);
    if (!s)
        return;
    int h, wd;
    getmaxyx(w, h, wd);
    int dim = tui_tag_attr(t, VM_TAG_DIM), bad = tui_tag_attr(t, VM_TAG_BAD);
    int y = 0;
    if (!s->res) {
        su_put(t, w, y++, 0, wd, A_BOLD, "Compare: the NPU against the float model, layer by layer");
        if (s->ph == PH_INFER || s->ph == PH_COMPARE) {
            su_put(t, w, y + 1, 0, wd, 0, "%s ...", s->ph == PH_INFER
                   ? "running the float model on the same input (golden dump)"
                   : "comparing the dumps");
            return;
        }
        if (s->err[0])
            y += 1 + su_wrap(t, w, y + 1, 0, wd, 3, bad, s->err);
        const char *m = float_model(t);
        su_put(t, w, ++y, 0, wd, 0, "float model  %s", m[0] ? m : "(none: m picks one)");
        su_put(t, w, ++y, 0, wd, 0, "NPU dump     %s", t->npu_dump[0] ? t->npu_dump
                                                                       : "(none: run the Run step)");
        su_put(t, w, ++y, 0, wd, 0, "thresholds   %s", t->thresholds[0] ? t->thresholds
                                                                         : "the vendor's defaults");
        y += 2;
        su_wrap(t, w, y, 0, wd, 3, dim,
                "F5 runs the float model on the Run step's input with golden dumps, then "
                "compares every NPU task's output with its ONNX tensor.");
        return;
    }
    /* summary: the counts and the verdict's text, wrapped */
    char verdict[512];
    snprintf(verdict, sizeof verdict, "%s", *su_str(s->res, "verdict_text")
                                                ? su_str(s->res, "verdict_text")
                                                : su_str(s->res, "verdict"));
    for (char *p = verdict; *p; p++)
        *p = *p == '_' ? ' ' : *p;
    if (strcmp(s->dump_of, t->npu_dump)) { /* the Run step ran again since */
        int c1 = su_put(t, w, y, 0, wd, A_BOLD, "%d layers, %d over threshold", s->nrows,
                        s->n_over);
        su_put(t, w, y++, c1, wd - c1, tui_tag_attr(t, VM_TAG_WARN),
               "; of an older run (F5: the new one)");
    } else {
        char head[700];
        snprintf(head, sizeof head, "%d layers, %d over threshold%s%s", s->nrows, s->n_over,
                 *verdict ? "; " : "", verdict);
        y += su_wrap(t, w, y, 0, wd, h > 30 ? 3 : 2, A_BOLD, head);
    }
    /* the sparkline of cosine along the depth */
    int c0 = su_put(t, w, y, 0, wd, dim, "cosine ");
    draw_spark(t, s, w, y, c0, wd - c0);
    y += 2;
    /* the first layer over threshold and the largest SQNR drop, with their likely causes */
    int lines = h > 30 ? 3 : 1;
    json_t *fo = json_object_get(s->res, "first_over_threshold");
    char line[1400];
    if (json_is_object(fo)) {
        const char *origin = su_str(fo, "origin");
        snprintf(line, sizeof line, "first over threshold (x): %s%s%s%s: %s", su_str(fo, "layer"),
                 *origin ? " (" : "", origin, *origin ? ")" : "",
                 *su_str(fo, "likely_cause") ? su_str(fo, "likely_cause") : "no likely cause");
        y += su_wrap(t, w, y, 0, wd, lines + (h > 30 ? 0 : 1), tui_tag_attr(t, VM_TAG_WARN),
                     line);
    } else if (!s->n_over) {
        su_put(t, w, y++, 0, wd, tui_tag_attr(t, VM_TAG_GOOD), "every layer within the thresholds");
    }
    json_t *dr = json_object_get(s->res, "largest_sqnr_drop");
    if (json_is_object(dr) && (!json_is_object(fo) || strcmp(su_str(dr, "layer"),
                                                             su_str(fo, "layer")))) {
        char from[48];
        if (json_is_true(json_object_get(dr, "previous_exact")))
            snprintf(from, sizeof from, "exact");
        else
            snprintf(from, sizeof from, "%.1f dB", su_num(dr, "previous_sqnr_db"));
        /* the numbers before the layer's name, which is what a narrow pane cuts */
        snprintf(line, sizeof line, "largest SQNR drop (l): %.1f dB from %s at %s, its input "
                 "%s: %s", su_num(dr, "sqnr_db"), from, su_str(dr, "layer"), su_str(dr, "input"),
                 *su_str(dr, "likely_cause") ? su_str(dr, "likely_cause") : "no likely cause");
        y += su_wrap(t, w, y, 0, wd, lines, tui_tag_attr(t, VM_TAG_WARN), line);
    }
    /* the table; the selected layer's line under it */
    if (!s->init || s->built_wd != wd)
        build(t, s, wd);
    su_fit_cols(&s->tb, s->tb.ncols - 1, wd, 10);
    int foot = h - y > 6 ? 1 : 0;
    s->tab_y = y;
    s->tab_h = h - y - foot;
    s->page = su_page(s->tab_h);
    if (s->place_sel && s->tb.sel >= 0) { /* the layers before the selected one show too */
        s->tb.top = s->tb.sel - s->page / 3;
        s->place_sel = false;
    }
    clamp_top(&s->tb, s->page);
    if (s->tab_h >= 2)
        tui_draw_table(t, w, &s->tb, y, 0, s->tab_h, wd);
    int r = sel_row(s);
    if (foot && r >= 0) {
        json_t *o = s->rows[r];
        char covers[512] = "";
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(o, "covers"), k, c) {
            size_t at = strlen(covers);
            if (json_string_value(c) && at < sizeof covers - 1)
                snprintf(covers + at, sizeof covers - at, "%s%s", at ? ", " : "",
                         json_string_value(c));
        }
        char over[128] = "";
        json_array_foreach(json_object_get(o, "over"), k, c) {
            size_t at = strlen(over);
            if (json_string_value(c) && at < sizeof over - 1)
                snprintf(over + at, sizeof over - at, "%s%s", at ? "," : "", json_string_value(c));
        }
        char sat[48] = "";
        if (su_num(o, "saturations") > 0)
            snprintf(sat, sizeof sat, "  fp16 saturations: %.0f", su_num(o, "saturations"));
        su_put(t, w, h - 1, 0, wd, over[0] ? bad : dim, "%s%s%s%s%s%s%s", su_str(o, "layer"),
               over[0] ? "  over: " : "", over, sat, covers[0] ? "  covers: " : "", covers,
               "  (Enter: details)");
    }
}

/* ---- the jobs ---- */

/* The --input values of the Run step's recorded run (its argv), into v (each malloc'd);
 * returns the count, or 0 with t->run_input as the one input when the run is not
 * recorded. */
static int run_inputs(tui *t, char **v, int max)
{
    int n = 0;
    nb_db *db = NULL;
    nb_status st = {0};
    nb_run_row r;
    if (t->run_id[STEP_RUN] > 0 && !nb_db_open(t->db[0] ? t->db : NULL, &db, &st) &&
        !nb_db_get(db, t->run_id[STEP_RUN], &r, &st)) {
        json_error_t je;
        json_t *p = r.params ? json_loads(r.params, 0, &je) : NULL;
        json_t *av = json_object_get(p, "argv");
        for (size_t k = 0; k < json_array_size(av) && n < max; k++) {
            const char *a = json_string_value(json_array_get(av, k));
            const char *val = NULL;
            if (a && !strcmp(a, "--input"))
                val = json_string_value(json_array_get(av, ++k));
            else if (a && !strncmp(a, "--input=", 8))
                val = a + 8;
            if (val && (v[n] = strdup(val)))
                n++;
        }
        json_decref(p);
        nb_run_row_clear(&r);
    }
    nb_db_close(db);
    if (!n && t->run_input[0] && (v[0] = strdup(t->run_input)))
        n = 1;
    return n;
}

/* ---- the golden dumps: one folder, kept while the model, input and shape stay ---- */

static void start_compare(tui *t);

/* A file's identity for the manifest: path, size and modification time. */
static json_t *file_id(const char *path)
{
    struct stat st;
    json_t *o = json_object();
    json_object_set_new(o, "path", nb_json_string(path));
    if (stat(path, &st) == 0) {
        json_object_set_new(o, "bytes", json_integer((json_int_t)st.st_size));
        json_object_set_new(o, "mtime", json_integer((json_int_t)st.st_mtime));
        json_object_set_new(o, "mtime_ns", json_integer((json_int_t)st.st_mtim.tv_nsec));
    }
    return o;
}

/* What a golden run of model on the --input values in[n] with shape dumps: the manifest
   kept next to the dumps (a run on the same is not made again). */
static json_t *golden_manifest(const char *model, char *const *in, int n, const char *shape)
{
    json_t *m = json_object(), *ins = json_array();
    json_object_set_new(m, "model", file_id(model));
    for (int i = 0; i < n; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "input", nb_json_string(in[i]));
        /* NAME=FILE or FILE: the file's identity too (random:SEED is the same each time) */
        const char *eq = strchr(in[i], '='), *file = eq ? eq + 1 : in[i];
        if (strncmp(file, "random", 6))
            json_object_set_new(e, "file", file_id(file));
        json_array_append_new(ins, e);
    }
    json_object_set_new(m, "inputs", ins);
    json_object_set_new(m, "input_shape", nb_json_string(shape));
    return m;
}

/* The golden folder of a successful infer takes the place of the old one; the manifest
   says what it holds. Earlier sessions' folders of one run each (runN_STAMP) go too. */
static void golden_keep(tui *t, cmp_scr *s)
{
    char dump[PATH_MAX + 8], mf[PATH_MAX + 16];
    snprintf(dump, sizeof dump, "%s/dump", s->gbase);
    snprintf(mf, sizeof mf, "%s/manifest.json", s->gbase);
    remove(mf);
    nb_remove_tree(dump);
    if (rename(s->golden, dump) != 0) { /* keep it where it is, without a manifest */
        snprintf(t->golden_dump, sizeof t->golden_dump, "%s", s->golden);
        return;
    }
    snprintf(t->golden_dump, sizeof t->golden_dump, "%s", dump);
    if (s->manifest)
    {
        nb_status st = {0};
        nb_json_write_atomic(s->manifest, mf, JSON_INDENT(2) | JSON_SORT_KEYS, &st);
    }
    vm_dirent *e = NULL;
    int n = vm_list_dir(s->gbase, NULL, &e);
    for (int i = 0; i < n; i++) {
        unsigned long long id, stamp;
        char rest;
        if (e[i].dir && sscanf(e[i].name, "run%llu_%llu%c", &id, &stamp, &rest) >= 2) {
            char p[PATH_MAX + 300];
            snprintf(p, sizeof p, "%s/%s", s->gbase, e[i].name);
            nb_remove_tree(p);
        }
    }
    free(e);
}

/* True when WORK/<stem>/golden/dump holds the dumps of manifest m (set as t->golden_dump). */
static bool golden_reuse(tui *t, cmp_scr *s, const json_t *m)
{
    char dump[PATH_MAX + 8], mf[PATH_MAX + 16];
    snprintf(dump, sizeof dump, "%s/dump", s->gbase);
    snprintf(mf, sizeof mf, "%s/manifest.json", s->gbase);
    json_error_t je;
    json_t *old = json_load_file(mf, 0, &je);
    vm_dirent *e = NULL;
    int n = old ? vm_list_dir(dump, NULL, &e) : -1;
    free(e);
    bool same = old && json_equal(old, m) && n > 1; /* ".." and a dump at least */
    json_decref(old);
    if (same)
        snprintf(t->golden_dump, sizeof t->golden_dump, "%s", dump);
    return same;
}

static void run(tui *t)
{
    cmp_scr *s = C(t);
    if (!s)
        return;
    const char *model = float_model(t);
    if (!model[0]) {
        tui_status(t, true, "no float model: open it in the Model step, or m here");
        return;
    }
    if (!t->npu_dump[0]) {
        tui_status(t, true, "no NPU dump: run the model first (Run step)");
        return;
    }
    char *inputs[32];
    int nin = run_inputs(t, inputs, 32);
    if (!nin) {
        tui_status(t, true, "the run's input is not known (a run on zeros): run again with an input");
        return;
    }
    char gbase[PATH_MAX] = "", gout[PATH_MAX] = "";
    if (!tui_workdir(t, "golden", gbase, sizeof gbase) || !gbase[0] ||
        !tui_workdir(t, "golden_out", gout, sizeof gout) || !gout[0]) {
        for (int i = 0; i < nin; i++)
            free(inputs[i]);
        tui_status(t, true, "no work folder for this model");
        return;
    }
    /* the golden dumps of the same model, input and shape are there already: compared
       again without a new golden run (19 MB of dumps each time) */
    snprintf(s->gbase, sizeof s->gbase, "%s", gbase);
    json_decref(s->manifest);
    s->manifest = golden_manifest(model, inputs, nin, t->input_shape);
    s->err[0] = 0;
    s->run_of = t->run_id[STEP_RUN];
    snprintf(s->pending_dump, sizeof s->pending_dump, "%s", t->npu_dump);
    s->reused = golden_reuse(t, s, s->manifest);
    if (s->reused) {
        for (int i = 0; i < nin; i++)
            free(inputs[i]);
        start_compare(t);
        return;
    }
    /* a new folder for the dumps, in the old one's place once the run succeeded */
    snprintf(s->golden, sizeof s->golden, "%s/dump.new", gbase);
    nb_remove_tree(s->golden);
    su_argv a = {0};
    su_arg(&a, "infer");
    su_arg(&a, "%s", model);
    for (int i = 0; i < nin; i++) {
        su_arg(&a, "--input");
        /* run takes an input by index too; infer by name: one input goes without it */
        const char *eq = strchr(inputs[i], '=');
        bool index = eq && eq > inputs[i] && strspn(inputs[i], "0123456789") ==
                                                 (size_t)(eq - inputs[i]);
        su_arg(&a, "%s", index && nin == 1 ? eq + 1 : inputs[i]);
        free(inputs[i]);
    }
    if (t->input_shape[0]) {
        su_arg(&a, "--input_shape");
        su_arg(&a, "%s", t->input_shape);
    }
    su_arg(&a, "--output-dir");
    su_arg(&a, "%s", gout);
    su_arg(&a, "--dump");
    su_arg(&a, "%s", s->golden);
    if (a.oom) {
        su_argv_free(&a);
        tui_status(t, true, "out of memory");
        return;
    }
    if (tui_run(t, STEP_COMPARE, t->run_id[STEP_RUN], a.v, "golden: infer")) {
        s->ph = PH_INFER;
        tui_set_state(t, STEP_COMPARE, ST_RUNNING, "golden run");
    }
    su_argv_free(&a);
}

static void start_compare(tui *t)
{
    cmp_scr *s = C(t);
    char out[PATH_MAX] = "";
    if (!tui_workdir(t, "compare", out, sizeof out) || !out[0]) {
        tui_status(t, true, "no work folder for this model");
        return;
    }
    su_argv a = {0};
    su_arg(&a, "compare");
    su_arg(&a, "file_compare");
    su_arg(&a, "-m");
    su_arg(&a, "%s", s->pending_dump);
    su_arg(&a, "-g");
    su_arg(&a, "%s", t->golden_dump);
    su_arg(&a, "-out");
    su_arg(&a, "%s", out);
    if (t->thresholds[0]) {
        su_arg(&a, "--threshold");
        su_arg(&a, "%s", t->thresholds);
    }
    su_arg(&a, "--json");
    if (a.oom) {
        su_argv_free(&a);
        tui_status(t, true, "out of memory");
        return;
    }
    if (tui_run(t, STEP_COMPARE, t->run_id[STEP_RUN], a.v, "compare")) {
        s->ph = PH_COMPARE;
        tui_set_state(t, STEP_COMPARE, ST_RUNNING, "comparing");
    } else {
        s->ph = PH_IDLE;
        tui_set_state(t, STEP_COMPARE, ST_FAILED, "not started");
    }
    su_argv_free(&a);
}

static void open_layer(tui *t)
{
    cmp_scr *s = C(t);
    int r = sel_row(s);
    if (r < 0)
        return;
    snprintf(s->layer, sizeof s->layer, "%s", su_str(s->rows[r], "layer"));
    su_argv a = {0};
    su_arg(&a, "compare");
    su_arg(&a, "layer");
    su_arg(&a, "-m");
    su_arg(&a, "%s", s->dump_of);
    su_arg(&a, "-g");
    su_arg(&a, "%s", s->golden_of);
    su_arg(&a, "--layer");
    su_arg(&a, "%s", s->layer);
    if (t->thresholds[0]) {
        su_arg(&a, "--threshold");
        su_arg(&a, "%s", t->thresholds);
    }
    su_arg(&a, "--json");
    s->saved_state = t->state[STEP_COMPARE];
    snprintf(s->saved_note, sizeof s->saved_note, "%s", t->state_note[STEP_COMPARE]);
    if (t->run_id[STEP_COMPARE] != s->compare_id) /* another database since: not its run */
        s->compare_id = 0;
    if (!a.oom && tui_run(t, STEP_COMPARE, s->compare_id, a.v, "compare layer"))
        s->ph = PH_LAYER;
    su_argv_free(&a);
}

/* A JSON number as text ("-" when missing). */
static const char *jnum(const json_t *v, char *buf, size_t len)
{
    if (json_is_number(v))
        snprintf(buf, len, "%.6g", json_number_value(v));
    else if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else
        snprintf(buf, len, "-");
    return buf;
}

/* An element's index: an array of coordinates as "[0,3,1,2]", a number as itself. */
static const char *jindex(const json_t *v, char *buf, size_t len)
{
    if (json_is_array(v)) {
        size_t at = (size_t)snprintf(buf, len, "[");
        size_t k;
        json_t *e;
        json_array_foreach(v, k, e)
            if (at < len)
                at += (size_t)snprintf(buf + at, len - at, "%s%lld", k ? "," : "",
                                       (long long)json_integer_value(e));
        if (at < len)
            snprintf(buf + at, len - at, "]");
        return buf;
    }
    return jnum(v, buf, len);
}

/* The layer detail of `compare layer --json` as text: metrics, the NPU tasks and ONNX
 * nodes fused into it, the error histogram with bars, the ten worst elements and the first
 * ones, golden against NPU. */
static void show_layer(tui *t, json_t *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    char a[64], b[64], c[64], d[64], ix[128];
    const char *layer = *su_str(o, "layer") ? su_str(o, "layer") : C(t)->layer;
    fprintf(f, "%s  (%s", layer, su_str(o, "op_type"));
    if (json_is_number(json_object_get(o, "task")))
        fprintf(f, ", task %.0f", su_num(o, "task"));
    fprintf(f, ")\n");
    char shape[128];
    su_shape(json_object_get(o, "shape"), shape, sizeof shape);
    fprintf(f, "shape %s, %.0f elements, NPU %s against golden %s\n", shape, su_num(o, "numel"),
            su_str(o, "npu_dtype"), su_str(o, "golden_dtype"));
    if (*su_str(o, "golden_node"))
        fprintf(f, "golden: %s\n", *su_str(o, "golden_value") ? su_str(o, "golden_value")
                                                               : su_str(o, "golden_node"));
    if (*su_str(o, "reason"))
        fprintf(f, "%s\n", su_str(o, "reason"));
    /* the NPU tasks fused into it, the ONNX nodes it covers */
    size_t k;
    json_t *e;
    json_t *tasks = json_object_get(o, "tasks");
    if (json_array_size(tasks)) {
        fprintf(f, "\nNPU tasks fused into this layer\n");
        json_array_foreach(tasks, k, e)
            fprintf(f, "  %5.0f  %-14s %s\n", su_num(e, "task"), su_str(e, "op_type"),
                    su_str(e, "name"));
    }
    json_t *cov = json_object_get(o, "covers");
    if (json_array_size(cov)) {
        fprintf(f, "\nONNX nodes it covers\n");
        json_array_foreach(cov, k, e)
            fprintf(f, "  %s\n", json_string_value(e) ? json_string_value(e) : "?");
    }
    /* metrics, with the thresholds they are held to */
    json_t *m = json_object_get(o, "metrics"), *th = json_object_get(o, "thresholds");
    if (json_is_object(m)) {
        static const char *const thr_of[][2] = {{"cosine", "cos"},
                                                {"relative_euclidean_distance", "red"},
                                                {"kl", "kl"},
                                                {"rmse", "rmse"},
                                                {"mean_relative_error", "mre"}};
        fprintf(f, "\nmetrics\n");
        const char *key;
        json_t *v;
        json_object_foreach(m, key, v) {
            const char *tk = NULL;
            for (size_t q = 0; q < sizeof thr_of / sizeof thr_of[0]; q++)
                if (!strcmp(key, thr_of[q][0]))
                    tk = thr_of[q][1];
            bool over = false;
            json_t *ov;
            size_t q;
            json_array_foreach(json_object_get(o, "over"), q, ov)
                over |= tk && json_string_value(ov) && !strcmp(json_string_value(ov), tk);
            if (json_is_number(v))
                snprintf(a, sizeof a, "%.6g", json_number_value(v));
            else if (json_is_string(v))
                snprintf(a, sizeof a, "%s", json_string_value(v));
            else
                snprintf(a, sizeof a, "-");
            fprintf(f, "  %-28s %14s", key, a);
            if (tk && json_is_number(json_object_get(th, tk)))
                fprintf(f, "   threshold %s %g%s", !strcmp(tk, "cos") ? ">=" : "<=",
                        json_number_value(json_object_get(th, tk)), over ? "  OVER" : "");
            fputc('\n', f);
        }
    }
    /* the error histogram */
    json_t *hs = json_object_get(o, "histogram");
    json_t *edges = json_object_get(hs, "edges"), *counts = json_object_get(hs, "counts");
    if (json_array_size(counts)) {
        const char *what = su_str(hs, "of");
        fprintf(f, "\nerror histogram%s%s%s\n", *what ? " (" : "", what, *what ? ")" : "");
        double maxc = 0;
        json_array_foreach(counts, k, e)
            if (json_number_value(e) > maxc)
                maxc = json_number_value(e);
        const char *block = t->utf8 ? "\xe2\x96\x88" : "#";
        json_array_foreach(counts, k, e) {
            vm_fmt_num(a, sizeof a, json_number_value(json_array_get(edges, k)), 9);
            vm_fmt_num(b, sizeof b, json_number_value(json_array_get(edges, k + 1)), 9);
            fprintf(f, "  %9s .. %-9s %8.0f ", a, b, json_number_value(e));
            int n = vm_bar_len(json_number_value(e), maxc, 36);
            for (int q = 0; q < n; q++)
                fputs(block, f);
            fputc('\n', f);
        }
    }
    /* the ten worst elements */
    json_t *worst = json_object_get(o, "worst");
    if (json_array_size(worst)) {
        fprintf(f, "\nthe %zu worst elements\n  %-18s %9s %13s %13s %13s\n", json_array_size(worst),
                "index", "flat", "golden", "NPU", "NPU - golden");
        json_array_foreach(worst, k, e)
            fprintf(f, "  %-18s %9s %13s %13s %13s\n", jindex(json_object_get(e, "index"), ix,
                    sizeof ix), jnum(json_object_get(e, "flat"), c, sizeof c),
                    jnum(json_object_get(e, "golden"), a, sizeof a),
                    jnum(json_object_get(e, "npu"), b, sizeof b),
                    jnum(json_object_get(e, "error"), d, sizeof d));
    }
    /* golden against NPU, side by side */
    json_t *side = json_object_get(o, "first");
    if (json_array_size(side)) {
        fprintf(f, "\nthe first %zu elements, golden against NPU\n  %-18s %9s %13s %13s\n",
                json_array_size(side), "index", "flat", "golden", "NPU");
        json_array_foreach(side, k, e)
            fprintf(f, "  %-18s %9s %13s %13s\n", jindex(json_object_get(e, "index"), ix,
                    sizeof ix), jnum(json_object_get(e, "flat"), c, sizeof c),
                    jnum(json_object_get(e, "golden"), a, sizeof a),
                    jnum(json_object_get(e, "npu"), b, sizeof b));
    }
    fprintf(f, "\ndump files\n  NPU     %s\n  golden  %s\n", su_str(o, "npu_dump"),
            su_str(o, "golden_dump"));
    fclose(f);
    char title[96];
    snprintf(title, sizeof title, "layer %.80s", layer);
    tui_show_wrapped(t, title, text ? text : "");
    free(text);
}

static void job_done(tui *t, tui_job *j)
{
    cmp_scr *s = C(t);
    if (!s)
        return;
    phase ph = s->ph;
    s->ph = PH_IDLE;
    char err[512] = "";
    if (ph == PH_INFER) {
        if (j->cancelled) { /* not a failure: not run, as Quantize shows it */
            snprintf(s->err, sizeof s->err, "the golden run was cancelled");
            tui_status(t, false, "%s", s->err);
            tui_set_state(t, STEP_COMPARE, ST_NOT_RUN, "cancelled");
            nb_remove_tree(s->golden);
            return;
        }
        if (j->status != 0) {
            snprintf(s->err, sizeof s->err, "the golden run failed: %s", tui_job_error(j));
            tui_status(t, true, "%s", s->err);
            tui_set_state(t, STEP_COMPARE, ST_FAILED, "golden failed");
            nb_remove_tree(s->golden);
            return;
        }
        golden_keep(t, s);
        start_compare(t);
        return;
    }
    if (ph == PH_LAYER) { /* the step keeps the comparison's run and state */
        t->run_id[STEP_COMPARE] = s->compare_id;
        tui_set_state(t, STEP_COMPARE, s->saved_state, s->saved_note);
        json_t *o = su_job_json(j, err, sizeof err);
        if (!o) {
            tui_status(t, true, "compare layer: %s", err);
            return;
        }
        tui_status(t, false, "layer %s", s->layer);
        show_layer(t, o);
        json_decref(o);
        return;
    }
    json_t *o = su_job_json(j, err, sizeof err);
    if (!o) {
        if (j->cancelled) {
            snprintf(s->err, sizeof s->err, "compare cancelled");
            tui_status(t, false, "%s", s->err);
            tui_set_state(t, STEP_COMPARE, ST_NOT_RUN, "cancelled");
            return;
        }
        snprintf(s->err, sizeof s->err, "compare failed: %s", err);
        tui_status(t, true, "%s", s->err);
        tui_set_state(t, STEP_COMPARE, ST_FAILED, "failed");
        return;
    }
    s->err[0] = 0;
    if (j->run_id > 0) {
        t->run_id[STEP_COMPARE] = j->run_id;
        s->compare_id = j->run_id;
    }
    take_result(t, s, o);
    snprintf(s->dump_of, sizeof s->dump_of, "%s", *su_str(o, "npu_dumps") ? su_str(o, "npu_dumps")
                                                                          : s->pending_dump);
    snprintf(s->golden_of, sizeof s->golden_of, "%s", *su_str(o, "golden_dumps")
                                                          ? su_str(o, "golden_dumps")
                                                          : t->golden_dump);
    char note[96];
    if (s->n_over) {
        snprintf(note, sizeof note, "%d over", s->n_over);
        tui_set_state(t, STEP_COMPARE, ST_WARN, note);
        json_t *fo = json_object_get(o, "first_over_threshold");
        char first[1024];
        su_short_name(su_str(fo, "layer"), s->prefix, su_str(fo, "op_type"), first, sizeof first);
        tui_status(t, false, "%s%d of %d layers over threshold; first (x): %s",
                   s->reused ? "golden reused: " : "", s->n_over, s->nrows, first);
    } else {
        snprintf(note, sizeof note, "%d layers ok", s->nrows);
        tui_set_state(t, STEP_COMPARE, ST_OK, note);
        tui_status(t, false, "%severy one of %d layers within the thresholds",
                   s->reused ? "golden reused: " : "", s->nrows);
    }
}

static bool key(tui *t, int ch)
{
    cmp_scr *s = C(t);
    if (!s)
        return false;
    switch (ch) {
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (s->res)
            open_layer(t);
        return true;
    case 'm': {
        char start[PATH_MAX] = "", path[PATH_MAX] = "";
        if (!getcwd(start, sizeof start))
            snprintf(start, sizeof start, ".");
        if (tui_pick_file(t, "The float model (golden)", start, ".onnx", false, path, sizeof path))
            snprintf(s->model, sizeof s->model, "%s", path);
        return true;
    }
    case 'x': /* back to the first layer over threshold; never silent (issue 38) */
        if (s->init && s->first_over >= 0) {
            for (int p = 0; p < s->tb.nrows; p++)
                if (vm_table_row_of(&s->tb, p) == s->first_over)
                    vm_table_select(&s->tb, p, s->page > 0 ? s->page : 10);
        } else if (s->init)
            tui_status(t, false, "nothing over threshold: every layer within the thresholds");
        else
            tui_status(t, false, "no comparison yet: F5 compares");
        return true;
    case 'l': /* the layer with the largest SQNR drop; never silent (issue 38) */
        if (s->init) {
            const char *name = su_str(json_object_get(s->res, "largest_sqnr_drop"), "layer");
            bool found = false;
            for (int p = 0; *name && p < s->tb.nrows; p++) {
                int r = vm_table_row_of(&s->tb, p);
                if (r >= 0 && r < s->nrows && !strcmp(su_str(s->rows[r], "layer"), name)) {
                    vm_table_select(&s->tb, p, s->page > 0 ? s->page : 10);
                    found = true;
                }
            }
            if (!found)
                tui_status(t, false, "nothing over threshold: no SQNR drop to show");
            else if (!s->n_over)
                tui_status(t, false, "largest SQNR drop: %s (nothing over threshold)", name);
        } else
            tui_status(t, false, "no comparison yet: F5 compares");
        return true;
    case 'w': /* the next layer over threshold, in display order */
        if (s->init)
            for (int p = s->tb.sel + 1; p < s->tb.nrows; p++) {
                int r = vm_table_row_of(&s->tb, p);
                if (r >= 0 && r < s->nrows && row_fails(s->rows[r])) {
                    vm_table_select(&s->tb, p, s->page > 0 ? s->page : 10);
                    break;
                }
            }
        return true;
    }
    if (!s->init)
        return false;
    return tui_table_key(t, &s->tb, ch, s->page > 0 ? s->page : 10);
}

static void mouse(tui *t, int y, int x)
{
    (void)x;
    cmp_scr *s = C(t);
    if (s && s->init && s->tab_h >= 2)
        su_table_click(&s->tb, y, s->tab_y, s->tab_h);
}

static void cleanup(tui *t)
{
    cmp_scr *s = t->scr[STEP_COMPARE];
    if (!s)
        return;
    clear_result(s);
    json_decref(s->manifest);
    if (s->init)
        vm_table_free(&s->tb);
    free(s);
    t->scr[STEP_COMPARE] = NULL;
}

static const tui_keyhelp help[] = {
    {"F5, r", "golden run of the float model on the run's input (kept while the model, input "
              "and shape stay the same), then the comparison"},
    {"Enter", "the layer: error histogram, ten worst elements, golden vs NPU, fused tasks"},
    {"x", "back to the first layer over threshold"},
    {"w", "the next layer over threshold"},
    {"l", "the layer with the largest SQNR drop"},
    {"m", "pick the float model when none is open"},
    {"arrows j k PgUp PgDn", "move"},
    {"< > s", "sort by another column, reverse (sparkline stays in network order)"},
    {"/ n N", "search layers, next, previous"},
    {NULL, NULL},
};

const tui_screen scr_compare = {
    .title = "Compare",
    .draw = draw,
    .key = key,
    .run = run,
    .job_done = job_done,
    .mouse = mouse,
    .help = help,
    .cleanup = cleanup,
};
