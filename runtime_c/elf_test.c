/* File: runtime_c/elf_test.c — kiln_elf_find_symbol (kiln/artifact_format.h)
 * on real shared objects (the add_relu fixture and a foreign .so, paths in
 * argv) and on purpose-made damage to them: every header, table, index and
 * string is checked; every byte flip and every truncation is survived.
 *
 *   elf_test SEALED.so FOREIGN.so
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"
#include "runtime_c/c_test_util.h"

/* Where things are in the (trusted, valid) fixture. */
typedef struct {
  uint64_t shoff;
  uint64_t shnum;
  uint64_t dynsym;      /* section index */
  uint64_t symtab;      /* section index, or 0 */
  uint64_t nobits;      /* index of an SHT_NOBITS section, or 0 */
  uint64_t sym_entry;   /* file offset of kiln_artifact's .dynsym entry */
  uint64_t symtab_entry;/* file offset of kiln_artifact's .symtab entry, or 0 */
} Layout;

static uint64_t find_entry(const uint8_t* img, uint64_t shoff, uint64_t index, const char* name) {
  const uint8_t* sh = img + shoff + 64 * index;
  const uint8_t* str_sh = img + shoff + 64 * rd32(sh + 40);
  uint64_t count = rd64(sh + 32) / 24;
  for (uint64_t i = 1; i < count; ++i) {
    uint64_t at = rd64(sh + 24) + 24 * i;
    const char* s = (const char*)img + rd64(str_sh + 24) + rd32(img + at);
    if (strcmp(s, name) == 0 && rd16(img + at + 6) != 0) return at;
  }
  return 0;
}

static Layout layout_of(const uint8_t* img) {
  Layout l;
  memset(&l, 0, sizeof(l));
  l.shoff = rd64(img + 40);
  l.shnum = rd16(img + 60);
  for (uint64_t i = 0; i < l.shnum; ++i) {
    uint32_t type = rd32(img + l.shoff + 64 * i + 4);
    if (type == 11) l.dynsym = i;
    if (type == 2) l.symtab = i;
    if (type == 8 && l.nobits == 0) l.nobits = i;
  }
  l.sym_entry = find_entry(img, l.shoff, l.dynsym, "kiln_artifact");
  if (l.symtab != 0) l.symtab_entry = find_entry(img, l.shoff, l.symtab, "kiln_artifact");
  return l;
}

/* Patches a copy of the image with fn, runs the lookup, checks the result. */
static KilnStatus* find_in(const uint8_t* img, uint64_t size, const char* name, uint64_t* off,
                           uint64_t* sz) {
  uint8_t* copy = (uint8_t*)malloc((size_t)(size == 0 ? 1 : size));
  if (copy == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "test: no memory");
  memcpy(copy, img, (size_t)size);
  KilnStatus* st = kiln_elf_find_symbol(copy, size, name, off, sz);
  if (st == NULL && !(*off <= size && *sz <= size - *off)) {
    fprintf(stderr, "lookup returned bytes outside the image\n");
    ++failures;
  }
  free(copy);
  return st;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: elf_test SEALED.so FOREIGN.so\n");
    return 2;
  }
  uint64_t size = 0;
  uint64_t foreign_size = 0;
  uint8_t* img = read_file(argv[1], &size);
  uint8_t* foreign = read_file(argv[2], &foreign_size);
  if (img == NULL || foreign == NULL) {
    fprintf(stderr, "cannot read the fixtures\n");
    return 1;
  }
  uint64_t off = 0;
  uint64_t sz = 0;

  /* The blob symbol. */
  KilnStatus* st = kiln_elf_find_symbol(img, size, "kiln_artifact", &off, &sz);
  CHECK(st == NULL);
  kiln_status_free(st);
  const uint64_t blob_off = off;
  const uint64_t blob_sz = sz;
  CHECK(blob_off % 64 == 0);
  CHECK(blob_sz >= 64 && blob_off + blob_sz <= size);
  CHECK(memcmp(img + blob_off, "KILNART", 8) == 0);
  CHECK(rd64(img + blob_off + 16) == blob_sz); /* blob_size == st_size */

  /* A function; an undefined reference; absent names; near-misses. */
  st = kiln_elf_find_symbol(img, size, "fused_add", &off, &sz);
  CHECK(st == NULL && sz > 0 && off + sz <= size);
  kiln_status_free(st);
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "kiln_kernel_error", &off, &sz), KILN_NOT_FOUND,
               "no symbol 'kiln_kernel_error'");
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "no_such_symbol", &off, &sz), KILN_NOT_FOUND,
               "no symbol");
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "kiln_artifac", &off, &sz), KILN_NOT_FOUND, "");
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "kiln_artifact_", &off, &sz), KILN_NOT_FOUND, "");
  CHECK(off == 0 && sz == 0); /* outputs cleared on failure */
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "", &off, &sz), KILN_INVALID_ARGUMENT, "");
  CHECK_STATUS(kiln_elf_find_symbol(NULL, 10, "x", &off, &sz), KILN_INVALID_ARGUMENT, "");
  CHECK_STATUS(kiln_elf_find_symbol(img, size, "x", NULL, &sz), KILN_INVALID_ARGUMENT, "");

  /* A foreign shared object: the kernels, no blob. */
  CHECK_STATUS(kiln_elf_find_symbol(foreign, foreign_size, "kiln_artifact", &off, &sz),
               KILN_NOT_FOUND, "no symbol 'kiln_artifact'");
  st = kiln_elf_find_symbol(foreign, foreign_size, "fused_relu", &off, &sz);
  CHECK(st == NULL);
  kiln_status_free(st);

  /* This test program: a PIE is ET_DYN (no blob), otherwise not a shared object. */
  {
    uint64_t self_size = 0;
    uint8_t* self = read_file("/proc/self/exe", &self_size);
    CHECK(self != NULL);
    if (self != NULL) {
      st = kiln_elf_find_symbol(self, self_size, "kiln_artifact", &off, &sz);
      if (rd16(self + 16) == 3) {
        CHECK_STATUS(st, KILN_NOT_FOUND, "no symbol 'kiln_artifact'");
      } else {
        CHECK_STATUS(st, KILN_DATA_LOSS, "not a shared object");
      }
      free(self);
    }
  }

  /* Not ELF at all / the ELF header. */
  CHECK_STATUS(find_in(img, 63, "kiln_artifact", &off, &sz), KILN_DATA_LOSS,
               "shorter than the 64-byte ELF header");
  CHECK_STATUS(find_in((const uint8_t*)"hello, world", 12, "kiln_artifact", &off, &sz),
               KILN_DATA_LOSS, "not an ELF file");
  CHECK_STATUS(find_in(img, 0, "kiln_artifact", &off, &sz), KILN_DATA_LOSS, "not an ELF file");

  uint8_t* work = (uint8_t*)malloc((size_t)size);
  if (work == NULL) return 1;
