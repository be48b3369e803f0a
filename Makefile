# paralab — one entry point: build, run, check, test, bench, demo.
# `make help` lists the targets. Compile rules live in mk/build.mk.

SHELL := /bin/bash
.DEFAULT_GOAL := all
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
ARGS ?=

HAVE_NVCC := $(shell test -x $(NVCC) && echo 1)
HAVE_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
# The CUDA variant is built when a GPU is found or CUDA=1 is given (in the
# student handout, when a GPU is found only if the handout holds the CUDA
# build of the references: labs/reference/cuda/).
ifeq ($(HAVE_GPU),1)
  ifneq ($(wildcard labs/reference/hidden.list),)
    CUDA ?= $(if $(wildcard labs/reference/cuda/libparalab-reference.a),1,0)
  endif
  CUDA ?= 1
endif
CUDA ?= 0

# Parallel by default; a -j given by the user (and its job server) wins.
# Expanded in recipes: only then does MAKEFLAGS hold the -j.
SUB = $(MAKE) -f mk/build.mk $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))
SIM = $(SUB) VARIANT=sim BUILD=build/sim
ASAN = $(SUB) VARIANT=sim SAN=address BUILD=build/sim-asan
TSAN = $(SUB) VARIANT=sim SAN=thread BUILD=build/sim-tsan
# MPI=1: the CUDA variant with NCCL across processes, bootstrapped by MPI
# (build/cuda-mpi); the plain CUDA variant needs no MPI
MPI ?= 0
CUDA_BUILD = build/cuda$(if $(filter 1,$(MPI)),-mpi)
CUDAB = $(SUB) VARIANT=cuda BUILD=$(CUDA_BUILD) MPI=$(MPI) CUDA_HOME=$(CUDA_HOME) NVCC=$(NVCC)
# the simulated build with the MPI engine (Open MPI's mpicc flags): worlds launched by mpirun
MPIB = $(SUB) VARIANT=sim MPI=1 BUILD=build/sim-mpi

.PHONY: all sim cuda deps data check demo clean help
# handout-omit-begin: scripts/handout.sh leaves out what lies between these
# lines: the project's own targets (the tests, benchmarks, GPU checks), which
# need tests/, bench/ or the solution sources
.PHONY: test mpi deps-mpi deps-fuzz deps-test fuzz cuda12-check cuda12-build racecheck bench bench-mpi gpu-bundle gpu-check gpu-test gpu-labs \
        gpu-bench gpu-nccl-mpi format format-check handout
# handout-omit-end

## all: build the simulated variant (build/sim); also build/cuda with a GPU or CUDA=1
all: sim
ifeq ($(CUDA),1)
all: cuda
endif

## sim: build the simulated variant only (build/sim)
sim:
	+@$(SIM)

