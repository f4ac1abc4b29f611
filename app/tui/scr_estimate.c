/* nanobench TUI: the Estimate screen. Runs `nanobench estimate -m MODEL -p --json
 * [--input_shape S] [--soc_version V]` and shows the vendor's five items with the MACs in a
 * summary box, the per-task table (sortable, unsupported ops highlighted with their
 * reason), and on 'm' the activation arena as a map: tensors as bars over task order and
 * arena offset, the peak task marked. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scr_util.h"

enum { C_LAYER, C_OP, C_UNIT, C_MACS, C_WEIGHTS, C_OUTB, C_OUTPUT, C_REASON, C_N };

typedef struct est_data {
    char model[PATH_MAX];  /* the model and shape the results belong to */
    char shape[512];
    json_t *res;           /* estimate --json, NULL before it ran */
    vm_table layers;
    vm_arena_tensor *ts;   /* the arena map (names point into res) */
    int nts, ntasks, peak; /* peak: the task where the live bytes are largest, -1 */
    int64_t arena, peak_bytes;
    int n_unsup;
    int name_w;            /* the longest task name (as shown) */
    size_t prefix;         /* the "model/" every task name shares */
    int short_names;       /* the layer cells: 1 short (a narrow pane), 0 full, -1 not set */
    bool map;              /* 'm': the arena map instead of the table */
    int map_sel;           /* the tensor picked in the map */
    char error[1024];
    int table_y, table_h;
    int64_t shown_again;   /* the earlier session's estimate run shown again (est_enter) */
} est_data;

static est_data *data(tui *t)
{
    est_data *d = t->scr[STEP_ESTIMATE];
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return NULL;
        static const char *const titles[C_N] = {"layer", "op", "unit", "MACs", "weights",
                                                "out bytes", "output", "reason"};
        static const int widths[C_N] = {24, 13, 6, 10, 8, 9, 16, 40};
        static const bool numeric[C_N] = {false, false, false, true, true, true, false, false};
        vm_table_init(&d->layers, C_N, titles, widths, numeric);
        d->layers.cols[C_LAYER].keep_tail = true;
        d->peak = -1;
        t->scr[STEP_ESTIMATE] = d;
    }
    return d;
}

static void clear_results(est_data *d)
{
    json_decref(d->res);
    d->res = NULL;
    vm_table_clear(&d->layers);
    free(d->ts);
    d->ts = NULL;
    d->nts = d->ntasks = d->n_unsup = 0;
    d->short_names = -1;
    d->peak = -1;
    d->arena = d->peak_bytes = 0;
    d->map_sel = 0;
    d->error[0] = 0;
}

static void est_enter(tui *t)
{
    est_data *d = data(t);
    if (d && (strcmp(d->model, t->model) || strcmp(d->shape, t->input_shape))) {
        clear_results(d); /* another model or shape: the results were for the old one */
        snprintf(d->model, sizeof d->model, "%s", t->model);
        snprintf(d->shape, sizeof d->shape, "%s", t->input_shape);
    }
}

static void est_run(tui *t);

/* Becoming the main pane: a model opened again whose Estimate an earlier session ran
   (su_resume took it up, t->run_id[STEP_ESTIMATE]) shows it again: the estimate runs once
   more (tens of ms, the same result for the same model), since the run database keeps its
   metrics but not the layer table (issue 38: Estimate was not picked up). */
static void est_enter_again(tui *t)
{
    est_data *d = data(t);
    int64_t id = t->run_id[STEP_ESTIMATE];
    if (!d || d->res || t->job || id <= 0 || d->shown_again == id ||
        (t->state[STEP_ESTIMATE] != ST_OK && t->state[STEP_ESTIMATE] != ST_WARN))
        return;
    d->shown_again = id;
    est_run(t);
    if (t->job)
        tui_status(t, false, "Estimate of an earlier session (run %lld): shown again",
                   (long long)id);
}

static void est_show(tui *t)
{
    est_enter(t);
    est_enter_again(t);
}

