import Foundation
import SegmentsDomain
import Testing

@Suite struct SegmentTests {
    @Test func m1_decodesWireObjectKeepingExtraFields() throws {
        let json = #"{"id":"a","segmentation_id":"g","name":"VIP"}"#
        let segment = try JSONDecoder().decode(Segment.self, from: Data(json.utf8))
        #expect(segment == Segment(id: "a", segmentationId: "g", attributes: ["name": "VIP"]))
    }
}
