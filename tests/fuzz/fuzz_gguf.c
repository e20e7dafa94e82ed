// SPDX-License-Identifier: BSD-2-Clause
/* A model file as the traced process opened it: any bytes (truncated
 * metadata, lengths and counts past the end, unknown value types, nested
 * arrays) give facts or an error, never a crash, a hang or a huge allocation. */
#include "gguf.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, ".gguf");
	struct gguf_facts f;
	char err[256];

	if (gguf__read(path, &f, err, sizeof(err)) == 0) {
		gguf__file_type_name(f.file_type);
		gguf__file_type_bits(f.file_type);
	}
	return 0;
}
