/*
 * gateway_abi.h -- the payment gateway plugin ABI, version 1.1.
 *
 * This header is the whole contract between the gateway host and a provider
 * adapter. It is self-contained C99 (only <stddef.h> and <stdint.h>), so an
 * adapter can be written in C, C++, Swift, Rust, Zig or anything else that can
 * export one C function. Nothing else from the host is needed to build one.
 *
 * Naming shows direction:
 *   gw_adapter_*  is implemented by the adapter and called by the host.
 *   gw_host_*     is implemented by the host and called by the adapter.
 *
 * ---------------------------------------------------------------------------
 * Life of an adapter
 * ---------------------------------------------------------------------------
 *  1. The host reads and validates the adapter's JSON manifest. Nothing is
 *     loaded before that, and a disabled manifest's library is never opened.
 *  2. The host dlopen()s the library with RTLD_NOW | RTLD_LOCAL and never
 *     dlclose()s it. An adapter must therefore have no undefined symbols that
 *     only the host could provide: everything it needs from the host arrives
 *     through gw_host_api.
 *  3. The host looks up ONE symbol, by default GW_ADAPTER_ENTRY_SYMBOL
 *     ("gw_adapter_entry"; a manifest may name another), of type
 *     gw_adapter_entry_fn, and calls it once to negotiate the ABI version and
 *     obtain the adapter's function table (gw_adapter_api).
 *  4. The host calls create() once per instance with the host services table
 *     and the manifest's non-secret configuration, then describe() to learn
 *     what the instance implements, then invoke() any number of times from any
 *     number of threads, cancel() when it gives up on a call, and finally
 *     destroy(), only once every accepted call's completion has arrived (an
 *     instance that never completes a call is never destroyed) and every
 *     http_send/wallet_decrypt callback of the instance has returned. After
 *     destroy() returns, the adapter must not call any host service of that
 *     instance.
 *
 * ---------------------------------------------------------------------------
 * Versioning rules
 * ---------------------------------------------------------------------------
 *  - Every table starts with `struct_size`, the size in bytes of the table as
 *    its writer compiled it. Tables only ever grow at the end; a reader uses a
 *    member only if it lies entirely within struct_size, and otherwise treats
 *    it as NULL.
 *  - A NULL function pointer means "not supported".
 *  - A new minor version only appends members and operations. A new major
 *    version may change anything; host and adapter must agree on the major.
 *  - The minor version in use is the lower of the host's and the adapter's
 *    (gw_abi_negotiation). The host invokes an operation of a later minor
 *    only when both sides reached it AND describe() lists it; an adapter
 *    that is asked for an operation code it does not know (a later minor's)
 *    refuses it with GW_E_UNSUPPORTED and sends no completion.
 *  - 1.1 added GW_OP_INSTRUMENTS and the host service wallet_decrypt. A 1.0
 *    adapter keeps working unchanged.
 *
 * ---------------------------------------------------------------------------
 * Memory rules (who frees what)
 * ---------------------------------------------------------------------------
 *  - A buffer is always freed by the side that allocated it.
 *  - Buffers passed as arguments (const pointers) are BORROWED: they are valid
 *    only until the function they were passed to returns. Copy what you keep.
 *  - Buffers the adapter returns through out-parameters (describe() output,
 *    create() error text) are owned by the adapter; the host hands them back
 *    through gw_adapter_api.free() when it has copied them.
 *  - Strings are UTF-8 with an explicit length and are NOT required to be
 *    NUL-terminated, except the static `id` and `version` of gw_adapter_api.
 *
 * ---------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------------
 *  - No exception, panic, longjmp or Swift error may cross this boundary. An
 *    adapter catches everything at its edge and reports a gw_status.
 *  - Business outcomes (a decline, a pending 3-D Secure step) are NOT errors:
 *    they are GW_OK completions whose JSON result says what happened.
 *  - A non-GW_OK completion carries, where it can, a JSON error document
 *    {"message": "..."} for the engineer. It must never contain card numbers,
 *    CVVs, tokens or secrets.
 *
 * ---------------------------------------------------------------------------
 * Required functions, targets, versions
 * ---------------------------------------------------------------------------
 *  - create, describe, invoke, destroy and free are required: a table
 *    without one (NULL, or beyond its struct_size) is refused at load
 *    ("missing_function"). cancel may be NULL; the host then still waits for
 *    every completion.
 *  - ABI v1 is defined for 64-bit targets only (8-byte pointers and size_t);
 *    the host's build asserts the layouts (sizeof(gw_host_api) == 80 for
 *    1.1, sizeof(gw_adapter_api) == 72, sizeof(gw_negotiation) == 32).
 *  - The host writes the negotiated minor (the lower of the two) into
 *    gw_host_api.abi_minor; check struct_size before using a later member.
 *  - The host may invoke any operation of the negotiated minor, described or
 *    not: refuse the ones you do not implement with GW_E_UNSUPPORTED.
 *
 * ---------------------------------------------------------------------------
 * Threads and re-entrancy
 * ---------------------------------------------------------------------------
 *  - invoke() is called from any host thread, for many calls at once. It may
 *    call complete() before it returns (a result known at once).
 *  - complete() may be called from any thread: inside invoke(), inside
 *    cancel(), inside an http_send/wallet_decrypt callback, or from a thread
 *    of your own. Exactly once per accepted call.
 *  - cancel(id) may arrive before invoke(id) is called, while it runs, after
 *    the call completed, and more than once (a process-isolated adapter's host
 *    re-sends one that may have overtaken its invoke): ignore the ones you
 *    cannot act on, and still complete the call.
 *  - The host never calls into the adapter from inside complete(), log() or
 *    secret_get(); http_send() and wallet_decrypt() never call their callback
 *    inside the call itself.
 *  - Callbacks run on host threads that serve every adapter: return promptly,
 *    never block in one.
 *  - destroy() runs once, on a host thread inside no other function of the
 *    instance, after every accepted call's completion arrived and every
 *    http_send/wallet_decrypt callback returned; no invoke, cancel or
 *    callback of the instance runs during or after it. It may begin on
 *    another thread as soon as your last complete() is inside the host: after
 *    you call complete() for the last call in flight, touch nothing of the
 *    instance from that thread. Do not start an http_send or wallet_decrypt
 *    after your last owed completion: it may get no callback.
 *
 * ---------------------------------------------------------------------------
 * Limits
 * ---------------------------------------------------------------------------
 *  - Call ids start at 1 (0 is never a call id) and are unique per instance.
 *  - Requests the host sends are at most GW_MAX_REQUEST_BYTES (1 MiB).
 *  - A result over GW_MAX_RESULT_BYTES (1 MiB) is not read: the call's
 *    outcome is unknown (never "nothing sent").
 *  - An http_send request document over GW_MAX_REQUEST_BYTES is refused
 *    with GW_E_DENIED (nothing sent). Its "timeout_ms" defaults to
 *    GW_HTTP_TIMEOUT_MS_DEFAULT and is clamped to GW_HTTP_TIMEOUT_MS_MIN ..
 *    GW_HTTP_TIMEOUT_MS_MAX. A response body is read up to 16 MiB; a
 *    process-isolated adapter gets GW_E_OUTCOME_UNKNOWN for an answer
 *    document (the body in base64) over 16 MiB, since the request was sent.
 *  - Each call's deadline is its manifest's timeout_ms (100 .. 600000 ms,
 *    default 30000), which the adapter is not told: keep your own HTTP
 *    timeouts below it. A call not completed by then is cancelled and its
 *    outcome is unknown to the host.
 *  - A log message is one line of at most GW_MAX_LOG_BYTES (8 KiB): a longer
 *    one is cut (and says so), CR and LF are written as \r and \n, invalid
 *    UTF-8 is replaced, and card numbers are masked.
 *
 * ---------------------------------------------------------------------------
 * Errors of create(), and of completions
 * ---------------------------------------------------------------------------
 *  - A non-GW_OK completion and create()'s out_error carry the same UTF-8 JSON
 *    document {"message": "..."}; the host also accepts plain text in
 *    out_error. The host shows at most 4 KiB of it, card numbers masked.
 *  - create() returns GW_E_INVALID_REQUEST for a configuration it refuses,
 *    GW_E_NOT_FOUND when a secret it needs has no value, and GW_E_INTERNAL
 *    for anything else; the host refuses the adapter with that status and
 *    message ("create_failed").
 *
 * ---------------------------------------------------------------------------
 * What the host checks before invoke()
 * ---------------------------------------------------------------------------
 *  - The reference engine sends authorize only for a method, currency,
 *    country, amount (within the manifest's limits; without a max, up to
 *    2^63-1 minor units) and capture mode the manifest declares, with a
 *    known ISO 4217 currency and an amount above 0; capture and refund
 *    amounts within what the payment holds; a method's declared fields
 *    checked. The plugin layer itself checks nothing, and other embedders may
 *    not: validate every request and refuse what you cannot do with
 *    GW_E_INVALID_REQUEST (nothing sent).
 *
 * ---------------------------------------------------------------------------
 * verify, and replayed idempotency keys
 * ---------------------------------------------------------------------------
 *  - verify reports the payment's state: "authorized" while an authorization
 *    is held and not fully captured; "succeeded" once charged (automatic
 *    capture, or fully captured), whatever was refunded since; "cancelled"
 *    once voided; "pending" or "failed" as for authorize. Its "amount" is what
 *    the authorization approved, never net of captures or refunds; captures,
 *    refunds and voids go in "totals".
 *  - A request repeated under a used idempotencyKey with the same content
 *    gets the first answer again (same status, providerReference, amount),
 *    also when that answer never reached the host. While the first is still
 *    in progress answer "pending" (or GW_E_OUTCOME_UNKNOWN); never act twice.
 *    A request under a used key with different content must change nothing.
 *    Refuse it with GW_E_INVALID_REQUEST when you can tell before sending
 *    anything (you keep the keys you were given). When only the provider can
 *    tell, report GW_E_INVALID_REQUEST only if its answer states that it
 *    refused the request for that reason and acted on nothing (a documented
 *    idempotency-key conflict): the one case where a status of
 *    gw_status_proves_nothing_sent() may follow a request that left, since
 *    the provider's answer proves this call changed nothing. Any other
 *    answer, or none, is GW_E_OUTCOME_UNKNOWN. Compare what goes to the
 *    provider, not bytes (an instrument object's members may come in another
 *    order).
 *
 * ---------------------------------------------------------------------------
 * How an adapter's log lines appear
 * ---------------------------------------------------------------------------
 *  - Each log() call is one line of the host's log at the mapped level
 *    (GW_LOG_TRACE .. GW_LOG_ERROR; the host's threshold decides what shows),
 *    tagged adapter=<id>, limited as above. A process-isolated adapter's own
 *    stderr lines appear as warnings "runner stderr: ..." with its runner's pid.
 */
