/* nanobench compare: the comparison's JSON (what `compare file_compare --json` prints, the
 * workbench reads and the Python module returns) and one layer in detail (`compare layer`),
 * include/nb/accucmp.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb/accucmp.h"
#include "nb/json.h"

json_t *nb_cmp_over_json(const nb_cmp_row *r, const nb_cmp_thresholds *th)
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

static json_t *shape_json(const nb_dump_tensor *t)
{
    int64_t d[8];
    int n = t->rank < 8 ? t->rank : 8;
    for (int i = 0; i < n; i++)
        d[i] = t->dims[i];
    return nb_json_int_array(d, n);
}

static json_t *covers_json(const nb_dump *d)
{
    json_t *a = json_array();
    for (int q = 0; q < d->n_covers; q++)
        json_array_append_new(a, nb_json_string(d->covers[q]));
    return a;
}

void nb_cmp_metrics_json(json_t *o, const nb_cmp_row *r)
{
    const nb_cmp_metrics *m = &r->m;
    bool c = r->compared;
    json_object_set_new(o, "cosine", c ? nb_json_num(m->cos) : json_null());
    json_object_set_new(o, "max_abs_error", c ? nb_json_num(m->max_abs) : json_null());
    json_object_set_new(o, "max_relative_error", c ? nb_json_num(m->max_rel) : json_null());
    json_object_set_new(o, "mean_relative_error", c ? nb_json_num(m->mean_rel) : json_null());
    json_object_set_new(o, "accumulated_relative_error", c ? nb_json_num(m->acc_rel)
                                                             : json_null());
    json_object_set_new(o, "relative_euclidean_distance", c ? nb_json_num(m->red) : json_null());
    json_object_set_new(o, "mean_absolute_error", c ? nb_json_num(m->mae) : json_null());
    json_object_set_new(o, "sqnr_db", c ? nb_json_num(m->sqnr_db) : json_null());
    json_object_set_new(o, "rmse", c ? nb_json_num(m->rmse) : json_null());
    json_object_set_new(o, "kl", c ? nb_json_num(m->kl) : json_null());
}

json_t *nb_cmp_thresholds_json(const nb_cmp_thresholds *th)
{
    json_t *o = json_object();
    json_object_set_new(o, "cos", json_real(th->cos_min));
    json_object_set_new(o, "red", json_real(th->red_max));
    json_object_set_new(o, "kl", json_real(th->kl_max));
    json_object_set_new(o, "rmse", json_real(th->rmse_max));
    json_object_set_new(o, "mre", json_real(th->mean_rel_max));
    return o;
}

json_t *nb_cmp_row_json(const nb_cmp_row *r, int index, const nb_cmp_thresholds *th)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
    json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
    json_object_set_new(o, "task", json_integer(r->npu->task_id));
    json_object_set_new(o, "tensor_index", json_integer(r->x->index));
    json_object_set_new(o, "golden_node", r->gold ? nb_json_string(r->gold->op_name)
                                                  : json_null());
    json_object_set_new(o, "shape", shape_json(r->x));
    json_object_set_new(o, "npu_dtype", nb_json_string(r->x->dtype));
    json_object_set_new(o, "golden_dtype", r->y ? nb_json_string(r->y->dtype) : json_null());
    json_object_set_new(o, "compared", json_boolean(r->compared));
    nb_cmp_metrics_json(o, r);
    json_object_set_new(o, "over", nb_cmp_over_json(r, th));
    /* over threshold as the verdict counts it: what crossed, unless the accuracy rule or
       fp16's resolution passes the row (the workbench had counted "over" alone) */
    json_object_set_new(o, "fails", json_boolean(r->fails));
    json_object_set_new(o, "saturations", json_integer((json_int_t)r->npu->saturations));
    json_object_set_new(o, "reason", nb_json_string(r->reason));
    json_object_set_new(o, "npu_dump", nb_json_string(r->npu->path));
    json_object_set_new(o, "golden_dump", r->gold ? nb_json_string(r->gold->path) : json_null());
    json_object_set_new(o, "covers", covers_json(r->npu));
    return o;
}

