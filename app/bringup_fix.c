/* nanobench bringup: the fix for fp16 saturation, tried and measured (issue 26: a verdict
 * that names the saturating layer gives a fix the tool has run). When the evaluation runs
 * clamped values at fp16's 65504, bringup compiles the deploy model again with atc's
 * --nb_input_scale (share/doc/exeom.md: the model computes as if its input were multiplied
 * by s, every output as the model's) and runs the evaluation inputs on each exeom:
 *   1. atc's own suggestion, when its range check made one (a cube layer's calibrated input
 *      beyond 65504);
 *   2. else s = 2^-k on every fp16 input, k = 1, 2, 4, 8, 16, 24 until no input clamps, then
 *      bisected to the smallest such k (the least scaling: fp16's subnormals lose precision
 *      at the small end). A try stops at its first input that clamps.
 * The exeom that clamps nothing is measured like the bringup's own (output_metrics) and
 * kept under OUT/fix/. atc refusing a scale (an input that reaches no cube op) ends the
 * search with its message. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bringup.h"
#include "cli.h"
#include "nb/ir.h"

typedef struct fix_try {
    char scale[512], tag[16];
    double clamps;  /* summed over the inputs run: clamps of a range beyond fp16 */
    double log_left; /* -inf of a Log that clamps first (the log of 0: no scale removes it) */
    int inputs_run;
    json_t *runs;   /* run's JSON per input run */
} fix_try;

/* The op type of the first task (in task order) that clamped in a run's JSON, when its index
 * is below *index (which it then takes); NULL otherwise. */
static const char *first_clamp(const json_t *run, double *index)
{
    const json_t *ts = json_object_get(json_object_get(run, "saturation"), "tasks");
    const char *op = NULL;
    for (size_t i = 0; i < json_array_size(ts); i++)
        if (bu_num(json_array_get(ts, i), "index") < *index) {
            *index = bu_num(json_array_get(ts, i), "index");
            op = bu_str(json_array_get(ts, i), "op_type");
        }
    /* a Log's -inf (the log of 0, counted apart by run: log_zeros) is a first clamp too */
    const json_t *all = json_object_get(run, "tasks");
    for (size_t i = 0; i < json_array_size(all); i++) {
        const json_t *t = json_array_get(all, i);
        if (bu_num(t, "log_zeros") > 0 && bu_num(t, "index") < *index) {
            *index = bu_num(t, "index");
            op = "Log";
        }
    }
    return op;
}

/* "x:2^-k;y:2^-k" over the fp16 inputs */
static void scale_all(const bu *b, int k, char *buf, size_t len)
{
    const char *fp16 = b->fp16 ? b->fp16 : b->fp16_all;
    size_t at = 0;
    buf[0] = 0;
    const char *p = fp16;
    while (*p && at < len) {
        const char *e = strchr(p, ';');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n)
            at += (size_t)snprintf(buf + at, len - at, "%s%.*s:2^-%d", at ? ";" : "", (int)n, p, k);
        p += n + (e ? 1 : 0);
    }
}

/* One try: atc with t->scale into OUT/fix/<tag>/, then run on the evaluation inputs (up to
 * the first that clamps). 0 when done; -1 when atc or run refused (why in err); else the
 * bringup's exit status. */
