"""Packs a staged root filesystem into a reproducible tar for `podman import` (scripts/image.sh).

usage: rootfs.py STAGING OUT.tar EPOCH [PATH=UID:GID:MODE ...]

Every entry gets mtime EPOCH, owner 0:0 and mode 0755 (directories, executables) or 0644,
except the PATHs given (e.g. var/lib/icegate=65532:65532:0700); entries are in name order,
so the same staged files always give the same bytes, whoever built them and when.
"""

import os
import sys
import tarfile


def main() -> None:
    staging, out, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    overrides = {}
    for spec in sys.argv[4:]:
        path, owner = spec.split("=", 1)
        uid, gid, mode = owner.split(":")
        overrides[path.strip("/")] = (int(uid), int(gid), int(mode, 8))
    names = []
    for top, dirs, files in os.walk(staging):
        dirs.sort()
        for name in dirs + sorted(files):
            names.append(os.path.relpath(os.path.join(top, name), staging))
    with tarfile.open(out + ".tmp", "w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(names):
            info = tar.gettarinfo(os.path.join(staging, rel), arcname=rel)
            info.mtime = epoch
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if info.isdir() or info.mode & 0o111:
                info.mode = 0o755
            else:
                info.mode = 0o644
            if rel in overrides:
                info.uid, info.gid, info.mode = overrides[rel]
            if info.isfile():
                with open(os.path.join(staging, rel), "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
