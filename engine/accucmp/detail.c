/* nanobench accuracy comparison: one layer in detail (include/nb/accucmp.h): the elements
 * with the largest error, the histogram of the error, flat index to multi-index. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/accucmp.h"

/* the error's rank key: |x - y|, +inf for a pair with a NaN or an infinity on either side */
static double err_key(double x, double y)
{
    return isfinite(x) && isfinite(y) ? fabs(x - y) : INFINITY;
}

int nb_cmp_worst_k(const double *x, const double *y, int64_t n, int k, int64_t *idx)
{
    if (k <= 0 || n <= 0)
        return 0;
    int m = 0; /* idx[0..m) sorted: the largest key first, ties to the lower index */
    for (int64_t i = 0; i < n; i++) {
        double key = err_key(x[i], y[i]);
        if (m == k && !(key > err_key(x[idx[m - 1]], y[idx[m - 1]])))
            continue; /* not above the smallest kept: an equal key keeps the lower index */
        int at = m < k ? m++ : k - 1;
        /* shift down the kept entries with a smaller key; i is the highest index so far,
           so it goes after every kept entry of an equal key */
        while (at > 0 && err_key(x[idx[at - 1]], y[idx[at - 1]]) < key) {
            idx[at] = idx[at - 1];
            at--;
        }
        idx[at] = i;
    }
    return m;
}

nb_err nb_cmp_error_histogram(const double *x, const double *y, int64_t n, int bins,
                              double *edges, int64_t *counts, int64_t *left_out,
                              nb_status *st)
{
    if (bins < 1 || bins > NB_CMP_MAX_BINS)
        return nb_fail(st, NB_ERR_ARG, "histogram bins %d: give 1 to %d", bins,
                       NB_CMP_MAX_BINS);
    double lo = INFINITY, hi = -INFINITY;
    int64_t out = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) {
            out++;
            continue;
        }
        double e = x[i] - y[i];
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    if (out == n || n <= 0) /* nothing to count: numpy's range for an empty array */
        lo = 0, hi = 1;
    else if (lo == hi)
        lo -= 0.5, hi += 0.5;
    /* the edges as numpy.linspace(lo, hi, bins + 1): i * step + lo, the last one hi */
    double step = (hi - lo) / bins;
    for (int b = 0; b < bins; b++)
        edges[b] = (double)b * step + lo;
    edges[bins] = hi;
    for (int b = 0; b < bins; b++)
        counts[b] = 0;
    /* the bin as numpy.histogram finds it for equal-width bins: from the scaled position,
       then moved by one where rounding put it on the wrong side of an edge */
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            continue;
        double e = x[i] - y[i];
        int64_t b = (int64_t)((e - lo) / (hi - lo) * bins);
        if (b >= bins)
            b = bins - 1;
        if (b < 0)
            b = 0;
        if (e < edges[b] && b > 0)
            b--;
        else if (b != bins - 1 && e >= edges[b + 1])
            b++;
        counts[b]++;
    }
    if (left_out)
        *left_out = out;
    return NB_OK;
}

void nb_cmp_unravel(int64_t flat, int rank, const int64_t *dims, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        int64_t n = dims[d] > 0 ? dims[d] : 1;
        idx[d] = flat % n;
        flat /= n;
    }
}

/* ---- one output over K inputs (accucmp.h) ---- */

void nb_cmp_over_inputs_init(nb_cmp_over_inputs *a, int n_inputs)
{
    memset(a, 0, sizeof *a);
    a->n_inputs = n_inputs > 0 ? n_inputs : 1;
    a->cos_worst = a->sqnr_worst = INFINITY;
}

