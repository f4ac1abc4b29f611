/* nanobench compare: the vendor's msaccucmp on nanobench's dumps (issue 7, first part).
 *   convert -d DUMP[,DUMP|DIR] [-t npy|bin] [--out DIR]
 *   file_compare -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR -out DIR [--threshold cos=0.99,...]
 * NPU dumps come from `nanobench run --dump`, golden dumps from `nanobench infer --dump`. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <pthread.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "acl/acl.h"
#include "cli.h"
#include "nb/accucmp.h"
#include "nb/sim.h"

static void help(void)
{
    printf("usage: nanobench compare convert -d DUMP_FILE|DIR[,...] [-t npy|bin] [--out DIR]\n"
           "       nanobench compare file_compare -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR -out DIR\n"
           "                                      [--threshold cos=0.99,red=0.05,kl=0.005,rmse=1,mre=1]\n"
           "                                      [--isolate LAYER --exeom NAME.exeom] [--json]\n"
           "       nanobench compare layer -m NPU_DUMP_DIR -g GOLDEN_DUMP_DIR --layer NAME\n"
           "                               [--bins N] [--threshold ...] [--json]\n"
           "convert writes each tensor of a dump file as <file>.output.<i>.<shape>.npy (NCHW /\n"
           "ND, float32) or .bin. file_compare matches every NPU task output (nanobench run\n"
           "--dump) to the golden tensor of the ONNX node it computes (nanobench infer --dump;\n"
           "a fused task at the last node it covers), computes the vendor's ten metrics plus\n"
           "SQNR (share/doc/metrics.md), writes DIR/result_<timestamp>.csv, prints the table,\n"
           "the verdict and the first layer over threshold with its likely cause. --isolate runs\n"
           "LAYER (a task or an ONNX node) of NAME.exeom on the simulator with the golden input,\n"
           "to tell its own error from the error it inherits. --json prints the verdict, the\n"
           "thresholds and every row as one JSON object instead of the table (the CSV is written\n"
           "all the same).\n"
           "layer shows one layer of that comparison (NAME: an NPU task, or the ONNX node it is\n"
           "compared with or covers): its tasks, metrics, the 10 elements of largest |npu -\n"
           "golden| with their indices, the first 16 elements side by side and a histogram of\n"
           "npu - golden in N bins (default 20); --json gives the same as one object.\n");
}

/* ---- collecting dump files ---- */
static char **g_files;
static int g_n, g_cap;

static int collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    if (flag != FTW_F)
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, ".tmp") || !strcmp(base, "manifest.tsv"))
        return 0;
    if (g_n == g_cap) {
        int cap = g_cap ? 2 * g_cap : 64;
        char **p = realloc(g_files, sizeof *p * (size_t)cap);
        if (!p)
            return 1;
        g_files = p, g_cap = cap;
    }
    g_files[g_n] = strdup(path);
    return g_files[g_n++] ? 0 : 1;
}

/* Every dump under each of the comma-separated paths (files named as dumps must parse;
   other files in the folders are passed over), with the tensors of want, read by T workers
   (each every T-th file). With cb, each dump once read goes to cb with its worker's context
   users[w] and the file's index; the dumps end up compacted in *out, and *map (if map)
   takes a file index to its dump's index. Returns the count, or -1 with the error printed. */
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
    int w, T, want;
    nb_dump *d;
    bool *ok;
    dump_cb cb;
    void *user;
    char err[1100];
    int err_code, skipped;
    bool explicit_files;
} par_work;

static void *par_read(void *arg)
{
    par_work *p = arg;
    for (int i = p->w; i < g_n && !p->err_code; i += p->T) {
        nb_status st = {0};
        nb_err e = nb_dump_read(g_files[i], p->want, &p->d[i], &st);
        if (!e) {
            p->ok[i] = true;
            if (p->cb)
                p->cb(p->user, &p->d[i], i);
        } else if (e == NB_ERR_FORMAT && !p->explicit_files && !dump_named(g_files[i])) {
            p->skipped++;
        } else {
            p->err_code = e == NB_ERR_NOMEM ? 1 : 2;
            snprintf(p->err, sizeof p->err, "%s", st.msg);
        }
    }
    return NULL;
}

static int read_dumps(const char *spec, int want, nb_dump **out, int **map, dump_cb cb,
                      void **users, int T)
{
    int *local_map = NULL;
    if (!map)
        map = &local_map;
    g_files = NULL, g_n = g_cap = 0;
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return -1;
    bool explicit_files = false;
    for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        struct stat sb;
        char real[PATH_MAX];
        if (stat(p, &sb) || !realpath(p, real)) {
            cli_fail(2, "%s: %s", p, strerror(errno));
            free(copy);
            return -1;
        }
        explicit_files |= S_ISREG(sb.st_mode);
        if (nftw(real, collect, 16, FTW_PHYS) != 0) {
            cli_fail(1, "%s: cannot walk the folder", p);
            free(copy);
            return -1;
        }
    }
    free(copy);
    nb_dump *d = calloc((size_t)g_n + 1, sizeof *d);
    bool *ok = calloc((size_t)g_n + 1, sizeof *ok);
    *map = calloc((size_t)g_n + 1, sizeof **map);
    par_work pw[4];
    pthread_t th[4];
    int rc = d && ok && *map ? 0 : cli_fail(1, "out of memory");
    nb_sim_numerics_init(); /* the decode tables, before any worker */
    for (int w = 0; w < T && !rc; w++) {
        pw[w] = (par_work){.w = w, .T = T, .want = want, .d = d, .ok = ok, .cb = cb,
                           .user = users ? users[w] : NULL, .explicit_files = explicit_files};
        if (pthread_create(&th[w], NULL, par_read, &pw[w])) {
            T = w; /* the workers started do the rest */
            break;
        }
    }
    for (int w = 0; w < T && !rc; w++)
        pthread_join(th[w], NULL);
    int skipped = 0;
    for (int w = 0; w < T && !rc; w++) {
        skipped += pw[w].skipped;
        if (pw[w].err_code)
            rc = cli_fail(pw[w].err_code, "%s", pw[w].err);
    }
    int n = 0;
    for (int i = 0; i < g_n; i++) {
        if (d && ok && ok[i]) {
            (*map)[i] = n;
            d[n++] = d[i];
        }
        free(g_files[i]);
    }
    free(g_files);
    free(ok);
    if (!rc && n == 0)
        rc = cli_fail(2, "%s: no dump file%s", spec, skipped ? " (only other files)" : "");
    if (rc) {
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

static int workers(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return ncpu > 4 ? 4 : ncpu < 1 ? 1 : (int)ncpu;
}

static void shape_str(const nb_dump_tensor *t, char *buf, size_t len)
{
    int64_t d[6];
    for (int i = 0; i < t->rank; i++)
        d[i] = t->dims[i];
    nb_shape_str(t->rank, d, 'x', buf, len);
}

/* ---- convert ---- */
/* a file convert writes: <dump file>.<input|output>.<i>.<shape>.<npy|bin> */
static bool converted_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 4 && (!strcmp(name + n - 4, ".npy") || !strcmp(name + n - 4, ".bin"))) &&
           (strstr(name, ".output.") || strstr(name, ".input."));
}