#define RESET() memcpy(work, img, (size_t)size)
#define EXPECT(code, part) CHECK_STATUS(find_in(work, size, "kiln_artifact", &off, &sz), code, part)
  const Layout l = layout_of(img);
  CHECK(l.dynsym != 0 && l.sym_entry != 0);

  RESET(); work[0] = 0x7e; EXPECT(KILN_DATA_LOSS, "not an ELF file");
  RESET(); work[4] = 1; EXPECT(KILN_DATA_LOSS, "not a 64-bit ELF file");
  RESET(); work[5] = 2; EXPECT(KILN_DATA_LOSS, "not a little-endian");
  RESET(); work[6] = 0; EXPECT(KILN_DATA_LOSS, "ELF version");
  RESET(); wr16(work + 16, 2); EXPECT(KILN_DATA_LOSS, "not a shared object (e_type 2");
  RESET(); wr64(work + 40, 0); EXPECT(KILN_DATA_LOSS, "no section headers");
  RESET(); wr64(work + 40, size); EXPECT(KILN_DATA_LOSS, "section header table");
  RESET(); wr64(work + 40, UINT64_MAX - 10); EXPECT(KILN_DATA_LOSS, "section header table");
  RESET(); wr16(work + 60, 0xffff); EXPECT(KILN_DATA_LOSS, "section header table");
  RESET(); wr16(work + 58, 40); EXPECT(KILN_DATA_LOSS, "e_shentsize is 40");
  /* Extended numbering: e_shnum 0, the count in section 0's sh_size. */
  RESET(); wr16(work + 60, 0); wr64(work + l.shoff + 32, l.shnum);
  st = find_in(work, size, "kiln_artifact", &off, &sz);
  CHECK(st == NULL && off == blob_off && sz == blob_sz);
  kiln_status_free(st);
  RESET(); wr16(work + 60, 0); wr64(work + l.shoff + 32, UINT64_MAX / 2);
  EXPECT(KILN_DATA_LOSS, "section header table");

  /* The .dynsym section header and its string table. */
  const uint64_t dsh = l.shoff + 64 * l.dynsym;
  RESET(); wr64(work + dsh + 56, 0); EXPECT(KILN_DATA_LOSS, "sh_entsize 0");
  RESET(); wr64(work + dsh + 24, size); EXPECT(KILN_DATA_LOSS, "(.dynsym) offset");
  RESET(); wr64(work + dsh + 32, UINT64_MAX); EXPECT(KILN_DATA_LOSS, "(.dynsym) offset");
  RESET(); wr32(work + dsh + 40, (uint32_t)l.shnum); EXPECT(KILN_DATA_LOSS, "links string table");
  RESET(); wr32(work + dsh + 40, 0); EXPECT(KILN_DATA_LOSS, "links string table 0");
  RESET(); wr32(work + dsh + 40, (uint32_t)l.dynsym); EXPECT(KILN_DATA_LOSS, "not a string table");
  {
    const uint64_t ssh = l.shoff + 64 * rd32(img + dsh + 40);
    RESET(); wr64(work + ssh + 32, size); EXPECT(KILN_DATA_LOSS, "string table");
    RESET(); wr64(work + ssh + 24, UINT64_MAX); EXPECT(KILN_DATA_LOSS, "string table");
  }

  /* The symbol entry. */
  const uint64_t se = l.sym_entry;
  /* SHN_ABS: the address goes through the PT_LOAD program headers instead. */
  RESET(); wr16(work + se + 6, 0xfff1);
  st = find_in(work, size, "kiln_artifact", &off, &sz);
  CHECK(st == NULL && off == blob_off && sz == blob_sz);
  kiln_status_free(st);
  RESET(); wr16(work + se + 6, 0xfff1); wr64(work + se + 8, UINT64_MAX - 4);
  EXPECT(KILN_DATA_LOSS, "lies in no PT_LOAD segment");
  RESET(); wr16(work + se + 6, 0xfff1); wr16(work + 54, 12); EXPECT(KILN_DATA_LOSS, "e_phentsize");
  RESET(); wr16(work + se + 6, 0xfff1); wr64(work + 32, size); EXPECT(KILN_DATA_LOSS, "program header");
  RESET(); wr16(work + se + 6, 0xfff1); wr16(work + 56, 0); EXPECT(KILN_DATA_LOSS, "no program headers");
  RESET(); wr16(work + se + 6, 0xfff1); wr64(work + se + 16, size);
  EXPECT(KILN_DATA_LOSS, "PT_LOAD segment");
  RESET(); wr16(work + se + 6, (uint16_t)l.shnum); EXPECT(KILN_DATA_LOSS, "names section");
  if (l.nobits != 0) {
    RESET(); wr16(work + se + 6, (uint16_t)l.nobits); EXPECT(KILN_DATA_LOSS, "SHT_NOBITS");
  }
  RESET(); wr64(work + se + 16, UINT64_MAX); EXPECT(KILN_DATA_LOSS, "lies outside its section");
  RESET(); wr64(work + se + 8, 0); EXPECT(KILN_DATA_LOSS, "lies outside its section");
  RESET(); wr64(work + se + 8, UINT64_MAX); EXPECT(KILN_DATA_LOSS, "lies outside its section");
  {
    /* A section whose file bytes lie past the end. */
    const uint64_t sh = l.shoff + 64 * rd16(img + se + 6);
    RESET(); wr64(work + sh + 24, size - 8); EXPECT(KILN_DATA_LOSS, "extends past the end");
    RESET(); wr64(work + sh + 24, UINT64_MAX - 8); EXPECT(KILN_DATA_LOSS, "overflows");
  }
  /* Binding LOCAL or type TLS: not a definition to export. */
  RESET();
  work[se + 4] = (uint8_t)((0 << 4) | 1);
  if (l.symtab_entry != 0) work[l.symtab_entry + 4] = (uint8_t)((0 << 4) | 1);
  EXPECT(KILN_NOT_FOUND, "no symbol");
  RESET();
  work[se + 4] = (uint8_t)((1 << 4) | 6);
  if (l.symtab_entry != 0) work[l.symtab_entry + 4] = (uint8_t)((1 << 4) | 6);
  EXPECT(KILN_NOT_FOUND, "no symbol");
  /* An undefined entry (SHN_UNDEF) is a reference, not the definition. */
  RESET();
  wr16(work + se + 6, 0);
  if (l.symtab_entry != 0) wr16(work + l.symtab_entry + 6, 0);
  EXPECT(KILN_NOT_FOUND, "no symbol");
  /* Name offset past the string table: skipped, not read. */
  RESET(); wr32(work + se, UINT32_MAX);
  if (l.symtab_entry == 0) {
    EXPECT(KILN_NOT_FOUND, "no symbol");
  } else {
    /* Falls back to .symtab, which has the same definition. */
    st = find_in(work, size, "kiln_artifact", &off, &sz);
    CHECK(st == NULL && off == blob_off && sz == blob_sz);
    kiln_status_free(st);
    /* Neither table: not found. */
    wr32(work + l.symtab_entry, UINT32_MAX);
    EXPECT(KILN_NOT_FOUND, "no symbol 'kiln_artifact'");
  }
  /* No symbol table at all. */
  RESET();
  for (uint64_t i = 0; i < l.shnum; ++i) {
    uint8_t* type = work + l.shoff + 64 * i + 4;
    if (rd32(type) == 11 || rd32(type) == 2) wr32(type, 1);
  }
  EXPECT(KILN_DATA_LOSS, "no symbol table");

  /* Every byte flipped, every truncation: never a crash, never out of bounds. */
  int found = 0;
  for (uint64_t pos = 0; pos < size; ++pos) {
    RESET();
    work[pos] ^= 0xFF;
    st = find_in(work, size, "kiln_artifact", &off, &sz);
    found += st == NULL;
    kiln_status_free(st);
  }
  CHECK(found > 0); /* most bytes are not the ELF structure */
  for (uint64_t len = 0; len < size; ++len) {
    st = find_in(img, len, "kiln_artifact", &off, &sz);
    if (st == NULL && off + sz > len) ++failures;
    kiln_status_free(st);
  }

  free(work);
  free(img);
  free(foreign);
  if (failures != 0) {
    fprintf(stderr, "elf_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("elf_test: OK\n");
  return 0;
}
