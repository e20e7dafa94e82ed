// SPDX-License-Identifier: BSD-2-Clause
/* CPython detection, offsets and frame names; see python.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "python.h"
#include "syms.h"
#include "vec.h"

#define PY_VER(maj, min) (((uint32_t)(maj) << 24) | ((uint32_t)(min) << 16))
#define PY_MINOR(v) ((v) & 0xffff0000u)

/* `py:` phases by function (python__set_phase_fn) */
static int (*phase_fn)(void *ctx, const char *qualname, const char *file);
static void *phase_ctx;

/* ---- offsets ---- */

/* From the 3.10.13, 3.11.7 and 3.12.1 headers (Include/cpython/pystate.h,
 * Include/internal/pycore_{runtime,interp,frame}.h, cpython/code.h,
 * cpython/unicodeobject.h), checked with gdb's ptype /o on those builds.
 * These structures keep their layout within a minor version. */
int python__table_offsets(uint32_t version, struct it_py_proc *o)
{
	memset(o, 0, sizeof(*o));
	o->version = version;
	o->str_state = 32;
	o->str_length = 16;
	o->ts_next = 8;
	switch (PY_MINOR(version)) {
	case PY_VER(3, 10):
		o->flags = IT_PY_TID_PTHREAD | IT_PY_FRAME_OBJECT;
		o->rt_interp_head = 32;
		o->interp_threads = 8; /* tstate_head */
		o->ts_tid = 176;       /* thread_id: pthread_self() */
		o->ts_frame = 24;      /* frame */
		o->fr_code = 32;       /* f_code */
		o->fr_previous = 24;   /* f_back */
		o->co_filename = 104;
		o->co_name = 112;      /* no co_qualname before 3.11 */
		o->co_firstlineno = 40;
		o->str_ascii_data = 48;
		o->str_compact_data = 72;
		o->fr_localsplus = 352; /* f_localsplus */
		o->co_argcount = 16;
		o->co_nlocals = 28;
		return 0;
	case PY_VER(3, 11):
		o->flags = IT_PY_CFRAME | IT_PY_IS_ENTRY;
		o->rt_interp_head = 40;
		o->interp_threads = 16;
		o->ts_tid = 160;       /* native_thread_id */
		o->ts_frame = 56;      /* cframe */
		o->cframe_current = 8;
		o->fr_code = 32;
		o->fr_previous = 48;
		o->fr_entry = 68;      /* is_entry */
		o->co_filename = 112;
		o->co_name = 128;      /* co_qualname */
		o->co_firstlineno = 72;
		o->str_ascii_data = 48;
		o->str_compact_data = 72;
		o->fr_localsplus = 72;
		o->co_argcount = 56;
		o->co_nlocals = 76;    /* co_nlocalsplus */
		return 0;
	case PY_VER(3, 12):
		o->flags = IT_PY_CFRAME | IT_PY_OWNER;
		o->rt_interp_head = 40;
		o->interp_threads = 72;
		o->ts_tid = 144;
		o->ts_frame = 56;
		o->cframe_current = 0;
		o->fr_code = 0;
		o->fr_previous = 8;
		o->fr_entry = 70;      /* owner */
		o->co_filename = 112;
		o->co_name = 128;
		o->co_firstlineno = 68;
		o->str_ascii_data = 40;
		o->str_compact_data = 56;
		o->fr_localsplus = 72;
		o->co_argcount = 52;
		o->co_nlocals = 72;    /* co_nlocalsplus */
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* Offsets of fields inside _Py_DebugOffsets as 3.13 lays it out
 * (Include/internal/pycore_runtime.h). */
enum {
	DBG_VERSION = 8,
	DBG_RT_INTERP_HEAD = 40,
	DBG_INTERP_THREADS = 72,
	DBG_TS_NEXT = 168,
	DBG_TS_CURRENT_FRAME = 184,
	DBG_TS_NATIVE_TID = 200,
	DBG_FR_PREVIOUS = 232,
	DBG_FR_EXECUTABLE = 240,
	DBG_FR_LOCALSPLUS = 256,
	DBG_FR_OWNER = 264,
	DBG_CO_FILENAME = 280,
	DBG_CO_QUALNAME = 296,
	DBG_CO_FIRSTLINENO = 312,
	DBG_CO_ARGCOUNT = 320,
	DBG_CO_LOCALSPLUSNAMES = 328,
	DBG_STR_STATE = 544,
	DBG_STR_LENGTH = 552,
	DBG_STR_ASCII_SIZE = 560,
	DBG_SIZE_313 = 584,
};

static uint64_t dbg_u64(const void *dbg, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)dbg + off, sizeof(v));
	return v;
}

