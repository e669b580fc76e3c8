/// A customer, as the full map of its ids (<doc:Behaviour#M3>).
///
/// The `cookie` id is the anonymous UUID the SDK creates; every other key (`registered`, …) is a
/// *hard id* set by `identify`. Two customers are the same only when their maps are equal.
public struct CustomerIds: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The key of the anonymous id.
    public static let cookieKey = "cookie"

    /// Every id of the customer, `cookie` included.
    public let values: [String: String]

    /// A customer with these ids.
    public init(_ values: [String: String]) {
        self.values = values
    }

    /// A new anonymous customer with only a cookie.
    public init(cookie: String) {
        self.values = [Self.cookieKey: cookie]
    }

    /// The anonymous id, if the customer has one.
    public var cookie: String? { values[Self.cookieKey] }

    /// Every id except the cookie.
    public var hardIds: [String: String] { values.filter { $0.key != Self.cookieKey } }

    /// Whether the customer has at least one id besides the cookie.
    public var hasHardIds: Bool { values.keys.contains { $0 != Self.cookieKey } }

    /// These ids with `hardIds` merged in: given keys are added or overwritten, none removed.
    /// A `cookie` key in `hardIds` is ignored: the anonymous id belongs to the SDK.
    public func merging(hardIds: [String: String]) -> CustomerIds {
        var merged = values
        for (key, value) in hardIds where key != Self.cookieKey {
            merged[key] = value
        }
        return CustomerIds(merged)
    }

    /// The ids sorted by key, e.g. `{cookie: …, registered: …}`. Contains personal data: log it
    /// only at verbose level (<doc:Behaviour#P4>).
    public var description: String {
        "{" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// The id names only, e.g. `[cookie, registered]`: safe to log at any level.
    public var keyDescription: String {
        "[" + values.keys.sorted().joined(separator: ", ") + "]"
    }
}
