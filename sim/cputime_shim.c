// cputime_shim.c — preloaded into SimGrid by dtsim (LD_PRELOAD): answers the thread and
// process CPU-time clocks with zero. SMPI 3.32 times the host code between every two MPI
// calls of every rank (smpi_bench_begin/end: xbt_os_threadtimer_start/stop, each a
// clock_gettime(CLOCK_THREAD_CPUTIME_ID) — a real system call, the vDSO serves only the
// wall clocks) to inject it as simulated computation. dtsim turns that injection off
// (smpi/simulate-computation:no: the modeled device advances simulated time itself), so
// the readings are thrown away, yet they were ~20 % of a 256-GPU dbtree simulation's wall
// time (perf: task_sched_runtime under clock_gettime). Every other clock goes to libc.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

typedef int (*clock_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (id == CLOCK_THREAD_CPUTIME_ID || id == CLOCK_PROCESS_CPUTIME_ID) {
        ts->tv_sec = 0;
        ts->tv_nsec = 0;
        return 0;
    }
    static clock_fn real;  // libc's; every thread finds the same one, so the race is benign
    if (!real) real = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
    return real(id, ts);
}
