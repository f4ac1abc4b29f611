/* nanobench report (include/nb/report.h): the HTML page of a bring-up folder. Plots: gnuplot's SVG
 * terminal, inlined; the Okabe-Ito palette (readable with every common colour-vision
 * deficiency); every plot also as a table under it (its text alternative). */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nb/json.h"
#include "nb/accucmp.h"
#include "nb/report.h"

extern char **environ;

/* Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, orange */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00"};

typedef struct side {
    const nb_report_src *src;
    json_t *sum, *est, *cal, *run, *cmp;
    char missing[5][512]; /* why a part is absent: "" when loaded */
} side;

typedef struct page {
    FILE *f;
    char tmp[4200]; /* scratch folder for gnuplot */
    int n_plot;
    bool no_gnuplot;
    int n_gone, n_drawn;
    const volatile sig_atomic_t *cancel; /* nb_report_opts.cancel */
    bool cancelled;                      /* stop: the page is not published */
} page;

/* ---- small helpers ---- */

/* a number for JSON: null for NaN or an infinity (JSON has neither) */
static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double num(const json_t *o, const char *k) { return nb_json_num_of(o, k); }

static const char *str(const json_t *o, const char *k) { return nb_json_str_of(o, k); }

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s < 32 && *s != '\n' && *s != '\t')
                fputc('?', f);
            else
                fputc(*s, f);
        }
    }
}

static void escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void escf(FILE *f, const char *fmt, ...)
{
    char *buf = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&buf, fmt, ap); /* whole: a 10,000-byte folder name is not cut */
    va_end(ap);
    if (n >= 0)
        esc(f, buf);
    free(buf);
}

/* a number as text: "-" for NaN */
static const char *fmtn(double v, const char *fmt, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (isinf(v))
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

/* The two ways a string reaches gnuplot, each with its own quoting (issue 35: a folder label
 * in a double-quoted title ran the shell command in its backquotes). Both shorten a long name
 * to its tail (it names a layer best: "/block.3/attn/MatMul_1") and make control bytes '?'.
 * gp_datum: a field of an inline data block ($d << EOD): double-quoted, which gnuplot's data
 *   reader takes literally (no backquote or macro substitution inside a data block; measured
 *   with gnuplot 5.4); a '"' or '\\' inside becomes '\''.
 * gp_str: a string literal in the script itself (a title, a label, a path): single-quoted,
 *   the only quoting gnuplot leaves alone ("command-line substitution ... is not done inside
 *   single-quoted strings", gnuplot 5.4 help 'substitution'); a '\'' inside is doubled. The
 *   terminal is noenhanced, so '_', '^', '@' and '{' print as themselves. */
static const char *gp_tail(const char *s, size_t max, bool *cut)
{
    size_t l = strlen(s);
    *cut = max && l > max;
    if (!*cut)
        return s;
    const char *p = s + l - (max - 3);
    while (p > s && ((unsigned char)*p & 0xC0) == 0x80) /* not inside a UTF-8 character */
        p--;
    return p;
}

static void gp_datum(FILE *f, const char *s, size_t max)
{
    bool cut;
    const char *p = gp_tail(s, max, &cut);
    fputs(cut ? "\"..." : "\"", f);
    for (; *p; p++)
        fputc(*p == '"' || *p == '\\' ? '\'' : (unsigned char)*p < 32 || *p == 127 ? '?' : *p,
              f);
    fputc('"', f);
}

static void gp_str(FILE *f, const char *s, size_t max)
{
    bool cut;
    const char *p = gp_tail(s, max, &cut);
    fputs(cut ? "'..." : "'", f);
    for (; *p; p++) {
        if (*p == '\'')
            fputs("''", f);
        else
            fputc((unsigned char)*p < 32 || *p == 127 ? '?' : *p, f);
    }
    fputc('\'', f);
}

/* a JSON file: a regular file only (a FIFO in its place would block the page forever) */
static json_t *load_regular(const char *path, json_error_t *je)
{
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f) {
        snprintf(je->text, sizeof je->text, "%s", errno == EINVAL ? "not a regular file"
                                                                  : strerror(errno));
        return NULL;
    }
    json_t *o = json_loadf(f, 0, je);
    fclose(f);
    return o;
}

nb_err nb_report_load_summary(const char *dir, struct json_t **out, nb_status *st)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *o = load_regular(path, &je);
    *out = NULL;
    if (!o)
        return nb_fail(st, NB_ERR_ARG, "%s: %s", path, je.text);
    if (!json_is_object(o) || !json_is_string(json_object_get(o, "model")) ||
        !json_is_number(json_object_get(json_object_get(o, "estimate"), "TOTAL_EXEOM_SIZE"))) {
        json_decref(o);
        return nb_fail(st, NB_ERR_ARG, "%s: not a bring-up's summary (no model and estimate)",
                       path);
    }
    *out = o;
    return NB_OK;
}

void nb_report_tmp_paths(const char *out, char *part, size_t part_len, char *scratch,
                         size_t scratch_len)
{
    char t[4400];
    nb_tmp_path(out, t, sizeof t);
    snprintf(part, part_len, "%s", t);
    snprintf(scratch, scratch_len, "%s.d", t);
}

static json_t *load(const char *dir, const char *name, char *why, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_error_t je;
    json_t *o = load_regular(path, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        struct stat sb;
        snprintf(why, len, "%s %s", path, stat(path, &sb) ? "is gone" : "is not a JSON object");
        return NULL;
    }
    why[0] = 0;
    return o;
}

long long nb_report_summary_run(const json_t *s)
{
    const json_t *b = json_object_get(json_object_get(s, "runs"), "bringup");
    return json_is_integer(b) ? (long long)json_integer_value(b) : 0;
}

long long nb_report_folder_clear(const char *dir, char *why, size_t len)
{
    static const char *const stale[] = {"summary.json", "report.html"};
    json_t *prev = NULL;
    nb_status st = {0};
    long long by = -1;
    if (!nb_report_load_summary(dir, &prev, &st))
        by = nb_report_summary_run(prev);
    json_decref(prev);
    why[0] = 0;
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
        if (unlink(path) && errno != ENOENT && !why[0])
            snprintf(why, len, "%s: cannot remove: %s", path, strerror(errno));
    }
    return by;
}

static void side_load(side *s, const nb_report_src *src)
{
    memset(s, 0, sizeof *s);
    s->src = src;
    if (src->summary) { /* the bring-up's summary before it is published */
        s->sum = json_deep_copy(src->summary);
        s->missing[0][0] = 0;
    } else {
        s->sum = load(src->dir, "summary.json", s->missing[0], sizeof s->missing[0]);
    }
    long long by = s->sum ? nb_report_summary_run(s->sum) : 0;
    if (s->sum && src->run_id > 0 && by != src->run_id) {
        /* a later bringup wrote into the folder: its files are not this run's */
        json_decref(s->sum);
        s->sum = NULL;
        for (int i = 0; i < 5; i++) {
            if (by)
                snprintf(s->missing[i], sizeof s->missing[i], "%s holds bringup %lld's files "
                         "now (a later bringup replaced them)", src->dir, by);
            else
                snprintf(s->missing[i], sizeof s->missing[i], "%s holds an unrecorded "
                         "bringup's files now (a later bringup replaced them)", src->dir);
        }
        return;
    }
    s->est = load(src->dir, "log/1-estimate.out", s->missing[1], sizeof s->missing[1]);
    s->cal = load(src->dir, "log/2-calibrate.out", s->missing[2], sizeof s->missing[2]);
    s->run = load(src->dir, "log/4-run-0.out", s->missing[3], sizeof s->missing[3]);
    s->cmp = load(src->dir, "log/6-compare.out", s->missing[4], sizeof s->missing[4]);
}

static void side_free(side *s)
{
    json_decref(s->sum), json_decref(s->est), json_decref(s->cal), json_decref(s->run);
    json_decref(s->cmp);
}

static void gone(page *p, const char *why)
{
    p->n_gone++;
    fputs("<p class=\"gone\">Not shown: ", p->f);
    esc(p->f, why);
    fputs(strstr(why, "replaced") ? ".</p>\n"
                                   : " (the bring-up's folder was moved or cleaned).</p>\n", p->f);
}