#ifndef GATEWAY_ABI_H
#define GATEWAY_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. */
#define GW_ABI_VERSION_MAJOR 1
#define GW_ABI_VERSION_MINOR 1

/* Limits (see "Limits" above). */
#define GW_MAX_REQUEST_BYTES (1u << 20)
#define GW_MAX_RESULT_BYTES (1u << 20)
#define GW_MAX_LOG_BYTES 8192u
#define GW_HTTP_TIMEOUT_MS_DEFAULT 10000u
#define GW_HTTP_TIMEOUT_MS_MIN 100u
#define GW_HTTP_TIMEOUT_MS_MAX 120000u

/* The default name of the single exported entry point. */
#define GW_ADAPTER_ENTRY_SYMBOL "gw_adapter_entry"

/* Export helper for C adapters (visibility for -fvisibility=hidden builds). */
#if defined(_WIN32)
#define GW_EXPORT __declspec(dllexport)
#else
#define GW_EXPORT __attribute__((visibility("default")))
#endif

/* ===========================================================================
 * Status codes
 * ======================================================================== */

/* Result of a call across the boundary. Values are stable; new ones append. */
typedef int32_t gw_status;

/* Success. For a completion: the JSON buffer holds a result document. */
#define GW_OK 0
/* The request could not be parsed or is missing required fields, or it
 * reuses an idempotency key with other content. The provider was not
 * contacted, or (a reused key only) refused it and acted on nothing: this
 * call charged nothing. */
