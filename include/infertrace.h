// SPDX-License-Identifier: BSD-2-Clause
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
/* library names (prefixes of file names) that lazily placed probes watch
 * for, each at most IT_WANTED_LIB_LEN - 1 bytes (longer names cut) */
#define IT_WANTED_LIBS 8
#define IT_WANTED_LIB_LEN 32
#define IT_HIST_SLOTS 32        /* log2 buckets */
#define IT_NET_DATA_CALLS 4     /* syscalls per direction that move socket data (network, no sock tracepoints) */

#define IT_PHASE_NONE 0
#define IT_CYCLE_NONE 0xffffffffu /* no cycle open (before the first marker) */
/* it_sched_key.phase of time whose phase is not known (an edge no probe saw):
 * part of its cycle, of no phase */
#define IT_PHASE_UNATTRIBUTED IT_MAX_PHASES

/*
 * Enums, by kind. Every value is explicit and never reused once retired:
 * the record types are a versioned format read back by user space, the
 * stats indexes and roles are shared by BPF and user space.
 */

/* --- Ring-buffer record types, in value order --- */

/* Ring-buffer records: every one starts with `type`. Value ranges by concern:
 * 1..9 processes, 10..19 probes (cycles, phases), 20..29 scheduler, memory
 * and crashes, 30..39 thermal/power, 40..49 network, 50..59 sampling,
 * 60..69 Python frames, 70..79 CUDA. */
enum it_event_type {
	IT_EV_FORK = 1,   /* a followed process forked a child process */
	IT_EV_EXEC = 2,   /* a followed process called exec */
	IT_EV_EXIT = 3,   /* a followed process exited (group leader) */
	IT_EV_MMAP = 4,   /* a followed process mapped executable memory */
	IT_EV_CYCLE_BEGIN = 10,
	IT_EV_CYCLE_END = 11,
	IT_EV_PHASE_END = 12,  /* an outermost phase call returned */
	IT_EV_CRASH = 20, /* a followed process died of a signal or exited non-zero */
	IT_EV_OOM = 21,   /* the OOM killer chose a followed process */
	IT_EV_COMM = 22,  /* a process matching --comm exec'd: now followed */
	IT_EV_FATAL_SIGNAL = 23, /* a fatal signal was generated for a target */
};

/* Records of the thermal/power tracepoints (values 30..39):
 * system-wide facts on the cycle timeline, not tied to a target. */
enum it_power_event_type {
	IT_EV_THERMAL_TEMP = 30,      /* thermal:thermal_temperature */
	IT_EV_CDEV_UPDATE = 31,       /* thermal:cdev_update (cooling device state) */
	IT_EV_CPU_FREQ = 32,          /* power:cpu_frequency */
	IT_EV_CPU_FREQ_LIMITS = 33,   /* power:cpu_frequency_limits */
};

/* Records of the network concern: a target's TCP traffic (values 40..49). */
enum it_net_event_type {
	IT_EV_NET_CONN = 40,       /* a target's TCP socket seen for the first time */
	IT_EV_NET_CLOSE = 41,      /* a tracked socket closed: its final figures */
	IT_EV_NET_RETRANSMIT = 42, /* tcp:tcp_retransmit_skb on a tracked socket */
};

/* Records of the sampling concern (values 50..59). */
enum it_sample_event_type {
	IT_EV_USTACK = 50, /* --call-graph dwarf: a sample with its user registers and stack copy */
	IT_EV_OFFCPU_USTACK = 51, /* --call-graph dwarf: a blocking system call's user stack, with its blocked time */
	IT_EV_OFFCPU_SLICE = 52,  /* a sampled block of IT_OFFCPU_SLICE_MIN_NS or more: its interval, no stack */
};

/* --- Counters of the per-CPU `stats` map --- */

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
	IT_STAT_PROBE_STACK_FULL = 12, /* probe stack deeper than IT_PHASE_STACK */
	IT_STAT_PROBE_ABANDONED = 13,  /* calls that never returned (longjmp, exit) */
	IT_STAT_PROBE_UNMATCHED = 14,  /* a return without its entry */
	/* 16..23: scheduler and memory; 24..31: side data; 32..39: user stack copies */
	IT_STAT_SCHED_THREADS_FULL = 16, /* a thread's on/off-CPU state not kept */
	IT_STAT_SCHED_LOST = 17,      /* a sched/offcpu/memory map update failed */
	IT_STAT_OFFCPU_KSTACK_ERR = 18, /* off-CPU kernel stack not captured */
	IT_STAT_OFFCPU_USTACK_ERR = 19, /* off-CPU user stack not captured */
	IT_STAT_SCHED_UNATTRIBUTED = 20, /* a settled interval whose phase edge was not seen */
	IT_STAT_NET_SOCKS_FULL = 24,  /* a target's socket not tracked: net_socks full */
	IT_STAT_NET_LOST = 25,        /* a network per-cycle update failed */
	IT_STAT_CUDA_LOST = 26,       /* a CUDA counter update failed */
	IT_STAT_CUDA_STACK_LOST = 27, /* a launch's native stack not sent: no stack id, no copy, ring buffer full */
	IT_STAT_USTACK_COPY_ERR = 32,  /* --call-graph dwarf: user registers or stack unreadable */
	IT_STAT_USTACK_SHORT = 33,     /* stack copy ended before the asked size (top of mapping) */
	IT_STAT_USTACK_LOST = 34,      /* stack record not sent: ring buffer full */
	IT_STAT_OFFCPU_DWARF_SENT = 35,    /* off-CPU user stack copies sent at a system call's exit */
	IT_STAT_OFFCPU_DWARF_LOST = 36,    /* off-CPU stack copy not sent (ring buffer full, no scratch) */
	IT_STAT_OFFCPU_DWARF_COPY_ERR = 37, /* off-CPU user registers or stack unreadable */
	IT_STAT_OFFCPU_DWARF_DROPPED = 38, /* blocked time whose system call never returned (thread exited) */
	IT_STAT_OFFCPU_SHORT_EXITED = 39,  /* short blocks' time of a thread that exited, whose window could not be sent */
	IT_STAT_LABELS_FULL = 43,      /* on-CPU sample without thread/cycle labels: map full */
	IT_STAT_OFFCPU_LABELS_FULL = 44, /* off-CPU interval likewise */
	/* 40..47: Python frames */
	IT_STAT_PY_STACKS_FULL = 40,   /* py_stacks full: a stack kept its native frames only */
	IT_STAT_PY_READ_ERR = 41,      /* a Python thread state or frame could not be read */
	IT_STAT_PY_CODE_LOST = 42,     /* a code object's names not sent: ring buffer full */
	IT_STAT_PY_EDGE_DEFERRED = 45, /* `py:` observation whose root frame changed: its edges wait for the next */
	IT_STAT_PY_EDGE_LOST = 46,     /* a `py:` edge not applied: thread state map or phase stack full */
	IT_STAT_MAX = 48,
};

