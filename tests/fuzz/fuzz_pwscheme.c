/* tests/fuzz/fuzz_pwscheme.c — arbitrary stored userPassword values against a
 * fixed password. pwscheme.c refuses costs beyond its documented limits, so a
 * fuzzer-chosen iteration count or memory size cannot stall a run (each input
 * costs at most about a second). */
#include "backend/pwscheme.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t pw[] = "secret";
	/* An exact-size copy so ASan sees any read past the stored length. */
	char *v = malloc(size ? size : 1);
	if (v == NULL)
		return 0;
	memcpy(v, data, size);

	enum lfe_pw_class cls = lfe_pw_class_of(v, size);
	if (cls != LFE_PW_FAST && cls != LFE_PW_SLOW)
		abort();
	int rc = lfe_pw_verify(v, size, pw, sizeof(pw) - 1, 0);
	if (rc != 0 && rc != -EACCES && rc != -EINVAL && rc != -ENOTSUP && rc != -ENOMEM)
		abort();
	/* Slow values are verified once: their cost is what limits the run. */
	if (cls == LFE_PW_FAST) {
		int rc2 = lfe_pw_verify(v, size, pw, sizeof(pw) - 1, LFE_PW_ALLOW_CLEARTEXT);
		/* The flag only changes the outcome for cleartext values. */
		if (rc != -ENOTSUP && rc2 != rc)
			abort();
		if (lfe_pw_verify(v, size, NULL, 0, LFE_PW_ALLOW_CLEARTEXT) == 0)
			abort(); /* an empty password never verifies */
	}
	char name[40];
	ssize_t n = lfe_pw_scheme_name(v, size, name, sizeof(name));
	if (n < 0 || (size_t)n != strlen(name) || name[0] != '{' || name[n - 1] != '}')
		abort();

	/* Scheme names (short inputs) also drive the dummy verification. */
	if (size <= 40) {
		char s[41];
		memcpy(s, data, size);
		s[size] = '\0';
		if (lfe_pw_dummy_verify(s, pw, sizeof(pw) - 1) != -EACCES)
			abort();
	}
	free(v);
	return 0;
}
