/* nanobench: reference kernels of tensor (data movement) operators (ONNX Operators.md,
 * opset 11-18, plus the attribute forms of opset 1-10).
 *
 * Data movement copies elements as bytes (nb_dtype_size), so every stored type works
 * without conversion. Output shapes were computed by the infer functions
 * (engine/ir/infer_tensor.c), which also validated attributes and shapes; the kernels
 * re-read only what they need for addressing and check data-dependent indices
 * (NB_ERR_DATA). Reshape, Flatten, Squeeze, Unsqueeze and Identity are views made by the
 * executor (NB_K_ALIAS, no kernel).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

#define MAXR (2 * NB_MAX_RANK)
#define MAXV 64

/* ---------------------------------------------------------------- helpers */

static inline char *at(const nb_tensor *t, int64_t i)
{
    return (char *)t->data + i * (int64_t)nb_dtype_size(t->dtype);
}

/* Integer index element i of t (INT32/INT64 fast; any other type converted). */
static inline int64_t idx_at(const nb_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case NB_INT64: return ((const int64_t *)t->data)[i];
    case NB_INT32: return ((const int32_t *)t->data)[i];
    default: return nb_tensor_get_i64(t, i);
    }
}

static int64_t prod(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= dims[d];
    return n;
}

/* Stores v into one element of type dt (float -> integer truncates toward zero and
 * saturates; NaN gives 0). */
static void put_f64(void *p, nb_dtype dt, double v)
{
    int64_t iv = isnan(v) ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX
                              : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
    switch (dt) {
    case NB_FLOAT: *(float *)p = (float)v; break;
    case NB_FLOAT16: *(uint16_t *)p = nb_float_to_half((float)v); break;
    case NB_BOOL: *(uint8_t *)p = v != 0.0; break;
    case NB_UINT8: *(uint8_t *)p = (uint8_t)iv; break;
    case NB_INT8: *(int8_t *)p = (int8_t)iv; break;
    case NB_UINT16: *(uint16_t *)p = (uint16_t)iv; break;
    case NB_INT16: *(int16_t *)p = (int16_t)iv; break;
    case NB_INT32: *(int32_t *)p = (int32_t)iv; break;
    case NB_INT64: *(int64_t *)p = iv; break;
    case NB_UINT32: *(uint32_t *)p = (uint32_t)iv; break;
    case NB_UINT64: *(uint64_t *)p = v >= 9.2233720368547758e18 ? (uint64_t)v : (uint64_t)iv; break;
    default: break;
    }
}

/* Stores an integer into one element of type dt (wrapping). */
static void put_i64(void *p, nb_dtype dt, int64_t v)
{
    switch (dt) {
    case NB_FLOAT: *(float *)p = (float)v; break;
    case NB_FLOAT16: *(uint16_t *)p = nb_float_to_half((float)v); break;
    case NB_BOOL: *(uint8_t *)p = v != 0; break;
    case NB_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case NB_INT8: *(int8_t *)p = (int8_t)v; break;
    case NB_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case NB_INT16: *(int16_t *)p = (int16_t)v; break;
    case NB_INT32: *(int32_t *)p = (int32_t)v; break;
    case NB_INT64: *(int64_t *)p = v; break;
    case NB_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    case NB_UINT64: *(uint64_t *)p = (uint64_t)v; break;
    default: break;
    }
}

/* One element of src (any type) as the bytes of an element of type dt. */
static void convert_elem(void *dst, nb_dtype dt, const nb_tensor *src, int64_t i)
{
    if (src->dtype == dt)
        memcpy(dst, at(src, i), nb_dtype_size(dt));
    else if (nb_dtype_is_float(src->dtype))
        put_f64(dst, dt, nb_tensor_get_f64(src, i));
    else
        put_i64(dst, dt, nb_tensor_get_i64(src, i));
}

/* Fills n elements of es bytes at dst with the element at val. */
static void fill_elems(char *dst, int64_t n, const void *val, size_t es)
{
    for (int64_t i = 0; i < n; i++)
        memcpy(dst + i * (int64_t)es, val, es);
}

/* Copies a strided view of src into the dense dst: dst element (i0..ir-1) of shape dims
 * is src element off + sum(i_d * strides[d]) (strides in elements, may be 0 or negative).
 * Size-1 dims are dropped and dims that are contiguous in src merged, so that the inner
 * loop is as long as possible (memcpy when its stride is 1). r <= MAXR. */
