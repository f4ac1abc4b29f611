/* nanobench infer: the output folder (infer_out.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cli.h"
#include "nb/accucmp.h"
#include "infer_out.h"

/* True for a file name this command writes: cli_safe_name() characters, ending in .npy. */
static bool our_file_name(const char *f)
{
    size_t n = strlen(f);
    if (n < 5 || strcmp(f + n - 4, ".npy") != 0 || f[0] == '.')
        return false;
    for (const char *p = f; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

/* Collects the file column of an earlier DIR/manifest.tsv (only names this command could
 * have written): they are removed once the new run's files are in place, so that a reused
 * folder holds exactly what the new manifest lists. */
static int previous_files(const char *dir, char ***out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    *out = NULL;
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return 0;
    int n = 0, cap = 0;
    char *line = NULL;
    size_t ll = 0;
    while (getline(&line, &ll, f) > 0) {
        char *file = strchr(line, '\t');
        if (!file)
            continue;
        file++;
        char *end = strchr(file, '\t');
        if (!end)
            continue;
        *end = 0;
        if (!our_file_name(file))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nl = realloc(*out, sizeof(char *) * (size_t)cap);
            if (!nl)
                break;
            *out = nl;
        }
        if (!((*out)[n] = strdup(file)))
            break;
        n++;
    }
    free(line);
    fclose(f);
    return n;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool strset_has(const strset *z, const char *s)
{
    if (!z->cap)
        return false;
    for (size_t i = fnv1a(s) & (z->cap - 1);; i = (i + 1) & (z->cap - 1)) {
        if (!z->slot[i])
            return false;
        if (!strcmp(z->slot[i], s))
            return true;
    }
}

/* Adds s (kept by pointer); false when out of memory. */
static bool strset_add(strset *z, const char *s)
{
    if (2 * (z->n + 1) > z->cap) {
        size_t nc = z->cap ? 2 * z->cap : 64;
        const char **ns = calloc(nc, sizeof *ns);
        if (!ns)
            return false;
        for (size_t i = 0; i < z->cap; i++) {
            if (!z->slot[i])
                continue;
            size_t k = fnv1a(z->slot[i]) & (nc - 1);
            while (ns[k])
                k = (k + 1) & (nc - 1);
            ns[k] = z->slot[i];
        }
        free(z->slot);
        z->slot = ns;
        z->cap = nc;
    }
    size_t k = fnv1a(s) & (z->cap - 1);
    while (z->slot[k])
        k = (k + 1) & (z->cap - 1);
    z->slot[k] = s;
    z->n++;
    return true;
}

int add_file(dump_ctx *d, const char *name, const nb_tensor *t, const char *kind)
{
    if (strset_has(&d->names, name))
        return 0;
    if (d->n == d->cap) {
        int nc = d->cap ? d->cap * 2 : 32;
        outfile *f = realloc(d->files, sizeof(outfile) * (size_t)nc);
        if (!f)
            return -1;
        d->files = f;
        d->cap = nc;
    }
    d->files[d->n].name = strdup(name);
    d->files[d->n].path = NULL;
    d->files[d->n].t = t;
    d->files[d->n].kind = kind;
    if (!d->files[d->n].name || !strset_add(&d->names, d->files[d->n].name)) {
        free(d->files[d->n].name);
        return -1;
    }
    d->n++;
    return 0;
}

/* Writes every file of d into dir with DIR/manifest.tsv (name, file, kind, dtype, shape;
 * names escaped by cli_put_escaped). The files are first written into a fresh DIR/.nb-infer.PID
 * folder and moved in only when all are written, so that a failed run leaves the folder as
 * it was; then the files an earlier manifest listed and this run did not write are removed.
 * Returns the exit status: 0, 1 (out of memory), 2 (a file cannot be written). */
int write_outputs(const char *dir, dump_ctx *d, nb_status *st)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.nb-infer.%ld", dir, (long)getpid());
    if (mkdir(tmp, 0777) != 0) {
        return cli_fail(2, "%s: cannot create a folder in the output folder: %s", tmp,
                        strerror(errno));
    }
    char *manifest = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&manifest, &mlen);
    int rc = mf ? 0 : 1;
    if (mf)
        fputs("name\tfile\tkind\tdtype\tshape\n", mf);
    char **fname = calloc((size_t)d->n + 1, sizeof(char *));
    if (!fname)
        rc = 1;
    /* files of an earlier run (its manifest lists them) may be replaced; any other file
       in the folder (the user's input.npy, say) is never written over */
    char **old = NULL;
    int n_old = previous_files(dir, &old);
    strset taken = {0}, earlier = {0};
    for (int j = 0; j < n_old; j++)
        if (!strset_add(&earlier, old[j]))
            rc = 1;
    for (int i = 0; i < d->n && rc == 0; i++) {
        char base[200], fn[240];
        cli_safe_name(d->files[i].name, base, sizeof base);
        snprintf(fn, sizeof fn, "%s.npy", base);
        for (int k = 2;; k++) {
            bool clash = !strcmp(fn, "manifest.tsv") || strset_has(&taken, fn);
            if (!clash) {
                bool ours = strset_has(&earlier, fn);
                char ep[4400];
                struct stat sb;
                snprintf(ep, sizeof ep, "%s/%s", dir, fn);
                clash = !ours && lstat(ep, &sb) == 0;
            }
            if (!clash)
                break;
            snprintf(fn, sizeof fn, "%s_%d.npy", base, k);
        }
        size_t pl = strlen(dir) + strlen(fn) + 2;
        if (!(fname[i] = strdup(fn)) || !strset_add(&taken, fname[i]) ||
            !(d->files[i].path = malloc(pl))) {
            rc = 1;
            break;
        }
        snprintf(d->files[i].path, pl, "%s/%s", dir, fn);
        char tp[4400];
        snprintf(tp, sizeof tp, "%s/%s", tmp, fn);
        if (nb_npy_write(tp, d->files[i].t, st)) {
            rc = cli_error(st);
            break;
        }
        char sh[160];
        cli_put_escaped(mf, d->files[i].name);
        fprintf(mf, "\t%s\t%s\t%s\t%s\n", fn, d->files[i].kind,
                nb_dtype_name(d->files[i].t->dtype),
                nb_shape_str(d->files[i].t->rank, d->files[i].t->dims, ',', sh, sizeof sh));
    }
    if (mf && fclose(mf) != 0 && rc == 0)
        rc = 1;
    char tp[4400], mp[4096];
    if (rc == 0) {
        snprintf(tp, sizeof tp, "%s/manifest.tsv", tmp);
        if (nb_write_file_atomic(tp, manifest, mlen, st))
            rc = cli_error(st);
    }
    /* nothing moves unless every destination can take a file (a folder in the way would
       fail halfway and leave the folder mixed) */
    for (int i = 0; i <= d->n && rc == 0; i++) {
        struct stat sb;
        if (i == d->n)
            snprintf(mp, sizeof mp, "%s/manifest.tsv", dir);
        else
            snprintf(mp, sizeof mp, "%s", d->files[i].path);
        if (lstat(mp, &sb) == 0 && S_ISDIR(sb.st_mode))
            rc = cli_fail(2, "%s: a folder is in the way of an output file; nothing was "
                          "written", mp);
    }
    /* move in: the .npy files, then the manifest that lists them */
    for (int i = 0; i < d->n && rc == 0; i++) {
        snprintf(tp, sizeof tp, "%s/%s", tmp, fname[i]);
        if (rename(tp, d->files[i].path) != 0) {
            rc = cli_fail(2, "%s: cannot write: %s", d->files[i].path, strerror(errno));
        }
    }
    if (rc == 0) {
        snprintf(tp, sizeof tp, "%s/manifest.tsv", tmp);
        snprintf(mp, sizeof mp, "%s/manifest.tsv", dir);
        if (rename(tp, mp) != 0) {
            rc = cli_fail(2, "%s: cannot write: %s", mp, strerror(errno));
        }
    }
    for (int k = 0; k < n_old; k++) {
        bool kept = strset_has(&taken, old[k]);
        if (!kept && rc == 0) {
            snprintf(mp, sizeof mp, "%s/%s", dir, old[k]);
            remove(mp);
        }
        free(old[k]);
    }
    free(old);
    free(taken.slot);
    free(earlier.slot);
    /* whatever is left in the temporary folder (after a failure) goes */
    for (int i = 0; i < d->n && fname; i++) {
        if (fname[i]) {
            snprintf(tp, sizeof tp, "%s/%s", tmp, fname[i]);
            remove(tp);
        }
        free(fname[i]);
    }
    free(fname);
    snprintf(tp, sizeof tp, "%s/manifest.tsv", tmp);
    remove(tp);
    rmdir(tmp);
    free(manifest);
    return rc;
}

