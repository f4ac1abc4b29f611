/* nanobench TUI: helpers shared by the Model, Estimate, Quantize and Compile screens. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "nb/json.h"
#include "nb/db.h"
#include "scr_util.h"

void su_arg(su_argv *a, const char *fmt, ...)
{
    if (a->n >= SU_MAX_ARGS) {
        a->oom = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (s = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
        a->v[a->n++] = s;
        a->v[a->n] = NULL;
    } else {
        a->oom = true;
    }
}

void su_argv_free(su_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
    a->v[0] = NULL;
}

json_t *su_job_json(const tui_job *j, char *err, size_t errlen)
{
    if (j->cancelled) {
        snprintf(err, errlen, "cancelled");
        return NULL;
    }
    if (j->status != 0) {
        const char *e = tui_job_error(j);
        if (!strncmp(e, "nanobench: ", 11)) /* the status line says which step */
            e += 11;
        snprintf(err, errlen, "%s", e);
        return NULL;
    }
    json_error_t je;
    json_t *o = j->out ? json_loads(j->out, 0, &je) : NULL;
    if (!o || !json_is_object(o)) {
        snprintf(err, errlen, "%s printed no JSON result%s%s", j->title[0] ? j->title : "the step",
                 o ? "" : ": ", o ? "" : je.text);
        json_decref(o);
        return NULL;
    }
    return o;
}

int64_t su_parent(const tui *t, int step)
{
    for (int s = step - 1; s >= 0; s--)
        if (t->run_id[s] > 0)
            return t->run_id[s];
    return 0;
}

/* t's database opened for one lookup (the TUI keeps no handle open between jobs) */
static nb_db *open_db(const tui *t)
{
    nb_db *db = NULL;
    nb_status st = {0};
    return t->db[0] && !nb_db_open(t->db, &db, &st) ? db : NULL;
}

bool su_db_metric(const tui *t, int64_t run, const char *name, double *value)
{
    nb_db *db = open_db(t);
    bool found = db && nb_db_metric(db, run, name, value);
    nb_db_close(db);
    return found;
}

bool su_db_artifact(const tui *t, int64_t run, const char *role, char *path, size_t len)
{
    nb_db *db = open_db(t);
    bool found = db && nb_db_artifact_path(db, run, role, false, path, len);
    nb_db_close(db);
    return found;
}

const char *su_argv_opt(const json_t *params, const char *opt)
{
    const json_t *av = json_object_get(params, "argv");
    size_t ol = strlen(opt);
    for (size_t k = 0; k < json_array_size(av); k++) {
        const char *a = json_string_value(json_array_get(av, k));
        if (a && !strcmp(a, opt))
            return json_string_value(json_array_get(av, k + 1));
        if (a && !strncmp(a, opt, ol) && a[ol] == '=')
            return a + ol + 1;
    }
    return NULL;
}

/* "YYYY-MM-DDTHH:MM:SS" (UTC) of a time */
static void utc_text(time_t tt, char *buf, size_t len)
{
    struct tm tmv;
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", gmtime_r(&tt, &tmv));
}

/* The dump folder a recorded run wrote: a folder under the dump_path of its --dump config
   made while it ran (its time within the run's start and end, 2 s either side). */
static bool run_dump_folder(const nb_run_row *r, const json_t *params, char *out, size_t len)
{
    const char *acl = su_argv_opt(params, "--dump");
    json_error_t je;
    json_t *cfg = acl ? json_load_file(acl, 0, &je) : NULL;
    const char *base = su_str(json_object_get(cfg, "dump"), "dump_path");
    bool found = false;
    char best[PATH_MAX] = "";
    time_t best_t = 0;
    vm_dirent *e = NULL;
    int n = *base ? vm_list_dir(base, NULL, &e) : -1;
    for (int i = 0; i < n; i++) {
        if (!e[i].dir || !strcmp(e[i].name, ".."))
            continue;
        char p[PATH_MAX], lo[32], hi[32];
        snprintf(p, sizeof p, "%s/%s", base, e[i].name);
        struct stat st;
        if (stat(p, &st) != 0)
            continue;
        utc_text(st.st_mtime + 2, hi, sizeof hi);
        utc_text(st.st_mtime - 2, lo, sizeof lo);
        if (strncmp(hi, r->started, 19) >= 0 && r->finished[0] &&
            strncmp(lo, r->finished, 19) <= 0 && (!found || st.st_mtime > best_t)) {
            snprintf(best, sizeof best, "%s", p);
            best_t = st.st_mtime;
            found = true;
        }
    }
    free(e);
    json_decref(cfg);
    if (found)
        snprintf(out, len, "%s", best);
    return found;
}

