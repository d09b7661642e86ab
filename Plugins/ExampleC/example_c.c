/*
 * example_c.c -- a payment adapter written in plain C99 + pthreads against
 * gateway_abi.h alone. It needs nothing from Swift or from the host's code:
 * every service it uses arrives through the gw_host_api table.
 *
 * The "provider" here is simulated in-process, so the file can show the whole
 * contract without a network:
 *
 *   authorize  method "visa" only. Amounts up to `decline_above` minor units
 *              (config, default 1000000) are approved, larger ones declined.
 *              Completes later, from a detached thread this adapter starts
 *              (a thread the host does not own).
 *   verify     Looks at the provider reference authorize handed out
 *              ("exc_<16 hex>_s" approved, "exc_<16 hex>_d" declined) and
 *              completes inline, before invoke() returns.
 *   cancel     Marks an in-flight authorize: a worker that has not asked the
 *              "provider" yet completes it with GW_E_CANCELLED and sends
 *              nothing; one that has sends the real answer.
 *   replays    An authorize repeated under its idempotencyKey gets the first
 *              answer again (completed inline); while the first is still
 *              running, GW_E_OUTCOME_UNKNOWN.
 *              Another request (method, capture, amount) under a key already
 *              used is refused with GW_E_INVALID_REQUEST. The last
 *              REPLAY_CAPACITY keys are remembered.
 *
 * Everything except gw_adapter_entry() is static, so the library exports
 * exactly one symbol.
 */
#define _POSIX_C_SOURCE 200809L

#include "gateway_abi.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADAPTER_ID "example-c"
#define ADAPTER_VERSION "1.0.0"

/* Amounts above this many minor units are declined unless the config says
 * otherwise. */
#define DEFAULT_DECLINE_ABOVE 1000000

/* How many authorize calls may be in flight at once per instance. */
#define INFLIGHT_CAPACITY 1024

/* Requests larger than this are refused (also keeps len + 1 from overflowing). */
#define MAX_REQUEST_BYTES (1024u * 1024u)

/* Idempotency keys remembered per instance (oldest finished ones forgotten
 * first), and the longest key taken. */
#define REPLAY_CAPACITY 2048
#define MAX_KEY_BYTES 255

/* "exc_" + 16 hex digits + "_" + 's' or 'd'. */
#define REFERENCE_LEN 22

/* ===========================================================================
 * Host services: every use goes through these helpers, which check that the
 * member lies within the host's struct_size and is not NULL (ABI rule: a
 * member beyond struct_size, or a NULL one, means "not supported").
 * ======================================================================== */

#define HOST_HAS(host, member)                                                \
    ((host) != NULL &&                                                        \
     (size_t)(host)->struct_size >=                                           \
         offsetof(gw_host_api, member) + sizeof((host)->member) &&            \
     (host)->member != NULL)

/* Writes one printf-style log line; silently does nothing without `log`. */
static void host_log(const gw_host_api *host, gw_log_level level,
                     const char *format, ...)
{
    char line[256];
    va_list args;
    int n;

    if (!HOST_HAS(host, log))
        return;
    va_start(args, format);
    n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = (int)(sizeof line - 1); /* truncated */
    host->log(level, line, (size_t)n);
}

/* Monotonic nanoseconds, or 0 when the host has no clock. */
static uint64_t host_monotonic_ns(const gw_host_api *host)
{
    return HOST_HAS(host, clock_monotonic_ns) ? host->clock_monotonic_ns() : 0;
}

/* Secure random bytes; GW_E_INTERNAL when the host cannot provide them. */
static gw_status host_random(const gw_host_api *host, uint8_t *out, size_t len)
{
    return HOST_HAS(host, random_bytes) ? host->random_bytes(out, len)
                                        : GW_E_INTERNAL;
}

/* Completes a call with a NUL-terminated JSON document (copied by the host). */
static void host_complete(const gw_host_api *host, uint64_t call_id,
                          gw_status status, const char *json)
{
    if (HOST_HAS(host, complete))
        host->complete(call_id, status, (const uint8_t *)json, strlen(json));
}

/* ===========================================================================
 * A minimal, bounded JSON reader.
 *
 * Not a full parser: just enough to find a member of an object and read an
 * integer or a string from it. Every function takes [p, end) and never reads
 * at or beyond `end`. String values are returned raw (escapes not decoded);
 * this adapter only compares them with plain ASCII or checks them against a
 * strict pattern, so an escaped value simply fails to match.
 * ======================================================================== */

/* Nesting limit for skipped values. */
#define JSON_MAX_DEPTH 64

