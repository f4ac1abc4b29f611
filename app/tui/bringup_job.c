/* nanobench TUI: the whole bring-up in one job (Model's b): nb_bringup (include/nb/
 * bringup.h) run by a forked worker (tui_job_start_fn: crash isolation, the workbench
 * stays responsive) that gets its options as a structure, never as a command line built
 * from names. The worker records the run as `nanobench bringup` does (cli_bringup_exec: a
 * bringup run, its steps its children), prints a progress line per step and the summary as
 * JSON; when it is done the steps it ran are taken up from the history as a later session
 * takes them up (su_resume), and the status line gives the verdict. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../cli.h"
#include "nb/bringup.h"
#include "scr_util.h"
#include "tui.h"

/* what the worker gets: a copy of the workbench's values, in the parent's memory */
typedef struct bu_work {
    char model[PATH_MAX], shape[512], data_dir[4096], eval_dir[4096], out[PATH_MAX];
    char db[PATH_MAX], soc[16], threshold[128];
    double target;  /* the search's target SQNR (dB), NAN: no search */
} bu_work;

static bu_work W;

static int worker(void *arg)
{
    const bu_work *w = arg;
    nb_bringup_opts o = {.model = w->model, .input_shape = w->shape[0] ? w->shape : NULL,
                         .data_dir = w->data_dir[0] ? w->data_dir : NULL,
                         .eval_dir = w->eval_dir[0] ? w->eval_dir : NULL, .out = w->out,
                         .soc_version = w->soc[0] ? w->soc : NULL,
                         .threshold = w->threshold[0] ? w->threshold : NULL,
                         .has_target = !isnan(w->target), .target_sqnr = w->target};
    g_rec.db_path = w->db[0] ? w->db : NULL;
    g_rec.argc = 0;
    g_rec.argv = NULL;
    g_rec.parent = 0;
    return rec_finish(cli_bringup_exec(&o, true, true, 0, NULL));
}

bool tui_bringup_start(tui *t)
{
    if (!t->model[0]) {
        tui_status(t, true, "no model open: press o to pick one");
        return false;
    }
    static char data[4096], eval[4096], target[32];
    tui_field f[] = {
        {"Data folder(s)", data, sizeof data,
         "One folder of .npy or .bin batches per model input, ';' between them "
         "(calibrate's --data_dir; every batch is used).", NULL},
        {"Evaluation folder(s)", eval, sizeof eval,
         "The same for the evaluation inputs; empty: the last 5 files of the data folders.",
         NULL},
        {"Target SQNR (dB)", target, sizeof target,
         "Empty: no search. A number: the precision and placement search (bringup "
         "--target_sqnr): the cheapest INT16 layers and CPU placement whose pooled output SQNR "
         "on the simulator reaches it; every configuration calibrated, compiled and run.", NULL},
    };
    if (!tui_form(t, "Bring up: every step in one go (nanobench bringup)", f, 3))
        return false;
    double tg = NAN;
    if (target[0]) {
        char *end;
        tg = strtod(target, &end);
        if (*end || end == target || !(tg > -100 && tg < 200)) {
            tui_status(t, true, "bringup: the target SQNR is a number of dB (from -100 to 200), "
                       "not '%.40s'", target);
            return false;
        }
    }
    memset(&W, 0, sizeof W);
    snprintf(W.model, sizeof W.model, "%s", t->model);
    snprintf(W.shape, sizeof W.shape, "%s", t->input_shape);
    snprintf(W.data_dir, sizeof W.data_dir, "%s", data);
    snprintf(W.eval_dir, sizeof W.eval_dir, "%s", eval);
    tui_workdir(t, "bringup", W.out, sizeof W.out);
    snprintf(W.db, sizeof W.db, "%s", t->db);
    snprintf(W.soc, sizeof W.soc, "%s", t->soc_version);
    snprintf(W.threshold, sizeof W.threshold, "%s", t->thresholds);
    W.target = tg;
    return tui_run_fn(t, STEP_MODEL, worker, &W, "bringup");
}

void tui_bringup_done(tui *t, tui_job *j)
{
    char err[512];
    json_t *s = su_job_json(j, err, sizeof err);
    if (!s) {
        tui_set_state(t, STEP_MODEL, t->state[STEP_MODEL] == ST_RUNNING ? ST_OK
                                                                        : t->state[STEP_MODEL],
                      NULL);
        /* the worker's message names bringup itself ("bringup: --data_dir is required"):
           not twice */
        const char *m = j->cancelled ? "cancelled" : err;
        tui_status(t, !j->cancelled, "%s%s", strncmp(m, "bringup: ", 9) ? "bringup: " : "", m);
        return;
    }
    tui_set_state(t, STEP_MODEL, ST_OK, "brought up");
    char what[128];
    su_resume(t, what, sizeof what); /* Quantize, Compile, Run: as a later session */
    const json_t *runs = json_object_get(s, "runs"), *cmp = json_object_get(s, "compare");
    t->run_id[STEP_ESTIMATE] = (int64_t)su_num(runs, "estimate");
    tui_set_state(t, STEP_ESTIMATE, ST_OK, "bringup");
    double worst = su_num(s, "worst_cosine");
    char note[96];
    snprintf(note, sizeof note, "%d over", (int)su_num(cmp, "over_threshold"));
    tui_set_state(t, STEP_COMPARE, su_num(cmp, "over_threshold") > 0 ? ST_WARN : ST_OK, note);
    tui_status(t, false, "bringup %lld: %s; worst output cosine %.5f; report %s",
               (long long)j->run_id, su_str(cmp, "verdict_text"), isnan(worst) ? NAN : worst,
               su_str(s, "report"));
    json_decref(s);
}
