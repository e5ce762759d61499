// File: tools/npz.h
//
// NumPy .npz archives for `kiln run`: a zip of .npy files, one per array,
// named "<array>.npy", as np.savez writes them (stored, not compressed; ZIP64
// size fields read). The .npy bytes themselves go through the runtime's .npy
// reader and writer (kiln_npy_read / kiln_npy_write) by way of a private
// temporary folder, so both file kinds are checked by the same code.
//
//   std::vector<NpzArray> arrays;
//   if (!ReadNpz("inputs.npz", &arrays, &error)) ...   // arrays[i].name: "input"
//   WriteNpz("outputs.npz", arrays, &error);
//
// A malformed archive (truncated, a bad signature, a CRC mismatch, an entry
// outside the file, compression) gives an error naming the file and the
// entry, never a crash.
#ifndef KILN_TOOLS_NPZ_H_
#define KILN_TOOLS_NPZ_H_

#include <string>
#include <vector>

#include "kiln/kiln_runtime.h"

namespace kiln::cli {

struct NpzArray {
  std::string name;  // without ".npy"
  std::string npy;   // the .npy file's bytes
};

bool ReadNpz(const std::string& path, std::vector<NpzArray>* arrays, std::string* error);
bool WriteNpz(const std::string& path, const std::vector<NpzArray>& arrays, std::string* error);

// A private folder (mkdtemp under $TMPDIR) removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The .npy bytes of a CPU tensor, and a tensor from .npy bytes (released
// with kiln_npy_release), both through the runtime's .npy code; `what` names
// the array in errors.
bool TensorToNpy(const DLTensor& t, const TempDir& tmp, std::string* npy, std::string* error);
KilnNpyTensor* NpyToTensor(const std::string& npy, const std::string& what, const TempDir& tmp,
                           std::string* error);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_NPZ_H_
