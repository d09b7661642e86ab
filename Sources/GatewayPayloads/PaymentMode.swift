/// Test or live, as payment providers' own APIs separate them.
///
/// A provider is one or the other by its manifest; a session is one or the
/// other by the API key that opened it. Routing, available methods and
/// failover only ever consider providers of the session's mode, so a test
/// provider never serves (or backs up) a live payment.
public enum PaymentMode: String, Codable, Sendable, CaseIterable, Hashable {
    case test
    case live
}
