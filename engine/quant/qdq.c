/* nanobench: the fake-quant model, standard ONNX QuantizeLinear / DequantizeLinear around
 * every quantized layer (include/nb/quant.h, nb_write_fake_quant).
 *
 * The original file is decoded with protobuf-c, edited and encoded again, so that
 * everything nanobench does not touch (other nodes, metadata, names) stays as it was.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/quant.h"
#include "onnx.pb-c.h"

static char *dupf2(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (s) {
        memcpy(s, a, la);
        memcpy(s + la, b, lb + 1);
    }
    return s;
}

/* A new initializer name of type dt, dims, with n elements of esize bytes from data. */
static Onnx__TensorProto *initializer(const char *name, int dt, int rank, const int64_t *dims,
                                      const void *data, size_t bytes)
{
    Onnx__TensorProto *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = strdup(name);
    t->has_data_type = 1;
    t->data_type = dt;
    t->n_dims = (size_t)rank;
    t->dims = rank ? malloc(sizeof(int64_t) * (size_t)rank) : NULL;
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = malloc(bytes ? bytes : 1);
    if (!t->name || (rank && !t->dims) || !t->raw_data.data) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return NULL;
    }
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    memcpy(t->raw_data.data, data, bytes);
    return t;
}

static Onnx__AttributeProto *attr_new(const char *name, int type)
{
    Onnx__AttributeProto *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    a->has_type = 1;
    a->type = type;
    if (!a->name) {
        free(a);
        return NULL;
    }
    return a;
}

static Onnx__AttributeProto *attr_int(const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (a)
        a->has_i = 1, a->i = v;
    return a;
}

static Onnx__AttributeProto *attr_float(const char *name, float v)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (a)
        a->has_f = 1, a->f = v;
    return a;
}

/* A node op(in...) -> out in domain, taking the n_attr attributes (freed on failure). */
static Onnx__NodeProto *node_attrs(const char *name, const char *op, const char *domain,
                                   const char *const *in, int n_in, const char *out,
                                   Onnx__AttributeProto **attrs, int n_attr)
{
    Onnx__NodeProto *n = malloc(sizeof *n);
    bool ok = n != NULL;
    for (int i = 0; i < n_attr; i++)
        ok = ok && attrs[i];
    if (!ok) {
        free(n);
        for (int i = 0; i < n_attr; i++)
            if (attrs[i])
                onnx__attribute_proto__free_unpacked(attrs[i], NULL);
        return NULL;
    }
    onnx__node_proto__init(n);
    n->name = strdup(name);
    n->op_type = strdup(op);
    n->domain = strdup(domain);
    n->n_input = (size_t)n_in;
    n->input = calloc((size_t)n_in + 1, sizeof(char *));
    n->n_output = 1;
    n->output = calloc(1, sizeof(char *));
    n->attribute = calloc((size_t)n_attr + 1, sizeof(Onnx__AttributeProto *));
    ok = n->name && n->op_type && n->domain && n->input && n->output && n->attribute;
    for (int i = 0; i < n_attr; i++) {
        if (n->attribute)
            n->attribute[n->n_attribute++] = attrs[i];
        else
            onnx__attribute_proto__free_unpacked(attrs[i], NULL);
    }
    for (int i = 0; ok && i < n_in; i++)
        ok = (n->input[i] = strdup(in[i])) != NULL;
    ok = ok && (n->output[0] = strdup(out)) != NULL;
    if (!ok) {
        onnx__node_proto__free_unpacked(n, NULL);
        return NULL;
    }
    return n;
}

/* A standard-domain node op(in...) -> out, with an int attribute axis (axis < -100: none). */
static Onnx__NodeProto *node(const char *name, const char *op, const char *const *in, int n_in,
                             const char *out, int64_t axis)
{
    Onnx__AttributeProto *a[1] = {axis > -100 ? attr_int("axis", axis) : NULL};
    return node_attrs(name, op, "", in, n_in, out, a, axis > -100 ? 1 : 0);
}

static bool push_node(Onnx__GraphProto *g, size_t at, Onnx__NodeProto *n)
{
    if (!n)
        return false;
    Onnx__NodeProto **a = realloc(g->node, sizeof *a * (g->n_node + 1));
    if (!a) {
        onnx__node_proto__free_unpacked(n, NULL);
        return false;
    }
    g->node = a;
    memmove(a + at + 1, a + at, sizeof *a * (g->n_node - at));
    a[at] = n;
    g->n_node++;
    return true;
}

