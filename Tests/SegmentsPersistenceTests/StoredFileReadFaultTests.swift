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
}
