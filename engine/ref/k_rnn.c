/* nanobench: reference kernels of recurrent operators (ONNX Operators.md, opset 11-18):
 * RNN, GRU, LSTM (direction forward/reverse/bidirectional, layout 0/1, activations with
 * activation_alpha/beta, clip, input_forget, peepholes, sequence_lens, initial_h/c, and
 * every output optional).
 *
 * Scheme: one cblas_sgemm projects every time step of X for every direction at once
 * (X*W^T with the biases preloaded in C); then each step does one sgemm for the
 * recurrence Ht-1*R^T over the whole batch (GRU with linear_before_reset = 0 needs a second
 * one for (rt (.) Ht-1)*Rh^T, which cannot be known before rt), followed by the gate
 * arithmetic per batch row. FLOAT16 tensors are computed in float32 and rounded once.
 *
 * sequence_lens (as ONNX Runtime): batch row b runs steps 0..len_b-1 (reverse direction:
 * time len_b-1 down to 0); Y is zero at t >= len_b; Y_h/Y_c hold the state after the last
 * step run, and are zero when len_b = 0. clip (as ONNX Runtime) bounds the input of the
 * f and g activations of every gate; it is not applied to Ct before h.
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

typedef enum { RK_RNN, RK_GRU, RK_LSTM } rnn_kind;

static const int kind_gates[] = {1, 3, 4};
static const int kind_acts[] = {1, 2, 3};

/* ---------------------------------------------------------------- activations */

typedef enum {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKYRELU,
    ACT_THRESHOLDEDRELU,
    ACT_SCALEDTANH,
    ACT_HARDSIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS
} act_id;

typedef struct act {
    act_id id;
    float alpha, beta;
} act;

/* Operators.md (LSTM) activation list; defaults are those of the ONNX operators of the
 * same name (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1, ThresholdedRelu 1) and, for the
 * deprecated Affine and ScaledTanh, 1/0 and 1/1. */
static const struct {
    const char *name; /* lower case */
    act_id id;
    bool use_alpha, use_beta;
    float alpha, beta;
} act_table[] = {
    {"relu", ACT_RELU, false, false, 0.0f, 0.0f},
    {"tanh", ACT_TANH, false, false, 0.0f, 0.0f},
    {"sigmoid", ACT_SIGMOID, false, false, 0.0f, 0.0f},
    {"affine", ACT_AFFINE, true, true, 1.0f, 0.0f},
    {"leakyrelu", ACT_LEAKYRELU, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ACT_THRESHOLDEDRELU, true, false, 1.0f, 0.0f},
    {"scaledtanh", ACT_SCALEDTANH, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ACT_HARDSIGMOID, true, true, 0.2f, 0.5f},
    {"elu", ACT_ELU, true, false, 1.0f, 0.0f},
    {"softsign", ACT_SOFTSIGN, false, false, 0.0f, 0.0f},
    {"softplus", ACT_SOFTPLUS, false, false, 0.0f, 0.0f},
};

/* Index in act_table of an activation name (any case), or -1. */
static int act_lookup(const char *s)
{
    for (int i = 0; i < (int)(sizeof act_table / sizeof act_table[0]); i++) {
        const char *a = act_table[i].name, *b = s;
        while (*a && *b && *a == (*b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b)) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return i;
    }
    return -1;
}

/* Applies a in place to x[0..n) (formulas of Operators.md, LSTM). */
static void act_apply(const act *a, float *x, int64_t n)
{
    const float al = a->alpha, be = a->beta;
    switch (a->id) {
    case ACT_RELU:
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case ACT_TANH:
        for (int64_t i = 0; i < n; i++)
            x[i] = tanhf(x[i]);
        break;
    case ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++)
            x[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case ACT_AFFINE:
        for (int64_t i = 0; i < n; i++)
            x[i] = al * x[i] + be;
        break;
    case ACT_LEAKYRELU:
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] >= 0.0f ? x[i] : al * x[i];
        break;
    case ACT_THRESHOLDEDRELU:
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] >= al ? x[i] : 0.0f;
        break;
    case ACT_SCALEDTANH:
        for (int64_t i = 0; i < n; i++)
            x[i] = al * tanhf(be * x[i]);
        break;
    case ACT_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) {
            float v = al * x[i] + be;
            x[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        break;
    case ACT_ELU:
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] >= 0.0f ? x[i] : al * expm1f(x[i]);
        break;
    case ACT_SOFTSIGN:
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] / (1.0f + fabsf(x[i]));
        break;
    case ACT_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) /* log(1 + e^x) without overflow */
            x[i] = x[i] > 0.0f ? x[i] + log1pf(expf(-x[i])) : log1pf(expf(x[i]));
        break;
    }
}

