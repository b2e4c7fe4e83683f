"""Renders deploy/kubernetes/sidecar for `podman kube play` (tests/pod/run.sh, docs/deploy.md).

usage: render.py KUSTOMIZATION_DIR CATALOG_IMAGE WAREHOUSE_DIR [POLICY_FILE]

Prints the kustomization's resources as one YAML stream, as `kubectl kustomize` would (its
`images:` applied), with one overlay, on the catalog container only, each change for a reason
podman or this test has and Kubernetes does not:

- its image is the dev catalog's (scripts/image.sh): no registry is reachable here, and the dev
  catalog reads the fixture's CATALOG_* variables, so the container's env stays as it is;
- its warehouse is WAREHOUSE_DIR, mounted from the host at the same path: the test's PyIceberg
  runs on the host and reads and writes the data files the catalog's metadata names. In a
  cluster both sides reach an object store instead;
- it keeps its catalog in SQLite in that directory (CATALOG_URI, as the fixture reads it), not
  in memory, so that the tables outlive the pod as a real catalog's do and the test can show
  their creators still own them after `podman kube down` and `play`.

A PersistentVolumeClaim whose volume exists already is left out: `kubectl apply` leaves an
existing claim as it is, while podman 4.3 refuses to play it (`volume already exists`), also
with --replace.

With POLICY_FILE, the policy ConfigMap's `lake.yaml` is that file's text (a changed policy,
applied with the pod replaced). Everything else is untouched: icegate's container, its security
context, probes and mounts, the ConfigMaps, the PersistentVolumeClaim. Service and
NetworkPolicy are printed too; podman 4.3 skips kinds it does not play.
"""

import subprocess
import sys

import yaml


def main() -> None:
    directory, catalog_image, warehouse = sys.argv[1], sys.argv[2], sys.argv[3]
    policy = open(sys.argv[4]).read() if len(sys.argv) > 4 else None
    with open(f"{directory}/kustomization.yaml") as f:
        kustomization = yaml.safe_load(f)
    images = {i["name"]: i for i in kustomization.get("images", [])}
    docs = []
    for name in kustomization["resources"]:
        with open(f"{directory}/{name}") as f:
            docs.extend(d for d in yaml.safe_load_all(f) if d)
    docs = [d for d in docs if not (d["kind"] == "PersistentVolumeClaim" and volume_exists(d["metadata"]["name"]))]
    for doc in docs:
        if doc["kind"] == "ConfigMap" and policy is not None and "lake.yaml" in doc.get("data", {}):
            doc["data"]["lake.yaml"] = policy
        if doc["kind"] != "Deployment":
            continue
        spec = doc["spec"]["template"]["spec"]
        for container in spec["containers"]:
            retag(container, images)
            if container["name"] == "catalog":
                container["image"] = catalog_image
                env = [e for e in container.get("env", []) if e["name"] != "CATALOG_URI"]
                for e in env:
                    if e["name"] == "CATALOG_WAREHOUSE":
                        e["value"] = f"file://{warehouse}"
                container["env"] = env + [{"name": "CATALOG_URI", "value": f"jdbc:sqlite:{warehouse}/catalog.db"}]
                container.setdefault("volumeMounts", []).append({"name": "warehouse", "mountPath": warehouse})
        spec["volumes"].append({"name": "warehouse", "hostPath": {"path": warehouse, "type": "Directory"}})
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


def volume_exists(name: str) -> bool:
    return subprocess.run(["podman", "volume", "exists", name]).returncode == 0


def retag(container: dict, images: dict) -> None:
    """kustomize's `images:` transformer: name[:tag] to newName:newTag."""
    name, _, tag = container["image"].partition(":")
    if name in images:
        rule = images[name]
        container["image"] = f"{rule.get('newName', name)}:{rule.get('newTag', tag)}"


if __name__ == "__main__":
    main()
