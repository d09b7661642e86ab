import CheckoutEngine
import GatewayPayloads
import Testing

@Suite struct ProblemTests {
    @Test(arguments: ["insufficient_funds", "card_declined", "network_error", "provider_error", "user_cancelled"])
    func theRequiredProblemsHaveEnglishAndArabic(code: String) {
        let problem = ProblemCatalog.problem(code: code, detail: "d")
        #expect(ProblemCatalog.knownCodes.contains(code))
        #expect(problem.type == "https://gateway.dev/problems/" + code.replacingOccurrences(of: "_", with: "-"))
        #expect(!problem.payerMessage.en.isEmpty)
        #expect(problem.payerMessage.ar.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) }, "Arabic script expected")
        #expect((400..<600).contains(problem.status))
    }

    @Test func anAdaptersUnknownCodeKeepsItsCodeAndGetsTheGenericMessage() {
        let adapter = AdapterProblem(code: "velocity_limit", message: "too many attempts", retryable: true, providerCode: "61")
        let problem = ProblemCatalog.problem(from: adapter, providerID: "hyperpay")
        #expect(problem.code == "velocity_limit")
        #expect(problem.retryable)
        #expect(problem.providerCode == "61")
        #expect(problem.detail == "hyperpay: too many attempts")
        #expect(problem.payerMessage == ProblemCatalog.problem(code: "payment_failed", detail: "").payerMessage)
    }

    @Test func unknownOutcomeTellsThePayerNotToPayAgain() {
        let problem = ProblemCatalog.problem(code: "network_error", detail: "timeout")
        #expect(!problem.retryable)
        #expect(problem.payerMessage.en.contains("do not pay again"))
    }
}
