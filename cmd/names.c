/* The names of stripped binaries' frames, for a run and for report: whether
 * debuginfod is used (--debuginfod, --no-debuginfod, else DEBUGINFOD_URLS),
 * who fetches (under sudo the invoking user: task/sudo_user.c), the
 * progress line of a long download, and the one line a failure is worth. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "symbolize/symbolize.h"

/* A download shorter than this shows no progress (unless DEBUGINFOD_PROGRESS). */
#define SLOW_SECONDS 1.0

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* DEBUGINFOD_URLS from /etc/debuginfod/ *.urls (Debian's
 * libdebuginfod-common puts its server there; its profile.d script does the
 * same for login shells). Returns true when some URL was found. */
static bool urls_from_etc(void)
{
	glob_t g;
	char urls[2048] = "", word[512];
	size_t len = 0;
	if (glob("/etc/debuginfod/*.urls", 0, NULL, &g) != 0)
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "re");
		while (f && fscanf(f, "%511s", word) == 1)
			if (word[0] != '#' && len + strlen(word) + 2 < sizeof(urls))
				len += (size_t)snprintf(urls + len, sizeof(urls) - len, "%s%s",
							len ? " " : "", word);
		if (f)
			fclose(f);
	}
	globfree(&g);
	return len && setenv("DEBUGINFOD_URLS", urls, 1) == 0;
}

static void on_progress(void *ctx, const char *file, long done, long total)
{
	struct ft_names *n = ctx;
	double t = now();
	if (file != n->file) { /* a new fetch */
		n->file = file;
		n->start = t;
		n->last = 0;
	}
	bool always = getenv("DEBUGINFOD_PROGRESS") != NULL;
	/* a terminal's line is rewritten; a log gets a line at most each 10 s */
	if ((!always && t - n->start < SLOW_SECONDS) || t - n->last < (n->tty ? 0.1 : 10.0) ||
	    (!n->tty && total <= 0))
		return; /* no download under way: a log gets the failure's one line, if it fails */
	n->last = t;
	n->shown = true;
	if (n->tty && total > 0)
		ft_progress_line("debuginfod: %s's debug file: %.1f of %.1f MB", file, done / 1e6,
				 total / 1e6);
	else if (n->tty)
		ft_progress_line("debuginfod: %s's debug file: %.1f MB", file, done / 1e6);
	else
		ft_warn("debuginfod: %s's debug file: %.1f of %.1f MB", file, done / 1e6,
			total / 1e6);
}

int ft_names_open(const struct ft_options *o, struct ft_names *n)
{
	*n = (struct ft_names){ .debug_dir = o->debug_dir ? o->debug_dir : "/usr/lib/debug",
				.tty = isatty(STDERR_FILENO) };
	if (o->debuginfod == FT_DEBUGINFOD_OFF ||
	    (o->debuginfod == FT_DEBUGINFOD_ENV && !sym_debuginfod_urls()))
		return 0;
	if (!sym_debuginfod_urls() && !urls_from_etc()) {
		ft_error("--debuginfod: no server to ask: set DEBUGINFOD_URLS (e.g. "
			 "https://debuginfod.debian.net)");
		return 2;
	}
	int ret = ft_sudo_user(&n->who);
	if (ret < 0)
		return ret == -EINVAL ? 2 : 1;
	struct sym_debuginfod_user u = { .drop = n->who.drop, .uid = n->who.uid, .gid = n->who.gid,
					 .groups = n->who.groups, .ngroups = n->who.ngroups,
					 .envp = n->who.envp };
	if ((ret = sym_debuginfod_alloc(&u, on_progress, n, &n->client)) < 0) {
		if (ret == -ENOENT)
			ft_error("--debuginfod: %s (Debian's libdebuginfod1 has it)",
				 sym_debuginfod_load_error());
		else
			ft_error("out of memory");
		return 1;
	}
	return 0;
}

void ft_names_close(struct ft_names *n)
{
	struct sym_debuginfod_stats st;
	sym_debuginfod_stats(n->client, &st);
	if (n->shown && n->tty)
		ft_progress_line(NULL);
	if (st.failed)
		ft_warn("debuginfod: %s from %s after %.1f s; frames of stripped files stay "
			"[file] (DEBUGINFOD_URLS, DEBUGINFOD_TIMEOUT)",
			strerror(-st.last_error), sym_debuginfod_urls(), st.seconds);
	if (n->client)
		ft_debug("debuginfod: %u debug files, %u unknown to the servers, %.2f s",
			 st.fetched, st.missing, st.seconds);
	sym_debuginfod_free(n->client);
	n->client = NULL;
	ft_sudo_user_free(&n->who);
}

void ft_names_check(char *buf, size_t len, bool *ok)
{
	const char *urls = sym_debuginfod_urls();
	*ok = urls != NULL;
	if (urls)
		snprintf(buf, len, "libdebuginfod client; DEBUGINFOD_URLS=%s: stripped binaries' "
			 "frames are named by build-id (--no-debuginfod: not)", urls);
	else
		snprintf(buf, len, "libdebuginfod client; DEBUGINFOD_URLS is not set: stripped "
			 "binaries' frames stay [file] (set it, or --debuginfod for "
			 "/etc/debuginfod/*.urls)");
}
