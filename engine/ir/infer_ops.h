/* nanobench: operator shape-inference tables and helpers (engine/ir, not installed).
 *
 * Conventions for an infer function (nb_infer_fn):
 *  - read attributes with nb_attr_*(c->node, ...), the opset from c->opset;
 *  - c->in[i]: dtype (NB_UNDEFINED if omitted), rank (-1 unknown), dims (-1 unknown),
 *    value (known constant, or the actual tensor at run time);
 *  - fill every c->out[i] (nb_tinfo_set / nb_out_same / nb_out_unknown);
 *  - reject what is invalid whatever the unknowns (bad attribute: NB_ERR_ATTR; shapes that
 *    cannot agree: NB_ERR_SHAPE); messages need not name the node (the driver prefixes it);
 *  - never read value data of a tensor whose value is NULL;
 *  - only Shape/Size (and constants) may set out[i].value (a new tensor).
 */
#ifndef NB_INFER_OPS_H
#define NB_INFER_OPS_H

#include "ir_internal.h"

typedef struct nb_infer_entry {
    const char *op;
    nb_infer_fn fn;
} nb_infer_entry;

extern const nb_infer_entry nb_infer_ops_elementwise[]; /* infer_elementwise.c */
extern const nb_infer_entry nb_infer_ops_tensor[];      /* infer_tensor.c */
extern const nb_infer_entry nb_infer_ops_nn[];          /* infer_nn.c: conv, matmul, pools */
extern const nb_infer_entry nb_infer_ops_norm[];        /* infer_norm.c: norms, softmax, reduce, resize */
extern const nb_infer_entry nb_infer_ops_rnn[];         /* infer_rnn.c */
extern const nb_infer_entry nb_infer_ops_quant[];       /* infer_quant.c */
extern const nb_infer_entry nb_infer_ops_control[];     /* infer_control.c */

/* Checks the input count is in [min, max] (max < 0: unbounded) and inputs 0..min-1 are
 * present. NB_ERR_GRAPH otherwise. */
nb_err nb_need_inputs(nb_infer_ctx *c, int min, int max);
/* True when optional input i is given. */
bool nb_has_in(const nb_infer_ctx *c, int i);
/* out[o] := dtype and shape of in[i]. */
void nb_out_same(nb_infer_ctx *c, int o, int i);
/* out[o] := dtype, unknown rank. */
void nb_out_unknown(nb_infer_ctx *c, int o, nb_dtype dtype);
/* Reads the known int64/int32 1-D (or scalar) value of input i into vals (at most max).
 * NB_ERR_INTERNAL if the value is unknown: check c->in[i].value first. */
nb_err nb_const_ints(nb_infer_ctx *c, int i, int64_t *vals, int max, int *n, const char *what);
/* A new INT64 tensor (rank 1 of n values, or a scalar when scalar is true). */
nb_err nb_new_value_i64(const int64_t *vals, int n, bool scalar, const nb_tensor **out,
                        nb_status *st);

#endif
