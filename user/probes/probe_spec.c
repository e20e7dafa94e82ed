// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nearest.h"
#include "probe_spec.h"
#include "safe_open.h"
#include "target.h"
#include "syms.h"
#include "procfs.h"

/* The first ':' that is not part of a C++ "::". */
static char *object_separator(char *s)
{
	for (char *p = s; *p; p++) {
		if (*p != ':')
			continue;
		if (p[1] == ':') {
			p++;
			continue;
		}
		return p;
	}
	return NULL;
}

int probe_spec__parse(const char *text, struct probe_spec *out, char *err, size_t errlen)
{
	char *copy, *parts[5] = {}, *p, *sep;
	int n = 0;

	memset(out, 0, sizeof(*out));
	if (!text || !*text) {
		snprintf(err, errlen, "empty probe spec");
		return -EINVAL;
	}
	out->text = strdup(text);
	copy = strdup(text);
	if (!strncmp(text, "usdt:", 5)) {
		out->kind = SPEC_USDT;
		for (p = strtok(copy + 5, ":"); p && n < 5; p = strtok(NULL, ":"))
			parts[n++] = p;
		if (n < 3 || n > 4 || p) {
			snprintf(err, errlen, "bad USDT spec '%s': expected usdt:OBJECT:PROVIDER:NAME "
				 "or usdt:OBJECT:PROVIDER:BEGIN:END", text);
			goto fail;
		}
		out->object = strdup(parts[0]);
		out->provider = strdup(parts[1]);
		out->symbol = strdup(parts[2]);
		out->usdt_end = n == 4 ? strdup(parts[3]) : NULL;
		free(copy);
		return 0;
	}
	out->kind = SPEC_FUNCTION;
	sep = object_separator(copy);
	if (sep) {
		*sep = 0;
		if (!*copy || !sep[1]) {
			snprintf(err, errlen, "bad probe spec '%s': expected [OBJECT:]SYMBOL", text);
			goto fail;
		}
		out->object = strdup(copy);
		out->symbol = strdup(sep + 1);
	} else {
		out->symbol = strdup(copy);
	}
	for (p = out->symbol; *p; p++) {
		if (*p == ' ' || *p == ',' || *p == '=' || (*p == ':' && p[1] != ':' && (p == out->symbol || p[-1] != ':'))) {
			snprintf(err, errlen, "bad probe spec '%s': '%c' in a symbol name", text, *p);
			goto fail;
		}
	}
	free(copy);
	return 0;
fail:
	free(copy);
	probe_spec__free(out);
	return -EINVAL;
}

