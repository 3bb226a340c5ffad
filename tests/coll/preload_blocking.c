// preload_blocking.c — legal MPI programs that block in a point-to-point or collective call
// while an MPI_Iallreduce is in flight, and complete only if that call advances the
// allreduce (nonblocking collectives progress like point-to-point, MPI-3.1 §5.12). Run under
// LD_PRELOAD=libdtcoll_mpi.so for every algorithm by tests/coll/preload.cmake; knows nothing
// of dtlab. In every scenario each rank starts MPI_Iallreduce on MPI_COMM_WORLD; then
//   recv      rank 0 blocks in MPI_Recv for a message rank 1 sends only after its own
//             MPI_Wait on the allreduce returned (the pattern of issue 52);
//   probe     the same with MPI_Probe before the MPI_Recv;
//   mprobe    the same with MPI_Mprobe and MPI_Mrecv;
//   sendrecv  rank 0 blocks in MPI_Sendrecv with rank 1, which calls it after its wait;
//   ssend     rank 0 blocks in MPI_Ssend to rank 1, which posts the receive after its wait;
//   send      the same with MPI_Send of a message larger than any eager limit (4 MiB);
//   replace   rank 0 blocks in MPI_Sendrecv_replace with rank 1, which calls it after its wait;
//   barrier   rank 0 blocks in MPI_Barrier on a duplicate of MPI_COMM_WORLD, which the other
//             ranks enter after their wait (with `multiple` only: MPI_THREAD_MULTIPLE);
//   bcast     the same with MPI_Bcast of MPI_INT (`multiple` only).
// Other ranks wait on the allreduce, then take part in what rank 0 waits for. Each scenario at
// 1 and 65,536 elements, float and double. Checked: every sum equals the MPI library's own
// (PMPI_Allreduce on the same inputs: small integers, exact in any order) and every message.
// A hang is the failure the test exists for (preload_run.sh's timeout).
// usage: preload_blocking [multiple]   (np >= 2)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static void fail(const char *scen, int n, const char *what) {
    fprintf(stderr, "FAIL: rank %d, %s, %d elements: %s\n", rank, scen, n, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

enum { MSG = 4 << 20 };  // bytes of `send`'s message: past every eager protocol

static void partner(const char *s, int peer, char *msg, int n, MPI_Comm dup) {
    // the side that calls only after its own wait: rank 1 (and every other for collectives)
    if (!strcmp(s, "barrier")) {
        MPI_Barrier(dup);
    } else if (!strcmp(s, "bcast")) {
        int v = -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, dup);
        if (v != 1234) fail(s, n, "MPI_Bcast's value");
    } else if (peer != 1) {
        return;
    } else if (!strcmp(s, "sendrecv") || !strcmp(s, "replace")) {
        int out = 7, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &in, 1, MPI_INT, 0, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (in != 11) fail(s, n, "rank 1 received the wrong value");
    } else if (!strcmp(s, "ssend") || !strcmp(s, "send")) {
        int len = !strcmp(s, "send") ? MSG : 2;
        MPI_Recv(msg, len, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (msg[0] != 'x' || msg[len - 1] != 'y') fail(s, n, "rank 1's message");
    } else {
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
    }
}

static void blocked(const char *s, char *msg, int n, MPI_Comm dup) {
    // rank 0: blocks before its wait
    int v = -1;
    MPI_Status st;
    if (!strcmp(s, "recv")) {
        MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &st);
    } else if (!strcmp(s, "probe")) {
        MPI_Probe(1, 4, MPI_COMM_WORLD, &st);
        if (st.MPI_SOURCE != 1 || st.MPI_TAG != 4) fail(s, n, "MPI_Probe's status");
        MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &st);
    } else if (!strcmp(s, "mprobe")) {
        MPI_Message m;
        MPI_Mprobe(1, 4, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(&v, 1, MPI_INT, &m, &st);
    } else if (!strcmp(s, "sendrecv")) {
        int out = 11;
        MPI_Sendrecv(&out, 1, MPI_INT, 1, 5, &v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &st);
        v = v == 7 ? 42 : v;
    } else if (!strcmp(s, "replace")) {
        v = 11;
        MPI_Sendrecv_replace(&v, 1, MPI_INT, 1, 5, 1, 5, MPI_COMM_WORLD, &st);
        v = v == 7 ? 42 : v;
    } else if (!strcmp(s, "ssend") || !strcmp(s, "send")) {
        int len = !strcmp(s, "send") ? MSG : 2;
        msg[0] = 'x', msg[len - 1] = 'y';
        if (len == 2) MPI_Ssend(msg, len, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
        else MPI_Send(msg, len, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
        v = 42;
    } else if (!strcmp(s, "barrier")) {
        MPI_Barrier(dup);
        v = 42;
    } else if (!strcmp(s, "bcast")) {
        int b = 1234;
        MPI_Bcast(&b, 1, MPI_INT, 0, dup);
        v = 42;
    }
    if (v != 42) fail(s, n, "rank 0 received the wrong value");
}

static void scenario(const char *s, int n, int f64, char *msg, MPI_Comm dup) {
    size_t es = f64 ? sizeof(double) : sizeof(float);
    void *in = malloc((size_t)n * es), *out = malloc((size_t)n * es), *ref = malloc((size_t)n * es);
    for (int i = 0; i < n; i++) {
        int x = (rank * 7 + i * 3) % 19 - 9;
        if (f64) ((double *)in)[i] = x;
        else ((float *)in)[i] = (float)x;
    }
    MPI_Datatype t = f64 ? MPI_DOUBLE : MPI_FLOAT;
    PMPI_Allreduce(in, ref, n, t, MPI_SUM, MPI_COMM_WORLD);  // the MPI library's own
    MPI_Request r;
    MPI_Iallreduce(in, out, n, t, MPI_SUM, MPI_COMM_WORLD, &r);
    if (rank == 0) {
        blocked(s, msg, n, dup);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        partner(s, rank, msg, n, dup);
    }
    if (memcmp(out, ref, (size_t)n * es)) fail(s, n, "the sum differs from PMPI_Allreduce's");
    free(in), free(out), free(ref);
}

int main(int argc, char **argv) {
    int multiple = argc > 1 && !strcmp(argv[1], "multiple"), got;
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        if (!rank) printf("SKIPPED: preload_blocking needs 2 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    if (multiple && got < MPI_THREAD_MULTIPLE) {
        if (!rank) printf("SKIPPED: this MPI library gives no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    const char *p2p[] = {"recv", "probe", "mprobe", "sendrecv", "replace", "ssend", "send",
                         "barrier", "bcast"};
    int ns = multiple ? 9 : 7;
    char *msg = malloc(MSG);
    int counts[] = {1, 65536}, done = 0;
    for (int k = 0; k < ns; k++)
        for (int c = 0; c < 2; c++)
            for (int f64 = 0; f64 < 2; f64++, done++) scenario(p2p[k], counts[c], f64, msg, dup);
    free(msg);
    MPI_Comm_free(&dup);
    if (!rank) printf("PASS preload_blocking: %d scenarios (%s) at %s\n", done,
                      multiple ? "point-to-point and collectives" : "point-to-point",
                      multiple ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SINGLE");
    MPI_Finalize();
    return 0;
}