static void copy_strided(void *dst, const void *src, size_t es, int r, const int64_t *dims,
                         const int64_t *strides, int64_t off)
{
    int64_t cd[MAXR], cs[MAXR], idx[MAXR];
    int cr = 0;
    for (int d = 0; d < r; d++) {
        if (dims[d] == 0)
            return;
        if (dims[d] == 1)
            continue;
        if (cr > 0 && cs[cr - 1] == strides[d] * dims[d]) {
            cd[cr - 1] *= dims[d];
            cs[cr - 1] = strides[d];
        } else {
            cd[cr] = dims[d];
            cs[cr] = strides[d];
            cr++;
        }
    }
    const char *s = src;
    char *o = dst;
    int64_t e = (int64_t)es;
    if (cr == 0) {
        memcpy(o, s + off * e, es);
        return;
    }
    int64_t inner = cd[cr - 1], is = cs[cr - 1], outer = 1;
    for (int d = 0; d < cr - 1; d++) {
        outer *= cd[d];
        idx[d] = 0;
    }
    int64_t so = off;
    for (int64_t k = 0; k < outer; k++) {
        const char *p = s + so * e;
        if (is == 1) {
            memcpy(o, p, (size_t)(inner * e));
        } else {
            switch (es) {
            case 1:
                for (int64_t i = 0; i < inner; i++)
                    o[i] = p[i * is];
                break;
            case 2:
                for (int64_t i = 0; i < inner; i++)
                    ((uint16_t *)(void *)o)[i] = *(const uint16_t *)(const void *)(p + i * is * 2);
                break;
            case 4:
                for (int64_t i = 0; i < inner; i++)
                    ((uint32_t *)(void *)o)[i] = *(const uint32_t *)(const void *)(p + i * is * 4);
                break;
            case 8:
                for (int64_t i = 0; i < inner; i++)
                    ((uint64_t *)(void *)o)[i] = *(const uint64_t *)(const void *)(p + i * is * 8);
                break;
            default:
                for (int64_t i = 0; i < inner; i++)
                    memcpy(o + i * e, p + i * is * e, es);
            }
        }
        o += inner * e;
        for (int d = cr - 2; d >= 0; d--) {
            so += cs[d];
            if (++idx[d] < cd[d])
                break;
            so -= cs[d] * cd[d];
            idx[d] = 0;
        }
    }
}

/* Ints from input i (when present) or, with i < 0, attribute attr. *given is false when
 * neither is there. */
static nb_err read_ints(nb_kctx *k, int i, const char *attr, int64_t *v, int max, int *n,
                        bool *given, const char *what)
{
    *n = 0;
    *given = false;
    if (i >= 0) {
        if (i >= k->n_in || !k->in[i])
            return NB_OK;
        const nb_tensor *t = k->in[i];
        if (t->numel > max)
            return nb_fail(k->st, NB_ERR_SHAPE, "%s has %" PRId64 " values (max %d)", what,
                           t->numel, max);
        for (int64_t j = 0; j < t->numel; j++)
            v[j] = idx_at(t, j);
        *n = (int)t->numel;
        *given = true;
        return NB_OK;
    }
    int cnt;
    const int64_t *a = attr ? nb_attr_ints(k->node, attr, &cnt) : NULL;
    if (!a)
        return NB_OK;
    if (cnt > max)
        return nb_fail(k->st, NB_ERR_ATTR, "%s has %d values (max %d)", what, cnt, max);
    memcpy(v, a, sizeof(int64_t) * (size_t)cnt);
    *n = cnt;
    *given = true;
    return NB_OK;
}

static int norm(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

static nb_err bad_index(nb_kctx *k, int64_t v, int64_t lo, int64_t hi)
{
    return nb_fail(k->st, NB_ERR_DATA, "index %" PRId64 " is out of range [%" PRId64 ", %" PRId64
                   "]", v, lo, hi);
}

/* ---------------------------------------------------------------- Dropout */

/* MT19937 as numpy's legacy RandomState (seed(s), then random_sample: 53-bit doubles from
 * two draws), so that training-mode Dropout with a seed reproduces the ONNX test data. */
typedef struct mt19937 {
    uint32_t s[624];
    int i;
} mt19937;

static void mt_seed(mt19937 *m, uint32_t seed)
{
    m->s[0] = seed;
    for (uint32_t i = 1; i < 624; i++)
        m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + i;
    m->i = 624;
}

static uint32_t mt_next(mt19937 *m)
{
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % 624] & 0x7fffffffu);
            m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->s[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static double mt_double(mt19937 *m)
{
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* Dropout (Operators.md, opset 1-13): in inference (training_mode absent or false, or
 * ratio 0) output 0 is the input (a view made by the executor) and the mask all true.
 * In training mode (opset 12+) element i is kept when the i-th uniform draw of the seeded
 * generator is >= ratio, and scaled by 1/(1-ratio); output 0 is then a new tensor. */
static nb_err k_dropout(nb_kctx *k)
{
    nb_tensor *mask = k->n_out > 1 ? k->out[1] : NULL;
    bool training = false;
    double ratio = 0.5;
    if (k->opset >= 12) {
        if (k->n_in > 1 && k->in[1] && k->in[1]->numel > 0)
            ratio = nb_tensor_get_f64(k->in[1], 0);
        if (k->n_in > 2 && k->in[2] && k->in[2]->numel > 0)
            training = nb_tensor_get_f64(k->in[2], 0) != 0.0;
    }
    if (!training || ratio == 0.0) {
        if (mask) {
            if (mask->dtype == NB_BOOL)
                memset(mask->data, 1, (size_t)mask->numel);
            else
                for (int64_t i = 0; i < mask->numel; i++)
                    put_f64(at(mask, i), mask->dtype, 1.0);
        }
        return NB_OK;
    }
    const nb_tensor *x = k->in[0];
    if (!nb_dtype_is_float(x->dtype))
        return nb_fail(k->st, NB_ERR_UNSUPPORTED, "training-mode Dropout of %s",
                       nb_dtype_name(x->dtype));
    nb_tensor *y;
    nb_err e = nb_tensor_new_uninit(x->dtype, x->rank, x->dims, &y, k->st);
    if (e)
        return e;
    mt19937 m;
    mt_seed(&m, (uint32_t)nb_attr_int(k->node, "seed", 0));
    float scale = 1.0f / (1.0f - (float)ratio);
    for (int64_t i = 0; i < x->numel; i++) {
        bool keep = mt_double(&m) >= ratio;
        float v = keep ? (float)nb_tensor_get_f64(x, i) * scale : 0.0f;
        if (x->dtype == NB_FLOAT)
            ((float *)y->data)[i] = v;
        else
            ((uint16_t *)y->data)[i] = nb_float_to_half(v);
        if (mask)
            put_f64(at(mask, i), mask->dtype, keep);
    }
    nb_tensor_free(k->out[0]); /* the view the executor made */
    k->out[0] = y;
    return NB_OK;
}

/* ---------------------------------------------------------------- layout */

/* Transpose (Operators.md, opset 1-13): out[i...] = in[permuted i...]. */
static nb_err k_transpose(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int n;
    const int64_t *perm = nb_attr_ints(k->node, "perm", &n);
    int64_t xs[NB_MAX_RANK], ss[NB_MAX_RANK];
    nb_strides(x->rank, x->dims, xs);
    for (int i = 0; i < x->rank; i++)
        ss[i] = xs[perm ? perm[i] : x->rank - 1 - i];
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), y->rank, y->dims, ss, 0);
    return NB_OK;
}

