/* nanobench simulated NPU: dump config and dump files (dump.c), for the ACL layer. */
#ifndef NB_SIM_DUMP_H
#define NB_SIM_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/sim.h"

typedef struct json_t json_t;

enum { SIM_DUMP_OUTPUT, SIM_DUMP_INPUT, SIM_DUMP_ALL };

typedef struct sim_dump_model {
    char *name;     /* model_name: the exeom's file name without extension */
    char **layers;  /* task names, ONNX nodes, or "task<k>"; none: every task */
    int n_layers;
} sim_dump_model;

typedef struct sim_dump_cfg {
    int enabled;
    char *path;
    int mode;
    int op_switch;
    int stats_only;
    sim_dump_model *models;
    int n_models;
} sim_dump_cfg;

/* Reads the "dump" object; 0, or -1 with why set (the config is left empty). */
int sim_dump_cfg_parse(const json_t *dump, sim_dump_cfg *c, char *why, size_t len);
void sim_dump_cfg_free(sim_dump_cfg *c);
/* NAME.dbg (unpacked), checked against the exeom's size and CRC-32; NULL with why. */
void *sim_dbg_read(const char *path, uint32_t exeom_bytes, uint32_t exeom_crc, char *why,
                   size_t len);
void sim_dbg_free(void *dbg);
const char *sim_dbg_tensor_onnx(const void *dbg, int t);
/* What tensor t holds of its ONNX value (atc --nb_input_scale): scale x v + offset */
void sim_dbg_tensor_scale(const void *dbg, int t, double *scale, double *offset);
/* Task k's covers from the dbg: the count; *node the i-th. */
int sim_dbg_task_covers(const void *dbg, int k, int i, const char **node);
/* Task k's name and op type from the dbg; 0, or -1 when it has none. */
int sim_dbg_task_names(const void *dbg, int k, const char **name, const char **op_type);
/* Is task k of model_name in the dump list? */
bool sim_dump_selects(const sim_dump_cfg *c, const char *model_name, const void *dbg, int k);
/* Why the dump list selects nothing or names layers model_name lacks ("" when fine): out. */
void sim_dump_check(const sim_dump_cfg *c, const char *model_name, const void *dbg,
                    int n_tasks, char *out, size_t len);
/* The dump folder of one execution: final = {dump_path}/{YYYYMMDDhhmmss}/0/{model_name}/
 * {model_id}/{iteration}; its parents are made and the folder itself as tmp = final.tmp.PID
 * (the execution's files go there; sim_dump_finish publishes or removes it); the killed
 * runs' temporaries were swept when the dump config was read. Returns 0, or -1 with errno. */
int sim_dump_dir(const sim_dump_cfg *c, const char *model_name, uint32_t model_id,
                 uint32_t iteration, char *tmp, char *final, size_t len);
/* Ends an execution's dump: ok publishes tmp as final (renamed whole); else tmp is removed
 * with the parents sim_dump_dir made that are left empty, up to the dump_path, so that a
 * failed dump leaves no folder under its final name. Returns 0, or -1 (why in why). */
int sim_dump_finish(const sim_dump_cfg *c, const char *tmp, const char *final, bool ok,
                    char *why, size_t len);
/* Writes one dump file of task k (its inputs and/or outputs as they are now). */
int sim_dump_task(const sim_dump_cfg *c, const char *dir, const char *model_name,
                  const nb_sim_model *m, const void *dbg, int k, bool inputs, bool outputs,
                  char *why, size_t len);

#endif
