/* nanobench: activation histograms and calibration algorithms, and ARQ for weights
 * (include/nb/quant.h). Formulas restated from ../shared/docs/facts/quant.md (AMCT IFMR,
 * HFMG, ARQ, CalScaleOffset; ONNX Runtime's percentile and entropy calibrators; PyTorch's
 * HistogramObserver search). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb/quant.h"
#include "quant_internal.h"

#define SCALE_EPS 1.192092896e-07

/* x rounded to the nearest integer, ties to even, as nearbyint in the default rounding mode
 * but without its libm call (x86-64 has no inline rounding before SSE4.1): adding and
 * subtracting 1.5 x 2^52 leaves exactly that integer for |x| < 2^51. The hot loops of the
 * IFMR search and ARQ use it; callers keep x in range. */
static inline double round_even(double x)
{
    const double magic = 6755399441055744.0;
    return (x + magic) - magic;
}

/* ---- histogram ---- */

nb_err nb_hist_init(nb_hist *h, int bins, nb_status *st)
{
    memset(h, 0, sizeof *h);
    if (bins < 2 || bins > (1 << 20))
        return nb_fail(st, NB_ERR_ARG, "histogram of %d bins (2 .. 2^20)", bins);
    h->count = calloc((size_t)bins, sizeof(double));
    if (!h->count)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    h->bins = bins;
    h->min = INFINITY;
    h->max = -INFINITY;
    return NB_OK;
}

void nb_hist_free(nb_hist *h)
{
    free(h->count);
    memset(h, 0, sizeof *h);
}

/* Re-spreads the counts over [lo, hi] (which holds the old range): each old bin's mass is
 * uniform over its width and goes to the new bins it overlaps, in proportion. */
static nb_err widen(nb_hist *h, double lo, double hi, nb_status *st)
{
    double *nc = calloc((size_t)h->bins, sizeof(double));
    if (!nc)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    double nw = (hi - lo) / h->bins, ow = (h->hi - h->lo) / h->bins;
    for (int b = 0; b < h->bins; b++) {
        double m = h->count[b];
        if (m == 0)
            continue;
        if (ow == 0) { /* every old value was h->lo */
            int k = (int)((h->lo - lo) / nw);
            nc[k < 0 ? 0 : k >= h->bins ? h->bins - 1 : k] += m;
            continue;
        }
        double a = h->lo + b * ow, e = a + ow;
        int k0 = (int)floor((a - lo) / nw), k1 = (int)floor((e - lo) / nw);
        if (k0 < 0)
            k0 = 0;
        if (k1 >= h->bins)
            k1 = h->bins - 1;
        for (int k = k0; k <= k1; k++) {
            double s = lo + k * nw, t = s + nw;
            double ov = fmin(e, t) - fmax(a, s);
            if (ov > 0)
                nc[k] += m * ov / ow;
        }
    }
    free(h->count);
    h->count = nc;
    h->lo = lo;
    h->hi = hi;
    return NB_OK;
}

/* The histogram bin of each of x[0..n): floor((x - base) x inv) clamped to [0, last], in
 * double (a range past FLT_MAX stays finite), the same value as the per-value expression. */
NB_QUANT_AVX2_CLONES static void bin_index(const float *x, int64_t n, double base, double inv,
                                           int last, int32_t *idx)
{
    const double top = last;
    for (int64_t i = 0; i < n; i++) {
        double f = ((double)x[i] - base) * inv;
        f = f < 0 ? 0 : f >= top ? top : f;
        idx[i] = (int32_t)f;
    }
}