static int try_scale(bu *b, fix_try *t, const char *tag, int64_t parent, char *err, size_t errlen)
{
    char output[3400], exeom[3500], logname[64];
    bu_argv a = {0};
    tui_job *j = NULL;
    int status;
    snprintf(output, sizeof output, "%s/fix/%s/%s", b->outdir, tag, b->stem);
    snprintf(exeom, sizeof exeom, "%s.exeom", output);
    atc_argv(b, &a, output, t->scale);
    snprintf(logname, sizeof logname, "7-fix-%s-atc", tag);
    int r = child_soft(b, -1, "atc", "", logname, parent, &a, &j, err, errlen, &status);
    if (r)
        return r;
    int64_t atc_id = j->run_id;
    tui_job_free(j);
    t->runs = json_array();
    t->clamps = 0;
    t->log_left = 0;
    t->inputs_run = 0;
    for (int k = 0; k < b->n_eval && t->clamps == 0; k++) {
        char od[3600];
        snprintf(od, sizeof od, "%s/fix/%s/run/%d", b->outdir, tag, k);
        run_argv(b, &a, exeom, k, od, NULL);
        snprintf(logname, sizeof logname, "7-fix-%s-run-%d", tag, k);
        r = child_soft(b, -1, "run", "", logname, atc_id > 0 ? atc_id : parent, &a, &j, err,
                       errlen, &status);
        if (r)
            return r;
        json_t *o = job_json(j, "run", &r);
        tui_job_free(j);
        if (!o)
            return r;
        /* clamps from a range beyond fp16; when the first task to clamp is a Log, what is
           left is the log of 0 (and what inherits it), which no scale removes */
        double fi = INFINITY;
        const char *fop = first_clamp(o, &fi);
        double total = bu_num(json_object_get(o, "saturation"), "total");
        double lz = bu_num(o, "log_of_zero");
        total += isnan(lz) ? 0 : lz;
        if (fop && !strcmp(fop, "Log"))
            t->log_left += total;
        else
            t->clamps += total;
        t->inputs_run++;
        json_array_append_new(t->runs, o);
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

void fix_clear(const bu *b)
{
    /* only the folders this step writes: fix/suggested and fix/s<k> (k = 1..24) */
    char p[3600];
    for (int k = 0; k <= 24; k++) {
        if (k)
            snprintf(p, sizeof p, "%s/fix/s%d", b->outdir, k);
        else
            snprintf(p, sizeof p, "%s/fix/suggested", b->outdir);
        struct stat sb;
        if (!lstat(p, &sb) && S_ISDIR(sb.st_mode) &&
            nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
            fprintf(stderr, "nanobench: warning: %s: cannot remove a previous try: %s\n", p,
                    strerror(errno));
    }
    snprintf(p, sizeof p, "%s/fix", b->outdir);
    rmdir(p); /* when empty */
}

json_t *saturation_fix(bu *b, double before, int64_t parent, int *rc)
{
    json_t *fx = json_object(), *tried = json_array();
    json_object_set_new(fx, "saturations_before", json_real(before));
    json_object_set_new(fx, "tried", tried);
    if (b->in_scale) {
        json_object_set_new(fx, "not_tried", json_string("--nb_input_scale was given"));
        return fx;
    }
    if (!*(b->fp16 ? b->fp16 : b->fp16_all)) {
        json_object_set_new(fx, "not_tried", json_string("no float input to scale"));
        return fx;
    }
    /* the first task (in task order) that clamps: a Log's -inf is the log of 0, which no
       input scale removes */
    const char *first_op = NULL;
    double first_index = INFINITY;
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        const char *op = first_clamp(json_array_get(b->runs, k), &first_index);
        if (op)
            first_op = op;
    }
    if (first_op && !strcmp(first_op, "Log")) {
        json_object_set_new(fx, "not_tried", json_string(
            "the first task to clamp is a Log: its -inf is the log of 0 (small values the "
            "quantization rounds to 0), which no input scale removes; INT16 on the layer "
            "before it (calibrate's advice), or that part on the host"));
        return fx;
    }
    fprintf(stderr, "[+] fp16 saturation: trying atc --nb_input_scale ...\n");
    fix_try best = {0};
    bool found = false;
    char err[1024] = "";
    int lo = 0, hi = -1; /* the largest k that clamps, the smallest that does not */
    static const int ladder[] = {1, 2, 4, 8, 16, 24};
    int step = b->suggest[0] ? -1 : 0;
    for (;;) {
        fix_try t = {0};
        char *tag = t.tag;
        int k = 0;
        if (step < 0) { /* atc's suggestion first */
            snprintf(t.scale, sizeof t.scale, "%s", b->suggest);
            snprintf(tag, sizeof t.tag, "suggested");
        } else {
            if (hi < 0 && step < (int)(sizeof ladder / sizeof *ladder))
                k = ladder[step];
            else if (hi >= 0 && hi - lo > 1)
                k = (lo + hi) / 2;
            else
                break;
            scale_all(b, k, t.scale, sizeof t.scale);
            snprintf(tag, sizeof t.tag, "s%d", k);
        }
        int r = try_scale(b, &t, tag, parent, err, sizeof err);
        if (r > 0) {
            json_decref(t.runs);
            json_decref(best.runs);
            json_decref(fx);
            *rc = r;
            return NULL;
        }
        json_t *jt = json_object();
        json_object_set_new(jt, "nb_input_scale", nb_json_string(t.scale));
        if (r < 0) {
            json_object_set_new(jt, "error", nb_json_string(err));
            json_array_append_new(tried, jt);
            json_decref(t.runs);
            if (step < 0) { /* the suggestion refused: the ladder next */
                step = 0;
                continue;
            }
            break;
        }
        json_object_set_new(jt, "saturations", json_real(t.clamps));
        json_object_set_new(jt, "inputs_run", json_integer(t.inputs_run));
        json_array_append_new(tried, jt);
        bool clean = t.clamps == 0;
        if (clean) {
            json_decref(best.runs);
            best = t;
            found = true;
        } else {
            json_decref(t.runs);
        }
        if (step < 0) {
            if (clean)
                break;
            step = 0;
            continue;
        }
        if (clean)
            hi = k;
        else
            lo = k;
        if (hi < 0)
            step++;
    }
    if (!found) {
        json_object_set_new(fx, "nb_input_scale", json_null());
        json_object_set_new(fx, "note", nb_json_string(err[0] ? err : "every scale down to 2^-24 "
                                                       "still clamps"));
        return fx;
    }
    /* the clean exeom measured as the bringup's own: its runs in place of b->runs */
    json_t *own = b->runs;
    b->runs = best.runs;
    double worst = NAN;
    json_t *outs = output_metrics(b, json_object_get(json_array_get(b->runs, 0), "outputs"),
                                  &worst, rc);
    b->runs = own;
    json_decref(best.runs);
    if (!outs) {
        json_decref(fx);
        return NULL;
    }
    json_object_set_new(fx, "nb_input_scale", nb_json_string(best.scale));
    json_object_set_new(fx, "saturations", json_real(0));
    json_object_set_new(fx, "log_of_zero_left", json_real(best.log_left));
    json_object_set_new(fx, "inputs", json_integer(b->n_eval));
    json_object_set_new(fx, "outputs", outs);
    json_object_set_new(fx, "worst_cosine", nb_json_num(worst));
    char path[3600];
    snprintf(path, sizeof path, "%s/fix/%s/%s.exeom", b->outdir, best.tag, b->stem);
    json_object_set_new(fx, "exeom", nb_json_string(path));
    return fx;
}
