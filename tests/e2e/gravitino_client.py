"""Reads a metalake with Gravitino's own Python client (apache-gravitino, pinned in
tests/e2e/requirements-gravitino.txt) and prints what it read as JSON: the roles with their
securable objects and privileges, the users and groups with their roles, and the owner of each
object named on the command line. Run by the integration test
`gravitino::the_fake_reads_back_through_gravitinos_own_client` against icegate's fake Gravitino,
whose answers must read back as icegate's reader read them.

usage: gravitino_client.py URL METALAKE OBJECTS_JSON  (OBJECTS_JSON: [["TABLE", "c.s.t"], ...])
"""
import json
import os
import sys

from gravitino import GravitinoClient
from gravitino.api.metadata_object import MetadataObject
from gravitino.api.metadata_objects import MetadataObjects
from gravitino.auth.simple_auth_provider import SimpleAuthProvider

url, metalake, objects = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
os.environ["GRAVITINO_USER"] = "icegate"
client = GravitinoClient(uri=url, metalake_name=metalake, check_version=False,
                         auth_data_provider=SimpleAuthProvider())
out = {"roles": [], "users": [], "groups": [], "owners": []}
for name in client.list_role_names():
    role = client.get_role(name)
    out["roles"].append({
        "name": role.name(),
        "securableObjects": [{
            "fullName": o.full_name(),
            "type": o.type().value.upper(),
            "privileges": [{"name": p.name().name, "condition": p.condition().name} for p in o.privileges()],
        } for o in role.securable_objects()],
    })
for u in client.list_users():
    out["users"].append({"name": u.name(), "roles": list(u.roles() or [])})
for g in client.list_groups():
    out["groups"].append({"name": g.name(), "roles": list(g.roles() or [])})
for kind, full_name in objects:
    owner = client.get_owner(MetadataObjects.parse(full_name, MetadataObject.Type(kind.lower())))
    out["owners"].append({"type": kind, "fullName": full_name,
                          "owner": None if owner is None else {"name": owner.name(), "type": owner.type().name}})
print(json.dumps(out))
