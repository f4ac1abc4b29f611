/* nanobench report: a bring-up's one-screen text summary (include/nb/report.h), what
 * `bringup` prints at its end and `report RUN --text` prints again from the summary.json the
 * bring-up left: every line from that file, so the two are the same text. */
#define _GNU_SOURCE /* vasprintf */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nb/json.h"
#include "nb/report.h"

enum { WIDTH = 79, LABEL = 11, MAX_EVAL = 1000 };
#define NBSP '\037' /* a space the summary does not break a line at */

static double num(const json_t *o, const char *k) { return nb_json_num_of(o, k); }

/* a count of the summary (inputs, an index): 0 .. 10^6, whatever the file says */
static int count(const json_t *v)
{
    json_int_t n = json_integer_value(v);
    return n < 0 ? 0 : n > 1000000 ? 1000000 : (int)n;
}

static const char *str(const json_t *o, const char *k) { return nb_json_str_of(o, k); }

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
static void put(FILE *f, const char *label, int max, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether a line may break before p[i]: at a space, or after a '/' or ',' (the paths of
 * exporters' long names, "StatefulPartitionedCall/functional_1/...", have no space). */
static bool breaks_at(const char *p, int i)
{
    return p[i] == ' ' || (i > 0 && (p[i - 1] == '/' || p[i - 1] == ','));
}

/* Where the line that starts at p ends (the count of bytes it takes) when w columns are
 * left: the whole rest, or at the last break that fits (a word longer than w: cut at w). */
static int line_cut(const char *p, int w, bool last)
{
    int n = (int)strlen(p), lim = last ? w - 3 : w;
    if (n <= w)
        return n;
    int cut = lim;
    while (cut > w / 2 && !breaks_at(p, cut))
        cut--;
    return breaks_at(p, cut) ? cut : lim;
}

/* The lines text takes, wrapped as put() wraps it with no limit. */
static int lines_needed(const char *text, int w)
{
    int lines = 0;
    for (const char *p = text; *p; lines++) {
        p += line_cut(p, w, false);
        while (*p == ' ')
            p++;
    }
    return lines;
}

/* Shortens the longest word of text (a run of bytes other than ' ' and NBSP: a layer or
 * file name, never a number, which NBSP keeps apart) to its head and tail around "...", in
 * place; false when no word is longer than 24 bytes. */
static bool shorten_longest(char *text)
{
    size_t best = 0, at = 0;
    for (size_t i = 0; text[i];) {
        size_t l = strcspn(text + i, " \037");
        if (l > best)
            best = l, at = i;
        i += l ? l : 1;
    }
    if (best <= 24)
        return false;
    size_t keep = best * 2 / 3 < 24 ? 24 : best * 2 / 3, head = keep / 3 - 1;
    size_t tail = keep - head - 3;
    while (head > 0 && ((unsigned char)text[at + head] & 0xC0) == 0x80)
        head--; /* not inside a UTF-8 character */
    while (tail > 0 && ((unsigned char)text[at + best - tail] & 0xC0) == 0x80)
        tail--;
    memcpy(text + at + head, "...", 3);
    memmove(text + at + head + 3, text + at + best - tail, strlen(text + at + best - tail) + 1);
    return true;
}

static void put(FILE *f, const char *label, int max, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int tn = vasprintf(&text, fmt, ap); /* whole: a 10,000-byte name first, numbers after */
    va_end(ap);
    if (tn < 0)
        return;
    for (char *c = text; *c; c++) /* one line of plain text; NBSP stays for the layout */
        if (((unsigned char)*c < 32 && *c != NBSP) || *c == 127)
            *c = '?';
    const int w = WIDTH - LABEL;
    /* too long for its lines: the longest names shortened (issue 37: the wall time after a
       long model name, a layer's SQNR after its name were the part cut) */
    while (lines_needed(text, w) > max && shorten_longest(text))
        ;
    const char *p = text;
    for (int line = 0; line < max && *p; line++) {
        size_t n = strlen(p);
        fprintf(f, "%-*s", LABEL, line ? "" : label);
        int cut = line_cut(p, w, line == max - 1);
        for (int i = 0; i < cut; i++)
            fputc(p[i] == NBSP ? ' ' : p[i], f);
        /* "its 34 ...": a whole number before the cut is kept apart from the "...", which
           would read as a number cut ("34...") */
        bool digit = cut > 0 && p[cut - 1] >= '0' && p[cut - 1] <= '9';
        fprintf(f, "%s\n", cut < (int)n && line == max - 1 ? (digit ? " ..." : "...") : "");
        if (cut == (int)n || line == max - 1)
            break;
        p += cut;
        while (*p == ' ')
            p++;
    }
    free(text);
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

/* An output's SQNR key of o as text: "exact" when its max |error| is 0 (SQNR +inf, which
 * JSON writes as null), else as db_str (issue 35: an all-zero calibration gave "nan dB"). */
static const char *sq_str(const json_t *o, const char *key, char *buf, size_t len)
{
    double v = num(o, key);
    if (!isfinite(v) && num(o, "max_abs_error") == 0) {
        snprintf(buf, len, "exact");
        return buf;
    }
    return db_str(v, buf, len);
}

static const char *cos_str(double v, char *buf, size_t len)
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
        while (j + 1 < n && ids[j] < INT64_MAX && ids[j + 1] == ids[j] + 1)
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

/* "agrees at fp16's resolution" under an output that does (output_metrics's flag) */
static void fp16_resolution_line(FILE *f, const json_t *o)
{
    double steps = ceil(num(o, "max_fp16_steps"));
    if (json_is_true(json_object_get(o, "agrees_at_fp16_resolution")))
        put(f, "", 2, "agrees at fp16's resolution: every value within %.0f fp16 step%s of float "
            "at its magnitude", steps, steps == 1 ? "" : "s");
}

/* the changes of a configuration as "int16 L; cpu a;b" */
static void changes_text(const json_t *ch, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < json_array_size(ch) && at + 1 < len; i++) {
        const json_t *c = json_array_get(ch, i);
        const char *k = str(c, "change"), *w = *str(c, "layer") ? str(c, "layer") : str(c, "nodes");
        int n = snprintf(buf + at, len - at, "%s%s%s%s", i ? ", " : "", k, *w ? " " : "", w);
        at += n > 0 ? (size_t)n : 0;
    }
    if (!buf[0])
        snprintf(buf, len, "none (as is)");
}

/* bringup --target_sqnr: the search's result, the chosen configuration, the Pareto front */
static void search_text(FILE *f, const json_t *se)
{
    if (!json_is_object(se))
        return;
    char t1[64], t2[64], ch[1600];
    const char *outs = str(se, "target_outputs");
    bool reached = json_is_true(json_object_get(se, "reached"));
    put(f, "search", 2, "target %s pooled SQNR on %s%s: %s", db_str(num(se, "target_sqnr_db"),
        t1, sizeof t1), *outs ? "" : "every output", outs, str(se, "result"));
    if (!json_is_array(json_object_get(se, "chosen"))) {
        put(f, "", 1, "as is: %s", db_str(num(se, "as_is_sqnr_db"), t1, sizeof t1));
        return;
    }
    changes_text(json_object_get(se, "chosen"), ch, sizeof ch);
    put(f, "", 3, "%s %s: %s at %.0f cycles (as is %s), exeom %.0f bytes; %.0f "
        "configurations measured in %.1f s", reached ? "chosen" : "best reached", ch,
        db_str(num(se, "chosen_sqnr_db"), t1, sizeof t1), num(se, "chosen_cycles"),
        db_str(num(se, "as_is_sqnr_db"), t2, sizeof t2), num(se, "chosen_exeom_bytes"),
        num(se, "tries"), num(se, "wall_s"));
    if (*str(se, "reproduce"))
        put(f, "", 2, "reproduce: sh %s (its calibrate and atc commands, as run)",
            str(se, "reproduce"));
    /* the front as SQNR against cycles: by cycles, each point above the one before */
    char pf[1200] = "";
    size_t at = 0;
    const json_t *pts = json_object_get(se, "points");
    double last_c = -1, last_q = -INFINITY;
    for (int shown = 0; shown < 6;) {
        const json_t *next = NULL;
        for (size_t i = 0; i < json_array_size(pts); i++) {
            const json_t *p = json_array_get(pts, i);
            if (!json_is_true(json_object_get(p, "pareto")) || num(p, "cycles") <= last_c ||
                num(p, "sqnr_db") < last_q + 0.5) /* steps of 0.5 dB or more */
                continue;
            if (!next || num(p, "cycles") < num(next, "cycles"))
                next = p;
        }
        if (!next)
            break;
        last_c = num(next, "cycles"), last_q = num(next, "sqnr_db");
        int n = snprintf(pf + at, sizeof pf - at, "%s%s at %.0f", at ? ", " : "",
                         db_str(last_q, t1, sizeof t1), last_c);
        at += n > 0 && (size_t)n < sizeof pf - at ? (size_t)n : 0;
        shown++;
    }
    if (*pf)
        put(f, "", 2, "SQNR against cycles (the Pareto front): %s", pf);
    if (*str(se, "limiting_layer"))
        put(f, "", 2, "not reached: the largest SQNR drop as is is at %s; the int16 activations, "
            "AdaRound weights and CPU placements tried%s do not lift it to the target",
            str(se, "limiting_layer"), json_is_number(json_object_get(se, "max_cycles"))
                                           ? " within the cycle budget" : "");
    const json_t *br = json_object_get(se, "baseline_rule");
    if (json_is_object(br))
        put(f, "", 2, "baseline rule (INT16 in sensitivity order): %s, %s at %.0f cycles",
            json_is_true(json_object_get(br, "reached")) ? "reached" : "not reached",
            db_str(num(br, "sqnr_db"), t1, sizeof t1), num(br, "cycles"));
}

/* The summary's bring-up line and estimate's sizes and op types. */
static void text_estimate(const json_t *s, FILE *f)
{
    const char *model = str(s, "model"), *soc = str(s, "soc_version");
    const json_t *e = json_object_get(s, "estimate");
    char t1[2048];
    const char *base = strrchr(model, '/');
    put(f, "bringup", 1, "%s on %s: every stage ran in %.1f s", base ? base + 1 : model,
        *soc ? soc : "Ascend035A", num(s, "wall_s"));
    put(f, "estimate", 1, "TOTAL_WEIGHT_SIZE %.0f, TOTAL_MEM_SIZE %.0f (bytes)",
        num(e, "TOTAL_WEIGHT_SIZE"), num(e, "TOTAL_MEM_SIZE"));
    put(f, "", 1, "TOTAL_EXEOM_SIZE %.0f", num(e, "TOTAL_EXEOM_SIZE"));
    counts_text(json_object_get(e, "TOTAL_NET_OP_TYPE"), t1, sizeof t1);
    put(f, "", 1, "TOTAL_NET_OP_TYPE %s", t1);
    counts_text(json_object_get(e, "NOT_SUPPORT_OP_TYPE"), t1, sizeof t1);
    put(f, "", 2, "NOT_SUPPORT_OP_TYPE %s", t1);
}

/* calibrate's algorithm, fake-quant output SQNR, worst layers and INT16 advice (c: the
   summary's "calibration"). */
static void text_calibrate(const json_t *c, FILE *f)
{
    char t1[2048], t2[64];
    double fq = num(c, "output_sqnr_db"); /* NaN: no float output to measure (ArgMax's) */
    bool fq_exact = isnan(fq) && num(c, "output_cosine") == 1.0; /* JSON null for +inf */
    put(f, "calibrate", 1, "%s on %.0f batch%s; fake-quant output %s%s", str(c, "algorithm"),
        num(c, "batches"), num(c, "batches") == 1 ? "" : "es",
        fq_exact ? "exact" : isnan(fq) ? "not measured (no float output)"
                                       : db_str(fq, t2, sizeof t2),
        isnan(fq) ? "" : " against float");
    size_t at = 0;
    t1[0] = 0;
    const json_t *w = json_object_get(c, "worst_layers");
    for (size_t i = 0; i < json_array_size(w) && at < sizeof t1; i++) {
        const json_t *l = json_array_get(w, i);
        double v = num(l, "sqnr_db"), cs = num(l, "cosine");
        char vb[32];
        if (isfinite(v)) /* JSON has no infinity: null is an exact layer (cosine 1) */
            snprintf(vb, sizeof vb, "%.1f\037dB", v);
        else
            snprintf(vb, sizeof vb, "%s", cs == 1.0 || v > 0 ? "exact" : "undefined");
        at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s\037%s", i ? ", " : "",
                               str(l, "layer"), vb);
    }
    put(f, "", 2, "worst layers: %s", t1[0] ? t1 : "none evaluated");
    /* calibrate's INT16 advice: the layers whose int8 input loses its small values */
    const json_t *sg16 = json_object_get(c, "suggested_int16");
    if (json_array_size(sg16)) {
        at = 0;
        t1[0] = 0;
        for (size_t i = 0; i < json_array_size(sg16) && at < sizeof t1; i++) {
            const json_t *l = json_array_get(sg16, i);
            at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s (%.0f%%)", i ? ", " : "",
                                   str(l, "layer"), 100 * num(l, "zeroed_fraction"));
        }
        const json_t *l0 = json_array_get(sg16, 0);
        if (json_array_size(sg16) == 1)
            put(f, "", 2, "int8 rounds %.0f%% of %s's nonzero input to 0: INT16 suggested",
                100 * num(l0, "zeroed_fraction"), str(l0, "layer"));
        else
            put(f, "", 2, "int8 rounds nonzero inputs to 0 in %s: INT16 suggested", t1);
    }
}

