/* nanobench bringup: a model from ONNX to a verdict in one command.
 *
 * The flags parsed into nb_bringup's options (include/nb/bringup.h: the pipeline runs in
 * this process, every name and path as data), the bringup's own run recorded (kind
 * 'bringup', its steps the engine's children of it), a progress line per step on stderr,
 * the summary printed (text or --json). Ctrl-C sets the engine's cancel flag: the running
 * step stops at its next batch or task, removing its partial files. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "nb/bringup.h"
#include "nb/report.h"

static void help(void)
{
    printf("usage: nanobench bringup MODEL.onnx --data_dir \"dir_x;dir_y\" [--input_shape S]\n"
           "           [--data_types T] [--calibration_config CFG | --batch_num N] [--algo A]\n"
           "           [--eval_dir \"e_x;e_y\"] [--eval_count K] [--out DIR]\n"
           "           [--soc_version V] [--input_fp16_nodes \"x;y\"] [--output_type FP16]\n"
           "           [--out_nodes \"node:0\"] [--nb_input_scale \"x:2^-12\"]\n"
           "           [--cpu_nodes \"a;b\" | --auto_place]\n"
           "           [--threshold cos=0.99,...]\n"
           "           [--target_sqnr DB [--target_outputs \"a;b\"] [--search_max_cycles N]\n"
           "            [--search_baseline]]\n"
           "           [--fail-under-cosine X] [--json]\n"
           "Brings a model up on the Nano in one command: estimate -> calibrate -> atc ->\n"
           "run on the simulated NPU (K evaluation inputs) -> infer, the float reference (the\n"
           "same inputs) -> compare every layer (the first input). Each step runs in this\n"
           "process (nb_bringup), recorded as the CLI's own command would be, a child of\n"
           "this bringup's run (nanobench history show RUN).\n"
           "Prints a one-screen summary: the five estimate items, the calibration algorithm\n"
           "and its 3 worst layers, the exeom size, NPU cycles and ms at 64/200 MHz, fp16\n"
           "saturation (and its fix, tried: the smallest atc --nb_input_scale 2^-k that\n"
           "clamps nothing, measured), the network output's cosine and SQNR against float\n"
           "(mean and worst over the K inputs), the verdict and the first layer over\n"
           "threshold with its\n"
           "likely cause, the run ids and the folder; --json prints it as one JSON object\n"
           "(DIR/summary.json holds it too). A progress line per step goes to stderr.\n"
           "Calibration flags are calibrate's; every file of --data_dir is used when neither\n"
           "--batch_num nor --calibration_config is given; --eval_dir goes to calibrate too.\n"
           "Evaluation inputs: the first K files of --eval_dir, else the last K of --data_dir\n"
           "(K = --eval_count, default 5). ATC's flags pass through (default: every float\n"
           "input fp16, FP16 outputs, Ascend035A), and atc's --nb_input_scale; atc's\n"
           "warnings are in the summary, with the --nb_input_scale it suggests when a\n"
           "calibrated range is beyond fp16, and calibrate's INT16 advice (a layer whose\n"
           "int8 input rounds its small values to 0; --calibration_config takes the\n"
           "override). --threshold is compare's. DIR defaults to\n"
           "./bringup_<model name>. An output of one value per input (a score) is also\n"
           "compared over the K inputs together, and that cosine is its worst (a cosine of\n"
           "one value is 1).\n"
           "--cpu_nodes \"a;b\": those nodes on the MCU's CPU, float32 (calibrate leaves them\n"
           "float). --auto_place: calibrate's placement advice taken (calibrated again).\n"
           "--target_sqnr DB: the precision and placement search: the cheapest configuration\n"
           "(INT16 activations on layers, runs of nodes on the CPU) whose pooled SQNR over\n"
           "the evaluation inputs reaches DB on each target output (--target_outputs, default\n"
           "every output), each candidate calibrated, compiled by atc and run on the\n"
           "simulator: each change alone, then added by gain per cost until the target holds,\n"
           "then every change the target does not need dropped. The summary shows the Pareto\n"
           "table (SQNR, cycles, exeom size), the chosen changes, its calibration config\n"
           "(DIR/search/chosen/quant.cfg) and atc flags. --search_max_cycles N: no\n"
           "configuration over N cycles (NPU + CPU, mean per input) is chosen (the frame's\n"
           "budget: 80 ms at 64 MHz is 5,120,000). --search_baseline measures the\n"
           "ESP-PPQ-style rule too (INT16 in sensitivity order until the target).\n"
           "A Q/DQ (QAT) model carries its scales: it is imported (calibrate --from_qdq), not\n"
           "calibrated, and needs no --data_dir; without --data_dir or --eval_dir it is\n"
           "evaluated on K random inputs, uniform in [-1, 1) (the summary says so).\n"
           "Exit status: 0 when every stage ran, whatever the accuracy; 2 bad input (the\n"
           "stage's own error: \"bringup: STAGE failed: ...\"); 3 with --fail-under-cosine X\n"
           "when the worst network-output cosine is below X (or not defined); 130 on Ctrl-C\n"
           "(the running step is interrupted; calibrate, atc, run and compare remove their\n"
           "partial files).\n");
}

typedef struct bu_cli {
    nb_bringup_opts o;
    const char *eval_count, *fail_cos, *target, *max_cycles;
    bool json, tty;
    bool open;             /* a progress line without its newline on the terminal */
    bool progress_lines;   /* "progress: STEP k/6" lines for a job runner (the workbench) */
} bu_cli;

