/* nanobench run store: opening, migrations and recording (include/nb/db.h). */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "db_internal.h"
#include "nb/ir.h"
#include "nb/tensor.h"
#include "schema_sql.h" /* nb_schema_sql: db/schema.sql, generated at build time */

#ifndef NB_VERSION
#define NB_VERSION "0.0.0"
#endif

nb_err nb_db_fail(nb_db *db, nb_status *st, const char *what)
{
    const char *path = db ? db->path : "run database";
    int code = db && db->h ? sqlite3_errcode(db->h) : SQLITE_ERROR;
    const char *msg = db && db->h ? sqlite3_errmsg(db->h) : "cannot open";
    const char *hint = "";
    switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        hint = " [another process holds it locked; retry, or use --db for another file]";
        break;
    case SQLITE_READONLY:
        hint = " [the file or its folder is read-only; use --db or NANOBENCH_DB]";
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        hint = " [not a nanobench database or damaged; move it away or use --db]";
        break;
    default:
        break;
    }
    return nb_fail(st, NB_ERR_DB, "%s: %s: %s%s", path, what, msg, hint);
}

/* ---------------------------------------------------------------- small helpers */

void nb_db_now(char out[32])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char b[24];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%s.%03dZ", b, (int)(ts.tv_nsec / 1000000));
}

/* path with its folder resolved (the file itself need not exist), into out; false when the
   folder cannot be resolved */
static bool canonical(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], res[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    if (!realpath(dir, res))
        return false;
    int n = snprintf(out, len, "%s/%s", strcmp(res, "/") ? res : "", slash ? slash + 1 : path);
    return n > 0 && (size_t)n < len;
}

bool nb_db_owns_file(const nb_db *db, const char *path)
{
    if (!db)
        return false;
    struct stat a, b;
    bool exists = stat(path, &a) == 0;
    char cp[PATH_MAX], cd[PATH_MAX];
    /* the database through its links (SQLite's -journal is beside the file it opened) */
    bool named = canonical(path, cp, sizeof cp) &&
                 (realpath(nb_db_path(db), cd) || canonical(nb_db_path(db), cd, sizeof cd));
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        char f[PATH_MAX + 16];
        snprintf(f, sizeof f, "%s%s", nb_db_path(db), suffix[i]);
        if (exists && stat(f, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return true;
        /* a file SQLite makes and deletes beside the database (its -journal while a write
           is under way) is its own even when it is not there now */
        snprintf(f, sizeof f, "%s%s", cd, suffix[i]);
        if (named && !strcmp(cp, f))
            return true;
    }
    return false;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

nb_err nb_sha256_file(const char *path, char hex[65], int64_t *bytes, nb_status *st)
{
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb); /* a FIFO would block: refused */
    if (!f)
        return nb_fail(st, NB_ERR_IO, "%s: cannot read to hash it", path);
    struct sha256_ctx c;
    sha256_init(&c);
    uint8_t buf[1 << 16];
    size_t n;
    int64_t total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        sha256_update(&c, n, buf);
        total += (int64_t)n;
    }
    int err = ferror(f);
    fclose(f);
    if (err)
        return nb_fail(st, NB_ERR_IO, "%s: read failed while hashing", path);
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof d, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    if (bytes)
        *bytes = total;
    return NB_OK;
}

nb_err nb_db_exec(nb_db *db, const char *sql, nb_status *st)
{
    char *err = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &err) != SQLITE_OK) {
        sqlite3_free(err);
        return nb_db_fail(db, st, "cannot write");
    }
    return NB_OK;
}

/* Runs a write transaction body: BEGIN IMMEDIATE (waits up to the busy timeout for other
 * writers), fn, COMMIT; ROLLBACK on failure. */
nb_err nb_db_write(nb_db *db, nb_err (*fn)(nb_db *, void *, nb_status *), void *arg,
                   nb_status *st)
{
    nb_err e = nb_db_exec(db, "BEGIN IMMEDIATE", st);
    if (e)
        return e;
    e = fn(db, arg, st);
    if (!e && sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        e = nb_db_fail(db, st, "cannot commit");
    if (e)
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    return e;
}

/* ---------------------------------------------------------------- opening */

nb_err nb_db_default_path(char *buf, size_t len, nb_status *st)
{
    const char *env = getenv("NANOBENCH_DB");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return NB_OK;
    }
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && *xdg == '/') {
        snprintf(buf, len, "%s/nanobench/runs.db", xdg);
        return NB_OK;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return nb_fail(st, NB_ERR_DB, "no run database: HOME is not set (use --db PATH or "
                       "NANOBENCH_DB)");
    snprintf(buf, len, "%s/.local/share/nanobench/runs.db", home);
    return NB_OK;
}

