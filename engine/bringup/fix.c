/* nanobench bring-up: the fix for fp16 saturation, tried and measured (issue 26: a verdict
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bu.h"
#include "nb/ir.h"


typedef struct fix_try {
    char *scale, tag[16];
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
        if (nb_json_num_of(json_array_get(ts, i), "index") < *index) {
            *index = nb_json_num_of(json_array_get(ts, i), "index");
            op = nb_json_str_of(json_array_get(ts, i), "op_type");
        }
    /* a Log's -inf (the log of 0, counted apart by run: log_zeros) is a first clamp too */
    const json_t *all = json_object_get(run, "tasks");
    for (size_t i = 0; i < json_array_size(all); i++) {
        const json_t *t = json_array_get(all, i);
        if (nb_json_num_of(t, "log_zeros") > 0 && nb_json_num_of(t, "index") < *index) {
            *index = nb_json_num_of(t, "index");
            op = "Log";
        }
    }
    return op;
}

/* "x:2^-k;y:2^-k" over the fp16 inputs (atc's --nb_input_scale spec; malloc'd) */
static char *scale_all(const bu *b, int k)
{
    size_t len = 1;
    const char *fp16 = b->fp16;
    if (fp16)
        len += strlen(fp16) * 2 + 16;
    for (int i = 0; !fp16 && i < b->n_in; i++)
        len += strlen(b->in_name[i]) + 16;
    char *buf = calloc(len, 1);
    size_t at = 0;
    if (!buf)
        return NULL;
    if (!fp16) { /* every float input */
        for (int i = 0; i < b->n_in; i++)
            if (b->in_dtype[i] == NB_FLOAT || b->in_dtype[i] == NB_FLOAT16)
                at += (size_t)snprintf(buf + at, len - at, "%s%s:2^-%d", at ? ";" : "",
                                       b->in_name[i], k);
        return buf;
    }
    for (const char *p = fp16; *p && at < len;) {
        const char *e = strchr(p, ';');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n)
            at += (size_t)snprintf(buf + at, len - at, "%s%.*s:2^-%d", at ? ";" : "", (int)n, p, k);
        p += n + (e ? 1 : 0);
    }
    return buf;
}

/* One try: atc with t->scale into OUT/fix/<tag>/, then run on the evaluation inputs (up to
 * the first that clamps). 0 when done; -1 when atc or run refused (why in err); else the
 * bringup's exit status. */
/* One try: atc with t->scale into OUT/fix/<tag>/, then run on the evaluation inputs (up to
 * the first that clamps). 0 when done; -1 when atc or run refused (why in err); 1 when the
 * bring-up stops (cancelled, out of memory: b->st). */
static int try_scale(bu *b, fix_try *t, const char *tag, int64_t parent, char *err, size_t errlen)
{
    char output[3400], exeom[3500], logname[64];
    snprintf(output, sizeof output, "%s/fix/%s/%s", b->outdir, tag, b->stem);
    snprintf(exeom, sizeof exeom, "%s.exeom", output);
    snprintf(logname, sizeof logname, "7-fix-%s-atc", tag);
    int64_t atc_id = 0;
    if (bu_cancelled(b)) {
        bu_interrupted(b); /* b->st: NB_ERR_CANCELLED (it returned 1 with no error set: the
                              bring-up then ended 0 with an empty summary) */
        return 1;
    }
    nb_err e = bu_compile(b, output, t->scale, parent, logname, &atc_id, NULL);
    if (e) {
        snprintf(err, errlen, "%s", b->st->msg);
        return e == NB_ERR_NOMEM || e == NB_ERR_CANCELLED ? 1 : -1;
    }
    t->runs = json_array();
    t->clamps = 0;
    t->log_left = 0;
    t->inputs_run = 0;
    for (int k = 0; k < b->n_eval && t->clamps == 0; k++) {
        char od[3600];
        snprintf(od, sizeof od, "%s/fix/%s/run/%d", b->outdir, tag, k);
        snprintf(logname, sizeof logname, "7-fix-%s-run-%d", tag, k);
        json_t *o = NULL;
        int64_t id = 0;
        if (bu_cancelled(b)) {
            bu_interrupted(b);
            return 1;
        }
        if ((e = bu_run(b, exeom, k, od, NULL, atc_id > 0 ? atc_id : parent, logname, &o, &id))) {
            snprintf(err, errlen, "%s", b->st->msg);
            return e == NB_ERR_NOMEM || e == NB_ERR_CANCELLED ? 1 : -1;
        }
        /* clamps from a range beyond fp16; when the first task to clamp is a Log, what is
           left is the log of 0 (and what inherits it), which no scale removes */
        double fi = INFINITY;
        const char *fop = first_clamp(o, &fi);
        double total = nb_json_num_of(json_object_get(o, "saturation"), "total");
        double lz = nb_json_num_of(o, "log_of_zero");
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

void bu_fix_clear(const bu *b)
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
            bu_warn(b, "%s: cannot remove a previous try: %s", p, strerror(errno));
    }
    snprintf(p, sizeof p, "%s/fix", b->outdir);
    rmdir(p); /* when empty */
}

/* why no fix is tried (a JSON string), or NULL: try */
static json_t *not_tried(const bu *b)
{
    if (b->in_scale)
        return json_string("--nb_input_scale was given");
    if (b->fp16 ? !*b->fp16 : b->n_float_in == 0)
        return json_string("no float input to scale");
    /* the first task (in task order) that clamps: a Log's -inf is the log of 0, which no
       input scale removes */
    const char *first_op = NULL;
    double first_index = INFINITY;
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        const char *op = first_clamp(json_array_get(b->runs, k), &first_index);
        if (op)
            first_op = op;
    }
    if (first_op && !strcmp(first_op, "Log"))
        return json_string("the first task to clamp is a Log: its -inf is the log of 0 (small "
                           "values the quantization rounds to 0), which no input scale "
                           "removes; INT16 on the layer before it (calibrate's advice), or "
                           "that part on the host");
    return NULL;
}

