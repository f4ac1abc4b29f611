/* The bring-up page (nb_report_write, include/nb/report.h) from a hand-made bring-up folder:
 * the summary's numbers as the page prints them (%.5f cosines, %.1f dB), the estimate's op
 * histogram as its table, HTML escaping of names, the sections whose files are gone counted
 * and said, no plot without gnuplot, and the errors: a folder without summary.json, an
 * output that cannot be written (no partial file left). The page in a browser is checked by
 * tests/test_report.sh. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "nb/report.h"
#include "tmpdir.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static void test_page(void **state)
{
    (void)state;
    char dir[512], log[600], path[700], out[600];
    snprintf(dir, sizeof dir, "%s/bu", tmpdir);
    snprintf(log, sizeof log, "%s/log", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mkdir(log, 0755), 0);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    /* cosine 0.98765432 prints as 0.98765 (%.5f), 0.5 as 0.50000; SQNR 20.04 dB as 20.0 */
    write_text(path, "{\"model\": \"kws<v2>.onnx\", \"soc_version\": \"Nano\", \"wall_s\": 1.234,"
                     " \"outputs\": [{\"name\": \"y\", \"shape\": \"1x4\", \"cosine_mean\": "
                     "0.98765432, \"cosine_worst\": 0.5, \"sqnr_db_mean\": 20.04, \"per_input\":"
                     " [{}, {}], \"pooled_cosine\": 0.9912345, \"pooled_sqnr_db\": 17.96},"
                     " {\"name\": \"score\", \"shape\": \"1x1\", \"numel\": 1, \"cosine_mean\": 1,"
                     " \"cosine_worst\": 1, \"pooled_cosine\": 0.5, \"per_input\": [{}, {}]}]}");
    snprintf(path, sizeof path, "%s/1-estimate.out", log);
    write_text(path, "{\"TOTAL_NET_OP_TYPE\": {\"Conv\": 3, \"Relu\": 2}, \"TOTAL_WEIGHT_SIZE\":"
                     " 1024, \"TOTAL_MEM_SIZE\": 2048, \"TOTAL_EXEOM_SIZE\": 4096}");
    snprintf(out, sizeof out, "%s/page.html", tmpdir);
    const char *path_env = getenv("PATH");
    char *saved = path_env ? strdup(path_env) : NULL;
    setenv("PATH", "/nonexistent-nb", 1); /* no gnuplot: the tables stand alone */
    nb_report_src a = {.dir = dir, .label = "bringup 7"};
    nb_report_opts o = {&a, NULL, NULL, out, NULL};
    nb_report_result r;
    nb_status st = {0};
    nb_err e = nb_report_write(&o, &r, &st);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    assert_int_equal(e, NB_OK);
    assert_int_equal(r.n_plots, 0);
    assert_false(r.gnuplot);
    /* log/2-calibrate.out, log/4-run-0.out and log/6-compare.out are not there */
    assert_int_equal(r.n_gone, 3);
    char *html = read_text(out);
    assert_non_null(strstr(html, "<title>nanobench report: bringup 7</title>"));
    assert_non_null(strstr(html, "kws&lt;v2&gt;.onnx"));
    assert_null(strstr(html, "kws<v2>"));
    assert_non_null(strstr(html, "id=\"out-cos-mean-0-0\">0.98765<"));
    assert_non_null(strstr(html, "id=\"out-cos-worst-0-0\">0.50000<"));
    assert_non_null(strstr(html, "id=\"out-sqnr-mean-0-0\">20.0<"));
    /* the inputs together: 0.9912345 prints 0.99123, 17.96 dB 18.0; a score's note */
    assert_non_null(strstr(html, "id=\"out-pooled-cos-0-0\">0.99123<"));
    assert_non_null(strstr(html, "id=\"out-pooled-sqnr-0-0\">18.0<"));
    assert_non_null(strstr(html, "id=\"out-pooled-cos-0-1\">0.50000<"));
    assert_non_null(strstr(html, "An output of one value per input"));
    assert_non_null(strstr(html, "<td>Conv</td><td>3</td>"));
    assert_non_null(strstr(html, "<td>Relu</td><td>2</td>"));
    assert_non_null(strstr(html, "log/6-compare.out is gone"));
    assert_non_null(strstr(html, "gnuplot did not run"));
    assert_non_null(strstr(html, "</html>"));
    free(html);
}

static void test_errors(void **state)
{
    (void)state;
    char dir[512], out[600], part[700];
    snprintf(dir, sizeof dir, "%s/empty", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(out, sizeof out, "%s/none.html", tmpdir);
    nb_report_src a = {.dir = dir, .label = "x"};
    nb_report_opts o = {&a, NULL, NULL, out, NULL};
    nb_status st = {0};
    assert_int_equal(nb_report_write(&o, NULL, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "empty: no summary.json"));
    assert_int_not_equal(access(out, F_OK), 0);
    /* a folder with a summary, written where no folder is: NB_ERR_IO naming the file */
    char sum[700];
    snprintf(sum, sizeof sum, "%s/summary.json", dir);
    write_text(sum, "{\"model\": \"m.onnx\"}");
    snprintf(out, sizeof out, "%s/no/such/dir/p.html", tmpdir);
    assert_int_equal(nb_report_write(&o, NULL, &st), NB_ERR_IO);
    assert_non_null(strstr(st.msg, "no/such/dir/p.html: cannot write"));
    snprintf(part, sizeof part, "%s/no", tmpdir);
    assert_int_not_equal(access(part, F_OK), 0);
    /* a FIFO (or a device, a link) is not replaced by the page; nor the folder's summary */
    snprintf(out, sizeof out, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(out, 0600), 0);
    assert_int_equal(nb_report_write(&o, NULL, &st), NB_ERR_IO);
    assert_non_null(strstr(st.msg, "fifo: exists and is not a regular file"));
    struct stat sb;
    assert_int_equal(lstat(out, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    o.out = sum;
    assert_int_equal(nb_report_write(&o, NULL, &st), NB_ERR_ARG);
    assert_non_null(strstr(st.msg, "the bring-up's own summary.json"));
    /* a summary.json that is not a JSON object: said so, not "no summary.json" */
    write_text(sum, "[1, 2");
    snprintf(out, sizeof out, "%s/p2.html", tmpdir);
    o.out = out;
    assert_int_equal(nb_report_write(&o, NULL, &st), NB_ERR_FORMAT);
    assert_non_null(strstr(st.msg, "not a bring-up summary"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
