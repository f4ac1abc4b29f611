/* nanobench NPU compiler foundations (engine/atc): the Nano's tensor formats and their
 * padded sizes, the activation-arena planner, and the op-support table (share/ops.tsv).
 * The estimate and the compiler share these, so that their numbers cannot disagree.
 */
#ifndef NB_ATC_H
#define NB_ATC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/status.h"
#include "nb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- formats (values of aclFormat, ../shared/docs/facts/compile.md) ---- */
typedef enum nb_format {
    NB_FMT_NCHW = 0,
    NB_FMT_NHWC = 1,
    NB_FMT_ND = 2,
    NB_FMT_NC1HWC0 = 3,
    NB_FMT_FRACTAL_Z = 4,
    NB_FMT_FRACTAL_NZ = 29
} nb_format;

/* Element types of the NPU beyond ONNX's: signed 4-bit weights (two per byte). */
#define NB_NPU_INT4 ((nb_dtype)1004)

/* Bits per element of an NPU tensor: 4 for NB_NPU_INT4, else 8 * nb_dtype_size(). */
int nb_npu_bits(nb_dtype t);

/* C0, the channel block of the cube formats: a 32-byte row, so 16 for 2-byte types (fp16),
 * 32 for 1-byte types (int8, uint8) and 64 for int4; 16 for 4-byte types (GE's default
 * kCubeSize). Source: GE GetCubeSizeByDataType (compile.md). 0 for unknown types. */
int nb_c0(nb_dtype t);

/* Bytes of an NC1HWC0 tensor of the logical NCHW shape (rank 4; rank 3 [N,C,L] is taken as
 * H = 1, W = L): N * ceil(C / C0) * H * W * C0 elements. Returns -1 when a dim is negative
 * or the size overflows. Example: fp16 [1,3,8,8] -> 1*1*8*8*16*2 = 2048 bytes (5.33x). */
int64_t nb_nc1hwc0_bytes(int rank, const int64_t *nchw, nb_dtype t);

/* Bytes of conv weights [Cout, Cin, Kh, Kw] (Kh = 1 for 1-D) in FRACTAL_Z:
 * ceil(Cin / C0) * Kh * Kw * ceil(Cout / 16) * 16 * C0 elements (GE format_transfer_fractal_z).
 * Example: int8 depthwise [64,1,3,3] -> 1*9*4*16*32 = 18432 bytes for 576 weights. */
int64_t nb_fractal_z_bytes(int64_t cout, int64_t cin, int64_t kh, int64_t kw, nb_dtype t);

/* Bytes of a matrix operand (..., H, W) in FRACTAL_NZ: 16-row x C0-column tiles of 512
 * bytes, (..., ceil(W / C0), ceil(H / 16), 16, C0); a 1-D length N is H = 1, W = N and a scalar
 * is 1 x 1 (GE TransShapeToFracNz). Example: int8 [100, 70] -> 3 * 7 tiles * 512 = 10752 bytes. */
int64_t nb_fractal_nz_bytes(int rank, const int64_t *dims, nb_dtype t);

/* ---- activation arena planning ---- */

/* One intermediate tensor: bytes, and the first and last task steps (inclusive) at which
 * it must hold its value. */
typedef struct nb_live_buf {
    int64_t size;
    int first, last;
} nb_live_buf;

typedef struct nb_arena_plan {
    int64_t arena;          /* bytes of the arena the offsets fit in */
    int64_t lower_bound;    /* the largest sum of sizes alive at one step: no plan is smaller */
    int64_t greedy_by_size; /* what TFLite Micro's greedy-by-size first fit gives */
    const char *strategy;   /* the ordering and fit that won, e.g. "size/first-fit" */
} nb_arena_plan;

/* Assigns each buffer an offset (a multiple of align, a power of two >= 1) so that buffers
 * alive at the same step never overlap, and reports the arena size. Several orderings (by
 * size, by size x lifetime, by lifetime, by first use) are each placed first-fit and
 * best-fit; the smallest arena wins, ties to the earlier. Sizes are rounded up to align.
 * Each buffer is checked only against the buffers alive with it (conflict lists from a
 * sweep), so the cost is O(strategies x pairs alive together x log), O(n^2) only when
 * everything lives at once. Errors: NB_ERR_ARG for a negative size, a step range with
 * first > last, or align not a power of two; NB_ERR_NOMEM. */
