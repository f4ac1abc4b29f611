/* nanobench run: executes a NAME.exeom on the simulated NPU through the ACL API (issue 6),
 * as an app on the Nano would: init, device, context, stream, load, datasets, execute.
 * Inputs come from .npy / .bin files and are converted to the model's input type and layout
 * (fp16 ND from atc) at the ACL boundary; outputs are written as float32 .npy. --profile
 * prints the cycle model's per-task table and the totals at 64 and 200 MHz. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "acl/acl.h"
#include "cli.h"
#include "nb/run.h"
#include "nb/sim.h"

#define MAX_IO 64

static void help(void)
{
    printf("usage: nanobench run NAME.exeom [--input NAME=FILE.npy|FILE.bin|random[:SEED] ...]\n"
           "                     [--output-dir DIR] [--dump acl.json] [--profile] [--json]\n"
           "Runs a compiled model on nanobench's simulated Nano NPU through the ACL API\n"
           "(include/acl/acl.h). Each input is a .npy (any numeric dtype, the input's shape)\n"
           "or a raw float32 .bin of the input's shape, converted to the model's input type\n"
           "(fp16); random[:SEED] gives infer's uniform [-1,1) values of that seed for a float\n"
           "input. NAME is the ONNX input name (from NAME.dbg next to the exeom) or its index;\n"
           "with one input NAME= may be left out; no --input at all runs zeros. Outputs are\n"
           "written to DIR (default .) as <output name>.npy in float32. --dump takes the\n"
           "seed's acl.json with a \"dump\" section (dump files per task, share/proto/\n"
           "dump.proto). --profile prints every task's cycles (share/doc/cycle-model.md).\n"
           "--json prints one JSON object on stdout instead of the text: outputs (name, file,\n"
           "shape, dtype, npu_dtype, min, max, mean, first 8 values), cycles, ms_64mhz,\n"
           "ms_200mhz, every task's profile, the fp16 saturations, and the dump folder and\n"
           "file count with --dump; warnings stay on stderr.\n");
}

/* nb_run's loader: input k's FILE (--input) read as model input io: a .npy as it is (the
 * engine checks its shape), a raw float32 .bin or random[:SEED] in io's shape. */
static nb_err load_input(void *user, int k, const nb_run_io *io, nb_tensor **value, nb_status *st)
{
    const char *file = ((const nb_run_input *)user)[k].label;
    size_t fl = strlen(file);
    uint32_t seed;
    int r = cli_random_seed(file, file, &seed);
    if (r > 0)
        return nb_fail(st, NB_ERR_ARG, "%s: not a file, and not random[:SEED]", file);
    if (r == 0) { /* the values infer's random:SEED gives a float32 input of this shape */
        if (nb_tensor_new(NB_FLOAT, io->rank, io->dims, value, st))
            return st->code;
        nb_tensor_fill_uniform(*value, seed, -1.0, 1.0);
        return NB_OK;
    }
    if (fl > 4 && !strcmp(file + fl - 4, ".npy"))
        return nb_npy_read(file, value, st);
    return nb_bin_read(file, NB_FLOAT, io->rank, io->dims, value, st);
}

static void warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "nanobench: warning: %s\n", msg);
}

/* Ctrl-C during the execution: the dump folder not yet published goes too */
static void on_progress(void *user, const char *pass, int done, int total)
{
    (void)user, (void)pass, (void)total;
    if (!done && nb_acl_dump_root()[0])
        cli_cleanup_add_sweep(nb_acl_dump_root());
    else
        cli_cleanup_clear();
}

/* --profile: the cycle model's line and every task's row (printed unless quiet), each task
 * recorded as a layer of the run */
static void profile_tasks(const nb_run_result *r, bool quiet)
{
    if (!quiet) {
        printf("cycles per task = %g + max(compute, movement) on the NPU, %g + compute on the "
               "MCU's CPU, + %g after a switch between them (share/doc/cycle-model.md)\n",
               r->task_overhead, r->cpu_task_overhead, r->switch_cost);
        printf("%5s  %-44s %-16s %-6s %10s %10s %10s %10s %8s\n", "task", "name", "op", "unit",
               "cycles", "compute", "movement", "MACs", "fp16 sat");
    }
    for (int k = 0; k < r->n_tasks; k++) {
        const nb_run_task *p = &r->tasks[k];
        char nm_safe[45];
        snprintf(nm_safe, sizeof nm_safe, "%s", p->name);
        if (!quiet)
            printf("%5d  %-44.44s %-16.16s %-6s %10llu %10llu %10llu %10llu %8llu%s\n", k,
                   cli_plain(nm_safe), p->op_type,
                   p->unit == 2 ? "cpu" : p->unit == 1 ? "cube" : "vector",
                   (unsigned long long)p->cycles,
                   (unsigned long long)p->compute, (unsigned long long)p->movement,
                   (unsigned long long)p->macs, (unsigned long long)p->saturations,
                   p->skipped ? "  (its If's branch not taken: skipped)"
                   : p->switch_cycles ? "  (after a switch)" : "");
        double vals2[3] = {(double)p->cycles, (double)p->macs, (double)p->saturations};
        const char *names2[3] = {"cycles", "macs", "fp16_saturations"};
        rec_layer(p->name, p->op_type, 3, names2, vals2);
    }
}

