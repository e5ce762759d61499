/* File: runtime_c/elf_load_check.h  (internal to runtime_c)
 *
 * What dlopen would run, found in the file's bytes before dlopen: a kiln
 * artifact is linked without start files (codegen_llvm/export.cc,
 * -nostartfiles), so loading and unloading it runs none of its code. The
 * loader (loader.c) refuses a library that would, before it maps it:
 *
 *   KilnStatus* st = kiln_elf_check_load_code(image, size);  // NULL: nothing runs at dlopen
 *
 * Refused (each named in the message): DT_INIT, DT_FINI, a non-empty
 * DT_INIT_ARRAY / DT_FINI_ARRAY / DT_PREINIT_ARRAY (and .init_array,
 * .fini_array, .preinit_array sections), IFUNC resolvers (IRELATIVE
 * relocations, defined STT_GNU_IFUNC symbols), DT_NEEDED names holding a '/',
 * DT_RPATH / DT_RUNPATH, DT_AUDIT / DT_DEPAUDIT, DT_FILTER / DT_AUXILIARY,
 * and an ELF machine other than this process's. The dynamic section is read
 * where the dynamic linker reads it (p_vaddr through the PT_LOAD segments).
 * Every offset is bounds-checked; malformed: KILN_DATA_LOSS.
 * The message does not name the file (the caller prefixes it).
 */
#ifndef KILN_RUNTIME_C_ELF_LOAD_CHECK_H_
#define KILN_RUNTIME_C_ELF_LOAD_CHECK_H_

#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_ELF_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_ELF_HIDDEN
#endif

/* `image` is the whole file (an ELF64 little-endian ET_DYN already checked by
 * kiln_elf_find_symbol). NULL when dlopen would run none of its code. */
KilnStatus* kiln_elf_check_load_code(const uint8_t* image, uint64_t size) KILN_ELF_HIDDEN;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_ELF_LOAD_CHECK_H_ */
