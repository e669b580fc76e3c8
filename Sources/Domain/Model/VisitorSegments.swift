/// The reporting segments of one visitor, assigned by the app (<doc:Behaviour#V1>,
/// <doc:Behaviour#V2>): six default dimensions and a list of custom segment ids.
///
/// Default segments merge (keys not given keep their value); custom segment ids append, skipping
/// ids already present.
public struct VisitorSegments: Hashable, Sendable, Codable {
    /// The six default dimensions, by wire key.
    public enum Key: String, Hashable, Sendable, CaseIterable, Codable {
        /// `country`.
        case country
        /// `browser`.
        case browser
        /// `devices`.
        case devices
        /// `source`.
        case source
        /// `campaign`.
        case campaign
        /// `visitorType`.
        case visitorType
    }

    /// The visitor's country, e.g. `US`.
    public var country: String?
    /// The visitor's browser, e.g. `safari`.
    public var browser: String?
    /// The visitor's device class, e.g. `mobile`.
    public var devices: String?
    /// Where the visitor came from, e.g. `organic`.
    public var source: String?
    /// The campaign the visitor came with.
    public var campaign: String?
    /// The kind of visitor, e.g. `returning`.
    public var visitorType: String?
    /// Custom segment ids, in the order they were first added, without duplicates.
    public var customSegments: [String]

    /// Segments with the given values; everything is empty by default.
    public init(
        country: String? = nil, browser: String? = nil, devices: String? = nil, source: String? = nil,
        campaign: String? = nil, visitorType: String? = nil, customSegments: [String] = []
    ) {
        self.country = country
        self.browser = browser
        self.devices = devices
        self.source = source
        self.campaign = campaign
        self.visitorType = visitorType
        self.customSegments = customSegments
    }

    /// No segments.
    public static let empty = VisitorSegments()

    /// The value of one default dimension.
    public subscript(key: Key) -> String? {
        get {
            switch key {
            case .country: country
            case .browser: browser
            case .devices: devices
            case .source: source
            case .campaign: campaign
            case .visitorType: visitorType
            }
        }
        set {
            switch key {
            case .country: country = newValue
            case .browser: browser = newValue
            case .devices: devices = newValue
            case .source: source = newValue
            case .campaign: campaign = newValue
            case .visitorType: visitorType = newValue
            }
        }
    }

    /// The default dimensions that have a value, by wire key.
    public var defaultSegments: [String: String] {
        var values: [String: String] = [:]
        for key in Key.allCases {
            if let value = self[key] { values[key.rawValue] = value }
        }
        return values
    }

    /// Overlays `values` (by wire key) on the default dimensions (<doc:Behaviour#V1>): given keys
    /// are set, others keep their value.
    ///
    /// - Returns: the keys that are not one of the six, sorted; they are ignored.
    @discardableResult
    public mutating func mergeDefaultSegments(_ values: [String: String]) -> [String] {
        var unknown: [String] = []
        for (name, value) in values {
            if let key = Key(rawValue: name) {
                self[key] = value
            } else {
                unknown.append(name)
            }
        }
        return unknown.sorted()
    }

    /// The most custom segment ids a visitor keeps: 10,000 (<doc:Behaviour#V2>). Every visitor's
    /// segments share one file, read back up to 8 MiB; without a bound, one visitor's ids could
    /// grow it past that, and the save would be refused (<doc:Behaviour#P7>).
    package static let maximumCustomSegments = 10_000

    /// Appends the ids of `ids` not present yet, in order, each once, while fewer than
    /// ``maximumCustomSegments`` are kept (<doc:Behaviour#V2>).
    ///
    /// - Returns: how many new ids were refused because the visitor keeps that many already.
    package mutating func appendCustomSegmentsWithinLimit(_ ids: [String]) -> Int {
        let room = max(Self.maximumCustomSegments - customSegments.count, 0)
        var present = Set(customSegments)
        var added: [String] = []
        var refused = 0
        for id in ids where present.insert(id).inserted {
            if added.count < room { added.append(id) } else { refused += 1 }
        }
        customSegments += added
        return refused
    }

    /// Appends the ids of `ids` not present yet, in order, each once (<doc:Behaviour#V2>).
    ///
    /// - Returns: the ids that were added.
    @discardableResult
    public mutating func appendCustomSegments(_ ids: [String]) -> [String] {
        var present = Set(customSegments)
        var added: [String] = []
        for id in ids where present.insert(id).inserted {
            added.append(id)
        }
        customSegments += added
        return added
    }
}
