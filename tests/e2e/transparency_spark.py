"""Transparency, Spark's subset (tests/e2e/transparency.sh): Spark SQL over Iceberg's REST catalog
client gives the same results through icegate as directly at the catalog.

Usage: transparency_spark.py DIRECT_URL DIRECT_WAREHOUSE GATE_URL GATE_WAREHOUSE SPARK_JARS WORK_DIR

One Spark session (local[1], Iceberg 1.10.2 runtime and its SQL extensions, as tests/e2e/spark.sh
installs them) with two REST catalogs, `cat_direct` (the direct tap) and `cat_icegate` (the tap in
front of icegate), both as `tess`, with `rest-page-size=2` and the prefix `prod`. The same
statements run against each, first all of them directly, then all through icegate; every result
(rows, or the error's class and first line) is recorded and the two records must be equal (the
catalog's name is the one thing normalised beside warehouse paths, UUIDs and instants).
"""
import os
import sys
import time

from pyspark.sql import SparkSession

from transparency_results import Recorder, report

DIRECT, DIRECT_WH, GATE, GATE_WH, JARS, WORK = sys.argv[1:7]
HERE = os.path.dirname(os.path.abspath(__file__))


def catalog_conf(name, uri):
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": uri,
        ".rest.auth.type": "basic",
        ".rest.auth.basic.username": "tess",
        ".rest.auth.basic.password": "x",
        ".cache-enabled": "false",
        # every list is paged (several pages for SHOW TABLES / SHOW NAMESPACES below)
        ".rest-page-size": "2",
        # the prefixed routes (`/v1/prod/...`; PyIceberg and DuckDB use the unprefixed ones): the
        # dev catalog accepts any prefix, icegate reads `prod` as the policy's catalog of that name
        ".prefix": "prod",
    }
    return {f"spark.sql.catalog.{name}{k}": v for k, v in conf.items()}


STATEMENTS = [
    "CREATE NAMESPACE {c}.sp WITH PROPERTIES ('team' = 'lake')",
    "CREATE NAMESPACE {c}.sp.inner",
    "CREATE NAMESPACE {c}.sp.other",
    "CREATE NAMESPACE {c}.sp.third",
    "SHOW NAMESPACES IN {c}.sp",
    "ALTER NAMESPACE {c}.sp SET PROPERTIES ('k' = 'v')",
    "DESCRIBE NAMESPACE EXTENDED {c}.sp",
    "CREATE TABLE {c}.sp.t (id BIGINT, item STRING, qty INT) USING iceberg PARTITIONED BY (item) "
    "TBLPROPERTIES ('format-version' = '2')",
    "CREATE TABLE {c}.sp.t (id BIGINT) USING iceberg",
    "INSERT INTO {c}.sp.t VALUES (1, 'tea', 5), (2, 'jam', 6), (3, 'oat', 7)",
    "SELECT * FROM {c}.sp.t ORDER BY id",
    "INSERT OVERWRITE {c}.sp.t VALUES (10, 'tea', 1), (11, 'rye', 2)",
    "DELETE FROM {c}.sp.t WHERE id = 11",
    "UPDATE {c}.sp.t SET qty = 100 WHERE id = 10",
    "MERGE INTO {c}.sp.t t USING (SELECT 12 AS id, 'jam' AS item, 3 AS qty) s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    "SELECT * FROM {c}.sp.t ORDER BY id",
    "ALTER TABLE {c}.sp.t ADD COLUMN note STRING",
    "ALTER TABLE {c}.sp.t RENAME COLUMN qty TO quantity",
    "ALTER TABLE {c}.sp.t ALTER COLUMN quantity TYPE BIGINT",
    "ALTER TABLE {c}.sp.t DROP COLUMN note",
    "ALTER TABLE {c}.sp.t SET TBLPROPERTIES ('k' = 'v')",
    "DESCRIBE TABLE {c}.sp.t",
    "SELECT * FROM {c}.sp.t ORDER BY id",
    "SELECT operation FROM {c}.sp.t.snapshots ORDER BY committed_at",
    "SELECT count(*) FROM {c}.sp.t.files",
    "CREATE TABLE {c}.sp.ctas USING iceberg AS SELECT id, item FROM {c}.sp.t",
    "SELECT * FROM {c}.sp.ctas ORDER BY id",
    "CREATE TABLE {c}.sp.small (x INT) USING iceberg",
    "CREATE TABLE {c}.sp.tiny (x INT) USING iceberg",
    "SHOW TABLES IN {c}.sp",
    "CREATE VIEW {c}.sp.v AS SELECT id, item FROM {c}.sp.t WHERE id > 10",
    "SELECT * FROM {c}.sp.v ORDER BY id",
    "SHOW VIEWS IN {c}.sp",
    "DROP VIEW {c}.sp.v",
    "SELECT * FROM {c}.sp.missing",
    "ALTER TABLE {c}.sp.t RENAME TO sp.inner.moved",
    "SELECT * FROM {c}.sp.inner.moved ORDER BY id",
    "SHOW TABLES IN {c}.sp",
    "DROP TABLE {c}.sp.ctas",
    "DROP TABLE {c}.sp.inner.moved PURGE",
    "DROP TABLE {c}.sp.nothing",
    "DROP NAMESPACE {c}.sp",
    "DROP NAMESPACE {c}.sp.inner",
    "SHOW NAMESPACES IN {c}.sp",
]


