/* nanobench bringup: a model from ONNX to a verdict in one command.
 *
 * estimate -> calibrate -> atc -> run (the simulated NPU, on K evaluation inputs) -> infer
 * (the float reference on the same inputs) -> compare (per layer, first evaluation input).
 * Every step is the CLI's own command, run as a child process of this binary through the
 * job runner (app/tui/job.h), with its --json output read back; each child is recorded with
 * --parent = the run of the step before it (the first: this bringup's own run, kind
 * 'bringup'), so `nanobench history show BRINGUP_RUN` lists the chain. The network-output
 * metrics are accucmp's (nb_cmp_metrics_compute) on the run's and infer's .npy files.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "nb/accucmp.h"
#include "nb/ir.h"
#include "tui/job.h"

enum { N_STEPS = 6, MAX_IN = 64, MAX_EVAL = 1000, MAX_ARGS = 160, WIDTH = 79, LABEL = 11 };
#define NBSP '\037' /* a space the summary does not break a line at */

static void help(void)
{
    printf("usage: nanobench bringup MODEL.onnx --data_dir \"dir_x;dir_y\" [--input_shape S]\n"
           "           [--data_types T] [--calibration_config CFG | --batch_num N] [--algo A]\n"
           "           [--eval_dir \"e_x;e_y\"] [--eval_count K] [--out DIR]\n"
           "           [--soc_version V] [--input_fp16_nodes \"x;y\"] [--output_type FP16]\n"
           "           [--out_nodes \"node:0\"] [--nb_input_scale \"x:2^-12\"]\n"
           "           [--threshold cos=0.99,...]\n"
           "           [--fail-under-cosine X] [--json]\n"
           "Brings a model up on the Nano in one command: estimate -> calibrate -> atc ->\n"
           "run on the simulated NPU (K evaluation inputs) -> infer, the float reference (the\n"
           "same inputs) -> compare every layer (the first input). Each step is the CLI's own\n"
           "command, recorded as a child of this bringup's run (nanobench history show RUN).\n"
           "Prints a one-screen summary: the five estimate items, the calibration algorithm\n"
           "and its 3 worst layers, the exeom size, NPU cycles and ms at 64/200 MHz, fp16\n"
           "saturation, the network output's cosine and SQNR against float (mean and worst\n"
           "over the K inputs), the verdict and the first layer over threshold with its\n"
           "likely cause, the run ids and the folder; --json prints it as one JSON object\n"
           "(DIR/summary.json holds it too). A progress line per step goes to stderr.\n"
           "Calibration flags are calibrate's; every file of --data_dir is used when neither\n"
           "--batch_num nor --calibration_config is given; --eval_dir goes to calibrate too.\n"
           "Evaluation inputs: the first K files of --eval_dir, else the last K of --data_dir\n"
           "(K = --eval_count, default 5). ATC's flags pass through (default: every float\n"
           "input fp16, FP16 outputs, Ascend035A), and atc's --nb_input_scale; atc's\n"
           "warnings are in the summary, with the --nb_input_scale it suggests when a\n"
           "calibrated range is beyond fp16, and calibrate's INT16 advice (a layer whose\n"
           "int8 input rounds its small values to 0; --calibration_config takes the\n"
           "override). --threshold is compare's. DIR defaults to\n"
           "./bringup_<model name>. An output of one value per input (a score) is also\n"
           "compared over the K inputs together, and that cosine is its worst (a cosine of\n"
           "one value is 1).\n"
           "Exit status: 0 when every stage ran, whatever the accuracy; 2 bad input (the\n"
           "stage's own error: \"bringup: STAGE failed: ...\"); 3 with --fail-under-cosine X\n"
           "when the worst network-output cosine is below X (or not defined); 130 on Ctrl-C\n"
           "(the running step is interrupted; calibrate, atc, run and compare remove their\n"
           "partial files).\n");
}

/* ---- a child's argument list ---- */
typedef struct bu_argv {
    char *v[MAX_ARGS + 1];
    int n;
    bool oom;
} bu_argv;

