/* The first thing gateway-runner does, before the Swift runtime starts any
 * thread (an ELF constructor): it builds the adapter's sandbox.
 *
 * 0. Join its cgroup leaf when the host made one (fd 5 is the leaf's
 *    cgroup.procs), so that everything it forks is in the leaf. Close every
 *    descriptor it inherited but 0 to 4 (stdin, stdout, stderr,
 *    the socket to the host, the sealed library). Without
 *    GATEWAY_RUNNER_COOKIE it was started by hand: say so, exit 2. Ask for
 *    SIGKILL when the host dies, then check the host is still its parent.
 * 1. A user namespace (unprivileged), mapping only the runner's own uid and
 *    gid; in it, the layers the manifest did not except (see the header):
 *    network, ipc (+uts), pid, and a mount namespace for filesystem.
 * 2. With a PID namespace: this process stays outside as the *supervisor*
 *    and forks the namespace's init (PID 1), which builds the empty root and
 *    forks the runner (PID 2). The runner's end ends init, and the kernel then
 *    kills everything left in the namespace (a setsid grandchild included);
 *    init passes the runner's wait status to the supervisor, which ends the
 *    same way (the same exit status, or the same signal), so the host sees
 *    the runner's own end. Each of the three dies with its parent
 *    (PR_SET_PDEATHSIG), the supervisor with the host.
 * 3. The filesystem layer: an empty tmpfs root holding read-only binds
 *    (recursively read-only, nosuid, nodev) of /usr (and /lib*), of the Swift
 *    runtime's folder and any other shared object already loaded (each file
 *    by itself), /etc/ld.so.cache and /etc/localtime (and, with the host's
 *    network, what resolving and TLS read: resolv.conf, hosts, ssl); /dev
 *    with null, zero, full, random and urandom; a read-only /proc of the PID
 *    namespace; a private /tmp of GATEWAY_RUNNER_TMP_MB MiB. Then pivot_root,
 *    the old root detached, the new root read-only. The adapter's library is
 *    fd 4 (a sealed memfd the host wrote), so no host path is needed. init
 *    then makes itself non-dumpable and drops every capability.
 * 4. Last, in the runner: every capability dropped (bounding set, ambient,
 *    securebits locked), then the syscalls layer: PR_SET_NO_NEW_PRIVS and a
 *    seccomp-bpf allowlist (runner_syscalls.inc). A call not on it returns
 *    EPERM through a SIGSYS handler that logs its number and name on stderr
 *    (which the host logs, tagged): never a silent kill. clone only for a
 *    thread (CLONE_THREAD, no namespace flag; fork and vfork are denied);
 *    mmap but not a writable shared mapping (which memory_mb would not count);
 *    clone3 fails with ENOSYS (so libc uses clone, whose flags the filter can
 *    see); ioctl for a few descriptor requests; socketpair for stream pairs.
 *    Another architecture's calls kill.
 *
 * 5. Then the landlock layer, where the kernel has Landlock (apply_landlock),
 *    before the seccomp filter (which does not allow its calls).
 *
 * A layer the kernel refuses is recorded with why; main() refuses to load
 * the adapter when such a layer is not excepted (fail closed), before any
 * adapter code runs. GATEWAY_RUNNER_SIMULATE_REFUSAL (a comma list of layers,
 * or "user") makes the kernel's refusal happen on purpose, for tests and for
 * an operator who wants to see the refusal before a kernel does it. */
#define _GNU_SOURCE
#include "runner_confinement.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

/* Numbers and flags older kernel headers lack (the same on x86_64 and aarch64). */
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS SECCOMP_RET_KILL
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif
#define GW_MOUNT_ATTR_RDONLY 0x1
#define GW_MOUNT_ATTR_NOSUID 0x2
#define GW_MOUNT_ATTR_NODEV 0x4
#define GW_AT_RECURSIVE 0x8000
struct gw_mount_attr { unsigned long long attr_set, attr_clr, propagation, userns_fd; };

enum { NETWORK, FILESYSTEM, PID, IPC, SYSCALLS, LANDLOCK };
static const char *const names[GW_RUNNER_LAYER_COUNT] = {"network", "filesystem", "pid", "ipc", "syscalls", "landlock"};
static int in_force[GW_RUNNER_LAYER_COUNT];
static int excepted[GW_RUNNER_LAYER_COUNT];
static int absent[GW_RUNNER_LAYER_COUNT];
static char reasons[GW_RUNNER_LAYER_COUNT][320];

const char *gw_runner_layer_name(int layer) { return layer >= 0 && layer < GW_RUNNER_LAYER_COUNT ? names[layer] : ""; }
int gw_runner_layer_in_force(int layer) { return layer >= 0 && layer < GW_RUNNER_LAYER_COUNT && in_force[layer]; }
int gw_runner_layer_excepted(int layer) { return layer >= 0 && layer < GW_RUNNER_LAYER_COUNT && excepted[layer]; }
int gw_runner_layer_absent(int layer) { return layer >= 0 && layer < GW_RUNNER_LAYER_COUNT && absent[layer]; }
const char *gw_runner_layer_reason(int layer) { return layer >= 0 && layer < GW_RUNNER_LAYER_COUNT ? reasons[layer] : ""; }

