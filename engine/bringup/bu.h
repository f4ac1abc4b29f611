/* nanobench bring-up (include/nb/bringup.h): the state its parts share. */
#ifndef NB_BRINGUP_BU_H
#define NB_BRINGUP_BU_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "nb/bringup.h"
#include "nb/db.h"

enum { N_STEPS = NB_BRINGUP_STEPS, MAX_IN = 64, MAX_EVAL = NB_BRINGUP_MAX_EVAL };

typedef struct bu {
    int lock_fd;            /* OUT/.bringup.lock, held (flock) while the bring-up runs, or -1 */
    const nb_bringup_opts *o;
    const nb_bringup_hooks *h;
    nb_status *st;
    /* the options, some replaced as the bring-up learns (shape, cpu_nodes) */
    const char *model, *data_dir, *shape, *types, *cfg, *batch, *algo, *eval_dir, *soc,
        *fp16, *otype, *out_nodes, *in_scale, *threshold, *cpu_nodes;
    int eval_count;
    char *auto_cpu;        /* --auto_place: the cpu_nodes calibrate advised (malloc'd) */
    json_t *advice;        /* calibrate's placement advice ({nodes, layers}), NULL none */
    /* derived */
    char stem[256], outdir[3000], exeom[3400], deploy[3400], gold[3400], save[3400];
    char *shape_auto;      /* a dynamic batch taken as 1, for every step (malloc'd) */
    int n_in;
    char *in_name[MAX_IN]; /* in --data_dir order */
    int in_graph[MAX_IN];  /* its index among the graph's inputs */
    int in_rank[MAX_IN];
    int64_t in_dims[MAX_IN][8];
    int in_dtype[MAX_IN];
    int n_float_in;        /* float inputs: atc takes them all as fp16 by default */
    bool qat;              /* a Q/DQ model: imported, not calibrated */
    int n_eval, eval_avail;
    char **eval;           /* [k * n_in + i]: input i of evaluation input k */
    bool eval_from_dir, eval_random;
    /* results */
    json_t *est, *cal, *cmp, *runs; /* the steps' JSON; runs: one per evaluation input */
    json_t *atc_warn;               /* atc's warnings */
    json_t *suggest;                /* {input name: k} of atc's --nb_input_scale 2^k advice */
    char *suggest_spec;             /* the same as atc's spec ("x:2^-12;y:2^-3"), or NULL */
    int64_t id_est, id_cal, id_atc, id_cmp;
    int64_t *id_run, *id_inf;       /* n_eval each */
    int cmp_input;
    const char *cmp_rule; /* what picked it: "the lowest output SQNR", "the largest score
                             error" (static) */
    int64_t id_dump_run, id_dump_inf;
    char dumped[3400];
    double step_ms[N_STEPS];
    double t0;
    const char *stage;              /* the step running (for a cancel's message) */
    bool quiet;                     /* the search's tries: no step progress to the hooks */
    bool adaround;                  /* calibrate's weights rounded by AdaRound (the search's
                                       "adaround on every layer"; --weight_round adaround) */
    json_t *argv_kept;              /* not NULL: each step's recorded argv appended (the
                                       search's chosen configuration, to reproduce it) */
    const char *fix_scale;          /* the fp16 fix's --nb_input_scale (in its JSON), or NULL */
} bu;

/* ---- steps.c: each step in process, recorded, its JSON kept and logged ---- */
double bu_now(void);
bool bu_cancelled(const bu *b);
/* NB_ERR_CANCELLED "interrupted during STAGE" */
nb_err bu_interrupted(bu *b);
void bu_step(const bu *b, int step, const char *detail, const char *progress);
void bu_step_done(const bu *b, int step, const char *detail);
void bu_note(const bu *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a warning to the hooks (one line, without "warning: ") */
void bu_warn(const bu *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "STEP failed: " before the step's own message (its code kept) */
nb_err bu_step_failed(bu *b, const char *step);

/* a step's run (kind, parameters, metrics, artifacts) and its log */
typedef struct step {
    bu *b;
    const char *logname;
    nb_run *run;
    json_t *params, *argv, *warns;
    int64_t id;
    double t0;
} step;
struct nb_model;
nb_err bu_step_begin(bu *b, step *s, const char *kind, const char *model, int64_t parent,
                     const char *logname);
nb_err bu_step_end(step *s, nb_err e, const json_t *out);
void bu_on_warn(void *user, const char *msg);
void bu_on_model(void *user, const struct nb_model *m);
void bu_arg(step *s, const char *a);
/* evaluation input k as the recorded command line's "--input NAME=FILE" arguments (given,
   when not NULL, gets each "NAME=FILE" too) */
void bu_input_args(const bu *b, step *s, int k, json_t *given);
void bu_param(step *s, const char *key, const char *v);
void bu_metric(step *s, const char *name, double v, const char *unit);
void bu_artifact(step *s, const char *role, const char *path);

nb_err bu_estimate(bu *b, const char *detail);
nb_err bu_calibrate(bu *b, int64_t parent, const char *detail);
/* atc into output (.exeom, .dbg) with the bring-up's flags and scale (NULL: none); its
 * run id into *id, its warnings into *warn (a new array) when warn is not NULL */
nb_err bu_compile(bu *b, const char *output, const char *scale, int64_t parent,
                  const char *logname, int64_t *id, json_t **warn);
/* evaluation input k on exeom into out_dir (dump_cfg: the acl.json, or NULL): its JSON
 * (run --json's) into *out, its run id into *id */
nb_err bu_run(bu *b, const char *exeom, int k, const char *out_dir, const char *dump_cfg,
              int64_t parent, const char *logname, json_t **out, int64_t *id);
/* the float reference of evaluation input k into out_dir (golden dumps into golden) */
nb_err bu_infer(bu *b, int k, const char *out_dir, bool dump_all, const char *golden,
                int64_t parent, const char *logname, int64_t *id);
nb_err bu_compare(bu *b, int64_t parent);

/* ---- inputs.c: the model's inputs, the evaluation inputs ---- */
nb_err bu_model_inputs(bu *b);
nb_err bu_pick_eval(bu *b);
bool bu_model_output(const char *model, const char *shape, const char *name);
bool bu_model_is_qdq(const char *model, const char *shape);

/* ---- summary.c ---- */
const char *bu_cos_str(double v, char *buf, size_t len);
json_t *bu_output_metrics(bu *b, const json_t *runs, double *worst);
json_t *bu_saturation_json(const bu *b, double *total);
json_t *bu_summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
                        int64_t exeom_bytes, double wall, bool below);
void bu_record_summary(const bu *b, const json_t *outs, double worst, double sat_total,
                       int64_t exeom_bytes, double wall, const char *sp, const char *rp);

/* ---- fix.c: fp16 saturation's fix, tried and measured ---- */
json_t *bu_saturation_fix(bu *b, double before, int64_t parent);
void bu_fix_clear(const bu *b);
/* atc's warnings' --nb_input_scale advice kept (from a warning's text) */
void bu_atc_advice(bu *b, const char *warning);

/* ---- search.c: the precision and placement search (--target_sqnr) ---- */
/* the search's JSON (summary.json's "search"), or NULL with b->st (cancelled, out of memory,
 * a folder not written); outs: the bring-up's own output metrics */
json_t *bu_search(bu *b, const json_t *outs);
/* OUT/search of an earlier bring-up removed */
void bu_search_clear(const bu *b);

/* ---- dump.c: the input compared layer by layer, run again with its dumps ---- */
nb_err bu_dump_worst(bu *b, const json_t *outs, const char *acl, bool dump_all,
                     int64_t parent);

#endif
