// SPDX-License-Identifier: BSD-2-Clause
/* User-space symbolization on elfutils libdwfl; see syms.h. Longer than
 * 600 lines: the dso and proc layers below share private structures that a
 * split would have to expose.
 *
 * Layout: the cache owns every dso (one per ELF file, keyed by the device and
 * inode that /proc/PID/maps reports) and every proc (one per pid: a sorted
 * array of executable file mappings pointing at dsos). Each dso has its own
 * Dwfl with the file reported at its link-time addresses (bias 0), so a
 * process address becomes an ELF virtual address through the mapping and the
 * PT_LOAD program headers, independent of where the process loaded it. Each
 * dso also caches the result of every address looked up, because the same
 * frames repeat across thousands of stacks.
 *
 * Not thread-safe: one aggregator thread owns a cache. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <linux/fs.h>
#include <linux/types.h>

#include "perfmap.h"
#include "symcache.h"
#include "syms.h"
#include "text.h"
#include "safe_open.h"
#include "procfs.h"
#include "vec.h"

/* libstdc++'s demangler; declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct seg {
	uint64_t offset;  /* p_offset */
	uint64_t vaddr;   /* p_vaddr */
	uint64_t filesz;  /* p_filesz */
};

/* One function symbol of a dso's index, in module addresses. */
struct dsym {
	uint64_t addr;
	uint64_t size;     /* 0: sizeless, covers up to the next symbol */
	const char *name;  /* libdwfl's string; the demangled copy once done */
	uint8_t bind;      /* STB_*, to pick among aliases */
	bool demangled;    /* name was looked at (and replaced if mangled) */
	bool owned;        /* name was malloc'd by the demangler */
};

/* One cached lookup: ELF vaddr -> symbol. */
struct addr_ent {
	uint64_t vaddr;
	const struct dsym *sym;  /* NULL: no symbol covers vaddr */
	uint64_t sym_off;
	bool used;
	bool root; /* syms_cache__mark_root */
};

struct dso {
	char *path;        /* as /proc/PID/maps names it, " (deleted)" removed */
	const char *name;  /* basename of path */
	dev_t dev;
	ino_t ino;
	Dwfl *dwfl;        /* NULL when the file could not be opened as ELF */
	Dwfl_Module *mod;
	GElf_Addr bias;    /* module address - ELF vaddr; 0 as reported */
	char *image;       /* [vdso]: a copy of the tracer's own, for libdwfl */
	char *opened;      /* the path that opened as a regular file (the unwinder reopens it) */
	struct seg *segs;
	size_t nr_segs;
	struct dsym *syms;  /* sorted by addr, built on first lookup */
	size_t nr_syms;
	bool syms_loaded;
	struct addr_ent *ents;
	size_t nr_ents, cap_ents;  /* cap is 0 or a power of two */
	struct syms_cache *cache;  /* its owner: stats, the symbol cache */
	/* opened at first need (dso__ready), from the mapping it was first
	 * seen in */
	bool waits;  /* opened late: only the very file (inode) will do */
	bool tried;  /* opened, or tried to */
	pid_t pid;
	uint64_t start, end;
	struct symcache_blob *symblob; /* names of syms read from the symbol cache */
};

struct map {
	uint64_t start, end, offset;
	struct dso *dso;
};

struct proc {
	pid_t pid;
	struct map *maps;  /* sorted by start, non-overlapping */
	size_t nr_maps;
	/* CLOCK_MONOTONIC from when its mappings hold: the mmap or exec that
	 * asked for the capture, else when /proc/PID/maps was read */
	uint64_t read_ns;
	uint64_t gen;      /* syms_cache__generation */
	uint64_t taken_ns; /* CLOCK_MONOTONIC when the read began (0: inherited) */
	/* The capture this one replaced when that had mappings this one lacks
	 * (an exec, a dlclose): stacks taken before still hold its addresses,
	 * which are looked up there when no current mapping covers them. */
	struct proc *older;
};

#define PROC_GENERATIONS 4 /* captures kept per pid, the current one included */

struct syms_cache {
	struct proc **procs;  /* sorted by pid */
	size_t nr_procs, cap_procs;
	struct dso **dsos;    /* open-addressing table keyed by (dev, ino) */
	size_t nr_dsos, cap_dsos;
	struct proc *last;    /* consecutive frames mostly share a pid */
	struct perfmaps *jit; /* NULL when JIT maps are off */
	struct ftok *ftoks;   /* file tokens (syms_cache__file_tokenize), by id */
	size_t nr_ftoks, cap_ftoks;
	uint32_t *ftok_slots; /* open-addressing index of ftoks: id + 1, 0 empty */
	size_t cap_ftok_slots;
	struct syms_stats stats;
	struct symcache *symcache; /* opened on the first symbol table needed */
	bool symcache_tried;
	const char *symcache_why;  /* why it is not used (NULL: turned off, or used) */
	uint64_t gens;        /* captures made, for proc->gen */
	bool no_maps_query;   /* the kernel has no PROCMAP_QUERY: maps are read as text */
};

/* A frame address with the mapping that held it when it was sampled. */
struct ftok {
	struct map map;
	uint64_t addr;
};

/* NULL: libdwfl's default ":.debug:/usr/lib/debug", i.e. next to the file,
 * its .debug/ directory and /usr/lib/debug (build-id and debuglink). */
static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t dso_key_hash(dev_t dev, ino_t ino)
{
	return hash64((uint64_t)ino * 31 + (uint64_t)dev);
}

/* ---- dso ---- */

static void dso__free(struct dso *dso)
{
	size_t i;

	if (!dso)
		return;
	for (i = 0; i < dso->nr_syms; i++)
		if (dso->syms[i].owned)
			free((char *)dso->syms[i].name);
	free(dso->syms);
	symcache__blob_free(dso->symblob);
	free(dso->ents);
	if (dso->dwfl)
		dwfl_end(dso->dwfl);
	free(dso->image);
	free(dso->segs);
	free(dso->path);
	free(dso->opened);
	free(dso);
}

