/* nanobench bringup: the summary (app/bringup.h): the network-output metrics over the K
 * evaluation inputs through the engine (nb_cmp_over_inputs), fp16 saturation and the
 * calibration over the steps' JSON, summary.json and the one-screen text. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bringup.h"
#include "cli.h"
#include "nb/accucmp.h"
#include "nb/ir.h"

/* ---- the text summary ---- */

/* label into buf (len 20..): whole when it fits, else its head and tail with "..." between,
 * so that the numbers after a long label are never the part cut */
static void short_label(const char *label, char *buf, size_t len)
{
    size_t l = strlen(label), half = (len - 4) / 2;
    if (l < len)
        snprintf(buf, len, "%s", label);
    else
        snprintf(buf, len, "%.*s...%s", (int)half, label, label + l - half);
}

/* label, then text word-wrapped into WIDTH - LABEL columns on at most max lines (the last
 * one cut with "..." when it does not fit) */
static void put(const char *label, int max, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put(const char *label, int max, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (char *c = text; *c; c++) /* one line of plain text; NBSP stays for the layout */
        if (((unsigned char)*c < 32 && *c != NBSP) || *c == 127)
            *c = '?';
    const int w = WIDTH - LABEL;
    const char *p = text;
    for (int line = 0; line < max && *p; line++) {
        size_t n = strlen(p);
        printf("%-*s", LABEL, line ? "" : label);
        int cut = (int)n;
        if ((int)n > w && line == max - 1) {
            /* at a space: "..." never takes half of a number ("65504" shown as "6...") */
            cut = w - 3;
            while (cut > w / 2 && p[cut] != ' ')
                cut--;
            if (p[cut] != ' ')
                cut = w - 3;
        } else if ((int)n > w) {
            cut = w;
            while (cut > w / 2 && p[cut] != ' ')
                cut--;
            if (p[cut] != ' ')
                cut = w;
        }
        for (int i = 0; i < cut; i++)
            putchar(p[i] == NBSP ? ' ' : p[i]);
        printf("%s\n", cut < (int)n && line == max - 1 ? "..." : "");
        if (cut == (int)n || line == max - 1)
            return;
        p += cut;
        while (*p == ' ')
            p++;
    }
}

static const char *db_str(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "undefined");
    else if (isinf(v))
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, len, "%.1f dB", v);
    return buf;
}

const char *cos_str(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "undefined");
    else
        snprintf(buf, len, "%.5f", v);
    return buf;
}

/* "N: Op(c), Op(c)" of an estimate count object */
static void counts_text(const json_t *o, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "%zu", json_object_size(o));
    const char *k;
    const json_t *v;
    int i = 0;
    json_object_foreach((json_t *)o, k, v) {
        if (at >= len)
            break;
        at += (size_t)snprintf(buf + at, len - at, "%s%s(%lld)", i++ ? ", " : ": ", k,
                               (long long)json_integer_value(v));
    }
}

/* run ids as "45..49" or "45, 47" */
static void ids_text(const int64_t *ids, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && at < len; i++) {
        if (ids[i] <= 0) {
            at += (size_t)snprintf(buf + at, len - at, "%s-", at ? ", " : "");
            continue;
        }
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        if (j > i)
            at += (size_t)snprintf(buf + at, len - at, "%s%lld..%lld", at ? ", " : "",
                                   (long long)ids[i], (long long)ids[j]);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%lld", at ? ", " : "",
                                   (long long)ids[i]);
        i = j;
    }
}

static json_t *jid(int64_t id) { return id > 0 ? json_integer(id) : json_null(); }

static json_t *jids(const int64_t *ids, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, jid(ids[i]));
    return a;
}

/* "agrees at fp16's resolution" under an output that does (output_metrics's flag) */
static void fp16_resolution_line(const json_t *o)
{
    double steps = ceil(bu_num(o, "max_fp16_steps"));
    if (json_is_true(json_object_get(o, "agrees_at_fp16_resolution")))
        put("", 2, "agrees at fp16's resolution: every value within %.0f fp16 step%s of float "
            "at its magnitude", steps, steps == 1 ? "" : "s");
}

