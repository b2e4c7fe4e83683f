#!/usr/bin/env bash
# Follows the README as a newcomer would: clones the repository (its committed state) into a
# temporary directory, takes the demo command from the README's "The two commands" block, runs
# it there, and checks that it showed an allowed and a denied request. So the README's main
# command cannot rot. The build directory is shared with this checkout to save a rebuild.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/icegate-readme.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
git clone --quiet "$ROOT" "$WORK/icegate"
[ -d "$ROOT/../shared" ] && ln -s "$(cd "$ROOT/../shared" && pwd)" "$WORK/shared"
ln -s "$ROOT/target" "$WORK/icegate/target"
cd "$WORK/icegate"
# The first command of the block under "## The two commands".
demo="$(awk '/^## The two commands/{f=1} f&&/^```sh/{b=1;next} b&&/^```/{exit} b&&/^bash /{print; exit}' README.md | sed 's/ *#.*//')"
case "$demo" in
  "bash scripts/demo.sh") ;;
  *) echo "README: the demo command is \`$demo\`, expected \`bash scripts/demo.sh\`" >&2; exit 1 ;;
esac
echo "readme: running \`$demo\` in a fresh clone" >&2
out="$WORK/demo.log"
if ! $demo >"$out" 2>&1; then
  tail -40 "$out" >&2
  echo "readme: the demo command failed" >&2
  exit 1
fi
fails=0
check() { # check DESCRIPTION PATTERN
  if grep -Eq "$2" "$out"; then echo "ok   readme demo: $1"; else echo "FAIL readme demo: $1 (no \`$2\`)"; fails=$((fails + 1)); fi
}
check "the clients ran through icegate with no failed check" '[0-9]+ passed, 0 failed'
check "a request was refused with icegate's message" 'not authorized to|ForbiddenException|403'
check "icegate explain answered" '"status":403'
check "a user with only CREATE_TABLE wrote to the table she created" 'ok +dana holds only CREATE_TABLE'
check "she could not point it at another table's files" 'ok +dana may not point scratch.notes at sales.events'
check "explain named the location rule" 'the location rule: `s3://lake/sales/orders` does not lie inside'

if grep -Eq '^(grep|bash|ls|cat|cp|mv|rm): |No such file or directory' "$out"; then
  echo "FAIL readme demo: a stray error line:"; grep -E '^(grep|bash|ls|cat|cp|mv|rm): |No such file or directory' "$out" | head -5
  fails=$((fails + 1))
else
  echo "ok   readme demo: no stray error line"
fi
[ "$fails" = 0 ] || exit 1
