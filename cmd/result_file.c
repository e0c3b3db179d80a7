/* Where the result goes: stdout, or -o FILE through output's atomic writer
 * (out_file_*), with the message a person reads when FILE is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"

int ft_dest_open(const struct ft_options *o, struct ft_dest *r)
{
	r->f = stdout;
	r->file = NULL;
	if (!o->output)
		return 0;
	int ret = out_file_open(o->output, o->force, &r->file, &r->f);
	if (ret == 0)
		return 0;
	r->f = NULL;
	if (ret == -ELOOP)
		ft_error("-o %s is a symlink, which ftstack does not write through "
			"(it would replace what it points to); remove it, or give --force",
			o->output);
	else if (ret == -EISDIR)
		ft_error("-o %s is a directory; give a file name", o->output);
	else
		ft_error("cannot write %s: %s; nothing was changed", o->output,
			strerror(-ret));
	return ret == -ELOOP || ret == -EISDIR ? 2 : 1;
}

int ft_dest_close(const struct ft_options *o, struct ft_dest *r, bool complete)
{
	int ret = 0;
	if (r->file && complete) {
		ret = out_file_commit(r->file);
		if (ret < 0)
			ft_error("cannot write %s: %s; it was left as it was",
				o->output, strerror(-ret));
	} else if (r->file) {
		out_file_abort(r->file);
	}
	r->file = NULL;
	r->f = NULL;
	return ret < 0 ? 1 : 0;
}
