// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for user/symbols/syms.c and user/symbols/ksyms.c.
 *
 * Ground truth by construction: the group setup compiles the fixtures in
 * tests/fixtures/syms_fix_* into a temporary directory (non-PIE and PIE
 * executables, an lld-linked PIE whose segments have p_vaddr != p_offset, a
 * C++ executable, a shared library, and a stripped library whose symbols
 * live only in a .debug file named by .gnu_debuglink). Each fixture prints
 * the run-time addresses of known functions and waits; the tests capture its
 * mappings, resolve those addresses and compare with the names and with the
 * symbol values nm reads from the files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_helpers.h"
#include "symcache.h"

#include "syms.h"

#define MAX_FUNCS 8

struct child {
	pid_t pid;
	int in_fd;     /* the fixture's stdin: closing it ends the fixture */
	int nr;
	char names[MAX_FUNCS][64];
	uint64_t addrs[MAX_FUNCS];
};

static char *tmpdir;
static char fixdir[PATH_MAX];
static bool have_lld;

static int sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The fixture sources: INFERTRACE_FIXTURES, else tests/fixtures under the
 * current directory (the test driver runs from the repository root), else
 * next to this file as it was compiled. */
static int find_fixdir(void)
{
	const char *env = getenv("INFERTRACE_FIXTURES");
	char probe[PATH_MAX + 32];

	if (env) {
		snprintf(fixdir, sizeof(fixdir), "%s", env);
		return 0;
	}
	if (access("tests/fixtures/syms_fix_main.c", R_OK) == 0) {
		if (!realpath("tests/fixtures", fixdir))
			return -1;
		return 0;
	}
	snprintf(probe, sizeof(probe), "%s", __FILE__);
	*(strrchr(probe, '/') ? strrchr(probe, '/') : probe) = '\0';
	strncat(probe, "/../fixtures", sizeof(probe) - strlen(probe) - 1);
	if (!realpath(probe, fixdir))
		return -1;
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	/* the tests below that want the symbol cache name their own */
	setenv("INFERTRACE_CACHE_DIR", "off", 1);
	tmpdir = th_tmpdir_new("syms");
	if (!tmpdir || find_fixdir()) {
		fprintf(stderr, "test_syms: no temp dir or no tests/fixtures\n");
		return -1;
	}
	if (sh("cd '%s' && "
	       "gcc -O1 -g -fPIC -shared -o libsymsfix.so '%s/syms_fix_lib.c' && "
	       "gcc -O1 -g -fPIC -shared -o libsymsdbg.so '%s/syms_fix_dbg.c' && "
	       "objcopy --only-keep-debug libsymsdbg.so libsymsdbg.so.debug && "
	       "strip --strip-all libsymsdbg.so && "
	       "objcopy --add-gnu-debuglink=libsymsdbg.so.debug libsymsdbg.so && "
	       "gcc -O1 -g -fno-pie -no-pie -o fix_nopie '%s/syms_fix_main.c' "
	       "  -L. -lsymsfix -lsymsdbg -Wl,-rpath,'$ORIGIN' && "
	       "gcc -O1 -g -fPIE -pie -o fix_pie '%s/syms_fix_main.c' "
	       "  -L. -lsymsfix -lsymsdbg -Wl,-rpath,'$ORIGIN' && "
	       "g++ -O1 -g -o fix_cxx '%s/syms_fix_cxx.cpp'",
	       tmpdir, fixdir, fixdir, fixdir, fixdir, fixdir)) {
		fprintf(stderr, "test_syms: building fixtures failed\n");
		return -1;
	}
	/* lld lays segments out with p_vaddr != p_offset, the case a
	 * translation that ignores the program headers gets wrong */
	have_lld = sh("cd '%s' && gcc -O1 -g -fPIE -pie -fuse-ld=lld -o fix_lld "
		      "'%s/syms_fix_main.c' -L. -lsymsfix -lsymsdbg "
		      "-Wl,-rpath,'$ORIGIN' 2>/dev/null", tmpdir, fixdir) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (!getenv("INFERTRACE_KEEP_TMP"))
		th_rm_tree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
	return 0;
}