static void __attribute__((format(printf, 2, 3))) arg(bu_argv *a, const char *fmt, ...)
{
    if (a->n >= MAX_ARGS) {
        a->oom = true;
        return;
    }
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int r = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = r >= 0 ? malloc((size_t)r + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)r + 1, fmt, ap2);
    va_end(ap2);
    if (!s) {
        a->oom = true;
        return;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void args_free(bu_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

/* ---- the bringup's state ---- */
typedef struct bu {
    /* flags */
    const char *model, *data_dir, *shape, *types, *cfg, *batch, *algo, *eval_dir, *out, *soc,
        *fp16, *otype, *out_nodes, *in_scale, *threshold;
    int eval_count;
    double fail_cos;
    bool has_fail_cos, json;
    /* derived */
    char stem[256], outdir[3000], exeom[3400], deploy[3400], gold[3400];
    char fp16_all[4096];  /* every float input, ';'-separated: atc's default */
    const char *db;       /* the children's --db */
    int n_in;
    char *in_name[MAX_IN]; /* in --data_dir order */
    int n_eval;
    char **eval;           /* [k * n_in + i]: input i of evaluation input k */
    bool eval_from_dir;
    bool tty;
    int n_logs;
    /* results */
    json_t *est, *cal, *cmp, *runs; /* the children's JSON; runs: one per evaluation input */
    json_t *atc_warn;               /* atc's warning lines, without "nanobench: warning: " */
    char suggest[256];              /* the --nb_input_scale atc suggests, "" if none */
    int64_t id_est, id_cal, id_atc, id_cmp;
    int64_t id_run[MAX_EVAL], id_inf[MAX_EVAL];
    double step_ms[N_STEPS];
    double t0;
} bu;

static volatile sig_atomic_t g_sig;

static void on_signal(int sig) { g_sig = sig; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const step_name[N_STEPS] = {"estimate", "calibrate", "atc", "run", "infer",
                                               "compare"};

/* "[3/6] atc ..." on stderr; on a terminal the same line is redrawn with progress */
static void step_line(const bu *b, int step, const char *detail, const char *progress)
{
    if (b->tty)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "[%d/%d] %s%s%s ...%s%s", step + 1, N_STEPS, step_name[step],
            detail[0] ? " " : "", detail, progress[0] ? " " : "", progress);
    if (!b->tty)
        fputc('\n', stderr);
    fflush(stderr);
}

static void step_done(const bu *b, int step, const char *detail)
{
    if (!b->tty)
        return;
    char t[48];
    snprintf(t, sizeof t, "done in %.1f s", b->step_ms[step] / 1e3);
    step_line(b, step, detail, t);
    fputc('\n', stderr);
    fflush(stderr);
}

/* The exit status of an interruption, the run recorded as error. */
static int interrupted(const char *stage)
{
    int sig = g_sig ? g_sig : SIGINT;
    return cli_fail(128 + sig, "bringup: interrupted (%s) during %s",
                    sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP", stage);
}

/* Writes what a child printed to DIR/log/NAME.out and .err (for a look after the fact). */
static void save_log(const bu *b, const tui_job *j, const char *name)
{
    const char *ext[2] = {"out", "err"};
    const char *txt[2] = {j->out, j->err};
    size_t len[2] = {j->out_len, j->err_len};
    for (int k = 0; k < 2; k++) {
        char path[3400];
        snprintf(path, sizeof path, "%s/log/%s.%s", b->outdir, name, ext[k]);
        FILE *f = fopen(path, "w");
        if (!f)
            continue;
        if (len[k])
            fwrite(txt[k], 1, len[k], f);
        fclose(f);
    }
}

/* Runs one step's child to its end. Returns 0 with *out the finished job (exit status 0), or
 * the bringup's exit status after its one-line error (the job freed). */
static int child(bu *b, int step, const char *detail, const char *logname, int64_t parent,
                 bu_argv *a, tui_job **out)
{
    *out = NULL;
    if (a->oom) {
        args_free(a);
        return cli_fail(1, "out of memory");
    }
    char err[512] = "";
    tui_job *j = tui_job_start(b->db, parent, a->v, step_name[step], err, sizeof err);
    args_free(a);
    if (!j)
        return cli_fail(1, "bringup: %s: %s", step_name[step], err);
    int64_t shown = -1;
    while (!tui_job_poll(j)) {
        if (g_sig) {
            tui_job_cancel(j);
            save_log(b, j, logname);
            tui_job_free(j);
            if (b->tty)
                fputc('\n', stderr);
            return interrupted(step_name[step]);
        }
        struct pollfd fds[2];
        int n = 0;
        if (j->out_fd >= 0)
            fds[n++] = (struct pollfd){.fd = j->out_fd, .events = POLLIN};
        if (j->err_fd >= 0)
            fds[n++] = (struct pollfd){.fd = j->err_fd, .events = POLLIN};
        if (n)
            poll(fds, (nfds_t)n, 100);
        else
            nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
        if (b->tty && j->progress_total > 0 && j->progress_done != shown) {
            char p[96];
            snprintf(p, sizeof p, "%s %lld/%lld", j->progress_what, (long long)j->progress_done,
                     (long long)j->progress_total);
            step_line(b, step, detail, p);
            shown = j->progress_done;
        }
    }
    save_log(b, j, logname);
    if (g_sig) { /* the signal came as the child ended: stop all the same */
        tui_job_free(j);
        if (b->tty)
            fputc('\n', stderr);
        return interrupted(step_name[step]);
    }
    if (j->status != 0) {
        const char *m = tui_job_error(j);
        if (!strncmp(m, "nanobench: ", 11))
            m += 11;
        else if (!strncmp(m, "nanobench ", 10))
            m += 10;
        if (b->tty)
            fputc('\n', stderr);
        int rc = cli_fail(j->status == 2 ? 2 : 1, "bringup: %s failed: %s", step_name[step], m);
        tui_job_free(j);
        return rc;
    }
    *out = j;
    return 0;
}

/* The JSON object a finished child printed; NULL after the error line (exit 1). */
static json_t *job_json(const tui_job *j, const char *stage, int *rc)
{
    json_error_t je;
    json_t *o = j->out ? json_loads(j->out, 0, &je) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        *rc = cli_fail(1, "bringup: %s printed no JSON object on stdout", stage);
        return NULL;
    }
    return o;
}

/* atc's warnings (its stderr lines "nanobench: warning: ...") into b->atc_warn, and the
 * --nb_input_scale values they suggest into b->suggest, one per input ("x:2^-12;y:2^-3"; the
 * smallest for an input that several warnings name: it brings every range under 65504). */
static void atc_warnings(bu *b, const char *err)
{
    static const char pre[] = "nanobench: warning: ", opt[] = "--nb_input_scale=\"";
    char names[8][128];
    int pw[8], n = 0;
    b->atc_warn = json_array();
    for (const char *p = err ? err : ""; *p;) {
        size_t len = strcspn(p, "\n");
        if (len > sizeof pre - 1 && !strncmp(p, pre, sizeof pre - 1)) {
            char *w = strndup(p + sizeof pre - 1, len - (sizeof pre - 1));
            if (w) {
                json_array_append_new(b->atc_warn, nb_json_string(w));
                const char *o = strstr(w, opt);
                char name[128];
                int k, used = 0;
                /* NAME:2^K" (a name without ':' or '"': atc's own advice) */
                if (o && sscanf(o + sizeof opt - 1, "%127[^:\"]:2^%d\"%n", name, &k, &used) == 2 &&
                    used > 0) {
                    int q = 0;
                    while (q < n && strcmp(names[q], name))
                        q++;
                    if (q == n && n < 8) {
                        snprintf(names[n], sizeof names[n], "%s", name);
                        pw[n++] = k;
                    } else if (q < n && k < pw[q]) {
                        pw[q] = k;
                    }
                }
                free(w);
            }
        }
        p += len + (p[len] == '\n');
    }
    size_t at = 0;
    b->suggest[0] = 0;
    for (int q = 0; q < n && at < sizeof b->suggest; q++)
        at += (size_t)snprintf(b->suggest + at, sizeof b->suggest - at, "%s%s:2^%d",
                               q ? ";" : "", names[q], pw[q]);
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of dir, hidden ones left out, in ascending name order (calibrate's
 * rule). Returns the count, or -1 with errno. */
static int list_files(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **v = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4400];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            stat(path, &sb) || !S_ISREG(sb.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, sizeof *v * (size_t)cap);
            if (!nv)
                break;
            v = nv;
        }
        if (!(v[n] = strdup(path)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void files_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The ';'-separated folders of dirs into parts (each malloc'd); returns the count. */
static int split_dirs(const char *dirs, char **parts, int max)
{
    int n = 0;
    for (const char *p = dirs; n < max;) {
        size_t l = strcspn(p, ";");
        parts[n++] = strndup(p, l);
        if (!p[l])
            break;
        p += l + 1;
    }
    return n;
}

/* The evaluation inputs: file k of each folder of --eval_dir (the first K), else of
 * --data_dir (the last K). */
static int pick_eval(bu *b)
{
    const char *dirs = b->eval_dir ? b->eval_dir : b->data_dir;
    char *parts[MAX_IN];
    int nd = split_dirs(dirs, parts, MAX_IN);
    char **files[MAX_IN] = {0};
    int nf[MAX_IN] = {0}, least = -1, rc = 0;
    for (int i = 0; i < nd; i++) {
        nf[i] = parts[i] ? list_files(parts[i], &files[i]) : -1;
        if (nf[i] < 0 && !rc)
            rc = cli_fail(2, "bringup: %s %s: %s", b->eval_dir ? "--eval_dir" : "--data_dir",
                          parts[i] ? parts[i] : "?", strerror(errno));
        least = least < 0 || nf[i] < least ? nf[i] : least;
    }
    if (!rc && nd != b->n_in)
        rc = cli_fail(2, "bringup: %s gives %d folder%s for %d input%s",
                      b->eval_dir ? "--eval_dir" : "--data_dir", nd, nd == 1 ? "" : "s",
                      b->n_in, b->n_in == 1 ? "" : "s");
    if (!rc && least <= 0)
        rc = cli_fail(2, "bringup: %s: no files to evaluate on", dirs);
    if (!rc) {
        b->n_eval = b->eval_count < least ? b->eval_count : least;
        int first = b->eval_dir ? 0 : least - b->n_eval;
        b->eval = calloc((size_t)b->n_eval * (size_t)b->n_in, sizeof *b->eval);
        if (!b->eval)
            rc = cli_fail(1, "out of memory");
        for (int k = 0; !rc && k < b->n_eval; k++)
            for (int i = 0; i < b->n_in; i++)
                if (!(b->eval[k * b->n_in + i] = strdup(files[i][first + k])))
                    rc = cli_fail(1, "out of memory");
        b->eval_from_dir = b->eval_dir != NULL;
    }
    for (int i = 0; i < nd; i++) {
        files_free(files[i], nf[i] > 0 ? nf[i] : 0);
        free(parts[i]);
    }
    return rc;
}

/* The model's inputs in the --data_dir order (calibrate's: --input_shape's when it names
 * every input, else the model's), and every float input for atc's --input_fp16_nodes. */
static int model_inputs(bu *b)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = b->shape, .weights_in_place = true};
    if (nb_model_load(b->model, &lo, &m, &st))
        return cli_fail(nb_exit_code(st.code), "bringup: %s", st.msg);
    const nb_graph *g = m->graph;
    int rc = 0;
    if (g->n_inputs > MAX_IN) {
        rc = cli_fail(2, "bringup: %s has %d inputs; bringup takes up to %d", b->model,
                      g->n_inputs, MAX_IN);
        goto out;
    }
    int order[MAX_IN];
    for (int i = 0; i < g->n_inputs; i++)
        order[i] = g->inputs[i];
    if (b->shape) {
        nb_shape_override *ov = NULL;
        int nov = 0;
        if (!nb_parse_input_shape(b->shape, &ov, &nov, &st) && nov == g->n_inputs)
            for (int i = 0; i < nov; i++)
                order[i] = nb_graph_find(g, ov[i].name);
        nb_shape_overrides_free(ov, nov);
    }
    b->n_in = g->n_inputs;
    size_t len = 0;
    b->fp16_all[0] = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        if (order[i] < 0)
            order[i] = g->inputs[i];
        const nb_value *v = &g->values[order[i]];
        if (!(b->in_name[i] = strdup(v->name))) {
            rc = cli_fail(1, "out of memory");
            goto out;
        }
        if ((v->dtype == NB_FLOAT || v->dtype == NB_FLOAT16) && len + strlen(v->name) + 2 < sizeof b->fp16_all)
            len += (size_t)snprintf(b->fp16_all + len, sizeof b->fp16_all - len, "%s%s",
                                    len ? ";" : "", v->name);
    }
out:
    nb_model_free(m);
    return rc;
}

/* The model's graph outputs' names, for: are the NPU's outputs among them? */
static bool model_output(const char *model, const char *shape, const char *name)
{
    nb_status st = {0};
    nb_model *m = NULL;
    nb_load_opts lo = {.input_shape = shape, .weights_in_place = true};
    if (nb_model_load(model, &lo, &m, &st))
        return false;
    bool found = false;
    for (int i = 0; i < m->graph->n_outputs && !found; i++)
        found = !strcmp(m->graph->values[m->graph->outputs[i]].name, name);
    nb_model_free(m);
    return found;
}

/* The file infer wrote for tensor name (DIR/manifest.tsv, names escaped), into path. */
static bool manifest_file(const char *dir, const char *name, char *path, size_t len)
{
    char mp[3400];
    snprintf(mp, sizeof mp, "%s/manifest.tsv", dir);
    FILE *f = fopen(mp, "r");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    ssize_t n;
    while (!found && (n = getline(&line, &cap, f)) > 0) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = 0;
        char *file = tab + 1, *end = strchr(file, '\t');
        if (end)
            *end = 0;
        /* unescape \t \n \r \\ in place */
        char *w = line;
        for (char *r = line; *r; r++) {
            if (*r == '\\' && r[1]) {
                r++;
                *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r == 'r' ? '\r' : *r;
            } else {
                *w++ = *r;
            }
        }
        *w = 0;
        if (!strcmp(line, name)) {
            snprintf(path, len, "%s/%s", dir, file);
            found = true;
        }
    }
    free(line);
    fclose(f);
    return found;
}

/* Reads a .npy into doubles (malloc'd), its element count in *n. */
static int read_npy(const char *path, double **v, int64_t *n, char *shape, size_t slen)
{
    nb_status st = {0};
    nb_tensor *t = NULL;
    if (nb_npy_read(path, &t, &st))
        return cli_fail(1, "bringup: %s", st.msg);
    *n = t->numel;
    *v = malloc(sizeof(double) * ((size_t)t->numel + 1));
    if (!*v) {
        nb_tensor_free(t);
        return cli_fail(1, "out of memory");
    }
    for (int64_t i = 0; i < t->numel; i++)
        (*v)[i] = nb_tensor_get_f64(t, i);
    if (shape)
        nb_shape_str(t->rank, t->dims, 'x', shape, slen);
    nb_tensor_free(t);
    return 0;
}

/* ---- the text summary ---- */

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
        snprintf(buf, len, "-");
    else if (isinf(v))
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, len, "%.1f dB", v);
    return buf;
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

