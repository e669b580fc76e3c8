import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Logging (Behaviour L): the logger's level filter and pluggable sink, and the segments lines' prefix.
@Suite(Hang.timeLimit(minutes: 2)) struct LoggingTests {
    @Test func l2_l3_theLevelFiltersLinesAndTheSinkIsPluggable() {
        let sink = RecordingLogger()
        let handler = SinkSegmentsLogger(level: .warning, sink: sink)
        handler.log(.verbose, "Segments: hidden")
        handler.log(.warning, "Segments: shown")
        handler.logLevel = .none
        handler.log(.error, "Segments: hidden too")
        handler.logLevel = .verbose
        handler.log(.verbose, "Segments: now shown")
        #expect(sink.entries.map { "\($0.level) \($0.message)" } == ["warning Segments: shown", "verbose Segments: now shown"])
        #expect(handler.logLevel == .verbose)
    }

    @Test func l1_l2_everySegmentsLineOfAFailingSessionIsPrefixedAndFailuresAreWarningsOrErrors() async throws {
        let harness = ClientHarness()
        harness.repository.failNextFetches(2, with: SegmentsError(.httpStatus, "down", httpStatus: 503))
        try harness.configure()
        harness.client.addListener(category: .discovery(), includeFirstLoad: true) { _ in }
        harness.client.getSegments(force: true, category: .content()) { _ in }
        await harness.advance(by: 10)
        // Every line is checked, whatever its text: the engine's lines carry "Segments: ", the
        // tracking pipeline's "Tracking: ", and a line with neither prefix fails the test.
        let entries = harness.logger.entries
        let unprefixed = entries.filter { !$0.message.hasPrefix("Segments: ") && !$0.message.hasPrefix("Tracking: ") }
        #expect(unprefixed.isEmpty, "lines without a prefix: \(unprefixed.map(\.message))")
        #expect(entries.filter { $0.message.hasPrefix("Segments: ") }.count >= 3)
        let failures = harness.logger.entries.filter { $0.message.hasPrefix("Segments: Fetch of segments failed: ") }
        #expect(failures.count == 2)
        #expect(failures.allSatisfy { $0.level <= .warning })
    }
}
