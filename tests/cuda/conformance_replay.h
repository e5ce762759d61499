/* File: tests/cuda/conformance_replay.h
 *
 * `device_run conformance ROOT DEVICE [TIMEOUT_S]`: the ONNX conformance
 * cases that run_conformance --export_dir wrote (tests/onnx/conformance_export.h)
 * run again through the public runtime API alone, on the machine that has the
 * GPU but not kiln's compiler. Every case folder under ROOT, in name order:
 * each data set's artifact loaded, a session on DEVICE, its inputs set by
 * name, a run, every output compared with the expected one the way
 * run_conformance compares (the same dtype and shape; integers and booleans
 * exactly; floats within |got - want| <= atol + rtol * |want|, NaN only
 * against NaN, an infinity only against the same one), an optional output's
 * none checked, a sequence's length and elements.
 *
 * The cases run in a child process, one after another; one that crashes the
 * child or runs past TIMEOUT_S (default 60) is a failure of that case only,
 * and a case whose session fails (not a wrong value: a status, which on a GPU
 * may be a sticky launch error) ends its child too, so the next case starts
 * in a fresh process with a fresh CUDA context.
 *
 * Prints "PASS <case>" or "FAIL <case>: <why>" per case, then
 * "conformance on DEVICE: P of N cases pass, F fail"; returns 0 when every
 * case passes, 1 when one fails, 2 on a usage or I/O error. A manifest that
 * names `model_<n>.host.so` sets $KILN_FAKE_CUDA_KERNELS to it before the
 * session (the fake driver's kernels, tests/cuda/fake_driver.c: only exports
 * made here for the tests have it).
 */
#ifndef KILN_TESTS_CUDA_CONFORMANCE_REPLAY_H_
#define KILN_TESTS_CUDA_CONFORMANCE_REPLAY_H_

int kiln_conformance_replay(const char* root, const char* device, int timeout_s);

#endif /* KILN_TESTS_CUDA_CONFORMANCE_REPLAY_H_ */
