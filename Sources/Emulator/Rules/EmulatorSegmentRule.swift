import Foundation

/// A rule that puts a customer into one segment from the events the emulator has received.
///
/// The customer is in segment `segmentId` (of segmentation `segmentationId`, listed under
/// `category`) when, among the events tracked with the customer's cookie or with any external id
/// linked to that cookie, there are at least `minimumCount` events of type `eventType`, and — when
/// `property` is set — at least one of them has that property equal (as JSON) to the given value.
///
/// JSON form, as read by ``EmulatorRuleSet`` (`min_count` defaults to 1; `property` and
/// `attributes` are optional):
///
/// ```json
/// {
///   "category": "discovery",
///   "segment_id": "66140257f4cb337324209871",
///   "segmentation_id": "66140215fb50effc8a7218b4",
///   "event_type": "purchase",
///   "min_count": 2,
///   "property": { "name": "category", "equals": "shoes" },
///   "attributes": { "name": "Shoe buyers" }
/// }
/// ```
public struct EmulatorSegmentRule: Hashable, Sendable, Codable {
    /// A property test: the event property `name` equals `equals` (JSON equality, so `1 == 1.0`).
    public struct PropertyMatch: Hashable, Sendable, Codable {
        /// The property name.
        public var name: String
        /// The value it must equal.
        public var equals: EmulatorJSON

        /// Creates a property test.
        public init(name: String, equals: EmulatorJSON) {
            self.name = name
            self.equals = equals
        }
    }

    /// The category the segment is listed under, e.g. `discovery`.
    public var category: String
    /// The segment's `id`.
    public var segmentId: String
    /// The segment's `segmentation_id`.
    public var segmentationId: String
    /// Extra string fields of the segment object.
    public var attributes: [String: String]
    /// The event type counted.
    public var eventType: String
    /// How many events of `eventType` are needed (at least 1).
    public var minimumCount: Int
    /// An optional property one of those events must carry.
    public var property: PropertyMatch?

    /// Creates a rule.
    public init(category: String, segmentId: String, segmentationId: String, attributes: [String: String] = [:],
                eventType: String, minimumCount: Int = 1, property: PropertyMatch? = nil) {
        self.category = category
        self.segmentId = segmentId
        self.segmentationId = segmentationId
        self.attributes = attributes
        self.eventType = eventType
        self.minimumCount = max(1, minimumCount)
        self.property = property
    }

    private enum CodingKeys: String, CodingKey {
        case category, attributes, property
        case segmentId = "segment_id"
        case segmentationId = "segmentation_id"
        case eventType = "event_type"
        case minimumCount = "min_count"
    }

    /// Decodes the JSON form documented on the type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            category: try container.decode(String.self, forKey: .category),
            segmentId: try container.decode(String.self, forKey: .segmentId),
            segmentationId: try container.decode(String.self, forKey: .segmentationId),
            attributes: try container.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:],
            eventType: try container.decode(String.self, forKey: .eventType),
            minimumCount: try container.decodeIfPresent(Int.self, forKey: .minimumCount) ?? 1,
            property: try container.decodeIfPresent(PropertyMatch.self, forKey: .property)
        )
    }

    /// Encodes the JSON form documented on the type.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(category, forKey: .category)
        try container.encode(segmentId, forKey: .segmentId)
        try container.encode(segmentationId, forKey: .segmentationId)
        if !attributes.isEmpty { try container.encode(attributes, forKey: .attributes) }
        try container.encode(eventType, forKey: .eventType)
        try container.encode(minimumCount, forKey: .minimumCount)
        try container.encodeIfPresent(property, forKey: .property)
    }

    /// The segment this rule grants.
    public var segment: EmulatorSegment {
        EmulatorSegment(id: segmentId, segmentationId: segmentationId, attributes: attributes)
    }

    /// Whether a customer with these events is in the segment.
    public func matches<Events: Sequence>(_ events: Events) -> Bool where Events.Element == EmulatorEvent {
        EmulatorEventCondition.holds(for: events, eventType: eventType, minimumCount: minimumCount, property: property)
    }
}