/* Creates the folder that will hold path. */
static int mkdir_parents(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf)
        return 0;
    *slash = 0;
    return nb_mkdir_p(buf);
}

/* user_version as the main file's header holds it (bytes 60-63, big-endian, after the
 * 16-byte "SQLite format 3" magic); 0 when the file is missing, short or not SQLite. */
static int header_version(const char *path)
{
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return 0;
    unsigned char h[100];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return 0;
    uint32_t v = (uint32_t)h[60] << 24 | (uint32_t)h[61] << 16 | (uint32_t)h[62] << 8 | h[63];
    return v > INT32_MAX ? INT32_MAX : (int)v;
}

static int read_version(nb_db *db, int *v)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* Text of migration n of db/schema.sql (malloc'ed), or NULL when there is none. */
static char *migration_text(int n)
{
    char mark[48];
    snprintf(mark, sizeof mark, "-- @migration %d:", n);
    const char *p = strstr(nb_schema_sql, mark);
    if (!p)
        return NULL;
    const char *end = strstr(p + 1, "-- @migration ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *t = malloc(len + 1);
    if (t) {
        memcpy(t, p, len);
        t[len] = 0;
    }
    return t;
}

typedef struct migrate_arg {
    int target;
    int *version;
} migrate_arg;

static nb_err migrate_body(nb_db *db, void *arg, nb_status *st)
{
    migrate_arg *a = arg;
    int v;
    if (read_version(db, &v) != 0)
        return nb_db_fail(db, st, "cannot read the schema version");
    if (v > NB_DB_SCHEMA_VERSION)
        return nb_fail(st, NB_ERR_DB, "%s: schema version %d is newer than this nanobench "
                       "knows (%d); the file is left untouched [use a newer nanobench]",
                       db->path, v, NB_DB_SCHEMA_VERSION);
    for (int n = v + 1; n <= a->target; n++) {
        char *sql = migration_text(n);
        if (!sql)
            return nb_fail(st, NB_ERR_INTERNAL, "migration %d is missing", n);
        char *err = NULL;
        int rc = sqlite3_exec(db->h, sql, NULL, NULL, &err);
        free(sql);
        if (rc != SQLITE_OK) {
            nb_err e = nb_fail(st, NB_ERR_DB, "%s: migration to version %d failed: %s",
                               db->path, n, err ? err : "?");
            sqlite3_free(err);
            return e;
        }
        char pv[48];
        snprintf(pv, sizeof pv, "PRAGMA user_version = %d", n);
        nb_err e = nb_db_exec(db, pv, st);
        if (e)
            return e;
        v = n;
    }
    *a->version = v;
    return NB_OK;
}

nb_err nb_db_open_version(const char *path, int version, nb_db **out, nb_status *st)
{
    *out = NULL;
    char def[PATH_MAX];
    if (!path) {
        nb_err e = nb_db_default_path(def, sizeof def, st);
        if (e)
            return e;
        path = def;
    }
    nb_db *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    nb_err e = NB_OK;
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        e = nb_fail(st, NB_ERR_DB, "%s: not a regular file", path);
        goto fail;
    }
    /* a newer database is refused before SQLite opens it: opening would roll back a hot
       journal, and closing would checkpoint a WAL, both writes */
    int hv = header_version(path);
    if (hv > NB_DB_SCHEMA_VERSION) {
        e = nb_fail(st, NB_ERR_DB, "%s: schema version %d is newer than this nanobench knows "
                    "(%d); the file is left untouched [use a newer nanobench]", path, hv,
                    NB_DB_SCHEMA_VERSION);
        goto fail;
    }
    if (mkdir_parents(path) != 0) {
        e = nb_fail(st, NB_ERR_DB, "%s: cannot create its folder: %s", path, strerror(errno));
        goto fail;
    }
    if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        e = nb_db_fail(db, st, "cannot open");
        goto fail;
    }
    const char *tmo = getenv("NANOBENCH_DB_TIMEOUT_MS");
    int timeout = tmo && atoi(tmo) >= 0 && *tmo ? atoi(tmo) : 10000;
    sqlite3_busy_timeout(db->h, timeout);
    sqlite3_extended_result_codes(db->h, 1);
    /* the version first: a newer database must not be touched, not even its journal mode */
    int v;
    if (read_version(db, &v) != 0) {
        e = nb_db_fail(db, st, "cannot read");
        goto fail;
    }
    if (v > NB_DB_SCHEMA_VERSION) { /* newer only in its WAL: close without checkpoint */
        sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        e = nb_fail(st, NB_ERR_DB, "%s: schema version %d is newer than this nanobench knows "
                    "(%d); the file is left untouched [use a newer nanobench]", path, v,
                    NB_DB_SCHEMA_VERSION);
        goto fail;
    }
    if ((e = nb_db_exec(db, "PRAGMA foreign_keys = ON", st)))
        goto fail;
    if (!sqlite3_db_readonly(db->h, "main")) {
        /* WAL: readers never block the writer; NORMAL: a commit is durable once the WAL is
           checkpointed, and the database is never corrupted by a crash */
        sqlite3_exec(db->h, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        sqlite3_exec(db->h, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    }
    if (v < version) {
        if (sqlite3_db_readonly(db->h, "main")) {
            e = nb_fail(st, NB_ERR_DB, "%s: read-only, and its schema (version %d) needs "
                        "migrating to %d [use --db or NANOBENCH_DB]", path, v, version);
            goto fail;
        }
        migrate_arg a = {.target = version, .version = &v};
        if ((e = nb_db_write(db, migrate_body, &a, st)))
            goto fail;
    }
    db->version = v;
    *out = db;
    return NB_OK;
fail:
    nb_db_close(db);
    return e;
}

nb_err nb_db_open(const char *path, nb_db **out, nb_status *st)
{
    return nb_db_open_version(path, NB_DB_SCHEMA_VERSION, out, st);
}

void nb_db_close(nb_db *db)
{
    if (!db)
        return;
    if (db->h)
        sqlite3_close_v2(db->h);
    free(db->path);
    free(db);
}

const char *nb_db_path(const nb_db *db) { return db->path; }
int nb_db_version(const nb_db *db) { return db->version; }

/* ---------------------------------------------------------------- recording */

typedef struct rec_metric {
    char *name, *unit;
    double value;
} rec_metric;

typedef struct rec_layer {
    char *layer, *op_type;
    int n;
    char **names;
    double *values;
} rec_layer;

typedef struct rec_artifact {
    char *role, *path;
    char sha[65];
    int64_t bytes;
} rec_artifact;

struct nb_run {
    nb_db *db;
    int64_t id, model_id;
    double t0, wall_ms;
    char started[32], finished[32];
    char *params;
    int opset;
    char *inputs, *outputs;
    rec_metric *m;
    int n_m, cap_m;
    rec_layer *l;
    int n_l, cap_l;
    rec_artifact *a;
    int n_a, cap_a;
    /* for nb_run_end's transaction */
    bool ok;
    const char *error;
};

static bool valid_json_object(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    return *s == '{';
}

typedef struct begin_arg {
    nb_run *r;
    const char *kind, *model_path;
    int64_t parent;
    const char *sha;
    int64_t bytes;
    bool have_model;
} begin_arg;

static int64_t g_run_pid; /* nb_db_set_run_pid: 0 for this process's own */

void nb_db_set_run_pid(int64_t pid) { g_run_pid = pid; }

static nb_err begin_body(nb_db *db, void *arg, nb_status *st)
{
    begin_arg *a = arg;
    sqlite3_stmt *s = NULL;
    if (a->parent > 0) {
        if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM runs WHERE id = ?", -1, &s, NULL) !=
            SQLITE_OK)
            return nb_db_fail(db, st, "cannot read");
        sqlite3_bind_int64(s, 1, a->parent);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        s = NULL;
        if (rc == SQLITE_DONE)
            return nb_fail(st, NB_ERR_ARG, "--parent %lld: %s has no run %lld",
                           (long long)a->parent, db->path, (long long)a->parent);
        if (rc != SQLITE_ROW)
            return nb_db_fail(db, st, "cannot read");
    }
    if (a->have_model) {
        if (sqlite3_prepare_v2(db->h, "INSERT OR IGNORE INTO models(path, sha256, bytes) "
                               "VALUES (?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
            return nb_db_fail(db, st, "cannot record the model");
        sqlite3_bind_text(s, 1, a->model_path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, a->sha, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s, 3, a->bytes);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return nb_db_fail(db, st, "cannot record the model");
        if (sqlite3_prepare_v2(db->h, "SELECT id FROM models WHERE path = ? AND sha256 = ?", -1,
                               &s, NULL) != SQLITE_OK)
            return nb_db_fail(db, st, "cannot record the model");
        sqlite3_bind_text(s, 1, a->model_path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, a->sha, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW)
            a->r->model_id = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (rc != SQLITE_ROW)
            return nb_db_fail(db, st, "cannot record the model");
    }
    if (sqlite3_prepare_v2(db->h, "INSERT INTO runs(kind, model_id, parent_id, params, started, "
                           "status, version, host, pid) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                           -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot record the run");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    sqlite3_bind_text(s, 1, a->kind, -1, SQLITE_TRANSIENT);
    if (a->r->model_id)
        sqlite3_bind_int64(s, 2, a->r->model_id);
    else
        sqlite3_bind_null(s, 2);
    if (a->parent > 0)
        sqlite3_bind_int64(s, 3, a->parent);
    else
        sqlite3_bind_null(s, 3);
    sqlite3_bind_text(s, 4, a->r->params, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 5, a->r->started, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 6, NB_VERSION, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 8, g_run_pid > 0 ? g_run_pid : (int64_t)getpid());
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        if ((sqlite3_extended_errcode(db->h) & 0xff) == SQLITE_CONSTRAINT)
            return nb_fail(st, NB_ERR_ARG, "%s: cannot record the run (kind '%s')", db->path,
                           a->kind);
        return nb_db_fail(db, st, "cannot record the run");
    }
    a->r->id = sqlite3_last_insert_rowid(db->h);
    return NB_OK;
}

nb_err nb_run_begin(nb_db *db, const char *kind, const char *model_path, int64_t parent_id,
                    const char *params_json, nb_run **out, nb_status *st)
{
    *out = NULL;
    if (params_json && !valid_json_object(params_json))
        return nb_fail(st, NB_ERR_INTERNAL, "run parameters must be a JSON object");
    nb_run *r = calloc(1, sizeof *r);
    if (!r || !(r->params = strdup(params_json ? params_json : "{}"))) {
        free(r);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    r->db = db;
    r->t0 = mono_ms();
    nb_db_now(r->started);
    begin_arg a = {.r = r, .kind = kind, .parent = parent_id};
    char abs[PATH_MAX], sha[65];
    if (model_path && realpath(model_path, abs) &&
        nb_sha256_file(abs, sha, &a.bytes, NULL) == NB_OK) {
        a.have_model = true;
        a.model_path = abs;
        a.sha = sha;
    }
    nb_err e = nb_db_write(db, begin_body, &a, st);
    if (e) {
        nb_run_abandon(r);
        return e;
    }
    *out = r;
    return NB_OK;
}

int64_t nb_run_id(const nb_run *r) { return r->id; }

nb_err nb_run_set_params(nb_run *r, const char *params_json, nb_status *st)
{
    if (!params_json || !valid_json_object(params_json))
        return nb_fail(st, NB_ERR_INTERNAL, "run parameters must be a JSON object");
    char *p = strdup(params_json);
    if (!p)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    free(r->params);
    r->params = p;
    return NB_OK;
}

nb_err nb_run_set_model_info(nb_run *r, int opset, const char *inputs_json,
                             const char *outputs_json, nb_status *st)
{
    free(r->inputs);
    free(r->outputs);
    r->opset = opset;
    r->inputs = inputs_json ? strdup(inputs_json) : NULL;
    r->outputs = outputs_json ? strdup(outputs_json) : NULL;
    if ((inputs_json && !r->inputs) || (outputs_json && !r->outputs))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

nb_err nb_run_metric(nb_run *r, const char *name, double value, const char *unit,
                     nb_status *st)
{
    for (int i = 0; i < r->n_m; i++)
        if (!strcmp(r->m[i].name, name)) {
            r->m[i].value = value;
            return NB_OK;
        }
    if (!nb_grow((void **)&r->m, &r->cap_m, r->n_m, sizeof *r->m))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    rec_metric *m = &r->m[r->n_m];
    m->name = strdup(name);
    m->unit = strdup(unit ? unit : "");
    m->value = value;
    if (!m->name || !m->unit) {
        free(m->name);
        free(m->unit);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    r->n_m++;
    return NB_OK;
}

nb_err nb_run_layer(nb_run *r, const char *layer, const char *op_type, int n,
                    const char *const *names, const double *values, nb_status *st)
{
    if (!nb_grow((void **)&r->l, &r->cap_l, r->n_l, sizeof *r->l))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    rec_layer *l = &r->l[r->n_l];
    memset(l, 0, sizeof *l);
    l->layer = strdup(layer);
    l->op_type = strdup(op_type ? op_type : "");
    l->names = calloc((size_t)n + 1, sizeof(char *));
    l->values = malloc(sizeof(double) * ((size_t)n + 1));
    bool ok = l->layer && l->op_type && l->names && l->values;
    for (int i = 0; ok && i < n; i++) {
        ok = (l->names[i] = strdup(names[i])) != NULL;
        l->values[i] = values[i];
        l->n = i + 1;
    }
    r->n_l++; /* freed with the run even when incomplete */
    if (!ok)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    return NB_OK;
}

nb_err nb_run_artifact(nb_run *r, const char *role, const char *path, nb_status *st)
{
    if (!nb_grow((void **)&r->a, &r->cap_a, r->n_a, sizeof *r->a))
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    rec_artifact *a = &r->a[r->n_a];
    memset(a, 0, sizeof *a);
    char abs[PATH_MAX];
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        a->bytes = -1; /* a folder (a dump tree): recorded by path, no hash nor size */
    } else {
        nb_err e = nb_sha256_file(path, a->sha, &a->bytes, st);
        if (e)
            return e;
    }
    a->role = strdup(role);
    a->path = strdup(realpath(path, abs) ? abs : path);
    if (!a->role || !a->path) {
        free(a->role);
        free(a->path);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    r->n_a++;
    return NB_OK;
}

static void bind_double(sqlite3_stmt *s, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_double(s, i, v);
}

static nb_err end_body(nb_db *db, void *arg, nb_status *st)
{
    nb_run *r = arg;
    sqlite3_stmt *s = NULL;
    int rc;
#define PREP(sql)                                                              \
    do {                                                                       \
        if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)         \
            return nb_db_fail(db, st, "cannot record the run's results");      \
    } while (0)
#define STEP()                                                                 \
    do {                                                                       \
        rc = sqlite3_step(s);                                                  \
        sqlite3_finalize(s);                                                   \
        s = NULL;                                                              \
        if (rc != SQLITE_DONE)                                                 \
            return nb_db_fail(db, st, "cannot record the run's results");      \
    } while (0)
    if (r->model_id && r->opset > 0) {
        PREP("UPDATE models SET opset = ?, inputs = ?, outputs = ? WHERE id = ?");
        sqlite3_bind_int(s, 1, r->opset);
        sqlite3_bind_text(s, 2, r->inputs, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 3, r->outputs, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s, 4, r->model_id);
        STEP();
    }
    for (int i = 0; i < r->n_m; i++) {
        PREP("INSERT OR REPLACE INTO metrics(run_id, name, value, unit) VALUES (?, ?, ?, ?)");
        sqlite3_bind_int64(s, 1, r->id);
        sqlite3_bind_text(s, 2, r->m[i].name, -1, SQLITE_TRANSIENT);
        bind_double(s, 3, r->m[i].value);
        sqlite3_bind_text(s, 4, r->m[i].unit, -1, SQLITE_TRANSIENT);
        STEP();
    }
    for (int i = 0; i < r->n_l; i++) {
        PREP("INSERT INTO layer_results(run_id, seq, layer, op_type) VALUES (?, ?, ?, ?)");
        sqlite3_bind_int64(s, 1, r->id);
        sqlite3_bind_int(s, 2, i);
        sqlite3_bind_text(s, 3, r->l[i].layer, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 4, r->l[i].op_type, -1, SQLITE_TRANSIENT);
        STEP();
        int64_t lid = sqlite3_last_insert_rowid(db->h);
        for (int k = 0; k < r->l[i].n; k++) {
            PREP("INSERT OR REPLACE INTO layer_metrics(layer_result_id, name, value) "
                 "VALUES (?, ?, ?)");
            sqlite3_bind_int64(s, 1, lid);
            sqlite3_bind_text(s, 2, r->l[i].names[k], -1, SQLITE_TRANSIENT);
            bind_double(s, 3, r->l[i].values[k]);
            STEP();
        }
    }
    for (int i = 0; i < r->n_a; i++) {
        PREP("INSERT INTO artifacts(run_id, role, path, sha256, bytes) VALUES (?, ?, ?, ?, ?)");
        sqlite3_bind_int64(s, 1, r->id);
        sqlite3_bind_text(s, 2, r->a[i].role, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 3, r->a[i].path, -1, SQLITE_TRANSIENT);
        if (r->a[i].bytes < 0) { /* a folder */
            sqlite3_bind_null(s, 4);
            sqlite3_bind_null(s, 5);
        } else {
            sqlite3_bind_text(s, 4, r->a[i].sha, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(s, 5, r->a[i].bytes);
        }
        STEP();
    }
    PREP("UPDATE runs SET params = ?, finished = ?, wall_ms = ?, status = ?, error = ? "
         "WHERE id = ?");
    sqlite3_bind_text(s, 1, r->params, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, r->finished, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, r->wall_ms);
    sqlite3_bind_text(s, 4, r->ok ? "ok" : "error", -1, SQLITE_STATIC);
    if (r->error)
        sqlite3_bind_text(s, 5, r->error, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 5);
    sqlite3_bind_int64(s, 6, r->id);
    STEP();
#undef PREP
#undef STEP
    return NB_OK;
}

nb_err nb_run_end(nb_run *r, bool ok, const char *error, nb_status *st)
{
    r->ok = ok;
    r->error = ok ? NULL : (error ? error : "failed");
    r->wall_ms = mono_ms() - r->t0; /* the moments that 'finished' and wall time describe */
    nb_db_now(r->finished);
    nb_err e = nb_db_write(r->db, end_body, r, st);
    nb_run_abandon(r);
    return e;
}

void nb_run_abandon(nb_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_m; i++) {
        free(r->m[i].name);
        free(r->m[i].unit);
    }
    for (int i = 0; i < r->n_l; i++) {
        for (int k = 0; k < r->l[i].n; k++)
            free(r->l[i].names[k]);
        free(r->l[i].names);
        free(r->l[i].values);
        free(r->l[i].layer);
        free(r->l[i].op_type);
    }
    for (int i = 0; i < r->n_a; i++) {
        free(r->a[i].role);
        free(r->a[i].path);
    }
    free(r->m);
    free(r->l);
    free(r->a);
    free(r->params);
    free(r->inputs);
    free(r->outputs);
    free(r);
}

typedef struct killed_arg {
    const int64_t *ids;
    int n;
    const char *why;
} killed_arg;

static nb_err killed_body(nb_db *db, void *arg, nb_status *st)
{
    const killed_arg *a = arg;
    char now[32];
    nb_db_now(now);
    for (int i = 0; i < a->n; i++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(db->h, "UPDATE runs SET status = 'error', error = ?, "
                               "finished = ? WHERE id = ? AND status = 'running'", -1, &s,
                               NULL) != SQLITE_OK)
            return nb_db_fail(db, st, "cannot mark the run killed");
        sqlite3_bind_text(s, 1, a->why, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, now, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s, 3, a->ids[i]);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return nb_db_fail(db, st, "cannot mark the run killed");
    }
    return NB_OK;
}

nb_err nb_db_mark_killed(nb_db *db, int64_t pid, const char *why, nb_status *st)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT id FROM runs WHERE pid = ? AND status = 'running' "
                           "AND host = ?", -1, &s, NULL) != SQLITE_OK)
        return nb_db_fail(db, st, "cannot read the runs");
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_text(s, 2, host, -1, SQLITE_TRANSIENT);
    int64_t *ids = NULL;
    int n = 0, cap = 0;
    nb_err e = NB_OK;
    while (!e && sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0), *up = NULL, *down = NULL;
        int nu = 0, nd = 0;
        if (!nb_grow((void **)&ids, &cap, n + 1, sizeof *ids))
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        else
            ids[n++] = id;
        if (!e && !nb_db_lineage(db, id, &up, &nu, &down, &nd, st))
            for (int k = 0; k < nd && !e; k++) {
                if (!nb_grow((void **)&ids, &cap, n + 1, sizeof *ids))
                    e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
                else
                    ids[n++] = down[k];
            }
        free(up), free(down);
    }
    sqlite3_finalize(s);
    killed_arg a = {ids, n, why};
    if (!e && n)
        e = nb_db_write(db, killed_body, &a, st);
    free(ids);
    return e;
}