#define GW_E_INVALID_REQUEST 1
/* The operation (or the function) is not implemented by this adapter.
 * Nothing was sent to the provider. */
#define GW_E_UNSUPPORTED 2
/* ABI negotiation failed: no common major version. */
#define GW_E_VERSION 3
/* An unexpected failure inside the adapter BEFORE anything was sent to the
 * provider (nothing was charged). */
#define GW_E_INTERNAL 4
/* The call was cancelled through gw_adapter_api.cancel(). Whether the
 * provider acted on it is unknown: the host reconciles with `verify`. */
#define GW_E_CANCELLED 5
/* No answer in time. Whether the provider acted is unknown. */
#define GW_E_TIMEOUT 6
/* The adapter (or host) is overloaded and refused the call before sending
 * anything. Safe to retry. */
#define GW_E_BUSY 7
/* A secret name that the manifest does not declare, or that has no value. */
#define GW_E_NOT_FOUND 8
/* Host egress refused a request: the destination is not in the manifest's
 * `egress` allowlist, or the request is malformed. Nothing was sent. */
#define GW_E_DENIED 9
/* The request may have reached the provider but no usable answer came back
 * (connection dropped after sending, truncated response). The outcome is
 * UNKNOWN: the host must reconcile with `verify`, never retry elsewhere. */
