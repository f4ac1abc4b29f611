/* nanobench atc: the vendor's compiler command line (issue 5).
 *
 * The flag checks with ATC's E-codes (../shared/docs/facts/compile.md), the input (a deploy
 * model or Q/DQ pairs, read into the float form the lowering takes), the refusal of float
 * cube ops and of ops the NPU cannot run (all listed, unless --out_nodes cuts them away),
 * the lowering shared with the estimate, then NAME.exeom and NAME.dbg.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "nb/estimate.h"
#include "nb/exeom.h"

static void help(void)
{
    printf("usage: nanobench atc --mode=30 --framework=5 --soc_version=Ascend035A --model=M.onnx\n"
           "                     --output=NAME --input_fp16_nodes=\"x;y\" --output_type=FP16\n"
           "                     [--input_shape=\"x:1,16,96;y:...\"] [--out_nodes=\"node:0;...\"]\n"
           "                     [--log=debug|info|warning|error|null]\n"
           "                     [--nb_input_scale=\"x:2^-15;...\"] [--cpu_nodes=\"a;b\"] [--json]\n"
           "The vendor's ATC command line for the Nano (mode 30). The model is the quantized\n"
           "one: nanobench calibrate's PREFIX_deploy_model.onnx, or QuantizeLinear /\n"
           "DequantizeLinear pairs. Every float input must be in --input_fp16_nodes and float\n"
           "outputs leave as FP16. --out_nodes cuts the graph at those outputs (the first\n"
           "stage of a model whose tail the NPU cannot run). Writes NAME.exeom (share/doc/\n"
           "exeom.md) and NAME.dbg (share/proto/dbg.proto); --log=info lists the passes.\n"
           "--nb_input_scale (a nanobench extension, not an ATC flag): the model computes\n"
           "with s x that input (s a power of two, 2^-24 .. 2^24) where fp16 would clamp its\n"
           "values, and takes s back before the outputs (docs/fp16-range.md); atc suggests\n"
           "a value when a calibrated range is beyond fp16's 65504.\n"
           "An op the NPU does not run, and the nodes of --cpu_nodes (a nanobench extension),\n"
           "run on the MCU's CPU in float32 inside the exeom (a CpuOnnx task, share/doc/\n"
           "exeom.md); a cube op placed there must be float: calibrate --cpu_nodes keeps it so.\n"
           "--json (nanobench's) prints the result as one JSON object instead of the text:\n"
           "the files, the tasks (cube, CPU), the three sizes in bytes.\n");
}

/* ATC's name rule for --model / --output: the file name is letters, digits, _ - . */
static bool good_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base)
        return false;
    for (const char *p = base; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    return true;
}

/* E10002 for a bad --input_shape: the bad part quoted. 0 when the syntax is good. */
static int check_shape_syntax(const char *shape)
{
    char *copy = strdup(shape), *save = NULL;
    if (!copy)
        return cli_fail(1, "out of memory");
    int rc = 0;
    for (char *part = strtok_r(copy, ";", &save); part && !rc; part = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(part, ':');
        bool ok = colon && colon != part && colon[1];
        for (char *p = colon ? colon + 1 : part; ok && *p; p++)
            ok = isdigit((unsigned char)*p) || (*p == ',' && p[1] && p[-1] != ',' && p[-1] != ':') ||
                 (*p == '-' && p[1] == '1');
        if (!ok)
            rc = cli_fail(2, "E10002: Value [%s] for parameter [--input_shape] is invalid. The "
                          "valid format is \"input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2\"",
                          part);
    }
    if (!rc && !strpbrk(shape, ":"))
        rc = cli_fail(2, "E10002: Value [%s] for parameter [--input_shape] is invalid. The valid "
                      "format is \"input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2\"", shape);
    free(copy);
    return rc;
}

static void on_warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "nanobench: warning: %s\n", msg);
}

/* What atc prints of the passes (ATC's --log): the --nb_input_scale changes (applied, not
 * with --json), with info each pass's rewrites and the ops inserted, with debug every task */
