/* nanobench graph IR: ONNX import (protobuf-c), graph, attributes, shape inference.
 *
 * A model is a graph of nodes in topological order over SSA values. A value is a named
 * tensor: a graph input, an initializer/constant, a node output, or (in a subgraph of If)
 * a reference to a value of the enclosing graph. Static information (dtype, rank, dims)
 * comes from the model and from shape inference; unknown dims are -1, unknown rank is -1.
 */
#ifndef NB_IR_H
#define NB_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "nb/status.h"
#include "nb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default-domain opsets imported. 7..10 are converted on import to the opset-11 form of the
 * ops whose signature changed (engine/ir/onnx_legacy.c), and the model is opset 11 after. */
#define NB_OPSET_MIN 7
#define NB_OPSET_MAX 18

typedef enum nb_attr_type {
    NB_ATTR_UNDEFINED = 0,
    NB_ATTR_FLOAT = 1,
    NB_ATTR_INT = 2,
    NB_ATTR_STRING = 3,
    NB_ATTR_TENSOR = 4,
    NB_ATTR_GRAPH = 5,
    NB_ATTR_FLOATS = 6,
    NB_ATTR_INTS = 7,
    NB_ATTR_STRINGS = 8
} nb_attr_type;

struct nb_graph;

typedef struct nb_attr {
    char *name;
    nb_attr_type type;
    float f;
    int64_t i;
    char *s; /* NUL-terminated copy of the bytes */
    nb_tensor *t;
    struct nb_graph *g;
    int n;          /* count of floats / ints / strings */
    float *floats;
    int64_t *ints;
    char **strings;
} nb_attr;

typedef struct nb_value {
    char *name;
    nb_dtype dtype;          /* NB_UNDEFINED until known */
    int rank;                /* -1 unknown */
    int64_t dims[NB_MAX_RANK];
    char *dim_params[NB_MAX_RANK]; /* symbolic names of dynamic dims from the model, or NULL */
    nb_tensor *const_val;    /* initializer, Constant or folded value; NULL otherwise */
    int producer;            /* index of producing node, or -1 */
    int outer;               /* in a subgraph: id of the value in the parent graph, or -1 */
    bool is_input;           /* graph input (not an initializer) */
    bool is_output;          /* graph output */
    bool is_initializer;
} nb_value;

typedef struct nb_node {
    char *name;      /* node name; when the model has none, "<op_type>_<index>" */
    char *op_type;
    char *domain;    /* "" for the default domain */
    int n_in, n_out;
    int *in;         /* value ids; -1 for an omitted optional input */
    int *out;        /* value ids; -1 for an omitted optional output */
    int n_attr;
    nb_attr *attrs;
    int n_implicit;  /* values of this graph read by the node's subgraphs (If) */
    int *implicit;
} nb_node;

typedef struct nb_graph {
    char *name;
    struct nb_graph *parent; /* enclosing graph for subgraphs, NULL at top level */
    int opset;               /* default-domain opset (same as the model's) */
    int n_values, cap_values;
    nb_value *values;
    int n_nodes, cap_nodes;
    nb_node *nodes;          /* topological order after nb_graph_sort() */
    int n_inputs;  int *inputs;   /* value ids, graph inputs without initializers */
    int n_outputs; int *outputs;  /* value ids */
    void *name_index;        /* private: name -> value id hash */
} nb_graph;

typedef struct nb_model {
    char *path;
    char *dir;               /* folder of the model file, for external data */
    int64_t ir_version;
    int opset;               /* default domain, as imported (11 for a file of 7..10) */
    int opset_file;          /* default domain, as the file says */
    char *producer;
    nb_graph *graph;
    int n_warnings;
    char **warnings;         /* e.g. unused node outputs, by name */
    uint64_t file_bytes;
    int n_named_nodes;       /* nodes the file left unnamed, named by nb_onnx_gate */
    struct nb_filemap *file; /* a weights_deferred load's mapped file (a reference), or NULL */
} nb_model;

/* One fixed input shape from --input_shape "name:n,c,h,w;name2:...". */
typedef struct nb_shape_override {
    char *name;
    int rank;
    int64_t dims[NB_MAX_RANK];
} nb_shape_override;

