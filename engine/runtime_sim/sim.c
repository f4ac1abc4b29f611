/* nanobench simulated NPU: the loader's checks, the task plans, the cycle model and the
 * execution loop (include/nb/sim.h). An exeom is untrusted input: after nb_exeom_parse
 * (sections, CRCs, indices, placements), every tensor's bytes must equal its format's size
 * for its dims, and every task's operands must be what its kernel reads and writes, so that
 * the kernels (kernels.c) index only inside their tensors. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* ---- types and layouts ---- */

int sim_bits(int dtype)
{
    switch (dtype) {
    case DT_FLOAT: case DT_I32: return 32;
    case DT_F16: case DT_I16: return 16;
    case DT_I8: case DT_U8: case DT_BOOL: return 8;
    case DT_U64: return 64;
    case DT_I4: return 4;
    default: return 0;
    }
}

/* C0 of the cube formats: a 32-byte row (GE's GetCubeSizeByDataType): 16 for 2- and 4-byte
   types, 32 for bytes, 64 for int4 */
int sim_c0(int dtype)
{
    switch (sim_bits(dtype)) {
    case 4: return 64;
    case 8: return 32;
    case 16: case 32: return 16;
    default: return 0;
    }
}

const char *nb_sim_dtype_name(int d)
{
    switch (d) {
    case DT_FLOAT: return "FLOAT";
    case DT_F16: return "FLOAT16";
    case DT_I8: return "INT8";
    case DT_I32: return "INT32";
    case DT_U8: return "UINT8";
    case DT_I16: return "INT16";
    case DT_U64: return "UINT64";
    case DT_BOOL: return "BOOL";
    case DT_I4: return "INT4";
    default: return "?";
    }
}

const char *nb_sim_format_name(int f)
{
    switch (f) {
    case FMT_NCHW: return "NCHW";
    case FMT_NHWC: return "NHWC";
    case FMT_ND: return "ND";
    case FMT_NC1HWC0: return "NC1HWC0";
    case FMT_FZ: return "FRACTAL_Z";
    case FMT_NZ: return "FRACTAL_NZ";
    default: return "?";
    }
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t nb_sim_numel(const nb_exeom_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i]; /* dims are checked >= 0 and the product bounded by the loader */
    return n;
}

/* Physical elements of t's layout (padding included), -1 on a bad combination/overflow. */
static int64_t phys_elems(const nb_exeom_tensor *t)
{
    int r = t->rank, c0 = sim_c0(t->dtype);
    const int32_t *d = t->dims;
    for (int i = 0; i < r; i++)
        if (d[i] < 0)
            return -1;
    /* every product below is of at most 6 int32 factors padded by < 64: bounded in double
       first, then computed exactly */
    double bound = 1;
    for (int i = 0; i < r; i++)
        bound *= (double)d[i] + 64;
    if (bound * 64 > 9e15)
        return -1;
    switch (t->format) {
    case FMT_NCHW: case FMT_NHWC: case FMT_ND: {
        int64_t n = 1;
        for (int i = 0; i < r; i++)
            n *= d[i];
        return n;
    }
    case FMT_NC1HWC0: {
        if ((r != 3 && r != 4) || !c0)
            return -1;
        int64_t h = r == 4 ? d[2] : 1, w = d[r - 1];
        return (int64_t)d[0] * cdiv(d[1], c0) * h * w * c0;
    }
    case FMT_FZ: {
        if ((r != 3 && r != 4) || !c0)
            return -1;
        int64_t kh = r == 4 ? d[2] : 1, kw = d[r - 1];
        return cdiv(d[1], c0) * kh * kw * cdiv(d[0], 16) * 16 * c0;
    }
    case FMT_NZ: {
        if (!c0)
            return -1;
        int64_t h = r >= 2 ? d[r - 2] : 1, w = r >= 1 ? d[r - 1] : 1, b = 1;
        for (int i = 0; i + 2 < r; i++)
            b *= d[i];
        return b * cdiv(w, c0) * cdiv(h, 16) * 16 * c0;
    }
    default:
        return -1;
    }
}

int64_t nb_sim_tensor_bytes(const nb_exeom_tensor *t)
{
    int bits = sim_bits(t->dtype);
    int64_t e = bits ? phys_elems(t) : -1;
    return e < 0 ? -1 : (e * bits + 7) / 8;
}

int64_t sim_phys(const nb_exeom_tensor *t, const int64_t *idx)
{
    int r = t->rank, c0 = sim_c0(t->dtype);
    const int32_t *d = t->dims;
    switch (t->format) {
    case FMT_NC1HWC0: {
        int64_t h = r == 4 ? idx[2] : 0, H = r == 4 ? d[2] : 1, W = d[r - 1], w = idx[r - 1];
        int64_t c = idx[1], C1 = cdiv(d[1], c0);
        return (((idx[0] * C1 + c / c0) * H + h) * W + w) * c0 + c % c0;
    }
    case FMT_NZ: {
        int64_t H = r >= 2 ? d[r - 2] : 1, W = r >= 1 ? d[r - 1] : 1;
        int64_t h = r >= 2 ? idx[r - 2] : 0, w = r >= 1 ? idx[r - 1] : 0, b = 0;
        for (int i = 0; i + 2 < r; i++)
            b = b * d[i] + idx[i];
        int64_t W1 = cdiv(W, c0), H1 = cdiv(H, 16);
        return (((b * W1 + w / c0) * H1 + h / 16) * 16 + h % 16) * c0 + w % c0;
    }
    case FMT_FZ: {
        int64_t kh = r == 4 ? idx[2] : 0, KH = r == 4 ? d[2] : 1, KW = d[r - 1];
        int64_t kw = idx[r - 1], co = idx[0], ci = idx[1], N1 = cdiv(d[0], 16);
        return ((((ci / c0) * KH + kh) * KW + kw) * N1 + co / 16) * 16 * c0 + (co % 16) * c0 +
               ci % c0;
    }
    default: {
        int64_t e = 0;
        for (int i = 0; i < r; i++)
            e = e * d[i] + idx[i];
        return e;
    }
    }
}

double sim_load(int dtype, const uint8_t *p, int64_t e)
{
    switch (dtype) {
    case DT_F16: return F16V(rd16(p + 2 * e));
    case DT_FLOAT: return rdf(p + 4 * e);
    case DT_I8: return (int8_t)p[e];
    case DT_U8: return p[e];
    case DT_BOOL: return p[e] != 0;
    case DT_I16: return (int16_t)rd16(p + 2 * e);
    case DT_I32: return rd32(p + 4 * e);
    case DT_U64: { uint64_t v; memcpy(&v, p + 8 * e, 8); return (double)v; }
    case DT_I4: {
        int v = (p[e / 2] >> (4 * (e & 1))) & 15;
        return v >= 8 ? v - 16 : v;
    }
    default: return 0;
    }
}

static double sat(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    return v < lo ? lo : v > hi ? hi : v;
}

void sim_store(int dtype, uint8_t *p, int64_t e, double v)
{
    switch (dtype) {
    case DT_F16: wr16(p + 2 * e, sim_f16(v)); break;
    case DT_FLOAT: { float f = (float)v; memcpy(p + 4 * e, &f, 4); break; }
    case DT_I8: p[e] = (uint8_t)(int8_t)sat(trunc(v), -128, 127); break;
    case DT_U8: p[e] = (uint8_t)sat(trunc(v), 0, 255); break;
    case DT_BOOL: p[e] = v != 0 && !isnan(v); break;
    case DT_I16: wr16(p + 2 * e, (uint16_t)(int16_t)sat(trunc(v), -32768, 32767)); break;
    case DT_I32: wr32(p + 4 * e, (int32_t)sat(trunc(v), -2147483648.0, 2147483647.0)); break;
    case DT_U64: { uint64_t u = (uint64_t)sat(trunc(v), 0, 1.8e19); memcpy(p + 8 * e, &u, 8); break; }
    case DT_I4: {
        int q = (int)sat(trunc(v), -8, 7) & 15, sh = 4 * (int)(e & 1);
        p[e / 2] = (uint8_t)((p[e / 2] & ~(15 << sh)) | (q << sh));
        break;
    }
    default: break;
    }
}

double nb_sim_get(const nb_exeom_tensor *t, const uint8_t *data, int64_t i)
{
    nb_sim_numerics_init(); /* the fp16 decode table, for callers that loaded no model */
    int64_t idx[6];
    for (int d = t->rank - 1; d >= 0; d--) {
        idx[d] = t->dims[d] ? i % t->dims[d] : 0;
        i = t->dims[d] ? i / t->dims[d] : 0;
    }
    return sim_load(t->dtype, data, sim_phys(t, idx));
}

