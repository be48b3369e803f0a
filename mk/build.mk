# mk/build.mk — compiles one build variant into $(BUILD). Called by the
# top-level Makefile; not meant to be run by hand.
#
#   VARIANT=sim   kernels (*.cu) compiled as C against the SIMT emulator, host
#                 code against the simulated <cuda_runtime.h> (core/simt/cudart)
#   VARIANT=cuda  kernels compiled by nvcc, host code against the real CUDA
#                 runtime, NCCL and cuBLAS
#   MPI=1         (cuda) also NCCL across processes, bootstrapped by MPI
#                 (core/comm/nccl_mpi.c, pl_comm_create_nccl_mpi): Open MPI's
#                 compile and link flags (mpicc --showme), -DPARALAB_MPI=1
#   SAN=address   AddressSanitizer + UndefinedBehaviorSanitizer (sim)
#   SAN=thread    the race check: ThreadSanitizer with fiber annotations (sim)
#   V=1           show every compile and link command; by default one line
#                 per file ("  CC labs/01_hello_threads/exercise.cu") and per
#                 archive ("  AR build/sim/lib/libparalab.a"), and the
#                 compiler's own messages in full
#
# Each file is compiled with the include folders of the layers it may see
# (mk/layers.mk), and each program links the archives of the layers it uses
# ($(BUILD)/lib: libsimt.a, libparalab.a, libparalab-viz.a, libparalab-lab.a).

VARIANT ?= sim
SAN ?=
BUILD ?= build/$(VARIANT)
CC ?= cc
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
CUBLAS ?= 1
MPI ?= 0
MPICC ?= mpicc
DEPS_PREFIX ?=
# Real GPUs the CUDA variant targets: A100 (sm_80) and H100/H200 (sm_90),
# plus PTX for newer ones.
NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]

include mk/layers.mk

# The include folders (-I) come per file from its layer: $(INC) below.
# -Wshadow: no name hides another; -Wmissing-prototypes: a function other
# files call is declared in a header
CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror -g -O2 -MMD -MP
LDFLAGS :=
LDLIBS := -lpthread -lm
# only for programs that link the visualiser: ncursesw (wide characters) and
# jansson (replaying traces)
UI_LDLIBS := -lncursesw -ltinfo -ljansson
ifneq ($(DEPS_PREFIX),)
  CFLAGS += -I$(DEPS_PREFIX)/usr/include
  LDFLAGS += -L$(DEPS_PREFIX)/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(DEPS_PREFIX)/usr/lib/x86_64-linux-gnu
endif

# Memory checks in kernels, by GCC's kernel-address instrumentation (the
# kernel source is unchanged):
#   inline (build/sim): each load and store first reads a shadow byte at
#     (addr >> 3) + SIMT_SHADOW_OFFSET and calls __asan_report_* only when it
#     is poisoned — about a nanosecond per access. The emulator reserves the
#     shadow and poisons the bytes after every device allocation
#     (core/simt/shadow.h, SIMT_SHADOW_OFFSET: keep the two in step).
#   call mode (build/sim-asan, and KASAN_CALLS_FILES): every access calls
#     __asan_{load,store}N_noabort(addr), which checks it against the
#     allocation table and feeds the access observer (simtSetAccessObserver).
SIMT_SHADOW_OFFSET := 0x100000000000
KASAN_COMMON := -fsanitize=kernel-address --param asan-stack=0 --param asan-globals=0 \
                -fstack-clash-protection
KASAN_INLINE := $(KASAN_COMMON) -fasan-shadow-offset=$(SIMT_SHADOW_OFFSET) \
                --param asan-instrumentation-with-call-threshold=1000000
