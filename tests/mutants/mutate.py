#!/usr/bin/env python3
"""tests/mutants/mutate.py — the list and the edits behind run.sh.

mutants.txt: blocks of "key = value" lines under "[id]"; '#' lines are
comments. Keys: file, func, from, to, tests (space separated meson test
names), why. `from` is a whole source line with its indentation stripped,
found exactly once inside the body of `func` (from its definition line to
the next "}" in column 0); `to` replaces it, keeping the indentation.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def parse(path):
    out, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if not s.strip() or s.lstrip().startswith("#"):
                continue
            m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", s.strip())
            if m:
                cur = m.group(1)
                if cur in out:
                    sys.exit(f"{path}:{n}: duplicate id {cur}")
                out[cur] = {"id": cur}
                continue
            if cur is None or " = " not in s:
                sys.exit(f"{path}:{n}: expected [id] or 'key = value'")
            k, v = s.split(" = ", 1)
            out[cur][k.strip()] = v
    for m in out.values():
        for k in ("file", "func", "from", "to", "tests"):
            if k not in m:
                sys.exit(f"{path}: [{m['id']}] lacks {k}")
    return out


def mutate(text, m):
    """The mutated text, or an error string."""
    lines = text.split("\n")
    start = None
    pat = re.compile(r"^[A-Za-z_].*\b" + re.escape(m["func"]) + r"\s*\(")
    for i, l in enumerate(lines):
        if pat.match(l) and not l.rstrip().endswith(";"):
            start = i
            break
    if start is None:
        return None, f"function {m['func']} not found"
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("}")), None)
    if end is None:
        return None, f"end of {m['func']} not found"
    hits = [j for j in range(start, end) if lines[j].strip() == m["from"].strip()]
    if len(hits) != 1:
        return None, f"'{m['from']}' found {len(hits)} times in {m['func']}"
    j = hits[0]
    indent = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
    lines[j] = indent + m["to"].strip()
    return "\n".join(lines), None


def copy_if_changed(src, dst):
    if os.path.exists(dst):
        with open(src, "rb") as a, open(dst, "rb") as b:
            if a.read() == b.read():
                return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)       # new mtime: ninja rebuilds it
    shutil.copymode(src, dst)


def main():
    cmd = sys.argv[1]
    if cmd == "sync":
        # sync ROOT SNAP SRC [REV]: the tree (the working tree, or commit
        # REV) into SNAP, the pristine copy mutants are made from, then
        # SNAP into SRC, the copy that is built; unchanged files keep
        # their mtime so the build directory stays valid.
        root, snap, dst = sys.argv[2:5]
        rev = sys.argv[5] if len(sys.argv) > 5 else ""
        if rev:
            with tempfile.TemporaryDirectory() as tmp:
                arch = subprocess.run(["git", "-C", root, "archive", rev], check=True,
                                      capture_output=True).stdout
                subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
                files = [os.path.relpath(os.path.join(d, f), tmp)
                         for d, _, fs in os.walk(tmp) for f in fs]
                for f in files:
                    copy_if_changed(os.path.join(tmp, f), os.path.join(snap, f))
        else:
            files = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard",
                                    "-z"], check=True, capture_output=True).stdout.decode().split("\0")
            files = [f for f in files if f and os.path.isfile(os.path.join(root, f))]
            for f in files:
                copy_if_changed(os.path.join(root, f), os.path.join(snap, f))
        for f in files:
            copy_if_changed(os.path.join(snap, f), os.path.join(dst, f))
        return
    if cmd == "restore":
        root, dst, f = sys.argv[2:5]
        shutil.copyfile(os.path.join(root, f), os.path.join(dst, f))
        return
    ms = parse(sys.argv[2])
    if cmd == "ids":
        print("\n".join(ms))
    elif cmd == "list":
        for m in ms.values():
            print(f"{m['id']:28} {m['file']}:{m['func']}  [{m['tests']}]")
    elif cmd == "tests":
        print(ms[sys.argv[3]]["tests"])
    elif cmd == "file":
        print(ms[sys.argv[3]]["file"])
    elif cmd == "apply":
        m = ms[sys.argv[3]]
        root, dst = sys.argv[4], sys.argv[5]
        with open(os.path.join(root, m["file"]), encoding="utf-8") as f:
            text, err = mutate(f.read(), m)
        if err:
            print(f"  {m['id']}: {err}", file=sys.stderr)
            sys.exit(1)
        with open(os.path.join(dst, m["file"]), "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