static void est_run(tui *t)
{
    est_data *d = data(t);
    if (!d)
        return;
    if (!t->model[0]) {
        tui_status(t, true, "no model open: open one on the Model step first (o)");
        return;
    }
    est_enter(t);
    su_argv a = {0};
    su_arg(&a, "estimate");
    su_arg(&a, "-m");
    su_arg(&a, "%s", t->model);
    su_arg(&a, "-p");
    su_arg(&a, "--json");
    if (t->input_shape[0]) {
        su_arg(&a, "--input_shape");
        su_arg(&a, "%s", t->input_shape);
    }
    if (t->soc_version[0]) {
        su_arg(&a, "--soc_version");
        su_arg(&a, "%s", t->soc_version);
    }
    if (a.oom)
        tui_status(t, true, "out of memory");
    else if (tui_run(t, STEP_ESTIMATE, su_parent(t, STEP_ESTIMATE), a.v, "estimate"))
    {
        char stem[256];
        tui_status(t, false, "estimating %s", su_stem(t->model, NULL, stem, sizeof stem));
    }
    su_argv_free(&a);
}

/* "[1,24,74,32] NC1HWC0" of a tensor object. */
static void tensor_text(const json_t *tn, char *buf, size_t len)
{
    char sh[160];
    if (!tn) {
        snprintf(buf, len, "-");
        return;
    }
    su_shape(json_object_get(tn, "shape"), sh, sizeof sh);
    snprintf(buf, len, "%s", sh);
}

/* The layer column's cells: the task names, short on a narrow pane (su_short_name); the
   longest one in name_w. */
static void set_names(est_data *d, bool shortn)
{
    if (d->short_names == shortn)
        return;
    d->short_names = shortn;
    const json_t *ls = json_object_get(d->res, "layers");
    int nc = d->layers.ncols;
    d->name_w = 5;
    for (int r = 0; r < d->layers.nrows && (size_t)r < json_array_size(ls); r++) {
        const json_t *l = json_array_get(ls, (size_t)r);
        char buf[1024];
        const char *name = su_str(l, "name");
        if (shortn)
            name = su_short_name(name, d->prefix, su_str(l, "op_type"), buf, sizeof buf);
        char *c = strdup(name);
        if (c) {
            free(d->layers.cells[r * nc + C_LAYER]);
            d->layers.cells[r * nc + C_LAYER] = c;
        }
        int nl = (int)strlen(name);
        d->name_w = nl > d->name_w ? nl : d->name_w;
    }
}

static void fill(est_data *d)
{
    vm_table_clear(&d->layers);
    const json_t *ls = json_object_get(d->res, "layers");
    d->ntasks = (int)json_array_size(ls);
    d->n_unsup = 0;
    d->name_w = 5;
    for (size_t i = 0; i < json_array_size(ls); i++) {
        const json_t *l = json_array_get(ls, i);
        const json_t *out = json_array_get(json_object_get(l, "outputs"), 0);
        char macs[32], wb[32], ob[32], shape[160];
        double m = su_num(l, "macs"), w = su_num(l, "weight_bytes"),
               o = out ? su_num(out, "bytes") : NAN;
        snprintf(macs, sizeof macs, "%.0f", m);
        vm_fmt_bytes(wb, sizeof wb, w);
        if (isnan(o))
            snprintf(ob, sizeof ob, "-");
        else
            vm_fmt_bytes(ob, sizeof ob, o);
        tensor_text(out, shape, sizeof shape);
        const char *unit = su_str(l, "unit"), *reason = su_str(l, "reason");
        /* "cpu-unsupported": nothing runs it (red, with its reason); "cpu": the MCU's core
           runs it (an If's select), not counted as unsupported */
        bool cpu = !strcmp(unit, "cpu-unsupported") || (strcmp(unit, "cpu") && reason[0]);
        if (!strncmp(unit, "cpu", 3))
            unit = "cpu";
        bool inserted = json_is_true(json_object_get(l, "inserted"));
        const char *cells[C_N] = {su_str(l, "name"), su_str(l, "op_type"), unit, macs,
                                  w > 0 ? wb : "-", ob, shape, reason};
        double nums[C_N] = {NAN, NAN, NAN, m, w, o, NAN, NAN};
        d->n_unsup += cpu;
        vm_table_add(&d->layers, cells, nums,
                     cpu ? VM_TAG_BAD : inserted ? VM_TAG_DIM : VM_TAG_NONE);
    }
    vm_table_select(&d->layers, 0, 1);
    const char **names = malloc(sizeof(char *) * (json_array_size(ls) + 1));
    d->prefix = 0;
    if (names) {
        for (size_t i = 0; i < json_array_size(ls); i++)
            names[i] = su_str(json_array_get(ls, i), "name");
        d->prefix = su_common_prefix(names, (int)json_array_size(ls));
        free(names);
    }
    d->short_names = -1;
    set_names(d, false);
    /* the arena map */
    const json_t *am = json_object_get(d->res, "arena_map");
    free(d->ts);
    d->ts = NULL;
    d->nts = 0;
    size_t n = json_array_size(am);
    if (n && (d->ts = calloc(n, sizeof *d->ts))) {
        for (size_t i = 0; i < n; i++) {
            const json_t *a = json_array_get(am, i);
            d->ts[i] = (vm_arena_tensor){.name = su_str(a, "name"),
                                         .offset = (int64_t)su_num(a, "offset"),
                                         .bytes = (int64_t)su_num(a, "bytes"),
                                         .first = (int)su_num(a, "first_task"),
                                         .last = (int)su_num(a, "last_task")};
        }
        d->nts = (int)n;
    }
    const json_t *mem = json_object_get(d->res, "memory");
    d->arena = (int64_t)su_num(mem, "arena");
    double pk = su_num(mem, "arena_peak_task");
    d->peak = vm_arena_peak(d->ts, d->nts, &d->peak_bytes);
    if (!isnan(pk) && pk >= 0) /* the planner's own peak when the CLI gives it */
        d->peak = (int)pk;
    d->map_sel = 0;
}

