/* File: runtime_c/loader.c
 *
 * kiln_artifact_load and the artifact accessors of kiln/runtime.h.
 *
 * The steps of docs/artifact.md ("What the loader checks"), in order:
 *  1-4  the file is opened once (a regular file, checked on the descriptor)
 *       and mapped read-only; kiln_artifact_validate_image (artifact_blob.c)
 *       checks the ELF symbol, the header, the whole-file checksum, the
 *       section table and every PARAMS entry; kiln_elf_check_load_code
 *       (elf_load_check.c) refuses a library whose dlopen would run any of
 *       its code (constructors, destructors, IFUNC resolvers) or pull in a
 *       library by a path of its choosing.
 *  5    META and GRAPH are copied into NUL-terminated buffers, parsed with
 *       cJSON and checked field by field (the CPU features META records
 *       included: cpu_features.c); the immutable plan (entries, storages,
 *       arena offsets, inputs, outputs) is built from them.
 *  6    only then the library is dlopen'ed (RTLD_NOW | RTLD_LOCAL) through
 *       /proc/self/fd/N of the descriptor validated, so the file dlopen maps
 *       is the file checked (a path renamed or replaced meanwhile is not
 *       reopened); every func_name is resolved (and must be defined by the
 *       library itself); the mapped `kiln_artifact` blob must be 64-byte
 *       aligned and equal, byte for byte, to the blob validated in steps 1-5
 *       (so the file was not rewritten in place in between); parameters are
 *       then used in place in that mapping and the validation mapping is
 *       unmapped.
 *
 * The artifact is reference counted: the caller's reference (released by
 * kiln_artifact_release) and one per session (kiln_session_create takes it,
 * kiln_session_release drops it), so an artifact released before its
 * sessions lives until the last of them is released.
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
#include "runtime_c/device_code.h"
#include "runtime_c/elf_load_check.h"
#include "runtime_c/handles.h"
#include "runtime_c/vm_program.h"
#include "runtime_c/hmac_sha256.h"
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

static void close_library(KilnArtifact* art);

static void artifact_free(KilnArtifact* art) {
  if (art == NULL) return;
  if (art->dl_handle != NULL || art->file != NULL) close_library(art);
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
  kiln_vm_program_free(art->vm);
  kiln_device_code_free(art->device_code);
  free(art->vm_device_kernels);
  free(art->vm_constants);
  free(art->vm_constant_shapes);
  free(art->vm_io_shapes);
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

/* The files loaded, by device and inode, each with the descriptor its
 * library was dlopen'ed through (/proc/self/fd/<fd>). The dynamic linker
 * knows a library by the names it was opened with and reuses a loaded one
 * whose name matches: so a file is always opened through one descriptor,
 * kept open until the last artifact of that file is released, and its
 * number is never another file's name meanwhile. */
struct KilnLoadedFile {
  uint64_t dev, ino;
  int fd;
  int32_t users; /* artifacts holding a dlopen of it */
  struct KilnLoadedFile* next;
};

static pthread_mutex_t g_files_mu = PTHREAD_MUTEX_INITIALIZER;
static KilnLoadedFile* g_files = NULL;

/* dlclose, then the file's descriptor when this was its last artifact. */
static void close_library(KilnArtifact* art) {
  pthread_mutex_lock(&g_files_mu);
  if (art->dl_handle != NULL) dlclose(art->dl_handle);
  art->dl_handle = NULL;
  KilnLoadedFile* file = art->file;
  if (file != NULL && --file->users == 0) {
    for (KilnLoadedFile** p = &g_files; *p != NULL; p = &(*p)->next) {
      if (*p == file) {
        *p = file->next;
        break;
      }
    }
    close(file->fd);
    free(file);
  }
  art->file = NULL;
  pthread_mutex_unlock(&g_files_mu);
}