/* Opens the file a mapping of pid refers to. The path in maps may be deleted,
 * replaced since (a rebuild), or only visible in pid's mount namespace, so
 * candidates are tried in order and the first whose inode matches wins; if
 * none matches (overlayfs may report other inode numbers) the first that
 * opens does. Opened now, while pid lives, so that its stacks still
 * symbolize after it exits. */
static int dso__open_fd(struct dso *dso, pid_t pid, uint64_t start, uint64_t end, bool strict)
{
	char cand[3][PATH_MAX];
	int fallback = -1, fallback_i = -1, fd, i;
	struct stat st;

	snprintf(cand[0], sizeof(cand[0]), "%s", dso->path);
	snprintf(cand[1], sizeof(cand[1]), "/proc/%d/root%s", (int)pid, dso->path);
	snprintf(cand[2], sizeof(cand[2]), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pid, start, end);
	for (i = 0; i < (int)(sizeof(cand) / sizeof(cand[0])); i++) {
		/* a FIFO or device swapped in for the file must not hang us */
		fd = safe_open_regular(cand[i]);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_ino == dso->ino) {
			if (fallback >= 0)
				close(fallback);
			dso->opened = strdup(cand[i]);
			return fd;
		}
		if (fallback < 0) {
			fallback = fd;
			fallback_i = i;
		} else {
			close(fd);
		}
	}
	/* opened late (dso__ready): a file with another inode is not the one
	 * that was mapped */
	if (fallback >= 0 && strict) {
		close(fallback);
		fallback = -1;
	}
	if (fallback >= 0)
		dso->opened = strdup(cand[fallback_i]);
	return fallback;
}

static int dso__load_segs(struct dso *dso)
{
	GElf_Phdr phdr;
	size_t i, n;
	Elf *elf;

	elf = dwfl_module_getelf(dso->mod, &dso->bias);
	if (!elf || elf_getphdrnum(elf, &n) < 0)
		return -EINVAL;
	dso->segs = calloc(n ? n : 1, sizeof(*dso->segs));
	if (!dso->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		dso->segs[dso->nr_segs++] = (struct seg){
			.offset = phdr.p_offset,
			.vaddr = phdr.p_vaddr,
			.filesz = phdr.p_filesz,
		};
	}
	return 0;
}

static void dso__close(struct dso *dso)
{
	if (dso->dwfl)
		dwfl_end(dso->dwfl);
	dso->dwfl = NULL;
	dso->mod = NULL;
	dso->nr_segs = 0;
}

/* Reports the file in its own Dwfl. Failure is not fatal: the dso then
 * symbolizes as obj+file offset. */
static void dso__open(struct dso *dso, pid_t pid, uint64_t start, uint64_t end, bool strict)
{
	int fd;

	fd = dso__open_fd(dso, pid, start, end, strict);
	if (fd < 0)
		return;
	dso->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dso->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(dso->dwfl);
	/* base 0 + add_p_vaddr: module addresses are the ELF's own vaddrs for
	 * ET_EXEC and ET_DYN alike. On success libdwfl owns fd. */
	dso->mod = dwfl_report_elf(dso->dwfl, dso->name, dso->path, fd, 0, true);
	dwfl_report_end(dso->dwfl, NULL, NULL);
	if (!dso->mod)
		close(fd);
	if (!dso->mod || dso__load_segs(dso))
		dso__close(dso);
}

/* The vDSO is no file, but the kernel maps one image into every process of
 * an ABI, so the tracer's own copy names the target's frames
 * (clock_gettime, gettimeofday) when the sizes agree: a 32-bit target's
 * differs and stays "[vdso]+0x...". */
static void dso__open_vdso(struct dso *dso, uint64_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	uint64_t own, page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	/* the image ends with its section headers, inside the mapping */
	own = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (own > size || size > (own + page - 1) / page * page)
		return;
	dso->image = malloc(own);
	if (!dso->image)
		return;
	memcpy(dso->image, eh, own);
	dso->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dso->dwfl)
		return;
	dwfl_report_begin(dso->dwfl);
	/* offline layout may add a bias; dso->bias absorbs it */
	dso->mod = dwfl_report_offline_memory(dso->dwfl, dso->name, dso->name,
					      dso->image, own);
	dwfl_report_end(dso->dwfl, NULL, NULL);
	if (!dso->mod || dso__load_segs(dso))
		dso__close(dso);
}

/* Process address -> ELF vaddr: the file offset it maps, then the PT_LOAD
 * segment holding that offset. Without segments, the file offset. */
static uint64_t dso__vaddr(const struct dso *dso, const struct map *map, uint64_t addr)
{
	uint64_t off = addr - map->start + map->offset;
	size_t i;

	for (i = 0; i < dso->nr_segs; i++) {
		const struct seg *s = &dso->segs[i];

		if (off >= s->offset && off < s->offset + s->filesz)
			return off - s->offset + s->vaddr;
	}
	return off;
}

static struct addr_ent *dso__ent_slot(struct addr_ent *ents, size_t cap, uint64_t vaddr)
{
	size_t i = hash64(vaddr) & (cap - 1);

	while (ents[i].used && ents[i].vaddr != vaddr)
		i = (i + 1) & (cap - 1);
	return &ents[i];
}

