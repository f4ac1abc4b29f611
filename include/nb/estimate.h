/* nanobench estimate: will the model fit and run on the Nano? The vendor's five items
 * (onnx_estimate.py: TOTAL_WEIGHT_SIZE, TOTAL_MEM_SIZE, TOTAL_EXEOM_SIZE, TOTAL_NET_OP_TYPE,
 * NOT_SUPPORT_OP_TYPE), computed from the compiler's own lowering (nb_npu_lower) and arena
 * plan (nb_plan_arena), so that estimate and compile agree by construction.
 */
#ifndef NB_ESTIMATE_H
#define NB_ESTIMATE_H

#include <stdbool.h>
#include <stdio.h>

#include "nb/atc.h"
#include "nb/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nb_op_count {
    char op[48];
    int count;
} nb_op_count;

/* One activation tensor placed by the arena plan (nb_estimate.arena_map): where it lives
 * and when, so that a tool can draw the plan as bars over task order x arena offset. */
typedef struct nb_arena_slot {
    int tensor;      /* index of the tensor in nb_estimate.g.t (g.t[tensor].name) */
    int64_t offset;  /* bytes from the start of the arena (a multiple of NB_EXEOM_ALIGN) */
    int64_t bytes;   /* the tensor's padded bytes in its format (g.t[tensor].bytes); the plan
                        reserves them rounded up to NB_EXEOM_ALIGN */
    int first, last; /* task indices into nb_estimate.g.k, inclusive: the task that writes it
                        first and the last one that reads it (a tensor no task reads: last =
                        first), the lifetime the planner used */
} nb_arena_slot;

typedef struct nb_estimate {
    int64_t weight_bytes;    /* TOTAL_WEIGHT_SIZE: quantized, padded, each 32-byte aligned */
    int64_t task_desc_bytes; /* task descriptors (NB_EXEOM_TASK_DESC_BYTES each) */
    int64_t io_bytes;        /* input and output buffers */
    nb_arena_plan arena;     /* activation arena: size, lower bound, greedy-by-size */
    int64_t mem_bytes;       /* TOTAL_MEM_SIZE = weights + task descriptors + io + arena */
    int64_t exeom_bytes;     /* TOTAL_EXEOM_SIZE: what the exeom writer writes */
    int64_t macs;
    int n_net, n_unsupported;
    nb_op_count *net;        /* TOTAL_NET_OP_TYPE: op types of the float model, by count */
    nb_op_count *unsupported; /* NOT_SUPPORT_OP_TYPE */
    nb_npu_graph g;          /* the lowered graph: tasks, tensors, rewrites, inserted ops */
    int64_t *arena_offset;   /* per tensor of g: its offset in the activation arena (-1: not
                                an arena tensor), as the plan placed it */
    int n_arena_map;
    nb_arena_slot *arena_map; /* every tensor of g placed in the arena, in tensor order */
    int arena_peak_task;     /* the first task (index into g.k) at which the bytes alive
                                (rounded up as the plan reserves them) reach
                                arena.lower_bound; -1 with no arena tensor */
    const char *model_path;  /* the model's path, the SoC: not owned */
    const char *soc_version;
    int n_notes;
    char **notes;            /* what the reader must know, e.g. a dynamic batch taken as 1 */
} nb_estimate;

/* Estimates a loaded, folded model. Errors: NB_ERR_NOMEM, NB_ERR_ARG (planner input). */
nb_err nb_estimate_model(const nb_model *m, const nb_op_table *ops, const nb_npu_opts *o,
                         nb_estimate *e, nb_status *st);
void nb_estimate_free(nb_estimate *e);
/* Adds a note (printf format) to the report, in the text and the JSON. False when out of
 * memory. */
bool nb_estimate_note(nb_estimate *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The report as text: the five items with human units, MACs, arena against its lower
 * bound, rewrites, inserted ops; per_layer adds one row per task. */
void nb_estimate_print(const nb_estimate *e, FILE *f, bool per_layer);
/* The same as JSON (one object): the items, "memory" (with "arena_peak_task"), "layers"
 * (one per task, in task order: the task indices below index it) and "arena_map": one
 * {name, offset, bytes, first_task, last_task} per arena slot (bytes; task indices).
 * Returns 0, -1 on a write error. */
int nb_estimate_json(const nb_estimate *e, FILE *f);

/* ---- the whole step (engine/estimate/estimate_file.c) ---- */
typedef struct nb_estimate_opts {
    const char *model;        /* the ONNX file: float, or Q/DQ (QAT) as atc compiles it */
    const char *input_shape;  /* "name:n,c,h,w;..." or NULL; a dynamic batch is taken as 1 */
    nb_npu_opts npu;          /* soc_version, weight_bits, input_fp16_nodes, output_fp32,
                                 cpu_nodes: as atc's flags */
    const char *out_nodes;    /* atc's --out_nodes cut ("node:index;..."), or NULL */
    void (*on_model)(void *user, const nb_model *m); /* the model estimated, or NULL */
    void *user;
} nb_estimate_opts;
typedef struct nb_estimate_result {
    nb_estimate e;
    nb_model *m;              /* the model estimated (read as atc reads it, folded) */
    bool qdq;                 /* a Q/DQ (QAT) model */
    char *batch_note;         /* the inputs whose dynamic batch was taken as 1, or NULL */
    double ms;                /* the step's wall time */
} nb_estimate_result;
/* estimate: the model loaded and folded, a dynamic batch taken as 1 (noted), a Q/DQ model's
 * pairs imported and --out_nodes's cut made as atc reads its input (nb_read_npu_input), the
 * op table (share/ops.tsv) loaded, then nb_estimate_model. Errors: the importer's, the
 * reader's, nb_estimate_model's prefixed with the path, NB_ERR_IO, NB_ERR_NOMEM. Free r with
 * nb_estimate_result_free in every case. */
nb_err nb_estimate_file(const nb_estimate_opts *o, nb_estimate_result *r, nb_status *st);
void nb_estimate_result_free(nb_estimate_result *r);

#ifdef __cplusplus
}
#endif
#endif
