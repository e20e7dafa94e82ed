// SPDX-License-Identifier: BSD-2-Clause
/* profile.json as `report` and `diff` load it: truncated, malformed or
 * other-version files are refused with a message, never a crash; a file that
 * loads is printed by report and diff and written back. */
#include <fcntl.h>
#include <jansson.h>

#include "model.h"
#include "profile.h"
#include "diff.h"
#include "report.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)argc;
	(void)argv;
	/* the printed report is not looked at; the sanitizers report on stderr */
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		abort();
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, ".json");
	char *argv[] = { "report", (char *)path, NULL };
	json_t *p = profile__load(path);
	struct model m;

	if (!p)
		return 0;
	if (!model__from_json(&m, p, path)) {
		json_decref(model__to_json(&m));
		diff__compare(&m, &m, 10.0);
		cmd_report(2, argv);
	}
	model__free(&m);
	json_decref(p);
	return 0;
}
