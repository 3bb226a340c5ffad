// fuzz_platform.c — sim/platform_file.c, the check of a user's SimGrid platform
// (`dtsim --platform FILE.xml`) before SimGrid sees it: refused with exit 2 naming the file,
// or at least one host and as many cores.
#include <stdlib.h>

#include "fuzz.h"
#include "platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("platform.xml", NULL, 0, data, size);
    int hosts = 0, cores = 0;
    dt_error err = {0};
    int rc = dt_platform_file_count(path, &hosts, &cores, &err);
    fuzz_verdict("dt_platform_file_count", rc, &err, path);
    if (rc == 0 && (hosts < 1 || cores < hosts)) abort();
    return 0;
}