/* ---------------------------------------------------------------- configuration */

typedef struct rnn_cfg {
    rnn_kind kind;
    int64_t G, ndir, seq, batch, in, H, GH;
    int layout;
    bool reverse;      /* single direction "reverse" */
    bool has_clip;
    float clip;
    bool input_forget; /* LSTM */
    bool lbr;          /* GRU linear_before_reset */
    act acts[2][3];    /* per direction: f, g, h */
} rnn_cfg;

/* activations / activation_alpha / activation_beta: names listed for each direction (or
 * once for both), alpha and beta consumed in list order by the functions that use them. */
static nb_err parse_acts(nb_kctx *k, rnn_cfg *cfg)
{
    static const char *const defaults[3][3] = {
        {"tanh", NULL, NULL}, {"sigmoid", "tanh", NULL}, {"sigmoid", "tanh", "tanh"}};
    int per = kind_acts[cfg->kind];
    const nb_attr *a = nb_attr_find(k->node, "activations");
    int listed = a && a->type == NB_ATTR_STRINGS ? a->n : 0;
    if (listed && listed != per && listed != per * cfg->ndir)
        return nb_fail(k->st, NB_ERR_ATTR, "activations has %d names, expected %d", listed,
                       per * (int)cfg->ndir);
    int nal = 0, nbe = 0;
    const float *alphas = nb_attr_floats(k->node, "activation_alpha", &nal);
    const float *betas = nb_attr_floats(k->node, "activation_beta", &nbe);
    act parsed[6];
    int np = listed ? listed : per;
    for (int i = 0; i < np; i++) {
        const char *name = listed ? a->strings[i] : defaults[cfg->kind][i];
        int t = act_lookup(name);
        if (t < 0)
            return nb_fail(k->st, NB_ERR_ATTR, "unknown activation '%s'", name);
        parsed[i].id = act_table[t].id;
        parsed[i].alpha = act_table[t].alpha;
        parsed[i].beta = act_table[t].beta;
        if (listed && act_table[t].use_alpha && alphas && nal > 0) {
            parsed[i].alpha = *alphas++;
            nal--;
        }
        if (listed && act_table[t].use_beta && betas && nbe > 0) {
            parsed[i].beta = *betas++;
            nbe--;
        }
    }
    for (int d = 0; d < cfg->ndir; d++)
        for (int j = 0; j < per; j++)
            cfg->acts[d][j] = parsed[np == per ? j : d * per + j];
    return NB_OK;
}

/* ---------------------------------------------------------------- float32 views */

/* float32 elements of t (NULL for NULL): its data, or a converted copy in *tmp. */
static nb_err f32_in(const nb_tensor *t, const float **out, float **tmp, nb_status *st)
{
    *tmp = NULL;
    *out = NULL;
    if (!t)
        return NB_OK;
    if (t->dtype == NB_FLOAT) {
        *out = t->data;
        return NB_OK;
    }
    float *b = malloc(sizeof(float) * (size_t)(t->numel ? t->numel : 1));
    if (!b)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < t->numel; i++)
        b[i] = (float)nb_tensor_get_f64(t, i);
    *tmp = b;
    *out = b;
    return NB_OK;
}

/* float32 destination for output t (NULL for NULL): its data, or a buffer in *tmp that
 * f32_out_done converts. */
static nb_err f32_out(nb_tensor *t, float **out, float **tmp, nb_status *st)
{
    *tmp = NULL;
    *out = NULL;
    if (!t)
        return NB_OK;
    if (t->dtype == NB_FLOAT) {
        *out = t->data;
        return NB_OK;
    }
    float *b = malloc(sizeof(float) * (size_t)(t->numel ? t->numel : 1));
    if (!b)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    *tmp = b;
    *out = b;
    return NB_OK;
}

