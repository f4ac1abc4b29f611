/* nanobench quant: AMCT-style post-training calibration and the QAT import as entry points
 * (include/nb/quant.h: nb_calibrate, nb_qat_import; issue 18). One forward pass of the
 * float reference per batch feeds a histogram per quantized layer's input activation; the
 * activation algorithm then picks each clip range from its histogram, ARQ quantizes the
 * weights, the bias is corrected, the record, fake-quant and deploy models are written and
 * evaluated. No printing, no exit, no global state: warnings and progress go to the
 * callbacks, errors to nb_status; app/cmd_calibrate.c prints and records.
 * Rules: ../shared/docs/facts/quant.md (AMCT's algorithms, config and record). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "nb/atc.h"
#include "nb/quant.h"
#include "nb/ref.h"
#include "quant_internal.h"

/* A comparison of outputs a against reference r, accumulated over batches. */
typedef struct cmp_acc {
    double sig, noise, dot, na, max_diff; /* sum r^2, sum (a-r)^2, sum a r, sum a^2, max |a-r| */
    int64_t n;                            /* values compared */
} cmp_acc;

static void cmp_add(cmp_acc *c, const float *a, const float *r, int64_t n)
{
    c->n += n;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - r[i];
        c->sig += (double)r[i] * r[i];
        c->noise += d * d;
        c->dot += (double)a[i] * r[i];
        c->na += (double)a[i] * a[i];
        if (fabs(d) > c->max_diff)
            c->max_diff = fabs(d);
    }
}

/* NaN when nothing was compared (a layer never evaluated, a non-float output) */
static double cmp_sqnr_db(const cmp_acc *c)
{
    return c->n == 0 ? NAN : c->noise > 0 ? 10 * log10(c->sig / c->noise) : INFINITY;
}

static double cmp_cosine(const cmp_acc *c)
{
    return c->n == 0 ? NAN
           : c->na > 0 && c->sig > 0 ? c->dot / sqrt(c->na * c->sig) : (c->na == c->sig ? 1 : 0);
}

#define MAX_LAYER_IN 8 /* an LSTM's X W R B sequence_lens initial_h initial_c P */

/* A layer that does matrix work: its input activation and its weights. */
typedef struct layer {
    const nb_node *node;
    const char *act;       /* name of the activation input (its producing graph's string) */
    const nb_tensor *w;    /* constant weights */
    const nb_calib_cfg *cfg;
    nb_hist hist;
    double zeros;          /* calibration values of the input exactly 0 */
    double zeroed;         /* the fraction of its nonzero values that round to 0 at q */
    double *mag;           /* per calibration batch: MAG_BINS counts of log2|x| (4 a
                              binade, 2^-32 .. 2^32) and the nonzero count after them */
    int mag_n, mag_cap;
    double zeroed16;       /* the largest share of one batch's nonzero values that an int16
                              step over the clip range rounds to 0 */
    int zeroed16_batch, zeroed16_over; /* that batch, and how many batches lose > 20% */
    nb_qparams q;
    nb_act_algo algo;
    double act_sqnr, w_sqnr;
    double mm_sqnr;        /* MinMax's activation SQNR on the same data (NaN: not computed) */
    int64_t channels;
    float *scale_w;
    int8_t *w_q;     /* the quantized weights, in the initializer's layout */
    int64_t w_axis;  /* their output-channel axis */
    const nb_graph *g; /* the graph the node is in (the model's, or an If branch) */
    double *in_sum;    /* per input channel: the sum of the input activation, and the count */
    int64_t in_channels, in_count;
    nb_tensor *bias;   /* float bias, corrected for the weights' quantization error */
    nb_tensor *w_fq; /* the weights as the NPU sees them: w_q x scale_w, float */
    const char *out; /* the layer's output value */
    cmp_acc out_err;   /* evaluation: the layer's output against float */
    /* evaluation: the names of the inputs computed at run time (the producing graph's
       strings; NULL for constants and absent ones) and their values in this batch */
    const char *in_name[MAX_LAYER_IN];
    nb_tensor *cur[MAX_LAYER_IN];
    int out_index;     /* the output compared: 0, or an RNN's Y_h when it has no Y */
    bool seen;         /* its input was seen in a batch (maybe with no elements) */
    bool ran;        /* its output was computed in a batch (an If branch taken) */
    int batches;       /* calibration batches that reached it (fewer in an If branch) */
    /* Conv + BatchNormalization fused (AMCT's do_fusion): the BN node, the folded float
       weights (l->w points to them) and bias */
    const nb_node *bn;
    nb_tensor *w_folded, *b_folded;
    /* LSTM, GRU: the recurrent weights R [1, G x H, H] and the hidden state entering the
       recurrent product, seen as initial_h and as Y (every step's Ht) */
    bool rnn;
    const nb_tensor *r;
    const char *h_in, *h_out;
    nb_hist hist_h;
    nb_qparams qh;
    double h_sqnr, r_sqnr;
    float *scale_r;
    int8_t *r_q;
    nb_tensor *r_fq;
    /* a MatMul of two activations (attention): no weights (w NULL); its second operand B
       calibrated like x (the same algorithm), int8, per tensor */
    bool act_b;
    const char *b_act;
    nb_hist hist_b;
    nb_qparams qb;
    double b_sqnr;
    /* AdaRound (nb_adaround): the rounding asked for, and when it applies (ada_k > 0) the
       layer's input as rows of ada_k values (a Conv's patches), ada_n of them sampled
       (ada_quota a batch, up to ada_cap), the weights it changed and its time */
    nb_weight_round wround;
    float *ada_x;
    int64_t ada_k, ada_n, ada_cap, ada_quota;
    uint64_t ada_rng;
    int64_t ada_changed;
    double ada_ms;
} layer;

typedef struct calib {
    layer *l;
    int n;
    const nb_graph *g;  /* the model's graph, and per value of it the largest |x| seen in
                           the calibration batches (float values; -1 none) */
    double *vmax;
    nb_status *st;
    const char *failed; /* the tensor whose data was refused */
    bool eval;          /* the evaluation pass: layers run alone on fake-quantized operands */
    const nb_tensor *const *mem, *const *mem_eval; /* in-memory batches, or NULL */
    nb_progress_fn progress; /* a call per batch done, or NULL */
    nb_warn_fn warn;    /* a call per warning, or NULL */
    const volatile sig_atomic_t *cancel; /* nonzero: stop before the next batch, or NULL */
    void *user;
} calib;

#define MAG_BINS 256
/* The magnitude bin of |x| (x not 0): a quarter of a binade, from the float's bits (its
   exponent and two leading mantissa bits: no log call), 2^-32 .. 2^32 over the 256 bins. */
static inline int mag_bin(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    int b = 4 * ((int)((u >> 23) & 0xff) - 127) + (int)((u >> 21) & 3) + MAG_BINS / 2;
    return b < 0 ? 0 : b >= MAG_BINS ? MAG_BINS - 1 : b;
}

/* mag_bin of each of x[0..n), MAG_BINS for a zero (counted apart), in a loop that
   vectorizes */
NB_QUANT_AVX2_CLONES static void mag_bins(const float *x, int64_t n, int32_t *idx)
{
    for (int64_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &x[k], 4);
        int b = 4 * ((int)((u >> 23) & 0xff) - 127) + (int)((u >> 21) & 3) + MAG_BINS / 2;
        b = b < 0 ? 0 : b >= MAG_BINS ? MAG_BINS - 1 : b;
        idx[k] = x[k] == 0.0f ? MAG_BINS : b;
    }
}

/* One calibration batch of a layer's input into its log-magnitude histogram (l->mag). */
static nb_err mag_add(layer *l, const float *x, int64_t n, nb_status *st)
{
    if (l->mag_n == l->mag_cap) {
        int cap = l->mag_cap ? 2 * l->mag_cap : 8;
        double *m = realloc(l->mag, sizeof(double) * (MAG_BINS + 1) * (size_t)cap);
        if (!m)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        l->mag = m, l->mag_cap = cap;
    }
    double *h = l->mag + (size_t)l->mag_n++ * (MAG_BINS + 1);
    /* counted in integers on the stack (a store to the total per value would chain every
       value on the one before), a block of at most 2^31 values at a time */
    /* four interleaved copies of the counts: a run of one bin (a ReLU's zeros) would
       otherwise wait on its own increment */
    uint32_t cnt[4][MAG_BINS + 1];
    memset(h, 0, sizeof(double) * (MAG_BINS + 1));
    for (int64_t at = 0; at < n; at += (int64_t)1 << 30) {
        int64_t m = n - at < ((int64_t)1 << 30) ? n - at : (int64_t)1 << 30;
        memset(cnt, 0, sizeof cnt);
        int32_t idx[1024];
        for (int64_t k0 = 0; k0 < m; k0 += 1024) { /* the bins of a block, then the counts */
            int64_t len = m - k0 < 1024 ? m - k0 : 1024, k = 0;
            mag_bins(x + at + k0, len, idx);
            for (; k + 4 <= len; k += 4)
                for (int c = 0; c < 4; c++)
                    cnt[c][idx[k + c]]++;
            for (; k < len; k++)
                cnt[0][idx[k]]++;
        }
        uint32_t nonzero = 0;
        for (int b = 0; b < MAG_BINS; b++) {
            uint32_t v = cnt[0][b] + cnt[1][b] + cnt[2][b] + cnt[3][b];
            h[b] += v, nonzero += v;
        }
        h[MAG_BINS] += nonzero;
    }
    return NB_OK;
}

/* The share of one batch's nonzero values with |x| <= a (uniform inside a bin). */
static double mag_share(const double *h, double a)
{
    if (h[MAG_BINS] <= 0 || !(a > 0))
        return 0;
    float af = (float)a;
    int ba = mag_bin(af);
    /* where a lies inside its bin: the bin is [m, m + 2^(e-2)) for the float's binade 2^e */
    int e;
    double m = frexp(a, &e) * 2; /* a = m 2^(e-1), m in [1, 2) */
    double frac = fmod((m - 1) * 4, 1.0), in = 0;
    for (int b = 0; b < ba && b < MAG_BINS; b++)
        in += h[b];
    if (ba < MAG_BINS)
        in += h[ba] * frac;
    return in / h[MAG_BINS];
}

/* a batch done: the progress callback, so that a front end draws a bar with a rate */
static void progress(const calib *cb, const char *pass, int done, int total)
{
    if (cb->progress)
        cb->progress(cb->user, pass, done, total);
}

static const struct {
    const char *name;
    nb_dtype t;
} data_types[] = {{"float32", NB_FLOAT}, {"float16", NB_FLOAT16}, {"float64", NB_DOUBLE},
                  {"int8", NB_INT8},     {"uint8", NB_UINT8},     {"int16", NB_INT16},
                  {"int32", NB_INT32},   {"int64", NB_INT64},     {"bool", NB_BOOL}};

/* Splits "a;b;c" into at most max parts (pointers into a copy); returns the count. */
static int split(char *s, char **parts, int max)
{
    int n = 0;
    for (char *p = s; n < max;) {
        parts[n++] = p;
        char *e = strchr(p, ';');
        if (!e)
            break;
        *e = 0;
        p = e + 1;
    }
    return n;
}

/* The first n batch files of dir (nb_list_batches: *.npy and *.bin, in ascending name
 * order); with n < 0 all of them, their count in *n_out. Other files (a README.txt, a
 * labels.csv beside the batches) are skipped, named in one warning to warn when it is given
 * (issue 37: such a file stopped calibration). */
static int list_batches(const char *dir, int n, char ***out, int *n_out, nb_warn_fn warn,
                        void *user, nb_status *st)
{
    char **names = NULL, first[4400];
    int skipped = 0;
    int cnt = nb_list_batches(dir, &names, &skipped, first, sizeof first);
    if (cnt < 0)
        return errno == ENOMEM ? nb_fail(st, NB_ERR_NOMEM, "out of memory")
                               : nb_fail(st, NB_ERR_IO, "%s %s: %s", n < 0 ? "--eval_dir"
                                                                       : "--data_dir", dir,
                                         strerror(errno));
    if (skipped && warn)
        nb_warnf(warn, user, "%s: %d file%s that %s not .npy or .bin skipped ('%s'%s)", dir,
                 skipped, skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are", first,
                 skipped > 1 ? ", ..." : "");
    nb_err e = NB_OK;
    if (!e && cnt == 0)
        e = nb_fail(st, NB_ERR_ARG, "%s: no batch files (.npy or .bin) in the folder", dir);
    else if (!e && cnt < n)
        e = nb_fail(st, NB_ERR_ARG, "%s: %d file%s for batch_num %d", dir, cnt,
                    cnt == 1 ? "" : "s", n);
    if (e) {
        nb_files_free(names, cnt);
        return e;
    }
    for (int i = n < 0 ? cnt : n; i < cnt; i++)
        free(names[i]);
    *out = names;
    if (n < 0)
        *n_out = cnt;
    return NB_OK;
}

static nb_err eval_layer(calib *c, layer *l, const nb_tensor *y);

/* A value computed or fed: name is the value's name string in the graph that holds it
 * (the executor's and the model's own pointer), so that layers match it by address. */
/* The sum of x[0..n) in double, in four partial sums (i, i + 4, ...: independent addition
   chains) added at the end */
NB_QUANT_AVX2_CLONES static double sum_f64(const float *x, int64_t n)
{
    double a4[4] = {0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4)
        for (int j = 0; j < 4; j++)
            a4[j] += x[k + j];
    for (; k < n; k++)
        a4[0] += x[k];
    return (a4[0] + a4[1]) + (a4[2] + a4[3]);
}

static nb_err ada_collect(layer *l, const nb_tensor *t, nb_status *st);

