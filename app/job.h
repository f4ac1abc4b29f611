/* nanobench: the job runner (app/job.c), for any front end in app/ (the workbench today):
 * nanobench itself run for a step, or a forked worker running an engine call (the whole
 * bring-up, nb_bringup);
 * stdout and stderr read without blocking, progress and "recorded as run N" lines parsed.
 * No curses. */
#ifndef NB_APP_JOB_H
#define NB_APP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tui_job {
    pid_t pid;
    int out_fd, err_fd;       /* -1 once closed */
    char *out;                /* the child's whole stdout, NUL-terminated */
    size_t out_len, out_cap;
    char *err;                /* the child's whole stderr, NUL-terminated */
    size_t err_len, err_cap;
    char last_line[512];      /* the last complete stderr line that is not a progress line */
    int64_t progress_done, progress_total; /* from "progress: WHAT I/N" lines, 0/0 before */
    char progress_what[32];
    double started;           /* monotonic seconds */
    bool done, cancelled;
    bool killed; /* cancelled, and SIGKILLed when SIGINT did not stop it in time */
    int status;               /* exit status (128 + signal when killed) once done */
    int64_t run_id;           /* from "recorded as run N", 0 when none */
    /* from "nanobench: warning: REASON; the run is not recorded" (a locked, read-only or
       corrupt database): REASON, "" when none */
    char not_recorded[256];
    int step;                 /* the step that started it */
    char title[128];
} tui_job;

/* Starts `nanobench --db DB [--parent PARENT] ARGV...` (argv NULL-terminated, without the
 * program) with stdout and stderr piped and stdin from /dev/null, in its own process group.
 * The binary is $NANOBENCH_BIN when set, else /proc/self/exe. Returns NULL with *err set
 * when it cannot start. */
tui_job *tui_job_start(const char *db, int64_t parent, char *const argv[], const char *title,
                       char *err, size_t errlen);
/* As tui_job_start, with a worker in place of the binary: a forked child of this process
 * runs fn(arg) (arg: the parent's data as it is, a structure, never a command line to
 * parse) with stdout and stderr piped as a command's, and exits with its return value
 * (crash isolation: a crash is the job's, not the caller's). fn must not touch curses. */
tui_job *tui_job_start_fn(int (*fn)(void *arg), void *arg, const char *title, char *err,
                          size_t errlen);
/* Reads what the child wrote, without blocking; reaps it when it has exited. Returns true
 * once the job is done. */
bool tui_job_poll(tui_job *j);
/* Sleeps until the child writes on stdout or stderr, or ms milliseconds pass. */
void tui_job_wait_io(const tui_job *j, int ms);
/* Waits (blocking) until the job is done. */
void tui_job_wait(tui_job *j);
/* SIGINT to the child's process group (its cleanup removes partial outputs), SIGKILL after
 * 3 s; waits. */
void tui_job_cancel(tui_job *j);
void tui_job_free(tui_job *j);
/* A one-line summary of a failed job: its last "nanobench: ..." stderr line, or the exit
 * status. */
const char *tui_job_error(const tui_job *j);

#endif