typedef struct nb_load_opts {
    /* --input_shape text (vendor syntax) or NULL. */
    const char *input_shape;
    /* Accept default-domain opsets 1..6 too, imported as they are, without conversion
     * (conformance runner only; the CLI rejects them). */
    bool allow_legacy_opset;
    /* Large initializers keep the buffers protobuf-c decoded them into (16-byte aligned)
     * instead of a 64-byte aligned copy: a 10 MB model loads in half the time, but the
     * kernels run slower on them (measured: melspectrogram 1.0x -> 1.3x ORT). For commands
     * that read shapes, not run (info, estimate). */
    bool weights_in_place;
    /* For loads that read shapes (estimate): a large initializer that only ops' weight
     * inputs read (Conv, Gemm, MatMul, LSTM, BatchNormalization, ...: nothing reads its
     * values before compiling) stays in the mapped file, its tensor deferred
     * (nb_tensor_is_deferred, data NULL) until nb_tensor_materialize; constant folding
     * materializes what it computes on. A 10 MB model's weights are then never copied.
     * nb_model_load only; a deferred tensor holds the file's mapping. */
    bool weights_deferred;
    /* The input shapes as data (names never parsed), when input_shape is NULL: n_shapes
     * entries, checked as --input_shape's are. */
    const struct nb_shape_override *shapes;
    int n_shapes;
} nb_load_opts;

/* Parses --input_shape "name:d0,d1,...;name2:..." (vendor syntax: ';' between inputs, ','
 * between dims, the name may itself contain ':'; the last ':' separates it). Dims must be
 * integers >= 0 (a range "n1~n2" is rejected: nanobench needs one shape).
 * Errors: NB_ERR_ARG quoting the bad part. Free with nb_shape_overrides_free. */
nb_err nb_parse_input_shape(const char *text, nb_shape_override **out, int *n, nb_status *st);
/* The 32-bit FNV-1a hash of a NUL-terminated string (the name indexes' hash). */
uint32_t nb_fnv1a(const char *s);
/* A set of strings (open addressing, FNV-1a, linear probing): node names checked for
 * repeats, a dump's file names, in linear time. Holds pointers it does not own; zero-
 * initialize, free(slot) when done. */
typedef struct nb_name_set {
    const char **slot;
    size_t cap, n;
} nb_name_set;
bool nb_name_set_has(const nb_name_set *ns, const char *name);
/* Adds name (not copied: it must outlive the set; already in: nothing added); false when
 * out of memory. */
bool nb_name_set_add(nb_name_set *ns, const char *name);
/* A dynamic batch (dim 0) of each input of m whose other dims are known, taken as 1, as the
 * vendor's estimate takes it for one inference: *out is the --input_shape text that fixes
 * them (shape's own entries first, then "name:1,d1,..." for each; malloc'd), *names their
 * names "'a', 'b'" (malloc'd; names may be NULL); both NULL when no input has one. Names
 * holding ';' or ':' (which --input_shape cannot write) keep theirs. Errors: NB_ERR_NOMEM. */
nb_err nb_batch_one_shape(const nb_model *m, const char *shape, char **out, char **names,
                          nb_status *st);
void nb_shape_overrides_free(nb_shape_override *o, int n);
/* True when the vendor's ';'-separated list (--input_fp16_nodes "x;y") has the entry name
 * (the first len bytes of it). A NULL list has none. */
bool nb_list_has(const char *list, const char *name, size_t len);

/* True when the mapped file a weights_deferred load reads from was truncated after the
 * load (its pages then read as zeros, nb_filemap): the estimate checks it before it answers. */
