"""The image podman built has deploy/Dockerfile's runtime configuration (tests/pod/run.sh).

usage: image_config.py DOCKERFILE IMAGE

tests/integration/deploy compares the texts of scripts/image.sh and the Dockerfile; this compares
what `podman image inspect` reports, after podman parsed the `--change` instructions, with the
Dockerfile's last stage: user, entrypoint, command, environment, ports, volumes and labels.
"""

import json
import shlex
import subprocess
import sys

dockerfile, image = sys.argv[1], sys.argv[2]
lines, current = [], ""
for raw in open(dockerfile):
    line = raw.strip()
    if line.startswith("#") or (not current and not line):
        continue
    if line.endswith("\\"):
        current += line[:-1] + " "
    else:
        lines.append(current + line)
        current = ""
stage = lines[max(i for i, l in enumerate(lines) if l.upper().startswith("FROM ")) + 1:]
want = {"User": None, "Entrypoint": None, "Cmd": None, "Env": {}, "ExposedPorts": set(), "Volumes": set(), "Labels": {}}
for line in stage:
    word, _, args = line.partition(" ")
    word = word.upper()
    if word == "USER":
        want["User"] = args.strip()
    elif word in ("ENTRYPOINT", "CMD"):
        want[word.capitalize()] = json.loads(args)
    elif word in ("ENV", "LABEL"):
        key = "Env" if word == "ENV" else "Labels"
        want[key].update(pair.split("=", 1) for pair in shlex.split(args))
    elif word == "EXPOSE":
        want["ExposedPorts"].update(p if "/" in p else p + "/tcp" for p in args.split())
    elif word == "VOLUME":
        want["Volumes"].update(json.loads(args) if args.startswith("[") else args.split())

config = json.loads(subprocess.run(["podman", "image", "inspect", "--format", "{{json .Config}}", image],
                                   check=True, capture_output=True, text=True).stdout)
got = {
    "User": config.get("User"),
    "Entrypoint": config.get("Entrypoint"),
    "Cmd": config.get("Cmd"),
    "Env": dict(e.split("=", 1) for e in config.get("Env") or []),
    "ExposedPorts": set(config.get("ExposedPorts") or {}),
    "Volumes": set(config.get("Volumes") or {}),
    "Labels": config.get("Labels") or {},
}
differ = [f"{k}: image {got[k]!r}, Dockerfile {want[k]!r}" for k in want if got[k] != want[k]]
if differ:
    sys.exit(f"{image} is not the Dockerfile's image:\n  " + "\n  ".join(differ))
print(f"{image} has the Dockerfile's user, entrypoint, command, environment, ports, volumes and labels")
