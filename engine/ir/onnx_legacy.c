/* nanobench: models of default-domain opset 7 to 10 rewritten, in the decoded ModelProto,
 * into the opset-11 form of the ops whose signature changed before opset 11, so that every
 * later stage (shape inference, reference kernels, calibrate's writers, atc) sees opset 11.
 *
 * Rules (ONNX Changelog.md and Operators.md; ONNX Runtime's upsamplebase.h for the legacy
 * nearest rounding):
 *  - Upsample-7 (scales attribute), Upsample-9/10 and Resize-10 (scales as input 1) ->
 *    Resize-11 (X, roi, scales; roi an empty FLOAT tensor: a required input at 11) with
 *    coordinate_transformation_mode "asymmetric"; mode
 *    nearest or linear. Before opset 11 nearest took floor(x_original) along an axis that
 *    is upsampled (scale >= 1) and ceil along one downsampled (ONNX Runtime's NearestMode
 *    SIMPLE): nearest_mode "floor" when no scale is below 1, "ceil" when none is above 1;
 *    both at once are refused (one nearest_mode cannot say it), and so are a Resize-10's
 *    scales that are not a constant; an Upsample's that are not take "floor" (Upsample-9:
 *    "It takes value greater than or equal to 1"). Output size floor(in * scale) is the
 *    same in both.
 *  - Slice-1 (starts, ends, axes attributes) -> Slice-10/11 inputs (INT64 [n]).
 *  - Pad-2 (pads, value attributes; mode kept) -> Pad-11 (pads INT64 [2r], constant_value
 *    FLOAT scalar when value is not 0: Pad-2's T is float16/float/double, a float16 or
 *    double x then meets inference's type check).
 *  - Clip-6 (min, max FLOAT attributes) -> Clip-11 optional scalar inputs (FLOAT, as Pad).
 *  - TopK-1 (k attribute) -> TopK-10/11 K input (INT64 [1]).
 *  - BatchNormalization-7 spatial: 1 (the default) is dropped (BN-9 is spatial); 0 (one
 *    statistic per activation) is refused.
 *  - Dropout-7: its mask output had X's type, Dropout-10's is bool: a mask that anything
 *    reads is refused (ratio stays an attribute up to opset 11).
 *  - Scan-8 (batch axis, sequence_lens) differs from Scan-9, but Scan is not implemented at
 *    any opset (inference refuses it); an implementation must refuse Scan-8 here.
 * Every other op of opsets 7-10 means the same at 11 (11 adds negative axes and types).
 * New constant tensors are initializers of the node's graph named "<node>/<what>" (made
 * unique with _1, _2, ...). The default-domain opset_import becomes 11 and ir_version at
 * least 6 (opset 11's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "onnx.pb-c.h"

enum { LG_UPSAMPLE, LG_RESIZE, LG_SLICE, LG_PAD, LG_CLIP, LG_TOPK, LG_BN, LG_N };
static const char *const lg_names[LG_N] = {"Upsample -> Resize", "Resize-10 -> Resize-11",
                                           "Slice", "Pad", "Clip", "TopK",
                                           "BatchNormalization"};

typedef struct lctx {
    Onnx__ModelProto *mp;
    ProtobufCAllocator *al; /* the message's arena, or NULL (malloc) */
    const char *path;
    int opset;
    nb_status *st;
    int counts[LG_N];
} lctx;

#define LG_MAX_DEPTH 64 /* enclosing graphs searched for a constant */

static void *lalloc(lctx *c, size_t n)
{
    return c->al ? c->al->alloc(c->al->allocator_data, n ? n : 1) : malloc(n ? n : 1);
}

static void lfree(lctx *c, void *p)
{
    if (!p)
        return;
    if (c->al)
        c->al->free(c->al->allocator_data, p);
    else
        free(p);
}

static char *lstrdup(lctx *c, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lalloc(c, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static nb_err nomem(lctx *c)
{
    return nb_fail(c->st, NB_ERR_NOMEM, "out of memory");
}

/* A node that cannot be converted: one line naming the node, its op and the opset. */
static nb_err refuse(lctx *c, const Onnx__NodeProto *np, const char *why)
{
    return nb_fail(c->st, NB_ERR_UNSUPPORTED, "%s: node '%s' (%s, opset %d): %s; it is not "
                   "converted to opset 11 [re-export the model at opset 11 or later]", c->path,
                   np->name, np->op_type, c->opset, why);
}

/* ------------------------------------------------------------------ names */

static bool graph_has_name(const Onnx__GraphProto *g, const char *nm, int depth)
{
    if (depth > LG_MAX_DEPTH)
        return false;
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, nm))
            return true;
    for (size_t i = 0; i < g->n_input; i++)
        if (!strcmp(g->input[i]->name, nm))
            return true;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t o = 0; o < np->n_output; o++)
            if (!strcmp(np->output[o], nm))
                return true;
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            if (ap->g && graph_has_name(ap->g, nm, depth + 1))
                return true;
            for (size_t k = 0; k < ap->n_graphs; k++)
                if (graph_has_name(ap->graphs[k], nm, depth + 1))
                    return true;
        }
    }
    return false;
}