/* --- Roles, flags, states and counter ids --- */

/* Why a process is followed. */
enum it_target_flags {
	IT_TARGET_ROOT = 1,     /* named by the user (-p or the command) */
	IT_TARGET_CHILD = 2,    /* forked by a followed process */
	IT_TARGET_COMM = 4,     /* matched --comm */
	IT_TARGET_AWAIT_EXEC = 8, /* launched, not yet exec'd: still the tracer's code */
};

/* What a probe does when it fires (bits 16..23 of its cookie). */
enum it_probe_role {
	IT_ROLE_CYCLE = 1,        /* entry opens a cycle, return closes it */
	IT_ROLE_CYCLE_MARKER = 2, /* entry closes the open cycle and opens the next */
	IT_ROLE_PHASE = 3,        /* entry to return is time in a phase */
	IT_ROLE_COUNT = 4,        /* each entry counts one */
	IT_ROLE_PHASE_BEGIN = 5,  /* USDT pair: begin ... */
	IT_ROLE_PHASE_END = 6,    /* ... end */
	IT_ROLE_CYCLE_BEGIN = 7,
	IT_ROLE_CYCLE_END = 8,
	/* llama_decode(ctx, struct llama_batch): the batch picks the phase and
	 * the token counts, and a prompt at position 0 starts a cycle. Cookie
	 * id: prompt phase | prompt-tokens count << 8; the generation phase and
	 * generated-tokens count are the next ids. */
	IT_ROLE_LLAMA_DECODE = 9,
	/* what a llama.cpp process shows of its settings; cookie id: enum it_llama_arg */
	IT_ROLE_LLAMA_ARGS = 10,
};

/* Which llama.cpp call an IT_ROLE_LLAMA_ARGS probe reads (cookie id). */
enum it_llama_arg {
	IT_LLAMA_ARG_CONTEXT_PARAMS = 1, /* llama_init_from_model(model, struct llama_context_params) */
	IT_LLAMA_ARG_THREADS = 2,        /* llama_set_n_threads(ctx, n_threads, n_threads_batch) */
	IT_LLAMA_ARG_MODEL_PATH = 3,     /* llama_model_load_from_file(const char *path, params) */
	/* ggml_backend_cpu_set_n_threads(backend, n_threads): llama.cpp sets it
	 * before each graph it computes, so it is the count really used. The
	 * cookie id holds the prompt phase in bits 8..15 (generation: the next) */
	IT_LLAMA_ARG_BACKEND_THREADS = 4,
	/* llama_memory_seq_rm(mem, seq_id, p0, p1) and the older
	 * llama_kv_self_seq_rm / llama_kv_cache_seq_rm(ctx, ...): a sequence's
	 * positions [p0, p1) removed (IT_EV_LLAMA_SEQ_END) */
	IT_LLAMA_ARG_SEQ_RM = 5,
	/* llama_memory_clear(mem, data), llama_kv_self_clear / llama_kv_cache_clear(ctx):
	 * every sequence removed */
	IT_LLAMA_ARG_MEMORY_CLEAR = 6,
};

#define IT_LLAMA_PATH_LEN 256
/* threads_used slots: n_threads 1..63 exactly; slot 0 counts 64 or more */
#define IT_LLAMA_THREADS_SLOTS 64
enum { IT_LLAMA_USED_PROMPT = 0, IT_LLAMA_USED_GENERATION = 1, IT_LLAMA_USED_OTHER = 2, IT_LLAMA_USED_ROWS = 3 };

