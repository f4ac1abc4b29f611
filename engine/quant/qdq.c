/* nanobench: the fake-quant model, standard ONNX QuantizeLinear / DequantizeLinear around
 * every quantized layer (include/nb/quant.h, nb_write_fake_quant).
 *
 * The original file is decoded with protobuf-c, edited and encoded again, so that
 * everything nanobench does not touch (other nodes, metadata, names) stays as it was.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/ir.h"
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

/* Replaces input i of nd by name (a copy); false when out of memory. */
static bool set_input(Onnx__NodeProto *nd, size_t i, const char *name)
{
    char *c = strdup(name);
    if (!c || i >= nd->n_input) {
        free(c);
        return false;
    }
    free(nd->input[i]);
    nd->input[i] = c;
    return true;
}

/* Removes node k of g (freed). */
static void remove_node(Onnx__GraphProto *g, size_t k)
{
    onnx__node_proto__free_unpacked(g->node[k], NULL);
    memmove(g->node + k, g->node + k + 1, sizeof *g->node * (g->n_node - k - 1));
    g->n_node--;
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
 * int8 copies), in g and in its subgraphs (an If branch's own initializers): ONNX Runtime
 * warns about each, and they double the file. */
static void drop_unused_in(Onnx__GraphProto *g, bool top)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g)
                drop_unused_in(g->node[i]->attribute[a]->g, false);
    size_t k = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        if (t->name && !name_used(g, t->name)) {
            /* an IR 3 model lists initializers as graph inputs too (the main graph's) */
            size_t m = 0;
            for (size_t j = 0; top && j < g->n_input; j++) {
                if (g->input[j]->name && !strcmp(g->input[j]->name, t->name))
                    onnx__value_info_proto__free_unpacked(g->input[j], NULL);
                else
                    g->input[m++] = g->input[j];
            }
            if (top)
                g->n_input = m;
            onnx__tensor_proto__free_unpacked(t, NULL);
        } else {
            g->initializer[k++] = t;
        }
    }
    g->n_initializer = k;
}

static void drop_unused(Onnx__GraphProto *g) { drop_unused_in(g, true); }

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
    Onnx__ModelProto *mp; /* through the importer's gate: nothing here reads a field first */
    e = nb_onnx_decode(buf, len, src, &mp, NULL, st);
    free(buf);
    if (e)
        return e;
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
    nb_onnx_prepare_pack((Onnx__ModelProto *)mp); /* the file's absent strings absent again */
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

/* The graph holding layer l's node (index in *at), or NULL with NB_ERR_GRAPH in st. */
static Onnx__GraphProto *layer_graph(const char *src, Onnx__GraphProto *g, const nb_qlayer *l,
                                     size_t *at, nb_status *st)
{
    Onnx__GraphProto *ng = find_node(g, l->node, at);
    if (!ng)
        nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' is not a node of the model", src, l->node);
    return ng;
}

/* A MatMul's weights in the fake-quant model: the dequantized values (int8 x scale_w in
 * float32, what DequantizeLinear computes) as an initializer read through an Identity. With
 * DequantizeLinear on both operands, ONNX Runtime's default optimizations fuse the MatMul
 * into MatMulIntegerToFloat, whose AVX2 kernel saturates 16-bit pair sums on weights near
 * +-127 (and refuses batched weights); the float form gives the same numbers unfused. */
static bool float_weights(Onnx__GraphProto *g, Onnx__GraphProto *ng, size_t at,
                          const nb_qlayer *l, const float *sw, const char *out)
{
    float *w = malloc(sizeof(float) * (size_t)(l->w_numel + 1));
    char *name = dupf2(l->node, "/w_float"), *nn = dupf2(l->node, "/Identity_w");
    bool ok = w && name && nn;
    int64_t stride = 1;
    for (int d = (int)l->w_axis + 1; d < l->w_rank; d++)
        stride *= l->w_dims[d];
    for (int64_t i = 0; ok && i < l->w_numel; i++)
        w[i] = (float)l->w_q[i] * sw[l->channels > 1 ? (i / stride) % l->channels : 0];
    const char *in[1] = {name};
    ok = ok && push_init(g, initializer(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, l->w_rank,
                                        l->w_dims, w, sizeof(float) * (size_t)l->w_numel)) &&
         push_node(ng, at, node(nn, "Identity", in, 1, out, -1000));
    free(w), free(name), free(nn);
    return ok;
}


/* A MatMul of two activations at ng->node[at]: its second operand through QuantizeLinear ->
 * DequantizeLinear (scale_b, int8 zero point offset_b) into out; two nodes before it. */
static bool b_fake_quant(Onnx__GraphProto *g, Onnx__GraphProto *ng, size_t at,
                         const nb_qlayer *l, bool fp16_scales, const char *out)
{
    Onnx__NodeProto *nd = ng->node[at];
    char *p_s = dupf2(l->node, "/scale_b"), *p_z = dupf2(l->node, "/offset_b"),
         *p_q = dupf2(l->node, "/act_b_q"), *p_qn = dupf2(l->node, "/QuantizeLinear_b"),
         *p_dn = dupf2(l->node, "/DequantizeLinear_b");
    float sb = fp16_scales ? fp16_round(l->scale_b) : l->scale_b;
    int8_t zb = (int8_t)l->offset_b;
    bool ok = p_s && p_z && p_q && p_qn && p_dn && nd->n_input > 1;
    const char *qin[3] = {ok ? nd->input[1] : "", p_s, p_z}, *dqin[3] = {p_q, p_s, p_z};
    ok = ok &&
         push_init(g, initializer(p_s, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &sb,
                                  sizeof sb)) &&
         push_init(g, initializer(p_z, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, NULL, &zb, 1)) &&
         push_node(ng, at, node(p_qn, "QuantizeLinear", qin, 3, p_q, -1000)) &&
         push_node(ng, at + 1, node(p_dn, "DequantizeLinear", dqin, 3, out, -1000));
    free(p_s), free(p_z), free(p_q), free(p_qn), free(p_dn);
    return ok;
}

/* An LSTM or GRU at ng->node[idx], already reading the fake-quantized x and W: its R through
 * DequantizeLinear (int8, scale_r per gate row on axis 1) and its initial_h, when given,
 * through QuantizeLinear -> DequantizeLinear (scale_h, int8). */
static bool rnn_fake_quant(Onnx__GraphProto *g, Onnx__GraphProto *ng, size_t idx,
                           const nb_qlayer *l, bool fp16_scales)
{
    char *p_rq = dupf2(l->node, "/r_int8"), *p_rs = dupf2(l->node, "/scale_r"),
         *p_rz = dupf2(l->node, "/offset_r"), *p_rdq = dupf2(l->node, "/r_dq"),
         *p_rn = dupf2(l->node, "/DequantizeLinear_r"), *p_hs = dupf2(l->node, "/scale_h"),
         *p_hz = dupf2(l->node, "/offset_h"), *p_hq = dupf2(l->node, "/h_q"),
         *p_hdq = dupf2(l->node, "/h_dq"), *p_hqn = dupf2(l->node, "/QuantizeLinear_h"),
         *p_hdn = dupf2(l->node, "/DequantizeLinear_h");
    int8_t *zr = calloc((size_t)l->channels, 1);
    bool ok = p_rq && p_rs && p_rz && p_rdq && p_rn && p_hs && p_hz && p_hq && p_hdq && p_hqn &&
              p_hdn && zr;
    float sh = fp16_scales ? fp16_round(l->scale_h) : l->scale_h;
    int8_t zh = (int8_t)l->offset_h;
    int64_t cdim[1] = {l->channels};
    const char *rdq[3] = {p_rq, p_rs, p_rz};
    ok = ok &&
         push_init(g, initializer(p_rq, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 3, l->r_dims, l->r_q,
                                  (size_t)l->r_numel)) &&
         push_init(g, initializer(p_rs, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, cdim, l->scale_r,
                                  sizeof(float) * (size_t)l->channels)) &&
         push_init(g, initializer(p_rz, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1, cdim, zr,
                                  (size_t)l->channels)) &&
         push_node(ng, idx, node(p_rn, "DequantizeLinear", rdq, 3, p_rdq, 1));
    Onnx__NodeProto *nd = ok ? ng->node[++idx] : NULL;
    ok = ok && set_input(nd, 2, p_rdq);
    if (ok && nd->n_input > 5 && nd->input[5] && nd->input[5][0]) {
        const char *qin[3] = {nd->input[5], p_hs, p_hz}, *dqin[3] = {p_hq, p_hs, p_hz};
        ok = push_init(g, initializer(p_hs, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &sh,
                                      sizeof sh)) &&
             push_init(g, initializer(p_hz, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, NULL, &zh, 1)) &&
             push_node(ng, idx, node(p_hqn, "QuantizeLinear", qin, 3, p_hq, -1000)) &&
             push_node(ng, idx + 1, node(p_hdn, "DequantizeLinear", dqin, 3, p_hdq, -1000)) &&
             set_input(ng->node[idx + 2], 5, p_hdq);
    }
    free(p_rq), free(p_rs), free(p_rz), free(p_rdq), free(p_rn), free(p_hs), free(p_hz);
    free(p_hq), free(p_hdq), free(p_hqn), free(p_hdn), free(zr);
    return ok;
}

/* The Conv at ng->node[*at] takes over the output of the BatchNormalization that alone reads
 * its output (folded into its weights and bias by the caller), which is removed; *at is the
 * Conv's index after. False when there is no such node or out of memory. */
static bool fuse_bn(Onnx__GraphProto *ng, size_t *at)
{
    Onnx__NodeProto *cv = ng->node[*at];
    size_t k = 0;
    while (k < ng->n_node && !(ng->node[k]->op_type &&
                               !strcmp(ng->node[k]->op_type, "BatchNormalization") &&
                               ng->node[k]->n_input > 0 && ng->node[k]->input[0] &&
                               !strcmp(ng->node[k]->input[0], cv->output[0])))
        k++;
    if (k == ng->n_node || ng->node[k]->n_output < 1)
        return false;
    char *y = strdup(ng->node[k]->output[0]);
    if (!y)
        return false;
    free(cv->output[0]);
    cv->output[0] = y;
    remove_node(ng, k);
    if (k < *at)
        (*at)--;
    return true;
}

/* Removes attribute a of nd (freed). */
static void drop_attr(Onnx__NodeProto *nd, size_t a)
{
    onnx__attribute_proto__free_unpacked(nd->attribute[a], NULL);
    memmove(nd->attribute + a, nd->attribute + a + 1,
            sizeof *nd->attribute * (nd->n_attribute - a - 1));
    nd->n_attribute--;
}

/* Appends input name to nd (after n_input, empty names filling the gap to slot at). */
static bool add_input_at(Onnx__NodeProto *nd, size_t at, const char *name)
{
    size_t n = at + 1 > nd->n_input ? at + 1 : nd->n_input;
    char **in = realloc(nd->input, sizeof *in * (n + 1));
    if (!in)
        return false;
    nd->input = in;
    for (size_t k = nd->n_input; k < n; k++)
        in[k] = NULL;
    for (size_t k = nd->n_input; k < n; k++)
        if (!(in[k] = strdup(k == at ? name : "")))
            return false;
    if (at < nd->n_input && !set_input(nd, at, name))
        return false;
    nd->n_input = n;
    return true;
}

/* The ops whose signature or meaning changed at opset 13, rewritten to it in g and its
 * subgraphs (ONNX Changelog.md, opset 13): Squeeze, Unsqueeze and ReduceSum take axes, and
 * Split its split, as an input instead of an attribute; Softmax, LogSoftmax and Hardmax of
 * opset 1-12 flatten their input to 2-D at axis (default 1) and normalize the second dim,
 * where 13 normalizes axis alone: Flatten(axis) -> op(axis -1) -> Reshape(Shape(x)) keeps
 * the old meaning (axis -1 already meant the same). The fake-quant model needs opset 13
 * (per-channel DequantizeLinear, issue 26: paddle2onnx writes opset 11). */
