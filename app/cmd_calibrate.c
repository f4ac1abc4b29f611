/* nanobench calibrate: AMCT's calibration command line on the engine's entry points
 * (engine/quant/calibrate.c: nb_calibrate, nb_qat_import). Parses the flags, prints the
 * per-layer report (or --json), records the run. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "nb/quant.h"

static void help(void)
{
    printf("usage: nanobench calibrate --model M.onnx --save_path DIR/PREFIX --data_dir \"dir_x;dir_y\"\n"
           "           [--input_shape \"x:1,16,96;y:...\"] [--data_types \"float32;float32\"]\n"
           "           [--calibration_config CFG | --batch_num N|all]\n"
           "           [--algo ifmr|hfmg|minmax|percentile|kl|auto] [--eval_dir \"e_x;e_y\"] [--json]\n"
           "           [--progress] [--cpu_nodes \"a;b\"] [--weight_round nearest|adaround]\n"
           "           [--no_bias_correction]\n"
           "       nanobench calibrate --from_qdq QAT.onnx --save_path DIR/PREFIX\n"
           "AMCT's flags. Each --data_dir folder holds one input's batches, one file per batch\n"
           "in ascending name order: a raw .bin of the input's shape and data type, or a .npy.\n"
           "--calibration_config is AMCT's protobuf text config (batch_num, activation_offset,\n"
           "skip_layers, common_config, override_layer_types/configs, ...); --batch_num alone\n"
           "sets the batches (default 1; all: every file, as many as the folder with the\n"
           "fewest). --algo replaces the config's activation algorithm\n"
           "(auto: per layer, the best activation SQNR). Writes DIR/PREFIX_quant_record.txt\n"
           "(scale_d, offset_d, scale_w, offset_w per layer), the deploy and fake-quant models,\n"
           "and prints the per-layer report; --eval_dir (every file, as --data_dir) evaluates the\n"
           "fake-quant model against float on a separate set (default: the first 8 batches).\n"           "--progress prints \"progress: calibrate I/N\" after each calibration batch and\n"
           "\"progress: evaluate I/N\" after each evaluation batch on stderr, flushed at once.\n"
           "--from_qdq: a model exported from QAT (QuantizeLinear/DequantizeLinear pairs,\n"
           "symmetric int8 weights) into the deploy model and the record, without data.\n"
           "--cpu_nodes (nanobench's, with atc's and estimate's): the cube ops among those\n"
           "nodes stay float, not calibrated: the MCU's CPU runs them in float32.\n"
           "--weight_round adaround (nanobench's; AMCT's ada_quantize): each weight rounded\n"
           "up or down as learned on the layer's calibration inputs (AdaRound, ARQ's scales)\n"
           "on every Conv, Gemm and MatMul of constant weights, unless the config's\n"
           "override for a layer sets weight_round itself; nearest (ARQ's) is the default.\n"
           "--no_bias_correction: the bias keeps its float value (default: corrected for the\n"
           "weights' quantization error on the calibration data's mean input).\n");
}

static void print_report(const nb_calibrate_result *r, FILE *f)
{
    bool any_rnn = false;
    fprintf(f, "%-32s %-13s %-10s %11s %11s %12s %6s %4s %4s %-7s %9s %9s %9s %9s\n",
            "layer", "op", "algorithm", "clip_min", "clip_max", "scale_d", "offset", "act", "wts",
            "channel", "act SQNR", "wts SQNR", "out SQNR", "out cos");
    for (int i = 0; i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        char out_sqnr[16] = "       -", out_cos[16] = "       -"; /* not evaluated */
        if (l->evaluated) {
            snprintf(out_sqnr, sizeof out_sqnr, "%8.1f", l->out_sqnr);
            snprintf(out_cos, sizeof out_cos, "%8.6f", l->out_cos);
        }
        char w_sqnr[16] = "       -"; /* no weights: a MatMul of two activations */
        if (!isnan(l->w_sqnr))
            snprintf(w_sqnr, sizeof w_sqnr, "%8.1f", l->w_sqnr);
        fprintf(f, "%-32s %-13s %-10s %11.5g %11.5g %12.6g %6d %4d %4d %-7s %8.1f  %s  "
                "%s  %s\n", l->name, l->fused_bn ? "Conv+BN" : l->op_type,
                nb_act_algo_name(l->algo), l->clip_min, l->clip_max, l->scale_d, l->offset_d,
                l->act_bits, l->weight_bits, l->channel_wise ? "yes" : "no", l->act_sqnr,
                w_sqnr, out_sqnr, out_cos);
        if (l->rnn) /* the hidden state and R: a row of their own */
            fprintf(f, "%-32s %-13s %-10s %11.5g %11.5g %12.6g %6d %4d %4d %-7s %8.1f  %8.1f\n",
                    "  (hidden state h, R)", "", nb_act_algo_name(l->algo), l->h_clip_min,
                    l->h_clip_max, l->scale_h, l->offset_h, l->h_bits, l->weight_bits,
                    l->channel_wise ? "yes" : "no", l->h_sqnr, l->r_sqnr);
        if (l->act_b) /* a MatMul of two activations: its second operand B */
            fprintf(f, "%-32s %-13s %-10s %11.5g %11.5g %12.6g %6d %4d %4s %-7s %8.1f\n",
                    "  (second input B)", "", nb_act_algo_name(l->algo), l->b_clip_min,
                    l->b_clip_max, l->scale_b, l->offset_b, 8, "-", "no", l->b_sqnr);
        any_rnn |= l->rnn;
    }
    fprintf(f, "SQNR in dB against float: act, wts: each tensor's fake quantization (act over the "
            "calibration histogram); out: the layer alone on fake-quantized input and weights%s\n",
            any_rnn ? " (an LSTM/GRU also on its state quantized at every step)" : "");
}