/* Starts tmpdir/name and reads its "function address" lines. */
static void child__spawn(struct child *c, const char *name)
{
	int in[2], out[2];
	char path[PATH_MAX + 64], line[256];
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	f = fdopen(out[0], "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && strncmp(line, "ready", 5) != 0) {
		void *p;

		assert_true(c->nr < MAX_FUNCS);
		if (sscanf(line, "%63s %p", c->names[c->nr], &p) == 2)
			c->addrs[c->nr++] = (uintptr_t)p;
	}
	fclose(f);
	assert_true(c->nr > 0);
}

static void child__stop(struct child *c)
{
	int st;

	if (c->pid <= 0)
		return;
	close(c->in_fd);
	waitpid(c->pid, &st, 0);
	c->pid = 0;
}

static uint64_t child__addr(const struct child *c, const char *name)
{
	int i;

	for (i = 0; i < c->nr; i++)
		if (strcmp(c->names[i], name) == 0)
			return c->addrs[i];
	fail_msg("fixture printed no %s", name);
	return 0;
}

/* st_value of sym in tmpdir/file, as nm reads it: the ELF vaddr. */
static uint64_t nm_value(const char *file, const char *sym)
{
	char cmd[PATH_MAX + 64], line[512], name[256], type;
	unsigned long long v;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s/%s'", tmpdir, file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3 && strcmp(name, sym) == 0)
			found = v;
	pclose(p);
	if (!found)
		fail_msg("nm finds no %s in %s", sym, file);
	return found;
}

/* The executable mapping of pid whose path ends in /suffix. */
static void exec_map(pid_t pid, const char *suffix, uint64_t *start, uint64_t *end, uint64_t *off)
{
	char fname[64], line[1024], perm[8];
	unsigned long long s, e, o;
	size_t ll, sl = strlen(suffix);
	bool found = false;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ll = strlen(line);
		if (sscanf(line, "%llx-%llx %7s %llx", &s, &e, perm, &o) == 4 && perm[2] == 'x' &&
		    ll > sl && line[ll - sl - 1] == '/' && strcmp(line + ll - sl, suffix) == 0) {
			*start = s;
			*end = e;
			*off = o;
			found = true;
		}
	}
	fclose(f);
	assert_true(found);
}

static void assert_sym(struct syms_cache *cache, pid_t pid, uint64_t addr, const char *name,
		       const char *object, uint64_t vaddr, uint64_t sym_off)
{
	struct sym_info si;

	assert_int_equal(syms_cache__resolve(cache, pid, addr, &si), 0);
	assert_non_null(si.name);
	assert_string_equal(si.name, name);
	assert_non_null(si.object);
	assert_string_equal(si.object, object);
	assert_non_null(si.path);
	assert_true(si.path[0] == '/');
	assert_int_equal(si.sym_offset, sym_off);
	assert_int_equal(si.obj_offset, vaddr);
}

