/* nanobench bring-up: a model from ONNX to a verdict in one call (engine/bringup).
 *
 * estimate -> calibrate (or a Q/DQ model's import) -> compile -> run on the simulated NPU
 * (K evaluation inputs) -> infer (the float reference on the same inputs) -> compare every
 * layer (on the input of the lowest output SQNR), then the fp16 saturation fix (tried and
 * measured), summary.json and report.html. Every step runs in this process through the
 * engines' entry points (nb_estimate_file, nb_calibrate, nb_compile, nb_run_exeom,
 * nb_infer, nb_compare); every name and path travels as data, never as text to parse.
 *
 * The CLI's `bringup`, the workbench and the Python module call it. Each step is recorded
 * in the run history (opts->db) as a run of its own, a child of the step before it (the
 * first: the bringup's own run, opts->run), with the parameters, metrics, per-layer rows
 * and artifacts its command records; the bringup's own run gets the summary's figures.
 * The folder OUT holds what the steps wrote (quant/, NAME.exeom, run/, reference/,
 * npu_dump/, golden_dump/, compare/, fix/), log/<step>.out (each step's JSON, as its
 * command's --json prints it) and .err (its warnings), summary.json and report.html.
 */
#ifndef NB_BRINGUP_H
#define NB_BRINGUP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "nb/db.h"
#include "nb/json.h"
#include "nb/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The steps, as the progress hook numbers them (0..5). */
enum { NB_BRINGUP_STEPS = 6 };
extern const char *const nb_bringup_step_name[NB_BRINGUP_STEPS];

typedef struct nb_bringup_opts {
    const char *model;        /* the ONNX model (float, or Q/DQ: imported, not calibrated) */
    const char *data_dir;     /* calibrate's --data_dir "dir_x;dir_y" (one folder per input,
                                 in input_shape's order when it names every input, else the
                                 model's); NULL: none (a Q/DQ model only) */
    const char *input_shape;  /* "name:d0,d1;..." (vendor syntax), or NULL */
    const char *data_types;   /* calibrate's --data_types, or NULL */
    const char *calibration_config; /* AMCT's config file, or NULL (exclusive with batch_num) */
    const char *batch_num;    /* "N" or "all", or NULL: every batch unless a config is given */
    const char *algo;         /* calibrate's --algo, or NULL */
    const char *eval_dir;     /* the evaluation folders as data_dir, or NULL */
    const char *out;          /* the folder; NULL: "bringup_<model name>" */
    const char *soc_version;  /* Ascend035A (default), Ascend035B, Ascend035 (atc only) */
    const char *input_fp16_nodes; /* atc's list, or NULL: every float input fp16 (taken by
                                     name from the model, never as a list) */
    const char *output_type;  /* "FP16" (default); atc refuses any other */
    const char *out_nodes;    /* atc's --out_nodes, or NULL */
    const char *cpu_nodes;    /* atc's --cpu_nodes, or NULL */
    const char *nb_input_scale; /* atc's --nb_input_scale, or NULL (then the fix is tried) */
    const char *threshold;    /* compare's --threshold "cos=0.99,...", or NULL */
    int eval_count;           /* K, 1..NB_BRINGUP_MAX_EVAL; 0: 5 */
    bool auto_place;          /* calibrate's placement advice taken (exclusive with cpu_nodes) */
    /* the precision and placement search (issue 40): the cheapest configuration whose pooled
       output SQNR (dB, on the simulated NPU over the evaluation inputs) reaches target_sqnr
       on each target output (target_outputs "a;b", NULL: every output); summary "search" */
    bool has_target;
    double target_sqnr;
    const char *target_outputs;
    double search_max_cycles; /* > 0: no configuration over this many cycles (NPU + CPU, the
                                 mean over the evaluation inputs) is chosen */
    bool search_baseline;     /* the ESP-PPQ-style rule measured too (INT16 in sensitivity
                                 order until the target), summary search.baseline_rule */
    bool has_fail_cos;        /* fail_under_cosine given: result->below is set */
    double fail_under_cosine; /* -1..1 */
    /* the run history: the steps' runs go into db (NULL: not recorded), each a descendant
       of run (the bringup's own run, NULL: none), which takes the summary's figures */
    nb_db *db;
    nb_run *run;
    bool require_record;      /* a step that cannot be recorded fails the bring-up */
} nb_bringup_opts;

enum { NB_BRINGUP_MAX_EVAL = 1000 };

/* What a front end hears. Every member may be NULL. */
typedef struct nb_bringup_hooks {
    void *user;
    /* a step starts or moves on: step 0..5, detail ("(every batch)"), progress ("" or
       "calibrate 3/40", "2/5"); done: the step is over, after ms of it */
    void (*step)(void *user, int step, const char *detail, const char *progress, bool done,
                 double ms);
    /* a line for the user ("OUT holds bringup 12's files: they are replaced") */
    void (*note)(void *user, const char *msg);
    /* a warning (one line, without "warning: ") */
    void (*warn)(void *user, const char *msg);
    /* nonzero: stop (checked between steps, evaluation inputs, fix tries and calibration
       batches); nb_bringup then fails with NB_ERR_CANCELLED, "interrupted during STAGE",
       and nothing half-written; a step's run is recorded "interrupted (SIGINT): ..." when
       the flag holds that signal's number (SIGTERM, SIGHUP too), else "interrupted
       (cancelled): ..." */
    const volatile sig_atomic_t *cancel;
} nb_bringup_hooks;

typedef struct nb_bringup_result {
    json_t *summary;          /* summary.json's object (owned; NULL until the end) */
    char out[3000];           /* the folder */
    char summary_path[3100], report_path[3100]; /* report_path "" when not written */
    double worst_cosine;      /* the gate of fail_under_cosine (NaN: not defined) */
    bool below;               /* has_fail_cos and worst_cosine < fail_under_cosine or NaN */
    char stage[16];           /* the step that failed or was cancelled, "" */
} nb_bringup_result;

/* Checks opts as the CLI's flags are checked, before anything runs: the model given,
 * data_dir (unless the model is Q/DQ), config and batch_num exclusive, cpu_nodes and
 * auto_place exclusive, eval_count, fail_under_cosine, threshold (compare's check), out.
 * Errors: NB_ERR_ARG with a one-line message (no "bringup: " prefix). */
nb_err nb_bringup_check(const nb_bringup_opts *opts, nb_status *st);

/* Runs the bring-up (nb_bringup_check first). 0 with result filled (free it with
 * nb_bringup_result_free in every case). Errors: a step's own error as "STEP failed: MSG"
 * with its code (NB_ERR_ARG... for bad input: exit 2; NB_ERR_NOMEM/NB_ERR_INTERNAL: 1);
 * NB_ERR_CANCELLED ("interrupted during STEP") when hooks->cancel became nonzero; a
 * folder that cannot be made or written, NB_ERR_IO. The run's error is the front end's
 * to record (nb_run_end on opts->run). */
nb_err nb_bringup(const nb_bringup_opts *opts, const nb_bringup_hooks *hooks,
                  nb_bringup_result *result, nb_status *st);
void nb_bringup_result_free(nb_bringup_result *r);

#ifdef __cplusplus
}
#endif
#endif
