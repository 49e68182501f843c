#!/usr/bin/env python3
"""scripts/cg_layers.py — self instructions by group from a raw callgrind
dump, and call counts of named functions (for scripts/callgrind-csum.sh).

  cg_layers.py DUMP FN...   prints JSON {"groups": {...}, "fns": {...}, "calls": {...}}

groups: ldapfe's own sources by file (dataplane/net.c, ...), then "lmdb",
"libcrypto", "pmd net_tap", "dpdk other", "libc", "other" by object/file.
fns: self instructions of each function whose name starts with one of FN.
calls: how often each FN was called (sum over call sites).
"""
import json
import re
import sys


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
    names = {"fl": {}, "fn": {}, "ob": {}}
    cur = {"ob": "", "fl": "", "fi": None, "fn": ""}
    groups, fnself, calls = {}, {}, {}
    pending_cfn = None
    skip_next = False

    def name(kind, v):
        m = re.match(r"\((\d+)\)(?: (.*))?", v)
        table = names["fl" if kind in ("fl", "fi", "fe", "cfi", "cfl") else kind.lstrip("c")]
        if not m:
            return v
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if skip_next:   # the cost line after calls= is inclusive: not self
                    skip_next = False
                    continue
                parts = line.split()
                if len(parts) < 2:
                    continue
                ir = int(parts[1])
                fl = cur["fi"] if cur["fi"] is not None else cur["fl"]
                g = group_of(fl, cur["ob"])
                groups[g] = groups.get(g, 0) + ir
                for p in fns:
                    if cur["fn"].startswith(p):
                        fnself[cur["fn"]] = fnself.get(cur["fn"], 0) + ir
                continue
            key, _, val = line.partition("=")
            if key == "ob":
                cur["ob"] = name("ob", val)
            elif key == "fl":
                cur["fl"] = name("fl", val)
                cur["fi"] = None
            elif key in ("fi", "fe"):
                cur["fi"] = name("fl", val)
            elif key == "fn":
                cur["fn"] = name("fn", val)
                cur["fi"] = None
            elif key == "cfn":
                pending_cfn = name("fn", val)
            elif key in ("cob", "cfi", "cfl"):
                name(key, val)
            elif key == "calls":
                n = int(val.split()[0])
                for p in fns:
                    if pending_cfn and pending_cfn == p:
                        calls[p] = calls.get(p, 0) + n
                skip_next = True
    json.dump({"groups": groups, "fns": fnself, "calls": calls}, sys.stdout)


if __name__ == "__main__":
    main()
