import SegmentsDomain

/// The visitor segments file, format version 1:
/// `{"version":1,"visitors":{"<visitor id>":{"defaults":{"country":"US",…},"customSegments":["vip"]}}}`.
///
/// A record type of its own, not the Domain's `Codable`, so changing a Domain type can never
/// silently change what is on disk. Default segments are stored by wire key; a key this SDK does
/// not know (written by a newer one) is ignored when read.
struct VisitorSegmentsRecord: VersionedRecord, Hashable {
    static let currentVersion = 1

    struct Visitor: Codable, Hashable {
        var defaults: [String: String]
        var customSegments: [String]
    }

    /// The format version.
    var version: Int
    /// Every visitor's segments, by visitor id.
    var visitors: [String: Visitor]

    /// The record of `visitors`.
    init(_ visitors: [String: VisitorSegments]) {
        self.version = Self.currentVersion
        self.visitors = visitors.mapValues { Visitor(defaults: $0.defaultSegments, customSegments: $0.customSegments) }
    }

    /// The stored visitors.
    var segments: [String: VisitorSegments] {
        visitors.mapValues { visitor in
            var segments = VisitorSegments()
            segments.mergeDefaultSegments(visitor.defaults)
            segments.appendCustomSegments(visitor.customSegments)
            return segments
        }
    }
}