/* Concat (Operators.md, opset 1-13): blocks of each input in turn along axis. */
static nb_err k_concat(nb_kctx *k)
{
    nb_tensor *y = k->out[0];
    int a = norm(nb_attr_int(k->node, "axis", 1), y->rank);
    int64_t es = (int64_t)nb_dtype_size(y->dtype);
    int64_t outer = prod(y->dims, 0, a), inner = prod(y->dims, a + 1, y->rank) * es;
    int64_t row = y->dims[a] * inner, pos = 0;
    for (int i = 0; i < k->n_in; i++) {
        const nb_tensor *x = k->in[i];
        int64_t rx = x->dims[a] * inner;
        if (rx > 0)
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)y->data + o * row + pos, (const char *)x->data + o * rx,
                       (size_t)rx);
        pos += rx;
    }
    return NB_OK;
}

/* Split (Operators.md, opset 1-18): consecutive blocks along axis, sizes from 'split'
 * (attribute up to 12, input from 13), else equal parts (num_outputs, opset 18: ceil,
 * the last part smaller). */
static nb_err k_split(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    int a = norm(nb_attr_int(k->node, "axis", 0), x->rank);
    int64_t sp[MAXV];
    int n, nout = k->n_out;
    bool given;
    nb_err e = read_ints(k, k->opset >= 13 ? 1 : -1, "split", sp, MAXV, &n, &given, "split");
    if (e)
        return e;
    int64_t dim = x->dims[a];
    if (!given || n == 0) {
        if (nout > MAXV)
            return nb_fail(k->st, NB_ERR_SHAPE, "too many outputs");
        int64_t chunk = dim / nout + (dim % nout != 0);
        for (int o = 0; o < nout; o++)
            sp[o] = o < nout - 1 ? chunk : dim - chunk * (nout - 1);
        n = nout;
    }
    if (n != nout)
        return nb_fail(k->st, NB_ERR_SHAPE, "split has %d values for %d outputs", n, nout);
    int64_t es = (int64_t)nb_dtype_size(x->dtype);
    int64_t outer = prod(x->dims, 0, a), inner = prod(x->dims, a + 1, x->rank) * es;
    int64_t row = dim * inner, pos = 0;
    for (int o = 0; o < nout; o++) {
        int64_t ro = sp[o] * inner;
        nb_tensor *y = k->out[o];
        if (y && ro > 0)
            for (int64_t i = 0; i < outer; i++)
                memcpy((char *)y->data + i * ro, (const char *)x->data + i * row + pos,
                       (size_t)ro);
        pos += ro;
    }
    return NB_OK;
}

/* Slice (Operators.md, opset 1-13): out[i...] = in[start + i * step ...] per axis, starts
 * clamped as the infer function does (the output shape already holds the lengths). */
static nb_err k_slice(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    bool in_form = k->opset >= 10;
    int64_t st[NB_MAX_RANK], en[NB_MAX_RANK], ax[NB_MAX_RANK], sp[NB_MAX_RANK];
    int ns, ne, na, nsp = 0;
    bool gs, ge, ga, gsp = false;
    nb_err e;
    if ((e = read_ints(k, in_form ? 1 : -1, "starts", st, NB_MAX_RANK, &ns, &gs, "starts")) ||
        (e = read_ints(k, in_form ? 2 : -1, "ends", en, NB_MAX_RANK, &ne, &ge, "ends")) ||
        (e = read_ints(k, in_form ? 3 : -1, "axes", ax, NB_MAX_RANK, &na, &ga, "axes")) ||
        (in_form && (e = read_ints(k, 4, NULL, sp, NB_MAX_RANK, &nsp, &gsp, "steps"))))
        return e;
    int r = x->rank;
    int64_t xs[NB_MAX_RANK], ss[NB_MAX_RANK], off = 0;
    nb_strides(r, x->dims, xs);
    for (int d = 0; d < r; d++)
        ss[d] = xs[d];
    if (y->numel == 0)
        return NB_OK;
    for (int i = 0; i < ns; i++) {
        int a = ga ? norm(ax[i], r) : i;
        int64_t d = x->dims[a], s = st[i], step = gsp ? sp[i] : 1;
        if (s < 0)
            s += d;
        if (step > 0)
            s = s < 0 ? 0 : (s > d ? d : s);
        else
            s = s < 0 ? 0 : (s > d - 1 ? d - 1 : s);
        off += s * xs[a];
        ss[a] = xs[a] * (y->dims[a] > 1 ? step : 1);
    }
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), r, y->dims, ss, off);
    return NB_OK;
}

