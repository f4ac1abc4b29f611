/* nanobench: activation-arena planning (include/nb/atc.h).
 *
 * Buffers are placed one by one in some order; each goes into a gap of the offsets used by
 * the buffers already placed that live at the same time as it: the lowest gap that fits
 * (first fit, TFLite Micro's GreedyMemoryPlanner) or the tightest one (best fit). The order
 * matters: greedy-by-size is good but not optimal, so several orders are tried and the
 * smallest arena is kept. The lower bound is the heaviest step (sum of sizes alive then).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb/atc.h"

typedef struct ctx {
    const nb_live_buf *b;
    const int64_t *size; /* aligned */
    int mode;            /* ordering */
} ctx;

#define N_ORDERS 4
/* ordering / fit, indexed mode * 2 + fit */
static const char *const strategy_names[N_ORDERS * 2] = {
    "size/first-fit",     "size/best-fit",     "size-x-lifetime/first-fit",
    "size-x-lifetime/best-fit", "lifetime/first-fit", "lifetime/best-fit",
    "first-use/first-fit", "first-use/best-fit"};

static int64_t lifetime(const nb_live_buf *b) { return (int64_t)b->last - b->first + 1; }

/* qsort has no context argument in C11: the context of the sort in progress. */
static const ctx *sort_ctx;

static int cmp_order(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    const ctx *c = sort_ctx;
    const nb_live_buf *x = &c->b[a], *y = &c->b[b];
    int64_t kx = 0, ky = 0;
    switch (c->mode) {
    case 0: kx = c->size[a]; ky = c->size[b]; break;
    case 1: kx = c->size[a] * lifetime(x); ky = c->size[b] * lifetime(y); break;
    case 2: kx = lifetime(x); ky = lifetime(y); break;
    case 3: kx = -(int64_t)x->first; ky = -(int64_t)y->first; break;
    }
    if (kx != ky)
        return kx > ky ? -1 : 1; /* larger key first */
    if (c->size[a] != c->size[b])
        return c->size[a] > c->size[b] ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return a < b ? -1 : a > b;
}

typedef struct span {
    int64_t lo, hi;
} span;

static int cmp_span(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Which buffers live at the same step as which: buffer i's are adj[start[i] .. start[i+1]).
 * Built by a sweep in order of first step that keeps the buffers still alive, so it costs
 * O(n log n + pairs) instead of O(n^2); an unrolled LSTM of 100k steps has ~5 per buffer. */
typedef struct conflicts {
    int *start, *adj;
} conflicts;

/* Beyond max(8M, 16 n) pairs (64 MB of lists at least) the placement scans every pair
 * placed before, and tries only the two size orderings (a model where thousands of tensors
 * live at once). */
static int64_t max_pairs(int n) { return n * (int64_t)16 > (8 << 20) ? n * (int64_t)16 : 8 << 20; }

static const nb_live_buf *sweep_bufs;

static int cmp_first(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    const nb_live_buf *x = &sweep_bufs[a], *y = &sweep_bufs[b];
    return x->first != y->first ? (x->first > y->first) - (x->first < y->first)
                                : (a > b) - (a < b);
}

/* Fills cf (or only counts into deg when cf->adj is NULL); returns the number of pairs, or
 * -1 when it passes max_pairs(n). by_first and active hold n ints. */
static int64_t sweep(int n, const nb_live_buf *b, const int64_t *size, const int *by_first,
                     int *active, int *deg, conflicts *cf)
{
    int n_active = 0;
    int64_t pairs = 0;
    for (int q = 0; q < n; q++) {
        int i = by_first[q];
        if (size[i] == 0)
            continue;
        int kept = 0;
        for (int a = 0; a < n_active; a++) {
            int j = active[a];
            if (b[j].last < b[i].first)
                continue; /* dead before i is born: gone for good, the sweep only advances */
            active[kept++] = j;
            if (cf->adj) {
                cf->adj[cf->start[i] + deg[i]++] = j;
                cf->adj[cf->start[j] + deg[j]++] = i;
            } else {
                deg[i]++, deg[j]++;
            }
            if (++pairs > max_pairs(n))
                return -1;
        }
        n_active = kept;
        active[n_active++] = i;
    }
    return pairs;
}

/* Builds the conflict lists; false when out of memory or too many pairs (cf left empty). */
static bool build_conflicts(int n, const nb_live_buf *b, const int64_t *size, conflicts *cf)
{
    cf->start = cf->adj = NULL;
    int *by_first = malloc(sizeof(int) * (size_t)n), *active = malloc(sizeof(int) * (size_t)n);
    int *deg = calloc((size_t)n, sizeof(int));
    cf->start = malloc(sizeof(int) * ((size_t)n + 1));
    bool ok = by_first && active && deg && cf->start;
    if (ok) {
        for (int i = 0; i < n; i++)
            by_first[i] = i;
        sweep_bufs = b;
        qsort(by_first, (size_t)n, sizeof(int), cmp_first);
        int64_t pairs = sweep(n, b, size, by_first, active, deg, cf);
        ok = pairs >= 0 && (cf->adj = malloc(sizeof(int) * (size_t)(2 * pairs + 1)));
        if (ok) {
            cf->start[0] = 0;
            for (int i = 0; i < n; i++)
                cf->start[i + 1] = cf->start[i] + deg[i], deg[i] = 0;
            sweep(n, b, size, by_first, active, deg, cf);
        }
    }
    free(by_first), free(active), free(deg);
    if (!ok) {
        free(cf->start), free(cf->adj);
        cf->start = cf->adj = NULL;
    }
    return ok;
}

/* Places the buffers in order; returns the arena size. tmp holds n spans, rank n ints.
 * With conflict lists each buffer looks only at the buffers alive with it; without, at
 * every buffer placed before it. */
static int64_t place(int n, const nb_live_buf *b, const int64_t *size, const int *order,
                     bool best_fit, const conflicts *cf, int *rank, int64_t *off, span *tmp)
{
    int64_t arena = 0;
    for (int k = 0; k < n; k++)
        rank[order[k]] = k;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        int m = 0;
        if (cf->adj) {
            for (int a = cf->start[i]; a < cf->start[i + 1]; a++) {
                int j = cf->adj[a];
                if (rank[j] < k) {
                    tmp[m].lo = off[j];
                    tmp[m].hi = off[j] + size[j];
                    m++;
                }
            }
        } else {
            for (int q = 0; q < k; q++) {
                int j = order[q];
                if (b[j].last < b[i].first || b[j].first > b[i].last || size[j] == 0)
                    continue;
                tmp[m].lo = off[j];
                tmp[m].hi = off[j] + size[j];
                m++;
            }
        }
        qsort(tmp, (size_t)m, sizeof *tmp, cmp_span);
        int64_t cur = 0, pick = -1, pick_gap = INT64_MAX;
        for (int s = 0; s < m; s++) {
            int64_t gap = tmp[s].lo - cur;
            if (gap >= size[i] && (pick < 0 || (best_fit && gap < pick_gap))) {
                pick = cur;
                pick_gap = gap;
                if (!best_fit)
                    break;
            }
            if (tmp[s].hi > cur)
                cur = tmp[s].hi;
        }
        off[i] = pick >= 0 ? pick : cur;
        if (off[i] + size[i] > arena)
            arena = off[i] + size[i];
    }
    return arena;
}

