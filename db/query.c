/* nanobench run store: reading runs, lineage, removal (include/nb/db.h). */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_internal.h"
#include "nb/tensor.h"
#include "nb/ir.h"

static const char *const kinds[] = {"info",    "infer", "estimate", "calibrate",
                                    "compile", "run",   "compare",  "bringup"};

/* Text read back is one line: control characters (a newline or an escape sequence in a
 * hand-edited file, or a file name) become '?', so that no listing can be broken or drive
 * the terminal. Recorded JSON escapes its own. */
static char *one_line(char *t)
{
    for (char *p = t; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return t;
}

static char *dup_col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? one_line(strdup((const char *)t)) : NULL;
}

/* A column the schema declares NOT NULL: "" when a hand-edited file holds NULL anyway. */
static char *dup_text(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return one_line(strdup(t ? (const char *)t : ""));
}

static void copy_col(sqlite3_stmt *s, int i, char *dst, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    snprintf(dst, len, "%s", t ? (const char *)t : "");
    one_line(dst);
}

static double col_double(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

/* Steps s to the end, appending one elem-sized row per result row (filled by fill) to
 * *rows; finalizes s. On failure the rows read so far stay for the caller to free. */
static nb_err read_rows(nb_db *db, sqlite3_stmt *s, size_t elem, void **rows, int *n,
                        void (*fill)(sqlite3_stmt *, void *), nb_status *st)
{
    int cap = 0, rc;
    nb_err e = NB_OK;
    *rows = NULL;
    *n = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!nb_grow(rows, &cap, *n, elem)) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        fill(s, (char *)*rows + elem * (size_t)(*n)++);
    }
    if (!e && rc != SQLITE_DONE)
        e = nb_db_fail(db, st, "cannot read");
    sqlite3_finalize(s);
    return e;
}

/* A 'running' row whose process is gone (same host, pid not alive) shows as 'crashed'. */
static void derive_status(nb_run_row *r)
{
    if (!strcmp(r->status, "error") && r->error &&
        (!strncmp(r->error, "interrupted (", 13) || strstr(r->error, ": interrupted ("))) {
        snprintf(r->status, sizeof r->status, "interrupted");
        return;
    }
    if (strcmp(r->status, "running") != 0 || r->pid <= 0 || !r->host)
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (strcmp(host, r->host) != 0 || r->pid > INT_MAX)
        return;
    if (nb_pid_gone((long)r->pid)) /* a zombie too: dead, not yet reaped */
        snprintf(r->status, sizeof r->status, "crashed");
}

#define RUN_COLS                                                                            \
    "SELECT r.id, r.parent_id, r.kind, r.status, r.started, r.finished, r.wall_ms, m.path, " \
    "m.sha256, r.params, r.error, r.version, r.host, r.pid FROM runs r "                     \
    "LEFT JOIN models m ON m.id = r.model_id "

static void read_row(sqlite3_stmt *s, void *row)
{
    nb_run_row *r = row;
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(s, 0);
    r->parent_id = sqlite3_column_int64(s, 1);
    copy_col(s, 2, r->kind, sizeof r->kind);
    copy_col(s, 3, r->status, sizeof r->status);
    copy_col(s, 4, r->started, sizeof r->started);
    copy_col(s, 5, r->finished, sizeof r->finished);
    r->wall_ms = col_double(s, 6);
    r->model_path = dup_col(s, 7);
    r->model_sha256 = dup_col(s, 8);
    r->params = dup_col(s, 9);
    r->error = dup_col(s, 10);
    r->version = dup_col(s, 11);
    r->host = dup_col(s, 12);
    r->pid = sqlite3_column_int64(s, 13);
    derive_status(r);
}

/* A real UTC date or time: YYYY-MM-DD, optionally THH:MM, :SS, .mmm and a final Z (the
 * form history prints). The calendar is checked (2026-02-30 is refused). */
static bool valid_since(const char *s)
{
    static const char *const forms[] = {"dddd-dd-dd", "dddd-dd-ddTdd:dd", "dddd-dd-ddTdd:dd:dd",
                                        "dddd-dd-ddTdd:dd:dd.ddd"};
    size_t n = strlen(s);
    if (n && s[n - 1] == 'Z')
        n--;
    bool shape = false;
    for (size_t f = 0; f < 4 && !shape; f++) {
        const char *p = forms[f];
        if (strlen(p) != n)
            continue;
        shape = true;
        for (size_t i = 0; i < n && shape; i++)
            shape = p[i] == 'd' ? isdigit((unsigned char)s[i]) : s[i] == p[i];
    }
    if (!shape)
        return false;
    int y = atoi(s), mo = atoi(s + 5), d = atoi(s + 8);
    int h = n > 10 ? atoi(s + 11) : 0, mi = n > 10 ? atoi(s + 14) : 0;
    int se = n > 16 ? atoi(s + 17) : 0;
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
        return false;
    return h < 24 && mi < 60 && se < 60;
}

