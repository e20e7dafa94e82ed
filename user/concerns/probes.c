// SPDX-License-Identifier: BSD-2-Clause
/* Probes concern: cycles, phases and counts from uprobes and USDT probes.
 * Longer than 600 lines: resolving specs, placing probes in libraries that
 * load later (with the SIGSTOP gate) and turning edges into the model's
 * cycles share the probe table and its placement state.
 * configure: expand presets, parse and resolve every spec (a clear error
 * before anything is attached); attach: place the probes (one generic
 * program, a cookie per probe); events: cycle edges and phase calls; spans:
 * the model's cycles with their phases and counts, and the `probes` section. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "exit_codes.h"
#include "infertrace.skel.h"
#include "uprobe_links.h"
#include "jsphase.h"
#include "map_dump.h"
#include "nearest.h"
#include "safe_open.h"
#include "spool.h"
#include "target.h"
#include "presets.h"
#include "probe_spec.h"
#include "probes.h"
#include "pyspans.h"
#include "python.h"
#include "stats.h"
#include "vec.h"

#define MAX_KNOWN_FILES 512
#define MAX_PLACEMENTS 16      /* files one probe may be placed in */
#define PY_DEFAULT_HZ 499          /* sampling with `py:` specs and no -F */
#define PY_PROBE UINT32_MAX        /* phase_call.probe of a `py:@callers` phase call (timed in user space) */

struct probe {
	struct probe_spec spec;
	int index;                 /* cookie probe index, also probe_hists key */
	enum it_probe_role role;   /* CYCLE, CYCLE_MARKER, PHASE or COUNT */
	int id;                    /* phase or count id */
	bool preset;               /* from a preset: its library may load later or lack the symbol */
	bool waits;                /* a user's probe in a library not loaded yet: placed when it is */
	bool lacking;              /* waited, and its library loaded without the symbol: an error */
	bool fallback;             /* a preset's fallback: placed once woken (probes__wake_fallback) */
	bool dormant;              /* a fallback not woken: resolved, not placed */
	int alternatives;          /* >0: one of a preset's names for one call across versions */
	char *files[MAX_PLACEMENTS];
	int nfiles;
	char *error;               /* why it could not be placed (owned) */
};

struct probes {
	struct probe probes[IT_MAX_PROBES];
	int n;
	char *names[2][IT_MAX_PHASES]; /* [0] phases, [1] counts: owned names */
	int nphase_ids, ncount_ids;
	bool cycles_from_probes;
	bool marker_mode;
	bool llama_cycles;         /* cycles start at llama.cpp prompt batches */
	int nalternatives;         /* groups of alternative names given so far */
	char exe[PATH_MAX];
	char *known[MAX_KNOWN_FILES]; /* libraries the target loads at start */
	int nknown;
	/* the cycles still open; a closed cycle and every phase call go to the
	 * recording's spool as they end (spool.h), so memory stays flat */
	struct cycle_span *cycles;
	size_t ncycles, capcycles;
	uint64_t calls_dropped;      /* the spool could not be written (disk full) */
	uint64_t cycles_not_kept;
	size_t cycles_forgotten;     /* --rotate: written in an earlier period */
	struct pyspans *py;          /* `py:` specs: no probe, Python stack observations */
	bool py_cycles;              /* the cycles come from a `py:` spec (kernel edges, as probes') */
	int callers_phase;           /* phase timed by its Python callers (py:@callers found some); 0: none */
	char fallback_why[360];      /* why the fallback probes were placed ("": they were not) */
};

/* ---- configuration ---------------------------------------------------- */

static int name_id(struct probes *ps, int kind, const char *name)
{
	int *n = kind ? &ps->ncount_ids : &ps->nphase_ids;

	for (int i = 1; i <= *n; i++)
		if (!strcmp(ps->names[kind][i], name))
			return i;
	if (*n + 1 >= IT_MAX_PHASES)
		return -E2BIG;
	ps->names[kind][++*n] = strdup(name);
	return *n;
}

static int add_probe(struct probes *ps, const char *spec, enum it_probe_role role, int id, bool preset,
		     const char *what)
{
	char err[512];
	struct probe *p;

	if (pyspans__is_spec(spec)) {
		int e = pyspans__add_spec(ps->py, spec, role, id, err, sizeof(err));

		if (e)
			fprintf(stderr, "infertrace: %s: %s\n", what, err);
		return e;
	}
	if (ps->n >= IT_PY_PROBE_BASE) { /* the slots above are the `py:` specs' */
		fprintf(stderr, "infertrace: too many probes (at most %d)\n", IT_PY_PROBE_BASE);
		return -E2BIG;
	}
	if (jsphase__spec_is_js(spec)) {
		/* a phase's js: specs are the jsphase concern's; nothing else takes one */
		fprintf(stderr, "infertrace: %s: js: specs time phases only (--phase NAME=js:FUNC): they are "
			"observed at samples, so their calls cannot be counted nor bound cycles\n", what);
		return -EINVAL;
	}
	p = &ps->probes[ps->n];
	memset(p, 0, sizeof(*p));
	if (probe_spec__parse(spec, &p->spec, err, sizeof(err))) {
		fprintf(stderr, "infertrace: %s: %s\n", what, err);
		return -EINVAL;
	}
	if (p->spec.kind == SPEC_USDT && !p->spec.usdt_end && (role == IT_ROLE_PHASE || role == IT_ROLE_CYCLE)) {
		fprintf(stderr, "infertrace: %s: a USDT probe marks a point in time; a phase or cycle needs "
			"a pair: usdt:OBJECT:PROVIDER:BEGIN:END\n", what);
		probe_spec__free(&p->spec);
		return -EINVAL;
	}
	if (p->spec.kind == SPEC_USDT && p->spec.usdt_end && role != IT_ROLE_PHASE && role != IT_ROLE_CYCLE) {
		fprintf(stderr, "infertrace: %s: a USDT pair (BEGIN:END) only makes sense for --phase or --cycle\n", what);
		probe_spec__free(&p->spec);
		return -EINVAL;
	}
	p->index = ps->n++;
	p->role = role;
	p->id = id;
	p->preset = preset;
	return 0;
}

/* Adds NAME=SPEC[,SPEC...] as probes of a phase (kind 0) or count (kind 1). */
/* A phase name becomes part of file names (stacks.NAME.folded): no '/', no
 * leading '.', no control bytes, and short enough for any filesystem. */
#define MAX_PHASE_NAME 64

static bool phase_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > MAX_PHASE_NAME || name[0] == '.' || strchr(name, '/'))
		return false;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int add_named(struct probes *ps, int kind, const char *name, const char *specs, bool preset)
{
	char *copy, *s, *save = NULL, what[256];
	int id, err = 0;

	if (!kind && !phase_name_ok(name)) {
		fprintf(stderr, "infertrace: --phase '%s': a phase name is part of file names: 1 to %d characters, "
			"no '/', no control characters, not starting with '.'\n", name, MAX_PHASE_NAME);
		return -EINVAL;
	}
	copy = strdup(specs);
	id = name_id(ps, kind, name);

	if (id < 0) {
		fprintf(stderr, "infertrace: too many %s (at most %d)\n", kind ? "counts" : "phases", IT_MAX_PHASES - 1);
		free(copy);
		return id;
	}
	snprintf(what, sizeof(what), "--%s %s", kind ? "count" : "phase", name);
	for (s = strtok_r(copy, ",", &save); s && !err; s = strtok_r(NULL, ",", &save))
		if (kind || !jsphase__spec_is_js(s))
			err = add_probe(ps, s, kind ? IT_ROLE_COUNT : IT_ROLE_PHASE, id, preset, what);
	free(copy);
	return err;
}

static int add_each(struct probes *ps, const char *specs, enum it_probe_role role, int id, const char *what)
{
	char *copy = strdup(specs), *s, *save = NULL;
	int err = copy ? 0 : -ENOMEM, first = ps->n, group = ++ps->nalternatives;

	for (s = copy ? strtok_r(copy, ",", &save) : NULL; s && !err; s = strtok_r(NULL, ",", &save))
		err = add_probe(ps, s, role, id, true, what);
	free(copy);
	/* the names one call had in other llama.cpp versions: one placed is enough */
	for (int i = first; i < ps->n && ps->n - first > 1; i++)
		ps->probes[i].alternatives = group;
	return err;
}

