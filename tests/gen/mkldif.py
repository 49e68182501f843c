#!/usr/bin/python3
"""Write an LDIF of numbered users with {SSHA} passwords, the population
ldapfe-gen binds as: uid=user%07u,ou=people,SUFFIX with password pw%07u.

Usage: mkldif.py N [SUFFIX] > users.ldif
The suffix entry and ou=people come first, so slapadd and ldapfectl import
both take the file as it is. Salts are random (8 bytes, as slappasswd)."""
import base64
import hashlib
import os
import sys


def main():
    n = int(sys.argv[1])
    suffix = sys.argv[2] if len(sys.argv) > 2 else "dc=example,dc=com"
    dc = suffix.split(",")[0].split("=", 1)[1]
    out = sys.stdout
    out.write(f"dn: {suffix}\nobjectClass: dcObject\nobjectClass: organization\n"
              f"dc: {dc}\no: {dc}\n\n")
    out.write(f"dn: ou=people,{suffix}\nobjectClass: organizationalUnit\nou: people\n\n")
    salts = os.urandom(8 * n)
    chunk = []
    for i in range(n):
        salt = salts[8 * i:8 * i + 8]
        pw = b"pw%07d" % i
        h = base64.b64encode(hashlib.sha1(pw + salt).digest() + salt).decode()
        chunk.append(f"dn: uid=user{i:07d},ou=people,{suffix}\nobjectClass: inetOrgPerson\n"
                     f"uid: user{i:07d}\ncn: user {i}\nsn: user{i}\nuserPassword: {{SSHA}}{h}\n\n")
        if len(chunk) == 10000:
            out.write("".join(chunk))
            chunk = []
    out.write("".join(chunk))


if __name__ == "__main__":
    main()
