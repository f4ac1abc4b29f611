/* nanobench bring-up: the summary (bu.h): the network-output metrics over the K evaluation
 * inputs through the engine (nb_cmp_output_files), fp16 saturation and the calibration over
 * the steps' JSON, summary.json's object, and the bringup run's own figures. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bu.h"
#include "nb/accucmp.h"

/* a cosine for a message: "undefined" for NaN */
const char *bu_cos_str(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "undefined");
    else
        snprintf(buf, len, "%.5f", v);
    return buf;
}

static json_t *jid(int64_t id) { return id > 0 ? json_integer(id) : json_null(); }

static json_t *jids(const int64_t *ids, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, jid(ids[i]));
    return a;
}

/* ---- the summary's parts ---- */

/* The network outputs against float: accucmp's comparison of each evaluation input's .npy
 * files (run's and infer's, nb_cmp_output_files), per output the mean and worst over the
 * inputs, and the metrics over the inputs together. *worst: the cosine --fail-under-cosine
 * takes (NaN when one is not defined). NULL with b->st. */
json_t *bu_output_metrics(bu *b, const json_t *runs, double *worst)
{
    const json_t *outs0 = json_object_get(json_array_get(runs, 0), "outputs");
    json_t *outs = json_array();
    bool undefined = false;
    *worst = INFINITY;
    const char **npu = calloc((size_t)b->n_eval + 1, sizeof *npu);
    char (*ref)[3400] = calloc((size_t)b->n_eval + 1, sizeof *ref);
    if (!npu || !ref) {
        nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t o = 0; o < json_array_size(outs0); o++) {
        const char *name = nb_json_str_of(json_array_get(outs0, o), "name");
        json_t *jo = json_object();
        json_object_set_new(jo, "name", nb_json_string(name));
        json_array_append_new(outs, jo); /* owned by outs from here */
        for (int k = 0; k < b->n_eval; k++) {
            char refdir[3400];
            npu[k] = nb_json_str_of(json_array_get(json_object_get(json_array_get(runs, (size_t)k),
                                                           "outputs"), o), "file");
            snprintf(refdir, sizeof refdir, "%s/reference/%d", b->outdir, k);
            if (!nb_infer_manifest_file(refdir, name, ref[k], sizeof ref[k])) {
                nb_fail(b->st, NB_ERR_INTERNAL, "infer wrote no tensor '%s' into %s", name, refdir);
                goto fail;
            }
        }
        const char *nd = nb_json_str_of(json_array_get(json_object_get(json_array_get(runs, 0),
                                                               "outputs"), o), "npu_dtype");
        const char *refs[b->n_eval > 0 ? b->n_eval : 1];
        for (int k = 0; k < b->n_eval; k++)
            refs[k] = ref[k];
        nb_cmp_output_files_opts co = {.n_inputs = b->n_eval, .npu = npu, .reference = refs,
                                       .npu_dtype = nd};
        nb_cmp_output_files_result r;
        if (nb_cmp_output_files(&co, &r, b->st)) {
            nb_cmp_output_files_free(&r);
            nb_prefix(b->st, "output '%s'", name);
            goto fail;
        }
        json_t *oj = nb_cmp_output_files_json(&co, &r), *per = json_object_get(oj, "per_input");
        json_object_update(jo, oj);
        json_decref(oj);
        for (int k = 0; k < b->n_eval; k++) { /* what each run was given */
            json_t *files = json_array();
            for (int i = 0; i < b->n_in; i++)
                json_array_append_new(files, nb_json_string(b->eval[k * b->n_in + i]));
            json_object_set_new(json_array_get(per, (size_t)k), "inputs", files);
        }
        if (isnan(r.gate))
            undefined = true;
        else if (r.gate < *worst)
            *worst = r.gate;
        nb_cmp_output_files_free(&r);
    }
    free(npu);
    free(ref);
    if (undefined || isinf(*worst))
        *worst = NAN;
    return outs;
fail:
    free(npu);
    free(ref);
    json_decref(outs);
    return NULL;
}