void print_text(const bu *b, const json_t *s)
{
    char t1[2048], t2[64], t3[64], t4[64];
    const json_t *e = json_object_get(s, "estimate"), *c = json_object_get(s, "calibration"),
                 *x = json_object_get(s, "compile"), *n = json_object_get(s, "npu"),
                 *cm = json_object_get(s, "compare"), *r = json_object_get(s, "runs");
    const char *base = strrchr(b->model, '/');
    put("bringup", 1, "%s on %s: every stage ran in %.1f s", base ? base + 1 : b->model,
        b->soc ? b->soc : "Ascend035A", bu_num(s, "wall_s"));
    put("estimate", 1, "TOTAL_WEIGHT_SIZE %.0f, TOTAL_MEM_SIZE %.0f (bytes)",
        bu_num(e, "TOTAL_WEIGHT_SIZE"), bu_num(e, "TOTAL_MEM_SIZE"));
    put("", 1, "TOTAL_EXEOM_SIZE %.0f", bu_num(e, "TOTAL_EXEOM_SIZE"));
    counts_text(json_object_get(e, "TOTAL_NET_OP_TYPE"), t1, sizeof t1);
    put("", 1, "TOTAL_NET_OP_TYPE %s", t1);
    counts_text(json_object_get(e, "NOT_SUPPORT_OP_TYPE"), t1, sizeof t1);
    put("", 2, "NOT_SUPPORT_OP_TYPE %s", t1);
    if (b->qat) { /* imported: nothing was calibrated, nothing evaluated at this step */
        put("calibrate", 1, "QAT import: %.0f layer%s, the model's own scales (no data)",
            bu_num(c, "layers"), bu_num(c, "layers") == 1 ? "" : "s");
        goto compile;
    }
    double fq = bu_num(c, "output_sqnr_db"); /* NaN: no float output to measure (ArgMax's) */
    put("calibrate", 1, "%s on %.0f batch%s; fake-quant output %s%s", bu_str(c, "algorithm"),
        bu_num(c, "batches"), bu_num(c, "batches") == 1 ? "" : "es",
        isnan(fq) ? "not measured (no float output)" : db_str(fq, t2, sizeof t2),
        isnan(fq) ? "" : " against float");
    size_t at = 0;
    t1[0] = 0;
    const json_t *w = json_object_get(c, "worst_layers");
    for (size_t i = 0; i < json_array_size(w) && at < sizeof t1; i++) {
        const json_t *l = json_array_get(w, i);
        at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s\037%.1f\037dB", i ? ", " : "",
                               bu_str(l, "layer"), bu_num(l, "sqnr_db"));
    }
    put("", 2, "worst layers: %s", t1[0] ? t1 : "none evaluated");
    /* calibrate's INT16 advice: the layers whose int8 input loses its small values */
    const json_t *sg16 = json_object_get(c, "suggested_int16");
    if (json_array_size(sg16)) {
        at = 0;
        t1[0] = 0;
        for (size_t i = 0; i < json_array_size(sg16) && at < sizeof t1; i++) {
            const json_t *l = json_array_get(sg16, i);
            at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s (%.0f%%)", i ? ", " : "",
                                   bu_str(l, "layer"), 100 * bu_num(l, "zeroed_fraction"));
        }
        const json_t *l0 = json_array_get(sg16, 0);
        if (json_array_size(sg16) == 1)
            put("", 2, "int8 rounds %.0f%% of %s's nonzero input to 0: INT16 suggested",
                100 * bu_num(l0, "zeroed_fraction"), bu_str(l0, "layer"));
        else
            put("", 2, "int8 rounds nonzero inputs to 0 in %s: INT16 suggested", t1);
    }
