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

/// Behaviour P7, P2: a Unix domain socket planted where a store keeps a file is not a regular file.
/// `open` refuses it (ENXIO on Linux, EOPNOTSUPP on Darwin); the store sets it aside unread and
/// starts empty, as for a FIFO — it is not a storage failure that leaves it in place.
@Suite(Hang.timeLimit(minutes: 2)) struct UntrustedSocketTests {
    /// Binds a Unix domain socket and moves it to `name` in the storage directory. It is bound at
    /// a short path first: `sun_path` holds about 100 bytes, less than a temporary folder may need.
    private func plantSocket(named name: String, in dir: TemporaryDirectory) throws {
        try FileManager.default.createDirectory(at: dir.storage, withIntermediateDirectories: true)
        let shortPath = "/tmp/rs-\(UUID().uuidString.prefix(8))"
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        try #require(fd >= 0)
        defer { _ = close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(shortPath.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        guard rename(shortPath, dir.file(name).path) == 0 else {
            _ = unlink(shortPath)
            Issue.record("could not move the socket into place (errno \(errno))")
            return
        }
        var info = stat()
        try #require(lstat(dir.file(name).path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK)
    }

    @Test func p7_aSocketAtTheCustomerFileIsSetAsideAndTheStoreStartsEmpty() throws {
        try TemporaryDirectory.with { dir in
            try plantSocket(named: "customer.json", in: dir)
            let log = LineLog()

            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)

            #expect(log.problems.contains { $0.contains("not a regular file") && $0.contains("corrupt-1") })
            #expect(dir.entries() == ["customer.json.corrupt-1"], "set aside, nothing left at the name")
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            try store.save(Fixtures.identified)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.identified)
        }
    }

    @Test func p7_p2_aSocketAtTheEventQueueFileIsSetAsideAndTheQueueStartsEmpty() throws {
        try TemporaryDirectory.with { dir in
            try plantSocket(named: EventJournal.fileName, in: dir)
            let log = LineLog()
            let store = FileEventQueueStore(directory: dir.storage, logger: log)

            #expect(store.load().isEmpty)

            #expect(log.problems.contains { $0.contains("not a regular file") })
            #expect(dir.entries() == [EventJournal.fileName, "\(EventJournal.fileName).corrupt-1"])
            let event = Fixtures.event(0)
            try store.append(event)
            #expect(FileEventQueueStore(directory: dir.storage, logger: LineLog()).load() == [event])
        }
    }
}