/* Whether a node of g (or of its subgraphs) reads nm, or g outputs it. */
static bool graph_reads(const Onnx__GraphProto *g, const char *nm, int depth)
{
    if (depth > LG_MAX_DEPTH)
        return false;
    for (size_t i = 0; i < g->n_output; i++)
        if (!strcmp(g->output[i]->name, nm))
            return true;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t k = 0; k < np->n_input; k++)
            if (!strcmp(np->input[k], nm))
                return true;
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            if (ap->g && graph_reads(ap->g, nm, depth + 1))
                return true;
            for (size_t k = 0; k < ap->n_graphs; k++)
                if (graph_reads(ap->graphs[k], nm, depth + 1))
                    return true;
        }
    }
    return false;
}

/* "<node>/<what>", or with _1, _2, ... when a tensor of the model has that name. */
static char *new_name(lctx *c, const Onnx__NodeProto *np, const char *what)
{
    size_t n = strlen(np->name) + strlen(what) + 24;
    char *buf = malloc(n);
    if (!buf)
        return NULL;
    snprintf(buf, n, "%s/%s", np->name, what);
    size_t bl = strlen(buf);
    for (int k = 1; graph_has_name(c->mp->graph, buf, 0); k++)
        snprintf(buf + bl, n - bl, "_%d", k);
    char *d = lstrdup(c, buf);
    free(buf);
    return d;
}

/* ------------------------------------------------------------------ message edits */

/* A new initializer of g: FLOAT (f) or INT64 (i) data of count values, rank 0 or 1. */
static char *add_init(lctx *c, Onnx__GraphProto *g, const Onnx__NodeProto *np, const char *what,
                      bool rank1, const float *f, const int64_t *i, size_t count)
{
    Onnx__TensorProto *t = lalloc(c, sizeof *t);
    Onnx__TensorProto **arr = lalloc(c, sizeof *arr * (g->n_initializer + 1));
    if (!t || !arr)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = new_name(c, np, what);
    if (!t->name)
        return NULL;
    t->has_data_type = 1;
    t->data_type = f ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT : ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    if (rank1) {
        t->dims = lalloc(c, sizeof(int64_t));
        if (!t->dims)
            return NULL;
        t->dims[0] = (int64_t)count;
        t->n_dims = 1;
    }
    if (f) {
        t->float_data = lalloc(c, sizeof(float) * count);
        if (!t->float_data)
            return NULL;
        memcpy(t->float_data, f, sizeof(float) * count);
        t->n_float_data = count;
    } else {
        t->int64_data = lalloc(c, sizeof(int64_t) * count);
        if (!t->int64_data)
            return NULL;
        memcpy(t->int64_data, i, sizeof(int64_t) * count);
        t->n_int64_data = count;
    }
    if (g->n_initializer)
        memcpy(arr, g->initializer, sizeof *arr * g->n_initializer);
    arr[g->n_initializer] = t;
    lfree(c, g->initializer);
    g->initializer = arr;
    g->n_initializer++;
    return t->name;
}

/* The node's inputs become ins[0..n): an input string of the node is kept, any other
 * (a new initializer's name, NULL for "") copied. */
static bool set_inputs(lctx *c, Onnx__NodeProto *np, char **ins, size_t n)
{
    char **arr = lalloc(c, sizeof *arr * n);
    if (!arr)
        return false;
    for (size_t k = 0; k < n; k++) {
        bool own = false;
        for (size_t j = 0; j < np->n_input && !own; j++)
            own = ins[k] == np->input[j];
        if (!(arr[k] = own ? ins[k] : lstrdup(c, ins[k] ? ins[k] : "")))
            return false;
    }
    /* strings of the old list not kept are freed */
    for (size_t k = 0; k < np->n_input; k++) {
        bool kept = false;
        for (size_t j = 0; j < n && !kept; j++)
            kept = arr[j] == np->input[k];
        if (!kept)
            lfree(c, np->input[k]);
    }
    lfree(c, np->input);
    np->input = arr;
    np->n_input = n;
    return true;
}

