/* dataplane/priv.c — see priv.h. */
#include "dataplane/priv.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int lfe_priv_resolve(const char *user, const char *group, uid_t *uid, gid_t *gid,
		     char *err, size_t errlen)
{
	struct passwd pw, *pr = NULL;
	struct group gr, *gres = NULL;
	char buf[4096];

	int rc = getpwnam_r(user, &pw, buf, sizeof(buf), &pr);
	if (rc != 0 || pr == NULL) {
		snprintf(err, errlen, "[daemon] user: \"%.64s\": %s", user,
			 rc ? strerror(rc) : "no such user");
		return rc ? -EINVAL : -ENOENT;
	}
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	if (group && group[0]) {
		rc = getgrnam_r(group, &gr, buf, sizeof(buf), &gres);
		if (rc != 0 || gres == NULL) {
			snprintf(err, errlen, "[daemon] group: \"%.64s\": %s", group,
				 rc ? strerror(rc) : "no such group");
			return rc ? -EINVAL : -ENOENT;
		}
		*gid = gr.gr_gid;
	}
	if (*uid == 0) {
		snprintf(err, errlen, "[daemon] user: \"%.64s\": has uid 0, dropping to it keeps root",
			 user);
		return -EINVAL;
	}
	if (*gid == 0) {
		snprintf(err, errlen, "[daemon] %s: \"%.64s\": gid 0, dropping to it keeps root's group "
			 "(files of group root, /dev nodes)", group && group[0] ? "group" : "user",
			 group && group[0] ? group : user);
		return -EINVAL;
	}
	return 0;
}

int lfe_priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
		int e = errno;
		snprintf(err, errlen, "[daemon] user: cannot drop to uid %u gid %u: %s",
			 (unsigned)uid, (unsigned)gid, strerror(e));
		return -e;
	}
	/* Plain capget: no libcap needed to check what is left. */
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 || d[0].effective || d[1].effective || d[0].permitted ||
	    d[1].permitted) {
		snprintf(err, errlen, "[daemon] user: capabilities remain after the drop");
		return -EPERM;
	}
	if (setuid(0) == 0) {
		snprintf(err, errlen, "[daemon] user: uid 0 could be regained");
		return -EPERM;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "[daemon] user: no_new_privs is not set");
		return -EPERM;
	}
	return 0;
}

int lfe_priv_no_new_privs(char *err, size_t errlen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		int e = errno ? errno : EPERM;
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(e));
		return -e;
	}
	return 0;
}
