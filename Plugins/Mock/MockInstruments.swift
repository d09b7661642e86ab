import GatewayAdapterSDK

/// The mock's payer instruments (ABI 1.1), chosen by the payer's reference:
///
/// - `mock-slow`: never answers (only the host's deadline and its cancel end it);
/// - `mock-fail`: fails (`GW_E_INTERNAL`);
/// - `mock-pan`: a web label holding a card number (the host must refuse it all);
/// - any other payer reference (`mock-cards`, say): a saved Visa and a saved
///   Mastercard, a phone for Swish, Apple Pay available, Google Pay not, and
///   the web menu for mada;
/// - no payer reference: nothing.
///
/// Only the methods the host asked about are answered. An authorize whose
/// `instrument.selected` names a reference the mock did not issue is refused.
extension MockAdapter {
    static let savedCards: [String: Instrument] = [
        "visa": .savedCard(brand: "visa", last4: "1111", expiryMonth: 12, expiryYear: 2030, reference: "mock_card_visa_1111"),
        "mastercard": .savedCard(brand: "mastercard", last4: "4444", expiryMonth: 3, expiryYear: 2029, reference: "mock_card_mastercard_4444"),
    ]

    func instruments(_ request: InstrumentsRequest) async throws -> InstrumentsResult {
        var offered: [String: [Instrument]] = [:]
        switch request.payer?.reference {
        case nil:
            break
        case "mock-slow":
            try await Task.sleep(for: .seconds(86_400))
        case "mock-fail":
            throw AdapterError.internal("the mock's instrument store is down (mock-fail)")
        case "mock-pan":
            offered["mada"] = [.web(label: "Pay with 4111 1111 1111 1111", mode: "menu")]
        default:
            offered = Self.savedCards.mapValues { [$0] }
            offered["swish"] = [.phone(masked: "+46 7* *** **67", reference: "mock_phone_+46701234567")]
            offered["applepay"] = [.wallet(available: true)]
            offered["googlepay"] = [.wallet(available: false)]
            offered["mada"] = [.web(label: "All payment options", mode: "menu", reference: nil)]
        }
        return InstrumentsResult(methods: offered.filter { request.methods.contains($0.key) })
    }

    /// Checks an authorize's selected instrument, if any, is one the mock issued.
    static func checkSelection(_ request: AuthorizeRequest) throws {
        guard request.instrument?[SelectedInstrument.member] != nil else { return }
        guard let selected = SelectedInstrument(in: request.instrument) else {
            throw AdapterError.invalidRequest("instrument.selected must be {\"kind\": ..., \"reference\": ...}")
        }
        // The whole menu has no reference (the host sends the empty string).
        let menu = selected.kind == Instrument.Kind.web.rawValue && selected.reference.isEmpty
        guard menu || selected.reference.hasPrefix("mock_") else {
            throw AdapterError.invalidRequest("instrument.selected.reference is not an instrument the mock offered")
        }
    }
}
