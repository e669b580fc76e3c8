import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The live logger's level filter (see Behaviour L1–L3): a line at the configured level or more
/// severe is written, a less severe one is not, and `.none` writes nothing.
@Suite(Hang.timeLimit(minutes: 1)) struct LogLevelFilterTests {
    @Test func l2_l3_aLineAtTheConfiguredLevelIsWrittenAndALessSevereOneIsNot() {
        let sink = RecordingLogger()
        let logger = SinkSegmentsLogger(level: .warning, sink: sink)
        logger.log(.error, "e")
        logger.log(.warning, "w")
        logger.log(.verbose, "v")
        #expect(sink.entries.map { "\($0.level): \($0.message)" } == ["error: e", "warning: w"])
    }

    @Test func l2_l3_theLevelNoneWritesNothing() {
        let sink = RecordingLogger()
        let logger = SinkSegmentsLogger(level: .none, sink: sink)
        for level in LogLevel.allCases { logger.log(level, "x") }
        #expect(sink.entries.isEmpty)
    }

    /// The sink is a logger too: its own level filters what it is handed.
    @Test func l3_aSinkBelowVerboseDropsTheLinesAboveItsOwnLevel() {
        let sink = RecordingLogger(level: .warning)
        let logger = SinkSegmentsLogger(level: .verbose, sink: sink)
        logger.log(.verbose, "v")
        logger.log(.warning, "w")
        #expect(sink.messages == ["w"])
    }

    /// The console logger's line: prefixed, its control characters escaped, nothing for `.none`.
    @Test func l1_l3_theConsoleLineIsPrefixedAndEscaped() {
        #expect(ConsoleSegmentsLogger.line(.warning, "a\u{1B}[31m\nb") == #"[RealtimeSegments] warning: a\u{1B}[31m\nb"#)
        #expect(ConsoleSegmentsLogger().logLevel == .verbose)
        #expect(!ConsoleSegmentsLogger().isEnabled(.none))
    }

    /// A sink that logs through the logger it belongs to when it goes away.
    private final class LogsWhenReleased: SegmentsLogger, Sendable {
        private let owner = Locked<WeakLogger>(WeakLogger())
        final class WeakLogger: @unchecked Sendable { weak var logger: SinkSegmentsLogger? }
        func attach(to logger: SinkSegmentsLogger) { owner.value.logger = logger }
        var logLevel: LogLevel { .verbose }
        func log(_ level: LogLevel, _ message: String) {}
        deinit { owner.value.logger?.log(.error, "the replaced sink is gone") }
    }

    @Test func l3_aReplacedSinkIsReleasedOutsideTheLoggersLock() {
        let logger = SinkSegmentsLogger(level: .verbose, sink: RecordingLogger())
        do {
            let first = LogsWhenReleased()
            first.attach(to: logger)
            logger.sink = first
        }
        let next = RecordingLogger()
        let done = DispatchSemaphore(value: 0)
        // On a thread of its own: released under the lock, the old sink's deinit would wait for
        // that same lock for ever.
        Thread.detachNewThread {
            logger.sink = next
            done.signal()
        }
        #expect(done.wait(timeout: .now() + Hang.scaled(30)) == .success, "replacing the sink deadlocked")
        #expect(next.messages == ["the replaced sink is gone"])
    }
}
