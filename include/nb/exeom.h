/* nanobench exeom: the file the Nano loads (issue 5), written from the lowering
 * (nb_estimate_model's graph and arena plan) and the quantized layers of the compiler's
 * input (nb_read_npu_input). The layout, byte by byte, is share/doc/exeom.md; its size is
 * the estimate's TOTAL_EXEOM_SIZE by construction (header, one descriptor per tensor and per
 * task, the weights each on a 32-byte boundary).
 */
#ifndef NB_EXEOM_H
#define NB_EXEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/estimate.h"
#include "nb/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NB_EXEOM_MAGIC "NBXO"
#define NB_EXEOM_VERSION 1
#define NB_EXEOM_MAX_IN 8  /* operands of a task descriptor */
#define NB_EXEOM_MAX_OUT 4
#define NB_EXEOM_NONE 0xFFFF

/* A tensor descriptor as stored (48 bytes). */
typedef struct nb_exeom_tensor {
    uint8_t dtype;   /* aclDataType (FLOAT16 1, INT8 2, INT32 3, UINT64 10, ...; int4 29) */
    uint8_t format;  /* aclFormat (ND 2, NC1HWC0 3, FRACTAL_Z 4, FRACTAL_NZ 29, ...) */
    uint8_t role;    /* 0 input, 1 output, 2 activation, 3 weight */
    uint8_t rank;
    int32_t dims[6]; /* logical shape */
    uint32_t bytes;  /* padded bytes in its format */
    uint32_t place;  /* input/output: binding index; activation: arena offset; weight:
                        offset in the weight section */
    uint16_t first, last; /* tasks writing it first / reading it last (NB_EXEOM_NONE) */
} nb_exeom_tensor;

/* A task descriptor as stored (64 bytes). */
typedef struct nb_exeom_task {
    uint16_t kernel;  /* kernel id (share/doc/exeom.md) */
    uint8_t unit;     /* 0 vector, 1 cube */
    uint8_t n_in, n_out, flags; /* flags bit 0: inserted by the compiler */
    uint16_t in[NB_EXEOM_MAX_IN], out[NB_EXEOM_MAX_OUT]; /* tensor indices */
    uint8_t params[32]; /* per kernel (share/doc/exeom.md) */
} nb_exeom_task;

typedef struct nb_exeom {
    uint16_t version, soc; /* soc: 0 Ascend035, 1 Ascend035A, 2 Ascend035B */
    uint32_t n_inputs, n_outputs, arena_bytes;
    uint32_t n_tensors, n_tasks;
    nb_exeom_tensor *t;
    nb_exeom_task *k;
    const uint8_t *weights; /* points into the buffer given to nb_exeom_parse */
    uint32_t weight_bytes;
} nb_exeom;

/* The kernel id of an op type (ONNX ops, and AscendQuant, AscendDequant, TransData), or 0
 * when the exeom has none for it yet. */
int nb_exeom_kernel_id(const char *op_type);
const char *nb_exeom_kernel_name(int id);

/* Writes path (through path.tmp and a rename): the lowering e of model m (the float form of
 * the compiler's input) with the quantized layers' data (int8 weights packed into their
 * FRACTAL layout, int32 bias, deq_scale, AscendQuant parameters). *bytes: the size written,
 * which equals e->exeom_bytes. soc: "Ascend035", "Ascend035A" or "Ascend035B". The output is
 * byte-identical for the same inputs. Errors: NB_ERR_UNSUPPORTED for a task the format has
 * no kernel or parameters for yet, or a CPU task; NB_ERR_GRAPH for a cube task without its
 * layer data; NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_exeom_write(const char *path, const nb_model *m, const nb_estimate *e,
                      const nb_npu_layer *layers, int n_layers, const char *soc,
                      int64_t *bytes, nb_status *st);

/* Parses and checks an exeom in buf: magic, version, soc, the section table against the
 * buffer, each section's CRC-32, every tensor index of every task, every weight and arena
 * placement against its section / the arena. The tensors and tasks are copied into x
 * (nb_exeom_free); x->weights points into buf. Errors: NB_ERR_FORMAT naming what is wrong,
 * NB_ERR_NOMEM. */
nb_err nb_exeom_parse(const uint8_t *buf, size_t len, nb_exeom *x, nb_status *st);
void nb_exeom_free(nb_exeom *x);

/* Writes NAME.dbg (share/proto/dbg.proto, protobuf): for every tensor and task of the exeom
 * at exeom_path (by index) its compiler name, the ONNX value or node it comes from, the ONNX
 * nodes a task covers (a Conv with a folded BatchNormalization: both), whether the compiler
 * inserted it; the lowering's rewrites; the exeom's size and CRC-32 to pair the two files.
 * Through path.tmp and a rename. Errors: NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_dbg_write(const char *path, const char *model_path, const nb_model *m,
                    const nb_estimate *e, const char *exeom_path, nb_status *st);

#ifdef __cplusplus
}
#endif
#endif
