/* nanobench: the exeom writer and parser (include/nb/exeom.h; layout in share/doc/exeom.md).
 *
 * Little-endian, written field by field (never a struct copy), so the file is the same on
 * every host and byte-identical for the same inputs.
 */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "nb/exeom.h"

#define HEADER 64
#define TENSOR 48
#define TASK 64

/* ---- kernel ids: append only (a file stores the number) ---- */

/* ---- little-endian writes ---- */
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void putf(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u);
}
static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* aclDataType of an NPU tensor type (compile.md); 29 for int4. */
static int acl_dtype(nb_dtype t)
{
    switch ((int)t) {
    case NB_FLOAT: return 0;
    case NB_FLOAT16: return 1;
    case NB_INT8: return 2;
    case NB_INT32: return 3;
    case NB_UINT8: return 4;
    case NB_INT16: return 6;
    case NB_UINT16: return 7;
    case NB_UINT32: return 8;
    case NB_INT64: return 9;
    case NB_UINT64: return 10;
    case NB_DOUBLE: return 11;
    case NB_BOOL: return 12;
    case NB_NPU_INT4: return 29;
    default: return 255;
    }
}

static const nb_npu_layer *find_layer(const nb_npu_layer *ls, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(ls[i].node, name))
            return &ls[i];
    return NULL;
}

static const nb_node *find_node(const nb_graph *g, const char *name)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i].name, name))
            return &g->nodes[i];
    return NULL;
}

/* A task inside an If branch is named "<If node>/<branch attribute>/<task>" (the lowering's
 * prefix, nested for nested Ifs): the branch's graph, and in *task the rest of the name.
 * Node names may hold '/' (torch's): the prefix is matched against the nodes' own names. */
static const nb_graph *task_scope(const nb_graph *g, const char **task)
{
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (int i = 0; i < g->n_nodes && !deeper; i++) {
            const nb_node *n = &g->nodes[i];
            size_t nl = strlen(n->name);
            if (!n->n_attr || strncmp(*task, n->name, nl) || (*task)[nl] != '/')
                continue;
            for (int a = 0; a < n->n_attr && !deeper; a++) {
                size_t al = strlen(n->attrs[a].name);
                const char *r = *task + nl + 1;
                if (n->attrs[a].g && !strncmp(r, n->attrs[a].name, al) && r[al] == '/') {
                    g = n->attrs[a].g;
                    *task = r + al + 1;
                    deeper = true;
                }
            }
        }
    }
    return g;
}

/* The constant named name in g or in any of its branches (depth first): a branch output
 * that is a Constant node's, which the If's select reads. */
static const nb_tensor *any_const(const nb_graph *g, const char *name)
{
    int v = nb_graph_find(g, name);
    if (v >= 0 && g->values[v].const_val)
        return g->values[v].const_val;
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attr; a++) {
            const nb_tensor *t = g->nodes[i].attrs[a].g ? any_const(g->nodes[i].attrs[a].g, name)
                                                        : NULL;
            if (t)
                return t;
        }
    return NULL;
}

/* The quantized layer a task of graph g belongs to: the task itself ("<layer>"), an unrolled
 * RNN step ("<layer>/t<s>"), or their AscendQuant ("<layer>/AscendQuant", and "<layer>/t<s>/
 * AscendQuant" for the state: *step set); in an If branch, named without the branch's
 * prefix (task_scope). NULL when none. */
static const nb_npu_layer *layer_of(const nb_graph *g, const nb_npu_layer *ls, int n,
                                    const char *task, bool *step)
{
    task_scope(g, &task);
    *step = false;
    char *buf = strdup(task); /* a name of any length (issue 35: 600 bytes failed here) */
    if (!buf)
        return NULL;
    size_t len = strlen(buf);
    static const char quant[] = "/AscendQuant";
    if (len > sizeof quant - 1 && !strcmp(buf + len - (sizeof quant - 1), quant))
        buf[len - (sizeof quant - 1)] = 0;
    const nb_npu_layer *l = find_layer(ls, n, buf);
    char *slash = l ? NULL : strrchr(buf, '/');
    if (slash && slash[1] == 't' && slash[2] && strspn(slash + 2, "0123456789") == strlen(slash + 2)) {
        *slash = 0;
        l = find_layer(ls, n, buf);
        *step = l != NULL;
    }
    free(buf);
    return l;
}

/* The ONNX node a task comes from: its own name, or "<node>/<inserted op>". */
static const nb_node *task_node(const nb_graph *g, const char *task)
{
    g = task_scope(g, &task);
    const nb_node *n = find_node(g, task);
    if (n)
        return n;
    const char *slash = strrchr(task, '/');
    if (!slash)
        return NULL;
    char *buf = strndup(task, (size_t)(slash - task));
    n = buf ? find_node(g, buf) : NULL;
    free(buf);
    return n;
}

/* The task's parameters (share/doc/exeom.md, "Task parameters"). */
/* Element i of Slice's constant operand `which` (1 starts, 2 ends, 3 axes, 4 steps; opset
 * 1-9: the attributes), or dflt when the node does not give it. */
static bool slice_operand(const nb_graph *g, const nb_node *n, int which, int i, int64_t dflt,
                          int64_t *out, int *count)
{
    static const char *const attr[] = {NULL, "starts", "ends", "axes", NULL};
    if (which < 4 && nb_attr_find(n, attr[which])) {
        int cnt = 0;
        const int64_t *v = nb_attr_ints(n, attr[which], &cnt);
        *count = cnt;
        *out = i < cnt ? v[i] : dflt;
        return true;
    }
    const nb_tensor *t = n->n_in > which && n->in[which] >= 0 ? g->values[n->in[which]].const_val
                                                               : NULL;
    if (n->n_in > which && n->in[which] >= 0 && !t)
        return false; /* given, but not a constant */
    *count = t ? (int)t->numel : -1;
    *out = t && i < t->numel ? nb_tensor_get_i64(t, i) : dflt;
    return true;
}

/* Slice: up to 3 sliced axes, each as (axis u8, effective start i32, step i32) after a count
 * byte; the output's dims give each axis's length (share/doc/exeom.md). Starts and ends are
 * clamped as ONNX's Slice clamps them (Operators.md, Slice-13). */
