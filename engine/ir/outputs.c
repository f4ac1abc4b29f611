/* nanobench: outputs whole or not at all (issue 25; include/nb/tensor.h).
 *
 * Every output a command makes is written under a temporary name of its own beside the
 * final one, "FINAL.tmp.PID", and renamed into place once complete; renames in one
 * folder are atomic (POSIX rename). A set of outputs (atc's NAME.exeom and NAME.dbg, the
 * files of a dump folder) is renamed with SIGINT, SIGTERM and SIGHUP held, so that an
 * interrupt cannot fall between two renames. Temporaries are named by the process that
 * writes them: one whose process is gone (killed with SIGKILL, a crash) is "stale" and
 * removed by the next run to the same name. */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nb/tensor.h"

/* The base a temporary of final is named from: final itself, or, when final's file name
 * with ".tmp.PID" would pass NAME_MAX (255), its first 200 bytes, '~' and 8 hex digits of
 * FNV-1a of the whole name (still unique to final, and the same for every run). */
static void tmp_base(const char *final, char *out, size_t len)
{
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    size_t bl = strlen(base);
    if (bl + 24 <= 255) {
        snprintf(out, len, "%s", final);
        return;
    }
    uint32_t h = 2166136261u;
    for (const char *p = base; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    snprintf(out, len, "%.*s%.200s~%08x", (int)(base - final), final, base, (unsigned)h);
}

void nb_tmp_path(const char *final, char *out, size_t len)
{
    char b[8192];
    tmp_base(final, b, sizeof b);
    snprintf(out, len, "%s.tmp.%ld", b, (long)getpid());
}

void nb_part_path(const char *final, char *out, size_t len)
{
    char b[8192];
    tmp_base(final, b, sizeof b);
    snprintf(out, len, "%s.%ld.part", b, (long)getpid());
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void nb_remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (!S_ISDIR(sb.st_mode)) {
        unlink(path);
        return;
    }
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The process a temporary's suffix names: ".tmp.<pid>[...]" or ".<pid>.part" at name + at;
 * 0 when the suffix is neither. */
static long suffix_pid(const char *name, size_t at)
{
    const char *p = name + at;
    char *end;
    long pid;
    if (!strncmp(p, ".tmp.", 5)) {
        pid = strtol(p + 5, &end, 10);
        return end != p + 5 && pid > 0 && (!*end || *end == '.') ? pid : 0;
    }
    if (*p != '.')
        return 0;
    pid = strtol(p + 1, &end, 10);
    return end != p + 1 && pid > 0 && !strcmp(end, ".part") ? pid : 0;
}

/* Process pid is gone: no such process, or a zombie (dead, not yet reaped: a killed
 * command whose parent died is reparented, and a container's init may reap it late). */
bool nb_pid_gone(long pid)
{
    if (pid == (long)getpid())
        return false;
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *rp = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold anything */
    return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static bool gone(long pid) { return nb_pid_gone(pid); }

/* True when name is "<base>.tmp.<pid>..." or "<base>.<pid>.part" and process pid is gone. */
static bool stale_name(const char *name, const char *base, size_t bl)
{
    if (strncmp(name, base, bl) != 0)
        return false;
    long pid = suffix_pid(name, bl);
    return pid > 0 && gone(pid);
}

int nb_remove_stale_tmps(const char *final)
{
    char dir[4096], tb[8192];
    tmp_base(final, tb, sizeof tb);
    final = tb;
    snprintf(dir, sizeof dir, "%s", final);
    char *slash = strrchr(dir, '/');
    const char *base = final;
    if (slash) {
        base = final + (slash - dir) + 1;
        if (slash == dir)
            slash[1] = 0;
        else
            *slash = 0;
    } else {
        strcpy(dir, ".");
    }
    size_t bl = strlen(base);
    if (!bl)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!stale_name(e->d_name, base, bl))
            continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        nb_remove_tree(p);
        n++;
    }
    closedir(d);
    return n;
}

static void hold_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, old);
}