static const char *json_skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Characters that can make up a number or true/false/null. */
static int json_is_scalar_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

/* Whether [p, end) is exactly true, false, null or a JSON number
 * (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?). */
static int json_is_literal(const char *p, const char *end)
{
    size_t len = (size_t)(end - p);
    const char *q = p;

    if ((len == 4 && memcmp(p, "true", 4) == 0) ||
        (len == 5 && memcmp(p, "false", 5) == 0) ||
        (len == 4 && memcmp(p, "null", 4) == 0))
        return 1;
    if (q < end && *q == '-')
        q++;
    if (q >= end)
        return 0;
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    } else {
        return 0;
    }
    if (q < end && *q == '.') {
        const char *digits = ++q;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q == digits)
            return 0;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        const char *digits;
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        digits = q;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q == digits)
            return 0;
    }
    return q == end;
}

/* The length of the well-formed UTF-8 sequence of a non-ASCII lead byte at
 * p (2 to 4), or 0 when it is not one (overlong forms, surrogates and
 * code points above U+10FFFF included). */
static size_t utf8_sequence(const unsigned char *p, const unsigned char *end)
{
    size_t n, i;
    uint32_t cp;

    if (p[0] >= 0xC2 && p[0] <= 0xDF) { n = 2; cp = p[0] & 0x1F; }
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) { n = 3; cp = p[0] & 0x0F; }
    else if (p[0] >= 0xF0 && p[0] <= 0xF4) { n = 4; cp = p[0] & 0x07; }
    else return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* p at '"': returns the position just past the closing quote, or NULL. The
 * string must be UTF-8 (RFC 8259) with no raw control character. */
static const char *json_skip_string(const char *p, const char *end)
{
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            if (end - p < 2)
                return NULL;
            p++; /* skip the escaped character */
        } else if (c == '"') {
            return p + 1;
        } else if (c < 0x20) {
            return NULL; /* raw control characters are not allowed */
        } else if (c >= 0x80) {
            size_t n = utf8_sequence((const unsigned char *)p, (const unsigned char *)end);
            if (n == 0)
                return NULL;
            p += n - 1;
        }
    }
    return NULL;
}

/* Skips one value of any kind; returns the position after it, or NULL.
 * Objects and arrays are skipped by counting brackets (strings inside them
 * are skipped properly), which is enough for a minimal reader. */
static const char *json_skip_value(const char *p, const char *end)
{
    const char *start;

    p = json_skip_ws(p, end);
    if (p >= end)
        return NULL;
    if (*p == '"')
        return json_skip_string(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = json_skip_string(p, end);
                if (p == NULL)
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') {
                if (++depth > JSON_MAX_DEPTH)
                    return NULL;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return NULL;
    }
    start = p;
    while (p < end && json_is_scalar_char(*p))
        p++;
    if (p == start)
        return NULL;
    /* Only true, false, null and a JSON number: "tru" or "12x" is malformed,
     * even in a member this adapter does not read. */
    if (json_is_literal(start, p))
        return p;
    return NULL;
}

/* Validates one value of any kind, strictly (objects with string keys,
 * arrays, strings, literals), at most JSON_MAX_DEPTH deep; returns the
 * position after it, or NULL. */
static const char *json_validate(const char *p, const char *end, int depth)
{
    p = json_skip_ws(p, end);
    if (p >= end || depth > JSON_MAX_DEPTH)
        return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int object = *p == '{';
        p = json_skip_ws(p + 1, end);
        if (p < end && *p == close)
            return p + 1;
        for (;;) {
            if (object) {
                p = json_skip_string(json_skip_ws(p, end), end);
                if (p == NULL)
                    return NULL;
                p = json_skip_ws(p, end);
                if (p >= end || *p != ':')
                    return NULL;
                p++;
            }
            p = json_validate(p, end, depth + 1);
            if (p == NULL)
                return NULL;
            p = json_skip_ws(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            return p < end && *p == close ? p + 1 : NULL;
        }
    }
    return json_skip_value(p, end);
}

/* Whether [p, end) is one object, valid throughout, and nothing else but
 * whitespace: a malformed member is malformed even if it is never read. */
static int json_is_object(const char *p, const char *end)
{
    p = json_skip_ws(p, end);
    if (p >= end || *p != '{')
        return 0;
    p = json_validate(p, end, 1);
    return p != NULL && json_skip_ws(p, end) == end;
}

/*
 * Finds member `key` of the object starting at `obj` (leading whitespace
 * allowed). Only that object's own members are looked at, never nested ones.
 * Returns 1 and sets *value to the start of the member's value when found,
 * 0 when the object has no such member, -1 when the text is malformed.
 */
