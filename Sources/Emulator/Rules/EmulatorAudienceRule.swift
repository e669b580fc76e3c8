import Foundation

/// A rule that qualifies an ODP user for one audience from the events the emulator has received.
///
/// The user qualifies for `audience` when, among the events that count for the user (see
/// ``SegmentsEmulator/setAudienceRules(_:)``), there are at least `minimumCount` events of type
/// `eventType`, and — when `property` is set — at least one of them has that property equal (as
/// JSON) to the given value.
///
/// JSON form (`min_count` defaults to 1, `property` is optional):
///
/// ```json
/// { "audience": "buyers", "event_type": "purchase", "min_count": 2,
///   "property": { "name": "category", "equals": "shoes" } }
/// ```
public struct EmulatorAudienceRule: Hashable, Sendable, Codable {
    /// The audience (segment) name granted.
    public var audience: String
    /// The event type counted.
    public var eventType: String
    /// How many events of `eventType` are needed (at least 1).
    public var minimumCount: Int
    /// An optional property one of those events must carry.
    public var property: EmulatorSegmentRule.PropertyMatch?

    /// Creates a rule.
    public init(audience: String, eventType: String, minimumCount: Int = 1,
                property: EmulatorSegmentRule.PropertyMatch? = nil) {
        self.audience = audience
        self.eventType = eventType
        self.minimumCount = max(1, minimumCount)
        self.property = property
    }

    private enum CodingKeys: String, CodingKey {
        case audience, property
        case eventType = "event_type"
        case minimumCount = "min_count"
    }

    /// Decodes the JSON form documented on the type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            audience: try container.decode(String.self, forKey: .audience),
            eventType: try container.decode(String.self, forKey: .eventType),
            minimumCount: try container.decodeIfPresent(Int.self, forKey: .minimumCount) ?? 1,
            property: try container.decodeIfPresent(EmulatorSegmentRule.PropertyMatch.self, forKey: .property))
    }

    /// Encodes the JSON form documented on the type.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(audience, forKey: .audience)
        try container.encode(eventType, forKey: .eventType)
        try container.encode(minimumCount, forKey: .minimumCount)
        try container.encodeIfPresent(property, forKey: .property)
    }

    /// Whether a user with these events qualifies.
    public func matches<Events: Sequence>(_ events: Events) -> Bool where Events.Element == EmulatorEvent {
        EmulatorEventCondition.holds(for: events, eventType: eventType, minimumCount: minimumCount, property: property)
    }
}