static nb_err upgrade_to_13(const char *src, Onnx__GraphProto *root, Onnx__GraphProto *g,
                            int *seq, nb_status *st)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g) {
                nb_err e = upgrade_to_13(src, root, g->node[i]->attribute[a]->g, seq, st);
                if (e)
                    return e;
            }
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *nd = g->node[i];
        if (nd->domain[0] && strcmp(nd->domain, "ai.onnx"))
            continue;
        const char *op = nd->op_type;
        bool axes_in = !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
                       !strcmp(op, "ReduceSum");
        bool split = !strcmp(op, "Split");
        if (axes_in || split) {
            const char *an = split ? "split" : "axes";
            for (size_t a = 0; a < nd->n_attribute; a++) {
                Onnx__AttributeProto *at = nd->attribute[a];
                if (strcmp(at->name, an))
                    continue;
                char nm[64];
                snprintf(nm, sizeof nm, "/opset13/%s_%d", an, (*seq)++);
                char *iname = dupf2(nd->name, nm);
                int64_t d[1] = {(int64_t)at->n_ints};
                bool ok = iname &&
                          push_init(root, initializer(iname, ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
                                                      1, d, at->ints,
                                                      sizeof(int64_t) * at->n_ints)) &&
                          add_input_at(nd, 1, iname);
                free(iname);
                if (!ok)
                    return nb_fail(st, NB_ERR_NOMEM, "out of memory");
                drop_attr(nd, a);
                break;
            }
            continue;
        }
        if (strcmp(op, "Softmax") && strcmp(op, "LogSoftmax") && strcmp(op, "Hardmax"))
            continue;
        int64_t axis = 1;
        size_t ai = nd->n_attribute;
        for (size_t a = 0; a < nd->n_attribute; a++)
            if (!strcmp(nd->attribute[a]->name, "axis"))
                axis = nd->attribute[a]->i, ai = a;
        if (axis == -1 || nd->n_input < 1 || nd->n_output < 1)
            continue;
        /* x -> Flatten(axis) -> op(axis -1) -> Reshape(., Shape(x)) -> y */
        char tag[64];
        snprintf(tag, sizeof tag, "/opset13_%d", (*seq)++);
        char *flat = dupf2(nd->name, tag), *shp = NULL, *mid = NULL, *fl_n = NULL,
             *sh_n = NULL, *rs_n = NULL;
        if (flat) {
            shp = dupf2(flat, "/shape"), mid = dupf2(flat, "/normalized");
            fl_n = dupf2(flat, "/Flatten"), sh_n = dupf2(flat, "/Shape"),
            rs_n = dupf2(flat, "/Reshape");
        }
        bool ok = flat && shp && mid && fl_n && sh_n && rs_n;
        char *x = ok ? strdup(nd->input[0]) : NULL, *y = ok ? strdup(nd->output[0]) : NULL;
        ok = ok && x && y;
        if (ok) {
            const char *fin[1] = {x}, *rin[2] = {mid, shp};
            ok = push_node(g, i, node(fl_n, "Flatten", fin, 1, flat, axis)) &&
                 push_node(g, i + 1, node(sh_n, "Shape", fin, 1, shp, -1000));
            if (ok) {
                i += 2; /* nd is now at i */
                ok = set_input(nd, 0, flat);
                if (ok) {
                    free(nd->output[0]);
                    nd->output[0] = strdup(mid);
                    ok = nd->output[0] != NULL;
                }
                if (ok && ai < nd->n_attribute)
                    nd->attribute[ai]->i = -1;
                else if (ok) {
                    Onnx__AttributeProto **aa =
                        realloc(nd->attribute, sizeof *aa * (nd->n_attribute + 1));
                    Onnx__AttributeProto *na = attr_int("axis", -1);
                    ok = aa && na;
                    if (aa)
                        nd->attribute = aa;
                    if (ok)
                        aa[nd->n_attribute++] = na;
                    else if (na)
                        onnx__attribute_proto__free_unpacked(na, NULL);
                }
                ok = ok && push_node(g, i + 1, node(rs_n, "Reshape", rin, 2, y, -1000));
                if (ok)
                    i++;
            }
        }
        free(flat), free(shp), free(mid), free(fl_n), free(sh_n), free(rs_n), free(x), free(y);
        if (!ok)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    return NB_OK;
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
    if (opset < 13) { /* per-channel DequantizeLinear needs 13: the model rewritten to it */
        int seq = 0;
        e = upgrade_to_13(src, g, g, &seq, st);
        for (size_t i = 0; !e && i < mp->n_opset_import; i++)
            if (!mp->opset_import[i]->domain[0] || !strcmp(mp->opset_import[i]->domain, "ai.onnx"))
                mp->opset_import[i]->version = 13, mp->opset_import[i]->has_version = 1;
    }
    for (int li = 0; li < n && !e; li++) {
        const nb_qlayer *l = &ls[li];
        size_t at = 0;
        Onnx__GraphProto *ng = layer_graph(src, g, l, &at, st); /* new initializers go to g */
        if (!ng) {
            e = st->code;
            break;
        }
        if (l->fused_bn && !fuse_bn(ng, &at)) {
            e = nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': the BatchNormalization to fuse is "
                        "gone", src, l->node);
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
        bool matmul = !strcmp(nd->op_type, "MatMul");
        const char *qin[3] = {nd->input[0], p_s, p_z}, *dqin[3] = {p_q, p_s, p_z};
        const char *wdq[3] = {p_wq, p_ws, p_wz};
        ok = ok && push_init(g, initializer(p_s, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &sd,
                                            sizeof sd)) &&
             push_init(g, initializer(p_z, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 0, NULL, &zd, 1)) &&
             (l->act_b ? b_fake_quant(g, ng, at, l, fp16_scales, p_wdq)
              : matmul ? float_weights(g, ng, at, l, sw, p_wdq)
                     : push_init(g, initializer(p_wq, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, l->w_rank,
                                                l->w_dims, l->w_q, (size_t)l->w_numel)) &&
                           push_init(g, initializer(p_ws, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, crank,
                                                    cdim, sw, sizeof(float) * (size_t)l->channels)) &&
                           push_init(g, initializer(p_wz, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, crank,
                                                    cdim, zw, (size_t)l->channels)) &&
                           push_node(ng, at, node(p_wn, "DequantizeLinear", wdq, 3, p_wdq,
                                                  crank ? l->w_axis : -1000)));
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
            nd = ng->node[at + (l->act_b ? 2 : 1) + act_nodes];
            ok = set_input(nd, 0, p_dq) && set_input(nd, 1, p_wdq);
        }
        if (ok && l->bias) /* the corrected bias */
            ok = set_bias(g, nd, l->node, l->bias, l->channels);
        if (ok && l->r_q)
            ok = rnn_fake_quant(g, ng, at + 1 + act_nodes, l, fp16_scales);
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

/* The graph of the tree under root whose subgraph (an attribute of one of its nodes) is
 * child, or NULL. */
static const Onnx__GraphProto *parent_graph(const Onnx__GraphProto *root,
                                            const Onnx__GraphProto *child)
{
    for (size_t i = 0; i < root->n_node; i++)
        for (size_t a = 0; a < root->node[i]->n_attribute; a++) {
            const Onnx__GraphProto *sub = root->node[i]->attribute[a]->g;
            if (!sub)
                continue;
            if (sub == child)
                return root;
            const Onnx__GraphProto *p = parent_graph(sub, child);
            if (p)
                return p;
        }
    return NULL;
}

/* The initializer name in ng, else in the graphs enclosing it up to the model's graph g (a
 * branch reads outer names). */
static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g,
                                          const Onnx__GraphProto *ng, const char *name)
{
    for (const Onnx__GraphProto *h = ng; h; h = h == g ? NULL : parent_graph(g, h))
        for (size_t i = 0; i < h->n_initializer; i++)
            if (h->initializer[i]->name && !strcmp(h->initializer[i]->name, name))
                return h->initializer[i];
    return NULL;
}

/* Attribute name of n, or NULL. */
static const Onnx__AttributeProto *find_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float dflt)
{
    const Onnx__AttributeProto *a = find_attr(n, name);
    return a && a->has_f ? a->f : dflt;
}

/* The fp32 bits of v in the low 32 bits of a uint64 (GE's AscendDequant deq_scale). */
static uint64_t deq_bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* Appends attribute a to nd (freed on failure). */
static bool push_attr(Onnx__NodeProto *nd, Onnx__AttributeProto *a)
{
    Onnx__AttributeProto **arr = a ? realloc(nd->attribute, sizeof *arr * (nd->n_attribute + 1))
                                   : NULL;
    if (!arr) {
        if (a)
            onnx__attribute_proto__free_unpacked(a, NULL);
        return false;
    }
    nd->attribute = arr;
    arr[nd->n_attribute++] = a;
    return true;
}

/* The deploy form of an LSTM or GRU at ng->node[at] (nb_write_deploy's comment). */
static nb_err deploy_rnn(const char *src, Onnx__GraphProto *g, Onnx__GraphProto *ng, size_t at,
                         const nb_qlayer *l, nb_status *st)
{
    Onnx__NodeProto *nd = ng->node[at];
    const int64_t C = l->channels, I = l->w_dims[2], H = l->r_dims[2];
    float *bf = NULL;
    int64_t nbias = 0;
    if (nd->n_input > 3 && nd->input[3] && nd->input[3][0]) {
        const Onnx__TensorProto *bt = l->rnn_bias ? NULL : find_init(g, ng, nd->input[3]);
        if (l->rnn_bias && (bf = malloc(sizeof(float) * (size_t)(2 * C)))) {
            memcpy(bf, l->rnn_bias, sizeof(float) * (size_t)(2 * C)); /* folded by calibrate */
            nbias = 2 * C;
        } else if (bt) {
            bf = float_values(bt, &nbias);
        }
        if (!bf || nbias != 2 * C) {
            free(bf);
            return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': its bias '%s' is not a "
                           "constant float of 2 x %lld values", src, l->node, nd->input[3],
                           (long long)C);
        }
    }
    int32_t *bw = calloc((size_t)C, sizeof(int32_t)), *br = calloc((size_t)C, sizeof(int32_t));
    uint64_t *dw = calloc((size_t)C, sizeof(uint64_t)), *dr = calloc((size_t)C, sizeof(uint64_t));
    nb_err e = bw && br && dw && dr ? NB_OK : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int64_t c = 0; c < C && !e; c++) {
        int64_t wsum = 0, rsum = 0;
        for (int64_t k = 0; k < I; k++)
            wsum += l->w_q[c * I + k];
        for (int64_t k = 0; k < H; k++)
            rsum += l->r_q[c * H + k];
        float sw = l->scale_d * l->scale_w[c], sr = l->scale_h * l->scale_r[c];
        double vw = (bf && sw > 0 ? nearbyint(bf[c] / sw) : 0) - (double)l->offset_d * wsum;
        double vr = (bf && sr > 0 ? nearbyint(bf[C + c] / sr) : 0) - (double)l->offset_h * rsum;
        if (vw < INT32_MIN || vw > INT32_MAX || vr < INT32_MIN || vr > INT32_MAX)
            e = nb_fail(st, NB_ERR_DATA, "%s: layer '%s': gate row %lld's int32 bias is out of "
                        "range", src, l->node, (long long)c);
        bw[c] = (int32_t)vw, br[c] = (int32_t)vr;
        dw[c] = deq_bits(sw), dr[c] = deq_bits(sr);
    }
    free(bf);
    static const char *const sfx[8] = {"/x_int8", "/w_int8", "/r_int8", "/bias_w_int32",
                                       "/bias_r_int32", "/deq_scale_w", "/deq_scale_r",
                                       "/AscendQuant"};
    char *p[8] = {0};
    bool ok = !e;
    for (int i = 0; i < 8; i++)
        ok = ok && (p[i] = dupf2(l->node, sfx[i])) != NULL;
    int64_t cdim[1] = {C};
    if (ok) {
        Onnx__AttributeProto *qa[3] = {attr_float("scale", 1.0f / l->scale_d),
                                       attr_float("offset", (float)l->offset_d),
                                       attr_int("dst_bits", l->act_bits)};
        const char *qin[1] = {nd->input[0]};
        ok = push_init(g, initializer(p[1], ONNX__TENSOR_PROTO__DATA_TYPE__INT8, l->w_rank,
                                      l->w_dims, l->w_q, (size_t)l->w_numel)) &&
             push_init(g, initializer(p[2], ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 3, l->r_dims,
                                      l->r_q, (size_t)l->r_numel)) &&
             push_init(g, initializer(p[3], ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, cdim, bw,
                                      sizeof(int32_t) * (size_t)C)) &&
             push_init(g, initializer(p[4], ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, cdim, br,
                                      sizeof(int32_t) * (size_t)C)) &&
             push_init(g, initializer(p[5], ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, 1, cdim, dw,
                                      sizeof(uint64_t) * (size_t)C)) &&
             push_init(g, initializer(p[6], ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, 1, cdim, dr,
                                      sizeof(uint64_t) * (size_t)C)) &&
             push_node(ng, at, node_attrs(p[7], "AscendQuant", NB_NPU_DOMAIN, qin, 1, p[0], qa,
                                          3));
    }
    if (ok) { /* x_int8 W R bias_w bias_r deq_w deq_r, then the optional inputs from 4 on */
        nd = ng->node[at + 1];
        size_t rest = nd->n_input > 4 ? nd->n_input - 4 : 0, n_new = 7 + rest;
        char **in = calloc(n_new + 1, sizeof(char *));
        char *dom = strdup(NB_NPU_DOMAIN);
        ok = in && dom;
        for (size_t i = 0; ok && i < 7; i++)
            ok = (in[i] = strdup(p[i])) != NULL;
        for (size_t i = 0; ok && i < rest; i++)
            ok = (in[7 + i] = strdup(nd->input[4 + i] ? nd->input[4 + i] : "")) != NULL;
        ok = ok && push_attr(nd, attr_float("h_scale", 1.0f / l->scale_h)) &&
             push_attr(nd, attr_int("h_offset", l->offset_h));
        if (ok) {
            for (size_t i = 0; i < nd->n_input; i++)
                free(nd->input[i]);
            free(nd->input);
            nd->input = in;
            nd->n_input = n_new;
            free(nd->domain);
            nd->domain = dom;
        } else {
            for (size_t i = 0; in && i < n_new; i++)
                free(in[i]);
            free(in), free(dom);
        }
    }
    for (int i = 0; i < 8; i++)
        free(p[i]);
    free(bw), free(br), free(dw), free(dr);
    if (!ok && !e)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return e;
}

/* The deploy form of a MatMul of two activations at ng->node[at]: AscendQuant(x) and
 * AscendQuant(B) (scale 1 / scale_b, offset_b, 8 bits) -> the NPU MatMul (int8 x int8, a
 * zero int32 bias of one entry: both zero points come off at run time) -> AscendDequant
 * (deq_scale scale_d x scale_b, one entry for every column). */
static nb_err deploy_act_b(Onnx__GraphProto *g, Onnx__GraphProto *ng, size_t at,
                           const nb_qlayer *l, nb_status *st)
{
    Onnx__NodeProto *nd = ng->node[at];
    if (nd->n_input < 2 || nd->n_output < 1)
        return nb_fail(st, NB_ERR_GRAPH, "layer '%s': a MatMul of two activations needs two "
                       "inputs", l->node);
    float ds = l->scale_d * l->scale_b;
    uint32_t bits;
    memcpy(&bits, &ds, sizeof bits);
    uint64_t deq = bits;
    int32_t bias = 0;
    int64_t one[1] = {1};
    char *p_x = dupf2(l->node, "/x_int8"), *p_b = dupf2(l->node, "/b_int8"),
         *p_bias = dupf2(l->node, "/bias_int32"), *p_ds = dupf2(l->node, "/deq_scale"),
         *p_acc = dupf2(l->node, "/int32"), *p_qn = dupf2(l->node, "/AscendQuant"),
         *p_qb = dupf2(l->node, "/AscendQuant_b"), *p_dn = dupf2(l->node, "/AscendDequant");
    char *y = strdup(nd->output[0]), *dom = strdup(NB_NPU_DOMAIN);
    char **in = malloc(sizeof(char *) * 3);
    bool ok = p_x && p_b && p_bias && p_ds && p_acc && p_qn && p_qb && p_dn && y && dom && in;
    if (ok) {
        Onnx__AttributeProto *qa[3] = {attr_float("scale", 1.0f / l->scale_d),
                                       attr_float("offset", (float)l->offset_d),
                                       attr_int("dst_bits", l->act_bits)};
        Onnx__AttributeProto *qb[3] = {attr_float("scale", 1.0f / l->scale_b),
                                       attr_float("offset", (float)l->offset_b),
                                       attr_int("dst_bits", 8)};
        Onnx__AttributeProto *da[1] = {attr_int("dtype", 10)};
        const char *qin[1] = {nd->input[0]}, *qbin[1] = {nd->input[1]}, *din[2] = {p_acc, p_ds};
        ok = push_init(g, initializer(p_bias, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, one, &bias,
                                      sizeof bias)) &&
             push_init(g, initializer(p_ds, ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, 1, one, &deq,
                                      sizeof deq)) &&
             push_node(ng, at, node_attrs(p_qn, "AscendQuant", NB_NPU_DOMAIN, qin, 1, p_x, qa, 3)) &&
             push_node(ng, at + 1, node_attrs(p_qb, "AscendQuant", NB_NPU_DOMAIN, qbin, 1, p_b,
                                              qb, 3)) &&
             push_node(ng, at + 3, node_attrs(p_dn, "AscendDequant", NB_NPU_DOMAIN, din, 2, y,
                                              da, 1));
    }
    if (ok) { /* the cube op: int8 x, int8 B, int32 bias -> int32, in the NPU domain */
        nd = ng->node[at + 2];
        for (size_t i = 0; i < nd->n_input; i++)
            free(nd->input[i]);
        free(nd->input);
        nd->input = in;
        in[0] = p_x, in[1] = p_b, in[2] = p_bias;
        p_x = p_b = p_bias = NULL;
        in = NULL;
        nd->n_input = 3;
        free(nd->output[0]);
        nd->output[0] = p_acc;
        p_acc = NULL;
        free(nd->domain);
        nd->domain = dom;
        dom = NULL;
    }
    free(in), free(dom), free(y);
    free(p_x), free(p_b), free(p_bias), free(p_ds), free(p_acc), free(p_qn), free(p_qb), free(p_dn);
    return ok ? NB_OK : nb_fail(st, NB_ERR_NOMEM, "out of memory");
}