/* The flags into c; 0, -1 after --help, or the usage error's exit status. */
static int parse_flags(int argc, char **argv, bu_cli *c)
{
    nb_bringup_opts *o = &c->o;
    struct {
        const char *flag;
        const char **dst;
    } opts[] = {{"--data_dir", &o->data_dir}, {"--input_shape", &o->input_shape},
                {"--data_types", &o->data_types}, {"--calibration_config", &o->calibration_config},
                {"--batch_num", &o->batch_num}, {"--algo", &o->algo},
                {"--eval_dir", &o->eval_dir}, {"--out", &o->out},
                {"--soc_version", &o->soc_version}, {"--input_fp16_nodes", &o->input_fp16_nodes},
                {"--output_type", &o->output_type}, {"--out_nodes", &o->out_nodes},
                {"--cpu_nodes", &o->cpu_nodes}, {"--nb_input_scale", &o->nb_input_scale},
                {"--threshold", &o->threshold}, {"--eval_count", &c->eval_count},
                {"--fail-under-cosine", &c->fail_cos}, {"--target_sqnr", &c->target},
                {"--target_outputs", &o->target_outputs},
                {"--search_max_cycles", &c->max_cycles}};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return -1;
        }
        bool taken = false;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !taken; k++) {
            const char *v;
            int r = cli_opt(argc, argv, &i, opts[k].flag, &v);
            if (r < 0)
                return cli_usage_error("bringup", "%s needs a value", opts[k].flag);
            if (r > 0) {
                if (*opts[k].dst)
                    return cli_usage_error("bringup", "%s is given twice", opts[k].flag);
                *opts[k].dst = v;
                taken = true;
            }
        }
        if (taken)
            continue;
        int r;
        if (!strcmp(argv[i], "--json"))
            c->json = true;
        else if (!strcmp(argv[i], "--auto_place"))
            o->auto_place = true;
        else if (!strcmp(argv[i], "--search_baseline"))
            o->search_baseline = true;
        else if ((r = cli_model_arg("bringup", argv[i], &o->model)))
            return r;
    }
    if (c->eval_count) {
        char *end;
        long k = strtol(c->eval_count, &end, 10);
        if (*end || end == c->eval_count || k < 1 || k > NB_BRINGUP_MAX_EVAL)
            return cli_usage_error("bringup", "--eval_count is a whole number from 1 to %d, "
                                   "not '%s'", NB_BRINGUP_MAX_EVAL, c->eval_count);
        o->eval_count = (int)k;
    }
    if (c->fail_cos) {
        char *end;
        o->fail_under_cosine = strtod(c->fail_cos, &end);
        if (*end || end == c->fail_cos || !(o->fail_under_cosine >= -1 && o->fail_under_cosine <= 1))
            return cli_usage_error("bringup", "--fail-under-cosine is a cosine from -1 to 1, "
                                   "not '%s'", c->fail_cos);
        o->has_fail_cos = true;
    }
    if (c->target) {
        char *end;
        o->target_sqnr = strtod(c->target, &end);
        if (*end || end == c->target || !isfinite(o->target_sqnr))
            return cli_usage_error("bringup", "--target_sqnr is an SQNR in dB, not '%s'",
                                   c->target);
        o->has_target = true;
    }
    if (c->max_cycles) {
        char *end;
        errno = 0;
        long long v = strtoll(c->max_cycles, &end, 10);
        o->search_max_cycles = (double)v;
        if (errno || *end || end == c->max_cycles || !(c->max_cycles[0] >= '0' &&
                                                       c->max_cycles[0] <= '9') ||
            !(v >= 1 && v < 1000000000000000LL))
            return cli_usage_error("bringup", "--search_max_cycles is a cycle count, not '%s'",
                                   c->max_cycles);
    }
    nb_status st = {0};
    if (nb_bringup_check(o, &st))
        return cli_usage_error("bringup", "%s", st.msg);
    return 0;
}

