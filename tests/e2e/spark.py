"""Spark SQL through icegate, end to end, on the policy clients.py uses (policies/example.yaml).

Usage: spark.py ICEGATE_URL CATALOG_URL SPARK_JARS WORK_DIR   (tests/e2e/spark.sh runs it)

One Spark session (local[1], no UI, driver on 127.0.0.1) with four Iceberg REST catalogs, all
on the same icegate, each with its own basic-auth user and `X-Gravitino-Active-Roles` header:

  eng     bob, no header (all his roles)          prod (no prefix: the policy's default catalog)
  lab     bob, no header, `prefix=dev`            dev (where engineers may create schemas)
  ana     alice, narrowed to `analyst`            prod
  unheld  bi-service, asking for `engineer`       prod (bi-service holds only `analyst`)
  etl     bob, narrowed to `etl`                  prod (CREATE_TABLE and MODIFY_TABLE in staging)

Every check prints one line; the error text a Spark user sees for a refusal is printed and
must carry icegate's own message. Exits non-zero if any check fails.
"""
import os
import sys
import time
import urllib.request

from pyspark.sql import SparkSession

ICEGATE, CATALOG, JARS, WORK = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
passed = failed = 0


def step(label, ok, detail=""):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} spark: {label}{(': ' + detail) if detail else ''}", flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


def rest_catalog(name, user, roles=None, prefix=None):
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": ICEGATE,
        ".rest.auth.type": "basic",
        ".rest.auth.basic.username": user,
        ".rest.auth.basic.password": "x",
        # Every statement reloads the table, so one user's commit is seen by the next statement.
        ".cache-enabled": "false",
    }
    if roles is not None:
        conf[".header.X-Gravitino-Active-Roles"] = roles
    if prefix is not None:
        conf[".prefix"] = prefix
    return {f"spark.sql.catalog.{name}{k}": v for k, v in conf.items()}


def rows(sql):
    return [tuple(r) for r in spark.sql(sql).collect()]


def error_of(sql):
    """Runs sql; returns None if it succeeded, else the error text the Spark user sees."""
    try:
        spark.sql(sql).collect()
    except Exception as e:  # noqa: BLE001 - Py4JJavaError, AnalysisException, ...
        return str(e)
    return None