void probe_spec__free(struct probe_spec *s)
{
	if (!s)
		return;
	free(s->object);
	free(s->symbol);
	free(s->provider);
	free(s->usdt_end);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

bool probe_spec__object_is_path(const struct probe_spec *s)
{
	return s->object && strchr(s->object, '/');
}

bool probe_spec__name_matches(const char *name, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n = strlen(name);

	base = base ? base + 1 : path;
	if (strncmp(base, name, n))
		return false;
	return base[n] == 0 || base[n] == '.' || base[n] == '-';
}

static Elf *elf_open(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	/* the target names this file: never block on a FIFO, only regular files */
	*fd = safe_open_regular(path);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return e;
}

/* Converts a symbol's virtual address to a file offset through PT_LOAD. */
static int vaddr_to_offset(Elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Whether a mangled name may demangle to want. The identifier want ends
 * with (after its last "::", before template or call arguments, without a
 * destructor's '~') appears in an Itanium-mangled name as <length><name>;
 * a symbol without it cannot be want. Demangling every C++ symbol of a
 * library that lacks the wanted one took 14 ms a lookup (llama.cpp's
 * libllama-common, 8 preset probes: a 116 ms stop of the target). */
static bool mangled_may_name(const char *mangled, const char *want)
{
	const char *last = want;
	char tag[300];
	size_t len;

	for (const char *p = want; *p && *p != '<' && *p != '('; p++)
		if (p[0] == ':' && p[1] == ':')
			last = p + 2;
	if (*last == '~')
		last++;
	len = strcspn(last, "<( ");
	/* operators are mangled by code, not by name: demangle to tell */
	if (!len || len > 255 || !strncmp(last, "operator", 8))
		return true;
	snprintf(tag, sizeof(tag), "%zu%.*s", len, (int)len, last);
	return strstr(mangled, tag) != NULL;
}

/* `ns::Klass::method(int)` matches `ns::Klass::method`. */
static bool demangled_matches(const char *mangled, const char *want)
{
	char buf[1024];
	const char *d;
	size_t n = strlen(want);

	if (mangled[0] != '_' || mangled[1] != 'Z' || !mangled_may_name(mangled, want))
		return false;
	d = syms__demangle(mangled, buf, sizeof(buf));
	return !strncmp(d, want, n) && (d[n] == 0 || d[n] == '(');
}

/* The name of symbol i of a symbol table if it is a defined function. */
static const char *function_symbol(Elf *e, const GElf_Shdr *sh, Elf_Data *data, size_t i, GElf_Sym *sym)
{
	int type;

	if (!gelf_getsym(data, i, sym) || sym->st_shndx == SHN_UNDEF || !sym->st_value)
		return NULL;
	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return NULL;
	return elf_strptr(e, sh->sh_link, sym->st_name);
}

int elf_symbol_offset(const char *path, const char *symbol, uint64_t *offset)
{
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	while ((scn = elf_nextscn(e, scn)) && err == -ENOENT) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name = function_symbol(e, &sh, data, i, &sym);

			if (!name)
				continue;
			/* versioned dynamic names: foo@@VER */
			size_t n = strlen(symbol);

			if ((!strncmp(name, symbol, n) && (name[n] == 0 || name[n] == '@')) ||
			    demangled_matches(name, symbol)) {
				err = vaddr_to_offset(e, sym.st_value, offset);
				if (err == -ENOENT)
					err = -ENOEXEC;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return err == -ENOEXEC ? -ENOENT : err;
}

int elf_nearest_symbols(const char *path, struct nearest *nr)
{
	Elf_Scn *scn = NULL;
	int fd, err = 0;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	while ((scn = elf_nextscn(e, scn)) && !err) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && !err; i++) {
			GElf_Sym sym;
			const char *name = function_symbol(e, &sh, data, i, &sym);

			/* versioned dynamic names: foo@@VER is offered as foo */
			if (name)
				err = nearest__offer(nr, name, strcspn(name, "@"));
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

int elf_has_usdt(const char *path, const char *provider, const char *name)
{
	Elf_Scn *scn = NULL;
	int fd, err = -ENOENT;
	Elf *e = elf_open(path, &fd);
	size_t shstrndx;

	if (!e)
		return -errno;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn)) && err) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			/* desc: pc, base, semaphore (address-sized), then provider\0name\0args\0 */
			size_t asz = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;
			const char *desc = (const char *)data->d_buf + desc_off;
			const char *prov, *pname;

			size_t left, plen;

			if (nh.n_type != 3 || nh.n_descsz < 3 * asz + 2)
				continue;
			/* both strings must end inside the note: a corrupt or short
			 * one must not make us read past the section */
			prov = desc + 3 * asz;
			left = nh.n_descsz - 3 * asz;
			plen = strnlen(prov, left);
			if (plen + 1 >= left)
				continue;
			pname = prov + plen + 1;
			if (strnlen(pname, left - plen - 1) == left - plen - 1)
				continue;
			if (!strcmp(prov, provider) && !strcmp(pname, name)) {
				err = 0;
				break;
			}
		}
	}
out:
	elf_end(e);
	close(fd);
	return err;
}

static int dynamic_strings(const char *path, int tag, char **out, int max)
{
	Elf_Scn *scn = NULL;
	int fd, n = 0;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return 0; /* unreadable: no strings */
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && n < max; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn))
				continue;
			if (dyn.d_tag == tag && (s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)) &&
			    (out[n] = strdup(s)))
				n++;
		}
	}
	elf_end(e);
	close(fd);
	return n;
}

/* The loader's cache, as `ldconfig -p` prints it: "\tname (flags) => path". */
static int ld_cache_lookup(const char *name, char *out, size_t len)
{
	static char *cache;
	static size_t cache_len;
	char *p, *line;

	if (!cache) {
		FILE *f = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null", "r");

		if (!f)
			return -ENOENT;
		FILE *m = open_memstream(&cache, &cache_len);
		char buf[4096];
		size_t n;

		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
		pclose(f);
	}
	for (line = cache; line && *line; line = p ? p + 1 : NULL) {
		char lname[512], lpath[PATH_MAX];

		p = strchr(line, '\n');
		if (sscanf(line, " %511s (%*[^)]) => %4095s", lname, lpath) == 2 && !strcmp(lname, name) &&
		    access(lpath, R_OK) == 0) {
			snprintf(out, len, "%s", lpath);
			return 0;
		}
	}
	return -ENOENT;
}