/* A preset probe whose call another of its names found. */
static bool alternative_placed(const struct probes *ps, const struct probe *p)
{
	for (int i = 0; p->preset && p->alternatives && i < ps->n; i++)
		if (ps->probes[i].alternatives == p->alternatives && ps->probes[i].nfiles)
			return true;
	return false;
}

/* llama_decode: two phases and two counts on consecutive ids, so that one
 * cookie names them all. With cycles, the batches' role starts them. */
static int add_batch(struct probes *ps, const struct preset_batch *b, bool cycles, const char *what)
{
	int ph, ph2, cnt, cnt2;

	ph = name_id(ps, 0, b->prompt_phase);
	ph2 = name_id(ps, 0, b->generate_phase);
	cnt = name_id(ps, 1, b->prompt_count);
	cnt2 = name_id(ps, 1, b->generate_count);
	if (ph < 0 || ph2 != ph + 1 || cnt < 0 || cnt2 != cnt + 1) {
		fprintf(stderr, "infertrace: %s: the phases %s and %s (or counts %s, %s) are already named otherwise\n",
			what, b->prompt_phase, b->generate_phase, b->prompt_count, b->generate_count);
		return -EINVAL;
	}
	ps->llama_cycles = cycles;
	return add_each(ps, b->specs, IT_ROLE_LLAMA_DECODE, ph | cnt << 8, what);
}

static bool named_given(const struct named_spec *arr, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arr[i].name, name))
			return true;
	return false;
}

static int collect_requests(struct probes *ps, const struct record_opts *o)
{
	int err = 0;

	if (o->cycle_spec && o->cycle_marker_spec) {
		fprintf(stderr, "infertrace: give either --cycle or --cycle-marker, not both\n");
		return -EINVAL;
	}
	if (o->cycle_spec)
		err = add_probe(ps, o->cycle_spec, IT_ROLE_CYCLE, 0, false, "--cycle");
	if (!err && o->cycle_marker_spec)
		err = add_probe(ps, o->cycle_marker_spec, IT_ROLE_CYCLE_MARKER, 0, false, "--cycle-marker");
	for (int i = 0; i < o->nphases && !err; i++)
		err = add_named(ps, 0, o->phases[i].name, o->phases[i].specs, false);
	for (int i = 0; i < o->ncounts && !err; i++)
		err = add_named(ps, 1, o->counts[i].name, o->counts[i].specs, false);
	for (int i = 0; i < o->npresets && !err; i++) {
		const struct preset *pr = preset__find(o->presets[i]);

		if (!pr) {
			fprintf(stderr, "infertrace: unknown preset '%s'; presets: %s\n", o->presets[i], preset__names());
			return -EINVAL;
		}
		/* the user's own options win over the preset's */
		if (pr->cycle_marker && !o->cycle_spec && !o->cycle_marker_spec)
			err = add_probe(ps, pr->cycle_marker, IT_ROLE_CYCLE_MARKER, 0, true, pr->name);
		if (pr->batch.specs && !err)
			err = add_batch(ps, &pr->batch, !o->cycle_spec && !o->cycle_marker_spec, pr->name);
		/* the batch's prompt phase rides along: thread counts go by phase */
		for (int j = 0, pp = pr->batch.specs ? name_id(ps, 0, pr->batch.prompt_phase) : 0;
		     j < PRESET_MAX_ARGS && pr->args[j].specs && !err; j++)
			err = add_each(ps, pr->args[j].specs, IT_ROLE_LLAMA_ARGS,
				       pr->args[j].which | (pp > 0 ? pp : 0) << 8, pr->name);
		for (int j = 0; j < PRESET_MAX_NAMED && pr->phases[j].name && !err; j++)
			if (!named_given(o->phases, o->nphases, pr->phases[j].name))
				err = add_named(ps, 0, pr->phases[j].name, pr->phases[j].specs, true);
		for (int j = 0; j < PRESET_MAX_NAMED && pr->counts[j].name && !err; j++)
			if (!named_given(o->counts, o->ncounts, pr->counts[j].name))
				err = add_named(ps, 1, pr->counts[j].name, pr->counts[j].specs, true);
		for (int j = 0; j < PRESET_MAX_NAMED && pr->fallback[j].name && !err; j++) {
			int first = ps->n;

			if (named_given(o->phases, o->nphases, pr->fallback[j].name))
				continue;
			err = add_named(ps, 0, pr->fallback[j].name, pr->fallback[j].specs, true);
			for (int k = first; k < ps->n; k++)
				ps->probes[k].fallback = ps->probes[k].dormant = true;
		}
	}
	return err;
}

/* The executable whose code runs: the command (through PATH; a #! script's
 * interpreter) or the first PID's /proc/PID/exe. */
static int find_executable(struct probes *ps, const struct record_opts *o)
{
	char line[PATH_MAX], *nl;
	FILE *f;
	ssize_t n;

	if (o->npids) {
		char link[64], root[64];
		size_t r;

		/* in another mount namespace, the path is reached through its root */
		target__root_prefix(o->pids[0], root, sizeof(root));
		r = strlen(root);
		memcpy(ps->exe, root, r + 1);
		snprintf(link, sizeof(link), "/proc/%d/exe", o->pids[0]);
		n = readlink(link, ps->exe + r, sizeof(ps->exe) - 1 - r);
		if (n < 0)
			return -errno;
		ps->exe[r + n] = 0;
		return 0;
	}
	if (resolve_command_path(o->command[0], ps->exe, sizeof(ps->exe)))
		return -ENOENT;
	f = safe_fopen_regular(ps->exe);
	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2)) {
		char *interp = line + 2, *sp;

		while (*interp == ' ')
			interp++;
		if ((nl = strchr(interp, '\n')))
			*nl = 0;
		sp = strchr(interp, ' ');
		/* "#!/usr/bin/env python3": the interpreter is env's argument */
		if (sp && !strncmp(interp, "/usr/bin/env", sp - interp)) {
			char *arg = sp + 1;

			arg[strcspn(arg, " ")] = 0;
			resolve_command_path(arg, ps->exe, sizeof(ps->exe));
		} else {
			if (sp)
				*sp = 0;
			snprintf(ps->exe, sizeof(ps->exe), "%s", interp);
		}
	}
	if (f)
		fclose(f);
	return 0;
}

static void add_known(const char *path, void *ctx)
{
	struct probes *ps = ctx;

	for (int i = 0; i < ps->nknown; i++)
		if (!strcmp(ps->known[i], path))
			return;
	if (ps->nknown < MAX_KNOWN_FILES)
		ps->known[ps->nknown++] = strdup(path);
}

/* One file under two names (a container's /proc/PID/root/... for each of
 * its processes): a probe placed twice would count every call twice. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* "symbol 'X' not found in FILE; nearest: A, B" (edit distance over the
 * file's function symbols). */
static void missing_symbol_msg(const struct probe *p, const char *file, char *msg, size_t len)
{
	struct nearest nr;
	char near[512];

	nearest__init(&nr, p->spec.symbol);
	elf_nearest_symbols(file, &nr);
	nearest__list(&nr, "", near, sizeof(near));
	snprintf(msg, len, "symbol '%s' not found in %s%s%s", p->spec.symbol, file, near[0] ? "; nearest: " : "",
		 near);
	nearest__free(&nr);
}

/* Resolves the files a probe goes into now. 0 when at least one file holds
 * the symbol/probe; otherwise -ENXIO (no candidate is the library it names)
 * or -ENOENT, with p->error set. */