/* A metric of run id, NaN when it has none. */
static double run_metric(nb_db *db, int64_t id, const char *name)
{
    double v = NAN;
    return nb_db_metric(db, id, name, &v) ? v : NAN;
}

void su_resume(tui *t, char *what, size_t len)
{
    what[0] = 0;
    if (!t->model[0])
        return;
    nb_db *db = NULL;
    nb_status st = {0};
    if (nb_db_open(t->db[0] ? t->db : NULL, &db, &st))
        return;
    int64_t *set = NULL;
    int nset = nb_db_model_runs(db, t->model, &set, &st);
    nb_run_row *rows = NULL;
    int n = 0;
    nb_run_filter f = {.ids = set, .n_ids = nset};
    if (nset <= 0 || nb_db_list(db, &f, &rows, &n, &st)) {
        free(set);
        nb_db_close(db);
        return;
    }
    free(set);
    bool shape_seen = t->input_shape[0] != 0, cal = false, comp = false, run = false,
         est = false;
    for (int i = 0; i < n; i++) { /* newest first */
        const nb_run_row *r = &rows[i];
        if (strcmp(r->status, "ok"))
            continue;
        json_error_t je;
        json_t *p = r->params ? json_loads(r->params, 0, &je) : NULL;
        char note[96], path[PATH_MAX];
        if (!est && !strcmp(r->kind, "estimate")) { /* issue 38: Estimate taken up too */
            est = true;
            t->run_id[STEP_ESTIMATE] = r->id;
            double b = run_metric(db, r->id, "TOTAL_EXEOM_SIZE"),
                   u = run_metric(db, r->id, "not_supported_op_types");
            char sz[32];
            vm_fmt_bytes(sz, sizeof sz, b);
            if (u > 0)
                snprintf(note, sizeof note, "%.0f not on NPU", u);
            else
                snprintf(note, sizeof note, "exeom %s", isnan(b) ? "?" : sz);
            tui_set_state(t, STEP_ESTIMATE, u > 0 ? ST_WARN : ST_OK, note);
        }
        if (!shape_seen && (!strcmp(r->kind, "info") || !strcmp(r->kind, "estimate"))) {
            shape_seen = true; /* the newest one's shape, none included */
            snprintf(t->input_shape, sizeof t->input_shape, "%s", su_str(p, "input_shape"));
        } else if (!cal && !strcmp(r->kind, "calibrate") &&
                   nb_db_artifact_path(db, r->id, "deploy_model", true, path, sizeof path)) {
            cal = true;
            snprintf(t->deploy_model, sizeof t->deploy_model, "%s", path);
            t->run_id[STEP_QUANTIZE] = r->id;
            double q = run_metric(db, r->id, "output_sqnr_db");
            if (isnan(q))
                snprintf(note, sizeof note, "earlier");
            else
                snprintf(note, sizeof note, "SQNR %.1f dB", q);
            tui_set_state(t, STEP_QUANTIZE, !isnan(q) && q < 20.0 ? ST_WARN : ST_OK, note);
        } else if (!comp && !strcmp(r->kind, "compile") &&
                   nb_db_artifact_path(db, r->id, "exeom", true, path, sizeof path)) {
            comp = true;
            snprintf(t->exeom, sizeof t->exeom, "%s", path);
            t->run_id[STEP_COMPILE] = r->id;
            double b = run_metric(db, r->id, "exeom_bytes");
            char sz[32];
            vm_fmt_bytes(sz, sizeof sz, b);
            snprintf(note, sizeof note, "exeom %s", isnan(b) ? "?" : sz);
            tui_set_state(t, STEP_COMPILE, ST_OK, note);
        } else if (!run && !strcmp(r->kind, "run")) {
            run = true;
            t->run_id[STEP_RUN] = r->id;
            if (!run_dump_folder(r, p, t->npu_dump, sizeof t->npu_dump))
                t->npu_dump[0] = 0;
            const char *in = su_argv_opt(p, "--input"), *eq = in ? strchr(in, '=') : NULL;
            snprintf(t->run_input, sizeof t->run_input, "%s",
                     !in || strstr(in, "random") ? "" : eq ? eq + 1 : in);
            double ms = run_metric(db, r->id, "npu_ms_64mhz"),
                   sat = run_metric(db, r->id, "fp16_saturations");
            vm_fmt_ms(note, sizeof note, ms);
            if (sat > 0)
                snprintf(note, sizeof note, "saturated");
            tui_set_state(t, STEP_RUN, sat > 0 ? ST_WARN : ST_OK, isnan(ms) ? "earlier" : note);
        }
        json_decref(p);
    }
    nb_run_rows_free(rows, n);
    nb_db_close(db);
    snprintf(what, len, "%s%s%s%s%s%s%s", est ? "Estimate" : "", est && (cal || comp || run) ? ", " : "",
             cal ? "Quantize" : "", cal && (comp || run) ? ", " : "",
             comp ? "Compile" : "", comp && run ? ", " : "", run ? "Run" : "");
}

