/* nanobench bring-up: compile (nb_compile) and run on the simulated NPU (nb_run_exeom),
 * recorded as `atc` and `run` record them; inputs are given by name (or, for a name the
 * exeom's NAME.dbg cannot hold whole, by index), never as NAME=FILE text. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "bu.h"
#include "nb/exeom.h"
#include "nb/run.h"

typedef struct atc_ctx {
    step *s;
    bu *b;
    json_t *warn;
} atc_ctx;

static void atc_warn(void *user, const char *msg)
{
    atc_ctx *c = user;
    bu_on_warn(c->s, msg);
    json_array_append_new(c->warn, nb_json_string(msg));
}

static void atc_args(bu *b, step *s, const char *output, const char *scale)
{
    const char *a[] = {"atc", "--mode=30", "--framework=5"};
    for (int i = 0; i < 3; i++)
        bu_arg(s, a[i]);
    /* the default (every float input fp16, taken by name from the model) as the flag that
       gives it, so that the recorded command reproduces the exeom (a record, never parsed) */
    char *all = NULL;
    size_t len = 0;
    FILE *m = b->fp16 ? NULL : open_memstream(&all, &len);
    for (int i = 0; m && i < b->n_in; i++)
        if (b->in_dtype[i] == NB_FLOAT || b->in_dtype[i] == NB_FLOAT16)
            fprintf(m, "%s%s", ftell(m) ? ";" : "", b->in_name[i]);
    if (m)
        fclose(m);
    const char *f[][2] = {{"--soc_version", b->soc ? b->soc : "Ascend035A"},
                          {"--model", b->deploy}, {"--output", output},
                          {"--input_fp16_nodes", b->fp16 ? b->fp16 : all && *all ? all : NULL},
                          {"--output_type", b->otype ? b->otype : "FP16"},
                          {"--input_shape", b->shape}, {"--out_nodes", b->out_nodes},
                          {"--cpu_nodes", b->cpu_nodes}, {"--nb_input_scale", scale}};
    for (int i = 0; i < 9; i++)
        if (f[i][1]) {
            bu_arg(s, f[i][0]);
            bu_arg(s, f[i][1]);
        }
    bu_param(s, "model", b->deploy);
    bu_param(s, "input_shape", b->shape);
    bu_param(s, "soc_version", b->soc ? b->soc : "Ascend035A");
    bu_param(s, "nb_input_scale", scale);
    bu_param(s, "cpu_nodes", b->cpu_nodes);
    free(all);
}

/* atc's own checks of what bringup passes through (its E-codes) */
static nb_err atc_check(bu *b)
{
    const char *soc = b->soc ? b->soc : "Ascend035A";
    if (strcmp(soc, "Ascend035") && strcmp(soc, "Ascend035A") && strcmp(soc, "Ascend035B"))
        return nb_fail(b->st, NB_ERR_ARG, "E10055: Option soc_version [%s] and mode [30] are "
                       "invalid together: mode 30 goes with Ascend035, Ascend035A or "
                       "Ascend035B, and they with mode 30", soc);
    if (b->otype && strcmp(b->otype, "FP16"))
        return nb_fail(b->st, NB_ERR_ARG, "E10001: Value [%s] for parameter [--output_type] is "
                       "invalid: the Nano's float outputs are FP16", b->otype);
    if (b->out_nodes && !*b->out_nodes)
        return nb_fail(b->st, NB_ERR_ARG, "E10004: Value for parameter [--out_nodes] is empty");
    return NB_OK;
}

nb_err bu_compile(bu *b, const char *output, const char *scale, int64_t parent,
                  const char *logname, int64_t *id, json_t **warn)
{
    step s;
    nb_err e = bu_step_begin(b, &s, "compile", b->deploy, parent, logname);
    if (e)
        return e;
    atc_args(b, &s, output, scale);
    atc_ctx c = {&s, b, json_array()};
    json_t *jo = NULL;
    char work[4200];
    const char *tmpbase = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/nanobench-atc.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!(e = atc_check(b)) && !mkdtemp(work))
        e = nb_fail(b->st, NB_ERR_IO, "%s: cannot make a scratch folder: %s", work,
                    strerror(errno));
    if (!e) {
        nb_compile_opts o = {.model = b->deploy, .output = output,
                             .soc_version = b->soc ? b->soc : "Ascend035A",
                             .input_fp16_nodes = b->fp16, .all_inputs_fp16 = !b->fp16,
                             .output_fp16 = true, .input_shape = b->shape,
                             .out_nodes = b->out_nodes, .input_scale = scale,
                             .cpu_nodes = b->cpu_nodes, .work_dir = work, .warn = atc_warn,
                             .user = &c};
        nb_compile_result r;
        e = nb_compile(&o, &r, b->st);
        rmdir(work);
        if (!e) {
            bu_metric(&s, "exeom_bytes", (double)r.exeom_bytes, "B");
            bu_metric(&s, "compile_ms", r.ms, "ms");
            bu_artifact(&s, "exeom", r.exeom);
            bu_artifact(&s, "dbg", r.dbg);
            jo = nb_compile_result_json(&r);
        }
        nb_compile_result_free(&r);
    }
    e = bu_step_end(&s, e, jo);
    json_decref(jo);
    *id = s.id;
    if (warn && !e)
        *warn = c.warn;
    else
        json_decref(c.warn);
    return e;
}

