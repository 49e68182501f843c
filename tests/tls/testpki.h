/* tests/dataplane/testpki.h — certificates made in-process for TLS tests
 * (no committed key): EC P-256 keys, a CA, certificates it signs, written
 * as PEM files into a temporary directory. Header-only (static), for the
 * TLS unit test and the TLS fuzz target.
 */
#ifndef LFE_TESTS_TESTPKI_H
#define LFE_TESTS_TESTPKI_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static EVP_PKEY *tp_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A certificate for key with subject CN=cn, signed by ikey (issuer: NULL
 * for self-signed), valid from now+from_s to now+to_s. */
static X509 *tp_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey, long serial,
		     long from_s, long to_s, bool ca)
{
	X509 *x = X509_new();
	if (x == NULL)
		return NULL;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_gmtime_adj(X509_getm_notBefore(x), from_s);
	X509_gmtime_adj(X509_getm_notAfter(x), to_s);
	X509_set_pubkey(x, key);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
						ca ? "critical,CA:TRUE" : "CA:FALSE");
	if (e) {
		X509_add_ext(x, e, -1);
		X509_EXTENSION_free(e);
	}
	if (X509_sign(x, ikey ? ikey : key, EVP_sha256()) <= 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Write x (and k, when not NULL) as PEM to dir/name; 0 or -1. */
static int tp_write(const char *dir, const char *name, X509 *x, EVP_PKEY *k)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f == NULL)
		return -1;
	int ok = x ? PEM_write_X509(f, x) : PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	return fclose(f) == 0 && ok == 1 ? 0 : -1;
}

#endif
