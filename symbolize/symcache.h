/* Address → frame name, each distinct address resolved once (collector/). */
#ifndef FTSTACK_SYMCACHE_H
#define FTSTACK_SYMCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include "symbolize/symbolize.h"

struct ft_symcache;

/* How names are written: -s, -v, and user names demangled unless
 * --no-demangle. */
struct ft_symcache_style {
	bool offsets, addresses, demangle;
};

/* Returns 0 and a cache naming kernel addresses through K and user addresses
 * through PROCS (either may be NULL: names are then "[unknown]"), or -ENOMEM. */
int ft_symcache_create(const struct sym_kernel *k, struct sym_procs *procs,
		       const struct ft_symcache_style *style, struct ft_symcache **out);
void ft_symcache_free(struct ft_symcache *c);
/* Names kernel addresses through K from now on (the kernel's symbols are
 * loaded when first needed, after the cache was made). */
void ft_symcache_set_kernel(struct ft_symcache *c, const struct sym_kernel *k);
/* Returns the frame name of ADDR: a kernel address when PID is 0, else a user
 * address of PID at TIME (LEAF: the sampled instruction itself, not a return
 * address). Never NULL; owned by the cache. */
const char *ft_symcache_name(struct ft_symcache *c, uint32_t pid, uint64_t time, uint64_t addr,
			     bool leaf);
/* Returns how many distinct addresses were resolved. */
uint64_t ft_symcache_resolved(const struct ft_symcache *c);

#endif
