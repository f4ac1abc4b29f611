/* nanobench run store: what the db sources share. */
#ifndef NB_DB_INTERNAL_H
#define NB_DB_INTERNAL_H

#include <sqlite3.h>

#include "nb/db.h"

struct nb_db {
    sqlite3 *h;
    char *path;
    int version;
};

/* NB_ERR_DB naming the database, what failed, SQLite's message and a hint by error kind. */
nb_err nb_db_fail(nb_db *db, nb_status *st, const char *what);
/* sqlite3_exec of sql; failure is nb_db_fail(db, st, "cannot write"). */
nb_err nb_db_exec(nb_db *db, const char *sql, nb_status *st);
/* fn inside BEGIN IMMEDIATE ... COMMIT, rolled back on failure. */
nb_err nb_db_write(nb_db *db, nb_err (*fn)(nb_db *, void *, nb_status *), void *arg,
                   nb_status *st);
/* Current UTC time, ISO 8601 with milliseconds. */
void nb_db_now(char out[32]);

#endif
