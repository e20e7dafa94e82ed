// SPDX-License-Identifier: BSD-2-Clause
/* DWARF unwinding of copied user stacks with libdwfl; see unwind.h.
 *
 * One Dwfl per process, holding only the modules its samples have walked
 * through: a frame whose address lies in a captured file mapping that is
 * not yet a module stops the walk, the file is reported, and the stack is
 * walked again (a PyTorch process maps ~300 files, its samples touch a
 * few dozen). A dlopen adds nothing until a sample needs it; the Dwfl is
 * rebuilt only when a reported module's mapping went away or changed
 * (dlclose), so libdwfl's per-module caches (the ELF, .eh_frame_hdr's
 * table, the FDEs already parsed) serve every later sample: after the
 * first samples an unwind costs a few microseconds per frame. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "syms.h"
#include "unwind.h"
#include "safe_open.h"
#include "vec.h"

/* walks of one sample that may each add a module */
#define UNWIND_MAX_PASSES 64
/* frames compared when a read is tested (unwinder__unwind_reads' max) */
#define UNWIND_TEST_FRAMES 128

#if defined(__x86_64__)
#define UNWIND_NREGS 17 /* rax..r15, rip */
#define UNWIND_FP_REG 6 /* rbp */
#define UNWIND_SP_REG 7 /* rsp */
#elif defined(__aarch64__)
#define UNWIND_NREGS 32 /* x0..x30, sp; pc separately */
#define UNWIND_PC_SLOT 32
#define UNWIND_FP_REG 29
#define UNWIND_SP_REG 31
#else
#define UNWIND_NREGS 0
#endif

struct uproc;

/* The sample being unwound: what the thread callbacks read. */
struct sample_ctx {
	struct syms_cache *syms;
	struct uproc *p;
	pid_t tid;
	const uint64_t *regs;
	int nregs;
	uint64_t sp;
	const unsigned char *stack;
	size_t size;
	uint64_t *ips;
	int max, n;
	bool ended; /* a frame with pc 0: the end of a frame-pointer chain */
	Dwarf_Addr last_pc; /* the last frame's, as dwfl_frame_pc gave it */
	bool last_activation;
	struct syms_mapping need; /* the walk stopped at a frame in this mapping, not yet a module */
	bool needs;
	struct unwind_reads *reads; /* NULL: not recorded */
	/* with reads: each frame's frame pointer and stack pointer, as the
	 * unwinding found them (what the words that mattered hold) */
	uint64_t *fps, *sps;
};

static void note_read(struct unwind_reads *r, uint32_t off)
{
	for (int i = r->n - 1; i >= 0; i--)
		if (r->off[i] == off)
			return;
	if (r->n < r->max)
		r->off[r->n++] = off;
	else
		r->overflow = true;
}

/* Stacks end at few pcs (a thread's and the program's entry, cut copies at
 * the same depth): the answers of cfi_outermost kept per process, by the
 * last frame's lookup address, for as long as its modules. */
#define UPROC_ENDS 64

/* a reported module: the captured mapping it was reported from */
struct umod {
	uint64_t start, end, bias;
	const char *opened; /* the syms cache's string: one per file */
};

struct uproc {
	pid_t pid;
	Dwfl *dwfl;
	/* the file libdwfl takes the architecture from, the process's own:
	 * without it libdwfl borrows a module's, which may go with the module */
	Elf *arch_elf;
	int arch_fd;
	uint64_t gen; /* syms_cache__generation the modules were checked against */
	struct umod *mods;
	size_t nmods, cap_mods;
	uint64_t *failed; /* mapping starts whose file could not be reported */
	size_t nfailed, cap_failed;
	struct sample_ctx *cur;
	struct {
		Dwarf_Addr at; /* 0: empty */
		bool outermost;
	} ends[UPROC_ENDS];
};

struct unwinder {
	struct syms_cache *syms;
	/* one allocation each: libdwfl keeps a pointer to its uproc
	 * (dwfl_attach_state), which must survive the array growing or a
	 * process being forgotten */
	struct uproc **procs;
	size_t nprocs, cap;
	struct unwind_stats stats;
	int depth; /* unwindings in progress (keep_used_reads unwinds inside one) */
};

static char *debuginfo_path;

/* Whether elf has an .eh_frame section: the call-frame information
 * unwinding needs, in the file itself. */
static bool has_eh_frame(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".eh_frame"))
			return true;
	}
	return false;
}