static void refused(int layer, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(reasons[layer], sizeof reasons[layer], format, arguments);
    va_end(arguments);
    in_force[layer] = 0;
}

static _Noreturn void die(const char *what) {
    fprintf(stderr, "gateway-runner: %s: %s\n", what, strerror(errno));
    _exit(3);
}

/* Whether the comma-separated `list` holds `name`. */
static int listed(const char *list, const char *name) {
    size_t length = strlen(name);
    while (list != NULL && *list != '\0') {
        const char *comma = strchr(list, ',');
        size_t item = comma ? (size_t)(comma - list) : strlen(list);
        if (item == length && strncmp(list, name, length) == 0) return 1;
        list = comma ? comma + 1 : NULL;
    }
    return 0;
}

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
static void close_from(int first) {
    int fds[4096], count = 0, i;
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    if (dir == NULL) die("cannot list /proc/self/fd to close inherited descriptors");
    while ((entry = readdir(dir)) != NULL && count < 4096) {
        int fd = atoi(entry->d_name);
        if (fd >= first && fd != dirfd(dir)) fds[count++] = fd;
    }
    closedir(dir);
    for (i = 0; i < count; i++) close(fds[i]);
}

/* ---- the empty root -------------------------------------------------- */

static char root_failure[256];

static int fail_root(const char *what, const char *path) {
    snprintf(root_failure, sizeof root_failure, "%s %s: %s", what, path, strerror(errno));
    return -1;
}

static int make_dirs(const char *path) {
    char partial[PATH_MAX];
    size_t i, length = strlen(path);
    if (length >= sizeof partial) { errno = ENAMETOOLONG; return fail_root("cannot create", path); }
    for (i = 1; i <= length; i++) {
        if (path[i] == '/' || path[i] == '\0') {
            memcpy(partial, path, i);
            partial[i] = '\0';
            if (mkdir(partial, 0755) != 0 && errno != EEXIST) return fail_root("cannot create", partial);
        }
    }
    return 0;
}

