import Foundation
import GatewayPayloads

/// The calls that ask each declared operation once with a well-formed
/// request, and the probes an adapter must refuse (garbage, an operation it
/// does not describe, an operation code no ABI defines).
extension ConformanceCheck {
    func check(_ operation: PaymentOperation, on adapter: AdapterInstance, context: inout RequestContext) async -> Step {
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
                let (checked, evidence) = ResultSchema.check(document, of: operation)
                let broken = ResultSchema.failures(evidence)
                guard let result = checked, broken == nil else {
                    return Step(name: operation.rawValue, passed: false,
                                detail: (checked == nil ? "the result document is invalid: " : "the result breaks its schema: ") + (broken ?? ""),
                                evidence: evidence)
                }
                if operation == .authorize, let reference = result.providerReference { context.providerReference = reference }
                return Step(name: operation.rawValue, passed: true,
                            detail: "completed once: \(result.status.rawValue)" + (result.problem.map { " (\($0.code))" } ?? "")
                                + ", \(evidence.count) fields checked", evidence: evidence)
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
    func checkInstruments(on adapter: AdapterInstance, manifest: Manifest, payer: Payer?) async -> Step {
        let name = payer == nil ? "instruments-anonymous" : "instruments"
        let request = InstrumentsRequest(
            sessionId: "ses_check", mode: manifest.mode, amount: RequestContext.amount(near: 1000, in: manifest.currencies[0], of: manifest),
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

    /// Garbage must be refused cleanly, not crash or complete as a success.
    func checkMalformedRequest(on adapter: AdapterInstance) async -> Step {
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
    func checkUndeclaredOperation(on adapter: AdapterInstance, manifest: Manifest) async -> Step {
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
    func checkUnknownOperation(on adapter: AdapterInstance) async -> Step {
        Self.refusal(step: "unknown-operation", of: "operation code \(Self.unknownCode)",
                     await adapter.invoke(code: Self.unknownCode, payload: Self.probeBody, timeout: callTimeout))
    }

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
}