const char *su_stem(const char *path, const char *suffix, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base), sl = suffix ? strlen(suffix) : 0;
    if (sl && n > sl && !strcmp(base + n - sl, suffix))
        n -= sl;
    snprintf(buf, len, "%.*s", (int)n, base);
    return buf;
}

bool su_shape(const json_t *shape, char *buf, size_t len)
{
    if (!json_is_array(shape)) {
        snprintf(buf, len, "(unknown rank)");
        return false;
    }
    bool known = true;
    size_t o = 0;
    o += (size_t)snprintf(buf, len, "[");
    for (size_t d = 0; d < json_array_size(shape) && o < len; d++) {
        const json_t *v = json_array_get(shape, d);
        const char *sep = d ? "," : "";
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
            o += (size_t)snprintf(buf + o, len - o, "%s%lld", sep,
                                  (long long)json_integer_value(v));
        } else {
            known = false;
            o += (size_t)snprintf(buf + o, len - o, "%s%s", sep,
                                  json_is_string(v) && json_string_value(v)[0]
                                      ? json_string_value(v) : "?");
        }
    }
    if (o < len)
        snprintf(buf + o, len - o, "]");
    return known;
}

double su_num(const json_t *o, const char *key) { return nb_json_num_of(o, key); }

const char *su_str(const json_t *o, const char *key) { return nb_json_str_of(o, key); }

/* The bytes of s that fit in width cells: *cells takes the cells they use. */
static size_t fit(const tui *t, const char *s, int width, int *cells)
{
    size_t i = 0;
    int c = 0;
    if (!t->utf8) {
        size_t n = strlen(s);
        i = n < (size_t)(width > 0 ? width : 0) ? n : (size_t)(width > 0 ? width : 0);
        *cells = (int)i;
        return i;
    }
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    while (s[i]) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, s + i, strlen(s + i), &ms);
        int cw = 1;
        if (k == (size_t)-1 || k == (size_t)-2) {
            k = 1; /* a byte that is not UTF-8: one cell ('?') */
            memset(&ms, 0, sizeof ms);
        } else {
            cw = wcwidth(wc);
            if (cw < 0)
                cw = 1;
        }
        if (c + cw > width)
            break;
        c += cw;
        i += k;
    }
    *cells = c;
    return i;
}

int su_put(const tui *t, WINDOW *w, int y, int x, int width, int attr, const char *fmt, ...)
{
    if (width <= 0 || y < 0 || y >= getmaxy(w) || x >= getmaxx(w))
        return 0;
    if (x + width > getmaxx(w))
        width = getmaxx(w) - x;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p; p++) /* control characters never reach the terminal */
        if ((unsigned char)*p < 0x20 || *p == 0x7f || (!t->utf8 && (unsigned char)*p >= 0x80))
            *p = '?';
    int cells;
    size_t n = fit(t, buf, width, &cells), whole = vm_whole_numbers(buf, n);
    if (whole < n) { /* a number is shown whole or not at all */
        n = whole;
        fit(t, (buf[n] = 0, buf), width, &cells);
    }
    if (t->utf8) { /* bytes that are not UTF-8 as '?' */
        mbstate_t ms;
        memset(&ms, 0, sizeof ms);
        for (size_t i = 0; i < n;) {
            wchar_t wc;
            size_t k = mbrtowc(&wc, buf + i, n - i, &ms);
            if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
                buf[i++] = '?';
                memset(&ms, 0, sizeof ms);
            } else {
                i += k;
            }
        }
    }
    if (attr)
        wattron(w, attr);
    mvwaddnstr(w, y, x, buf, (int)n);
    if (attr)
        wattroff(w, attr);
    return cells;
}

