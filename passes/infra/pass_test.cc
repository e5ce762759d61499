#include "passes/infra/pass.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/structural.h"

namespace kiln::passes {
namespace {

Module Parse(const char* text) {
  absl::StatusOr<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Module();
}

constexpr const char kTwo[] = R"(
def @main(%x: Tensor[(4,), float32]) { exp(%x) }
def @g(%x: Tensor[(4,), float32]) { nn.relu(%x) }
)";

// A pass that appends its name to a log and optionally replaces @main.
PassPtr LoggingPass(std::string name, int opt_level, std::vector<std::string>* log,
                    std::vector<std::string> required = {}, bool changes = false) {
  return MakeModulePass({name, opt_level, std::move(required)},
                        [name, log, changes](Module&, const PassContext&) -> absl::StatusOr<bool> {
                          log->push_back(name);
                          return changes;
                        });
}

// Registers the helper passes the prerequisite tests look up by name.
void RegisterTestPasses(std::vector<std::string>* log) {
  static bool done = false;
  static std::vector<std::string>* shared_log = nullptr;
  shared_log = log;
  if (done) return;
  done = true;
  (void)PassRegistry::Global().Register("TestPrereqA", [] {
    return LoggingPass("TestPrereqA", 0, shared_log);
  });
  (void)PassRegistry::Global().Register("TestPrereqB", [] {
    return LoggingPass("TestPrereqB", 0, shared_log, {"TestPrereqA"});
  });
}

TEST(PassTest, SequentialSkipsPassesAboveOptLevel) {
  std::vector<std::string> log;
  PassPtr seq = MakeSequential("s", {LoggingPass("P0", 0, &log), LoggingPass("P3", 3, &log),
                                     LoggingPass("P1", 1, &log)});
  Module m = Parse(kTwo);
  PassContext ctx;
  ctx.opt_level = 1;
  ASSERT_TRUE(seq->Run(&m, ctx).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"P0", "P1"}));
}

TEST(PassTest, RequiredOverridesOptLevelAndDisabledSkips) {
  std::vector<std::string> log;
  PassPtr seq = MakeSequential("s", {LoggingPass("P0", 0, &log), LoggingPass("P3", 3, &log)});
  Module m = Parse(kTwo);
  PassContext ctx;
  ctx.opt_level = 0;
  ctx.required_passes.insert("P3");
  ctx.disabled_passes.insert("P0");
  ASSERT_TRUE(seq->Run(&m, ctx).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"P3"}));
  // Disabled wins over required.
  log.clear();
  ctx.disabled_passes.insert("P3");
  ASSERT_TRUE(seq->Run(&m, ctx).ok());
  EXPECT_TRUE(log.empty());
}

TEST(PassTest, PrerequisitesRunFirstAndTransitively) {
  std::vector<std::string> log;
  RegisterTestPasses(&log);
  PassPtr seq = MakeSequential(
      "s", {LoggingPass("X", 0, &log, {"TestPrereqB"}, /*changes=*/true),
            LoggingPass("Y", 0, &log, {"TestPrereqA"}), LoggingPass("Z", 0, &log, {"TestPrereqA"})});
  Module m = Parse(kTwo);
  ASSERT_TRUE(seq->Run(&m, PassContext()).ok());
  // X changed the module, so Y's prerequisite runs again; Y changed nothing,
  // so Z's does not.
  EXPECT_EQ(log, (std::vector<std::string>{"TestPrereqA", "TestPrereqB", "X", "TestPrereqA", "Y",
                                           "Z"}));
}

TEST(PassTest, UnregisteredPrerequisiteIsAnError) {
  std::vector<std::string> log;
  PassPtr seq = MakeSequential("s", {LoggingPass("X", 0, &log, {"NoSuchPass"})});
  Module m = Parse(kTwo);
  absl::StatusOr<bool> r = seq->Run(&m, PassContext());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("X: requires pass 'NoSuchPass'"), std::string::npos)
      << r.status();
}

TEST(PassTest, FailingPassLeavesModuleUntouchedAndIsNamed) {
  Module m = Parse(kTwo);
  Module before = m;
  PassPtr bad = MakeModulePass({"Breaker", 0, {}}, [](Module& mod, const PassContext&)
                                                       -> absl::StatusOr<bool> {
    (void)mod.Remove("g");
    return absl::InvalidArgumentError("something broke");
  });
  PassPtr seq = MakeSequential("s", {bad});
  absl::StatusOr<bool> r = seq->Run(&m, PassContext());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Breaker: something broke");
  EXPECT_TRUE(m.ContainsFunction("g"));
  EXPECT_TRUE(ModuleEqual(m, before));
}

TEST(PassTest, FunctionPassSkipsPrimitiveAndCompilerFunctions) {
  Module m = Parse(R"(
def @a(%x: Tensor[(4,), float32]) { exp(%x) }
def @b(%x: Tensor[(4,), float32], Primitive=1) { exp(%x) }
def @c(%x: Tensor[(4,), float32], Compiler="dnnl") { exp(%x) }
)");
  std::vector<std::string> seen;
  PassPtr p = MakeFunctionPass({"F", 0, {}}, [&](const Function& f, const Module& mod,
                                                 const PassContext&) -> absl::StatusOr<Function> {
    for (const auto& [gv, fn] : mod.functions())
      if (fn.get() == f.get()) seen.push_back(gv->name);
    return f;
  });
  absl::StatusOr<bool> r = p->Run(&m, PassContext());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
}

