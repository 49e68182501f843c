#!/usr/bin/env python3
"""tests/dataplane/check_conf_docs.py SCHEMA_TOOL CONF MAN: the example
configuration and ldapfe.conf(5) against config.c's table of keys, as
lfe-config-schema prints it.

conf/ldapfe.conf: every key of the table appears in its section, set or
commented out ("key = v" or "#key = v"), and no key the table lacks; where
the key has a default, the value shown is the default, or the comment above
the key says "Default: <default>"; the list after "applies these keys live"
names exactly the LIVE keys.
ldapfe.conf(5): the KEYS section is `lfe-config-schema --man`'s output
verbatim (every key, its type, range, default, and Live or Restart).
"""
import difflib
import re
import subprocess
import sys

tool, conf_path, man_path = sys.argv[1:4]
errors = []


def err(msg):
    errors.append(msg)


rows = []
for line in subprocess.run([tool], capture_output=True, text=True, check=True).stdout.splitlines():
    sec, key, typ, rng, default, alt, reload, name, hlp = line.split("\t")
    rows.append(dict(sec="port0" if sec == "port" else sec, key=key, default=default, reload=reload))
table = {(r["sec"], r["key"]): r for r in rows}

# ------------------------------------------------------------ the example
seen = {}        # (section, key) -> [(value, comment block)]
live_listed = set()
section = None
comment = []
live_block = False
for n, line in enumerate(open(conf_path, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if live_block:
        m = re.match(r"^#\s{2,}\[(\w+)\]\s+(.*)$", line)
        if m:
            live_sec = m.group(1)
            live_listed.update((live_sec, k) for k in m.group(2).replace(",", " ").split())
            continue
        m = re.match(r"^#\s{4,}(\S.*)$", line)
        if m and live_sec:
            live_listed.update((live_sec, k) for k in m.group(1).replace(",", " ").split())
            continue
        if live_sec is not None or not line.startswith("#"):
            live_block = False   # the list ended (or never came)
    if "applies these keys live" in line:
        live_block, live_sec = True, None
    m = re.match(r"^#?\[(\w+)\]\s*$", line)
    if m:
        section, comment = m.group(1), []
        continue
    m = re.match(r"^#?([a-z][a-z0-9_]*) =\s*(.*?)\s*$", line)
    if m:
        if section is None:
            err(f"{conf_path}:{n}: {m.group(1)} before any section")
            continue
        seen.setdefault((section, m.group(1)), []).append((m.group(2), " ".join(comment)))
        comment = []
        continue
    if line.startswith("#"):
        comment.append(line.lstrip("# "))
    elif not line.strip():
        pass

for (sec, key), r in table.items():
    if (sec, key) not in seen:
        err(f"{conf_path}: [{sec}] {key}: not in the example (neither set nor commented out)")
        continue
    d = r["default"]
    if d == "-":
        continue
    ok = any(v == d or re.search(r"default:? " + re.escape(d) + r"(\W|$)", c, re.I)
             for v, c in seen[(sec, key)])
    if not ok:
        err(f"{conf_path}: [{sec}] {key}: shows {seen[(sec, key)][0][0]!r}, the default is {d!r} "
            f"(show it, or say \"Default: {d}\" in the comment above)")
for (sec, key) in seen:
    if (sec, key) not in table:
        err(f"{conf_path}: [{sec}] {key}: no such key in dataplane/config.c's table")
live = {(r["sec"], r["key"]) for r in rows if r["reload"] == "LIVE"}
for sec, key in sorted(live - live_listed):
    err(f"{conf_path}: [{sec}] {key} is LIVE but not in the list after \"applies these keys live\"")
for sec, key in sorted(live_listed - live):
    err(f"{conf_path}: [{sec}] {key} is in the list of live keys but "
        f"{'RESTART' if (sec, key) in table else 'not a key'} in the table")

# ------------------------------------------------------------ the man page
want = subprocess.run([tool, "--man"], capture_output=True, text=True, check=True).stdout
man = open(man_path, encoding="utf-8").read()
m = re.search(r'^\.SH KEYS\n(?:\.\\"[^\n]*\n)*(.*?)^\.\\" End of the generated KEYS section\.$', man,
              re.S | re.M)
if not m:
    err(f"{man_path}: no .SH KEYS section ending in '.\\\" End of the generated KEYS section.'")
elif m.group(1) != want:
    diff = "".join(difflib.unified_diff(m.group(1).splitlines(True), want.splitlines(True),
                                        man_path, "lfe-config-schema --man"))
    err(f"{man_path}: the KEYS section is not the table's (regenerate it with "
        f"lfe-config-schema --man):\n{diff}")

for e in errors:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print(f"ok: {len(rows)} keys, {len(live)} live, in {conf_path} and {man_path}")
