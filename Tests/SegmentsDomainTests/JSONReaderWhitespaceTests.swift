import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The stored files' reader takes whitespace wherever JSON allows it (see Behaviour P2): a file
/// written by hand or by another tool reads as it would without the whitespace. (The expected
/// values are written out: the platform's `JSONDecoder` differs before macOS 14 / iOS 17.)
@Suite(Hang.timeLimit(minutes: 1)) struct JSONReaderWhitespaceTests {
    @Test(arguments: [
        (#"{"a": 1, "b": [1, 2], "c": {"d": "x", "e": null}}"#,
         ["a": 1, "b": [1, 2], "c": ["d": "x", "e": nil]] as JSONValue),
        ("{\n  \"a\" : 1 ,\n  \"b\" : [ 1 , 2 ]\n}", ["a": 1, "b": [1, 2]]),
        ("[ {\"a\": 1} , {\"b\": 2} ]", [["a": 1], ["b": 2]]),
    ] as [(String, JSONValue)])
    func p2_whitespaceAfterACommaOrAroundAColonIsAllowed(text: String, expected: JSONValue) throws {
        #expect(try JSONReader.value(from: Data(text.utf8)) == expected)
    }
}