void su_box(const tui *t, WINDOW *w, int y, int x, int h, int wd, const char *title)
{
    if (h < 2 || wd < 2)
        return;
    mvwaddch(w, y, x, ACS_ULCORNER);
    mvwhline(w, y, x + 1, ACS_HLINE, wd - 2);
    mvwaddch(w, y, x + wd - 1, ACS_URCORNER);
    mvwvline(w, y + 1, x, ACS_VLINE, h - 2);
    mvwvline(w, y + 1, x + wd - 1, ACS_VLINE, h - 2);
    mvwaddch(w, y + h - 1, x, ACS_LLCORNER);
    mvwhline(w, y + h - 1, x + 1, ACS_HLINE, wd - 2);
    mvwaddch(w, y + h - 1, x + wd - 1, ACS_LRCORNER);
    if (title && *title && wd > 6)
        su_put(t, w, y, x + 2, wd - 4, tui_tag_attr(t, VM_TAG_NONE) | A_BOLD, " %s ", title);
}

int su_wrap(const tui *t, WINDOW *w, int y, int x, int width, int max, int attr,
            const char *text)
{
    int lines = 0;
    const char *p = text;
    while (*p && lines < max && width > 3) {
        while (*p == ' ')
            p++;
        const char *nl = strchr(p, '\n');
        size_t left = nl ? (size_t)(nl - p) : strlen(p);
        /* the longest prefix that fits, cut at a space when there is one */
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(left < sizeof line - 1 ? left : sizeof line - 1), p);
        int cells;
        size_t n = fit(t, line, width, &cells);
        if (n < strlen(line)) {
            size_t cut = n;
            while (cut > 0 && line[cut] != ' ')
                cut--;
            if (cut > n / 2)
                n = cut;
        }
        bool last = lines == max - 1 && n < left;
        if (last) { /* the rest does not fit: "..." */
            n = fit(t, line, width - 3, &cells);
            n = vm_whole_numbers(line, n); /* "73...." never: a number whole or not at all */
            su_put(t, w, y + lines, x, width, attr, "%.*s...", (int)n, line);
        } else {
            su_put(t, w, y + lines, x, width, attr, "%.*s", (int)n, line);
        }
        lines++;
        p += n;
        if (nl && p == nl)
            p++;
        if (!n && !(nl && p == nl + 1))
            break;
    }
    return lines;
}

/* The length of the folder-like prefix ("model/") that every name of names[n] shares, to
 * leave out where room is short; 0 when none. */
size_t su_common_prefix(const char *const *names, int n)
{
    if (n < 2)
        return 0;
    size_t len = strlen(names[0]);
    for (int i = 1; i < n; i++) {
        size_t k = 0;
        while (k < len && names[i][k] == names[0][k])
            k++;
        len = k;
    }
    while (len > 0 && names[0][len - 1] != '/')
        len--;
    return len;
}

const char *su_short_name(const char *name, size_t prefix, const char *op, char *buf,
                          size_t len)
{
    snprintf(buf, len, "%s", strlen(name) > prefix ? name + prefix : name);
    char *last = strrchr(buf, '/');
    if (last && last > buf && op && *op && !strcmp(last + 1, op))
        *last = 0;
    return buf;
}

void su_fit_cols(vm_table *tb, int flex, int total, int minw)
{
    if (flex < 0 || flex >= tb->ncols)
        return;
    int used = 0;
    for (int c = 0; c < tb->ncols; c++)
        if (c != flex)
            used += tb->cols[c].width + 1;
    int w = total - used;
    tb->cols[flex].width = w < minw ? minw : w;
}

int su_page(int h)
{
    return h - 1 > 1 ? h - 1 : 1;
}

bool su_table_click(vm_table *tb, int y, int top_y, int h)
{
    int r = y - top_y - 1;
    if (r < 0 || r >= h - 1 || tb->top + r >= tb->nrows)
        return false;
    vm_table_select(tb, tb->top + r, su_page(h));
    return true;
}
