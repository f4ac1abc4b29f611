/* nanobench TUI: the History screen. The run list straight from the run database
 * (nb_db_list), filtered by kind, model, status and date; a detail view per run
 * (parameters, metrics, artifacts, lineage up and down); the diff of two marked runs
 * (`nanobench history diff A B` as a job); export of the listed runs to CSV or JSON through
 * a save dialog (the run store's nb_db_export_csv/json on their ids). The model filter ('m':
 * the open model) lists the model's runs and every run derived from them. Needs no model. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nb/db.h"
#include "nb/tensor.h"
#include "scr_util.h"
#include "tui.h"

enum { HC_MARK, HC_ID, HC_KIND, HC_STATUS, HC_STARTED, HC_WALL, HC_PARENT, HC_MODEL, HC_ERROR,
       HC_N };

typedef struct hist {
    vm_table tb;
    bool init, wide;       /* wide: full dates and an error column */
    int64_t *ids;          /* per table row: the run id */
    int nids;
    int total;             /* the runs the filters match without the limit, -1 when all are listed */
    int64_t mark[2];       /* the marked runs, 0 when none; mark[0] the older mark */
    /* filters */
    char kind[16], model[PATH_MAX], status[16], since[32], limit[12];
    char err[256];         /* why the list is empty */
    int page;              /* visible table rows at the last draw */
    int table_y;           /* the pane row of the table's header at the last draw */
    int job_kind;          /* 1 diff, 2 report, 3 a run's details */
    char report_path[PATH_MAX];
    int64_t diff_ids[2];
    int64_t newest;        /* the newest run in the database at the last catch_up, 0 before */
    time_t checked;        /* when catch_up last looked */
} hist;

static hist *H(tui *t)
{
    if (!t->scr[STEP_HISTORY]) {
        hist *h = calloc(1, sizeof *h);
        if (!h)
            return NULL;
        snprintf(h->limit, sizeof h->limit, "500");
        t->scr[STEP_HISTORY] = h;
    }
    return t->scr[STEP_HISTORY];
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p && *p ? p : "-");
}

static bool marked(const hist *h, int64_t id)
{
    return id && (h->mark[0] == id || h->mark[1] == id);
}

/* Keeps the selection inside a window of page rows and the window inside the table (after
 * a resize the old top may leave rows empty). */
static void clamp_top(vm_table *tb, int page)
{
    if (tb->top > tb->nrows - page)
        tb->top = tb->nrows - page;
    if (tb->top < 0)
        tb->top = 0;
    if (tb->sel >= 0 && tb->sel < tb->top)
        tb->top = tb->sel;
    if (tb->sel >= 0 && tb->sel >= tb->top + page)
        tb->top = tb->sel - page + 1;
}

static void fmt_wall(double ms, char *buf, size_t len)
{
    if (isnan(ms))
        snprintf(buf, len, "-");
    else
        vm_fmt_ms(buf, len, ms);
}

/* Reloads the list from the database with the current filters; keeps the selected run
 * selected when it is still listed. */
