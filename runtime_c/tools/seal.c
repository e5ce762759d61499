/* File: runtime_c/tools/seal.c
 *
 * Host tool: `seal FILE.so...` seals linked artifacts in place with
 * kiln_artifact_seal_file (kiln/artifact_writer.h): sets the blob's file_size
 * and the whole-file checksum. Exit status 0 on success, 1 with a message on
 * stderr otherwise.
 */
#include <stdio.h>

#include "kiln/artifact_writer.h"
#include "kiln/status.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: seal FILE.so...\n");
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    KilnStatus* st = kiln_artifact_seal_file(argv[i]);
    if (st != NULL) {
      fprintf(stderr, "seal: %s\n", kiln_status_message(st));
      kiln_status_free(st);
      rc = 1;
    }
  }
  return rc;
}