/* ---- plots: a gnuplot script with its data inline, run into an SVG, inlined ---- */

/* Waits for gnuplot: a signal that only interrupts the wait (EINTR) is not its end. When the
 * caller's cancel flag is set (a SIGINT to the bring-up), or gnuplot itself died of SIGINT,
 * SIGTERM or SIGHUP (a Ctrl-C reaches the terminal's whole process group), the page is
 * cancelled: gnuplot is stopped and reaped, no zombie is left (issue 35). */
static void wait_gnuplot(page *p, pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid)
            break;
        if (errno != EINTR) {
            *status = -1;
            return;
        }
        if (p->cancel && *p->cancel) {
            kill(pid, SIGTERM);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            p->cancelled = true;
            return;
        }
    }
    if (WIFSIGNALED(*status) && (WTERMSIG(*status) == SIGINT || WTERMSIG(*status) == SIGTERM ||
                                 WTERMSIG(*status) == SIGHUP))
        p->cancelled = true;
}

/* Closes script_f and runs gnuplot on it (a file in p->tmp), and copies the SVG it wrote into the page inside
 * a figure with caption (its text alternative is the table the caller writes after). */
static void plot(page *p, FILE *script_f, const char *script_path, const char *svg_path,
                 const char *caption)
{
    fclose(script_f); /* the script is complete */
    fprintf(p->f, "<figure role=\"img\" aria-label=\"");
    esc(p->f, caption);
    fputs("\">\n", p->f);
    /* gnuplot runs in the scratch folder on names of its own ("3.gp" writes "3.svg"): a
       page's path with control bytes (which no gnuplot string may hold) no longer loses its
       plots (a breaker's find) */
    const char *base = strrchr(script_path, '/');
    char *argv[] = {"gnuplot", (char *)(base ? base + 1 : script_path), NULL};
    pid_t pid;
    int status = -1;
    bool drawn = false;
    /* gnuplot's warnings (an empty x range of a one-point series) are not the user's */
    posix_spawn_file_actions_t fa;
    bool fa_ok = posix_spawn_file_actions_init(&fa) == 0 &&
                 posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) == 0 &&
                 posix_spawn_file_actions_addchdir_np(&fa, p->tmp) == 0;
    if (p->cancel && *p->cancel)
        p->cancelled = true;
    bool spawned = !p->no_gnuplot && !p->cancelled && fa_ok &&
                   posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ) == 0;
    if (spawned)
        wait_gnuplot(p, pid, &status);
    if (spawned && !p->cancelled && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        FILE *g = fopen(svg_path, "r");
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n;
        bool in = false;
        while (g && (n = getline(&buf, &cap, g)) > 0) {
            if (!in && strstr(buf, "<svg"))
                in = true;
            if (in)
                fputs(buf, p->f);
        }
        drawn = in;
        free(buf);
        if (g)
            fclose(g);
    } else if (!p->cancelled && (!spawned || (WIFEXITED(status) && WEXITSTATUS(status) == 127))) {
        p->no_gnuplot = true;
    }
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    p->n_drawn += drawn;
    if (!drawn)
        fputs("<p class=\"gone\">The plot is left out: gnuplot did not run (apt-get install "
              "gnuplot-nox); its data is in the table below.</p>\n", p->f);
    fputs("<figcaption>", p->f);
    esc(p->f, caption);
    fputs("</figcaption></figure>\n", p->f);
}

/* Opens a new plot script "N.gp" in p->tmp with the common settings; its SVG path into svg. */
static FILE *script(page *p, char *gp, size_t gl, char *svg, size_t sl, int w, int h)
{
    snprintf(gp, gl, "%s/%d.gp", p->tmp, p->n_plot);
    snprintf(svg, sl, "%s/%d.svg", p->tmp, p->n_plot);
    p->n_plot++;
    FILE *f = fopen(gp, "w");
    if (!f)
        return NULL;
    fprintf(f, "set terminal svg size %d,%d dynamic noenhanced font 'sans,11' "
               "background '#ffffff'\nset output '%d.svg'", w, h, p->n_plot - 1);
    fputs("\nset grid ytics lc '#dddddd'\nset border 3\nset tics nomirror\n"
          "set key top right\n", f);
    for (int i = 0; i < 4; i++)
        fprintf(f, "set linetype %d lc rgb '%s' lw 2 pt %d\n", i + 1, palette[i], 7 + 2 * i);
    return f;
}

/* A data table under a plot, folded: "<what>[ of <of>] (table)" and its header row. */
static void details_open(page *p, const char *what, const char *of, const char *const *cols)
{
    fprintf(p->f, "<details%s><summary>", strcmp(what, "clips") ? "" : " open");
    escf(p->f, "%s%s%s (table)", what, of ? " of " : "", of ? of : "");
    fputs("</summary><table><tr>", p->f);
    for (int i = 0; cols[i]; i++) {
        fputs("<th>", p->f);
        esc(p->f, cols[i]);
        fputs("</th>", p->f);
    }
    fputs("</tr>\n", p->f);
}

/* ---- sections ---- */

static void h2(page *p, const char *id, const char *title)
{
    fprintf(p->f, "<section id=\"%s\"><h2>", id);
    esc(p->f, title);
    fputs("</h2>\n", p->f);
}

static void kv_row(FILE *f, const char *k, const char *id, const char *v)
{
    fputs("<tr><th>", f);
    esc(f, k);
    fputs("</th><td", f);
    if (id)
        fprintf(f, " id=\"%s\"", id);
    fputs(">", f);
    esc(f, v);
    fputs("</td></tr>\n", f);
}

static void sec_model(page *p, side *s)
{
    h2(p, "sec-model", "Model");
    if (!s->sum) {
        gone(p, s->missing[0]);
        fputs("</section>\n", p->f);
        return;
    }
    fputs("<table>\n", p->f);
    kv_row(p->f, "model", NULL, str(s->sum, "model"));
    kv_row(p->f, "SoC", NULL, str(s->sum, "soc_version"));
    char b[64];
    kv_row(p->f, "bring-up wall time (s)", NULL, fmtn(num(s->sum, "wall_s"), "%.2f", b, sizeof b));
    /* the inputs: their names from the summary, shapes as the estimate's tasks read them */
    const json_t *ins = json_object_get(json_object_get(s->sum, "evaluation"), "model_inputs");
    for (size_t i = 0; i < json_array_size(ins); i++) {
        const char *nm = json_string_value(json_array_get(ins, i));
        char v[600] = "";
        const json_t *ls = json_object_get(s->est, "layers");
        for (size_t t = 0; t < json_array_size(ls) && !v[0]; t++) {
            const json_t *ti = json_object_get(json_array_get(ls, t), "inputs");
            for (size_t q = 0; q < json_array_size(ti) && !v[0]; q++) {
                const json_t *x = json_array_get(ti, q);
                if (!nm || strcmp(str(x, "name"), nm))
                    continue;
                size_t at = (size_t)snprintf(v, sizeof v, "%s [", nm);
                const json_t *sh = json_object_get(x, "shape");
                for (size_t d = 0; d < json_array_size(sh) && at < sizeof v; d++)
                    at += (size_t)snprintf(v + at, sizeof v - at, "%s%lld", d ? "," : "",
                                           (long long)json_integer_value(json_array_get(sh, d)));
                if (at < sizeof v)
                    snprintf(v + at, sizeof v - at, "] %s on the NPU", str(x, "dtype"));
            }
        }
        kv_row(p->f, "input", NULL, v[0] ? v : nm ? nm : "");
    }
    const json_t *outs = json_object_get(s->sum, "outputs");
    for (size_t i = 0; i < json_array_size(outs); i++) {
        const json_t *o = json_array_get(outs, i);
        char v[600];
        snprintf(v, sizeof v, "%s [%s]", str(o, "name"), str(o, "shape"));
        kv_row(p->f, "output", NULL, v);
    }
    fputs("</table>\n", p->f);
    const json_t *ops = s->est ? json_object_get(s->est, "TOTAL_NET_OP_TYPE") : NULL;
    if (json_object_size(ops)) {
        char gp[4300], svg[4300];
        FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 300);
        if (f) {
            fputs("$d << EOD\n", f);
            const char *k;
            const json_t *v;
            json_object_foreach((json_t *)ops, k, v) {
                gp_datum(f, k, 24);
                fprintf(f, " %lld\n", (long long)json_integer_value(v));
            }
            fputs("EOD\nset style data histograms\nset style fill solid 0.8 border -1\n"
                  "set boxwidth 0.7\nset xtics rotate by -40 scale 0\nset ylabel 'nodes'\n"
                  "unset key\nset yrange [0:*]\nplot $d using 2:xtic(1) lt 1\n", f);
            plot(p, f, gp, svg, "Operator histogram: how many nodes of each op type the model has");
        }
        details_open(p, "op histogram", NULL, (const char *const[]){"op", "nodes", NULL});
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)ops, k, v) {
            fputs("<tr><td>", p->f);
            esc(p->f, k);
            fprintf(p->f, "</td><td>%lld</td></tr>\n", (long long)json_integer_value(v));
        }
        fputs("</table></details>\n", p->f);
    }
    fputs("</section>\n", p->f);
}

