/* nanobench accuracy comparison: the per-tensor metrics (include/nb/accucmp.h; the
 * definitions, after msaccucmp's builtin algorithms, in share/doc/metrics.md). */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/accucmp.h"

#define EPS DBL_EPSILON /* msaccucmp's FLOAT_EPSILON, np.finfo(float).eps */

/* KL of min-max normalised distributions: P = (v - min) / (max - min) (left as it is when
   max = min), floored at FLT_EPSILON, p = P / sum P; KL = sum p_x log(p_x / p_y). NaN when
   a side sums to 0. One pass, from the identity sum p_x log(p_x / p_y) =
   (1 / Sx) sum Px log(Px / Py) + log(Sy / Sx) with Sx = sum Px, Sy = sum Py. */
static double kl_div(const double *x, const double *y, const unsigned char *ok, int64_t n,
                     double mnx, double mxx, double mny, double mxy)
{
    double sx = 0, sy = 0, t = 0;
    double dx = mxx > mnx ? 1.0 / (mxx - mnx) : 0, dy = mxy > mny ? 1.0 / (mxy - mny) : 0;
    for (int64_t i = 0; i < n; i++)
        if (ok[i]) {
            double px = dx > 0 ? (x[i] - mnx) * dx : x[i];
            double py = dy > 0 ? (y[i] - mny) * dy : y[i];
            px = px > FLT_EPSILON ? px : FLT_EPSILON;
            py = py > FLT_EPSILON ? py : FLT_EPSILON;
            sx += px, sy += py;
            t += px * (double)logf((float)(px / py)); /* fp32 log: 1e-7 relative per term */
        }
    if (!(sx > 0) || !(sy > 0))
        return NAN;
    double kl = t / sx + log(sy / sx);
    /* KL(p || q) >= 0 (Gibbs' inequality): a value below 0 is the fp32 logs' rounding
       (the vendor's analyser logs in fp32 too), not a divergence */
    return kl < EPS ? 0.0 : kl;
}

static void set_nan(nb_cmp_metrics *m)
{
    m->cos = m->max_abs = m->acc_rel = m->red = m->kl = m->mae = m->rmse = NAN;
    m->max_rel = m->mean_rel = m->sqnr_db = NAN;
    m->mean_x = m->std_x = m->mean_y = m->std_y = NAN;
}

void nb_cmp_metrics_compute(const double *x, const double *y, int64_t n, nb_cmp_metrics *m)
{
    memset(m, 0, sizeof *m);
    unsigned char *ok = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!ok) {
        snprintf(m->note, sizeof m->note, "out of memory");
        set_nan(m);
        return;
    }
    double sxy = 0, sxx = 0, syy = 0, see = 0, sx = 0, sy = 0, sae = 0, srel = 0;
    double max_abs = 0, max_rel = 0;
    double mnx = INFINITY, mxx = -INFINITY, mny = INFINITY, mxy = -INFINITY;
    /* one pass for every sum, the extremes and the KL's min and max, assuming every value
       finite; where one is not, a second pass leaves those pairs out */
    bool all_finite = true;
    for (int64_t i = 0; i < n; i++) {
        double e = x[i] - y[i], ae = fabs(e), ay = fabs(y[i]);
        all_finite &= isfinite(x[i]) && isfinite(y[i]);
        sxy += x[i] * y[i], sxx += x[i] * x[i], syy += y[i] * y[i], see += e * e;
        sx += x[i], sy += y[i], sae += ae;
        max_abs = ae > max_abs ? ae : max_abs;
        double rel = ay <= EPS ? 0.0 : ae / ay; /* |x/y - 1| = |x - y| / |y| */
        srel += rel;
        max_rel = rel > max_rel ? rel : max_rel;
        mnx = x[i] < mnx ? x[i] : mnx, mxx = x[i] > mxx ? x[i] : mxx;
        mny = y[i] < mny ? y[i] : mny, mxy = y[i] > mxy ? y[i] : mxy;
        m->sat_x += fabs(x[i]) == 65504.0;
        ok[i] = 1;
    }
    if (all_finite) {
        m->n = n;
    } else {
        sxy = sxx = syy = see = sx = sy = sae = srel = max_abs = max_rel = 0;
        mnx = mny = INFINITY, mxx = mxy = -INFINITY;
        m->sat_x = 0;
        for (int64_t i = 0; i < n; i++) {
            bool fx = isfinite(x[i]), fy = isfinite(y[i]);
            m->nan_x += isnan(x[i]), m->inf_x += isinf(x[i]);
            m->nan_y += isnan(y[i]), m->inf_y += isinf(y[i]);
            m->sat_x += fabs(x[i]) == 65504.0;
            ok[i] = fx && fy;
            if (!ok[i])
                continue;
            m->n++;
            double e = x[i] - y[i];
            sxy += x[i] * y[i], sxx += x[i] * x[i], syy += y[i] * y[i], see += e * e;
            sx += x[i], sy += y[i], sae += fabs(e);
            max_abs = fabs(e) > max_abs ? fabs(e) : max_abs;
            double rel = fabs(y[i]) <= EPS ? 0.0 : fabs(e) / fabs(y[i]);
            srel += rel;
            max_rel = rel > max_rel ? rel : max_rel;
            mnx = x[i] < mnx ? x[i] : mnx, mxx = x[i] > mxx ? x[i] : mxx;
            mny = y[i] < mny ? y[i] : mny, mxy = y[i] > mxy ? y[i] : mxy;
        }
    }
    int64_t k = m->n;
    double nx = sqrt(sxx), ny = sqrt(syy);
    if (k == 0) {
        set_nan(m);
        snprintf(m->note, sizeof m->note, "no finite pair to compare");
        free(ok);
        return;
    }
    if (k == 1) {
        m->cos = 1.0;
        snprintf(m->note, sizeof m->note, "this tensor is scalar");
    } else if (nx <= EPS && ny <= EPS) {
        m->cos = 1.0;
    } else if (nx <= EPS || ny <= EPS) {
        m->cos = NAN;
        snprintf(m->note, sizeof m->note, "all the data is zero in the %s dump",
                 nx <= EPS ? "NPU" : "golden");
    } else {
        m->cos = fmin(1.0, sxy / (nx * ny));
    }
    m->max_abs = max_abs;
    m->acc_rel = srel;
    m->red = ny > 0 ? sqrt(see) / ny : (see > 0 ? INFINITY : 0.0);
    m->kl = kl_div(x, y, ok, n, mnx, mxx, mny, mxy);
    m->mean_x = sx / (double)k, m->mean_y = sy / (double)k;
    /* population variance from the sums of squares (shown to 3 decimals) */
    double vx = sxx / (double)k - m->mean_x * m->mean_x;
    double vy = syy / (double)k - m->mean_y * m->mean_y;
    m->std_x = sqrt(vx > 0 ? vx : 0), m->std_y = sqrt(vy > 0 ? vy : 0);
    m->mae = sae / (double)k;
    m->rmse = sqrt(see / (double)k);
    m->max_rel = max_rel;
    m->mean_rel = srel / (double)k;
    m->sqnr_db = see > 0 ? 10.0 * log10(syy / see) : INFINITY;
    free(ok);
}