static void est_job_done(tui *t, tui_job *j)
{
    est_data *d = data(t);
    if (!d)
        return;
    char err[1024];
    json_t *o = su_job_json(j, err, sizeof err);
    clear_results(d);
    if (!o) {
        snprintf(d->error, sizeof d->error, "%s", err);
        tui_set_state(t, STEP_ESTIMATE, j->cancelled ? ST_NOT_RUN : ST_FAILED,
                      j->cancelled ? "cancelled" : "failed");
        tui_status(t, !j->cancelled, "estimate: %s", err);
        return;
    }
    d->res = o;
    t->run_id[STEP_ESTIMATE] = j->run_id;
    fill(d);
    char note[96], size[32];
    vm_fmt_bytes(size, sizeof size, su_num(o, "TOTAL_EXEOM_SIZE"));
    if (d->n_unsup) {
        snprintf(note, sizeof note, "%d not on NPU", d->n_unsup);
        tui_set_state(t, STEP_ESTIMATE, ST_WARN, note);
        tui_status(t, true, "estimate: %d op%s not on the NPU (red rows): cut with out_nodes at "
                   "Compile", d->n_unsup, d->n_unsup == 1 ? "" : "s");
        /* the first unsupported op selected */
        for (int p = 0; p < d->layers.nrows; p++)
            if (d->layers.tags[vm_table_row_of(&d->layers, p)] == VM_TAG_BAD) {
                vm_table_select(&d->layers, p, su_page(d->table_h > 2 ? d->table_h : 10));
                break;
            }
    } else {
        snprintf(note, sizeof note, "exeom %s", size);
        tui_set_state(t, STEP_ESTIMATE, ST_OK, note);
        const json_t *notes = json_object_get(o, "notes");
        if (json_array_size(notes))
            tui_status(t, false, "estimate: %s", json_string_value(json_array_get(notes, 0)));
        else
            tui_status(t, false, "estimate: %d tasks, exeom %s; Quantize is next", d->ntasks, size);
    }
}

/* "5: Conv(20) LeakyRelu(19) ..." of a {op: count} object in at most width characters:
   the ops that do not fit as " +N more". */