static void sec_estimate(page *p, side *s)
{
    h2(p, "sec-estimate", "Estimate");
    const json_t *e = s->est ? s->est : s->sum ? json_object_get(s->sum, "estimate") : NULL;
    if (!e) {
        gone(p, s->missing[1]);
        fputs("</section>\n", p->f);
        return;
    }
    static const char *const items[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE"};
    static const char *const ids[] = {"est-weight", "est-mem", "est-exeom"};
    fputs("<table>\n", p->f);
    char b[64];
    for (int i = 0; i < 3; i++)
        kv_row(p->f, items[i], ids[i], fmtn(num(e, items[i]), "%.0f", b, sizeof b));
    for (int k = 0; k < 2; k++) {
        const char *item = k ? "NOT_SUPPORT_OP_TYPE" : "TOTAL_NET_OP_TYPE";
        const json_t *o = json_object_get(e, item);
        char v[1024];
        size_t at = (size_t)snprintf(v, sizeof v, "%zu", json_object_size(o));
        const char *key;
        const json_t *val;
        int i = 0;
        json_object_foreach((json_t *)o, key, val) {
            if (at < sizeof v)
                at += (size_t)snprintf(v + at, sizeof v - at, "%s%s(%lld)", i++ ? ", " : ": ",
                                       key, (long long)json_integer_value(val));
        }
        kv_row(p->f, item, k ? "est-unsupported" : "est-ops", v);
    }
    const json_t *mem = json_object_get(s->est, "memory");
    if (mem) {
        char v[300];
        snprintf(v, sizeof v, "weights %.0f + task descriptors %.0f + inputs/outputs %.0f + "
                 "activation arena %.0f (lower bound %.0f)", num(mem, "weights"),
                 num(mem, "task_descriptors"), num(mem, "inputs_outputs"), num(mem, "arena"),
                 num(mem, "arena_lower_bound"));
        kv_row(p->f, "TOTAL_MEM_SIZE parts", NULL, v);
    }
    fputs("</table>\n", p->f);
    const json_t *map = json_object_get(s->est, "arena_map");
    if (json_array_size(map)) {
        char gp[4300], svg[4300];
        FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 340);
        double peak = num(mem, "arena_peak_task");
        if (f) {
            fputs("$d << EOD\n", f);
            for (size_t i = 0; i < json_array_size(map); i++) {
                const json_t *t = json_array_get(map, i);
                double a = num(t, "first_task"), z = num(t, "last_task"), o = num(t, "offset"),
                       n = num(t, "bytes");
                fprintf(f, "%g %g %g %g\n", (a + z) / 2, (o + n / 2) / 1024, (z - a + 1) / 2,
                        n / 2048);
            }
            fputs("EOD\nset xlabel 'task (execution order)'\nset ylabel 'arena offset (KiB)'\n"
                  "set style fill transparent solid 0.45 border lt 1\nunset key\n", f);
            if (!isnan(peak))
                fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead lt 2 dt 2\n"
                           "set label 'peak' at %g, graph 0.95 offset 0.5,0 tc lt 2\n",
                        peak, peak, peak);
            fputs("plot $d using 1:2:3:4 with boxxyerror lt 1\n", f);
            plot(p, f, gp, svg, "Arena map: each activation tensor as a box from the task that "
                                "writes it to the last that reads it, at its offset; the peak "
                                "task dashed");
        }
        details_open(p, "arena map", NULL,
                     (const char *const[]){"tensor", "offset", "bytes", "tasks", NULL});
        for (size_t i = 0; i < json_array_size(map); i++) {
            const json_t *t = json_array_get(map, i);
            fputs("<tr><td>", p->f);
            esc(p->f, str(t, "name"));
            fprintf(p->f, "</td><td>%.0f</td><td>%.0f</td><td>%.0f..%.0f</td></tr>\n",
                    num(t, "offset"), num(t, "bytes"), num(t, "first_task"), num(t, "last_task"));
        }
        fputs("</table></details>\n", p->f);
    }
    fputs("</section>\n", p->f);
}

/* per-layer series of the calibration (out SQNR) for one or two sides */
static void sec_calibration(page *p, side *s, int ns)
{
    h2(p, "sec-calibration", "Calibration");
    char gp[4300], svg[4300];
    bool any = false;
    for (int k = 0; k < ns; k++)
        any |= json_array_size(json_object_get(s[k].cal, "layers")) > 0;
    for (int k = 0; k < ns; k++) {
        const json_t *c = s[k].sum ? json_object_get(s[k].sum, "calibration") : NULL;
        if (!s[k].cal)
            gone(p, s[k].missing[2]);
        if (!c)
            continue;
        char b1[64], b2[64];
        fputs("<p>", p->f);
        esc(p->f, ns > 1 ? s[k].src->label : "algorithm");
        fputs(": <b>", p->f);
        esc(p->f, str(c, "algorithm"));
        fprintf(p->f, "</b> on %s batches; fake-quant output <span id=\"cal-sqnr-%d\">%s</span> "
                "dB against float.</p>\n", fmtn(num(c, "batches"), "%.0f", b1, sizeof b1), k,
                fmtn(num(c, "output_sqnr_db"), "%.1f", b2, sizeof b2));
        const json_t *sg = json_object_get(c, "suggested_int16");
        for (size_t i = 0; i < json_array_size(sg); i++) {
            const json_t *l = json_array_get(sg, i);
            fputs("<p class=\"advice\">INT16 advice: ", p->f);
            escf(p->f, "int8 rounds %.0f%% of %s's nonzero input to 0", 100 * num(l, "zeroed_fraction"),
                 str(l, "layer"));
            fputs("</p>\n", p->f);
        }
    }
    if (any) {
        FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 340);
        if (f) {
            for (int k = 0; k < ns; k++) {
                fprintf(f, "$d%d << EOD\n", k);
                const json_t *ls = json_object_get(s[k].cal, "layers");
                for (size_t i = 0; i < json_array_size(ls); i++) {
                    const json_t *l = json_array_get(ls, i);
                    double v = num(l, "output_sqnr_db");
                    if (isfinite(v))
                        fprintf(f, "%zu %g\n", i, v);
                    else
                        fprintf(f, "%zu NaN\n", i);
                }
                fputs("EOD\n", f);
            }
            size_t nl = json_array_size(json_object_get(s[0].cal, "layers"));
            if (nl <= 30)
                fputs("set xtics 1\n", f);
            fputs("set xlabel 'layer (cube op, in graph order)'\nset ylabel 'SQNR (dB)'\n"
                  "plot ", f);
            for (int k = 0; k < ns; k++) {
                fprintf(f, "%s$d%d using 1:2 with linespoints lt %d title ", k ? ", " : "", k,
                        k + 1);
                gp_str(f, s[k].src->label, 40);
            }
            fputs("\n", f);
            plot(p, f, gp, svg, "Calibration: each cube layer alone on fake-quantized input and "
                                "weights, its output's SQNR against float, along the depth");
        }
    }
    for (int k = 0; k < ns; k++) {
        const json_t *ls = json_object_get(s[k].cal, "layers");
        if (!json_array_size(ls))
            continue;
        details_open(p, "layers", ns > 1 ? s[k].src->label : NULL,
                     (const char *const[]){"#", "layer", "op", "algorithm", "clip", "act bits",
                                           "act SQNR", "out SQNR", "out cosine", NULL});
        for (size_t i = 0; i < json_array_size(ls); i++) {
            const json_t *l = json_array_get(ls, i);
            char a[64], b[64], c[64], d[64], e[64];
            fprintf(p->f, "<tr><td>%zu</td><td>", i);
            esc(p->f, str(l, "layer"));
            fputs("</td><td>", p->f);
            esc(p->f, str(l, "op_type"));
            fputs("</td><td>", p->f);
            esc(p->f, str(l, "algorithm"));
            fprintf(p->f, "</td><td>[%s, %s]</td><td>%.0f</td><td>%s</td><td>%s</td><td>%s</td>"
                    "</tr>\n", fmtn(num(l, "clip_min"), "%.4g", a, sizeof a),
                    fmtn(num(l, "clip_max"), "%.4g", b, sizeof b), num(l, "act_bits"),
                    fmtn(num(l, "act_sqnr_db"), "%.1f", c, sizeof c),
                    fmtn(num(l, "output_sqnr_db"), "%.1f", d, sizeof d),
                    fmtn(num(l, "output_cosine"), "%.6f", e, sizeof e));
        }
        fputs("</table></details>\n", p->f);
    }
    fputs("</section>\n", p->f);
}

