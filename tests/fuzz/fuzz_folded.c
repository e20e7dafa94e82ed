// SPDX-License-Identifier: BSD-2-Clause
/* stacks.folded as `report` reads it back: any line is taken or skipped. */
#include "folded.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, ".folded");
	struct folded f, leaves;

	if (!folded__read(path, &f)) {
		if (!folded__leaves(&f, &leaves))
			folded__free(&leaves);
		folded__free(&f);
	}
	return 0;
}