/* compile's exeom and atc's first warning (x: the summary's "compile"); true when a warning
   line was printed. */
static bool text_compile(const json_t *x, FILE *f)
{
    const char *xb = strrchr(str(x, "exeom"), '/');
    const char *scale = str(x, "nb_input_scale");
    put(f, "compile", 1, "%s: %.0f bytes%s%s%s", xb ? xb + 1 : str(x, "exeom"),
        num(x, "exeom_bytes"), *scale ? ", --nb_input_scale=\"" : "", scale, *scale ? "\"" : "");
    /* atc's warnings: the fp16-range one shortened to its layer, range and suggestion */
    const json_t *aw = json_object_get(x, "warnings");
    bool atc_line = json_array_size(aw) > 0;
    if (atc_line) {
        const char *w0 = json_string_value(json_array_get(aw, 0)), *sg = str(x,
            "suggested_nb_input_scale");
        char layer[256];
        double range;
        int used = 0;
        if (*sg && w0 && sscanf(w0, "fp16 range: %255[^']'s input was calibrated to %lg,%n", layer,
                          &range, &used) == 2 && used > 0)
            put(f, "", 2, "atc: %s's input calibrated to %.3g > 65504; it suggests "
                "--nb_input_scale=\"%s\"%s", layer, range, sg,
                json_array_size(aw) > 1 ? " (all warnings: summary.json)" : "");
        else
            put(f, "", 2, "atc: %s%s", w0 ? w0 : "", json_array_size(aw) > 1 ? " (more: summary.json)"
                                                                          : "");
    }
    return atc_line;
}

