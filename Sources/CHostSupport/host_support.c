#define _GNU_SOURCE
#include "host_support.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#define GW_SEALS (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int gw_sealed_library(const void *bytes, size_t length, const char *name) {
    const char *at = bytes;
    size_t written = 0;
    unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
#ifdef MFD_EXEC
    /* Where vm.memfd_noexec asks for it (Linux 6.3): the copy is mapped executable. */
    flags |= MFD_EXEC;
#endif
    int fd = memfd_create(name, flags);
#ifdef MFD_EXEC
    if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
#endif
    if (fd < 0) return -errno;
    while (written < length) {
        ssize_t n = write(fd, at + written, length - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : EIO;
            close(fd);
            return -saved;
        }
        written += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, GW_SEALS) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int gw_library_is_sealed(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & GW_SEALS) == GW_SEALS;
}

int gw_host_make_non_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -errno;
}

int gw_host_has_xattr(const char *path, const char *name) {
    return getxattr(path, name, NULL, 0) >= 0;
}

long gw_host_landlock_abi(void) {
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
    return abi >= 0 ? abi : -errno;
}
