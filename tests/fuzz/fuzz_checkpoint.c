// fuzz_checkpoint.c — real/checkpoint.c, `dtrain --resume`: a file is loaded into a tiny
// network (conv 3->2 with bias, batch norm, relu, global average pool, linear 2->3: every
// kind of tensor a checkpoint holds, in a few hundred bytes) and its SGD optimizer only if
// it is wholly a checkpoint of that network; else exit 2 with the file's name.
// With DT_FUZZ_SEED_OUT=PATH set, the first call also writes that network's checkpoint to
// PATH (make_corpus.py's seeds: the writer's own output).
#include <stdlib.h>

#include "checkpoint.h"
#include "fuzz.h"
#include "net.h"

static dt_net *tiny(dt_error *err) {
    dt_model_config c = dt_model_config_default();
    c.batch = 1, c.in_c = 3, c.in_h = c.in_w = 4, c.num_classes = 3, c.seed = 1;
    dt_net *net = dt_net_new(dt_device_cpu_create(1), "fuzznet", &c);
    int x = dt_net_add_conv(net, "conv1", -1, 2, 3, 1, 1, 1);
    x = dt_net_add_bn(net, "bn1", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_avgpool(net, x, 1, 1);
    dt_net_add_linear(net, "fc", x, 3, 1);
    return dt_net_finalize(net, err) == 0 ? net : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static dt_net *net;  // built once: the fuzzer calls this millions of times
    static dt_optim *opt;
    dt_error err = {0};
    if (!net) {
        dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
        if (!(net = tiny(&err)) || !(opt = dt_optim_create(net, &oc, &err))) abort();
        const char *seed = getenv("DT_FUZZ_SEED_OUT");
        dt_train_state st = {.epoch = 1, .step = 7, .seed = 1, .global_batch = 4,
                             .loss_scale = 1024.0f, .loss_scale_good_steps = 3};
        if (seed && dt_checkpoint_save(seed, net, opt, &st, &err)) abort();
    }
    const char *path = fuzz_file("checkpoint.safetensors", NULL, 0, data, size);
    dt_train_state st;
    int rc = dt_checkpoint_load(path, net, opt, &st, &err);
    fuzz_verdict("dt_checkpoint_load", rc, &err, path);
    return 0;
}
