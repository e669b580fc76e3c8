import Foundation

/// A JSON value as the emulator stores event and customer properties.
///
/// Numbers are one case holding a `Double`, so equality is JSON equality: `1` equals `1.0`.
/// (Whole numbers beyond 2^53 lose precision, which an emulator can afford.)
public enum EmulatorJSON: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Any number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([EmulatorJSON])
    /// An object.
    case object([String: EmulatorJSON])

    /// The deepest nesting parsed: 66 levels, the SDK's own limit for what it stores or sends (an
    /// event's properties, up to 64 levels, inside a journal line or an upload body). The
    /// emulator is an independent peer and does not import the SDK, so the figure is repeated
    /// here; `Scripts/stack-depth.sh` measures that it fits a 512 KiB thread stack.
    public static let maximumDepth = 66

    /// Parses UTF-8 JSON text (any top-level value); throws on malformed input, on text in
    /// another encoding, and on nesting deeper than ``maximumDepth``, which the recursive decoder
    /// could not survive on a connection thread's stack (``EmulatorLimits/threadStackSize``).
    public init(jsonData: Data) throws {
        try Self.checkBeforeParsing(jsonData)
        self = try JSONDecoder().decode(EmulatorJSON.self, from: jsonData)
    }

    /// Throws `DecodingError.dataCorrupted` when `data` must not reach a decoder: not UTF-8, or
    /// nested deeper than ``maximumDepth``. Every JSON the emulator reads passes it first.
    static func checkBeforeParsing(_ data: Data) throws {
        if let encoding = foreignEncoding(of: data) {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "JSON in \(encoding), not UTF-8"))
        }
        guard !nestsDeeper(than: maximumDepth, data) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "JSON nested deeper than \(maximumDepth) levels"))
        }
    }

    /// The encoding of `data` when it is not UTF-8 (UTF-16 or UTF-32, by a byte-order mark or a
    /// zero byte), else `nil`. Foundation's decoder converts those encodings before parsing, so the
    /// depth scan, which reads bytes as UTF-8, would not see their nesting: they are refused
    /// first. (The SDK applies the same rule; the emulator does not import it.)
    static func foreignEncoding(of data: Data) -> String? {
        let first = Array(data.prefix(4))
        if first.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || first.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return "UTF-32" }
        if first.starts(with: [0xFE, 0xFF]) || first.starts(with: [0xFF, 0xFE]) { return "UTF-16" }
        return data.contains(0) ? "UTF-16 or UTF-32" : nil
    }

    /// Counts `[` and `{` outside strings without recursion; validates nothing else.
    private static func nestsDeeper(than limit: Int, _ data: Data) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x5B, 0x7B:
                depth += 1
                if depth > limit { return true }
            case 0x5D, 0x7D: depth = max(0, depth - 1)
            default: break
            }
        }
        return false
    }

    /// The value of `key` when this is an object, else `nil`.
    public subscript(key: String) -> EmulatorJSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// Compact JSON text with sorted keys.
    public func encodedData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a tree of plain values cannot fail except for non-finite numbers, written as null.
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    func encodedBytes() -> [UInt8] { Array(encodedData()) }
}

extension EmulatorJSON: Codable {
    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([EmulatorJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: EmulatorJSON].self))
        }
    }

    /// Encodes the value as plain JSON; whole numbers are written without a fraction.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.isFinite, value == value.rounded(), abs(value) < 9.0e15 {
                try container.encode(Int64(value))
            } else if value.isFinite {
                try container.encode(value)
            } else {
                try container.encodeNil()
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension EmulatorJSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A whole number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: EmulatorJSON...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, EmulatorJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
