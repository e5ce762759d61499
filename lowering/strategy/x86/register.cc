// File: lowering/strategy/x86/register.cc
#include "lowering/strategy/x86/x86.h"

namespace kiln::lowering::strategy::x86 {

void RegisterX86Strategies() {
  RegisterGemmStrategies();
  RegisterConv2dStrategies();
  RegisterWinogradStrategies();
}

}  // namespace kiln::lowering::strategy::x86
