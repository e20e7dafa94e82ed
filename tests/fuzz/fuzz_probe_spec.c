// SPDX-License-Identifier: BSD-2-Clause
/* Probe SPECs (--cycle, --phase, --probe): parsed or refused with a message
 * that fits its buffer. */
#include "probe_spec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), err[256];
	struct probe_spec s;

	if (!text)
		return 0;
	memset(&s, 0, sizeof(s));
	err[0] = 0;
	if (!probe_spec__parse(text, &s, err, sizeof(err))) {
		probe_spec__object_is_path(&s);
		probe_spec__free(&s);
	} else if (!memchr(err, 0, sizeof(err))) {
		abort();
	}
	free(text);
	return 0;
}
