import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The stored files' reader takes whitespace wherever JSON allows it (see Behaviour P2): a file
/// written by hand or by another tool reads as `JSONDecoder` reads it.
@Suite(Hang.timeLimit(minutes: 1)) struct JSONReaderWhitespaceTests {
    @Test(arguments: [
        #"{"a": 1, "b": [1, 2], "c": {"d": "x", "e": null}}"#,
        "{\n  \"a\" : 1 ,\n  \"b\" : [ 1 , 2 ]\n}",
        "[ {\"a\": 1} , {\"b\": 2} ]",
    ])
    func p2_whitespaceAfterACommaOrAroundAColonIsAllowed(text: String) throws {
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try JSONReader.value(from: Data(text.utf8)) == expected)
    }
}
