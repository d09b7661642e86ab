#ifndef GATEWAY_SEALED_LIBRARY_H
#define GATEWAY_SEALED_LIBRARY_H

#include <stddef.h>

/* A sealed in-memory copy of an adapter library: a memfd holding `length`
 * bytes, sealed against writes, shrinking and growing (F_SEAL_WRITE,
 * F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL), close-on-exec. What the host
 * verified is what gets mapped, and nothing, the adapter included, can change
 * it afterwards. Returns the descriptor, or -errno. */
int gw_sealed_library(const void *bytes, size_t length, const char *name);

/* 1 when `fd` carries all four seals (checked again before mapping). */
int gw_library_is_sealed(int fd);

#endif