int python__debug_offsets(const void *dbg, size_t len, struct it_py_proc *o)
{
	static const size_t fields[] = {
		DBG_RT_INTERP_HEAD, DBG_INTERP_THREADS, DBG_TS_NEXT, DBG_TS_CURRENT_FRAME, DBG_TS_NATIVE_TID,
		DBG_FR_PREVIOUS, DBG_FR_EXECUTABLE, DBG_FR_OWNER, DBG_CO_FILENAME, DBG_CO_QUALNAME,
		DBG_CO_FIRSTLINENO, DBG_STR_STATE, DBG_STR_LENGTH, DBG_STR_ASCII_SIZE,
		DBG_FR_LOCALSPLUS, DBG_CO_ARGCOUNT, DBG_CO_LOCALSPLUSNAMES,
	};
	uint32_t version;

	memset(o, 0, sizeof(*o));
	if (len < DBG_SIZE_313 || memcmp(dbg, "xdebugpy", 8))
		return -EINVAL;
	version = (uint32_t)dbg_u64(dbg, DBG_VERSION);
	/* the layout of _Py_DebugOffsets itself is 3.13's: a later version
	 * that changed it would give offsets that are not what they seem */
	if (PY_MINOR(version) != PY_VER(3, 13))
		return -ENOTSUP;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (dbg_u64(dbg, fields[i]) > UINT16_MAX - 16)
			return -ENOTSUP;
	o->version = version;
	o->flags = IT_PY_OWNER | IT_PY_NLOCALS_TUPLE;
	o->rt_interp_head = dbg_u64(dbg, DBG_RT_INTERP_HEAD);
	o->interp_threads = dbg_u64(dbg, DBG_INTERP_THREADS);
	o->ts_next = dbg_u64(dbg, DBG_TS_NEXT);
	o->ts_frame = dbg_u64(dbg, DBG_TS_CURRENT_FRAME);
	o->ts_tid = dbg_u64(dbg, DBG_TS_NATIVE_TID);
	o->fr_previous = dbg_u64(dbg, DBG_FR_PREVIOUS);
	o->fr_code = dbg_u64(dbg, DBG_FR_EXECUTABLE);
	o->fr_entry = dbg_u64(dbg, DBG_FR_OWNER);
	o->co_filename = dbg_u64(dbg, DBG_CO_FILENAME);
	o->co_name = dbg_u64(dbg, DBG_CO_QUALNAME);
	o->co_firstlineno = dbg_u64(dbg, DBG_CO_FIRSTLINENO);
	o->str_state = dbg_u64(dbg, DBG_STR_STATE);
	o->str_length = dbg_u64(dbg, DBG_STR_LENGTH);
	o->str_ascii_data = dbg_u64(dbg, DBG_STR_ASCII_SIZE);
	o->fr_localsplus = dbg_u64(dbg, DBG_FR_LOCALSPLUS);
	o->co_argcount = dbg_u64(dbg, DBG_CO_ARGCOUNT);
	o->co_nlocals = dbg_u64(dbg, DBG_CO_LOCALSPLUSNAMES);
	/* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8 */
	o->str_compact_data = o->str_ascii_data + 16;
	return 0;
}

/* ---- detection ---- */

