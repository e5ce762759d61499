/* File: runtime_c/status.c
 *
 * kiln/status.h: a heap object holding a code and a printf-formatted message.
 * One allocation per status (the message is stored right after the struct).
 * When that allocation fails, a static "out of memory" status is returned
 * instead; kiln_status_free recognises it and does nothing.
 */
#include "kiln/status.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest message kept, in bytes (plus a NUL). */
#define KILN_STATUS_MAX_MESSAGE 4095

struct KilnStatus {
  KilnStatusCode code;
  char* message; /* points just past the struct, or to static storage */
};

static char kiln_oom_message[] = "out of memory (while creating a status)";
static KilnStatus kiln_oom_status = {KILN_RESOURCE_EXHAUSTED, kiln_oom_message};

/* Where to cut `s` (at least length + 1 bytes readable) so that keeping
 * [0, result) does not split a UTF-8 character: s[length] is the first byte
 * dropped; while it is a continuation byte (10xxxxxx), step back to the lead
 * byte of its character and drop that too. */
static size_t kiln_utf8_boundary(const char* s, size_t length) {
  size_t cut = length;
  /* Step back over continuation bytes (at most 3) to the lead byte. */
  size_t steps = 0;
  while (cut > 0 && steps < 4 && (((unsigned char)s[cut]) & 0xC0u) == 0x80u) {
    --cut;
    ++steps;
  }
  if (steps >= 4) return length; /* not UTF-8: cut where asked */
  return cut;
}

KilnStatus* kiln_status_create(KilnStatusCode code, const char* format, ...) {
  if (code == KILN_OK) return NULL;
  if (format == NULL) format = "";

  va_list args;
  va_start(args, format);
  va_list args_copy;
  va_copy(args_copy, args);
  int needed = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (needed < 0) needed = 0; /* an encoding error: keep an empty message */

  size_t full = (size_t)needed;
  size_t length = full > KILN_STATUS_MAX_MESSAGE ? KILN_STATUS_MAX_MESSAGE : full;
  /* One spare byte: when truncating, the first dropped byte is kept so that
   * kiln_utf8_boundary can see whether a character was split. */
  KilnStatus* status = (KilnStatus*)malloc(sizeof(KilnStatus) + length + 2);
  if (status == NULL) {
    va_end(args_copy);
    return &kiln_oom_status;
  }
  status->code = code;
  status->message = (char*)(status + 1);
  if (needed > 0) {
    (void)vsnprintf(status->message, length + 2, format, args_copy);
  } else {
    status->message[0] = '\0';
  }
  va_end(args_copy);
  if (full > length) {
    /* Truncated: do not leave half a UTF-8 character at the end. */
    const size_t cut = kiln_utf8_boundary(status->message, length);
    status->message[cut] = '\0';
  }
  return status;
}

KilnStatusCode kiln_status_code(const KilnStatus* status) {
  return status == NULL ? KILN_OK : status->code;
}

const char* kiln_status_message(const KilnStatus* status) {
  return status == NULL ? "" : status->message;
}

const char* kiln_status_code_name(KilnStatusCode code) {
  switch (code) {
    case KILN_OK:
      return "OK";
    case KILN_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case KILN_NOT_FOUND:
      return "NOT_FOUND";
    case KILN_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case KILN_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case KILN_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case KILN_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case KILN_INTERNAL:
      return "INTERNAL";
    case KILN_DATA_LOSS:
      return "DATA_LOSS";
  }
  return "UNKNOWN";
}

void kiln_status_free(KilnStatus* status) {
  if (status == NULL || status == &kiln_oom_status) return;
  free(status);
}