static nb_err slice_params(const nb_graph *g, const nb_npu_graph *ng, const nb_npu_task *k,
                           const nb_node *n, uint8_t *p, nb_status *st)
{
    if (!n || !k->n_in || !k->n_out)
        return nb_fail(st, NB_ERR_INTERNAL, "task '%s': no Slice node behind it", k->name);
    const nb_npu_tensor *x = &ng->t[k->in[0]], *y = &ng->t[k->out[0]];
    if (!strcmp(n->op_type, "Split")) { /* "<split>/<o>": output o, one Slice along the axis */
        const char *tail = strrchr(k->name, '/');
        int o = tail ? atoi(tail + 1) : -1;
        int64_t axis = nb_attr_int(n, "axis", 0);
        if (axis < 0)
            axis += x->rank;
        if (o < 0 || o >= n->n_out || axis < 0 || axis >= x->rank)
            return nb_fail(st, NB_ERR_INTERNAL, "task '%s': Split output %d, axis %lld", k->name,
                           o, (long long)axis);
        int64_t start = 0;
        for (int j = 0; j < o; j++)
            start += n->out[j] >= 0 ? g->values[n->out[j]].dims[axis] : 0;
        p[0] = 1;
        p[1] = (uint8_t)axis;
        put32(p + 2, (uint32_t)start);
        put32(p + 6, 1);
        return NB_OK;
    }
    int na = 0;
    int64_t v;
    if (!slice_operand(g, n, 1, 0, 0, &v, &na) || na < 0)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Slice starts computed at run time "
                       "(the exeom takes constant starts, ends, axes and steps)", k->name);
    int used = 0;
    for (int i = 0; i < na; i++) {
        int64_t start, end, axis, step;
        int c1, c2, c3, c4;
        if (!slice_operand(g, n, 1, i, 0, &start, &c1) ||
            !slice_operand(g, n, 2, i, INT64_MAX, &end, &c2) ||
            !slice_operand(g, n, 3, i, i, &axis, &c3) || !slice_operand(g, n, 4, i, 1, &step, &c4))
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Slice operands computed at run "
                           "time (the exeom takes constants)", k->name);
        if (axis < 0)
            axis += x->rank;
        if (axis < 0 || axis >= x->rank || step == 0)
            return nb_fail(st, NB_ERR_ATTR, "task '%s': Slice axis %lld, step %lld", k->name,
                           (long long)axis, (long long)step);
        int64_t dim = x->dims[axis];
        if (start < 0)
            start += dim;
        if (end < 0 && end > INT64_MIN / 2)
            end += dim;
        if (step > 0) {
            start = start < 0 ? 0 : start > dim ? dim : start;
            end = end < 0 ? 0 : end > dim ? dim : end;
        } else {
            start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
            end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
        }
        /* the count in unsigned arithmetic: a step of +-2^63 must not overflow */
        int64_t len = 0;
        if (step > 0 && end > start)
            len = (int64_t)(((uint64_t)(end - start) - 1) / (uint64_t)step + 1);
        else if (step < 0 && start > end)
            len = (int64_t)(((uint64_t)(start - end) - 1) / ((uint64_t)(-(step + 1)) + 1) + 1);
        if (len <= 1) /* one element (or none): any step reads it; an empty one starts at 0 */
            step = 1;
        if (len == 0)
            start = 0;
        if (len != y->dims[axis])
            return nb_fail(st, NB_ERR_INTERNAL, "task '%s': Slice gives %lld along axis %lld, "
                           "its output has %lld", k->name, (long long)len, (long long)axis,
                           (long long)y->dims[axis]);
        if (start == 0 && step == 1 && len == dim)
            continue; /* the whole axis: nothing to encode */
        if (used == 3)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Slice along more than 3 axes (the "
                           "exeom holds 3; split it in two Slices)", k->name);
        if (start > INT32_MAX || step > INT32_MAX || step < INT32_MIN)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Slice start or step beyond "
                           "int32", k->name);
        uint8_t *q = p + 1 + 9 * used++;
        q[0] = (uint8_t)axis;
        put32(q + 1, (uint32_t)(int32_t)start);
        put32(q + 5, (uint32_t)(int32_t)step);
    }
    p[0] = (uint8_t)used;
    return NB_OK;
}

/* AscendQuant: scale f32, offset f32, bits u8 of its layer (an RNN state's, a MatMul's second
   operand's) */
static nb_err quant_params(const nb_model *m, const nb_npu_graph *ng, const nb_npu_task *k,
                           const nb_npu_layer *ls, int n_layers, uint8_t *p, nb_status *st)
{
    /* the second operand of a MatMul of two activations: its own scale */
    for (int j = 0; j < ng->n_k && k->n_out; j++) {
        const nb_npu_task *c = &ng->k[j];
        if (c->unit != NB_TASK_CUBE || c->n_in < 2 || c->in[1] != k->out[0])
            continue;
        bool step;
        const nb_npu_layer *l = layer_of(m->graph, ls, n_layers, c->name, &step);
        if (!l || !(l->b_scale > 0))
            return nb_fail(st, NB_ERR_GRAPH, "task '%s': no scale for the second operand "
                           "of '%s' (a MatMul of two activations)", k->name, c->name);
        putf(p, l->b_scale);
        putf(p + 4, l->b_offset);
        p[8] = 8;
        return NB_OK;
    }
    bool state; /* an RNN's state enters its recurrent product through its step's quant */
    const nb_npu_layer *l = layer_of(m->graph, ls, n_layers, k->name, &state);
    if (!l)
        return nb_fail(st, NB_ERR_GRAPH, "task '%s': no quantized layer gives its scale",
                       k->name);
    state = state && l->r;
    putf(p, state ? l->h_scale : l->quant_scale);
    putf(p + 4, state ? l->h_offset : l->quant_offset);
    int bits = state ? 8 : l->act_bits;
    nb_dtype want = bits == 16 ? NB_INT16 : NB_INT8;
    if (k->n_out && ng->t[k->out[0]].dtype != want)
        return nb_fail(st, NB_ERR_INTERNAL, "task '%s': the layer's dst_bits %d, its "
                       "output is %s (the lowering was not told of the int16 layer)",
                       k->name, bits, nb_dtype_name(ng->t[k->out[0]].dtype));
    p[8] = (uint8_t)bits;
    return NB_OK;
}

/* Conv, ConvTranspose, MaxPool: kh kw sh sw pt pl pb pr dh dw (u16), group u16, ceil_mode u8 */
static nb_err window_params(const nb_npu_graph *ng, const nb_npu_task *k, const nb_node *n,
                            uint8_t *p, nb_status *st)
{
    int npads = 0, nd = 0, nk = 0, ns = 0;
    const int64_t *pads = nb_attr_ints(n, "pads", &npads);
    const int64_t *dil = nb_attr_ints(n, "dilations", &nd);
    const int64_t *ks = nb_attr_ints(n, "kernel_shape", &nk);
    const int64_t *strides = nb_attr_ints(n, "strides", &ns);
    int sp = nk ? nk : (k->n_in > 1 ? ng->t[k->in[1]].rank - 2 : 2);
    if (sp > 2 || (nk && nk > 2))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': %d spatial dims (the exeom holds "
                       "1 or 2)", k->name, sp);
    const char *autopad = nb_attr_str(n, "auto_pad", "NOTSET");
    if (strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID"))
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': auto_pad %s is not in the exeom "
                       "yet (give explicit pads)", k->name, autopad);
    int64_t v[10] = {1, 1, 1, 1, 0, 0, 0, 0, 1, 1}; /* kh kw sh sw pt pl pb pr dh dw, u16 */
    int off = 2 - sp; /* 1-D: the H entries stay 1 / 0 */
    for (int i = 0; i < sp; i++) {
        if (i < nk)
            v[off + i] = ks[i];
        else if (k->n_in > 1) /* a Conv's kernel from its weights' trailing dims */
            v[off + i] = ng->t[k->in[1]].dims[ng->t[k->in[1]].rank - sp + i];
        if (i < ns)
            v[2 + off + i] = strides[i];
        if (i < nd)
            v[8 + off + i] = dil[i];
        if (npads == 2 * sp) {
            v[4 + off + i] = pads[i];
            v[6 + off + i] = pads[sp + i];
        }
    }
    for (int i = 0; i < 10; i++) {
        if (v[i] < 0 || v[i] > 65535)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': kernel, stride, pad or "
                           "dilation %lld outside 0..65535", k->name, (long long)v[i]);
        put16(p + 2 * i, (uint32_t)v[i]);
    }
    int64_t group = nb_attr_int(n, "group", 1);
    if (group < 1 || group > 65535)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': group %lld", k->name,
                       (long long)group);
    put16(p + 20, (uint32_t)group);
    p[22] = (uint8_t)nb_attr_int(n, "ceil_mode", 0);
    return NB_OK;
}

/* Clip: min and max f32 (attributes, constant inputs, or a decomposition's scalars) */
static nb_err clip_params(const nb_graph *g, const nb_npu_graph *ng, const nb_npu_task *k,
                          const nb_node *n, uint8_t *p)
{
    float lo = -INFINITY, hi = INFINITY;
    if (strcmp(n->op_type, "Clip")) {
        /* a Clip atc made of another op (HardSigmoid's, 0 and 1): its bounds are the
           scalars it generated as inputs 1 and 2, not the source node's (which has none:
           they were read as +-inf and HardSigmoid did not clamp, a helper's find) */
        for (int j = 1; j < 3 && j < k->n_in; j++)
            if (k->in[j] >= 0 && ng->t[k->in[j]].gen == 1)
                *(j == 1 ? &lo : &hi) = ng->t[k->in[j]].scalar;
    } else if (n->n_in > 1 || nb_attr_find(n, "min") || nb_attr_find(n, "max")) {
        lo = nb_attr_float(n, "min", lo);
        hi = nb_attr_float(n, "max", hi);
        if (n->n_in > 1 && n->in[1] >= 0 && g->values[n->in[1]].const_val)
            lo = (float)nb_tensor_get_f64(g->values[n->in[1]].const_val, 0);
        if (n->n_in > 2 && n->in[2] >= 0 && g->values[n->in[2]].const_val)
            hi = (float)nb_tensor_get_f64(g->values[n->in[2]].const_val, 0);
    }
    putf(p, lo);
    putf(p + 4, hi);
    return NB_OK;
}