static KilnStatus* open_library(Loader* L) {
  KilnArtifact* art = L->art;
  /* The descriptor validated, not the path again: a path swapped for
   * another file after validation is never opened (and a path without '/'
   * never makes dlopen search the library path). */
  char dl_path[64];
  pthread_mutex_lock(&g_files_mu);
  KilnLoadedFile* file = NULL;
  for (KilnLoadedFile* f = g_files; f != NULL; f = f->next) {
    if (f->dev == L->st_dev && f->ino == L->st_ino) file = f;
  }
  if (file == NULL) {
    file = (KilnLoadedFile*)calloc(1, sizeof *file);
    if (file == NULL) {
      pthread_mutex_unlock(&g_files_mu);
      return kiln_loader_oom(L);
    }
    file->dev = L->st_dev;
    file->ino = L->st_ino;
    file->fd = L->fd; /* the registry owns the descriptor from here */
    L->fd = -1;
    file->next = g_files;
    g_files = file;
  }
  file->users += 1;
  art->file = file;
  (void)snprintf(dl_path, sizeof dl_path, "/proc/self/fd/%d", file->fd);
  struct stat proc_sb;
  if (stat(dl_path, &proc_sb) != 0 || (uint64_t)proc_sb.st_dev != L->st_dev ||
      (uint64_t)proc_sb.st_ino != L->st_ino) {
    pthread_mutex_unlock(&g_files_mu);
    return kiln_lerr(L, KILN_FAILED_PRECONDITION,
                     "cannot load the validated file through %s (is /proc mounted?): the loader "
                     "never reopens an artifact by its path after validating it",
                     dl_path);
  }
  (void)dlerror();
  art->dl_handle = dlopen(dl_path, RTLD_NOW | RTLD_LOCAL);
  const char* why = art->dl_handle == NULL ? dlerror() : NULL;
  KilnStatus* st = art->dl_handle == NULL
                       ? kiln_lerr(L, KILN_INTERNAL, "dlopen failed: %s",
                                   why != NULL ? why : "(no message)")
                       : NULL;
  pthread_mutex_unlock(&g_files_mu);
  if (st != NULL) return st;

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
                "validated %016llx): the file changed while loading (or the process had "
                "already loaded another library as %s)",
                (unsigned long long)header.checksum, (unsigned long long)L->view.header.checksum,
                dl_path);
  }
  Dl_info blob_info;
  if (dladdr(mapped, &blob_info) == 0) {
    return kiln_lerr(L, KILN_INTERNAL, "dladdr failed for symbol '%s'", KILN_ARTIFACT_SYMBOL);
  }

  /* Kernels: every func_name resolves, to a function of this library. */
  char label[320];
  const char* last_name = NULL;
  KilnKernelFn last_fn = NULL;
  /* A GPU artifact's kernels are in DEVICE_CODE (checked at step 5), read
   * in place from the mapping. */
  if (art->device_code != NULL) art->device_section = mapped + art->device_code_offset;
  for (int32_t n = 0; n < art->num_nodes && art->device_code == NULL; ++n) {
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

  if (art->vm != NULL) {
    KilnStatus* st = kiln_loader_resolve_vm(L, mapped, blob_info.dli_fbase);
    if (st != NULL) return st;
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

/* Reads `options` (NULL: none) into *opts and checks the keyed digest's
 * fields. */
static KilnStatus* read_load_options(const KilnArtifactLoadOptions* options,
                                     KilnArtifactLoadOptions* opts) {
  static const char fn[] = "kiln_artifact_load_with";
  memset(opts, 0, sizeof *opts);
  if (options == NULL) return NULL;
  if (options->struct_size < sizeof(size_t)) {
    return kiln_status_create(
        KILN_INVALID_ARGUMENT,
        "%s: options->struct_size is %zu; set it to sizeof(KilnArtifactLoadOptions)", fn,
        options->struct_size);
  }
  size_t n = options->struct_size < sizeof *opts ? options->struct_size : sizeof *opts;
  memcpy(opts, options, n);
  if ((opts->hmac_key == NULL) != (opts->expected_hmac_sha256 == NULL)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: options->%s is set but options->%s is NULL (a keyed digest "
                              "check needs both)",
                              fn, opts->hmac_key != NULL ? "hmac_key" : "expected_hmac_sha256",
                              opts->hmac_key != NULL ? "expected_hmac_sha256" : "hmac_key");
  }
  if (opts->hmac_key != NULL && opts->hmac_key_size == 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: options->hmac_key_size is 0 (an empty key proves nothing)", fn);
  }
  return NULL;
}

/* The keyed digest check (before anything of the image is parsed). */
static KilnStatus* check_keyed_digest(const char* path, const KilnArtifactLoadOptions* opts,
                                      const uint8_t* image, uint64_t image_size) {
  if (opts->hmac_key == NULL) return NULL;
  uint8_t mac[KILN_SHA256_SIZE];
  kiln_hmac_sha256(opts->hmac_key, opts->hmac_key_size, image, (size_t)image_size, mac);
  if (!kiln_digest_equal(mac, opts->expected_hmac_sha256, KILN_SHA256_SIZE)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: refusing to load: the file's HMAC-SHA-256 does not match the "
                              "expected digest (a different or modified file, or another key)",
                              path);
  }
  return NULL;
}

KilnStatus* kiln_artifact_load(const char* path, KilnArtifact** out) {
  return kiln_artifact_load_with(path, NULL, out);
}

KilnStatus* kiln_artifact_load_with(const char* path, const KilnArtifactLoadOptions* options,
                                    KilnArtifact** out) {
  if (out != NULL) *out = NULL;
  if (path == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_load: %s is NULL",
                              path == NULL ? "path" : "out");
  }
  KilnArtifactLoadOptions opts;
  {
    KilnStatus* bad = read_load_options(options, &opts);
    if (bad != NULL) return bad;
  }
  Loader L;
  memset(&L, 0, sizeof L);
  L.path = path;
  L.fd = -1;
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
  if (image == MAP_FAILED) {
    int err = errno;
    close(fd);
    return kiln_status_create(KILN_INTERNAL, "%s: cannot map: %s", path, strerror(err));
  }
  /* Kept open: dlopen maps this very file (step 6), through this descriptor
   * or the one an earlier load of the same file registered. */
  L.fd = fd;
  L.st_dev = (uint64_t)sb.st_dev;
  L.st_ino = (uint64_t)sb.st_ino;

  /* Step 0 (with a keyed digest): the bytes are the expected ones. */
  st = check_keyed_digest(path, &opts, image, image_size);
  if (st != NULL) goto fail;

  L.art = (KilnArtifact*)calloc(1, sizeof(KilnArtifact));
  if (L.art == NULL) {
    st = kiln_loader_oom(&L);
    goto fail;
  }
  atomic_init(&L.art->refs, 1);
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
  /* Nothing of the library may run when it is dlopen'ed (step 6). */
  {
    KilnStatus* elf = kiln_elf_check_load_code(image, image_size);
    if (elf != NULL) {
      st = kiln_status_create(kiln_status_code(elf), "%s: %s", path, kiln_status_message(elf));
      kiln_status_free(elf);
      goto fail;
    }
  }

  /* Step 5. */
  st = kiln_loader_parse_section(&L, "META", L.view.meta, L.view.meta_size, &L.art->meta_text, &L.meta);
  if (L.view.vm != NULL) {
    /* A VM artifact: the program instead of a graph. */
    if (st == NULL) st = kiln_loader_check_meta(&L);
    if (st == NULL) st = kiln_loader_check_vm(&L);
    if (st == NULL && L.view.device_code != NULL) st = kiln_loader_check_device_vm(&L);
  } else {
    if (st == NULL)
      st = kiln_loader_parse_section(&L, "GRAPH", L.view.graph, L.view.graph_size, &L.art->graph_text, &L.graph);
    if (st == NULL) st = kiln_loader_check_meta(&L);
    if (st == NULL) st = kiln_loader_check_graph(&L);
    if (st == NULL && L.view.device_code != NULL) st = kiln_loader_check_device(&L);
  }
  if (st != NULL) goto fail;
  cJSON_Delete(L.meta);
  L.meta = NULL;
  cJSON_Delete(L.graph);
  L.graph = NULL;

  /* Step 6. */
  st = open_library(&L);
  if (st != NULL) goto fail;

  munmap(image, (size_t)image_size);
  if (L.fd >= 0) close(L.fd); /* the registry kept its own (an earlier load's) */
  free(L.row_ptr);
  free(L.null_kind);
  free(L.param_of);
  free(L.head_entries);
  if (kiln_handle_add(KILN_HANDLE_ARTIFACT, L.art) != 0) {
    KilnStatus* oom = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", path);
    artifact_free(L.art);
    return oom;
  }
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
  if (L.fd >= 0) close(L.fd);
  return st;
}