static int search_dirs(const char *dirs, const char *origin, const char *name, char *out, size_t len)
{
	char *copy, *d, *save = NULL;
	int err = -ENOENT;

	if (!dirs)
		return -ENOENT;
	copy = strdup(dirs);
	for (d = strtok_r(copy, ":", &save); d && err; d = strtok_r(NULL, ":", &save)) {
		char dir[PATH_MAX];

		if (!strncmp(d, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%s", origin, d + 7);
		else if (!strncmp(d, "${ORIGIN}", 9))
			snprintf(dir, sizeof(dir), "%s%s", origin, d + 9);
		else
			snprintf(dir, sizeof(dir), "%s", d);
		if (snprintf(out, len, "%s/%s", dir, name) >= (int)len)
			continue;
		if (access(out, R_OK) == 0)
			err = 0;
	}
	free(copy);
	return err;
}

static int find_library(const char *name, const char *needer, char *out, size_t len)
{
	char *rpath[4] = {}, *runpath[4] = {}, origin[PATH_MAX];
	const char *slash = strrchr(needer, '/');
	int nr, nrun, err = -ENOENT;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - needer) : 1, slash ? needer : ".");
	nr = dynamic_strings(needer, DT_RPATH, rpath, 4);
	nrun = dynamic_strings(needer, DT_RUNPATH, runpath, 4);
	/* DT_RPATH counts only without DT_RUNPATH (ld.so(8)) */
	for (int i = 0; nrun <= 0 && i < nr && err; i++)
		err = search_dirs(rpath[i], origin, name, out, len);
	if (err)
		err = search_dirs(getenv("LD_LIBRARY_PATH"), origin, name, out, len);
	for (int i = 0; i < nrun && err; i++)
		err = search_dirs(runpath[i], origin, name, out, len);
	if (err)
		err = ld_cache_lookup(name, out, len);
	if (err)
		err = search_dirs("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/aarch64-linux-gnu:"
				  "/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib", origin, name, out, len);
	for (int i = 0; i < nr; i++)
		free(rpath[i]);
	for (int i = 0; i < nrun; i++)
		free(runpath[i]);
	return err;
}

int elf_needed_closure(const char *exe, char **paths, int max)
{
	int n = 0;

	if (max < 1)
		return 0;
	paths[n++] = strdup(exe);
	for (int i = 0; i < n; i++) {
		char *needed[64];
		int nn = dynamic_strings(paths[i], DT_NEEDED, needed, 64);

		for (int j = 0; j < nn; j++) {
			char path[PATH_MAX], real[PATH_MAX];
			bool seen = false;

			if (!find_library(needed[j], paths[i], path, sizeof(path)) && realpath(path, real)) {
				for (int k = 0; k < n; k++)
					if (!strcmp(paths[k], real))
						seen = true;
				if (!seen && n < max)
					paths[n++] = strdup(real);
			}
			free(needed[j]);
		}
	}
	return n;
}

int proc_exec_files(pid_t pid, void (*fn)(const char *path, void *ctx), void *ctx)
{
	char path[64], line[PATH_MAX + 256], root[64], full[PATH_MAX + 64];
	FILE *f;

	/* a target in another mount namespace: its paths through its root */
	target__root_prefix(pid, root, sizeof(root));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct procfs_map m;
		char *file;

		if (procfs__maps_line(line, &m) || m.perm[2] != 'x' || m.path[0] != '/')
			continue;
		file = line + (m.path - line);
		file[m.path_len] = 0;
		if (strstr(file, " (deleted)"))
			continue;
		if (root[0]) {
			snprintf(full, sizeof(full), "%s%s", root, file);
			fn(full, ctx);
		} else {
			fn(file, ctx);
		}
	}
	fclose(f);
	return 0;
}

int resolve_command_path(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *d, *save = NULL;
	int err = -ENOENT;

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return 0;
	}
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (d = strtok_r(copy, ":", &save); d && err; d = strtok_r(NULL, ":", &save)) {
		char cand[PATH_MAX];

		snprintf(cand, sizeof(cand), "%s/%s", d, cmd);
		if (access(cand, X_OK) == 0 && realpath(cand, out))
			err = 0;
	}
	free(copy);
	(void)len;
	return err;
}
