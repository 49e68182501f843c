#!/usr/bin/env bash
# Every key of the config schema (dataplane/config.c's table, printed by
# lfe-config-schema) through `ldapfectl reload` on one running daemon: the
# file is the start file with that one key set to the row's other valid
# value; a LIVE key's reload succeeds, a RESTART key's is refused (exit 1)
# naming exactly that key ("[ldap] max_pdu: cannot change while running").
# The keys and values come from the printout, not from this script: a row
# added to the table is walked too. Values that depend on this test's
# files and addresses are made here: a file key gets a copy of its file
# under another name, [port0] gateway an address in the port's subnet, and
# [daemon] group also sets user (a group needs one): its refusal names both.
# `ldapfectl status --json` shows every key's value in force (its
# "settings", generated from the same table): at start each key is the
# start file's value or the row's default, and after a LIVE key's reload
# it is the row's other value (a RESTART key's refusal leaves the start
# value). Values compare as the file spells them.
source "$(dirname "$0")/lib.sh"
SCHEMA=$LFE_BUILD/tests/dataplane/lfe-config-schema
[[ -x $SCHEMA ]] || { echo "SKIP: $SCHEMA not built"; exit 77; }
lfe_init cfgsch 180
lfe_make_store
lfe_pki
conf=$(lfe_tls_conf)
cp "$conf" "$LFE_WORK/start.conf"
"$SCHEMA" > "$LFE_WORK/schema.tsv"
lfe_start "$conf" 0

"$PY" - "$LFE_WORK/schema.tsv" "$LFE_WORK/start.conf" "$conf" "$LFE_CTL" "$LFE_PREFIX" "$LFE_NET" <<'PYEOF'
import json, re, shlex, shutil, subprocess, sys
schema, start, conf, ctl, prefix, net = sys.argv[1:]

# The start file as [(section, [(key, value)])], in order.
secs = []
for line in open(start):
    line = line.strip()
    if m := re.match(r"^\[(\w+)\]$", line):
        secs.append((m.group(1), []))
    elif m := re.match(r"^(\w+)\s*=\s*(.*)$", line):
        secs[-1][1].append((m.group(1), m.group(2)))

fails = []

def value(sec, key):
    for s, kv in secs:
        for k, v in kv:
            if s == sec and k == key:
                return v
    return None

def write(changes):
    """The start file with changes {(section, key): value} set."""
    out, left = [], dict(changes)
    for s, kv in secs:
        out.append(f"[{s}]")
        out += [f"{k} = {left.pop((s, k)) if (s, k) in left else v}" for k, v in kv]
        out += [f"{k} = {left.pop((s2, k))}" for (s2, k) in list(left) if s2 == s]
    for (s, k), v in left.items():
        out += [f"[{s}]", f"{k} = {v}"]
    open(conf, "w").write("\n".join(out) + "\n")

rows = [line.rstrip("\n").split("\t") for line in open(schema)]

def status():
    p = subprocess.run([ctl, "--prefix", prefix, "status", "--json"], capture_output=True, text=True,
                       timeout=30)
    return json.loads(p.stdout)["settings"]

def spelled(v):
    """A settings value of status --json as the file spells it; None: unset."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return str(v)

def shown(st, name):
    """The value status shows for the key a refusal names "[sec] key"."""
    m = re.match(r"^\[(\w+)\] (\w+)$", name)
    sec, key = m.group(1), m.group(2)
    if sec not in st or key not in st[sec]:
        return "(missing)"
    return spelled(st[sec][key])

def start_value(sec, key, name, default):
    """The value in force at start: the start file's (either name of an
    alias), else the row's default ("-": none)."""
    key2 = re.match(r"^\[\w+\] (\w+)$", name).group(1)
    v = value(sec, key) or value(sec, key2)
    if v is not None:
        return v
    return None if default == "-" else default

# At start: every key shows the start file's value or its default.
st, checked, before = status(), 0, len(fails)
for sec, key, typ, rng, default, alt, mode, name, hlp in rows:
    if sec == "port":
        sec = "port0"
    want, got = start_value(sec, key, name, default), shown(st, name)
    if got != want:
        fails.append(f"status at start: {name} shows {got!r}, want {want!r}")
    checked += 1
if len(fails) == before:
    print(f"ok: status --json shows {checked} keys' start values", flush=True)

