// preload_defects.c — the four ways libdtcoll_mpi.so (real/dtcoll_mpi.c) once failed a plain
// MPI program, one mode each; run under LD_PRELOAD by tests/coll/preload.cmake. The program
// knows nothing of dtlab: every result is checked against the MPI library's own allreduce
// (PMPI_Allreduce, which the preload does not intercept) on inputs that are small random
// integers, so both sums are exact and must be equal.
//   wait_oldest  K MPI_Iallreduce in flight (1 double, MPI_SUM, in place, MPI_COMM_WORLD),
//                then MPI_Wait on each, oldest first; 50 rounds. (Crashed in MPI_Wait: the
//                progress loop completed and freed the request being waited on.)
//   get_status   one MPI_Iallreduce polled with MPI_Request_get_status until it completes,
//                then freed with MPI_Wait; gives up after 20 s (it never completed: the call
//                was not intercepted and nothing advanced the allreduce).
//   threads      MPI_THREAD_MULTIPLE: T threads, each on its own communicator, each making
//                blocking and nonblocking allreduces; the check script requires one
//                "dtcoll: MPI_Allreduce via" line per communicator (passing everything to
//                the MPI library at this level, silently, would fail it).
//   attributes   a keyval whose copy callback counts its calls, set on MPI_COMM_WORLD and a
//                duplicate; allreduces on both (the library builds its communicators then)
//                may add no copy: the library's communicators are not the application's.
//                One MPI_Comm_dup of the program's own must count exactly one (the counter
//                works).
// Prints "PASS preload_defects MODE" on rank 0, or "FAIL: ..." and exits 1.
// usage: preload_defects MODE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static uint64_t mix(uint64_t z) {  // splitmix64
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t seed;  // drawn by rank 0, the same everywhere

static void fail(const char *what) {
    fprintf(stderr, "FAIL: rank %d: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

// n random integers in [-1000, 1000] (exact in float and double sums of a few ranks)
static void fill(double *x, int n, uint64_t salt) {
    for (int i = 0; i < n; i++)
        x[i] = (double)(int)(mix(seed ^ salt ^ ((uint64_t)rank << 48) ^ (uint64_t)i) % 2001) - 1000;
}

// x (after our allreduce) against the MPI library's own sum of `orig`
static void check(const double *x, const double *orig, int n, MPI_Comm comm, const char *what) {
    double *ref = malloc(sizeof(double) * (size_t)(n ? n : 1));
    PMPI_Allreduce(orig, ref, n, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < n; i++)
        if (x[i] != ref[i]) {
            char m[256];
            snprintf(m, sizeof m, "%s: element %d is %g, the MPI library's sum %g", what, i,
                     x[i], ref[i]);
            fail(m);
        }
    free(ref);
}

static void wait_oldest(void) {
    enum { K = 4, ROUNDS = 50 };
    double x[K], orig[K];
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Request req[K];
        for (int k = 0; k < K; k++) {
            fill(&orig[k], 1, (uint64_t)(round * K + k));
            x[k] = orig[k];
            MPI_Iallreduce(MPI_IN_PLACE, &x[k], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[k]);
        }
        for (int k = 0; k < K; k++) {
            MPI_Wait(&req[k], MPI_STATUS_IGNORE);
            if (req[k] != MPI_REQUEST_NULL) fail("MPI_Wait left the request active");
        }
        for (int k = 0; k < K; k++) check(&x[k], &orig[k], 1, MPI_COMM_WORLD, "wait_oldest");
    }
}

static void get_status(void) {
    for (int round = 0; round < 5; round++) {
        double x[3], orig[3];
        fill(orig, 3, (uint64_t)round);
        memcpy(x, orig, sizeof x);
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        double t0 = MPI_Wtime();
        int flag = 0;
        MPI_Status st;
        while (!flag) {
            MPI_Request_get_status(req, &flag, &st);
            if (!flag && MPI_Wtime() - t0 > 20) fail("MPI_Request_get_status: not complete after 20 s");
        }
        if (req == MPI_REQUEST_NULL) fail("MPI_Request_get_status freed the request");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(x, orig, 3, MPI_COMM_WORLD, "get_status");
    }
}

typedef struct {
    MPI_Comm comm;
    int id;
} thread_arg;

static void *thread_main(void *p) {
    thread_arg *a = p;
    enum { N = 1024, K = 3 };
    double *x = malloc(sizeof(double) * N * K), *orig = malloc(sizeof(double) * N * K);
    for (int round = 0; round < 60; round++) {
        uint64_t salt = (uint64_t)a->id << 32 | (uint64_t)round;
        int n = 1 + (int)(mix(seed ^ salt) % N);
        int k_calls = round % 2 ? K : 1;
        MPI_Request req[K];
        for (int k = 0; k < k_calls; k++) {
            fill(orig + k * N, n, salt * 7 + (uint64_t)k);
            memcpy(x + k * N, orig + k * N, sizeof(double) * (size_t)n);
            if (round % 2)
                MPI_Iallreduce(MPI_IN_PLACE, x + k * N, n, MPI_DOUBLE, MPI_SUM, a->comm, &req[k]);
            else
                MPI_Allreduce(MPI_IN_PLACE, x + k * N, n, MPI_DOUBLE, MPI_SUM, a->comm);
        }
        if (round % 2) {
            if (round % 4 == 1) MPI_Waitall(k_calls, req, MPI_STATUSES_IGNORE);
            else
                for (int k = 0; k < k_calls; k++) MPI_Wait(&req[k], MPI_STATUS_IGNORE);
        }
        for (int k = 0; k < k_calls; k++) check(x + k * N, orig + k * N, n, a->comm, "threads");
    }
    free(x), free(orig);
    return NULL;
}

static void threads(void) {
    enum { T = 3 };
    thread_arg a[T];
    pthread_t th[T];
    for (int t = 0; t < T; t++) {
        a[t] = (thread_arg){MPI_COMM_NULL, t};
        MPI_Comm_dup(MPI_COMM_WORLD, &a[t].comm);
    }
    for (int t = 0; t < T; t++) pthread_create(&th[t], NULL, thread_main, &a[t]);
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++) MPI_Comm_free(&a[t].comm);
}

