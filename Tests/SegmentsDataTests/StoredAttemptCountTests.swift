import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Behaviour P7 (issue 23, finding 1): every number read from disk is range-checked, and counts
/// that grow saturate. A planted attempt count of `Int.max` once made the first permanent upload
/// failure overflow and trap at every launch.
@Suite(Hang.timeLimit(minutes: 2)) struct StoredAttemptCountTests {
    typealias Harness = TrackingPipelineTests.Harness

    /// A journal holding a planted line first, then one sound event.
    private static func plantedJournal(failedAttempts: String, timestamp: String = "786000000") -> String {
        let header = #"{"format":"event-queue-journal","version":1}"#
        let planted = #"{"op":"append","event":{"id":"\#(UUID().uuidString)","kind":"event","eventType":"planted","customerIds":{"cookie":"c"},"properties":{},"timestamp":\#(timestamp),"failedAttempts":\#(failedAttempts)}}"#
        let sound = #"{"op":"append","event":{"id":"\#(UUID().uuidString)","kind":"event","eventType":"sound","customerIds":{"cookie":"c"},"properties":{},"timestamp":786000001,"failedAttempts":0}}"#
        return [header, planted, sound, ""].joined(separator: "\n")
    }

    private static func types(_ events: [TrackedEvent]) -> [String] {
        Array(Set(events.map { if case .event(let type) = $0.kind { type } else { "customer" } })).sorted()
    }

    /// Loads `journal` through a new store instance and drives its items to a permanent (404)
    /// upload failure in immediate mode; returns the types of the items whose upload was tried.
    private static func permanentFailureAfterLoading(_ journal: String) async throws -> (uploaded: [String], logs: [String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("p7-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(journal.utf8).write(to: folder.appendingPathComponent("event-queue.journal"))
        let store = FileEventQueueStore(directory: folder, logger: RecordingLogger())
        let harness = Harness(mode: .immediate, store: store)
        harness.uploader.failNextUploads(10, with: Fixture.permanent)
        await harness.scheduler.advance()
        harness.settle()
        return (Self.types(harness.uploader.attempts), harness.logger.messages)
    }

    @Test func p7_aStoredAttemptCountOfIntMaxIsUnreadableAndAPermanentFailureDoesNotTrap() async throws {
        let run = try await Self.permanentFailureAfterLoading(Self.plantedJournal(failedAttempts: String(Int.max)))
        // The planted line was set aside as unreadable (P2); the sound item was tried and failed.
        #expect(run.uploaded == ["sound"])
        #expect(run.logs.contains { $0.contains("Upload failed (1 of 10 tries)") })
    }

    @Test func p7_aNegativeStoredAttemptCountIsUnreadable() async throws {
        let run = try await Self.permanentFailureAfterLoading(Self.plantedJournal(failedAttempts: "-5"))
        #expect(run.uploaded == ["sound"])
    }

    @Test func p7_aStoredTimestampOutOfRangeIsUnreadable() async throws {
        let run = try await Self.permanentFailureAfterLoading(Self.plantedJournal(failedAttempts: "0", timestamp: "1e300"))
        #expect(run.uploaded == ["sound"])
    }

    @Test func p7_anAttemptCountFromAnotherStoreSaturatesInsteadOfTrapping() async {
        // A store other than the SDK's may hand back any count: the pipeline's own arithmetic
        // must not trust it either.
        let event = TrackedEvent(
            kind: .event(type: "huge"), customerIds: Fixture.customerA, properties: [:],
            timestamp: Date(timeIntervalSinceReferenceDate: 0), failedAttempts: Int.max)
        let harness = Harness(mode: .immediate, queued: [event])
        harness.uploader.failNextUploads(1, with: Fixture.permanent)
        await harness.scheduler.advance()
        harness.settle()
        #expect(Self.types(harness.uploader.attempts) == ["huge"])
        #expect(harness.store.load().isEmpty, "dropped after the permanent failure, its count saturated at Int.max")
    }

    @Test func p7_trackingRefusesATimestampTheJournalWouldNotReadBack() async {
        let harness = Harness(mode: .manual)
        #expect(throws: SegmentsError.self) {
            _ = try harness.pipeline.track(
                eventType: "far", properties: [:], timestamp: Date(timeIntervalSinceReferenceDate: 1e300),
                customer: Fixture.customerA)
        }
        #expect(throws: SegmentsError.self) {
            _ = try harness.pipeline.track(
                eventType: "nan", properties: [:], timestamp: Date(timeIntervalSinceReferenceDate: .nan),
                customer: Fixture.customerA)
        }
    }
}
