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
 * bytes, (..., ceil(W / C0), ceil(H / 16), 16, C0); a 1-D length N is H = 1, W = N
 * (GE TransShapeToFracNz). Example: int8 [100, 70] -> 3 * 7 tiles * 512 = 10752 bytes. */
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
 * O(strategies x n^2). Errors: NB_ERR_ARG for a negative size, a step range with
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

#ifdef __cplusplus
}
#endif
#endif
