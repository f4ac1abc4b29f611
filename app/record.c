/* nanobench CLI: recording each command's run in the run database (include/nb/db.h).
 *
 * A command calls rec_start() once its flags are parsed, adds parameters, metrics and
 * artifacts as it goes, and main() ends the run with the exit status and the last error
 * line. When the database cannot be used the command still does its job and one warning
 * line says the run is not recorded, unless --require-record was given (exit 2). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

cli_rec g_rec;

static void warn_not_recorded(const nb_status *st)
{
    fprintf(stderr, "nanobench: warning: %s; the run is not recorded\n", st->msg);
}

int rec_start(const char *kind, const char *model_path, int argc, char **argv)
{
    if (g_rec.no_record)
        return 0;
    g_rec.params = json_object();
    json_t *av = json_array();
    if (g_rec.argv) { /* as typed: "nanobench", global options and all */
        argc = g_rec.argc;
        argv = g_rec.argv;
    }
    for (int i = 0; i < argc; i++)
        json_array_append_new(av, nb_json_string(argv[i]));
    json_object_set_new(g_rec.params, "argv", av);
    nb_status st = {0};
    char *pj = json_dumps(g_rec.params, JSON_COMPACT | JSON_PRESERVE_ORDER);
    nb_err e = nb_db_open(g_rec.db_path, &g_rec.db, &st);
    if (!e)
        e = nb_run_begin(g_rec.db, kind, model_path, g_rec.parent, pj, &g_rec.run, &st);
    free(pj);
    if (e) {
        nb_db_close(g_rec.db);
        g_rec.db = NULL;
        if (st.code == NB_ERR_ARG || g_rec.require_record) { /* a wrong --parent is a bad flag */
            cli_error(&st);
            return 2;
        }
        warn_not_recorded(&st);
        return 0;
    }
    g_rec.run_id = nb_run_id(g_rec.run);
    return 0;
}

int rec_start_model(const char *kind, const char *model, const char *shape, int argc,
                    char **argv)
{
    int rc = rec_start(kind, model, argc, argv);
    if (rc)
        return rc;
    rec_param("model", "%s", model);
    if (shape)
        rec_param("input_shape", "%s", shape);
    return 0;
}

bool rec_active(void) { return g_rec.run != NULL; }

void rec_param(const char *key, const char *fmt, ...)
{
    if (!g_rec.params)
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(g_rec.params, key, nb_json_string(buf));
}

void rec_param_json(const char *key, void *json)
{
    if (g_rec.params)
        json_object_set_new(g_rec.params, key, (json_t *)json);
    else
        json_decref((json_t *)json);
}

void rec_metric(const char *name, double value, const char *unit)
{
    if (g_rec.run)
        nb_run_metric(g_rec.run, name, value, unit, NULL);
}

void rec_layer(const char *layer, const char *op_type, int n, const char *const *names,
               const double *values)
{
    if (g_rec.run)
        nb_run_layer(g_rec.run, layer, op_type, n, names, values, NULL);
}

void rec_artifact(const char *role, const char *path)
{
    nb_status st = {0};
    if (g_rec.run && nb_run_artifact(g_rec.run, role, path, &st))
        fprintf(stderr, "nanobench: warning: %s; not recorded as an artifact\n", st.msg);
}

void rec_model(const nb_model *m)
{
    if (!g_rec.run)
        return;
    json_t *in = nb_values_json(m->graph, m->graph->inputs, m->graph->n_inputs);
    json_t *out = nb_values_json(m->graph, m->graph->outputs, m->graph->n_outputs);
    char *si = json_dumps(in, JSON_COMPACT), *so = json_dumps(out, JSON_COMPACT);
    nb_run_set_model_info(g_rec.run, m->opset, si, so, NULL);
    free(si);
    free(so);
    json_decref(in);
    json_decref(out);
}

void rec_error(const char *fmt, va_list ap)
{
    vsnprintf(g_rec.last_error, sizeof g_rec.last_error, fmt, ap);
}

int rec_finish(int rc)
{
    int out = rc;
    if (g_rec.run) {
        nb_status st = {0};
        char *pj = json_dumps(g_rec.params, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (pj)
            nb_run_set_params(g_rec.run, pj, NULL);
        free(pj);
        if (nb_run_end(g_rec.run, rc == 0, g_rec.last_error[0] ? g_rec.last_error : "failed",
                       &st)) {
            if (g_rec.require_record) {
                cli_error(&st);
                out = rc ? rc : 2;
            } else {
                warn_not_recorded(&st);
            }
        } else if (rc == 0) {
            /* on stderr: stdout is the command's output (--json must stay one document);
               stdout first, so that a log of both keeps their order */
            fflush(stdout);
            fprintf(stderr, "recorded as run %lld in %s\n", (long long)g_rec.run_id,
                   nb_db_path(g_rec.db));
        }
        g_rec.run = NULL;
    }
    nb_db_close(g_rec.db);
    g_rec.db = NULL;
    json_decref(g_rec.params);
    g_rec.params = NULL;
    return out;
}
