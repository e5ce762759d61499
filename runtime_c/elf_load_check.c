/* File: runtime_c/elf_load_check.c
 *
 * kiln_elf_check_load_code (elf_load_check.h): refuses, from the file's
 * bytes, an ELF shared object whose dlopen or dlclose would run code of its
 * own (constructors, destructors, IFUNC resolvers) or pull in libraries from
 * places of its choosing (a DT_NEEDED path, DT_RPATH/DT_RUNPATH, audit and
 * filter libraries).
 *
 * The dynamic linker does not read section headers: it maps the PT_LOAD
 * segments and reads the dynamic array at PT_DYNAMIC's p_vaddr. So does this
 * check: every address (the dynamic array, DT_STRTAB, DT_SYMTAB, DT_RELA,
 * DT_JMPREL) is turned into a file offset through the PT_LOAD segment that
 * maps it, and must lie in that segment's file bytes. The segments must be
 * in ascending address order and must not overlap (as every linker writes
 * them), so an address has one meaning. The .init_array / .fini_array /
 * .preinit_array sections are refused too, for a clearer message when the
 * section headers say it first.
 */
#include "runtime_c/elf_load_check.h"

#include <stdint.h>
#include <string.h>

#include "kiln/status.h"

#define KILN_PT_LOAD 1u
#define KILN_PT_DYNAMIC 2u
#define KILN_PHDR_SIZE 56u
#define KILN_SHDR_SIZE 64u
#define KILN_DYN_SIZE 16u
#define KILN_RELA_SIZE 24u
#define KILN_SYM_SIZE 24u
#define KILN_MAX_SEGMENTS 256u

#define KILN_DT_NULL 0
#define KILN_DT_NEEDED 1
#define KILN_DT_PLTRELSZ 2
#define KILN_DT_STRTAB 5
#define KILN_DT_SYMTAB 6
#define KILN_DT_RELA 7
#define KILN_DT_RELASZ 8
#define KILN_DT_STRSZ 10
#define KILN_DT_INIT 12
#define KILN_DT_FINI 13
#define KILN_DT_RPATH 15
#define KILN_DT_REL 17
#define KILN_DT_JMPREL 23
#define KILN_DT_INIT_ARRAY 25
#define KILN_DT_FINI_ARRAY 26
#define KILN_DT_INIT_ARRAYSZ 27
#define KILN_DT_FINI_ARRAYSZ 28
#define KILN_DT_RUNPATH 29
#define KILN_DT_PREINIT_ARRAY 32
#define KILN_DT_PREINIT_ARRAYSZ 33
#define KILN_DT_DEPAUDIT 0x6ffffefbLL
#define KILN_DT_AUDIT 0x6ffffefcLL
#define KILN_DT_AUXILIARY 0x7ffffffdLL
#define KILN_DT_FILTER 0x7fffffffLL

#define KILN_SHT_DYNSYM 11u
#define KILN_SHT_INIT_ARRAY 14u
#define KILN_SHT_FINI_ARRAY 15u
#define KILN_SHT_PREINIT_ARRAY 16u
#define KILN_STT_GNU_IFUNC 10u

#define KILN_EM_X86_64 62u
#define KILN_EM_AARCH64 183u
#define KILN_R_X86_64_IRELATIVE 37u
#define KILN_R_AARCH64_IRELATIVE 1032u

static inline uint16_t rd16(const uint8_t* p) {
  return (uint16_t)((uint16_t)p[0] | (uint16_t)((uint16_t)p[1] << 8));
}
static inline uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t rd64(const uint8_t* p) {
  return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

typedef struct {
  uint64_t vaddr, offset, filesz, memsz;
} Segment;

typedef struct {
  const uint8_t* image;
  uint64_t size;
  Segment seg[KILN_MAX_SEGMENTS];
  uint32_t num_seg;
} Elf;

static const char kWhy[] =
    "; kiln links artifacts without constructors (nothing of an artifact runs before it is "
    "validated), so this library was not linked by this kiln or was altered (an artifact "
    "compiled by a kiln older than this check must be recompiled)";

/* The file offset of [vaddr, vaddr + n) in one segment's file bytes, or 0
 * with *ok = 0. */
static uint64_t to_offset(const Elf* e, uint64_t vaddr, uint64_t n, int* ok) {
  *ok = 0;
  for (uint32_t i = 0; i < e->num_seg; ++i) {
    const Segment* s = &e->seg[i];
    if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz) continue;
    uint64_t delta = vaddr - s->vaddr;
    if (n > s->filesz - delta) return 0;
    *ok = 1;
    return s->offset + delta;
  }
  return 0;
}