/* Address (ELF vaddr) of a data symbol. 0 or -ENOENT / -errno. */
static int elf_data_symbol(const char *path, const char *symbol, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd, err = -ENOENT;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(fd);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(e, scn)) && err == -ENOENT) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, symbol)) {
				*vaddr = sym.st_value;
				err = 0;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

/* Reads len bytes at ELF vaddr from the file's own copy (the initial
 * contents: _PyRuntime's static initializer, Py_Version), so that detection
 * does not wait for ld.so to map the data segment. 0 or -errno. */
static int elf_read_vaddr(const char *path, uint64_t vaddr, void *buf, size_t len)
{
	size_t nph;
	Elf *e;
	int fd, err = -ENOENT;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
			    vaddr + len > ph.p_vaddr + ph.p_filesz)
				continue;
			err = pread(fd, buf, len, ph.p_offset + (vaddr - ph.p_vaddr)) == (ssize_t)len ? 0 : -EIO;
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

/* Version from a file name: python3.10, libpython3.10.so.1.0. */
static uint32_t version_from_name(const char *path)
{
	const char *b = strrchr(path, '/'), *p;
	unsigned maj, min;

	b = b ? b + 1 : path;
	p = strstr(b, "python");
	if (p && sscanf(p, "python%u.%u", &maj, &min) == 2 && maj < 256 && min < 256)
		return PY_VER(maj, min);
	return 0;
}

/* Files already known to hold no _PyRuntime: not opened again at each mmap. */
static char **no_runtime;
static size_t no_runtime_n, no_runtime_cap;

struct detect_ctx {
	pid_t pid;
	char exe[PATH_MAX];
	const char *path;   /* first candidate holding _PyRuntime */
	char path_buf[PATH_MAX];
	uint64_t runtime;
	uint64_t bias;
};

static bool candidate(const struct detect_ctx *c, const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (strcmp(path, c->exe) && strncmp(b, "python", 6) && strncmp(b, "libpython", 9))
		return false;
	for (size_t i = 0; i < no_runtime_n; i++)
		if (!strcmp(no_runtime[i], path))
			return false;
	return true;
}

static void detect_one(void *arg, const struct syms_mapping *m)
{
	struct detect_ctx *c = arg;
	uint64_t vaddr;

	if (c->path || !m->elf || !candidate(c, m->path))
		return;
	if (elf_data_symbol(m->path, "_PyRuntime", &vaddr)) {
		char *p = strdup(m->path);

		if (p && !VEC_RESERVE(no_runtime, no_runtime_cap, no_runtime_n, 16))
			no_runtime[no_runtime_n++] = p;
		else
			free(p);
		return;
	}
	snprintf(c->path_buf, sizeof(c->path_buf), "%s", m->path);
	c->path = c->path_buf;
	c->runtime = vaddr + m->bias;
	c->bias = m->bias;
}

enum py_detect python__detect(pid_t pid, struct syms_cache *syms, struct it_py_proc *out, char *what, size_t len)
{
	struct detect_ctx c = { .pid = pid };
	char link[64], dbg[DBG_SIZE_313];
	uint32_t version = 0, v32 = 0;
	uint64_t vaddr = 0;
	ssize_t n;
	int err;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, c.exe, sizeof(c.exe) - 1);
	c.exe[n > 0 ? n : 0] = 0;
	if (syms_cache__mappings(syms, pid, detect_one, &c) <= 0 || !c.path)
		return PY_DETECT_NONE;
	if (elf_read_vaddr(c.path, c.runtime - c.bias, dbg, sizeof(dbg)) == 0 && !memcmp(dbg, "xdebugpy", 8)) {
		version = (uint32_t)dbg_u64(dbg, DBG_VERSION);
		err = python__debug_offsets(dbg, sizeof(dbg), out);
	} else {
		if (elf_data_symbol(c.path, "Py_Version", &vaddr) == 0 &&
		    elf_read_vaddr(c.path, vaddr, &v32, sizeof(v32)) == 0)
			version = v32;
		else
			version = version_from_name(c.path);
		err = version ? python__table_offsets(version, out) : -ENOTSUP;
	}
	if (version)
		snprintf(what, len, "%u.%u (%s)", version >> 24, (version >> 16) & 0xff, c.path);
	else
		snprintf(what, len, "of unknown version (%s)", c.path);
	if (err)
		return PY_DETECT_UNSUPPORTED;
	out->runtime = c.runtime;
	/* an argument captured by a closure becomes a cell at the function's
	 * first instruction (MAKE_CELL, 3.11+): its call identity reads
	 * through the cell */
	out->cell_type = elf_data_symbol(c.path, "PyCell_Type", &vaddr) == 0 ? vaddr + c.bias : 0;
	return PY_DETECT_OK;
}

/* ---- code object names ---- */

struct code_name {
	pid_t tgid;
	uint32_t ident;
	uint64_t code;
	char *name; /* "qualname (file.py)" */
};

static struct code_name *names; /* open addressing, cap a power of two */
static size_t names_n, names_cap;
static int stacks_fd = -1;

/* py_stacks entries read so far. A key's value never changes: BPF inserts
 * it once (BPF_NOEXIST, under a hash of the frames) and nothing deletes
 * it. Observations and folded stacks ask for the same few stacks again and
 * again, and each map lookup copies a whole struct it_py_stack (1.5 KiB)
 * through a system call: read once, each is kept here, frames up to its
 * depth. At most PY_STACK_CACHE_MAX; beyond, stacks are read each time. */