static nb_err observe(calib *c, const char *name, const nb_tensor *t)
{
    if (c->eval) {
        for (int i = 0; i < c->n; i++) {
            layer *l = &c->l[i];
            for (int k = 0; k < MAX_LAYER_IN; k++)
                if (l->in_name[k] == name) {
                    nb_tensor_free(l->cur[k]);
                    l->cur[k] = nb_tensor_ref(t);
                }
            if (l->out == name && l->cur[0]) {
                nb_err e = eval_layer(c, l, t);
                for (int k = 0; k < MAX_LAYER_IN; k++) {
                    nb_tensor_free(l->cur[k]);
                    l->cur[k] = NULL;
                }
                if (e)
                    return e;
            }
        }
        return NB_OK;
    }
    if (t->dtype != NB_FLOAT)
        return NB_OK;
    for (int i = 0; i < c->n; i++) {
        layer *l = &c->l[i];
        if (l->rnn && (l->h_in == name || l->h_out == name)) {
            nb_err e = nb_hist_add(&l->hist_h, t->data, t->numel, c->st);
            if (e) {
                c->failed = name;
                return e;
            }
        }
        if (l->out == name)
            l->ran = true;
        if (l->act_b && l->b_act == name) {
            nb_err e = nb_hist_add(&l->hist_b, t->data, t->numel, c->st);
            if (e) {
                c->failed = name;
                return e;
            }
        }
        if (l->act != name)
            continue;
        l->seen = true;
        l->batches++;
        nb_err e = nb_hist_add(&l->hist, t->data, t->numel, c->st);
        if (e) {
            c->failed = l->act;
            return e;
        }
        if (l->ada_k > 0 && (e = ada_collect(l, t, c->st)))
            return e;
        if (!c->eval) {
            const float *x = t->data;
            int64_t z = 0;
            for (int64_t k = 0; k < t->numel; k++)
                z += x[k] == 0.0f;
            l->zeros += (double)z;
            if ((e = mag_add(l, x, t->numel, c->st)))
                return e;
        }
        /* the mean of each input channel (conv: dim 1; matrices: the last dim), for the
           bias correction */
        bool conv = strstr(l->node->op_type, "Conv") != NULL;
        int cd = conv ? 1 : t->rank - 1;
        int64_t ch = cd >= 0 && cd < t->rank ? t->dims[cd] : 0, inner = 1;
        for (int d = cd + 1; d < t->rank; d++)
            inner *= t->dims[d];
        if (ch <= 0 || (l->in_sum && ch != l->in_channels))
            continue;
        if (!l->in_sum && !(l->in_sum = calloc((size_t)ch, sizeof(double))))
            return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
        l->in_channels = ch;
        const float *x = t->data;
        for (int64_t o = 0, outer = t->numel / (ch * inner); o < outer; o++)
            for (int64_t c2 = 0; c2 < ch; c2++)
                l->in_sum[c2] += sum_f64(x + (o * ch + c2) * inner, inner);
        l->in_count += t->numel / ch;
    }
    return NB_OK;
}

/* Empirical bias correction (AIMET's, Nagel et al. 2019): the weights' quantization error
 * shifts each output channel by sum (W - W') x E[x]; the float bias (0 when the layer has
 * none) takes the opposite shift, from the mean of each input channel over the calibration
 * data. Conv and Gemm (which have a bias input); not grouped ConvTranspose or MatMul. */
static nb_err correct_bias(layer *l, bool enabled, nb_status *st)
{
    const nb_node *nd = l->node;
    const char *op = nd->op_type;
    bool gemm = !strcmp(op, "Gemm"), conv = !strcmp(op, "Conv"), ct = !strcmp(op, "ConvTranspose");
    int64_t group = nb_attr_int(nd, "group", 1);
    if (!(gemm || conv || (ct && group == 1)))
        return NB_OK;
    if (gemm && nb_attr_int(nd, "transA", 0))
        enabled = false; /* the input's channels are its first dim: not corrected */
    bool trans_b = gemm && nb_attr_int(nd, "transB", 0);
    const nb_tensor *w = l->w;
    nb_err e = nb_tensor_new(NB_FLOAT, 1, &l->channels, &l->bias, st);
    if (e)
        return e;
    float *b = l->bias->data;
    const nb_tensor *b0 = l->b_folded ? l->b_folded
                          : nd->n_in > 2 && nd->in[2] >= 0 ? l->g->values[nd->in[2]].const_val
                                                          : NULL;
    for (int64_t c = 0; c < l->channels; c++)
        b[c] = b0 ? (float)nb_tensor_get_f64(b0, b0->numel == 1 ? 0 : c) : 0.0f;
    if (!enabled || !l->in_sum || l->in_count <= 0)
        return NB_OK;
    const float *wq = l->w_fq->data, *wfl = w->dtype == NB_FLOAT ? w->data : NULL;
    double *corr = calloc((size_t)l->channels, sizeof(double));
    if (!corr)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int64_t rest = 1;
    for (int d = 2; d < w->rank; d++)
        rest *= w->dims[d];
    /* the weights as [A, B, rest] with the output and input channels on A and B (which
       depends on the layout), each element's error times its input channel's sum */
    int64_t na = w->dims[0], nb = w->rank > 1 ? w->dims[1] : 1, cig = nb;
    int64_t per = conv ? l->channels / group : 1;
    if (!conv && !ct && !trans_b && rest == 1 && wfl && nb == l->channels) { /* [K, N] */
        for (int64_t a = 0; a < na && a < l->in_channels; a++) { /* vectorized over N */
            const double sx = l->in_sum[a];
            const float *wr = wfl + a * nb, *qr = wq + a * nb;
            for (int64_t bb = 0; bb < nb; bb++)
                corr[bb] += ((double)wr[bb] - qr[bb]) * sx;
        }
        na = 0; /* done */
    } else if (gemm && trans_b && rest == 1 && wfl && nb == l->in_channels) { /* [N, K] */
        for (int64_t a = 0; a < na && a < l->channels; a++) { /* a dot product per N */
            const float *wr = wfl + a * nb, *qr = wq + a * nb;
            double acc = 0;
            for (int64_t bb = 0; bb < nb; bb++)
                acc += ((double)wr[bb] - qr[bb]) * l->in_sum[bb];
            corr[a] += acc;
        }
        na = 0;
    }
    for (int64_t a = 0; a < na; a++)
        for (int64_t bb = 0; bb < nb; bb++) {
            int64_t co, ci; /* conv [Cout, Cin/g, k]; ConvTranspose [Cin, Cout, k]; Gemm [N, K]
                               with transB, else [K, N] */
            if (conv)
                co = a, ci = (a / per) * cig + bb;
            else if (ct || !trans_b)
                ci = a, co = bb;
            else
                co = a, ci = bb;
            if (ci >= l->in_channels || co >= l->channels)
                continue;
            int64_t at = (a * nb + bb) * rest;
            double acc = 0;
            for (int64_t r = 0; r < rest; r++)
                acc += (double)(wfl ? wfl[at + r] : nb_tensor_get_f64(w, at + r)) - wq[at + r];
            corr[co] += acc * l->in_sum[ci];
        }
    double alpha = gemm ? nb_attr_float(nd, "alpha", 1) : 1, beta = gemm ? nb_attr_float(nd, "beta", 1) : 1;
    for (int64_t c = 0; c < l->channels; c++) /* y = alpha x W x + beta x b */
        b[c] += (float)(alpha * corr[c] / (double)l->in_count / (beta != 0 ? beta : 1));
    free(corr);
    return NB_OK;
}

/* max |x[k]| over n finite floats (0 for none), in eight lanes: the same maximum, without a
   chain of comparisons on the one before */
NB_QUANT_AVX2_CLONES static double abs_max(const float *x, int64_t n)
{
    float m8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (int j = 0; j < 8; j++) {
            float a = fabsf(x[k + j]);
            m8[j] = a > m8[j] ? a : m8[j];
        }
    for (; k < n; k++) {
        float a = fabsf(x[k]);
        m8[0] = a > m8[0] ? a : m8[0];
    }
    float m = m8[0];
    for (int j = 1; j < 8; j++)
        m = m8[j] > m ? m8[j] : m;
    return m;
}

static nb_err on_value(void *user, const nb_node *node, int out_index, const char *name,
                       const nb_tensor *t)
{
    (void)node, (void)out_index;
    calib *c = user;
    if (!c->eval && c->vmax && t->dtype == NB_FLOAT) {
        int v = nb_graph_find(c->g, name);
        if (v >= 0 && v < c->g->n_values) {
            c->vmax[v] = fmax(c->vmax[v], abs_max(t->data, t->numel));
        }
    }
    return observe(user, name, t);
}

/* nb_kctx.rnn_cube_h: the hidden state as the cube reads it, fake-quantized with user's
 * nb_qparams (scale_h). */
static void fake_quant_state(void *user, float *h, int64_t n)
{
    const nb_qparams *q = user;
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)nb_fake_quant(h[i], q);
}

/* A new float tensor of t's values fake-quantized with q, or NULL (NB_ERR_NOMEM in st). */
static nb_tensor *fake_quant_copy(const nb_tensor *t, const nb_qparams *q, nb_status *st)
{
    nb_tensor *x = NULL;
    if (nb_tensor_new(NB_FLOAT, t->rank, t->dims, &x, st))
        return NULL;
    const float *xi = t->data;
    float *xq = x->data;
    for (int64_t i = 0; i < x->numel; i++)
        xq[i] = (float)nb_fake_quant(xi[i], q);
    return x;
}

/* The layer run alone (its kernel) on the fake-quantized float input and weights (and, for
 * an RNN, R and the state at every step), against its float output y: SQNR and cosine
 * accumulate over the evaluation batches. */
static nb_err eval_layer(calib *c, layer *l, const nb_tensor *y)
{
    const nb_node *nd = l->node;
    nb_tensor *x = fake_quant_copy(l->cur[0], &l->q, c->st), *h0 = NULL, *o = NULL, *bq = NULL;
    nb_err e = x ? nb_tensor_new(NB_FLOAT, y->rank, y->dims, &o, c->st) : c->st->code;
    nb_tensor *ins[MAX_LAYER_IN] = {0};
    int n_in = nd->n_in < MAX_LAYER_IN ? nd->n_in : MAX_LAYER_IN;
    for (int i = 0; !e && i < n_in; i++) {
        const nb_tensor *v = nd->in[i] < 0 ? NULL
                             : l->in_name[i] ? l->cur[i]
                                             : l->g->values[nd->in[i]].const_val;
        if (i == 0)
            ins[i] = x;
        else if (i == 1 && l->act_b) /* B fake-quantized as the NPU's AscendQuant_b */
            ins[i] = bq = v ? fake_quant_copy(v, &l->qb, c->st) : NULL;
        else if (i == 1)
            ins[i] = l->w_fq;
        else if (i == 2 && l->rnn)
            ins[i] = l->r_fq;
        else if (i == 2 && l->bias)
            ins[i] = l->bias;
        else if (i == 5 && l->rnn && v) /* initial_h enters the first recurrent product */
            ins[i] = h0 = fake_quant_copy(v, &l->qh, c->st);
        else
            ins[i] = (nb_tensor *)v;
        if (nd->in[i] >= 0 && !ins[i])
            e = h0 || bq || !l->rnn || i != 5 ? nb_fail(c->st, NB_ERR_INTERNAL, "layer '%s': input %d "
                                                  "was not seen in this batch", nd->name, i)
                                        : c->st->code;
    }
    if (!e && l->bias && n_in < 3) /* a corrected bias for a layer that had none */
        ins[2] = l->bias, n_in = 3;
    nb_tensor *outs[3] = {0};
    outs[l->out_index] = o;
    nb_kctx k = {.graph = l->g, .node = nd, .opset = l->g->opset, .n_in = n_in, .in = ins,
                 .n_out = l->out_index + 1, .out = outs, .st = c->st};
    if (l->rnn)
        k.rnn_cube_h = fake_quant_state, k.rnn_cube_h_user = &l->qh;
    nb_kernel_fn fn = nb_kernel_lookup(nd->op_type);
    if (!e)
        e = fn ? fn(&k) : nb_fail(c->st, NB_ERR_UNSUPPORTED, "no kernel for %s", nd->op_type);
    if (!e)
        cmp_add(&l->out_err, o->data, y->data, o->numel);
    nb_tensor_free(x);
    nb_tensor_free(h0);
    nb_tensor_free(bq);
    nb_tensor_free(o);
    return e;
}

/* The layout of a layer's weights w (W, or an RNN's R) for ARQ:
 * w[(o * channels + c) * inner + i]. */
static void weight_layout(const layer *l, const nb_tensor *w, int64_t *outer, int64_t *channels,
                          int64_t *inner)
{
    const char *op = l->node->op_type;
    int64_t rest = 1;
    for (int d = 2; d < w->rank; d++)
        rest *= w->dims[d];
    if (l->rnn) { /* W [1, G x H, I], R [1, G x H, H]: a scale per gate row */
        *outer = w->dims[0], *channels = w->dims[1], *inner = w->dims[2];
    } else if (!strcmp(op, "Conv")) { /* [Cout, Cin/g, k...] */
        *outer = 1, *channels = w->dims[0], *inner = w->dims[1] * rest;
    } else if (!strcmp(op, "ConvTranspose")) { /* [Cin, Cout/g, k...] */
        *outer = w->dims[0], *channels = w->dims[1], *inner = rest;
    } else if (!strcmp(op, "Gemm") && nb_attr_int(l->node, "transB", 0)) { /* [N, K] */
        *outer = 1, *channels = w->dims[0], *inner = w->dims[1];
    } else if (w->rank == 1) { /* MatMul B [K]: one column */
        *outer = w->dims[0], *channels = 1, *inner = 1;
    } else { /* [..., K, N] */
        *channels = w->dims[w->rank - 1];
        *outer = w->numel / *channels, *inner = 1;
    }
}

/* The axis of the output channels in the weight initializer (for DequantizeLinear). */
static int64_t weight_axis(const layer *l)
{
    const char *op = l->node->op_type;
    if (l->rnn)
        return 1;
    if (!strcmp(op, "Conv") || (!strcmp(op, "Gemm") && nb_attr_int(l->node, "transB", 0)))
        return 0;
    if (!strcmp(op, "ConvTranspose"))
        return 1;
    return l->w->rank - 1;
}

/* The int8 weights q back to float (q x scale of its channel) into d, and the sums of the
 * float weights' squares and of their errors' squares (a row in float, rows in double). */
