/* nanobench quant: AdaRound, learned rounding of a layer's weights (include/nb/quant.h,
 * nb_adaround; issue 40). Each weight is rounded down or up, as a soft variable h(V) learned
 * on the layer's calibration inputs chooses, instead of to the nearest level; the scale
 * stays ARQ's. Nagel et al., "Up or Down? Adaptive Rounding for Post-Training
 * Quantization" (ICML 2020): the rectified sigmoid h(V) = clip(sigmoid(V) (zeta - gamma) +
 * gamma, 0, 1) with zeta 1.1 and gamma -0.1, the loss ||W x - W~ x^||^2 + lambda sum (1 -
 * |2 h - 1|^beta), beta annealed from 20 to 2 after a warm start without the regularizer
 * (AMCT's ada_quantize: reg_param 0.01, beta_range 20 -> 2, warm_start 0.2; quant.md 1.4),
 * Adam on V. Deterministic: no random numbers here (the caller picks the samples). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nb/quant.h"
#include "quant_internal.h"

#define ADA_ZETA 1.1f
#define ADA_GAMMA (-0.1f)

/* y[r] = sum_k a[r * k + j] x[j] for r < rows (float rows, float sums: vectorizes). */
NB_QUANT_AVX2_CLONES static void matvec(const float *a, int64_t rows, int64_t k, const float *x,
                                        float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * k;
        float s8[8] = {0};
        int64_t j = 0;
        for (; j + 8 <= k; j += 8)
            for (int t = 0; t < 8; t++)
                s8[t] += ar[j + t] * x[j + t];
        for (; j < k; j++)
            s8[0] += ar[j] * x[j];
        y[r] = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
    }
}

/* at [k x p] = a [p x k] transposed */
static void transpose(const float *a, int64_t p, int64_t k, float *at)
{
    for (int64_t i = 0; i < p; i++)
        for (int64_t j = 0; j < k; j++)
            at[j * p + i] = a[i * k + j];
}

/* c [m x n] = a [m x k] b [k x n] (row-major): each c[i][j] summed over k in order, rows of
   b added in (vectorized over j), so that the result does not depend on the machine's
   threads or BLAS (OpenBLAS's sgemm gave other roundings with 1 and 2 threads). */
NB_QUANT_AVX2_CLONES static void mm(const float *a, const float *b, int64_t m, int64_t n,
                                    int64_t k, float *c)
{
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * n;
        for (int64_t j = 0; j < n; j++)
            ci[j] = 0;
        const float *ai = a + i * k;
        for (int64_t t = 0; t < k; t++) {
            const float at = ai[t], *bt = b + t * n;
            if (at == 0)
                continue;
            for (int64_t j = 0; j < n; j++)
                ci[j] += at * bt[j];
        }
    }
}

static float hsoft(float v, float *dh)
{
    float sg = 1.0f / (1.0f + expf(-v)), h = sg * (ADA_ZETA - ADA_GAMMA) + ADA_GAMMA;
    if (h <= 0 || h >= 1) {
        *dh = 0;
        return h <= 0 ? 0.0f : 1.0f;
    }
    *dh = sg * (1 - sg) * (ADA_ZETA - ADA_GAMMA);
    return h;
}

/* The loss sum_p (xq_p . r - x_p . wi)^2 of one row's integers r (as floats) against its
 * real values wi (w / scale), on the p samples (t1, t2: scratch of p). */
static double row_loss(const float *x, const float *xq, int64_t p, int64_t k, const float *wi,
                       const float *r, float *t1, float *t2)
{
    matvec(xq, p, k, r, t1);
    matvec(x, p, k, wi, t2);
    double s = 0;
    for (int64_t i = 0; i < p; i++)
        s += ((double)t1[i] - t2[i]) * ((double)t1[i] - t2[i]);
    return s;
}

void nb_ada_defaults(nb_ada_params *a)
{
    *a = (nb_ada_params){.iters = 500, .reg = 0.01f, .beta_start = 20, .beta_end = 2,
                         .warm = 0.2f, .lr = 0.03f};
}

/* One Adam step of every row's V (all cout x k at once): the regularizer's gradient added
   to gr (from warm on), then through h'(V). */
