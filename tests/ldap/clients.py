#!/usr/bin/python3
"""python3-ldap3 against the loopback sockserver: binds, WhoAmI, root DSE,
search, refused writes, many binds on one connection.
usage: clients.py PORT"""
import sys

from ldap3 import ALL, BASE, NONE, SIMPLE, SUBTREE, Connection, Server

SUFFIX = "dc=example,dc=com"
ALICE = "uid=alice,ou=people," + SUFFIX
BOB = "uid=bob,ou=people," + SUFFIX

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def main():
    port = int(sys.argv[1])
    srv = Server("127.0.0.1", port=port, get_info=NONE, connect_timeout=5)

    c = Connection(srv, user=ALICE, password="secret", receive_timeout=10)
    check(c.bind(), "alice bind: %s" % c.result)
    check(c.extend.standard.who_am_i() == "dn:" + ALICE, "whoami %r" % c.extend.standard.who_am_i())
    c.unbind()

    c = Connection(srv, user=ALICE, password="wrong", receive_timeout=10)
    check(not c.bind() and c.result["result"] == 49, "wrong password: %s" % c.result)
    c.unbind()

    # Many binds on one connection, alternating outcomes; identity follows.
    c = Connection(srv, receive_timeout=10)
    c.open()
    for i in range(50):
        user, pw, ok = [(ALICE, "secret", True), (BOB, "b0b", True), (BOB, "x", False)][i % 3]
        got = c.rebind(user=user, password=pw, authentication=SIMPLE)
        check(bool(got) == ok, "bind %d (%s): %s" % (i, user, c.result))
        check(c.result["result"] == (0 if ok else 49), "bind %d result %s" % (i, c.result))
        who = c.extend.standard.who_am_i()
        want = ("dn:" + user) if ok else None
        check((who or None) == want, "whoami %d: %r want %r" % (i, who, want))
    c.unbind()

    # Root DSE through ldap3's own discovery.
    s2 = Server("127.0.0.1", port=port, get_info=ALL, connect_timeout=5)
    c = Connection(s2, auto_bind=True, receive_timeout=10)
    info = s2.info
    check(info is not None and SUFFIX in (info.naming_contexts or []), "naming contexts %r" % (info and info.naming_contexts))
    check(info is not None and "3" in [str(v) for v in (info.supported_ldap_versions or [])], "ldap versions")
    check(c.search("", "(objectClass=*)", search_scope=BASE, attributes=["vendorName"]) and
          c.entries and str(c.entries[0].vendorName) == "ldapfe", "vendorName %r" % c.entries)

    # Search: attributes chosen, password never returned, size limit.
    check(c.search(SUFFIX, "(uid=alice)", SUBTREE, attributes=["cn", "userPassword"]), "search %s" % c.result)
    check(len(c.entries) == 1 and c.entries[0].entry_dn == ALICE, "entries %r" % c.entries)
    raw = c.response[0]["raw_attributes"] if c.response else {}
    check(raw.get("cn") == [b"alice"] and not any(v for k, v in raw.items() if k.lower() == "userpassword"), "attributes %r" % raw)
    c.search(SUFFIX, "(objectClass=person)", SUBTREE, attributes=["1.1"], size_limit=1)
    check(c.result["result"] == 4 and len(c.entries) == 1, "size limit: %s %d" % (c.result, len(c.entries)))

    # Writes are refused.
    check(not c.add("uid=carol,ou=people," + SUFFIX, ["inetOrgPerson"], {"sn": "c", "cn": "c"}) and
          c.result["result"] == 53, "add: %s" % c.result)
    check(not c.delete(BOB) and c.result["result"] == 53, "delete: %s" % c.result)
    check(c.compare(BOB, "uid", "bob") is False and c.result["result"] == 53, "compare: %s" % c.result)
    c.unbind()

    print("clients.py: %s" % ("ok" if not failures else "%d failures" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