void kiln_artifact_retain(const KilnArtifact* artifact) {
  KilnArtifact* art = (KilnArtifact*)(uintptr_t)artifact;
  atomic_fetch_add_explicit(&art->refs, 1, memory_order_relaxed);
}

void kiln_artifact_unref(const KilnArtifact* artifact) {
  KilnArtifact* art = (KilnArtifact*)(uintptr_t)artifact;
  if (art == NULL) return;
  /* acq_rel: every session's use of the plan happens before the free. */
  if (atomic_fetch_sub_explicit(&art->refs, 1, memory_order_acq_rel) == 1) artifact_free(art);
}

/* Drops the caller's reference; the artifact lives on while sessions hold
 * theirs. The registry of live handles (runtime_c/handles.h) knows whether
 * the caller's reference is still there: a second release, or the release
 * of something that is not an artifact, is reported and ignored, and never
 * touches the memory (which may be freed). */
void kiln_artifact_release(KilnArtifact* artifact) {
  if (artifact == NULL) return;
  if (!kiln_handle_remove(KILN_HANDLE_ARTIFACT, artifact)) {
    kiln_handle_report_dead_release("kiln_artifact_release", KILN_HANDLE_ARTIFACT, artifact);
    return;
  }
  kiln_artifact_unref(artifact);
}

