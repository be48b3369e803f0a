/*
 * paralab/data.h — the UCI handwritten digits (data/digits.csv, from `make
 * data`): 1,797 images of 8x8 pixels, one per line as 64 pixel values
 * 0..16 and then the label 0..9, comma-separated.
 *
 * Loading scales the pixels to [0, 1] (value / 16) and splits the samples
 * in a fixed way: sample i (0-based line order) goes to the test set when
 * i % 5 == 4, else to the training set — 1,438 training and 359 test
 * samples, every class in both.
 *
 * Batches: each epoch visits the training samples in the order of a
 * Fisher-Yates shuffle drawn from (seed, epoch) alone; batch k holds
 * positions k*B .. k*B+B-1 of that order, and the last batch of an epoch
 * holds what is left (1,438 = 22 * 64 + 30), so every sample is seen once
 * per epoch.
 */
#ifndef PARALAB_DATA_H
#define PARALAB_DATA_H

#include <stddef.h>

#define PL_DIGITS_FEATURES 64
#define PL_DIGITS_CLASSES 10

typedef struct pl_dataset {
    int n;    /* samples */
    float *x; /* host: n x PL_DIGITS_FEATURES, in [0, 1] */
    int *y;   /* host: n labels, 0..9 */
} pl_dataset;

typedef struct pl_digits {
    pl_dataset train, test;
} pl_digits;

enum { PL_DATA_OK = 0, PL_DATA_MISSING = 1, PL_DATA_BAD = 2 };

/* Reads and splits path; a relative path not found from the working folder
 * is looked for from the repository the program was built in (its binary
 * in <root>/build/<variant>/bin: <root>/path), so that a lab started from
 * another folder finds data/digits.csv. PL_DATA_MISSING: the file cannot
 * be opened (the message says where it looked, and to run `make data`); PL_DATA_BAD: a malformed
 * file, with a message naming the line and column (a wrong column count, a value that is not a
 * whole number (spaces or tabs around it are allowed, a sign too, no other white space), a pixel
 * out of 0..16, a label out of 0..9, a NUL byte, no samples at all, or out of memory). Nothing is
 * kept on failure. */
int pl_digits_load(const char *path, pl_digits *d, char *err, size_t err_size);
void pl_digits_free(pl_digits *d);

/* order[0..n-1] = the shuffle of 0..n-1 for (seed, epoch). */
void pl_shuffle(int *order, int n, unsigned long long seed, int epoch);
/* Batches of at most B in an epoch of n samples: ceil(n / B). */
int pl_batch_count(int n, int B);
/* The size of batch k (B, or what is left for the last). */
int pl_batch_size(int n, int B, int k);
/* Copies batch k of `order` from ds into x (size * features) and y. */
void pl_gather_batch(const pl_dataset *ds, const int *order, int B, int k, float *x, int *y);

#endif