/* Pad (Operators.md, opset 1-18): out[o] = in[o - pad_begin] inside the input; outside,
 * the constant (constant), the nearest edge element (edge) or the mirror image without
 * repeating the edge (reflect, repeated for pads larger than the axis). */
static nb_err k_pad(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    bool in_form = k->opset >= 11;
    const char *mode = nb_attr_str(k->node, "mode", "constant");
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "edge") ? 1 : 2;
    int64_t pads[2 * NB_MAX_RANK], axes[NB_MAX_RANK];
    int np, na;
    bool gp, ga;
    nb_err e;
    if ((e = read_ints(k, in_form ? 1 : -1, k->opset < 2 ? "paddings" : "pads", pads,
                       2 * NB_MAX_RANK, &np, &gp, "pads")) ||
        (e = read_ints(k, in_form ? 3 : -1, NULL, axes, NB_MAX_RANK, &na, &ga, "axes")))
        return e;
    int r = x->rank;
    int64_t begin[NB_MAX_RANK] = {0};
    if (!ga) {
        na = r;
        for (int i = 0; i < r; i++)
            axes[i] = i;
    }
    for (int i = 0; i < na && i + na < np; i++)
        begin[norm(axes[i], r)] = pads[i];
    size_t es = nb_dtype_size(x->dtype);
    uint8_t cv[16] = {0};
    if (in_form && k->n_in > 2 && k->in[2] && k->in[2]->numel > 0)
        convert_elem(cv, x->dtype, k->in[2], 0);
    else if (!in_form)
        put_f64(cv, x->dtype, nb_attr_float(k->node, "value", 0.0f));
    if (y->numel == 0)
        return NB_OK;
    if (r == 0) {
        memcpy(y->data, x->data, es);
        return NB_OK;
    }
    /* per axis: source index of each output index, -1 for the constant */
    int64_t total = 0, *maps[NB_MAX_RANK];
    for (int d = 0; d < r; d++)
        total += y->dims[d];
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)total);
    if (!buf)
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    for (int d = 0; d < r; d++) {
        maps[d] = d == 0 ? buf : maps[d - 1] + y->dims[d - 1];
        int64_t n = x->dims[d];
        for (int64_t o = 0; o < y->dims[d]; o++) {
            int64_t i = o - begin[d];
            if (i < 0 || i >= n) {
                if (m == 0 || n == 0)
                    i = -1;
                else if (m == 1)
                    i = i < 0 ? 0 : n - 1;
                else if (n == 1)
                    i = 0;
                else {
                    int64_t per = 2 * (n - 1);
                    i %= per;
                    if (i < 0)
                        i += per;
                    if (i >= n)
                        i = per - i;
                }
            }
            maps[d][o] = i;
        }
    }
    int64_t xs[NB_MAX_RANK], idx[NB_MAX_RANK] = {0};
    nb_strides(r, x->dims, xs);
    int64_t inner = y->dims[r - 1], outer = y->numel / inner;
    const int64_t *ml = maps[r - 1];
    char *o = y->data;
    for (int64_t q = 0; q < outer; q++) {
        int64_t base = 0;
        bool cst = false;
        for (int d = 0; d < r - 1; d++) {
            int64_t s = maps[d][idx[d]];
            if (s < 0)
                cst = true;
            base += s * xs[d];
        }
        if (cst) {
            fill_elems(o, inner, cv, es);
        } else {
            const char *src = (const char *)x->data + base * (int64_t)es;
            for (int64_t j = 0; j < inner; j++) {
                if (ml[j] < 0)
                    memcpy(o + j * (int64_t)es, cv, es);
                else
                    memcpy(o + j * (int64_t)es, src + ml[j] * (int64_t)es, es);
            }
        }
        o += inner * (int64_t)es;
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < y->dims[d])
                break;
            idx[d] = 0;
        }
    }
    free(buf);
    return NB_OK;
}

/* Tile (Operators.md, opset 6-13): output axis d is the input axis repeated; viewed as
 * [repeats, dim] with stride 0 for the repeats. */
static nb_err k_tile(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    if (y->numel == 0)
        return NB_OK;
    int64_t xs[NB_MAX_RANK], dims[MAXR], ss[MAXR];
    nb_strides(x->rank, x->dims, xs);
    for (int d = 0; d < x->rank; d++) {
        dims[2 * d] = y->dims[d] / x->dims[d];
        dims[2 * d + 1] = x->dims[d];
        ss[2 * d] = 0;
        ss[2 * d + 1] = xs[d];
    }
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), 2 * x->rank, dims, ss, 0);
    return NB_OK;
}

/* Expand (Operators.md, opset 8-13): numpy broadcast of the input to the output shape. */
static nb_err k_expand(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t xs[NB_MAX_RANK], ss[NB_MAX_RANK];
    nb_strides(x->rank, x->dims, xs);
    for (int d = 0; d < y->rank; d++) {
        int td = d - (y->rank - x->rank);
        ss[d] = (td >= 0 && x->dims[td] != 1) ? xs[td] : 0;
    }
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), y->rank, y->dims, ss, 0);
    return NB_OK;
}

/* SpaceToDepth (Operators.md, opset 1-13): out[n, (by*b + bx)*C + c, h, w] =
 * in[n, c, h*b + by, w*b + bx]. */
