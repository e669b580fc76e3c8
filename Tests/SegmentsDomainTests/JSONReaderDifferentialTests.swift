import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Random JSON texts with the value each one holds, from a seed (``SeededGenerator``): nesting,
/// all four whitespace bytes wherever JSON allows them, every escape (`\u` in both cases, surrogate
/// pairs), raw non-ASCII, `/` both escaped and not, literals, and numbers with signs, fractions and
/// exponents.
///
/// The expected value is built beside the text, by `JSONValue`'s own rules (a whole number that
/// fits `Int` is `.int`), rather than taken from the platform's `JSONDecoder` or
/// `JSONSerialization`: they are not one decoder (before macOS 14 / iOS 17 `JSONDecoder` is built on
/// `JSONSerialization`, with other number rules), so comparing with them would test the OS version.
struct RandomJSON {
    var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    mutating func below(_ bound: Int) -> Int {
        Int(random.next(below: UInt64(bound)))
    }

    mutating func chance(_ oneIn: Int) -> Bool {
        below(oneIn) == 0
    }

    mutating func pick<Item>(_ items: [Item]) -> Item {
        items[below(items.count)]
    }

    /// None half the time, else one to three of space, line feed, carriage return and tab.
    mutating func whitespace() -> String {
        guard chance(2) else { return "" }
        return String((0..<(1 + below(3))).map { _ in pick([" ", "\n", "\r", "\t"] as [Character]) })
    }

    /// A value nesting at most `depth` more levels, and its text.
    mutating func value(depth: Int) -> (value: JSONValue, text: String) {
        switch below(depth > 0 ? 9 : 6) {
        case 0: return (.null, "null")
        case 1: return chance(2) ? (.bool(true), "true") : (.bool(false), "false")
        case 2, 3: return number()
        case 4, 5:
            let (text, json) = string()
            return (.string(text), json)
        case 6, 7: return object(depth: depth)
        default: return array(depth: depth)
        }
    }

    mutating func array(depth: Int) -> (value: JSONValue, text: String) {
        let elements = (0..<below(4)).map { _ in value(depth: depth - 1) }
        let inner = elements.map { whitespace() + $0.text + whitespace() }.joined(separator: ",")
        return (.array(elements.map(\.value)), "[" + (elements.isEmpty ? whitespace() : inner) + "]")
    }

    mutating func object(depth: Int) -> (value: JSONValue, text: String) {
        var members: [(key: String, value: JSONValue, text: String)] = []
        for _ in 0..<below(4) {
            let (key, keyText) = string()
            guard !members.contains(where: { $0.key == key }) else { continue }
            let (value, valueText) = value(depth: depth - 1)
            members.append((key, value, whitespace() + keyText + whitespace() + ":" + whitespace() + valueText + whitespace()))
        }
        return object(members)
    }

