/* File: runtime_c/cpu_features.c
 *
 * kiln_cpu_feature_supported (cpu_features.h): one table row per LLVM
 * feature name, saying where cpuid reports it and which register state
 * (XCR0 bits) the OS must save for it to be usable: AVX needs the SSE and
 * AVX state (bits 1-2), AVX-512 the opmask and ZMM state too (bits 5-7), AMX
 * the tile state (bits 17-18). Names LLVM uses that are not here (tuning
 * flags, "64bit", "evex512", ...) are reported unknown and are not checked.
 */
#include "runtime_c/cpu_features.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#define KILN_CPU_X86 1
#else
#define KILN_CPU_X86 0
#endif

enum { EAX = 0, EBX = 1, ECX = 2, EDX = 3 };

#define XCR0_AVX UINT64_C(0x6)
#define XCR0_AVX512 UINT64_C(0xe6)
#define XCR0_AMX UINT64_C(0x60006)

typedef struct {
  const char* name; /* LLVM's -mattr name */
  uint32_t leaf, subleaf;
  uint8_t reg, bit;
  uint64_t xcr0; /* state the OS must enable (0: none) */
} Feature;

static const Feature kFeatures[] = {
    {"cmov", 1, 0, EDX, 15, 0},
    {"cx8", 1, 0, EDX, 8, 0},
    {"mmx", 1, 0, EDX, 23, 0},
    {"fxsr", 1, 0, EDX, 24, 0},
    {"sse", 1, 0, EDX, 25, 0},
    {"sse2", 1, 0, EDX, 26, 0},
    {"sse3", 1, 0, ECX, 0, 0},
    {"pclmul", 1, 0, ECX, 1, 0},
    {"ssse3", 1, 0, ECX, 9, 0},
    {"fma", 1, 0, ECX, 12, XCR0_AVX},
    {"cx16", 1, 0, ECX, 13, 0},
    {"sse4.1", 1, 0, ECX, 19, 0},
    {"sse4.2", 1, 0, ECX, 20, 0},
    {"movbe", 1, 0, ECX, 22, 0},
    {"popcnt", 1, 0, ECX, 23, 0},
    {"aes", 1, 0, ECX, 25, 0},
    {"xsave", 1, 0, ECX, 26, 0},
    {"avx", 1, 0, ECX, 28, XCR0_AVX},
    {"f16c", 1, 0, ECX, 29, XCR0_AVX},
    {"rdrnd", 1, 0, ECX, 30, 0},
    {"fsgsbase", 7, 0, EBX, 0, 0},
    {"bmi", 7, 0, EBX, 3, 0},
    {"avx2", 7, 0, EBX, 5, XCR0_AVX},
    {"bmi2", 7, 0, EBX, 8, 0},
    {"avx512f", 7, 0, EBX, 16, XCR0_AVX512},
    {"avx512dq", 7, 0, EBX, 17, XCR0_AVX512},
    {"rdseed", 7, 0, EBX, 18, 0},
    {"adx", 7, 0, EBX, 19, 0},
    {"avx512ifma", 7, 0, EBX, 21, XCR0_AVX512},
    {"clflushopt", 7, 0, EBX, 23, 0},
    {"clwb", 7, 0, EBX, 24, 0},
    {"avx512cd", 7, 0, EBX, 28, XCR0_AVX512},
    {"sha", 7, 0, EBX, 29, 0},
    {"avx512bw", 7, 0, EBX, 30, XCR0_AVX512},
    {"avx512vl", 7, 0, EBX, 31, XCR0_AVX512},
    {"avx512vbmi", 7, 0, ECX, 1, XCR0_AVX512},
    {"avx512vbmi2", 7, 0, ECX, 6, XCR0_AVX512},
    {"gfni", 7, 0, ECX, 8, 0},
    {"vaes", 7, 0, ECX, 9, XCR0_AVX},
    {"vpclmulqdq", 7, 0, ECX, 10, XCR0_AVX},
    {"avx512vnni", 7, 0, ECX, 11, XCR0_AVX512},
    {"avx512bitalg", 7, 0, ECX, 12, XCR0_AVX512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, XCR0_AVX512},
    {"avx512vp2intersect", 7, 0, EDX, 8, XCR0_AVX512},
    {"amx-bf16", 7, 0, EDX, 22, XCR0_AMX},
    {"avx512fp16", 7, 0, EDX, 23, XCR0_AVX512},
    {"amx-tile", 7, 0, EDX, 24, XCR0_AMX},
    {"amx-int8", 7, 0, EDX, 25, XCR0_AMX},
    {"avxvnni", 7, 1, EAX, 4, XCR0_AVX},
    {"avx512bf16", 7, 1, EAX, 5, XCR0_AVX512},
    {"sahf", 0x80000001u, 0, ECX, 0, 0},
    {"lzcnt", 0x80000001u, 0, ECX, 5, 0},
    {"sse4a", 0x80000001u, 0, ECX, 6, 0},
    {"prfchw", 0x80000001u, 0, ECX, 8, 0},
    {"xop", 0x80000001u, 0, ECX, 11, XCR0_AVX},
    {"fma4", 0x80000001u, 0, ECX, 16, XCR0_AVX},
    {"tbm", 0x80000001u, 0, ECX, 21, 0},
};

#define KILN_NUM_FEATURES ((int)(sizeof kFeatures / sizeof kFeatures[0]))

const char* kiln_cpu_feature_name(int index) {
  return (index >= 0 && index < KILN_NUM_FEATURES) ? kFeatures[index].name : NULL;
}

int kiln_cpu_features_checked(void) { return KILN_CPU_X86; }

#if KILN_CPU_X86
/* XCR0 (the register state the OS saves), 0 without OSXSAVE. */
static uint64_t read_xcr0(void) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0) return 0;
  uint32_t lo = 0, hi = 0;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static int probe(const Feature* f) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f->leaf, f->subleaf, &r[EAX], &r[EBX], &r[ECX], &r[EDX])) return 0;
  if ((r[f->reg] & (1u << f->bit)) == 0) return 0;
  if (f->xcr0 != 0 && (read_xcr0() & f->xcr0) != f->xcr0) return 0;
  return 1;
}
#endif

#if KILN_CPU_X86
/* Probed once per process (cpuid traps to the hypervisor in a VM: about a
 * microsecond each, and an artifact lists about a hundred names). */
static pthread_once_t g_probe_once = PTHREAD_ONCE_INIT;
static unsigned char g_supported[sizeof kFeatures / sizeof kFeatures[0]];

static void probe_all(void) {
  for (int i = 0; i < KILN_NUM_FEATURES; ++i) g_supported[i] = (unsigned char)probe(&kFeatures[i]);
}
#endif

int kiln_cpu_feature_supported(const char* llvm_name) {
  if (llvm_name == NULL) return -1;
#if KILN_CPU_X86
  pthread_once(&g_probe_once, probe_all);
  for (int i = 0; i < KILN_NUM_FEATURES; ++i) {
    if (strcmp(kFeatures[i].name, llvm_name) == 0) return g_supported[i];
  }
#endif
  /* Not x86-64: features are recorded in the artifact but not checked here
   * (no portable probe; an AArch64 port would read HWCAP with getauxval). */
  return -1;
}