/* {layer, op_type, task, index, cosine, sqnr_db, likely_cause} of row i */
static json_t *named_row_json(const nb_comparison *cs, int i)
{
    const nb_cmp_row *r = &cs->rows[i];
    json_t *o = json_object();
    json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
    json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
    json_object_set_new(o, "task", json_integer(r->npu->task_id));
    json_object_set_new(o, "index", json_integer(i));
    json_object_set_new(o, "cosine", nb_json_num(r->m.cos));
    json_object_set_new(o, "sqnr_db", nb_json_num(r->m.sqnr_db));
    char cause[400];
    json_object_set_new(o, "likely_cause", json_string(nb_cmp_cause(cs, i, cause, sizeof cause)));
    return o;
}

json_t *nb_comparison_json(const nb_compare_opts *o, const nb_comparison *cs,
                           const char *iso_layer, const nb_cmp_isolation *iso)
{
    const nb_cmp_row *rows = cs->rows;
    json_t *jo = json_object(), *jrows = json_array();
    for (int i = 0; i < cs->nr; i++)
        json_array_append_new(jrows, nb_cmp_row_json(&rows[i], i, &cs->th));
    json_object_set_new(jo, "npu_dumps", nb_json_string(o->npu_dumps));
    json_object_set_new(jo, "golden_dumps", nb_json_string(o->golden_dumps));
    json_object_set_new(jo, "thresholds", nb_cmp_thresholds_json(&cs->th));
    json_object_set_new(jo, "verdict", json_string(cs->verdict));
    json_object_set_new(jo, "verdict_text", json_string(cs->verdict_text));
    json_object_set_new(jo, "tensors", json_integer(cs->nr));
    json_object_set_new(jo, "compared", json_integer(cs->n_compared));
    json_object_set_new(jo, "over_threshold", json_integer(cs->n_over));
    json_object_set_new(jo, "not_compared", json_integer(cs->nr - cs->n_compared));
    json_t *fb = cs->first_bad >= 0 ? named_row_json(cs, cs->first_bad) : json_null();
    if (cs->first_bad >= 0)
        json_object_set_new(fb, "origin", json_string(cs->origin));
    json_object_set_new(jo, "first_over_threshold", fb);
    json_t *wd = cs->worst >= 0 ? named_row_json(cs, cs->worst) : json_null();
    if (cs->worst >= 0) { /* measured from the input the layer reads (issue 37) */
        const nb_cmp_row *in = &rows[cs->worst_prev];
        json_object_set_new(wd, "previous_sqnr_db", nb_json_num(in->m.sqnr_db));
        json_object_set_new(wd, "previous_exact", json_boolean(isinf(in->m.sqnr_db) &&
                                                               in->m.sqnr_db > 0));
        json_object_set_new(wd, "input", nb_json_string(in->x->original_name));
        json_object_set_new(wd, "input_layer", nb_json_string(in->npu->op_name));
    }
    json_object_set_new(jo, "largest_sqnr_drop", wd);
    json_t *fs = json_null();
    if (cs->first_sat >= 0) { /* the first layer that clamped at fp16's 65504 */
        const nb_cmp_row *s = &rows[cs->first_sat];
        fs = json_object();
        json_object_set_new(fs, "layer", nb_json_string(s->npu->op_name));
        json_object_set_new(fs, "op_type", nb_json_string(s->npu->op_type));
        json_object_set_new(fs, "task", json_integer(s->npu->task_id));
        json_object_set_new(fs, "values", json_integer((json_int_t)(
            s->npu->saturations ? s->npu->saturations : (uint64_t)s->m.sat_x)));
    }
    json_object_set_new(jo, "first_saturation", fs);
    if (iso) {
        json_t *ji = json_object();
        json_object_set_new(ji, "layer", nb_json_string(iso_layer));
        json_object_set_new(ji, "first_task", json_integer(iso->k0));
        json_object_set_new(ji, "last_task", json_integer(iso->k1));
        json_object_set_new(ji, "cosine", nb_json_num(iso->m.cos));
        json_object_set_new(ji, "sqnr_db", nb_json_num(iso->m.sqnr_db));
        json_object_set_new(ji, "max_abs_error", nb_json_num(iso->m.max_abs));
        json_object_set_new(ji, "chain_cosine", iso->chain ? nb_json_num(iso->chain->m.cos)
                                                           : json_null());
        json_object_set_new(ji, "chain_sqnr_db", iso->chain ? nb_json_num(iso->chain->m.sqnr_db)
                                                            : json_null());
        json_object_set_new(ji, "error", !iso->chain ? json_null()
                                         : json_string(iso->inherited ? "inherited" : "own"));
        json_object_set_new(jo, "isolate", ji);
    }
    json_object_set_new(jo, "rows", jrows);
    return jo;
}