static void ada_step(float *v, float *m1, float *m2, const float *h, const float *dh,
                     const float *gr, int64_t n, const nb_ada_params *pr, int it, int warm,
                     float b1t, float b2t)
{
    const float b1 = 0.9f, b2 = 0.999f;
    float beta = 0;
    if (it >= warm) { /* beta from beta_start down to beta_end */
        float rel = pr->iters > warm ? (float)(it - warm) / (float)(pr->iters - warm) : 1;
        beta = pr->beta_end + (pr->beta_start - pr->beta_end) * (1 - rel);
    }
    for (int64_t j = 0; j < n; j++) {
        float g = gr[j];
        if (beta > 0) { /* d/dh (1 - |2h - 1|^beta) = -2 beta |u|^(beta - 1) sign(u) */
            float u = 2 * h[j] - 1, au = fabsf(u);
            if (au > 0)
                g += pr->reg * -2 * beta * powf(au, beta - 1) * (u > 0 ? 1.0f : -1.0f);
        }
        g *= dh[j];
        m1[j] = b1 * m1[j] + (1 - b1) * g;
        m2[j] = b2 * m2[j] + (1 - b2) * g * g;
        float mh = m1[j] / (1 - b1t), vh = m2[j] / (1 - b2t);
        v[j] -= pr->lr * mh / (sqrtf(vh) + 1e-8f);
    }
}

