"""Spark's own S3 client (Iceberg's S3FileIO, AWS SDK for Java v2) signing through icegate.

Usage: spark_s3fileio.py --gate URL --catalog URL --moto URL --bucket B --jars A,B --work DIR
                         --icegate-log FILE --moto-log FILE   (tests/live/spark_s3fileio.sh runs it)

One Spark session (local[1], no UI, driver on 127.0.0.1) with four Iceberg REST catalogs on
the same icegate (tests/live/spark-s3fileio-policy.yaml), each with its own basic-auth user:

  own   olga, the catalog's owner: creates the table with its data path on S3
  w     alice with all her roles (writer, reader)
  r     alice narrowed to `reader` (`header.X-Gravitino-Active-Roles=reader`)
  ro    dana, who holds only `reader`

The dev catalog keeps metadata on a file:// warehouse; the table's data path is on moto's S3,
so the REST catalog's FileIO (ResolvingFileIO, Iceberg's default) hands every data file to
S3FileIO, which asks icegate to sign each request (`s3.remote-signing-enabled` in the table's
config, icegate's table-scoped signer endpoint). moto checks every signature: a request it
served was signed by icegate. Every check prints one line; exits non-zero if any fails.
"""
import argparse
import json
import os
import re
import sys
import time
import urllib.request

from pyspark.sql import SparkSession

parser = argparse.ArgumentParser()
for flag in ("--gate", "--catalog", "--moto", "--bucket", "--jars", "--work", "--icegate-log", "--moto-log"):
    parser.add_argument(flag, required=True)
args = parser.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(HERE, "..", "e2e")
DATA = f"s3://{args.bucket}/wh/db/t/data"
DATA_KEY = f"/{args.bucket}/wh/db/t/data/"
passed = failed = 0


def step(label, ok, detail=""):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} spark s3fileio: {label}{(': ' + detail) if detail else ''}", flush=True)
    if ok:
        passed += 1
    else:
        failed += 1
    return ok


def rest_catalog(name, user, roles=None):
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": args.gate,
        ".rest.auth.type": "basic",
        ".rest.auth.basic.username": user,
        ".rest.auth.basic.password": "x",
        ".cache-enabled": "false",
        # What a user of remote signing sets: ask for it, and name the store S3FileIO talks to.
        # No S3 credentials: every request is signed by icegate.
        ".header.X-Iceberg-Access-Delegation": "remote-signing",
        ".s3.endpoint": args.moto,
        ".s3.path-style-access": "true",
        ".client.region": "us-east-1",
    }
    if roles is not None:
        conf[".header.X-Gravitino-Active-Roles"] = roles
    return {f"spark.sql.catalog.{name}{k}": v for k, v in conf.items()}


def rows(sql):
    return [tuple(r) for r in spark.sql(sql).collect()]


def error_of(sql):
    try:
        spark.sql(sql).collect()
    except Exception as e:  # noqa: BLE001 - Py4JJavaError, AnalysisException, ...
        return str(e)
    return None


def headline(text, marker):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    hit = next((line for line in lines if marker in line), lines[0] if lines else "")
    return hit.lstrip(": ")[:300]


def moto_requests():
    """(method, path with query, status) of every request moto served, from its log."""
    got = []
    with open(args.moto_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r'"([A-Z]+) (\S+) HTTP/[0-9.]+" (\d{3})', line)
            if m:
                got.append((m.group(1), m.group(2), int(m.group(3))))
    return got


