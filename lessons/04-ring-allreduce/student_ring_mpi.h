// student_ring_mpi.h — lesson 04, part 1's contract (provided: do not edit). You write
// student_ring_mpi in ring_mpi.c with MPI's point-to-point calls alone, before part 2 turns
// the same algorithm into a schedule that dtlab's runner plays.
#ifndef LESSON04_STUDENT_RING_MPI_H
#define LESSON04_STUDENT_RING_MPI_H

#include <mpi.h>
#include <stddef.h>

// The ring allreduce (Patarasuk & Yuan 2009) of x[0..n) in place over comm:
//   input: every rank of comm calls it with its own x and the same n (any size p >= 1 of
//     comm, any n >= 0; n < p leaves some chunks empty).
//   result: on return every rank's x[i] holds the sum over the p ranks of their x[i], exact
//     where the sums are (integer-valued floats: equal to MPI_Allreduce's).
//   cost: a reduce-scatter then an allgather, p-1 steps each: every rank sends 2(p-1)
//     messages (fewer only when chunks are empty), none of more than ceil(n/p) floats:
//     2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ (docs/formulas.md, "Collective costs").
//   safe: it completes for every n, whatever the MPI library's eager limit (MPI 4.0 §3.5:
//     a program must not rely on MPI_Send buffering the message).
// Only MPI's point-to-point calls (MPI_Send, MPI_Recv, MPI_Sendrecv, MPI_Isend, MPI_Irecv,
// MPI_Wait, MPI_Waitall, MPI_Comm_rank, MPI_Comm_size, ...): no collective, nothing of
// dtlab's (calls.txt; the grade refuses MPI_Allreduce and the rest). Scratch memory is
// yours to allocate and free.
void student_ring_mpi(float *x, size_t n, MPI_Comm comm);

#endif