compile:;
    const char *xb = strrchr(bu_str(x, "exeom"), '/');
    const char *scale = bu_str(x, "nb_input_scale");
    put("compile", 1, "%s: %.0f bytes%s%s%s", xb ? xb + 1 : bu_str(x, "exeom"),
        bu_num(x, "exeom_bytes"), *scale ? ", --nb_input_scale=\"" : "", scale, *scale ? "\"" : "");
    /* atc's warnings: the fp16-range one shortened to its layer, range and suggestion */
    const json_t *aw = json_object_get(x, "warnings");
    bool atc_line = json_array_size(aw) > 0;
    if (atc_line) {
        const char *w0 = json_string_value(json_array_get(aw, 0)), *sg = bu_str(x,
            "suggested_nb_input_scale");
        char layer[256];
        double range;
        int used = 0;
        if (*sg && w0 && sscanf(w0, "fp16 range: %255[^']'s input was calibrated to %lg,%n", layer,
                          &range, &used) == 2 && used > 0)
            put("", 2, "atc: %s's input calibrated to %.3g > 65504; it suggests "
                "--nb_input_scale=\"%s\"%s", layer, range, sg,
                json_array_size(aw) > 1 ? " (all warnings: summary.json)" : "");
        else
            put("", 2, "atc: %s%s", w0 ? w0 : "", json_array_size(aw) > 1 ? " (more: summary.json)"
                                                                          : "");
    }
    put("NPU", 1, "%.0f cycles = %.3f ms at 64 MHz, %.3f ms at 200 MHz", bu_num(n, "cycles"),
        bu_num(n, "ms_64mhz"), bu_num(n, "ms_200mhz"));
    /* the MCU's CPU: the placement, its cycles, or calibrate's advice when not taken */
    const json_t *pl = json_object_get(s, "placement"), *adv = json_object_get(pl, "advice");
    const json_t *al = json_array_get(json_object_get(adv, "layers"), 0);
    const char *cpu = json_string_value(json_object_get(pl, "cpu_nodes"));
    int n_cpu = cpu && *cpu ? 1 : 0;
    for (const char *p = cpu; p && *p; p++)
        n_cpu += *p == ';';
    double cpu_tasks = bu_num(pl, "cpu_tasks");
    if (n_cpu || cpu_tasks > 0)
        put("placement", 2, "%.0f task%s on the MCU's CPU (%s): %.0f of the cycles, %.0f "
            "switch%s between NPU and CPU (%.0f cycles)", cpu_tasks, cpu_tasks == 1 ? "" : "s",
            !n_cpu ? "ops the NPU does not run"
            : !strcmp(bu_str(pl, "source"), "auto_place") ? "--auto_place, calibrate's advice"
                                                          : "--cpu_nodes",
            bu_num(n, "cpu_cycles"), bu_num(n, "switches"), bu_num(n, "switches") == 1 ? "" : "es",
            bu_num(n, "switch_cycles"));
    else if (!strcmp(bu_str(pl, "source"), "auto_place (no advice)"))
        put("placement", 2, "--auto_place: calibrate advised nothing for the CPU");
    if (al)
        put(n_cpu ? "" : "placement", 2, "%s: INT16 rounds to 0 %.0f%% of the nonzero input of "
            "its worst calibration input (%.0f inputs over 20%%)%s", bu_str(al, "layer"),
            100 * bu_num(al, "zeroed_int16_worst_input"), bu_num(al, "zeroed_int16_inputs_over"),
            n_cpu ? "" : ": the MCU's CPU advised (--auto_place; nodes: summary.json)");
    const json_t *st = json_object_get(json_object_get(n, "saturation"), "tasks");
    if (json_array_size(st)) {
        at = 0;
        for (size_t i = 0; i < json_array_size(st) && at < sizeof t1; i++) {
            const json_t *k = json_array_get(st, i);
            at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s (%s) %.0f values on %.0f/%d "
                                   "inputs", i ? "; " : "", bu_str(k, "name"), bu_str(k, "op_type"),
                                   bu_num(k, "count"), bu_num(k, "inputs"), b->n_eval);
        }
        put("saturation", 2, "fp16 at 65504: %s", t1);
    }
    const json_t *fx = json_object_get(s, "saturation_fix");
    if (json_is_object(fx)) {
        const json_t *tr = json_object_get(fx, "tried"), *fo = json_object_get(fx, "outputs");
        const char *fs = bu_str(fx, "nb_input_scale");
        if (*bu_str(fx, "not_tried"))
            put("fix", 3, "not tried: %s", bu_str(fx, "not_tried"));
        else if (!*fs)
            put("fix", 3, "no atc --nb_input_scale clamps nothing (%zu tried): %s",
                json_array_size(tr), bu_str(fx, "note"));
        else {
            const json_t *o0 = json_array_get(json_object_get(s, "outputs"), 0),
                         *f0 = json_array_get(fo, 0);
            bool score = bu_num(o0, "numel") == 1;
            const char *key = score ? "pooled_cosine" : "cosine_worst";
            double logs = bu_num(fx, "log_of_zero_left");
            put("fix", 5, "tried and measured (%zu compile%s): atc --nb_input_scale=\"%s\" clamps "
                "nothing on %.0f/%d inputs (%.0f values before)%s; output SQNR mean %s -> %s, "
                "%s %s -> %s (fix/ in out)", json_array_size(tr),
                json_array_size(tr) == 1 ? "" : "s", fs, bu_num(fx, "inputs"), b->n_eval,
                bu_num(fx, "saturations_before"),
                logs > 0 ? "; a Log's -inf remains (the log of 0, no scale removes it: INT16 "
                           "before it, or the host)" : "",
                db_str(bu_num(o0, "sqnr_db_mean"), t2, sizeof t2),
                db_str(bu_num(f0, "sqnr_db_mean"), t3, sizeof t3),
                score ? "cosine over the inputs" : "worst cosine",
                cos_str(bu_num(o0, key), t4, sizeof t4), cos_str(bu_num(f0, key), t1, sizeof t1));
        }
    }
    const json_t *outs = json_object_get(s, "outputs");
    for (size_t i = 0; i < json_array_size(outs) && i < 3; i++) {
        const json_t *o = json_array_get(outs, i);
        /* the label shortened, never the numbers after it (timer's output is named by a
           139-character label map): the head and tail of a long name with "..." between */
        char oname[40];
        short_label(bu_str(o, "name"), oname, sizeof oname);
        if (bu_num(o, "numel") == 1) { /* a score: its cosine is 1 on each input */
            /* two lines when needed: a cut would drop the error's exponent (2.276e-07 shown
               as "2...") */
            put(i ? "" : "output", 2, "%s [%s], %d inputs: SQNR mean %s worst %s, max |err| %.3g",
                oname, bu_str(o, "shape"), b->n_eval,
                db_str(bu_num(o, "sqnr_db_mean"), t2, sizeof t2),
                db_str(bu_num(o, "sqnr_db_worst"), t3, sizeof t3), bu_num(o, "max_abs_error"));
            put("", 1, "cosine 1 on one value; over the %d inputs together: %s, %s", b->n_eval,
                cos_str(bu_num(o, "pooled_cosine"), t2, sizeof t2),
                db_str(bu_num(o, "pooled_sqnr_db"), t3, sizeof t3));
            fp16_resolution_line(o);
        } else {
            put(i ? "" : "output", 2, "%s [%s], %d input%s: cosine mean %s worst %s",
                oname, bu_str(o, "shape"), b->n_eval, b->n_eval == 1 ? "" : "s",
                cos_str(bu_num(o, "cosine_mean"), t2, sizeof t2),
                cos_str(bu_num(o, "cosine_worst"), t3, sizeof t3));
            put("", 1, "SQNR mean %s worst %s, max |npu - float| %.4g",
                db_str(bu_num(o, "sqnr_db_mean"), t2, sizeof t2),
                db_str(bu_num(o, "sqnr_db_worst"), t4, sizeof t4), bu_num(o, "max_abs_error"));
            fp16_resolution_line(o);
        }
    }
    if (json_array_size(outs) > 3)
        put("", 1, "(%zu outputs in all: summary.json)", json_array_size(outs));
    if (b->eval_avail > b->n_eval) /* what the figures were taken on, when not all */
        put("", 1, "(on %d of the %d files of --%s: --eval_count %d)", b->n_eval,
            b->eval_avail, b->eval_from_dir ? "eval_dir" : "data_dir", b->n_eval);
    if (b->eval_random) /* no data given: what the figures above were measured on */
        put("", 1, "(on %d random inputs, uniform in [-1, 1): no --data_dir or --eval_dir)",
            b->n_eval);
    const json_t *fb = json_object_get(cm, "first_over_threshold");
    if (json_is_object(fb)) {
        if (b->n_eval > 1)
            put("compare", 1, "on evaluation input %d of %d (the lowest output SQNR)",
                b->cmp_input + 1, b->n_eval);
        put(b->n_eval > 1 ? "" : "compare", 3, "%s", bu_str(cm, "verdict_text"));
        char lname[48];
        short_label(bu_str(fb, "layer"), lname, sizeof lname);
        put("", 2, "first over threshold: %s (%s), cos %s, %s; %.0f/%.0f over",
            lname, bu_str(fb, "op_type"), cos_str(bu_num(fb, "cosine"), t2, sizeof t2),
            db_str(bu_num(fb, "sqnr_db"), t3, sizeof t3), bu_num(cm, "over_threshold"),
            bu_num(cm, "compared"));
        put("", atc_line ? 2 : 3, "cause: %s", bu_str(fb, "likely_cause"));
        const json_t *wd = json_object_get(cm, "largest_sqnr_drop");
        /* and the largest SQNR drop when it is another layer (its cause when compare
           names one) */
        if (json_is_object(wd) && strcmp(bu_str(wd, "layer"), bu_str(fb, "layer"))) {
            const char *why = bu_str(wd, "likely_cause");
            put("", atc_line ? 1 : 2, "largest SQNR drop: %s (%s), %s -> %s%s%s", bu_str(wd, "layer"),
                bu_str(wd, "op_type"), db_str(bu_num(wd, "previous_sqnr_db"), t2, sizeof t2),
                db_str(bu_num(wd, "sqnr_db"), t3, sizeof t3),
                strncmp(why, "none clear", 10) ? ": " : "", strncmp(why, "none clear", 10) ? why : "");
        }
    } else {
        if (b->n_eval > 1)
            put("compare", 1, "on evaluation input %d of %d (the lowest output SQNR)",
                b->cmp_input + 1, b->n_eval);
        put(b->n_eval > 1 ? "" : "compare", 2, "%s: %.0f of %.0f tensors compared, none over threshold",
            bu_str(cm, "verdict_text"), bu_num(cm, "compared"), bu_num(cm, "tensors"));
    }
    char ri[256], ii[256];
    const json_t *jr = json_object_get(r, "run"), *ji = json_object_get(r, "infer");
    int64_t a1[MAX_EVAL], a2[MAX_EVAL];
    int n1 = 0, n2 = 0;
    for (size_t i = 0; i < json_array_size(jr) && n1 < MAX_EVAL; i++)
        a1[n1++] = json_integer_value(json_array_get(jr, i));
    for (size_t i = 0; i < json_array_size(ji) && n2 < MAX_EVAL; i++)
        a2[n2++] = json_integer_value(json_array_get(ji, i));
    ids_text(a1, n1, ri, sizeof ri);
    ids_text(a2, n2, ii, sizeof ii);
    int64_t me = (int64_t)json_integer_value(json_object_get(r, "bringup"));
    if (me > 0)
        put("runs", 3, "bringup %lld: estimate %lld, calibrate %lld, compile %lld, run %s, infer "
            "%s, compare %lld (nanobench history show %lld)", (long long)me,
            (long long)json_integer_value(json_object_get(r, "estimate")),
            (long long)json_integer_value(json_object_get(r, "calibrate")),
            (long long)json_integer_value(json_object_get(r, "compile")), ri, ii,
            (long long)json_integer_value(json_object_get(r, "compare")), (long long)me);
    else
        put("runs", 1, "not recorded");
    put("out", 2, "%s/summary.json, %scompare/, log/", b->outdir,
        json_is_string(json_object_get(s, "report")) ? "report.html, " : "");
}

