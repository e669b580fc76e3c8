import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

/// A segments answer cut off inside a key is not JSON: the fast parser answers nothing (leaving it
/// to Foundation, which names the error), never an empty answer read from what arrived.
@Suite(Hang.timeLimit(minutes: 1)) struct SegmentsAnswerTruncationTests {
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
}
