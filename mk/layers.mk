# mk/layers.mk — the layers, lowest first, and what each one may include.
# The one place the rule is written: mk/build.mk compiles every file with the
# include folders (-I) of the layers it may see and no others, and
# tests/layers.sh (make test) checks every #include of every source against
# the same table. docs/architecture.md, "Layers the build enforces", says why.
#
#   LAYER_FILES        which layer a file is in: the first pattern (make's %,
#                      one per pattern) that matches its path
#   LAYER_<name>_INC   the folders its headers are included from
#   LAYER_<name>_SEES  the layers its files may include (itself first)
#
# An arrow only points down. The seam (core/device_sim.c) is the one core
# file that may see the emulator; the dialect header (simt/kernel.h) is the
# one simt file a kernel may include. Labs' *.cu files are lab code (their
# kernels sit beside the host code that launches them, PL_TODO() and the
# lab's header): they see everything, as the labs do.

LAYERS := cudart dialect simt kernels core seam viz harness labs tests bench tools fuzz

LAYER_FILES := \
    core/simt/cudart/%=cudart \
    core/simt/include/simt/kernel.h=dialect \
    core/simt/%=simt \
    core/kernels/%=kernels \
    core/device_sim.c=seam \
    core/%=core \
    viz/%=viz \
    labs/harness/%=harness \
    labs/registry.h=harness \
    labs/%=labs \
    tests/%=tests \
    bench/%=bench \
    tools/%=tools \
    fuzz/%=fuzz

# the CUDA runtime's API: the simulated one, or NVIDIA's (the CUDA variant
# sets LAYER_cudart_INC to its headers)
LAYER_cudart_INC ?= core/simt/cudart
LAYER_cudart_SEES := cudart
# the CUDA dialect every kernel file includes (simt/kernel.h)
LAYER_dialect_INC := core/simt/include
LAYER_dialect_SEES := dialect simt cudart
# the simulated GPU: knows nothing of paralab
LAYER_simt_INC := core/simt/include
LAYER_simt_SEES := simt dialect cudart
# paralab's kernels and the headers that declare their launchers
LAYER_kernels_INC := core/kernels/include
LAYER_kernels_SEES := kernels dialect cudart
# paralab's runtime (world, comm, trace, steps, model, ...)
LAYER_core_INC := core/include
LAYER_core_SEES := core kernels cudart
# the device seam of the simulated build: core that may ask the emulator
LAYER_seam_INC :=
LAYER_seam_SEES := seam core kernels simt cudart
# the visualiser: a consumer of core
LAYER_viz_INC := viz/include
LAYER_viz_SEES := viz core kernels cudart
# the one lab harness (its headers included as "harness/....h"), and the
# type of a lab's entry it runs (pl_lab, labs/registry.h; the list of them,
# labs/registry.c, is lab code: only labcheck links it)
LAYER_harness_INC := labs
LAYER_harness_SEES := harness viz core kernels cudart
# the labs, the tests and the benchmarks see everything
LAYER_labs_INC := labs
LAYER_labs_SEES := labs harness viz core kernels seam simt dialect cudart
LAYER_tests_INC :=
LAYER_tests_SEES := tests labs harness viz core kernels seam simt dialect cudart
LAYER_bench_INC :=
LAYER_bench_SEES := bench labs harness viz core kernels seam simt dialect cudart
# paralab-train and paralab-viz
LAYER_tools_INC :=
LAYER_tools_SEES := tools viz core kernels cudart
# the fuzz targets (fuzz/*.c, docs/fuzzing.md): the readers of the
# visualiser and core they feed
LAYER_fuzz_INC :=
LAYER_fuzz_SEES := fuzz viz core kernels cudart

# $(call layer_of,path): the layer of a file (empty: in none)
layer_of = $(firstword $(foreach r,$(LAYER_FILES),$(if $(filter $(firstword $(subst =, ,$(r))),$(1)),$(lastword $(subst =, ,$(r))))))
layer_uniq = $(if $(1),$(firstword $(1)) $(call layer_uniq,$(filter-out $(firstword $(1)),$(1))))
# $(call layer_inc,layer): the -I flags of the folders that layer may see
layer_inc = $(addprefix -I,$(call layer_uniq,$(foreach s,$(LAYER_$(1)_SEES),$(LAYER_$(s)_INC))))
