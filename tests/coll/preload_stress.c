// preload_stress.c — libdtcoll_mpi.so (real/dtcoll_mpi.c) under load: an ordinary MPI program
// (it knows nothing of dtlab) makes CALLS allreduces (default 10^5) of mixed sizes on
// changing communicators, run under LD_PRELOAD by tests/coll/plain.cmake:
//  - sizes drawn from 0 to 2^16 floats (most small, as a training step's buckets and a
//    framework's scalars are), MPI_FLOAT and MPI_DOUBLE, in place and not;
//  - every 64 rounds (a blocking call or a batch of nonblocking ones: about 100 calls)
//    the communicator changes: MPI_Comm_dup of WORLD, MPI_Comm_split by a
//    drawn colour, the previous one freed (the library's per-communicator state must go
//    with it);
//  - one call in four is nonblocking, with up to 4 MPI_Iallreduce in flight together on the
//    same communicator, completed by MPI_Waitall;
//  - every result is checked exactly: inputs are small integers (x_r[i] = (r+1)*(i%13+1)),
//    so every partial sum is exact in any order and the result is the closed form
//    (sum of r+1 over the members) * (i%13+1);
//  - memory: the heap in use (mallinfo2) after the first tenth of the calls (warm: buffers
//    and caches grown) and at the end; growth above GROWTH_MIB (default 0.25) fails — a
//    leak of 4 bytes per call or of 300 bytes per communicator would show. VmRSS is
//    printed beside it.
// All ranks draw the same sequence (one seed, from rank 0). Prints "PASS preload_stress".
// usage: preload_stress [CALLS] [GROWTH_MIB]
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s) {  // splitmix64
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

// bytes the program holds from malloc now (glibc's mallinfo2: arena chunks in use plus
// mmap'ed blocks): what a leak raises, unlike VmRSS, which also keeps freed pages the
// allocator has not returned and so moves by megabytes with the order of large buffers
static double heap_mib(void) {
    struct mallinfo2 m = mallinfo2();
    return (double)(m.uordblks + m.hblkhd) / (1 << 20);
}

static int draw_count(uint64_t *s) {  // 0 .. 65536 floats, log-uniform-ish: mostly small
    int bits = (int)(next(s) % 17);
    return (int)(next(s) % ((uint64_t)1 << bits)) + (int)(next(s) % 2);
}

typedef struct {
    void *send, *recv;
    int count, f64, inplace;
} call;

static void fill(call *c, int rank) {
    for (int i = 0; i < c->count; i++) {
        double v = (double)(rank + 1) * (i % 13 + 1);
        void *dst = c->inplace ? c->recv : c->send;
        if (c->f64) ((double *)dst)[i] = v;
        else ((float *)dst)[i] = (float)v;
    }
}

// 0, or the first wrong index + 1
static long check(const call *c, double members) {
    for (int i = 0; i < c->count; i++) {
        double want = members * (i % 13 + 1);
        double got = c->f64 ? ((double *)c->recv)[i] : ((float *)c->recv)[i];
        if (got != want) return i + 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    double growth_mib = argc > 2 ? atof(argv[2]) : 0.25;
    uint64_t seed = 0;
    if (rank == 0) {
        FILE *u = fopen("/dev/urandom", "rb");
        if (!u || fread(&seed, sizeof seed, 1, u) != 1) seed = 12345;
        if (u) fclose(u);
        printf("# seed %llu, %ld calls on %d ranks\n", (unsigned long long)seed, calls, P);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    uint64_t s = seed;
    enum { MAXN = 65537, INFLIGHT = 4 };
    call c[INFLIGHT];
    for (int k = 0; k < INFLIGHT; k++) {
        c[k].send = malloc(MAXN * sizeof(double));
        c[k].recv = malloc(MAXN * sizeof(double));
    }
    MPI_Comm comm = MPI_COMM_NULL;
    double members = 0;  // sum of (world rank + 1) over comm's members
    long done = 0, bad = 0, rss_warm = -1, comms = 0, nonblocking = 0;
    double heap_warm = 0;
    long rounds = 0;  // a blocking call or a batch of nonblocking ones
    while (done < calls && !bad) {
        if (rounds++ % 64 == 0) {  // a new communicator, the old one freed
            if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
            int colour = (int)(next(&s) % 3), key = (int)(next(&s) % 2);
            if (colour == 0) {
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            } else {  // colour 1: halves by rank parity; colour 2: low and high halves
                int mine = colour == 1 ? rank % 2 : rank < P / 2;
                MPI_Comm_split(MPI_COMM_WORLD, mine, key ? P - rank : rank, &comm);
            }
            double m = rank + 1;
            MPI_Allreduce(&m, &members, 1, MPI_DOUBLE, MPI_SUM, comm);
            comms++;
        }
        if (done >= calls / 10 && rss_warm < 0) rss_warm = rss_kib(), heap_warm = heap_mib();
        int n = next(&s) % 4 == 0 ? 1 + (int)(next(&s) % INFLIGHT) : 0;  // nonblocking batch
        int k_calls = n ? n : 1;
        MPI_Request req[INFLIGHT];
        for (int k = 0; k < k_calls; k++) {
            c[k].count = draw_count(&s);
            c[k].f64 = (int)(next(&s) % 4 == 0);
            c[k].inplace = (int)(next(&s) % 2);
            fill(&c[k], rank);
            MPI_Datatype t = c[k].f64 ? MPI_DOUBLE : MPI_FLOAT;
            const void *sb = c[k].inplace ? MPI_IN_PLACE : c[k].send;
            if (n) MPI_Iallreduce(sb, c[k].recv, c[k].count, t, MPI_SUM, comm, &req[k]);
            else MPI_Allreduce(sb, c[k].recv, c[k].count, t, MPI_SUM, comm);
        }
        if (n) MPI_Waitall(n, req, MPI_STATUSES_IGNORE), nonblocking += n;
        for (int k = 0; k < k_calls && !bad; k++) {
            long at = check(&c[k], members);
            if (at) {
                fprintf(stderr, "FAIL: rank %d, call %ld: %s count %d, element %ld wrong\n", rank,
                        done + k, c[k].f64 ? "double" : "float", c[k].count, at - 1);
                bad = 1;
            }
        }
        done += k_calls;
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    double grew = heap_mib() - heap_warm, rss_grew = (double)(rss_kib() - rss_warm) / 1024.0;
    long any_bad = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any_bad, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    double mine[2] = {grew, rss_grew}, worst[2];
    MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# %ld calls (%ld nonblocking) over %ld communicators; from call %ld to the end "
               "the heap in use grew %.3f MiB at most (limit %.1f), VmRSS %.2f MiB\n",
               done, nonblocking, comms, calls / 10, worst[0], growth_mib, worst[1]);
        if (any_bad) printf("FAIL: wrong results\n");
        else if (worst[0] > growth_mib) printf("FAIL: the heap grew %.3f MiB\n", worst[0]);
        else printf("PASS preload_stress\n");
    }
    for (int k = 0; k < INFLIGHT; k++) free(c[k].send), free(c[k].recv);
    MPI_Finalize();
    return 0;
}