/* Deploy cube op nd rewired in place: inputs (x_int8, w_int8, bias_int32), output int32
 * acc, the NPU domain, Gemm's alpha and beta 1 (folded into deq_scale and the bias). False:
 * out of memory (nd unchanged). */
static bool npu_cube_io(Onnx__NodeProto *nd, const char *p_x, const char *p_w, const char *p_b,
                        const char *p_acc)
{
    bool ok;
    char **in = malloc(sizeof(char *) * 3); /* the node's inputs replaced whole */
    char *nx = strdup(p_x), *nw = strdup(p_w), *nbias = strdup(p_b), *nacc = strdup(p_acc);
    char *dom = strdup(NB_NPU_DOMAIN);
    ok = in && nx && nw && nbias && nacc && dom && nd->n_output >= 1;
    if (ok) {
        for (size_t a = 0; a < nd->n_attribute; a++) /* folded into deq_scale, bias */
            if ((!strcmp(nd->attribute[a]->name, "alpha") ||
                 !strcmp(nd->attribute[a]->name, "beta")) && nd->attribute[a]->has_f)
                nd->attribute[a]->f = 1.0f;
        for (size_t i = 0; i < nd->n_input; i++)
            free(nd->input[i]);
        free(nd->input);
        nd->input = in;
        in[0] = nx, in[1] = nw, in[2] = nbias;
        nd->n_input = 3;
        free(nd->output[0]);
        nd->output[0] = nacc;
        free(nd->domain);
        nd->domain = dom;
    } else {
        free(in), free(nx), free(nw), free(nbias), free(nacc), free(dom);
    }
    return ok;
}

/* The NPU domain's opset added to mp. False: out of memory. */
static bool add_npu_opset(Onnx__ModelProto *mp)
{
    Onnx__OperatorSetIdProto **a = realloc(mp->opset_import, sizeof *a * (mp->n_opset_import + 1));
    Onnx__OperatorSetIdProto *o = malloc(sizeof *o);
    if (a)
        mp->opset_import = a;
    if (!a || !o) {
        free(o);
        return false;
    }
    onnx__operator_set_id_proto__init(o);
    o->domain = strdup(NB_NPU_DOMAIN);
    o->has_version = 1;
    o->version = 1;
    a[mp->n_opset_import++] = o;
    return true;
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
        Onnx__GraphProto *ng = layer_graph(src, g, l, &at, st); /* new initializers go to g */
        if (!ng) {
            e = st->code;
            break;
        }
        if (l->r_q) {
            e = deploy_rnn(src, g, ng, at, l, st);
            continue;
        }
        if (l->fused_bn && !fuse_bn(ng, &at)) {
            e = nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': the BatchNormalization to fuse is "
                        "gone", src, l->node);
            break;
        }
        if (l->act_b) {
            e = deploy_act_b(g, ng, at, l, st);
            continue;
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
        if (ok && l->weight_bits == 4) /* s8 x s4: the int8 values within [-8, 7] */
            ok = push_attr(ng->node[at + 1], attr_int("weight_bits", 4));
        if (ok) /* the cube op: int8 x, int8 W, int32 bias -> int32, in the NPU domain */
            ok = npu_cube_io(ng->node[at + 1], p_x, p_w, p_b, p_acc);
        free(wsum), free(bias), free(deq);
        free(p_x), free(p_w), free(p_b), free(p_ds), free(p_acc), free(p_qn), free(p_dn);
        free(y); /* node_attrs copied it */
        if (!ok && !e)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!e && !add_npu_opset(mp))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!e)
        drop_unused(g);
    if (!e)
        e = save_proto(mp, dst, st);
    onnx__model_proto__free_unpacked(mp, NULL);
    return e;
}

/* ---- the record ---- */

nb_err nb_write_record(const char *path, const nb_qlayer *ls, int n, nb_status *st)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: %s", tmp, strerror(errno));
    for (int i = 0; i < n; i++) {
        const nb_qlayer *l = &ls[i];
        fputs("record {\n  key: \"", f);
        for (const char *p = l->node; *p; p++) /* protobuf text string escapes */
            if (*p == '"' || *p == '\\')
                fprintf(f, "\\%c", *p);
            else if (*p == '\n')
                fputs("\\n", f);
            else if (*p == '\t')
                fputs("\\t", f);
            else
                fputc(*p, f);
        fprintf(f, "\"\n  value {\n    scale_d: %.9g\n    offset_d: %d\n", l->scale_d,
                l->offset_d);
        for (int64_t c = 0; c < l->channels; c++)
            fprintf(f, "    scale_w: %.9g\n", l->scale_w[c]);
        for (int64_t c = 0; c < l->channels; c++)
            fputs("    offset_w: 0\n", f);
        if (l->act_b) /* nanobench's: the second operand of a MatMul of two activations */
            fprintf(f, "    scale_b: %.9g\n    offset_b: %d\n", l->scale_b, l->offset_b);
        if (l->r_q) { /* AMCT's RNN fields */
            fprintf(f, "    scale_h: %.9g\n    offset_h: %d\n", l->scale_h, l->offset_h);
            for (int64_t c = 0; c < l->channels; c++)
                fprintf(f, "    scale_r: %.9g\n", l->scale_r[c]);
            for (int64_t c = 0; c < l->channels; c++)
                fputs("    offset_r: 0\n", f);
        }
        fprintf(f, "    act_type: \"%s\"\n    wts_type: \"%s\"\n  }\n}\n",
                l->act_bits == 16 ? "INT16" : "INT8", l->weight_bits == 4 ? "INT4" : "INT8");
    }
    int bad = ferror(f);
    if (fclose(f) || bad || rename(tmp, path)) {
        remove(tmp);
        return nb_fail(st, NB_ERR_IO, "%s: write failed", path);
    }
    return NB_OK;
}

/* ---- QAT import ---- */

/* The constant named name: an initializer of g or a Constant node's value, or NULL. */
static const Onnx__TensorProto *constant(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n->op_type || strcmp(n->op_type, "Constant") || n->n_output != 1 ||
            !n->output[0] || strcmp(n->output[0], name))
            continue;
        for (size_t a = 0; a < n->n_attribute; a++)
            if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, "value") &&
                n->attribute[a]->t)
                return n->attribute[a]->t;
    }
    return NULL;
}

/* The node of g that writes name, or NULL. */
static Onnx__NodeProto *producer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (g->node[i]->output[k] && !strcmp(g->node[i]->output[k], name))
                return g->node[i];
    return NULL;
}

/* A graph and the graphs enclosing it (an If branch reads the names of its parents). */
typedef struct scope {
    Onnx__GraphProto *g;
    const struct scope *up;
} scope;

/* constant() and producer() through the scopes, innermost first. */
static const Onnx__TensorProto *scope_constant(const scope *sc, const char *name)
{
    const Onnx__TensorProto *t = NULL;
    for (; sc && !t; sc = sc->up)
        t = constant(sc->g, name);
    return t;
}

static Onnx__NodeProto *scope_producer(const scope *sc, const char *name)
{
    Onnx__NodeProto *n = NULL;
    for (; sc && !n; sc = sc->up)
        n = producer(sc->g, name);
    return n;
}

static size_t count_nodes(const Onnx__GraphProto *g)
{
    size_t n = g->n_node;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g)
                n += count_nodes(g->node[i]->attribute[a]->g);
    return n;
}

/* Elements of t by its dims; -1 for a negative dim or a product past int64. */
static int64_t numel_of(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n))
            return -1;
    return n;
}

/* True when t's data holds exactly its dims' elements (raw_data of the type's size, or the
 * typed array): what the compiler reads by index must be there. */
static bool data_complete(const Onnx__TensorProto *t, int64_t *numel)
{
    int64_t n = numel_of(t);
    *numel = n;
    if (n < 0 || !t->has_data_type)
        return false;
    size_t es = 0;
    switch (t->data_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: es = 1; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: es = 2; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: es = 4; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: es = 8; break;
    default: return false;
    }
    if (t->has_raw_data)
        return (uint64_t)t->raw_data.len == (uint64_t)n * es;
    size_t typed = t->n_float_data + t->n_int32_data + t->n_int64_data + t->n_uint64_data +
                   t->n_double_data;
    return typed == (size_t)n;
}

/* Element i of an integer or float constant as a double (raw_data, int32_data, float_data,
 * int64_data); NAN when absent. */
static double value_at(const Onnx__TensorProto *t, int64_t i)
{
    int dt = t->has_data_type ? t->data_type : 0;
    size_t es = dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4
              : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 || dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? 1
              : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ||
                dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16 ? 2
              : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4 : 0;
    if (es && t->has_raw_data && t->raw_data.len >= (size_t)(i + 1) * es) {
        const uint8_t *p = t->raw_data.data + (size_t)i * es;
        switch (dt) {
        case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: { float f; memcpy(&f, p, 4); return f; }
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return (int8_t)p[0];
        case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return p[0];
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: { int16_t v; memcpy(&v, p, 2); return v; }
        case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
        default: { int32_t v; memcpy(&v, p, 4); return v; }
        }
    }
    if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && (size_t)i < t->n_float_data)
        return t->float_data[i];
    if (es && dt != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && (size_t)i < t->n_int32_data)
        return t->int32_data[i];
    return NAN;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = find_attr(n, name);
    return a && a->has_i ? a->i : dflt;
}

void nb_qdq_model_free(nb_qdq_model *m)
{
    for (int i = 0; i < m->n; i++) {
        free((char *)m->l[i].node);
        free((float *)m->l[i].scale_w);
        free((int8_t *)m->l[i].w_q);
        free((int64_t *)m->l[i].w_dims);
    }
    free(m->l);
    memset(m, 0, sizeof *m);
}

/* One layer's Q/DQ pairs read into l; the layer then reads x and the int8 weights. */
/* An input of a node to point at another value once every layer is read: the Q/DQ pair
 * between falls away (drop_dead_qdq). */
typedef struct act_edge {
    Onnx__NodeProto *node;
    size_t input;
    char *to;
} act_edge;

typedef struct act_edges {
    act_edge *e;
    size_t n, cap;
} act_edges;

static bool add_edge(act_edges *el, Onnx__NodeProto *node, size_t input, const char *to)
{
    if (el->n == el->cap) {
        size_t cap = el->cap ? 2 * el->cap : 16;
        act_edge *e = realloc(el->e, cap * sizeof *e);
        if (!e)
            return false;
        el->e = e;
        el->cap = cap;
    }
    char *c = strdup(to);
    if (!c)
        return false;
    el->e[el->n++] = (act_edge){node, input, c};
    return true;
}

/* The ops between an activation's DequantizeLinear and the layer that reading through them
 * does not change a per-tensor quantization: they move or select values, never combine them
 * (MaxPool picks one of the levels; Transpose, Reshape and the rest only move them). */
static bool commutes_with_quant(const char *op)
{
    static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                      "Transpose", "MaxPool", "Identity"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i]))
            return true;
    return false;
}

/* The QuantizeLinear before a DequantizeLinear, or NULL. */
static Onnx__NodeProto *q_of(const scope *g, Onnx__NodeProto *dq)
{
    if (!dq || strcmp(dq->op_type, "DequantizeLinear") || dq->n_input < 2)
        return NULL;
    Onnx__NodeProto *q = scope_producer(g, dq->input[0]);
    return q && !strcmp(q->op_type, "QuantizeLinear") && q->n_input >= 2 ? q : NULL;
}

/* Whether two DequantizeLinear nodes have the same constant scalar scale and zero point. */
static bool same_act_quant(const scope *g, const Onnx__NodeProto *a, const Onnx__NodeProto *b)
{
    const Onnx__TensorProto *sa = scope_constant(g, a->input[1]), *sb = scope_constant(g, b->input[1]);
    if (!sa || !sb || numel_of(sa) != 1 || numel_of(sb) != 1 || value_at(sa, 0) != value_at(sb, 0))
        return false;
    bool za = a->n_input > 2 && a->input[2][0], zb = b->n_input > 2 && b->input[2][0];
    const Onnx__TensorProto *pa = za ? scope_constant(g, a->input[2]) : NULL;
    const Onnx__TensorProto *pb = zb ? scope_constant(g, b->input[2]) : NULL;
    double va = pa && numel_of(pa) == 1 ? value_at(pa, 0) : 0;
    double vb = pb && numel_of(pb) == 1 ? value_at(pb, 0) : 0;
    int ta = pa && pa->has_data_type ? pa->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    int tb = pb && pb->has_data_type ? pb->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    return za == (pa != NULL) && zb == (pb != NULL) && va == vb && ta == tb;
}

/* The DequantizeLinear(QuantizeLinear(x)) that quantizes layer nd's input, as QAT exporters
 * place it: right before the layer, or before a chain of ops that commute with per-tensor
 * quantization (PyTorch puts it before Flatten/Reshape and MaxPool), or before each input of
 * a Concat when they all have one scale and zero point. The edges that bypass the pairs are
 * added to el. Rule: Q/DQ propagation as ONNX Runtime's quantizer does it for these ops
 * (onnxruntime/python/tools/quantization, "QDQ propagation"). */
static bool is_cube(const char *op);

/* How many readers of name in g and its subgraphs would see it change if a Q/DQ pair before
 * it were removed: every node input and graph output but the chain's next node (next) and
 * a layer's x (a cube op's input 0: it takes the same pair's quantization). */
static int foreign_readers(const Onnx__GraphProto *g, const char *name,
                           const Onnx__NodeProto *next)
{
    int n = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        for (size_t k = 0; k < nd->n_input; k++)
            n += nd->input[k] && !strcmp(nd->input[k], name) && nd != next &&
                 !(k == 0 && is_cube(nd->op_type));
        for (size_t a = 0; a < nd->n_attribute; a++)
            if (nd->attribute[a]->g)
                n += foreign_readers(nd->attribute[a]->g, name, next);
    }
    for (size_t i = 0; i < g->n_output; i++)
        n += g->output[i]->name && !strcmp(g->output[i]->name, name);
    return n;
}

/* The node of a chain between a Q/DQ pair and a layer whose output something else reads
 * too (another node, a graph output): bypassing the pair would change what that reader sees
 * (a uint8 pair of zero point 0 clamps negatives, as a fused ReLU exports it), so the chain
 * is the layer's (and other layers' x) alone or the import refuses. NULL when it is. */
static const Onnx__NodeProto *shared_link(const scope *g, Onnx__NodeProto *const *chain,
                                          int n)
{
    for (int j = 0; j < n; j++) /* chain[0] is read by the layer, chain[j] by chain[j - 1] */
        if (chain[j]->n_output < 1 ||
            foreign_readers(g->g, chain[j]->output[0], j ? chain[j - 1] : NULL) > 0)
            return chain[j];
    return NULL;
}