/* The flags a bind's read-only remount must keep (the kernel locks them in a user namespace). */
static unsigned long locked_flags(const char *path) {
    struct statvfs info;
    unsigned long flags = 0;
    if (statvfs(path, &info) != 0) return 0;
    if (info.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (info.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (info.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (info.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (info.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (info.f_flag & ST_RELATIME) flags |= MS_RELATIME;
    return flags;
}

/* Makes the mount at `target` and every mount under it read-only, nosuid,
 * nodev: mount_setattr(AT_RECURSIVE) where the kernel has it (5.12), else a
 * remount of each one /proc/self/mountinfo lists under `target`. */
static int make_read_only(const char *target) {
    struct gw_mount_attr attributes = {GW_MOUNT_ATTR_RDONLY | GW_MOUNT_ATTR_NOSUID | GW_MOUNT_ATTR_NODEV, 0, 0, 0};
    char line[PATH_MAX + 512];
    size_t length = strlen(target);
    FILE *mounts;
    struct statvfs after;
    if (syscall(__NR_mount_setattr, AT_FDCWD, target, GW_AT_RECURSIVE, &attributes, sizeof attributes) == 0) goto check;
    if (errno != ENOSYS) return fail_root("cannot make read-only", target);
    if ((mounts = fopen("/proc/self/mountinfo", "re")) == NULL) return fail_root("cannot read", "/proc/self/mountinfo");
    while (fgets(line, sizeof line, mounts) != NULL) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: the fifth field. */
        char *field = line, *point;
        int i;
        for (i = 0; i < 4 && field != NULL; i++) field = strchr(field, ' ') ? strchr(field, ' ') + 1 : NULL;
        if (field == NULL) continue;
        point = field;
        field = strchr(point, ' ');
        if (field != NULL) *field = '\0';
        if (strncmp(point, target, length) != 0 || (point[length] != '\0' && point[length] != '/')) continue;
        if (mount(NULL, point, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | locked_flags(point), NULL) != 0) {
            fclose(mounts);
            return fail_root("cannot make read-only", point);
        }
    }
    fclose(mounts);
check:
    /* Whichever way it went, the mount is read-only, or the layer is refused. */
    if (statvfs(target, &after) != 0 || !(after.f_flag & ST_RDONLY)) { errno = EROFS; return fail_root("did not become read-only:", target); }
    return 0;
}

/* What the root carries from the host's: a symbolic link copied, or a folder
 * or file bound read-only. Each source is opened (O_PATH) before anything is
 * mounted, and bound through that descriptor, so no mount made here can hide
 * it (the root's own tmpfs is mounted over /tmp). */
struct carried {
    char target[PATH_MAX];
    char link[PATH_MAX];
    int fd;
    int is_dir;
};
static struct carried carried[64];
static int carried_count;

/* Whether `path` is `folder` or under it. */
static int under(const char *path, const char *folder) {
    size_t length = strlen(folder);
    return strncmp(path, folder, length) == 0 && (path[length] == '/' || path[length] == '\0');
}

static int plan(const char *source) {
    struct stat info;
    struct carried *item;
    int i;
    for (i = 0; i < carried_count; i++)
        if (strcmp(carried[i].target, source) == 0) return 0;
    if (lstat(source, &info) != 0) return 0; /* absent here: nothing to carry */
    if (carried_count == (int)(sizeof carried / sizeof *carried)) { errno = E2BIG; return fail_root("too many things to carry, at", source); }
    item = &carried[carried_count];
    memset(item, 0, sizeof *item);
    snprintf(item->target, sizeof item->target, "%s", source);
    item->fd = -1;
    if (S_ISLNK(info.st_mode) && under(source, "/etc")) {
        /* A file of /etc that links elsewhere (/etc/resolv.conf to /run/...):
           the file it names, bound at the link's place. */
        char real[PATH_MAX];
        struct stat target;
        if (realpath(source, real) == NULL || stat(real, &target) != 0) return 0; /* dangling here too */
        item->fd = open(real, O_PATH | O_CLOEXEC);
        if (item->fd < 0) return fail_root("cannot open", real);
        item->is_dir = S_ISDIR(target.st_mode);
    } else if (S_ISLNK(info.st_mode)) {
        ssize_t n = readlink(source, item->link, sizeof item->link - 1);
        if (n < 0) return fail_root("cannot read the link", source);
        item->link[n] = '\0';
    } else {
        item->fd = open(source, O_PATH | O_CLOEXEC);
        if (item->fd < 0) return fail_root("cannot open", source);
        item->is_dir = S_ISDIR(info.st_mode);
    }
    carried_count++;
    return 0;
}

/* The shared objects this process mapped that /usr and /lib* do not hold:
 * the folder of the Swift runtime (that of libswiftCore.so, unless it is the
 * executable's own folder), so an adapter linked against the same runtime
 * finds its libraries; any other such object by itself, never its folder
 * (which may be an install folder holding manifests or data). */
static int plan_loaded_objects(void) {
    char line[PATH_MAX + 256], executable[PATH_MAX], real[PATH_MAX];
    int pass;
    ssize_t n = readlink("/proc/self/exe", executable, sizeof executable - 1);
    executable[n > 0 ? n : 0] = '\0';
    if (strrchr(executable, '/') != NULL) *strrchr(executable, '/') = '\0';
    /* First the runtime's folder, then the objects it does not hold. */
    for (pass = 0; pass < 2; pass++) {
        FILE *maps = fopen("/proc/self/maps", "re");
        if (maps == NULL) return fail_root("cannot read", "/proc/self/maps");
        while (fgets(line, sizeof line, maps) != NULL) {
            char *path = strchr(line, '/'), *slash;
            int i, held = 0;
            if (path == NULL || strstr(path, ".so") == NULL) continue;
            path[strcspn(path, "\n")] = '\0';
            if (realpath(path, real) == NULL) continue;
            if (under(real, "/usr") || under(real, "/lib") || under(real, "/lib64") || under(real, "/lib32")) continue;
            slash = strrchr(real, '/');
            if (slash == NULL) continue;
            if (pass == 0) {
                if (strcmp(slash + 1, "libswiftCore.so") != 0) continue;
                *slash = '\0';
                if (strcmp(real, executable) == 0) continue;
            } else {
                for (i = 0; i < carried_count; i++) held |= carried[i].is_dir && under(real, carried[i].target);
                if (held) continue;
            }
            if (plan(real) != 0) { fclose(maps); return -1; }
        }
        fclose(maps);
    }
    return 0;
}

/* Puts `item` at its own path under `root`. */
static int carry(const char *root, const struct carried *item) {
    char target[PATH_MAX], source[64], parent[PATH_MAX];
    snprintf(target, sizeof target, "%s%s", root, item->target);
    snprintf(parent, sizeof parent, "%s", target);
    if (strrchr(parent, '/') != NULL) *strrchr(parent, '/') = '\0';
    if (make_dirs(parent) != 0) return -1;
    if (item->fd < 0) {
        if (symlink(item->link, target) != 0 && errno != EEXIST) return fail_root("cannot link", target);
        return 0;
    }
    if (item->is_dir) {
        if (make_dirs(target) != 0) return -1;
    } else {
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
        if (fd < 0) return fail_root("cannot create", target);
        close(fd);
    }
    snprintf(source, sizeof source, "/proc/self/fd/%d", item->fd);
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) return fail_root("cannot bind", item->target);
    return make_read_only(target);
}

static int build_root(long tmp_megabytes, int network_excepted) {
    static const char *const system[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache", "/etc/localtime"};
    /* An adapter with the host's network resolves names and checks certificates itself. */
    static const char *const networking[] = {"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates"};
    static const char *const devices[] = {"null", "zero", "full", "random", "urandom"};
    const char *root = "/tmp";
    char path[PATH_MAX], options[64];
    size_t i;
    int c;

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return fail_root("cannot make private", "/");
    for (i = 0; i < sizeof system / sizeof *system; i++)
        if (plan(system[i]) != 0) return -1;
    for (i = 0; network_excepted && i < sizeof networking / sizeof *networking; i++)
        if (plan(networking[i]) != 0) return -1;
    if (plan_loaded_objects() != 0) return -1;
    for (i = 0; i < sizeof devices / sizeof *devices; i++) {
        snprintf(path, sizeof path, "/dev/%s", devices[i]);
        if (plan(path) != 0) return -1;
    }

    if (mount("gateway-runner", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0) return fail_root("cannot mount a tmpfs root on", root);
    snprintf(path, sizeof path, "%s/dev", root);
    if (make_dirs(path) != 0) return -1;
    if (mount("gateway-runner-dev", path, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755") != 0) return fail_root("cannot mount", path);
    for (c = 0; c < carried_count; c++) {
        if (under(carried[c].target, "/dev")) {
            /* Device nodes: bound as they are (a device node's writes do not depend on its mount). */
            char source[64];
            int fd;
            snprintf(path, sizeof path, "%s%s", root, carried[c].target);
            if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) < 0) return fail_root("cannot create", path);
            close(fd);
            snprintf(source, sizeof source, "/proc/self/fd/%d", carried[c].fd);
            if (mount(source, path, NULL, MS_BIND, NULL) != 0) return fail_root("cannot bind", carried[c].target);
        } else if (carry(root, &carried[c]) != 0) {
            return -1;
        }
        if (carried[c].fd >= 0) close(carried[c].fd);
    }
    snprintf(path, sizeof path, "%s/dev/fd", root);
    if (symlink("/proc/self/fd", path) != 0) return fail_root("cannot link", path);
    snprintf(path, sizeof path, "%s/dev", root);
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755") != 0) return fail_root("cannot make read-only", path);

    snprintf(path, sizeof path, "%s/proc", root);
    if (make_dirs(path) != 0) return -1;
    if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) != 0) return fail_root("cannot mount its own /proc on", path);
    snprintf(path, sizeof path, "%s/tmp", root);
    if (make_dirs(path) != 0) return -1;
    snprintf(options, sizeof options, "size=%ldm,mode=1777", tmp_megabytes);
    if (mount("gateway-runner-tmp", path, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0) return fail_root("cannot mount a private /tmp on", path);

    if (chdir(root) != 0) return fail_root("cannot enter", root);
    if (syscall(SYS_pivot_root, ".", ".") != 0) return fail_root("pivot_root into", root);
    if (umount2(".", MNT_DETACH) != 0) return fail_root("cannot detach the old root", "/");
    if (chdir("/") != 0) return fail_root("cannot enter", "/");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) return fail_root("cannot make read-only", "/");
    return 0;
}

/* No capabilities, now or after any execve, in this process and what it
 * starts: inside its user namespace the runner would hold them all (enough
 * to write another process's memory through /proc), and a runner whose
 * namespaces are excepted may run as a privileged user. */
static int drop_capabilities(char *why, size_t length) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    int cap;
    /* These need CAP_SETPCAP; without it there is nothing for them to take away. */
    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED
          | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED);
    for (cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) {
        snprintf(why, length, "cannot drop its capabilities: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the PID namespace's processes ------------------------------------ */

/* Outside the namespace: waits for init, which reports the runner's status,
 * and ends as the runner ended. Runs nothing else. It keeps its copy of the
 * socket to the host (fd 3) open until it ends: the host takes the socket's
 * end of file for the runner's end and kills what is left, so that end of
 * file must come after this process has taken on the runner's status. */
static _Noreturn void supervise(pid_t init, int report) {
    int status = 0, runner = 0;
    ssize_t got = 0, n;
    close(0);
    close(1);
    close(4);
    while (got < (ssize_t)sizeof runner) {
        n = read(report, (char *)&runner + got, sizeof runner - (size_t)got);
        if (n > 0) got += n;
        else if (n == 0 || errno != EINTR) break;
    }
    while (waitpid(init, &status, 0) < 0 && errno == EINTR) {}
    if (got == (ssize_t)sizeof runner) status = runner;
    if (WIFSIGNALED(status)) {
        sigset_t none;
        int sig = WTERMSIG(status);
        prctl(PR_SET_DUMPABLE, 0);
        signal(sig, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        kill(getpid(), sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* PID 1: reaps whatever ends; when the runner does, passes its status on and
 * ends, which ends every process left in the namespace. */
static _Noreturn void init_loop(pid_t runner, int report) {
    close(0);
    close(1);
    close(3);
    close(4);
    for (;;) {
        int status;
        pid_t ended = wait(&status);
        if (ended == runner) {
            ssize_t ignored = write(report, &status, sizeof status);
            (void)ignored;
            _exit(0);
        }
        if (ended < 0 && errno != EINTR) _exit(0);
    }
}

/* ---- the syscall allowlist -------------------------------------------- */

static const int allowed_calls[] = {
#include "runner_syscalls.inc"
};

/* With the network layer excepted ("isolation_network": "host"), the adapter
 * opens its own sockets. */
static const int network_calls[] = {
#ifdef __NR_connect
    __NR_connect,
#endif
#ifdef __NR_bind
    __NR_bind,
#endif
#ifdef __NR_listen
    __NR_listen,
#endif
#ifdef __NR_accept
    __NR_accept,
#endif
#ifdef __NR_accept4
    __NR_accept4,
#endif
};

/* The ioctl requests an adapter may make: on its own descriptors, nothing
 * that reads or changes the host's network or terminal. */
static const unsigned int allowed_ioctls[] = {FIONREAD, FIONBIO, FIOCLEX, FIONCLEX, TCGETS, TIOCGWINSZ};

struct call_name { int number; const char *name; };
/* Names for the log of the calls an adapter is most likely to try. */
static const struct call_name denied_names[] = {
#define NAMED(call) { __NR_##call, #call }
#ifdef __NR_ptrace
    NAMED(ptrace),
#endif
#ifdef __NR_process_vm_readv
    NAMED(process_vm_readv), NAMED(process_vm_writev),
#endif
#ifdef __NR_pidfd_open
    NAMED(pidfd_open), NAMED(pidfd_getfd), NAMED(pidfd_send_signal),
#endif
    NAMED(mount), NAMED(umount2), NAMED(pivot_root), NAMED(chroot), NAMED(unshare), NAMED(setns),
    NAMED(bpf), NAMED(perf_event_open), NAMED(userfaultfd), NAMED(keyctl), NAMED(add_key), NAMED(request_key),
#ifdef __NR_io_uring_setup
    NAMED(io_uring_setup), NAMED(io_uring_enter), NAMED(io_uring_register),
#endif
    NAMED(socket), NAMED(connect), NAMED(bind), NAMED(listen), NAMED(accept4), NAMED(execve), NAMED(execveat),
    NAMED(memfd_create), NAMED(shmget), NAMED(shmat), NAMED(setuid), NAMED(setgid), NAMED(mknodat),
    NAMED(personality), NAMED(kcmp), NAMED(init_module), NAMED(finit_module), NAMED(kexec_load), NAMED(reboot),
    NAMED(open_by_handle_at), NAMED(name_to_handle_at), NAMED(clone3), NAMED(clone), NAMED(ioctl), NAMED(socketpair), NAMED(mmap),
#ifdef __NR_fork
    NAMED(fork), NAMED(vfork),
#endif
#undef NAMED
};

static volatile int denials_logged;

static void put_number(char *out, size_t *at, long value) {
    char digits[24];
    int count = 0;
    if (value < 0) { out[(*at)++] = '-'; value = -value; }
    do { digits[count++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
    while (count > 0) out[(*at)++] = digits[--count];
}

static void put_text(char *out, size_t *at, size_t room, const char *text) {
    while (*text != '\0' && *at < room - 1) out[(*at)++] = *text++;
}

/* SIGSYS from the filter: the call fails with EPERM, and the first 64
 * denials are logged (async-signal-safe: write(2) only). */
static void on_denied_call(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    char line[160];
    size_t at = 0, i;
    int saved = errno;
    (void)sig;
    if (info->si_code != SYS_SECCOMP) return; /* sent by someone, not the filter: no call to answer */
#if defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
    uc->uc_mcontext.regs[0] = (unsigned long long)(long long)-EPERM;
#endif
    if (denials_logged < 64) {
        denials_logged++;
        put_text(line, &at, sizeof line, "gateway-runner: the sandbox denied system call ");
        put_number(line, &at, info->si_syscall);
        for (i = 0; i < sizeof denied_names / sizeof *denied_names; i++) {
            if (denied_names[i].number == info->si_syscall) {
                put_text(line, &at, sizeof line, " (");
                put_text(line, &at, sizeof line, denied_names[i].name);
                put_text(line, &at, sizeof line, ")");
            }
        }
        put_text(line, &at, sizeof line, ": EPERM\n");
        ssize_t ignored = write(2, line, at);
        (void)ignored;
    }
    errno = saved;
}

#if defined(__x86_64__)
#define GW_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GW_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define NAMESPACE_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

static int install_filter(int network_excepted, char *why, size_t length) {
#ifndef GW_AUDIT_ARCH
    (void)network_excepted;
    snprintf(why, length, "no seccomp filter for this architecture");
    return -1;
#else
    enum {
        CALLS = sizeof allowed_calls / sizeof *allowed_calls,
        NETWORK_CALLS = sizeof network_calls / sizeof *network_calls,
        IOCTLS = sizeof allowed_ioctls / sizeof *allowed_ioctls,
    };
    static struct sock_filter program[48 + 2 * (CALLS + NETWORK_CALLS + IOCTLS)];
    struct sock_fprog filter;
    struct sigaction action;
    unsigned short n = 0;
    size_t i;
#define STATEMENT(code, k) (program[n++] = (struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, yes, no) (program[n++] = (struct sock_filter)BPF_JUMP(code, k, yes, no))
#define ALLOW() STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define DENY() STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)

    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_denied_call;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) { snprintf(why, length, "cannot handle SIGSYS: %s", strerror(errno)); return -1; }

    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, GW_AUDIT_ARCH, 1, 0);
    STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    /* The x32 ABI's numbers: not this process's calls. */
    JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
    DENY();
#endif
    /* mmap first (it is hot): anything but a writable shared mapping
     * (anonymous, of /dev/zero, of a file), which RLIMIT_DATA (memory_mb)
     * would not count. */
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 7);
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]));
    JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, 0, 2);
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
    JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 1, 0);
    ALLOW();
    DENY();
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (i = 0; i < CALLS; i++) {
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed_calls[i], 0, 1);
        ALLOW();
    }
    for (i = 0; network_excepted && i < NETWORK_CALLS; i++) {
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)network_calls[i], 0, 1);
        ALLOW();
    }
    /* socket, with the host's network: IPv4 and IPv6 only (an AF_UNIX socket
     * would reach the host's abstract sockets in the shared namespace). */
    if (network_excepted) {
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 5);
        STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0);
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 1);
        ALLOW();
        DENY();
    }
    /* clone3 hides its flags in memory: ENOSYS, and libc uses clone. */
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
    STATEMENT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
    /* clone: threads only (CLONE_THREAD), never a namespace. */
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 5);
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    JUMP(BPF_JMP | BPF_JSET | BPF_K, NAMESPACE_FLAGS, 2, 0);
    JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
    ALLOW();
    DENY();
    /* socketpair: stream pairs only (no datagrams addressed to others' sockets). */
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 0, 5);
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
    STATEMENT(BPF_ALU | BPF_AND | BPF_K, 0xf);
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 1);
    ALLOW();
    DENY();
    /* ioctl: the requests listed above (falls through to DENY below otherwise). */
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, (unsigned char)(1 + 2 * IOCTLS));
    STATEMENT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
    for (i = 0; i < IOCTLS; i++) {
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, allowed_ioctls[i], 0, 1);
        ALLOW();
    }
    DENY();