nb_err nb_cmp_over_inputs_add(nb_cmp_over_inputs *a, const double *x, const double *y,
                              int64_t n, nb_cmp_metrics *m, nb_status *st)
{
    nb_cmp_metrics_compute(x, y, n, m);
    double *gx = realloc(a->px, sizeof(double) * (size_t)(a->pn + n + 1));
    if (gx)
        a->px = gx;
    double *gy = gx ? realloc(a->py, sizeof(double) * (size_t)(a->pn + n + 1)) : NULL;
    if (gy)
        a->py = gy;
    if (!gx || !gy)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    memcpy(a->px + a->pn, x, sizeof(double) * (size_t)n);
    memcpy(a->py + a->pn, y, sizeof(double) * (size_t)n);
    a->pn += n;
    a->numel = n;
    a->added++;
    a->cos_nan |= isnan(m->cos);
    a->cos_mean += m->cos / a->n_inputs;
    a->cos_worst = m->cos < a->cos_worst ? m->cos : a->cos_worst;
    a->sqnr_mean += m->sqnr_db / a->n_inputs;
    a->sqnr_worst = m->sqnr_db < a->sqnr_worst ? m->sqnr_db : a->sqnr_worst;
    a->max_abs = m->max_abs > a->max_abs ? m->max_abs : a->max_abs;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]) / nb_fp16_step(fmax(fabs(x[i]), fabs(y[i])));
        if (!(d <= a->fp16_steps)) /* NaN too */
            a->fp16_steps = d;
    }
    return NB_OK;
}

void nb_cmp_over_inputs_finish(nb_cmp_over_inputs *a)
{
    nb_cmp_metrics pm; /* the K inputs together */
    nb_cmp_metrics_compute(a->px, a->py, a->pn, &pm);
    a->pooled_cos = pm.cos;
    a->pooled_sqnr = pm.sqnr_db;
    if (a->cos_nan)
        a->cos_worst = a->cos_mean = NAN;
    /* a cosine of one value is 1: a score's is taken over the K inputs together */
    a->gate = a->numel == 1 ? pm.cos : a->cos_worst;
}

void nb_cmp_over_inputs_free(nb_cmp_over_inputs *a)
{
    free(a->px);
    free(a->py);
    a->px = a->py = NULL;
    a->pn = 0;
}

/* ---- one output over K inputs, from .npy files (accucmp.h) ---- */

/* path's values as doubles (malloc'd), their count in *n; its shape into shape (may be NULL) */
static nb_err npy_doubles(const char *path, double **v, int64_t *n, char *shape, size_t slen,
                          nb_status *st)
{
    nb_tensor *t = NULL;
    if (nb_npy_read(path, &t, st))
        return st->code;
    *n = t->numel;
    *v = malloc(sizeof(double) * ((size_t)t->numel + 1));
    if (!*v) {
        nb_tensor_free(t);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < t->numel; i++)
        (*v)[i] = nb_tensor_get_f64(t, i);
    if (shape)
        nb_shape_str(t->rank, t->dims, 'x', shape, slen);
    nb_tensor_free(t);
    return NB_OK;
}

nb_err nb_cmp_output_files(const nb_cmp_output_files_opts *o, nb_cmp_output_files_result *r,
                           nb_status *st)
{
    memset(r, 0, sizeof *r);
    nb_cmp_over_inputs_init(&r->acc, o->n_inputs);
    r->gate = NAN;
    if (o->n_inputs < 1)
        return nb_fail(st, NB_ERR_ARG, "no input to compare an output over");
    r->per_input = calloc((size_t)o->n_inputs, sizeof *r->per_input);
    if (!r->per_input)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < o->n_inputs; k++) {
        double *x = NULL, *y = NULL;
        int64_t nx = 0, ny = 0;
        if (npy_doubles(o->npu[k], &x, &nx, k ? NULL : r->shape, sizeof r->shape, st) ||
            npy_doubles(o->reference[k], &y, &ny, NULL, 0, st)) {
            free(x);
            return st->code;
        }
        nb_err e = nx != ny ? nb_fail(st, NB_ERR_DATA, "%s: %lld values from the NPU, %lld "
                                      "from the reference %s", o->npu[k], (long long)nx,
                                      (long long)ny, o->reference[k])
                            : nb_cmp_over_inputs_add(&r->acc, x, y, nx, &r->per_input[k], st);
        free(x);
        free(y);
        if (e)
            return e;
    }
    nb_cmp_over_inputs_finish(&r->acc);
    r->fp16_resolution = o->npu_dtype && !strcmp(o->npu_dtype, "FLOAT16") &&
                         r->acc.fp16_steps <= 2;
    r->gate = r->fp16_resolution ? 1.0 : r->acc.gate;
    return NB_OK;
}

void nb_cmp_output_files_free(nb_cmp_output_files_result *r)
{
    nb_cmp_over_inputs_free(&r->acc);
    free(r->per_input);
    r->per_input = NULL;
}