/* The refusal of a chain shared_link finds shared (NB_ERR_UNSUPPORTED), or false. */
static bool shared_fail(const char *src, const scope *g, const Onnx__NodeProto *nd,
                        Onnx__NodeProto *const *chain, int n, nb_status *st)
{
    const Onnx__NodeProto *sh = shared_link(g, chain, n);
    if (sh)
        nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s' (%s): its input's Q/DQ pair reaches it "
                "through %s '%s', whose output is also read elsewhere (another node or a graph "
                "output): removing the pair would change what that reader sees; nanobench does "
                "not import that shape yet", src, nd->name, nd->op_type, sh->op_type, sh->name);
    return sh != NULL;
}

static nb_err find_act_qdq(const char *src, const scope *g, Onnx__NodeProto *nd,
                           Onnx__NodeProto **dq_out, Onnx__NodeProto **q_out, act_edges *el,
                           nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    Onnx__NodeProto *reader = nd, *chain[64];
    int nch = 0;
    for (int depth = 0; depth < 64 && reader->n_input > 0; depth++) {
        Onnx__NodeProto *p = reader->input[0][0] ? scope_producer(g, reader->input[0]) : NULL;
        Onnx__NodeProto *q = q_of(g, p);
        if (q) {
            if (shared_fail(src, g, nd, chain, nch, st))
                return st->code;
            *dq_out = p;
            *q_out = q;
            return add_edge(el, reader, 0, q->input[0]) ? NB_OK
                                                        : nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
        if (p && commutes_with_quant(p->op_type)) {
            if (depth == 63)
                return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s' (%s): more than 63 "
                               "shape ops between it and its input's Q/DQ pair", src, name,
                               nd->op_type);
            chain[nch++] = p;
            reader = p;
            continue;
        }
        if (p && !strcmp(p->op_type, "Concat") && p->n_input > 0) {
            chain[nch++] = p;
            if (shared_fail(src, g, nd, chain, nch, st))
                return st->code;
            Onnx__NodeProto *first = NULL;
            for (size_t k = 0; k < p->n_input; k++) {
                Onnx__NodeProto *dk = p->input[k][0] ? scope_producer(g, p->input[k]) : NULL;
                Onnx__NodeProto *qk = q_of(g, dk);
                if (!qk || (first && !same_act_quant(g, first, dk)))
                    return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' (%s): it reads Concat '%s', "
                                   "whose inputs are not all DequantizeLinear(QuantizeLinear(x)) "
                                   "of one scale and zero point", src, name, nd->op_type,
                                   p->name);
                if (!first) {
                    first = dk;
                    *dq_out = dk;
                    *q_out = qk;
                }
                if (!add_edge(el, p, k, qk->input[0]))
                    return nb_fail(st, NB_ERR_NOMEM, "out of memory");
            }
            return NB_OK;
        }
        break;
    }
    return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' (%s): its input is not "
                   "DequantizeLinear(QuantizeLinear(x)), directly or through Reshape, Flatten, "
                   "Squeeze, Unsqueeze, Transpose, MaxPool, Identity or a Concat of one scale; "
                   "every matrix layer must be quantized", src, name, nd->op_type);
}

/* The activation quantization of layer nd (its input's DequantizeLinear(QuantizeLinear))
 * into l's scale_d, offset_d and act_bits, checked. */
static nb_err read_act(const char *src, const scope *g, Onnx__NodeProto *nd, nb_qlayer *l,
                       act_edges *el, nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    Onnx__NodeProto *dq = NULL, *q = NULL;
    nb_err fe = find_act_qdq(src, g, nd, &dq, &q, el, st);
    if (fe)
        return fe;
    const Onnx__TensorProto *s = scope_constant(g, dq->input[1]);
    const Onnx__TensorProto *zp = dq->n_input > 2 && dq->input[2][0] ? scope_constant(g, dq->input[2]) : NULL;
    /* the QuantizeLinear's scale and zero point: the same values (a DQ without a zero point
       takes the Q's type: an int8 Q with zero point 0 is int8, not uint8) */
    const Onnx__TensorProto *qs = scope_constant(g, q->input[1]);
    const Onnx__TensorProto *qzp = q->n_input > 2 && q->input[2][0] ? scope_constant(g, q->input[2]) : NULL;
    if (!qs || (q->n_input > 2 && q->input[2][0] && !qzp))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': the QuantizeLinear before it has "
                       "no constant scale or zero point", src, name);
    if (s && numel_of(s) == 1 && numel_of(qs) == 1 && value_at(s, 0) != value_at(qs, 0) &&
        !isnan(value_at(s, 0)) && !isnan(value_at(qs, 0))) /* a NaN: refused as a scale below */
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': QuantizeLinear scale %g and "
                       "DequantizeLinear scale %g differ", src, name, value_at(qs, 0),
                       value_at(s, 0));
    if (!zp && !(dq->n_input > 2 && dq->input[2][0]))
        zp = qzp;
    else if (zp && qzp && numel_of(zp) == 1 && numel_of(qzp) == 1 &&
             (value_at(zp, 0) != value_at(qzp, 0) ||
              (zp->has_data_type ? zp->data_type : 0) != (qzp->has_data_type ? qzp->data_type : 0)))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': QuantizeLinear and "
                       "DequantizeLinear zero points differ", src, name);
    if (!s || numel_of(s) != 1 || (zp && numel_of(zp) != 1))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': the activation's scale and zero "
                       "point must be constant scalars (per tensor)", src, name);
    if (dq->n_input > 2 && dq->input[2][0] && !zp)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': the activation's zero point "
                       "'%s' is not a constant", src, name, dq->input[2]);
    int zdt = zp && zp->has_data_type ? zp->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    if (zdt != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 && zdt != ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
        zdt != ONNX__TENSOR_PROTO__DATA_TYPE__INT16)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': an activation zero point of ONNX "
                       "type %d (the cube takes int8, uint8 as int8, int16)", src, name, zdt);
    l->scale_d = (float)value_at(s, 0);
    double z = zp ? value_at(zp, 0) : 0;
    l->act_bits = zdt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ? 16 : 8;
    /* uint8 q = int8 q + 128: the same levels with offset zp - 128 */
    l->offset_d = (int)z - (zdt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? 128 : 0);
    if (!(l->scale_d > 0) || !isfinite(l->scale_d) || isnan(z))
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': activation scale %g is not positive",
                       src, name, l->scale_d);
    /* the deploy model's AscendQuant multiplies by 1 / scale_d, a float: a scale whose
       reciprocal is beyond float (a denormal) would compile to an infinite one (atc refuses
       it); and the offset must be a level of the activation's type */
    if (!isfinite(1.0f / l->scale_d))
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': activation scale %g is too small: "
                       "1 / scale is beyond float", src, name, l->scale_d);
    if (l->offset_d < (l->act_bits == 16 ? -32768 : -128) ||
        l->offset_d > (l->act_bits == 16 ? 32767 : 127))
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': activation zero point %g is outside "
                       "its type", src, name, z);
    return NB_OK;
}

/* onnxruntime's quantize_static gives the bias as DequantizeLinear(int32 constant, x scale x
 * w scale per channel, 0): layer nd reads it folded to float (a helper's find: such an
 * export had been refused, "its bias is not a constant float"). */
static nb_err fold_bias_dq(const char *src, const scope *g, Onnx__NodeProto *nd, nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    Onnx__NodeProto *bdq = nd->n_input > 2 && nd->input[2][0] ? scope_producer(g, nd->input[2])
                                                               : NULL;
    if (bdq && !strcmp(bdq->op_type, "DequantizeLinear") && bdq->n_input >= 2) {
        const Onnx__TensorProto *bi = scope_constant(g, bdq->input[0]),
                                *bs = scope_constant(g, bdq->input[1]),
                                *bz = bdq->n_input > 2 && bdq->input[2][0]
                                          ? scope_constant(g, bdq->input[2]) : NULL;
        int64_t nbv = bi ? numel_of(bi) : 0, nbs = bs ? numel_of(bs) : 0;
        if (bi && bs && bi->has_data_type && bi->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 &&
            nbv > 0 && (nbs == 1 || nbs == nbv) && (!bz || numel_of(bz) == nbs)) {
            float *bf = malloc(sizeof(float) * (size_t)nbv);
            char *bname = bf ? dupf2(nd->input[2], "_float") : NULL;
            nb_err be = bf && bname ? NB_OK : nb_fail(st, NB_ERR_NOMEM, "out of memory");
            for (int64_t i = 0; i < nbv && !be; i++) {
                int64_t c = nbs == 1 ? 0 : i;
                double v = (value_at(bi, i) - (bz ? value_at(bz, c) : 0)) * value_at(bs, c);
                if (!isfinite(v) || fabs(v) > FLT_MAX)
                    be = nb_fail(st, NB_ERR_DATA, "%s: layer '%s': its int32 bias %lld "
                                 "dequantizes to %g", src, name, (long long)i, v);
                else
                    bf[i] = (float)v;
            }
            if (!be && (!push_init(g->g, initializer(bname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                                                      (int)bi->n_dims, bi->dims, bf,
                                                      sizeof(float) * (size_t)nbv)) ||
                        !set_input(nd, 2, bname)))
                be = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            free(bf);
            free(bname);
            if (be)
                return be;
        }
    }
    return NB_OK;
}

