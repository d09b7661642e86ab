import GatewayPayloads
import PaymentFields

extension Checkout {
    /// What the first digits of a card tell an open session's checkout: the
    /// brand and co-brands (``IINRanges``), each `allowed` when it is one of
    /// the session's available methods (an enabled provider of the session's
    /// mode serves that brand for its amount, currency and country). Reads
    /// only the first six digits; stores and logs nothing.
    public func iin(session id: String, prefix: String, mode: PaymentMode? = nil) async throws(Problem) -> IINDetails {
        try await guarded {
            let session = try await self.load(id, mode: mode)
            guard session.status == .open else {
                throw ProblemCatalog.problem(code: .invalidState, detail: "session \(id) is \(session.status.rawValue); only an open session looks up cards")
            }
            let ranges: IINRanges
            switch configuration.cardRanges {
            case .success(let loaded): ranges = loaded
            case .failure(let broken): throw ProblemCatalog.problem(code: .internalError, detail: "the card ranges could not be read: \(broken)")
            }
            let available = Set(self.availableMethods(for: session))
            do throws(IINPrefixError) {
                return try ranges.details(of: prefix, allowed: { available.contains($0) })
            } catch {
                throw ProblemCatalog.problem(code: .invalidRequest, detail: error.description)
            }
        }
    }
}
