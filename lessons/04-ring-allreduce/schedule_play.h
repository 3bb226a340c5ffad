// schedule_play.h — lesson 04's dry run of the ring's schedules (schedule_play.c). Each
// check returns 0, or -1 with its first problem in why (WHY bytes).
#ifndef LESSON04_SCHEDULE_PLAY_H
#define LESSON04_SCHEDULE_PLAY_H
#include <stddef.h>

#include "coll/coll_sched.h"

#define WHY 480  // a schedule's problem, inside a hint

void lane_free(dt_lane *l);
int is_recv(int k);                        // a receive-add or receive-copy
int chunk_of(size_t n, int P, size_t i);   // the chunk (dt_chunk_lo's) holding element i
// L[0..P-1], every rank's schedule of [0, n): every send met by its receive, no round
// waiting forever, no receive landing on memory its round uses
int play(dt_lane *L, int P, size_t n, char *why);
// the ring's shape: 2(P-1) rounds of one send and one receive (fewer when n < P)
int shape(const dt_lane *L, int P, size_t n, char *why);
// L built for [off, off+n) on another communicator is the [0, n) one moved by off
int follows(const dt_lane *L, int P, size_t n, char *why);
#endif
