/* Who the -c command runs as when ftstack was started through sudo: the
 * invoking user (SUDO_UID, SUDO_GID), with that user's groups, HOME, USER
 * and LOGNAME, as `sudo -u USER` would set them. Everything is looked up
 * here, in the parent, so the forked child only calls setgroups, setgid,
 * setuid and execve. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mem/mem.h"
#include "cli/cli.h"
#include "task/task.h"

extern char **environ;

/* A decimal id below (id_t)-1 (the "no change" value of setuid). */
static int parse_id(const char *s, unsigned long *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v >= (unsigned long)(uid_t)-1)
		return -EINVAL;
	*out = v;
	return 0;
}

static int user_groups(const char *name, gid_t gid, struct ft_child *c)
{
	size_t cap = 0, need = 32;
	for (int tries = 0; tries < 8; tries++) {
		if (need > INT_MAX || MEM_GROW(c->groups, cap, need, 32))
			return -ENOMEM;
		int want = (int)cap;
		if (getgrouplist(name, gid, c->groups, &want) >= 0) {
			c->ngroups = want;
			return 0;
		}
		need = want > (int)cap ? (size_t)want : cap + 1; /* too few: as many as it said */
	}
	return -E2BIG;
}

/* environ without HOME, USER and LOGNAME, then the user's three. */
static int user_env(const char *user, const char *home, struct ft_child *c)
{
	size_t n = 0, k = 0;
	while (environ && environ[n])
		n++;
	char **e = calloc(n + 4, sizeof(*e));
	char *h = malloc(strlen(home) + 6), *u = malloc(strlen(user) + 6);
	char *l = malloc(strlen(user) + 9);
	if (!e || !h || !u || !l) {
		free(e);
		free(h);
		free(u);
		free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "HOME=", 5) && strncmp(environ[i], "USER=", 5) &&
		    strncmp(environ[i], "LOGNAME=", 8))
			e[k++] = environ[i];
	sprintf(h, "HOME=%s", home);
	sprintf(u, "USER=%s", user);
	sprintf(l, "LOGNAME=%s", user);
	e[k++] = h;
	e[k++] = u;
	e[k++] = l;
	c->envp = e;
	return 0;
}

int ft_sudo_user(struct ft_child *c)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long uid, gid;
	c->drop = false;
	if (getuid() != 0 || (!su && !sg))
		return 0;
	if (parse_id(su, &uid) < 0 || parse_id(sg, &gid) < 0) {
		ft_error("SUDO_UID='%s' SUDO_GID='%s' name no user to run the "
			"command as; fix them, or give --keep-root to run it as root",
			su ? su : "", sg ? sg : "");
		return -EINVAL;
	}
	if (uid == 0)
		return 0; /* sudo from root: root already */
	const struct passwd *pw = getpwuid((uid_t)uid);
	char idname[32];
	snprintf(idname, sizeof(idname), "%lu", uid);
	/* a uid with no passwd entry: its own gid only, and no home */
	const char *user = pw ? pw->pw_name : idname, *home = pw ? pw->pw_dir : "/";
	int ret = pw ? user_groups(pw->pw_name, (gid_t)gid, c) : 0;
	if (ret == 0 && !pw) {
		if (!(c->groups = malloc(sizeof(*c->groups))))
			return -ENOMEM;
		c->groups[0] = (gid_t)gid;
		c->ngroups = 1;
	}
	if (ret == 0)
		ret = user_env(user, home, c);
	if (ret < 0)
		return ret;
	c->uid = (uid_t)uid;
	c->gid = (gid_t)gid;
	c->drop = true;
	return 0;
}

void ft_sudo_user_free(struct ft_child *c)
{
	if (c->envp) {
		size_t n = 0;
		while (c->envp[n])
			n++;
		/* the last three are ours; the rest belong to environ */
		for (size_t i = n >= 3 ? n - 3 : 0; i < n; i++)
			free(c->envp[i]);
		free(c->envp);
		c->envp = NULL;
	}
	free(c->groups);
	c->groups = NULL;
	c->ngroups = 0;
}