static nb_err read_layer(const char *src, const scope *g, Onnx__NodeProto *nd,
                         nb_qlayer *l, act_edges *el, nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    nb_err ae = read_act(src, g, nd, l, el, st);
    if (ae)
        return ae;
    /* the weights: DequantizeLinear(int8 constant, scale_w, 0), or of QuantizeLinear(float) */
    Onnx__NodeProto *wdq = nd->n_input > 1 ? scope_producer(g, nd->input[1]) : NULL;
    if (!wdq || strcmp(wdq->op_type, "DequantizeLinear") || wdq->n_input < 2)
        return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its weights are not "
                       "DequantizeLinear(int8)", src, name);
    const Onnx__TensorProto *ws = scope_constant(g, wdq->input[1]);
    const Onnx__TensorProto *wz = wdq->n_input > 2 && wdq->input[2][0] ? scope_constant(g, wdq->input[2]) : NULL;
    const Onnx__TensorProto *wi = scope_constant(g, wdq->input[0]);
    Onnx__NodeProto *wq_node = wi ? NULL : scope_producer(g, wdq->input[0]);
    const Onnx__TensorProto *wf = wq_node && !strcmp(wq_node->op_type, "QuantizeLinear")
                                      ? scope_constant(g, wq_node->input[0]) : NULL;
    if (!ws || (!wi && !wf))
        return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its weights are not a constant "
                       "through DequantizeLinear", src, name);
    if (wdq->n_input > 2 && wdq->input[2][0] && !wz)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': the weights' zero point '%s' is "
                       "not a constant (it must be 0)", src, name, wdq->input[2]);
    if (wf && wq_node->n_input > 2 && wq_node->input[2][0]) {
        const Onnx__TensorProto *qz = scope_constant(g, wq_node->input[2]);
        for (int64_t i = 0; qz && i < numel_of(qz); i++)
            if (value_at(qz, i) != 0)
                qz = NULL;
        if (!qz)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': the weights' QuantizeLinear "
                           "zero point is not 0: the Nano takes symmetric weights only", src,
                           name);
    }
    if (!ws->has_data_type || ws->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': weight scales of ONNX type %d, "
                       "not float", src, name, ws->has_data_type ? ws->data_type : 0);
    if (wz && (!wz->has_data_type || wz->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': weight zero point of type "
                       "%s: the Nano's weights are int8 (zero point int8 0)", src, name,
                       nb_dtype_name((nb_dtype)(wz->has_data_type ? wz->data_type : 0)));
    if (wz)
        for (int64_t i = 0; i < numel_of(wz); i++)
            if (value_at(wz, i) != 0)
                return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': weight zero point %g: "
                               "the Nano takes symmetric weights only (zero point 0)", src,
                               name, value_at(wz, i));
    if (wi && !(wi->has_data_type && wi->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': weights of ONNX type %d, not "
                       "int8", src, name, wi->has_data_type ? wi->data_type : 0);
    const Onnx__TensorProto *w = wi ? wi : wf;
    int rank = (int)w->n_dims;
    int64_t axis = attr_i(wdq, "axis", 1), nsc = numel_of(ws);
    if (axis < 0)
        axis += rank;
    if (wz && numel_of(wz) != 1 && numel_of(wz) != nsc)
        return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': %lld weight zero points for %lld "
                       "scales", src, name, (long long)numel_of(wz), (long long)nsc);
    if (nsc > 1 && (axis < 0 || axis >= rank || w->dims[axis] != nsc))
        return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': %lld weight scales for axis %lld",
                       src, name, (long long)nsc, (long long)axis);
    if (!strcmp(nd->op_type, "ConvTranspose") && attr_i(nd, "group", 1) != 1)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s': grouped ConvTranspose is not "
                       "quantized yet", src, name);
    int64_t out_axis = !strcmp(nd->op_type, "Conv") ||
                               (!strcmp(nd->op_type, "Gemm") && attr_i(nd, "transB", 0))
                           ? 0
                       : !strcmp(nd->op_type, "ConvTranspose") ? 1 : rank - 1;
    if (nsc > 1 && axis != out_axis)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s' (%s): weight scales along axis "
                       "%lld; the cube takes one scale per output channel (axis %lld)", src,
                       name, nd->op_type, (long long)axis, (long long)out_axis);
    /* one scale for the whole tensor (onnxruntime's quantize_static per_channel=False, TF's
       per-tensor QAT): the same scale on every output channel, the per-channel form the
       cube's deq_scale and bias take (Conv and Gemm transB: axis 0, ConvTranspose: 1,
       MatMul and Gemm: the last) */
    int64_t nch = nsc;
    if (nsc == 1 && rank >= 2) {
        axis = out_axis;
        nch = w->dims[axis] > 0 ? w->dims[axis] : 1;
    }
    int64_t n = numel_of(w), stride = 1;
    for (int d = (int)axis + 1; d < rank; d++)
        stride *= w->dims[d];
    float *sw = malloc(sizeof(float) * (size_t)(nch + 1));
    int8_t *wq = malloc((size_t)n + 1);
    int64_t *dims = malloc(sizeof(int64_t) * (size_t)(rank + 1));
    char *nm = strdup(name);
    if (!sw || !wq || !dims || !nm) {
        free(sw), free(wq), free(dims), free(nm);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    nb_err e = NB_OK;
    for (int64_t c = 0; c < nsc && !e; c++) {
        double v = value_at(ws, c);
        sw[c] = (float)v;
        if (!(v > 0) || !isfinite(v) || !isfinite(sw[c]))
            e = nb_fail(st, NB_ERR_DATA, "%s: layer '%s': weight scale %lld is %g (or missing): "
                        "scales are positive and finite", src, name, (long long)c, v);
    }
    for (int64_t c = nsc; c < nch && !e; c++)
        sw[c] = sw[0];
    for (int64_t i = 0; i < n && !e; i++) {
        int64_t c = nsc > 1 ? (i / stride) % nsc : 0;
        double v = wi ? value_at(wi, i) : nearbyint(value_at(wf, i) / sw[c]);
        if (!isfinite(v))
            e = nb_fail(st, NB_ERR_DATA, "%s: layer '%s': weight %lld is missing or not finite "
                        "(data shorter than the dims?)", src, name, (long long)i);
        else
            wq[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
    }
    if (e) {
        free(sw), free(wq), free(dims), free(nm);
        return e;
    }
    memcpy(dims, w->dims, sizeof(int64_t) * (size_t)rank);
    *l = (nb_qlayer){.node = nm, .act_bits = l->act_bits, .scale_d = l->scale_d,
                     .offset_d = l->offset_d, .weight_bits = 8, .channels = nch,
                     .scale_w = sw, .w_q = wq, .w_rank = rank, .w_dims = dims, .w_numel = n,
                     .w_axis = nch > 1 ? axis : 0};
    nb_err be = fold_bias_dq(src, g, nd, st);
    if (be)
        return be;
    /* the layer reads the weights' source directly (and, once every layer is read, x: the
       edges): the Q/DQ nodes fall away */
    if (!set_input(nd, 1, wdq->input[0]))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

/* ---- the integer cube ops of onnxruntime's quantizer, as Q/DQ around a float layer ----
 * QLinearConv(x_q, xs, xz, w, ws, wz, ys, yz[, B]) = Q(Conv(DQ(x_q, xs, xz), DQ(w, ws, wz),
 * B xs ws), ys, yz) and QLinearMatMul likewise (ONNX's definitions); the static form of
 * ConvInteger / MatMulInteger (x_q from QuantizeLinear(x, s, z), the int32 result through
 * Cast(float) and Mul by a constant k) = Conv(DQ(x_q, s, z), DQ(w, k / s, 0)). Rewritten so
 * that read_layer takes them as any QAT layer. */

/* The only node of g reading name, or NULL (none, or several). */
static Onnx__NodeProto *sole_reader(const Onnx__GraphProto *g, const char *name)
{
    Onnx__NodeProto *r = NULL;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            if (g->node[i]->input[k] && !strcmp(g->node[i]->input[k], name)) {
                if (r && r != g->node[i])
                    return NULL;
                r = g->node[i];
            }
    for (size_t o = 0; o < g->n_output; o++)
        if (g->output[o]->name && !strcmp(g->output[o]->name, name))
            return NULL; /* a graph output is read too */
    return r;
}

static size_t index_of(const Onnx__GraphProto *g, const Onnx__NodeProto *n)
{
    for (size_t i = 0; i < g->n_node; i++)
        if (g->node[i] == n)
            return i;
    return g->n_node;
}

/* A float initializer name of n values (per channel along axis of a rank-1 tensor) */
static bool push_floats(Onnx__GraphProto *g, const char *name, const float *v, int64_t n)
{
    int64_t dims[1] = {n};
    return push_init(g, initializer(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, n == 1 ? 0 : 1,
                                    dims, v, sizeof(float) * (size_t)n));
}

/* Replaces node i (the integer op nd) by DQ(x) -> DQ(w) -> layer [-> Q]: x_dq, w_dq named
 * after nd; the layer takes nd's name and attributes and writes out; q (ys, yz) NULL: no
 * QuantizeLinear after it. */
static bool qop_replace(Onnx__GraphProto *g, size_t i, const char *layer_op, const char *const *x3,
                        const char *x_float, const char *const *w3, int64_t w_axis,
                        const char *bias, const char *out, const char *const *q2)
{
    Onnx__NodeProto *nd = g->node[i];
    char *name = strdup(nd->name), *xd = dupf2(name ? name : "", "/x_dq"),
         *wd = dupf2(name ? name : "", "/w_dq"), *yf = dupf2(name ? name : "", "/y_float"),
         *nxd = dupf2(name ? name : "", "/DequantizeLinear_x"),
         *nwd = dupf2(name ? name : "", "/DequantizeLinear_w"),
         *nq = dupf2(name ? name : "", "/QuantizeLinear_y"), *o = strdup(out);
    bool ok = name && xd && wd && yf && nxd && nwd && nq && o;
    Onnx__AttributeProto **at = ok ? calloc(nd->n_attribute + 1, sizeof *at) : NULL;
    int nat = 0;
    const char *lin[3] = {x_float ? x_float : xd, wd, bias};
    const char *qin[3] = {yf, q2 ? q2[0] : NULL, q2 ? q2[1] : NULL};
    size_t at_i = i;
    ok = ok && at &&
         (x_float ||
          push_node(g, at_i++, node(nxd, "DequantizeLinear", x3, x3[2] ? 3 : 2, xd, -1000))) &&
         push_node(g, at_i++, node(nwd, "DequantizeLinear", w3, w3[2] ? 3 : 2, wd,
                                   w_axis >= 0 ? w_axis : -1000));
    if (ok) { /* the layer takes nd's attributes (node_attrs frees them on failure) */
        nd = g->node[at_i];
        for (size_t a = 0; a < nd->n_attribute; a++)
            at[nat++] = nd->attribute[a];
        nd->n_attribute = 0;
        ok = push_node(g, at_i++, node_attrs(name, layer_op, "", lin, bias ? 3 : 2, q2 ? yf : o,
                                             at, nat)) &&
             (!q2 || push_node(g, at_i++, node(nq, "QuantizeLinear", qin, q2[1] ? 3 : 2, o,
                                               -1000)));
    }
    if (ok)
        remove_node(g, at_i);
    free(at), free(name), free(xd), free(wd), free(yf), free(nxd), free(nwd), free(nq), free(o);
    return ok;
}

/* The QuantizeLinear whose output reaches name, directly or through the layout ops a
 * reader also passes (Reshape, Flatten, Squeeze, Unsqueeze, Transpose), or NULL. With a
 * chain between them, the chain is made to read DQ(Q(x)) instead (a new DequantizeLinear of
 * the Q's own scale and zero point) and *x_float is name (now float): the layer reads the
 * pair through the chain, as read_layer takes it. */
static Onnx__NodeProto *quantized_input(Onnx__GraphProto *g, const char *name,
                                        const char **x_float, bool *oom)
{
    static const char *const layout[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                         "Transpose", NULL};
    *x_float = NULL;
    Onnx__NodeProto *p = producer(g, name), *first = NULL;
    for (int depth = 0; p && depth < 8; depth++) {
        bool lay = false;
        for (int k = 0; layout[k] && !lay; k++)
            lay = !strcmp(p->op_type, layout[k]);
        if (!lay || p->n_input < 1)
            break;
        first = p;
        p = producer(g, p->input[0]);
    }
    if (!p || strcmp(p->op_type, "QuantizeLinear") || p->n_input < 2 || p->n_output < 1)
        return NULL;
    if (!first)
        return p;
    if (sole_reader(g, p->output[0]) != first)
        return NULL;
    char *dqn = dupf2(p->output[0], "/dq"), *nn = dupf2(p->output[0], "/DequantizeLinear");
    const char *in[3] = {p->output[0], p->input[1], p->n_input > 2 && p->input[2][0]
                                                         ? p->input[2] : NULL};
    bool ok = dqn && nn && set_input(first, 0, dqn) &&
              push_node(g, index_of(g, first), node(nn, "DequantizeLinear", in, in[2] ? 3 : 2,
                                                    dqn, -1000));
    free(dqn), free(nn);
    *oom = !ok;
    *x_float = name;
    return p;
}

static nb_err qoperator_to_qdq(const char *src, Onnx__GraphProto *g, nb_status *st)
{
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *nd = g->node[i];
        const char *op = nd->op_type, *nm = nd->name ? nd->name : "";
        bool qconv = !strcmp(op, "QLinearConv"), qmm = !strcmp(op, "QLinearMatMul");
        bool iconv = !strcmp(op, "ConvInteger"), imm = !strcmp(op, "MatMulInteger");
        if (!qconv && !qmm && !iconv && !imm)
            continue;
        if (qconv || qmm) {
            if (nd->n_input < 8 || nd->n_output < 1)
                return nb_fail(st, NB_ERR_GRAPH, "%s: node '%s' (%s): %zu inputs, 8 or 9 expected",
                               src, nm, op, nd->n_input);
            const Onnx__TensorProto *xs = constant(g, nd->input[1]), *ws = constant(g, nd->input[4]),
                                    *B = qconv && nd->n_input > 8 && nd->input[8][0]
                                             ? constant(g, nd->input[8]) : NULL;
            if (!xs || !ws || (qconv && nd->n_input > 8 && nd->input[8][0] && !B))
                return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): its scales and bias "
                               "must be constants", src, nm, op);
            int64_t nws = numel_of(ws), nb = B ? numel_of(B) : 0;
            char *bname = B ? dupf2(nm, "/bias_float") : NULL;
            bool ok = !B || bname;
            if (ok && B) { /* B x xs x ws, per output channel */
                float *bf = malloc(sizeof(float) * (size_t)(nb + 1));
                for (int64_t c = 0; bf && c < nb; c++)
                    bf[c] = (float)(value_at(B, c) * value_at(xs, 0) *
                                    value_at(ws, nws > 1 ? c % nws : 0));
                ok = bf && push_floats(g, bname, bf, nb);
                free(bf);
            }
            const char *x3[3] = {nd->input[0], nd->input[1], nd->input[2][0] ? nd->input[2] : NULL};
            const char *w3[3] = {nd->input[3], nd->input[4], nd->input[5][0] ? nd->input[5] : NULL};
            const char *q2[2] = {nd->input[6], nd->input[7][0] ? nd->input[7] : NULL};
            const char *xf = NULL;
            bool oom = false;
            if (producer(g, nd->input[0]) &&
                strcmp(producer(g, nd->input[0])->op_type, "QuantizeLinear")) {
                quantized_input(g, nd->input[0], &xf, &oom);
                i = index_of(g, nd);
            }
            ok = ok && !oom && qop_replace(g, i, qconv ? "Conv" : "MatMul", x3, xf, w3,
                                   nws > 1 ? (qconv ? 0 : 1) : -1, bname, nd->output[0], q2);
            free(bname);
            if (!ok)
                return nb_fail(st, NB_ERR_NOMEM, "out of memory");
            i += 3; /* past the nodes it became */
            continue;
        }
        /* ConvInteger / MatMulInteger: x from a QuantizeLinear of a constant scale, the int32
           result through Cast(float) and Mul by a constant */
        Onnx__NodeProto *px = nd->n_input > 0 ? producer(g, nd->input[0]) : NULL;
        const char *xf = NULL;
        bool oom = false;
        Onnx__NodeProto *qx = nd->n_input > 0 ? quantized_input(g, nd->input[0], &xf, &oom) : NULL;
        if (oom)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        i = index_of(g, nd);
        const Onnx__TensorProto *s = qx ? constant(g, qx->input[1]) : NULL;
        if (px && !strcmp(px->op_type, "DynamicQuantizeLinear"))
            return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): its input is quantized at "
                           "run time (DynamicQuantizeLinear, onnxruntime's quantize_dynamic); the "
                           "Nano takes calibrated scales: calibrate the float model, or export "
                           "with quantize_static", src, nm, op);
        if (!s || numel_of(s) != 1)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): its input is not "
                           "QuantizeLinear(x) of a constant scalar scale", src, nm, op);
        const Onnx__TensorProto *wz = nd->n_input > 3 && nd->input[3][0]
                                          ? constant(g, nd->input[3]) : NULL;
        for (int64_t k = 0; wz && k < numel_of(wz); k++)
            if (value_at(wz, k) != 0)
                return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): weight zero point "
                               "%g: the Nano takes symmetric weights only", src, nm, op,
                               value_at(wz, k));
        Onnx__NodeProto *cast = sole_reader(g, nd->output[0]);
        Onnx__NodeProto *mul = cast && !strcmp(cast->op_type, "Cast") && cast->n_output == 1
                                   ? sole_reader(g, cast->output[0]) : NULL;
        const Onnx__TensorProto *k = NULL;
        for (size_t a = 0; mul && !strcmp(mul->op_type, "Mul") && a < 2 && !k; a++)
            if (strcmp(mul->input[a], cast->output[0]) != 0)
                k = constant(g, mul->input[a]);
        const Onnx__TensorProto *w = constant(g, nd->input[1]);
        int64_t M = !w || w->n_dims < 1 ? 0 : iconv ? w->dims[0] : w->dims[w->n_dims - 1];
        if (!k || !w || (numel_of(k) != 1 && numel_of(k) != M))
            return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s): its int32 result is not "
                           "Cast to float and multiplied by a constant scale (one, or one per "
                           "output channel)", src, nm, op);
        int64_t nk = numel_of(k);
        float *wsv = malloc(sizeof(float) * (size_t)(nk + 1));
        char *wsn = dupf2(nm, "/w_scale"), *out = mul ? strdup(mul->output[0]) : NULL;
        bool ok = wsv && wsn && out;
        for (int64_t c = 0; ok && c < nk; c++)
            wsv[c] = (float)(value_at(k, c) / value_at(s, 0));
        ok = ok && push_floats(g, wsn, wsv, nk);
        free(wsv);
        const char *x3[3] = {nd->input[0], qx->input[1], qx->n_input > 2 && qx->input[2][0]
                                                             ? qx->input[2] : NULL};
        const char *w3[3] = {nd->input[1], wsn, NULL};
        if (ok) { /* the Cast and the Mul go; the layer writes the Mul's output */
            remove_node(g, index_of(g, mul));
            remove_node(g, index_of(g, cast));
            i = index_of(g, nd);
            ok = qop_replace(g, i, iconv ? "Conv" : "MatMul", x3, xf, w3,
                             nk > 1 ? (iconv ? 0 : 1) : -1, NULL, out, NULL);
        }
        free(wsn), free(out);
        if (!ok)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        i += 2;
    }
    return NB_OK;
}

/* The layers of sc->g and of its branches into out (room for every node). */
static nb_err read_layers(const char *src, const scope *sc, nb_qdq_model *out, act_edges *el,
                          nb_status *st)
{
    Onnx__GraphProto *g = sc->g;
    nb_err e = NB_OK;
    for (size_t i = 0; i < g->n_node && !e; i++) {
        Onnx__NodeProto *nd = g->node[i];
        const char *op = nd->op_type;
        for (size_t a = 0; a < nd->n_attribute && !e; a++)
            if (nd->attribute[a]->g) {
                scope in = {nd->attribute[a]->g, sc};
                e = read_layers(src, &in, out, el, st);
            }
        if (e)
            break;
        if (!strcmp(op, "LSTM") || !strcmp(op, "GRU"))
            e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s' (%s): QAT import of LSTM/GRU is "
                        "not implemented yet", src, nd->name ? nd->name : "", op);
        else if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "MatMul") ||
                 !strcmp(op, "Gemm")) {
            if (!nd->name || !nd->name[0])
                e = nb_fail(st, NB_ERR_GRAPH, "%s: a %s node without a name: the record keys "
                            "layers by name", src, op);
            else if (!(e = read_layer(src, sc, nd, &out->l[out->n], el, st)))
                out->n++;
        }
    }
    return e;
}

/* Drops the QuantizeLinear/DequantizeLinear nodes of g (and of its branches) that nothing
 * reads any more, until none is left. */
