import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The nesting scan that runs before any recursive decoder (see Behaviour E6, P2): it counts `[`
/// and `{` outside strings, so 64 levels pass, 65 do not, and brackets inside strings never count.
@Suite(Hang.timeLimit(minutes: 1)) struct JSONDepthTests {
    private func deep(_ levels: Int, open: String = "[", close: String = "]") -> String {
        String(repeating: open, count: levels) + String(repeating: close, count: levels)
    }

    private func exceeds(_ text: String, limit: Int = JSONDepth.maximum) -> Bool {
        JSONDepth.exceeds(limit, in: Data(text.utf8))
    }

    @Test func e6_p2_sixtyFourLevelsPassAndSixtyFiveDoNot() {
        #expect(!exceeds(deep(64)))
        #expect(exceeds(deep(65)))
        #expect(!exceeds(#"{"a":"# + deep(63) + "}"))
        #expect(exceeds(#"{"a":"# + deep(64) + "}"))
        #expect(!exceeds("[[]]", limit: 2))
        #expect(exceeds("[[[]]]", limit: 2))
    }

    @Test func e6_p2_closedArraysDoNotAddUp() {
        #expect(!exceeds("[" + Array(repeating: deep(40), count: 3).joined(separator: ",") + "]"))
    }

    @Test func e6_p2_bracketsInsideAStringNeverCount() {
        let brackets = String(repeating: "[", count: 100)
        #expect(!exceeds(#"{"a":""# + brackets + #""}"#))
        // An escaped quote does not end the string.
        #expect(!exceeds(#"{"a":"\""# + brackets + #""}"#))
    }

    @Test func e6_p2_bracketsAfterAStringCount() {
        // The string ends at its closing quote; what follows is counted again.
        #expect(exceeds(#"["x","# + deep(64) + "]"))
        // An escaped backslash does not escape the closing quote.
        #expect(exceeds(#"["x\\","# + deep(64) + "]"))
        // A character after an escape is not an escape itself.
        #expect(exceeds(#"["\n\\","# + deep(64) + "]"))
    }

    @Test func e6_p2_theFirstStringsFirstCharacterIsNotEscaped() {
        // An empty string first: its second quote ends it, so the brackets after it count.
        #expect(exceeds(#"["","# + deep(64) + "]"))
        #expect(exceeds(#"{"":"# + deep(64) + "}"))
    }
}
