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

/* y[j] = sum_r a[r * k + j] e[r] for j < k (a transposed times e). */
NB_QUANT_AVX2_CLONES static void matvec_t(const float *a, int64_t rows, int64_t k, const float *e,
                                          float *y)
{
    for (int64_t j = 0; j < k; j++)
        y[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * k, er = e[r];
        for (int64_t j = 0; j < k; j++)
            y[j] += ar[j] * er;
    }
}

/* g = a^T b for a [p, k], b [p, k] (k x k, float, row by row of the samples). */
NB_QUANT_AVX2_CLONES static void gram(const float *a, const float *b, int64_t p, int64_t k,
                                      float *g)
{
    memset(g, 0, sizeof(float) * (size_t)(k * k));
    for (int64_t s = 0; s < p; s++) {
        const float *as = a + s * k, *bs = b + s * k;
        for (int64_t i = 0; i < k; i++) {
            const float ai = as[i];
            float *gi = g + i * k;
            for (int64_t j = 0; j < k; j++)
                gi[j] += ai * bs[j];
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
    bool use_gram = k <= 2 * pt; /* k^2 a step, against 2 p k with the samples */
    size_t kk = (size_t)k;
    float *wi = malloc(sizeof(float) * kk), *fl = malloc(sizeof(float) * kk),
          *v = malloc(sizeof(float) * kk), *m1 = malloc(sizeof(float) * kk),
          *m2 = malloc(sizeof(float) * kk), *h = malloc(sizeof(float) * kk),
          *dh = malloc(sizeof(float) * kk), *gr = malloc(sizeof(float) * kk),
          *b = malloc(sizeof(float) * kk), *rn = malloc(sizeof(float) * kk),
          *t1 = malloc(sizeof(float) * (size_t)p + sizeof(float) * kk),
          *t2 = malloc(sizeof(float) * (size_t)p + sizeof(float) * kk),
          *gq = use_gram ? malloc(sizeof(float) * kk * kk) : NULL,
          *cx = use_gram ? malloc(sizeof(float) * kk * kk) : NULL;
    nb_err e = NB_OK;
    if (!wi || !fl || !v || !m1 || !m2 || !h || !dh || !gr || !b || !rn || !t1 || !t2 ||
        (use_gram && (!gq || !cx))) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* the normalization: the loss of rounding noise of variance 1/12 is about k / 12 */
    double xx = 0;
    for (int64_t i = 0; i < pt * k; i++)
        xx += (double)xq[i] * xq[i];
    const float norm = xx > 0 ? (float)((double)k / xx) : 1.0f;
    if (use_gram) {
        gram(xq, xq, pt, k, gq);
        gram(xq, x, pt, k, cx);
    }
    int64_t changed = 0;
    const int warm = (int)(pr->warm * (float)pr->iters);
    for (int64_t c = 0; c < cout; c++) {
        const float s = scale[c];
        for (int64_t j = 0; j < k; j++) {
            wi[j] = w[c * k + j] / s;
            fl[j] = floorf(wi[j]);
            if (fl[j] < -qmax) /* the integer range: down to -qmax, up to qmax */
                fl[j] = -qmax;
            if (fl[j] > qmax - 1)
                fl[j] = qmax - 1;
            float rest = wi[j] - fl[j];
            rest = rest < 0 ? 0 : rest > 1 ? 1 : rest;
            float a = (rest - ADA_GAMMA) / (ADA_ZETA - ADA_GAMMA); /* h(V) = rest */
            v[j] = logf(a / (1 - a));
            m1[j] = m2[j] = 0;
        }
        /* the constant part of the gradient: Gq fl - Cx wi (Gram), or Xq fl - X wi */
        if (use_gram) {
            matvec(gq, k, k, fl, b);
            matvec(cx, k, k, wi, gr);
            for (int64_t j = 0; j < k; j++)
                b[j] -= gr[j];
        } else {
            matvec(xq, pt, k, fl, t1);
            matvec(x, pt, k, wi, t2);
            for (int64_t i = 0; i < pt; i++)
                t2[i] = t1[i] - t2[i]; /* e0 */
        }
        const float b1 = 0.9f, b2 = 0.999f;
        float b1t = 1, b2t = 1;
        for (int it = 0; it < pr->iters; it++) {
            for (int64_t j = 0; j < k; j++)
                h[j] = hsoft(v[j], &dh[j]);
            if (use_gram) { /* grad = 2 (Gq h + b) */
                matvec(gq, k, k, h, gr);
                for (int64_t j = 0; j < k; j++)
                    gr[j] = 2 * norm * (gr[j] + b[j]);
            } else { /* grad = 2 Xq^T (Xq h + e0) */
                matvec(xq, pt, k, h, t1);
                for (int64_t i = 0; i < pt; i++)
                    t1[i] += t2[i];
                matvec_t(xq, pt, k, t1, gr);
                for (int64_t j = 0; j < k; j++)
                    gr[j] *= 2 * norm;
            }
            if (it >= warm) { /* the regularizer, beta from beta_start down to beta_end */
                float rel = pr->iters > warm ? (float)(it - warm) / (float)(pr->iters - warm) : 1;
                float beta = pr->beta_end + (pr->beta_start - pr->beta_end) * (1 - rel);
                for (int64_t j = 0; j < k; j++) {
                    float u = 2 * h[j] - 1, au = fabsf(u);
                    /* d/dh (1 - |2h - 1|^beta) = -2 beta |u|^(beta - 1) sign(u) */
                    float d = au > 0 ? -2 * beta * powf(au, beta - 1) * (u > 0 ? 1.0f : -1.0f) : 0;
                    gr[j] += pr->reg * d;
                }
            }
            b1t *= b1, b2t *= b2;
            for (int64_t j = 0; j < k; j++) { /* Adam on V */
                float g = gr[j] * dh[j];
                m1[j] = b1 * m1[j] + (1 - b1) * g;
                m2[j] = b2 * m2[j] + (1 - b2) * g * g;
                float mh = m1[j] / (1 - b1t), vh = m2[j] / (1 - b2t);
                v[j] -= pr->lr * mh / (sqrtf(vh) + 1e-8f);
            }
        }
        /* hard rounding: up where h(V) >= 0.5; the row kept at nearest when that is not
           worse on the samples (never a loss against today's rounding) */
        for (int64_t j = 0; j < k; j++) {
            float d;
            h[j] = fl[j] + (hsoft(v[j], &d) >= 0.5f ? 1.0f : 0.0f);
            float nr = nearbyintf(wi[j]);
            rn[j] = nr > qmax ? qmax : nr < -qmax ? -qmax : nr;
            h[j] = h[j] > qmax ? qmax : h[j] < -qmax ? -qmax : h[j];
        }
        double la = row_loss(x, xq, pt, k, wi, h, t1, t2),
               ln = row_loss(x, xq, pt, k, wi, rn, t1, t2);
        bool better = la < ln;
        if (better && pv > 0)
            better = row_loss(xv, xqv, pv, k, wi, h, t1, t2) <= row_loss(xv, xqv, pv, k, wi, rn, t1, t2);
        const float *pick = better ? h : rn;
        for (int64_t j = 0; j < k; j++) {
            int8_t qv = (int8_t)(int)pick[j];
            changed += pick == h && qv != (int8_t)(int)rn[j];
            q[c * k + j] = qv;
        }
    }
    if (n_changed)
        *n_changed = changed;
out:
    free(wi), free(fl), free(v), free(m1), free(m2), free(h), free(dh), free(gr), free(b);
    free(rn), free(t1), free(t2), free(gq), free(cx);
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
