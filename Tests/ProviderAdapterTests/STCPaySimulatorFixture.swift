import AsyncHTTPClient
import Foundation
import ProviderSandbox

/// The STC Pay simulator alone on a loopback port, with a client that speaks
/// its wire format: `POST <Op>` with `X-ClientCode` and a
/// `{"<Op>V4RequestMessage": …}` body.
final class STCPaySimulatorFixture: Sendable {
    private let server: SimulatorServer
    /// `http://127.0.0.1:PORT/stcpay/B2B.DirectPayment.WebApi/DirectPayment/V4`.
    let base: String

    struct Answer {
        var status: Int
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        /// The inner `<Op>V4ResponseMessage`.
        func message(_ operation: String) -> [String: Any] { json[operation + "V4ResponseMessage"] as? [String: Any] ?? [:] }
        var code: Int? { json["Code"] as? Int }
    }

    private init(server: SimulatorServer) {
        self.server = server
        base = server.root + "/stcpay/B2B.DirectPayment.WebApi/DirectPayment/V4"
    }

    static func start() async throws -> STCPaySimulatorFixture {
        STCPaySimulatorFixture(server: try await SimulatorServer.start([STCPaySimulator()], label: "stcpay-simulator-tests", client: .init()))
    }

    var sandbox: ProviderSandbox { server.sandbox }
    var stcpay: STCPaySimulator { sandbox.simulators[0] as! STCPaySimulator }

    func stop() async { await server.stop() }

    /// `POST <op>` with `raw` as the body (JSON text, so amounts stay exact).
    func post(_ operation: String, raw: String, clientCode: String? = STCPaySimulator.merchantId) async throws -> Answer {
        let reply = try await server.send("POST", base + "/" + operation, headers: clientCode.map { [("X-ClientCode", $0)] } ?? [],
                                          body: (contentType: "application/json", text: raw))
        return Answer(status: reply.status, text: reply.text)
    }

    /// `op` with `{"<op>V4RequestMessage": <message>}`.
    func call(_ operation: String, _ message: String, clientCode: String? = STCPaySimulator.merchantId) async throws -> Answer {
        try await post(operation, raw: "{\"\(operation)V4RequestMessage\": \(message)}", clientCode: clientCode)
    }

    /// An authorization for `mobile` under `refNum`: its references and OTP.
    func authorize(refNum: String, mobile: String = "966551234567", amount: String = "150.50") async throws -> (otpReference: String, pmtReference: String, otp: String) {
        let answer = try await call("DirectPaymentAuthorize", """
            {"MobileNo": "\(mobile)", "RefNum": "\(refNum)", "BillNumber": "bill-\(refNum)", "Amount": \(amount),
             "BranchID": "1", "TellerID": "1", "DeviceID": "1", "MerchantNote": "test"}
            """)
        let message = answer.message("DirectPaymentAuthorize")
        guard answer.status == 200, let otpReference = message["OtpReference"] as? String,
              let pmtReference = message["STCPayPmtReference"] as? String, let otp = message["SandboxOtpValue"] as? String else {
            throw SandboxGatewayError(message: "authorize failed: \(answer.status) \(answer.text)")
        }
        return (otpReference, pmtReference, otp)
    }

    func confirm(_ started: (otpReference: String, pmtReference: String, otp: String), otp: String? = nil) async throws -> Answer {
        try await call("DirectPaymentConfirm", """
            {"OtpValue": "\(otp ?? started.otp)", "OtpReference": "\(started.otpReference)", "STCPayPmtReference": "\(started.pmtReference)"}
            """)
    }

    func inquiry(_ refNum: String) async throws -> [[String: Any]] {
        let answer = try await call("PaymentInquiry", "{\"RefNum\": \"\(refNum)\"}")
        return answer.message("PaymentInquiry")["TransactionList"] as? [[String: Any]] ?? []
    }
}
