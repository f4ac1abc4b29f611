/* nanobench accucmp: file_compare as an engine step (include/nb/accucmp.h, issue 18): the
 * two dump sets read (a worker per core), every NPU task output matched with its golden
 * tensor and compared, the verdict, the likely cause of a layer's error, one layer picked,
 * the vendor's CSV, and --isolate on the simulator. No printing, no exit, no global state:
 * errors go to nb_status, the command (app/cmd_compare.c) prints and records.
 * Rules: share/doc/metrics.md and ../shared/docs/facts/accucmp.md. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "nb/accucmp.h"
#include "nb/sim.h"

/* ---- reading dump sets ---- */

typedef struct file_list {
    char **f;
    int n, cap;
} file_list;

static bool list_add(file_list *l, const char *path)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->f, sizeof *p * (size_t)cap);
        if (!p)
            return false;
        l->f = p, l->cap = cap;
    }
    return (l->f[l->n] = strdup(path)) ? (l->n++, true) : false;
}

/* Every regular file under root (or root itself), in no particular order; ".tmp" files and
 * folders (a dump being written, a killed run's) and manifest.tsv left out. False on NOMEM or a walk that fails (errno). */
static bool collect(const char *root, file_list *l)
{
    char *paths[2] = {(char *)root, NULL};
    FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
    if (!fts)
        return false;
    FTSENT *e;
    bool ok = true;
    while (ok && (e = fts_read(fts))) {
        if (e->fts_info == FTS_D && e->fts_level > 0 && strstr(e->fts_name, ".tmp.")) {
            fts_set(fts, e, FTS_SKIP); /* a dump folder still being written, or a killed run's */
        } else if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR || e->fts_info == FTS_NS) {
            errno = e->fts_errno;
            ok = false;
        } else if (e->fts_info == FTS_F && !strstr(e->fts_name, ".tmp") &&
                   strcmp(e->fts_name, "manifest.tsv") != 0) {
            ok = list_add(l, e->fts_path);
        }
    }
    fts_close(fts);
    return ok;
}

/* Named as a dump is ({op_type}.{op_name}.{task}.{stream}.{16-digit timestamp}): a file
   so named that does not parse is a damaged dump, not another kind of file. */
static bool dump_named(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *last = strrchr(base, '.');
    if (!last || strlen(last + 1) != 16 || strspn(last + 1, "0123456789") != 16)
        return false;
    int dots = 0;
    for (const char *q = base; *q; q++)
        dots += *q == '.';
    return dots >= 4;
}

typedef void (*dump_cb)(void *user, nb_dump *d, int index);
typedef struct par_work {
    const file_list *files;
    int w, T, want;
    nb_dump *d;
    bool *ok;
    dump_cb cb;
    void *user;
    nb_status st;
    nb_err err;
    int skipped;
    bool explicit_files;
} par_work;

static void *par_read(void *arg)
{
    par_work *p = arg;
    for (int i = p->w; i < p->files->n && !p->err; i += p->T) {
        nb_status st = {0};
        nb_err e = nb_dump_read(p->files->f[i], p->want, &p->d[i], &st);
        if (!e) {
            p->ok[i] = true;
            if (p->cb)
                p->cb(p->user, &p->d[i], i);
        } else if (e == NB_ERR_FORMAT && !p->explicit_files && !dump_named(p->files->f[i])) {
            p->skipped++;
        } else {
            p->err = e;
            p->st = st;
        }
    }
    return NULL;
}

static int default_workers(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return ncpu > 4 ? 4 : ncpu < 1 ? 1 : (int)ncpu;
}

/* nb_dumps_read with a callback per dump as it is read (users[w]: worker w's context) and
 * *map (if map) taking a file index to its dump's index once compacted. */
static int read_dumps(const char *spec, int want, nb_dump **out, int **map, dump_cb cb,
                      void **users, int T, nb_status *st)
{
    int *local_map = NULL;
    if (!map)
        map = &local_map;
    *map = NULL;
    if (T <= 0)
        T = default_workers();
    if (T > 4)
        T = 4;
    file_list files = {0};
    char *copy = strdup(spec), *save = NULL;
    if (!copy) {
        nb_fail(st, NB_ERR_NOMEM, "out of memory");
        return -1;
    }
    bool explicit_files = false;
    nb_err err = NB_OK;
    struct stat whole;
    /* a path that exists as given is one path, commas and all (a bring-up folder named
       "a,b"); else a comma-separated list */
    const char *sep = stat(spec, &whole) ? "," : "";
    for (char *p = *sep ? strtok_r(copy, sep, &save) : copy; p && !err;
         p = *sep ? strtok_r(NULL, sep, &save) : NULL) {
        struct stat sb;
        char real[PATH_MAX];
        if (stat(p, &sb) || !realpath(p, real))
            err = nb_fail(st, NB_ERR_IO, "%s: %s", p, strerror(errno));
        else if ((explicit_files |= S_ISREG(sb.st_mode), !collect(real, &files)))
            err = errno == ENOMEM ? nb_fail(st, NB_ERR_NOMEM, "out of memory")
                                  : nb_fail(st, NB_ERR_IO, "%s: cannot walk the folder: %s", p,
                                            strerror(errno));
    }
    free(copy);
    nb_dump *d = NULL;
    bool *ok = NULL;
    int n = 0, skipped = 0;
    if (!err) {
        d = calloc((size_t)files.n + 1, sizeof *d);
        ok = calloc((size_t)files.n + 1, sizeof *ok);
        *map = calloc((size_t)files.n + 1, sizeof **map);
        if (!d || !ok || !*map)
            err = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    if (!err) {
        par_work pw[4];
        pthread_t th[4];
        nb_sim_numerics_init(); /* the decode tables, before any worker */
        int started = 0;
        for (int w = 0; w < T; w++) {
            pw[w] = (par_work){.files = &files, .w = w, .T = T, .want = want, .d = d, .ok = ok,
                               .cb = cb, .user = users ? users[w] : NULL,
                               .explicit_files = explicit_files};
            if (pthread_create(&th[w], NULL, par_read, &pw[w]))
                break;
            started++;
        }
        for (int w = 0; w < started; w++)
            pthread_join(th[w], NULL);
        for (int w = started; w < T; w++) { /* a worker that could not start: done here */
            pw[w].T = T;
            par_read(&pw[w]);
        }
        for (int w = 0; w < T; w++) {
            skipped += pw[w].skipped;
            if (pw[w].err && !err) {
                err = pw[w].err;
                *st = pw[w].st;
            }
        }
    }
    for (int i = 0; i < files.n; i++) {
        if (d && ok && ok[i]) {
            (*map)[i] = n;
            d[n++] = d[i];
        }
        free(files.f[i]);
    }
    free(files.f);
    free(ok);
    if (!err && n == 0)
        err = nb_fail(st, NB_ERR_ARG, "%s: no dump file%s", spec,
                      skipped ? " (only other files)" : "");
    if (err) {
        for (int i = 0; d && i < n; i++)
            nb_dump_free(&d[i]);
        free(d);
        free(*map);
        *map = NULL;
        return -1;
    }
    free(local_map);
    *out = d;
    return n;
}

int nb_dumps_read(const char *spec, int want, int workers, nb_dump **out, nb_status *st)
{
    return read_dumps(spec, want, out, NULL, NULL, NULL, workers, st);
}

/* ---- matching ---- */

/* The golden side, indexed: dumps sorted by node name, and their output tensors sorted by
   value name (both looked up by bisection). */
typedef struct vref {
    const char *name;
    int di, ti;
} vref;
typedef struct value_index {
    vref *v;
    int n;
} value_index;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const nb_dump *)a)->op_name, ((const nb_dump *)b)->op_name);
}
static int by_vref(const void *a, const void *b)
{
    return strcmp(((const vref *)a)->name, ((const vref *)b)->name);
}

