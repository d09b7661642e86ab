import Foundation
import GatewayPayloads

/// Payer instruments (ABI 1.1): asked of providers once, when a session is
/// created, kept in the session, shown per method, and chosen by id.
///
/// - Who is asked: providers that list `instruments`, enabled, of the
///   session's mode, able to take its amount, currency, country and capture
///   mode, whose circuit is not open (``serves(_:_:at:)``). Concurrently, each
///   within ``CheckoutConfiguration/instrumentsTimeout`` (or its own call
///   timeout, when shorter); one that is slower is cancelled, and one that
///   ignores its cancel is not waited for. A slow, failing or silent provider
///   contributes nothing, and creation never fails for it. Of the payer, only
///   `reference` is sent.
/// - What is kept: display members only. A provider's `reference` is sealed
///   (AES-GCM under a key derived from the fingerprint key) into the
///   instrument's id, bound to the session, the provider, the method and the
///   kind; the store, events and API only ever see the ciphertext.
/// - Choosing: an attempt's `instrumentId` goes to the provider that offered
///   it, never elsewhere (a reference means nothing to another provider),
///   with `instrument.selected` = {kind, reference}.
extension Checkout {
    /// Asks the eligible providers for `session`'s instruments. Returns nil
    /// (and no summary) when no provider is eligible.
    func fetchInstruments(for session: Session) async -> (instruments: [OfferedInstrument]?, summary: String?) {
        let clock = ContinuousClock.now
        let eligible = directory.profiles()
            .filter { $0.supportsInstruments && serves($0, session, at: clock) }
            .sorted { ($0.priority, $0.id) < ($1.priority, $1.id) }
            .compactMap { profile in directory.provider(profile.id).map { (profile, $0) } }
        guard !eligible.isEmpty else { return (nil, nil) }

        enum Outcome: Sendable {
            case answered(provider: String, methods: [String], result: InstrumentsResult?)
            case deadline
        }
        // Only the merchant's id for the payer leaves for every eligible
        // provider: name, e-mail and phone go only to the provider of an attempt.
        let payer = session.payer?.reference.map { Payer(reference: $0) }
        let bound = configuration.instrumentsTimeout
        let (outcomes, feed) = AsyncStream<Outcome>.makeStream()
        // Unstructured, so that the bound holds even for a provider that
        // ignores its cancel: nothing here waits for it to return.
        var calls: [Task<Void, Never>] = []
        for (profile, provider) in eligible {
            let methods = profile.methods(in: session.amount.currency).sorted()
            let request = InstrumentsRequest(
                sessionId: session.id, mode: session.mode, amount: session.amount, country: session.country,
                capture: session.capture, methods: methods, payer: payer)
            let timeout = min(bound, profile.callTimeout)
            calls.append(Task { feed.yield(.answered(provider: profile.id, methods: methods, result: await provider.instruments(request, timeout: timeout))) })
        }
        // A provider's own deadline ends its call first; this backstop ends the wait.
        let backstop = Task {
            try? await Task.sleep(for: bound + .milliseconds(250))
            feed.yield(.deadline)
        }
        var answers: [String: (methods: [String], result: InstrumentsResult?)] = [:]
        for await outcome in outcomes {
            guard case .answered(let provider, let methods, let result) = outcome else { break }
            answers[provider] = (methods, result)
            if answers.count == eligible.count { break }
        }
        backstop.cancel()
        for call in calls { call.cancel() }
        feed.finish()

        var offered: [OfferedInstrument] = []
        var notes: [String] = []
        for (profile, _) in eligible {
            guard let answer = answers[profile.id], let result = answer.result else {
                notes.append("\(profile.id) none")
                continue
            }
            var count = 0
            for method in answer.methods {
                for instrument in result.methods[method] ?? [] {
                    guard let kind = Instrument.Kind(rawValue: instrument.kind) else { continue }
                    let id = kind.isSelectable
                        ? sealer.seal(SealedInstrument(session: session.id, provider: profile.id, method: method, kind: instrument.kind,
                                                       reference: instrument.reference ?? ""))
                        : nil
                    offered.append(OfferedInstrument(id: id, provider: profile.id, method: method, instrument: instrument.withWireDates))
                    count += 1
                }
            }
            notes.append("\(profile.id) \(count)")
        }
        return (offered, "instruments: " + notes.joined(separator: ", "))
    }

    /// `session`'s instruments that may be used now, per method: of methods
    /// still available, from providers that can still take the session, not
    /// expired. Empty once the session is not open.
    func instrumentsView(for session: Session, availableMethods: [String]) -> [String: [OfferedInstrument]] {
        guard session.status == .open, let instruments = session.instruments, !instruments.isEmpty else { return [:] }
        let at = now()
        let available = Set(availableMethods)
        var view: [String: [OfferedInstrument]] = [:]
        for offered in instruments where available.contains(offered.method) && isOfferable(offered, in: session, at: at) {
            view[offered.method, default: []].append(offered)
        }
        return view
    }

    private func isOfferable(_ offered: OfferedInstrument, in session: Session, at: Date) -> Bool {
        if let date = offered.instrument.expiryDate, date <= at { return false }
        guard let profile = profile(offered.provider) else { return false }
        return profile.offers(offered.method, in: session.amount.currency) && serves(profile, session, at: .now)
    }

    /// The provider and the `selected` member an attempt with `request.instrumentId` sends; throws `invalid_request` when
    /// the id is not an instrument of this session that may be used now, or the request contradicts it.
    func selection(_ request: NewAttempt, in session: Session) throws -> (provider: String, selected: SelectedInstrument)? {
        if request.instrument?[SelectedInstrument.member] != nil {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "instrument.selected is reserved for the host; choose an instrument with instrumentId")
        }
        guard let id = request.instrumentId else { return nil }
        let refused = ProblemCatalog.problem(code: .invalidRequest, detail: "instrumentId is not an instrument of this session")
        guard let sealed = sealer.open(id), sealed.session == session.id,
              let offered = session.instruments?.first(where: { $0.id == id }),
              offered.provider == sealed.provider, offered.method == sealed.method
        else { throw refused }
        if let date = offered.instrument.expiryDate, date <= now() {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "instrumentId names an instrument that expired at \(offered.instrument.expiresAt ?? "")")
        }
        guard request.method == sealed.method else {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "instrumentId is a \(sealed.method) instrument, not \(request.method)")
        }
        if let provider = request.provider, provider != sealed.provider {
            throw ProblemCatalog.problem(code: .invalidRequest, detail: "instrumentId was offered by \(sealed.provider), not \(provider)")
        }
        return (sealed.provider, SelectedInstrument(kind: sealed.kind, reference: sealed.reference))
    }
}