nb_err nb_hist_add(nb_hist *h, const float *x, int64_t n, nb_status *st)
{
    if (n <= 0)
        return NB_OK;
    /* four lanes of plain comparisons (no fmin call; independent chains); v - v is 0
       unless v is NaN or infinite */
    float lo4[4] = {x[0], x[0], x[0], x[0]}, hi4[4] = {x[0], x[0], x[0], x[0]};
    int bad4[4] = {0, 0, 0, 0};
    int64_t i4 = 0;
    for (; i4 + 4 <= n; i4 += 4)
        for (int k = 0; k < 4; k++) {
            float v = x[i4 + k];
            bad4[k] |= !(v - v == 0.0f);
            lo4[k] = v < lo4[k] ? v : lo4[k];
            hi4[k] = v > hi4[k] ? v : hi4[k];
        }
    for (; i4 < n; i4++) {
        float v = x[i4];
        bad4[0] |= !(v - v == 0.0f);
        lo4[0] = v < lo4[0] ? v : lo4[0];
        hi4[0] = v > hi4[0] ? v : hi4[0];
    }
    float lo = lo4[0], hi = hi4[0];
    bool finite = !(bad4[0] | bad4[1] | bad4[2] | bad4[3]);
    for (int k = 1; k < 4; k++) {
        lo = lo4[k] < lo ? lo4[k] : lo;
        hi = hi4[k] > hi ? hi4[k] : hi;
    }
    if (!finite)
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(x[i]))
                return nb_fail(st, NB_ERR_DATA, "%s at element %lld",
                               isnan(x[i]) ? "NaN" : "infinity", (long long)i);
    if (h->total == 0) {
        h->lo = lo;
        h->hi = hi;
    } else if (lo < h->lo || hi > h->hi) {
        nb_err e = widen(h, fmin(lo, h->lo), fmax(hi, h->hi), st);
        if (e)
            return e;
    }
    h->min = fmin(h->min, lo);
    h->max = fmax(h->max, hi);
    double w = (h->hi - h->lo) / h->bins;
    if (w > 0 && n < h->bins) { /* fewer values than bins: straight into the counts */
        double inv = 1.0 / w, base = h->lo;
        int32_t idx[1024];
        for (int64_t i0 = 0; i0 < n; i0 += 1024) {
            int64_t len = n - i0 < 1024 ? n - i0 : 1024;
            bin_index(x + i0, len, base, inv, h->bins - 1, idx);
            for (int64_t i = 0; i < len; i++)
                h->count[idx[i]] += 1;
        }
    } else if (w > 0) {
        /* counted in 32-bit integers, in four interleaved copies (a run of equal values, a
           ReLU's zeros, would otherwise wait on its own increment), a block of at most 2^30
           values at a time; then added to the double counts */
        double inv = 1.0 / w, base = h->lo; /* double: a range past FLT_MAX stays finite */
        int last = h->bins - 1, nb = h->bins;
        uint32_t *cnt = malloc(sizeof(uint32_t) * 4 * (size_t)nb);
        if (!cnt)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        for (int64_t at = 0; at < n; at += (int64_t)1 << 30) {
            int64_t m = n - at < ((int64_t)1 << 30) ? n - at : (int64_t)1 << 30;
            const float *xb = x + at;
            memset(cnt, 0, sizeof(uint32_t) * 4 * (size_t)nb);
            /* the bins of a block of 1024 values first (a loop that vectorizes), then the
               counts */
            int32_t idx[1024];
            for (int64_t i0 = 0; i0 < m; i0 += 1024) {
                int64_t len = m - i0 < 1024 ? m - i0 : 1024;
                bin_index(xb + i0, len, base, inv, last, idx);
                int64_t i = 0;
                for (; i + 4 <= len; i += 4)
                    for (int c = 0; c < 4; c++)
                        cnt[c * nb + idx[i + c]]++;
                for (; i < len; i++)
                    cnt[idx[i]]++;
            }
            for (int b = 0; b < nb; b++)
                h->count[b] += (double)cnt[b] + cnt[nb + b] + cnt[2 * nb + b] + cnt[3 * nb + b];
        }
        free(cnt);
    } else {
        h->count[0] += (double)n;
    }
    h->total += (double)n;
    return NB_OK;
}

double nb_hist_quantile(const nb_hist *h, double q)
{
    if (h->total <= 0)
        return 0;
    double target = q * h->total, acc = 0, w = (h->hi - h->lo) / h->bins;
    if (w == 0)
        return h->lo;
    for (int b = 0; b < h->bins; b++) {
        if (acc + h->count[b] >= target && h->count[b] > 0)
            return h->lo + (b + (target - acc) / h->count[b]) * w;
        acc += h->count[b];
    }
    return h->hi;
}

/* ---- scale and offset ---- */

