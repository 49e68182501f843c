#!/usr/bin/env python3
"""The layers of ldapfe, as ARCHITECTURE.md draws them: each product folder
may include its own headers and those of the folders below it, never one
above or beside. The build runs this (meson.build: check_layers), so an
upward include fails the build, not a review.

Usage: check-layers.py ROOT STAMP   (exit 1 and one line per violation)"""
import os, re, sys

ALLOWED = {
    'common':    {'common'},
    'ldap':      {'ldap', 'common'},
    'backend':   {'backend', 'ldap', 'common'},
    'net':       {'net', 'common'},
    'tls':       {'tls', 'net', 'ldap', 'common'},
    'dpdk':      {'dpdk', 'net', 'common'},
    'dataplane': {'dataplane', 'dpdk', 'tls', 'net', 'backend', 'ldap', 'common'},
    'mgmt':      {'mgmt', 'backend', 'ldap', 'common'},
    'gen':       {'gen', 'dpdk', 'tls', 'net', 'ldap', 'common'},
}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

def main():
    root, stamp = sys.argv[1], sys.argv[2]
    bad = []
    for folder, allowed in sorted(ALLOWED.items()):
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)):
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(d, name)
            with open(path, encoding='utf-8') as f:
                text = f.read()
            for m in INC.finditer(text):
                inc = m.group(1)
                top = inc.split('/')[0] if '/' in inc else None
                line = text.count('\n', 0, m.start()) + 1
                if top is None:
                    bad.append('%s/%s:%d: "%s": include as "folder/file.h"' % (folder, name, line, inc))
                elif top not in allowed:
                    bad.append('%s/%s:%d: "%s": %s/ may not include %s/ (allowed: %s)'
                               % (folder, name, line, inc, folder, top, ' '.join(sorted(allowed))))
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    with open(stamp, 'w') as f:
        f.write('ok\n')
    return 0

if __name__ == '__main__':
    sys.exit(main())