void nb_sim_get_all(const nb_exeom_tensor *t, const uint8_t *data, double *out)
{
    nb_sim_numerics_init();
    int64_t n = nb_sim_numel(t);
    if (t->format != FMT_NC1HWC0 && t->format != FMT_NZ && t->format != FMT_FZ) {
        if (t->dtype == DT_F16)
            for (int64_t i = 0; i < n; i++)
                out[i] = F16V(rd16(data + 2 * i));
        else if (t->dtype == DT_FLOAT)
            for (int64_t i = 0; i < n; i++)
                out[i] = rdf(data + 4 * i);
        else
            for (int64_t i = 0; i < n; i++)
                out[i] = sim_load(t->dtype, data, i);
        return;
    }
    int c0 = sim_c0(t->dtype);
    if (t->format == FMT_NC1HWC0 && (t->rank == 3 || t->rank == 4)) {
        /* channel by channel: a plane of one channel is a stride-C0 walk */
        int64_t N = t->dims[0], C = t->dims[1], C1 = cdiv(C, c0);
        int64_t HW = (t->rank == 4 ? t->dims[2] : 1) * t->dims[t->rank - 1];
        for (int64_t b = 0; b < N; b++)
            for (int64_t c = 0; c < C; c++) {
                int64_t base = (b * C1 + c / c0) * HW * c0 + c % c0;
                double *o = out + (b * C + c) * HW;
                if (t->dtype == DT_F16)
                    for (int64_t p = 0; p < HW; p++)
                        o[p] = F16V(rd16(data + 2 * (base + p * c0)));
                else
                    for (int64_t p = 0; p < HW; p++)
                        o[p] = sim_load(t->dtype, data, base + p * c0);
            }
        return;
    }
    if (t->format == FMT_NZ && t->rank >= 1) {
        int r = t->rank;
        int64_t H = r >= 2 ? t->dims[r - 2] : 1, W = t->dims[r - 1], B = 1;
        for (int d = 0; d + 2 < r; d++)
            B *= t->dims[d];
        int64_t W1 = cdiv(W, c0), H1 = cdiv(H, 16);
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++) {
                double *o = out + (b * H + h) * W;
                int64_t rowbase = (b * W1 * H1 + h / 16) * 16 * c0 + (h % 16) * c0;
                for (int64_t w = 0; w < W; w++)
                    o[w] = sim_load(t->dtype, data, rowbase + (w / c0) * H1 * 16 * c0 + w % c0);
            }
        return;
    }
    /* an odometer over the logical index: the physical offset from sim_phys per element,
       without the divisions of nb_sim_get */
    int64_t idx[6] = {0};
    for (int64_t i = 0; i < n; i++) {
        out[i] = sim_load(t->dtype, data, sim_phys(t, idx));
        for (int d = t->rank - 1; d >= 0; d--) {
            if (++idx[d] < t->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

void nb_sim_set(const nb_exeom_tensor *t, uint8_t *data, int64_t i, double v)
{
    int64_t idx[6];
    for (int d = t->rank - 1; d >= 0; d--) {
        idx[d] = t->dims[d] ? i % t->dims[d] : 0;
        i = t->dims[d] ? i / t->dims[d] : 0;
    }
    sim_store(t->dtype, data, sim_phys(t, idx), v);
}

uint8_t *sim_ptr(nb_sim_model *m, int t)
{
    const nb_exeom_tensor *d = &m->x.t[t];
    switch (d->role) {
    case ROLE_W: return (uint8_t *)m->x.weights + d->place;
    case ROLE_ACT: return m->arena ? m->arena + d->place : NULL;
    default: return m->bound ? (uint8_t *)m->bound[t] : NULL;
    }
}

uint8_t *nb_sim_tensor_data_mut(nb_sim_model *m, int t)
{
    if (t < 0 || (uint32_t)t >= m->x.n_tensors || m->x.t[t].role == ROLE_W)
        return NULL;
    return sim_ptr(m, t);
}

const uint8_t *nb_sim_tensor_data(const nb_sim_model *m, int t)
{
    if (t < 0 || (uint32_t)t >= m->x.n_tensors)
        return NULL;
    return sim_ptr((nb_sim_model *)m, t);
}

/* ---- checks of each task against its kernel ---- */

typedef struct vctx {
    nb_sim_model *m;
    int k;
    nb_status *st;
} vctx;

#define BAD(...) nb_fail(v->st, NB_ERR_DATA, __VA_ARGS__)

static const nb_exeom_tensor *T(const vctx *v, int t) { return &v->m->x.t[t]; }

static const char *kname(int kid) { return nb_exeom_kernel_name(kid); }

/* operand i of the task must be present with dtype (-1 any) and format (-1 any) */
static nb_err need(const vctx *v, int t, const char *what, int dtype, int format)
{
    const sim_task *k = &v->m->k[v->k];
    if (t < 0)
        return BAD("task %d (%s): its %s is missing", v->k, kname(k->kid), what);
    const nb_exeom_tensor *d = T(v, t);
    if (dtype >= 0 && d->dtype != dtype)
        return BAD("task %d (%s): its %s (tensor %d) is %s, not %s", v->k, kname(k->kid), what,
                   t, nb_sim_dtype_name(d->dtype), nb_sim_dtype_name(dtype));
    if (format >= 0 && d->format != format)
        return BAD("task %d (%s): its %s (tensor %d) is %s, not %s", v->k, kname(k->kid), what,
                   t, nb_sim_format_name(d->format), nb_sim_format_name(format));
    return NB_OK;
}

static bool same_dims(const nb_exeom_tensor *a, const nb_exeom_tensor *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* input a broadcasts (numpy rules) to out's dims */
static bool broadcasts(const nb_exeom_tensor *a, const nb_exeom_tensor *out)
{
    if (a->rank > out->rank)
        return false;
    for (int i = 0; i < a->rank; i++) {
        int32_t da = a->dims[a->rank - 1 - i], dout = out->dims[out->rank - 1 - i];
        if (da != dout && da != 1)
            return false;
    }
    return true;
}

static bool is_float(int dt) { return dt == DT_F16 || dt == DT_FLOAT; }

/* The task before k that last wrote tensor t (-1: none): the loader checks the tasks in
   order and records each one's outputs after its check, so writer[] holds exactly that. */
static int producer(const nb_sim_model *m, int k, int t)
{
    (void)k;
    return m->writer[t];
}

/* The zero point of an int8 operand: its AscendQuant's offset, 0 when none wrote it. */
static int zero_point(const nb_sim_model *m, int k, int t)
{
    int p = producer(m, k, t);
    return p >= 0 && m->k[p].kid == K_QUANT ? (int)m->k[p].f[1] : 0;
}

static int conv_out(int64_t in, int k, int s, int d, int p0, int p1, int ceil_mode, int64_t *out)
{
    int64_t span = (int64_t)d * (k - 1) + 1, num = in + p0 + p1 - span;
    if (num < 0)
        return -1;
    int64_t o = (ceil_mode ? cdiv(num, s) : num / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0)
        o--; /* the last window may not start in the end padding (ONNX) */
    *out = o;
    return 0;
}

static nb_err check_spatial(const vctx *v, sim_task *k, const nb_exeom_tensor *x,
                            const nb_exeom_tensor *y, bool transpose)
{
    int r = x->rank;
    if (k->kh < 1 || k->kw < 1 || k->sh < 1 || k->sw < 1 || k->dh < 1 || k->dw < 1)
        return BAD("task %d (%s): a kernel, stride or dilation of 0", v->k, kname(k->kid));
    if (r == 3 && (k->kh != 1 || k->pt || k->pb))
        return BAD("task %d (%s): a 1-D op with a kernel height or H padding", v->k,
                   kname(k->kid));
    int64_t ih = r == 4 ? x->dims[2] : 1, iw = x->dims[r - 1];
    int64_t oh = r == 4 ? y->dims[2] : 1, ow = y->dims[r - 1], eh = 0, ew = 0;
    if (transpose) {
        eh = (ih - 1) * k->sh - k->pt - k->pb + (int64_t)k->dh * (k->kh - 1) + 1;
        ew = (iw - 1) * k->sw - k->pl - k->pr + (int64_t)k->dw * (k->kw - 1) + 1;
        if (oh < eh || oh >= eh + k->sh || ow < ew || ow >= ew + k->sw || oh < 1 || ow < 1)
            return BAD("task %d (ConvTranspose): output %lldx%lld for input %lldx%lld", v->k,
                       (long long)oh, (long long)ow, (long long)ih, (long long)iw);
        return NB_OK;
    }
    if (conv_out(ih, k->kh, k->sh, k->dh, k->pt, k->pb, k->ceil_mode, &eh) ||
        conv_out(iw, k->kw, k->sw, k->dw, k->pl, k->pr, k->ceil_mode, &ew) || eh != oh ||
        ew != ow)
        return BAD("task %d (%s): output %lldx%lld, the window gives %lldx%lld", v->k,
                   kname(k->kid), (long long)oh, (long long)ow, (long long)eh, (long long)ew);
    int64_t span_h = (int64_t)k->dh * (k->kh - 1) + 1, span_w = (int64_t)k->dw * (k->kw - 1) + 1;
    if (k->pt >= span_h + ih || k->pl >= span_w + iw || k->pb >= span_h + ih || k->pr >= span_w + iw)
        return BAD("task %d (%s): padding larger than the window and input", v->k, kname(k->kid));
    /* a pooling window wholly in the padding has no value (ONNX: pads below the kernel) */
    if (k->kid == K_MAXPOOL && (k->pt >= span_h || k->pb >= span_h || k->pl >= span_w || k->pr >= span_w))
        return BAD("task %d (MaxPool): a pad of the kernel's size or more", v->k);
    return NB_OK;
}

static uint16_t p16(const uint8_t *p, int i) { return (uint16_t)(p[2 * i] | p[2 * i + 1] << 8); }

static void decode_window(sim_task *k, const uint8_t *p)
{
    k->kh = p16(p, 0), k->kw = p16(p, 1), k->sh = p16(p, 2), k->sw = p16(p, 3);
    k->pt = p16(p, 4), k->pl = p16(p, 5), k->pb = p16(p, 6), k->pr = p16(p, 7);
    k->dh = p16(p, 8), k->dw = p16(p, 9), k->group = p16(p, 10), k->ceil_mode = p[22] != 0;
}

static nb_err check_cube_params(const vctx *v, sim_task *k, int64_t channels)
{
    nb_err e;
    if ((e = need(v, k->in[2], "int32 bias", DT_I32, -1)) ||
        (e = need(v, k->in[3], "deq_scale", DT_U64, -1)))
        return e;
    if (nb_sim_numel(T(v, k->in[2])) < channels || nb_sim_numel(T(v, k->in[3])) < channels)
        return BAD("task %d (%s): bias or deq_scale shorter than its %lld channels", v->k,
                   kname(k->kid), (long long)channels);
    if (T(v, k->in[2])->format == FMT_NZ || T(v, k->in[2])->format == FMT_FZ ||
        T(v, k->in[2])->format == FMT_NC1HWC0 || T(v, k->in[3])->format != FMT_ND ||
        T(v, k->in[2])->rank != 1 || T(v, k->in[3])->rank != 1)
        return BAD("task %d (%s): bias and deq_scale must be 1-D ND", v->k, kname(k->kid));
    return NB_OK;
}

static nb_err check_conv(const vctx *v, sim_task *k, bool transpose)
{
    nb_err e;
    if (k->n_in != 4 || k->n_out != 1)
        return BAD("task %d (%s): %d inputs and %d outputs (x, W, bias, deq_scale -> y)",
                   v->k, kname(k->kid), k->n_in, k->n_out);
    if ((e = need(v, k->in[0], "input x", -1, FMT_NC1HWC0)) ||
        (e = need(v, k->in[1], "weights", -1, FMT_FZ)) ||
        (e = need(v, k->out[0], "accumulator", DT_I32, FMT_NC1HWC0)))
        return e;
    const nb_exeom_tensor *x = T(v, k->in[0]), *w = T(v, k->in[1]), *y = T(v, k->out[0]);
    if (x->dtype != DT_I8 && x->dtype != DT_I16)
        return BAD("task %d (%s): input of %s (the cube takes s8 or s16)", v->k,
                   kname(k->kid), nb_sim_dtype_name(x->dtype));
    if (w->dtype != DT_I8 && w->dtype != DT_I4)
        return BAD("task %d (%s): weights of %s (the cube takes s8 or s4)", v->k,
                   kname(k->kid), nb_sim_dtype_name(w->dtype));
    if (w->role != ROLE_W || w->rank != x->rank || y->rank != x->rank)
        return BAD("task %d (%s): weights not constant, or ranks differ", v->k, kname(k->kid));
    decode_window(k, v->m->x.k[v->k].params);
    int r = x->rank;
    int64_t g = k->group;
    if (k->kh != (r == 4 ? w->dims[2] : 1) || k->kw != w->dims[r - 1])
        return BAD("task %d (%s): kernel %dx%d, weights %s", v->k, kname(k->kid), k->kh, k->kw,
                   "of another size");
    if (g < 1 || y->dims[0] != x->dims[0] || x->dims[0] < 1)
        return BAD("task %d (%s): group %lld or batch mismatch", v->k, kname(k->kid),
                   (long long)g);
    if (!transpose && (w->dims[1] * g != x->dims[1] || w->dims[0] != y->dims[1] ||
                       y->dims[1] % g != 0))
        return BAD("task %d (Conv): channels: x %d, W [%d, %d], group %lld, y %d", v->k,
                   x->dims[1], w->dims[0], w->dims[1], (long long)g, y->dims[1]);
    if (transpose && (w->dims[0] != x->dims[1] || w->dims[1] * g != y->dims[1] ||
                      x->dims[1] % g != 0))
        return BAD("task %d (ConvTranspose): channels: x %d, W [%d, %d], group %lld, y %d",
                   v->k, x->dims[1], w->dims[0], w->dims[1], (long long)g, y->dims[1]);
    if ((e = check_spatial(v, k, x, y, transpose)) || (e = check_cube_params(v, k, y->dims[1])))
        return e;
    k->x_off = zero_point(v->m, v->k, k->in[0]);
    /* the exact fp32 GEMM path: int8 x int8, one group, every sum below 2^24 */
    if (!transpose && x->dtype == DT_I8 && w->dtype == DT_I8 && g == 1) {
        /* rows (kh, kw, c) over the real input channels only */
        int64_t C = x->dims[1], KH = k->kh, KW = k->kw;
        int64_t Kg = KH * KW * C, Co = y->dims[1], N1 = (Co + 15) / 16;
        if (Kg > 0 && Kg * 128 * 128 < (1 << 24) && Co > 0) {
            k->wf = malloc(sizeof(float) * (size_t)(Kg * Co));
            if (!k->wf)
                return nb_fail(v->st, NB_ERR_NOMEM, "[NDRV] malloc fail");
            const int8_t *wb = (const int8_t *)v->m->x.weights + w->place;
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++)
                    for (int64_t c = 0; c < C; c++) {
                        int64_t t = ((c / 32) * KH + kh) * KW + kw;
                        float *row = k->wf + ((kh * KW + kw) * C + c) * Co;
                        for (int64_t co = 0; co < Co; co++)
                            row[co] = wb[((t * N1 + co / 16) * 16 + co % 16) * 32 + c % 32];
                    }
            k->lanes = (int)C;
        }
    }
    return NB_OK;
}

static nb_err check_matmul(const vctx *v, sim_task *k)
{
    nb_err e;
    if (k->n_in != 4 || k->n_out != 1)
        return BAD("task %d (%s): %d inputs and %d outputs (x, W, bias, deq_scale -> y)",
                   v->k, kname(k->kid), k->n_in, k->n_out);
    if ((e = need(v, k->in[0], "input x", -1, FMT_NZ)) ||
        (e = need(v, k->in[1], "weights", -1, FMT_NZ)) ||
        (e = need(v, k->out[0], "accumulator", DT_I32, -1)))
        return e;
    const nb_exeom_tensor *x = T(v, k->in[0]), *w = T(v, k->in[1]), *y = T(v, k->out[0]);
    if (x->dtype != DT_I8 && x->dtype != DT_I16)
        return BAD("task %d (%s): input of %s (the cube takes s8 or s16)", v->k,
                   kname(k->kid), nb_sim_dtype_name(x->dtype));
    if (y->format != FMT_NZ && y->format != FMT_ND)
        return BAD("task %d (%s): accumulator in %s", v->k, kname(k->kid),
                   nb_sim_format_name(y->format));
    k->trans_a = k->kid == K_GEMM && v->m->x.k[v->k].params[0];
    if (x->rank < 1 || (k->trans_a && x->rank != 2))
        return BAD("task %d (%s): input of rank %d", v->k, kname(k->kid), x->rank);
    int64_t K = k->trans_a ? x->dims[0] : x->dims[x->rank - 1];
    int64_t M = x->rank >= 2 ? (k->trans_a ? x->dims[1] : x->dims[x->rank - 2]) : 1;
    int64_t batch = 1;
    for (int i = 0; i + 2 < x->rank; i++)
        batch *= x->dims[i];
    int64_t N;
    if (w->role == ROLE_W) { /* N x K */
        if ((w->dtype != DT_I8 && w->dtype != DT_I4) || w->rank != 2 || w->dims[1] != K)
            return BAD("task %d (%s): weights %s [%d, %d] for K = %lld", v->k, kname(k->kid),
                       nb_sim_dtype_name(w->dtype), w->dims[0], w->rank > 1 ? w->dims[1] : 0,
                       (long long)K);
        N = w->dims[0];
    } else { /* a run-time B [..., K, N] (attention's K^T and V): its batch dims x's, or
                none (shared by the batch), numpy.matmul's rule */
        if (w->dtype != DT_I8 || w->rank < 2 || w->dims[w->rank - 2] != K)
            return BAD("task %d (%s): run-time B must be int8 [..., K, N] with K = %lld", v->k,
                       kname(k->kid), (long long)K);
        N = w->dims[w->rank - 1];
        k->b_batch = 1;
        for (int i = 0; i + 2 < w->rank; i++)
            k->b_batch *= w->dims[i];
        /* B's batch dims x's, leading 1s aside (x [4, 16, 8] with B [1, 4, 8, 16]) */
        int xa = 0, wa = 0;
        while (xa + 2 < x->rank && x->dims[xa] == 1)
            xa++;
        while (wa + 2 < w->rank && w->dims[wa] == 1)
            wa++;
        bool same = x->rank - xa == w->rank - wa;
        for (int d = 0; same && xa + d + 2 < x->rank; d++)
            same = x->dims[xa + d] == w->dims[wa + d];
        if (k->b_batch != 1 && !same)
            return BAD("task %d (%s): run-time B's batch dims (rank %d, %lld matrices) are not "
                       "x's (rank %d, %lld matrices)", v->k, kname(k->kid), w->rank,
                       (long long)k->b_batch, x->rank, (long long)batch);
        k->b_off = zero_point(v->m, v->k, k->in[1]);
    }
    /* y: x's dims with K replaced by N, or without N when B was a 1-D [K] (N = 1) */
    int64_t n_y = nb_sim_numel(y);
    bool last_n = y->rank >= 1 && y->dims[y->rank - 1] == N;
    if (n_y != batch * M * N || (!last_n && N != 1) || y->dims[0] < 0)
        return BAD("task %d (%s): output of %lld elements for %lld x %lld x %lld", v->k,
                   kname(k->kid), (long long)n_y, (long long)batch, (long long)M, (long long)N);
    if ((e = check_cube_params(v, k, N)))
        return e;
    k->M = M, k->N = N, k->K = K, k->batch = batch;
    k->x_off = zero_point(v->m, v->k, k->in[0]);
    return NB_OK;
}

static nb_err check_rnn(const vctx *v, sim_task *k)
{
    nb_err e;
    bool lstm = k->kid == K_LSTM;
    int G = lstm ? 4 : 3;
    const uint8_t *p = v->m->x.k[v->k].params;
    k->hidden = p16(p, 0), k->reverse = p[2] != 0, k->lbr = p[3] != 0;
    k->step = p16(p, 2), k->seq = p16(p, 3);
    if ((e = need(v, k->in[0], "input x", DT_I8, FMT_NZ)) ||
        (e = need(v, k->in[1], "W", DT_I8, FMT_NZ)) || (e = need(v, k->in[2], "R", DT_I8, FMT_NZ)) ||
        (e = need(v, k->in[3], "bias", DT_I32, FMT_ND)) ||
        (e = need(v, k->in[4], "deq_scale", DT_U64, FMT_ND)) ||
        (e = need(v, k->out[0], "state h", DT_F16, FMT_ND)))
        return e;
    const nb_exeom_tensor *x = T(v, k->in[0]), *w = T(v, k->in[1]), *r = T(v, k->in[2]);
    int64_t H = k->hidden;
    if (x->rank != 3 || w->rank != 3 || r->rank != 3 || H < 1 || w->dims[0] != 1 ||
        r->dims[0] != 1 || w->dims[1] != G * H || r->dims[1] != G * H || r->dims[2] != H ||
        w->dims[2] != x->dims[2] || k->seq != x->dims[0] || k->step >= k->seq ||
        w->role != ROLE_W || r->role != ROLE_W)
        return BAD("task %d (%s): x, W, R, hidden %lld, step %d of %d do not agree", v->k,
                   kname(k->kid), (long long)H, k->step, k->seq);
    int64_t B = x->dims[1];
    if (nb_sim_numel(T(v, k->in[3])) < 2 * G * H || nb_sim_numel(T(v, k->in[4])) < 2 * G * H)
        return BAD("task %d (%s): bias or deq_scale shorter than 2 x %lld rows", v->k,
                   kname(k->kid), (long long)(G * H));
    const nb_exeom_tensor *h0 = T(v, k->out[0]);
    if (h0->rank != 3 || h0->dims[0] != 1 || h0->dims[1] != B || h0->dims[2] != H)
        return BAD("task %d (%s): state h not [1, %lld, %lld]", v->k, kname(k->kid),
                   (long long)B, (long long)H);
    int states[3] = {k->in[5], k->in[6], lstm ? k->out[1] : -1};
    for (int i = 0; i < 3; i++) {
        if (states[i] < 0)
            continue;
        const nb_exeom_tensor *s = T(v, states[i]);
        if (!same_dims(s, h0) || s->dtype != (i == 0 ? DT_I8 : DT_F16) ||
            s->format != (i == 0 ? FMT_NZ : FMT_ND))
            return BAD("task %d (%s): a state operand (tensor %d) is not [1, %lld, %lld] %s",
                       v->k, kname(k->kid), states[i], (long long)B, (long long)H,
                       i == 0 ? "int8 FRACTAL_NZ" : "fp16 ND");
    }
    if (lstm && (e = need(v, k->out[1], "cell state c", DT_F16, FMT_ND)))
        return e;
    if (k->in[7] >= 0 && (!lstm || T(v, k->in[7])->dtype != DT_F16 ||
                          T(v, k->in[7])->format != FMT_ND || nb_sim_numel(T(v, k->in[7])) < 3 * H))
        return BAD("task %d (%s): peepholes P not fp16 [3 x %lld]", v->k, kname(k->kid),
                   (long long)H);
    int yi = k->out[2];
    if (yi >= 0) {
        const nb_exeom_tensor *y = T(v, yi);
        if (y->dtype != DT_F16 || y->format != FMT_ND || y->rank != 4 || y->dims[0] != k->seq ||
            y->dims[1] != 1 || y->dims[2] != B || y->dims[3] != H)
            return BAD("task %d (%s): Y not fp16 [%d, 1, %lld, %lld]", v->k, kname(k->kid),
                       k->seq, (long long)B, (long long)H);
    }
    /* the state's quantization, for a GRU's reset product (r . h) */
    int q = k->in[5] >= 0 ? producer(v->m, v->k, k->in[5]) : -1;
    k->h_scale = q >= 0 && v->m->k[q].kid == K_QUANT ? v->m->k[q].f[0] : 0;
    k->h_offset = q >= 0 && v->m->k[q].kid == K_QUANT ? v->m->k[q].f[1] : 0;
    return NB_OK;
}

static bool elementwise(int kid)
{
    return (kid >= K_ADD && kid <= K_SQRT) || kid == K_GREATER || kid == K_EQUAL ||
           kid == K_OR || kid == K_AND || kid == K_WHERE || kid == K_PRELU || kid == K_ELU ||
           kid == K_ROUND || kid == K_IDENTITY;
}

static int arity(int kid)
{
    switch (kid) {
    case K_ADD: case K_SUB: case K_MUL: case K_DIV: case K_POW: case K_GREATER: case K_EQUAL:
    case K_OR: case K_AND: case K_PRELU: return 2;
    case K_WHERE: return 3;
    case K_MAX: case K_MIN: return -1; /* 1 or more */
    case K_CLIP: return -2;            /* 1 to 3 (min / max come as parameters) */
    default: return 1;
    }
}

/* If: a condition and two branches of n_out outputs each, the branches' tasks before it */
static nb_err check_if(const vctx *v, sim_task *k, const uint8_t *p)
{
    int nout = p[1];
    if (p[0] != 2 || p[2] > 1 || nout < 1 || k->n_out != nout || k->n_in != 1 + 2 * nout ||
        k->in[0] < 0 || nb_sim_numel(T(v, k->in[0])) < 1)
        return BAD("task %d (If): a condition and 2 branches of %d outputs each, %d in and "
                   "%d out", v->k, nout, k->n_in, k->n_out);
    for (int o = 0; o < nout; o++) {
        if (k->out[o] < 0)
            return BAD("task %d (If): output %d is missing", v->k, o);
        const nb_exeom_tensor *y = T(v, k->out[o]);
        for (int b = 0; b < 2; b++) {
            int t = k->in[1 + b * nout + o];
            if (t < 0 || T(v, t)->dtype != y->dtype ||
                nb_sim_numel(T(v, t)) != nb_sim_numel(y))
                return BAD("task %d (If): branch %d's output %d is not the output's type and "
                           "size", v->k, b, o);
        }
    }
    k->if_then = p[2];
    for (int b = 0; b < 2; b++) {
        int f = p[4 + 4 * b] | p[5 + 4 * b] << 8, c = p[6 + 4 * b] | p[7 + 4 * b] << 8;
        if (c && (f + c > v->k || f < 0))
            return BAD("task %d (If): branch %d's tasks %d..%d are not before it", v->k, b,
                       f, f + c - 1);
        k->if_first[b] = f, k->if_count[b] = c;
    }
    return NB_OK;
}

/* AscendDequant: int32 -> fp16 of a cube task's accumulator, its deq_scale per channel */
static nb_err check_dequant(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                            const nb_exeom_tensor *y)
{
    k->act = p[0];
    memcpy(&k->f[0], p + 4, 4);
    if (k->n_in != 1 || !same_dims(x, y) || x->dtype != DT_I32 || y->dtype != DT_F16 ||
        k->act > 2 || !isfinite(k->f[0]))
        return BAD("task %d (AscendDequant): int32 -> fp16 of the same shape", v->k);
    int c = producer(v->m, v->k, k->in[0]);
    int ck = c >= 0 ? v->m->k[c].kid : 0;
    if (ck != K_CONV && ck != K_CONVT && ck != K_MATMUL && ck != K_GEMM)
        return BAD("task %d (AscendDequant): its accumulator is not a cube task's", v->k);
    k->deq = v->m->k[c].in[3];
    k->chan_axis = ck == K_CONV || ck == K_CONVT ? 1 : x->rank - 1;
    if (x->rank < 1 || nb_sim_numel(T(v, k->deq)) < (k->chan_axis < x->rank ? x->dims[k->chan_axis] : 1))
        return BAD("task %d (AscendDequant): deq_scale shorter than the channels", v->k);
    return NB_OK;
}

/* Transpose: perm (params) a permutation of the dims, the output its reorder */
static nb_err check_transpose(const vctx *v, sim_task *k, const uint8_t *p,
                              const nb_exeom_tensor *x, const nb_exeom_tensor *y)
{
    int r = p[0];
    if (k->n_in != 1 || r != x->rank || r != y->rank || x->dtype != y->dtype)
        return BAD("task %d (Transpose): perm of rank %d for rank %d", v->k, r, x->rank);
    int seen = 0;
    for (int i = 0; i < r; i++) {
        k->perm[i] = p[1 + i];
        if (k->perm[i] >= r || (seen & (1 << k->perm[i])) ||
            y->dims[i] != x->dims[k->perm[i]])
            return BAD("task %d (Transpose): perm is not a permutation of its dims", v->k);
        seen |= 1 << k->perm[i];
    }
    return NB_OK;
}

/* Concat: the inputs agree off the axis and sum to the output along it */
static nb_err check_concat(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *y)
{
    int ax = (int8_t)p[0];
    if (ax < 0)
        ax += y->rank;
    if (ax < 0 || ax >= y->rank)
        return BAD("task %d (Concat): axis %d", v->k, (int8_t)p[0]);
    int64_t sum = 0;
    for (int i = 0; i < k->n_in; i++) {
        const nb_exeom_tensor *a = T(v, k->in[i]);
        if (a->rank != y->rank || a->dtype != y->dtype)
            return BAD("task %d (Concat): input %d of another rank or type", v->k, i);
        for (int d = 0; d < y->rank; d++)
            if (d != ax && a->dims[d] != y->dims[d])
                return BAD("task %d (Concat): input %d differs off the axis", v->k, i);
        sum += a->dims[ax];
    }
    if (sum != y->dims[ax])
        return BAD("task %d (Concat): %lld along the axis, output %d", v->k,
                   (long long)sum, y->dims[ax]);
    k->axis = ax;
    return NB_OK;
}

/* ReduceMean/Max/Min/Sum/L2: the output dims follow the axes mask and keepdims */
static nb_err check_reduce(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                           const nb_exeom_tensor *y)
{
    int kid = k->kid;
    k->mask = p[0], k->keepdims = p[1] != 0;
    if (k->n_in != 1 || (k->mask >> x->rank) || y->dtype != x->dtype)
        return BAD("task %d (%s): axes beyond rank %d", v->k, kname(kid), x->rank);
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        bool red = k->mask >> d & 1;
        if (red && !k->keepdims)
            continue;
        if (r >= y->rank || y->dims[r] != (red ? 1 : x->dims[d]))
            return BAD("task %d (%s): output dims do not follow the axes", v->k, kname(kid));
        r++;
    }
    if (r != y->rank)
        return BAD("task %d (%s): output rank %d, the axes give %d", v->k, kname(kid),
                   y->rank, r);
    return NB_OK;
}

/* ArgMax: fp16 [.., L, ..] -> int32 indices, the axis kept as 1 or dropped */
static nb_err check_argmax(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                           const nb_exeom_tensor *y)
{
    k->axis = p[0], k->keepdims = p[1] != 0, k->last = p[2] != 0;
    if (k->n_in != 1 || x->dtype != DT_F16 || y->dtype != DT_I32 || k->axis >= x->rank ||
        x->dims[k->axis] < 1)
        return BAD("task %d (ArgMax): fp16 in, int32 out, axis %d of rank %d", v->k, p[0],
                   x->rank);
    if (p[1] > 1 || p[2] > 1)
        return BAD("task %d (ArgMax): keepdims %d, select_last_index %d (0 or 1)", v->k,
                   p[1], p[2]);
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d == k->axis && !k->keepdims)
            continue;
        if (r >= y->rank || y->dims[r] != (d == k->axis ? 1 : x->dims[d]))
            return BAD("task %d (ArgMax): output dims do not follow the axis", v->k);
        r++;
    }
    if (r != y->rank)
        return BAD("task %d (ArgMax): output rank %d, the axis gives %d", v->k, y->rank, r);
    return NB_OK;
}

