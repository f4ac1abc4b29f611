/* Run store: recording, filters, lineage, export parsed back (libcsv, jansson), migrations
 * from version 1, a newer database refused untouched, corrupt / locked / read-only files,
 * 4 processes x 250 runs at once, and a writer killed with SIGKILL mid-run. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"
#include <csv.h>
#include <jansson.h>
#include <sqlite3.h>

#include "nb/db.h"


static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int64_t count(const char *dbpath, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(dbpath, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

/* Records one finished run: metrics and layers as given. */
static int64_t record(nb_db *db, const char *kind, const char *model, int64_t parent,
                      const char *params, double cos, int n_layers)
{
    nb_status st = {0};
    nb_run *r;
    if (nb_run_begin(db, kind, model, parent, params, &r, &st))
        fail_msg("%s", st.msg);
    int64_t id = nb_run_id(r);
    assert_int_equal(nb_run_metric(r, "min_cosine", cos, "", &st), NB_OK);
    assert_int_equal(nb_run_metric(r, "exeom_bytes", 1234, "B", &st), NB_OK);
    for (int i = 0; i < n_layers; i++) {
        char name[32];
        snprintf(name, sizeof name, "conv%d", i);
        const char *mn[2] = {"cosine_similarity", "max_abs_err"};
        double mv[2] = {cos + 0.001 * i, 0.5 * i};
        assert_int_equal(nb_run_layer(r, name, "Conv", 2, mn, mv, &st), NB_OK);
    }
    if (nb_run_end(r, true, NULL, &st))
        fail_msg("%s", st.msg);
    return id;
}

