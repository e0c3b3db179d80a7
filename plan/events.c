/* The plan's list of events: adding to it, tracefs events by name (one id
 * read, or the listing for patterns), which refusals of the kernel skip an
 * event rather than fail the run, and saying what was refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "plan/plan.h"
#include "plan/internal.h"

int ft_plan_add(struct ft_plan *p, const struct ft_event *e)
{
	if (MEM_GROW(p->events, p->capevents, (size_t)p->nevents + 1, 4))
		return -ENOMEM;
	p->events[p->nevents++] = *e;
	return 0;
}

bool ft_plan_refusal(int err)
{
	switch (-err) {
	case EINVAL:       /* blacklisted, not a probe-safe address */
	case ENOENT:       /* no such symbol (any more) */
	case EADDRNOTAVAIL: /* the name is not unique (6.6+, and backports) */
	case EILSEQ:       /* not at an instruction boundary */
	case EBUSY:
	case EEXIST:
	case EOPNOTSUPP:
	case 524:          /* ENOTSUPP, the kernel's own */
		return true;
	default:
		return false; /* out of fds or memory, no permission: the run fails */
	}
}

static const char *refusal_hint(int err)
{
	return err == -EADDRNOTAVAIL ? ": several functions have this name" :
	       err == -EINVAL ? ": kprobe blacklist or no probe-safe address" : "";
}

/* One "N reason (name, name, ...)" group per distinct errno, a few names each. */
static void append_refusals(const struct ft_plan *p, char *buf, size_t len)
{
	int seen[8], nseen = 0;
	for (int i = 0; i < p->nevents && nseen < 8; i++) {
		int err = p->events[i].refused;
		bool dup = false;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == err;
		if (!err || dup)
			continue;
		seen[nseen++] = err;
		int n = 0;
		for (int j = 0; j < p->nevents; j++)
			n += p->events[j].refused == err;
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s%d %s%s (", nseen > 1 ? "; " : "", n,
			 strerror(-err), refusal_hint(err));
		for (int j = 0, shown = 0; j < p->nevents && shown < 5; j++) {
			if (p->events[j].refused != err)
				continue;
			used = strlen(buf);
			snprintf(buf + used, len - used, "%s%s", shown++ ? ", " : "", p->events[j].name);
		}
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s)", n > 5 ? ", ..." : "");
	}
}

int ft_plan_report_refused(const struct ft_plan *p)
{
	int refused = 0;
	for (int i = 0; i < p->nevents; i++)
		refused += p->events[i].refused != 0;
	if (p->noptional <= 1 && !refused)
		return 0;
	char why[1024] = "";
	append_refusals(p, why, sizeof(why));
	ft_warn("attached %d of %d kernel function%s%s%s",
		p->noptional - refused, p->noptional, p->noptional == 1 ? "" : "s",
		refused ? "; the kernel refused " : "", why);
	if (refused < p->noptional)
		return 0;
	ft_error("nothing left to trace");
	return -ENOENT;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

int ft_plan_match_events(const char *root, const char *system, const char *name, bool regex,
			 struct tfs_event **out)
{
	struct tfs_event ev = { .id = 0 };
	*out = NULL;
	/* a miss or anything odd takes the listing, which says why */
	if (regex || is_glob(system) || is_glob(name) || system[0] == '.' || name[0] == '.' ||
	    strchr(system, '/') || strchr(name, '/') || strlen(system) >= sizeof(ev.system) ||
	    strlen(name) >= sizeof(ev.name) || tfs_event_id(root, system, name, &ev.id) < 0)
		return tfs_events_match(root, system, name, regex, out);
	if (!(*out = malloc(sizeof(**out))))
		return -ENOMEM;
	strcpy(ev.system, system);
	strcpy(ev.name, name);
	**out = ev;
	return 1;
}
