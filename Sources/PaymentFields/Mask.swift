/// A display mask, `{{9999}} {{9999}}`: characters inside `{{…}}` are slots
/// the payer's characters fill (`9` a digit, `a` a letter, `*` anything),
/// everything outside is shown as it is. The syntax is Worldline's
/// (`displayHints.mask`); the rules, ours:
///
/// - **Masking** walks the slots and the input together: a slot takes the
///   next input character that fits it (those that do not fit are dropped);
///   at a literal, an input character equal to it is consumed, else the
///   literal is added; it stops when the input ends (no literal is added
///   after the last character) and drops what overflows the last slot.
/// - **Unmasking** is what the slots took: `12/25` under `{{99}}/{{99}}` is
///   `1225`. Validators see unmasked values.
public struct Mask: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal(Character)
        case slot(Character)

        func fits(_ character: Character) -> Bool {
            guard case .slot(let kind) = self else { return false }
            switch kind {
            case "9": return character.isASCII && character.isNumber
            case "a": return character.isLetter
            default: return true
            }
        }
    }

    public let pattern: String
    let tokens: [Token]

    /// The mask `pattern`, or nil when it is malformed (an unclosed or empty
    /// `{{}}`, or a slot character other than `9`, `a` and `*`).
    public init?(_ pattern: String) {
        var tokens: [Token] = []
        var rest = Substring(pattern)
        while let character = rest.first {
            if rest.hasPrefix("{{") {
                guard let close = rest.range(of: "}}") else { return nil }
                let slots = rest[rest.index(rest.startIndex, offsetBy: 2)..<close.lowerBound]
                guard !slots.isEmpty, slots.allSatisfy({ "9a*".contains($0) }) else { return nil }
                tokens += slots.map { Token.slot($0) }
                rest = rest[close.upperBound...]
            } else {
                guard character != "{" && character != "}" else { return nil }
                tokens.append(.literal(character))
                rest = rest.dropFirst()
            }
        }
        guard tokens.contains(where: { if case .slot = $0 { true } else { false } }) else { return nil }
        self.pattern = pattern
        self.tokens = tokens
    }

    /// `input` as the payer sees it: `4111111111111111` → `4111 1111 1111 1111`.
    public func masked(_ input: String) -> String { walk(input).shown }

    /// What the slots took from `input`: `4111 1111 1111 1111` → `4111111111111111`.
    public func unmasked(_ input: String) -> String { walk(input).taken }

    /// Whether the mask takes `input` whole: no letter or digit was dropped
    /// for not fitting its slot, and nothing was left after the last slot.
    /// Separators (spaces, `-`, `/`, `.`) may be dropped. Validation refuses
    /// input that is not taken whole rather than check a value that differs
    /// from what was typed (a 20th digit, a `2030` year under `{{99}}/{{99}}`).
    public func takesWhole(_ input: String) -> Bool { walk(input).whole }

    private func walk(_ input: String) -> (shown: String, taken: String, whole: Bool) {
        var shown = "", taken = ""
        var whole = true
        // How much of `shown` stays: up to the last character the input gave
        // (a literal added without one, after it, is not shown).
        var kept = 0
        var next = input.startIndex
        for token in tokens {
            guard next < input.endIndex else { break }
            switch token {
            case .literal(let literal):
                shown.append(literal)
                if input[next] == literal {
                    next = input.index(after: next)
                    kept = shown.count
                }
            case .slot:
                while next < input.endIndex, !token.fits(input[next]) {
                    if input[next].isLetter || input[next].isNumber { whole = false }
                    next = input.index(after: next)
                }
                guard next < input.endIndex else { break }
                shown.append(input[next])
                taken.append(input[next])
                kept = shown.count
                next = input.index(after: next)
            }
        }
        if input[next...].contains(where: { $0.isLetter || $0.isNumber }) { whole = false }
        return (String(shown.prefix(kept)), taken, whole)
    }
}
