#!/usr/bin/env bash
# The access report in a real browser (issue 19): writes `icegate report` for
# policies/example.yaml against an older version of it (no salaries DENY, carol outside hr),
# loads it in Debian's headless Chromium (installed when missing) and checks the DOM: known
# cells' states, the change list, the subject and object filters, a cell's via on click and
# hover. The screenshot stays in target/e2e-report/report.png for a person to look at.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v chromium >/dev/null; then
  echo "installing chromium (Debian) for the report test" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
(cd "$ROOT" && cargo build --locked --quiet)
start_work report
OUT="$ROOT/target/e2e-report"
mkdir -p "$OUT"
python3 - "$ROOT/policies/example.yaml" "$WORK/old.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
deny = ("      - type: TABLE\n        fullName: prod.sales.salaries\n        privileges:\n"
        "          - { name: SELECT_TABLE, condition: DENY }\n"
        "          - { name: MODIFY_TABLE, condition: DENY }\n")
carol = "  - name: carol\n    groups: [hr]\n"
assert deny in text and carol in text, "the example policy changed: update tests/e2e/report.sh"
open(sys.argv[2], "w").write(text.replace(deny, "").replace(carol, "  - name: carol\n"))
PY
"$ROOT/target/debug/icegate" report --policy "$ROOT/policies/example.yaml" --diff "$WORK/old.yaml" \
  --out "$OUT/report.html"
python3 "$ROOT/tests/e2e/report_browser.py" "$OUT/report.html" "$OUT/report.png"
echo "report.sh: the report renders and behaves in headless Chromium ($OUT/report.png)" >&2
