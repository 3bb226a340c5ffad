// leak_canary.c — the sanitized step's own check (tests/sanitize/README.md): an MPI program
// that leaks one block of 1234 bytes from a function of ours and nothing else. Under
// .ci/sanitize's environment (Open MPI's plugins kept mapped, the fast unwinder, lsan.supp)
// LeakSanitizer must report exactly that block, named by this function, and none of Open
// MPI's (tests/sanitize/leak_canary.sh): a setting that hid our leaks, or one that let
// the library's through, fails it.
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

char *volatile canary_kept;

__attribute__((noinline)) void canary_leak(void) {
    char *p = malloc(1234);
    if (p) memset(p, 1, 1234);
    canary_kept = p;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    canary_leak();
    canary_kept = NULL;  // the only pointer to the block is gone: a leak
    MPI_Finalize();
    return 0;
}
