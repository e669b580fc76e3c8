/// A category of segments, identified by its wire name (<doc:Behaviour#M2>).
///
/// The three known categories have constants; any other name is valid, so categories a backend
/// adds later are kept rather than dropped.
public struct SegmentCategory: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The category's wire name, e.g. `discovery`.
    public let name: String

    /// A category with the given wire name.
    public init(_ name: String) {
        self.name = name
    }

    /// The `discovery` category.
    public static func discovery() -> SegmentCategory { SegmentCategory("discovery") }
    /// The `merchandising` category.
    public static func merchandising() -> SegmentCategory { SegmentCategory("merchandising") }
    /// The `content` category.
    public static func content() -> SegmentCategory { SegmentCategory("content") }

    /// The `merchandising` category, under the misspelled name of an old SDK.
    @available(*, deprecated, renamed: "merchandising()")
    public static func merchandise() -> SegmentCategory { .merchandising() }

    /// Decodes the bare wire name.
    public init(from decoder: any Decoder) throws {
        self.init(try String(from: decoder))
    }

    /// Encodes the bare wire name.
    public func encode(to encoder: any Encoder) throws {
        try name.encode(to: encoder)
    }

    /// The wire name.
    public var description: String { name }
}