void nb_qparams_from_range(double lo, double hi, int bits, bool asymmetric, nb_qparams *q)
{
    memset(q, 0, sizeof *q);
    q->clip_min = lo;
    q->clip_max = hi;
    q->bits = bits;
    q->asymmetric = asymmetric;
    double qmax = ldexp(1, bits - 1) - 1, qmin = -ldexp(1, bits - 1);
    double scale;
    if (!asymmetric) {
        double m = fabs(hi) >= fabs(lo) ? hi : lo;
        scale = m > 0 ? m / qmax : fabs(m) / -qmin;
        q->offset = 0;
    } else {
        /* the grid holds 0 (AMCT's CalScaleOffset): the range reported is the grid's, not
           the data's minimum above 0 */
        q->clip_max = hi = fmax(hi, 0);
        q->clip_min = lo = fmin(lo, 0);
        scale = (hi - lo) / (ldexp(1, bits) - 1);
        if (scale < SCALE_EPS)
            scale = 1;
        q->offset = (int)(qmin - nearbyint(lo / scale));
    }
    if (scale < SCALE_EPS)
        scale = 1;
    q->scale = (float)scale;
}

int32_t nb_quantize_value(double x, const nb_qparams *q)
{
    double qmax = (double)((1 << (q->bits - 1)) - 1), qmin = -(double)(1 << (q->bits - 1));
    double v = nearbyint(x / q->scale) + q->offset;
    return (int32_t)(v < qmin ? qmin : v > qmax ? qmax : v);
}

double nb_fake_quant(double x, const nb_qparams *q)
{
    return ((double)nb_quantize_value(x, q) - q->offset) * q->scale;
}

/* ---- algorithms ---- */

/* The non-empty bins of h as (centre, mass) pairs: the candidates of a search are scored on
 * these only. Returns the count (0 on no memory: the caller falls back to the range). */
static int nonempty_bins(const nb_hist *h, double **centre, double **mass)
{
    int n = 0;
    for (int b = 0; b < h->bins; b++)
        n += h->count[b] != 0;
    *centre = malloc(sizeof(double) * (size_t)(n + 1));
    *mass = malloc(sizeof(double) * (size_t)(n + 1));
    if (!*centre || !*mass) {
        free(*centre), free(*mass);
        *centre = *mass = NULL;
        return 0;
    }
    double w = (h->hi - h->lo) / h->bins;
    n = 0;
    for (int b = 0; b < h->bins; b++)
        if (h->count[b] != 0) {
            (*centre)[n] = h->lo + (b + 0.5) * w;
            (*mass)[n++] = h->count[b];
        }
    return n;
}

/* Sum over the bins of mass x (centre - fake_quant(centre))^2 (the quantization inlined:
 * x / scale as x times 1/scale, which may round an exact tie the other way; a search
 * score only). */
static double hist_l2(int n, const double *centre, const double *mass, const nb_qparams *q)
{
    double inv = 1.0 / q->scale, s = q->scale, off = q->offset;
    double qmax = (double)((1 << (q->bits - 1)) - 1), qmin = -(double)(1 << (q->bits - 1));
    double lo = qmin - off - 1, hi = qmax - off + 1; /* past these the level clips anyway */
    /* four partial sums (bins i, i + 4, ...): independent addition chains that the
       vectorized loop keeps busy, added at the end */
    double e4[4] = {0, 0, 0, 0};
    int i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) {
            double t = centre[i + k] * inv;
            t = t < lo ? lo : t > hi ? hi : t;
            double v = round_even(t) + off;
            v = v < qmin ? qmin : v > qmax ? qmax : v;
            double d = centre[i + k] - (v - off) * s;
            e4[k] += mass[i + k] * d * d;
        }
    for (; i < n; i++) {
        double t = centre[i] * inv;
        t = t < lo ? lo : t > hi ? hi : t;
        double v = round_even(t) + off;
        v = v < qmin ? qmin : v > qmax ? qmax : v;
        double d = centre[i] - (v - off) * s;
        e4[0] += mass[i] * d * d;
    }
    return (e4[0] + e4[1]) + (e4[2] + e4[3]);
}

