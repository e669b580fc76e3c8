import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The check every JSON text passes before a decoder sees it (Behaviour P7 rev 4, P9): UTF-8 only,
/// then the depth limit. Foundation's decoders convert UTF-16 and UTF-32, which the byte scan of
/// ``JSONDepth`` cannot follow, so those are refused by their byte-order mark or zero bytes.
@Suite(Hang.timeLimit(minutes: 1)) struct JSONTextTests {
    @Test func p7_eachForeignEncodingIsNamedAndRefused() {
        let names = ForeignEncodings.samples(of: #"{"a":["Ģ"]}"#).map { sample in
            (sample.name, JSONText.refusal(of: sample.data))
        }
        let expected: [(String, String)] = [
            ("UTF-16LE", "UTF-16LE"), ("UTF-16BE", "UTF-16BE"), ("UTF-32LE", "UTF-32LE"), ("UTF-32BE", "UTF-32BE"),
            ("UTF-16LE with BOM", "UTF-16LE"), ("UTF-16BE with BOM", "UTF-16BE"), ("UTF-32LE with BOM", "UTF-32LE"),
        ]
        #expect(names.count == expected.count)
        for ((name, refusal), (expectedName, encoding)) in zip(names, expected) {
            #expect(name == expectedName)
            #expect(refusal == .notUTF8(encoding: encoding), "\(name)")
        }
        #expect(JSONText.refusal(of: Data([0x00, 0x00, 0xFE, 0xFF, 0x00, 0x00, 0x00, 0x5B])) == .notUTF8(encoding: "UTF-32BE"))
    }

    /// The trick of finding 1 of the round-4 review: in UTF-16LE, `Ģ` is `22 01`, so the depth scan
    /// alone saw one level where the decoder would read 500.
    @Test func p7_p9_theDepthScanAloneIsFooledAndTheCheckIsNot() throws {
        let hidden = try #require(ForeignEncodings.samples(of: ForeignEncodings.deeplyNested(levels: 500)).first)
        #expect(hidden.name == "UTF-16LE")
        #expect(!JSONDepth.exceeds(in: hidden.data), "the byte scan is fooled")
        #expect(JSONText.refusal(of: hidden.data) == .notUTF8(encoding: "UTF-16LE"))
    }

    @Test func p7_aZeroByteAnywhereIsNotUTF8() {
        #expect(JSONText.refusal(of: Data(#"{"a":"b"}"#.utf8) + Data([0])) == .notUTF8(encoding: "text with zero bytes"))
        #expect(JSONText.refusal(of: Data([0x5B, 0x00])) == .notUTF8(encoding: "UTF-16LE"))
        #expect(JSONText.refusal(of: Data([0x00])) == .notUTF8(encoding: "UTF-16BE"))
    }

    @Test func p7_p9_utf8TextPassesAndIsRefusedOnlyForItsDepth() {
        #expect(JSONText.refusal(of: Data(#"{"discovery":[{"id":"Ģ – ☃ 🎉"}]}"#.utf8)) == nil)
        #expect(JSONText.refusal(of: Data([0xEF, 0xBB, 0xBF]) + Data("[]".utf8)) == nil, "a UTF-8 byte-order mark stays UTF-8")
        #expect(JSONText.refusal(of: Data()) == nil)
        let deep = Data((String(repeating: "[", count: 65) + String(repeating: "]", count: 65)).utf8)
        #expect(JSONText.refusal(of: deep) == .tooDeep(limit: 64))
        #expect(JSONText.refusal(of: deep, depthLimit: 65) == nil)
        #expect(JSONText.Refusal.tooDeep(limit: 64).description == "nests deeper than 64 levels")
        #expect(JSONText.Refusal.notUTF8(encoding: "UTF-16LE").description == "is UTF-16LE, not UTF-8")
    }
}