static void reload(tui *t)
{
    hist *h = H(t);
    if (!h)
        return;
    if (!h->init || h->tb.ncols != (h->wide ? HC_N : HC_N - 1)) {
        const char *titles[HC_N] = {"*", "run", "kind", "status", "started",
                                    "wall", "parent", "model", "error"};
        int widths[HC_N] = {1, 5, 9, 7, 11, 7, 6, 24, 30};
        static const bool numeric[HC_N] = {false, true, false, false, false, true, true, false,
                                           false};
        if (h->wide) {
            titles[HC_STARTED] = "started (UTC)";
            widths[HC_STARTED] = 19;
            widths[HC_WALL] = 8;
        }
        int sc = h->init ? h->tb.sort_col : -1;
        bool desc = h->init && h->tb.sort_desc;
        if (h->init)
            vm_table_free(&h->tb);
        vm_table_init(&h->tb, h->wide ? HC_N : HC_N - 1, titles, widths, numeric);
        h->tb.cols[HC_MODEL].keep_tail = true; /* shrinks first, its end kept (issue 38) */
        h->tb.sort_col = sc;
        h->tb.sort_desc = desc;
        h->init = true;
    }
    int64_t keep = 0;
    if (h->tb.sel >= 0 && h->tb.nrows > 0) {
        int r = vm_table_row_of(&h->tb, h->tb.sel);
        if (r >= 0 && r < h->nids)
            keep = h->ids[r];
    }
    vm_table_clear(&h->tb);
    free(h->ids);
    h->ids = NULL;
    h->nids = 0;
    h->err[0] = 0;
    nb_db *db = NULL;
    nb_status st = {0};
    nb_run_row *rows = NULL;
    int n = 0;
    /* a model: its runs and every run derived from them (the whole bring-up) */
    nb_run_filter f = {.kind = h->kind[0] ? h->kind : NULL,
                       .since = h->since[0] ? h->since : NULL,
                       .limit = atoi(h->limit)};
    int64_t *set = NULL;
    int nset = 0;
    bool failed = nb_db_open(t->db[0] ? t->db : NULL, &db, &st) != NB_OK;
    if (!failed && h->model[0]) {
        nset = nb_db_model_runs(db, h->model, &set, &st);
        failed = nset < 0;
        f.ids = set;
        f.n_ids = nset;
    }
    if (!failed && (!h->model[0] || nset > 0))
        failed = nb_db_list(db, &f, &rows, &n, &st) != NB_OK;
    h->total = -1;
    if (!failed && f.limit > 0 && n >= f.limit) {
        /* the limit cut the list: how many there are, for the header (never silent) */
        nb_run_filter g = f;
        g.limit = 0;
        nb_run_row *all = NULL;
        int na = 0;
        nb_status st2 = {0};
        if (nb_db_list(db, &g, &all, &na, &st2) == NB_OK) {
            int c = 0;
            for (int i = 0; i < na; i++)
                if (!h->status[0] || !strcmp(h->status, all[i].status))
                    c++;
            h->total = c;
            nb_run_rows_free(all, na);
        }
    }
    free(set);
    if (failed) {
        snprintf(h->err, sizeof h->err, "%s", st.msg[0] ? st.msg : "cannot read the database");
        tui_status(t, true, "history: %s", h->err);
        nb_db_close(db);
        return;
    }
    nb_db_close(db);
    h->ids = calloc((size_t)n + 1, sizeof *h->ids);
    if (!h->ids) {
        nb_run_rows_free(rows, n);
        return;
    }
    int keep_row = -1;
    for (int i = 0; i < n; i++) {
        const nb_run_row *r = &rows[i];
        if (h->status[0] && strcmp(h->status, r->status))
            continue;
        char id[24], parent[24], started[32], wall[32];
        snprintf(id, sizeof id, "%lld", (long long)r->id);
        if (r->parent_id)
            snprintf(parent, sizeof parent, "%lld", (long long)r->parent_id);
        else
            snprintf(parent, sizeof parent, "-");
        /* 2026-12-01T10:09:01.585Z: all of it to the second, or month, day and time */
        snprintf(started, sizeof started, h->wide ? "%.19s" : "%.11s",
                 r->started + (h->wide || strlen(r->started) < 16 ? 0 : 5));
        char *tp = strchr(started, 'T');
        if (tp)
            *tp = ' ';
        fmt_wall(r->wall_ms, wall, sizeof wall);
        const char *cells[HC_N] = {marked(h, r->id) ? "*" : "", id, r->kind, r->status, started,
                                   wall, parent, base_name(r->model_path),
                                   r->error ? r->error : ""};
        double nums[HC_N] = {NAN, (double)r->id, NAN, NAN, NAN, r->wall_ms,
                             r->parent_id ? (double)r->parent_id : NAN, NAN, NAN};
        int tag = !strcmp(r->status, "ok") ? VM_TAG_NONE
                  : !strcmp(r->status, "running") ? VM_TAG_DIM : VM_TAG_BAD;
        int row = vm_table_add(&h->tb, cells, nums, tag);
        if (row < 0)
            break;
        h->ids[row] = r->id;
        h->nids = row + 1;
        if (r->id == keep)
            keep_row = row;
    }
    nb_run_rows_free(rows, n);
    if (h->tb.sort_col >= 0)
        vm_table_sort(&h->tb, h->tb.sort_col, h->tb.sort_desc);
    if (keep_row >= 0)
        for (int p = 0; p < h->tb.nrows; p++)
            if (vm_table_row_of(&h->tb, p) == keep_row)
                vm_table_select(&h->tb, p, h->page > 0 ? h->page : 10);
    char note[96];
    snprintf(note, sizeof note, "%d run%s", h->tb.nrows, h->tb.nrows == 1 ? "" : "s");
    tui_set_state(t, STEP_HISTORY, ST_OK, note);
}

