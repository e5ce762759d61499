// A stand-in for `kiln opt`: prints its input file (optionally upper-cased) to
// stdout. A line starting with "error" makes it report that line on stderr and
// exit 1, like a parser rejecting bad input.
#include <cctype>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

int main(int argc, char** argv) {
  bool upper = false;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--upper") {
      upper = true;
    } else {
      path = arg;
    }
  }
  std::ifstream in(path);
  if (!in) {
    std::cerr << absl::StrCat("echo_tool: cannot open '", path, "'\n");
    return 2;
  }
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (absl::StartsWith(line, "error")) {
      std::cerr << absl::StrCat(path, ":", lineno, ": error: ", line.substr(5), "\n");
      return 1;
    }
    if (absl::StartsWith(line, "//")) continue;  // CHECK lines are not echoed
    if (upper) {
      for (char& c : line) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::cout << line << "\n";
  }
  return 0;
}