/* The checks every main-fixture flavour shares. */
static void check_main_fixture(const char *exe)
{
	struct syms_cache *cache;
	struct child c;
	uint64_t a, v;
	char buf[256];

	child__spawn(&c, exe);
	cache = syms_cache__new();
	assert_non_null(cache);
	assert_int_equal(syms_cache__capture(cache, c.pid), 0);
	assert_true(syms_cache__has(cache, c.pid));

	a = child__addr(&c, "fix_main_func");
	v = nm_value(exe, "fix_main_func");
	assert_sym(cache, c.pid, a, "fix_main_func", exe, v, 0);
	assert_sym(cache, c.pid, a + 3, "fix_main_func", exe, v + 3, 3);
	assert_int_equal(syms_cache__format(cache, c.pid, a + 3, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fix_main_func");

	a = child__addr(&c, "fix_lib_func");
	v = nm_value("libsymsfix.so", "fix_lib_func");
	assert_sym(cache, c.pid, a, "fix_lib_func", "libsymsfix.so", v, 0);
	assert_sym(cache, c.pid, a + 2, "fix_lib_func", "libsymsfix.so", v + 2, 2);

	/* static: only in .symtab */
	a = child__addr(&c, "fix_lib_inner");
	v = nm_value("libsymsfix.so", "fix_lib_inner");
	assert_sym(cache, c.pid, a + 1, "fix_lib_inner", "libsymsfix.so", v + 1, 1);

	/* aliases: the public name, not __fix_alias_impl */
	a = child__addr(&c, "fix_alias");
	v = nm_value("libsymsfix.so", "fix_alias");
	assert_sym(cache, c.pid, a, "fix_alias", "libsymsfix.so", v, 0);

	/* stripped library: only the debuglinked .debug file names it */
	a = child__addr(&c, "dbg_hidden");
	v = nm_value("libsymsdbg.so.debug", "dbg_hidden");
	assert_sym(cache, c.pid, a + 4, "dbg_hidden", "libsymsdbg.so", v + 4, 4);

	/* cached results answer the same */
	assert_sym(cache, c.pid, a + 4, "dbg_hidden", "libsymsdbg.so", v + 4, 4);

	syms_cache__free(cache);
	child__stop(&c);
}

static void test_nopie(void **state)
{
	(void)state;
	check_main_fixture("fix_nopie");
}

static void test_pie(void **state)
{
	(void)state;
	check_main_fixture("fix_pie");
}

static void test_lld_layout(void **state)
{
	(void)state;
	if (!have_lld)
		skip();
	check_main_fixture("fix_lld");
}

static void test_cxx_demangled(void **state)
{
	struct syms_cache *cache;
	struct sym_info si;
	struct child c;
	char buf[256];
	uint64_t a;

	(void)state;
	child__spawn(&c, "fix_cxx");
	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture(cache, c.pid), 0);

	a = child__addr(&c, "method");
	assert_int_equal(syms_cache__resolve(cache, c.pid, a + 1, &si), 0);
	assert_string_equal(si.name, "ns::Klass::method(int)");
	assert_int_equal(si.sym_offset, 1);
	assert_int_equal(syms_cache__format(cache, c.pid, a, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ns::Klass::method(int)");

	/* spaces kept: the frame is the demangled name itself (readers split
	 * the count off at the last space) */
	a = child__addr(&c, "take");
	assert_int_equal(syms_cache__resolve(cache, c.pid, a, &si), 0);
	assert_string_equal(si.name, "ns::Klass::take(unsigned long, char const*)");
	assert_int_equal(syms_cache__format(cache, c.pid, a, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ns::Klass::take(unsigned long, char const*)");

	/* truncation still terminates */
	assert_int_equal(syms_cache__format(cache, c.pid, a, buf, 5), 0);
	assert_string_equal(buf, "ns::");

	syms_cache__free(cache);
	child__stop(&c);
}

/* Stacks of processes that exited before the aggregator ran still resolve,
 * and a failed re-capture keeps the old one. */
static void test_exited_and_inherit(void **state)
{
	struct syms_cache *cache;
	struct sym_info si;
	struct child c;
	pid_t pid, fake = 0x3ffffff0;
	uint64_t a;

	(void)state;
	child__spawn(&c, "fix_pie");
	pid = c.pid;
	a = child__addr(&c, "fix_lib_func");
	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture(cache, pid), 0);
	child__stop(&c);

	assert_true(syms_cache__capture(cache, pid) < 0);
	assert_true(syms_cache__has(cache, pid));
	assert_int_equal(syms_cache__resolve(cache, pid, a, &si), 0);
	assert_string_equal(si.name, "fix_lib_func");

	assert_false(syms_cache__has(cache, fake));
	assert_int_equal(syms_cache__inherit(cache, pid, fake), 0);
	assert_true(syms_cache__has(cache, fake));
	assert_int_equal(syms_cache__resolve(cache, fake, a, &si), 0);
	assert_string_equal(si.name, "fix_lib_func");
	/* inheriting again replaces, and pid itself stays */
	assert_int_equal(syms_cache__inherit(cache, pid, fake), 0);
	assert_int_equal(syms_cache__resolve(cache, pid, a, &si), 0);
	assert_string_equal(si.name, "fix_lib_func");

	assert_int_equal(syms_cache__inherit(cache, fake + 1, fake + 2), -ENOENT);
	assert_false(syms_cache__has(cache, fake + 2));
	syms_cache__free(cache);
}

int main(void);

static void test_unknown(void **state)
{
	struct syms_cache *cache;
	struct sym_info si;
	char buf[64];

	(void)state;
	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture(cache, getpid()), 0);
	assert_int_equal(syms_cache__resolve(cache, getpid(), 0x10, &si), -ENOENT);
	assert_null(si.name);
	assert_null(si.object);
	assert_int_equal(syms_cache__format(cache, getpid(), 0x10, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "[unknown]");

	/* this test binary itself */
	assert_int_equal(syms_cache__resolve(cache, getpid(), (uintptr_t)main, &si), 0);
	assert_string_equal(si.name, "main");

	/* a pid never captured */
	assert_int_equal(syms_cache__resolve(cache, 0x3fffffff, 0x401000, &si), -ENOENT);
	assert_int_equal(syms_cache__format(cache, 0x3fffffff, 0x401000, buf, sizeof(buf)),
			 -ENOENT);
	assert_string_equal(buf, "[unknown]");

	/* a pid that does not exist */
	assert_true(syms_cache__capture(cache, 0x3fffffff) < 0);
	assert_false(syms_cache__has(cache, 0x3fffffff));
	syms_cache__free(cache);
}

/* File tokens (syms_cache__file_tokenize): a frame keeps the mapping it had
 * at the sample's time; token - 1 names the address - 1; addresses outside
 * every mapping are left alone. */
static void test_file_tokens(void **state)
{
	struct syms_cache *cache;
	struct syms_mapping sm;
	struct sym_info si;
	uint64_t ips[3] = { (uintptr_t)main, (uintptr_t)main + 1, 0x10 };

	(void)state;
	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture_at(cache, getpid(), 1000), 0);
	/* a sample before the capture's date: the oldest capture after it */
	assert_int_equal(syms_cache__file_tokenize(cache, getpid(), ips, 3, 10), 2);
	assert_true(syms__is_file_token(ips[0]) && syms__is_file_token(ips[1]));
	assert_int_equal(ips[2], 0x10);
	assert_int_equal(syms_cache__address(cache, ips[0]), (uintptr_t)main);
	assert_int_equal(syms_cache__address(cache, ips[1] - 1), (uintptr_t)main);
	assert_int_equal(syms_cache__resolve(cache, getpid(), ips[0], &si), 0);
	assert_string_equal(si.name, "main");
	assert_int_equal(syms_cache__resolve(cache, getpid(), ips[1] - 1, &si), 0);
	assert_string_equal(si.name, "main");
	assert_int_equal(syms_cache__mapping_of(cache, getpid(), ips[0], &sm), 0);
	assert_true(sm.start <= (uintptr_t)main && (uintptr_t)main < sm.end);
	/* the same frame again: the same token */
	ips[2] = (uintptr_t)main;
	assert_int_equal(syms_cache__file_tokenize(cache, getpid(), &ips[2], 1, 2000), 1);
	assert_int_equal(ips[2], ips[0]);
	/* a token never made */
	assert_int_equal(syms_cache__resolve(cache, getpid(), (SYMS_FILE_TOKEN_TAG << 48) | 0xffff1, &si),
			 -ENOENT);
	syms_cache__free(cache);
}

/* The last byte of the library's executable mapping is page padding after
 * every function: the object and its vaddr, no name. */
static void test_past_symbols(void **state)
{
	uint64_t start = 0, end = 0, off = 0, a;
	struct syms_cache *cache;
	struct sym_info si;
	struct child c;
	char buf[128], want[128];

	(void)state;
	child__spawn(&c, "fix_pie");
	exec_map(c.pid, "libsymsfix.so", &start, &end, &off);
	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture(cache, c.pid), 0);
	a = end - 1;
	assert_int_equal(syms_cache__resolve(cache, c.pid, a, &si), 0);
	assert_null(si.name);
	assert_string_equal(si.object, "libsymsfix.so");
	/* GNU ld gives shared libraries p_vaddr == p_offset: vaddr = file offset */
	assert_int_equal(si.obj_offset, a - start + off);
	assert_int_equal(syms_cache__format(cache, c.pid, a, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "libsymsfix.so+0x%" PRIx64, a - start + off);
	assert_string_equal(buf, want);
	syms_cache__free(cache);
	child__stop(&c);
}

/* Control for the debuglink check: without the .debug file the stripped
 * library cannot name its static function. */
static void test_debuglink_needed(void **state)
{
	char dbg[PATH_MAX + 32], moved[PATH_MAX + 32];
	struct syms_cache *cache;
	struct sym_info si;
	struct child c;
	int err;

	(void)state;
	snprintf(dbg, sizeof(dbg), "%s/libsymsdbg.so.debug", tmpdir);
	snprintf(moved, sizeof(moved), "%s/moved.debug", tmpdir);
	child__spawn(&c, "fix_pie");
	assert_int_equal(rename(dbg, moved), 0);
	cache = syms_cache__new();
	err = syms_cache__capture(cache, c.pid);
	if (!err)
		err = syms_cache__resolve(cache, c.pid, child__addr(&c, "dbg_hidden"), &si);
	syms_cache__free(cache);
	assert_int_equal(rename(moved, dbg), 0);
	child__stop(&c);
	assert_int_equal(err, 0);
	assert_true(!si.name || strcmp(si.name, "dbg_hidden") != 0);
}

/* The symbol cache's directory rule (root's, written by no one else) and a
 * table's round trip. */
static void test_symcache_rules(void **state)
{
	struct symcache_sym in[2] = { { 0x1000, 16, "alpha", 1 }, { 0x2000, 0, "_Z4betav", 2 } }, *out;
	char dir[PATH_MAX + 16];
	struct symcache_blob *blob;
	const unsigned char id[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct symcache *c;
	const char *why;
	unsigned flags;
	size_t n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cache", tmpdir);
	assert_null(symcache__open("off", &why));
	assert_null(why);
	c = symcache__open(dir, &why);
	if (geteuid() != 0) {
		/* made by this user, not root */
		assert_null(c);
		assert_non_null(why);
		return;
	}
	assert_non_null(c);
	assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), -ENOENT);
	assert_int_equal(symcache__store(c, id, sizeof(id), in, 2, SYMCACHE_DEBUGINFO), 0);
	assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), 0);
	assert_int_equal(n, 2);
	assert_int_equal(flags, SYMCACHE_DEBUGINFO);
	assert_int_equal(out[1].addr, 0x2000);
	assert_int_equal(out[0].size, 16);
	assert_int_equal(out[1].bind, 2);
	assert_string_equal(out[0].name, "alpha");
	assert_string_equal(out[1].name, "_Z4betav");
	free(out);
	symcache__blob_free(blob);
	symcache__free(c);
	/* others may write to it: refused */
	assert_int_equal(chmod(dir, 0770), 0);
	assert_null(symcache__open(dir, &why));
	assert_non_null(why);
	assert_int_equal(chmod(dir, 0700), 0);
	/* a cache file others may write: ignored */
	c = symcache__open(dir, &why);
	assert_non_null(c);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/deadbeef.syms");
	assert_int_equal(chmod(dir, 0622), 0);
	assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), -EINVAL);
	assert_int_equal(chmod(dir, 0600), 0);
	/* malformed (the file is mapped, and every entry checked): a name
	 * past the names (the first entry's, after the 32-byte header, at 16
	 * in its entry), a file cut short */
	{
		uint32_t bad = 0xffffffffu;
		int fd = open(dir, O_WRONLY);
		struct stat st;

		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, &bad, sizeof(bad), 32 + 16), (ssize_t)sizeof(bad));
		close(fd);
		assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), -EINVAL);
		assert_null(blob);
		assert_int_equal(symcache__store(c, id, sizeof(id), in, 2, 0), 0);
		assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), 0);
		assert_string_equal(out[1].name, "_Z4betav");
		free(out);
		symcache__blob_free(blob);
		assert_int_equal(stat(dir, &st), 0);
		assert_int_equal(truncate(dir, st.st_size - 1), 0);
		assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), -EINVAL);
		assert_int_equal(truncate(dir, 8), 0);
		assert_int_equal(symcache__load(c, id, sizeof(id), &out, &n, &blob, &flags), -EINVAL);
	}
	symcache__free(c);
}

