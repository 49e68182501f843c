/* dataplane/control_reload.c — reload (`ldapfectl reload`, SIGHUP): read
 * the file, check that only live keys changed, apply them while every
 * worker is parked at its safe point; see control.h, control_int.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "dataplane/control_int.h"
#include "ldap/dn.h"
#include "tls/tls.h"

/* ------------------------------------------------------------ config file */

int lfe_config_load(const char *path, struct lfe_config *c, char *err, size_t errlen)
{
	struct rte_cfgfile_parameters params = { .comment_character = '#' };
	char e[LFE_CFG_ERR_LEN];
	int rc = 0;

	lfe_config_defaults(c);
	/* Empty values reach the key's parser ("metrics_listen =" is off;
	 * a key that needs a value says so, naming it). */
	struct rte_cfgfile *cf = rte_cfgfile_load_with_params(path, CFG_FLAG_EMPTY_VALUES, &params);
	if (cf == NULL) {
		snprintf(err, errlen, "%s: cannot read or parse the file", path);
		return -EINVAL;
	}
	int ns = rte_cfgfile_num_sections(cf, NULL, 0);
	for (int i = 0; i < ns && rc == 0; i++) {
		char sec[CFG_NAME_LEN];
		struct rte_cfgfile_entry ents[64];
		int ne = rte_cfgfile_section_entries_by_index(cf, i, sec, ents, 64);
		if (ne < 0) {
			snprintf(err, errlen, "%s: section %d unreadable", path, i);
			rc = -EINVAL;
			break;
		}
		if (ne == 64 && rte_cfgfile_section_num_entries_by_index(cf, sec, (uint32_t)i) > 64) {
			snprintf(err, errlen, "%s: [%s]: more than 64 keys", path, sec);
			rc = -EINVAL;
			break;
		}
		for (int j = 0; j < ne; j++) {
			rc = lfe_config_set(c, sec, ents[j].name, ents[j].value, e, sizeof(e));
			if (rc < 0) {
				snprintf(err, errlen, "%s: %s", path, e);
				break;
			}
		}
	}
	rte_cfgfile_close(cf);
	if (rc == 0 && (rc = lfe_config_finish(c, e, sizeof(e))) < 0)
		snprintf(err, errlen, "%s: %s", path, e);
	return rc < 0 ? -EINVAL : 0;
}

/* The keys a reload applies while running (into c, from n): the table's
 * LIVE rows (config.c). The workers read them at their next safe point
 * (worker_ctl.c) or per use; TLS: new connections get the new context, those
 * in progress keep theirs (SSL_new took a reference to it). */
static void cfg_live(struct lfe_config *c, const struct lfe_config *n)
{
	lfe_config_copy_live(c, n);
}

/* Live keys are copied from n into c; a difference in a RESTART key
 * refuses the reload, naming every such key. */
static int reload_check(const struct lfe_daemon *d, const struct lfe_config *c, const struct lfe_config *n,
			char *err, size_t errlen)
{
	char keys[200];

	if (lfe_config_restart_differs(c, n, keys, sizeof keys)) {
		snprintf(err, errlen, "%s: cannot change while running (restart ldapfe)", keys);
		return -EINVAL;
	}
	/* No row of its own: whether there is a TLS context at all. */
	if ((d->tls != NULL) != (n->n_ldaps_ports || n->tls_certificate[0])) {
		snprintf(err, errlen, "[tls]: cannot be added or removed while running (restart ldapfe)");
		return -EINVAL;
	}
	/* Whatever the list above misses: a copy of the running configuration
	 * with the live keys applied must equal the new one. */
	static struct lfe_config tmp;   /* the control thread's; large */
	char key[80];
	tmp = *c;
	cfg_live(&tmp, n);
	if (lfe_config_differs(&tmp, n, key, sizeof key)) {
		snprintf(err, errlen, "%s: cannot change while running (restart ldapfe)", key);
		return -EINVAL;
	}
	/* Live keys that need more than config.c's checks. */
	size_t sl;
	const char *sfx = lfe_store_suffix(d->store, &sl);
	if (n->search_base[0] && !lfe_dn_is_under(n->search_base, strlen(n->search_base), sfx, sl)) {
		snprintf(err, errlen, "[ldap] search_base: not at or under the store's suffix %s", sfx);
		return -EINVAL;
	}
	struct lfe_search_policy p;
	const char *why = NULL;
	memset(&p, 0, sizeof(p));
	if (lfe_search_attrs_parse(&p, n->search_attrs, &why) < 0) {
		snprintf(err, errlen, "[ldap] search_attrs: %s", why);
		return -EINVAL;
	}
	if (n->throttle.enabled) {
		struct lfe_throttle_params a = { .failures = { 1, 1, 1 }, .window_ms = c->throttle.window_ms,
						 .penalty_ms = c->throttle.penalty_ms };
		struct lfe_throttle_params b = { .failures = { 1, 1, 1 }, .window_ms = n->throttle.window_ms,
						 .penalty_ms = n->throttle.penalty_ms };
		if (lfe_throttle_mem_size(&a) != lfe_throttle_mem_size(&b)) {
			snprintf(err, errlen, "[throttle]: this change needs a restart");
			return -EINVAL;
		}
	}
	return 0;
}

