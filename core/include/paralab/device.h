/*
 * paralab/device.h — is there a device to run on? For the programs' main
 * functions, before any other CUDA call.
 */
#ifndef PARALAB_DEVICE_H
#define PARALAB_DEVICE_H

/* NULL when at least one device answers; otherwise a sentence saying why
 * not and what to do (a simulated GPU that could not start because of an
 * environment variable, PARALAB_SIM_DEVICES=0, or no CUDA driver/GPU: use
 * the simulated build). `program` names the binary in the advice. */
const char *pl_device_problem(const char *program);

/* "modeled" in the simulated build (times come from the modeled clock),
 * "measured" in the CUDA build (CUDA events on the GPU). */
const char *pl_clock_name(void);

/* The roofline of device `device`: peak non-tensor FP32 FLOP/s and peak
 * memory bytes/s.
 *   Simulated: the preset's datasheet numbers (simtCurrentPreset()).
 *   Real: from the device's attributes: SMs x FP32 lanes per SM x 2 (a
 *   multiply-add is 2 FLOP) x the peak SM clock; 2 (double data rate) x
 *   the memory clock x the bus width in bytes. FP32 lanes per SM: 64 on
 *   compute capability 6.0, 7.x and 8.0, 128 on the others from 6.1 on
 *   (CUDA C++ Programming Guide, "Arithmetic Instructions": 32-bit
 *   floating-point add, multiply, multiply-add per clock per SM). An H200:
 *   132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s, 2 x 3.2 GHz x 768 B = 4.9
 *   TB/s (datasheet: 67 and 4.8).
 * Returns 0, or the cudaError_t of the failing query. */
int pl_device_peaks(int device, double *fp32_flops, double *memory_bw);

/* The simulator's report of the last kernel fault on the current device:
 * the kernel, its file:line, the block and thread, and what went wrong
 * (an out-of-bounds access with the allocation it missed, a divergent
 * __syncthreads(), a shuffle whose mask leaves out lanes...); "" when
 * there was none, and always "" in the CUDA build (a real GPU says only
 * its error code). For the checks' and labs' failure messages. */
const char *pl_fault_report(void);

#endif
