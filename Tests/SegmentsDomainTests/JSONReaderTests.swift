import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The journal's reader must read exactly what `JSONEncoder` writes, agree with `JSONValue`'s own
/// decoding, and reject damage rather than guess (see Behaviour P2).
@Suite(Hang.timeLimit(minutes: 2)) struct JSONReaderTests {
    private func read(_ text: String) throws -> JSONValue {
        try JSONReader.value(from: Data(text.utf8))
    }

    /// The expected values are written out rather than taken from the platform's `JSONDecoder`,
    /// which is not one decoder: before macOS 14 / iOS 17 it is built on `JSONSerialization`, so a
    /// comparison with it would test the OS version, not the reader. They are `JSONValue`'s rules:
    /// a repeated key keeps its first value, a whole number that fits `Int` is `.int`.
    @Test(arguments: [
        (#"{"a":1,"b":-2.5,"c":"x","d":[true,false,null],"e":{}}"#,
         ["a": 1, "b": -2.5, "c": "x", "d": [true, false, nil], "e": .object([:])] as JSONValue),
        // A whole number that fits `Int` is `.int` whatever its spelling; -0 is 0; 10^22 does not fit.
        (#"[1.0, 1e2, -0, 0.1, 1e-7, 1E+300, 9223372036854775807, 10000000000000000000000]"#,
         [.int(1), .int(100), .int(0), .double(0.1), .double(1e-7), .double(1e300), .int(Int.max), .double(1e22)]),
        (#"["\"\\\/\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "plain é 😀"]"#,
         ["\"\\/\u{8}\u{C}\n\r\t", "é€", "😀", "plain é 😀"]),
        (" \n\t{ \"spaced\" : [ 1 , 2 ] } \r\n", ["spaced": [1, 2]]),
        (#"{"dup":1,"dup":2}"#, ["dup": 1]),
        ("[]", .array([])), ("{}", .object([:])), ("\"\"", ""), ("0", 0), ("-12", -12), ("null", nil),
    ] as [(String, JSONValue)])
    func p2_readerAgreesWithJSONValueDecoding(text: String, expected: JSONValue) throws {
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