static int resolve_probe(struct probes *ps, struct probe *p, char **cands, int ncands)
{
	const char *obj = p->spec.object;
	const char *lacks = NULL; /* a file of the object without the symbol */
	char msg[PATH_MAX + 1024];
	int found = 0, matched = 0, file_err = 0;

	for (int i = 0; i < ncands; i++) {
		const char *file = cands[i];
		uint64_t off;
		bool dup = false;
		int r;

		if (!obj ? strcmp(file, ps->exe) :
		    probe_spec__object_is_path(&p->spec) ? strcmp(file, obj) : !probe_spec__name_matches(obj, file))
			continue;
		matched++;
		for (int j = 0; j < p->nfiles; j++)
			if (same_file(p->files[j], file))
				dup = true;
		if (dup) {
			found++;
			continue;
		}
		if (p->spec.kind == SPEC_USDT) {
			r = elf_has_usdt(file, p->spec.provider, p->spec.symbol);
			if (!r && p->spec.usdt_end)
				r = elf_has_usdt(file, p->spec.provider, p->spec.usdt_end);
		} else {
			r = elf_symbol_offset(file, p->spec.symbol, &off);
		}
		if (r == 0 && p->nfiles < MAX_PLACEMENTS) {
			p->files[p->nfiles++] = strdup(file);
			found++;
		}
		if (r && r != -ENOENT)
			file_err = r;
		else if (r)
			lacks = file;
	}
	if (found)
		return 0;
	if (matched && file_err)
		/* EINVAL: safe_open_regular refused a FIFO, device or socket */
		snprintf(msg, sizeof(msg), "cannot read '%s': %s", obj ? obj : ps->exe,
			 file_err == -EINVAL ? "not a regular file" :
			 file_err == -ENOEXEC ? "not an ELF file" : strerror(-file_err));
	else if (!matched)
		snprintf(msg, sizeof(msg), "%s '%s' is not loaded by the target", obj ? "library" : "executable",
			 obj ? obj : ps->exe);
	else if (p->spec.kind == SPEC_FUNCTION && lacks && !p->preset)
		missing_symbol_msg(p, lacks, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "%s '%s' not found in %s", p->spec.kind == SPEC_USDT ? "USDT probe" : "symbol",
			 p->spec.symbol, obj ? obj : ps->exe);
	free(p->error);
	p->error = strdup(msg);
	/* a library by name that no file of the target is: it may come with dlopen */
	return !matched && obj && !probe_spec__object_is_path(&p->spec) ? -ENXIO : -ENOENT;
}

static int probes_configure(struct recording *rec)
{
	struct probes *ps = calloc(1, sizeof(*ps));
	const struct record_opts *o = &rec->opts;
	int err;

	if (!ps)
		return -ENOMEM;
	rec->probes = ps;
	ps->py = pyspans__new();
	if (!ps->py)
		return -ENOMEM;
	err = collect_requests(ps, o);
	if (err)
		return err;
	ps->py_cycles = pyspans__has_role(ps->py, IT_ROLE_CYCLE) || pyspans__has_role(ps->py, IT_ROLE_CYCLE_MARKER);
	ps->cycles_from_probes = o->cycle_spec || o->cycle_marker_spec || ps->llama_cycles;
	if (ps->llama_cycles)
		ps->marker_mode = true;
	rec->tracer.skel->rodata->cfg_llama_cycles = ps->llama_cycles;
	for (int i = 0; i < ps->n; i++)
		if (ps->probes[i].role == IT_ROLE_CYCLE_MARKER || ps->probes[i].role == IT_ROLE_CYCLE)
			ps->cycles_from_probes = true;
	for (int i = 0; i < ps->n; i++)
		if (ps->probes[i].role == IT_ROLE_CYCLE_MARKER)
			ps->marker_mode = true;
	rec->tracer.skel->rodata->cfg_cycles_from_probes = ps->cycles_from_probes;
	if (pyspans__callers_spec(ps->py) >= 0) {
		int role, id;

		pyspans__spec_role(ps->py, pyspans__callers_spec(ps->py), &role, &id);
		if (role != IT_ROLE_PHASE) {
			fprintf(stderr, "infertrace: py:%s names a phase's callers: only in --phase\n", PYSPANS_CALLERS);
			return -EINVAL;
		}
		rec->tracer.skel->rodata->cfg_py_locate_phase = id;
	}
	/* no cycle spec: the Python stacks' timeline suggests one (suggest.h) */
	if (probes__whole_run(rec))
		rec->tracer.skel->rodata->cfg_py_observe = 1;
	bool py_edges = false;

	for (int i = 0; i < pyspans__nspecs(ps->py); i++)
		py_edges |= !pyspans__is_callers(ps->py, i);
	if (pyspans__nspecs(ps->py)) {
		rec->tracer.skel->rodata->cfg_py_observe = 1;
		/* each spec's calls are edges the kernel applies (py_edges_observe) */
		rec->tracer.skel->rodata->cfg_py_edges = pyspans__nspecs(ps->py);
		if (ps->py_cycles && pyspans__has_role(ps->py, IT_ROLE_CYCLE_MARKER))
			ps->marker_mode = true;
		/* a phase timed by its Python callers is timed from the samples'
		 * observations (python.c's replay): edges within ~1 ms */
		if (pyspans__callers_spec(ps->py) >= 0 && !o->frequency_given && rec->opts.frequency < PY_DEFAULT_HZ)
			rec->opts.frequency = PY_DEFAULT_HZ;
	}
	/* the edges' own clock: stack observations without native copies */
	bpf_program__set_autoload(rec->tracer.skel->progs.on_py_tick, py_edges);
	for (int i = 1; i <= ps->nphase_ids; i++)
		rec->phase_names[i] = ps->names[0][i];
	for (int i = 1; i <= ps->ncount_ids; i++)
		rec->count_names[i] = ps->names[1][i];
	/* programs nobody needs are not loaded: the verifier's time is start-up time */
	bool any_usdt = false;

	for (int i = 0; i < ps->n; i++)
		any_usdt |= ps->probes[i].spec.kind == SPEC_USDT;
	bpf_program__set_autoload(rec->tracer.skel->progs.it_usdt, any_usdt);
	bpf_program__set_autoload(rec->tracer.skel->progs.it_uprobe, ps->n > 0);
	bpf_program__set_autoload(rec->tracer.skel->progs.it_uretprobe, ps->n > 0);
	if (!ps->n)
		return 0;

	if (find_executable(ps, o)) {
		fprintf(stderr, "infertrace: cannot find the executable of '%s'; check the command\n",
			o->command ? o->command[0] : "the target");
		return -ENOENT;
	}
	/* candidates: the executable, its DT_NEEDED closure, what the PIDs map */
	char *closure[MAX_KNOWN_FILES];
	int nclosure = elf_needed_closure(ps->exe, closure, MAX_KNOWN_FILES);

	add_known(ps->exe, ps);
	for (int i = 0; i < nclosure; i++) {
		add_known(closure[i], ps);
		free(closure[i]);
	}
	for (int i = 0; i < o->npids; i++)
		proc_exec_files(o->pids[i], add_known, ps);
	for (int i = 0; i < ps->n; i++) {
		struct probe *p = &ps->probes[i];
		char *path_cand[1];
		int r;

		if (probe_spec__object_is_path(&p->spec)) {
			char real[PATH_MAX];

			if (!realpath(p->spec.object, real)) {
				fprintf(stderr, "infertrace: probe '%s': %s: %s\n", p->spec.text, p->spec.object, strerror(errno));
				return -ENOENT;
			}
			free(p->spec.object);
			p->spec.object = strdup(real);
			path_cand[0] = real;
			r = resolve_probe(ps, p, path_cand, 1);
		} else {
			r = resolve_probe(ps, p, ps->known, ps->nknown);
		}
		if (r == -ENXIO && !p->preset) {
			/* torch and its like dlopen CUDA: placed when the target maps it */
			p->waits = true;
			fprintf(stderr, "infertrace: probe '%s' waits for a library named '%s': not loaded by the target "
				"yet, it is placed when the target loads it (dlopen); a path as OBJECT places it now\n",
				p->spec.text, p->spec.object);
		} else if (r && !p->preset) {
			fprintf(stderr, "infertrace: probe '%s': %s; check the name with 'nm -D' or 'readelf -n'\n",
				p->spec.text, p->error);
			return r;
		}
	}
	return 0;
}