# The text status shows the same: "settings:", then "  [SECTION] KEY=VALUE ..."
# lines (continued on lines indented further), "(unset)" for None.
text = subprocess.run([ctl, "--prefix", prefix, "status"], capture_output=True, text=True,
                      timeout=30).stdout.split("\nsettings:\n", 1)
tst, cur = {}, None
for line in (text[1] if len(text) == 2 else "").splitlines():
    if m := re.match(r"^  \[(\w+)\](.*)$", line):
        cur, rest = tst.setdefault(m.group(1), {}), m.group(2)
    elif line.startswith("      ") and cur is not None:
        rest = line
    else:
        break
    for tok in shlex.split(rest):
        k, _, v = tok.partition("=")
        cur[k] = None if v == "(unset)" else v
before = len(fails)
for sec, key, typ, rng, default, alt, mode, name, hlp in rows:
    if sec == "port":
        sec = "port0"
    want, got = shown(st, name), shown(tst, name)
    if got != want:
        fails.append(f"status (text) at start: {name} shows {got!r}, json {want!r}")
if len(fails) == before:
    print(f"ok: status (text) shows the same {checked} keys", flush=True)

def reload():
    p = subprocess.run([ctl, "--prefix", prefix, "reload"], capture_output=True, text=True, timeout=30)
    return p.returncode, (p.stdout + p.stderr).strip()

walked = {"LIVE": 0, "RESTART": 0}
for sec, key, typ, rng, default, alt, mode, name, hlp in rows:
    if sec == "port":
        sec = "port0"
    changes = {(sec, key): alt}
    names = [name]
    if typ == "file":   # the same file under another name: a valid, different value
        cur = value(sec, key)
        if cur is None:
            fails.append(f"{name}: a file key the start file does not set")
            continue
        alt = cur + ".alt"
        shutil.copy(cur, alt)
        changes = {(sec, key): alt}
    elif name == "[port0] gateway":
        changes = {(sec, key): f"10.99.{net}.254"}
    elif name == "[daemon] group":
        changes[("daemon", "user")] = "nobody"
        names = ["[daemon] user", name]
    if all(value(s, k) == v for (s, k), v in changes.items()):
        fails.append(f"{name}: its other value {alt!r} is the start file's")
        continue
    write(changes)
    rc, out = reload()
    walked[mode] += 1
    what = ", ".join(f"[{s}] {k} = {v}" for (s, k), v in changes.items())
    if mode == "LIVE":
        if rc != 0 or not out.startswith(f"reloaded {conf}"):
            fails.append(f"LIVE {what}: reload exited {rc}: {out}")
        else:
            got = [shown(status(), n) for n in names]
            want = [v for v in changes.values()]
            if got != want:
                fails.append(f"LIVE {what}: reloaded, but status shows {got}")
            else:
                print(f"ok: LIVE {what}: reloaded, status shows it", flush=True)
    else:
        m = re.search(r"(?:^|: )(\[[^:]*): cannot change while running \(restart ldapfe\)$", out)
        got = m.group(1).split(", ") if m else None
        if rc != 1 or got != names:
            fails.append(f"RESTART {what}: reload exited {rc} naming {got}, want {names}: {out}")
        elif (got := shown(status(), name)) != start_value(sec, key, name, default):
            fails.append(f"RESTART {what}: refused, but status shows {got!r}")
        else:
            print(f"ok: RESTART {what}: refused naming {', '.join(names)}, status unchanged", flush=True)

# Back to the start file: reloads (the live keys changed above return).
write({})
rc, out = reload()
if rc != 0:
    fails.append(f"reload of the start file: exited {rc}: {out}")
for f in fails:
    print("FAIL:", f, flush=True)
print(f"walked {walked['LIVE']} LIVE and {walked['RESTART']} RESTART keys, {len(fails)} wrong")
sys.exit(1 if fails or walked["LIVE"] == 0 or walked["RESTART"] == 0 else 0)
PYEOF
lfe_log "ok: every key of the schema behaves as marked on reload"
# The daemon still serves after all that.
lfe_eq "bind after the walk" "$(lfe_cli timeout 10 ldapwhoami -x -H "ldap://$LFE_SADDR" \
	-D "$(lfe_dn alice)" -w alice-pw 2>&1)" "dn:$(lfe_dn alice)"
lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_confschema"
