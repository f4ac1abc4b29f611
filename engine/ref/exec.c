/* nanobench: the reference executor (include/nb/ref.h).
 *
 * Each node runs as: shape inference on the actual inputs (the same infer functions as at
 * import), allocation of the outputs, then the kernel. Values are freed after their last
 * reader unless keep_all is set. If runs the chosen branch as a subgraph whose outer
 * references read the enclosing environment.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

static const nb_kernel_entry *const kernel_groups[] = {
    nb_kernels_elementwise, nb_kernels_tensor, nb_kernels_nn,      nb_kernels_norm,
    nb_kernels_rnn,         nb_kernels_quant,  nb_kernels_control,
};

const nb_kernel_entry *nb_kernel_entry_lookup(const char *op_type)
{
    for (size_t g = 0; g < sizeof kernel_groups / sizeof kernel_groups[0]; g++)
        for (const nb_kernel_entry *e = kernel_groups[g]; e->op; e++)
            if (e->op[0] == op_type[0] && !strcmp(e->op, op_type))
                return e;
    return NULL;
}

nb_kernel_fn nb_kernel_lookup(const char *op_type)
{
    const nb_kernel_entry *e = nb_kernel_entry_lookup(op_type);
    return e ? e->fn : NULL;
}

bool nb_kernel_is_alias(const char *op_type)
{
    const nb_kernel_entry *e = nb_kernel_entry_lookup(op_type);
    return e && (e->flags & NB_K_ALIAS);
}

bool nb_ref_supports(const char *op_type)
{
    const nb_kernel_entry *e = nb_kernel_entry_lookup(op_type);
    return e && (e->fn || (e->flags & NB_K_ALIAS)) && nb_infer_lookup(op_type);
}

void nb_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

void nb_bcast_init(nb_bcast *b, int r, const int64_t *dims, const nb_tensor *a,
                   const nb_tensor *bb, const nb_tensor *c)
{
    memset(b, 0, sizeof *b);
    b->rank = r;
    const nb_tensor *ts[3] = {a, bb, c};
    int64_t *ss[3] = {b->sa, b->sb, b->sc};
    for (int d = 0; d < r; d++)
        b->dims[d] = dims[d];
    for (int k = 0; k < 3; k++) {
        if (!ts[k])
            continue;
        int64_t st[NB_MAX_RANK];
        nb_strides(ts[k]->rank, ts[k]->dims, st);
        for (int d = 0; d < r; d++) {
            int td = d - (r - ts[k]->rank);
            ss[k][d] = (td >= 0 && ts[k]->dims[td] != 1) ? st[td] : 0;
        }
    }
}

/* ---------------------------------------------------------------- prepared graphs */

typedef struct xgraph {
    const nb_graph *g;
    const nb_kernel_entry **kern; /* per node */
    nb_infer_fn *infer;           /* per node */
    bool *folded;                 /* per node: every output is a constant */
    int *last_use;                /* per value: last node index reading it, -1 none */
    struct xgraph ***subs;        /* per node, per attribute: prepared subgraph or NULL */
} xgraph;

typedef struct kept {
    char *name;
    nb_tensor *t;
} kept;

struct nb_exec {
    const nb_model *m;
    nb_exec_opts opts;
    xgraph *top;
    nb_tensor **env; /* top-level values after a run */
    bool *owned;
    kept *kept;      /* subgraph values kept with keep_all */
    int n_kept, cap_kept;
};

typedef struct env {
    const xgraph *x;
    nb_tensor **vals;
    bool *owned;
    const struct env *parent;
} env;

static void xgraph_free(xgraph *x)
{
    if (!x)
        return;
    for (int i = 0; x->subs && i < x->g->n_nodes; i++) {
        if (!x->subs[i])
            continue;
        for (int a = 0; a < x->g->nodes[i].n_attr; a++)
            xgraph_free(x->subs[i][a]);
        free(x->subs[i]);
    }
    free(x->subs);
    free(x->kern);
    free(x->infer);
    free(x->folded);
    free(x->last_use);
    free(x);
}

/* Appends the names of unsupported op types (deduplicated) to list. */
static void collect_unsupported(const nb_graph *g, char *list, size_t len)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g)
                collect_unsupported(n->attrs[a].g, list, len);
        bool folded = n->n_out > 0;
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] >= 0 && !g->values[n->out[o]].const_val)
                folded = false;
        if (folded || nb_ref_supports(n->op_type))
            continue;
        char item[80];
        snprintf(item, sizeof item, " %s,", n->op_type);
        if (!strstr(list, item) && strlen(list) + strlen(item) + 1 < len)
            strcat(list, item);
    }
}