/* fp16 saturation over the K runs: per task, its count and on how many inputs */
json_t *bu_saturation_json(const bu *b, double *total)
{
    json_t *tasks = json_array();
    *total = 0;
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        const json_t *ts = json_object_get(json_object_get(json_array_get(b->runs, k),
                                                           "saturation"), "tasks");
        for (size_t i = 0; i < json_array_size(ts); i++) {
            const json_t *t = json_array_get(ts, i);
            json_t *hit = NULL;
            for (size_t q = 0; q < json_array_size(tasks) && !hit; q++)
                if (!strcmp(nb_json_str_of(json_array_get(tasks, q), "name"), nb_json_str_of(t, "name")))
                    hit = json_array_get(tasks, q);
            if (!hit) {
                hit = json_object();
                json_object_set_new(hit, "name", nb_json_string(nb_json_str_of(t, "name")));
                json_object_set_new(hit, "op_type", nb_json_string(nb_json_str_of(t, "op_type")));
                json_object_set_new(hit, "index", json_integer(json_integer_value(
                                                      json_object_get(t, "index"))));
                json_object_set_new(hit, "count", json_integer(0));
                json_object_set_new(hit, "inputs", json_integer(0));
                json_array_append_new(tasks, hit);
            }
            json_int_t c = json_integer_value(json_object_get(t, "count"));
            json_object_set_new(hit, "count",
                                json_integer(json_integer_value(json_object_get(hit, "count")) + c));
            json_object_set_new(hit, "inputs",
                                json_integer(json_integer_value(json_object_get(hit, "inputs")) + 1));
            *total += (double)c;
        }
    }
    json_t *s = json_object();
    json_object_set_new(s, "total", json_integer((json_int_t)*total));
    json_object_set_new(s, "tasks", tasks);
    return s;
}

/* The calibration as calibrate's JSON gives it (its algorithms, worst layers, INT16
 * advice, fake-quant output), with what bringup asked for. */
static json_t *calibration_json(const bu *b)
{
    json_t *jc = json_object();
    const json_t *layers = json_object_get(b->cal, "layers");
    json_object_set_new(jc, "algorithm", nb_json_string(nb_json_str_of(b->cal, "algorithms")));
    json_object_set_new(jc, "requested", b->algo ? nb_json_string(b->algo) : json_null());
    json_object_set_new(jc, "qat", json_boolean(b->qat));
    json_object_set_new(jc, "batches", nb_json_num(nb_json_num_of(b->cal, "batches")));
    json_object_set_new(jc, "layers", json_integer((json_int_t)json_array_size(layers)));
    static const char *const keep[] = {"worst_layers", "suggested_int16"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(b->cal, keep[k]);
        json_object_set_new(jc, keep[k], json_is_array(v) ? json_deep_copy(v) : json_array());
    }
    json_object_set_new(jc, "output_sqnr_db", nb_json_num(nb_json_num_of(b->cal, "output_sqnr_db")));
    json_object_set_new(jc, "output_cosine", nb_json_num(nb_json_num_of(b->cal, "output_cosine")));
    json_object_set_new(jc, "eval_set", nb_json_string(nb_json_str_of(b->cal, "eval_set")));
    json_object_set_new(jc, "deploy_model", nb_json_string(b->deploy));
    json_object_set_new(jc, "record", nb_json_string(nb_json_str_of(b->cal, "record")));
    return jc;
}

/* the value of key in o (a new reference), null when missing */
static json_t *copy(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? json_incref(v) : json_null();
}