static nb_err drop_dead_qdq(Onnx__GraphProto *g, nb_status *st)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g && drop_dead_qdq(g->node[i]->attribute[a]->g, st))
                return st->code;
    bool *drop = calloc(g->n_node + 1, sizeof(bool));
    if (!drop)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < g->n_node; i++) {
            const Onnx__NodeProto *nd = g->node[i];
            drop[i] = (!strcmp(nd->op_type, "QuantizeLinear") ||
                       !strcmp(nd->op_type, "DequantizeLinear")) &&
                      nd->n_output == 1 && !name_used(g, nd->output[0]);
            again |= drop[i];
        }
        size_t k = 0;
        for (size_t i = 0; i < g->n_node; i++) {
            if (drop[i])
                onnx__node_proto__free_unpacked(g->node[i], NULL);
            else
                g->node[k++] = g->node[i];
        }
        g->n_node = k;
    }
    free(drop);
    return NB_OK;
}

static bool has_prefix(const char *s, const char *p, size_t pl);

/* The Q/DQ pairs no quantized layer reads once the layers are read (a QAT export's pair on
 * a network output, or between two vector ops: torch's fake-quant after every op) keep
 * their range and lose their rounding: DequantizeLinear(QuantizeLinear(x, s, z)) becomes
 * Clip(x, (qmin - z) s, (qmax - z) s) (qmin, qmax of z's type: uint8 0..255, int8
 * -128..127, int16), the QuantizeLinear then dead; those tensors are fp16 on the NPU, as a
 * float model's are. A pair of no constant scale passes x through (Identity). Returns how
 * many pairs, -1 when out of memory. */
static int pass_through_pairs(Onnx__GraphProto *g)
{
    int n = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *dq = g->node[i];
        if (strcmp(dq->op_type, "DequantizeLinear") || dq->n_input < 1 || dq->n_output < 1 ||
            !name_used(g, dq->output[0])) /* a layer's own pair, read past: dropped below */
            continue;
        Onnx__NodeProto *q = NULL;
        for (size_t k = 0; k < g->n_node && !q; k++)
            if (!strcmp(g->node[k]->op_type, "QuantizeLinear") && g->node[k]->n_output >= 1 &&
                !strcmp(g->node[k]->output[0], dq->input[0]) && g->node[k]->n_input >= 1)
                q = g->node[k];
        if (!q)
            continue; /* a constant's DequantizeLinear: folded like any constant */
        const Onnx__TensorProto *s = q->n_input > 1 ? constant(g, q->input[1]) : NULL;
        const Onnx__TensorProto *z = q->n_input > 2 && q->input[2][0] ? constant(g, q->input[2])
                                                                     : NULL;
        int zdt = z && z->has_data_type ? z->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
        double qmin = zdt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8    ? -128
                      : zdt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ? -32768 : 0;
        double qmax = zdt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8    ? 127
                      : zdt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ? 32767
                      : zdt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16 ? 65535 : 255;
        bool clip = s && numel_of(s) == 1 && (!z || numel_of(z) == 1) && value_at(s, 0) > 0;
        char *op = strdup(clip ? "Clip" : "Identity"), *in = strdup(q->input[0]);
        char *lo = clip ? dupf2(dq->output[0], "/clip_lo") : NULL;
        char *hi = clip ? dupf2(dq->output[0], "/clip_hi") : NULL;
        char **ins = calloc(4, sizeof *ins);
        bool ok = op && in && ins && (!clip || (lo && hi));
        if (ok && clip) { /* the pair's range as Clip's bounds */
            double zp = z ? value_at(z, 0) : 0;
            float b[2] = {(float)((qmin - zp) * value_at(s, 0)),
                          (float)((qmax - zp) * value_at(s, 0))};
            ok = push_init(g, initializer(lo, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL,
                                          &b[0], sizeof(float))) &&
                 push_init(g, initializer(hi, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL,
                                          &b[1], sizeof(float)));
        }
        if (!ok) {
            free(op), free(in), free(lo), free(hi), free(ins);
            return -1;
        }
        free(dq->op_type);
        dq->op_type = op;
        for (size_t a = 0; a < dq->n_input; a++)
            free(dq->input[a]);
        free(dq->input);
        ins[0] = in;
        ins[1] = lo;
        ins[2] = hi;
        dq->input = ins;
        dq->n_input = clip ? 3 : 1;
        for (size_t a = 0; a < dq->n_attribute; a++)
            onnx__attribute_proto__free_unpacked(dq->attribute[a], NULL);
        dq->n_attribute = 0;
        n++;
    }
    return n;
}

/* Renames every use of name in g and its subgraphs (node inputs and outputs, graph
 * outputs, initializers) to to; false when out of memory. */
static bool rename_all(Onnx__GraphProto *g, const char *name, const char *to)
{
    bool ok = true;
    for (size_t i = 0; i < g->n_initializer && ok; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) {
            char *c = strdup(to);
            ok = c != NULL;
            if (ok) {
                free(g->initializer[i]->name);
                g->initializer[i]->name = c;
            }
        }
    for (size_t i = 0; i < g->n_node && ok; i++) {
        Onnx__NodeProto *nd = g->node[i];
        for (size_t k = 0; k < nd->n_input && ok; k++)
            if (nd->input[k] && !strcmp(nd->input[k], name))
                ok = set_input(nd, k, to);
        for (size_t a = 0; a < nd->n_attribute && ok; a++)
            if (nd->attribute[a]->g)
                ok = rename_all(nd->attribute[a]->g, name, to);
    }
    return ok;
}

/* An initializer left in the stripped model under a name the writers make for its layer
 * ("<layer>/w_int8" of a fake-quant model written by nanobench itself) is renamed
 * "<name>:qat", so that the deploy writer's own tensor does not collide with it. */
static bool rename_writer_names(Onnx__GraphProto *root, Onnx__GraphProto *g,
                                const nb_qdq_model *m)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g &&
                !rename_writer_names(root, g->node[i]->attribute[a]->g, m))
                return false;
    for (int l = 0; l < m->n; l++) {
        char *prefix = dupf2(m->l[l].node, "/");
        if (!prefix)
            return false;
        size_t pl = strlen(prefix);
        for (size_t i = 0; i < g->n_initializer; i++) {
            const char *nm = g->initializer[i]->name;
            if (!has_prefix(nm, prefix, pl))
                continue;
            char *old = strdup(nm), *to = dupf2(nm, ":qat");
            bool ok = old && to && rename_all(root, old, to);
            free(old), free(to);
            if (!ok) {
                free(prefix);
                return false;
            }
        }
        free(prefix);
    }
    return true;
}

nb_err nb_read_qdq(const char *src, const char *stripped, nb_qdq_model *out, nb_status *st)
{
    memset(out, 0, sizeof *out);
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    nb_err e = load_proto(src, &mp, &opset, st);
    if (e)
        return e;
    Onnx__GraphProto *g = mp->graph;
    out->l = calloc(count_nodes(g) + 1, sizeof *out->l);
    scope top = {g, NULL};
    act_edges el = {0};
    if (!out->l)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!e)
        e = qoperator_to_qdq(src, g, st);
    if (!e) { /* room for the layers the rewrite made */
        nb_qlayer *l = realloc(out->l, sizeof *out->l * (count_nodes(g) + 1));
        if (l)
            out->l = l;
        else
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!e)
        e = read_layers(src, &top, out, &el, st);
    for (size_t i = 0; i < el.n; i++) { /* the layers' inputs past their Q/DQ pairs */
        if (!e && !set_input(el.e[i].node, el.e[i].input, el.e[i].to))
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        free(el.e[i].to);
    }
    free(el.e);
    if (!e && out->n == 0)
        e = nb_fail(st, NB_ERR_GRAPH, "%s: no Conv, ConvTranspose, MatMul or Gemm", src);
    if (!e && pass_through_pairs(g) < 0)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!e)
        e = drop_dead_qdq(g, st);
    if (!e)
        drop_unused(g);
    if (!e && !rename_writer_names(g, g, out))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (!e)
        e = save_proto(mp, stripped, st);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (e)
        nb_qdq_model_free(out);
    return e;
}

/* ---- checks before writing ---- */

static int count_named(const Onnx__GraphProto *g, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        n += g->node[i]->name && !strcmp(g->node[i]->name, name);
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g)
                n += count_named(g->node[i]->attribute[a]->g, name);
    }
    return n;
}

/* True when s is "<p>SUFFIX" for a suffix the writers use ("<layer>/scale_d", ...). */
static bool has_prefix(const char *s, const char *p, size_t pl)
{
    static const char *const suffix[] = {
        "scale_d", "offset_d", "act_q", "act_dq", "w_int8", "scale_w", "offset_w", "w_dq",
        "QuantizeLinear", "DequantizeLinear", "DequantizeLinear_w", "x_int8", "bias_int32",
        "deq_scale", "int32", "AscendQuant", "AscendDequant", "bias_float", "offset_d_f",
        "qmin", "qmax", "w_float", "Identity_w",
        /* LSTM, GRU */
        "r_int8", "scale_r", "offset_r", "r_dq", "DequantizeLinear_r", "scale_h", "offset_h",
        "h_q", "h_dq", "QuantizeLinear_h", "DequantizeLinear_h", "bias_w_int32",
        "bias_r_int32", "deq_scale_w", "deq_scale_r"};
    if (!s || strncmp(s, p, pl))
        return false;
    if (!strncmp(s + pl, "q16_", 4))
        return true;
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++)
        if (!strcmp(s + pl, suffix[i]))
            return true;
    return false;
}

/* A tensor or node name of g (or its subgraphs) that the writers would also make for the
 * layer prefix ("<layer>/"), or NULL. */
static const char *name_with_prefix(const Onnx__GraphProto *g, const char *prefix)
{
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < g->n_initializer; i++)
        if (has_prefix(g->initializer[i]->name, prefix, pl))
            return g->initializer[i]->name;
    for (size_t i = 0; i < g->n_input; i++)
        if (has_prefix(g->input[i]->name, prefix, pl))
            return g->input[i]->name;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (has_prefix(nd->name, prefix, pl))
            return nd->name;
        for (size_t k = 0; k < nd->n_output; k++)
            if (has_prefix(nd->output[k], prefix, pl))
                return nd->output[k];
        for (size_t a = 0; a < nd->n_attribute; a++) {
            const char *r = nd->attribute[a]->g ? name_with_prefix(nd->attribute[a]->g, prefix)
                                                : NULL;
            if (r)
                return r;
        }
    }
    return NULL;
}

nb_err nb_check_layers(const char *src, const nb_qlayer *ls, int n, nb_status *st)
{
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    nb_err e = load_proto(src, &mp, &opset, st);
    if (e)
        return e;
    for (int i = 0; i < n && !e; i++) {
        int c = count_named(mp->graph, ls[i].node);
        char *prefix = dupf2(ls[i].node, "/");
        const char *clash = prefix ? name_with_prefix(mp->graph, prefix) : NULL;
        if (c != 1)
            e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s: layer '%s' %s: the record and the models "
                        "find layers by node name; give every matrix layer a unique name", src,
                        ls[i].node, c == 0 ? "has no name in the file" : "names several nodes");
        else if (clash)
            e = nb_fail(st, NB_ERR_UNSUPPORTED, "%s: tensor '%s' would clash with the names "
                        "nanobench gives layer '%s''s quantization tensors", src, clash,
                        ls[i].node);
        free(prefix);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    return e;
}

/* ---- the compiler's input (nb_read_npu_input) ---- */

static bool is_cube(const char *op)
{
    static const char *const cube[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "LSTM", "GRU"};
    for (size_t i = 0; i < sizeof cube / sizeof cube[0]; i++)
        if (op && !strcmp(op, cube[i]))
            return true;
    return false;
}

/* The initializer of g's tree named name (nearest first from the top), or NULL. */
static Onnx__TensorProto *init_anywhere(Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g) {
                Onnx__TensorProto *t = init_anywhere(g->node[i]->attribute[a]->g, name);
                if (t)
                    return t;
            }
    return NULL;
}

/* An integer initializer (int8, int32, uint64 deq_scale...) turned into float32 of the same
 * values: the float form the lowering reads (it sizes cube weights by their int8 layout,
 * not by this type). */
static bool to_float_init(Onnx__TensorProto *t)
{
    if (!t || (t->has_data_type && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT))
        return true;
    int64_t n = numel_of(t);
    float *v = malloc(sizeof(float) * (size_t)(n + 1));
    if (!v)
        return false;
    for (int64_t i = 0; i < n; i++) {
        double x = value_at(t, i);
        v[i] = isfinite(x) ? (float)x : 0.0f;
    }
    free(t->raw_data.data);
    t->raw_data.data = (uint8_t *)v;
    t->raw_data.len = sizeof(float) * (size_t)n;
    t->has_raw_data = 1;
    t->n_int32_data = 0, t->n_int64_data = 0, t->n_float_data = 0, t->n_uint64_data = 0;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->has_data_type = 1;
    return true;
}

/* Copies of an integer initializer's values: int8, int32 or uint64 (raw or typed data). */
static void *copy_ints(const Onnx__TensorProto *t, int bytes_per, int64_t *n)
{
    *n = t ? numel_of(t) : 0;
    if (*n < 0)
        return NULL;
    uint8_t *v = t ? malloc((size_t)*n * (size_t)bytes_per + 1) : NULL;
    for (int64_t i = 0; v && i < *n; i++) {
        if (bytes_per == 8) {
            uint64_t u = 0;
            if (t->has_raw_data && t->raw_data.len >= 8 * (size_t)(i + 1))
                memcpy(&u, t->raw_data.data + 8 * i, 8);
            else if ((int64_t)t->n_uint64_data > i)
                u = t->uint64_data[i];
            memcpy(v + 8 * i, &u, 8);
        } else if (bytes_per == 4) {
            int32_t x = (int32_t)value_at(t, i);
            memcpy(v + 4 * i, &x, 4);
        } else {
            v[i] = (uint8_t)(int8_t)value_at(t, i);
        }
    }
    return v;
}

/* The RNN parts of layer l from its deploy op nd (x W R bias_w bias_r deq_w deq_r ...). */
static bool add_rnn_data(nb_npu_layer *l, Onnx__GraphProto *root, const Onnx__NodeProto *nd)
{
    if (nd->n_input < 7)
        return true;
    const Onnx__TensorProto *w = init_anywhere(root, nd->input[1]),
                            *r = init_anywhere(root, nd->input[2]),
                            *bw = init_anywhere(root, nd->input[3]),
                            *br = init_anywhere(root, nd->input[4]),
                            *dw = init_anywhere(root, nd->input[5]),
                            *dr = init_anywhere(root, nd->input[6]);
    if (!w || !r || !bw || !br || !dw || !dr || w->n_dims != 3 || r->n_dims != 3)
        return true; /* incomplete: the writer refuses the layer by name */
    int64_t n;
    l->w_rank = 3;
    for (int d = 0; d < 3; d++)
        l->w_dims[d] = w->dims[d], l->r_dims[d] = r->dims[d];
    l->w = copy_ints(w, 1, &l->w_numel);
    l->r = copy_ints(r, 1, &l->r_numel);
    l->bias = copy_ints(bw, 4, &l->channels);
    l->bias_r = copy_ints(br, 4, &n);
    l->deq_scale = copy_ints(dw, 8, &n);
    l->deq_r = copy_ints(dr, 8, &n);
    l->h_scale = attr_f(nd, "h_scale", 1);
    const Onnx__AttributeProto *ho = find_attr(nd, "h_offset");
    l->h_offset = ho && ho->has_i ? (float)ho->i : 0;
    return l->w && l->r && l->bias && l->bias_r && l->deq_scale && l->deq_r;
}