/* Reduce*: the axes as a bit mask u8, keepdims u8 */
static nb_err reduce_params(const nb_graph *g, const nb_npu_graph *ng, const nb_npu_task *k,
                            const nb_node *n, uint8_t *p, nb_status *st)
{
    int cnt = 0;
    const int64_t *axes = nb_attr_ints(n, "axes", &cnt);
    const nb_tensor *at = !cnt && n->n_in > 1 && n->in[1] >= 0
                              ? g->values[n->in[1]].const_val : NULL;
    int rank = k->n_in ? ng->t[k->in[0]].rank : 0;
    uint8_t mask = 0;
    int na = at ? (int)at->numel : cnt;
    for (int i = 0; i < na; i++) {
        int64_t a = at ? nb_tensor_get_i64(at, i) : axes[i];
        if (a < 0)
            a += rank;
        if (a < 0 || a >= 8)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': axis %lld", k->name,
                           (long long)a);
        mask |= (uint8_t)(1u << a);
    }
    if (!na) /* no axes: all of them (unless noop_with_empty_axes) */
        mask = nb_attr_int(n, "noop_with_empty_axes", 0) ? 0 : (uint8_t)((1u << rank) - 1);
    p[0] = mask;
    p[1] = (uint8_t)nb_attr_int(n, "keepdims", 1);
    return NB_OK;
}

/* If: branches, outputs each, which branch is then_branch, each branch's tasks (u16 first,
   count) */
static nb_err if_params(const nb_npu_task *k, const nb_node *n, uint8_t *p, nb_status *st)
{
    int nbr = 0, then_at = -1;
    for (int a = 0; n && a < n->n_attr; a++)
        if (n->attrs[a].g) {
            if (!strcmp(n->attrs[a].name, "then_branch"))
                then_at = nbr;
            nbr++;
        }
    int nout = n ? n->n_out : 0;
    if (nbr != 2 || then_at < 0 || k->n_out != nout || k->n_in != 1 + nbr * nout)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': If of %d branches and %d outputs",
                       k->name, nbr, nout);
    p[0] = (uint8_t)nbr;
    p[1] = (uint8_t)nout;
    p[2] = (uint8_t)then_at;
    /* each branch's tasks (the CPU skips the branch not taken; 0 0: none known) */
    for (int b = 0; b < 2; b++) {
        bool fits = k->br_first[b] >= 0 && k->br_first[b] + k->br_count[b] < NB_EXEOM_NONE;
        put16(p + 4 + 4 * b, fits ? (uint32_t)k->br_first[b] : 0);
        put16(p + 6 + 4 * b, fits ? (uint32_t)k->br_count[b] : 0);
    }
    return NB_OK;
}

/* Gather: axis, count, the indices (negative ones normalized); count 0 for an indices input */
static nb_err gather_params(const nb_graph *g, const nb_npu_graph *ng, const nb_npu_task *k,
                            const nb_node *n, uint8_t *p, nb_status *st)
{
    const nb_tensor *it = n && n->n_in > 1 && n->in[1] >= 0 ? g->values[n->in[1]].const_val
                                                             : NULL;
    if (k->n_in == 2) { /* the indices are input 1, an int32 tensor (GatherV2): count 0 */
        int64_t axis = nb_attr_int(n, "axis", 0), rank = ng->t[k->in[0]].rank;
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis >= rank)
            return nb_fail(st, NB_ERR_ATTR, "task '%s': Gather axis %lld", k->name,
                           (long long)nb_attr_int(n, "axis", 0));
        p[0] = (uint8_t)axis;
        p[1] = 0;
        return NB_OK;
    }
    if (!it || it->numel > 6 || !k->n_in)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Gather with indices that are not "
                       "6 constants or fewer", k->name);
    const nb_npu_tensor *x = &ng->t[k->in[0]];
    int64_t axis = nb_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return nb_fail(st, NB_ERR_ATTR, "task '%s': Gather axis %lld", k->name,
                       (long long)axis);
    p[0] = (uint8_t)axis;
    p[1] = (uint8_t)it->numel;
    for (int64_t i = 0; i < it->numel; i++) {
        int64_t v = nb_tensor_get_i64(it, i);
        if (v < 0)
            v += x->dims[axis];
        if (v < 0 || v >= x->dims[axis])
            return nb_fail(st, NB_ERR_ATTR, "task '%s': Gather index %lld outside [0, %lld)",
                           k->name, (long long)nb_tensor_get_i64(it, i),
                           (long long)x->dims[axis]);
        put32(p + 2 + 4 * i, (uint32_t)v);
    }
    return NB_OK;
}

/* Pad: mode, rank, int16 pads (begins, then ends), f32 value */
static nb_err pad_params(const nb_graph *g, const nb_npu_graph *ng, const nb_npu_task *k,
                         const nb_node *n, uint8_t *p, nb_status *st)
{
    const nb_tensor *pt = n && n->n_in > 1 && n->in[1] >= 0 ? g->values[n->in[1]].const_val
                                                            : NULL;
    const nb_tensor *vt = n && n->n_in > 2 && n->in[2] >= 0 ? g->values[n->in[2]].const_val
                                                            : NULL;
    int rank = k->n_in ? ng->t[k->in[0]].rank : 0;
    const char *mode = n ? nb_attr_str(n, "mode", "constant") : "constant";
    if (!pt || pt->numel != 2 * rank || rank > 6)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Pad pads are not %d constants",
                       k->name, 2 * rank);
    p[0] = !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : 0;
    p[1] = (uint8_t)rank;
    for (int i = 0; i < 2 * rank; i++) {
        int64_t v = nb_tensor_get_i64(pt, i);
        if (v < -32768 || v > 32767)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': Pad of %lld", k->name,
                           (long long)v);
        put16(p + 2 + 2 * i, (uint32_t)(uint16_t)(int16_t)v);
    }
    putf(p + 26, vt && vt->numel ? (float)nb_tensor_get_f64(vt, 0) : 0.0f);
    return NB_OK;
}

