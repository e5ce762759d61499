/* File: runtime_c/include/kiln/status.h
 *
 * The status object of every kiln_* call that can fail (DESIGN.md §7):
 * NULL means success; otherwise a heap object with a code and a message that
 * the caller owns and releases with kiln_status_free.
 *
 *   KilnStatus* st = kiln_artifact_load("model.so", &artifact);
 *   if (st != NULL) {
 *     fprintf(stderr, "%s\n", kiln_status_message(st));
 *     kiln_status_free(st);
 *   }
 *
 * When even the status cannot be allocated, a static "out of memory" status
 * is returned; kiln_status_free ignores it. Thread-safe.
 */
#ifndef KILN_STATUS_H_
#define KILN_STATUS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes follow absl::StatusCode numbering so the C++ side maps them 1:1. */
typedef enum {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 3,  /* a bad argument: NULL, wrong shape/dtype, bad name */
  KILN_NOT_FOUND = 5,         /* a file, symbol, input or output that does not exist */
  KILN_FAILED_PRECONDITION = 9, /* e.g. run before every input is set */
  KILN_OUT_OF_RANGE = 11,     /* an index past the end */
  KILN_UNIMPLEMENTED = 12,    /* a feature this runtime does not have */
  KILN_INTERNAL = 13,         /* a kernel failed, a system call failed */
  KILN_RESOURCE_EXHAUSTED = 8, /* out of memory */
  KILN_DATA_LOSS = 15         /* a corrupt, truncated or foreign artifact */
} KilnStatusCode;

typedef struct KilnStatus KilnStatus;

/* A new status with `code` and a printf-formatted message (truncated to 4095
 * bytes). code KILN_OK gives NULL. */
KilnStatus* kiln_status_create(KilnStatusCode code, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* KILN_OK for NULL. */
KilnStatusCode kiln_status_code(const KilnStatus* status);
/* "" for NULL. Valid until the status is freed. */
const char* kiln_status_message(const KilnStatus* status);
/* "OK", "INVALID_ARGUMENT", ... */
const char* kiln_status_code_name(KilnStatusCode code);
/* Accepts NULL and the static out-of-memory status. */
void kiln_status_free(KilnStatus* status);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_STATUS_H_ */
