import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// Bodies the segments answer's fast parser must leave to Foundation (which names the error): it
/// answers nothing rather than something Foundation would not read.
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentsAnswerFallbackTests {
    /// Cut off inside a key: not JSON, never an empty answer read from what arrived.
    @Test(arguments: [
        #"{""#,
        #"{"disc"#,
        #"{"discovery":[],"con"#,
        #"{"discovery":[{"i"#,
        #"{"discovery":[{"id":"a","segmentation_id":"g","na"#,
    ])
    func wire_aBodyCutInsideAKeyIsLeftToFoundation(body: String) {
        #expect((try? JSONSerialization.jsonObject(with: Data(body.utf8))) == nil)
        #expect(SegmentsAnswerParser.parse(Data(body.utf8)) == nil)
    }

    /// A byte from 0x80 on inside a string is UTF-8 the parser does not read (a lone continuation
    /// byte is not text at all).
    @Test(arguments: [0x80, 0x81, 0xBF] as [UInt8])
    func wire_aStringWithAByteFrom0x80OnIsLeftToFoundation(byte: UInt8) {
        var body = Data(#"{"discovery":[{"id":"a"#.utf8)
        body.append(byte)
        body.append(contentsOf: Data(#"","segmentation_id":"g"}]}"#.utf8))
        #expect(SegmentsAnswerParser.parse(body) == nil)
    }
}