class RecordingInstrument : public PassInstrument {
 public:
  void BeforePass(const PassInfo& info, const Module&) override { log.push_back("before " + info.name); }
  void AfterPass(const PassInfo& info, const Module&, bool changed, absl::Duration d) override {
    log.push_back("after " + info.name + (changed ? " changed" : ""));
    EXPECT_GE(d, absl::ZeroDuration());
  }
  std::vector<std::string> log;
};

TEST(PassTest, InstrumentsAreCalledInOrderWithTiming) {
  std::vector<std::string> log;
  PassPtr changer = MakeModulePass({"Changer", 0, {}}, [](Module&, const PassContext&)
                                                           -> absl::StatusOr<bool> { return true; });
  PassPtr seq = MakeSequential("s", {LoggingPass("A", 0, &log), changer});
  auto rec = std::make_shared<RecordingInstrument>();
  auto timing = std::make_shared<TimingInstrument>();
  PassContext ctx;
  ctx.instruments = {rec, timing};
  Module m = Parse(kTwo);
  absl::StatusOr<bool> r = seq->Run(&m, ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_EQ(rec->log,
            (std::vector<std::string>{"before A", "after A", "before Changer", "after Changer changed"}));
  ASSERT_EQ(timing->entries().size(), 2u);
  EXPECT_EQ(timing->entries()[0].pass, "A");
  EXPECT_FALSE(timing->entries()[0].changed);
  EXPECT_TRUE(timing->entries()[1].changed);
  std::string report = timing->Report();
  EXPECT_NE(report.find("Changer"), std::string::npos);
  EXPECT_NE(report.find("total"), std::string::npos);
}

TEST(PassTest, IrDumpWritesOneFilePerPass) {
  std::string dir = ::testing::TempDir() + "/ir_dump";
  std::filesystem::create_directories(dir);
  std::vector<std::string> log;
  auto dump = std::make_shared<IrDumpInstrument>(dir);
  PassContext ctx;
  ctx.instruments = {dump};
  PassPtr seq = MakeSequential("s", {LoggingPass("First", 0, &log), LoggingPass("Second", 0, &log)});
  Module m = Parse(kTwo);
  ASSERT_TRUE(seq->Run(&m, ctx).ok());
  EXPECT_TRUE(dump->status().ok());
  for (const char* f : {"/00_First.kir", "/01_Second.kir"}) {
    std::ifstream in(dir + f);
    ASSERT_TRUE(in) << f;
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<Module> back = ParseModule(ss.str());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(ModuleEqual(*back, m));
  }
  auto bad = std::make_shared<IrDumpInstrument>(dir + "/no/such/dir");
  ctx.instruments = {bad};
  ASSERT_TRUE(seq->Run(&m, ctx).ok());
  EXPECT_FALSE(bad->status().ok());
}

TEST(PassTest, ParsePassListErrors) {
  std::vector<std::string> log;
  RegisterTestPasses(&log);
  absl::StatusOr<PassPtr> p = ParsePassList("TestPrereqA, NoSuchPass");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(p.status().message().find("unknown pass 'NoSuchPass'; known passes: "),
            std::string::npos);
  EXPECT_NE(p.status().message().find("TestPrereqA"), std::string::npos);

  p = ParsePassList("TestPrereqA,,TestPrereqB");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("empty pass name at position 2"), std::string::npos);

  p = ParsePassList(" TestPrereqB , TestPrereqA ");
  ASSERT_TRUE(p.ok()) << p.status();
  Module m = Parse(kTwo);
  ASSERT_TRUE((*p)->Run(&m, PassContext()).ok());
  // TestPrereqB's prerequisite runs first; the listed TestPrereqA runs too.
  EXPECT_EQ(log, (std::vector<std::string>{"TestPrereqA", "TestPrereqB", "TestPrereqA"}));
}

TEST(PassTest, RegistryRejectsDuplicates) {
  std::vector<std::string> log;
  RegisterTestPasses(&log);
  absl::Status s = PassRegistry::Global().Register("TestPrereqA", [] { return PassPtr(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
}

TEST(PassTest, ConfigValuesAreTyped) {
  PassContext ctx;
  ctx.SetConfig("fold.max_bytes", int64_t{1024});
  ctx.SetConfig("dump", true);
  ctx.SetConfig("tolerance", 0.5);
  ctx.SetConfig("target", std::string("llvm"));
  EXPECT_EQ(*ctx.GetConfig<int64_t>("fold.max_bytes", 0), 1024);
  EXPECT_EQ(*ctx.GetConfig<bool>("dump", false), true);
  EXPECT_EQ(*ctx.GetConfig<double>("tolerance", 0.0), 0.5);
  EXPECT_EQ(*ctx.GetConfig<std::string>("target", ""), "llvm");
  EXPECT_EQ(*ctx.GetConfig<int64_t>("unset", 7), 7);
  absl::StatusOr<bool> wrong = ctx.GetConfig<bool>("fold.max_bytes", false);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "pass config 'fold.max_bytes' has type int, expected bool");
}

}  // namespace
}  // namespace kiln::passes
