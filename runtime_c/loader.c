/* File: runtime_c/loader.c
 *
 * kiln_artifact_load and the artifact accessors of kiln/runtime.h.
 *
 * The steps of docs/artifact.md ("What the loader checks"), in order:
 *  1-4  the file is opened and mapped read-only; kiln_artifact_validate_image
 *       (artifact_blob.c) checks the ELF symbol, the header, the whole-file
 *       checksum, the section table and every PARAMS entry.
 *  5    META and GRAPH are copied into NUL-terminated buffers, parsed with
 *       cJSON and checked field by field; the immutable plan (entries,
 *       storages, arena offsets, inputs, outputs) is built from them.
 *  6    only then the library is dlopen'ed (RTLD_NOW | RTLD_LOCAL); every
 *       func_name is resolved (and must be defined by the library itself);
 *       the mapped `kiln_artifact` blob must be 64-byte aligned and equal,
 *       byte for byte, to the blob validated in steps 1-5 (so the file did not
 *       change in between); parameters are then used in place in that mapping
 *       and the validation mapping is unmapped.
 *
 * Every failure is a KilnStatus naming the file and the problem; everything
 * allocated so far is freed (artifact_free handles a partial artifact).
 * Numbers read from the file are range-checked before use and every size is
 * computed with overflow checks.
 */
#define _GNU_SOURCE 1 /* dladdr, O_CLOEXEC; implies POSIX.1-2008 */

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kiln/artifact_format.h"
#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/loader_internal.h"

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

const char* kiln_runtime_version(void) { return "0.1.0"; }

uint32_t kiln_api_version(void) { return KILN_API_VERSION; }

void kiln_free(void* ptr) { free(ptr); }

uint64_t kiln_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

void kiln_format_tensor_type(DLDataType dtype, int32_t ndim, const int64_t* shape, char* buf,
                             size_t buf_size) {
  if (buf == NULL || buf_size == 0) return;
  char dt[64];
  kiln_dtype_to_string(dtype, dt, sizeof dt);
  size_t used = 0;
  int n = snprintf(buf, buf_size, "%s[", dt);
  if (n < 0 || (size_t)n >= buf_size) return;
  used = (size_t)n;
  for (int32_t i = 0; i < ndim; ++i) {
    n = snprintf(buf + used, buf_size - used, i == 0 ? "%lld" : ",%lld",
                 shape == NULL ? 0LL : (long long)shape[i]);
    if (n < 0 || (size_t)n >= buf_size - used) return;
    used += (size_t)n;
  }
  (void)snprintf(buf + used, buf_size - used, "]");
}

/* ------------------------------------------------------------------------ */
/* String storage: every string of an artifact lives in a list of blocks.     */
/* ------------------------------------------------------------------------ */


/* A NUL-terminated copy of s[0, n) owned by the artifact, or NULL. Small
 * strings are packed into shared blocks; a large one gets a block of its own,
 * linked behind the current block so that the current one keeps filling. */
char* kiln_artifact_strndup(KilnArtifact* art, const char* s, size_t n) {
  if (n > SIZE_MAX / 2) return NULL;
  struct KilnStringBlock* b = art->strings;
  if (b == NULL || b->capacity - b->used < n + 1) {
    const int large = n + 1 > KILN_STRING_BLOCK_SIZE / 4;
    const size_t cap = large ? n + 1 : KILN_STRING_BLOCK_SIZE;
    struct KilnStringBlock* nb = (struct KilnStringBlock*)malloc(sizeof *nb + cap);
    if (nb == NULL) return NULL;
    nb->used = 0;
    nb->capacity = cap;
    if (large && b != NULL) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      art->strings = nb;
    }
    b = nb;
  }
  char* out = b->data + b->used;
  memcpy(out, s, n);
  out[n] = '\0';
  b->used += n + 1;
  return out;
}

char* kiln_artifact_strdup(KilnArtifact* art, const char* s) {
  return kiln_artifact_strndup(art, s, strlen(s));
}

static void artifact_free(KilnArtifact* art) {
  if (art == NULL) return;
  if (art->dl_handle != NULL) dlclose(art->dl_handle);
  free(art->path);
  free(art->meta_text);
  free(art->graph_text);
  free(art->nodes);
  free(art->node_inputs);
  free(art->entries);
  free(art->shapes);
  free(art->storages);
  free(art->inputs);
  free(art->outputs);
  free(art->op_nodes);
  struct KilnStringBlock* b = art->strings;
  while (b != NULL) {
    struct KilnStringBlock* next = b->next;
    free(b);
    b = next;
  }
  free(art);
}
/* ------------------------------------------------------------------------ */
/* The loader's state and its error helper                                    */
/* ------------------------------------------------------------------------ */


