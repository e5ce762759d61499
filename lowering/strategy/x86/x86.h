// File: lowering/strategy/x86/x86.h — the x86 implementations, one file per
// operator family: gemm.cc (nn.dense, nn.matmul, nn.batch_matmul),
// conv2d.cc (nn.conv2d in NCHW{c}c).
#ifndef KILN_LOWERING_STRATEGY_X86_X86_H_
#define KILN_LOWERING_STRATEGY_X86_X86_H_

namespace kiln::lowering::strategy::x86 {

void RegisterGemmStrategies();
void RegisterConv2dStrategies();
void RegisterWinogradStrategies();

// Both of the above.
void RegisterX86Strategies();

}  // namespace kiln::lowering::strategy::x86

#endif  // KILN_LOWERING_STRATEGY_X86_X86_H_