/* Park every worker at its safe point, run fn, release them. */
static int barrier(struct lfe_control *ctl, bool apply, char *err, size_t errlen)
{
	struct lfe_daemon *d = ctl->d;
	unsigned gen = atomic_load(&ctl->wc.cfg_gen) + 1;

	atomic_store(&ctl->wc.applied, false);
	atomic_store_explicit(&ctl->wc.cfg_gen, gen, memory_order_release);
	uint64_t t0 = lfe_ctl_mono_ns();
	int rc = 0;
	for (uint32_t k = 0; k < d->n_workers && rc == 0; k++) {
		while (atomic_load_explicit(&ctl->wc.parked[k], memory_order_acquire) != gen) {
			if (lfe_ctl_mono_ns() - t0 > 2000000000u || atomic_load(&d->stop)) {
				snprintf(err, errlen, "worker on lcore %u did not reach a safe point within 2 s; "
					 "nothing changed", d->lcore_ids[k]);
				rc = -ETIMEDOUT;
				break;
			}
			lfe_ctl_sleep_ms(1);
		}
	}
	if (rc == 0 && apply) {
		cfg_live(&d->cfg, &ctl->next);
		if (ctl->next_tls) {
			ctl->old_tls = d->tls;
			d->tls = ctl->next_tls;
			ctl->next_tls = NULL;
		}
		atomic_store_explicit(&ctl->wc.applied, true, memory_order_release);
	}
	atomic_store_explicit(&ctl->wc.cfg_release, gen, memory_order_release);
	return rc;
}

int lfe_ctl_req_reload(struct lfe_control *ctl, struct out *o, bool json, char *err, size_t errlen)
{
	int rc = lfe_config_load(ctl->config_path, &ctl->next, err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = reload_check(ctl->d, &ctl->d->cfg, &ctl->next, err, errlen)) < 0)
		return rc;
	/* The new files are read and checked before anything changes: a bad
	 * certificate or key refuses the whole reload. */
	if (ctl->d->tls && (ctl->next_tls = lfe_tls_from_config(&ctl->next, ctl->d->tls, err,
								 errlen)) == NULL)
		return -EINVAL;
	rc = barrier(ctl, true, err, errlen);
	lfe_tls_free(ctl->next_tls);   /* not swapped in: the barrier failed */
	ctl->next_tls = NULL;
	lfe_tls_free(ctl->old_tls);    /* its SSL_CTX lives on in open connections */
	ctl->old_tls = NULL;
	if (rc < 0)
		return rc;
	if (ctl->d->tls) {
		char desc[512];
		lfe_tls_describe(ctl->d->tls, desc, sizeof(desc));
		printf("ldapfe: tls: %s\n", desc);
	}
	ctl->reloads++;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "reload", lfe_log_now_us())) {
		lfe_log_kv(&l, "config", "%s", ctl->config_path);
		lfe_log_kv(&l, "reloads", "%u", ctl->reloads);
		lfe_log_end(&l);
	}
	if (json) {
		lfe_ctl_outf(o, "{\"reloaded\":true,\"config\":");
		lfe_ctl_out_jstr(o, ctl->config_path, strlen(ctl->config_path));
		lfe_ctl_outf(o, ",\"reloads\":%u}\n", ctl->reloads);
	} else
		lfe_ctl_outf(o, "reloaded %s\n", ctl->config_path);
	return 0;
}
