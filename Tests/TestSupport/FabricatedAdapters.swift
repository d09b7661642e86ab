import Foundation

/// Small C adapters that misbehave on purpose, built at test time from the
/// shipped header alone, to prove the host catches what a broken third-party
/// adapter can do.
public struct FabricatedAdapter: Sendable {
    public var id = "fab"
    public var version = "1.0.0"
    /// The ABI major the adapter claims in negotiation.
    public var abiMajor = 1
    /// How many times each invoke is completed (2 = a duplicate completion).
    public var completions = 1
    /// Leave `invoke` NULL in the table.
    public var nullInvoke = false
    /// Make `create` fail with a message.
    public var createFails = false
    /// The message `create` fails with (C string literal contents, escaped).
    public var createMessage = "fab: the merchant account is not configured"
    /// The status `create` fails with.
    public var createStatus = "GW_E_INTERNAL"
    /// Complete from a new pthread rather than inline.
    public var foreignThread = false
    /// With `foreignThread`: each call's thread, once it completed its call,
    /// parks for good (a thread pinned per call, as a runtime that blocks in
    /// a host service would leave one).
    public var parksThreads = false
    /// Complete every call with this `gw_status` (and an error document)
    /// instead of `GW_OK` with a result.
    public var completionStatus: Int32 = 0
    /// Refuse every invoke with this `gw_status` instead of accepting it.
    public var invokeStatus: Int32 = 0
    /// When set, `authorize` asks the host to fetch this URL and completes with
    /// the egress callback's status and message.
    public var egressURL: String?
    /// When set, `cancel` does not return until a file exists at this path.
    public var cancelWaitsFor: String?
    /// invoke blocks (polling) until a file exists at this path, then goes on.
    public var invokeWaitsFor: String?
    /// invoke completes its call, then blocks until a file exists at this path
    /// before it returns (the header allows a completion before invoke returns).
    public var invokeReturnsAfter: String?
    /// create writes `<path>.entered`, then blocks until a file exists at this path.
    public var createWaitsFor: String?
    /// The ABI minor the adapter claims in negotiation.
    public var abiMinor = 0
    /// When set, `describe` lists `instruments` and `GW_OP_INSTRUMENTS` completes with this document.
    public var instrumentsDocument: String?
    /// When set, every call completes `GW_OK` with this document instead of a valid result.
    public var resultDocument: String?
    /// `invoke` aborts the process on a request that does not start with `{`.
    public var crashOnMalformed = false
    /// When set, `invoke` logs this line at warning level first (an adapter saying why it refuses).
    public var invokeLog: String?

    /// `document` as the body of a C string literal.
    /// Every member has the default above; a test names the ones it changes.
    public init(
        id: String = "fab",
        version: String = "1.0.0",
        abiMajor: Int = 1,
        completions: Int = 1,
        nullInvoke: Bool = false,
        createFails: Bool = false,
        createMessage: String = "fab: the merchant account is not configured",
        createStatus: String = "GW_E_INTERNAL",
        foreignThread: Bool = false,
        parksThreads: Bool = false,
        completionStatus: Int32 = 0,
        invokeStatus: Int32 = 0,
        egressURL: String? = nil,
        cancelWaitsFor: String? = nil,
        invokeWaitsFor: String? = nil,
        invokeReturnsAfter: String? = nil,
        createWaitsFor: String? = nil,
        abiMinor: Int = 0,
        instrumentsDocument: String? = nil,
        resultDocument: String? = nil,
        crashOnMalformed: Bool = false,
        invokeLog: String? = nil
    ) {
        self.id = id
        self.version = version
        self.abiMajor = abiMajor
        self.completions = completions
        self.nullInvoke = nullInvoke
        self.createFails = createFails
        self.createMessage = createMessage
        self.createStatus = createStatus
        self.foreignThread = foreignThread
        self.parksThreads = parksThreads
        self.completionStatus = completionStatus
        self.invokeStatus = invokeStatus
        self.egressURL = egressURL
        self.cancelWaitsFor = cancelWaitsFor
        self.invokeWaitsFor = invokeWaitsFor
        self.invokeReturnsAfter = invokeReturnsAfter
        self.createWaitsFor = createWaitsFor
        self.abiMinor = abiMinor
        self.instrumentsDocument = instrumentsDocument
        self.resultDocument = resultDocument
        self.crashOnMalformed = crashOnMalformed
        self.invokeLog = invokeLog
    }