/* the NPU's cycles, the MCU's CPU placement (or its advice) and the fp16 saturations (n: the
   summary's "npu"). */
static void text_npu(const json_t *s, const json_t *n, int n_eval, FILE *f)
{
    char t1[2048];
    size_t at;
    put(f, "NPU", 1, "%.0f cycles = %.3f ms at 64 MHz, %.3f ms at 200 MHz", num(n, "cycles"),
        num(n, "ms_64mhz"), num(n, "ms_200mhz"));
    if (num(n, "cycles_max") > num(n, "cycles_min")) /* an If: the branch taken decides */
        put(f, "", 2, "over the %.0f evaluation inputs: %.0f to %.0f cycles by the If branch "
            "taken, %.3f to %.3f ms at 64 MHz", num(n, "cycles_inputs"), num(n, "cycles_min"),
            num(n, "cycles_max"), num(n, "cycles_min") / 64e3, num(n, "cycles_max") / 64e3);
    /* the MCU's CPU: the placement, its cycles, or calibrate's advice when not taken */
    const json_t *pl = json_object_get(s, "placement"), *adv = json_object_get(pl, "advice");
    const json_t *al = json_array_get(json_object_get(adv, "layers"), 0);
    const char *cpu = json_string_value(json_object_get(pl, "cpu_nodes"));
    int n_cpu = cpu && *cpu ? 1 : 0;
    for (const char *p = cpu; p && *p; p++)
        n_cpu += *p == ';';
    double cpu_tasks = num(pl, "cpu_tasks");
    if (n_cpu || cpu_tasks > 0)
        put(f, "placement", 2, "%.0f task%s on the MCU's CPU (%s): %.0f of the cycles, %.0f "
            "switch%s between NPU and CPU (%.0f cycles)", cpu_tasks, cpu_tasks == 1 ? "" : "s",
            !n_cpu ? "ops the NPU does not run"
            : !strcmp(str(pl, "source"), "auto_place") ? "--auto_place, calibrate's advice"
                                                          : "--cpu_nodes",
            num(n, "cpu_cycles"), num(n, "switches"), num(n, "switches") == 1 ? "" : "es",
            num(n, "switch_cycles"));
    else if (!strcmp(str(pl, "source"), "auto_place (no advice)"))
        put(f, "placement", 2, "--auto_place: calibrate advised nothing for the CPU");
    if (al)
        put(f, n_cpu ? "" : "placement", 2, "%s: INT16 rounds to 0 %.0f%% of the nonzero input of "
            "its worst calibration input (%.0f inputs over 20%%)%s", str(al, "layer"),
            100 * num(al, "zeroed_int16_worst_input"), num(al, "zeroed_int16_inputs_over"),
            n_cpu ? "" : ": the MCU's CPU advised (--auto_place; nodes: summary.json)");
    const json_t *st = json_object_get(json_object_get(n, "saturation"), "tasks");
    if (json_array_size(st)) {
        at = 0;
        for (size_t i = 0; i < json_array_size(st) && at < sizeof t1; i++) {
            const json_t *k = json_array_get(st, i);
            at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s (%s) %.0f values on %.0f/%d "
                                   "inputs", i ? "; " : "", str(k, "name"), str(k, "op_type"),
                                   num(k, "count"), num(k, "inputs"), n_eval);
        }
        put(f, "saturation", 2, "fp16 at 65504: %s", t1);
    }
}