/* A second cache (the next run) reads the library's table back and names
 * the same function. */
static void test_symcache_next_run(void **state)
{
	char dir[PATH_MAX + 16], name1[128] = "", name2[128] = "";
	const struct syms_stats *st;
	struct syms_cache *cache;
	struct sym_info si;
	struct child c;
	uint64_t written = 0, read = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/cache-next", tmpdir);
	setenv("INFERTRACE_CACHE_DIR", dir, 1);
	child__spawn(&c, "fix_pie");
	for (int run = 0; run < 2; run++) {
		cache = syms_cache__new();
		assert_int_equal(syms_cache__capture(cache, c.pid), 0);
		assert_int_equal(syms_cache__resolve(cache, c.pid, child__addr(&c, "fix_lib_inner"), &si), 0);
		assert_non_null(si.name);
		snprintf(run ? name2 : name1, sizeof(name1), "%s", si.name);
		st = syms_cache__stats(cache);
		if (run)
			read = st->symtabs_cached;
		else
			written = st->symtabs_stored;
		syms_cache__free(cache);
	}
	child__stop(&c);
	setenv("INFERTRACE_CACHE_DIR", "off", 1);
	assert_true(written >= 1);
	assert_true(read >= 1);
	assert_string_equal(name1, "fix_lib_inner");
	assert_string_equal(name2, name1);
}