/* ---- the summary's parts ---- */

/* The network outputs against float: accucmp's comparison of each evaluation input's .npy
 * files (run's and infer's, nb_cmp_output_files), per output the mean and worst over the
 * inputs, and the metrics over the inputs together. *worst: the cosine --fail-under-cosine
 * takes (NaN when one is not defined). NULL after the error line (*rc). */
json_t *output_metrics(const bu *b, const json_t *outs0, double *worst, int *rc)
{
    json_t *outs = json_array();
    bool undefined = false;
    *worst = INFINITY;
    const char **npu = calloc((size_t)b->n_eval + 1, sizeof *npu);
    char (*ref)[3400] = calloc((size_t)b->n_eval + 1, sizeof *ref);
    if (!npu || !ref) {
        *rc = cli_fail(1, "out of memory");
        goto fail;
    }
    for (size_t o = 0; o < json_array_size(outs0); o++) {
        const char *name = bu_str(json_array_get(outs0, o), "name");
        json_t *per = json_array(), *jo = json_object();
        json_object_set_new(jo, "name", nb_json_string(name));
        json_array_append_new(outs, jo); /* owned by outs from here */
        for (int k = 0; k < b->n_eval; k++) {
            char refdir[3400];
            npu[k] = bu_str(json_array_get(json_object_get(json_array_get(b->runs, (size_t)k),
                                                           "outputs"), o), "file");
            snprintf(refdir, sizeof refdir, "%s/reference/%d", b->outdir, k);
            if (!nb_infer_manifest_file(refdir, name, ref[k], sizeof ref[k])) {
                json_decref(per);
                *rc = cli_fail(1, "bringup: infer wrote no tensor '%s' into %s", name, refdir);
                goto fail;
            }
        }
        const char *nd = bu_str(json_array_get(json_object_get(json_array_get(b->runs, 0),
                                                               "outputs"), o), "npu_dtype");
        const char *refs[b->n_eval > 0 ? b->n_eval : 1];
        for (int k = 0; k < b->n_eval; k++)
            refs[k] = ref[k];
        nb_cmp_output_files_opts co = {.n_inputs = b->n_eval, .npu = npu, .reference = refs,
                                       .npu_dtype = nd};
        nb_cmp_output_files_result r;
        nb_status st = {0};
        if (nb_cmp_output_files(&co, &r, &st)) {
            nb_cmp_output_files_free(&r);
            json_decref(per);
            *rc = cli_fail(1, "bringup: output '%s': %s", name, st.msg);
            goto fail;
        }
        for (int k = 0; k < b->n_eval; k++) {
            const nb_cmp_metrics *m = &r.per_input[k];
            json_t *pi = json_object(), *files = json_array();
            for (int i = 0; i < b->n_in; i++)
                json_array_append_new(files, nb_json_string(b->eval[k * b->n_in + i]));
            json_object_set_new(pi, "inputs", files);
            json_object_set_new(pi, "npu", nb_json_string(npu[k]));
            json_object_set_new(pi, "reference", nb_json_string(ref[k]));
            json_object_set_new(pi, "cosine", nb_json_num(m->cos));
            json_object_set_new(pi, "sqnr_db", nb_json_num(m->sqnr_db));
            json_object_set_new(pi, "max_abs_error", nb_json_num(m->max_abs));
            if (m->note[0])
                json_object_set_new(pi, "note", nb_json_string(m->note));
            json_array_append_new(per, pi);
        }
        const nb_cmp_over_inputs *acc = &r.acc;
        if (isnan(r.gate))
            undefined = true;
        else if (r.gate < *worst)
            *worst = r.gate;
        json_object_set_new(jo, "shape", json_string(r.shape));
        json_object_set_new(jo, "numel", json_integer(acc->numel));
        json_object_set_new(jo, "cosine_mean", nb_json_num(acc->cos_mean));
        json_object_set_new(jo, "cosine_worst", nb_json_num(acc->cos_worst));
        json_object_set_new(jo, "sqnr_db_mean", nb_json_num(acc->sqnr_mean));
        json_object_set_new(jo, "sqnr_db_worst", nb_json_num(acc->sqnr_worst));
        json_object_set_new(jo, "max_abs_error", nb_json_num(acc->max_abs));
        json_object_set_new(jo, "pooled_cosine", nb_json_num(acc->pooled_cos));
        json_object_set_new(jo, "pooled_sqnr_db", nb_json_num(acc->pooled_sqnr));
        json_object_set_new(jo, "worst_cosine", nb_json_num(acc->gate));
        json_object_set_new(jo, "npu_dtype", nb_json_string(nd));
        json_object_set_new(jo, "max_fp16_steps", nb_json_num(acc->fp16_steps));
        json_object_set_new(jo, "agrees_at_fp16_resolution", json_boolean(r.fp16_resolution));
        json_object_set_new(jo, "per_input", per);
        nb_cmp_output_files_free(&r);
    }
    free(npu);
    free(ref);
    if (undefined || isinf(*worst))
        *worst = NAN;
    return outs;
fail:
    free(npu);
    free(ref);
    json_decref(outs);
    return NULL;
}

