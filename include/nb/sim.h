/* nanobench simulated NPU (engine/runtime_sim): loads a NAME.exeom (share/doc/exeom.md),
 * checks every task's operands against its kernel, executes the task list with the Nano's
 * arithmetic (share/doc/npu-numerics.md), counts cycles with the cycle model
 * (share/doc/cycle-model.md, parameters in share/npu-cycles.conf) and writes dumps
 * (share/proto/dump.proto). The ACL API (include/acl/acl.h) is built on this; tests and the
 * CLI use it directly for the per-task profile and the kernels.
 *
 * Data stays in its NPU format in the activation arena (NC1HWC0, FRACTAL_NZ, ND), fp16 for
 * float activations; model inputs and outputs are bound as caller buffers in their exeom
 * type and format (fp16 ND from atc).
 */
#ifndef NB_SIM_H
#define NB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/exeom.h"
#include "nb/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest activation arena, input or output the loader accepts (bytes): the Nano's
 * SRAM is far smaller; a file claiming more is refused rather than allocated. */
#define NB_SIM_MAX_BYTES (256u << 20)
/* The largest sum of all tensors' dims (the loader's per-dim offset tables). */
#define NB_SIM_MAX_DIMS (16u << 20)

/* ---- fp16 numerics of the vector unit (share/doc/npu-numerics.md) ---- */

/* x rounded to binary16, round to nearest even; overflow saturates to +-65504 (also for
 * infinite x); NaN stays NaN (0x7E00). */
uint16_t nb_sim_f16(double x);
/* binary16 bits -> value (exact). */
float nb_sim_f16_value(uint16_t h);
/* Builds the tables of the two functions above (nb_sim_load calls it; idempotent, not
 * thread-safe on first use). */
void nb_sim_numerics_init(void);
/* The vector unit's table functions (Tanh, Sigmoid): the function sampled at 512 points
 * over [-16, 16) (step 1/16), entries rounded to fp16; the fraction of x within its step is
 * truncated to 8 bits (1/4096), and T[i] + f (T[i+1] - T[i]) is computed in fp32 and rounded
 * to fp16; outside the range the end entries. x is an fp16 value. */
uint16_t nb_sim_table_tanh(uint16_t x);
uint16_t nb_sim_table_sigmoid(uint16_t x);
/* AscendQuant of one fp16 value: saturate(round_half_even(fp32(x * scale)) + offset) to
 * the signed range of bits (8 or 16); scale is 1 / scale_d as stored in the exeom. */
int32_t nb_sim_quant(uint16_t x, float scale, float offset, int bits);
/* AscendDequant of one int32 accumulator: fp16(fp32(fp32(acc) * deq_scale)), then the fused
 * activation (0 none, 1 Relu, 2 LeakyRelu with alpha: fp16(y * alpha) for y < 0).
 * deq_scale is the fp32 in the low 32 bits of the uint64 entry. */
uint16_t nb_sim_dequant(int32_t acc, float deq_scale, int act, float alpha);

/* ---- cycle model (share/doc/cycle-model.md) ---- */
typedef struct nb_cycle_params {
    double cube_ops_s8s8, cube_ops_s16s8, cube_ops_s8s4; /* ops (2 per MAC) per cycle */
    double vector_lanes;      /* fp16 elements per cycle of a simple vector op */
    double vector_table_cost; /* cycles per lane-group of a table op (Tanh, Sigmoid) */
    double vector_math_cost;  /* ... of Exp, Log, Pow, Div, Sqrt */
    double weight_bytes_per_cycle; /* weights from flash / SRAM into the cube */
    double act_bytes_per_cycle;    /* activations between the arena and the units */
    double task_overhead;     /* cycles per task (descriptor fetch, launch, sync) */
    double clock_mhz[2];      /* the two clocks the times are printed at (64, 200) */
    /* the MCU's CPU (a Cortex-M4F-class core: CpuOnnx tasks, float32) */
    double cpu_mac;           /* cycles per float32 multiply-accumulate read from memory */
    double cpu_elem;          /* cycles per element of a simple op (load, op, store) */
    double cpu_div;           /* ... of a divide or square root */
    double cpu_math;          /* ... of a libm function (exp, log, tanh, sin, pow, erf) */
    double cpu_io;            /* cycles per element converted at the boundary (fp16/int) */
    double cpu_task_overhead; /* cycles per CPU task (the call, its loops' setup) */
    double switch_cycles;     /* one hand-over between the NPU and the CPU */
} nb_cycle_params;

