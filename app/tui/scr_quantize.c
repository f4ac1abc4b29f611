/* nanobench TUI: the Quantize screen. A form for calibration (data folders, data types,
 * config file or batch_num, algorithm, evaluation folders), then `nanobench calibrate
 * --model M --save_path WORK/<stem>/quant/<stem> --data_dir D ... --json --progress` with a
 * progress bar (batches, rate, ETA; Esc cancels and the CLI removes its partial files),
 * then the per-layer table worst first and the network output's SQNR and cosine. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nb/ir.h"
#include "nb/quant.h"
#include "scr_util.h"

/* SQNR and cosine next to the name: they stay visible in a narrow pane */
enum { C_LAYER, C_SQNR, C_COS, C_OP, C_ALGO, C_CMIN, C_CMAX, C_SCALE, C_OFFSET, C_ASQNR,
       C_WSQNR, C_N };

/* SQNR colouring: under WARN_DB dB yellow, under BAD_DB dB red */
#define WARN_DB 20.0
#define BAD_DB 10.0

typedef struct q_data {
    char model[PATH_MAX];   /* the model the results belong to */
    /* the form */
    char data_dir[2048], data_types[256], config[PATH_MAX], batch_num[16], algo[16];
    char eval_dir[2048];
    char save[PATH_MAX];    /* --save_path of the last run */
    json_t *res;            /* calibrate --json, NULL before it ran */
    vm_table layers;
    char error[1024];
    int table_y, table_h;
    char phase[32];         /* the progress phase seen last ("calibrate", "evaluate") */
    double phase_t0;        /* when it began (monotonic s): its rate and ETA */
    int64_t last_done;      /* the last batch count seen, and when it changed */
    double last_change;
} q_data;

static q_data *data(tui *t)
{
    q_data *d = t->scr[STEP_QUANTIZE];
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return NULL;
        static const char *const titles[C_N] = {"layer", "SQNR dB", "cosine", "op", "algo",
                                                "clip min", "clip max", "scale", "offset",
                                                "act SQNR", "wts SQNR"};
        static const int widths[C_N] = {24, 9, 8, 8, 6, 9, 9, 9, 6, 8, 8};
        static const bool numeric[C_N] = {false, true, true, false, false, true, true, true,
                                          true, true, true};
        vm_table_init(&d->layers, C_N, titles, widths, numeric);
        d->layers.cols[C_LAYER].keep_tail = true;
        t->scr[STEP_QUANTIZE] = d;
    }
    return d;
}

static void clear_results(q_data *d)
{
    json_decref(d->res);
    d->res = NULL;
    vm_table_clear(&d->layers);
    d->error[0] = 0;
}

/* The form's fields from a recorded calibrate run's argv (an earlier session's). */
static void settings_of(tui *t, q_data *d, int64_t id)
{
    nb_db *db = NULL;
    nb_status st = {0};
    nb_run_row r;
    if (nb_db_open(t->db[0] ? t->db : NULL, &db, &st))
        return;
    if (!nb_db_get(db, id, &r, &st)) {
        json_error_t je;
        json_t *p = r.params ? json_loads(r.params, 0, &je) : NULL;
        struct {
            const char *opt;
            char *v;
            size_t len;
        } f[] = {{"--data_dir", d->data_dir, sizeof d->data_dir},
                 {"--data_types", d->data_types, sizeof d->data_types},
                 {"--calibration_config", d->config, sizeof d->config},
                 {"--batch_num", d->batch_num, sizeof d->batch_num},
                 {"--algo", d->algo, sizeof d->algo},
                 {"--eval_dir", d->eval_dir, sizeof d->eval_dir},
                 {"--save_path", d->save, sizeof d->save}};
        for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
            const char *v = su_argv_opt(p, f[k].opt);
            snprintf(f[k].v, f[k].len, "%s", v ? v : "");
        }
        json_decref(p);
        nb_run_row_clear(&r);
    }
    nb_db_close(db);
}

static void q_enter(tui *t)
{
    q_data *d = data(t);
    if (d && strcmp(d->model, t->model)) { /* another model: its settings and results go */
        clear_results(d);
        d->data_dir[0] = d->data_types[0] = d->config[0] = d->batch_num[0] = 0;
        d->algo[0] = d->eval_dir[0] = d->save[0] = 0;
        snprintf(d->model, sizeof d->model, "%s", t->model);
        if (t->run_id[STEP_QUANTIZE] > 0) /* taken up from an earlier session */
            settings_of(t, d, t->run_id[STEP_QUANTIZE]);
    }
}

