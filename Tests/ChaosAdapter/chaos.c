/*
 * chaos.c -- an adapter that misbehaves on request, for the host's tests only
 * (never shipped in manifests/). Each call picks its misbehaviour with
 * "chaos":"<case>" anywhere in the request document:
 *
 *   ok            completes at once with {"status":"succeeded"}
 *   segfault      writes through NULL inside invoke
 *   abort         abort() inside invoke
 *   exit          exit(7) inside invoke
 *   loop          never returns from invoke (spins)
 *   never         accepts, never completes, ignores cancel
 *   twice         completes twice
 *   garbage       completes GW_OK with bytes that are not JSON
 *   huge          completes GW_OK with a 64 MiB document
 *   block_cancel  accepts; its cancel blocks until the test releases it (a writer
 *                 opens the FIFO named by "release":"<path>"), then completes
 *                 GW_E_CANCELLED
 *   after_destroy completes; a thread waits for destroy, calls the host's log, then
 *                 creates the file named by "marker":"<path>"
 *   http_after_complete
 *                 sends an http_send (to a URL no manifest allows: its answer,
 *                 GW_E_DENIED, comes at once) and completes at once; the callback
 *                 creates "entered":"<path>", blocks until the test opens the FIFO
 *                 "release":"<path>", and returns. If destroy runs while such a
 *                 callback has not returned, or a callback starts after destroy,
 *                 it creates "verdict":"<path>"
 *   env           completes with providerStatus "<$name or (unset)>|<secret probe or (none)>",
 *                 for the environment variable "name":"<NAME>"
 *   alloc         completes with providerStatus "allocated" or "refused" after
 *                 allocating and touching "mb":<n> MiB
 *   files         completes with providerStatus "opened:<k>": how many of
 *                 "count":<n> descriptors of /dev/null it could open at once
 *   connect       completes with providerStatus "connected" or "failed:<errno>"
 *                 after a TCP connect to 127.0.0.1:"port":<n>
 *   attack        one thing a hostile adapter tries from inside its sandbox,
 *                 "attack":"<name>"; completes with providerStatus "<result>"
 *                 (docs/plugin-authors.md, "What an isolated adapter may do"):
 *     read        opens "path" for reading: "opened" or "failed:<errno>"
 *     write       creates "path" and writes to it: "written" or "failed:<errno>"
 *     list        the names in the folder "path", comma-separated, or "failed:<errno>"
 *     kill        kill("pid", "signal" or SIGKILL): "sent" or "failed:<errno>"
 *     unix        connects an AF_UNIX socket to "path": "connected" or "failed:<errno>"
 *     ptrace      PTRACE_ATTACH to "pid": "attached" or "failed:<errno>"
 *     vm_read     process_vm_readv of "pid": "read" or "failed:<errno>"
 *     exec        execve("/bin/sh"): "failed:<errno>" (it does not come back when it works)
 *     unshare     unshare(CLONE_NEWUSER): "unshared" or "failed:<errno>"
 *     shm         maps 1 GiB of shared anonymous memory (which RLIMIT_DATA does
 *                 not count): "mapped" or "failed:<errno>"
 *     orphan      forks a child that calls setsid() and forks a grandchild named
 *                 "name" (PR_SET_NAME) that sleeps forever: "started" or "failed:<errno>"
 */
#define _GNU_SOURCE
#include "gateway_abi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct gw_instance {
    const gw_host_api *host;
    int destroyed;              /* under lock; destroy broadcasts gone */
    pthread_mutex_t lock;
    pthread_cond_t gone;
    uint64_t blocking_call;     /* block_cancel's call, 0 when none */
    int callbacks_running;      /* http_after_complete's, under lock */
    char verdict[512];          /* and where a callback around destroy is told */
    char release[512];          /* and the FIFO its cancel waits on */
};

static void complete_text(gw_instance *in, uint64_t id, gw_status status, const char *text)
{
    in->host->complete(id, status, (const uint8_t *)text, strlen(text));
}

/* The string value of "key":"..." in req (NUL-terminated), copied into out. */
static int member(const char *req, const char *key, char *out, size_t cap)
{
    char pattern[64];
    const char *p, *end;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    p = strstr(req, pattern);
    if (p == NULL) return 0;
    p += strlen(pattern);
    end = strchr(p, '"');
    if (end == NULL || (size_t)(end - p) >= cap) return 0;
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return 1;
}

static long number(const char *req, const char *key)
{
    char pattern[64];
    const char *p;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    p = strstr(req, pattern);
    return p == NULL ? 0 : strtol(p + strlen(pattern), NULL, 10);
}

struct late_call { gw_instance *in; char marker[512]; };

