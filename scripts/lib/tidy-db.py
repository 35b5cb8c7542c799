#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""tidy-db.py COMPILE_COMMANDS OUT_DIR: the compilation databases lint's
clang-tidy runs on.

clang-tidy runs every compile command of a file, and the fuzz targets build
vrnicd's sources a second time (tests/fuzz: the same code, with
VRNIC_FUZZ_SHARED_LOADS).  OUT_DIR/compile_commands.json has each file once,
with the build's own command; OUT_DIR/fuzz/compile_commands.json has the
fuzz variant of engine/cq.cc alone (the variant only changes hw_access.h,
which that unit covers).
"""
import json
import sys


def main():
    main_db, fuzz_db, seen = [], [], set()
    with open(sys.argv[1], encoding="utf-8") as f:
        entries = json.load(f)
    for e in entries:
        cmd = e.get("command") or " ".join(e.get("arguments", []))
        if "VRNIC_FUZZ_SHARED_LOADS" in cmd:
            if e["file"].endswith("/userspace/vrnicd/engine/cq.cc"):
                fuzz_db.append(e)
        elif e["file"] not in seen:
            seen.add(e["file"])
            main_db.append(e)
    for path, db in ((sys.argv[2], main_db), (sys.argv[2] + "/fuzz", fuzz_db)):
        with open(path + "/compile_commands.json", "w", encoding="utf-8") as f:
            json.dump(db, f)


if __name__ == "__main__":
    main()