/* Rounds the float32 buffer of a FLOAT16 output into it. */
static void f32_out_done(nb_tensor *t, const float *tmp)
{
    if (t && tmp && t->dtype == NB_FLOAT16)
        for (int64_t i = 0; i < t->numel; i++)
            ((uint16_t *)t->data)[i] = nb_float_to_half(tmp[i]);
}

/* a x b floats, checked against overflow and NB_MAX_TENSOR_BYTES. */
static nb_err alloc_f32(int64_t a, int64_t b, float **p, nb_status *st)
{
    int64_t n;
    if (!nb_mul_ok(a, b, &n) || n > NB_MAX_TENSOR_BYTES / (int64_t)sizeof(float))
        return nb_fail(st, NB_ERR_SHAPE, "work buffer of %lld x %lld floats is too large",
                       (long long)a, (long long)b);
    *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!*p)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

/* C[M,N] = A[M,K] * B[N,K]^T + beta*C, row-major with leading dims; empty sizes are fine. */
static void gemm_nt(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        if (beta == 0.0f)
            for (int64_t i = 0; i < M; i++)
                memset(C + i * ldc, 0, sizeof(float) * (size_t)N);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)M, (blasint)N, (blasint)K,
                1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}

/* clip attribute: bounds an activation input to [-clip, clip] (Operators.md). */
static inline void clip_vec(const rnn_cfg *cfg, float *x, int64_t n)
{
    if (!cfg->has_clip)
        return;
    const float c = cfg->clip;
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] < -c ? -c : x[i] > c ? c : x[i];
}

/* Optional input i / output i, NULL when omitted. */
static const nb_tensor *opt_in(const nb_kctx *k, int i) { return i < k->n_in ? k->in[i] : NULL; }
static nb_tensor *opt_out(const nb_kctx *k, int i) { return i < k->n_out ? k->out[i] : NULL; }

/* ---------------------------------------------------------------- the recurrence */

typedef struct rnn_io {
    const float *x, *w, *r, *b, *p, *h0, *c0; /* x in [seq, batch, in] order */
    const int64_t *lens;
    float *y, *yh, *yc;
    void (*cube_h)(void *user, float *h, int64_t n); /* nb_kctx.rnn_cube_h */
    void *cube_h_user;
    float *hq; /* [batch, H]: the copy cube_h changes */
} rnn_io;

/* Offset of (batch b, direction d) in initial_h/c and Y_h/c. */
static inline int64_t state_off(const rnn_cfg *cfg, int64_t d, int64_t b)
{
    return (cfg->layout ? b * cfg->ndir + d : d * cfg->batch + b) * cfg->H;
}

/* Offset of (time t, direction d, batch b) in Y. */
static inline int64_t y_off(const rnn_cfg *cfg, int64_t t, int64_t d, int64_t b)
{
    return (cfg->layout ? (b * cfg->seq + t) * cfg->ndir + d : (t * cfg->ndir + d) * cfg->batch + b) *
           cfg->H;
}

/* One LSTM row (Operators.md, LSTM): g holds the projected gates i,o,f,c (Xt*W^T + Wb + Rb),
 * r the recurrence Ht-1*R^T; c is Ct-1 in, Ct out; h receives Ht. tmp: H floats. */
static void lstm_row(const rnn_cfg *cfg, const act *acts, float *g, const float *r,
                     const float *p, float *c, float *h, float *tmp)
{
    const int64_t H = cfg->H;
    float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
    const float *ri = r, *ro = r + H, *rf = r + 2 * H, *rc = r + 3 * H;
    /* it = f(Xt*Wi^T + Ht-1*Ri^T + Pi (.) Ct-1 + Wbi + Rbi) */
    for (int64_t j = 0; j < H; j++)
        gi[j] += ri[j] + (p ? p[j] * c[j] : 0.0f);
    clip_vec(cfg, gi, H);
    act_apply(&acts[0], gi, H);
    /* ft = f(... + Pf (.) Ct-1 ...), or 1 - it with input_forget */
    if (cfg->input_forget) {
        for (int64_t j = 0; j < H; j++)
            gf[j] = 1.0f - gi[j];
    } else {
        for (int64_t j = 0; j < H; j++)
            gf[j] += rf[j] + (p ? p[2 * H + j] * c[j] : 0.0f);
        clip_vec(cfg, gf, H);
        act_apply(&acts[0], gf, H);
    }
    /* ct = g(Xt*Wc^T + Ht-1*Rc^T + Wbc + Rbc) */
    for (int64_t j = 0; j < H; j++)
        gc[j] += rc[j];
    clip_vec(cfg, gc, H);
    act_apply(&acts[1], gc, H);
    /* Ct = ft (.) Ct-1 + it (.) ct */
    for (int64_t j = 0; j < H; j++)
        c[j] = gf[j] * c[j] + gi[j] * gc[j];
    /* ot = f(... + Po (.) Ct ...) */
    for (int64_t j = 0; j < H; j++)
        go[j] += ro[j] + (p ? p[H + j] * c[j] : 0.0f);
    clip_vec(cfg, go, H);
    act_apply(&acts[0], go, H);
    /* Ht = ot (.) h(Ct) */
    memcpy(tmp, c, sizeof(float) * (size_t)H);
    act_apply(&acts[2], tmp, H);
    for (int64_t j = 0; j < H; j++)
        h[j] = go[j] * tmp[j];
}

