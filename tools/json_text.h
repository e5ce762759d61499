// File: tools/json_text.h — the one JSON document a --json command prints.
//
// Indented; strings that are not valid UTF-8 (an ONNX name can be anything)
// are written with U+FFFD replacements instead of throwing.
#ifndef KILN_TOOLS_JSON_TEXT_H_
#define KILN_TOOLS_JSON_TEXT_H_

#include <string>

#include "nlohmann/json.hpp"

namespace kiln::cli {

inline std::string JsonText(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kiln::cli

#endif  // KILN_TOOLS_JSON_TEXT_H_
