/* nanobench TUI: the Run screen. Chooses each model input (a .npy/.bin file, random data,
 * or a sample of the Quantize step's calibration folder), runs the compiled model on the
 * simulated NPU (`nanobench run EXEOM --input NAME=FILE --output-dir WORK/<stem>/run.N --dump
 * WORK/<stem>/acl.json --json --profile`, every task dumped into WORK/<stem>/npu_dump for
 * Compare), and shows what run printed: the outputs (shape, min/max/mean, first values),
 * the per-task cycle profile sorted by cycles with a bar column, the totals at 64 and
 * 200 MHz and the fp16 saturation warning. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "nb/db.h"
#include "scr_util.h"
#include "tui.h"

static bool new_run_dir(tui *t, char *out, size_t len);

#define RUN_MAX_IN 16

typedef enum { IN_NONE, IN_FILE, IN_RANDOM, IN_CALIB } in_kind;

typedef struct run_input {
    char name[128];       /* the ONNX input name, "" when unknown (one input) */
    in_kind kind;
    char file[PATH_MAX];  /* IN_FILE, IN_CALIB */
    unsigned seed;        /* IN_RANDOM */
    int calib_idx, calib_n; /* IN_CALIB: sample calib_idx of calib_n */
    bool eval;            /* IN_CALIB: of the evaluation set (--eval_dir), not the calibration one */
} run_input;

enum { PC_TASK, PC_CYCLES, PC_BAR, PC_COMPUTE, PC_MOVE, PC_MACS, PC_SAT, PC_OP, PC_NAME, PC_N };

typedef struct run_scr {
    int nin, cur;
    run_input in[RUN_MAX_IN];
    char inputs_of[sizeof ((tui *)0)->model_inputs]; /* t->model_inputs the list was made of */
    json_t *res;            /* run --json's result, NULL before a run */
    char warn[1024];        /* the fp16 saturation warning line, "" when none */
    int sat_tasks;          /* tasks with fp16 saturations */
    char err[512];          /* the last run's failure */
    vm_table outs, prof;
    bool prof_init, outs_init, prof_wide;
    int prof_wd;            /* the pane width the profile was built for */
    int page, prof_y, prof_h;
    char acl[PATH_MAX];     /* the dump config written for the last run */
} run_scr;

static run_scr *R(tui *t)
{
    if (!t->scr[STEP_RUN])
        t->scr[STEP_RUN] = calloc(1, sizeof(run_scr));
    return t->scr[STEP_RUN];
}

/* ---- the calibration data folder of the Quantize step ---- */

/* The i-th ';'-separated folder of the calibrate run that made the model (the Quantize
 * step's run, else the newest calibrate run of t->model) into dir: its --eval_dir when it
 * had one (*eval set; data the model was not calibrated on), else its --data_dir; false
 * when none is known. */
static bool calib_dir(tui *t, int i, char *dir, size_t len, bool *eval)
{
    nb_db *db = NULL;
    nb_status st = {0};
    if (nb_db_open(t->db[0] ? t->db : NULL, &db, &st))
        return false;
    int64_t id = t->run_id[STEP_QUANTIZE];
    if (id <= 0 && t->model[0]) {
        nb_run_filter f = {.kind = "calibrate", .model = t->model, .limit = 20};
        nb_run_row *rows = NULL;
        int n = 0;
        if (!nb_db_list(db, &f, &rows, &n, &st))
            for (int k = 0; k < n && id <= 0; k++)
                if (!strcmp(rows[k].status, "ok"))
                    id = rows[k].id;
        nb_run_rows_free(rows, n);
    }
    bool found = false;
    nb_run_row r;
    if (id > 0 && !nb_db_get(db, id, &r, &st)) {
        json_error_t je;
        json_t *p = r.params ? json_loads(r.params, 0, &je) : NULL;
        json_t *av = json_object_get(p, "argv");
        const char *dirs = NULL;
        static const char *const opts[] = {"--eval_dir", "--data_dir"};
        for (int o = 0; o < 2 && !dirs; o++) {
            size_t ol = strlen(opts[o]);
            for (size_t k = 0; k < json_array_size(av) && !dirs; k++) {
                const char *a = json_string_value(json_array_get(av, k));
                if (!a)
                    continue;
                if (!strcmp(a, opts[o]))
                    dirs = json_string_value(json_array_get(av, k + 1));
                else if (!strncmp(a, opts[o], ol) && a[ol] == '=')
                    dirs = a + ol + 1;
            }
            if (eval)
                *eval = dirs && o == 0;
        }
        for (int k = 0; dirs && k < i; k++) {
            dirs = strchr(dirs, ';');
            if (dirs)
                dirs++;
        }
        if (dirs && *dirs && *dirs != ';') {
            size_t n = strcspn(dirs, ";");
            snprintf(dir, len, "%.*s", (int)n, dirs);
            found = true;
        }
        json_decref(p);
        nb_run_row_clear(&r);
    }
    nb_db_close(db);
    return found;
}

