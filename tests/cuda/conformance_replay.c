/* File: tests/cuda/conformance_replay.c — exported ONNX conformance cases run
 * through the runtime alone (conformance_replay.h). */
#define _POSIX_C_SOURCE 200809L

#include "tests/cuda/conformance_replay.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"

enum { kMaxLine = 16384, kMaxTokens = 4096, kMaxSets = 256, kWhy = 1024 };

/* ------------------------------------------------------------ one case */

typedef struct {
  const char* dir;
  char why[kWhy];
  int device_error; /* a runtime status (not a wrong value): end the child */
} Case;

static int failf(Case* c, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  for (char* p = c->why; *p; ++p) {
    if (*p == '\n' || *p == '\r') *p = ' ';
  }
  return 1;
}

/* Fails the case with the status's text; frees it. */
static int fail_status(Case* c, const char* what, KilnStatus* st) {
  failf(c, "%s: %s: %s", what, kiln_status_code_name(kiln_status_code(st)), kiln_status_message(st));
  kiln_status_free(st);
  c->device_error = 1;
  return 1;
}

static int64_t count(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

static size_t elem_bytes(DLDataType t) { return ((size_t)t.bits * t.lanes + 7) / 8; }

static int is_float(DLDataType t) { return t.code == kDLFloat || t.code == kDLBfloat; }

static double float_at(const DLTensor* t, int64_t i) {
  const char* p = (const char*)t->data + t->byte_offset;
  if (t->dtype.code == kDLBfloat) {
    uint32_t bits = (uint32_t)((const uint16_t*)p)[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  if (t->dtype.bits == 64) return ((const double*)p)[i];
  if (t->dtype.bits == 32) return ((const float*)p)[i];
  uint16_t h = ((const uint16_t*)p)[i];
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static void dtype_text(DLDataType t, char* buf, size_t n) {
  const char* kind = t.code == kDLFloat ? "float" : t.code == kDLBfloat ? "bfloat" : t.code == kDLInt ? "int"
                     : t.code == kDLUInt ? "uint" : t.code == 6 ? "bool" : "code";
  (void)snprintf(buf, n, "%s%d", kind, (int)t.bits);
}

static void shape_text(const DLTensor* t, char* buf, size_t n) {
  size_t at = 0;
  at += (size_t)snprintf(buf + at, n - at, "[");
  for (int d = 0; d < t->ndim && at < n; ++d) {
    at += (size_t)snprintf(buf + at, n - at, d ? ", %lld" : "%lld", (long long)t->shape[d]);
  }
  if (at < n) (void)snprintf(buf + at, n - at, "]");
}

/* `got` (CPU memory) against `want`: run_conformance's rule
 * (tests/onnx/conformance_lib.h CompareArrays). `want` read from a .npy whose
 * bfloat16 came back as uint16 is taken as bfloat16 when `got` is. */
static int compare(Case* c, const char* what, const DLTensor* got, DLTensor want, double rtol, double atol) {
  if (got->dtype.code == kDLBfloat && got->dtype.bits == 16 && want.dtype.code == kDLUInt &&
      want.dtype.bits == 16) {
    want.dtype = got->dtype;
  }
  char a[64], b[64];
  if (got->dtype.code != want.dtype.code || got->dtype.bits != want.dtype.bits ||
      got->dtype.lanes != want.dtype.lanes) {
    dtype_text(got->dtype, a, sizeof a);
    dtype_text(want.dtype, b, sizeof b);
    return failf(c, "%s: dtype %s, expected %s", what, a, b);
  }
  int same = got->ndim == want.ndim;
  for (int d = 0; same && d < got->ndim; ++d) same = got->shape[d] == want.shape[d];
  if (!same) {
    char sa[256], sb[256];
    shape_text(got, sa, sizeof sa);
    shape_text(&want, sb, sizeof sb);
    return failf(c, "%s: shape %s, expected %s", what, sa, sb);
  }
  const int64_t n = count(&want);
  const size_t eb = elem_bytes(want.dtype);
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    int ok;
    if (is_float(want.dtype)) {
      const double g = float_at(got, i), w = float_at(&want, i);
      if (isnan(g) || isnan(w)) {
        ok = isnan(g) && isnan(w);
      } else if (isinf(g) || isinf(w)) {
        ok = g == w;
      } else {
        const double err = fabs(g - w);
        ok = err <= atol + rtol * fabs(w);
        if (err > worst) worst = err;
      }
    } else {
      ok = memcmp((const char*)got->data + got->byte_offset + (size_t)i * eb,
                  (const char*)want.data + want.byte_offset + (size_t)i * eb, eb) == 0;
    }
    if (!ok) {
      ++bad;
      if (first < 0) first = i;
    }
  }
  if (bad == 0) return 0;
  if (is_float(want.dtype)) {
    return failf(c, "%s: element %lld = %.9g, expected %.9g (%lld of %lld differ; max abs err %.3g; rtol %g atol %g)",
                 what, (long long)first, float_at(got, first), float_at(&want, first), (long long)bad,
                 (long long)n, worst, rtol, atol);
  }
  return failf(c, "%s: element %lld differs (%lld of %lld differ; %s)", what, (long long)first, (long long)bad,
               (long long)n, (dtype_text(want.dtype, a, sizeof a), a));
}

/* Splits `line` at spaces in place. */
static int tokens(char* line, char** tok, int max) {
  int n = 0;
  for (char* p = strtok(line, " \t\r"); p != NULL && n < max; p = strtok(NULL, " \t\r")) tok[n++] = p;
  return n;
}

static int hexval(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

/* %XX decoding in place; -1 on a malformed escape. */
static int decode_name(char* s) {
  char* out = s;
  for (const char* p = s; *p; ++p) {
    if (*p != '%') {
      *out++ = *p;
      continue;
    }
    const int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
    if (lo < 0) return -1;
    *out++ = (char)(hi * 16 + lo);
    p += 2;
  }
  *out = '\0';
  return 0;
}

/* A value's files after "tensor FILE" / "sequence N FILE..." / "none":
 * *n_files set; returns the index of the first file token, or -1. */
static int value_files(char** tok, int ntok, int at, int* n_files, int* is_none, int* is_seq) {
  *is_none = *is_seq = 0;
  *n_files = 0;
  if (at >= ntok) return -1;
  if (strcmp(tok[at], "none") == 0) {
    *is_none = 1;
    return ntok == at + 1 ? at + 1 : -1;
  }
  if (strcmp(tok[at], "tensor") == 0) {
    *n_files = 1;
    return ntok == at + 2 ? at + 1 : -1;
  }
  if (strcmp(tok[at], "sequence") == 0 && at + 1 < ntok) {
    char* end = NULL;
    const long n = strtol(tok[at + 1], &end, 10);
    if (*end != '\0' || n < 0 || ntok != at + 2 + n) return -1;
    *is_seq = 1;
    *n_files = (int)n;
    return at + 2;
  }
  return -1;
}

/* Reads DIR/name into a fresh npy tensor. */
static int read_npy(Case* c, const char* name, KilnNpyTensor** out) {
  char path[4096];
  (void)snprintf(path, sizeof path, "%s/%s", c->dir, name);
  KilnStatus* st = kiln_npy_read(path, out);
  if (st == NULL) return 0;
  failf(c, "%s: %s", name, kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}

typedef struct {
  KilnArtifact* artifact;
  char model[256];
  KilnSession* session;
  KilnNpyTensor* owned[kMaxTokens];
  int num_owned;
} SetState;

static void set_state_clear(SetState* s) {
  for (int i = 0; i < s->num_owned; ++i) kiln_npy_release(s->owned[i]);
  s->num_owned = 0;
  kiln_session_release(s->session);
  s->session = NULL;
}

/* An input's tensors, their dtype the artifact's (bfloat16 read as uint16). */
static int load_input(Case* c, SetState* s, const char* name, char** files, int n, DLTensor* out) {
  int32_t index = -1;
  KilnStatus* st = kiln_artifact_input_index(s->artifact, name, &index);
  if (st != NULL) return fail_status(c, "input", st);
  const char* ignored = NULL;
  DLTensor info;
  st = kiln_artifact_input_info(s->artifact, index, &ignored, &info);
  if (st != NULL) return fail_status(c, "input info", st);
  for (int e = 0; e < n; ++e) {
    if (s->num_owned >= kMaxTokens) return failf(c, "too many tensors");
    KilnNpyTensor* t = NULL;
    if (read_npy(c, files[e], &t) != 0) return 1;
    s->owned[s->num_owned++] = t;
    if (info.dtype.code == kDLBfloat && t->tensor.dtype.code == kDLUInt && t->tensor.dtype.bits == 16) {
      t->tensor.dtype = info.dtype;
    }
    out[e] = t->tensor;
  }
  return 0;
}

/* Output k (a tensor) into host memory and compared. */
static int check_tensor_output(Case* c, SetState* s, int32_t k, const char* file, const char* what, double rtol,
                               double atol) {
  const DLTensor* y = NULL;
  KilnStatus* st = kiln_session_get_output(s->session, k, &y);
  if (st != NULL) return fail_status(c, what, st);
  KilnNpyTensor* want = NULL;
  if (read_npy(c, file, &want) != 0) return 1;
  int rc;
  if (y->device.device_type == kDLCUDA) {
    DLTensor host = *y;
    host.device.device_type = kDLCPU;
    host.device.device_id = 0;
    host.strides = NULL;
    host.byte_offset = 0;
    host.data = malloc((size_t)count(y) * elem_bytes(y->dtype) + 1);
    if (host.data == NULL) {
      kiln_npy_release(want);
      return failf(c, "%s: out of memory", what);
    }
    st = kiln_session_copy_output(s->session, k, &host);
    rc = st != NULL ? fail_status(c, what, st) : compare(c, what, &host, want->tensor, rtol, atol);
    free(host.data);
  } else {
    rc = compare(c, what, y, want->tensor, rtol, atol);
  }
  kiln_npy_release(want);
  return rc;
}

static int check_sequence_output(Case* c, SetState* s, int32_t k, char** files, int n, const char* what,
                                 double rtol, double atol) {
  int32_t len = 0;
  KilnStatus* st = kiln_session_get_output_sequence_length(s->session, k, &len);
  if (st != NULL) return fail_status(c, what, st);
  if (len != n) return failf(c, "%s: a sequence of %d tensors, expected %d", what, (int)len, n);
  for (int32_t e = 0; e < len; ++e) {
    const DLTensor* y = NULL;
    st = kiln_session_get_output_sequence_element(s->session, k, e, &y);
    if (st != NULL) return fail_status(c, what, st);
    if (y->device.device_type != kDLCPU) return failf(c, "%s element %d: not in host memory", what, (int)e);
    KilnNpyTensor* want = NULL;
    if (read_npy(c, files[e], &want) != 0) return 1;
    char elem_what[128];
    (void)snprintf(elem_what, sizeof elem_what, "%s element %d", what, (int)e);
    const int rc = compare(c, elem_what, y, want->tensor, rtol, atol);
    kiln_npy_release(want);
    if (rc != 0) return rc;
  }
  return 0;
}

static int run_set(Case* c, SetState* s, int k, char* text, const KilnSessionOptions* options) {
  char* lines[kMaxTokens];
  int nlines = 0;
  for (char* save = NULL, *l = strtok_r(text, "\n", &save); l != NULL && nlines < kMaxTokens;
       l = strtok_r(NULL, "\n", &save)) {
    lines[nlines++] = l;
  }
  if (nlines < 3 || strcmp(lines[0], "kiln-conformance-set 1") != 0) {
    return failf(c, "set_%d.txt: not a kiln-conformance-set 1 manifest", k);
  }
  char* tok[kMaxTokens];
  int ntok = tokens(lines[1], tok, kMaxTokens);
  if (ntok < 2 || ntok > 3 || strcmp(tok[0], "model") != 0) return failf(c, "set_%d.txt: line 2: expected model", k);
  char path[4096];
  if (strcmp(s->model, tok[1]) != 0) {
    kiln_artifact_release(s->artifact);
    s->artifact = NULL;
    s->model[0] = '\0';
    (void)snprintf(path, sizeof path, "%s/%s", c->dir, tok[1]);
    KilnStatus* st = kiln_artifact_load(path, &s->artifact);
    if (st != NULL) return fail_status(c, tok[1], st);
    (void)snprintf(s->model, sizeof s->model, "%s", tok[1]);
  }
  if (ntok == 3) {
    (void)snprintf(path, sizeof path, "%s/%s", c->dir, tok[2]);
    setenv("KILN_FAKE_CUDA_KERNELS", path, 1);
  }
  ntok = tokens(lines[2], tok, kMaxTokens);
  if (ntok != 3 || strcmp(tok[0], "tolerance") != 0) return failf(c, "set_%d.txt: line 3: expected tolerance", k);
  const double rtol = atof(tok[1]), atol = atof(tok[2]);

  KilnStatus* st = kiln_session_create(s->artifact, options, &s->session);
  if (st != NULL) return fail_status(c, "session", st);
  int32_t outputs_seen = 0;
  const int32_t num_outputs = kiln_artifact_num_outputs(s->artifact);
  for (int l = 3; l < nlines; ++l) {
    ntok = tokens(lines[l], tok, kMaxTokens);
    int nfiles = 0, is_none = 0, is_seq = 0;
    const int files = ntok >= 2 ? value_files(tok, ntok, 2, &nfiles, &is_none, &is_seq) : -1;
    if (files < 0) return failf(c, "set_%d.txt: line %d: malformed", k, l + 1);
    char what[320];
    if (strcmp(tok[0], "input") == 0) {
      if (decode_name(tok[1]) != 0) return failf(c, "set_%d.txt: line %d: bad name", k, l + 1);
      (void)snprintf(what, sizeof what, "set %d: input '%.200s'", k, tok[1]);
      if (is_none) {
        st = kiln_session_set_input_none(s->session, tok[1]);
      } else {
        DLTensor* values = (DLTensor*)calloc((size_t)nfiles + 1, sizeof(DLTensor));
        if (values == NULL) return failf(c, "out of memory");
        if (load_input(c, s, tok[1], tok + files, nfiles, values) != 0) {
          free(values);
          return 1;
        }
        st = is_seq ? kiln_session_set_input_sequence(s->session, tok[1], values, nfiles)
                    : kiln_session_set_input(s->session, tok[1], &values[0]);
        free(values);
      }
      if (st != NULL) return fail_status(c, what, st);
      continue;
    }
    if (strcmp(tok[0], "output") != 0) return failf(c, "set_%d.txt: line %d: unknown directive", k, l + 1);
    if (outputs_seen == 0) {
      st = kiln_session_run(s->session);
      if (st != NULL) {
        (void)snprintf(what, sizeof what, "set %d: run", k);
        return fail_status(c, what, st);
      }
    }
    const int32_t out = (int32_t)atoi(tok[1]);
    if (out != outputs_seen || out >= num_outputs) {
      return failf(c, "set %d: output %d of %d: the manifest and the artifact disagree", k, (int)out,
                   (int)num_outputs);
    }
    ++outputs_seen;
    (void)snprintf(what, sizeof what, "set %d: output %d", k, (int)out);
    if (kiln_artifact_output_is_optional(s->artifact, out)) {
      int32_t none = 0;
      st = kiln_session_get_output_is_none(s->session, out, &none);
      if (st != NULL) return fail_status(c, what, st);
      if ((none != 0) != (is_none != 0)) {
        return failf(c, "%s: %s, expected %s", what, none ? "none" : "a value", is_none ? "none" : "a value");
      }
      if (none) continue;
    } else if (is_none) {
      return failf(c, "%s: expected none, the artifact's output is not an optional", what);
    }
    const int rc = is_seq ? check_sequence_output(c, s, out, tok + files, nfiles, what, rtol, atol)
                          : check_tensor_output(c, s, out, tok[files], what, rtol, atol);
    if (rc != 0) return rc;
  }
  if (outputs_seen != num_outputs) {
    return failf(c, "set %d: the artifact has %d outputs, the manifest %d", k, (int)num_outputs, (int)outputs_seen);
  }
  return 0;
}

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char* buf = (char*)malloc(kMaxLine * 16 + 1);
  size_t n = buf == NULL ? 0 : fread(buf, 1, kMaxLine * 16, f);
  const int too_long = buf != NULL && !feof(f);
  fclose(f);
  if (buf == NULL || too_long) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

/* 0: every data set passes; 1: c->why says what failed. */
static int run_case(Case* c, const KilnSessionOptions* options) {
  SetState s;
  memset(&s, 0, sizeof s);
  int sets = 0, rc = 0;
  for (int k = 0; k < kMaxSets && rc == 0; ++k) {
    char path[4096];
    (void)snprintf(path, sizeof path, "%s/set_%d.txt", c->dir, k);
    if (access(path, F_OK) != 0) continue;
    ++sets;
    char* text = read_text(path);
    rc = text == NULL ? failf(c, "set_%d.txt: cannot read it", k) : run_set(c, &s, k, text, options);
    free(text);
    set_state_clear(&s);
  }
  kiln_artifact_release(s.artifact);
  if (rc == 0 && sets == 0) rc = failf(c, "no set_<k>.txt");
  return rc;
}

/* ---------------------------------------------------------- the driver */

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* The case folders under root, sorted; NULL on an I/O error. */
static char** list_cases(const char* root, int* n) {
  DIR* d = opendir(root);
  if (d == NULL) return NULL;
  int cap = 64;
  char** names = (char**)malloc((size_t)cap * sizeof *names);
  *n = 0;
  for (struct dirent* e = readdir(d); e != NULL && names != NULL; e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    struct stat sb;
    (void)snprintf(path, sizeof path, "%s/%s", root, e->d_name);
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
    if (*n == cap) {
      cap *= 2;
      char** grown = (char**)realloc(names, (size_t)cap * sizeof *names);
      if (grown == NULL) break;
      names = grown;
    }
    names[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  if (names != NULL) qsort(names, (size_t)*n, sizeof *names, by_name);
  return names;
}

/* Holds device `ordinal`'s primary context for the child's life. Each
 * session opens the device and closes it when released, and the driver
 * destroys a primary context when its last holder lets go: without this
 * every case would create and destroy a CUDA context (a tenth of a second
 * or more each on a GPU). The same driver library the runtime opens
 * ($KILN_CUDA_DRIVER, else libcuda.so.1); on any failure, nothing. */
static void hold_primary_context(int ordinal) {
  const char* lib = getenv("KILN_CUDA_DRIVER");
  void* h = dlopen(lib != NULL && *lib != '\0' ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return;
  int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
  int (*cu_device_get)(int*, int) = (int (*)(int*, int))dlsym(h, "cuDeviceGet");
  int (*cu_retain)(void**, int) = (int (*)(void**, int))dlsym(h, "cuDevicePrimaryCtxRetain");
  int dev = 0;
  void* ctx = NULL;
  if (cu_init == NULL || cu_device_get == NULL || cu_retain == NULL || cu_init(0) != 0 ||
      cu_device_get(&dev, ordinal) != 0) {
    return;
  }
  (void)cu_retain(&ctx, dev); /* released when the process ends */
}

/* The child: cases first..n-1 in order, a "B i" line before each and an
 * "R i P" / "R i F why" line after; exits after a case with a runtime
 * status so the next starts afresh. */
static void child_main(int fd, const char* root, char** names, int first, int n, const KilnSessionOptions* o) {
  FILE* out = fdopen(fd, "w");
  if (out == NULL) _exit(2);
  if (o->device_type == kDLCUDA) hold_primary_context(o->device_id);
  for (int i = first; i < n; ++i) {
    fprintf(out, "B %d\n", i);
    fflush(out);
    char dir[4096];
    (void)snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
    Case c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    if (run_case(&c, o) == 0) {
      fprintf(out, "R %d P\n", i);
    } else {
      fprintf(out, "R %d F %s\n", i, c.why);
    }
    fflush(out);
    if (c.device_error) _exit(3);
  }
  _exit(0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int kiln_conformance_replay(const char* root, const char* device, int timeout_s) {
  KilnSessionOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = 1;
  if (strncmp(device, "cuda:", 5) == 0 && device[5] != '\0') {
    o.device_type = kDLCUDA;
    o.device_id = atoi(device + 5);
  } else if (strcmp(device, "cpu") != 0) {
    fprintf(stderr, "device must be cpu or cuda:N, got '%s'\n", device);
    return 2;
  }
  if (timeout_s <= 0) timeout_s = 60;
  int n = 0;
  char** names = list_cases(root, &n);
  if (names == NULL) {
    fprintf(stderr, "conformance: cannot list '%s': %s\n", root, strerror(errno));
    return 2;
  }
  int* passed = (int*)calloc((size_t)n + 1, sizeof(int));
  int next = 0, num_pass = 0, num_fail = 0;
  const double start = now_s();
  while (next < n && passed != NULL) {
    int fds[2];
    if (pipe(fds) != 0) break;
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      break;
    }
    if (pid == 0) {
      close(fds[0]);
      child_main(fds[1], root, names, next, n, &o);
    }
    close(fds[1]);
    FILE* in = fdopen(fds[0], "r");
    int current = -1, done_through = next - 1;
    char line[kMaxLine];
    const char* ended = NULL;
    for (;;) {
      struct pollfd p = {fds[0], POLLIN, 0};
      const int r = poll(&p, 1, timeout_s * 1000);
      if (r == 0) {
        kill(pid, SIGKILL);
        ended = "timed out";
        break;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || fgets(line, sizeof line, in) == NULL) break;
      line[strcspn(line, "\n")] = '\0';
      int i = -1, used = 0;
      if (line[0] == 'B' && sscanf(line, "B %d", &i) == 1) {
        current = i;
        continue;
      }
      if (line[0] != 'R' || sscanf(line, "R %d %n", &i, &used) != 1 || i < 0 || i >= n) continue;
      const char* verdict = line + used;
      if (verdict[0] == 'P') {
        ++num_pass;
        passed[i] = 1;
        printf("PASS %s\n", names[i]);
      } else {
        ++num_fail;
        printf("FAIL %s: %s\n", names[i], verdict[0] == 'F' && verdict[1] == ' ' ? verdict + 2 : verdict);
      }
      fflush(stdout);
      done_through = i;
      current = -1;
    }
    fclose(in);
    int status = 0;
    (void)waitpid(pid, &status, 0);
    if (current >= 0) {
      ++num_fail;
      if (ended != NULL) {
        printf("FAIL %s: %s after %d s\n", names[current], ended, timeout_s);
      } else if (WIFSIGNALED(status)) {
        printf("FAIL %s: crashed (signal %d)\n", names[current], WTERMSIG(status));
      } else {
        printf("FAIL %s: the process ended (exit %d)\n", names[current], WEXITSTATUS(status));
      }
      done_through = current;
    }
    if (done_through < next) {
      /* The child never started a case: do not spin. */
      fprintf(stderr, "conformance: the runner process failed to start (status %d)\n", status);
      break;
    }
    next = done_through + 1;
  }
  const int total = n;
  printf("conformance on %s: %d of %d cases pass, %d fail (%.1f s)\n", device, num_pass, total, total - num_pass,
         now_s() - start);
  for (int i = 0; i < n; ++i) free(names[i]);
  free(names);
  const int complete = passed != NULL && num_pass + num_fail == total;
  free(passed);
  if (!complete) return 2;
  return num_fail == 0 ? 0 : 1;
}
