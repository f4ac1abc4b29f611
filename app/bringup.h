/* nanobench bringup: the state shared by the orchestration (cmd_bringup.c) and the summary
 * (bringup_summary.c: the network-output metrics through the engine, the one-screen text and
 * summary.json). */
#ifndef NB_APP_BRINGUP_H
#define NB_APP_BRINGUP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <signal.h>

#include "tui/job.h"

enum { N_STEPS = 6, MAX_IN = 64, MAX_EVAL = 1000, MAX_ARGS = 160, WIDTH = 79, LABEL = 11 };
#define NBSP '\037' /* a space the summary does not break a line at */

/* ---- the bringup's state ---- */
typedef struct bu {
    /* flags */
    const char *model, *data_dir, *shape, *types, *cfg, *batch, *algo, *eval_dir, *out, *soc,
        *fp16, *otype, *out_nodes, *in_scale, *threshold, *cpu_nodes;
    int eval_count;
    double fail_cos;
    bool has_fail_cos, json;
    bool auto_place;       /* --auto_place: calibrate's placement advice taken */
    char auto_cpu[4096];   /* the --cpu_nodes it gave (cpu_nodes points here), "" none */
    json_t *advice;        /* calibrate's placement advice ({nodes, layers}), NULL none */
    /* derived */
    char stem[256], outdir[3000], exeom[3400], deploy[3400], gold[3400];
    char fp16_all[4096];  /* every float input, ';'-separated: atc's default */
    char shape_auto[4096]; /* a dynamic batch taken as 1, for every step (shape points here) */
    const char *db;       /* the children's --db */
    int n_in;
    char *in_name[MAX_IN]; /* in --data_dir order */
    int in_rank[MAX_IN];   /* and their shapes and types, for random evaluation inputs */
    int64_t in_dims[MAX_IN][8];
    int in_dtype[MAX_IN];
    bool qat;              /* a Q/DQ model: imported (calibrate --from_qdq), not calibrated */
    int n_eval;
    int eval_avail;        /* files the evaluation's folder holds (n_eval of them are used) */
    char **eval;           /* [k * n_in + i]: input i of evaluation input k */
    bool eval_from_dir;
    bool eval_random;      /* no folder: random inputs (infer's random:SEED values) */
    bool tty;
    int n_logs;
    /* results */
    json_t *est, *cal, *cmp, *runs; /* the children's JSON; runs: one per evaluation input */
    json_t *atc_warn;               /* atc's warning lines, without "nanobench: warning: " */
    char suggest[256];              /* the --nb_input_scale atc suggests, "" if none */
    int64_t id_est, id_cal, id_atc, id_cmp;
    int64_t id_run[MAX_EVAL], id_inf[MAX_EVAL];
    int cmp_input;         /* the evaluation input compared layer by layer (lowest SQNR) */
    int64_t id_dump_run, id_dump_inf; /* its run and infer with every task dumped */
    char dumped[3400];     /* the NPU dump folder of that run */
    double step_ms[N_STEPS];
    double t0;
} bu;

/* a child's argument list */
typedef struct bu_argv {
    char *v[MAX_ARGS + 1];
    int n;
    bool oom;
} bu_argv;

/* ---- the steps (bringup_steps.c): children run through the job runner, their lines on
   stderr, their JSON read back; g_sig: the signal that stopped the bringup, or 0 ---- */
extern volatile sig_atomic_t g_sig;
void on_signal(int sig);
/* one argument, formatted (a->oom when it cannot be added) */
void arg(bu_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void args_free(bu_argv *a);
double now_s(void);
void step_line(const bu *b, int step, const char *detail, const char *progress);
void step_done(const bu *b, int step, const char *detail);
int interrupted(const char *stage);
void save_log(const bu *b, const tui_job *j, const char *name);
/* runs a command (a) as a child recorded under parent, titled title (step >= 0: its
   progress on step's line); 0 with the finished job in *out; -1 when it failed, its message
   in err and its exit status in *status; else the bringup's exit status (an interrupt) */
int child_soft(bu *b, int step, const char *title, const char *detail, const char *logname,
               int64_t parent, bu_argv *a, tui_job **out, char *err, size_t errlen,
               int *status);
/* runs step's command (a) as a child recorded under parent; its job into *out */
int child(bu *b, int step, const char *detail, const char *logname, int64_t parent,
          bu_argv *a, tui_job **out);
json_t *job_json(const tui_job *j, const char *stage, int *rc);
/* atc's argument list for the deploy model into output (.exeom and .dbg), with the
   bringup's flags and --nb_input_scale=scale when scale is not NULL */
void atc_argv(const bu *b, bu_argv *a, const char *output, const char *scale);
/* the estimate step (the bringup's flags, -p --json) as a child recorded under the bringup:
   b->est (replaced) and b->id_est; 0, or the exit status after the step's line */
int run_estimate(bu *b, const char *detail);
/* run's argument list for evaluation input k on exeom into out_dir (--json; --dump dump_cfg
   when not NULL) */
void run_argv(const bu *b, bu_argv *a, const char *exeom, int k, const char *out_dir,
              const char *dump_cfg);
/* infer's for evaluation input k into out_dir (--dump-all when dump_all; golden dumps into
   golden when not NULL) */
void infer_argv(const bu *b, bu_argv *a, int k, const char *out_dir, bool dump_all,
                const char *golden);
/* The evaluation input of the lowest output SQNR (outs: output_metrics's) into b->cmp_input,
   run again with every task dumped (acl: the dump config) and its golden dumps written by
   infer into b->gold: b->dumped, b->id_dump_run, b->id_dump_inf. 0, or the exit status after
   the step's line. */
int dump_worst(bu *b, const json_t *outs, const char *acl, bool dump_all, int64_t parent);
void atc_warnings(bu *b, const char *err);

/* ---- the data (bringup_inputs.c): the model's inputs, the data folders, the evaluation
   inputs ---- */
int split_dirs(const char *dirs, char **parts, int max);
int pick_eval(bu *b);
int model_inputs(bu *b);
bool model_output(const char *model, const char *shape, const char *name);
/* whether the model is a Q/DQ (QAT) one (nb_graph_has_qdq); false when it does not load */
bool model_is_qdq(const char *model, const char *shape);

/* a JSON number (NaN when absent) and string ("" when absent) of a child's output */
double bu_num(const json_t *o, const char *key);
const char *bu_str(const json_t *o, const char *key);
/* the network outputs over the K evaluation inputs (nb_cmp_over_inputs), the worst cosine
 * into *worst; NULL with *rc the exit status after the message */
json_t *output_metrics(const bu *b, const json_t *outs0, double *worst, int *rc);
json_t *saturation_json(const bu *b, double *total);
/* fp16 saturation's fix, tried and measured (bringup_fix.c): the --nb_input_scale that
 * clamps nothing on the K inputs and the network outputs with it; before: the clamps of the
 * bringup's own runs. NULL with *rc the exit status (an interrupt, out of memory). */
json_t *saturation_fix(bu *b, double before, int64_t parent, int *rc);
/* Removes the fix tries a previous bring-up left in b's folder (fix/suggested, fix/s<k>). */
void fix_clear(const bu *b);
json_t *calibration_json(const bu *b);
json_t *summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
                            int64_t exeom_bytes, const char *dumped, double wall, bool below);
/* the steps' names: estimate, calibrate, atc, run, infer, compare */
extern const char *const step_name[N_STEPS];
/* a cosine as the summary shows it (5 decimals; "undefined" for NaN) */
const char *cos_str(double v, char *buf, size_t len);
/* the one-screen summary of s (summary_json's) on stdout */

#endif