/* Sets input i to sample k (wrapping) of its calibration folder; false with the status
 * line set when there is none. */
static bool calib_sample(tui *t, int i, int k)
{
    run_scr *s = R(t);
    char dir[PATH_MAX];
    bool eval = false;
    if (!calib_dir(t, i, dir, sizeof dir, &eval)) {
        tui_status(t, true, "no calibration folder known (run Quantize first): pick a file (f)");
        return false;
    }
    vm_dirent *e = NULL;
    int n = vm_list_dir(dir, NULL, &e);
    if (n < 0) {
        tui_status(t, true, "%s: %s", dir, strerror(errno));
        return false;
    }
    int files = 0;
    for (int j = 0; j < n; j++) {
        size_t l = strlen(e[j].name);
        if (!e[j].dir && l > 4 &&
            (!strcmp(e[j].name + l - 4, ".bin") || !strcmp(e[j].name + l - 4, ".npy")))
            e[files++] = e[j];
    }
    if (!files) {
        free(e);
        tui_status(t, true, "%s: no .bin or .npy files", dir);
        return false;
    }
    k = ((k % files) + files) % files;
    run_input *in = &s->in[i];
    in->kind = IN_CALIB;
    in->eval = eval;
    in->calib_idx = k;
    in->calib_n = files;
    snprintf(in->file, sizeof in->file, "%s/%s", dir, e[k].name);
    free(e);
    return true;
}

/* The input list from t->model_inputs (one unnamed input when unknown); each input starts
 * as the first sample of the evaluation set, else of the calibration set, when Quantize
 * ran. */
static void sync_inputs(tui *t)
{
    run_scr *s = R(t);
    if (s->nin && !strcmp(s->inputs_of, t->model_inputs))
        return;
    snprintf(s->inputs_of, sizeof s->inputs_of, "%s", t->model_inputs);
    memset(s->in, 0, sizeof s->in);
    s->nin = 0;
    s->cur = 0;
    const char *p = t->model_inputs;
    while (*p && s->nin < RUN_MAX_IN) {
        size_t n = strcspn(p, ";");
        if (n)
            snprintf(s->in[s->nin++].name, sizeof s->in[0].name, "%.*s", (int)n, p);
        p += n;
        if (*p)
            p++;
    }
    if (!s->nin)
        s->nin = 1;
    char dir[PATH_MAX];
    for (int i = 0; i < s->nin; i++)
        if (calib_dir(t, i, dir, sizeof dir, NULL))
            calib_sample(t, i, 0);
}

static void input_text(const run_input *in, char *buf, size_t len)
{
    const char *b = strrchr(in->file, '/');
    b = b ? b + 1 : in->file;
    switch (in->kind) {
    case IN_NONE:
        snprintf(buf, len, "(not set: f file, a random, c a sample of Quantize's data)");
        break;
    case IN_FILE:
        snprintf(buf, len, "%s", in->file);
        break;
    case IN_RANDOM:
        snprintf(buf, len, "random, seed %u", in->seed);
        break;
    case IN_CALIB:
        snprintf(buf, len, "%s sample %d/%d: %s", in->eval ? "evaluation" : "calibration",
                 in->calib_idx + 1, in->calib_n, b);
        break;
    }
}

/* The --input value of input i: NAME=FILE, NAME=random:SEED (FILE alone for one unnamed
 * input). */
static void input_arg(const run_input *in, char *buf, size_t len)
{
    char v[PATH_MAX + 32];
    if (in->kind == IN_RANDOM)
        snprintf(v, sizeof v, "random:%u", in->seed);
    else
        snprintf(v, sizeof v, "%s", in->file);
    if (in->name[0])
        snprintf(buf, len, "%s=%s", in->name, v);
    else
        snprintf(buf, len, "%s", v);
}

