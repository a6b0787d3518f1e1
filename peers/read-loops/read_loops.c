/*
 * Read loops compared on one core: the harness behind docs/PERFORMANCE.md's "Two read
 * loops and a trial between them" table, recreated from its description (the original
 * scratch harness was never committed).
 *
 * One process, one array (default 132 MB) on 2 MiB pages (MADV_HUGEPAGE, first touched
 * before timing), pinned to CPU 0. Each round reads the array back to back for 0.5 s
 * through every variant in turn; a variant's rate in a round is divided by the wide
 * loop's rate in the same round, so the host's slow drifts cancel. Printed per variant:
 * the median rate (GB/s), the median ratio to the wide loop and its min-max over rounds.
 * Every read's sum is checked against the array's known sum (small integers, exact in
 * double precision), so a loop that skips data fails instead of looking fast.
 *
 * Build: gcc -O2 -mavx2 -mfma read_loops.c -o read_loops   (AVX-512 variants are
 * compiled per function and skipped where the CPU lacks AVX-512F)
 * Usage: read_loops [ARRAY_BYTES] [ROUNDS] [SECONDS_PER_READ]   (132e6, 9, 0.5)
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef double (*read_fn)(const double *a, size_t n);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double lanes(__m256d v) {
    double x[4];
    _mm256_storeu_pd(x, v);
    return x[0] + x[1] + x[2] + x[3];
}

/* wide: four register accumulators, 16 doubles (two cache lines) a step; scalescope's
 * `ReadLoop::Wide` and likwid load_avx's pattern. n is a multiple of 64 throughout. */
static double wide(const double *a, size_t n) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t j = 0; j < n; j += 16) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + j));
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + j + 4));
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + j + 8));
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + j + 12));
    }
    return lanes(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
}

/* likwid load_avx itself: four vmovaps a step into registers, no adds. It sums
 * nothing, so its check is skipped (a diagnostic only, as in the original). */
static double likwid_load(const double *a, size_t n) {
    const double *p = a, *end = a + n;
    __asm__ volatile("1:\n\t"
                     "vmovaps (%0), %%ymm1\n\t"
                     "vmovaps 32(%0), %%ymm2\n\t"
                     "vmovaps 64(%0), %%ymm3\n\t"
                     "vmovaps 96(%0), %%ymm4\n\t"
                     "add $128, %0\n\t"
                     "cmp %1, %0\n\t"
                     "jb 1b"
                     : "+r"(p)
                     : "r"(end)
                     : "ymm1", "ymm2", "ymm3", "ymm4", "cc", "memory");
    return -1.0;
}

/* Accumulators in memory: every 32-byte load is added to its slot, which is loaded
 * from and stored back to memory around the add (scalescope's `ReadLoop::Paced` with
 * 8 slots). Slot counts 4, 8 and 16. */
#define SLOT_LOOP(NAME, SLOTS)                                                       \
    static double NAME(const double *a, size_t n) {                                  \
        static __m256d slots[SLOTS] __attribute__((aligned(32)));                    \
        volatile __m256d *s = slots;                                                  \
        for (int k = 0; k < SLOTS; k++) s[k] = _mm256_setzero_pd();                   \
        for (size_t j = 0; j < n; j += 4 * SLOTS)                                     \
            for (int k = 0; k < SLOTS; k++)                                           \
                s[k] = _mm256_add_pd(s[k], _mm256_load_pd(a + j + 4 * k));            \
        __m256d t = _mm256_setzero_pd();                                              \
        for (int k = 0; k < SLOTS; k++) t = _mm256_add_pd(t, s[k]);                   \
        return lanes(t);                                                              \
    }
SLOT_LOOP(slots4, 4)
SLOT_LOOP(slots8, 8)
SLOT_LOOP(slots16, 16)

/* One register accumulator: every add waits for the last. */
static double one_acc(const double *a, size_t n) {
    __m256d s = _mm256_setzero_pd();
    for (size_t j = 0; j < n; j += 4) s = _mm256_add_pd(s, _mm256_load_pd(a + j));
    return lanes(s);
}

