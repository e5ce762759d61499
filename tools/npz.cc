// File: tools/npz.cc
#include "tools/npz.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace kiln::cli {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;

uint32_t Crc32(const std::string& data) {
  static uint32_t table[256] = {0};
  if (table[1] == 0) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  }
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : data) crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint64_t Le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

void Put(std::string* s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool ReadAll(const std::string& path, std::string* data, std::string* error) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    *error = absl::StrCat("cannot open '", path, "': no such file");
    return false;
  }
  if (!std::filesystem::is_regular_file(status)) {
    *error = absl::StrCat("'", path, "' is not a regular file");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) {
    *error = absl::StrCat("cannot read '", path, "'");
    return false;
  }
  *data = ss.str();
  return true;
}

}  // namespace

bool ReadNpz(const std::string& path, std::vector<NpzArray>* arrays, std::string* error) {
  arrays->clear();
  std::string z;
  if (!ReadAll(path, &z, error)) return false;
  const auto bad = [&](const std::string& what) {
    *error = absl::StrCat(path, ": not a valid .npz (zip) file: ", what);
    return false;
  };
  // The end-of-central-directory record: the last 22 bytes plus a comment.
  if (z.size() < 22) return bad("too short to be a zip archive");
  size_t end = std::string::npos;
  for (size_t i = z.size() - 22 + 1; i-- > 0 && z.size() - i <= 22 + 65535;) {
    if (Le(z, i, 4) == kEndSig) {
      end = i;
      break;
    }
  }
  if (end == std::string::npos) return bad("no end-of-central-directory record");
  uint64_t count = Le(z, end + 10, 2);
  uint64_t dir_size = Le(z, end + 12, 4), dir_offset = Le(z, end + 16, 4);
  if (dir_offset > end || dir_size > end - dir_offset) {
    return bad("the central directory lies outside the file");
  }
  size_t at = dir_offset;
  for (uint64_t e = 0; e < count; ++e) {
    if (at + 46 > end || Le(z, at, 4) != kCentralSig) {
      return bad(absl::StrCat("central directory entry ", e, " is malformed"));
    }
    uint64_t method = Le(z, at + 10, 2), crc = Le(z, at + 16, 4);
    uint64_t csize = Le(z, at + 20, 4), usize = Le(z, at + 24, 4);
    uint64_t name_len = Le(z, at + 28, 2), extra_len = Le(z, at + 30, 2),
             comment_len = Le(z, at + 32, 2);
    uint64_t local = Le(z, at + 42, 4);
    if (at + 46 + name_len + extra_len + comment_len > end) {
      return bad(absl::StrCat("central directory entry ", e, " is truncated"));
    }
    std::string name = z.substr(at + 46, name_len);
    // ZIP64: the real sizes and offset in extra field 0x0001, in this order,
    // for the fields that are 0xffffffff.
    for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      uint64_t id = Le(z, x, 2), len = Le(z, x + 2, 2);
      if (x + 4 + len > at + 46 + name_len + extra_len) break;
      if (id == 1) {
        size_t p = x + 4;
        for (uint64_t* field : {&usize, &csize, &local}) {
          if (*field == 0xffffffffu && p + 8 <= x + 4 + len) {
            *field = Le(z, p, 8);
            p += 8;
          }
        }
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    const std::string entry = absl::StrCat("entry '", name, "'");
    if (method != 0) {
      return bad(absl::StrCat(entry, " is compressed (np.savez_compressed); kiln reads "
                                     "uncompressed archives: save them with np.savez"));
    }
    if (csize != usize) return bad(absl::StrCat(entry, " has inconsistent sizes"));
    if (local > end || end - local < 30 || Le(z, local, 4) != kLocalSig) {
      return bad(absl::StrCat(entry, " has no local header where the directory says"));
    }
    uint64_t data = local + 30 + Le(z, local + 26, 2) + Le(z, local + 28, 2);
    if (data > end || csize > end - data) {
      return bad(absl::StrCat(entry, "'s data lies outside the file"));
    }
    NpzArray a;
    a.npy = z.substr(data, csize);
    if (Crc32(a.npy) != crc) return bad(absl::StrCat(entry, " fails its CRC-32 check"));
    a.name = name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
    arrays->push_back(std::move(a));
  }
  return true;
}

bool WriteNpz(const std::string& path, const std::vector<NpzArray>& arrays, std::string* error) {
  std::string out, dir;
  // DOS date 1980-01-01 00:00, as np.savez's zipfile does for no timestamp.
  const uint64_t kTime = 0, kDate = (0 << 9) | (1 << 5) | 1;
  for (const NpzArray& a : arrays) {
    const std::string name = a.name + ".npy";
    if (a.npy.size() >= 0xffffffffu || out.size() >= 0xffffffffu) {
      *error = absl::StrCat("cannot write '", path, "': array '", a.name,
                            "' is too large for a zip archive without ZIP64");
      return false;
    }
    const uint64_t crc = Crc32(a.npy), offset = out.size();
    Put(&out, kLocalSig, 4);
    Put(&out, 20, 2);  // version needed
    Put(&out, 0, 2);   // flags
    Put(&out, 0, 2);   // stored
    Put(&out, kTime, 2);
    Put(&out, kDate, 2);
    Put(&out, crc, 4);
    Put(&out, a.npy.size(), 4);
    Put(&out, a.npy.size(), 4);
    Put(&out, name.size(), 2);
    Put(&out, 0, 2);
    out += name;
    out += a.npy;
    Put(&dir, kCentralSig, 4);
    Put(&dir, 20, 2);  // made by
    Put(&dir, 20, 2);  // needed
    Put(&dir, 0, 2);
    Put(&dir, 0, 2);
    Put(&dir, kTime, 2);
    Put(&dir, kDate, 2);
    Put(&dir, crc, 4);
    Put(&dir, a.npy.size(), 4);
    Put(&dir, a.npy.size(), 4);
    Put(&dir, name.size(), 2);
    Put(&dir, 0, 2);  // extra
    Put(&dir, 0, 2);  // comment
    Put(&dir, 0, 2);  // disk
    Put(&dir, 0, 2);  // internal attributes
    Put(&dir, 0644u << 16, 4);  // external attributes: a regular file, rw-r--r--
    Put(&dir, offset, 4);
    dir += name;
  }
  if (out.size() >= 0xffffffffu) {
    *error = absl::StrCat("cannot write '", path, "': too large for a zip archive without ZIP64");
    return false;
  }
  const uint64_t dir_offset = out.size();
  out += dir;
  Put(&out, kEndSig, 4);
  Put(&out, 0, 2);
  Put(&out, 0, 2);
  Put(&out, arrays.size(), 2);
  Put(&out, arrays.size(), 2);
  Put(&out, dir.size(), 4);
  Put(&out, dir_offset, 4);
  Put(&out, 0, 2);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << out;
  f.close();
  if (!f) {
    *error = absl::StrCat("cannot write '", path, "'");
    return false;
  }
  return true;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr && base[0] != '\0' ? base : "/tmp",
                                  "/kiln_npz_XXXXXX");
  if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool TensorToNpy(const DLTensor& t, const TempDir& tmp, std::string* npy, std::string* error) {
  if (!tmp.ok()) {
    *error = "cannot create a temporary folder (TMPDIR)";
    return false;
  }
  std::string file = tmp.path() + "/array.npy";
  if (KilnStatus* st = kiln_npy_write(file.c_str(), &t)) {
    *error = kiln_status_message(st);
    kiln_status_free(st);
    return false;
  }
  bool ok = ReadAll(file, npy, error);
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return ok;
}

KilnNpyTensor* NpyToTensor(const std::string& npy, const std::string& what, const TempDir& tmp,
                           std::string* error) {
  if (!tmp.ok()) {
    *error = "cannot create a temporary folder (TMPDIR)";
    return nullptr;
  }
  std::string file = tmp.path() + "/array.npy";
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << npy;
    f.close();
    if (!f) {
      *error = absl::StrCat("cannot write a temporary copy of ", what);
      return nullptr;
    }
  }
  KilnNpyTensor* t = nullptr;
  KilnStatus* st = kiln_npy_read(file.c_str(), &t);
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (st != nullptr) {
    // The runtime names the temporary file; name the array instead.
    std::string message = kiln_status_message(st);
    kiln_status_free(st);
    size_t pos = message.find(file);
    if (pos != std::string::npos) message.replace(pos, file.size(), what);
    *error = message;
    return nullptr;
  }
  return t;
}

}  // namespace kiln::cli
