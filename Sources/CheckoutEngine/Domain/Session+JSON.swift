import Foundation
import GatewayPayloads
import PaymentFields

extension Session: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(to: &w, instruments: true)
        w.endObject()
    }

    /// The session's members, inside an object the caller opened (the API
    /// adds its own after them); its stored `instruments` only when asked.
    /// Those fixed when the session was made come first, from their bytes
    /// when they were kept (``keepFixedMembersWritten()``): a payment's
    /// commits and answers write only its status, attempts, update time and
    /// version.
    public func writeMembers(to w: inout JSONWriter, instruments withInstruments: Bool) {
        let written = fixed.written
        if let written {
            w.encodedMembers(written.members)
        } else {
            writeFixedMembers(to: &w)
        }
        w.member("status", status.rawValue)
        w.key("attempts")
        w.beginArray()
        for attempt in attempts { attempt.write(to: &w) }
        w.endArray()
        w.member("updatedAt", date: updatedAt)
        w.member("version", Int64(version))
        if withInstruments, let instruments {
            w.key("instruments")
            if let bytes = written?.instruments {
                w.encoded(bytes)
            } else {
                Self.write(instruments, to: &w)
            }
        }
    }

    /// The members set when the session is made.
    private func writeFixedMembers(to w: inout JSONWriter) {
        w.member("id", id)
        w.member("mode", mode.rawValue)
        w.member("amount", amount)
        w.member("country", country)
        w.member("orderId", orderID)
        w.member("capture", capture.rawValue)
        w.member("payer", payer)
        w.member("returnUrl", returnURL)
        w.member("createdAt", date: createdAt)
        w.member("expiresAt", date: expiresAt)
    }

    private static func write(_ instruments: [OfferedInstrument], to w: inout JSONWriter) {
        w.beginArray()
        for instrument in instruments { instrument.write(to: &w) }
        w.endArray()
    }

    /// Writes the members fixed when the session was made (and its
    /// instruments) to bytes, kept with the session and its copies until one
    /// of them is set again: the engine does it once, when it makes a session.
    public mutating func keepFixedMembersWritten() {
        var w = JSONWriter(capacity: 320)
        w.beginObject()
        writeFixedMembers(to: &w)
        var list: [UInt8]?
        if let instruments {
            var writer = JSONWriter(capacity: 64 + 96 * instruments.count)
            Self.write(instruments, to: &writer)
            list = writer.bytes
        }
        fixed.written = FixedMembers.Written(members: Array(w.bytes.dropFirst()), instruments: list)
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var id: String?, amount: Money?, country: String?, orderID: String?, capture: CaptureMode?, payer: Payer?
        var returnURL: String?, status: SessionStatus?, attempts: [Attempt]?, createdAt: Date?, updatedAt: Date?
        var expiresAt: Date?, version: Int64?, instruments: [OfferedInstrument]?
        // A session stored before modes existed is live: never assume test.
        var mode = PaymentMode.live
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "id": id = try p.string()
            case "mode": mode = try p.enumeration(PaymentMode.self)
            case "amount": amount = try Money(parsing: &p)
            case "country": country = try p.optionalString()
            case "orderId": orderID = try p.string()
            case "capture": capture = try p.enumeration(CaptureMode.self)
            case "payer": payer = try p.nested(Payer.self)
            case "returnUrl": returnURL = try p.optionalString()
            case "status": status = try p.enumeration(SessionStatus.self)
            case "attempts":
                var list: [Attempt] = []
                try p.array { p throws(JSONParseError) in list.append(try Attempt(parsing: &p)) }
                attempts = list
            case "createdAt": createdAt = try p.date()
            case "updatedAt": updatedAt = try p.date()
            case "expiresAt": expiresAt = try p.date()
            case "version": version = try p.integer()
            case "instruments":
                if p.takeNull() { break }
                var list: [OfferedInstrument] = []
                try p.array { p throws(JSONParseError) in list.append(try OfferedInstrument(parsing: &p)) }
                instruments = list
            default: try p.skipValue()
            }
        }
        let amountValue = try required(amount, "amount", p)
        guard amountValue.value > 0 else { throw p.error("session amount must be positive (got \(amountValue.value))") }
        do {
            self = try Session(id: try required(id, "id", p), mode: mode, amount: amountValue, country: country, orderID: try required(orderID, "orderId", p),
                               capture: try required(capture, "capture", p), payer: payer, returnURL: returnURL,
                               createdAt: try required(createdAt, "createdAt", p), expiresAt: try required(expiresAt, "expiresAt", p))
        } catch let parse as JSONParseError {
            throw parse
        } catch {
            throw p.error("\(error)")
        }
        restore(status: try required(status, "status", p), attempts: try required(attempts, "attempts", p))
        self.updatedAt = try required(updatedAt, "updatedAt", p)
        self.version = Int(try required(version, "version", p))
        self.instruments = instruments
    }
}