NB_QUANT_AVX2_CLONES static void dequant_rows(const float *wf, const int8_t *q, const float *scale,
                                              int64_t outer, int64_t channels, int64_t inner,
                                              float *d, double *sig_out, double *noise_out)
{
    double sig = 0, noise = 0;
    /* a row (inner values, or a channels-last row of every channel) in eight float partial
       sums, the rows' sums added in double */
    const int64_t rows = inner == 1 ? outer : outer * channels, len = inner == 1 ? channels : inner;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t at0 = r * len;
        const float *w = wf + at0;
        const int8_t *qr = q + at0;
        float *dr = d + at0, rs8[8] = {0}, rn8[8] = {0};
        const float sc0 = inner == 1 ? 0 : scale[r % channels];
        int64_t i = 0;
        for (; i + 8 <= len; i += 8)
            for (int k = 0; k < 8; k++) {
                float dq = (float)qr[i + k] * (inner == 1 ? scale[i + k] : sc0);
                float diff = w[i + k] - dq;
                dr[i + k] = dq;
                rs8[k] += w[i + k] * w[i + k];
                rn8[k] += diff * diff;
            }
        for (; i < len; i++) {
            float dq = (float)qr[i] * (inner == 1 ? scale[i] : sc0), diff = w[i] - dq;
            dr[i] = dq;
            rs8[0] += w[i] * w[i];
            rn8[0] += diff * diff;
        }
        for (int k = 0; k < 8; k++)
            sig += rs8[k], noise += rn8[k];
    }
    *sig_out = sig, *noise_out = noise;
}

/* ARQ of the weights w of layer l (its W, or an RNN's R): per-channel scales, the int8
 * values, their float values w_q x scale_w, and the weight SQNR in dB. */
static nb_err arq_tensor(const layer *l, const nb_tensor *w, float **scale_out, int8_t **q_out,
                         nb_tensor **fq_out, double *sqnr, nb_status *st)
{
    int64_t outer, channels, inner;
    weight_layout(l, w, &outer, &channels, &inner);
    float *scale = malloc(sizeof(float) * (size_t)channels);
    int8_t *q = malloc((size_t)w->numel + 1);
    float *copy = w->dtype == NB_FLOAT ? NULL : malloc(sizeof(float) * ((size_t)w->numel + 1));
    const float *wf = copy ? copy : w->data;
    nb_err e = scale && q && (copy || w->dtype == NB_FLOAT) ? NB_OK
                                                           : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!e) {
        for (int64_t i = 0; copy && i < w->numel; i++)
            copy[i] = (float)nb_tensor_get_f64(w, i);
        e = nb_arq_quantize(wf, outer, channels, inner, l->cfg->weight_bits,
                            l->cfg->channel_wise, scale, q, st);
    }
    nb_tensor *fq = NULL;
    if (!e) /* dequant_rows writes every element */
        e = nb_tensor_new_uninit(NB_FLOAT, w->rank, w->dims, &fq, st);
    if (!e) {
        double sig = 0, noise = 0;
        dequant_rows(wf, q, scale, outer, channels, inner, fq->data, &sig, &noise);
        *sqnr = noise > 0 ? 10 * log10(sig / noise) : INFINITY;
    }
    free(copy);
    if (e) {
        free(scale), free(q);
        nb_tensor_free(fq);
        return e;
    }
    *scale_out = scale, *q_out = q, *fq_out = fq;
    return NB_OK;
}

/* ARQ of a layer's weights (and an RNN's R): per-channel scales into l->scale_w, the
 * weight SQNR. */
static nb_err quantize_weights(layer *l, nb_status *st)
{
    if (l->act_b) { /* no weights: one unit scale stands for them in the writers */
        l->channels = 1;
        l->w_sqnr = NAN;
        if (!(l->scale_w = malloc(sizeof(float))))
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        l->scale_w[0] = 1;
        return NB_OK;
    }
    int64_t outer, inner;
    weight_layout(l, l->w, &outer, &l->channels, &inner);
    l->w_axis = weight_axis(l);
    nb_err e = arq_tensor(l, l->w, &l->scale_w, &l->w_q, &l->w_fq, &l->w_sqnr, st);
    if (!e && l->rnn)
        e = arq_tensor(l, l->r, &l->scale_r, &l->r_q, &l->r_fq, &l->r_sqnr, st);
    return e;
}

static nb_err choose_x(layer *l, nb_act_algo forced, bool have_forced, bool act_offset,
                       nb_status *st)
{
    if (l->hist.total <= 0 && l->seen)
        return nb_fail(st, NB_ERR_DATA, "its input '%s' had no elements in any calibration "
                       "batch (a dim of 0)", l->act);
    if (l->hist.total <= 0)
        return nb_fail(st, NB_ERR_DATA, "no calibration batch reached it%s", l->g->parent
                       ? " (it is in an If branch these batches never take): give batches "
                         "that take it" : "");
    nb_act_algo a = have_forced ? forced : l->cfg->act;
    if (a != NB_ACT_AUTO) {
        l->algo = a;
        nb_err e = nb_act_calibrate(&l->hist, a, l->cfg, act_offset, &l->q, st);
        l->act_sqnr = e ? 0 : nb_hist_sqnr(&l->hist, &l->q);
        /* the guard: MinMax's range on the same data, which clips nothing */
        nb_qparams mm;
        l->mm_sqnr = NAN;
        if (!e && a != NB_ACT_MINMAX &&
            !nb_act_calibrate(&l->hist, NB_ACT_MINMAX, l->cfg, act_offset, &mm, st))
            l->mm_sqnr = nb_hist_sqnr(&l->hist, &mm);
        return e;
    }
    l->mm_sqnr = NAN; /* auto keeps the best of all five, MinMax's among them */
    static const nb_act_algo all[] = {NB_ACT_IFMR, NB_ACT_HFMG, NB_ACT_MINMAX,
                                      NB_ACT_PERCENTILE, NB_ACT_KL};
    double best = -INFINITY;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        nb_qparams q;
        nb_err e = nb_act_calibrate(&l->hist, all[i], l->cfg, act_offset, &q, st);
        if (e)
            return e;
        double s = nb_hist_sqnr(&l->hist, &q);
        if (s > best) {
            best = s;
            l->q = q;
            l->algo = all[i];
        }
    }
    l->act_sqnr = best;
    return NB_OK;
}

/* The input activation's algorithm, scale and offset; for an RNN also the hidden state's:
 * int8 and symmetric (a tanh cell's state lies in (-1, 1)), by the algorithm chosen for
 * the input. */
static nb_err choose_act(layer *l, nb_act_algo forced, bool have_forced, bool act_offset,
                         nb_status *st)
{
    nb_err e = choose_x(l, forced, have_forced, act_offset, st);
    if (!e && l->act_b) { /* B: the algorithm chosen for x, int8 */
        nb_calib_cfg bc = *l->cfg;
        bc.act_bits = 8;
        if (l->hist_b.total <= 0)
            return nb_fail(st, NB_ERR_DATA, "its second input '%s' had no elements in any "
                           "calibration batch", l->b_act);
        e = nb_act_calibrate(&l->hist_b, l->algo, &bc, act_offset, &l->qb, st);
        if (e)
            return nb_prefix(st, "second input '%s'", l->b_act);
        l->b_sqnr = nb_hist_sqnr(&l->hist_b, &l->qb);
        return NB_OK;
    }
    if (e || !l->rnn)
        return e;
    nb_calib_cfg hc = *l->cfg;
    hc.asymmetric = 0;
    hc.act_bits = 8;
    e = nb_act_calibrate(&l->hist_h, l->algo, &hc, false, &l->qh, st);
    if (e)
        return nb_prefix(st, "hidden state");
    l->h_sqnr = nb_hist_sqnr(&l->hist_h, &l->qh);
    return NB_OK;
}

/* Reads batch b of every input (files[i][b]: .npy, else raw .bin of the input's shape),
 * shows the inputs to the layers that read them, and runs the float reference. */
static nb_err run_batch(calib *cb, nb_exec *ex, const nb_graph *g, const int *order,
                        const char *const *names, int n_in, char **const *files, int b,
                        nb_tensor **data, nb_status *st)
{
    if (cb->cancel && *cb->cancel)
        return nb_fail(st, NB_ERR_CANCELLED, "cancelled");
    for (int i = 0; i < n_in; i++) {
        const nb_value *v = &g->values[order[i]];
        char mem_name[64] = "";
        const char *path = files ? files[i][b] : mem_name;
        size_t pl = strlen(path);
        nb_tensor_free(data[i]);
        data[i] = NULL;
        nb_err e = NB_OK;
        if (!files) { /* in memory: batch b of input i */
            snprintf(mem_name, sizeof mem_name, "batch %d of input %d", b, i);
            const nb_tensor *const *mem = cb->eval ? cb->mem_eval : cb->mem;
            if (!(data[i] = nb_tensor_ref(mem[(size_t)b * (size_t)n_in + (size_t)i])))
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        } else {
            e = pl > 4 && !strcmp(path + pl - 4, ".npy")
                    ? nb_npy_read(path, &data[i], st)
                    : nb_bin_read(path, v->dtype, v->rank, v->dims, &data[i], st);
        }
        if (!e && (data[i]->dtype != v->dtype || data[i]->rank != v->rank ||
                   memcmp(data[i]->dims, v->dims, sizeof(int64_t) * (size_t)v->rank)))
        {
            char has[96], wants[96];
            nb_shape_str(data[i]->rank, data[i]->dims, ',', has, sizeof has);
            nb_shape_str(v->rank, v->dims, ',', wants, sizeof wants);
            e = nb_fail(st, NB_ERR_DATA, "%s: %s %s, but input '%s' is %s %s", path,
                        nb_dtype_name(data[i]->dtype), has, v->name, nb_dtype_name(v->dtype),
                        wants);
        }
        cb->failed = NULL;
        if (!e && data[i]->dtype == NB_FLOAT) { /* every set, the evaluation's too */
            const float *p = data[i]->data;
            for (int64_t k = 0; k < data[i]->numel && !e; k++)
                if (!isfinite(p[k]))
                    e = nb_fail(st, NB_ERR_DATA, "%s: %s at element %lld", path,
                                isnan(p[k]) ? "NaN" : "infinity", (long long)k);
        }
        if (!e && (e = observe(cb, v->name, data[i])))
            nb_prefix(st, "%s", path);
        if (e)
            return e;
    }
    cb->failed = NULL;
    nb_err e = nb_exec_run(ex, n_in, names, data, st);
    if (e && cb->failed)
        nb_prefix(st, "batch %d (%s...): tensor '%s'", b + 1, files ? files[0][b] : "in memory",
                  cb->failed);
    return e;
}

/* The evaluation, on the --eval_dir batches (else the first calibration batches): each
 * layer alone on fake-quantized operands against its float output, and the fake-quant
 * model's outputs against the float model's: SQNR and cosine over all outputs, the worst
 * batch's cosine and the largest absolute difference (a wake-word score's). */
static nb_err evaluate(calib *cb, nb_exec *ex, const nb_model *m, const char *fq_path,
                       const int *order, const char *const *names, int n_in,
                       char **const *files, int batches, nb_tensor **data, double *net_sqnr,
                       double *net_cos, double *worst_cos, double *max_diff, cmp_acc *per_out,
                       nb_status *st)
{
    *worst_cos = NAN; /* stays NaN ("-") when the outputs have one value */
    *max_diff = 0;
    nb_model *fm = NULL;
    nb_exec *fx = NULL;
    nb_load_opts lo = {0};
    /* the float model's shapes, names as data (a name may hold ';', ':' or ',') */
    nb_shape_override *shapes = calloc((size_t)n_in + 1, sizeof *shapes);
    if (!shapes)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int n_shapes = 0;
    for (int i = 0; i < n_in; i++) {
        const nb_value *v = &m->graph->values[order[i]];
        if (v->rank < 0 || v->rank > NB_MAX_RANK)
            continue;
        shapes[n_shapes].name = v->name;
        shapes[n_shapes].rank = v->rank;
        for (int d = 0; d < v->rank; d++)
            shapes[n_shapes].dims[d] = v->dims[d];
        n_shapes++;
    }
    lo.shapes = shapes;
    lo.n_shapes = n_shapes;
    nb_err e = nb_ref_load(fq_path, &lo, &fm, st);
    free(shapes);
    if (!e)
        e = nb_exec_create(fm, NULL, &fx, st);
    cmp_acc all = {0};
    cb->eval = true;
    for (int b = 0; b < batches && !e; b++) {
        e = run_batch(cb, ex, m->graph, order, names, n_in, files, b, data, st);
        if (!e)
            e = nb_exec_run(fx, n_in, names, data, st);
        cmp_acc batch = {0}; /* this batch alone: its cosine */
        int64_t elems = 0;
        for (int o = 0; !e && o < m->graph->n_outputs; o++) {
            const nb_tensor *a = nb_exec_output(fx, o), *r = nb_exec_output(ex, o);
            if (a && r && a->dtype == NB_FLOAT && r->dtype == NB_FLOAT && a->numel == r->numel) {
                cmp_add(&batch, a->data, r->data, a->numel);
                cmp_add(&per_out[o], a->data, r->data, a->numel);
                elems += a->numel;
            }
        }
        all.sig += batch.sig, all.noise += batch.noise, all.dot += batch.dot;
        all.na += batch.na, all.n += batch.n;
        all.max_diff = fmax(all.max_diff, batch.max_diff);
        /* a one-value output (a wake-word score) has no direction: no per-batch cosine */
        if (!e && elems > 1 && !(cmp_cosine(&batch) >= *worst_cos))
            *worst_cos = cmp_cosine(&batch);
        if (!e)
            progress(cb, "evaluate", b + 1, batches);
    }
    cb->eval = false;
    *net_sqnr = cmp_sqnr_db(&all);
    *net_cos = cmp_cosine(&all);
    *max_diff = all.n ? all.max_diff : NAN;
    nb_exec_free(fx);
    nb_model_free(fm);
    return e;
}

/* The guard of every chosen algorithm (issue 26): the layers whose chosen range gives their
 * input more than 6 dB less SQNR on the calibration data than MinMax's (which clips nothing)
 * -- a range that clips what the layer uses (KL on a ReLU's long tail) -- said in one line:
 * how many, the 3 worst with both figures. */