/* Two FMA chains: s = v * 1 + s, alternating between two accumulators. */
static double fma2(const double *a, size_t n) {
    __m256d one = _mm256_set1_pd(1.0), s0 = _mm256_setzero_pd(), s1 = s0;
    for (size_t j = 0; j < n; j += 8) {
        s0 = _mm256_fmadd_pd(_mm256_load_pd(a + j), one, s0);
        s1 = _mm256_fmadd_pd(_mm256_load_pd(a + j + 4), one, s1);
    }
    return lanes(_mm256_add_pd(s0, s1));
}

/* Eight register accumulators, four cache lines a step (written out so that the
 * compiler keeps them in registers). */
static double wide8(const double *a, size_t n) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (size_t j = 0; j < n; j += 32) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + j));
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + j + 4));
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + j + 8));
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + j + 12));
        s4 = _mm256_add_pd(s4, _mm256_load_pd(a + j + 16));
        s5 = _mm256_add_pd(s5, _mm256_load_pd(a + j + 20));
        s6 = _mm256_add_pd(s6, _mm256_load_pd(a + j + 24));
        s7 = _mm256_add_pd(s7, _mm256_load_pd(a + j + 28));
    }
    __m256d t = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
    return lanes(_mm256_add_pd(t, _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7))));
}

/* AVX-512: four 64-byte loads a step into four accumulators. */
__attribute__((target("avx512f"))) static double avx512(const double *a, size_t n) {
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t j = 0; j < n; j += 32) {
        s0 = _mm512_add_pd(s0, _mm512_load_pd(a + j));
        s1 = _mm512_add_pd(s1, _mm512_load_pd(a + j + 8));
        s2 = _mm512_add_pd(s2, _mm512_load_pd(a + j + 16));
        s3 = _mm512_add_pd(s3, _mm512_load_pd(a + j + 24));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}

/* The wide loop with one software prefetch a step, AHEAD bytes in front. Reading past
 * the array's end is harmless for a prefetch (it never faults). */
#define PREFETCH_LOOP(NAME, HINT, AHEAD)                                              \
    static double NAME(const double *a, size_t n) {                                  \
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;                  \
        for (size_t j = 0; j < n; j += 16) {                                          \
            _mm_prefetch((const char *)(a + j) + (AHEAD), HINT);                      \
            s0 = _mm256_add_pd(s0, _mm256_load_pd(a + j));                            \
            s1 = _mm256_add_pd(s1, _mm256_load_pd(a + j + 4));                        \
            s2 = _mm256_add_pd(s2, _mm256_load_pd(a + j + 8));                        \
            s3 = _mm256_add_pd(s3, _mm256_load_pd(a + j + 12));                       \
        }                                                                             \
        return lanes(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));    \
    }
PREFETCH_LOOP(pf_t0_1k, _MM_HINT_T0, 1024)
PREFETCH_LOOP(pf_t0_4k, _MM_HINT_T0, 4096)
PREFETCH_LOOP(pf_t1_8k, _MM_HINT_T1, 8192)
PREFETCH_LOOP(pf_nta_2k, _MM_HINT_NTA, 2048)

/* The wide loop with five NOPs after every load. */
static double nops5(const double *a, size_t n) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
#define NOP5 __asm__ volatile("nop\n\tnop\n\tnop\n\tnop\n\tnop")
    for (size_t j = 0; j < n; j += 16) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + j));
        NOP5;
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + j + 4));
        NOP5;
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + j + 8));
        NOP5;
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + j + 12));
        NOP5;
    }
    return lanes(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
}

/* The wide loop with one 32-byte store a step (to a fixed, cached line). */
static double store_step(const double *a, size_t n) {
    static __m256d sink __attribute__((aligned(32)));
    volatile __m256d *out = &sink;
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t j = 0; j < n; j += 16) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + j));
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + j + 4));
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + j + 8));
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + j + 12));
        *out = s0;
    }
    return lanes(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
}

struct variant {
    const char *name;
    read_fn f;
    int checked; /* its sum must equal the array's */
    int avx512;  /* needs AVX-512F */
};