static value_index *build_value_index(nb_dump *g, int ng)
{
    int n = 0;
    for (int i = 0; i < ng; i++)
        n += g[i].n_t;
    value_index *vi = calloc(1, sizeof *vi);
    if (!vi || !(vi->v = malloc(sizeof *vi->v * ((size_t)n + 1)))) {
        free(vi);
        return NULL;
    }
    for (int i = 0; i < ng; i++)
        for (int k = 0; k < g[i].n_t; k++)
            if (g[i].t[k].output && g[i].t[k].original_name[0])
                vi->v[vi->n++] = (vref){g[i].t[k].original_name, i, k};
    qsort(vi->v, (size_t)vi->n, sizeof *vi->v, by_vref);
    return vi;
}

static const nb_dump_tensor *golden_by_value(const value_index *vi, nb_dump *g,
                                             const char *name, const nb_dump **owner)
{
    vref key = {name, 0, 0};
    const vref *r = bsearch(&key, vi->v, (size_t)vi->n, sizeof *vi->v, by_vref);
    if (!r)
        return NULL;
    *owner = &g[r->di];
    return &g[r->di].t[r->ti];
}

static const nb_dump *golden_by_node(nb_dump *g, int ng, const char *node)
{
    nb_dump key;
    memset(&key, 0, sizeof key);
    key.op_name = (char *)node;
    return bsearch(&key, g, (size_t)ng, sizeof *g, by_name);
}

/* SQNR as shown: +-999 for +-infinity (the table, the CSV, the drops) */
static double sqnr_shown(double v) { return isinf(v) ? (v > 0 ? 999.0 : -999.0) : v; }