static void test_record_and_read(void **state)
{
    (void)state;
    char dbp[512], model[512], other[512];
    path_of(dbp, sizeof dbp, "a.db");
    path_of(model, sizeof model, "m.onnx");
    path_of(other, sizeof other, "other.onnx");
    write_file(model, "not really a model, but hashed all the same");
    write_file(other, "another file");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    assert_int_equal(nb_db_version(db), NB_DB_SCHEMA_VERSION);
    /* calibrate -> compile -> run -> compare, and a second compile from the calibration */
    int64_t cal = record(db, "calibrate", model, 0, "{\"algo\":\"ifmr\"}", 0.99, 0);
    int64_t cmp = record(db, "compile", model, cal, "{\"soc\":\"Ascend035A\"}", 0.99, 0);
    int64_t run = record(db, "run", model, cmp, NULL, 0.99, 0);
    int64_t cmpr = record(db, "compare", model, run, "{\"note\":\"a, \\\"quoted\\\"\\nline\"}",
                          0.95, 3);
    int64_t cmp2 = record(db, "compile", other, cal, NULL, 0.98, 0);
    /* an error run keeps its message */
    nb_run *r;
    assert_int_equal(nb_run_begin(db, "infer", model, 0, NULL, &r, &st), NB_OK);
    int64_t bad = nb_run_id(r);
    assert_int_equal(nb_run_end(r, false, "m.onnx: node 'x': broken", &st), NB_OK);
    /* a folder artifact (a dump tree): path kept, no hash, size -1; a file: its hash */
    char dir[512];
    path_of(dir, sizeof dir, "dumps");
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(nb_run_begin(db, "compare", NULL, 0, NULL, &r, &st), NB_OK);
    int64_t withdir = nb_run_id(r);
    assert_int_equal(nb_run_artifact(r, "dump", dir, &st), NB_OK);
    assert_int_equal(nb_run_artifact(r, "output", other, &st), NB_OK);
    assert_int_equal(nb_run_end(r, true, NULL, &st), NB_OK);
    nb_artifact_row *ar;
    int na;
    assert_int_equal(nb_db_artifacts(db, withdir, &ar, &na, &st), NB_OK);
    assert_int_equal(na, 2);
    assert_string_equal(ar[0].role, "dump");
    assert_null(ar[0].sha256);
    assert_int_equal(ar[0].bytes, -1);
    assert_int_equal(ar[1].bytes, 12); /* "another file" */
    assert_non_null(ar[1].sha256);
    nb_artifact_rows_free(ar, na);
    nb_run_row row;
    assert_int_equal(nb_db_get(db, bad, &row, &st), NB_OK);
    assert_string_equal(row.status, "error");
    assert_string_equal(row.error, "m.onnx: node 'x': broken");
    assert_true(row.wall_ms >= 0);
    nb_run_row_clear(&row);
    /* filters */
    nb_run_row *rows;
    int n;
    nb_run_filter f = {.kind = "compile"};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 2);
    assert_true(rows[0].id == cmp2 && rows[1].id == cmp); /* newest first */
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.model = other};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 1);
    char sha[65];
    assert_int_equal(nb_sha256_file(model, sha, NULL, &st), NB_OK);
    sha[8] = 0;
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.model = sha}; /* an 8-digit prefix of the hash */
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 5);
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.since = "2000-01-01", .limit = 2};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 2);
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.since = "2999-01-01T00:00"};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 0);
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.since = "yesterday"};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_ERR_ARG);
    f = (nb_run_filter){.kind = "bake"};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_ERR_ARG);
    /* a set of ids, with the other filters on top */
    const int64_t set[] = {cmp, run, 999999};
    f = (nb_run_filter){.ids = set, .n_ids = 3};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 2);
    assert_true(rows[0].id == run && rows[1].id == cmp);
    nb_run_rows_free(rows, n);
    f = (nb_run_filter){.ids = set, .n_ids = 3, .kind = "compile"};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    assert_int_equal(n, 1);
    assert_true(rows[0].id == cmp);
    nb_run_rows_free(rows, n);
    /* lineage: compare <- run <- compile <- calibrate; calibrate -> both compiles -> ... */
    int64_t *up, *down;
    int nu, nd;
    assert_int_equal(nb_db_lineage(db, cmpr, &up, &nu, &down, &nd, &st), NB_OK);
    assert_int_equal(nu, 3);
    assert_true(up[0] == run && up[1] == cmp && up[2] == cal);
    assert_int_equal(nd, 0);
    free(up);
    free(down);
    assert_int_equal(nb_db_lineage(db, cal, &up, &nu, &down, &nd, &st), NB_OK);
    assert_int_equal(nu, 0);
    assert_int_equal(nd, 4); /* cmp, cmp2 (depth 1), run (2), compare (3) */
    assert_true(down[0] == cmp && down[1] == cmp2 && down[2] == run && down[3] == cmpr);
    free(up);
    free(down);
    /* layers in order with their metrics */
    nb_layer_row *l;
    int nl;
    assert_int_equal(nb_db_layers(db, cmpr, &l, &nl, &st), NB_OK);
    assert_int_equal(nl, 3);
    assert_string_equal(l[2].layer, "conv2");
    assert_int_equal(l[2].n, 2);
    assert_float_equal(l[2].m[0].value, 0.952, 1e-12);
    assert_float_equal(l[2].m[1].value, 1.0, 1e-12);
    nb_layer_rows_free(l, nl);
    /* a hand-edited cycle (the run its own grandparent) ends: each id once, never itself */
    {
        sqlite3 *h;
        char sql[128];
        assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
        snprintf(sql, sizeof sql, "UPDATE runs SET parent_id = %lld WHERE id = %lld",
                 (long long)cmp, (long long)cal);
        assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(h);
        assert_int_equal(nb_db_lineage(db, cmp, &up, &nu, &down, &nd, &st), NB_OK);
        assert_int_equal(nu, 1); /* cal, whose parent is cmp again */
        assert_true(up[0] == cal);
        assert_int_equal(nd, 4); /* run, cal (a child of cmp now), then compare, cmp2 */
        free(up);
        free(down);
        snprintf(sql, sizeof sql, "UPDATE runs SET parent_id = NULL WHERE id = %lld",
                 (long long)cal);
        assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(h);
    }
    /* a parent that does not exist is refused (foreign key) */
    assert_int_equal(nb_run_begin(db, "run", NULL, 999999, NULL, &r, &st), NB_ERR_ARG);
    /* rm: the child keeps its row, without a parent */
    assert_int_equal(nb_db_remove(db, run, &st), NB_OK);
    assert_int_equal(nb_db_get(db, cmpr, &row, &st), NB_OK);
    assert_int_equal(row.parent_id, 0);
    nb_run_row_clear(&row);
    assert_int_equal(nb_db_remove(db, run, &st), NB_ERR_ARG);
    nb_db_close(db);
    assert_int_equal(count(dbp, "SELECT COUNT(*) FROM layer_results"), 3);
}

/* ---- export, parsed back ---- */