KilnStatus* kiln_lerr(const Loader* L, KilnStatusCode code, const char* format, ...) {
  char msg[2048];
  va_list args;
  va_start(args, format);
  (void)vsnprintf(msg, sizeof msg, format, args);
  va_end(args);
  return kiln_status_create(code, "%s: %s", L->path, msg);
}

KilnStatus* kiln_loader_oom(const Loader* L) {
  return kiln_lerr(L, KILN_RESOURCE_EXHAUSTED, "out of memory while loading");
}

/* "node 3 ('fused_add')" into buf. */
const char* kiln_node_label(const Loader* L, int32_t node, char* buf, size_t size) {
  const char* name =
      (L->art->nodes != NULL && L->art->nodes[node].name != NULL) ? L->art->nodes[node].name : "?";
  (void)snprintf(buf, size, "node %d ('%.200s')", (int)node, name);
  return buf;
}
/* ------------------------------------------------------------------------ */
/* Step 6: dlopen                                                             */
/* ------------------------------------------------------------------------ */

static KilnStatus* open_library(Loader* L) {
  KilnArtifact* art = L->art;
  /* A path without '/' would make dlopen search the library path. */
  char* dl_path = NULL;
  if (strchr(L->path, '/') == NULL) {
    size_t n = strlen(L->path);
    dl_path = (char*)malloc(n + 3);
    if (dl_path == NULL) return kiln_loader_oom(L);
    memcpy(dl_path, "./", 2);
    memcpy(dl_path + 2, L->path, n + 1);
  }
  (void)dlerror();
  art->dl_handle = dlopen(dl_path != NULL ? dl_path : L->path, RTLD_NOW | RTLD_LOCAL);
  free(dl_path);
  if (art->dl_handle == NULL) {
    const char* why = dlerror();
    return kiln_lerr(L, KILN_INTERNAL, "dlopen failed: %s", why != NULL ? why : "(no message)");
  }

  (void)dlerror();
  const uint8_t* mapped = (const uint8_t*)dlsym(art->dl_handle, KILN_ARTIFACT_SYMBOL);
  if (mapped == NULL) {
    return kiln_lerr(L, KILN_DATA_LOSS,
                "the loaded library has no symbol '%s' (the file changed while loading?)",
                KILN_ARTIFACT_SYMBOL);
  }
  if (((uintptr_t)mapped % KILN_ARTIFACT_ALIGNMENT) != 0) {
    return kiln_lerr(L, KILN_DATA_LOSS, "symbol '%s' is not %u-byte aligned in memory",
                KILN_ARTIFACT_SYMBOL, KILN_ARTIFACT_ALIGNMENT);
  }
  /* The blob the library maps must be the blob validated: same checksum
   * field first (cheap, and what a replaced file changes), then every byte
   * (the parameters are used in place from this mapping). */
  KilnArtifactHeader header;
  memcpy(&header, mapped, sizeof header);
  if (header.checksum != L->view.header.checksum || header.blob_size != L->view.header.blob_size ||
      memcmp(mapped, L->blob, (size_t)L->view.header.blob_size) != 0) {
    return kiln_lerr(L, KILN_DATA_LOSS,
                "the blob of the loaded library differs from the one validated (checksum %016llx, "
                "validated %016llx): the file changed while loading",
                (unsigned long long)header.checksum, (unsigned long long)L->view.header.checksum);
  }
  Dl_info blob_info;
  if (dladdr(mapped, &blob_info) == 0) {
    return kiln_lerr(L, KILN_INTERNAL, "dladdr failed for symbol '%s'", KILN_ARTIFACT_SYMBOL);
  }

  /* Kernels: every func_name resolves, to a function of this library. */
  char label[320];
  const char* last_name = NULL;
  KilnKernelFn last_fn = NULL;
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    KilnPlanNode* pn = &art->nodes[n];
    if (!pn->is_op) continue;
    /* Consecutive nodes often call the same kernel (suffixes _1, _2 name the
     * nodes, not the functions): reuse the previous lookup. */
    if (last_name != NULL && strcmp(last_name, pn->func_name) == 0) {
      pn->fn = last_fn;
      continue;
    }
    (void)dlerror();
    void* sym = dlsym(art->dl_handle, pn->func_name);
    if (sym == NULL) {
      return kiln_lerr(L, KILN_NOT_FOUND,
                  "GRAPH: %s calls function '%.200s', which the library does not export",
                  kiln_node_label(L, n, label, sizeof label), pn->func_name);
    }
    Dl_info info;
    if (dladdr(sym, &info) == 0 || info.dli_fbase != blob_info.dli_fbase) {
      return kiln_lerr(L, KILN_NOT_FOUND,
                  "GRAPH: %s calls function '%.200s', which is not defined by the library itself",
                  kiln_node_label(L, n, label, sizeof label), pn->func_name);
    }
    /* POSIX allows converting a dlsym result to a function pointer. */
    KilnKernelFn fn;
    memcpy(&fn, &sym, sizeof fn);
    pn->fn = fn;
    last_name = pn->func_name;
    last_fn = fn;
  }

  /* Parameters in place. */
  for (int32_t s = 0; s < art->num_storages; ++s) {
    KilnPlanStorage* ps = &art->storages[s];
    if (ps->kind == KILN_STORAGE_PARAM) ps->param_data = mapped + ps->param_offset;
  }
  art->checksum = header.checksum;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* kiln_artifact_load                                                         */
