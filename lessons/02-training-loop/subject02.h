// subject02.h — lesson 02's channel between the grader (remote02.c, the judge) and the
// student's sgd.c and train_loop.c (subject02.c, the server that runs them): the requests'
// tags, sgd_step's guard, and the layout of the two things the loop's requests carry.
//   a net     the model's name (32 bytes), its dt_model_config (by value), then n_total
//             (u64) and the parameters (n_total floats: the trainable ones and the running
//             statistics), dropout_seed and bn_batches_tracked (u64 each): the subject
//             builds the same model on a cpu device of its own and gives it this state, so
//             that it computes what the grader's net would;
//   a dataset its name (96 bytes), n (u64), c, h, w, num_classes, train (u64 each), mean and
//             std (3 floats each), the labels (n int32) and the pixels (n*c*h*w uint8): an
//             in-memory uint8 dataset (real/data.h's idx files), delivered by nn/'s
//             dt_dataset_get as the grader's is.
#ifndef LESSON02_SUBJECT_H
#define LESSON02_SUBJECT_H

enum { SUBJECT02_SGD_STEP = 0, SUBJECT02_EVALUATE = 1, SUBJECT02_TRAIN_LOOP = 2, SUBJECT02_N };
// The subject's callback during evaluate_top1 and train_loop (0-based, subject_callback): a
// forward pass begins (the net's on_layer hook at its first layer), an empty request and
// reply.
enum { SUBJECT02_CB_FORWARD = 0 };

// Every w, g and v the grader hands to sgd_step holds this many elements past n (its
// sentinels): they travel to the subject and back with the n, so that a write past n, or to
// g, shows in the grader as it would have in place.
#define LESSON02_GUARD 8

#endif