/* The kernel parameters of task k (share/doc/exeom.md, "Tasks"): each op's own bytes in p. */
static nb_err task_params(const nb_model *m, const nb_npu_graph *ng, const nb_npu_task *k,
                          const nb_npu_layer *ls, int n_layers, uint8_t *p, nb_status *st)
{
    const char *rest = k->name; /* an If branch's task: its node and values in the branch */
    const nb_graph *g = task_scope(m->graph, &rest);
    const char *op = k->op_type;
    const nb_node *n = task_node(m->graph, k->name);
    if (k->unit == NB_TASK_CPU && strcmp(op, "If"))
        return NB_OK; /* CpuOnnx: its node is its last input (the one-node model) */
    if (!strcmp(op, "AscendQuant"))
        return quant_params(m, ng, k, ls, n_layers, p, st);
    if (!strcmp(op, "AscendDequant")) { /* the activation fused into it, if any */
        p[0] = (uint8_t)k->fused_act;
        putf(p + 4, k->fused_alpha);
        return NB_OK;
    }
    if (!strcmp(op, "TransData")) {
        p[0] = k->n_in ? (uint8_t)ng->t[k->in[0]].format : 0;
        p[1] = k->n_out ? (uint8_t)ng->t[k->out[0]].format : 0;
        return NB_OK;
    }
    if (!strcmp(op, "Cast")) {
        p[0] = k->n_out ? (uint8_t)acl_dtype(ng->t[k->out[0]].dtype) : 0;
        return NB_OK;
    }
    if (!n)
        return NB_OK; /* an op without attributes of its own node (none expected) */
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") || !strcmp(op, "MaxPool"))
        return window_params(ng, k, n, p, st);
    if (!strcmp(op, "Gemm")) {
        p[0] = (uint8_t)(nb_attr_int(n, "transA", 0) != 0);
        return NB_OK; /* B is stored N x K whatever transB was */
    }
    if (!strcmp(op, "LSTM") || !strcmp(op, "GRU")) {
        /* hidden size, direction, linear_before_reset, this task's step and the sequence */
        const char *tail = strrchr(k->name, '/');
        int64_t step = tail && tail[1] == 't' ? strtoll(tail + 2, NULL, 10) : 0;
        int64_t seq = k->n_in ? ng->t[k->in[0]].dims[0] : 1;
        put16(p, (uint32_t)nb_attr_int(n, "hidden_size", 0));
        p[2] = !strcmp(nb_attr_str(n, "direction", "forward"), "reverse");
        p[3] = (uint8_t)(nb_attr_int(n, "linear_before_reset", 0) != 0);
        put16(p + 4, (uint32_t)step);
        put16(p + 6, (uint32_t)seq);
        return NB_OK;
    }
    if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Elu")) {
        putf(p, nb_attr_float(n, "alpha", !strcmp(op, "Elu") ? 1.0f : 0.01f));
        return NB_OK;
    }
    if (!strcmp(op, "Clip"))
        return clip_params(g, ng, k, n, p);
    if (!strcmp(op, "Transpose")) {
        int cnt = 0;
        const int64_t *perm = nb_attr_ints(n, "perm", &cnt);
        if (cnt > 6)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': perm of rank %d", k->name, cnt);
        p[0] = (uint8_t)cnt;
        for (int i = 0; i < cnt; i++)
            p[1 + i] = (uint8_t)perm[i];
        return NB_OK;
    }
    if (!strncmp(op, "Reduce", 6))
        return reduce_params(g, ng, k, n, p, st);
    if (!strcmp(op, "BatchNormalization") || !strcmp(op, "InstanceNormalization")) {
        putf(p, nb_attr_float(n, "epsilon", 1e-5f));
        return NB_OK;
    }
    if (!strcmp(op, "Slice"))
        return slice_params(g, ng, k, n, p, st);
    if (!strcmp(op, "If")) /* branches, outputs each, which branch is then_branch */
        return if_params(k, n, p, st);
    if (!strcmp(op, "ArgMax")) { /* axis (normalized), keepdims, select_last_index */
        int rank = k->n_in ? ng->t[k->in[0]].rank : 0;
        int64_t axis = nb_attr_int(n, "axis", 0);
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis >= rank)
            return nb_fail(st, NB_ERR_ATTR, "task '%s': ArgMax axis %lld of rank %d", k->name,
                           (long long)nb_attr_int(n, "axis", 0), rank);
        p[0] = (uint8_t)axis;
        p[1] = (uint8_t)(nb_attr_int(n, "keepdims", 1) != 0);
        p[2] = (uint8_t)(nb_attr_int(n, "select_last_index", 0) != 0);
        return NB_OK;
    }
    if (!strcmp(op, "Gather")) /* axis, count, the indices (negative ones normalized) */
        return gather_params(g, ng, k, n, p, st);
    if (!strcmp(op, "Pad")) /* mode, rank, int16 pads (begins, then ends), f32 value */
        return pad_params(g, ng, k, n, p, st);
    if (!strcmp(op, "Softmax") && g->opset < 13) {
        /* opset 1-12: over x flattened to 2-D at axis, which the lowering reshapes to (or the
           axis is already the last): the last dim */
        p[0] = (uint8_t)(int8_t)-1;
        return NB_OK;
    }
    if (!strcmp(op, "Softmax") || !strcmp(op, "Concat") || !strcmp(op, "Flatten")) {
        p[0] = (uint8_t)(int8_t)nb_attr_int(n, "axis", !strcmp(op, "Concat") ? 0 : -1);
        return NB_OK;
    }
    return NB_OK; /* elementwise, shape and table ops: the descriptors say it all */
}

/* int8 weights [rows][cols] (element (r, c) at w[r * rs + c * cs]) packed into FRACTAL_NZ:
 * (ceil(cols / C0), ceil(rows / 16), 16, C0), zero padding. out holds bytes. */
static void pack_nz(const int8_t *w, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                    int c0, uint8_t *out, int64_t bytes)
{
    int64_t r1 = (rows + 15) / 16, c1 = (cols + c0 - 1) / c0;
    memset(out, 0, (size_t)bytes);
    for (int64_t a = 0; a < c1; a++)
        for (int64_t b = 0; b < r1; b++)
            for (int64_t r = 0; r < 16; r++)
                for (int64_t c = 0; c < c0; c++) {
                    int64_t row = b * 16 + r, col = a * c0 + c;
                    int64_t at = ((a * r1 + b) * 16 + r) * c0 + c;
                    if (row < rows && col < cols && at < bytes)
                        out[at] = (uint8_t)w[row * rs + col * cs];
                }
}

/* int8 conv weights [cout, cin, kh, kw] packed into FRACTAL_Z: (ceil(cin / C0) * kh * kw,
 * ceil(cout / 16), 16, C0), zero padding (GE format_transfer_fractal_z). */
static void pack_z(const int8_t *w, int64_t cout, int64_t cin, int64_t kh, int64_t kw, int c0,
                   uint8_t *out, int64_t bytes)
{
    int64_t c1 = (cin + c0 - 1) / c0, no = (cout + 15) / 16;
    memset(out, 0, (size_t)bytes);
    for (int64_t a = 0; a < c1; a++)
        for (int64_t h = 0; h < kh; h++)
            for (int64_t x = 0; x < kw; x++)
                for (int64_t b = 0; b < no; b++)
                    for (int64_t ni = 0; ni < 16; ni++)
                        for (int64_t c = 0; c < c0; c++) {
                            int64_t co = b * 16 + ni, ci = a * c0 + c;
                            int64_t at = ((((a * kh + h) * kw + x) * no + b) * 16 + ni) * c0 + c;
                            if (co < cout && ci < cin && at < bytes)
                                out[at] = (uint8_t)w[((co * cin + ci) * kh + h) * kw + x];
                        }
}

/* an LSTM/GRU's W and R (FRACTAL_NZ per direction) or bias / deq_scale (W's rows then R's) */
static nb_err rnn_weight_data(const nb_npu_task *k, int slot, const nb_npu_tensor *t,
                              const nb_npu_layer *l, uint8_t *out, nb_status *st)
{
    if (!l || !l->r)
        return nb_fail(st, NB_ERR_GRAPH, "task '%s': no int8 W and R for it in the input",
                       k->name);
    memset(out, 0, (size_t)t->bytes);
    int c0 = nb_c0(NB_INT8);
    if (slot == 1 || slot == 2) { /* W [1, GH, I] or R [1, GH, H]: N x K per direction */
        const int8_t *src = slot == 1 ? l->w : l->r;
        const int64_t *d = slot == 1 ? l->w_dims : l->r_dims;
        int64_t one = nb_fractal_nz_bytes(2, d + 1, NB_INT8);
        if (d[0] * one != t->bytes)
            return nb_fail(st, NB_ERR_INTERNAL, "task '%s': RNN weight size mismatch",
                           k->name);
        for (int64_t dir = 0; dir < d[0]; dir++)
            pack_nz(src + dir * d[1] * d[2], d[1], d[2], d[2], 1, c0, out + dir * one, one);
        return NB_OK;
    }
    /* bias / deq_scale: W's gate rows then R's, padded to 16 */
    bool deq = t->dtype == NB_UINT64;
    int es = deq ? 8 : 4;
    for (int64_t c = 0; c < 2 * l->channels && (c + 1) * es <= t->bytes; c++) {
        int64_t r = c % l->channels;
        bool second = c >= l->channels;
        if (deq) {
            uint64_t v = second ? l->deq_r[r] : l->deq_scale[r];
            put32(out + 8 * c, (uint32_t)v);
            put32(out + 8 * c + 4, (uint32_t)(v >> 32));
        } else {
            put32(out + 4 * c, (uint32_t)(second ? l->bias_r[r] : l->bias[r]));
        }
    }
    return NB_OK;
}