static void counts_text(const json_t *c, char *buf, size_t len, int width)
{
    size_t n = json_object_size(c), k = 0;
    size_t o = (size_t)snprintf(buf, len, "%zu%s", n, n ? ":" : "");
    const char *op;
    const json_t *v;
    json_object_foreach((json_t *)c, op, v) {
        if (o >= len)
            break;
        char item[160], more[32];
        snprintf(item, sizeof item, " %s(%lld)", op, (long long)json_integer_value(v));
        /* the room for " +N more" after it unless it is the last one */
        int keep = k + 1 < n ? snprintf(more, sizeof more, " +%zu more", n - k - 1) : 0;
        if ((int)(o + strlen(item)) + keep > width) {
            snprintf(buf + o, len - o, " +%zu more", n - k);
            return;
        }
        o += (size_t)snprintf(buf + o, len - o, "%s", item);
        k++;
    }
    if (!n && o < len)
        snprintf(buf + o, len - o, " (none)");
}

/* The summary box: the five items and MACs; returns its height. */
static int draw_summary(tui *t, WINDOW *w, est_data *d, int y, int wd, bool compact)
{
    const json_t *o = d->res, *mem = json_object_get(o, "memory");
    char buf[2048], a[48], b[48];
    int bad = tui_tag_attr(t, VM_TAG_BAD) | A_BOLD, dim = tui_tag_attr(t, VM_TAG_DIM);
    char title[96];
    snprintf(title, sizeof title, "Estimate on %s", su_str(o, "soc_version")[0]
                                                        ? su_str(o, "soc_version") : "the Nano");
    bool wide = wd >= 100;
    static const char *const items[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE",
                                        "TOTAL_EXEOM_SIZE"};
    if (compact) { /* the arena map needs the room: one line */
        vm_fmt_bytes(a, sizeof a, su_num(o, "TOTAL_MEM_SIZE"));
        vm_fmt_bytes(b, sizeof b, su_num(o, "TOTAL_EXEOM_SIZE"));
        su_put(t, w, y, 0, wd, A_BOLD, "TOTAL_MEM_SIZE %s  TOTAL_EXEOM_SIZE %s  NOT_SUPPORT %d", a,
               b, (int)json_object_size(json_object_get(o, "NOT_SUPPORT_OP_TYPE")));
        return 1;
    }
    int inner = wd - 4, y0 = y + 1;
    /* row 1-2: the three sizes and MACs, two to a line (or four on a wide pane) */
    int colw = wide ? inner / 4 : inner / 2;
    for (int k = 0; k < 4; k++) {
        int row = wide ? 0 : k / 2, col = wide ? k : k % 2;
        if (k < 3) {
            double v = su_num(o, items[k]);
            vm_fmt_bytes(a, sizeof a, v);
            if (wide)
                snprintf(b, sizeof b, "%s (%.0f)", a, v);
            else
                snprintf(b, sizeof b, "%s", a);
            su_put(t, w, y0 + row, 2 + col * colw, colw - 1, 0, "%-*s %s",
                   k == 1 ? 14 : 17, items[k], b);
        } else {
            su_put(t, w, y0 + row, 2 + col * colw, colw - 1, 0, "%-*s %.0f", wide ? 4 : 14,
                   "MACs", su_num(o, "macs"));
        }
    }
    int r = y0 + (wide ? 1 : 2);
    counts_text(json_object_get(o, "TOTAL_NET_OP_TYPE"), buf, sizeof buf, inner - 20);
    su_put(t, w, r, 2, inner, 0, "TOTAL_NET_OP_TYPE   ");
    su_put(t, w, r++, 22, inner - 20, 0, "%s", buf);
    counts_text(json_object_get(o, "NOT_SUPPORT_OP_TYPE"), buf, sizeof buf, inner - 20);
    su_put(t, w, r, 2, inner, 0, "NOT_SUPPORT_OP_TYPE ");
    su_put(t, w, r++, 22, inner - 20, d->n_unsup ? bad : 0, "%s", buf);
    vm_fmt_bytes(a, sizeof a, su_num(mem, "arena"));
    vm_fmt_bytes(b, sizeof b, su_num(mem, "arena_lower_bound"));
    if (d->peak >= 0 && d->peak < d->ntasks) {
        /* the peak task's name when it fits */
        const char *pn = su_str(json_array_get(json_object_get(o, "layers"), (size_t)d->peak),
                                "name");
        snprintf(buf, sizeof buf, "arena %s (lower bound %s), peak at task %d %s; m: map", a, b,
                 d->peak, pn);
        if ((int)strlen(buf) > inner)
            snprintf(buf, sizeof buf, "arena %s (lower bound %s), peak at task %d; m: map", a, b,
                     d->peak);
        if ((int)strlen(buf) > inner) /* 80x24 */
            snprintf(buf, sizeof buf, "arena %s (bound %s), peak at task %d; m: map", a, b,
                     d->peak);
        su_put(t, w, r++, 2, inner, dim, "%s", buf);
    } else
        su_put(t, w, r++, 2, inner, dim, "arena %s (lower bound %s)", a, b);
    const json_t *notes = json_object_get(o, "notes"); /* e.g. a dynamic batch taken as 1 */
    for (size_t i = 0; i < json_array_size(notes) && i < (wide ? 3u : 1u); i++) {
        snprintf(buf, sizeof buf, "note: %s", json_string_value(json_array_get(notes, i)));
        r += su_wrap(t, w, r, 2, inner, 2, tui_tag_attr(t, VM_TAG_WARN), buf);
    }
    int h = r - y + 1;
    su_box(t, w, y, 0, h, wd, title);
    return h;
}

