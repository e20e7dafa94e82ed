// SPDX-License-Identifier: BSD-2-Clause
/* A probe object or mapped file as the target names it: any bytes (truncated,
 * corrupted or not ELF at all) give an answer or an error, never a crash or a
 * read past the file. Covers the symbol table and the USDT notes
 * (.note.stapsdt) and the DT_NEEDED closure. */
#include "probe_spec.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, "");
	char *paths[8];
	uint64_t off;
	int n;

	elf_symbol_offset(path, "run_cycle", &off);
	elf_has_usdt(path, "infertrace", "cycle_begin");
	n = elf_needed_closure(path, paths, 8);
	for (int i = 0; i < n; i++)
		free(paths[i]);
	return 0;
}
