import Foundation
import GatewayAdapterSDK

/// ABI 1.1 `instruments`: a Worldline client session for the merchant's
/// page or app (`POST /v2/{merchant}/sessions`), for every session, known
/// payer or not. With it a device SDK fetches the payment products and the
/// public key, and encrypts the card itself; the host only ever carries
/// the JWE. The session is public data (no secret in it) and lives two
/// hours; the host drops it five minutes before.
extension WorldlineAdapter {
    func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult {
        let methods = request.methods.filter { Self.products[$0] != nil }
        guard !methods.isEmpty, Self.currencies.contains(request.amount.currency) else { return InstrumentsResult() }
        let answer = try await client.post("/sessions", [String: [String]](), idempotenceKey: nil)
        guard answer.ok, let session = answer.decode(WorldlineWire.SessionAnswer.self), let sessionID = session.clientSessionId,
              let customer = session.customerId, let api = session.clientApiUrl else {
            throw AdapterError.internal("Worldline's client session could not be created: \(answer.summary)")
        }
        var data = ["clientSessionId": sessionID, "customerId": customer, "clientApiUrl": api]
        if let assets = session.assetUrl { data["assetUrl"] = assets }
        let expires = ISO8601DateFormatter().string(from: host.now.addingTimeInterval(Self.clientSessionLife - 300))
        let instrument = Instrument.clientSession(data: data, expiresAt: expires)
        return InstrumentsResult(methods: Dictionary(uniqueKeysWithValues: methods.map { ($0, [instrument]) }))
    }
}