/* The selected task in one line under the table. */
static void draw_detail(tui *t, WINDOW *w, est_data *d, int y, int wd)
{
    int pos = d->layers.sel;
    if (pos < 0)
        return;
    int row = vm_table_row_of(&d->layers, pos);
    const json_t *l = json_array_get(json_object_get(d->res, "layers"), (size_t)row);
    const char *reason = su_str(l, "reason");
    char in[160] = "-", out[160] = "-";
    const json_t *ti = json_array_get(json_object_get(l, "inputs"), 0);
    const json_t *to = json_array_get(json_object_get(l, "outputs"), 0);
    if (ti)
        su_shape(json_object_get(ti, "shape"), in, sizeof in);
    if (to)
        su_shape(json_object_get(to, "shape"), out, sizeof out);
    char text[1024];
    if (reason[0])
        snprintf(text, sizeof text, "task %d %s (%s): not on the NPU: %s", row,
                 su_str(l, "name"), su_str(l, "onnx_op"), reason);
    else
        snprintf(text, sizeof text, "task %d %s: %s %s -> %s %s%s", row, su_str(l, "name"),
                 su_str(ti, "dtype"), in, su_str(to, "dtype"), out,
                 json_is_true(json_object_get(l, "inserted")) ? " (inserted)" : "");
    su_wrap(t, w, y, 0, wd, 2, reason[0] ? tui_tag_attr(t, VM_TAG_BAD) : tui_tag_attr(t, VM_TAG_DIM),
            text);
}

/* The cell of tensor k: neighbours differ in character and (with colour) in colour. */
static const char *bar_ch(const tui *t, int k, int *attr)
{
    static const int tags[] = {VM_TAG_GOOD, VM_TAG_WARN, VM_TAG_NONE};
    static const char *const ascii[] = {"#", "%", "=", "+", "@", "*"};
    static const char *const blocks[] = {"\u2588", "\u2593", "\u2592", "\u2591"};
    *attr = t->color ? tui_tag_attr(t, tags[k % 3]) : 0;
    return t->utf8 ? blocks[k % 4] : ascii[k % 6];
}

