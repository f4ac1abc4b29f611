/* nanobench: the job runner (job.h), no curses: a child in its own process group with
 * stdout and stderr piped, polled without blocking by its front end's loop: the nanobench
 * binary itself (`nanobench --db DB [--parent N] COMMAND ...`), or a forked worker running a
 * function (the workbench's whole bring-up: nb_bringup with its options as a structure). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job.h"

/* the public job and what only this file needs */
typedef struct job_priv {
    tui_job pub;      /* first: a tui_job * is a job_priv * */
    size_t err_parsed; /* stderr bytes already split into lines */
    bool reaped;
    char error[600];  /* tui_job_error's text */
} job_priv;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_flags(int fd, bool nonblock)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
    if (nonblock) {
        fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
}

/* The child (a process group of its own, stdin /dev/null, stdout and stderr piped): execs
 * bin with args, or (fn not NULL) runs fn(arg) and exits with its status. */
static tui_job *spawn(const char *bin, char **args, int (*fn)(void *), void *arg,
                      const char *title, char *err, size_t errlen)
{
    job_priv *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, execp[2] = {-1, -1};
    if (pipe(outp) || pipe(errp) || pipe(execp)) {
        snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (outp[i] >= 0)
                close(outp[i]);
            if (errp[i] >= 0)
                close(errp[i]);
            if (execp[i] >= 0)
                close(execp[i]);
        }
        free(p);
        return NULL;
    }
    set_flags(outp[0], true);
    set_flags(errp[0], true);
    set_flags(execp[0], false);
    set_flags(execp[1], false); /* closed by a successful exec: EOF for the parent */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start %s: %s", fn ? title : bin, strerror(errno));
        close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]);
        close(execp[0]), close(execp[1]);
        free(p);
        return NULL;
    }
    if (pid == 0) {
        setpgid(0, 0);
        /* the default dispositions the TUI may have changed */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGWINCH, SIG_DFL);
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) {
            dup2(in, 0);
            if (in > 2)
                close(in);
        }
        dup2(outp[1], 1);
        dup2(errp[1], 2);
        close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]), close(execp[0]);
        if (fn) { /* a worker: the parent's memory, no exec, no curses */
            close(execp[1]);
            int rc = fn(arg);
            fflush(NULL);
            _exit(rc);
        }
        execv(bin, args);
        int e = errno;
        ssize_t w = write(execp[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first */
    close(outp[1]), close(errp[1]), close(execp[1]);
    int e = 0;
    ssize_t r;
    do
        r = read(execp[0], &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(execp[0]);
    if (r == (ssize_t)sizeof e) { /* exec failed */
        snprintf(err, errlen, "cannot run %s: %s", bin, strerror(e));
        close(outp[0]), close(errp[0]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        free(p);
        return NULL;
    }
    tui_job *j = &p->pub;
    j->pid = pid;
    j->out_fd = outp[0];
    j->err_fd = errp[0];
    j->started = now_s();
    j->step = -1;
    snprintf(j->title, sizeof j->title, "%s", title);
    return j;
}

tui_job *tui_job_start(const char *db, int64_t parent, char *const argv[], const char *title,
                       char *err, size_t errlen)
{
    const char *bin = getenv("NANOBENCH_BIN");
    if (!bin || !*bin)
        bin = "/proc/self/exe";
    int na = 0;
    while (argv && argv[na])
        na++;
    char **args = calloc((size_t)na + 6, sizeof *args);
    char pbuf[32];
    if (!args) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int k = 0;
    args[k++] = (char *)"nanobench";
    if (db && *db) {
        args[k++] = (char *)"--db";
        args[k++] = (char *)db;
    }
    if (parent > 0) {
        snprintf(pbuf, sizeof pbuf, "%lld", (long long)parent);
        args[k++] = (char *)"--parent";
        args[k++] = pbuf;
    }
    for (int i = 0; i < na; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    tui_job *j = spawn(bin, args, NULL, NULL, title ? title : (na ? argv[0] : "job"), err,
                       errlen);
    free(args);
    return j;
}

tui_job *tui_job_start_fn(int (*fn)(void *arg), void *arg, const char *title, char *err,
                          size_t errlen)
{
    return spawn(NULL, NULL, fn, arg, title ? title : "job", err, errlen);
}

/* one complete stderr line (without its newline): progress, the run id, or the last line */
static void take_line(tui_job *j, const char *s, size_t n)
{
    char line[512];
    if (n >= sizeof line)
        n = sizeof line - 1;
    memcpy(line, s, n);
    line[n] = 0;
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = 0;
    if (!n)
        return;
    if (!strncmp(line, "progress: ", 10)) {
        char what[32];
        long long a, b;
        if (sscanf(line + 10, "%31s %lld/%lld", what, &a, &b) == 3) {
            snprintf(j->progress_what, sizeof j->progress_what, "%s", what);
            j->progress_done = a;
            j->progress_total = b;
            return;
        }
    }
    const char *nr = strstr(line, "not recorded");
    if (nr && !strncmp(line, "nanobench: warning: ", 20)) {
        /* the run went unrecorded: the reason is what comes before "; the run is ..." */
        const char *r = line + 20;
        const char *semi = strstr(r, "; ");
        size_t rl = semi && semi < nr ? (size_t)(semi - r) : (size_t)(nr - r);
        if (rl >= sizeof j->not_recorded)
            rl = sizeof j->not_recorded - 1;
        if (!j->not_recorded[0]) {
            memcpy(j->not_recorded, r, rl);
            j->not_recorded[rl] = 0;
            if (!rl)
                snprintf(j->not_recorded, sizeof j->not_recorded, "database warning");
        }
    }
    const char *rec = strstr(line, "recorded as run ");
    if (rec) {
        long long id = strtoll(rec + 16, NULL, 10);
        if (id > 0)
            j->run_id = id;
        return;
    }
    snprintf(j->last_line, sizeof j->last_line, "%s", line);
}

static void parse_err(job_priv *p, bool final)
{
    tui_job *j = &p->pub;
    while (p->err_parsed < j->err_len) {
        const char *s = j->err + p->err_parsed;
        const char *nl = memchr(s, '\n', j->err_len - p->err_parsed);
        if (!nl) {
            if (final) {
                take_line(j, s, j->err_len - p->err_parsed);
                p->err_parsed = j->err_len;
            }
            return;
        }
        take_line(j, s, (size_t)(nl - s));
        p->err_parsed += (size_t)(nl - s) + 1;
    }
}

/* appends what fd has to (buf, len, cap); closes it at EOF. Returns false on out of memory */
static bool drain(int *fd, char **buf, size_t *len, size_t *cap)
{
    char tmp[65536];
    while (*fd >= 0) {
        ssize_t r = read(*fd, tmp, sizeof tmp);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            close(*fd);
            *fd = -1;
            return true;
        }
        if (r == 0) {
            close(*fd);
            *fd = -1;
            return true;
        }
        if (*len + (size_t)r + 1 > *cap) {
            size_t nc = *cap ? *cap : 4096;
            while (*len + (size_t)r + 1 > nc)
                nc *= 2;
            char *nb = realloc(*buf, nc);
            if (!nb)
                return false;
            *buf = nb;
            *cap = nc;
        }
        memcpy(*buf + *len, tmp, (size_t)r);
        *len += (size_t)r;
        (*buf)[*len] = 0;
    }
    return true;
}

bool tui_job_poll(tui_job *j)
{
    if (!j)
        return true;
    if (j->done)
        return true;
    job_priv *p = (job_priv *)j;
    bool ok = drain(&j->out_fd, &j->out, &j->out_len, &j->out_cap);
    ok = drain(&j->err_fd, &j->err, &j->err_len, &j->err_cap) && ok;
    if (!ok) { /* out of memory: stop listening; the child gets SIGPIPE */
        if (j->out_fd >= 0)
            close(j->out_fd);
        if (j->err_fd >= 0)
            close(j->err_fd);
        j->out_fd = j->err_fd = -1;
    }
    parse_err(p, false);
    if (!p->reaped) {
        int st;
        pid_t r = waitpid(j->pid, &st, WNOHANG);
        if (r == j->pid || (r < 0 && errno == ECHILD)) {
            p->reaped = true;
            if (r == j->pid)
                j->status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
            else
                j->status = 1;
        }
    }
    if (p->reaped) {
        /* whatever it wrote before exiting is in the pipes; a grandchild holding them
           open is not waited for */
        drain(&j->out_fd, &j->out, &j->out_len, &j->out_cap);
        drain(&j->err_fd, &j->err, &j->err_len, &j->err_cap);
        if (j->out_fd >= 0)
            close(j->out_fd);
        if (j->err_fd >= 0)
            close(j->err_fd);
        j->out_fd = j->err_fd = -1;
        parse_err(p, true);
        j->done = true;
    }
    return j->done;
}

/* polls until done or until deadline (monotonic seconds; <= 0: none) */
void tui_job_wait_io(const tui_job *j, int ms)
{
    struct pollfd fds[2];
    int n = 0;
    if (j->out_fd >= 0)
        fds[n++] = (struct pollfd){.fd = j->out_fd, .events = POLLIN};
    if (j->err_fd >= 0)
        fds[n++] = (struct pollfd){.fd = j->err_fd, .events = POLLIN};
    if (n)
        poll(fds, (nfds_t)n, ms);
    else
        nanosleep(&(struct timespec){0, (long)ms * 1000000L}, NULL);
}

static void wait_until(tui_job *j, double deadline)
{
    while (!tui_job_poll(j)) {
        if (deadline > 0 && now_s() >= deadline)
            return;
        tui_job_wait_io(j, 20);
    }
}

void tui_job_wait(tui_job *j)
{
    if (j)
        wait_until(j, 0);
}

void tui_job_cancel(tui_job *j)
{
    if (!j || tui_job_poll(j))
        return;
    j->cancelled = true;
    kill(-j->pid, SIGINT);
    wait_until(j, now_s() + 3.0);
    if (!j->done) {
        kill(-j->pid, SIGKILL);
        j->killed = true;
        wait_until(j, 0);
    }
}

void tui_job_free(tui_job *j)
{
    if (!j)
        return;
    if (!j->done) { /* still running: it does not outlive the TUI */
        kill(-j->pid, SIGKILL);
        wait_until(j, 0);
    }
    if (j->out_fd >= 0)
        close(j->out_fd);
    if (j->err_fd >= 0)
        close(j->err_fd);
    free(j->out);
    free(j->err);
    free(j);
}

/* whether s[0..n) contains needle */
static bool memmem_s(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(s + i, needle, m))
            return true;
    return false;
}

const char *tui_job_error(const tui_job *j)
{
    if (!j)
        return "";
    job_priv *p = (job_priv *)j; /* malloc'd by tui_job_start: writable */
    if (j->cancelled) {
        snprintf(p->error, sizeof p->error, "%s: cancelled", j->title);
        return p->error;
    }
    /* the last "nanobench: ..." (or "nanobench COMMAND: ...") line */
    const char *best = NULL;
    size_t bl = 0;
    for (size_t i = 0; j->err && i < j->err_len;) {
        const char *s = j->err + i;
        const char *nl = memchr(s, '\n', j->err_len - i);
        size_t n = nl ? (size_t)(nl - s) : j->err_len - i;
        if (n > 11 && !strncmp(s, "nanobench", 9) && memmem_s(s, n, ": ") &&
            !memmem_s(s, n, "recorded as run ")) {
            best = s;
            bl = n;
        }
        i += n + 1;
    }
    if (best) {
        if (bl >= sizeof p->error)
            bl = sizeof p->error - 1;
        memcpy(p->error, best, bl);
        p->error[bl] = 0;
        while (bl && p->error[bl - 1] == '\r')
            p->error[--bl] = 0;
    } else if (j->last_line[0])
        snprintf(p->error, sizeof p->error, "%s", j->last_line);
    else if (!j->done)
        snprintf(p->error, sizeof p->error, "%s: running", j->title);
    else if (j->status > 128)
        snprintf(p->error, sizeof p->error, "%s: killed by signal %d", j->title, j->status - 128);
    else
        snprintf(p->error, sizeof p->error, "%s: exit status %d", j->title, j->status);
    return p->error;
}