## cuda: build the CUDA variant only (build/cuda: nvcc, CUDA runtime, NCCL, cuBLAS; MPI=1: with NCCL across processes over MPI, build/cuda-mpi)
cuda:
	@test -x $(NVCC) || { echo "✗ nvcc not found at $(NVCC): install the CUDA toolkit, or set CUDA_HOME=/path/to/cuda or NVCC=/path/to/nvcc" >&2; exit 2; }
	@test "$(MPI)" != 1 || command -v mpicc >/dev/null || { echo "✗ MPI=1: mpicc not found: install Open MPI (scripts/deps.sh --mpi, or apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
	+@$(CUDAB)

# handout-omit-begin
## mpi: the simulated variant with the MPI engine (build/sim-mpi; installs Open MPI as root): run it with scripts/mpirun.sh -np P build/sim-mpi/bin/labNN (docs/multi-node.md)
mpi: deps-mpi
	+@$(MPIB)
# handout-omit-end

## deps: check for (and, as root, install) the Debian packages paralab needs
deps:
	@scripts/deps.sh

# handout-omit-begin
# the same and Open MPI (make mpi, make test)
deps-mpi:
	@scripts/deps.sh --mpi
# the same, and clang with libFuzzer's runtime: what make fuzz needs
deps-fuzz:
	@scripts/deps.sh --fuzz
# all that make test needs: Open MPI and the fuzzers' clang too
deps-test:
	@scripts/deps.sh --mpi --fuzz
# handout-omit-end

## data: fetch and verify the UCI handwritten digits into data/
data:
	@scripts/data.sh

# handout-omit-begin
## test: everything: the layers, unit tests, lab checks on the solutions, the visualiser in tmux, paralab-train on the digits, again under ASan+UBSan (short runs), the race check, the fuzz targets (short runs), the MPI worlds, the CUDA build
# The steps below run TEST_JOBS at a time (default 2): each step (one
# command but for the builds) is a single thread for most of its time, and
# the tmux steps mostly wait for a screen or a reader's pause, so one at a
# time leaves a core idle. Each step's output is printed whole, under its
# "==" heading, when it ends (-Otarget); the first failure stops the run
# once the running steps end. TEST_JOBS=1 runs them one by one.
TEST_JOBS ?= 2
# The scripts see make's flags as a plain `make test` gives them (no job
# server: their own makes run -j2 or alone, as they say)
TESTENV = env MAKEFLAGS=--no-print-directory MFLAGS=--no-print-directory
# build/sim comes first, on every core, so that the steps start in the
# order listed (make starts the steps that wait for a prerequisite in
# reverse order once it is made: the long ones would start last)
test: deps-test data
	+@$(SIM)
	+@$(MAKE) -j$(TEST_JOBS) -Otarget test-steps SIM_BUILT=1
	@echo "make test: all passed"
# the steps' prerequisite: build/sim, unless `test` has built it
SIMDEP = $(if $(SIM_BUILT),,t-sim)

# The quick static checks first (a failure there stops the run at once),
# then the long steps, so that they start first.
TEST_STEPS := t-format t-layers t-zh t-instructors t-labcheck t-asan-unit t-asan-labcheck t-student t-handout t-grade t-unit t-solved \
              t-race t-smoke t-viz-pause t-viz-tty t-train t-viz-mesh t-viz-pipeline \
              t-viz-shards t-viz-zero t-viz-lab57 t-viz-lab01 t-viz-lab04 t-viz-lab02 t-viz-lab03 t-bench-zero t-bench-hybrid t-link t-viz-pure t-compile-fail \
              t-mpi t-viz-parts t-nccl-id t-bench-mpi t-fuzz t-cuda
.PHONY: test-steps t-sim t-asan t-mpi-build $(TEST_STEPS)
test-steps: $(TEST_STEPS)

t-sim:
	+@$(SIM)
t-format:
	@$(MAKE) format-check
t-layers:
	@echo "== the layers: every #include within the layers its file may see (mk/layers.mk), and the check's own test"
	@$(TESTENV) tests/layers.sh
	@$(TESTENV) tests/layers_selftest.sh
t-zh:
	@echo "== the Chinese guides: each English guide's twin (README.zh.md, docs/zh/, labs/NN_name/README.zh.md), linked both ways, the same commands (the check's own test first)"
	@$(TESTENV) tests/zh_guides_selftest.sh
	@$(TESTENV) tests/zh_guides.sh
t-instructors:
	@echo "== the instructor guide: a section for every lab, an answer for every question of its guide (docs/instructors.md)"
	@$(TESTENV) tests/instructors.sh
t-link: $(SIMDEP) t-asan
	@echo "== each program links only what it uses (paralab-train: no ncurses; a lab: no other lab's code) and the emulator's kernel-address hooks (under ASan: not libasan's)"
	@$(TESTENV) tests/link_check.sh build/sim
	@$(TESTENV) tests/link_check.sh build/sim-asan
# build/sim-mpi's programs the step runs, then them under scripts/mpirun.sh
# (each run under a generous limit: a hang fails, a busy machine does not)
MPI_PROGS := $(addprefix build/sim-mpi/bin/,mpicheck lab05 lab06 lab07 lab08 lab09 lab10 lab11)
# t-bench-mpi's program, built with the others by one make (the two steps
# run side by side: two makes in build/sim-mpi would compile the same files)
MPI_PROGS += build/sim-mpi/bin/paralab-bench
t-mpi-build:
	+@$(MPIB) $(MPI_PROGS)
t-mpi: t-mpi-build
	@echo "== worlds of several processes (mpirun, build/sim-mpi): every collective and a split across processes, a mismatch and a deadlock diagnosed, Labs 06 to 11 the same values, ledgers and modeled times as one process, one device a process, Lab 05 refused, a trace's parts merged"
	@$(TESTENV) tests/mpi.sh build/sim-mpi/bin
t-unit: $(SIMDEP)
	@echo "== unit tests (simulated GPU)"
	@build/sim/bin/unit
# The one full run of the long training checks (Lab 07's and Lab 08's 20
# epochs): the student scenarios and the finished exercises run --short, and
# the scenario of Lab 07's solution asserts its progress lines here
LABCHECK_LOG = build/sim/labcheck-solution.log
t-labcheck: $(SIMDEP)
	@echo "== lab checks on the reference solutions (a TODO is a failure)"
	@set -o pipefail; build/sim/bin/labcheck --solution --strict 2>&1 | tee $(LABCHECK_LOG)
	@grep -qE '^  \.\.\. 07_data_parallel sync_gradients: N=8, epoch 20/20: loss [0-9.]+, test [0-9.]+ %$$' $(LABCHECK_LOG) || \
	 { echo "✗ labcheck --solution: no progress line 'N=8, epoch 20/20' of Lab 07's training check"; exit 1; }
t-smoke: $(SIMDEP)
	@echo "== lab binaries as a newcomer runs them"
	@$(TESTENV) tests/lab_smoke.sh build/sim/bin
t-grade: $(SIMDEP)
	@echo "== labcheck's reports for autograders: JUnit XML (junit.xsd) and Gradescope's results.json (its JSON Schema) on two labs' references and a student's crash, endless loop, wrong and right exercises; one exercise selected; bad paths; a stop by SIGTERM"
	@$(TESTENV) tests/grade_reports.sh
t-student: $(SIMDEP)
	@echo "== what make check tells a student (wrong, crashing and right exercises)"
	@$(TESTENV) tests/student_check.sh
t-handout: $(SIMDEP)
	@echo "== make handout: no solution source in it; built from its tarball, a lab runs on the compiled-in reference, make check says TODO, an exercise solved as a student would is PASS"
	@$(TESTENV) tests/handout.sh
t-solved: $(SIMDEP)
	@echo "== every lab binary and make check with the exercises finished (as a student writes them)"
	@$(TESTENV) tests/solved_labs.sh
t-viz-pure: $(SIMDEP)
	@echo "== the visualiser is a pure consumer: no CUDA call, no device asked (what it shows comes as trace events)"
	@$(TESTENV) tests/viz_pure.sh
t-viz-tty: $(SIMDEP)
	@echo "== the visualiser in a real terminal (tmux): keys, resize, fallbacks, replay"
	@$(TESTENV) tests/viz_tty.sh build/sim/bin
t-viz-shards: $(SIMDEP)
	@echo "== the shards pane in a terminal (tmux): a tensor-parallel trace replayed at 80x24 and 120x40"
	@$(TESTENV) tests/viz_shards.sh build/sim/bin
t-viz-pipeline: $(SIMDEP)
	@echo "== the pipeline pane in a terminal (tmux): pipeline traces (GPipe p 8 m 32, ZB-H1) replayed to their end at 120x40 and 80x24"
	@$(TESTENV) tests/viz_pipeline.sh build/sim/bin
t-viz-mesh: $(SIMDEP)
	@echo "== the mesh pane in a terminal (tmux): a hybrid trace (dp 2 x tp 2 x pp 2, TP/PP/DP traffic) replayed step by step at 200x50, to its end at 80x24 with NO_COLOR, in both rank orders"
	@$(TESTENV) tests/viz_mesh.sh build/sim/bin
t-viz-zero: $(SIMDEP)
	@echo "== the memory pane in a terminal (tmux): a ZeRO-3 trace (8 ranks, buckets gathered and given back) replayed step by step at 120x40, to its end at 80x24 with NO_COLOR and in ASCII"
	@$(TESTENV) tests/viz_zero.sh build/sim/bin
t-viz-lab57: $(SIMDEP)
	@echo "== Labs 05-07's screens in a terminal (tmux): one stream against chunks, the ring steps' table, the gradient buckets; 120x40 and 80x24 ASCII without colour"
	@$(TESTENV) tests/viz_lab57.sh build/sim/bin
t-viz-lab01: $(SIMDEP)
	@echo "== Lab 01's pictures (blocks on SMs, which thread wrote which element): text, tmux 120x40 / 80x24 NO_COLOR / LANG=C, a kernel without its bound check"
	@$(TESTENV) tests/viz_lab01.sh build/sim/bin
t-viz-lab04: $(SIMDEP)
	@echo "== Lab 04's picture pane in a terminal (tmux): the tiles one block loads along K, the roofline, at 120x40, 80x24 NO_COLOR, LANG=C, replayed, --no-viz"
	@$(TESTENV) tests/viz_lab04.sh build/sim/bin
t-viz-lab02: $(SIMDEP)
	@echo "== Lab 02's pictures (a warp's sectors, shared-memory banks, bandwidth bars): tmux 120x40 / 80x24 NO_COLOR / LANG=C, --no-viz"
	@$(TESTENV) tests/viz_lab02.sh build/sim/bin
t-viz-lab03: $(SIMDEP)
	@echo "== Lab 03's tree (block 0 of the kernel, as recorded): text, tmux 120x40 / 80x24 NO_COLOR / LANG=C, the shuffle version's lanes"
	@$(TESTENV) tests/viz_lab03.sh build/sim/bin
t-viz-parts: $(SIMDEP)
	@echo "== a multi-process run's trace: Lab 06's 4 ranks as two processes' parts, merged by paralab-viz (--check, the replay in tmux: every rank), parts of other runs refused"
	@$(TESTENV) tests/viz_parts.sh build/sim/bin
t-viz-pause: $(SIMDEP)
	@echo "== pauses: Labs 06 and 07 wait 30 s for the student, then finish; each step shows its own work"
	@$(TESTENV) tests/viz_pause.sh build/sim/bin
t-bench-hybrid: $(SIMDEP)
	@echo "== paralab-bench hybrid, short (h 16): every factorisation of 8 ranks on one node of 8 and two of 4, the bytes that cross nodes against the mesh, the verdict"
	@$(TESTENV) tests/bench_hybrid.sh build/sim/bin
t-bench-zero: $(SIMDEP)
	@echo "== paralab-bench zero, short (wide model h 64): every rank's memory and traffic per stage and N, exactly the formulas, the verdict"
	@$(TESTENV) tests/bench_zero.sh build/sim/bin
t-train: $(SIMDEP)
	@echo "== paralab-train: one device, the digits, >= 95 % test accuracy (the MLP, and the block model against Lab 08)"
	@$(TESTENV) tests/train_check.sh build/sim/bin
t-compile-fail:
	@echo "== what the simulated build refuses at compile time"
	@$(TESTENV) tests/compile_fail.sh
t-fuzz:
	@echo "== the fuzz targets, short (trace reader, trace written and read back, option parser, digits loader: the crashes found so far, then a few thousand runs each from the seeds, -seed=1)"
	@$(TESTENV) tests/fuzz.sh --short
t-asan:
	+@$(ASAN)
t-asan-unit: t-asan
	@echo "== the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (UNIT_SHORT=1: fewer configurations)"
	@ASAN_OPTIONS=detect_leaks=1 UNIT_SHORT=1 build/sim-asan/bin/unit
t-asan-labcheck: t-asan
	@echo "== the lab checks under AddressSanitizer + UndefinedBehaviorSanitizer (--short)"
	@build/sim-asan/bin/labcheck --solution --strict --short --timeout 900
t-race:
	@$(MAKE) racecheck
t-bench-mpi: $(SIMDEP) t-mpi-build
	@echo "== paralab-bench comm under mpirun -np 4 (short, not timed): build/sim-mpi's table of all-reduce on the MPI engine, the local engine and Open MPI's MPI_Allreduce, every result checked; build/sim says it has no MPI engine and measures once (skipped without Open MPI)"
	@$(TESTENV) tests/bench_mpi.sh build/sim/bin build/sim-mpi/bin
t-nccl-id:
	@echo "== NCCL across processes without a GPU: mpirun -np 2, rank 0's ncclGetUniqueId broadcast over MPI, the same 128 bytes in every process (skipped without nvcc, NCCL or Open MPI)"
	@$(TESTENV) tests/nccl_id.sh 2
t-cuda:
ifeq ($(HAVE_NVCC),1)
	@echo "== CUDA variant: compile and link (build/cuda)"
	+@$(CUDAB)
	@echo "✓ build/cuda compiled and linked (not run: $(if $(HAVE_GPU),run make gpu-check,no GPU here))"
	@echo "== Lab 04's warp tiles in the PTX for sm_90: 16-byte global and shared accesses, a barrier a step, accumulators in registers"
	@tests/cuda_ptx.sh $(NVCC)
	@echo "== CUDA variant with NCCL across processes over MPI: compile and link (build/cuda-mpi)"
	+@if command -v mpicc >/dev/null; then \
	    $(SUB) VARIANT=cuda BUILD=build/cuda-mpi MPI=1 CUDA_HOME=$(CUDA_HOME) NVCC=$(NVCC) && \
	    echo "✓ build/cuda-mpi compiled and linked (not run: its labs under mpirun need a GPU per rank)"; \
	else echo "✗ mpicc not found: build/cuda-mpi not built (scripts/deps.sh --mpi)"; exit 1; fi
else
	@echo "✗ nvcc not found at $(NVCC): skipping the CUDA variant"
endif
	@if [ -f .cuda12/env.mk ]; then $(MAKE) cuda12-build; fi

## fuzz: libFuzzer on the trace reader, the trace writer against it, the option parser and the digits loader, FUZZ_TIME seconds each (default 300; docs/fuzzing.md)
fuzz: deps-fuzz
	@$(TESTENV) tests/fuzz.sh $(FUZZ_TARGETS)

## cuda12-check: compile and link the CUDA variant against CUDA 12 (PyPI wheels in .cuda12/)
cuda12-check:
	@scripts/cuda12.sh --hybrid
	@$(MAKE) cuda12-build

## cuda12-build: rebuild build/cuda12 with the toolchain cuda12-check set up
cuda12-build:
	@echo "== CUDA variant against CUDA 12 headers and libraries (build/cuda12)"
	+@$(SUB) VARIANT=cuda BUILD=build/cuda12 CUBLAS=0 $$(sed -n 's/^\(CUDA_HOME\|NVCC\) := \(.*\)/\1=\2/p' .cuda12/env.mk)
	@echo "✓ build/cuda12 compiled and linked"
# handout-omit-end

## check: the student's command: check your exercise files (PASS / FAIL / TODO per exercise); LAB=06 EXERCISE=NAME select, JUNIT=FILE GRADESCOPE=FILE write reports for autograders (docs/exercises.md, "Autograders")
# LAB and EXERCISE from the command line only (not an environment's LAB)
cmdline = $(if $(filter command line,$(origin $(1))),$($(1)))
check:
	+@$(SIM)
	@build/sim/bin/labcheck $(if $(call cmdline,EXERCISE),--exercise '$(EXERCISE)') \
	 $(if $(JUNIT),--junit '$(JUNIT)') $(if $(GRADESCOPE),--gradescope '$(GRADESCOPE)') $(ARGS) $(call cmdline,LAB)

# handout-omit-begin
## racecheck: ThreadSanitizer build; reports a shared-memory race with file:line
racecheck:
	@echo "== race check (ThreadSanitizer with fiber annotations)"
	+@$(TSAN)
	@build/sim-tsan/bin/racecheck

## bench: the SIMT emulator vs a C loop, trace recording, collectives vs memcpy and Open MPI, training vs plain C, rendering (100k and 10M events), each lab's default run timed, data parallelism vs the alpha-beta model and its overlap, tensor parallelism's step and communication share, pipeline schedules' bubble and step against their formulas, every 3D factorisation of 8 ranks on one node and two, ZeRO stages 0-3's memory and traffic against their formulas (same-run ratios)
bench:
	@scripts/deps.sh --bench
	+@$(SIM)
	@mkdir -p build/mpi
	@mpicc -std=c11 -O2 -Wall -Wextra -Werror bench/mpi/allreduce.c -o build/mpi/allreduce
	@$(MAKE) -s data
	@scripts/bench.sh

## bench-mpi: paralab-bench comm under scripts/mpirun.sh -np 4 (build/sim-mpi; installs Open MPI as root): all-reduce from 4 KiB to 16 MiB on the MPI engine (a rank a process) and the local engine (4 threads in process 0) against Open MPI's MPI_Allreduce, same run; make bench runs it when build/sim-mpi exists
bench-mpi: deps-mpi
	+@$(MPIB) build/sim-mpi/bin/paralab-bench
	@scripts/mpirun.sh -np 4 build/sim-mpi/bin/paralab-bench comm
# handout-omit-end

# play, unless ARGS asks for --step
DEMO_MODE = $(if $(findstring --step,$(ARGS)),,--play)

## demo: install what is missing, build, and run the main demo: Lab 07, data parallelism on 4 devices, playing (ARGS=--no-viz for plain text)
demo: deps data
	@$(MAKE) all
	@if [ "$(HAVE_GPU)" = 1 ] && [ -x build/cuda/bin/lab07 ]; then build/cuda/bin/lab07 --devices 4 $(DEMO_MODE) $(ARGS); \
	 else build/sim/bin/lab07 --devices 4 $(DEMO_MODE) $(ARGS); fi

# handout-omit-begin
## gpu-bundle: download the Debian packages gpu-check needs into .gpu-bundle/ (run where apt works)
gpu-bundle:
	@scripts/gpu-bundle.sh

## gpu-check: on a GPU machine with no registry: unpack .gpu-bundle, build CUDA, test, bench, report
gpu-check:
	@scripts/gpu-check.sh

## gpu-test: on a GPU: the unit tests and lab checks of the CUDA variant, each suite under a time limit
GPU_SUITE_TIMEOUT ?= 120
gpu-test: cuda
	@fail=0; for s in $$(build/cuda/bin/unit --list); do 	   timeout -k 5 $(GPU_SUITE_TIMEOUT) build/cuda/bin/unit $$s || { echo "✗ unit suite $$s: exit $$? (124: over $(GPU_SUITE_TIMEOUT) s)"; fail=1; }; 	 done; 	 timeout -k 5 $(GPU_SUITE_TIMEOUT) build/cuda/bin/labcheck --solution --strict || { echo "✗ labcheck: exit $$?"; fail=1; }; 	 exit $$fail

## gpu-labs: on a GPU: every lab of the CUDA variant, --no-viz --solution, measured
gpu-labs: cuda
	@scripts/gpu-labs.sh

## gpu-nccl-mpi: on a GPU: NCCL across processes bootstrapped by MPI, one process (the id over MPI, ncclCommInitRank, an all-reduce; then Lab 07 under mpirun -np 1 on build/cuda-mpi, its world on pl_comm_create_dist's NCCL, against the same run without mpirun; skipped without Open MPI)
gpu-nccl-mpi:
	@tests/nccl_id.sh 1
	@if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then \
	    $(MAKE) --no-print-directory cuda MPI=1 && tests/gpu_lab_mpi.sh; \
	else echo "SKIP  Lab 07 on NCCL over MPI: Open MPI is not installed (scripts/deps.sh --mpi)"; fi

## gpu-bench: on a GPU: paralab-bench gpu (the CUDA variant)
gpu-bench: cuda
	@build/cuda/bin/paralab-bench gpu

## format: clang-format every C, header and kernel file in place
format:
	@clang-format -i $$(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cu')

## format-check: fail if any C, header or kernel file is not clang-formatted
format-check:
	@if command -v clang-format >/dev/null; then \
	   clang-format --dry-run --Werror $$(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cu') && echo "✓ clang-format: every file formatted"; \
	 else echo "✗ clang-format not found: skipping the format check"; fi

# The files the handout leaves out besides labs/*/solution.c|.cu: those that
# hold the same code as a lab's reference. Lab 02's padded transpose is the
# tiled one plus a column; Lab 03's first-add and atomic kernels hold its
# tree; Lab 08's layers are the engine's pl_tp_reference_ops, Lab 09's
# schedules its GPipe and 1F1B, Lab 10's coordinates, groups and DP point
# its mesh's and pl_hybrid_dp_after, Lab 11's update its ZeRO-1. They ship
# compiled, with the references (labs/reference/).
HANDOUT_HIDE ?= labs/02_memory/lab02_kernels.cu labs/03_reduction/lab03_kernels.cu \
                core/parallel/tp.c core/parallel/pipeline.c core/parallel/mesh.c \
                core/parallel/hybrid.c core/parallel/zero.c
# HANDOUT_CUDA=0: no CUDA build of the references even where nvcc is found
HANDOUT_CUDA ?= $(if $(HAVE_NVCC),1,0)

## handout: the student copy: build/handout/paralab-handout/ and its .tar.gz, without the solution sources (compiled in: labs/reference/), the tests or the benchmarks
handout: sim
	@HANDOUT_HIDE='$(HANDOUT_HIDE)' HANDOUT_CUDA='$(HANDOUT_CUDA)' CUDA_HOME='$(CUDA_HOME)' NVCC='$(NVCC)' \
	 JOBS='$(JOBS)' scripts/handout.sh
# handout-omit-end

## clean: remove build/
clean:
	rm -rf build

## help: this list
help:
	@echo "paralab make targets:"
	@sed -n 's/^## \([a-z0-9-]*\): \(.*\)/  \1|\2/p' $(MAKEFILE_LIST) | column -t -s'|'
	@echo "Variables: CUDA=1 (build the CUDA variant), ARGS=... (demo arguments), JOBS=N"