static void print_passes(const nb_compile_result *r, const char *scale, const char *log,
                         bool json)
{
    if (scale && r->plan.n_inputs > 0 && !json) { /* applied */
        printf("nb_input_scale: %s: %d change%s, outputs as the model's%s\n", scale,
               r->plan.n_notes, r->plan.n_notes == 1 ? "" : "s",
               r->plan.n_reset ? " (some cube outputs left unscaled)" : "");
        bool notes = !strcmp(log, "info") || !strcmp(log, "debug");
        for (int i = 0; notes && i < r->plan.n_notes; i++)
            printf("[INFO] nb_input_scale: %s\n", r->plan.notes[i]);
    }
    /* --log=info: what each pass changed; debug: every task too (on stdout, as ATC) */
    const nb_npu_graph *g = &r->est.g;
    bool info = !strcmp(log, "info") || !strcmp(log, "debug");
    for (int i = 0; info && i < g->n_rewrites; i++)
        printf("[INFO] pass: %s\n", g->rewrites[i]);
    if (info && g->n_k)
        printf("[INFO] pass: inserted %d AscendQuant, %d AscendDequant, %d Cast, %d TransData\n",
               g->n_quant, g->n_dequant, g->n_cast, g->n_transdata);
    for (int i = 0; !strcmp(log, "debug") && i < g->n_k; i++)
        printf("[DEBUG] task %d: %s (%s, %s)\n", i, g->k[i].name, g->k[i].op_type,
               g->k[i].unit == NB_TASK_CUBE ? "cube" : g->k[i].unit == NB_TASK_CPU ? "cpu"
                                                                                : "vector");
}