static void print_text(const bu *b, const json_t *s)
{
    char t1[2048], t2[64], t3[64], t4[64];
    const json_t *e = json_object_get(s, "estimate"), *c = json_object_get(s, "calibration"),
                 *x = json_object_get(s, "compile"), *n = json_object_get(s, "npu"),
                 *cm = json_object_get(s, "compare"), *r = json_object_get(s, "runs");
    const char *base = strrchr(b->model, '/');
    put("bringup", 1, "%s on %s: every stage ran in %.1f s", base ? base + 1 : b->model,
        b->soc ? b->soc : "Ascend035A", num(s, "wall_s"));
    put("estimate", 1, "TOTAL_WEIGHT_SIZE %.0f, TOTAL_MEM_SIZE %.0f (bytes)",
        num(e, "TOTAL_WEIGHT_SIZE"), num(e, "TOTAL_MEM_SIZE"));
    put("", 1, "TOTAL_EXEOM_SIZE %.0f", num(e, "TOTAL_EXEOM_SIZE"));
    counts_text(json_object_get(e, "TOTAL_NET_OP_TYPE"), t1, sizeof t1);
    put("", 1, "TOTAL_NET_OP_TYPE %s", t1);
    counts_text(json_object_get(e, "NOT_SUPPORT_OP_TYPE"), t1, sizeof t1);
    put("", 2, "NOT_SUPPORT_OP_TYPE %s", t1);
    put("calibrate", 1, "%s on %.0f batch%s; fake-quant output %s against float",
        str(c, "algorithm"), num(c, "batches"), num(c, "batches") == 1 ? "" : "es",
        db_str(num(c, "output_sqnr_db"), t2, sizeof t2));
    size_t at = 0;
    t1[0] = 0;
    const json_t *w = json_object_get(c, "worst_layers");
    for (size_t i = 0; i < json_array_size(w) && at < sizeof t1; i++) {
        const json_t *l = json_array_get(w, i);
        at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s\037%.1f\037dB", i ? ", " : "",
                               str(l, "layer"), num(l, "sqnr_db"));
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
                                   str(l, "layer"), 100 * num(l, "zeroed_fraction"));
        }
        const json_t *l0 = json_array_get(sg16, 0);
        if (json_array_size(sg16) == 1)
            put("", 2, "int8 rounds %.0f%% of %s's nonzero input to 0: INT16 suggested",
                100 * num(l0, "zeroed_fraction"), str(l0, "layer"));
        else
            put("", 2, "int8 rounds nonzero inputs to 0 in %s: INT16 suggested", t1);
    }
    const char *xb = strrchr(str(x, "exeom"), '/');
    const char *scale = str(x, "nb_input_scale");
    put("compile", 1, "%s: %.0f bytes%s%s%s", xb ? xb + 1 : str(x, "exeom"),
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
            put("", 2, "atc: %s's input calibrated to %.3g > 65504; it suggests "
                "--nb_input_scale=\"%s\"%s", layer, range, sg,
                json_array_size(aw) > 1 ? " (all warnings: summary.json)" : "");
        else
            put("", 2, "atc: %s%s", w0 ? w0 : "", json_array_size(aw) > 1 ? " (more: summary.json)"
                                                                          : "");
    }
    put("NPU", 1, "%.0f cycles = %.3f ms at 64 MHz, %.3f ms at 200 MHz", num(n, "cycles"),
        num(n, "ms_64mhz"), num(n, "ms_200mhz"));
    const json_t *st = json_object_get(json_object_get(n, "saturation"), "tasks");
    if (json_array_size(st)) {
        at = 0;
        for (size_t i = 0; i < json_array_size(st) && at < sizeof t1; i++) {
            const json_t *k = json_array_get(st, i);
            at += (size_t)snprintf(t1 + at, sizeof t1 - at, "%s%s (%s) %.0f values on %.0f/%d "
                                   "inputs", i ? "; " : "", str(k, "name"), str(k, "op_type"),
                                   num(k, "count"), num(k, "inputs"), b->n_eval);
        }
        put("saturation", 2, "fp16 at 65504: %s", t1);
    }
    const json_t *outs = json_object_get(s, "outputs");
    for (size_t i = 0; i < json_array_size(outs) && i < 3; i++) {
        const json_t *o = json_array_get(outs, i);
        if (num(o, "numel") == 1) { /* a score: its cosine is 1 on each input */
            /* two lines when needed: a cut would drop the error's exponent (2.276e-07 shown
               as "2...") */
            put(i ? "" : "output", 2, "%s [%s], %d inputs: SQNR mean %s worst %s, max |err| %.3g",
                str(o, "name"), str(o, "shape"), b->n_eval,
                db_str(num(o, "sqnr_db_mean"), t2, sizeof t2),
                db_str(num(o, "sqnr_db_worst"), t3, sizeof t3), num(o, "max_abs_error"));
            put("", 1, "cosine 1 on one value; over the %d inputs together: %s, %s", b->n_eval,
                cos_str(num(o, "pooled_cosine"), t2, sizeof t2),
                db_str(num(o, "pooled_sqnr_db"), t3, sizeof t3));
        } else {
            put(i ? "" : "output", 1, "%s [%s], %d input%s: cosine mean %s worst %s",
                str(o, "name"), str(o, "shape"), b->n_eval, b->n_eval == 1 ? "" : "s",
                cos_str(num(o, "cosine_mean"), t2, sizeof t2),
                cos_str(num(o, "cosine_worst"), t3, sizeof t3));
            put("", 1, "SQNR mean %s worst %s, max |npu - float| %.4g",
                db_str(num(o, "sqnr_db_mean"), t2, sizeof t2),
                db_str(num(o, "sqnr_db_worst"), t4, sizeof t4), num(o, "max_abs_error"));
        }
    }
    if (json_array_size(outs) > 3)
        put("", 1, "(%zu outputs in all: summary.json)", json_array_size(outs));
    const json_t *fb = json_object_get(cm, "first_over_threshold");
    if (json_is_object(fb)) {
        put("compare", 2, "%s", str(cm, "verdict_text"));
        put("", 2, "first over threshold: %s (%s), cos %s, %s; %.0f/%.0f over",
            str(fb, "layer"), str(fb, "op_type"), cos_str(num(fb, "cosine"), t2, sizeof t2),
            db_str(num(fb, "sqnr_db"), t3, sizeof t3), num(cm, "over_threshold"),
            num(cm, "compared"));
        put("", atc_line ? 2 : 3, "cause: %s", str(fb, "likely_cause"));
        const json_t *wd = json_object_get(cm, "largest_sqnr_drop");
        /* and the largest SQNR drop when it is another layer (its cause when compare
           names one) */
        if (json_is_object(wd) && strcmp(str(wd, "layer"), str(fb, "layer"))) {
            const char *why = str(wd, "likely_cause");
            put("", atc_line ? 1 : 2, "largest SQNR drop: %s (%s), %s -> %s%s%s", str(wd, "layer"),
                str(wd, "op_type"), db_str(num(wd, "previous_sqnr_db"), t2, sizeof t2),
                db_str(num(wd, "sqnr_db"), t3, sizeof t3),
                strncmp(why, "none clear", 10) ? ": " : "", strncmp(why, "none clear", 10) ? why : "");
        }
    } else {
        put("compare", 2, "%s: %.0f of %.0f tensors compared, none over threshold",
            str(cm, "verdict_text"), num(cm, "compared"), num(cm, "tensors"));
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
    put("out", 2, "%s/summary.json, compare/, log/", b->outdir);
}

