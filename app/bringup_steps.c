/* nanobench bringup: its steps (bringup.h): each a child running the CLI's own command
 * through the job runner, with its line on stderr and its JSON read back. */
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

#include "bringup.h"
#include "cli.h"
#include "nb/accucmp.h"
#include "nb/ir.h"
#include "tui/job.h"

/* ---- a child's argument list ---- */


void __attribute__((format(printf, 2, 3))) arg(bu_argv *a, const char *fmt, ...)
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

void args_free(bu_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}


volatile sig_atomic_t g_sig;

void on_signal(int sig) { g_sig = sig; }

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *const step_name[N_STEPS] = {"estimate", "calibrate", "atc", "run", "infer",
                                               "compare"};

/* "[3/6] atc ..." on stderr; on a terminal the same line is redrawn with progress */
void step_line(const bu *b, int step, const char *detail, const char *progress)
{
    if (b->tty)
        cli_term_raw("\r\033[K"); /* past the terminal filter: our own redraw */
    fprintf(stderr, "[%d/%d] %s%s%s ...%s%s", step + 1, N_STEPS, step_name[step],
            detail[0] ? " " : "", detail, progress[0] ? " " : "", progress);
    if (!b->tty)
        fputc('\n', stderr);
    fflush(stderr);
}

void step_done(const bu *b, int step, const char *detail)
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
int interrupted(const char *stage)
{
    int sig = g_sig ? g_sig : SIGINT;
    return cli_fail(128 + sig, "bringup: interrupted (%s) during %s",
                    sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP", stage);
}

/* Writes what a child printed to DIR/log/NAME.out and .err (for a look after the fact). */
void save_log(const bu *b, const tui_job *j, const char *name)
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

/* Runs a child to its end: 0 with *out the finished job (exit status 0); an interrupt gives
 * the bringup's exit status after its line; a child that failed gives -1 with its message
 * (without "nanobench: ") in err, the job freed. */
int child_soft(bu *b, int step, const char *title, const char *detail, const char *logname,
               int64_t parent, bu_argv *a, tui_job **out, char *err, size_t errlen,
               int *status)
{
    *out = NULL;
    *status = 0;
    if (a->oom) {
        args_free(a);
        return cli_fail(1, "out of memory");
    }
    err[0] = 0;
    tui_job *j = tui_job_start(b->db, parent, a->v, title, err, errlen);
    args_free(a);
    if (!j)
        return cli_fail(1, "bringup: %s: %s", title, err);
    int64_t shown = -1;
    while (!tui_job_poll(j)) {
        if (g_sig)
            break;
        tui_job_wait_io(j, 100);
        if (step >= 0 && b->tty && j->progress_total > 0 && j->progress_done != shown) {
            char p[96];
            snprintf(p, sizeof p, "%s %lld/%lld", j->progress_what, (long long)j->progress_done,
                     (long long)j->progress_total);
            step_line(b, step, detail, p);
            shown = j->progress_done;
        }
    }
    if (g_sig) { /* also when the signal came as the child ended: stop all the same */
        if (!j->done)
            tui_job_cancel(j);
        save_log(b, j, logname);
        tui_job_free(j);
        if (b->tty)
            fputc('\n', stderr);
        return interrupted(title);
    }
    save_log(b, j, logname);
    if (j->status != 0) {
        const char *m = tui_job_error(j);
        if (!strncmp(m, "nanobench: ", 11))
            m += 11;
        else if (!strncmp(m, "nanobench ", 10))
            m += 10;
        snprintf(err, errlen, "%s", m);
        *status = j->status;
        tui_job_free(j);
        return -1;
    }
    *out = j;
    return 0;
}

/* Runs one step's child to its end. Returns 0 with *out the finished job (exit status 0), or
 * the bringup's exit status after its one-line error (the job freed). */
int child(bu *b, int step, const char *detail, const char *logname, int64_t parent,
                 bu_argv *a, tui_job **out)
{
    char err[1024];
    int status, r = child_soft(b, step, step_name[step], detail, logname, parent, a, out, err,
                               sizeof err, &status);
    if (r >= 0)
        return r;
    if (b->tty)
        fputc('\n', stderr);
    return cli_fail(status == 2 ? 2 : 1, "bringup: %s failed: %s", step_name[step], err);
}

static void global_flags(bu_argv *a)
{
    if (g_rec.no_record)
        arg(a, "--no-record");
    if (g_rec.require_record)
        arg(a, "--require-record");
}

static void eval_inputs(const bu *b, bu_argv *a, int k)
{
    for (int i = 0; i < b->n_in; i++) {
        arg(a, "--input");
        arg(a, "%s=%s", b->in_name[i], b->eval[k * b->n_in + i]);
    }
}

void run_argv(const bu *b, bu_argv *a, const char *exeom, int k, const char *out_dir,
              const char *dump_cfg)
{
    global_flags(a);
    arg(a, "run");
    arg(a, "%s", exeom);
    eval_inputs(b, a, k);
    arg(a, "--output-dir");
    arg(a, "%s", out_dir);
    if (dump_cfg) {
        arg(a, "--dump");
        arg(a, "%s", dump_cfg);
    }
    arg(a, "--json");
}

void infer_argv(const bu *b, bu_argv *a, int k, const char *out_dir, bool dump_all,
                const char *golden)
{
    global_flags(a);
    arg(a, "infer");
    arg(a, "%s", b->model);
    eval_inputs(b, a, k);
    if (b->shape)
        arg(a, "--input_shape=%s", b->shape);
    arg(a, "--output-dir");
    arg(a, "%s", out_dir);
    if (dump_all)
        arg(a, "--dump-all");
    if (golden) {
        arg(a, "--dump");
        arg(a, "%s", golden);
    }
}

static void estimate_argv(const bu *b, bu_argv *a)
{
    global_flags(a);
    arg(a, "estimate");
    arg(a, "-m");
    arg(a, "%s", b->model);
    arg(a, "-p");
    arg(a, "--json");
    if (b->shape)
        arg(a, "--input_shape=%s", b->shape);
    if (b->soc)
        arg(a, "--soc_version=%s", b->soc);
    if (b->fp16)
        arg(a, "--input_fp16_nodes=%s", b->fp16);
    if (b->otype)
        arg(a, "--output_type=%s", b->otype);
    if (b->out_nodes) /* the same cut as atc's: the estimate of what is compiled */
        arg(a, "--out_nodes=%s", b->out_nodes);
    if (b->cpu_nodes) /* and the same placement */
        arg(a, "--cpu_nodes=%s", b->cpu_nodes);
}

int run_estimate(bu *b, const char *detail)
{
    bu_argv a = {0};
    tui_job *j = NULL;
    estimate_argv(b, &a);
    double t0 = now_s();
    int rc = child(b, 0, detail, "1-estimate", g_rec.run_id, &a, &j);
    b->step_ms[0] += (now_s() - t0) * 1e3;
    args_free(&a);
    if (rc)
        return rc;
    json_t *est = job_json(j, "estimate", &rc);
    b->id_est = j->run_id;
    tui_job_free(j);
    if (!est)
        return rc;
    json_decref(b->est);
    b->est = est;
    return 0;
}

void atc_argv(const bu *b, bu_argv *a, const char *output, const char *scale)
{
    const char *fp16 = b->fp16 ? b->fp16 : b->fp16_all;
    global_flags(a);
    arg(a, "atc");
    arg(a, "--mode=30");
    arg(a, "--framework=5");
    arg(a, "--soc_version=%s", b->soc ? b->soc : "Ascend035A");
    arg(a, "--model=%s", b->deploy);
    arg(a, "--output=%s", output);
    if (*fp16)
        arg(a, "--input_fp16_nodes=%s", fp16);
    arg(a, "--output_type=%s", b->otype ? b->otype : "FP16");
    if (b->shape)
        arg(a, "--input_shape=%s", b->shape);
    if (b->out_nodes)
        arg(a, "--out_nodes=%s", b->out_nodes);
    if (b->cpu_nodes)
        arg(a, "--cpu_nodes=%s", b->cpu_nodes);
    if (scale)
        arg(a, "--nb_input_scale=%s", scale);
}

/* The JSON object a finished child printed; NULL after the error line (exit 1). */
json_t *job_json(const tui_job *j, const char *stage, int *rc)
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
void atc_warnings(bu *b, const char *err)
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

double bu_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *bu_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

int dump_worst(bu *b, const json_t *outs, const char *acl, bool dump_all, int64_t parent)
{
    /* the lowest output SQNR over the outputs, per input */
    b->cmp_input = 0;
    double lowest = INFINITY;
    for (int k = 0; k < b->n_eval; k++) {
        double q = INFINITY;
        for (size_t o = 0; o < json_array_size(outs); o++) {
            double v = bu_num(json_array_get(json_object_get(json_array_get(outs, o), "per_input"),
                                             (size_t)k), "sqnr_db");
            if (!isnan(v) && v < q)
                q = v;
        }
        if (q < lowest)
            lowest = q, b->cmp_input = k;
    }
    int k = b->cmp_input, rc;
    char detail[160], od[3400];
    bu_argv a = {0};
    tui_job *j = NULL;
    snprintf(detail, sizeof detail, "evaluation input %d run again, every task dumped", k + 1);
    step_line(b, 5, detail, ""); /* part of the comparison: [6/6] */
    snprintf(od, sizeof od, "%s/run/dumped", b->outdir);
    run_argv(b, &a, b->exeom, k, od, acl);
    double t0 = now_s();
    rc = child(b, 5, detail, "4-run-dump", parent, &a, &j);
    b->step_ms[3] += (now_s() - t0) * 1e3;
    if (rc)
        return rc;
    b->id_dump_run = j->run_id;
    json_t *o = job_json(j, "run", &rc);
    tui_job_free(j);
    if (!o)
        return rc;
    snprintf(b->dumped, sizeof b->dumped, "%s", bu_str(json_object_get(o, "dump"), "folder"));
    json_decref(o);
    step_done(b, 5, detail);
    if (!b->dumped[0])
        return cli_fail(1, "bringup: run dumped no files into %s/npu_dump", b->outdir);
    snprintf(detail, sizeof detail, "float reference of input %d, golden dumps", k + 1);
    step_line(b, 5, detail, "");
    snprintf(od, sizeof od, "%s/reference/dumped", b->outdir);
    infer_argv(b, &a, k, od, dump_all, b->gold);
    t0 = now_s();
    rc = child(b, 5, detail, "5-infer-dump", b->id_dump_run > 0 ? b->id_dump_run : parent, &a, &j);
    b->step_ms[4] += (now_s() - t0) * 1e3;
    if (rc)
        return rc;
    b->id_dump_inf = j->run_id;
    tui_job_free(j);
    step_done(b, 5, detail);
    return 0;
}