static nb_err k_space_to_depth(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t b = nb_attr_int(k->node, "blocksize", 1), xs[4];
    nb_strides(4, x->dims, xs);
    int64_t dims[6] = {x->dims[0], b, b, x->dims[1], y->dims[2], y->dims[3]};
    int64_t ss[6] = {xs[0], xs[2], xs[3], xs[1], b * xs[2], b * xs[3]};
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), 6, dims, ss, 0);
    return NB_OK;
}

/* DepthToSpace (Operators.md, opset 1-13): out[n, c, h*b + by, w*b + bx] =
 * in[n, (by*b + bx)*C' + c, h, w] (DCR) or in[n, c*b*b + by*b + bx, h, w] (CRD). */
static nb_err k_depth_to_space(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t b = nb_attr_int(k->node, "blocksize", 1), xs[4];
    bool crd = !strcmp(nb_attr_str(k->node, "mode", "DCR"), "CRD");
    nb_strides(4, x->dims, xs);
    int64_t c2 = y->dims[1];
    int64_t dims[6] = {x->dims[0], c2, x->dims[2], b, x->dims[3], b};
    int64_t ss[6] = {xs[0], crd ? b * b * xs[1] : xs[1], xs[2], crd ? b * xs[1] : b * c2 * xs[1],
                     xs[3], crd ? xs[1] : c2 * xs[1]};
    copy_strided(y->data, x->data, nb_dtype_size(x->dtype), 6, dims, ss, 0);
    return NB_OK;
}

/* ---------------------------------------------------------------- indexing */

/* Gather (Operators.md, opset 1-13): out[o, j, i] = data[o, indices[j], i] (negative
 * indices count from the end). */
static nb_err k_gather(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *ind = k->in[1];
    nb_tensor *y = k->out[0];
    int a = norm(nb_attr_int(k->node, "axis", 0), x->rank);
    int64_t es = (int64_t)nb_dtype_size(x->dtype), n = x->dims[a];
    int64_t outer = prod(x->dims, 0, a), block = prod(x->dims, a + 1, x->rank) * es;
    for (int64_t j = 0; j < ind->numel; j++) {
        int64_t v = idx_at(ind, j);
        if (v < -n || v >= n)
            return bad_index(k, v, -n, n - 1);
    }
    char *o = y->data;
    if (block == 0)
        return NB_OK;
    for (int64_t q = 0; q < outer; q++)
        for (int64_t j = 0; j < ind->numel; j++, o += block) {
            int64_t v = idx_at(ind, j);
            v += v < 0 ? n : 0;
            memcpy(o, (const char *)x->data + (q * n + v) * block, (size_t)block);
        }
    return NB_OK;
}

/* Walks the elements of indices (shape of rank r) and returns for each the offset in a
 * tensor of strides xs of the same multi-index with the axis coordinate replaced by the
 * (checked) index value. Used by GatherElements and ScatterElements. */
typedef nb_err (*elem_fn)(void *ctx, int64_t i, int64_t off);

static nb_err walk_elements(nb_kctx *k, const nb_tensor *x, const nb_tensor *ind, int a,
                            elem_fn fn, void *ctx)
{
    int64_t xs[NB_MAX_RANK], idx[NB_MAX_RANK] = {0}, base = 0, n = x->dims[a];
    nb_strides(x->rank, x->dims, xs);
    int r = ind->rank;
    for (int64_t i = 0; i < ind->numel; i++) {
        int64_t v = idx_at(ind, i);
        if (v < -n || v >= n)
            return bad_index(k, v, -n, n - 1);
        v += v < 0 ? n : 0;
        nb_err e = fn(ctx, i, base + v * xs[a]);
        if (e)
            return e;
        for (int d = r - 1; d >= 0; d--) {
            if (d != a)
                base += xs[d];
            if (++idx[d] < ind->dims[d])
                break;
            if (d != a)
                base -= xs[d] * ind->dims[d];
            idx[d] = 0;
        }
    }
    return NB_OK;
}

typedef struct copy_ctx {
    const char *src;
    char *dst;
    size_t es;
    int red;
    nb_dtype dt;
} copy_ctx;

static nb_err gather_elem(void *ctx, int64_t i, int64_t off)
{
    copy_ctx *c = ctx;
    memcpy(c->dst + i * (int64_t)c->es, c->src + off * (int64_t)c->es, c->es);
    return NB_OK;
}

/* GatherElements (Operators.md, opset 11-13): out[i...] = data[i... with i_axis =
 * indices[i...]]. */
static nb_err k_gather_elements(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *ind = k->in[1];
    copy_ctx c = {.src = x->data, .dst = k->out[0]->data, .es = nb_dtype_size(x->dtype)};
    return walk_elements(k, x, ind, norm(nb_attr_int(k->node, "axis", 0), x->rank), gather_elem,
                         &c);
}

/* GatherND (Operators.md, opset 11-13): for each batch and each index tuple of length k,
 * copies the slice data[batch, tuple...] (shape data[batch_dims + k:]). */