/* The ladder: atc's suggestion first, then 2^-k for k in 1, 2, 4, 8, 16, 24 until clean,
 * bisected. The clean try into *best (found); every try into tried. 0, or 1 when the
 * bring-up stops (b->st). err: the last refusal. */
static int ladder(bu *b, json_t *tried, int64_t parent, fix_try *best, bool *found, char *err,
                  size_t errlen)
{
    int lo = 0, hi = -1; /* the largest k that clamps, the smallest that does not */
    static const int steps[] = {1, 2, 4, 8, 16, 24};
    int step = b->suggest_spec ? -1 : 0;
    for (;;) {
        fix_try t = {0};
        int k = 0;
        if (step < 0) { /* atc's suggestion first */
            t.scale = strdup(b->suggest_spec);
            snprintf(t.tag, sizeof t.tag, "suggested");
        } else {
            if (hi < 0 && step < (int)(sizeof steps / sizeof *steps))
                k = steps[step];
            else if (hi >= 0 && hi - lo > 1)
                k = (lo + hi) / 2;
            else
                break;
            t.scale = scale_all(b, k);
            snprintf(t.tag, sizeof t.tag, "s%d", k);
        }
        int r = t.scale ? try_scale(b, &t, t.tag, parent, err, errlen)
                        : (nb_fail(b->st, NB_ERR_NOMEM, "out of memory"), 1);
        if (r > 0) {
            json_decref(t.runs);
            free(t.scale);
            return 1;
        }
        json_t *jt = json_object();
        json_object_set_new(jt, "nb_input_scale", nb_json_string(t.scale));
        json_array_append_new(tried, jt);
        bool clean = r == 0 && t.clamps == 0;
        if (r < 0) {
            json_object_set_new(jt, "error", nb_json_string(err));
        } else {
            json_object_set_new(jt, "saturations", json_real(t.clamps));
            json_object_set_new(jt, "inputs_run", json_integer(t.inputs_run));
        }
        if (clean) {
            json_decref(best->runs);
            free(best->scale);
            *best = t;
            *found = true;
        } else {
            json_decref(t.runs);
            free(t.scale);
        }
        if (step < 0) { /* the suggestion: clean, or the ladder next */
            if (clean)
                break;
            step = 0;
            continue;
        }
        if (r < 0)
            break;
        if (clean)
            hi = k;
        else
            lo = k;
        if (hi < 0)
            step++;
    }
    return 0;
}

json_t *bu_saturation_fix(bu *b, double before, int64_t parent)
{
    json_t *fx = json_object(), *tried = json_array();
    json_object_set_new(fx, "saturations_before", json_real(before));
    json_object_set_new(fx, "tried", tried);
    json_t *why = not_tried(b);
    if (why) {
        json_object_set_new(fx, "not_tried", why);
        return fx;
    }
    bu_note(b, "[+] fp16 saturation: trying atc --nb_input_scale ...");
    b->stage = "the fp16 fix";
    fix_try best = {0};
    bool found = false;
    char err[1024] = "";
    if (ladder(b, tried, parent, &best, &found, err, sizeof err)) {
        json_decref(fx);
        return NULL;
    }
    if (!found) {
        json_object_set_new(fx, "nb_input_scale", json_null());
        json_object_set_new(fx, "note", nb_json_string(err[0] ? err : "every scale down to 2^-24 "
                                                       "still clamps"));
        return fx;
    }
    /* the clean exeom measured as the bringup's own */
    double worst = NAN;
    json_t *outs = bu_output_metrics(b, best.runs, &worst);
    json_decref(best.runs);
    if (!outs) {
        free(best.scale);
        json_decref(fx);
        return NULL;
    }
    json_object_set_new(fx, "nb_input_scale", nb_json_string(best.scale));
    free(best.scale);
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

/* atc's warnings' --nb_input_scale advice ("NAME:2^K", a name without ':' or '"': atc's
 * own) kept as the spec to try: the smallest K for an input several warnings name */
void bu_atc_advice(bu *b, const char *w)
{
    static const char opt[] = "--nb_input_scale=\"";
    const char *o = strstr(w, opt);
    if (!o)
        return;
    o += sizeof opt - 1;
    size_t nl = strcspn(o, ":\"");
    int k, used = 0;
    if (!nl || o[nl] != ':' || sscanf(o + nl, ":2^%d\"%n", &k, &used) != 1 || used <= 0)
        return;
    char *name = strndup(o, nl);
    if (!name)
        return;
    if (!b->suggest)
        b->suggest = json_object();
    json_t *have = json_object_get(b->suggest, name);
    if (!have || k < json_integer_value(have))
        json_object_set_new(b->suggest, name, json_integer(k));
    free(name);
    /* the spec, in the order the inputs were first named */
    size_t len = 1;
    const char *key;
    json_t *v;
    json_object_foreach(b->suggest, key, v)
        len += strlen(key) + 24;
    char *spec = calloc(len, 1);
    size_t at = 0;
    json_object_foreach(b->suggest, key, v)
        if (spec)
            at += (size_t)snprintf(spec + at, len - at, "%s%s:2^%lld", at ? ";" : "", key,
                                   (long long)json_integer_value(v));
    free(b->suggest_spec);
    b->suggest_spec = spec;
}