nb_err nb_plan_arena(int n, const nb_live_buf *bufs, int64_t align, int64_t *offsets,
                     nb_arena_plan *plan, nb_status *st);

/* ---- op support table (share/ops.tsv) ---- */

typedef enum nb_unit { NB_UNIT_VECTOR, NB_UNIT_CUBE, NB_UNIT_CUBE_VECTOR } nb_unit;

typedef struct nb_op_support {
    char op[48];
    nb_unit unit;
    int opset_min, opset_max;
    int max_seq_len;        /* LSTM/GRU: sequence length per op (0: no limit) */
    int max_directions;     /* LSTM/GRU: 1 (0: no limit) */
    char note[128];
} nb_op_support;

typedef struct nb_op_table {
    int n;
    nb_op_support *ops;
} nb_op_table;

/* Path of the op table: $NANOBENCH_SHARE/ops.tsv, else the source tree's share/ops.tsv. */
const char *nb_op_table_default_path(void);
/* Reads a table: TSV with a header row "op unit opset_min opset_max constraints note";
 * unit is vector, cube or cube+vector; constraints "key=value;..." with keys seq_len and
 * directions. Errors: NB_ERR_IO, NB_ERR_FORMAT naming the file and line. */
nb_err nb_op_table_load(const char *path, nb_op_table *t, nb_status *st);
void nb_op_table_free(nb_op_table *t);
/* The row of op_type valid at opset, or NULL when the NPU does not support it there. */
const nb_op_support *nb_op_table_find(const nb_op_table *t, const char *op_type, int opset);
const char *nb_unit_name(nb_unit u);

/* The kernel id of an op type (ONNX ops, and AscendQuant, AscendDequant, TransData), or 0
 * when the exeom has none for it yet. */
int nb_exeom_kernel_id(const char *op_type);
/* True for a task the exeom holds: an NPU task, or a CPU task the MCU's core runs through
 * a kernel of its own (If: the branch taken picked by the CPU; CpuOnnx: any op the
 * reference runs, its node carried as a one-node ONNX model, share/doc/exeom.md); a CPU
 * task of neither is an op nothing runs (estimate's NOT_SUPPORT_OP_TYPE, atc refuses). */
struct nb_npu_task;
bool nb_task_in_exeom(const struct nb_npu_task *k);
const char *nb_exeom_kernel_name(int id);
/* The kernel id of a CPU task that runs node n through the reference (CpuOnnx). */
#define NB_EXEOM_CPU_ONNX "CpuOnnx"
/* The one-node ONNX model of a CPU task (engine/atc/cpu_node.c): node n of g (its op,
 * attributes, opset), a graph input per present input and a graph output per present
 * output with their element types and static shapes, serialized (*bytes malloc'd, *len).
 * When the node cannot be carried, *bytes is NULL and why says why (an op of another domain,
 * one the reference has no kernel for, a graph attribute, more than NB_EXEOM_MAX_IN - 1
 * inputs or NB_EXEOM_MAX_OUT outputs, a value of unknown type or run-time shape); that is
 * not an error. in_scale, in_offset (per node input, or NULL): what the NPU holds of a
 * float input under --nb_input_scale, s x + o; the model then takes it back first in float32
 * ("<input>/nb_unscaled" = (x - o) x (1 / s), exact for a power of two s). Errors:
 * NB_ERR_NOMEM. */
struct nb_graph;
struct nb_node;
/* Every ';'-separated name of list (--cpu_nodes; NULL: none) is a node of g or of its
 * branches: a typo would place nothing. Errors: NB_ERR_ARG naming the first that is not. */
nb_err nb_npu_check_cpu_nodes(const struct nb_graph *g, const char *list, nb_status *st);
nb_err nb_cpu_node_model(const struct nb_graph *g, const struct nb_node *n,
                         const double *in_scale, const double *in_offset, uint8_t **bytes,
                         size_t *len, char *why, size_t wl, nb_status *st);
/* Whether the exeom has a kernel for op_type with its parameters encoded: what the compiler
 * and the simulator take. The lowering gives an op without one to the CPU (unsupported),
 * so that estimate never calls supported what atc refuses. */
bool nb_npu_has_kernel(const char *op_type);

/* ---- the exeom layout the compiler writes (sizes the estimate counts) ----
 * header, then one descriptor per tensor and per task, then the weights, each weight
 * starting on a NB_EXEOM_ALIGN boundary. Names are not in the exeom (it hides the
 * network); they go to NAME.dbg. */