/* hist_l2 in float, for a search of 8 bits or fewer: eight partial sums over bins i, i + 8,
 * ..., eight float lanes per AVX2 instruction (the copy for the CPU picked at load; the same
 * operations either way). A search score only: an error of a few float ulps in a bin's
 * distance to its level, relative 1e-4 at most at 8 bits where the level step is range/255
 * and the centre at most the range, leaves the candidates' order but for near ties. */
NB_QUANT_AVX2_CLONES static double hist_l2f(int n, const float *centre, const float *mass,
                                            const nb_qparams *q)
{
    const float inv = (float)(1.0 / q->scale), s = q->scale, off = (float)q->offset;
    const float qmax = (float)((1 << (q->bits - 1)) - 1), qmin = -(float)(1 << (q->bits - 1));
    const float lo = qmin - off - 1, hi = qmax - off + 1, magic = 12582912.0f; /* 1.5 x 2^23 */
    float e8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            float t = centre[i + k] * inv;
            t = t < lo ? lo : t > hi ? hi : t;
            float v = ((t + magic) - magic) + off; /* ties to even: |t| <= 2^9 */
            v = v < qmin ? qmin : v > qmax ? qmax : v;
            float d = centre[i + k] - (v - off) * s;
            e8[k] += mass[i + k] * d * d;
        }
    double err = 0;
    for (; i < n; i++) {
        float t = centre[i] * inv;
        t = t < lo ? lo : t > hi ? hi : t;
        float v = ((t + magic) - magic) + off;
        v = v < qmin ? qmin : v > qmax ? qmax : v;
        float d = centre[i] - (v - off) * s;
        err += (double)mass[i] * d * d;
    }
    for (int k = 0; k < 8; k++)
        err += e8[k];
    return err;
}

double nb_hist_sqnr(const nb_hist *h, const nb_qparams *q)
{
    double *centre, *mass, sig = 0;
    int n = nonempty_bins(h, &centre, &mass);
    for (int i = 0; i < n; i++)
        sig += mass[i] * centre[i] * centre[i];
    double noise = n > 0 ? hist_l2(n, centre, mass, q) : 0;
    free(centre);
    free(mass);
    return noise > 0 ? 10 * log10(sig / noise) : INFINITY;
}

static void ifmr(const nb_hist *h, const nb_calib_cfg *cfg, int bits, bool asym, nb_qparams *out)
{
    double max_init = nb_hist_quantile(h, cfg->max_percentile);
    double min_init = nb_hist_quantile(h, 1.0 - cfg->min_percentile);
    if (!asym)
        max_init = fmax(fabs(max_init), fabs(min_init));
    else {
        max_init = fmax(max_init, 0);
        min_init = fmin(min_init, 0);
    }
    double best = INFINITY;
    int steps = (int)floor((cfg->search_range_end - cfg->search_range_start) / cfg->search_step +
                           1e-6);
    nb_qparams_from_range(asym ? min_init : -max_init, max_init, bits, asym, out);
    double *centre, *mass;
    int n = nonempty_bins(h, &centre, &mass);
    /* at 8 bits or fewer the scores in float (hist_l2f), else in double */
    float *cf = bits <= 8 && n > 0 ? malloc(sizeof(float) * (size_t)n) : NULL;
    float *mf = cf ? malloc(sizeof(float) * (size_t)n) : NULL;
    for (int i = 0; mf && i < n; i++)
        cf[i] = (float)centre[i], mf[i] = (float)mass[i];
    for (int i = 0; i <= steps && n > 0; i++) {
        double s = cfg->search_range_start + i * (double)cfg->search_step;
        double c = max_init * s;
        nb_qparams q;
        nb_qparams_from_range(asym ? min_init : -c, c, bits, asym, &q);
        double err = mf ? hist_l2f(n, cf, mf, &q) : hist_l2(n, centre, mass, &q);
        if (err < best) {
            best = err;
            *out = q;
        }
    }
    free(cf);
    free(mf);
    free(centre);
    free(mass);
}

/* PyTorch HistogramObserver's _compute_quantization_error: the L2 error of mapping the
 * source bins [start, end] onto dst levels of equal width, density uniform per bin. */
