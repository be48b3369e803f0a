# fuzz/fuzz.mk — the libFuzzer targets (docs/fuzzing.md). Called by the
# top-level Makefile (make fuzz, make test's t-fuzz step); not meant to be
# run by hand.
#
#   FUZZ_BUILD=build/fuzz  where the targets are built
#   FUZZ_TARGETS           which of trace roundtrip options digits (default: all)
#
# Each target is fuzz/<target>.c and the library sources it reads with,
# compiled by clang with libFuzzer's coverage and AddressSanitizer +
# UndefinedBehaviorSanitizer (any report stops the run), with the include
# folders of their layers (mk/layers.mk) as mk/build.mk gives them.

FUZZ_BUILD ?= build/fuzz
FUZZ_CC ?= clang
FUZZ_TARGETS ?= trace roundtrip options digits

include mk/layers.mk

# -Wno-string-concatenation: clang's warning on a deliberate string split
# across lines in an array of strings (viz/panes.c); gcc has no such warning
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror \
               -Wno-string-concatenation -g -O1 -fno-omit-frame-pointer -MMD -MP \
               -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_LIBFLAGS := $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link
FUZZ_LDFLAGS := -fsanitize=fuzzer,address,undefined

# the library sources each target reads with (what it links)
FUZZ_SRC_trace := viz/replay.c viz/model.c viz/panes.c viz/grid.c viz/memory.c viz/mesh.c \
                  $(wildcard viz/picture*.c) core/trace.c $(wildcard core/picture*.c) \
                  core/clock.c core/parallel/mesh.c fuzz/stubs.c
FUZZ_SRC_roundtrip := $(FUZZ_SRC_trace)
FUZZ_SRC_options := core/options.c core/cli.c core/comm/comm_mpi.c fuzz/stubs.c
FUZZ_SRC_digits := core/model/data.c
FUZZ_LIBS_trace := -ljansson -lm
FUZZ_LIBS_roundtrip := $(FUZZ_LIBS_trace)
FUZZ_LIBS_options :=
FUZZ_LIBS_digits :=

FOBJ := $(FUZZ_BUILD)/obj
fobjs = $(patsubst %,$(FOBJ)/%.o,$(1))
FINC = $(call layer_inc,$(call layer_of,$<))

all: $(addprefix $(FUZZ_BUILD)/fuzz-,$(FUZZ_TARGETS))
	@:

# the target's own file: coverage and the fuzzer's main at link
$(FOBJ)/fuzz/%.c.o: fuzz/%.c
	@mkdir -p $(@D)
	@printf '  %-4s %s\n' CC $<
	@$(FUZZ_CC) $(FUZZ_LIBFLAGS) $(FINC) -c $< -o $@

$(FOBJ)/%.c.o: %.c
	@mkdir -p $(@D)
	@printf '  %-4s %s\n' CC $<
	@$(FUZZ_CC) $(FUZZ_LIBFLAGS) $(FINC) -c $< -o $@

define fuzz_rule
$(FUZZ_BUILD)/fuzz-$(1): $(call fobjs,fuzz/$(1).c $(FUZZ_SRC_$(1)))
	@printf '  %-4s %s\n' LD $$@
	@$(FUZZ_CC) $(FUZZ_LDFLAGS) $$^ $(FUZZ_LIBS_$(1)) -o $$@
endef
$(foreach t,trace roundtrip options digits,$(eval $(call fuzz_rule,$(t))))

-include $(shell find $(FOBJ) -name '*.d' 2>/dev/null)

.PHONY: all