/* Every ';'-separated folder of list exists: false with the status line set. */
/* The form's checks (tui_field.check): a bad value keeps the form open on its field with
   the reason beside it (issue 38: a bad algorithm closed the form) */
static bool dirs_ok(const char *list, bool empty_ok, char *err, size_t len)
{
    if (!list[0]) {
        if (!empty_ok)
            snprintf(err, len, "calibration needs data: give a data folder per input");
        return empty_ok;
    }
    char copy[2048], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save))
        if (access(p, R_OK | X_OK)) {
            snprintf(err, len, "cannot read the folder %s", p);
            return false;
        }
    return true;
}

static bool check_data(const char *v, char *err, size_t len)
{
    return dirs_ok(v, false, err, len);
}

static bool check_eval(const char *v, char *err, size_t len)
{
    return dirs_ok(v, true, err, len);
}

static bool check_config(const char *v, char *err, size_t len)
{
    if (v[0] && access(v, R_OK)) {
        snprintf(err, len, "cannot read the config file %s", v);
        return false;
    }
    return true;
}

static bool check_batch(const char *v, char *err, size_t len)
{
    if (!v[0] || !strcmp(v, "all")) /* all: calibrate counts the files */
        return true;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1) {
        snprintf(err, len, "batch_num is a whole number from 1 or all, not '%s'", v);
        return false;
    }
    return true;
}

static bool check_algo(const char *v, char *err, size_t len)
{
    static const char *const algos[] = {"ifmr", "hfmg", "minmax", "percentile", "kl", "auto"};
    bool ok = !v[0];
    for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++)
        ok |= !strcmp(v, algos[k]);
    if (!ok)
        snprintf(err, len, "algorithm is ifmr, hfmg, minmax, percentile, kl or auto, not '%s'", v);
    return ok;
}

/* Whether the open model is a Q/DQ (QAT) one: calibrate refuses those, --from_qdq imports. */
static bool qdq_model(tui *t)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = t->input_shape[0] ? t->input_shape : NULL,
                       .weights_in_place = true};
    if (nb_model_load(t->model, &lo, &m, &st))
        return false; /* calibrate names the problem */
    bool q = nb_graph_has_qdq(m->graph);
    nb_model_free(m);
    return q;
}

static void q_run(tui *t)
{
    q_data *d = data(t);
    if (!d)
        return;
    if (!t->model[0]) {
        tui_status(t, true, "no model open: open one on the Model step first (o)");
        return;
    }
    q_enter(t);
    bool qat = qdq_model(t); /* a QAT export carries its scales: imported, no form, no data */
    if (qat)
        goto start;
    if (!d->batch_num[0] && !d->config[0])
        snprintf(d->batch_num, sizeof d->batch_num, "all");
    char ninputs[600];
    snprintf(ninputs, sizeof ninputs,
             "One folder per model input, ';'-separated, in input order%s%s%s: each holds that "
             "input's batches, one .bin (raw, the input's shape and type) or .npy per batch, "
             "taken in name order.",
             t->model_inputs[0] ? " (" : "", t->model_inputs, t->model_inputs[0] ? ")" : "");
    tui_field f[] = {
        {"Data folder(s)", d->data_dir, sizeof d->data_dir, ninputs, check_data},
        {"Data types", d->data_types, sizeof d->data_types,
         "One per input, ';'-separated (float32, float16, int8, ...); empty: float32 for "
         "every input.", NULL},
        {"Config/overrides", d->config, sizeof d->config,
         "AMCT's calibration config (protobuf text): batch_num, activation_offset, "
         "skip_layers, and per-layer overrides (override_layer_types / "
         "override_layer_configs). Empty: AMCT's defaults with the batch_num below.", check_config},
        {"batch_num", d->batch_num, sizeof d->batch_num,
         "Batches to calibrate on: all (every file, as bringup does; calibrate counts "
         "them) or a number (AMCT's default is 1); leave empty when the config file sets "
         "it: a config file and batch_num together are refused.", check_batch},
        {"Algorithm", d->algo, sizeof d->algo,
         "Activation algorithm: ifmr, hfmg, minmax, percentile, kl, or auto (per layer, the "
         "best activation SQNR). Empty: the config's (ifmr by default).", check_algo},
        {"Eval folder(s)", d->eval_dir, sizeof d->eval_dir,
         "Optional: a separate evaluation set, one folder per input as the data folders. "
         "Empty: the first calibration batches.", check_eval},
    };
    if (!tui_form(t, "Quantize: calibration (AMCT flags)", f, (int)(sizeof f / sizeof f[0])))
        return;
    /* each field checked in the form; what needs two of them here, the step marked failed
       on the sidebar (issue 38) */
    if (d->config[0] && d->batch_num[0]) {
        tui_status(t, true, "give a config file or batch_num, not both (the config sets "
                   "batch_num)");
        tui_set_state(t, STEP_QUANTIZE, ST_FAILED, "bad input");
        return;
    }
start:;
    char dir[PATH_MAX], stem[256];
    if (!tui_workdir(t, "quant", dir, sizeof dir) || !dir[0]) {
        tui_status(t, true, "cannot make the work folder for the quantized model");
        return;
    }
    snprintf(d->save, sizeof d->save, "%s/%s", dir, tui_stem(t, stem, sizeof stem));
    su_argv a = {0};
    su_arg(&a, "calibrate");
    su_arg(&a, qat ? "--from_qdq" : "--model");
    su_arg(&a, "%s", t->model);
    su_arg(&a, "--save_path");
    su_arg(&a, "%s", d->save);
    if (qat)
        goto flags_done;
    su_arg(&a, "--data_dir");
    su_arg(&a, "%s", d->data_dir);
    const char *opt[][2] = {{"--input_shape", t->input_shape},
                            {"--data_types", d->data_types},
                            {"--calibration_config", d->config},
                            {"--batch_num", d->batch_num},
                            {"--algo", d->algo},
                            {"--eval_dir", d->eval_dir}};
    for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++)
        if (opt[k][1][0]) {
            su_arg(&a, "%s", opt[k][0]);
            su_arg(&a, "%s", opt[k][1]);
        }
    su_arg(&a, "--progress");
