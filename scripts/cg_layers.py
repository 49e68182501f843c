#!/usr/bin/env python3
"""scripts/cg_layers.py — self instructions by group from a raw callgrind
dump, and call counts of named functions (for scripts/callgrind-csum.sh).

  cg_layers.py DUMP FN...   prints JSON {"groups": {...}, "fns": {...}, "calls": {...}}

The dump is read by tests/bench/callgrind_bind.py's parser (the one
callgrind-bind.sh uses); this only groups its per-file costs differently.
groups: ldapfe's own sources by file (net/net.c, ...), then "lmdb",
"libcrypto", "pmd net_tap", "dpdk other", "libc", "other" by object/file.
fns: self instructions of each function whose name starts with one of FN.
calls: how often each FN was called (sum over call sites).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bench"))
from callgrind_bind import parse  # noqa: E402


def group_of(fl, ob):
    m = re.search(r"/(dataplane|ldap|backend|mgmt)/([A-Za-z0-9_]+\.[ch])$", fl)
    if m:
        return m.group(1) + "/" + m.group(2)
    s = fl + " " + ob
    for name, rx in (("lmdb", r"lmdb|mdb\.c|midl\.c"), ("libcrypto", r"libcrypto|libssl"),
                     ("pmd net_tap", r"net_tap|/tap/"), ("dpdk other", r"librte_|/rte_|dpdk"),
                     ("libc", r"libc\.so|libc-|glibc|/string/|ld-linux")):
        if re.search(rx, s):
            return name
    return "other"


def main():
    path, fns = sys.argv[1], sys.argv[2:]
    d = parse(path)
    groups = {}
    for (fl, ob), ir in d["files"].items():
        g = group_of(fl, ob)
        groups[g] = groups.get(g, 0) + ir
    fnself = {f: ir for f, ir in d["self"].items() if any(f.startswith(p) for p in fns)}
    calls = {p: d["calls"][p] for p in fns if p in d["calls"]}
    json.dump({"groups": groups, "fns": fnself, "calls": calls}, sys.stdout)


if __name__ == "__main__":
    main()