/* The defaults (the values of share/npu-cycles.conf). */
void nb_cycle_params_default(nb_cycle_params *p);
/* Reads "key = value" lines (# comments) into p (starting from the defaults). Errors:
 * NB_ERR_IO, NB_ERR_FORMAT naming the file and line (an unknown key, a value <= 0). */
nb_err nb_cycle_params_load(const char *path, nb_cycle_params *p, nb_status *st);
/* $NANOBENCH_SHARE/npu-cycles.conf, else the source tree's share/npu-cycles.conf. */
const char *nb_cycle_params_default_path(void);

/* ---- loaded model ---- */
typedef struct nb_sim_task_profile {
    uint64_t cycles;       /* max(compute, movement) + overhead */
    uint64_t compute;      /* cube or vector cycles */
    uint64_t movement;     /* data movement cycles */
    uint64_t macs;         /* multiply-accumulates (cube tasks, padded to the cube's tiles; a
                              CPU task's node, unpadded) */
    uint64_t bytes_in, bytes_out, weight_bytes;
    int unit;              /* 0 vector, 1 cube, 2 the MCU's CPU */
    uint64_t switch_cycles; /* a hand-over between the NPU and the CPU before this task (in
                               cycles already) */
} nb_sim_task_profile;

typedef struct nb_sim_model nb_sim_model;

/* Loads an exeom from buf (copied; len bytes) with every check of nb_exeom_parse, then each
 * task's operand count, dtypes, formats and logical shapes against its kernel (so that no
 * kernel can read or write outside a tensor), every tensor's bytes against its format's
 * size, the arena and bindings against NB_SIM_MAX_BYTES, the dims against NB_SIM_MAX_DIMS;
 * every activation read by a task written by an earlier one, every output by some task. Cycles per task come from
 * params (NULL: the defaults). Errors: NB_ERR_FORMAT (not an exeom: magic, size),
 * NB_ERR_DATA (a bad section, CRC, descriptor or task, named), NB_ERR_UNSUPPORTED (a kernel
 * or operand type the simulator lacks), NB_ERR_NOMEM. */
nb_err nb_sim_load(const uint8_t *buf, size_t len, const nb_cycle_params *params,
                   nb_sim_model **out, nb_status *st);
void nb_sim_free(nb_sim_model *m);

const nb_exeom *nb_sim_exeom(const nb_sim_model *m);
/* Task k's profile (k < number of tasks), and the total cycles of one execution: the last
 * one's (the tasks that ran: an If's branch not taken is skipped by the CPU), every task's
 * before any. */
const nb_sim_task_profile *nb_sim_profile(const nb_sim_model *m, int k);
uint64_t nb_sim_total_cycles(const nb_sim_model *m);
/* Whether task k ran in the last execution (false: a task of an If's branch not taken). */
bool nb_sim_task_ran(const nb_sim_model *m, int k);
/* fp16 results of task k clamped at +-65504 in the last execution (values IEEE rounds to
 * infinity, accumulations included: a ReduceSum whose running sum passed 65504 counts each
 * clamped add): the saturation the seed warns of, which the output values alone may hide
 * (a clamped sum divided into a mean). */
uint64_t nb_sim_task_saturations(const nb_sim_model *m, int k);
/* Task k's Log inputs of exactly 0 in the last execution (-inf, written as fp16's -65504):
 * counted apart from the saturations, which a scale can remove and these no scale can. */
uint64_t nb_sim_task_log_zeros(const nb_sim_model *m, int k);
/* Multiply-accumulates of one execution (cube tasks, unpadded). */
uint64_t nb_sim_total_macs(const nb_sim_model *m);
/* Index of the tensor bound as model input / output i. */
int nb_sim_input_tensor(const nb_sim_model *m, int i);
int nb_sim_output_tensor(const nb_sim_model *m, int i);

/* Called after each task (dumps): the task index and a reader of its operands' bytes. */
typedef void (*nb_sim_task_hook)(void *user, const nb_sim_model *m, int task, bool before);

/* Executes the task list once: inputs[i] holds model input i (its descriptor's bytes, in
 * its type and format), outputs[i] receives output i. hook (may be NULL) is called before
 * and after each task. Deterministic: the arena is cleared first. Errors: NB_ERR_NOMEM. */
nb_err nb_sim_execute(nb_sim_model *m, const void *const *inputs, void *const *outputs,
                      nb_sim_task_hook hook, void *user, nb_status *st);
/* The bytes of tensor t during execution (a hook may read them): arena, weight section or
 * bound buffer; NULL outside nb_sim_execute for activations and bindings. */
