/* ftstack check's answers for this boot's runs: a line a file in
 * /run/ftstack (per boot, as what it measured), read by the runs that
 * follow (user-stacks: ustack.c; ring-maps: ring_maps.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "collector/session.h"

#define SAVED_DIR "/run/ftstack"

int ft_saved_write(const char *name, const char *line)
{
	char path[128], tmp[136];
	snprintf(path, sizeof(path), SAVED_DIR "/%s", name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	mkdir(SAVED_DIR, 0755);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", line);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		return -errno;
	return 0;
}

int ft_saved_read(const char *name, char *line, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), SAVED_DIR "/%s", name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	bool ok = fgets(line, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}