int cmd_run(int argc, char **argv)
{
    const char *exeom = NULL, *outdir = ".", *dump = NULL;
    const char *inputs[MAX_IO];
    int n_inputs = 0;
    bool profile = false, json = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        if ((r = cli_opt(argc, argv, &i, "--input", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--input needs NAME=FILE");
            if (n_inputs == MAX_IO)
                return cli_usage_error("run", "more than %d --input", MAX_IO);
            inputs[n_inputs++] = v;
        } else if ((r = cli_opt(argc, argv, &i, "--output-dir", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--output-dir needs a folder");
            outdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--dump", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--dump needs an acl.json");
            dump = v;
        } else if (!strcmp(argv[i], "--profile")) {
            profile = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if ((r = cli_model_arg("run", argv[i], &exeom))) {
            return r;
        }
    }
    if (!exeom)
        return cli_usage_error("run", "no NAME.exeom given");
    /* --input [NAME=]FILE: the name is the ONNX input's or its index */
    static nb_run_input given[MAX_IO];
    static char names[MAX_IO][256];
    for (int a = 0; a < n_inputs; a++) {
        const char *eq = strchr(inputs[a], '=');
        given[a].name = NULL;
        given[a].label = eq ? eq + 1 : inputs[a];
        given[a].value = NULL;
        if (eq) {
            snprintf(names[a], sizeof names[a], "%.*s", (int)(eq - inputs[a]), inputs[a]);
            given[a].name = names[a];
        }
        uint32_t seed;
        int r = cli_random_seed(given[a].label, given[a].label, &seed);
        if (r > 0)
            return r;
    }
    int rc = rec_start("run", exeom, argc, argv);
    if (rc)
        return rc;
    rec_param("output_dir", "%s", outdir);
    if (dump)
        rec_param("dump", "%s", dump);
    const char *lvl = getenv("NANOBENCH_NDRV_LOG");
    if (!lvl || !*lvl)
        uapi_npu_dlog_setlevel(0x10, 4, 0); /* errors come back as one line below */
    nb_run_opts o = {.exeom = exeom, .dump_config = dump, .n_inputs = n_inputs,
                     .inputs = given, .load = load_input, .load_user = given, .warn = warn,
                     .progress = on_progress};
    nb_run_result r;
    nb_status st = {0};
    json_t *jo = NULL;
    if (nb_run_exeom(&o, &r, &st)) {
        cli_cleanup_clear();
        rc = st.code == NB_ERR_ARG && strstr(st.msg, "--input ") == st.msg
                 ? cli_usage_error("run", "%s", st.msg)
                 : cli_error(&st);
        goto done;
    }
    for (int i = 0; i < r.n_inputs; i++)
        if (r.input_labels[i])
            rec_param(r.inputs[i].name[0] ? r.inputs[i].name : "input", "%s", r.input_labels[i]);
    cli_cleanup_add_sweep(outdir); /* Ctrl-C: the writers' NAME.npy.tmp.PID go */
    nb_err we = nb_run_write_outputs(&r, outdir, &st);
    cli_cleanup_clear();
    if (we) {
        rc = cli_error(&st);
        goto done;
    }
    jo = json ? nb_run_result_json(&o, &r) : NULL; /* with where each output was written */
    for (int i = 0; i < r.n_outputs; i++) {
        const nb_run_output *ro = &r.outputs[i];
        const nb_tensor *y = ro->value;
        rec_artifact("output", ro->file);
        if (jo)
            continue;
        char shape[128], shown[256];
        nb_shape_str(y->rank, y->dims, 'x', shape, sizeof shape);
        if (ro->io.name[0])
            snprintf(shown, sizeof shown, "%s", ro->io.name);
        else
            snprintf(shown, sizeof shown, "output%d", i);
        printf("output %s [%s]: min %.6g max %.6g mean %.6g, first:", cli_plain(shown), shape,
               ro->min, ro->max, ro->mean);
        for (int64_t j = 0; j < y->numel && j < 6; j++)
            printf(" %.6g", ((const float *)y->data)[j]);
        printf("\nwrote %s\n", ro->file);
    }
    if (dump) {
        if (r.dump_files) {
            char shown_dir[2048];
            snprintf(shown_dir, sizeof shown_dir, "%s", r.dump_dir);
            if (!jo)
                printf("dumped %u file(s) in %s\n", r.dump_files, cli_plain(shown_dir));
            rec_artifact("dump", r.dump_dir);
        }
    }
    rec_metric("fp16_saturations", (double)r.saturations, "");
    rec_metric("log_of_zero", (double)r.log_zeros, "");
    if (profile)
        profile_tasks(&r, jo != NULL);
    if (!jo)
        printf("NPU: %llu cycles = %.3f ms at %.0f MHz, %.3f ms at %.0f MHz; %llu MACs; %d tasks "
               "(host %.1f ms)\n", (unsigned long long)r.cycles, r.ms[0], r.clock_mhz[0], r.ms[1],
               r.clock_mhz[1], (unsigned long long)r.macs, r.n_tasks, r.host_ms);
    if (!jo && r.cpu_cycles)
        printf("  of which the NPU's tasks %llu cycles, the MCU's CPU %llu, %d switch%s "
               "between them %llu\n", (unsigned long long)r.npu_cycles,
               (unsigned long long)r.cpu_cycles, r.switches, r.switches == 1 ? "" : "es",
               (unsigned long long)r.switch_cycles);
    rec_metric("cycles", (double)r.cycles, "cycles");
    if (r.cpu_cycles) {
        rec_metric("cpu_cycles", (double)r.cpu_cycles, "cycles");
        rec_metric("npu_cpu_switches", r.switches, "");
    }
    rec_metric("npu_ms_64mhz", r.ms[0], "ms");
    rec_metric("npu_ms_200mhz", r.ms[1], "ms");
    rec_metric("host_ms", r.host_ms, "ms");
    if (jo) {
        rc = cli_json_out("run", jo);
        jo = NULL;
    }
done:
    json_decref(jo);
    nb_run_result_free(&r);
    return rc;
}