/* True when g or a subgraph has an op whose kernel calls BLAS. */
static bool uses_blas(const nb_graph *g)
{
    static const char *const ops[] = {"MatMul", "Gemm", "Conv", "ConvTranspose", "LSTM", "GRU"};
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *n = &g->nodes[i];
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g && uses_blas(n->attrs[a].g))
                return true;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            if (!strcmp(n->op_type, ops[o]))
                return true;
    }
    return false;
}

static nb_err xgraph_prepare(const nb_graph *g, xgraph **out, nb_status *st)
{
    xgraph *x = calloc(1, sizeof *x);
    int nn = g->n_nodes;
    if (!x)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    x->g = g;
    x->kern = calloc((size_t)nn + 1, sizeof *x->kern);
    x->infer = calloc((size_t)nn + 1, sizeof *x->infer);
    x->folded = calloc((size_t)nn + 1, sizeof *x->folded);
    x->subs = calloc((size_t)nn + 1, sizeof *x->subs);
    x->last_use = malloc(sizeof(int) * ((size_t)g->n_values + 1));
    if (!x->kern || !x->infer || !x->folded || !x->subs || !x->last_use) {
        xgraph_free(x);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int v = 0; v < g->n_values; v++)
        x->last_use[v] = -1;
    for (int i = 0; i < nn; i++) {
        const nb_node *n = &g->nodes[i];
        bool folded = n->n_out > 0;
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] >= 0 && !g->values[n->out[o]].const_val)
                folded = false;
        x->folded[i] = folded;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                x->last_use[n->in[k]] = i;
        for (int k = 0; k < n->n_implicit; k++)
            x->last_use[n->implicit[k]] = i;
        if (folded)
            continue;
        x->kern[i] = nb_kernel_entry_lookup(n->op_type);
        x->infer[i] = nb_infer_lookup(n->op_type);
        if (!x->kern[i] || (!x->infer[i] && !(x->kern[i]->flags & NB_K_CONTROL))) {
            xgraph_free(x);
            return nb_fail(st, NB_ERR_UNSUPPORTED, "node '%s': operator %s is not implemented",
                           n->name, n->op_type);
        }
        bool has_sub = false;
        for (int a = 0; a < n->n_attr; a++)
            has_sub |= n->attrs[a].g != NULL;
        if (has_sub) {
            x->subs[i] = calloc((size_t)n->n_attr, sizeof(xgraph *));
            if (!x->subs[i]) {
                xgraph_free(x);
                return nb_fail(st, NB_ERR_NOMEM, "out of memory");
            }
            for (int a = 0; a < n->n_attr; a++) {
                if (!n->attrs[a].g)
                    continue;
                nb_err e = xgraph_prepare(n->attrs[a].g, &x->subs[i][a], st);
                if (e) {
                    xgraph_free(x);
                    return e;
                }
            }
        }
    }
    *out = x;
    return NB_OK;
}

