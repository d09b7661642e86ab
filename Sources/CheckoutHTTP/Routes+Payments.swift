import CheckoutEngine
import Foundation
import GatewayPayloads
import HTTPTypes
import Hummingbird
import NIOCore
import PaymentGateway

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
            let report = gateway.providerReport()
            return Self.json(Self.providersJSON(report), headers: [Self.manifestsDigestHeader: report.manifestsDigest])
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
            guard gateway.acceptsWebhooks(from: provider) else {
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

    /// `X-Manifests-Digest` of `GET /v1/providers`: the host's manifests
    /// digest (``ProviderReport/manifestsDigest``), lower-case hex.
    static let manifestsDigestHeader = HTTPField.Name("X-Manifests-Digest")!

    /// Each manifest's provider (``ProviderStatus``): id, version, mode (test
    /// or live, as it is routed: `--sandbox` runs the shipped providers as
    /// test), enabled, state (with why when refused), manifest file and its
    /// SHA-256, methods, circuit state, isolation and health (ready,
    /// restarting, quarantined with why; an isolated adapter's sandbox).
    static func providersJSON(_ report: ProviderReport) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginArray()
        for provider in report.providers {
            writer.beginObject()
            writer.member("id", provider.id)
            writer.member("version", provider.version)
            writer.member("mode", provider.mode?.rawValue)
            if let enabled = provider.enabled { writer.member("enabled", enabled) }
            writer.member("state", provider.state.rawValue)
            writer.member("manifest", URL(fileURLWithPath: provider.manifestPath).lastPathComponent)
            writer.member("manifestSha256", provider.manifestSha256)
            writer.key("methods")
            writer.beginArray()
            for method in provider.methods { writer.string(method) }
            writer.endArray()
            writer.member("circuit", provider.circuit?.rawValue)
            writer.member("isolation", provider.isolation)
            if let health = provider.health {
                writer.member("health", health.name)
                if case .quarantined(let reason) = health { writer.member("quarantined", reason) }
            }
            if let sandbox = provider.sandbox {
                writer.member("networkConfined", sandbox.networkConfined)
                writer.member("networkReason", sandbox.networkReason)
                writer.key("sandbox")
                writer.beginArray()
                for layer in sandbox.layers { layer.write(to: &writer) }
                writer.endArray()
                if let resources = sandbox.resources {
                    writer.key("resources")
                    resources.write(to: &writer)
                }
            }
            writer.member("failure", provider.failure?.description)
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }
}
