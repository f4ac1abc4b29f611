/* nanobench run store: the lookups the front ends share, and two runs side by side
 * (include/nb/db.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "db_internal.h"

bool nb_db_metric(nb_db *db, int64_t run, const char *name, double *value)
{
    nb_metric_row *m = NULL;
    int n = 0;
    nb_status st = {0};
    bool found = false;
    if (run > 0 && !nb_db_metrics(db, run, &m, &n, &st))
        for (int i = 0; i < n && !found; i++)
            if (!strcmp(m[i].name, name) && !isnan(m[i].value)) {
                *value = m[i].value;
                found = true;
            }
    nb_metric_rows_free(m, n);
    return found;
}

bool nb_db_artifact_path(nb_db *db, int64_t run, const char *role, bool live, char *path,
                         size_t len)
{
    nb_artifact_row *a = NULL;
    int n = 0;
    nb_status st = {0};
    bool found = false;
    if (run > 0 && !nb_db_artifacts(db, run, &a, &n, &st))
        for (int i = 0; i < n && !found; i++)
            if (!strcmp(a[i].role, role) && a[i].path && (!live || !access(a[i].path, R_OK))) {
                snprintf(path, len, "%s", a[i].path);
                found = true;
            }
    nb_artifact_rows_free(a, n);
    return found;
}

nb_err nb_db_ancestor_of_kind(nb_db *db, int64_t run, const char *kind, int64_t *id,
                              nb_status *st)
{
    *id = 0;
    nb_run_row row;
    memset(&row, 0, sizeof row);
    nb_err e = nb_db_get(db, run, &row, st);
    if (e)
        return e;
    bool self = !strcmp(row.kind, kind);
    nb_run_row_clear(&row);
    if (self) {
        *id = run;
        return NB_OK;
    }
    int64_t *up = NULL, *down = NULL;
    int nu = 0, nd = 0;
    if ((e = nb_db_lineage(db, run, &up, &nu, &down, &nd, st)))
        return e;
    for (int i = 0; i < nu && !*id; i++) { /* parent first: the nearest */
        nb_run_row a;
        memset(&a, 0, sizeof a);
        nb_status ignore = {0};
        if (!nb_db_get(db, up[i], &a, &ignore) && !strcmp(a.kind, kind))
            *id = up[i];
        nb_run_row_clear(&a);
    }
    free(up), free(down);
    return NB_OK;
}

