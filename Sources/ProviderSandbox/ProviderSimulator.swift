import Hummingbird

/// One provider's API as a local stand-in: the provider's own paths, field
/// names, encodings, status values, result codes and error shapes, with state
/// (a payment can be queried, captured, refunded) and hosted payer pages.
///
/// A simulator is mounted under its ``id`` on the sandbox's loopback server:
/// HyperPay's `POST /v1/checkouts` is `http://127.0.0.1:PORT/hyperpay/v1/checkouts`,
/// so an adapter's `base_url` is the only thing that differs from production.
public protocol ProviderSimulator: AnyObject, Sendable {
    /// The path prefix, and the id of the adapter it stands in for (`hyperpay`).
    var id: String { get }

    /// Registers the provider's routes (paths relative to the prefix).
    /// `sandbox` gives the base URL the server is reachable at, for links in
    /// answers and payer pages.
    func register(on routes: RouterGroup<BasicRequestContext>, sandbox: SandboxContext)

    /// How many times money moved at this provider (a debit, an authorization
    /// that was captured, a capture): what "never charged twice" is checked
    /// against. Refunds and reversals are not charges.
    var charges: Int { get }

    /// The sandbox credentials this simulator accepts, by the secret names of
    /// the adapter's manifest (`access_token` → a bearer token). `--sandbox`
    /// hands them to the adapter; they are worthless anywhere else.
    var sandboxSecrets: [String: String] { get }

    /// The provider's own error document for a bare HTTP status, for the
    /// ``FaultPlan/Fault/status(_:)`` fault. A default answers plain JSON.
    func errorBody(forStatus status: Int) -> (contentType: String, body: String)
}

/// What a simulator knows of the server it runs in.
public struct SandboxContext: Sendable {
    /// The server's base URL, `http://127.0.0.1:PORT` (no trailing slash);
    /// set once the server listens.
    public let baseURL: @Sendable () -> String
    /// The faults to inject (``FaultPlan``).
    public let faults: FaultPlan
    /// Whether the simulator's routes start under `/<id>` (the shared
    /// server), or at the root (a server of its own, for a provider's SDK).
    public var prefixed = true

    /// `http://127.0.0.1:PORT/<id>` (or, at the root, the base URL): where a simulator's own routes start.
    public func base(of simulator: some ProviderSimulator) -> String { prefixed ? baseURL() + "/" + simulator.id : baseURL() }
}