static int64_t selected_id(tui *t)
{
    hist *h = H(t);
    if (!h || h->tb.sel < 0 || !h->tb.nrows)
        return 0;
    int r = vm_table_row_of(&h->tb, h->tb.sel);
    return r >= 0 && r < h->nids ? h->ids[r] : 0;
}

/* The newest run's id in the database (any kind, model or status), 0 when none or unreadable. */
static int64_t newest_run(tui *t)
{
    nb_db *db = NULL;
    nb_status st = {0};
    if (nb_db_open(t->db[0] ? t->db : NULL, &db, &st) != NB_OK)
        return 0;
    nb_run_filter f = {.limit = 1};
    nb_run_row *rows = NULL;
    int n = 0;
    int64_t id = 0;
    if (nb_db_list(db, &f, &rows, &n, &st) == NB_OK && n > 0)
        id = rows[0].id;
    nb_run_rows_free(rows, n);
    nb_db_close(db);
    return id;
}

/* New runs since History last looked (this workbench's steps, or another process): the list
   and its count read again, the filters back to their defaults and the marks cleared, said on
   the status line (issue 38: "9 runs", the filter and the marks kept after new runs). */
static void catch_up(tui *t)
{
    hist *h = H(t);
    if (!h)
        return;
    h->checked = time(NULL);
    int64_t n = newest_run(t);
    if (!h->newest || n <= h->newest) {
        if (n > h->newest)
            h->newest = n;
        return;
    }
    h->newest = n;
    bool filtered = h->kind[0] || h->model[0] || h->status[0] || h->since[0] ||
                    strcmp(h->limit, "500");
    bool marked = h->mark[0] || h->mark[1];
    h->kind[0] = h->model[0] = h->status[0] = h->since[0] = 0;
    snprintf(h->limit, sizeof h->limit, "500");
    h->mark[0] = h->mark[1] = 0;
    reload(t);
    if (h->tb.nrows)
        vm_table_select(&h->tb, 0, h->page > 0 ? h->page : 10);
    tui_status(t, false, "new runs: the list read again%s%s", filtered ? ", filters cleared" : "",
               marked ? ", marks cleared" : "");
}

static void enter(tui *t)
{
    reload(t);
    catch_up(t);
}

/* another step's job ended: the list and the sidebar's count, without a message (a
   database that cannot be read says so when History is opened) */
static void reread(tui *t)
{
    char keep[sizeof t->status];
    bool keep_error = t->status_error;
    snprintf(keep, sizeof keep, "%s", t->status);
    reload(t);
    tui_status(t, keep_error, "%s", keep);
}

