/* nanobench estimate: sizes, op types and unsupported ops of a model on the Nano. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nb/estimate.h"
#include "nb/quant.h"
#include "nb/ref.h"

static void help(void)
{
    printf("usage: nanobench estimate -m MODEL.onnx [-p] [--json] [--input_shape \"name:d0,d1;...\"]\n"
           "                          [--soc_version Ascend035A|Ascend035B] [--weight_bits 8|4]\n"
           "                          [--input_fp16_nodes \"x;y\"] [--output_type FP16|FP32]\n"
           "                          [--out_nodes \"node:0;...\"] [--cpu_nodes \"a;b\"]\n"
           "Prints the vendor's five items (TOTAL_WEIGHT_SIZE, TOTAL_MEM_SIZE, TOTAL_EXEOM_SIZE,\n"
           "TOTAL_NET_OP_TYPE, NOT_SUPPORT_OP_TYPE) from the compiler's own lowering and memory\n"
           "plan, with MACs, the activation arena against its lower bound, the rewrites applied\n"
           "and the ops inserted; -p adds one row per NPU task; --json prints it all as JSON,\n"
           "with arena_map: each arena tensor's offset, bytes and first/last task index.\n"
           "--input_fp16_nodes and --output_type are ATC's: a float input not listed arrives as\n"
           "float32 and takes a Cast (default: every float input is fp16), FP32 outputs take one.\n"
           "--out_nodes is ATC's too: the graph cut at those outputs, estimated as atc compiles\n"
           "it (hey_jarvis cut at its first-stage score: the exeom's size, not the whole's).\n"
           "--cpu_nodes is atc's (nanobench's): those nodes on the MCU's CPU, in float32.\n"
           "The op-support table is share/ops.tsv ($NANOBENCH_SHARE to use another).\n");
}

int cmd_estimate(int argc, char **argv)
{
    const char *model = NULL, *shape = NULL, *soc = "Ascend035A", *fp16_nodes = NULL,
               *out_nodes = NULL, *cpu_nodes = NULL;
    bool out_fp32 = false;
    bool per_layer = false, json = false;
    int bits = 8;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        if ((r = cli_opt(argc, argv, &i, "-m", &v)) || (r = cli_opt(argc, argv, &i, "--model", &v))) {
            if (r < 0 || model)
                return cli_usage_error("estimate", "-m needs one model");
            model = v;
        } else if ((r = cli_opt(argc, argv, &i, "--input_shape", &v))) {
            if (r < 0)
                return cli_usage_error("estimate", "--input_shape needs a value");
            shape = v;
        } else if ((r = cli_opt(argc, argv, &i, "--soc_version", &v))) {
            if (r < 0 || (strcmp(v, "Ascend035A") && strcmp(v, "Ascend035B")))
                return cli_usage_error("estimate", "--soc_version is Ascend035A or Ascend035B");
            soc = v;
        } else if ((r = cli_opt(argc, argv, &i, "--weight_bits", &v))) {
            if (r < 0 || (strcmp(v, "8") && strcmp(v, "4")))
                return cli_usage_error("estimate", "--weight_bits is 8 or 4");
            bits = v[0] - '0';
        } else if ((r = cli_opt(argc, argv, &i, "--input_fp16_nodes", &v))) {
            if (r < 0)
                return cli_usage_error("estimate", "--input_fp16_nodes needs \"name;name2\"");
            fp16_nodes = v;
        } else if ((r = cli_opt(argc, argv, &i, "--output_type", &v))) {
            if (r < 0 || (strcmp(v, "FP16") && strcmp(v, "FP32")))
                return cli_usage_error("estimate", "--output_type is FP16 or FP32");
            out_fp32 = !strcmp(v, "FP32");
        } else if ((r = cli_opt(argc, argv, &i, "--cpu_nodes", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("estimate", "--cpu_nodes needs \"node;node2\"");
            cpu_nodes = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out_nodes", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("estimate", "--out_nodes needs \"node:index;...\"");
            out_nodes = v;
        } else if (!strcmp(argv[i], "-p")) {
            per_layer = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if ((r = cli_model_arg("estimate", argv[i], &model))) {
            return r;
        }
    }
    if (!model)
        return cli_usage_error("estimate", "no model given (-m MODEL.onnx)");
    int rc = rec_start_model("estimate", model, shape, argc, argv);
    if (rc)
        return rc;
    rec_param("soc_version", "%s", soc);
    rec_param("weight_bits", "%d", bits);
    nb_status st = {0};
    nb_load_opts lo = {.input_shape = shape, .weights_in_place = true};
    nb_model *m = NULL;
    nb_op_table ops = {0};
    nb_estimate e = {0};
    char *note = NULL; /* the inputs whose dynamic batch is taken as 1 */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (nb_ref_load(model, &lo, &m, &st) || nb_op_table_load(nb_op_table_default_path(), &ops, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    /* a dynamic batch (dim 0) of an input whose other dims are known is taken as 1, as the
       vendor's estimate does for a single inference; the report says so */
    char *all = NULL;
    if (nb_batch_one_shape(m, shape, &all, &note, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    int fixed = all != NULL;
    if (fixed) {
        nb_model_free(m);
        m = NULL;
        lo.input_shape = all;
        if (nb_ref_load(model, &lo, &m, &st)) {
            free(all);
            rc = cli_error(&st);
            goto out;
        }
        rec_param("batch_taken_as_1", "%s", note);
    }
    /* a Q/DQ (QAT) model: estimated as atc compiles it, the pairs imported as AscendQuant and
       int8 weights (nb_read_npu_input), not as Q/DQ tasks */
    bool qdq = nb_graph_has_qdq(m->graph);
    if (out_nodes)
        rec_param("out_nodes", "%s", out_nodes);
    if (qdq || out_nodes) { /* as atc reads it: the pairs imported, the graph cut */
        char work[] = "/tmp/nanobench_estimate.XXXXXX";
        nb_npu_input in = {0};
        nb_load_opts lq = {.input_shape = all ? all : shape};
        bool made = mkdtemp(work) != NULL;
        nb_err qe = made ? nb_read_npu_input(model, lq.input_shape, out_nodes, work, &in, &st)
                         : nb_fail(&st, NB_ERR_IO, "cannot make a work folder in /tmp");
        if (made)
            nb_remove_tree(work);
        nb_model_free(m);
        m = NULL;
        if (!qe && !(qe = nb_model_load_mem(in.onnx, in.len, model, NULL, &lq, &m, &st)))
            qe = nb_ref_fold(m, &st);
        nb_npu_input_free(&in);
        if (qe) {
            free(all);
            rc = cli_error(&st);
            goto out;
        }
    }
    free(all);
    rec_model(m);
    nb_npu_opts o = {.weight_bits = bits, .soc_version = soc, .input_fp16_nodes = fp16_nodes,
                     .output_fp32 = out_fp32, .cpu_nodes = cpu_nodes};
    if (cpu_nodes)
        rec_param("cpu_nodes", "%s", cpu_nodes);
    if (nb_estimate_model(m, &ops, &o, &e, &st)) {
        nb_prefix(&st, "%s", model);
        rc = cli_error(&st);
        goto out;
    }
    if (qdq && !nb_estimate_note(&e, "a Q/DQ (QAT) model: estimated as atc compiles it (each "
                                 "pair an AscendQuant, the weights int8)")) {
        nb_fail(&st, NB_ERR_NOMEM, "out of memory");
        rc = cli_error(&st);
        goto out;
    }
    bool noted = !note || nb_estimate_note(&e, "dynamic batch of %s taken as 1 "
                                              "(--input_shape to choose)", note);
    if (!noted) {
        nb_fail(&st, NB_ERR_NOMEM, "out of memory");
        rc = cli_error(&st);
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (json) {
        nb_estimate_json(&e, stdout);
    } else {
        printf("model:               %s (opset %d, %s)\n", model, m->opset, soc);
        nb_estimate_print(&e, stdout, per_layer);
        printf("estimated in %.1f ms\n", ms);
    }
    rec_metric("TOTAL_WEIGHT_SIZE", (double)e.weight_bytes, "B");
    rec_metric("TOTAL_MEM_SIZE", (double)e.mem_bytes, "B");
    rec_metric("TOTAL_EXEOM_SIZE", (double)e.exeom_bytes, "B");
    rec_metric("arena", (double)e.arena.arena, "B");
    rec_metric("arena_lower_bound", (double)e.arena.lower_bound, "B");
    rec_metric("macs", (double)e.macs, "");
    rec_metric("not_supported_op_types", e.n_unsupported, "");
    rec_metric("estimate_ms", ms, "ms");
out:
    free(note);
    nb_estimate_free(&e);
    nb_op_table_free(&ops);
    nb_model_free(m);
    return rc;
}