/* Per process (tgid): the llama.cpp settings its calls passed. */
struct it_llama_params {
	__u32 have_context;  /* a context was created with these parameters */
	__u32 n_ctx, n_batch, n_ubatch, n_seq_max;
	__s32 n_threads, n_threads_batch; /* the last llama_set_n_threads wins */
	__u32 have_threads;  /* llama_set_n_threads was called */
	__u32 last_batch_tokens; /* n_tokens of the process's last llama_decode */
	__u32 pad;
	char model_path[IT_LLAMA_PATH_LEN];
	/* ggml_backend_cpu_set_n_threads calls by the calling thread's phase
	 * (IT_LLAMA_USED_*) and n_threads (slot) */
	__u32 threads_used[IT_LLAMA_USED_ROWS][IT_LLAMA_THREADS_SLOTS];
};

/* Attach cookie: probe index (bits 32..47), role (16..23), phase/count id (0..15). */
#define IT_COOKIE(probe, role, id) (((__u64)(probe) << 32) | ((__u64)(role) << 16) | (__u64)(id))
#define IT_COOKIE_PROBE(c) ((__u32)((c) >> 32) & 0xffff)
#define IT_COOKIE_ROLE(c) ((__u32)((c) >> 16) & 0xff)
#define IT_COOKIE_ID(c) ((__u32)(c) & 0xffff)

/* Scheduler: a thread's state between two sched events. */
enum it_sched_state {
	IT_SCHED_UNKNOWN = 0, /* not seen yet: time before is unattributed */
	IT_SCHED_ONCPU = 1,
	IT_SCHED_RUNQ = 2,    /* runnable, waiting for a CPU */
	IT_SCHED_BLOCKED = 3, /* sleeping: voluntary switch, until woken */
};

/* CUDA host-side counters (bpf/cuda.bpf.c): uprobe cookie = counter id
 * (bits 0..7) | argument whose value is summed, 1-based, 0 = none (8..15)
 * | IT_CUDA_COOKIE_RUNTIME for a libcudart (not libcuda) function. */
enum it_cuda_counter {
	IT_CUDA_LAUNCH = 1,   /* cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cooperative launches */
	IT_CUDA_MEMCPY = 2,   /* cudaMemcpy*, cuMemcpy*: bytes from the size argument */
	IT_CUDA_SYNC = 3,     /* cudaDeviceSynchronize, cudaStreamSynchronize, cuCtxSynchronize */
	IT_CUDA_GRAPH = 4,    /* cudaGraphLaunch, cuGraphLaunch: one launch of a graph of kernels */
	IT_CUDA_MAX = 8,
};
#define IT_CUDA_COOKIE(counter, arg) ((__u64)(counter) | ((__u64)(arg) << 8))
#define IT_CUDA_COOKIE_COUNTER(c) ((__u32)(c) & 0xff)
#define IT_CUDA_COOKIE_ARG(c) (((__u32)(c) >> 8) & 0xff)
#define IT_CUDA_COOKIE_RUNTIME (1u << 16)

/* --- Map keys and values, ring-buffer record layouts --- */

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

/* One open call on a thread's probe stack. */
struct it_frame {
	__u64 entry_ns;
	__u64 entry_sp;   /* stack pointer at entry: frames below a new entry's sp are gone */
	__u32 cycle;      /* cycle open in the process at entry */
	__u32 phase;      /* phase id; IT_PHASE_NONE for a cycle frame */
	__u16 probe;      /* probe index */
	__u16 recursion;  /* direct re-entries folded into this frame */
	__u16 role;
	__u16 nested;     /* the same phase is already open below: time not counted again */
};

/* Per thread (tid): the probe stack, innermost last. */
struct it_thread_state {
	__u32 depth;   /* valid frames */
	__u32 phase;   /* innermost open phase, IT_PHASE_NONE if none (tags samples) */
	struct it_frame frames[IT_PHASE_STACK];
};

/* Key of the per-(process, cycle, phase) time map; value struct it_phase_total. */
struct it_phase_key {
	__u32 tgid;
	__u32 cycle;
	__u32 phase;
	__u32 pad;
};

struct it_phase_total {
	__u64 ns;       /* summed over threads, outermost calls only */
	__u64 calls;
};

/* Key of the per-cycle call counts map (--count); value __u64. */
struct it_count_key {
	__u32 tgid;
	__u32 cycle;
	__u32 count;
	__u32 pad;
};

/* Key of the on-CPU stack counts map (value: __u64 sample count). */
struct it_stack_key {
	__u32 tgid;
	__u32 phase;
	__s32 ustack_id;
	__s32 kstack_id;
	char comm[IT_COMM_LEN]; /* process (group leader) name */
	__u64 pystack;          /* Python stack in `py_stacks`, 0 when none */
};

/* Key of the labelled stack maps (value: __u64, samples or off-CPU µs):
 * the stack key with the thread and the process's cycle, for profile.pb.gz.
 * The unlabelled maps stay complete when these fill up. */
struct it_label_key {
	struct it_stack_key stack;
	__u32 tid;
	__u32 cycle;
};

/* Value of `thread_comms` (key: tgid << 32 | tid): a sampled thread's own
 * name, its comm, with --call-graph fp (dwarf's records carry it). */
struct it_thread_comm {
	char comm[IT_COMM_LEN];
};

/* Key of the per-cycle sample counts map (value: __u64). */
struct it_cycle_key {
	__u32 tgid;
	__u32 cycle;
	__u32 phase;
	__u32 pad;
};

