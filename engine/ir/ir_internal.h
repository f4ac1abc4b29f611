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
/* Rewrites a decoded model of default-domain opset 7..10 (opset) into the opset-11 form of
 * the ops whose signature changed before 11 (onnx_legacy.c lists them: Upsample and
 * Resize-10 -> Resize, Slice, Pad, Clip and TopK attributes -> inputs, BatchNormalization's
 * spatial), then sets the default-domain opset_import to 11 and ir_version to at least 6.
 * mp has passed the gate (strings not NULL, nodes named); al is the allocator it was decoded
 * with (NULL: malloc). New strings and messages come from al; new optional string fields
 * are left NULL (the caller fills them as the gate does). summary (when summary_len > 0)
 * gets "2 Upsample -> Resize, 1 Pad". Errors: NB_ERR_UNSUPPORTED naming the node, its op
 * and the opset for a node whose meaning has no opset-11 form (BatchNormalization
 * spatial=0, a read Dropout mask before 10, a nearest Upsample or Resize-10 whose scales
 * both up- and downsample, a nearest Resize-10 whose scales are not a constant);
 * NB_ERR_NOMEM. mp may be partly rewritten on error. */
struct ProtobufCAllocator;
nb_err nb_onnx_upgrade_legacy(Onnx__ModelProto *mp, struct ProtobufCAllocator *al,
                              const char *path, int opset, char *summary, size_t summary_len,
                              nb_status *st);

#ifdef __cplusplus
}
#endif
#endif