/* Appends layer nd's record to *ls: the node name, its AscendQuant's attributes, and copies
 * of its int8 weights, int32 bias and uint64 deq_scale (NULL when absent). */
static bool add_layer(nb_npu_layer **ls, int *n, const Onnx__NodeProto *nd,
                      const Onnx__NodeProto *q, const Onnx__TensorProto *w,
                      const Onnx__TensorProto *b, const Onnx__TensorProto *ds)
{
    nb_npu_layer *a = realloc(*ls, sizeof *a * (size_t)(*n + 1));
    if (!a)
        return false;
    *ls = a;
    nb_npu_layer *l = &a[*n];
    memset(l, 0, sizeof *l);
    l->node = strdup(nd->name ? nd->name : "");
    if (!l->node)
        return false;
    ++*n; /* freed with the others from here on */
    l->quant_scale = attr_f(q, "scale", 1);
    l->quant_offset = attr_f(q, "offset", 0);
    const Onnx__AttributeProto *bits = find_attr(q, "dst_bits");
    l->act_bits = bits && bits->has_i ? (int)bits->i : 8;
    const Onnx__AttributeProto *wb = find_attr(nd, "weight_bits");
    l->weight_bits = wb && wb->has_i && wb->i == 4 ? 4 : 8;
    if (w && w->n_dims <= NB_MAX_RANK) {
        l->w_rank = (int)w->n_dims;
        for (size_t d = 0; d < w->n_dims; d++)
            l->w_dims[d] = w->dims[d];
        l->w_numel = numel_of(w);
        l->w = malloc((size_t)l->w_numel + 1);
        if (!l->w)
            return false;
        for (int64_t i = 0; i < l->w_numel; i++)
            l->w[i] = (int8_t)value_at(w, i);
    }
    if (b && ds && numel_of(b) == numel_of(ds)) {
        l->channels = numel_of(b);
        l->bias = malloc(sizeof(int32_t) * (size_t)(l->channels + 1));
        l->deq_scale = malloc(sizeof(uint64_t) * (size_t)(l->channels + 1));
        if (!l->bias || !l->deq_scale)
            return false;
        for (int64_t c = 0; c < l->channels; c++) {
            l->bias[c] = (int32_t)value_at(b, c);
            uint64_t v = 0;
            if (ds->has_raw_data && ds->raw_data.len >= 8 * (size_t)(c + 1))
                memcpy(&v, ds->raw_data.data + 8 * c, 8);
            else if ((int64_t)ds->n_uint64_data > c)
                v = ds->uint64_data[c];
            l->deq_scale[c] = v;
        }
    }
    return true;
}

/* A MatMul of two activations (rnn false, its B no constant): B through an AscendQuant of
 * its own into *bq, its attributes checked; else *bq NULL. */
static nb_err b_quant(const char *src, Onnx__GraphProto *root, Onnx__GraphProto *g,
                      const Onnx__NodeProto *nd, const char *name, bool rnn,
                      Onnx__NodeProto **bq_out, nb_status *st)
{
    Onnx__NodeProto *bq = NULL;
    if (!rnn && !strcmp(nd->op_type, "MatMul") && nd->n_input > 1 &&
        !init_anywhere(root, nd->input[1])) {
        bq = producer(g, nd->input[1]);
        if (!bq || !bq->op_type || strcmp(bq->op_type, "AscendQuant") || bq->n_input < 1)
            return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its second input '%s' is "
                           "neither a constant nor an AscendQuant's output", src, name,
                           nd->input[1]);
        const Onnx__AttributeProto *bs = find_attr(bq, "scale");
        float bsc = bs && bs->has_f ? bs->f : NAN, boff = attr_f(bq, "offset", 0);
        const Onnx__AttributeProto *bb = find_attr(bq, "dst_bits");
        if (!(bsc > 0) || !isfinite(bsc) || !isfinite(boff) || boff != floorf(boff) ||
            boff < -128 || boff > 127 || (bb && bb->has_i && bb->i != 8))
            return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': the AscendQuant of its second "
                           "input has scale %g, offset %g, dst_bits %lld: a positive finite "
                           "scale, an int8 offset and 8 bits are needed", src, name, bsc, boff,
                           bb && bb->has_i ? (long long)bb->i : 8LL);
    }
    *bq_out = bq;
    return NB_OK;
}

/* Every constant deploy layer nd reads, and its AscendDequant dq's deq_scale: complete, of
 * the integer type the NPU op takes (int8 weights, int32 bias, uint64 deq_scale with a
 * finite non-negative fp32 in its low half). */
static nb_err check_constants(const char *src, Onnx__GraphProto *root,
                              const Onnx__NodeProto *nd, const Onnx__NodeProto *dq,
                              const Onnx__NodeProto *bq, bool rnn, nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    /* every constant it reads, and its AscendDequant's deq_scale, complete */
    for (size_t k = 1; k <= nd->n_input; k++) {
        const char *in = k < nd->n_input ? nd->input[k]
                         : dq && dq->n_input > 1 ? dq->input[1] : NULL;
        const Onnx__TensorProto *t = in && in[0] ? init_anywhere(root, in) : NULL;
        if (rnn && k >= 7)
            break; /* sequence_lens, initial_h, initial_c, P: run-time or float */
        int64_t n;
        if (t && !data_complete(t, &n))
            return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': initializer '%s' has %s "
                           "for its dims", src, name, in,
                           n < 0 ? "a negative dim or too many elements"
                                 : "data of another size or type");
        if (!t && in && in[0] && (k < 3 || (rnn && k < 7)) && !(bq && k == 1))
            return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its input '%s' is not a "
                           "constant", src, name, in);
    }
    /* the integer constants' types (AscendQuant's int8 weights, int32 bias, uint64
       deq_scale with a finite non-negative fp32 in its low half): a value of another type
       would be cut to fit without a word */
    for (size_t k = 1; k <= nd->n_input && !(rnn && k >= 7); k++) {
        const char *in = k < nd->n_input ? nd->input[k]
                         : dq && dq->n_input > 1 ? dq->input[1] : NULL;
        const Onnx__TensorProto *t = in && in[0] ? init_anywhere(root, in) : NULL;
        if (!t || (bq && k == 1))
            continue;
        bool deq = k == nd->n_input || (rnn && (k == 5 || k == 6));
        bool w = k == 1 || (rnn && k == 2);
        int want = deq ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT64
                   : w ? ONNX__TENSOR_PROTO__DATA_TYPE__INT8
                       : ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
        if (t->data_type != want)
            return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': %s '%s' is %s, not %s", src, name,
                           deq ? "deq_scale" : w ? "weights" : "bias", in,
                           nb_dtype_name((nb_dtype)t->data_type), /* ONNX's codes */
                           deq ? "UINT64" : w ? "INT8" : "INT32");
        for (int64_t e = 0, ne = numel_of(t); deq && e < ne; e++) {
            uint64_t v = 0;
            if (t->has_raw_data && t->raw_data.len >= 8 * (size_t)(e + 1))
                memcpy(&v, t->raw_data.data + 8 * e, 8);
            else if ((int64_t)t->n_uint64_data > e)
                v = t->uint64_data[e];
            uint32_t bits = (uint32_t)v;
            float f;
            memcpy(&f, &bits, sizeof f);
            if (!isfinite(f) || f < 0)
                return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': deq_scale '%s' element %lld "
                               "is %g: a finite scale of 0 or more is needed", src, name, in,
                               (long long)e, f);
        }
    }
    return NB_OK;
}

/* The attributes of deploy layer nd, its AscendQuant q and AscendDequant dq: weight_bits,
 * the quant's scale, offset and bits, the dequant's dtype, an RNN's h_scale. */
static nb_err check_attrs(const char *src, const Onnx__NodeProto *nd, const Onnx__NodeProto *q,
                          const Onnx__NodeProto *dq, const Onnx__NodeProto *bq, bool rnn,
                          nb_status *st)
{
    const char *name = nd->name ? nd->name : "";
    const Onnx__AttributeProto *wba = find_attr(nd, "weight_bits");
    if (wba && (!wba->has_i || (wba->i != 4 && wba->i != 8) || bq || rnn))
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': weight_bits %s%lld: 8 or 4 (int4 "
                       "weights of a Conv, MatMul or Gemm with constant weights)", src, name,
                       wba->has_i ? "" : "not an integer, ", wba->has_i ? (long long)wba->i : 0LL);
    const Onnx__AttributeProto *qs = find_attr(q, "scale");
    float qscale = qs && qs->has_f ? qs->f : NAN, qoff = attr_f(q, "offset", 0);
    const Onnx__AttributeProto *qb = find_attr(q, "dst_bits");
    int64_t bits = qb && qb->has_i ? qb->i : 8;
    if (!(qscale > 0) || !isfinite(qscale) || !isfinite(qoff) || qoff != floorf(qoff) ||
        (bits != 8 && bits != 16) || qoff < (bits == 16 ? -32768 : -128) ||
        qoff > (bits == 16 ? 32767 : 127))
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': its AscendQuant has scale %g, offset "
                       "%g, dst_bits %lld: a positive finite scale (1 / scale_d), an integer "
                       "offset within the bits' range and 8 or 16 bits are needed", src, name,
                       qscale, qoff,
                       (long long)bits);
    const Onnx__AttributeProto *ddt = dq ? find_attr(dq, "dtype") : NULL;
    if (ddt && (!ddt->has_i || ddt->i != 10)) /* its output: fp16 (ONNX FLOAT16, 10) */
        return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': its AscendDequant has dtype %lld: "
                       "the NPU's AscendDequant writes fp16 (10)", src, name,
                       ddt->has_i ? (long long)ddt->i : -1LL);
    if (rnn) {
        const Onnx__AttributeProto *hs = find_attr(nd, "h_scale");
        if (!hs || !hs->has_f || !(hs->f > 0) || !isfinite(hs->f))
            return nb_fail(st, NB_ERR_DATA, "%s: layer '%s': h_scale missing or not a "
                           "positive finite number", src, name);
    }
    return NB_OK;
}

/* An RNN's inputs x W R bias_w bias_r deq_w deq_r [seq h0 c0 P] -> x W R B [seq h0 c0 P]:
   the lowering reads B only for its size, 2 x gates x hidden (bias_w holds one half): the
   zero B of that size replaces it. False: out of memory. */
static bool rnn_standard_inputs(Onnx__GraphProto *root, Onnx__NodeProto *nd, const char *name)
{
    bool ok = true;
    Onnx__TensorProto *bw = init_anywhere(root, nd->input[3]);
    int64_t gh = bw ? numel_of(bw) : 0, d[2] = {1, 2 * gh};
    float *zeros = calloc((size_t)(2 * gh + 1), sizeof(float));
    char *bname = dupf2(name, "/B_float");
    ok = zeros && bname &&
         push_init(root, initializer(bname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d,
                                     zeros, sizeof(float) * (size_t)(2 * gh)));
    if (ok)
        ok = set_input(nd, 3, bname);
    free(zeros), free(bname);
    for (size_t k = 4; ok && k + 3 < nd->n_input; k++) { /* drop bias_r, deq_w, deq_r */
        free(nd->input[k]);
        nd->input[k] = nd->input[k + 3];
        nd->input[k + 3] = NULL;
    }
    if (ok) {
        for (size_t k = nd->n_input - 3; k < nd->n_input; k++)
            free(nd->input[k]);
        nd->n_input -= 3;
    }
    return ok;
}

/* The NPU attributes of nd (h_scale, h_offset, weight_bits) removed. */
static void drop_npu_attrs(Onnx__NodeProto *nd)
{
    for (size_t a = 0; a < nd->n_attribute; a++) { /* the NPU attributes go */
        const char *an = nd->attribute[a]->name;
        if (an && (!strcmp(an, "h_scale") || !strcmp(an, "h_offset") ||
                   !strcmp(an, "weight_bits"))) {
            onnx__attribute_proto__free_unpacked(nd->attribute[a], NULL);
            memmove(nd->attribute + a, nd->attribute + a + 1,
                    sizeof *nd->attribute * (nd->n_attribute - a - 1));
            nd->n_attribute--;
            a--;
        }
    }
}

/* The deploy form of g's tree collapsed into standard ops: AscendQuant -> NPU op ->
 * AscendDequant becomes the op reading x and writing y, its integer constants float; an
 * NPU-domain LSTM/GRU gets back its standard inputs (W, R, a zero B). Each collapsed
 * layer's name goes to names. */