static int by_cycles(const void *a, const void *b)
{
    double x = num(*(json_t *const *)a, "cycles"), y = num(*(json_t *const *)b, "cycles");
    return x < y ? 1 : x > y ? -1 : 0;
}

static void sec_npu(page *p, side *s, int ns)
{
    h2(p, "sec-npu", "NPU run (simulator)");
    fputs("<table><tr><th></th>", p->f);
    for (int k = 0; k < ns; k++) {
        fputs("<th>", p->f);
        esc(p->f, s[k].src->label);
        fputs("</th>", p->f);
    }
    fputs("</tr>\n", p->f);
    static const char *const rows[][3] = {{"cycles", "cycles", "%.0f"},
                                          {"ms at 64 MHz", "ms_64mhz", "%.3f"},
                                          {"ms at 200 MHz", "ms_200mhz", "%.3f"},
                                          {"exeom bytes", "exeom_bytes", "%.0f"}};
    for (int r = 0; r < 4; r++) {
        fputs("<tr><th>", p->f);
        esc(p->f, rows[r][0]);
        fputs("</th>", p->f);
        for (int k = 0; k < ns; k++) {
            const json_t *o = s[k].sum ? json_object_get(s[k].sum, r == 3 ? "compile" : "npu")
                                       : NULL;
            char b[64];
            fprintf(p->f, "<td id=\"npu-%s-%d\">%s</td>", rows[r][1], k,
                    fmtn(num(o, rows[r][1]), rows[r][2], b, sizeof b));
        }
        fputs("</tr>\n", p->f);
    }
    fputs("</table>\n", p->f);
    for (int k = 0; k < ns; k++) {
        const json_t *st = s[k].sum ? json_object_get(json_object_get(json_object_get(s[k].sum,
                                                        "npu"), "saturation"), "tasks") : NULL;
        for (size_t i = 0; i < json_array_size(st); i++) {
            const json_t *t = json_array_get(st, i);
            fputs("<p class=\"advice\">fp16 saturation: ", p->f);
            escf(p->f, "%s%s%s (%s) clamped %.0f values at 65504 on %.0f input(s)",
                 ns > 1 ? s[k].src->label : "", ns > 1 ? ": " : "", str(t, "name"),
                 str(t, "op_type"), num(t, "count"), num(t, "inputs"));
            fputs("</p>\n", p->f);
        }
        const json_t *fx = s[k].sum ? json_object_get(s[k].sum, "saturation_fix") : NULL;
        if (json_is_object(fx) && *str(fx, "nb_input_scale")) {
            const json_t *o0 = json_array_get(json_object_get(s[k].sum, "outputs"), 0),
                         *f0 = json_array_get(json_object_get(fx, "outputs"), 0);
            char a[64], b[64];
            fputs("<p class=\"advice\">Fix tried and measured: ", p->f);
            escf(p->f, "atc --nb_input_scale=\"%s\" clamps nothing; output SQNR mean %s -> %s dB",
                 str(fx, "nb_input_scale"), fmtn(num(o0, "sqnr_db_mean"), "%.1f", a, sizeof a),
                 fmtn(num(f0, "sqnr_db_mean"), "%.1f", b, sizeof b));
            fputs("</p>\n", p->f);
        }
    }
    /* the first side's tasks by cycles (the largest 25) */
    const json_t *ts = json_object_get(s[0].run, "tasks");
    if (!s[0].run)
        gone(p, s[0].missing[3]);
    size_t nt = json_array_size(ts);
    if (nt) {
        json_t **v = malloc(sizeof *v * nt);
        if (v) {
            for (size_t i = 0; i < nt; i++)
                v[i] = json_array_get(ts, i);
            qsort(v, nt, sizeof *v, by_cycles);
            size_t top = nt < 25 ? nt : 25;
            char gp[4300], svg[4300];
            FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 380);
            if (f) {
                fputs("$d << EOD\n", f);
                for (size_t i = 0; i < top; i++) {
                    gp_datum(f, str(v[i], "name"), 28);
                    fprintf(f, " %g\n", num(v[i], "cycles"));
                }
                fputs("EOD\nset style data histograms\nset style fill solid 0.8 border -1\n"
                      "set boxwidth 0.7\nset xtics rotate by -45 scale 0 font ',9'\n"
                      "set ylabel 'cycles'\nunset key\nset yrange [0:*]\n"
                      "set bmargin 9\nplot $d using 2:xtic(1) lt 1\n", f);
                char cap[200];
                snprintf(cap, sizeof cap, "Cycles per task, the %zu largest of %zu, sorted%s", top,
                         nt, ns > 1 ? " (the first bring-up)" : "");
                plot(p, f, gp, svg, cap);
            }
            details_open(p, "tasks by cycles", NULL,
                         (const char *const[]){"task", "op", "unit", "cycles", "compute",
                                               "movement", "MACs", "saturations", NULL});
            for (size_t i = 0; i < nt; i++) {
                fputs("<tr><td>", p->f);
                esc(p->f, str(v[i], "name"));
                fputs("</td><td>", p->f);
                esc(p->f, str(v[i], "op_type"));
                fputs("</td><td>", p->f);
                esc(p->f, *str(v[i], "unit") ? str(v[i], "unit") : "npu");
                fprintf(p->f, "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f"
                        "</td></tr>\n", num(v[i], "cycles"), num(v[i], "compute"),
                        num(v[i], "movement"), num(v[i], "macs"), num(v[i], "saturations"));
            }
            fputs("</table></details>\n", p->f);
            free(v);
        }
    }
    fputs("</section>\n", p->f);
}