static int json_find_member(const char *obj, const char *end, const char *key,
                            const char **value)
{
    size_t key_len = strlen(key);
    const char *p = json_skip_ws(obj, end);

    if (p >= end || *p != '{')
        return -1;
    p = json_skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return 0; /* empty object */
    for (;;) {
        const char *name, *after_name;

        if (p >= end || *p != '"')
            return -1;
        name = p + 1;
        after_name = json_skip_string(p, end);
        if (after_name == NULL)
            return -1;
        p = json_skip_ws(after_name, end);
        if (p >= end || *p != ':')
            return -1;
        p = json_skip_ws(p + 1, end);
        if ((size_t)(after_name - 1 - name) == key_len &&
            memcmp(name, key, key_len) == 0) {
            *value = p;
            return 1;
        }
        p = json_skip_value(p, end);
        if (p == NULL)
            return -1;
        p = json_skip_ws(p, end);
        if (p >= end)
            return -1;
        if (*p == '}')
            return 0;
        if (*p != ',')
            return -1;
        p = json_skip_ws(p + 1, end);
    }
}

/* Reads an integer value (no fraction, no exponent) that fits int64_t.
 * Returns 0 on success, -1 otherwise. */
static int json_read_int64(const char *p, const char *end, int64_t *out)
{
    int negative = 0;
    uint64_t magnitude = 0;
    uint64_t limit;
    const char *digits;

    if (p < end && *p == '-') {
        negative = 1;
        p++;
    }
    limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (magnitude > (limit - d) / 10u)
            return -1; /* overflow */
        magnitude = magnitude * 10u + d;
        p++;
    }
    if (p == digits || (p < end && json_is_scalar_char(*p)))
        return -1; /* no digits, or "12.5", "1e3", "12abc" */
    if (negative)
        *out = magnitude == (uint64_t)INT64_MAX + 1u
                   ? INT64_MIN
                   : -(int64_t)magnitude;
    else
        *out = (int64_t)magnitude;
    return 0;
}

/* Reads a string value: *s points at its raw contents, *len is their length.
 * Returns 0 on success, -1 when the value is not a string. */
static int json_read_string(const char *p, const char *end, const char **s,
                            size_t *len)
{
    const char *after = json_skip_string(p, end);

    if (after == NULL)
        return -1;
    *s = p + 1;
    *len = (size_t)(after - 1 - (p + 1));
    return 0;
}

/* Whether the value at p is the literal null. */
static int json_is_null(const char *p, const char *end)
{
    return end - p >= 4 && memcmp(p, "null", 4) == 0 &&
           (end - p == 4 || !json_is_scalar_char(p[4]));
}

/* Convenience: member `key` of `obj` as a string. 0 on success. */
static int json_get_string(const char *obj, const char *end, const char *key,
                           const char **s, size_t *len)
{
    const char *value;

    if (json_find_member(obj, end, key, &value) != 1)
        return -1;
    return json_read_string(value, end, s, len);
}

/* Convenience: member `key` of `obj` as an integer. 0 on success. */
static int json_get_int64(const char *obj, const char *end, const char *key,
                          int64_t *out)
{
    const char *value;

    if (json_find_member(obj, end, key, &value) != 1)
        return -1;
    return json_read_int64(value, end, out);
}

/* Whether [s, s + len) equals the NUL-terminated `literal`. */
static int span_equals(const char *s, size_t len, const char *literal)
{
    return strlen(literal) == len && memcmp(s, literal, len) == 0;
}

/* ===========================================================================
 * The instance and its table of in-flight authorize calls
 * ======================================================================== */

struct inflight_slot {
    uint64_t call_id;
    unsigned char used;
    unsigned char cancelled;
};

/* The first answer given under one idempotency key. */
struct replay_entry {
    unsigned char used;
    unsigned char done;      /* 0 while its first call runs */
    uint64_t fingerprint;    /* of what went to the "provider" */
    size_t key_len;
    char key[MAX_KEY_BYTES];
    gw_status status;
    char result[512];
};

struct gw_instance {
    const gw_host_api *host; /* borrowed; valid until destroy() returns */
    int64_t decline_above;   /* approve amounts <= this (minor units) */

    pthread_mutex_t lock;    /* guards everything below */
    size_t inflight_count;
    struct inflight_slot inflight[INFLIGHT_CAPACITY];
    size_t replay_next;      /* where the next new key goes (a ring) */
    struct replay_entry replays[REPLAY_CAPACITY];
};

