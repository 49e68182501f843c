#!/usr/bin/env bash
# Prometheus /metrics ([admin] metrics_listen, libmicrohttpd) through the
# real daemon on af_packet/veth, scraped by a real Prometheus server
# (Debian's prometheus) bound to 127.0.0.1 in the server namespace:
#   - the page passes `promtool check metrics`;
#   - after N binds, Prometheus's HTTP API returns sum(ldapfe_binds_total)
#     = N and ldapfe_binds_ok_total = the successful ones;
#   - every verified bind lands in the latency histogram
#     ldapfe_bind_duration_seconds: the {SSHA} ones under path="inline", the
#     {CRYPT} ones (verifier threads) under path="offload", repeats of a
#     right password answered by the credential cache under path="cache";
#     buckets from 1 µs;
#   - other paths get 404, other methods 405; the daemon keeps serving.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null && command -v promtool >/dev/null || { echo "SKIP: no prometheus"; exit 77; }
lfe_init metrics 96
lfe_make_store
conf=$(lfe_conf 1)
printf '[admin]\nmetrics_listen = 127.0.0.1:9389\n' >> "$conf"
lfe_start "$conf" 0
H=ldap://$LFE_SADDR
srv() { ip netns exec "$LFE_SRV" "$@"; }
M=http://127.0.0.1:9389/metrics
grep -q "ldapfe: metrics on http://127.0.0.1:9389/metrics" "$LFE_LOG" || lfe_fail "no metrics line in the log"

page=$(srv curl -sf --max-time 5 "$M") || lfe_fail "GET /metrics failed"
srv promtool check metrics <<<"$page" > "$LFE_WORK/promtool.out" 2>&1 || \
	lfe_fail "promtool check metrics: $(cat "$LFE_WORK/promtool.out")"
lfe_log "ok: promtool check metrics"
grep -q '^ldapfe_binds_total{core="0",result="ok"} 0$' <<<"$page" || lfe_fail "no ldapfe_binds_total: $(head -30 <<<"$page")"
grep -q '^ldapfe_port_link_up{port="0"} 1$' <<<"$page" || lfe_fail "no port link gauge"
for m in rx_packets tx_packets rx_missed; do   # metrics.c's port_rows
	grep -q "^ldapfe_port_${m}_total{port=\"0\"} [0-9][0-9]*\$" <<<"$page" &&
		grep -q "^# TYPE ldapfe_port_${m}_total counter\$" <<<"$page" || lfe_fail "no ldapfe_port_${m}_total"
done
grep -q '^ldapfe_bind_duration_seconds_bucket{core="0",path="inline",le="1e-06"} 0$' <<<"$page" ||
	lfe_fail "no 1 µs inline bucket: $(grep bind_duration <<<"$page" | head -3)"
lfe_eq "404 elsewhere" "$(srv curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:9389/)" 404
lfe_eq "405 for POST" "$(srv curl -s -o /dev/null -w '%{http_code}' --max-time 5 -d x "$M")" 405

# A real Prometheus on a free port, scraping every second.
pport=$(srv "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$LFE_WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ldapfe
    static_configs:
      - targets: ['127.0.0.1:9389']
YML
srv promtool check config "$LFE_WORK/prometheus.yml" >/dev/null || lfe_fail "promtool check config"
srv prometheus --config.file="$LFE_WORK/prometheus.yml" --storage.tsdb.path="$LFE_WORK/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn > "$LFE_WORK/prometheus.log" 2>&1 &
prom_pid=$!
LFE_EXTRA_PIDS="$prom_pid"

ok=5 bad=2
for ((i = 0; i < ok; i++)); do
	lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn carol)" -w carol-pw >/dev/null
done
for ((i = 0; i < bad; i++)); do
	lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn carol)" -w nope >/dev/null 2>&1 || true
done
# dave's {CRYPT} binds go through the verifier threads: the latency histogram.
lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn dave)" -w dave-pw >/dev/null
lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn dave)" -w nope >/dev/null 2>&1 || true
ok=$((ok + 1)) bad=$((bad + 1))

# query EXPR: the value Prometheus's HTTP API returns now ("" when none).
query() {
	srv "$PY" - "http://127.0.0.1:$pport/api/v1/query" "$1" <<'PYEOF' 2>/dev/null || true
import json, sys, urllib.parse, urllib.request
u = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
r = json.load(urllib.request.urlopen(u, timeout=5))
res = r["data"]["result"]
print(res[0]["value"][1] if res else "")
PYEOF
}
got=
for ((i = 0; i < 60; i++)); do
	got=$(query 'sum(ldapfe_binds_total)')
	[[ $got == $((ok + bad)) ]] && break
	kill -0 "$prom_pid" 2>/dev/null || lfe_fail "prometheus exited: $(tail -5 "$LFE_WORK/prometheus.log")"
	sleep 0.5
done
lfe_eq "Prometheus API: sum(ldapfe_binds_total)" "$got" $((ok + bad))
lfe_eq "Prometheus API: ldapfe_binds_ok_total" "$(query 'sum(ldapfe_binds_ok_total)')" $ok
lfe_eq "Prometheus API: failed binds" "$(query 'sum(ldapfe_binds_total{result="failed"})')" $bad
lfe_eq "Prometheus API: offloaded binds in the latency histogram" \
	"$(query 'sum(ldapfe_bind_duration_seconds_count{path="offload"})')" 2
cached=$(query 'sum(ldapfe_bind_cache_hits_total)')
[ "$cached" -gt 0 ] || lfe_fail "no credential cache hit among $ok right binds"
lfe_eq "Prometheus API: cache hits in the latency histogram" \
	"$(query 'sum(ldapfe_bind_duration_seconds_count{path="cache"})')" "$cached"
lfe_eq "Prometheus API: inline binds in the latency histogram" \
	"$(query 'sum(ldapfe_bind_duration_seconds_count{path="inline"})')" $((ok + bad - 2 - cached))
lfe_eq "Prometheus API: histogram +Inf bucket = count" \
	"$(query 'sum(ldapfe_bind_duration_seconds_bucket{le="+Inf"})')" $((ok + bad))
# Buckets are cumulative: the 1 s bucket holds every inline bind (one
# preempted for a whole second would be the only way out).
lfe_eq "Prometheus API: inline binds within 1 s" \
	"$(query 'sum(ldapfe_bind_duration_seconds_bucket{path="inline",le="1"})')" $((ok + bad - 2 - cached))
lfe_eq "Prometheus API: offloaded counter agrees" "$(query 'sum(ldapfe_binds_offloaded_total)')" 2
lfe_eq "Prometheus API: target up" "$(query 'up{job="ldapfe"}')" 1
kill -TERM "$prom_pid"; wait "$prom_pid" 2>/dev/null || true
LFE_EXTRA_PIDS=

lfe_eq "bind still served" "$(lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn bob)" -w bob-pw)" "dn:$(lfe_dn bob)"
lfe_stop
lfe_eq "exit status" "$LFE_STOP_RC" 0
lfe_log "ok: all"