static int copies;
static int count_copy(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old, (void)key, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void attributes(void) {
    int kv;
    MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &copies);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);  // the program's own: one copy
    if (copies != 1) fail("the program's own MPI_Comm_dup did not run the copy callback once");
    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    for (int c = 0; c < 2; c++) {
        double x[5], orig[5];
        fill(orig, 5, (uint64_t)c);
        memcpy(x, orig, sizeof x);
        MPI_Allreduce(MPI_IN_PLACE, x, 5, MPI_DOUBLE, MPI_SUM, comms[c]);
        check(x, orig, 5, comms[c], "attributes");
        float f = (float)orig[0];
        MPI_Request r;
        MPI_Iallreduce(MPI_IN_PLACE, &f, 1, MPI_FLOAT, MPI_SUM, comms[c], &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (copies != 1) {
        char m[160];
        snprintf(m, sizeof m, "the library's communicators ran the application's copy "
                 "callback %d time(s)", copies - 1);
        fail(m);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
    MPI_Comm_free_keyval(&kv);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int want = strcmp(mode, "threads") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, got;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (got < want) {
        if (rank == 0) printf("SKIPPED: this MPI library gives no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    if (rank == 0) {
        FILE *u = fopen("/dev/urandom", "rb");
        if (!u || fread(&seed, sizeof seed, 1, u) != 1) seed = 12345;
        if (u) fclose(u);
        printf("# seed %llu, %d ranks\n", (unsigned long long)seed, nprocs);
    }
    PMPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (strcmp(mode, "wait_oldest") == 0) wait_oldest();
    else if (strcmp(mode, "get_status") == 0) get_status();
    else if (strcmp(mode, "threads") == 0) threads();
    else if (strcmp(mode, "attributes") == 0) attributes();
    else {
        if (rank == 0) fprintf(stderr, "preload_defects: unknown mode '%s' (expected "
                               "wait_oldest, get_status, threads or attributes)\n", mode);
        MPI_Finalize();
        return 2;
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS preload_defects %s\n", mode);
    MPI_Finalize();
    return 0;
}
