/* File: c_api/include/kiln/kiln_runtime.h  (libkiln_runtime.so: deployment only)
 *
 * The runtime half of kiln's C ABI: load a compiled model (.so), create
 * sessions, set inputs and read outputs as DLPack tensors, run, profile,
 * benchmark, read .npy files, and the library and ABI versions. Pure C11, no
 * LLVM, no C++: a service that only runs models links libkiln_runtime.so and
 * includes this header. libkiln.so (kiln/kiln.h) holds the same functions plus
 * the compiler. docs/c_api.md documents every function.
 *
 *   KilnArtifact* model = NULL;
 *   KilnStatus* st = kiln_artifact_load("resnet.so", &model);
 *   KilnSession* s = NULL;
 *   if (st == NULL) st = kiln_session_create(model, NULL, &s);
 *   if (st == NULL) st = kiln_session_set_input(s, "input", &x);   // a DLTensor
 *   if (st == NULL) st = kiln_session_run(s);
 *   const DLTensor* y = NULL;
 *   if (st == NULL) st = kiln_session_get_output(s, 0, &y);
 *   if (st != NULL) { fprintf(stderr, "%s\n", kiln_status_message(st)); kiln_status_free(st); }
 *   kiln_session_release(s);
 *   kiln_artifact_release(model);
 *
 * The rules of every function (statuses, cleared out-parameters, release
 * functions accepting NULL, options structs starting with their size,
 * ownership and threading) are in kiln/runtime.h and docs/c_api.md.
 */
#ifndef KILN_KILN_RUNTIME_H_
#define KILN_KILN_RUNTIME_H_

#include <dlpack/dlpack.h>

#include "kiln/artifact_format.h"
#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/threadpool.h"

#endif /* KILN_KILN_RUNTIME_H_ */