/* fp16 saturation over the K runs: per task, its count and on how many inputs */
json_t *saturation_json(const bu *b, double *total)
{
    json_t *tasks = json_array();
    *total = 0;
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        const json_t *ts = json_object_get(json_object_get(json_array_get(b->runs, k),
                                                           "saturation"), "tasks");
        for (size_t i = 0; i < json_array_size(ts); i++) {
            const json_t *t = json_array_get(ts, i);
            json_t *hit = NULL;
            for (size_t q = 0; q < json_array_size(tasks) && !hit; q++)
                if (!strcmp(bu_str(json_array_get(tasks, q), "name"), bu_str(t, "name")))
                    hit = json_array_get(tasks, q);
            if (!hit) {
                hit = json_object();
                json_object_set_new(hit, "name", nb_json_string(bu_str(t, "name")));
                json_object_set_new(hit, "op_type", nb_json_string(bu_str(t, "op_type")));
                json_object_set_new(hit, "index", json_integer(json_integer_value(
                                                      json_object_get(t, "index"))));
                json_object_set_new(hit, "count", json_integer(0));
                json_object_set_new(hit, "inputs", json_integer(0));
                json_array_append_new(tasks, hit);
            }
            json_int_t c = json_integer_value(json_object_get(t, "count"));
            json_object_set_new(hit, "count",
                                json_integer(json_integer_value(json_object_get(hit, "count")) + c));
            json_object_set_new(hit, "inputs",
                                json_integer(json_integer_value(json_object_get(hit, "inputs")) + 1));
            *total += (double)c;
        }
    }
    json_t *s = json_object();
    json_object_set_new(s, "total", json_integer((json_int_t)*total));
    json_object_set_new(s, "tasks", tasks);
    return s;
}