/* ---- the network outputs over K inputs ---- */

json_t *nb_cmp_output_files_json(const nb_cmp_output_files_opts *o,
                                 const nb_cmp_output_files_result *r)
{
    json_t *jo = json_object(), *per = json_array();
    for (int k = 0; k < o->n_inputs; k++) {
        const nb_cmp_metrics *m = &r->per_input[k];
        json_t *pi = json_object();
        json_object_set_new(pi, "npu", nb_json_string(o->npu[k]));
        json_object_set_new(pi, "reference", nb_json_string(o->reference[k]));
        json_object_set_new(pi, "cosine", nb_json_num(m->cos));
        json_object_set_new(pi, "sqnr_db", nb_json_num(m->sqnr_db));
        json_object_set_new(pi, "max_abs_error", nb_json_num(m->max_abs));
        if (m->note[0])
            json_object_set_new(pi, "note", nb_json_string(m->note));
        json_array_append_new(per, pi);
    }
    const nb_cmp_over_inputs *acc = &r->acc;
    json_object_set_new(jo, "shape", json_string(r->shape));
    json_object_set_new(jo, "numel", json_integer(acc->numel));
    json_object_set_new(jo, "cosine_mean", nb_json_num(acc->cos_mean));
    json_object_set_new(jo, "cosine_worst", nb_json_num(acc->cos_worst));
    json_object_set_new(jo, "sqnr_db_mean", nb_json_num(acc->sqnr_mean));
    json_object_set_new(jo, "sqnr_db_worst", nb_json_num(acc->sqnr_worst));
    json_object_set_new(jo, "max_abs_error", nb_json_num(acc->max_abs));
    json_object_set_new(jo, "pooled_cosine", nb_json_num(acc->pooled_cos));
    json_object_set_new(jo, "pooled_sqnr_db", nb_json_num(acc->pooled_sqnr));
    json_object_set_new(jo, "worst_cosine", nb_json_num(acc->gate));
    json_object_set_new(jo, "npu_dtype", nb_json_string(o->npu_dtype));
    json_object_set_new(jo, "max_fp16_steps", nb_json_num(acc->fp16_steps));
    json_object_set_new(jo, "agrees_at_fp16_resolution", json_boolean(r->fp16_resolution));
    json_object_set_new(jo, "per_input", per);
    return jo;
}

/* ---- infer ---- */

