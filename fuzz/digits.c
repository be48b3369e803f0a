/*
 * fuzz/digits.c — libFuzzer target: the digits loader (core/model/data.c,
 * pl_digits_load), what paralab-train and Lab 07 read data/digits.csv with.
 *
 * Each input is a digits file: lines of 64 pixel values 0..16 and a label
 * 0..9, comma-separated. What it checks: the loader never crashes, leaks
 * or reads past a line; a file it refuses comes with a message naming the
 * file and nothing kept; one it accepts has every pixel in [0, 1], every
 * label in 0..9, and the samples split 4 to 1 (sample i in the test set
 * when i % 5 == 4), as paralab/data.h says.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memfile.h"
#include "paralab/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    pl_digits d;
    char err[512] = "";
    int rc = pl_digits_load(path, &d, err, sizeof err);
    if (rc != PL_DATA_OK) {
        FUZZ_CHECK(rc == PL_DATA_BAD, "status %d for a file that is there: '%s'", rc, err);
        FUZZ_CHECK(!strncmp(err, path, strlen(path)), "a refusal that does not name the file: '%s'",
                   err);
        FUZZ_CHECK(!d.train.x && !d.train.y && !d.test.x && !d.test.y && !d.train.n && !d.test.n,
                   "a refused file left samples");
        return 0;
    }
    int n = d.train.n + d.test.n;
    FUZZ_CHECK(d.train.n >= 1 && d.test.n >= 1 && d.test.n == n / 5,
               "%d samples split into %d and %d", n, d.train.n, d.test.n);
    const pl_dataset *sets[2] = {&d.train, &d.test};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sets[s]->n; i++) {
            FUZZ_CHECK(sets[s]->y[i] >= 0 && sets[s]->y[i] < PL_DIGITS_CLASSES, "label %d",
                       sets[s]->y[i]);
            for (int j = 0; j < PL_DIGITS_FEATURES; j++) {
                float x = sets[s]->x[(size_t)i * PL_DIGITS_FEATURES + j];
                FUZZ_CHECK(x >= 0 && x <= 1, "pixel %g", (double)x);
            }
        }
    pl_digits_free(&d);
    return 0;
}
