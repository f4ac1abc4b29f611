#define _POSIX_C_SOURCE 200809L
/* The engines' own result serializations and writers (issue 18: each step's result turns
 * into the JSON the CLI prints, the workbench reads and the Python module returns, in its
 * engine): what calibrate's JSON says of its layers (the worst three, the algorithms once,
 * the CPU advice), the run's outputs written with safe unique names, and the bring-up's
 * text summary from a summary.json object. Every expected value is worked by hand here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "nb/quant.h"
#include "nb/report.h"
#include "nb/run.h"
#include "tmpdir.h"

static nb_calib_layer_report layer(const char *name, nb_act_algo algo, double out_sqnr,
                                   bool evaluated)
{
    nb_calib_layer_report l;
    memset(&l, 0, sizeof l);
    l.name = name;
    l.op_type = "Conv";
    l.algo = algo;
    l.out_sqnr = out_sqnr;
    l.out_cos = 1.0 - 1.0 / (out_sqnr + 100.0);
    l.evaluated = evaluated;
    l.act_bits = l.weight_bits = 8;
    l.w_sqnr = NAN;
    return l;
}

/* Five layers: SQNRs 30, 12, NaN (not evaluated), 41, 12.5 dB -> the worst three, lowest
 * first, are b (12), e (12.5), a (30); d (41) and c (none) are left out. Algorithms ifmr,
 * hfmg, ifmr, kl, hfmg -> "ifmr,hfmg,kl", each once in layer order. The CPU advice names
 * the nodes given and the one layer that suggests the CPU (e: 0.75 of its input lost at
 * int16 on its worst input, 3 inputs over 20%). */
static void test_calibrate_json(void **state)
{
    (void)state;
    nb_calib_layer_report ls[5] = {
        layer("a", NB_ACT_IFMR, 30, true), layer("b", NB_ACT_HFMG, 12, true),
        layer("c", NB_ACT_IFMR, NAN, false), layer("d", NB_ACT_KL, 41, true),
        layer("e", NB_ACT_HFMG, 12.5, true)};
    ls[4].suggests_cpu = true;
    ls[4].zeroed16 = 0.75;
    ls[4].zeroed16_over = 3;
    nb_calibrate_result r;
    memset(&r, 0, sizeof r);
    r.n_layers = 5;
    r.layers = ls;
    r.batch_num = 7;
    r.output_sqnr_db = INFINITY; /* JSON has no infinity: null */
    char nodes[] = "Mul_3;e;Log_4";
    r.cpu_nodes = nodes;
    json_t *o = nb_calibrate_json(&r);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "algorithms")), "ifmr,hfmg,kl");
    assert_int_equal(json_integer_value(json_object_get(o, "batches")), 7);
    assert_true(json_is_null(json_object_get(o, "output_sqnr_db")));
    const json_t *w = json_object_get(o, "worst_layers");
    assert_int_equal(json_array_size(w), 3);
    const char *want[3] = {"b", "e", "a"};
    const double sq[3] = {12, 12.5, 30};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(json_string_value(json_object_get(json_array_get(w, i), "layer")),
                            want[i]);
        assert_float_equal(json_real_value(json_object_get(json_array_get(w, i), "sqnr_db")),
                           sq[i], 1e-12);
    }
    const json_t *a = json_object_get(o, "cpu_advice");
    assert_string_equal(json_string_value(json_object_get(a, "nodes")), "Mul_3;e;Log_4");
    assert_int_equal(json_array_size(json_object_get(a, "layers")), 1);
    const json_t *al = json_array_get(json_object_get(a, "layers"), 0);
    assert_string_equal(json_string_value(json_object_get(al, "layer")), "e");
    assert_float_equal(json_real_value(json_object_get(al, "zeroed_int16_worst_input")), 0.75,
                       1e-12);
    assert_int_equal(json_integer_value(json_object_get(al, "zeroed_int16_inputs_over")), 3);
    json_decref(o);
    /* no layer at all: the algorithms say so, no worst layer, no advice */
    r.n_layers = 0;
    r.cpu_nodes = NULL;
    o = nb_calibrate_json(&r);
    assert_string_equal(json_string_value(json_object_get(o, "algorithms")), "none (no layer)");
    assert_int_equal(json_array_size(json_object_get(o, "worst_layers")), 0);
    assert_true(json_is_null(json_object_get(o, "cpu_advice")));
    json_decref(o);
}