json_t *nb_infer_result_json(const nb_infer_result *r, bool values)
{
    json_t *j = json_object(), *outs = json_array();
    for (int i = 0; i < r->n_outputs; i++) {
        const nb_tensor *t = r->files[i].t;
        json_t *o = json_object(), *first = json_array();
        json_object_set_new(o, "name", nb_json_string(r->files[i].name));
        json_object_set_new(o, "file", nb_json_string(r->files[i].path));
        json_object_set_new(o, "dtype", json_string(t ? nb_dtype_name(t->dtype) : "UNKNOWN"));
        json_object_set_new(o, "shape", t ? nb_json_int_array(t->dims, t->rank) : json_array());
        double mn = 0, mx = 0, sum = 0;
        json_t *vals = values ? json_array() : NULL;
        for (int64_t k = 0; t && k < t->numel; k++) {
            double v = nb_tensor_get_f64(t, k);
            mn = k == 0 || v < mn ? v : mn;
            mx = k == 0 || v > mx ? v : mx;
            sum += v;
            if (k < 8)
                json_array_append_new(first, nb_json_num(v));
            if (vals)
                json_array_append_new(vals, nb_json_value(v));
        }
        bool any = t && t->numel > 0;
        json_object_set_new(o, "min", any ? nb_json_num(mn) : json_null());
        json_object_set_new(o, "max", any ? nb_json_num(mx) : json_null());
        json_object_set_new(o, "mean", any ? nb_json_num(sum / (double)t->numel) : json_null());
        json_object_set_new(o, "first", first);
        if (vals)
            json_object_set_new(o, "values", vals);
        json_array_append_new(outs, o);
    }
    json_object_set_new(j, "outputs", outs);
    json_object_set_new(j, "tensors_written", json_integer(r->n_files));
    json_object_set_new(j, "golden_dumps", json_integer(r->golden_dumps));
    json_object_set_new(j, "reference_ms", nb_json_num(r->ms));
    return j;
}

/* ---- compare layer ---- */

nb_err nb_cmp_layer(const nb_cmp_layer_opts *o, nb_cmp_layer_detail *d, nb_status *st)
{
    memset(d, 0, sizeof *d);
    d->bins = o->bins ? o->bins : 20;
    if (d->bins < 1 || d->bins > NB_CMP_MAX_BINS)
        return nb_fail(st, NB_ERR_ARG, "the histogram's bins are 1 to %d, not %d",
                       NB_CMP_MAX_BINS, d->bins);
    nb_compare_opts co = {.npu_dumps = o->npu_dumps, .golden_dumps = o->golden_dumps,
                          .th = o->th, .keep_layer = o->layer};
    nb_err e = nb_compare(&co, &d->cs, st);
    if (e)
        return e;
    d->compared = true;
    if ((e = nb_cmp_pick_layer(&d->cs, o->layer, o->npu_dumps, &d->row, st)))
        goto fail;
    const nb_cmp_row *r = &d->cs.rows[d->row];
    const nb_dump_tensor *x = r->x, *y = r->y;
    if (!x->v) { /* nb_compare keeps the values of each row that may be the layer */
        e = nb_fail(st, NB_ERR_INTERNAL, "compare layer: the values of '%s' were not kept",
                    o->layer);
        goto fail;
    }
    /* the compared values: all, or an RNN step's slice of Y (r->slice_off, r->slice_n) */
    d->off = r->slice_off;
    d->n = r->slice_n;
    d->n_worst = nb_cmp_worst_k(x->v + d->off, y->v + d->off, d->n, NB_CMP_WORST_K, d->worst);
    for (int i = 0; i < d->n_worst; i++)
        d->worst[i] += d->off;
    d->edges = malloc(sizeof *d->edges * ((size_t)d->bins + 1));
    d->counts = malloc(sizeof *d->counts * (size_t)d->bins);
    d->tasks = malloc(sizeof *d->tasks * ((size_t)d->cs.nm + 1));
    if (!d->edges || !d->counts || !d->tasks) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((e = nb_cmp_error_histogram(x->v + d->off, y->v + d->off, d->n, d->bins, d->edges,
                                    d->counts, &d->left_out, st)))
        goto fail;
    d->n_tasks = nb_cmp_layer_tasks(&d->cs, r->npu, d->tasks);
    return NB_OK;
fail:
    nb_cmp_layer_detail_free(d);
    return e;
}

void nb_cmp_layer_detail_free(nb_cmp_layer_detail *d)
{
    free(d->edges);
    free(d->counts);
    free(d->tasks);
    if (d->compared)
        nb_comparison_free(&d->cs);
    memset(d, 0, sizeof *d);
}