#define IT_USTACK_MAX 65536 /* largest user stack copy, bytes (a power of two) */
#define IT_USTACK_SCRATCH_USERS 3 /* stack copy scratch records per CPU (bpf/ustack.bpf.h) */
#define IT_UREGS 34         /* user registers in DWARF numbering (x86-64: 17; arm64: 33) */
/* Slots of it_ustack_event's regs: the pc, the frame pointer and (arm64)
 * the link register, which holds a leaf's return address. */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define IT_UREG_FP 29
#define IT_UREG_LR 30
#define IT_UREG_PC 32
#elif defined(__x86_64__) || defined(__TARGET_ARCH_x86)
#define IT_UREG_FP 6
#define IT_UREG_PC 16
#endif

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
	__u32 stopped;     /* IT_EV_MMAP: the process was stopped (SIGSTOP) so that
			    * pending probes can be placed; user space continues it */
	__u32 pad;
	char comm[IT_COMM_LEN];
};

struct it_cycle_event {
	struct it_event_header hdr;  /* ts_ns: when the cycle began/ended */
	__u32 cycle;
	__u32 abandoned;             /* END: closed because its call never returned */
};

struct it_phase_event {
	struct it_event_header hdr;  /* ts_ns: return time */
	__u64 entry_ns;
	__u32 cycle;
	__u32 phase;
	__u32 probe;
	__u32 pad;
	__u64 run_delay_ns;          /* the thread's run-queue wait so far (sched_info.run_delay) */
};

/* IT_EV_USTACK: registers and the raw user stack from the sampled sp up;
 * unwound in user space with the target's .eh_frame (like perf's dwarf mode).
 * IT_EV_OFFCPU_USTACK: the same, taken at the exit of a system call that
 * blocked, with the time it blocked (the user stack did not change meanwhile). */
struct it_ustack_event {
	struct it_event_header hdr;
	__u32 cycle;
	__u32 phase;
	__s32 kstack_id;    /* kernel stack in `stackmap` (IT_EV_OFFCPU_USTACK: in
			     * `offcpu_stackmap`), < 0 when none */
	__u32 stack_size;   /* bytes copied into stack[] (may be less than asked) */
	__u64 blocked_ns;   /* IT_EV_OFFCPU_USTACK: the blocked time it weighs; 0 for samples */
	__u64 block_ns;     /* IT_EV_OFFCPU_USTACK: this call's own blocked time.
			     * Short blocks (bpf/sched.bpf.c) send blocked_ns 0 with
			     * the copy of a window's candidate, and block_ns 0 with
			     * stack_size 0 to close the window: blocked_ns weighs
			     * the thread's last candidate */
	__u64 pystack;      /* Python stack in `py_stacks`, 0 when none */
	__u64 reuse;        /* IT_EV_OFFCPU_USTACK with stack_size 0: the `ref` of
			     * the thread's struct it_ustack_check that matched,
			     * i.e. the stack is that earlier one's; 0: none */
	__u64 regs[IT_UREGS]; /* DWARF register numbers; x86-64: 0..15 GPRs, 16 rip */
	__u64 sp;           /* address of stack[0] */
	char comm[IT_COMM_LEN]; /* process (group leader) name */
	char thread_comm[IT_COMM_LEN]; /* the thread's own name (its comm) */
	__u8 stack[];       /* stack_size bytes */
};

/* IT_EV_OFFCPU_SLICE: a short block (under --offcpu-sample-us, so sampled,
 * without a copy of its own) that lasted IT_OFFCPU_SLICE_MIN_NS or more:
 * trace.json's off-CPU slice, its reason from the kernel stack. */
#define IT_OFFCPU_SLICE_MIN_NS 1000000ULL

struct it_offcpu_slice_event {
	struct it_event_header hdr; /* ts_ns: the block's end (its system call's exit) */
	__u32 cycle;
	__u32 phase;
	__s32 kstack_id;    /* in `offcpu_stackmap`, < 0 when none */
	__u32 pad;
	__u64 block_ns;
};

/* Call sites whose kernel stacks a thread keeps (struct it_sched_thread). */
#define IT_KSTACK_SLOTS 4

/* What the user-space unwinding of a thread's last off-CPU stack copies
 * depended on (`ustack_checks`, by tid, pc and slot): the registers it
 * started from and every stack word it read. DWARF unwinding is a function
 * of these alone, so a later block of the thread whose registers and words
 * are all equal has the same stack: BPF then sends the check's ref instead
 * of a copy (bpf/sched.bpf.c, offcpu_record). One call site reached by
 * several paths (SQLite's writes and syncs through one libc wrapper) keeps
 * up to IT_OFFCPU_CHECK_SLOTS stacks. */
#define IT_USTACK_CHECK_WORDS 64
#define IT_USTACK_CHECK_FP 1
#define IT_OFFCPU_CHECK_SLOTS 4
struct it_ustack_check_key {
	__u32 tid;
	__u32 pad;          /* the slot: 0..IT_OFFCPU_CHECK_SLOTS-1 (`cuda_ustack_checks`:
			     * 0..IT_CUDA_CHECK_SLOTS-1) */
	__u64 pc;           /* where the thread blocked: one check per call site
			     * (`cuda_ustack_checks`: the launch call's return address) */
};
#define IT_CUDA_CHECK_SLOTS 4

