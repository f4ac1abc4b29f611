/* nanobench run store: CSV and JSON export (include/nb/db.h). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "db_internal.h"
#include "nb/json.h"
#include "nb/tensor.h"

static void csv_field(FILE *f, const char *s) { nb_csv_field(f, s, false); }

static void csv_number(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

static void csv_int(FILE *f, int64_t v)
{
    if (v)
        fprintf(f, "%lld", (long long)v);
}

typedef struct name_list {
    char **names, **units;
    int n, cap;
} name_list;

static int name_index(const name_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->names[i], name))
            return i;
    return -1;
}

static bool name_add(name_list *l, const char *name, const char *unit)
{
    if (name_index(l, name) >= 0)
        return true;
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 16;
        char **a = realloc(l->names, sizeof(char *) * (size_t)nc);
        if (!a)
            return false;
        l->names = a;
        char **b = realloc(l->units, sizeof(char *) * (size_t)nc);
        if (!b)
            return false;
        l->units = b;
        l->cap = nc;
    }
    l->names[l->n] = strdup(name);
    l->units[l->n] = strdup(unit ? unit : "");
    if (!l->names[l->n] || !l->units[l->n]) {
        free(l->names[l->n]);
        free(l->units[l->n]);
        return false;
    }
    l->n++;
    return true;
}

static void name_list_free(name_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->units[i]);
    }
    free(l->names);
    free(l->units);
}

static void csv_header_metric(FILE *f, const char *name, const char *unit)
{
    char h[512];
    if (unit && *unit)
        snprintf(h, sizeof h, "%s [%s]", name, unit);
    else
        snprintf(h, sizeof h, "%s", name);
    fputc(',', f);
    csv_field(f, h);
}

nb_err nb_db_export_csv(nb_db *db, const nb_run_filter *flt, bool layers, FILE *out,
                        nb_status *st)
{
    nb_run_row *rows;
    int n;
    nb_err e = nb_db_list(db, flt, &rows, &n, st);
    if (e)
        return e;
    nb_metric_row **mr = calloc((size_t)n + 1, sizeof *mr);
    nb_layer_row **lr = calloc((size_t)n + 1, sizeof *lr);
    int *nm = calloc((size_t)n + 1, sizeof(int)), *nl = calloc((size_t)n + 1, sizeof(int));
    name_list cols = {0};
    if (!mr || !lr || !nm || !nl)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    /* oldest first in the file: the order the runs happened */
    for (int i = 0; i < n && !e; i++) {
        e = layers ? nb_db_layers(db, rows[i].id, &lr[i], &nl[i], st)
                   : nb_db_metrics(db, rows[i].id, &mr[i], &nm[i], st);
        for (int k = 0; !e && !layers && k < nm[i]; k++)
            if (!name_add(&cols, mr[i][k].name, mr[i][k].unit))
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        for (int l = 0; !e && layers && l < nl[i]; l++)
            for (int k = 0; !e && k < lr[i][l].n; k++)
                if (!name_add(&cols, lr[i][l].m[k].name, ""))
                    e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!e && !layers) {
        fputs("run_id,kind,status,model,model_sha256,parent_id,started,finished,wall_ms,"
              "version,params,error", out);
        for (int c = 0; c < cols.n; c++)
            csv_header_metric(out, cols.names[c], cols.units[c]);
        fputs("\r\n", out);
        for (int i = n - 1; i >= 0; i--) {
            const nb_run_row *r = &rows[i];
            fprintf(out, "%lld,", (long long)r->id);
            csv_field(out, r->kind);
            fputc(',', out);
            csv_field(out, r->status);
            fputc(',', out);
            csv_field(out, r->model_path);
            fputc(',', out);
            csv_field(out, r->model_sha256);
            fputc(',', out);
            csv_int(out, r->parent_id);
            fputc(',', out);
            csv_field(out, r->started);
            fputc(',', out);
            csv_field(out, r->finished);
            fputc(',', out);
            csv_number(out, r->wall_ms);
            fputc(',', out);
            csv_field(out, r->version);
            fputc(',', out);
            csv_field(out, r->params);
            fputc(',', out);
            csv_field(out, r->error);
            for (int c = 0; c < cols.n; c++) {
                fputc(',', out);
                for (int k = 0; k < nm[i]; k++)
                    if (!strcmp(mr[i][k].name, cols.names[c]))
                        csv_number(out, mr[i][k].value);
            }
            fputs("\r\n", out);
        }
    } else if (!e) {
        fputs("run_id,seq,layer,op_type", out);
        for (int c = 0; c < cols.n; c++)
            csv_header_metric(out, cols.names[c], "");
        fputs("\r\n", out);
        for (int i = n - 1; i >= 0; i--)
            for (int l = 0; l < nl[i]; l++) {
                fprintf(out, "%lld,%d,", (long long)rows[i].id, l);
                csv_field(out, lr[i][l].layer);
                fputc(',', out);
                csv_field(out, lr[i][l].op_type);
                for (int c = 0; c < cols.n; c++) {
                    fputc(',', out);
                    for (int k = 0; k < lr[i][l].n; k++)
                        if (!strcmp(lr[i][l].m[k].name, cols.names[c]))
                            csv_number(out, lr[i][l].m[k].value);
                }
                fputs("\r\n", out);
            }
    }
    for (int i = 0; i < n; i++) {
        if (mr)
            nb_metric_rows_free(mr[i], nm ? nm[i] : 0);
        if (lr)
            nb_layer_rows_free(lr[i], nl ? nl[i] : 0);
    }
    free(mr);
    free(lr);
    free(nm);
    free(nl);
    name_list_free(&cols);
    nb_run_rows_free(rows, n);
    return e;
}