/* ---- the summary's parts ---- */

/* The network outputs against float: accucmp's metrics on each evaluation input's .npy
 * files (run's and infer's), per output the mean and worst over the inputs, and the metrics
 * over the inputs together. *worst: the cosine --fail-under-cosine takes (NaN when one is
 * not defined). NULL after the error line (*rc). */
static json_t *output_metrics(const bu *b, const json_t *outs0, double *worst, int *rc)
{
    json_t *outs = json_array();
    double *x = NULL, *y = NULL;
    bool undefined = false;
    *worst = INFINITY;
    nb_cmp_over_inputs acc;
    for (size_t o = 0; o < json_array_size(outs0); o++) {
        const char *name = str(json_array_get(outs0, o), "name");
        char shape[128] = "";
        json_t *per = json_array(), *jo = json_object();
        json_object_set_new(jo, "name", nb_json_string(name));
        json_array_append_new(outs, jo); /* owned by outs from here */
        nb_cmp_over_inputs_init(&acc, b->n_eval); /* the metrics over K: the engine's */
        for (int k = 0; k < b->n_eval; k++) {
            const json_t *ro = json_array_get(
                json_object_get(json_array_get(b->runs, (size_t)k), "outputs"), o);
            char ref[3400], refdir[3400];
            int64_t nx = 0, ny = 0;
            snprintf(refdir, sizeof refdir, "%s/reference/%d", b->outdir, k);
            if (!manifest_file(refdir, name, ref, sizeof ref)) {
                *rc = cli_fail(1, "bringup: infer wrote no tensor '%s' into %s", name, refdir);
                goto fail;
            }
            if ((*rc = read_npy(str(ro, "file"), &x, &nx, shape, sizeof shape)) ||
                (*rc = read_npy(ref, &y, &ny, NULL, 0)))
                goto fail;
            if (nx != ny) {
                *rc = cli_fail(1, "bringup: output '%s': %lld values from the NPU, %lld from the "
                               "reference", name, (long long)nx, (long long)ny);
                goto fail;
            }
            nb_cmp_metrics m;
            nb_status st = {0};
            if (nb_cmp_over_inputs_add(&acc, x, y, nx, &m, &st)) {
                *rc = cli_error(&st);
                goto fail;
            }
            free(x);
            free(y);
            x = y = NULL;
            json_t *pi = json_object(), *files = json_array();
            for (int i = 0; i < b->n_in; i++)
                json_array_append_new(files, nb_json_string(b->eval[k * b->n_in + i]));
            json_object_set_new(pi, "inputs", files);
            json_object_set_new(pi, "npu", nb_json_string(str(ro, "file")));
            json_object_set_new(pi, "reference", nb_json_string(ref));
            json_object_set_new(pi, "cosine", cli_jnum(m.cos));
            json_object_set_new(pi, "sqnr_db", cli_jnum(m.sqnr_db));
            json_object_set_new(pi, "max_abs_error", cli_jnum(m.max_abs));
            if (m.note[0])
                json_object_set_new(pi, "note", nb_json_string(m.note));
            json_array_append_new(per, pi);
        }
        nb_cmp_over_inputs_finish(&acc);
        nb_cmp_over_inputs_free(&acc);
        if (isnan(acc.gate))
            undefined = true;
        else if (acc.gate < *worst)
            *worst = acc.gate;
        json_object_set_new(jo, "shape", json_string(shape));
        json_object_set_new(jo, "numel", json_integer(acc.numel));
        json_object_set_new(jo, "cosine_mean", cli_jnum(acc.cos_mean));
        json_object_set_new(jo, "cosine_worst", cli_jnum(acc.cos_worst));
        json_object_set_new(jo, "sqnr_db_mean", cli_jnum(acc.sqnr_mean));
        json_object_set_new(jo, "sqnr_db_worst", cli_jnum(acc.sqnr_worst));
        json_object_set_new(jo, "max_abs_error", cli_jnum(acc.max_abs));
        json_object_set_new(jo, "pooled_cosine", cli_jnum(acc.pooled_cos));
        json_object_set_new(jo, "pooled_sqnr_db", cli_jnum(acc.pooled_sqnr));
        json_object_set_new(jo, "worst_cosine", cli_jnum(acc.gate));
        json_object_set_new(jo, "per_input", per);
        continue;
    fail:
        json_decref(per);
        free(x);
        free(y);
        nb_cmp_over_inputs_free(&acc);
        json_decref(outs);
        return NULL;
    }
    if (undefined || isinf(*worst))
        *worst = NAN;
    return outs;
}