static int convert(int argc, char **argv)
{
    const char *src = NULL, *type = "npy", *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "-d", &v)) || (r = cli_opt(argc, argv, &i, "--dump", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-d needs a dump file or folder");
            src = v;
        } else if ((r = cli_opt(argc, argv, &i, "-t", &v))) {
            if (r < 0 || (strcmp(v, "npy") && strcmp(v, "bin")))
                return cli_usage_error("compare", "-t takes npy or bin");
            type = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--out needs a folder");
            out = v;
        } else {
            return cli_usage_error("compare", "convert: unknown argument '%s'", argv[i]);
        }
    }
    if (!src)
        return cli_usage_error("compare", "convert needs -d DUMP_FILE");
    nb_dump *d = NULL;
    int n = read_dumps(src, NB_DUMP_INPUTS | NB_DUMP_OUTPUTS, &d, NULL, NULL, NULL, workers());
    if (n < 0)
        return 2;
    int rc = 0, written = 0;
    /* --out: the files go to OUT.tmp.PID, published as OUT when all are written (a full
       disk leaves nothing under OUT, an earlier OUT's files stay) */
    char otmp[4400] = "";
    const char *final_out = out;
    if (out) {
        nb_remove_stale_tmps(out);
        nb_tmp_path(out, otmp, sizeof otmp);
        cli_cleanup_add_tmp(out);
        out = otmp;
    }
    if (out && nb_mkdir_p(out))
        rc = cli_fail(2, "%s: cannot make the folder: %s", final_out, strerror(errno));
    for (int i = 0; i < n && !rc; i++) {
        for (int k = 0; k < d[i].n_t && !rc; k++) {
            const nb_dump_tensor *t = &d[i].t[k];
            if (!t->v)
                continue;
            char sh[128], path[4096];
            shape_str(t, sh, sizeof sh);
            const char *base = strrchr(d[i].path, '/');
            base = base ? base + 1 : d[i].path;
            int pl = out ? snprintf(path, sizeof path, "%s/%s.%s.%d.%s.%s", out, base,
                                    t->output ? "output" : "input", t->index, sh, type)
                         : snprintf(path, sizeof path, "%s.%s.%d.%s.%s", d[i].path,
                                    t->output ? "output" : "input", t->index, sh, type);
            if (pl < 0 || (size_t)pl >= sizeof path) {
                rc = cli_fail(2, "%s: the converted file's path is too long", d[i].path);
                break;
            }
            int64_t dims[6];
            for (int q = 0; q < t->rank; q++)
                dims[q] = t->dims[q];
            nb_status st = {0};
            nb_tensor *x = NULL;
            if (nb_tensor_new(NB_FLOAT, t->rank, dims, &x, &st)) {
                rc = cli_error(&st);
                break;
            }
            for (int64_t e = 0; e < t->numel; e++)
                ((float *)x->data)[e] = (float)t->v[e];
            nb_err we = strcmp(type, "npy") ? nb_bin_write(path, x, &st) : nb_npy_write(path, x, &st);
            nb_tensor_free(x);
            if (we)
                rc = cli_error(&st);
            else
                written++;
        }
    }
    for (int i = 0; i < n; i++)
        nb_dump_free(&d[i]);
    free(d);
    if (otmp[0]) {
        nb_status pst = {0};
        if (rc)
            nb_remove_tree(otmp);
        else if (nb_publish_dir(otmp, final_out, converted_name, &pst))
            rc = cli_error(&pst);
    }
    cli_cleanup_clear();
    if (!rc)
        printf("%d tensor file(s) written\n", written);
    return rc;
}

/* ---- file_compare ---- */
typedef struct row {
    int di, ti;            /* the NPU dump and its tensor (pointers set once all are read) */
    const nb_dump *npu;
    const nb_dump_tensor *x;
    const nb_dump *gold;
    const nb_dump_tensor *y;
    char ground[512];
    nb_cmp_metrics m;
    bool compared, fails;
    char reason[256];
} row;

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

static const nb_dump *g_sort_gold;
static int by_name(const void *a, const void *b)
{
    return strcmp(((const nb_dump *)a)->op_name, ((const nb_dump *)b)->op_name);
}
static int by_vref(const void *a, const void *b)
{
    return strcmp(((const vref *)a)->name, ((const vref *)b)->name);
}

static int build_value_index(value_index *vi, nb_dump *g, int ng)
{
    int n = 0;
    for (int i = 0; i < ng; i++)
        n += g[i].n_t;
    vi->v = malloc(sizeof *vi->v * ((size_t)n + 1));
    if (!vi->v)
        return -1;
    vi->n = 0;
    for (int i = 0; i < ng; i++)
        for (int k = 0; k < g[i].n_t; k++)
            if (g[i].t[k].output && g[i].t[k].original_name[0])
                vi->v[vi->n++] = (vref){g[i].t[k].original_name, i, k};
    qsort(vi->v, (size_t)vi->n, sizeof *vi->v, by_vref);
    return 0;
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

static void csv_field(FILE *f, const char *s) { nb_csv_field(f, s, true); }

static void csv_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",NaN", f);
    else
        fprintf(f, ",%.6g", v);
}

/* a name as one line of plain text (two buffers: two names in one printf) */
static const char *plain(const char *s)
{
    static char buf[2][256];
    static int at;
    char *b = buf[at++ & 1];
    snprintf(b, sizeof buf[0], "%s", s);
    return cli_plain(b);
}

/* SQNR for the table and CSV: +-999 for +-infinity */
static double sqnr_shown(double v) { return isinf(v) ? (v > 0 ? 999.0 : -999.0) : v; }

/* The likely cause of a row's error, one line (buf holds it when it has numbers in it): of
   a layer over threshold (over = true), or of the layer where the SQNR falls most (over =
   false: it may be within every threshold). */
static const char *likely_cause(const row *r, bool over, char *buf, size_t len)
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
    if (!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh"))
        return "table-function error (the Tanh/Sigmoid table on small inputs)";
    if (!strcmp(op, "LSTM") || !strcmp(op, "GRU"))
        return "accumulated RNN error across the unrolled steps";
    return "quantization noise";
}

typedef struct cmp_ctx {
    nb_dump *gd;
    int ng;
    const value_index *vi;
    const nb_cmp_thresholds *th;
    const char *keep; /* compare layer: the NPU values of the rows that may be it stay */
    row *rows;
    int nr, cap;
    bool oom;
} cmp_ctx;

/* The golden tensor of the NPU dump d's output x, as every comparison matches it: the last
   node a fused task covers, else the ONNX value the output holds; into r (gold, y, ground),
   or the reason there is none (false). */
static bool match_golden(const cmp_ctx *c, const nb_dump *d, const nb_dump_tensor *x, row *r)
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
    else if (d->inserted && !x->original_name[0])
        snprintf(r->reason, sizeof r->reason, "inserted by the compiler (no ONNX tensor)");
    else
        snprintf(r->reason, sizeof r->reason, "no golden tensor for '%s'", x->original_name);
    return false;
}

/* The metrics of a matched row against the thresholds, and its reason line. */
static void compare_row(const cmp_ctx *c, const nb_dump_tensor *x, row *r)
{
    if (!x->v || !r->y->v || x->numel != r->y->numel) {
        snprintf(r->reason, sizeof r->reason, !x->v || !r->y->v ? "a stats-only dump"
                 : "%lld values against %lld", (long long)x->numel, (long long)r->y->numel);
        return;
    }
    nb_cmp_metrics_compute(x->v, r->y->v, x->numel, &r->m);
    r->compared = true;
    char why[64];
    r->fails = nb_cmp_fails(&r->m, c->th, why, sizeof why);
    if (r->m.nan_x || r->m.inf_x) { /* a blown-up NPU output fails, whatever else */
        r->fails = true;
        snprintf(r->reason, sizeof r->reason, "NaN or infinity in the NPU output (%lld, "
                 "%lld)%s%s", (long long)r->m.nan_x, (long long)r->m.inf_x,
                 why[0] ? "; over threshold: " : "", why);
    } else if (r->fails)
        snprintf(r->reason, sizeof r->reason, "over threshold: %s", why);
    else if (r->m.note[0])
        snprintf(r->reason, sizeof r->reason, "%s", r->m.note);
}

