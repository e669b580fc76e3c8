import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// A sink that keeps what it is given.
private final class KeepingSink: LogSink, Sendable {
    let lines = Locked<[String]>([])
    func write(_ level: LogLevel, _ message: String) { lines.withLock { $0.append("\(level): \(message)") } }
}

/// The live logger's level filter (see Behaviour L1–L3): a line at the configured level or more
/// severe is written, a less severe one is not, and `.none` writes nothing.
@Suite(Hang.timeLimit(minutes: 1)) struct LogLevelFilterTests {
    @Test func l2_l3_aLineAtTheConfiguredLevelIsWrittenAndALessSevereOneIsNot() {
        let sink = KeepingSink()
        let logger = SinkSegmentsLogger(level: .warning, sink: sink)
        logger.log(.error, "e")
        logger.log(.warning, "w")
        logger.log(.verbose, "v")
        #expect(sink.lines.value == ["error: e", "warning: w"])
    }

    @Test func l2_l3_theLevelNoneWritesNothing() {
        let sink = KeepingSink()
        let logger = SinkSegmentsLogger(level: .none, sink: sink)
        for level in LogLevel.allCases { logger.log(level, "x") }
        #expect(sink.lines.value.isEmpty)
    }
}
