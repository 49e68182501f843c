#!/usr/bin/env bash
# ldapfe demo on one machine (Debian 12, as root):
#   scripts/demo.sh        install deps, build, create namespaces lfe-demo-srv
#                          and lfe-demo-cli joined by a veth pair, make a demo
#                          store, start ldapfe in the server namespace, show
#                          binds succeeding and failing, print the counters.
#   scripts/demo.sh stop   stop the daemon (by PID) and delete the namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=/tmp/ldapfe-demo
SRV=lfe-demo-srv CLI=lfe-demo-cli
SADDR=10.99.0.1 CADDR=10.99.0.2
PREFIX=lfe-demo
SUFFIX="dc=example,dc=com"

stop() {
	if [[ -f $WORK/ldapfe.pid ]]; then
		local pid i
		pid=$(cat "$WORK/ldapfe.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid"
			for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
			kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
		fi
		rm -f "$WORK/ldapfe.pid"
		echo "ldapfe stopped; its last lines:"
		tail -n 4 "$WORK/ldapfe.log" || true
	fi
	ip netns del "$SRV" 2>/dev/null || true
	ip netns del "$CLI" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$PREFIX"   # the daemon's EAL runtime files
	echo "namespaces $SRV and $CLI removed"
}

if [[ ${1:-} == stop ]]; then
	stop
	exit 0
fi
[[ $EUID -eq 0 ]] || { echo "run as root (namespaces, DPDK)" >&2; exit 1; }
if [[ -f $WORK/ldapfe.pid ]] && kill -0 "$(cat "$WORK/ldapfe.pid")" 2>/dev/null; then
	echo "the demo is already running; scripts/demo.sh stop first" >&2
	exit 1
fi

echo "== dependencies"
bash scripts/deps.sh
# LFE_DEMO_BUILD=DIR uses another build dir and builds only the daemon and
# ldapfectl there.
B=${LFE_DEMO_BUILD:-build}
echo "== build ($B)"
if [[ -f $B/build.ninja ]]; then meson setup --reconfigure "$B" >/dev/null; else meson setup "$B" >/dev/null; fi
if [[ -n ${LFE_DEMO_BUILD:-} ]]; then
	meson compile -C "$B" dataplane/ldapfe mgmt/ldapfectl >/dev/null
else
	meson compile -C "$B" >/dev/null
fi
LDAPFE=$ROOT/$B/dataplane/ldapfe CTL=$ROOT/$B/mgmt/ldapfectl

echo "== namespaces $SRV ($SADDR, owned by ldapfe) and $CLI ($CADDR)"
ip netns del "$SRV" 2>/dev/null || true
ip netns del "$CLI" 2>/dev/null || true
ip netns add "$SRV"
ip netns add "$CLI"
ip link add lfedemo0 type veth peer name lfedemo1
ip link set lfedemo0 netns "$SRV" name veth0
ip link set lfedemo1 netns "$CLI" name veth0
for ns in "$SRV" "$CLI"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.veth0.disable_ipv6=1
	ip netns exec "$ns" ethtool -K veth0 tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip link set veth0 up
done
# The server end has no kernel address: the kernel must neither answer ARP
# nor reset TCP there; ldapfe owns the port through af_packet.
ip netns exec "$CLI" ip addr add "$CADDR/24" dev veth0

echo "== demo store"
rm -rf "$WORK"
mkdir -p "$WORK/store"
"$CTL" --store "$WORK/store" init --suffix "$SUFFIX" >/dev/null
"$CTL" --store "$WORK/store" user add "ou=people,$SUFFIX" --attr objectClass=organizationalUnit >/dev/null
declare -A PW=([alice]=wonderland [bob]=builder [carol]=singer)
for u in alice bob carol; do
	echo "${PW[$u]}" | "$CTL" --store "$WORK/store" user add "uid=$u,ou=people,$SUFFIX" \
		--attr "mail=$u@example.com" --password-stdin >/dev/null
	echo "   uid=$u,ou=people,$SUFFIX  password: ${PW[$u]}"
done

cat > "$WORK/ldapfe.conf" <<CONF
[store]
path = $WORK/store
[ldap]
port = 389
max_conns_per_core = 1024
[port0]
dev = net_af_packet0,iface=veth0,qpairs=1
address = $SADDR/24
[workers]
idle_sleep_us = 50
CONF

echo "== starting ldapfe (log $WORK/ldapfe.log)"
ip netns exec "$SRV" "$LDAPFE" -l 0 --no-pci --no-huge -m 512 --file-prefix "$PREFIX" \
	--log-level=lib.eal:error -- --config "$WORK/ldapfe.conf" > "$WORK/ldapfe.log" 2>&1 &
echo $! > "$WORK/ldapfe.pid"
for ((i = 0; i < 100; i++)); do
	grep -q "ldapfe: ready" "$WORK/ldapfe.log" && break
	kill -0 "$(cat "$WORK/ldapfe.pid")" 2>/dev/null || { cat "$WORK/ldapfe.log"; stop; exit 1; }
	sleep 0.1
done
grep -q "ldapfe: ready" "$WORK/ldapfe.log" || { cat "$WORK/ldapfe.log"; stop; exit 1; }
ip netns exec "$CLI" ping -c 1 -W 2 "$SADDR" >/dev/null

echo "== ldapwhoami as alice (right password)"
ip netns exec "$CLI" ldapwhoami -x -H "ldap://$SADDR" -D "uid=alice,ou=people,$SUFFIX" -w wonderland
echo "== ldapwhoami as alice (wrong password)"
ip netns exec "$CLI" ldapwhoami -x -H "ldap://$SADDR" -D "uid=alice,ou=people,$SUFFIX" -w wrong || \
	echo "   (exit status $? as expected: invalidCredentials)"

echo "== counters (ldapfectl stats)"
sleep 0.1   # counters are published every millisecond
"$CTL" --prefix "$PREFIX" stats | grep -E "^(counter|rx_pkts|tx_pkts|conns_opened|binds_ok|binds_failed|arp_replies|icmp_replies) "

cat <<EOT

ldapfe is running (pid $(cat "$WORK/ldapfe.pid")) in namespace $SRV on $SADDR:389.
Bind from the client namespace:
  ip netns exec $CLI ldapwhoami -x -H ldap://$SADDR -D "uid=bob,ou=people,$SUFFIX" -w builder
  ip netns exec $CLI ldapsearch -x -H ldap://$SADDR -b "$SUFFIX" "(uid=carol)"
Watch and steer the running daemon:
  $CTL --prefix $PREFIX status          # ports, workers, store, settings
  $CTL --prefix $PREFIX top             # live rates per core (q quits)
  $CTL --prefix $PREFIX conns           # open connections
  curl -s http://127.0.0.1:9389/metrics  (in namespace $SRV: Prometheus)
Change a password while it runs:
  echo newpass | $CTL --store $WORK/store passwd "uid=bob,ou=people,$SUFFIX"
Stop it and remove the namespaces:
  scripts/demo.sh stop
EOT