/* ---- attaching -------------------------------------------------------- */

static int attach_uprobe(struct recording *rec, struct probe *p, const char *file, enum it_probe_role role,
			 bool ret)
{
	struct bpf_program *prog = ret ? rec->tracer.skel->progs.it_uretprobe : rec->tracer.skel->progs.it_uprobe;
	struct uprobe_link l;
	uint64_t off;
	int err = elf_symbol_offset(file, p->spec.symbol, &off);

	if (err)
		return err;
	/* pid -1: every process mapping the file; BPF keeps only targets, which
	 * covers children forked later */
	err = uprobe_link__attach(&l, prog, ret, -1, file, off, IT_COOKIE(p->index, role, p->id));
	return err ? err : tracer__keep_uprobe_link(&rec->tracer, &l);
}

static int attach_usdt(struct recording *rec, struct probe *p, const char *file, const char *name,
		       enum it_probe_role role)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = IT_COOKIE(p->index, role, p->id));
	struct bpf_link *l = bpf_program__attach_usdt(rec->tracer.skel->progs.it_usdt, -1, file,
						       p->spec.provider, name, &uo);

	if (!l)
		return -errno;
	return tracer__keep_file_link(&rec->tracer, l);
}

static int attach_in_file(struct recording *rec, struct probe *p, const char *file)
{
	bool pair = p->role == IT_ROLE_PHASE || p->role == IT_ROLE_CYCLE || p->role == IT_ROLE_LLAMA_DECODE;
	int err;

	/* The end first: a probe placed while the target runs (a library loaded
	 * late, a `py:` caller's native fallback) could otherwise see a call
	 * enter before its return probe exists, and keep that frame, its phase
	 * current, until some later return of the same probe at the same stack
	 * depth. An end without its beginning is ignored (on_return). */
	if (p->spec.kind == SPEC_USDT) {
		if (!p->spec.usdt_end)
			return attach_usdt(rec, p, file, p->spec.symbol, p->role);
		err = attach_usdt(rec, p, file, p->spec.usdt_end,
				  p->role == IT_ROLE_CYCLE ? IT_ROLE_CYCLE_END : IT_ROLE_PHASE_END);
		return err ? err : attach_usdt(rec, p, file, p->spec.symbol,
					       p->role == IT_ROLE_CYCLE ? IT_ROLE_CYCLE_BEGIN : IT_ROLE_PHASE_BEGIN);
	}
	if (pair && (err = attach_uprobe(rec, p, file, p->role, true)))
		return err;
	return attach_uprobe(rec, p, file, p->role, false);
}

static int lazy_pending(const struct probes *ps)
{
	int n = 0;

	for (int i = 0; i < ps->n; i++)
		if (!ps->probes[i].nfiles && !ps->probes[i].dormant)
			n++;
	return n;
}

/* A probe placed whenever a file of its library's name appears: a
 * preset's, or a user's whose library was not loaded at start. */
static bool placed_by_name(const struct probe *p)
{
	return (p->preset || p->waits) && !probe_spec__object_is_path(&p->spec);
}

/* The library names lazily placed probes watch for (bpf/maps.bpf.h): a
 * file mapped with one of them holds the target until it is looked at. */
static void set_wanted_libs(struct recording *rec)
{
	struct probes *ps = rec->probes;
	volatile char (*w)[IT_WANTED_LIB_LEN] = rec->tracer.skel->bss->wanted_libs;
	__u32 n = 0;

	for (int i = 0; i < ps->n && n < IT_WANTED_LIBS; i++) {
		const struct probe *p = &ps->probes[i];
		char name[IT_WANTED_LIB_LEN];
		bool dup = false;

		if (!placed_by_name(p) || !p->spec.object || !*p->spec.object)
			continue;
		/* a longer name is cut: a prefix still finds its files */
		snprintf(name, sizeof(name), "%s", p->spec.object);
		for (__u32 k = 0; k < n && !dup; k++)
			dup = !strncmp((const char *)w[k], name, sizeof(name));
		if (dup)
			continue;
		for (size_t j = 0; j < sizeof(name); j++)
			w[n][j] = name[j];
		n++;
	}
	rec->tracer.skel->bss->nwanted_libs = n;
}

static int probes_attach(struct recording *rec)
{
	struct probes *ps = rec->probes;

	for (int i = 0; i < ps->n; i++) {
		struct probe *p = &ps->probes[i];

		for (int j = 0; j < p->nfiles && !p->dormant; j++) {
			int err = attach_in_file(rec, p, p->files[j]);

			if (err) {
				fprintf(stderr, "infertrace: placing probe '%s' in %s failed: %s\n", p->spec.text,
					p->files[j], strerror(-err));
				return err;
			}
		}
		if (!p->nfiles && p->preset && rec->opts.verbose)
			fprintf(stderr, "infertrace: probe '%s' waits for its library to be loaded\n", p->spec.text);
	}
	/* while preset probes wait for their library, a target that maps code is
	 * stopped until they are placed, so no early call is missed; so is one
	 * that maps another file of their libraries' names */
	rec->tracer.skel->bss->pending_probes = lazy_pending(ps);
	set_wanted_libs(rec);
	return 0;
}

/* A target mapped code: place the probes whose library just appeared. */
static void place_pending(struct recording *rec, pid_t pid)
{
	struct probes *ps = rec->probes;
	int before = ps->nknown;

	proc_exec_files(pid, add_known, ps);
	if (ps->nknown == before)
		return;
	for (int i = 0; i < ps->n; i++) {
		struct probe *p = &ps->probes[i];
		int had = p->nfiles;

		char *why = p->error;
		int r;

		if (!placed_by_name(p))
			continue;
		/* new files not of its library leave the reason it has */
		p->error = NULL;
		r = resolve_probe(ps, p, ps->known + before, ps->nknown - before);
		if (r == -ENXIO && why) {
			free(p->error);
			p->error = why;
		} else {
			free(why);
		}
		/* its library loaded, without the symbol (or unreadable) */
		if (r == -ENOENT && p->waits && !p->nfiles && !p->lacking) {
			p->lacking = true;
			fprintf(stderr, "infertrace: error: probe '%s': %s; the recording goes on and ends with exit "
				"status %d: check the name with 'nm -D'\n", p->spec.text, p->error, IT_EXIT_TARGET);
		}
		for (int j = had; j < p->nfiles && !p->dormant; j++) {
			int err = attach_in_file(rec, p, p->files[j]);

			if (err)
				fprintf(stderr, "infertrace: warning: placing probe '%s' in %s failed: %s\n",
					p->spec.text, p->files[j], strerror(-err));
			else if (rec->opts.verbose || p->waits)
				fprintf(stderr, "infertrace: probe '%s' placed in %s\n", p->spec.text, p->files[j]);
		}
	}
	rec->tracer.skel->bss->pending_probes = lazy_pending(ps);
}

/* The spec of another probe on fallback p's function, in one of its
 * files; NULL when none. */
static const char *probed_as(const struct probes *ps, const struct probe *p)
{
	for (int i = 0; i < ps->n; i++) {
		const struct probe *q = &ps->probes[i];

		if (q->fallback || !q->spec.symbol || !p->spec.symbol || strcmp(q->spec.symbol, p->spec.symbol))
			continue;
		for (int j = 0; j < q->nfiles; j++)
			for (int k = 0; k < p->nfiles; k++)
				if (!strcmp(q->files[j], p->files[k]))
					return q->spec.text;
	}
	return NULL;
}

