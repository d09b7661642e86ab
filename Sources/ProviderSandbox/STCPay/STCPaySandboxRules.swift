/// What a sandbox payer's phone number decides, by its last four digits,
/// once the right OTP is typed at `DirectPaymentConfirm`:
/// - `…0000`: 2023 insufficient funds (the payment stays pending);
/// - `…0027`: 2027 the payer cancelled in the STC Pay app (status 4);
/// - any other valid number pays (status 2).
///
/// `MobileNo` must be a Saudi mobile number in international form,
/// `9665XXXXXXXX` (12 digits); anything else is 2001 at authorize.
enum STCPaySandboxRules {
    enum Outcome: Equatable {
        case pay
        case insufficientFunds
        case cancel
    }

    static func outcome(forMobile mobile: String) -> Outcome {
        switch mobile.suffix(4) {
        case "0000": .insufficientFunds
        case "0027": .cancel
        default: .pay
        }
    }

    static func isMobileNumber(_ text: String) -> Bool {
        text.count == 12 && text.hasPrefix("9665") && text.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