/* ---- what the user sees: a line per step on stderr (redrawn with progress on a tty) ---- */

static volatile sig_atomic_t g_sig;

static void on_signal(int sig) { g_sig = sig; }

static void on_step(void *user, int step, const char *detail, const char *progress, bool done,
                    double ms)
{
    bu_cli *c = user;
    if (c->progress_lines) { /* the workbench's job: a progress line per step */
        if (!done && !progress[0]) {
            fprintf(stderr, "progress: %s %d/%d\n", nb_bringup_step_name[step], step + 1,
                    NB_BRINGUP_STEPS);
            fflush(stderr);
        }
        return;
    }
    c->open = c->tty && !done;
    if (done && !c->tty)
        return;
    char t[48];
    if (done)
        snprintf(t, sizeof t, "done in %.1f s", ms / 1e3);
    if (!done && !c->tty && progress[0])
        return; /* a log: one line per step */
    if (c->tty)
        cli_term_raw("\r\033[K"); /* past the terminal filter: our own redraw */
    const char *p = done ? t : progress;
    fprintf(stderr, "[%d/%d] %s%s%s ...%s%s", step + 1, NB_BRINGUP_STEPS,
            nb_bringup_step_name[step], detail[0] ? " " : "", detail, p[0] ? " " : "", p);
    if (!c->tty || done)
        fputc('\n', stderr);
    fflush(stderr);
}

/* a note or warning as one line: a name's newline would start a line of its own */
static void one_line(const char *prefix, const char *msg)
{
    fputs(prefix, stderr);
    for (const char *p = msg; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? '?' : *p, stderr);
    fputc('\n', stderr);
}

static void on_note(void *user, const char *msg)
{
    (void)user;
    one_line("", msg);
}

static void on_warn(void *user, const char *msg)
{
    (void)user;
    one_line("nanobench: warning: ", msg);
}

/* the bringup's parameters on its own run */
static void record_params(const bu_cli *c)
{
    const nb_bringup_opts *o = &c->o;
    const char *pv[][2] = {{"data_dir", o->data_dir}, {"data_types", o->data_types},
                           {"calibration_config", o->calibration_config},
                           {"batch_num", o->batch_num}, {"algo", o->algo},
                           {"eval_dir", o->eval_dir}, {"soc_version", o->soc_version},
                           {"input_fp16_nodes", o->input_fp16_nodes},
                           {"output_type", o->output_type}, {"out_nodes", o->out_nodes},
                           {"nb_input_scale", o->nb_input_scale}, {"threshold", o->threshold},
                           {"cpu_nodes", o->cpu_nodes}};
    for (size_t k = 0; k < sizeof pv / sizeof pv[0]; k++)
        if (pv[k][1])
            rec_param(pv[k][0], "%s", pv[k][1]);
}

