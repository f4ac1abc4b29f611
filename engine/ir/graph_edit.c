/* nanobench: graph surgery used by constant folding (ir_internal.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

/* A name not yet used in g, based on base. */
static char *unique_name(const nb_graph *g, const char *base)
{
    size_t len = strlen(base) + 32;
    char *s = malloc(len);
    if (!s)
        return NULL;
    snprintf(s, len, "%s", base);
    for (int k = 1; nb_graph_find(g, s) >= 0; k++)
        snprintf(s, len, "%s__%d", base, k);
    return s;
}

/* Re-targets nested subgraphs of a moved node: their parent becomes g and their outer
 * references (ids in the old parent) go through map. */
static void reparent(nb_node *n, nb_graph *g, const int *map)
{
    for (int a = 0; a < n->n_attr; a++) {
        nb_graph *sg = n->attrs[a].g;
        if (!sg)
            continue;
        sg->parent = g;
        for (int v = 0; v < sg->n_values; v++)
            if (sg->values[v].outer >= 0)
                sg->values[v].outer = map[sg->values[v].outer];
    }
}

nb_err nb_graph_inline_branch(nb_graph *g, int ni, int attr, nb_status *st)
{
    nb_node *ifn = &g->nodes[ni];
    nb_graph *sub = ifn->attrs[attr].g;
    if (!sub || sub->n_outputs != ifn->n_out)
        return nb_fail(st, NB_ERR_GRAPH, "node '%s': branch outputs do not match the node",
                       ifn->name);
    int *map = malloc(sizeof(int) * ((size_t)sub->n_values + 1));
    int *use_count = calloc((size_t)sub->n_values + 1, sizeof(int));
    if (!map || !use_count) {
        free(map);
        free(use_count);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int o = 0; o < sub->n_outputs; o++)
        use_count[sub->outputs[o]]++;
    /* which branch outputs can take over the If output directly */
    int *direct = calloc((size_t)sub->n_values + 1, sizeof(int));
    if (!direct) {
        free(map);
        free(use_count);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int v = 0; v < sub->n_values; v++)
        direct[v] = -1;
    int n_identity = 0;
    for (int o = 0; o < sub->n_outputs; o++) {
        int sv = sub->outputs[o];
        const nb_value *val = &sub->values[sv];
        bool node_out = val->producer >= 0 && val->outer < 0 && !val->const_val;
        if (node_out && use_count[sv] == 1 && ifn->out[o] >= 0)
            direct[sv] = ifn->out[o];
        else
            n_identity++;
    }
    nb_err e = NB_OK;
    for (int v = 0; v < sub->n_values && !e; v++) {
        nb_value *sv = &sub->values[v];
        if (sv->outer >= 0) {
            map[v] = sv->outer;
            continue;
        }
        if (direct[v] >= 0) {
            map[v] = direct[v];
            continue;
        }
        char *name = unique_name(g, sv->name);
        int id = name ? nb_graph_add_value(g, name) : -1;
        free(name);
        if (id < 0) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        nb_value *pv = &g->values[id];
        pv->dtype = sv->dtype;
        pv->rank = sv->rank;
        memcpy(pv->dims, sv->dims, sizeof pv->dims);
        pv->const_val = sv->const_val;
        sv->const_val = NULL;
        map[v] = id;
    }
    if (e) {
        free(map);
        free(use_count);
        free(direct);
        return e;
    }
    /* new node array: nodes before ni, branch nodes, identities, nodes after ni */
    int nsub = sub->n_nodes;
    int total = g->n_nodes - 1 + nsub + n_identity;
    nb_node *nodes = calloc((size_t)total + 1, sizeof(nb_node));
    if (!nodes) {
        free(map);
        free(use_count);
        free(direct);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < ni; i++)
        nodes[k++] = g->nodes[i];
    for (int i = 0; i < nsub; i++) {
        nb_node *n = &sub->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] >= 0)
                n->in[j] = map[n->in[j]];
        for (int j = 0; j < n->n_out; j++)
            if (n->out[j] >= 0)
                n->out[j] = map[n->out[j]];
        for (int j = 0; j < n->n_implicit; j++)
            n->implicit[j] = map[n->implicit[j]];
        reparent(n, g, map);
        nodes[k++] = *n;
        memset(n, 0, sizeof *n);
    }
    sub->n_nodes = 0;
    for (int o = 0; o < sub->n_outputs; o++) {
        int sv = sub->outputs[o];
        if (direct[sv] >= 0 || ifn->out[o] < 0)
            continue;
        nb_node *idn = &nodes[k++];
        size_t len = strlen(ifn->name) + 32;
        idn->name = malloc(len);
        idn->op_type = strdup("Identity");
        idn->domain = strdup("");
        idn->in = malloc(sizeof(int));
        idn->out = malloc(sizeof(int));
        if (!idn->name || !idn->op_type || !idn->domain || !idn->in || !idn->out) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(idn->name, len, "%s/output_%d", ifn->name, o);
        idn->n_in = idn->n_out = 1;
        idn->in[0] = map[sv];
        idn->out[0] = ifn->out[o];
    }
    if (!e) {
        nb_node old = g->nodes[ni];
        for (int i = ni + 1; i < g->n_nodes; i++)
            nodes[k++] = g->nodes[i];
        free(g->nodes);
        g->nodes = nodes;
        g->n_nodes = k;
        g->cap_nodes = total + 1;
        nb_node_clear(&old);
        e = nb_graph_sort(g, st);
    } else {
        free(nodes);
    }
    free(map);
    free(use_count);
    free(direct);
    return e;
}
