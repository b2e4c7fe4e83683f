"""What tests/e2e/transparency.sh's clients record, and how two runs' records are compared.

A run records, in order, one (label, value) pair per observable result: a listing, a schema,
properties, rows read back, a snapshot count, or the error a call raised (its type and message).
Two runs of one workload, one directly against a dev catalog and one through icegate in front of
another, must record the same pairs. Only what differs between two catalogs by nature is
normalised: each catalog's warehouse directory, UUIDs (table and view UUIDs, file names) and
what the caller lists in `normalise` — nothing else, so the comparison is otherwise strict.
Standard library only: the PyIceberg and the Spark venvs both import it.
"""
import json
import re

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# an ISO-8601 instant (the catalog's `created-at` table property)
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


class Recorder:
    def __init__(self, warehouse):
        self.warehouse = warehouse.rstrip("/")
        self.pairs = []

    def norm(self, value):
        if isinstance(value, str):
            for root in (f"file://{self.warehouse}", self.warehouse):
                value = value.replace(root, "<warehouse>")
            return INSTANT.sub("<instant>", UUID.sub("<uuid>", value))
        if isinstance(value, dict):
            return {self.norm(k): self.norm(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.norm(v) for v in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return f"<{type(value).__name__}>"  # an object the caller chose not to show

    def put(self, label, value):
        self.pairs.append([label, self.norm(value)])
        return value

    def call(self, label, fn, show=lambda v: v, section8=None):
        """Runs fn; records show(its result), or the error it raised (type and message).
        section8: how docs/design.md §8 changes this result through icegate ({"config": table
        path} for a table config, {"storage": table path, "locations": [...]} for a list of
        storage credentials, {"plan": ..., "locations": ...} for a planning answer's body)."""
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - the error is the result
            self.pairs.append([label, {"raised": type(e).__name__, "message": self.norm(first_line(str(e)))}])
            return None
        self.put(label, show(result))
        if section8 is not None:
            self.pairs[-1].append(self.norm(section8))
        return result

    def dump(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.pairs, f, indent=1, sort_keys=False)


def first_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0][:400] if lines else ""


def compare(client, direct, gate):
    """The differences between two runs' pairs, as printable lines (none: the same results)."""
    out = []
    for i in range(max(len(direct), len(gate))):
        d = direct[i] if i < len(direct) else None
        g = gate[i] if i < len(gate) else None
        if d is not None and len(d) == 3:  # the direct result as §8 says icegate hands it on
            d = [d[0], through_icegate(d[1], d[2]), d[2]]
        if d == g:
            continue
        label = (d or g)[0]
        out.append(f"{client}: result {i} `{label}` differs:\n  direct:  {short(d)}\n  icegate: {short(g)}")
        if len(out) >= 10:
            out.append(f"{client}: (further differences not shown)")
            break
    return out


def short(pair):
    if pair is None:
        return "(missing)"
    text = json.dumps(pair[1], sort_keys=True)
    return text if len(text) <= 600 else text[:600] + "..."


def report(client, direct, gate):
    """Prints the comparison; returns the number of results that differ."""
    diffs = compare(client, direct, gate)
    for line in diffs:
        print("FAIL " + line, flush=True)
    if not diffs:
        print(f"ok   {client}: {len(direct)} results, the same directly and through icegate", flush=True)
    return len(diffs)


# docs/design.md §8 as icegate applies it to a caller whose credential scope it does not lower
# (here: every call, the policy allows everything), written from the design, not from icegate's
# code: `token` goes, refresh endpoints and signer keys point at icegate (no public URL is
# configured, so relative to the catalog URI the client uses, which is icegate's), a storage
# credential whose prefix is not under one of the table's locations goes; nothing else changes.
REFRESH_KEYS = ["client.refresh-credentials-endpoint", "gcs.oauth2.refresh-credentials-endpoint",
                "adls.refresh-credentials-endpoint"]
SIGNER_KEYS = ["s3.signer.uri", "s3.signer.endpoint", "signer.uri", "signer.endpoint"]
READ_HEADERS = {"authorization", "x-gravitino-active-roles"}


def section8_config(config, table_path):
    """A table answer's `config` as icegate hands it on; table_path like `v1/namespaces/ns/tables/t`."""
    out = {k: v for k, v in config.items()
           if k != "token" and not (k.lower().startswith("header.") and k[7:].strip().lower() in READ_HEADERS)}
    for key in REFRESH_KEYS:
        if key in out:
            out[key] = f"{table_path}/credentials"
    if any(k in out for k in SIGNER_KEYS) or out.get("s3.remote-signing-enabled") == "true":
        # the offer of icegate's signer is complete for every client (issue 45), unless the
        # upstream turned signing off
        if str(out.get("s3.remote-signing-enabled", "")).strip().lower() != "false":
            out["s3.remote-signing-enabled"] = "true"
            out["s3.signer"] = "S3V4RestSigner"
        for uri, endpoint in (("s3.signer.uri", "s3.signer.endpoint"), ("signer.uri", "signer.endpoint")):
            out.pop(uri, None)
            out[endpoint] = f"{table_path}/sign"
    return out


def is_under(path, location):
    location = location.rstrip("/")
    if not location or "://" not in location and not location.startswith("<warehouse>"):
        return False
    return path == location or path.startswith(location + "/")


def section8_storage(entries, locations, table_path):
    """A `storage-credentials` list as icegate hands it on (entries keep `prefix` and `config`)."""
    return [{"prefix": e["prefix"], "config": section8_config(e.get("config") or {}, table_path)}
            for e in entries or [] if any(is_under(e["prefix"], loc) for loc in locations)]


def table_locations(metadata):
    """A table's locations (docs/design.md §8): `location` and the write paths of its properties."""
    out = [metadata["location"]] if metadata.get("location") else []
    for key in ["write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"]:
        value = (metadata.get("properties") or {}).get(key)
        if value and value not in out:
            out.append(value)
    return out


def through_icegate(value, how):
    """A direct result as docs/design.md §8 says a client sees it through icegate."""
    if "config" in how:
        return section8_config(value, how["config"])
    if "storage" in how:
        return section8_storage(value, how["locations"], how["storage"])
    if "plan" in how and isinstance(value, dict) and isinstance(value.get("body"), dict):
        body = dict(value["body"])
        if "storage-credentials" in body:
            body["storage-credentials"] = section8_storage(body["storage-credentials"], how["locations"], how["plan"])
        return {**value, "body": body}
    return value
