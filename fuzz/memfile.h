/*
 * fuzz/memfile.h — the fuzz targets' one helper: the readers under test
 * take a path (paralab-viz FILE.json, data/digits.csv), so each input is
 * written to an in-memory file (memfd) and read back through
 * /proc/self/fd/N: no disk, no temporary files left behind by a crash.
 */
#ifndef PARALAB_FUZZ_MEMFILE_H
#define PARALAB_FUZZ_MEMFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of an in-memory file holding data[0..size) (valid until the
 * next call); aborts when the file cannot be made (not the code under test). */
static inline const char *fuzz_memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz input");
        abort();
    }
    return path;
}

/* Stops the run with a message (libFuzzer keeps the input as a crash). */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