#undef STATEMENT
#undef JUMP
#undef ALLOW
#undef DENY

    filter.len = n;
    filter.filter = program;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) { snprintf(why, length, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno)); return -1; }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0) { snprintf(why, length, "the kernel refused the seccomp filter: %s", strerror(errno)); return -1; }
    return 0;
#endif
}

/* ---- the order of things ---------------------------------------------- */

/* Landlock (the kernel's own headers here may predate its later ABIs). */
#define GW_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define GW_LANDLOCK_RULE_PATH_BENEATH 1
#define GW_LL_FS_EXECUTE (1ULL << 0)
#define GW_LL_FS_WRITE_FILE (1ULL << 1)
#define GW_LL_FS_READ_FILE (1ULL << 2)
#define GW_LL_FS_READ_DIR (1ULL << 3)
#define GW_LL_FS_REFER (1ULL << 13)
#define GW_LL_FS_TRUNCATE (1ULL << 14)
#define GW_LL_FS_IOCTL_DEV (1ULL << 15)
#define GW_LL_NET_BIND_TCP (1ULL << 0)
#define GW_LL_NET_CONNECT_TCP (1ULL << 1)
#define GW_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define GW_LL_SCOPE_SIGNAL (1ULL << 1)
struct gw_landlock_ruleset_attr { unsigned long long handled_access_fs, handled_access_net, scoped; };
struct gw_landlock_path_beneath_attr { unsigned long long allowed_access; int parent_fd; } __attribute__((packed));