flags_done:
    su_arg(&a, "--json");
    if (a.oom) {
        tui_status(t, true, "out of memory");
    } else if (tui_run(t, STEP_QUANTIZE, su_parent(t, STEP_QUANTIZE), a.v, "calibrate")) {
        clear_results(d);
        t->deploy_model[0] = 0;
        d->phase[0] = 0; /* the progress clock */
        d->last_done = -1;
        if (qat)
            tui_status(t, false, "a Q/DQ (QAT) model: importing %s with its own scales, no "
                       "calibration data", stem);
        else
            tui_status(t, false, "calibrating %s", stem);
    }
    su_argv_free(&a);
}

static void fill(q_data *d)
{
    vm_table_clear(&d->layers);
    const json_t *ls = json_object_get(d->res, "layers");
    for (size_t i = 0; i < json_array_size(ls); i++) {
        const json_t *l = json_array_get(ls, i);
        static const char *const keys[C_N] = {NULL, "output_sqnr_db", "output_cosine", NULL,
                                              NULL, "clip_min", "clip_max", "scale_d",
                                              "offset_d", "act_sqnr_db", "weight_sqnr_db"};
        double nums[C_N];
        char text[C_N][32];
        const char *cells[C_N];
        for (int c = 0; c < C_N; c++) {
            nums[c] = keys[c] ? su_num(l, keys[c]) : NAN;
            cells[c] = text[c];
            text[c][0] = 0;
            if (!keys[c])
                continue;
            if (isnan(nums[c]))
                snprintf(text[c], sizeof text[c], "-");
            else if (c == C_SQNR || c == C_ASQNR || c == C_WSQNR)
                snprintf(text[c], sizeof text[c], "%.1f", nums[c]);
            else if (c == C_COS)
                snprintf(text[c], sizeof text[c], "%.5f", nums[c]);
            else if (c == C_OFFSET)
                snprintf(text[c], sizeof text[c], "%.0f", nums[c]);
            else
                vm_fmt_num(text[c], sizeof text[c], nums[c], 9);
        }
        const char *bn = su_str(l, "fused_batchnorm");
        cells[C_LAYER] = su_str(l, "layer");
        cells[C_OP] = bn[0] ? "Conv+BN" : su_str(l, "op_type");
        cells[C_ALGO] = su_str(l, "algorithm");
        double q = nums[C_SQNR];
        int tag = isnan(q) ? VM_TAG_NONE : q < BAD_DB ? VM_TAG_BAD : q < WARN_DB ? VM_TAG_WARN
                                                                                 : VM_TAG_NONE;
        int r = vm_table_add(&d->layers, cells, nums, VM_TAG_NONE);
        if (r >= 0 && tag)
            d->layers.celltags[r * d->layers.ncols + C_SQNR] = tag;
    }
    vm_table_sort(&d->layers, C_SQNR, false); /* the worst layers first */
    vm_table_select(&d->layers, 0, 1);
}