static double hfmg_norm(const nb_hist *h, int start, int end, int dst)
{
    double bw = (h->hi - h->lo) / h->bins;
    double dw = bw * (end - start + 1) / dst;
    if (dw == 0)
        return 0;
    double norm = 0;
    for (int b = 0; b < h->bins; b++) {
        if (h->count[b] == 0)
            continue;
        double density = h->count[b] / bw;
        double sb = (b - start) * bw, se = sb + bw;
        double db = floor(sb / dw), de = floor(se / dw);
        db = db < 0 ? 0 : db > dst - 1 ? dst - 1 : db;
        de = de < 0 ? 0 : de > dst - 1 ? dst - 1 : de;
        double cb = (db + 0.5) * dw, ce = de * dw + dw / 2;
        double d0 = sb - cb, d1 = dw / 2;
        norm += density * (d1 * d1 * d1 - d0 * d0 * d0) / 3;
        norm += (de - db - 1) * density * (dw * dw * dw / 4) / 3; /* (dw/2)^3 - (-dw/2)^3 */
        d0 = -dw / 2;
        d1 = se - ce;
        norm += density * (d1 * d1 * d1 - d0 * d0 * d0) / 3;
    }
    return norm;
}

static void hfmg(const nb_hist *h, int bits, bool asym, nb_qparams *out)
{
    int nb = h->bins, dst = 1 << bits;
    double *csum = malloc(sizeof(double) * (size_t)nb);
    if (!csum || h->hi == h->lo) {
        free(csum);
        nb_qparams_from_range(h->min, h->max, bits, asym, out);
        return;
    }
    double acc = 0;
    for (int b = 0; b < nb; b++)
        csum[b] = acc += h->count[b];
    /* the untrimmed range is a candidate too (PyTorch starts from an infinite error and
       takes the first trim unconditionally, which cuts a sparse tail however costly: at
       16 bits, where clipping dominates, HFMG then lost 15-50 dB to MinMax) */
    double total = acc, step = 1e-5, alpha = 0, beta = 1, norm_min = hfmg_norm(h, 0, nb - 1, dst);
    int start = 0, end = nb - 1, l = 0, r = nb - 1;
    while (alpha < beta) {
        double na = alpha + step, nbeta = beta - step;
        while (l < end && csum[l] < na * total)
            l++;
        /* the right edge counted like the left: the mass in bins r.. is below the trim
           (PyTorch compares the inclusive sum, which cuts one occupied bin) */
        while (r > start && total - csum[r - 1] < (1 - nbeta) * total)
            r--;
        int ns = start, ne = end;
        if (l - start > end - r) {
            ns = l;
            alpha = na;
        } else {
            ne = r;
            beta = nbeta;
        }
        if (ns == start && ne == end)
            continue;
        double norm = hfmg_norm(h, ns, ne, dst);
        if (norm > norm_min)
            break;
        norm_min = norm;
        start = ns;
        end = ne;
    }
    free(csum);
    double bw = (h->hi - h->lo) / nb;
    nb_qparams_from_range(h->lo + bw * start, h->lo + bw * (end + 1), bits, asym, out);
}

/* TensorRT entropy calibration, as NVIDIA's pytorch-quantization writes it
 * (calib/histogram.py, _compute_amax_entropy): |x| in 2048 bins over [0, amax], bin 0 set to
 * bin 1; for each candidate i of levels .. 2048 bins, P = the first i bins with the rest
 * folded into the last, Q = the first i bins merged into the grid's levels and spread back
 * over their non-empty bins; the least KL(P || Q), unsmoothed (scipy's entropy), the last
 * of equal minima, gives the threshold (i + 0.5) bin widths. Asymmetric grids: data above 0
 * or mostly so is searched from its minimum, and a symmetric threshold is cut to the data.
 * Measured with bench/calib_algos.sh (output SQNR against IFMR's, 30 clips): within 3 dB on
 * hey_jarvis, alexa, hey_mycroft, timer and weather; 5 dB under on hey_rhasspy (both over
 * 40 dB) and 12 dB under on embedding_model, whose LeakyReLU outputs have long tails that
 * KL clips (so does the reference: 4.3 dB on conv2d_1's input against MinMax's 36). */