static void sec_outputs(page *p, side *s, int ns)
{
    h2(p, "sec-outputs", "Network outputs against float");
    for (int k = 0; k < ns; k++) {
        if (!s[k].sum) {
            gone(p, s[k].missing[0]);
            continue;
        }
        const json_t *outs = json_object_get(s[k].sum, "outputs");
        /* the inputs together (pooled): for a score of one value per input the figure that
           means something (a cosine of one value is 1); the summary's text gives it too */
        fputs("<table><tr><th>run</th><th>output</th><th>inputs</th><th>cosine mean</th>"
              "<th>cosine worst</th><th>SQNR mean (dB)</th><th>SQNR worst (dB)</th>"
              "<th>max |npu - float|</th><th>cosine, inputs together</th>"
              "<th>SQNR, inputs together (dB)</th></tr>\n", p->f);
        bool one_value = false;
        for (size_t i = 0; i < json_array_size(outs); i++) {
            const json_t *o = json_array_get(outs, i);
            char a[64], b[64], c[64], d[64], e[64], f1[64], f2[64];
            one_value = one_value || num(o, "numel") == 1;
            fputs("<tr><td>", p->f);
            esc(p->f, s[k].src->label);
            fputs("</td><td>", p->f);
            esc(p->f, str(o, "name"));
            fprintf(p->f, "</td><td>%zu</td><td id=\"out-cos-mean-%d-%zu\">%s</td>"
                    "<td id=\"out-cos-worst-%d-%zu\">%s</td><td id=\"out-sqnr-mean-%d-%zu\">%s"
                    "</td><td>%s</td><td>%s</td><td id=\"out-pooled-cos-%d-%zu\">%s</td>"
                    "<td id=\"out-pooled-sqnr-%d-%zu\">%s</td></tr>\n",
                    json_array_size(json_object_get(o, "per_input")), k, i,
                    fmtn(num(o, "cosine_mean"), "%.5f", a, sizeof a), k, i,
                    fmtn(num(o, "cosine_worst"), "%.5f", b, sizeof b), k, i,
                    fmtn(num(o, "sqnr_db_mean"), "%.1f", c, sizeof c),
                    fmtn(num(o, "sqnr_db_worst"), "%.1f", d, sizeof d),
                    fmtn(num(o, "max_abs_error"), "%.4g", e, sizeof e), k, i,
                    fmtn(num(o, "pooled_cosine"), "%.5f", f1, sizeof f1), k, i,
                    fmtn(num(o, "pooled_sqnr_db"), "%.1f", f2, sizeof f2));
        }
        fputs("</table>\n", p->f);
        if (one_value)
            fputs("<p>An output of one value per input (a score): its cosine on one input is "
                  "1 by definition, and its SQNR on one input weighs a tiny error against a "
                  "tiny value; the columns over the inputs together, with max |npu - float|, "
                  "are the figures to read.</p>\n", p->f);
    }
    fputs("</section>\n", p->f);
}

static void worst_layer(page *p, side *s);

/* the comparison along the network: SQNR (left axis) and cosine (right axis) per row */
static void sec_compare(page *p, side *s, int ns)
{
    h2(p, "sec-compare", "Layer-by-layer comparison");
    for (int k = 0; k < ns; k++) {
        const json_t *c = s[k].sum ? json_object_get(s[k].sum, "compare") : NULL;
        if (!s[k].cmp)
            gone(p, s[k].missing[4]);
        if (!c)
            continue;
        /* the evaluation input bringup compared layer by layer: the one of the lowest output
           SQNR (summary.json compare.input, from 0) */
        const json_t *ci = json_object_get(c, "input");
        const json_t *ev = json_object_get(s[k].sum, "evaluation");
        json_int_t in = json_is_integer(ci) ? json_integer_value(ci) : 0;
        json_int_t of = json_integer_value(json_object_get(ev, "count"));
        fprintf(p->f, "<p id=\"cmp-input-%d\">", k);
        escf(p->f, "%s%s", ns > 1 ? s[k].src->label : "", ns > 1 ? ": " : "");
        fprintf(p->f, "on evaluation input %lld of %lld (",
                (long long)(in >= 0 && in < 1000000 ? in + 1 : 1),
                (long long)(of > 0 && of <= 1000000 ? of : 1));
        esc(p->f, *str(c, "input_rule") ? str(c, "input_rule") : "the lowest output SQNR");
        fputs(")</p>\n<p>", p->f);
        escf(p->f, "%s%s", ns > 1 ? s[k].src->label : "", ns > 1 ? ": " : "");
        fprintf(p->f, "<span id=\"cmp-verdict-%d\">", k);
        esc(p->f, str(c, "verdict_text"));
        fputs("</span></p>\n", p->f);
        const json_t *fb = json_object_get(c, "first_over_threshold"),
                     *wd = json_object_get(c, "largest_sqnr_drop");
        if (json_is_object(fb)) {
            fputs("<p>First over threshold: <b>", p->f);
            esc(p->f, str(fb, "layer"));
            fputs("</b> — ", p->f);
            esc(p->f, str(fb, "likely_cause"));
            fputs("</p>\n", p->f);
        }
        if (json_is_object(wd)) {
            char a[64], b[64];
            fputs("<p>Largest SQNR drop: <b>", p->f);
            esc(p->f, str(wd, "layer"));
            fputs("</b> ", p->f);
            escf(p->f, "%s -> %s dB", fmtn(num(wd, "previous_sqnr_db"), "%.1f", a, sizeof a),
                 fmtn(num(wd, "sqnr_db"), "%.1f", b, sizeof b));
            if (*str(wd, "likely_cause") && strncmp(str(wd, "likely_cause"), "none clear", 10)) {
                fputs(": ", p->f);
                esc(p->f, str(wd, "likely_cause"));
            }
            fputs("</p>\n", p->f);
        }
    }
    bool any = false;
    for (int k = 0; k < ns; k++)
        any |= json_array_size(json_object_get(s[k].cmp, "rows")) > 0;
    if (any) {
        char gp[4300], svg[4300];
        FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 380);
        double cos_th = num(json_object_get(s[0].cmp, "thresholds"), "cos");
        if (f) {
            for (int k = 0; k < ns; k++) {
                fprintf(f, "$d%d << EOD\n", k);
                const json_t *rows = json_object_get(s[k].cmp, "rows");
                for (size_t i = 0; i < json_array_size(rows); i++) {
                    const json_t *r = json_array_get(rows, i);
                    if (!json_is_true(json_object_get(r, "compared")))
                        continue;
                    double q = num(r, "sqnr_db"), cs = num(r, "cosine");
                    fprintf(f, "%zu %g %g\n", i, isfinite(q) ? (q > 200 ? 200 : q) : 200,
                            isnan(cs) ? 0 : cs);
                }
                fputs("EOD\n", f);
            }
            fputs("set xlabel 'NPU task output (task order)'\nset ylabel 'SQNR (dB; 200: exact)'\n"
                  "set y2label 'cosine similarity'\nset y2tics\nset y2range [*:1.0005]\n", f);
            if (!isnan(cos_th))
                fprintf(f, "set arrow from graph 0, second %g to graph 1, second %g nohead lt 4 "
                           "dt 3\nset label 'cosine threshold %g' at graph 0.01, second %g "
                           "offset 0,0.6 tc lt 4\n", cos_th, cos_th, cos_th, cos_th);
            const json_t *fb = json_object_get(json_object_get(s[0].sum, "compare"),
                                               "first_over_threshold");
            const json_t *wd = json_object_get(json_object_get(s[0].sum, "compare"),
                                               "largest_sqnr_drop");
            if (json_is_object(wd) && !isnan(num(wd, "index")))
                fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead lt 3 dt 4\n"
                           "set label 'largest SQNR drop' at %g, graph 0.8 offset 0.5,0 tc lt 3\n",
                        num(wd, "index"), num(wd, "index"), num(wd, "index"));
            if (json_is_object(fb) && !isnan(num(fb, "index")))
                fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead lt 2 dt 2\n"
                           "set label 'first over threshold' at %g, graph 0.9 offset 0.5,0 tc lt 2\n",
                        num(fb, "index"), num(fb, "index"), num(fb, "index"));
            fputs("plot ", f);
            for (int k = 0; k < ns; k++) {
                fprintf(f, "%s$d%d using 1:2 with linespoints lt %d title ", k ? ", " : "", k,
                        k + 1);
                char t[200];
                snprintf(t, sizeof t, "SQNR %s", s[k].src->label);
                gp_str(f, t, 60);
                fprintf(f, ", $d%d using 1:3 axes x1y2 with lines lt %d dt 2 title ", k, k + 1);
                snprintf(t, sizeof t, "cosine %s", s[k].src->label);
                gp_str(f, t, 60);
            }
            fputs("\n", f);
            plot(p, f, gp, svg, "Every NPU task's output against the float reference: SQNR (solid, "
                                "left axis) and cosine similarity (dashed, right axis); the "
                                "cosine threshold dotted, the first layer over threshold dashed");
        }
        for (int k = 0; k < ns; k++) {
            const json_t *rows = json_object_get(s[k].cmp, "rows");
            if (!json_array_size(rows))
                continue;
            details_open(p, "rows", ns > 1 ? s[k].src->label : NULL,
                         (const char *const[]){"#", "layer", "op", "cosine", "SQNR (dB)",
                                               "max |err|", "over", NULL});
            for (size_t i = 0; i < json_array_size(rows); i++) {
                const json_t *r = json_array_get(rows, i);
                char a[64], b[64], c[64];
                fprintf(p->f, "<tr><td>%zu</td><td>", i);
                esc(p->f, str(r, "layer"));
                fputs("</td><td>", p->f);
                esc(p->f, str(r, "op_type"));
                fprintf(p->f, "</td><td>%s</td><td>%s</td><td>%s</td><td>",
                        fmtn(num(r, "cosine"), "%.6f", a, sizeof a),
                        fmtn(num(r, "sqnr_db"), "%.1f", b, sizeof b),
                        fmtn(num(r, "max_abs_error"), "%.4g", c, sizeof c));
                const json_t *ov = json_object_get(r, "over");
                for (size_t j = 0; j < json_array_size(ov); j++) {
                    esc(p->f, j ? ", " : "");
                    esc(p->f, json_string_value(json_array_get(ov, j)));
                }
                fputs("</td></tr>\n", p->f);
            }
            fputs("</table></details>\n", p->f);
        }
    }
    for (int k = 0; k < ns; k++)
        if (s[k].cmp)
            worst_layer(p, &s[k]);
    fputs("</section>\n", p->f);
}

