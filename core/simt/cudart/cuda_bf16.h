/*
 * cuda_bf16.h — refused in the simulated build: bfloat16 (__nv_bfloat16,
 * ...) is not simulated (see cuda_fp16.h).
 */
#error                                                                                             \
    "cuda_bf16.h (bfloat16: __nv_bfloat16) is not supported by paralab's simulated GPU (build/sim): use float"
