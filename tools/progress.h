// File: tools/progress.h
//
// A one-line progress display on stderr for long commands (compile, run
// --repeat, bench, debug), redrawn in place with '\r' every 100 ms: the
// phase and the seconds it has taken, or a count ("run 37/100"). It shows
// only when stderr is a terminal (isatty) and TERM is not "dumb", and never
// when KILN_NO_PROGRESS is set; otherwise every call does nothing, so pipes,
// logs and the benchmark scripts see exactly what they saw before.
//
//   Progress p("compile");
//   p.Phase("reading model.onnx");
//   ...
//   p.Phase("compiling (passes, lowering, code generation, link)");
//   ...
//   p.Clear();   // before printing anything else on stderr
//
// A compile shows kiln_model_compile's own phases and its kernels as code
// generation finishes them ("code generation, kernel 12/53 ... 3.1 s"):
// CompileProgressFn is the KilnCompileOptions.progress callback that feeds a
// Progress (set it only when enabled(), so nothing runs off a terminal).
#ifndef KILN_TOOLS_PROGRESS_H_
#define KILN_TOOLS_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::cli {

class Progress {
 public:
  explicit Progress(std::string command);
  ~Progress();  // Clear()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  // A new phase: its text and a clock from now.
  void Phase(const std::string& text);
  // "what done/total"; redrawn at most every 100 ms.
  void Count(const std::string& what, int64_t done, int64_t total);
  // The phase's text changes, its clock keeps running; redrawn at most every
  // 100 ms unless `force`.
  void Update(const std::string& text, bool force = false);
  // Erases the line and stops the redraws (a later Phase starts them again).
  void Clear();

 private:
  void Draw();  // mu_ held
  void Tick();

  std::string command_;
  bool enabled_ = false;
  std::mutex mu_;
  std::condition_variable wake_;
  std::string text_;
  bool timed_ = false;  // show the phase's seconds
  bool shown_ = false;  // a line is on the terminal
  bool stop_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::thread ticker_;
};

// What a terminal shows for one KilnCompileOptions.progress event, after
// `prefix` ("compiling to m.so: "): "graph passes", "lowering", "planning
// memory", "code generation, kernel 3/53", "linking". Exposed for tests.
std::string CompileProgressText(const char* phase, int32_t done, int32_t total);

// The KilnCompileOptions.progress callback: `user_data` is a
// CompileProgressSink. kiln serializes the calls (kiln.h), and Progress
// locks its own state, so calls from the code-generation threads are safe.
struct CompileProgressSink {
  Progress* progress;
  std::string prefix;
};
void CompileProgressFn(void* user_data, const char* phase, int32_t done, int32_t total);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_PROGRESS_H_