/* --progress: "progress: calibrate I/N" or "progress: evaluate I/N" on stderr, flushed at
   once, so that a program reading it draws a bar with a rate and an ETA */
static void on_progress(void *user, const char *pass, int done, int total)
{
    (void)user;
    fprintf(stderr, "progress: %s %d/%d\n", pass, done, total);
    fflush(stderr);
}

static void on_model(void *user, const nb_model *m)
{
    (void)user;
    rec_model(m);
}

static void on_warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "nanobench: warning: %s\n", msg);
}

/* --from_qdq: a QAT model's Q/DQ pairs into the deploy model and the record. */
static int import_qdq(const char *model, const char *save, bool json, int argc, char **argv)
{
    int rc = rec_start_model("calibrate", model, NULL, argc, argv);
    if (rc)
        return rc;
    rec_param("from_qdq", "%s", "true");
    char deploy[4200], record[4200], tmp[4400];
    snprintf(deploy, sizeof deploy, "%s_deploy_model.onnx", save);
    snprintf(record, sizeof record, "%s_quant_record.txt", save);
    snprintf(tmp, sizeof tmp, "%s.qat.tmp", deploy); /* nb_qat_import's own files */
    cli_cleanup_add(tmp);
    nb_part_path(deploy, tmp, sizeof tmp);
    cli_cleanup_add(tmp);
    nb_part_path(record, tmp, sizeof tmp);
    cli_cleanup_add(tmp);
    nb_status st = {0};
    nb_qdq_model q = {0};
    nb_err e = nb_qat_import(model, save, &q, deploy, record, sizeof deploy, &st);
    cli_cleanup_clear();
    if (e) {
        nb_qdq_model_free(&q);
        return cli_error(&st);
    }
    rec_artifact("deploy_model", deploy);
    rec_artifact("record", record);
    rec_metric("layers", q.n, "");
    if (json) { /* calibrate's JSON, with the layers' imported scales */
        json_t *o = nb_qat_json(model, &q, deploy, record);
        nb_qdq_model_free(&q);
        return cli_json_out("calibrate", o);
    }
    printf("model:   %s (QAT, %d layers)\n%-32s %-13s %12s %8s %4s %9s\n", model, q.n,
           "layer", "", "scale_d", "offset_d", "act", "channels");
    for (int i = 0; i < q.n; i++)
        printf("%-32s %-13s %12.6g %8d %4d %9lld\n", q.l[i].node, "", q.l[i].scale_d,
               q.l[i].offset_d, q.l[i].act_bits, (long long)q.l[i].channels);
    printf("wrote %s\n      %s\n", deploy, record);
    nb_qdq_model_free(&q);
    return 0;
}

