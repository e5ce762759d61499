/* File: runtime_c/elf.c
 *
 * kiln_elf_find_symbol (kiln/artifact_writer.h): finds an exported symbol in
 * the bytes of an ELF64 little-endian shared object (ET_DYN) held in memory,
 * without trusting any of them.
 *
 *  - The section header table gives the symbol tables: SHT_DYNSYM first (what
 *    dlsym sees), then SHT_SYMTAB when the name is not found there. Each one's
 *    sh_link names its string table (SHT_STRTAB).
 *  - A definition is a symbol with the name, binding GLOBAL/WEAK/GNU_UNIQUE,
 *    type NOTYPE/OBJECT/FUNC, and a section index other than SHN_UNDEF.
 *  - st_value is a virtual address. It becomes a file offset through the
 *    section st_shndx names (sh_offset + st_value - sh_addr) or, for a
 *    special index (SHN_ABS, SHN_XINDEX, ...), through the PT_LOAD program
 *    header whose file bytes hold it (p_offset + st_value - p_vaddr).
 *
 * Every offset, size, count, index and string is checked against the image
 * with overflow-safe arithmetic before it is read; fields are read with
 * memcpy (no alignment assumed) as little-endian. Extended numbering
 * (e_shnum == 0 or e_phnum == PN_XNUM, the real counts in section header 0)
 * is understood. Malformed: KILN_DATA_LOSS; absent: KILN_NOT_FOUND.
 */
#include <stdint.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"

/* ELF constants (the System V gABI; kept here so the parser does not depend
 * on the host's <elf.h>). */
#define KILN_ELF_EHDR_SIZE 64u
#define KILN_ELF_SHDR_SIZE 64u
#define KILN_ELF_PHDR_SIZE 56u
#define KILN_ELF_SYM_SIZE 24u
#define KILN_ELFCLASS64 2u
#define KILN_ELFDATA2LSB 1u
#define KILN_EV_CURRENT 1u
#define KILN_ET_DYN 3u
#define KILN_SHT_SYMTAB 2u
#define KILN_SHT_STRTAB 3u
#define KILN_SHT_NOBITS 8u
#define KILN_SHT_DYNSYM 11u
#define KILN_SHN_UNDEF 0u
#define KILN_SHN_LORESERVE 0xff00u
#define KILN_PN_XNUM 0xffffu
#define KILN_PT_LOAD 1u
#define KILN_STB_GLOBAL 1u
#define KILN_STB_WEAK 2u
#define KILN_STB_GNU_UNIQUE 10u
#define KILN_STT_NOTYPE 0u
#define KILN_STT_OBJECT 1u
#define KILN_STT_FUNC 2u

static inline uint16_t kiln_rd16(const uint8_t* p) {
  return (uint16_t)((uint16_t)p[0] | (uint16_t)((uint16_t)p[1] << 8));
}
static inline uint32_t kiln_rd32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kiln_rd64(const uint8_t* p) {
  return (uint64_t)kiln_rd32(p) | ((uint64_t)kiln_rd32(p + 4) << 32);
}

/* [offset, offset + size) inside [0, limit). */
static inline int kiln_in_bounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}
/* count entries of entry_size bytes at offset inside [0, limit). */
static inline int kiln_array_in_bounds(uint64_t offset, uint64_t count, uint64_t entry_size,
                                       uint64_t limit) {
  return offset <= limit && count <= (limit - offset) / entry_size;
}

typedef struct {
  const uint8_t* image;
  uint64_t size;
  uint64_t shoff;
  uint64_t shnum;
  const char* name;
  uint64_t name_length;
} KilnElf;

/* Section header `index` (< shnum, already bounds-checked as a table). */
static const uint8_t* kiln_elf_shdr(const KilnElf* elf, uint64_t index) {
  return elf->image + elf->shoff + index * KILN_ELF_SHDR_SIZE;
}

static const char* kiln_elf_table_name(uint32_t type) {
  return type == KILN_SHT_DYNSYM ? ".dynsym" : ".symtab";
}

/* Converts the symbol's address to a file offset through the PT_LOAD
 * segments. */
