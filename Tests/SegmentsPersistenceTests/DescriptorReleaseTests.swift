import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Every descriptor a store opens is closed once it is no longer needed (see Behaviour E4, P2,
/// P5): a rewrite closes the replaced file's, a refused lock closes the lock file's, and a
/// compaction leaves exactly one open, on the new file. Counted with ``OpenDescriptors``
/// (`/proc/self/fd` on Linux, `F_GETPATH` on Darwin), only for this test's folder, so tests running
/// in parallel do not disturb the figures.
@Suite(Hang.timeLimit(minutes: 2)) struct DescriptorReleaseTests {
    static let fileName = EventJournal.fileName

    private func descriptors(under dir: TemporaryDirectory) -> Int {
        OpenDescriptors.count(under: dir.root)
    }

    /// A store's first append after a torn line, then a restart whose first call is a removal:
    /// the removal reads the queue whole and rewrites it to drop the torn line, closing the
    /// descriptor of the file it replaced.
    @Test(.enabled(if: OpenDescriptors.available))
    func p2_e4_theSynchronousRewriteOfADamagedQueueClosesTheReplacedFile() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                for event in stored { try store.append(event) }
                try store.sync()
            }
            let valid = try #require(dir.contents(of: Self.fileName))
            try dir.write(valid + Data(#"{"op":"append","event":{"id":"#.utf8), to: Self.fileName)
            let later = Fixtures.event(3)
            do {
                // Ends the torn line with its newline and header: a dead line a rewrite drops.
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                try store.append(later)
            }
            #expect(descriptors(under: dir) == 0)
            do {
                let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
                try store.remove(id: stored[0].id)
                let text = try #require(dir.text(of: Self.fileName))
                #expect(!text.contains(#"{"op":"append","event":{"id":"# + "\n"), "rewritten without the torn line")
                #expect(descriptors(under: dir) == 1, "only the new file, open for appending")
                #expect(store.load() == Array(stored.dropFirst()) + [later])
            }
            #expect(descriptors(under: dir) == 0)
        }
    }

    /// A background compaction re-opens the new file at once: right after it one descriptor is
    /// open, and the next append and sync pay no open and no read.
    @Test(.enabled(if: OpenDescriptors.available))
    func e4_r1_aCompactionLeavesTheNewFileOpenSoTheNextAppendDoesNotReopenIt() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(600)
            try FileEventQueueStoreTests.writeJournal(events, in: dir)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == events)
            let before = try #require(dir.contents(of: Self.fileName)?.count)
            // Each removal kills two lines: the 256th brings the dead lines to 512, outnumbering
            // the live ones, and the file is compacted.
            for event in events.prefix(256) { try store.remove(id: event.id) }
            let after = try #require(dir.contents(of: Self.fileName)?.count)
            #expect(after < before * 3 / 4, "it did compact")
            #expect(descriptors(under: dir) == 1, "the compacted file, open for appending")
            let next = Fixtures.event(600)
            let counts = try FileOperationLog.counting(under: dir.root.path) {
                try store.append(next)
                try store.sync()
            }.counts
            #expect(counts.opens == 0 && counts.reads == 0, "no re-open, no re-read")
            #expect(counts.writes == 1 && counts.syncs == 1)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == Array(events.dropFirst(256)) + [next])
        }
    }

    /// Two open file descriptions exclude each other's `flock`, even in one process: the second
    /// acquisition is refused and closes the lock file it opened.
    @Test(.enabled(if: OpenDescriptors.available))
    func p5_aRefusedLockClosesTheLockFileItOpened() throws {
        try TemporaryDirectory.with { dir in
            do {
                let held = try StorageDirectoryLock.acquire(dir.storage)
                #expect(descriptors(under: dir) == 1)
                for _ in 0..<3 {
                    #expect(throws: SegmentsError.self) { try StorageDirectoryLock.acquire(dir.storage) }
                }
                #expect(descriptors(under: dir) == 1, "only the holder's")
                withExtendedLifetime(held) {}
            }
            #expect(descriptors(under: dir) == 0)
            let again = try StorageDirectoryLock.acquire(dir.storage)
            withExtendedLifetime(again) {}
        }
    }
}