/* fp16 saturation over the K runs: per task, its count and on how many inputs */
static json_t *saturation_json(const bu *b, double *total)
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
                if (!strcmp(str(json_array_get(tasks, q), "name"), str(t, "name")))
                    hit = json_array_get(tasks, q);
            if (!hit) {
                hit = json_object();
                json_object_set_new(hit, "name", nb_json_string(str(t, "name")));
                json_object_set_new(hit, "op_type", nb_json_string(str(t, "op_type")));
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
static json_t *calibration_json(const bu *b)
{
    json_t *jc = json_object();
    const json_t *layers = json_object_get(b->cal, "layers");
    char algos[256] = "";
    double batches = NAN;
    int order[3] = {-1, -1, -1};
    for (size_t i = 0; i < json_array_size(layers); i++) {
        const json_t *l = json_array_get(layers, i);
        const char *al = str(l, "algorithm");
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
            batches = num(l, "batches");
        double s = num(l, "output_sqnr_db");
        if (isnan(s))
            continue;
        for (int q = 0; q < 3; q++)
            if (order[q] < 0 ||
                s < num(json_array_get(layers, (size_t)order[q]), "output_sqnr_db")) {
                for (int z = 2; z > q; z--)
                    order[z] = order[z - 1];
                order[q] = (int)i;
                break;
            }
    }
    json_object_set_new(jc, "algorithm", json_string(algos[0] ? algos : "none (no layer)"));
    json_object_set_new(jc, "requested", b->algo ? nb_json_string(b->algo) : json_null());
    json_object_set_new(jc, "batches", cli_jnum(batches));
    json_object_set_new(jc, "layers", json_integer((json_int_t)json_array_size(layers)));
    json_t *jw = json_array();
    for (int q = 0; q < 3 && order[q] >= 0; q++) {
        const json_t *l = json_array_get(layers, (size_t)order[q]);
        json_t *x = json_object();
        json_object_set_new(x, "layer", nb_json_string(str(l, "layer")));
        json_object_set_new(x, "op_type", nb_json_string(str(l, "op_type")));
        json_object_set_new(x, "sqnr_db", cli_jnum(num(l, "output_sqnr_db")));
        json_object_set_new(x, "cosine", cli_jnum(num(l, "output_cosine")));
        json_array_append_new(jw, x);
    }
    json_object_set_new(jc, "worst_layers", jw);
    /* calibrate's advice: layers whose int8 input loses its small values, with the config
       line that calibrates them at INT16 (the text summary names them) */
    const json_t *sg = json_object_get(b->cal, "suggested_int16");
    json_object_set_new(jc, "suggested_int16", json_is_array(sg) ? json_deep_copy(sg)
                                                                 : json_array());
    json_object_set_new(jc, "output_sqnr_db", cli_jnum(num(b->cal, "output_sqnr_db")));
    json_object_set_new(jc, "output_cosine", cli_jnum(num(b->cal, "output_cosine")));
    json_object_set_new(jc, "eval_set", nb_json_string(str(b->cal, "eval_set")));
    json_object_set_new(jc, "deploy_model", nb_json_string(b->deploy));
    json_object_set_new(jc, "record", nb_json_string(str(b->cal, "record")));
    return jc;
}

/* the value of key in o (a new reference), null when missing */
static json_t *copy(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? json_incref(v) : json_null();
}

/* The whole summary (what --json prints and DIR/summary.json holds); takes outs and sat. */
static json_t *summary_json(const bu *b, json_t *outs, double worst, json_t *sat,
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
    static const char *const npu[] = {"cycles", "ms_64mhz", "ms_200mhz", "macs"};
    for (size_t i = 0; i < sizeof npu / sizeof npu[0]; i++)
        json_object_set_new(jn, npu[i], copy(run0, npu[i]));
    json_object_set_new(jn, "saturation", sat);
    json_object_set_new(jn, "dump", nb_json_string(dumped));
    json_object_set_new(s, "npu", jn);
    json_t *jev = json_object(), *jin = json_array();
    json_object_set_new(jev, "count", json_integer(b->n_eval));
    json_object_set_new(jev, "source", json_string(b->eval_from_dir ? "eval_dir" : "data_dir"));
    for (int i = 0; i < b->n_in; i++)
        json_array_append_new(jin, nb_json_string(b->in_name[i]));
    json_object_set_new(jev, "model_inputs", jin);
    json_object_set_new(s, "evaluation", jev);
    json_object_set_new(s, "outputs", outs);
    json_object_set_new(s, "worst_cosine", cli_jnum(worst));
    json_t *jcm = json_object();
    static const char *const ck[] = {"verdict", "verdict_text", "tensors", "compared",
                                     "over_threshold", "thresholds", "first_over_threshold",
                                     "largest_sqnr_drop", "csv"};
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++)
        json_object_set_new(jcm, ck[i], copy(b->cmp, ck[i]));
    json_object_set_new(jcm, "golden_dump", nb_json_string(b->gold));
    json_object_set_new(s, "compare", jcm);
    json_t *jr = json_object();
    json_object_set_new(jr, "bringup", jid(g_rec.run_id));
    json_object_set_new(jr, "estimate", jid(b->id_est));
    json_object_set_new(jr, "calibrate", jid(b->id_cal));
    json_object_set_new(jr, "compile", jid(b->id_atc));
    json_object_set_new(jr, "run", jids(b->id_run, b->n_eval));
    json_object_set_new(jr, "infer", jids(b->id_inf, b->n_eval));
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

int cmd_bringup(int argc, char **argv)
{
    bu B = {.eval_count = 5}, *b = &B;
    struct {
        const char *flag;
        const char **dst;
    } opts[] = {{"--data_dir", &b->data_dir},
                {"--input_shape", &b->shape},
                {"--data_types", &b->types},
                {"--calibration_config", &b->cfg},
                {"--batch_num", &b->batch},
                {"--algo", &b->algo},
                {"--eval_dir", &b->eval_dir},
                {"--out", &b->out},
                {"--soc_version", &b->soc},
                {"--input_fp16_nodes", &b->fp16},
                {"--output_type", &b->otype},
                {"--out_nodes", &b->out_nodes},
                {"--nb_input_scale", &b->in_scale},
                {"--threshold", &b->threshold}};
    const char *eval_count = NULL, *fail_cos = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        bool taken = false;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !taken; k++) {
            const char *v;
            int r = cli_opt(argc, argv, &i, opts[k].flag, &v);
            if (r < 0)
                return cli_usage_error("bringup", "%s needs a value", opts[k].flag);
            if (r > 0) {
                if (*opts[k].dst)
                    return cli_usage_error("bringup", "%s is given twice", opts[k].flag);
                *opts[k].dst = v;
                taken = true;
            }
        }
        if (taken)
            continue;
        const char *v;
        int r;
        if ((r = cli_opt(argc, argv, &i, "--eval_count", &v))) {
            if (r < 0)
                return cli_usage_error("bringup", "--eval_count needs a number");
            eval_count = v;
        } else if ((r = cli_opt(argc, argv, &i, "--fail-under-cosine", &v))) {
            if (r < 0)
                return cli_usage_error("bringup", "--fail-under-cosine needs a number");
            fail_cos = v;
        } else if (!strcmp(argv[i], "--json")) {
            b->json = true;
        } else if ((r = cli_model_arg("bringup", argv[i], &b->model))) {
            return r;
        }
    }
    if (!b->model)
        return cli_usage_error("bringup", "no model given");
    if (!b->data_dir || !*b->data_dir)
        return cli_usage_error("bringup", "--data_dir is required (the calibration data, one "
                               "folder per input)");
    if (b->cfg && b->batch)
        return cli_usage_error("bringup", "--calibration_config and --batch_num are exclusive "
                               "(the config holds batch_num)");
    if (eval_count) {
        char *end;
        long k = strtol(eval_count, &end, 10);
        if (*end || end == eval_count || k < 1 || k > MAX_EVAL)
            return cli_usage_error("bringup", "--eval_count is a whole number from 1 to %d, "
                                   "not '%s'", MAX_EVAL, eval_count);
        b->eval_count = (int)k;
    }
    if (fail_cos) {
        char *end;
        b->fail_cos = strtod(fail_cos, &end);
        if (*end || end == fail_cos || !(b->fail_cos >= -1 && b->fail_cos <= 1))
            return cli_usage_error("bringup", "--fail-under-cosine is a cosine from -1 to 1, "
                                   "not '%s'", fail_cos);
        b->has_fail_cos = true;
    }
    if (b->threshold) { /* compare's own check, before anything runs */
        nb_cmp_thresholds th;
        nb_status st = {0};
        nb_cmp_thresholds_default(&th);
        if (nb_cmp_thresholds_parse(b->threshold, &th, &st))
            return cli_usage_error("bringup", "--threshold: %s", st.msg);
    }
    /* names: the model's file name, made safe for ATC's --output and --model rules */
    const char *base = strrchr(b->model, '/');
    base = base ? base + 1 : b->model;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base);
    size_t sl = strlen(stem);
    if (sl > 5 && !strcmp(stem + sl - 5, ".onnx"))
        stem[sl - 5] = 0;
    cli_safe_name(stem, b->stem, sizeof b->stem);
    if (b->out) {
        if (!*b->out || strlen(b->out) > 2000)
            return cli_usage_error("bringup", "--out needs a folder (up to 2000 characters)");
        snprintf(b->outdir, sizeof b->outdir, "%s", b->out);
        size_t ol = strlen(b->outdir);
        while (ol > 1 && b->outdir[ol - 1] == '/')
            b->outdir[--ol] = 0;
    } else {
        snprintf(b->outdir, sizeof b->outdir, "bringup_%s", b->stem);
    }

    int rc = rec_start_model("bringup", b->model, b->shape, argc, argv);
    if (rc)
        return rc;
    const char *pv[][2] = {{"data_dir", b->data_dir},  {"data_types", b->types},
                           {"calibration_config", b->cfg}, {"batch_num", b->batch},
                           {"algo", b->algo},          {"eval_dir", b->eval_dir},
                           {"soc_version", b->soc},    {"input_fp16_nodes", b->fp16},
                           {"output_type", b->otype},  {"out_nodes", b->out_nodes},
                           {"nb_input_scale", b->in_scale}, {"threshold", b->threshold}};
    for (size_t k = 0; k < sizeof pv / sizeof pv[0]; k++)
        if (pv[k][1])
            rec_param(pv[k][0], "%s", pv[k][1]);
    rec_param("out", "%s", b->outdir);
    rec_param("eval_count", "%d", b->eval_count);
    if (b->has_fail_cos)
        rec_param("fail_under_cosine", "%g", b->fail_cos);
    b->db = g_rec.db ? nb_db_path(g_rec.db) : g_rec.db_path;
    b->tty = isatty(STDERR_FILENO);
    b->t0 = now_s();
    /* Ctrl-C: to this process only (each child has its own process group): it interrupts
       the running child, whose cleanup removes its partial files */
    struct sigaction sa, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);

    tui_job *j = NULL;
    bu_argv a = {0};
    json_t *summary = NULL;
    char dir[3400];
    snprintf(dir, sizeof dir, "%s/log", b->outdir);
    if (nb_mkdir_p(dir)) {
        rc = cli_fail(2, "bringup: %s: cannot make the folder: %s", b->outdir, strerror(errno));
        goto out;
    }
