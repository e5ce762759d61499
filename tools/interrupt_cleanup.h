// File: tools/interrupt_cleanup.h
//
// `kiln compile`'s private TMPDIR, removed on SIGINT/SIGTERM/SIGHUP (issue 15).
// Moved here from cmd_model.cc unchanged.
#ifndef KILN_TOOLS_INTERRUPT_CLEANUP_H_
#define KILN_TOOLS_INTERRUPT_CLEANUP_H_

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace kiln::cli {

// The library links in a kiln_export_* folder under $TMPDIR and removes it
// when it is done; a compile ended by Ctrl-C or `kill` used to leave it
// behind (up to 196 MB). So `kiln compile` gives the library a private
// TMPDIR of its own (kiln_compile_XXXXXX under the real one), blocks SIGINT,
// SIGTERM and SIGHUP in every thread (the mask is set before any thread
// exists, and threads inherit it) and waits for them on a watcher thread.
// The cleanup therefore runs as ordinary code on that thread, not in a signal
// handler, where removing a folder tree would not be async-signal-safe: on a
// signal the watcher removes the private folder, then ends the process by
// the same signal (its exit status says so). A signal the caller set to be
// ignored (nohup) stays ignored.
class InterruptCleanup {
 public:
  InterruptCleanup() {
    const char* base = std::getenv("TMPDIR");
    if (base != nullptr) saved_tmpdir_ = base;
    std::string tmpl = absl::StrCat(base != nullptr && base[0] != '\0' ? base : "/tmp",
                                    "/kiln_compile_XXXXXX");
    if (::mkdtemp(tmpl.data()) == nullptr) return;  // the compile reports TMPDIR's problem
    dir_ = tmpl;
    ::setenv("TMPDIR", dir_.c_str(), 1);
    sigemptyset(&signals_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
      sigaddset(&signals_, sig);
      if (wake_signal_ == 0) wake_signal_ = sig;
    }
    if (wake_signal_ == 0) return;  // all ignored: nothing can interrupt the compile
    ::pthread_sigmask(SIG_BLOCK, &signals_, &saved_mask_);
    watcher_ = std::thread([this] { Watch(); });
  }

  ~InterruptCleanup() {
    if (dir_.empty()) return;
    if (watcher_.joinable()) {
      // Wake the watcher with a signal aimed at it alone; `done_` tells it
      // apart from a real one.
      done_.store(true);
      ::pthread_kill(watcher_.native_handle(), wake_signal_);
      watcher_.join();
    }
    RemoveDir();
    if (saved_tmpdir_) {
      ::setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
    // A signal that came meanwhile is delivered now, with its default action.
    if (wake_signal_ != 0) ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }

  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;

 private:
  void Watch() {
    int sig = 0;
    while (::sigwait(&signals_, &sig) != 0) {
    }
    if (done_.load()) return;
    RemoveDir();
    // Die by the signal: default action, unblocked on this thread, raised.
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }

  // The compile may still be writing there (other threads run on): retry
  // until the folder is gone. Once it is, the library cannot recreate it (it
  // only makes folders inside it).
  void RemoveDir() {
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      if (!std::filesystem::exists(dir_, ec)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string dir_;
  std::optional<std::string> saved_tmpdir_;
  sigset_t signals_{};
  sigset_t saved_mask_{};
  int wake_signal_ = 0;  // a member of signals_; 0 when there is no watcher
  std::atomic<bool> done_{false};
  std::thread watcher_;
};

}  // namespace kiln::cli

#endif  // KILN_TOOLS_INTERRUPT_CLEANUP_H_