/* Runs direction d. gx: [seq*batch, ndir*GH] projections (biases included); work buffers:
 * gh [batch, GH], h and c [batch, H], rh [batch, H], tmp [H]. */
static void run_direction(const rnn_cfg *cfg, const rnn_io *io, int64_t d, float *gx,
                          float *gh, float *h, float *c, float *rh, float *tmp)
{
    const int64_t H = cfg->H, GH = cfg->GH, B = cfg->batch, ldx = cfg->ndir * GH;
    const bool rev = cfg->reverse || d == 1;
    const float *R = io->r + d * GH * H;
    const float *bias = io->b ? io->b + d * 2 * GH : NULL;
    const float *P = io->p ? io->p + d * 3 * H : NULL;
    const act *acts = cfg->acts[d];
    int64_t maxlen = 0;
    for (int64_t b = 0; b < B; b++) {
        if (io->lens[b] > maxlen)
            maxlen = io->lens[b];
        float *hb = h + b * H, *cb = c + b * H;
        if (io->h0)
            memcpy(hb, io->h0 + state_off(cfg, d, b), sizeof(float) * (size_t)H);
        else
            memset(hb, 0, sizeof(float) * (size_t)H);
        if (cfg->kind == RK_LSTM) {
            if (io->c0)
                memcpy(cb, io->c0 + state_off(cfg, d, b), sizeof(float) * (size_t)H);
            else
                memset(cb, 0, sizeof(float) * (size_t)H);
        }
    }
    const bool gru_split = cfg->kind == RK_GRU && !cfg->lbr;
    for (int64_t s = 0; s < maxlen; s++) {
        /* Ht-1*R^T for every batch row (GRU without linear_before_reset: z and r only) */
        const float *hr = h;
        if (io->cube_h) {
            memcpy(io->hq, h, sizeof(float) * (size_t)(B * H));
            io->cube_h(io->cube_h_user, io->hq, B * H);
            hr = io->hq;
        }
        gemm_nt(B, gru_split ? 2 * H : GH, H, hr, H, R, H, 0.0f, gh, GH);
        if (gru_split) {
            /* zt, rt; then (rt (.) Ht-1)*Rh^T in one more sgemm */
            for (int64_t b = 0; b < B; b++) {
                float *rhb = rh + b * H;
                if (s >= io->lens[b]) {
                    memset(rhb, 0, sizeof(float) * (size_t)H);
                    continue;
                }
                int64_t t = rev ? io->lens[b] - 1 - s : s;
                float *g = gx + (t * B + b) * ldx + d * GH;
                const float *r = gh + b * GH;
                for (int64_t j = 0; j < 2 * H; j++)
                    g[j] += r[j];
                clip_vec(cfg, g, 2 * H);
                act_apply(&acts[0], g, 2 * H);
                for (int64_t j = 0; j < H; j++)
                    rhb[j] = g[H + j] * h[b * H + j];
            }
            if (io->cube_h)
                io->cube_h(io->cube_h_user, rh, B * H);
            gemm_nt(B, H, H, rh, H, R + 2 * H * H, H, 0.0f, gh + 2 * H, GH);
        }
        for (int64_t b = 0; b < B; b++) {
            if (s >= io->lens[b])
                continue;
            int64_t t = rev ? io->lens[b] - 1 - s : s;
            float *g = gx + (t * B + b) * ldx + d * GH;
            const float *r = gh + b * GH;
            float *hb = h + b * H;
            switch (cfg->kind) {
            case RK_RNN:
                /* Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi) */
                for (int64_t j = 0; j < H; j++)
                    g[j] += r[j];
                clip_vec(cfg, g, H);
                act_apply(&acts[0], g, H);
                memcpy(hb, g, sizeof(float) * (size_t)H);
                break;
            case RK_GRU: {
                float *gz = g, *gr = g + H, *gh_ = g + 2 * H;
                if (!gru_split) {
                    /* linear_before_reset: ht = g(Xt*Wh^T + rt (.) (Ht-1*Rh^T + Rbh) + Wbh) */
                    for (int64_t j = 0; j < 2 * H; j++)
                        g[j] += r[j];
                    clip_vec(cfg, g, 2 * H);
                    act_apply(&acts[0], g, 2 * H);
                    const float *rbh = bias ? bias + GH + 2 * H : NULL;
                    for (int64_t j = 0; j < H; j++)
                        gh_[j] += gr[j] * (r[2 * H + j] + (rbh ? rbh[j] : 0.0f));
                } else {
                    /* ht = g(Xt*Wh^T + (rt (.) Ht-1)*Rh^T + Rbh + Wbh) */
                    for (int64_t j = 0; j < H; j++)
                        gh_[j] += r[2 * H + j];
                }
                clip_vec(cfg, gh_, H);
                act_apply(&acts[1], gh_, H);
                /* Ht = (1 - zt) (.) ht + zt (.) Ht-1 */
                for (int64_t j = 0; j < H; j++)
                    hb[j] = (1.0f - gz[j]) * gh_[j] + gz[j] * hb[j];
                break;
            }
            case RK_LSTM:
                lstm_row(cfg, acts, g, r, P, c + b * H, hb, tmp);
                break;
            }
            if (io->y)
                memcpy(io->y + y_off(cfg, t, d, b), hb, sizeof(float) * (size_t)H);
        }
    }
    for (int64_t b = 0; b < B; b++) {
        if (io->y)
            for (int64_t t = io->lens[b]; t < cfg->seq; t++)
                memset(io->y + y_off(cfg, t, d, b), 0, sizeof(float) * (size_t)H);
        bool empty = io->lens[b] == 0;
        if (io->yh) {
            float *dst = io->yh + state_off(cfg, d, b);
            if (empty)
                memset(dst, 0, sizeof(float) * (size_t)H);
            else
                memcpy(dst, h + b * H, sizeof(float) * (size_t)H);
        }
        if (io->yc) {
            float *dst = io->yc + state_off(cfg, d, b);
            if (empty)
                memset(dst, 0, sizeof(float) * (size_t)H);
            else
                memcpy(dst, c + b * H, sizeof(float) * (size_t)H);
        }
    }
}

