import Foundation
import SegmentsDomain

/// Writes a journal line by hand, the same JSON `JSONEncoder` would give for a ``JournalEntry``,
/// at a fraction of the cost: an append is the one write `trackEvent` pays on the caller's thread
/// (<doc:Behaviour#R1>, <doc:Behaviour#R2>), and Foundation's encoder took most of it.
///
/// The reader (``JSONReader``) takes any valid JSON: keys may come in any order, numbers are
/// written with Swift's shortest round-tripping form (so a `Date` survives exactly) and strings
/// escape what JSON requires (quote, backslash, control characters).
package enum JournalLineWriter {
    /// The deepest properties written, counted as ``ReplayableEvent`` counts them (the properties
    /// object is level 1): the 64 levels the pipeline accepts, so a line nests at most
    /// ``JSONDepth/envelopeMaximum`` levels, which ``JSONReader`` reads back. Deeper values are
    /// refused rather than recursed into (<doc:Behaviour#E6>, <doc:Behaviour#P9>).
    package static let maximumDepth = JSONDepth.maximum

    /// The line appending `event`, newline included, with `maximumDepth` for its properties (the
    /// stack measurement of `segments-bench stack-probe` lifts it).
    package static func appendLine(for event: TrackedEvent, maximumDepth: Int = JournalLineWriter.maximumDepth) throws -> Data {
        try line(for: .append(event), maximumDepth: maximumDepth)
    }

    /// The line of `entry`, newline included.
    /// - Throws: ``SegmentsError`` `.storage` for a non-finite number or a value nested too deeply,
    ///   without quoting the value (it may be personal data, <doc:Behaviour#P4>).
    static func line(for entry: JournalEntry, maximumDepth: Int = JournalLineWriter.maximumDepth) throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out += #"{"op":""#.utf8
        out += entry.op.rawValue.utf8
        out.append(UInt8(ascii: "\""))
        if let id = entry.id {
            out += #","id":""#.utf8
            out += id.uuidString.utf8
            out.append(UInt8(ascii: "\""))
        }
        if let event = entry.event {
            out += #","event":{"id":""#.utf8
            out += event.id.uuidString.utf8
            out += #"","kind":""#.utf8
            out += event.kind.rawValue.utf8
            out.append(UInt8(ascii: "\""))
            if let type = event.eventType {
                out += #","eventType":"#.utf8
                string(type, &out)
            }
            out += #","customerIds":{"#.utf8
            var first = true
            for (key, value) in event.customerIds {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                string(key, &out)
                out.append(UInt8(ascii: ":"))
                string(value, &out)
            }
            out += #"},"properties":"#.utf8
            switch event.properties {
            case .values(let values):
                try value(.object(values), depth: 1, limit: maximumDepth, &out)
            case .text(let text):
                // The text read back and checked (nested within the limit): copied, not re-encoded.
                out += text
            }
            out += #","timestamp":"#.utf8
            try number(event.timestamp, &out)
            out += #","failedAttempts":"#.utf8
            out += String(event.failedAttempts).utf8
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
        out.append(JournalReplay.newline)
        return Data(out)
    }

    /// Writes `json`, an array or object at level `depth` or a value inside one at `depth - 1`.
    private static func value(_ json: JSONValue, depth: Int, limit: Int, _ out: inout [UInt8]) throws {
        switch json {
        case .array, .object:
            guard depth <= limit else {
                throw SegmentsError(.storage, "A queued item's properties nest deeper than \(limit) levels")
            }
        default:
            break
        }
        switch json {
        case .null: out += "null".utf8
        case .bool(let flag): out += (flag ? "true" : "false").utf8
        case .int(let number): out += String(number).utf8
        case .double(let number): try self.number(number, &out)
        case .string(let text): string(text, &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try value(item, depth: depth + 1, limit: limit, &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, item) in members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                string(key, &out)
                out.append(UInt8(ascii: ":"))
                try value(item, depth: depth + 1, limit: limit, &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func number(_ number: Double, _ out: inout [UInt8]) throws {
        guard number.isFinite else {
            throw SegmentsError(.storage, "A queued item has a property JSON cannot represent (such as NaN or infinity)")
        }
        out += "\(number)".utf8
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func string(_ text: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case UInt8(ascii: "\n"): out += #"\n"#.utf8
            case UInt8(ascii: "\r"): out += #"\r"#.utf8
            case UInt8(ascii: "\t"): out += #"\t"#.utf8
            case 0..<0x20:
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0f)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