nb_err nb_exec_create(const nb_model *m, const nb_exec_opts *opts, nb_exec **out,
                      nb_status *st)
{
    char list[1024] = "";
    collect_unsupported(m->graph, list, sizeof list);
    if (list[0]) {
        list[strlen(list) - 1] = 0; /* trailing comma */
        return nb_fail(st, NB_ERR_UNSUPPORTED, "%s: the reference executor does not implement:%s",
                       m->path, list);
    }
    if (uses_blas(m->graph))
        nb_blas_open();
    nb_exec *e = calloc(1, sizeof *e);
    if (!e)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    e->m = m;
    if (opts)
        e->opts = *opts;
    nb_err err = xgraph_prepare(m->graph, &e->top, st);
    if (err) {
        free(e);
        return nb_prefix(st, "%s", m->path);
    }
    e->env = calloc((size_t)m->graph->n_values + 1, sizeof(nb_tensor *));
    e->owned = calloc((size_t)m->graph->n_values + 1, sizeof(bool));
    if (!e->env || !e->owned) {
        nb_exec_free(e);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    *out = e;
    return NB_OK;
}

static void env_clear(nb_tensor **vals, bool *owned, int n)
{
    for (int v = 0; v < n; v++) {
        if (owned[v])
            nb_tensor_free(vals[v]);
        vals[v] = NULL;
        owned[v] = false;
    }
}

static void kept_clear(nb_exec *e)
{
    for (int i = 0; i < e->n_kept; i++) {
        free(e->kept[i].name);
        nb_tensor_free(e->kept[i].t);
    }
    e->n_kept = 0;
}

void nb_exec_free(nb_exec *e)
{
    if (!e)
        return;
    if (e->env)
        env_clear(e->env, e->owned, e->m->graph->n_values);
    kept_clear(e);
    free(e->kept);
    free(e->env);
    free(e->owned);
    xgraph_free(e->top);
    free(e);
}

static nb_err keep_value(nb_exec *e, const char *name, const nb_tensor *t, nb_status *st)
{
    if (e->n_kept == e->cap_kept) {
        int nc = e->cap_kept ? e->cap_kept * 2 : 64;
        kept *k = realloc(e->kept, sizeof(kept) * (size_t)nc);
        if (!k)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        e->kept = k;
        e->cap_kept = nc;
    }
    e->kept[e->n_kept].name = strdup(name);
    e->kept[e->n_kept].t = nb_tensor_ref(t);
    if (!e->kept[e->n_kept].name || !e->kept[e->n_kept].t) {
        free(e->kept[e->n_kept].name);
        nb_tensor_free(e->kept[e->n_kept].t);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    e->n_kept++;
    return NB_OK;
}

/* Runs the nodes of x in environment en. */
static nb_err run_graph(nb_exec *ex, env *en, nb_status *st)
{
    const xgraph *x = en->x;
    const nb_graph *g = x->g;
    nb_tensor *tin[64], *tout[64];
    nb_tinfo iin[64], iout[64];
    for (int i = 0; i < g->n_nodes; i++) {
        if (x->folded[i])
            continue;
        const nb_node *n = &g->nodes[i];
        const nb_kernel_entry *ke = x->kern[i];
        if (n->n_in > 64 || n->n_out > 64)
            return nb_fail(st, NB_ERR_UNSUPPORTED, "node '%s': too many inputs", n->name);
        for (int k = 0; k < n->n_in; k++) {
            tin[k] = n->in[k] >= 0 ? en->vals[n->in[k]] : NULL;
            if (n->in[k] >= 0 && !tin[k])
                return nb_fail(st, NB_ERR_INTERNAL, "node '%s': input '%s' has no value",
                               n->name, g->values[n->in[k]].name);
        }
        for (int k = 0; k < 64; k++)
            tout[k] = NULL;
        nb_kctx kc = {.graph = g, .node = n, .opset = g->opset, .n_in = n->n_in, .in = tin,
                      .n_out = n->n_out, .out = tout, .st = st, .exec = ex, .env = en};
        nb_err e = NB_OK;
        if (ke->flags & NB_K_CONTROL) {
            e = ke->fn(&kc);
        } else {
            for (int k = 0; k < n->n_in; k++) {
                if (tin[k]) {
                    iin[k].dtype = tin[k]->dtype;
                    iin[k].rank = tin[k]->rank;
                    memcpy(iin[k].dims, tin[k]->dims, sizeof(int64_t) * (size_t)tin[k]->rank);
                    iin[k].value = tin[k];
                } else {
                    iin[k].dtype = NB_UNDEFINED;
                    iin[k].rank = -1;
                    iin[k].value = NULL;
                }
            }
            for (int k = 0; k < n->n_out; k++) {
                iout[k].dtype = NB_UNDEFINED;
                iout[k].rank = -1;
                iout[k].value = NULL;
            }
            nb_infer_ctx ic = {.graph = g, .node = n, .opset = g->opset, .n_in = n->n_in,
                               .in = iin, .n_out = n->n_out, .out = iout, .st = st};
            e = x->infer[i](&ic);
            for (int k = 0; k < n->n_out && !e; k++) {
                if (iout[k].value) {
                    tout[k] = (nb_tensor *)iout[k].value;
                    iout[k].value = NULL;
                    continue;
                }
                if (n->out[k] < 0)
                    continue;
                if (iout[k].rank < 0 || !nb_tinfo_static(&iout[k]))
                    e = nb_fail(st, NB_ERR_GRAPH, "output %d: shape unknown at run time", k);
                else if (k == 0 && (ke->flags & NB_K_ALIAS))
                    e = nb_tensor_view(tin[0], iout[k].rank, iout[k].dims, &tout[k], st);
                else
                    e = nb_tensor_new_uninit(iout[k].dtype, iout[k].rank, iout[k].dims,
                                             &tout[k], st);
            }
            for (int k = 0; k < n->n_out; k++)
                if (iout[k].value)
                    nb_tensor_free((nb_tensor *)iout[k].value);
            if (!e && ke->fn)
                e = ke->fn(&kc);
        }
        for (int k = n->n_out; k < 64; k++) { /* never kept: not outputs of this node */
            nb_tensor_free(tout[k]);
            tout[k] = NULL;
        }
        if (e) {
            for (int k = 0; k < n->n_out; k++)
                nb_tensor_free(tout[k]);
            return nb_prefix(st, "node '%s' (%s)", n->name, n->op_type);
        }
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) {
                nb_tensor_free(tout[k]);
                continue;
            }
            if (!tout[k])
                return nb_fail(st, NB_ERR_INTERNAL, "node '%s': output %d not produced", n->name, k);
            if (en->owned[v])
                nb_tensor_free(en->vals[v]);
            en->vals[v] = tout[k];
            en->owned[v] = true;
            if (ex->opts.on_value)
                e = ex->opts.on_value(ex->opts.user, n, k, g->values[v].name, tout[k]);
            if (!e && ex->opts.keep_all && en->parent)
                e = keep_value(ex, g->values[v].name, tout[k], st);
            if (e) { /* the outputs not yet stored are freed here, the stored ones with env */
                for (int j = k + 1; j < n->n_out; j++)
                    nb_tensor_free(tout[j]);
                return e;
            }
        }
        if (!ex->opts.keep_all) {
            for (int k = 0; k < n->n_in + n->n_implicit; k++) {
                int v = k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
                if (v >= 0 && x->last_use[v] == i && !g->values[v].is_output && en->owned[v]) {
                    nb_tensor_free(en->vals[v]);
                    en->vals[v] = NULL;
                    en->owned[v] = false;
                }
            }
        }
    }
    return NB_OK;
}

