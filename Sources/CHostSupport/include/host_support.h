#ifndef GATEWAY_HOST_SUPPORT_H
#define GATEWAY_HOST_SUPPORT_H

#include <stddef.h>

/* What the host needs from C that Swift cannot call (variadic or absent from
 * the Glibc module). */

/* A sealed in-memory copy of an adapter library: a memfd holding `length`
 * bytes, sealed against writes, shrinking and growing (F_SEAL_WRITE,
 * F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL), close-on-exec. What the host
 * verified is what gets mapped, and nothing, the adapter included, can change
 * it afterwards. Returns the descriptor, or -errno. */
int gw_sealed_library(const void *bytes, size_t length, const char *name);

/* 1 when `fd` carries all four seals (checked again before mapping). */
int gw_library_is_sealed(int fd);

/* PR_SET_DUMPABLE 0: no core dump, and no process of the same user reads
 * this one's memory through /proc or ptrace. 0, or -errno. */
int gw_host_make_non_dumpable(void);

/* The Landlock ABI version the kernel offers (1 or more), or -errno (ENOSYS
 * or EOPNOTSUPP: no Landlock here). */
long gw_host_landlock_abi(void);

/* Whether `path` carries the extended attribute `name` (1), not (0). */
int gw_host_has_xattr(const char *path, const char *name);

#endif
