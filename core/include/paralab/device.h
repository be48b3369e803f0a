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

#endif
