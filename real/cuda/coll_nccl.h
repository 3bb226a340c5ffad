// coll_nccl.h — the `nccl` allreduce algorithm: NVIDIA's NCCL on the cuda device's stream,
// attached to a dt_coll (nn/coll/coll.h, dt_coll_set_ext). It is the reference our own ring
// is compared with on a real cluster (bench/cuda_scaling.sh). Built only with NCCL
// (DT_HAVE_NCCL); one GPU per rank (NCCL refuses two ranks on one GPU).
#ifndef DT_COLL_NCCL_H
#define DT_COLL_NCCL_H

#include <mpi.h>

#include "coll/coll.h"
#include "device.h"
#include "dt.h"

// Collective over comm (the communicator c was made from): rank 0 makes NCCL's unique id,
// MPI broadcasts it, every rank joins. Returns 0, or -1 with err set (DT_EXIT_USAGE) on
// every rank, naming NCCL's error.
int dt_nccl_attach(dt_coll *c, MPI_Comm comm, dt_device *cuda_dev, dt_error *err);

#endif
