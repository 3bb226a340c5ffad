// grader.c — lesson 01's grader: conv2d (im2col + gemm), batch norm and softmax
// cross-entropy, each against independent references (float64 loops, float64 central
// differences, nn/'s own layers) on fresh random shapes; one line per check, the seed
// printed (DT_LESSON_SEED=N replays a run). The checks live in grader_conv.c and
// grader_bn_xent.c; `grader --time` times your im2col and col2im against the gemm on
// ResNet-50's shapes instead (grader_time.c, the README's experiment).
// The grader is split (lessons/kit/subject.h): your layers.c runs in another process
// (subject01.c), which remote01.c's functions of the same names ask; --time runs there.
#include "grader.h"

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--time") == 0) return time_conv_exec(argc - 1, argv + 1);
    if (argc > 1) {
        fprintf(stderr, "usage: %s [--time [BATCH]]\n", argv[0]);
        return 2;
    }
    dt_device *d = dt_device_cpu_create(1);  // one thread: the grade is about numbers
    grade_t g = grade_begin("01-layers", 0);
    check_acc adds = acc_new("backward_adds_into_its_outputs");
    grade_conv(&g, d, &adds);
    grade_bn(&g, d, &adds);
    grade_xent(&g, &adds);
    acc_report(&g, &adds, "conv2d, bn and softmax backward on top of random gradients");
    d->destroy(d);
    return grade_end(&g);
}
