import CheckoutEngine
import Hummingbird
import Logging

/// The request context of the checkout API: Hummingbird's core context, and
/// the request id every log line and the `X-Request-Id` response header carry.
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller's `X-Request-Id` when it sent a usable one, else Hummingbird's.
    public var requestID: String
    /// The caller's API key, once ``APIKeyMiddleware`` checked it (`/v1`
    /// routes but webhooks); nil elsewhere.
    public var apiKey: APIKeyRecord?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        requestID = source.logger[metadataKey: "hb.request.id"]?.description ?? "-"
    }

    /// Bodies are read by ``JSONBody`` with their own cap; this is Hummingbird's
    /// limit for anything decoded through its own decoder.
    public var maxUploadSize: Int { JSONBody.maximumBytes }
}