const uint8_t *nb_sim_tensor_data(const nb_sim_model *m, int t);

/* The same, writable: for a hook that feeds a task other values (--isolate). NULL as
 * nb_sim_tensor_data, and for weights. */
uint8_t *nb_sim_tensor_data_mut(nb_sim_model *m, int t);

/* Logical element i (row-major over the tensor's logical dims) of tensor t held at data,
 * as a double (fp16 widened; int4 sign-extended). For conversions at the boundary and for
 * dumps. */
double nb_sim_get(const nb_exeom_tensor *t, const uint8_t *data, int64_t i);
/* All of t's logical elements (nb_sim_numel(t) of them, row-major) into out: the bulk form
 * of nb_sim_get, one pass over the layout. */
void nb_sim_get_all(const nb_exeom_tensor *t, const uint8_t *data, double *out);
/* Stores v as logical element i of t at data (fp16 rounded to nearest even and saturated
 * at +-65504, integers saturated): the conversion at the ACL boundary. */
void nb_sim_set(const nb_exeom_tensor *t, uint8_t *data, int64_t i, double v);
/* Logical element count of t. */
int64_t nb_sim_numel(const nb_exeom_tensor *t);
/* Expected bytes of a tensor of its dtype, format and dims (-1 when the combination is not
 * one the Nano has, or overflows). */
int64_t nb_sim_tensor_bytes(const nb_exeom_tensor *t);
/* Names of aclDataType / aclFormat codes ("FLOAT16", "NC1HWC0"; "?" when unknown). */
const char *nb_sim_dtype_name(int acl_dtype);
const char *nb_sim_format_name(int acl_format);

/* The simulator model behind an ACL model id (acl.c; NULL when not loaded): the CLI's and
 * tests' way to the per-task profile of a model run through the ACL API. */
const nb_sim_model *nb_acl_sim_model(uint32_t modelId);
/* Why the NAME.dbg next to the exeom of model modelId was not used (a corrupt file, one
 * written for another exeom), or "" (none there, or used). */
const char *nb_acl_dbg_note(uint32_t modelId);
/* The path of a dump file in dir, as the vendor names them (facts/accucmp.md):
 * {op_type}.{op_name}.{task}.0.{timestamp_us, 16 digits}, characters outside [A-Za-z0-9_-]
 * as '_', op_type cut at 48 and op_name at 150 so the name with ".tmp.PID" stays within
 * NAME_MAX. Used by the simulator's dumps and by golden dumps alike. */
void nb_sim_dump_file_name(char *out, size_t len, const char *dir, const char *op_type,
                           const char *op_name, uint32_t task, uint64_t us);

/* The folder model modelId's last aclmdlExecute dumped into ("" when it dumped nothing;
 * share/doc: {dump_path}/{time}/0/{model}/{id}/{iteration}) and the number of dump files it
 * wrote there (*files). "" and 0 for an unknown id. */
const char *nb_acl_last_dump(uint32_t modelId, uint32_t *files);
/* The dump_path of the dump config in force ("" when no dump is on): an execution's dump
 * folder is written under it as {folder}.tmp.PID and renamed whole when complete. */
const char *nb_acl_dump_root(void);
/* What of the dump list selects nothing in model modelId (no entry for its name, layers no
 * task covers), or "". */
const char *nb_acl_dump_note(uint32_t modelId);
/* The ONNX value tensor t of model modelId holds (NAME.dbg), or "". */
const char *nb_acl_tensor_onnx(uint32_t modelId, int t);
/* What tensor t holds of that value (NAME.dbg, atc --nb_input_scale): scale x v + offset
 * (1, 0 when not scaled or without NAME.dbg). */
void nb_acl_tensor_scale(uint32_t modelId, int t, double *scale, double *offset);
/* Task k's covered ONNX nodes (NAME.dbg): their count, and node i's name ("" if none). */
int nb_acl_task_covers(uint32_t modelId, int k, int i, const char **node);
/* aclmdlExecute's run with a hook before and after each task (nb_sim_execute's); no
 * dump. For --isolate. Errors as aclmdlExecute. */
int nb_acl_execute_hooked(uint32_t modelId, const void *const *inputs, void *const *outputs,
                          nb_sim_task_hook hook, void *user);
/* Task k's name and op type from NAME.dbg ("task<k>" and the kernel's name without it). */
void nb_acl_task_info(uint32_t modelId, int k, const char **name, const char **op_type);

#ifdef __cplusplus
}
#endif
#endif