static void *after_destroy(void *arg)
{
    struct late_call *late = arg;
    pthread_mutex_lock(&late->in->lock);
    while (!late->in->destroyed) pthread_cond_wait(&late->in->gone, &late->in->lock);
    pthread_mutex_unlock(&late->in->lock);
    late->in->host->log(GW_LOG_WARNING, "chaos: a host service called after destroy", 42);
    if (late->marker[0] != '\0') {
        FILE *f = fopen(late->marker, "w");
        if (f != NULL) fclose(f);
    }
    free(late);
    return NULL;
}

static void touch(const char *path)
{
    FILE *f;
    if (path[0] == '\0') return;
    f = fopen(path, "w");
    if (f != NULL) fclose(f);
}

struct held_callback { gw_instance *in; char entered[512]; char release[512]; };

static void held_http_callback(void *user_data, gw_status status, const uint8_t *doc, size_t len)
{
    struct held_callback *held = user_data;
    gw_instance *in = held->in;
    int fd, destroyed;
    (void)status; (void)doc; (void)len;
    pthread_mutex_lock(&in->lock);
    destroyed = in->destroyed;
    pthread_mutex_unlock(&in->lock);
    if (destroyed) touch(in->verdict);
    touch(held->entered);
    fd = open(held->release, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) close(fd);
    pthread_mutex_lock(&in->lock);
    in->callbacks_running -= 1;
    pthread_mutex_unlock(&in->lock);
    free(held);
}

static gw_status chaos_create(const gw_host_api *host, const uint8_t *config, size_t config_len,
                              gw_instance **out, uint8_t **out_error, size_t *out_error_len)
{
    gw_instance *in;
    (void)config; (void)config_len; (void)out_error; (void)out_error_len;
    in = calloc(1, sizeof *in);
    if (in == NULL) return GW_E_INTERNAL;
    in->host = host;
    pthread_mutex_init(&in->lock, NULL);
    pthread_cond_init(&in->gone, NULL);
    *out = in;
    return GW_OK;
}

static gw_status chaos_describe(gw_instance *in, uint8_t **out_json, size_t *out_len)
{
    static const char doc[] = "{\"id\":\"chaos\",\"version\":\"1.0.0\",\"methods\":[\"visa\"],"
                              "\"operations\":[\"authorize\",\"verify\"],\"currencies\":[\"SAR\"]}";
    (void)in;
    *out_json = malloc(sizeof doc - 1);
    if (*out_json == NULL) return GW_E_INTERNAL;
    memcpy(*out_json, doc, sizeof doc - 1);
    *out_len = sizeof doc - 1;
    return GW_OK;
}

/* One attack (see the top of the file); writes its result into `out`. */
static void attack(const char *req, char *out, size_t cap)
{
    char name[32] = "", path[512] = "", label[16] = "";
    long pid = number(req, "pid");
    int fd, ok = 0;
    member(req, "attack", name, sizeof name);
    member(req, "path", path, sizeof path);
    errno = 0;
    if (strcmp(name, "read") == 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ok = fd >= 0;
        if (ok) close(fd);
        snprintf(out, cap, ok ? "opened" : "failed:%d", errno);
    } else if (strcmp(name, "write") == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ok = fd >= 0 && write(fd, "pwned", 5) == 5;
        if (fd >= 0) close(fd);
        snprintf(out, cap, ok ? "written" : "failed:%d", errno);
    } else if (strcmp(name, "list") == 0) {
        DIR *dir = opendir(path);
        struct dirent *entry;
        size_t used = 0;
        if (dir == NULL) { snprintf(out, cap, "failed:%d", errno); return; }
        out[0] = '\0';
        while ((entry = readdir(dir)) != NULL) {
            if (entry->d_name[0] == '.') continue;
            used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", used ? "," : "", entry->d_name);
            if (used >= cap) break;
        }
        closedir(dir);
    } else if (strcmp(name, "kill") == 0) {
        long sig = number(req, "signal");
        ok = kill((pid_t)pid, sig > 0 ? (int)sig : SIGKILL) == 0;
        snprintf(out, cap, ok ? "sent" : "failed:%d", errno);
    } else if (strcmp(name, "unix") == 0) {
        struct sockaddr_un address;
        memset(&address, 0, sizeof address);
        address.sun_family = AF_UNIX;
        snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        ok = fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
        snprintf(out, cap, ok ? "connected" : "failed:%d", errno);
        if (fd >= 0) close(fd);
    } else if (strcmp(name, "ptrace") == 0) {
        ok = ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL) == 0;
        snprintf(out, cap, ok ? "attached" : "failed:%d", errno);
    } else if (strcmp(name, "vm_read") == 0) {
        char buffer[8];
        struct iovec local = {buffer, sizeof buffer}, remote = {(void *)0x400000, sizeof buffer};
        ok = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) >= 0;
        snprintf(out, cap, ok ? "read" : "failed:%d", errno);
    } else if (strcmp(name, "exec") == 0) {
        char *argv[] = {"/bin/sh", "-c", "true", NULL};
        execv("/bin/sh", argv);
        snprintf(out, cap, "failed:%d", errno);
    } else if (strcmp(name, "unshare") == 0) {
        ok = unshare(CLONE_NEWUSER) == 0;
        snprintf(out, cap, ok ? "unshared" : "failed:%d", errno);
    } else if (strcmp(name, "shm") == 0) {
        void *shared = mmap(NULL, (size_t)1 << 30, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ok = shared != MAP_FAILED;
        if (ok) munmap(shared, (size_t)1 << 30);
        snprintf(out, cap, ok ? "mapped" : "failed:%d", errno);
    } else if (strcmp(name, "orphan") == 0) {
        pid_t child;
        member(req, "name", label, sizeof label);
        child = fork();
        if (child == 0) {
            setsid();
            if (fork() == 0) {
                prctl(PR_SET_NAME, label, 0, 0, 0);
                for (;;) pause();
            }
            _exit(0);
        }
        ok = child > 0;
        if (ok) waitpid(child, NULL, 0);
        snprintf(out, cap, ok ? "started" : "failed:%d", errno);
    } else {
        snprintf(out, cap, "unknown attack");
    }
}

