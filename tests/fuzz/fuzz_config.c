// SPDX-License-Identifier: BSD-2-Clause
/* --config FILE: any bytes are refused with a message or applied, never a
 * crash; a file that applies also passes the options' final checks or is
 * refused by them. */
#include "config_file.h"
#include "options.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_opts o;
	const char *path = fuzz_file(data, size, ".json");

	record_opts__defaults(&o);
	if (!config_file__apply(&o, path, false))
		record_opts__finish(&o);
	record_opts__free(&o);
	return 0;
}