/* Registers an authorize call. Returns 0, or -1 when the table is full. */
static int inflight_add(gw_instance *inst, uint64_t call_id)
{
    int result = -1;
    size_t i;

    pthread_mutex_lock(&inst->lock);
    if (inst->inflight_count < INFLIGHT_CAPACITY) {
        for (i = 0; i < INFLIGHT_CAPACITY; i++) {
            if (!inst->inflight[i].used) {
                inst->inflight[i].call_id = call_id;
                inst->inflight[i].used = 1;
                inst->inflight[i].cancelled = 0;
                inst->inflight_count++;
                result = 0;
                break;
            }
        }
    }
    pthread_mutex_unlock(&inst->lock);
    return result;
}

/* Removes a call from the table and tells whether it was cancelled. Once it
 * is removed, a late cancel() for it is ignored. */
static int inflight_take(gw_instance *inst, uint64_t call_id)
{
    int cancelled = 0;
    size_t i;

    pthread_mutex_lock(&inst->lock);
    for (i = 0; i < INFLIGHT_CAPACITY; i++) {
        if (inst->inflight[i].used && inst->inflight[i].call_id == call_id) {
            cancelled = inst->inflight[i].cancelled;
            inst->inflight[i].used = 0;
            inst->inflight_count--;
            break;
        }
    }
    pthread_mutex_unlock(&inst->lock);
    return cancelled;
}

/* ===========================================================================
 * Provider references: "exc_" + 16 lowercase hex + "_s" (approved) or "_d"
 * ======================================================================== */

/* Whether [s, s + len) is a reference this adapter handed out; sets *outcome
 * to 's' or 'd'. Only strings that pass are ever echoed into JSON. */