struct it_ustack_check {
	__u64 ref;          /* user space's name for that unwound stack */
	__u32 tgid;
	__u32 nwords;       /* words in off[] and val[] */
	__u32 flags;        /* IT_USTACK_CHECK_FP: the unwinding used fp */
	__u32 pad;
	__u64 pc, sp, fp, lr; /* lr: arm64's x30, 0 on x86-64 */
	__u32 off[IT_USTACK_CHECK_WORDS]; /* byte offsets from sp */
	__u64 val[IT_USTACK_CHECK_WORDS];
};

/* A followed thread's scheduler state (`sched_threads`, by tid), kept by
 * bpf/sched.bpf.h; user space reads the short-block runs left at the end. */
struct it_sched_thread {
	__u64 ts;          /* last settled instant: start of the current interval */
	__u64 sum_exec;    /* the task's se.sum_exec_runtime at the last kernel sync
			    * (switch, wake-up, tick): what a run whose switch was
			    * not seen counted */
	__u64 run_delay;   /* its sched_info.run_delay then: what such a run
			    * waited for a CPU */
	__u64 minflt, majflt; /* the task's fault counters at the last flush */
	__u64 edge_on;     /* on-CPU ns given at edges since the last kernel sync */
	__u64 edge_ns;     /* an edge's program is running on the thread: its
			    * timestamp (0: none) */
	__u64 pend_on, pend_off; /* settled by a sync that preempted or
			    * interrupted that program, after its timestamp:
			    * for the edge's new cycle and phase */
	__u32 state;       /* enum it_sched_state */
	__u32 tgid;
	__u32 cycle, phase; /* attribution of the current interval */
	__s32 kstack_id, ustack_id; /* IT_SCHED_BLOCKED: where it blocked */
	__u32 pad;
	__u32 dwarf_phase;  /* with dwarf_pend_ns: the phase it blocked in */
	__u64 dwarf_pend_ns; /* blocked ns waiting for the system call's exit, where
			    * the user stack is copied (ustack_id SCHED_USTACK_AT_SYSCALL_EXIT) */
	__s32 dwarf_kstack_id; /* with dwarf_pend_ns: where it first blocked */
	__u32 dwarf_cycle;  /* with dwarf_pend_ns: the cycle it blocked in */
	/* Short blocks (bpf/sched.bpf.c, sched_on_sys_exit): the open
	 * window of a run of them in one cycle and phase, its blocked time */
	__u64 win_ns;
	__u64 win_point;   /* after the first window: the point that elects */
	__u32 short_cycle, short_phase; /* the run's attribution */
	__u32 short_open;  /* a run is open */
	__u32 win_first;   /* the run's first window: elected by reservoir */
	/* Where its last block in a system call was called from (number,
	 * user pc and sp): a tick or switch-out finds it still there. */
	__u64 kc_nr, kc_pc, kc_sp;
	/* Kernel stacks of its blocks in system calls, by call site
	 * (bpf/sched.bpf.c, offcpu_kstack), replaced in turn */
	struct it_kstack_slot {
		__u64 site;        /* hash of the call site; 0: free */
		__u64 ts;          /* when the stack was taken */
		__s32 id;          /* in offcpu_stackmap */
		__u32 pad;
	} ks[IT_KSTACK_SLOTS];
	__u32 ks_next;
	__u64 mem_ts;      /* the last RSS read on its behalf */
	/* IT_SCHED_BLOCKED: another thread of its process is waking it
	 * (sched_waking, where the waker is current): that thread, its phase
	 * and its stacks there (in offcpu_stackmap, < 0 when none). 0: none */
	__u32 waker_tid;
	__u32 waker_phase;
	__s32 waker_kstack_id, waker_ustack_id;
	/* IT_SCHED_RUNQ: the CPU whose run queue it waits on and that CPU's
	 * time running other processes when the wait began
	 * (bpf/sched.bpf.c, cpu_others); wait_marked 0: not known */
	__u64 others_mark;
	__u32 wait_cpu, wait_marked;
	__u64 others_pend; /* at a switch-in: the wait's part behind other processes */
};

/* Flags of struct it_sched_key: which threads the times are of. */
#define IT_SCHED_MAIN_THREAD 1 /* tid == tgid: the wall-time decomposition */
#define IT_SCHED_WOKEN_BY_THREAD 2 /* blocked_kstacks only: a block another thread
				    * of the process ended (waiting for that thread) */

/* Key of `sched_times` and, with kstack_id, `blocked_kstacks`. */
struct it_sched_key {
	__u32 tgid;
	__u32 cycle;
	__u32 phase;
	__u32 flags;      /* IT_SCHED_MAIN_THREAD, IT_SCHED_WOKEN_BY_THREAD */
	__s32 kstack_id;  /* blocked_kstacks only; -1 otherwise */
	/* with IT_SCHED_WOKEN_BY_THREAD: the waker's phase and kernel stack
	 * at the wake-up (an interrupt's entry there: no thread's doing);
	 * 0 and -1 otherwise */
	__u32 waker_phase;
	__s32 waker_kstack_id;
	__u32 pad;
};

/* Value of `sched_times`: nanoseconds and counts of the key's threads. */
struct it_sched_times {
	__u64 oncpu_ns;
	__u64 runq_ns;
	__u64 blocked_ns;
	__u64 runq_waits;   /* number of wake-up (or preemption) to run intervals */
	__u64 nvcsw;        /* voluntary context switches */
	__u64 nivcsw;       /* involuntary (preempted while runnable) */
	__u64 minflt;       /* page faults, from the task counters */
	__u64 majflt;
	/* the part of runq_ns during which the CPU the thread waited on ran
	 * tasks of no traced process (not idle) */
	__u64 runq_others_ns;
};

