// LLVM smoke test: build a Module with one function, verify and print it, and
// check that the native target initializes (codegen_llvm needs it).
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace {

TEST(LlvmSmoke, BuildAndPrintModule) {
  llvm::LLVMContext ctx;
  auto module = std::make_unique<llvm::Module>("kiln_smoke", ctx);
  llvm::IRBuilder<> b(ctx);
  auto* i32 = b.getInt32Ty();
  auto* fn_ty = llvm::FunctionType::get(i32, {i32, i32}, /*isVarArg=*/false);
  auto* fn = llvm::Function::Create(fn_ty, llvm::Function::ExternalLinkage, "add", module.get());
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(b.CreateAdd(fn->getArg(0), fn->getArg(1), "sum"));

  std::string err;
  llvm::raw_string_ostream err_os(err);
  EXPECT_FALSE(llvm::verifyModule(*module, &err_os)) << err;

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  EXPECT_NE(text.find("define i32 @add(i32 %0, i32 %1)"), std::string::npos) << text;
  EXPECT_NE(text.find("%sum = add i32 %0, %1"), std::string::npos) << text;

  // LLVM is built with RTTI, but its own casting is the idiom.
  EXPECT_TRUE(llvm::isa<llvm::Function>(module->getFunction("add")));
}

TEST(LlvmSmoke, NativeTarget) {
  ASSERT_FALSE(llvm::InitializeNativeTarget());
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  EXPECT_NE(target, nullptr) << error;
}

}  // namespace