static nb_err k_gather_nd(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *ind = k->in[1];
    nb_tensor *y = k->out[0];
    int b = (int)nb_attr_int(k->node, "batch_dims", 0), q = ind->rank;
    int kk = (int)ind->dims[q - 1];
    int64_t es = (int64_t)nb_dtype_size(x->dtype), xs[NB_MAX_RANK];
    nb_strides(x->rank, x->dims, xs);
    int64_t nb = prod(x->dims, 0, b), bstride = prod(x->dims, b, x->rank);
    int64_t tuples = prod(ind->dims, b, q - 1), slice = prod(x->dims, b + kk, x->rank) * es;
    char *o = y->data;
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t t = 0; t < tuples; t++) {
            const int64_t row = (bi * tuples + t) * kk;
            int64_t off = bi * bstride;
            for (int j = 0; j < kk; j++) {
                int64_t v = idx_at(ind, row + j), n = x->dims[b + j];
                if (v < -n || v >= n)
                    return bad_index(k, v, -n, n - 1);
                off += (v < 0 ? v + n : v) * xs[b + j];
            }
            if (slice > 0)
                memcpy(o, (const char *)x->data + off * es, (size_t)slice);
            o += slice;
        }
    return NB_OK;
}

enum { R_NONE, R_ADD, R_MUL, R_MAX, R_MIN };

static int reduction_of(const nb_node *n)
{
    const char *r = nb_attr_str(n, "reduction", "none");
    return !strcmp(r, "add") ? R_ADD : !strcmp(r, "mul") ? R_MUL : !strcmp(r, "max") ? R_MAX
           : !strcmp(r, "min") ? R_MIN : R_NONE;
}

#define RED_INT(T, UT)                                                                     \
    {                                                                                      \
        T a = *(T *)dst, b = *(const T *)src;                                              \
        switch (red) {                                                                     \
        case R_ADD: a = (T)(UT)((UT)a + (UT)b); break;                                     \
        case R_MUL: a = (T)(UT)((UT)a * (UT)b); break;                                     \
        case R_MAX: a = a > b ? a : b; break;                                              \
        default: a = a < b ? a : b; break;                                                 \
        }                                                                                  \
        *(T *)dst = a;                                                                     \
        return;                                                                            \
    }

/* dst = dst (reduction) src for one element of type dt. */
static void reduce_elem(void *dst, const void *src, nb_dtype dt, int red)
{
    if (red == R_NONE) {
        memcpy(dst, src, nb_dtype_size(dt));
        return;
    }
    switch (dt) {
    case NB_FLOAT:
    case NB_FLOAT16: {
        float a = dt == NB_FLOAT ? *(float *)dst : nb_half_to_float(*(uint16_t *)dst);
        float b = dt == NB_FLOAT ? *(const float *)src : nb_half_to_float(*(const uint16_t *)src);
        switch (red) {
        case R_ADD: a += b; break;
        case R_MUL: a *= b; break;
        case R_MAX: a = (isnan(a) || a > b) ? a : b; break;
        default: a = (isnan(a) || a < b) ? a : b; break;
        }
        if (dt == NB_FLOAT)
            *(float *)dst = a;
        else
            *(uint16_t *)dst = nb_float_to_half(a);
        return;
    }
    case NB_BOOL: {
        uint8_t a = *(uint8_t *)dst, b = *(const uint8_t *)src;
        *(uint8_t *)dst = (red == R_ADD || red == R_MAX) ? (a || b) : (a && b);
        return;
    }
    case NB_INT8: RED_INT(int8_t, uint8_t)
    case NB_UINT8: RED_INT(uint8_t, uint8_t)
    case NB_INT16: RED_INT(int16_t, uint16_t)
    case NB_UINT16: RED_INT(uint16_t, uint16_t)
    case NB_INT32: RED_INT(int32_t, uint32_t)
    case NB_UINT32: RED_INT(uint32_t, uint32_t)
    case NB_INT64: RED_INT(int64_t, uint64_t)
    case NB_UINT64: RED_INT(uint64_t, uint64_t)
    default: return;
    }
}

static nb_err scatter_elem(void *ctx, int64_t i, int64_t off)
{
    copy_ctx *c = ctx;
    reduce_elem(c->dst + off * (int64_t)c->es, c->src + i * (int64_t)c->es, c->dt, c->red);
    return NB_OK;
}

/* ScatterElements (Operators.md, opset 11-18) and Scatter (opset 9-10): output = data,
 * then out[i... with i_axis = indices[i...]] (reduction)= updates[i...], in index order. */
static nb_err k_scatter_elements(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *ind = k->in[1], *u = k->in[2];
    nb_tensor *y = k->out[0];
    if (u->numel != ind->numel)
        return nb_fail(k->st, NB_ERR_SHAPE, "updates and indices differ in size");
    if (y->nbytes)
        memcpy(y->data, x->data, y->nbytes);
    copy_ctx c = {.src = u->data, .dst = y->data, .es = nb_dtype_size(x->dtype),
                  .red = reduction_of(k->node), .dt = x->dtype};
    return walk_elements(k, x, ind, norm(nb_attr_int(k->node, "axis", 0), x->rank),
                         scatter_elem, &c);
}

/* ScatterND (Operators.md, opset 11-18): output = data, then for each index tuple t of
 * length k, out[t...] (reduction)= the matching slice of updates. */