json_t *bu_summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
                        int64_t exeom_bytes, double wall, bool below)
{
    const json_t *run0 = json_array_get(b->runs, 0);
    json_t *s = json_object();
    json_object_set_new(s, "model", nb_json_string(b->model));
    json_object_set_new(s, "soc_version", nb_json_string(b->soc ? b->soc : "Ascend035A"));
    json_object_set_new(s, "out", nb_json_string(b->outdir));
    json_object_set_new(s, "wall_s", json_real(wall));
    json_t *je = json_object();
    static const char *const items[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE",
                                        "TOTAL_NET_OP_TYPE", "NOT_SUPPORT_OP_TYPE", "macs"};
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        json_object_set_new(je, items[i], copy(b->est, items[i]));
    json_object_set_new(s, "estimate", je);
    json_object_set_new(s, "calibration", calibration_json(b));
    json_t *jx = json_object();
    json_object_set_new(jx, "exeom", nb_json_string(b->exeom));
    json_object_set_new(jx, "exeom_bytes", json_integer((json_int_t)exeom_bytes));
    json_object_set_new(jx, "nb_input_scale", b->in_scale ? nb_json_string(b->in_scale)
                                                          : json_null());
    json_object_set_new(jx, "warnings", b->atc_warn ? json_incref(b->atc_warn) : json_array());
    json_object_set_new(jx, "suggested_nb_input_scale", b->suggest_spec ? nb_json_string(b->suggest_spec)
                                                                        : json_null());
    json_object_set_new(s, "compile", jx);
    json_t *jn = json_object();
    static const char *const npu[] = {"cycles", "ms_64mhz", "ms_200mhz", "macs", "npu_cycles",
                                      "cpu_cycles", "switches", "switch_cycles"};
    for (size_t i = 0; i < sizeof npu / sizeof npu[0]; i++)
        json_object_set_new(jn, npu[i], copy(run0, npu[i]));
    /* the cycles of every evaluation input: an If model's differ with the branch taken
       (issue 37: they came from the first input alone, unsaid) */
    double cmin = INFINITY, cmax = -INFINITY;
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        double c = nb_json_num_of(json_array_get(b->runs, k), "cycles");
        if (isfinite(c))
            cmin = c < cmin ? c : cmin, cmax = c > cmax ? c : cmax;
    }
    json_object_set_new(jn, "cycles_min", isfinite(cmin) ? json_real(cmin) : json_null());
    json_object_set_new(jn, "cycles_max", isfinite(cmax) ? json_real(cmax) : json_null());
    json_object_set_new(jn, "cycles_inputs", json_integer((json_int_t)json_array_size(b->runs)));
    json_object_set_new(jn, "saturation", sat);
    json_object_set_new(jn, "dump", nb_json_string(b->dumped));
    json_object_set_new(s, "npu", jn);
    /* the MCU's CPU: what runs there, and why */
    json_t *jp = json_object();
    json_object_set_new(jp, "cpu_nodes", b->cpu_nodes ? nb_json_string(b->cpu_nodes) : json_null());
    json_object_set_new(jp, "source", json_string(!b->cpu_nodes ? (b->o->auto_place
                                                                    ? "auto_place (no advice)"
                                                                    : "none")
                                                  : b->auto_cpu ? "auto_place"
                                                                   : "cpu_nodes"));
    int cpu_tasks = 0; /* the run's tasks on the MCU's CPU: --cpu_nodes and unsupported ops */
    const json_t *rt = json_object_get(run0, "tasks");
    for (size_t i = 0; i < json_array_size(rt); i++)
        cpu_tasks += !strcmp(nb_json_str_of(json_array_get(rt, i), "unit"), "cpu");
    json_object_set_new(jp, "cpu_tasks", json_integer(cpu_tasks));
    json_object_set_new(jp, "advice", b->advice ? json_incref(b->advice) : json_null());
    json_object_set_new(s, "placement", jp);
    json_t *jev = json_object(), *jin = json_array();
    json_object_set_new(jev, "count", json_integer(b->n_eval));
    json_object_set_new(jev, "available", json_integer(b->eval_avail > b->n_eval ? b->eval_avail
                                                                                 : b->n_eval));
    json_object_set_new(jev, "source", json_string(b->eval_random     ? "random"
                                                   : b->eval_from_dir ? "eval_dir"
                                                                      : "data_dir"));
    for (int i = 0; i < b->n_in; i++)
        json_array_append_new(jin, nb_json_string(b->in_name[i]));
    json_object_set_new(jev, "model_inputs", jin);
    json_object_set_new(s, "evaluation", jev);
    json_object_set_new(s, "outputs", outs);
    json_object_set_new(s, "worst_cosine", nb_json_num(worst));
    json_t *jcm = json_object();
    static const char *const ck[] = {"verdict", "verdict_text", "tensors", "compared",
                                     "over_threshold", "thresholds", "first_over_threshold",
                                     "largest_sqnr_drop", "csv"};
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++)
        json_object_set_new(jcm, ck[i], copy(b->cmp, ck[i]));
    json_object_set_new(jcm, "golden_dump", nb_json_string(b->gold));
    /* the evaluation input compared layer by layer: the one of the lowest output SQNR */
    json_object_set_new(jcm, "input", json_integer(b->cmp_input));
    json_object_set_new(jcm, "input_rule",
                        json_string(b->cmp_rule ? b->cmp_rule : "the lowest output SQNR"));
    json_t *cf = json_array();
    for (int i = 0; i < b->n_in && b->eval; i++)
        json_array_append_new(cf, nb_json_string(b->eval[b->cmp_input * b->n_in + i]));
    json_object_set_new(jcm, "input_files", cf);
    json_object_set_new(s, "compare", jcm);
    json_t *jr = json_object();
    json_object_set_new(jr, "bringup", jid(b->o->run ? nb_run_id(b->o->run) : 0));
    json_object_set_new(jr, "estimate", jid(b->id_est));
    json_object_set_new(jr, "calibrate", jid(b->id_cal));
    json_object_set_new(jr, "compile", jid(b->id_atc));
    json_object_set_new(jr, "run", jids(b->id_run, b->n_eval));
    json_object_set_new(jr, "infer", jids(b->id_inf, b->n_eval));
    json_object_set_new(jr, "run_dumped", jid(b->id_dump_run));
    json_object_set_new(jr, "infer_dumped", jid(b->id_dump_inf));
    json_object_set_new(jr, "compare", jid(b->id_cmp));
    json_object_set_new(s, "runs", jr);
    json_t *jst = json_array();
    for (int k = 0; k < N_STEPS; k++) {
        json_t *x = json_object();
        json_object_set_new(x, "step", json_string(nb_bringup_step_name[k]));
        json_object_set_new(x, "ms", json_real(b->step_ms[k]));
        json_array_append_new(jst, x);
    }
    json_object_set_new(s, "steps", jst);
    json_object_set_new(s, "fail_under_cosine", b->o->has_fail_cos ? json_real(b->o->fail_under_cosine)
                                                                : json_null());
    json_object_set_new(s, "status", json_string(below ? "below_cosine" : "ok"));
    return s;
}