bool nb_model_file_changed(const nb_model *m);
/* Loads an ONNX model file: protobuf parse, opset check, initializers (raw_data, typed
 * fields, external data inside the model's folder), Constant nodes to constants, graph
 * inputs that are initializers, input-shape overrides, topological sort (cycles and inputs
 * that nothing produces are NB_ERR_GRAPH naming the value), and static shape inference.
 * Errors: NB_ERR_IO, NB_ERR_FORMAT, NB_ERR_OPSET, NB_ERR_GRAPH, NB_ERR_SHAPE, NB_ERR_DATA,
 * NB_ERR_EXTERNAL, NB_ERR_ATTR, NB_ERR_UNSUPPORTED, NB_ERR_ARG (override names an unknown
 * input), each message starting with the path. */
nb_err nb_model_load(const char *path, const nb_load_opts *opts, nb_model **out, nb_status *st);
/* Same from bytes in memory; dir is the folder used for external data (may be NULL: then
 * external data is an error). */
nb_err nb_model_load_mem(const uint8_t *data, size_t len, const char *path_for_msgs,
                         const char *dir, const nb_load_opts *opts, nb_model **out,
                         nb_status *st);
void nb_model_free(nb_model *m);

/* The gate (issue 25): every reader of an ONNX protobuf calls it on the decoded model
 * before it looks at any field (the importer here, and engine/quant's deploy, fake-quant and
 * Q/DQ readers). It makes every absent string field "" (so that no reader meets a NULL
 * name, op_type or domain), writes back an attribute's type where an old model left it out
 * (deduced from the field set), and refuses, with one message naming the file and the node
 * or tensor: a model without graph; a node without op_type; an attribute without name,
 * given twice, of no known type, without the value its type names, or referring to a
 * function attribute; an initializer without name; a tensor (initializer or attribute, in
 * every subgraph) without data_type, of an element type nanobench does not read, of rank
 * over NB_MAX_RANK, with a negative or overflowing dim, or whose raw_data or typed values
 * do not fill its dims; a graph input or output without name; a value type whose tensor
 * type or dim is an empty message. Rules: ONNX IR (docs/IR.md) and the ONNX checker's
 * attribute rule. Errors: NB_ERR_FORMAT, NB_ERR_ATTR, NB_ERR_DATA, NB_ERR_SHAPE,
 * NB_ERR_UNSUPPORTED, NB_ERR_NOMEM. mp is modified (the fills), never freed.
 * Unnamed nodes (names are optional in ONNX; onnx.helper and several exporters leave them
 * out) are named in mp: "<op_type>_<index>", the index counting nodes depth-first through
 * subgraphs as the importer does, "_1", "_2"... added when that name is taken by any node of
 * the file; *named (when not NULL) is how many. */
typedef struct Onnx__ModelProto Onnx__ModelProto;
nb_err nb_onnx_gate(Onnx__ModelProto *mp, const char *path, int *named, nb_status *st);
/* Decodes a ModelProto from len bytes and passes it through the gate: the nesting depth
 * checked first (protobuf-c decodes recursively), then unpacked, then nb_onnx_gate. On
 * success *out is the model (onnx__model_proto__free_unpacked). Errors: the gate's, and
 * NB_ERR_FORMAT for bytes that are not a ModelProto. */
nb_err nb_onnx_decode(const uint8_t *data, size_t len, const char *path, Onnx__ModelProto **out,
                      int *named, nb_status *st);

/* Before re-encoding a model from nb_onnx_decode (malloc'ed, not an arena's): every optional
 * string field the gate set to "" is absent again (protobuf-c writes a "" that is set, and an
 * attribute with ref_attr_name "" is a reference, which onnx.checker and ONNX Runtime refuse).
 * Fields read after this may be NULL. */
void nb_onnx_prepare_pack(Onnx__ModelProto *mp);

/* Decodes a serialized onnx.TensorProto file (the backend tests' input_N.pb).
 * Errors: NB_ERR_IO, NB_ERR_FORMAT, NB_ERR_DATA, NB_ERR_UNSUPPORTED (dtype). */
nb_err nb_tensor_pb_read(const char *path, nb_tensor **out, char **name, nb_status *st);

/* ---- graph building and queries ---- */
int nb_graph_find(const nb_graph *g, const char *name); /* value id or -1 */
/* Adds a value (name copied; must be new in g). Returns its id or -1 on NOMEM. */
int nb_graph_add_value(nb_graph *g, const char *name);
/* Sorts nodes topologically (stable for already-ordered graphs); NB_ERR_GRAPH names a
 * value on a cycle. Also recomputes producer indices. */
