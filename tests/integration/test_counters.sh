#!/usr/bin/env bash
# Every counter of the modules' tables (common/ctr.h, composed in
# dataplane/wstats.h), as `ldapfe --counters` lists them, appears in all
# three outputs of the running daemon:
#   - `ldapfectl stats --json --per-core`: the same names in the same order,
#     in total and per core; `ldapfectl stats` (text): a line each, drop
#     reasons only when not 0;
#   - /metrics: the metric the table names (ldapfe_NAME_total, ldapfe_NAME
#     for gauges, ldapfe_drops_total{reason=...}) with core="0", its HELP
#     line (the table's help) and TYPE line (the table's kind);
#   - rte_telemetry /ldapfe/stats: every name in total and lcore_0 (sparse
#     rows, the drop reasons, only when not 0), and no other name;
#   - the labelled families over them (",alias": ldapfe_binds_total{result})
#     in /metrics with core="0", HELP and TYPE, equal to their counter in
#     `ldapfectl stats` as long as no bind runs.
# The list comes from the program, never from this script.
source "$(dirname "$0")/lib.sh"
lfe_init counters 185
lfe_make_store
conf=$(lfe_conf 1)
printf '[admin]\nmetrics_listen = 127.0.0.1:9389\n' >> "$conf"
lfe_start "$conf" 0
srv() { ip netns exec "$LFE_SRV" "$@"; }
ctl() { "$LFE_CTL" --prefix "$LFE_PREFIX" "$@"; }

"$LFE_LDAPFE" --counters > "$LFE_WORK/table" || lfe_fail "ldapfe --counters"
# Some traffic, so that a few counters (and a drop or none) are not 0.
lfe_cli timeout 10 ldapwhoami -x -H "ldap://$LFE_SADDR" -D "$(lfe_dn carol)" -w carol-pw >/dev/null
sleep 0.1   # counters are published every millisecond
ctl stats --json --per-core > "$LFE_WORK/stats.json" || lfe_fail "ldapfectl stats --json"
ctl stats > "$LFE_WORK/stats.txt" || lfe_fail "ldapfectl stats"
srv curl -sf --max-time 5 http://127.0.0.1:9389/metrics > "$LFE_WORK/metrics" || lfe_fail "GET /metrics"
lfe_telemetry /ldapfe/stats > "$LFE_WORK/tel.json" || lfe_fail "telemetry"

out=$("$PY" - "$LFE_WORK" <<'PYEOF'
import json, re, sys
w = sys.argv[1]
rows, aliases = [], []
for l in open(w + "/table"):
    name, kind, module, metric, help_ = l.rstrip("\n").split(" ", 4)
    flags = kind.split(",")[1:]
    (aliases if "alias" in flags else rows).append(
        (name, kind.split(",")[0], "sparse" in flags, metric, help_))
bad = []
if len(aliases) < 4:
    bad.append("table: %d aliases (ldapfe_binds_total{result})" % len(aliases))
names = [r[0] for r in rows]
if len(rows) < 10 or "binds_ok" not in names:
    bad.append("table: %d rows" % len(rows))
st = json.load(open(w + "/stats.json"))
for what, got in (("total", st["total"]), ("core 0", st["cores"]["0"])):
    if list(got) != names:   # ldapfectl keeps the daemon's order (names first seen)
        bad.append("stats --json %s: %s" % (what, sorted(set(names) ^ set(got)) or "order differs"))
txt = {l.split()[0] for l in open(w + "/stats.txt").read().splitlines()[1:] if l.strip()}
page = open(w + "/metrics").read()
tel = json.load(open(w + "/tel.json"))["/ldapfe/stats"]
for name, kind, sparse, metric, help_ in rows:
    v = st["total"].get(name, 0)
    if name not in txt and not (sparse and v == 0):
        bad.append("stats text: " + name)
    m = re.fullmatch(r'([a-z_]+)(?:\{([a-z_]+="[a-z0-9_]+")\})?', metric)
    if not m:
        bad.append("metric? " + metric)
        continue
    fam, lab = m.group(1), m.group(2)
    sel = '%s{core="0"%s} ' % (fam, "," + lab if lab else "")
    if not any(l.startswith(sel) for l in page.splitlines()):
        bad.append("/metrics: " + sel)
    if ("\n# TYPE %s %s\n" % (fam, kind)) not in page:
        bad.append("/metrics TYPE: " + fam)
    if lab is None and ("\n# HELP %s %s\n" % (fam, help_)) not in page:
        bad.append("/metrics HELP: " + fam)
    if lab is not None and not re.search(r"\n# HELP %s \S" % fam, page):
        bad.append("/metrics HELP: " + fam)
    for c, vals in (("total", st["total"]), ("lcore_0", st["cores"]["0"])):
        # counters only grow: 0 in stats (asked first) may be more here
        if name not in tel[c] and not (sparse and vals.get(name, 0) == 0):
            bad.append("telemetry %s: %s" % (c, name))
for name, kind, sparse, metric, help_ in aliases:
    m = re.fullmatch(r'([a-z_]+)\{([a-z_]+="[a-z0-9_]+")\}', metric)
    if not m or name not in names:
        bad.append("alias? %s %s" % (name, metric))
        continue
    sel = '%s{core="0",%s} ' % (m.group(1), m.group(2))
    got = [l[len(sel):] for l in page.splitlines() if l.startswith(sel)]
    if len(got) != 1 or int(got[0]) != st["cores"]["0"][name]:
        bad.append("/metrics: %s %s, ldapfectl stats %s %s" % (sel, got, name, st["cores"]["0"].get(name)))
    if ("\n# TYPE %s counter\n" % m.group(1)) not in page or not re.search(r"\n# HELP %s \S" % m.group(1), page):
        bad.append("/metrics HELP/TYPE: " + m.group(1))
for c in ("total", "lcore_0"):
    extra = set(tel[c]) - set(names)
    if extra:
        bad.append("telemetry %s has %s" % (c, sorted(extra)))
print("\n".join(bad) if bad else "ok %d" % len(rows))
PYEOF
)
[[ $out == ok* ]] || lfe_fail "counters missing: $out"
lfe_log "ok: all $out counters in ldapfectl stats, /metrics and telemetry, and the families over them"
lfe_stop
lfe_eq "exit status" "$LFE_STOP_RC" 0
lfe_log "ok: all"
