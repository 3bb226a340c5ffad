// fuzz_profile.c — sim/profile.c, the JSON profiles that `dtrain --profile` writes and
// `dtsim calibrate --step` / `dtsim --profile` read: refused with exit 2 naming the file, or
// a profile whose every figure is finite and not negative.
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("profile.json", NULL, 0, data, size);
    dt_profile p;
    dt_error err = {0};
    int rc = dt_profile_read(path, &p, &err);
    fuzz_verdict("dt_profile_read", rc, &err, path);
    if (rc == 0 && !(isfinite(p.step_s) && p.step_s >= 0)) abort();
    return 0;
}
