/* nanobench bringup: a model from ONNX to a verdict in one command.
 *
 * estimate -> calibrate -> atc -> run (the simulated NPU, on K evaluation inputs) -> infer
 * (the float reference on the same inputs) -> compare (per layer, first evaluation input).
 * Every step is the CLI's own command, run as a child process of this binary through the
 * job runner (app/tui/job.h), with its --json output read back; each child is recorded with
 * --parent = the run of the step before it (the first: this bringup's own run, kind
 * 'bringup'), so `nanobench history show BRINGUP_RUN` lists the chain. The network-output
 * metrics are accucmp's (nb_cmp_metrics_compute) on the run's and infer's .npy files.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bringup.h"
#include "cli.h"
#include "nb/accucmp.h"
#include "nb/ir.h"
#include "nb/report.h"
#include "tui/job.h"


static void help(void)
{
    printf("usage: nanobench bringup MODEL.onnx --data_dir \"dir_x;dir_y\" [--input_shape S]\n"
           "           [--data_types T] [--calibration_config CFG | --batch_num N] [--algo A]\n"
           "           [--eval_dir \"e_x;e_y\"] [--eval_count K] [--out DIR]\n"
           "           [--soc_version V] [--input_fp16_nodes \"x;y\"] [--output_type FP16]\n"
           "           [--out_nodes \"node:0\"] [--nb_input_scale \"x:2^-12\"]\n"
           "           [--cpu_nodes \"a;b\" | --auto_place]\n"
           "           [--threshold cos=0.99,...]\n"
           "           [--fail-under-cosine X] [--json]\n"
           "Brings a model up on the Nano in one command: estimate -> calibrate -> atc ->\n"
           "run on the simulated NPU (K evaluation inputs) -> infer, the float reference (the\n"
           "same inputs) -> compare every layer (the first input). Each step is the CLI's own\n"
           "command, recorded as a child of this bringup's run (nanobench history show RUN).\n"
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
           "A Q/DQ (QAT) model carries its scales: it is imported (calibrate --from_qdq), not\n"
           "calibrated, and needs no --data_dir; without --data_dir or --eval_dir it is\n"
           "evaluated on K random inputs, uniform in [-1, 1) (the summary says so).\n"
           "Exit status: 0 when every stage ran, whatever the accuracy; 2 bad input (the\n"
           "stage's own error: \"bringup: STAGE failed: ...\"); 3 with --fail-under-cosine X\n"
           "when the worst network-output cosine is below X (or not defined); 130 on Ctrl-C\n"
           "(the running step is interrupted; calibrate, atc, run and compare remove their\n"
           "partial files).\n");
}

int cmd_bringup(int argc, char **argv)
{
    bu B = {.eval_count = 5}, *b = &B;
    struct {
        const char *flag;
        const char **dst;
    } opts[] = {{"--data_dir", &b->data_dir},
                {"--input_shape", &b->shape},
                {"--data_types", &b->types},
                {"--calibration_config", &b->cfg},
                {"--batch_num", &b->batch},
                {"--algo", &b->algo},
                {"--eval_dir", &b->eval_dir},
                {"--out", &b->out},
                {"--soc_version", &b->soc},
                {"--input_fp16_nodes", &b->fp16},
                {"--output_type", &b->otype},
                {"--out_nodes", &b->out_nodes},
                {"--cpu_nodes", &b->cpu_nodes},
                {"--nb_input_scale", &b->in_scale},
                {"--threshold", &b->threshold}};
    const char *eval_count = NULL, *fail_cos = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
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
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "--eval_count", &v))) {
            if (r < 0)
                return cli_usage_error("bringup", "--eval_count needs a number");
            eval_count = v;
        } else if ((r = cli_opt(argc, argv, &i, "--fail-under-cosine", &v))) {
            if (r < 0)
                return cli_usage_error("bringup", "--fail-under-cosine needs a number");
            fail_cos = v;
        } else if (!strcmp(argv[i], "--json")) {
            b->json = true;
        } else if (!strcmp(argv[i], "--auto_place")) {
            b->auto_place = true;
        } else if ((r = cli_model_arg("bringup", argv[i], &b->model))) {
            return r;
        }
    }
    if (!b->model)
        return cli_usage_error("bringup", "no model given");
    if (b->cpu_nodes && b->auto_place)
        return cli_usage_error("bringup", "--cpu_nodes and --auto_place are either / or: the "
                               "placement is given, or calibrate's advice is taken");
    if ((!b->data_dir || !*b->data_dir) && !model_is_qdq(b->model, b->shape))
        return cli_usage_error("bringup", "--data_dir is required (the calibration data, one "
                               "folder per input; a Q/DQ model needs none)");
    if (b->data_dir && !*b->data_dir)
        b->data_dir = NULL;
    if (b->cfg && b->batch)
        return cli_usage_error("bringup", "--calibration_config and --batch_num are exclusive "
                               "(the config holds batch_num)");
    if (eval_count) {
        char *end;
        long k = strtol(eval_count, &end, 10);
        if (*end || end == eval_count || k < 1 || k > MAX_EVAL)
            return cli_usage_error("bringup", "--eval_count is a whole number from 1 to %d, "
                                   "not '%s'", MAX_EVAL, eval_count);
        b->eval_count = (int)k;
    }
    if (fail_cos) {
        char *end;
        b->fail_cos = strtod(fail_cos, &end);
        if (*end || end == fail_cos || !(b->fail_cos >= -1 && b->fail_cos <= 1))
            return cli_usage_error("bringup", "--fail-under-cosine is a cosine from -1 to 1, "
                                   "not '%s'", fail_cos);
        b->has_fail_cos = true;
    }
    if (b->threshold) { /* compare's own check, before anything runs */
        nb_cmp_thresholds th;
        nb_status st = {0};
        nb_cmp_thresholds_default(&th);
        if (nb_cmp_thresholds_parse(b->threshold, &th, &st))
            return cli_usage_error("bringup", "--threshold: %s", st.msg);
    }
    /* names: the model's file name, made safe for ATC's --output and --model rules */
    const char *base = strrchr(b->model, '/');
    base = base ? base + 1 : b->model;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base);
    size_t sl = strlen(stem);
    if (sl > 5 && !strcmp(stem + sl - 5, ".onnx"))
        stem[sl - 5] = 0;
    nb_safe_name(stem, b->stem, sizeof b->stem);
    if (b->out) {
        if (!*b->out || strlen(b->out) > 2000)
            return cli_usage_error("bringup", "--out needs a folder (up to 2000 characters)");
        snprintf(b->outdir, sizeof b->outdir, "%s", b->out);
        size_t ol = strlen(b->outdir);
        while (ol > 1 && b->outdir[ol - 1] == '/')
            b->outdir[--ol] = 0;
    } else {
        snprintf(b->outdir, sizeof b->outdir, "bringup_%s", b->stem);
    }

    int rc = rec_start_model("bringup", b->model, b->shape, argc, argv);
    if (rc)
        return rc;
    const char *pv[][2] = {{"data_dir", b->data_dir},  {"data_types", b->types},
                           {"calibration_config", b->cfg}, {"batch_num", b->batch},
                           {"algo", b->algo},          {"eval_dir", b->eval_dir},
                           {"soc_version", b->soc},    {"input_fp16_nodes", b->fp16},
                           {"output_type", b->otype},  {"out_nodes", b->out_nodes},
                           {"nb_input_scale", b->in_scale}, {"threshold", b->threshold},
                           {"cpu_nodes", b->cpu_nodes}};
    for (size_t k = 0; k < sizeof pv / sizeof pv[0]; k++)
        if (pv[k][1])
            rec_param(pv[k][0], "%s", pv[k][1]);
    rec_param("out", "%s", b->outdir);
    rec_param("eval_count", "%d", b->eval_count);
    if (b->has_fail_cos)
        rec_param("fail_under_cosine", "%g", b->fail_cos);
    b->db = g_rec.db ? nb_db_path(g_rec.db) : g_rec.db_path;
    b->tty = isatty(STDERR_FILENO);
    b->t0 = now_s();
    /* Ctrl-C: to this process only (each child has its own process group): it interrupts
       the running child, whose cleanup removes its partial files */
    struct sigaction sa, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);

    tui_job *j = NULL;
    bu_argv a = {0};
    json_t *summary = NULL;
    char dir[3400];
    snprintf(dir, sizeof dir, "%s/log", b->outdir);
    if (nb_mkdir_p(dir)) {
        rc = cli_fail(2, "bringup: %s: cannot make the folder: %s", b->outdir, strerror(errno));
        goto out;
    }
    /* a previous bring-up's summary, report and fix tries in this folder go first: a run that
       stops half-way leaves no summary that speaks for another */
    {
        char why[600] = "";
        long long by = nb_report_folder_clear(b->outdir, why, sizeof why);
        if (by > 0)
            fprintf(stderr, "bringup: %s holds bringup %lld's files: they are replaced (its "
                    "numbers stay in the history: nanobench history show %lld)\n", b->outdir,
                    by, by);
        else if (by == 0)
            fprintf(stderr, "bringup: %s holds an unrecorded bringup's files: they are "
                    "replaced\n", b->outdir);
        if (why[0])
            fprintf(stderr, "nanobench: warning: %s\n", why);
        fix_clear(b);
    }