static bool push_init(Onnx__GraphProto *g, Onnx__TensorProto *t)
{
    if (!t)
        return false;
    Onnx__TensorProto **a = realloc(g->initializer, sizeof *a * (g->n_initializer + 1));
    if (!a) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return false;
    }
    g->initializer = a;
    a[g->n_initializer++] = t;
    return true;
}

static float fp16_round(float x)
{
    /* FORCE_FP16_QUANT: the value an fp16 holds (round to nearest even on 10 mantissa bits) */
    if (x == 0 || !isfinite(x))
        return x;
    int e;
    double m = frexp(x, &e); /* x = m 2^e, 0.5 <= |m| < 1 */
    if (e < -13)             /* subnormal in fp16: steps of 2^-24 */
        return (float)(nearbyint(x * 16777216.0) / 16777216.0);
    return (float)ldexp(nearbyint(m * 2048.0) / 2048.0, e);
}

/* True when a node of g or of its subgraphs reads name. */
static bool name_used(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        for (size_t k = 0; k < nd->n_input; k++)
            if (nd->input[k] && !strcmp(nd->input[k], name))
                return true;
        for (size_t a = 0; a < nd->n_attribute; a++)
            if (nd->attribute[a]->g && name_used(nd->attribute[a]->g, name))
                return true;
    }
    for (size_t i = 0; i < g->n_output; i++)
        if (g->output[i]->name && !strcmp(g->output[i]->name, name))
            return true;
    return false;
}

/* Drops the float initializers that no node reads any more (the weights replaced by their
 * int8 copies): ONNX Runtime warns about each, and they double the file. */
static void drop_unused(Onnx__GraphProto *g)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        if (t->name && !name_used(g, t->name))
            onnx__tensor_proto__free_unpacked(t, NULL);
        else
            g->initializer[k++] = t;
    }
    g->n_initializer = k;
}

/* The layer nd's bias (input 2) becomes the new initializer "<layer>/bias_float" of
 * channels values (added to the outer graph g). */
static bool set_bias(Onnx__GraphProto *g, Onnx__NodeProto *nd, const char *layer,
                     const float *bias, int64_t channels)
{
    char *name = dupf2(layer, "/bias_float"), *in = name ? strdup(name) : NULL;
    int64_t d[1] = {channels};
    bool ok = in && push_init(g, initializer(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d,
                                             bias, sizeof(float) * (size_t)channels));
    free(name);
    if (ok && nd->n_input < 3) {
        char **a = realloc(nd->input, sizeof(char *) * 3);
        ok = a != NULL;
        if (a) {
            nd->input = a;
            a[nd->n_input++] = NULL;
            if (nd->n_input < 3)
                a[nd->n_input++] = NULL;
        }
    }
    if (ok) {
        free(nd->input[2]);
        nd->input[2] = in;
    } else {
        free(in);
    }
    return ok;
}

/* Decodes src again; with the default-domain opset in *opset. */
static nb_err load_proto(const char *src, Onnx__ModelProto **out, int64_t *opset, nb_status *st)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    nb_err e = nb_read_file(src, &buf, &len, st);
    if (e)
        return e;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!mp || !mp->graph) {
        if (mp)
            onnx__model_proto__free_unpacked(mp, NULL);
        return nb_fail(st, NB_ERR_FORMAT, "%s: cannot be decoded again", src);
    }
    *opset = 0;
    for (size_t i = 0; i < mp->n_opset_import; i++)
        if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
            *opset = mp->opset_import[i]->version;
    *out = mp;
    return NB_OK;
}

/* Encodes mp into dst (through dst.tmp and a rename). */
static nb_err save_proto(const Onnx__ModelProto *mp, const char *dst, nb_status *st)
{
    nb_err e = NB_OK;
    size_t sz = onnx__model_proto__get_packed_size(mp);
    uint8_t *out = malloc(sz ? sz : 1);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", dst);
    FILE *f = out ? fopen(tmp, "wb") : NULL;
    if (!out)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    else if (!f)
        e = nb_fail(st, NB_ERR_IO, "%s: %s", tmp, strerror(errno));
    else {
        onnx__model_proto__pack(mp, out);
        bool bad = fwrite(out, 1, sz, f) != sz;
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, dst)) {
            remove(tmp);
            e = nb_fail(st, NB_ERR_IO, "%s: write failed", dst);
        }
    }
    free(out);
    return e;
}

