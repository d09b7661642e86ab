import Foundation
import GatewayPayloads

/// What a third party runs before shipping an adapter (`gateway plugin check`):
/// validate the manifest, load the library, negotiate, describe, cross-check,
/// then call every declared operation once with a well-formed request and check
/// that the reply is a valid document and that its completion fires exactly once.
public struct ConformanceCheck: Sendable {
    /// One step of the check: its name, whether it passed, a one-line
    /// detail, and the evidence it judged (`--json` shows every row).
    public struct Step: Sendable, Codable, Equatable {
        public var name: String
        public var passed: Bool
        public var detail: String
        public var evidence: [Evidence]?
        /// `concurrency`: the adapter's peak OS threads while it ran (its
        /// runner's; in process, the threads the host grew by).
        public var threads: Int?

        public init(name: String, passed: Bool, detail: String, evidence: [Evidence]? = nil, threads: Int? = nil) {
            self.name = name
            self.passed = passed
            self.detail = detail
            self.evidence = evidence
            self.threads = threads
        }
    }

    /// One thing a step looked at: a member of a result (`amount.currency`),
    /// or a case it tried (`a fractional amount`); what it was, the rule it
    /// was held to, and whether it kept it.
    public struct Evidence: Sendable, Codable, Equatable {
        public var field: String
        public var value: String
        public var rule: String
        public var ok: Bool
    }

    public var loader: AdapterLoader
    /// The deadline for each operation call.
    public var callTimeout: Duration
    /// When set, a `soak` step calls the adapter for this long after the others.
    public var soak: Duration?

    public init(loader: AdapterLoader, callTimeout: Duration = .seconds(10), soak: Duration? = nil) {
        self.loader = loader
        self.callTimeout = callTimeout
        self.soak = soak
    }

    /// Runs every step; the adapter passes when every step passed.
    ///
    /// An adapter whose manifest says `isolation: in-process` is checked
    /// twice: first in a runner (`gateway-runner`, steps named `runner:…`),
    /// where a crash on a malformed request is a failed step and not the end
    /// of the check, then, only if no call lost the runner, in this process,
    /// as the manifest asks. One that says `process` is checked in a runner.
    public func run(manifestAt url: URL) async -> [Step] {
        let manifest: Manifest
        switch ManifestFile.read(url) {
        case .failure(let failure):
            return [Step(name: "manifest", passed: false, detail: failure.description)]
        case .success(let m):
            manifest = m
        }
        var steps = [Step(name: "manifest", passed: true,
                          detail: "\(manifest.id) \(manifest.version), \(manifest.mode.rawValue) mode, file format \(manifest.fileFormatVersion)")]
        guard manifest.isolation == .inProcess else {
            return steps + (await run(manifest, from: url, withSoak: true))
        }
        var inRunner = manifest
        inRunner.isolation = .process
        // A crash probe, not a sandbox test: where the kernel refuses a layer
        // (a container, say) the probe must still run.
        inRunner.sandboxExceptions = SandboxLayer.allCases
        let runnerSteps = await run(inRunner, from: url, withSoak: false)
        steps += runnerSteps.map { Step(name: "runner:" + $0.name, passed: $0.passed, detail: $0.detail, evidence: $0.evidence, threads: $0.threads) }
        if runnerSteps.contains(where: { $0.name == "crashes" }) {
            steps.append(Step(name: "in-process", passed: false,
                              detail: "not loaded into this process: the adapter crashed its runner, and would crash the host"))
            return steps
        }
        if runnerSteps.contains(where: { $0.name == "load" && !$0.passed }) {
            // It may have died while loading (entry point, create, describe): never try that in this process.
            steps.append(Step(name: "in-process", passed: false, detail: "not loaded into this process: it did not load in a runner"))
            return steps
        }
        return steps + (await run(manifest, from: url, withSoak: true))
    }

