// SPDX-License-Identifier: BSD-2-Clause
/* Uprobe-multi links where the kernel has them: see uprobe_links.h. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "uprobe_links.h"

/* BPF_TRACE_UPROBE_MULTI and BPF_F_UPROBE_MULTI_RETURN, from Linux 6.6's
 * uapi: the installed headers and libbpf 1.1 predate them. */
#define ATTACH_UPROBE_MULTI 48
#define UPROBE_MULTI_RETURN 1U

/* union bpf_attr's link_create as BPF_TRACE_UPROBE_MULTI lays it out
 * (include/uapi/linux/bpf.h, link_create.uprobe_multi). */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

static int link_create_multi(int prog_fd, const char *path, const uint64_t *offset, const uint64_t *cookie,
			     bool ret, __u32 pid)
{
	struct link_create_uprobe_multi a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = prog_fd;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (uintptr_t)path;
	a.offsets = (uintptr_t)offset;
	a.cookies = (uintptr_t)cookie;
	a.cnt = 1;
	a.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	a.pid = pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

static bool check_multi(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = (enum bpf_attach_type)ATTACH_UPROBE_MULTI);
	uint64_t offset = 0, cookie = 0;
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "it_umulti_check", "GPL", insns, 2, &po);
	if (prog < 0)
		return false;
	/* a kernel with uprobe-multi links looks the path up and refuses a
	 * directory with EBADF; one without them refuses the attach type */
	link = link_create_multi(prog, "/", &offset, &cookie, false, 0);
	close(prog);
	if (link >= 0) {
		close(link);
		return false;
	}
	return link == -EBADF;
}

bool uprobe_links__kernel_has_multi(void)
{
	static int has = -1; /* checked once: the answer cannot change */

	if (has < 0)
		has = check_multi();
	return has;
}

void uprobe_links__prefer_multi(struct bpf_program *prog)
{
	if (uprobe_links__kernel_has_multi())
		bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)ATTACH_UPROBE_MULTI);
}

int uprobe_link__attach(struct uprobe_link *out, struct bpf_program *prog, bool ret, pid_t pid,
			const char *file, uint64_t offset, uint64_t cookie)
{
	out->link = NULL;
	out->fd = -1;
	if ((int)bpf_program__expected_attach_type(prog) == ATTACH_UPROBE_MULTI) {
		/* uprobe-multi's pid: 0 every process */
		int fd = link_create_multi(bpf_program__fd(prog), file, &offset, &cookie, ret,
					   pid == -1 ? 0 : pid == 0 ? (__u32)getpid() : (__u32)pid);

		if (fd < 0)
			return fd;
		out->fd = fd;
		return 0;
	}

	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = cookie);

	out->link = bpf_program__attach_uprobe_opts(prog, pid, file, (size_t)offset, &uo);
	return out->link ? 0 : -errno;
}

void uprobe_link__destroy(struct uprobe_link *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	if (l->fd >= 0)
		close(l->fd);
	l->link = NULL;
	l->fd = -1;
}
