@testable import CheckoutEngine
import Foundation
import GatewayPayloads
import Testing
import TestSupport

/// The document codec reads back what it writes, on random sessions with
/// every optional member, odd strings and millisecond dates; dates are wire
/// dates (RFC 3339, UTC, milliseconds), and a document stored when dates were
/// Unix seconds still reads.
@Suite struct DocumentCodecTests {
    static let strings = ["", "plain", "quote \" and \\ backslash", "line\nbreak\ttab", "عربي ✓", "\u{01}control", "€12,50"]

    static func randomSession(_ g: inout SplitMix64) throws -> Session {
        func text() -> String { strings.randomElement(using: &g)! + String(Int.random(in: 0...999, using: &g)) }
        func date() -> Date { Date(timeIntervalSince1970: Double(Int64.random(in: 1_600_000_000_000...1_900_000_000_000, using: &g)) / 1000) }
        let currency = ["SAR", "KWD", "JPY"].randomElement(using: &g)!
        let amount = Money(value: Int64.random(in: 1...1_000_000, using: &g), currency: currency)
        var session = try Session(
            id: "ses_" + text(), amount: amount, country: Bool.random(using: &g) ? "SA" : nil, orderID: text(),
            capture: Bool.random(using: &g) ? .automatic : .manual,
            payer: Bool.random(using: &g) ? Payer(name: text(), email: nil, phone: "+966500000000") : nil,
            returnURL: Bool.random(using: &g) ? "https://shop.example/return?x=\(text())" : nil,
            createdAt: date(), expiresAt: date())
        session.updatedAt = date()
        session.version = Int.random(in: 0...50, using: &g)
        // Failed attempts, then maybe a live or paid one.
        for index in 0..<Int.random(in: 0...3, using: &g) {
            var attempt = Attempt(id: "att_\(index)", method: "mada", providerID: "mock", routingReason: text(), requested: amount, at: date())
            attempt.problem = ProblemCatalog.problem(code: .cardDeclined, detail: text())
            attempt.providerStatus = Bool.random(using: &g) ? text() : nil
            try session.start(attempt)
            try session.move(attempt: attempt.id, to: Bool.random(using: &g) ? .failed : .cancelled)
        }
        guard Bool.random(using: &g) else { return session }
        var last = Attempt(id: "att_last", method: "stcpay", providerID: "mock", routingReason: text(), requested: amount, at: date())
        last.providerReference = text()
        last.leaseUntil = date()
        last.checks = Int.random(in: 0...9, using: &g)
        try session.start(last)
        switch Int.random(in: 0..<3, using: &g) {
        case 0:
            try session.move(attempt: last.id, to: .pending)
            try session.update(attempt: last.id) { a in
                a.action = PaymentAction(type: .otp, url: nil, method: nil, formFields: ["a": text(), "b": "2"], otpLength: 6,
                                         expiresAt: "2026-11-22T10:00:00Z", sandboxOtp: "123456")
                a.nextCheckAt = date()
            }
        case 1:
            try session.move(attempt: last.id, to: .authorized, approved: Money(value: max(1, amount.value / 2), currency: currency))
            try session.hold(.capture, 1, key: "k:" + text(), of: last.id)
        default:
            try session.move(attempt: last.id, to: .succeeded)
            if amount.value > 2 { try session.refund(Money(value: 1, currency: currency), of: last.id) }
        }
        return session
    }

    @Test(arguments: 0..<100)
    func whatIsWrittenReadsBack(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let session = try Self.randomSession(&g)
        #expect(try Session(jsonData: Data(session.jsonBytes())) == session)

        let snapshot = SessionSnapshot(session: session, availableMethods: ["mada", "visa"])
        #expect(try DocumentCoding.decode(SessionSnapshot.self, from: DocumentCoding.encode(snapshot)) == snapshot)
        if let payment = session.payment, let balance = payment.balance {
            let change = PaymentChange(paymentId: payment.id, operation: .refund, amount: Money(value: 1, currency: session.amount.currency),
                                       providerReference: "r", balance: balance)
            #expect(try PaymentChange(jsonData: Data(change.jsonBytes())) == change)
        }
    }

    /// Every date of a document is a wire date string; one stored when dates
    /// were Unix seconds (a float) reads as the same instant.
    @Test(arguments: 0..<20)
    func datesAreWireDatesAndOldSecondsStillRead(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let session = try Self.randomSession(&g)
        let text = String(decoding: session.jsonBytes(), as: UTF8.self)
        let pattern = try Regex(#""(createdAt|updatedAt|expiresAt|leaseUntil|nextCheckAt|since)":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)""#)
        let dates = text.matches(of: pattern)
        #expect(dates.count >= 3, "\(text)")
        #expect(!text.contains(#""createdAt":1"#))
        var old = text
        for match in dates.reversed() {
            let wire = String(text[match.range].split(separator: ":", maxSplits: 1)[1].dropFirst().dropLast())
            let seconds = try #require(WireDate.parse(wire)).timeIntervalSince1970
            old.replaceSubrange(match.range, with: "\"\(match.output[1].substring!)\":\(seconds)")
        }
        #expect(try Session(jsonData: Data(old.utf8)) == session)
    }

    @Test func aDamagedDocumentIsAnErrorNotAGuess() throws {
        let bytes = try Session(id: "s", amount: Money(value: 1234, currency: "KWD"), country: "KW", orderID: "o", capture: .automatic).jsonBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        let withoutStatus = text.replacingOccurrences(of: "\"status\":\"open\"", with: "\"status\":\"opened\"")
        #expect(throws: JSONParseError.self) { try Session(jsonData: Data(withoutStatus.utf8)) }
        #expect(throws: JSONParseError.self) { try Session(jsonData: Data(bytes.prefix(bytes.count / 2))) }
        #expect(throws: JSONParseError.self) { try Session(jsonData: Data("{\"id\":\"s\"}".utf8)) }
    }
}
