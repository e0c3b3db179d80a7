/* Kernel and user function events. */
#include <errno.h>
#include <stdio.h>
#include "collector/collector.h"
#include "collector/spec.h"

int ft_plan_kfunc(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	(void)o; (void)p;
	fprintf(stderr, "ftstack: kernel function '%s': kprobes are missing in this kernel\n", sp->name);
	return -EINVAL;
}

int ft_plan_uprobe(const struct ft_options *o, const struct ft_spec *sp, struct ft_plan *p)
{
	(void)o; (void)p;
	fprintf(stderr, "ftstack: user function '%s': not supported yet\n", sp->text);
	return -EINVAL;
}
