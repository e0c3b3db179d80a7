/* Readers of /proc and /sys, each under a root the caller gives. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host/host.h"

/* Parses a decimal CPU number at *p, advancing it. Returns it, or -1. */
static long cpu_number(const char **p)
{
	const char *s = *p;
	long v = 0;
	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s++ - '0');
		if (v > 1000000)
			return -1;
	}
	*p = s;
	return v;
}

int host_cpu_list_parse(const char *s, bool *cpus, int max, const char **bad)
{
	int top = 0;
	const char *p = s;
	do {
		const char *item = p;
		long lo = cpu_number(&p), hi = lo;
		if (lo >= 0 && *p == '-') {
			p++;
			hi = cpu_number(&p);
		}
		if (lo < 0 || hi < lo || (*p && *p != ',' && *p != '\n')) {
			if (bad)
				*bad = item;
			return -EINVAL;
		}
		if (hi >= max) {
			if (bad)
				*bad = item;
			return -ERANGE;
		}
		for (long c = lo; c <= hi; c++)
			cpus[c] = true;
		if (hi + 1 > top)
			top = (int)hi + 1;
	} while (*p == ',' && *++p);
	return top;
}

int host_read_line(const char *root, const char *rel, char *buf, size_t size)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int ret = fgets(buf, (int)size, f) ? 0 : -EINVAL;
	fclose(f);
	return ret;
}

int host_online_cpus(const char *sys_root, bool *online, int max)
{
	char buf[4096];
	int ret = host_read_line(sys_root, "devices/system/cpu/online", buf, sizeof(buf));
	if (ret < 0)
		return ret;
	/* CPUs beyond what ftstack can hold are left out, not an error */
	bool *all = calloc(65536, sizeof(bool));
	if (!all)
		return -ENOMEM;
	ret = host_cpu_list_parse(buf, all, 65536, NULL);
	int top = 0;
	for (int c = 0; ret > 0 && c < max && c < ret; c++)
		if ((online[c] = all[c]))
			top = c + 1;
	free(all);
	return ret < 0 ? ret : top;
}

int host_tasks(const char *proc_root, pid_t pid, pid_t *out, int max)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%d/task", proc_root, (int)pid);
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return 0;
	for (struct dirent *de; n < max && (de = readdir(d));) {
		int tid = atoi(de->d_name);
		if (tid > 0)
			out[n++] = tid;
	}
	closedir(d);
	return n;
}

int host_stat(const char *proc_root, pid_t tid, struct host_stat *st)
{
	char path[512], buf[1024];
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	st->state = p[2];
	st->flags = 0;
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &st->flags) != 1)
		return -EINVAL;
	return 0;
}

bool host_task_running(const char *proc_root, pid_t tid)
{
	struct host_stat st;
	return host_stat(proc_root, tid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

/* Reads the "KEY:" line of ROOT/WHO/status with FMT into *out. */
static int status_field(const char *proc_root, const char *who, const char *fmt, void *out)
{
	char path[512], line[256];
	snprintf(path, sizeof(path), "%s/%s/status", proc_root, who);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int ret = -ENOENT;
	while (ret < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, out) == 1)
			ret = 0;
	fclose(f);
	return ret;
}

int host_tgid(const char *proc_root, pid_t tid, pid_t *tgid)
{
	char who[16];
	int v;
	snprintf(who, sizeof(who), "%d", (int)tid);
	int ret = status_field(proc_root, who, "Tgid: %d", &v);
	if (ret == 0)
		*tgid = v;
	return ret;
}

int host_cap_eff(const char *proc_root, const char *who, uint64_t *eff)
{
	unsigned long long v;
	int ret = status_field(proc_root, who, "CapEff: %llx", &v);
	if (ret == 0)
		*eff = v;
	return ret;
}

int host_child_pidns(const char *proc_root, const char *who)
{
	char path[512], link[64];
	unsigned long long ino;
	snprintf(path, sizeof(path), "%s/%s/ns/pid", proc_root, who);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (sscanf(link, "pid:[%llu]", &ino) != 1)
		return -EINVAL;
	/* the initial pid namespace has a fixed inode (PROC_PID_INIT_INO);
	 * NSpid cannot tell: a container's /proc shows its own ids only */
	return ino != 0xEFFFFFFCull;
}

int host_seccomp(const char *proc_root, const char *who, int *mode)
{
	return status_field(proc_root, who, "Seccomp: %d", mode);
}

int host_pmu_type(const char *sys_root, const char *name)
{
	char rel[160], buf[32];
	snprintf(rel, sizeof(rel), "bus/event_source/devices/%s/type", name);
	if (host_read_line(sys_root, rel, buf, sizeof(buf)) < 0)
		return -1;
	char *end;
	long type = strtol(buf, &end, 10);
	return end != buf && type >= 0 && type <= 0x7fffffff ? (int)type : -1;
}
