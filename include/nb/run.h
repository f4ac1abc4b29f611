/* nanobench run: one execution of a NAME.exeom on the simulated Nano NPU, through the ACL
 * API as an app on the chip calls it (init, device, context, stream, load, datasets,
 * execute), with its outputs in float32, the cycle model's per-task profile, the fp16
 * saturations and the dump folder. The engine behind `nanobench run` and the Python
 * module's run(); it prints nothing and exits never (engine/runtime_sim/run.c). */
#ifndef NB_RUN_H
#define NB_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "nb/status.h"
#include "nb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input or output of the exeom, as it declares it. */
typedef struct nb_run_io {
    int index;             /* the ACL dataset index */
    char *name;            /* the ONNX value name from NAME.dbg (any length), or "" without
                              it; owned by the result (nb_run_result_free) */
    int rank;              /* 0..6 */
    int64_t dims[6];       /* the logical shape (NCHW for 4-D) */
    const char *npu_dtype; /* the aclDataType name of the NPU tensor: "FLOAT16", "INT8" */
} nb_run_io;

/* One --input: which model input it feeds and the values, or how to get them. */
typedef struct nb_run_input {
    const char *name;  /* the ONNX input name or its index as text ("0"); NULL: the model's
                          only input (an error when it has several) */
    const char *label; /* shown in errors (the file it came from); NULL: the name */
    const nb_tensor *value; /* any numeric dtype, exactly the input's shape; NULL: the loader
                               gives it */
} nb_run_input;

/* Gives input k's values for model input io (a file read with io's shape, say): *value is
 * owned by the engine afterwards. Errors in st. */
typedef nb_err (*nb_run_load_fn)(void *user, int k, const nb_run_io *io, nb_tensor **value,
                                 nb_status *st);

typedef struct nb_run_opts {
    const char *exeom;       /* NAME.exeom; NAME.dbg next to it names inputs and tasks */
    const char *dump_config; /* the seed's acl.json with a "dump" section, or NULL */
    int n_inputs;            /* model inputs not given run on zeros */
    const nb_run_input *inputs;
    nb_run_load_fn load;     /* for inputs whose value is NULL */
    void *load_user;
    nb_warn_fn warn;         /* NAME.dbg not used, a dump list that selects nothing, fp16
                                saturation: one line each */
    nb_progress_fn progress; /* ("execute", 0, 1) just before aclmdlExecute, (.., 1, 1)
                                after: where a front end arms its Ctrl-C sweep of
                                nb_acl_dump_root() */
    void *user;              /* for warn and progress */
} nb_run_opts;

typedef struct nb_run_output {
    nb_run_io io;
    nb_tensor *value; /* float32, io's shape */
    double min, max, mean; /* over value (0 when it is empty) */
    char file[1400];  /* where nb_run_write_outputs wrote it, or "" */
} nb_run_output;

typedef struct nb_run_task {
    char name[1024];  /* from NAME.dbg, else "task<k>" */
    char op_type[64]; /* the kernel's op */
    uint64_t cycles, compute, movement, macs, saturations;
    uint64_t log_zeros; /* a Log's inputs of 0: -inf, written as -65504 (not saturations) */
    int unit;           /* 0 vector, 1 cube, 2 the MCU's CPU */
    bool skipped;       /* a task of an If's branch not taken: it did not run (cycles 0) */
    uint64_t switch_cycles; /* a hand-over between the NPU and the CPU before it (in cycles) */
} nb_run_task;

typedef struct nb_run_result {
    int n_inputs;
    nb_run_io *inputs;
    const char **input_labels; /* per model input: the label of what fed it, or NULL (zeros) */
    int n_outputs;
    nb_run_output *outputs;
    int n_tasks;
    nb_run_task *tasks;
    uint64_t cycles, macs; /* the cycle model's totals (share/doc/cycle-model.md) */
    uint64_t npu_cycles, cpu_cycles, switch_cycles; /* cycles split: the NPU's tasks, the
                                                       CPU's, the hand-overs (in both) */
    int switches;          /* hand-overs between the NPU and the CPU */
    double clock_mhz[2];   /* the two clocks the cycle model quotes (64 and 200 MHz) */
    double task_overhead;  /* cycles per task in the model */
    double cpu_task_overhead, switch_cost; /* a CPU task's, a switch's (the cycle model) */
    double ms[2];          /* cycles at clock_mhz[0] and [1], in ms */
    double host_ms;        /* the simulator's wall time of the execution */
    uint64_t saturations;  /* fp16 results clamped at +-65504, all tasks */
    uint64_t log_zeros;    /* a Log's inputs of 0, all tasks (the log of 0: -inf) */
    int saturated_tasks;
    char dump_dir[2048];   /* the published dump folder, or "" */
    uint32_t dump_files;
} nb_run_result;

/* Runs opts->exeom once on the simulated NPU. Inputs are converted at the ACL boundary to
 * the model's input type and layout (fp16 ND from atc); each given value must have the
 * input's exact shape ("LABEL: shape [..], the model's input is [..]", NB_ERR_ARG), names
 * must exist and be given once. ACL errors come back as "WHAT: message (ACL error N)", with
 * NB_ERR_NOMEM/NB_ERR_INTERNAL for the resource and internal codes (2xxxxx, 5xxxxx) and
 * NB_ERR_ARG or NB_ERR_FORMAT for the rest. r is zeroed first; free it with
 * nb_run_result_free in every case. */
nb_err nb_run_exeom(const nb_run_opts *opts, nb_run_result *r, nb_status *st);
void nb_run_result_free(nb_run_result *r);
/* Writes each output of r as dir/NAME.npy (float32): NAME its name made safe for a file
 * (nb_safe_name; "output<i>" when it has none; "_2", "_3", ... the first free, when two clean
 * up alike, as infer names its files), each
 * atomically (NAME.npy.tmp.PID renamed), all or none (on an error the ones written are
 * removed); the paths into r->outputs[i].file. dir is made when missing. Errors: NB_ERR_IO
 * naming the folder or the file. */
nb_err nb_run_write_outputs(nb_run_result *r, const char *dir, nb_status *st);
/* The run as `run --json` prints it (engine/runtime_sim/run_json.c): exeom, outputs (name --
 * "output<i>" for an unnamed one --, shape, dtype FLOAT, npu_dtype, min, max, mean, the first
 * 8 values; file, where nb_run_write_outputs wrote it), dump ({folder, files} when o->dump_config
 * is set, else null), cycles, ms_64mhz, ms_200mhz, macs, the NPU / CPU / switch split,
 * host_ms, saturation ({total, tasks: [{index, name, op_type, count}]}), log_of_zero and
 * tasks (each task's cycles, compute, movement, MACs, unit "vector", "cube" or "cpu",
 * switch_cycles, skipped, saturations, log_zeros). NaN is null. A new object. */
struct json_t *nb_run_result_json(const nb_run_opts *o, const nb_run_result *r);

#ifdef __cplusplus
}
#endif
#endif
