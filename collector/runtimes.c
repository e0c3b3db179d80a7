/* The language runtimes whose code ftstack walks and names, one table:
 * what tells each apart (its program or a library it maps), how its frames
 * come out, and what it must be run with for that; `ftstack check` lists
 * them, and a run whose stacks went through JIT code no perf map names
 * says what the runtime needs (ft_jit_note, ft_jit_summary). Apart from
 * ustack.c because it is knowledge of other programs, which grows one row
 * at a time (the Python frame reader adds its own). */
#include <string.h>
#include "collector/result.h"
#include "collector/session.h"
#include "tracefs/tracefs.h"

static const struct ft_runtime runtimes[] = {
	{ "node", { "node", "libnode.so" },
	  "JIT frames by frame pointers (V8 keeps them), named by /tmp/perf-PID.map",
	  "--perf-basic-prof (and --interpreted-frames-native-stack to name interpreted functions)" },
	{ "java", { "libjvm.so" },
	  "JIT frames by frame pointers, named by /tmp/perf-PID.map",
	  "-XX:+PreserveFramePointer, and -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit "
	  "or jcmd PID Compiler.perfmap" },
	{ "python 3.12+", { "libpython3.12", "libpython3.13", "libpython3.14", "python3.12",
			    "python3.13", "python3.14" },
	  "-X perf trampolines stepped by their template (libpython's _Py_trampoline_func_start), "
	  "named by /tmp/perf-PID.map",
	  "-X perf (or PYTHONPERFSUPPORT=1)" },
};

const struct ft_runtime *ft_runtime_table(size_t *n)
{
	*n = sizeof(runtimes) / sizeof(runtimes[0]);
	return runtimes;
}

const struct ft_runtime *ft_runtime_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		for (int j = 0; j < FT_RUNTIME_FILES && runtimes[i].files[j]; j++) {
			size_t len = strlen(runtimes[i].files[j]);
			/* the name, or the name and a version or suffix after a dot
			 * (libjvm.so, libpython3.12.so.1.0, python3.12) */
			if (strncmp(base, runtimes[i].files[j], len) == 0 &&
			    (base[len] == '\0' || base[len] == '.'))
				return &runtimes[i];
		}
	return NULL;
}

int ft_runtimes_check(struct tfs_check_item *items, int max)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]) && n < max; i++, n++) {
		items[n].what = runtimes[i].name;
		items[n].ok = true;
		snprintf(items[n].detail, sizeof(items[n].detail), "runtime: %s; run with %s",
			 runtimes[i].walk, runtimes[i].needs);
	}
	return n;
}

/* The runtime of SMP's process: the program's, else that of a file one of
 * its N user frames FRAMES is in */
static const struct ft_runtime *runtime_in(struct sym_procs *procs,
					   const struct perfev_sample *smp,
					   const uint64_t *frames, uint32_t n)
{
	const char *path;
	uint64_t bias;
	const struct ft_runtime *rt = NULL;
	if (sym_procs_program(procs, smp->pid, smp->time, &path) == 0)
		rt = ft_runtime_of(path);
	for (uint32_t i = 0; !rt && i < n; i++)
		if (sym_procs_module(procs, smp->pid, smp->time, frames[i], &path, &bias) == 0)
			rt = ft_runtime_of(path);
	return rt;
}

void ft_jit_note(struct ft_jit_notes *j, struct sym_procs *procs,
		 const struct perfev_sample *smp, uint64_t anon, const uint64_t *frames,
		 uint32_t n)
{
	j->procs = procs;
	for (int i = 0; i < FT_JIT_PIDS; i++) {
		struct ft_jit_pid *p = &j->pids[i];
		if (p->samples && p->pid != smp->pid)
			continue;
		if (!p->samples)
			*p = (struct ft_jit_pid){ .pid = smp->pid, .time = smp->time, .addr = anon };
		/* a sample's frames may be JIT code alone (no libjvm.so in them):
		 * the next ones are asked too, a few, while none has told */
		if (!p->runtime && p->samples < FT_JIT_RUNTIME_TRIES)
			p->runtime = runtime_in(procs, smp, frames, n);
		p->samples++;
		return;
	}
}

void ft_jit_summary(const struct ft_jit_notes *j, struct ft_summary *sm)
{
	uint64_t most = 0;
	for (int i = 0; i < FT_JIT_PIDS && j->procs; i++) {
		const struct ft_jit_pid *p = &j->pids[i];
		struct sym_frame fr;
		/* asked now, at the end: a JVM writes its map as it exits. A
		 * process with a map was run with the flag, even where the map
		 * does not name the first address (a V8 stub it does not log
		 * once failed jit_test under ASan): no advice */
		if (!p->samples || sym_procs_has_perfmap(j->procs, p->pid) ||
		    (sym_procs_lookup(j->procs, p->pid, p->time, p->addr, &fr) == 0 && fr.name))
			continue;
		sm->jit_unnamed += p->samples;
		if (p->samples > most) {
			most = p->samples;
			sm->jit_runtime = p->runtime ? p->runtime->name : NULL;
			sm->jit_needs = p->runtime ? p->runtime->needs : NULL;
		}
	}
}
