/* User functions and USDT probes as events (bcc stackcount's LIB:func,
 * p:LIB:func, -l LIB func, u:LIB:probe; bpftrace's uprobe:PATH:func and
 * usdt:PATH:[provider:]probe). Probes are placed by file offset, through the
 * uprobe PMU when present, else uprobe_events in group ftstack_<pid>. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mem/mem.h"
#include "plan/internal.h"
#include "host/host.h"
#include "plan/spec.h"

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* True when PATH (followed through symlinks) starts with the ELF magic. */
static bool is_elf(const char *path)
{
	char magic[4] = "";
	FILE *f = fopen(path, "rb");
	bool elf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "\177ELF", 4) == 0;
	if (f)
		fclose(f);
	return elf;
}

/* "c" → libc.so.6 as the process (-p) maps it: a mapped file whose name is
 * libNAME.so... or libNAME-... or NAME itself. */
static int lib_in_maps(const char *proc_root, pid_t pid, const char *lib, char *out, size_t len)
{
	char path[512], line[4352];
	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	FILE *f = fopen(path, "r");
	size_t l = strlen(lib);
	int ret = -ENOENT;
	while (f && ret && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		const char *base = strrchr(file, '/') + 1;
		if ((strncmp(base, "lib", 3) == 0 && strncmp(base + 3, lib, l) == 0 &&
		     (base[3 + l] == '.' || base[3 + l] == '-')) || strcmp(base, lib) == 0) {
			snprintf(out, len, "%s", file);
			ret = 0;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

/* As the dynamic linker would find libNAME.so: LD_LIBRARY_PATH, then the
 * multiarch and usual directories; then NAME as a program on PATH. */
static int lib_search(const char *lib, char *out, size_t len)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/lib",
	};
	char pat[PATH_MAX];
	const char *ld = getenv("LD_LIBRARY_PATH");
	char *ldcopy = ld ? strdup(ld) : NULL, *save = NULL;
	const char *extra[32];
	int nextra = 0;
	for (char *d = ldcopy ? strtok_r(ldcopy, ":", &save) : NULL; d && nextra < 32;
	     d = strtok_r(NULL, ":", &save))
		extra[nextra++] = d;
	int ret = -ENOENT;
	for (int i = 0; ret && i < nextra + (int)(sizeof(dirs) / sizeof(*dirs)); i++) {
		/* cppcheck-suppress uninitvar ; extra[i] is set for every i < nextra */
		const char *d = i < nextra ? extra[i] : dirs[i - nextra];
		glob_t g;
		snprintf(pat, sizeof(pat), "%s/lib%s.so*", d, lib);
		if (glob(pat, 0, NULL, &g) == 0) {
			/* the shortest ELF name is the soname (libc.so.6, not
			 * libc.so.6.debug; libc.so is a linker script with -dev) */
			size_t best = g.gl_pathc;
			for (size_t j = 0; j < g.gl_pathc; j++)
				if (is_elf(g.gl_pathv[j]) && (best == g.gl_pathc ||
				    strlen(g.gl_pathv[j]) < strlen(g.gl_pathv[best])))
					best = j;
			if (best < g.gl_pathc) {
				snprintf(out, len, "%s", g.gl_pathv[best]);
				ret = 0;
			}
		}
		globfree(&g);
	}
	free(ldcopy);
	if (ret == 0)
		return 0;
	const char *path = getenv("PATH");
	char *pcopy = strdup(path ? path : "/usr/bin:/bin");
	save = NULL;
	for (char *d = pcopy ? strtok_r(pcopy, ":", &save) : NULL; d && ret;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(pat, sizeof(pat), "%s/%s", d, lib);
		if (is_file(pat) && access(pat, X_OK) == 0) {
			snprintf(out, len, "%s", pat);
			ret = 0;
		}
	}
	free(pcopy);
	return ret;
}

static int resolve_lib(const struct ft_options *o, const struct ft_plan *p, const char *lib,
		       char *out, size_t len)
{
	char real[PATH_MAX];
	int ret = -ENOENT;
	if (strchr(lib, '/')) {
		snprintf(out, len, "%s", lib);
		ret = is_file(lib) ? 0 : -ENOENT;
	} else {
		for (int i = 0; ret && i < o->npids; i++)
			ret = lib_in_maps(p->proc_root, o->pids[i], lib, out, len);
		if (ret)
			ret = lib_search(lib, out, len);
	}
	if (ret == 0 && realpath(out, real))
		snprintf(out, len, "%s", real); /* uprobes want the file, not a symlink */
	return ret;
}

static int add_uprobe(struct ft_plan *p, const char *display, const char *path, uint64_t offset,
		      uint64_t ref_ctr, bool function)
{
	struct ft_event e = { .in_stack = function, .entry_fix = function, .offset = offset,
			      .ref_ctr = ref_ctr };
	snprintf(e.name, sizeof(e.name), "%s", display);
	const char *label = strrchr(display, ':');
	snprintf(e.label, sizeof(e.label), "%s", label ? label + 1 : display);
	snprintf(e.path, sizeof(e.path), "%s", path);
	/* -c/-p children must inherit the probe: uprobe_events (ft_plan.inherit) */
	/* (without tracefs the PMU is all there is; the run said it was chosen) */
	int pmu = p->tfs_events || (p->inherit && p->tracefs[0]) ? -1 :
		  host_pmu_type(p->sys_root, "uprobe");
	if (pmu >= 0) {
		e.kind = FT_EV_UPROBE_PMU;
		e.perf_type = (uint32_t)pmu;
		p->mechanism = p->mechanism ? p->mechanism : "uprobe PMU";
		return ft_plan_add(p, &e);
	}
	e.kind = FT_EV_TRACEPOINT;
	e.perf_type = PERF_TYPE_TRACEPOINT;
	snprintf(e.system, sizeof(e.system), "%s", p->group);
	snprintf(e.event, sizeof(e.event), "u%d_%.40s", p->nevents, e.label);
	for (char *c = e.event; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			*c = '_';
	snprintf(e.dyn_file, sizeof(e.dyn_file), "uprobe_events");
	char ref[32] = "";
	if (ref_ctr)
		snprintf(ref, sizeof(ref), "(0x%llx)", (unsigned long long)ref_ctr);
	/* the ftrace backend has no user stack copy: the event itself fetches
	 * the return address at [sp] for the entry caller */
	snprintf(e.dyn_def, sizeof(e.dyn_def), "p:%s/%s %s:0x%llx%s%s", p->group, e.event, path,
		 (unsigned long long)offset, ref,
		 function && p->tfs_events ? " " FT_ENTRY_RA "=$stack0" : "");
	p->mechanism = p->mechanism ? p->mechanism : "uprobe_events";
	return ft_plan_add(p, &e);
}

struct func_match {
	const char *pattern;
	const char *path;
	const char *lib;
	struct ft_plan *p;
	uint64_t *seen;
	int nseen;
	size_t capseen;
	int err;
};

static int on_function(void *ctx, const char *name, uint64_t vaddr, uint64_t size)
{
	(void)size;
	struct func_match *m = ctx;
	uint64_t off;
	if (fnmatch(m->pattern, name, 0) != 0 || sym_file_vaddr_to_offset(m->path, vaddr, &off) < 0)
		return 0;
	for (int i = 0; i < m->nseen; i++)
		if (m->seen[i] == off)
			return 0; /* .symtab and .dynsym, or aliases: one probe per address */
	if (MEM_GROW(m->seen, m->capseen, (size_t)m->nseen + 1, 32))
		return m->err = -ENOMEM;
	m->seen[m->nseen++] = off;
	char display[300];
	snprintf(display, sizeof(display), "%s:%s", m->lib, name);
	m->err = add_uprobe(m->p, display, m->path, off, 0, true);
	return m->err;
}

static int plan_functions(const struct ft_spec *sp, struct ft_plan *p, const char *path)
{
	struct sym_elf *elf = NULL;
	int ret = sym_elf_load(path, "/usr/lib/debug", &elf);
	if (ret < 0) {
		ft_error("%s: not an ELF file I can read (%s)", path, strerror(-ret));
		return -EINVAL;
	}
	struct func_match m = { .pattern = sp->name, .path = path, .lib = sp->lib, .p = p };
	int before = p->nevents;
	sym_elf_foreach(elf, on_function, &m);
	sym_elf_free(elf);
	free(m.seen);
	if (m.err < 0)
		return m.err;
	if (p->nevents == before) {
		ft_error("%s: no function matching '%s' in %s", sp->text, sp->name,
			path);
		return -EINVAL;
	}
	return 0;
}

/* USDT probes matching the spec; 0 found is not an error here. */
static int plan_usdt(const struct ft_spec *sp, struct ft_plan *p, const char *path, int *found)
{
	struct sym_usdt *u = NULL;
	int n = sym_usdt_list(path, &u);
	*found = 0;
	for (int i = 0; i < n; i++) {
		if ((sp->provider[0] && fnmatch(sp->provider, u[i].provider, 0) != 0) ||
		    fnmatch(sp->name, u[i].name, 0) != 0)
			continue;
		char display[400];
		snprintf(display, sizeof(display), "u:%s:%s:%s", sp->lib, u[i].provider, u[i].name);
		int ret = add_uprobe(p, display, path, u[i].offset, u[i].sem_offset, false);
		if (ret < 0) {
			free(u);
			return ret;
		}
		(*found)++;
	}
	free(u);
	return 0;
}

int ft_plan_uprobe(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	char path[PATH_MAX];
	if (resolve_lib(o, p, sp->lib, path, sizeof(path)) < 0) {
		ft_error("%s: cannot find library or program '%s'%s", sp->text,
			sp->lib, o->npids ? " in the process's maps or the library path" :
			" (give a path, or -p PID to look in a process's maps)");
		return -EINVAL;
	}
	if (sp->kind == FT_SPEC_UPROBE)
		return plan_functions(sp, p, path);
	int found = 0;
	int ret = plan_usdt(sp, p, path, &found);
	if (ret < 0 || found)
		return ret;
	if (!sp->provider[0]) {
		/* bpftrace reads u:PATH:NAME as a uprobe when PATH has no such probe */
		ft_warn("%s has no USDT probe '%s'; tracing function %s instead",
			path, sp->name, sp->name);
		return plan_functions(sp, p, path);
	}
	ft_error("%s: no USDT probe %s:%s in %s", sp->text, sp->provider,
		sp->name, path);
	return -EINVAL;
}
