/* nanobench: shape inference driver and helpers (include/nb/ir.h).
 *
 * Each operator has one infer function (infer_*.c) used twice: at import with what is
 * statically known (unknown dims are -1, unknown rank -1, values only for constants), and
 * by the reference executor at run time with everything known. Infer functions tolerate
 * unknowns by producing unknowns; they reject what is wrong whatever the unknowns are.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

/* One table per operator group (infer_<group>.c), each ending with {NULL, NULL}. */
static const nb_infer_entry *const infer_groups[] = {
    nb_infer_ops_elementwise, nb_infer_ops_tensor, nb_infer_ops_nn,      nb_infer_ops_norm,
    nb_infer_ops_rnn,         nb_infer_ops_quant,  nb_infer_ops_control,
};
#define N_GROUPS (sizeof infer_groups / sizeof infer_groups[0])

nb_infer_fn nb_infer_lookup(const char *op_type)
{
    for (size_t g = 0; g < N_GROUPS; g++)
        for (const nb_infer_entry *e = infer_groups[g]; e->op; e++)
            if (e->op[0] == op_type[0] && !strcmp(e->op, op_type)) /* first letter: */
                return e->fn; /* a tenth of the strcmp calls (estimate of a 900-node model) */
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *const *nb_infer_op_list(int *n)
{
    static const char *names[512];
    static int count = -1;
    if (count < 0) {
        int k = 0;
        for (size_t g = 0; g < N_GROUPS; g++)
            for (const nb_infer_entry *e = infer_groups[g]; e->op && k < 512; e++)
                names[k++] = e->op;
        qsort(names, (size_t)k, sizeof names[0], cmp_str);
        count = k;
    }
    *n = count;
    return names;
}

bool nb_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0)
        return false;
    if (a != 0 && b > INT64_MAX / a)
        return false;
    *out = a * b;
    return true;
}

nb_err nb_norm_axis(int64_t axis, int rank, int *out, const char *what, nb_status *st)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return nb_fail(st, NB_ERR_ATTR, "%s %" PRId64 " is out of range for rank %d", what, axis,
                       rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return NB_OK;
}

nb_err nb_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                          int64_t *out, nb_status *st)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        int64_t d;
        if (da == db)
            d = da;
        else if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da < 0 || db < 0)
            d = da < 0 ? db : da; /* unknown vs n (n != 1): the result is n */
        else {
            char sa[160], sb[160];
            return nb_fail(st, NB_ERR_SHAPE, "shapes %s and %s do not broadcast",
                           nb_shape_str(ra, a, ',', sa, sizeof sa),
                           nb_shape_str(rb, b, ',', sb, sizeof sb));
        }
        out[i] = d;
    }
    *rout = r;
    return NB_OK;
}

void nb_tinfo_set(nb_tinfo *t, nb_dtype dtype, int rank, const int64_t *dims)
{
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank && i < NB_MAX_RANK; i++)
        t->dims[i] = dims ? dims[i] : -1;
}

bool nb_tinfo_static(const nb_tinfo *t)
{
    if (t->rank < 0)
        return false;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0)
            return false;
    return true;
}

/* Merges an inferred result into a value: inferred known facts win; declared facts fill
 * what inference left unknown. */
static void merge_into_value(nb_value *v, const nb_tinfo *t)
{
    if (t->dtype != NB_UNDEFINED)
        v->dtype = t->dtype;
    if (t->rank >= 0) {
        if (v->rank != t->rank) {
            v->rank = t->rank;
            for (int d = 0; d < t->rank; d++)
                v->dims[d] = t->dims[d];
        } else {
            for (int d = 0; d < t->rank; d++)
                if (t->dims[d] >= 0)
                    v->dims[d] = t->dims[d];
        }
    }
}

