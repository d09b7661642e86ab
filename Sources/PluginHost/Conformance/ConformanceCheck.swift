import Foundation
import GatewayPayloads

/// What a third party runs before shipping an adapter (`gateway plugin check`):
/// validate the manifest, load the library, negotiate, describe, cross-check,
/// then call every declared operation once with a well-formed request and check
/// that the reply is a valid document and that its completion fires exactly once.
public struct ConformanceCheck: Sendable {
    /// One step of the check.
    public struct Step: Sendable, Codable, Equatable {
        public var name: String
        public var passed: Bool
        public var detail: String
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
    public func run(manifestAt url: URL) async -> [Step] {
        var steps: [Step] = []
        let manifest: Manifest
        switch ManifestFile.read(url) {
        case .failure(let failure):
            return [Step(name: "manifest", passed: false, detail: failure.description)]
        case .success(let m):
            manifest = m
            steps.append(Step(name: "manifest", passed: true, detail: "\(m.id) \(m.version), \(m.mode.rawValue) mode, file format \(m.fileFormatVersion)"))
        }
        let adapter: AdapterInstance
        switch loader.load(manifest, from: url) {
        case .failure(let failure):
            steps.append(Step(name: "load", passed: false, detail: failure.description))
            return steps
        case .success(let a):
            adapter = a
            steps.append(Step(name: "load", passed: true, detail: "sha256 \(a.librarySHA256), loaded from \(a.libraryPath)"))
            steps.append(Step(name: "negotiate", passed: true, detail: "ABI \(a.abiMajor).\(a.abiMinor)"))
            steps.append(Step(name: "describe", passed: true, detail: "implements methods \(a.adapterDescription.methods.joined(separator: ", ")); operations \(a.adapterDescription.operations.map(\.rawValue).joined(separator: ", "))"))
        }

        var context = RequestContext(manifest: manifest)
        for operation in PaymentOperation.paymentOperations where manifest.operations.contains(operation) {
            steps.append(await check(operation, on: adapter, context: &context))
        }
        if manifest.operations.contains(.instruments) {
            steps.append(await checkInstruments(on: adapter, manifest: manifest, payer: Self.checkPayer))
            steps.append(await checkInstruments(on: adapter, manifest: manifest, payer: nil))
        }
        if manifest.operations.contains(.verify) {
            steps.append(await checkConcurrentCalls(on: adapter, context: context))
        }
        if manifest.operations.contains(.authorize) {
            steps.append(await checkIdempotency(on: adapter, context: context))
            steps.append(await checkMalformedAuthorizations(on: adapter, context: context))
            steps.append(await checkEdgeCases(on: adapter, context: context))
            steps.append(await checkCancel(on: adapter, context: context))
        }
        if let soak, manifest.operations.contains(.authorize) {
            steps.append(await checkSoak(on: adapter, context: context, for: soak))
        }
        steps.append(await checkMalformedRequest(on: adapter))
        steps.append(await checkUndeclaredOperation(on: adapter, manifest: manifest))
        steps.append(await checkUnknownOperation(on: adapter))

        // Late or duplicate completions show up after the calls returned.
        try? await Task.sleep(for: .milliseconds(200))
        let violations = adapter.protocolViolations
        steps.append(Step(
            name: "exactly-once", passed: violations.count == 0,
            detail: violations.count == 0
                ? "every completion fired exactly once"
                : "\(violations.count) stray completion(s): " + violations.first.map(\.description).joined(separator: "; ")))
        await adapter.shutdown(grace: .seconds(2))
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
            let currency = manifest.currencies[0]
            let limit = manifest.amountLimits[currency]
            let value = max(limit?.min ?? 1, min(limit?.max ?? 1000, 1000))
            authorizedAmount = Money(value: value, currency: currency)
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

    private func check(_ operation: PaymentOperation, on adapter: AdapterInstance, context: inout RequestContext) async -> Step {
        let m = context.manifest
        let request: [UInt8]
        switch operation {
        case .authorize:
            request = Self.encoded(context.authorize())
        case .continue:
            request = Self.encoded(ContinueRequest(
                paymentId: context.paymentID, idempotencyKey: context.key(.continue), providerReference: context.providerReference,
                otp: "000000", returnParams: ["outcome": "approve"]))
        case .verify:
            request = Self.encoded(VerifyRequest(paymentId: context.paymentID, providerReference: context.providerReference))
        case .capture, .refund:
            request = Self.encoded(AmountRequest(
                paymentId: context.paymentID, idempotencyKey: context.key(operation), providerReference: context.providerReference,
                amount: context.authorizedAmount, reason: operation == .refund ? "conformance check" : nil))
        case .void:
            request = Self.encoded(VoidRequest(paymentId: context.paymentID, idempotencyKey: context.key(.void), providerReference: context.providerReference))
        case .webhook:
            request = Self.encoded(WebhookRequest(
                headers: ["content-type": "application/json"],
                body: Data(#"{"eventId":"evt_check","providerReference":"check-reference"}"#.utf8).base64EncodedString()))
        case .instruments:
            return await checkInstruments(on: adapter, manifest: m, payer: Self.checkPayer)
        }

        let outcome = await adapter.invoke(operation, payload: request, timeout: callTimeout)
        switch outcome {
        case .completed(let status, let document) where status == 0:
            do {
                if operation == .webhook {
                    let result = try WebhookResult(jsonData: document)
                    return Step(name: operation.rawValue, passed: true, detail: "completed once: verified=\(result.verified)")
                }
                let result = try AdapterResult(jsonData: document)
                if let problem = Self.inconsistency(in: result) {
                    return Step(name: operation.rawValue, passed: false, detail: problem)
                }
                if operation == .authorize, let reference = result.providerReference { context.providerReference = reference }
                return Step(name: operation.rawValue, passed: true,
                            detail: "completed once: \(result.status.rawValue)" + (result.problem.map { " (\($0.code))" } ?? ""))
            } catch {
                return Step(name: operation.rawValue, passed: false,
                            detail: "the result document is invalid: \(error)")
            }
        case .completed(let status, let document):
            let abi = ABIStatus(rawValue: status)
            let acceptable = abi != .unsupported && abi != .invalidRequest && abi != .internal
            return Step(name: operation.rawValue, passed: acceptable,
                        detail: "completed once with \(abi): \(AdapterInstance.message(in: document))")
        case .refused(let status):
            return Step(name: operation.rawValue, passed: false,
                        detail: "invoke refused a well-formed request with \(ABIStatus(rawValue: status)), though the manifest declares \(operation.rawValue)")
        case .timedOut:
            return Step(name: operation.rawValue, passed: false, detail: "no completion within \(callTimeout)")
        case .cancelled:
            return Step(name: operation.rawValue, passed: false, detail: "cancelled")
        case .lost(let reason):
            return Step(name: operation.rawValue, passed: false, detail: "the adapter's process was lost: \(reason)")
        }
    }

    /// The known payer the `instruments` step asks about.
    static let checkPayer = Payer(name: "Conformance Check", email: "check@example.com", phone: "+46701234567", reference: "chk-payer")

    /// ABI 1.1 `instruments`, for a known payer (`instruments`) and for an
    /// anonymous one (`instruments-anonymous`): the answer must complete
    /// `GW_OK` and keep every rule of ``InstrumentsValidation`` strictly (an
    /// instrument the host would drop, a method it did not ask about or a
    /// card number fails the step). A known payer may get a non-OK
    /// completion, except the ones that mean the adapter is broken; an
    /// anonymous one must get `GW_OK` (with nothing, when the provider needs
    /// a payer). An answer slower than the engine's default 2-second bound
    /// passes with a warning: a host with that bound would offer nothing.
    private func checkInstruments(on adapter: AdapterInstance, manifest: Manifest, payer: Payer?) async -> Step {
        let name = payer == nil ? "instruments-anonymous" : "instruments"
        let currency = manifest.currencies[0]
        let limit = manifest.amountLimits[currency]
        let request = InstrumentsRequest(
            sessionId: "ses_check", mode: manifest.mode, amount: Money(value: max(limit?.min ?? 1, min(limit?.max ?? 1000, 1000)), currency: currency),
            country: manifest.countries.first, capture: .automatic, methods: manifest.methods, payer: payer)
        let bound = Duration.seconds(2)
        let started = ContinuousClock.now
        let outcome = await adapter.invoke(.instruments, payload: Self.encoded(request), timeout: callTimeout)
        let took = ContinuousClock.now - started
        let warning = took > bound ? "; WARNING: slower than the host's \(bound) bound for instruments, which would offer nothing" : ""
        switch outcome {
        case .completed(let status, let document) where status == 0:
            let result: InstrumentsResult
            do { result = try InstrumentsResult(jsonData: document) } catch {
                return Step(name: name, passed: false, detail: "the result document is invalid: \(error)")
            }
            let checked = InstrumentsValidation.validate(result, methods: request.methods, documentBytes: document.count)
            guard checked.problems.isEmpty else {
                return Step(name: name, passed: false, detail: checked.problems.joined(separator: "; "))
            }
            let count = checked.result.methods.values.reduce(0) { $0 + $1.count }
            let kinds = Set(checked.result.methods.values.joined().map(\.kind)).sorted()
            return Step(name: name, passed: true, detail: "completed once: \(count) instrument(s)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))") + warning)
        case .completed(let status, let document):
            let abi = ABIStatus(rawValue: status)
            let acceptable = payer != nil && abi != .unsupported && abi != .invalidRequest && abi != .internal
            return Step(name: name, passed: acceptable, detail: "completed once with \(abi): \(AdapterInstance.message(in: document))"
                        + (payer == nil ? "; an anonymous session must complete GW_OK (with nothing to offer, if need be)" : ""))
        case .refused(let status):
            return Step(name: name, passed: false,
                        detail: "invoke refused a well-formed request with \(ABIStatus(rawValue: status)), though the manifest declares instruments")
        case .timedOut:
            return Step(name: name, passed: false, detail: "no completion within \(callTimeout); the host waits at most \(bound) for instruments")
        case .cancelled:
            return Step(name: name, passed: false, detail: "cancelled")
        case .lost(let reason):
            return Step(name: name, passed: false, detail: "the adapter's process was lost: \(reason)")
        }
    }

    static let concurrentCalls = 1000

    /// The request document of a check call.
    static func encoded<P: JSONPayload>(_ payload: P) -> [UInt8] { payload.jsonBytes() }

    /// The host calls adapters from many threads at once: 1,000 simultaneous
    /// `verify` calls must each complete exactly once with a valid document.
    private func checkConcurrentCalls(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let request = VerifyRequest(paymentId: context.paymentID, providerReference: context.providerReference)
        let outcomes = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<Self.concurrentCalls {
                group.addTask {
                    do {
                        _ = try await adapter.call(.verify, request, timeout: callTimeout)
                        return nil
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        guard outcomes.isEmpty else {
            return Step(name: "concurrency", passed: false, detail: "\(outcomes.count) of \(Self.concurrentCalls) concurrent verify calls failed: \(outcomes[0])")
        }
        return Step(name: "concurrency", passed: true, detail: "\(Self.concurrentCalls) concurrent verify calls each completed once")
    }

    /// An authorize repeated under its idempotency key gets the first answer
    /// again (status, provider reference, amount), and another request under
    /// that key (another amount) is refused with `GW_E_INVALID_REQUEST`, never
    /// answered as a new payment nor with the first one's answer (the header's
    /// "verify, and replayed idempotency keys").
    private func checkIdempotency(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let name = "idempotency"
        let m = context.manifest
        func request(_ amount: Money) -> [UInt8] { Self.encoded(context.authorize("idempotency", amount: amount)) }
        struct Unanswered: Error, CustomStringConvertible { var description: String }
        func answer(_ outcome: CallOutcome) -> Result<AdapterResult, Unanswered> {
            guard case .completed(0, let document) = outcome else { return .failure(Unanswered(description: "\(outcome)")) }
            do { return .success(try AdapterResult(jsonData: document)) } catch { return .failure(Unanswered(description: "an invalid result: \(error)")) }
        }
        let amount = context.authorizedAmount
        let first = answer(await adapter.invoke(.authorize, payload: request(amount), timeout: callTimeout))
        guard case .success(let one) = first else {
            return Step(name: name, passed: false, detail: "the first authorize under the key did not complete GW_OK: \(first)")
        }
        let again = answer(await adapter.invoke(.authorize, payload: request(amount), timeout: callTimeout))
        guard case .success(let two) = again else {
            return Step(name: name, passed: false, detail: "the same authorize again under its key did not complete GW_OK: \(again)")
        }
        guard one.status == two.status, one.providerReference == two.providerReference, one.amount == two.amount else {
            return Step(name: name, passed: false, detail: "the same request under the same key was answered differently: "
                        + "\(one.status.rawValue) \(one.providerReference ?? "-") then \(two.status.rawValue) \(two.providerReference ?? "-")")
        }
        let limit = m.amountLimits[amount.currency]
        let other = Money(value: amount.value < (limit?.max ?? Int64.max) ? amount.value + 1 : amount.value - 1, currency: amount.currency)
        switch await adapter.invoke(.authorize, payload: request(other), timeout: callTimeout) {
        case .refused(let status) where status == ABIStatus.invalidRequest.rawValue,
             .completed(let status, _) where status == ABIStatus.invalidRequest.rawValue:
            return Step(name: name, passed: true, detail: "a replay got the first answer (\(one.status.rawValue)); another amount under the key was refused with GW_E_INVALID_REQUEST")
        case .completed(0, let document):
            let reused = (try? AdapterResult(jsonData: document))?.providerReference == one.providerReference
            return Step(name: name, passed: false, detail: "another amount (\(other.value)) under a key already used was answered GW_OK"
                        + (reused ? " with the first request's answer" : " as a new payment") + "; it must be refused with GW_E_INVALID_REQUEST")
        case let outcome:
            return Step(name: name, passed: false, detail: "another amount under a key already used: expected GW_E_INVALID_REQUEST, got \(outcome)")
        }
    }

    /// Cancel while a call runs, and after it completed: a cancelled call
    /// still owes its one completion (it must arrive: the host waits for it
    /// before it destroys), and a cancel for a finished call is ignored (a
    /// second completion shows in `exactly-once`).
    private func checkCancel(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let name = "cancel"
        let request = Self.encoded(context.authorize("cancel"))
        let calls = adapter.context.calls
        let before = calls.lastIssuedID
        let during = Task { await adapter.invoke(.authorize, payload: request, timeout: callTimeout) }
        // Cancelled once the host issued it (whether or not the adapter answered yet).
        _ = await AdapterInstance.wait(callTimeout) { calls.lastIssuedID != before }
        during.cancel()
        let outcome = await during.value
        guard await AdapterInstance.wait(callTimeout, until: { adapter.outstandingCalls == 0 }) else {
            return Step(name: name, passed: false, detail: "a call cancelled while it ran (\(outcome)) still owes its completion after \(callTimeout): "
                        + "complete every accepted call exactly once, cancelled or not")
        }
        // After: a verify that completed, then its cancel.
        let verify = Self.encoded(VerifyRequest(paymentId: context.paymentID, providerReference: context.providerReference))
        let finished = await adapter.invoke(.verify, payload: verify, timeout: callTimeout)
        if case .completed = finished { adapter.connection.cancel(calls.lastIssuedID) }
        let first = if case .completed(let status, _) = outcome {
            "the authorize completed (\(ABIStatus(rawValue: status))) before its cancel reached it"
        } else {
            "an authorize cancelled while it ran got its one completion"
        }
        return Step(name: name, passed: true, detail: first + "; a cancel for a completed verify was sent (a second completion would fail exactly-once)")
    }

    /// Calls the adapter for `duration`: rounds of 100 concurrent authorizes
    /// (new keys) and verifies, each of which must complete once, validly.
    /// Reports the calls made and the process's resident memory before and after.
    private func checkSoak(on adapter: AdapterInstance, context: RequestContext, for duration: Duration) async -> Step {
        let end = ContinuousClock.now + duration
        let memoryBefore = Self.residentMegabytes()
        var calls = 0, round = 0
        var failures: [String] = []
        while ContinuousClock.now < end, failures.isEmpty {
            round += 1
            let batch = round
            let outcomes = await withTaskGroup(of: String?.self) { group in
                for i in 0..<100 {
                    group.addTask {
                        do {
                            if i % 2 == 0 {
                                _ = try await adapter.call(.authorize, context.authorize("soak-\(batch)-\(i)"), timeout: callTimeout)
                            } else {
                                _ = try await adapter.call(.verify, VerifyRequest(paymentId: context.paymentID, providerReference: context.providerReference),
                                                           timeout: callTimeout)
                            }
                            return nil
                        } catch {
                            return "\(i % 2 == 0 ? "authorize" : "verify"): \(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            calls += 100
            failures += outcomes
        }
        let memory = Self.residentMegabytes().map { after in memoryBefore.map { "; resident memory \($0) MiB, then \(after) MiB" } ?? "" } ?? ""
        guard failures.isEmpty else {
            return Step(name: "soak", passed: false, detail: "\(failures.count) of \(calls) calls failed: \(failures[0])\(memory)")
        }
        return Step(name: "soak", passed: true, detail: "\(calls) calls in \(duration), each completed once\(memory)")
    }

    /// This process's resident memory (Linux `/proc/self/statm`), in MiB.
    static func residentMegabytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / (1 << 20)
    }

    /// A well-formed authorize of this check's (its own key), as a JSON object to break.
    private func authorizeObject(_ context: RequestContext, key: String, amount: Money? = nil, orderID: String? = nil,
                                 payerName: String = "Conformance Check") -> [String: Any] {
        let bytes = Self.encoded(context.authorize(key, amount: amount, orderID: orderID, payerName: payerName))
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    /// Malformed authorizations, each a way a request can be wrong: every
    /// one must be refused (or completed) with `GW_E_INVALID_REQUEST`, never
    /// charged, never a crash or a hang.
    private func checkMalformedAuthorizations(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        func json(_ object: Any) -> [UInt8] { Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()) }
        func variant(_ name: String, _ change: (inout [String: Any]) -> Void) -> (String, [UInt8]) {
            var object = authorizeObject(context, key: "malformed-\(name)")
            change(&object)
            return (name, json(object))
        }
        func amount(_ value: Any, currency: Any? = nil) -> (inout [String: Any]) -> Void {
            { object in
                var money = object["amount"] as? [String: Any] ?? [:]
                money["value"] = value
                if let currency { money["currency"] = currency }
                object["amount"] = money
            }
        }
        var nested: Any = ["scenario": "success"]
        for _ in 0..<200 { nested = ["deeper": nested] }
        let deep = nested
        var cases: [(String, [UInt8])] = [
            ("not JSON", Array("{not json".utf8)),
            ("an array", Array("[]".utf8)),
            ("an empty object", Array("{}".utf8)),
            ("trailing garbage", json(authorizeObject(context, key: "malformed-trailing")) + Array(" x".utf8)),
            variant("a fractional amount", amount(10.5)),
            variant("an amount in a string", amount("1000")),
            variant("a negative amount", amount(-1000)),
            variant("a zero amount", amount(0)),
            variant("a lower-case currency", amount(context.authorizedAmount.value, currency: context.authorizedAmount.currency.lowercased())),
            variant("nesting 200 deep") { $0["instrument"] = deep },
            ("invalid UTF-8 in a string", Self.withInvalidUTF8(json(authorizeObject(context, key: "malformed-utf8", orderID: "order-UTF8")))),
        ]
        for member in ["paymentId", "idempotencyKey", "amount", "method"] {
            cases.append(variant("no \(member)") { $0[member] = nil })
        }
        var failures: [String] = []
        for (name, bytes) in cases {
            switch await adapter.invoke(.authorize, payload: bytes, timeout: callTimeout) {
            case .refused(let status) where status == ABIStatus.invalidRequest.rawValue,
                 .completed(let status, _) where status == ABIStatus.invalidRequest.rawValue:
                continue
            case .completed(0, _):
                failures.append("\(name): answered GW_OK (a malformed request must never be acted on)")
            case let outcome:
                failures.append("\(name): \(outcome)")
            }
        }
        guard failures.isEmpty else {
            return Step(name: "malformed-authorize", passed: false,
                        detail: "\(failures.count) of \(cases.count) malformed authorizations not refused with GW_E_INVALID_REQUEST: " + failures.prefix(3).joined(separator: "; "))
        }
        return Step(name: "malformed-authorize", passed: true, detail: "\(cases.count) malformed authorizations each refused with GW_E_INVALID_REQUEST")
    }

    /// `bytes` with the 4 bytes of the first `UTF8` (in a string) replaced by
    /// ones that are not UTF-8 (a lone continuation byte, an overlong form).
    static func withInvalidUTF8(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        guard let at = bytes.firstRange(of: Array("UTF8".utf8))?.lowerBound else { return out }
        out.replaceSubrange(at..<at + 4, with: [0x80, 0xC0, 0xAF, 0x41])
        return out
    }

    /// Well-formed authorizations at the edges: a three-decimal and a
    /// zero-decimal currency (when declared), the largest amount the manifest
    /// allows, Unicode in every free-text string. Each must complete exactly
    /// once with a valid result (a decline is fine) whose amount is never
    /// more than asked, in the asked currency; or be refused as invalid.
    private func checkEdgeCases(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let m = context.manifest
        var cases: [(String, [String: Any], Money)] = []
        for code in ["KWD", "JPY"] where m.currencies.contains(code) {
            let limit = m.amountLimits[code]
            let money = Money(value: max(limit?.min ?? 1, min(limit?.max ?? 1234, 1234)), currency: code)
            cases.append(("\(code) \(money.value)", authorizeObject(context, key: "edge-\(code.lowercased())", amount: money), money))
        }
        let first = context.authorizedAmount.currency
        let largest = Money(value: m.amountLimits[first]?.max ?? Int64.max, currency: first)
        cases.append(("the largest amount (\(largest.value) \(first))", authorizeObject(context, key: "edge-largest", amount: largest), largest))
        let unicode = "طلب ١٠٠١ — 注文 🧾 \u{200F}é"
        cases.append(("Unicode strings", authorizeObject(context, key: "edge-unicode", orderID: "order-" + unicode, payerName: unicode), context.authorizedAmount))
        var failures: [String] = []
        for (name, object, asked) in cases {
            let bytes = Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
            switch await adapter.invoke(.authorize, payload: bytes, timeout: callTimeout) {
            case .completed(0, let document):
                guard let result = try? AdapterResult(jsonData: document) else {
                    failures.append("\(name): the result document is invalid")
                    continue
                }
                if let problem = Self.inconsistency(in: result) { failures.append("\(name): \(problem)") }
                if let amount = result.amount, amount.currency != asked.currency || amount.value > asked.value {
                    failures.append("\(name): answered \(amount.value) \(amount.currency), more than or other than the \(asked.value) \(asked.currency) asked")
                }
            case .refused(let status) where status == ABIStatus.invalidRequest.rawValue,
                 .completed(let status, _) where status == ABIStatus.invalidRequest.rawValue:
                continue
            case .completed(let status, _) where status != ABIStatus.internal.rawValue && status != ABIStatus.unsupported.rawValue:
                continue
            case let outcome:
                failures.append("\(name): \(outcome)")
            }
        }
        guard failures.isEmpty else {
            return Step(name: "edge-cases", passed: false, detail: failures.prefix(3).joined(separator: "; "))
        }
        return Step(name: "edge-cases", passed: true, detail: "\(cases.count) edge cases (" + cases.map(\.0).joined(separator: ", ") + ") each answered once, validly")
    }

    /// Garbage must be refused cleanly, not crash or complete as a success.
    private func checkMalformedRequest(on adapter: AdapterInstance) async -> Step {
        let outcome = await adapter.invoke(.verify, payload: Data("{not json".utf8), timeout: callTimeout)
        switch outcome {
        case .refused(let status) where status == ABIStatus.invalidRequest.rawValue:
            return Step(name: "malformed-request", passed: true, detail: "refused with GW_E_INVALID_REQUEST")
        case .completed(let status, _) where status == ABIStatus.invalidRequest.rawValue:
            return Step(name: "malformed-request", passed: true, detail: "completed once with GW_E_INVALID_REQUEST")
        default:
            return Step(name: "malformed-request", passed: false, detail: "expected GW_E_INVALID_REQUEST for a request that is not JSON, got \(outcome)")
        }
    }

    /// An operation the adapter does not declare, of a minor version both
    /// sides negotiated (what the host could send it), must be refused, not
    /// attempted.
    private func checkUndeclaredOperation(on adapter: AdapterInstance, manifest: Manifest) async -> Step {
        let negotiated = min(adapter.abiMinor, SignatureTable.hostMinor)
        guard let undeclared = PaymentOperation.allCases.first(where: {
            $0.introducedInMinor <= negotiated && !adapter.adapterDescription.operations.contains($0)
        }) else {
            return Step(name: "undeclared-operation", passed: true, detail: "the adapter implements every ABI 1.\(negotiated) operation")
        }
        return Self.refusal(step: "undeclared-operation", of: undeclared.rawValue,
                            await adapter.invoke(undeclared, payload: Self.probeBody, timeout: callTimeout))
    }

    /// An operation code no ABI version defines (what a later minor's host
    /// could send) must be refused with `GW_E_UNSUPPORTED`, with no completion.
    private func checkUnknownOperation(on adapter: AdapterInstance) async -> Step {
        Self.refusal(step: "unknown-operation", of: "operation code \(Self.unknownCode)",
                     await adapter.invoke(code: Self.unknownCode, payload: Self.probeBody, timeout: callTimeout))
    }

    /// A `GW_OP_*` value no ABI minor will define.
    static let unknownCode: Int32 = 9_999
    static let probeBody = Data(#"{"paymentId":"chk","providerReference":"check-reference","idempotencyKey":"k"}"#.utf8)

    static func refusal(step: String, of what: String, _ outcome: CallOutcome) -> Step {
        switch outcome {
        case .refused(let status) where status == ABIStatus.unsupported.rawValue:
            return Step(name: step, passed: true, detail: "\(what) refused with GW_E_UNSUPPORTED")
        case .completed(let status, _) where status == ABIStatus.unsupported.rawValue:
            return Step(name: step, passed: true, detail: "\(what) completed with GW_E_UNSUPPORTED")
        case let other:
            return Step(name: step, passed: false, detail: "\(what) is not described, yet the adapter answered \(other)")
        }
    }

    /// A result that is well-formed JSON but says contradictory things.
    static func inconsistency(in result: AdapterResult) -> String? {
        switch result.status {
        case .failed, .cancelled:
            if result.problem == nil { return "status \(result.status.rawValue) without a problem saying why" }
        case .succeeded, .authorized, .pending:
            break
        }
        if let amount = result.amount {
            if amount.value < 0 { return "negative amount \(amount.value)" }
            if amount.currency.range(of: "^[A-Z]{3}$", options: .regularExpression) == nil { return "currency \"\(amount.currency)\" is not ISO 4217" }
        }
        return nil
    }
}
