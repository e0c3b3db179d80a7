/* The kernel's symbols and the kernel-stack filters, loaded by a thread of
 * their own: reading /proc/kallsyms is ~35 ms of the kernel's time and
 * parsing it ~10 ms more (once a boot: the copy saved then is mapped
 * back in ~0.6, symbolize/kallsyms_cache.c), and finding the machinery
 * ranges ~3, which the event loop must not spend while the rings fill.
 * See kfilter.h. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include "cli/cli.h"
#include "collector/kfilter.h"
#include "symbolize/symbolize.h"

/* The load runs while the traced program does, and on a small machine
 * shares a CPU with it: at nice 19 it yields (a 50,000-call getppid run
 * under ftstack, 2 busy vCPUs, workload median of 9: 97 ms when kallsyms
 * was read before it started, 178 ms with the load at nice 0, 142 ms at
 * nice 19). Whoever waits for it gives it its priority back (root may;
 * others wait longer), and so does a queue of samples grown long
 * (ft_ksyms_queued). */
#define LOAD_NICE 19

struct ft_kload {
	pthread_t thread;
	_Atomic pid_t tid;    /* the thread's, once it runs */
	_Atomic bool hurried; /* ft_kload_hurry called: the thread's priority is NICE */
	int nice;             /* the process's, when the load started */
	int efd;
	char *path;
	bool track_mmaps;
	int err;              /* the load's: 0, or -errno */
	struct sym_kernel *k; /* NULL when the load failed */
	struct ft_kfilter f;
};

int ft_ksyms_read(const char *path, struct sym_kernel **k)
{
	static const char *said[] = { [SYM_KERNEL_READ] = "read", [SYM_KERNEL_READ_SAVED] =
		"read and saved in", [SYM_KERNEL_SAVED] = "read back from" };
	char file[4096];
	enum sym_kernel_whence whence;
	bool cached = strcmp(path, FT_KALLSYMS) == 0 && sym_kernel_cache_file(file, sizeof(file)) == 0;
	int ret = sym_kernel_load_cached(path, cached ? file : NULL, "", k, &whence);
	if (ret == 0)
		ft_debug("kernel symbols %s %s", said[whence], whence == SYM_KERNEL_READ ? path : file);
	return ret;
}

int ft_kload_now(const char *path, bool track_mmaps, struct sym_kernel **k,
		 struct ft_kfilter *f)
{
	memset(f, 0, sizeof(*f));
	*k = NULL;
	int ret = ft_ksyms_read(path, k);
	if (ret < 0)
		return ret;
	if ((ret = ft_kfilter_init(f, *k, track_mmaps)) < 0) {
		ft_kfilter_free(f);
		sym_kernel_free(*k);
		*k = NULL;
	}
	return ret;
}

static void *load_main(void *arg)
{
	struct ft_kload *kl = arg;
	uint64_t one = 1;
	pid_t tid = gettid();
	setpriority(PRIO_PROCESS, (id_t)tid, LOAD_NICE); /* best effort */
	atomic_store(&kl->tid, tid);
	/* a hurry that came before TID was there found none to raise: a
	 * thread at nice 19 may wait long between those two lines (an ASan
	 * run of kload_test saw it) */
	if (atomic_load(&kl->hurried))
		setpriority(PRIO_PROCESS, (id_t)tid, kl->nice);
	kl->err = ft_kload_now(kl->path, kl->track_mmaps, &kl->k, &kl->f);
	/* the wake-up only (pthread_join orders the results before their use;
	 * without it the end of the run still joins) */
	ssize_t w = write(kl->efd, &one, sizeof(one));
	(void)w;
	return NULL;
}

static void kload_free(struct ft_kload *kl)
{
	if (kl->efd >= 0)
		close(kl->efd);
	free(kl->path);
	free(kl);
}

int ft_kload_start(const char *path, bool track_mmaps, struct ft_kload **out)
{
	struct ft_kload *kl = calloc(1, sizeof(*kl));
	if (!kl)
		return -ENOMEM;
	kl->track_mmaps = track_mmaps;
	kl->nice = getpriority(PRIO_PROCESS, 0);
	kl->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	kl->path = strdup(path);
	int ret = kl->efd < 0 ? -errno : kl->path ? 0 : -ENOMEM;
	if (ret == 0)
		ret = -pthread_create(&kl->thread, NULL, load_main, kl);
	if (ret < 0) {
		kload_free(kl);
		return ret;
	}
	*out = kl;
	return 0;
}