/* Four outputs named "a/b", "a:b", "a_b_2" and "": nb_safe_name turns '/' and ':' into '_',
 * so the first is a_b.npy, the second (alike) a_b_2.npy (infer's rule: _2, _3, ... the first
 * free), the third, whose own name a_b_2 is then taken, a_b_2_2.npy, the fourth output3.npy; each file holds its
 * values (a [2] float32 tensor: 1.5 -2, 3 4, 0.25 8). The run's JSON names each file. */
static void test_run_outputs(void **state)
{
    (void)state;
    nb_run_output outs[4];
    memset(outs, 0, sizeof outs);
    const char *names[4] = {"a/b", "a:b", "a_b_2", ""};
    const float vals[4][2] = {{1.5f, -2}, {3, 4}, {-1, 0.5f}, {0.25f, 8}};
    nb_status st = {0};
    for (int i = 0; i < 4; i++) {
        outs[i].io.name = (char *)names[i];
        int64_t d = 2;
        assert_int_equal(nb_tensor_new(NB_FLOAT, 1, &d, &outs[i].value, &st), NB_OK);
        memcpy(outs[i].value->data, vals[i], sizeof vals[i]);
    }
    nb_run_result r;
    memset(&r, 0, sizeof r);
    r.n_outputs = 4;
    r.outputs = outs;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/out/deeper", tmpdir); /* made when missing */
    assert_int_equal(nb_run_write_outputs(&r, dir, &st), NB_OK);
    const char *files[4] = {"a_b.npy", "a_b_2.npy", "a_b_2_2.npy", "output3.npy"};
    for (int i = 0; i < 4; i++) {
        char want[600];
        snprintf(want, sizeof want, "%s/%s", dir, files[i]);
        assert_string_equal(outs[i].file, want);
        nb_tensor *t = NULL;
        assert_int_equal(nb_npy_read(want, &t, &st), NB_OK);
        assert_int_equal(t->numel, 2);
        assert_memory_equal(t->data, vals[i], sizeof vals[i]);
        nb_tensor_free(t);
    }
    nb_run_opts o = {.exeom = "m.exeom"};
    json_t *j = nb_run_result_json(&o, &r);
    const json_t *jo = json_object_get(j, "outputs");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jo, 1), "name")), "a:b");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jo, 3), "name")),
                        "output3");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jo, 1), "file")),
                        outs[1].file);
    assert_true(json_is_null(json_object_get(j, "dump"))); /* no dump config */
    json_decref(j);
    /* a folder that cannot be made: NB_ERR_IO naming it, nothing written */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/a_b.npy/sub", dir);
    assert_int_equal(nb_run_write_outputs(&r, bad, &st), NB_ERR_IO);
    assert_non_null(strstr(st.msg, "a_b.npy/sub"));
    /* an output named as another's renamed file: "a_b_2" first, then "a/b" (a_b) and "a:b",
       whose a_b_2 is taken: a_b_3 (each name checked again after its rename) */
    const char *names2[3] = {"a_b_2", "a/b", "a:b"}, *files2[3] = {"a_b_2", "a_b", "a_b_3"};
    char dir2[512];
    snprintf(dir2, sizeof dir2, "%s/out2", tmpdir);
    for (int i = 0; i < 3; i++)
        outs[i].io.name = (char *)names2[i];
    r.n_outputs = 3;
    assert_int_equal(nb_run_write_outputs(&r, dir2, &st), NB_OK);
    for (int i = 0; i < 3; i++) {
        char want[600];
        snprintf(want, sizeof want, "%s/%s.npy", dir2, files2[i]);
        assert_string_equal(outs[i].file, want);
    }
    /* a folder where a file goes: refused before anything is written, the earlier a_b_2.npy
       left as it was (all or none, and never at the cost of an earlier file) */
    char in_way[600], old[600];
    snprintf(in_way, sizeof in_way, "%s/a_b.npy", dir2);
    assert_int_equal(unlink(in_way), 0);
    assert_int_equal(mkdir(in_way, 0700), 0);
    snprintf(old, sizeof old, "%s/a_b_2.npy", dir2);
    FILE *f = fopen(old, "w");
    fputs("earlier", f);
    fclose(f);
    assert_int_equal(nb_run_write_outputs(&r, dir2, &st), NB_ERR_IO);
    assert_non_null(strstr(st.msg, "a_b.npy: exists and is not a regular file"));
    char buf[16] = "";
    f = fopen(old, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "earlier");
    assert_string_equal(outs[0].file, "");
    /* a folder path too long for the names: NB_ERR_ARG, nothing written */
    char deep[1500];
    int at = snprintf(deep, sizeof deep, "%s", tmpdir);
    while (at < 1390)
        at += snprintf(deep + at, sizeof deep - (size_t)at, "/%.*s", 1390 - at > 150 ? 150 : 1390 - at,
                       "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                       "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                       "dd");
    assert_int_equal(nb_run_write_outputs(&r, deep, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "the output folder's path is too long"));
    char probe[1600];
    snprintf(probe, sizeof probe, "%s/a_b_2.npy", deep);
    assert_int_equal(access(probe, F_OK), -1);
    for (int i = 0; i < 4; i++)
        nb_tensor_free(outs[i].value);
}