/* ------------------------------------------------------------------------ */

/* "not a kiln artifact (not a regular file: a FIFO)". */
static KilnStatus* kiln_loader_not_regular(const char* path, mode_t mode) {
  const char* kind = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a file";
  return kiln_status_create(KILN_DATA_LOSS, "%s: not a kiln artifact (not a regular file: %s)",
                            path, kind);
}

KilnStatus* kiln_artifact_load(const char* path, KilnArtifact** out) {
  if (out != NULL) *out = NULL;
  if (path == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_load: %s is NULL",
                              path == NULL ? "path" : "out");
  }
  Loader L;
  memset(&L, 0, sizeof L);
  L.path = path;
  KilnStatus* st = NULL;
  uint8_t* image = MAP_FAILED;
  uint64_t image_size = 0;

  /* A regular file only, looked at before it is opened: opening a FIFO
   * waits for a writer (kiln_artifact_load(FIFO) once blocked forever), and
   * opening a device may act on it. O_NONBLOCK keeps a FIFO swapped in
   * meanwhile from blocking; the fstat below refuses it. */
  struct stat sb;
  if (stat(path, &sb) != 0) {
    int err = errno;
    return kiln_status_create((err == ENOENT || err == ENOTDIR) ? KILN_NOT_FOUND : KILN_INTERNAL,
                              "%s: cannot open: %s", path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode)) return kiln_loader_not_regular(path, sb.st_mode);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return kiln_status_create((err == ENOENT || err == ENOTDIR) ? KILN_NOT_FOUND : KILN_INTERNAL,
                              "%s: cannot open: %s", path, strerror(err));
  }
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    close(fd);
    return kiln_status_create(KILN_INTERNAL, "%s: cannot stat: %s", path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return kiln_loader_not_regular(path, sb.st_mode);
  }
  if (sb.st_size <= 0) {
    close(fd);
    return kiln_status_create(KILN_DATA_LOSS, "%s: not a kiln artifact (empty file)", path);
  }
  image_size = (uint64_t)sb.st_size;
  if (image_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: file too large to map", path);
  }
  image = (uint8_t*)mmap(NULL, (size_t)image_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) {
    int err = errno;
    return kiln_status_create(KILN_INTERNAL, "%s: cannot map: %s", path, strerror(err));
  }

  L.art = (KilnArtifact*)calloc(1, sizeof(KilnArtifact));
  if (L.art == NULL) {
    st = kiln_loader_oom(&L);
    goto fail;
  }
  L.art->path = (char*)malloc(strlen(path) + 1);
  if (L.art->path == NULL) {
    st = kiln_loader_oom(&L);
    goto fail;
  }
  memcpy(L.art->path, path, strlen(path) + 1);

  /* Steps 1-4. */
  uint64_t blob_offset = 0;
  st = kiln_artifact_validate_image(image, image_size, path, &blob_offset, &L.view);
  if (st != NULL) goto fail;
  L.blob = image + blob_offset;

  /* Step 5. */
  st = kiln_loader_parse_section(&L, "META", L.view.meta, L.view.meta_size, &L.art->meta_text, &L.meta);
  if (st == NULL)
    st = kiln_loader_parse_section(&L, "GRAPH", L.view.graph, L.view.graph_size, &L.art->graph_text, &L.graph);
  if (st == NULL) st = kiln_loader_check_meta(&L);
  if (st == NULL) st = kiln_loader_check_graph(&L);
  if (st != NULL) goto fail;
  cJSON_Delete(L.meta);
  L.meta = NULL;
  cJSON_Delete(L.graph);
  L.graph = NULL;

  /* Step 6. */
  st = open_library(&L);
  if (st != NULL) goto fail;

  munmap(image, (size_t)image_size);
  free(L.row_ptr);
  free(L.null_kind);
  free(L.param_of);
  free(L.head_entries);
  *out = L.art;
  return NULL;

fail:
  cJSON_Delete(L.meta);
  cJSON_Delete(L.graph);
  free(L.row_ptr);
  free(L.null_kind);
  free(L.param_of);
  free(L.head_entries);
  artifact_free(L.art);
  if (image != MAP_FAILED) munmap(image, (size_t)image_size);
  return st;
}