static void draw(tui *t, WINDOW *w)
{
    hist *h = H(t);
    if (!h)
        return;
    int hh, ww;
    getmaxyx(w, hh, ww);
    if (!h->init || h->wide != (ww >= 100)) {
        h->wide = ww >= 100;
        reload(t);
    }
    if (time(NULL) - h->checked >= 2) /* runs another process recorded meanwhile */
        catch_up(t);
    char shown[96];
    if (h->total > h->tb.nrows) /* the limit cut the list: say so */
        snprintf(shown, sizeof shown, "%d run%s (newest %s of %d; f: limit)", h->tb.nrows,
                 h->tb.nrows == 1 ? "" : "s", h->limit, h->total);
    else
        snprintf(shown, sizeof shown, "%d run%s", h->tb.nrows, h->tb.nrows == 1 ? "" : "s");
    su_put(t, w, 0, 0, ww, A_BOLD, "History: %s   kind %s  model %s%s  status %s  since %s",
           shown, h->kind[0] ? h->kind : "any",
           h->model[0] ? base_name(h->model) : "any", h->model[0] ? " and derived" : "",
           h->status[0] ? h->status : "any",
           h->since[0] ? h->since : "any");
    int dim = tui_tag_attr(t, VM_TAG_DIM);
    if (h->mark[0] && h->mark[1])
        su_put(t, w, 1, 0, ww, 0, "marked: runs %lld and %lld (d: diff)",
               (long long)h->mark[0], (long long)h->mark[1]);
    else if (h->mark[0])
        su_put(t, w, 1, 0, ww, 0, "marked: run %lld (space on another run, then d: diff)",
               (long long)h->mark[0]);
    else if (ww >= 76)
        su_put(t, w, 1, 0, ww, dim,
               "Enter details  space mark+down  d diff  r report  f filter  x export  ? keys");
    else /* 80x24: every key named, shorter (issue 38: "x ex") */
        su_put(t, w, 1, 0, ww, dim, "Enter details  space mark  d diff  r report  f filter  x export");
    h->table_y = 2;
    int th = hh - h->table_y;
    if (th < 2)
        return;
    h->page = su_page(th);
    clamp_top(&h->tb, h->page);
    if (!h->tb.nrows) {
        su_put(t, w, h->table_y, 0, ww, 0, "%s",
               h->err[0] ? h->err : "no runs recorded (with these filters)");
        return;
    }
    if (h->wide)
        su_fit_cols(&h->tb, HC_ERROR, ww, 8);
    else
        su_fit_cols(&h->tb, HC_MODEL, ww, 8);
    tui_draw_table(t, w, &h->tb, h->table_y, 0, th, ww);
}

/* Appends a run's one-line summary ("12 calibrate ok embedding_model.onnx") to f. */
/* The detail view of run id: what `history show` prints (the row, lineage, parameters,
 * metrics, layers and artifacts), run as a child like every step. */
static void show_details(tui *t, int64_t id)
{
    hist *h = H(t);
    char a[24];
    snprintf(a, sizeof a, "%lld", (long long)id);
    char *argv[] = {"history", "show", a, NULL};
    h->job_kind = 3;
    h->diff_ids[0] = id;
    if (!tui_run(t, STEP_HISTORY, 0, argv, "history show"))
        h->job_kind = 0;
}

static void toggle_mark(tui *t)
{
    hist *h = H(t);
    int64_t id = selected_id(t);
    if (!id)
        return;
    if (h->mark[0] == id) {
        h->mark[0] = h->mark[1];
        h->mark[1] = 0;
    } else if (h->mark[1] == id) {
        h->mark[1] = 0;
    } else if (!h->mark[0]) {
        h->mark[0] = id;
    } else if (!h->mark[1]) {
        h->mark[1] = id;
    } else { /* a third: the older mark goes */
        h->mark[0] = h->mark[1];
        h->mark[1] = id;
    }
    reload(t); /* the mark column */
    vm_table_move(&h->tb, 1, h->page > 0 ? h->page : 10);
}