/* Binds constants and outer references of g into vals (not owned). */
static void bind_static(const nb_graph *g, nb_tensor **vals, bool *owned, const env *parent)
{
    for (int v = 0; v < g->n_values; v++) {
        const nb_value *val = &g->values[v];
        if (val->outer >= 0 && parent) {
            vals[v] = parent->vals[val->outer];
            owned[v] = false;
        } else if (val->const_val) {
            vals[v] = val->const_val;
            owned[v] = false;
        }
    }
}

static const xgraph *find_sub(const env *en, const nb_node *n, const nb_graph *sub)
{
    const xgraph *x = en->x;
    int idx = (int)(n - x->g->nodes);
    for (int a = 0; a < n->n_attr; a++)
        if (n->attrs[a].g == sub && x->subs[idx])
            return x->subs[idx][a];
    return NULL;
}

nb_err nb_exec_subgraph(nb_kctx *k, const nb_graph *sub, nb_tensor **outs)
{
    env *parent = k->env;
    const xgraph *sx = find_sub(parent, k->node, sub);
    if (!sx)
        return nb_fail(k->st, NB_ERR_INTERNAL, "subgraph not prepared");
    int nv = sub->n_values;
    env en = {.x = sx, .parent = parent};
    en.vals = calloc((size_t)nv + 1, sizeof(nb_tensor *));
    en.owned = calloc((size_t)nv + 1, sizeof(bool));
    if (!en.vals || !en.owned) {
        free(en.vals);
        free(en.owned);
        return nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    }
    bind_static(sub, en.vals, en.owned, parent);
    for (int v = 0; v < nv; v++)
        if (sub->values[v].outer >= 0 && !en.vals[v]) {
            nb_err e = nb_fail(k->st, NB_ERR_INTERNAL, "outer value '%s' has no value",
                               sub->values[v].name);
            free(en.vals);
            free(en.owned);
            return e;
        }
    nb_err e = run_graph(k->exec, &en, k->st);
    for (int o = 0; o < sub->n_outputs && !e; o++) {
        nb_tensor *t = en.vals[sub->outputs[o]];
        if (!t) {
            e = nb_fail(k->st, NB_ERR_INTERNAL, "subgraph output '%s' has no value",
                        sub->values[sub->outputs[o]].name);
            break;
        }
        outs[o] = nb_tensor_ref(t);
        if (!outs[o])
            e = nb_fail(k->st, NB_ERR_NOMEM, "out of memory");
    }
    if (e)
        for (int o = 0; o < sub->n_outputs; o++) {
            nb_tensor_free(outs[o]);
            outs[o] = NULL;
        }
    env_clear(en.vals, en.owned, nv);
    free(en.vals);
    free(en.owned);
    return e;
}