static void warn_clipping(const calib *cb, const layer *ls, int n)
{
    int bad = 0, worst[3] = {-1, -1, -1};
    for (int i = 0; i < n; i++) {
        const layer *l = &ls[i];
        double loss = l->mm_sqnr - l->act_sqnr;
        if (isnan(l->mm_sqnr) || !(loss > 6.0))
            continue;
        bad++;
        for (int q = 0; q < 3; q++)
            if (worst[q] < 0 || loss > ls[worst[q]].mm_sqnr - ls[worst[q]].act_sqnr) {
                for (int z = 2; z > q; z--)
                    worst[z] = worst[z - 1];
                worst[q] = i;
                break;
            }
    }
    if (!bad)
        return;
    char list[900] = "";
    for (int q = 0; q < 3 && worst[q] >= 0; q++) {
        const layer *l = &ls[worst[q]];
        size_t at = strlen(list);
        snprintf(list + at, sizeof list - at, "%s'%.120s' %.1f dB (range [%g, %g]) against %.1f",
                 q ? ", " : "", l->node->name, l->act_sqnr, l->q.clip_min, l->q.clip_max,
                 l->mm_sqnr);
    }
    nb_warnf(cb->warn, cb->user, "%s clips what %d of %d layers use: their input's SQNR on the "
             "calibration data is more than 6 dB under MinMax's (%s%s); --algo auto (or ifmr) "
             "keeps the better range", nb_act_algo_name(ls[worst[0]].algo), bad, n, list,
             bad > 3 ? ", ..." : "");
}

/* A warning on stderr for a tensor that is not all zeros but whose range is below the
 * int8 resolution floor: AMCT takes a scale under 1.192092896e-07 as 1, so every value of
 * it quantizes to 0 (the layer's input, its state, or a weight channel). */
static void warn_tiny(const calib *cb, const layer *l)
{
    const nb_qparams *qs[2] = {&l->q, l->rnn ? &l->qh : NULL};
    for (int k = 0; k < 2; k++)
        if (qs[k] && qs[k]->scale == 1.0f && fmax(fabs(qs[k]->clip_min), fabs(qs[k]->clip_max)) > 0 &&
            fmax(fabs(qs[k]->clip_min), fabs(qs[k]->clip_max)) < 1e-4)
            nb_warnf(cb->warn, cb->user, "layer '%s': its %s spans [%g, %g], below the "
                    "int%d resolution floor (a scale under 1.19e-07 is taken as 1, AMCT's rule): "
                    "it quantizes to 0; scale the data up", l->node->name,
                    k ? "hidden state" : "input", qs[k]->clip_min, qs[k]->clip_max, qs[k]->bits);
    /* weight channels under ARQ's floor: scale 1, non-zero floats, all quantized to 0 */
    int64_t outer, channels, inner, zeroed = 0;
    if (!l->w)
        return;
    weight_layout(l, l->w, &outer, &channels, &inner);
    for (int64_t c = 0; l->w_q && c < channels; c++) {
        bool nonzero = false, kept = false;
        for (int64_t o = 0; l->scale_w[c] == 1.0f && o < outer && !kept; o++)
            for (int64_t i = 0; i < inner && !kept; i++) {
                int64_t at = (o * channels + c) * inner + i;
                nonzero |= nb_tensor_get_f64(l->w, at) != 0;
                kept = l->w_q[at] != 0;
            }
        zeroed += nonzero && !kept;
    }
    if (zeroed)
        nb_warnf(cb->warn, cb->user, "layer '%s': %lld weight channel%s below the int%d "
                "resolution floor (scale under 1.19e-07, taken as 1): quantized to 0",
                l->node->name, (long long)zeroed, zeroed == 1 ? "" : "s", l->cfg->weight_bits);
}

/* The fraction of the input's nonzero calibration values that round to 0 at the chosen
 * scale (|x| <= scale / 2: AscendQuant's round half to even), from the histogram (mass
 * uniform per bin) and the count of exact zeros (all inside, whatever their bin): how much
 * of the input the int8 steps lose when its dynamic range is wider than 256 steps (a power
 * spectrum: its quiet bins become 0, a Log after it -inf). 0 when every value is 0. */
static double zeroed_fraction(const layer *l)
{
    const nb_hist *h = &l->hist;
    double nonzero = h->total - l->zeros, a = l->q.scale / 2.0;
    if (h->total <= 0 || nonzero <= 0.5)
        return 0;
    if (!(h->hi > h->lo))
        return h->lo != 0 && fabs(h->lo) <= a ? 1 : 0;
    double w = (h->hi - h->lo) / h->bins, in = 0;
    int zb = (int)floor((0 - h->lo) / w); /* the bin that holds 0, if any */
    if (zb == h->bins && h->hi == 0)
        zb = h->bins - 1;
    for (int i = 0; i < h->bins; i++) {
        double bl = h->lo + i * w, ov = fmin(bl + w, a) - fmax(bl, -a), c = h->count[i];
        if (i == zb) /* its zeros are inside; the rest spread over the bin */
            c = fmax(c - l->zeros, 0);
        if (ov > 0)
            in += c * fmin(ov / w, 1.0);
    }
    return fmin(fmax(in / nonzero, 0), 1);
}

/* The config line that calibrates a layer's input at int16 (its algorithm's section) */
static void int16_override(const layer *l, char *buf, size_t n)
{
    snprintf(buf, n, "override_layer_configs { layer_name: \"%s\" calibration_config { %s { "
             "dst_type: INT16 } } }", l->node->name,
             l->algo == NB_ACT_HFMG ? "hfmg_quantize" : "ifmr_quantize");
}

/* int8 too coarse for the input's dynamic range: more than this fraction of its nonzero
   values round to 0 (an LSTM/GRU is left out: its input enters the cube as int8). 20%: on
   openWakeWord, melspectrogram's power spectrum (MatMul_15) is at 97% and its audio (the
   STFT Convs) at 59%, while embedding_model's Convs, at 27 dB from float with int8, reach
   10% (bell-shaped activations: the values within half a step of 0) */
#define ZEROED_WARN 0.2
static bool suggests_int16(const layer *l)
{
    return l->q.bits == 8 && !l->rnn && l->zeroed > ZEROED_WARN;
}

static void warn_zeroed(const calib *cb, const layer *l)
{
    if (!suggests_int16(l))
        return;
    char ov[600];
    int16_override(l, ov, sizeof ov);
    nb_warnf(cb->warn, cb->user, "%s: %.0f%% of its nonzero input values round to 0 at "
            "int8 (step %.3g, range %.3g): calibrate it at INT16 (--calibration_config): %s",
            l->node->name, 100 * l->zeroed, (double)l->q.scale, l->q.clip_max - l->q.clip_min, ov);
}

/* A warning for a tensor that two layers quantize with different parameters (the input of
 * one and the input or the state of another, or configs that differ): the compiler then
 * makes one AscendQuant per distinct scale, and the estimate counted one. */
static void warn_shared(const calib *cb, const layer *ls, int n)
{
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 2; a++) {
            const char *ti = a ? ls[i].h_in : ls[i].act;
            const nb_qparams *qi = a ? &ls[i].qh : &ls[i].q;
            for (int j = i + 1; ti && j < n; j++)
                for (int b = 0; b < 2; b++) {
                    const char *tj = b ? ls[j].h_in : ls[j].act;
                    const nb_qparams *qj = b ? &ls[j].qh : &ls[j].q;
                    if (tj == ti && (qi->scale != qj->scale || qi->offset != qj->offset ||
                                     qi->bits != qj->bits))
                        nb_warnf(cb->warn, cb->user, "tensor '%s' is quantized twice: "
                                "layer '%s' %s scale %g offset %d, layer '%s' %s scale %g "
                                "offset %d (two AscendQuant on the NPU)", ti, ls[i].node->name,
                                a ? "state" : "input", qi->scale, qi->offset, ls[j].node->name,
                                b ? "state" : "input", qj->scale, qj->offset);
                }
        }
}

static bool cube_op(const char *op)
{
    return !strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "MatMul") ||
           !strcmp(op, "Gemm");
}

/* The int16 test of a layer's input, per calibration batch: the step an int16 grid over its
 * clip range would have, and the share of each batch's nonzero values within half of it
 * (they round to 0): the largest share, its batch, and how many batches lose more than
 * ZEROED_WARN. */
static void zeroed_int16(layer *l)
{
    double step = l->q.bits == 16 ? l->q.scale : (l->q.clip_max - l->q.clip_min) / 65535.0;
    l->zeroed16 = 0, l->zeroed16_batch = -1, l->zeroed16_over = 0;
    for (int b = 0; b < l->mag_n; b++) {
        double s = mag_share(l->mag + (size_t)b * (MAG_BINS + 1), step / 2);
        if (s > l->zeroed16)
            l->zeroed16 = s, l->zeroed16_batch = b;
        l->zeroed16_over += s > ZEROED_WARN;
    }
}

/* No quantization the cube takes holds this input: even at int16 some calibration input
 * loses more than ZEROED_WARN of its nonzero values (a power spectrum's quiet frames). */
static bool suggests_cpu(const layer *l) { return !l->rnn && l->zeroed16_over > 0; }

/* The nodes to place on the MCU's CPU for the layers that suggest it (in g's node order,
 * ';'-separated; malloc'd, NULL when none): each such layer, the producers of its input
 * back to the nearest cube op while the value is beyond fp16 (|x| > 65504 in the
 * calibration data: the NPU's vector unit cannot hold it), and the consumers of its output
 * while their input is beyond fp16 (up to the op that brings the range back: a Log). */
static char *cpu_advice(const nb_graph *g, const double *vmax, const layer *ls, int nl)
{
    bool *in = calloc((size_t)g->n_nodes + 1, sizeof(bool));
    int *stack = malloc(sizeof(int) * ((size_t)g->n_values + 1));
    bool *seen = calloc((size_t)g->n_values + 1, sizeof(bool));
    char *out = NULL;
    bool any = false;
    if (!in || !stack || !seen)
        goto done;
    for (int i = 0; i < nl; i++) {
        const layer *l = &ls[i];
        if (suggests_cpu(l) && l->g != g) /* in an If's branch: the layer alone */
            any = true;
        if (!suggests_cpu(l) || l->g != g)
            continue;
        int ni = (int)(l->node - g->nodes);
        in[ni] = any = true;
        int sp = 0;
        for (int j = 0; j < l->node->n_in; j++) /* backward */
            if (l->node->in[j] >= 0 && !g->values[l->node->in[j]].const_val)
                stack[sp++] = l->node->in[j];
        while (sp > 0) {
            int v = stack[--sp], p = g->values[v].producer;
            if (p < 0 || seen[v] || !(vmax[v] > 65504))
                continue;
            seen[v] = true;
            const nb_node *pn = &g->nodes[p];
            if (cube_op(pn->op_type) || !strcmp(pn->op_type, "LSTM") ||
                !strcmp(pn->op_type, "GRU") || !strcmp(pn->op_type, "If"))
                continue;
            in[p] = true;
            for (int j = 0; j < pn->n_in && sp < g->n_values; j++)
                if (pn->in[j] >= 0 && !g->values[pn->in[j]].const_val)
                    stack[sp++] = pn->in[j];
        }
        for (int j = 0; j < l->node->n_out; j++) /* forward */
            if (l->node->out[j] >= 0)
                stack[sp++] = l->node->out[j];
        while (sp > 0) {
            int v = stack[--sp];
            if (!(vmax[v] > 65504))
                continue;
            for (int c = 0; c < g->n_nodes; c++) {
                const nb_node *cn = &g->nodes[c];
                bool reads = false;
                for (int j = 0; j < cn->n_in; j++)
                    reads |= cn->in[j] == v;
                if (!reads || in[c] || cube_op(cn->op_type) || !strcmp(cn->op_type, "If"))
                    continue;
                in[c] = true;
                for (int j = 0; j < cn->n_out && sp < g->n_values; j++)
                    if (cn->out[j] >= 0)
                        stack[sp++] = cn->out[j];
            }
        }
    }
    if (!any)
        goto done;
    size_t len = 1;
    for (int i = 0; i < g->n_nodes; i++)
        len += in[i] ? strlen(g->nodes[i].name) + 1 : 0;
    for (int i = 0; i < nl; i++)
        len += suggests_cpu(&ls[i]) && ls[i].g != g ? strlen(ls[i].node->name) + 1 : 0;
    if ((out = malloc(len))) {
        out[0] = 0;
        for (int i = 0; i < g->n_nodes; i++)
            if (in[i]) {
                if (out[0])
                    strcat(out, ";");
                strcat(out, g->nodes[i].name);
            }
        for (int i = 0; i < nl; i++)
            if (suggests_cpu(&ls[i]) && ls[i].g != g) {
                if (out[0])
                    strcat(out, ";");
                strcat(out, ls[i].node->name);
            }
    }
done:
    free(in), free(stack), free(seen);
    return out;
}

/* The layers of the model that must be quantized; an error for one that cannot be. */
/* The name string of value v as the graph that produces it holds it (a branch's read of an
 * enclosing value is that value): what the executor reports. */
static const char *owner_name(const nb_graph *g, int v)
{
    while (g->parent && g->values[v].outer >= 0) {
        v = g->values[v].outer;
        g = g->parent;
    }
    return g->values[v].name;
}

/* The BatchNormalization that Conv nd's output feeds alone, foldable into it (AMCT's Conv+BN
 * fusion), or NULL: nd's only reader (the If nodes' implicit reads count), in the same
 * graph, in inference form (Y only, no training_mode), with constant scale, B, mean and
 * var of Cout values; the Conv's output not a graph output. */
static const nb_node *bn_after(const nb_graph *g, const nb_node *nd, int64_t cout)
{
    int v = nd->out[0];
    if (v < 0 || g->values[v].is_output)
        return NULL;
    const nb_node *bn = NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *c = &g->nodes[i];
        int uses = 0;
        for (int k = 0; k < c->n_in; k++)
            uses += c->in[k] == v;
        for (int k = 0; k < c->n_implicit; k++)
            uses += c->implicit[k] == v;
        if (!uses)
            continue;
        if (bn || uses > 1 || strcmp(c->op_type, "BatchNormalization") || c->in[0] != v)
            return NULL;
        bn = c;
    }
    if (!bn || bn->n_in < 5 || bn->n_out < 1 || bn->out[0] < 0 ||
        nb_attr_int(bn, "training_mode", 0))
        return NULL;
    for (int k = 1; k < bn->n_out; k++)
        if (bn->out[k] >= 0)
            return NULL;
    for (int k = 1; k < 5; k++) {
        const nb_tensor *t = bn->in[k] >= 0 ? g->values[bn->in[k]].const_val : NULL;
        if (!t || t->numel != cout)
            return NULL;
    }
    return bn;
}

