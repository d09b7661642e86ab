import Foundation
import Testing
@testable import ProviderSandbox

@Suite("Sandbox faults")
struct FaultPlanTests {
    @Test func aCountedRuleIsUsedUpAndMatchesOnlyItsProviderPathAndMethod() {
        let plan = FaultPlan()
        plan.add(.init(provider: "hyperpay", path: "/v1/checkouts", method: "POST", fault: .drop, count: 2))
        #expect(plan.take(provider: "stcpay", path: "/v1/checkouts", method: "POST") == nil)
        #expect(plan.take(provider: "hyperpay", path: "/v1/payments/1", method: "POST") == nil)
        #expect(plan.take(provider: "hyperpay", path: "/v1/checkouts", method: "GET") == nil)
        #expect(plan.take(provider: "hyperpay", path: "/v1/checkouts/abc/payment", method: "POST") == .drop)
        #expect(plan.take(provider: "hyperpay", path: "/v1/checkouts", method: "post") == .drop)
        #expect(plan.take(provider: "hyperpay", path: "/v1/checkouts", method: "POST") == nil)
    }

    @Test func aFaultRuleOverHTTPSaysWhatIsWrong() throws {
        let known: Set<String> = ["hyperpay"]
        func message(_ json: String) -> String? {
            do { _ = try SandboxControl.rule(from: Data(json.utf8), known: known); return nil }
            catch let error as SandboxControl.FaultRuleError { return error.message }
            catch { return "\(error)" }
        }
        #expect(message(#"{"fault":"latency"}"#)?.contains("milliseconds") == true)
        #expect(message(#"{"fault":"status","status":200}"#)?.contains("400 to 599") == true)
        #expect(message(#"{"fault":"explode"}"#)?.contains("latency, status or drop") == true)
        #expect(message(#"{"provider":"paypal","fault":"drop"}"#)?.contains("not simulated") == true)
        #expect(message("[1]")?.contains("JSON object") == true)
        let rule = try SandboxControl.rule(from: Data(#"{"provider":"hyperpay","fault":"latency","milliseconds":300,"count":3}"#.utf8), known: known)
        #expect(rule.fault == .latency(milliseconds: 300))
        #expect(rule.count == 3)
    }
}