void probes__wake_fallback(struct recording *rec, const char *why)
{
	struct probes *ps = rec->probes;

	if (!ps || ps->fallback_why[0])
		return;
	snprintf(ps->fallback_why, sizeof(ps->fallback_why), "%s", why);
	for (int i = 0; i < ps->n; i++) {
		struct probe *p = &ps->probes[i];

		const char *named;

		if (!p->dormant)
			continue;
		/* a function the user times already keeps its one probe */
		if ((named = probed_as(ps, p))) {
			fprintf(stderr, "infertrace: phase '%s': %s; probe '%s' is not placed: the function is "
				"already probed (%s)\n", ps->names[0][p->id], why, p->spec.text, named);
			continue;
		}
		p->dormant = false;
		for (int j = 0; j < p->nfiles; j++) {
			int err = attach_in_file(rec, p, p->files[j]);

			if (err)
				fprintf(stderr, "infertrace: warning: placing probe '%s' in %s failed: %s\n",
					p->spec.text, p->files[j], strerror(-err));
		}
		fprintf(stderr, "infertrace: phase '%s': %s; its statements are timed natively from now on: "
			"probe '%s' placed%s\n", ps->names[0][p->id], why, p->spec.text,
			p->nfiles ? "" : " when its library loads");
	}
	rec->tracer.skel->bss->pending_probes = lazy_pending(ps);
}

/* ---- events ----------------------------------------------------------- */

static struct cycle_span *find_cycle(struct probes *ps, pid_t tgid, uint32_t index)
{
	for (size_t i = ps->ncycles; i-- > 0;)
		if (ps->cycles[i].tgid == tgid && ps->cycles[i].bpf_index == index)
			return &ps->cycles[i];
	return NULL;
}

static void probes_on_event(struct recording *rec, const void *data, size_t size)
{
	struct probes *ps = rec->probes;
	const struct it_event_header *h = data;

	if (!ps)
		return;

	switch (h->type) {
	case IT_EV_MMAP:
		/* a process stopped for this is continued by record.c's on_event */
		if (ps->n)
			place_pending(rec, h->tgid);
		return;
	case IT_EV_CYCLE_BEGIN: {
		const struct it_cycle_event *e = data;
		if (size < sizeof(*e))
			return;
		if (VEC_RESERVE(ps->cycles, ps->capcycles, ps->ncycles, 64)) {
			ps->cycles_not_kept++;
			return;
		}
		ps->cycles[ps->ncycles++] = (struct cycle_span){
			.tgid = h->tgid, .bpf_index = e->cycle, .start_ns = h->ts_ns,
		};
		return;
	}
	case IT_EV_CYCLE_END: {
		const struct it_cycle_event *e = data;
		struct cycle_span *c = size >= sizeof(*e) ? find_cycle(ps, h->tgid, e->cycle) : NULL;

		if (c) {
			c->end_ns = h->ts_ns;
			c->abandoned = e->abandoned;
			if (spool__append(rec->spool, SPOOL_CYCLE, c, sizeof(*c)))
				ps->cycles_not_kept++;
			/* open cycles are few: the last one moves into its place */
			*c = ps->cycles[--ps->ncycles];
		}
		return;
	}
	case IT_EV_PHASE_END: {
		const struct it_phase_event *e = data;
		if (size < sizeof(*e))
			return;
		struct phase_call pc = {
			.tgid = h->tgid, .tid = h->tid, .cycle = e->cycle, .phase = e->phase,
			.probe = e->probe, .entry_ns = e->entry_ns, .exit_ns = h->ts_ns,
		};

		if (spool__append(rec->spool, SPOOL_PHASE_CALL, &pc, sizeof(pc)))
			ps->calls_dropped++;
		return;
	}
	}
}

/* ---- aggregation and output ------------------------------------------- */

static int by_entry(const void *a, const void *b)
{
	const struct phase_call *x = a, *y = b;

	return x->entry_ns < y->entry_ns ? -1 : x->entry_ns > y->entry_ns;
}

uint64_t phase_calls__union_ns(struct phase_call *calls, size_t n, uint64_t from, uint64_t to)
{
	uint64_t total = 0, cur_s = 0, cur_e = 0;
	bool open = false;

	if (!n)
		return 0;
	qsort(calls, n, sizeof(*calls), by_entry);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = calls[i].entry_ns < from ? from : calls[i].entry_ns;
		uint64_t e = calls[i].exit_ns > to ? to : calls[i].exit_ns;

		if (e <= s)
			continue;
		if (open && s <= cur_e) {
			if (e > cur_e)
				cur_e = e;
			continue;
		}
		if (open)
			total += cur_e - cur_s;
		cur_s = s;
		cur_e = e;
		open = true;
	}
	if (open)
		total += cur_e - cur_s;
	return total;
}

/* Ends cycles still open (on a copy: a snapshot leaves them open): at the
 * process's exit, else the recording's end (or now, mid-recording). */
static void close_open_cycles(const struct recording *rec, struct cycle_span *cycles, size_t n, uint64_t now,
			      const struct phase_call *calls, size_t ncalls, const struct pyspan_call *pc, size_t npc)
{
	const struct probes *ps = rec->probes;

	for (size_t i = 0; i < n; i++) {
		struct cycle_span *c = &cycles[i];
		const struct traced_proc *p;

		if (c->end_ns)
			continue;
		p = process_table__find((struct process_table *)&rec->procs, c->tgid);
		c->end_ns = p && p->exited && p->exit_ns ? p->exit_ns : now;
		c->open_at_end = true;
		if (!ps->marker_mode)
			continue;
		/* no next marker: the cycle's work ended with its last phase call
		 * (what follows is the experiment's teardown, not a cycle) */
		uint64_t last = 0;

		for (size_t j = 0; j < ncalls; j++)
			if (calls[j].tgid == c->tgid && calls[j].cycle == c->bpf_index && calls[j].exit_ns > last)
				last = calls[j].exit_ns;
		/* and its `py:@callers` phase, timed in user space */
		for (size_t j = 0; j < npc; j++)
			if (pc[j].role == IT_ROLE_PHASE && pc[j].spec == pyspans__callers_spec(ps->py) &&
			    pc[j].tgid == c->tgid && pc[j].start_ns >= c->start_ns &&
			    !pc[j].open && pc[j].end_ns > last)
				last = pc[j].end_ns;
		if (last > c->start_ns && last < c->end_ns) {
			c->end_ns = last;
			c->ended_at_last_phase = true;
		}
	}
}

bool probes__whole_run(const struct recording *rec)
{
	const struct probes *ps = rec->probes;

	return !ps || !ps->cycles_from_probes;
}

struct pyspans *probes__pyspans(const struct recording *rec)
{
	return rec->probes && pyspans__nspecs(rec->probes->py) ? rec->probes->py : NULL;
}

size_t probes__cycles_seen(const struct recording *rec)
{
	const struct probes *ps = rec->probes;

	return ps ? ps->ncycles + spool__count(rec->spool, SPOOL_CYCLE) + ps->cycles_forgotten : 0;
}

/* The spool's records of one kind appended to a growing array. */
struct spooled {
	void *arr;
	size_t n, cap, elem;
	uint64_t before_ns; /* cycles: only those ending at or after it */
};

static int add_spooled(void *ctx, const void *rec, uint32_t size)
{
	struct spooled *v = ctx;

	if (size != v->elem)
		return -EIO;
	if (v->before_ns && ((const struct cycle_span *)rec)->end_ns < v->before_ns)
		return 0;
	if (vec__reserve(&v->arr, &v->cap, v->n, v->elem, 256))
		return -ENOMEM;
	memcpy((char *)v->arr + v->n++ * v->elem, rec, size);
	return 0;
}

/* The cycles (closed ones from the spool, then the open ones) or the phase
 * calls of the recording so far, in one array the caller frees. */
static int load_spooled(const struct recording *rec, enum spool_kind kind, void **arr, size_t *n)
{
	const struct probes *ps = rec->probes;
	struct spooled v = { .elem = kind == SPOOL_CYCLE ? sizeof(struct cycle_span) : sizeof(struct phase_call) };
	int err = spool__each(rec->spool, kind, add_spooled, &v);

	for (size_t i = 0; !err && kind == SPOOL_CYCLE && i < ps->ncycles; i++)
		err = add_spooled(&v, &ps->cycles[i], sizeof(ps->cycles[i]));
	if (err) {
		free(v.arr);
		return err;
	}
	*arr = v.arr;
	*n = v.n;
	return 0;
}

struct forget {
	uint64_t ns;
	struct cycle_span *left; /* the spooled cycles kept: those just closed */
	size_t nleft;
	const struct probes *ps;
	size_t forgotten;
};