/* a cube task's int8 / int4 weights in FRACTAL_Z (conv) or FRACTAL_NZ (N x K matrix) */
static nb_err cube_weight_data(const nb_model *m, const nb_npu_task *k, const nb_npu_tensor *t,
                               const nb_npu_layer *l, uint8_t *out, nb_status *st)
{
    if (!l || !l->w)
        return nb_fail(st, NB_ERR_GRAPH, "task '%s': no int8 weights for it in the input "
                       "(an LSTM/GRU is not in the exeom yet)", k->name);
    if (t->dtype != NB_INT8 && t->dtype != NB_NPU_INT4)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': %s weights are not in the exeom "
                       "yet", k->name, nb_dtype_name(t->dtype));
    bool i4 = t->dtype == NB_NPU_INT4;
    if (i4) /* s8 x s4: every weight within int4's range, or the calibration was not */
        for (int64_t i = 0; i < l->w_numel; i++)
            if (l->w[i] < -8 || l->w[i] > 7)
                return nb_fail(st, NB_ERR_DATA, "task '%s': int4 weight %d at element %lld "
                               "(int4 holds -8..7)", k->name, l->w[i], (long long)i);
    int c0 = nb_c0(t->dtype);
    /* int4: the same fractal with C0 64, element e in the low nibble of byte e / 2 when
       e is even, the high one when odd (the runtime's reading) */
    int64_t elems = i4 ? 2 * t->bytes : t->bytes;
    uint8_t *lay = i4 ? calloc((size_t)elems + 1, 1) : out;
    if (!lay)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (t->format == NB_FMT_FRACTAL_Z) {
        int64_t kh = l->w_rank == 4 ? l->w_dims[2] : 1, kw = l->w_dims[l->w_rank - 1];
        if (nb_fractal_z_bytes(l->w_dims[0], l->w_dims[1], kh, kw, t->dtype) != t->bytes) {
            if (i4)
                free(lay);
            return nb_fail(st, NB_ERR_INTERNAL, "task '%s': weight layout size mismatch",
                           k->name);
        }
        pack_z(l->w, l->w_dims[0], l->w_dims[1], kh, kw, c0, lay, elems);
        if (i4) {
            for (int64_t e = 0; e < elems; e++)
                out[e / 2] |= (uint8_t)(((uint8_t)lay[e] & 15) << (4 * (e & 1)));
            free(lay);
        }
        return NB_OK;
    }
    /* N x K from the source: Gemm transB = 1 holds [N, K]; otherwise [K, N] (Gemm,
       MatMul), or a 1-D [K] (N = 1) */
    const nb_node *n = task_node(m->graph, k->name); /* in an If branch too */
    int64_t rows = t->dims[t->rank - 2], cols = t->dims[t->rank - 1];
    bool nk = (n && !strcmp(n->op_type, "Gemm") && nb_attr_int(n, "transB", 0)) ||
              l->w_rank == 1;
    if (l->w_rank > 2 || rows * cols != l->w_numel) {
        if (i4)
            free(lay);
        return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': batched matrix weights are not in "
                       "the exeom yet", k->name);
    }
    pack_nz(l->w, rows, cols, nk ? cols : 1, nk ? 1 : rows, c0, lay, elems);
    if (i4) {
        for (int64_t e = 0; e < elems; e++)
            out[e / 2] |= (uint8_t)(((uint8_t)lay[e] & 15) << (4 * (e & 1)));
        free(lay);
    }
    return NB_OK;
}

/* a constant of the model (a vector op's operand; gen 2: its reciprocal), in its NPU type, ND */
static nb_err const_weight_data(const nb_model *m, const nb_npu_task *k, const nb_npu_tensor *t,
                                uint8_t *out, nb_status *st)
{
    const char *rest = k->name; /* a branch's constant: in the branch, else in the graph */
    const nb_graph *sg = task_scope(m->graph, &rest);
    const char *value = t->src ? t->src : t->name; /* the model's constant (gen 2: whose
                                                      reciprocal) */
    int v = nb_graph_find(sg, value);
    const nb_tensor *c = v >= 0 ? sg->values[v].const_val : NULL;
    if (!c)
        c = any_const(m->graph, value);
    if (!c)
        return nb_fail(st, NB_ERR_GRAPH, "weight '%s' of task '%s': no constant of that name "
                       "in the model or its branches", t->name, k->name);
    if (t->format != NB_FMT_ND)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "weight '%s': a constant in %s is not in the "
                       "exeom yet", t->name, nb_format_name(t->format));
    size_t es = t->dtype == NB_FLOAT16 ? 2 : nb_dtype_size(t->dtype);
    if (!es || (int64_t)es * c->numel > t->bytes)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "weight '%s': %s of %lld values in %lld bytes",
                       t->name, nb_dtype_name(t->dtype), (long long)c->numel,
                       (long long)t->bytes);
    for (int64_t i = 0; i < c->numel; i++) {
        uint8_t *o = out + (size_t)i * es;
        switch ((int)t->dtype) {
        case NB_FLOAT16:
            put16(o, nb_float_to_half(t->gen == 2 ? (float)(1.0 / nb_tensor_get_f64(c, i))
                                                  : (float)nb_tensor_get_f64(c, i)));
            break;
        case NB_FLOAT: putf(o, (float)nb_tensor_get_f64(c, i)); break;
        case NB_INT32: put32(o, (uint32_t)(int32_t)nb_tensor_get_i64(c, i)); break;
        case NB_INT8:
        case NB_UINT8:
        case NB_BOOL: o[0] = (uint8_t)nb_tensor_get_i64(c, i); break;
        case NB_INT64: {
            uint64_t u = (uint64_t)nb_tensor_get_i64(c, i);
            put32(o, (uint32_t)u);
            put32(o + 4, (uint32_t)(u >> 32));
            break;
        }
        default:
            return nb_fail(st, NB_ERR_UNSUPPORTED, "weight '%s': %s is not in the exeom yet",
                           t->name, nb_dtype_name(t->dtype));
        }
    }
    return NB_OK;
}

/* The bytes of weight tensor t, read first by task k (share/doc/exeom.md, "Weights"). */
static nb_err weight_data(const nb_model *m, const nb_npu_graph *ng, const nb_npu_task *k,
                          int slot, const nb_npu_tensor *t, const nb_npu_layer *ls,
                          int n_layers, uint8_t *out, nb_status *st)
{
    /* an LSTM/GRU on the cube: int8 W and R from the calibration; on the MCU's CPU it reads
       its weights in float like any CPU task (a helper's find: --cpu_nodes on a GRU was
       refused with "no int8 W and R") */
    bool rnn = (!strcmp(k->op_type, "LSTM") || !strcmp(k->op_type, "GRU")) &&
               k->unit != NB_TASK_CPU, step;
    const nb_npu_layer *l = layer_of(m->graph, ls, n_layers, k->name, &step);
    if (rnn)
        return rnn_weight_data(k, slot, t, l, out, st);
    memset(out, 0, (size_t)t->bytes);
    if (k->unit == NB_TASK_CUBE && (t->format == NB_FMT_FRACTAL_Z || t->format == NB_FMT_FRACTAL_NZ))
        return cube_weight_data(m, k, t, l, out, st);
    bool is_bias = t->gen == 3, is_deq = t->gen == 4;
    if (is_bias || is_deq) {
        if (!l || !l->bias)
            return nb_fail(st, NB_ERR_GRAPH, "task '%s': no int32 bias / deq_scale for it in "
                           "the input", k->name);
        /* one entry (per tensor: a MatMul of two activations) stands for every channel */
        int64_t nch = l->channels == 1 ? t->bytes / (is_bias ? 4 : 8) : l->channels;
        for (int64_t c = 0; c < nch && (c + 1) * (is_bias ? 4 : 8) <= t->bytes; c++) {
            int64_t s = l->channels == 1 ? 0 : c;
            if (is_bias)
                put32(out + 4 * c, (uint32_t)l->bias[s]);
            else {
                put32(out + 8 * c, (uint32_t)l->deq_scale[s]);
                put32(out + 8 * c + 4, (uint32_t)(l->deq_scale[s] >> 32));
            }
        }
        return NB_OK;
    }
    if (t->gen == 5) { /* a CPU task's node: its one-node ONNX model (nb_cpu_node_model) */
        if (!t->blob)
            return nb_fail(st, NB_ERR_INTERNAL, "weight '%s': no node model", t->name);
        memcpy(out, t->blob, (size_t)t->bytes);
        return NB_OK;
    }
    if (t->gen == 1) { /* a scalar of a decomposition */
        if (t->dtype != NB_FLOAT16 || t->bytes < 2)
            return nb_fail(st, NB_ERR_INTERNAL, "weight '%s': a scalar of %s", t->name,
                           nb_dtype_name(t->dtype));
        put16(out, nb_float_to_half(t->scalar));
        return NB_OK;
    }
    (void)ng;
    return const_weight_data(m, k, t, out, st);
}

