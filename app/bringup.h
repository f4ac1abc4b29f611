/* nanobench bringup: the state shared by the orchestration (cmd_bringup.c) and the summary
 * (bringup_summary.c: the network-output metrics through the engine, the one-screen text and
 * summary.json). */
#ifndef NB_APP_BRINGUP_H
#define NB_APP_BRINGUP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

enum { N_STEPS = 6, MAX_IN = 64, MAX_EVAL = 1000, MAX_ARGS = 160, WIDTH = 79, LABEL = 11 };
#define NBSP '\037' /* a space the summary does not break a line at */

/* ---- the bringup's state ---- */
typedef struct bu {
    /* flags */
    const char *model, *data_dir, *shape, *types, *cfg, *batch, *algo, *eval_dir, *out, *soc,
        *fp16, *otype, *out_nodes, *in_scale, *threshold;
    int eval_count;
    double fail_cos;
    bool has_fail_cos, json;
    /* derived */
    char stem[256], outdir[3000], exeom[3400], deploy[3400], gold[3400];
    char fp16_all[4096];  /* every float input, ';'-separated: atc's default */
    const char *db;       /* the children's --db */
    int n_in;
    char *in_name[MAX_IN]; /* in --data_dir order */
    int n_eval;
    char **eval;           /* [k * n_in + i]: input i of evaluation input k */
    bool eval_from_dir;
    bool tty;
    int n_logs;
    /* results */
    json_t *est, *cal, *cmp, *runs; /* the children's JSON; runs: one per evaluation input */
    json_t *atc_warn;               /* atc's warning lines, without "nanobench: warning: " */
    char suggest[256];              /* the --nb_input_scale atc suggests, "" if none */
    int64_t id_est, id_cal, id_atc, id_cmp;
    int64_t id_run[MAX_EVAL], id_inf[MAX_EVAL];
    double step_ms[N_STEPS];
    double t0;
} bu;

/* a JSON number (NaN when absent) and string ("" when absent) of a child's output */
double bu_num(const json_t *o, const char *key);
const char *bu_str(const json_t *o, const char *key);
/* the network outputs over the K evaluation inputs (nb_cmp_over_inputs), the worst cosine
 * into *worst; NULL with *rc the exit status after the message */
json_t *output_metrics(const bu *b, const json_t *outs0, double *worst, int *rc);
json_t *saturation_json(const bu *b, double *total);
json_t *calibration_json(const bu *b);
json_t *summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
                            int64_t exeom_bytes, const char *dumped, double wall, bool below);
/* the steps' names: estimate, calibrate, atc, run, infer, compare */
extern const char *const step_name[N_STEPS];
/* a cosine as the summary shows it (5 decimals; "undefined" for NaN) */
const char *cos_str(double v, char *buf, size_t len);
/* the one-screen summary of s (summary_json's) on stdout */
void print_text(const bu *b, const json_t *s);

#endif