def headline(text, marker):
    """The first line of an error that carries marker (else the first line), for printing."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    hit = next((line for line in lines if marker in line), lines[0] if lines else "")
    return hit.lstrip(": ")[:300]


def refused(label, sql, *needles):
    """A statement that icegate must refuse: every needle must be in the error text."""
    err = error_of(sql)
    if err is None:
        step(label, False, f"`{sql}` was allowed")
        return
    missing = [n for n in needles if n not in err]
    step(label, not missing, headline(err, needles[-1]) + (f" (missing {missing})" if missing else ""))


# Setup, as the catalog's own administrator (not through icegate): prod's `sales` schema exists
# (engineers may not create schemas in prod, clients.py starts the same way).
for ns in ("sales", "staging"):
    req = urllib.request.Request(f"{CATALOG}/v1/namespaces", data=b'{"namespace":["%s"]}' % ns.encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()

started = time.monotonic()
builder = (
    SparkSession.builder.master("local[1]")
    .appName("icegate-e2e-spark")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.jars", JARS)
    .config("spark.sql.catalogImplementation", "in-memory")
    .config("spark.sql.warehouse.dir", os.path.join(WORK, "spark-warehouse"))
    .config("spark.local.dir", os.path.join(WORK, "spark-local"))
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.default.parallelism", "1")
    .config("spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile=file:{HERE}/spark/log4j2.properties -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
)
for conf in (rest_catalog("eng", "bob"), rest_catalog("lab", "bob", prefix="dev"),
             rest_catalog("ana", "alice", roles="analyst"), rest_catalog("unheld", "bi-service", roles="engineer"),
             rest_catalog("etl", "bob", roles="etl")):
    for k, v in conf.items():
        builder = builder.config(k, v)
spark = builder.getOrCreate()
print(f"spark {spark.version} session up in {time.monotonic() - started:.1f} s", flush=True)

try:
    # The engineer in dev: a namespace, a table, rows written and read back.
    spark.sql("CREATE NAMESPACE lab.spark_lab")
    names = [r[0] for r in rows("SHOW NAMESPACES IN lab")]
    step("bob (engineer) creates namespace spark_lab in catalog dev", "spark_lab" in names, str(names))
    spark.sql("CREATE TABLE lab.spark_lab.runs (id BIGINT, note STRING) USING iceberg")
    spark.sql("INSERT INTO lab.spark_lab.runs VALUES (1, 'first'), (2, 'second')")
    got = rows("SELECT id, note FROM lab.spark_lab.runs ORDER BY id")
    step("bob creates lab table spark_lab.runs, inserts 2 rows and reads them back",
         got == [(1, "first"), (2, "second")], str(got))
    # Spark checks that the namespace does not exist first: that load is what icegate refuses
    # (bob holds nothing on it, so he is not told whether it exists).
    refused("bob cannot CREATE NAMESPACE in prod (no CREATE_SCHEMA there): ForbiddenException",
            "CREATE NAMESPACE eng.spark_nope", "ForbiddenException", "not authorized to")

    # The engineer in prod.sales: the tables the analyst then works with.
    spark.sql("CREATE TABLE eng.sales.events (id BIGINT, item STRING) USING iceberg")
    spark.sql("INSERT INTO eng.sales.events VALUES (1, 'tea'), (2, 'jam'), (3, 'oat')")
    got = rows("SELECT id, item FROM eng.sales.events ORDER BY id")
    step("bob creates sales.events, inserts 3 rows and reads them back",
         got == [(1, "tea"), (2, "jam"), (3, "oat")], str(got))
    spark.sql("CREATE TABLE eng.sales.salaries (name STRING, amount BIGINT) USING iceberg")
    listed = sorted(r[1] for r in rows("SHOW TABLES IN eng.sales"))
    step("bob's SHOW TABLES IN sales lists both tables", listed == ["events", "salaries"], str(listed))

    # CTAS by a job that may create tables but owns no schema (bob narrowed to `etl`): Spark
    # stages the create, writes the rows, then commits with the location the stage-create
    # returned, which icegate allows because the upstream assigned it (docs/design.md §4).
    spark.sql("CREATE TABLE etl.staging.daily USING iceberg AS SELECT id, item FROM eng.sales.events")
    got = rows("SELECT id, item FROM etl.staging.daily ORDER BY id")
    step("bob narrowed to etl creates staging.daily with CTAS and reads its 3 rows",
         got == [(1, "tea"), (2, "jam"), (3, "oat")], str(got))
    # Placing data is for owners: a LOCATION of its own choosing (another table's directory)
    events = rows("DESCRIBE TABLE EXTENDED eng.sales.events")
    events_location = next((r[1] for r in events if r[0] == "Location"), None)
    refused("bob narrowed to etl cannot CTAS into another table's location (not an owner)",
            f"CREATE TABLE etl.staging.sneaky USING iceberg LOCATION '{events_location}' AS SELECT 1 AS id",
            "ForbiddenException", "not authorized to createTable")
    got = rows("SELECT count(*) FROM eng.sales.events")[0][0]
    step("sales.events kept its 3 rows", got == 3, f"{got} rows")

    # The analyst: alice narrowed with header.X-Gravitino-Active-Roles=analyst.
    got = rows("SELECT id, item FROM ana.sales.events ORDER BY id")
    step("alice narrowed to analyst SELECTs the 3 rows", got == [(1, "tea"), (2, "jam"), (3, "oat")], str(got))
    refused("alice narrowed to analyst cannot INSERT: ForbiddenException",
            "INSERT INTO ana.sales.events VALUES (4, 'rye')", "ForbiddenException",
            "not authorized to updateTable `sales.events`")
    refused("alice narrowed to analyst cannot DROP TABLE: ForbiddenException",
            "DROP TABLE ana.sales.events", "ForbiddenException", "not authorized to dropTable `sales.events`")
    got = rows("SELECT count(*) FROM eng.sales.events")[0][0]
    step("the refused INSERT and DROP left sales.events as it was", got == 3, f"{got} rows")
    listed = sorted(r[1] for r in rows("SHOW TABLES IN ana.sales"))
    step("alice narrowed to analyst: SHOW TABLES IN sales lists only events (salaries is denied)",
         listed == ["events"], str(listed))
    refused("alice narrowed to analyst cannot SELECT from sales.salaries (the DENY carve-out)",
            "SELECT * FROM ana.sales.salaries", "ForbiddenException", "not authorized to loadTable `sales.salaries`")

    # A role the caller does not hold: a clear 403 naming it.
    refused("bi-service asking for the unheld role engineer gets a clear error",
            "SHOW TABLES IN unheld.sales", "ForbiddenException",
            "user 'bi-service' cannot assume active role(s) that are not held: engineer")
except Exception as e:  # noqa: BLE001 - an unexpected error still ends with the summary line
    step("the scenario runs to its end", False, headline(str(e), "Exception"))
finally:
    spark.stop()

print(f"spark checks took {time.monotonic() - started:.1f} s", flush=True)
print(f"spark: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
