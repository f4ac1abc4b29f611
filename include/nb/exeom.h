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


/* ---- --nb_input_scale (a nanobench extension of the compiler, not an ATC flag) ---- */

/* What the compiled model holds of each ONNX value v: scale x v + offset (1, 0: as the
 * model), after nb_input_scale_apply. */
typedef struct nb_scale_plan {
    int n_values;          /* value ids of the model's graph covered */
    double *scale, *offset;
    int n_notes;
    char **notes;          /* each change, one line ("Conv_2: AscendQuant scale / 2^-15 ...") */
    int n_reset;           /* cube ops whose output was left unscaled */
    int n_inputs;          /* the inputs scaled, as the spec gave them */
    char **inputs;
    double *input_scale;
} nb_scale_plan;

/* Applies spec ("name:2^-15;name2:..." or "name:0.000030517578125": each a power of two from
 * 2^-24 to 2^24, for a float input of m) to m (the float form of the compiler's input, loaded
 * and folded) and its quantized layers, before the lowering: the compiled model then holds
 * s x its input downstream of it and takes the scale back where the math allows
 * (engine/compile/input_scale.c, share/doc/exeom.md): each cube op's AscendQuant scale is
 * divided by the factor its input carries and its deq_scale multiplied by what its output
 * carries on; constants added to scaled tensors and Clip bounds are scaled (new constants
 * "<name>/nb_input_scale"); a Log's offset is absorbed by the next Add/Sub of a constant.
 * Every model output is as the model's. Errors: NB_ERR_ARG (E10001) for a bad spec or a name
 * that is no float input; NB_ERR_UNSUPPORTED naming the op where the scale cannot be taken
 * back (an op that is not linear with no cube op before it to leave unscaled, a model
 * output); NB_ERR_NOMEM. On error p is empty (m and ls may be partly changed only on
 * NB_ERR_NOMEM). The nodes of cpu_nodes (--cpu_nodes, or NULL) run on the MCU's CPU, which
 * takes each input's scale and offset back in float32: their outputs are the model's. */
nb_err nb_input_scale_apply(nb_model *m, nb_npu_layer *ls, int n_layers, const char *spec,
                            const char *cpu_nodes, nb_scale_plan *p, nb_status *st);
void nb_scale_plan_free(nb_scale_plan *p);
/* The scale the spec gave input (0 when none). */
double nb_scale_plan_input(const nb_scale_plan *p, const char *input);
/* The scale and offset the NPU holds value (a value name of g) with; true when not 1, 0. */
bool nb_scale_plan_get(const nb_scale_plan *p, const nb_graph *g, const char *value,
                       double *scale, double *offset);

/* A quantized layer whose calibrated input range (from its AscendQuant) is beyond fp16's
 * 65504: the fp16 ops that make its input clamp. */
typedef struct nb_scale_advice {
    const char *layer;   /* the layer (a string of the layers given) */
    double range;        /* its input's calibrated magnitude */
    const char *input;   /* the float input whose scale reaches it ("" if none does) */
    int power;           /* it reaches it as s^power (a Pow(x, 2) between: 2) */
    double suggest;      /* the largest power of two s with range x s^power <= 32752 */
    bool undoable;       /* nb_input_scale_apply would take that input's scale back */
} nb_scale_advice;
/* The layers of ls whose calibrated input range is beyond 65504, each with the input whose
 * scale reaches it with the highest power and the scale that brings it to 32752 (one binade
 * under 65504). *out NULL and *n 0 when none. Errors: NB_ERR_NOMEM. */
nb_err nb_input_scale_advise(const nb_model *m, const nb_npu_layer *ls, int n_layers,
                             nb_scale_advice **out, int *n, nb_status *st);

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
 * inserted it; the lowering's rewrites; the exeom's size and CRC-32 to pair the two files;
 * with scale (nb_input_scale_apply, or NULL), the scale and offset a float tensor holds its
 * ONNX value with. Through path.tmp and a rename. Errors: NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_dbg_write(const char *path, const char *model_path, const nb_model *m,
                    const nb_estimate *e, const char *exeom_path, const nb_scale_plan *scale,
                    nb_status *st);

