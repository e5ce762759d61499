/* File: runtime_c/testdata/rt_ctor.c
 *
 * A constructor, linked into the rt_ctor fixture beside rt_kernels.c: kiln
 * artifacts have none, and the loader must refuse this library before
 * dlopen, so the constructor never runs (loader_security_test.c checks that
 * KILN_RT_CTOR_RAN stays unset).
 */
#define _POSIX_C_SOURCE 200112L /* setenv */

#include <stdlib.h>

__attribute__((constructor)) static void rt_ctor_runs(void) { setenv("KILN_RT_CTOR_RAN", "1", 1); }
