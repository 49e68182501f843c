/* dataplane/priv.h — dropping root after start ([daemon] user/group).
 *
 * The daemon needs root (or CAP_NET_RAW, CAP_NET_ADMIN, CAP_IPC_LOCK, …)
 * only to set up: EAL memory, opening the af_packet socket, the tap
 * device or the memif socket, and the telemetry socket. After that every
 * port type runs on file descriptors it already holds (af_packet sends and
 * receives on its open socket; tap reads/writes its open fd; a memif
 * server's socket is listening already), so nothing is kept: no
 * capability survives the drop.
 *
 * Pure libc, no DPDK. lfe_priv_resolve() runs before the ports are set up
 * (an unknown user stops the daemon at start); lfe_priv_drop() once
 * everything is open. glibc applies setgroups/setresgid/setresuid to every
 * thread of the process (EAL lcores, verifier, telemetry), and the kernel
 * clears the permitted and effective capability sets of each when its uids
 * leave 0.
 */
#ifndef LFE_DATAPLANE_PRIV_H
#define LFE_DATAPLANE_PRIV_H

#include <stddef.h>
#include <sys/types.h>

#include "dataplane/config.h"

/* Look up user (and group; NULL or "" = the user's primary group).
 * 0, or -ENOENT (no such user/group) / -EINVAL (uid or gid 0 requested
 * for a non-root name, or a lookup error) with a message naming the key. */
int lfe_priv_resolve(const char *user, const char *group, uid_t *uid, gid_t *gid,
		     char *err, size_t errlen);

/* setgroups({gid}), setresgid(gid), setresuid(uid), then check: no
 * capability left in the effective/permitted sets, uid 0 cannot be
 * regained, no_new_privs is set. 0 or a negative errno with a message. */
int lfe_priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen);

/* PR_SET_NO_NEW_PRIVS, what systemd's NoNewPrivileges= gives, also when
 * ldapfe is started another way: no execve (the daemon makes none, but a
 * bug could) gains privileges through a setuid binary or file
 * capabilities. Per thread and inherited: called first in main(), before
 * EAL starts a thread. Dropping root with setresuid still works under it.
 * 0 or a negative errno with a message. */
int lfe_priv_no_new_privs(char *err, size_t errlen);

#endif