/* Whether a row of task d may be the layer named name (compare layer): the task itself,
   the ONNX node it is compared with, or a node it covers. */
static bool may_be_layer(const nb_dump *d, const row *r, const char *name)
{
    if (!strcmp(d->op_name, name) || (r->gold && !strcmp(r->gold->op_name, name)))
        return true;
    for (int q = 0; q < d->n_covers; q++)
        if (!strcmp(d->covers[q], name))
            return true;
    return false;
}

/* The rows of one NPU dump (its outputs), computed as soon as it is read; then its values
   are freed (a 500 MB dump folder never sits in memory as doubles), but for the layer that
   compare layer looks at. */
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
            row *p = realloc(c->rows, sizeof *p * (size_t)cap);
            if (!p) {
                c->oom = true;
                break;
            }
            c->rows = p, c->cap = cap;
        }
        row *r = &c->rows[c->nr++];
        memset(r, 0, sizeof *r);
        r->di = di, r->ti = k;
        if (match_golden(c, d, x, r))
            compare_row(c, x, r);
        keep |= c->keep && may_be_layer(d, r, c->keep);
    }
    for (int k = 0; k < d->n_t && !keep; k++) { /* the metadata stays for the table */
        free(d->t[k].v);
        d->t[k].v = NULL;
    }
}

static const nb_dump *g_sort_dumps;
static int by_row(const void *a, const void *b)
{
    const row *x = a, *y = b;
    uint32_t tx = g_sort_dumps[x->di].task_id, ty = g_sort_dumps[y->di].task_id;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x->ti < y->ti ? -1 : x->ti > y->ti;
}

/* Both sides of a comparison, matched: the golden dumps (values kept), the NPU dumps
   (values freed once compared, but for cs->keep's) and one row per NPU task output, in
   network order. */
typedef struct cmp_set {
    nb_dump *gd, *md;
    int ng, nm;
    value_index gvi;
    row *rows;
    int nr;
} cmp_set;

static void cmp_set_free(cmp_set *s)
{
    free(s->gvi.v);
    for (int i = 0; i < s->nm; i++)
        nb_dump_free(&s->md[i]);
    for (int i = 0; i < s->ng; i++)
        nb_dump_free(&s->gd[i]);
    free(s->md), free(s->gd), free(s->rows);
    memset(s, 0, sizeof *s);
}

/* Reads the golden dumps of gdir (one reference run), then the NPU dumps of mdir, each
   matched and compared as it is read (a worker per core); the NPU values of the rows that
   may be the layer keep (NULL: none) stay. Returns 0, or the exit status with the message
   printed (s freed). */
