/* nanobench: what a command is writing, removed when the process is interrupted (SIGINT,
 * SIGTERM, SIGHUP), so that Ctrl-C leaves no partial output (cli.h). Only what this
 * process made is removed: its own files and folders, and the temporaries it writes
 * outputs under (FINAL.tmp.PID); never a final output, which may be a previous run's good
 * one (issue 25: an interrupted recompile deleted the earlier NAME.exeom and NAME.dbg).
 * The handler uses async-signal-safe calls only: unlinkat, openat, getdents64, rmdir. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "nb/tensor.h"

enum { MAX_PATHS = 40, PATH_LEN = 4400 };
static char paths[MAX_PATHS][PATH_LEN];
static volatile sig_atomic_t n_paths;
static char sweep_dir[PATH_LEN]; /* cli_cleanup_add_sweep's folder, or "" */
static char pid_suffix[32];      /* ".tmp.<pid>" */

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Removes name in dirfd: a file, or a folder with what it holds (depth-limited). */
static void rm_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 10)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[2048];
    for (int pass = 0; pass < 64; pass++) { /* until a pass finds nothing to remove */
        lseek(fd, 0, SEEK_SET);
        int removed = 0;
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
                off += d->d_reclen;
                if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
                    continue;
                rm_at(fd, d->d_name, depth + 1);
                removed++;
            }
        }
        if (!removed)
            break;
    }
    close(fd);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Under dirfd/name: every entry named "*.tmp.<our pid>" removed, folders searched. */
static void sweep_at(int dirfd, const char *name, int depth)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[2048];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
                continue;
            if (ends_with(d->d_name, pid_suffix))
                rm_at(fd, d->d_name, 0);
            else if (depth < 6 && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN))
                sweep_at(fd, d->d_name, depth + 1); /* not a folder: openat fails, no harm */
        }
    }
    close(fd);
}

static pthread_t main_thread; /* the thread that writes outputs (and blocks signals around
                                 each publication) */

static void on_signal(int sig)
{
    /* a signal to the process goes to any thread that does not block it: OpenBLAS's workers,
       compare's readers. The main thread holds signals while it renames an output into
       place; handled in another thread, this sweep would run beside the rename and empty the
       folder just published (seen: a dump folder of 0 files). So it is passed on to the main
       thread, where it waits for the rename. (pthread_kill is a tgkill.) */
    if (!pthread_equal(pthread_self(), main_thread)) {
        pthread_kill(main_thread, sig);
        return;
    }
    for (int i = 0; i < n_paths; i++)
        rm_at(AT_FDCWD, paths[i], 0);
    if (sweep_dir[0])
        sweep_at(AT_FDCWD, sweep_dir, 0);
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_cleanup_install(void)
{
    main_thread = pthread_self();
    snprintf(pid_suffix, sizeof pid_suffix, ".tmp.%ld", (long)getpid());
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void add(const char *fmt, const char *path, const char *suffix)
{
    if (n_paths >= MAX_PATHS || strlen(path) + 64 > PATH_LEN)
        return;
    int k = n_paths;
    snprintf(paths[k], PATH_LEN, fmt, path, suffix);
    n_paths = k + 1; /* published after the string is complete */
}

void cli_cleanup_add(const char *path)
{
    if (n_paths > MAX_PATHS - 3)
        return;
    add("%s%s", path, "");
    add("%s%s", path, ".tmp");
    add("%s%s", path, pid_suffix);
}

void cli_cleanup_add_tmp(const char *final)
{
    char tmp[PATH_LEN];
    if (strlen(final) + 64 > PATH_LEN)
        return;
    nb_tmp_path(final, tmp, sizeof tmp); /* as the writers name it (a long name shortened) */
    add("%s%s", tmp, "");            /* FINAL.tmp.PID */
    add("%s%s", tmp, pid_suffix);    /* its own atomic writer's FINAL.tmp.PID.tmp.PID */
}

void cli_cleanup_add_sweep(const char *dir)
{
    sweep_dir[0] = 0;
    if (strlen(dir) + 1 < sizeof sweep_dir)
        snprintf(sweep_dir, sizeof sweep_dir, "%s", dir);
}

void cli_cleanup_clear(void)
{
    n_paths = 0;
    sweep_dir[0] = 0;
}

void cli_cleanup_tmp_progress(void *user, const char *pass, int done, int total)
{
    (void)pass, (void)total;
    if (!done)
        cli_cleanup_add_tmp(user);
    else
        cli_cleanup_clear();
}