KilnStatus* kiln_artifact_check_live(const KilnArtifact* artifact, const char* fn) {
  if (artifact == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: artifact is NULL", fn);
  }
  if (!kiln_handle_live(KILN_HANDLE_ARTIFACT, artifact)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: artifact %p is not live (used after kiln_artifact_release, or "
                              "not made by kiln_artifact_load)",
                              fn, (const void*)artifact);
  }
  return NULL;
}

/* The accessors that return values treat a handle that is not live as NULL. */
static const KilnArtifact* live_or_null(const KilnArtifact* artifact) {
  return kiln_handle_live(KILN_HANDLE_ARTIFACT, artifact) ? artifact : NULL;
}

/* ------------------------------------------------------------------------ */
/* Accessors                                                                  */
/* ------------------------------------------------------------------------ */

const char* kiln_artifact_target(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL ? artifact->target : "";
}

const char* kiln_artifact_producer(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL ? artifact->producer : "";
}

const char* kiln_artifact_graph_json(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL && artifact->graph_text != NULL ? artifact->graph_text : "";
}

const char* kiln_artifact_device_code_json(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL && artifact->device_code != NULL ? artifact->device_code->json : "";
}

int32_t kiln_artifact_num_inputs(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL ? artifact->num_inputs : 0;
}

int32_t kiln_artifact_num_outputs(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL ? artifact->num_outputs : 0;
}

int32_t kiln_artifact_num_nodes(const KilnArtifact* artifact) {
  artifact = live_or_null(artifact);
  return artifact != NULL ? artifact->num_nodes : 0;
}

int32_t kiln_artifact_input_is_sequence(const KilnArtifact* artifact, int32_t index) {
  artifact = live_or_null(artifact);
  if (artifact == NULL || artifact->vm == NULL || index < 0 || index >= artifact->num_inputs) return 0;
  return artifact->vm->inputs[index].sequence ? 1 : 0;
}

int32_t kiln_artifact_output_is_sequence(const KilnArtifact* artifact, int32_t index) {
  artifact = live_or_null(artifact);
  if (artifact == NULL || artifact->vm == NULL || index < 0 || index >= artifact->num_outputs) return 0;
  return artifact->vm->outputs[index].sequence ? 1 : 0;
}

int32_t kiln_artifact_input_is_optional(const KilnArtifact* artifact, int32_t index) {
  artifact = live_or_null(artifact);
  if (artifact == NULL || artifact->vm == NULL || index < 0 || index >= artifact->num_inputs) return 0;
  return artifact->vm->inputs[index].optional ? 1 : 0;
}

int32_t kiln_artifact_output_is_optional(const KilnArtifact* artifact, int32_t index) {
  artifact = live_or_null(artifact);
  if (artifact == NULL || artifact->vm == NULL || index < 0 || index >= artifact->num_outputs) return 0;
  return artifact->vm->outputs[index].optional ? 1 : 0;
}

