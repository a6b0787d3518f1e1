#define _GNU_SOURCE
/* scalescope's OpenMP placement probe: every thread of one parallel region
 * computes for the given milliseconds (default 400), long enough for the sweep's
 * placement monitor to see where the OpenMP runtime bound it. It prints the
 * thread count the runtime used and the CPU each thread ended on. */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 400.0;
    int used = 0;
    double sink = 0.0;
#pragma omp parallel reduction(+ : sink)
    {
        double start = omp_get_wtime();
        double x = 1.0;
        while ((omp_get_wtime() - start) * 1000.0 < ms) {
            for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
        }
        sink += x;
#pragma omp critical
        {
            printf("thread %d cpu %d\n", omp_get_thread_num(), sched_getcpu());
            used = omp_get_num_threads();
        }
    }
    printf("threads %d sink %g\n", used, sink > 0.0 ? 1.0 : 0.0);
    return 0;
}
