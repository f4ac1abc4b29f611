/* nanobench's Python module, C side: the bring-up (nb_bringup, include/nb/bringup.h) behind
 * one function of plain C types, as nbpy.c's steps (python/nanobench/__init__.py's
 * bringup). The options cross as n key/value strings (names and paths as data: nothing is
 * split or parsed but the numbers); the summary comes back as one JSON string (nbpy_free
 * it). Recorded in the run history as the CLI records it (a bringup run, its steps its
 * children), unless "no_record" is given. No printing. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nb/bringup.h"
#include "nb/db.h"

#define EXPORT __attribute__((visibility("default")))

/* Runs the bring-up of model with the options keys[i] = values[i] (n of them): data_dir,
 * input_shape, data_types, calibration_config, batch_num, algo, eval_dir, out,
 * soc_version, input_fp16_nodes, output_type, out_nodes, cpu_nodes, nb_input_scale,
 * threshold, target_outputs (text, as the CLI's flags), eval_count (a whole number),
 * target_sqnr (a number, dB), auto_place and search_baseline ("1"),
 * fail_under_cosine (a number), db (the database path; NULL: the default), no_record ("1").
 * Returns 0 with *json the summary (summary.json's object), or the CLI's exit status (2 bad
 * input, 1 internal, 130 cancelled) with the one-line message in err. */
EXPORT int nbpy_bringup(const char *model, int n, const char *const *keys,
                        const char *const *values, char **json, char *err, size_t errlen);
/* The same, with line (when not NULL) called for each progress line, as the CLI prints them
 * on stderr: "[k/6] step detail progress", "done" lines, notes (the search's tries) and
 * "warning: ..." lines; one line of UTF-8 text, no newline. */
EXPORT int nbpy_bringup_progress(const char *model, int n, const char *const *keys,
                                 const char *const *values, void (*line)(const char *),
                                 char **json, char *err, size_t errlen);

typedef struct py_bu {
    nb_bringup_opts o;
    const char *db_path;
    bool no_record;
} py_bu;

/* the options into p; 2 after the message for an unknown key or a bad number */
static int py_opts(py_bu *p, int n, const char *const *keys, const char *const *values,
                   char *err, size_t errlen)
{
    nb_bringup_opts *o = &p->o;
    struct {
        const char *key;
        const char **dst;
    } text[] = {{"data_dir", &o->data_dir}, {"input_shape", &o->input_shape},
                {"data_types", &o->data_types}, {"calibration_config", &o->calibration_config},
                {"batch_num", &o->batch_num}, {"algo", &o->algo}, {"eval_dir", &o->eval_dir},
                {"out", &o->out}, {"soc_version", &o->soc_version},
                {"input_fp16_nodes", &o->input_fp16_nodes}, {"output_type", &o->output_type},
                {"out_nodes", &o->out_nodes}, {"cpu_nodes", &o->cpu_nodes},
                {"nb_input_scale", &o->nb_input_scale}, {"threshold", &o->threshold},
                {"target_outputs", &o->target_outputs}, {"db", &p->db_path}};
    for (int i = 0; i < n; i++) {
        const char *k = keys[i], *v = values[i];
        bool taken = false;
        for (size_t t = 0; t < sizeof text / sizeof text[0] && !taken; t++)
            if (!strcmp(k, text[t].key))
                *text[t].dst = v, taken = true;
        char *end = NULL;
        if (taken)
            continue;
        if (!strcmp(k, "auto_place")) {
            o->auto_place = v && !strcmp(v, "1");
        } else if (!strcmp(k, "search_baseline")) {
            o->search_baseline = v && !strcmp(v, "1");
        } else if (!strcmp(k, "target_sqnr")) {
            o->target_sqnr = v ? strtod(v, &end) : NAN;
            if (!v || *end || end == v || !isfinite(o->target_sqnr)) {
                snprintf(err, errlen, "bringup(): target_sqnr is an SQNR in dB (a number)");
                return 2;
            }
            o->has_target = true;
        } else if (!strcmp(k, "search_max_cycles")) {
            o->search_max_cycles = v ? strtod(v, &end) : NAN;
            if (!v || *end || end == v || !(o->search_max_cycles >= 1)) {
                snprintf(err, errlen, "bringup(): search_max_cycles is a cycle count (1 or more)");
                return 2;
            }
        } else if (!strcmp(k, "no_record")) {
            p->no_record = v && !strcmp(v, "1");
        } else if (!strcmp(k, "eval_count")) {
            long c = v ? strtol(v, &end, 10) : 0;
            if (!v || *end || end == v || c < 1 || c > NB_BRINGUP_MAX_EVAL) {
                snprintf(err, errlen, "bringup: eval_count is a whole number from 1 to %d",
                         NB_BRINGUP_MAX_EVAL);
                return 2;
            }
            o->eval_count = (int)c;
        } else if (!strcmp(k, "fail_under_cosine")) {
            o->fail_under_cosine = v ? strtod(v, &end) : NAN;
            if (!v || *end || end == v) {
                snprintf(err, errlen, "bringup: fail_under_cosine is a cosine from -1 to 1");
                return 2;
            }
            o->has_fail_cos = true;
        } else {
            snprintf(err, errlen, "bringup: unknown option '%s'", k);
            return 2;
        }
    }
    return 0;
}