/* Key of `runq_hist`: per process and phase; value struct it_hist. */
struct it_hist_key {
	__u32 tgid;
	__u32 phase;
};

struct it_hist {
	__u64 slots[IT_HIST_SLOTS]; /* log2 microseconds: slot i holds [2^i, 2^(i+1)) us, slot 0 also 0 */
};

/* Memory: per (process, cycle) and per process (cycle IT_CYCLE_NONE). */
struct it_mem_key {
	__u32 tgid;
	__u32 cycle;
};

struct it_mem_value {
	__u64 rss_bytes;      /* latest resident set size (file + anon + shmem) */
	__u64 peak_bytes;     /* highest seen in the key's span */
	__u64 first_bytes;    /* at the first update in the span */
	__u64 updates;
	__u64 last_ns;
};

struct it_crash_event {
	struct it_event_header hdr;
	__u32 cycle;       /* IT_CYCLE_NONE outside a cycle */
	__u32 phase;
	__s32 signal;      /* fatal signal, 0 for a non-zero exit */
	__s32 exit_code;   /* wait status as the kernel keeps it */
	__u32 sender_pid;  /* IT_EV_FATAL_SIGNAL: who sent it (0: the kernel) */
	__s32 si_code;     /* IT_EV_FATAL_SIGNAL: siginfo code */
	__u64 rss_bytes;   /* IT_EV_OOM / IT_EV_CRASH: RSS at the time */
	char comm[IT_COMM_LEN];
};

struct it_power_event {
	struct it_event_header hdr;
	__s32 id;       /* thermal zone id, or cpu */
	__s32 pad;
	__s64 value;    /* temp (m°C), cdev target state, frequency or min limit (kHz) */
	__s64 value2;   /* previous temp (m°C), max limit (kHz) */
	char name[IT_COMM_LEN]; /* zone or cooling device type */
};

/* Per tracked socket (key: the struct sock address). */
struct it_conn {
	__u32 tgid;
	__u16 family;
	__u16 sport;      /* host order */
	__u16 dport;      /* host order */
	__u16 pad;
	__u32 pad2;
	__u8 saddr[16];   /* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u64 sent, recv;         /* bytes returned by sendmsg/recvmsg */
	__u64 sends, recvs;       /* calls */
	__u64 srtt_us_sum;        /* tcp:tcp_probe smoothed RTT samples */
	__u64 srtt_samples;
	__u32 srtt_us_last, srtt_us_min, srtt_us_max;
	__u32 retransmits;
	__u64 first_ns, last_ns;
};

/* Key of `net_cycles`: bytes per (process, cycle); value struct it_net_total. */
struct it_net_key {
	__u32 tgid;
	__u32 cycle;
};

struct it_net_total {
	__u64 sent, recv, sends, recvs, retransmits;
};

struct it_net_event {
	struct it_event_header hdr;
	__u64 sk;
	__u32 cycle;
	__u32 pad;
	struct it_conn conn;
};

/* Key of `cuda_counts`: per (process, cycle, counter); value struct it_cuda_total. */
struct it_cuda_key {
	__u32 tgid;
	__u32 cycle;
	__u32 counter;
	__u32 pad;
};

struct it_cuda_total {
	__u64 calls;
	__u64 sum;     /* bytes (memcpy); ns waited (sync, entry to return) */
};

/* Records of the llama.cpp preset (values 80..89): what each batch held of
 * each sequence, for the requests of a server (analysis/requests.c). */
enum it_llama_event_type {
	IT_EV_LLAMA_BATCH = 80,   /* a llama_decode's batch, per sequence */
	IT_EV_LLAMA_SEQ_END = 81, /* a sequence's positions removed, or all (memory cleared) */
};

/* Sequence ids 0..IT_LLAMA_SEQS-1 are told apart; tokens of others count
 * in other_seq_tokens. A batch's tokens are read up to IT_LLAMA_BATCH_READ. */
#define IT_LLAMA_SEQS 32
#define IT_LLAMA_BATCH_READ 65536
/* A llama_decode batch of several tokens is a prompt unless each of its
 * tokens asks for logits (a decode step of that many sequences); batches
 * of more tokens than this are taken as prompts without reading. */
#define IT_LLAMA_DECODE_MAX 64
#define IT_LLAMA_BATCH_CHUNK 16

/* One sequence's part of a batch. */
struct it_llama_seq_part {
	__u32 tokens;        /* its tokens in the batch; 0: not in it */
	__u32 outputs;       /* of them, those with logits on */
	__s32 pos_min, pos_max; /* their positions; -1 when the batch has none */
	__u32 last_output;   /* its last token in the batch has logits on */
};

enum {
	IT_LLAMA_BATCH_NO_POS = 1,   /* pos was NULL: llama.cpp placed the tokens after the memory's last */
	IT_LLAMA_BATCH_NO_SEQ = 2,   /* seq_id was NULL: every token is sequence 0 */
	IT_LLAMA_BATCH_STARTS = 4,   /* no positions, and a prompt after a single-token batch */
};

/* IT_EV_LLAMA_BATCH: at llama_decode's entry (hdr.ts_ns is the entry time
 * of the call's phase frame; its IT_EV_PHASE_END gives the end). */