/* A folder's facts when the history gives none: from its summary.json */
static json_t *summary_facts(const json_t *sum, bool metrics)
{
    json_t *o = json_object();
    if (!sum)
        return o;
    const json_t *c = json_object_get(sum, "calibration"), *x = json_object_get(sum, "compile"),
                 *n = json_object_get(sum, "npu"), *o0 = json_array_get(json_object_get(sum,
                                                                           "outputs"), 0);
    if (!metrics) {
        json_object_set(o, "algorithm", json_object_get(c, "algorithm"));
        json_object_set_new(o, "nb_input_scale", json_string(str(x, "nb_input_scale")));
        json_object_set_new(o, "eval_inputs", json_real(num(json_object_get(sum, "evaluation"),
                                                            "count")));
        return o;
    }
    static const char *const items[] = {"TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE"};
    for (int i = 0; i < 3; i++)
        json_object_set_new(o, items[i], jnum(num(json_object_get(sum, "estimate"), items[i])));
    json_object_set_new(o, "exeom_bytes", jnum(num(x, "exeom_bytes")));
    json_object_set_new(o, "cycles", jnum(num(n, "cycles")));
    json_object_set_new(o, "npu_ms_64mhz", jnum(num(n, "ms_64mhz")));
    json_object_set_new(o, "fp16_saturations", jnum(num(json_object_get(n, "saturation"),
                                                            "total")));
    json_object_set_new(o, "calibration_output_sqnr_db", jnum(num(c, "output_sqnr_db")));
    json_object_set_new(o, "output_cosine_worst", jnum(num(o0, "cosine_worst")));
    json_object_set_new(o, "output_sqnr_db_mean", jnum(num(o0, "sqnr_db_mean")));
    json_object_set_new(o, "layers_over_threshold",
                        jnum(num(json_object_get(sum, "compare"), "over_threshold")));
    return o;
}

/* a JSON value as the table shows it: numbers as %.0f when whole, else %.6g; NULL for none */
static char *value_text(const json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_number(v)) {
        double d = json_number_value(v);
        char buf[64];
        snprintf(buf, sizeof buf, d == floor(d) && fabs(d) < 1e15 ? "%.0f" : "%.6g", d);
        return strdup(buf);
    }
    return json_dumps(v, JSON_ENCODE_ANY);
}

/* The worst layer in detail (the first to saturate fp16, else the first over threshold, else
 * the largest SQNR drop): the
 * histogram of npu - golden and its largest errors, from the dumps (accucmp's). */
static void worst_layer(page *p, side *s)
{
    const json_t *c = s->sum ? json_object_get(s->sum, "compare") : NULL;
    const json_t *l = json_object_get(s->cmp, "first_saturation"); /* ranks first (compare) */
    if (!json_is_object(l))
        l = json_object_get(c, "first_over_threshold");
    if (!json_is_object(l))
        l = json_object_get(c, "largest_sqnr_drop");
    const char *name = str(l, "layer"), *mdir = str(s->cmp, "npu_dumps"),
               *gdir = str(s->cmp, "golden_dumps");
    if (!*name || !*mdir || !*gdir)
        return;
    fputs("<h3>", p->f);
    escf(p->f, "The worst layer: %s", name);
    fputs("</h3>\n", p->f);
    nb_comparison cs;
    nb_status st = {0};
    nb_compare_opts co = {.npu_dumps = mdir, .golden_dumps = gdir, .keep_layer = name};
    nb_cmp_thresholds_default(&co.th);
    if (nb_compare(&co, &cs, &st)) {
        gone(p, st.msg);
        return;
    }
    int sel = -1;
    enum { BINS = 40, K = 10 };
    double edges[BINS + 1];
    int64_t counts[BINS], worst[K], left = 0;
    if (nb_cmp_pick_layer(&cs, name, mdir, &sel, &st) || !cs.rows[sel].x->v) {
        gone(p, st.msg[0] ? st.msg : "its values were not kept");
        nb_comparison_free(&cs);
        return;
    }
    const nb_cmp_row *r = &cs.rows[sel];
    const double *x = r->x->v + r->slice_off, *y = r->y->v + r->slice_off;
    int nw = nb_cmp_worst_k(x, y, r->slice_n, K, worst);
    if (!nb_cmp_error_histogram(x, y, r->slice_n, BINS, edges, counts, &left, &st)) {
        char gp[4300], svg[4300];
        FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 300);
        if (f) {
            fputs("$d << EOD\n", f);
            for (int b = 0; b < BINS; b++)
                fprintf(f, "%g %g %lld\n", (edges[b] + edges[b + 1]) / 2, edges[b + 1] - edges[b],
                        (long long)counts[b]);
            fputs("EOD\nset xlabel 'npu - float'\nset ylabel 'values'\nunset key\n"
                  "set style fill solid 0.8 border -1\nset logscale y\nset yrange [0.8:*]\n"
                  "plot $d using 1:($3 > 0 ? $3 : 1/0):2 with boxes lt 1\n", f);
            plot(p, f, gp, svg, "Histogram of the error (NPU minus float) over the worst layer's "
                                "values, log scale");
        }
    }
    fputs("<table><tr><th>flat index</th><th>NPU</th><th>float</th><th>|error|</th></tr>\n",
          p->f);
    for (int i = 0; i < nw; i++)
        fprintf(p->f, "<tr><td>%lld</td><td>%.6g</td><td>%.6g</td><td>%.4g</td></tr>\n",
                (long long)worst[i], x[worst[i]], y[worst[i]], fabs(x[worst[i]] - y[worst[i]]));
    fputs("</table>\n", p->f);
    nb_comparison_free(&cs);
}

/* what changed between the two: parameters, sizes, cycles, metrics */
/* what a bring-up flag not given means (include/nb/bringup.h's defaults) */
static const char *param_default(const char *k)
{
    static const char *const d[][2] = {
        {"soc_version", "Ascend035A (default)"}, {"output_type", "FP16 (default)"},
        {"algo", "ifmr (default)"}, {"batch_num", "every batch (default)"},
        {"eval_count", "5 (default)"}, {"input_fp16_nodes", "every float input (default)"},
        {"threshold", "compare's defaults"}, {"nb_input_scale", "none (the fix tries one)"},
        {"cpu_nodes", "none"}, {"calibration_config", "none"}, {"eval_dir", "none"},
        {"out_nodes", "the model's outputs"}, {"target_sqnr", "no search"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (!strcmp(k, d[i][0]))
            return d[i][1];
    return "not given";
}

static void sec_changes(page *p, side *s)
{
    h2(p, "sec-changes", "What changed");
    fputs("<table><tr><th>item</th><th>", p->f);
    esc(p->f, s[0].src->label);
    fputs("</th><th>", p->f);
    esc(p->f, s[1].src->label);
    fputs("</th></tr>\n", p->f);
    for (int pass = 0; pass < 2; pass++) {
        const json_t *a = pass ? s[0].src->metrics : s[0].src->params,
                     *b = pass ? s[1].src->metrics : s[1].src->params;
        json_t *fa = a ? NULL : summary_facts(s[0].sum, pass),
               *fb = b ? NULL : summary_facts(s[1].sum, pass);
        if (fa)
            a = fa;
        if (fb)
            b = fb;
        json_t *keys = json_object();
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)a, k, v)
            json_object_set_new(keys, k, json_true());
        json_object_foreach((json_t *)b, k, v)
            json_object_set_new(keys, k, json_true());
        json_object_foreach(keys, k, v) {
            /* the command lines (their flags are the rows) and each run's own folder */
            if (!strcmp(k, "argv") || !strcmp(k, "out"))
                continue;
            const json_t *x = json_object_get(a, k), *y = json_object_get(b, k);
            char *xs = value_text(x), *ys = value_text(y);
            bool same = xs && ys && !strcmp(xs, ys);
            fprintf(p->f, "<tr%s><th>", same ? "" : " class=\"changed\"");
            escf(p->f, "%s%s", pass || fa ? "" : "--", k);
            fputs("</th><td>", p->f);
            esc(p->f, xs ? xs : pass ? "-" : param_default(k));
            fputs("</td><td>", p->f);
            esc(p->f, ys ? ys : pass ? "-" : param_default(k));
            fputs("</td></tr>\n", p->f);
            free(xs), free(ys);
        }
        json_decref(keys);
        json_decref(fa);
        json_decref(fb);
    }
    fputs("</table></section>\n", p->f);
}

