"""Writes the load harness's fixtures into a directory: the upstream's fixed responses (served by
nginx as the catalog), the policy icegate enforces, and icegate's config.

    python3 fixtures.py DIR UPSTREAM_PORT

The responses are what a vending Iceberg REST catalog sends: a ~20 KB loadTable with storage
credentials, a small and a 10,000-entry listTables, a loadTable with 5 MB of metadata, and a
1 GB loadView body (a sparse file) that icegate must stream.
"""

import json
import os
import sys

LIST_ENTRIES = 10_000
# The caller may not see every tenth table of the big list (DENY grants), so icegate filters.
HIDDEN_EVERY = 10


def load_table(metadata_bytes):
    """A loadTable response with about `metadata_bytes` of snapshots and vended credentials."""
    snapshots = []
    size, i = 0, 1
    while size < metadata_bytes:
        s = {
            "snapshot-id": i,
            "parent-snapshot-id": i - 1,
            "sequence-number": i,
            "timestamp-ms": 1_700_000_000_000 + i,
            "manifest-list": f"s3://lake/wh/db/t/metadata/snap-{i}-1-4d3c2b1a.avro",
            "summary": {
                "operation": "append",
                "added-data-files": "4",
                "added-records": "1000",
                "total-records": str(i * 1000),
                "note": 'a "quoted" value with {braces} and [brackets]',
            },
            "schema-id": 0,
        }
        size += len(json.dumps(s, separators=(",", ":"))) + 1
        snapshots.append(s)
        i += 1
    metadata = {
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://lake/wh/db/t",
        "last-sequence-number": i,
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": 3,
        "current-schema-id": 0,
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [
                    {"id": 1, "name": "id", "required": True, "type": "long"},
                    {"id": 2, "name": "data", "required": False, "type": "string"},
                    {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
                ],
            }
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"owner": "etl"},
        "current-snapshot-id": i - 1,
        "snapshots": snapshots,
        "snapshot-log": [],
        "metadata-log": [],
    }
    return {
        "metadata-location": "s3://lake/wh/db/t/metadata/00042.metadata.json",
        "metadata": metadata,
        "config": {
            "s3.access-key-id": "AKIAUPSTREAMKEY",
            "s3.secret-access-key": "upstream-secret",
            "s3.session-token": "upstream-session",
            "token": "catalog-token",
            "client.region": "eu-west-1",
            "s3.endpoint": "https://s3.eu-west-1.amazonaws.com",
        },
        "storage-credentials": [
            {"prefix": "s3://lake/wh/db/t", "config": {"s3.access-key-id": "AKIATABLE", "s3.secret-access-key": "s"}}
        ],
    }


def table_name(i):
    """Names as long as real ones (~65 bytes per entry), so 10,000 entries are ~650 KB."""
    return f"events_{i:05d}_daily_rollup_by_region"


def identifiers(namespace, n):
    return {
        "identifiers": [{"namespace": [namespace], "name": table_name(i)} for i in range(n)],
        "next-page-token": None,
    }


def write(path, value):
    with open(path, "w") as f:
        json.dump(value, f, separators=(",", ":"))


def main():
    out, upstream_port = sys.argv[1], int(sys.argv[2])
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    write(os.path.join(files, "config.json"), {"defaults": {}, "overrides": {}})
    write(os.path.join(files, "load_table_20k.json"), load_table(20_000))
    write(os.path.join(files, "load_table_5m.json"), load_table(5_000_000))
    write(os.path.join(files, "list_small.json"), identifiers("db", 3))
    write(os.path.join(files, "list_10k.json"), identifiers("big", LIST_ENTRIES))
    # A sparse file: 1 GB on the wire, no disk.
    with open(os.path.join(files, "view_1g.bin"), "wb") as f:
        f.truncate(1 << 30)

    denied = "\n".join(
        f"      - {{type: TABLE, fullName: lake_cat.big.{table_name(i)}, privileges: [{{name: SELECT_TABLE, condition: DENY}}]}}"
        for i in range(0, LIST_ENTRIES, HIDDEN_EVERY)
    )
    policy = f"""version: 1
metalake: lake
default_catalog: lake_cat
require_known_user: true
users:
  - name: bench
    roles: [reader, writer]
roles:
  - name: reader
    securableObjects:
      - {{type: CATALOG, fullName: lake_cat, privileges: [{{name: USE_CATALOG, condition: ALLOW}}]}}
      - {{type: SCHEMA, fullName: lake_cat.db, privileges: [{{name: USE_SCHEMA, condition: ALLOW}}, {{name: SELECT_TABLE, condition: ALLOW}}, {{name: SELECT_VIEW, condition: ALLOW}}]}}
      - {{type: SCHEMA, fullName: lake_cat.big, privileges: [{{name: USE_SCHEMA, condition: ALLOW}}, {{name: SELECT_TABLE, condition: ALLOW}}]}}
{denied}
  - name: writer
    securableObjects:
      - {{type: SCHEMA, fullName: lake_cat.db, privileges: [{{name: MODIFY_TABLE, condition: ALLOW}}]}}
"""
    with open(os.path.join(out, "policy.yaml"), "w") as f:
        f.write(policy)

    nginx_common = """worker_processes 1;
daemon off;
error_log stderr error;
pid {dir}/{name}.pid;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  client_body_temp_path {dir}/{name}-body;
  proxy_temp_path {dir}/{name}-proxy;
  fastcgi_temp_path {dir}/{name}-fastcgi;
  uwsgi_temp_path {dir}/{name}-uwsgi;
  scgi_temp_path {dir}/{name}-scgi;
  default_type application/json;
{body}
}}
"""
    upstream_body = f"""  server {{
    listen 127.0.0.1:{upstream_port};
    location = /v1/config {{ alias {files}/config.json; }}
    location = /v1/namespaces/db/tables/t {{ alias {files}/load_table_20k.json; }}
    location = /v1/namespaces/db/tables/big {{ alias {files}/load_table_5m.json; }}
    location = /v1/namespaces/db/tables {{ alias {files}/list_small.json; }}
    location = /v1/namespaces/big/tables {{ alias {files}/list_10k.json; }}
    location = /v1/namespaces/db/views/v {{ alias {files}/view_1g.bin; }}
  }}"""
    with open(os.path.join(out, "upstream.conf"), "w") as f:
        f.write(nginx_common.format(dir=out, name="upstream", body=upstream_body))
    # nginx as the reverse proxy a user would otherwise put in front of the catalog: keep-alive
    # to the upstream, buffering as configured by default.
    proxy_body = f"""  upstream catalog {{ server 127.0.0.1:{upstream_port}; keepalive 64; }}
  server {{
    listen 127.0.0.1:@PORT@;
    location / {{
      proxy_pass http://catalog;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}"""
    with open(os.path.join(out, "nginx-proxy.conf"), "w") as f:
        f.write(nginx_common.format(dir=out, name="proxy", body=proxy_body))

    # The audit log is not beside the policy (a mounted ConfigMap is read-only): a file written
    # in the watched policy directory wakes the policy watcher on every line.
    os.makedirs(os.path.join(out, "log"), exist_ok=True)
    with open(os.path.join(out, "icegate.toml"), "w") as f:
        f.write(f"""# The load harness's icegate: defaults, except the audit log goes to a file (as a
# Kubernetes node collects a container's stdout) and the policy is the harness's.
policy = "{out}/policy.yaml"
[audit]
file = "{out}/log/audit.jsonl"
""")


if __name__ == "__main__":
    main()
