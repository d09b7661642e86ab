@testable import CheckoutEngine
import Foundation
import GatewayPayloads
import Testing

/// A session's members fixed when it is made are written to JSON once and
/// spliced into every later document and answer. The bytes must always be
/// what writing the members afresh gives, whatever is set after.
@Suite struct SessionFixedMembersTests {
    static let at = Date(timeIntervalSince1970: 1_764_400_000.123)

    static func made() throws -> Session {
        var session = try Session(id: "ses_1", mode: .live, amount: Money(value: 1234, currency: "KWD"), country: "KW", orderID: "order \"1\"",
                                  capture: .manual, payer: Payer(name: "مدى", email: "p@example.com"), returnURL: "https://shop.example/back",
                                  createdAt: at, expiresAt: at.addingTimeInterval(1800))
        session.instruments = [OfferedInstrument(id: "ins_1", provider: "psp", method: "visa",
                                                 instrument: Instrument(kind: "saved_card", brand: "visa", last4: "1111"))]
        return session
    }

    /// The document as written with nothing kept.
    static func fresh(_ session: Session) -> [UInt8] {
        var copy = session
        copy.fixed = Session.FixedMembers()
        return copy.jsonBytes()
    }

    @Test func keptBytesAreWhatWritingAfreshGives() throws {
        var session = try Self.made()
        let before = session.jsonBytes()
        session.keepFixedMembersWritten()
        #expect(session.fixed.written != nil && session.fixed.written?.instruments != nil)
        #expect(session.jsonBytes() == before)
        // A payment's changes leave the kept bytes in place, and the document right.
        try session.start(Attempt(id: "att_1", method: "visa", providerID: "psp", routingReason: "test", requested: session.amount, at: Self.at))
        session.updatedAt = Self.at.addingTimeInterval(1)
        session.version = 2
        #expect(session.fixed.written != nil)
        #expect(session.jsonBytes() == Self.fresh(session))
        let read = try Session(jsonData: Data(session.jsonBytes()))
        #expect(read == session)
        var api = JSONWriter()
        api.beginObject()
        session.writeMembers(to: &api, instruments: false)
        api.endObject()
        var freshAPI = JSONWriter()
        freshAPI.beginObject()
        var copy = session
        copy.fixed = Session.FixedMembers()
        copy.writeMembers(to: &freshAPI, instruments: false)
        freshAPI.endObject()
        #expect(api.bytes == freshAPI.bytes)
    }

    /// Setting any fixed member drops the kept bytes: a document never shows an old value.
    @Test(arguments: 0..<11)
    func settingAFixedMemberDropsTheKeptBytes(member: Int) throws {
        var session = try Self.made()
        session.keepFixedMembersWritten()
        switch member {
        case 0: session.id = "ses_2"
        case 1: session.mode = .test
        case 2: session.amount = Money(value: 99, currency: "SAR")
        case 3: session.country = nil
        case 4: session.orderID = "another"
        case 5: session.capture = .automatic
        case 6: session.payer = nil
        case 7: session.returnURL = "https://elsewhere.example"
        case 8: session.createdAt = Self.at.addingTimeInterval(-5)
        case 9: session.expiresAt = Self.at.addingTimeInterval(60)
        default: session.instruments = nil
        }
        #expect(session.jsonBytes() == Self.fresh(session))
        #expect(try Session(jsonData: Data(session.jsonBytes())) == session)
    }
}