/* the bringup's own run, as the CLI begins it: its parameters, model and options */
static void py_begin(py_bu *p, const char *model, int n, const char *const *keys,
                     const char *const *values, nb_db **db, nb_run **run)
{
    nb_status st = {0};
    if (p->no_record || nb_db_open(p->db_path, db, &st))
        return;
    json_t *params = json_object(), *av = json_array();
    json_array_append_new(av, json_string("nanobench.bringup"));
    json_object_set_new(params, "argv", av);
    json_object_set_new(params, "model", nb_json_string(model));
    for (int i = 0; i < n; i++)
        if (strcmp(keys[i], "db") && strcmp(keys[i], "no_record") && values[i])
            json_object_set_new(params, keys[i], nb_json_string(values[i]));
    char *pj = json_dumps(params, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(params);
    if (nb_run_begin(*db, "bringup", model, 0, pj, run, &st)) {
        *run = NULL;
        nb_db_close(*db);
        *db = NULL;
    }
    free(pj);
}

void nbpy_lock(void); /* nbpy.c: one engine call at a time, threads take turns */
void nbpy_unlock(void);

static int bringup_impl(const char *model, int n, const char *const *keys,
                        const char *const *values, void (*line)(const char *), char **json,
                        char *err, size_t errlen);

int nbpy_bringup(const char *model, int n, const char *const *keys, const char *const *values,
                 char **json, char *err, size_t errlen)
{
    return nbpy_bringup_progress(model, n, keys, values, NULL, json, err, errlen);
}

int nbpy_bringup_progress(const char *model, int n, const char *const *keys,
                          const char *const *values, void (*line)(const char *), char **json,
                          char *err, size_t errlen)
{
    nbpy_lock();
    int rc = bringup_impl(model, n, keys, values, line, json, err, errlen);
    nbpy_unlock();
    return rc;
}

/* the hooks as lines for the caller's function */
static void py_step(void *user, int step, const char *detail, const char *progress, bool done,
                    double ms)
{
    void (*line)(const char *) = (void (*)(const char *))user;
    char buf[1200];
    if (done)
        snprintf(buf, sizeof buf, "[%d/%d] %s%s%s done in %.1f s", step + 1, NB_BRINGUP_STEPS,
                 nb_bringup_step_name[step], *detail ? " " : "", detail, ms / 1e3);
    else
        snprintf(buf, sizeof buf, "[%d/%d] %s%s%s%s%s", step + 1, NB_BRINGUP_STEPS,
                 nb_bringup_step_name[step], *detail ? " " : "", detail, *progress ? " " : "",
                 progress);
    line(buf);
}

static void py_note(void *user, const char *msg) { ((void (*)(const char *))user)(msg); }

static void py_warn(void *user, const char *msg)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "warning: %s", msg);
    ((void (*)(const char *))user)(buf);
}

static volatile sig_atomic_t py_cancel; /* the SIGINT of a bring-up in progress */

static void on_sigint(int sig) { py_cancel = sig; }

/* The progress function raised: the bring-up stops at its next check (NB_ERR_CANCELLED). */
EXPORT void nbpy_bringup_cancel(void);
void nbpy_bringup_cancel(void) { py_cancel = SIGINT; }

static int bringup_impl(const char *model, int n, const char *const *keys,
                        const char *const *values, void (*line)(const char *), char **json,
                        char *err, size_t errlen)
{
    py_bu p;
    memset(&p, 0, sizeof p);
    *json = NULL;
    int rc = py_opts(&p, n, keys, values, err, errlen);
    if (rc)
        return rc;
    p.o.model = model;
    nb_status st = {0};
    if (nb_bringup_check(&p.o, &st)) {
        snprintf(err, errlen, "bringup: %s", st.msg);
        return nb_exit_code(st.code);
    }
    nb_db *db = NULL;
    nb_run *run = NULL;
    py_begin(&p, model, n, keys, values, &db, &run);
    p.o.db = db;
    p.o.run = run;
    /* Ctrl-C stops the bring-up between its batches and steps (a new user's find: it was
       lost, the call ran to its end and returned 'ok'); Python's own handler gets the
       signal back afterwards, so the caller sees KeyboardInterrupt */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    py_cancel = 0;
    bool handler = sigaction(SIGINT, &sa, &old) == 0;
    nb_bringup_hooks h = {.cancel = &py_cancel};
    if (line) {
        h.user = (void *)line;
        h.step = py_step, h.note = py_note, h.warn = py_warn;
    }
    nb_bringup_result r;
    nb_err e = nb_bringup(&p.o, &h, &r, &st);
    if (handler)
        sigaction(SIGINT, &old, NULL);
    if (e == NB_ERR_CANCELLED) {
        snprintf(err, errlen, "bringup: interrupted (SIGINT)%s", st.msg + (strncmp(
                     st.msg, "interrupted", 11) ? 0 : 11));
        rc = 130;
    } else if (e) {
        snprintf(err, errlen, "bringup: %s", st.msg);
        rc = nb_exit_code(e);
    } else if (!(*json = json_dumps(r.summary, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
        snprintf(err, errlen, "bringup: out of memory");
        rc = 1;
    }
    if (run)
        nb_run_end(run, rc == 0, rc ? err : NULL, NULL);
    nb_db_close(db);
    nb_bringup_result_free(&r);
    return rc; /* 130 after a SIGINT: the module raises KeyboardInterrupt */
}