static bool keep_spooled(void *ctx, enum spool_kind kind, const void *rec, uint32_t size)
{
	struct forget *f = ctx;

	(void)size;
	if (kind == SPOOL_CYCLE) {
		bool keep = ((const struct cycle_span *)rec)->end_ns >= f->ns;

		f->forgotten += !keep;
		return keep;
	}
	if (kind == SPOOL_PHASE_CALL) {
		const struct phase_call *c = rec;
		bool keep = c->exit_ns >= f->ns;

		/* the remaining cycles are the few still open, or just closed */
		for (size_t j = 0; j < f->ps->ncycles && !keep; j++)
			keep = f->ps->cycles[j].tgid == c->tgid && f->ps->cycles[j].bpf_index == c->cycle;
		for (size_t j = 0; j < f->nleft && !keep; j++)
			keep = f->left[j].tgid == c->tgid && f->left[j].bpf_index == c->cycle;
		return keep;
	}
	return true;
}

void probes__forget_before(struct recording *rec, uint64_t ns)
{
	struct probes *ps = rec->probes;
	struct spooled left = { .elem = sizeof(struct cycle_span), .before_ns = ns ? ns : 1 };
	struct forget f = { .ns = ns, .ps = ps };
	int err;

	if (!ps)
		return;
	/* the open cycles stay in memory; the spool drops what was written */
	err = spool__each(rec->spool, SPOOL_CYCLE, add_spooled, &left);
	f.left = left.arr;
	f.nleft = left.n;
	if (!err)
		err = spool__filter(rec->spool, keep_spooled, &f);
	if (err)
		fprintf(stderr, "infertrace: warning: forgetting the cycles written failed: %s\n", strerror(-err));
	else
		ps->cycles_forgotten += f.forgotten;
	free(left.arr);
}

static uint64_t map_u64(int fd, const void *key)
{
	uint64_t v = 0;

	bpf_map_lookup_elem(fd, key, &v);
	return v;
}

int phase_call__cmp(const void *a, const void *b)
{
	const struct phase_call *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	if (x->phase != y->phase)
		return x->phase < y->phase ? -1 : 1;
	return x->entry_ns < y->entry_ns ? -1 : x->entry_ns > y->entry_ns;
}