KASAN_CALLS := $(KASAN_COMMON) --param asan-instrumentation-with-call-threshold=0
# Kernel files whose every access the observer and simtMemStats must see
# (call mode). The kernel record (simtRecord*) needs no call mode: it
# poisons the shadow of what it logs while its kernel runs, so inline files
# report their accesses there (core/simt/record.c); kernels_record.cu is
# here to test its call-mode path (Lab 04's kernels ran 2.3-3x slower in
# call mode).
KASAN_CALLS_FILES ?= tests/unit/kernels_mem.cu tests/unit/kernels_record.cu \
                     $(wildcard labs/02_memory/*.cu)
# The library's own kernels, which the collectives run on every chunk and
# `paralab-bench comm` times: no shadow check in build/sim (a third of the
# reduction's time: 1.0 instead of 1.5 ns per element here). The copies
# around them are bounds-checked by the runtime, and build/sim-asan still
# checks their every access (make test runs it).
KASAN_OFF_FILES ?= core/kernels/reduce.cu
KASAN = $(if $(filter $<,$(KASAN_CALLS_FILES)),$(KASAN_CALLS),$(if $(filter $<,$(KASAN_OFF_FILES)),,$(KASAN_INLINE)))
# The library's kernels (the model's matmul, norms, activations, optimizer,
# the collectives' reductions) at -O3 in the simulated builds: GCC then
# unrolls the small fixed loops (matmul_tiled's 4x4 accumulators) into
# registers, where they need no memory check, instead of a load, a store and
# two shadow reads per multiply-add: the emulated matmul runs 2.5 times
# faster. The same floating-point operations in the same order (no
# -ffast-math, no FMA on x86-64 without -mfma): every result is the same
# bits. Lab kernels stay at -O2 (what a student's kernel does, and the
# accesses Lab 02 counts, are as written).
KFAST_FILES ?= $(wildcard core/kernels/*.cu)
KOPT = $(if $(filter $<,$(KFAST_FILES)),-O3)
# Integer division by zero in a kernel: a check before each division calls
# the emulator (core/simt/fault.c), which stops the kernel with a report
# naming the line, instead of the trap that killed the process (a GPU does
# not trap). build/sim-asan checks it with the rest of -fsanitize=undefined.
KDIV := -fsanitize=integer-divide-by-zero -fno-sanitize-recover=integer-divide-by-zero

ifeq ($(VARIANT),sim)
  KFLAGS = -x c $(CFLAGS) $(KASAN) $(KDIV)
  SIMTFLAGS = $(CFLAGS) -DSIMT_SHADOW
  ifeq ($(SAN),address)
    SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
    CFLAGS += $(SANFLAGS)
    # kernel-address must keep its recover form (the _noabort hooks the
    # emulator defines); UBSan still stops at the first error.
    KFLAGS = -x c $(filter-out -fsanitize=address% -fno-sanitize-recover=all,$(CFLAGS)) \
             $(KASAN_CALLS) -fsanitize=undefined -fno-sanitize-recover=undefined
    SIMTFLAGS = $(CFLAGS)
    LDFLAGS += $(SANFLAGS)
  else ifeq ($(SAN),thread)
    # Kernels and tests are instrumented; the emulator and runtime are not
    # (their internal hand-offs are not data races) but annotate the fibers.
    SIMTFLAGS := $(CFLAGS) -DSIMT_TSAN
    CFLAGS += -fsanitize=thread
    KFLAGS = -x c $(CFLAGS) $(KDIV)
    LDFLAGS += -fsanitize=thread
  endif
else
  LAYER_cudart_INC := $(CUDA_HOME)/include
  CFLAGS += -DPARALAB_CUDA=1 $(if $(filter 1,$(CUBLAS)),-DPARALAB_CUBLAS=1)
  NVFLAGS := -std=c++17 -O2 -g $(NVCC_ARCH) \
             -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings
  LDFLAGS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
  LDLIBS := -lcudart -lnccl $(if $(filter 1,$(CUBLAS)),-lcublas) -lstdc++ $(LDLIBS) -ldl -lrt
  ifeq ($(MPI),1)
    # NCCL across processes: the MPI bootstrap (paralab/nccl_mpi.h)
    MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
    MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)
    $(if $(MPI_LIBS),,$(error MPI=1: '$(MPICC) --showme:link' gave nothing: install Open MPI (scripts/deps.sh --mpi, or apt-get install openmpi-bin libopenmpi-dev)))
    CFLAGS += -DPARALAB_MPI=1 $(MPI_CFLAGS)
    LDLIBS += $(MPI_LIBS)
  endif
endif

# MPI=1 (`make mpi`: build/sim-mpi): the MPI engine and worlds launched by
# mpirun (core/comm/comm_mpi.c, paralab/dist.h), with Open MPI's own flags
# (mpicc --showme); without it nothing needs MPI
MPI ?= 0
ifeq ($(MPI),1)
  MPICC ?= mpicc
  CFLAGS += -DPARALAB_MPI=1 $(shell $(MPICC) --showme:compile)
  LDLIBS += $(shell $(MPICC) --showme:link)
endif

OBJ := $(BUILD)/obj
BIN := $(BUILD)/bin
LIB := $(BUILD)/lib

# The include flags of the file being compiled ($<): its layer's
# (mk/layers.mk). Lab 03's reference as the race check rewrites it is lab code.
LAYER_FILES += $(BUILD)/gen/%=labs
INC = $(if $(call layer_of,$<),$(call layer_inc,$(call layer_of,$<)),$(error $<: in no layer: add it to LAYER_FILES in mk/layers.mk))

# Quiet by default: what is built, not how (V=1: the commands).
V ?= 0
ifeq ($(V),1)
  Q :=
  say = @:
else
  Q := @
  say = @printf '  %-4s %s\n' '$(1)' '$(2)'
endif

# ---- the student handout (make handout, scripts/handout.sh) ---------------
# The handout ships no solution source: labs/reference/hidden.list names the
# files left out (every labs/*/solution.c|.cu and the files that hold
# the same code), and labs/reference/<variant>/libparalab-reference.a their
# objects, compiled by the instructor's build of that variant. A listed file
# that is absent is built by taking its object out of the archive; one that
# is present (put back by hand) is compiled as usual.
REF_DIR := labs/reference
HIDDEN_LISTED := $(if $(wildcard $(REF_DIR)/hidden.list),$(shell cat $(REF_DIR)/hidden.list))
HIDDEN := $(filter-out $(wildcard $(HIDDEN_LISTED)),$(HIDDEN_LISTED))
REF_ARCHIVE := $(REF_DIR)/$(VARIANT)/libparalab-reference.a
ifneq ($(HIDDEN),)
  ifneq ($(SAN),)
    $(error this handout's reference objects are built for build/$(VARIANT) without sanitizers: SAN=$(SAN) needs the solution sources ($(firstword $(HIDDEN)) is missing))
  endif
  ifeq ($(wildcard $(REF_ARCHIVE)),)
    $(error this handout ships $(words $(HIDDEN)) files compiled, not as source ($(REF_DIR)/hidden.list), and has no $(VARIANT) build of them: $(REF_ARCHIVE) is missing (see $(REF_DIR)/README.md))
  endif
endif
# the member of the archive that is file $(1)'s object
ref_member = $(subst /,__,$(1)).o

# ---- sources -------------------------------------------------------------
SIMT_SRC := $(if $(filter sim,$(VARIANT)),$(wildcard core/simt/*.c))
# The device seam: one file per world (paralab/device.h).
SEAM_SRC := core/device_$(VARIANT).c
# The communicators: core/comm/*.c but the other variant's NCCL engine (comm_nccl.c
# needs NCCL; nccl_none.c stands in for it in the simulated build).
COMM_SRC := $(filter-out core/comm/$(if $(filter cuda,$(VARIANT)),nccl_none,comm_nccl).c,$(wildcard core/comm/*.c))
# NCCL's MPI bootstrap: the CUDA build with MPI=1 only
COMM_SRC := $(if $(and $(filter cuda,$(VARIANT)),$(filter 1,$(MPI))),$(COMM_SRC),$(filter-out core/comm/nccl_mpi.c,$(COMM_SRC)))
# core: the runtime, its subfolders (comm, model, parallel) and the kernels
CORE_SRC := $(filter-out core/device_%.c,$(wildcard core/*.c)) $(SEAM_SRC) $(COMM_SRC) \
            $(wildcard core/model/*.c core/parallel/*.c) \
            $(wildcard core/kernels/*.cu) $(filter core/%,$(HIDDEN))
VIZ_SRC := $(wildcard viz/*.c)
# the one lab harness
HARNESS_SRC := $(wildcard labs/harness/*.c labs/harness/*.cu)
LAB_DIRS := $(sort $(wildcard labs/[0-9][0-9]_*))
# a lab's own code but its main (labcheck and paralab-bench link it too)
lab_src = $(filter-out $(1)/main.c,$(wildcard $(1)/*.c $(1)/*.cu) $(filter $(1)/%,$(HIDDEN)))
UNIT_SRC := $(wildcard tests/unit/*.c) $(wildcard tests/unit/*.cu)
BENCH_SRC := $(wildcard bench/*.c) $(wildcard bench/*.cu)
# the labs paralab-bench runs (dp: Lab 07's training)
BENCH_LABS := labs/07_data_parallel

objs = $(patsubst %,$(OBJ)/%.o,$(1))

# ---- libraries: one archive per layer ----------------------------------------
SIMT_LIB := $(if $(SIMT_SRC),$(LIB)/libsimt.a)
CORE_LIB := $(LIB)/libparalab.a
VIZ_LIB := $(LIB)/libparalab-viz.a
LAB_LIB := $(if $(HARNESS_SRC),$(LIB)/libparalab-lab.a)
# what a program links, from the layer it needs down (an archive only
# before the ones it calls)
RT_LIBS := $(CORE_LIB) $(SIMT_LIB)
UI_LIBS := $(VIZ_LIB) $(RT_LIBS)
LAB_LIBS := $(LAB_LIB) $(UI_LIBS)

LAB_BINS := $(foreach d,$(LAB_DIRS),$(BIN)/lab$(shell echo $(notdir $(d)) | cut -c1-2))
# (the handout has no unit tests and no benchmarks)
PROGS := $(LAB_BINS) $(BIN)/labcheck $(if $(strip $(UNIT_SRC)),$(BIN)/unit) \
         $(if $(strip $(BENCH_SRC)),$(BIN)/paralab-bench) $(BIN)/paralab-train $(BIN)/paralab-viz
ifeq ($(MPI),1)
  PROGS += $(BIN)/mpicheck
endif
ifeq ($(SAN),thread)
  PROGS := $(BIN)/racecheck
endif

all: $(PROGS)
	@:

# Rebuild everything when the flags change (a new variant, sanitizer or
# toolchain, a file moved into or out of call mode), not only when sources do.
FLAGS_NOW := $(CC) $(CFLAGS) | $(KFLAGS) | -O3: $(KFAST_FILES) | calls: $(KASAN_CALLS_FILES) \
             | off: $(KASAN_OFF_FILES) | $(SIMTFLAGS) | $(LDFLAGS) $(LDLIBS) $(UI_LDLIBS) \
             | $(LAYER_FILES) $(foreach l,$(LAYERS),$(l):$(call layer_inc,$(l))) \
             $(if $(filter cuda,$(VARIANT)),| $(NVCC) $(NVFLAGS))
FLAGS_STAMP := $(BUILD)/flags.stamp
ifneq ($(FLAGS_NOW),$(shell cat $(FLAGS_STAMP) 2>/dev/null))
  $(shell mkdir -p $(BUILD) && echo '$(FLAGS_NOW)' > $(FLAGS_STAMP))
endif

# ---- compile ---------------------------------------------------------------
# A student's half-written exercise must still compile: unused names are not
# errors there (everything else still is).
EXERCISE_RELAX := -Wno-unused-parameter -Wno-unused-variable -Wno-unused-but-set-variable \
                  -Wno-unused-function -Wno-shadow
# gcc's flow analysis (-Wmaybe-uninitialized) guesses: a struct the
# exercise's own TODO function (PL_TODO(); return 0;) should fill reads as
# "may be used uninitialized" in the function that calls it, a false
# positive the student did not cause. Off there (a use that is certainly
# uninitialized, -Wuninitialized, stays an error); clang has no such warning.
EXERCISE_RELAX += $(if $(shell $(CC) --version 2>/dev/null | grep -i clang),,-Wno-maybe-uninitialized)
# (C only: a helper function the student adds need not be static)
EXERCISE_RELAX_C := -Wno-missing-prototypes
$(OBJ)/labs/%/exercise.c.o: EXTRA = $(EXERCISE_RELAX) $(EXERCISE_RELAX_C)
$(OBJ)/labs/%/exercise.cu.o: EXTRA = $(if $(filter cuda,$(VARIANT)),-Xcompiler $(subst $(eval) ,$(comma),$(EXERCISE_RELAX)),$(EXERCISE_RELAX) $(EXERCISE_RELAX_C))
comma := ,

$(OBJ)/core/simt/%.c.o: core/simt/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(SIMTFLAGS) $(INC) -U_FORTIFY_SOURCE -c $< -o $@

$(OBJ)/%.c.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(INC) $(EXTRA) -c $< -o $@

ifeq ($(VARIANT),sim)
# A kernel file is compiled as mk/cu2c.pl rewrites it (extern __shared__,
# non-static inline and __device__ functions, the 48 KiB of static shared
# memory: see there), into $(OBJ)/FILE.cu.c with FILE.cu's line numbers
# and name (#line); -iquote finds its "headers" beside FILE.cu as before.
# A kernel file it #includes (tests/unit/kernels_lab04.cu) is rewritten in
# place; $(OBJ)/FILE.cu.inc.d names those for make.
$(OBJ)/%.cu.o: %.cu mk/cu2c.pl $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)perl mk/cu2c.pl --deps $(@:.o=.inc.d) $@ $< >$(@:.o=.c)
	$(Q)$(CC) $(KFLAGS) $(KOPT) $(INC) -iquote $(<D) $(EXTRA) -c $(@:.o=.c) -o $@
# (the rewritten file is a prerequisite in the .d file gcc writes: if it
# is gone, the object is remade, which writes it again)
$(OBJ)/%.cu.c: ;
else
$(OBJ)/%.cu.o: %.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) $(NVFLAGS) $(INC) $(EXTRA) -MMD -MP -c $< -o $@
endif

# The handout's precompiled files: their objects come out of the archive.
ifneq ($(HIDDEN),)
$(call objs,$(HIDDEN)): $(OBJ)/%.o: $(REF_ARCHIVE)
	@mkdir -p $(@D)
	$(call say,REF,$*)
	$(Q)ar p $< $(call ref_member,$*) >$@.tmp && test -s $@.tmp || \
	 { rm -f $@.tmp; echo "$<: no member $(call ref_member,$*) (the object of $*)" >&2; exit 1; }
	$(Q)mv $@.tmp $@
endif

# ---- archive ---------------------------------------------------------------
# An archive is made afresh from its members; it is remade when one changes,
# and when the list does (a file moved to another layer leaves no stale copy):
# $(1).members holds the list it was made from.
define lib_rule
$(if $(call same_list,$(2),$(shell cat $(1).members 2>/dev/null)),,$(shell mkdir -p $(dir $(1)) && echo '$(2)' >$(1).members))
$(1): $(call objs,$(2)) $(1).members
	@mkdir -p $$(@D)
	$$(call say,AR,$$@)
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef
same_list = $(if $(subst $(strip $(1)),,$(strip $(2)))$(subst $(strip $(2)),,$(strip $(1))),,1)
AR := ar
$(if $(SIMT_LIB),$(eval $(call lib_rule,$(SIMT_LIB),$(SIMT_SRC))))
$(eval $(call lib_rule,$(CORE_LIB),$(CORE_SRC)))
$(eval $(call lib_rule,$(VIZ_LIB),$(VIZ_SRC)))
$(if $(LAB_LIB),$(eval $(call lib_rule,$(LAB_LIB),$(HARNESS_SRC))))

# ---- link ------------------------------------------------------------------
# Each program: its own objects, then the archives of the layers it uses, top
# down; ncurses and jansson only with the visualiser.
# A lab: its own files, the harness, the visualiser, core.
define lab_rule
$(BIN)/lab$(shell echo $(notdir $(1)) | cut -c1-2): $(OBJ)/$(1)/main.c.o $(call objs,$(call lab_src,$(1))) $(LAB_LIBS)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(LDFLAGS) $$^ $$(UI_LDLIBS) $$(LDLIBS) -o $$@
endef
$(foreach d,$(LAB_DIRS),$(eval $(call lab_rule,$(d))))

# every lab's checks, exercises and references, and the list of them
$(BIN)/labcheck: $(call objs,tests/labcheck.c $(foreach d,$(LAB_DIRS),$(call lab_src,$(d))) \
                 labs/registry.c) $(LAB_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(UI_LDLIBS) $(LDLIBS) -o $@

# the suites test the emulator, core, the visualiser and the harness (an
# archive adds only the members a program calls)
$(BIN)/unit: $(call objs,$(UNIT_SRC)) $(LAB_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -lcunit $(UI_LDLIBS) $(LDLIBS) -o $@

$(BIN)/paralab-bench: $(call objs,$(BENCH_SRC) $(foreach d,$(BENCH_LABS),$(call lab_src,$(d)))) \
                      $(LAB_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(UI_LDLIBS) $(LDLIBS) -o $@

$(BIN)/paralab-viz: $(OBJ)/tools/viz.c.o $(UI_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(UI_LDLIBS) $(LDLIBS) -o $@

# the MPI engine across processes (MPI=1; tests/mpi.sh): core only
$(BIN)/mpicheck: $(OBJ)/tests/mpi/mpicheck.c.o $(RT_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# core only: no visualiser, no ncurses, no jansson
$(BIN)/paralab-train: $(OBJ)/tools/train.c.o $(RT_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The race check also runs Lab 03's reference as it is (clean), and a copy of
# it with the __syncthreads() after each step of the tree removed, renamed
# lab03_racy (a race at the tree's add): the same edit as the student
# scenario lab03_no_barrier (tests/student_check.sh).
$(BUILD)/gen/lab03_racy.cu: labs/03_reduction/solution.cu
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)perl -0pe 's/(if \(tid < half\) s\[tid\] \+= s\[tid \+ half\];\n)\s*__syncthreads\(\);\n/$$1/g; s/lab03_solution/lab03_racy/g' $< >$@
	@! cmp -s $< $@ || { echo "lab03_racy.cu: the edit no longer applies to $<" >&2; rm -f $@; exit 1; }

$(BIN)/racecheck: $(call objs,$(wildcard tests/race/*.c tests/race/*.cu) labs/03_reduction/solution.cu \
                  $(BUILD)/gen/lab03_racy.cu) $(RT_LIBS)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

.PHONY: all
