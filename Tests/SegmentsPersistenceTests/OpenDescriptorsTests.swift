import Foundation
import SegmentsTesting
import Testing

/// The Darwin branch of `OpenDescriptors` reads `fcntl(F_GETPATH)`'s NUL-terminated buffer with
/// `OpenDescriptors.path(fromNulTerminated:)`; that branch cannot run here, the helper can.
@Suite(Hang.timeLimit(minutes: 1)) struct OpenDescriptorsTests {
    private static func buffer(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } }

    @Test func aPathEndsAtTheFirstNulAndKeepsUTF8() {
        // "/tmp/é" then NUL then what an earlier, longer path left in the buffer.
        let bytes = Array("/tmp/é".utf8) + [0] + Array("/left/over".utf8) + [0, 0]
        #expect(OpenDescriptors.path(fromNulTerminated: Self.buffer(bytes)) == "/tmp/é")
        #expect(OpenDescriptors.path(fromNulTerminated: Self.buffer([0, 47])) == "")
        #expect(OpenDescriptors.path(fromNulTerminated: Self.buffer(Array("/a".utf8))) == "/a")
    }
}