nb_err nb_exeom_write(const char *path, const nb_model *m, const nb_estimate *e,
                      const nb_npu_layer *layers, int n_layers, const char *soc,
                      int64_t *bytes, nb_status *st)
{
    const nb_npu_graph *g = &e->g;
    if (g->n_t >= NB_EXEOM_NONE || g->n_k >= NB_EXEOM_NONE)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%d tensors and %d tasks: the exeom holds at most "
                       "65534 of each", g->n_t, g->n_k);
    for (int ki = 0; ki < g->n_k; ki++) /* the exeom holds all of it, or nothing is written */
        if (!nb_task_in_exeom(&g->k[ki]))
            return nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s' (%s) runs on the CPU: %s",
                           g->k[ki].name, g->k[ki].op_type, g->k[ki].reason);
    int64_t size = e->exeom_bytes;
    uint8_t *buf = calloc(1, (size_t)size);
    int64_t *place = malloc(sizeof(int64_t) * ((size_t)g->n_t + 1));
    if (!buf || !place) {
        free(buf), free(place);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    nb_err err = NB_OK;
    int64_t t_off = HEADER, k_off = t_off + (int64_t)g->n_t * TENSOR;
    int64_t w_off = k_off + (int64_t)g->n_k * TASK, w_at = 0;
    uint32_t n_in = 0, n_out = 0;
    for (int i = 0; i < g->n_t; i++) {
        const nb_npu_tensor *t = &g->t[i];
        place[i] = t->role == NB_T_INPUT ? n_in++ : t->role == NB_T_OUTPUT ? (n_out++, t->out_index)
                   : t->role == NB_T_ACTIVATION ? (e->arena_offset[i] >= 0 ? e->arena_offset[i] : 0)
                                               : -1; /* weights: placed below */
    }
    /* tasks, and the weights each reads first, in task order, each on a 32-byte boundary */
    for (int ki = 0; ki < g->n_k && !err; ki++) {
        const nb_npu_task *k = &g->k[ki];
        uint8_t *d = buf + k_off + (int64_t)ki * TASK;
        bool cpu_onnx = k->unit == NB_TASK_CPU && strcmp(k->op_type, "If");
        int id = nb_exeom_kernel_id(cpu_onnx ? NB_EXEOM_CPU_ONNX : k->op_type);
        if (!nb_task_in_exeom(k))
            err = nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s' (%s) runs on the CPU: %s", k->name,
                          k->op_type, k->reason);
        else if (!id)
            err = nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': %s has no kernel in the exeom yet",
                          k->name, k->op_type);
        else if (k->n_in > NB_EXEOM_MAX_IN || k->n_out > NB_EXEOM_MAX_OUT)
            err = nb_fail(st, NB_ERR_UNSUPPORTED, "task '%s': %d inputs and %d outputs (the "
                          "exeom holds %d and %d)", k->name, k->n_in, k->n_out, NB_EXEOM_MAX_IN,
                          NB_EXEOM_MAX_OUT);
        if (err)
            break;
        put16(d, (uint32_t)id);
        d[2] = k->unit == NB_TASK_CUBE ? 1 : k->unit == NB_TASK_CPU ? 2 : 0;
        d[3] = (uint8_t)k->n_in;
        d[4] = (uint8_t)k->n_out;
        d[5] = k->inserted ? 1 : 0;
        int slot_in[NB_EXEOM_MAX_IN], slot_out[NB_EXEOM_MAX_OUT];
        for (int i = 0; i < NB_EXEOM_MAX_IN; i++)
            slot_in[i] = i < k->n_in ? k->in[i] : -1;
        for (int i = 0; i < NB_EXEOM_MAX_OUT; i++)
            slot_out[i] = i < k->n_out ? k->out[i] : -1;
        bool rnn = (!strcmp(k->op_type, "LSTM") || !strcmp(k->op_type, "GRU")) &&
                   k->unit != NB_TASK_CPU; /* on the CPU: a CpuOnnx task's operands */
        if (rnn) { /* fixed slots: x W R bias deq_scale h(int8) c|h(fp16) P; out h c Y */
            bool lstm = !strcmp(k->op_type, "LSTM");
            for (int i = 5; i < NB_EXEOM_MAX_IN; i++)
                slot_in[i] = -1;
            for (int i = 5; i < k->n_in; i++) {
                const nb_npu_tensor *t = &g->t[k->in[i]];
                int s = t->dtype == NB_INT8 ? 5 : lstm && t->role == NB_T_WEIGHT ? 7 : 6;
                slot_in[s] = k->in[i];
            }
            for (int i = 0; i < NB_EXEOM_MAX_OUT; i++)
                slot_out[i] = -1;
            slot_out[0] = k->n_out > 0 ? k->out[0] : -1;
            slot_out[1] = lstm && k->n_out > 1 ? k->out[1] : -1;
            slot_out[2] = k->n_out > (lstm ? 2 : 1) ? k->out[lstm ? 2 : 1] : -1;
            d[3] = NB_EXEOM_MAX_IN;
            d[4] = 3;
        }
        for (int i = 0; i < NB_EXEOM_MAX_IN; i++)
            put16(d + 8 + 2 * i, slot_in[i] >= 0 ? (uint32_t)slot_in[i] : NB_EXEOM_NONE);
        for (int i = 0; i < NB_EXEOM_MAX_OUT; i++)
            put16(d + 24 + 2 * i, slot_out[i] >= 0 ? (uint32_t)slot_out[i] : NB_EXEOM_NONE);
        err = task_params(m, g, k, layers, n_layers, d + 32, st);
        for (int i = 0; i < k->n_in && !err; i++) {
            int ti = k->in[i];
            if (ti < 0 || g->t[ti].role != NB_T_WEIGHT || place[ti] >= 0)
                continue;
            w_at = (w_at + NB_EXEOM_ALIGN - 1) / NB_EXEOM_ALIGN * NB_EXEOM_ALIGN;
            if (w_off + w_at + g->t[ti].bytes > size) {
                err = nb_fail(st, NB_ERR_INTERNAL, "weights exceed the estimate's %lld bytes",
                              (long long)e->weight_bytes);
                break;
            }
            place[ti] = w_at;
            err = weight_data(m, g, k, i, &g->t[ti], layers, n_layers, buf + w_off + w_at, st);
            w_at += g->t[ti].bytes;
        }
    }
    w_at = (w_at + NB_EXEOM_ALIGN - 1) / NB_EXEOM_ALIGN * NB_EXEOM_ALIGN;
    if (!err && w_off + w_at != size)
        err = nb_fail(st, NB_ERR_INTERNAL, "the exeom is %lld bytes, the estimate said %lld",
                      (long long)(w_off + w_at), (long long)size);
    for (int i = 0; i < g->n_t && !err; i++) {
        const nb_npu_tensor *t = &g->t[i];
        uint8_t *d = buf + t_off + (int64_t)i * TENSOR;
        if (t->rank > 6 || t->bytes > UINT32_MAX || place[i] > UINT32_MAX) {
            err = nb_fail(st, NB_ERR_UNSUPPORTED, "tensor '%s': rank %d or %lld bytes beyond the "
                          "exeom's fields", t->name, t->rank, (long long)t->bytes);
            break;
        }
        d[0] = (uint8_t)acl_dtype(t->dtype);
        d[1] = (uint8_t)t->format;
        d[2] = t->role == NB_T_INPUT ? 0 : t->role == NB_T_OUTPUT ? 1
               : t->role == NB_T_ACTIVATION ? 2 : 3;
        d[3] = (uint8_t)t->rank;
        for (int k = 0; k < t->rank; k++)
            put32(d + 4 + 4 * k, (uint32_t)(int32_t)t->dims[k]);
        put32(d + 28, (uint32_t)t->bytes);
        put32(d + 32, (uint32_t)(place[i] < 0 ? 0 : place[i]));
        put16(d + 36, t->first >= 0 ? (uint32_t)t->first : NB_EXEOM_NONE);
        put16(d + 38, t->last >= 0 ? (uint32_t)t->last : NB_EXEOM_NONE);
    }
    if (!err) {
        uint8_t *h = buf;
        memcpy(h, NB_EXEOM_MAGIC, 4);
        put16(h + 4, NB_EXEOM_VERSION);
        put16(h + 6, !strcmp(soc, "Ascend035") ? 0 : !strcmp(soc, "Ascend035B") ? 2 : 1);
        put32(h + 8, (uint32_t)g->n_t);
        put32(h + 12, (uint32_t)g->n_k);
        put32(h + 16, n_in);
        put32(h + 20, n_out);
        put32(h + 24, (uint32_t)e->arena.arena);
        int64_t so[3] = {t_off, k_off, w_off}, ss[3] = {k_off - t_off, w_off - k_off, w_at};
        for (int s = 0; s < 3; s++) {
            put32(h + 28 + 12 * s, (uint32_t)so[s]);
            put32(h + 32 + 12 * s, (uint32_t)ss[s]);
            put32(h + 36 + 12 * s,
                  (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf + so[s], (uInt)ss[s]));
        }
        err = nb_write_file_atomic(path, buf, (size_t)size, st);
    }
    free(buf);
    free(place);
    if (!err)
        *bytes = size;
    return err;
}