nb_err nb_plan_arena(int n, const nb_live_buf *bufs, int64_t align, int64_t *offsets,
                     nb_arena_plan *plan, nb_status *st)
{
    memset(plan, 0, sizeof *plan);
    plan->strategy = "none";
    if (align < 1 || (align & (align - 1)))
        return nb_fail(st, NB_ERR_ARG, "arena alignment %lld is not a power of two",
                       (long long)align);
    int steps = 0;
    for (int i = 0; i < n; i++) {
        if (bufs[i].size < 0 || bufs[i].first > bufs[i].last || bufs[i].first < 0 ||
            bufs[i].size > INT64_MAX / 4)
            return nb_fail(st, NB_ERR_ARG, "buffer %d: size %lld over steps %d..%d is invalid",
                           i, (long long)bufs[i].size, bufs[i].first, bufs[i].last);
        if (bufs[i].last + 1 > steps)
            steps = bufs[i].last + 1;
    }
    if (n == 0)
        return NB_OK;
    int64_t *size = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *off = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *delta = calloc((size_t)steps + 1, sizeof(int64_t));
    int *order = malloc(sizeof(int) * (size_t)n);
    span *tmp = malloc(sizeof(span) * (size_t)n);
    int *rank = malloc(sizeof(int) * (size_t)n);
    if (!size || !off || !delta || !order || !tmp || !rank) {
        free(size), free(off), free(delta), free(order), free(tmp), free(rank);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        size[i] = (bufs[i].size + align - 1) & ~(align - 1);
        delta[bufs[i].first] += size[i];
        delta[bufs[i].last + 1] -= size[i];
    }
    int64_t alive = 0;
    for (int t = 0; t < steps; t++) {
        alive += delta[t];
        if (alive > plan->lower_bound)
            plan->lower_bound = alive;
    }
    conflicts cf;
    build_conflicts(n, bufs, size, &cf); /* without them, place() scans every pair */
    int64_t best = -1;
    int orders = cf.adj ? N_ORDERS : 1;
    for (int mode = 0; mode < orders && best != plan->lower_bound; mode++) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        ctx c = {.b = bufs, .size = size, .mode = mode};
        sort_ctx = &c;
        qsort(order, (size_t)n, sizeof(int), cmp_order);
        for (int fit = 0; fit < 2; fit++) {
            int64_t a = place(n, bufs, size, order, fit == 1, &cf, rank, off, tmp);
            if (mode == 0 && fit == 0)
                plan->greedy_by_size = a;
            if (best < 0 || a < best) {
                best = a;
                memcpy(offsets, off, sizeof(int64_t) * (size_t)n);
                plan->strategy = strategy_names[mode * 2 + fit];
            }
            if (best == plan->lower_bound)
                break;
        }
    }
    plan->arena = best;
    free(size), free(off), free(delta), free(order), free(tmp), free(rank);
    free(cf.start), free(cf.adj);
    return NB_OK;
}