#define GLOBAL_FLAGS()                                                                         \
    do {                                                                                       \
        if (g_rec.no_record)                                                                   \
            arg(&a, "--no-record");                                                            \
        if (g_rec.require_record)                                                              \
            arg(&a, "--require-record");                                                       \
    } while (0)
#define STEP_TIMER(s, call)                                                                    \
    do {                                                                                       \
        double t_ = now_s();                                                                   \
        rc = (call);                                                                           \
        b->step_ms[s] += (now_s() - t_) * 1e3;                                                 \
    } while (0)

    /* 1. estimate */
    step_line(b, 0, "", "");
    if ((rc = run_estimate(b, "")))
        goto out;
    step_done(b, 0, "");
    if ((rc = model_inputs(b)))
        goto out;
    if (g_sig) {
        rc = interrupted("estimate");
        goto out;
    }

    /* 2. calibrate */
    char detail[128] = "";
    if (b->qat)
        snprintf(detail, sizeof detail, "(QAT: the model's own scales, no calibration)");
    else if (b->batch)
        snprintf(detail, sizeof detail, "(%s batch%s)", b->batch, strcmp(b->batch, "1") ? "es" : "");
    else if (!b->cfg)
        snprintf(detail, sizeof detail, "(every batch)");
    step_line(b, 1, detail, "");
    char save[3400];
    snprintf(save, sizeof save, "%s/quant/%s", b->outdir, b->stem);
