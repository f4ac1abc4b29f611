/* nanobench CLI: a recorded command runs under a supervising process of its own (issue 35).
 *
 * A command interrupted by a signal dies of it (app/cleanup.c removes what it was writing
 * first), so it cannot end its run's row itself: the row stayed 'running' and showed as
 * 'crashed' (19 of 20 Ctrl-C'd calibrations). The supervisor is the process the user and
 * the workbench see (its pid is the one recorded, nb_db_set_run_pid); it starts the command
 * as a child (this executable again, by /proc/self/exe, with the same arguments), passes on
 * SIGINT, SIGTERM and SIGHUP, and when the child dies of a signal it ends every row the child
 * left 'running' (and the rows below them: a bringup's steps) with "interrupted (SIGINT)",
 * "killed (SIGKILL)" or "crashed (SIGSEGV)", then dies of the same signal itself, so that a
 * shell or script sees what it would have seen. A child that exits passes its status on.
 * The child dies with the supervisor (PR_SET_PDEATHSIG): a SIGKILL to the supervisor stops
 * the command too, and its rows then show as 'crashed' (nothing is left to end them). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "nb/db.h"

extern char **environ;

#define SUPERVISOR_ENV "NANOBENCH_SUPERVISOR_PID"

static volatile pid_t g_child;
static volatile sig_atomic_t g_pending; /* a signal before the child existed */

static void forward(int sig)
{
    if (g_child > 0)
        kill(g_child, sig);
    else
        g_pending = sig; /* passed on once it is started (a signal in the first ms was lost) */
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGPIPE: return "SIGPIPE";
    default: return NULL;
    }
}

/* Ends the rows the child left running: why from the signal that ended it. */
static void mark_rows(const char *db_path, int sig)
{
    char why[96];
    const char *n = sig_name(sig);
    char num[16];
    snprintf(num, sizeof num, "signal %d", sig);
    snprintf(why, sizeof why, "%s (%s)",
             sig == SIGINT || sig == SIGTERM || sig == SIGHUP ? "interrupted"
             : sig == SIGKILL                                 ? "killed"
                                                              : "crashed",
             n ? n : num);
    nb_db *db = NULL;
    nb_status st = {0};
    if (!nb_db_open(db_path, &db, &st))
        nb_db_mark_killed(db, (int64_t)getpid(), why, &st);
    nb_db_close(db);
}

int cli_supervised_child(void)
{
    const char *v = getenv(SUPERVISOR_ENV);
    if (!v)
        return 0;
    char *end;
    long long pid = strtoll(v, &end, 10);
    unsetenv(SUPERVISOR_ENV); /* a command this one starts is supervised on its own */
    if (*end || pid <= 0 || pid != (long long)getppid())
        return 0; /* not from our supervisor (a stale variable): record our own pid */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != (pid_t)pid) /* it died before the line above */
        _exit(1);
    nb_db_set_run_pid(pid);
    return 1;
}

int cli_supervise(char **argv, const char *db_path)
{
    char val[32];
    snprintf(val, sizeof val, "%ld", (long)getpid());
    if (setenv(SUPERVISOR_ENV, val, 1))
        return -1;
    /* the signals to pass on, taken before the child can be signalled */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    pid_t pid;
    int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    unsetenv(SUPERVISOR_ENV);
    if (e) {
        for (int i = 0; i < 3; i++)
            sigaction(sigs[i], &old[i], NULL);
        return -1; /* no /proc: the command runs unsupervised, as before */
    }
    g_child = pid;
    if (g_pending)
        kill(pid, g_pending);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            status = 1 << 8;
            break;
        }
    g_child = 0;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    mark_rows(db_path, sig);
    fflush(stdout);
    fflush(stderr);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE || sig == SIGKILL) {
        /* die of it, as the command did: the shell's view of an interrupted command */
        signal(sig, SIG_DFL);
        sigset_t un;
        sigemptyset(&un);
        sigaddset(&un, sig);
        sigprocmask(SIG_UNBLOCK, &un, NULL);
        raise(sig);
    }
    return 128 + sig; /* a crash: its status without a core of our own */
}
