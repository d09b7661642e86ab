import GatewayAdapterSDK

/// The edge cases the mock gateway simulates, chosen by `instrument.scenario`.
enum MockScenario: String, CaseIterable, Sendable, Codable {
    /// Charged at once (or authorized, with manual capture).
    case success
    /// Pending with no payer action; a later `verify` finds it succeeded.
    case pendingThenSuccess = "pending_then_success"
    /// Pending with a `three_ds` action; `continue` with `returnParams.outcome`
    /// `approve` (default), `decline` or `cancel` finishes it.
    case threeDS = "three_ds"
    /// Pending with an `otp` action; `continue` with the right `otp` succeeds,
    /// a wrong one stays pending (retryable) until the third miss fails it.
    case otp
    /// Declined: insufficient funds (`51`). Not charged.
    case insufficientFunds = "insufficient_funds"
    /// Declined by the issuer (`05`). Not charged.
    case cardDeclined = "card_declined"
    /// Charged, but the connection drops before the answer: the completion is
    /// `GW_E_OUTCOME_UNKNOWN`; `verify` finds it succeeded.
    case networkDrop = "network_drop"
    /// Charged, and never answered: the host's deadline fires; `verify` finds it succeeded.
    case timeout
    /// Approved for half the amount only (a partial approval).
    case partialPayment = "partial_payment"
    /// The payer cancelled on the provider's page. Not charged.
    case userCancelled = "user_cancelled"
    /// The provider failed before processing (`96`); safe to try another provider.
    case providerError = "provider_error"

    init(_ request: AuthorizeRequest) throws {
        guard let value = request.instrument?["scenario"] else {
            self = .success
            return
        }
        guard let name = value.stringValue, let scenario = MockScenario(rawValue: name) else {
            throw AdapterError.invalidRequest(
                "instrument.scenario must be one of: " + MockScenario.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self = scenario
    }
}
