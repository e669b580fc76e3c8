import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour P7 (and P2): stored files are untrusted. Only a regular file owned by the user, within a
/// size cap, is read; anything else is set aside unread and the store starts empty — never a hang,
/// a crash, memory exhaustion, or a read through a symbolic link.
@Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct UntrustedFileTests {
    static let customerFile = "customer.json"
    static let validCustomer = #"{"version":1,"customerIds":{"cookie":"planted","registered":"victim"}}"#

    /// Runs `load` on another thread and fails the test instead of hanging when it blocks.
    private static func returnsPromptly<T: Sendable>(_ load: @escaping @Sendable () -> T) -> T? {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.withLock { $0 = load() }
            done.signal()
        }
        guard done.wait(timeout: .now() + Hang.scaled(20)) == .success else { return nil }
        return result.value
    }

    @Test func p7_theValidFixtureLoadsWhenItIsAPlainFile() throws {
        try TemporaryDirectory.with { dir in
            try dir.write(Self.validCustomer, to: Self.customerFile)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load()?.cookie == "planted")
        }
    }

    @Test func p7_aSymbolicLinkIsSetAsideNotFollowed() throws {
        try TemporaryDirectory.with { dir in
            let target = dir.root.appendingPathComponent("elsewhere.json")
            try Data(Self.validCustomer.utf8).write(to: target)
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: dir.file(Self.customerFile), withDestinationURL: target)
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)

            #expect(log.problems.contains { $0.contains("symbolic link") && $0.contains("corrupt-1") })
            #expect(dir.entries() == ["\(Self.customerFile).corrupt-1"])
            #expect(try String(contentsOf: target, encoding: .utf8) == Self.validCustomer, "the target is untouched")
        }
    }

    @Test func p7_aFIFODoesNotHangTheStore() throws {
        try TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(mkfifo(dir.file(Self.customerFile).path, 0o600) == 0)
            let log = LineLog()
            let storage = dir.storage

            let loaded = Self.returnsPromptly { FileCustomerStore(directory: storage, logger: log).load() }

            #expect(loaded == .some(nil), "load() returned, with no customer")
            #expect(log.problems.contains { $0.contains("not a regular file") })
            #expect(dir.entries() == ["\(Self.customerFile).corrupt-1"])
        }
    }

    @Test func p7_aHugeSparseFileIsSetAsideUnread() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("", to: Self.customerFile)
            #expect(truncate(dir.file(Self.customerFile).path, 64 << 30) == 0)  // 64 GiB, no blocks
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)

            #expect(log.problems.contains { $0.contains("larger than the size limit") })
            #expect(dir.entries() == ["\(Self.customerFile).corrupt-1"])
        }
    }

    @Test func p7_aJournalOverItsCapIsSetAsideAndTheQueueStartsEmpty() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("", to: "event-queue.journal")
            #expect(truncate(dir.file("event-queue.journal").path, 1 << 40) == 0)
            let log = LineLog()
            let store = FileEventQueueStore(directory: dir.storage, logger: log)

            #expect(store.load().isEmpty)

            #expect(log.problems.contains { $0.contains("larger than the size limit") })
            #expect(dir.entries().contains("event-queue.journal.corrupt-1"))
        }
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func p7_anotherUsersFileIsSetAsideUnread() throws {
        try TemporaryDirectory.with { dir in
            try dir.write(Self.validCustomer, to: Self.customerFile)
            #expect(chown(dir.file(Self.customerFile).path, 65_534, 65_534) == 0)
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)

            // Once in a loaded full run the load gave nil without this line: say what it logged.
            #expect(log.problems.contains { $0.contains("owned by another user") }, "logged: \(log.lines)")
        }
    }

    @Test func p7_aPlantedHugeCorruptNumberCannotCrashTheNextSetAside() throws {
        try TemporaryDirectory.with { dir in
            try dir.write("planted", to: "\(Self.customerFile).corrupt-9223372036854775807")
            try dir.write("{damaged", to: Self.customerFile)

            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == nil)

            #expect(dir.contents(of: "\(Self.customerFile).corrupt-1") == Data("{damaged".utf8))
            #expect(dir.text(of: "\(Self.customerFile).corrupt-9223372036854775807") == "planted", "not ours: kept")
        }
    }

    @Test func p7_aWorldWritableStorageDirectoryIsRefused() throws {
        try TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(chmod(dir.storage.path, 0o777) == 0)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())

            let error = #expect(throws: SegmentsError.self) { try store.save(CustomerIds(cookie: "c")) }

            #expect(error?.code == .storage)
            #expect(error?.message.contains("writable by every user") == true)
            #expect(error.map { !"\($0)".contains(dir.root.path) } == true, "no path in the error")
            #expect(dir.contents(of: Self.customerFile) == nil)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func p7_anotherUsersStorageDirectoryIsRefused() throws {
        try TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(chown(dir.storage.path, 65_534, 65_534) == 0)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())

            let error = #expect(throws: SegmentsError.self) { try store.save(CustomerIds(cookie: "c")) }

            #expect(error?.message.contains("another user") == true)
        }
    }
}

/// A planted, deeply nested stored file is set aside before a recursive decoder sees it.
@Suite(Hang.timeLimit(minutes: 2)) struct DeepStoredFileTests {
    @Test func p7_aDeeplyNestedFileIsSetAsideNotDecoded() throws {
        try TemporaryDirectory.with { dir in
            let deep = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
            try dir.write(#"{"version":1,"customerIds":{"cookie":"c","x":\#(deep)}}"#, to: "customer.json")
            let storage = dir.storage
            let log = LineLog()
            // Apple's secondary-thread stack: the recursive decoders would overflow it.
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                _ = FileCustomerStore(directory: storage, logger: log).load()
                done.signal()
            }
            thread.stackSize = 512 * 1024
            thread.start()
            done.wait()

            #expect(log.problems.contains { $0.contains("unexpected content") && $0.contains("corrupt-1") })
        }
    }
}