/* The calibration: its algorithm(s), batches, the 3 layers of lowest SQNR alone (the layer
 * on fake-quantized operands against its float output), the fake-quant network output. */
json_t *calibration_json(const bu *b)
{
    json_t *jc = json_object();
    const json_t *layers = json_object_get(b->cal, "layers");
    char algos[256] = "";
    double batches = NAN;
    int order[3] = {-1, -1, -1};
    for (size_t i = 0; i < json_array_size(layers); i++) {
        const json_t *l = json_array_get(layers, i);
        const char *al = bu_str(l, "algorithm");
        bool seen = false;
        for (const char *p = algos; *p && !seen;) {
            size_t n = strcspn(p, ",");
            seen = n == strlen(al) && !strncmp(p, al, n);
            p += n + (p[n] == ',');
        }
        if (!seen && *al && strlen(algos) + strlen(al) + 2 < sizeof algos)
            snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s",
                     algos[0] ? "," : "", al);
        if (isnan(batches))
            batches = bu_num(l, "batches");
        double s = bu_num(l, "output_sqnr_db");
        if (isnan(s))
            continue;
        for (int q = 0; q < 3; q++)
            if (order[q] < 0 ||
                s < bu_num(json_array_get(layers, (size_t)order[q]), "output_sqnr_db")) {
                for (int z = 2; z > q; z--)
                    order[z] = order[z - 1];
                order[q] = (int)i;
                break;
            }
    }
    json_object_set_new(jc, "algorithm", json_string(algos[0] ? algos : "none (no layer)"));
    json_object_set_new(jc, "requested", b->algo ? nb_json_string(b->algo) : json_null());
    json_object_set_new(jc, "qat", json_boolean(b->qat));
    json_object_set_new(jc, "batches", nb_json_num(batches));
    json_object_set_new(jc, "layers", json_integer((json_int_t)json_array_size(layers)));
    json_t *jw = json_array();
    for (int q = 0; q < 3 && order[q] >= 0; q++) {
        const json_t *l = json_array_get(layers, (size_t)order[q]);
        json_t *x = json_object();
        json_object_set_new(x, "layer", nb_json_string(bu_str(l, "layer")));
        json_object_set_new(x, "op_type", nb_json_string(bu_str(l, "op_type")));
        json_object_set_new(x, "sqnr_db", nb_json_num(bu_num(l, "output_sqnr_db")));
        json_object_set_new(x, "cosine", nb_json_num(bu_num(l, "output_cosine")));
        json_array_append_new(jw, x);
    }
    json_object_set_new(jc, "worst_layers", jw);
    /* calibrate's advice: layers whose int8 input loses its small values, with the config
       line that calibrates them at INT16 (the text summary names them) */
    const json_t *sg = json_object_get(b->cal, "suggested_int16");
    json_object_set_new(jc, "suggested_int16", json_is_array(sg) ? json_deep_copy(sg)
                                                                 : json_array());
    json_object_set_new(jc, "output_sqnr_db", nb_json_num(bu_num(b->cal, "output_sqnr_db")));
    json_object_set_new(jc, "output_cosine", nb_json_num(bu_num(b->cal, "output_cosine")));
    json_object_set_new(jc, "eval_set", nb_json_string(bu_str(b->cal, "eval_set")));
    json_object_set_new(jc, "deploy_model", nb_json_string(b->deploy));
    json_object_set_new(jc, "record", nb_json_string(bu_str(b->cal, "record")));
    return jc;
}