/* A module whose file has .eh_frame unwinds from it alone: when a pc has
 * no entry there (hand-written code, a PLT stub), libdwfl would turn to the
 * separate debuginfo's .debug_frame, and to read it opens the debuginfo's
 * DWARF whole, decompressing every section (about 50 ms of the tracer's
 * CPU for libc's, while the experiment runs). Symbolization reads
 * debuginfo through its own Dwfl (syms.c). Files without .eh_frame still
 * get theirs. */
static int find_debuginfo_unless_eh(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
				    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
				    char **debuginfo_file_name)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	if (elf && has_eh_frame(elf))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo_unless_eh,
	.debuginfo_path = &debuginfo_path,
};

/* ---- thread callbacks ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uproc *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0; /* one thread: the sampled one */
	*thread_argp = p;
	return p->cur->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uproc *p = arg;
	const struct sample_ctx *s = p->cur;

	(void)dwfl;
	if (addr < s->sp || addr - s->sp > s->size || s->size - (addr - s->sp) < sizeof(*result))
		return false; /* outside the copy */
	memcpy(result, s->stack + (addr - s->sp), sizeof(*result));
	if (s->reads)
		note_read(s->reads, (uint32_t)(addr - s->sp));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uproc *p = arg;
	const struct sample_ctx *s = p->cur;
	Dwarf_Word regs[UNWIND_NREGS ? UNWIND_NREGS : 1];

	if (!UNWIND_NREGS || s->nregs < UNWIND_NREGS)
		return false;
	for (int i = 0; i < UNWIND_NREGS; i++)
		regs[i] = s->regs[i];
#ifdef UNWIND_PC_SLOT
	dwfl_thread_state_register_pc(thread, s->regs[UNWIND_PC_SLOT]);
#endif
	return dwfl_thread_state_registers(thread, 0, UNWIND_NREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* ---- per-process modules ---- */

static void uproc__close(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	if (p->arch_elf)
		elf_end(p->arch_elf);
	p->arch_elf = NULL;
	if (p->arch_fd >= 0)
		close(p->arch_fd);
	p->arch_fd = -1;
	p->nmods = 0;
	p->nfailed = 0;
	memset(p->ends, 0, sizeof(p->ends));
}

static bool uproc__failed(const struct uproc *p, uint64_t start)
{
	for (size_t i = 0; i < p->nfailed; i++)
		if (p->failed[i] == start)
			return true;
	return false;
}

/* Reports the file of captured mapping m as a module. 0 or -errno. */
static int uproc__report(struct unwinder *u, struct uproc *p, const struct syms_mapping *m, bool first)
{
	uint64_t t0 = syms__thread_cpu_ns();
	Dwfl_Module *mod = NULL;
	int fd = -1;

	if (VEC_RESERVE(p->mods, p->cap_mods, p->nmods, 16) ||
	    VEC_RESERVE(p->failed, p->cap_failed, p->nfailed, 8))
		return -ENOMEM;
	/* a file is one module, reported once: it spans the file's mappings,
	 * and libdwfl drops the module it has when the same file is reported
	 * again over it */
	for (size_t i = 0; i < p->nmods; i++)
		if (p->mods[i].opened == m->opened) {
			p->failed[p->nfailed++] = m->start;
			return -EEXIST;
		}
	/* the file symbolization checked (the path itself may now be a FIFO or
	 * another file); libdwfl owns fd on success */
	if (m->elf && m->opened)
		fd = safe_open_regular(m->opened);
	if (fd >= 0) {
		if (first)
			dwfl_report_begin(p->dwfl);
		else
			dwfl_report_begin_add(p->dwfl);
		/* several executable mappings of one file: one module spans them */
		mod = dwfl_report_elf(p->dwfl, m->path, m->opened, fd, m->bias, true);
		dwfl_report_end(p->dwfl, NULL, NULL);
		if (!mod)
			close(fd);
	}
	if (mod) {
		p->mods[p->nmods++] = (struct umod){ m->start, m->end, m->bias, m->opened };
		u->stats.modules++;
	} else {
		p->failed[p->nfailed++] = m->start;
	}
	u->stats.rebuild_ns += syms__thread_cpu_ns() - t0;
	return mod ? 0 : -ENOENT;
}

/* Whether every reported module's mapping is still in the capture, the same
 * file at the same place. */
static bool uproc__still_mapped(struct unwinder *u, const struct uproc *p)
{
	struct syms_mapping m;

	for (size_t i = 0; i < p->nmods; i++) {
		const struct umod *x = &p->mods[i];

		if (syms_cache__mapping_of(u->syms, p->pid, x->start, &m) || m.start != x->start ||
		    m.end != x->end || m.bias != x->bias || m.opened != x->opened)
			return false;
	}
	return true;
}

struct first_acc {
	struct syms_mapping m;
	bool found;
};

static void first_file(void *arg, const struct syms_mapping *m)
{
	struct first_acc *a = arg;

	if (!a->found && m->elf && m->opened) {
		a->m = *m;
		a->found = true;
	}
}

/* Makes p->dwfl match the current capture of p->pid's mappings: kept while
 * its modules are still mapped, else begun anew with one module (libdwfl
 * takes the architecture from it): the one holding pc, else the first
 * file mapped. */
static int uproc__sync(struct unwinder *u, struct uproc *p, uint64_t pc)
{
	uint64_t gen = syms_cache__generation(u->syms, p->pid);
	struct first_acc first = {};

	if (!gen)
		return -ENOENT;
	if (p->dwfl && (gen == p->gen || uproc__still_mapped(u, p))) {
		p->gen = gen;
		return 0;
	}
	uproc__close(p);
	p->gen = gen;
	if (!syms_cache__mapping_of(u->syms, p->pid, pc, &first.m) && first.m.elf && first.m.opened)
		first.found = true;
	else
		syms_cache__mappings(u->syms, p->pid, first_file, &first);
	if (!first.found)
		return -ENOENT;
	u->stats.rebuilds++;
	p->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	p->arch_fd = safe_open_regular(first.m.opened);
	if (p->arch_fd >= 0)
		p->arch_elf = elf_begin(p->arch_fd, ELF_C_READ_MMAP, NULL);
	if (!p->arch_elf || uproc__report(u, p, &first.m, true) ||
	    !dwfl_attach_state(p->dwfl, p->arch_elf, p->pid, &thread_callbacks, p)) {
		uproc__close(p);
		return -ENOENT;
	}
	return 0;
}

static struct uproc *proc_get(struct unwinder *u, pid_t pid)
{
	struct uproc *p;

	for (size_t i = 0; i < u->nprocs; i++)
		if (u->procs[i]->pid == pid)
			return u->procs[i];
	if (VEC_RESERVE(u->procs, u->cap, u->nprocs, 8))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->arch_fd = -1;
	u->procs[u->nprocs++] = p;
	return p;
}

/* ---- API ---- */

struct unwinder *unwinder__new(struct syms_cache *syms)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (u)
		u->syms = syms;
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++) {
		uproc__close(u->procs[i]);
		free(u->procs[i]->mods);
		free(u->procs[i]->failed);
		free(u->procs[i]);
	}
	free(u->procs);
	free(u);
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; u && i < u->nprocs; i++) {
		if (u->procs[i]->pid != pid)
			continue;
		uproc__close(u->procs[i]);
		free(u->procs[i]->mods);
		free(u->procs[i]->failed);
		free(u->procs[i]);
		u->procs[i] = u->procs[--u->nprocs];
		return;
	}
}