static void draw_map(tui *t, WINDOW *w, est_data *d, int y, int h, int wd)
{
    int dim = tui_tag_attr(t, VM_TAG_DIM), bad = tui_tag_attr(t, VM_TAG_BAD) | A_BOLD;
    char a[32], b[32];
    if (!d->nts) {
        su_wrap(t, w, y, 0, wd, 3, dim,
                json_object_get(d->res, "arena_map")
                    ? "No tensor lives in the activation arena."
                    : "This nanobench's estimate --json has no arena_map: the map needs a newer "
                      "build.");
        return;
    }
    vm_fmt_bytes(a, sizeof a, (double)d->arena);
    vm_fmt_bytes(b, sizeof b, (double)d->peak_bytes);
    su_put(t, w, y++, 0, wd, A_BOLD, "Arena %s, peak %s live at task %d (%d tensors, %d tasks)",
           a, b, d->peak, d->nts, d->ntasks);
    int axis = 9;                 /* offset labels ("1.27 MiB") */
    int rows = h - 4, cols = wd - axis - 1;
    if (rows < 2 || cols < 4)
        return;
    int *grid = malloc(sizeof *grid * (size_t)rows * (size_t)cols);
    if (!grid)
        return;
    vm_arena_grid(d->ts, d->nts, d->ntasks, d->arena, rows, cols, grid);
    int T = d->ntasks > 0 ? d->ntasks : 1;
    for (int r = 0; r < rows; r++) {
        if (r == 0 || r == rows - 1 || r == rows / 2) {
            vm_fmt_bytes(a, sizeof a, (double)d->arena * r / rows);
            su_put(t, w, y + r, 0, axis - 1, dim, "%*s", axis - 1, a);
        }
        mvwaddch(w, y + r, axis - 1, ACS_VLINE);
        for (int c = 0; c < cols; c++) {
            int k = grid[r * cols + c], attr = 0;
            double tlo = (double)c * T / cols, thi = (double)(c + 1) * T / cols;
            bool peak = d->peak >= 0 && tlo < d->peak + 1 && thi > d->peak;
            if (k < 0) {
                if (peak)
                    su_put(t, w, y + r, axis + c, 1, bad, ":");
                continue;
            }
            const char *ch = bar_ch(t, k, &attr);
            if (k == d->map_sel) {
                attr = (t->color ? tui_tag_attr(t, VM_TAG_BAD) : (int)A_REVERSE) | A_BOLD;
                ch = t->utf8 ? "\u2588" : "#";
            }
            else if (peak && !t->color)
                attr |= A_BOLD;
            su_put(t, w, y + r, axis + c, 1, attr, "%s", ch);
        }
    }
    y += rows;
    mvwaddch(w, y, axis - 1, ACS_LLCORNER);
    mvwhline(w, y, axis, ACS_HLINE, cols);
    /* the task axis: 0, the peak marked, the last task */
    y++;
    su_put(t, w, y, axis, 6, dim, "0");
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    su_put(t, w, y, axis + cols - (int)strlen(last), (int)strlen(last), dim, "%s", last);
    if (d->peak >= 0) {
        int pc = (int)((double)d->peak * cols / T);
        char pk[48];
        snprintf(pk, sizeof pk, "%s peak %d", t->utf8 ? "\u25b2" : "^", d->peak);
        int x = axis + pc;
        if (x + (int)strlen(pk) > wd)
            x = wd - (int)strlen(pk) + (t->utf8 ? 2 : 0);
        su_put(t, w, y, x, wd - x, bad, "%s", pk);
    }
    su_put(t, w, y, 0, axis - 1, dim, "task");
    y++;
    const vm_arena_tensor *s = &d->ts[d->map_sel];
    vm_fmt_bytes(a, sizeof a, (double)s->bytes);
    vm_fmt_bytes(b, sizeof b, (double)s->offset);
    su_put(t, w, y, 0, wd, 0, "[%d/%d] %s: %s at %s, tasks %d..%d  (j/k: next tensor)",
           d->map_sel + 1, d->nts, s->name, a, b, s->first, s->last);
    free(grid);
}

