#!/usr/bin/env bash
# docs/cli.md is `kiln help --markdown` (the usage and every command's --help
# text): fails, with the difference, when the help texts changed and the
# document was not regenerated.
#
#   cli_doc_test.sh KILN [docs/cli.md]
# Without the second argument, docs/cli.md is found from this script's real
# path in the source tree (tools/cli_doc_test.sh -> ../docs/cli.md).
set -uo pipefail
kiln=$1
doc=${2:-$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../docs/cli.md}
[[ -f "$doc" ]] || { echo "FAIL: no $doc"; exit 1; }
tmp=${TEST_TMPDIR:-$(mktemp -d)}
"$kiln" help --markdown >"$tmp/cli.md" || { echo "FAIL: kiln help --markdown exited $?"; exit 1; }
if ! diff -u "$doc" "$tmp/cli.md"; then
  echo "FAIL: docs/cli.md is out of date; regenerate it:"
  echo "  bazel build //tools:kiln && bazel-bin/tools/kiln help --markdown > docs/cli.md"
  exit 1
fi
# Every command has its section.
for cmd in compile run info bench debug check print opt lower graph; do
  grep -q "^## kiln $cmd\$" "$doc" || { echo "FAIL: docs/cli.md has no section for kiln $cmd"; exit 1; }
done
echo "PASS: docs/cli.md is up to date"
