/* mgmt/daemonctl.h — ldapfectl's commands for the running daemon (status,
 * stats, conns, reload, drain, top) over its control socket
 * (dataplane/control.h describes the protocol).
 *
 * The socket is --daemon PATH (the socket, or the directory holding
 * ldapfe.ctl), else the EAL runtime directory of --prefix NAME
 * ($LDAPFE_PREFIX, else "rte", DPDK's default file prefix):
 * /var/run/dpdk/NAME/ldapfe.ctl for root.
 *
 * Exit codes as the store commands: 0 success, 1 failure (no daemon
 * answers, the daemon refused), 2 usage.
 */
#ifndef LFE_MGMT_DAEMONCTL_H
#define LFE_MGMT_DAEMONCTL_H

struct lfe_dctl_cmd {
	const char *name, *usage, *help;
};

/* Run daemon command cmd with its argv (argv[0] = the command name; getopt
 * restarted by the caller). daemon/prefix: the global options (NULL: none). */
int lfe_dctl_run(const struct lfe_dctl_cmd *cmd, const char *daemon, const char *prefix, int argc,
		 char **argv);

#endif