/* the saturation fix bring-up tried (--nb_input_scale), and what it measured. */
static void text_fix(const json_t *s, int n_eval, FILE *f)
{
    char t1[2048], t2[64], t3[64], t4[64];
    const json_t *fx = json_object_get(s, "saturation_fix");
    if (json_is_object(fx)) {
        const json_t *tr = json_object_get(fx, "tried"), *fo = json_object_get(fx, "outputs");
        const char *fs = str(fx, "nb_input_scale");
        if (*str(fx, "not_tried"))
            put(f, "fix", 3, "not tried: %s", str(fx, "not_tried"));
        else if (!*fs)
            put(f, "fix", 3, "no atc --nb_input_scale clamps nothing (%zu tried): %s",
                json_array_size(tr), str(fx, "note"));
        else {
            const json_t *o0 = json_array_get(json_object_get(s, "outputs"), 0),
                         *f0 = json_array_get(fo, 0);
            bool score = num(o0, "numel") == 1;
            const char *key = score ? "pooled_cosine" : "cosine_worst";
            double logs = num(fx, "log_of_zero_left");
            put(f, "fix", 5, "tried and measured (%zu compile%s): atc --nb_input_scale=\"%s\" clamps "
                "nothing on %.0f/%d inputs (%.0f values before)%s; output SQNR mean %s -> %s, "
                "%s %s -> %s (fix/ in out)", json_array_size(tr),
                json_array_size(tr) == 1 ? "" : "s", fs, num(fx, "inputs"), n_eval,
                num(fx, "saturations_before"),
                logs > 0 ? "; a Log's -inf remains (the log of 0, no scale removes it: INT16 "
                           "before it, or the host)" : "",
                db_str(num(o0, "sqnr_db_mean"), t2, sizeof t2),
                db_str(num(f0, "sqnr_db_mean"), t3, sizeof t3),
                score ? "cosine over the inputs" : "worst cosine",
                cos_str(num(o0, key), t4, sizeof t4), cos_str(num(f0, key), t1, sizeof t1));
        }
    }
}

