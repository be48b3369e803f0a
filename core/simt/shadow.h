/*
 * shadow.h — the shadow of the inline memory checks (build/sim): kernel
 * files compiled with -fsanitize=kernel-address
 * -fasan-shadow-offset=SIMT_SHADOW_OFFSET read one shadow byte per 8 bytes of
 * memory, (addr >> 3) + SIMT_SHADOW_OFFSET, and call __asan_report_* when it
 * is poisoned (ASan's encoding: 0 = all 8 bytes valid, k = the first k
 * valid, negative = none). The whole shadow is reserved at start-up (address
 * space only); only the tails after device allocations are ever written. The
 * ASan and race-check builds do not use it. Not public; depends on nothing.
 */
#ifndef SIMT_SHADOW_H
#define SIMT_SHADOW_H

#include <stddef.h>
#include <stdint.h>

/* Keep in step with SIMT_SHADOW_OFFSET in mk/build.mk. */
#define SIMT_SHADOW_OFFSET 0x100000000000ull
#define SIMT_SHADOW_SPAN (1ull << 44) /* covers the 47-bit user address space */

/* Marks [base, base+size) valid and [base+size, base+span) invalid (span a
 * multiple of 8: the page slack and guard page after an allocation). A freed
 * range is marked all valid (size = span): it is PROT_NONE, and the fault
 * handler reports any access to it. No-op outside the shadow build. */
void simt_shadow_mark(uintptr_t base, size_t size, size_t span);

#endif
