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

/// Writes the system interrupts, cuts short or refuses (injected through the ``FileOperationLog``
/// test seam): an append whose `write` was interrupted or wrote nothing is retried and stored; one
/// the disk refuses throws, and nothing queued before or after it is lost (see Behaviour E4).
@Suite(Hang.timeLimit(minutes: 1)) struct JournalWriteFaultTests {
    @Test func e4_anAppendWhoseWriteIsInterruptedIsRetriedAndStored() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(2)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            _ = store.load()
            try store.append(events[0])
            try FileOperationLog.failing([InjectedFileFault(.write, errno: EINTR)], under: dir.root.path) {
                try store.append(events[1])
            }
            try store.sync()
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events)
        }
    }

    @Test func e4_anAppendWhoseWriteWroteNothingIsRetriedAndStored() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(2)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            _ = store.load()
            try store.append(events[0])
            try FileOperationLog.failing([InjectedFileFault(.write, errno: 0)], under: dir.root.path) {
                try store.append(events[1])
            }
            try store.sync()
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == events)
        }
    }

    @Test func e4_anAppendTheDiskRefusesThrowsAndLosesNothingQueuedAroundIt() throws {
        try TemporaryDirectory.with { dir in
            let events = Fixtures.events(3)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            _ = store.load()
            try store.append(events[0])
            let error = FileOperationLog.failing([InjectedFileFault(.write, errno: ENOSPC)], under: dir.root.path) {
                #expect(throws: SegmentsError.self) { try store.append(events[1]) }
            }
            #expect(error?.code == .storage)
            try store.append(events[2])
            try store.sync()
            #expect(store.load() == [events[0], events[2]])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [events[0], events[2]])
        }
    }
}