    public static func cLiteral(_ document: String) -> String {
        "\"" + document.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    public var source: String {
        """
        #define _POSIX_C_SOURCE 200809L
        #include "gateway_abi.h"
        #include <pthread.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>
        #include <unistd.h>

        /* `born`: when the instance was made, in its references, which
           must be unique across instances and versions (one provider
           reference is one payment: call ids start over in each instance). */
        struct gw_instance { const gw_host_api *host; unsigned long long born; };
        typedef struct { gw_instance *inst; uint64_t id; pthread_t invoker; } job;

        static void finish(gw_instance *inst, uint64_t id, pthread_t invoker) {
            char doc[256];
            snprintf(doc, sizeof doc, "{\\"status\\":\\"succeeded\\",\\"providerReference\\":\\"fab_%llx_%llu\\",\\"providerStatus\\":\\"%s\\"}",
                     inst->born, (unsigned long long)id, pthread_equal(invoker, pthread_self()) ? "SAME_THREAD" : "OTHER_THREAD");
            if (\(completionStatus) != 0) snprintf(doc, sizeof doc, "{\\"message\\":\\"fab completes with status %d\\"}", (int)\(completionStatus));
            const char *fixed = \(resultDocument.map(Self.cLiteral) ?? "NULL");
            if (fixed) snprintf(doc, sizeof doc, "%s", fixed);
            for (int i = 0; i < \(completions); i++) inst->host->complete(id, (gw_status)\(completionStatus), (const uint8_t *)doc, strlen(doc));
        }
        static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
        static pthread_cond_t park_never = PTHREAD_COND_INITIALIZER;
        static void *worker(void *arg) {
            job *j = arg; finish(j->inst, j->id, j->invoker); free(j);
            if (\(parksThreads ? 1 : 0)) { pthread_mutex_lock(&park_lock); for (;;) pthread_cond_wait(&park_never, &park_lock); }
            return NULL;
        }

        typedef struct { gw_instance *inst; uint64_t id; } egress_job;
        static void egress_done(void *user, gw_status status, const uint8_t *doc, size_t len) {
            egress_job *j = user;
            j->inst->host->complete(j->id, status, doc, len);
            free(j);
        }

        static gw_status create(const gw_host_api *host, const uint8_t *config, size_t len, gw_instance **out, uint8_t **err, size_t *err_len) {
            (void)config; (void)len;
            if (\(createFails ? 1 : 0)) {
                const char *m = "\(createMessage)";
                *err = (uint8_t *)strdup(m); *err_len = strlen(m);
                return \(createStatus);
            }
            const char *create_waits_for = \(createWaitsFor.map { "\"\($0)\"" } ?? "NULL");
            if (create_waits_for) {
                char entered[1024];
                snprintf(entered, sizeof entered, "%s.entered", create_waits_for);
                FILE *mark = fopen(entered, "w");
                if (mark) fclose(mark);
                while (access(create_waits_for, F_OK) != 0) { struct timespec t = {0, 1000000}; nanosleep(&t, NULL); }
            }
            gw_instance *inst = calloc(1, sizeof *inst);
            inst->host = host;
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            inst->born = (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
            *out = inst;
            return GW_OK;
        }
        static gw_status describe(gw_instance *inst, uint8_t **out, size_t *len) {
            (void)inst;
            const char *d = "{\\"id\\":\\"\(id)\\",\\"version\\":\\"\(version)\\",\\"methods\\":[\\"visa\\"],\\"operations\\":[\\"authorize\\",\\"verify\\"\(instrumentsDocument == nil ? "" : ",\\\"instruments\\\"")]}";
            *out = (uint8_t *)strdup(d); *len = strlen(d);
            return GW_OK;
        }
        static gw_status invoke(gw_instance *inst, uint64_t id, gw_operation op, const uint8_t *req, size_t len) {
            const char *instruments = \(instrumentsDocument.map(Self.cLiteral) ?? "NULL");
            if (op == GW_OP_INSTRUMENTS && instruments) {
                inst->host->complete(id, GW_OK, (const uint8_t *)instruments, strlen(instruments));
                return GW_OK;
            }
            if (\(crashOnMalformed ? 1 : 0) && (len == 0 || req[0] != '{')) abort();
            if (op != GW_OP_AUTHORIZE && op != GW_OP_VERIFY) return GW_E_UNSUPPORTED;
            const char *said = \(invokeLog.map(Self.cLiteral) ?? "NULL");
            if (said) inst->host->log(GW_LOG_WARNING, said, strlen(said));
            if (\(invokeStatus) != 0) return (gw_status)\(invokeStatus);
            const char *invoke_waits_for = \(invokeWaitsFor.map { "\"\($0)\"" } ?? "NULL");
            if (invoke_waits_for) {
                char entered[1100];
                snprintf(entered, sizeof entered, "%s.in-%llu", invoke_waits_for, (unsigned long long)id);
                FILE *mark = fopen(entered, "w");
                if (mark) fclose(mark);
            }
            while (invoke_waits_for && access(invoke_waits_for, F_OK) != 0) { struct timespec t = {0, 1000000}; nanosleep(&t, NULL); }
            const char *url = \(egressURL.map { "\"\($0)\"" } ?? "NULL");
            if (url && op == GW_OP_AUTHORIZE) {
                char request[512];
                snprintf(request, sizeof request, "{\\"method\\":\\"GET\\",\\"url\\":\\"%s\\",\\"timeout_ms\\":2000}", url);
                egress_job *j = malloc(sizeof *j); j->inst = inst; j->id = id;
                inst->host->http_send((const uint8_t *)request, strlen(request), egress_done, j);
                return GW_OK;
            }
            if (\(foreignThread ? 1 : 0)) {
                job *j = malloc(sizeof *j); j->inst = inst; j->id = id; j->invoker = pthread_self();
                pthread_t t;
                if (pthread_create(&t, NULL, worker, j) != 0) { free(j); return GW_E_BUSY; }
                pthread_detach(t);
                return GW_OK;
            }
            finish(inst, id, pthread_self());
            const char *returns_after = \(invokeReturnsAfter.map { "\"\($0)\"" } ?? "NULL");
            while (returns_after && access(returns_after, F_OK) != 0) { struct timespec t = {0, 1000000}; nanosleep(&t, NULL); }
            return GW_OK;
        }
        static void cancel(gw_instance *inst, uint64_t id) {
            (void)inst; (void)id;
            const char *wait_for = \(cancelWaitsFor.map { "\"\($0)\"" } ?? "NULL");
            while (wait_for && access(wait_for, F_OK) != 0) { struct timespec t = {0, 1000000}; nanosleep(&t, NULL); }
        }
        static void destroy(gw_instance *inst) { free(inst); }
        static void release(void *p) { free(p); }

        static const gw_adapter_api api = {
            sizeof(gw_adapter_api), 0, "\(id)", "\(version)",
            create, describe, \(nullInvoke ? "NULL" : "invoke"), cancel, destroy, release
        };

        GW_EXPORT gw_status gw_adapter_entry(gw_negotiation *n) {
            n->adapter_abi_major = \(abiMajor);
            n->adapter_abi_minor = \(abiMinor);
            n->adapter_api = &api;
            return n->host_abi_major == (uint32_t)\(abiMajor) ? GW_OK : GW_E_VERSION;
        }
        """
    }

    /// Builds the library into `folder`'s root and writes a manifest for it.
    @discardableResult
    public func install(in folder: ManifestFolder, manifestName: String, manifestChanges: [String: Any?] = [:]) async throws -> URL {
        let library = try await CAdapterBuilder.build(source, named: "lib\(id)-\(UUID().uuidString.prefix(6))", in: folder.root.appendingPathComponent("libs"))
        var manifest: [String: Any?] = [
            "file_format_version": "1.1.0", "id": id, "version": version, "enabled": true, "mode": "test",
            "library": library.path, "abi": ["major": 1, "minor": 0], "methods": ["visa"],
            "currencies": ["SAR"], "countries": ["SA"], "operations": ["authorize", "verify"],
        ]
        if let egressURL, let host = URL(string: egressURL)?.host { manifest["egress"] = ["\(host).allowed.invalid:443"] }
        for (key, value) in manifestChanges { manifest[key] = value }
        let data = try JSONSerialization.data(withJSONObject: manifest.compactMapValues { $0 }, options: [.prettyPrinted, .sortedKeys])
        let url = folder.manifests.appendingPathComponent(manifestName)
        try data.write(to: url)
        return url
    }
}
