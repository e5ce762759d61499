#!/usr/bin/env bash
# Checks libkiln_runtime.so: it exports only kiln_* symbols (nm -D
# --defined-only), among them the API a program and a model's kernels need,
# and its stripped size stays under 1 MB.
#
#   runtime_exports_test.sh path/to/libkiln_runtime.so
set -euo pipefail
so=$1
fail=0

symbols=$(nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }')
others=$(printf '%s\n' "$symbols" | grep -v '^kiln_' || true)
if [[ -n "$others" ]]; then
  echo "FAIL: libkiln_runtime.so exports symbols outside kiln_*:"
  printf '  %s\n' $others
  fail=1
fi
for required in kiln_artifact_load kiln_artifact_release kiln_session_create kiln_session_run \
    kiln_session_set_input kiln_session_get_output kiln_session_profile kiln_profile_table \
    kiln_session_debug_dump kiln_session_benchmark kiln_runtime_version kiln_free \
    kiln_status_message kiln_status_free kiln_parallel_launch kiln_parallel_num_threads \
    kiln_workspace_alloc kiln_workspace_free kiln_kernel_error kiln_kernel_last_error \
    kiln_thread_pool_create kiln_npy_read kiln_npy_write; do
  if ! grep -qx "$required" <<< "$symbols"; then
    echo "FAIL: libkiln_runtime.so does not export $required"
    fail=1
  fi
done
for internal in kiln_blob_parse kiln_blob_param kiln_artifact_validate_image kiln_dtype_bytes \
    kiln_dtype_to_string kiln_dtype_from_string; do
  if grep -qx "$internal" <<< "$symbols"; then
    echo "FAIL: libkiln_runtime.so exports the internal helper $internal"
    exit 1
  fi
done
count=$(printf '%s\n' "$symbols" | grep -c '^kiln_' || true)
# Versioned: the file is named by its SONAME (what programs record).
soname=$(objdump -p "$so" | sed -n 's/^ *SONAME *//p')
if [[ "$soname" != libkiln_runtime.so.0 || "$(basename "$so")" != "$soname" ]]; then
  echo "FAIL: $(basename "$so") has SONAME '$soname', not libkiln_runtime.so.0 (its own name)"
  fail=1
fi

tmp=${TEST_TMPDIR:-/tmp}/libkiln_runtime.stripped.so
strip -o "$tmp" "$so"
size=$(stat -c %s "$tmp")
limit=$((1024 * 1024))
echo "libkiln_runtime.so: $count kiln_* symbols exported, $size bytes stripped ($(stat -L -c %s "$so") unstripped)"
if (( size >= limit )); then
  echo "FAIL: stripped size $size >= $limit bytes"
  fail=1
fi
exit $fail