/* The graph holding the node named name (g or one of its subgraphs, depth first) with the
 * node's index in *at, or NULL. */
static Onnx__GraphProto *find_node(Onnx__GraphProto *g, const char *name, size_t *at)
{
    for (size_t i = 0; i < g->n_node; i++) {
        if (g->node[i]->name && !strcmp(g->node[i]->name, name)) {
            *at = i;
            return g;
        }
        for (size_t a = 0; a < g->node[i]->n_attribute; a++) {
            Onnx__GraphProto *sub = g->node[i]->attribute[a]->g;
            Onnx__GraphProto *r = sub ? find_node(sub, name, at) : NULL;
            if (r)
                return r;
        }
    }
    return NULL;
}

nb_err nb_write_fake_quant(const char *src, const char *dst, const nb_qlayer *ls, int n,
                           bool fp16_scales, nb_status *st)
{
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    nb_err e = load_proto(src, &mp, &opset, st);
    if (e)
        return e;
    Onnx__GraphProto *g = mp->graph;
    if (opset < 13)
        e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s: opset %lld; the fake-quant model needs 13 or "
                    "more (per-channel DequantizeLinear)", src, (long long)opset);
    for (int li = 0; li < n && !e; li++) {
        const nb_qlayer *l = &ls[li];
        size_t at = 0;
        Onnx__GraphProto *ng = find_node(g, l->node, &at); /* new initializers go to g */
        if (!ng) {
            e = nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' is not a node of the model", src,
                        l->node);
            break;
        }
        Onnx__NodeProto *nd = ng->node[at];
        char *p_s = dupf2(l->node, "/scale_d"), *p_z = dupf2(l->node, "/offset_d"),
             *p_q = dupf2(l->node, "/act_q"), *p_dq = dupf2(l->node, "/act_dq"),
             *p_wq = dupf2(l->node, "/w_int8"), *p_ws = dupf2(l->node, "/scale_w"),
             *p_wz = dupf2(l->node, "/offset_w"), *p_wdq = dupf2(l->node, "/w_dq"),
             *p_qn = dupf2(l->node, "/QuantizeLinear"), *p_dn = dupf2(l->node, "/DequantizeLinear"),
             *p_wn = dupf2(l->node, "/DequantizeLinear_w");
        bool ok = p_s && p_z && p_q && p_dq && p_wq && p_ws && p_wz && p_wdq && p_qn && p_dn &&
                  p_wn;
        float sd = fp16_scales ? fp16_round(l->scale_d) : l->scale_d;
        int8_t zd = (int8_t)l->offset_d;
        float *sw = ok ? malloc(sizeof(float) * (size_t)l->channels) : NULL;
        int8_t *zw = ok ? calloc((size_t)l->channels, 1) : NULL;
        ok = ok && sw && zw;
        for (int64_t c = 0; ok && c < l->channels; c++)
            sw[c] = l->scale_w[c];
        int64_t cdim[1] = {l->channels};
        int crank = l->channels > 1 ? 1 : 0; /* one scale: a scalar, per tensor */
        const char *qin[3] = {nd->input[0], p_s, p_z}, *dqin[3] = {p_q, p_s, p_z};
        const char *wdq[3] = {p_wq, p_ws, p_wz};
        ok = ok && push_init(g, initializer(p_s, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &sd,
                                            sizeof sd)) &&
             push_init(g, initializer(p_z, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, NULL, &zd, 1)) &&
             push_init(g, initializer(p_wq, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, l->w_rank,
                                      l->w_dims, l->w_q, (size_t)l->w_numel)) &&
             push_init(g, initializer(p_ws, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, crank, cdim, sw,
                                      sizeof(float) * (size_t)l->channels)) &&
             push_init(g, initializer(p_wz, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, crank, cdim, zw,
                                      (size_t)l->channels)) &&
             push_node(ng, at, node(p_wn, "DequantizeLinear", wdq, 3, p_wdq,
                                    crank ? l->w_axis : -1000));
        size_t act_nodes = 2;
        if (ok && l->act_bits == 8) {
            ok = push_node(ng, at + 1, node(p_qn, "QuantizeLinear", qin, 3, p_q, -1000)) &&
                 push_node(ng, at + 2, node(p_dn, "DequantizeLinear", dqin, 3, p_dq, -1000));
        } else if (ok) {
            /* int16 (the cube's s16 x s8): QuantizeLinear takes int16 only from opset 21, so
               the same arithmetic in float ops: Mul(Sub(Clip(Add(Round(Div(x, s)), zp), lo,
               hi), zp), s), Round halving to even as QuantizeLinear */
            act_nodes = 6;
            float zf = (float)l->offset_d, lo = -32768.0f, hi = 32767.0f;
            char *k_z = dupf2(l->node, "/offset_d_f"), *k_lo = dupf2(l->node, "/qmin"),
                 *k_hi = dupf2(l->node, "/qmax");
            char *t[5], *nn[6];
            static const char *const ops[6] = {"Div", "Round", "Add", "Clip", "Sub", "Mul"};
            for (int i = 0; i < 6; i++) {
                char sfx[32];
                snprintf(sfx, sizeof sfx, "/q16_%s", ops[i]);
                nn[i] = dupf2(l->node, sfx);
                if (i < 5) {
                    snprintf(sfx, sizeof sfx, "/q16_%d", i);
                    t[i] = dupf2(l->node, sfx);
                }
            }
            ok = k_z && k_lo && k_hi;
            for (int i = 0; i < 6; i++)
                ok = ok && nn[i] && (i == 5 || t[i]);
            const char *in0[2] = {nd->input[0], p_s}, *in1[1] = {ok ? t[0] : ""},
                       *in2[2] = {ok ? t[1] : "", k_z}, *in3[3] = {ok ? t[2] : "", k_lo, k_hi},
                       *in4[2] = {ok ? t[3] : "", k_z}, *in5[2] = {ok ? t[4] : "", p_s};
            ok = ok &&
                 push_init(g, initializer(k_z, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &zf,
                                          sizeof zf)) &&
                 push_init(g, initializer(k_lo, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &lo,
                                          sizeof lo)) &&
                 push_init(g, initializer(k_hi, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &hi,
                                          sizeof hi)) &&
                 push_node(ng, at + 1, node(nn[0], "Div", in0, 2, t[0], -1000)) &&
                 push_node(ng, at + 2, node(nn[1], "Round", in1, 1, t[1], -1000)) &&
                 push_node(ng, at + 3, node(nn[2], "Add", in2, 2, t[2], -1000)) &&
                 push_node(ng, at + 4, node(nn[3], "Clip", in3, 3, t[3], -1000)) &&
                 push_node(ng, at + 5, node(nn[4], "Sub", in4, 2, t[4], -1000)) &&
                 push_node(ng, at + 6, node(nn[5], "Mul", in5, 2, p_dq, -1000));
            free(k_z), free(k_lo), free(k_hi);
            for (int i = 0; i < 6; i++) {
                free(nn[i]);
                if (i < 5)
                    free(t[i]);
            }
        }
        if (ok) { /* the layer now reads the fake-quantized input and weights */
            nd = ng->node[at + 1 + act_nodes];
            char *a = strdup(p_dq), *w = strdup(p_wdq);
            ok = a && w;
            if (ok) {
                free(nd->input[0]);
                nd->input[0] = a;
                free(nd->input[1]);
                nd->input[1] = w;
            } else {
                free(a), free(w);
            }
        }
        if (ok && l->bias) /* the corrected bias */
            ok = set_bias(g, nd, l->node, l->bias, l->channels);
        free(sw), free(zw);
        free(p_s), free(p_z), free(p_q), free(p_dq), free(p_wq), free(p_ws), free(p_wz);
        free(p_wdq), free(p_qn), free(p_dn), free(p_wn);
        if (!ok)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!e)
        drop_unused(g);
    if (!e)
        e = save_proto(mp, dst, st);
    onnx__model_proto__free_unpacked(mp, NULL);
    return e;
}