static void q_job_done(tui *t, tui_job *j)
{
    q_data *d = data(t);
    if (!d)
        return;
    char err[1024];
    json_t *o = su_job_json(j, err, sizeof err);
    clear_results(d);
    if (!o) {
        if (j->cancelled) {
            tui_set_state(t, STEP_QUANTIZE, ST_NOT_RUN, "cancelled");
            tui_status(t, false, "calibration cancelled: nothing was written");
            return;
        }
        snprintf(d->error, sizeof d->error, "%s", err);
        tui_set_state(t, STEP_QUANTIZE, ST_FAILED, "failed");
        tui_status(t, true, "calibrate: %s", err);
        return;
    }
    d->res = o;
    t->run_id[STEP_QUANTIZE] = j->run_id;
    fill(d);
    if (!su_db_artifact(t, j->run_id, "deploy_model", t->deploy_model, sizeof t->deploy_model))
        snprintf(t->deploy_model, sizeof t->deploy_model, "%s_deploy_model.onnx", d->save);
    double q = su_num(o, "output_sqnr_db"), c = su_num(o, "output_cosine");
    char note[96];
    if (isnan(q))
        snprintf(note, sizeof note, "%d layers", d->layers.nrows);
    else
        snprintf(note, sizeof note, "SQNR %.1f dB", q);
    tui_set_state(t, STEP_QUANTIZE, !isnan(q) && q < WARN_DB ? ST_WARN : ST_OK, note);
    if (isnan(q))
        tui_status(t, false, "calibrated %d layers; Compile is next", d->layers.nrows);
    else
        tui_status(t, false, "calibrated: output SQNR %.1f dB, cosine %.5f; Compile is next", q,
                   c);
}

/* The progress of the running calibration: batches of the current phase, its rate and ETA
 * (timed from when the phase's first line arrived). */
static void draw_progress(tui *t, q_data *d, WINDOW *w, int y, int wd)
{
    const tui_job *j = t->job;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9, rate, eta;
    double el = now - j->started;
    if (strcmp(d->phase, j->progress_what)) {
        /* a new phase began when the last one's last batch was reported (the first at the
           start) */
        d->phase_t0 = d->phase[0] ? d->last_change : j->started;
        snprintf(d->phase, sizeof d->phase, "%s", j->progress_what);
    }
    if (j->progress_done != d->last_done) {
        d->last_done = j->progress_done;
        d->last_change = now;
    }
    vm_progress(j->progress_done, j->progress_total, now - d->phase_t0, &rate, &eta);
    su_put(t, w, y++, 0, wd, A_BOLD, "Calibrating (nanobench calibrate)");
    y++;
    const char *what = j->progress_what[0] ? j->progress_what : "starting";
    char line[160], ms[32];
    int barw = wd - 14 > 50 ? 50 : wd - 14;
    if (j->progress_total > 0) {
        int n = vm_bar_len((double)j->progress_done, (double)j->progress_total, barw);
        su_put(t, w, y, 0, 11, 0, "%-10s", what);
        mvwaddch(w, y, 11, '[');
        for (int i = 0; i < barw; i++)
            su_put(t, w, y, 12 + i, 1, tui_tag_attr(t, i < n ? VM_TAG_GOOD : VM_TAG_DIM), "%s",
                   i < n ? (t->utf8 ? "\u2588" : "#") : (t->utf8 ? "\u00b7" : "."));
        mvwaddch(w, y, 12 + barw, ']');
        y++;
        snprintf(line, sizeof line, "%lld/%lld batches", (long long)j->progress_done,
                 (long long)j->progress_total);
        su_put(t, w, y, 0, wd, 0, "%s", line);
        int x = (int)strlen(line) + 3;
        if (rate > 0)
            x += su_put(t, w, y, x, wd - x, 0, "%.2f batch/s", rate) + 3;
        if (eta >= 0) {
            vm_fmt_ms(ms, sizeof ms, eta * 1000);
            su_put(t, w, y, x, wd - x, 0, "ETA %s", ms);
        }
        y++;
    } else {
        su_put(t, w, y++, 0, wd, 0, "%s...", what);
        y++;
    }
    vm_fmt_ms(ms, sizeof ms, el * 1000);
    su_put(t, w, y++, 0, wd, tui_tag_attr(t, VM_TAG_DIM), "elapsed %s", ms);
    y++;
    su_wrap(t, w, y++, 0, wd, 2, tui_tag_attr(t, VM_TAG_DIM),
            "Esc cancels (the CLI removes its partial files).");
    if (j->last_line[0])
        su_put(t, w, y + 1, 0, wd, tui_tag_attr(t, VM_TAG_DIM), "%s", j->last_line);
}