const char *nb_cmp_likely_cause(const nb_cmp_row *r, bool over, char *buf, size_t len)
{
    const char *op = r->npu->op_type;
    if (r->npu->saturations > 0 || r->m.sat_x > 0) {
        /* values beyond fp16: a cube op's output (or what grows from it) can take a scale
           (atc --nb_input_scale); a sum of the model's own input cannot; a Log's -inf is 0 in */
        char n[64];
        if (r->npu->saturations > 0)
            snprintf(n, sizeof n, "%llu results clamped at 65504 in this task",
                     (unsigned long long)r->npu->saturations);
        else
            snprintf(n, sizeof n, "%lld values at 65504 in its output", (long long)r->m.sat_x);
        if (!strcmp(op, "Log"))
            snprintf(buf, len, "fp16 saturation (%s): the log of 0, -inf (its input holds zeros: "
                     "quantized to 0, or below fp16's smallest value 6e-8)", n);
        else
            snprintf(buf, len, "fp16 saturation (%s): values beyond fp16's range (a long sum, "
                     "large products); when they grow from a cube op's output, atc "
                     "--nb_input_scale scales them down (atc suggests a value)", n);
        return buf;
    }
    /* over only on RMSE or relative error (they grow with the values' scale: a Pow of values
       near 70 has an RMSE of 65 at 43 dB) while cosine and SQNR are good */
    if (over && !strstr(r->reason, "cos") && !strstr(r->reason, "red") &&
        !strstr(r->reason, "kl") && r->m.sqnr_db >= 30)
        return "none clear: over only a scale-dependent threshold (RMSE or relative error) "
               "at a good SQNR; see the largest SQNR drop";
    if ((!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh")) && r->table_small >= 0.25) {
        snprintf(buf, len, "table-function error (the Tanh/Sigmoid table on small inputs: "
                 "%.0f%% of its inputs within +-1/16)", 100 * r->table_small);
        return buf;
    }
    if ((!strcmp(op, "LSTM") || !strcmp(op, "GRU")) && r->step > 0 &&
        !isnan(r->step0_sqnr_db) && sqnr_shown(r->step0_sqnr_db) - sqnr_shown(r->m.sqnr_db) >= 3) {
        /* named only where the error grows with t */
        snprintf(buf, len, "accumulated RNN error across the unrolled steps (SQNR %.1f dB at "
                 "t0, %.1f dB at t%d)", sqnr_shown(r->step0_sqnr_db), sqnr_shown(r->m.sqnr_db),
                 r->step);
        return buf;
    }
    if (r->m.std_y > 0 && r->m.std_x < 0.5 * r->m.std_y && r->m.cos < 0.5) {
        /* little of float's signal left, and smaller: this input's values lie within a few
           quantization steps (melspectrogram's STFT on a quiet clip had been "quantization
           noise" at cosine 0.013, which read as a broken layer) */
        snprintf(buf, len, "quantization noise: little of this input's signal is left (cosine "
                 "%.3g, std %.3g against float's %.3g): its values lie within a few "
                 "quantization steps of the range calibrated (INT16 for this layer, or "
                 "calibration data nearer this input's level)", r->m.cos, r->m.std_x,
                 r->m.std_y);
        return buf;
    }
    return "quantization noise";
}

const char *nb_cmp_cause(const nb_comparison *c, int i, char *buf, size_t len)
{
    const nb_cmp_row *r = &c->rows[i];
    if (c->first_sat >= 0 && c->first_sat < i && c->rows[c->first_sat].npu != r->npu) {
        const nb_cmp_row *s = &c->rows[c->first_sat];
        unsigned long long n = s->npu->saturations ? s->npu->saturations
                                                   : (unsigned long long)s->m.sat_x;
        snprintf(buf, len, "fp16 saturation upstream: '%.150s' (%s, task %u) clamped %llu "
                 "value%s at 65504, and what follows inherits them; atc --nb_input_scale "
                 "(it suggests a value) or INT16 there", s->npu->op_name, s->npu->op_type,
                 s->npu->task_id, n, n == 1 ? "" : "s");
        return buf;
    }
    const char *why = nb_cmp_likely_cause(r, r->fails, buf, len);
    static const char see[] = "; see the largest SQNR drop";
    size_t wl = strlen(why);
    if (i == c->worst && wl >= sizeof see - 1 && !strcmp(why + wl - (sizeof see - 1), see)) {
        /* it is the largest drop itself: not a pointer to itself (issue 37) */
        snprintf(buf, len, "%.*s; the largest SQNR drop from its inputs too",
                 (int)(wl - (sizeof see - 1)), why);
        return buf;
    }
    return why;
}

typedef struct cmp_ctx {
    nb_dump *gd;
    int ng;
    const value_index *vi;
    const nb_cmp_thresholds *th;
    const char *keep; /* the NPU values of the rows that may be this layer stay */
    nb_cmp_row *rows;
    int nr, cap;
    bool oom;
} cmp_ctx;

/* Whether every |x - y| is at most k fp16 steps at the larger magnitude of the pair. */
static bool within_fp16_steps(const double *x, const double *y, int64_t n, int k)
{
    for (int64_t i = 0; i < n; i++) {
        double m = fmax(fabs(x[i]), fabs(y[i]));
        if (!(fabs(x[i] - y[i]) <= k * nb_fp16_step(m)))
            return false;
    }
    return n > 0;
}

/* The step s of an unrolled LSTM/GRU task ("<layer>/t<s>", engine/atc/lower.c), or -1. */
static int rnn_step(const nb_dump *d)
{
    if (strcmp(d->op_type, "LSTM") && strcmp(d->op_type, "GRU"))
        return -1;
    const char *t = strrchr(d->op_name, '/');
    if (!t || t[1] != 't' || !t[2])
        return -1;
    char *end;
    long s = strtol(t + 2, &end, 10);
    return *end || s < 0 || s > 1000000 ? -1 : (int)s;
}

/* The golden tensor of the NPU dump d's output x, as every comparison matches it: the last
   node a fused task covers, else the ONNX value the output holds; into r (gold, y, ground),
   or the reason there is none (false). */
static bool match_golden(const cmp_ctx *c, const nb_dump *d, const nb_dump_tensor *x,
                         nb_cmp_row *r)
{
    if (d->n_covers > 1) {
        const char *last = d->covers[d->n_covers - 1];
        r->gold = golden_by_node(c->gd, c->ng, last);
        r->y = r->gold && r->gold->n_t ? &r->gold->t[0] : NULL;
        for (int q = 0; q < d->n_covers; q++) {
            size_t at = strlen(r->ground);
            snprintf(r->ground + at, sizeof r->ground - at, "%s%s", q ? "," : "", d->covers[q]);
        }
    } else if (x->original_name[0]) {
        r->y = golden_by_value(c->vi, c->gd, x->original_name, &r->gold);
        snprintf(r->ground, sizeof r->ground, "%s", r->gold ? r->gold->op_name : "");
    }
    if (r->y)
        return true;
    if (!strcmp(x->dtype, "INT32") && !x->original_name[0])
        snprintf(r->reason, sizeof r->reason, "the cube's int32 accumulator (compared after "
                 "its AscendDequant)");
    else if (rnn_step(d) >= 0 && !x->original_name[0])
        snprintf(r->reason, sizeof r->reason, "the step's state (h or c): compared as this "
                 "step's slice of Y, and at the last step as Y_h, Y_c");
    else if (d->inserted && !x->original_name[0])
        snprintf(r->reason, sizeof r->reason, "inserted by the compiler (no ONNX tensor)");
    else
        snprintf(r->reason, sizeof r->reason, "no golden tensor for '%s'", x->original_name);
    return false;
}

/* The metrics of a matched row against the thresholds, and its reason line. A step of an
 * unrolled RNN writes its own slice of Y [seq, dirs, batch, hidden] (the later ones are not
 * written yet): only that slice is compared, with the golden Y's. */
static void compare_row(const cmp_ctx *c, const nb_dump *d, const nb_dump_tensor *x,
                        nb_cmp_row *r)
{
    r->step = rnn_step(d);
    r->slice_off = 0;
    r->slice_n = x->numel;
    if (!x->v || !r->y->v || x->numel != r->y->numel) {
        snprintf(r->reason, sizeof r->reason, !x->v || !r->y->v ? "a stats-only dump"
                 : "%lld values against %lld", (long long)x->numel, (long long)r->y->numel);
        return;
    }
    if (r->step >= 0 && x->rank == 4 && x->dims[0] > r->step && x->original_name[0] &&
        r->gold && r->gold->n_t && r->y == &r->gold->t[0]) { /* Y, the node's first output */
        r->slice_n = x->numel / x->dims[0];
        r->slice_off = r->slice_n * r->step;
    }
    nb_cmp_metrics_compute(x->v + r->slice_off, r->y->v + r->slice_off, r->slice_n, &r->m);
    r->compared = true;
    bool sig = !strcmp(d->op_type, "Sigmoid"), tnh = !strcmp(d->op_type, "Tanh");
    if ((sig || tnh) && r->slice_n > 0) { /* where the golden inputs lie: y's inverse */
        int64_t small = 0;
        for (int64_t i = 0; i < r->slice_n; i++) {
            double y = r->y->v[r->slice_off + i];
            double in = sig ? (y > 0 && y < 1 ? log(y / (1 - y)) : INFINITY)
                            : (fabs(y) < 1 ? atanh(y) : INFINITY);
            small += fabs(in) < 1.0 / 16;
        }
        r->table_small = (double)small / (double)r->slice_n;
    }
    char why[64];
    r->fails = nb_cmp_fails(&r->m, c->th, why, sizeof why);
    if (r->fails && !r->m.nan_x && !r->m.inf_x && !strcmp(x->dtype, "FLOAT16") &&
        within_fp16_steps(x->v + r->slice_off, r->y->v + r->slice_off, r->slice_n, 2)) {
        /* an fp16 output that differs from float by no more than fp16 itself can tell apart
           at these magnitudes: agreement at the output's own resolution (issue 26: alexa's
           score 1.788e-7 against 1.674e-7 was a "problem node") */
        r->fails = false;
        snprintf(r->reason, sizeof r->reason, "agrees at fp16's resolution: every |npu - "
                 "golden| within 2 fp16 steps at its magnitude (%s crossed)", why);
        return;
    }
    if (r->fails && !r->m.nan_x && !r->m.inf_x && r->m.cos >= 0.99 && r->m.max_abs <= 1e-3) {
        /* Ascend's accuracy rule (its "Accuracy Reached or Not": reached at cosine >= 0.99
           and max |err| <= 0.001; facts/accucmp.md 1.3): hey_jarvis's score 0.0106 against
           0.0114 crossed only the relative distance, 0.07 of a near-zero value, and the
           bring-up called it a "problem node" carried to the output */
        r->fails = false;
        snprintf(r->reason, sizeof r->reason, "within the accuracy rule: cosine >= 0.99 and "
                 "max |npu - golden| <= 0.001 (%s crossed)", why);
        return;
    }
    if (r->m.nan_x || r->m.inf_x) { /* a blown-up NPU output fails, whatever else */
        r->fails = true;
        snprintf(r->reason, sizeof r->reason, "NaN or infinity in the NPU output (%lld, "
                 "%lld)%s%s", (long long)r->m.nan_x, (long long)r->m.inf_x,
                 why[0] ? "; over threshold: " : "", why);
    } else if (r->fails)
        snprintf(r->reason, sizeof r->reason, "over threshold: %s", why);
    else if (r->m.note[0])
        snprintf(r->reason, sizeof r->reason, "%s", r->m.note);
    else if (r->slice_n != x->numel)
        snprintf(r->reason, sizeof r->reason, "step %d: its slice Y[%d] compared", r->step,
                 r->step);
}

/* Whether a row of task d may be the layer named name: the task itself, the ONNX node it
   is compared with, or a node it covers. */
static bool may_be_layer(const nb_dump *d, const nb_cmp_row *r, const char *name)
{
    if (!strcmp(d->op_name, name) || (r->gold && !strcmp(r->gold->op_name, name)))
        return true;
    for (int q = 0; q < d->n_covers; q++)
        if (!strcmp(d->covers[q], name))
            return true;
    return false;
}

/* The rows of one NPU dump (its outputs), computed as soon as it is read; then its values
   are freed (a 500 MB dump folder never sits in memory as doubles), but for the layer to
   keep. */
static void npu_rows(void *user, nb_dump *d, int di)
{
    cmp_ctx *c = user;
    bool keep = false;
    for (int k = 0; k < d->n_t && !c->oom; k++) {
        const nb_dump_tensor *x = &d->t[k];
        if (!x->output)
            continue;
        if (c->nr == c->cap) {
            int cap = c->cap ? 2 * c->cap : 256;
            nb_cmp_row *p = realloc(c->rows, sizeof *p * (size_t)cap);
            if (!p) {
                c->oom = true;
                break;
            }
            c->rows = p, c->cap = cap;
        }
        nb_cmp_row *r = &c->rows[c->nr++];
        memset(r, 0, sizeof *r);
        r->di = di, r->ti = k;
        r->step = -1;
        r->slice_n = x->numel;
        r->step0_sqnr_db = NAN;
        r->table_small = NAN;
        if (match_golden(c, d, x, r))
            compare_row(c, d, x, r);
        keep |= c->keep && may_be_layer(d, r, c->keep);
    }
    for (int k = 0; k < d->n_t && !keep; k++) { /* the metadata stays for the table */
        free(d->t[k].v);
        d->t[k].v = NULL;
    }
}

static int by_row(const void *a, const void *b, void *dumps)
{
    const nb_dump *md = dumps;
    const nb_cmp_row *x = a, *y = b;
    uint32_t tx = md[x->di].task_id, ty = md[y->di].task_id;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x->ti < y->ti ? -1 : x->ti > y->ti;
}

/* NPU dumps by task id, then name (dumps of one task from two runs side by side) */
static int by_task(const void *a, const void *b, void *dumps)
{
    const nb_dump *md = dumps, *x = &md[*(const int *)a], *y = &md[*(const int *)b];
    if (x->task_id != y->task_id)
        return x->task_id < y->task_id ? -1 : 1;
    return strcmp(x->op_name, y->op_name);
}

/* The run folder a dump path lies in: its last component of 14 digits (run --dump's
   DIR/<YYYYMMDDhhmmss>[_N]/), into out ("" when none) */
static void run_stamp(const char *path, char *out, size_t len)
{
    out[0] = 0;
    for (const char *p = path; *p; p++) {
        if (p != path && p[-1] != '/')
            continue;
        size_t n = strcspn(p, "/");
        size_t d = strspn(p, "0123456789");
        bool suffix = d < n && p[d] == '_' && strspn(p + d + 1, "0123456789") == n - d - 1 &&
                      n - d > 1;
        if (d == 14 && (d == n || suffix) && p[n] == '/')
            snprintf(out, len, "%.*s", (int)n, p);
    }
}

/* One run's dumps: a folder holding two runs (run --dump writes DIR/<time>/ each time) would
   compare every task twice, the verdict over both. NB_ERR_ARG naming the two dumps. */
static nb_err one_run(const nb_comparison *c, const char *spec, nb_status *st)
{
    char first[64] = "", other[64];
    int at = -1;
    for (int i = 0; i < c->nm; i++) { /* two run folders, of one model or of two */
        run_stamp(c->md[i].path, other, sizeof other);
        if (!other[0])
            continue;
        if (at < 0) {
            snprintf(first, sizeof first, "%s", other);
            at = i;
        } else if (strcmp(first, other)) {
            return nb_fail(st, NB_ERR_ARG, "%s: the dumps of more than one run (%s and %s: %s "
                           "and %s); give one run's folder (run --dump writes DIR/<time>/ each "
                           "time)", spec, first, other, c->md[at].path, c->md[i].path);
        }
    }
    int *ix = malloc(sizeof(int) * ((size_t)c->nm + 1));
    if (!ix)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < c->nm; i++)
        ix[i] = i;
    qsort_r(ix, (size_t)c->nm, sizeof(int), by_task, c->md);
    nb_err e = NB_OK;
    for (int i = 1; i < c->nm && !e; i++) {
        const nb_dump *a = &c->md[ix[i - 1]], *b = &c->md[ix[i]];
        if (a->task_id == b->task_id && !strcmp(a->op_name, b->op_name))
            e = nb_fail(st, NB_ERR_ARG, "%s: two dumps of task %u '%s' (%s and %s): the dumps "
                        "of more than one run; give one run's folder (run --dump writes "
                        "DIR/<time>/ each time)", spec, b->task_id, b->op_name, a->path, b->path);
    }
    free(ix);
    return e;
}