    /// An object of these members (texts as written between the commas), with whitespace inside
    /// when it is empty.
    mutating func object(_ members: [(key: String, value: JSONValue, text: String)]) -> (value: JSONValue, text: String) {
        let value = JSONValue.object(Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) }))
        return (value, "{" + (members.isEmpty ? whitespace() : members.map(\.text).joined(separator: ",")) + "}")
    }

    mutating func number() -> (value: JSONValue, text: String) {
        if chance(6) {
            let whole = Int(truncatingIfNeeded: random.next())
            return (.int(whole), String(whole))
        }
        let sign = chance(3) ? "-" : ""
        let whole = chance(4) ? "0" : String(1 + below(99_999))
        let fraction = chance(2) ? "" : "." + String((0..<(1 + below(3))).map { _ in pick(Array("0123456789")) })
        let exponent = chance(2) ? "" : pick(["e", "E"]) + pick(["", "+", "-"]) + String(below(20))
        let text = sign + whole + fraction + exponent
        if fraction.isEmpty && exponent.isEmpty { return (.int(Int(text)!), text) }
        let number = Double(text)!
        return (Int(exactly: number).map(JSONValue.int) ?? .double(number), text)
    }

    /// A string (empty one time in five) and its JSON text.
    mutating func string() -> (value: String, text: String) {
        guard !chance(5) else { return ("", #""""#) }
        var value = ""
        var text = "\""
        for _ in 0..<(1 + below(6)) {
            let (piece, pieceText) = stringPiece()
            value += piece
            text += pieceText
        }
        return (value, text + "\"")
    }

    private mutating func hex4(_ code: UInt32) -> String {
        let hex = String(code, radix: 16)
        let padded = String(repeating: "0", count: 4 - hex.count) + hex
        return "\\u" + (chance(2) ? padded.uppercased() : padded)
    }

    private mutating func stringPiece() -> (value: String, text: String) {
        switch below(10) {
        case 0, 1, 2:
            // Printable ASCII but the quote and the backslash, written as is (spaces and slashes included).
            let byte = pick(Array(0x20...0x7E).filter { $0 != 0x22 && $0 != 0x5C })
            let character = String(UnicodeScalar(UInt8(byte)))
            return (character, character)
        case 3: return ("/", chance(2) ? "/" : #"\/"#)
        case 4:
            return pick([("\"", #"\""#), ("\\", #"\\"#), ("\u{8}", #"\b"#), ("\u{C}", #"\f"#), ("\n", #"\n"#), ("\r", #"\r"#), ("\t", #"\t"#)])
        case 5:
            let code = UInt32(below(0x20))
            return (String(UnicodeScalar(code)!), hex4(code))
        case 6:
            // A scalar of the Basic Multilingual Plane, outside the surrogates.
            let code = chance(2) ? UInt32(0x20 + below(0xD800 - 0x20)) : UInt32(0xE000 + below(0xFFFE - 0xE000))
            return (String(UnicodeScalar(code)!), hex4(code))
        case 7:
            // Past the Basic Multilingual Plane: a surrogate pair.
            let code = UInt32(0x10000 + below(0x10FFFF - 0x10000 + 1))
            let offset = code - 0x10000
            return (String(UnicodeScalar(code)!), hex4(0xD800 + (offset >> 10)) + hex4(0xDC00 + (offset & 0x3FF)))
        default:
            let raw = pick(["é", "€", "😀", "中", "\u{FEFF}", "ß"])
            return (raw, raw)
        }
    }

    /// How deeply `value`'s arrays and objects nest (a container is level 1).
    static func levels(of value: JSONValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(levels(of:)).max() ?? 0)
        case .object(let members): 1 + (members.values.map(levels(of:)).max() ?? 0)
        default: 0
        }
    }

    /// `value` counted as ``ReplayableEvent`` counts an item's properties: each scalar by
    /// ``ReplayableEvent/encodedSize(of:)-(JSONValue)``, a container 2 plus one per element, and for
    /// an object each key's size plus one (its colon).
    static func countedSize(of value: JSONValue) -> Int {
        switch value {
        case .array(let items): 2 + items.count + items.map(countedSize(of:)).reduce(0, +)
        case .object(let members):
            2 + members.count + members.map { ReplayableEvent.encodedSize(of: $0.key) + 1 + countedSize(of: $0.value) }.reduce(0, +)
        default: ReplayableEvent.encodedSize(of: value)
        }
    }
}

/// Behaviour P2, P7 and P9 for ``JSONReader`` on thousands of random texts: it reads each as the
/// value it holds, refuses each truncation and each raw control character in a string, and reads
/// the journal's text member (`event.properties`) exactly at its limits. A failure names its seed:
/// `RandomJSON(seed:)` rebuilds the text.
@Suite(Hang.timeLimit(minutes: 2)) struct JSONReaderDifferentialTests {
    private static func read(_ text: String) throws -> JSONValue {
        try JSONReader.value(from: Data(text.utf8))
    }

    @Test func p2_randomTextsReadAsTheValueTheyHold() throws {
        for seed in UInt64(0)..<3000 {
            var random = RandomJSON(seed: seed)
            let (value, text) = random.value(depth: 4)
            let document = random.whitespace() + text + random.whitespace()
            #expect(try Self.read(document) == value, "seed \(seed): \(document.debugDescription)")
        }
    }

    /// Every proper prefix of an array or object text is damage, unless all it lacks is trailing
    /// whitespace.
    @Test func p2_everyTruncationIsRefused() {
        for seed in UInt64(0)..<300 {
            var random = RandomJSON(seed: seed)
            let (_, text) = random.chance(2) ? random.array(depth: 3) : random.object(depth: 3)
            let leading = random.whitespace()
            let document = Array((leading + text + random.whitespace()).utf8)
            let end = leading.utf8.count + text.utf8.count
            for cut in 0..<end {
                #expect(throws: JSONSyntaxError.self, "seed \(seed), cut at \(cut): \(String(decoding: document, as: UTF8.self).debugDescription)") {
                    try JSONReader.value(from: Data(document[..<cut]))
                }
            }
            for cut in end...document.count {
                #expect((try? JSONReader.value(from: Data(document[..<cut]))) != nil, "seed \(seed), cut at \(cut)")
            }
        }
    }

    /// A raw byte below 0x20 inside a string (tab and line feed too) is damage: it must be
    /// escaped.
    @Test func p2_aRawControlCharacterInAStringIsRefused() {
        for seed in UInt64(0)..<500 {
            var random = RandomJSON(seed: seed)
            let (_, before) = random.string()
            let (_, after) = random.string()
            let control = String(UnicodeScalar(UInt8(random.below(0x20))))
            let string = String(before.dropLast()) + control + String(after.dropFirst())
            let (_, text) = random.value(depth: 2)
            let document = "[" + text + "," + string + "]"
            #expect(throws: JSONSyntaxError.self, "seed \(seed): \(document.debugDescription)") { try Self.read(document) }
            let line = #"{"event":{"properties":{"k":"# + string + "}}}"
            #expect(throws: JSONSyntaxError.self, "seed \(seed): \(line.debugDescription)") {
                try Self.readKeepingProperties(line, maximumLevels: 64, maximumSize: 1 << 20)
            }
        }
    }

    private static let propertiesPath = ["event", "properties"]

    private static func readKeepingProperties(
        _ text: String, maximumLevels: Int, maximumSize: Int
    ) throws -> (value: JSONValue, text: String?) {
        let bytes = Array(text.utf8)
        let member = JSONReader.TextMember(path: propertiesPath, maximumLevels: maximumLevels, maximumSize: maximumSize)
        return try bytes.withUnsafeBytes { buffer in
            let (value, range) = try JSONReader.value(from: buffer, keeping: member)
            return (value, range.map { String(decoding: bytes[$0], as: UTF8.self) })
        }
    }

    /// A random journal-shaped line: `event.properties` among other members, in random order and
    /// whitespace; returns the line, the value without the properties, and the properties.
    private static func line(seed: UInt64) -> (text: String, value: JSONValue, properties: JSONValue) {
        var random = RandomJSON(seed: seed)
        let properties = random.chance(8) ? random.value(depth: 4) : random.object(depth: 4)
        var eventMembers: [(key: String, value: JSONValue, text: String)] = []
        for key in ["type", "timestamp"] where random.chance(2) {
            let (value, text) = random.value(depth: 2)
            eventMembers.append((key, value, random.whitespace() + "\"\(key)\"" + random.whitespace() + ":" + random.whitespace() + text + random.whitespace()))
        }
        let propertiesText = random.whitespace() + #""properties""# + random.whitespace() + ":" + random.whitespace() + properties.text + random.whitespace()
        let at = random.below(eventMembers.count + 1)
        var event = random.object(eventMembers)
        eventMembers.insert(("properties", properties.value, propertiesText), at: at)
        event.text = random.object(eventMembers).text
        var lineMembers: [(key: String, value: JSONValue, text: String)] = [
            ("op", "add", random.whitespace() + #""op""# + random.whitespace() + ":" + random.whitespace() + #""add""# + random.whitespace())
        ]
        if random.chance(2) {
            let (value, text) = random.value(depth: 3)
            lineMembers.append(("other", value, random.whitespace() + #""other""# + ":" + text))
        }
        lineMembers.insert(("event", event.value, random.whitespace() + #""event""# + random.whitespace() + ":" + random.whitespace() + event.text + random.whitespace()), at: random.below(lineMembers.count + 1))
        let line = random.object(lineMembers)
        return (random.whitespace() + line.text + random.whitespace(), line.value, properties.value)
    }

    /// Behaviour P7: the member kept as text is left out of the value, its text reads as its
    /// value, and it passes its limits exactly when ``ReplayableEvent``'s count of it (E6) and its
    /// levels (P9) are within them: one byte or one level less is refused.
    @Test func p7_e6_p9_theKeptPropertiesReadAsTheirValueAndAreRefusedExactlyPastTheirLimits() throws {
        for seed in UInt64(0)..<1500 {
            let (text, value, properties) = Self.line(seed: seed)
            let size = RandomJSON.countedSize(of: properties)
            let levels = RandomJSON.levels(of: properties)
            let read = try Self.readKeepingProperties(text, maximumLevels: levels, maximumSize: size)
            #expect(read.value == value, "seed \(seed): \(text.debugDescription)")
            let kept = try #require(read.text, "seed \(seed): \(text.debugDescription)")
            #expect(try Self.read(kept) == properties, "seed \(seed): \(text.debugDescription)")
            #expect(throws: JSONSyntaxError.self, "seed \(seed), size \(size): \(text.debugDescription)") {
                try Self.readKeepingProperties(text, maximumLevels: levels, maximumSize: size - 1)
            }
            if levels > 0 {
                #expect(throws: JSONSyntaxError.self, "seed \(seed), levels \(levels): \(text.debugDescription)") {
                    try Self.readKeepingProperties(text, maximumLevels: levels - 1, maximumSize: size)
                }
            }
        }
    }

    /// The count the tests restate (``RandomJSON/countedSize(of:)``) is ``ReplayableEvent``'s:
    /// random properties padded to a count of exactly 64 KiB pass its check, one byte more does not.
    @Test func e6_theRestatedCountIsReplayableEventsCount() throws {
        for seed in UInt64(0)..<50 {
            var random = RandomJSON(seed: seed)
            guard case .object(var properties) = random.object(depth: 4).value else { Issue.record("not an object"); return }
            properties["padding"] = ""
            let padding = ReplayableEvent.maximumEncodedSize - RandomJSON.countedSize(of: .object(properties))
            properties["padding"] = .string(String(repeating: "a", count: padding))
            #expect(RandomJSON.countedSize(of: .object(properties)) == ReplayableEvent.maximumEncodedSize, "seed \(seed)")
            #expect(throws: Never.self, "seed \(seed)") { try ReplayableEvent.check(properties) }
            properties["padding"] = .string(String(repeating: "a", count: padding + 1))
            #expect(throws: SegmentsError.self, "seed \(seed)") { try ReplayableEvent.check(properties) }
        }
    }
}
