/* output/out_file.c: -o FILE replaced whole or not at all, in a scratch
 * folder. The SIGKILL and unwritable-folder cases are tests/live/outfile_test.sh. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "output/output.h"
#include "tests/unit/check.h"

static char dir[64], path[128];

static char *slurp(const char *p)
{
	static char buf[256];
	FILE *f = fopen(p, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	return f ? buf : "(none)";
}

static void put(const char *p, const char *s)
{
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* The folder's entries, sorted, space-separated. */
static const char *listing(void)
{
	static char buf[512];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			strncat(buf, names[i]->d_name, sizeof(buf) - strlen(buf) - 2);
			strcat(buf, " ");
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return buf;
}

int main(void)
{
	struct out_file *of;
	FILE *f;
	char link[160], target[160];

	strcpy(dir, "/tmp/ftstack-outfile.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/r.txt", dir);
	put(path, "old");

	CHECK(out_file_open(path, false, &of, &f) == 0, "open over an existing FILE");
	fputs("half", f);
	fflush(f);
	CHECK_STR(slurp(path), "old", "written, not committed: FILE is the old one");
	CHECK_STR(listing(), "r.txt ", "the new file has no name yet");
	out_file_abort(of);
	CHECK_STR(slurp(path), "old", "aborted: FILE is the old one");
	CHECK_STR(listing(), "r.txt ", "aborted: nothing left");

	chmod(path, 0604);
	CHECK(out_file_open(path, false, &of, &f) == 0, "open again");
	fputs("new", f);
	CHECK(out_file_commit(of) == 0, "commit");
	CHECK_STR(slurp(path), "new", "committed: FILE is the new one");
	CHECK_STR(listing(), "r.txt ", "committed: nothing else");
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0604, "FILE keeps its mode");

	snprintf(path, sizeof(path), "%s/fresh.txt", dir);
	CHECK(out_file_open(path, false, &of, &f) == 0, "open a FILE that does not exist");
	fputs("x", f);
	CHECK(out_file_commit(of) == 0 && strcmp(slurp(path), "x") == 0, "it exists once committed");
	unlink(path);

	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	put(target, "passwd");
	CHECK(symlink(target, link) == 0, "a symlink at FILE");
	CHECK_EQ_U64(-out_file_open(link, false, &of, &f), ELOOP, "refused without force");
	CHECK_STR(slurp(target), "passwd", "its target unchanged");
	CHECK(out_file_open(link, true, &of, &f) == 0, "opened with force");
	fputs("forced", f);
	CHECK(out_file_commit(of) == 0, "commit through it");
	CHECK_STR(slurp(target), "forced", "force replaced the target");
	struct stat lst;
	CHECK(lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode), "the symlink stays");

	CHECK_EQ_U64(-out_file_open(dir, false, &of, &f), EISDIR, "a folder is refused");
	snprintf(path, sizeof(path), "%s/no/such/dir/r.txt", dir);
	CHECK_EQ_U64(-out_file_open(path, false, &of, &f), ENOENT, "a missing folder: ENOENT");
	CHECK(out_file_open("/dev/null", false, &of, &f) == 0 && out_file_commit(of) == 0,
	      "/dev/null is written in place");
	struct stat dn;
	CHECK(stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode), "/dev/null is still a device");
	out_file_abort(NULL);

	unlink(link);
	unlink(target);
	snprintf(path, sizeof(path), "%s/r.txt", dir);
	unlink(path);
	rmdir(dir);
	CHECK_DONE();
}