/* ---- the tables ---- */

static void outs_build(run_scr *s)
{
    static const char *const titles[] = {"output", "shape", "min", "max", "mean", "first values"};
    static const int widths[] = {14, 12, 9, 9, 9, 30};
    static const bool numeric[] = {false, false, true, true, true, false};
    if (!s->outs_init) {
        vm_table_init(&s->outs, 6, titles, widths, numeric);
        s->outs.cols[0].keep_tail = true;
        s->outs_init = true;
    }
    vm_table_clear(&s->outs);
    json_t *outs = json_object_get(s->res, "outputs");
    size_t i;
    json_t *o;
    json_array_foreach(outs, i, o) {
        char shape[128], mn[24], mx[24], mean[24], first[512] = "";
        json_t *sh = json_object_get(o, "shape");
        if (json_is_string(sh))
            snprintf(shape, sizeof shape, "%s", json_string_value(sh));
        else
            su_shape(sh, shape, sizeof shape);
        vm_fmt_num(mn, sizeof mn, su_num(o, "min"), 9);
        vm_fmt_num(mx, sizeof mx, su_num(o, "max"), 9);
        vm_fmt_num(mean, sizeof mean, su_num(o, "mean"), 9);
        size_t k;
        json_t *v;
        size_t at = 0;
        json_array_foreach(json_object_get(o, "first"), k, v) {
            char num[24];
            vm_fmt_num(num, sizeof num, json_number_value(v), 8);
            at += (size_t)snprintf(first + at, sizeof first - at, "%s%s", k ? " " : "", num);
            if (at >= sizeof first)
                break;
        }
        const char *cells[] = {su_str(o, "name"), shape, mn, mx, mean, first};
        double nums[] = {NAN, NAN, su_num(o, "min"), su_num(o, "max"), su_num(o, "mean"), NAN};
        vm_table_add(&s->outs, cells, nums, VM_TAG_NONE);
    }
}

/* (Re)builds the profile table for the pane width: the narrow one has task, cycles, bar,
 * op and name; the wide one adds compute, movement, MACs and saturations. Keeps the sort
 * column (by title) and the selected task. */
