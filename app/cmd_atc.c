/* nanobench atc: the vendor's compiler command line (issue 5).
 *
 * The flag checks with ATC's E-codes (../shared/docs/facts/compile.md), the input (a deploy
 * model or Q/DQ pairs, read into the float form the lowering takes), the refusal of float
 * cube ops and of ops the NPU cannot run (all listed, unless --out_nodes cuts them away),
 * the lowering shared with the estimate, then NAME.exeom and NAME.dbg.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nb/estimate.h"
#include "nb/exeom.h"
#include "nb/quant.h"
#include "nb/ref.h"

static void help(void)
{
    printf("usage: nanobench atc --mode=30 --framework=5 --soc_version=Ascend035A --model=M.onnx\n"
           "                     --output=NAME --input_fp16_nodes=\"x;y\" --output_type=FP16\n"
           "                     [--input_shape=\"x:1,16,96;y:...\"] [--out_nodes=\"node:0;...\"]\n"
           "                     [--log=debug|info|warning|error|null]\n"
           "                     [--nb_input_scale=\"x:2^-15;...\"]\n"
           "The vendor's ATC command line for the Nano (mode 30). The model is the quantized\n"
           "one: nanobench calibrate's PREFIX_deploy_model.onnx, or QuantizeLinear /\n"
           "DequantizeLinear pairs. Every float input must be in --input_fp16_nodes and float\n"
           "outputs leave as FP16. --out_nodes cuts the graph at those outputs (the first\n"
           "stage of a model whose tail the NPU cannot run). Writes NAME.exeom (share/doc/\n"
           "exeom.md) and NAME.dbg (share/proto/dbg.proto); --log=info lists the passes.\n"
           "--nb_input_scale (a nanobench extension, not an ATC flag): the model computes\n"
           "with s x that input (s a power of two, 2^-24 .. 2^24) where fp16 would clamp its\n"
           "values, and takes s back before the outputs (docs/fp16-range.md); atc suggests\n"
           "a value when a calibrated range is beyond fp16's 65504.\n");
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

int cmd_atc(int argc, char **argv)
{
    const char *mode = NULL, *framework = NULL, *soc = NULL, *model = NULL, *output = NULL;
    const char *fp16 = NULL, *otype = NULL, *shape = NULL, *out_nodes = NULL, *log = "null";
    const char *scale = NULL;
    struct {
        const char *flag;
        const char **dst;
    } opts[] = {{"--mode", &mode},          {"--framework", &framework},
                {"--soc_version", &soc},    {"--model", &model},
                {"--output", &output},      {"--input_fp16_nodes", &fp16},
                {"--output_type", &otype},  {"--input_shape", &shape},
                {"--out_nodes", &out_nodes}, {"--log", &log},
                {"--nb_input_scale", &scale}};
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
    nb_status st = {0};
    nb_npu_input in = {0};
    nb_model *m = NULL;
    nb_op_table ops = {0};
    nb_estimate est = {0};
    nb_scale_plan plan = {0};
    nb_scale_advice *adv = NULL;
    int n_adv = 0;
    const char **act16 = NULL; /* the layers with int16 activations (dst_bits 16) */
    int n_act16 = 0;
    char work[4200] = "", work_a[4300], work_b[4300];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* a private folder for the Q/DQ conversion's files (not next to the model) */
    const char *tmpbase = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/nanobench-atc.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(work)) {
        rc = cli_fail(2, "%s: cannot make a scratch folder: %s", work, strerror(errno));
        work[0] = 0;
        goto out;
    }
    snprintf(work_a, sizeof work_a, "%s/qdq_stripped.onnx", work);
    snprintf(work_b, sizeof work_b, "%s/qdq_deploy.onnx", work);
    cli_cleanup_add(work_a);
    cli_cleanup_add(work_b);
    cli_cleanup_add(work);
    nb_err re = nb_read_npu_input(model, shape, out_nodes, work, &in, &st);
    remove(work_a), remove(work_b), rmdir(work);
    work[0] = 0;
    cli_cleanup_clear();
    if (re) {
        rc = cli_error(&st);
        goto out;
    }
    nb_load_opts lo = {.input_shape = shape};
    if (nb_model_load_mem(in.onnx, in.len, model, NULL, &lo, &m, &st) || nb_ref_fold(m, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    const nb_graph *g = m->graph;
    /* --input_shape names, --input_fp16_nodes complete, --output_type present */
    if (shape) {
        nb_shape_override *ov = NULL;
        int nov = 0;
        if (!nb_parse_input_shape(shape, &ov, &nov, &st))
            for (int i = 0; i < nov && !rc; i++)
                if (nb_graph_find(g, ov[i].name) < 0)
                    rc = cli_fail(2, "E10001: --input_shape names '%s', which is not an input "
                                  "of %s", ov[i].name, model);
        nb_shape_overrides_free(ov, nov);
        if (rc)
            goto out;
    }
    for (int i = 0; i < g->n_inputs; i++) { /* a dim of 0: nothing for the NPU to run */
        const nb_value *v = &g->values[g->inputs[i]];
        for (int d = 0; d < v->rank; d++)
            if (v->dims[d] == 0) {
                rc = cli_fail(2, "E10002: input '%s' has a dim of 0 (dim %d): the NPU runs "
                              "tensors of at least one element", v->name, d);
                goto out;
            }
    }
    char missing[1024] = "";
    for (int i = 0; i < g->n_inputs; i++) {
        const nb_value *v = &g->values[g->inputs[i]];
        if ((v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16) && !nb_list_has(fp16, v->name, strlen(v->name)))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s'%s'",
                     missing[0] ? ", " : "", v->name);
    }
    if (missing[0]) {
        rc = cli_fail(2, "E10001: --input_fp16_nodes must name every float input; missing: %s",
                      missing);
        goto out;
    }
    /* an entry that names no input: the lowering refuses it (check_inputs) */
    bool float_out = false;
    for (int i = 0; i < g->n_outputs; i++) {
        nb_dtype d = g->values[g->outputs[i]].dtype;
        float_out |= d == NB_FLOAT || d == NB_FLOAT16;
    }
    if (float_out && !otype) {
        rc = cli_fail(2, "E10004: --output_type=FP16 is required: %s has float outputs", model);
        goto out;
    }
    /* every cube op quantized: a float one cannot run on the cube (s16/s8/s4 only) */
    char unq[1024] = "";
    int n_unq = 0, n_q = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const nb_node *nd = &g->nodes[i];
        static const char *const cube[] = {"Conv", "ConvTranspose", "MatMul", "Gemm", "LSTM",
                                           "GRU"};
        bool is_cube = false, quantized = false;
        for (size_t k = 0; k < sizeof cube / sizeof cube[0]; k++)
            is_cube |= !strcmp(nd->op_type, cube[k]);
        for (int k = 0; is_cube && k < in.n_layers && !quantized; k++)
            quantized = !strcmp(in.layers[k].node, nd->name);
        n_q += quantized;
        if (is_cube && !quantized && n_unq++ < 8)
            snprintf(unq + strlen(unq), sizeof unq - strlen(unq), "%s'%s' (%s)",
                     unq[0] ? ", " : "", nd->name, nd->op_type);
    }
    if (n_unq) {
        rc = cli_fail(2, "%s: %d cube op%s need%s int8: run calibration first (nanobench "
                      "calibrate): %s%s", model, n_unq, n_unq == 1 ? "" : "s",
                      n_unq == 1 ? "s" : "", unq, n_unq > 8 ? ", ..." : "");
        goto out;
    }
    /* int16 activations (a layer's dst_bits 16): the cube's s16 x s8 for a Conv, MatMul or
       Gemm's x; an RNN's x and state enter its cube task as int8 */
    act16 = calloc((size_t)in.n_layers + 1, sizeof *act16);
    if (!act16) {
        rc = cli_fail(1, "out of memory");
        goto out;
    }
    for (int k = 0; k < in.n_layers; k++) {
        if (in.layers[k].act_bits != 16)
            continue;
        if (in.layers[k].r) {
            rc = cli_fail(2, "%s: layer '%s' (LSTM/GRU) has int16 activations: the compiler "
                          "runs an RNN's input and state as int8 (calibrate it with dst_type "
                          "INT8)", model, in.layers[k].node);
            goto out;
        }
        act16[n_act16++] = in.layers[k].node;
    }
    /* fp16 range: calibrated ranges beyond 65504, and what --nb_input_scale would do */
    if (nb_input_scale_advise(m, in.layers, in.n_layers, &adv, &n_adv, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    if (scale && nb_input_scale_apply(m, in.layers, in.n_layers, scale, &plan, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    for (int i = 0; i < n_adv; i++) {
        const nb_scale_advice *a = &adv[i];
        double given = a->input[0] ? nb_scale_plan_input(&plan, a->input) : 0;
        if (!a->input[0])
            fprintf(stderr, "nanobench: warning: fp16 range: %s's input was calibrated to "
                    "%.3g, beyond fp16's 65504, and no cube op before it could take a scale: "
                    "--nb_input_scale cannot help\n", a->layer, a->range);
        else if (!given || given > a->suggest)
            fprintf(stderr, "nanobench: warning: fp16 range: %s's input was calibrated to "
                    "%.3g, beyond fp16's 65504: the fp16 ops before it clamp%s; "
                    "--nb_input_scale=\"%s:2^%d\" (a nanobench extension, not an ATC flag) "
                    "brings it to %.0f%s\n", a->layer, a->range,
                    given ? " at the scale given" : "", a->input, (int)lround(log2(a->suggest)),
                    a->range * pow(a->suggest, a->power),
                    a->undoable ? "" : " (but its scale cannot be taken back before every "
                                       "output: atc says where)");
    }
    if (scale) {
        printf("nb_input_scale: %s: %d change%s, outputs as the model's%s\n", scale,
               plan.n_notes, plan.n_notes == 1 ? "" : "s",
               plan.n_reset ? " (some cube outputs left unscaled)" : "");
        bool notes = !strcmp(log, "info") || !strcmp(log, "debug");
        for (int i = 0; notes && i < plan.n_notes; i++)
            printf("[INFO] nb_input_scale: %s\n", plan.notes[i]);
    }
    if (nb_op_table_load(nb_op_table_default_path(), &ops, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    nb_npu_opts no = {.weight_bits = 8, .soc_version = soc, .input_fp16_nodes = fp16,
                      .act16_nodes = act16, .n_act16_nodes = n_act16};
    if (nb_estimate_model(m, &ops, &no, &est, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    /* --log=info: what each pass changed; debug: every task too (on stdout, as ATC) */
    bool info = !strcmp(log, "info") || !strcmp(log, "debug");
    for (int i = 0; info && i < est.g.n_rewrites; i++)
        printf("[INFO] pass: %s\n", est.g.rewrites[i]);
    if (info)
        printf("[INFO] pass: inserted %d AscendQuant, %d AscendDequant, %d Cast, %d TransData\n",
               est.g.n_quant, est.g.n_dequant, est.g.n_cast, est.g.n_transdata);
    for (int i = 0; !strcmp(log, "debug") && i < est.g.n_k; i++)
        printf("[DEBUG] task %d: %s (%s, %s)\n", i, est.g.k[i].name, est.g.k[i].op_type,
               est.g.k[i].unit == NB_TASK_CUBE ? "cube" : est.g.k[i].unit == NB_TASK_CPU ? "cpu"
                                                                                  : "vector");
    /* every op the NPU cannot run, with the table's reason */
    int n_cpu = 0;
    for (int i = 0; i < est.g.n_k; i++)
        n_cpu += est.g.k[i].unit == NB_TASK_CPU;
    if (n_cpu) { /* one line: every such op with its reason */
        size_t cap = 256, len = 0;
        for (int i = 0; i < est.g.n_k; i++)
            cap += strlen(est.g.k[i].name) + strlen(est.g.k[i].onnx_op) + 200;
        char *msg = malloc(cap);
        if (!msg) {
            rc = cli_fail(1, "out of memory");
            goto out;
        }
        len = (size_t)snprintf(msg, cap, "%s: %d op%s the NPU cannot run (cut %s away with "
                               "--out_nodes, or rewrite %s):", model, n_cpu,
                               n_cpu == 1 ? "" : "s", n_cpu == 1 ? "it" : "them",
                               n_cpu == 1 ? "it" : "them");
        for (int i = 0, k = 0; i < est.g.n_k && len < cap; i++)
            if (est.g.k[i].unit == NB_TASK_CPU)
                len += (size_t)snprintf(msg + len, cap - len, "%s %s (%s): %s", k++ ? ";" : "",
                                        est.g.k[i].name, est.g.k[i].onnx_op, est.g.k[i].reason);
        rc = cli_fail(2, "%s", msg);
        free(msg);
        goto out;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s.exeom", output);
    const char *slash = strrchr(output, '/');
    if (slash && slash != output) { /* the output's folder is made, as calibrate does */
        char dir[4200];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - output), output);
        if (nb_mkdir_p(dir) && errno != EEXIST) {
            rc = cli_fail(2, "--output %s: cannot make the folder: %s", output, strerror(errno));
            goto out;
        }
    }
    int64_t written = 0;
    char dbg[4200], tmp_x[4300], tmp_d[4300];
    snprintf(dbg, sizeof dbg, "%s.dbg", output);
    /* both files under this process's temporary names, then renamed as a pair (signals
       held): a reader sees the old pair or the new one; a kill leaves the previous good
       output, and the next run to NAME removes the killed run's temporaries */
    nb_remove_stale_tmps(path);
    nb_remove_stale_tmps(dbg);
    nb_tmp_path(path, tmp_x, sizeof tmp_x);
    nb_tmp_path(dbg, tmp_d, sizeof tmp_d);
    cli_cleanup_add_tmp(path);
    cli_cleanup_add_tmp(dbg);
    if (nb_exeom_write(tmp_x, m, &est, in.layers, in.n_layers, soc, &written, &st) ||
        nb_dbg_write(tmp_d, model, m, &est, tmp_x, scale ? &plan : NULL, &st) ||
        nb_publish_pair(tmp_x, path, tmp_d, dbg, &st)) {
        remove(tmp_x), remove(tmp_d);
        rc = cli_error(&st);
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("%s: %d quantized layer%s (%s), %d NPU tasks, %d tensors\n", model, n_q,
           n_q == 1 ? "" : "s",
           in.form == 1 ? "deploy model" : in.form == 2 ? "Q/DQ model" : "float", est.g.n_k,
           est.g.n_t);
    printf("TOTAL_WEIGHT_SIZE: %lld\nTOTAL_MEM_SIZE:    %lld\nTOTAL_EXEOM_SIZE:  %lld\n",
           (long long)est.weight_bytes, (long long)est.mem_bytes, (long long)written);
    printf("wrote %s\n      %s (%.0f ms)\n", path, dbg, ms);
    printf("ATC run success\n");
    rec_metric("exeom_bytes", (double)written, "B");
    rec_metric("compile_ms", ms, "ms");
    cli_cleanup_clear();
    rec_artifact("exeom", path);
    rec_artifact("dbg", dbg);
out:
    cli_cleanup_clear();
    if (work[0]) {
        remove(work_a), remove(work_b);
        rmdir(work);
    }
    nb_estimate_free(&est);
    nb_scale_plan_free(&plan);
    free(adv);
    free(act16);
    nb_op_table_free(&ops);
    nb_model_free(m);
    nb_npu_input_free(&in);
    return rc;
}
