/// # The checkout engine (issue 3, being built)
///
/// Turns "a shopper wants to pay" into calls on adapters, where money can be
/// lost or charged twice, so every rule is explicit and tested. Pure Swift, no
/// I/O of its own: it talks to a store and to providers through protocols.
///
/// Shape, bottom to top:
/// - `Domain/`: sessions, attempts and the payment balance as value types whose
///   transitions are checked (`DomainError` for an illegal one). Money is
///   `GatewayPayloads.Money` (Int64 minor units + a known ISO 4217 currency).
/// - `Routing/`: candidates by method, currency, country, amount and capture
///   mode in manifest priority order, each with the reason it was chosen; a
///   circuit breaker per provider. (Next: failover only when an attempt
///   provably did not charge, in the engine that drives attempts.)
/// - `Idempotency/`: every mutating call keyed; same key + same request gets
///   the first answer and concurrent ones wait for it; same key + another
///   request is a conflict. (Next: answers persisted by the store.)
/// - Store (next): a protocol, with SQLite (GRDB, WAL, named migrations); a
///   state change is durable before it is acknowledged; an append-only event log.
/// - Reconciliation, events, the embeddable `Gateway` type and `gateway pay`.
public enum CheckoutEngine {}
