/// An amount of money: an integer count of the currency's minor units
/// (halalas, fils, öre, cents) and an ISO 4217 code. Never a floating point number.
///
/// ```json
/// {"value": 1234, "currency": "KWD"}   // 1.234 KWD
/// ```
public struct Money: Sendable, Hashable {
    /// Minor units.
    public var value: Int64
    /// ISO 4217 alphabetic code, upper case.
    public var currency: String

    public init(value: Int64, currency: String) {
        self.value = value
        self.currency = currency
    }
}
