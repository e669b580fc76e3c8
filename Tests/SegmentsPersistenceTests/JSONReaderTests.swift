import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The journal's reader must read exactly what `JSONEncoder` writes, agree with `JSONValue`'s own
/// decoding, and reject damage rather than guess (see Behaviour P2).
@Suite(Hang.timeLimit(minutes: 2)) struct JSONReaderTests {
    private func read(_ text: String) throws -> JSONValue {
        try JSONReader.value(from: Data(text.utf8))
    }

    @Test(arguments: [
        #"{"a":1,"b":-2.5,"c":"x","d":[true,false,null],"e":{}}"#,
        #"[1.0, 1e2, -0, 0.1, 1e-7, 1E+300, 9223372036854775807, 10000000000000000000000]"#,
        #"["\"\\\/\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "plain é 😀"]"#,
        " \n\t{ \"spaced\" : [ 1 , 2 ] } \r\n",
        #"{"dup":1,"dup":2}"#,
        "[]", "{}", "\"\"", "0", "-12", "null",
    ])
    func p2_readerAgreesWithJSONValueDecoding(text: String) throws {
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try read(text) == expected)
    }

    @Test func p2_whatTheEncoderWritesReadsBackExactly() throws {
        let value: JSONValue = [
            "int": .int(Int.min), "double": .double(0.1 + 0.2), "tiny": .double(.leastNonzeroMagnitude), "big": 1.7976931348623157e308,
            "text": "line\nbreak \"quoted\" \\ / \u{7} é 😀 \u{FEFF}", "empty": [:], "list": [nil, true, [1, [2]]],
        ]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONReader.value(from: data) == value)
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.", ".5", "-", "1e", "+1",
        "tru", "nul", "falsey", "\"unterminated", "\"bad \\x escape\"", "\"raw\u{1}control\"",
        "\"\\ud83d alone\"", "\"\\ude00\"", "\"\\u12G4\"", "1e999", "[1] [2]", "{\"a\":1}x", "\u{0}",
    ])
    func p2_damageIsRejected(text: String) {
        #expect(throws: JSONSyntaxError.self) { try read(text) }
    }

    @Test func p2_deepNestingIsRejectedNotACrash() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONSyntaxError.self) { try read(deep) }
        let limit = JSONReader.maximumDepth
        let allowed = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect((try? read(allowed)) != nil)
        #expect(throws: JSONSyntaxError.self) { try read("[" + allowed + "]") }
    }
}
