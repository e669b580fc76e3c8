import Foundation
import RealtimeSegments
import SegmentsDomain
import SegmentsTesting
import Testing

/// The facade's `Logger`, the Exponea SDK's (SPEC X1, L2, L3): its default
/// `log(_:message:fileName:line:funcName:)` writes a line whose level is at most `logLevel`
/// (`level <= logLevel`), never a `.none` line, and answers whether it wrote it.
@Suite(Hang.timeLimit(minutes: 1)) struct ExponeaLoggerLevelTests {
    /// A logger at `level` whose written lines are recorded by a hook (its sink records them too,
    /// so nothing is printed).
    private static func logger(at level: LogLevel) -> (Logger, Recorder<String>) {
        let logger = Logger()
        logger.sink = RecordingLogger()
        logger.logLevel = level
        let written = Recorder<String>()
        _ = logger.addLogHook { written.record($0) }
        return (logger, written)
    }

    @Test func x1_l2_aLineAtTheLoggersOwnLevelIsWrittenAndReportedWritten() {
        let (logger, written) = Self.logger(at: .warning)
        #expect(logger.log(.warning, message: "Segments: at the level") == true)
        #expect(written.all == ["Segments: at the level"])
    }

    @Test func x1_l2_aLineBelowTheLoggersLevelIsWrittenAndReportedWritten() {
        let (logger, written) = Self.logger(at: .warning)
        #expect(logger.log(.error, message: "Segments: an error") == true)
        #expect(written.all == ["Segments: an error"])
    }

    @Test func x1_l2_aLineAboveTheLoggersLevelIsDroppedAndReportedNotWritten() {
        let (logger, written) = Self.logger(at: .warning)
        #expect(logger.log(.verbose, message: "Segments: too detailed") == false)
        #expect(written.all.isEmpty)
    }

    @Test func x1_l2_aNoneLineIsNeverWrittenAndALoggerAtNoneWritesNothing() {
        let (verbose, writtenAtVerbose) = Self.logger(at: .verbose)
        #expect(verbose.log(.none, message: "Segments: none") == false)
        #expect(writtenAtVerbose.all.isEmpty)
        let (silent, writtenAtNone) = Self.logger(at: .none)
        #expect(silent.log(.error, message: "Segments: an error") == false)
        #expect(silent.log(.none, message: "Segments: none") == false)
        #expect(writtenAtNone.all.isEmpty)
    }
}