static gw_status chaos_invoke(gw_instance *in, uint64_t id, gw_operation op, const uint8_t *request, size_t len)
{
    char *req, chaos[64] = "ok", text[1024];
    (void)op;
    req = malloc(len + 1);
    if (req == NULL) return GW_E_INTERNAL;
    memcpy(req, request, len);
    req[len] = '\0';
    member(req, "chaos", chaos, sizeof chaos);

    if (strcmp(chaos, "segfault") == 0) { free(req); raise(SIGSEGV); *(volatile int *)0 = 1; }
    if (strcmp(chaos, "abort") == 0) abort();
    if (strcmp(chaos, "exit") == 0) exit(7);
    if (strcmp(chaos, "loop") == 0) { for (;;) __asm__ volatile(""); }

    if (strcmp(chaos, "never") == 0) {
        /* nothing */
    } else if (strcmp(chaos, "twice") == 0) {
        complete_text(in, id, GW_OK, "{\"status\":\"succeeded\"}");
        complete_text(in, id, GW_OK, "{\"status\":\"succeeded\"}");
    } else if (strcmp(chaos, "garbage") == 0) {
        complete_text(in, id, GW_OK, "\x01\x02 this is not { json");
    } else if (strcmp(chaos, "huge") == 0) {
        size_t size = 64u << 20;
        uint8_t *doc = malloc(size);
        if (doc == NULL) { free(req); return GW_E_INTERNAL; }
        memset(doc, 'a', size);
        in->host->complete(id, GW_OK, doc, size);
        free(doc);
    } else if (strcmp(chaos, "block_cancel") == 0) {
        pthread_mutex_lock(&in->lock);
        in->blocking_call = id;
        in->release[0] = '\0';
        member(req, "release", in->release, sizeof in->release);
        pthread_mutex_unlock(&in->lock);
    } else if (strcmp(chaos, "after_destroy") == 0) {
        pthread_t thread;
        struct late_call *late = calloc(1, sizeof *late);
        if (late == NULL) { free(req); return GW_E_INTERNAL; }
        late->in = in;
        member(req, "marker", late->marker, sizeof late->marker);
        if (pthread_create(&thread, NULL, after_destroy, late) != 0) { free(late); free(req); return GW_E_INTERNAL; }
        pthread_detach(thread);
        complete_text(in, id, GW_OK, "{\"status\":\"succeeded\"}");
    } else if (strcmp(chaos, "http_after_complete") == 0) {
        static const char send[] = "{\"method\":\"GET\",\"url\":\"https://nowhere.invalid/held\"}";
        struct held_callback *held = calloc(1, sizeof *held);
        if (held == NULL) { free(req); return GW_E_INTERNAL; }
        held->in = in;
        member(req, "entered", held->entered, sizeof held->entered);
        member(req, "release", held->release, sizeof held->release);
        pthread_mutex_lock(&in->lock);
        member(req, "verdict", in->verdict, sizeof in->verdict);
        in->callbacks_running += 1;
        pthread_mutex_unlock(&in->lock);
        in->host->http_send((const uint8_t *)send, sizeof send - 1, held_http_callback, held);
        complete_text(in, id, GW_OK, "{\"status\":\"succeeded\"}");
    } else if (strcmp(chaos, "env") == 0) {
        char secret[128] = "(none)", name[128] = "";
        size_t secret_len = 0;
        const char *probe;
        member(req, "name", name, sizeof name);
        probe = getenv(name);
        if (in->host->secret_get("probe", 5, (uint8_t *)secret, sizeof secret - 1, &secret_len) == GW_OK)
            secret[secret_len] = '\0';
        else
            strcpy(secret, "(none)");
        snprintf(text, sizeof text, "{\"status\":\"succeeded\",\"providerStatus\":\"%s|%s\"}", probe ? probe : "(unset)", secret);
        complete_text(in, id, GW_OK, text);
    } else if (strcmp(chaos, "alloc") == 0) {
        size_t size = (size_t)number(req, "mb") << 20;
        char *block = malloc(size);
        if (block != NULL) memset(block, 1, size);
        snprintf(text, sizeof text, "{\"status\":\"succeeded\",\"providerStatus\":\"%s\"}", block != NULL ? "allocated" : "refused");
        free(block);
        complete_text(in, id, GW_OK, text);
    } else if (strcmp(chaos, "files") == 0) {
        long count = number(req, "count"), opened = 0, i;
        int *fds = calloc((size_t)count, sizeof *fds);
        if (fds == NULL) { free(req); return GW_E_INTERNAL; }
        for (i = 0; i < count; i++) {
            fds[i] = open("/dev/null", O_RDONLY);
            if (fds[i] >= 0) opened++;
        }
        for (i = 0; i < count; i++) if (fds[i] >= 0) close(fds[i]);
        free(fds);
        snprintf(text, sizeof text, "{\"status\":\"succeeded\",\"providerStatus\":\"opened:%ld\"}", opened);
        complete_text(in, id, GW_OK, text);
    } else if (strcmp(chaos, "attack") == 0) {
        char result[768];
        attack(req, result, sizeof result);
        snprintf(text, sizeof text, "{\"status\":\"succeeded\",\"providerStatus\":\"%s\"}", result);
        complete_text(in, id, GW_OK, text);
    } else if (strcmp(chaos, "connect") == 0) {
        struct sockaddr_in address;
        int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons((uint16_t)number(req, "port"));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
        snprintf(text, sizeof text, "{\"status\":\"succeeded\",\"providerStatus\":\"%s%d\"}", ok ? "connected" : "failed:", ok ? 0 : errno);
        if (fd >= 0) close(fd);
        complete_text(in, id, GW_OK, text);
    } else {
        complete_text(in, id, GW_OK, "{\"status\":\"succeeded\"}");
    }
    free(req);
    return GW_OK;
}