static int compare_dirs(const char *mdir, const char *gdir, const nb_cmp_thresholds *th,
                        const char *keep, cmp_set *s)
{
    memset(s, 0, sizeof *s);
    int rc = 0;
    /* every dump allocates and frees its tensors' arrays: keep them on the heap rather than
       mmap'ed fresh (and page-faulted) each time */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
    int ng = read_dumps(gdir, NB_DUMP_OUTPUTS, &s->gd, NULL, NULL, NULL, workers());
    if (ng < 0)
        return 2;
    s->ng = ng;
    nb_dump *gd = s->gd;
    /* golden dumps, one per node: from one reference run */
    for (int i = 0; i < ng; i++) {
        if (strcmp(gd[i].source, "golden")) {
            rc = cli_fail(2, "%s: a dump of the %s, not a golden one (nanobench infer --dump)",
                          gd[i].path, gd[i].source);
            goto fail;
        }
    }
    g_sort_gold = gd;
    qsort(gd, (size_t)ng, sizeof *gd, by_name);
    for (int i = 1; i < ng; i++)
        if (!strcmp(gd[i].op_name, gd[i - 1].op_name)) {
            rc = cli_fail(2, "%s: two golden dumps of node '%s' (%s and %s): one reference run "
                          "per folder", gdir, gd[i].op_name, gd[i - 1].path, gd[i].path);
            goto fail;
        }
    if (build_value_index(&s->gvi, gd, ng)) {
        rc = cli_fail(1, "out of memory");
        goto fail;
    }
    /* the NPU's dumps, compared as they are read (a worker per core), their values freed */
    int T = workers();
    cmp_ctx cc[4];
    void *users[4];
    for (int w = 0; w < 4; w++) {
        cc[w] = (cmp_ctx){.gd = gd, .ng = ng, .th = th, .vi = &s->gvi, .keep = keep};
        users[w] = &cc[w];
    }
    int *map = NULL;
    int nm = read_dumps(mdir, NB_DUMP_OUTPUTS, &s->md, &map, npu_rows, users, T);
    s->nm = nm < 0 ? 0 : nm;
    int nr = 0;
    bool oom = false;
    for (int w = 0; w < T; w++)
        nr += cc[w].nr, oom |= cc[w].oom;
    row *rows = s->rows = malloc(sizeof *rows * ((size_t)nr + 1));
    nr = 0;
    for (int w = 0; w < T; w++) {
        for (int i = 0; rows && i < cc[w].nr; i++) {
            rows[nr] = cc[w].rows[i];
            rows[nr++].di = map ? map[cc[w].rows[i].di] : 0;
        }
        free(cc[w].rows);
    }
    free(map);
    if (nm < 0 || oom || !rows) {
        rc = nm < 0 ? 2 : cli_fail(1, "out of memory");
        goto fail;
    }
    s->nr = nr;
    for (int i = 0; i < nm; i++)
        if (strcmp(s->md[i].source, "npu")) {
            rc = cli_fail(2, "%s: a %s dump, not the NPU's (nanobench run --dump)", s->md[i].path,
                          s->md[i].source);
            goto fail;
        }
    g_sort_dumps = s->md;
    qsort(rows, (size_t)nr, sizeof *rows, by_row);
    for (int i = 0; i < nr; i++) {
        rows[i].npu = &s->md[rows[i].di];
        rows[i].x = &s->md[rows[i].di].t[rows[i].ti];
    }
    return 0;
fail:
    cmp_set_free(s);
    return rc;
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

/* What --isolate found: the layer's tasks k0..k1, its metrics on golden input, and its
   row in the chain (NULL when its output is not compared). */
typedef struct iso_result {
    bool done;
    int k0, k1;
    nb_cmp_metrics m;
    const row *inh;
} iso_result;

/* Runs the layer's tasks on golden input; its report line into line (printed after the
 * table) and its numbers into res. Called before the CSV is written: a bad layer name
 * leaves no result file. */
static int isolate(const char *layer, const char *exeom, nb_dump *gd, int ng,
                   const value_index *vi, const row *rows, int nr, char *line, size_t len,
                   iso_result *res)
{
    uapi_npu_dlog_setlevel(0x10, 4, 0);
    aclError e;
    aclrtContext ctx = NULL;
    uint32_t id = 0;
    int rc = 0;
    iso_ctx c = {.k0 = -1, .k1 = -1, .out_t = -1};
    void *ins[64] = {0}, *outs[64] = {0};
    if ((e = aclInit(NULL)) || (e = aclrtSetDevice(0)) || (e = aclrtCreateContext(&ctx, 0)) ||
        (e = aclmdlLoadFromFile(exeom, &id))) {
        rc = cli_fail(2, "%s (ACL error %d)", aclGetRecentErrMsg(), e);
        goto out;
    }
    if (nb_acl_dbg_note(id)[0]) {
        rc = cli_fail(2, "--isolate %s: %s (the layers are named by NAME.dbg)", layer,
                      nb_acl_dbg_note(id));
        goto out;
    }
    const nb_sim_model *sim = nb_acl_sim_model(id);
    const nb_exeom *x = nb_sim_exeom(sim);
    const char *t0name = NULL, *t0op = NULL;
    nb_acl_task_info(id, 0, &t0name, &t0op);
    if (x->n_tasks && !strncmp(t0name, "task0", 6)) {
        rc = cli_fail(2, "--isolate %s: no NAME.dbg next to %s names its layers", layer, exeom);
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
        rc = cli_fail(2, "--isolate %s: no task of %s computes it (a task name or an ONNX node "
                      "of NAME.dbg)", layer, exeom);
        goto out;
    }
    /* the golden values of what the layer's first task reads */
    const nb_exeom_task *k0 = &x->k[c.k0];
    for (int j = 0; j < k0->n_in; j++) {
        int t = k0->in[j] == NB_EXEOM_NONE ? -1 : k0->in[j];
        if (t < 0 || x->t[t].role == 3)
            continue;
        const nb_dump *owner = NULL;
        const nb_dump_tensor *g = golden_by_value(vi, gd, nb_acl_tensor_onnx(id, t), &owner);
        if (!g || !g->v || g->numel != nb_sim_numel(&x->t[t]))
            continue;
        nb_acl_tensor_scale(id, t, &c.in_scale[c.n_in], &c.in_offset[c.n_in]);
        c.in_t[c.n_in] = t, c.gin[c.n_in++] = g;
    }
    if (c.n_in == 0) {
        rc = cli_fail(2, "--isolate %s: no golden dump holds the input of task %d", layer, c.k0);
        goto out;
    }
    /* the golden output: the last node the writing task covers, else its value */
    const char *node = NULL;
    int ncov = nb_acl_task_covers(id, c.k1, 0, &node);
    const nb_dump_tensor *gout = NULL;
    const nb_dump *owner = NULL;
    if (ncov > 1) {
        nb_acl_task_covers(id, c.k1, ncov - 1, &node);
        const nb_dump *gdn = golden_by_node(gd, ng, node);
        gout = gdn && gdn->n_t ? &gdn->t[0] : NULL;
    } else {
        gout = golden_by_value(vi, gd, nb_acl_tensor_onnx(id, c.out_t), &owner);
    }
    if (!gout || !gout->v) {
        rc = cli_fail(2, "--isolate %s: no golden dump of its output '%s'", layer,
                      nb_acl_tensor_onnx(id, c.out_t));
        goto out;
    }
    for (uint32_t i = 0; i < x->n_inputs && i < 64; i++)
        ins[i] = calloc(1, x->t[nb_sim_input_tensor(sim, (int)i)].bytes + 1);
    for (uint32_t i = 0; i < x->n_outputs && i < 64; i++)
        outs[i] = calloc(1, x->t[nb_sim_output_tensor(sim, (int)i)].bytes + 1);
    if ((e = nb_acl_execute_hooked(id, (const void *const *)ins, outs, iso_hook, &c)) ||
        !c.got || c.n_got != gout->numel) {
        rc = e ? cli_fail(2, "%s (ACL error %d)", aclGetRecentErrMsg(), e)
               : cli_fail(1, "--isolate %s: the layer's output was not read", layer);
        goto out;
    }
    nb_cmp_metrics iso;
    nb_cmp_metrics_compute(c.got, gout->v, c.n_got, &iso);
    const row *inh = NULL;
    for (int i = 0; i < nr; i++)
        if (rows[i].compared && rows[i].npu->task_id == (uint32_t)c.k1)
            inh = &rows[i];
    int at = snprintf(line, len, "isolated %s (tasks %d..%d, golden input): cosine %.6f, "
                      "SQNR %.1f dB, max abs %.4g", plain(layer), c.k0, c.k1, iso.cos,
                      iso.sqnr_db, iso.max_abs);
    if (inh && at > 0 && (size_t)at < len)
        snprintf(line + at, len - (size_t)at, "; with the NPU's own input: cosine %.6f, SQNR "
                 "%.1f dB: %s", inh->m.cos, inh->m.sqnr_db, iso.sqnr_db - inh->m.sqnr_db > 3
                     ? "most of the error is inherited from earlier layers"
                     : "the error is the layer's own");
    rec_metric("isolated_sqnr_db", iso.sqnr_db, "dB");
    rec_metric("isolated_cosine", iso.cos, "");
    *res = (iso_result){.done = true, .k0 = c.k0, .k1 = c.k1, .m = iso, .inh = inh};
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
    return rc;
}

/* "over": the --threshold names a compared row crosses, and "nonfinite" for a NaN or an
   infinity in the NPU output */
static json_t *over_json(const row *r, const nb_cmp_thresholds *th)
{
    json_t *a = json_array();
    char why[64];
    if (!r->compared)
        return a;
    nb_cmp_fails(&r->m, th, why, sizeof why);
    for (char *p = why, *save = NULL, *t; (t = strtok_r(p, ", ", &save)); p = NULL)
        json_array_append_new(a, json_string(t));
    if (r->m.nan_x || r->m.inf_x)
        json_array_append_new(a, json_string("nonfinite"));
    return a;
}

static json_t *shape_json(const nb_dump_tensor *t)
{
    json_t *a = json_array();
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(a, json_integer(t->dims[d]));
    return a;
}

static json_t *covers_json(const nb_dump *d)
{
    json_t *a = json_array();
    for (int q = 0; q < d->n_covers; q++)
        json_array_append_new(a, nb_json_string(d->covers[q]));
    return a;
}

/* The metrics of a compared row (null when not compared or not finite). */
static void metrics_json(json_t *o, const row *r)
{
    const nb_cmp_metrics *m = &r->m;
    bool c = r->compared;
    json_object_set_new(o, "cosine", c ? cli_jnum(m->cos) : json_null());
    json_object_set_new(o, "max_abs_error", c ? cli_jnum(m->max_abs) : json_null());
    json_object_set_new(o, "max_relative_error", c ? cli_jnum(m->max_rel) : json_null());
    json_object_set_new(o, "mean_relative_error", c ? cli_jnum(m->mean_rel) : json_null());
    json_object_set_new(o, "accumulated_relative_error", c ? cli_jnum(m->acc_rel) : json_null());
    json_object_set_new(o, "relative_euclidean_distance", c ? cli_jnum(m->red) : json_null());
    json_object_set_new(o, "mean_absolute_error", c ? cli_jnum(m->mae) : json_null());
    json_object_set_new(o, "sqnr_db", c ? cli_jnum(m->sqnr_db) : json_null());
    json_object_set_new(o, "rmse", c ? cli_jnum(m->rmse) : json_null());
    json_object_set_new(o, "kl", c ? cli_jnum(m->kl) : json_null());
}

/* One row of file_compare --json. */
static json_t *row_json(const row *r, int index, const nb_cmp_thresholds *th)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
    json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
    json_object_set_new(o, "task", json_integer(r->npu->task_id));
    json_object_set_new(o, "tensor_index", json_integer(r->x->index));
    json_object_set_new(o, "golden_node", r->gold ? nb_json_string(r->gold->op_name)
                                                  : json_null());
    json_object_set_new(o, "shape", shape_json(r->x));
    json_object_set_new(o, "npu_dtype", nb_json_string(r->x->dtype));
    json_object_set_new(o, "golden_dtype", r->y ? nb_json_string(r->y->dtype) : json_null());
    json_object_set_new(o, "compared", json_boolean(r->compared));
    metrics_json(o, r);
    json_object_set_new(o, "over", over_json(r, th));
    json_object_set_new(o, "saturations", json_integer((json_int_t)r->npu->saturations));
    json_object_set_new(o, "reason", nb_json_string(r->reason));
    json_object_set_new(o, "npu_dump", nb_json_string(r->npu->path));
    json_object_set_new(o, "golden_dump", r->gold ? nb_json_string(r->gold->path) : json_null());
    json_object_set_new(o, "covers", covers_json(r->npu));
    return o;
}

