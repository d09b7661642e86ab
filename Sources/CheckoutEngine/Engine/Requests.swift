import Foundation
import GatewayPayloads
import PaymentFields

/// Create a checkout session.
public struct NewSession: Sendable, Hashable {
    public var amount: Money
    /// ISO 3166-1 alpha-2; routing only offers providers that serve it.
    public var country: String?
    public var orderId: String
    public var payer: Payer?
    public var capture: CaptureMode?
    public var returnUrl: String?

    public init(amount: Money, country: String? = nil, orderId: String, payer: Payer? = nil,
                capture: CaptureMode? = nil, returnUrl: String? = nil) {
        self.amount = amount
        self.country = country
        self.orderId = orderId
        self.payer = payer
        self.capture = capture
        self.returnUrl = returnUrl
    }
}

/// Try to pay a session with a method (optionally through one provider).
public struct NewAttempt: Sendable, Hashable {
    public var method: String
    public var provider: String?
    /// Method-specific data handed to the adapter and never stored: a token, an
    /// encrypted card, a phone number; for the mock, `scenario`.
    public var instrument: [String: JSONValue]?
    /// One of the session's `instruments` (a saved card, a known phone, a web
    /// instrument), by its id: the attempt goes to the provider that offered
    /// it, and to no other.
    public var instrumentId: String?

    public init(method: String, provider: String? = nil, instrument: [String: JSONValue]? = nil, instrumentId: String? = nil) {
        self.method = method
        self.provider = provider
        self.instrument = instrument
        self.instrumentId = instrumentId
    }
}

/// What the payer did about a pending attempt's action.
public struct PayerInput: Sendable, Hashable {
    public var otp: String?
    public var returnParams: [String: String]?

    public init(otp: String? = nil, returnParams: [String: String]? = nil) {
        self.otp = otp
        self.returnParams = returnParams
    }
}

/// A session with what may pay it now.
public struct SessionSnapshot: Sendable, Equatable {
    public var session: Session
    /// Methods of enabled providers whose manifests match this session's
    /// currency, country, amount and capture mode (empty once it is not open).
    public var availableMethods: [String]
    /// Per method, what the payer can use (saved cards, a known phone,
    /// wallets, web instruments, client sessions) from providers that can
    /// still take the session; empty once it is not open.
    public var instruments: [String: [OfferedInstrument]] = [:]
    /// Per available method, its form (docs/fields.md): what the payer
    /// types, how to show it, and the rules the host checks.
    public var fields: [String: [Field]] = [:]
    /// Each of `fields`' forms as JSON bytes, when they were written once
    /// for the manifests snapshot (``ProviderProfile/forms``): what writing
    /// the snapshot reuses. Not part of its value (equality ignores it).
    public var forms: [String: [UInt8]] = [:]

    public init(session: Session, availableMethods: [String], instruments: [String: [OfferedInstrument]] = [:],
                fields: [String: [Field]] = [:], forms: [String: [UInt8]] = [:]) {
        self.session = session
        self.availableMethods = availableMethods
        self.instruments = instruments
        self.fields = fields
        self.forms = forms
    }

    public static func == (a: SessionSnapshot, b: SessionSnapshot) -> Bool {
        a.session == b.session && a.availableMethods == b.availableMethods && a.instruments == b.instruments && a.fields == b.fields
    }

}

/// The outcome of a capture, refund or void.
public struct PaymentChange: Sendable, Equatable {
    public var paymentId: String
    public var operation: PaymentOperation
    /// What moved (nil for a void).
    public var amount: Money?
    public var providerReference: String?
    /// The payment's balance after the change.
    public var balance: PaymentBalance
}

/// What became of a provider notification.
public enum WebhookOutcome: Sendable, Equatable {
    /// Applied to attempt `attemptID` (its status may or may not have changed).
    case applied(AttemptRef)
    /// Already applied once (same provider event id): nothing changed.
    case duplicate
    /// Verified, but about no payment this host knows.
    case ignored(String)
}