static int reference_parse(const char *s, size_t len, char *outcome)
{
    size_t i;

    if (len != REFERENCE_LEN || memcmp(s, "exc_", 4) != 0 || s[20] != '_')
        return 0;
    for (i = 4; i < 20; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    if (s[21] != 's' && s[21] != 'd')
        return 0;
    *outcome = s[21];
    return 1;
}

/* ===========================================================================
 * authorize: validated in invoke(), answered from a detached worker thread
 * ======================================================================== */

/* Everything the worker needs, copied out of the borrowed request. */
struct authorize_job {
    gw_instance *inst;
    uint64_t call_id;
    int64_t value;
    char currency[4];
    uint64_t started_ns;
    size_t replay;           /* its key's entry in inst->replays */
};

/* FNV-1a over what goes to the "provider": the same request under a key
 * hashes the same, whatever order the host wrote its members in. */
static uint64_t fingerprint_add(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h ^ 0xff; /* a separator, so "ab"+"c" differs from "a"+"bc" */
}

enum replay_found { REPLAY_NEW, REPLAY_ANSWERED, REPLAY_RUNNING, REPLAY_OTHER, REPLAY_FULL };

/* Looks key up; a new key takes the oldest finished entry (*slot). For an
 * answered key, copies its answer into status and result. */
static enum replay_found replay_claim(gw_instance *inst, const char *key, size_t key_len,
                                      uint64_t fingerprint, size_t *slot,
                                      gw_status *status, char *result, size_t result_cap)
{
    enum replay_found found = REPLAY_FULL;
    size_t i;

    pthread_mutex_lock(&inst->lock);
    for (i = 0; i < REPLAY_CAPACITY; i++) {
        struct replay_entry *e = &inst->replays[i];
        if (!e->used || e->key_len != key_len || memcmp(e->key, key, key_len) != 0)
            continue;
        if (e->fingerprint != fingerprint) {
            found = REPLAY_OTHER;
        } else if (!e->done) {
            found = REPLAY_RUNNING;
        } else {
            found = REPLAY_ANSWERED;
            *status = e->status;
            snprintf(result, result_cap, "%s", e->result);
        }
        pthread_mutex_unlock(&inst->lock);
        return found;
    }
    /* New: the next entry in the ring that is not running. */
    for (i = 0; i < REPLAY_CAPACITY; i++) {
        size_t at = (inst->replay_next + i) % REPLAY_CAPACITY;
        struct replay_entry *e = &inst->replays[at];
        if (e->used && !e->done)
            continue;
        e->used = 1;
        e->done = 0;
        e->fingerprint = fingerprint;
        e->key_len = key_len;
        memcpy(e->key, key, key_len);
        inst->replay_next = (at + 1) % REPLAY_CAPACITY;
        *slot = at;
        found = REPLAY_NEW;
        break;
    }
    pthread_mutex_unlock(&inst->lock);
    return found;
}

/* Records the first answer under an entry (or, done = 0, gives it up). */
static void replay_finish(gw_instance *inst, size_t slot, int done,
                          gw_status status, const char *result)
{
    struct replay_entry *e = &inst->replays[slot];
    pthread_mutex_lock(&inst->lock);
    if (done) {
        e->done = 1;
        e->status = status;
        snprintf(e->result, sizeof e->result, "%s", result);
    } else {
        e->used = 0;
    }
    pthread_mutex_unlock(&inst->lock);
}

static void *authorize_worker(void *arg)
{
    struct authorize_job job = *(struct authorize_job *)arg;
    const gw_host_api *host = job.inst->host;
    static const char hex[] = "0123456789abcdef";
    char reference[REFERENCE_LEN + 1];
    char result[512];
    uint8_t random[8];
    gw_status status;
    int approved, cancelled;
    size_t i;
    uint64_t finished_ns;

    free(arg);

    /* Cancelled before the provider was asked: stop, send nothing, give the
     * key up (a retry under it is a first try). */
    pthread_mutex_lock(&job.inst->lock);
    cancelled = 0;
    for (i = 0; i < INFLIGHT_CAPACITY; i++) {
        if (job.inst->inflight[i].used && job.inst->inflight[i].call_id == job.call_id) {
            cancelled = job.inst->inflight[i].cancelled;
            break;
        }
    }
    pthread_mutex_unlock(&job.inst->lock);
    if (cancelled) {
        replay_finish(job.inst, job.replay, 0, GW_OK, NULL);
        (void)inflight_take(job.inst, job.call_id);
        host_complete(host, job.call_id, GW_E_CANCELLED,
                      "{\"message\":\"cancelled before anything was sent\"}");
        return NULL;
    }

    /* "Ask the provider": approve up to decline_above, mint a reference. */
    approved = job.value <= job.inst->decline_above;
    status = host_random(host, random, sizeof random);
    if (status == GW_OK) {
        memcpy(reference, "exc_", 4);
        for (i = 0; i < sizeof random; i++) {
            reference[4 + 2 * i] = hex[random[i] >> 4];
            reference[5 + 2 * i] = hex[random[i] & 0x0f];
        }
        reference[20] = '_';
        reference[21] = approved ? 's' : 'd';
        reference[22] = '\0';

        if (approved)
            snprintf(result, sizeof result,
                     "{\"status\":\"succeeded\",\"providerReference\":\"%s\","
                     "\"amount\":{\"value\":%lld,\"currency\":\"%s\"},"
                     "\"providerStatus\":\"APPROVED\"}",
                     reference, (long long)job.value, job.currency);
        else
            snprintf(result, sizeof result,
                     "{\"status\":\"failed\",\"providerReference\":\"%s\","
                     "\"problem\":{\"code\":\"card_declined\","
                     "\"message\":\"example-c declines amounts above %lld "
                     "minor units\",\"retryable\":false,"
                     "\"safeToRetryElsewhere\":false,\"providerCode\":\"05\"},"
                     "\"providerStatus\":\"DECLINED\"}",
                     reference, (long long)job.inst->decline_above);
    } else {
        status = GW_E_INTERNAL;
        snprintf(result, sizeof result,
                 "{\"message\":\"example-c: no secure random bytes for the "
                 "provider reference\"}");
    }

    /* The "provider" acted: a replay of the key gets this answer. */
    replay_finish(job.inst, job.replay, status == GW_OK, status, result);

    /* Leave the in-flight table. A cancel() that came after the provider
     * answered changes nothing: the real answer is known, so it is sent (a
     * GW_E_CANCELLED here would leave the host a payment it must reconcile,
     * and verify cannot find one without the reference). */
    (void)inflight_take(job.inst, job.call_id);

    finished_ns = host_monotonic_ns(host);
    if (job.started_ns != 0 && finished_ns >= job.started_ns)
        host_log(host, GW_LOG_DEBUG,
                 "authorize call %llu %s in %llu us",
                 (unsigned long long)job.call_id,
                 status != GW_OK ? "failed"
                 : approved ? "approved" : "declined",
                 (unsigned long long)((finished_ns - job.started_ns) / 1000u));

    /* The completion is the LAST thing this thread does with the instance:
     * once it fires, the host may destroy the instance at any moment. The
     * thread itself then just returns; the library is never unloaded. */
    host_complete(host, job.call_id, status, result);
    return NULL;
}

static gw_status authorize(gw_instance *inst, uint64_t call_id,
                           const char *req, const char *end)
{
    const char *s, *amount, *method, *capture, *key;
    size_t len, method_len, capture_len, key_len, slot = 0;
    int64_t value;
    uint64_t fingerprint;
    gw_status replayed = GW_OK;
    char first[512];
    struct authorize_job *job;
    pthread_attr_t attr;
    pthread_t thread;
    int failed;

    /* paymentId: required string (not used further by this simulation). */
    if (json_get_string(req, end, "paymentId", &s, &len) != 0)
        return GW_E_INVALID_REQUEST;
    /* method: must be "visa", the only method describe() lists. */
    if (json_get_string(req, end, "method", &method, &method_len) != 0 ||
        !span_equals(method, method_len, "visa"))
        return GW_E_INVALID_REQUEST;
    /* capture: this adapter has no capture operation, so it can only charge
     * at once; a manual-capture request is refused, not silently charged. */
    if (json_get_string(req, end, "capture", &capture, &capture_len) != 0 ||
        !span_equals(capture, capture_len, "automatic"))
        return GW_E_INVALID_REQUEST;
    /* amount: {"value": <positive integer>, "currency": one of describe()'s}. */
    if (json_find_member(req, end, "amount", &amount) != 1 ||
        json_get_int64(amount, end, "value", &value) != 0 || value <= 0 ||
        json_get_string(amount, end, "currency", &s, &len) != 0 ||
        !(span_equals(s, len, "SAR") || span_equals(s, len, "USD") ||
          span_equals(s, len, "EUR")))
        return GW_E_INVALID_REQUEST;

    /* idempotencyKey: required; the same request under it gets the first
     * answer, another request is refused. */
    if (json_get_string(req, end, "idempotencyKey", &key, &key_len) != 0 ||
        key_len == 0 || key_len > MAX_KEY_BYTES)
        return GW_E_INVALID_REQUEST;
    fingerprint = fingerprint_add(14695981039346656037ull, method, method_len);
    fingerprint = fingerprint_add(fingerprint, capture, capture_len);
    fingerprint = fingerprint_add(fingerprint, s, len);
    fingerprint = fingerprint_add(fingerprint, &value, sizeof value);
    switch (replay_claim(inst, key, key_len, fingerprint, &slot, &replayed, first, sizeof first)) {
    case REPLAY_NEW:
        break;
    case REPLAY_ANSWERED:
        host_complete(inst->host, call_id, replayed, first);
        return GW_OK;
    case REPLAY_RUNNING:
        host_complete(inst->host, call_id, GW_E_OUTCOME_UNKNOWN,
                      "{\"message\":\"the first request under this idempotency key is still in progress\"}");
        return GW_OK;
    case REPLAY_OTHER:
        host_log(inst->host, GW_LOG_WARNING,
                 "authorize refused: its idempotency key was already used with another request");
        return GW_E_INVALID_REQUEST;
    case REPLAY_FULL:
        return GW_E_BUSY;
    }

    job = malloc(sizeof *job);
    if (job == NULL) {
        replay_finish(inst, slot, 0, GW_OK, NULL);
        return GW_E_INTERNAL;
    }
    job->inst = inst;
    job->replay = slot;
    job->call_id = call_id;
    job->value = value;
    memcpy(job->currency, s, 3);
    job->currency[3] = '\0';
    job->started_ns = host_monotonic_ns(inst->host);

    if (inflight_add(inst, call_id) != 0) {
        replay_finish(inst, slot, 0, GW_OK, NULL);
        free(job);
        return GW_E_BUSY;
    }

    /* A detached thread: nobody joins it; it completes the call and exits. */
    failed = pthread_attr_init(&attr) != 0;
    if (!failed) {
        failed = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0 ||
                 pthread_create(&thread, &attr, authorize_worker, job) != 0;
        pthread_attr_destroy(&attr);
    }
    if (failed) {
        /* Not accepted: undo, and let the host retry later. */
        (void)inflight_take(inst, call_id);
        replay_finish(inst, slot, 0, GW_OK, NULL);
        free(job);
        return GW_E_BUSY;
    }
    return GW_OK;
}

/* ===========================================================================
 * verify: answered inline, before invoke() returns
 * ======================================================================== */

static gw_status verify(gw_instance *inst, uint64_t call_id, const char *req,
                        const char *end)
{
    const char *s, *value;
    size_t len;
    char outcome;
    char result[512];
    int found;

    if (json_get_string(req, end, "paymentId", &s, &len) != 0)
        return GW_E_INVALID_REQUEST;

    found = json_find_member(req, end, "providerReference", &value);
    if (found < 0)
        return GW_E_INVALID_REQUEST;
    if (found == 0 || json_is_null(value, end)) {
        /* This adapter finds payments only by the reference it issued. Saying
         * "failed" here would tell the host "not charged" about a payment it
         * knows nothing of; refusing says "cannot tell". */
        return GW_E_INVALID_REQUEST;
    } else if (json_read_string(value, end, &s, &len) != 0) {
        return GW_E_INVALID_REQUEST; /* present, but neither string nor null */
    } else if (!reference_parse(s, len, &outcome)) {
        /* Not ours: do not echo it (it might not even be valid JSON text). */
        snprintf(result, sizeof result,
                 "{\"status\":\"failed\",\"problem\":{\"code\":"
                 "\"unknown_payment\",\"message\":\"example-c does not know "
                 "this provider reference\",\"retryable\":false,"
                 "\"safeToRetryElsewhere\":false}}");
    } else if (outcome == 's') {
        snprintf(result, sizeof result,
                 "{\"status\":\"succeeded\",\"providerReference\":\"%.*s\","
                 "\"providerStatus\":\"APPROVED\"}",
                 (int)len, s);
    } else {
        snprintf(result, sizeof result,
                 "{\"status\":\"failed\",\"providerReference\":\"%.*s\","
                 "\"problem\":{\"code\":\"card_declined\",\"message\":"
                 "\"example-c declined this payment\",\"retryable\":false,"
                 "\"safeToRetryElsewhere\":false,\"providerCode\":\"05\"},"
                 "\"providerStatus\":\"DECLINED\"}",
                 (int)len, s);
    }

    /* Completing before invoke() returns is allowed by the ABI. */
    host_complete(inst->host, call_id, GW_OK, result);
    return GW_OK;
}

/* ===========================================================================
 * The adapter table
 * ======================================================================== */

/* Hands an operator-facing message back through create()'s out-parameters. */
static void set_error(uint8_t **out_error, size_t *out_error_len,
                      const char *message)
{
    size_t len = strlen(message);
    uint8_t *copy;

    if (out_error == NULL || out_error_len == NULL)
        return;
    copy = malloc(len);
    if (copy == NULL)
        return;
    memcpy(copy, message, len);
    *out_error = copy;
    *out_error_len = len;
}

static gw_status example_create(const gw_host_api *host, const uint8_t *config,
                                size_t config_len, gw_instance **out_instance,
                                uint8_t **out_error, size_t *out_error_len)
{
    const char *cfg = (const char *)config;
    const char *cfg_end = cfg + config_len;
    const char *value;
    int64_t decline_above = DEFAULT_DECLINE_ABOVE;
    int found;
    gw_instance *inst;

    if (out_instance == NULL)
        return GW_E_INVALID_REQUEST;
    if (!HOST_HAS(host, complete)) {
        set_error(out_error, out_error_len,
                  "example-c: the host services table has no complete()");
        return GW_E_INVALID_REQUEST;
    }
    if (config == NULL || !json_is_object(cfg, cfg_end)) {
        set_error(out_error, out_error_len,
                  "example-c: config must be a JSON object");
        return GW_E_INVALID_REQUEST;
    }
    found = json_find_member(cfg, cfg_end, "decline_above", &value);
    if (found < 0 ||
        (found == 1 && (json_read_int64(value, cfg_end, &decline_above) != 0 ||
                        decline_above < 0))) {
        set_error(out_error, out_error_len,
                  "example-c: decline_above must be a non-negative integer "
                  "(minor units)");
        return GW_E_INVALID_REQUEST;
    }

    inst = calloc(1, sizeof *inst);
    if (inst == NULL) {
        set_error(out_error, out_error_len, "example-c: out of memory");
        return GW_E_INTERNAL;
    }
    if (pthread_mutex_init(&inst->lock, NULL) != 0) {
        free(inst);
        set_error(out_error, out_error_len, "example-c: cannot create a mutex");
        return GW_E_INTERNAL;
    }
    inst->host = host;
    inst->decline_above = decline_above;

    host_log(host, GW_LOG_INFO,
             "example-c instance created (decline_above=%lld minor units)",
             (long long)decline_above);
    *out_instance = inst;
    return GW_OK;
}

static gw_status example_describe(gw_instance *instance, uint8_t **out_json,
                                  size_t *out_len)
{
    static const char doc[] =
        "{\"id\":\"" ADAPTER_ID "\",\"version\":\"" ADAPTER_VERSION "\","
        "\"methods\":[\"visa\"],\"operations\":[\"authorize\",\"verify\"],"
        "\"currencies\":[\"SAR\",\"USD\",\"EUR\"]}";
    uint8_t *copy;

    (void)instance; /* the same for every instance */
    if (out_json == NULL || out_len == NULL)
        return GW_E_INVALID_REQUEST;
    copy = malloc(sizeof doc - 1);
    if (copy == NULL)
        return GW_E_INTERNAL;
    memcpy(copy, doc, sizeof doc - 1);
    *out_json = copy;
    *out_len = sizeof doc - 1;
    return GW_OK;
}

static gw_status example_invoke(gw_instance *instance, uint64_t call_id,
                                gw_operation operation,
                                const uint8_t *request, size_t request_len)
{
    char *req;
    const char *end;
    gw_status status;

    if (operation != GW_OP_AUTHORIZE && operation != GW_OP_VERIFY)
        return GW_E_UNSUPPORTED; /* refused: no completion */
    if (instance == NULL || (request == NULL && request_len != 0) ||
        request_len > MAX_REQUEST_BYTES)
        return GW_E_INVALID_REQUEST;
    if (!HOST_HAS(instance->host, complete))
        return GW_E_INTERNAL;

    /* The request is borrowed and not NUL-terminated: work on a private,
     * terminated copy. The readers are bounded by `end` anyway. */
    req = malloc(request_len + 1);
    if (req == NULL)
        return GW_E_INTERNAL;
    if (request_len != 0)
        memcpy(req, request, request_len);
    req[request_len] = '\0';
    end = req + request_len;

    if (!json_is_object(req, end))
        status = GW_E_INVALID_REQUEST;
    else if (operation == GW_OP_AUTHORIZE)
        status = authorize(instance, call_id, req, end);
    else
        status = verify(instance, call_id, req, end);

    free(req);
    return status;
}

static void example_cancel(gw_instance *instance, uint64_t call_id)
{
    size_t i;

    if (instance == NULL)
        return;
    /* Only flags the call; its worker completes it (with GW_E_CANCELLED).
     * Unknown or finished ids (verify calls, completed authorizes) are
     * simply not in the table. */
    pthread_mutex_lock(&instance->lock);
    for (i = 0; i < INFLIGHT_CAPACITY; i++) {
        if (instance->inflight[i].used &&
            instance->inflight[i].call_id == call_id) {
            instance->inflight[i].cancelled = 1;
            break;
        }
    }
    pthread_mutex_unlock(&instance->lock);
}

static void example_destroy(gw_instance *instance)
{
    /* The host calls this only after every accepted call completed, so no
     * worker still uses the instance (each worker completes last). */
    if (instance == NULL)
        return;
    pthread_mutex_destroy(&instance->lock);
    free(instance);
}

static void example_free(void *ptr)
{
    free(ptr);
}

static const gw_adapter_api example_api = {
    .struct_size = sizeof(gw_adapter_api),
    .reserved0 = 0,
    .id = ADAPTER_ID,
    .version = ADAPTER_VERSION,
    .create = example_create,
    .describe = example_describe,
    .invoke = example_invoke,
    .cancel = example_cancel,
    .destroy = example_destroy,
    .free = example_free,
};

/* ===========================================================================
 * The one exported symbol
 * ======================================================================== */

/* Whether member m of the host's negotiation struct lies within its size. */
#define NEGOTIATION_HAS(n, m) \
    ((size_t)(n)->struct_size >= offsetof(gw_negotiation, m) + sizeof((n)->m))

GW_EXPORT gw_status gw_adapter_entry(gw_negotiation *n)
{
    if (n == NULL)
        return GW_E_INVALID_REQUEST;

    /* Always report our version and table (as far as the host's struct
     * reaches), so the host can name both versions if they differ. */
    if (NEGOTIATION_HAS(n, adapter_abi_major))
        n->adapter_abi_major = GW_ABI_VERSION_MAJOR;
    /* The minor version this adapter implements, not the header's: it has
     * only ABI 1.0's operations, and stays 1.0 on purpose (the witness that
     * a 1.0 adapter keeps working in a 1.1 host). */
    if (NEGOTIATION_HAS(n, adapter_abi_minor))
        n->adapter_abi_minor = 0;
    if (NEGOTIATION_HAS(n, adapter_api))
        n->adapter_api = &example_api;

    if (!NEGOTIATION_HAS(n, adapter_api))
        return GW_E_VERSION; /* a struct this small is not ABI 1 */
    return n->host_abi_major == GW_ABI_VERSION_MAJOR ? GW_OK : GW_E_VERSION;
}