static KilnStatus* kiln_elf_offset_from_segments(const KilnElf* elf, uint64_t value,
                                                 uint64_t sym_size, uint64_t* offset) {
  const uint8_t* ehdr = elf->image;
  uint64_t phoff = kiln_rd64(ehdr + 32);
  uint64_t phnum = kiln_rd16(ehdr + 56);
  uint16_t phentsize = kiln_rd16(ehdr + 54);
  if (phnum == KILN_PN_XNUM) {
    if (elf->shnum == 0) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: e_phnum is PN_XNUM but there is no section header 0");
    }
    phnum = kiln_rd32(kiln_elf_shdr(elf, 0) + 44); /* sh_info */
  }
  if (phnum == 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: symbol '%s' (address 0x%llx) has no section and the file "
                              "has no program headers",
                              elf->name, (unsigned long long)value);
  }
  if (phentsize != KILN_ELF_PHDR_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: e_phentsize is %u, expected %u",
                              (unsigned)phentsize, (unsigned)KILN_ELF_PHDR_SIZE);
  }
  if (!kiln_array_in_bounds(phoff, phnum, KILN_ELF_PHDR_SIZE, elf->size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: program header table (offset %llu, %llu entries of %u "
                              "bytes) exceeds the file size %llu",
                              (unsigned long long)phoff, (unsigned long long)phnum,
                              (unsigned)KILN_ELF_PHDR_SIZE, (unsigned long long)elf->size);
  }
  for (uint64_t i = 0; i < phnum; ++i) {
    const uint8_t* ph = elf->image + phoff + i * KILN_ELF_PHDR_SIZE;
    if (kiln_rd32(ph) != KILN_PT_LOAD) continue;
    uint64_t p_offset = kiln_rd64(ph + 8);
    uint64_t p_vaddr = kiln_rd64(ph + 16);
    uint64_t p_filesz = kiln_rd64(ph + 32);
    if (value < p_vaddr || value - p_vaddr >= p_filesz) continue;
    uint64_t delta = value - p_vaddr;
    if (sym_size > p_filesz - delta) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: symbol '%s' (address 0x%llx, size %llu) extends past the "
                                "file bytes of its PT_LOAD segment %llu (address 0x%llx, file "
                                "size %llu)",
                                elf->name, (unsigned long long)value,
                                (unsigned long long)sym_size, (unsigned long long)i,
                                (unsigned long long)p_vaddr, (unsigned long long)p_filesz);
    }
    if (p_offset > UINT64_MAX - delta) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: PT_LOAD segment %llu offset %llu overflows",
                                (unsigned long long)i, (unsigned long long)p_offset);
    }
    *offset = p_offset + delta;
    return NULL;
  }
  return kiln_status_create(KILN_DATA_LOSS,
                            "ELF: symbol '%s' (address 0x%llx) lies in no PT_LOAD segment's "
                            "file bytes",
                            elf->name, (unsigned long long)value);
}

/* Converts a found symbol to a file offset and checks its bytes. */
static KilnStatus* kiln_elf_locate(const KilnElf* elf, const uint8_t* sym, uint64_t* offset,
                                   uint64_t* size) {
  uint16_t shndx = kiln_rd16(sym + 6);
  uint64_t value = kiln_rd64(sym + 8);
  uint64_t sym_size = kiln_rd64(sym + 16);
  uint64_t file_offset = 0;
  if (shndx < KILN_SHN_LORESERVE) {
    if (shndx >= elf->shnum) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: symbol '%s' names section %u, but there are %llu sections",
                                elf->name, (unsigned)shndx, (unsigned long long)elf->shnum);
    }
    const uint8_t* sh = kiln_elf_shdr(elf, shndx);
    uint32_t sh_type = kiln_rd32(sh + 4);
    uint64_t sh_addr = kiln_rd64(sh + 16);
    uint64_t sh_offset = kiln_rd64(sh + 24);
    uint64_t sh_size = kiln_rd64(sh + 32);
    if (sh_type == KILN_SHT_NOBITS) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: symbol '%s' is in section %u, which has no bytes in the "
                                "file (SHT_NOBITS)",
                                elf->name, (unsigned)shndx);
    }
    if (value < sh_addr || value - sh_addr > sh_size || sym_size > sh_size - (value - sh_addr)) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: symbol '%s' (address 0x%llx, size %llu) lies outside its "
                                "section %u (address 0x%llx, size %llu)",
                                elf->name, (unsigned long long)value,
                                (unsigned long long)sym_size, (unsigned)shndx,
                                (unsigned long long)sh_addr, (unsigned long long)sh_size);
    }
    uint64_t delta = value - sh_addr;
    if (sh_offset > UINT64_MAX - delta) {
      return kiln_status_create(KILN_DATA_LOSS, "ELF: section %u offset %llu overflows",
                                (unsigned)shndx, (unsigned long long)sh_offset);
    }
    file_offset = sh_offset + delta;
  } else {
    KilnStatus* st = kiln_elf_offset_from_segments(elf, value, sym_size, &file_offset);
    if (st != NULL) return st;
  }
  if (!kiln_in_bounds(file_offset, sym_size, elf->size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: symbol '%s' (file offset %llu, size %llu) extends past the "
                              "end of the file (%llu bytes)",
                              elf->name, (unsigned long long)file_offset,
                              (unsigned long long)sym_size, (unsigned long long)elf->size);
  }
  *offset = file_offset;
  *size = sym_size;
  return NULL;
}

