// fuzz_bench_csv.c — sim/profile.c's reader of `dtcoll-bench --csv` tables, which
// `dtsim calibrate --intra/--inter` fits alpha and beta to: refused with exit 2 naming the
// file, or a fit with finite, non-negative alpha and beta.
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("bench.csv", NULL, 0, data, size);
    dt_link_fit fit;
    dt_error err = {0};
    int rc = dt_profile_fit_links(path, "ring", &fit, &err);
    fuzz_verdict("dt_profile_fit_links", rc, &err, path);
    if (rc == 0 && !(isfinite(fit.alpha) && isfinite(fit.beta) && fit.alpha >= 0 && fit.beta >= 0))
        abort();
    return 0;
}