/* The vDSO's symbols come from the tracer's own copy of the image. */
static void test_vdso(void **state)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	uint64_t fn = 0, size;
	struct syms_cache *cache;
	Elf_Scn *scn = NULL;
	struct sym_info si;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	Elf *elf;
	size_t i;

	(void)state;
	if (!base)
		skip();
	/* __vdso_clock_gettime's vaddr, read with libelf from the image */
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)base, size);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) && !fn) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(d, (int)i, &sym) &&
			    strcmp(elf_strptr(elf, sh.sh_link, sym.st_name),
				   "__vdso_clock_gettime") == 0)
				fn = sym.st_value;
	}
	elf_end(elf);
	if (!fn)
		skip();

	cache = syms_cache__new();
	assert_int_equal(syms_cache__capture(cache, getpid()), 0);
	assert_int_equal(syms_cache__resolve(cache, getpid(), base + fn + 1, &si), 0);
	assert_string_equal(si.object, "[vdso]");
	assert_non_null(si.name);
	/* clock_gettime is its weak alias: either name is right */
	assert_true(strcmp(si.name, "clock_gettime") == 0 ||
		    strcmp(si.name, "__vdso_clock_gettime") == 0);
	assert_int_equal(si.sym_offset, 1);
	syms_cache__free(cache);
}