const struct unwind_stats *unwinder__stats(const struct unwinder *u)
{
	return &u->stats;
}

/* Whether the frame at `at` lies in a captured file mapping that is not
 * yet a module (and was not found unreportable): s->need then names it. */
static bool needs_module(struct sample_ctx *s, Dwarf_Addr at)
{
	if (dwfl_addrmodule(s->p->dwfl, at))
		return false;
	if (syms_cache__mapping_of(s->syms, s->p->pid, at, &s->need) || !s->need.elf || !s->need.opened)
		return false;
	return !uproc__failed(s->p, s->need.start);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct sample_ctx *s = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (!pc) {
		s->ended = true;
		return DWARF_CB_ABORT;
	}
	/* libdwfl unwinds from this frame with the module holding it (a
	 * caller's return address less one): without one it would guess by
	 * the frame pointer */
	if (needs_module(s, activation ? pc : pc - 1)) {
		s->needs = true;
		return DWARF_CB_ABORT;
	}
	if (s->n >= s->max)
		return DWARF_CB_ABORT;
	if (s->reads) {
		Dwarf_Word fp = 0, sp = 0;

#ifdef UNWIND_FP_REG
		if (dwfl_frame_reg(state, UNWIND_FP_REG, &fp) != 0)
			fp = 0;
		if (dwfl_frame_reg(state, UNWIND_SP_REG, &sp) != 0)
			sp = 0;
#endif
		s->fps[s->n] = fp;
		s->sps[s->n] = sp;
	}
	s->ips[s->n++] = pc; /* a return address for callers: stacks.c looks up pc - 1 */
	s->last_pc = pc;
	s->last_activation = activation;
	return DWARF_CB_OK;
}

