import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ProviderSandbox

/// The STC Pay simulator alone on a loopback port, with a client that speaks
/// its wire format: `POST <Op>` with `X-ClientCode` and a
/// `{"<Op>V4RequestMessage": …}` body.
final class STCPaySimulatorFixture: Sendable {
    let sandbox: ProviderSandbox
    /// `http://127.0.0.1:PORT/stcpay/B2B.DirectPayment.WebApi/DirectPayment/V4`.
    let base: String
    private let server: Task<Void, any Error>
    private let client: HTTPClient

    struct Answer {
        var status: Int
        var text: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        /// The inner `<Op>V4ResponseMessage`.
        func message(_ operation: String) -> [String: Any] { json[operation + "V4ResponseMessage"] as? [String: Any] ?? [:] }
        var code: Int? { json["Code"] as? Int }
    }

    private init(sandbox: ProviderSandbox, base: String, server: Task<Void, any Error>) {
        self.sandbox = sandbox
        self.base = base
        self.server = server
        client = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    static func start() async throws -> STCPaySimulatorFixture {
        var logger = Logger(label: "stcpay-simulator-tests")
        logger.logLevel = .critical
        let sandbox = ProviderSandbox(simulators: [STCPaySimulator()], logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = sandbox.application(port: 0) { continuation.yield($0) }
        let server = Task { try await application.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw SandboxGatewayError(message: "the simulator did not start") }
        return STCPaySimulatorFixture(sandbox: sandbox, base: "http://127.0.0.1:\(port)/stcpay/B2B.DirectPayment.WebApi/DirectPayment/V4", server: server)
    }

    var stcpay: STCPaySimulator { sandbox.simulators[0] as! STCPaySimulator }

    func stop() async {
        server.cancel()
        _ = try? await server.value
        try? await client.shutdown()
    }

    /// `POST <op>` with `raw` as the body (JSON text, so amounts stay exact).
    func post(_ operation: String, raw: String, clientCode: String? = STCPaySimulator.merchantId) async throws -> Answer {
        var request = HTTPClientRequest(url: base + "/" + operation)
        request.method = .POST
        if let clientCode { request.headers.add(name: "X-ClientCode", value: clientCode) }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: raw))
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), text: String(buffer: body))
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