    /// `step`, and when it failed, what was logged at warning or above while
    /// it ran (the adapter's own reason for a refusal, say): the first line in
    /// its detail, every line in its evidence.
    static func withWhatWasLogged(_ step: Step, _ lines: [String]) -> Step {
        guard !step.passed, let first = lines.first else { return step }
        var said = step
        said.detail += " (logged: \(first)\(lines.count > 1 ? "; and \(lines.count - 1) more line(s) in --json" : ""))"
        said.evidence = (step.evidence ?? []) + lines.map { Evidence(field: "log", value: $0, rule: "logged at warning or above during the step", ok: true) }
        return said
    }

    /// Every step after the manifest's, with the adapter loaded as `manifest` says.
    private func run(_ manifest: Manifest, from url: URL, withSoak: Bool) async -> [Step] {
        var steps: [Step] = []
        // What the adapter logs at warning or above during a step is said by that step if it fails.
        let tap = AdapterLogTap()
        var loader = self.loader
        loader.logger = tap.tapping(loader.logger)
        func add(_ step: Step) { steps.append(Self.withWhatWasLogged(step, tap.take())) }
        let adapter: AdapterInstance
        // Loading blocks (the library read and hashed, create, a runner's start): off the pool.
        switch await OffThePool.run("check-load", { [loader] in loader.load(manifest, from: url) }) {
        case .failure(let failure):
            add(Step(name: "load", passed: false, detail: failure.description))
            return steps
        case .success(let a):
            adapter = a
            steps.append(Step(name: "load", passed: true, detail: "sha256 \(a.librarySHA256), loaded from \(a.libraryPath)"))
            steps.append(Step(name: "negotiate", passed: true, detail: "ABI \(a.abiMajor).\(a.abiMinor)"))
            steps.append(Step(name: "describe", passed: true, detail: "implements methods \(a.adapterDescription.methods.joined(separator: ", ")); operations \(a.adapterDescription.operations.map(\.rawValue).joined(separator: ", "))"))
            _ = tap.take() // what loading logged is not a step's
        }

        var context = RequestContext(manifest: manifest)
        for operation in PaymentOperation.paymentOperations where manifest.operations.contains(operation) {
            add(await check(operation, on: adapter, context: &context))
        }
        if manifest.operations.contains(.instruments) {
            add(await checkInstruments(on: adapter, manifest: manifest, payer: Self.checkPayer))
            add(await checkInstruments(on: adapter, manifest: manifest, payer: nil))
        }
        if manifest.operations.contains(.verify) || manifest.operations.contains(.authorize) {
            add(await checkConcurrentCalls(on: adapter, context: context))
        }
        if manifest.operations.contains(.authorize) {
            add(await checkIdempotency(on: adapter, context: context))
            add(await checkMalformedAuthorizations(on: adapter, context: context))
            add(await checkEdgeCases(on: adapter, context: context))
            add(await checkCancel(on: adapter, context: context))
        }
        if withSoak, let soak, manifest.operations.contains(.authorize) {
            add(await checkSoak(on: adapter, context: context, for: soak))
        }
        add(await checkMalformedRequest(on: adapter))
        add(await checkUndeclaredOperation(on: adapter, manifest: manifest))
        add(await checkUnknownOperation(on: adapter))

        // Late or duplicate completions show up after the calls returned.
        try? await Task.sleep(for: .milliseconds(200))
        let violations = adapter.protocolViolations
        add(Step(
            name: "exactly-once", passed: violations.count == 0,
            detail: violations.count == 0
                ? "every completion fired exactly once"
                : "\(violations.count) stray completion(s): " + violations.first.map(\.description).joined(separator: "; ")))
        await adapter.shutdown(grace: .seconds(2))
        // Counted after the shutdown, so a crash in destroy() counts too.
        if let runner = adapter.connection as? RunnerConnection, runner.endsOnItsOwn > 0 {
            add(Step(name: "crashes", passed: false,
                     detail: "the adapter's runner crashed \(runner.endsOnItsOwn) time(s) during the check: a call, or destroy(), made it exit"))
        }
        return steps
    }

    /// What the requests of one check run share (the payment they act on).
    struct RequestContext {
        let manifest: Manifest
        let paymentID = "chk_" + UUID().uuidString.prefix(8).lowercased()
        var providerReference = "check-reference"
        var authorizedAmount: Money

