/* nanobench estimate: sizes, op types and unsupported ops of a model on the Nano. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nb/estimate.h"
#include "nb/quant.h"
#include "nb/ref.h"

static void on_model(void *user, const nb_model *m)
{
    (void)user;
    rec_model(m);
}

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
    if (out_nodes)
        rec_param("out_nodes", "%s", out_nodes);
    if (cpu_nodes)
        rec_param("cpu_nodes", "%s", cpu_nodes);
    nb_status st = {0};
    nb_estimate_opts o = {.model = model, .input_shape = shape, .out_nodes = out_nodes,
                          .npu = {.weight_bits = bits, .soc_version = soc,
                                  .input_fp16_nodes = fp16_nodes, .output_fp32 = out_fp32,
                                  .cpu_nodes = cpu_nodes},
                          .on_model = on_model};
    nb_estimate_result r;
    if (nb_estimate_file(&o, &r, &st)) {
        nb_estimate_result_free(&r);
        return cli_error(&st);
    }
    const nb_estimate e = r.e;
    if (r.batch_note)
        rec_param("batch_taken_as_1", "%s", r.batch_note);
    if (json) {
        if (nb_estimate_json(&e, stdout) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
            nb_estimate_result_free(&r);
            return cli_fail(2, "estimate --json: cannot write to standard output: %s",
                            strerror(errno));
        }
    } else {
        printf("model:               %s (opset %d, %s)\n", model, r.m->opset, soc);
        nb_estimate_print(&e, stdout, per_layer);
        printf("estimated in %.1f ms\n", r.ms);
    }
    rec_metric("TOTAL_WEIGHT_SIZE", (double)e.weight_bytes, "B");
    rec_metric("TOTAL_MEM_SIZE", (double)e.mem_bytes, "B");
    rec_metric("TOTAL_EXEOM_SIZE", (double)e.exeom_bytes, "B");
    rec_metric("arena", (double)e.arena.arena, "B");
    rec_metric("arena_lower_bound", (double)e.arena.lower_bound, "B");
    rec_metric("macs", (double)e.macs, "");
    rec_metric("not_supported_op_types", e.n_unsupported, "");
    rec_metric("estimate_ms", r.ms, "ms");
    nb_estimate_result_free(&r);
    return 0;
}