/* t (when given) must have a x b x c x d elements: guards every index below. */
static nb_err check_numel(const nb_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d,
                          const char *what, nb_status *st)
{
    int64_t n = 1;
    if (!t)
        return NB_OK;
    if (!nb_mul_ok(a, b, &n) || !nb_mul_ok(n, c, &n) || !nb_mul_ok(n, d, &n) || t->numel != n)
        return nb_fail(st, NB_ERR_SHAPE, "%s has %lld elements, expected %lld x %lld x %lld x %lld",
                       what, (long long)t->numel, (long long)a, (long long)b, (long long)c,
                       (long long)d);
    return NB_OK;
}

/* RNN, GRU, LSTM (Operators.md, opset 14; see the rules at each cell above). */
static nb_err run_recurrent(nb_kctx *k, rnn_kind kind)
{
    const nb_node *n = k->node;
    const nb_tensor *X = k->in[0], *W = k->in[1], *R = k->in[2];
    const nb_tensor *Bt = opt_in(k, 3), *SL = opt_in(k, 4), *H0 = opt_in(k, 5);
    const nb_tensor *C0 = kind == RK_LSTM ? opt_in(k, 6) : NULL;
    const nb_tensor *Pt = kind == RK_LSTM ? opt_in(k, 7) : NULL;
    nb_tensor *Y = opt_out(k, 0), *YH = opt_out(k, 1);
    nb_tensor *YC = kind == RK_LSTM ? opt_out(k, 2) : NULL;
    nb_status *st = k->st;
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return nb_fail(st, NB_ERR_SHAPE, "X, W and R must have rank 3");

    rnn_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.kind = kind;
    cfg.G = kind_gates[kind];
    cfg.layout = nb_attr_int(n, "layout", 0) != 0;
    cfg.seq = X->dims[cfg.layout ? 1 : 0];
    cfg.batch = X->dims[cfg.layout ? 0 : 1];
    cfg.in = X->dims[2];
    cfg.H = R->dims[2];
    cfg.ndir = W->dims[0];
    if (!nb_mul_ok(cfg.G, cfg.H, &cfg.GH))
        return nb_fail(st, NB_ERR_SHAPE, "hidden_size %lld is too large", (long long)cfg.H);
    const char *dir = nb_attr_str(n, "direction", "forward");
    cfg.reverse = !strcmp(dir, "reverse");
    if (cfg.ndir != (strcmp(dir, "bidirectional") ? 1 : 2))
        return nb_fail(st, NB_ERR_SHAPE, "W dim 0 is %lld for direction %s",
                       (long long)cfg.ndir, dir);
    const nb_attr *ca = nb_attr_find(n, "clip");
    if (ca) {
        cfg.has_clip = true;
        cfg.clip = nb_attr_float(n, "clip", 0.0f);
    }
    cfg.input_forget = kind == RK_LSTM && nb_attr_int(n, "input_forget", 0) != 0;
    cfg.lbr = kind == RK_GRU && nb_attr_int(n, "linear_before_reset", 0) != 0;
    nb_err e = parse_acts(k, &cfg);
    if (e)
        return e;

    /* sizes of everything indexed below */
    const int64_t S = cfg.seq, B = cfg.batch, D = cfg.ndir, H = cfg.H, GH = cfg.GH;
    if ((e = check_numel(W, D, GH, cfg.in, 1, "W", st)) ||
        (e = check_numel(R, D, GH, H, 1, "R", st)) ||
        (e = check_numel(Bt, D, 2, GH, 1, "B", st)) ||
        (e = check_numel(SL, B, 1, 1, 1, "sequence_lens", st)) ||
        (e = check_numel(H0, D, B, H, 1, "initial_h", st)) ||
        (e = check_numel(C0, D, B, H, 1, "initial_c", st)) ||
        (e = check_numel(Pt, D, 3, H, 1, "P", st)) ||
        (e = check_numel(Y, S, D, B, H, "Y", st)) ||
        (e = check_numel(YH, D, B, H, 1, "Y_h", st)) ||
        (e = check_numel(YC, D, B, H, 1, "Y_c", st)))
        return e;
    int64_t SB, DGH;
    if (!nb_mul_ok(S, B, &SB) || !nb_mul_ok(D, GH, &DGH) || SB > INT_MAX || DGH > INT_MAX ||
        cfg.in > INT_MAX || H > INT_MAX)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "matrix dims exceed the BLAS int range");

    if (H == 0 || B == 0)
        return NB_OK; /* every output has a zero dim */

    rnn_io io;
    memset(&io, 0, sizeof io);
    float *tx = NULL, *tw = NULL, *tr = NULL, *tb = NULL, *tp = NULL, *th = NULL, *tc = NULL;
    float *ty = NULL, *tyh = NULL, *tyc = NULL, *xs = NULL;
    float *gx = NULL, *gh = NULL, *h = NULL, *c = NULL, *rh = NULL, *tmp = NULL;
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)(B ? B : 1));
    if (!lens)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < B; b++) {
        lens[b] = SL ? nb_tensor_get_i64(SL, b) : S;
        if (lens[b] < 0 || lens[b] > S) {
            e = nb_fail(st, NB_ERR_DATA, "sequence_lens[%lld] = %lld is outside 0..%lld",
                        (long long)b, (long long)lens[b], (long long)S);
            goto out;
        }
    }
    io.lens = lens;
    if ((e = f32_in(X, &io.x, &tx, st)) || (e = f32_in(W, &io.w, &tw, st)) ||
        (e = f32_in(R, &io.r, &tr, st)) || (e = f32_in(Bt, &io.b, &tb, st)) ||
        (e = f32_in(Pt, &io.p, &tp, st)) || (e = f32_in(H0, &io.h0, &th, st)) ||
        (e = f32_in(C0, &io.c0, &tc, st)) || (e = f32_out(Y, &io.y, &ty, st)) ||
        (e = f32_out(YH, &io.yh, &tyh, st)) || (e = f32_out(YC, &io.yc, &tyc, st)))
        goto out;
    if ((e = alloc_f32(SB, DGH, &gx, st)) || (e = alloc_f32(B, GH, &gh, st)) ||
        (e = alloc_f32(B, H, &h, st)) || (e = alloc_f32(B, H, &c, st)) ||
        (e = alloc_f32(B, H, &rh, st)) || (e = alloc_f32(1, H, &tmp, st)))
        goto out;
    if (k->rnn_cube_h) {
        if ((e = alloc_f32(B, H, &io.hq, st)))
            goto out;
        io.cube_h = k->rnn_cube_h;
        io.cube_h_user = k->rnn_cube_h_user;
    }
    const float *xsrc = io.x;
    if (cfg.layout) {
        /* [batch, seq, in] -> [seq, batch, in] */
        if ((e = alloc_f32(SB, cfg.in, &xs, st)))
            goto out;
        for (int64_t t = 0; t < S; t++)
            for (int64_t b = 0; b < B; b++)
                memcpy(xs + (t * B + b) * cfg.in, io.x + (b * S + t) * cfg.in,
                       sizeof(float) * (size_t)cfg.in);
        xsrc = xs;
    }
    /* gx = X*W^T + (Wb + Rb) for all steps and directions; with linear_before_reset the GRU
       h gate takes Wbh only (Rbh goes inside rt (.) (...)). */
    if (io.b && SB > 0) {
        float *row = gx; /* the first row holds the bias, then is copied to the others */
        for (int64_t d = 0; d < D; d++) {
            const float *bd = io.b + d * 2 * GH;
            for (int64_t j = 0; j < GH; j++)
                row[d * GH + j] = bd[j] + ((cfg.lbr && j >= 2 * H) ? 0.0f : bd[GH + j]);
        }
        for (int64_t i = 1; i < SB; i++)
            memcpy(gx + i * DGH, row, sizeof(float) * (size_t)DGH);
    }
    gemm_nt(SB, DGH, cfg.in, xsrc, cfg.in, io.w, cfg.in, io.b ? 1.0f : 0.0f, gx, DGH);
    for (int64_t d = 0; d < D; d++)
        run_direction(&cfg, &io, d, gx, gh, h, c, rh, tmp);
    f32_out_done(Y, ty);
    f32_out_done(YH, tyh);
    f32_out_done(YC, tyc);
