import Foundation

/// A strict JSON reader producing ``JSONValue``, for the event journal's read path and for the
/// properties an item read back from it keeps as text (``StoredProperties``).
///
/// Why not `JSONDecoder`: loading 10,000 queued events through it took ~310 ms (release, Linux),
/// most of it generic Codable machinery and `JSONValue`'s trial decoding, which throws up to five
/// errors per property value. This reader does one pass over the bytes and throws only on damage
/// (Docs/decisions/0001-event-queue-layout.md has the figures). The journal's lines are written by
/// hand as well, by ``JournalLineWriter``; `JSONEncoder` writes only the small documents (the
/// customer and the baseline, through ``VersionedJSON``).
///
/// Numbers follow `JSONValue`'s own decoding: a whole number that fits `Int` becomes `.int`
/// (`1.0` and `1e2` included), any other finite number `.double`. Invalid UTF-8 inside a string is
/// replaced by U+FFFD rather than rejected.
package struct JSONReader {
    /// Deeper nesting is treated as damage, so a corrupt or planted file cannot exhaust a 512 KiB
    /// thread stack (<doc:Behaviour#P9>): a journal line holding an event at the 64-level limit
    /// nests ``JSONDepth/envelopeMaximum`` levels, and nothing the SDK writes nests deeper.
    package static let maximumDepth = JSONDepth.envelopeMaximum

    private let bytes: UnsafeRawBufferPointer
    private let maximumDepth: Int
    private var position = 0
    private var depth = 0
    /// The member read as text rather than built (see ``value(from:keeping:)``), if any.
    private let textMember: TextMember?
    /// How many components of `textMember.path` the objects being read, outermost first, matched.
    private var matchedLevels = 0
    /// Where the text member was found.
    private var textRange: Range<Int>?

    private init(bytes: UnsafeRawBufferPointer, maximumDepth: Int, textMember: TextMember? = nil) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.textMember = textMember
    }

    /// The one JSON value `data` holds (surrounding whitespace allowed); throws ``JSONSyntaxError``
    /// on anything else, and on arrays and objects nested deeper than `maximumDepth` (the stack
    /// measurement of `segments-bench stack-probe` lifts it).
    package static func value(from data: Data, maximumDepth: Int = JSONReader.maximumDepth) throws -> JSONValue {
        try data.withUnsafeBytes { buffer in
            var reader = JSONReader(bytes: buffer, maximumDepth: maximumDepth)
            reader.skipWhitespace()
            let value = try reader.readValue()
            reader.skipWhitespace()
            guard reader.position == buffer.count else { throw reader.failure() }
            return value
        }
    }

    /// An object member read as text rather than built (<doc:Behaviour#P7>): checked as it is read,
    /// with nothing allocated for its content. ``value(from:keeping:)`` leaves it out of the value and
    /// reports where its text is. The event journal keeps an item's properties so: they are held as
    /// the bytes they were read from, not as a tree many times their size.
    package struct TextMember: Sendable {
        /// The keys from the outermost object down to the member, e.g. `["event", "properties"]`.
        package var path: [String]
        /// The deepest nesting of arrays and objects in the member, the member itself level 1
        /// when it is one.
        package var maximumLevels: Int
        /// The largest member, counted as ``ReplayableEvent`` counts an item's properties (an upper
        /// bound of their encoding); reading stops as soon as the count passes it.
        package var maximumSize: Int

        /// A member at `path` checked by these limits.
        package init(path: [String], maximumLevels: Int, maximumSize: Int) {
            self.path = path
            self.maximumLevels = maximumLevels
            self.maximumSize = maximumSize
        }
    }

    /// The one JSON value in `bytes`, like ``value(from:maximumDepth:)``, except the member `member`
    /// names: it is checked (valid JSON, within its limits) but not built, and left out of the value;
    /// `text` is its range in `bytes` (the first one, when the key repeats; `nil` when there is none).
    /// Throws ``JSONSyntaxError`` on invalid JSON and on a member past its limits.
    package static func value(
        from bytes: UnsafeRawBufferPointer, keeping member: TextMember, maximumDepth: Int = JSONReader.maximumDepth
    ) throws -> (value: JSONValue, text: Range<Int>?) {
        var reader = JSONReader(bytes: bytes, maximumDepth: maximumDepth, textMember: member)
        reader.skipWhitespace()
        let value = try reader.readValue()
        reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.failure() }
        return (value, reader.textRange)
    }

    private var current: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func failure() -> JSONSyntaxError {
        JSONSyntaxError(offset: position)
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            position += 1
        }
    }

    private mutating func consume(_ expected: UInt8) throws {
        guard current == expected else { throw failure() }
        position += 1
    }

    private mutating func readValue() throws -> JSONValue {
        guard let byte = current else { throw failure() }
        switch byte {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try readLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try readLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try readLiteral("null"); return .null
        default: return try readNumber()
        }
    }

    private mutating func readLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw failure() }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] {
            throw failure()
        }
        position += count
    }

    private mutating func enterContainer() throws {
        depth += 1
        guard depth <= maximumDepth else { throw failure() }
        position += 1
        skipWhitespace()
    }

    private mutating func readObject() throws -> JSONValue {
        try enterContainer()
        var object: [String: JSONValue] = [:]
        if current == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(object)
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure() }
            let key = try readString()
            skipWhitespace()
            try consume(UInt8(ascii: ":"))
            skipWhitespace()
            // A repeated key keeps its first value, as `JSONDecoder` does.
            if let member = textMember, matchedLevels == depth - 1, depth <= member.path.count, key == member.path[depth - 1] {
                if depth == member.path.count {
                    let start = position
                    var size = 0
                    try skimValue(level: 1, size: &size, within: member)
                    if textRange == nil { textRange = start..<position }
                } else {
                    matchedLevels = depth
                    let value = try readValue()
                    matchedLevels = depth - 1
                    if object[key] == nil { object[key] = value }
                }
            } else {
                let value = try readValue()
                if object[key] == nil { object[key] = value }
            }
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                continue
            }
            try consume(UInt8(ascii: "}"))
            depth -= 1
            return .object(object)
        }
    }

    private mutating func readArray() throws -> JSONValue {
        try enterContainer()
        var array: [JSONValue] = []
        if current == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(array)
        }
        while true {
            array.append(try readValue())
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                position += 1
                skipWhitespace()
                continue
            }
            try consume(UInt8(ascii: "]"))
            depth -= 1
            return .array(array)
        }
    }

    /// Reads the value at `position` as ``readValue()`` would, building nothing: adds its size, as
    /// ``ReplayableEvent`` counts it, to `size`, and throws as soon as `size` passes the member's
    /// limit or a container sits deeper than its levels (`level` is this value's). A repeated key
    /// is counted, though a built object keeps only its first value: stricter, never looser.
    private mutating func skimValue(level: Int, size: inout Int, within member: TextMember) throws {
        guard let byte = current else { throw failure() }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard level <= member.maximumLevels else { throw failure() }
            let isObject = byte == UInt8(ascii: "{")
            let closing = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            try enterContainer()
            size += 2
            if current == closing {
                position += 1
                depth -= 1
                break
            }
            while true {
                if isObject {
                    guard current == UInt8(ascii: "\"") else { throw failure() }
                    // The key, its colon and the comma (the count of members).
                    size += try skimString() + 2
                    skipWhitespace()
                    try consume(UInt8(ascii: ":"))
                    skipWhitespace()
                } else {
                    size += 1  // the comma (the count of elements)
                }
                try skimValue(level: level + 1, size: &size, within: member)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    position += 1
                    skipWhitespace()
                    continue
                }
                try consume(closing)
                depth -= 1
                break
            }
        case UInt8(ascii: "\""): size += try skimString()
        case UInt8(ascii: "t"): try readLiteral("true"); size += ReplayableEvent.encodedSize(of: .bool(true))
        case UInt8(ascii: "f"): try readLiteral("false"); size += ReplayableEvent.encodedSize(of: .bool(false))
        case UInt8(ascii: "n"): try readLiteral("null"); size += ReplayableEvent.encodedSize(of: .null)
        default: size += ReplayableEvent.encodedSize(of: try readNumber())
        }
        guard size <= member.maximumSize else { throw failure() }
    }

    /// Reads the string at `position` as ``readString()`` would and returns
    /// ``ReplayableEvent/encodedSize(of:)-(String)`` of it; builds the string only when it holds an
    /// escape or a non-ASCII byte (whose repair ``readString()`` decides).
    private mutating func skimString() throws -> Int {
        let start = position
        position += 1
        var slashes = 0
        while let byte = current, byte != UInt8(ascii: "\\"), byte < 0x80 {
            if byte == UInt8(ascii: "\"") {
                position += 1
                return position - start + slashes
            }
            guard byte >= 0x20 else { throw failure() }
            if byte == UInt8(ascii: "/") { slashes += 1 }
            position += 1
        }
        position = start
        return ReplayableEvent.encodedSize(of: try readString())
    }

    private mutating func readString() throws -> String {
        position += 1
        let start = position
        // Most strings have no escapes: decode them straight from the buffer.
        while let byte = current, byte != UInt8(ascii: "\\") {
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            guard byte >= 0x20 else { throw failure() }
            position += 1
        }
        var utf8 = Array(bytes[start..<position])
        while let byte = current {
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"): try readEscape(into: &utf8)
            case 0..<0x20: throw failure()
            default: utf8.append(byte)
            }
        }
        throw failure()
    }

    private mutating func readEscape(into utf8: inout [UInt8]) throws {
        guard let byte = current else { throw failure() }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var code = try readHex4()
            if (0xD800...0xDBFF).contains(code) {
                // A high surrogate must be followed by an escaped low one.
                try consume(UInt8(ascii: "\\"))
                try consume(UInt8(ascii: "u"))
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure() }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw failure() }
            utf8.append(contentsOf: String(Character(scalar)).utf8)
        default:
            throw failure()
        }
    }

    private mutating func readHex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw failure() }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure()
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private mutating func readNumber() throws -> JSONValue {
        let start = position
        var isWholeSyntax = true
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, Self.isDigit(first) else { throw failure() }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            isWholeSyntax = false
            position += 1
            try requireDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isWholeSyntax = false
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            try requireDigits()
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isWholeSyntax, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw failure() }
        if let whole = Int(exactly: value) { return .int(whole) }
        return .double(value)
    }

    private mutating func requireDigits() throws {
        guard let byte = current, Self.isDigit(byte) else { throw failure() }
        skipDigits()
    }

    private mutating func skipDigits() {
        while let byte = current, Self.isDigit(byte) { position += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

/// The text is not valid JSON (or a member read as text is past its limits); `offset` is where
/// reading stopped.
package struct JSONSyntaxError: Error, Hashable {
    /// The byte offset of the problem.
    package let offset: Int
}