static void est_draw(tui *t, WINDOW *w)
{
    est_data *d = data(t);
    int h = getmaxy(w), wd = getmaxx(w);
    if (!d)
        return;
    est_enter(t);
    if (!t->model[0]) {
        su_put(t, w, 0, 0, wd, A_BOLD, "Estimate");
        su_wrap(t, w, 2, 0, wd, 3, 0, "No model open: open one on the Model step (o).");
        return;
    }
    if (t->job && t->job->step == STEP_ESTIMATE && !t->job->done) {
        su_put(t, w, 0, 0, wd, A_BOLD, "Estimate");
        su_put(t, w, 2, 0, wd, 0, "Estimating (nanobench estimate -p)...");
        return;
    }
    if (!d->res) {
        su_put(t, w, 0, 0, wd, A_BOLD, "Estimate");
        if (d->error[0]) {
            su_put(t, w, 2, 0, wd, tui_tag_attr(t, VM_TAG_BAD) | A_BOLD, "The estimate failed:");
            int n = su_wrap(t, w, 3, 0, wd, h - 7, tui_tag_attr(t, VM_TAG_BAD), d->error);
            if (strstr(d->error, "--input_shape"))
                su_put(t, w, 4 + n, 0, wd, A_BOLD, "Set --input_shape on the Model step: 1, then e.");
        } else {
            su_wrap(t, w, 2, 0, wd, 4, 0,
                    "Press F5 to estimate the model on the Nano: the vendor's five items "
                    "(weights, memory, exeom size, op types, unsupported ops), MACs, one row "
                    "per NPU task, and the activation arena's map.");
        }
        return;
    }
    int y = draw_summary(t, w, d, 0, wd, d->map && h < 30);
    if (d->map) {
        draw_map(t, w, d, y, h - y, wd);
        return;
    }
    int detail = 2;
    d->table_y = y;
    d->table_h = h - y - detail;
    if (d->table_h < 2) {
        d->table_h = h - y;
        detail = 0;
    }
    /* the layer name takes what the numbers leave, up to its longest (short names on a
       narrow pane); the reason the rest */
    set_names(d, wd < 100);
    int lw = wd - 110 > (wd - 41 < 40 ? wd - 41 : 40) ? wd - 110 : (wd - 41 < 40 ? wd - 41 : 40);
    lw = lw < 18 ? 18 : lw > d->name_w ? d->name_w : lw;
    d->layers.cols[C_LAYER].width = lw;
    int used = 0;
    for (int c = 0; c < C_REASON; c++)
        used += d->layers.cols[c].width + 1;
    d->layers.cols[C_REASON].width = wd - used > 10 ? wd - used : 10;
    tui_draw_table(t, w, &d->layers, y, 0, d->table_h, wd);
    if (detail)
        draw_detail(t, w, d, h - detail, wd);
}

static bool est_key(tui *t, int ch)
{
    est_data *d = data(t);
    if (!d || !d->res)
        return false;
    if (ch == 'm') {
        d->map = !d->map;
        return true;
    }
    if (d->map) {
        int n = d->nts;
        switch (ch) {
        case KEY_DOWN: case 'j':
            d->map_sel = n ? (d->map_sel + 1) % n : 0;
            return true;
        case KEY_UP: case 'k':
            d->map_sel = n ? (d->map_sel + n - 1) % n : 0;
            return true;
        case 'p': /* the largest tensor alive at the peak */
            for (int i = 0, best = -1; i < n; i++)
                if (d->ts[i].first <= d->peak && d->peak <= d->ts[i].last &&
                    (best < 0 || d->ts[i].bytes > d->ts[best].bytes))
                    best = i, d->map_sel = i;
            return true;
        }
        return false;
    }
    return tui_table_key(t, &d->layers, ch, su_page(d->table_h));
}

static void est_mouse(tui *t, int y, int x)
{
    (void)x;
    est_data *d = data(t);
    if (d && d->res && !d->map)
        su_table_click(&d->layers, y, d->table_y, d->table_h);
}

static void est_cleanup(tui *t)
{
    est_data *d = t->scr[STEP_ESTIMATE];
    if (!d)
        return;
    clear_results(d);
    vm_table_free(&d->layers);
    free(d);
    t->scr[STEP_ESTIMATE] = NULL;
}

static const tui_keyhelp est_help[] = {
    {"F5 r", "estimate (nanobench estimate -p --json)"},
    {"m", "the arena map (tensors: task x offset) / the table"},
    {"j/k (map)", "pick the next / previous tensor"},
    {"p (map)", "pick the largest tensor alive at the peak"},
    {"red rows", "ops the NPU cannot run; the reason below"},
    {"dim rows", "ops the compiler inserted"},
    {NULL, NULL}};

const tui_screen scr_estimate = {.title = "Estimate",
                                 .enter = est_show,
                                 .draw = est_draw,
                                 .key = est_key,
                                 .run = est_run,
                                 .job_done = est_job_done,
                                 .mouse = est_mouse,
                                 .help = est_help,
                                 .cleanup = est_cleanup};
