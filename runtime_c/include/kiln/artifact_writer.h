/* File: runtime_c/include/kiln/artifact_writer.h
 *
 * Writing artifacts (used by the compiler: codegen_llvm/export.h). Not part of
 * the deployment runtime's job, but written in C beside the loader so both
 * sides share one implementation of the format (kiln/artifact_format.h).
 *
 *   KilnArtifactBuilder* b;
 *   kiln_artifact_builder_create(&b);
 *   kiln_artifact_builder_set_section(b, KILN_SECTION_META, meta_json, strlen(meta_json));
 *   kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, graph_json, strlen(graph_json));
 *   kiln_artifact_builder_add_param(b, "p0", &tensor);      // copies the data
 *   kiln_artifact_builder_finish(b, &blob, &size);          // a bare blob, checksummed
 *   ... link blob into model.so as the symbol kiln_artifact ...
 *   kiln_artifact_seal_file("model.so");                    // file_size + whole-file checksum
 *
 * Every function returns NULL or a KilnStatus (kiln/status.h) naming what is
 * wrong. A builder is not thread-safe; separate builders are independent.
 */
#ifndef KILN_ARTIFACT_WRITER_H_
#define KILN_ARTIFACT_WRITER_H_

#include <stdint.h>

#include <dlpack/dlpack.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct KilnArtifactBuilder KilnArtifactBuilder;

KilnStatus* kiln_artifact_builder_create(KilnArtifactBuilder** out);
/* Accepts NULL. */
void kiln_artifact_builder_release(KilnArtifactBuilder* b);

/* Sets the payload of a section kind (META, GRAPH, DEVICE_CODE or any other
 * kind except PARAMS, which add_param builds); copied. Setting a kind twice
 * replaces it. */
KilnStatus* kiln_artifact_builder_set_section(KilnArtifactBuilder* b, uint32_t kind,
                                              const void* data, uint64_t size);

/* Adds a parameter: a compact CPU tensor (strides NULL or compact; byte_offset
 * honoured); the data is copied. Names must be unique and non-empty. */
KilnStatus* kiln_artifact_builder_add_param(KilnArtifactBuilder* b, const char* name,
                                            const DLTensor* tensor);

/* As add_param, but the builder keeps a pointer to the tensor's data rather
 * than a copy: it must stay valid and unchanged until the builder is
 * released. Together with write_into, weights go from the caller's memory
 * to the artifact file in one copy. */
KilnStatus* kiln_artifact_builder_add_param_ref(KilnArtifactBuilder* b, const char* name,
                                                const DLTensor* tensor);
/* The size in bytes of the blob finish or write_into produces. */
KilnStatus* kiln_artifact_builder_blob_size(const KilnArtifactBuilder* b, uint64_t* size);
/* The blob (file_size 0, checksum over the blob). *blob is malloc'ed and owned
 * by the caller (free()). META and GRAPH must have been set. The builder may
 * be released afterwards. */
KilnStatus* kiln_artifact_builder_finish(KilnArtifactBuilder* b, uint8_t** blob, uint64_t* size);

/* Finds KILN_ARTIFACT_SYMBOL in the ELF shared object at `path`, sets the
 * blob's file_size to the file's size and its checksum to the whole-file
 * checksum, in place. */
KilnStatus* kiln_artifact_seal_file(const char* path);

/* Writes the blob into the linked ELF shared object at `path`, in place: its
 * KILN_ARTIFACT_SYMBOL must be a placeholder of exactly blob_size bytes (any
 * contents; kiln links a zero-filled one), 64-byte aligned. The result is
 * sealed as kiln_artifact_seal_file seals (file_size, whole-file checksum).
 * No copy of the blob is made in memory.
 *
 *   kiln_artifact_builder_blob_size(b, &size);
 *   ... link a `size`-byte zero object named kiln_artifact into model.so ...
 *   kiln_artifact_builder_write_into(b, "model.so");
 */
KilnStatus* kiln_artifact_builder_write_into(const KilnArtifactBuilder* b, const char* path);
/* kiln_elf_find_symbol, which finds KILN_ARTIFACT_SYMBOL in a linked .so, is
 * declared in kiln/artifact_format.h (included above). */

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_ARTIFACT_WRITER_H_ */
