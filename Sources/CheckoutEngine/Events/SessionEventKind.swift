import GatewayPayloads

extension SessionEvent {
    /// What happened: the one list of every event type a session records.
    /// The README's "Session events" table, the OpenAPI document's
    /// `SessionEvent.type` enum and the SSE `event:` field quote it (a test
    /// holds each to ``all``). On the wire a kind is its raw string; a kind
    /// read back from a store is kept as stored, known or not.
    public struct Kind: WireName {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        // The session.
        /// Created, open for attempts.
        public static let sessionCreated = Kind(rawValue: "session.created")
        /// An attempt paid it (after `attempt.succeeded` or `attempt.authorized`).
        public static let sessionCompleted = Kind(rawValue: "session.completed")
        /// Aborted by the merchant.
        public static let sessionCancelled = Kind(rawValue: "session.cancelled")
        /// Its time ran out unpaid.
        public static let sessionExpired = Kind(rawValue: "session.expired")

        // An attempt (a payment with one provider).
        public static let attemptStarted = Kind(rawValue: "attempt.started")
        /// The provider proved nothing was sent: the next provider is tried.
        public static let attemptFailover = Kind(rawValue: "attempt.failover")
        /// Waiting for the payer or for a verify; the outcome is not known yet.
        public static let attemptPending = Kind(rawValue: "attempt.pending")
        public static let attemptAuthorized = Kind(rawValue: "attempt.authorized")
        public static let attemptSucceeded = Kind(rawValue: "attempt.succeeded")
        public static let attemptFailed = Kind(rawValue: "attempt.failed")
        public static let attemptCancelled = Kind(rawValue: "attempt.cancelled")
        /// The provider has no record of it yet, and may still act on it.
        public static let attemptNotFoundYet = Kind(rawValue: "attempt.not_found_yet")
        /// A verify agreed with the attempt's final status.
        public static let attemptConfirmed = Kind(rawValue: "attempt.confirmed")
        /// A verify disagreed; nothing was applied, a person looks.
        public static let attemptDiscrepancy = Kind(rawValue: "attempt.discrepancy")
        /// The adapter answered against the header's rules (a second payment reference).
        public static let attemptProtocolViolation = Kind(rawValue: "attempt.protocol_violation")
        /// A failed or cancelled attempt that the provider charged after all.
        public static let attemptLateCharge = Kind(rawValue: "attempt.late_charge")
        /// The payer chose another method while this attempt waited.
        public static let attemptWithdrawn = Kind(rawValue: "attempt.withdrawn")
        /// Its host stopped mid-call; it waits for a verify.
        public static let attemptInterrupted = Kind(rawValue: "attempt.interrupted")
        /// A verify could not be made (the provider or adapter failed); tried again.
        public static let attemptVerifyFailed = Kind(rawValue: "attempt.verify_failed")

        // A payment's money after it was made: captures, refunds and voids.
        public static let paymentCaptured = Kind(rawValue: "payment.captured")
        public static let paymentRefunded = Kind(rawValue: "payment.refunded")
        public static let paymentVoided = Kind(rawValue: "payment.voided")
        /// The provider's totals differ from the books.
        public static let paymentDiscrepancy = Kind(rawValue: "payment.discrepancy")
        public static let captureSent = Kind(rawValue: "payment.capture_sent")
        public static let captureHeld = Kind(rawValue: "payment.capture_held")
        public static let capturePending = Kind(rawValue: "payment.capture_pending")
        public static let captureRefused = Kind(rawValue: "payment.capture_refused")
        public static let captureUnknown = Kind(rawValue: "payment.capture_unknown")
        public static let captureFailed = Kind(rawValue: "payment.capture_failed")
        public static let refundSent = Kind(rawValue: "payment.refund_sent")
        public static let refundHeld = Kind(rawValue: "payment.refund_held")
        public static let refundPending = Kind(rawValue: "payment.refund_pending")
        public static let refundRefused = Kind(rawValue: "payment.refund_refused")
        public static let refundUnknown = Kind(rawValue: "payment.refund_unknown")
        public static let refundFailed = Kind(rawValue: "payment.refund_failed")
        public static let voidSent = Kind(rawValue: "payment.void_sent")
        public static let voidHeld = Kind(rawValue: "payment.void_held")
        public static let voidPending = Kind(rawValue: "payment.void_pending")
        public static let voidRefused = Kind(rawValue: "payment.void_refused")
        public static let voidUnknown = Kind(rawValue: "payment.void_unknown")
        public static let voidFailed = Kind(rawValue: "payment.void_failed")

        // A provider's notification.
        public static let webhookReceived = Kind(rawValue: "webhook.received")

        /// Every kind, in the order above.
        public static let all: [Kind] = [
            .sessionCreated, .sessionCompleted, .sessionCancelled, .sessionExpired,
            .attemptStarted, .attemptFailover, .attemptPending, .attemptAuthorized, .attemptSucceeded, .attemptFailed, .attemptCancelled,
            .attemptNotFoundYet, .attemptConfirmed, .attemptDiscrepancy, .attemptProtocolViolation, .attemptLateCharge, .attemptWithdrawn,
            .attemptInterrupted, .attemptVerifyFailed,
            .paymentCaptured, .paymentRefunded, .paymentVoided, .paymentDiscrepancy,
            .captureSent, .captureHeld, .capturePending, .captureRefused, .captureUnknown, .captureFailed,
            .refundSent, .refundHeld, .refundPending, .refundRefused, .refundUnknown, .refundFailed,
            .voidSent, .voidHeld, .voidPending, .voidRefused, .voidUnknown, .voidFailed,
            .webhookReceived,
        ]

        /// Where a held capture, refund or void stands.
        public enum Stage: Sendable {
            /// Held and about to be sent.
            case sent
            /// Held by the engine itself (a late charge's reversal), for reconciliation to send.
            case held
            /// The provider has not finished it; it stays held.
            case pending
            /// Refused, but kept held: a late charge's reversal is sent until it lands.
            case refused
            /// Its outcome is unknown; it stays held.
            case unknown
            /// Refused; released.
            case failed
        }

        /// The kind of a capture, refund or void at `stage`. Only these three
        /// operations hold money; any other is a programming error.
        public static func held(_ operation: PaymentOperation, _ stage: Stage) -> Kind {
            switch (operation, stage) {
            case (.capture, .sent): .captureSent
            case (.capture, .held): .captureHeld
            case (.capture, .pending): .capturePending
            case (.capture, .refused): .captureRefused
            case (.capture, .unknown): .captureUnknown
            case (.capture, .failed): .captureFailed
            case (.refund, .sent): .refundSent
            case (.refund, .held): .refundHeld
            case (.refund, .pending): .refundPending
            case (.refund, .refused): .refundRefused
            case (.refund, .unknown): .refundUnknown
            case (.refund, .failed): .refundFailed
            case (.void, .sent): .voidSent
            case (.void, .held): .voidHeld
            case (.void, .pending): .voidPending
            case (.void, .refused): .voidRefused
            case (.void, .unknown): .voidUnknown
            case (.void, .failed): .voidFailed
            default: preconditionFailure("\(operation.rawValue) holds no money: only a capture, refund or void is held")
            }
        }

        /// The kind of a capture, refund or void that landed.
        public static func settled(_ operation: PaymentOperation) -> Kind {
            switch operation {
            case .capture: .paymentCaptured
            case .refund: .paymentRefunded
            case .void: .paymentVoided
            default: preconditionFailure("\(operation.rawValue) holds no money: only a capture, refund or void is settled")
            }
        }
    }
}