typedef struct csv_rows {
    char cells[32][16][256];
    int nrow, ncol[32], col;
} csv_rows;

static void csv_cell(void *s, size_t len, void *data)
{
    csv_rows *c = data;
    if (c->nrow < 32 && c->col < 16) {
        size_t n = len < 255 ? len : 255;
        memcpy(c->cells[c->nrow][c->col], s, n);
        c->cells[c->nrow][c->col][n] = 0;
    }
    c->col++;
}

static void csv_row_end(int ch, void *data)
{
    (void)ch;
    csv_rows *c = data;
    if (c->nrow < 32)
        c->ncol[c->nrow] = c->col;
    c->nrow++;
    c->col = 0;
}

static int col_index(const csv_rows *c, const char *name)
{
    for (int i = 0; i < c->ncol[0]; i++)
        if (!strcmp(c->cells[0][i], name))
            return i;
    return -1;
}

static void test_export_parsed_back(void **state)
{
    (void)state;
    char dbp[512], model[512];
    path_of(dbp, sizeof dbp, "export.db");
    path_of(model, sizeof model, "m2.onnx");
    write_file(model, "model bytes");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    int64_t a = record(db, "compile", model, 0, "{\"out\":\"x,y\"}", 0.5, 0);
    int64_t b = record(db, "compare", model, a, "{\"note\":\"say \\\"hi\\\"\\nbye\"}", 0.25, 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(nb_db_export_csv(db, NULL, false, f, &st), NB_OK);
    fclose(f);
    struct csv_parser p;
    csv_rows *c = calloc(1, sizeof *c);
    assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
    assert_int_equal(csv_parse(&p, buf, len, csv_cell, csv_row_end, c), len);
    assert_int_equal(csv_fini(&p, csv_cell, csv_row_end, c), 0);
    csv_free(&p);
    assert_int_equal(c->nrow, 3); /* header + 2 runs, oldest first */
    assert_int_equal(c->ncol[1], c->ncol[0]);
    assert_int_equal(c->ncol[2], c->ncol[0]);
    int ci = col_index(c, "run_id"), cp = col_index(c, "params"),
        cm = col_index(c, "min_cosine"), cb = col_index(c, "exeom_bytes [B]"),
        cpar = col_index(c, "parent_id");
    assert_true(ci >= 0 && cp >= 0 && cm >= 0 && cb >= 0 && cpar >= 0);
    assert_int_equal(atoll(c->cells[1][ci]), a);
    assert_int_equal(atoll(c->cells[2][ci]), b);
    assert_int_equal(atoll(c->cells[2][cpar]), a);
    assert_string_equal(c->cells[1][cp], "{\"out\":\"x,y\"}");
    /* a quote and a newline survive the round trip */
    assert_string_equal(c->cells[2][cp], "{\"note\":\"say \\\"hi\\\"\\nbye\"}");
    assert_float_equal(atof(c->cells[2][cm]), 0.25, 0);
    assert_float_equal(atof(c->cells[1][cb]), 1234, 0);
    free(buf);
    /* per-layer CSV */
    memset(c, 0, sizeof *c);
    f = open_memstream(&buf, &len);
    assert_int_equal(nb_db_export_csv(db, NULL, true, f, &st), NB_OK);
    fclose(f);
    assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
    assert_int_equal(csv_parse(&p, buf, len, csv_cell, csv_row_end, c), len);
    csv_fini(&p, csv_cell, csv_row_end, c);
    csv_free(&p);
    assert_int_equal(c->nrow, 3); /* header + conv0, conv1 */
    assert_string_equal(c->cells[2][col_index(c, "layer")], "conv1");
    assert_float_equal(atof(c->cells[2][col_index(c, "max_abs_err")]), 0.5, 0);
    free(buf);
    free(c);
    /* JSON */
    f = open_memstream(&buf, &len);
    assert_int_equal(nb_db_export_json(db, NULL, f, &st), NB_OK);
    fclose(f);
    json_error_t je;
    json_t *arr = json_loadb(buf, len, 0, &je);
    assert_non_null(arr);
    assert_int_equal(json_array_size(arr), 2);
    json_t *rb = json_array_get(arr, 1);
    assert_int_equal(json_integer_value(json_object_get(rb, "run_id")), b);
    assert_int_equal(json_integer_value(json_object_get(rb, "parent_id")), a);
    assert_string_equal(json_string_value(json_object_get(json_object_get(rb, "params"), "note")),
                        "say \"hi\"\nbye");
    json_t *lay = json_object_get(rb, "layers");
    assert_int_equal(json_array_size(lay), 2);
    assert_float_equal(json_real_value(json_object_get(
                           json_object_get(json_array_get(lay, 1), "metrics"), "cosine_similarity")),
                       0.251, 1e-12);
    json_t *met = json_object_get(rb, "metrics");
    assert_string_equal(json_string_value(json_object_get(json_array_get(met, 1), "unit")), "B");
    json_decref(arr);
    free(buf);
    nb_db_close(db);
}

/* ---- migrations and versions ---- */

static void test_migration_from_v1(void **state)
{
    (void)state;
    char dbp[512];
    path_of(dbp, sizeof dbp, "v1.db");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open_version(dbp, 1, &db, &st), NB_OK);
    assert_int_equal(nb_db_version(db), 1);
    nb_db_close(db);
    /* a version-1 row, written as a version-1 nanobench would */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "INSERT INTO runs(kind, params, started, status, version) "
                                  "VALUES ('compile', '{}', '2026-01-02T03:04:05.000Z', 'ok', "
                                  "'0.0.1')", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "SELECT pid FROM runs", NULL, NULL, NULL), SQLITE_ERROR);
    sqlite3_close(h);
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    assert_int_equal(nb_db_version(db), 2);
    nb_run_row row;
    assert_int_equal(nb_db_get(db, 1, &row, &st), NB_OK);
    assert_string_equal(row.kind, "compile");
    assert_string_equal(row.status, "ok");
    assert_null(row.host);
    assert_int_equal(row.pid, 0);
    nb_run_row_clear(&row);
    nb_db_close(db);
    assert_int_equal(count(dbp, "PRAGMA user_version"), 2);
}

