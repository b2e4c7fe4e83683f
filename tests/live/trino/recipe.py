"""Writes the README's Trino catalog files (tests/live/trino.sh), so the README cannot drift.

Usage: recipe.py README OUT_DIR GATE IDP_TOKEN_URL SECRET S3_ENDPOINT

Reads the ```properties block under the README's "**Trino**" client entry (lake_read) and the
backticked `iceberg.rest-catalog.http-headers=...` line after it (lake_write's header), and writes
OUT_DIR/lake_read.properties and OUT_DIR/lake_write.properties with the example's address, token
endpoint and secret replaced by the test's, plus the two lines only moto needs (`s3.endpoint`,
`s3.path-style-access`). Exits non-zero when the README no longer has them.
"""
import re
import sys

readme, out, gate, token_url, secret, s3_endpoint = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
entry = text.index("- **Trino**")
block = re.search(r"```properties\n(.*?)```", text[entry:], re.S)
if not block:
    sys.exit("recipe.py: no ```properties block under the README's Trino entry")
lines = [line.strip() for line in block.group(1).splitlines() if line.strip()]
props = dict(line.split("=", 1) for line in lines)
write_header = re.search(r"`iceberg\.rest-catalog\.http-headers=([^`]*)`", text[entry + block.end():])
if not write_header:
    sys.exit("recipe.py: no lake_write `iceberg.rest-catalog.http-headers=...` line after the block")
client = props["iceberg.rest-catalog.oauth2.credential"].split(":", 1)[0]
replaced = {
    "iceberg.rest-catalog.uri": gate,
    "iceberg.rest-catalog.oauth2.server-uri": token_url,
    "iceberg.rest-catalog.oauth2.credential": f"{client}:{secret}",
}
for key in replaced:
    if key not in props:
        sys.exit(f"recipe.py: the README's Trino recipe has no {key}")
for name, header in (("lake_read", None), ("lake_write", write_header.group(1))):
    with open(f"{out}/{name}.properties", "w", encoding="utf-8") as f:
        for key, value in props.items():
            value = replaced.get(key, value)
            if key == "iceberg.rest-catalog.http-headers" and header is not None:
                value = header
            f.write(f"{key}={value}\n")
        f.write(f"s3.endpoint={s3_endpoint}\ns3.path-style-access=true\n")