/* calibrate's figures, files and per-layer rows on its run */
static void record_result(const nb_calibrate_result *r, const char *algo, const char *cfg_path,
                          bool bias_corr, const char *wround)
{
    rec_artifact("record", r->record);
    rec_artifact("fake_quant_model", r->fake_quant);
    rec_artifact("deploy_model", r->deploy);
    rec_metric("calibration_ms", r->calibration_ms, "ms");
    rec_metric("files_and_evaluation_ms", r->files_and_evaluation_ms, "ms");
    if (isfinite(r->output_sqnr_db))
        rec_metric("output_sqnr_db", r->output_sqnr_db, "dB");
    if (!isnan(r->output_cosine))
        rec_metric("output_cosine", r->output_cosine, "");
    if (isfinite(r->output_worst_cosine))
        rec_metric("output_worst_cosine", r->output_worst_cosine, "");
    if (!isnan(r->output_max_abs_diff))
        rec_metric("output_max_abs_diff", r->output_max_abs_diff, "");
    for (int k = 0; r->n_outputs > 1 && k < r->n_outputs; k++) {
        if (!r->outputs[k].compared)
            continue; /* each output of a multi-output model */
        char key[600];
        snprintf(key, sizeof key, "output_sqnr_db/%s", r->outputs[k].name);
        rec_metric(key, r->outputs[k].sqnr_db, "dB");
        snprintf(key, sizeof key, "output_max_abs_diff/%s", r->outputs[k].name);
        rec_metric(key, r->outputs[k].max_abs_diff, "");
    }
    rec_param("batch_num", "%d", r->batch_num);
    rec_param("algo", "%s", algo ? algo : nb_act_algo_name(r->algo));
    rec_param("act_bits", "%d", r->act_bits);
    rec_param("weight_bits", "%d", r->weight_bits);
    rec_param("bias_correction", "%s", bias_corr ? "on" : "off");
    if (wround)
        rec_param("weight_round", "%s", wround);
    if (cfg_path)
        rec_artifact("calibration_config", cfg_path);
    for (int i = 0; i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        static const char *const cols[] = {"act_bits", "weight_bits", "clip_min", "clip_max",
                                           "scale_d", "offset_d", "act_sqnr_db",
                                           "weight_sqnr_db", "output_sqnr_db", "output_cosine",
                                           "batches", "scale_h", "h_sqnr_db", "r_sqnr_db"};
        double v[14] = {l->act_bits, l->weight_bits, l->clip_min, l->clip_max,
                        l->scale_d, l->offset_d, l->act_sqnr, l->w_sqnr,
                        l->out_sqnr, l->out_cos, l->batches, l->scale_h, l->h_sqnr, l->r_sqnr};
        for (int k = 0; k < 14; k++)
            if (!isfinite(v[k]))
                v[k] = NAN; /* stored as NULL */
        rec_layer(l->name, l->fused_bn ? "Conv+BN" : l->op_type, l->rnn ? 14 : 11, cols, v);
    }
}

