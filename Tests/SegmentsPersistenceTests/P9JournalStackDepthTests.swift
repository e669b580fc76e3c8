import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P9 for the event journal: its lines are written and read back on a 512 KiB thread
/// (Apple's secondary-thread stack, imposed here on Linux) at the deepest nesting the SDK accepts,
/// and a deeper line — planted or damaged — is refused on load, so it never reaches an upload.
@Suite(Hang.timeLimit(minutes: 2)) struct P9JournalStackDepthTests {
    static let fileName = "event-queue.journal"

    /// An event whose properties nest `levels` deep (the properties object is level 1), as nested
    /// objects or nested arrays.
    static func event(nesting levels: Int, arrays: Bool = false) -> TrackedEvent {
        var value: JSONValue = .string("bottom")
        for _ in 0..<(levels - 1) {
            value = arrays ? .array([value]) : .object(["k": value])
        }
        return TrackedEvent(
            kind: .event(type: "deep"), customerIds: CustomerIds(cookie: "c"), properties: ["k": value],
            timestamp: Date(timeIntervalSinceReferenceDate: 786_000_000.5))
    }

    /// How deeply `data`'s arrays and objects nest.
    static func depth(of data: Data) -> Int {
        var depth = 0
        while JSONDepth.exceeds(depth, in: data) { depth += 1 }
        return depth
    }

    @Test(arguments: [false, true])
    func p9_anEventAtTheLimitIsWrittenAndReadBackOnA512KiBThread(arrays: Bool) async throws {
        let event = Self.event(nesting: ReplayableEvent.maximumDepth, arrays: arrays)
        let line = try await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            try JournalEntry.append(event).line()
        }
        #expect(Self.depth(of: line) == JSONDepth.envelopeMaximum, "the line nests the event's 64 levels and 2 more")
        let read = try await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
            try JournalEntry(line: line).event?.trackedEvent()
        }
        #expect(read == event)
        #expect(JSONReader.maximumDepth == JSONDepth.envelopeMaximum)
    }

    /// The journal's half; the reader's (a text at its limit read on a 512 KiB thread, one level
    /// deeper refused) is `JSONReaderTextMemberTests`' in the Domain tests, beside the reader.
    @Test func p9_anEventOneLevelDeeperThanTheLimitIsRefusedWhenItsJournalLineIsMade() throws {
        #expect(throws: SegmentsError.self) {
            try JournalEntry.append(Self.event(nesting: ReplayableEvent.maximumDepth + 1)).line()
        }
    }

    @Test func p9_aPlantedEventNestedOneHundredAndTwentyLevelsIsRefusedOnLoad() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let kept = [Self.event(nesting: 3), Self.event(nesting: ReplayableEvent.maximumDepth)]
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in kept { try store.append(event) }
            var journal = try #require(dir.contents(of: Self.fileName))
            // Planted between the two: its line is built by hand, as the SDK refuses to write it.
            let planted = try Self.plantedLine(Self.event(nesting: 120))
            #expect(Self.depth(of: planted) == 122)
            let lines = journal.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
            journal = Data(([lines[0], lines[1], planted] + lines[2...]).joined(separator: [UInt8(ascii: "\n")]))
            try dir.write(journal, to: Self.fileName)

            let log = LineLog(level: .warning)
            let loaded = await onDedicatedThread(stackSize: appleSecondaryThreadStackSize) {
                FileEventQueueStore(directory: dir.storage, logger: log).load()
            }
            #expect(loaded == kept, "the planted event is not loaded, so it is never uploaded")
            #expect(log.problems.count == 1)
            #expect(log.problems.first?.contains("Skipped 1 unreadable records") == true)
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == journal, "the file is set aside as found")
        }
    }

    @Test func e6_p9_aLoadedEventFailingTheReplayCheckIsRefusedOnLoad() async throws {
        try await TemporaryDirectory.withAsync { dir in
            let kept = Self.event(nesting: 2)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            try store.append(kept)
            // Shallow but over the 64 KiB a new item may have: refused by `trackEvent`, so a line
            // holding it was not written by the SDK.
            let large = TrackedEvent(
                kind: .event(type: "large"), customerIds: CustomerIds(cookie: "c"),
                properties: ["text": .string(String(repeating: "x", count: ReplayableEvent.maximumEncodedSize))],
                timestamp: Date(timeIntervalSinceReferenceDate: 0))
            var journal = try #require(dir.contents(of: Self.fileName))
            journal += try Self.plantedLine(large) + Data([UInt8(ascii: "\n")])
            try dir.write(journal, to: Self.fileName)

            let log = LineLog(level: .warning)
            let loaded = FileEventQueueStore(directory: dir.storage, logger: log).load()
            #expect(loaded == [kept])
            #expect(log.problems.first?.contains("Skipped 1 unreadable records") == true)
        }
    }

    /// The journal line of `event` without the writer's depth limit, newline excluded.
    static func plantedLine(_ event: TrackedEvent) throws -> Data {
        try JournalLineWriter.appendLine(for: event, maximumDepth: .max).dropLast()
    }
}