struct it_llama_batch_event {
	struct it_event_header hdr;
	__u64 ctx;               /* the llama_context */
	__u32 n_tokens;
	__u32 tokens_read;       /* tokens whose sequence was read */
	__u32 other_seq_tokens;  /* tokens of a sequence id outside 0..IT_LLAMA_SEQS-1 */
	__u32 multi_seq_tokens;  /* tokens in several sequences: counted in their first */
	__u32 flags;             /* IT_LLAMA_BATCH_* */
	__u32 pad;
	/* the calling thread's run-queue wait (sched_info.run_delay) and major
	 * faults so far: between two of its batches, what its steps waited */
	__u64 run_delay_ns, majflt;
	struct it_llama_seq_part seq[IT_LLAMA_SEQS];
};

/* IT_EV_LLAMA_SEQ_END */
struct it_llama_seq_end_event {
	struct it_event_header hdr;
	__u64 mem;   /* the llama_memory_t, or the context for the older calls */
	__s32 seq;   /* -1: every sequence (memory cleared, or seq_id < 0) */
	__s32 p0, p1; /* removed positions [p0, p1); p0 < 0: from 0, p1 < 0: to the end */
	__u32 pad;
};

/* Records of the cuda concern (values 70..79). */
enum it_cuda_event_type {
	IT_EV_CUDA_LAUNCH = 70, /* an outermost kernel or graph launch: its Python or frame-pointer stack */
	IT_EV_CUDA_LAUNCH_USTACK = 71, /* the same, its native stack as a copy (struct it_ustack_event) */
};

/* IT_EV_CUDA_LAUNCH (--preset cuda): the stack of the thread at the entry
 * of a launch call, for the GPU join to put each kernel under the function
 * that launched it. A thread of a known Python process with Python frames
 * sends its Python stack (one not sent, ring buffer full, counts in
 * IT_STAT_RINGBUF_LOST); any other sends its native user stack: with
 * --call-graph fp its id in `stackmap` here; with dwarf a copy, struct
 * it_ustack_event with IT_EV_CUDA_LAUNCH_USTACK (cycle, phase and
 * kstack_id unset: the join takes them from CUPTI's records). A native
 * stack not sent counts in IT_STAT_CUDA_STACK_LOST. */
struct it_cuda_launch_event {
	struct it_event_header hdr; /* ts_ns: at the launch call's entry, once the stack was walked */
	__u64 pystack;              /* key of `py_stacks`; 0: a native stack */
	__s32 ustack_id;            /* pystack 0: the user stack in `stackmap` */
	__u32 pad;
	/* pystack 0: the launch call's return address. At a function's entry
	 * the frame-pointer walk starts from the caller's frame record, which
	 * holds the caller's own return address: the caller is missing from
	 * the stack map's stack unless the kernel adds it */
	__u64 caller;
};

/* CPython frames (bpf/python.bpf.h, user/symbols/python.c). User space
 * finds the interpreter in a target (the `_PyRuntime` symbol), derives the
 * offsets below for its version and puts them in `py_procs`; BPF walks the
 * sampled thread's frames and keeps each distinct Python stack in
 * `py_stacks`, keyed by a hash that struct it_stack_key carries. */
#define IT_PY_MAX_FRAMES 96   /* deeper stacks keep their leaf-most frames */
#define IT_PY_STR 128         /* bytes of a name or file name sent per code object */

enum it_py_flags {
	IT_PY_TID_PTHREAD = 1,  /* thread state's thread id is pthread_self (3.10), not the native tid */
	IT_PY_CFRAME = 2,       /* tstate->cframe->current_frame (3.11, 3.12) */
	IT_PY_FRAME_OBJECT = 4, /* frames are PyFrameObjects, one eval call each (3.10) */
	IT_PY_IS_ENTRY = 8,     /* frame byte fr_entry is is_entry (3.11) */
	IT_PY_OWNER = 16,       /* frame byte fr_entry is owner; 3 (C stack) marks an eval entry (3.12+) */
	IT_PY_NLOCALS_TUPLE = 32, /* co_nlocals is a tuple (co_localsplusnames): its ob_size counts the slots */
};

#define IT_PY_OWNED_BY_CSTACK 3

/* Value of `py_procs` (key: tgid). Offsets in bytes. */
struct it_py_proc {
	__u64 runtime;          /* address of _PyRuntime in the process */
	__u32 version;          /* PY_VERSION_HEX */
	__u32 flags;            /* enum it_py_flags */
	__u16 rt_interp_head;   /* _PyRuntime.interpreters.head */
	__u16 interp_threads;   /* PyInterpreterState threads list head */
	__u16 ts_next;
	__u16 ts_tid;           /* native_thread_id, or thread_id with IT_PY_TID_PTHREAD */
	__u16 ts_frame;         /* frame (3.10), cframe (3.11/3.12), current_frame (3.13+) */
	__u16 cframe_current;   /* _PyCFrame.current_frame, with IT_PY_CFRAME */
	__u16 fr_code;          /* f_code / f_executable */
	__u16 fr_previous;      /* f_back / previous */
	__u16 fr_entry;         /* is_entry or owner byte */
	__u16 co_filename;
	__u16 co_name;          /* co_qualname (3.11+), co_name (3.10) */
	__u16 co_firstlineno;
	__u16 str_state;        /* PyASCIIObject.state */
	__u16 str_length;
	__u16 str_ascii_data;   /* data of a compact ASCII string */
	__u16 str_compact_data; /* data of a compact non-ASCII string */
	/* call identity of `py:` functions (user/analysis/pyspans.c) */
	__u16 fr_localsplus;    /* f_localsplus / localsplus */
	__u16 co_argcount;      /* int */
	__u16 co_nlocals;       /* int co_nlocals(plus), or the names tuple (IT_PY_NLOCALS_TUPLE) */
	__u16 pad;
	__u64 cell_type;        /* address of PyCell_Type in the process, 0: unknown */
};

