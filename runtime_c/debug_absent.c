/* The debug executor of a runtime built without it (runtime_c/variants,
 * docs/selective_builds.md): every profile and debug-dump entry point of
 * kiln/runtime.h is there, clears its out-parameters, and answers
 * KILN_UNIMPLEMENTED saying the debug executor is not in this build. No
 * KilnProfile is ever made. debug.c is the real one. */
#include <stddef.h>

#include "kiln/runtime.h"
#include "kiln/status.h"

static KilnStatus* absent(const char* function) {
  return kiln_status_create(KILN_UNIMPLEMENTED,
                            "%s: the debug executor (profiles, Chrome traces, tensor dumps) is "
                            "not in this build of the runtime (docs/selective_builds.md); "
                            "kiln_session_run and kiln_session_benchmark are",
                            function);
}

KilnStatus* kiln_session_profile(KilnSession* session, KilnProfile** out) {
  (void)session;
  if (out != NULL) *out = NULL;
  return absent("kiln_session_profile");
}

KilnStatus* kiln_session_profile_with(KilnSession* session, const KilnProfileOptions* options,
                                      KilnProfile** out) {
  (void)session;
  (void)options;
  if (out != NULL) *out = NULL;
  return absent("kiln_session_profile_with");
}

/* No profile exists in this build: nothing to release or read. */
void kiln_profile_release(KilnProfile* profile) { (void)profile; }

int32_t kiln_profile_num_nodes(const KilnProfile* profile) {
  (void)profile;
  return 0;
}

double kiln_profile_total_us(const KilnProfile* profile) {
  (void)profile;
  return 0.0;
}

KilnStatus* kiln_profile_node(const KilnProfile* profile, int32_t index, const char** name,
                              const char** op, double* time_us) {
  (void)profile;
  (void)index;
  if (name != NULL) *name = NULL;
  if (op != NULL) *op = NULL;
  if (time_us != NULL) *time_us = 0.0;
  return absent("kiln_profile_node");
}

KilnStatus* kiln_profile_table(const KilnProfile* profile, char** text) {
  (void)profile;
  if (text != NULL) *text = NULL;
  return absent("kiln_profile_table");
}

KilnStatus* kiln_profile_chrome_trace(const KilnProfile* profile, char** json) {
  (void)profile;
  if (json != NULL) *json = NULL;
  return absent("kiln_profile_chrome_trace");
}

KilnStatus* kiln_session_debug_dump(KilnSession* session, const char* dir) {
  (void)session;
  (void)dir;
  return absent("kiln_session_debug_dump");
}

KilnStatus* kiln_session_debug_dump_with(KilnSession* session, const char* dir,
                                         const KilnProfileOptions* options) {
  (void)session;
  (void)dir;
  (void)options;
  return absent("kiln_session_debug_dump_with");
}