static const char* machine_name(uint16_t m) {
  switch (m) {
    case KILN_EM_X86_64: return "x86_64";
    case KILN_EM_AARCH64: return "aarch64";
    case 3: return "i386";
    case 40: return "arm";
    case 243: return "riscv";
    case 21: return "ppc64";
    default: return "another machine";
  }
}

/* This process's ELF machine, 0 when unknown (not checked). */
static uint16_t host_machine(void) {
#if defined(__x86_64__)
  return KILN_EM_X86_64;
#elif defined(__aarch64__)
  return KILN_EM_AARCH64;
#else
  return 0;
#endif
}

/* Relocations [off, off + size): an IRELATIVE one, or one naming a defined
 * IFUNC symbol, runs a resolver of the library at dlopen. */
static KilnStatus* check_relocations(const Elf* e, const char* table, uint64_t vaddr,
                                     uint64_t size, uint32_t irelative, uint64_t symtab,
                                     int have_symtab) {
  if (size == 0) return NULL;
  int ok = 0;
  uint64_t off = to_offset(e, vaddr, size, &ok);
  if (!ok) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: %s (address 0x%llx, %llu bytes) is not in the file bytes of "
                              "a PT_LOAD segment",
                              table, (unsigned long long)vaddr, (unsigned long long)size);
  }
  for (uint64_t i = 0; i + KILN_RELA_SIZE <= size; i += KILN_RELA_SIZE) {
    uint64_t info = rd64(e->image + off + i + 8);
    uint32_t type = (uint32_t)(info & 0xffffffffu);
    uint64_t sym = info >> 32;
    if (irelative != 0 && type == irelative) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "refusing to load: the library runs code when it is loaded (an "
                                "IFUNC resolver: IRELATIVE relocation in %s)%s",
                                table, kWhy);
    }
    if (sym == 0 || !have_symtab) continue;
    if (sym > (UINT64_MAX - symtab) / KILN_SYM_SIZE) {
      return kiln_status_create(KILN_DATA_LOSS, "ELF: %s names symbol %llu, out of range", table,
                                (unsigned long long)sym);
    }
    int sym_ok = 0;
    uint64_t so = to_offset(e, symtab + sym * KILN_SYM_SIZE, KILN_SYM_SIZE, &sym_ok);
    if (!sym_ok) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: %s names symbol %llu, which is not in the file", table,
                                (unsigned long long)sym);
    }
    const uint8_t* s = e->image + so;
    if ((s[4] & 0xfu) == KILN_STT_GNU_IFUNC && rd16(s + 6) != 0) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "refusing to load: the library runs code when it is loaded (an "
                                "IFUNC resolver: %s refers to its own STT_GNU_IFUNC symbol %llu)%s",
                                table, (unsigned long long)sym, kWhy);
    }
  }
  return NULL;
}