/* the pipeline check: per clip, float's and the NPU's peak score, and the detections */
/* bringup --target_sqnr (issue 40): the target, the chosen configuration, the Pareto plot
 * (output SQNR against NPU + CPU cycles, every configuration measured, the front joined, the
 * chosen point marked, the target drawn) and the table of every configuration */
static void sec_search(page *p, side *s, int ns)
{
    for (int k = 0; k < ns; k++) {
        const json_t *se = s[k].sum ? json_object_get(s[k].sum, "search") : NULL;
        if (!json_is_object(se))
            continue;
        h2(p, "sec-search", ns > 1 ? "Precision and placement search (A)" : "Precision and "
                                                                           "placement search");
        char b1[64], b2[64], b3[64];
        fputs("<p>", p->f);
        escf(p->f, "Target: %s dB pooled output SQNR on %s; as is %s dB. Result: %s.",
             fmtn(num(se, "target_sqnr_db"), "%.1f", b1, sizeof b1),
             *str(se, "target_outputs") ? str(se, "target_outputs") : "every output",
             fmtn(num(se, "as_is_sqnr_db"), "%.1f", b2, sizeof b2), str(se, "result"));
        fputs("</p>\n", p->f);
        const json_t *ch = json_object_get(se, "chosen");
        if (json_is_array(ch)) {
            fputs("<p>Chosen: <b id=\"search-chosen\">", p->f);
            for (size_t i = 0; i < json_array_size(ch); i++) {
                const json_t *c = json_array_get(ch, i);
                const char *w = *str(c, "layer") ? str(c, "layer") : str(c, "nodes");
                escf(p->f, "%s%s%s%s", i ? "; " : "", str(c, "change"), *w ? " " : "", w);
            }
            fputs("</b>: ", p->f);
            escf(p->f, "%s dB at %s cycles, exeom %s bytes; its calibration config %s.",
                 fmtn(num(se, "chosen_sqnr_db"), "%.1f", b1, sizeof b1),
                 fmtn(num(se, "chosen_cycles"), "%.0f", b2, sizeof b2),
                 fmtn(num(se, "chosen_exeom_bytes"), "%.0f", b3, sizeof b3),
                 str(se, "calibration_config"));
            fputs("</p>\n", p->f);
        }
        const json_t *pts = json_object_get(se, "points");
        char gp[4300], svg[4300];
        FILE *f = json_array_size(pts) > 1 ? script(p, gp, sizeof gp, svg, sizeof svg, 900, 360)
                                           : NULL;
        if (f) {
            for (int set = 0; set < 3; set++) { /* every point, the front, the chosen */
                fprintf(f, "$d%d << EOD\n", set);
                for (size_t i = 0; i < json_array_size(pts); i++) {
                    const json_t *q = json_array_get(pts, i);
                    if (json_object_get(q, "error") ||
                        (set == 1 && !json_is_true(json_object_get(q, "pareto"))))
                        continue;
                    if (set == 2 && !(fabs(num(q, "sqnr_db") - num(se, "chosen_sqnr_db")) < 1e-9 &&
                                      fabs(num(q, "cycles") - num(se, "chosen_cycles")) < 0.5))
                        continue;
                    fprintf(f, "%.17g %.17g\n", num(q, "cycles"), num(q, "sqnr_db"));
                }
                fputs("EOD\n", f);
            }
            fprintf(f, "set logscale x\nset xlabel 'NPU + CPU cycles per input (mean)'\n"
                    "set ylabel 'pooled output SQNR (dB)'\nset key bottom right\n"
                    "set arrow from graph 0, first %.17g to graph 1, first %.17g nohead "
                    "dt 2 lc rgb '#D55E00'\n", num(se, "target_sqnr_db"),
                    num(se, "target_sqnr_db"));
            fputs("set label 'target' at graph 0.01, first ", f);
            fprintf(f, "%.17g offset 0,0.6 tc rgb '#D55E00'\n", num(se, "target_sqnr_db"));
            fputs("plot $d0 using 1:2 with points lt 4 pt 6 title 'configuration measured', "
                  "$d1 using 1:2 smooth unique with linespoints lt 1 title 'Pareto front', "
                  "$d2 using 1:2 with points lt 2 pt 5 ps 2 title 'chosen'\n", f);
            plot(p, f, gp, svg, "Search: every configuration measured on the simulator, its "
                                "pooled output SQNR against its cycles; the Pareto front joined, "
                                "the chosen point marked, the target dashed");
        }
        details_open(p, "configurations", NULL,
                     (const char *const[]){"#", "configuration", "SQNR (dB)", "cycles",
                                           "exeom bytes", "meets target", "Pareto", NULL});
        for (size_t i = 0; i < json_array_size(pts); i++) {
            const json_t *q = json_array_get(pts, i);
            fprintf(p->f, "<tr><td>%zu</td><td>", i);
            esc(p->f, str(q, "label"));
            if (json_object_get(q, "error")) {
                fputs("</td><td colspan=\"5\">refused: ", p->f);
                esc(p->f, str(q, "error"));
                fputs("</td></tr>\n", p->f);
                continue;
            }
            fprintf(p->f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                    fmtn(num(q, "sqnr_db"), "%.2f", b1, sizeof b1),
                    fmtn(num(q, "cycles"), "%.0f", b2, sizeof b2),
                    fmtn(num(q, "exeom_bytes"), "%.0f", b3, sizeof b3),
                    json_is_true(json_object_get(q, "meets_target")) ? "yes" : "no",
                    json_is_true(json_object_get(q, "pareto")) ? "yes" : "");
        }
        fputs("</table></details>\n</section>\n", p->f);
        break; /* the first side's */
    }
}

