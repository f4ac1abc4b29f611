/* nanobench: functions shared inside engine/ir and with engine/ref (not installed). */
#ifndef NB_IR_INTERNAL_H
#define NB_IR_INTERNAL_H

#include "nb/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

nb_graph *nb_graph_new(const char *name, nb_graph *parent, int opset);
void nb_graph_free(nb_graph *g);
/* Appends a zeroed node (pointer valid until the next add). NULL on NOMEM. */
nb_node *nb_graph_add_node(nb_graph *g);
nb_err nb_graph_rename_value(nb_graph *g, int id, const char *name, nb_status *st);
void nb_attr_clear(nb_attr *a);
void nb_node_clear(nb_node *n);
/* Id of name in g, creating outer-scope references through the enclosing graphs when the
 * name lives there; -1 when no scope has it. */
int nb_graph_resolve(nb_graph *g, const char *name);
/* Recomputes node->implicit of a node with subgraphs from their outer references. */
nb_err nb_node_collect_implicit(nb_graph *g, nb_node *n, nb_status *st);
/* Copies static info of each outer reference of sub from its value in sub->parent. */
void nb_graph_pull_outer(nb_graph *sub);
/* Replaces node ni of g (an If) by the nodes of its subgraph attribute attr (the branch
 * taken): subgraph values become values of g (renamed on a clash), outer references become
 * the values they refer to, and the node's outputs are produced by the branch (through an
 * Identity where the branch output is not a node output of the branch). Nested subgraphs
 * are re-parented. Producer indices are recomputed. */
nb_err nb_graph_inline_branch(nb_graph *g, int ni, int attr, nb_status *st);
/* Adds a warning line to the model. */
void nb_model_warn(nb_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
