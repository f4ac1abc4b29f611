/* nanobench compare: the pieces of its output shared by its subcommands (compare_out.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "compare_out.h"
#include "nb/accucmp.h"

void shape_str(const nb_dump_tensor *t, char *buf, size_t len)
{
    int64_t d[6];
    for (int i = 0; i < t->rank; i++)
        d[i] = t->dims[i];
    nb_shape_str(t->rank, d, 'x', buf, len);
}

/* ---- file_compare ---- */
/* a name as one line of plain text (two buffers: two names in one printf) */
const char *plain(const char *s)
{
    static char buf[2][256];
    static int at;
    char *b = buf[at++ & 1];
    snprintf(b, sizeof buf[0], "%s", s);
    return cli_plain(b);
}

/* SQNR for the table: +-999 for +-infinity, as in the CSV */
double sqnr_shown(double v) { return isinf(v) ? (v > 0 ? 999.0 : -999.0) : v; }

/* "over": the --threshold names a compared row crosses, and "nonfinite" for a NaN or an
   infinity in the NPU output */
json_t *over_json(const nb_cmp_row *r, const nb_cmp_thresholds *th)
{
    json_t *a = json_array();
    char why[64];
    if (!r->compared)
        return a;
    nb_cmp_fails(&r->m, th, why, sizeof why);
    for (char *p = why, *save = NULL, *t; (t = strtok_r(p, ", ", &save)); p = NULL)
        json_array_append_new(a, json_string(t));
    if (r->m.nan_x || r->m.inf_x)
        json_array_append_new(a, json_string("nonfinite"));
    return a;
}

json_t *shape_json(const nb_dump_tensor *t)
{
    json_t *a = json_array();
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(a, json_integer(t->dims[d]));
    return a;
}

json_t *covers_json(const nb_dump *d)
{
    json_t *a = json_array();
    for (int q = 0; q < d->n_covers; q++)
        json_array_append_new(a, nb_json_string(d->covers[q]));
    return a;
}

/* The metrics of a compared row (null when not compared or not finite). */
void metrics_json(json_t *o, const nb_cmp_row *r)
{
    const nb_cmp_metrics *m = &r->m;
    bool c = r->compared;
    json_object_set_new(o, "cosine", c ? cli_jnum(m->cos) : json_null());
    json_object_set_new(o, "max_abs_error", c ? cli_jnum(m->max_abs) : json_null());
    json_object_set_new(o, "max_relative_error", c ? cli_jnum(m->max_rel) : json_null());
    json_object_set_new(o, "mean_relative_error", c ? cli_jnum(m->mean_rel) : json_null());
    json_object_set_new(o, "accumulated_relative_error", c ? cli_jnum(m->acc_rel) : json_null());
    json_object_set_new(o, "relative_euclidean_distance", c ? cli_jnum(m->red) : json_null());
    json_object_set_new(o, "mean_absolute_error", c ? cli_jnum(m->mae) : json_null());
    json_object_set_new(o, "sqnr_db", c ? cli_jnum(m->sqnr_db) : json_null());
    json_object_set_new(o, "rmse", c ? cli_jnum(m->rmse) : json_null());
    json_object_set_new(o, "kl", c ? cli_jnum(m->kl) : json_null());
}

json_t *thresholds_json(const nb_cmp_thresholds *th)
{
    json_t *o = json_object();
    json_object_set_new(o, "cos", json_real(th->cos_min));
    json_object_set_new(o, "red", json_real(th->red_max));
    json_object_set_new(o, "kl", json_real(th->kl_max));
    json_object_set_new(o, "rmse", json_real(th->rmse_max));
    json_object_set_new(o, "mre", json_real(th->mean_rel_max));
    return o;
}


int compare_flags(int argc, char **argv, const char *sub, const compare_flag *f, int n,
                  bool *json)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            *json = true;
            continue;
        }
        int k = 0, r = 0;
        const char *v;
        for (; k < n; k++)
            if ((r = cli_opt(argc, argv, &i, f[k].flag, &v)) ||
                (f[k].alt && (r = cli_opt(argc, argv, &i, f[k].alt, &v))))
                break;
        if (k == n)
            return cli_usage_error("compare", "%s: unknown argument '%s'", sub, argv[i]);
        if (r < 0 || !*v)
            return cli_usage_error("compare", "%s", f[k].need);
        *f[k].dst = v;
    }
    return 0;
}
