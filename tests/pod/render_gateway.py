"""Renders deploy/kubernetes/gateway, and the test's PostgreSQL and catalog, for `podman kube
play` (tests/pod/gateway.sh; docs/deploy.md section 9 lists the overlay and why).

usage: render_gateway.py store WORK VERSION
       render_gateway.py gateway WORK VERSION POSTGRES_IP CATALOG_IP IDP_IP [--unshared]

WORK holds what the test made: ca.crt (its CA), postgres.crt and postgres.key (the server's
certificate for postgres.icegate.svc.cluster.local), password, page_token_key.

`store` prints tests/pod/gateway/postgres.yaml and catalog.yaml with their REPLACE values
filled in. `gateway` prints the kustomization's resources as `kubectl kustomize` would (its
`images:` applied), with

- what the manifests tell users to REPLACE, replaced: the page-token key and the PostgreSQL
  password in the config Secret, the CA in postgres-ca.yaml;
- and what podman 4.3 cannot do otherwise:
  - every Secret becomes a ConfigMap of the same keys, and every volume from a Secret a volume
    from that ConfigMap: podman 4.3's Secret volumes crash without `optional` (containers/podman
    issue 16636), write no `stringData` key and write `data` values still base64-encoded;
  - the Deployment (3 replicas) becomes two Deployments of one replica, icegate-a and
    icegate-b, each publishing its two ports on its own host ports (18181/19181 and
    28181/29181): podman publishes every containerPort on the host, so replicas collide;
  - Service DNS is stood in for by hostAliases in each pod: postgres.icegate.svc.cluster.local,
    gravitino.catalog.svc.cluster.local and idp.example.com to the addresses given (the
    PostgreSQL pod, the catalog pod, the host where the test serves the JWKS);
  - the system's CA bundle (/etc/ssl/certs) in icegate's container is a ConfigMap holding the
    test's CA, which issued the certificate of idp.example.com the test serves the JWKS with;
  - `upstream.url` loses Gravitino's `/iceberg` base path: the dev catalog standing in for
    Gravitino serves at the root.
With --unshared (the test's own check that it can fail), replica B's config names the second
database, `icegate_b`: the replicas then do not share the store.
"""

import sys

import yaml

HERE = sys.path[0]
GATEWAY = f"{HERE}/../../deploy/kubernetes/gateway"
PORTS = {"icegate-a": {"http": 18181, "admin": 19181}, "icegate-b": {"http": 28181, "admin": 29181}}


def main() -> None:
    what, work, version = sys.argv[1], sys.argv[2], sys.argv[3]
    read = lambda name: open(f"{work}/{name}").read()  # noqa: E731
    if what == "store":
        docs = load(f"{HERE}/gateway/postgres.yaml") + load(f"{HERE}/gateway/catalog.yaml")
        for doc in docs:
            if doc["kind"] == "Secret" and doc["metadata"]["name"] == "postgres-server":
                doc["stringData"] = {
                    "password": read("password").strip(),
                    "tls.crt": read("postgres.crt"),
                    "tls.key": read("postgres.key"),
                }
            for container in containers(doc):
                name, _, _ = container["image"].partition(":")
                if name == "icegate-dev-catalog":
                    container["image"] = f"localhost/icegate-dev-catalog:{version}"
                else:
                    container["image"] = f"localhost/{container['image']}"
    elif what == "gateway":
        postgres_ip, catalog_ip, idp_ip = sys.argv[4:7]
        unshared = "--unshared" in sys.argv[7:]
        docs = gateway(read, postgres_ip, catalog_ip, idp_ip, unshared)
    else:
        sys.exit(f"unknown `{what}`")
    docs = [secret_as_config_map(d) for d in docs]
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


def gateway(read, postgres_ip: str, catalog_ip: str, idp_ip: str, unshared: bool) -> list:
    with open(f"{GATEWAY}/kustomization.yaml") as f:
        kustomization = yaml.safe_load(f)
    images = {i["name"]: i for i in kustomization.get("images", [])}
    docs = []
    for name in kustomization["resources"]:
        docs.extend(load(f"{GATEWAY}/{name}"))
    out = []
    for doc in docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind == "Secret" and name == "icegate-config":
            toml = doc["stringData"]["icegate.toml"]
            toml = replace_once(toml, 'page_token_key = "' + "0" * 64 + '"', f'page_token_key = "{read("page_token_key").strip()}"')
            toml = replace_once(toml, "password=REPLACE", f"password={read('password').strip()}")
            toml = replace_once(toml, "svc.cluster.local:9001/iceberg", "svc.cluster.local:9001")
            doc["stringData"]["icegate.toml"] = toml
            out.append(doc)
            if unshared:
                other = yaml.safe_load(yaml.safe_dump(doc))
                other["metadata"]["name"] = "icegate-config-b"
                other["stringData"]["icegate.toml"] = replace_once(toml, "dbname=icegate ", "dbname=icegate_b ")
                out.append(other)
        elif kind == "ConfigMap" and name == "icegate-postgres-ca":
            doc["data"]["ca.crt"] = read("ca.crt")
            out.append(doc)
        elif kind == "Deployment":
            for replica in PORTS:
                out.append(replica_of(doc, replica, images, postgres_ip, catalog_ip, idp_ip, unshared))
        else:
            out.append(doc)
    out.append({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "icegate-test-trust"},
        "data": {"ca-certificates.crt": read("ca.crt")},
    })
    return out


def replica_of(deployment: dict, replica: str, images: dict, postgres_ip, catalog_ip, idp_ip, unshared) -> dict:
    doc = yaml.safe_load(yaml.safe_dump(deployment))  # a deep copy
    doc["metadata"]["name"] = replica
    doc["spec"]["replicas"] = 1
    spec = doc["spec"]["template"]["spec"]
    spec["hostAliases"] = [
        {"ip": postgres_ip, "hostnames": ["postgres.icegate.svc.cluster.local"]},
        {"ip": catalog_ip, "hostnames": ["gravitino.catalog.svc.cluster.local"]},
        {"ip": idp_ip, "hostnames": ["idp.example.com"]},
    ]
    spec["volumes"].append({"name": "test-trust", "configMap": {"name": "icegate-test-trust"}})
    if unshared and replica == "icegate-b":
        for volume in spec["volumes"]:
            if volume.get("secret", {}).get("secretName") == "icegate-config":
                volume["secret"]["secretName"] = "icegate-config-b"
    for container in spec["containers"]:
        name, _, tag = container["image"].partition(":")
        if name in images:
            rule = images[name]
            container["image"] = f"localhost/{rule.get('newName', name)}:{rule.get('newTag', tag)}"
        for port in container.get("ports", []):
            port["hostPort"] = PORTS[replica][port["name"]]
        if container["name"] == "icegate":
            container["volumeMounts"].append({"name": "test-trust", "mountPath": "/etc/ssl/certs", "readOnly": True})
    return doc


def secret_as_config_map(doc: dict) -> dict:
    if doc["kind"] == "Secret":
        data = dict(doc.get("stringData", {}))
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc["metadata"], "data": data}
    spec = doc.get("spec", {}).get("template", {}).get("spec", {})
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            volume["configMap"] = {"name": volume.pop("secret")["secretName"]}
    return doc


def containers(doc: dict) -> list:
    return doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        sys.exit(f"render_gateway.py: expected `{old}` once in the gateway's config, found it {text.count(old)} times")
    return text.replace(old, new)


def load(path: str) -> list:
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


if __name__ == "__main__":
    main()