void kiln_artifact_release(KilnArtifact* artifact) { artifact_free(artifact); }

/* ------------------------------------------------------------------------ */
/* Accessors                                                                  */
/* ------------------------------------------------------------------------ */

const char* kiln_artifact_target(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->target : "";
}

const char* kiln_artifact_producer(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->producer : "";
}

const char* kiln_artifact_graph_json(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->graph_text : "";
}

int32_t kiln_artifact_num_inputs(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_inputs : 0;
}

int32_t kiln_artifact_num_outputs(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_outputs : 0;
}

int32_t kiln_artifact_num_nodes(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_nodes : 0;
}

static KilnStatus* io_info(const KilnArtifact* artifact, const KilnPlanIO* ios, int32_t count,
                           const char* what, int32_t index, const char** name, DLTensor* info) {
  if (name != NULL) *name = NULL;
  if (info != NULL) memset(info, 0, sizeof *info);
  if (artifact == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_%s_info: artifact is NULL",
                              what);
  }
  if (index < 0 || index >= count) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: %s index %d out of range (the model has %d)",
                              artifact->path, what, (int)index, (int)count);
  }
  const KilnPlanIO* io = &ios[index];
  const KilnPlanEntry* pe = &artifact->entries[io->entry_id];
  if (name != NULL) *name = io->name;
  if (info != NULL) {
    info->data = NULL;
    info->device.device_type = kDLCPU;
    info->device.device_id = 0;
    info->ndim = pe->ndim;
    info->dtype = pe->dtype;
    info->shape = artifact->shapes + pe->shape_offset;
    info->strides = NULL;
    info->byte_offset = 0;
  }
  return NULL;
}

KilnStatus* kiln_artifact_input_info(const KilnArtifact* artifact, int32_t index, const char** name,
                                     DLTensor* info) {
  return io_info(artifact, artifact != NULL ? artifact->inputs : NULL,
                 artifact != NULL ? artifact->num_inputs : 0, "input", index, name, info);
}

KilnStatus* kiln_artifact_output_info(const KilnArtifact* artifact, int32_t index,
                                      const char** name, DLTensor* info) {
  return io_info(artifact, artifact != NULL ? artifact->outputs : NULL,
                 artifact != NULL ? artifact->num_outputs : 0, "output", index, name, info);
}

/* Index of the input or output (`what`) named `name` in `list`. */
static KilnStatus* io_index(const KilnArtifact* artifact, const KilnPlanIO* list, int32_t count,
                            const char* what, const char* fn, const char* name, int32_t* index) {
  if (index != NULL) *index = -1;
  if (artifact == NULL || name == NULL || index == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              artifact == NULL ? "artifact" : (name == NULL ? "name" : "index"));
  }
  for (int32_t i = 0; i < count; ++i) {
    if (strcmp(list[i].name, name) == 0) {
      *index = i;
      return NULL;
    }
  }
  char names[1024];
  size_t used = 0;
  names[0] = '\0';
  for (int32_t i = 0; i < count && used + 1 < sizeof names; ++i) {
    int n = snprintf(names + used, sizeof names - used, "%s'%s'", i == 0 ? "" : ", ",
                     list[i].name);
    if (n < 0) break;
    used += (size_t)n;
    if (used >= sizeof names) used = sizeof names - 1;
  }
  if (count == 0) {
    return kiln_status_create(KILN_NOT_FOUND, "%s: no %s named '%s' (the model has no %ss)",
                              artifact->path, what, name, what);
  }
  return kiln_status_create(KILN_NOT_FOUND, "%s: no %s named '%s'; the %ss are: %s",
                            artifact->path, what, name, what, names);
}

KilnStatus* kiln_artifact_input_index(const KilnArtifact* artifact, const char* name,
                                      int32_t* index) {
  return io_index(artifact, artifact != NULL ? artifact->inputs : NULL,
                  artifact != NULL ? artifact->num_inputs : 0, "input",
                  "kiln_artifact_input_index", name, index);
}

KilnStatus* kiln_artifact_output_index(const KilnArtifact* artifact, const char* name,
                                       int32_t* index) {
  return io_index(artifact, artifact != NULL ? artifact->outputs : NULL,
                  artifact != NULL ? artifact->num_outputs : 0, "output",
                  "kiln_artifact_output_index", name, index);
}

void kiln_artifact_memory_stats(const KilnArtifact* artifact, uint64_t* arena_bytes,
                                uint64_t* naive_bytes) {
  if (arena_bytes != NULL) *arena_bytes = artifact != NULL ? artifact->arena_bytes : 0;
  if (naive_bytes != NULL) *naive_bytes = artifact != NULL ? artifact->naive_bytes : 0;
}