/* BatchNormalization / InstanceNormalization: fp16 [N, C, ...], one value per channel */
static nb_err check_norm(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                         const nb_exeom_tensor *y)
{
    int kid = k->kid;
    memcpy(&k->f[0], p, 4);
    int n = kid == K_BN ? 5 : 3;
    if (k->n_in != n || !same_dims(x, y) || x->rank < 2 || x->dtype != DT_F16 ||
        y->dtype != DT_F16 || !(k->f[0] >= 0))
        return BAD("task %d (%s): %d fp16 inputs, [N, C, ...]", v->k, kname(kid), n);
    for (int i = 1; i < n; i++)
        if (nb_sim_numel(T(v, k->in[i])) != x->dims[1] || !is_float(T(v, k->in[i])->dtype))
            return BAD("task %d (%s): input %d is not one value per channel", v->k,
                       kname(kid), i);
    return NB_OK;
}

/* Slice: up to 3 sliced axes (axis, start, step), every position inside the input */
static nb_err check_slice(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                          const nb_exeom_tensor *y)
{
    k->n_sl = p[0];
    if (k->n_in != 1 || x->rank != y->rank || x->dtype != y->dtype || k->n_sl > 3)
        return BAD("task %d (Slice): one input of the output's rank and type, up to 3 "
                   "sliced axes", v->k);
    int seen = 0;
    for (int i = 0; i < k->n_sl; i++) {
        const uint8_t *q = p + 1 + 9 * i;
        int ax = q[0];
        int32_t start = rd32(q + 1), step = rd32(q + 5);
        if (ax >= x->rank || (seen & (1 << ax)) || step == 0 || start < 0 ||
            start >= x->dims[ax] ||
            (y->dims[ax] > 0 && ((int64_t)start + (int64_t)step * (y->dims[ax] - 1) < 0 ||
                                 (int64_t)start + (int64_t)step * (y->dims[ax] - 1) >= x->dims[ax])))
            return BAD("task %d (Slice): axis %d, start %d, step %d outside its input", v->k,
                       ax, start, step);
        seen |= 1 << ax;
        k->sl_axis[i] = ax, k->sl_start[i] = start, k->sl_step[i] = step;
    }
    for (int d = 0; d < x->rank; d++)
        if (!(seen & (1 << d)) && x->dims[d] != y->dims[d])
            return BAD("task %d (Slice): dim %d differs and is not sliced", v->k, d);
    return NB_OK;
}