#define GLOBAL_FLAGS()                                                                         \
    do {                                                                                       \
        if (g_rec.no_record)                                                                   \
            arg(&a, "--no-record");                                                            \
        if (g_rec.require_record)                                                              \
            arg(&a, "--require-record");                                                       \
    } while (0)
#define STEP_TIMER(s, call)                                                                    \
    do {                                                                                       \
        double t_ = now_s();                                                                   \
        rc = (call);                                                                           \
        b->step_ms[s] += (now_s() - t_) * 1e3;                                                 \
    } while (0)

    /* 1. estimate */
    step_line(b, 0, "", "");
    GLOBAL_FLAGS();
    arg(&a, "estimate");
    arg(&a, "-m");
    arg(&a, "%s", b->model);
    arg(&a, "-p");
    arg(&a, "--json");
    if (b->shape)
        arg(&a, "--input_shape=%s", b->shape);
    if (b->soc)
        arg(&a, "--soc_version=%s", b->soc);
    if (b->fp16)
        arg(&a, "--input_fp16_nodes=%s", b->fp16);
    if (b->otype)
        arg(&a, "--output_type=%s", b->otype);
    STEP_TIMER(0, child(b, 0, "", "1-estimate", g_rec.run_id, &a, &j));
    if (rc)
        goto out;
    b->id_est = j->run_id;
    b->est = job_json(j, "estimate", &rc);
    tui_job_free(j);
    j = NULL;
    if (!b->est)
        goto out;
    step_done(b, 0, "");
    if ((rc = model_inputs(b)))
        goto out;
    if (g_sig) {
        rc = interrupted("estimate");
        goto out;
    }

    /* 2. calibrate */
    char detail[128] = "";
    if (b->batch)
        snprintf(detail, sizeof detail, "(%s batch%s)", b->batch, strcmp(b->batch, "1") ? "es" : "");
    else if (!b->cfg)
        snprintf(detail, sizeof detail, "(every batch)");
    step_line(b, 1, detail, "");
    char save[3400];
    snprintf(save, sizeof save, "%s/quant/%s", b->outdir, b->stem);
    GLOBAL_FLAGS();
    arg(&a, "calibrate");
    arg(&a, "--model");
    arg(&a, "%s", b->model);
    arg(&a, "--save_path");
    arg(&a, "%s", save);
    arg(&a, "--data_dir");
    arg(&a, "%s", b->data_dir);
    if (b->shape)
        arg(&a, "--input_shape=%s", b->shape);
    if (b->types)
        arg(&a, "--data_types=%s", b->types);
    if (b->cfg)
        arg(&a, "--calibration_config=%s", b->cfg);
    if (b->batch)
        arg(&a, "--batch_num=%s", b->batch);
    else if (!b->cfg)
        arg(&a, "--batch_num=all");
    if (b->algo)
        arg(&a, "--algo=%s", b->algo);
    if (b->eval_dir)
        arg(&a, "--eval_dir=%s", b->eval_dir);
    arg(&a, "--json");
    arg(&a, "--progress");
    STEP_TIMER(1, child(b, 1, detail, "2-calibrate", b->id_est > 0 ? b->id_est : g_rec.run_id,
                        &a, &j));
    if (rc)
        goto out;
    b->id_cal = j->run_id;
    b->cal = job_json(j, "calibrate", &rc);
    tui_job_free(j);
    j = NULL;
    if (!b->cal)
        goto out;
    step_done(b, 1, detail);
    if ((rc = pick_eval(b)))
        goto out;

    /* 3. atc */
    step_line(b, 2, "", "");
    snprintf(b->deploy, sizeof b->deploy, "%s_deploy_model.onnx", save);
    char output[3400];
    snprintf(output, sizeof output, "%s/%s", b->outdir, b->stem);
    snprintf(b->exeom, sizeof b->exeom, "%s.exeom", output);
    const char *fp16 = b->fp16 ? b->fp16 : b->fp16_all;
    GLOBAL_FLAGS();
    arg(&a, "atc");
    arg(&a, "--mode=30");
    arg(&a, "--framework=5");
    arg(&a, "--soc_version=%s", b->soc ? b->soc : "Ascend035A");
    arg(&a, "--model=%s", b->deploy);
    arg(&a, "--output=%s", output);
    if (*fp16)
        arg(&a, "--input_fp16_nodes=%s", fp16);
    arg(&a, "--output_type=%s", b->otype ? b->otype : "FP16");
    if (b->shape)
        arg(&a, "--input_shape=%s", b->shape);
    if (b->out_nodes)
        arg(&a, "--out_nodes=%s", b->out_nodes);
    if (b->in_scale)
        arg(&a, "--nb_input_scale=%s", b->in_scale);
    int64_t parent = b->id_cal > 0 ? b->id_cal : b->id_est > 0 ? b->id_est : g_rec.run_id;
    STEP_TIMER(2, child(b, 2, "", "3-atc", parent, &a, &j));
    if (rc)
        goto out;
    b->id_atc = j->run_id;
    atc_warnings(b, j->err);
    tui_job_free(j);
    j = NULL;
    struct stat sb;
    if (stat(b->exeom, &sb)) {
        rc = cli_fail(1, "bringup: atc wrote no %s", b->exeom);
        goto out;
    }
    step_done(b, 2, "");
    if (b->id_atc > 0)
        parent = b->id_atc;

    /* 4. run: every evaluation input on the simulator, the first with every task dumped */
    char acl[3400], npu_dump[3400];
    snprintf(acl, sizeof acl, "%s/acl.json", b->outdir);
    snprintf(npu_dump, sizeof npu_dump, "%s/npu_dump", b->outdir);
    {
        json_t *entry = json_object(), *list = json_array(), *d = json_object(),
               *root = json_object();
        json_object_set_new(entry, "model_name", nb_json_string(b->stem));
        json_array_append_new(list, entry);
        json_object_set_new(d, "dump_list", list);
        json_object_set_new(d, "dump_path", nb_json_string(npu_dump));
        json_object_set_new(d, "dump_mode", json_string("output"));
        json_object_set_new(d, "dump_op_switch", json_string("off"));
        json_object_set_new(d, "dump_data", json_string("tensor"));
        json_object_set_new(root, "dump", d);
        int w = json_dump_file(root, acl, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (w) {
            rc = cli_fail(2, "bringup: %s: cannot write the dump config: %s", acl,
                          strerror(errno));
            goto out;
        }
    }
    snprintf(detail, sizeof detail, "on the simulator (%d input%s)", b->n_eval,
             b->n_eval == 1 ? "" : "s");
    step_line(b, 3, detail, "");
    b->runs = json_array();
    for (int k = 0; k < b->n_eval; k++) {
        GLOBAL_FLAGS();
        arg(&a, "run");
        arg(&a, "%s", b->exeom);
        for (int i = 0; i < b->n_in; i++) {
            arg(&a, "--input");
            arg(&a, "%s=%s", b->in_name[i], b->eval[k * b->n_in + i]);
        }
        arg(&a, "--output-dir");
        arg(&a, "%s/run/%d", b->outdir, k);
        if (k == 0) {
            arg(&a, "--dump");
            arg(&a, "%s", acl);
        }
        arg(&a, "--json");
        char ln[32];
        snprintf(ln, sizeof ln, "4-run-%d", k);
        STEP_TIMER(3, child(b, 3, detail, ln, parent, &a, &j));
        if (rc)
            goto out;
        b->id_run[k] = j->run_id;
        json_t *o = job_json(j, "run", &rc);
        tui_job_free(j);
        j = NULL;
        if (!o)
            goto out;
        json_array_append_new(b->runs, o);
        if (b->tty && k + 1 < b->n_eval) {
            char p[32];
            snprintf(p, sizeof p, "%d/%d", k + 1, b->n_eval);
            step_line(b, 3, detail, p);
        }
    }
    step_done(b, 3, detail);
    const json_t *run0 = json_array_get(b->runs, 0);
    const char *dumped = str(json_object_get(run0, "dump"), "folder");
    if (!*dumped) {
        rc = cli_fail(1, "bringup: run dumped no files into %s", npu_dump);
        goto out;
    }

    /* 5. infer: the float reference on the same inputs; golden dumps of the first. An NPU
       output that is not a model output (--out_nodes) is an intermediate: --dump-all */
    bool dump_all = false;
    const json_t *outs0 = json_object_get(run0, "outputs");
    for (size_t i = 0; i < json_array_size(outs0) && !dump_all; i++)
        dump_all = !model_output(b->model, b->shape, str(json_array_get(outs0, i), "name"));
    {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", localtime_r(&now, &tmv));
        snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s", b->outdir, stamp);
        for (int k = 2; access(b->gold, F_OK) == 0 && k < 1000; k++)
            snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s_%d", b->outdir, stamp, k);
    }
    snprintf(detail, sizeof detail, "float reference (%d input%s)", b->n_eval,
             b->n_eval == 1 ? "" : "s");
    step_line(b, 4, detail, "");
    for (int k = 0; k < b->n_eval; k++) {
        GLOBAL_FLAGS();
        arg(&a, "infer");
        arg(&a, "%s", b->model);
        for (int i = 0; i < b->n_in; i++) {
            arg(&a, "--input");
            arg(&a, "%s=%s", b->in_name[i], b->eval[k * b->n_in + i]);
        }
        if (b->shape)
            arg(&a, "--input_shape=%s", b->shape);
        arg(&a, "--output-dir");
        arg(&a, "%s/reference/%d", b->outdir, k);
        if (dump_all)
            arg(&a, "--dump-all");
        if (k == 0) {
            arg(&a, "--dump");
            arg(&a, "%s", b->gold);
        }
        char ln[32];
        snprintf(ln, sizeof ln, "5-infer-%d", k);
        STEP_TIMER(4, child(b, 4, detail, ln, b->id_run[k] > 0 ? b->id_run[k] : parent, &a, &j));
        if (rc)
            goto out;
        b->id_inf[k] = j->run_id;
        tui_job_free(j);
        j = NULL;
        if (b->tty && k + 1 < b->n_eval) {
            char p[32];
            snprintf(p, sizeof p, "%d/%d", k + 1, b->n_eval);
            step_line(b, 4, detail, p);
        }
    }
    step_done(b, 4, detail);

    /* 6. compare every layer of the first evaluation input */
    step_line(b, 5, "", "");
    char cmpdir[3400];
    snprintf(cmpdir, sizeof cmpdir, "%s/compare", b->outdir);
    GLOBAL_FLAGS();
    arg(&a, "compare");
    arg(&a, "file_compare");
    arg(&a, "-m");
    arg(&a, "%s", dumped);
    arg(&a, "-g");
    arg(&a, "%s", b->gold);
    arg(&a, "-out");
    arg(&a, "%s", cmpdir);
    if (b->threshold)
        arg(&a, "--threshold=%s", b->threshold);
    arg(&a, "--json");
    STEP_TIMER(5, child(b, 5, "", "6-compare", b->id_inf[0] > 0 ? b->id_inf[0] : parent, &a, &j));
    if (rc)
        goto out;
    b->id_cmp = j->run_id;
    b->cmp = job_json(j, "compare", &rc);
    tui_job_free(j);
    j = NULL;
    if (!b->cmp)
        goto out;
    step_done(b, 5, "");

    double worst_cos = NAN, sat_total = 0;
    json_t *outs = output_metrics(b, outs0, &worst_cos, &rc);
    if (!outs)
        goto out;
    json_t *sat = saturation_json(b, &sat_total);
    bool below = b->has_fail_cos && (isnan(worst_cos) || worst_cos < b->fail_cos);
    double wall = now_s() - b->t0;
    summary = summary_json(b, outs, worst_cos, sat, (int64_t)sb.st_size, dumped, wall, below);

    char sp[3400];
    snprintf(sp, sizeof sp, "%s/summary.json", b->outdir);
    if (json_dump_file(summary, sp, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
        fprintf(stderr, "nanobench: warning: %s: cannot write: %s\n", sp, strerror(errno));
    /* the bringup's own run: the numbers of the summary, the files that matter */
    static const char *const em[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE"};
    for (int i = 0; i < 3; i++)
        rec_metric(em[i], num(b->est, em[i]), "B");
    rec_metric("not_supported_op_types", (double)json_object_size(json_object_get(b->est,
                                                                   "NOT_SUPPORT_OP_TYPE")), "");
    rec_metric("exeom_bytes", (double)sb.st_size, "B");
    rec_metric("cycles", num(run0, "cycles"), "cycles");
    rec_metric("npu_ms_64mhz", num(run0, "ms_64mhz"), "ms");
    rec_metric("npu_ms_200mhz", num(run0, "ms_200mhz"), "ms");
    rec_metric("fp16_saturations", sat_total, "");
    const json_t *o0 = json_array_get(outs, 0); /* the first output's, for history diff */
    rec_metric("output_cosine_mean", num(o0, "cosine_mean"), "");
    rec_metric("output_cosine_worst", num(o0, "cosine_worst"), "");
    rec_metric("output_sqnr_db_mean", num(o0, "sqnr_db_mean"), "dB");
    rec_metric("output_sqnr_db_worst", num(o0, "sqnr_db_worst"), "dB");
    rec_metric("output_pooled_cosine", num(o0, "pooled_cosine"), "");
    rec_metric("eval_inputs", b->n_eval, "");
    rec_metric("worst_output_cosine", worst_cos, "");
    rec_metric("layers_over_threshold", num(b->cmp, "over_threshold"), "");
    rec_metric("wall_s", wall, "s");
    rec_artifact("exeom", b->exeom);
    rec_artifact("summary", sp);
    if (b->json) {
        rc = cli_json_out("bringup", json_incref(summary));
    } else {
        print_text(b, summary);
        fflush(stdout);
    }
    if (!rc && below) {
        char c1[32];
        rc = cli_fail(3, "bringup: the worst network-output cosine %s is below "
                      "--fail-under-cosine %g", cos_str(worst_cos, c1, sizeof c1), b->fail_cos);
    }
out:
    args_free(&a);
    tui_job_free(j);
    json_decref(summary);
    json_decref(b->est);
    json_decref(b->cal);
    json_decref(b->cmp);
    json_decref(b->runs);
    json_decref(b->atc_warn);
    for (int i = 0; i < b->n_in; i++)
        free(b->in_name[i]);
    for (int k = 0; b->eval && k < b->n_eval * b->n_in; k++)
        free(b->eval[k]);
    free(b->eval);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    return rc;
}
