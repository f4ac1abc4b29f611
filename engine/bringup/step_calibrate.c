/* nanobench bring-up: the calibration step (nb_calibrate, or nb_qat_import for a Q/DQ
 * model), recorded as `calibrate` records it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bu.h"
#include "nb/ir.h"
#include "nb/quant.h"

typedef struct cal_ctx {
    step *s;
    const char *detail;
} cal_ctx;

/* a calibration or evaluation batch done: the step's progress */
static void on_progress(void *user, const char *pass, int done, int total)
{
    cal_ctx *c = user;
    char p[96];
    snprintf(p, sizeof p, "%s %d/%d", pass, done, total);
    bu_step(c->s->b, 1, c->detail, p);
}

static void cal_warn(void *user, const char *msg) { bu_on_warn(((cal_ctx *)user)->s, msg); }

static void cal_model(void *user, const nb_model *m) { bu_on_model(((cal_ctx *)user)->s, m); }

/* A Q/DQ model's scales imported: the deploy model and the record, calibrate's JSON. */
static nb_err import_qdq(bu *b, step *s, json_t **out)
{
    const char *a[] = {"calibrate", "--from_qdq", b->model, "--save_path", b->save, "--json"};
    for (int i = 0; i < 6; i++)
        bu_arg(s, a[i]);
    bu_param(s, "model", b->model);
    bu_param(s, "from_qdq", "true");
    char deploy[4200], record[4200];
    nb_qdq_model q = {0};
    nb_err e = nb_qat_import(b->model, b->save, &q, deploy, record, sizeof deploy, b->st);
    if (!e) {
        bu_artifact(s, "deploy_model", deploy);
        bu_artifact(s, "record", record);
        bu_metric(s, "layers", q.n, "");
        *out = nb_qat_json(b->model, &q, deploy, record);
    }
    nb_qdq_model_free(&q);
    return e;
}

static void cal_args(bu *b, step *s)
{
    const char *a[] = {"calibrate", "--model", b->model, "--save_path", b->save, "--data_dir",
                       b->data_dir};
    for (int i = 0; i < 7; i++)
        bu_arg(s, a[i]);
    const char *f[][2] = {{"--input_shape", b->shape}, {"--data_types", b->types},
                          {"--calibration_config", b->cfg},
                          {"--batch_num", b->batch ? b->batch : b->cfg ? NULL : "all"},
                          {"--algo", b->algo}, {"--eval_dir", b->eval_dir},
                          {"--cpu_nodes", b->cpu_nodes},
                          {"--weight_round", b->adaround ? "adaround" : NULL}};
    for (int i = 0; i < 8; i++)
        if (f[i][1]) {
            bu_arg(s, f[i][0]);
            bu_arg(s, f[i][1]);
        }
    bu_arg(s, "--json");
    bu_arg(s, "--progress");
    bu_param(s, "model", b->model);
    bu_param(s, "input_shape", b->shape);
}

/* calibrate's options from the bring-up's; an error for a bad --algo or --batch_num */
static nb_err cal_opts(bu *b, nb_calibrate_opts *o)
{
    *o = (nb_calibrate_opts){.model = b->model, .input_shape = b->shape, .save_path = b->save,
                             .data_dirs = b->data_dir, .data_types = b->types,
                             .eval_dirs = b->eval_dir, .config_path = b->cfg,
                             .cpu_nodes = b->cpu_nodes,
                             .cancel = b->h ? b->h->cancel : NULL};
    if (b->adaround) {
        o->weight_round_set = true;
        o->weight_round = NB_ROUND_ADAROUND;
    }
    if (b->algo && !(o->algo_set = nb_act_algo_parse(b->algo, &o->algo)))
        return nb_fail(b->st, NB_ERR_ARG, "calibrate: --algo is ifmr, hfmg, minmax, percentile, "
                       "kl or auto, not '%s'", b->algo);
    const char *batch = b->batch ? b->batch : b->cfg ? NULL : "all";
    if (batch && !strcmp(batch, "all")) {
        o->batch_num = -1;
    } else if (batch) {
        char *end;
        errno = 0;
        long n = strtol(batch, &end, 10);
        if (errno || *end || end == batch || n < 1 || n > 1000000)
            return nb_fail(b->st, NB_ERR_ARG, "calibrate: --batch_num is a whole number from 1 "
                           "or all, not '%s'", batch);
        o->batch_num = (int)n;
    }
    return NB_OK;
}