/* The text summary from a summary.json object: the first line names the model's file and
 * the SoC with the wall time, TOTAL_NET_OP_TYPE lists the counts, a score output (one value)
 * gets its pooled cosine line, and a missing section prints without a crash. */
static void test_report_text(void **state)
{
    (void)state;
    json_error_t je;
    json_t *s = json_loads(
        "{\"model\": \"/m/kws.onnx\", \"soc_version\": \"Ascend035A\", \"out\": \"o\","
        " \"wall_s\": 2.25,"
        " \"estimate\": {\"TOTAL_WEIGHT_SIZE\": 4800, \"TOTAL_MEM_SIZE\": 10432,"
        "  \"TOTAL_EXEOM_SIZE\": 5616, \"TOTAL_NET_OP_TYPE\": {\"Conv\": 2, \"Relu\": 1},"
        "  \"NOT_SUPPORT_OP_TYPE\": {}},"
        " \"evaluation\": {\"count\": 4, \"available\": 4, \"source\": \"data_dir\"},"
        " \"outputs\": [{\"name\": \"score\", \"shape\": \"1x1\", \"numel\": 1,"
        "  \"sqnr_db_mean\": 40.04, \"sqnr_db_worst\": 31.96, \"max_abs_error\": 0.001,"
        "  \"pooled_cosine\": 0.999991, \"pooled_sqnr_db\": 37.5}]}",
        0, &je);
    assert_non_null(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    nb_report_text(s, f);
    fclose(f);
    assert_non_null(strstr(buf, "bringup    kws.onnx on Ascend035A: every stage ran in 2.2 s\n"));
    assert_non_null(strstr(buf, "           TOTAL_NET_OP_TYPE 2: Conv(2), Relu(1)\n"));
    assert_non_null(strstr(buf, "output     score [1x1], 4 inputs: SQNR mean 40.0 dB worst 32.0 dB"));
    assert_non_null(strstr(buf, "over the 4 inputs together: 0.99999, 37.5 dB\n"));
    assert_non_null(strstr(buf, "runs       not recorded\n"));
    free(buf);
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate_json),
        cmocka_unit_test(test_run_outputs),
        cmocka_unit_test(test_report_text),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
