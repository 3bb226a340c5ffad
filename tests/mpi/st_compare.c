// st_compare.c — test tool: compare the F32 tensors of two safetensors files.
//   st_compare A B TOL   prints the worst relative difference max|a-b|/max(max|b|, 1e-30) over
//                        tensors and exits 0 if it is <= TOL (TOL 0: bitwise equal), else 1;
//                        2 if a file is unreadable or the tensor sets differ.
//   st_compare A B TOL --global [MIN]
//                        the model's relative L2 difference sqrt(Σ(a-b)² / Σb²) over all F32
//                        tensors instead: exit 0 if MIN < it <= TOL (MIN: default -1). For runs
//                        whose tiny tensors may differ wholly (fp16 gradients flush to zero).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

int main(int argc, char **argv) {
    int global = argc >= 5 && strcmp(argv[4], "--global") == 0;
    if (argc != 4 && !(global && argc <= 6)) {
        fprintf(stderr, "usage: st_compare A.safetensors B.safetensors TOL [--global [MIN]]\n");
        return 2;
    }
    double min_global = argc == 6 ? atof(argv[5]) : -1.0, sum_d2 = 0, sum_b2 = 0;
    dt_error err = {0};
    dt_st_file *a = dt_st_open(argv[1], &err), *b = a ? dt_st_open(argv[2], &err) : NULL;
    if (!a || !b) {
        fprintf(stderr, "st_compare: %s\n", err.msg);
        return 2;
    }
    double tol = atof(argv[3]), worst = 0;
    const char *worst_name = "";
    int compared = 0;
    for (int i = 0; i < dt_st_count(a); i++) {
        const dt_st_tensor *ta = dt_st_get(a, i), *tb = dt_st_find(b, ta->name);
        if (ta->dtype != DT_ST_F32) continue;
        if (!tb || tb->dtype != DT_ST_F32 || tb->nbytes != ta->nbytes) {
            fprintf(stderr, "st_compare: tensor '%s' missing or different in %s\n", ta->name,
                    argv[2]);
            return 2;
        }
        size_t n = ta->nbytes / 4;
        double dmax = 0, bmax = 0;
        for (size_t k = 0; k < n; k++) {
            float x, y;
            memcpy(&x, (const char *)ta->data + 4 * k, 4);
            memcpy(&y, (const char *)tb->data + 4 * k, 4);
            double d = fabs((double)x - y);
            if (!(d <= dmax)) dmax = d;  // NaN wins
            if (fabs(y) > bmax) bmax = fabs(y);
            sum_d2 += d * d, sum_b2 += (double)y * y;
        }
        double rel = tol == 0 ? dmax : dmax / fmax(bmax, 1e-30);
        if (!(rel <= worst)) worst = rel, worst_name = ta->name;
        compared++;
    }
    printf("st_compare: %d tensors, worst relative difference %.3g (%s), tolerance %.3g\n",
           compared, worst, worst_name, global ? INFINITY : tol);
    dt_st_close(a);
    dt_st_close(b);
    if (global) {
        double rel = sqrt(sum_d2 / fmax(sum_b2, 1e-300));
        printf("st_compare: relative L2 difference of the model %.3g, expected in (%.3g, %.3g]\n",
               rel, min_global, tol);
        return compared > 0 && rel > min_global && rel <= tol ? 0 : 1;
    }
    return compared > 0 && worst <= tol ? 0 : 1;
}