static void q_draw(tui *t, WINDOW *w)
{
    q_data *d = data(t);
    int h = getmaxy(w), wd = getmaxx(w), y = 0, dim = tui_tag_attr(t, VM_TAG_DIM);
    if (!d)
        return;
    q_enter(t);
    if (!t->model[0]) {
        su_put(t, w, 0, 0, wd, A_BOLD, "Quantize");
        su_wrap(t, w, 2, 0, wd, 3, 0, "No model open: open one on the Model step (o).");
        return;
    }
    if (t->job && t->job->step == STEP_QUANTIZE && !t->job->done) {
        draw_progress(t, d, w, 0, wd);
        return;
    }
    if (!d->res) {
        su_put(t, w, y++, 0, wd, A_BOLD, "Quantize");
        y++;
        if (d->error[0]) {
            su_put(t, w, y++, 0, wd, tui_tag_attr(t, VM_TAG_BAD) | A_BOLD, "Calibration failed:");
            y += su_wrap(t, w, y, 0, wd, h - y - 4, tui_tag_attr(t, VM_TAG_BAD), d->error);
            y++;
            if (strstr(d->error, "--input_shape"))
                su_put(t, w, y++, 0, wd, A_BOLD, "Set --input_shape on the Model step: 1, then e.");
            su_put(t, w, y++, 0, wd, dim, "F5: change the settings and run again");
            return;
        }
        y += su_wrap(t, w, y, 0, wd, 5, 0,
                     "Press F5 to calibrate: a form asks for the data folders (one per input), "
                     "data types, a config file or batch_num, the algorithm and an evaluation "
                     "set; then AMCT-style post-training quantization runs with a progress bar.");
        y++;
        if (t->input_shape[0])
            su_put(t, w, y++, 0, wd, dim, "--input_shape %s (from the Model step)", t->input_shape);
        if (t->model_inputs[0])
            su_put(t, w, y++, 0, wd, dim, "inputs: %s", t->model_inputs);
        if (d->data_dir[0]) { /* the last settings: F5 starts from them */
            y++;
            if (t->deploy_model[0] && t->run_id[STEP_QUANTIZE] > 0)
                su_put(t, w, y++, 0, wd, 0, "run %lld of an earlier session: %s",
                       (long long)t->run_id[STEP_QUANTIZE], strrchr(t->deploy_model, '/')
                                                              ? strrchr(t->deploy_model, '/') + 1
                                                              : t->deploy_model);
            su_put(t, w, y++, 0, wd, 0, "data     %s", d->data_dir);
            if (d->config[0])
                su_put(t, w, y++, 0, wd, 0, "config   %s", d->config);
            else
                su_put(t, w, y++, 0, wd, 0, "batches  %s", d->batch_num);
            su_put(t, w, y++, 0, wd, 0, "algo     %s", d->algo[0] ? d->algo : "(config's)");
            if (d->eval_dir[0])
                su_put(t, w, y++, 0, wd, 0, "eval     %s", d->eval_dir);
        }
        return;
    }
    const json_t *o = d->res;
    double q = su_num(o, "output_sqnr_db"), c = su_num(o, "output_cosine"),
           wc = su_num(o, "output_worst_cosine"), md = su_num(o, "output_max_abs_diff");
    int eb = (int)su_num(o, "eval_batches");
    bool evalset = !strcmp(su_str(o, "eval_set"), "eval_dir");
    int qa = isnan(q) ? 0 : q < BAD_DB ? tui_tag_attr(t, VM_TAG_BAD) | A_BOLD
                          : q < WARN_DB ? tui_tag_attr(t, VM_TAG_WARN) | A_BOLD
                                        : tui_tag_attr(t, VM_TAG_GOOD) | A_BOLD;
    if (isnan(q)) {
        su_put(t, w, y++, 0, wd, A_BOLD, "Network output: no float output to compare");
    } else {
        int x = su_put(t, w, y, 0, wd, A_BOLD, "Network output: ");
        x += su_put(t, w, y, x, wd - x, qa, "SQNR %.1f dB", q);
        su_put(t, w, y++, x, wd - x, 0, ", cosine %.5f, max |diff| %.4g", c, md);
        char worst[32] = "-";
        if (!isnan(wc))
            snprintf(worst, sizeof worst, "%.5f", wc);
        if (wd >= 80)
            su_put(t, w, y++, 0, wd, dim, "fake-quant vs float on %s%d %s batch%s; worst batch "
                   "cosine %s", evalset ? "" : "the first ", eb,
                   evalset ? "evaluation" : "calibration", eb == 1 ? "" : "es", worst);
        else /* 80x24: the worst cosine first, the words short (issue 38) */
            su_put(t, w, y++, 0, wd, dim, "worst batch cosine %s (fake-quant vs float, %d %s "
                   "batch%s)", worst, eb, evalset ? "eval" : "calib", eb == 1 ? "" : "es");
    }
    const json_t *outs = json_object_get(o, "outputs");
    if (json_array_size(outs) > 1) /* each output of a multi-output model, as room allows */
        for (size_t i = 0; i < json_array_size(outs) && y < h / 3; i++) {
            const json_t *oo = json_array_get(outs, i);
            su_put(t, w, y++, 2, wd - 2, 0, "%s: SQNR %.1f dB, cosine %.5f", su_str(oo, "name"),
                   su_num(oo, "sqnr_db"), su_num(oo, "cosine"));
        }
    const char *dm = strrchr(t->deploy_model, '/');
    if ((int)strlen(t->deploy_model) + 14 <= wd || !dm)
        su_put(t, w, y++, 0, wd, dim, "deploy model  %s", t->deploy_model);
    else
        su_put(t, w, y++, 0, wd, dim, "deploy model  %s (quant folder)", dm + 1);
    su_put(t, w, y++, 0, wd, A_BOLD, "%d layer%s, worst first (SQNR of the layer's output "
           "against float)", d->layers.nrows, d->layers.nrows == 1 ? "" : "s");
    d->table_y = y;
    d->table_h = h - y;
    /* the layer name takes what the numbers leave (every column from 120 cells), 20 to 48 */
    int used = 0;
    for (int k = C_SQNR; k < C_N; k++)
        used += d->layers.cols[k].width + 1;
    int lw = wd >= 120 ? wd - used : wd - 6 * 8;
    d->layers.cols[C_LAYER].width = lw < 20 ? 20 : lw > 48 ? 48 : lw;
    if (d->table_h >= 2)
        tui_draw_table(t, w, &d->layers, y, 0, d->table_h, wd);
}