def run(sql):
    """Runs sql: its rows, or the error Spark raised, with the JVM's exception for a Py4J error."""
    try:
        return spark.sql(sql).collect()
    except Exception as e:  # noqa: BLE001 - re-raised with the JVM's class and message
        java = getattr(e, "java_exception", None)
        if java is None:
            raise
        cause = java
        while cause.getCause() is not None:
            cause = cause.getCause()
        raise RuntimeError(f"{cause.getClass().getName()}: {cause.getMessage()}") from None


class SparkRecorder(Recorder):
    def __init__(self, warehouse, catalog):
        super().__init__(warehouse)
        self.catalog = catalog

    def norm(self, value):
        if isinstance(value, str):
            value = value.replace(self.catalog, "<catalog>")
        return super().norm(value)


started = time.monotonic()
builder = (
    SparkSession.builder.master("local[1]")
    .appName("icegate-e2e-transparency")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.jars", JARS)
    .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    .config("spark.sql.catalogImplementation", "in-memory")
    .config("spark.sql.warehouse.dir", os.path.join(WORK, "spark-warehouse"))
    .config("spark.local.dir", os.path.join(WORK, "spark-local"))
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.default.parallelism", "1")
    .config("spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile=file:{HERE}/spark/log4j2.properties -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
)
for conf in (catalog_conf("cat_direct", DIRECT), catalog_conf("cat_icegate", GATE)):
    for k, v in conf.items():
        builder = builder.config(k, v)
spark = builder.getOrCreate()
print(f"spark {spark.version} session up in {time.monotonic() - started:.1f} s", flush=True)

runs = {}
try:
    for side, catalog, warehouse in [("direct", "cat_direct", DIRECT_WH), ("icegate", "cat_icegate", GATE_WH)]:
        rec = SparkRecorder(warehouse, catalog)
        for statement in STATEMENTS:
            sql = statement.format(c=catalog)
            rec.call(statement.replace("{c}.", ""), lambda sql=sql: run(sql),
                     lambda rows: [[str(v) for v in row] for row in rows])
        rec.dump(os.path.join(WORK, f"spark-{side}.json"))
        runs[side] = rec.pairs
finally:
    spark.stop()
print(f"spark statements took {time.monotonic() - started:.1f} s", flush=True)
sys.exit(1 if report("spark", runs.get("direct", []), runs.get("icegate", [])) or len(runs) < 2 else 0)