#define GW_E_OUTCOME_UNKNOWN 10
/* A caller-provided buffer is too small; the needed size was written to
 * the size out-parameter. */
#define GW_E_BUFFER_TOO_SMALL 11
/* The network could not be reached before anything was sent (DNS failure,
 * connection refused). Nothing was charged. */
#define GW_E_UNREACHABLE 12

/*
 * THE RULE: WHAT PROVES THAT NOTHING WAS SENT.
 * A call that did not end with a GW_OK result leaves the payment's outcome
 * UNKNOWN (the host keeps it pending, reconciles it with `verify`, and never
 * tries another provider or releases held money), except in exactly two
 * cases: invoke() returned, or the completion carried, one of the statuses
 * that gw_status_proves_nothing_sent() accepts below, each of which this
 * header documents as "nothing was sent" (GW_E_INVALID_REQUEST,
 * GW_E_UNSUPPORTED, GW_E_INTERNAL, GW_E_BUSY, GW_E_NOT_FOUND, GW_E_DENIED,
 * GW_E_UNREACHABLE). Every other status (GW_E_CANCELLED, GW_E_TIMEOUT,
 * GW_E_OUTCOME_UNKNOWN, GW_E_VERSION, GW_E_BUFFER_TOO_SMALL, a value this
 * header does not name, a later minor version's code), a crash, a deadline
 * or a result that is not a valid document is an unknown outcome. So an
 * adapter must never report one of these statuses once any request of the
 * call may have left for the provider: report GW_E_OUTCOME_UNKNOWN instead.
 * The one exception is the provider's own answer that a reused idempotency
 * key's other content was refused and nothing was done (see "replayed
 * idempotency keys" above): GW_E_INVALID_REQUEST, as its answer proves.
 */
static inline int gw_status_proves_nothing_sent(gw_status status) {
    switch (status) {
    case GW_E_INVALID_REQUEST:
    case GW_E_UNSUPPORTED:
    case GW_E_INTERNAL:
    case GW_E_BUSY:
    case GW_E_NOT_FOUND:
    case GW_E_DENIED:
    case GW_E_UNREACHABLE:
        return 1;
    default:
        return 0;
    }
}

/* ===========================================================================
 * Operations
 * ======================================================================== */

/* What invoke() is asked to do. The JSON request and result schemas of each
 * operation are documented in docs/payloads.md. Values are stable. */
typedef int32_t gw_operation;

/* Start a payment: charge or reserve an amount. */
#define GW_OP_AUTHORIZE 1
/* Feed a pending payment what the payer did (OTP, return from a redirect or
 * from 3-D Secure). */
#define GW_OP_CONTINUE 2
/* Ask the provider for a payment's current state. Never mutates. */
#define GW_OP_VERIFY 3
/* Capture an authorized payment, fully or in part. */
#define GW_OP_CAPTURE 4
/* Refund a captured payment, fully or in part. */
#define GW_OP_REFUND 5
/* Release an authorization before capture. */
#define GW_OP_VOID 6
/* Verify and interpret a provider notification. */
#define GW_OP_WEBHOOK 7
/* ABI 1.1. List what the session's payer can use with this adapter: saved
 * cards (brand, last four, expiry; NEVER a card number), a known phone number
 * (masked), wallet availability, web-based instruments beyond the native
 * methods, client sessions for a device SDK (docs/payloads.md section 5.8).
 * Moves no money and changes no payment: any non-GW_OK completion, refusal
 * or timeout means only "nothing to offer", and the session goes on without.
 * Called only when describe() lists "instruments" and the negotiated minor
 * is at least 1. What the payer picks comes back in the authorize request's
 * instrument as {"selected": {"kind": ..., "reference": ...}}. */