/* Searches the symbol table in section `index`. *found is set to the symbol
 * entry when a definition with the name is there. */
static KilnStatus* kiln_elf_search_table(const KilnElf* elf, uint64_t index,
                                         const uint8_t** found) {
  const uint8_t* sh = kiln_elf_shdr(elf, index);
  uint32_t type = kiln_rd32(sh + 4);
  const char* table = kiln_elf_table_name(type);
  uint64_t offset = kiln_rd64(sh + 24);
  uint64_t size = kiln_rd64(sh + 32);
  uint32_t link = kiln_rd32(sh + 40);
  uint64_t entsize = kiln_rd64(sh + 56);
  if (entsize != KILN_ELF_SYM_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: section %llu (%s) has sh_entsize %llu, expected %u",
                              (unsigned long long)index, table, (unsigned long long)entsize,
                              (unsigned)KILN_ELF_SYM_SIZE);
  }
  if (!kiln_in_bounds(offset, size, elf->size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: section %llu (%s) offset %llu + size %llu exceeds the file "
                              "size %llu",
                              (unsigned long long)index, table, (unsigned long long)offset,
                              (unsigned long long)size, (unsigned long long)elf->size);
  }
  if (link == 0 || link >= elf->shnum) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: section %llu (%s) links string table %u, but there are "
                              "%llu sections",
                              (unsigned long long)index, table, (unsigned)link,
                              (unsigned long long)elf->shnum);
  }
  const uint8_t* str_sh = kiln_elf_shdr(elf, link);
  uint32_t str_type = kiln_rd32(str_sh + 4);
  uint64_t str_offset = kiln_rd64(str_sh + 24);
  uint64_t str_size = kiln_rd64(str_sh + 32);
  if (str_type != KILN_SHT_STRTAB) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: section %llu (%s) links section %u of type %u, not a string "
                              "table",
                              (unsigned long long)index, table, (unsigned)link,
                              (unsigned)str_type);
  }
  if (!kiln_in_bounds(str_offset, str_size, elf->size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: string table (section %u) offset %llu + size %llu exceeds "
                              "the file size %llu",
                              (unsigned)link, (unsigned long long)str_offset,
                              (unsigned long long)str_size, (unsigned long long)elf->size);
  }
  const uint8_t* strtab = elf->image + str_offset;
  const uint8_t* symtab = elf->image + offset;
  uint64_t count = size / KILN_ELF_SYM_SIZE;
  /* Entry 0 is the reserved null symbol. */
  for (uint64_t i = 1; i < count; ++i) {
    const uint8_t* sym = symtab + i * KILN_ELF_SYM_SIZE;
    uint32_t st_name = kiln_rd32(sym);
    /* The name and its terminator must lie in the string table. */
    if (st_name >= str_size || str_size - st_name <= elf->name_length) continue;
    if (memcmp(strtab + st_name, elf->name, elf->name_length) != 0 ||
        strtab[st_name + elf->name_length] != 0) {
      continue;
    }
    uint8_t info = sym[4];
    uint8_t bind = (uint8_t)(info >> 4);
    uint8_t stype = (uint8_t)(info & 0xfu);
    uint16_t shndx = kiln_rd16(sym + 6);
    if (shndx == KILN_SHN_UNDEF) continue; /* a reference, not the definition */
    if (bind != KILN_STB_GLOBAL && bind != KILN_STB_WEAK && bind != KILN_STB_GNU_UNIQUE) continue;
    if (stype != KILN_STT_NOTYPE && stype != KILN_STT_OBJECT && stype != KILN_STT_FUNC) continue;
    *found = sym;
    return NULL;
  }
  return NULL;
}