nb_err nb_exeom_parse(const uint8_t *buf, size_t len, nb_exeom *x, nb_status *st)
{
    memset(x, 0, sizeof *x);
    if (len < 4 || memcmp(buf, NB_EXEOM_MAGIC, 4))
        return nb_fail(st, NB_ERR_FORMAT, "not an exeom (magic)");
    if (len < HEADER)
        return nb_fail(st, NB_ERR_FORMAT, "a truncated exeom: %zu bytes, the header alone is %d",
                       len, HEADER);
    x->version = (uint16_t)get16(buf + 4);
    x->soc = (uint16_t)get16(buf + 6);
    if (x->version != NB_EXEOM_VERSION)
        return nb_fail(st, NB_ERR_FORMAT, "exeom version %u (this nanobench reads %u)",
                       x->version, NB_EXEOM_VERSION);
    if (x->soc > 2)
        return nb_fail(st, NB_ERR_FORMAT, "soc code %u", x->soc);
    x->n_tensors = get32(buf + 8);
    x->n_tasks = get32(buf + 12);
    x->n_inputs = get32(buf + 16);
    x->n_outputs = get32(buf + 20);
    x->arena_bytes = get32(buf + 24);
    uint32_t so[3], ss[3];
    for (int s = 0; s < 3; s++) {
        so[s] = get32(buf + 28 + 12 * s);
        ss[s] = get32(buf + 32 + 12 * s);
        if ((uint64_t)so[s] + ss[s] > len || so[s] < HEADER)
            return nb_fail(st, NB_ERR_FORMAT, "section %d [%u, +%u) outside the file of %zu "
                           "bytes", s, so[s], ss[s], len);
        if ((uint32_t)crc32(crc32(0L, Z_NULL, 0), buf + so[s], ss[s]) != get32(buf + 36 + 12 * s))
            return nb_fail(st, NB_ERR_FORMAT, "section %d: CRC-32 mismatch", s);
    }
    if ((uint64_t)x->n_tensors * TENSOR != ss[0] || (uint64_t)x->n_tasks * TASK != ss[1] ||
        x->n_tensors >= NB_EXEOM_NONE || x->n_tasks >= NB_EXEOM_NONE)
        return nb_fail(st, NB_ERR_FORMAT, "%u tensors and %u tasks do not fill their sections",
                       x->n_tensors, x->n_tasks);
    x->t = calloc((size_t)x->n_tensors + 1, sizeof *x->t);
    x->k = calloc((size_t)x->n_tasks + 1, sizeof *x->k);
    if (!x->t || !x->k) {
        nb_exeom_free(x);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    x->weights = buf + so[2];
    x->weight_bytes = ss[2];
    nb_err e = NB_OK;
    uint32_t ins = 0, outs = 0;
    /* inputs bound in tensor order; outputs in the model's output order, each once */
    uint8_t *out_seen = x->n_outputs <= x->n_tensors ? calloc((size_t)x->n_outputs + 1, 1) : NULL;
    for (uint32_t i = 0; i < x->n_tensors && !e; i++) {
        const uint8_t *d = buf + so[0] + (size_t)i * TENSOR;
        nb_exeom_tensor *t = &x->t[i];
        t->dtype = d[0], t->format = d[1], t->role = d[2], t->rank = d[3];
        for (int k = 0; k < 6; k++)
            t->dims[k] = (int32_t)get32(d + 4 + 4 * k);
        t->bytes = get32(d + 28);
        t->place = get32(d + 32);
        t->first = (uint16_t)get16(d + 36);
        t->last = (uint16_t)get16(d + 38);
        if (t->role > 3 || t->rank > 6)
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: role %u, rank %u", i, t->role, t->rank);
        else if (t->role == 3 && (uint64_t)t->place + t->bytes > x->weight_bytes)
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: weights [%u, +%u) outside the weight "
                        "section of %u bytes", i, t->place, t->bytes, x->weight_bytes);
        else if (t->role == 2 && (uint64_t)t->place + t->bytes > x->arena_bytes)
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: arena [%u, +%u) outside the arena of %u "
                        "bytes", i, t->place, t->bytes, x->arena_bytes);
        else if (t->role == 0 && t->place != ins++)
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: binding %u out of order", i, t->place);
        else if (t->role == 1 && (t->place >= x->n_outputs || !out_seen ||
                                  out_seen[t->place]++ || (outs++, false)))
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: output binding %u given twice or beyond "
                        "%u outputs", i, t->place, x->n_outputs);
        else if ((t->first != NB_EXEOM_NONE && t->first >= x->n_tasks) ||
                 (t->last != NB_EXEOM_NONE && t->last > x->n_tasks))
            e = nb_fail(st, NB_ERR_FORMAT, "tensor %u: task range beyond %u tasks", i, x->n_tasks);
    }
    free(out_seen);
    if (!e && (ins != x->n_inputs || outs != x->n_outputs))
        e = nb_fail(st, NB_ERR_FORMAT, "%u inputs and %u outputs described, the header says %u "
                    "and %u", ins, outs, x->n_inputs, x->n_outputs);
    for (uint32_t i = 0; i < x->n_tasks && !e; i++) {
        const uint8_t *d = buf + so[1] + (size_t)i * TASK;
        nb_exeom_task *k = &x->k[i];
        k->kernel = (uint16_t)get16(d);
        k->unit = d[2], k->n_in = d[3], k->n_out = d[4], k->flags = d[5];
        for (int j = 0; j < NB_EXEOM_MAX_IN; j++)
            k->in[j] = (uint16_t)get16(d + 8 + 2 * j);
        for (int j = 0; j < NB_EXEOM_MAX_OUT; j++)
            k->out[j] = (uint16_t)get16(d + 24 + 2 * j);
        memcpy(k->params, d + 32, 32);
        if (k->kernel == 0 || !strcmp(nb_exeom_kernel_name(k->kernel), "?") || k->unit > 2 ||
            (k->unit == 2) != (!strcmp(nb_exeom_kernel_name(k->kernel), "If") ||
                               !strcmp(nb_exeom_kernel_name(k->kernel), NB_EXEOM_CPU_ONNX)) ||
            k->n_in > NB_EXEOM_MAX_IN || k->n_out > NB_EXEOM_MAX_OUT)
            e = nb_fail(st, NB_ERR_FORMAT, "task %u: kernel %u, unit %u, %u in, %u out", i,
                        k->kernel, k->unit, k->n_in, k->n_out);
        for (int j = 0; j < k->n_in && !e; j++)
            if (k->in[j] != NB_EXEOM_NONE && k->in[j] >= x->n_tensors)
                e = nb_fail(st, NB_ERR_FORMAT, "task %u: input %d is tensor %u of %u", i, j,
                            k->in[j], x->n_tensors);
        for (int j = 0; j < k->n_out && !e; j++)
            if (k->out[j] != NB_EXEOM_NONE && k->out[j] >= x->n_tensors)
                e = nb_fail(st, NB_ERR_FORMAT, "task %u: output %d is tensor %u of %u", i, j,
                            k->out[j], x->n_tensors);
    }
    if (e)
        nb_exeom_free(x);
    return e;
}