static const struct variant VARIANTS[] = {
    {"wide (4 register accumulators)", wide, 1, 0},
    {"likwid load_avx (4 vmovaps, no adds)", likwid_load, 0, 0},
    {"8 accumulators in memory", slots8, 1, 0},
    {"4 accumulators in memory", slots4, 1, 0},
    {"16 accumulators in memory", slots16, 1, 0},
    {"1 register accumulator", one_acc, 1, 0},
    {"2 FMA chains", fma2, 1, 0},
    {"8 register accumulators", wide8, 1, 0},
    {"AVX-512, 4 accumulators", avx512, 1, 1},
    {"prefetch T0 1 KiB ahead", pf_t0_1k, 1, 0},
    {"prefetch T0 4 KiB ahead", pf_t0_4k, 1, 0},
    {"prefetch T1 8 KiB ahead", pf_t1_8k, 1, 0},
    {"prefetch NTA 2 KiB ahead", pf_nta_2k, 1, 0},
    {"5 NOPs after every load", nops5, 1, 0},
    {"a store every step", store_step, 1, 0},
};
#define NV (sizeof VARIANTS / sizeof VARIANTS[0])

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads the array through `f` back to back for `secs`; returns GB/s, or -1 when a
 * checked sum is wrong. */
static double rate(const struct variant *v, const double *a, size_t n, double want, double secs) {
    double start = now(), t;
    long reads = 0;
    do {
        double got = v->f(a, n);
        if (v->checked && got != want) {
            fprintf(stderr, "%s: sum %.17g, expected %.17g\n", v->name, got, want);
            return -1.0;
        }
        reads++;
        t = now() - start;
    } while (t < secs);
    return reads * (double)(n * sizeof(double)) / t / 1e9;
}

static double *array(size_t n, double *sum) {
    size_t bytes = n * sizeof(double), huge = 2u << 20;
    double *a = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
    if (!a) return NULL;
    madvise(a, bytes, MADV_HUGEPAGE);
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = (double)(i % 7);
        *sum += a[i];
    }
    return a;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 132000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    double secs = argc > 3 ? atof(argv[3]) : 0.5;
    size_t n = bytes / sizeof(double) / 64 * 64;
    if (n == 0 || rounds < 1 || secs <= 0) {
        fprintf(stderr, "usage: read_loops [ARRAY_BYTES >= 512] [ROUNDS >= 1] [SECONDS > 0]\n");
        return 2;
    }
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    if (sched_setaffinity(0, sizeof cpu0, &cpu0) != 0) perror("pinning to CPU 0 (running unpinned)");
    double want;
    double *a = array(n, &want);
    if (!a) {
        fprintf(stderr, "cannot allocate %zu bytes\n", n * sizeof(double));
        return 1;
    }
    int has512 = __builtin_cpu_supports("avx512f");
    static double gbs[NV][1000], ratio[NV][1000];
    if (rounds > 1000) rounds = 1000;
    for (int r = 0; r < rounds; r++) {
        for (size_t v = 0; v < NV; v++) {
            if (VARIANTS[v].avx512 && !has512) continue;
            gbs[v][r] = rate(&VARIANTS[v], a, n, want, secs);
            if (gbs[v][r] < 0) return 1;
        }
        for (size_t v = 0; v < NV; v++) ratio[v][r] = gbs[v][r] / gbs[0][r];
    }
    printf("array %zu bytes, %d rounds of %.2f s per variant, CPU 0\n", n * sizeof(double), rounds, secs);
    printf("%-40s %10s %14s %16s\n", "read loop", "GB/s", "median / wide", "min-max / wide");
    for (size_t v = 0; v < NV; v++) {
        if (VARIANTS[v].avx512 && !has512) {
            printf("%-40s unavailable here: the CPU has no AVX-512F\n", VARIANTS[v].name);
            continue;
        }
        double lo = ratio[v][0], hi = ratio[v][0];
        for (int r = 1; r < rounds; r++) {
            lo = ratio[v][r] < lo ? ratio[v][r] : lo;
            hi = ratio[v][r] > hi ? ratio[v][r] : hi;
        }
        double g = median(gbs[v], rounds), m = median(ratio[v], rounds);
        printf("%-40s %10.2f %14.3f %10.2f-%.2f\n", VARIANTS[v].name, g, m, lo, hi);
    }
    free(a);
    return 0;
}
