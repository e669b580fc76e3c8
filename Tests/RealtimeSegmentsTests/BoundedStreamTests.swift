import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// An `AsyncStream` nobody reads must not grow without bound (issue 13, finding 7): the visitor
/// change stream keeps the newest ``VisitorSegmentsRegistry/changeBufferSize`` unread changes.
@Suite(Hang.timeLimit(minutes: 2)) struct BoundedStreamTests {
    @Test func v3_aSlowReaderKeepsTheNewestChangesOnly() async {
        let registry = VisitorSegmentsRegistry(store: InMemoryVisitorSegmentsStore(), logger: RecordingLogger())
        let stream = registry.changes(forVisitor: "v")
        let calls = VisitorSegmentsRegistry.changeBufferSize * 4
        for index in 0..<calls {
            registry.setCustomSegments(["s\(index)"], forVisitor: "v")
        }
        registry.setDefaultSegments(["country": "CZ"], forVisitor: "v")

        var received: [VisitorSegmentsChange] = []
        for await change in stream {
            received.append(change)
            if change.kind == .defaultSegments { break }
        }

        #expect(received.count == VisitorSegmentsRegistry.changeBufferSize)
        #expect(received.last?.segments == registry.segments(forVisitor: "v"), "the newest state arrives")
        #expect(received.first?.segments.customSegments.last == "s\(calls - VisitorSegmentsRegistry.changeBufferSize + 1)")
    }
}
