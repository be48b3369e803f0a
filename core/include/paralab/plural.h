/*
 * paralab/plural.h — one word for one thing: "1 block", "2 blocks",
 * "0 floats". Every message that prints a count that varies takes its noun's
 * ending from here: printf("%d block%s", n, pl_s(n)).
 */
#ifndef PARALAB_PLURAL_H
#define PARALAB_PLURAL_H

/* "" when n is 1, else "s" (so 0 takes the plural, as English does). */
static inline const char *pl_s(long long n) { return n == 1 ? "" : "s"; }

#endif
