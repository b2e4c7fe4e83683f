"""The URLs botocore forms for S3 requests on every endpoint form, for the differential test of
icegate's bucket/key mapping (tests/integration/signing.rs reads tests/data/s3-urls.json).

Usage (the moto venv's python, target/e2e-moto-venv, which pins botocore):
  s3_urls.py FILE            writes the table
  s3_urls.py --check FILE    exits non-zero when FILE is not what this botocore forms

Each entry: the endpoint form, the custom endpoint icegate would be configured with (or null for
AWS's own hosts), the operation, the bucket, the key or listing prefix given to botocore, and
the URL botocore sent. Nothing is sent: the URL is taken in botocore's `before-send` event.
"""
import json
import sys

import botocore.exceptions
import botocore.session
from botocore import UNSIGNED
from botocore.config import Config

# (form, region, client options, custom endpoint (url, path_style) or None)
FORMS = [
    ("global us-east-1, virtual-hosted", "us-east-1", {}, None),
    ("regional, virtual-hosted", "eu-west-1", {}, None),
    ("regional, path-style", "eu-west-1", {"s3": {"addressing_style": "path"}}, None),
    ("us-east-1 regional endpoint", "us-east-1", {"s3": {"us_east_1_regional_endpoint": "regional"}}, None),
    ("dual-stack", "eu-west-1", {"use_dualstack_endpoint": True}, None),
    ("dual-stack, path-style", "eu-west-1", {"use_dualstack_endpoint": True, "s3": {"addressing_style": "path"}},
     None),
    ("FIPS", "us-east-2", {"use_fips_endpoint": True}, None),
    ("FIPS dual-stack", "us-east-2", {"use_fips_endpoint": True, "use_dualstack_endpoint": True}, None),
    ("accelerate", "eu-west-1", {"s3": {"use_accelerate_endpoint": True}}, None),
    ("accelerate dual-stack", "eu-west-1", {"s3": {"use_accelerate_endpoint": True}, "use_dualstack_endpoint": True},
     None),
    ("China", "cn-north-1", {}, None),
    ("China, path-style", "cn-northwest-1", {"s3": {"addressing_style": "path"}}, None),
    ("GovCloud FIPS", "us-gov-west-1", {"use_fips_endpoint": True}, None),
    ("ISO", "us-iso-east-1", {}, None),
    ("ISO-B", "us-isob-east-1", {}, None),
    ("custom endpoint, default addressing", "us-east-1", {}, ("http://minio.local:9000", False)),
    ("custom endpoint, path-style", "us-east-1", {"s3": {"addressing_style": "path"}}, ("http://minio.local:9000", True)),
    ("custom endpoint, virtual-hosted", "us-east-1", {"s3": {"addressing_style": "virtual"}},
     ("http://minio.local:9000", False)),
    ("custom endpoint with a base path", "us-east-1", {}, ("https://gateway.local/s3", False)),
    ("IP address endpoint", "us-east-1", {}, ("http://127.0.0.1:9000", True)),
]
BUCKETS = ["lake", "my.dotted.lake"]
KEYS = [
    "wh/db/t/data/00000-0-5f1c.parquet",
    "wh/db/t/data/with space/a+b=c&d.parquet",
    "wh/db/t/metadata/ünïcode~é 🧊.json",
    "wh/db/t/data/%25 percent;semi,comma$dollar'quote(paren)*star!bang@at:colon",
    "wh/db/t/data/q?h#x",
    "wh/db/t//double/slash",
]
OPERATIONS = [
    ("GetObject", lambda b, k: {"Bucket": b, "Key": k}),
    ("HeadObject", lambda b, k: {"Bucket": b, "Key": k}),
    ("PutObject", lambda b, k: {"Bucket": b, "Key": k, "Body": b"x"}),
    ("DeleteObject", lambda b, k: {"Bucket": b, "Key": k}),
    ("CreateMultipartUpload", lambda b, k: {"Bucket": b, "Key": k}),
    ("UploadPart", lambda b, k: {"Bucket": b, "Key": k, "UploadId": "u", "PartNumber": 1, "Body": b"x"}),
    ("PutObjectTagging", lambda b, k: {"Bucket": b, "Key": k, "Tagging": {"TagSet": []}}),
    ("ListObjectsV2", lambda b, k: {"Bucket": b, "Prefix": k}),
    ("DeleteObjects", lambda b, k: {"Bucket": b, "Delete": {"Objects": [{"Key": k}]}}),
]


class Captured(Exception):
    pass


def url_of(client, operation, params):
    def capture(request, **_):
        raise Captured(request.url)

    client.meta.events.register_first("before-send.s3", capture)
    try:
        getattr(client, botocore.xform_name(operation))(**params)
    except Captured as c:
        return str(c)
    finally:
        client.meta.events.unregister("before-send.s3", capture)
    raise RuntimeError(f"{operation} sent nothing")


def table():
    session = botocore.session.get_session()
    out = []
    for form, region, options, custom in FORMS:
        client = session.create_client("s3", region_name=region, endpoint_url=custom[0] if custom else None,
                                       config=Config(signature_version=UNSIGNED, **options))
        for bucket in BUCKETS:
            for key in KEYS:
                for operation, params in OPERATIONS:
                    try:
                        url = url_of(client, operation, params(bucket, key))
                    except botocore.exceptions.EndpointResolutionError:
                        continue  # a combination botocore does not form (accelerate needs virtual hosting)
                    out.append({
                        "form": form,
                        "endpoint": {"url": custom[0], "path_style": custom[1]} if custom else None,
                        "operation": operation,
                        "bucket": bucket,
                        "key": key,
                        "url": url,
                    })
    return out


def render(entries):
    return "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n"


if __name__ == "__main__":
    check = sys.argv[1] == "--check"
    path = sys.argv[-1]
    text = render(table())
    if check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit(f"{path} is not what botocore {botocore.__version__} forms: regenerate it with "
                         f"`target/e2e-moto-venv/bin/python tests/e2e/s3_urls.py {path}`")
        print(f"{path}: what botocore {botocore.__version__} forms", file=sys.stderr)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