/* Flags of one recorded frame. */
#define IT_PY_FRAME_ENTRY 1 /* root-most frame of one eval-loop call (_PyEval_EvalFrameDefault) */

struct it_py_frame {
	__u64 code;   /* code object address */
	__u32 ident;  /* identity of the code object at that address (name and file pointers) */
	__u32 flags;
};

/* Value of `py_stacks`: frames leaf first. */
struct it_py_stack {
	__u32 tgid;
	__u32 depth;
	__u32 truncated; /* deeper than IT_PY_MAX_FRAMES */
	__u32 incomplete; /* a frame, or a watched call's identity, could not be read */
	struct it_py_frame frames[IT_PY_MAX_FRAMES];
};

/* Ring-buffer records of the Python frames (values 60..69). */
enum it_py_event_type {
	IT_EV_PY_CODE = 60, /* a code object seen for the first time: its names */
	IT_EV_PY_OBS = 61,  /* an observation of a thread's Python stack (`py:` specs) */
};

/* Where a thread's Python stack was observed. At a switch-in the stack is the
 * one its switch-out saw: it has not run since. */
enum it_py_obs_kind {
	IT_PY_OBS_SAMPLE = 1, /* on-CPU sample */
	IT_PY_OBS_OUT = 2,    /* switched out (blocked or preempted) */
	IT_PY_OBS_IN = 3,     /* switched back in */
	IT_PY_OBS_PROBE = 4,  /* at the entry of a probe of the locating phase (cfg_py_locate_phase) */
	IT_PY_OBS_TICK = 5,   /* the `py:` edges' own clock (on_py_tick); sent only when it found an edge */
};

#define IT_PY_OBS_WATCH 8 /* watched frames reported per observation */

/* A frame of a watched function (`py_watch`) on an observed stack: its
 * depth from the leaf and an identity of the call (hash of the frame's
 * address, its arguments and its caller's locals, which stay the same
 * through one call and differ between calls that pass or loop over
 * different objects). */
struct it_py_watch_frame {
	__u64 code;
	__u64 call;
	__u32 depth;
	__u32 specs;   /* the `py:` specs the function is (bit i: spec i) */
};

/* `py:` specs as kernel edges (bpf/probes.bpf.c: py_edges_observe). Each
 * observation of a thread's Python stack is compared with its previous one:
 * a spec's call that appeared or went sets the thread's cycle and phase
 * state as a probe's entry or return does, so every per-cycle figure the
 * kernel tags holds for `py:` cycles and phases. Spec i's phase calls carry
 * probe index IT_PY_PROBE_BASE + i (its probe_hists slot). */
#define IT_PY_EDGE_SPECS 16
#define IT_PY_PROBE_BASE (IT_MAX_PROBES - IT_PY_EDGE_SPECS)

/* Value of `probe_hists` (key: probe index): log2 histogram of call
 * latency in µs, and hits. */
struct it_probe_hist {
	__u64 slots[IT_HIST_SLOTS];
	__u64 hits;
};

/* Value of the per-CPU `py_edge_res` (key 0): how finely the edges were
 * placed. An edge lies between two observations: half their interval is
 * its resolution. */
struct it_py_edge_res {
	__u64 observations;  /* observations of threads with `py:` specs */
	__u64 edges;         /* observations that moved an edge */
	__u64 half_ns_sum;   /* half the interval around each */
	__u64 half_ns_max;
};

/* Value of `py_specs` (key: spec index). */
struct it_py_spec {
	__u32 role;  /* enum it_probe_role; 0: not a kernel edge (py:@callers) */
	__u32 id;    /* phase or count id */
};

/* Key of `py_watch_names`: a spec's qualname hash and its module's (the
 * file's basename without `.py`; 0: any file). Value: the specs' bits. */
struct it_py_watch_name {
	__u64 name;
	__u64 module;
};

/* IT_EV_PY_OBS */
struct it_py_obs_event {
	struct it_event_header hdr;
	__u64 pystack;   /* key of `py_stacks`, 0: no Python frames */
	__u32 kind;      /* enum it_py_obs_kind */
	__u32 nwatch;
	__u32 incomplete; /* a frame or a watched call's identity was not read (it_py_stack's own flag) */
	__u32 pad;
	struct it_py_watch_frame watch[IT_PY_OBS_WATCH];
};

/* IT_EV_PY_CODE. Strings are raw CPython string data: kind 1 (ASCII or
 * Latin-1), 2 (UCS-2) or 4 (UCS-4) bytes per character; the file name is
 * its last IT_PY_STR bytes (enough for the basename). */
struct it_py_code_event {
	struct it_event_header hdr;
	__u64 code;
	__u32 ident;
	__u32 firstlineno;
	__u32 name_kind, name_bytes;
	__u32 file_kind, file_bytes;
	char name[IT_PY_STR];
	char file[IT_PY_STR];
};

#endif /* INFERTRACE_H */
