/* Shared between BPF programs (bpf/) and user space (user/): limits, map
 * keys/values and ring-buffer records. Only __u32/__u64 types, no includes,
 * so both vmlinux.h-side and linux/types.h-side code can include it. */
#ifndef INFERTRACE_H
#define INFERTRACE_H

#define IT_COMM_LEN 16
#define IT_MAX_STACK_DEPTH 127
#define IT_MAX_PHASES 32        /* phase ids 1..31; 0 = outside any phase */
#define IT_PHASE_STACK 8        /* nesting depth tracked per thread */
#define IT_MAX_PROBES 256
#define IT_HIST_SLOTS 32        /* log2 buckets */

#define IT_PHASE_NONE 0
#define IT_CYCLE_NONE 0xffffffffu /* no cycle open (before the first marker) */

/* Index into the per-CPU `stats` array: everything that can be lost or
 * that tells how trustworthy the numbers are. Never reuse a retired value. */
enum it_stat {
	IT_STAT_SAMPLES_ALL = 0,      /* perf_event program runs, any task */
	IT_STAT_SAMPLES_TARGET = 1,   /* samples that hit a target */
	IT_STAT_LOST_SAMPLES = 2,     /* sample not counted: counts map full */
	IT_STAT_USTACK_ERR = 3,       /* user stack id < 0 (collision or fault) */
	IT_STAT_KSTACK_ERR = 4,       /* kernel stack id < 0 */
	IT_STAT_USTACK_COLLISION = 5, /* -EEXIST: bucket held by another stack */
	IT_STAT_KSTACK_COLLISION = 6,
	IT_STAT_RINGBUF_LOST = 7,     /* ring buffer full: event dropped */
	IT_STAT_TARGETS_FULL = 8,     /* a child could not be followed */
	IT_STAT_THREADS_FULL = 9,     /* per-thread state map full */
	IT_STAT_PROBE_HITS = 10,      /* uprobe/USDT program runs */
	IT_STAT_LOST_EVENTS = 11,     /* any other map update failure */
	IT_STAT_MAX = 32,
};

/* Why a process is followed. */
enum it_target_flags {
	IT_TARGET_ROOT = 1,     /* named by the user (-p or the command) */
	IT_TARGET_CHILD = 2,    /* forked by a followed process */
	IT_TARGET_COMM = 4,     /* matched --comm */
};

struct it_target {
	__u32 flags;
	__u32 parent_tgid;
	__u64 start_ns;
};

/* Per process (tgid): the cycle that is open. */
struct it_proc_state {
	__u32 cycle;       /* current cycle index, IT_CYCLE_NONE before the first */
	__u32 cycle_depth; /* recursion depth of the --cycle function */
	__u64 cycle_start_ns;
};

/* Per thread (tid): the phase stack, innermost last. */
struct it_thread_state {
	__u32 depth;                       /* number of valid entries */
	__u32 phase;                       /* innermost phase, IT_PHASE_NONE if none */
	__u32 phases[IT_PHASE_STACK];
	__u64 entry_ns[IT_PHASE_STACK];
	__u64 entry_sp[IT_PHASE_STACK];    /* stack pointer at entry: unwinds stale frames */
};

/* Key of the on-CPU stack counts map (value: __u64 sample count). */
struct it_stack_key {
	__u32 tgid;
	__u32 phase;
	__s32 ustack_id;
	__s32 kstack_id;
	char comm[IT_COMM_LEN]; /* process (group leader) name */
};

/* Key of the per-cycle sample counts map (value: __u64). */
struct it_cycle_key {
	__u32 tgid;
	__u32 cycle;
	__u32 phase;
	__u32 pad;
};

/* Ring-buffer records: every one starts with `type`. */
enum it_event_type {
	IT_EV_FORK = 1,   /* a followed process forked a child process */
	IT_EV_EXEC = 2,   /* a followed process called exec */
	IT_EV_EXIT = 3,   /* a followed process exited (group leader) */
	IT_EV_MMAP = 4,   /* a followed process mapped executable memory */
};

struct it_event_header {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns;
};

struct it_proc_event {
	struct it_event_header hdr;
	__u32 parent_tgid; /* IT_EV_FORK */
	__s32 exit_code;   /* IT_EV_EXIT: wait status as the kernel keeps it */
	char comm[IT_COMM_LEN];
};

#endif /* INFERTRACE_H */