/* Every file system right ABI `abi` knows: 13 in ABI 1, then REFER (2),
   TRUNCATE (3), IOCTL_DEV (5). */
static unsigned long long landlock_fs_rights(long abi) {
    unsigned long long rights = (1ULL << 13) - 1;
    if (abi >= 2) rights |= GW_LL_FS_REFER;
    if (abi >= 3) rights |= GW_LL_FS_TRUNCATE;
    if (abi >= 5) rights |= GW_LL_FS_IOCTL_DEV;
    return rights;
}

static int landlock_allow(int ruleset, const char *path, unsigned long long rights, char *why, size_t length) {
    struct gw_landlock_path_beneath_attr rule;
    int fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
    if (fd < 0) { snprintf(why, length, "cannot open %s for a Landlock rule: %s", path, strerror(errno)); return -1; }
    rule.allowed_access = rights;
    rule.parent_fd = fd;
    if (syscall(__NR_landlock_add_rule, ruleset, GW_LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
        snprintf(why, length, "landlock_add_rule %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* The landlock layer, a second wall behind the others, where the kernel
   has Landlock: with the filesystem layer, its root read-only and
   executable, /tmp writable, /dev's nodes readable and writable; without
   the host's network, no TCP bind or connect (ABI 4); and no signal or
   abstract socket to any process outside the runner's domain (ABI 6), which
   holds even where the pid or network layer is excepted. 0: in force;
   1: the kernel has no Landlock (the layer is absent, not refused); -1:
   refused, why in `why`. */
static int apply_landlock(int filesystem, int network, char *why, size_t length) {
    struct gw_landlock_ruleset_attr attr = {0, 0, 0};
    size_t size;
    int ruleset;
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, GW_LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        if (errno == ENOSYS || errno == EOPNOTSUPP) {
            snprintf(why, length, "the kernel has no Landlock (landlock_create_ruleset: %s)", strerror(errno));
            return 1;
        }
        snprintf(why, length, "landlock_create_ruleset (version): %s", strerror(errno));
        return -1;
    }
    if (filesystem) attr.handled_access_fs = landlock_fs_rights(abi);
    if (network && abi >= 4) attr.handled_access_net = GW_LL_NET_BIND_TCP | GW_LL_NET_CONNECT_TCP;
    if (abi >= 6) attr.scoped = GW_LL_SCOPE_ABSTRACT_UNIX_SOCKET | GW_LL_SCOPE_SIGNAL;
    size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof attr.handled_access_fs : sizeof attr.handled_access_fs;
    if (attr.handled_access_fs == 0 && attr.handled_access_net == 0 && attr.scoped == 0) {
        snprintf(why, length, "Landlock ABI %ld has nothing to restrict with the layers excepted", abi);
        return -1;
    }
    ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) { snprintf(why, length, "landlock_create_ruleset: %s", strerror(errno)); return -1; }
    if (filesystem) {
        unsigned long long device = GW_LL_FS_READ_FILE | GW_LL_FS_WRITE_FILE | GW_LL_FS_READ_DIR | (abi >= 5 ? GW_LL_FS_IOCTL_DEV : 0);
        if (landlock_allow(ruleset, "/", GW_LL_FS_EXECUTE | GW_LL_FS_READ_FILE | GW_LL_FS_READ_DIR, why, length) != 0
            || landlock_allow(ruleset, "/tmp", attr.handled_access_fs, why, length) != 0
            || landlock_allow(ruleset, "/dev", device, why, length) != 0) {
            close(ruleset);
            return -1;
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(why, length, "landlock_restrict_self: %s", strerror(errno));
        close(ruleset);
        return -1;
    }
    close(ruleset);
    return 0;
}

static void try_namespace(int layer, int flags, const char *simulate) {
    if (excepted[layer]) return;
    if (listed(simulate, names[layer])) { refused(layer, "the kernel refused it (simulated: GATEWAY_SANDBOX_SIMULATE_REFUSAL)"); return; }
    if (unshare(flags) != 0) { refused(layer, "the kernel refused the namespace (unshare: %s)", strerror(errno)); return; }
    in_force[layer] = 1;
    reasons[layer][0] = '\0';
}

__attribute__((constructor))
static void gw_runner_confine(void) {
    const char *cookie, *network, *exceptions, *simulate, *host, *tmp;
    long tmp_megabytes;
    int layer, wanted = 0;

    /* Its cgroup leaf first, while this is the one process there is: every
       process it forks from here on is born in the leaf. fd 5 is the leaf's
       cgroup.procs, opened by the host (whose credentials the kernel checks). */
    cookie = getenv("GATEWAY_RUNNER_COOKIE");
    if (cookie != NULL && cookie[0] != '\0' && getenv("GATEWAY_RUNNER_CGROUP_FD") != NULL
        && atoi(getenv("GATEWAY_RUNNER_CGROUP_FD")) == 5 && write(5, "0", 1) != 1)
        fprintf(stderr, "gateway-runner: cannot join its cgroup leaf: %s\n", strerror(errno));

    /* Nothing the host held but fds 0-4. */
    if (syscall(SYS_close_range, 5u, ~0u, 0u) != 0) close_from(5);

    if (cookie == NULL || cookie[0] == '\0') {
        fputs("gateway-runner: started by the gateway host for an adapter with \"isolation\": \"process\", never by hand\n", stderr);
        _exit(2);
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(3);
    host = getenv("GATEWAY_HOST_PID");
    if (host != NULL && atoi(host) != (int)getppid()) _exit(0);

    network = getenv("GATEWAY_RUNNER_NETWORK");
    exceptions = getenv("GATEWAY_RUNNER_EXCEPTIONS");
    simulate = getenv("GATEWAY_RUNNER_SIMULATE_REFUSAL");
    tmp = getenv("GATEWAY_RUNNER_TMP_MB");
    tmp_megabytes = tmp != NULL && atol(tmp) > 0 ? atol(tmp) : 32;
    for (layer = 0; layer < GW_RUNNER_LAYER_COUNT; layer++) {
        excepted[layer] = listed(exceptions, names[layer]);
        snprintf(reasons[layer], sizeof reasons[layer], "%s", excepted[layer] ? "named in the manifest's \"sandbox_exceptions\"" : "not attempted");
    }
    if (network != NULL && strcmp(network, "host") == 0) {
        excepted[NETWORK] = 1;
        snprintf(reasons[NETWORK], sizeof reasons[NETWORK], "the manifest asks for the host's network (\"isolation_network\": \"host\")");
    }
    for (layer = NETWORK; layer <= IPC; layer++) wanted |= !excepted[layer];

    if (wanted) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        int user_refused = 0;
        char why[256] = "";
        if (listed(simulate, "user")) {
            user_refused = 1;
            snprintf(why, sizeof why, "the kernel refused an unprivileged user namespace (simulated: GATEWAY_SANDBOX_SIMULATE_REFUSAL)");
        } else if (unshare(CLONE_NEWUSER) != 0) {
            user_refused = 1;
            snprintf(why, sizeof why, "the kernel refused an unprivileged user namespace (unshare: %s), which every namespace here needs", strerror(errno));
        } else {
            char map[64];
            int ok = write_file("/proc/self/setgroups", "deny") == 0 || errno == ENOENT;
            snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
            ok = ok && write_file("/proc/self/uid_map", map) == 0;
            snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
            ok = ok && write_file("/proc/self/gid_map", map) == 0;
            if (!ok) {
                user_refused = 1;
                snprintf(why, sizeof why, "the user namespace's uid/gid map was refused: %s", strerror(errno));
            }
        }
        if (user_refused) {
            for (layer = NETWORK; layer <= IPC; layer++)
                if (!excepted[layer]) refused(layer, "%s", why);
        } else {
            try_namespace(NETWORK, CLONE_NEWNET, simulate);
            try_namespace(IPC, CLONE_NEWIPC | CLONE_NEWUTS, simulate);
            try_namespace(PID, CLONE_NEWPID, simulate);
            if (!excepted[FILESYSTEM]) {
                if (!in_force[PID]) refused(FILESYSTEM, "it needs the pid layer (a /proc of its own), which is not in force");
                else try_namespace(FILESYSTEM, CLONE_NEWNS, simulate);
            }
        }
    }

    if (in_force[PID]) {
        int report[2];
        pid_t init, runner;
        if (pipe2(report, O_CLOEXEC) != 0) die("cannot make the status pipe");
        init = fork();
        if (init < 0) die("cannot start the PID namespace's init");
        if (init > 0) {
            close(report[1]);
            supervise(init, report[0]);
        }
        close(report[0]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(3);
        if (in_force[FILESYSTEM] && build_root(tmp_megabytes, excepted[NETWORK]) != 0)
            refused(FILESYSTEM, "the empty root could not be built: %s", root_failure);
        {
            /* init needs no capability from here on (nor does the runner it starts). */
            char why[256];
            if (drop_capabilities(why, sizeof why) != 0) { fprintf(stderr, "gateway-runner: %s\n", why); _exit(3); }
        }
        runner = fork();
        if (runner < 0) die("cannot start the runner in its PID namespace");
        if (runner > 0) {
            /* Nothing may read or write init's memory. Only init: the runner
               stays dumpable, so that a host without CAP_SYS_PTRACE can still
               look at its namespaces and root through /proc. */
            prctl(PR_SET_DUMPABLE, 0);
            init_loop(runner, report[1]);
        }
        close(report[1]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(3);
        if (getppid() != 1) _exit(0);
    }

    {
        char why[256];
        if (drop_capabilities(why, sizeof why) != 0) { fprintf(stderr, "gateway-runner: %s\n", why); _exit(3); }
    }
    if (!excepted[LANDLOCK]) {
        char why[256];
        int applied;
        if (listed(simulate, names[LANDLOCK])) refused(LANDLOCK, "the kernel refused it (simulated: GATEWAY_SANDBOX_SIMULATE_REFUSAL)");
        else if ((applied = apply_landlock(in_force[FILESYSTEM], !excepted[NETWORK], why, sizeof why)) == 0) { in_force[LANDLOCK] = 1; reasons[LANDLOCK][0] = '\0'; }
        else if (applied == 1) { absent[LANDLOCK] = 1; snprintf(reasons[LANDLOCK], sizeof reasons[LANDLOCK], "%s", why); }
        else refused(LANDLOCK, "%s", why);
    }
    if (!excepted[SYSCALLS]) {
        char why[256];
        if (listed(simulate, names[SYSCALLS])) refused(SYSCALLS, "the kernel refused it (simulated: GATEWAY_SANDBOX_SIMULATE_REFUSAL)");
        else if (install_filter(excepted[NETWORK], why, sizeof why) != 0) refused(SYSCALLS, "%s", why);
        else { in_force[SYSCALLS] = 1; reasons[SYSCALLS][0] = '\0'; }
    }
}