static KilnStatus* io_info(const KilnArtifact* artifact, int is_input, int32_t index,
                           const char** name, DLTensor* info) {
  const char* what = is_input ? "input" : "output";
  if (name != NULL) *name = NULL;
  if (info != NULL) memset(info, 0, sizeof *info);
  char fn[64];
  snprintf(fn, sizeof fn, "kiln_artifact_%s_info", what);
  KilnStatus* dead = kiln_artifact_check_live(artifact, fn);
  if (dead != NULL) return dead;
  /* Only now is the artifact known to be live memory. */
  const KilnPlanIO* ios = is_input ? artifact->inputs : artifact->outputs;
  const int32_t count = is_input ? artifact->num_inputs : artifact->num_outputs;
  if (index < 0 || index >= count) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: %s index %d out of range (the model has %d)",
                              artifact->path, what, (int)index, (int)count);
  }
  const KilnPlanIO* io = &ios[index];
  if (name != NULL) *name = io->name;
  if (info != NULL) kiln_artifact_io_desc(artifact, io, info);
  return NULL;
}

void kiln_artifact_io_desc(const KilnArtifact* artifact, const KilnPlanIO* io, DLTensor* info) {
  memset(info, 0, sizeof *info);
  info->device.device_type = kDLCPU;
  if (artifact->vm != NULL) {
    const KilnVmType* t = io->is_input ? &artifact->vm->inputs[io->entry_id]
                                       : &artifact->vm->outputs[io->entry_id];
    info->ndim = t->ndim;
    info->dtype = t->dtype;
    info->shape = artifact->vm_io_shapes +
                  (size_t)KILN_ARTIFACT_MAX_NDIM *
                      (size_t)(io->is_input ? io->entry_id : (int32_t)artifact->vm->num_inputs + io->entry_id);
    return;
  }
  const KilnPlanEntry* pe = &artifact->entries[io->entry_id];
  info->ndim = pe->ndim;
  info->dtype = pe->dtype;
  info->shape = artifact->shapes + pe->shape_offset;
}

KilnStatus* kiln_artifact_input_info(const KilnArtifact* artifact, int32_t index, const char** name,
                                     DLTensor* info) {
  return io_info(artifact, 1, index, name, info);
}

KilnStatus* kiln_artifact_output_info(const KilnArtifact* artifact, int32_t index,
                                      const char** name, DLTensor* info) {
  return io_info(artifact, 0, index, name, info);
}

/* Index of the input or output (`what`) named `name` in `list`. */
static KilnStatus* io_index(const KilnArtifact* artifact, int is_input, const char* fn,
                            int check_live, const char* name, int32_t* index) {
  const char* what = is_input ? "input" : "output";
  if (index != NULL) *index = -1;
  if (artifact == NULL || name == NULL || index == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              artifact == NULL ? "artifact" : (name == NULL ? "name" : "index"));
  }
  /* A session's own lookups (kiln_artifact_find_input) skip this: its
   * reference keeps the artifact alive after the caller's release. */
  if (check_live) {
    KilnStatus* dead = kiln_artifact_check_live(artifact, fn);
    if (dead != NULL) return dead;
  }
  const KilnPlanIO* list = is_input ? artifact->inputs : artifact->outputs;
  const int32_t count = is_input ? artifact->num_inputs : artifact->num_outputs;
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
  return io_index(artifact, 1, "kiln_artifact_input_index", 1, name, index);
}

KilnStatus* kiln_artifact_find_input(const KilnArtifact* artifact, const char* name,
                                     int32_t* index) {
  return io_index(artifact, 1, "kiln_artifact_find_input", 0, name, index);
}

KilnStatus* kiln_artifact_output_index(const KilnArtifact* artifact, const char* name,
                                       int32_t* index) {
  return io_index(artifact, 0, "kiln_artifact_output_index", 1, name, index);
}

void kiln_artifact_memory_stats(const KilnArtifact* artifact, uint64_t* arena_bytes,
                                uint64_t* naive_bytes) {
  artifact = live_or_null(artifact);
  if (arena_bytes != NULL) *arena_bytes = artifact != NULL ? artifact->arena_bytes : 0;
  if (naive_bytes != NULL) *naive_bytes = artifact != NULL ? artifact->naive_bytes : 0;
}
