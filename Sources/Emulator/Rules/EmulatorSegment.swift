import Foundation

/// One segment in a fetch answer: the wire object `{"id": …, "segmentation_id": …, …strings}`.
public struct EmulatorSegment: Hashable, Sendable, Codable {
    /// The segment id (wire key `id`).
    public var id: String
    /// The segmentation the segment belongs to (wire key `segmentation_id`).
    public var segmentationId: String
    /// Any further string fields, written beside `id` and `segmentation_id`.
    public var attributes: [String: String]

    /// A segment with optional extra string fields.
    public init(id: String, segmentationId: String, attributes: [String: String] = [:]) {
        self.id = id
        self.segmentationId = segmentationId
        self.attributes = attributes
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes the flat wire object; fields other than `id` and `segmentation_id` become attributes.
    public init(from decoder: any Decoder) throws {
        var fields = try decoder.singleValueContainer().decode([String: String].self)
        guard let id = fields.removeValue(forKey: "id"),
              let segmentationId = fields.removeValue(forKey: "segmentation_id") else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "segment without id or segmentation_id"))
        }
        self.init(id: id, segmentationId: segmentationId, attributes: fields)
    }

    /// Encodes the flat wire object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in attributes where key != "id" && key != "segmentation_id" {
            try container.encode(value, forKey: Key(stringValue: key))
        }
        try container.encode(id, forKey: Key(stringValue: "id"))
        try container.encode(segmentationId, forKey: Key(stringValue: "segmentation_id"))
    }
}