KilnStatus* kiln_elf_check_load_code(const uint8_t* image, uint64_t size) {
  if (image == NULL || size < 64) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: the file is shorter than an ELF header");
  }
  Elf e;
  e.image = image;
  e.size = size;
  e.num_seg = 0;

  const uint16_t machine = rd16(image + 18);
  const uint16_t host = host_machine();
  if (host != 0 && machine != host) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "the library is machine code for %s (ELF machine %u), but this "
                              "process runs on %s: compile the model for this machine",
                              machine_name(machine), (unsigned)machine, machine_name(host));
  }

  /* Section headers (optional for the dynamic linker; checked when present). */
  const uint64_t shoff = rd64(image + 40);
  uint64_t shnum = rd16(image + 60);
  if (shoff != 0 && rd16(image + 58) == KILN_SHDR_SIZE && shoff <= size &&
      (size - shoff) / KILN_SHDR_SIZE >= 1) {
    if (shnum == 0) shnum = rd64(image + shoff + 32);
    if (shnum <= (size - shoff) / KILN_SHDR_SIZE) {
      for (uint64_t i = 0; i < shnum; ++i) {
        const uint8_t* sh = image + shoff + i * KILN_SHDR_SIZE;
        uint32_t type = rd32(sh + 4);
        uint64_t sh_size = rd64(sh + 32);
        const char* what = type == KILN_SHT_INIT_ARRAY   ? ".init_array (constructors)"
                           : type == KILN_SHT_FINI_ARRAY ? ".fini_array (destructors)"
                           : type == KILN_SHT_PREINIT_ARRAY ? ".preinit_array"
                                                            : NULL;
        if (what != NULL && sh_size > 0) {
          return kiln_status_create(KILN_DATA_LOSS,
                                    "refusing to load: the library runs code when it is loaded or "
                                    "unloaded (section %llu, %s, %llu entries)%s",
                                    (unsigned long long)i, what,
                                    (unsigned long long)(sh_size / 8), kWhy);
        }
      }
    }
  }

  /* Program headers. */
  const uint64_t phoff = rd64(image + 32);
  const uint64_t phnum = rd16(image + 56);
  if (rd16(image + 54) != KILN_PHDR_SIZE || phnum == 0 || phnum == 0xffffu ||
      phoff > size || phnum > (size - phoff) / KILN_PHDR_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: no usable program header table (offset %llu, %llu entries)",
                              (unsigned long long)phoff, (unsigned long long)phnum);
  }
  uint64_t dyn_vaddr = 0, dyn_size = 0;
  int have_dynamic = 0;
  for (uint64_t i = 0; i < phnum; ++i) {
    const uint8_t* ph = image + phoff + i * KILN_PHDR_SIZE;
    uint32_t type = rd32(ph);
    if (type == KILN_PT_LOAD) {
      Segment s;
      s.offset = rd64(ph + 8);
      s.vaddr = rd64(ph + 16);
      s.filesz = rd64(ph + 32);
      s.memsz = rd64(ph + 40);
      if (s.offset > size || s.filesz > size - s.offset || s.memsz < s.filesz ||
          s.memsz > UINT64_MAX - s.vaddr) {
        return kiln_status_create(KILN_DATA_LOSS,
                                  "ELF: PT_LOAD segment %llu (offset %llu, file size %llu) "
                                  "exceeds the file (%llu bytes) or is malformed",
                                  (unsigned long long)i, (unsigned long long)s.offset,
                                  (unsigned long long)s.filesz, (unsigned long long)size);
      }
      if (e.num_seg > 0) {
        const Segment* prev = &e.seg[e.num_seg - 1];
        if (s.vaddr < prev->vaddr + prev->memsz) {
          return kiln_status_create(KILN_DATA_LOSS,
                                    "ELF: PT_LOAD segment %llu (address 0x%llx) overlaps or "
                                    "precedes the one before it",
                                    (unsigned long long)i, (unsigned long long)s.vaddr);
        }
      }
      if (e.num_seg == KILN_MAX_SEGMENTS) {
        return kiln_status_create(KILN_DATA_LOSS, "ELF: more than %u PT_LOAD segments",
                                  KILN_MAX_SEGMENTS);
      }
      e.seg[e.num_seg++] = s;
    } else if (type == KILN_PT_DYNAMIC) {
      if (have_dynamic) {
        return kiln_status_create(KILN_DATA_LOSS, "ELF: more than one PT_DYNAMIC");
      }
      have_dynamic = 1;
      dyn_vaddr = rd64(ph + 16);
      dyn_size = rd64(ph + 32);
    }
  }
  if (!have_dynamic) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: no PT_DYNAMIC: not a shared library");
  }
  int ok = 0;
  const uint64_t dyn_off = to_offset(&e, dyn_vaddr, dyn_size, &ok);
  if (!ok) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: the dynamic section (address 0x%llx, %llu bytes) is not in "
                              "the file bytes of a PT_LOAD segment",
                              (unsigned long long)dyn_vaddr, (unsigned long long)dyn_size);
  }

  uint64_t strtab = 0, strsz = 0, symtab = 0, rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0;
  int have_strtab = 0, have_strsz = 0, have_symtab = 0;
  uint64_t init_arraysz = 0, fini_arraysz = 0, preinit_arraysz = 0;
  int init_array = 0, fini_array = 0, preinit_array = 0;
  int have_init_arraysz = 0, have_fini_arraysz = 0, have_preinit_arraysz = 0;
  for (uint64_t i = 0; i + KILN_DYN_SIZE <= dyn_size; i += KILN_DYN_SIZE) {
    const int64_t tag = (int64_t)rd64(image + dyn_off + i);
    const uint64_t val = rd64(image + dyn_off + i + 8);
    if (tag == KILN_DT_NULL) break;
    const char* refused = NULL;
    switch (tag) {
      case KILN_DT_INIT: refused = "DT_INIT, an initialisation function"; break;
      case KILN_DT_FINI: refused = "DT_FINI, a termination function"; break;
      case KILN_DT_RPATH: refused = "DT_RPATH, its own library search path"; break;
      case KILN_DT_RUNPATH: refused = "DT_RUNPATH, its own library search path"; break;
      case KILN_DT_AUDIT:
      case KILN_DT_DEPAUDIT: refused = "DT_AUDIT, an audit library"; break;
      case KILN_DT_FILTER:
      case KILN_DT_AUXILIARY: refused = "DT_FILTER, a filter library"; break;
      case KILN_DT_REL: refused = "DT_REL relocations (not used on this machine)"; break;
      case KILN_DT_STRTAB: strtab = val; have_strtab = 1; break;
      case KILN_DT_STRSZ: strsz = val; have_strsz = 1; break;
      case KILN_DT_SYMTAB: symtab = val; have_symtab = 1; break;
      case KILN_DT_RELA: rela = val; break;
      case KILN_DT_RELASZ: relasz = val; break;
      case KILN_DT_JMPREL: jmprel = val; break;
      case KILN_DT_PLTRELSZ: pltrelsz = val; break;
      case KILN_DT_INIT_ARRAY: init_array = 1; break;
      case KILN_DT_FINI_ARRAY: fini_array = 1; break;
      case KILN_DT_PREINIT_ARRAY: preinit_array = 1; break;
      case KILN_DT_INIT_ARRAYSZ: init_arraysz = val; have_init_arraysz = 1; break;
      case KILN_DT_FINI_ARRAYSZ: fini_arraysz = val; have_fini_arraysz = 1; break;
      case KILN_DT_PREINIT_ARRAYSZ: preinit_arraysz = val; have_preinit_arraysz = 1; break;
      default: break;
    }
    if (refused != NULL) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "refusing to load: the library has %s (dynamic tag 0x%llx, value "
                                "0x%llx)%s",
                                refused, (unsigned long long)tag, (unsigned long long)val, kWhy);
    }
  }
  /* An array tag with no size tag would make the dynamic linker read a size
   * that is not there: refused as well as a non-empty array. */
  if (init_array != have_init_arraysz || init_arraysz != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "refusing to load: the library runs code when it is loaded "
                              "(DT_INIT_ARRAY: %llu constructors)%s",
                              (unsigned long long)(init_arraysz / 8), kWhy);
  }
  if (fini_array != have_fini_arraysz || fini_arraysz != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "refusing to load: the library runs code when it is unloaded "
                              "(DT_FINI_ARRAY: %llu destructors)%s",
                              (unsigned long long)(fini_arraysz / 8), kWhy);
  }
  if (preinit_array || have_preinit_arraysz) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "refusing to load: the library has DT_PREINIT_ARRAY (%llu "
                              "functions)%s",
                              (unsigned long long)(preinit_arraysz / 8), kWhy);
  }

  /* DT_NEEDED: names only (searched in the system's library path), never a
   * path the library chooses. */
  if (have_strtab != have_strsz) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: DT_STRTAB without DT_STRSZ (or the reverse)");
  }
  uint64_t str_off = 0;
  if (have_strtab) {
    str_off = to_offset(&e, strtab, strsz, &ok);
    if (!ok) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: the dynamic string table (address 0x%llx, %llu bytes) is "
                                "not in the file bytes of a PT_LOAD segment",
                                (unsigned long long)strtab, (unsigned long long)strsz);
    }
  }
  for (uint64_t i = 0; i + KILN_DYN_SIZE <= dyn_size; i += KILN_DYN_SIZE) {
    const int64_t tag = (int64_t)rd64(image + dyn_off + i);
    const uint64_t val = rd64(image + dyn_off + i + 8);
    if (tag == KILN_DT_NULL) break;
    if (tag != KILN_DT_NEEDED) continue;
    if (!have_strtab || val >= strsz) {
      return kiln_status_create(KILN_DATA_LOSS, "ELF: DT_NEEDED name offset %llu is out of range",
                                (unsigned long long)val);
    }
    const char* name = (const char*)image + str_off + val;
    const size_t max = (size_t)(strsz - val);
    const void* end = memchr(name, '\0', max);
    if (end == NULL) {
      return kiln_status_create(KILN_DATA_LOSS, "ELF: DT_NEEDED name is not terminated");
    }
    if (memchr(name, '/', (size_t)((const char*)end - name)) != NULL) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "refusing to load: the library needs '%.200s', a path of its "
                                "choosing (its code would run when it is loaded)%s",
                                name, kWhy);
    }
  }

  /* IFUNC resolvers run at relocation time, inside dlopen. */
  const uint32_t irelative = machine == KILN_EM_X86_64    ? KILN_R_X86_64_IRELATIVE
                             : machine == KILN_EM_AARCH64 ? KILN_R_AARCH64_IRELATIVE
                                                          : 0u;
  KilnStatus* st =
      check_relocations(&e, "DT_RELA", rela, relasz, irelative, symtab, have_symtab);
  if (st == NULL) {
    st = check_relocations(&e, "DT_JMPREL", jmprel, pltrelsz, irelative, symtab, have_symtab);
  }
  if (st != NULL) return st;

  /* A defined IFUNC symbol would run its resolver when dlsym looks it up. */
  if (have_symtab && shoff != 0 && rd16(image + 58) == KILN_SHDR_SIZE && shoff <= size &&
      shnum <= (size - shoff) / KILN_SHDR_SIZE) {
    for (uint64_t i = 0; i < shnum; ++i) {
      const uint8_t* sh = image + shoff + i * KILN_SHDR_SIZE;
      if (rd32(sh + 4) != KILN_SHT_DYNSYM) continue;
      uint64_t off = rd64(sh + 24), n = rd64(sh + 32);
      if (off > size || n > size - off) {
        return kiln_status_create(KILN_DATA_LOSS, "ELF: .dynsym exceeds the file");
      }
      for (uint64_t k = KILN_SYM_SIZE; k + KILN_SYM_SIZE <= n; k += KILN_SYM_SIZE) {
        const uint8_t* s = image + off + k;
        if ((s[4] & 0xfu) == KILN_STT_GNU_IFUNC && rd16(s + 6) != 0) {
          return kiln_status_create(KILN_DATA_LOSS,
                                    "refusing to load: the library defines an IFUNC symbol "
                                    "(.dynsym entry %llu), whose resolver runs when it is "
                                    "looked up%s",
                                    (unsigned long long)(k / KILN_SYM_SIZE), kWhy);
        }
      }
    }
  }
  return NULL;
}
