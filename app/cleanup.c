/* nanobench: the files a command is writing, removed when the process is interrupted
 * (SIGINT, SIGTERM, SIGHUP), so that Ctrl-C leaves no partial output (cli.h). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { MAX_FILES = 8, PATH_LEN = 4400 };
static char paths[2 * MAX_FILES][PATH_LEN]; /* each file and its ".tmp" */
static volatile sig_atomic_t n_paths;

static void on_signal(int sig)
{
    for (int i = 0; i < n_paths; i++)
        unlink(paths[i]); /* async-signal-safe */
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
    if (n_paths > 2 * MAX_FILES - 2 || strlen(path) + 5 > PATH_LEN)
        return;
    int k = n_paths;
    snprintf(paths[k], PATH_LEN, "%s", path);
    snprintf(paths[k + 1], PATH_LEN, "%s.tmp", path);
    n_paths = k + 2; /* published after the strings are complete */
}

void cli_cleanup_clear(void) { n_paths = 0; }
