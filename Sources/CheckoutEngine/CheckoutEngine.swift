/// # The checkout engine
///
/// Turns "a shopper wants to pay" into calls on adapters, where money can be
/// lost or charged twice, so every rule is explicit and tested. Pure Swift, no
/// I/O of its own: it talks to a store and to providers through protocols.
///
/// Shape, bottom to top:
/// - `Domain/`: sessions, attempts and the payment balance as value types whose
///   transitions are checked (`DomainError` for an illegal one); problems
///   (RFC 9457, payer messages in English and Arabic). Money is
///   `GatewayPayloads.Money` (Int64 minor units + a known ISO 4217 currency).
/// - `Routing/`: candidates by method, currency, country, amount and capture
///   mode in manifest priority order, each with the reason it was chosen; a
///   circuit breaker per provider.
/// - `Idempotency/`: concurrent calls with one key run once.
/// - `Ports/`: `CheckoutStore` (durable before acknowledged) and
///   `PaymentProvider` / `ProviderDirectory` (answered, not sent, or unknown).
/// - `Engine/`: `Checkout`, which drives sessions, attempts (with failover only
///   when provably not charged), payer steps, captures/refunds/voids (held
///   before they are sent), verification and notifications.
/// - `Events/`: the append-only log as an `AsyncSequence` per session.
/// - `Reconciliation/`: the janitor that verifies pending attempts on a backoff
///   schedule, picks up what a crash left in flight, and expires sessions.
public enum CheckoutEngine {}
