import CGatewayABI
import Foundation
import GatewayPayloads
@testable import PluginHost
@testable import GatewayAdapterSDK
import TestSupport
import Testing

/// Unknown means unknown: only the statuses the header documents as "nothing
/// was sent" (`gw_status_proves_nothing_sent`) ever let the host treat a call
/// as provably not sent. Every other status a real adapter can complete or
/// refuse with, named or not, leaves the outcome unknown.
@Suite(.serialized, .heavy) struct UnknownOutcomeTests {
    static let nothingSent: [Int32] = [GW_E_INVALID_REQUEST, GW_E_UNSUPPORTED, GW_E_INTERNAL, GW_E_BUSY, GW_E_NOT_FOUND, GW_E_DENIED, GW_E_UNREACHABLE]
    /// A later minor version's code, values the header does not name, and the
    /// named statuses that do not prove anything.
    static let unknown: [Int32] = [13, -1, 1000, GW_E_BUFFER_TOO_SMALL, GW_E_VERSION, GW_E_CANCELLED, GW_E_TIMEOUT, GW_E_OUTCOME_UNKNOWN]

    func call(completingWith completion: Int32 = 0, refusingWith refusal: Int32 = 0) async throws -> AdapterCallError {
        let folder = try ManifestFolder(copyShipped: false)
        let id = "fab\(completion < 0 ? "m\(-completion)" : "\(completion)")r\(refusal < 0 ? "m\(-refusal)" : "\(refusal)")"
        try await FabricatedAdapter(id: id, completionStatus: completion, invokeStatus: refusal).install(in: folder, manifestName: "\(id).json")
        let adapter = try #require(ProviderRegistry.load(manifestAt: folder.manifests.appendingPathComponent("\(id).json"), loader: folder.loader).adapter)
        defer { Task { await adapter.shutdown(grace: .seconds(1)) } }
        let request = AuthorizeRequest(paymentId: "pay_1", idempotencyKey: "k1", amount: Money(value: 1000, currency: "SAR"), method: "visa",
                                       country: "SA", orderId: "o-1", capture: .automatic)
        do {
            _ = try await adapter.call(.authorize, request)
        } catch {
            return error
        }
        Issue.record("the call succeeded")
        return .cancelled
    }

    @Test(arguments: unknown)
    func aCompletionWithAStatusTheHeaderDoesNotDocumentAsNothingSentIsAnUnknownOutcome(status: Int32) async throws {
        let error = try await call(completingWith: status)
        #expect(error == .failed(ABIStatus(rawValue: status), message: "fab completes with status \(status)"))
        #expect(error.outcomeUnknown, "completion status \(status) must leave the outcome unknown")
    }

    @Test(arguments: unknown)
    func anInvokeRefusedWithAStatusTheHeaderDoesNotDocumentAsNothingSentIsAnUnknownOutcome(status: Int32) async throws {
        let error = try await call(refusingWith: status)
        #expect(error.outcomeUnknown, "a refusal with status \(status) must leave the outcome unknown")
    }

    @Test(arguments: nothingSent)
    func onlyTheHeadersNothingSentStatusesProveNothingWasSent(status: Int32) async throws {
        #expect(try await call(completingWith: status).outcomeUnknown == false)
        #expect(try await call(refusingWith: status).outcomeUnknown == false)
    }

    @Test func everyValueOutsideTheAllowlistIsUnknown() {
        for raw in Int32(-300)...Int32(300) {
            #expect(ABIStatus(rawValue: raw).provesNothingSent == Self.nothingSent.contains(raw), "gw_status \(raw)")
        }
        #expect(!ABIStatus(rawValue: .max).provesNothingSent && !ABIStatus(rawValue: .min).provesNothingSent)
    }
}

/// The Swift SDK never reports "nothing was sent" once a request of the call
/// may have left for the provider.
@Suite struct SDKUnknownOutcomeTests {
    typealias Failure = GatewayAdapterSDK.ReplyEncoding

    @Test func anInvalidRequestRaisedAfterARequestWentOutIsAnUnknownOutcome() {
        #expect(Failure.failure(AdapterError.invalidRequest("the provider said 400"), requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(Failure.failure(AdapterError.unsupported("no"), requests: 2).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(Failure.failure(AdapterError.invalidConfiguration("bad"), requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(Failure.failure(AdapterError.internal("bug"), requests: 1).0 == GW_E_OUTCOME_UNKNOWN)
    }

    @Test func beforeAnyRequestTheAdaptersOwnStatusStands() {
        #expect(Failure.failure(AdapterError.invalidRequest("amount missing"), requests: 0).0 == GW_E_INVALID_REQUEST)
        #expect(Failure.failure(AdapterError.internal("bug"), requests: 0).0 == GW_E_INTERNAL)
        #expect(Failure.failure(AdapterError.outcomeUnknown("lost"), requests: 0).0 == GW_E_OUTCOME_UNKNOWN)
    }

    @Test func onlyTheFirstRequestRefusedByEgressDidNotLeave() {
        #expect(Failure.failure(HTTPEgressError(status: GW_E_DENIED, message: "not allowed"), requests: 1).0 == GW_E_DENIED)
        #expect(Failure.failure(HTTPEgressError(status: GW_E_UNREACHABLE, message: "refused"), requests: 1).0 == GW_E_UNREACHABLE)
        #expect(Failure.failure(HTTPEgressError(status: GW_E_DENIED, message: "not allowed"), requests: 2).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(Failure.failure(HTTPEgressError(status: GW_E_UNREACHABLE, message: "refused"), requests: 3).0 == GW_E_OUTCOME_UNKNOWN)
        #expect(Failure.failure(HTTPEgressError(status: GW_E_TIMEOUT, message: "slow"), requests: 1).0 == GW_E_TIMEOUT)
    }
}