/* Folds l->bn into the Conv's weights and bias (per output channel c, a = scale / sqrt(var
 * + epsilon): W' = a W, b' = a (b - mean) + B; ONNX BatchNormalization), into l->w_folded
 * and l->b_folded; l->w becomes the folded weights and the layer's output the BN's. */
static nb_err fold_bn(layer *l, nb_status *st)
{
    const nb_node *nd = l->node, *bn = l->bn;
    const nb_graph *g = l->g;
    const nb_tensor *w = l->w, *b0 = nd->n_in > 2 && nd->in[2] >= 0 ? g->values[nd->in[2]].const_val
                                                                      : NULL;
    const nb_tensor *sc = g->values[bn->in[1]].const_val, *beta = g->values[bn->in[2]].const_val,
                    *mean = g->values[bn->in[3]].const_val, *var = g->values[bn->in[4]].const_val;
    int64_t cout = w->dims[0], per = w->numel / cout;
    double eps = nb_attr_float(bn, "epsilon", 1e-5f);
    nb_err e = nb_tensor_new(NB_FLOAT, w->rank, w->dims, &l->w_folded, st);
    if (!e)
        e = nb_tensor_new(NB_FLOAT, 1, &cout, &l->b_folded, st);
    if (e)
        return e;
    float *wf = l->w_folded->data, *bf = l->b_folded->data;
    for (int64_t c = 0; c < cout; c++) {
        double a = nb_tensor_get_f64(sc, c) / sqrt(nb_tensor_get_f64(var, c) + eps);
        double b = b0 ? nb_tensor_get_f64(b0, b0->numel == 1 ? 0 : c) : 0;
        bf[c] = (float)(a * (b - nb_tensor_get_f64(mean, c)) + nb_tensor_get_f64(beta, c));
        if (!isfinite(a) || !isfinite(bf[c]))
            return nb_fail(st, NB_ERR_DATA, "BatchNormalization '%s' after it folds to a "
                           "non-finite scale or bias at channel %lld (var + epsilon <= 0?)",
                           bn->name, (long long)c);
        for (int64_t i = 0; i < per; i++) {
            wf[c * per + i] = (float)(a * nb_tensor_get_f64(w, c * per + i));
            if (!isfinite(wf[c * per + i]))
                return nb_fail(st, NB_ERR_DATA, "BatchNormalization '%s' after it folds to a "
                               "non-finite weight at channel %lld (scale / sqrt(var + epsilon) "
                               "= %g)", bn->name, (long long)c, a);
        }
    }
    l->w = l->w_folded;
    l->out = g->values[bn->out[0]].name;
    return NB_OK;
}

static bool skips_fusion(const nb_quant_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->n_skip_fusion; i++)
        if (!strcmp(cfg->skip_fusion_layers[i], name))
            return true;
    return false;
}

/* Adds the layers of g and of its If branches to ls (room for every node of the model). */
static nb_err add_layers(const nb_graph *g, const nb_quant_config *cfg, const char *cpu,
                         const nb_calibrate_opts *o, layer *ls, int *k, nb_status *st)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        for (int a = 0; a < nd->n_attr; a++)
            if (nd->attrs[a].g) {
                nb_err e = add_layers(nd->attrs[a].g, cfg, cpu, o, ls, k, st);
                if (e)
                    return e;
            }
        bool rnn = !strcmp(nd->op_type, "LSTM") || !strcmp(nd->op_type, "GRU");
        if (!cube_op(nd->op_type) && !rnn && strcmp(nd->op_type, "RNN"))
            continue;
        if (cpu && nb_list_has(cpu, nd->name, strlen(nd->name)))
            continue; /* float, on the MCU's CPU (atc --cpu_nodes places it there) */
        char why[300] = "";
        if (!strcmp(nd->op_type, "RNN"))
            snprintf(why, sizeof why, "the Nano's cube runs LSTM and GRU, not the plain RNN");
        else if (rnn)
            nb_npu_rnn_reason(g, nd, 1, why, sizeof why);
        if (why[0]) {
            /* atc places it on the MCU's CPU in float by itself (estimate says so): it stays
               float here too (a bidirectional GRU had been refused, a helper's find) */
            nb_warnf(o->warn, o->user, "layer '%s' (%s): %s: not quantized; atc places it on "
                     "the MCU's CPU, in float", nd->name, nd->op_type, why);
            continue;
        }
        if (nb_quant_config_skips(cfg, nd->name, nd->op_type))
            return nb_fail(st, NB_ERR_ARG, "layer '%s' (%s) is skipped by the config, but the "
                           "Nano's cube computes only s16 x s8, s8 x s8 and s8 x s4: it cannot "
                           "run in float on the NPU (--cpu_nodes places it on the MCU's CPU, "
                           "in float)", nd->name, nd->op_type);
        const nb_value *r = NULL;
        if (rnn) {
            r = nd->n_in > 2 && nd->in[2] >= 0 ? &g->values[nd->in[2]] : NULL;
            if (!r || !r->const_val || r->const_val->rank != 3 || r->const_val->numel == 0)
                return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its recurrent weights "
                               "'%s' are not a constant [1, gates x hidden, hidden]; the cube's "
                               "weights are constants quantized offline", nd->name,
                               nd->op_type, r ? r->name : "");
        }
        int wi = 1;
        const nb_value *w = nd->n_in > wi && nd->in[wi] >= 0 ? &g->values[nd->in[wi]] : NULL;
        /* a MatMul of two activations (attention's Q x K^T, weights x V): both calibrated */
        bool act_b = !rnn && !strcmp(nd->op_type, "MatMul") && w && !w->const_val &&
                     w->dtype == NB_FLOAT;
        if (!act_b && w && !w->const_val && !rnn)
            continue; /* run-time weights: the cube's are constants quantized offline, so
                         atc gives it to the MCU's CPU, in float (estimate says so) */
        if (!act_b && (!w || !w->const_val))
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its weights '%s' are "
                           "computed at run time; the cube's weights are constants quantized "
                           "offline", nd->name, nd->op_type, w ? w->name : "");
        const nb_value *x = &g->values[nd->in[0]];
        if (x->dtype != NB_FLOAT || x->const_val)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its input '%s' is %s, not "
                           "a float activation computed at run time", nd->name, nd->op_type,
                           x->name, x->const_val ? "a constant" : nb_dtype_name(x->dtype));
        if (!act_b && w->const_val->numel == 0)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its weights '%s' are empty",
                           nd->name, nd->op_type, w->name);
        if (!strcmp(nd->op_type, "ConvTranspose") && nb_attr_int(nd, "group", 1) != 1)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s': grouped ConvTranspose is not "
                           "calibrated yet", nd->name);
        if (!rnn && strcmp(nd->op_type, "Gemm") && strcmp(nd->op_type, "MatMul") &&
            nd->n_in > 2 && nd->in[2] >= 0 && !g->values[nd->in[2]].const_val)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its bias '%s' is computed "
                           "at run time; the cube adds a constant int32 bias", nd->name,
                           nd->op_type, g->values[nd->in[2]].name);
        if (!strcmp(nd->op_type, "Gemm") && nd->n_in > 2 && nd->in[2] >= 0) {
            const nb_value *c = &g->values[nd->in[2]];
            const nb_value *y = &g->values[nd->out[0]];
            int64_t n = y->rank == 2 ? y->dims[1] : -1;
            int64_t cn = c->const_val ? c->const_val->numel : -1;
            if (cn != 1 && cn != n)
                return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (Gemm): its bias '%s' is not "
                               "a constant per output channel (the cube adds one value per "
                               "channel)", nd->name, c->name);
        }
        /* NaN or infinity in the weights: refused before any batch runs (it would surface
           as bad data in the layer's output) */
        const nb_value *wr[2] = {w, r};
        for (int k = 0; k < 2; k++) {
            const nb_tensor *t = wr[k] ? wr[k]->const_val : NULL;
            for (int64_t i = 0; t && t->dtype == NB_FLOAT && i < t->numel; i++) {
                float v = ((const float *)t->data)[i];
                if (!isfinite(v))
                    return nb_fail(st, NB_ERR_DATA, "layer '%s' (%s): %s in its %s '%s' at "
                                   "element %lld", nd->name, nd->op_type,
                                   isnan(v) ? "NaN" : "infinity",
                                   k ? "recurrent weights R" : "weights", wr[k]->name,
                                   (long long)i);
            }
        }
        if (rnn && w->const_val->rank != 3)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): its weights '%s' are not "
                           "[1, gates x hidden, input]", nd->name, nd->op_type, w->name);
        /* the output compared: Y; an RNN that writes only Y_h, that */
        int oi = rnn && (nd->n_out < 1 || nd->out[0] < 0) && nd->n_out > 1 && nd->out[1] >= 0;
        if (nd->n_out <= oi || nd->out[oi] < 0)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s' (%s): %s", nd->name, nd->op_type,
                           rnn ? "neither Y nor Y_h is used (the calibration reads the hidden "
                                 "state from them)" : "its output is not used");
        layer *l = &ls[*k];
        l->node = nd;
        l->g = g;
        l->act = owner_name(g, nd->in[0]);
        for (int in = 0; in < nd->n_in && in < MAX_LAYER_IN; in++)
            if (nd->in[in] >= 0 && !g->values[nd->in[in]].const_val)
                l->in_name[in] = owner_name(g, nd->in[in]);
        l->out_index = oi;
        l->out = g->values[nd->out[oi]].name;
        l->w = act_b ? NULL : w->const_val;
        l->cfg = nb_quant_config_for(cfg, nd->name, nd->op_type);
        int bins = l->cfg->act == NB_ACT_HFMG ? l->cfg->num_of_bins : 4096;
        nb_err e = nb_hist_init(&l->hist, bins, st);
        if (!e && act_b) {
            l->act_b = true;
            l->b_act = owner_name(g, nd->in[1]);
            e = nb_hist_init(&l->hist_b, bins, st);
        }
        if (!e && !act_b && !strcmp(nd->op_type, "Conv") && cfg->do_fusion && !skips_fusion(cfg, nd->name) &&
            (l->bn = bn_after(g, nd, l->w->dims[0])) != NULL &&
            (e = fold_bn(l, st)) != NB_OK)
            nb_prefix(st, "layer '%s'", nd->name);
        if (!e && rnn) {
            l->rnn = true;
            l->r = r->const_val;
            l->h_in = l->in_name[5];
            l->h_out = l->out;
            e = nb_hist_init(&l->hist_h, bins, st);
        }
        (*k)++; /* freed with the others, even on an error */
        if (e)
            return e;
    }
    return NB_OK;
}

/* An LSTM's or GRU's float bias B [1, 2 x channels] as the loaded model holds it (folded:
 * a Cast of an fp16 initializer or a Constant node is its value), or NULL. */
static const float *rnn_bias(const layer *l)
{
    const nb_node *nd = l->node;
    if (!l->rnn || nd->n_in < 4 || nd->in[3] < 0)
        return NULL;
    const nb_tensor *b = l->g->values[nd->in[3]].const_val;
    return b && b->dtype == NB_FLOAT && b->numel == 2 * l->channels ? b->data : NULL;
}

/* The layers that must be quantized (If branches included); an error for one that cannot
 * be. */
static nb_err find_layers(const nb_model *m, const nb_quant_config *cfg, const char *cpu,
                          const nb_calibrate_opts *o, layer **out, int *n, nb_status *st)
{
    layer *ls = calloc((size_t)nb_graph_count_nodes(m->graph) + 1, sizeof *ls);
    if (!ls)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int k = 0;
    nb_err e = add_layers(m->graph, cfg, cpu, o, ls, &k, st);
    if (e) {
        for (int i = 0; i < k; i++) {
            nb_hist_free(&ls[i].hist);
            nb_hist_free(&ls[i].hist_h);
            nb_hist_free(&ls[i].hist_b);
            nb_tensor_free(ls[i].w_folded);
            nb_tensor_free(ls[i].b_folded);
        }
        free(ls);
        return e;
    }
    *out = ls;
    *n = k;
    return NB_OK;
}

/* ---- AdaRound: the samples and the rounding (nb_adaround) ---- */

#define ADA_MAX_SAMPLES 4096        /* input rows a layer keeps, over all batches */
#define ADA_MAX_FLOATS (8 << 20)    /* and at most this many values (32 MB) */

/* A Conv's geometry over a 1-D or 2-D input [N, C, (H,) W]: kernel, strides, dilations,
 * the padding at the start, the output size. False: not a case AdaRound takes. */
typedef struct conv_geo {
    int64_t kh, kw, sh, sw, dh, dw, ph, pw, oh, ow, h, w, c;
} conv_geo;