static json_t *jstr(const char *s) { return nb_json_string(s); }
/* NULL for NaN; integral values as JSON integers (bytes, counts, cycles) */
static json_t *jnum(double v)
{
    if (!isfinite(v)) /* JSON has no NaN or Inf */
        return json_null();
    if (v == floor(v) && fabs(v) < 9e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

/* The run as a JSON object: its columns, params parsed, metrics, layers, artifacts. */
static nb_err run_json(nb_db *db, const nb_run_row *r, json_t **out, nb_status *st)
{
    json_t *o = json_object();
    if (!o)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    json_object_set_new(o, "run_id", json_integer(r->id));
    json_object_set_new(o, "kind", jstr(r->kind));
    json_object_set_new(o, "status", jstr(r->status));
    json_object_set_new(o, "model", jstr(r->model_path));
    json_object_set_new(o, "model_sha256", jstr(r->model_sha256));
    json_object_set_new(o, "parent_id", r->parent_id ? json_integer(r->parent_id) : json_null());
    json_object_set_new(o, "started", jstr(r->started));
    json_object_set_new(o, "finished", r->finished[0] ? jstr(r->finished) : json_null());
    json_object_set_new(o, "wall_ms", jnum(r->wall_ms));
    json_object_set_new(o, "version", jstr(r->version));
    json_object_set_new(o, "error", jstr(r->error));
    json_error_t je;
    json_t *params = r->params ? json_loads(r->params, 0, &je) : NULL;
    json_object_set_new(o, "params", params ? params : jstr(r->params));
    nb_metric_row *m;
    nb_layer_row *l;
    nb_artifact_row *a;
    int nm, nl, na;
    nb_err e = nb_db_metrics(db, r->id, &m, &nm, st);
    if (e) {
        json_decref(o);
        return e;
    }
    json_t *ma = json_array();
    for (int i = 0; i < nm; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "name", jstr(m[i].name));
        json_object_set_new(x, "value", jnum(m[i].value));
        json_object_set_new(x, "unit", jstr(m[i].unit ? m[i].unit : ""));
        json_array_append_new(ma, x);
    }
    nb_metric_rows_free(m, nm);
    json_object_set_new(o, "metrics", ma);
    if ((e = nb_db_layers(db, r->id, &l, &nl, st))) {
        json_decref(o);
        return e;
    }
    json_t *la = json_array();
    for (int i = 0; i < nl; i++) {
        json_t *x = json_object(), *mm = json_object();
        json_object_set_new(x, "layer", jstr(l[i].layer));
        json_object_set_new(x, "op_type", jstr(l[i].op_type));
        for (int k = 0; k < l[i].n; k++)
            json_object_set_new(mm, l[i].m[k].name, jnum(l[i].m[k].value));
        json_object_set_new(x, "metrics", mm);
        json_array_append_new(la, x);
    }
    nb_layer_rows_free(l, nl);
    json_object_set_new(o, "layers", la);
    if ((e = nb_db_artifacts(db, r->id, &a, &na, st))) {
        json_decref(o);
        return e;
    }
    json_t *aa = json_array();
    for (int i = 0; i < na; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "role", jstr(a[i].role));
        json_object_set_new(x, "path", jstr(a[i].path));
        json_object_set_new(x, "sha256", jstr(a[i].sha256));
        json_object_set_new(x, "bytes", a[i].bytes < 0 ? json_null() : json_integer(a[i].bytes));
        json_array_append_new(aa, x);
    }
    nb_artifact_rows_free(a, na);
    json_object_set_new(o, "artifacts", aa);
    *out = o;
    return NB_OK;
}

nb_err nb_db_export_json(nb_db *db, const nb_run_filter *f, FILE *out, nb_status *st)
{
    nb_run_row *rows;
    int n;
    nb_err e = nb_db_list(db, f, &rows, &n, st);
    if (e)
        return e;
    json_t *arr = json_array();
    if (!arr)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = n - 1; i >= 0 && !e; i--) {
        json_t *o;
        if (!(e = run_json(db, &rows[i], &o, st)))
            json_array_append_new(arr, o);
    }
    if (!e && json_dumpf(arr, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
        e = nb_fail(st, NB_ERR_IO, "cannot write the JSON export");
    if (!e)
        fputc('\n', out);
    json_decref(arr);
    nb_run_rows_free(rows, n);
    return e;
}

nb_err nb_db_export_file(nb_db *db, const nb_run_filter *f, const char *format, bool layers,
                         const char *path, nb_status *st)
{
    /* only a regular file (or a link to one, which keeps pointing at it) may be replaced */
    char target[PATH_MAX];
    const char *dst = path;
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && realpath(path, target))
        dst = target;
    if (nb_db_owns_file(db, dst))
        return nb_fail(st, NB_ERR_ARG, "%s: that is the run database itself; export to another "
                       "file", path);
    if (stat(dst, &sb) == 0 && !S_ISREG(sb.st_mode))
        return nb_fail(st, NB_ERR_ARG, "%s: not a regular file; for a device or a pipe write to "
                       "standard output", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    if (!mf)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    nb_err e = !strcmp(format, "json") ? nb_db_export_json(db, f, mf, st)
                                       : nb_db_export_csv(db, f, layers, mf, st);
    fclose(mf);
    if (!e)
        e = nb_write_file_atomic(dst, buf, len, st);
    free(buf);
    return e;
}