/* Gather: constant indices (params) or an int32 indices input, dims around the axis */
static nb_err check_gather(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                           const nb_exeom_tensor *y)
{
    k->g_axis = p[0], k->g_n = p[1];
    int ri = y->rank - x->rank + 1; /* the indices' rank */
    int64_t n_idx = 1;
    for (int d = 0; d < ri && k->g_axis + d < y->rank; d++)
        n_idx *= y->dims[k->g_axis + d];
    const nb_exeom_tensor *it = k->n_in == 2 ? T(v, k->in[1]) : NULL;
    if (it && (k->g_n != 0 || it->dtype != DT_I32 || nb_sim_numel(it) != n_idx))
        return BAD("task %d (Gather): input 1 holds %lld %s values, the output has %lld "
                   "positions along axis %d (int32 ones)", v->k,
                   (long long)nb_sim_numel(it), it->dtype == DT_I32 ? "int32" : "non-int32",
                   (long long)n_idx, k->g_axis);
    if (x->dtype != y->dtype || k->g_axis >= x->rank || ri < 0 ||
        (!it && (k->n_in != 1 || k->g_n < 1 || k->g_n > 6 || n_idx != k->g_n)))
        return BAD("task %d (Gather): axis %d of rank %d, %d %s for the output's %lld "
                   "positions along it", v->k, k->g_axis, x->rank, it ? (int)nb_sim_numel(it)
                   : k->g_n, it ? "indices in input 1" : "constant indices", (long long)n_idx);
    for (int d = 0; d < k->g_axis; d++)
        if (x->dims[d] != y->dims[d])
            return BAD("task %d (Gather): dim %d differs before the axis", v->k, d);
    for (int d = k->g_axis + 1; d < x->rank; d++)
        if (x->dims[d] != y->dims[d + ri - 1])
            return BAD("task %d (Gather): dim %d differs after the axis", v->k, d);
    for (int i = 0; i < k->g_n; i++) {
        k->g_idx[i] = rd32(p + 2 + 4 * i);
        if (k->g_idx[i] < 0 || k->g_idx[i] >= x->dims[k->g_axis])
            return BAD("task %d (Gather): index %d outside its axis", v->k, k->g_idx[i]);
    }
    return NB_OK;
}