static bool conv_geometry(const layer *l, const nb_tensor *t, conv_geo *cg)
{
    const nb_node *nd = l->node;
    int sp = l->w->rank - 2; /* spatial dims: 1 or 2 */
    if ((sp != 1 && sp != 2) || t->rank != sp + 2 || t->dims[1] != l->w->dims[1])
        return false;
    int n = 0;
    const int64_t *st = nb_attr_ints(nd, "strides", &n);
    const int64_t *di = nb_attr_ints(nd, "dilations", &n);
    const int64_t *pd = nb_attr_ints(nd, "pads", &n);
    const char *ap = nb_attr_str(nd, "auto_pad", "NOTSET");
    int64_t k[2] = {1, l->w->dims[2]}, s[2] = {1, st ? st[0] : 1}, d[2] = {1, di ? di[0] : 1},
            in[2] = {1, t->dims[2]}, pb[2] = {0, pd ? pd[0] : 0}, pe[2] = {0, pd ? pd[1] : 0};
    if (sp == 2) {
        k[0] = l->w->dims[2], k[1] = l->w->dims[3];
        s[0] = st ? st[0] : 1, s[1] = st ? st[1] : 1;
        d[0] = di ? di[0] : 1, d[1] = di ? di[1] : 1;
        in[0] = t->dims[2], in[1] = t->dims[3];
        pb[0] = pd ? pd[0] : 0, pb[1] = pd ? pd[1] : 0;
        pe[0] = pd ? pd[2] : 0, pe[1] = pd ? pd[3] : 0;
    }
    int64_t o[2];
    for (int a = 0; a < 2; a++) {
        if (s[a] < 1 || d[a] < 1)
            return false;
        if (!strncmp(ap, "SAME", 4)) { /* SAME_UPPER: the extra pad at the end */
            int64_t out = (in[a] + s[a] - 1) / s[a];
            int64_t tot = (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a];
            tot = tot < 0 ? 0 : tot;
            pb[a] = strcmp(ap, "SAME_LOWER") ? tot / 2 : tot - tot / 2;
            pe[a] = tot - pb[a];
        } else if (!strcmp(ap, "VALID"))
            pb[a] = pe[a] = 0;
        o[a] = (in[a] + pb[a] + pe[a] - d[a] * (k[a] - 1) - 1) / s[a] + 1;
        if (o[a] < 1)
            return false;
    }
    *cg = (conv_geo){.kh = k[0], .kw = k[1], .sh = s[0], .sw = s[1], .dh = d[0], .dw = d[1],
                     .ph = pb[0], .pw = pb[1], .oh = o[0], .ow = o[1], .h = in[0], .w = in[1],
                     .c = t->dims[1]};
    return true;
}

/* Which rounding layer l gets (an override's own weight_round over the option over the
 * config's), and when it is AdaRound on a layer it takes (a Conv of group 1, 1-D or 2-D; a
 * Gemm without transA; a MatMul of a constant [K, N]), the sample sizes. */
static void ada_setup(layer *l, const nb_quant_config *cfg, const nb_calibrate_opts *o,
                      int batch_num)
{
    bool own = l->cfg != &cfg->common && l->cfg->weight_round_given;
    l->wround = !own && o->weight_round_set ? o->weight_round : l->cfg->weight_round;
    l->ada_k = 0;
    if (l->wround != NB_ROUND_ADAROUND || l->rnn || l->act_b || !l->w)
        return;
    const char *op = l->node->op_type;
    const nb_tensor *w = l->w;
    if (!strcmp(op, "Conv") && nb_attr_int(l->node, "group", 1) == 1 &&
        (w->rank == 3 || w->rank == 4))
        l->ada_k = w->numel / w->dims[0];
    else if (!strcmp(op, "Gemm") && !nb_attr_int(l->node, "transA", 0) && w->rank == 2)
        l->ada_k = nb_attr_int(l->node, "transB", 0) ? w->dims[1] : w->dims[0];
    else if (!strcmp(op, "MatMul") && w->rank == 2)
        l->ada_k = w->dims[0];
    if (l->ada_k <= 0)
        return;
    l->ada_cap = ADA_MAX_FLOATS / l->ada_k;
    l->ada_cap = l->ada_cap > ADA_MAX_SAMPLES ? ADA_MAX_SAMPLES : l->ada_cap < 1 ? 1 : l->ada_cap;
    l->ada_quota = (l->ada_cap + (batch_num > 0 ? batch_num : 1) - 1) / (batch_num > 0 ? batch_num : 1);
    l->ada_rng = 0x9E3779B97F4A7C15ull; /* a fixed seed: the same samples every run */
}

/* Samples of the layer's input t (this batch's, float): rows of ada_k values, evenly
 * spaced over the batch's output positions from an offset of a fixed-seed generator. */
static nb_err ada_collect(layer *l, const nb_tensor *t, nb_status *st)
{
    bool conv = !strcmp(l->node->op_type, "Conv");
    conv_geo cg = {0};
    if (conv && !conv_geometry(l, t, &cg))
        return NB_OK; /* another shape: no samples from it */
    if (!conv && (t->rank < 1 || t->dims[t->rank - 1] != l->ada_k))
        return NB_OK;
    int64_t total = conv ? t->dims[0] * cg.oh * cg.ow : t->numel / l->ada_k;
    int64_t want = l->ada_quota < l->ada_cap - l->ada_n ? l->ada_quota : l->ada_cap - l->ada_n;
    if (want > total)
        want = total;
    if (want <= 0)
        return NB_OK;
    if (!l->ada_x && !(l->ada_x = malloc(sizeof(float) * (size_t)(l->ada_cap * l->ada_k))))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    l->ada_rng = l->ada_rng * 6364136223846793005ull + 1442695040888963407ull;
    double step = (double)total / (double)want;
    double start = (double)(l->ada_rng >> 11) / 9007199254740992.0 * step;
    const float *x = t->data;
    for (int64_t s = 0; s < want; s++) {
        int64_t pos = (int64_t)(start + step * (double)s);
        pos = pos >= total ? total - 1 : pos;
        float *row = l->ada_x + (l->ada_n + s) * l->ada_k;
        if (!conv) {
            memcpy(row, x + pos * l->ada_k, sizeof(float) * (size_t)l->ada_k);
            continue;
        }
        int64_t n = pos / (cg.oh * cg.ow), oy = pos / cg.ow % cg.oh, ox = pos % cg.ow;
        int64_t at = 0;
        for (int64_t c = 0; c < cg.c; c++) /* [Cin, kh, kw], the weights' order */
            for (int64_t ky = 0; ky < cg.kh; ky++)
                for (int64_t kx = 0; kx < cg.kw; kx++) {
                    int64_t iy = oy * cg.sh - cg.ph + ky * cg.dh, ix = ox * cg.sw - cg.pw + kx * cg.dw;
                    row[at++] = iy < 0 || iy >= cg.h || ix < 0 || ix >= cg.w
                                    ? 0.0f
                                    : x[((n * cg.c + c) * cg.h + iy) * cg.w + ix];
                }
    }
    l->ada_n += want;
    return NB_OK;
}

/* AdaRound of layer l's weights (after ARQ: its scales kept) on its samples, the inputs
 * fake-quantized with its activation parameters as the NPU takes them: l->w_q, w_fq and
 * w_sqnr replaced. Nothing when it does not apply. */
static nb_err ada_apply(layer *l, nb_status *st)
{
    if (l->ada_k <= 0 || l->ada_n <= 0 || l->wround != NB_ROUND_ADAROUND)
        return NB_OK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const nb_tensor *w = l->w;
    int64_t cout = l->channels, k = l->ada_k, p = l->ada_n;
    bool rows_last = !strcmp(l->node->op_type, "MatMul") ||
                     (!strcmp(l->node->op_type, "Gemm") && !nb_attr_int(l->node, "transB", 0));
    float *wm = malloc(sizeof(float) * (size_t)(cout * k)),
          *xq = malloc(sizeof(float) * (size_t)(p * k));
    int8_t *q = malloc((size_t)(cout * k));
    nb_err e = wm && xq && q && cout * k == w->numel ? NB_OK
                                                     : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int64_t c = 0; !e && c < cout; c++) /* [cout, k]: [K, N] transposed */
        for (int64_t j = 0; j < k; j++)
            wm[c * k + j] = (float)nb_tensor_get_f64(w, rows_last ? j * cout + c : c * k + j);
    for (int64_t i = 0; !e && i < p * k; i++)
        xq[i] = (float)nb_fake_quant(l->ada_x[i], &l->q);
    nb_ada_params pr = l->cfg->ada;
    if (!e)
        e = nb_adaround(wm, l->scale_w, cout, k, l->ada_x, xq, p, l->cfg->weight_bits, &pr, q,
                        &l->ada_changed, st);
    if (!e) {
        for (int64_t c = 0; c < cout; c++)
            for (int64_t j = 0; j < k; j++)
                l->w_q[rows_last ? j * cout + c : c * k + j] = q[c * k + j];
        int64_t outer, ch, inner;
        weight_layout(l, w, &outer, &ch, &inner);
        float *wf = w->dtype == NB_FLOAT ? w->data : NULL;
        if (!wf) /* the float weights in their layout (wm is transposed for [K, N]) */
            for (int64_t i = 0; i < w->numel; i++)
                wm[i] = (float)nb_tensor_get_f64(w, i);
        double sig = 0, noise = 0;
        dequant_rows(wf ? wf : wm, l->w_q, l->scale_w, outer, ch, inner, l->w_fq->data, &sig,
                     &noise);
        l->w_sqnr = noise > 0 ? 10 * log10(sig / noise) : INFINITY;
    }
    free(wm), free(xq), free(q);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    l->ada_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    return e;
}

/* ---- the step ---- */

/* What the report's pointers point into: the model (names), the layers (scales). */
typedef struct calib_internal {
    nb_model *m;
    layer *ls;
    int nl;
} calib_internal;

static void free_layers(layer *ls, int nl)
{
    for (int i = 0; i < nl; i++) {
        nb_hist_free(&ls[i].hist);
        nb_hist_free(&ls[i].hist_h);
        nb_hist_free(&ls[i].hist_b);
        free(ls[i].scale_w);
        free(ls[i].w_q);
        nb_tensor_free(ls[i].w_fq);
        free(ls[i].scale_r);
        free(ls[i].r_q);
        nb_tensor_free(ls[i].r_fq);
        nb_tensor_free(ls[i].w_folded);
        nb_tensor_free(ls[i].b_folded);
        for (int k = 0; k < MAX_LAYER_IN; k++)
            nb_tensor_free(ls[i].cur[k]);
        nb_tensor_free(ls[i].bias);
        free(ls[i].in_sum);
        free(ls[i].mag);
        free(ls[i].ada_x);
    }
    free(ls);
}

void nb_calibrate_result_free(nb_calibrate_result *r)
{
    calib_internal *in = r->internal;
    if (in) {
        free_layers(in->ls, in->nl);
        nb_model_free(in->m);
        free(in);
    }
    free(r->layers);
    free(r->outputs);
    free(r->cpu_nodes);
    memset(r, 0, sizeof *r);
}

/* Makes the folder of DIR/PREFIX. */
static nb_err make_save_dir(const char *save, nb_status *st)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", save);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return NB_OK;
    *slash = 0;
    if (nb_mkdir_p(dir) && errno != EEXIST)
        return nb_fail(st, NB_ERR_IO, "--save_path %s: cannot make the folder: %s", save,
                       strerror(errno));
    struct stat sb;
    if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
        return nb_fail(st, NB_ERR_IO, "--save_path %s: '%s' is not a folder", save, dir);
    return NB_OK;
}

static double ms_since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* A killed run's parts of the three output files of SAVE (this run may fail). */
static void remove_stale_parts(const char *save)
{
    static const char *const kinds[3] = {"_quant_record.txt", "_fake_quant_model.onnx",
                                         "_deploy_model.onnx"};
    for (int i = 0; save && i < 3; i++) {
        char f[4300];
        snprintf(f, sizeof f, "%s%s", save, kinds[i]);
        nb_remove_stale_tmps(f);
    }
}

/* The config and the model of O, loaded and checked: *lo's input_shape becomes the shape
 * calibrated with (a dynamic batch taken as 1; *batch_shape owns it). */
static nb_err load_model(const nb_calibrate_opts *o, nb_quant_config *cfg, nb_load_opts *lo,
                         nb_model **mp, char **batch_shape, char **batch_names, nb_status *st)
{
    const char *model = o->model;
    nb_err e;
    if (o->config_path && (e = nb_quant_config_load(o->config_path, cfg, st)))
        return e;
    if (o->batch_num > 0)
        cfg->batch_num = o->batch_num;
    if ((e = nb_ref_load(model, lo, mp, st)))
        return e;
    /* a dynamic batch taken as 1, as estimate takes it; the written models carry it */
    if ((e = nb_batch_one_shape(*mp, o->input_shape, batch_shape, batch_names, st)))
        return e;
    if (*batch_shape) {
        nb_model_free(*mp);
        *mp = NULL;
        lo->input_shape = *batch_shape;
        if ((e = nb_ref_load(model, lo, mp, st)))
            return e;
        nb_warnf(o->warn, o->user, "%s: dynamic batch of %s taken as 1 (--input_shape to "
                 "choose)", model, *batch_names);
    }
    nb_model *m = *mp;
    if (nb_graph_has_qdq(m->graph))
        return nb_fail(st, NB_ERR_ARG, "%s: a Q/DQ (QAT) model: its scales are in the file; "
                       "import it with --from_qdq (bringup does), or compile it with atc as "
                       "it is", model);
    if (m->n_named_nodes) /* the deploy and fake-quant models and the record carry them */
        nb_warnf(o->warn, o->user, "%s: %d node(s) without a name, named <op_type>_<index in "
                 "the file> in the outputs and the record", model, m->n_named_nodes);
    if (o->on_model)
        o->on_model(o->user, m);
    return NB_OK;
}

/* The inputs in --input_shape order when it names them all (AMCT pairs data_dir with
   input_shape), else the model's order. */
static void input_order(const nb_graph *g, const char *shape, int *order, int n_in)
{
    for (int i = 0; i < n_in; i++)
        order[i] = g->inputs[i];
    if (!shape)
        return;
    nb_shape_override *ov = NULL;
    int nov = 0;
    nb_status ignore = {0};
    if (!nb_parse_input_shape(shape, &ov, &nov, &ignore) && nov == n_in)
        for (int i = 0; i < n_in; i++)
            order[i] = nb_graph_find(g, ov[i].name);
    nb_shape_overrides_free(ov, nov);
}

/* Every batch: as many as the folder with the fewest files (1 when one cannot be listed:
   the listing after reports the folder). */
static int every_batch(char **dparts, int n_in)
{
    int n = 0;
    for (int i = 0; i < n_in; i++) {
        char **all = NULL;
        int cnt = 0;
        nb_status ignore = {0};
        if (list_batches(dparts[i], -1, &all, &cnt, NULL, NULL, &ignore))
            return 1;
        for (int k = 0; k < cnt; k++)
            free(all[k]);
        free(all);
        if (n == 0 || cnt < n)
            n = cnt;
    }
    return n;
}

/* Input I (value index V): its dtype checked against --data_types (TPART or NULL), its
 * shape static. */