static int dso__ents_grow(struct dso *dso)
{
	size_t cap = dso->cap_ents ? dso->cap_ents * 2 : 256, i;
	struct addr_ent *ents;

	ents = calloc(cap, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (i = 0; i < dso->cap_ents; i++)
		if (dso->ents[i].used)
			*dso__ent_slot(ents, cap, dso->ents[i].vaddr) = dso->ents[i];
	free(dso->ents);
	dso->ents = ents;
	dso->cap_ents = cap;
	return 0;
}

static int dsym_cmp(const void *a, const void *b)
{
	const struct dsym *x = a, *y = b;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	bool vx = strchr(x->name, '@'), vy = strchr(y->name, '@');

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases: the one to show first: global or weak over local, then
	 * unversioned (free over cfree@GLIBC_2.2.5, a compat alias libdwfl
	 * names with its version), then the fewest leading underscores
	 * (getpid over __getpid, malloc over __libc_malloc) */
	if ((x->bind == STB_LOCAL) != (y->bind == STB_LOCAL))
		return x->bind == STB_LOCAL ? 1 : -1;
	if (vx != vy)
		return vx ? 1 : -1;
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Indexes the module's function symbols (libdwfl picks .symtab from the
 * file or its separate debuginfo, else .dynsym, plus .gnu_debugdata).
 * dwfl_module_addrinfo would do without an index, but it scans the whole
 * table on every call: libtorch has a million symbols. */
static struct symcache *cache__symcache(struct syms_cache *cache)
{
	if (!cache->symcache_tried) {
		cache->symcache_tried = true;
		cache->symcache = symcache__open(NULL, &cache->symcache_why);
		if (cache->symcache_why)
			fprintf(stderr, "infertrace: warning: symbol cache %s %s; symbol tables are read from the files\n",
				getenv("INFERTRACE_CACHE_DIR") ? "INFERTRACE_CACHE_DIR" : "/var/cache/infertrace",
				cache->symcache_why);
	}
	return cache->symcache;
}

/* Whether /usr/lib/debug holds a debug file for the build-id (where
 * distributions' -dbgsym packages put them). */
static bool debuginfo_installed(const unsigned char *id, size_t n)
{
	char path[PATH_MAX];
	size_t o;

	if (n < 2 || n > 64)
		return false;
	o = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < n; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - o, ".debug");
	return access(path, F_OK) == 0;
}