/* Pad: begin / end per dim (params) give the output dims, mode 0..2 */
static nb_err check_pad(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                        const nb_exeom_tensor *y)
{
    k->pad_mode = p[0];
    int r = p[1];
    if (k->n_in != 1 || x->dtype != y->dtype || r != x->rank || r != y->rank || r > 6 ||
        k->pad_mode > 2)
        return BAD("task %d (Pad): one input of the output's rank and type, mode %d",
                   v->k, k->pad_mode);
    for (int d = 0; d < r; d++) {
        int16_t b, e;
        memcpy(&b, p + 2 + 2 * d, 2);
        memcpy(&e, p + 2 + 2 * (r + d), 2);
        k->pad_begin[d] = b;
        if ((int64_t)x->dims[d] + b + e != y->dims[d] ||
            (k->pad_mode == 1 && (b >= x->dims[d] || e >= x->dims[d])) ||
            (k->pad_mode != 0 && x->dims[d] == 0 && y->dims[d] > 0))
            return BAD("task %d (Pad): dim %d: %d + %d + %d is not %d", v->k, d,
                       x->dims[d], b, e, y->dims[d]);
    }
    memcpy(&k->f[0], p + 26, 4);
    return NB_OK;
}

/* an elementwise kernel: its arity, inputs broadcasting exactly to the output, its params */
static nb_err check_elementwise(const vctx *v, sim_task *k, const uint8_t *p,
                                const nb_exeom_tensor *y)
{
    int kid = k->kid;
    if (!elementwise(kid))
        return nb_fail(v->st, NB_ERR_UNSUPPORTED, "task %d: kernel %d has no simulator", v->k,
                       kid);
    int ar = arity(kid);
    if ((ar > 0 && k->n_in != ar) || (ar == -1 && k->n_in < 1) ||
        (ar == -2 && (k->n_in < 1 || k->n_in > 3)))
        return BAD("task %d (%s): %d inputs", v->k, kname(kid), k->n_in);
    for (int i = 0; i < k->n_in; i++)
        if (!broadcasts(T(v, k->in[i]), y))
            return BAD("task %d (%s): input %d does not broadcast to the output", v->k,
                       kname(kid), i);
    bool any_full = false; /* the output is the broadcast of the inputs, not larger */
    for (int d = 0; d < y->rank; d++) {
        bool hit = y->dims[d] == 1;
        for (int i = 0; i < k->n_in && !hit; i++) {
            const nb_exeom_tensor *a = T(v, k->in[i]);
            int ad = d - (y->rank - a->rank);
            hit = ad >= 0 && a->dims[ad] == y->dims[d];
        }
        if (!hit)
            return BAD("task %d (%s): output dim %d is larger than every input's", v->k,
                       kname(kid), d);
        any_full = true;
    }
    (void)any_full;
    bool bool_out = kid == K_GREATER || kid == K_EQUAL || kid == K_OR || kid == K_AND;
    if (bool_out != (y->dtype == DT_BOOL))
        return BAD("task %d (%s): output of %s", v->k, kname(kid), nb_sim_dtype_name(y->dtype));
    if (kid == K_LEAKY || kid == K_ELU)
        memcpy(&k->f[0], p, 4);
    if (kid == K_CLIP) {
        memcpy(&k->f[0], p, 4), memcpy(&k->f[1], p + 4, 4);
        if (isnan(k->f[0]) || isnan(k->f[1]))
            return BAD("task %d (Clip): NaN bound", v->k);
        /* a bound the model computes (not a weight): read from its tensor, broadcast */
        for (int i = 1; i < k->n_in && i < 3; i++)
            if (k->in[i] >= 0 && T(v, k->in[i])->role != ROLE_W)
                k->clip_rt |= 1 << (i - 1);
    }
    if (kid == K_WHERE && T(v, k->in[0])->dtype != DT_BOOL)
        return BAD("task %d (Where): condition not BOOL", v->k);
    return NB_OK;
}

