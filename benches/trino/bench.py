"""The fixed Trino query set of benches/trino/run.sh, run directly against the catalog and through
icegate, interleaved, and the ratio of their wall times.

Usage: bench.py TRINO ROUNDS

Two Trino catalogs on the same upstream: `direct` (the catalog's own address) and `gate`
(icegate's); each gets its own schema (`bench_direct`, `bench_gate`) and table of 1000 rows.
One round runs the query set once per catalog, the order alternating every round (ABBA), so
drift of the machine falls on both alike; two warm-up rounds are not counted. Prints each
round's two times, then the totals, the sums of each statement's fastest run and their ratio,
and the ratio of the totals (gate / direct) on a line starting `ratio`. Exits non-zero when a statement fails.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "live", "trino"))
from sql import run  # noqa: E402

TRINO, ROUNDS = sys.argv[1], int(sys.argv[2])
WARMUP = 2


def must(catalog, sql):
    rows, err = run(TRINO, "bench", catalog, sql)
    if err is not None:
        sys.exit(f"bench: {sql} failed: {err}")
    return rows


def query_set(c, n):
    """The fixed set: three selects, a metadata listing, an insert; N makes each insert's row new.
    Returns each statement's wall time."""
    s = f"{c}.bench_{c}"
    took = []
    for sql in (f"SELECT count(*), sum(id) FROM {s}.events",
                f"SELECT id, kind FROM {s}.events WHERE id = 7",
                f"SELECT kind, count(*) FROM {s}.events GROUP BY kind ORDER BY kind",
                f"SHOW TABLES FROM {s}",
                f"INSERT INTO {s}.events VALUES ({100000 + n}, 'k{n % 5}')"):
        t0 = time.perf_counter()
        must(c, sql)
        took.append(time.perf_counter() - t0)
    return took


for c in ("direct", "gate"):
    s = f"{c}.bench_{c}"
    must(c, f"CREATE SCHEMA {s}")
    must(c, f"CREATE TABLE {s}.events AS SELECT CAST(x AS BIGINT) AS id, 'k' || CAST(x % 5 AS VARCHAR) AS kind "
            f"FROM UNNEST(sequence(1, 1000)) AS t(x)")

times = {"direct": [], "gate": []}
statements = {"direct": [], "gate": []}
for r in range(WARMUP + ROUNDS):
    order = ("direct", "gate") if r % 2 == 0 else ("gate", "direct")
    took = {c: query_set(c, r) for c in order}
    if r >= WARMUP:
        for c in took:
            times[c].append(sum(took[c]))
            statements[c].append(took[c])
        print(f"round {r - WARMUP + 1}: direct {sum(took['direct']):.3f} s, gate {sum(took['gate']):.3f} s", flush=True)
d, g = sum(times["direct"]), sum(times["gate"])
per_round = [gt / dt for gt, dt in zip(times["gate"], times["direct"])]
# The fastest run of each statement, summed: what each side costs with the least interference.
best = {c: sum(min(run[i] for run in statements[c]) for i in range(5)) for c in statements}
print(f"total: direct {d:.2f} s, gate {g:.2f} s over {ROUNDS} rounds of 5 statements")
print(f"best of each statement: direct {best['direct']:.3f} s, gate {best['gate']:.3f} s, "
      f"ratio {best['gate'] / best['direct']:.3f}")
print(f"ratio {g / d:.3f} (median per round {statistics.median(per_round):.3f})")
