// File: tests/cuda/emulate_host.h
//
// The host definitions that let g++ compile and run kiln's CUDA C without a
// GPU (tests/cuda/emulate.h and the fake driver of cuda_session_test use
// them): `__global__` and friends defined away, `threadIdx`/`blockIdx`/
// `blockDim`/`gridDim` as globals, the bit-cast intrinsics, and a launcher
// that runs the threads of each block as cooperative fibers (ucontext), so
// that kernels with barriers and warp shuffles run as on a GPU:
//
//   - the blocks of the grid run one after another; the threads of a block
//     are fibers with their own stacks, scheduled in a fixed order (linear
//     thread index, x fastest), each running until it finishes or waits;
//   - `__syncthreads()` waits until every thread of the block waits there;
//     a block in which some threads finished while others wait at a barrier
//     (a barrier in divergent code) is an error, as is a deadlock;
//   - `__shfl_sync`, `__shfl_down_sync`, `__shfl_up_sync`, `__shfl_xor_sync`
//     and `__syncwarp` meet the lanes of a warp (32 consecutive linear thread
//     indices, the lanes named by the mask): each lane publishes its value,
//     all lanes of the mask meet, each reads its source lane's value, and
//     they meet again before the next exchange, so the result is the lockstep
//     one whatever order the fibers run in. A source lane outside the
//     segment (`width`) returns the lane's own value, as on the device; a
//     mask naming a lane that does not exist or has finished is an error;
//   - `mma.sync` m16n8k16 (float16/bfloat16 in, float32 accumulation; the
//     prelude's kiln_mma_m16n8k16 calls kiln_emu_mma_m16n8k16 on the host)
//     meets the warp's 32 lanes: each publishes its fragment registers, and
//     computes its own four outputs from the whole warp's A and B, with the
//     PTX ISA's fragment layouts;
//   - `mma.sync` m16n8k8 .tf32 (kiln_emu_mma_m16n8k8_tf32) likewise, each
//     register's low 13 bits dropped as the hardware does;
//   - `ldmatrix.x4` (and `.trans`, the prelude's kiln_ldmatrix_x4 calls
//     kiln_emu_ldmatrix_x4 on the host) likewise: the lanes publish their
//     row addresses, and each reads its words from the others' rows;
//     `cp.async` is a plain 16-byte copy (its groups complete at once);
//   - `wgmma.mma_async` m64n128k16 and m64n256k16 (kiln_emu_wgmma): each
//     thread of the warpgroup decodes the two shared-memory descriptors
//     (the unswizzled layout or the 128-byte swizzle) and computes its own accumulators in the
//     PTX ISA's m64nNk16 layout, asynchronously: queued until the
//     `wgmma.wait_group` that retires its committed group (kiln_emu_wg_commit,
//     kiln_emu_wg_wait), reading shared memory then, so a stage refilled too
//     early or an accumulator read before its wait gives a wrong value, and
//     a thread ending with MMAs no wait retired fails the launch;
//   - TMA: `mbarrier` objects keep their state in their own 64 bits
//     (kiln_emu_mbar_*: arrivals, expected transaction bytes, the phase's
//     parity), and `cp.async.bulk.tensor.2d` (kiln_emu_tma_load_2d) copies
//     its box when it is issued, reading the fake driver's tensor map
//     (tests/cuda/fake_tensor_map.h), zeros past the map's dims, in the
//     map's swizzle, and completes the box's bytes on its barrier; a wait for
//     a phase that has not completed suspends the thread until another
//     thread's arrival completes it (none can: a deadlock, the launch fails);
//   - named barriers (`bar.sync id, count`, kiln_emu_bar_sync) release when
//     `count` threads wait at `id`, whatever the block's other threads do;
//   - `__shared__` arrays are `static` (one per kernel, shared by the
//     block's fibers; blocks run one at a time).
//
// Deterministic: the same kernel and inputs give the same bits every run.
// What it cannot see: races between threads that the fixed order happens to
// resolve, device math accuracy, anything NVRTC or ptxas reject.
//
//   std::string unit = EmulatorHostShim() + cuda_source;
//   unit += "static void body(void** a) { kernel((const float*)a[0], (float*)a[1]); }\n";
//   // const char* err = kiln_emu_launch(body, args, grid, block);  (null: no error)
#ifndef KILN_TESTS_CUDA_EMULATE_HOST_H_
#define KILN_TESTS_CUDA_EMULATE_HOST_H_

#include <string>

namespace kiln::testing {

// C++17 source text: the definitions above and
//   extern "C"-free `const char* kiln_emu_launch(void (*body)(void**), void** args,
//                                                const unsigned grid[3],
//                                                const unsigned block[3]);`
// which returns null when every block ran, else a message (a static string).
const std::string& EmulatorHostShim();

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_EMULATE_HOST_H_