static json_t *thresholds_json(const nb_cmp_thresholds *th)
{
    json_t *o = json_object();
    json_object_set_new(o, "cos", json_real(th->cos_min));
    json_object_set_new(o, "red", json_real(th->red_max));
    json_object_set_new(o, "kl", json_real(th->kl_max));
    json_object_set_new(o, "rmse", json_real(th->rmse_max));
    json_object_set_new(o, "mre", json_real(th->mean_rel_max));
    return o;
}

/* {layer, op_type, task, index, cosine, sqnr_db, likely_cause} of row i */
static json_t *named_row_json(const row *rows, int i)
{
    const row *r = &rows[i];
    json_t *o = json_object();
    json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
    json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
    json_object_set_new(o, "task", json_integer(r->npu->task_id));
    json_object_set_new(o, "index", json_integer(i));
    json_object_set_new(o, "cosine", cli_jnum(r->m.cos));
    json_object_set_new(o, "sqnr_db", cli_jnum(r->m.sqnr_db));
    char cause[400];
    json_object_set_new(o, "likely_cause", json_string(likely_cause(r, r->fails, cause, sizeof cause)));
    return o;
}

static int file_compare(int argc, char **argv)
{
    const char *mdir = NULL, *gdir = NULL, *out = NULL, *thr = NULL, *iso_layer = NULL,
               *iso_exeom = NULL;
    bool json = false;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "-m", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-m needs the NPU dump folder");
            mdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "-g", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-g needs the golden dump folder");
            gdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "-out", &v)) || (r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-out needs a folder");
            out = v;
        } else if ((r = cli_opt(argc, argv, &i, "--isolate", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--isolate needs a layer");
            iso_layer = v;
        } else if ((r = cli_opt(argc, argv, &i, "--exeom", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--exeom needs NAME.exeom");
            iso_exeom = v;
        } else if ((r = cli_opt(argc, argv, &i, "--threshold", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--threshold needs cos=...,rmse=...");
            thr = v;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            return cli_usage_error("compare", "file_compare: unknown argument '%s'", argv[i]);
        }
    }
    if (!mdir || !gdir || !out)
        return cli_usage_error("compare", "file_compare needs -m NPU_DIR -g GOLDEN_DIR -out DIR");
    if (!iso_layer != !iso_exeom)
        return cli_usage_error("compare", "--isolate LAYER goes with --exeom NAME.exeom");
    nb_cmp_thresholds th;
    nb_cmp_thresholds_default(&th);
    nb_status st = {0};
    if (thr && nb_cmp_thresholds_parse(thr, &th, &st))
        return cli_error(&st);
    signal(SIGPIPE, SIG_IGN); /* a closed pipe on the table: the CSV still completes */
    int rc = rec_start("compare", mdir, argc, argv);
    if (rc)
        return rc;
    rec_param("golden", "%s", gdir);
    cmp_set cs;
    if ((rc = compare_dirs(mdir, gdir, &th, NULL, &cs)))
        return rc;
    row *rows = cs.rows;
    int nr = cs.nr;
    json_t *jo = NULL, *jrows = NULL;
    char iso_line[1024] = "";
    iso_result iso = {0};
    if (iso_layer && (rc = isolate(iso_layer, iso_exeom, cs.gd, cs.ng, &cs.gvi, rows, nr,
                                   iso_line, sizeof iso_line, &iso)))
        goto done;
    if (nb_mkdir_p(out)) {
        rc = cli_fail(2, "%s: cannot make the folder: %s", out, strerror(errno));
        goto done;
    }
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    char stamp[32], csv[4096], tmp[4200];
    strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tmv);
    /* a name of its own (a second run in the same second gets _2, ...), claimed with
       O_EXCL; the rows go to csv.tmp.PID, renamed over it at the end: never a half CSV */
    int fd = -1;
    for (int k = 1; k < 1000 && fd < 0; k++) {
        int pl = k == 1 ? snprintf(csv, sizeof csv, "%s/result_%s.csv", out, stamp)
                        : snprintf(csv, sizeof csv, "%s/result_%s_%d.csv", out, stamp, k);
        if (pl < 0 || (size_t)pl >= sizeof csv) {
            rc = cli_fail(2, "%s: the folder's path is too long for the result file", out);
            goto done;
        }
        fd = open(csv, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno != EEXIST) {
            rc = cli_fail(2, "%s: %s", csv, strerror(errno));
            goto done;
        }
    }
    if (fd < 0) {
        rc = cli_fail(2, "%s: no free result file name", out);
        goto done;
    }
    close(fd);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", csv, (long)getpid());
    cli_cleanup_add(csv);
    cli_cleanup_add(tmp);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = cli_fail(2, "%s: %s", tmp, strerror(errno));
        remove(csv);
        goto done;
    }
    fputs("Index,OpType,NPUDump,DataType,GroundTruth,DataType,TensorIndex,Shape,OverFlow,"
          "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
          "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
          "MaxRelativeError,MeanRelativeError,SQNR,CompareFailReason\n", f);
    if (json) {
        jo = json_object();
        jrows = json_array();
    }
    int first_bad = -1, last_cmp = -1, n_cmp = 0, n_bad = 0;
    if (!json)
        printf("%5s  %-14s %-40s %9s %10s %8s  %s\n", "index", "op", "NPU task", "cosine",
               "max abs", "SQNR dB", "reason");
    for (int i = 0; i < nr; i++) {
        row *r = &rows[i];
        char sh[128];
        shape_str(r->x, sh, sizeof sh);
        fprintf(f, "%d,", i);
        csv_field(f, r->npu->op_type);
        fputc(',', f);
        csv_field(f, r->npu->op_name);
        fputc(',', f);
        csv_field(f, r->x->dtype);
        fputc(',', f);
        csv_field(f, r->ground);
        fputc(',', f);
        csv_field(f, r->y ? r->y->dtype : "");
        fprintf(f, ",%d,", r->x->index);
        csv_field(f, sh);
        fprintf(f, ",%s", r->npu->saturations || r->m.sat_x ? "YES" : "NO");
        if (r->compared) {
            const nb_cmp_metrics *m = &r->m;
            csv_num(f, m->cos), csv_num(f, m->max_abs), csv_num(f, m->acc_rel), csv_num(f, m->red);
            csv_num(f, m->kl);
            fprintf(f, ",\"(%.3f;%.3f),(%.3f;%.3f)\"", m->mean_x, m->std_x, m->mean_y, m->std_y);
            csv_num(f, m->mae), csv_num(f, m->rmse), csv_num(f, m->max_rel), csv_num(f, m->mean_rel);
            csv_num(f, sqnr_shown(m->sqnr_db));
            n_cmp++;
            last_cmp = i;
            if (r->fails) {
                n_bad++;
                if (first_bad < 0)
                    first_bad = i;
            }
        } else {
            fputs(",,,,,,,,,,,", f);
        }
        fputc(',', f);
        csv_field(f, r->reason);
        fputc('\n', f);
        if (jrows) {
            json_array_append_new(jrows, row_json(r, i, &th));
        } else {
            char task[41];
            snprintf(task, sizeof task, "%s", r->npu->op_name);
            cli_plain(task); /* one line of plain text per row */
            if (r->compared)
                printf("%5d  %-14.14s %-40s %9.6f %10.4g %8.1f  %s\n", i, r->npu->op_type, task,
                       r->m.cos, r->m.max_abs, sqnr_shown(r->m.sqnr_db), r->reason);
            else
                printf("%5d  %-14.14s %-40s %9s %10s %8s  %s\n", i, r->npu->op_type, task, "-",
                       "-", "-", r->reason);
        }
        double vals[4] = {r->m.cos, r->m.max_abs, r->m.sqnr_db, (double)r->npu->saturations};
        const char *names[4] = {"cosine", "max_abs", "sqnr_db", "fp16_saturations"};
        if (r->compared)
            rec_layer(r->npu->op_name, r->npu->op_type, 4, names, vals);
    }
    if (fclose(f) || rename(tmp, csv)) {
        rc = cli_fail(2, "%s: %s", csv, strerror(errno));
        remove(tmp);
        remove(csv);
        goto done;
    }
    cli_cleanup_clear();
    if (!json)
        printf("%d tensors: %d compared, %d over threshold, %d not compared; wrote %s\n", nr,
               n_cmp, n_bad, nr - n_cmp, csv);
    if (n_cmp == 0) {
        rc = cli_fail(2, "%s: no NPU tensor matched a golden one (the dumps of another model or "
                      "input? the golden dumps come from `nanobench infer --dump` on the float "
                      "model)", gdir);
        goto done;
    }
    const char *verdict = "global_consistency", *verdict_text =
        "global consistency (every compared layer within the thresholds)";
    int prev = -1, worst = -1, worst_prev = -1;
    if (first_bad >= 0) {
        bool carries = last_cmp >= 0 && rows[last_cmp].fails;
        verdict = carries ? "problem_node" : "single_point_error";
        verdict_text = carries ? "problem node (the failure carries to the network output)"
                               : "single-point error (the network output is within the "
                                 "thresholds)";
        /* introduced here, or inherited: was the previous compared layer already off? */
        for (int i = first_bad - 1; i >= 0 && prev < 0; i--)
            if (rows[i].compared)
                prev = i;
        /* thresholds like RMSE > 1 are scale-dependent: also name the layer where the
           signal-to-noise ratio falls most from the layer before, and why */
        int prev_c = -1;
        double drop = 0;
        for (int i = 0; i < nr; i++) {
            if (!rows[i].compared)
                continue;
            if (prev_c >= 0) {
                double d_db = sqnr_shown(rows[prev_c].m.sqnr_db) - sqnr_shown(rows[i].m.sqnr_db);
                if (d_db > drop)
                    drop = d_db, worst = i, worst_prev = prev_c;
            }
            prev_c = i;
        }
        if (drop < 6.0)
            worst = -1;
        rec_metric("first_bad_task", (double)rows[first_bad].npu->task_id, "");
        if (worst >= 0)
            rec_metric("largest_drop_task", (double)rows[worst].npu->task_id, "");
    }
    bool inherited = first_bad >= 0 && prev >= 0 && rows[prev].fails;
    /* not inherited, but the layer before was within 3 dB: the error grew gradually and
       crosses the threshold here (accumulated), rather than appearing here (introduced) */
    bool gradual = first_bad >= 0 && prev >= 0 && !inherited &&
                   sqnr_shown(rows[prev].m.sqnr_db) - sqnr_shown(rows[first_bad].m.sqnr_db) < 3.0;
    const char *origin = inherited ? "inherited" : gradual ? "accumulated" : "introduced";
    if (json) {
        json_object_set_new(jo, "npu_dumps", nb_json_string(mdir));
        json_object_set_new(jo, "golden_dumps", nb_json_string(gdir));
        json_object_set_new(jo, "thresholds", thresholds_json(&th));
        json_object_set_new(jo, "verdict", json_string(verdict));
        json_object_set_new(jo, "verdict_text", json_string(verdict_text));
        json_object_set_new(jo, "tensors", json_integer(nr));
        json_object_set_new(jo, "compared", json_integer(n_cmp));
        json_object_set_new(jo, "over_threshold", json_integer(n_bad));
        json_object_set_new(jo, "not_compared", json_integer(nr - n_cmp));
        json_t *fb = first_bad >= 0 ? named_row_json(rows, first_bad) : json_null();
        if (first_bad >= 0)
            json_object_set_new(fb, "origin", json_string(origin));
        json_object_set_new(jo, "first_over_threshold", fb);
        json_t *wd = worst >= 0 ? named_row_json(rows, worst) : json_null();
        if (worst >= 0)
            json_object_set_new(wd, "previous_sqnr_db", cli_jnum(rows[worst_prev].m.sqnr_db));
        json_object_set_new(jo, "largest_sqnr_drop", wd);
        if (iso.done) {
            json_t *ji = json_object();
            json_object_set_new(ji, "layer", nb_json_string(iso_layer));
            json_object_set_new(ji, "first_task", json_integer(iso.k0));
            json_object_set_new(ji, "last_task", json_integer(iso.k1));
            json_object_set_new(ji, "cosine", cli_jnum(iso.m.cos));
            json_object_set_new(ji, "sqnr_db", cli_jnum(iso.m.sqnr_db));
            json_object_set_new(ji, "max_abs_error", cli_jnum(iso.m.max_abs));
            json_object_set_new(ji, "chain_cosine", iso.inh ? cli_jnum(iso.inh->m.cos) : json_null());
            json_object_set_new(ji, "chain_sqnr_db", iso.inh ? cli_jnum(iso.inh->m.sqnr_db)
                                                             : json_null());
            json_object_set_new(ji, "error", !iso.inh ? json_null() : json_string(
                iso.m.sqnr_db - iso.inh->m.sqnr_db > 3 ? "inherited" : "own"));
            json_object_set_new(jo, "isolate", ji);
        }
        json_object_set_new(jo, "csv", nb_json_string(csv));
        json_object_set_new(jo, "rows", jrows);
        jrows = NULL;
    } else {
        char cause[400];
        printf("verdict: %s\n", verdict_text);
        if (first_bad >= 0) {
            const row *b = &rows[first_bad];
            printf("first layer over threshold: %s (%s, task %u): cosine %.6f, SQNR %.1f dB; "
                   "likely cause: %s; %s\n", plain(b->npu->op_name), plain(b->npu->op_type),
                   b->npu->task_id, b->m.cos, b->m.sqnr_db, likely_cause(b, true, cause, sizeof cause),
                   inherited ? "inherited from the layer before"
                   : gradual ? "accumulated: the error grew gradually (within 3 dB of the layer "
                               "before, which is within the thresholds) and crosses here"
                             : "introduced here (the layer before is within the thresholds)");
        }
        if (worst >= 0) {
            const row *w = &rows[worst];
            printf("largest SQNR drop: %s (%s, task %u): %.1f dB after %.1f dB at the layer "
                   "before; likely cause: %s\n", plain(w->npu->op_name), plain(w->npu->op_type),
                   w->npu->task_id, sqnr_shown(w->m.sqnr_db),
                   sqnr_shown(rows[worst_prev].m.sqnr_db), likely_cause(w, w->fails, cause, sizeof cause));
        }
        if (iso_line[0])
            printf("%s\n", iso_line);
    }
    rec_metric("layers_compared", n_cmp, "");
    rec_metric("layers_over_threshold", n_bad, "");
    rec_artifact("csv", csv);
    if (jo) {
        rc = cli_json_out("compare", jo);
        jo = NULL;
    }
done:
    json_decref(jo);
    json_decref(jrows);
    cmp_set_free(&cs);
    return rc;
}

/* ---- compare layer: one matched layer in detail ---- */

/* The row of the layer name, found among file_compare's rows: the task of that name
   (its first compared output), else the first row compared with the ONNX node of that name
   (the task computing it; later ones only carry it, e.g. a TransData to the output), else
   the last compared row of a task covering that node (a fused Conv's AscendDequant).
   Returns the row, or -1 after the one-line error naming the layer (exit status 2). */
static int pick_layer(const cmp_set *s, const char *name, const char *mdir)
{
    int by_task = -1, by_node = -1, by_cover = -1, seen = -1;
    for (int i = 0; i < s->nr; i++) {
        const row *r = &s->rows[i];
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
    int pick = by_task >= 0 ? by_task : by_node >= 0 ? by_node : by_cover;
    if (pick >= 0)
        return pick;
    if (seen >= 0) {
        const row *r = &s->rows[seen];
        cli_fail(2, "compare layer: layer '%s' (%s, task %u) was not compared: %s", name,
                 r->npu->op_type, r->npu->task_id, r->reason);
    } else {
        cli_fail(2, "compare layer: no layer '%s' in %s (a task or an ONNX node, as the "
                 "NPUDump and GroundTruth columns of file_compare's CSV name them)", name, mdir);
    }
    return -1;
}

static const nb_dump *g_sort_tasks;
static int by_task_id(const void *a, const void *b)
{
    uint32_t x = g_sort_tasks[*(const int *)a].task_id, y = g_sort_tasks[*(const int *)b].task_id;
    return x < y ? -1 : x > y;
}

/* The NPU tasks of the layer: d itself and every task covering a node d covers (its
   AscendQuant, cube op, AscendDequant...), in task order, into idx (indices into md);
   returns their count. */
static int layer_tasks(const cmp_set *s, const nb_dump *d, int *idx)
{
    int n = 0;
    for (int i = 0; i < s->nm; i++) {
        const nb_dump *t = &s->md[i];
        bool same = t == d;
        for (int a = 0; a < t->n_covers && !same; a++)
            for (int b = 0; b < d->n_covers && !same; b++)
                same = !strcmp(t->covers[a], d->covers[b]);
        if (same)
            idx[n++] = i;
    }
    g_sort_tasks = s->md;
    qsort(idx, (size_t)n, sizeof *idx, by_task_id);
    return n;
}

static void index_str(int64_t flat, const nb_dump_tensor *t, char *buf, size_t len)
{
    int64_t dims[6], idx[6];
    for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d];
    nb_cmp_unravel(flat, t->rank, dims, idx);
    nb_shape_str(t->rank, idx, ',', buf, len);
}

static json_t *index_json(int64_t flat, const nb_dump_tensor *t)
{
    int64_t dims[6], idx[6];
    for (int d = 0; d < t->rank; d++)
        dims[d] = t->dims[d];
    nb_cmp_unravel(flat, t->rank, dims, idx);
    json_t *a = json_array();
    for (int d = 0; d < t->rank; d++)
        json_array_append_new(a, json_integer(idx[d]));
    return a;
}

#define WORST_K 10
#define FIRST_N 16

static int layer_detail(int argc, char **argv)
{
    const char *mdir = NULL, *gdir = NULL, *name = NULL, *thr = NULL, *bins_s = NULL;
    bool json = false;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "-m", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-m needs the NPU dump folder");
            mdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "-g", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "-g needs the golden dump folder");
            gdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--layer", &v))) {
            if (r < 0 || !*v)
                return cli_usage_error("compare", "--layer needs a layer name");
            name = v;
        } else if ((r = cli_opt(argc, argv, &i, "--bins", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--bins needs a number");
            bins_s = v;
        } else if ((r = cli_opt(argc, argv, &i, "--threshold", &v))) {
            if (r < 0)
                return cli_usage_error("compare", "--threshold needs cos=...,rmse=...");
            thr = v;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            return cli_usage_error("compare", "layer: unknown argument '%s'", argv[i]);
        }
    }
    if (!mdir || !gdir || !name)
        return cli_usage_error("compare", "layer needs -m NPU_DIR -g GOLDEN_DIR --layer NAME");
    int bins = 20;
    if (bins_s) {
        char *end;
        errno = 0;
        long b = strtol(bins_s, &end, 10);
        if (errno || end == bins_s || *end || b < 1 || b > NB_CMP_MAX_BINS)
            return cli_usage_error("compare", "--bins is a whole number from 1 to %d, not '%s'",
                                   NB_CMP_MAX_BINS, bins_s);
        bins = (int)b;
    }
    nb_cmp_thresholds th;
    nb_cmp_thresholds_default(&th);
    nb_status st = {0};
    if (thr && nb_cmp_thresholds_parse(thr, &th, &st))
        return cli_error(&st);
    cmp_set cs;
    int rc = compare_dirs(mdir, gdir, &th, name, &cs);
    if (rc)
        return rc;
    double *edges = NULL;
    int64_t *counts = NULL;
    int *tasks = NULL;
    int sel = pick_layer(&cs, name, mdir);
    if (sel < 0) {
        rc = 2;
        goto out;
    }
    const row *r = &cs.rows[sel];
    const nb_dump_tensor *x = r->x, *y = r->y;
    if (!x->v) { /* the values of a row that may be the layer were kept */
        rc = cli_fail(1, "compare layer: the values of '%s' were not kept", name);
        goto out;
    }
    int64_t n = x->numel, worst[WORST_K], left_out = 0;
    int nw = nb_cmp_worst_k(x->v, y->v, n, WORST_K, worst);
    edges = malloc(sizeof *edges * ((size_t)bins + 1));
    counts = malloc(sizeof *counts * (size_t)bins);
    tasks = malloc(sizeof *tasks * ((size_t)cs.nm + 1));
    if (!edges || !counts || !tasks) {
        rc = cli_fail(1, "out of memory");
        goto out;
    }
    if (nb_cmp_error_histogram(x->v, y->v, n, bins, edges, counts, &left_out, &st)) {
        rc = cli_error(&st);
        goto out;
    }
    int nt = layer_tasks(&cs, r->npu, tasks);
    char why[64];
    nb_cmp_fails(&r->m, &th, why, sizeof why);
    if (json) {
        json_t *o = json_object(), *jt = json_array(), *jw = json_array(), *jf = json_array();
        json_t *jh = json_object(), *je = json_array(), *jc = json_array(), *jm = json_object();
        json_object_set_new(o, "layer", nb_json_string(r->npu->op_name));
        json_object_set_new(o, "op_type", nb_json_string(r->npu->op_type));
        json_object_set_new(o, "task", json_integer(r->npu->task_id));
        json_object_set_new(o, "tensor_index", json_integer(x->index));
        json_object_set_new(o, "golden_node", nb_json_string(r->gold->op_name));
        json_object_set_new(o, "golden_value", nb_json_string(y->original_name));
        json_object_set_new(o, "shape", shape_json(x));
        json_object_set_new(o, "numel", json_integer(n));
        json_object_set_new(o, "npu_dtype", nb_json_string(x->dtype));
        json_object_set_new(o, "golden_dtype", nb_json_string(y->dtype));
        json_object_set_new(o, "covers", covers_json(r->npu));
        for (int i = 0; i < nt; i++) {
            const nb_dump *t = &cs.md[tasks[i]];
            json_t *j = json_object();
            json_object_set_new(j, "task", json_integer(t->task_id));
            json_object_set_new(j, "name", nb_json_string(t->op_name));
            json_object_set_new(j, "op_type", nb_json_string(t->op_type));
            json_array_append_new(jt, j);
        }
        json_object_set_new(o, "tasks", jt);
        json_object_set_new(o, "npu_dump", nb_json_string(r->npu->path));
        json_object_set_new(o, "golden_dump", nb_json_string(r->gold->path));
        metrics_json(jm, r);
        json_object_set_new(o, "metrics", jm);
        json_object_set_new(o, "thresholds", thresholds_json(&th));
        json_object_set_new(o, "over", over_json(r, &th));
        json_object_set_new(o, "reason", nb_json_string(r->reason));
        for (int i = 0; i < nw; i++) {
            json_t *j = json_object();
            json_object_set_new(j, "flat", json_integer(worst[i]));
            json_object_set_new(j, "index", index_json(worst[i], x));
            json_object_set_new(j, "golden", cli_jnum(y->v[worst[i]]));
            json_object_set_new(j, "npu", cli_jnum(x->v[worst[i]]));
            json_object_set_new(j, "error", cli_jnum(x->v[worst[i]] - y->v[worst[i]]));
            json_array_append_new(jw, j);
        }
        json_object_set_new(o, "worst", jw);
        for (int64_t i = 0; i < n && i < FIRST_N; i++) {
            json_t *j = json_object();
            json_object_set_new(j, "flat", json_integer(i));
            json_object_set_new(j, "index", index_json(i, x));
            json_object_set_new(j, "golden", cli_jnum(y->v[i]));
            json_object_set_new(j, "npu", cli_jnum(x->v[i]));
            json_array_append_new(jf, j);
        }
        json_object_set_new(o, "first", jf);
        for (int b = 0; b <= bins; b++)
            json_array_append_new(je, json_real(edges[b]));
        for (int b = 0; b < bins; b++)
            json_array_append_new(jc, json_integer(counts[b]));
        json_object_set_new(jh, "of", json_string("npu - golden"));
        json_object_set_new(jh, "bins", json_integer(bins));
        json_object_set_new(jh, "edges", je);
        json_object_set_new(jh, "counts", jc);
        json_object_set_new(jh, "left_out", json_integer(left_out));
        json_object_set_new(o, "histogram", jh);
        rc = cli_json_out("compare layer", o);
        goto out;
    }
    char sh[128];
    shape_str(x, sh, sizeof sh);
    printf("layer:      %s (%s, task %u, output %d)\n", plain(r->npu->op_name),
           plain(r->npu->op_type), r->npu->task_id, x->index);
    printf("golden:     node %s, value %s\n", plain(r->gold->op_name), plain(y->original_name));
    printf("shape:      %s, %lld elements (NPU %s, golden %s)\n", sh, (long long)n, x->dtype,
           y->dtype);
    printf("covers:    ");
    for (int q = 0; q < r->npu->n_covers; q++)
        printf("%s %s", q ? "," : "", plain(r->npu->covers[q]));
    printf("%s\nNPU tasks: ", r->npu->n_covers ? "" : " (no ONNX node)");
    for (int i = 0; i < nt; i++)
        printf("%s %u %s (%s)", i ? "," : "", cs.md[tasks[i]].task_id,
               plain(cs.md[tasks[i]].op_name), plain(cs.md[tasks[i]].op_type));
    printf("\ndumps:      NPU %s\n            golden %s\n", plain(r->npu->path),
           plain(r->gold->path));
    const nb_cmp_metrics *m = &r->m;
    printf("metrics:    cosine %.6f, max abs error %.4g, max relative error %.4g, SQNR %.1f dB, "
           "RMSE %.4g, KL %.4g, relative Euclidean %.4g, mean relative error %.4g\n",
           m->cos, m->max_abs, m->max_rel, m->sqnr_db, m->rmse, m->kl, m->red, m->mean_rel);
    printf("over:       %s%s%s\n", why[0] ? why : "no threshold crossed",
           m->nan_x || m->inf_x ? (why[0] ? ", " : "; ") : "",
           m->nan_x || m->inf_x ? "NaN or infinity in the NPU output" : "");
    printf("\nthe %d worst elements by |npu - golden|:\n%4s %10s  %-16s %14s %14s %14s\n", nw,
           "rank", "flat", "index", "golden", "npu", "npu - golden");
    for (int i = 0; i < nw; i++) {
        char ix[128];
        index_str(worst[i], x, ix, sizeof ix);
        printf("%4d %10lld  %-16s %14.7g %14.7g %14.7g\n", i + 1, (long long)worst[i], ix,
               y->v[worst[i]], x->v[worst[i]], x->v[worst[i]] - y->v[worst[i]]);
    }
    printf("\nthe first %lld elements:\n%10s  %-16s %14s %14s\n", (long long)(n < FIRST_N ? n : FIRST_N),
           "flat", "index", "golden", "npu");
    for (int64_t i = 0; i < n && i < FIRST_N; i++) {
        char ix[128];
        index_str(i, x, ix, sizeof ix);
        printf("%10lld  %-16s %14.7g %14.7g\n", (long long)i, ix, y->v[i], x->v[i]);
    }
    int64_t most = 1;
    for (int b = 0; b < bins; b++)
        most = counts[b] > most ? counts[b] : most;
    printf("\nhistogram of npu - golden, %d bins (%lld values", bins, (long long)(n - left_out));
    if (left_out)
        printf(", %lld left out: NaN or infinity", (long long)left_out);
    printf("):\n");
    for (int b = 0; b < bins; b++) {
        char bar[41];
        int w = (int)((counts[b] * 40 + most - 1) / most);
        memset(bar, '#', (size_t)w);
        bar[w] = 0;
        printf("  [%12.5g, %12.5g%c %8lld  %s\n", edges[b], edges[b + 1],
               b == bins - 1 ? ']' : ')', (long long)counts[b], bar);
    }
out:
    free(edges), free(counts), free(tasks);
    cmp_set_free(&cs);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
    if (!strcmp(argv[1], "convert"))
        return convert(argc, argv);
    if (!strcmp(argv[1], "file_compare"))
        return file_compare(argc, argv);
    if (!strcmp(argv[1], "layer"))
        return layer_detail(argc, argv);
    return cli_usage_error("compare", "unknown subcommand '%s' (convert, file_compare, layer)",
                           argv[1]);
}