static bool q_key(tui *t, int ch)
{
    q_data *d = data(t);
    if (!d)
        return false;
    if (ch == 'e') {
        q_run(t);
        return true;
    }
    return d->res && tui_table_key(t, &d->layers, ch, su_page(d->table_h));
}

static void q_mouse(tui *t, int y, int x)
{
    (void)x;
    q_data *d = data(t);
    if (d && d->res)
        su_table_click(&d->layers, y, d->table_y, d->table_h);
}

static void q_cleanup(tui *t)
{
    q_data *d = t->scr[STEP_QUANTIZE];
    if (!d)
        return;
    clear_results(d);
    vm_table_free(&d->layers);
    free(d);
    t->scr[STEP_QUANTIZE] = NULL;
}

static const tui_keyhelp q_help[] = {
    {"F5 r e", "the calibration form, then calibrate"},
    {"Esc", "cancel a running calibration (nothing kept)"},
    {"table", "worst SQNR first; < > s re-sort, / search"},
    {"colours", "SQNR under 20 dB yellow, under 10 dB red"},
    {NULL, NULL}};

const tui_screen scr_quantize = {.title = "Quantize",
                                 .enter = q_enter,
                                 .draw = q_draw,
                                 .key = q_key,
                                 .run = q_run,
                                 .job_done = q_job_done,
                                 .mouse = q_mouse,
                                 .help = q_help,
                                 .cleanup = q_cleanup};
