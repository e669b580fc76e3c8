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

/// Reading a stored file when the system interrupts the read (a signal: `EINTR`, injected through
/// the ``FileOperationLog`` test seam): the read is retried and the file loads whole, it is not
/// taken for an unreadable one (see Behaviour P7, P2).
@Suite(Hang.timeLimit(minutes: 1)) struct StoredFileReadFaultTests {
    @Test func p7_aCustomerFileWhoseReadIsInterruptedIsReadAgainAndLoads() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)

            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.read, errno: EINTR)], under: dir.root.path) {
                FileCustomerStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded == Fixtures.identified)
            #expect(log.problems.isEmpty, "\(log.problems)")
        }
    }

    @Test func p2_aCustomerFileWhoseReadFailsIsReportedAndNotTakenForACustomer() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)

            let log = LineLog(level: .warning)
            let loaded = FileOperationLog.failing([InjectedFileFault(.read, errno: EIO)], under: dir.root.path) {
                FileCustomerStore(directory: dir.storage, logger: log).load()
            }

            #expect(loaded == nil)
            #expect(log.problems.contains { $0.contains("read") }, "\(log.problems)")
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.identified, "the file is kept")
        }
    }

    /// The event queue's load reads the file with `pread` (`POSIXFile.bytes(of:in:)`): an
    /// interrupted `pread` is made again, so the load costs what an uninterrupted one does — two
    /// `open`s and one `pread` of the file's length (ExactFileOperationCountTests) — rather than
    /// taking the file for unreadable and reading it again whole.
    @Test func p7_r1_anEventQueueWhoseLoadReadIsInterruptedIsReadAgainInPlace() throws {
        try TemporaryDirectory.with { dir in
            let stored = Fixtures.events(3)
            let writer = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            for event in stored { try writer.append(event) }
            try writer.sync()
            let valid = try #require(dir.contents(of: EventJournal.fileName))

            let log = LineLog(level: .warning)
            let store = FileEventQueueStore(directory: dir.storage, logger: log)
            let (loaded, counts) = FileOperationLog.counting(under: dir.root.path) {
                FileOperationLog.failing([InjectedFileFault(.read, errno: EINTR)], under: dir.root.path) { store.load() }
            }

            #expect(loaded == stored)
            #expect(counts.opens == 2, "one open for appending, one to read: \(counts)")
            #expect(counts.reads == 1 && counts.bytesRead == valid.count, "\(counts)")
            #expect(log.problems.isEmpty, "\(log.problems)")
            #expect(dir.contents(of: EventJournal.fileName) == valid)
        }
    }
}