/* If (opset 11-18): cond is a one-element bool tensor; runs then_branch or else_branch and
 * returns its outputs (ONNX Operators.md, If). */
static nb_err k_if(nb_kctx *k)
{
    const nb_tensor *cond = k->in[0];
    if (!cond || cond->numel != 1)
        return nb_fail(k->st, NB_ERR_SHAPE, "condition must have exactly one element");
    bool c = nb_tensor_get_f64(cond, 0) != 0.0;
    const nb_attr *a = nb_attr_find(k->node, c ? "then_branch" : "else_branch");
    if (!a || !a->g)
        return nb_fail(k->st, NB_ERR_ATTR, "missing %s", c ? "then_branch" : "else_branch");
    if (a->g->n_outputs != k->n_out)
        return nb_fail(k->st, NB_ERR_GRAPH, "branch has %d outputs, the node %d",
                       a->g->n_outputs, k->n_out);
    return nb_exec_subgraph(k, a->g, k->out);
}

const nb_kernel_entry nb_kernels_control[] = {
    {"If", k_if, NB_K_CONTROL},
    {NULL, NULL, 0},
};

nb_err nb_exec_run(nb_exec *ex, int n, const char *const *names, nb_tensor *const *inputs,
                   nb_status *st)
{
    const nb_graph *g = ex->m->graph;
    env_clear(ex->env, ex->owned, g->n_values);
    kept_clear(ex);
    for (int i = 0; i < n; i++) {
        int id = nb_graph_find(g, names[i]);
        if (id < 0 || !g->values[id].is_input)
            return nb_fail(st, NB_ERR_ARG, "'%s' is not an input of %s", names[i], ex->m->path);
        const nb_value *v = &g->values[id];
        const nb_tensor *t = inputs[i];
        if (ex->env[id])
            return nb_fail(st, NB_ERR_ARG, "input '%s' is given twice", names[i]);
        char a[160], b[160];
        if (v->dtype != NB_UNDEFINED && t->dtype != v->dtype)
            return nb_fail(st, NB_ERR_ARG, "input '%s' must be %s, the data is %s", names[i],
                           nb_dtype_name(v->dtype), nb_dtype_name(t->dtype));
        bool ok = v->rank < 0 || v->rank == t->rank;
        for (int d = 0; ok && v->rank >= 0 && d < v->rank; d++)
            ok = v->dims[d] < 0 || v->dims[d] == t->dims[d];
        if (!ok)
            return nb_fail(st, NB_ERR_ARG, "input '%s' must have shape %s, the data has %s",
                           names[i], nb_shape_str(v->rank, v->dims, ',', a, sizeof a),
                           nb_shape_str(t->rank, t->dims, ',', b, sizeof b));
        ex->env[id] = (nb_tensor *)t; /* borrowed for the run */
        ex->owned[id] = false;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (!ex->env[g->inputs[i]])
            return nb_fail(st, NB_ERR_ARG, "input '%s' of %s is not given",
                           g->values[g->inputs[i]].name, ex->m->path);
    bind_static(g, ex->env, ex->owned, NULL);
    env en = {.x = ex->top, .vals = ex->env, .owned = ex->owned, .parent = NULL};
    nb_err e = run_graph(ex, &en, st);
    /* inputs were borrowed: take references so that results stay valid after the caller
       frees its inputs (graph outputs may alias inputs) */
    for (int i = 0; i < g->n_inputs; i++) {
        int id = g->inputs[i];
        if (ex->env[id] && !ex->owned[id]) {
            ex->env[id] = nb_tensor_ref(ex->env[id]);
            ex->owned[id] = ex->env[id] != NULL;
        }
    }
    if (e)
        nb_prefix(st, "%s", ex->m->path);
    return e;
}

const nb_tensor *nb_exec_get(const nb_exec *e, const char *name)
{
    int id = nb_graph_find(e->m->graph, name);
    if (id >= 0 && e->env[id])
        return e->env[id];
    for (int i = 0; i < e->n_kept; i++)
        if (!strcmp(e->kept[i].name, name))
            return e->kept[i].t;
    return NULL;
}

const nb_tensor *nb_exec_subgraph_value(const nb_exec *e, int i, const char **name)
{
    if (i < 0 || i >= e->n_kept)
        return NULL;
    *name = e->kept[i].name;
    return e->kept[i].t;
}

const nb_tensor *nb_exec_output(const nb_exec *e, int i)
{
    const nb_graph *g = e->m->graph;
    if (i < 0 || i >= g->n_outputs)
        return NULL;
    return e->env[g->outputs[i]];
}
