import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Behaviour L1 (issue 23, item 7): text from the server reaches log lines with its control
/// characters escaped, so a category name cannot forge a second `Segments:` line, move a
/// terminal's cursor or recolour it — whatever logger the app plugged in.
@Suite(Hang.timeLimit(minutes: 1)) struct LogEscapingTests {
    let harness = ClientHarness()
    static let segments = "/webxp/projects/TOKEN/segments"
    /// A category name with a terminal escape (`ESC[31m`), a carriage return and a line feed, and a
    /// forged line after them; its one segment has no `id`, so the decoder warns about it by name.
    static let answer =
        #"{"evil\u001b[31m\r\nSegments: forged":[{"segmentation_id":"g1"}],"discovery":[{"id":"s1","segmentation_id":"g1"}]}"#

    @Test func l1_aCategoryNameWithEscapesAndLineBreaksFromTheServerIsLoggedEscaped() async throws {
        let exponea = Exponea(client: harness.client)
        harness.transport.respond(to: Self.segments, with: .json(Self.answer))
        exponea.configure(
            Exponea.ProjectSettings(projectToken: "TOKEN", authorization: .token("KEY"), baseUrl: "http://127.0.0.1:9"),
            flushingSetup: Exponea.FlushingSetup(mode: .manual))

        let read = await withCheckedContinuation { continuation in
            exponea.getSegments(force: true, category: .discovery()) { continuation.resume(returning: $0) }
            Task { await harness.advance() }
        }

        #expect(read == [Fixture.s1])
        let messages = harness.logger.messages
        let warning = messages.first { $0.contains("Ignored 1 segment(s)") }
        #expect(warning?.contains(#"'evil\u{1B}[31m\r\nSegments: forged'"#) == true, "\(messages)")
        for message in messages {
            #expect(!message.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\r" || $0 == "\n" }, "\(message)")
        }
        #expect(!messages.contains { $0.hasPrefix("forged") || $0.hasPrefix("Segments: forged") })
    }

    /// The default sink escapes too, for a logger used without a runtime (the CLI's, a store's).
    @Test func l1_theSinkLoggerEscapesWhatItIsGivenDirectly() {
        let sink = RecordingLogger()
        let logger = SinkSegmentsLogger(level: .verbose, sink: sink)

        logger.log(.warning, "Segments: a\u{1B}]0;title\u{7}b\u{85}c\u{202E}d\r\ne\u{7F}")

        #expect(sink.messages == [#"Segments: a\u{1B}]0;title\u{7}b\u{85}c\u{202E}d\r\ne\u{7F}"#])
    }
}