/* Whether the frame at pc has no caller by its call-frame information (its
 * return address "undefined": _start, clone3, start_thread). libdwfl ends
 * without an error both there and where it could not unwind further (a
 * read outside the copy), so the ending frame says which. */
static bool cfi_outermost(struct uproc *p, Dwarf_Addr pc, bool activation)
{
	/* a caller's pc is a return address: its call is the instruction before */
	Dwarf_Addr at = activation ? pc : pc - 1, bias, start, end;
	unsigned int slot = (unsigned int)((at * 0x9e3779b97f4a7c15ull) >> 58) % UPROC_ENDS;
	Dwfl_Module *mod;
	Dwarf_Frame *frame = NULL;
	Dwarf_Op ops_mem[3], *ops = NULL;
	size_t nops = 0;
	bool signal, undefined = false;
	int ra;

	if (p->ends[slot].at == at)
		return p->ends[slot].outermost;
	mod = dwfl_addrmodule(p->dwfl, at);
	for (int i = 0; mod && i < 2 && !frame; i++) {
		Dwarf_CFI *cfi = i ? dwfl_module_dwarf_cfi(mod, &bias) : dwfl_module_eh_cfi(mod, &bias);

		if (cfi && dwarf_cfi_addrframe(cfi, at - bias, &frame) != 0)
			frame = NULL;
	}
	if (frame) {
		ra = dwarf_frame_info(frame, &start, &end, &signal);
		/* no operations, at ops_mem: "undefined" (NULL: "same value") */
		if (ra >= 0 && dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0)
			undefined = nops == 0 && ops == ops_mem;
		free(frame);
	}
	p->ends[slot].at = at;
	p->ends[slot].outermost = undefined;
	return undefined;
}