/* ---- the deploy model ---- */

/* Float values of a FLOAT initializer (raw_data or float_data): a malloc'ed copy, or NULL. */
static float *float_values(const Onnx__TensorProto *t, int64_t *n)
{
    if (!t->has_data_type || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return NULL;
    int64_t cnt = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        cnt *= t->dims[i];
    float *v = malloc(sizeof(float) * (size_t)(cnt + 1));
    if (!v)
        return NULL;
    if (t->has_raw_data && t->raw_data.len == sizeof(float) * (size_t)cnt)
        memcpy(v, t->raw_data.data, t->raw_data.len);
    else if (t->n_float_data == (size_t)cnt)
        memcpy(v, t->float_data, sizeof(float) * (size_t)cnt);
    else {
        free(v);
        return NULL;
    }
    *n = cnt;
    return v;
}

/* The initializer name in ng, else in the model's graph g (a branch reads outer names). */
static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g,
                                          const Onnx__GraphProto *ng, const char *name)
{
    for (int pass = 0; pass < 2; pass++) {
        const Onnx__GraphProto *h = pass ? g : ng;
        for (size_t i = 0; i < h->n_initializer; i++)
            if (h->initializer[i]->name && !strcmp(h->initializer[i]->name, name))
                return h->initializer[i];
    }
    return NULL;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float dflt)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name) &&
            n->attribute[i]->has_f)
            return n->attribute[i]->f;
    return dflt;
}

