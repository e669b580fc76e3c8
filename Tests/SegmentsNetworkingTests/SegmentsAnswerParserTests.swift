import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// The segments answer's own parser (the fast path of `BloomreachSegmentsDecoder`): whenever it
/// answers, it answers what `JSONDecoder` reads, and it leaves every other body to the generic
/// decoding, which names what is wrong.
@Suite(Hang.timeLimit(minutes: 2)) struct SegmentsAnswerParserTests {
    private static func foundation(_ body: String) -> [String: SegmentsAnswerParser.Category]? {
        (try? JSONDecoder().decode([String: [[String: String]]].self, from: Data(body.utf8)))?
            .mapValues(SegmentsAnswerParser.Category.init(wireObjects:))
    }

    @Test(arguments: [
        "{}",
        " \t\r\n{ } \n",
        #"{"discovery":[]}"#,
        #"{"discovery":[{}]}"#,
        #"{"discovery":[{"id":"a","segmentation_id":"g"}],"content":[]}"#,
        #"{"discovery":[{"id":"a"},{"segmentation_id":"g"},{"id":"b","segmentation_id":"g","id2":"x"}]}"#,
        #"{ "discovery" : [ { "id" : "a" , "segmentation_id" : "g" , "name" : "VIP" } , { "id":"b","segmentation_id":"g"} ] , "x":[ ] }"#,
        #"{"":[{"":""}]}"#,
    ])
    func wire_answersWhatJSONDecoderReads(body: String) throws {
        let parsed = try #require(SegmentsAnswerParser.parse(Data(body.utf8)))
        #expect(parsed == Self.foundation(body))
    }

    /// Not the shape, not JSON, or a form left to Foundation: `nil`, never a different answer.
    @Test(arguments: [
        "",
        " ",
        "[]",
        "null",
        #"{"discovery":[]"#,
        #"{"discovery":[]}x"#,
        #"{"discovery":[]},"#,
        #"{"discovery":[],}"#,
        #"{"discovery":[{"id":"a",}]}"#,
        #"{"discovery":[{"id":"a"},]}"#,
        #"{"discovery":{}}"#,
        #"{"discovery":[[]]}"#,
        #"{"discovery":[{"id":1}]}"#,
        #"{"discovery":[{"id":null}]}"#,
        #"{"discovery":[{"id":true}]}"#,
        #"{discovery:[]}"#,
        #"{'discovery':[]}"#,
        #"{"discovery":[{"id":"a\"b"}]}"#,
        #"{"discovery":[{"id":"a\u0041"}]}"#,
        "{\"discovery\":[{\"id\":\"caf\u{E9}\"}]}",
        "{\"discovery\":[{\"id\":\"a\u{1}b\"}]}",
        #"{"discovery":[],"discovery":[]}"#,
        #"{"discovery":[{"id":"a","id":"b"}]}"#,
        #"{"discovery":[{"segmentation_id":"a","segmentation_id":"b"}]}"#,
        #"{"discovery":[{"name":"a","name":"b"}]}"#,
        "\u{FEFF}{}",
    ])
    func wire_leavesEverythingElseToFoundation(body: String) {
        #expect(SegmentsAnswerParser.parse(Data(body.utf8)) == nil)
    }

    /// Bodies the parser leaves to Foundation still decode as before when they are valid.
    @Test func wire_escapesAndNonASCIIStillDecode() throws {
        let body = #"{"discovery":[{"id":"a\"b","segmentation_id":"caf\u00e9","name":"Zürich"}]}"#
        let segments = try BloomreachSegmentsDecoder.decode(Data(body.utf8), logger: LogRecorder())
        #expect(segments == [.discovery(): [Segment(id: "a\"b", segmentationId: "café", attributes: ["name": "Zürich"])]])
    }

    /// Invalid UTF-8 inside a string is never read as text by the parser.
    @Test func wire_invalidUTF8IsLeftToFoundation() {
        var body = Data(#"{"discovery":[{"id":""#.utf8)
        body.append(contentsOf: [0xC3, 0x28])
        body.append(contentsOf: Data(#""}]}"#.utf8))
        #expect(SegmentsAnswerParser.parse(body) == nil)
    }
}