static void chaos_cancel(gw_instance *in, uint64_t id)
{
    int blocking, fd;
    char release[512], drain[64];
    pthread_mutex_lock(&in->lock);
    blocking = in->blocking_call == id;
    if (blocking) in->blocking_call = 0;
    memcpy(release, in->release, sizeof release);
    pthread_mutex_unlock(&in->lock);
    if (blocking) {
        /* Blocks until a writer opens the FIFO, then until it closes it. */
        fd = open(release, O_RDONLY);
        if (fd >= 0) {
            while (read(fd, drain, sizeof drain) > 0) {}
            close(fd);
        }
        complete_text(in, id, GW_E_CANCELLED, "{\"message\":\"cancelled, late\"}");
    }
}

static void chaos_destroy(gw_instance *in)
{
    /* The instance is leaked on purpose: after_destroy's thread still reads it. */
    pthread_mutex_lock(&in->lock);
    if (in->callbacks_running > 0) touch(in->verdict);
    in->destroyed = 1;
    pthread_cond_broadcast(&in->gone);
    pthread_mutex_unlock(&in->lock);
}

static void chaos_free(void *p) { free(p); }

static const gw_adapter_api chaos_api = {
    .struct_size = sizeof(gw_adapter_api),
    .id = "chaos",
    .version = "1.0.0",
    .create = chaos_create,
    .describe = chaos_describe,
    .invoke = chaos_invoke,
    .cancel = chaos_cancel,
    .destroy = chaos_destroy,
    .free = chaos_free,
};

GW_EXPORT gw_status gw_adapter_entry(gw_negotiation *n)
{
    n->adapter_abi_major = GW_ABI_VERSION_MAJOR;
    n->adapter_abi_minor = GW_ABI_VERSION_MINOR;
    n->adapter_api = &chaos_api;
    return n->host_abi_major == GW_ABI_VERSION_MAJOR ? GW_OK : GW_E_VERSION;
}