#define GW_OP_INSTRUMENTS 8

/* ===========================================================================
 * Log levels (for gw_host_api.log)
 * ======================================================================== */

typedef int32_t gw_log_level;

#define GW_LOG_TRACE 0
#define GW_LOG_DEBUG 1
#define GW_LOG_INFO 2
#define GW_LOG_WARNING 3
#define GW_LOG_ERROR 4

/* ===========================================================================
 * Host services: the host -> adapter table (called BY the adapter)
 * ======================================================================== */

/*
 * Callback for gw_host_api.http_send.
 *
 * Called exactly once per http_send() call, on a host thread (never while the
 * adapter is inside http_send() itself, so an adapter may hold its own lock
 * across http_send()). `user_data` is the pointer the adapter passed in.
 * No callback runs after destroy() begins: the host calls destroy() only
 * once every callback of the instance has returned (at shutdown it cancels
 * requests still in flight; their callbacks report GW_E_UNREACHABLE or
 * GW_E_OUTCOME_UNKNOWN). Do not start a request after the instance's last
 * owed completion: the host may be destroying it, and such a request gets no
 * callback (the host logs it as a protocol violation).
 *
 * status:   GW_OK when an HTTP response arrived (whatever its HTTP status);
 *           GW_E_DENIED when egress policy refused the request, or it was
 *           larger than the host takes (nothing sent);
 *           GW_E_UNREACHABLE when nothing could be sent;
 *           GW_E_TIMEOUT or GW_E_OUTCOME_UNKNOWN when it was sent but no full
 *           answer came back (GW_E_OUTCOME_UNKNOWN too when the answer is
 *           larger than the host can hand an isolated adapter: it was sent).
 * response: borrowed, valid only during the callback. On GW_OK a JSON
 *           document {"status": 200, "headers": {"name": "value", ...},
 *           "body": "<base64>"}; otherwise {"message": "..."}.
 */
typedef void (*gw_http_callback)(void *user_data, gw_status status,
                                 const uint8_t *response, size_t response_len);

/*
 * The services the host lends to one adapter instance.
 *
 * Every function pointer here is bound by the host to THIS instance (in the
 * reference host they are libffi closures carrying the instance's context:
 * its logger, its egress allowlist, its secrets). That is why none of them
 * takes a context argument. They stay valid from create() until destroy()
 * returns, and may be called from any thread, concurrently.
 *
 * The table itself is owned by the host and lives as long as the instance.
 * Members are appended only; check struct_size before using a member that a
 * later minor version added.
 */