void nb_exeom_free(nb_exeom *x)
{
    free(x->t);
    free(x->k);
    memset(x, 0, sizeof *x);
}

/* ---- NAME.dbg ---- */

#include "dbg.pb-c.h"

static const char *format_name(nb_format f) { return nb_format_name(f); }

nb_err nb_dbg_write(const char *path, const char *model_path, const nb_model *m,
                    const nb_estimate *e, const char *exeom_path, const nb_scale_plan *scale,
                    nb_status *st)
{
    uint8_t *ex = NULL;
    size_t ex_len = 0;
    nb_err err = nb_read_file(exeom_path, &ex, &ex_len, st);
    if (err)
        return err;
    const nb_npu_graph *g = &e->g;
    Nanobench__Dbg__Dbg d = NANOBENCH__DBG__DBG__INIT;
    d.version = 1;
    d.model = (char *)model_path;
    d.exeom_bytes = (uint32_t)ex_len;
    d.exeom_crc32 = (uint32_t)crc32(crc32(0L, Z_NULL, 0), ex, (uInt)ex_len);
    free(ex);
    Nanobench__Dbg__Tensor *ts = calloc((size_t)g->n_t + 1, sizeof *ts);
    Nanobench__Dbg__Tensor **tp = calloc((size_t)g->n_t + 1, sizeof *tp);
    Nanobench__Dbg__Task *ks = calloc((size_t)g->n_k + 1, sizeof *ks);
    Nanobench__Dbg__Task **kp = calloc((size_t)g->n_k + 1, sizeof *kp);
    char ***covers = calloc((size_t)g->n_k + 1, sizeof *covers);
    char **onnx_node = calloc((size_t)g->n_k + 1, sizeof *onnx_node);
    bool *bn_owned = calloc((size_t)g->n_k + 1, sizeof *bn_owned);
    char **onnx_copy = calloc((size_t)g->n_t + 1, sizeof *onnx_copy);
    bool ok = ts && tp && ks && kp && covers && onnx_node && bn_owned && onnx_copy;
    for (int i = 0; ok && i < g->n_t; i++) {
        const nb_npu_tensor *t = &g->t[i];
        nanobench__dbg__tensor__init(&ts[i]);
        ts[i].index = (uint32_t)i;
        ts[i].name = t->name;
        ts[i].onnx_value = !t->gen && nb_graph_find(m->graph, t->name) >= 0 ? t->name : "";
        /* a layout copy ("<value>/<FORMAT>", a TransData's output, the model's output when
           its last op ran in NC1HWC0) or a type copy (a Cast's "<value>/fp16", "/fp32": a
           float input, a CPU task's output for the NPU, an FP32 output) holds the same value:
           compared after converting back */
        static const char *const fmts[] = {"/ND", "/NC1HWC0", "/FRACTAL_NZ", "/NCHW", "/fp16",
                                           "/fp32"};
        for (size_t f = 0; !ts[i].onnx_value[0] && !t->gen && f < 6; f++) {
            size_t nl = strlen(t->name), fl = strlen(fmts[f]);
            if (nl > fl && !strcmp(t->name + nl - fl, fmts[f]) && t->dtype != NB_INT8 &&
                t->dtype != NB_INT16) {
                onnx_copy[i] = strndup(t->name, nl - fl);
                if (onnx_copy[i] && nb_graph_find(m->graph, onnx_copy[i]) >= 0)
                    ts[i].onnx_value = onnx_copy[i];
            }
        }
        ts[i].format = (char *)format_name(t->format);
        ts[i].dtype = (char *)(t->dtype == NB_NPU_INT4 ? "INT4" : nb_dtype_name(t->dtype));
        double vs, vo; /* --nb_input_scale: what a float tensor holds of its value */
        if ((t->dtype == NB_FLOAT16 || t->dtype == NB_FLOAT) && ts[i].onnx_value[0] &&
            nb_scale_plan_get(scale, m->graph, ts[i].onnx_value, &vs, &vo))
            ts[i].value_scale = vs, ts[i].value_offset = vo;
        tp[i] = &ts[i];
    }
    for (int i = 0; ok && i < g->n_k; i++) {
        const nb_npu_task *k = &g->k[i];
        nanobench__dbg__task__init(&ks[i]);
        ks[i].index = (uint32_t)i;
        ks[i].name = k->name;
        ks[i].op_type = k->op_type;
        ks[i].inserted = k->inserted;
        ks[i].unit = k->unit == NB_TASK_CUBE ? "cube" : k->unit == NB_TASK_CPU ? "cpu" : "vector";
        const nb_node *n = task_node(m->graph, k->name);
        onnx_node[i] = strdup(n ? n->name : "");
        ok = onnx_node[i] != NULL;
        ks[i].onnx_node = onnx_node[i];
        /* covers: the node, and a BatchNormalization the lowering folded into it */
        covers[i] = calloc(4, sizeof(char *));
        ok = ok && covers[i];
        if (!ok)
            break;
        size_t nc = 0;
        if (n)
            covers[i][nc++] = n->name;
        /* a BatchNormalization folded into the layer: the cube task and its AscendDequant
           (which writes the layer's value) both cover it, before any fused activation */
        size_t ll = strlen(k->name);
        bool dequant = !strcmp(k->op_type, "AscendDequant") && ll > 14 &&
                       !strcmp(k->name + ll - 14, "/AscendDequant");
        char *tail = NULL; /* " folded into OP 'LAYER'", a layer name of any length */
        if (asprintf(&tail, " folded into %s '%.*s'", n ? n->op_type : k->op_type,
                     (int)(dequant ? ll - 14 : ll), k->name) < 0) {
            ok = false;
            break;
        }
        for (int r = 0; r < g->n_rewrites && (k->unit == NB_TASK_CUBE || dequant); r++) {
            const char *rw = g->rewrites[r], *at = strstr(rw, tail);
            static const char head[] = "BatchNormalization '";
            if (at && !strncmp(rw, head, sizeof head - 1) && !at[strlen(tail)] && nc < 2) {
                size_t len = (size_t)(at - rw) - (sizeof head - 1) - 1; /* before the quote */
                char *bn = malloc(len + 1);
                ok = bn != NULL;
                if (bn) {
                    memcpy(bn, rw + sizeof head - 1, len);
                    bn[len] = 0;
                    covers[i][nc++] = bn; /* freed below (index 1 when bn_owned) */
                    bn_owned[i] = true;
                }
            }
        }
        free(tail);
        if (k->fused_node) /* the Relu / LeakyRelu an AscendDequant runs */
            covers[i][nc++] = k->fused_node;
        ks[i].n_covers = nc;
        ks[i].covers = covers[i];
        kp[i] = &ks[i];
    }
    if (ok) {
        d.n_tensors = (size_t)g->n_t;
        d.tensors = tp;
        d.n_tasks = (size_t)g->n_k;
        d.tasks = kp;
        d.n_rewrites = (size_t)g->n_rewrites;
        d.rewrites = g->rewrites;
        size_t sz = nanobench__dbg__dbg__get_packed_size(&d);
        uint8_t *buf = malloc(sz ? sz : 1);
        if (!buf)
            err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        else {
            nanobench__dbg__dbg__pack(&d, buf);
            err = nb_write_file_atomic(path, buf, sz, st);
            free(buf);
        }
    } else {
        err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; covers && i < g->n_k; i++) {
        if (covers[i] && bn_owned && bn_owned[i])
            free(covers[i][1]);
        if (covers[i])
            free(covers[i]);
        if (onnx_node)
            free(onnx_node[i]);
    }
    for (int i = 0; onnx_copy && i < g->n_t; i++)
        free(onnx_copy[i]);
    free(onnx_copy);
    free(covers), free(onnx_node), free(ts), free(tp), free(ks), free(kp), free(bn_owned);
    return err;
}
