import Foundation
import SegmentsDomain

/// Strict decoding of a segments answer (<doc:Behaviour#Segment-answers>).
///
/// The body must be a JSON object mapping category names to arrays of objects whose values are
/// all strings. Any other shape throws `.invalidResponse`, never "no segments", because a proxy
/// or captive portal answering 200 must not wipe the customer's segments. Unknown categories and
/// extra fields are kept; a segment object without `id` or `segmentation_id` is dropped with a
/// warning and the rest of the answer stays valid.
enum BloomreachSegmentsDecoder {
    static func decode(_ body: Data, logger: any SegmentsLogger) throws -> SegmentsByCategory {
        // Before any parsing: a deeply nested body could overflow a thread's stack, and a body in
        // UTF-16 or UTF-32 would hide its depth from the scan (Foundation's decoders convert it).
        if let refusal = JSONText.refusal(of: body) {
            throw invalid("it \(refusal)")
        }
        // The only valid shape, read by a parser that knows it: decoding it as a generic
        // `JSONValue` made an answer of 100 segments cost about a millisecond (each value tries
        // every JSON type in turn, and each failed try throws), and even `JSONDecoder` into
        // `[String: [[String: String]]]` took 0.4 ms here (benchmark 5).
        if let categories = SegmentsAnswerParser.parse(body) {
            return segments(of: categories, logger: logger)
        }
        // Anything else, or a form the parser leaves to Foundation (escapes, non-ASCII text,
        // repeated keys): the generic decoding decides, and names what is wrong.
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw invalid(body.isEmpty ? "the body is empty" : "the body is not JSON", underlying: error)
        }
        guard case .object(let categories) = json else {
            throw invalid("the top level is not a JSON object")
        }
        var checked: [String: [[String: String]]] = [:]
        for (name, value) in categories {
            guard case .array(let items) = value else {
                throw invalid("category '\(name)' is not an array")
            }
            checked[name] = try items.map { item in
                guard case .object(let object) = item else {
                    throw invalid("an element of category '\(name)' is not an object")
                }
                var fields: [String: String] = [:]
                for (key, value) in object {
                    guard case .string(let text) = value else {
                        throw invalid("field '\(key)' of a segment in category '\(name)' is not a string")
                    }
                    fields[key] = text
                }
                return fields
            }
        }
        return segments(of: checked.mapValues(SegmentsAnswerParser.Category.init(wireObjects:)), logger: logger)
    }

    /// The segments of a well-shaped answer; a segment object without `id` or `segmentation_id`
    /// is dropped with a warning.
    private static func segments(
        of categories: [String: SegmentsAnswerParser.Category], logger: any SegmentsLogger
    ) -> SegmentsByCategory {
        var result: SegmentsByCategory = [:]
        result.reserveCapacity(categories.count)
        for (name, category) in categories {
            if category.dropped > 0 {
                logger.log(
                    .warning,
                    "Segments: Ignored \(category.dropped) segment(s) without id or segmentation_id in category '\(name)'")
            }
            result[SegmentCategory(name)] = category.segments
        }
        return result
    }

    private static func invalid(_ reason: String, underlying: (any Error)? = nil) -> SegmentsError {
        SegmentsError(.invalidResponse, "Fetching segments returned a malformed body: \(reason)", underlying: underlying)
    }
}

/// Reads a segments answer of the one valid shape — an object of arrays of objects of strings —
/// straight from its bytes. It accepts only JSON that `JSONDecoder` reads to the same values, and
/// returns `nil` for anything else, including valid JSON it leaves to Foundation: a string with an
/// escape or a byte outside ASCII, a key repeated in one object, any other type of value.
struct SegmentsAnswerParser {
    /// One category of an answer: its segments in answer order, and how many objects lacked
    /// `id` or `segmentation_id`.
    struct Category: Equatable {
        var segments: [Segment] = []
        var dropped = 0

        init() {}

        /// The category of these wire objects.
        init(wireObjects: [[String: String]]) {
            segments.reserveCapacity(wireObjects.count)
            for fields in wireObjects {
                if let segment = Segment(wireFields: fields) { segments.append(segment) } else { dropped += 1 }
            }
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The categories of `body`, or `nil` when it is not of the shape in the simple form.
    static func parse(_ body: Data) -> [String: Category]? {
        body.withUnsafeBytes { raw in
            var parser = SegmentsAnswerParser(raw.bindMemory(to: UInt8.self))
            return parser.answer()
        }
    }

    private mutating func answer() -> [String: Category]? {
        var categories: [String: Category] = [:]
        let complete = object { name, parser in
            guard categories[name] == nil, let items = parser.array() else { return false }
            categories[name] = items
            return true
        }
        guard complete else { return nil }
        skipWhitespace()
        return index == bytes.count ? categories : nil
    }

    /// `[ {…}, … ]` of segment objects, each made a ``Segment`` as it is read.
    private mutating func array() -> Category? {
        skipWhitespace()
        guard take(UInt8(ascii: "[")) else { return nil }
        var category = Category()
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return category }
        while true {
            var id: String?
            var segmentationId: String?
            var attributes: [String: String] = [:]
            let complete = object { key, parser in
                guard let value = parser.string() else { return false }
                switch key {
                case Segment.idKey:
                    guard id == nil else { return false }
                    id = value
                case Segment.segmentationIdKey:
                    guard segmentationId == nil else { return false }
                    segmentationId = value
                default:
                    guard attributes.updateValue(value, forKey: key) == nil else { return false }
                }
                return true
            }
            guard complete else { return nil }
            if let id, let segmentationId {
                category.segments.append(Segment(id: id, segmentationId: segmentationId, attributes: attributes))
            } else {
                category.dropped += 1
            }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? category : nil
        }
    }

    /// `{ "key": value, … }`, each value read by `member`, which returns whether it succeeded.
    private mutating func object(_ member: (String, inout SegmentsAnswerParser) -> Bool) -> Bool {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            guard let key = string() else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")), member(key, &self) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// A string of printable ASCII without escapes.
    private mutating func string() -> String? {
        skipWhitespace()
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            // Control characters are not JSON; escapes and other bytes are left to Foundation.
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }
}