typedef struct gw_host_api {
    /* sizeof(gw_host_api) as the host compiled it. */
    uint32_t struct_size;
    /* The ABI version the host negotiated with this adapter. */
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t reserved0; /* zero */

    /*
     * Write one log line, attributed to this adapter. `message` is borrowed.
     * The host masks anything that looks like a card number before it is
     * written, but an adapter must still never log secrets or card data.
     * Never blocks on I/O for long; may be called from any thread.
     */
    void (*log)(gw_log_level level, const char *message, size_t message_len);

    /*
     * Send one HTTP request through the host (adapters never open sockets).
     *
     * request: borrowed JSON document
     *   {"method": "POST", "url": "https://host:port/path",
     *    "headers": {"name": "value", ...}, "body": "<base64>",
     *    "timeout_ms": 10000}
     * The host enforces the manifest's `egress` allowlist (host:port), the
     * timeout, and https (plain http only to loopback, for local simulators);
     * it never follows redirects. A failed request is logged (warning) by
     * method, host:port and path, card numbers masked; bodies and headers
     * are logged only at debug level, with card numbers, this adapter's
     * secret values, secret-bearing headers and CVV/PIN/OTP/password fields
     * masked.
     *
     * Returns at once. `callback` fires exactly once, later, on a host thread,
     * also when the request is refused or invalid. Thread-safe.
     */
    void (*http_send)(const uint8_t *request, size_t request_len,
                      gw_http_callback callback, void *user_data);

    /*
     * Copy the value of the secret `name` (a key of the manifest's `secrets`
     * object) into the caller's buffer `out` of `out_capacity` bytes, and its
     * length into *out_len. No NUL is written.
     *
     * Returns GW_OK; GW_E_BUFFER_TOO_SMALL with the needed size in *out_len
     * (nothing else written); GW_E_NOT_FOUND when the manifest does not declare
     * that name or its reference resolves to nothing. The adapter should wipe
     * the buffer once it has used the value. Thread-safe; may read a file.
     */
    gw_status (*secret_get)(const char *name, size_t name_len,
                            uint8_t *out, size_t out_capacity, size_t *out_len);

    /* Wall-clock time: nanoseconds since the Unix epoch (UTC). Thread-safe. */
    int64_t (*clock_unix_ns)(void);

    /* Monotonic time in nanoseconds, for measuring durations. Thread-safe. */
    uint64_t (*clock_monotonic_ns)(void);

    /* Fill `out` with `len` bytes from a cryptographically secure generator.
     * Returns GW_OK, or GW_E_INTERNAL if the system source failed. */
    gw_status (*random_bytes)(uint8_t *out, size_t len);

    /*
     * Report the end of the invoke() call `call_id`. Call it EXACTLY ONCE per
     * accepted invoke (one that returned GW_OK), from any thread, also after a
     * cancel() (then with GW_E_CANCELLED, or the real answer if it already
     * arrived). It may be called before invoke() has returned.
     *
     * result: borrowed, valid only during this call; the host copies it.
     *   On GW_OK: the operation's result document (docs/payloads.md).
     *   Otherwise: {"message": "..."} or empty.
     * A second completion for the same call_id, or one for an unknown id, is
     * ignored and reported by the host as a protocol violation.
     */
    void (*complete)(uint64_t call_id, gw_status status,
                     const uint8_t *result, size_t result_len);

    /*
     * ABI 1.1, appended later in 1.1's life: a host that negotiated minor 1
     * may still lack it, so check that struct_size covers this member (and
     * that it is not NULL) before use. Check and decrypt a wallet payment
     * token in the host, with the merchant keys this adapter's manifest
     * names among its `secrets` (docs/wallet-tokens.md):
     *   Apple Pay "applepay": "applepay_merchant_certificate" and
     *   "applepay_merchant_key" (PEM), a merchant's own payment processing key;
     *   Google Pay "googlepay" (ECv2, direct integration):
     *   "googlepay_merchant_key" (PEM) and "googlepay_recipient_id"
     *   ("merchant:<id>"), under the root keys the operator gave the host.
     *
     * request: borrowed JSON {"wallet": "applepay" | "googlepay",
     *          "paymentId": "<the request's paymentId>", "token": {...}}.
     *          A token opens for one payment: again for the same paymentId
     *          (a retried authorize) it opens; for another it is refused
     *          (replayed_token). Always pass paymentId.
     * `callback` (the type http_send uses) fires exactly once, later, on a
     * host thread, never inside this call:
     *   GW_OK              {"wallet": "...", "paymentData": {...}}: the
     *                      decrypted payment data, its account number WHOLE.
     *                      It is for this adapter alone: never log it; the
     *                      host logs only its masked form.
     *   GW_E_INVALID_REQUEST {"code": "...", "message": "..."}: the token or
     *                      the request was refused (codes: malformed_request,
     *                      malformed_token, unsupported_version, bad_signature,
     *                      tampered_data, wrong_chain,
     *                      signing_time_outside_window, expired,
     *                      wrong_merchant_key, decryption_failed,
     *                      malformed_payment_data, replayed_token).
     *   GW_E_INTERNAL      {"code": "merchant_identity", ...}: the manifest's
     *                      keys cannot be used (the host's configuration).
     *   GW_E_NOT_FOUND     {"code": "no_merchant_keys", ...}: the manifest
     *                      names no keys for that wallet.
     *   GW_E_UNSUPPORTED   {"code": "unsupported_wallet", ...}.
     * Nothing leaves the host; it moves no money. Thread-safe.
     */
    void (*wallet_decrypt)(const uint8_t *request, size_t request_len,
                           gw_http_callback callback, void *user_data);
} gw_host_api;

/* ===========================================================================
 * The adapter table (called BY the host)
 * ======================================================================== */

/* An adapter instance. Opaque to the host: whatever the adapter wants. */
typedef struct gw_instance gw_instance;

