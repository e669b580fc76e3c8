import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Speed figures for Docs/decisions/0001-event-queue-layout.md. Not a timed test: it asserts
/// nothing about time and runs only on request:
/// `SEGMENTS_MEASURE=1 swift test --filter EventQueueMeasurements`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["SEGMENTS_MEASURE"] != nil), .serialized, Hang.timeLimit(minutes: 10))
struct EventQueueMeasurements {
    @Test(arguments: [10, 10_000])
    func measureDurableAppends(queueLength: Int) throws {
        try TemporaryDirectory.with { dir in
            try Self.writeJournal(of: Fixtures.events(queueLength), in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load().count == queueLength)
            let extra = (0..<500).map { Fixtures.event(queueLength + $0) }
            let start = DispatchTime.now()
            for event in extra { try store.append(event) }
            let seconds = Self.seconds(since: start)
            print("MEASURE append at length \(queueLength): \(Int(Double(extra.count) / seconds)) durable events/s (\(Self.ms(seconds / Double(extra.count))) ms each)")
            #expect(store.load().count == queueLength + extra.count)
        }
    }

    @Test func measureAppendAndRemoveCycle() throws {
        try TemporaryDirectory.with { dir in
            // Immediate flushing: each event is appended, uploaded, removed.
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in Fixtures.events(10) { try store.append(event) }
            let extra = (0..<2_000).map { Fixtures.event(10 + $0) }
            let start = DispatchTime.now()
            for event in extra {
                try store.append(event)
                try store.remove(id: event.id)
            }
            let seconds = Self.seconds(since: start)
            print("MEASURE append+remove cycle at length 10: \(Int(Double(extra.count) / seconds)) cycles/s")
        }
    }

    @Test func measureLoadOfTenThousand() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(10_000)
            try Self.writeJournal(of: events, in: dir)
            let bytes = dir.contents(of: "event-queue.journal")?.count ?? 0
            var timings: [Double] = []
            for _ in 0..<5 {
                let start = DispatchTime.now()
                let loaded = FileEventQueueStore(directory: dir.storage, logger: LineLog()).load()
                timings.append(Self.seconds(since: start))
                #expect(loaded.count == events.count)
            }
            print("MEASURE load of 10,000 (\(bytes / 1024) KiB journal): best \(Self.ms(timings.min()!)) ms, median \(Self.ms(timings.sorted()[2])) ms")

            // What every append would cost if the queue were one file rewritten each time.
            var state = JournalState(events: QueuedEvents(events))
            let journal = EventJournal(
                directory: StorageDirectory(url: dir.storage),
                diagnostics: StoreDiagnostics(logger: LineLog(), prefix: "", subject: "", fallback: ""))
            let start = DispatchTime.now()
            try journal.compact(&state)
            print("MEASURE whole-queue rewrite of 10,000 (the cost per append of a single-file layout): \(Self.ms(Self.seconds(since: start))) ms")
            journal.close(&state)
        }
    }

    /// A journal of `events` written in one go, as a compaction writes it.
    private static func writeJournal(of events: [TrackedEvent], in dir: TemporaryDirectory) throws {
        var state = JournalState(events: QueuedEvents(events))
        let journal = EventJournal(
            directory: StorageDirectory(url: dir.storage),
            diagnostics: StoreDiagnostics(logger: LineLog(), prefix: "", subject: "", fallback: ""))
        try StorageDirectory(url: dir.storage).create()
        try journal.compact(&state)
        journal.close(&state)
    }

    private static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    private static func ms(_ seconds: Double) -> String {
        String(format: "%.2f", seconds * 1000)
    }
}