static nb_err k_scatter_nd(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *ind = k->in[1], *u = k->in[2];
    nb_tensor *y = k->out[0];
    int q = ind->rank, kk = (int)ind->dims[q - 1], red = reduction_of(k->node);
    int64_t es = (int64_t)nb_dtype_size(x->dtype), xs[NB_MAX_RANK];
    nb_strides(x->rank, x->dims, xs);
    int64_t tuples = prod(ind->dims, 0, q - 1), slice = prod(x->dims, kk, x->rank);
    if (tuples * slice != u->numel)
        return nb_fail(k->st, NB_ERR_SHAPE, "updates have %" PRId64 " elements, expected %" PRId64,
                       u->numel, tuples * slice);
    if (y->nbytes)
        memcpy(y->data, x->data, y->nbytes);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int j = 0; j < kk; j++) {
            int64_t v = idx_at(ind, t * kk + j), n = x->dims[j];
            if (v < -n || v >= n)
                return bad_index(k, v, -n, n - 1);
            off += (v < 0 ? v + n : v) * xs[j];
        }
        char *dst = (char *)y->data + off * es;
        const char *src = (const char *)u->data + t * slice * es;
        if (red == R_NONE) {
            if (slice > 0)
                memcpy(dst, src, (size_t)(slice * es));
        } else {
            for (int64_t i = 0; i < slice; i++)
                reduce_elem(dst + i * es, src + i * es, x->dtype, red);
        }
    }
    return NB_OK;
}

/* Trilu (Operators.md, opset 14): element (i, j) of each matrix of the last two dims is
 * kept when j - i >= k (upper=1) or j - i <= k (upper=0), else zero. */
static nb_err k_trilu(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t kd = (k->n_in > 1 && k->in[1] && k->in[1]->numel > 0) ? idx_at(k->in[1], 0) : 0;
    bool upper = nb_attr_int(k->node, "upper", 1) != 0;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t es = (int64_t)nb_dtype_size(x->dtype);
    int64_t mats = (rows > 0 && cols > 0) ? x->numel / (rows * cols) : 0;
    const char *s = x->data;
    char *o = y->data;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++, s += es, o += es) {
                bool keep = upper ? j - i >= kd : j - i <= kd;
                if (keep)
                    memcpy(o, s, (size_t)es);
                else
                    memset(o, 0, (size_t)es);
            }
    return NB_OK;
}

/* OneHot (Operators.md, opset 9-11): out[o, v, i] = on where v = indices[o, i] (+depth
 * when negative), off elsewhere; out-of-range indices give a row of off. */
static nb_err k_onehot(nb_kctx *k)
{
    const nb_tensor *ind = k->in[0], *vals = k->in[2];
    nb_tensor *y = k->out[0];
    int a = norm(nb_attr_int(k->node, "axis", -1), y->rank);
    int64_t depth = y->dims[a], es = (int64_t)nb_dtype_size(y->dtype);
    int64_t outer = prod(ind->dims, 0, a), inner = prod(ind->dims, a, ind->rank);
    if (vals->numel < 2)
        return nb_fail(k->st, NB_ERR_SHAPE, "values must have 2 elements");
    fill_elems(y->data, y->numel, vals->data, (size_t)es);
    bool fl = nb_dtype_is_float(ind->dtype);
    for (int64_t q = 0; q < outer; q++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t p = q * inner + i;
            int64_t v;
            if (fl) {
                double f = nb_tensor_get_f64(ind, p);
                if (!(f > -9.0e18 && f < 9.0e18))
                    continue;
                v = (int64_t)f;
            } else {
                v = idx_at(ind, p);
            }
            if (v < 0)
                v += depth;
            if (v < 0 || v >= depth)
                continue;
            memcpy((char *)y->data + ((q * depth + v) * inner + i) * es, at(vals, 1), (size_t)es);
        }
    return NB_OK;
}

/* NonZero (Operators.md, opset 9-13): out[d, j] = coordinate d of the j-th non-zero element
 * in row-major order (a scalar is treated as a 1-element vector). */
static nb_err k_nonzero(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int r = x->rank;
    int64_t nnz = y->dims[1], j = 0, idx[NB_MAX_RANK] = {0};
    size_t es = nb_dtype_size(x->dtype);
    const uint8_t *p = x->data;
    int64_t *o = y->data;
    for (int64_t i = 0; i < x->numel; i++) {
        bool nz;
        if (x->dtype == NB_FLOAT)
            nz = ((const float *)x->data)[i] != 0.0f;
        else if (x->dtype == NB_FLOAT16)
            nz = (((const uint16_t *)x->data)[i] & 0x7fff) != 0;
        else {
            nz = false;
            for (size_t b = 0; b < es; b++)
                nz |= p[(size_t)i * es + b] != 0;
        }
        if (nz) {
            if (j >= nnz)
                return nb_fail(k->st, NB_ERR_INTERNAL, "more non-zero elements than inferred");
            if (r == 0)
                o[j] = 0;
            for (int d = 0; d < r; d++)
                o[d * nnz + j] = idx[d];
            j++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->dims[d])
                break;
            idx[d] = 0;
        }
    }
    if (j != nnz)
        return nb_fail(k->st, NB_ERR_INTERNAL, "fewer non-zero elements than inferred");
    return NB_OK;
}

/* ReverseSequence (Operators.md, opset 10): for batch b, the first sequence_lens[b] time
 * steps are reversed, the rest copied. */