/* The symbol cache's table for the file's build-id, if it has one. */
static bool dso__load_cached_syms(struct dso *dso)
{
	const unsigned char *id;
	struct symcache_sym *cs;
	GElf_Addr at;
	size_t n;
	int idlen = dso->image ? 0 : dwfl_module_build_id(dso->mod, &id, &at);
	struct symcache *sc = idlen > 0 ? cache__symcache(dso->cache) : NULL;

	unsigned flags;

	if (!sc || symcache__load(sc, id, (size_t)idlen, &cs, &n, &dso->symblob, &flags))
		return false;
	/* a table stored without debuginfo, which is now installed: read anew */
	if (!(flags & SYMCACHE_DEBUGINFO) && debuginfo_installed(id, (size_t)idlen)) {
		free(cs);
		symcache__blob_free(dso->symblob);
		dso->symblob = NULL;
		return false;
	}
	dso->syms = calloc(n ? n : 1, sizeof(*dso->syms));
	if (!dso->syms) {
		free(cs);
		symcache__blob_free(dso->symblob);
		dso->symblob = NULL;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		dso->syms[i] = (struct dsym){ .addr = cs[i].addr, .size = cs[i].size, .name = cs[i].name,
					      .bind = cs[i].bind };
	dso->nr_syms = n;
	free(cs);
	dso->cache->stats.symtabs_cached++;
	return true;
}

/* Keeps the file's table in the symbol cache for the next run. */
static void dso__store_syms(struct dso *dso)
{
	const unsigned char *id;
	struct symcache_sym *cs;
	GElf_Addr at;
	int idlen = dso->image ? 0 : dwfl_module_build_id(dso->mod, &id, &at);
	struct symcache *sc = idlen > 0 ? cache__symcache(dso->cache) : NULL;

	if (!sc)
		return;
	cs = calloc(dso->nr_syms ? dso->nr_syms : 1, sizeof(*cs));
	if (!cs)
		return;
	for (size_t i = 0; i < dso->nr_syms; i++)
		cs[i] = (struct symcache_sym){ dso->syms[i].addr, dso->syms[i].size, dso->syms[i].name,
					       dso->syms[i].bind };
	const char *debugfile = NULL;

	dwfl_module_info(dso->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (!symcache__store(sc, id, (size_t)idlen, cs, dso->nr_syms, debugfile ? SYMCACHE_DEBUGINFO : 0))
		dso->cache->stats.symtabs_stored++;
	free(cs);
}

static void dso__load_syms(struct dso *dso)
{
	uint64_t t0 = syms__thread_cpu_ns();
	GElf_Addr addr;
	GElf_Sym sym;
	const char *name;
	int i, n, type;

	dso->syms_loaded = true;
	if (!dso->mod)
		return;
	dso->cache->stats.symtabs++;
	if (dso__load_cached_syms(dso))
		goto out;
	n = dwfl_module_getsymtab(dso->mod);
	if (n <= 0)
		goto out;
	dso->syms = calloc(n, sizeof(*dso->syms));
	if (!dso->syms)
		goto out;
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(dso->mod, i, &sym, &addr, NULL, NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		dso->syms[dso->nr_syms++] = (struct dsym){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.bind = GELF_ST_BIND(sym.st_info),
		};
	}
	qsort(dso->syms, dso->nr_syms, sizeof(*dso->syms), dsym_cmp);
	dso__store_syms(dso);
out:
	dso->cache->stats.symtab_syms += dso->nr_syms;
	dso->cache->stats.symtab_ns += syms__thread_cpu_ns() - t0;
}

/* The symbol covering a module address: the last one starting at or below
 * it, if its size reaches it (a sizeless one reaches the next symbol; the
 * last sizeless one, nothing). */
static struct dsym *dso__find_sym(struct dso *dso, uint64_t addr)
{
	size_t lo = 0, hi = dso->nr_syms;
	struct dsym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dso->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &dso->syms[lo - 1];
	while (s > dso->syms && s[-1].addr == s->addr)
		s--;  /* first alias, the preferred one */
	if (s->size ? addr - s->addr < s->size : lo < dso->nr_syms)
		return s;
	return NULL;
}

/* Symbol of an ELF vaddr, cached. Returns NULL only on allocation failure. */
static struct addr_ent *dso__lookup(struct dso *dso, uint64_t vaddr)
{
	struct addr_ent *ent;
	struct dsym *sym;
	char *dem;
	int status;

	if (dso->cap_ents) {
		ent = dso__ent_slot(dso->ents, dso->cap_ents, vaddr);
		if (ent->used)
			return ent;
	}
	if ((dso->nr_ents + 1) * 2 > dso->cap_ents && dso__ents_grow(dso))
		return NULL;
	ent = dso__ent_slot(dso->ents, dso->cap_ents, vaddr);
	*ent = (struct addr_ent){ .vaddr = vaddr, .used = true };
	dso->nr_ents++;

	if (!dso->syms_loaded)
		dso__load_syms(dso);
	sym = dso__find_sym(dso, vaddr + dso->bias);
	if (!sym)
		return ent;
	ent->sym = sym;
	ent->sym_off = vaddr + dso->bias - sym->addr;
	if (!sym->demangled) {
		sym->demangled = true;
		if (strncmp(sym->name, "_Z", 2) == 0) {
			dem = __cxa_demangle(sym->name, NULL, NULL, &status);
			if (dem && status == 0) {
				sym->name = dem;
				sym->owned = true;
			} else {
				free(dem);
			}
		}
	}
	return ent;
}

/* ---- cache: dso table ---- */

static struct dso **cache__dso_slot(struct dso **tab, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = dso_key_hash(dev, ino) & (cap - 1);

	while (tab[i] && (tab[i]->dev != dev || tab[i]->ino != ino))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int cache__dsos_grow(struct syms_cache *cache)
{
	size_t cap = cache->cap_dsos ? cache->cap_dsos * 2 : 64, i;
	struct dso **tab;

	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < cache->cap_dsos; i++)
		if (cache->dsos[i])
			*cache__dso_slot(tab, cap, cache->dsos[i]->dev, cache->dsos[i]->ino) =
				cache->dsos[i];
	free(cache->dsos);
	cache->dsos = tab;
	cache->cap_dsos = cap;
	return 0;
}

static bool dso__visible(const struct dso *dso)
{
	struct stat st;

	return stat(dso->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == dso->ino &&
	       st.st_dev == dso->dev;
}

/* Opens the file, once. */
static void dso__ready(struct dso *dso)
{
	uint64_t t0;

	if (dso->tried)
		return;
	dso->tried = true;
	t0 = syms__thread_cpu_ns();
	if (!dso->ino)
		dso__open_vdso(dso, dso->end - dso->start);
	else
		dso__open(dso, dso->pid, dso->start, dso->end, dso->waits);
	dso->cache->stats.files++;
	dso->cache->stats.file_ns += syms__thread_cpu_ns() - t0;
}

/* The dso for (dev, ino), created and opened on first sight. (0, 0) is the
 * vDSO, no file having inode 0. */
static struct dso *cache__get_dso(struct syms_cache *cache, dev_t dev, ino_t ino,
				  const char *path, pid_t pid, uint64_t start, uint64_t end)
{
	struct dso **slot, *dso;
	const char *slash;

	if ((cache->nr_dsos + 1) * 2 > cache->cap_dsos && cache__dsos_grow(cache))
		return NULL;
	slot = cache__dso_slot(cache->dsos, cache->cap_dsos, dev, ino);
	if (*slot)
		// cppcheck-suppress identicalInnerCondition
		return *slot;

	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->path = strdup(path);
	if (!dso->path) {
		free(dso);
		return NULL;
	}
	slash = strrchr(dso->path, '/');
	dso->name = slash ? slash + 1 : dso->path;
	dso->dev = dev;
	dso->ino = ino;
	dso->cache = cache;
	dso->pid = pid;
	dso->start = start;
	dso->end = end;
	/* a file our own namespace shows at its path, the same inode, waits
	 * until something needs it (most of what a PyTorch process maps is
	 * never sampled); another (deleted, replaced, in the process's mount
	 * namespace only) is opened now, while the process lives */
	dso->waits = ino != 0 && dso__visible(dso);
	if (!dso->waits)
		dso__ready(dso);
	*slot = dso;
	cache->nr_dsos++;
	return dso;
}

/* ---- cache: procs ---- */

static void proc__free(struct proc *proc)
{
	while (proc) {
		struct proc *older = proc->older;

		free(proc->maps);
		free(proc);
		proc = older;
	}
}

static const struct map *proc__find_map(const struct proc *proc, uint64_t addr);

/* Whether every mapping of old is in new, at the same address, of the same file. */
static bool proc__covers(const struct proc *new, const struct proc *old)
{
	for (size_t i = 0; i < old->nr_maps; i++) {
		const struct map *m = proc__find_map(new, old->maps[i].start);

		if (!m || m->start != old->maps[i].start || m->dso != old->maps[i].dso)
			return false;
	}
	return true;
}

/* new replaces old: old is kept behind it unless new covers it. */
static void proc__supersede(struct proc *new, struct proc *old)
{
	struct proc *p = new;

	if (proc__covers(new, old)) {
		new->older = old->older;
		old->older = NULL;
		proc__free(old);
	} else {
		new->older = old;
	}
	for (int depth = 1; p->older; p = p->older, depth++) {
		if (depth == PROC_GENERATIONS) {
			proc__free(p->older);
			p->older = NULL;
			break;
		}
	}
}

/* Index of pid in cache->procs, or of where it would go. */
static size_t cache__proc_index(const struct syms_cache *cache, pid_t pid, bool *found)
{
	size_t lo = 0, hi = cache->nr_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cache->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < cache->nr_procs && cache->procs[lo]->pid == pid;
	return lo;
}

static struct proc *cache__find_proc(struct syms_cache *cache, pid_t pid)
{
	bool found;
	size_t i;

	if (cache->last && cache->last->pid == pid)
		return cache->last;
	i = cache__proc_index(cache, pid, &found);
	if (!found)
		return NULL;
	cache->last = cache->procs[i];
	return cache->last;
}

/* Puts proc in the table, replacing (and freeing) an older one of its pid. */
static int cache__set_proc(struct syms_cache *cache, struct proc *proc)
{
	bool found;
	size_t i;

	i = cache__proc_index(cache, proc->pid, &found);
	if (found) {
		proc__supersede(proc, cache->procs[i]);
		cache->procs[i] = proc;
		cache->last = NULL;
		proc->gen = ++cache->gens;
		return 0;
	}
	if (VEC_RESERVE(cache->procs, cache->cap_procs, cache->nr_procs, 16))
		return -ENOMEM;
	memmove(&cache->procs[i + 1], &cache->procs[i],
		(cache->nr_procs - i) * sizeof(*cache->procs));
	cache->procs[i] = proc;
	cache->nr_procs++;
	cache->last = NULL;
	proc->gen = ++cache->gens;
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t syms__thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const struct syms_stats *syms_cache__stats(const struct syms_cache *cache)
{
	return &cache->stats;
}

const char *syms_cache__symcache(const struct syms_cache *cache, const char **why)
{
	*why = cache->symcache_why;
	return cache->symcache ? symcache__dir(cache->symcache) : NULL;
}

/* ---- cache: file tokens ---- */


static uint64_t ftok_hash(const struct map *m, uint64_t addr)
{
	return hash64(addr ^ hash64(m->start ^ hash64((uint64_t)(uintptr_t)m->dso ^ m->offset)));
}

/* The id of (map, addr), added when new; -1 when out of memory or ids. */
static int64_t cache__ftok_intern(struct syms_cache *cache, const struct map *m, uint64_t addr)
{
	size_t mask, i;

	if ((cache->nr_ftoks + 1) * 2 > cache->cap_ftok_slots) {
		size_t cap = cache->cap_ftok_slots ? cache->cap_ftok_slots * 2 : 1024;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots || cache->nr_ftoks >= UINT32_MAX - 1) {
			free(slots);
			return -1;
		}
		for (size_t id = 0; id < cache->nr_ftoks; id++) {
			i = ftok_hash(&cache->ftoks[id].map, cache->ftoks[id].addr) & (cap - 1);
			while (slots[i])
				i = (i + 1) & (cap - 1);
			slots[i] = (uint32_t)id + 1;
		}
		free(cache->ftok_slots);
		cache->ftok_slots = slots;
		cache->cap_ftok_slots = cap;
	}
	mask = cache->cap_ftok_slots - 1;
	for (i = ftok_hash(m, addr) & mask; cache->ftok_slots[i]; i = (i + 1) & mask) {
		const struct ftok *t = &cache->ftoks[cache->ftok_slots[i] - 1];

		if (t->addr == addr && t->map.start == m->start && t->map.end == m->end &&
		    t->map.offset == m->offset && t->map.dso == m->dso)
			return cache->ftok_slots[i] - 1;
	}
	if (VEC_RESERVE(cache->ftoks, cache->cap_ftoks, cache->nr_ftoks, 256))
		return -1;
	cache->ftoks[cache->nr_ftoks] = (struct ftok){ .map = *m, .addr = addr };
	cache->ftok_slots[i] = (uint32_t)cache->nr_ftoks + 1;
	return (int64_t)cache->nr_ftoks++;
}

/* The token's entry and the address it names (less one for token - 1). */
static const struct ftok *cache__ftok(const struct syms_cache *cache, uint64_t tok, uint64_t *addr)
{
	uint64_t low = tok & 0xffffffffffffull, id = low >> 1;

	if (!syms__is_file_token(tok) || id >= cache->nr_ftoks)
		return NULL;
	*addr = cache->ftoks[id].addr - !(low & 1);
	return &cache->ftoks[id];
}

/* ---- public ---- */

struct syms_cache *syms_cache__new(void)
{
	/* Runs are offline by design (DESIGN.md: nothing downloaded at run
	 * time); libdwfl would otherwise query debuginfod servers named in
	 * DEBUGINFOD_URLS, which stalls without a network. Opt back in with
	 * INFERTRACE_DEBUGINFOD=1. */
	struct syms_cache *cache;

	if (!getenv("INFERTRACE_DEBUGINFOD"))
		unsetenv("DEBUGINFOD_URLS");
	cache = calloc(1, sizeof(*cache));
	if (cache)
		cache->jit = perfmaps__new();
	return cache;
}

void syms_cache__free(struct syms_cache *cache)
{
	size_t i;

	if (!cache)
		return;
	for (i = 0; i < cache->nr_procs; i++)
		proc__free(cache->procs[i]);
	free(cache->procs);
	for (i = 0; i < cache->cap_dsos; i++)
		dso__free(cache->dsos[i]);
	free(cache->dsos);
	perfmaps__free(cache->jit);
	symcache__free(cache->symcache);
	free(cache->ftoks);
	free(cache->ftok_slots);
	free(cache);
}

int syms_cache__capture(struct syms_cache *cache, pid_t pid)
{
	return syms_cache__capture_at(cache, pid, 0);
}

static int capture(struct syms_cache *cache, pid_t pid, uint64_t since_ns);

int syms_cache__capture_at(struct syms_cache *cache, pid_t pid, uint64_t since_ns)
{
	uint64_t t0 = syms__thread_cpu_ns(), f0 = cache->stats.file_ns;
	const struct proc *cur = since_ns ? cache__find_proc(cache, pid) : NULL;

	/* an mmap that returned before the current capture was read is in it
	 * already (the events of a dlopen storm queue up while one is read) */
	if (cur && since_ns < cur->taken_ns) {
		cache->stats.captures_skipped++;
		return 0;
	}
	int err = capture(cache, pid, since_ns);

	cache->stats.captures++;
	/* the files opened on the way count as files */
	cache->stats.capture_ns += syms__thread_cpu_ns() - t0 - (cache->stats.file_ns - f0);
	return err;
}

/* Appends one executable file mapping (or the vDSO: dev and ino 0) to
 * proc. path is only read when (dev, ino) is a file not seen yet. */
static int proc__add_map(struct syms_cache *cache, struct proc *proc, size_t *cap, dev_t dev, ino_t ino,
			 const char *path, pid_t pid, uint64_t start, uint64_t end, uint64_t offset)
{
	struct dso *dso = cache__get_dso(cache, dev, ino, path, pid, start, end);

	if (!dso)
		return -ENOMEM;
	if (VEC_RESERVE(proc->maps, *cap, proc->nr_maps, 32))
		return -ENOMEM;
	proc->maps[proc->nr_maps++] = (struct map){ .start = start, .end = end, .offset = offset, .dso = dso };
	return 0;
}

/* Cleans a mapping's name as /proc/PID/maps gives it; NULL: not code in a
 * file (anonymous memory: JIT code and the like). Sets *vdso for [vdso]. */
static char *map_path(char *path, size_t plen, unsigned long long ino, bool *vdso)
{
	*vdso = ino == 0 && strcmp(path, "[vdso]") == 0;
	if (!*vdso && (ino == 0 || path[0] != '/'))
		return NULL;
	if (plen > 10 && strcmp(path + plen - 10, " (deleted)") == 0)
		path[plen - 10] = '\0';
	return path;
}

/* The PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11): the kernel steps
 * from one executable mapping to the next and names a mapping only when
 * asked, where the text lists and names all of them (~1,700 lines in a
 * PyTorch process, 300 of them executable; 1.4 ms of kernel time a read,
 * as much again to parse). Defined here for older headers. */
#ifndef PROCMAP_QUERY
struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10
#endif

/* Fills proc from the ioctl. 0, -ENOTTY (or -EINVAL) when the kernel has
 * no such ioctl, or -errno. */
static int capture_query(struct syms_cache *cache, struct proc *proc, int fd)
{
	char name[PATH_MAX];
	struct procmap_query q;
	uint64_t addr = 0;
	size_t cap = 0;
	int err;

	for (;;) {
		q = (struct procmap_query){
			.size = sizeof(q),
			.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA | PROCMAP_QUERY_VMA_EXECUTABLE,
			.query_addr = addr,
		};
		if (ioctl(fd, PROCMAP_QUERY, &q))
			return errno == ENOENT ? 0 : -errno;
		addr = q.vma_end;
		dev_t dev = makedev(q.dev_major, q.dev_minor);
		struct dso **slot = cache->cap_dsos ? cache__dso_slot(cache->dsos, cache->cap_dsos, dev, q.inode) : NULL;
		char *path = NULL;
		bool vdso = false;

		if (q.inode && slot && *slot) {
			vdso = false; /* a file already open: its name is known */
		} else {
			/* named only now: anonymous code (the vDSO?) or a new file */
			q.query_flags = PROCMAP_QUERY_VMA_EXECUTABLE;
			q.query_addr = q.vma_start;
			q.vma_name_size = sizeof(name);
			q.vma_name_addr = (__u64)(uintptr_t)name;
			q.build_id_size = 0;
			if (ioctl(fd, PROCMAP_QUERY, &q)) {
				if (errno == ENOENT)
					continue; /* unmapped meanwhile */
				return -errno;
			}
			name[q.vma_name_size && q.vma_name_size <= sizeof(name) ? q.vma_name_size - 1 : 0] = '\0';
			path = map_path(name, strlen(name), q.inode, &vdso);
			if (!path)
				continue;
		}
		err = proc__add_map(cache, proc, &cap, vdso ? 0 : dev, vdso ? 0 : (ino_t)q.inode,
				    path ? path : "", proc->pid, q.vma_start, q.vma_end, q.vma_offset);
		if (err)
			return err;
	}
}

/* Fills proc from the text of /proc/PID/maps. */
static int capture_text(struct syms_cache *cache, struct proc *proc, FILE *f)
{
	struct procfs_map pm;
	char *line = NULL, *path;
	size_t line_cap = 0, cap = 0;
	bool vdso;
	int err = 0;

	while (!err && getline(&line, &line_cap, f) > 0) {
		if (procfs__maps_line(line, &pm))
			continue;
		/* Only executable file mappings hold code. The mapping's own start
		 * and offset plus the ELF's PT_LOADs are all the translation
		 * needs; no other mapping of the file is required. */
		if (pm.perm[2] != 'x')
			continue;
		path = line + (pm.path - line);
		path[pm.path_len] = '\0';
		path = map_path(path, pm.path_len, pm.ino, &vdso);
		if (!path)
			continue;
		err = proc__add_map(cache, proc, &cap, vdso ? 0 : makedev(pm.maj, pm.min), vdso ? 0 : (ino_t)pm.ino,
				    path, proc->pid, pm.start, pm.end, pm.offset);
	}
	/* the process exited while maps was being read */
	if (!err && ferror(f))
		err = -ESRCH;
	free(line);
	return err;
}

static int capture(struct syms_cache *cache, pid_t pid, uint64_t since_ns)
{
	struct proc *proc = NULL;
	char fname[64];
	FILE *f = NULL;
	int err;

	proc = calloc(1, sizeof(*proc));
	if (!proc) {
		err = -ENOMEM;
		goto cleanup;
	}
	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	proc->pid = pid;
	proc->taken_ns = now_ns();
	proc->read_ns = since_ns && since_ns < proc->taken_ns ? since_ns : proc->taken_ns;

	err = cache->no_maps_query ? -ENOTTY : capture_query(cache, proc, fileno(f));
	if (err == -ENOTTY || err == -EINVAL) {
		cache->no_maps_query = true;
		proc->nr_maps = 0;
		err = capture_text(cache, proc, f);
	}
	if (err)
		goto cleanup;
	/* both come sorted; sort anyway, bsearch depends on it */
	if (proc->nr_maps)
		qsort(proc->maps, proc->nr_maps, sizeof(*proc->maps), map_cmp);
	err = cache__set_proc(cache, proc);
	if (!err)
		proc = NULL;

cleanup:
	proc__free(proc);
	if (f)
		fclose(f);
	return err;
}

bool syms_cache__has(const struct syms_cache *cache, pid_t pid)
{
	bool found = false;

	if (cache)
		cache__proc_index(cache, pid, &found);
	return found;
}

int syms_cache__inherit(struct syms_cache *cache, pid_t from, pid_t to)
{
	struct proc *src, *dst = NULL;
	int err;

	src = cache__find_proc(cache, from);
	if (!src) {
		err = -ENOENT;
		goto cleanup;
	}
	if (from == to) {
		err = 0;
		goto cleanup;
	}
	dst = calloc(1, sizeof(*dst));
	if (!dst) {
		err = -ENOMEM;
		goto cleanup;
	}
	dst->pid = to;
	dst->nr_maps = src->nr_maps;
	if (src->nr_maps) {
		dst->maps = malloc(src->nr_maps * sizeof(*dst->maps));
		if (!dst->maps) {
			err = -ENOMEM;
			goto cleanup;
		}
		memcpy(dst->maps, src->maps, src->nr_maps * sizeof(*dst->maps));
	}
	err = cache__set_proc(cache, dst);
	if (!err)
		dst = NULL;

cleanup:
	proc__free(dst);
	return err;
}

static const struct map *proc__find_map(const struct proc *proc, uint64_t addr)
{
	size_t lo = 0, hi = proc->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (proc->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < proc->nr_maps && proc->maps[lo].start <= addr)
		return &proc->maps[lo];
	return NULL;
}

static void mapping__fill(const struct map *map, struct syms_mapping *m)
{
	GElf_Addr vaddr;
	const unsigned char *bits = NULL;
	int n;

	dso__ready(map->dso);
	*m = (struct syms_mapping){
		.start = map->start,
		.end = map->end,
		.offset = map->offset,
		.path = map->dso->path,
		.opened = map->dso->opened,
		.elf = map->dso->nr_segs > 0 && !map->dso->image,
	};
	if (m->elf)
		m->bias = map->start - dso__vaddr(map->dso, map, map->start);
	/* the note libdwfl read when it reported the file */
	n = map->dso->mod ? dwfl_module_build_id(map->dso->mod, &bits, &vaddr) : 0;
	if (n > 0) {
		m->build_id = bits;
		m->build_id_len = (size_t)n;
	}
}

uint64_t syms_cache__generation(struct syms_cache *cache, pid_t pid)
{
	const struct proc *proc = cache__find_proc(cache, pid);

	return proc ? proc->gen : 0;
}

int syms_cache__mapping_of(struct syms_cache *cache, pid_t pid, uint64_t addr, struct syms_mapping *out)
{
	const struct ftok *t = cache__ftok(cache, addr, &addr);
	struct proc *proc = t ? NULL : cache__find_proc(cache, pid);
	const struct map *map = t ? &t->map : proc ? proc__find_map(proc, addr) : NULL;

	if (!map)
		return -ENOENT;
	mapping__fill(map, out);
	return 0;
}

int syms_cache__mappings(struct syms_cache *cache, pid_t pid,
			 void (*fn)(void *arg, const struct syms_mapping *m), void *arg)
{
	struct proc *proc = cache__find_proc(cache, pid);

	if (!proc)
		return -ENOENT;
	for (size_t i = 0; i < proc->nr_maps; i++) {
		struct syms_mapping m;

		mapping__fill(&proc->maps[i], &m);
		fn(arg, &m);
	}
	return (int)proc->nr_maps;
}

/* An address in no captured mapping: JIT code, if the perf map names it. */
static int jit_resolve(struct syms_cache *cache, pid_t pid, uint64_t addr, struct sym_info *out)
{
	const struct perfmap_entry *e;

	if (!cache->jit)
		return -ENOENT;
	if (perfmap__is_token(addr))
		e = perfmaps__entry(cache->jit, pid, perfmap__token_id(addr));
	else
		e = perfmaps__lookup(cache->jit, pid, addr, PERFMAP_TIME_NEWEST, NULL);
	if (!e)
		return -ENOENT;
	out->name = perfmap_entry__pretty(e);
	out->object = "[jit]";
	out->sym_offset = perfmap__is_token(addr) ? 0 : addr - e->start;
	out->jit = true;
	return 0;
}

/* The file mapping that held addr (a file token's, or the process's, an
 * older image's included: an address from before an exec or a dlclose);
 * *addr becomes the token's address. NULL: none. */
static const struct map *cache__map_of(struct syms_cache *cache, pid_t pid, uint64_t *addr)
{
	const struct map *map;
	struct proc *proc;

	if (syms__is_file_token(*addr)) {
		const struct ftok *t = cache__ftok(cache, *addr, addr);

		return t ? &t->map : NULL;
	}
	proc = cache__find_proc(cache, pid);
	if (!proc)
		return NULL;
	map = proc__find_map(proc, *addr);
	while (!map && (proc = proc->older))
		map = proc__find_map(proc, *addr);
	return map;
}

void syms_cache__mark_root(struct syms_cache *cache, pid_t pid, uint64_t addr)
{
	const struct map *map = cache__map_of(cache, pid, &addr);
	struct addr_ent *ent;

	if (map)
		dso__ready(map->dso);
	ent = map ? dso__lookup(map->dso, dso__vaddr(map->dso, map, addr)) : NULL;

	if (ent)
		ent->root = true;
}

int syms_cache__resolve(struct syms_cache *cache, pid_t pid, uint64_t addr, struct sym_info *out)
{
	const struct addr_ent *ent;
	const struct map *map;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	map = cache__map_of(cache, pid, &addr);
	if (!map)
		return syms__is_file_token(addr) ? -ENOENT : jit_resolve(cache, pid, addr, out);
	out->object = map->dso->name;
	out->path = map->dso->path;
	dso__ready(map->dso);
	vaddr = dso__vaddr(map->dso, map, addr);
	out->obj_offset = vaddr;
	ent = dso__lookup(map->dso, vaddr);
	if (!ent)
		return -ENOMEM;
	out->root = ent->root;
	if (ent->sym) {
		out->name = ent->sym->name;
		out->sym_offset = ent->sym_off;
	}
	return 0;
}

/* Copies src into dst as one folded-stack frame: the name as the demangler
 * or the symbol table gives it ("(anonymous namespace)::f() const",
 * "std::map<int, long>"), but ';' (the frame separator) becomes ':' and a
 * line break or tab a space. Spaces stay: FlameGraph's scripts and ours split
 * the count off at the last space. Always NUL-terminates. */
static void frame__copy(char *dst, size_t len, const char *src)
{
	size_t i, j = 0;

	if (!len)
		return;
	for (i = 0; src[i] && j + 1 < len; i++) {
		char c = src[i];

		dst[j++] = c == ';' ? ':' : (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
	}
	dst[j] = '\0';
}

int syms_cache__format(struct syms_cache *cache, pid_t pid, uint64_t addr, char *buf, size_t len)
{
	struct sym_info si;
	char tmp[PATH_MAX + 32];
	int err;

	err = syms_cache__resolve(cache, pid, addr, &si);
	if (si.jit) {
		snprintf(buf, len, "%s", si.name);
	} else if (si.name) {
		/* symbol versions ("clock_nanosleep@@GLIBC_2.17") are noise in a frame */
		const char *at = strchr(si.name + 1, '@');

		if (at && at - si.name < (ptrdiff_t)sizeof(tmp)) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(at - si.name), si.name);
			frame__copy(buf, len, tmp);
		} else {
			frame__copy(buf, len, si.name);
		}
	}
	else if (si.object) {
		/* no symbol: the object and the ELF vaddr, what addr2line takes */
		snprintf(tmp, sizeof(tmp), "%s+0x%" PRIx64, si.object, si.obj_offset);
		frame__copy(buf, len, tmp);
	} else {
		frame__copy(buf, len, "[unknown]");
	}
	/* names are any bytes the target chose: valid UTF-8 for every writer,
	 * the bytes recoverable (lib/text.h) */
	if (len && text__needs_escape(buf, strlen(buf), TEXT_BACKSLASH)) {
		/* cut to len at a whole escape or character */
		text__escape(buf, strlen(buf), TEXT_BACKSLASH, tmp, len < sizeof(tmp) ? len : sizeof(tmp));
		snprintf(buf, len, "%s", tmp);
	}
	return err;
}

void syms_cache__jit_enable(struct syms_cache *cache, bool on)
{
	if (!on) {
		perfmaps__free(cache->jit);
		cache->jit = NULL;
	} else if (!cache->jit) {
		cache->jit = perfmaps__new();
	}
}

void syms_cache__jit_refresh(struct syms_cache *cache, pid_t pid)
{
	if (cache->jit)
		perfmaps__refresh(cache->jit, pid);
}

struct perfmaps *syms_cache__jit_maps(struct syms_cache *cache)
{
	return cache->jit;
}

bool syms_cache__jit_has(struct syms_cache *cache, pid_t pid)
{
	return perfmaps__has(cache->jit, pid);
}

int syms_cache__jit_tokenize(struct syms_cache *cache, pid_t pid, uint64_t *ips, int n, uint64_t t_ns)
{
	struct proc *proc;
	bool refreshed = false;
	uint32_t id;
	int done = 0;

	if (!cache->jit)
		return 0;
	proc = cache__find_proc(cache, pid);
	for (int i = 0; i < n; i++) {
		/* a caller's return address may already lie past its code */
		uint64_t a = i ? ips[i] - 1 : ips[i];

		if (proc && proc__find_map(proc, a))
			continue;
		if (!refreshed) {
			/* every line written before the sample is in the file by now */
			perfmaps__refresh(cache->jit, pid);
			refreshed = true;
		}
		if (perfmaps__lookup(cache->jit, pid, a, t_ns, &id)) {
			ips[i] = perfmap__token(id);
			done++;
		}
	}
	return done;
}

int syms_cache__file_tokenize(struct syms_cache *cache, pid_t pid, uint64_t *ips, int n, uint64_t t_ns)
{
	struct proc *newest = cache__find_proc(cache, pid);
	int done = 0;

	for (int i = 0; newest && i < n; i++) {
		/* a caller's return address may already lie past its code */
		uint64_t a = i ? ips[i] - 1 : ips[i];
		const struct map *map = NULL, *after = NULL;
		int64_t id;

		if (syms__is_file_token(ips[i]) || perfmap__is_token(ips[i]) || !ips[i])
			continue;
		for (const struct proc *p = newest; p && !map; p = p->older) {
			const struct map *m = proc__find_map(p, a);

			if (p->read_ns <= t_ns)
				map = m;
			else if (m)
				after = m;
		}
		if (!map)
			map = after;
		if (!map || (id = cache__ftok_intern(cache, map, ips[i])) < 0)
			continue;
		ips[i] = (SYMS_FILE_TOKEN_TAG << 48) | ((uint64_t)id << 1) | 1;
		done++;
	}
	return done;
}

uint64_t syms_cache__address(const struct syms_cache *cache, uint64_t addr)
{
	uint64_t a;

	return cache__ftok(cache, addr, &a) ? a : addr;
}

const char *syms__demangle(const char *name, char *buf, size_t len)
{
	char *dem;
	int status;

	if (!name || strncmp(name, "_Z", 2) != 0 || !buf || !len)
		return name;
	dem = __cxa_demangle(name, NULL, NULL, &status);
	if (!dem || status != 0) {
		free(dem);
		return name;
	}
	snprintf(buf, len, "%s", dem);
	free(dem);
	return buf;
}
