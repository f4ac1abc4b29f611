/* Input recipes (recipe.h). */
#define _POSIX_C_SOURCE 200809L
#include "recipe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

nb_tensor *nb_recipe_generate(const nb_recipe_input *ri)
{
    nb_status st = {0};
    nb_tensor *t = NULL;
    bool i64 = !strcmp(ri->dtype, "int64");
    if (nb_tensor_new(i64 ? NB_INT64 : NB_FLOAT, ri->rank, ri->dims, &t, &st))
        return NULL;
    uint32_t state = ri->nargs ? (uint32_t)ri->args[0] : 0;
    if (!strcmp(ri->gen, "uniform")) {
        nb_tensor_fill_uniform(t, state, ri->args[1], ri->args[2]);
        return t;
    }
    for (int64_t i = 0; i < t->numel; i++) {
        double v = 0;
        if (!strcmp(ri->gen, "const")) {
            v = ri->args[0];
        } else {
            double u = nb_mulberry32(&state) / 4294967296.0;
            if (!strcmp(ri->gen, "tone"))
                v = ri->args[2] * sin(2 * M_PI * ri->args[1] * (double)i / ri->args[3]) +
                    ri->args[4] * (2 * u - 1);
            else {
                nb_tensor_free(t);
                return NULL;
            }
        }
        if (i64)
            ((int64_t *)t->data)[i] = (int64_t)v;
        else
            ((float *)t->data)[i] = (float)v;
    }
    return t;
}

int nb_recipes_load(const char *path, nb_recipe *cases, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n_cases = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char cname[64], model[128], input[128], dtype[16], shape[128], gen[16];
        double a[6] = {0};
        int got = sscanf(line, "%63s %127s %127s %15s %127s %15s %lf %lf %lf %lf %lf %lf", cname,
                         model, input, dtype, shape, gen, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
        if (got < 7)
            continue;
        nb_recipe *c = NULL;
        for (int i = 0; i < n_cases; i++)
            if (!strcmp(cases[i].name, cname))
                c = &cases[i];
        if (!c) {
            if (n_cases == max)
                break;
            c = &cases[n_cases++];
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%s", cname);
            snprintf(c->model, sizeof c->model, "%s", model);
        }
        if (c->n == 8)
            continue;
        nb_recipe_input *ri = &c->in[c->n++];
        snprintf(ri->name, sizeof ri->name, "%s", input);
        snprintf(ri->dtype, sizeof ri->dtype, "%s", dtype);
        snprintf(ri->gen, sizeof ri->gen, "%s", gen);
        ri->nargs = got - 6;
        memcpy(ri->args, a, sizeof a);
        ri->rank = 0;
        if (strcmp(shape, "-") != 0) {
            char *save = NULL;
            for (char *p = strtok_r(shape, ",", &save); p && ri->rank < NB_MAX_RANK;
                 p = strtok_r(NULL, ",", &save))
                ri->dims[ri->rank++] = atoll(p);
        }
    }
    fclose(f);
    return n_cases;
}

void nb_models_dir(char *buf, size_t len)
{
    const char *md = getenv("NANOBENCH_MODELS");
    const char *cache = getenv("NANOBENCH_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (md && *md)
        snprintf(buf, len, "%s", md);
    else if (cache && *cache)
        snprintf(buf, len, "%s/models", cache);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/nanobench/models", xdg);
    else
        snprintf(buf, len, "%s/.cache/nanobench/models", home ? home : ".");
}
