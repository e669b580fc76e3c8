import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour P1: the folders a store creates are owner-only (0700) exactly, whatever the process's
/// umask — one that removes the owner's own bits included, which `mkdir` alone would obey.
@Suite(Hang.timeLimit(minutes: 2)) struct DirectoryModeUnderUmaskTests {
    /// The umask is the process's, so tests running in parallel create their folders under it too
    /// while it is set. It removes only the owner's search bit, for the few calls below; root (whom
    /// this test needs) searches any folder whatever its bits, so those tests are not disturbed.
    @Test(.enabled(if: geteuid() == 0, "a parallel test's folders briefly lack the owner's search bit; harmless only for root"))
    func p1_aStoreCreatesItsFoldersOwnerOnlyEvenUnderAUmaskThatRemovesOwnerBits() throws {
        try TemporaryDirectory.with { dir in
            let folder = dir.storage.appendingPathComponent("integration", isDirectory: true)
            let previous = umask(0o100)
            let created = Result { try StorageDirectory(url: folder).create() }
            umask(previous)
            try created.get()
            #expect(try TemporaryDirectory.permissions(of: dir.storage) == 0o700, "the missing parent")
            #expect(try TemporaryDirectory.permissions(of: folder) == 0o700, "the folder itself")
            // And a store works in it.
            try FileCustomerStore(directory: folder, logger: LineLog()).save(Fixtures.identified)
            #expect(FileCustomerStore(directory: folder, logger: LineLog()).load() == Fixtures.identified)
        }
    }

    /// The same for the event queue's file, which the first append creates without reading it
    /// (`open` with `O_CREAT` obeys the umask): owner-only read and write (0600) exactly. The umask
    /// removes the owner's write bit for that one call; root (whom this test needs) writes any
    /// file whatever its bits, so tests running meanwhile are not disturbed.
    @Test(.enabled(if: geteuid() == 0, "a parallel test's files briefly lack the owner's write bit; harmless only for root"))
    func p1_theFirstAppendCreatesTheQueueFileOwnerOnlyEvenUnderAUmaskThatRemovesOwnerBits() throws {
        try TemporaryDirectory.with { dir in
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let event = Fixtures.event(0)
            let previous = umask(0o200)
            let appended = Result { try store.append(event) }
            umask(previous)
            try appended.get()

            #expect(try TemporaryDirectory.permissions(of: dir.file("event-queue.journal")) == 0o600)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event])
        }
    }
}