static Onnx__AttributeProto *find_attr(const Onnx__NodeProto *np, const char *name)
{
    for (size_t a = 0; a < np->n_attribute; a++)
        if (!strcmp(np->attribute[a]->name, name))
            return np->attribute[a];
    return NULL;
}

static void drop_attr(lctx *c, Onnx__NodeProto *np, const char *name)
{
    for (size_t a = 0; a < np->n_attribute; a++)
        if (!strcmp(np->attribute[a]->name, name)) {
            protobuf_c_message_free_unpacked(&np->attribute[a]->base, c->al);
            memmove(np->attribute + a, np->attribute + a + 1,
                    sizeof *np->attribute * (np->n_attribute - a - 1));
            np->n_attribute--;
            return;
        }
}

static bool add_attr_str(lctx *c, Onnx__NodeProto *np, const char *name, const char *v)
{
    drop_attr(c, np, name);
    Onnx__AttributeProto *a = lalloc(c, sizeof *a);
    Onnx__AttributeProto **arr = lalloc(c, sizeof *arr * (np->n_attribute + 1));
    if (!a || !arr)
        return false;
    onnx__attribute_proto__init(a);
    a->name = lstrdup(c, name);
    a->s.data = (uint8_t *)lstrdup(c, v);
    if (!a->name || !a->s.data)
        return false;
    a->s.len = strlen(v);
    a->has_s = 1;
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (np->n_attribute)
        memcpy(arr, np->attribute, sizeof *arr * np->n_attribute);
    arr[np->n_attribute] = a;
    lfree(c, np->attribute);
    np->attribute = arr;
    np->n_attribute++;
    return true;
}

static bool attr_is(const Onnx__AttributeProto *a, const char *s)
{
    return a && a->s.len == strlen(s) && !memcmp(a->s.data, s, a->s.len);
}

/* The float values (at most max) of the constant nm: an initializer or a Constant node's
 * value in g or an enclosing graph (chain[0..depth)); the count, or -1 when nm is not a
 * FLOAT constant of at most max values. */
static int const_floats(Onnx__GraphProto *const *chain, int depth, const char *nm, float *out,
                        int max)
{
    const Onnx__TensorProto *t = NULL;
    for (int d = depth - 1; d >= 0 && !t; d--) {
        const Onnx__GraphProto *g = chain[d];
        for (size_t i = 0; i < g->n_initializer && !t; i++)
            if (!strcmp(g->initializer[i]->name, nm))
                t = g->initializer[i];
        for (size_t i = 0; i < g->n_node && !t; i++) {
            const Onnx__NodeProto *np = g->node[i];
            if (!strcmp(np->op_type, "Constant") && np->n_output == 1 &&
                !strcmp(np->output[0], nm)) {
                const Onnx__AttributeProto *a = find_attr(np, "value");
                if (!a || !a->t)
                    return -1;
                t = a->t;
            }
        }
    }
    if (!t || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || t->n_external_data)
        return -1;
    size_t n = 1;
    for (size_t d = 0; d < t->n_dims; d++)
        n *= t->dims[d] < 0 ? 0 : (size_t)t->dims[d];
    if (n > (size_t)max)
        return -1;
    if (t->n_float_data == n)
        memcpy(out, t->float_data, sizeof(float) * n);
    else if (t->has_raw_data && t->raw_data.len == sizeof(float) * n && t->raw_data.data)
        memcpy(out, t->raw_data.data, sizeof(float) * n); /* little-endian, as the importer */
    else
        return -1;
    return (int)n;
}

/* ------------------------------------------------------------------ ops */