static void test_demangle(void **state)
{
	const char *plain = "fix_main_func", *bad = "_Znotmangled";
	char buf[128];

	(void)state;
	assert_string_equal(syms__demangle("_ZN2ns5Klass6methodEi", buf, sizeof(buf)),
			    "ns::Klass::method(int)");
	assert_ptr_equal(syms__demangle(plain, buf, sizeof(buf)), plain);
	assert_ptr_equal(syms__demangle(bad, buf, sizeof(buf)), bad);
	assert_null(syms__demangle(NULL, buf, sizeof(buf)));
	/* truncated into a small buffer, still terminated */
	assert_string_equal(syms__demangle("_ZN2ns5Klass6methodEi", buf, 5), "ns::");
}

static void test_free_null(void **state)
{
	(void)state;
	syms_cache__free(NULL);
	ksyms__free(NULL);
	assert_false(syms_cache__has(NULL, 1));
}

/* The address of a text symbol as /proc/kallsyms lists it, 0 if absent. */
static uint64_t kallsyms_addr(const char *sym)
{
	char line[512], name[256], type;
	unsigned long long v;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &v, &type, name) == 3 &&
		    (type == 'T' || type == 't') && strcmp(name, sym) == 0) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

static void test_ksyms_kernel(void **state)
{
	struct ksyms *ks;
	uint64_t a, off = 99;
	const char *name;

	(void)state;
	ks = ksyms__load();
	if (!ks && errno == EPERM) {
		print_message("# SKIP /proc/kallsyms hides addresses (kptr_restrict, not root)\n");
		skip();
	}
	assert_non_null(ks);
	a = kallsyms_addr("schedule");
	if (!a) {
		ksyms__free(ks);
		print_message("# SKIP no schedule in /proc/kallsyms\n");
		skip();
	}
	name = ksyms__map_addr(ks, a, &off);
	assert_non_null(name);
	assert_string_equal(name, "schedule");
	assert_int_equal(off, 0);
	name = ksyms__map_addr(ks, a + 8, &off);
	assert_string_equal(name, "schedule");
	assert_int_equal(off, 8);
	assert_null(ksyms__map_addr(ks, 0x1000, &off));
	ksyms__free(ks);
}