static bool in_set(const uint64_t *v, int n, uint64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

#ifdef UNWIND_FP_REG
/* Whether the sample unwinds to other frames with its frame pointer
 * register (off < 0) or the word at off of stack (a copy of the sample's)
 * changed. */
static bool changes_frames(struct unwinder *u, pid_t pid, const struct sample_ctx *s, unsigned char *stack,
			   long off)
{
	uint64_t regs[UNWIND_NREGS], other[UNWIND_TEST_FRAMES], w = 0;
	int m = 0, max = s->max < UNWIND_TEST_FRAMES ? s->max : UNWIND_TEST_FRAMES;

	memcpy(regs, s->regs, sizeof(regs));
	if (off < 0) {
		regs[UNWIND_FP_REG] = ~regs[UNWIND_FP_REG];
	} else {
		memcpy(&w, stack + off, sizeof(w));
		w = ~w;
		memcpy(stack + off, &w, sizeof(w));
	}
	/* a test, not a stack: its outcome (cut at UNWIND_TEST_FRAMES, or
	 * stopped by the changed word) stays out of the counts; its time is
	 * the unwinder's */
	struct unwind_stats counts = u->stats;

	unwinder__unwind(u, pid, s->tid, regs, s->nregs, s->sp, stack ? stack : s->stack, s->size, other, max, &m);
	u->stats.stacks = counts.stacks;
	u->stats.truncated = counts.truncated;
	u->stats.too_deep = counts.too_deep;
	u->stats.no_modules = counts.no_modules;
	if (off >= 0) {
		w = ~w;
		memcpy(stack + off, &w, sizeof(w));
	}
	return m != s->n || memcmp(other, s->ips, (size_t)s->n * sizeof(*other)) != 0;
}
#endif

/* Keeps the reads whose word the unwinding used: a return address (a
 * frame's pc) or a stack pointer (a frame's sp, e.g. the canonical frame
 * address a realigned frame keeps), and a word holding a frame's frame
 * pointer when changing it changes the frames: code built without frame
 * pointers keeps data there (a counter, a pointer), as in the
 * callee-saved registers restored on the way, which no frame address or
 * return address depends on (.eh_frame's rules derive those from sp, the
 * frame pointer and the stack only). The frame pointer register is tested
 * the same way (reads->fp_used). */
static void keep_used_reads(struct unwinder *u, pid_t pid, struct sample_ctx *s)
{
	struct unwind_reads *r = s->reads;
	unsigned char *copy = NULL;
	int w = 0;

#ifdef UNWIND_FP_REG
	r->fp_used = changes_frames(u, pid, s, NULL, -1);
#else
	(void)u, (void)pid;
	r->fp_used = true;
#endif
	for (int i = 0; i < r->n; i++) {
		uint64_t x;
		bool keep;

		memcpy(&x, s->stack + r->off[i], sizeof(x));
		keep = in_set(s->ips, s->n, x) || in_set(s->sps, s->n, x);
		if (!keep && in_set(s->fps, s->n, x)) {
#ifdef UNWIND_FP_REG
			if (!copy && (copy = malloc(s->size)))
				memcpy(copy, s->stack, s->size);
			/* without a copy to test on, kept */
			keep = !copy || changes_frames(u, pid, s, copy, r->off[i]);
#else
			keep = true;
#endif
		}
		if (keep)
			r->off[w++] = r->off[i];
	}
	free(copy);
	r->n = w;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int unwinder__unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs, int nregs,
		     uint64_t sp, const void *stack, size_t size, uint64_t *ips, int max, int *n)
{
	return unwinder__unwind_reads(u, pid, tid, regs, nregs, sp, stack, size, ips, max, n, NULL);
}

int unwinder__unwind_reads(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs, int nregs,
			   uint64_t sp, const void *stack, size_t size, uint64_t *ips, int max, int *n,
			   struct unwind_reads *reads)
{
	uint64_t fps[reads ? max : 1], sps[reads ? max : 1];
	struct sample_ctx s = {
		.syms = u->syms, .tid = tid, .regs = regs, .nregs = nregs, .sp = sp, .stack = stack, .size = size,
		.ips = ips, .max = max, .reads = reads, .fps = fps, .sps = sps,
	};
	/* the thread clock is a system call: read around the outermost
	 * unwinding only (keep_used_reads unwinds again, inside) */
	uint64_t t0 = now_ns(), c0 = u->depth ? 0 : syms__thread_cpu_ns(), dt, pc = 0;
	/* files opened on the way (syms.c opens a file at first need) are
	 * the files part, not this one */
	uint64_t f0 = syms_cache__stats(u->syms)->file_ns;
	struct uproc *p = proc_get(u, pid);
	int status, rc;

	*n = 0;
	u->stats.stacks++;
#if defined(__x86_64__)
	if (nregs > 16)
		pc = regs[16];
#elif defined(__aarch64__)
	if (nregs > 32)
		pc = regs[32];
#endif
	if (!p || uproc__sync(u, p, pc)) {
		u->stats.no_modules++;
		status = UNWIND_NO_MODULES;
		goto out;
	}
	s.p = p;
	p->cur = &s;
	/* each pass that stops at a file not yet reported adds it, or notes it
	 * unreportable: the passes end */
	for (int pass = 0;; pass++) {
		s.n = 0;
		s.ended = s.needs = false;
		if (reads) {
			reads->n = 0;
			reads->overflow = false;
		}
		rc = dwfl_getthread_frames(p->dwfl, tid, frame_cb, &s);
		if (!s.needs || pass == UNWIND_MAX_PASSES)
			break;
		u->stats.passes++;
		if (uproc__report(u, p, &s.need, false) == -ENOMEM)
			break;
	}
	p->cur = NULL;
	if (s.n >= max)
		status = UNWIND_TOO_DEEP;
	else if (s.ended || (rc == 0 && s.n > 0 && cfi_outermost(p, s.last_pc, s.last_activation)))
		status = UNWIND_OK;
	else
		status = UNWIND_TRUNCATED; /* stopped before a frame with no caller */
	if (status == UNWIND_TOO_DEEP)
		u->stats.too_deep++;
	else if (status == UNWIND_TRUNCATED)
		u->stats.truncated++;
out:
	/* with no modules, the sampled pc alone still names the leaf */
	if (!s.n && max > 0 && nregs > 16) {
#if defined(__x86_64__)
		ips[s.n++] = regs[16];
#elif defined(__aarch64__)
		ips[s.n++] = regs[32];
#endif
	}
	*n = s.n;
	dt = now_ns() - t0;
	u->stats.total_ns += dt;
	if (!u->depth)
		u->stats.cpu_ns += syms__thread_cpu_ns() - c0 - (syms_cache__stats(u->syms)->file_ns - f0);
	if (dt > u->stats.max_ns)
		u->stats.max_ns = dt;
	if (reads) {
		reads->status = status;
		/* what a reuse needs: a stack unwound with the process's modules */
		if (status == UNWIND_OK || status == UNWIND_TRUNCATED) {
			uint64_t c1 = u->depth ? 0 : syms__thread_cpu_ns(), f1 = syms_cache__stats(u->syms)->file_ns;

			u->depth++;
			keep_used_reads(u, pid, &s);
			u->depth--;
			if (!u->depth)
				u->stats.cpu_ns += syms__thread_cpu_ns() - c1 -
						   (syms_cache__stats(u->syms)->file_ns - f1);
		}
	}
	return status;
}
