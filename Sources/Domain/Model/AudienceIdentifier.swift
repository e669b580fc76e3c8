/// Whom an audience query is about: an identifier field and its value; the cache keeps one entry
/// per identifier (<doc:Behaviour#O3>, <doc:Behaviour#ODP-audiences-query>).
///
/// The field is the GraphQL argument of `customer(…)`: `vuid` for anonymous visitor ids,
/// `fs_user_id` for every other user id. The cache of qualified segments is keyed by both.
public struct AudienceIdentifier: Hashable, Sendable {
    /// The name of an identifier field, e.g. `fs_user_id`.
    public struct Field: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The field name as it appears in the query.
        public let rawValue: String

        /// A field with this name. Adapters put only known or explicitly configured names into
        /// query text; see the ODP adapter's configuration.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// `vuid`: an anonymous visitor id (`vuid_…`).
        public static let vuid = Field(rawValue: "vuid")
        /// `fs_user_id`: any other user id.
        public static let fsUserId = Field(rawValue: "fs_user_id")

        /// The field name.
        public var description: String { rawValue }
    }

    /// The prefix that marks a visitor id, compared case-insensitively.
    public static let visitorIdPrefix = "vuid_"

    /// The identifier field.
    public var field: Field
    /// The user id. Personal data: log it only at verbose level (<doc:Behaviour#P4>).
    public var value: String

    /// An identifier with an explicit field.
    public init(field: Field, value: String) {
        self.field = field
        self.value = value
    }

    /// The identifier of `userId` by the type rule: `vuid` when it starts with `vuid_` in any
    /// case, otherwise `fs_user_id`.
    public init(userId: String) {
        self.init(field: Self.field(forUserId: userId), value: userId)
    }

    /// `vuid` for ids starting with `vuid_` (any case), else `fs_user_id`.
    public static func field(forUserId userId: String) -> Field {
        userId.prefix(visitorIdPrefix.count).lowercased() == visitorIdPrefix ? .vuid : .fsUserId
    }
}