#define PY_STACK_CACHE_MAX 4096
struct stack_ent {
	__u64 key; /* 0: free */
	struct it_py_stack *st; /* header and depth frames */
};
static struct stack_ent *stack_tab; /* open addressing, cap a power of two */
static size_t stack_n, stack_cap;
static uint64_t stack_reads; /* map lookups made (python__stack_reads) */

static uint64_t code_hash(pid_t tgid, uint64_t code, uint32_t ident)
{
	uint64_t h = (code ^ ((uint64_t)tgid << 40) ^ ident) * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 31);
}

/* CPython string data (kind bytes per character) to UTF-8. */
static void decode(const char *data, uint32_t kind, uint32_t bytes, char *out, size_t len)
{
	size_t o = 0;

	if (bytes > IT_PY_STR)
		bytes = IT_PY_STR;
	for (uint32_t i = 0; kind && i + kind <= bytes && o + 5 < len; i += kind) {
		uint32_t ch = 0;

		for (uint32_t b = 0; b < kind; b++)
			ch |= (uint32_t)(unsigned char)data[i + b] << (8 * b);
		if (ch < 0x80) {
			out[o++] = ch;
		} else if (ch < 0x800) {
			out[o++] = 0xc0 | (ch >> 6);
			out[o++] = 0x80 | (ch & 0x3f);
		} else if (ch < 0x10000) {
			out[o++] = 0xe0 | (ch >> 12);
			out[o++] = 0x80 | ((ch >> 6) & 0x3f);
			out[o++] = 0x80 | (ch & 0x3f);
		} else {
			out[o++] = 0xf0 | ((ch >> 18) & 0x07);
			out[o++] = 0x80 | ((ch >> 12) & 0x3f);
			out[o++] = 0x80 | ((ch >> 6) & 0x3f);
			out[o++] = 0x80 | (ch & 0x3f);
		}
	}
	out[o] = 0;
}

static int names_grow(void)
{
	size_t cap = names_cap ? names_cap * 2 : 1024;
	struct code_name *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < names_cap; i++) {
		size_t j;

		if (!names[i].name)
			continue;
		for (j = code_hash(names[i].tgid, names[i].code, names[i].ident) & (cap - 1); t[j].name;
		     j = (j + 1) & (cap - 1))
			;
		t[j] = names[i];
	}
	free(names);
	names = t;
	names_cap = cap;
	return 0;
}

static struct code_name *name_slot(pid_t tgid, uint64_t code, uint32_t ident)
{
	size_t j;

	if (!names_cap)
		return NULL;
	for (j = code_hash(tgid, code, ident) & (names_cap - 1); names[j].name; j = (j + 1) & (names_cap - 1))
		if (names[j].tgid == tgid && names[j].code == code && names[j].ident == ident)
			return &names[j];
	return &names[j];
}

int python__add_code(const struct it_py_code_event *e)
{
	char qual[IT_PY_STR * 4 + 1], file[IT_PY_STR * 4 + 1], buf[sizeof(qual) + sizeof(file) + 4];
	const char *base;
	struct code_name *slot;

	if ((names_n + 1) * 2 > names_cap && names_grow())
		return -ENOMEM;
	decode(e->name, e->name_kind, e->name_bytes, qual, sizeof(qual));
	decode(e->file, e->file_kind, e->file_bytes, file, sizeof(file));
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	snprintf(buf, sizeof(buf), "%s (%s)", qual[0] ? qual : "[unknown_python]", base[0] ? base : "?");
	slot = name_slot(e->hdr.tgid, e->code, e->ident);
	if (slot->name) {
		free(slot->name);
		names_n--;
	}
	slot->name = strdup(buf);
	if (!slot->name)
		return -ENOMEM;
	slot->tgid = e->hdr.tgid;
	slot->code = e->code;
	slot->ident = e->ident;
	names_n++;
	return 0;
}

void python__frame_name(pid_t tgid, const struct it_py_frame *f, char *buf, size_t len)
{
	struct code_name *slot = name_slot(tgid, f->code, f->ident);

	snprintf(buf, len, "%s", slot && slot->name ? slot->name : "[unknown_python] (?)");
}

void python__each_name(void (*fn)(const char *name, void *ctx), void *ctx)
{
	for (size_t i = 0; i < names_cap; i++)
		if (names[i].name)
			fn(names[i].name, ctx);
}

static void stack_cache_free(void)
{
	for (size_t i = 0; i < stack_cap; i++)
		free(stack_tab[i].st);
	free(stack_tab);
	stack_tab = NULL;
	stack_n = stack_cap = 0;
}