/* calibrate's figures and per-layer rows on its run */
static void cal_record(step *s, const nb_calibrate_result *r, const char *algo,
                       const char *cfg)
{
    bu_artifact(s, "record", r->record);
    bu_artifact(s, "fake_quant_model", r->fake_quant);
    bu_artifact(s, "deploy_model", r->deploy);
    bu_metric(s, "calibration_ms", r->calibration_ms, "ms");
    bu_metric(s, "files_and_evaluation_ms", r->files_and_evaluation_ms, "ms");
    if (isfinite(r->output_sqnr_db))
        bu_metric(s, "output_sqnr_db", r->output_sqnr_db, "dB");
    if (!isnan(r->output_cosine))
        bu_metric(s, "output_cosine", r->output_cosine, "");
    if (isfinite(r->output_worst_cosine))
        bu_metric(s, "output_worst_cosine", r->output_worst_cosine, "");
    if (!isnan(r->output_max_abs_diff))
        bu_metric(s, "output_max_abs_diff", r->output_max_abs_diff, "");
    for (int k = 0; r->n_outputs > 1 && k < r->n_outputs; k++) {
        if (!r->outputs[k].compared)
            continue;
        size_t kl = strlen(r->outputs[k].name) + 32;
        char *key = malloc(kl);
        if (!key)
            continue;
        snprintf(key, kl, "output_sqnr_db/%s", r->outputs[k].name);
        bu_metric(s, key, r->outputs[k].sqnr_db, "dB");
        snprintf(key, kl, "output_max_abs_diff/%s", r->outputs[k].name);
        bu_metric(s, key, r->outputs[k].max_abs_diff, "");
        free(key);
    }
    char v[32];
    snprintf(v, sizeof v, "%d", r->batch_num);
    bu_param(s, "batch_num", v);
    bu_param(s, "algo", algo ? algo : nb_act_algo_name(r->algo));
    snprintf(v, sizeof v, "%d", r->act_bits);
    bu_param(s, "act_bits", v);
    snprintf(v, sizeof v, "%d", r->weight_bits);
    bu_param(s, "weight_bits", v);
    bu_param(s, "bias_correction", "on");
    if (cfg)
        bu_artifact(s, "calibration_config", cfg);
    static const char *const cols[] = {"act_bits", "weight_bits", "clip_min", "clip_max",
                                       "scale_d", "offset_d", "act_sqnr_db", "weight_sqnr_db",
                                       "output_sqnr_db", "output_cosine", "batches", "scale_h",
                                       "h_sqnr_db", "r_sqnr_db"};
    for (int i = 0; s->run && i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        double x[14] = {l->act_bits, l->weight_bits, l->clip_min, l->clip_max, l->scale_d,
                        l->offset_d, l->act_sqnr, l->w_sqnr, l->out_sqnr, l->out_cos,
                        l->batches, l->scale_h, l->h_sqnr, l->r_sqnr};
        for (int k = 0; k < 14; k++)
            if (!isfinite(x[k]))
                x[k] = NAN;
        nb_run_layer(s->run, l->name, l->fused_bn ? "Conv+BN" : l->op_type, l->rnn ? 14 : 11,
                     cols, x, NULL);
    }
}

nb_err bu_calibrate(bu *b, int64_t parent, const char *detail)
{
    step s;
    b->stage = "calibrate";
    double t0 = bu_now();
    nb_err e = bu_step_begin(b, &s, "calibrate", b->model, parent, "2-calibrate");
    if (e)
        return bu_step_failed(b, "calibrate");
    json_t *jo = NULL;
    if (b->qat) {
        e = import_qdq(b, &s, &jo);
    } else {
        cal_args(b, &s);
        nb_calibrate_opts o;
        cal_ctx c = {&s, detail};
        e = cal_opts(b, &o);
        o.progress = on_progress;
        o.warn = cal_warn;
        o.on_model = cal_model;
        o.user = &c;
        nb_calibrate_result r;
        memset(&r, 0, sizeof r);
        if (!e && !(e = nb_calibrate(&o, &r, b->st))) {
            cal_record(&s, &r, b->algo, b->cfg);
            jo = nb_calibrate_json(&r);
        }
        nb_calibrate_result_free(&r);
    }
    if (!e && !jo)
        e = nb_fail(b->st, NB_ERR_NOMEM, "calibrate: out of memory");
    e = bu_step_end(&s, e, jo);
    b->step_ms[1] += (bu_now() - t0) * 1e3;
    if (e) {
        json_decref(jo);
        return bu_step_failed(b, "calibrate");
    }
    json_decref(b->cal);
    b->cal = jo;
    b->id_cal = s.id;
    return NB_OK;
}