/* the first 3 outputs' cosine and SQNR over the evaluation inputs, and what those inputs
   were (esrc: the evaluation's source). */
static void text_outputs(const json_t *s, int n_eval, int eval_avail, const char *esrc, FILE *f)
{
    char t2[64], t3[64], t4[64];
    const json_t *outs = json_object_get(s, "outputs");
    for (size_t i = 0; i < json_array_size(outs) && i < 3; i++) {
        const json_t *o = json_array_get(outs, i);
        /* the label shortened, never the numbers after it (timer's output is named by a
           139-character label map): the head and tail of a long name with "..." between */
        char oname[40];
        short_label(str(o, "name"), oname, sizeof oname);
        if (num(o, "numel") == 1) { /* a score: its cosine is 1 on each input */
            /* two lines when needed: a cut would drop the error's exponent (2.276e-07 shown
               as "2...") */
            put(f, i ? "" : "output", 2, "%s [%s], %d inputs: SQNR mean %s worst %s, max |err| %.3g",
                oname, str(o, "shape"), n_eval,
                sq_str(o, "sqnr_db_mean", t2, sizeof t2),
                sq_str(o, "sqnr_db_worst", t3, sizeof t3), num(o, "max_abs_error"));
            put(f, "", 1, "cosine 1 on one value; over the %d inputs together: %s, %s", n_eval,
                cos_str(num(o, "pooled_cosine"), t2, sizeof t2),
                sq_str(o, "pooled_sqnr_db", t3, sizeof t3));
            fp16_resolution_line(f, o);
        } else {
            put(f, i ? "" : "output", 2, "%s [%s], %d input%s: cosine mean %s worst %s",
                oname, str(o, "shape"), n_eval, n_eval == 1 ? "" : "s",
                cos_str(num(o, "cosine_mean"), t2, sizeof t2),
                cos_str(num(o, "cosine_worst"), t3, sizeof t3));
            put(f, "", 1, "SQNR mean %s worst %s, max |npu - float| %.4g",
                sq_str(o, "sqnr_db_mean", t2, sizeof t2),
                sq_str(o, "sqnr_db_worst", t4, sizeof t4), num(o, "max_abs_error"));
            fp16_resolution_line(f, o);
        }
    }
    if (json_array_size(outs) > 3)
        put(f, "", 1, "(%zu outputs in all: summary.json)", json_array_size(outs));
    if (eval_avail > n_eval) /* what the figures were taken on, when not all */
        put(f, "", 1, "(on %d of the %d files of --%s: --eval_count %d)", n_eval,
            eval_avail, !strcmp(esrc, "eval_dir") ? "eval_dir" : "data_dir", n_eval);
    if (!strcmp(esrc, "random")) /* no data given: what the figures above were measured on */
        put(f, "", 1, "(on %d random inputs, uniform in [-1, 1): no --data_dir or --eval_dir)",
            n_eval);
}

