import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The size limit of a tracked item, measured against the JSON an upload sends (see Behaviour E6):
/// an item whose properties encode to more than 64 KiB is refused, and one a byte or two under it
/// is accepted. Sizes come from the encoder the uploads use (sorted keys), not from the check's
/// own arithmetic; the check may only overestimate (by the comma it counts after each member).
@Suite(Hang.timeLimit(minutes: 1)) struct ReplayableEventSizeTests {
    static let cap = 64 * 1024

    /// The size of `properties` as an upload encodes them.
    private static func encodedSize(_ properties: [String: JSONValue]) -> Int {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(properties).count) ?? -1
    }

    private static func isAccepted(_ properties: [String: JSONValue]) -> Bool {
        do {
            try ReplayableEvent.check(properties)
            return true
        } catch {
            return false
        }
    }

    /// The largest `count` whose item encodes to at most `limit` bytes (sizes grow with `count`).
    private static func largest(atMost limit: Int, _ make: (Int) -> [String: JSONValue]) -> Int {
        var low = 0, high = limit
        while low < high {
            let middle = (low + high + 1) / 2
            if encodedSize(make(middle)) <= limit { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// A count and a top-level key (`k`, `kk`, …: each letter one byte more) whose item encodes to
    /// exactly `limit` bytes, for items whose size steps by more than one byte per count.
    private static func exactly(_ limit: Int, _ make: @escaping (String, Int) -> [String: JSONValue]) -> [String: JSONValue]? {
        for length in 1...16 {
            let key = String(repeating: "k", count: length)
            let count = largest(atMost: limit) { make(key, $0) }
            if encodedSize(make(key, count)) == limit { return make(key, count) }
        }
        return nil
    }

    /// Properties of one string of `count` copies of `character`.
    private static func text(_ character: Character) -> (Int) -> [String: JSONValue] {
        { count in ["k": .string(String(repeating: character, count: count))] }
    }

    @Test func e6_aPlainStringItemOneByteUnderTheCapIsAcceptedAndOneOverIsRefused() {
        let make = Self.text("x")
        let under = Self.largest(atMost: Self.cap - 1, make)
        #expect(Self.encodedSize(make(under)) == Self.cap - 1)
        #expect(Self.isAccepted(make(under)))
        #expect(Self.encodedSize(make(under + 2)) == Self.cap + 1)
        let overAccepted = Self.isAccepted(make(under + 2))
        #expect(!overAccepted)
    }

    @Test func e6_spacesCountOnceSoAStringOfThemOneByteUnderTheCapIsAccepted() {
        let make = Self.text(" ")
        let under = Self.largest(atMost: Self.cap - 1, make)
        #expect(Self.encodedSize(make(under)) == Self.cap - 1)
        #expect(Self.isAccepted(make(under)))
    }

    /// Quotes, backslashes and slashes are escaped (`\"`, `\\`, `\/`): two bytes each.
    @Test(arguments: ["\"", "\\", "/"] as [Character])
    func e6_escapedCharactersCountTwiceSoAStringOfThemOverTheCapIsRefused(character: Character) {
        let properties = Self.text(character)(Self.cap / 2)
        #expect(Self.encodedSize(properties) > Self.cap)
        let accepted = Self.isAccepted(properties)
        #expect(!accepted)
    }

    /// One string's count, the upper bound of its encoding: 2 for the quotes, 1 per plain byte
    /// (each byte of a non-ASCII character too), 2 for `"`, `\` and `/` (written `\/`), 6 for a
    /// control character (`\u0001`) — for a small string and for one stored out of line alike.
    @Test func e6_aStringCountsAsTheUpperBoundOfItsEncoding() {
        #expect(ReplayableEvent.encodedSize(of: "") == 2)
        #expect(ReplayableEvent.encodedSize(of: "a\"b\\c/d\u{01}é") == 20)
        #expect(ReplayableEvent.encodedSize(of: String(repeating: "a/\u{1F}", count: 100)) == 2 + 100 * (1 + 2 + 6))
    }

    /// Empty strings in an array: each costs its quotes and a comma, nothing the check can skip.
    @Test func e6_anArrayOfEmptyStringsTwoBytesUnderTheCapIsAcceptedAndOneOverIsRefused() throws {
        let make: (String, Int) -> [String: JSONValue] = { [$0: .array(Array(repeating: .string(""), count: $1))] }
        let under = try #require(Self.exactly(Self.cap - 2, make))
        #expect(Self.isAccepted(under))
        let over = Self.largest(atMost: Self.cap) { make("k", $0) } + 1
        #expect(Self.encodedSize(make("k", over)) > Self.cap)
        let overAccepted = Self.isAccepted(make("k", over))
        #expect(!overAccepted)
    }

    /// An object of many members with empty values: keys, colons and commas all count.
    @Test func e6_anObjectTwoBytesUnderTheCapIsAcceptedAndOneOverIsRefused() throws {
        let make: (String, Int) -> [String: JSONValue] = { key, count in
            var members: [String: JSONValue] = [:]
            for index in 0..<count { members[String(10_000 + index)] = .string("") }
            return [key: .object(members)]
        }
        let under = try #require(Self.exactly(Self.cap - 2, make))
        #expect(Self.isAccepted(under))
        let over = Self.largest(atMost: Self.cap) { make("k", $0) } + 1
        #expect(Self.encodedSize(make("k", over)) > Self.cap)
        let overAccepted = Self.isAccepted(make("k", over))
        #expect(!overAccepted)
    }

    @Test func e6_aLargeStringInsideANestedObjectCounts() {
        let properties: [String: JSONValue] = ["outer": .object(["inner": .string(String(repeating: "x", count: Self.cap))])]
        #expect(Self.encodedSize(properties) > Self.cap)
        let accepted = Self.isAccepted(properties)
        #expect(!accepted)
    }

    /// Objects nest as deep as arrays: 64 levels with the properties object as level 1.
    @Test func e6_objectsNestedSixtyFourLevelsAreAcceptedAndSixtyFiveAreRefused() {
        func nested(_ depth: Int) -> JSONValue {
            var value: JSONValue = .int(1)
            for _ in 1..<depth { value = .object(["k": value]) }
            return value
        }
        #expect(Self.isAccepted(["deep": nested(64)]))
        #expect(!Self.isAccepted(["deep": nested(65)]))
    }
}