static void test_newer_refused_untouched(void **state)
{
    (void)state;
    char dbp[512];
    path_of(dbp, sizeof dbp, "newer.db");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    nb_db_close(db);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    char before[65], after[65];
    struct stat s1, s2;
    assert_int_equal(nb_sha256_file(dbp, before, NULL, &st), NB_OK);
    assert_int_equal(stat(dbp, &s1), 0);
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_ERR_DB);
    assert_null(db);
    assert_non_null(strstr(st.msg, "version 99 is newer"));
    assert_int_equal(nb_sha256_file(dbp, after, NULL, &st), NB_OK);
    assert_int_equal(stat(dbp, &s2), 0);
    assert_string_equal(before, after);
    assert_true(s1.st_mtim.tv_sec == s2.st_mtim.tv_sec && s1.st_mtim.tv_nsec == s2.st_mtim.tv_nsec);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", dbp);
    assert_int_equal(access(wal, F_OK), -1); /* not even switched to WAL */
}

static void test_bad_files(void **state)
{
    (void)state;
    char dbp[512];
    nb_status st = {0};
    nb_db *db;
    /* corrupt: random bytes */
    path_of(dbp, sizeof dbp, "corrupt.db");
    FILE *f = fopen(dbp, "wb");
    uint32_t x = 12345;
    for (int i = 0; i < 8192; i++) {
        x = x * 1103515245u + 12345u;
        fputc((int)(x >> 24), f);
    }
    fclose(f);
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_ERR_DB);
    assert_non_null(strstr(st.msg, "corrupt.db"));
    assert_non_null(strstr(st.msg, "not a nanobench database"));
    /* a folder */
    path_of(dbp, sizeof dbp, "");
    assert_int_equal(nb_db_open(tmpdir, &db, &st), NB_ERR_DB);
    /* locked: another connection holds an exclusive lock past the busy timeout */
    path_of(dbp, sizeof dbp, "locked.db");
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    nb_run *r;
    time_t t0 = time(NULL);
    assert_int_equal(nb_run_begin(db, "run", NULL, 0, NULL, &r, &st), NB_ERR_DB);
    assert_true(time(NULL) - t0 <= 5); /* the test sets NANOBENCH_DB_TIMEOUT_MS=300 */
    assert_non_null(strstr(st.msg, "locked"));
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    assert_int_equal(nb_run_begin(db, "run", NULL, 0, NULL, &r, &st), NB_OK);
    assert_int_equal(nb_run_end(r, true, NULL, &st), NB_OK);
    nb_db_close(db);
    /* read-only: root writes through file modes, so only checked for other users */
    if (geteuid() != 0) {
        path_of(dbp, sizeof dbp, "ro.db");
        assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
        nb_db_close(db);
        char wal[600];
        snprintf(wal, sizeof wal, "rm -f '%s-wal' '%s-shm'", dbp, dbp);
        assert_int_equal(system(wal), 0);
        chmod(dbp, 0444);
        if (nb_db_open(dbp, &db, &st) == NB_OK) {
            assert_int_equal(nb_run_begin(db, "run", NULL, 0, NULL, &r, &st), NB_ERR_DB);
            nb_db_close(db);
        }
        assert_non_null(strstr(st.msg, "ro.db"));
    }
}