static bool is_hex_prefix(const char *s)
{
    size_t n = strlen(s);
    if (n < 6 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

nb_err nb_db_list(nb_db *db, const nb_run_filter *f, nb_run_row **rows, int *n,
                  nb_status *st)
{
    static const nb_run_filter none = {0};
    if (!f)
        f = &none;
    *rows = NULL;
    *n = 0;
    if (f->kind) {
        bool ok = false;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            ok |= !strcmp(kinds[i], f->kind);
        if (!ok)
            return nb_fail(st, NB_ERR_ARG, "--kind %s: not a run kind (info, infer, estimate, "
                           "calibrate, compile, run, compare, bringup)", f->kind);
    }
    char abs[PATH_MAX];
    if (f->model && !realpath(f->model, abs) && !is_hex_prefix(f->model))
        return nb_fail(st, NB_ERR_ARG, "--model %s: no such file, and not a SHA-256 prefix "
                       "(6 to 64 hex digits)", f->model);
    if (f->since && !valid_since(f->since))
        return nb_fail(st, NB_ERR_ARG, "--since %s: expected a UTC date YYYY-MM-DD or "
                       "YYYY-MM-DDTHH:MM[:SS]", f->since);
    /* the id set as a JSON array for json_each */
    char *ids = NULL;
    if (f->n_ids > 0) {
        size_t cap = (size_t)f->n_ids * 21 + 3, o = 0;
        if (!f->ids || !(ids = malloc(cap)))
            return f->ids ? nb_fail(st, NB_ERR_NOMEM, "out of memory")
                          : nb_fail(st, NB_ERR_ARG, "run filter: n_ids without ids");
        ids[o++] = '[';
        for (int i = 0; i < f->n_ids; i++)
            o += (size_t)snprintf(ids + o, cap - o, "%s%lld", i ? "," : "", (long long)f->ids[i]);
        snprintf(ids + o, cap - o, "]");
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, RUN_COLS
                           "WHERE (?1 IS NULL OR r.kind = ?1) AND (?2 IS NULL OR m.path = ?2 "
                           "OR m.sha256 LIKE ?3) AND (?4 IS NULL OR r.started >= ?4) "
                           "AND (?6 IS NULL OR r.id IN (SELECT value FROM json_each(?6))) "
                           "ORDER BY r.id DESC LIMIT ?5", -1, &s, NULL) != SQLITE_OK) {
        free(ids);
        return nb_db_fail(db, st, "cannot read");
    }
    if (ids)
        sqlite3_bind_text(s, 6, ids, -1, free);
    char like[80];
    if (f->kind)
        sqlite3_bind_text(s, 1, f->kind, -1, SQLITE_TRANSIENT);
    if (f->model) {
        sqlite3_bind_text(s, 2, realpath(f->model, abs) ? abs : f->model, -1, SQLITE_TRANSIENT);
        if (is_hex_prefix(f->model)) {
            snprintf(like, sizeof like, "%s%%", f->model);
            for (char *p = like; *p; p++)
                *p = (char)tolower((unsigned char)*p);
            sqlite3_bind_text(s, 3, like, -1, SQLITE_TRANSIENT);
        }
    }
    if (f->since)
        sqlite3_bind_text(s, 4, f->since, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 5, f->limit > 0 ? f->limit : -1);
    nb_err e = read_rows(db, s, sizeof(nb_run_row), (void **)rows, n, read_row, st);
    if (e) {
        nb_run_rows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return e;
}

nb_err nb_db_get(nb_db *db, int64_t id, nb_run_row *row, nb_status *st)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, RUN_COLS "WHERE r.id = ?", -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    nb_err e = NB_OK;
    if (rc == SQLITE_ROW)
        read_row(s, row);
    else if (rc == SQLITE_DONE)
        e = nb_fail(st, NB_ERR_ARG, "%s: no run %lld", db->path, (long long)id);
    else
        e = nb_db_fail(db, st, "cannot read");
    sqlite3_finalize(s);
    return e;
}

void nb_run_row_clear(nb_run_row *r)
{
    free(r->model_path);
    free(r->model_sha256);
    free(r->params);
    free(r->error);
    free(r->version);
    free(r->host);
    r->model_path = r->model_sha256 = r->params = r->error = r->version = r->host = NULL;
}

void nb_run_rows_free(nb_run_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++)
        nb_run_row_clear(&rows[i]);
    free(rows);
}

static void read_metric(sqlite3_stmt *s, void *row)
{
    nb_metric_row *m = row;
    m->name = dup_text(s, 0);
    m->unit = dup_text(s, 1);
    m->value = col_double(s, 2);
}

nb_err nb_db_metrics(nb_db *db, int64_t run, nb_metric_row **rows, int *n, nb_status *st)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "SELECT name, unit, value FROM metrics WHERE run_id = ? "
                           "ORDER BY rowid", -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read");
    sqlite3_bind_int64(s, 1, run);
    return read_rows(db, s, sizeof(nb_metric_row), (void **)rows, n, read_metric, st);
}