redo_calibrate:
    GLOBAL_FLAGS();
    arg(&a, "calibrate");
    if (b->qat) { /* a Q/DQ model carries its scales: imported, whatever the data */
        arg(&a, "--from_qdq");
        arg(&a, "%s", b->model);
        arg(&a, "--save_path");
        arg(&a, "%s", save);
        arg(&a, "--json");
        goto calibrate;
    }
    arg(&a, "--model");
    arg(&a, "%s", b->model);
    arg(&a, "--save_path");
    arg(&a, "%s", save);
    arg(&a, "--data_dir");
    arg(&a, "%s", b->data_dir);
    if (b->shape)
        arg(&a, "--input_shape=%s", b->shape);
    if (b->types)
        arg(&a, "--data_types=%s", b->types);
    if (b->cfg)
        arg(&a, "--calibration_config=%s", b->cfg);
    if (b->batch)
        arg(&a, "--batch_num=%s", b->batch);
    else if (!b->cfg)
        arg(&a, "--batch_num=all");
    if (b->algo)
        arg(&a, "--algo=%s", b->algo);
    if (b->eval_dir)
        arg(&a, "--eval_dir=%s", b->eval_dir);
    if (b->cpu_nodes) /* their cube ops stay float: the MCU's CPU runs them */
        arg(&a, "--cpu_nodes=%s", b->cpu_nodes);
    arg(&a, "--json");
    arg(&a, "--progress");
