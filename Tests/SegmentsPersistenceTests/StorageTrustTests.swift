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

/// Behaviour P7 (issue 23, item 8): a storage directory writable by its group, or whose own name is
/// a symbolic link, is refused like a world-writable one; a stored file with a second name (a hard
/// link) is set aside unread (P2), and the event journal is never appended through one. A symbolic
/// link higher up the path (`/var` → `/private/var` on macOS) is followed: the decision is in
/// Docs/Security.md.
@Suite(Hang.timeLimit(minutes: 2)) struct StorageTrustTests {
    static let customerFile = "customer.json"
    static let journalFile = "event-queue.journal"
    static let validCustomer = #"{"version":1,"customerIds":{"cookie":"planted","registered":"victim"}}"#

    private static func linkCount(_ url: URL) -> Int {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return -1 }
        return Int(info.st_nlink)
    }

    @Test func p7_aGroupWritableStorageDirectoryIsRefused() throws {
        try TemporaryDirectory.with { dir in
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(chmod(dir.storage.path, 0o770) == 0)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())

            let error = #expect(throws: SegmentsError.self) { try store.save(CustomerIds(cookie: "c")) }

            #expect(error?.code == .storage)
            #expect(error?.message.contains("writable by its group") == true, "\(String(describing: error))")
            #expect(error.map { !"\($0)".contains(dir.root.path) } == true, "no path in the error")
            #expect(dir.contents(of: Self.customerFile) == nil)
        }
    }

    @Test func p7_aStorageDirectoryWhoseOwnNameIsASymbolicLinkIsRefused() throws {
        try TemporaryDirectory.with { dir in
            let elsewhere = dir.root.appendingPathComponent("elsewhere", isDirectory: true)
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            #expect(chmod(elsewhere.path, 0o700) == 0)
            try FileManager.default.createSymbolicLink(at: dir.storage, withDestinationURL: elsewhere)
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())

            let error = #expect(throws: SegmentsError.self) { try store.save(CustomerIds(cookie: "c")) }

            #expect(error?.code == .storage)
            #expect(error?.message.contains("symbolic link") == true, "\(String(describing: error))")
            #expect(error.map { !"\($0)".contains(dir.root.path) } == true, "no path in the error")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing written through the link")
        }
    }

    @Test func p7_aCustomerFileIsNotReadThroughAStorageDirectoryWhoseOwnNameIsASymbolicLink() throws {
        try TemporaryDirectory.with { dir in
            let elsewhere = dir.root.appendingPathComponent("elsewhere", isDirectory: true)
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            #expect(chmod(elsewhere.path, 0o700) == 0)
            try Data(Self.validCustomer.utf8).write(to: elsewhere.appendingPathComponent(Self.customerFile))
            try FileManager.default.createSymbolicLink(at: dir.storage, withDestinationURL: elsewhere)
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil, "nothing read through the link")

            #expect(log.problems.contains { $0.contains("symbolic link") }, "\(log.problems)")
            #expect(try String(contentsOf: elsewhere.appendingPathComponent(Self.customerFile), encoding: .utf8) == Self.validCustomer)
        }
    }

    /// The decision's other half: a link above the storage directory is the platform's or the
    /// user's (macOS's `/var`), and is followed.
    @Test func p7_aSymbolicLinkHigherUpThePathIsFollowed() throws {
        try TemporaryDirectory.with { dir in
            let real = dir.root.appendingPathComponent("real", isDirectory: true)
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
            let linked = dir.root.appendingPathComponent("linked", isDirectory: true)
            try FileManager.default.createSymbolicLink(at: linked, withDestinationURL: real)
            let storage = linked.appendingPathComponent("storage", isDirectory: true)

            try FileCustomerStore(directory: storage, logger: LineLog()).save(CustomerIds(cookie: "through-a-parent-link"))

            #expect(FileCustomerStore(directory: storage, logger: LineLog()).load()?.cookie == "through-a-parent-link")
            #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("storage/\(Self.customerFile)").path))
        }
    }

    @Test func p7_p2_aHardLinkedCustomerFileIsSetAsideUnread() throws {
        try TemporaryDirectory.with { dir in
            let outside = dir.root.appendingPathComponent("outside.json")
            try Data(Self.validCustomer.utf8).write(to: outside)
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(link(outside.path, dir.file(Self.customerFile).path) == 0)
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil, "nothing read through the second name")

            #expect(log.problems.contains { $0.contains("hard link") && $0.contains("corrupt-1") }, "\(log.problems)")
            #expect(dir.entries() == ["\(Self.customerFile).corrupt-1"])
            #expect(try String(contentsOf: outside, encoding: .utf8) == Self.validCustomer, "the other name's file is untouched")
        }
    }

    @Test func p7_theFirstAppendNeverWritesThroughAHardLinkedJournal() throws {
        try TemporaryDirectory.with { dir in
            let outside = dir.root.appendingPathComponent("outside.txt")
            try Data("not yours\n".utf8).write(to: outside)
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(link(outside.path, dir.file(Self.journalFile).path) == 0)
            let store = FileEventQueueStore(directory: dir.storage, logger: LineLog())
            let event = Fixtures.event(0)

            try store.append(event)
            try store.sync()

            #expect(try String(contentsOf: outside, encoding: .utf8) == "not yours\n", "nothing appended through the link")
            #expect(Self.linkCount(dir.file(Self.journalFile)) == 1, "the queue lives in a file of its own")
            #expect(store.load() == [event])
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event])
        }
    }

    @Test func p7_p2_theLoadNeverReadsAHardLinkedJournal() throws {
        try TemporaryDirectory.with { dir in
            // The other name holds a valid journal: reading through the link would queue its items.
            let source = try TemporaryDirectory.with { other -> Data in
                let writer = FileEventQueueStore(directory: other.storage, logger: LineLog())
                for event in Fixtures.events(2) { try writer.append(event) }
                try writer.sync()
                return try #require(other.contents(of: Self.journalFile))
            }
            let outside = dir.root.appendingPathComponent("outside.journal")
            try source.write(to: outside)
            try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
            #expect(link(outside.path, dir.file(Self.journalFile).path) == 0)
            let log = LineLog()
            let store = FileEventQueueStore(directory: dir.storage, logger: log)

            #expect(store.load().isEmpty, "nothing read through the link")

            #expect(log.problems.contains { $0.contains("hard link") }, "\(log.problems)")
            #expect(try Data(contentsOf: outside) == source, "the other name's file is untouched")
            let event = Fixtures.event(5)
            try store.append(event)
            #expect(try Data(contentsOf: outside) == source)
            #expect(store.load() == [event])
        }
    }
}