/* a vector task with its operands present: each kernel's shapes, types and params */
static nb_err check_vector(const vctx *v, sim_task *k, const uint8_t *p, const nb_exeom_tensor *x,
                           const nb_exeom_tensor *y)
{
    int kid = k->kid;
    switch (kid) {
    case K_QUANT:
        memcpy(&k->f[0], p, 4), memcpy(&k->f[1], p + 4, 4);
        k->bits = p[8];
        if (k->n_in != 1 || !same_dims(x, y) || x->dtype != DT_F16 ||
            y->dtype != (k->bits == 16 ? DT_I16 : DT_I8) || (k->bits != 8 && k->bits != 16) ||
            !isfinite(k->f[0]) || !(k->f[0] > 0) || !isfinite(k->f[1]) ||
            k->f[1] != floorf(k->f[1]) || fabsf(k->f[1]) > 32768)
            return BAD("task %d (AscendQuant): fp16 -> int%d of the same shape with a finite "
                       "scale and an integer offset", v->k, k->bits);
        return NB_OK;
    case K_DEQUANT:
        return check_dequant(v, k, p, x, y);
    case K_TRANSDATA:
        if (k->n_in != 1 || !same_dims(x, y) || x->dtype != y->dtype)
            return BAD("task %d (TransData): the same shape and type in another format", v->k);
        return NB_OK;
    case K_CAST:
        if (k->n_in != 1 || !same_dims(x, y) || p[0] != y->dtype)
            return BAD("task %d (Cast): to %s, output of %s", v->k, nb_sim_dtype_name(p[0]),
                       nb_sim_dtype_name(y->dtype));
        return NB_OK;
    case K_RESHAPE: case K_SQUEEZE: case K_UNSQUEEZE: case K_FLATTEN:
        if (k->n_in != 1 || nb_sim_numel(x) != nb_sim_numel(y) || x->dtype != y->dtype)
            return BAD("task %d (%s): %lld elements in, %lld out", v->k, kname(kid),
                       (long long)nb_sim_numel(x), (long long)nb_sim_numel(y));
        return NB_OK;
    case K_TRANSPOSE:
        return check_transpose(v, k, p, x, y);
    case K_CONCAT:
        return check_concat(v, k, p, y);
    case K_MAXPOOL:
        decode_window(k, p);
        if (k->n_in != 1 || x->dtype != DT_F16 || y->dtype != DT_F16 || x->rank != y->rank ||
            (x->rank != 3 && x->rank != 4) || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
            return BAD("task %d (MaxPool): fp16 [N, C, (H,) W] in and out", v->k);
        return check_spatial(v, k, x, y, false);
    case K_GAP: case K_GMP:
        if (k->n_in != 1 || !is_float(x->dtype) || y->dtype != x->dtype || x->rank < 3 ||
            y->rank != x->rank || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] ||
            nb_sim_numel(y) != (int64_t)x->dims[0] * x->dims[1])
            return BAD("task %d (%s): [N, C, ...] -> [N, C, 1, ...]", v->k, kname(kid));
        return NB_OK;
    case K_RMEAN: case K_RMAX: case K_RMIN: case K_RSUM: case K_RL2:
        return check_reduce(v, k, p, x, y);
    case K_ARGMAX:
        return check_argmax(v, k, p, x, y);
    case K_SOFTMAX: {
        int ax = (int8_t)p[0];
        if (ax < 0)
            ax += x->rank;
        if (k->n_in != 1 || ax < 0 || ax >= x->rank || !same_dims(x, y) || x->dtype != DT_F16 ||
            y->dtype != DT_F16)
            return BAD("task %d (Softmax): axis %d of rank %d", v->k, (int8_t)p[0], x->rank);
        k->axis = ax;
        return NB_OK;
    }
    case K_BN: case K_IN:
        return check_norm(v, k, p, x, y);
    case K_SLICE:
        return check_slice(v, k, p, x, y);
    case K_GATHER:
        return check_gather(v, k, p, x, y);
    case K_TILE: /* repeats are the output's dims over the input's */
        if (k->n_in != 1 || x->dtype != y->dtype || x->rank != y->rank)
            return BAD("task %d (Tile): one input of the output's rank and type", v->k);
        for (int d = 0; d < x->rank; d++)
            if (x->dims[d] == 0 ? y->dims[d] != 0 : y->dims[d] % x->dims[d] != 0)
                return BAD("task %d (Tile): dim %d: %d is not a multiple of %d", v->k, d,
                           y->dims[d], x->dims[d]);
        return NB_OK;
    case K_S2D: { /* DCR: [N, C, H, W] -> [N, C b^2, H / b, W / b], b from the dims */
        int b = y->rank == 4 && y->dims[2] > 0 ? x->dims[2] / y->dims[2] : 0;
        if (k->n_in != 1 || x->dtype != y->dtype || x->rank != 4 || y->rank != 4 || b < 1 ||
            y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] * b * b ||
            y->dims[2] * b != x->dims[2] || y->dims[3] * b != x->dims[3])
            return BAD("task %d (SpaceToDepth): [N, C, H, W] -> [N, C b^2, H/b, W/b]", v->k);
        return NB_OK;
    }
    case K_PAD:
        return check_pad(v, k, p, x, y);
    default:
        return check_elementwise(v, k, p, y);
    }
}

/* task v->k against its kernel: outputs are activations, then the kernel's own checks */
static nb_err check_task(vctx *v)
{
    sim_task *k = &v->m->k[v->k];
    const uint8_t *p = v->m->x.k[v->k].params;
    for (int i = 0; i < k->n_out; i++)
        if (k->out[i] >= 0 && T(v, k->out[i])->role != ROLE_ACT &&
            T(v, k->out[i])->role != ROLE_OUT)
            return BAD("task %d (%s): writes tensor %d, a model input or a weight", v->k,
                       kname(k->kid), k->out[i]);
    int kid = k->kid;
    if (kid == K_CONV || kid == K_CONVT)
        return check_conv(v, k, kid == K_CONVT);
    if (kid == K_MATMUL || kid == K_GEMM)
        return check_matmul(v, k);
    if (kid == K_LSTM || kid == K_GRU)
        return check_rnn(v, k);
    if (kid == K_CPU_ONNX)
        return sim_cpu_load(v->m, v->k, v->st);
    if (kid == K_IF) /* cond, then 2 x n_out branch outputs -> n_out: the CPU's select */
        return check_if(v, k, p);
    /* vector tasks: every operand present */
    if (k->n_out < 1 || k->out[0] < 0)
        return BAD("task %d (%s): no output", v->k, kname(kid));
    for (int i = 0; i < k->n_in; i++)
        if (k->in[i] < 0)
            return BAD("task %d (%s): input %d is missing", v->k, kname(kid), i);
    for (int i = 1; i < k->n_out; i++)
        if (k->out[i] < 0)
            return BAD("task %d (%s): output %d is missing", v->k, kname(kid), i);
    if (k->n_out != 1 && kid != K_IDENTITY)
        return BAD("task %d (%s): %d outputs", v->k, kname(kid), k->n_out);
    const nb_exeom_tensor *y = T(v, k->out[0]);
    const nb_exeom_tensor *x = k->n_in ? T(v, k->in[0]) : NULL;
    if (!x)
        return BAD("task %d (%s): no input", v->k, kname(kid));
    return check_vector(v, k, p, x, y);
}

/* ---- cycle model ---- */

static const char *const cycle_keys[] = {
    "cube_ops_per_cycle_s8s8", "cube_ops_per_cycle_s16s8", "cube_ops_per_cycle_s8s4",
    "vector_fp16_lanes", "vector_table_cost", "vector_math_cost", "weight_bytes_per_cycle",
    "act_bytes_per_cycle", "task_overhead_cycles", "clock_mhz_low", "clock_mhz_high",
    "cpu_cycles_per_mac", "cpu_cycles_per_element", "cpu_cycles_per_divide",
    "cpu_cycles_per_math_function", "cpu_cycles_per_boundary_element",
    "cpu_task_overhead_cycles", "npu_cpu_switch_cycles"};

static double *cycle_field(nb_cycle_params *p, int i)
{
    double *f[] = {&p->cube_ops_s8s8, &p->cube_ops_s16s8, &p->cube_ops_s8s4, &p->vector_lanes,
                   &p->vector_table_cost, &p->vector_math_cost, &p->weight_bytes_per_cycle,
                   &p->act_bytes_per_cycle, &p->task_overhead, &p->clock_mhz[0],
                   &p->clock_mhz[1], &p->cpu_mac, &p->cpu_elem, &p->cpu_div, &p->cpu_math,
                   &p->cpu_io, &p->cpu_task_overhead, &p->switch_cycles};
    return f[i];
}

void nb_cycle_params_default(nb_cycle_params *p)
{
    /* keep equal to share/npu-cycles.conf (test_sim checks) */
    p->cube_ops_s8s8 = 250;
    p->cube_ops_s16s8 = 125;
    p->cube_ops_s8s4 = 500;
    p->vector_lanes = 16;
    p->vector_table_cost = 2;
    p->vector_math_cost = 4;
    p->weight_bytes_per_cycle = 32;
    p->act_bytes_per_cycle = 32;
    p->task_overhead = 400;
    p->clock_mhz[0] = 64;
    p->clock_mhz[1] = 200;
    p->cpu_mac = 4;
    p->cpu_elem = 4;
    p->cpu_div = 18;
    p->cpu_math = 60;
    p->cpu_io = 3;
    p->cpu_task_overhead = 200;
    p->switch_cycles = 1000;
}

const char *nb_cycle_params_default_path(void)
{
    static char path[1024];
    const char *share = getenv("NANOBENCH_SHARE");
    snprintf(path, sizeof path, "%s/npu-cycles.conf", share && *share ? share : NB_SHARE_DIR);
    return path;
}

nb_err nb_cycle_params_load(const char *path, nb_cycle_params *p, nb_status *st)
{
    nb_cycle_params_default(p);
    FILE *f = fopen(path, "r");
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: cannot open the cycle-model parameters", path);
    char line[512];
    int ln = 0;
    nb_err e = NB_OK;
    while (!e && fgets(line, sizeof line, f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char key[128];
        double val;
        char extra[2];
        if (sscanf(line, " %127[^= \t] = %lf %1s", key, &val, extra) == 2) {
            int i = 0, n = (int)(sizeof cycle_keys / sizeof cycle_keys[0]);
            while (i < n && strcmp(key, cycle_keys[i]))
                i++;
            if (i == n)
                e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: unknown key '%s'", path, ln, key);
            else if (!(val > 0) || !isfinite(val))
                e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: %s must be a positive number", path,
                            ln, key);
            else
                *cycle_field(p, i) = val;
        } else {
            char *s = line;
            while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
                s++;
            if (*s)
                e = nb_fail(st, NB_ERR_FORMAT, "%s:%d: not 'key = number'", path, ln);
        }
    }
    fclose(f);
    return e;
}

static bool table_op(int kid) { return kid == K_SIGMOID || kid == K_TANH; }
static bool math_op(int kid)
{
    return kid == K_EXP || kid == K_LOG || kid == K_POW || kid == K_DIV || kid == K_SQRT ||
           kid == K_SOFTMAX || kid == K_ELU || kid == K_IN || kid == K_RL2;
}

