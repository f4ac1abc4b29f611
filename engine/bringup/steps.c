/* nanobench bring-up: its steps in process (bu.h). Each step calls its engine's entry point
 * with the names and paths as data, records a run as its command does (kind, parameters,
 * metrics, artifacts, the model's row), keeps its JSON (its command's --json) and writes it
 * to OUT/log/<step>.out, its warnings to .err. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bu.h"
#include "nb/accucmp.h"
#include "nb/estimate.h"
#include "nb/exeom.h"
#include "nb/quant.h"
#include "nb/ref.h"
#include "nb/run.h"

const char *const nb_bringup_step_name[NB_BRINGUP_STEPS] = {"estimate", "calibrate", "atc",
                                                             "run", "infer", "compare"};

double bu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool bu_cancelled(const bu *b) { return b->h && b->h->cancel && *b->h->cancel; }

nb_err bu_interrupted(bu *b)
{
    return nb_fail(b->st, NB_ERR_CANCELLED, "interrupted during %s", b->stage ? b->stage : "");
}

void bu_step(const bu *b, int step, const char *detail, const char *progress)
{
    if (b->h && b->h->step && !b->quiet)
        b->h->step(b->h->user, step, detail, progress, false, 0);
}

void bu_step_done(const bu *b, int step, const char *detail)
{
    if (b->h && b->h->step && !b->quiet)
        b->h->step(b->h->user, step, detail, "", true, b->step_ms[step]);
}

/* The recorded command line's "--input NAME=FILE" of evaluation input k, each input (a record
 * of what fed it, never parsed); given (or NULL) gets each "NAME=FILE" too. */
void bu_input_args(const bu *b, step *s, int k, json_t *given)
{
    for (int i = 0; i < b->n_in; i++) {
        const char *f = b->eval[k * b->n_in + i];
        size_t l = strlen(b->in_name[i]) + strlen(f) + 2;
        char *v = malloc(l);
        if (v) {
            snprintf(v, l, "%s=%s", b->in_name[i], f);
            bu_arg(s, "--input");
            bu_arg(s, v);
            if (given)
                json_array_append_new(given, nb_json_string(v));
        }
        free(v);
    }
}

