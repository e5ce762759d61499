// File: ir/file.h
//
// Reading a file whose path came from a user (a model, a text-IR file, a
// tensor file), without trusting the path: only a regular file is read, and
// at most `max_bytes` of it. A FIFO, a socket, a directory or a device
// (/dev/zero, a terminal) is refused before a byte is read, and opening one
// never blocks (kiln once waited forever on `kiln check FIFO` and read
// /dev/zero without end).
//
//   KILN_ASSIGN_OR_RETURN(std::string text,
//                         ReadRegularFile(path, "text-IR file", int64_t{1} << 30));
//
// Errors name the path and say what it is: NotFound when it does not exist,
// InvalidArgument when it is not a regular file or is too large, DataLoss
// when reading fails.
#ifndef KILN_IR_FILE_H_
#define KILN_IR_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

// The whole of the regular file `path`. `what` names it in messages
// ("ONNX model file"); `too_large_hint` ends the message of a file over
// `max_bytes` ("store large weights as external data"). A file that grows
// while it is read is read up to the size it had when opened.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, absl::string_view what,
                                            int64_t max_bytes,
                                            absl::string_view too_large_hint = "");

// What a file of mode `st_mode` (from stat) is, for messages: "a regular
// file", "a directory", "a FIFO", "a character device", "a block device",
// "a socket", "a symbolic link".
const char* FileKindName(unsigned st_mode);

}  // namespace kiln

#endif  // KILN_IR_FILE_H_
