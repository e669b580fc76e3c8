import Foundation

/// One segment the current customer belongs to (<doc:Behaviour#M1>).
///
/// On the wire a segment is a JSON object of strings carrying at least `id` and `segmentation_id`;
/// every other string field is kept in ``attributes`` so nothing the backend sends is lost.
/// Equality and hashing cover all fields.
public struct Segment: Hashable, Sendable {
    /// The segment's id (wire key `id`).
    public var id: String
    /// The id of the segmentation the segment belongs to (wire key `segmentation_id`).
    public var segmentationId: String
    /// Every other string field of the wire object, by its wire key.
    public var attributes: [String: String]

    /// Creates a segment.
    public init(id: String, segmentationId: String, attributes: [String: String] = [:]) {
        self.id = id
        self.segmentationId = segmentationId
        self.attributes = attributes
    }
}

extension Segment: Codable {
    /// The wire keys of the two required fields.
    package static let idKey = "id"
    package static let segmentationIdKey = "segmentation_id"

    /// Builds a segment from a wire object, or returns `nil` when `id` or `segmentation_id` is missing.
    package init?(wireFields fields: [String: String]) {
        guard let id = fields[Self.idKey], let segmentationId = fields[Self.segmentationIdKey] else { return nil }
        var attributes = fields
        attributes[Self.idKey] = nil
        attributes[Self.segmentationIdKey] = nil
        self.init(id: id, segmentationId: segmentationId, attributes: attributes)
    }

    /// The wire object: the attributes plus `id` and `segmentation_id`.
    package var wireFields: [String: String] {
        var fields = attributes
        fields[Self.idKey] = id
        fields[Self.segmentationIdKey] = segmentationId
        return fields
    }

    /// Decodes the wire object; every value must be a string.
    public init(from decoder: any Decoder) throws {
        let fields = try [String: String](from: decoder)
        guard let segment = Segment(wireFields: fields) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "segment without id or segmentation_id"))
        }
        self = segment
    }

    /// Encodes the wire object.
    public func encode(to encoder: any Encoder) throws {
        try wireFields.encode(to: encoder)
    }
}

/// The segments of every category, as one backend answer carries them.
public typealias SegmentsByCategory = [SegmentCategory: [Segment]]