nb_err nb_infer_node(nb_graph *g, int ni, nb_status *st)
{
    nb_node *n = &g->nodes[ni];
    nb_infer_fn fn = nb_infer_lookup(n->op_type);
    nb_tinfo in[64], out[64];
    if (n->n_in > 64 || n->n_out > 64)
        return nb_fail(st, NB_ERR_UNSUPPORTED, "node '%s' has more than 64 inputs or outputs",
                       n->name);
    memset(out, 0, sizeof(nb_tinfo) * (size_t)(n->n_out ? n->n_out : 1));
    for (int k = 0; k < n->n_out; k++)
        out[k].rank = -1;
    if (!fn) {
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                merge_into_value(&g->values[n->out[k]], &out[k]);
        return NB_OK; /* unknown op: nothing to infer; the executor reports it */
    }
    for (int k = 0; k < n->n_in; k++) {
        memset(&in[k], 0, sizeof in[k]);
        in[k].rank = -1;
        int v = n->in[k];
        if (v < 0)
            continue;
        const nb_value *val = &g->values[v];
        in[k].dtype = val->dtype;
        in[k].rank = val->rank;
        memcpy(in[k].dims, val->dims, sizeof in[k].dims);
        in[k].value = val->const_val;
        if (in[k].dtype == NB_UNDEFINED && val->const_val)
            in[k].dtype = val->const_val->dtype;
    }
    nb_infer_ctx c = {.graph = g, .node = n, .opset = g->opset, .n_in = n->n_in, .in = in,
                      .n_out = n->n_out, .out = out, .st = st};
    nb_err e = n->n_out == 0 ? nb_fail(st, NB_ERR_GRAPH, "has no outputs") : fn(&c);
    for (int k = 0; k < n->n_out && !e; k++)
        if (n->out[k] >= 0 && out[k].dtype == NB_UNDEFINED && out[k].rank < 0 && !out[k].value)
            e = nb_fail(st, NB_ERR_GRAPH, "output %d ('%s') is not an output of %s", k,
                        g->values[n->out[k]].name, n->op_type);
    if (e) {
        for (int k = 0; k < n->n_out; k++)
            nb_tensor_free((nb_tensor *)out[k].value);
        return nb_prefix(st, "node '%s' (%s)", n->name, n->op_type);
    }
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0) {
            nb_tensor_free((nb_tensor *)out[k].value);
            continue;
        }
        merge_into_value(&g->values[v], &out[k]);
        if (out[k].value) {
            nb_tensor_free(g->values[v].const_val);
            g->values[v].const_val = (nb_tensor *)out[k].value;
        }
    }
    return NB_OK;
}

nb_err nb_infer_graph(nb_graph *g, nb_status *st)
{
    for (int i = 0; i < g->n_nodes; i++) {
        nb_err e = nb_infer_node(g, i, st);
        if (e)
            return e;
    }
    return NB_OK;
}

/* ---- helpers for infer functions (infer_ops.h) ---- */

nb_err nb_need_inputs(nb_infer_ctx *c, int min, int max)
{
    int present = c->n_in;
    if (present < min || (max >= 0 && present > max))
    {
        if (max == min)
            return nb_fail(c->st, NB_ERR_GRAPH, "has %d inputs, expects %d", present, min);
        if (max < 0)
            return nb_fail(c->st, NB_ERR_GRAPH, "has %d inputs, expects at least %d", present,
                           min);
        return nb_fail(c->st, NB_ERR_GRAPH, "has %d inputs, expects %d to %d", present, min,
                       max);
    }
    for (int i = 0; i < min; i++)
        if (c->node->in[i] < 0 && !c->in[i].value && c->in[i].dtype == NB_UNDEFINED)
            return nb_fail(c->st, NB_ERR_GRAPH, "required input %d is missing", i);
    return NB_OK;
}

bool nb_has_in(const nb_infer_ctx *c, int i)
{
    return i < c->n_in && (c->node->in[i] >= 0 || c->in[i].value ||
                           c->in[i].dtype != NB_UNDEFINED);
}

void nb_out_same(nb_infer_ctx *c, int o, int i)
{
    if (o < c->n_out)
        nb_tinfo_set(&c->out[o], c->in[i].dtype, c->in[i].rank, c->in[i].dims);
}

void nb_out_unknown(nb_infer_ctx *c, int o, nb_dtype dtype)
{
    if (o < c->n_out) {
        c->out[o].dtype = dtype;
        c->out[o].rank = -1;
    }
}

nb_err nb_const_ints(nb_infer_ctx *c, int i, int64_t *vals, int max, int *n, const char *what)
{
    const nb_tensor *t = c->in[i].value;
    if (!t)
        return nb_fail(c->st, NB_ERR_INTERNAL, "%s is not known", what);
    if (t->dtype != NB_INT64 && t->dtype != NB_INT32)
        return nb_fail(c->st, NB_ERR_ATTR, "%s must be int64, not %s", what,
                       nb_dtype_name(t->dtype));
    if (t->rank > 1)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s must be a 1-D tensor", what);
    if (t->numel > max)
        return nb_fail(c->st, NB_ERR_SHAPE, "%s has %" PRId64 " values (max %d)", what, t->numel,
                       max);
    for (int64_t k = 0; k < t->numel; k++)
        vals[k] = nb_tensor_get_i64(t, k);
    *n = (int)t->numel;
    return NB_OK;
}

nb_err nb_new_value_i64(const int64_t *vals, int n, bool scalar, const nb_tensor **out,
                        nb_status *st)
{
    int64_t d = n;
    nb_tensor *t;
    nb_err e = nb_tensor_new_uninit(NB_INT64, scalar ? 0 : 1, &d, &t, st);
    if (e)
        return e;
    for (int i = 0; i < n; i++)
        ((int64_t *)t->data)[i] = vals[i];
    *out = t;
    return NB_OK;
}
