import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 for the event journal (`UntrustedFileTests` plants links for the customer file):
/// a symbolic link planted where the journal belongs is never followed — not by the first append,
/// which opens the file without reading it, and not by the load — and the queue still works.
@Suite(Hang.timeLimit(minutes: 1)) struct JournalSymbolicLinkTests {
    static let fileName = "event-queue.journal"

    /// A file outside the storage folder, and a link to it planted as the journal.
    private func plantLink(in dir: TemporaryDirectory, targetHolding text: String) throws -> URL {
        let target = dir.root.appendingPathComponent("elsewhere.txt")
        try Data(text.utf8).write(to: target)
        try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: dir.file(Self.fileName), withDestinationURL: target)
        return target
    }

    private func isSymbolicLink(_ url: URL) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
    }

    @Test func p7_theFirstAppendNeverWritesThroughAJournalPlantedAsASymbolicLink() throws {
        try TemporaryDirectory.with { dir in
            let target = try plantLink(in: dir, targetHolding: "not yours\n")
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let event = Fixtures.event(0)
            try store.append(event)
            try store.sync()
            #expect(try String(contentsOf: target, encoding: .utf8) == "not yours\n", "the link's target is untouched")
            #expect(store.load() == [event])
            let second = Fixtures.event(1)
            try store.append(second)
            #expect(try String(contentsOf: target, encoding: .utf8) == "not yours\n")
            #expect(!isSymbolicLink(dir.file(Self.fileName)), "the queue lives in a regular file of its own")
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event, second])
        }
    }

    @Test func p7_theLoadNeverReadsThroughAJournalPlantedAsASymbolicLink() throws {
        try TemporaryDirectory.with { dir in
            // The target holds a valid journal: following the link would queue its items.
            let source = try TemporaryDirectory.with { other -> Data in
                let writer = FileEventQueueStore(directory: other.storage, logger: LineLog())
                for event in Fixtures.events(2) { try writer.append(event) }
                try writer.sync()
                return try #require(other.contents(of: Self.fileName))
            }
            let target = try plantLink(in: dir, targetHolding: String(decoding: source, as: UTF8.self))
            let log = LineLog()
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            #expect(store.load().isEmpty, "nothing read through the link")
            #expect(try Data(contentsOf: target) == source, "the link's target is untouched")
            let event = Fixtures.event(5)
            try store.append(event)
            #expect(try Data(contentsOf: target) == source)
            #expect(store.load() == [event])
        }
    }
}
