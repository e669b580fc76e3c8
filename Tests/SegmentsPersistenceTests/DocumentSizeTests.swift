import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P7 rev 4 (issue 31, findings 5 and 6): the customer file is read up to 64 KiB, a
/// document is parsed once, and no document is written larger than its reader accepts — the write
/// is refused with `.storage` and the previous file kept (before, the next start set such a file
/// aside as too large, and everything in it was lost).
@Suite(Hang.timeLimit(minutes: 2)) struct DocumentSizeTests {
    /// A valid customer document padded with `"padding":[0,0,…]` to about `bytes`.
    static func paddedCustomer(bytes: Int) -> Data {
        let zeros = Array(repeating: "0", count: bytes / 2).joined(separator: ",")
        return Data(#"{"customerIds":{"cookie":"c-1"},"padding":[\#(zeros)],"version":1}"#.utf8)
    }

    @Test func p7_aCustomerFileLargerThan64KiBIsSetAsideUnread() throws {
        try TemporaryDirectory.with { dir in
            let file = Self.paddedCustomer(bytes: 100 << 10)
            let decoded = try VersionedJSON.decode(CustomerRecord.self, from: file)
            #expect(decoded.customer == CustomerIds(cookie: "c-1"), "valid, with junk")
            try dir.write(file, to: FileCustomerStore.fileName)
            let log = LineLog()
            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)
            #expect(dir.contents(of: FileCustomerStore.fileName + ".corrupt-1") == file, "set aside as it was")
            #expect(FileCustomerStore.maximumFileSize == 64 << 10)
        }
    }

    @Test func p7_aCustomerFileUnderTheCapWithJunkStillLoads() throws {
        try TemporaryDirectory.with { dir in
            let file = Self.paddedCustomer(bytes: 60 << 10)
            #expect(file.count <= FileCustomerStore.maximumFileSize)
            try dir.write(file, to: FileCustomerStore.fileName)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == CustomerIds(cookie: "c-1"))
        }
    }

    @Test(arguments: [
        (#"{"version":1,"customerIds":{"cookie":"c"}} trailing"#, StoredFileProblem.notJSON),
        (#"{"version":1,"customerIds":{"cookie":"c"}"#, .notJSON),
        (#"[1,2]"#, .wrongShape),
        (#"{"customerIds":{"cookie":"c"}}"#, .wrongShape),
        (#"{"version":1,"customerIds":{"cookie":7}}"#, .wrongShape),
        (#"{"version":0,"customerIds":{"cookie":"c"}}"#, .wrongShape),
        (#"{"version":2,"customerIds":{"cookie":"c"}}"#, .futureVersion(2)),
    ])
    func p2_theOneParseStillTellsTheKindsOfDamageApart(text: String, problem: StoredFileProblem) {
        do throws(DecodeFailure) {
            _ = try VersionedJSON.decode(CustomerRecord.self, from: Data(text.utf8))
            Issue.record("\(text) was read")
        } catch {
            #expect(error.problem == problem, "\(text)")
        }
    }

    @Test func p7_aCustomerTooLargeToBeReadBackIsNotSavedAndThePreviousFileIsKept() throws {
        try TemporaryDirectory.with { dir in
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            let saved = Fixtures.identified
            try store.save(saved)
            let before = dir.contents(of: FileCustomerStore.fileName)
            let huge = saved.merging(hardIds: ["registered": String(repeating: "x", count: 70 << 10)])
            let log = LineLog()
            let refusing = FileCustomerStore(directory: dir.storage, logger: log)
            #expect(refusing.load() == saved)
            #expect {
                try refusing.save(huge)
            } throws: { error in
                (error as? SegmentsError)?.code == .storage && (error as? SegmentsError)?.underlying is DocumentTooLarge
            }
            #expect(dir.contents(of: FileCustomerStore.fileName) == before, "the previous file is kept, not deleted")
            #expect(refusing.load() == saved)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == saved, "a restart reads it")
            #expect(log.problems.contains { $0.contains("read back at the next start") })
        }
    }

    @Test func p7_aBaselineTooLargeToBeReadBackIsNotSavedAndThePreviousFileIsKept() throws {
        try TemporaryDirectory.with { dir in
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            try store.save(Fixtures.baseline)
            let before = dir.contents(of: FileSegmentBaselineStore.fileName)
            let name = String(repeating: "n", count: 90 << 10)
            let segments = (0..<100).map { Segment(id: "s\($0)", segmentationId: "g", attributes: ["name": name]) }
            let huge = SegmentBaseline(
                snapshot: SegmentSnapshot(
                    customer: Fixtures.identified, segments: [.discovery(): segments],
                    fetchedAt: Date(timeIntervalSinceReferenceDate: 1)))
            #expect {
                try store.save(huge)
            } throws: { error in
                (error as? SegmentsError)?.code == .storage
            }
            #expect(dir.contents(of: FileSegmentBaselineStore.fileName) == before, "the previous file is kept, not deleted")
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
        }
    }

    @Test func p7_visitorSegmentsTooLargeToBeReadBackAreNotSavedAndEveryOtherVisitorKeepsTheirs() throws {
        try TemporaryDirectory.with { dir in
            // One store at a time holds the folder's owner lock (Behaviour P5): each "restart" ends
            // the store before it.
            var store: FileVisitorSegmentsStore? = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            let jane = VisitorSegments(country: "CZ", customSegments: ["vip"])
            try store?.save(jane, forVisitor: "jane")
            let before = dir.contents(of: FileVisitorSegmentsStore.fileName)
            // 9 MiB of custom segments for one visitor: past the 8 MiB the file is read up to.
            let id = String(repeating: "s", count: 90 << 10)
            let huge = VisitorSegments(customSegments: (0..<100).map { "\($0)-\(id)" })
            #expect {
                try store?.save(huge, forVisitor: "joe")
            } throws: { error in
                (error as? SegmentsError)?.code == .storage
            }
            #expect(dir.contents(of: FileVisitorSegmentsStore.fileName) == before, "nothing was written")
            store = nil
            var restarted: FileVisitorSegmentsStore? = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(restarted?.segments(forVisitor: "jane") == jane, "the other visitors' segments are not lost")
            #expect(restarted?.segments(forVisitor: "joe") == nil)
            // The store still works for saves that fit.
            try restarted?.save(VisitorSegments(customSegments: ["beta"]), forVisitor: "joe")
            restarted = nil
            let reread = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(reread.segments(forVisitor: "joe")?.customSegments == ["beta"])
        }
    }
}