typedef struct gw_adapter_api {
    /* sizeof(gw_adapter_api) as the adapter compiled it. */
    uint32_t struct_size;
    uint32_t reserved0; /* zero */

    /* The provider id and version, NUL-terminated, static storage. The host
     * compares them with the manifest's `id` and `version` and refuses the
     * adapter if they differ. */
    const char *id;
    const char *version;

    /*
     * Create an instance.
     *
     * host:    the services table for this instance; owned by the host, valid
     *          until destroy() returns. Keep the pointer.
     * config:  borrowed JSON object, the manifest's `config` ("{}" if none).
     * out_instance: on GW_OK, set to the new instance (never NULL).
     * out_error: on failure, the adapter MAY set it to a buffer it allocated
     *          holding a UTF-8 message (plain text) for the operator; the host
     *          copies it and releases it with this table's free(). Its length
     *          goes to *out_error_len.
     *
     * Called on a host thread, once per instance; may block briefly (reading
     * secrets, parsing config) but must not wait on the network.
     */
    gw_status (*create)(const gw_host_api *host,
                        const uint8_t *config, size_t config_len,
                        gw_instance **out_instance,
                        uint8_t **out_error, size_t *out_error_len);

    /*
     * Describe what this instance implements, as an adapter-allocated JSON
     * document (released by the host with free()):
     *   {"id": "...", "version": "...", "methods": ["visa", ...],
     *    "operations": ["authorize", ...], "currencies": ["SAR", ...]}
     * The host refuses an adapter whose manifest claims a method or operation
     * not listed here. Thread-safe; must not block.
     */
    gw_status (*describe)(gw_instance *instance,
                          uint8_t **out_json, size_t *out_len);

    /*
     * Start operation `operation` with the JSON `request` (borrowed: copy what
     * you keep). `call_id` is unique per instance for the host's lifetime.
     *
     * Returns at once, from any host thread, concurrently with other invokes:
     *   GW_OK     the call is accepted; host->complete(call_id, ...) will fire
     *             exactly once, from any thread, possibly before invoke returns.
     *   otherwise the call is refused before anything was sent (for example
     *             GW_E_UNSUPPORTED, GW_E_INVALID_REQUEST, GW_E_BUSY) and
     *             complete() must NOT be called for it.
     * Must never block on the network or on a lock held across network I/O.
     */
    gw_status (*invoke)(gw_instance *instance, uint64_t call_id,
                        gw_operation operation,
                        const uint8_t *request, size_t request_len);

    /*
     * The host no longer waits for `call_id` (timeout, shutdown, the payer went
     * away). The adapter should stop work on it and still complete it exactly
     * once (GW_E_CANCELLED unless the answer already arrived). Unknown or
     * finished ids are ignored. Thread-safe; must not block. May be NULL.
     */
    void (*cancel)(gw_instance *instance, uint64_t call_id);

    /*
     * Destroy an instance. The host calls it once, after the completion of
     * every accepted call has arrived (cancelled calls included: the host
     * waits for their GW_E_CANCELLED) and after every http_send/wallet_decrypt
     * callback of the instance has returned. After it returns the adapter must
     * not call the instance's host services. The library itself stays mapped.
     */
    void (*destroy)(gw_instance *instance);

    /* Release a buffer this adapter allocated and handed to the host. */
    void (*free)(void *ptr);
} gw_adapter_api;

/* ===========================================================================
 * The entry point and version negotiation
 * ======================================================================== */

typedef struct gw_negotiation {
    /* Set by the host: sizeof(gw_negotiation) as the host compiled it. */
    uint32_t struct_size;
    /* Set by the host: the newest ABI version it speaks. */
    uint32_t host_abi_major;
    uint32_t host_abi_minor;
    /* Set by the adapter: the version it speaks (major must equal the host's
     * for the host to go on; minor may be lower or higher). */
    uint32_t adapter_abi_major;
    uint32_t adapter_abi_minor;
    uint32_t reserved0; /* zero */
    /* Set by the adapter: its function table, static storage. */
    const gw_adapter_api *adapter_api;
} gw_negotiation;

/*
 * The one symbol an adapter exports:
 *
 *   GW_EXPORT gw_status gw_adapter_entry(gw_negotiation *negotiation);
 *
 * The adapter always fills adapter_abi_major/minor and adapter_api (so the
 * host can report both versions), and returns GW_OK when it can speak the
 * host's major version, GW_E_VERSION when it cannot. Called once per load, on
 * a host thread, before any other function; must not block.
 */
typedef gw_status (*gw_adapter_entry_fn)(gw_negotiation *negotiation);

#ifdef __cplusplus
}
#endif

#endif /* GATEWAY_ABI_H */