#define NB_EXEOM_HEADER_BYTES 64
#define NB_EXEOM_TENSOR_DESC_BYTES 48
#define NB_EXEOM_TASK_DESC_BYTES 64
#define NB_EXEOM_ALIGN 32
#define NB_EXEOM_MAX_IN 8  /* operands of a task descriptor */
#define NB_EXEOM_MAX_OUT 4

/* ---- lowering: the float IR as the NPU will run it ---- */

struct nb_model;

typedef enum nb_npu_role {
    NB_T_INPUT,      /* graph input: its own buffer (ACL input dataset) */
    NB_T_OUTPUT,     /* graph output: its own buffer (ACL output dataset) */
    NB_T_ACTIVATION, /* intermediate: a slot in the activation arena */
    NB_T_WEIGHT      /* constant: weights, bias, deq_scale, vector-op constants */
} nb_npu_role;

typedef struct nb_npu_tensor {
    char *name;
    nb_dtype dtype;  /* NPU type: FLOAT16, INT8, NB_NPU_INT4, INT32, UINT64 (deq_scale) ... */
    nb_format format;
    int rank;
    int64_t dims[NB_MAX_RANK]; /* logical shape */
    int64_t bytes;   /* padded bytes in its format */
    nb_npu_role role;
    int first, last; /* tasks that write it first and read it last (-1: none) */
    /* a weight the compiler made rather than the model's constant of the same name: a
       scalar of a decomposition (gen 1, value scalar), the reciprocal of the model's
       constant src (gen 2: Div by a constant -> Mul), a cube op's int32 bias (gen 3) or its
       deq_scale (gen 4), whose values come with the quantized layer */
    int gen;         /* gen 5: a CPU task's node, the one-node ONNX model blob (bytes) */
    float scalar;
    char *src;       /* gen 0: the model's constant it holds (its name may have a suffix:
                        one constant in two types); gen 2: the constant inverted */
    uint8_t *blob;
    int out_index;   /* role NB_T_OUTPUT: the graph output it is, in the model's order */
} nb_npu_tensor;

typedef enum nb_task_unit { NB_TASK_VECTOR, NB_TASK_CUBE, NB_TASK_CPU } nb_task_unit;

typedef struct nb_npu_task {
    char *name;      /* the ONNX node's name, or "<node>/<inserted op>" */
    char *op_type;   /* ONNX op, or AscendQuant, AscendDequant, Cast, TransData */
    char *onnx_op;   /* the op of the ONNX node it comes from */
    nb_task_unit unit;
    bool inserted;   /* added by lowering */
    char reason[400]; /* unit CPU: why the NPU cannot run it */
    bool cpu_ok;      /* unit CPU: the exeom holds it (an If's select, nb_task_in_exeom) */
    int br_first[2], br_count[2]; /* an If: the tasks each branch lowered to (attribute order) */
    int n_in, n_out, cap_in, cap_out;
    int *in, *out;   /* tensor indices */
    /* the weights this task is the first to read, each NB_EXEOM_ALIGN-aligned: the column
       sums to TOTAL_WEIGHT_SIZE */
    int64_t weight_bytes, macs;
    /* an AscendDequant that runs the Relu (1) or LeakyRelu (2, slope fused_alpha) of the ONNX
       node fused_node (the activation that alone read its output) */
    int fused_act;
    float fused_alpha;
    char *fused_node;
} nb_npu_task;

typedef struct nb_npu_opts {
    int weight_bits;        /* 8 (default) or 4 */
    const char *soc_version; /* "Ascend035A" (default) or "Ascend035B" */
    /* ATC's --input_fp16_nodes: the float inputs fed as fp16, ';'-separated; NULL: all of
     * them. A float input not listed arrives as float32 and takes a Cast to fp16. */
    const char *input_fp16_nodes;
    /* ATC's --output_type FP32: float outputs leave through a Cast to float32 (default
     * false: FP16). */
    bool output_fp32;
    /* The cube ops (ONNX node names) whose input x is quantized to int16: a calibrated
     * layer's dst_bits 16 (AMCT's dst_type INT16, the cube's s16 x s8 mode). Their
     * AscendQuant writes int16 (C0 16 in NC1HWC0 and FRACTAL_NZ, 2 bytes a value); every
     * other cube op's, int8. NULL: none. */
    const char *const *act16_nodes;
    int n_act16_nodes;
    /* The cube ops whose weights are int4 (a layer's weight_bits 4: the cube's s8 x s4, two
     * weights a byte, C0 64); NULL: those of weight_bits. */
    const char *const *w4_nodes;
    int n_w4_nodes;
    /* --cpu_nodes "a;b": ONNX nodes placed on the MCU's CPU whatever the NPU could do (a
     * CpuOnnx task in float32; a cube op among them must be float: left out of
     * calibration). NULL: none. */
    const char *cpu_nodes;
    /* --nb_input_scale's plan: what the NPU holds of each value id v of the model's graph,
     * value_scale[v] x v + value_offset[v] (NULL: the values as the model's); a CPU task
     * takes its inputs back (nb_cpu_node_model's in_scale, in_offset) */
    const double *value_scale, *value_offset;
    int n_values;
} nb_npu_opts;