void nb_metric_rows_free(nb_metric_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].name);
        free(rows[i].unit);
    }
    free(rows);
}

nb_err nb_db_layers(nb_db *db, int64_t run, nb_layer_row **rows, int *n, nb_status *st)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "SELECT l.id, l.layer, l.op_type, m.name, m.value FROM "
                           "layer_results l LEFT JOIN layer_metrics m ON m.layer_result_id = "
                           "l.id WHERE l.run_id = ? ORDER BY l.seq, m.rowid", -1, &s,
                           NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read");
    sqlite3_bind_int64(s, 1, run);
    int cap = 0, rc;
    int64_t last = -1;
    nb_err e = NB_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (id != last) {
            if (!nb_grow((void **)rows, &cap, *n, sizeof(nb_layer_row))) {
                e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
                break;
            }
            nb_layer_row *l = &(*rows)[(*n)++];
            memset(l, 0, sizeof *l);
            l->layer = dup_text(s, 1);
            l->op_type = dup_text(s, 2);
            last = id;
        }
        if (sqlite3_column_type(s, 3) == SQLITE_NULL)
            continue;
        nb_layer_row *l = &(*rows)[*n - 1];
        nb_metric_row *m = realloc(l->m, sizeof(nb_metric_row) * (size_t)(l->n + 1));
        if (!m) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        l->m = m;
        m[l->n].name = dup_text(s, 3);
        m[l->n].unit = strdup("");
        m[l->n].value = col_double(s, 4);
        l->n++;
    }
    if (!e && rc != SQLITE_DONE)
        e = nb_db_fail(db, st, "cannot read");
    sqlite3_finalize(s);
    return e;
}

void nb_layer_rows_free(nb_layer_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].layer);
        free(rows[i].op_type);
        nb_metric_rows_free(rows[i].m, rows[i].n);
    }
    free(rows);
}

static void read_artifact(sqlite3_stmt *s, void *row)
{
    nb_artifact_row *a = row;
    a->role = dup_text(s, 0);
    a->path = dup_text(s, 1);
    a->sha256 = dup_col(s, 2);
    a->bytes = sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 3);
}

nb_err nb_db_artifacts(nb_db *db, int64_t run, nb_artifact_row **rows, int *n,
                       nb_status *st)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "SELECT role, path, sha256, bytes FROM artifacts WHERE "
                           "run_id = ? ORDER BY id", -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read");
    sqlite3_bind_int64(s, 1, run);
    return read_rows(db, s, sizeof(nb_artifact_row), (void **)rows, n, read_artifact, st);
}

void nb_artifact_rows_free(nb_artifact_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        free(rows[i].role);
        free(rows[i].path);
        free(rows[i].sha256);
    }
    free(rows);
}

static void read_id(sqlite3_stmt *s, void *row) { *(int64_t *)row = sqlite3_column_int64(s, 0); }

static nb_err id_list(nb_db *db, const char *sql, int64_t run, int64_t **ids, int *n,
                      nb_status *st)
{
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read");
    sqlite3_bind_int64(s, 1, run);
    return read_rows(db, s, sizeof(int64_t), (void **)ids, n, read_id, st);
}

nb_err nb_db_lineage(nb_db *db, int64_t run, int64_t **up, int *n_up, int64_t **down,
                     int *n_down, nb_status *st)
{
    /* UNION, not UNION ALL: a cycle (impossible through the API, possible in a hand-edited
       file) ends at the first id seen twice; rows come out in the order they were found,
       nearest first */
    nb_err e = id_list(db, "WITH RECURSIVE a(id) AS (SELECT parent_id FROM runs WHERE id = ?1 "
                       "AND parent_id IS NOT NULL UNION SELECT r.parent_id FROM runs r JOIN a "
                       "ON r.id = a.id WHERE r.parent_id IS NOT NULL) SELECT id FROM a WHERE "
                       "id != ?1", run, up, n_up, st);
    if (e)
        return e;
    e = id_list(db, "WITH RECURSIVE c(id) AS (SELECT id FROM runs WHERE parent_id = ?1 UNION "
                "SELECT r.id FROM runs r JOIN c ON r.parent_id = c.id) SELECT id FROM c WHERE "
                "id != ?1", run, down, n_down, st);
    if (e) {
        free(*up);
        *up = NULL;
        *n_up = 0;
    }
    return e;
}

static nb_err remove_body(nb_db *db, void *arg, nb_status *st)
{
    int64_t id = *(int64_t *)arg;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "DELETE FROM runs WHERE id = ?", -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot delete");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return nb_db_fail(db, st, "cannot delete");
    if (sqlite3_changes(db->h) == 0)
        return nb_fail(st, NB_ERR_ARG, "%s: no run %lld", db->path, (long long)id);
    return NB_OK;
}

nb_err nb_db_remove(nb_db *db, int64_t run, nb_status *st)
{
    return nb_db_write(db, remove_body, &run, st);
}