/* ---- several writers, and a writer killed ---- */

static void test_four_writers(void **state)
{
    (void)state;
    char dbp[512];
    path_of(dbp, sizeof dbp, "busy.db");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK); /* created before the race */
    nb_db_close(db);
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            setenv("NANOBENCH_DB_TIMEOUT_MS", "60000", 1);
            nb_db *d;
            nb_status s = {0};
            if (nb_db_open(dbp, &d, &s))
                _exit(10);
            for (int i = 0; i < 250; i++) {
                nb_run *r;
                if (nb_run_begin(d, "run", NULL, 0, NULL, &r, &s))
                    _exit(11);
                nb_run_metric(r, "writer", k, "", &s);
                nb_run_metric(r, "i", i, "", &s);
                if (nb_run_end(r, true, NULL, &s))
                    _exit(12);
            }
            nb_db_close(d);
            _exit(0);
        }
    }
    for (int k = 0; k < 4; k++) {
        int ws;
        assert_int_equal(waitpid(kids[k], &ws, 0), kids[k]);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), 0);
    }
    assert_int_equal(count(dbp, "SELECT COUNT(*) FROM runs WHERE status = 'ok'"), 1000);
    print_message("4 writers x 250 runs: 1000 of 1000 recorded\n");
    assert_int_equal(count(dbp, "SELECT COUNT(DISTINCT value) FROM metrics WHERE name = 'i'"),
                     250);
    assert_int_equal(count(dbp, "SELECT COUNT(*) FROM metrics WHERE name = 'writer'"), 1000);
}

/* The finished runs, read beside a writer: -1 while the database is busy (no assert here,
 * which would leave the writer running: it kept a test run alive for 13 minutes). */