/* compare's verdict on one evaluation input (cm: the summary's "compare"): the first layer
   over threshold, its cause and the largest SQNR drop; atc_line: a cause line of 2. */
static void text_compare(const json_t *cm, int n_eval, int cmp_input, const char *cmp_rule,
                         bool atc_line, FILE *f)
{
    char t2[64], t3[64];
    const json_t *fb = json_object_get(cm, "first_over_threshold");
    if (json_is_object(fb)) {
        if (n_eval > 1)
            put(f, "compare", 1, "on evaluation input %d of %d (%s)",
                cmp_input + 1, n_eval, cmp_rule);
        put(f, n_eval > 1 ? "" : "compare", 3, "%s", str(cm, "verdict_text"));
        char lname[48];
        short_label(str(fb, "layer"), lname, sizeof lname);
        put(f, "", 2, "first over threshold: %s (%s), cos %s, %s; %.0f/%.0f over",
            lname, str(fb, "op_type"), cos_str(num(fb, "cosine"), t2, sizeof t2),
            db_str(num(fb, "sqnr_db"), t3, sizeof t3), num(cm, "over_threshold"),
            num(cm, "compared"));
        put(f, "", atc_line ? 2 : 3, "cause: %s", str(fb, "likely_cause"));
        const json_t *wd = json_object_get(cm, "largest_sqnr_drop");
        /* and the largest SQNR drop when it is another layer (its cause when compare
           names one) */
        if (json_is_object(wd) && strcmp(str(wd, "layer"), str(fb, "layer"))) {
            const char *why = str(wd, "likely_cause");
            /* from the input it reads (issue 37), named; "exact" for an input of no error */
            put(f, "", atc_line ? 2 : 3, "largest SQNR drop: %s (%s), %s at its input %s -> "
                "%s%s%s", str(wd, "layer"), str(wd, "op_type"),
                json_is_true(json_object_get(wd, "previous_exact"))
                    ? "exact"
                    : db_str(num(wd, "previous_sqnr_db"), t2, sizeof t2),
                *str(wd, "input") ? str(wd, "input") : "(unnamed)",
                db_str(num(wd, "sqnr_db"), t3, sizeof t3),
                strncmp(why, "none clear", 10) ? ": " : "", strncmp(why, "none clear", 10) ? why : "");
        }
    } else {
        if (n_eval > 1)
            put(f, "compare", 1, "on evaluation input %d of %d (%s)",
                cmp_input + 1, n_eval, cmp_rule);
        put(f, n_eval > 1 ? "" : "compare", 2, "%s: %.0f of %.0f tensors compared, none over threshold",
            str(cm, "verdict_text"), num(cm, "compared"), num(cm, "tensors"));
    }
}

