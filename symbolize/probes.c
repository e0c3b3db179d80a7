/* What user probes need from an ELF file: the file offset of a function
 * (uprobes are placed by file offset) and the USDT probes of .note.stapsdt
 * with their semaphores. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mem/mem.h"
#include "symbolize/symbolize.h"
#include "symbolize/internal.h"

/* VADDR → file offset through the PT_LOAD segment holding it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int sym_file_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *off)
{
	int fd;
	Elf *elf;
	int ret = sym_open_elf(path, &fd, &elf);
	if (ret < 0)
		return ret;
	ret = vaddr_to_offset(elf, vaddr, off);
	elf_end(elf);
	close(fd);
	return ret;
}

/* .stapsdt.base's address: the notes' addresses are relative to it when the
 * file was prelinked or relocated (the note carries the link-time base). */
static bool stapsdt_base(Elf *elf, uint64_t *base)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".stapsdt.base") == 0) {
			*base = sh.sh_addr;
			return true;
		}
	}
	return false;
}

/* Decodes one stapsdt note descriptor: pc, base, semaphore (3 x 8 bytes),
 * then provider, name and argument strings. */
static int parse_note(Elf *elf, const uint8_t *desc, size_t len, bool have_base,
		      uint64_t base_addr, struct sym_usdt *u)
{
	uint64_t v[3];
	if (len < sizeof(v) + 3)
		return -EINVAL;
	memcpy(v, desc, sizeof(v));
	const char *prov = (const char *)desc + sizeof(v), *end = (const char *)desc + len;
	const char *name = memchr(prov, '\0', (size_t)(end - prov));
	if (!name++ || name >= end)
		return -EINVAL;
	const char *args = memchr(name, '\0', (size_t)(end - name));
	if (!args++ || args > end)
		return -EINVAL;
	const char *args_end = args < end ? memchr(args, '\0', (size_t)(end - args)) : NULL;
	memset(u, 0, sizeof(*u));
	snprintf(u->provider, sizeof(u->provider), "%s", prov);
	snprintf(u->name, sizeof(u->name), "%s", name);
	if (args_end)
		snprintf(u->args, sizeof(u->args), "%s", args);
	uint64_t pc = v[0], sem = v[2];
	if (have_base) {
		pc += base_addr - v[1];
		if (sem)
			sem += base_addr - v[1];
	}
	if (vaddr_to_offset(elf, pc, &u->offset) < 0)
		return -EINVAL;
	if (sem && vaddr_to_offset(elf, sem, &u->sem_offset) < 0)
		return -EINVAL;
	return 0;
}

static int push(struct sym_usdt **arr, int n, size_t *cap, const struct sym_usdt *u)
{
	if (MEM_GROW(*arr, *cap, (size_t)n + 1, 16))
		return -ENOMEM;
	(*arr)[n] = *u;
	return 0;
}

static int scan_notes(Elf *elf, Elf_Scn *scn, bool have_base, uint64_t base,
		      struct sym_usdt **arr, int *n, size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;
	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != 3 || nh.n_namesz != 8 ||
		    memcmp((const char *)d->d_buf + name_off, "stapsdt", 8) != 0)
			continue;
		struct sym_usdt u;
		if (parse_note(elf, (const uint8_t *)d->d_buf + desc_off, nh.n_descsz, have_base,
			       base, &u) < 0)
			continue;
		int ret = push(arr, *n, cap, &u);
		if (ret < 0)
			return ret;
		(*n)++;
	}
	return 0;
}

int sym_usdt_list(const char *path, struct sym_usdt **out)
{
	int fd, n = 0;
	size_t cap = 0;
	Elf *elf;
	struct sym_usdt *arr = NULL;
	int ret = sym_open_elf(path, &fd, &elf);
	if (ret < 0)
		return ret;
	uint64_t base = 0;
	bool have_base = stapsdt_base(elf, &base);
	for (Elf_Scn *scn = NULL; ret == 0 && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			ret = scan_notes(elf, scn, have_base, base, &arr, &n, &cap);
	}
	elf_end(elf);
	close(fd);
	if (ret < 0) {
		free(arr);
		return ret;
	}
	*out = arr;
	return n;
}
