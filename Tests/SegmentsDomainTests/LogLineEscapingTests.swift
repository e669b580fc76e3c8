import SegmentsDomain
import SegmentsTesting
import Testing

/// Behaviour L1 (issue 23, item 7): what a log line quotes cannot put a control character in it.
@Suite(Hang.timeLimit(minutes: 1)) struct LogLineEscapingTests {
    @Test(arguments: [
        ("ESC[31m", "\u{1B}[31m", #"\u{1B}[31m"#),
        ("CR LF TAB", "a\r\nb\tc", #"a\r\nb\tc"#),
        ("NUL BEL", "\u{0}\u{7}", #"\u{0}\u{7}"#),
        ("DEL", "\u{7F}", #"\u{7F}"#),
        ("C1 NEL and CSI", "\u{85}\u{9B}", #"\u{85}\u{9B}"#),
        ("bidi overrides and isolates", "\u{202E}\u{2066}\u{200F}\u{61C}", #"\u{202E}\u{2066}\u{200F}\u{61C}"#),
        ("line and paragraph separators", "\u{2028}\u{2029}", #"\u{2028}\u{2029}"#),
    ])
    func l1_controlCharactersAreWrittenAsVisibleEscapes(name: String, raw: String, escaped: String) {
        #expect(LogLineEscaping.escaped("Segments: [" + raw + "]") == "Segments: [" + escaped + "]", "\(name)")
    }

    @Test func l1_printableTextIsKeptAsItIsAndEscapingTwiceChangesNothing() {
        let text = #"Segments: café, 東京, emoji 🙂, a \ backslash and "quotes""#
        #expect(LogLineEscaping.escaped(text) == text)
        let once = LogLineEscaping.escaped("a\u{1B}b\nc")
        #expect(LogLineEscaping.escaped(once) == once)
    }

    @Test func l1_aWrappedLoggerGetsEscapedLinesAndItsLevelIsTheWrappedOne() {
        let captured = RecordingLogger(level: .warning)
        let logger = EscapingSegmentsLogger.wrapping(captured)

        logger.log(.warning, "Segments: x\r\nSegments: forged")
        logger.log(.verbose, "dropped")

        #expect(captured.messages == [#"Segments: x\r\nSegments: forged"#])
        #expect(logger.logLevel == .warning)
        let twice = EscapingSegmentsLogger.wrapping(logger) as? EscapingSegmentsLogger
        #expect(twice?.base is RecordingLogger, "wrapping twice keeps one wrapper around the app's logger")
    }
}
