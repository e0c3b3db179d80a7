/* host: cgroup2 folders, their ids and paths (--cgroup, --per-cgroup). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "host/host.h"
#include "mem/mem.h"

/* mountinfo writes blanks, tabs, newlines and backslashes as \ooo. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; w++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w = *r++;
		}
	}
	*w = '\0';
}

int host_cgroup2_mount(const char *proc_root, char *buf, size_t len)
{
	char path[PATH_MAX], line[4096];
	snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int ret = -ENOENT;
	while (ret == -ENOENT && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE ... */
		char *dash = strstr(line, " - "), *save = NULL;
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) != 0)
			continue;
		char *tok = strtok_r(line, " ", &save);
		for (int i = 0; tok && i < 4; i++)
			tok = strtok_r(NULL, " ", &save);
		if (!tok)
			continue;
		unescape(tok);
		ret = snprintf(buf, len, "%s", tok) < (int)len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return ret;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int host_cgroup_resolve(const char *mount, const char *arg, char *abs, size_t abslen,
			char *rel, size_t rellen)
{
	size_t ml = strlen(mount);
	while (ml > 1 && mount[ml - 1] == '/')
		ml--;
	const char *tail;
	if (strncmp(arg, mount, ml) == 0 && (arg[ml] == '/' || arg[ml] == '\0') && is_dir(arg))
		tail = arg + ml; /* the folder's own path */
	else
		tail = arg;      /* a path from the cgroup root */
	while (*tail == '/')
		tail++;
	if (strstr(tail, "..") || strchr(tail, '\n'))
		return -ENOENT; /* never a folder outside the mount */
	int n = snprintf(abs, abslen, "%.*s%s%s", (int)ml, mount, *tail ? "/" : "", tail);
	if (n < 0 || (size_t)n >= abslen)
		return -ENAMETOOLONG;
	n = snprintf(rel, rellen, "/%s", tail);
	if (n < 0 || (size_t)n >= rellen)
		return -ENAMETOOLONG;
	size_t rl = strlen(rel), al = strlen(abs);
	while (rl > 1 && rel[rl - 1] == '/')
		rel[--rl] = '\0';
	while (al > 1 && abs[al - 1] == '/')
		abs[--al] = '\0';
	return is_dir(abs) ? 0 : -ENOENT;
}

int host_cgroup_id(const char *path, uint64_t *id)
{
	/* kernfs hands out an 8-byte handle, the id the kernel puts in samples */
	union {
		struct file_handle fh;
		char room[sizeof(struct file_handle) + 64];
	} h;
	int mount_id;
	h.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	if (h.fh.handle_bytes < sizeof(*id))
		return -EINVAL;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

/* ABS's id, then every folder under it; REL is ABS from the cgroup root. */
static int walk(char *abs, size_t abslen, char *rel, size_t rellen, int depth,
		int (*fn)(void *ctx, uint64_t id, const char *path), void *ctx)
{
	uint64_t id;
	int ret = host_cgroup_id(abs, &id);
	if (ret == 0 && (ret = fn(ctx, id, rel)) != 0)
		return ret;
	if (ret < 0 || depth > 64)
		return 0; /* gone meanwhile, or absurdly deep: the rest is still named */
	DIR *d = opendir(abs);
	if (!d)
		return 0;
	size_t al = strlen(abs), rl = strlen(rel);
	struct dirent *e;
	while (ret == 0 && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		size_t nl = strlen(e->d_name);
		if (al + 1 + nl >= abslen || rl + 1 + nl >= rellen)
			continue;
		snprintf(abs + al, abslen - al, "/%s", e->d_name);
		snprintf(rel + rl, rellen - rl, "%s%s", rl > 1 ? "/" : "", e->d_name);
		ret = walk(abs, abslen, rel, rellen, depth + 1, fn, ctx);
		abs[al] = '\0';
		rel[rl] = '\0';
	}
	closedir(d);
	return ret;
}

int host_cgroup_walk(const char *mount, int (*fn)(void *ctx, uint64_t id, const char *path),
		     void *ctx)
{
	char abs[PATH_MAX], rel[PATH_MAX] = "/";
	if (snprintf(abs, sizeof(abs), "%s", mount) >= (int)sizeof(abs))
		return -ENAMETOOLONG;
	return walk(abs, sizeof(abs), rel, sizeof(rel), 0, fn, ctx);
}

int host_cgroup_names_add(struct host_cgroup_names *m, uint64_t id, const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].id == id) {
			free(m->v[i].path);
			m->v[i].path = copy;
			return 0;
		}
	}
	if (MEM_GROW(m->v, m->cap, m->n + 1, 64) < 0) {
		free(copy);
		return -ENOMEM;
	}
	m->v[m->n++] = (struct host_cgroup_name){ id, copy };
	return 0;
}

const char *host_cgroup_names_find(const struct host_cgroup_names *m, uint64_t id)
{
	/* looked up once per distinct stack when printing, not per sample */
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].id == id)
			return m->v[i].path;
	return NULL;
}

void host_cgroup_names_free(struct host_cgroup_names *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	*m = (struct host_cgroup_names){ 0 };
}
