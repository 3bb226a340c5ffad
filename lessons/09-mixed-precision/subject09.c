// subject09.c — the process that runs lesson 09's half.c (lessons/kit/subject.h): a server
// that answers the grader's requests with what the student's functions return, looping
// over an array where a check calls a function many times (subject09.h: each request's
// contents). Linked with half.c, the kit's subject.c and, of dtlab's library, only what
// half.c calls (--gc-sections).
#include <string.h>

#include "../kit/subject.h"
#include "subject09.h"

// A request the grader would never send: the server stops (the grader reports the crash).
static void require(int ok) {
    if (!ok) exit(2);
}

// How many `size`-byte elements the rest of the request holds (a whole number of them).
static size_t elements(const subject_buf *req, size_t size) {
    require(!req->bad && req->at <= req->len && (req->len - req->at) % size == 0);
    return (req->len - req->at) / size;
}

static void serve_to_half(subject_buf *req, subject_buf *reply) {
    size_t n = elements(req, sizeof(float));
    for (size_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, req->p + req->at + i * sizeof x, sizeof x);
        uint16_t h = to_half(x);
        sb_put(reply, &h, sizeof h);
    }
}

static void serve_from_half(subject_buf *req, subject_buf *reply) {
    size_t n = elements(req, sizeof(uint16_t));
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, req->p + req->at + i * sizeof h, sizeof h);
        float x = from_half(h);
        sb_put(reply, &x, sizeof x);
    }
}

// the state in, then one overflow flag a byte; out: each step's return and the state after
static void serve_scaler(subject_buf *req, subject_buf *reply) {
    scaler s;
    sb_get(req, &s, sizeof s);
    size_t n = elements(req, 1);
    for (size_t i = 0; i < n; i++) {
        int32_t ret = scaler_step(&s, req->p[req->at + i]);
        sb_put(reply, &ret, sizeof ret);
        sb_put(reply, &s, sizeof s);
    }
}

// Reads n, then an array of `count` elements of `size` bytes (malloc'd; the caller frees).
static void *get_array(subject_buf *req, size_t count, size_t size) {
    require(!req->bad && count <= (req->len - req->at) / size);
    void *p = malloc(count * size + 1);
    require(p != NULL);
    sb_get(req, p, count * size);
    return p;
}

static void serve_wire_pack(subject_buf *req, subject_buf *reply) {
    size_t n = (size_t)sb_get_u64(req);
    float *g = get_array(req, n, sizeof(float));
    uint16_t *wire = get_array(req, n + LESSON09_GUARD, sizeof(uint16_t));
    require(req->at == req->len);
    wire_pack(g, wire, n);
    sb_put(reply, wire, (n + LESSON09_GUARD) * sizeof(uint16_t));
    free(g), free(wire);
}

static void serve_wire_accumulate(subject_buf *req, subject_buf *reply) {
    size_t n = (size_t)sb_get_u64(req);
    float *acc = get_array(req, n + LESSON09_GUARD, sizeof(float));
    uint16_t *wire = get_array(req, n, sizeof(uint16_t));
    require(req->at == req->len);
    wire_accumulate(acc, wire, n);
    sb_put(reply, acc, (n + LESSON09_GUARD) * sizeof(float));
    free(acc), free(wire);
}

int main(void) {
    const subject_handler h[] = {serve_to_half, serve_from_half, serve_scaler, serve_wire_pack,
                                 serve_wire_accumulate};
    return subject_serve(h, 5);
}
