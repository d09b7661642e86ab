import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore
import PaymentGateway
import PluginHost

extension CheckoutAPI {
    /// Payment operations and the provider list.
    func addPaymentRoutes(to router: APIRouter) {
        let gateway = self.gateway

        // A payment as recorded, without asking the provider (that is
        // `verify`): its balance, and each held operation with why it is
        // held, since when, and when reconciliation next checks it.
        router.get("/v1/payments/:id") { _, context -> Response in
            let payment = try await gateway.payment(try context.parameters.require("id"), mode: try context.callerMode())
            return Self.json(payment)
        }

        router.post("/v1/payments/:id/capture") { request, context -> Response in
            let body = try await JSONBody.read(AmountBody.self, from: request, allowEmpty: AmountBody())
            let change = try await gateway.capture(payment: try context.parameters.require("id"), amount: body.amount,
                                                   idempotencyKey: Self.idempotencyKey(request), mode: try context.callerMode())
            return Self.json(change)
        }

        router.post("/v1/payments/:id/refund") { request, context -> Response in
            let body = try await JSONBody.read(AmountBody.self, from: request, allowEmpty: AmountBody())
            let change = try await gateway.refund(payment: try context.parameters.require("id"), amount: body.amount,
                                                  idempotencyKey: Self.idempotencyKey(request), mode: try context.callerMode())
            return Self.json(change)
        }

        router.post("/v1/payments/:id/void") { request, context -> Response in
            _ = try await JSONBody.read(EmptyBody.self, from: request, allowEmpty: EmptyBody())
            let change = try await gateway.void(payment: try context.parameters.require("id"), idempotencyKey: Self.idempotencyKey(request),
                                                mode: try context.callerMode())
            return Self.json(change)
        }

        router.post("/v1/payments/:id/verify") { request, context -> Response in
            _ = try await JSONBody.read(EmptyBody.self, from: request, allowEmpty: EmptyBody())
            let attempt = try await gateway.verify(attempt: try context.parameters.require("id"), mode: try context.callerMode())
            return Self.json(attempt)
        }

        // The list is a bare array; the host's manifests digest (of the same
        // records) is a header, X-Manifests-Digest, so the body keeps its shape.
        router.get("/v1/providers") { _, _ -> Response in
            let records = gateway.providerRecords
            return Self.json(Self.providersJSON(gateway, records: records),
                             headers: [Self.manifestsDigestHeader: ManifestDigest.host(records)])
        }
    }

    /// Provider notifications: no API key (``APIKeyMiddleware``); the
    /// adapter's verification of the provider's signature is their only way in.
    func addWebhookRoutes(to router: APIRouter) {
        let gateway = self.gateway

        // The raw body and headers go to that provider's adapter, which alone
        // can verify them; an unverifiable notification changes nothing (401).
        // A provider with no adapter in this host (an unknown id, or one
        // disabled or refused since the start) has no webhook endpoint: 404.
        // One disabled while running keeps its adapter for the payments it
        // already has, and so keeps receiving their notifications.
        router.post("/v1/webhooks/:providerId") { request, context -> Response in
            let provider = try context.parameters.require("providerId")
            guard gateway.providers.provider(provider) != nil else {
                throw ProblemError(code: .notFound, detail: "no provider \(provider.prefix(64)) is loaded in this gateway: nothing can verify its notifications")
            }
            let body = try await JSONBody.collect(request)
            var headers: [String: String] = [:]
            // A field given twice is combined (RFC 9110 §5.3), so an adapter can refuse a repeated signature.
            for field in request.headers { headers[field.name.canonicalName] = headers[field.name.canonicalName].map { $0 + ", " + field.value } ?? field.value }
            let outcome = try await gateway.webhook(provider: provider, headers: headers, body: Data(buffer: body))
            var writer = JSONWriter()
            writer.beginObject()
            switch outcome {
            case .applied(let ref):
                writer.member("outcome", "applied")
                writer.member("sessionId", ref.sessionID)
                writer.member("attemptId", ref.attemptID)
            case .duplicate:
                writer.member("outcome", "duplicate")
            case .ignored(let why):
                writer.member("outcome", "ignored")
                writer.member("detail", why)
            }
            writer.endObject()
            return Self.json(writer.bytes)
        }
    }

    /// `X-Manifests-Digest` of `GET /v1/providers`: ``ManifestDigest/host(_:)``
    /// of the records listed, lower-case hex.
    static let manifestsDigestHeader = HTTPField.Name("X-Manifests-Digest")!

    /// Each manifest's provider: id, version, mode (test or live, as it is
    /// routed: `--sandbox` runs the shipped providers as test), enabled, state
    /// (with why when refused), manifest file and its SHA-256, methods, circuit
    /// state, isolation and health (ready, restarting, quarantined with why;
    /// an isolated adapter's network confinement). `records`: the gateway's
    /// current ones when nil.
    static func providersJSON(_ gateway: PaymentGateway, records: [ProviderRecord]? = nil) -> [UInt8] {
        let circuits = gateway.checkout.circuitStates()
        var writer = JSONWriter()
        writer.beginArray()
        for record in records ?? gateway.providerRecords {
            writer.beginObject()
            writer.member("id", record.id)
            writer.member("version", record.version)
            writer.member("mode", record.manifest?.mode.rawValue)
            if let enabled = record.enabled { writer.member("enabled", enabled) }
            writer.member("state", record.state.rawValue)
            writer.member("manifest", URL(fileURLWithPath: record.manifestPath).lastPathComponent)
            writer.member("manifestSha256", record.manifestSha256)
            writer.key("methods")
            writer.beginArray()
            for method in record.methods { writer.string(method) }
            writer.endArray()
            writer.member("circuit", record.id.map { (circuits[$0] ?? .closed).rawValue })
            writer.member("isolation", record.manifest?.isolation.rawValue)
            if let adapter = record.adapter {
                let health = adapter.health
                writer.member("health", health.name)
                if case .quarantined(let reason) = health { writer.member("quarantined", reason) }
                if let sandbox = adapter.sandbox {
                    writer.member("networkConfined", sandbox.network.confined)
                    writer.member("networkReason", sandbox.network.reason)
                    writer.key("sandbox")
                    writer.beginArray()
                    for layer in sandbox.layers {
                        writer.beginObject()
                        writer.member("layer", layer.layer.rawValue)
                        writer.member("inForce", layer.inForce)
                        writer.member("reason", layer.reason)
                        writer.endObject()
                    }
                    writer.endArray()
                    if let resources = sandbox.resources {
                        writer.key("resources")
                        writer.beginObject()
                        writer.member("cgroup", resources.cgroup)
                        writer.key("limits")
                        writer.beginArray()
                        for limit in resources.limits { writer.string(limit) }
                        writer.endArray()
                        writer.member("reason", resources.reason)
                        writer.endObject()
                    }
                }
            }
            writer.member("failure", record.failure.map { "\($0)" })
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }
}