/* ---- atc as an entry point (engine/compile/compile.c, issue 18) ---- */

typedef struct nb_compile_opts {
    const char *model;            /* the deploy model, Q/DQ model, or float model */
    const char *output;           /* NAME: writes NAME.exeom and NAME.dbg */
    const char *soc_version;      /* Ascend035, Ascend035A or Ascend035B */
    const char *input_fp16_nodes; /* "x;y": must name every float input */
    bool all_inputs_fp16;         /* every float input fp16, as input_fp16_nodes naming them
                                     all would (names as data: no list to split); the list
                                     is then not read */
    bool output_fp16;             /* --output_type=FP16 given (required with float outputs) */
    const char *input_shape;      /* or NULL */
    const char *out_nodes;        /* "node:0;..." to cut the graph, or NULL */
    const char *input_scale;      /* --nb_input_scale "x:2^-12", or NULL */
    const char *cpu_nodes;        /* --cpu_nodes "a;b": placed on the MCU's CPU (float), or
                                     NULL (nb_npu_opts.cpu_nodes) */
    const char *work_dir;         /* an existing private folder for the Q/DQ conversion's two
                                     files (removed again) */
    nb_warn_fn warn;              /* the fp16-range advice, or NULL */
    void *user;
} nb_compile_opts;

typedef struct nb_compile_result {
    char exeom[4200], dbg[4200]; /* written, as a pair (nb_publish_pair) */
    int form;                    /* the input: 0 float, 1 deploy model, 2 Q/DQ */
    int n_quantized;             /* quantized cube ops in the (cut) main graph */
    int64_t exeom_bytes;
    double ms;                   /* the compile's wall time */
    nb_estimate est;             /* the lowering: tasks, tensors, passes (est.g.rewrites), the
                                    five sizes */
    nb_scale_plan plan;          /* --nb_input_scale's changes (plan.notes) */
} nb_compile_result;

/* The vendor's ATC for the Nano, the whole step: the input read (nb_read_npu_input: a
 * deploy model, Q/DQ pairs, or a float model, through the importer's gate), cut at
 * out_nodes, folded; checked (input_shape names inputs, no input dim of 0, every float
 * input in input_fp16_nodes, output_fp16 with float outputs, every cube op quantized, an
 * int16 layer not an RNN: E-coded messages as ATC's, facts/compile.md); the fp16-range
 * advice (nb_input_scale_advise) to o->warn; input_scale applied; lowered (the estimate's
 * lowering: every op the NPU cannot run listed in one error); NAME.exeom and NAME.dbg
 * written under NAME.*.tmp.PID and renamed as a pair. Stale temporaries of killed runs
 * to NAME are removed first. Errors: NB_ERR_ARG, NB_ERR_UNSUPPORTED (ops the NPU cannot
 * run), those of the readers, the lowering and the writers. nb_compile_result_free frees
 * r (also after an error). */
nb_err nb_compile(const nb_compile_opts *o, nb_compile_result *r, nb_status *st);
void nb_compile_result_free(nb_compile_result *r);
/* The result as `atc --json` prints it (and the Python module's compile returns it): exeom,
 * dbg, input ("float", "deploy model" or "Q/DQ model"), quantized_layers, tasks, cube_tasks,
 * cpu_tasks, tensors, the three sizes in bytes (TOTAL_WEIGHT_SIZE, TOTAL_MEM_SIZE,
 * TOTAL_EXEOM_SIZE: the file written), ms, nb_input_scale_changes. A new object
 * (engine/compile/compile_json.c). */
struct json_t *nb_compile_result_json(const nb_compile_result *r);

#ifdef __cplusplus
}
#endif
#endif
