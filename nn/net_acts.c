// net_acts.c — see net_acts.h: sets of a net's activation buffers, switched by pointer.
#include "net_acts.h"

#include "layers.h"

// One set: per layer its output (fp32 or half storage) and its saved state; the probabilities
typedef struct {
    void **out, **aux;
    float *probs;
} act_set;

struct dt_net_acts {
    int n, keep_attention;
    act_set *sets;
    size_t bytes;  // of sets 1..n-1
};

// (under mixed precision every layer but the last stores half: nn/net_plan.c)
static int stores_half(const dt_layer *l) { return l->out_h != NULL; }

// Does set k > 0 own layer l's saved state, or share set 0's?
static int own_aux(const dt_net_acts *a, const dt_layer *l) {
    return l->aux && (a->keep_attention || l->type != DT_LAYER_ATTENTION);
}

static void *grab(dt_net_acts *a, dt_device *d, size_t bytes) {
    a->bytes += bytes;
    return d->alloc(d, bytes ? bytes : 1);
}

dt_net_acts *dt_net_acts_create(dt_net *net, int n, int keep_attention) {
    DT_ASSERT(net && net->finalized && n >= 1);
    dt_net_acts *a = callocCheck(1, sizeof *a);
    a->n = n, a->keep_attention = keep_attention;
    a->sets = callocCheck((size_t)n, sizeof *a->sets);
    int L = net->n_layers;
    for (int k = 0; k < n; k++) {
        act_set *s = &a->sets[k];
        s->out = callocCheck((size_t)L, sizeof(void *));
        s->aux = callocCheck((size_t)L, sizeof(void *));
        for (int i = 0; i < L; i++) {
            dt_layer *l = net->layers[i];
            int half = stores_half(l);
            void *own = half ? (void *)l->out_h : (void *)l->out;
            size_t elem = half ? sizeof(uint16_t) : sizeof(float);
            // (halfs rounded up to an even count, as nn/net_plan.c allocates them)
            size_t count = (size_t)l->B * dt_layer_out_size(l);
            if (half) count += count & 1;
            if (k == 0 || l->inplace) s->out[i] = own;  // (in place: set to the root's below)
            else s->out[i] = grab(a, net->dev, count * elem);
            s->aux[i] = k == 0 || !own_aux(a, l) ? l->aux : grab(a, net->dev, l->aux_bytes);
        }
        const dt_layer *last = net->layers[L - 1];
        s->probs = k == 0 ? net->probs
                          : grab(a, net->dev, (size_t)net->B * dt_layer_out_size(last) *
                                                  sizeof(float));
    }
    return a;
}

void dt_net_acts_use(dt_net_acts *a, dt_net *net, int k) {
    DT_ASSERT(a && k >= 0 && k < a->n);
    const act_set *s = &a->sets[k];
    for (int i = 0; i < net->n_layers; i++) {  // an in-place layer's input came first
        dt_layer *l = net->layers[i];
        void *out = l->inplace ? (stores_half(l) ? (void *)net->layers[l->in]->out_h
                                                      : (void *)net->layers[l->in]->out)
                               : s->out[i];
        if (stores_half(l)) l->out_h = out;
        else l->out = out;
        l->aux = s->aux[i];
    }
    net->probs = s->probs;
}

void dt_net_acts_rerun_attention(dt_net *net) {
    int half = net->amp != DT_AMP_FP32;
    if (half) dt_net_half_begin(net);
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->type != DT_LAYER_ATTENTION) continue;
        if (half) dt_net_half_forward(net, l, 1);
        else l->forward(l, net, 1);
    }
    if (half) dt_net_half_end(net);
}

size_t dt_net_acts_bytes(const dt_net_acts *a) { return a ? a->bytes : 0; }

void dt_net_acts_free(dt_net_acts *a, dt_net *net) {
    if (!a) return;
    dt_net_acts_use(a, net, 0);
    dt_device *d = net->dev;
    for (int k = 1; k < a->n; k++) {
        act_set *s = &a->sets[k];
        for (int i = 0; i < net->n_layers; i++) {
            const dt_layer *l = net->layers[i];
            if (!l->inplace) d->free(d, s->out[i]);
            if (own_aux(a, l)) d->free(d, s->aux[i]);
        }
        d->free(d, s->probs);
    }
    for (int k = 0; k < a->n; k++) free(a->sets[k].out), free(a->sets[k].aux);
    free(a->sets);
    free(a);
}