int cmd_atc(int argc, char **argv)
{
    const char *mode = NULL, *framework = NULL, *soc = NULL, *model = NULL, *output = NULL;
    const char *fp16 = NULL, *otype = NULL, *shape = NULL, *out_nodes = NULL, *log = "null";
    const char *scale = NULL, *cpu = NULL;
    bool json = false;
    struct {
        const char *flag;
        const char **dst;
    } opts[] = {{"--mode", &mode},          {"--framework", &framework},
                {"--soc_version", &soc},    {"--model", &model},
                {"--output", &output},      {"--input_fp16_nodes", &fp16},
                {"--output_type", &otype},  {"--input_shape", &shape},
                {"--out_nodes", &out_nodes}, {"--log", &log},
                {"--nb_input_scale", &scale}, {"--cpu_nodes", &cpu}};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        bool taken = false;
        if (!strcmp(argv[i], "--json")) { /* nanobench's: the result as one JSON object */
            json = true;
            continue;
        }
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !taken; k++) {
            const char *v;
            int r = cli_opt(argc, argv, &i, opts[k].flag, &v);
            if (r < 0)
                return cli_fail(2, "E10004: Value for parameter [%s] is empty", opts[k].flag);
            if (r > 0) {
                *opts[k].dst = v;
                taken = true;
            }
        }
        if (!taken)
            return cli_fail(2, "E10001: parameter [%s] is not an option of nanobench atc "
                            "(nanobench atc --help)", argv[i]);
    }
    /* the order ATC checks in: required values, the mode and soc pair, then each value */
    static const char *const required[] = {"--mode", "--framework", "--soc_version", "--model",
                                           "--output"};
    const char *const *vals[] = {&mode, &framework, &soc, &model, &output};
    for (int k = 0; k < 5; k++)
        if (!*vals[k] || !**vals[k])
            return cli_fail(2, "E10004: Value for parameter [%s] is empty (required)", required[k]);
    bool nano_soc = !strcmp(soc, "Ascend035") || !strcmp(soc, "Ascend035A") ||
                    !strcmp(soc, "Ascend035B");
    if (strcmp(mode, "30") || !nano_soc)
        return cli_fail(2, "E10055: Option soc_version [%s] and mode [%s] are invalid together: "
                        "mode 30 goes with Ascend035, Ascend035A or Ascend035B, and they with "
                        "mode 30", soc, mode);
    if (strcmp(framework, "5"))
        return cli_fail(2, "E10001: Value [%s] for parameter [--framework] is invalid: the Nano "
                        "takes 5 (ONNX)", framework);
    if (!good_name(model))
        return cli_fail(2, "E10001: Value [%s] for parameter [--model] is invalid: the file name "
                        "is letters, digits, '_', '-' and '.'", model);
    if (output[strlen(output) - 1] == '/')
        return cli_fail(2, "E10022: parameter [--output] has no file name: [%s]", output);
    if (!good_name(output))
        return cli_fail(2, "E10001: Value [%s] for parameter [--output] is invalid: the file name "
                        "is letters, digits, '_', '-' and '.'", output);
    if (strlen(output) > 4000)
        return cli_fail(2, "E10021: parameter [--output] is too long");
    if (otype && strcmp(otype, "FP16"))
        return cli_fail(2, "E10001: Value [%s] for parameter [--output_type] is invalid: the "
                        "Nano's float outputs are FP16", otype);
    if (strcmp(log, "debug") && strcmp(log, "info") && strcmp(log, "warning") &&
        strcmp(log, "error") && strcmp(log, "null"))
        return cli_fail(2, "E10001: Value [%s] for parameter [--log] is invalid: debug, info, "
                        "warning, error or null", log);
    int rc = shape ? check_shape_syntax(shape) : 0;
    if (rc)
        return rc;
    if (out_nodes && !*out_nodes)
        return cli_fail(2, "E10004: Value for parameter [--out_nodes] is empty");

    rc = rec_start_model("compile", model, shape, argc, argv);
    if (rc)
        return rc;
    rec_param("soc_version", "%s", soc);
    if (scale)
        rec_param("nb_input_scale", "%s", scale);
    if (cpu)
        rec_param("cpu_nodes", "%s", cpu);
    /* a private folder for the Q/DQ conversion's files (not next to the model) */
    char work[4200], path[4300];
    const char *tmpbase = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/nanobench-atc.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(work))
        return cli_fail(2, "%s: cannot make a scratch folder: %s", work, strerror(errno));
    snprintf(path, sizeof path, "%s/qdq_stripped.onnx", work);
    cli_cleanup_add(path);
    snprintf(path, sizeof path, "%s/qdq_deploy.onnx", work);
    cli_cleanup_add(path);
    cli_cleanup_add(work);
    /* Ctrl-C: this run's temporaries of the pair, never the previous NAME.exeom / NAME.dbg */
    snprintf(path, sizeof path, "%s.exeom", output);
    cli_cleanup_add_tmp(path);
    snprintf(path, sizeof path, "%s.dbg", output);
    cli_cleanup_add_tmp(path);
    nb_compile_opts o = {.model = model, .output = output, .soc_version = soc,
                         .input_fp16_nodes = fp16, .output_fp16 = otype != NULL,
                         .input_shape = shape, .out_nodes = out_nodes, .input_scale = scale,
                         .cpu_nodes = cpu,
                         .work_dir = work, .warn = on_warn};
    nb_status st = {0};
    nb_compile_result r;
    nb_err e = nb_compile(&o, &r, &st);
    rmdir(work);
    cli_cleanup_clear();
    print_passes(&r, scale, log, json);
    const nb_npu_graph *g = &r.est.g;
    if (e) {
        nb_compile_result_free(&r);
        return cli_error(&st);
    }
    rec_metric("exeom_bytes", (double)r.exeom_bytes, "B");
    rec_metric("compile_ms", r.ms, "ms");
    rec_artifact("exeom", r.exeom);
    rec_artifact("dbg", r.dbg);
    if (json) {
        json_t *jo = nb_compile_result_json(&r);
        nb_compile_result_free(&r);
        return cli_json_out("atc", jo);
    }
    printf("%s: %d quantized layer%s (%s), %d NPU tasks, %d tensors\n", model, r.n_quantized,
           r.n_quantized == 1 ? "" : "s",
           r.form == 1 ? "deploy model" : r.form == 2 ? "Q/DQ model" : "float", g->n_k, g->n_t);
    printf("TOTAL_WEIGHT_SIZE: %lld\nTOTAL_MEM_SIZE:    %lld\nTOTAL_EXEOM_SIZE:  %lld\n",
           (long long)r.est.weight_bytes, (long long)r.est.mem_bytes, (long long)r.exeom_bytes);
    printf("wrote %s\n      %s (%.0f ms)\n", r.exeom, r.dbg, r.ms);
    printf("ATC run success\n");
    nb_compile_result_free(&r);
    return 0;
}