/* fmt formatted to one hook (warn or note), when the front end gave it */
static void say(const bu *b, void (*hook)(void *, const char *), const char *fmt, va_list ap)
{
    if (!hook)
        return;
    char msg[1200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    hook(b->h->user, msg);
}

void bu_warn(const bu *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(b, b->h ? b->h->warn : NULL, fmt, ap);
    va_end(ap);
}

void bu_note(const bu *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(b, b->h ? b->h->note : NULL, fmt, ap);
    va_end(ap);
}

nb_err bu_step_failed(bu *b, const char *step)
{
    if (b->st->code == NB_ERR_CANCELLED)
        return bu_interrupted(b);
    return nb_prefix(b->st, "%s failed", step);
}

/* ---- a step's run and log ---- */

void bu_on_warn(void *user, const char *msg)
{
    json_array_append_new(((step *)user)->warns, nb_json_string(msg));
}

void bu_on_model(void *user, const nb_model *m)
{
    step *s = user;
    if (!s->run)
        return;
    json_t *in = nb_values_json(m->graph, m->graph->inputs, m->graph->n_inputs);
    json_t *out = nb_values_json(m->graph, m->graph->outputs, m->graph->n_outputs);
    char *si = json_dumps(in, JSON_COMPACT), *so = json_dumps(out, JSON_COMPACT);
    nb_run_set_model_info(s->run, m->opset, si, so, NULL);
    free(si);
    free(so);
    json_decref(in);
    json_decref(out);
}

void bu_arg(step *s, const char *a) { json_array_append_new(s->argv, nb_json_string(a)); }

void bu_param(step *s, const char *key, const char *v)
{
    if (v)
        json_object_set_new(s->params, key, nb_json_string(v));
}

void bu_metric(step *s, const char *name, double v, const char *unit)
{
    if (s->run)
        nb_run_metric(s->run, name, v, unit, NULL);
}

void bu_artifact(step *s, const char *role, const char *path)
{
    nb_status st = {0};
    if (s->run && nb_run_artifact(s->run, role, path, &st))
        bu_on_warn(s, st.msg);
}

/* The step's run begun (kind on model, child of parent): the equivalent command line in
 * its parameters ("argv", as data), the other parameters added as it goes. */
nb_err bu_step_begin(bu *b, step *s, const char *kind, const char *model, int64_t parent,
                     const char *logname)
{
    *s = (step){.b = b, .logname = logname, .params = json_object(), .argv = json_array(),
                .warns = json_array(), .t0 = bu_now()};
    json_object_set_new(s->params, "argv", s->argv);
    bu_arg(s, "nanobench");
    if (!b->o->db)
        return NB_OK;
    char *pj = json_dumps(s->params, JSON_COMPACT);
    nb_status st = {0};
    nb_err e = nb_run_begin(b->o->db, kind, model, parent, pj, &s->run, &st);
    free(pj);
    if (e) {
        s->run = NULL;
        if (b->o->require_record) {
            *b->st = st;
            return e;
        }
        char w[1100];
        snprintf(w, sizeof w, "%s; the run is not recorded", st.msg);
        bu_on_warn(s, w);
        return NB_OK;
    }
    s->id = nb_run_id(s->run);
    return NB_OK;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    if (text)
        fputs(text, f);
    fclose(f);
}

/* The step's end: its run ended (ok when e is 0, else with st's message), its JSON (out,
 * may be NULL) and warnings logged. Returns e. */
nb_err bu_step_end(step *s, nb_err e, const json_t *out)
{
    bu *b = s->b;
    char path[3400];
    if (b->argv_kept)
        json_array_append_new(b->argv_kept, json_deep_copy(s->argv));
    snprintf(path, sizeof path, "%s/log/%s.out", b->outdir, s->logname);
    char *txt = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (txt) {
        size_t l = strlen(txt);
        char *t2 = realloc(txt, l + 2);
        if (t2) {
            txt = t2;
            memcpy(txt + l, "\n", 2);
        }
    }
    write_text(path, txt ? txt : "");
    free(txt);
    if (s->run) {
        char *pj = json_dumps(s->params, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (pj)
            nb_run_set_params(s->run, pj, NULL);
        free(pj);
        nb_status st = {0};
        char why[1200];
        const char *msg = e ? b->st->msg : NULL;
        if (e == NB_ERR_CANCELLED) { /* recorded as interrupted (history's derived status) */
            int sig = b->h && b->h->cancel ? (int)*b->h->cancel : 0;
            snprintf(why, sizeof why, "interrupted (%s): %s",
                     sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP
                                                                                ? "SIGHUP"
                                                                                : "cancelled",
                     b->st->msg);
            msg = why;
        }
        if (nb_run_end(s->run, e == NB_OK, msg, &st)) {
            char w[1100];
            snprintf(w, sizeof w, "%s; the run is not recorded", st.msg);
            bu_on_warn(s, w);
            if (!e && b->o->require_record) {
                *b->st = st;
                e = st.code;
            }
        }
        s->run = NULL;
    }
    snprintf(path, sizeof path, "%s/log/%s.err", b->outdir, s->logname);
    FILE *f = fopen(path, "w");
    for (size_t i = 0; f && i < json_array_size(s->warns); i++)
        fprintf(f, "nanobench: warning: %s\n", json_string_value(json_array_get(s->warns, i)));
    if (f && e)
        fprintf(f, "nanobench: %s\n", b->st->msg);
    if (f)
        fclose(f);
    json_decref(s->params);
    json_decref(s->warns);
    return e;
}

/* nb_estimate_json's text as a JSON object */
static json_t *estimate_json(const nb_estimate *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    int r = nb_estimate_json(e, f);
    fclose(f);
    json_error_t je;
    json_t *o = r == 0 && buf ? json_loads(buf, 0, &je) : NULL;
    free(buf);
    return o;
}

/* ---- estimate ---- */

static void estimate_params(bu *b, step *s)
{
    const char *a[] = {"estimate", "-m", b->model, "-p", "--json"};
    for (int i = 0; i < 5; i++)
        bu_arg(s, a[i]);
    const char *f[][2] = {{"--input_shape", b->shape}, {"--soc_version", b->soc},
                          {"--input_fp16_nodes", b->fp16}, {"--output_type", b->otype},
                          {"--out_nodes", b->out_nodes}, {"--cpu_nodes", b->cpu_nodes}};
    for (int i = 0; i < 6; i++)
        if (f[i][1]) {
            bu_arg(s, f[i][0]);
            bu_arg(s, f[i][1]);
        }
    bu_param(s, "model", b->model);
    bu_param(s, "input_shape", b->shape);
    bu_param(s, "soc_version", b->soc ? b->soc : "Ascend035A");
    bu_param(s, "weight_bits", "8");
    bu_param(s, "out_nodes", b->out_nodes);
    bu_param(s, "cpu_nodes", b->cpu_nodes);
}

nb_err bu_estimate(bu *b, const char *detail)
{
    step s;
    b->stage = "estimate";
    bu_step(b, 0, detail, "");
    double t0 = bu_now();
    nb_err e = bu_step_begin(b, &s, "estimate", b->model, b->o->run ? nb_run_id(b->o->run) : 0,
                          "1-estimate");
    if (e)
        return bu_step_failed(b, "estimate");
    estimate_params(b, &s);
    const char *soc = b->soc ? b->soc : "Ascend035A";
    nb_estimate_result r = {0};
    json_t *jo = NULL;
    if (strcmp(soc, "Ascend035A") && strcmp(soc, "Ascend035B"))
        e = nb_fail(b->st, NB_ERR_ARG, "estimate: --soc_version is Ascend035A or Ascend035B");
    else if (b->otype && strcmp(b->otype, "FP16") && strcmp(b->otype, "FP32"))
        e = nb_fail(b->st, NB_ERR_ARG, "estimate: --output_type is FP16 or FP32");
    if (!e) {
        nb_estimate_opts o = {.model = b->model, .input_shape = b->shape,
                              .out_nodes = b->out_nodes,
                              .npu = {.weight_bits = 8, .soc_version = soc,
                                      .input_fp16_nodes = b->fp16,
                                      .output_fp32 = b->otype && !strcmp(b->otype, "FP32"),
                                      .cpu_nodes = b->cpu_nodes},
                              .on_model = bu_on_model, .user = &s};
        e = nb_estimate_file(&o, &r, b->st);
    }
    if (!e) {
        if (r.batch_note)
            bu_param(&s, "batch_taken_as_1", r.batch_note);
        const nb_estimate *m = &r.e;
        bu_metric(&s, "TOTAL_WEIGHT_SIZE", (double)m->weight_bytes, "B");
        bu_metric(&s, "TOTAL_MEM_SIZE", (double)m->mem_bytes, "B");
        bu_metric(&s, "TOTAL_EXEOM_SIZE", (double)m->exeom_bytes, "B");
        bu_metric(&s, "arena", (double)m->arena.arena, "B");
        bu_metric(&s, "arena_lower_bound", (double)m->arena.lower_bound, "B");
        bu_metric(&s, "macs", (double)m->macs, "");
        bu_metric(&s, "not_supported_op_types", m->n_unsupported, "");
        bu_metric(&s, "estimate_ms", r.ms, "ms");
        if (!(jo = estimate_json(m)))
            e = nb_fail(b->st, NB_ERR_NOMEM, "estimate: out of memory");
    }
    nb_estimate_result_free(&r);
    e = bu_step_end(&s, e, jo);
    b->step_ms[0] += (bu_now() - t0) * 1e3;
    if (e) {
        json_decref(jo);
        return bu_step_failed(b, "estimate");
    }
    json_decref(b->est);
    b->est = jo;
    b->id_est = s.id;
    return NB_OK;
}
