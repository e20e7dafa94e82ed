// SPDX-License-Identifier: BSD-2-Clause
/* Uprobes and uretprobes placed as BPF uprobe-multi links where the kernel
 * has them (6.6 and later), as perf-event uprobes (libbpf) elsewhere.
 *
 * Why: closing a perf-event uprobe unregisters it under the kernel's global
 * trace-event mutex and waits for two grace periods there, so N probes
 * detach one after another whatever the threads (about 90 ms each on the
 * 2-vCPU VM: 1.3 s for --preset llama.cpp's probes after the outputs were
 * written). A uprobe-multi link is released without that mutex: links
 * closed from several threads wait for their grace periods together.
 *
 * A program is placed one way or the other for its whole life: the kernel
 * takes the choice (the program's expected attach type) at load. */
#ifndef INFERTRACE_UPROBE_LINKS_H
#define INFERTRACE_UPROBE_LINKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct bpf_program;

/* One placed probe: a libbpf link or a uprobe-multi link's descriptor. */
struct uprobe_link {
	struct bpf_link *link;
	int fd; /* -1 when link is used */
};

/* Whether this kernel has uprobe-multi links (checked once, by loading a
 * two-instruction program and asking for a link on "/", which a kernel
 * that has them refuses with EBADF). */
bool uprobe_links__kernel_has_multi(void);
/* Before the object is loaded: the program is to be placed through
 * uprobe-multi links when the kernel has them. */
void uprobe_links__prefer_multi(struct bpf_program *prog);
/* Places prog (loaded) at file+offset, as a return probe when ret. pid:
 * libbpf's meaning (-1 every process, 0 this one, else that process).
 * 0 with *out filled, or -errno. */
int uprobe_link__attach(struct uprobe_link *out, struct bpf_program *prog, bool ret, pid_t pid,
			const char *file, uint64_t offset, uint64_t cookie);
/* Detaches and frees; the link is empty afterwards. */
void uprobe_link__destroy(struct uprobe_link *l);

#endif