static int64_t ok_runs(const char *dbpath)
{
    sqlite3 *h;
    sqlite3_stmt *s = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(dbpath, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM runs WHERE status = 'ok'", -1, &s, NULL) ==
            SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

static void test_killed_writer(void **state)
{
    (void)state;
    char dbp[512];
    path_of(dbp, sizeof dbp, "killed.db");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    nb_db_close(db);
    for (int round = 0; round < 3; round++) {
        pid_t kid = fork();
        assert_true(kid >= 0);
        if (kid == 0) {
            nb_db *d;
            nb_status s = {0};
            if (nb_db_open(dbp, &d, &s))
                _exit(10);
            for (;;) { /* runs of 300 layers until killed */
                nb_run *r;
                if (nb_run_begin(d, "compare", NULL, 0, NULL, &r, &s))
                    _exit(11);
                for (int i = 0; i < 300; i++) {
                    char name[32];
                    snprintf(name, sizeof name, "layer%d", i);
                    const char *mn[1] = {"cosine_similarity"};
                    double mv[1] = {0.9};
                    nb_run_layer(r, name, "Conv", 1, mn, mv, &s);
                }
                if (nb_run_end(r, true, NULL, &s))
                    _exit(12);
            }
        }
        /* killed mid-write, after it has finished at least one run of this round (a fixed
           150 ms was too short on a loaded machine under the sanitizers: no run finished) */
        int64_t done0 = -1;
        for (int w = 0; w < 2000 && done0 < 0; w++)
            done0 = ok_runs(dbp);
        for (int w = 0; w < 2000 && ok_runs(dbp) <= done0; w++) {
            struct timespec poll = {0, 10000000L};
            nanosleep(&poll, NULL);
        }
        struct timespec ts = {0, 20000000L + 35000000L * round};
        nanosleep(&ts, NULL);
        kill(kid, SIGKILL);
        int ws;
        waitpid(kid, &ws, 0);
        assert_true(WIFSIGNALED(ws));
    }
    sqlite3 *h;
    assert_int_equal(sqlite3_open(dbp, &h), SQLITE_OK);
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
    sqlite3_finalize(s);
    sqlite3_close(h);
    /* every finished run has all its layers; an unfinished one has none and shows crashed */
    assert_true(count(dbp, "SELECT COUNT(*) FROM runs WHERE status = 'ok'") > 0);
    assert_int_equal(count(dbp, "SELECT COUNT(*) FROM runs r WHERE status = 'ok' AND "
                               "(SELECT COUNT(*) FROM layer_results WHERE run_id = r.id) != 300"), 0);
    assert_int_equal(count(dbp, "SELECT COUNT(*) FROM layer_results l JOIN runs r ON "
                               "r.id = l.run_id WHERE r.status = 'running'"), 0);
    int64_t running = count(dbp, "SELECT COUNT(*) FROM runs WHERE status = 'running'");
    assert_true(running <= 3);
    print_message("killed 3 writers: %lld runs complete with 300 layers each, %lld left "
                  "'running' (shown as crashed), integrity_check ok\n",
                  (long long)count(dbp, "SELECT COUNT(*) FROM runs WHERE status = 'ok'"),
                  (long long)running);
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    nb_run_row *rows;
    int n;
    nb_run_filter f = {0};
    assert_int_equal(nb_db_list(db, &f, &rows, &n, &st), NB_OK);
    for (int i = 0; i < n; i++)
        assert_true(!strcmp(rows[i].status, "ok") || !strcmp(rows[i].status, "crashed"));
    nb_run_rows_free(rows, n);
    nb_db_close(db);
}

/* The shared lookups and two runs side by side (db/lookup.c), on runs recorded here:
 *   bringup B -> calibrate C (params algo ifmr, soc A) -> compile X (model m2);
 *   a second calibrate D (params algo kl, seed 3), 2 layers (conv0: cos 0.9, err 0;
 *   conv1: cos 0.901, err 0.5) where C has none.
 * diff(C, D): params algo differs (ifmr / kl), soc only in C, seed only in D; metrics
 * min_cosine 0.99 -> 0.9 and exeom_bytes 1234 -> 1234; layers only D has. */
static void test_lookups_and_diff(void **state)
{
    (void)state;
    char dbp[512], model[512], m2[512];
    path_of(dbp, sizeof dbp, "look.db");
    path_of(model, sizeof model, "lm.onnx");
    path_of(m2, sizeof m2, "lm2.exeom");
    write_file(model, "model bytes");
    write_file(m2, "exeom bytes");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    int64_t b = record(db, "bringup", model, 0, NULL, 0.99, 0);
    int64_t c = record(db, "calibrate", model, b, "{\"algo\":\"ifmr\",\"soc\":\"A\"}", 0.99, 0);
    nb_run *r;
    assert_int_equal(nb_run_begin(db, "compile", m2, c, NULL, &r, &st), NB_OK);
    int64_t x = nb_run_id(r);
    assert_int_equal(nb_run_artifact(r, "exeom", m2, &st), NB_OK);
    assert_int_equal(nb_run_end(r, true, NULL, &st), NB_OK);
    int64_t d = record(db, "calibrate", model, 0, "{\"algo\":\"kl\",\"seed\":3}", 0.9, 2);
    /* metric and artifact lookups */
    double v = 0;
    assert_true(nb_db_metric(db, c, "min_cosine", &v));
    assert_float_equal(v, 0.99, 1e-12);
    assert_false(nb_db_metric(db, c, "no_such", &v));
    char path[600];
    assert_true(nb_db_artifact_path(db, x, "exeom", true, path, sizeof path));
    assert_string_equal(path, m2);
    unlink(m2); /* gone: found only when not asked to be live */
    assert_false(nb_db_artifact_path(db, x, "exeom", true, path, sizeof path));
    assert_true(nb_db_artifact_path(db, x, "exeom", false, path, sizeof path));
    /* the nearest bringup: of the compile, its grandparent; of d, none */
    int64_t id = -1;
    assert_int_equal(nb_db_ancestor_of_kind(db, x, "bringup", &id, &st), NB_OK);
    assert_int_equal(id, b);
    assert_int_equal(nb_db_ancestor_of_kind(db, b, "bringup", &id, &st), NB_OK);
    assert_int_equal(id, b);
    assert_int_equal(nb_db_ancestor_of_kind(db, d, "bringup", &id, &st), NB_OK);
    assert_int_equal(id, 0);
    assert_int_equal(nb_db_ancestor_of_kind(db, 99999, "bringup", &id, &st), NB_ERR_ARG);
    /* the model's runs and their descendants: b, c, x (recorded under m2), d */
    int64_t *ids = NULL;
    assert_int_equal(nb_db_model_runs(db, model, &ids, &st), 4);
    assert_int_equal(ids[0], b);
    assert_int_equal(ids[1], c);
    assert_int_equal(ids[2], x);
    assert_int_equal(ids[3], d);
    free(ids);
    /* C against D */
    nb_run_diff df;
    assert_int_equal(nb_db_diff(db, c, d, &df, &st), NB_OK);
    assert_int_equal(df.n_params, 3);
    assert_string_equal(df.params[0].key, "algo");
    assert_string_equal(df.params[0].a, "ifmr");
    assert_string_equal(df.params[0].b, "kl");
    assert_false(df.params[0].same);
    assert_string_equal(df.params[1].key, "soc");
    assert_null(df.params[1].b);
    assert_string_equal(df.params[2].key, "seed");
    assert_null(df.params[2].a);
    assert_string_equal(df.params[2].b, "3");
    assert_int_equal(df.n_metrics, 2);
    assert_string_equal(df.metrics[0].name, "min_cosine");
    assert_float_equal(df.metrics[0].a, 0.99, 1e-12);
    assert_float_equal(df.metrics[0].b, 0.9, 1e-12);
    assert_float_equal(df.metrics[1].a, df.metrics[1].b, 0);
    assert_false(df.layers_a);
    assert_true(df.layers_b);
    assert_int_equal(df.n_layers, 0); /* matched only when both have layers */
    nb_run_diff_free(&df);
    assert_int_equal(nb_db_diff(db, c, 99999, &df, &st), NB_ERR_ARG);
    nb_db_close(db);
}

/* A killed process's runs (the workbench's cancel after SIGINT's grace time): its running
 * row and the running rows below it become errors with the reason; an ended row stays. */
static void test_mark_killed(void **state)
{
    (void)state;
    char dbp[512];
    path_of(dbp, sizeof dbp, "killed.db");
    nb_status st = {0};
    nb_db *db;
    assert_int_equal(nb_db_open(dbp, &db, &st), NB_OK);
    int64_t done = record(db, "estimate", NULL, 0, NULL, 0.9, 0); /* ended: ok */
    nb_run *top, *step;
    assert_int_equal(nb_run_begin(db, "bringup", NULL, 0, NULL, &top, &st), NB_OK);
    assert_int_equal(nb_run_begin(db, "calibrate", NULL, nb_run_id(top), NULL, &step, &st),
                     NB_OK);
    int64_t t = nb_run_id(top), c = nb_run_id(step);
    assert_int_equal(nb_db_mark_killed(db, (int64_t)getpid(), "cancelled: killed", &st), NB_OK);
    nb_run_row r;
    assert_int_equal(nb_db_get(db, t, &r, &st), NB_OK);
    assert_string_equal(r.status, "error");
    assert_string_equal(r.error, "cancelled: killed");
    assert_true(r.finished[0] != 0);
    nb_run_row_clear(&r);
    assert_int_equal(nb_db_get(db, c, &r, &st), NB_OK);
    assert_string_equal(r.status, "error");
    nb_run_row_clear(&r);
    assert_int_equal(nb_db_get(db, done, &r, &st), NB_OK);
    assert_string_equal(r.status, "ok");
    nb_run_row_clear(&r);
    nb_run_abandon(step);
    nb_run_abandon(top);
    nb_db_close(db);
}

int main(void)
{
    setenv("NANOBENCH_DB_TIMEOUT_MS", "300", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_read),
        cmocka_unit_test(test_export_parsed_back),
        cmocka_unit_test(test_migration_from_v1),
        cmocka_unit_test(test_newer_refused_untouched),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_four_writers),
        cmocka_unit_test(test_killed_writer), cmocka_unit_test(test_lookups_and_diff),
        cmocka_unit_test(test_mark_killed),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