out:
    free(lens);
    free(tx), free(tw), free(tr), free(tb), free(tp), free(th), free(tc);
    free(ty), free(tyh), free(tyc), free(xs);
    free(gx), free(gh), free(h), free(c), free(rh), free(tmp), free(io.hq);
    return e;
}

/* RNN (Operators.md, opset 14): Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi), f = Tanh. */
static nb_err k_RNN(nb_kctx *k) { return run_recurrent(k, RK_RNN); }

/* GRU (Operators.md, opset 14): zt = f(Xt*(Wz^T) + Ht-1*(Rz^T) + Wbz + Rbz), rt likewise,
 * ht = g(Xt*(Wh^T) + (rt (.) Ht-1)*(Rh^T) + Rbh + Wbh), or with linear_before_reset
 * ht = g(Xt*(Wh^T) + (rt (.) (Ht-1*(Rh^T) + Rbh)) + Wbh); Ht = (1 - zt) (.) ht + zt (.) Ht-1. */
static nb_err k_GRU(nb_kctx *k) { return run_recurrent(k, RK_GRU); }

/* LSTM (Operators.md, opset 14): it = f(Xt*W^T + Ht-1*R^T + Pi.Ct-1 + Wb + Rb) (gates
 * i,o,f,c), ft likewise with Pf (or 1 - it with input_forget), ct = g(...),
 * Ct = ft.Ct-1 + it.ct, ot = f(... + Po.Ct), Ht = ot.h(Ct). */
static nb_err k_LSTM(nb_kctx *k) { return run_recurrent(k, RK_LSTM); }

const nb_kernel_entry nb_kernels_rnn[] = {
    {"GRU", k_GRU, 0},
    {"LSTM", k_LSTM, 0},
    {"RNN", k_RNN, 0},
    {NULL, NULL, 0},
};
