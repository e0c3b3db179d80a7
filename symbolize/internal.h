/* Shared inside symbolize/. */
#ifndef FTSTACK_SYMBOLIZE_INTERNAL_H
#define FTSTACK_SYMBOLIZE_INTERNAL_H

#include <libelf.h>

/* Opens PATH as an ELF file for reading (libelf initialised). Returns 0 with
 * *fd and *elf to release with elf_end() and close(), or -errno (-ENOEXEC:
 * not ELF). */
int sym_open_elf(const char *path, int *fd, Elf **elf);

#endif
