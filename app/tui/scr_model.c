/* nanobench TUI: the Model screen. Opens a model (file picker, or `nanobench MODEL.onnx`),
 * runs `nanobench info MODEL --json [--input_shape S]` and shows its inputs, outputs,
 * opset, node count and operator histogram; 'e' edits --input_shape for dynamic dims. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scr_util.h"

typedef struct model_data {
    char model[PATH_MAX];     /* the model the results below belong to */
    json_t *info;             /* info --json, NULL before it ran */
    vm_table ops;             /* op, count, subgraph, reference, share */
    char error[512];          /* the last failure, "" when none */
    char float_inputs[512];   /* ';'-separated */
    char dyn_hint[512];       /* a dynamic dim without --input_shape, "" when none */
    char batch_note[512];     /* a dynamic batch taken as 1 (as estimate does), "" when none */
    char resumed[128];        /* the steps taken up from earlier sessions (su_resume) */
    char resumed_of[PATH_MAX];/* the model su_resume ran for */
    char suggest[512];        /* --input_shape with unknown dims as 1 */
    int table_y, table_h;     /* where the op table was drawn */
    int bar_w;                /* the share column's bar width the cells were made for */
    double bar_max;           /* the largest count */
} model_data;

static model_data *data(tui *t)
{
    model_data *d = t->scr[STEP_MODEL];
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return NULL;
        static const char *const titles[] = {"op", "main", "subgraph", "reference", "share"};
        static const int widths[] = {22, 6, 8, 9, 20};
        static const bool numeric[] = {false, true, true, false, false};
        vm_table_init(&d->ops, 5, titles, widths, numeric);
        t->scr[STEP_MODEL] = d;
    }
    return d;
}

static void clear_results(model_data *d)
{
    json_decref(d->info);
    d->info = NULL;
    vm_table_clear(&d->ops);
    d->error[0] = d->float_inputs[0] = d->dyn_hint[0] = d->suggest[0] = d->batch_note[0] = 0;
}

const char *scr_model_float_inputs(const tui *t)
{
    const model_data *d = t->scr[STEP_MODEL];
    return d && d->info && !strcmp(d->model, t->model) ? d->float_inputs : NULL;
}

/* A new model: every step's results are for the old one. */
static void open_model(tui *t, const char *path)
{
    model_data *d = data(t);
    char abs[PATH_MAX];
    if (!realpath(path, abs))
        snprintf(abs, sizeof abs, "%s", path);
    if (strcmp(abs, t->model)) {
        snprintf(t->model, sizeof t->model, "%s", abs);
        t->input_shape[0] = t->model_inputs[0] = 0;
        t->deploy_model[0] = t->exeom[0] = t->run_input[0] = 0;
        t->npu_dump[0] = t->golden_dump[0] = 0;
        for (int s = 0; s < STEP_HISTORY; s++) {
            t->run_id[s] = 0;
            tui_set_state(t, s, ST_NOT_RUN, "");
        }
    }
    if (d)
        clear_results(d);
}

static bool pick(tui *t)
{
    char start[PATH_MAX] = ".", path[PATH_MAX];
    if (t->model[0]) {
        snprintf(start, sizeof start, "%s", t->model);
        char *slash = strrchr(start, '/');
        if (slash && slash != start)
            *slash = 0;
        else
            snprintf(start, sizeof start, "%s", slash ? "/" : ".");
    }
    if (!tui_pick_file(t, "Open an ONNX model", start, ".onnx", false, path, sizeof path))
        return false;
    open_model(t, path);
    return true;
}

static void model_run(tui *t)
{
    model_data *d = data(t);
    if (!d)
        return;
    if (!t->model[0] && !pick(t))
        return;
    if (strcmp(d->model, t->model)) { /* opened by `nanobench MODEL.onnx` or the picker */
        clear_results(d);
        snprintf(d->model, sizeof d->model, "%s", t->model);
    }
    if (strcmp(d->resumed_of, t->model)) { /* a model just opened: what earlier sessions made
                                              of it, and the input_shape used last */
        snprintf(d->resumed_of, sizeof d->resumed_of, "%s", t->model);
        su_resume(t, d->resumed, sizeof d->resumed);
    }
    su_argv a = {0};
    su_arg(&a, "info");
    su_arg(&a, "%s", t->model);
    if (t->input_shape[0]) {
        su_arg(&a, "--input_shape");
        su_arg(&a, "%s", t->input_shape);
    }
    su_arg(&a, "--json");
    if (a.oom)
        tui_status(t, true, "out of memory");
    else if (tui_run(t, STEP_MODEL, 0, a.v, "info"))
        tui_status(t, false, "reading %s", t->model);
    su_argv_free(&a);
}

