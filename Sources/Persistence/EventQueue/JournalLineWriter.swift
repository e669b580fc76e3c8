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
        var out = LineBytes()
        try writeAppend(of: event, to: &out, maximumDepth: maximumDepth)
        return out.data()
    }

    /// The line of `entry`, newline included.
    /// - Throws: ``SegmentsError`` `.storage` for a non-finite number or a value nested too deeply,
    ///   without quoting the value (it may be personal data, <doc:Behaviour#P4>).
    static func line(for entry: JournalEntry, maximumDepth: Int = JournalLineWriter.maximumDepth) throws -> Data {
        var out = LineBytes()
        try write(entry, to: &out, maximumDepth: maximumDepth)
        return out.data()
    }

    /// Appends the line of `entry`, newline included, to `out` (see ``line(for:maximumDepth:)``);
    /// on a throw, `out` may hold part of it.
    static func write(_ entry: JournalEntry, to out: inout LineBytes, maximumDepth: Int = JournalLineWriter.maximumDepth) throws {
        switch entry.op {
        case .append: literal(#"{"op":"append""#, &out)
        case .update: literal(#"{"op":"update""#, &out)
        case .remove: literal(#"{"op":"remove""#, &out)
        }
        if let id = entry.id {
            literal(#","id":""#, &out)
            uuid(id, &out)
            out.append(UInt8(ascii: "\""))
        }
        if let event = entry.event {
            literal(#","event":"#, &out)
            try eventObject(
                id: event.id, kind: event.kind, eventType: event.eventType, customerIds: event.customerIds,
                properties: event.properties, timestamp: event.timestamp, failedAttempts: event.failedAttempts,
                maximumDepth: maximumDepth, &out)
        }
        out.append(UInt8(ascii: "}"))
        out.append(JournalReplay.newline)
    }

    /// Appends the line of `JournalEntry.append(event)`, byte for byte, to `out`, read from the
    /// item itself: the store's append, on the caller's thread, builds no ``EventRecord``
    /// (<doc:Behaviour#R2>). On a throw, `out` may hold part of it.
    static func writeAppend(of event: TrackedEvent, to out: inout LineBytes, maximumDepth: Int = JournalLineWriter.maximumDepth) throws {
        literal(#"{"op":"append","event":"#, &out)
        let kind: EventRecord.Kind, eventType: String?
        switch event.kind {
        case .event(let type): (kind, eventType) = (.event, type)
        case .customerUpdate: (kind, eventType) = (.customerUpdate, nil)
        }
        try eventObject(
            id: event.id, kind: kind, eventType: eventType, customerIds: event.customerIds.values,
            properties: event.storedProperties, timestamp: event.timestamp.timeIntervalSinceReferenceDate,
            failedAttempts: event.failedAttempts, maximumDepth: maximumDepth, &out)
        out.append(UInt8(ascii: "}"))
        out.append(JournalReplay.newline)
    }

    /// The event object of a line (``EventRecord``'s fields, in its order).
    private static func eventObject(
        id: UUID, kind: EventRecord.Kind, eventType: String?, customerIds: [String: String], properties: StoredProperties,
        timestamp: Double, failedAttempts: Int, maximumDepth: Int, _ out: inout LineBytes
    ) throws {
        literal(#"{"id":""#, &out)
        uuid(id, &out)
        switch kind {
        case .event: literal(#"","kind":"event""#, &out)
        case .customerUpdate: literal(#"","kind":"customerUpdate""#, &out)
        }
        if let eventType {
            literal(#","eventType":"#, &out)
            string(eventType, &out)
        }
        literal(#","customerIds":{"#, &out)
        var first = true
        for (key, value) in customerIds {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            string(key, &out)
            out.append(UInt8(ascii: ":"))
            string(value, &out)
        }
        literal(#"},"properties":"#, &out)
        switch properties {
        case .values(let values):
            try object(values, depth: 1, limit: maximumDepth, &out)
        case .text(let text):
            // The text read back and checked (nested within the limit): copied, not re-encoded.
            out.append(contentsOf: text)
        }
        literal(#","timestamp":"#, &out)
        try number(timestamp, &out)
        literal(#","failedAttempts":"#, &out)
        integer(failedAttempts, &out)
        out.append(UInt8(ascii: "}"))
    }

    /// Writes `json`, an array or object at level `depth` or a value inside one at `depth - 1`.
    private static func value(_ json: JSONValue, depth: Int, limit: Int, _ out: inout LineBytes) throws {
        switch json {
        case .null: literal("null", &out)
        case .bool(let flag): flag ? literal("true", &out) : literal("false", &out)
        case .int(let number): integer(number, &out)
        case .double(let number): try self.number(number, &out)
        case .string(let text): string(text, &out)
        case .array(let items):
            try checkDepth(depth, limit: limit)
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try value(item, depth: depth + 1, limit: limit, &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            try object(members, depth: depth, limit: limit, &out)
        }
    }

    /// Writes an object at level `depth` (the properties object is level 1).
    private static func object(_ members: [String: JSONValue], depth: Int, limit: Int, _ out: inout LineBytes) throws {
        try checkDepth(depth, limit: limit)
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

    /// Refuses an array or object deeper than `limit` rather than recursing into it.
    private static func checkDepth(_ depth: Int, limit: Int) throws {
        guard depth <= limit else {
            throw SegmentsError(.storage, "A queued item's properties nest deeper than \(limit) levels")
        }
    }

    private static func number(_ number: Double, _ out: inout LineBytes) throws {
        guard number.isFinite else {
            throw SegmentsError(.storage, "A queued item has a property JSON cannot represent (such as NaN or infinity)")
        }
        // `description`'s digits (Swift's shortest round-tripping form), written without making
        // the string: `Double.write(to:)` hands its digits to `_writeASCII` where the standard
        // library does, else to `write(_:)`.
        var digits = Digits()
        number.write(to: &digits)
        if digits.overflowed {
            out.append(contentsOf: Array(number.description.utf8))
        } else {
            digits.withUnsafeBytes { out.append($0) }
        }
    }

    /// The text of one number, on the stack: `description` of a `Double` takes at most 24 bytes
    /// (`-2.2250738585072014e-308`); should more come, the caller writes `description` instead.
    private struct Digits: TextOutputStream {
        private var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var count = 0
        /// More came than the 32 bytes hold.
        private(set) var overflowed = false

        mutating func write(_ string: String) {
            for byte in string.utf8 { append(byte) }
        }

        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
            for byte in buffer { append(byte) }
        }

        private mutating func append(_ byte: UInt8) {
            let at = count
            guard at < MemoryLayout.size(ofValue: bytes) else {
                overflowed = true
                return
            }
            withUnsafeMutableBytes(of: &bytes) { $0[at] = byte }
            count += 1
        }

        func withUnsafeBytes(_ body: (UnsafeRawBufferPointer) -> Void) {
            Swift.withUnsafeBytes(of: bytes) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// `number` in decimal, as `String(number)` writes it, without making the string.
    private static func integer(_ number: Int, _ out: inout LineBytes) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes; Int.min has 19 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends a literal's bytes (copied in one go, unlike a `String`'s UTF-8 view).
    @inline(__always)
    private static func literal(_ text: StaticString, _ out: inout LineBytes) {
        text.withUTF8Buffer { out.append($0) }
    }

    /// `id` as `uuidString` writes it (upper-case hex, 8-4-4-4-12), without making the string
    /// (Foundation formats it with `sprintf` on Linux): 36 bytes made on the stack, appended at once.
    private static func uuid(_ id: UUID, _ out: inout LineBytes) {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes
        withUnsafeMutableBytes(of: &text) { text in
            withUnsafeBytes(of: id.uuid) { bytes in
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = upperHexDigit(bytes[index] >> 4)
                    text[at + 1] = upperHexDigit(bytes[index] & 0x0f)
                    at += 2
                }
            }
            out.append(UnsafeRawBufferPointer(rebasing: text[0..<36]))
        }
    }

    private static func upperHexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") - 10 + nibble
    }

    private static func string(_ text: String, _ out: inout LineBytes) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            out.append(bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): literal(#"\""#, &out)
            case UInt8(ascii: "\\"): literal(#"\\"#, &out)
            case UInt8(ascii: "\n"): literal(#"\n"#, &out)
            case UInt8(ascii: "\r"): literal(#"\r"#, &out)
            case UInt8(ascii: "\t"): literal(#"\t"#, &out)
            case 0..<0x20:
                literal(#"\u00"#, &out)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0f)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