nb_err nb_graph_sort(nb_graph *g, nb_status *st);
/* Number of nodes in g and its subgraphs. */
int nb_graph_count_nodes(const nb_graph *g);

/* ---- attributes ---- */
const nb_attr *nb_attr_find(const nb_node *n, const char *name);
int64_t nb_attr_int(const nb_node *n, const char *name, int64_t dflt);
float nb_attr_float(const nb_node *n, const char *name, float dflt);
const char *nb_attr_str(const nb_node *n, const char *name, const char *dflt);
/* Ints attribute: pointer and count, or NULL and *count = 0 when absent. */
const int64_t *nb_attr_ints(const nb_node *n, const char *name, int *count);
const float *nb_attr_floats(const nb_node *n, const char *name, int *count);

/* ---- shape inference ---- */

/* What is known of one tensor: at import (static) or at run time (everything known). */
typedef struct nb_tinfo {
    nb_dtype dtype;             /* NB_UNDEFINED for an omitted optional input */
    int rank;                   /* -1 unknown */
    int64_t dims[NB_MAX_RANK];  /* -1 unknown */
    const nb_tensor *value;     /* known value, or NULL */
} nb_tinfo;

typedef struct nb_infer_ctx {
    const nb_graph *graph;
    const nb_node *node;
    int opset;
    int n_in;
    const nb_tinfo *in;
    int n_out;
    nb_tinfo *out;       /* filled by the infer function; out[i].value may be set to a new
                            tensor that the caller then owns (Shape, Constant) */
    nb_status *st;
} nb_infer_ctx;

typedef nb_err (*nb_infer_fn)(nb_infer_ctx *c);

/* Infer function of an op type in the default domain, or NULL when the op is unknown. */
nb_infer_fn nb_infer_lookup(const char *op_type);
/* Sorted list of every op type that has shape inference; *n receives the count. */
const char *const *nb_infer_op_list(int *n);

/* Runs the infer function of node ni with in[] built from the graph's values; writes the
 * results into the node's output values (what inference knows wins; what the model
 * declares fills the rest: a declared graph output shape that contradicts inference is a
 * warning on the model, as in ONNX Runtime). Folded values (out.value) become const_val.
 * Errors from the op's rules are prefixed with the node name. */
nb_err nb_infer_node(nb_graph *g, int ni, nb_status *st);
/* nb_infer_node over every node in order (and subgraphs). */
nb_err nb_infer_graph(nb_graph *g, nb_status *st);

/* Helpers for infer functions and kernels. */
/* Normalises axis into [0, rank) (negative counts from the end); NB_ERR_ATTR if out of range. */
nb_err nb_norm_axis(int64_t axis, int rank, int *out, const char *what, nb_status *st);
/* Numpy-style broadcast of two shapes into out (rank = max). Unknown dims (-1) propagate.
 * NB_ERR_SHAPE if incompatible. */
nb_err nb_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                          int64_t *out, nb_status *st);
/* Sets c->out[i] dtype/rank/dims. */
void nb_tinfo_set(nb_tinfo *t, nb_dtype dtype, int rank, const int64_t *dims);
/* True when rank and every dim are known. */
bool nb_tinfo_static(const nb_tinfo *t);
/* a * b with overflow check into *out; false on overflow or negative operand. */
bool nb_mul_ok(int64_t a, int64_t b, int64_t *out);
/* Makes room for element n of the array *p of *cap elements of elem bytes (doubling, from
 * 16). False when out of memory (the array is left as it was). */
bool nb_grow(void **p, int *cap, int n, size_t elem);
/* Appends a printf-formatted copy (cut at 1023 bytes) to the heap list *list of *n
 * strings (warnings, rewrites, notes). False when out of memory (the list is unchanged). */
bool nb_strlist_addf(char ***list, int *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool nb_strlist_vaddf(char ***list, int *n, const char *fmt, va_list ap);

#ifdef __cplusplus
}
#endif
#endif
