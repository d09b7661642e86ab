/* The first thing gateway-runner does, before the Swift runtime starts any
 * thread (an ELF constructor):
 *
 * 0. close every descriptor it inherited but 0 to 3;
 * 1. without GATEWAY_RUNNER_COOKIE it was started by hand: say so, exit 2;
 * 2. unless GATEWAY_RUNNER_NETWORK=host, enter a new user namespace and a new
 *    network namespace (unprivileged; needs a single-threaded process), mapping
 *    the runner's own uid and gid, so native adapter code has no network but
 *    the host's http_send; when the kernel refuses, remember why and go on;
 * 3. ask for SIGKILL when the host dies (PR_SET_PDEATHSIG), then check that
 *    the host is still its parent (it may have died before the prctl). */
#define _GNU_SOURCE
#include "runner_confinement.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int confined = 0;
static char reason[256] = "not attempted";

int gw_runner_network_confined(void) { return confined; }
const char *gw_runner_network_reason(void) { return reason; }

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* close_range() before Linux 5.9: close what /proc/self/fd lists. */
static void close_from_four(void) {
    int fds[4096], count = 0, i;
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    if (dir == NULL) {
        fputs("gateway-runner: cannot list /proc/self/fd to close inherited descriptors\n", stderr);
        _exit(3);
    }
    while ((entry = readdir(dir)) != NULL && count < 4096) {
        int fd = atoi(entry->d_name);
        if (fd > 3 && fd != dirfd(dir)) fds[count++] = fd;
    }
    closedir(dir);
    for (i = 0; i < count; i++) close(fds[i]);
}

__attribute__((constructor))
static void gw_runner_confine(void) {
    /* Nothing the host held but fds 0-3 (stdin, stdout, stderr, the socket). */
    if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0) close_from_four();

    const char *cookie = getenv("GATEWAY_RUNNER_COOKIE");
    if (cookie == NULL || cookie[0] == '\0') {
        fputs("gateway-runner: started by the gateway host for an adapter with \"isolation\": \"process\", never by hand\n", stderr);
        _exit(2);
    }

    const char *network = getenv("GATEWAY_RUNNER_NETWORK");
    if (network != NULL && strcmp(network, "host") == 0) {
        snprintf(reason, sizeof reason, "the manifest asks for the host's network (\"isolation_network\": \"host\")");
    } else {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
            snprintf(reason, sizeof reason, "the kernel refused an unprivileged network namespace (unshare: %s)", strerror(errno));
        } else {
            char map[64];
            int ok = write_file("/proc/self/setgroups", "deny") == 0 || errno == ENOENT;
            snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
            ok = ok && write_file("/proc/self/uid_map", map) == 0;
            snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
            ok = ok && write_file("/proc/self/gid_map", map) == 0;
            if (ok) {
                confined = 1;
                reason[0] = '\0';
            } else {
                /* In the namespaces already, but unmapped: the network is still
                   gone, though files may look owned by nobody. */
                confined = 1;
                snprintf(reason, sizeof reason, "uid/gid map not written: %s", strerror(errno));
            }
        }
    }

    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(3);
    const char *host = getenv("GATEWAY_HOST_PID");
    if (host != NULL && atoi(host) != (int)getppid()) _exit(0);
}