static void sec_pipeline(page *p, const char *path)
{
    h2(p, "sec-pipeline", "Pipeline check (every clip, streaming)");
    json_error_t je;
    json_t *j = load_regular(path, &je);
    const json_t *rows = json_object_get(j, "rows");
    if (!json_is_array(rows)) {
        char why[4300];
        snprintf(why, sizeof why, "%s (%s)", path, je.text);
        gone(p, why);
        json_decref(j);
        fputs("</section>\n", p->f);
        return;
    }
    double th = num(j, "threshold");
    fprintf(p->f, "<p>Detection agreement with float: <b id=\"pipe-agree\">%.0f of %.0f</b> "
            "clips; the largest score difference over all frames <b id=\"pipe-maxdiff\">%.4f"
            "</b> (detection at a peak score of %g).</p>\n", num(j, "agree_npu"), num(j, "clips"),
            num(j, "max_diff_npu"), th);
    if (!isnan(num(j, "agree_placed")))
        fprintf(p->f, "<p>As the tool places the model (the NPU and the MCU's CPU): <b id=\"pipe-"
                "agree-placed\">%.0f of %.0f</b> clips agree with float; the largest score "
                "difference <b id=\"pipe-maxdiff-placed\">%.4f</b>.</p>\n",
                num(j, "agree_placed"), num(j, "clips"), num(j, "max_diff_placed"));
    char gp[4300], svg[4300];
    FILE *f = script(p, gp, sizeof gp, svg, sizeof svg, 900, 340);
    if (f) {
        fputs("$d << EOD\n", f);
        for (size_t i = 0; i < json_array_size(rows); i++) {
            const json_t *r = json_array_get(rows, i);
            fprintf(f, "%zu %g %g\n", i, num(r, "float_peak"), num(r, "npu_peak"));
        }
        fprintf(f, "EOD\nset xlabel 'clip'\nset ylabel 'peak score'\nset yrange [0:1.05]\n"
                   "set arrow from graph 0, first %g to graph 1, first %g nohead lt 4 dt 3\n"
                   "plot $d using 1:2 with points lt 1 pt 7 ps 1.2 title 'float', "
                   "$d using 1:3 with points lt 2 pt 6 ps 1.6 title 'NPU'\n", th, th);
        plot(p, f, gp, svg, "Every evaluation clip's peak wake-word score in float (filled) and on the "
                            "simulated NPU (open); the detection threshold dotted");
    }
    details_open(p, "clips", NULL,
                 (const char *const[]){"#", "clip", "label", "float peak", "NPU peak",
                                       "max |diff|", "detected float / NPU", NULL});
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *r = json_array_get(rows, i);
        bool fd = json_is_true(json_object_get(r, "detected_float")),
             nd = json_is_true(json_object_get(r, "detected_npu"));
        fprintf(p->f, "<tr%s><td>%zu</td><td>", fd != nd ? " class=\"changed\"" : "", i);
        esc(p->f, str(r, "clip"));
        fputs("</td><td>", p->f);
        esc(p->f, str(r, "label"));
        fprintf(p->f, "</td><td>%.4f</td><td>%.4f</td><td>%.4f</td><td>%s / %s</td></tr>\n",
                num(r, "float_peak"), num(r, "npu_peak"), num(r, "max_diff_npu"), fd ? "yes" : "no",
                nd ? "yes" : "no");
    }
    fputs("</table></details></section>\n", p->f);
    json_decref(j);
}

nb_err nb_report_write(const nb_report_opts *o, nb_report_result *r, nb_status *st)
{
    const nb_report_src *a = o->a, *b = o->b;
    const char *pipeline = o->pipeline, *out = o->out;
    if (r)
        *r = (nb_report_result){0};
    side s[2];
    int ns = b ? 2 : 1;
    side_load(&s[0], a);
    if (b)
        side_load(&s[1], b);
    struct stat ob;
    if (!lstat(out, &ob) && !S_ISREG(ob.st_mode)) { /* a FIFO, a device, a link: not replaced */
        for (int k = 0; k < ns; k++)
            side_free(&s[k]);
        return nb_fail(st, NB_ERR_IO, "%s: exists and is not a regular file: not replaced", out);
    }
    char sp[4200], rs[PATH_MAX], ro[PATH_MAX];
    snprintf(sp, sizeof sp, "%s/summary.json", a->dir);
    if (realpath(sp, rs) && realpath(out, ro) && !strcmp(rs, ro)) {
        for (int k = 0; k < ns; k++)
            side_free(&s[k]);
        return nb_fail(st, NB_ERR_ARG, "%s: is the bring-up's own summary.json", out);
    }
    if (!s[0].sum && !a->metrics && !a->summary) {
        struct stat sb;
        nb_err rc = stat(sp, &sb)
                        ? nb_fail(st, NB_ERR_ARG, "%s: no summary.json (is it a bringup folder?)",
                                  a->dir)
                        : nb_fail(st, NB_ERR_FORMAT, "%s: not a bring-up summary (a JSON object)",
                                  sp);
        for (int k = 0; k < ns; k++)
            side_free(&s[k]);
        return rc;
    }
    page p = {.cancel = o->cancel};
    char part[4300];
    nb_report_tmp_paths(out, part, sizeof part, p.tmp, sizeof p.tmp);
    nb_remove_stale_tmps(out); /* a killed earlier page's temporaries (SIGKILL leaves them) */
    nb_err rc = NB_OK;
    if (mkdir(p.tmp, 0700)) {
        rc = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", out, strerror(errno));
        p.tmp[0] = 0;
        goto done;
    }
    p.f = fopen(part, "w");
    if (!p.f) {
        rc = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", out, strerror(errno));
        goto done;
    }
    char when[64];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tmv));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", p.f);
    escf(p.f, "nanobench report: %s%s%s", a->label, b ? " vs " : "", b ? b->label : "");
    fputs("</title>\n<style>\nbody{font:14px/1.45 sans-serif;max-width:980px;margin:1.5em auto;"
          "padding:0 1em;color:#222}\nh1{font-size:1.5em}h2{border-bottom:2px solid #0072B2;"
          "padding-bottom:.2em;margin-top:1.8em}\ntable{border-collapse:collapse;margin:.6em 0}"
          "\nth,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;font-variant-numeric:"
          "tabular-nums}\nth{background:#f3f6fa}\n.gone{color:#a33;font-style:italic}\n"
          ".advice{background:#fff6e0;border-left:4px solid #E69F00;padding:.3em .6em}\n"
          "tr.changed td{background:#fdeee5}\nfigure{margin:1em 0}figcaption{font-size:.9em;"
          "color:#555}\nsvg{max-width:100%;height:auto}\n</style></head><body>\n<h1>", p.f);
    escf(p.f, "nanobench bring-up report: %s%s%s", a->label, b ? " vs " : "", b ? b->label : "");
    fputs("</h1>\n<p>", p.f);
    escf(p.f, "Written %s from %s%s%s.", when, a->dir, b ? " and " : "", b ? b->dir : "");
    fputs("</p>\n", p.f);
    if (pipeline)
        sec_pipeline(&p, pipeline);
    if (b)
        sec_changes(&p, s);
    /* two runs of one model with one estimate: Model and Estimate once (they came out
       twice, one after the other, with identical plots) */
    bool same = ns == 2 && s[0].sum && s[1].sum &&
                !strcmp(str(s[0].sum, "model"), str(s[1].sum, "model")) && s[0].est &&
                s[1].est && json_equal(s[0].est, s[1].est);
    for (int k = 0; k < ns; k++) {
        if (ns > 1) {
            fputs("<h2>", p.f);
            if (same)
                escf(p.f, "%s and %s: the same model and estimate", s[0].src->label,
                     s[1].src->label);
            else
                esc(p.f, s[k].src->label);
            fputs("</h2>\n", p.f);
        }
        sec_model(&p, &s[k]);
        sec_estimate(&p, &s[k]);
        if (ns == 1 || same)
            break;
    }
    if (!p.cancelled)
        sec_calibration(&p, s, ns);
    if (!p.cancelled)
        sec_npu(&p, s, ns);
    if (!p.cancelled)
        sec_outputs(&p, s, ns);
    if (!p.cancelled)
        sec_compare(&p, s, ns);
    if (!p.cancelled)
        sec_search(&p, s, ns);
    fputs("<footer><p>Plots: gnuplot (SVG terminal), Okabe-Ito colours; each plot's data is in "
          "the table under it.</p></footer>\n</body></html>\n", p.f);
    int bad = ferror(p.f);
    if (fclose(p.f) || bad) {
        rc = nb_fail(st, NB_ERR_IO, "%s: write failed", out);
        goto done;
    }
    p.f = NULL;
    if (p.cancelled || (p.cancel && *p.cancel))
        rc = nb_fail(st, NB_ERR_CANCELLED, "%s: not written: interrupted", out);
    else if (rename(part, out))
        rc = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", out, strerror(errno));
done:
    if (p.f)
        fclose(p.f);
    if (rc)
        remove(part);
    if (p.tmp[0]) {
        for (int i = 0; i < p.n_plot; i++) {
            char f1[4300];
            snprintf(f1, sizeof f1, "%s/%d.gp", p.tmp, i);
            remove(f1);
            snprintf(f1, sizeof f1, "%s/%d.svg", p.tmp, i);
            remove(f1);
        }
        rmdir(p.tmp);
    }
    for (int k = 0; k < ns; k++)
        side_free(&s[k]);
    if (r && !rc)
        *r = (nb_report_result){p.n_drawn, !p.no_gnuplot, p.n_gone};
    return rc;
}
