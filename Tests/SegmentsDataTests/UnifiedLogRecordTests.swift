import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// Behaviour L3 (rev 4): on Apple platforms lines go to the unified logging system with customer
/// ids and server text marked private. `UnifiedLogRecord` is the text the Apple-only
/// `UnifiedSegmentsLogger` hands to `os.Logger`; these tests prove its redaction rule on Linux.
@Suite(Hang.timeLimit(minutes: 1)) struct UnifiedLogRecordTests {
    static let customerId = "jane.doe@example.com"
    static let serverText = "category-from-the-server"

    /// The lines that carry a customer id or server text, as the engine writes them.
    static let linesWithPrivateText: [(LogLevel, String)] = [
        (.warning, SegmentsLogText.linkFailed(CustomerIds(["registered": customerId]), verbose: true)),
        (.warning, SegmentsLogText.fetchFailed(SegmentsError(.httpStatus, serverText, httpStatus: 503))),
        (.verbose, "Segments: Segments fetched; changed categories: [\(serverText)]"),
        (.error, "Tracking: \(serverText)"),
    ]

    @Test func l3_customerIdsAndServerTextAreOnlyInThePrivatePart() throws {
        for (level, line) in Self.linesWithPrivateText {
            #expect(line.contains(Self.customerId) || line.contains(Self.serverText))
            let record = try #require(UnifiedLogRecord(level, line))
            #expect(!record.publicText.contains(Self.customerId) && !record.publicText.contains(Self.serverText), "\(line)")
            #expect(!record.redacted.contains(Self.customerId) && !record.redacted.contains(Self.serverText), "\(line)")
            #expect(record.privateText.contains(Self.customerId) || record.privateText.contains(Self.serverText))
            // Nothing is lost: the two parts are the whole line (L1's marker first).
            #expect(record.publicText + " " + record.privateText == line)
        }
        let fetchFailed = try #require(UnifiedLogRecord(.warning, Self.linesWithPrivateText[1].1))
        #expect(fetchFailed.publicText == "Segments:")
        #expect(fetchFailed.redacted == "Segments: <private>")
    }

    @Test func l1_l3_theMarkerIsPublicAndALineWithoutOneIsWhollyPrivate() throws {
        #expect(UnifiedLogRecord(.verbose, "Segments:")?.redacted == "Segments:")
        #expect(UnifiedLogRecord(.verbose, "\(Self.customerId): merged")?.publicText == "")
        #expect(UnifiedLogRecord(.verbose, "\(Self.customerId): merged")?.redacted == "<private>")
        #expect(UnifiedLogRecord(.verbose, "no marker \(Self.customerId)")?.redacted == "<private>")
    }

    @Test func l3_theLevelsMapToTheUnifiedLogTypesAndNoneLogsNothing() {
        #expect(UnifiedLogRecord(.error, "Segments: e")?.type == .error)
        #expect(UnifiedLogRecord(.warning, "Segments: w")?.type == .default)
        #expect(UnifiedLogRecord(.verbose, "Segments: v")?.type == .info)
        #expect(UnifiedLogRecord(.none, "Segments: n") == nil)
        #expect(UnifiedLogRecord.subsystem == "RealtimeSegments" && UnifiedLogRecord.category == "Segments")
    }

    /// The record escapes control characters itself (as the sink in front of it does), so a
    /// forged second line stays inside the private part.
    @Test func l1_l3_aForgedLineStaysInThePrivatePart() throws {
        let record = try #require(UnifiedLogRecord(.warning, "Segments: x\nSegments: forged \u{1B}[31m"))
        #expect(record.publicText == "Segments:")
        #expect(record.privateText == #"x\nSegments: forged \u{1B}[31m"#)
    }

    /// Linux keeps standard output: the default sink is the console logger.
    @Test func l3_onLinuxTheDefaultSinkIsStandardOutput() {
        #if canImport(os)
        #expect(!(SinkSegmentsLogger().sink is ConsoleSegmentsLogger))
        #else
        #expect(SinkSegmentsLogger.defaultSink is ConsoleSegmentsLogger)
        #expect(SinkSegmentsLogger().sink is ConsoleSegmentsLogger)
        #endif
    }
}