/* the text report: the model and batches, the layers, the network output, the files */
static void print_text(const nb_calibrate_result *r, const char *model, const char *dirs,
                       const char *eval_dirs)
{
    const char *dir0 = dirs, *semi = strchr(dirs, ';');
    printf("model:   %s (%d layers to quantize, %d batch%s of the %d files in %.*s%s)\n",
           model, r->n_layers, r->batch_num, r->batch_num == 1 ? "" : "es",
           r->files_in_first_dir, semi ? (int)(semi - dir0) : (int)strlen(dir0), dir0,
           r->files_in_first_dir > r->batch_num && !r->batch_num_given
               ? "; AMCT's default batch_num is 1: --batch_num N to use more" : "");
    print_report(r, stdout);
    char worst[32] = "-";
    if (isfinite(r->output_worst_cosine))
        snprintf(worst, sizeof worst, "%.6f", r->output_worst_cosine);
    int partial = 0, lo = r->batch_num, hi = 0;
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].batches < r->batch_num) {
            partial++;
            lo = r->layers[i].batches < lo ? r->layers[i].batches : lo;
            hi = r->layers[i].batches > hi ? r->layers[i].batches : hi;
        }
    if (partial == 1)
        printf("1 layer in an If branch was reached by ");
    else if (partial)
        printf("%d layers in If branches were reached by ", partial);
    if (partial == 1 || (partial && lo == hi))
        printf("%d of the %d batches%s\n", lo, r->batch_num, partial == 1 ? "" : " each");
    else if (partial)
        printf("%d to %d of the %d batches (--json: \"batches\")\n", lo, hi, r->batch_num);
    if (isnan(r->output_cosine))
        printf("network output: no float output to compare (the evaluation compares float "
               "outputs only)\n");
    else
        printf("network output%s, fake-quant model against float on %s %d %s batch%s: SQNR "
               "%.1f dB, cosine %.6f (worst batch %s), max |difference| %.4g\n",
               r->n_outputs > 1 ? "s (all together)" : "", eval_dirs ? "the" : "the first",
               r->eval_batches, eval_dirs ? "evaluation" : "calibration",
               r->eval_batches == 1 ? "" : "es", r->output_sqnr_db, r->output_cosine,
               isfinite(r->output_worst_cosine) ? worst : "not defined: one value per batch",
               r->output_max_abs_diff);
    for (int k = 0; r->n_outputs > 1 && k < r->n_outputs; k++) {
        const nb_calib_output *co = &r->outputs[k];
        if (!co->compared)
            printf("  output '%s': not compared (%s)\n", co->name, nb_dtype_name(co->dtype));
        else
            printf("  output '%s': SQNR %.1f dB, cosine %.6f, max |difference| %.4g\n",
                   co->name, co->sqnr_db, co->cosine, co->max_abs_diff);
    }
    printf("time: calibration %.0f ms (%d forward passes with statistics, the search, ARQ), "
           "files and evaluation %.0f ms\n", r->calibration_ms, r->batch_num,
           r->files_and_evaluation_ms);
    printf("wrote %s\n      %s\n      %s\n", r->deploy, r->fake_quant, r->record);
}

