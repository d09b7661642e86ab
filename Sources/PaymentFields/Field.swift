/// One field of a payment method's form (docs/fields.md): what the payer
/// types, how a client shows it, and the rules its value must keep. Declared
/// per method in a manifest's `fields`.
public struct Field: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case string, numericstring, expirydate, boolean, integer
    }

    /// Where the value travels.
    public enum Location: String, Sendable, CaseIterable {
        /// A member of the attempt's `instrument` (a dotted path for nested objects).
        case instrument
        /// Typed on the payer's device and sealed there (a card number for
        /// client-side encryption): validated by `/validate`, and in an
        /// attempt only when it carries the member in the clear anyway.
        case client
    }

    public struct DisplayHints: Sendable, Hashable {
        /// A message key the client translates (`field.phone`).
        public var label: String?
        public var placeholder: String?
        /// `{{9999}} {{9999}}`: see ``Mask``.
        public var mask: String?
        /// Shown as dots while typed (a CVV).
        public var obfuscate: Bool
        /// `phone`, `email`, `numeric`, `text`, `date`.
        public var preferredInputType: String?
        public var tooltip: String?

        public init(label: String? = nil, placeholder: String? = nil, mask: String? = nil, obfuscate: Bool = false,
                    preferredInputType: String? = nil, tooltip: String? = nil) {
            self.label = label
            self.placeholder = placeholder
            self.mask = mask
            self.obfuscate = obfuscate
            self.preferredInputType = preferredInputType
            self.tooltip = tooltip
        }
    }

    public var id: String
    public var kind: Kind
    public var location: Location
    public var required: Bool
    public var displayHints: DisplayHints
    /// In the order they are checked.
    public var validators: [Validator]

    public init(id: String, kind: Kind, location: Location = .instrument, required: Bool = true,
                displayHints: DisplayHints = DisplayHints(), validators: [Validator] = []) {
        self.id = id
        self.kind = kind
        self.location = location
        self.required = required
        self.displayHints = displayHints
        self.validators = validators
    }
}