static void prof_build(tui *t, run_scr *s, int width)
{
    bool wide = width >= 110;
    s->prof_wd = width;
    char sort_title[24] = "cycles";
    bool desc = true;
    double sel_task = NAN;
    if (s->prof_init) {
        if (s->prof.sort_col >= 0)
            snprintf(sort_title, sizeof sort_title, "%s", s->prof.cols[s->prof.sort_col].title);
        else
            sort_title[0] = 0;
        desc = s->prof.sort_desc;
        if (s->prof.sel >= 0 && s->prof.nrows)
            sel_task = s->prof.nums[(size_t)vm_table_row_of(&s->prof, s->prof.sel) *
                                    (size_t)s->prof.ncols];
        vm_table_free(&s->prof);
    }
    int barw = wide ? 20 : 10;
    const char *titles[PC_N];
    int widths[PC_N];
    bool numeric[PC_N];
    int col[PC_N], nc = 0;
    static const char *const all_t[PC_N] = {"task", "cycles", "", "compute", "movement",
                                            "MACs", "fp16 sat", "op", "name"};
    static const int all_w[PC_N] = {4, 9, 0, 9, 9, 10, 8, 14, 30};
    static const bool all_n[PC_N] = {true, true, false, true, true, true, true, false, false};
    for (int c = 0; c < PC_N; c++) {
        if (!wide && (c == PC_COMPUTE || c == PC_MOVE || c == PC_MACS || c == PC_SAT)) {
            col[c] = -1;
            continue;
        }
        col[c] = nc;
        titles[nc] = all_t[c];
        widths[nc] = c == PC_BAR ? barw : all_w[c];
        numeric[nc] = all_n[c];
        nc++;
    }
    vm_table_init(&s->prof, nc, titles, widths, numeric);
    s->prof.cols[col[PC_NAME]].keep_tail = true;
    s->prof_init = true;
    s->prof_wide = wide;
    su_fit_cols(&s->prof, nc - 1, width, 12);
    json_t *tasks = json_object_get(s->res, "tasks");
    double maxc = 0;
    size_t i;
    json_t *o;
    json_array_foreach(tasks, i, o) {
        double c = su_num(o, "cycles");
        if (c > maxc)
            maxc = c;
    }
    size_t prefix = 0;
    const char **names = malloc(sizeof(char *) * (json_array_size(tasks) + 1));
    if (names) {
        json_array_foreach(tasks, i, o)
            names[i] = su_str(o, "name");
        prefix = su_common_prefix(names, (int)json_array_size(tasks));
        free(names);
    }
    const char *block = t->utf8 ? "\xe2\x96\x88" : "#";
    json_array_foreach(tasks, i, o) {
        double v[PC_N] = {su_num(o, "index"), su_num(o, "cycles"), su_num(o, "cycles"),
                          su_num(o, "compute"), su_num(o, "movement"), su_num(o, "macs"),
                          su_num(o, "saturations"), NAN, NAN};
        if (isnan(v[PC_TASK]))
            v[PC_TASK] = (double)i;
        char txt[PC_N][64];
        for (int c = 0; c < PC_N; c++)
            if (isnan(v[c]))
                snprintf(txt[c], sizeof txt[c], "-");
            else
                snprintf(txt[c], sizeof txt[c], "%.0f", v[c]);
        char bar[20 * 3 + 1] = "";
        int bl = isnan(v[PC_CYCLES]) ? 0 : vm_bar_len(v[PC_CYCLES], maxc, barw);
        for (int k = 0; k < bl; k++)
            strcat(bar, block);
        char shortname[1024];
        const char *tname = su_str(o, "name");
        if (!wide) /* without the shared prefix and a last component that repeats the op */
            tname = su_short_name(tname, prefix, su_str(o, "op_type"), shortname,
                                  sizeof shortname);
        const char *cells[PC_N];
        double nums[PC_N];
        for (int c = 0; c < PC_N; c++) {
            if (col[c] < 0)
                continue;
            cells[col[c]] = c == PC_BAR ? bar : c == PC_OP ? su_str(o, "op_type")
                            : c == PC_NAME ? tname : txt[c];
            nums[col[c]] = v[c];
        }
        bool sat = v[PC_SAT] > 0;
        vm_table_add(&s->prof, cells, nums, sat ? VM_TAG_WARN : VM_TAG_NONE);
    }
    int sc = -1;
    for (int c = 0; c < nc && sort_title[0]; c++)
        if (!strcmp(s->prof.cols[c].title, sort_title))
            sc = c;
    vm_table_sort(&s->prof, sc, desc);
    if (!isnan(sel_task))
        for (int p = 0; p < s->prof.nrows; p++)
            if (s->prof.nums[(size_t)vm_table_row_of(&s->prof, p) * (size_t)nc] == sel_task)
                vm_table_select(&s->prof, p, s->page > 0 ? s->page : 10);
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

/* ---- the screen ---- */

static void enter(tui *t)
{
    run_scr *s = R(t);
    if (!s)
        return;
    sync_inputs(t);
    /* an input not chosen yet takes the first evaluation (else calibration) sample once
       Quantize has run */
    char dir[PATH_MAX];
    for (int i = 0; i < s->nin; i++)
        if (s->in[i].kind == IN_NONE && calib_dir(t, i, dir, sizeof dir, NULL))
            calib_sample(t, i, 0);
}

static void draw(tui *t, WINDOW *w)
{
    run_scr *s = R(t);
    if (!s)
        return;
    sync_inputs(t);
    int h, wd;
    getmaxyx(w, h, wd);
    int y = 0;
    int dim = tui_tag_attr(t, VM_TAG_DIM);
    if (!t->exeom[0]) {
        su_put(t, w, y++, 0, wd, A_BOLD, "Run: no compiled model yet");
        su_wrap(t, w, y + 1, 0, wd, 4, 0,
                "Compile the model first (Compile step), or press o to open an existing "
                ".exeom. F5 then runs it on the simulated NPU with the inputs chosen here.");
        return;
    }
    char stem[256];
    su_stem(t->exeom, NULL, stem, sizeof stem);
    su_put(t, w, y++, 0, wd, A_BOLD, "Run %s", stem);
    for (int i = 0; i < s->nin && y < h; i++) {
        char txt[PATH_MAX + 64];
        input_text(&s->in[i], txt, sizeof txt);
        int attr = s->in[i].kind == IN_NONE ? tui_tag_attr(t, VM_TAG_WARN) : 0;
        const char *mark = s->nin > 1 && i == s->cur ? ">" : " ";
        int c = su_put(t, w, y, 0, wd, A_BOLD, "%s%s", mark, s->in[i].name[0] ? s->in[i].name
                                                                                : "input");
        su_put(t, w, y++, c, wd - c, attr, " = %s", txt);
    }
    if (s->err[0]) {
        y += su_wrap(t, w, y, 0, wd, 3, tui_tag_attr(t, VM_TAG_BAD), s->err);
    }
    if (!s->res) {
        if (!s->err[0] && t->run_id[STEP_RUN] > 0 &&
            (t->state[STEP_RUN] == ST_OK || t->state[STEP_RUN] == ST_WARN)) {
            char line[160];
            snprintf(line, sizeof line, t->npu_dump[0]
                                            ? "Run %lld of an earlier session: its NPU dump is "
                                              "what Compare takes until F5 runs again."
                                            : "Run %lld of an earlier session (its dump is gone).",
                     (long long)t->run_id[STEP_RUN]);
            y += 1 + su_wrap(t, w, y + 1, 0, wd, 2, 0, line);
        }
        if (!s->err[0])
            su_wrap(t, w, y + 1, 0, wd, 4, dim,
                    "F5 runs the model on the simulated NPU (every task dumped for Compare). "
                    "f: an input file, a: random data, c: the next sample of Quantize's "
                    "evaluation (else calibration) data, "
                    "o: another .exeom.");
        return;
    }
    /* outputs */
    int nout = s->outs.nrows;
    int oh = 1 + (nout < 3 ? nout : 3);
    if (h - y > 8 || nout <= 1) {
        if (s->outs.ncols)
            su_fit_cols(&s->outs, s->outs.ncols - 1, wd, 10);
        tui_draw_table(t, w, &s->outs, y, 0, oh, wd);
        y += oh;
        if (nout > 3)
            su_put(t, w, y++, 0, wd, dim, "(%d more outputs: Enter shows all)", nout - 3);
    }
    /* totals */
    char m64[32], m200[32];
    vm_fmt_ms(m64, sizeof m64, su_num(s->res, "ms_64mhz"));
    vm_fmt_ms(m200, sizeof m200, su_num(s->res, "ms_200mhz"));
    su_put(t, w, y++, 0, wd, A_BOLD, "NPU %.0f cycles: %s at 64 MHz, %s at 200 MHz, %zu tasks",
           su_num(s->res, "cycles"), m64, m200, json_array_size(json_object_get(s->res, "tasks")));
    if (s->warn[0])
        y += su_wrap(t, w, y, 0, wd, h - y > 12 ? 3 : 1, tui_tag_attr(t, VM_TAG_WARN), s->warn);
    /* the profile */
    if (!s->prof_init || s->prof_wd != wd)
        prof_build(t, s, wd);
    su_fit_cols(&s->prof, s->prof.ncols - 1, wd, 12);
    s->prof_y = y;
    s->prof_h = h - y;
    s->page = su_page(s->prof_h);
    clamp_top(&s->prof, s->page);
    if (s->prof_h >= 2)
        tui_draw_table(t, w, &s->prof, y, 0, s->prof_h, wd);
}

static void write_acl_json(tui *t, const char *path, const char *dump_dir, char *err,
                           size_t errlen)
{
    char stem[256];
    su_stem(t->exeom, ".exeom", stem, sizeof stem);
    json_t *entry = json_object();
    json_object_set_new(entry, "model_name", nb_json_string(stem));
    json_t *list = json_array();
    json_array_append_new(list, entry);
    json_t *d = json_object();
    json_object_set_new(d, "dump_list", list);
    json_object_set_new(d, "dump_path", nb_json_string(dump_dir));
    json_object_set_new(d, "dump_mode", json_string("output"));
    json_object_set_new(d, "dump_op_switch", json_string("off"));
    json_object_set_new(d, "dump_data", json_string("tensor"));
    json_t *root = json_object();
    json_object_set_new(root, "dump", d);
    nb_status st = {0};
    if (nb_json_write_atomic(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &st))
        snprintf(err, errlen, "cannot write the dump config: %s", st.msg);
    json_decref(root);
}

static void run(tui *t)
{
    run_scr *s = R(t);
    if (!s)
        return;
    sync_inputs(t);
    if (!t->exeom[0]) {
        tui_status(t, true, "no compiled model: run Compile first, or o to open an .exeom");
        return;
    }
    for (int i = 0; i < s->nin; i++)
        if (s->in[i].kind == IN_NONE) {
            tui_status(t, true, "input %s not chosen: f file, a random, c a data sample",
                       s->in[i].name[0] ? s->in[i].name : "0");
            return;
        }
    char outdir[PATH_MAX] = "", dumpdir[PATH_MAX] = "";
    if (!new_run_dir(t, outdir, sizeof outdir) ||
        !tui_workdir(t, "npu_dump", dumpdir, sizeof dumpdir) || !dumpdir[0]) {
        tui_status(t, true, "no work folder for this model");
        return;
    }
    /* WORK/<stem>/acl.json, next to run.N/ */
    char *slash = strrchr(outdir, '/');
    snprintf(s->acl, sizeof s->acl, "%.*s/acl.json", slash ? (int)(slash - outdir) : 1,
             slash ? outdir : ".");
    char err[512] = "";
    write_acl_json(t, s->acl, dumpdir, err, sizeof err);
    if (err[0]) {
        tui_status(t, true, "%s", err);
        tui_set_state(t, STEP_RUN, ST_FAILED, "dump config");
        return;
    }
    su_argv a = {0};
    su_arg(&a, "run");
    su_arg(&a, "%s", t->exeom);
    for (int i = 0; i < s->nin; i++) {
        char v[PATH_MAX + 160];
        input_arg(&s->in[i], v, sizeof v);
        su_arg(&a, "--input");
        su_arg(&a, "%s", v);
    }
    su_arg(&a, "--output-dir");
    su_arg(&a, "%s", outdir);
    su_arg(&a, "--dump");
    su_arg(&a, "%s", s->acl);
    su_arg(&a, "--profile");
    su_arg(&a, "--json");
    if (a.oom) {
        tui_status(t, true, "out of memory");
        su_argv_free(&a);
        return;
    }
    s->err[0] = 0;
    if (tui_run(t, STEP_RUN, su_parent(t, STEP_RUN), a.v, "run"))
        tui_set_state(t, STEP_RUN, ST_RUNNING, "running");
    su_argv_free(&a);
}

/* A new output folder for one run, WORK/<stem>/run.N (N from 1, the first not there, made
   here: mkdir fails on one that exists, so two sessions never share one): a recorded run's
   outputs are never replaced by the next run's (issue 38: every run wrote run/). False with
   the reason on the status line. */
static bool new_run_dir(tui *t, char *out, size_t len)
{
    char base[PATH_MAX] = "";
    if (!tui_workdir(t, NULL, base, sizeof base) || !base[0])
        return false;
    for (int n = 1; n < 100000; n++) {
        snprintf(out, len, "%s/run.%d", base, n);
        if (mkdir(out, 0777) == 0)
            return true;
        if (errno != EEXIST) {
            tui_status(t, true, "cannot make %s: %s", out, strerror(errno));
            return false;
        }
    }
    tui_status(t, true, "no free run.N folder in %s", base);
    return false;
}

/* The fp16 saturation warning run printed on stderr, without "nanobench: warning: ". */
static void find_warning(run_scr *s, const char *err)
{
    s->warn[0] = 0;
    const char *p = err ? strstr(err, "fp16 saturation") : NULL;
    if (!p)
        return;
    const char *e = strchr(p, '\n');
    snprintf(s->warn, sizeof s->warn, "warning: %.*s", e ? (int)(e - p) : (int)strlen(p), p);
}

static void job_done(tui *t, tui_job *j)
{
    run_scr *s = R(t);
    if (!s)
        return;
    char err[512] = "";
    json_t *o = su_job_json(j, err, sizeof err);
    if (!o) {
        snprintf(s->err, sizeof s->err, "run failed: %s", err);
        /* no results, no dump: Compare must not pair this run with an older dump */
        json_decref(s->res);
        s->res = NULL;
        s->warn[0] = 0;
        t->npu_dump[0] = 0;
        if (j->cancelled) { /* not a failure: not run, as Quantize shows it */
            snprintf(s->err, sizeof s->err, "run cancelled");
            tui_status(t, false, "run cancelled: its partial outputs were removed");
            tui_set_state(t, STEP_RUN, ST_NOT_RUN, "cancelled");
            return;
        }
        tui_status(t, true, "run: %s", err);
        tui_set_state(t, STEP_RUN, ST_FAILED, "failed");
        return;
    }
    json_decref(s->res);
    s->res = o;
    s->err[0] = 0;
    if (j->run_id > 0)
        t->run_id[STEP_RUN] = j->run_id;
    find_warning(s, j->err);
    outs_build(s);
    prof_build(t, s, t->main ? getmaxx(t->main) : 80);
    vm_table_select(&s->prof, 0, s->page > 0 ? s->page : 10);
    /* what Compare needs: the input, the dump folder of this run */
    const run_input *in0 = &s->in[0];
    if (in0->kind == IN_RANDOM)
        t->run_input[0] = 0;
    else
        snprintf(t->run_input, sizeof t->run_input, "%s", in0->file);
    const char *dump = su_str(json_object_get(o, "dump"), "folder");
    if (*dump)
        snprintf(t->npu_dump, sizeof t->npu_dump, "%s", dump);
    else if (!su_db_artifact(t, j->run_id, "dump", t->npu_dump, sizeof t->npu_dump))
        t->npu_dump[0] = 0;
    s->sat_tasks = (int)json_array_size(json_object_get(json_object_get(o, "saturation"), "tasks"));
    char note[96], m64[32];
    vm_fmt_ms(m64, sizeof m64, su_num(o, "ms_64mhz"));
    if (s->sat_tasks || s->warn[0]) {
        snprintf(note, sizeof note, "%d saturated", s->sat_tasks);
        tui_set_state(t, STEP_RUN, ST_WARN, note);
        tui_status(t, false, "run: %s at 64 MHz; fp16 saturation in %d task%s", m64,
                   s->sat_tasks, s->sat_tasks == 1 ? "" : "s");
    } else {
        snprintf(note, sizeof note, "%s", m64);
        tui_set_state(t, STEP_RUN, ST_OK, note);
        tui_status(t, false, "run: %s at 64 MHz%s", m64,
                   t->npu_dump[0] ? "; Compare is next (every task dumped)" : "");
    }
    /* an earlier comparison is of another run now */
    if (t->state[STEP_COMPARE] != ST_NOT_RUN && t->state[STEP_COMPARE] != ST_RUNNING)
        tui_set_state(t, STEP_COMPARE, ST_NOT_RUN, "new run");
}

static void show_outputs(tui *t)
{
    run_scr *s = R(t);
    if (!s->res) {
        tui_status(t, false, "no run yet: F5 runs");
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(s->res, "outputs"), i, o) {
        char shape[128];
        json_t *sh = json_object_get(o, "shape");
        if (json_is_string(sh))
            snprintf(shape, sizeof shape, "%s", json_string_value(sh));
        else
            su_shape(sh, shape, sizeof shape);
        fprintf(f, "%s %s %s\n  file %s\n  min %.6g  max %.6g  mean %.6g\n  first:",
                su_str(o, "name"), shape, su_str(o, "dtype"), su_str(o, "file"),
                su_num(o, "min"), su_num(o, "max"), su_num(o, "mean"));
        size_t k;
        json_t *v;
        json_array_foreach(json_object_get(o, "first"), k, v)
            fprintf(f, "%s%.6g", k % 8 == 0 ? "\n   " : " ", json_number_value(v));
        fprintf(f, "\n\n");
    }
    fprintf(f, "inputs\n");
    for (int k = 0; k < s->nin; k++) {
        char v[PATH_MAX + 64];
        input_text(&s->in[k], v, sizeof v);
        fprintf(f, "  %s = %s\n", s->in[k].name[0] ? s->in[k].name : "input", v);
    }
    if (t->npu_dump[0])
        fprintf(f, "\nNPU dump: %s\n", t->npu_dump);
    if (s->warn[0])
        fprintf(f, "\n%s\n", s->warn);
    fclose(f);
    tui_show_text(t, "Run: outputs", text ? text : "");
    free(text);
}

static bool key(tui *t, int ch)
{
    run_scr *s = R(t);
    if (!s)
        return false;
    sync_inputs(t);
    run_input *in = &s->in[s->cur];
    switch (ch) {
    case 'o': {
        char start[PATH_MAX] = "", path[PATH_MAX] = "";
        if (t->exeom[0]) {
            snprintf(start, sizeof start, "%s", t->exeom);
            char *sl = strrchr(start, '/');
            if (sl)
                *sl = 0;
        } else if (!getcwd(start, sizeof start)) {
            snprintf(start, sizeof start, ".");
        }
        if (tui_pick_file(t, "Open a compiled model (.exeom)", start, ".exeom", false, path,
                          sizeof path)) {
            snprintf(t->exeom, sizeof t->exeom, "%s", path);
            json_decref(s->res);
            s->res = NULL;
            s->err[0] = 0;
            tui_set_state(t, STEP_RUN, ST_NOT_RUN, "");
            char stem[256];
            tui_status(t, false, "%s: F5 runs it", su_stem(path, NULL, stem, sizeof stem));
        }
        return true;
    }
    case 'f': {
        char start[PATH_MAX] = "", path[PATH_MAX] = "";
        if (in->kind == IN_FILE || in->kind == IN_CALIB) {
            snprintf(start, sizeof start, "%s", in->file);
            char *sl = strrchr(start, '/');
            if (sl)
                *sl = 0;
        } else if (!getcwd(start, sizeof start)) {
            snprintf(start, sizeof start, ".");
        }
        if (tui_pick_file(t, "Input data (.npy or raw float32 .bin)", start, NULL, false, path,
                          sizeof path)) {
            in->kind = IN_FILE;
            snprintf(in->file, sizeof in->file, "%s", path);
        }
        return true;
    }
    case 'a':
        if (in->kind == IN_RANDOM)
            in->seed++;
        else
            in->kind = IN_RANDOM;
        return true;
    case 'c':
        calib_sample(t, s->cur, in->kind == IN_CALIB ? in->calib_idx + 1 : 0);
        return true;
    case 'C':
        calib_sample(t, s->cur, in->kind == IN_CALIB ? in->calib_idx - 1 : 0);
        return true;
    case '\t':
        return false;
    case '+':
    case ']':
        if (s->nin > 1)
            s->cur = (s->cur + 1) % s->nin;
        return true;
    case '-':
    case '[':
        if (s->nin > 1)
            s->cur = (s->cur + s->nin - 1) % s->nin;
        return true;
    case '\n':
    case '\r':
    case KEY_ENTER:
        show_outputs(t);
        return true;
    case 'w': /* the next task with fp16 saturations, in display order */
        if (s->prof_init) {
            for (int k = 1; k <= s->prof.nrows; k++) {
                int p = (s->prof.sel + k) % s->prof.nrows;
                if (s->prof.tags[vm_table_row_of(&s->prof, p)] == VM_TAG_WARN) {
                    vm_table_select(&s->prof, p, s->page > 0 ? s->page : 10);
                    break;
                }
            }
        }
        return true;
    }
    if (!s->prof_init)
        return false;
    return tui_table_key(t, &s->prof, ch, s->page > 0 ? s->page : 10);
}

static void mouse(tui *t, int y, int x)
{
    (void)x;
    run_scr *s = R(t);
    if (!s)
        return;
    int first_in = 1;
    if (y >= first_in && y < first_in + s->nin) {
        s->cur = y - first_in;
        return;
    }
    if (s->prof_init && s->prof_h >= 2)
        su_table_click(&s->prof, y, s->prof_y, s->prof_h);
}

static void cleanup(tui *t)
{
    run_scr *s = t->scr[STEP_RUN];
    if (!s)
        return;
    json_decref(s->res);
    if (s->prof_init)
        vm_table_free(&s->prof);
    if (s->outs_init)
        vm_table_free(&s->outs);
    free(s);
    t->scr[STEP_RUN] = NULL;
}

static const tui_keyhelp help[] = {
    {"F5, r", "run the compiled model on the simulated NPU (dumps every task)"},
    {"f", "input: a .npy or raw float32 .bin file (file picker)"},
    {"a", "input: random data (again: the next seed)"},
    {"c, C", "input: the next / previous sample of Quantize's evaluation folder (else its "
             "calibration folder)"},
    {"[ ] + -", "the input to set (models with several inputs)"},
    {"o", "open another compiled model (.exeom)"},
    {"Enter", "all outputs with their first values"},
    {"w", "the next task with fp16 saturations"},
    {"arrows j k PgUp PgDn", "move in the cycle profile"},
    {"< > s", "sort the profile by another column, reverse"},
    {"/ n N", "search the profile, next, previous"},
    {NULL, NULL},
};

const tui_screen scr_run = {
    .title = "Run",
    .enter = enter,
    .draw = draw,
    .key = key,
    .run = run,
    .job_done = job_done,
    .mouse = mouse,
    .help = help,
    .cleanup = cleanup,
};
