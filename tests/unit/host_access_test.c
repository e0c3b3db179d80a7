/* The seccomp side of what this user may do (host/access.c, issue 33): the
 * mode read from a fixture /proc, and host_access_probe's answer under real
 * seccomp filters installed in forked children (a filter needs no
 * privilege, only no_new_privs), as a container runtime's profile would
 * answer perf_event_open: EPERM (podman's without CAP_SYS_ADMIN), ENOSYS
 * (a call the profile does not list) or nothing (a profile that allows it). */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "host/host.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

static void test_fixture(void)
{
	char dir[] = "/tmp/ftstack-access.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char proc[600], sys[600];
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	/* a podman container's status, as Linux 6.18 writes it */
	test_put_file(dir, "proc/self/status", "Name:\tftstack\nCapEff:\t0000004000000000\n"
	    "NoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n");
	struct host_access h;
	int mode = -9;
	CHECK(host_seccomp(proc, "self", &mode) == 0 && mode == 2, "Seccomp: 2 read (%d)", mode);
	CHECK(host_access_read(proc, sys, &h) == 0 && h.seccomp == 2 && h.perf_seccomp == 0 &&
	      host_access_has(&h, HOST_CAP_PERFMON),
	      "host_access_read: seccomp 2 (a filter), CAP_PERFMON, nothing probed yet");
	CHECK(host_child_pidns(proc, "self") == -ENOENT && !h.child_pidns, "no ns/pid link: not known");
	char link[700];
	snprintf(link, sizeof(link), "%s/self/ns", proc);
	mkdir(link, 0755);
	strcat(link, "/pid");
	CHECK(symlink("pid:[4026532481]", link) == 0 && host_child_pidns(proc, "self") == 1 &&
	      host_access_read(proc, sys, &h) == 0 && h.child_pidns,
	      "pid:[4026532481]: a child pid namespace (a container's)");
	unlink(link);
	CHECK(symlink("pid:[4026531836]", link) == 0 && host_child_pidns(proc, "self") == 0,
	      "pid:[4026531836] (PROC_PID_INIT_INO): the host's");
	test_put_file(dir, "proc/self/status", "Name:\tftstack\nCapEff:\t0000000000000000\nSeccomp:\t0\n");
	CHECK(host_access_read(proc, sys, &h) == 0 && h.seccomp == 0, "Seccomp: 0, no filter");
	h.perf_seccomp = -EPERM;
	host_access_probe(&h);
	CHECK(h.perf_seccomp == 0, "mode 0: no filter, perf_seccomp cleared");
	/* Linux before 3.8 writes no Seccomp line */
	test_put_file(dir, "proc/self/status", "Name:\tftstack\nCapEff:\t0000000000000000\n");
	CHECK(host_seccomp(proc, "self", &mode) == -ENOENT, "no Seccomp line: -ENOENT");
	CHECK(host_access_read(proc, sys, &h) == 0 && h.seccomp == -1, "no Seccomp line: mode -1");
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "fixture removed");
}

/* Installs a filter answering perf_event_open with RET (SECCOMP_RET_*),
 * every other call allowed. Returns 0 or -errno. */
static int install_filter(unsigned ret)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ret),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* In a child under a filter answering perf_event_open with RET: the mode
 * host_access_read reads from the real /proc, and what host_access_probe
 * finds. Returns 0, -errno when the filter could not be installed, or
 * NO_ANSWER when the child died first. */
#define NO_ANSWER 1
static int probe_under(unsigned ret, int *mode, int *found)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -errno;
	fflush(stdout); /* the child's copy of the buffer is never written */
	pid_t pid = fork();
	if (pid == 0) {
		int out[3] = { 0, 0, 0 };
		struct host_access h;
		out[0] = install_filter(ret);
		if (out[0] == 0) {
			host_access_read("/proc", "/sys", &h);
			host_access_probe(&h);
			out[1] = h.seccomp;
			out[2] = h.perf_seccomp;
		}
		_exit(write(fds[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	int in[3] = { NO_ANSWER, 0, 0 };
	if (pid < 0 || read(fds[0], in, sizeof(in)) != sizeof(in))
		in[0] = NO_ANSWER;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	*mode = in[1];
	*found = in[2];
	return in[0];
}

static void test_probe(void)
{
	int mode, found;
	int ret = probe_under(SECCOMP_RET_ERRNO | EPERM, &mode, &found);
	if (ret < 0) {
		SKIP(strerror(-ret), "seccomp filters: none can be installed here");
		return;
	}
	CHECK(ret == 0, "the child under a filter answered (it did not die probing)");
	CHECK(mode == 2 && found == -EPERM,
	      "a filter answering EPERM (podman's without CAP_SYS_ADMIN): mode %d, probe %d", mode, found);
	ret = probe_under(SECCOMP_RET_ERRNO | ENOSYS, &mode, &found);
	CHECK(ret == 0 && mode == 2 && found == -ENOSYS,
	      "a filter answering ENOSYS (a profile that does not list it): mode %d, probe %d", mode, found);
	ret = probe_under(SECCOMP_RET_ALLOW, &mode, &found);
	CHECK(ret == 0 && mode == 2 && found == 0,
	      "a filter that allows perf_event_open: the kernel answers, probe %d", found);
}

int main(void)
{
	test_fixture();
	test_probe();
	CHECK_DONE();
}