static void diff(tui *t)
{
    hist *h = H(t);
    if (!h->mark[0] || !h->mark[1]) {
        tui_status(t, true, "mark two runs with space first");
        return;
    }
    char a[24], b[24];
    int64_t lo = h->mark[0] < h->mark[1] ? h->mark[0] : h->mark[1];
    int64_t hi = h->mark[0] < h->mark[1] ? h->mark[1] : h->mark[0];
    snprintf(a, sizeof a, "%lld", (long long)lo);
    snprintf(b, sizeof b, "%lld", (long long)hi);
    char *argv[] = {"history", "diff", a, b, NULL};
    h->job_kind = 1;
    h->diff_ids[0] = lo;
    h->diff_ids[1] = hi;
    if (!tui_run(t, STEP_HISTORY, 0, argv, "history diff"))
        h->job_kind = 0;
}

/* where a save dialog starts: the model's work folder for what, else the current folder */
static void save_dir(tui *t, const char *what, char *start, size_t len)
{
    start[0] = 0;
    if (t->model[0])
        tui_workdir(t, what, start, len);
    if (!start[0] && !getcwd(start, len))
        snprintf(start, len, ".");
}

static void export_runs(tui *t)
{
    hist *h = H(t);
    char fmt[16] = "";
    tui_field fields[] = {
        {"format", fmt, sizeof fmt,
         "empty or csv: one row per run; json: runs with their metrics, layers and artifacts; "
         "layers: a CSV of the per-layer results", NULL},
    };
    if (!h->nids) {
        tui_status(t, true, "export: no runs listed");
        return;
    }
    char title[96];
    if (h->total > h->nids) /* exactly the listed ones, and the title says they are not all */
        snprintf(title, sizeof title, "Export the listed runs (%d of %d: f sets the limit)",
                 h->nids, h->total);
    else
        snprintf(title, sizeof title, "Export the listed runs (%d)", h->nids);
    if (!tui_form(t, title, fields, 1))
        return;
    size_t fl = strlen(fmt);
    while (fl && fmt[fl - 1] == ' ')
        fmt[--fl] = 0;
    if (!fmt[0])
        snprintf(fmt, sizeof fmt, "csv");
    bool layers = !strcmp(fmt, "layers");
    if (!layers && strcmp(fmt, "csv") && strcmp(fmt, "json")) {
        tui_status(t, true, "export: the format is csv, json or layers");
        return;
    }
    const char *ext = !strcmp(fmt, "json") ? ".json" : ".csv";
    char start[PATH_MAX];
    save_dir(t, "export", start, sizeof start);
    char path[PATH_MAX] = "";
    snprintf(path, sizeof path, "%s", layers ? "layers.csv" : !strcmp(fmt, "json") ? "runs.json"
                                                                                   : "runs.csv");
    if (!tui_pick_file(t, "Export to", start, ext, true, path, sizeof path))
        return;
    /* exactly the listed runs (every filter, the model's derived runs, the limit), through
       the run store's own export, into memory first: the file is written whole (renamed
       into place) or not at all, and never over the database itself */
    nb_db *db = NULL;
    nb_status st = {0};
    nb_run_filter f = {.ids = h->ids, .n_ids = h->nids};
    nb_err e = nb_db_open(t->db[0] ? t->db : NULL, &db, &st);
    if (!e)
        e = nb_db_export_file(db, &f, layers ? "csv" : fmt, layers, path, &st);
    nb_db_close(db);
    if (e) {
        tui_status(t, true, "export: %s", st.msg[0] ? st.msg : "failed");
        return;
    }
    tui_status(t, false, "exported %d run%s to %s", h->nids, h->nids == 1 ? "" : "s", path);
}

/* 'r': the HTML report (nanobench report, a job) of the two marked runs side by side, or of
   the selected one, into a file picked in a save dialog */