/* Upsample (7: scales attribute; 9, 10: input) and Resize-10 -> Resize-11. */
static nb_err conv_resize(lctx *c, Onnx__GraphProto *const *chain, int depth, Onnx__NodeProto *np)
{
    bool up = !strcmp(np->op_type, "Upsample");
    const Onnx__AttributeProto *ma = find_attr(np, "mode");
    bool nearest = !ma || attr_is(ma, "nearest");
    if (!nearest && !attr_is(ma, "linear"))
        return refuse(c, np, "mode is neither nearest nor linear");
    float sc[NB_MAX_RANK];
    int ns = -1;
    char *scales = NULL;
    if (up && c->opset < 9) {
        const Onnx__AttributeProto *sa = find_attr(np, "scales");
        if (!sa || !sa->n_floats || sa->n_floats > NB_MAX_RANK)
            return refuse(c, np, "no scales attribute of 1 to 8 values");
        ns = (int)sa->n_floats;
        memcpy(sc, sa->floats, sizeof(float) * (size_t)ns);
        if (np->n_input != 1)
            return refuse(c, np, "one input expected");
        if (!(scales = add_init(c, chain[depth - 1], np, "scales", true, sc, NULL, (size_t)ns)))
            return nomem(c);
        drop_attr(c, np, "scales");
    } else {
        if (np->n_input != 2 || !np->input[1][0])
            return refuse(c, np, "two inputs (X, scales) expected");
        scales = np->input[1];
        ns = const_floats(chain, depth, scales, sc, NB_MAX_RANK);
    }
    if (nearest) {
        if (ns < 0 && !up)
            return refuse(c, np, "nearest with scales that are not a constant (its rounding, "
                          "floor up and ceil down, depends on them)");
        bool below = false, above = false; /* Upsample's scales are >= 1 (Upsample-9) */
        for (int i = 0; i < ns; i++)
            below |= sc[i] < 1, above |= sc[i] > 1;
        if (below && above)
            return refuse(c, np, "nearest that upsamples one axis and downsamples another "
                          "(floor on one, ceil on the other: no opset-11 nearest_mode)");
        if (!add_attr_str(c, np, "nearest_mode", below ? "ceil" : "floor"))
            return nomem(c);
    }
    /* roi is a required input of Resize-11 (optional from 13): an empty FLOAT tensor */
    char *roi = add_init(c, chain[depth - 1], np, "roi", true, (const float[1]){0}, NULL, 0);
    char *ins[3] = {np->input[0], roi, scales};
    if (!roi || !set_inputs(c, np, ins, 3) ||
        !add_attr_str(c, np, "coordinate_transformation_mode", "asymmetric"))
        return nomem(c);
    if (up) {
        char *op = lstrdup(c, "Resize");
        if (!op)
            return nomem(c);
        lfree(c, np->op_type);
        np->op_type = op;
    }
    c->counts[up ? LG_UPSAMPLE : LG_RESIZE]++;
    return NB_OK;
}

/* Slice-1: starts, ends (required), axes attributes -> inputs. */
static nb_err conv_slice(lctx *c, Onnx__GraphProto *g, Onnx__NodeProto *np)
{
    const Onnx__AttributeProto *s = find_attr(np, "starts"), *e = find_attr(np, "ends"),
                               *a = find_attr(np, "axes");
    if (np->n_input != 1 || !s || !e || s->n_ints != e->n_ints || (a && a->n_ints != s->n_ints))
        return refuse(c, np, "one input and starts, ends (and axes) of one length expected");
    char *ins[4] = {np->input[0], NULL, NULL, NULL};
    if (!(ins[1] = add_init(c, g, np, "starts", true, NULL, s->ints, s->n_ints)) ||
        !(ins[2] = add_init(c, g, np, "ends", true, NULL, e->ints, e->n_ints)) ||
        (a && !(ins[3] = add_init(c, g, np, "axes", true, NULL, a->ints, a->n_ints))) ||
        !set_inputs(c, np, ins, a ? 4 : 3))
        return nomem(c);
    drop_attr(c, np, "starts");
    drop_attr(c, np, "ends");
    drop_attr(c, np, "axes");
    c->counts[LG_SLICE]++;
    return NB_OK;
}

/* Pad-2: pads, value attributes -> inputs (mode stays). */
static nb_err conv_pad(lctx *c, Onnx__GraphProto *g, Onnx__NodeProto *np)
{
    const Onnx__AttributeProto *p = find_attr(np, "pads"), *v = find_attr(np, "value");
    if (np->n_input != 1 || !p)
        return refuse(c, np, "one input and a pads attribute expected");
    float val = v ? v->f : 0.0f;
    char *ins[3] = {np->input[0], NULL, NULL};
    if (!(ins[1] = add_init(c, g, np, "pads", true, NULL, p->ints, p->n_ints)) ||
        (val != 0 && !(ins[2] = add_init(c, g, np, "value", false, &val, NULL, 1))) ||
        !set_inputs(c, np, ins, val != 0 ? 3 : 2))
        return nomem(c);
    drop_attr(c, np, "pads");
    drop_attr(c, np, "value");
    c->counts[LG_PAD]++;
    return NB_OK;
}

/* Clip-6: min, max attributes -> optional inputs. */
static nb_err conv_clip(lctx *c, Onnx__GraphProto *g, Onnx__NodeProto *np)
{
    const Onnx__AttributeProto *lo = find_attr(np, "min"), *hi = find_attr(np, "max");
    if (np->n_input != 1)
        return refuse(c, np, "one input expected");
    char *ins[3] = {np->input[0], NULL, NULL};
    if ((lo && !(ins[1] = add_init(c, g, np, "min", false, &lo->f, NULL, 1))) ||
        (hi && !(ins[2] = add_init(c, g, np, "max", false, &hi->f, NULL, 1))) ||
        !set_inputs(c, np, ins, hi ? 3 : lo ? 2 : 1))
        return nomem(c);
    drop_attr(c, np, "min");
    drop_attr(c, np, "max");
    c->counts[LG_CLIP]++;
    return NB_OK;
}