static nb_err collapse_deploy(const char *src, Onnx__GraphProto *root, Onnx__GraphProto *g,
                              nb_npu_layer **names, int *n_names, nb_status *st)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g) {
                nb_err e = collapse_deploy(src, root, g->node[i]->attribute[a]->g, names,
                                           n_names, st);
                if (e)
                    return e;
            }
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *nd = g->node[i];
        if (!nd->domain || strcmp(nd->domain, NB_NPU_DOMAIN) || !is_cube(nd->op_type))
            continue;
        const char *name = nd->name ? nd->name : "";
        Onnx__NodeProto *q = nd->n_input > 0 ? producer(g, nd->input[0]) : NULL;
        if (!q || !q->op_type || strcmp(q->op_type, "AscendQuant") || q->n_input < 1)
            return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its input is not an AscendQuant",
                           src, name);
        bool rnn = !strcmp(nd->op_type, "LSTM") || !strcmp(nd->op_type, "GRU");
        Onnx__NodeProto *dq = NULL;
        size_t dqk = 0;
        if (!rnn) { /* the AscendDequant reading the int32 output */
            for (size_t k = 0; k < g->n_node && !dq; k++)
                if (g->node[k]->op_type && !strcmp(g->node[k]->op_type, "AscendDequant") &&
                    g->node[k]->n_input > 0 && nd->n_output > 0 &&
                    !strcmp(g->node[k]->input[0], nd->output[0]))
                    dq = g->node[k], dqk = k;
            if (!dq || dq->n_output < 1)
                return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s': its output is not read by "
                               "an AscendDequant", src, name);
        }
        if (rnn && nd->n_input < 7)
            return nb_fail(st, NB_ERR_GRAPH, "%s: layer '%s' (%s): the NPU op needs x, W, R, "
                           "bias_w, bias_r, deq_scale_w, deq_scale_r; it has %zu inputs", src,
                           name, nd->op_type, nd->n_input);
        Onnx__NodeProto *bq = NULL;
        nb_err e = b_quant(src, root, g, nd, name, rnn, &bq, st);
        if (e || (e = check_constants(src, root, nd, dq, bq, rnn, st)) ||
            (e = check_attrs(src, nd, q, dq, bq, rnn, st)))
            return e;
        const Onnx__TensorProto *wi = nd->n_input > 1 ? init_anywhere(root, nd->input[1]) : NULL;
        const Onnx__TensorProto *bi = !rnn && nd->n_input > 2 ? init_anywhere(root, nd->input[2])
                                                             : NULL;
        const Onnx__TensorProto *di = dq && dq->n_input > 1 ? init_anywhere(root, dq->input[1])
                                                           : NULL;
        if (!add_layer(names, n_names, nd, q, rnn || bq ? NULL : wi, bi, di) ||
            (rnn && !add_rnn_data(&(*names)[*n_names - 1], root, nd)))
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        bool ok = set_input(nd, 0, q->input[0]);
        if (ok && bq) { /* B read as the float it quantizes; its scale goes to the layer */
            nb_npu_layer *l = &(*names)[*n_names - 1];
            l->b_scale = attr_f(bq, "scale", 1);
            l->b_offset = attr_f(bq, "offset", 0);
            ok = set_input(nd, 1, bq->input[0]);
            for (size_t k = 0; ok && k < g->n_node; k++)
                if (g->node[k] == bq && !name_used(g, bq->output[0])) {
                    remove_node(g, k);
                    if (k < i)
                        i--;
                    if (dq && k < dqk)
                        dqk--;
                    break;
                }
        }
        if (ok && dq) {
            char *y = strdup(dq->output[0]);
            ok = y != NULL;
            if (ok) {
                free(nd->output[0]);
                nd->output[0] = y;
            }
        }
        /* integer constants to float; an RNN's inputs back to (X, W, R, B, seq, h0, c0, P) */
        for (size_t k = 1; ok && k < nd->n_input; k++)
            if (nd->input[k] && nd->input[k][0] && !(bq && k == 1))
                ok = to_float_init(init_anywhere(root, nd->input[k]));
        if (ok && rnn && nd->n_input >= 7) {
            ok = rnn_standard_inputs(root, nd, name);
        } else if (ok && !strcmp(nd->op_type, "MatMul") && nd->n_input > 2) {
            /* a standard MatMul has no bias input: the lowering gives every cube op its
               int32 bias anyway */
            for (size_t k = 2; k < nd->n_input; k++)
                free(nd->input[k]);
            nd->n_input = 2;
        }
        if (ok)
            drop_npu_attrs(nd);
        char *dom = ok ? strdup("") : NULL;
        ok = ok && dom;
        if (!ok) {
            free(dom);
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        }
        free(nd->domain);
        nd->domain = dom;
        if (dq) {
            remove_node(g, dqk);
            if (dqk < i)
                i--;
        }
        /* the AscendQuant goes when nothing else reads it */
        for (size_t k = 0; k < g->n_node; k++)
            if (g->node[k] == q && !name_used(g, q->output[0])) {
                remove_node(g, k);
                if (k < i)
                    i--;
                break;
            }
    }
    return NB_OK;
}

/* Cuts g at the outputs named "node:index;..." (ATC's --out_nodes): they become the graph's
 * outputs and the nodes no output needs are removed, with the inputs nothing reads. */
/* Levenshtein distance of a and b (at most 256 characters of each are compared). */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strnlen(a, 256), lb = (int)strnlen(b, 256);
    int row[257];
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int cur = row[j];
            int sub = prev + (a[i - 1] != b[j - 1]);
            int del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    return row[lb];
}

/* "; the nearest: 'a', 'b', 'c'" (node names of g by edit distance to name), or "". */
static void nearest_nodes(const Onnx__GraphProto *g, const char *name, char *out, size_t len)
{
    int best[3] = {-1, -1, -1}, dist[3] = {0, 0, 0};
    for (size_t i = 0; i < g->n_node; i++) {
        if (!g->node[i]->name[0] || !strcmp(g->node[i]->op_type, "Constant"))
            continue;
        int d = edit_distance(name, g->node[i]->name);
        for (int q = 0; q < 3; q++)
            if (best[q] < 0 || d < dist[q]) {
                for (int z = 2; z > q; z--)
                    best[z] = best[z - 1], dist[z] = dist[z - 1];
                best[q] = (int)i, dist[q] = d;
                break;
            }
    }
    out[0] = 0;
    for (int q = 0; q < 3 && best[q] >= 0; q++) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s'%.150s'", q ? ", " : "; the nearest: ",
                 g->node[best[q]]->name);
    }
}

static nb_err cut_outputs(const char *src, Onnx__GraphProto *g, const char *spec, nb_status *st)
{
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    Onnx__ValueInfoProto **outs = NULL;
    size_t n_outs = 0;
    nb_err e = NB_OK;
    for (char *tok = strtok_r(copy, ";", &save); tok && !e; tok = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(tok, ':'), *end = NULL;
        bool digits = colon && colon[1];
        for (const char *p = colon ? colon + 1 : ""; digits && *p; p++)
            digits = *p >= '0' && *p <= '9';
        long idx = digits ? strtol(colon + 1, &end, 10) : -1;
        if (!colon || colon == tok || !digits || idx < 0) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: Value [%s] for parameter [--out_nodes] is "
                        "invalid: the format is \"node_name1:0;node_name1:1;node_name2:0\"",
                        tok);
            break;
        }
        *colon = 0;
        Onnx__NodeProto *nd = NULL;
        for (size_t i = 0; i < g->n_node && !nd; i++)
            if (g->node[i]->name && !strcmp(g->node[i]->name, tok))
                nd = g->node[i];
        /* a tensor's name where a node's is expected ("13:0" for alexa's graph output 13):
           the node that produces it, at that output */
        for (size_t i = 0; i < g->n_node && !nd && idx == 0; i++)
            for (size_t k = 0; k < g->node[i]->n_output && !nd; k++)
                if (!strcmp(g->node[i]->output[k], tok)) {
                    nd = g->node[i];
                    idx = (long)k;
                }
        if (nd && !strcmp(nd->op_type, "Constant")) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: --out_nodes: '%s' is a Constant: the compiled "
                        "model would compute nothing", tok);
            break;
        }
        if (nd && (size_t)idx < nd->n_output && !nd->output[idx][0]) {
            /* an optional output the model leaves out: no tensor to cut at */
            char given[400] = "";
            for (size_t k = 0, o = 0; k < nd->n_output && o < sizeof given - 1; k++)
                if (nd->output[k][0])
                    o += (size_t)snprintf(given + o, sizeof given - o, "%s%s:%zu", o ? ", " : "",
                                          tok, k);
            e = nb_fail(st, NB_ERR_ARG, "E10001: --out_nodes: output %ld of node '%s' (%s) is "
                        "left out in the model (no tensor to cut at)%s%s", idx, tok, nd->op_type,
                        given[0] ? "; it gives " : "", given);
            break;
        }
        if (nd && (size_t)idx >= nd->n_output) {
            e = nb_fail(st, NB_ERR_ARG, "E10001: --out_nodes: node '%s' (%s) has %zu output%s "
                        "(indices 0..%zu), not %ld", tok, nd->op_type, nd->n_output,
                        nd->n_output == 1 ? "" : "s", nd->n_output ? nd->n_output - 1 : 0, idx);
            break;
        }
        if (!nd) {
            char near[600];
            nearest_nodes(g, tok, near, sizeof near);
            e = nb_fail(st, NB_ERR_ARG, "E10001: --out_nodes: no node or tensor '%s' in the main "
                        "graph of %s%s (every node: nanobench info --nodes MODEL)", tok, src,
                        near);
            break;
        }
        Onnx__ValueInfoProto **a = realloc(outs, sizeof *a * (n_outs + 1));
        Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
        if (a)
            outs = a;
        if (!a || !vi || (onnx__value_info_proto__init(vi), !(vi->name = strdup(nd->output[idx])))) {
            free(vi);
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        outs[n_outs++] = vi;
    }
    free(copy);
    if (!e && n_outs == 0)
        e = nb_fail(st, NB_ERR_ARG, "E10001: --out_nodes names no output");
    if (e) {
        for (size_t i = 0; i < n_outs; i++)
            onnx__value_info_proto__free_unpacked(outs[i], NULL);
        free(outs);
        return e;
    }
    for (size_t i = 0; i < g->n_output; i++)
        onnx__value_info_proto__free_unpacked(g->output[i], NULL);
    free(g->output);
    g->output = outs;
    g->n_output = n_outs;
    /* dead nodes (outputs nothing reads), until none is left */
    for (bool again = true; again;) {
        again = false;
        for (size_t i = g->n_node; i-- > 0;) {
            bool used = false;
            for (size_t k = 0; k < g->node[i]->n_output && !used; k++)
                used = g->node[i]->output[k][0] && name_used(g, g->node[i]->output[k]);
            if (!used) {
                remove_node(g, i);
                again = true;
            }
        }
    }
    size_t m = 0; /* inputs nothing reads any more */
    for (size_t i = 0; i < g->n_input; i++) {
        if (name_used(g, g->input[i]->name))
            g->input[m++] = g->input[i];
        else
            onnx__value_info_proto__free_unpacked(g->input[i], NULL);
    }
    g->n_input = m;
    drop_unused(g);
    return NB_OK;
}

/* True when g or a subgraph has a node of the NPU domain. */
static bool has_npu_node(const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_node; i++) {
        if (g->node[i]->domain && !strcmp(g->node[i]->domain, NB_NPU_DOMAIN))
            return true;
        for (size_t a = 0; a < g->node[i]->n_attribute; a++)
            if (g->node[i]->attribute[a]->g && has_npu_node(g->node[i]->attribute[a]->g))
                return true;
    }
    return false;
}

nb_err nb_read_npu_input(const char *src, const char *input_shape, const char *out_nodes,
                         const char *work_dir, nb_npu_input *out, nb_status *st)
{
    memset(out, 0, sizeof *out);
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    nb_err e = load_proto(src, &mp, &opset, st);
    if (e)
        return e;
    bool deploy = has_npu_node(mp->graph), qdq = false; /* by the nodes, not the imports */
    if (!deploy) { /* the importer's every check first, as every other command has it */
        nb_load_opts lo = {.input_shape = input_shape};
        nb_model *valid = NULL;
        e = nb_model_load(src, &lo, &valid, st);
        nb_model_free(valid);
        if (e) {
            onnx__model_proto__free_unpacked(mp, NULL);
            return e;
        }
    }
    for (size_t i = 0; i < mp->graph->n_node; i++)
        qdq |= !strcmp(mp->graph->node[i]->op_type, "QuantizeLinear") ||
               !strcmp(mp->graph->node[i]->op_type, "DequantizeLinear");
    if (!deploy && qdq) { /* Q/DQ pairs: the QAT import's deploy model, read back */
        onnx__model_proto__free_unpacked(mp, NULL);
        char tmp[4300], dep[4300];
        snprintf(tmp, sizeof tmp, "%s/qdq_stripped.onnx", work_dir);
        snprintf(dep, sizeof dep, "%s/qdq_deploy.onnx", work_dir);
        nb_qdq_model q = {0};
        e = nb_read_qdq(src, tmp, &q, st);
        if (!e)
            e = nb_write_deploy(tmp, dep, q.l, q.n, st);
        nb_qdq_model_free(&q);
        remove(tmp);
        if (!e)
            e = load_proto(dep, &mp, &opset, st);
        remove(dep);
        if (e)
            return e;
        deploy = true;
        out->form = 2;
    } else {
        out->form = deploy ? 1 : 0;
    }
    Onnx__GraphProto *g = mp->graph;
    if (deploy)
        e = collapse_deploy(src, g, g, &out->layers, &out->n_layers, st);
    for (size_t i = 0; !e && i < g->n_node; i++) /* an NPU op left: not part of a layer */
        if (g->node[i]->domain && !strcmp(g->node[i]->domain, NB_NPU_DOMAIN))
            e = nb_fail(st, NB_ERR_GRAPH, "%s: node '%s' (%s) of the NPU domain is not part of "
                        "a quantized layer (AscendQuant -> cube op -> AscendDequant)", src,
                        g->node[i]->name ? g->node[i]->name : "", g->node[i]->op_type);
    if (!e && out_nodes)
        e = cut_outputs(src, g, out_nodes, st);
    if (!e) { /* the NPU domain's opset goes with its ops */
        size_t k = 0;
        for (size_t i = 0; i < mp->n_opset_import; i++) {
            if (mp->opset_import[i]->domain && !strcmp(mp->opset_import[i]->domain, NB_NPU_DOMAIN))
                onnx__operator_set_id_proto__free_unpacked(mp->opset_import[i], NULL);
            else
                mp->opset_import[k++] = mp->opset_import[i];
        }
        mp->n_opset_import = k;
        drop_unused(g);
        nb_onnx_prepare_pack(mp);
        size_t sz = onnx__model_proto__get_packed_size(mp);
        out->onnx = malloc(sz ? sz : 1);
        if (!out->onnx)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        else
            out->len = onnx__model_proto__pack(mp, out->onnx);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    if (e)
        nb_npu_input_free(out);
    return e;
}

void nb_npu_input_free(nb_npu_input *in)
{
    free(in->onnx);
    for (int i = 0; i < in->n_layers; i++) {
        free(in->layers[i].node);
        free(in->layers[i].w);
        free(in->layers[i].bias);
        free(in->layers[i].deq_scale);
        free(in->layers[i].r);
        free(in->layers[i].bias_r);
        free(in->layers[i].deq_r);
    }
    free(in->layers);
    memset(in, 0, sizeof *in);
}

bool nb_graph_has_qdq(const nb_graph *g)
{
    for (int i = 0; g && i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        if (!strcmp(n->op_type, "QuantizeLinear") || !strcmp(n->op_type, "DequantizeLinear"))
            return true;
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g && nb_graph_has_qdq(n->attrs[a].g))
                return true;
    }
    return false;
}

nb_err nb_write_input_shapes(const char *path, const char *shape, nb_status *st)
{
    nb_shape_override *ov = NULL;
    int nov = 0;
    nb_err e = nb_parse_input_shape(shape, &ov, &nov, st);
    if (e)
        return e;
    Onnx__ModelProto *mp = NULL;
    int64_t opset = 0;
    if ((e = load_proto(path, &mp, &opset, st))) {
        nb_shape_overrides_free(ov, nov);
        return e;
    }
    Onnx__GraphProto *g = mp->graph;
    for (int k = 0; k < nov && !e; k++)
        for (size_t i = 0; i < g->n_input && !e; i++) {
            Onnx__ValueInfoProto *vi = g->input[i];
            Onnx__TypeProto *tp = vi->type;
            if (strcmp(vi->name, ov[k].name) || !tp ||
                tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
                !tp->tensor_type->shape || (int)tp->tensor_type->shape->n_dim != ov[k].rank)
                continue;
            for (int d = 0; d < ov[k].rank; d++) {
                Onnx__TensorShapeProto__Dimension *dim = tp->tensor_type->shape->dim[d];
                if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
                    free(dim->dim_param);
                    dim->dim_param = NULL;
                }
                dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dim->dim_value = ov[k].dims[d];
            }
        }
    e = save_proto(mp, path, st);
    onnx__model_proto__free_unpacked(mp, NULL);
    nb_shape_overrides_free(ov, nov);
    return e;
}