void nb_comparison_free(nb_comparison *c)
{
    value_index *vi = c->golden_index;
    if (vi)
        free(vi->v);
    free(vi);
    for (int i = 0; i < c->nm; i++)
        nb_dump_free(&c->md[i]);
    for (int i = 0; i < c->ng; i++)
        nb_dump_free(&c->gd[i]);
    free(c->md), free(c->gd), free(c->rows);
    memset(c, 0, sizeof *c);
}

/* The exeom tensor row q writes (its dump's output slot), or UINT32_MAX when not known. */
static uint32_t row_tensor(const nb_cmp_row *q)
{
    int slot = q->x ? q->x->index : -1;
    return slot >= 0 && slot < q->npu->n_out_ids ? q->npu->out_ids[slot] : UINT32_MAX;
}

static bool lower(const nb_comparison *c, int a, int b)
{
    return b < 0 || sqnr_shown(c->rows[a].m.sqnr_db) < sqnr_shown(c->rows[b].m.sqnr_db);
}

/* The rows by the tensor they write, for the walk below (sorted by id). */
typedef struct writer {
    uint32_t id;
    int row;
} writer;

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const writer *)a)->id, y = ((const writer *)b)->id;
    return x < y ? -1 : x > y;
}

typedef struct walk {
    const nb_comparison *c;
    const writer *w;
    int nw;
    char *seen; /* rows already walked for this question: each once (a crafted dump whose
                   tasks read what they write made the walk exponential) */
    const nb_dump *self;
} walk;

