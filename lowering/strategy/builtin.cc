// File: lowering/strategy/builtin.cc — the built-in implementations.
#include "lowering/strategy/strategy.h"
#include "lowering/strategy/x86/x86.h"

namespace kiln::lowering::strategy {

void RegisterBuiltinStrategies() {
  static const bool once = [] {
    x86::RegisterX86Strategies();
    return true;
  }();
  (void)once;
}

}  // namespace kiln::lowering::strategy
