import Foundation
import GatewayPayloads

/// The checks that try to break an adapter rather than call it: many calls
/// at once, idempotency keys, cancels, a soak, malformed and edge-case
/// authorizations.
extension ConformanceCheck {
    /// The host calls adapters from many threads at once: 1,000 simultaneous
    /// calls, half `authorize` (each under a key of its own) and half
    /// `verify` when both are declared, must each complete exactly once with
    /// a valid document (a second completion shows in `exactly-once`).
    func checkConcurrentCalls(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let operations = [PaymentOperation.authorize, .verify].filter { context.manifest.operations.contains($0) }
        let verify = VerifyRequest(paymentId: context.paymentID, providerReference: context.providerReference)
        // The adapter's process in a runner (past the PID namespace's supervisor); the host's own in process.
        let runner = adapter.adapterProcess
        let pid = runner ?? getpid()
        let before = ThreadSampler.count(of: pid) ?? 0
        let sampler = ThreadSampler(pid: pid)
        sampler.start()
        let outcomes = await withTaskGroup(of: String?.self) { group in
            for i in 0..<Self.concurrentCalls {
                let operation = operations[i % operations.count]
                group.addTask {
                    do {
                        if operation == .authorize {
                            _ = try await adapter.call(.authorize, context.authorize("concurrent-\(i)"), timeout: callTimeout)
                        } else {
                            _ = try await adapter.call(.verify, verify, timeout: callTimeout)
                        }
                        return nil
                    } catch {
                        return "\(operation.rawValue): \(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        let peak = sampler.finish()
        // A runner's threads are the adapter's; in process the host's other
        // work shares the count, so it is reported, and the runner pass (which
        // every in-process check runs first) holds the adapter to the bound.
        let threads = runner == nil ? max(peak - before, 0) : peak
        let bound = Self.maximumRunnerThreads
        let counted = runner == nil ? "the host grew by \(threads) OS threads (from \(before))" : "its runner peaked at \(threads) OS threads"
        let evidence = [runner == nil
            ? Evidence(field: "OS threads added to the host", value: "\(threads)", rule: "reported (the runner pass holds the adapter to at most \(bound))", ok: true)
            : Evidence(field: "the runner's peak OS threads", value: "\(threads)", rule: "at most \(bound)", ok: threads <= bound)]
        let what = "\(Self.concurrentCalls) concurrent " + operations.map(\.rawValue).joined(separator: " and ") + " calls"
        guard outcomes.isEmpty else {
            return Step(name: "concurrency", passed: false, detail: "\(outcomes.count) of \(what) failed: \(outcomes[0])", evidence: evidence, threads: threads)
        }
        guard runner == nil || threads <= bound else {
            return Step(name: "concurrency", passed: false,
                        detail: "\(what) each completed once, but \(counted), more than \(bound): a thread per waiting call "
                            + "(a host service waited on, a blocking call) does not scale; see docs/plugin-authors.md, threads",
                        evidence: evidence, threads: threads)
        }
        return Step(name: "concurrency", passed: true, detail: "\(what) each completed once; \(counted)", evidence: evidence, threads: threads)
    }

    /// An authorize repeated under its idempotency key gets the first answer
    /// again (status, provider reference, amount), and another request under
    /// that key (another amount) is refused with `GW_E_INVALID_REQUEST`, never
    /// answered as a new payment nor with the first one's answer (the header's
    /// "verify, and replayed idempotency keys").
    func checkIdempotency(on adapter: AdapterInstance, context: RequestContext) async -> Step {
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
        // One minor unit more, or less at the manifest's maximum (never 0: that would be refused for another reason).
        let other = Money(value: amount.value < (limit?.max ?? Int64.max) || amount.value <= 1 ? amount.value + 1 : amount.value - 1,
                          currency: amount.currency)
        let otherOutcome = await adapter.invoke(.authorize, payload: request(other), timeout: callTimeout)
        func evidence(refused: Bool) -> [Evidence] {
            [Evidence(field: "first authorize", value: "\(one.status.rawValue) \(one.providerReference ?? "-")", rule: "completed GW_OK", ok: true),
             Evidence(field: "the same request again", value: "\(two.status.rawValue) \(two.providerReference ?? "-")",
                      rule: "the first answer: same status, providerReference and amount", ok: true),
             Evidence(field: "another amount (\(other.value)) under the key", value: Self.summary(of: otherOutcome),
                      rule: "refused with GW_E_INVALID_REQUEST, nothing done", ok: refused)]
        }
        switch otherOutcome {
        case let outcome where Self.isInvalidRequest(outcome):
            return Step(name: name, passed: true, detail: "a replay got the first answer (\(one.status.rawValue)); another amount under the key was refused with GW_E_INVALID_REQUEST",
                        evidence: evidence(refused: true))
        case .completed(0, let document):
            let reused = (try? AdapterResult(jsonData: document))?.providerReference == one.providerReference
            return Step(name: name, passed: false, detail: "another amount (\(other.value)) under a key already used was answered GW_OK"
                        + (reused ? " with the first request's answer" : " as a new payment") + "; it must be refused with GW_E_INVALID_REQUEST",
                        evidence: evidence(refused: false))
        case let outcome:
            return Step(name: name, passed: false, detail: "another amount under a key already used: expected GW_E_INVALID_REQUEST, got \(Self.summary(of: outcome))",
                        evidence: evidence(refused: false))
        }
    }

    /// Cancel while a call runs, and after it completed: a cancelled call
    /// still owes its one completion (it must arrive: the host waits for it
    /// before it destroys), and a cancel for a finished call is ignored (a
    /// second completion shows in `exactly-once`).
    func checkCancel(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let name = "cancel"
        let calls = adapter.context.calls
        // Before: a cancel for the id the next call will get (the header allows
        // one to overtake its invoke); the call must still complete once.
        adapter.connection.cancel(calls.lastIssuedID + 1)
        let early = await adapter.invoke(.authorize, payload: Self.encoded(context.authorize("cancel-before")), timeout: callTimeout)
        switch early {
        case .completed, .refused:
            break
        default:
            return Step(name: name, passed: false, detail: "an authorize whose cancel arrived before its invoke got no completion (\(Self.summary(of: early))): "
                        + "ignore a cancel you cannot act on, and still complete the call")
        }
        guard await Poll.until(callTimeout, { adapter.outstandingCalls == 0 }) else {
            return Step(name: name, passed: false, detail: "a call whose cancel came before its invoke still owes its completion after \(callTimeout)")
        }
        let request = Self.encoded(context.authorize("cancel"))
        let before = calls.lastIssuedID
        let during = Task { await adapter.invoke(.authorize, payload: request, timeout: callTimeout) }
        // Cancelled once the host issued it (whether or not the adapter answered yet).
        _ = await Poll.until(callTimeout) { calls.lastIssuedID != before }
        during.cancel()
        let outcome = await during.value
        guard await Poll.until(callTimeout, { adapter.outstandingCalls == 0 }) else {
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
        return Step(name: name, passed: true, detail: "a cancel sent before its authorize: \(Self.summary(of: early)); " + first
                    + "; a cancel for a completed verify was sent (a second completion would fail exactly-once)")
    }

    /// Calls the adapter for `duration`: rounds of 100 concurrent authorizes
    /// (new keys) and verifies, each of which must complete once, validly.
    /// Reports the calls made and the process's resident memory before and after.
    func checkSoak(on adapter: AdapterInstance, context: RequestContext, for duration: Duration) async -> Step {
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

    /// A request made from a JSON object (keys sorted, as the host writes them).
    /// Foundation's writer on purpose: the check's broken requests come from a
    /// writer other than the host's own, so a fault of the codec cannot hide in both.
    static func json(_ object: Any) -> [UInt8] { Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()) }

    /// A well-formed authorize of this check's (its own key), as a JSON object to break.
    func authorizeObject(_ context: RequestContext, key: String, amount: Money? = nil, orderID: String? = nil,
                                 payerName: String = "Conformance Check") -> [String: Any] {
        let bytes = Self.encoded(context.authorize(key, amount: amount, orderID: orderID, payerName: payerName))
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    /// Malformed authorizations, each a way a request can be wrong: every
    /// one must be refused (or completed) with `GW_E_INVALID_REQUEST`, never
    /// charged, never a crash or a hang.
    func checkMalformedAuthorizations(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        func variant(_ name: String, _ change: (inout [String: Any]) -> Void) -> (String, [UInt8]) {
            var object = authorizeObject(context, key: "malformed-\(name)")
            change(&object)
            return (name, Self.json(object))
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
            ("trailing garbage", Self.json(authorizeObject(context, key: "malformed-trailing")) + Array(" x".utf8)),
            variant("a fractional amount", amount(10.5)),
            variant("an amount in a string", amount("1000")),
            variant("a negative amount", amount(-1000)),
            variant("a zero amount", amount(0)),
            variant("a lower-case currency", amount(context.authorizedAmount.value, currency: context.authorizedAmount.currency.lowercased())),
            variant("nesting 200 deep") { $0["instrument"] = deep },
            ("invalid UTF-8 in a string", Self.withInvalidUTF8(Self.json(authorizeObject(context, key: "malformed-utf8", orderID: "order-UTF8")))),
        ]
        for member in ["paymentId", "idempotencyKey", "amount", "method"] {
            cases.append(variant("no \(member)") { $0[member] = nil })
        }
        var failures: [String] = []
        var evidence: [Evidence] = []
        for (name, bytes) in cases {
            let outcome = await adapter.invoke(.authorize, payload: bytes, timeout: callTimeout)
            let refused: Bool
            switch outcome {
            case let outcome where Self.isInvalidRequest(outcome):
                refused = true
            case .completed(0, _):
                refused = false
                failures.append("\(name): answered GW_OK (a malformed request must never be acted on)")
            default:
                refused = false
                failures.append("\(name): \(Self.summary(of: outcome))")
            }
            evidence.append(Evidence(field: name, value: Self.summary(of: outcome), rule: "refused with GW_E_INVALID_REQUEST, nothing sent", ok: refused))
        }
        guard failures.isEmpty else {
            return Step(name: "malformed-authorize", passed: false,
                        detail: "\(failures.count) of \(cases.count) malformed authorizations not refused with GW_E_INVALID_REQUEST: " + failures.prefix(3).joined(separator: "; "),
                        evidence: evidence)
        }
        return Step(name: "malformed-authorize", passed: true, detail: "\(cases.count) malformed authorizations each refused with GW_E_INVALID_REQUEST",
                    evidence: evidence)
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
    func checkEdgeCases(on adapter: AdapterInstance, context: RequestContext) async -> Step {
        let m = context.manifest
        var cases: [(String, [String: Any], Money)] = []
        for code in ["KWD", "JPY"] where m.currencies.contains(code) {
            let money = RequestContext.amount(near: 1234, in: code, of: m)
            cases.append(("\(code) \(money.value)", authorizeObject(context, key: "edge-\(code.lowercased())", amount: money), money))
        }
        let first = context.authorizedAmount.currency
        let largest = Money(value: m.amountLimits[first]?.max ?? Int64.max, currency: first)
        cases.append(("the largest amount (\(largest.value) \(first))", authorizeObject(context, key: "edge-largest", amount: largest), largest))
        let unicode = "طلب ١٠٠١ — 注文 🧾 \u{200F}é"
        cases.append(("Unicode strings", authorizeObject(context, key: "edge-unicode", orderID: "order-" + unicode, payerName: unicode), context.authorizedAmount))
        var failures: [String] = []
        var evidence: [Evidence] = []
        for (name, object, asked) in cases {
            let outcome = await adapter.invoke(.authorize, payload: Self.json(object), timeout: callTimeout)
            let before = failures.count
            switch outcome {
            case .completed(0, let document):
                let (checked, rows) = ResultSchema.check(document, of: .authorize)
                guard let result = checked else {
                    failures.append("\(name): " + (ResultSchema.failures(rows) ?? "the result document is invalid"))
                    break
                }
                if let broken = ResultSchema.failures(rows) { failures.append("\(name): \(broken)") }
                if let amount = result.amount, amount.currency != asked.currency || amount.value > asked.value {
                    failures.append("\(name): answered \(amount.value) \(amount.currency), more than or other than the \(asked.value) \(asked.currency) asked")
                }
            case let outcome where Self.isInvalidRequest(outcome):
                break
            case .completed(let status, _) where status != ABIStatus.internal.rawValue && status != ABIStatus.unsupported.rawValue:
                break
            default:
                failures.append("\(name): \(Self.summary(of: outcome))")
            }
            evidence.append(Evidence(field: name, value: Self.summary(of: outcome),
                                     rule: "answered once with a valid result, never more than \(asked.value) \(asked.currency); or refused as invalid",
                                     ok: failures.count == before))
        }
        guard failures.isEmpty else {
            return Step(name: "edge-cases", passed: false, detail: failures.prefix(3).joined(separator: "; "), evidence: evidence)
        }
        return Step(name: "edge-cases", passed: true, detail: "\(cases.count) edge cases (" + cases.map(\.0).joined(separator: ", ") + ") each answered once, validly",
                    evidence: evidence)
    }

    /// Refused, or completed, with `GW_E_INVALID_REQUEST`: what a malformed request must get.
    static func isInvalidRequest(_ outcome: CallOutcome) -> Bool {
        switch outcome {
        case .refused(let status), .completed(let status, _): status == ABIStatus.invalidRequest.rawValue
        default: false
        }
    }

    /// A call's outcome in a few words, for the report: its status by name,
    /// and for a result its status and the document's first bytes.
    static func summary(of outcome: CallOutcome) -> String {
        switch outcome {
        case .completed(0, let document):
            let status = (try? AdapterResult(jsonData: document)).map { $0.status.rawValue } ?? "an invalid document"
            return "completed GW_OK: \(status)"
        case .completed(let status, let document):
            return "completed \(ABIStatus(rawValue: status)): \(AdapterInstance.message(in: document))"
        case .refused(let status):
            return "refused with \(ABIStatus(rawValue: status))"
        case .timedOut:
            return "no completion by the deadline"
        case .cancelled:
            return "cancelled"
        case .lost(let reason):
            return "the adapter's process was lost: \(reason)"
        }
    }
}
