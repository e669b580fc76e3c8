import Foundation
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// The buffer a journal line is written into (see Behaviour R2: the caller's one write): whatever
/// the mix of appends, and however often it grows, it hands over exactly the bytes appended.
@Suite(Hang.timeLimit(minutes: 1)) struct LineBytesTests {
    @Test func r2_everyAppendedByteIsKeptInOrderAcrossGrowth() {
        var line = LineBytes(capacity: 16)
        var expected: [UInt8] = []
        for round in 0..<300 {
            let byte = UInt8(truncatingIfNeeded: round)
            line.append(byte)
            expected.append(byte)
            // A chunk that outgrows the buffer more than twice over now and then.
            let chunk = [UInt8](repeating: UInt8(truncatingIfNeeded: round &* 7), count: round % 50 == 0 ? 5_000 : round % 9)
            line.append(contentsOf: chunk)
            expected += chunk
            "a literal".utf8.withContiguousStorageIfAvailable { line.append($0) }
            expected += "a literal".utf8
        }
        #expect(line.count == expected.count)
        #expect(line.withUnsafeBytes { Array($0) } == expected)
        #expect(line.data() == Data(expected))
    }

    @Test func r2_anEmptyLineIsEmptyData() {
        let line = LineBytes()
        #expect(line.data().isEmpty)
    }
}