void python__set_stacks_fd(int fd)
{
	if (fd != stacks_fd)
		stack_cache_free(); /* another map: its keys name other stacks */
	stacks_fd = fd;
}

static struct stack_ent *stack_slot(struct stack_ent *tab, size_t cap, __u64 key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);

	while (tab[i].key && tab[i].key != key)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* Keeps a stack just read (depth frames). Nothing when full or out of
 * memory: it is read from the map again next time. */
static void stack_cache_put(__u64 key, const struct it_py_stack *st)
{
	size_t bytes = offsetof(struct it_py_stack, frames) + st->depth * sizeof(st->frames[0]);
	struct stack_ent *e;

	if (stack_n >= PY_STACK_CACHE_MAX)
		return;
	if ((stack_n + 1) * 2 > stack_cap) {
		size_t cap = stack_cap ? stack_cap * 2 : 256;
		struct stack_ent *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return;
		for (size_t i = 0; i < stack_cap; i++)
			if (stack_tab[i].key)
				*stack_slot(tab, cap, stack_tab[i].key) = stack_tab[i];
		free(stack_tab);
		stack_tab = tab;
		stack_cap = cap;
	}
	e = stack_slot(stack_tab, stack_cap, key);
	if (e->key)
		return;
	e->st = malloc(bytes);
	if (!e->st)
		return;
	memcpy(e->st, st, bytes);
	e->key = key;
	stack_n++;
}

int python__stack(__u64 pystack, struct it_py_stack *out)
{
	const struct stack_ent *e;

	if (!pystack || stacks_fd < 0)
		return -ENOENT;
	e = stack_cap ? stack_slot(stack_tab, stack_cap, pystack) : NULL;
	if (e && e->key) {
		size_t bytes = offsetof(struct it_py_stack, frames) + e->st->depth * sizeof(e->st->frames[0]);

		memcpy(out, e->st, bytes);
		memset((char *)out + bytes, 0, sizeof(*out) - bytes);
		return 0;
	}
	stack_reads++;
	if (bpf_map_lookup_elem(stacks_fd, &pystack, out))
		return -ENOENT;
	if (out->depth > IT_PY_MAX_FRAMES)
		out->depth = IT_PY_MAX_FRAMES;
	if (!out->depth)
		return -ENOENT;
	memset(&out->frames[out->depth], 0, (IT_PY_MAX_FRAMES - out->depth) * sizeof(out->frames[0]));
	stack_cache_put(pystack, out);
	return 0;
}

uint64_t python__stack_reads(void)
{
	return stack_reads;
}

int python__segments(const struct it_py_stack *s, int *starts, int *ends, int max)
{
	int n = 0, start = 0, depth = s->depth > IT_PY_MAX_FRAMES ? IT_PY_MAX_FRAMES : (int)s->depth;

	for (int i = 0; i < depth && n < max; i++) {
		if (!(s->frames[i].flags & IT_PY_FRAME_ENTRY) && i != depth - 1)
			continue;
		starts[n] = start;
		ends[n++] = i + 1;
		start = i + 1;
	}
	return n;
}

void python__reset(void)
{
	phase_fn = NULL;
	phase_ctx = NULL;
	for (size_t i = 0; i < names_cap; i++)
		free(names[i].name);
	free(names);
	names = NULL;
	names_n = names_cap = 0;
	for (size_t i = 0; i < no_runtime_n; i++)
		free(no_runtime[i]);
	free(no_runtime);
	no_runtime = NULL;
	no_runtime_n = no_runtime_cap = 0;
	stacks_fd = -1;
	stack_cache_free();
	stack_reads = 0;
}

void python__set_phase_fn(int (*fn)(void *ctx, const char *qualname, const char *file), void *ctx)
{
	phase_fn = fn;
	phase_ctx = ctx;
}

int python__stack_phase(__u64 pystack, pid_t tgid)
{
	static struct it_py_stack st;
	char name[512];

	if (!phase_fn || !pystack || python__stack(pystack, &st))
		return 0;
	for (__u32 i = 0; i < st.depth && i < IT_PY_MAX_FRAMES; i++) {
		char *open;
		size_t n;
		int ph;

		python__frame_name(tgid, &st.frames[i], name, sizeof(name));
		/* "qualname (file)" */
		open = strrchr(name, '(');
		n = strlen(name);
		if (!open || open == name || open[-1] != ' ' || name[n - 1] != ')')
			continue;
		open[-1] = 0;
		name[n - 1] = 0;
		ph = phase_fn(phase_ctx, name, open + 1);
		if (ph > 0)
			return ph;
	}
	return 0;
}
