/* File: runtime_c/handles.h (internal to runtime_c)
 *
 * The registry of live handles: every artifact, session and profile the
 * runtime hands to a caller is recorded here when it is created and removed
 * when the caller releases it. Every public entry point that takes one of
 * these handles asks the registry first, so a handle used after its release,
 * or released twice, is refused with a status (or ignored by the release
 * function, with a message on stderr) instead of touching freed memory.
 *
 *   kiln_handle_add(KILN_HANDLE_SESSION, s);            // in kiln_session_create
 *   if (!kiln_handle_live(KILN_HANDLE_SESSION, s)) ...  // every kiln_session_* call
 *   if (!kiln_handle_remove(KILN_HANDLE_SESSION, s))    // kiln_session_release
 *     ... // not live: released twice, or never a session
 *
 * Limits: the registry knows addresses, not identities. A stale handle whose
 * address malloc has since given to a new object of the same kind looks live
 * (it then refers to that new object). Checking is not a lock: a handle
 * released by one thread while another thread is inside a call on it is
 * still the caller's race (docs/c_api.md §2.8).
 *
 * Thread-safe (one mutex). The same registry serves libkiln.so's models
 * (KILN_HANDLE_MODEL), which link this runtime.
 */
#ifndef KILN_RUNTIME_C_HANDLES_H_
#define KILN_RUNTIME_C_HANDLES_H_

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_HANDLES_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_HANDLES_HIDDEN
#endif

typedef enum {
  KILN_HANDLE_ARTIFACT = 0,
  KILN_HANDLE_SESSION = 1,
  KILN_HANDLE_PROFILE = 2,
  KILN_HANDLE_MODEL = 3,
  KILN_HANDLE_NUM_KINDS = 4
} KilnHandleKind;

/* Records `handle` as live. Returns 0, or -1 when out of memory (the handle
 * is then not recorded: the caller frees the object and reports the
 * failure). NULL is never recorded. */
KILN_HANDLES_HIDDEN int kiln_handle_add(KilnHandleKind kind, const void* handle);

/* 1 when `handle` is a live handle of `kind`, else 0 (also for NULL). */
KILN_HANDLES_HIDDEN int kiln_handle_live(KilnHandleKind kind, const void* handle);

/* Removes `handle`; returns 1 when it was live, 0 when it was not (the
 * caller then must not free it). */
KILN_HANDLES_HIDDEN int kiln_handle_remove(KilnHandleKind kind, const void* handle);

/* The registry's count of live handles of `kind` (tests). */
KILN_HANDLES_HIDDEN long kiln_handle_count(KilnHandleKind kind);

/* "an artifact", "a session", ... for messages. */
KILN_HANDLES_HIDDEN const char* kiln_handle_kind_name(KilnHandleKind kind);

/* Prints one line to stderr: "<fn>: <handle> is not a live <kind> (released
 * twice, or never created by kiln); ignored". For release functions, which
 * return nothing. */
KILN_HANDLES_HIDDEN void kiln_handle_report_dead_release(const char* fn, KilnHandleKind kind,
                                                         const void* handle);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_C_HANDLES_H_ */