/* the value of key in o (a new reference), null when missing */
static json_t *copy(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? json_incref(v) : json_null();
}

/* The whole summary (what --json prints and DIR/summary.json holds); takes outs and sat. */
json_t *placement_advice(const json_t *cal)
{
    const char *nodes = json_string_value(json_object_get(cal, "suggested_cpu_nodes"));
    if (!nodes || !*nodes)
        return NULL;
    json_t *a = json_object(), *ls = json_array();
    json_object_set_new(a, "nodes", nb_json_string(nodes));
    const json_t *layers = json_object_get(cal, "layers");
    for (size_t i = 0; i < json_array_size(layers); i++) {
        const json_t *l = json_array_get(layers, i);
        if (!json_is_true(json_object_get(l, "suggests_cpu")))
            continue;
        json_t *x = json_object();
        json_object_set_new(x, "layer", nb_json_string(bu_str(l, "layer")));
        json_object_set_new(x, "zeroed_int16_worst_input",
                            nb_json_num(bu_num(l, "zeroed_int16_worst_input")));
        json_object_set_new(x, "zeroed_int16_inputs_over",
                            nb_json_num(bu_num(l, "zeroed_int16_inputs_over")));
        json_array_append_new(ls, x);
    }
    json_object_set_new(a, "layers", ls);
    return a;
}

