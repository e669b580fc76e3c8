import Foundation
import SegmentsDomain

/// Strict decoding of a segments answer (Behaviour, wire format, "Segment answers").
///
/// The body must be a JSON object mapping category names to arrays of objects whose values are
/// all strings. Any other shape throws `.invalidResponse`, never "no segments", because a proxy
/// or captive portal answering 200 must not wipe the customer's segments. Unknown categories and
/// extra fields are kept; a segment object without `id` or `segmentation_id` is dropped with a
/// warning and the rest of the answer stays valid.
enum BloomreachSegmentsDecoder {
    static func decode(_ body: Data, logger: any SegmentsLogger) throws -> SegmentsByCategory {
        // Before the recursive decoder: a deeply nested body could overflow a thread's stack.
        guard !JSONDepth.exceeds(in: body) else {
            throw invalid("it nests deeper than \(JSONDepth.maximum) levels")
        }
        let json: JSONValue
        do {
            json = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw invalid(body.isEmpty ? "the body is empty" : "the body is not JSON", underlying: error)
        }
        guard case .object(let categories) = json else {
            throw invalid("the top level is not a JSON object")
        }
        var result: SegmentsByCategory = [:]
        for (name, value) in categories {
            guard case .array(let items) = value else {
                throw invalid("category '\(name)' is not an array")
            }
            var segments: [Segment] = []
            segments.reserveCapacity(items.count)
            var dropped = 0
            for item in items {
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
                if let segment = Segment(wireFields: fields) {
                    segments.append(segment)
                } else {
                    dropped += 1
                }
            }
            if dropped > 0 {
                logger.log(
                    .warning,
                    "Segments: Ignored \(dropped) segment(s) without id or segmentation_id in category '\(name)'")
            }
            result[SegmentCategory(name)] = segments
        }
        return result
    }

    private static func invalid(_ reason: String, underlying: (any Error)? = nil) -> SegmentsError {
        SegmentsError(.invalidResponse, "Fetching segments returned a malformed body: \(reason)", underlying: underlying)
    }
}