/* TopK-1: k attribute -> K input. */
static nb_err conv_topk(lctx *c, Onnx__GraphProto *g, Onnx__NodeProto *np)
{
    const Onnx__AttributeProto *k = find_attr(np, "k");
    if (np->n_input != 1 || !k)
        return refuse(c, np, "one input and a k attribute expected");
    char *ins[2] = {np->input[0], NULL};
    if (!(ins[1] = add_init(c, g, np, "k", true, NULL, &k->i, 1)) || !set_inputs(c, np, ins, 2))
        return nomem(c);
    drop_attr(c, np, "k");
    c->counts[LG_TOPK]++;
    return NB_OK;
}

static nb_err conv_node(lctx *c, Onnx__GraphProto *const *chain, int depth, Onnx__NodeProto *np)
{
    Onnx__GraphProto *g = chain[depth - 1];
    const char *op = np->op_type;
    if (np->domain[0] && strcmp(np->domain, "ai.onnx"))
        return NB_OK;
    if (!strcmp(op, "Upsample") || (!strcmp(op, "Resize") && c->opset == 10))
        return conv_resize(c, chain, depth, np);
    if (!strcmp(op, "Slice") && c->opset < 10)
        return conv_slice(c, g, np);
    if (!strcmp(op, "Pad"))
        return conv_pad(c, g, np);
    if (!strcmp(op, "Clip"))
        return conv_clip(c, g, np);
    if (!strcmp(op, "TopK") && c->opset < 10)
        return conv_topk(c, g, np);
    if (!strcmp(op, "BatchNormalization") && c->opset < 9) {
        const Onnx__AttributeProto *s = find_attr(np, "spatial");
        if (s && s->i == 0)
            return refuse(c, np, "spatial=0 (statistics per activation) has no opset-9 form");
        if (s) {
            drop_attr(c, np, "spatial");
            c->counts[LG_BN]++;
        }
        return NB_OK;
    }
    if (!strcmp(op, "Dropout") && c->opset < 10 && np->n_output > 1 && np->output[1][0] &&
        graph_reads(c->mp->graph, np->output[1], 0))
        return refuse(c, np, "its mask output is read (of X's type before opset 10, bool after)");
    return NB_OK;
}

static nb_err conv_graph(lctx *c, Onnx__GraphProto **chain, int depth)
{
    if (depth > LG_MAX_DEPTH)
        return nb_fail(c->st, NB_ERR_UNSUPPORTED, "%s: subgraphs nested deeper than %d",
                       c->path, LG_MAX_DEPTH);
    Onnx__GraphProto *g = chain[depth - 1];
    nb_err e;
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *np = g->node[i];
        for (size_t a = 0; a < np->n_attribute; a++) {
            Onnx__AttributeProto *ap = np->attribute[a];
            for (size_t k = 0; k < ap->n_graphs + (ap->g != NULL); k++) {
                chain[depth] = k < ap->n_graphs ? ap->graphs[k] : ap->g;
                if ((e = conv_graph(c, chain, depth + 1)))
                    return e;
            }
        }
        if ((e = conv_node(c, chain, depth, np)))
            return e;
    }
    return NB_OK;
}

nb_err nb_onnx_upgrade_legacy(Onnx__ModelProto *mp, struct ProtobufCAllocator *al,
                              const char *path, int opset, char *summary, size_t summary_len,
                              nb_status *st)
{
    lctx c = {.mp = mp, .al = al, .path = path ? path : "<memory>", .opset = opset, .st = st};
    if (summary_len)
        summary[0] = 0;
    Onnx__GraphProto *chain[LG_MAX_DEPTH + 2];
    chain[0] = mp->graph;
    nb_err e = conv_graph(&c, chain, 1);
    if (e)
        return e;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        if (!os->domain[0] || !strcmp(os->domain, "ai.onnx"))
            os->version = 11, os->has_version = 1;
    }
    if (mp->ir_version < 6)
        mp->ir_version = 6;
    size_t at = 0;
    for (int k = 0; k < LG_N && summary_len; k++)
        if (c.counts[k] && at < summary_len) {
            int w = snprintf(summary + at, summary_len - at, "%s%d %s", at ? ", " : "",
                             c.counts[k], lg_names[k]);
            at += w > 0 ? (size_t)w : 0;
        }
    return NB_OK;
}
