// File: tests/fuzz/fuzz_files.h
//
// Helpers for fuzz targets: outcome counters, and scratch files for fuzz targets whose API takes a path: one private folder
// per process (under $TEST_TMPDIR, else /tmp), removed at exit.
#ifndef KILN_TESTS_FUZZ_FUZZ_FILES_H_
#define KILN_TESTS_FUZZ_FUZZ_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln_fuzz {

// <private folder>/<name>. The folder is made on first use.
std::string ScratchPath(const std::string& name);
// The private folder itself.
std::string ScratchDir();
// A file in memory (memfd) holding `size` bytes, named by a path
// (/proc/self/fd/N) that open(2) accepts: faster than a file on disk for
// targets that read a path on every input. Each call replaces the contents.
// "" when memfd is unavailable.
std::string MemFilePath(const uint8_t* data, size_t size);
// Writes `size` bytes to `path` (replacing it). False on failure.
bool WriteFile(const std::string& path, const uint8_t* data, size_t size);
bool ReadFile(const std::string& path, std::vector<uint8_t>* out);
// The value of `--name=value` in argv, or of environment variable `env`, or "".
std::string FlagOrEnv(int argc, char** argv, const std::string& name, const char* env);

// Counts one outcome (`what`: a static string such as "parsed"); at exit the
// counts are printed to stderr ("kiln-fuzz: outcome parsed=123 ..."), so a
// run shows how deep its inputs got.
void Count(const char* what);

}  // namespace kiln_fuzz

#endif  // KILN_TESTS_FUZZ_FUZZ_FILES_H_
