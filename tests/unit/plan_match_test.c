/* plan: ft_plan_match_events on the tracefs fixture tree. A glob-free name
 * is read from its id file alone; whatever it answers must be what the full
 * listing (tfs_events_match) answers for the same name. */
#include <errno.h>
#include <stdlib.h>
#include "plan/internal.h"
#include "tests/unit/check.h"

#define FIXTURE "tests/unit/fixtures/tracefs"

/* Both ways for SYSTEM:NAME: the same count and the same events. */
static void same_as_listing(const char *system, const char *name, bool regex, int want)
{
	struct tfs_event *a = NULL, *b = NULL;
	int na = ft_plan_match_events(FIXTURE, system, name, regex, &a);
	int nb = tfs_events_match(FIXTURE, system, name, regex, &b);
	CHECK(na == want && nb == want, "%s:%s%s: %d matches (listing: %d), want %d", system,
	      name, regex ? " (regex)" : "", na, nb, want);
	bool same = na == nb;
	for (int i = 0; same && i < na; i++)
		same = strcmp(a[i].system, b[i].system) == 0 && strcmp(a[i].name, b[i].name) == 0 &&
		       a[i].id == b[i].id;
	CHECK(same, "%s:%s: the same events and ids as the listing", system, name);
	free(a);
	free(b);
}

int main(void)
{
	struct tfs_event *ev = NULL;
	int n = ft_plan_match_events(FIXTURE, "kmem", "kmalloc", false, &ev);
	CHECK(n == 1 && ev && strcmp(ev[0].system, "kmem") == 0 &&
	      strcmp(ev[0].name, "kmalloc") == 0, "kmem:kmalloc by its id file: %d", n);
	uint32_t id = 0;
	CHECK(n == 1 && tfs_event_id(FIXTURE, "kmem", "kmalloc", &id) == 0 && ev[0].id == id,
	      "kmem:kmalloc's id is its id file's (%u)", n == 1 ? ev[0].id : 0);
	free(ev);

	same_as_listing("kmem", "kmalloc", false, 1);
	same_as_listing("syscalls", "sys_enter_openat", false, 1);
	same_as_listing("kmem", "no_such_event", false, 0);
	same_as_listing("no_such_system", "kmalloc", false, 0);
	same_as_listing("kmem", "broken", false, 0);   /* its id file is not a number */
	same_as_listing("kmem", "kfree/enable", false, 0);
	same_as_listing("..", "kmem", false, 0);
	same_as_listing("kmem", "k*", false, 2); /* kfree, kmalloc */
	same_as_listing("kmem", "kmalloc", true, 1);
	same_as_listing("kmem", "kmal.*", true, 1);

	n = ft_plan_match_events("/nonexistent", "kmem", "kmalloc", false, &ev);
	CHECK(n == -ENOENT && !ev, "no tracefs: the listing's error (%d)", n);
	CHECK_DONE();
}