static nb_err k_reverse_sequence(nb_kctx *k)
{
    const nb_tensor *x = k->in[0], *lens = k->in[1];
    nb_tensor *y = k->out[0];
    int ta = (int)nb_attr_int(k->node, "time_axis", 0);
    int64_t nt = x->dims[ta], nbt = x->dims[1 - ta], d1 = x->dims[1];
    int64_t block = prod(x->dims, 2, x->rank) * (int64_t)nb_dtype_size(x->dtype);
    if (lens->numel != nbt)
        return nb_fail(k->st, NB_ERR_SHAPE, "sequence_lens has %" PRId64 " entries for batch %"
                       PRId64, lens->numel, nbt);
    if (block == 0)
        return NB_OK;
    for (int64_t b = 0; b < nbt; b++) {
        int64_t len = idx_at(lens, b);
        if (len < 0 || len > nt)
            return nb_fail(k->st, NB_ERR_DATA, "sequence length %" PRId64 " is outside [0, %"
                           PRId64 "]", len, nt);
        for (int64_t t = 0; t < nt; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            int64_t od = ta == 0 ? t * d1 + b : b * d1 + t;
            int64_t sd = ta == 0 ? src * d1 + b : b * d1 + src;
            memcpy((char *)y->data + od * block, (const char *)x->data + sd * block,
                   (size_t)block);
        }
    }
    return NB_OK;
}

/* ---------------------------------------------------------------- generators */

/* Shape (Operators.md, opset 1-15): the input dims in [start, end) as INT64 (the infer
 * function already set the same value; this writes it again). */
static nb_err k_shape(nb_kctx *k)
{
    const nb_tensor *x = k->in[0];
    nb_tensor *y = k->out[0];
    int64_t r = x->rank;
    int64_t s = k->opset >= 15 ? nb_attr_int(k->node, "start", 0) : 0;
    if (s < 0)
        s = s < -r ? 0 : s + r;
    s = s > r ? r : s;
    for (int64_t i = 0; i < y->numel; i++)
        ((int64_t *)y->data)[i] = x->dims[s + i];
    return NB_OK;
}

/* Size (Operators.md, opset 1-13): element count as an INT64 scalar. */
static nb_err k_size(nb_kctx *k)
{
    *(int64_t *)k->out[0]->data = k->in[0]->numel;
    return NB_OK;
}

/* ConstantOfShape (Operators.md, opset 9): every element is the 'value' attribute
 * (float 0 by default). */
static nb_err k_constant_of_shape(nb_kctx *k)
{
    nb_tensor *y = k->out[0];
    const nb_attr *va = nb_attr_find(k->node, "value");
    if (va && va->t && va->t->numel >= 1)
        fill_elems(y->data, y->numel, va->t->data, nb_dtype_size(y->dtype));
    else
        memset(y->data, 0, y->nbytes);
    return NB_OK;
}

/* Range (Operators.md, opset 11): out[i] = start + i * delta. */
static nb_err k_range(nb_kctx *k)
{
    nb_tensor *y = k->out[0];
    if (nb_dtype_is_float(y->dtype)) {
        double s = nb_tensor_get_f64(k->in[0], 0), d = nb_tensor_get_f64(k->in[2], 0);
        for (int64_t i = 0; i < y->numel; i++)
            put_f64(at(y, i), y->dtype, s + (double)i * d);
    } else {
        int64_t s = nb_tensor_get_i64(k->in[0], 0), d = nb_tensor_get_i64(k->in[2], 0);
        for (int64_t i = 0; i < y->numel; i++)
            put_i64(at(y, i), y->dtype, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    }
    return NB_OK;
}

/* EyeLike (Operators.md, opset 9): ones on diagonal k (out[i, i + k]), zeros elsewhere. */
static nb_err k_eyelike(nb_kctx *k)
{
    nb_tensor *y = k->out[0];
    int64_t kd = nb_attr_int(k->node, "k", 0), rows = y->dims[0], cols = y->dims[1];
    memset(y->data, 0, y->nbytes);
    if (kd >= cols || kd <= -rows)
        return NB_OK;
    for (int64_t i = 0; i < rows; i++) {
        int64_t j = i + kd;
        if (j >= 0 && j < cols)
            put_f64(at(y, i * cols + j), y->dtype, 1.0);
    }
    return NB_OK;
}

const nb_kernel_entry nb_kernels_tensor[] = {
    {"Concat", k_concat, 0},
    {"ConstantOfShape", k_constant_of_shape, 0},
    {"DepthToSpace", k_depth_to_space, 0},
    {"Dropout", k_dropout, NB_K_ALIAS},
    {"Expand", k_expand, 0},
    {"EyeLike", k_eyelike, 0},
    {"Flatten", NULL, NB_K_ALIAS},
    {"Gather", k_gather, 0},
    {"GatherElements", k_gather_elements, 0},
    {"GatherND", k_gather_nd, 0},
    {"Identity", NULL, NB_K_ALIAS},
    {"NonZero", k_nonzero, 0},
    {"OneHot", k_onehot, 0},
    {"Pad", k_pad, 0},
    {"Range", k_range, 0},
    {"Reshape", NULL, NB_K_ALIAS},
    {"ReverseSequence", k_reverse_sequence, 0},
    {"Scatter", k_scatter_elements, 0},
    {"ScatterElements", k_scatter_elements, 0},
    {"ScatterND", k_scatter_nd, 0},
    {"Shape", k_shape, 0},
    {"Size", k_size, 0},
    {"Slice", k_slice, 0},
    {"SpaceToDepth", k_space_to_depth, 0},
    {"Split", k_split, 0},
    {"Squeeze", NULL, NB_K_ALIAS},
    {"Tile", k_tile, 0},
    {"Transpose", k_transpose, 0},
    {"Trilu", k_trilu, 0},
    {"Unsqueeze", NULL, NB_K_ALIAS},
    {NULL, NULL, 0},
};