static void test_ksyms_file(void **state)
{
	char path[PATH_MAX + 32];
	struct ksyms *ks;
	uint64_t off;

	(void)state;
	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	/* unsorted, data symbols to drop, a module symbol, an alias */
	th_write_file(path,
		   "ffffffff81002000 T beta\n"
		   "ffffffff81001000 T alpha\n"
		   "ffffffff81001800 D some_data\n"
		   "ffffffff81001000 t alpha_alias\n"
		   "ffffffffc0001000 t mod_func\t[mymod]\n"
		   "ffffffff81003000 W weak_func\n");
	ks = ksyms__load_file(path);
	assert_non_null(ks);
	assert_string_equal(ksyms__map_addr(ks, 0xffffffff81001900ULL, &off), "alpha");
	assert_int_equal(off, 0x900);
	assert_string_equal(ksyms__map_addr(ks, 0xffffffff81002004ULL, &off), "beta");
	assert_int_equal(off, 4);
	assert_string_equal(ksyms__map_addr(ks, 0xffffffff81003010ULL, &off), "weak_func");
	assert_string_equal(ksyms__map_addr(ks, 0xffffffffc0001010ULL, &off), "mod_func");
	assert_int_equal(off, 0x10);
	assert_null(ksyms__map_addr(ks, 0xffffffff80000000ULL, &off));
	ksyms__free(ks);

	/* kptr_restrict: names with zero addresses */
	th_write_file(path, "0000000000000000 T alpha\n0000000000000000 t beta\n");
	errno = 0;
	assert_null(ksyms__load_file(path));
	assert_int_equal(errno, EPERM);

	snprintf(path, sizeof(path), "%s/no-such-kallsyms", tmpdir);
	assert_null(ksyms__load_file(path));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_lld_layout),
		cmocka_unit_test(test_cxx_demangled),
		cmocka_unit_test(test_exited_and_inherit),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_file_tokens),
		cmocka_unit_test(test_past_symbols),
		cmocka_unit_test(test_debuglink_needed),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_symcache_rules),
		cmocka_unit_test(test_symcache_next_run),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_ksyms_kernel),
		cmocka_unit_test(test_ksyms_file),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
