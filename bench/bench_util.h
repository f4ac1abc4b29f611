/* The benchmarks' clock and median: a monotonic time in ms, and doubles in order for qsort. */
#ifndef NB_BENCH_UTIL_H
#define NB_BENCH_UTIL_H

#include <time.h>

static inline double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
