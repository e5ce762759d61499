// File: ir/text_file.h
//
// A `.kir` file (docs/text_format.md) as a Module: the entry point for a
// path a user gave (`kiln check m.kir`, kiln_model_load_file). The file is
// read with ReadRegularFile (ir/file.h): a FIFO, a device or a directory is
// refused before anything is read, and so is a file over kMaxTextFileBytes;
// a file holding a NUL byte is binary, not text IR.
//
//   KILN_ASSIGN_OR_RETURN(Module m, ParseModuleFile("examples/resnet_block.kir"));
#ifndef KILN_IR_TEXT_FILE_H_
#define KILN_IR_TEXT_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace kiln {

// The largest text-IR file read (2 GiB, ONNX's protobuf limit too).
inline constexpr int64_t kMaxTextFileBytes = int64_t{1} << 31;

// Errors name the path; syntax and type errors also the line and column.
absl::StatusOr<Module> ParseModuleFile(const std::string& path);

}  // namespace kiln

#endif  // KILN_IR_TEXT_FILE_H_
