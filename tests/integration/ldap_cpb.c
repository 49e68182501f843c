/* tests/integration/ldap_cpb.c — a connection-per-bind load client on
 * OpenLDAP's libldap, the library behind ldapwhoami, nslcd, SSSD, PAM and
 * PHP/Python-ldap: each authentication is connect + simple bind + unbind
 * on a fresh TCP connection, the way many login services do it.
 *
 *   ldap_cpb URI DN PASSWORD THREADS SECONDS [persistent]
 *
 * With "persistent" each thread keeps one connection and binds on it again
 * and again (reconnecting only after an error): the rate of a client that
 * pools its connections, such as nslcd or SSSD.
 *
 * Prints one line per second, "sec N binds B errors E", then a summary:
 * "total B errors E cpu_user_s U cpu_sys_s S". Exit 0 when it ran (the
 * caller judges the figures), 2 on bad arguments. Every bind must succeed
 * (a failed one counts as an error, never retried).
 */

#include <ldap.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *uri, *dn, *pw;
static atomic_ulong n_ok, n_err;
static atomic_bool stop;
static bool persistent;

static void *worker(void *arg)
{
	(void)arg;
	struct berval cred = { .bv_val = (char *)pw, .bv_len = strlen(pw) };
	int v3 = LDAP_VERSION3;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		LDAP *ld = NULL;
		if (ldap_initialize(&ld, uri) != LDAP_SUCCESS) {
			atomic_fetch_add(&n_err, 1);
			continue;
		}
		ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
		struct timeval tmo = { .tv_sec = 5 };
		ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tmo);
		ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tmo);
		int rc;
		do {
			rc = ldap_sasl_bind_s(ld, dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
			atomic_fetch_add(rc == LDAP_SUCCESS ? &n_ok : &n_err, 1);
		} while (persistent && rc == LDAP_SUCCESS &&
			 !atomic_load_explicit(&stop, memory_order_relaxed));
		ldap_unbind_ext_s(ld, NULL, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[6], "persistent") == 0) {
		persistent = true;
	} else if (argc != 6) {
		fprintf(stderr, "usage: %s URI DN PASSWORD THREADS SECONDS [persistent]\n", argv[0]);
		return 2;
	}
	uri = argv[1];
	dn = argv[2];
	pw = argv[3];
	int nth = atoi(argv[4]), secs = atoi(argv[5]);
	if (nth < 1 || nth > 256 || secs < 1 || secs > 3600) {
		fprintf(stderr, "threads 1..256, seconds 1..3600\n");
		return 2;
	}
	pthread_t *th = calloc((size_t)nth, sizeof(*th));
	if (!th)
		return 1;
	for (int i = 0; i < nth; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long prev_ok = 0, prev_err = 0;
	for (int s = 1; s <= secs; s++) {
		struct timespec at = { .tv_sec = t0.tv_sec + s, .tv_nsec = t0.tv_nsec };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0)
			;
		unsigned long ok = atomic_load(&n_ok), err = atomic_load(&n_err);
		printf("sec %d binds %lu errors %lu\n", s, ok - prev_ok, err - prev_err);
		fflush(stdout);
		prev_ok = ok;
		prev_err = err;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("total %lu errors %lu cpu_user_s %.2f cpu_sys_s %.2f\n", atomic_load(&n_ok),
	       atomic_load(&n_err), ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	free(th);
	return 0;
}