/* The compared row of the lowest SQNR that writes exeom tensor id, looking through rows
 * that are not compared (a layer's AscendQuant and its int32 Conv: the chain's input is what
 * the layer reads) to their own inputs; -1 when none (the network's input, a constant). */
static int input_row(walk *k, uint32_t id)
{
    if (id == UINT32_MAX)
        return -1;
    const nb_comparison *c = k->c;
    int lo = 0, hi = k->nw; /* the first writer of id */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (k->w[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    int best = -1;
    for (int i = lo; i < k->nw && k->w[i].id == id; i++) {
        int j = k->w[i].row;
        const nb_cmp_row *q = &c->rows[j];
        if (q->npu == k->self || k->seen[j])
            continue;
        k->seen[j] = 1;
        int cand = q->compared ? j : -1;
        for (int n = 0; !q->compared && n < q->npu->n_in_ids; n++) {
            int r = input_row(k, q->npu->in_ids[n]);
            if (r >= 0 && lower(c, r, cand))
                cand = r;
        }
        if (cand >= 0 && lower(c, cand, best))
            best = cand;
    }
    return best;
}

/* The compared row that writes one of row i's inputs with the lowest SQNR (the task's input
 * tensors as its dump names them, through uncompared rows as input_row does; an unrolled RNN
 * step's row reads the step before it), or -1 when no input of row i comes from a compared
 * row (the network's inputs, constants). Dumps that name no tensors: the row before. */
static int worst_input_row(const nb_comparison *c, const writer *w, int nw, char *seen, int i)
{
    const nb_cmp_row *r = &c->rows[i];
    int best = -1;
    memset(seen, 0, (size_t)c->nr);
    walk k = {c, w, nw, seen, r->npu};
    for (int n = 0; n < r->npu->n_in_ids; n++) {
        int j = input_row(&k, r->npu->in_ids[n]);
        if (j >= 0 && lower(c, j, best))
            best = j;
    }
    if (best < 0 && r->step > 0) /* an RNN's step t: the same task's row of step t-1 */
        for (int j = 0; j < c->nr; j++)
            if (c->rows[j].compared && c->rows[j].npu == r->npu && c->rows[j].x == r->x &&
                c->rows[j].step == r->step - 1)
                best = j;
    if (best < 0 && !r->npu->out_ids)
        for (int j = i - 1; j >= 0 && best < 0; j--)
            if (c->rows[j].compared)
                best = j;
    return best;
}

/* The verdict over c's rows (nb_comparison's fields, see accucmp.h). */
static void verdict(nb_comparison *c)
{
    const nb_cmp_row *rows = c->rows;
    int nr = c->nr, last_cmp = -1;
    c->first_bad = c->prev = c->worst = c->worst_prev = c->first_sat = -1;
    for (int i = 0; i < nr && c->first_sat < 0; i++)
        if (rows[i].npu->saturations > 0 || (rows[i].compared && rows[i].m.sat_x > 0))
            c->first_sat = i;
    for (int i = 0; i < nr; i++)
        if (rows[i].compared) {
            c->n_compared++;
            last_cmp = i;
            if (rows[i].fails) {
                c->n_over++;
                if (c->first_bad < 0)
                    c->first_bad = i;
            }
        }
    c->verdict = "global_consistency";
    c->verdict_text = "global consistency (every compared layer within the thresholds)";
    c->origin = NULL;
    if (c->first_bad < 0)
        return;
    /* the network outputs the golden dumps mark (every one of them: a model of two outputs
       whose first failed had been called a single-point error by its last, a helper's
       find); golden folders without the marks: the last compared row */
    bool marked = false, carries = false;
    for (int i = 0; i < nr; i++)
        if (rows[i].compared && rows[i].y && rows[i].y->network_output) {
            marked = true;
            carries |= rows[i].fails;
        }
    if (!marked)
        carries = last_cmp >= 0 && rows[last_cmp].fails;
    c->verdict = carries ? "problem_node" : "single_point_error";
    c->verdict_text = carries ? "problem node (the failure carries to the network output)"
                              : "single-point error (the network output passes: within the "
                                "thresholds or the accuracy rule)";
    /* the compared row before it (within every threshold, by definition of first_bad) */
    for (int i = c->first_bad - 1; i >= 0 && c->prev < 0; i--)
        if (rows[i].compared)
            c->prev = i;
    /* thresholds like RMSE > 1 are scale-dependent: also name the layer where the
       signal-to-noise ratio falls most from its own inputs */
    double drop = 0;
    writer *w = malloc(sizeof *w * (size_t)(nr + 1));
    char *seen = malloc((size_t)nr + 1);
    int nw = 0;
    for (int i = 0; w && i < nr; i++)
        if (row_tensor(&rows[i]) != UINT32_MAX)
            w[nw++] = (writer){row_tensor(&rows[i]), i};
    if (w)
        qsort(w, (size_t)nw, sizeof *w, by_id);
    for (int i = 0; w && seen && i < nr; i++) {
        int in = rows[i].compared ? worst_input_row(c, w, nw, seen, i) : -1;
        if (in < 0)
            continue;
        double d_db = sqnr_shown(rows[in].m.sqnr_db) - sqnr_shown(rows[i].m.sqnr_db);
        if (d_db > drop)
            drop = d_db, c->worst = i, c->worst_prev = in;
    }
    free(w);
    free(seen);
    if (drop < 6.0)
        c->worst = c->worst_prev = -1;
    int fb = c->first_bad, pv = c->prev;
    /* saturation ranks above any threshold crossing, also one before it: hey_mycroft's
       ReduceMean_2 crossed only an RMSE threshold at 54 dB ahead of Pow_5's clamps */
    if (c->first_sat >= 0) {
        const nb_cmp_row *s = &rows[c->first_sat];
        unsigned long long n = s->npu->saturations ? s->npu->saturations
                                                   : (unsigned long long)s->m.sat_x;
        if (!strcmp(s->npu->op_type, "Log")) /* -inf: the log of 0, not a range to scale */
            snprintf(c->verdict_buf, sizeof c->verdict_buf,
                     "the log of 0: '%.150s' (Log, task %u) wrote -inf (fp16's -65504) for %llu "
                     "value%s, its input 0 where float has small values (rounded to 0 by the "
                     "quantization steps of a wide range); the layers after it inherit them (%s)",
                     s->npu->op_name, s->npu->task_id, n, n == 1 ? "" : "s",
                     carries ? "the failure carries to the network output"
                             : "the network output passes: within the thresholds or the "
                               "accuracy rule");
        else
            snprintf(c->verdict_buf, sizeof c->verdict_buf,
                     "fp16 saturation: '%.150s' (%s, task %u) clamped %llu value%s at 65504; the "
                     "layers after it inherit them (%s)", s->npu->op_name, s->npu->op_type,
                     s->npu->task_id, n, n == 1 ? "" : "s",
                     carries ? "the failure carries to the network output"
                             : "the network output passes: within the thresholds or the "
                               "accuracy rule");
        c->verdict = "fp16_saturation";
        c->verdict_text = c->verdict_buf;
    }
    /* the layer before within 3 dB: the error grew gradually and crosses the threshold here
       (accumulated), rather than appearing here (introduced) */
    bool gradual = pv >= 0 &&
                   sqnr_shown(rows[pv].m.sqnr_db) - sqnr_shown(rows[fb].m.sqnr_db) < 3.0;
    c->origin = gradual ? "accumulated" : "introduced";
}

nb_err nb_compare(const nb_compare_opts *o, nb_comparison *c, nb_status *st)
{
    memset(c, 0, sizeof *c);
    c->th = o->th;
    nb_err e = NB_OK;
    /* every dump allocates and frees its tensors' arrays: keep them on the heap rather than
       mmap'ed fresh (and page-faulted) each time */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
    int T = o->workers > 0 ? (o->workers > 4 ? 4 : o->workers) : default_workers();
    int ng = read_dumps(o->golden_dumps, NB_DUMP_OUTPUTS, &c->gd, NULL, NULL, NULL, T, st);
    if (ng < 0)
        return st->code;
    c->ng = ng;
    nb_dump *gd = c->gd;
    /* golden dumps, one per node: from one reference run */
    for (int i = 0; i < ng && !e; i++)
        if (strcmp(gd[i].source, "golden"))
            e = nb_fail(st, NB_ERR_ARG, "%s: a dump of the %s, not a golden one (nanobench "
                        "infer --dump)", gd[i].path, gd[i].source);
    if (!e)
        qsort(gd, (size_t)ng, sizeof *gd, by_name);
    for (int i = 1; i < ng && !e; i++)
        if (!strcmp(gd[i].op_name, gd[i - 1].op_name))
            e = nb_fail(st, NB_ERR_ARG, "%s: two golden dumps of node '%s' (%s and %s): one "
                        "reference run per folder", o->golden_dumps, gd[i].op_name,
                        gd[i - 1].path, gd[i].path);
    if (!e && !(c->golden_index = build_value_index(gd, ng)))
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (e) {
        nb_comparison_free(c);
        return e;
    }
    /* the NPU's dumps, compared as they are read (a worker per core), their values freed */
    cmp_ctx cc[4];
    void *users[4];
    for (int w = 0; w < 4; w++) {
        cc[w] = (cmp_ctx){.gd = gd, .ng = ng, .th = &c->th, .vi = c->golden_index,
                          .keep = o->keep_layer};
        users[w] = &cc[w];
    }
    int *map = NULL;
    int nm = read_dumps(o->npu_dumps, NB_DUMP_OUTPUTS, &c->md, &map, npu_rows, users, T, st);
    c->nm = nm < 0 ? 0 : nm;
    int nr = 0;
    bool oom = false;
    for (int w = 0; w < T; w++)
        nr += cc[w].nr, oom |= cc[w].oom;
    nb_cmp_row *rows = c->rows = malloc(sizeof *rows * ((size_t)nr + 1));
    nr = 0;
    for (int w = 0; w < T; w++) {
        for (int i = 0; rows && i < cc[w].nr; i++) {
            rows[nr] = cc[w].rows[i];
            rows[nr++].di = map ? map[cc[w].rows[i].di] : 0;
        }
        free(cc[w].rows);
    }
    free(map);
    if (nm < 0)
        e = st->code;
    else if (oom || !rows)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    c->nr = nr;
    for (int i = 0; i < nm && !e; i++)
        if (strcmp(c->md[i].source, "npu"))
            e = nb_fail(st, NB_ERR_ARG, "%s: a %s dump, not the NPU's (nanobench run --dump)",
                        c->md[i].path, c->md[i].source);
    if (!e)
        e = one_run(c, o->npu_dumps, st);
    if (e) {
        nb_comparison_free(c);
        return e;
    }
    qsort_r(rows, (size_t)nr, sizeof *rows, by_row, c->md);
    for (int i = 0; i < nr; i++) {
        rows[i].npu = &c->md[rows[i].di];
        rows[i].x = &c->md[rows[i].di].t[rows[i].ti];
    }
    /* an RNN step's SQNR beside its t0's: does the error grow with t? */
    for (int i = 0; i < nr; i++) {
        const nb_cmp_row *r = &rows[i];
        if (r->step <= 0 || !r->compared)
            continue;
        size_t bl = (size_t)(strrchr(r->npu->op_name, '/') - r->npu->op_name);
        for (int j = i - 1; j >= 0; j--) {
            const nb_cmp_row *q = &rows[j];
            if (q->step == 0 && q->compared && q->ti == r->ti &&
                !strncmp(q->npu->op_name, r->npu->op_name, bl) && q->npu->op_name[bl] == '/') {
                rows[i].step0_sqnr_db = q->m.sqnr_db;
                break;
            }
        }
    }
    verdict(c);
    return NB_OK;
}

/* ---- one layer ---- */

nb_err nb_cmp_pick_layer(const nb_comparison *c, const char *name, const char *where,
                         int *row, nb_status *st)
{
    int by_task = -1, by_node = -1, by_cover = -1, seen = -1;
    for (int i = 0; i < c->nr; i++) {
        const nb_cmp_row *r = &c->rows[i];
        if (!may_be_layer(r->npu, r, name))
            continue;
        if (seen < 0)
            seen = i;
        if (!r->compared)
            continue;
        if (!strcmp(r->npu->op_name, name)) {
            if (by_task < 0)
                by_task = i;
        } else if (r->gold && !strcmp(r->gold->op_name, name)) {
            if (by_node < 0)
                by_node = i;
        } else {
            by_cover = i;
        }
    }
    *row = by_task >= 0 ? by_task : by_node >= 0 ? by_node : by_cover;
    if (*row >= 0)
        return NB_OK;
    if (seen >= 0) {
        const nb_cmp_row *r = &c->rows[seen];
        return nb_fail(st, NB_ERR_ARG, "compare layer: layer '%s' (%s, task %u) was not "
                       "compared: %s", name, r->npu->op_type, r->npu->task_id, r->reason);
    }
    /* a node of the float model that no NPU task computes: folded away (a BatchNormalization
       into its Conv by calibrate, a constant subgraph at import) or lowered into another */
    for (int i = 0; i < c->ng; i++)
        if (!strcmp(c->gd[i].op_name, name) && !strcmp(c->gd[i].op_type, "Input"))
            return nb_fail(st, NB_ERR_ARG, "compare layer: '%s' is an input of the model, which "
                           "no NPU task computes: compare the layer that reads it", name);
    for (int i = 0; i < c->ng; i++)
        if (!strcmp(c->gd[i].op_name, name))
            return nb_fail(st, NB_ERR_ARG, "compare layer: '%s' (%s) is a node of the float "
                           "model that no NPU task computes (folded into the layer before it, "
                           "as calibrate folds a BatchNormalization into its Conv): compare that "
                           "layer", name, c->gd[i].op_type);
    return nb_fail(st, NB_ERR_ARG, "compare layer: no layer '%s' in %s (a task or an ONNX "
                   "node, as the NPUDump and GroundTruth columns of file_compare's CSV name "
                   "them)", name, where);
}

static int by_task_id(const void *a, const void *b, void *dumps)
{
    const nb_dump *md = dumps;
    uint32_t x = md[*(const int *)a].task_id, y = md[*(const int *)b].task_id;
    return x < y ? -1 : x > y;
}

int nb_cmp_layer_tasks(const nb_comparison *c, const nb_dump *d, int *idx)
{
    int n = 0;
    for (int i = 0; i < c->nm; i++) {
        const nb_dump *t = &c->md[i];
        bool same = t == d;
        for (int a = 0; a < t->n_covers && !same; a++)
            for (int b = 0; b < d->n_covers && !same; b++)
                same = !strcmp(t->covers[a], d->covers[b]);
        if (same)
            idx[n++] = i;
    }
    qsort_r(idx, (size_t)n, sizeof *idx, by_task_id, c->md);
    return n;
}

/* ---- the CSV ---- */

nb_err nb_cmp_csv_claim(const char *dir, char *path, size_t len, nb_status *st)
{
    if (nb_mkdir_p(dir))
        return nb_fail(st, NB_ERR_IO, "%s: cannot make the folder: %s", dir, strerror(errno));
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tmv);
    /* a name of its own (a second run in the same second gets _2, ...), claimed with
       O_EXCL */
    for (int k = 1; k < 1000; k++) {
        int pl = k == 1 ? snprintf(path, len, "%s/result_%s.csv", dir, stamp)
                        : snprintf(path, len, "%s/result_%s_%d.csv", dir, stamp, k);
        if (pl < 0 || (size_t)pl >= len)
            return nb_fail(st, NB_ERR_IO, "%s: the folder's path is too long for the result "
                           "file", dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            close(fd);
            return NB_OK;
        }
        if (errno != EEXIST)
            return nb_fail(st, NB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    return nb_fail(st, NB_ERR_IO, "%s: no free result file name", dir);
}

static void csv_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",NaN", f);
    else
        fprintf(f, ",%.6g", v);
}

nb_err nb_cmp_write_csv(const nb_comparison *c, const char *path, nb_status *st)
{
    char tmp[4300];
    nb_tmp_path(path, tmp, sizeof tmp);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: %s", tmp, strerror(errno));
    fputs("Index,OpType,NPUDump,DataType,GroundTruth,DataType,TensorIndex,Shape,OverFlow,"
          "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
          "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
          "MaxRelativeError,MeanRelativeError,SQNR,CompareFailReason\n", f);
    for (int i = 0; i < c->nr; i++) {
        const nb_cmp_row *r = &c->rows[i];
        char sh[128];
        int64_t d[6];
        for (int k = 0; k < r->x->rank; k++)
            d[k] = r->x->dims[k];
        nb_shape_str(r->x->rank, d, 'x', sh, sizeof sh);
        fprintf(f, "%d,", i);
        nb_csv_field(f, r->npu->op_type, true);
        fputc(',', f);
        nb_csv_field(f, r->npu->op_name, true);
        fputc(',', f);
        nb_csv_field(f, r->x->dtype, true);
        fputc(',', f);
        nb_csv_field(f, r->ground, true);
        fputc(',', f);
        nb_csv_field(f, r->y ? r->y->dtype : "", true);
        fprintf(f, ",%d,", r->x->index);
        nb_csv_field(f, sh, true);
        fprintf(f, ",%s", r->npu->saturations || r->m.sat_x ? "YES" : "NO");
        if (r->compared) {
            const nb_cmp_metrics *m = &r->m;
            csv_num(f, m->cos), csv_num(f, m->max_abs), csv_num(f, m->acc_rel), csv_num(f, m->red);
            csv_num(f, m->kl);
            fprintf(f, ",\"(%.3f;%.3f),(%.3f;%.3f)\"", m->mean_x, m->std_x, m->mean_y, m->std_y);
            csv_num(f, m->mae), csv_num(f, m->rmse), csv_num(f, m->max_rel), csv_num(f, m->mean_rel);
            csv_num(f, sqnr_shown(m->sqnr_db));
        } else {
            fputs(",,,,,,,,,,,", f);
        }
        fputc(',', f);
        nb_csv_field(f, r->reason, true);
        fputc('\n', f);
    }
    if (fclose(f) || rename(tmp, path)) {
        nb_err e = nb_fail(st, NB_ERR_IO, "%s: %s", path, strerror(errno));
        remove(tmp);
        return e;
    }
    return NB_OK;
}

/* ---- --isolate: one layer on the simulator with the golden input ---- */

typedef struct iso_ctx {
    int k0, k1, out_t;
    double out_scale, out_offset; /* what the output holds of its value (--nb_input_scale) */
    double in_scale[NB_EXEOM_MAX_IN], in_offset[NB_EXEOM_MAX_IN];
    int in_t[NB_EXEOM_MAX_IN];
    const nb_dump_tensor *gin[NB_EXEOM_MAX_IN];
    int n_in;
    double *got;
    int64_t n_got;
} iso_ctx;

static void iso_hook(void *user, const nb_sim_model *cm, int k, bool before)
{
    iso_ctx *c = user;
    nb_sim_model *m = (nb_sim_model *)cm; /* the hook may change the data the task reads */
    const nb_exeom *x = nb_sim_exeom(m);
    if (before && k == c->k0)
        for (int j = 0; j < c->n_in; j++) {
            uint8_t *p = nb_sim_tensor_data_mut(m, c->in_t[j]);
            for (int64_t e = 0; p && e < c->gin[j]->numel; e++)
                nb_sim_set(&x->t[c->in_t[j]], p, e,
                           c->gin[j]->v[e] * c->in_scale[j] + c->in_offset[j]);
        }
    if (!before && k == c->k1) {
        const nb_exeom_tensor *t = &x->t[c->out_t];
        const uint8_t *p = nb_sim_tensor_data(m, c->out_t);
        c->n_got = nb_sim_numel(t);
        c->got = malloc(sizeof(double) * ((size_t)c->n_got + 1));
        for (int64_t e = 0; c->got && p && e < c->n_got; e++)
            c->got[e] = (nb_sim_get(t, p, e) - c->out_offset) / c->out_scale;
    }
}

static bool task_of_layer(uint32_t id, int k, const char *layer)
{
    const char *name = NULL, *op = NULL, *node = NULL;
    nb_acl_task_info(id, k, &name, &op);
    size_t ll = strlen(layer);
    if (!strcmp(name, layer) || (!strncmp(name, layer, ll) && name[ll] == '/'))
        return true;
    int n = nb_acl_task_covers(id, k, 0, &node);
    for (int i = 0; i < n; i++) {
        nb_acl_task_covers(id, k, i, &node);
        if (!strcmp(node, layer))
            return true;
    }
    return false;
}

nb_err nb_cmp_isolate(const nb_comparison *cs, const char *layer, const char *exeom,
                      nb_cmp_isolation *res, nb_status *st)
{
    memset(res, 0, sizeof *res);
    const value_index *vi = cs->golden_index;
    uapi_npu_dlog_setlevel(0x10, 4, 0);
    aclError e;
    aclrtContext ctx = NULL;
    uint32_t id = 0;
    nb_err err = NB_OK;
    iso_ctx c = {.k0 = -1, .k1 = -1, .out_t = -1};
    void *ins[64] = {0}, *outs[64] = {0};
    if ((e = aclInit(NULL)) || (e = aclrtSetDevice(0)) || (e = aclrtCreateContext(&ctx, 0)) ||
        (e = aclmdlLoadFromFile(exeom, &id))) {
        err = nb_fail(st, NB_ERR_FORMAT, "%s (ACL error %d)", aclGetRecentErrMsg(), e);
        goto out;
    }
    if (nb_acl_dbg_note(id)[0]) {
        err = nb_fail(st, NB_ERR_ARG, "--isolate %s: %s (the layers are named by NAME.dbg)",
                      layer, nb_acl_dbg_note(id));
        goto out;
    }
    const nb_sim_model *sim = nb_acl_sim_model(id);
    const nb_exeom *x = nb_sim_exeom(sim);
    const char *t0name = NULL, *t0op = NULL;
    nb_acl_task_info(id, 0, &t0name, &t0op);
    if (x->n_tasks && !strncmp(t0name, "task0", 6)) {
        err = nb_fail(st, NB_ERR_ARG, "--isolate %s: no NAME.dbg next to %s names its layers",
                      layer, exeom);
        goto out;
    }
    for (uint32_t k = 0; k < x->n_tasks; k++)
        if (task_of_layer(id, (int)k, layer)) {
            if (c.k0 < 0)
                c.k0 = (int)k;
            int o = x->k[k].n_out ? x->k[k].out[0] : NB_EXEOM_NONE;
            if (o != NB_EXEOM_NONE && nb_acl_tensor_onnx(id, o)[0])
                c.k1 = (int)k, c.out_t = o;
        }
    if (c.k1 >= 0)
        nb_acl_tensor_scale(id, c.out_t, &c.out_scale, &c.out_offset);
    if (c.k0 < 0 || c.k1 < 0) {
        err = nb_fail(st, NB_ERR_ARG, "--isolate %s: no task of %s computes it (a task name or "
                      "an ONNX node of NAME.dbg)", layer, exeom);
        goto out;
    }
    /* the golden values of what the layer's first task reads */
    const nb_exeom_task *k0 = &x->k[c.k0];
    for (int j = 0; j < k0->n_in; j++) {
        int t = k0->in[j] == NB_EXEOM_NONE ? -1 : k0->in[j];
        if (t < 0 || x->t[t].role == 3)
            continue;
        const nb_dump *owner = NULL;
        const nb_dump_tensor *g = golden_by_value(vi, cs->gd, nb_acl_tensor_onnx(id, t), &owner);
        if (!g || !g->v || g->numel != nb_sim_numel(&x->t[t]))
            continue;
        nb_acl_tensor_scale(id, t, &c.in_scale[c.n_in], &c.in_offset[c.n_in]);
        c.in_t[c.n_in] = t, c.gin[c.n_in++] = g;
    }
    if (c.n_in == 0) {
        err = nb_fail(st, NB_ERR_ARG, "--isolate %s: no golden dump holds the input of task %d",
                      layer, c.k0);
        goto out;
    }
    /* the golden output: the last node the writing task covers, else its value */
    const char *node = NULL;
    int ncov = nb_acl_task_covers(id, c.k1, 0, &node);
    const nb_dump_tensor *gout = NULL;
    const nb_dump *owner = NULL;
    if (ncov > 1) {
        nb_acl_task_covers(id, c.k1, ncov - 1, &node);
        const nb_dump *gdn = golden_by_node(cs->gd, cs->ng, node);
        gout = gdn && gdn->n_t ? &gdn->t[0] : NULL;
    } else {
        gout = golden_by_value(vi, cs->gd, nb_acl_tensor_onnx(id, c.out_t), &owner);
    }
    if (!gout || !gout->v) {
        err = nb_fail(st, NB_ERR_ARG, "--isolate %s: no golden dump of its output '%s'", layer,
                      nb_acl_tensor_onnx(id, c.out_t));
        goto out;
    }
    for (uint32_t i = 0; i < x->n_inputs && i < 64; i++)
        ins[i] = calloc(1, x->t[nb_sim_input_tensor(sim, (int)i)].bytes + 1);
    for (uint32_t i = 0; i < x->n_outputs && i < 64; i++)
        outs[i] = calloc(1, x->t[nb_sim_output_tensor(sim, (int)i)].bytes + 1);
    if ((e = nb_acl_execute_hooked(id, (const void *const *)ins, outs, iso_hook, &c)) ||
        !c.got || c.n_got != gout->numel) {
        err = e ? nb_fail(st, NB_ERR_FORMAT, "%s (ACL error %d)", aclGetRecentErrMsg(), e)
                : nb_fail(st, NB_ERR_INTERNAL, "--isolate %s: the layer's output was not read",
                          layer);
        goto out;
    }
    nb_cmp_metrics_compute(c.got, gout->v, c.n_got, &res->m);
    for (int i = 0; i < cs->nr; i++)
        if (cs->rows[i].compared && cs->rows[i].npu->task_id == (uint32_t)c.k1)
            res->chain = &cs->rows[i];
    res->k0 = c.k0, res->k1 = c.k1;
    res->inherited = res->chain && res->m.sqnr_db - res->chain->m.sqnr_db > 3;
out:
    for (int i = 0; i < 64; i++)
        free(ins[i]), free(outs[i]);
    free(c.got);
    if (id)
        aclmdlUnload(id);
    if (ctx)
        aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    aclFinalize();
    return err;
}