calibrate:
    STEP_TIMER(1, child(b, 1, detail, "2-calibrate", b->id_est > 0 ? b->id_est : g_rec.run_id,
                        &a, &j));
    if (rc)
        goto out;
    b->id_cal = j->run_id;
    b->cal = job_json(j, "calibrate", &rc);
    tui_job_free(j);
    j = NULL;
    if (!b->cal)
        goto out;
    if (!b->advice)
        b->advice = json_is_object(json_object_get(b->cal, "cpu_advice"))
                        ? json_incref(json_object_get(b->cal, "cpu_advice")) : NULL;
    /* --auto_place: calibrate's own placement advice taken, the calibration done again with
       those nodes float (they run on the MCU's CPU); atc and the estimate take it too */
    const char *advice = json_string_value(json_object_get(b->cal, "suggested_cpu_nodes"));
    if (b->auto_place && !b->cpu_nodes && advice && *advice) {
        snprintf(b->auto_cpu, sizeof b->auto_cpu, "%s", advice);
        b->cpu_nodes = b->auto_cpu;
        if ((rc = run_estimate(b, "(the placement)"))) /* what atc will now compile */
            goto out;
        snprintf(detail, sizeof detail, "(again, --auto_place: %.80s%s on the CPU)", advice,
                 strlen(advice) > 80 ? "..." : "");
        step_line(b, 1, detail, "");
        json_decref(b->cal);
        b->cal = NULL;
        goto redo_calibrate;
    }
    step_done(b, 1, detail);
    if ((rc = pick_eval(b)))
        goto out;

    /* 3. atc */
    step_line(b, 2, "", "");
    snprintf(b->deploy, sizeof b->deploy, "%s_deploy_model.onnx", save);
    char output[3400];
    snprintf(output, sizeof output, "%s/%s", b->outdir, b->stem);
    snprintf(b->exeom, sizeof b->exeom, "%s.exeom", output);
    atc_argv(b, &a, output, b->in_scale);
    int64_t parent = b->id_cal > 0 ? b->id_cal : b->id_est > 0 ? b->id_est : g_rec.run_id;
    STEP_TIMER(2, child(b, 2, "", "3-atc", parent, &a, &j));
    if (rc)
        goto out;
    b->id_atc = j->run_id;
    atc_warnings(b, j->err);
    tui_job_free(j);
    j = NULL;
    struct stat sb;
    if (stat(b->exeom, &sb)) {
        rc = cli_fail(1, "bringup: atc wrote no %s", b->exeom);
        goto out;
    }
    step_done(b, 2, "");
    if (b->id_atc > 0)
        parent = b->id_atc;

    /* 4. run: every evaluation input on the simulator, the first with every task dumped */
    char acl[3400], npu_dump[3400];
    snprintf(acl, sizeof acl, "%s/acl.json", b->outdir);
    snprintf(npu_dump, sizeof npu_dump, "%s/npu_dump", b->outdir);
    {
        json_t *entry = json_object(), *list = json_array(), *d = json_object(),
               *root = json_object();
        json_object_set_new(entry, "model_name", nb_json_string(b->stem));
        json_array_append_new(list, entry);
        json_object_set_new(d, "dump_list", list);
        json_object_set_new(d, "dump_path", nb_json_string(npu_dump));
        json_object_set_new(d, "dump_mode", json_string("output"));
        json_object_set_new(d, "dump_op_switch", json_string("off"));
        json_object_set_new(d, "dump_data", json_string("tensor"));
        json_object_set_new(root, "dump", d);
        int w = json_dump_file(root, acl, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (w) {
            rc = cli_fail(2, "bringup: %s: cannot write the dump config: %s", acl,
                          strerror(errno));
            goto out;
        }
    }
    snprintf(detail, sizeof detail, "on the simulator (%d input%s)", b->n_eval,
             b->n_eval == 1 ? "" : "s");
    step_line(b, 3, detail, "");
    b->runs = json_array();
    for (int k = 0; k < b->n_eval; k++) {
        char od[3400];
        snprintf(od, sizeof od, "%s/run/%d", b->outdir, k);
        run_argv(b, &a, b->exeom, k, od, NULL);
        char ln[32];
        snprintf(ln, sizeof ln, "4-run-%d", k);
        STEP_TIMER(3, child(b, 3, detail, ln, parent, &a, &j));
        if (rc)
            goto out;
        b->id_run[k] = j->run_id;
        json_t *o = job_json(j, "run", &rc);
        tui_job_free(j);
        j = NULL;
        if (!o)
            goto out;
        json_array_append_new(b->runs, o);
        if (b->tty && k + 1 < b->n_eval) {
            char p[32];
            snprintf(p, sizeof p, "%d/%d", k + 1, b->n_eval);
            step_line(b, 3, detail, p);
        }
    }
    step_done(b, 3, detail);
    const json_t *run0 = json_array_get(b->runs, 0);

    /* 5. infer: the float reference on the same inputs; golden dumps of the first. An NPU
       output that is not a model output (--out_nodes) is an intermediate: --dump-all */
    bool dump_all = false;
    const json_t *outs0 = json_object_get(run0, "outputs");
    for (size_t i = 0; i < json_array_size(outs0) && !dump_all; i++)
        dump_all = !model_output(b->model, b->shape, bu_str(json_array_get(outs0, i), "name"));
    {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", localtime_r(&now, &tmv));
        snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s", b->outdir, stamp);
        for (int k = 2; access(b->gold, F_OK) == 0 && k < 1000; k++)
            snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s_%d", b->outdir, stamp, k);
    }
    snprintf(detail, sizeof detail, "float reference (%d input%s)", b->n_eval,
             b->n_eval == 1 ? "" : "s");
    step_line(b, 4, detail, "");
    for (int k = 0; k < b->n_eval; k++) {
        char od[3400];
        snprintf(od, sizeof od, "%s/reference/%d", b->outdir, k);
        infer_argv(b, &a, k, od, dump_all, NULL);
        char ln[32];
        snprintf(ln, sizeof ln, "5-infer-%d", k);
        STEP_TIMER(4, child(b, 4, detail, ln, b->id_run[k] > 0 ? b->id_run[k] : parent, &a, &j));
        if (rc)
            goto out;
        b->id_inf[k] = j->run_id;
        tui_job_free(j);
        j = NULL;
        if (b->tty && k + 1 < b->n_eval) {
            char p[32];
            snprintf(p, sizeof p, "%d/%d", k + 1, b->n_eval);
            step_line(b, 4, detail, p);
        }
    }
    step_done(b, 4, detail);

    /* the network outputs over the K inputs; the input where they are worst (the lowest
       output SQNR) is the one every layer is compared on: the layer that broke accuracy shows
       there, not on a loud input where all is well (the demo's melspectrogram: global
       consistency on input 1 at cosine 0.999997, -61 dB on its quiet inputs) */
    double worst_cos = NAN, sat_total = 0;
    json_t *outs = output_metrics(b, outs0, &worst_cos, &rc);
    if (!outs)
        goto out;
    if ((rc = dump_worst(b, outs, acl, dump_all, parent))) {
        json_decref(outs);
        goto out;
    }
    const char *dumped = b->dumped;

    /* 6. compare every layer of that evaluation input */
    step_line(b, 5, "", "");
    char cmpdir[3400];
    snprintf(cmpdir, sizeof cmpdir, "%s/compare", b->outdir);
    GLOBAL_FLAGS();
    arg(&a, "compare");
    arg(&a, "file_compare");
    arg(&a, "-m");
    arg(&a, "%s", dumped);
    arg(&a, "-g");
    arg(&a, "%s", b->gold);
    arg(&a, "-out");
    arg(&a, "%s", cmpdir);
    if (b->threshold)
        arg(&a, "--threshold=%s", b->threshold);
    arg(&a, "--json");
    STEP_TIMER(5, child(b, 5, "", "6-compare", b->id_dump_inf > 0 ? b->id_dump_inf : parent, &a,
                        &j));
    if (rc) {
        json_decref(outs);
        goto out;
    }
    b->id_cmp = j->run_id;
    b->cmp = job_json(j, "compare", &rc);
    tui_job_free(j);
    j = NULL;
    if (!b->cmp) {
        json_decref(outs);
        goto out;
    }
    step_done(b, 5, "");

    json_t *sat = saturation_json(b, &sat_total), *fix = NULL;
    if (sat_total > 0 && !(fix = saturation_fix(b, sat_total, parent, &rc))) {
        json_decref(outs);
        json_decref(sat);
        goto out;
    }
    bool below = b->has_fail_cos && (isnan(worst_cos) || worst_cos < b->fail_cos);
    double wall = now_s() - b->t0;
    summary = summary_json(b, outs, worst_cos, sat, (int64_t)sb.st_size, dumped, wall, below);
    json_object_set_new(summary, "saturation_fix", fix ? fix : json_null());

    /* the page first (from the summary in memory), then summary.json, each written whole
       under a temporary name and renamed: a kill leaves the old pair, a page alone, or both,
       never a cut summary (issue 35) */
    char sp[3400], rp[3400], part[3500], scratch[3500];
    snprintf(sp, sizeof sp, "%s/summary.json", b->outdir);
    snprintf(rp, sizeof rp, "%s/report.html", b->outdir);
    {
        char label[300];
        snprintf(label, sizeof label, "%s", b->stem);
        json_object_set_new(summary, "report", nb_json_string(rp));
        nb_report_src rs = {.dir = b->outdir, .label = label, .run_id = g_rec.run_id,
                            .summary = summary};
        nb_report_opts ro = {&rs, NULL, NULL, rp, &g_sig};
        nb_report_tmp_paths(rp, part, sizeof part, scratch, sizeof scratch);
        nb_status st;
        nb_err e = nb_report_write(&ro, NULL, &st);
        if (e == NB_ERR_CANCELLED || g_sig) {
            rc = interrupted("the report");
            goto out;
        }
        if (e) {
            fprintf(stderr, "nanobench: warning: report: %s\n", st.msg);
            rp[0] = 0; /* the bring-up itself stands */
            json_object_set_new(summary, "report", json_null());
        }
        char *text = json_dumps(summary, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text || nb_write_file_atomic(sp, text, strlen(text), &st))
            fprintf(stderr, "nanobench: warning: %s: cannot write: %s\n", sp,
                    text ? st.msg : "out of memory");
        free(text);
    }
    /* the bringup's own run: the numbers of the summary, the files that matter */
    static const char *const em[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE"};
    for (int i = 0; i < 3; i++)
        rec_metric(em[i], bu_num(b->est, em[i]), "B");
    rec_metric("not_supported_op_types", (double)json_object_size(json_object_get(b->est,
                                                                   "NOT_SUPPORT_OP_TYPE")), "");
    rec_metric("exeom_bytes", (double)sb.st_size, "B");
    rec_metric("cycles", bu_num(run0, "cycles"), "cycles");
    rec_metric("npu_ms_64mhz", bu_num(run0, "ms_64mhz"), "ms");
    rec_metric("npu_ms_200mhz", bu_num(run0, "ms_200mhz"), "ms");
    rec_metric("fp16_saturations", sat_total, "");
    const json_t *o0 = json_array_get(outs, 0); /* the first output's, for history diff */
    rec_metric("output_cosine_mean", bu_num(o0, "cosine_mean"), "");
    rec_metric("output_cosine_worst", bu_num(o0, "cosine_worst"), "");
    rec_metric("output_sqnr_db_mean", bu_num(o0, "sqnr_db_mean"), "dB");
    rec_metric("output_sqnr_db_worst", bu_num(o0, "sqnr_db_worst"), "dB");
    rec_metric("output_pooled_cosine", bu_num(o0, "pooled_cosine"), "");
    rec_metric("eval_inputs", b->n_eval, "");
    rec_metric("worst_output_cosine", worst_cos, "");
    rec_metric("layers_over_threshold", bu_num(b->cmp, "over_threshold"), "");
    rec_metric("wall_s", wall, "s");
    rec_artifact("exeom", b->exeom);
    rec_artifact("summary", sp);
    if (rp[0])
        rec_artifact("report", rp);
    if (b->json) {
        rc = cli_json_out("bringup", json_incref(summary));
    } else {
        nb_report_text(summary, stdout);
        fflush(stdout);
    }
    if (!rc && below) {
        char c1[32];
        rc = cli_fail(3, "bringup: the worst network-output cosine %s is below "
                      "--fail-under-cosine %g", cos_str(worst_cos, c1, sizeof c1), b->fail_cos);
    }
out:
    args_free(&a);
    tui_job_free(j);
    json_decref(summary);
    json_decref(b->est);
    json_decref(b->cal);
    json_decref(b->advice);
    json_decref(b->cmp);
    json_decref(b->runs);
    json_decref(b->atc_warn);
    for (int i = 0; i < b->n_in; i++)
        free(b->in_name[i]);
    for (int k = 0; b->eval && k < b->n_eval * b->n_in; k++)
        free(b->eval[k]);
    free(b->eval);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    return rc;
}