static int failed(const bu_cli *c, const nb_status *st, const nb_bringup_result *r)
{
    if (c->open)
        fputc('\n', stderr);
    if (st->code == NB_ERR_CANCELLED) {
        int sig = g_sig ? g_sig : SIGINT;
        return cli_fail(128 + sig, "bringup: interrupted (%s) during %s",
                        sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP",
                        r->stage);
    }
    return cli_fail(nb_exit_code(st->code), "bringup: %s", st->msg);
}

int cli_bringup_exec(const nb_bringup_opts *opts, bool json, bool progress_lines, int argc,
                     char **argv)
{
    bu_cli c;
    memset(&c, 0, sizeof c);
    c.o = *opts;
    c.json = json;
    c.progress_lines = progress_lines;
    int rc;
    nb_bringup_opts *o = &c.o;
    char outdir[2100];
    if (!o->out) { /* the default folder, recorded as given */
        const char *base = strrchr(o->model, '/');
        char stem[256], safe[256];
        snprintf(stem, sizeof stem, "%s", base ? base + 1 : o->model);
        size_t sl = strlen(stem);
        if (sl > 5 && !strcmp(stem + sl - 5, ".onnx"))
            stem[sl - 5] = 0;
        nb_safe_name(stem, safe, sizeof safe);
        snprintf(outdir, sizeof outdir, "bringup_%s", safe);
    } else {
        snprintf(outdir, sizeof outdir, "%s", o->out);
        size_t ol = strlen(outdir);
        while (ol > 1 && outdir[ol - 1] == '/')
            outdir[--ol] = 0;
    }
    if ((rc = rec_start_model("bringup", o->model, o->input_shape, argc, argv)))
        return rc;
    record_params(&c);
    rec_param("out", "%s", outdir);
    rec_param("eval_count", "%d", o->eval_count ? o->eval_count : 5);
    if (o->has_fail_cos)
        rec_param("fail_under_cosine", "%g", o->fail_under_cosine);
    if (o->has_target)
        rec_param("target_sqnr", "%g", o->target_sqnr);
    if (o->target_outputs)
        rec_param("target_outputs", "%s", o->target_outputs);
    o->db = g_rec.db;
    o->run = g_rec.run;
    o->require_record = g_rec.require_record;
    c.tty = isatty(STDERR_FILENO);
    /* Ctrl-C: the engine's cancel flag; the step running stops at its next batch */
    struct sigaction sa, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    nb_bringup_hooks h = {.user = &c, .step = on_step, .note = on_note, .warn = on_warn,
                          .cancel = &g_sig};
    nb_bringup_result r;
    nb_status st = {0};
    nb_err e = nb_bringup(o, &h, &r, &st);
    if (!e && !r.summary) /* never a summary of nothing (an interrupted fix once ended so) */
        e = nb_fail(&st, g_sig ? NB_ERR_CANCELLED : NB_ERR_INTERNAL, "interrupted during %s",
                    r.stage[0] ? r.stage : "the bring-up");
    if (e) {
        rc = failed(&c, &st, &r);
    } else if (c.json) {
        rc = cli_json_out("bringup", json_incref(r.summary));
    } else {
        nb_report_text(r.summary, stdout);
        fflush(stdout);
    }
    if (!rc && r.below) {
        char c1[32];
        if (isnan(r.worst_cosine))
            snprintf(c1, sizeof c1, "undefined");
        else /* enough digits to show it below the bound ("1.00000 is below 1" was not) */
            snprintf(c1, sizeof c1, "%.*f", r.worst_cosine > 0.99999 ? 9 : 5, r.worst_cosine);
        rc = cli_fail(3, "bringup: the worst network-output cosine %s is below "
                      "--fail-under-cosine %g", c1, o->fail_under_cosine);
    }
    nb_bringup_result_free(&r);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    return rc;
}

int cmd_bringup(int argc, char **argv)
{
    bu_cli c;
    memset(&c, 0, sizeof c);
    int rc = parse_flags(argc, argv, &c);
    if (rc)
        return rc < 0 ? 0 : rc;
    return cli_bringup_exec(&c.o, c.json, false, argc, argv);
}
