// print_params.c — prints a model's parameter table, one tensor a line: "name d0,d1,...",
// in table order, for tests/ref/compare_torchvision_names.py to compare with torchvision's
// state_dict. Not a test by itself; usage: dt_print_params MODEL [H W [CLASSES]].
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "net.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [H W [CLASSES]]\nmodels: %s\n", argv[0],
                dt_model_names());
        return DT_EXIT_USAGE;
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 1;
    if (argc >= 4) {
        cfg.in_h = atoi(argv[2]);
        cfg.in_w = atoi(argv[3]);
    }
    if (argc >= 5) cfg.num_classes = atoi(argv[4]);
    dt_device *dev = dt_device_cpu_create(1);
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create(argv[1], dev, &cfg, &err);
    if (!net) {
        fprintf(stderr, "%s: %s\n", argv[0], err.msg);
        dev->destroy(dev);
        return err.code ? err.code : DT_EXIT_RUNTIME;
    }
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        printf("%s ", p->name);
        for (int d = 0; d < p->ndim; d++) printf("%s%d", d ? "," : "", p->shape[d]);
        printf("\n");
    }
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}