static bool has_id(const int64_t *ids, int n, int64_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int nb_db_model_runs(nb_db *db, const char *model, int64_t **ids, nb_status *st)
{
    *ids = NULL;
    nb_run_filter f = {.model = model};
    nb_run_row *rows = NULL;
    int n = 0;
    if (nb_db_list(db, &f, &rows, &n, st))
        return -1;
    int64_t *out = NULL;
    int cnt = 0, cap = 0, rc = 0;
    /* oldest first: a run already in the set came down from an earlier one, and so did its
       own descendants */
    for (int i = n - 1; i >= 0 && rc == 0; i--) {
        if (has_id(out, cnt, rows[i].id))
            continue;
        int64_t *up = NULL, *down = NULL;
        int nu = 0, nd = 0;
        if (nb_db_lineage(db, rows[i].id, &up, &nu, &down, &nd, st)) {
            rc = -1;
            break;
        }
        if (cnt + nd + 1 > cap) {
            int nc = (cnt + nd + 1) * 2;
            int64_t *g = realloc(out, sizeof *out * (size_t)nc);
            if (!g) {
                nb_fail(st, NB_ERR_NOMEM, "out of memory");
                rc = -1;
            } else {
                out = g, cap = nc;
            }
        }
        if (rc == 0) {
            out[cnt++] = rows[i].id;
            for (int k = 0; k < nd; k++)
                if (!has_id(out, cnt, down[k]))
                    out[cnt++] = down[k];
        }
        free(up), free(down);
    }
    nb_run_rows_free(rows, n);
    if (rc) {
        free(out);
        return -1;
    }
    if (cnt)
        qsort(out, (size_t)cnt, sizeof *out, cmp_id);
    *ids = out;
    return cnt;
}

/* ---- two runs side by side ---- */

static char *value_text(json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_string(v))
        return strdup(json_string_value(v));
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static nb_err diff_params(nb_run_diff *d, nb_status *st)
{
    json_error_t je;
    json_t *p[2] = {d->run[0].params ? json_loads(d->run[0].params, 0, &je) : NULL,
                    d->run[1].params ? json_loads(d->run[1].params, 0, &je) : NULL};
    size_t cap = json_object_size(p[0]) + json_object_size(p[1]) + 1;
    nb_err e = (d->params = calloc(cap, sizeof *d->params)) ? NB_OK
                                                           : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int s = 0; s < 2 && !e; s++) {
        const char *k;
        json_t *v;
        json_object_foreach(p[s], k, v) {
            if (s == 1 && json_object_get(p[0], k))
                continue; /* with A */
            json_t *va = json_object_get(p[0], k), *vb = json_object_get(p[1], k);
            nb_diff_param *q = &d->params[d->n_params++];
            q->key = strdup(k);
            q->a = value_text(va);
            q->b = value_text(vb);
            q->same = va && vb && json_equal(va, vb);
            if (!q->key)
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
    }
    json_decref(p[0]);
    json_decref(p[1]);
    return e;
}

static nb_err diff_metrics(nb_db *db, nb_run_diff *d, nb_status *st)
{
    nb_metric_row *m[2] = {NULL, NULL};
    int nm[2] = {0, 0};
    nb_err e = nb_db_metrics(db, d->run[0].id, &m[0], &nm[0], st);
    if (!e)
        e = nb_db_metrics(db, d->run[1].id, &m[1], &nm[1], st);
    if (!e && !(d->metrics = calloc((size_t)(nm[0] + nm[1] + 1), sizeof *d->metrics)))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int s = 0; s < 2 && !e; s++)
        for (int i = 0; i < nm[s] && !e; i++) {
            int other = -1;
            for (int k = 0; k < nm[1 - s] && other < 0; k++)
                if (!strcmp(m[1 - s][k].name, m[s][i].name))
                    other = k;
            if (s == 1 && other >= 0)
                continue; /* with A */
            nb_diff_metric *q = &d->metrics[d->n_metrics++];
            q->name = strdup(m[s][i].name);
            q->unit = strdup(m[s][i].unit ? m[s][i].unit : "");
            q->a = s == 0 ? m[0][i].value : NAN;
            q->b = s == 1 ? m[1][i].value : other >= 0 ? m[1][other].value : NAN;
            if (!q->name || !q->unit)
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
    nb_metric_rows_free(m[0], nm[0]);
    nb_metric_rows_free(m[1], nm[1]);
    return e;
}

static nb_err diff_layers(nb_db *db, nb_run_diff *d, nb_status *st)
{
    nb_layer_row *l[2] = {NULL, NULL};
    int nl[2] = {0, 0};
    nb_err e = nb_db_layers(db, d->run[0].id, &l[0], &nl[0], st);
    if (!e)
        e = nb_db_layers(db, d->run[1].id, &l[1], &nl[1], st);
    d->layers_a = nl[0] > 0, d->layers_b = nl[1] > 0;
    if (!e && nl[0] && nl[1] && !(d->layers = calloc((size_t)(nl[0] + nl[1] + 1),
                                                     sizeof *d->layers)))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int s = 0; s < 2 && !e && nl[0] && nl[1]; s++)
        for (int i = 0; i < nl[s] && !e; i++) {
            int j = -1;
            for (int k = 0; k < nl[1 - s] && j < 0; k++)
                if (!strcmp(l[s][i].layer, l[1 - s][k].layer))
                    j = k;
            if (s == 1 && j >= 0)
                continue;
            nb_diff_layer *q = &d->layers[d->n_layers++];
            q->layer = strdup(l[s][i].layer);
            q->in = j < 0 ? s + 1 : 3;
            if (!q->layer || !(q->m = calloc((size_t)l[s][i].n + 1, sizeof *q->m))) {
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
                break;
            }
            for (int k = 0; j >= 0 && k < l[0][i].n; k++)
                for (int r = 0; r < l[1][j].n; r++)
                    if (!strcmp(l[0][i].m[k].name, l[1][j].m[r].name)) {
                        nb_diff_metric *x = &q->m[q->n++];
                        x->name = strdup(l[0][i].m[k].name);
                        x->a = l[0][i].m[k].value;
                        x->b = l[1][j].m[r].value;
                        if (!x->name)
                            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
                    }
        }
    nb_layer_rows_free(l[0], nl[0]);
    nb_layer_rows_free(l[1], nl[1]);
    return e;
}

nb_err nb_db_diff(nb_db *db, int64_t a, int64_t b, nb_run_diff *d, nb_status *st)
{
    memset(d, 0, sizeof *d);
    nb_err e = nb_db_get(db, a, &d->run[0], st);
    if (!e)
        e = nb_db_get(db, b, &d->run[1], st);
    if (!e)
        e = diff_params(d, st);
    if (!e)
        e = diff_metrics(db, d, st);
    if (!e)
        e = diff_layers(db, d, st);
    if (e)
        nb_run_diff_free(d);
    return e;
}

void nb_run_diff_free(nb_run_diff *d)
{
    for (int i = 0; i < d->n_params; i++)
        free(d->params[i].key), free(d->params[i].a), free(d->params[i].b);
    for (int i = 0; i < d->n_metrics; i++)
        free(d->metrics[i].name), free(d->metrics[i].unit);
    for (int i = 0; i < d->n_layers; i++) {
        for (int k = 0; k < d->layers[i].n; k++)
            free(d->layers[i].m[k].name);
        free(d->layers[i].m), free(d->layers[i].layer);
    }
    free(d->params), free(d->metrics), free(d->layers);
    nb_run_row_clear(&d->run[0]);
    nb_run_row_clear(&d->run[1]);
    memset(d, 0, sizeof *d);
}