/* The share column's bars for a column of width cells (the counts in its nums). */
static void set_bars(tui *t, model_data *d, int width)
{
    if (width == d->bar_w)
        return;
    d->bar_w = width;
    int nc = d->ops.ncols;
    for (int r = 0; r < d->ops.nrows; r++) {
        char bar[512] = "";
        int n = vm_bar_len(d->ops.nums[r * nc + 4], d->bar_max, width);
        for (int k = 0, o = 0; k < n && o < (int)sizeof bar - 4; k++)
            o += snprintf(bar + o, sizeof bar - (size_t)o, "%s", t->utf8 ? "\u2588" : "#");
        char *c = strdup(bar);
        if (c) {
            free(d->ops.cells[r * nc + 4]);
            d->ops.cells[r * nc + 4] = c;
        }
    }
}

/* The op histogram as table rows, the inputs' float names, the dynamic-dim hint. */
static void fill(tui *t, model_data *d)
{
    vm_table_clear(&d->ops);
    const json_t *h = json_object_get(d->info, "op_histogram");
    const json_t *sub = json_object_get(d->info, "subgraph_op_histogram");
    const json_t *unsup = json_object_get(d->info, "unsupported_by_reference");
    double max = 0;
    const char *op;
    const json_t *v;
    /* every op of the main graph, then those only in subgraphs */
    for (int pass = 0; pass < 2; pass++) {
        const json_t *src = pass ? sub : h;
        json_object_foreach((json_t *)src, op, v) {
            if (pass && json_object_get(h, op))
                continue;
            double c = json_is_integer(json_object_get(h, op))
                           ? (double)json_integer_value(json_object_get(h, op)) : 0;
            double s = json_is_integer(json_object_get(sub, op))
                           ? (double)json_integer_value(json_object_get(sub, op)) : 0;
            max = c + s > max ? c + s : max;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        const json_t *src = pass ? sub : h;
        json_object_foreach((json_t *)src, op, v) {
            if (pass && json_object_get(h, op))
                continue;
            json_int_t c = json_integer_value(json_object_get(h, op));
            json_int_t s = json_integer_value(json_object_get(sub, op));
            bool missing = false;
            for (size_t i = 0; i < json_array_size(unsup); i++)
                missing |= json_is_string(json_array_get(unsup, i)) &&
                           !strcmp(json_string_value(json_array_get(unsup, i)), op);
            char cc[24], cs[24];
            snprintf(cc, sizeof cc, "%lld", (long long)c);
            snprintf(cs, sizeof cs, "%lld", (long long)s);
            const char *cells[] = {op, cc, cs, missing ? "missing" : "yes", ""};
            double nums[] = {NAN, (double)c, (double)s, NAN, (double)(c + s)};
            vm_table_add(&d->ops, cells, nums, missing ? VM_TAG_WARN : VM_TAG_NONE);
        }
    }
    d->bar_max = max;
    d->bar_w = 0; /* drawn for the pane's width */
    vm_table_sort(&d->ops, 1, true);
    vm_table_select(&d->ops, 0, 1);
    /* the inputs: names for the next steps, float ones for atc, dynamic dims */
    const json_t *ins = json_object_get(d->info, "inputs");
    size_t on = 0, of = 0, os = 0;
    t->model_inputs[0] = d->float_inputs[0] = d->dyn_hint[0] = d->suggest[0] = 0;
    d->batch_note[0] = 0;
    char batch_in[256] = ""; /* the first input whose only dynamic dim is the batch */
    for (size_t i = 0; i < json_array_size(ins); i++) {
        const json_t *in = json_array_get(ins, i);
        const char *name = su_str(in, "name"), *dt = su_str(in, "dtype");
        if (on < sizeof t->model_inputs)
            on += (size_t)snprintf(t->model_inputs + on, sizeof t->model_inputs - on, "%s%s",
                                   i ? ";" : "", name);
        if ((!strcmp(dt, "FLOAT") || !strcmp(dt, "FLOAT16")) && of < sizeof d->float_inputs)
            of += (size_t)snprintf(d->float_inputs + of, sizeof d->float_inputs - of, "%s%s",
                                   of ? ";" : "", name);
        char shape[256];
        const json_t *sh = json_object_get(in, "shape");
        bool known = su_shape(sh, shape, sizeof shape);
        if (os < sizeof d->suggest) {
            os += (size_t)snprintf(d->suggest + os, sizeof d->suggest - os, "%s%s:", i ? ";" : "",
                                   name);
            for (size_t k = 0; k < json_array_size(sh) && os < sizeof d->suggest; k++) {
                const json_t *dim = json_array_get(sh, k);
                os += (size_t)snprintf(d->suggest + os, sizeof d->suggest - os, "%s%lld",
                                       k ? "," : "",
                                       json_is_integer(dim) && json_integer_value(dim) >= 0
                                           ? (long long)json_integer_value(dim) : 1LL);
            }
        }
        /* only the batch (the first dim) dynamic: taken as 1, as estimate does; any other
           dynamic dim needs --input_shape */
        bool batch_only = !known && json_array_size(sh) > 0;
        for (size_t k = 1; batch_only && k < json_array_size(sh); k++) {
            const json_t *dim = json_array_get(sh, k);
            batch_only = json_is_integer(dim) && json_integer_value(dim) >= 0;
        }
        if (batch_only && !batch_in[0])
            snprintf(batch_in, sizeof batch_in, "%s", name);
        if (!known && !batch_only && !d->dyn_hint[0] && !t->input_shape[0])
            snprintf(d->dyn_hint, sizeof d->dyn_hint,
                     "input '%s' has a dynamic dim %s: press e to set --input_shape", name,
                     shape);
    }
    /* the batch taken as 1 for every step (calibrate, atc and infer want the shape given) */
    if (batch_in[0] && !d->dyn_hint[0] && !t->input_shape[0]) {
        snprintf(t->input_shape, sizeof t->input_shape, "%s", d->suggest);
        snprintf(d->batch_note, sizeof d->batch_note,
                 "dynamic batch of '%s' taken as 1, as estimate does (e changes it)", batch_in);
    }
}

static void model_job_done(tui *t, tui_job *j)
{
    model_data *d = data(t);
    if (!d)
        return;
    if (!strcmp(j->title, "bringup")) { /* b: the whole bring-up */
        tui_bringup_done(t, j);
        return;
    }
    char err[512];
    json_t *o = su_job_json(j, err, sizeof err);
    if (!o) {
        clear_results(d);
        snprintf(d->error, sizeof d->error, "%s", err);
        tui_set_state(t, STEP_MODEL, j->cancelled ? ST_NOT_RUN : ST_FAILED,
                      j->cancelled ? "cancelled" : "cannot read");
        tui_status(t, !j->cancelled, "info: %s", err);
        return;
    }
    json_decref(d->info);
    d->info = o;
    d->error[0] = 0;
    t->run_id[STEP_MODEL] = j->run_id;
    fill(t, d);
    char note[96];
    int nodes = (int)su_num(o, "nodes");
    size_t unsup = json_array_size(json_object_get(o, "unsupported_by_reference"));
    if (d->dyn_hint[0]) {
        snprintf(note, sizeof note, "dynamic dims");
        tui_set_state(t, STEP_MODEL, ST_WARN, note);
        tui_status(t, false, "dynamic dims: press e to set --input_shape");
    } else {
        if (unsup)
            snprintf(note, sizeof note, "%zu not in ref", unsup);
        else if (d->batch_note[0])
            snprintf(note, sizeof note, "batch as 1");
        else
            snprintf(note, sizeof note, "opset %d", (int)su_num(o, "opset"));
        tui_set_state(t, STEP_MODEL, unsup ? ST_WARN : ST_OK, note);
        const char *next = t->run_id[STEP_RUN] > 0       ? "Compare"
                           : t->run_id[STEP_COMPILE] > 0  ? "Run"
                           : t->run_id[STEP_QUANTIZE] > 0 ? "Compile" : "Estimate";
        if (d->resumed[0])
            tui_status(t, false, "taken up from earlier sessions: %s; %s is next", d->resumed,
                       next);
        else if (d->batch_note[0])
            tui_status(t, false, "dynamic batch taken as 1; Estimate is next");
        else
            tui_status(t, false, "opset %d, %d nodes; Estimate is next", (int)su_num(o, "opset"),
                       nodes);
        d->resumed[0] = 0;
    }
}

static void edit_shape(tui *t)
{
    model_data *d = data(t);
    if (!t->model[0]) {
        tui_status(t, true, "no model open: press o to pick one");
        return;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", t->input_shape[0] ? t->input_shape
                                    : d && d->suggest[0] ? d->suggest : "");
    if (!tui_prompt(t, "--input_shape (empty: none): ", buf,
                    sizeof buf))
        return;
    /* a changed shape: the steps after this one are for the old shape */
    if (strcmp(buf, t->input_shape))
        for (int s = STEP_ESTIMATE; s < STEP_HISTORY; s++)
            if (t->state[s] != ST_NOT_RUN)
                tui_set_state(t, s, ST_NOT_RUN, "shape changed");
    snprintf(t->input_shape, sizeof t->input_shape, "%s", buf);
    model_run(t);
}

static bool model_key(tui *t, int ch)
{
    model_data *d = data(t);
    if (!d)
        return false;
    if ((ch == 'o' || ch == 'e' || ch == 'b') && t->job) {
        /* the running job's results would be taken for the new model or shape */
        tui_status(t, true, "%s is running: wait for it or cancel it (Esc) before %s",
                   t->job->title, ch == 'o' ? "opening another model"
                                  : ch == 'e' ? "changing --input_shape" : "a bring-up");
        return true;
    }
    switch (ch) {
    case 'o':
        if (pick(t))
            model_run(t);
        return true;
    case 'e':
        edit_shape(t);
        return true;
    case 'b':
        tui_bringup_start(t);
        return true;
    }
    return d->info && tui_table_key(t, &d->ops, ch, su_page(d->table_h));
}

static void model_mouse(tui *t, int y, int x)
{
    (void)x;
    model_data *d = data(t);
    if (d && d->info)
        su_table_click(&d->ops, y, d->table_y, d->table_h);
}

static void model_enter(tui *t)
{
    model_data *d = data(t);
    if (d && strcmp(d->model, t->model)) { /* a model opened elsewhere: its results are gone */
        clear_results(d);
        snprintf(d->model, sizeof d->model, "%s", t->model);
    }
}

/* One input or output: name, dtype, shape. */
static void value_line(tui *t, WINDOW *w, int y, int wd, const json_t *v, int namew)
{
    char shape[256];
    bool known = su_shape(json_object_get(v, "shape"), shape, sizeof shape);
    int x = 2;
    su_put(t, w, y, x, namew, 0, "%s", su_str(v, "name"));
    x += namew + 1;
    su_put(t, w, y, x, 8, 0, "%s", su_str(v, "dtype"));
    x += 9;
    su_put(t, w, y, x, wd - x, known ? 0 : tui_tag_attr(t, VM_TAG_WARN), "%s", shape);
}

static void model_draw(tui *t, WINDOW *w)
{
    model_data *d = data(t);
    int h = getmaxy(w), wd = getmaxx(w), y = 0;
    if (!d)
        return;
    model_enter(t);
    int bold = A_BOLD, dim = tui_tag_attr(t, VM_TAG_DIM);
    if (!t->model[0]) {
        su_put(t, w, 0, 0, wd, bold, "Model");
        su_wrap(t, w, 2, 0, wd, 4, 0,
                "No model open. Press o (or F5) to pick an ONNX file, or start the workbench "
                "as `nanobench MODEL.onnx`.");
        su_wrap(t, w, 5, 0, wd, 6, dim,
                "The bring-up runs the steps on the left in order: Model (info), Estimate, "
                "Quantize (calibration), Compile (atc), Run (simulator), Compare (per-layer "
                "diff), and keeps every run in History.");
        return;
    }
    const char *base = strrchr(t->model, '/');
    base = base ? base + 1 : t->model;
    su_put(t, w, y++, 0, wd, bold, "Model  %s", base);
    su_put(t, w, y++, 0, wd, dim, "%s", t->model);
    bool running = t->job && t->job->step == STEP_MODEL && !t->job->done;
    if (running) {
        su_put(t, w, y + 1, 0, wd, 0, "%s", strcmp(t->job->title, "bringup")
                                                ? "Reading the model (nanobench info)..."
                                                : "Bringing the model up, every step (b)...");
        return;
    }
    if (d->error[0]) {
        su_put(t, w, y + 1, 0, wd, tui_tag_attr(t, VM_TAG_BAD) | A_BOLD, "The model cannot be read:");
        int n = su_wrap(t, w, y + 2, 0, wd, h - y - 5, tui_tag_attr(t, VM_TAG_BAD), d->error);
        su_put(t, w, y + 3 + n, 0, wd, dim, "o: open another model   e: --input_shape   F5: retry");
        return;
    }
    if (!d->info) {
        su_put(t, w, y + 1, 0, wd, 0, "Press F5 to read the model (nanobench info).");
        return;
    }
    const json_t *o = d->info;
    char size[32];
    vm_fmt_bytes(size, sizeof size, su_num(o, "file_bytes"));
    const char *prod = su_str(o, "producer");
    su_put(t, w, y++, 0, wd, 0, "opset %d  ir %d  %s  %s  %d nodes (%d in subgraphs)",
           (int)su_num(o, "opset"), (int)su_num(o, "ir_version"), prod[0] ? prod : "-", size,
           (int)su_num(o, "nodes"), (int)su_num(o, "subgraph_nodes"));
    su_put(t, w, y, 0, wd, 0, "--input_shape ");
    su_put(t, w, y++, 14, wd - 14, t->input_shape[0] ? bold : dim, "%s",
           t->input_shape[0] ? t->input_shape : "(none; e to set)");
    if (d->batch_note[0] && t->input_shape[0])
        y += su_wrap(t, w, y, 2, wd - 2, 2, dim, d->batch_note);
    if (d->dyn_hint[0]) {
        int n = su_wrap(t, w, y, 0, wd, 2, tui_tag_attr(t, VM_TAG_WARN) | A_BOLD, d->dyn_hint);
        y += n;
        su_put(t, w, y++, 2, wd - 2, dim, "e.g. %s", d->suggest);
    }
    const json_t *ins = json_object_get(o, "inputs"), *outs = json_object_get(o, "outputs");
    size_t nin = json_array_size(ins), nout = json_array_size(outs);
    int namew = 10;
    for (size_t i = 0; i < nin + nout; i++) {
        const json_t *v = i < nin ? json_array_get(ins, i) : json_array_get(outs, i - nin);
        int l = (int)strlen(su_str(v, "name"));
        namew = l > namew ? l : namew;
    }
    if (namew > wd / 2)
        namew = wd / 2;
    /* the op table keeps at least 6 rows: inputs and outputs past that are summarized */
    int room = h - y - 2 - 7;
    int show_in = (int)nin, show_out = (int)nout;
    while (show_in + show_out > (room > 2 ? room : 2)) {
        if (show_in >= show_out && show_in > 1)
            show_in--;
        else if (show_out > 1)
            show_out--;
        else
            break;
    }
    for (int k = 0; k < 2; k++) {
        const json_t *vals = k ? outs : ins;
        size_t n = k ? nout : nin;
        int show = k ? show_out : show_in;
        if ((size_t)show < n)
            show--; /* the last line says how many more */
        su_put(t, w, y++, 0, wd, bold, "%s (%zu)", k ? "Outputs" : "Inputs", n);
        for (int i = 0; i < show; i++)
            value_line(t, w, y++, wd, json_array_get(vals, (size_t)i), namew);
        if ((size_t)show < n)
            su_put(t, w, y++, 2, wd - 2, dim, "... %zu more", n - (size_t)show);
    }
    const json_t *warns = json_object_get(o, "warnings"); /* the loader's, as room allows */
    for (size_t i = 0; i < json_array_size(warns) && h - y > 10; i++)
        su_put(t, w, y++, 0, wd, tui_tag_attr(t, VM_TAG_WARN), "warning: %s",
               json_string_value(json_array_get(warns, i)));
    su_put(t, w, y++, 0, wd, bold, "Operators (%d types)", d->ops.nrows);
    d->table_y = y;
    d->table_h = h - y;
    if (d->table_h >= 2) {
        su_fit_cols(&d->ops, 4, wd, 4);
        set_bars(t, d, d->ops.cols[4].width > 60 ? 60 : d->ops.cols[4].width);
        tui_draw_table(t, w, &d->ops, y, 0, d->table_h, wd);
    }
}

static void model_cleanup(tui *t)
{
    model_data *d = t->scr[STEP_MODEL];
    if (!d)
        return;
    json_decref(d->info);
    vm_table_free(&d->ops);
    free(d);
    t->scr[STEP_MODEL] = NULL;
}

static const tui_keyhelp model_help[] = {
    {"o", "open a model (file picker, .onnx only)"},
    {"F5 r", "read the model again (nanobench info --json)"},
    {"e", "edit --input_shape (dynamic dims) and read again"},
    {"b", "bring up: every step in one go (nanobench bringup's engine, in a worker; recorded "
          "as a bringup run, its steps then taken up)"},
    {"table", "operators by count; < > s sort, / search"},
    {NULL, NULL}};

const tui_screen scr_model = {.title = "Model",
                              .enter = model_enter,
                              .draw = model_draw,
                              .key = model_key,
                              .run = model_run,
                              .job_done = model_job_done,
                              .mouse = model_mouse,
                              .help = model_help,
                              .cleanup = model_cleanup};