        init(manifest: Manifest) {
            self.manifest = manifest
            authorizedAmount = Self.amount(near: 1000, in: manifest.currencies[0], of: manifest)
        }

        /// `value` minor units of `currency`, moved into the manifest's limits for it.
        static func amount(near value: Int64, in currency: String, of manifest: Manifest) -> Money {
            let limit = manifest.amountLimits[currency]
            return Money(value: max(limit?.min ?? 1, min(limit?.max ?? value, value)), currency: currency)
        }

        func key(_ operation: PaymentOperation) -> String { "\(paymentID)-\(operation.rawValue)" }

        /// The check's authorize: on the check's payment, or (with `suffix`)
        /// on a payment of its own, `<paymentId>-<suffix>`, which is its key too.
        func authorize(_ suffix: String? = nil, amount: Money? = nil, orderID: String? = nil,
                       payerName: String = "Conformance Check") -> AuthorizeRequest {
            let own = suffix.map { "\(paymentID)-\($0)" }
            return AuthorizeRequest(
                paymentId: own ?? paymentID, idempotencyKey: own ?? key(.authorize), amount: amount ?? authorizedAmount,
                method: manifest.methods[0], country: manifest.countries.first, orderId: orderID ?? "order-\(own ?? paymentID)",
                capture: manifest.operations.contains(.capture) ? .manual : .automatic,
                instrument: ["scenario": .string("success"), "token": .string("tok_conformance_check")],
                payer: Payer(name: payerName, email: "check@example.com", phone: "+966500000000"),
                returnUrl: "https://merchant.example/return")
        }
    }

    /// The request document of a check call.
    static func encoded<P: JSONPayload>(_ payload: P) -> [UInt8] { payload.jsonBytes() }

    static let concurrentCalls = 1000
    /// The most OS threads an adapter's runner may reach under the
    /// concurrency step's calls (docs/plugin-authors.md, threads): the
    /// runner's own, a Swift or Go runtime's pool, and room (the shipped
    /// adapters peak at 6 to 67); a thread per waiting call goes far past it.
    public static let maximumRunnerThreads = 128

    /// A `GW_OP_*` value no ABI minor will define.
    static let unknownCode: Int32 = 9_999
    static let probeBody = Data(#"{"paymentId":"chk","providerReference":"check-reference","idempotencyKey":"k"}"#.utf8)
}

// MARK: `plugin check --json`
//
// The members the Codable conformances name (which tests still decode with),
// in the order `--json` printed them (sorted); `evidence` and `threads`
// omitted when nil.

extension ConformanceCheck.Step: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("detail", detail)
        if let evidence {
            w.key("evidence")
            w.beginArray()
            for item in evidence { item.write(to: &w) }
            w.endArray()
        }
        w.member("name", name)
        w.member("passed", passed)
        w.member("threads", threads)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var name: String?, passed: Bool?, detail: String?, evidence: [ConformanceCheck.Evidence]?, threads: Int?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "name": name = try p.string()
            case "passed": passed = try p.bool()
            case "detail": detail = try p.string()
            case "evidence":
                if p.takeNull() {
                    evidence = nil
                } else {
                    var list: [ConformanceCheck.Evidence] = []
                    try p.array { p throws(JSONParseError) in list.append(try ConformanceCheck.Evidence(parsing: &p)) }
                    evidence = list
                }
            case "threads": threads = p.takeNull() ? nil : Int(try p.integer())
            default: try p.skipValue()
            }
        }
        self.init(
            name: try required(name, "name", p), passed: try required(passed, "passed", p), detail: try required(detail, "detail", p),
            evidence: evidence, threads: threads)
    }
}

extension ConformanceCheck.Evidence: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("field", field)
        w.member("ok", ok)
        w.member("rule", rule)
        w.member("value", value)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var field: String?, value: String?, rule: String?, ok: Bool?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "field": field = try p.string()
            case "value": value = try p.string()
            case "rule": rule = try p.string()
            case "ok": ok = try p.bool()
            default: try p.skipValue()
            }
        }
        self.init(
            field: try required(field, "field", p), value: try required(value, "value", p), rule: try required(rule, "rule", p),
            ok: try required(ok, "ok", p))
    }
}