static void profile_task(nb_sim_model *m, int ki, const nb_cycle_params *cp)
{
    const sim_task *k = &m->k[ki];
    nb_sim_task_profile *pr = &m->prof[ki];
    memset(pr, 0, sizeof *pr);
    int unit = m->x.k[ki].unit;
    pr->unit = unit;
    /* a hand-over when the unit changes between the NPU and the CPU (task order) */
    if (ki > 0 && (unit == 2) != (m->x.k[ki - 1].unit == 2))
        pr->switch_cycles = (uint64_t)cp->switch_cycles;
    if (k->kid == K_CPU_ONNX) {
        sim_cpu_profile(m, k, cp, pr);
        pr->cycles += pr->switch_cycles;
        m->total_cycles += pr->cycles;
        m->total_macs += pr->macs;
        return;
    }
    uint64_t max_elems = 0;
    for (int i = 0; i < k->n_in + k->n_out; i++) {
        int t = i < k->n_in ? k->in[i] : k->out[i - k->n_in];
        if (t < 0)
            continue;
        const nb_exeom_tensor *d = &m->x.t[t];
        if (d->role == ROLE_W)
            pr->weight_bytes += d->bytes;
        else if (i < k->n_in)
            pr->bytes_in += d->bytes;
        else
            pr->bytes_out += d->bytes;
        int bits = sim_bits(d->dtype);
        uint64_t el = bits ? (uint64_t)d->bytes * 8 / (uint64_t)bits : 0;
        if (d->role != ROLE_W && el > max_elems)
            max_elems = el;
    }
    double compute = 0;
    double ops_pc = cp->cube_ops_s8s8;
    if (k->kid == K_CONV || k->kid == K_CONVT || k->kid == K_MATMUL || k->kid == K_GEMM ||
        k->kid == K_LSTM || k->kid == K_GRU) {
        const nb_exeom_tensor *x = &m->x.t[k->in[0]], *w = &m->x.t[k->in[1]];
        if (x->dtype == DT_I16)
            ops_pc = cp->cube_ops_s16s8;
        else if (w->dtype == DT_I4)
            ops_pc = cp->cube_ops_s8s4;
        double padded = 0, macs = 0;
        if (k->kid == K_CONV || k->kid == K_CONVT) {
            const nb_exeom_tensor *y = &m->x.t[k->out[0]];
            const nb_exeom_tensor *sp = k->kid == K_CONV ? y : x;
            double pix = 1;
            for (int d = 2; d < sp->rank; d++)
                pix *= sp->dims[d];
            double g = k->group, cin_g = w->dims[1], cout = k->kid == K_CONV ? w->dims[0] : y->dims[1];
            double taps = (double)k->kh * k->kw, c0 = sim_c0(x->dtype);
            double m_rows = x->dims[0] * pix;
            macs = m_rows * cout * cin_g * taps;
            padded = g * m_rows * (cdiv((int64_t)cin_g, (int64_t)c0) * c0 * taps) *
                     (cdiv((int64_t)(cout / g), 16) * 16.0);
        } else if (k->kid == K_MATMUL || k->kid == K_GEMM) {
            macs = (double)k->batch * k->M * k->N * k->K;
            padded = (double)k->batch * (double)k->M * cdiv(k->K, 32) * 32.0 *
                     cdiv(k->N, 16) * 16.0;
        } else {
            double B = x->dims[1], I = x->dims[2], H = k->hidden, GH = (k->kid == K_LSTM ? 4 : 3) * H;
            macs = B * GH * (I + H);
            padded = B * cdiv((int64_t)GH, 16) * 16.0 *
                     (cdiv((int64_t)I, 32) * 32.0 + cdiv((int64_t)H, 32) * 32.0);
            /* the gates on the vector unit */
            compute += ceil(B * GH / cp->vector_lanes) * (1 + cp->vector_table_cost);
        }
        pr->macs = (uint64_t)macs;
        compute += 2 * padded / ops_pc;
    } else {
        /* a mean is two simple ops per element: the multiply by 1/n, then the add */
        double cost = table_op(k->kid)  ? cp->vector_table_cost
                      : math_op(k->kid) ? cp->vector_math_cost
                      : k->kid == K_RMEAN || k->kid == K_GAP ? 2
                                                            : 1;
        compute = ceil((double)max_elems / cp->vector_lanes) * cost;
    }
    double move = (double)(pr->bytes_in + pr->bytes_out) / cp->act_bytes_per_cycle +
                  (double)pr->weight_bytes / cp->weight_bytes_per_cycle;
    pr->compute = (uint64_t)ceil(compute);
    pr->movement = (uint64_t)ceil(move);
    pr->cycles = (pr->compute > pr->movement ? pr->compute : pr->movement) +
                 (uint64_t)cp->task_overhead + pr->switch_cycles;
    m->total_cycles += pr->cycles;
    m->total_macs += pr->macs;
}

/* The tasks the MCU's CPU may skip: for each If whose branches' tasks are known, a task of a
 * branch whose outputs only that branch's tasks and the If read (no model output, nothing
 * after the If), when the condition is written before the branches begin: it runs only when
 * its branch is taken (the If reads the taken branch's outputs alone). */
static void mark_branches(nb_sim_model *m)
{
    const nb_exeom *x = &m->x;
    for (uint32_t t = 0; t < x->n_tasks; t++)
        m->k[t].skip_if = -1;
    for (uint32_t ki = 0; ki < x->n_tasks; ki++) {
        const sim_task *f = &m->k[ki];
        if (f->kid != K_IF || f->in[0] < 0)
            continue;
        int lo = f->if_count[0] && f->if_count[1]
                     ? (f->if_first[0] < f->if_first[1] ? f->if_first[0] : f->if_first[1])
                     : -1;
        /* the condition's writer: before both branches (a model input has none) */
        int cw = -1;
        for (int u = 0; u < (int)ki; u++)
            for (int o = 0; o < m->k[u].n_out; o++)
                cw = m->k[u].out[o] == f->in[0] ? u : cw;
        if (lo < 0 || cw >= lo)
            continue;
        for (int b = 0; b < 2; b++)
            for (int t = f->if_first[b]; t < f->if_first[b] + f->if_count[b]; t++) {
                sim_task *k = &m->k[t];
                bool own = true;
                for (int o = 0; o < k->n_out && own; o++) {
                    int y = k->out[o];
                    if (y < 0)
                        continue;
                    own = x->t[y].role != ROLE_OUT;
                    for (uint32_t u = 0; u < x->n_tasks && own; u++) {
                        bool inside = (int)u >= f->if_first[b] &&
                                      (int)u < f->if_first[b] + f->if_count[b];
                        if (inside || u == ki)
                            continue;
                        for (int i = 0; i < m->k[u].n_in && own; i++)
                            own = m->k[u].in[i] != y;
                    }
                }
                if (own)
                    k->skip_if = (int)ki, k->skip_br = b;
            }
    }
}

/* ---- load ---- */

void nb_sim_free(nb_sim_model *m)
{
    if (!m)
        return;
    /* before nb_exeom_free, which clears the counts */
    for (uint32_t i = 0; m->w16 && i < m->x.n_tensors; i++)
        free(m->w16[i]);
    free(m->w16);
    for (uint32_t i = 0; m->k && i < m->x.n_tasks; i++) {
        free(m->k[i].wf);
        free(m->k[i].wt);
        free(m->k[i].wpk);
        sim_cpu_free(&m->k[i]);
    }
    nb_exeom_free(&m->x);
    free(m->buf);
    free(m->k);
    free(m->prof);
    free(m->sat);
    free(m->ran);
    free(m->logz);
    free(m->writer);
    free(m->in_t);
    free(m->out_t);
    free(m->arena);
    free(m->bound);
    free(m->scratch);
    free(m->off);
    free(m->offbuf);
    free(m);
}

/* The loader's checks of the tensor descriptors: the arena and each binding within the
   simulator's limits, each tensor's bytes its layout's size, FRACTAL_Z only for weights. */
static nb_err load_check_tensors(const nb_exeom *x, nb_status *st)
{
    if (x->arena_bytes > NB_SIM_MAX_BYTES)
        return nb_fail(st, NB_ERR_DATA, "an arena of %u bytes (the simulator takes up to %u)",
                       x->arena_bytes, NB_SIM_MAX_BYTES);
    for (uint32_t i = 0; i < x->n_tensors; i++) {
        const nb_exeom_tensor *t = &x->t[i];
        int64_t want = nb_sim_tensor_bytes(t);
        if (want < 0 || want != (int64_t)t->bytes)
            return nb_fail(st, NB_ERR_DATA, "tensor %u: %u bytes for %s %s of rank %u (its "
                           "layout holds %lld)", i, t->bytes, nb_sim_dtype_name(t->dtype),
                           nb_sim_format_name(t->format), t->rank, (long long)want);
        if (t->role <= ROLE_OUT && t->bytes > NB_SIM_MAX_BYTES)
            return nb_fail(st, NB_ERR_DATA, "tensor %u: a binding of %u bytes", i, t->bytes);
        if (t->format == FMT_FZ && t->role != ROLE_W)
            return nb_fail(st, NB_ERR_DATA, "tensor %u: FRACTAL_Z holds only weights", i);
    }
    return NB_OK;
}

/* The per-task, per-tensor and per-binding tables and the arena (writer[] all -1, ran[]
   all 1); NB_ERR_NOMEM when one fails. */
static nb_err load_alloc(nb_sim_model *m, nb_status *st)
{
    const nb_exeom *x = &m->x;
    m->k = calloc((size_t)x->n_tasks + 1, sizeof *m->k);
    m->prof = calloc((size_t)x->n_tasks + 1, sizeof *m->prof);
    m->sat = calloc((size_t)x->n_tasks + 1, sizeof *m->sat);
    m->ran = malloc((size_t)x->n_tasks + 1);
    if (m->ran)
        memset(m->ran, 1, (size_t)x->n_tasks + 1);
    m->logz = calloc((size_t)x->n_tasks + 1, sizeof *m->logz);
    m->writer = malloc(sizeof *m->writer * ((size_t)x->n_tensors + 1));
    for (uint32_t i = 0; m->writer && i < x->n_tensors; i++)
        m->writer[i] = -1;
    m->in_t = calloc((size_t)x->n_inputs + 1, sizeof(int));
    m->out_t = calloc((size_t)x->n_outputs + 1, sizeof(int));
    m->bound = calloc((size_t)x->n_tensors + 1, sizeof *m->bound);
    m->arena = calloc((size_t)x->arena_bytes + 1, 1);
    if (!m->k || !m->prof || !m->sat || !m->ran || !m->logz || !m->writer || !m->in_t || !m->out_t || !m->bound || !m->arena)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail: %u bytes of arena",
                       x->arena_bytes);
    return NB_OK;
}

