/* cli/: what the messages module and progress write (messages.c,
 * progress.c), and -c's command split into words (command_split.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/progress.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

/* What the messages module writes: stderr redirected to a file. */
static void test_messages(void)
{
	struct test_stderr c;
	if (!test_stderr_begin(&c))
		return;
	ft_warn("%d stacks", 3);
	ft_error("cannot %s", "write");
	ft_debug("not shown");
	ft_debug_on = true;
	ft_debug("shown %s", "now");
	ft_debug_on = false;
	ft_note("Tracing %s.", "x");
	struct ft_progress p;
	ft_progress_start(&p, "attaching", "probes", 100); /* not a terminal: plain lines */
	for (int i = 0; i < 100; i++)
		ft_progress_step(&p);
	ft_progress_end(&p);
	ft_progress_start(&p, "attaching", "probes", 5); /* too few for progress */
	ft_progress_end(&p);
	CHECK_STR(test_stderr_end(&c), "ftstack: 3 stacks\nftstack: cannot write\nftstack: debug: shown now\n"
		  "Tracing x.\nftstack: attaching 100 probes...\n",
		  "warn, error, debug only with --debug, the opening line, progress");
}

/* -c's words: quotes group, a shell's operators go through /bin/sh -c. */
static void test_command_split(void)
{
	char **argv = NULL;
	CHECK(ft_command_split("make -j2 'a b'", &argv) == 0 && argv && strcmp(argv[2], "a b") == 0 &&
	      argv[3] == NULL, "-c splitting: quotes group words");
	if (argv) {
		free(argv[0]);
		free(argv);
	}
	CHECK(ft_command_split("a | b", &argv) == 0 && strcmp(argv[0], "/bin/sh") == 0,
	      "-c with a pipe runs through /bin/sh -c");
	if (argv) {
		free(argv[2]);
		free(argv);
	}
	CHECK(ft_command_split("echo 'open", &argv) == -EINVAL, "an unbalanced quote is refused");
}

int main(void)
{
	test_messages();
	test_command_split();
	CHECK_DONE();
}
