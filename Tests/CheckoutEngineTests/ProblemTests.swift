import Foundation
@testable import CheckoutEngine
import GatewayPayloads
import TestSupport
import Testing

@Suite struct ProblemTests {
    @Test(arguments: ["insufficient_funds", "card_declined", "network_error", "provider_error", "user_cancelled",
                      "bnpl_declined", "expired", "otp_invalid", "authentication_failed"])
    func theRequiredProblemsHaveEnglishAndArabic(code: String) {
        let problem = ProblemCatalog.problem(code: ProblemCode(rawValue: code), detail: "d")
        #expect(ProblemCatalog.knownCodes.contains(code))
        #expect(problem.type == "https://gateway.dev/problems/" + code.replacingOccurrences(of: "_", with: "-"))
        #expect(!problem.payerMessage.en.isEmpty)
        #expect(problem.payerMessage.ar.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) }, "Arabic script expected")
        #expect((400..<600).contains(problem.status))
    }

    /// Every standard code of docs/payloads.md §6 (the codes the shipped
    /// adapters use) has its own title and payer messages.
    @Test func everyStandardCodeOfThePayloadsDocumentHasItsOwnEntry() throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/payloads.md")
        let text = try String(contentsOf: document, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## 6. Standard problem codes").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let codes = section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), !line.hasPrefix("| `code`") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        }
        #expect(codes.count >= 15, "\(codes)")
        for code in codes {
            #expect(ProblemCatalog.knownCodes.contains(code), "\(code) is a standard code without a catalogue entry")
        }
    }

    @Test func anAdaptersUnknownCodeKeepsItsCodeAndGetsTheGenericMessage() {
        let adapter = AdapterProblem(code: "velocity_limit", message: "too many attempts", retryable: true, providerCode: "61")
        let problem = ProblemCatalog.problem(from: adapter, providerID: "hyperpay")
        #expect(problem.code == "velocity_limit")
        #expect(problem.retryable)
        #expect(problem.providerCode == "61")
        #expect(problem.detail.hasPrefix("hyperpay: too many attempts (velocity_limit is hyperpay's own code"), "\(problem.detail)")
        #expect(ProblemCatalog.problem(from: AdapterProblem(code: .cardDeclined, message: "05", retryable: false), providerID: "hyperpay").detail
                == "hyperpay: 05")
        #expect(problem.payerMessage == ProblemCatalog.problem(code: .paymentFailed, detail: "").payerMessage)
    }

    /// One list: every code the gateway names has its own entry, and no
    /// entry exists for a code that has no static member.
    @Test func everyNamedCodeHasItsOwnEntryAndNoEntryIsUnnamed() {
        #expect(Set(ProblemCatalog.knownCodes) == Set(ProblemCode.catalogued.map(\.rawValue)))
        for code in ProblemCode.catalogued {
            #expect(code.isCatalogued)
            #expect(ProblemCatalog.problem(code: code, detail: "").title != ProblemCatalog.adapterOwnCode.title || code == .paymentFailed, "\(code)")
        }
        #expect(!ProblemCode(rawValue: "velocity_limit").isCatalogued)
    }

    @Test func unknownOutcomeTellsThePayerNotToPayAgain() {
        let problem = ProblemCatalog.problem(code: .networkError, detail: "timeout")
        #expect(!problem.retryable)
        #expect(problem.payerMessage.en.contains("do not pay again"))
    }
}