nb_err nb_publish_pair(const char *tmp_a, const char *a, const char *tmp_b, const char *b,
                       nb_status *st)
{
    sigset_t old;
    hold_signals(&old);
    nb_err e = NB_OK;
    if (rename(tmp_b, b) != 0)
        e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", b, strerror(errno));
    else if (rename(tmp_a, a) != 0)
        e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s (%s is new, %s is not: they do not "
                    "belong together)", a, strerror(errno), b, a);
    if (e) {
        unlink(tmp_a);
        unlink(tmp_b);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

nb_err nb_publish_files(const char *const *tmp, const char *const *final, int n, nb_status *st)
{
    sigset_t old;
    hold_signals(&old);
    nb_err e = NB_OK;
    int i = 0;
    for (; i < n && !e; i++)
        if (rename(tmp[i], final[i]) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s%s", final[i], strerror(errno),
                        i ? " (the outputs before it are the new ones)" : "");
    for (int j = e ? i - 1 : n; j < n; j++)
        unlink(tmp[j]);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* Swaps the folders a and b (RENAME_EXCHANGE; where the file system lacks it, a moved
 * aside first). Returns 0 or -1 with errno. */
static int exchange(const char *a, const char *b)
{
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    char aside[8192];
    snprintf(aside, sizeof aside, "%s.old", a);
    if (rename(b, aside) != 0)
        return -1;
    if (rename(a, b) != 0) {
        int keep = errno;
        rename(aside, b);
        errno = keep;
        return -1;
    }
    return rename(aside, a);
}

/* True when every entry of dir is a regular file that ours() takes (NULL: any entry). */
static bool all_ours(const char *dir, bool (*ours)(const char *name))
{
    if (!ours)
        return true;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool all = true;
    struct dirent *e;
    while (all && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[8192];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        all = lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && ours(e->d_name);
    }
    closedir(d);
    return all;
}

nb_err nb_publish_dir(const char *tmp, const char *final, bool (*ours)(const char *name),
                      nb_status *st)
{
    struct stat sb;
    nb_err e = NB_OK;
    sigset_t old;
    if (lstat(final, &sb) == 0 && S_ISDIR(sb.st_mode) && all_ours(final, ours)) {
        /* an earlier output of the same kind: replaced whole, in one atomic swap */
        hold_signals(&old);
        if (exchange(tmp, final) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", final, strerror(errno));
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        nb_remove_tree(tmp); /* the earlier output, or the new one that failed */
        return e;
    }
    if (lstat(final, &sb) != 0) { /* new: the folder renamed whole */
        hold_signals(&old);
        if (rename(tmp, final) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", final, strerror(errno));
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e)
            nb_remove_tree(tmp);
        return e;
    }
    if (!S_ISDIR(sb.st_mode)) {
        nb_remove_tree(tmp);
        return nb_fail(st, NB_ERR_IO, "%s: exists and is not a folder", final);
    }
    /* an existing folder: first every name checked (a folder in the way of a file would
       fail halfway), then the files moved in with the signals held */
    DIR *d = opendir(tmp);
    if (!d) {
        e = nb_fail(st, NB_ERR_IO, "%s: %s", tmp, strerror(errno));
        nb_remove_tree(tmp);
        return e;
    }
    struct dirent *ent;
    char from[8192], to[8192];
    while (!e && (ent = readdir(d))) {
        if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
            continue;
        snprintf(to, sizeof to, "%s/%s", final, ent->d_name);
        struct stat tb;
        if (lstat(to, &tb) == 0 && S_ISDIR(tb.st_mode))
            e = nb_fail(st, NB_ERR_IO, "%s: a folder is in the way of an output file; nothing "
                        "was written", to);
    }
    if (!e) {
        rewinddir(d);
        hold_signals(&old);
        while (!e && (ent = readdir(d))) {
            if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
                continue;
            snprintf(from, sizeof from, "%s/%s", tmp, ent->d_name);
            snprintf(to, sizeof to, "%s/%s", final, ent->d_name);
            if (rename(from, to) != 0)
                e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", to, strerror(errno));
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    closedir(d);
    nb_remove_tree(tmp);
    return e;
}

bool nb_is_dump_file_name(const char *name)
{
    /* from the end: 16 digits, ".0.", digits, ".", then op_type.op_name (at least one '.') */
    size_t n = strlen(name);
    if (n < 16 + 3 + 1 + 1 + 3)
        return false;
    const char *p = name + n - 16;
    for (int i = 0; i < 16; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    if (strncmp(p - 3, ".0.", 3) != 0)
        return false;
    const char *q = p - 4;
    if (*q < '0' || *q > '9')
        return false;
    while (q > name && *q >= '0' && *q <= '9')
        q--;
    return *q == '.' && memchr(name, '.', (size_t)(q - name)) != NULL;
}

int nb_remove_stale_tmps_under(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        const char *t = strstr(e->d_name, ".tmp.");
        long pid = t ? suffix_pid(e->d_name, (size_t)(t - e->d_name)) : 0;
        struct stat sb;
        if (pid > 0 && gone(pid)) {
            nb_remove_tree(p);
            n++;
        } else if (depth > 0 && (e->d_type == DT_DIR ||
                                 (e->d_type == DT_UNKNOWN && lstat(p, &sb) == 0 &&
                                  S_ISDIR(sb.st_mode)))) {
            n += nb_remove_stale_tmps_under(p, depth - 1);
        }
    }
    closedir(d);
    return n;
}

void nb_safe_name(const char *name, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = name; *p && o + 1 < len; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && o > 0);
        out[o++] = ok ? c : '_';
    }
    if (o == 0 && len > 1)
        out[o++] = '_';
    out[o] = 0;
}

void nb_put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\\': fputs("\\\\", f); break;
        default: fputc(*s, f);
        }
    }
}

void nb_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r == 'r' ? '\r' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int nb_list_files(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **v = NULL;
    int n = 0, cap = 0;
    bool oom = false;
    struct dirent *de;
    while (!oom && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4400];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            stat(path, &sb) || !S_ISREG(sb.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, sizeof *v * (size_t)cap);
            if (!nv) {
                oom = true;
                break;
            }
            v = nv;
        }
        if (!(v[n] = strdup(path)))
            oom = true;
        else
            n++;
    }
    closedir(d);
    if (oom) {
        nb_files_free(v, n);
        errno = ENOMEM;
        return -1;
    }
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_path);
    *out = v;
    return n;
}

int nb_list_batches(const char *dir, char ***out, int *n_skipped, char *skipped, size_t len)
{
    *n_skipped = 0;
    if (len)
        skipped[0] = 0;
    int n = nb_list_files(dir, out);
    if (n <= 0)
        return n;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        char *p = (*out)[i];
        size_t l = strlen(p);
        if (l > 4 && (!strcasecmp(p + l - 4, ".npy") || !strcasecmp(p + l - 4, ".bin"))) {
            (*out)[kept++] = p;
            continue;
        }
        if (!(*n_skipped)++ && len)
            snprintf(skipped, len, "%s", p);
        free(p);
    }
    return kept;
}

void nb_files_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}