typedef struct nb_npu_graph {
    int n_t, cap_t;
    nb_npu_tensor *t;
    int n_k, cap_k;
    nb_npu_task *k;
    int n_rewrites;
    char **rewrites; /* e.g. "Flatten 'f' -> Reshape" */
    int n_quant, n_dequant, n_cast, n_transdata;
} nb_npu_graph;

/* Lowers a loaded and folded model (nb_ref_fold) to NPU tasks and tensors, following the
 * Nano's rules (../shared/docs/nano-toolchain.md):
 * - decompositions first, each reported: Flatten -> Reshape; Div by a constant -> Mul by
 *   its reciprocal; BatchNormalization after a Conv/Gemm folded into it; Gemm with a
 *   constant B kept as one cube op; LSTM/GRU with seq_len > 1 unrolled into one task per
 *   step sharing one weight copy;
 * - cube ops take int8 (or int4) weights and int8 activations (an AscendQuant inserted
 *   unless the producer yields int8; int16 for the ops o->act16_nodes names), int32 bias,
 *   deq_scale, and an AscendDequant to fp16;
 * - vector ops run in fp16; a float32 graph input or output is fp16 at the boundary (ATC's
 *   --input_fp16_nodes / --output_type FP16);
 * - 4-D (and N,C,L) activations of spatial ops are NC1HWC0, conv weights FRACTAL_Z, matrix
 *   operands FRACTAL_NZ, the rest ND; a TransData is inserted where a consumer needs another
 *   format than its producer wrote;
 * - matrix weights are stored N x K (K along C0, as FRACTAL_Z for conv weights: a Gemm's
 *   transB = 1 B as it is, a MatMul's B transposed, LSTM/GRU W and R as stored); a constant
 *   read by several ops is one tensor; shape-like constants (Reshape's shape, axes, pads)
 *   are task parameters, not weights;
 * - an If left after folding: both branches are lowered (task names "<If>/<branch>/<node>")
 *   and the If is a CPU task after them;
 * - an op the table does not list (or an LSTM/GRU beyond its limits, conv weights computed
 *   at run time, a rank-5 spatial op, a run-time INT64 or other non-NPU dtype, a dynamic
 *   shape inside the graph) becomes a CPU task with the reason;
 * - task names and tensor names are unique (a repeated name takes a suffix _1, _2, ...).
 * Errors: NB_ERR_SHAPE for a graph input of unknown rank or dim (the NPU needs one shape),
 * NB_ERR_ARG for an --input_fp16_nodes entry that names no input, NB_ERR_NOMEM;
 * unsupported parts are reported in the graph, not as errors. */
nb_err nb_npu_lower(const struct nb_model *m, const nb_op_table *ops, const nb_npu_opts *o,
                    nb_npu_graph *g, nb_status *st);
void nb_npu_graph_free(nb_npu_graph *g);
const char *nb_format_name(nb_format f);

struct nb_graph;
struct nb_node;
/* Why the Nano's fused LSTM/GRU cannot run node n of graph g, in why ("" when it can):
 * run-time W or R; X, W, R not of rank 3; more than max_directions directions (the op
 * table's limit, 0: none); layout 1; activations other than Sigmoid/Tanh(/Tanh); clip;
 * input_forget; sequence_lens not all seq_len (or not constant). Longer sequences are
 * unrolled, not refused (../shared/docs/nano-toolchain.md: seq_len 1, one direction).
 * Used by the lowering (a CPU task) and by the calibrator (a refusal). */
void nb_npu_rnn_reason(const struct nb_graph *g, const struct nb_node *n, int max_directions,
                       char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