nb_err nb_write_deploy(const char *src, const char *dst, const nb_qlayer *ls, int n,
                       nb_status *st)
{
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    nb_err e = load_proto(src, &mp, &opset, st);
    if (e)
        return e;
    Onnx__GraphProto *g = mp->graph;
    for (int li = 0; li < n && !e; li++) {
        const nb_qlayer *l = &ls[li];
        size_t at = 0;
        Onnx__GraphProto *ng = find_node(g, l->node, &at); /* new initializers go to g */
        if (!ng) {
            e = nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' is not a node of the model", src,
                        l->node);
            break;
        }
        Onnx__NodeProto *nd = ng->node[at];
        bool gemm = !strcmp(nd->op_type, "Gemm");
        float alpha = gemm ? attr_f(nd, "alpha", 1) : 1, beta = gemm ? attr_f(nd, "beta", 1) : 1;
        /* per output channel: deq_scale = alpha x scale_d x scale_w, and the int32 bias
           round(beta x b / deq_scale) - offset_d x (sum of the channel's int8 weights) */
        int64_t stride = 1;
        for (int d = (int)l->w_axis + 1; d < l->w_rank; d++)
            stride *= l->w_dims[d];
        int64_t *wsum = calloc((size_t)l->channels, sizeof(int64_t));
        int32_t *bias = calloc((size_t)l->channels, sizeof(int32_t));
        uint64_t *deq = calloc((size_t)l->channels, sizeof(uint64_t));
        float *bf = NULL;
        int64_t nb = 0;
        if (!wsum || !bias || !deq) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        } else {
            for (int64_t i = 0; i < l->w_numel; i++)
                wsum[l->channels > 1 ? (i / stride) % l->channels : 0] += l->w_q[i];
            if (l->bias) {
                bf = malloc(sizeof(float) * (size_t)l->channels);
                if (bf)
                    memcpy(bf, l->bias, sizeof(float) * (size_t)l->channels);
                nb = l->channels;
            } else if (nd->n_input > 2 && nd->input[2] && nd->input[2][0]) {
                const Onnx__TensorProto *bt = find_init(g, ng, nd->input[2]);
                bf = bt ? float_values(bt, &nb) : NULL;
                if (!bf || (nb != l->channels && nb != 1))
                    e = nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s': its bias '%s' is not a "
                                "constant float of %lld channels", l->node, nd->input[2],
                                (long long)l->channels);
            }
        }
        for (int64_t c = 0; !e && c < l->channels; c++) {
            float ds = alpha * l->scale_d * l->scale_w[c];
            double b = bf ? beta * (double)bf[nb == 1 ? 0 : c] : 0;
            double v = (ds > 0 ? nearbyint(b / ds) : 0) - (double)l->offset_d * (double)wsum[c];
            if (v < INT32_MIN || v > INT32_MAX)
                e = nb_fail(st, NB_ERR_DATA, "layer '%s': channel %lld's int32 bias %.0f is out of "
                            "range", l->node, (long long)c, v);
            bias[c] = (int32_t)v;
            uint32_t bits;
            memcpy(&bits, &ds, sizeof bits);
            deq[c] = bits; /* the fp32 bits in the low 32 (GE's AscendDequant uint64) */
        }
        free(bf);
        char *p_x = dupf2(l->node, "/x_int8"), *p_w = dupf2(l->node, "/w_int8"),
             *p_b = dupf2(l->node, "/bias_int32"), *p_ds = dupf2(l->node, "/deq_scale"),
             *p_acc = dupf2(l->node, "/int32"), *p_qn = dupf2(l->node, "/AscendQuant"),
             *p_dn = dupf2(l->node, "/AscendDequant"), *y = NULL;
        bool ok = !e && p_x && p_w && p_b && p_ds && p_acc && p_qn && p_dn &&
                  (y = strdup(nd->output[0]));
        int64_t cdim[1] = {l->channels};
        if (ok) {
            Onnx__AttributeProto *qa[3] = {attr_float("scale", 1.0f / l->scale_d),
                                           attr_float("offset", (float)l->offset_d),
                                           attr_int("dst_bits", l->act_bits)};
            Onnx__AttributeProto *da[1] = {attr_int("dtype", 10)}; /* fp16 out */
            const char *qin[1] = {nd->input[0]}, *din[2] = {p_acc, p_ds};
            ok = push_init(g, initializer(p_w, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, l->w_rank,
                                          l->w_dims, l->w_q, (size_t)l->w_numel)) &&
                 push_init(g, initializer(p_b, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, cdim,
                                          bias, sizeof(int32_t) * (size_t)l->channels)) &&
                 push_init(g, initializer(p_ds, ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, 1, cdim,
                                          deq, sizeof(uint64_t) * (size_t)l->channels)) &&
                 push_node(ng, at, node_attrs(p_qn, "AscendQuant", NB_NPU_DOMAIN, qin, 1, p_x,
                                              qa, 3)) &&
                 push_node(ng, at + 2, node_attrs(p_dn, "AscendDequant", NB_NPU_DOMAIN, din, 2,
                                                  y, da, 1));
        }
        if (ok) { /* the cube op: int8 x, int8 W, int32 bias -> int32, in the NPU domain */
            nd = ng->node[at + 1];
            char **in = realloc(nd->input, sizeof(char *) * 3);
            char *nx = strdup(p_x), *nw = strdup(p_w), *nbias = strdup(p_b), *nacc = strdup(p_acc);
            char *dom = strdup(NB_NPU_DOMAIN);
            ok = in && nx && nw && nbias && nacc && dom;
            if (in)
                nd->input = in;
            if (ok) {
                for (size_t i = 0; i < nd->n_input; i++)
                    free(nd->input[i]);
                in[0] = nx, in[1] = nw, in[2] = nbias;
                nd->n_input = 3;
                free(nd->output[0]);
                nd->output[0] = nacc;
                free(nd->domain);
                nd->domain = dom;
            } else {
                free(nx), free(nw), free(nbias), free(nacc), free(dom);
            }
        }
        free(wsum), free(bias), free(deq);
        free(p_x), free(p_w), free(p_b), free(p_ds), free(p_acc), free(p_qn), free(p_dn);
        if (!ok) {
            free(y);
            if (!e)
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
    }
    if (!e) { /* the NPU domain's opset */
        Onnx__OperatorSetIdProto **a =
            realloc(mp->opset_import, sizeof *a * (mp->n_opset_import + 1));
        Onnx__OperatorSetIdProto *o = malloc(sizeof *o);
        if (a)
            mp->opset_import = a;
        if (!a || !o) {
            free(o);
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        } else {
            onnx__operator_set_id_proto__init(o);
            o->domain = strdup(NB_NPU_DOMAIN);
            o->has_version = 1;
            o->version = 1;
            a[mp->n_opset_import++] = o;
        }
    }
    if (!e)
        drop_unused(g);
    if (!e)
        e = save_proto(mp, dst, st);
    onnx__model_proto__free_unpacked(mp, NULL);
    return e;
}