static nb_err kl(const nb_hist *h, int bits, bool asym, nb_qparams *out, nb_status *st)
{
    enum { NBINS = 2048 };
    /* non-negative data (after a ReLU) with asymmetric activations: the range [0, T] on all
       2^bits levels; otherwise TensorRT's symmetric [-T, T] on 2^(bits-1) levels of |x| */
    bool unsigned_range = asym && h->min >= 0;
    /* mostly non-negative data with asymmetric activations (a ReLU's output after a bias or
       a BatchNormalization: [-0.4, 47.7] on embedding_model's second Conv): the symmetric
       |x| search would spend half the levels on the few negatives and clip the long positive
       tail (14.9 dB against IFMR's 40.9 there). One-sided instead: x - min over
       [0, max - min] on all 2^bits levels, the threshold searched on the positive end. */
    double base = 0;
    if (asym && h->min < 0 && h->max > 0 && -h->min <= 0.1 * h->max) {
        unsigned_range = true;
        base = h->min;
    }
    /* data that starts well above 0 (features such as a log-mel input, [3.5, 12] on
       embedding_model's first Conv): the histogram from its minimum. From 0, every
       candidate below the minimum holds all the data in its last bin, P = Q = one spike and
       KL = 0: the search clipped 85 % of the values there. The grid still holds 0. Only
       when the data starts above the smallest candidate (1/16 of the range, 128 of 2048
       bins); below that the histogram from 0 is TensorRT's. */
    if (asym && h->min > h->max / 16)
        base = h->min;
    int levels = unsigned_range ? 1 << bits : 1 << (bits - 1);
    if (levels > NBINS / 2)
        levels = NBINS / 2;
    double amax = base != 0 ? h->max - base : fmax(fabs(h->min), fabs(h->max));
    double *a = calloc(NBINS, sizeof(double)), *p = malloc(sizeof(double) * NBINS),
           *q = malloc(sizeof(double) * NBINS);
    if (!a || !p || !q) {
        free(a), free(p), free(q);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    /* |x| histogram from the signed one: each bin's mass spread over its |x| span */
    double w = (h->hi - h->lo) / h->bins, aw = amax / NBINS;
    for (int b = 0; b < h->bins && aw > 0; b++) {
        if (h->count[b] == 0)
            continue;
        double s = h->lo + b * w, e = s + w;
        if (w == 0) { /* every value was h->lo */
            int k = (int)(fabs(s - base) / aw);
            a[k >= NBINS ? NBINS - 1 : k] += h->count[b];
            continue;
        }
        if (base != 0) { /* one-sided: the bin's span shifted by -base, no folding */
            s -= base, e -= base;
            int k0 = (int)(fmax(s, 0) / aw), k1 = (int)(fmax(e, 0) / aw);
            k0 = k0 >= NBINS ? NBINS - 1 : k0;
            k1 = k1 >= NBINS ? NBINS - 1 : k1;
            for (int k = k0; k <= k1; k++) {
                double ov = fmin(e, (k + 1) * aw) - fmax(s, k * aw);
                if (k == NBINS - 1)
                    ov = e - fmax(s, k * aw);
                if (ov > 0)
                    a[k] += h->count[b] * ov / w;
            }
            continue;
        }
        /* the bin's negative part and positive part, each mapped onto |x| */
        double parts[2][2] = {{s, fmin(e, 0)}, {fmax(s, 0), e}};
        for (int g = 0; g < 2; g++) {
            double x0 = parts[g][0], x1 = parts[g][1];
            if (x1 <= x0)
                continue;
            double m = h->count[b] * (x1 - x0) / w;
            double u0 = fmin(fabs(x0), fabs(x1)), u1 = fmax(fabs(x0), fabs(x1));
            int k0 = (int)(u0 / aw), k1 = (int)(u1 / aw);
            k0 = k0 >= NBINS ? NBINS - 1 : k0;
            k1 = k1 >= NBINS ? NBINS - 1 : k1;
            for (int k = k0; k <= k1; k++) {
                double ov = fmin(u1, (k + 1) * aw) - fmax(u0, k * aw);
                if (k == NBINS - 1)
                    ov = u1 - fmax(u0, k * aw); /* amax itself lands in the last bin */
                if (ov > 0)
                    a[k] += m * ov / (u1 - u0);
            }
        }
    }
    /* the spike at the origin (a ReLU's zeros, a clamp's floor: half of the values on
       embedding_model's layers) takes its neighbour's count, as NVIDIA's entropy calibrator
       does (pytorch-quantization, _compute_amax_entropy: bins[0] = bins[1]). The spike is
       on the grid (0 or the range's minimum is a level), yet Q's level spreading smears
       it, so every wider candidate paid for it: thresholds at a fifth of the range and
       7-17 dB on those layers. */
    if (NBINS > 1 && a[0] > a[1])
        a[0] = a[1];
    double best = INFINITY, thr = amax;
    /* the mass beyond each candidate, once (a suffix sum: not 2048 x 2048 adds per layer) */
    double *tail = malloc(sizeof(double) * (NBINS + 1));
    if (!tail) {
        free(a), free(p), free(q);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    tail[NBINS] = 0;
    for (int k = NBINS - 1; k >= 0; k--)
        tail[k] = tail[k + 1] + a[k];
    for (int i = levels; i <= NBINS && aw > 0; i++) {
        double outl = tail[i];
        for (int k = 0; k < i; k++)
            p[k] = a[k];
        p[i - 1] += outl;
        /* Q: merge a[0..i) into levels, spread over the non-empty bins of each level */
        double merged = (double)i / levels;
        for (int j = 0; j < levels; j++) {
            int s = (int)floor(j * merged), e = j == levels - 1 ? i : (int)floor((j + 1) * merged);
            double sum = 0;
            int nz = 0;
            for (int k = s; k < e; k++) {
                sum += a[k];
                nz += a[k] != 0;
            }
            for (int k = s; k < e; k++)
                q[k] = a[k] != 0 ? sum / nz : 0;
        }
        /* KL(P || Q) over P's support; a candidate whose Q has no mass where P has some is
           infinitely far (NVIDIA's calibrator, scipy.stats.entropy): no smoothing, which on
           sparse data (a few hundred non-zero values) makes every empty bin a cost */
        double sp = 0, sq = 0;
        for (int k = 0; k < i; k++)
            sp += p[k], sq += q[k];
        if (sp <= 0 || sq <= 0)
            continue;
        double d = 0;
        for (int k = 0; k < i && d < INFINITY; k++)
            if (p[k] > 0)
                d = q[k] > 0 ? d + p[k] / sp * log(p[k] / sp / (q[k] / sq)) : INFINITY;
        if (d == INFINITY)
            continue;
        if (d <= best) { /* the last of equal minima, the widest (NVIDIA's last_argmin) */
            best = d;
            thr = (i + 0.5) * aw;
        }
    }
    free(a), free(p), free(q), free(tail);
    if (base != 0)
        nb_qparams_from_range(base, base + thr, bits, true, out);
    else if (asym) /* the |x| threshold on an asymmetric grid: no level beyond the data on
                      the side it does not reach ([-69.5, 69.5] -> [-59.6, 69.5] on
                      hey_mycroft's first Gemm, whose data spans [-59.6, 71.2]) */
        nb_qparams_from_range(unsigned_range ? 0 : fmax(h->min, -thr),
                              unsigned_range ? thr : fmin(h->max, thr), bits, true, out);
    else
        nb_qparams_from_range(-thr, thr, bits, false, out);
    return NB_OK;
}

nb_err nb_act_calibrate(const nb_hist *h, nb_act_algo a, const nb_calib_cfg *cfg,
                        bool activation_offset, nb_qparams *out, nb_status *st)
{
    if (h->total <= 0)
        return nb_fail(st, NB_ERR_DATA, "no calibration data reached the tensor");
    bool asym = cfg->asymmetric < 0 ? activation_offset : cfg->asymmetric == 1;
    int bits = cfg->act_bits == 16 ? 16 : 8;
    switch (a) {
    case NB_ACT_IFMR:
        ifmr(h, cfg, bits, asym, out);
        return NB_OK;
    case NB_ACT_HFMG:
        hfmg(h, bits, asym, out);
        return NB_OK;
    case NB_ACT_MINMAX:
        nb_qparams_from_range(h->min, h->max, bits, asym, out);
        return NB_OK;
    case NB_ACT_PERCENTILE:
        nb_qparams_from_range(nb_hist_quantile(h, 1e-5), nb_hist_quantile(h, 1 - 1e-5), bits,
                              asym, out);
        return NB_OK;
    case NB_ACT_KL:
        return kl(h, bits, asym, out, st);
    case NB_ACT_AUTO:
        break;
    }
    return nb_fail(st, NB_ERR_ARG, "algorithm %s is chosen per layer by the caller",
                   nb_act_algo_name(a));
}

/* ---- ARQ ---- */

NB_QUANT_AVX2_CLONES nb_err nb_arq_quantize(const float *w, int64_t outer, int64_t channels,
                                            int64_t inner, int bits, bool channel_wise,
                                            float *scales, int8_t *q, nb_status *st)
{
    if ((bits != 8 && bits != 4) || outer < 0 || channels < 1 || inner < 0)
        return nb_fail(st, NB_ERR_ARG, "ARQ of %d bits over %lld x %lld x %lld weights", bits,
                       (long long)outer, (long long)channels, (long long)inner);
    double qmax = ldexp(1, bits - 1) - 1;
    double *amax = calloc((size_t)channels, sizeof(double));
    if (!amax)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    bool finite = true;
    if (inner == 1) { /* channels last ([K, N]): a row of every channel, vectorized over c */
        float *m = malloc(sizeof(float) * (size_t)channels);
        if (!m) {
            free(amax);
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
        for (int64_t c = 0; c < channels; c++)
            m[c] = 0;
        for (int64_t o = 0; o < outer; o++) {
            const float *row = w + o * channels;
            for (int64_t c = 0; c < channels; c++) {
                float a = fabsf(row[c]);
                finite &= row[c] - row[c] == 0.0f;
                m[c] = a > m[c] ? a : m[c];
            }
        }
        for (int64_t c = 0; c < channels; c++)
            amax[c] = m[c];
        free(m);
    } else {
        for (int64_t o = 0; o < outer; o++)
            for (int64_t c = 0; c < channels; c++) {
                const float *row = w + (o * channels + c) * inner;
                float m = (float)amax[c];
                for (int64_t i = 0; i < inner; i++) { /* comparisons, no libm call: vectorizes */
                    float a = fabsf(row[i]);
                    finite &= row[i] - row[i] == 0.0f; /* false for NaN and infinities */
                    m = a > m ? a : m;
                }
                amax[c] = m;
            }
    }
    for (int64_t at = 0, n = outer * channels * inner; !finite && at < n; at++)
        if (!isfinite(w[at])) {
            free(amax);
            return nb_fail(st, NB_ERR_DATA, "%s in the weights at element %lld",
                           isnan(w[at]) ? "NaN" : "infinity", (long long)at);
        }
    if (!channel_wise) {
        double m = 0;
        for (int64_t c = 0; c < channels; c++)
            m = fmax(m, amax[c]);
        for (int64_t c = 0; c < channels; c++)
            amax[c] = m;
    }
    for (int64_t c = 0; c < channels; c++) {
        double s = amax[c] / qmax;
        scales[c] = (float)(s < SCALE_EPS ? 1.0 : s);
    }
    const float fq = (float)qmax, magic = 12582912.0f; /* 1.5 x 2^23: rounds floats < 2^22 */
    if (inner == 1) /* channels last: vectorized over c, the same float ops per element */
        for (int64_t o = 0; o < outer; o++) {
            const float *row = w + o * channels;
            int8_t *qr = q + o * channels;
            for (int64_t c = 0; c < channels; c++) {
                float v = (row[c] / scales[c] + magic) - magic;
                v = v > fq ? fq : v < -fq ? -fq : v;
                qr[c] = (int8_t)(int)v;
            }
        }
    else
        for (int64_t o = 0; o < outer; o++)
            for (int64_t c = 0; c < channels; c++) {
                const float sc = scales[c], *row = w + (o * channels + c) * inner;
                int8_t *qr = q + (o * channels + c) * inner;
                for (int64_t i = 0; i < inner; i++) { /* float / float, as before; vectorizes */
                    float v = (row[i] / sc + magic) - magic; /* ties to even; |v| <= qmax + 1 */
                    v = v > fq ? fq : v < -fq ? -fq : v;
                    qr[i] = (int8_t)(int)v;
                }
            }
    free(amax);
    return NB_OK;
}
