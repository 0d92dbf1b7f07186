/* The benchmark text T (BENCHMARKS.md#reference-scenarios): the scenarios'
 * input bytes, shared by the bench and generation firmwares. */
#ifndef ATOME_BENCH_TEXT_H
#define ATOME_BENCH_TEXT_H
static const char T[] =
    "Once upon a time, there was a little girl named Lily. She loved to play "
    "outside in the sunshine. One day, she saw a big red ball in the park. She "
    "ran to get it, but a dog took it first.";
#endif
