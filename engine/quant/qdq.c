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

/* A node op(in...) -> out, with an optional int attribute axis (axis < -100: none). */
static Onnx__NodeProto *node(const char *name, const char *op, const char *const *in, int n_in,
                             const char *out, int64_t axis)
{
    Onnx__NodeProto *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    onnx__node_proto__init(n);
    n->name = strdup(name);
    n->op_type = strdup(op);
    n->domain = strdup("");
    n->n_input = (size_t)n_in;
    n->input = calloc((size_t)n_in, sizeof(char *));
    n->n_output = 1;
    n->output = calloc(1, sizeof(char *));
    bool ok = n->name && n->op_type && n->domain && n->input && n->output;
    for (int i = 0; ok && i < n_in; i++)
        ok = (n->input[i] = strdup(in[i])) != NULL;
    ok = ok && (n->output[0] = strdup(out)) != NULL;
    if (ok && axis > -100) {
        Onnx__AttributeProto *a = malloc(sizeof *a);
        n->attribute = malloc(sizeof(Onnx__AttributeProto *));
        ok = a && n->attribute;
        if (ok) {
            onnx__attribute_proto__init(a);
            a->name = strdup("axis");
            a->has_type = 1;
            a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            a->has_i = 1;
            a->i = axis;
            n->attribute[0] = a;
            n->n_attribute = 1;
            ok = a->name != NULL;
        } else {
            free(a);
        }
    }
    if (!ok) {
        onnx__node_proto__free_unpacked(n, NULL);
        return NULL;
    }
    return n;
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

nb_err nb_write_fake_quant(const char *src, const char *dst, const nb_qlayer *ls, int n,
                           bool fp16_scales, nb_status *st)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    nb_err e = nb_read_file(src, &buf, &len, st);
    if (e)
        return e;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!mp || !mp->graph)
        return nb_fail(st, NB_ERR_FORMAT, "%s: cannot be decoded again", src);
    Onnx__GraphProto *g = mp->graph;
    int64_t opset = 0;
    for (size_t i = 0; i < mp->n_opset_import; i++)
        if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
            opset = mp->opset_import[i]->version;
    if (opset < 13)
        e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s: opset %lld; the fake-quant model needs 13 or "
                    "more (per-channel DequantizeLinear)", src, (long long)opset);
    for (int li = 0; li < n && !e; li++) {
        const nb_qlayer *l = &ls[li];
        size_t at = 0;
        while (at < g->n_node && (!g->node[at]->name || strcmp(g->node[at]->name, l->node)))
            at++;
        if (at == g->n_node) {
            e = nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' is not a node of the main graph", src,
                        l->node);
            break;
        }
        if (l->act_bits != 8) {
            e = nb_fail(st, NB_ERR_UNSUPPORTED, "layer '%s': int16 activations need opset 21 "
                        "QuantizeLinear; the fake-quant model has int8 only", l->node);
            break;
        }
        Onnx__NodeProto *nd = g->node[at];
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
             push_node(g, at, node(p_wn, "DequantizeLinear", wdq, 3, p_wdq,
                                   crank ? l->w_axis : -1000)) &&
             push_node(g, at + 1, node(p_qn, "QuantizeLinear", qin, 3, p_q, -1000)) &&
             push_node(g, at + 2, node(p_dn, "DequantizeLinear", dqin, 3, p_dq, -1000));
        if (ok) { /* the layer now reads the fake-quantized input and weights */
            nd = g->node[at + 3];
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
        free(sw), free(zw);
        free(p_s), free(p_z), free(p_q), free(p_dq), free(p_wq), free(p_ws), free(p_wz);
        free(p_wdq), free(p_qn), free(p_dn), free(p_wn);
        if (!ok)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!e)
        drop_unused(g);
    if (!e) {
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
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    return e;
}