/* an element's index in the tensor's dims */
static json_t *index_json(int64_t flat, const nb_dump_tensor *t)
{
    int64_t dims[8], idx[8];
    int n = t->rank < 8 ? t->rank : 8;
    for (int i = 0; i < n; i++)
        dims[i] = t->dims[i];
    nb_cmp_unravel(flat, n, dims, idx);
    return nb_json_int_array(idx, n);
}

static json_t *element_json(const nb_dump_tensor *x, const nb_dump_tensor *y, int64_t i,
                            bool error)
{
    json_t *j = json_object();
    json_object_set_new(j, "flat", json_integer(i));
    json_object_set_new(j, "index", index_json(i, x));
    json_object_set_new(j, "golden", nb_json_num(y->v[i]));
    json_object_set_new(j, "npu", nb_json_num(x->v[i]));
    if (error)
        json_object_set_new(j, "error", nb_json_num(x->v[i] - y->v[i]));
    return j;
}

json_t *nb_cmp_layer_json(const nb_cmp_layer_detail *d)
{
    const nb_comparison *cs = &d->cs;
    const nb_cmp_row *r = &cs->rows[d->row];
    const nb_dump_tensor *x = r->x, *y = r->y;
    json_t *o = json_object(), *jt = json_array(), *jw = json_array(), *jf = json_array();
    json_t *jh = json_object(), *je = json_array(), *jc = json_array(), *jm = json_object();
    json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
    json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
    json_object_set_new(o, "task", json_integer(r->npu->task_id));
    json_object_set_new(o, "tensor_index", json_integer(x->index));
    json_object_set_new(o, "golden_node", nb_json_string(r->gold->op_name));
    json_object_set_new(o, "golden_value", nb_json_string(y->original_name));
    json_object_set_new(o, "shape", shape_json(x));
    json_object_set_new(o, "numel", json_integer(d->n));
    json_object_set_new(o, "npu_dtype", nb_json_string(x->dtype));
    json_object_set_new(o, "golden_dtype", nb_json_string(y->dtype));
    json_object_set_new(o, "covers", covers_json(r->npu));
    for (int i = 0; i < d->n_tasks; i++) {
        const nb_dump *t = &cs->md[d->tasks[i]];
        json_t *j = json_object();
        json_object_set_new(j, "task", json_integer(t->task_id));
        json_object_set_new(j, "name", nb_json_string(t->op_name));
        json_object_set_new(j, "op_type", nb_json_string(t->op_type));
        json_array_append_new(jt, j);
    }
    json_object_set_new(o, "tasks", jt);
    json_object_set_new(o, "npu_dump", nb_json_string(r->npu->path));
    json_object_set_new(o, "golden_dump", nb_json_string(r->gold->path));
    nb_cmp_metrics_json(jm, r);
    json_object_set_new(o, "metrics", jm);
    json_object_set_new(o, "thresholds", nb_cmp_thresholds_json(&cs->th));
    json_object_set_new(o, "over", nb_cmp_over_json(r, &cs->th));
    json_object_set_new(o, "reason", nb_json_string(r->reason));
    for (int i = 0; i < d->n_worst; i++)
        json_array_append_new(jw, element_json(x, y, d->worst[i], true));
    json_object_set_new(o, "worst", jw);
    for (int64_t i = d->off; i < d->off + d->n && i < d->off + NB_CMP_FIRST_N; i++)
        json_array_append_new(jf, element_json(x, y, i, false));
    json_object_set_new(o, "first", jf);
    for (int b = 0; b <= d->bins; b++)
        json_array_append_new(je, json_real(d->edges[b]));
    for (int b = 0; b < d->bins; b++)
        json_array_append_new(jc, json_integer(d->counts[b]));
    json_object_set_new(jh, "of", json_string("npu - golden"));
    json_object_set_new(jh, "bins", json_integer(d->bins));
    json_object_set_new(jh, "edges", je);
    json_object_set_new(jh, "counts", jc);
    json_object_set_new(jh, "left_out", json_integer(d->left_out));
    json_object_set_new(o, "histogram", jh);
    return o;
}
