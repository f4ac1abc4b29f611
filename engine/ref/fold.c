/* nanobench: constant folding at import (include/nb/ref.h, nb_ref_fold).
 *
 * Walks each graph in order: infers the node, computes it when every input is known (the
 * shape arithmetic of exported models: Shape -> Gather -> Concat -> Reshape), and replaces
 * an If whose condition is known by the branch it takes. Subgraphs are folded with what
 * their enclosing graph knows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir_internal.h"
#include "ref_internal.h"

/* Largest value folding will compute (elements), so import stays cheap. */
#define FOLD_MAX_NUMEL ((int64_t)1 << 22)

static bool all_inputs_known(const nb_graph *g, const nb_node *n)
{
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && !g->values[n->in[k]].const_val)
            return false;
    return n->n_implicit == 0;
}

static bool all_outputs_known(const nb_graph *g, const nb_node *n)
{
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->values[n->out[k]].const_val)
            return false;
    return true;
}

/* Computes node ni from its constant inputs; leaves it alone when the op has no kernel
 * or an output would be large. */
static nb_err fold_node(nb_graph *g, int ni, nb_status *st)
{
    nb_node *n = &g->nodes[ni];
    const nb_kernel_entry *ke = nb_kernel_entry_lookup(n->op_type);
    if (!ke || (ke->flags & NB_K_CONTROL))
        return NB_OK;
    nb_tensor *tin[64], *tout[64];
    if (n->n_in > 64 || n->n_out > 64)
        return NB_OK;
    for (int k = 0; k < n->n_out; k++) {
        tout[k] = NULL;
        int v = n->out[k];
        if (v < 0)
            continue;
        const nb_value *val = &g->values[v];
        int64_t numel;
        if (val->rank < 0 || val->dtype == NB_UNDEFINED)
            return NB_OK;
        for (int d = 0; d < val->rank; d++)
            if (val->dims[d] < 0)
                return NB_OK;
        if (nb_shape_numel(val->rank, val->dims, nb_dtype_size(val->dtype), &numel, NULL) ||
            numel > FOLD_MAX_NUMEL)
            return NB_OK;
    }
    nb_err e = NB_OK;
    for (int k = 0; k < n->n_in; k++) {
        tin[k] = n->in[k] >= 0 ? g->values[n->in[k]].const_val : NULL;
        /* a weight a shapes-only load left in the file is read now */
        if (tin[k] && (e = nb_tensor_materialize(tin[k], st)))
            return e;
    }
    for (int k = 0; k < n->n_out && !e; k++) {
        int v = n->out[k];
        const nb_value *val = v >= 0 ? &g->values[v] : NULL;
        if (!val) {
            /* an omitted output: kernels expect NULL */
            continue;
        }
        if ((ke->flags & NB_K_ALIAS) && k == 0)
            e = nb_tensor_view(tin[0], val->rank, val->dims, &tout[k], st);
        else
            e = nb_tensor_new_uninit(val->dtype, val->rank, val->dims, &tout[k], st);
    }
    if (!e && ke->fn) {
        nb_kctx kc = {.graph = g, .node = n, .opset = g->opset, .n_in = n->n_in, .in = tin,
                      .n_out = n->n_out, .out = tout, .st = st};
        e = ke->fn(&kc);
    }
    if (e) {
        for (int k = 0; k < n->n_out; k++)
            nb_tensor_free(tout[k]);
        return nb_prefix(st, "node '%s' (%s)", n->name, n->op_type);
    }
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0)
            continue;
        nb_tensor_free(g->values[v].const_val);
        g->values[v].const_val = tout[k];
    }
    return NB_OK;
}

static nb_err fold_graph(nb_graph *g, nb_status *st)
{
    nb_graph_pull_outer(g);
    for (int i = 0; i < g->n_nodes; i++) {
        nb_node *n = &g->nodes[i];
        nb_err e;
        if (!strcmp(n->op_type, "If") && n->n_in == 1 && n->in[0] >= 0 &&
            g->values[n->in[0]].const_val && g->values[n->in[0]].const_val->numel == 1) {
            bool cond = nb_tensor_get_f64(g->values[n->in[0]].const_val, 0) != 0.0;
            int attr = -1;
            for (int a = 0; a < n->n_attr; a++)
                if (n->attrs[a].g && !strcmp(n->attrs[a].name, cond ? "then_branch" : "else_branch"))
                    attr = a;
            if (attr < 0)
                return nb_fail(st, NB_ERR_ATTR, "node '%s' (If): missing %s", n->name,
                               cond ? "then_branch" : "else_branch");
            if ((e = nb_graph_inline_branch(g, i, attr, st)))
                return e;
            i--; /* process the inlined nodes */
            continue;
        }
        bool has_sub = false;
        for (int a = 0; a < n->n_attr; a++)
            if (n->attrs[a].g) {
                has_sub = true;
                if ((e = fold_graph(n->attrs[a].g, st)))
                    return nb_prefix(st, "node '%s' subgraph '%s'", n->name, n->attrs[a].name);
                n = &g->nodes[i];
            }
        if ((e = nb_infer_node(g, i, st)))
            return e;
        (void)has_sub;
        if (all_outputs_known(g, n) || !all_inputs_known(g, n))
            continue;
        if ((e = fold_node(g, i, st)))
            return e;
    }
    return NB_OK;
}

nb_err nb_ref_fold(nb_model *m, nb_status *st)
{
    nb_err e = fold_graph(m->graph, st);
    return e ? nb_prefix(st, "%s", m->path) : NB_OK;
}

nb_err nb_ref_load(const char *path, const nb_load_opts *opts, nb_model **out, nb_status *st)
{
    nb_err e = nb_model_load(path, opts, out, st);
    if (e)
        return e;
    e = nb_ref_fold(*out, st);
    if (e) {
        nb_model_free(*out);
        *out = NULL;
    }
    return e;
}