static nb_err check_input(const char *model, const nb_value *v, const char *tpart,
                          nb_status *st)
{
    /* without --data_types each input's files are of the model input's own type (a .npy
       says its type and is checked against it when read) */
    nb_dtype want = v->dtype;
    if (tpart) {
        size_t k = 0;
        while (k < sizeof data_types / sizeof data_types[0] && strcmp(tpart, data_types[k].name))
            k++;
        if (k == sizeof data_types / sizeof data_types[0])
            return nb_fail(st, NB_ERR_ARG, "--data_types: '%s' is not a data type (float32, "
                           "float16, int8, int32, int64, ...)", tpart);
        want = data_types[k].t;
    }
    if (want != v->dtype)
        return nb_fail(st, NB_ERR_ARG, "--data_types: input '%s' is %s in the model, not %s",
                       v->name, nb_dtype_name(v->dtype), nb_dtype_name(want));
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] < 0)
            return nb_fail(st, NB_ERR_ARG, "%s: input '%s' has a dynamic dim %d: give its "
                           "shape with --input_shape", model, v->name, d);
    return NB_OK;
}

/* A config that names a layer the model does not have is a typo, not a no-op. */
static nb_err check_config_names(const nb_calibrate_opts *o, const nb_quant_config *cfg,
                                 const layer *ls, int nl, nb_status *st)
{
    for (int i = 0; i < cfg->n_by_name + cfg->n_skip_layers + cfg->n_skip_fusion; i++) {
        int kind = i < cfg->n_by_name ? 0 : i < cfg->n_by_name + cfg->n_skip_layers ? 1 : 2;
        const char *nm = kind == 0 ? cfg->by_name[i].key
                         : kind == 1 ? cfg->skip_layers[i - cfg->n_by_name]
                                     : cfg->skip_fusion_layers[i - cfg->n_by_name - cfg->n_skip_layers];
        bool found = false;
        for (int k = 0; k < nl && !found; k++)
            found = !strcmp(ls[k].node->name, nm) &&
                    (kind != 2 || !strcmp(ls[k].node->op_type, "Conv"));
        /* a layer placed on the MCU's CPU is left float: its config does not apply */
        found |= o->cpu_nodes && nb_list_has(o->cpu_nodes, nm, strlen(nm));
        if (!found) {
            char where[64] = "";
            if (kind == 0)
                snprintf(where, sizeof where, ":%d", cfg->by_name[i].line);
            return nb_fail(st, NB_ERR_ARG, "%s%s: %s names '%s', which is no %s of %s",
                           o->config_path ? o->config_path : "config", where,
                           kind == 0 ? "override_layer_configs" : kind == 1 ? "skip_layers"
                                                                          : "skip_fusion_layers",
                           nm, kind == 2 ? "Conv" : "Conv, ConvTranspose, MatMul, Gemm, LSTM or GRU",
                           o->model);
        }
    }
    return NB_OK;
}

/* Layers of If branches no batch took: all named in one error. */
static nb_err check_unreached(const char *model, const layer *ls, int nl, nb_status *st)
{
    int unreached = 0;
    char names_buf[400] = "";
    for (int i = 0; i < nl; i++)
        if ((!ls[i].seen || !ls[i].ran) && ls[i].g->parent && unreached++ < 4)
            snprintf(names_buf + strlen(names_buf), sizeof names_buf - strlen(names_buf),
                     "%s'%s'", unreached > 1 ? ", " : "", ls[i].node->name);
    if (unreached)
        return nb_fail(st, NB_ERR_ARG, "%s: %d layer%s in If branches that no calibration "
                       "batch takes (%s%s): give batches that take every branch (the compiled "
                       "model keeps both)", model, unreached, unreached == 1 ? "" : "s",
                       names_buf, unreached > 4 ? ", ..." : "");
    return NB_OK;
}

/* The warnings and advice on the calibrated layers (clipping, tiny values, inputs that
 * round to 0, the CPU placement into res->cpu_nodes, shared inputs). */
static nb_err advise(calib *cb, const nb_graph *g, layer *ls, int nl, nb_calibrate_result *res,
                     nb_status *st)
{
    warn_clipping(cb, ls, nl);
    for (int i = 0; i < nl; i++) {
        warn_tiny(cb, &ls[i]);
        ls[i].zeroed = zeroed_fraction(&ls[i]);
        zeroed_int16(&ls[i]);
        warn_zeroed(cb, &ls[i]);
    }
    if (cb->vmax && !(res->cpu_nodes = cpu_advice(g, cb->vmax, ls, nl)))
        for (int i = 0; i < nl; i++)
            if (suggests_cpu(&ls[i]))
                return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nl && res->cpu_nodes; i++)
        if (suggests_cpu(&ls[i]))
            nb_warnf(cb->warn, cb->user, "%s: even at INT16 (step %.3g over its range %.3g), %d "
                     "of %d calibration inputs lose more than %.0f%% of their nonzero input "
                     "values (%.0f%% on input %d): no quantization the cube takes holds it; "
                     "the MCU's CPU runs it in float: --cpu_nodes \"%s\"", ls[i].node->name,
                     ls[i].q.bits == 16 ? ls[i].q.scale : (ls[i].q.clip_max - ls[i].q.clip_min) / 65535.0,
                     ls[i].q.clip_max - ls[i].q.clip_min, ls[i].zeroed16_over, ls[i].mag_n,
                     100 * ZEROED_WARN, 100 * ls[i].zeroed16, ls[i].zeroed16_batch,
                     res->cpu_nodes);
    warn_shared(cb, ls, nl);
    return NB_OK;
}

/* The separate evaluation set of --eval_dir (one folder per input): its files into efiles,
 * their counts into efiles_n, *eval_batches the fewest. */
static nb_err list_eval(const nb_calibrate_opts *o, int n_in, char **eval_copy,
                        char **efiles[64], int efiles_n[64], int *eval_batches, nb_status *st)
{
    *eval_copy = strdup(o->eval_dirs);
    char *eparts[65];
    int ne = *eval_copy ? split(*eval_copy, eparts, 65) : 0;
    if (ne != n_in)
        return nb_fail(st, NB_ERR_ARG, "--eval_dir gives %s%d folder%s for %d input%s",
                       ne > 64 ? "more than " : "", ne > 64 ? 64 : ne, ne == 1 ? "" : "s",
                       n_in, n_in == 1 ? "" : "s");
    for (int i = 0; i < n_in; i++) {
        int cnt = 0;
        nb_err e = list_batches(eparts[i], -1, &efiles[i], &cnt, o->warn, o->user, st);
        if (e)
            return e;
        efiles_n[i] = cnt;
        if (i == 0 || cnt < *eval_batches)
            *eval_batches = cnt;
    }
    return NB_OK;
}

/* The three output names of SAVE (DIR/PREFIX, the folder made) into res, and their
 * NAME.PID.part names into part (this run's own: two runs to one prefix do not write into
 * each other's; renamed when all three and the evaluation are done). */
static nb_err output_names(const char *save, nb_calibrate_result *res, char part[3][4300],
                           nb_status *st)
{
    nb_err e = make_save_dir(save, st);
    if (e)
        return e;
    if (snprintf(res->record, sizeof res->record, "%s_quant_record.txt", save) >=
        (int)sizeof res->record)
        return nb_fail(st, NB_ERR_ARG, "--save_path %s: too long", save);
    snprintf(res->fake_quant, sizeof res->fake_quant, "%s_fake_quant_model.onnx", save);
    snprintf(res->deploy, sizeof res->deploy, "%s_deploy_model.onnx", save);
    nb_part_path(res->record, part[0], sizeof part[0]);
    nb_part_path(res->fake_quant, part[1], sizeof part[1]);
    nb_part_path(res->deploy, part[2], sizeof part[2]);
    const char *finals[3] = {res->record, res->fake_quant, res->deploy};
    for (int i = 0; i < 3; i++) { /* a folder in the way: refused before anything is written */
        struct stat fsb;
        if (lstat(finals[i], &fsb) == 0 && S_ISDIR(fsb.st_mode))
            return nb_fail(st, NB_ERR_IO, "%s: a folder is in the way; nothing was written",
                           finals[i]);
    }
    return NB_OK;
}

/* The record, fake-quant and deploy models of the layers into the part files. */
static nb_err write_parts(const char *model, char part[3][4300], const layer *ls, int nl,
                          const nb_quant_config *cfg, const char *input_shape, nb_status *st)
{
    nb_qlayer *ql = calloc((size_t)nl, sizeof *ql);
    if (!ql)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nl; i++)
        ql[i] = (nb_qlayer){.node = ls[i].node->name, .act_bits = ls[i].q.bits,
                            .scale_d = ls[i].q.scale, .offset_d = ls[i].q.offset,
                            .weight_bits = ls[i].cfg->weight_bits,
                            .channels = ls[i].channels, .scale_w = ls[i].scale_w,
                            .w_q = ls[i].w_q, .w_rank = ls[i].w ? ls[i].w->rank : 0,
                            .w_dims = ls[i].w ? ls[i].w->dims : NULL,
                            .w_numel = ls[i].w ? ls[i].w->numel : 0,
                            .act_b = ls[i].act_b, .scale_b = ls[i].qb.scale,
                            .offset_b = ls[i].qb.offset,
                            .w_axis = ls[i].w_axis,
                            .bias = ls[i].bias ? ls[i].bias->data : NULL,
                            .r_q = ls[i].r_q, .scale_r = ls[i].scale_r,
                            .r_dims = ls[i].r ? ls[i].r->dims : NULL,
                            .r_numel = ls[i].r ? ls[i].r->numel : 0,
                            .scale_h = ls[i].qh.scale, .offset_h = ls[i].qh.offset,
                            .rnn_bias = rnn_bias(&ls[i]),
                            .fused_bn = ls[i].bn != NULL};
    nb_err e = nb_check_layers(model, ql, nl, st);
    if (!e)
        e = nb_write_record(part[0], ql, nl, st);
    if (!e)
        e = nb_write_fake_quant(model, part[1], ql, nl, cfg->force_fp16_quant, st);
    if (!e)
        e = nb_write_deploy(model, part[2], ql, nl, st);
    for (int i = 1; i < 3 && !e && input_shape; i++) /* the shapes calibrated with */
        e = nb_write_input_shapes(part[i], input_shape, st);
    free(ql);
    return e;
}

/* The three part files renamed with the signals held: an interrupt cannot fall between two
   renames, and never removes a previous run's good files. */
static nb_err rename_parts(const nb_calibrate_result *res, char part[3][4300], nb_status *st)
{
    const char *finals[3] = {res->record, res->fake_quant, res->deploy};
    nb_err e = NB_OK;
    sigset_t hold, old_mask;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT), sigaddset(&hold, SIGTERM), sigaddset(&hold, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hold, &old_mask);
    for (int i = 0; i < 3 && !e; i++) /* (a rename in one folder fails only on I/O) */
        if (rename(part[i], finals[i]))
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write it from %s: %s", finals[i], part[i],
                        strerror(errno));
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return e;
}

/* The report of each output (per_out) and each layer into res. */
static void report_layers(nb_calibrate_result *res, const nb_graph *g, const cmp_acc *per_out,
                          const layer *ls, int nl)
{
    res->n_outputs = g->n_outputs;
    for (int k = 0; k < g->n_outputs; k++)
        res->outputs[k] = (nb_calib_output){
            .name = g->values[g->outputs[k]].name,
            .dtype = g->values[g->outputs[k]].dtype, .compared = per_out[k].n > 0,
            .sqnr_db = cmp_sqnr_db(&per_out[k]), .cosine = cmp_cosine(&per_out[k]),
            .max_abs_diff = per_out[k].max_diff};
    res->n_layers = nl;
    for (int i = 0; i < nl; i++) {
        const layer *l = &ls[i];
        nb_calib_layer_report *r = &res->layers[i];
        *r = (nb_calib_layer_report){
            .name = l->node->name, .op_type = l->node->op_type,
            .fused_bn = l->bn ? l->bn->name : NULL, .rnn = l->rnn, .algo = l->algo,
            .clip_min = l->q.clip_min, .clip_max = l->q.clip_max, .scale_d = l->q.scale,
            .offset_d = l->q.offset, .act_bits = l->q.bits, .weight_bits = l->cfg->weight_bits,
            .channel_wise = l->cfg->channel_wise, .channels = l->channels,
            .scale_w = l->scale_w, .bias = l->bias ? l->bias->data : NULL,
            .act_sqnr = l->act_sqnr, .w_sqnr = l->w_sqnr,
            .out_sqnr = cmp_sqnr_db(&l->out_err), .out_cos = cmp_cosine(&l->out_err),
            .evaluated = l->out_err.n > 0, .batches = l->batches,
            .h_clip_min = l->qh.clip_min, .h_clip_max = l->qh.clip_max,
            .scale_h = l->qh.scale, .offset_h = l->qh.offset, .h_bits = l->qh.bits,
            .h_sqnr = l->h_sqnr, .r_sqnr = l->r_sqnr, .scale_r = l->scale_r,
            .zeroed = l->zeroed, .suggests_int16 = suggests_int16(l),
            .zeroed16 = l->zeroed16, .zeroed16_input = l->zeroed16_batch,
            .zeroed16_over = l->zeroed16_over, .suggests_cpu = suggests_cpu(l),
            .act_b = l->act_b, .b_clip_min = l->qb.clip_min, .b_clip_max = l->qb.clip_max,
            .scale_b = l->qb.scale, .offset_b = l->qb.offset, .b_sqnr = l->b_sqnr,
            .weight_round = l->ada_n > 0 && l->ada_k > 0 ? l->wround : NB_ROUND_NEAREST,
            .ada_changed = l->ada_changed, .ada_samples = l->ada_n, .ada_ms = l->ada_ms};
        if (r->suggests_int16)
            int16_override(l, r->int16_override, sizeof r->int16_override);
    }
}

/* The calibration batches' files of each input (files[i], batch_num of them) and the count
 * in the first folder (files_in_dir0), each input checked; in-memory batches are listed
 * by the caller. */
