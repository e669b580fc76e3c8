import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour P7 and P9 for ``JSONReader``'s text member and nesting limit, at the edges the random
/// texts of ``JSONReaderDifferentialTests`` rarely reach.
@Suite(Hang.timeLimit(minutes: 1)) struct JSONReaderTextMemberTests {
    private static func read(
        _ text: String, maximumLevels: Int = 64, maximumSize: Int = 1 << 16
    ) throws -> (value: JSONValue, text: String?) {
        let bytes = Array(text.utf8)
        let member = JSONReader.TextMember(path: ["event", "properties"], maximumLevels: maximumLevels, maximumSize: maximumSize)
        return try bytes.withUnsafeBytes { buffer in
            let (value, range) = try JSONReader.value(from: buffer, keeping: member)
            return (value, range.map { String(decoding: bytes[$0], as: UTF8.self) })
        }
    }

    @Test func p7_whitespaceAroundALineReadWithATextMemberIsAllowed() throws {
        let read = try Self.read(" \t\r\n{\"op\":\"add\",\"event\":{\"properties\":{\"a\":[1]}}}\n ")
        #expect(read.value == ["op": "add", "event": .object([:])])
        #expect(read.text == #"{"a":[1]}"#)
    }

    /// Only `properties` inside the outermost object's `event` is the member: one at the same
    /// depth under another key, or under `event` deeper down, is built like any other value.
    @Test func p7_aPropertiesMemberElsewhereIsBuiltAndTheTextIsNil() throws {
        let read = try Self.read(
            #"{"op":"add","properties":{"properties":{"a":1}},"other":{"properties":[1]},"event":{"type":"x","data":{"properties":2}}}"#)
        #expect(read.value == [
            "op": "add", "properties": ["properties": ["a": 1]], "other": ["properties": [1]],
            "event": ["type": "x", "data": ["properties": 2]],
        ])
        #expect(read.text == nil)
    }

    /// The text is the first `properties` when `event` repeats (the value keeps the first `event`,
    /// as `JSONDecoder` does), but the later one is still checked against the limits: stricter,
    /// never looser.
    @Test func p7_p9_aRepeatedEventKeepsTheFirstPropertiesAndChecksTheLaterOnes() throws {
        let within = try Self.read(#"{"event":{"properties":{"a":1},"n":1},"event":{"properties":{"b":[2]}}}"#, maximumLevels: 2)
        #expect(within.value == ["event": ["n": 1]])
        #expect(within.text == #"{"a":1}"#)
        // The later properties nest three levels, past the limit of two.
        #expect(throws: JSONSyntaxError.self) {
            try Self.read(#"{"event":{"properties":{"a":1}},"event":{"properties":{"b":[[2]]}}}"#, maximumLevels: 2)
        }
        // The later `event` has no properties of its own before a repeated one.
        #expect(throws: JSONSyntaxError.self) {
            try Self.read(#"{"event":{"n":1},"event":{"properties":{"b":[[2]]}}}"#, maximumLevels: 2)
        }
    }

    /// Behaviour P9: the limit is on nesting, not on how many containers a text holds: closed
    /// siblings never add up.
    @Test(arguments: ["{}", "[]", "{\"a\":{}}", "[[]]"])
    func p9_closedContainersDoNotAddUpToTheDepthLimit(sibling: String) throws {
        let many = "[" + Array(repeating: sibling, count: 200).joined(separator: ",") + "]"
        #expect(throws: Never.self) { try JSONReader.value(from: Data(many.utf8)) }
        let levels = sibling.hasPrefix("[[") || sibling.hasPrefix("{\"") ? 3 : 2
        let few = "[" + Array(repeating: sibling, count: 3).joined(separator: ",") + "]"
        #expect(throws: Never.self) { try JSONReader.value(from: Data(few.utf8), maximumDepth: levels) }
        #expect(throws: JSONSyntaxError.self) { try JSONReader.value(from: Data(few.utf8), maximumDepth: levels - 1) }
        let line = #"{"event":{"properties":"# + many + "}}"
        #expect(throws: Never.self) { try Self.read(line, maximumSize: 1 << 20) }
    }

    /// Behaviour P9 (the Domain half of `P9JournalStackDepthTests`): the reader's limit is the
    /// envelope's, a text at it is read on a 512 KiB thread and one level deeper is refused.
    @Test func p9_aTextAtTheLimitIsReadOnA512KiBThreadAndOneLevelDeeperIsRefused() async throws {
        #expect(JSONReader.maximumDepth == JSONDepth.envelopeMaximum)
        let atLimit = String(repeating: #"{"k":"#, count: JSONReader.maximumDepth - 1) + "{}"
            + String(repeating: "}", count: JSONReader.maximumDepth - 1)
        let deeper = #"{"k":"# + atLimit + "}"
        let outcomes = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            ((try? JSONReader.value(from: Data(atLimit.utf8))) != nil, (try? JSONReader.value(from: Data(deeper.utf8))) != nil)
        }
        #expect(outcomes.0, "a text at the limit is read")
        #expect(!outcomes.1, "one level deeper is refused")
    }
}