int ft_kload_fd(const struct ft_kload *kl)
{
	return kl->efd;
}

void ft_kload_hurry(struct ft_kload *kl)
{
	atomic_store(&kl->hurried, true);
	pid_t tid = atomic_load(&kl->tid);
	if (tid > 0) /* may have ended already, or be refused: either way, go on */
		setpriority(PRIO_PROCESS, (id_t)tid, kl->nice);
}

int ft_kload_finish(struct ft_kload *kl, struct sym_kernel **k, struct ft_kfilter *f)
{
	ft_kload_hurry(kl);
	pthread_join(kl->thread, NULL);
	int ret = kl->err;
	*k = kl->k;
	*f = kl->f;
	kload_free(kl);
	return ret;
}

bool ft_kload_warn_hidden(int err)
{
	if (err != -EPERM)
		return false;
	ft_warn("kernel addresses are hidden (kernel.kptr_restrict): kernel frames print "
		"as [unknown]; give CAP_SYSLOG, or set kernel.kptr_restrict=0");
	return true;
}

/* Takes in what the load made; says once what it could not. */
static void take(struct ft_kernel_syms *ks, struct sym_cache *names, int ret,
		 struct sym_kernel *k, const struct ft_kfilter *f)
{
	if (!ft_kload_warn_hidden(ret) && ret < 0)
		ft_warn("cannot read %s: %s; kernel frames print as [unknown]", ks->path,
			strerror(-ret));
	ks->syms = k;
	ks->filter = *f;
	sym_cache_set_kernel(names, k);
	ks->state = FT_KSYMS_READY;
}

void ft_ksyms_start(struct ft_kernel_syms *ks, const char *path, bool track_mmaps,
		    struct sym_cache *names)
{
	ks->path = path;
	int ret = ft_kload_start(path, track_mmaps, &ks->load);
	if (ret == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &ks->load };
		/* unwatched, it is still waited for before anything is printed */
		if (ks->epfd >= 0)
			epoll_ctl(ks->epfd, EPOLL_CTL_ADD, ft_kload_fd(ks->load), &ev);
		ks->state = FT_KSYMS_LOADING;
		ft_debug("loading %s in a thread; samples wait", path);
		return;
	}
	struct sym_kernel *k = NULL;
	struct ft_kfilter f;
	ft_debug("no thread for %s (%s): loading it now", path, strerror(-ret));
	ret = ft_kload_now(path, track_mmaps, &k, &f);
	take(ks, names, ret, k, &f);
}

bool ft_ksyms_wait(struct ft_kernel_syms *ks, struct sym_cache *names)
{
	if (ks->state != FT_KSYMS_LOADING)
		return false;
	struct sym_kernel *k = NULL;
	struct ft_kfilter f;
	int ret = ft_kload_finish(ks->load, &k, &f);
	ks->load = NULL;
	take(ks, names, ret, k, &f);
	return true;
}

void ft_ksyms_queued(struct ft_kernel_syms *ks, size_t before)
{
	if (ks->state != FT_KSYMS_LOADING || before >= FT_PENDING_HURRY ||
	    ks->pending.len < FT_PENDING_HURRY)
		return;
	ft_debug("%zu bytes of samples wait for %s: its load no longer yields", ks->pending.len,
		 ks->path);
	ft_kload_hurry(ks->load);
}

bool ft_ksyms_owns(const struct ft_kernel_syms *ks, const void *cookie)
{
	return cookie == &ks->load;
}

void ft_ksyms_abandon(struct ft_kernel_syms *ks)
{
	if (ks->state == FT_KSYMS_LOADING) {
		struct sym_kernel *k = NULL;
		struct ft_kfilter f;
		ft_kload_finish(ks->load, &k, &f);
		ks->load = NULL;
		sym_kernel_free(k);
		ft_kfilter_free(&f);
		ks->state = FT_KSYMS_NONE;
	}
	free(ks->pending.buf);
	ks->pending = (struct ft_pending){ 0 };
}
