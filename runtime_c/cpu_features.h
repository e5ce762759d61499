/* File: runtime_c/cpu_features.h  (internal to runtime_c)
 *
 * Which instruction-set features this CPU (and its OS) provides, by LLVM's
 * feature names ("avx2", "avx512f", "fma", "sse4.2", ...): what the loader
 * checks META's `cpu_features` against (docs/artifact.md), so an artifact
 * compiled for AVX-512 is refused on an AVX2 machine with a message instead
 * of dying of SIGILL in its first kernel.
 *
 *   if (kiln_cpu_feature_supported("avx512f") == 0) ... refuse ...
 *
 * x86-64 only (cpuid, and xgetbv for the register state the OS saves); on
 * other machines every name is "unknown" and nothing is checked.
 */
#ifndef KILN_RUNTIME_C_CPU_FEATURES_H_
#define KILN_RUNTIME_C_CPU_FEATURES_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_CPU_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_CPU_HIDDEN
#endif

/* 1: this CPU has the feature; 0: it lacks it; -1: a name this runtime
 * cannot probe (a tuning flag such as "fast-gather", a feature it does not
 * know, or any name on a machine other than x86-64). Thread-safe. */
int kiln_cpu_feature_supported(const char* llvm_name) KILN_CPU_HIDDEN;

/* The `index`th feature name this runtime can probe, NULL past the end
 * (for tests and messages). */
const char* kiln_cpu_feature_name(int index) KILN_CPU_HIDDEN;

/* Whether the runtime checks features at all on this machine (x86-64). */
int kiln_cpu_features_checked(void) KILN_CPU_HIDDEN;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_CPU_FEATURES_H_ */
