import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

/// The journal's own reader never converts an encoding: a line in UTF-16 or UTF-32 is damage.
@Suite(Hang.timeLimit(minutes: 1)) struct ForeignEncodingJournalLineTests {
    @Test func p7_aJournalLineInUTF16OrUTF32IsUnreadable() {
        let samples = ForeignEncodings.samples(of: #"{"op":"remove","id":"Ģ"}"#)
        #expect(samples.count == 7)
        for sample in samples {
            #expect(throws: JSONSyntaxError.self, "\(sample.name)") { try JSONReader.value(from: sample.data) }
        }
        #expect((try? JSONReader.value(from: Data(#"{"op":"remove","id":"Ģ"}"#.utf8))) != nil)
    }
}
