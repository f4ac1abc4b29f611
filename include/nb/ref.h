/* nanobench float32 reference executor: the golden outputs, and the calibration
 * engine's forward pass.
 *
 * It runs a whole graph with the ONNX semantics of each operator (float32 for float data,
 * exact integer arithmetic for integer data). Shapes are inferred again at run time from
 * the actual inputs, so data-dependent shapes and the two branches of If work.
 * Conv, ConvTranspose, MatMul and Gemm use OpenBLAS cblas_sgemm (im2col where needed).
 */
#ifndef NB_REF_H
#define NB_REF_H

#include <stdbool.h>

#include "nb/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nb_exec;

/* What a kernel sees. Inputs are NULL for omitted optional inputs; outputs have been
 * allocated with the shapes that shape inference gave, or are NULL when the node's
 * output is omitted. */
typedef struct nb_kctx {
    const nb_graph *graph;
    const nb_node *node;
    int opset;
    int n_in;
    nb_tensor *const *in;
    int n_out;
    nb_tensor **out;
    nb_status *st;
    struct nb_exec *exec; /* for control flow (If) */
    void *env;            /* private: the value environment of the running graph */
    /* RNN, GRU, LSTM: when set, called at every step on a copy of the n hidden-state values
       that enter the recurrent product (Ht-1, or rt (.) Ht-1 for a GRU without
       linear_before_reset), which it may change in place: the calibrator fake-quantizes
       them as the cube does; the state itself stays float (the vector unit's). */
    void (*rnn_cube_h)(void *user, float *h, int64_t n);
    void *rnn_cube_h_user;
} nb_kctx;

typedef nb_err (*nb_kernel_fn)(nb_kctx *k);

/* Kernel of an op type, or NULL. */
nb_kernel_fn nb_kernel_lookup(const char *op_type);
/* True when the op is executed by aliasing input 0 (Reshape, Identity, Squeeze, ...). */
bool nb_kernel_is_alias(const char *op_type);
/* True when the reference can execute op_type (kernel, alias or control flow). */
bool nb_ref_supports(const char *op_type);

/* Loads a model (nb_model_load) and then folds constants: every node whose inputs are all
 * known (and Shape of a static shape) is computed at import, and an If whose condition
 * folds is replaced by the nodes of the branch taken. Shape inference is then complete for
 * static inputs. Errors: those of nb_model_load, prefixed with the path. */
nb_err nb_ref_load(const char *path, const nb_load_opts *opts, nb_model **out, nb_status *st);
/* C [m x n] = A [m x k] . B [k x n], row-major fp32 with leading dims lda, ldb, ldc:
 * OpenBLAS's cblas_sgemm (opened at the first call), or a plain C loop when it cannot be
 * opened. The simulated NPU's cube uses it for integer products whose sums stay below 2^24
 * (exact in fp32 in any order). */
void nb_sgemm_rm(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                 float *c, int ldc);

/* The folding step alone, on a loaded model. */
nb_err nb_ref_fold(nb_model *m, nb_status *st);

/* ---- nanobench info (engine/ref/model_info.c) ---- */
typedef struct nb_info_op {
    char op[64];        /* the op type */
    int main, sub;      /* nodes of it in the main graph, in If/Loop bodies */
    bool in_reference;  /* nb_ref_supports */
} nb_info_op;
typedef struct nb_model_info {
    nb_model *m;        /* the model, folded (nb_ref_fold) after the counting */
    int nodes, main_nodes; /* every node (subgraphs too), the main graph's */
    nb_info_op *ops;    /* the histogram of the model as written, most frequent first
                           (ties by name) */
    int n_ops;
    int not_in_reference; /* op types the reference cannot run */
} nb_model_info;
/* Loads path (nb_model_load with lo), counts its op types, then folds it. Errors: those of
 * nb_model_load and nb_ref_fold, NB_ERR_NOMEM; in is freed on error. */
nb_err nb_model_info_get(const char *path, const nb_load_opts *lo, nb_model_info *in,
                         nb_status *st);
void nb_model_info_free(nb_model_info *in);
/* `info --json`: model (path), producer, ir_version, opset, file_bytes, inputs and outputs
 * (nb_values_json), nodes, main_graph_nodes, subgraph_nodes, op_histogram,
 * subgraph_op_histogram, unsupported_by_reference, the importer's warnings. A new object. */
struct json_t *nb_model_info_json(const char *path, const nb_model_info *in);
/* The values ids[n] of g as [{name, dtype (ONNX spelling), shape}], a dynamic dim as its
 * dim_param ("?" when it has none), an unknown rank as a null shape. */
struct json_t *nb_values_json(const nb_graph *g, const int *ids, int n);

/* Called for every value produced (node outputs, in execution order; also subgraph values,
 * whose names are those of the subgraph). The tensor is only valid during the call unless
 * the callee takes a reference with nb_tensor_ref. Return NB_OK to continue. */
typedef nb_err (*nb_value_cb)(void *user, const nb_node *node, int out_index,
                              const char *name, const nb_tensor *t);

typedef struct nb_exec_opts {
    bool keep_all;        /* keep every intermediate value for nb_exec_get (golden dumps) */
    nb_value_cb on_value; /* optional observer (calibration statistics) */
    void *user;
} nb_exec_opts;

typedef struct nb_exec nb_exec;

/* Prepares an executor for m (m must outlive it). Errors: NB_ERR_UNSUPPORTED listing every
 * op type the reference cannot run, NB_ERR_NOMEM. */
nb_err nb_exec_create(const nb_model *m, const nb_exec_opts *opts, nb_exec **out,
                      nb_status *st);
/* Runs the graph. inputs[i] is bound to the graph input named names[i]; every graph input
 * must be given exactly once, with the model's dtype and a shape that agrees with the
 * model's known dims. Errors: NB_ERR_ARG (missing/unknown/mismatching input),
 * NB_ERR_SHAPE / NB_ERR_ATTR / NB_ERR_DATA from a node (prefixed with the node name). */
nb_err nb_exec_run(nb_exec *e, int n, const char *const *names, nb_tensor *const *inputs,
                   nb_status *st);
/* After a run: the value named name (graph outputs always; intermediates with keep_all),
 * or NULL. The executor keeps ownership; valid until the next run or free. */
const nb_tensor *nb_exec_get(const nb_exec *e, const char *name);
/* With keep_all, after a run: the i-th value computed inside a subgraph (If branch), in
 * execution order, and its name; NULL when i is past the last. */
const nb_tensor *nb_exec_subgraph_value(const nb_exec *e, int i, const char **name);
/* Graph output i after a run. */
const nb_tensor *nb_exec_output(const nb_exec *e, int i);
void nb_exec_free(nb_exec *e);

#ifdef __cplusplus
}
#endif
#endif