static nb_err list_inputs(const nb_calibrate_opts *o, const nb_graph *g, const int *order,
                          int n_in, char **dparts, char **tparts, int batch_num,
                          const char **names, char **files[64], int *files_in_dir0,
                          nb_status *st)
{
    bool mem = o->batches != NULL;
    for (int i = 0; i < n_in; i++) {
        const nb_value *v = &g->values[order[i]];
        names[i] = v->name;
        nb_err e = check_input(o->model, v, tparts ? tparts[i] : NULL, st);
        if (e)
            return e;
        if (mem) { /* each batch of this input: its dtype and shape, checked in run_batch */
            *files_in_dir0 = o->n_batches;
            continue;
        }
        if (i == 0) { /* how many there are, for the report */
            char **all = NULL;
            nb_status ignore = {0};
            if (!list_batches(dparts[0], -1, &all, files_in_dir0, NULL, NULL, &ignore)) {
                for (int k = 0; k < *files_in_dir0; k++)
                    free(all[k]);
                free(all);
            }
        }
        if ((e = list_batches(dparts[i], batch_num, &files[i], NULL, o->warn, o->user, st)))
            return e;
    }
    return NB_OK;
}

/* The model's inputs paired with the data: *n_in of them (0 after a count mismatch), their
 * order and names, the batch count into cfg, the files of each (dir_copy and type_copy,
 * writable copies of --data_dir and --data_types, split into dparts and tparts). */
static nb_err gather_inputs(const nb_calibrate_opts *o, const nb_graph *g, nb_quant_config *cfg,
                            char *dir_copy, char *type_copy, char **dparts, char **tparts,
                            int *order, const char **names, char **files[64],
                            int *files_in_dir0, int *n_in_out, nb_status *st)
{
    int n_in = g->n_inputs;
    *n_in_out = n_in;
    if (n_in > 64)
        return nb_fail(st, NB_ERR_ARG, "%s: %d inputs; calibrate takes up to 64", o->model,
                       n_in);
    bool mem = o->batches != NULL;
    int nd = mem ? n_in : split(dir_copy, dparts, 65);
    int nt = type_copy ? split(type_copy, tparts, 65) : 0;
    if (mem && (o->n_batches < 1 || (o->eval_batches && o->n_eval_batches < 1)))
        return nb_fail(st, NB_ERR_ARG, "calibrate: no batch given");
    if (mem)
        cfg->batch_num = o->n_batches;
    if (nd != n_in || (type_copy && nt != n_in)) {
        *n_in_out = 0;
        return nb_fail(st, NB_ERR_ARG, "%s has %d input%s; --data_dir gives %s%d folder%s%s",
                       o->model, n_in, n_in == 1 ? "" : "s", nd > 64 ? "more than " : "",
                       nd > 64 ? 64 : nd, nd == 1 ? "" : "s",
                       type_copy && nt != n_in ? " and --data_types another count" : "");
    }
    input_order(g, o->input_shape, order, n_in);
    if (!mem && o->batch_num < 0)
        cfg->batch_num = every_batch(dparts, n_in);
    return list_inputs(o, g, order, n_in, dparts, type_copy ? tparts : NULL, cfg->batch_num,
                       names, files, files_in_dir0, st);
}

/* Statistics, then each layer's activation algorithm, weights and bias. */
static nb_err calibrate_layers(const nb_calibrate_opts *o, const nb_quant_config *cfg,
                               calib *cb, nb_exec *ex, const int *order, const char **names,
                               int n_in, char **const *files, nb_tensor **data, nb_status *st)
{
    const nb_graph *g = cb->g;
    nb_err e;
    for (int b = 0; b < cfg->batch_num; b++) {
        if ((e = run_batch(cb, ex, g, order, names, n_in, files, b, data, st)))
            return e;
        progress(cb, "calibrate", b + 1, cfg->batch_num);
    }
    if ((e = check_unreached(o->model, cb->l, cb->n, st)))
        return e;
    for (int i = 0; i < cb->n; i++) {
        layer *l = &cb->l[i];
        if ((e = choose_act(l, o->algo, o->algo_set, cfg->activation_offset, st)) ||
            (e = quantize_weights(l, st)) || (e = ada_apply(l, st)) ||
            (e = correct_bias(l, !o->no_bias_correction, st))) {
            nb_prefix(st, "layer '%s'", l->node->name);
            return e;
        }
    }
    return NB_OK;
}

/* The report's totals (the outputs' comparison is already in res). */
static void report_totals(nb_calibrate_result *res, const nb_calibrate_opts *o,
                          const nb_quant_config *cfg, int files_in_dir0, int eval_batches)
{
    res->batch_num = cfg->batch_num;
    res->batch_num_given = o->batch_num != 0 || (o->config_path && cfg->batch_num_set);
    res->files_in_first_dir = files_in_dir0;
    res->eval_batches = eval_batches;
    res->eval_set = o->eval_dirs != NULL || o->eval_batches != NULL;
    res->algo = o->algo_set ? o->algo : cfg->common.act;
    res->act_bits = cfg->common.act_bits, res->weight_bits = cfg->common.weight_bits;
}

/* The layers to calibrate of model m (none refused when the model has cube ops left
 * float), the config's names checked against them, each one's rounding set up. */
static nb_err layers_of(const nb_calibrate_opts *o, const nb_model *m, const nb_quant_config *cfg,
                        layer **ls, int *nl, nb_status *st)
{
    const nb_graph *g = m->graph;
    nb_err e;
    if ((e = nb_npu_check_cpu_nodes(g, o->cpu_nodes, st)) || /* a typo places nothing */
        (e = find_layers(m, cfg, o->cpu_nodes, o, ls, nl, st))) {
        nb_prefix(st, "%s", o->model);
        return e;
    }
    int n_cube = 0; /* cube ops left float (--cpu_nodes, run-time weights) are no error */
    for (int i = 0; i < g->n_nodes; i++)
        n_cube += cube_op(g->nodes[i].op_type);
    if (*nl == 0 && !o->cpu_nodes && !n_cube)
        return nb_fail(st, NB_ERR_ARG, "%s: no Conv, ConvTranspose, MatMul, Gemm, LSTM or GRU "
                       "to quantize", o->model);
    if ((e = check_config_names(o, cfg, *ls, *nl, st)))
        return e;
    for (int i = 0; i < *nl; i++)
        ada_setup(&(*ls)[i], cfg, o, cfg->batch_num);
    return NB_OK;
}

nb_err nb_calibrate(const nb_calibrate_opts *o, nb_calibrate_result *res, nb_status *st)
{
    memset(res, 0, sizeof *res);
    nb_err e = NB_OK;
    double *vmax = NULL; /* per value of the model: the largest |x| calibrated (cpu_advice) */
    const char *model = o->model, *save = o->save_path;
    nb_quant_config cfg;
    nb_quant_config_init(&cfg);
    nb_model *m = NULL;
    nb_exec *ex = NULL;
    layer *ls = NULL;
    int nl = 0, n_in = 0;
    char *dir_copy = strdup(o->data_dirs ? o->data_dirs : ""),
         *type_copy = o->data_types ? strdup(o->data_types) : NULL;
    char *dparts[65], *tparts[65];
    char **files[64] = {0}, **efiles[64] = {0}, *eval_copy = NULL;
    int efiles_n[64] = {0};
    nb_tensor *data[64] = {0};
    const char *names[64];
    char part[3][4300];
    bool parts_made = false;
    char *batch_shape = NULL, *batch_names = NULL; /* a dynamic batch taken as 1 */
    cmp_acc *per_out = NULL;
    int files_in_dir0 = 0;
    calib_internal *keep = calloc(1, sizeof *keep);
    if (!dir_copy || (o->data_types && !type_copy) || !keep) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    remove_stale_parts(save);
    nb_load_opts lo = {.input_shape = o->input_shape};
    if ((e = load_model(o, &cfg, &lo, &m, &batch_shape, &batch_names, st)))
        goto out;
    const nb_graph *g = m->graph;
    int order[64];
    if ((e = gather_inputs(o, g, &cfg, dir_copy, type_copy, dparts, tparts, order, names, files,
                           &files_in_dir0, &n_in, st)))
        goto out;
    bool mem = o->batches != NULL;
    if ((e = layers_of(o, m, &cfg, &ls, &nl, st)))
        goto out;
    vmax = malloc(sizeof(double) * ((size_t)g->n_values + 1));
    for (int v = 0; vmax && v < g->n_values; v++)
        vmax[v] = -1;
    calib cb = {.l = ls, .n = nl, .g = g, .vmax = vmax, .st = st,
                .progress = o->progress, .warn = o->warn, .cancel = o->cancel,
                .user = o->user, .mem = o->batches,
                .mem_eval = o->eval_batches ? o->eval_batches : o->batches};
    nb_exec_opts eo = {.on_value = on_value, .user = &cb};
    if ((e = nb_exec_create(m, &eo, &ex, st)))
        goto out;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((e = calibrate_layers(o, &cfg, &cb, ex, order, names, n_in, mem ? NULL : files, data,
                              st)))
        goto out;
    clock_gettime(CLOCK_MONOTONIC, &t1); /* statistics and search done */
    if ((e = advise(&cb, g, ls, nl, res, st)))
        goto out;
    /* everything that can be refused is checked before a file is written */
    int eval_batches = cfg.batch_num < 8 ? cfg.batch_num : 8;
    char **const *eval_files = mem ? NULL : files;
    if (mem && o->eval_batches)
        eval_batches = o->n_eval_batches;
    if (!mem && o->eval_dirs) {
        if ((e = list_eval(o, n_in, &eval_copy, efiles, efiles_n, &eval_batches, st)))
            goto out;
        eval_files = efiles;
    }
    if ((e = output_names(save, res, part, st)))
        goto out;
    parts_made = true;
    if ((e = write_parts(model, part, ls, nl, &cfg, lo.input_shape, st)))
        goto out;
    res->output_worst_cosine = NAN;
    per_out = calloc((size_t)g->n_outputs + 1, sizeof *per_out);
    res->outputs = calloc((size_t)g->n_outputs + 1, sizeof *res->outputs);
    res->layers = calloc((size_t)nl + 1, sizeof *res->layers);
    if (!per_out || !res->outputs || !res->layers) {
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((e = evaluate(&cb, ex, m, part[1], order, names, n_in, eval_files, eval_batches, data,
                      &res->output_sqnr_db, &res->output_cosine, &res->output_worst_cosine,
                      &res->output_max_abs_diff, per_out, st))) {
        nb_prefix(st, "evaluating %s", res->fake_quant);
        goto out;
    }
    if ((e = rename_parts(res, part, st)))
        goto out;
    parts_made = false;
    clock_gettime(CLOCK_MONOTONIC, &t2);
    res->calibration_ms = ms_since(&t0, &t1);
    res->files_and_evaluation_ms = ms_since(&t1, &t2);
    report_totals(res, o, &cfg, files_in_dir0, eval_batches);
    report_layers(res, g, per_out, ls, nl);
    keep->m = m, keep->ls = ls, keep->nl = nl;
    res->internal = keep;
    m = NULL, ls = NULL, keep = NULL;
out:
    free(vmax);
    free(batch_shape);
    free(batch_names);
    if (parts_made) /* a failure after the first write: no output at all */
        for (int i = 0; i < 3; i++)
            remove(part[i]);
    free(per_out);
    free_layers(ls, ls ? nl : 0);
    for (int i = 0; i < 64; i++) {
        nb_tensor_free(data[i]);
        for (int b = 0; files[i] && b < cfg.batch_num; b++)
            free(files[i][b]);
        free(files[i]);
        for (int b = 0; efiles[i] && b < efiles_n[i]; b++)
            free(efiles[i][b]);
        free(efiles[i]);
    }
    free(eval_copy);
    nb_exec_free(ex);
    nb_model_free(m);
    nb_quant_config_free(&cfg);
    free(dir_copy);
    free(type_copy);
    free(keep);
    if (e) {
        free(res->outputs), free(res->layers);
        res->outputs = NULL, res->layers = NULL;
        res->n_outputs = res->n_layers = 0;
    }
    return e;
}

/* ---- QAT import ---- */

nb_err nb_qat_import(const char *model, const char *save, nb_qdq_model *q, char *deploy,
                     char *record, size_t len, nb_status *st)
{
    memset(q, 0, sizeof *q);
    nb_err e = make_save_dir(save, st);
    if (e)
        return e;
    char stripped[4300];
    if ((size_t)snprintf(deploy, len, "%s_deploy_model.onnx", save) >= len ||
        (size_t)snprintf(record, len, "%s_quant_record.txt", save) >= len)
        return nb_fail(st, NB_ERR_ARG, "--save_path %s: too long", save);
    snprintf(stripped, sizeof stripped, "%s.qat.tmp", deploy);
    nb_model *valid = NULL; /* the whole model checked first, as every command loads it */
    if ((e = nb_model_load(model, NULL, &valid, st))) {
        nb_model_free(valid);
        return e;
    }
    nb_model_free(valid);
    char dpart[4300], rpart[4300];
    nb_remove_stale_tmps(deploy);
    nb_remove_stale_tmps(record);
    nb_part_path(deploy, dpart, sizeof dpart);
    nb_part_path(record, rpart, sizeof rpart);
    bool checked = false;
    if ((e = nb_read_qdq(model, stripped, q, st)) ||
        !(checked = !(e = nb_check_layers(stripped, q->l, q->n, st))) ||
        (e = nb_write_deploy(stripped, dpart, q->l, q->n, st)) ||
        (e = nb_write_record(rpart, q->l, q->n, st))) {
        size_t sl = strlen(stripped);
        if (!checked && !strncmp(st->msg, stripped, sl)) { /* name the user's file */
            char msg[sizeof st->msg];
            snprintf(msg, sizeof msg, "%s%s", model, st->msg + sl);
            snprintf(st->msg, sizeof st->msg, "%s", msg);
        }
    } else {
        sigset_t hold, old_mask;
        sigemptyset(&hold);
        sigaddset(&hold, SIGINT), sigaddset(&hold, SIGTERM), sigaddset(&hold, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &hold, &old_mask);
        if (rename(dpart, deploy) || rename(rpart, record)) {
            e = nb_fail(st, NB_ERR_IO, "--save_path %s: %s", save, strerror(errno));
            remove(deploy);
        }
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    }
    remove(stripped);
    remove(dpart);
    remove(rpart);
    return e;
}