/* The per-dim offset tables: off[6 i + d] points at dims[d] physical offsets (sim_phys) of
   tensor i along dim d, all in offbuf; also refuses a model without outputs. */
static nb_err load_offsets(nb_sim_model *m, nb_status *st)
{
    const nb_exeom *x = &m->x;
    /* the per-dim offset tables (tensors without elements get none: nothing indexes them);
       their sum is bounded: descriptors claiming 2^28-long dims must not cost gigabytes */
    size_t total = 0;
    for (uint32_t i = 0; i < x->n_tensors; i++)
        if (nb_sim_numel(&x->t[i]) > 0)
            for (int d = 0; d < x->t[i].rank; d++)
                total += (size_t)x->t[i].dims[d];
    if (total > NB_SIM_MAX_DIMS)
        return nb_fail(st, NB_ERR_DATA, "the tensor descriptors' dims add up to %zu (the "
                       "simulator takes up to %u)", total, NB_SIM_MAX_DIMS);
    if (x->n_outputs == 0)
        return nb_fail(st, NB_ERR_DATA, "a model without outputs");
    m->off = calloc((size_t)x->n_tensors * 6 + 1, sizeof *m->off);
    m->offbuf = malloc(sizeof(int64_t) * (total + 1));
    if (!m->off || !m->offbuf)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    total = 0;
    for (uint32_t i = 0; i < x->n_tensors; i++) {
        const nb_exeom_tensor *t = &x->t[i];
        if (nb_sim_numel(t) <= 0)
            continue;
        for (int d = 0; d < t->rank; d++) {
            int64_t idx[6] = {0};
            m->off[6 * i + d] = m->offbuf + total;
            for (int64_t v = 0; v < t->dims[d]; v++) {
                idx[d] = v;
                m->offbuf[total++] = sim_phys(t, idx);
            }
        }
    }
    return NB_OK;
}

/* int8 FRACTAL_Z weights widened to int16 once (w16[i], NULL for other tensors). */
static nb_err load_w16(nb_sim_model *m, nb_status *st)
{
    const nb_exeom *x = &m->x;
    m->w16 = calloc((size_t)x->n_tensors + 1, sizeof *m->w16);
    if (!m->w16)
        return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
    for (uint32_t i = 0; i < x->n_tensors; i++) {
        const nb_exeom_tensor *t = &x->t[i];
        if (t->format != FMT_FZ || t->dtype != DT_I8)
            continue;
        m->w16[i] = malloc(sizeof(int16_t) * ((size_t)t->bytes + 1));
        if (!m->w16[i])
            return nb_fail(st, NB_ERR_NOMEM, "[NDRV] malloc fail");
        for (uint32_t j = 0; j < t->bytes; j++)
            m->w16[i][j] = (int8_t)x->weights[t->place + j];
    }
    return NB_OK;
}

/* Each task in order: its operands decoded, checked against its kernel (check_task),
   profiled, its activation inputs written by an earlier task; writer[] follows. */
static nb_err load_tasks(nb_sim_model *m, const nb_cycle_params *params, nb_status *st)
{
    const nb_exeom *x = &m->x;
    nb_err e;
    for (uint32_t i = 0; i < x->n_tasks; i++) {
        sim_task *k = &m->k[i];
        const nb_exeom_task *d = &x->k[i];
        k->kid = d->kernel;
        k->n_in = d->n_in;
        k->n_out = d->n_out;
        for (int j = 0; j < NB_EXEOM_MAX_IN; j++)
            k->in[j] = j < d->n_in && d->in[j] != NB_EXEOM_NONE ? d->in[j] : -1;
        for (int j = 0; j < NB_EXEOM_MAX_OUT; j++)
            k->out[j] = j < d->n_out && d->out[j] != NB_EXEOM_NONE ? d->out[j] : -1;
        k->deq = -1;
        vctx v = {m, (int)i, st};
        if ((e = check_task(&v)))
            return e;
        profile_task(m, (int)i, params);
        /* every activation it reads was written by an earlier task: nothing reads memory
           no one wrote */
        for (int j = 0; j < k->n_in; j++) {
            int t = k->in[j];
            if (t >= 0 && (x->t[t].role == ROLE_ACT || x->t[t].role == ROLE_OUT) &&
                m->writer[t] < 0)
                return nb_fail(st, NB_ERR_DATA, "task %u (%s) reads tensor %d before any "
                               "task writes it", i, kname(k->kid), t);
        }
        for (int j = 0; j < k->n_out; j++)
            if (k->out[j] >= 0)
                m->writer[k->out[j]] = (int)i;
    }
    return NB_OK;
}

nb_err nb_sim_load(const uint8_t *buf, size_t len, const nb_cycle_params *params,
                   nb_sim_model **out, nb_status *st)
{
    *out = NULL;
    nb_cycle_params defaults;
    if (!params) {
        nb_cycle_params_default(&defaults);
        params = &defaults;
    }
    nb_sim_numerics_init();
    nb_sim_model *m = calloc(1, sizeof *m);
    if (!m)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    m->buf = malloc(len ? len : 1);
    if (!m->buf) {
        free(m);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    memcpy(m->buf, buf, len);
    m->len = len;
    nb_err e = nb_exeom_parse(m->buf, len, &m->x, st);
    if (e) {
        free(m->buf);
        free(m);
        if (e == NB_ERR_FORMAT && len >= 4 && !memcmp(buf, NB_EXEOM_MAGIC, 4))
            e = NB_ERR_DATA; /* an exeom, but a bad one */
        return e;
    }
    const nb_exeom *x = &m->x;
    if ((e = load_check_tensors(x, st)) || (e = load_alloc(m, st)) ||
        (e = load_offsets(m, st)) || (e = load_w16(m, st)))
        goto fail;
    for (uint32_t i = 0; i < x->n_tensors; i++) {
        if (x->t[i].role == ROLE_IN)
            m->in_t[x->t[i].place] = (int)i;
        else if (x->t[i].role == ROLE_OUT)
            m->out_t[x->t[i].place] = (int)i;
    }
    if ((e = load_tasks(m, params, st)))
        goto fail;
    mark_branches(m);
    for (uint32_t i = 0; i < x->n_outputs; i++) /* every output written by some task */
        if (m->writer[m->out_t[i]] < 0) {
            e = nb_fail(st, NB_ERR_DATA, "model output %u (tensor %d) is never written", i,
                        m->out_t[i]);
            goto fail;
        }
    *out = m;
    return NB_OK;
fail:
    nb_sim_free(m);
    return e;
}

const nb_exeom *nb_sim_exeom(const nb_sim_model *m) { return &m->x; }
const nb_sim_task_profile *nb_sim_profile(const nb_sim_model *m, int k)
{
    return k >= 0 && (uint32_t)k < m->x.n_tasks ? &m->prof[k] : NULL;
}
uint64_t nb_sim_total_cycles(const nb_sim_model *m)
{
    return m->ran_once ? m->last_cycles : m->total_cycles;
}
bool nb_sim_task_ran(const nb_sim_model *m, int k)
{
    return k >= 0 && (uint32_t)k < m->x.n_tasks && m->ran[k];
}
uint64_t nb_sim_task_saturations(const nb_sim_model *m, int k)
{
    return k >= 0 && (uint32_t)k < m->x.n_tasks ? m->sat[k] : 0;
}
uint64_t nb_sim_total_macs(const nb_sim_model *m)
{
    return m->ran_once ? m->last_macs : m->total_macs;
}
uint64_t nb_sim_task_log_zeros(const nb_sim_model *m, int k)
{
    return k >= 0 && (uint32_t)k < m->x.n_tasks ? m->logz[k] : 0;
}
int nb_sim_input_tensor(const nb_sim_model *m, int i)
{
    return i >= 0 && (uint32_t)i < m->x.n_inputs ? m->in_t[i] : -1;
}
int nb_sim_output_tensor(const nb_sim_model *m, int i)
{
    return i >= 0 && (uint32_t)i < m->x.n_outputs ? m->out_t[i] : -1;
}

nb_err nb_sim_execute(nb_sim_model *m, const void *const *inputs, void *const *outputs,
                      nb_sim_task_hook hook, void *user, nb_status *st)
{
    memset(m->arena, 0, m->x.arena_bytes);
    for (uint32_t i = 0; i < m->x.n_inputs; i++)
        m->bound[m->in_t[i]] = inputs[i];
    for (uint32_t i = 0; i < m->x.n_outputs; i++)
        m->bound[m->out_t[i]] = outputs[i];
    m->executing = 1;
    m->last_cycles = m->last_macs = 0;
    nb_err e = NB_OK;
    for (uint32_t k = 0; k < m->x.n_tasks && !e; k++) {
        const sim_task *sk = &m->k[k];
        if (sk->skip_if >= 0) { /* a branch's task: the CPU reads the condition first */
            const sim_task *f = &m->k[sk->skip_if];
            const nb_exeom_tensor *c = &m->x.t[f->in[0]];
            int64_t i0[6] = {0};
            bool cond = sim_load(c->dtype, sim_ptr(m, f->in[0]), sim_ph(m, c, i0)) != 0;
            int taken = cond ? f->if_then : 1 - f->if_then;
            if (taken != sk->skip_br) {
                m->ran[k] = 0, m->sat[k] = m->logz[k] = 0;
                continue;
            }
        }
        m->ran[k] = 1;
        m->last_cycles += m->prof[k].cycles;
        m->last_macs += m->prof[k].macs;
        if (hook)
            hook(user, m, (int)k, true);
        nb_sim_saturations = 0;
        nb_sim_log_zeros = 0;
        e = sim_run_task(m, (int)k, st);
        m->sat[k] = nb_sim_saturations;
        m->logz[k] = nb_sim_log_zeros;
        if (!e && hook)
            hook(user, m, (int)k, false);
    }
    m->executing = 0;
    m->ran_once = !e;
    memset(m->bound, 0, sizeof *m->bound * m->x.n_tensors);
    return e;
}
