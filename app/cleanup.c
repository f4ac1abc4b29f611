/* nanobench: the files a command is writing, removed when the process is interrupted
 * (SIGINT, SIGTERM, SIGHUP), so that Ctrl-C leaves no partial output (cli.h). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { MAX_FILES = 10, PER_FILE = 3, PATH_LEN = 4400 };
/* each file, its ".tmp" and its ".tmp.PID" (nb_write_file_atomic's) */
static char paths[PER_FILE * MAX_FILES][PATH_LEN];
static volatile sig_atomic_t n_paths;

static void on_signal(int sig)
{
    for (int i = 0; i < n_paths; i++)
        unlink(paths[i]); /* async-signal-safe */
    for (int i = 0; i < n_paths; i++)
        rmdir(paths[i]); /* a registered scratch folder, once its files are gone */
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_cleanup_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

void cli_cleanup_add(const char *path)
{
    if (n_paths > PER_FILE * (MAX_FILES - 1) || strlen(path) + 32 > PATH_LEN)
        return;
    int k = n_paths;
    snprintf(paths[k], PATH_LEN, "%s", path);
    snprintf(paths[k + 1], PATH_LEN, "%s.tmp", path);
    snprintf(paths[k + 2], PATH_LEN, "%s.tmp.%ld", path, (long)getpid());
    n_paths = k + PER_FILE; /* published after the strings are complete */
}

void cli_cleanup_clear(void) { n_paths = 0; }
