import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// What a load, a save and a repair cost in file calls, counted exactly (see Behaviour R1, P2):
/// the figures the cost tests rely on are the calls made, one `open`, `rename` or `link` each.
@Suite(Hang.timeLimit(minutes: 2)) struct ExactFileOperationCountTests {
    static let fileName = EventJournal.fileName

    /// The file calls `body` makes under `dir`.
    private func calls<T>(in dir: TemporaryDirectory, _ body: () throws -> T) rethrows -> (result: T, counts: FileOperationCounts) {
        try FileOperationLog.counting(under: dir.root.path, body)
    }

    /// A sound journal holding `events`, written by a store that then went away.
    private func journal(with events: [TrackedEvent], in dir: TemporaryDirectory) throws -> Data {
        let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
        for event in events { try store.append(event) }
        try store.sync()
        return try #require(dir.contents(of: Self.fileName))
    }

    /// Loading a sound queue opens it for appending (one `open`, which finds it) and reads it once
    /// through a second descriptor (one `open`, one `pread` of exactly its length): nothing is
    /// created, written, renamed or linked.
    @Test func r1_r3_loadingASoundQueueIsTwoOpensAndOneReadOfItsLength() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let valid = try journal(with: events, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let (loaded, counts) = calls(in: dir) { store.load() }
            #expect(loaded == events)
            #expect(counts.opens == 2, "one open for appending, one to read")
            #expect(counts.creations == 0)
            #expect(counts.reads == 1, "one pread of the snapshot, no read to the end of the file")
            #expect(counts.bytesRead == valid.count)
            #expect(counts.writes == 0 && counts.syncs == 0 && counts.truncations == 0)
            #expect(counts.renames == 0 && counts.links == 0)
        }
    }

    /// On a fresh install the load's open finds nothing and creates the file (two `open`s, one
    /// creating), then writes its header in place: one write, no temporary file renamed over it.
    @Test func r1_p1_loadingOnAFreshInstallCreatesTheFileInPlaceWithoutARename() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let (loaded, counts) = calls(in: dir) { store.load() }
            #expect(loaded == [])
            #expect(counts.opens == 2, "an open that finds nothing, then the exclusive creation")
            #expect(counts.creations == 1)
            #expect(counts.writes == 1 && counts.bytesWritten == JournalHeader.line.count, "the header alone")
            #expect(counts.reads == 0)
            #expect(counts.renames == 0 && counts.links == 0)
            #expect(dir.contents(of: Self.fileName) == JournalHeader.line)
        }
    }

    /// Loading the customer file (at `configure`, on the caller's thread) opens it once and reads
    /// it to its end: one `read` of its bytes, one that finds the end. Nothing is written.
    @Test func r3_p7_loadingTheCustomerFileIsOneOpenAndOneReadToItsEnd() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let file = try #require(dir.contents(of: "customer.json"))
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())

            let (loaded, counts) = calls(in: dir) { store.load() }

            #expect(loaded == Fixtures.identified)
            #expect(counts.opens == 1, "\(counts)")
            #expect(counts.reads == 2 && counts.bytesRead == file.count, "its bytes, then the end: \(counts)")
            #expect(counts.creations == 0 && counts.writes == 0 && counts.renames == 0, "\(counts)")
        }
    }

    /// A save writes a temporary file and renames it over the customer file: one rename.
    @Test func r1_p1_aCustomerSaveIsOneCreationOneSyncAndOneRename() throws {
        try TemporaryDirectory.with { dir in
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            let counts = try calls(in: dir) { try store.save(Fixtures.identified) }.counts
            #expect(counts.creations == 1, "the temporary file")
            #expect(counts.syncs == 1)
            #expect(counts.renames == 1, "renamed over customer.json once")
            #expect(counts.links == 0)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.identified)
        }
    }

    /// A queue with an unreadable line is kept aside by one hard link (the damaged file stays in
    /// place until the clean one is renamed over it): one link, one rename.
    @Test func p2_aQueueWithAnUnreadableLineIsKeptAsideByOneLinkAndReplacedByOneRename() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(2)
            let damaged = try journal(with: events, in: dir) + Data("not a record\n".utf8)
            try dir.write(damaged, to: Self.fileName)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let (loaded, counts) = calls(in: dir) { store.load() }
            #expect(loaded == events)
            #expect(counts.links == 1, "the damaged file's second name")
            #expect(counts.renames == 1, "the clean queue renamed over it")
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)
        }
    }
}