static void report(tui *t)
{
    hist *h = H(t);
    int64_t a = h->mark[0] && h->mark[1] ? (h->mark[0] < h->mark[1] ? h->mark[0] : h->mark[1])
                                         : selected_id(t);
    int64_t b = h->mark[0] && h->mark[1] ? (h->mark[0] < h->mark[1] ? h->mark[1] : h->mark[0])
                                         : 0;
    if (!a) {
        tui_status(t, true, "report: no run selected");
        return;
    }
    char start[PATH_MAX];
    save_dir(t, "report", start, sizeof start);
    char path[PATH_MAX] = "report.html";
    if (!tui_pick_file(t, b ? "Report of the two marked runs to" : "Report of the run to", start,
                       ".html", true, path, sizeof path))
        return;
    char ia[24], ib[24];
    snprintf(ia, sizeof ia, "%lld", (long long)a);
    snprintf(ib, sizeof ib, "%lld", (long long)b);
    char *argv[] = {"report", ia, b ? ib : "-o", b ? "-o" : path, b ? path : NULL, NULL};
    h->job_kind = 2;
    snprintf(h->report_path, sizeof h->report_path, "%s", path);
    if (!tui_run(t, STEP_HISTORY, 0, argv, "report"))
        h->job_kind = 0;
}

static void filter_form(tui *t)
{
    hist *h = H(t);
    char kind[16], model[PATH_MAX], status[16], since[32], limit[12];
    snprintf(kind, sizeof kind, "%s", h->kind);
    snprintf(model, sizeof model, "%s", h->model);
    snprintf(status, sizeof status, "%s", h->status);
    snprintf(since, sizeof since, "%s", h->since);
    snprintf(limit, sizeof limit, "%s", h->limit);
    tui_field fields[] = {
        {"kind", kind, sizeof kind,
         "info, infer, estimate, calibrate, compile, run, compare, bringup; empty: any", NULL},
        {"model", model, sizeof model,
         "a model path or 6+ hex digits of its SHA-256: its runs and every run derived from "
         "them (compile, run, compare); empty: any", NULL},
        {"status", status, sizeof status, "ok, error, running or crashed; empty: any", NULL},
        {"since", since, sizeof since, "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC); empty: any",
         NULL},
        {"limit", limit, sizeof limit, "the newest N runs; 0: all", NULL},
    };
    if (!tui_form(t, "History filter", fields, 5))
        return;
    char old[5][PATH_MAX];
    snprintf(old[0], sizeof old[0], "%s", h->kind);
    snprintf(old[1], sizeof old[1], "%s", h->model);
    snprintf(old[2], sizeof old[2], "%s", h->status);
    snprintf(old[3], sizeof old[3], "%s", h->since);
    snprintf(old[4], sizeof old[4], "%s", h->limit);
    snprintf(h->kind, sizeof h->kind, "%s", kind);
    snprintf(h->model, sizeof h->model, "%s", model);
    snprintf(h->status, sizeof h->status, "%s", status);
    snprintf(h->since, sizeof h->since, "%s", since);
    snprintf(h->limit, sizeof h->limit, "%s", limit);
    reload(t);
    if (h->err[0]) { /* a bad filter: back to the old one, the error stays on the status line */
        snprintf(h->kind, sizeof h->kind, "%s", old[0]);
        snprintf(h->model, sizeof h->model, "%s", old[1]);
        snprintf(h->status, sizeof h->status, "%s", old[2]);
        snprintf(h->since, sizeof h->since, "%s", old[3]);
        snprintf(h->limit, sizeof h->limit, "%s", old[4]);
        char keep[256];
        snprintf(keep, sizeof keep, "%s", h->err);
        reload(t);
        tui_status(t, true, "history filter: %s", keep);
    }
}