def audit():
    records = []
    with open(args.icegate_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    return records


def data_puts():
    return [p for m, p, s in moto_requests() if m == "PUT" and p.startswith(DATA_KEY) and s == 200]


# The catalog's namespace, made as the catalog's own administrator (not through icegate).
req = urllib.request.Request(f"{args.catalog}/v1/namespaces", data=b'{"namespace":["db"]}', method="POST",
                             headers={"Content-Type": "application/json"})
urllib.request.urlopen(req).read()

started = time.monotonic()
builder = (
    SparkSession.builder.master("local[1]")
    .appName("icegate-live-spark-s3fileio")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.jars", args.jars)
    .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    .config("spark.sql.catalogImplementation", "in-memory")
    .config("spark.sql.warehouse.dir", os.path.join(args.work, "spark-warehouse"))
    .config("spark.local.dir", os.path.join(args.work, "spark-local"))
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.default.parallelism", "1")
    .config("spark.driver.memory", "768m")
    .config("spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile=file:{E2E}/spark/log4j2.properties -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
)
for conf in (rest_catalog("own", "olga"), rest_catalog("w", "alice"), rest_catalog("r", "alice", roles="reader"),
             rest_catalog("ro", "dana")):
    for k, v in conf.items():
        builder = builder.config(k, v)
spark = builder.getOrCreate()
print(f"spark {spark.version} session up in {time.monotonic() - started:.1f} s", flush=True)

try:
    # The owner's CTAS: Spark stage-creates, S3FileIO writes the data files (signed), then the
    # create commits.
    spark.sql(f"CREATE TABLE own.db.t USING iceberg TBLPROPERTIES ('write.data.path' = '{DATA}') AS "
              "SELECT * FROM VALUES (1, 'tea'), (2, 'jam'), (3, 'oat') AS v(id, item)")
    got = rows("SELECT id, item FROM own.db.t ORDER BY id")
    step("olga (owner) CREATE TABLE AS with its data on S3, read back", got == [(1, "tea"), (2, "jam"), (3, "oat")],
         str(got))
    step("the CTAS's data files reached moto signed (moto accepted their PUTs)", len(data_puts()) >= 1,
         f"{len(data_puts())} PUTs")
    # The staged table is not in the catalog until the create commits: its writes were signed
    # with the locations the stage-create answered.
    ops = [(r.get("operation"), r.get("decision")) for r in audit()]
    first_sign = next((i for i, o in enumerate(ops) if o == ("signRequest", "allow")), None)
    commit = next((i for i, o in enumerate(ops) if o[0] == "updateTable"), None)
    step("the CTAS's writes were signed before its create committed", None not in (first_sign, commit) and
         first_sign < commit, f"sign #{first_sign}, commit #{commit}")

    spark.sql("INSERT INTO w.db.t VALUES (4, 'rye')")
    got = rows("SELECT id, item FROM w.db.t ORDER BY id")
    step("alice (writer) INSERTs and SELECTs through S3FileIO",
         got == [(1, "tea"), (2, "jam"), (3, "oat"), (4, "rye")], str(got))

    spark.sql("DELETE FROM w.db.t WHERE id = 2")
    got = rows("SELECT id FROM w.db.t ORDER BY id")
    step("alice's row-level DELETE (the data file rewritten on S3)", got == [(1,), (3,), (4,)], str(got))

    before = set(data_puts())
    # Every snapshot but the current one expires (a time after all of them, in any time zone).
    expired = spark.sql("CALL w.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2100-01-01 "
                        "00:00:00', retain_last => 1)").collect()[0].asDict()
    deleted = expired.get("deleted_data_files_count", 0)
    step("alice's expire_snapshots deletes the expired data files", deleted >= 1, str(expired))
    batch = [(p, s) for m, p, s in moto_requests() if m == "POST" and p.split("?")[0] == f"/{args.bucket}"
             and "delete" in p.split("?", 1)[-1]]
    step("S3FileIO deleted them with batch deletes (POST ?delete) that moto accepted as signed",
         bool(batch) and all(s == 200 for _, s in batch), str(batch))
    got = rows("SELECT id FROM w.db.t ORDER BY id")
    step("the table reads the same after the files went", got == [(1,), (3,), (4,)], str(got))
    step("three data files were written before (CTAS, INSERT, the DELETE's rewrite)", len(before) == 3,
         f"{len(before)} written")

    got = rows("SELECT id FROM r.db.t ORDER BY id")
    step("alice narrowed to reader SELECTs through S3FileIO", got == [(1,), (3,), (4,)], str(got))
    seen, seen_s3 = len(audit()), len(moto_requests())
    err = error_of("INSERT INTO r.db.t VALUES (5, 'bran')")
    s3 = moto_requests()[seen_s3:]
    written = {p for m, p, st in s3 if m == "PUT" and p.startswith(DATA_KEY) and st == 200}
    removed = {p for m, p, st in s3 if m == "DELETE" and 200 <= st < 300}
    batch_deletes = [st for m, p, st in s3 if m == "POST" and p.endswith("?delete")]
    # Spark's abort deletes what the refused write left (a batch delete, signed by icegate too).
    print(f"  S3 during the narrowed INSERT: {len(written)} data files written, then {len(written & removed)} "
          f"single and {len(batch_deletes)} batch deletes", flush=True)
    during = [(r.get("user"), r.get("active_roles_header"), r.get("decision"))
              for r in audit()[seen:] if r.get("operation") == "signRequest"]
    # Iceberg 1.10's signer client sends none of the catalog's `header.*`: her sign requests are
    # decided with all her roles (she holds `writer`), her data file is written, and the commit
    # is what icegate refuses (docs/signing.md "Known limits").
    print(f"  sign requests during the narrowed INSERT (user, active-roles header, decision): {during}", flush=True)
    step("alice narrowed to reader cannot INSERT (icegate refuses the commit)",
         err is not None and "not authorized to updateTable `db.t`" in err, headline(err, "authorized"))
    got = rows("SELECT count(*) FROM w.db.t")[0][0]
    step("the refused INSERT left the table as it was", got == 3, f"{got} rows")

    # dana holds only `reader`: S3FileIO gets no signature for her data file.
    got = rows("SELECT id FROM ro.db.t ORDER BY id")
    step("dana (reader) SELECTs through S3FileIO", got == [(1,), (3,), (4,)], str(got))
    seen, puts = len(audit()), len(data_puts())
    err = error_of("INSERT INTO ro.db.t VALUES (6, 'malt')")
    denied = [r for r in audit()[seen:] if r.get("operation") == "signRequest" and r.get("decision") != "allow"]
    step("dana's INSERT is refused at the signer", err is not None and "not authorized to sign" in err and
         bool(denied), headline(err, "not authorized"))
    step("no data file of dana's reached S3", len(data_puts()) == puts, f"{len(data_puts()) - puts} new PUTs")

    signs = [r for r in audit() if "sign" in json.dumps(r.get("operation", "")).lower()]
    allowed = [r for r in signs if r.get("decision") == "allow"]
    denied = [r for r in signs if r.get("decision") != "allow"]
    step("icegate's audit holds S3FileIO's sign requests", len(allowed) >= 4, f"{len(allowed)} allowed")
    print(f"  sign requests: {len(allowed)} allowed, {len(denied)} refused", flush=True)
    runs = []  # the audit's operations, repeats folded: what Spark asked icegate, in order
    for r in audit():
        op = f"{r.get('operation')}:{r.get('user')}:{r.get('decision')}"
        if runs and runs[-1][0] == op:
            runs[-1][1] += 1
        else:
            runs.append([op, 1])
    print("  operations:", " ".join(f"{op}x{n}" if n > 1 else op for op, n in runs), flush=True)
except Exception as e:  # noqa: BLE001 - an unexpected error still ends with the summary line
    step("the scenario runs to its end", False, headline(str(e), "Exception"))
finally:
    spark.stop()

print(f"spark s3fileio checks took {time.monotonic() - started:.1f} s", flush=True)
print(f"spark s3fileio: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
