/// HTTP header fields in order, looked up by case-insensitive name.
///
/// `headers["content-type"]` finds a field sent as `Content-Type`; setting a name replaces every
/// field of that name. Equality ignores the case of names but not the order of fields.
/// Printing never shows a credential (<doc:Behaviour#P4>): `description`, `debugDescription`,
/// `dump` and `Mirror` hide the values of ``secretNames`` (`Authorization`, `Proxy-Authorization`,
/// `x-api-key`, `Cookie`, `Set-Cookie`), so headers can be logged safely.
public struct SegmentsHTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable
{
    /// The lower-cased names whose values are never printed.
    public static let secretNames: Set<String> = [
        "authorization", "proxy-authorization", "x-api-key", "cookie", "set-cookie",
    ]

    /// Whether the value of a field called `name` (any case) is a secret.
    public static func isSecret(_ name: String) -> Bool {
        secretNames.contains(name.lowercased())
    }

    /// One header field. Printing it hides the value of a secret field (``isSecret(_:)``).
    public struct Field: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The name as written, e.g. `Content-Type`.
        public var name: String
        /// The value.
        public var value: String

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// The value as printed: `<redacted>` for a secret field.
        var printableValue: String {
            SegmentsHTTPHeaders.isSecret(name) ? "<redacted>" : value
        }

        /// `Name: value`, the value hidden for a secret field.
        public var description: String { "\(name): \(printableValue)" }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// `name` and the printable value only.
        public var customMirror: Mirror {
            Mirror(self, children: ["name": name, "value": printableValue], displayStyle: .struct)
        }
    }

    private var fields: [Field]

    /// No fields.
    public init() {
        fields = []
    }

    /// These fields, in order.
    public init(_ fields: [Field]) {
        self.fields = fields
    }

    /// The fields of `dictionary`, ordered by name so that the result is deterministic.
    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { Field(name: $0.key, value: $0.value) }
    }

    /// The fields of the literal, in the order written.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The value of the first field called `name` (any case), or `nil`. Setting replaces every field
    /// of that name with one field (at the position of the first), or removes them for `nil`.
    public subscript(name: String) -> String? {
        get { fields.first { Self.same($0.name, name) }?.value }
        set {
            let position = fields.firstIndex { Self.same($0.name, name) }
            // Every removed field sits at or after `position`, so `position` stays a valid index.
            fields.removeAll { Self.same($0.name, name) }
            guard let newValue else { return }
            fields.insert(Field(name: name, value: newValue), at: position ?? fields.count)
        }
    }

    /// Every value of the fields called `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping fields of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// Equal when both have the same fields in the same order, names compared case-insensitively.
    public static func == (lhs: SegmentsHTTPHeaders, rhs: SegmentsHTTPHeaders) -> Bool {
        lhs.normalized == rhs.normalized
    }

    /// Hashes the fields with lowercased names.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(normalized)
    }

    /// `Name: value` lines joined by `, `, with the values of ``secretNames`` hidden.
    public var description: String {
        "[" + fields.map(\.description).joined(separator: ", ") + "]"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The fields, each printing itself with secrets hidden.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: fields, displayStyle: .collection)
    }

    private var normalized: [Field] {
        fields.map { Field(name: $0.name.lowercased(), value: $0.value) }
    }

    private static func same(_ lhs: String, _ rhs: String) -> Bool {
        lhs.lowercased() == rhs.lowercased()
    }
}