static bool key(tui *t, int ch)
{
    hist *h = H(t);
    if (!h)
        return false;
    switch (ch) {
    case '\n':
    case '\r':
    case KEY_ENTER: {
        int64_t id = selected_id(t);
        if (id)
            show_details(t, id);
        return true;
    }
    case ' ':
        toggle_mark(t);
        return true;
    case 'd':
        diff(t);
        return true;
    case 'f':
        filter_form(t);
        return true;
    case 'm':
        if (h->model[0] || !t->model[0])
            h->model[0] = 0;
        else
            snprintf(h->model, sizeof h->model, "%s", t->model);
        reload(t);
        return true;
    case 'c': /* clear the filters */
        h->kind[0] = h->model[0] = h->status[0] = h->since[0] = 0;
        reload(t);
        return true;
    case 'x':
        export_runs(t);
        return true;
    case 'r':
        report(t);
        return true;
    case 'g':
        reload(t);
        tui_status(t, false, "history reloaded");
        return true;
    }
    return tui_table_key(t, &h->tb, ch, h->page > 0 ? h->page : 10);
}

static void run(tui *t)
{
    reload(t);
    tui_status(t, false, "history reloaded");
}

static void job_done(tui *t, tui_job *j)
{
    hist *h = H(t);
    if (!h)
        return;
    int kind = h->job_kind;
    h->job_kind = 0;
    bool ok = j->done && !j->cancelled && j->status == 0;
    if (!ok) {
        reload(t);
        if (j->cancelled)
            tui_status(t, false, "%s: cancelled", j->title);
        else
            tui_status(t, true, "%s: %s", j->title, tui_job_error(j));
        return;
    }
    if (kind == 1) {
        char title[64];
        snprintf(title, sizeof title, "diff: run %lld (A) vs run %lld (B)",
                 (long long)h->diff_ids[0], (long long)h->diff_ids[1]);
        /* the values too wide for the viewer folded under their key, then wrapped: B's
           value in sight at 80 columns (issue 38) */
        char *folded = vm_diff_fold(j->out, COLS - 6);
        tui_show_wrapped(t, title, folded ? folded : j->out ? j->out : "");
        free(folded);
    }
    if (kind == 3) {
        char title[64];
        snprintf(title, sizeof title, "run %lld", (long long)h->diff_ids[0]);
        tui_show_wrapped(t, title, j->out ? j->out : "");
    }
    reload(t);
    if (kind == 1)
        tui_status(t, false, "diff of runs %lld and %lld", (long long)h->diff_ids[0],
                   (long long)h->diff_ids[1]);
    else if (kind == 2)
        tui_status(t, false, "report written: %s (open it in a browser)", h->report_path);
}

static void mouse(tui *t, int y, int x)
{
    (void)x;
    hist *h = H(t);
    if (h && h->page > 0)
        su_table_click(&h->tb, y, h->table_y, h->page + 1);
}

static void cleanup(tui *t)
{
    hist *h = t->scr[STEP_HISTORY];
    if (!h)
        return;
    if (h->init)
        vm_table_free(&h->tb);
    free(h->ids);
    free(h);
    t->scr[STEP_HISTORY] = NULL;
}

static const tui_keyhelp help[] = {
    {"Enter", "details of the run: parameters, metrics, artifacts, lineage"},
    {"space", "mark the run and move down (two marks: the older one goes on a third)"},
    {"d", "diff the two marked runs (history diff)"},
    {"f", "filter: kind, model, status, since (date), limit"},
    {"m", "the current model's bring-up: its runs and every run derived from them (again: "
          "any model)"},
    {"c", "clear the filters"},
    {"x", "export the listed runs (as filtered) to CSV, JSON or a per-layer CSV (save dialog)"},
    {"r", "HTML report of the selected run's bring-up, or of the two marked side by side"},
    {"g, F5, r", "reload from the database"},
    {"arrows j k PgUp PgDn", "move"},
    {"< > s", "sort column left/right, reverse"},
    {"/ n N", "search, next, previous"},
    {NULL, NULL},
};

const tui_screen scr_history = {
    .title = "History",
    .enter = enter,
    .draw = draw,
    .key = key,
    .run = run,
    .job_done = job_done,
    .mouse = mouse,
    .help = help,
    .cleanup = cleanup,
    .reread = reread,
};