json_t *summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
                            int64_t exeom_bytes, const char *dumped, double wall, bool below)
{
    const json_t *run0 = json_array_get(b->runs, 0);
    json_t *s = json_object();
    json_object_set_new(s, "model", nb_json_string(b->model));
    json_object_set_new(s, "soc_version", nb_json_string(b->soc ? b->soc : "Ascend035A"));
    json_object_set_new(s, "out", nb_json_string(b->outdir));
    json_object_set_new(s, "wall_s", json_real(wall));
    json_t *je = json_object();
    static const char *const items[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE",
                                        "TOTAL_NET_OP_TYPE", "NOT_SUPPORT_OP_TYPE", "macs"};
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        json_object_set_new(je, items[i], copy(b->est, items[i]));
    json_object_set_new(s, "estimate", je);
    json_object_set_new(s, "calibration", calibration_json(b));
    json_t *jx = json_object();
    json_object_set_new(jx, "exeom", nb_json_string(b->exeom));
    json_object_set_new(jx, "exeom_bytes", json_integer((json_int_t)exeom_bytes));
    json_object_set_new(jx, "nb_input_scale", b->in_scale ? nb_json_string(b->in_scale)
                                                          : json_null());
    json_object_set_new(jx, "warnings", b->atc_warn ? json_incref(b->atc_warn) : json_array());
    json_object_set_new(jx, "suggested_nb_input_scale", b->suggest[0] ? nb_json_string(b->suggest)
                                                                      : json_null());
    json_object_set_new(s, "compile", jx);
    json_t *jn = json_object();
    static const char *const npu[] = {"cycles", "ms_64mhz", "ms_200mhz", "macs", "npu_cycles",
                                      "cpu_cycles", "switches", "switch_cycles"};
    for (size_t i = 0; i < sizeof npu / sizeof npu[0]; i++)
        json_object_set_new(jn, npu[i], copy(run0, npu[i]));
    json_object_set_new(jn, "saturation", sat);
    json_object_set_new(jn, "dump", nb_json_string(dumped));
    json_object_set_new(s, "npu", jn);
    /* the MCU's CPU: what runs there, and why */
    json_t *jp = json_object();
    json_object_set_new(jp, "cpu_nodes", b->cpu_nodes ? nb_json_string(b->cpu_nodes) : json_null());
    json_object_set_new(jp, "source", json_string(!b->cpu_nodes ? (b->auto_place
                                                                    ? "auto_place (no advice)"
                                                                    : "none")
                                                  : b->auto_cpu[0] ? "auto_place"
                                                                   : "cpu_nodes"));
    int cpu_tasks = 0; /* the run's tasks on the MCU's CPU: --cpu_nodes and unsupported ops */
    const json_t *rt = json_object_get(run0, "tasks");
    for (size_t i = 0; i < json_array_size(rt); i++)
        cpu_tasks += !strcmp(bu_str(json_array_get(rt, i), "unit"), "cpu");
    json_object_set_new(jp, "cpu_tasks", json_integer(cpu_tasks));
    json_object_set_new(jp, "advice", b->advice ? json_incref(b->advice) : json_null());
    json_object_set_new(s, "placement", jp);
    json_t *jev = json_object(), *jin = json_array();
    json_object_set_new(jev, "count", json_integer(b->n_eval));
    json_object_set_new(jev, "source", json_string(b->eval_random     ? "random"
                                                   : b->eval_from_dir ? "eval_dir"
                                                                      : "data_dir"));
    for (int i = 0; i < b->n_in; i++)
        json_array_append_new(jin, nb_json_string(b->in_name[i]));
    json_object_set_new(jev, "model_inputs", jin);
    json_object_set_new(s, "evaluation", jev);
    json_object_set_new(s, "outputs", outs);
    json_object_set_new(s, "worst_cosine", nb_json_num(worst));
    json_t *jcm = json_object();
    static const char *const ck[] = {"verdict", "verdict_text", "tensors", "compared",
                                     "over_threshold", "thresholds", "first_over_threshold",
                                     "largest_sqnr_drop", "csv"};
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++)
        json_object_set_new(jcm, ck[i], copy(b->cmp, ck[i]));
    json_object_set_new(jcm, "golden_dump", nb_json_string(b->gold));
    /* the evaluation input compared layer by layer: the one of the lowest output SQNR */
    json_object_set_new(jcm, "input", json_integer(b->cmp_input));
    json_t *cf = json_array();
    for (int i = 0; i < b->n_in && b->eval; i++)
        json_array_append_new(cf, nb_json_string(b->eval[b->cmp_input * b->n_in + i]));
    json_object_set_new(jcm, "input_files", cf);
    json_object_set_new(s, "compare", jcm);
    json_t *jr = json_object();
    json_object_set_new(jr, "bringup", jid(g_rec.run_id));
    json_object_set_new(jr, "estimate", jid(b->id_est));
    json_object_set_new(jr, "calibrate", jid(b->id_cal));
    json_object_set_new(jr, "compile", jid(b->id_atc));
    json_object_set_new(jr, "run", jids(b->id_run, b->n_eval));
    json_object_set_new(jr, "infer", jids(b->id_inf, b->n_eval));
    json_object_set_new(jr, "run_dumped", jid(b->id_dump_run));
    json_object_set_new(jr, "infer_dumped", jid(b->id_dump_inf));
    json_object_set_new(jr, "compare", jid(b->id_cmp));
    json_object_set_new(s, "runs", jr);
    json_t *jst = json_array();
    for (int k = 0; k < N_STEPS; k++) {
        json_t *x = json_object();
        json_object_set_new(x, "step", json_string(step_name[k]));
        json_object_set_new(x, "ms", json_real(b->step_ms[k]));
        json_array_append_new(jst, x);
    }
    json_object_set_new(s, "steps", jst);
    json_object_set_new(s, "fail_under_cosine", b->has_fail_cos ? json_real(b->fail_cos)
                                                                : json_null());
    json_object_set_new(s, "status", json_string(below ? "below_cosine" : "ok"));
    return s;
}

/* ---- the steps ---- */

