/*
 * Random reads into a hot array: the standalone loop behind docs/PERFORMANCE.md's
 * "PageRank: parallel setup, map-back in new-id order, 16-bit hub ids" (is pull
 * PageRank bound by missing on the contributions, or by streaming the lists?),
 * recreated from its description (the original scratch harness was never committed).
 *
 * 32 M random ids index a hot array of single-precision contributions (64 KiB, in L1/L2,
 * as the masked-ids experiment of that section), summed in double precision, as pull
 * PageRank sums a vertex's in-neighbours. Two id sources: a small block of ids reused
 * (8 KiB, in L1) and every id streamed once from a 128 MB array. Two loops: scalar
 * loads, and the AVX2 gather (two gathers of eight floats a step, widened to four
 * double-precision sums, as `crates/workloads/src/graph/pagerank.rs`). Printed: ns per
 * entry, median over ROUNDS, pinned to CPU 0. The two loops' sums are checked against
 * each other (the same ids, added in another order: equal within 1e-9 relative).
 *
 * Build: gcc -O2 -mavx2 gather.c -o gather
 * Usage: gather [ENTRIES] [ROUNDS]   (33554432, 7)
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define HOT (64 * 1024 / 4) /* contributions: 16 Ki floats, 64 KiB */
#define L1_IDS 2048         /* 8 KiB of ids, reused */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Sums c[ids[i % block]] for `entries` entries, scalar loads. */
static double scalar(const float *c, const uint32_t *ids, size_t block, size_t entries) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t done = 0; done < entries; done += block)
        for (size_t i = 0; i < block; i += 4) {
            s0 += c[ids[i]];
            s1 += c[ids[i + 1]];
            s2 += c[ids[i + 2]];
            s3 += c[ids[i + 3]];
        }
    return (s0 + s1) + (s2 + s3);
}

/* The same with the AVX2 gather: two gathers of eight floats a step, widened. */
static double gathered(const float *c, const uint32_t *ids, size_t block, size_t entries) {
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                      _mm256_setzero_pd()};
    for (size_t done = 0; done < entries; done += block)
        for (size_t i = 0; i < block; i += 16) {
            __m256i i0 = _mm256_loadu_si256((const __m256i *)(ids + i));
            __m256i i1 = _mm256_loadu_si256((const __m256i *)(ids + i + 8));
            __m256 g0 = _mm256_i32gather_ps(c, i0, 4);
            __m256 g1 = _mm256_i32gather_ps(c, i1, 4);
            acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(g0)));
            acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(g0, 1)));
            acc[2] = _mm256_add_pd(acc[2], _mm256_cvtps_pd(_mm256_castps256_ps128(g1)));
            acc[3] = _mm256_add_pd(acc[3], _mm256_cvtps_pd(_mm256_extractf128_ps(g1, 1)));
        }
    double x[4];
    _mm256_storeu_pd(x, _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
    return (x[0] + x[1]) + (x[2] + x[3]);
}

typedef double (*sum_fn)(const float *, const uint32_t *, size_t, size_t);

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median ns per entry over `rounds`; the sum of the last round in *sum. */
static double time_ns(sum_fn f, const float *c, const uint32_t *ids, size_t block,
                      size_t entries, int rounds, double *sum) {
    double t[64];
    for (int r = 0; r < rounds; r++) {
        double start = now();
        *sum = f(c, ids, block, entries);
        t[r] = (now() - start) / entries * 1e9;
    }
    qsort(t, rounds, sizeof t[0], cmp_double);
    return t[rounds / 2];
}

int main(int argc, char **argv) {
    size_t entries = argc > 1 ? strtoull(argv[1], NULL, 10) : 33554432;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    entries = entries / L1_IDS * L1_IDS;
    if (entries == 0 || rounds < 1 || rounds > 64) {
        fprintf(stderr, "usage: gather [ENTRIES >= %d] [ROUNDS 1-64]\n", L1_IDS);
        return 2;
    }
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    if (sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) perror("pinning to CPU 0 (running unpinned)");
    float *c = aligned_alloc(64, HOT * sizeof(float));
    uint32_t *ids = aligned_alloc(64, entries * sizeof(uint32_t));
    if (!c || !ids) {
        fprintf(stderr, "cannot allocate %zu ids\n", entries);
        return 1;
    }
    uint64_t x = 88172645463325252ull; /* xorshift64, fixed seed */
    for (size_t i = 0; i < HOT; i++) c[i] = 1.0f / (float)(i + 1);
    for (size_t i = 0; i < entries; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = (uint32_t)(x % HOT);
    }
    printf("%zu entries into %d hot floats (64 KiB), median of %d rounds, CPU 0\n", entries, HOT,
           rounds);
    printf("%-28s %12s %12s\n", "ids", "scalar ns", "gather ns");
    const char *names[2] = {"in L1 (8 KiB, reused)", "streamed (each read once)"};
    size_t blocks[2] = {L1_IDS, entries};
    for (int k = 0; k < 2; k++) {
        double s_scalar, s_gather;
        double a = time_ns(scalar, c, ids, blocks[k], entries, rounds, &s_scalar);
        double b = time_ns(gathered, c, ids, blocks[k], entries, rounds, &s_gather);
        if (fabs(s_scalar - s_gather) > 1e-9 * fabs(s_scalar)) {
            fprintf(stderr, "sums differ: scalar %.17g, gather %.17g\n", s_scalar, s_gather);
            return 1;
        }
        printf("%-28s %12.3f %12.3f\n", names[k], a, b);
    }
    free(ids);
    free(c);
    return 0;
}