void nb_cmp_thresholds_default(nb_cmp_thresholds *t)
{
    t->cos_min = 0.99;
    t->red_max = 0.05;
    t->kl_max = 0.005;
    t->rmse_max = 1.0;
    t->mean_rel_max = 1.0;
}

nb_err nb_cmp_thresholds_parse(const char *s, nb_cmp_thresholds *t, nb_status *st)
{
    size_t sl = strlen(s);
    if (!sl || s[0] == ',' || s[sl - 1] == ',' || strstr(s, ",,"))
        return nb_fail(st, NB_ERR_ARG, "--threshold: '%s' has an empty item (NAME=NUMBER,...)", s);
    char *copy = strdup(s), *save = NULL;
    if (!copy)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    nb_err e = NB_OK;
    for (char *it = strtok_r(copy, ",", &save); it && !e; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '='), *end = NULL;
        double v = eq ? strtod(eq + 1, &end) : NAN;
        if (!eq || end == eq + 1 || *end || !isfinite(v)) {
            e = nb_fail(st, NB_ERR_ARG, "--threshold: '%s' is not NAME=NUMBER", it);
            break;
        }
        *eq = 0;
        if (strcmp(it, "cos") ? v < 0 : (v < -1 || v > 1)) {
            e = nb_fail(st, NB_ERR_ARG, "--threshold: %s=%g is out of range (cos in [-1, 1], "
                        "the others >= 0)", it, v);
            break;
        }
        if (!strcmp(it, "cos"))
            t->cos_min = v;
        else if (!strcmp(it, "red"))
            t->red_max = v;
        else if (!strcmp(it, "kl"))
            t->kl_max = v;
        else if (!strcmp(it, "rmse"))
            t->rmse_max = v;
        else if (!strcmp(it, "mre"))
            t->mean_rel_max = v;
        else
            e = nb_fail(st, NB_ERR_ARG, "--threshold: unknown metric '%s' (cos, red, kl, rmse, "
                        "mre)", it);
    }
    free(copy);
    return e;
}

bool nb_cmp_fails(const nb_cmp_metrics *m, const nb_cmp_thresholds *t, char *why, size_t len)
{
    why[0] = 0;
    struct {
        bool bad;
        const char *name;
    } c[5] = {{m->cos < t->cos_min, "cos"},
              {m->red > t->red_max, "red"},
              {m->kl > t->kl_max, "kl"},
              {m->rmse > t->rmse_max, "rmse"},
              {m->mean_rel > t->mean_rel_max, "mre"}};
    bool any = false;
    for (int i = 0; i < 5; i++)
        if (c[i].bad) {
            size_t at = strlen(why);
            snprintf(why + at, len - at, "%s%s", any ? ", " : "", c[i].name);
            any = true;
        }
    return any;
}

double nb_fp16_step(double v)
{
    v = fabs(v);
    if (v < 6.103515625e-05) /* 2^-14: subnormal spacing */
        return 5.9604644775390625e-08;
    int e;
    frexp(v, &e); /* v = f x 2^e, f in [0.5, 1): v in [2^(e-1), 2^e) */
    return ldexp(1.0, e - 1 - 10);
}