/* the history runs of the bring-up (r: the summary's "runs"). */
static void text_runs(const json_t *r, FILE *f)
{
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
        put(f, "runs", 3, "bringup %lld: estimate %lld, calibrate %lld, compile %lld, run %s, infer "
            "%s, compare %lld (nanobench history show %lld)", (long long)me,
            (long long)json_integer_value(json_object_get(r, "estimate")),
            (long long)json_integer_value(json_object_get(r, "calibrate")),
            (long long)json_integer_value(json_object_get(r, "compile")), ri, ii,
            (long long)json_integer_value(json_object_get(r, "compare")), (long long)me);
    else
        put(f, "runs", 1, "not recorded");
}

void nb_report_text(const json_t *s, FILE *f)
{
    const json_t *ev = json_object_get(s, "evaluation");
    const char *esrc = str(ev, "source");
    const int n_eval = count(json_object_get(ev, "count"));
    const int eval_avail = count(json_object_get(ev, "available"));
    const bool qat = json_is_true(json_object_get(json_object_get(s, "calibration"), "qat"));
    const int cmp_input = count(json_object_get(json_object_get(s, "compare"), "input"));
    /* the rule that picked it (summaries before issue 37 say none: the lowest SQNR) */
    const char *cmp_rule = str(json_object_get(s, "compare"), "input_rule");
    if (!*cmp_rule)
        cmp_rule = "the lowest output SQNR";
    const json_t *c = json_object_get(s, "calibration"), *x = json_object_get(s, "compile"),
                 *n = json_object_get(s, "npu"), *cm = json_object_get(s, "compare"),
                 *r = json_object_get(s, "runs");
    text_estimate(s, f);
    if (qat) /* imported: nothing was calibrated, nothing evaluated at this step */
        put(f, "calibrate", 1, "QAT import: %.0f layer%s, the model's own scales (no data)",
            num(c, "layers"), num(c, "layers") == 1 ? "" : "s");
    else
        text_calibrate(c, f);
    bool atc_line = text_compile(x, f);
    text_npu(s, n, n_eval, f);
    text_fix(s, n_eval, f);
    text_outputs(s, n_eval, eval_avail, esrc, f);
    text_compare(cm, n_eval, cmp_input, cmp_rule, atc_line, f);
    search_text(f, json_object_get(s, "search"));
    text_runs(r, f);
    put(f, "out", 2, "%s/summary.json, %scompare/, log/", str(s, "out"),
        json_is_string(json_object_get(s, "report")) ? "report.html, " : "");
}