/* First call with a key >= (tgid, cycle, phase) in calls sorted by phase_call__cmp. */
static size_t calls_lower_bound(const struct phase_call *calls, size_t n, pid_t tgid, uint32_t cycle,
				uint32_t phase)
{
	struct phase_call k = { .tgid = tgid, .cycle = cycle, .phase = phase, .entry_ns = 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (phase_call__cmp(&calls[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool cycle_is_empty(const struct recording *rec, const struct cycle_span *c)
{
	struct infertrace_bpf *skel = rec->tracer.skel;
	const struct probes *ps = rec->probes;

	for (int ph = 1; ph <= ps->nphase_ids; ph++) {
		struct it_phase_key k = { .tgid = c->tgid, .cycle = c->bpf_index, .phase = ph };
		struct it_phase_total t = {};

		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.phase_totals), &k, &t) && t.calls)
			return false;
	}
	for (int id = 1; id <= ps->ncount_ids; id++) {
		struct it_count_key k = { .tgid = c->tgid, .cycle = c->bpf_index, .count = id };

		if (map_u64(bpf_map__fd(skel->maps.call_counts), &k))
			return false;
	}
	/* empty only where a probe could have filled it (js: phases have none) */
	for (int i = 0; i < ps->n; i++)
		if (ps->probes[i].role == IT_ROLE_PHASE || ps->probes[i].role == IT_ROLE_COUNT)
			return true;
	return false;
}

/* One cycle's phases and counts from the kernel's per-cycle totals; the
 * union over threads from the calls when every call's event arrived. */
static int fill_cycle(const struct recording *rec, struct model *m, struct model_cycle *mc,
		      struct phase_call *sorted, size_t ncalls)
{
	const struct probes *ps = rec->probes;
	struct infertrace_bpf *skel = rec->tracer.skel;
	int tot_fd = bpf_map__fd(skel->maps.phase_totals), cnt_fd = bpf_map__fd(skel->maps.call_counts);
	int smp_fd = bpf_map__fd(skel->maps.cycle_samples);

	for (int ph = 0; ph < IT_MAX_PHASES; ph++) {
		struct it_cycle_key sk = { .tgid = mc->pid, .cycle = mc->bpf_cycle, .phase = ph };

		mc->samples += map_u64(smp_fd, &sk);
	}
	for (int ph = 1; ph <= ps->nphase_ids; ph++) {
		struct it_phase_key k = { .tgid = mc->pid, .cycle = mc->bpf_cycle, .phase = ph };
		struct it_phase_total t = {};
		size_t first = calls_lower_bound(sorted, ncalls, mc->pid, mc->bpf_cycle, ph), n = 0;
		struct model_cycle_phase *p = &mc->phases[ph];

		bool by_callers = ph == ps->callers_phase;

		/* a phase timed by its Python callers: their calls, not the
		 * native calls that located them */
		if (!by_callers)
			bpf_map_lookup_elem(tot_fd, &k, &t);
		while (first + n < ncalls && sorted[first + n].tgid == mc->pid &&
		       sorted[first + n].cycle == mc->bpf_cycle && sorted[first + n].phase == (uint32_t)ph)
			n++;
		if (by_callers) {
			size_t kept = 0;

			for (size_t i = 0; i < n; i++)
				if (sorted[first + i].probe == PY_PROBE) {
					struct phase_call tmp = sorted[first + kept];

					sorted[first + kept++] = sorted[first + i];
					sorted[first + i] = tmp;
				}
			n = kept;
		}
		for (size_t i = 0; i < n; i++) {
			if (model__add_call_ms(m, ph, (sorted[first + i].exit_ns - sorted[first + i].entry_ns) / 1e6))
				return -ENOMEM;
			/* a `py:` phase has no kernel totals: its calls are all there is */
			if (sorted[first + i].probe == PY_PROBE) {
				p->observed = true;
				t.calls++;
				t.ns += sorted[first + i].exit_ns - sorted[first + i].entry_ns;
			}
		}
		if (!t.calls)
			continue;
		p->present = true;
		p->calls = t.calls;
		p->thread_ms = t.ns / 1e6;
		/* every call's event arrived: the union is exact; else the BPF sum */
		p->ms = n == t.calls ? phase_calls__union_ns(sorted + first, n, 0, UINT64_MAX) / 1e6 : t.ns / 1e6;
	}
	for (int id = 1; id <= ps->ncount_ids; id++) {
		struct it_count_key k = { .tgid = mc->pid, .cycle = mc->bpf_cycle, .count = id };

		mc->has_count[id] = true;
		mc->counts[id] = map_u64(cnt_fd, &k);
	}
	return 0;
}

/* Per phase: its call-duration histogram, and its time outside every cycle
 * (e.g. a model loaded before the first marker). 0 or -errno. */
static int phase_facts(const struct recording *rec, struct model *m)
{
	const struct probes *ps = rec->probes;
	int hist_fd = bpf_map__fd(rec->tracer.skel->maps.probe_hists);
	int tot_fd = bpf_map__fd(rec->tracer.skel->maps.phase_totals);
	struct map_dump d = { 0 };
	int err;

	for (int i = 0; i < ps->n; i++) {
		struct it_probe_hist h;
		__u32 k = ps->probes[i].index;

		if (ps->probes[i].role != IT_ROLE_PHASE || ps->probes[i].id == ps->callers_phase ||
		    bpf_map_lookup_elem(hist_fd, &k, &h))
			continue;
		for (int s = 0; s < IT_HIST_SLOTS; s++)
			m->phase_hist_us[ps->probes[i].id][s] += h.slots[s];
	}
	for (int i = 0; i < pyspans__nspecs(ps->py); i++) {
		struct it_probe_hist h;
		__u32 k = IT_PY_PROBE_BASE + i;
		int role, id;

		pyspans__spec_role(ps->py, i, &role, &id);
		if (role != IT_ROLE_PHASE || pyspans__is_callers(ps->py, i) || bpf_map_lookup_elem(hist_fd, &k, &h))
			continue;
		for (int s = 0; s < IT_HIST_SLOTS; s++)
			m->phase_hist_us[id][s] += h.slots[s];
	}
	err = map_dump__read(&d, tot_fd, sizeof(struct it_phase_key), sizeof(struct it_phase_total), 0);
	for (size_t i = 0; i < d.n; i++) {
		const struct it_phase_key *key = map_dump__key(&d, i);
		const struct it_phase_total *t = map_dump__value(&d, i);

		if (key->cycle != IT_CYCLE_NONE || key->phase >= IT_MAX_PHASES || (int)key->phase == ps->callers_phase)
			continue;
		m->phase_outside_thread_ms[key->phase] += t->ns / 1e6;
		m->phase_outside_calls[key->phase] += t->calls;
	}
	map_dump__free(&d);
	return err;
}

/* A string of the model's name table for a probe; -1 on ENOMEM. */
static int32_t name(struct model *m, const char *s)
{
	return s ? model__intern(m, s) : -1;
}

static int probes_figures(const struct recording *rec, struct model *m)
{
	static const char *const roles[] = { "", "cycle", "cycle_marker", "phase", "count", "", "", "", "",
					     "llama_batch", "llama_args" };
	const struct probes *ps = rec->probes;
	int fd = bpf_map__fd(rec->tracer.skel->maps.probe_hists);

	m->have_probes = true;
	for (int i = 0; i < ps->n; i++) {
		const struct probe *p = &ps->probes[i];
		struct model_probe *o = model__add_probe(m);
		struct it_probe_hist h = {};
		__u32 k = p->index;

		if (!o)
			return -ENOMEM;
		bpf_map_lookup_elem(fd, &k, &h);
		o->spec = name(m, p->spec.text);
		snprintf(o->role, sizeof(o->role), "%s", roles[p->role]);
		if (p->role == IT_ROLE_PHASE)
			o->phase = name(m, rec->phase_names[p->id]);
		if (p->role == IT_ROLE_COUNT)
			o->count = name(m, rec->count_names[p->id]);
		for (int j = 0; j < p->nfiles && !p->dormant; j++) {
			if (VEC_RESERVE(o->placed_in.v, o->placed_in.cap, o->placed_in.n, 4))
				return -ENOMEM;
			o->placed_in.v[o->placed_in.n++] = name(m, p->files[j]);
		}
		o->hits = h.hits;
		o->fallback = p->fallback;
		/* every hit inside a cycle lengthens it: entry + return for timed probes */
		if (p->role == IT_ROLE_PHASE || p->role == IT_ROLE_CYCLE || p->role == IT_ROLE_LLAMA_DECODE)
			m->probe_cost.timed_hits += 2 * h.hits;
		else
			m->probe_cost.point_hits += h.hits;
		o->from_preset = p->preset;
		if (p->dormant)
			o->not_placed = name(m, "not needed: the phase was timed by its Python callers");
		else if (!p->nfiles)
			o->not_placed = name(m, p->error ? p->error : "library never loaded");
	}
	return 0;
}

/* ---- `py:` specs --------------------------------------------------------- */

static int by_call_start(const void *a, const void *b)
{
	const struct pyspan_call *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The cycle of the span (sorted by start) that holds ts in process tgid. */
static uint32_t cycle_at(const struct cycle_span *spans, size_t n, pid_t tgid, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (spans[mid].start_ns <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;)
		if (spans[i].tgid == tgid && ts < spans[i].end_ns)
			return spans[i].bpf_index;
	return IT_CYCLE_NONE;
}

/* A `py:@callers` phase's calls (its callers' replay, timed in user space)
 * as phase calls of the cycles that hold their start. Every other `py:`
 * spec is a kernel edge: its calls arrive as probes' do. */
static int py_phase_calls(const struct pyspan_call *pc, size_t npc, int callers, const struct cycle_span *spans,
			  size_t nspans, struct phase_call **calls, size_t *n)
{
	size_t cap = *n;

	for (size_t i = 0; i < npc; i++) {
		if (pc[i].role != IT_ROLE_PHASE || pc[i].spec != callers)
			continue;
		if (VEC_RESERVE(*calls, cap, *n, 64))
			return -ENOMEM;
		(*calls)[(*n)++] = (struct phase_call){
			.tgid = pc[i].tgid, .tid = pc[i].tid, .phase = pc[i].id, .probe = PY_PROBE,
			.cycle = cycle_at(spans, nspans, pc[i].tgid, pc[i].start_ns),
			.entry_ns = pc[i].start_ns, .exit_ns = pc[i].end_ns,
		};
	}
	return 0;
}

static int py_specs_figures(const struct recording *rec, struct model *m, const struct probes *ps,
			    const struct pyspan_call *pc, size_t npc)
{
	static const char *const roles[] = { "", "cycle", "cycle_marker", "phase", "count" };
	struct pyspans_resolution r;

	pyspans__resolution(ps->py, &r);
	for (int s = 0; s < pyspans__nspecs(ps->py); s++) {
		struct model_probe *o = model__add_probe(m);
		uint64_t calls = 0;
		int role, id;

		if (!o)
			return -ENOMEM;
		pyspans__spec_role(ps->py, s, &role, &id);
		for (size_t i = 0; i < npc; i++)
			calls += pc[i].spec == s;
		o->spec = name(m, pyspans__spec_text(ps->py, s));
		if (role > 0 && role <= IT_ROLE_COUNT)
			snprintf(o->role, sizeof(o->role), "%s", roles[role]);
		if (role == IT_ROLE_PHASE && id > 0 && ps->names[0][id])
			o->phase = name(m, ps->names[0][id]);
		if (role == IT_ROLE_COUNT && id > 0 && ps->names[1][id])
			o->count = name(m, ps->names[1][id]);
		o->hits = calls;
		if (pyspans__is_callers(ps->py, s)) {
			char buf[512], *tok, *save = NULL;

			o->has_callers = true;
			python_concern__callers(rec, buf, sizeof(buf));
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (VEC_RESERVE(o->callers.v, o->callers.cap, o->callers.n, 4))
					return -ENOMEM;
				o->callers.v[o->callers.n++] = name(m, tok + (*tok == ' '));
			}
			/* which way the phase was timed, and why */
			snprintf(o->timed_by, sizeof(o->timed_by), "%s", o->callers.n ? "python_callers" : "native_calls");
			if (ps->fallback_why[0])
				o->native_because = name(m, ps->fallback_why);
		} else {
			/* a kernel edge: what the kernel measured */
			struct it_probe_hist h = {};
			__u32 k = IT_PY_PROBE_BASE + s;
			__u64 st[IT_STAT_MAX];

			if (!bpf_map_lookup_elem(bpf_map__fd(rec->tracer.skel->maps.probe_hists), &k, &h))
				o->hits = h.hits;
			python_concern__edge_resolution(rec, &r);
			tracer__stats((struct tracer *)&rec->tracer, st);
			o->python.has_edges = true;
			o->python.deferred = st[IT_STAT_PY_EDGE_DEFERRED];
			o->python.lost = st[IT_STAT_PY_EDGE_LOST];
		}
		o->has_python = true;
		o->python.observations = r.observations;
		o->python.edges_between_observations = r.edges;
		o->python.resolution_ms_mean = r.mean_ms;
		o->python.resolution_ms_max = r.max_ms;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct cycle_span *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	/* the spool holds cycles in the order they ended: ties in a fixed order */
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->bpf_index < y->bpf_index ? -1 : x->bpf_index > y->bpf_index;
}

/* The cycles of the recording so far: from the probes' edges, or with no
 * --cycle each process's whole traced life as cycle 0. Works on copies of
 * the concern's tables, so that it can run at every snapshot. */
static int probes_spans(struct recording *rec, struct model *m)
{
	struct probes *ps = rec->probes;
	uint64_t now = rec->end_ns ? rec->end_ns : recording__now_ns();
	struct cycle_span *spans = NULL;
	struct phase_call *sorted = NULL;
	struct pyspan_call *pc = NULL;
	size_t nspans = 0, cap = 0, npc = 0, nsorted = 0;
	int err = -ENOMEM;

	if (ps && pyspans__nspecs(ps->py)) {
		if (pyspans__calls(ps->py, &pc, &npc))
			goto out;
		if (npc) /* pc is NULL without calls: qsort wants an array */
			qsort(pc, npc, sizeof(*pc), by_call_start);
	}
	if (ps && load_spooled(rec, SPOOL_PHASE_CALL, (void **)&sorted, &nsorted))
		goto out;
	if (ps && ps->cycles_from_probes) {
		if (load_spooled(rec, SPOOL_CYCLE, (void **)&spans, &nspans))
			goto out;
		cap = nspans;
		close_open_cycles(rec, spans, nspans, now, sorted, nsorted, pc, npc);
	} else {
		for (size_t i = 0; i < rec->procs.n; i++) {
			const struct traced_proc *p = &rec->procs.procs[i];

			if (VEC_RESERVE(spans, cap, nspans, 16))
				goto out;
			spans[nspans++] = (struct cycle_span){
				.tgid = p->pid, .bpf_index = 0,
				.start_ns = p->start_ns > m->run.start_ns ? p->start_ns : m->run.start_ns,
				.end_ns = p->exited && p->exit_ns ? p->exit_ns : now,
			};
		}
	}
	if (nspans > 1) /* qsort's base must not be NULL, even for 0 elements */
		qsort(spans, nspans, sizeof(*spans), by_start);
	if (ps && py_phase_calls(pc, npc, pyspans__callers_spec(ps->py), spans, nspans, &sorted, &nsorted))
		goto out;
	if (ps) {
		ps->callers_phase = 0;
		for (size_t i = 0; i < nsorted && !ps->callers_phase; i++)
			if (sorted[i].probe == PY_PROBE)
				ps->callers_phase = sorted[i].phase;
	}
	if (nsorted)
		qsort(sorted, nsorted, sizeof(*sorted), phase_call__cmp);
	m->cycles_source = !ps || !ps->cycles_from_probes ? "whole_run" :
			   ps->llama_cycles ? "llama_prompt" :
			   ps->marker_mode ? "cycle_marker" : "cycle";
	for (size_t i = 0; i < nspans; i++) {
		const struct cycle_span *c = &spans[i];
		struct model_cycle *mc;

		/* marker cycles with nothing of interest in them (e.g. prompts
		 * tokenized while a model loads) are not experiment cycles */
		if (ps && ps->marker_mode && !ps->py_cycles && cycle_is_empty(rec, c)) {
			m->empty_marker_cycles_dropped++;
			continue;
		}
		mc = model__add_cycle(m, c->tgid, c->bpf_index, c->start_ns, c->end_ns);
		if (!mc)
			goto out;
		mc->open_at_end = c->open_at_end;
		mc->abandoned = c->abandoned;
		mc->ended_at_last_phase = c->ended_at_last_phase;
		if (ps && fill_cycle(rec, m, mc, sorted, nsorted))
			goto out;
	}
	if (ps) {
		for (size_t i = 0; i < nsorted; i++) {
			const struct phase_call *p = &sorted[i];
			struct model_phase_call mpc = {
				.tgid = p->tgid, .tid = p->tid, .bpf_cycle = p->cycle, .phase = p->phase,
				.entry_ns = p->entry_ns, .exit_ns = p->exit_ns,
			};

			if (model__add_phase_call(m, &mpc))
				goto out;
		}
		if (phase_facts(rec, m))
			goto out;
		model__clear_probes(m);
		if (probes_figures(rec, m) || (pyspans__nspecs(ps->py) && py_specs_figures(rec, m, ps, pc, npc)))
			goto out;
		if (ps->calls_dropped + pyspans__not_kept(ps->py, false))
			model__add_lost(m, "phase_calls_not_kept", ps->calls_dropped + pyspans__not_kept(ps->py, false));
		if (ps->cycles_not_kept + pyspans__not_kept(ps->py, true))
			model__add_lost(m, "cycles_not_kept", ps->cycles_not_kept + pyspans__not_kept(ps->py, true));
	}
	err = model__advance(m, MODEL_SPANS, "probes");
out:
	free(spans);
	free(sorted);
	free(pc);
	return err;
}

/* "qualname (file.py)" offered as its qualname */
static void offer_qualname(const char *name, void *ctx)
{
	const char *open = strrchr(name, '(');

	nearest__offer(ctx, name, open && open > name && open[-1] == ' ' ? (size_t)(open - 1 - name) : strlen(name));
}

/* The recording ended: say which probes never found their function (with
 * --strict, a user's spec that never matched fails the run). */
static void probes_stop(struct recording *rec)
{
	struct probes *ps = rec->probes;
	bool strict = rec->opts.strict;

	for (int i = 0; ps && i < ps->n; i++) {
		const struct probe *p = &ps->probes[i];
		bool fails = p->lacking || (strict && !p->preset);

		if (p->nfiles || (!fails && alternative_placed(ps, p)))
			continue;
		fprintf(stderr, "infertrace: %s: probe '%s' was never placed: %s\n", fails ? "error" : "warning",
			p->spec.text, p->error ? p->error : "its library was never loaded");
		if (fails)
			recording__fail_late(rec, p->lacking ? IT_EXIT_TARGET : IT_EXIT_UNMATCHED);
	}
	if (ps && pyspans__nspecs(ps->py)) {
		struct pyspan_call *pc;
		size_t n;

		if (pyspans__calls(ps->py, &pc, &n))
			return;
		int cs = pyspans__callers_spec(ps->py), role, id;
		char callers[512];

		if (cs >= 0) {
			pyspans__spec_role(ps->py, cs, &role, &id);
			if (*python_concern__callers(rec, callers, sizeof(callers)))
				fprintf(stderr, "infertrace: phase '%s' timed as its Python callers: %s\n",
					rec->phase_names[id], callers);
			else if (ps->fallback_why[0])
				fprintf(stderr, "infertrace: phase '%s' timed from its native calls: %s\n",
					rec->phase_names[id], ps->fallback_why);
		}
		for (int s = 0; s < pyspans__nspecs(ps->py); s++) {
			bool seen = false;

			if (s == cs)
				continue; /* a native program's phase has no Python callers */

			for (size_t i = 0; i < n && !seen; i++)
				seen = pc[i].spec == s;
			if (!seen) {
				struct nearest nr;
				char near[512];

				nearest__init(&nr, pyspans__spec_qualname(ps->py, s));
				python__each_name(offer_qualname, &nr);
				nearest__list(&nr, "py:", near, sizeof(near));
				nearest__free(&nr);
				fprintf(stderr, "infertrace: %s: '%s' was never seen on a Python stack (no supported "
					"CPython in the target, or the function never ran)%s%s\n",
					strict ? "error" : "warning", pyspans__spec_text(ps->py, s),
					near[0] ? "; nearest seen: " : "", near);
				if (strict)
					recording__fail_late(rec, IT_EXIT_UNMATCHED);
			}
		}
		free(pc);
	}
}

static void probes_cleanup(struct recording *rec)
{
	struct probes *ps = rec->probes;

	if (!ps)
		return;
	for (int i = 0; i < ps->n; i++) {
		for (int j = 0; j < ps->probes[i].nfiles; j++)
			free(ps->probes[i].files[j]);
		probe_spec__free(&ps->probes[i].spec);
		free(ps->probes[i].error);
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < IT_MAX_PHASES; i++)
			free(ps->names[k][i]);
	for (int i = 0; i < ps->nknown; i++)
		free(ps->known[i]);
	free(ps->cycles);
	pyspans__free(ps->py);
	free(ps);
	rec->probes = NULL;
}

const struct concern probes_concern = {
	.name = "probes",
	.configure = probes_configure,
	.attach = probes_attach,
	.on_event = probes_on_event,
	.spans = probes_spans,
	.stop = probes_stop,
	.cleanup = probes_cleanup,
};