int cmd_calibrate(int argc, char **argv)
{
    const char *model = NULL, *save = NULL, *shape = NULL, *dirs = NULL, *types = NULL,
               *cfg_path = NULL, *batch = NULL, *algo = NULL, *eval_dirs = NULL,
               *from_qdq = NULL, *cpu_nodes = NULL, *wround = NULL;
    bool json = false, bias_corr = true, show_progress = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        struct {
            const char *flag;
            const char **dst;
        } opts[] = {{"--model", &model}, {"--save_path", &save}, {"--input_shape", &shape},
                    {"--data_dir", &dirs}, {"--data_types", &types},
                    {"--calibration_config", &cfg_path}, {"--batch_num", &batch},
                    {"--algo", &algo}, {"--eval_dir", &eval_dirs}, {"--from_qdq", &from_qdq},
                    {"--cpu_nodes", &cpu_nodes}, {"--weight_round", &wround}};
        bool taken = false;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !taken; k++) {
            if (!(r = cli_opt(argc, argv, &i, opts[k].flag, &v)))
                continue;
            if (r < 0 || *opts[k].dst)
                return cli_usage_error("calibrate", "%s needs one value", opts[k].flag);
            *opts[k].dst = v;
            taken = true;
        }
        if (taken)
            continue;
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--no_bias_correction"))
            bias_corr = false;
        else if (!strcmp(argv[i], "--progress"))
            show_progress = true;
        else
            return cli_usage_error("calibrate", "unknown option '%s'", argv[i]);
    }
    const char *base = save ? strrchr(save, '/') : NULL;
    base = base ? base + 1 : save;
    if (save && (!base[0] || !strcmp(base, ".") || !strcmp(base, "..")))
        return cli_usage_error("calibrate", "--save_path '%s': give DIR/PREFIX (the files are "
                               "PREFIX_deploy_model.onnx, ...: AMCT's form)", save);
    if (from_qdq) {
        if (model || dirs || cfg_path || batch || algo || eval_dirs || shape || wround)
            return cli_usage_error("calibrate", "--from_qdq takes only --save_path: the QAT "
                                   "model carries its scales");
        if (!save)
            return cli_usage_error("calibrate", "--from_qdq needs --save_path DIR/PREFIX");
        return import_qdq(from_qdq, save, json, argc, argv);
    }
    if (!model || !save || !dirs)
        return cli_usage_error("calibrate", "--model, --save_path and --data_dir are required");
    if (cfg_path && batch)
        return cli_usage_error("calibrate", "--calibration_config and --batch_num are "
                               "exclusive (give batch_num in the config)");
    nb_calibrate_opts o = {.model = model, .input_shape = shape, .save_path = save,
                           .data_dirs = dirs, .data_types = types, .eval_dirs = eval_dirs,
                           .config_path = cfg_path, .no_bias_correction = !bias_corr,
                           .cpu_nodes = cpu_nodes,
                           .progress = show_progress ? on_progress : NULL, .warn = on_warn,
                           .on_model = on_model};
    if (algo && !(o.algo_set = nb_act_algo_parse(algo, &o.algo)))
        return cli_usage_error("calibrate", "--algo is ifmr, hfmg, minmax, percentile, kl "
                               "or auto, not '%s'", algo);
    if (wround && !(o.weight_round_set = nb_weight_round_parse(wround, &o.weight_round)))
        return cli_usage_error("calibrate", "--weight_round is nearest or adaround, not '%s'",
                               wround);
    if (batch && !strcmp(batch, "all")) {
        o.batch_num = -1; /* every batch: the fewest files of a folder */
    } else if (batch) {
        char *end;
        errno = 0;
        long b = strtol(batch, &end, 10);
        if (errno || *end || end == batch || b < 1 || b > 1000000)
            return cli_usage_error("calibrate", "--batch_num is a whole number from 1 or all, "
                                   "not '%s'", batch);
        o.batch_num = (int)b;
    }
    int rc = rec_start_model("calibrate", model, shape, argc, argv);
    if (rc)
        return rc;
    /* the three files are written as NAME.PID.part, then renamed: Ctrl-C removes the parts */
    static const char *const kinds[3] = {"_quant_record.txt", "_fake_quant_model.onnx",
                                         "_deploy_model.onnx"};
    for (int i = 0; i < 3; i++) {
        char final[4400], part[4500];
        snprintf(final, sizeof final, "%s%s", save, kinds[i]);
        nb_part_path(final, part, sizeof part);
        cli_cleanup_add(part);
    }
    nb_status st = {0};
    nb_calibrate_result r;
    nb_err e = nb_calibrate(&o, &r, &st);
    cli_cleanup_clear();
    if (e) {
        nb_calibrate_result_free(&r);
        return cli_error(&st);
    }
    record_result(&r, algo, cfg_path, bias_corr,
                  wround ? nb_weight_round_name(o.weight_round) : NULL);
    rc = 0;
    if (json) {
        rc = cli_json_out("calibrate", nb_calibrate_json(&r));
    } else {
        print_text(&r, model, dirs, eval_dirs);
    }
    nb_calibrate_result_free(&r);
    return rc;
}