/* the bringup's own run: the numbers of the summary, the files that matter */
void bu_record_summary(const bu *b, const json_t *outs, double worst, double sat_total,
                       int64_t exeom_bytes, double wall, const char *sp, const char *rp)
{
    nb_run *r = b->o->run;
    if (!r)
        return;
    const json_t *run0 = json_array_get(b->runs, 0);
    static const char *const em[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE"};
    for (int i = 0; i < 3; i++)
        nb_run_metric(r, em[i], nb_json_num_of(b->est, em[i]), "B", NULL);
    nb_run_metric(r, "not_supported_op_types",
                  (double)json_object_size(json_object_get(b->est, "NOT_SUPPORT_OP_TYPE")), "",
                  NULL);
    nb_run_metric(r, "exeom_bytes", (double)exeom_bytes, "B", NULL);
    nb_run_metric(r, "cycles", nb_json_num_of(run0, "cycles"), "cycles", NULL);
    nb_run_metric(r, "npu_ms_64mhz", nb_json_num_of(run0, "ms_64mhz"), "ms", NULL);
    nb_run_metric(r, "npu_ms_200mhz", nb_json_num_of(run0, "ms_200mhz"), "ms", NULL);
    nb_run_metric(r, "fp16_saturations", sat_total, "", NULL);
    const json_t *o0 = json_array_get(outs, 0); /* the first output's, for history diff */
    nb_run_metric(r, "output_cosine_mean", nb_json_num_of(o0, "cosine_mean"), "", NULL);
    nb_run_metric(r, "output_cosine_worst", nb_json_num_of(o0, "cosine_worst"), "", NULL);
    nb_run_metric(r, "output_sqnr_db_mean", nb_json_num_of(o0, "sqnr_db_mean"), "dB", NULL);
    nb_run_metric(r, "output_sqnr_db_worst", nb_json_num_of(o0, "sqnr_db_worst"), "dB", NULL);
    nb_run_metric(r, "output_pooled_cosine", nb_json_num_of(o0, "pooled_cosine"), "", NULL);
    nb_run_metric(r, "eval_inputs", b->n_eval, "", NULL);
    nb_run_metric(r, "worst_output_cosine", worst, "", NULL);
    nb_run_metric(r, "layers_over_threshold", nb_json_num_of(b->cmp, "over_threshold"), "", NULL);
    nb_run_metric(r, "wall_s", wall, "s", NULL);
    nb_status st = {0};
    const char *art[][2] = {{"exeom", b->exeom}, {"summary", sp}, {"report", rp}};
    for (int i = 0; i < 3; i++)
        if (art[i][1] && art[i][1][0] && nb_run_artifact(r, art[i][0], art[i][1], &st) &&
            b->h && b->h->warn) {
            char w[1100];
            snprintf(w, sizeof w, "%s; not recorded as an artifact", st.msg);
            b->h->warn(b->h->user, w);
        }
}
