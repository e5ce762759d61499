// File: tools/progress.cc
#include "tools/progress.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace kiln::cli {

Progress::Progress(std::string command) : command_(std::move(command)) {
  const char* term = std::getenv("TERM");
  enabled_ = ::isatty(2) == 1 && std::getenv("KILN_NO_PROGRESS") == nullptr &&
             !(term != nullptr && std::strcmp(term, "dumb") == 0);
}

Progress::~Progress() { Clear(); }

void Progress::Phase(const std::string& text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  text_ = text;
  timed_ = true;
  start_ = std::chrono::steady_clock::now();
  Draw();
  if (!ticker_.joinable()) {
    stop_ = false;
    ticker_ = std::thread([this] { Tick(); });
  }
}

void Progress::Count(const std::string& what, int64_t done, int64_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  if (shown_ && done != total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  text_ = what + " " + std::to_string(done) + "/" + std::to_string(total);
  timed_ = false;
  Draw();
}

void Progress::Update(const std::string& text, bool force) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  text_ = text;
  auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  Draw();
}

std::string CompileProgressText(const char* phase, int32_t done, int32_t total) {
  const std::string p = phase != nullptr ? phase : "";
  if (p == "passes") return "graph passes";
  if (p == "lower") {
    if (total <= 0) return "lowering";
    return "lowering, function " + std::to_string(done) + "/" + std::to_string(total);
  }
  if (p == "plan") return "planning memory";
  if (p == "codegen") {
    if (total <= 0) return "code generation";
    return "code generation, kernel " + std::to_string(done) + "/" + std::to_string(total);
  }
  if (p == "link") return "linking";
  return p;
}

void CompileProgressFn(void* user_data, const char* phase, int32_t done, int32_t total) {
  auto* sink = static_cast<CompileProgressSink*>(user_data);
  const std::string text = sink->prefix + CompileProgressText(phase, done, total);
  if (done == 0) {
    sink->progress->Phase(text);  // a phase starts: its clock from now
  } else {
    sink->progress->Update(text, done == total);
  }
}

void Progress::Clear() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }
}

void Progress::Draw() {
  auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  std::string line = "kiln " + command_ + ": " + text_;
  if (timed_) {
    char secs[32];
    std::snprintf(secs, sizeof secs, " ... %.1f s",
                  std::chrono::duration<double>(now - start_).count());
    line += secs;
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::Tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (!stop_ && timed_) Draw();
  }
}

}  // namespace kiln::cli