KilnStatus* kiln_elf_find_symbol(const uint8_t* image, uint64_t image_size, const char* name,
                                 uint64_t* offset, uint64_t* size) {
  if (offset != NULL) *offset = 0;
  if (size != NULL) *size = 0;
  if ((image == NULL && image_size != 0) || name == NULL || name[0] == '\0' || offset == NULL ||
      size == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_elf_find_symbol: NULL image, empty name or NULL output");
  }
  if (image_size < KILN_ELF_EHDR_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "not an ELF file: %llu bytes, shorter than the 64-byte ELF header",
                              (unsigned long long)image_size);
  }
  if (memcmp(image, "\x7f" "ELF", 4) != 0) {
    return kiln_status_create(KILN_DATA_LOSS, "not an ELF file (no \\x7fELF magic at offset 0)");
  }
  if (image[4] != KILN_ELFCLASS64) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: not a 64-bit ELF file (EI_CLASS %u at offset 4)",
                              (unsigned)image[4]);
  }
  if (image[5] != KILN_ELFDATA2LSB) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: not a little-endian ELF file (EI_DATA %u at offset 5)",
                              (unsigned)image[5]);
  }
  if (image[6] != KILN_EV_CURRENT) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: unknown ELF version %u (EI_VERSION, offset 6)",
                              (unsigned)image[6]);
  }
  uint16_t e_type = kiln_rd16(image + 16);
  if (e_type != KILN_ET_DYN) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: not a shared object (e_type %u at offset 16, expected %u)",
                              (unsigned)e_type, (unsigned)KILN_ET_DYN);
  }

  KilnElf elf;
  elf.image = image;
  elf.size = image_size;
  elf.shoff = kiln_rd64(image + 40);
  elf.shnum = kiln_rd16(image + 60);
  elf.name = name;
  elf.name_length = strlen(name);
  uint16_t shentsize = kiln_rd16(image + 58);
  if (elf.shoff == 0) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: the file has no section headers (e_shoff 0)");
  }
  if (shentsize != KILN_ELF_SHDR_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: e_shentsize is %u (offset 58), expected %u",
                              (unsigned)shentsize, (unsigned)KILN_ELF_SHDR_SIZE);
  }
  if (elf.shnum == 0) {
    /* Extended numbering: the count is section header 0's sh_size. */
    if (!kiln_array_in_bounds(elf.shoff, 1, KILN_ELF_SHDR_SIZE, image_size)) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "ELF: section header 0 (offset %llu) exceeds the file size %llu",
                                (unsigned long long)elf.shoff, (unsigned long long)image_size);
    }
    elf.shnum = kiln_rd64(image + elf.shoff + 32);
  }
  if (!kiln_array_in_bounds(elf.shoff, elf.shnum, KILN_ELF_SHDR_SIZE, image_size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "ELF: section header table (offset %llu, %llu entries of %u bytes) "
                              "exceeds the file size %llu",
                              (unsigned long long)elf.shoff, (unsigned long long)elf.shnum,
                              (unsigned)KILN_ELF_SHDR_SIZE, (unsigned long long)image_size);
  }

  /* .dynsym first (what the dynamic linker exports), then .symtab. */
  const uint32_t kinds[2] = {KILN_SHT_DYNSYM, KILN_SHT_SYMTAB};
  int have_table = 0;
  for (int k = 0; k < 2; ++k) {
    for (uint64_t i = 0; i < elf.shnum; ++i) {
      if (kiln_rd32(kiln_elf_shdr(&elf, i) + 4) != kinds[k]) continue;
      have_table = 1;
      const uint8_t* sym = NULL;
      KilnStatus* st = kiln_elf_search_table(&elf, i, &sym);
      if (st != NULL) return st;
      if (sym != NULL) return kiln_elf_locate(&elf, sym, offset, size);
    }
  }
  if (!have_table) {
    return kiln_status_create(KILN_DATA_LOSS, "ELF: the file has no symbol table (.dynsym)");
  }
  return kiln_status_create(KILN_NOT_FOUND, "ELF: no symbol '%s' is defined", name);
}