/* ---- run ---- */

typedef struct run_ctx {
    step *s;
    const bu *b;
    int k;
} run_ctx;

static void run_warn(void *user, const char *msg) { bu_on_warn(((run_ctx *)user)->s, msg); }

/* input a's file (evaluation input k's) read in the model input's shape */
static nb_err load_input(void *user, int a, const nb_run_io *io, nb_tensor **value,
                         nb_status *st)
{
    run_ctx *c = user;
    const char *file = c->b->eval[c->k * c->b->n_in + a];
    size_t fl = strlen(file);
    if (fl > 4 && !strcmp(file + fl - 4, ".npy"))
        return nb_npy_read(file, value, st);
    return nb_bin_read(file, NB_FLOAT, io->rank, io->dims, value, st);
}

static void run_record(step *s, const nb_run_result *r, const char *dump)
{
    for (int i = 0; i < r->n_inputs; i++)
        if (r->input_labels[i])
            bu_param(s, r->inputs[i].name[0] ? r->inputs[i].name : "input", r->input_labels[i]);
    for (int i = 0; i < r->n_outputs; i++)
        bu_artifact(s, "output", r->outputs[i].file);
    if (dump && r->dump_files)
        bu_artifact(s, "dump", r->dump_dir);
    bu_metric(s, "fp16_saturations", (double)r->saturations, "");
    bu_metric(s, "log_of_zero", (double)r->log_zeros, "");
    bu_metric(s, "cycles", (double)r->cycles, "cycles");
    if (r->cpu_cycles) {
        bu_metric(s, "cpu_cycles", (double)r->cpu_cycles, "cycles");
        bu_metric(s, "npu_cpu_switches", r->switches, "");
    }
    bu_metric(s, "npu_ms_64mhz", r->ms[0], "ms");
    bu_metric(s, "npu_ms_200mhz", r->ms[1], "ms");
    bu_metric(s, "host_ms", r->host_ms, "ms");
}

static void run_args(const bu *b, step *s, const char *exeom, int k, const char *out_dir,
                     const char *dump_cfg)
{
    bu_arg(s, "run");
    bu_arg(s, exeom);
    bu_input_args(b, s, k, NULL);
    bu_arg(s, "--output-dir");
    bu_arg(s, out_dir);
    if (dump_cfg) {
        bu_arg(s, "--dump");
        bu_arg(s, dump_cfg);
    }
    bu_arg(s, "--json");
    bu_param(s, "output_dir", out_dir);
    bu_param(s, "dump", dump_cfg);
}

nb_err bu_run(bu *b, const char *exeom, int k, const char *out_dir, const char *dump_cfg,
              int64_t parent, const char *logname, json_t **out, int64_t *id)
{
    step s;
    *out = NULL;
    nb_err e = bu_step_begin(b, &s, "run", exeom, parent, logname);
    if (e)
        return e;
    run_args(b, &s, exeom, k, out_dir, dump_cfg);
    nb_run_input in[MAX_IN];
    char idx[MAX_IN][16];
    for (int i = 0; i < b->n_in; i++) {
        /* by name; a name longer than NAME.dbg's copy of it, by its index */
        snprintf(idx[i], sizeof idx[i], "%d", b->in_graph[i]);
        in[i] = (nb_run_input){.name = strlen(b->in_name[i]) < 4000 ? b->in_name[i] : idx[i],
                               .label = b->eval[k * b->n_in + i]};
    }
    const char *lvl = getenv("NANOBENCH_NDRV_LOG");
    if (!lvl || !*lvl)
        uapi_npu_dlog_setlevel(0x10, 4, 0);
    run_ctx c = {&s, b, k};
    nb_run_opts o = {.exeom = exeom, .dump_config = dump_cfg, .n_inputs = b->n_in,
                     .inputs = in, .load = load_input, .load_user = &c, .warn = run_warn,
                     .user = &c};
    nb_run_result r;
    e = nb_run_exeom(&o, &r, b->st);
    if (!e)
        e = nb_run_write_outputs(&r, out_dir, b->st);
    if (!e) {
        run_record(&s, &r, dump_cfg);
        *out = nb_run_result_json(&o, &r);
    }
    nb_run_result_free(&r);
    e = bu_step_end(&s, e, *out);
    *id = s.id;
    if (e) {
        json_decref(*out);
        *out = NULL;
    }
    return e;
}