nb_err nb_adaround(const float *w, const float *scale, int64_t cout, int64_t k, const float *x,
                   const float *xq, int64_t p, int bits, const nb_ada_params *pr, int8_t *q,
                   int64_t *n_changed, nb_status *st)
{
    if (cout < 1 || k < 1 || p < 1 || (bits != 8 && bits != 4) || !pr || pr->iters < 0)
        return nb_fail(st, NB_ERR_ARG, "AdaRound of %lld x %lld weights on %lld samples, %d bits",
                       (long long)cout, (long long)k, (long long)p, bits);
    const float qmax = (float)(ldexp(1, bits - 1) - 1);
    /* the last quarter of the samples (the last batches) held out: a row takes its learned
       rounding only when it is better than nearest on both parts, so never worse on all
       of them, and not merely fitted to the samples it was learned on */
    const int64_t pt = p >= 8 ? p - p / 4 : p, pv = p - pt;
    const float *xv = x + pt * k, *xqv = xq + pt * k;
    /* the product a step: H [cout, k] by the Gram matrix Xq^T Xq [k, k], or through the
       samples (H Xq^T, then by Xq) when they are fewer */
    const bool use_gram = k <= 2 * pt;
    const size_t n = (size_t)(cout * k), kk = (size_t)k, np = (size_t)pt;
    float *wi = malloc(sizeof(float) * n), *fl = malloc(sizeof(float) * n),
          *v = malloc(sizeof(float) * n), *m1 = calloc(n, sizeof(float)),
          *m2 = calloc(n, sizeof(float)), *h = malloc(sizeof(float) * n),
          *dh = malloc(sizeof(float) * n), *gr = malloc(sizeof(float) * n),
          *b = malloc(sizeof(float) * n), *xqt = malloc(sizeof(float) * kk * np),
          *xt = malloc(sizeof(float) * kk * np),
          *gq = use_gram ? malloc(sizeof(float) * kk * kk) : NULL,
          *cxt = use_gram ? malloc(sizeof(float) * kk * kk) : NULL,
          *t1 = malloc(sizeof(float) * ((size_t)cout * np + (size_t)p + kk)),
          *t2 = malloc(sizeof(float) * ((size_t)cout * np + (size_t)p + kk)),
          *rn = malloc(sizeof(float) * kk);
    nb_err e = NB_OK;
    if (!wi || !fl || !v || !m1 || !m2 || !h || !dh || !gr || !b || !xqt || !xt || !t1 ||
        !t2 || !rn || (use_gram && (!gq || !cxt))) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* the normalization: the loss of rounding noise of variance 1/12 is about k / 12 */
    double xx = 0;
    for (int64_t i = 0; i < pt * k; i++)
        xx += (double)xq[i] * xq[i];
    const float norm = xx > 0 ? (float)((double)k / xx) : 1.0f;
    for (int64_t c = 0; c < cout; c++)
        for (int64_t j = 0; j < k; j++) {
            size_t at = (size_t)(c * k + j);
            wi[at] = w[at] / scale[c];
            float f = floorf(wi[at]);
            f = f < -qmax ? -qmax : f > qmax - 1 ? qmax - 1 : f; /* down to -qmax, up to qmax */
            fl[at] = f;
            float rest = wi[at] - f;
            rest = rest < 0 ? 0 : rest > 1 ? 1 : rest;
            float a = (rest - ADA_GAMMA) / (ADA_ZETA - ADA_GAMMA); /* h(V) = rest */
            v[at] = logf(a / (1 - a));
        }
    transpose(xq, pt, k, xqt);
    transpose(x, pt, k, xt);
    /* the constant part of the gradient: B = FL Gq - WI Cx^T (Cx = Xq^T X), or E0 = FL Xq^T -
       WI X^T through the samples */
    if (use_gram) {
        mm(xqt, xq, k, k, pt, gq);
        mm(xt, xq, k, k, pt, cxt);
        mm(fl, gq, cout, k, k, b);
        mm(wi, cxt, cout, k, k, gr);
    } else {
        mm(fl, xqt, cout, pt, k, t2);
        mm(wi, xt, cout, pt, k, t1);
    }
    if (use_gram)
        for (size_t j = 0; j < n; j++)
            b[j] -= gr[j];
    else
        for (size_t j = 0; j < (size_t)cout * np; j++)
            t2[j] -= t1[j];
    const int warm = (int)(pr->warm * (float)pr->iters);
    float b1t = 1, b2t = 1;
    for (int it = 0; it < pr->iters; it++) {
        for (size_t j = 0; j < n; j++)
            h[j] = hsoft(v[j], &dh[j]);
        if (use_gram) { /* grad = 2 norm (H Gq + B) */
            mm(h, gq, cout, k, k, gr);
            for (size_t j = 0; j < n; j++)
                gr[j] = 2 * norm * (gr[j] + b[j]);
        } else { /* grad = 2 norm (H Xq^T + E0) Xq */
            mm(h, xqt, cout, pt, k, t1);
            for (size_t j = 0; j < (size_t)cout * np; j++)
                t1[j] += t2[j];
            mm(t1, xq, cout, k, pt, gr);
            for (size_t j = 0; j < n; j++)
                gr[j] *= 2 * norm;
        }
        b1t *= 0.9f, b2t *= 0.999f;
        ada_step(v, m1, m2, h, dh, gr, (int64_t)n, pr, it, warm, b1t, b2t);
    }
    /* hard rounding: up where h(V) >= 0.5; a row keeps nearest unless its learned rounding is
       better on both the learning and the held-out samples */
    int64_t changed = 0;
    for (int64_t c = 0; c < cout; c++) {
        float *hr = h + c * k;
        const float *wr = wi + c * k;
        for (int64_t j = 0; j < k; j++) {
            float d, up = fl[c * k + j] + (hsoft(v[c * k + j], &d) >= 0.5f ? 1.0f : 0.0f);
            float nr = nearbyintf(wr[j]);
            rn[j] = nr > qmax ? qmax : nr < -qmax ? -qmax : nr;
            hr[j] = up > qmax ? qmax : up < -qmax ? -qmax : up;
        }
        bool better = row_loss(x, xq, pt, k, wr, hr, t1, t2) < row_loss(x, xq, pt, k, wr, rn, t1, t2);
        if (better && pv > 0)
            better = row_loss(xv, xqv, pv, k, wr, hr, t1, t2) <=
                     row_loss(xv, xqv, pv, k, wr, rn, t1, t2);
        const float *pick = better ? hr : rn;
        for (int64_t j = 0; j < k; j++) {
            int8_t qv = (int8_t)(int)pick[j];
            changed += qv != (int8_t)(int)rn[j];
            q[c * k + j] = qv;
        }
    }
    if (n_changed)
        *n_changed = changed;
out:
    free(wi), free(fl), free(v), free(m1), free(m2), free(h), free(dh), free(gr), free(b);
    free(xqt), free(xt), free(gq), free(cxt), free(t1), free(t2), free(rn);
    return e;
}

const char *nb_weight_round_name(nb_weight_round r)
{
    return r == NB_ROUND_ADAROUND ? "adaround" : "nearest";
}

bool nb_weight_round_parse(const char *name, nb_weight_round *r)
{
    if (!name)
        return false;
    if (!strcasecmp(name, "nearest"))
        *r = NB_ROUND_NEAREST;
    else if (!strcasecmp(name, "adaround"))
        *r = NB_ROUND_ADAROUND;
    else
        return false;
    return true;
}
