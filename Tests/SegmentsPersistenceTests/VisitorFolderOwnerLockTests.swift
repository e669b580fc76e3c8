import Foundation
import SegmentsDomain
@testable import SegmentsPersistence
import SegmentsTesting
import Testing

/// Behaviour P5, rev 4: the visitor-segments folder has an owner, as a client's storage folder
/// has. Two processes saving visitors into one folder each rewrote the whole file from what they
/// had read, so each lost the other's updates. The store now takes the folder's `owner.lock`
/// before it reads or writes; while another process holds it, nothing there is read or written
/// and saves fail with the clear `.storage` error of a taken folder.
///
/// Another process is played by a second lock in this process: `flock` locks belong to an open
/// file description, so a second descriptor of `owner.lock` is refused exactly as another
/// process's would be (`DirectoryLockContentionTests` shows the same with child processes).
@Suite(Hang.timeLimit(minutes: 1)) struct VisitorFolderOwnerLockTests {
    static let theirs = VisitorSegments(country: "DE", customSegments: ["theirs"])
    static let mine = VisitorSegments(country: "US", customSegments: ["mine"])

    /// The file as another process wrote it: `visitors` by id.
    func writeAsAnotherProcess(_ dir: TemporaryDirectory, _ visitors: [String: VisitorSegments]) throws {
        try dir.write(VersionedJSON.encode(VisitorSegmentsRecord(visitors)), to: "visitor-segments.json")
    }

    @Test func p5_aVisitorFolderOwnedByAnotherProcessIsNeitherReadNorWrittenAndSavesSaySo() throws {
        try TemporaryDirectory.with { dir in
            var otherProcess: StorageDirectoryLock? = try StorageDirectoryLock.acquire(dir.storage)
            try writeAsAnotherProcess(dir, ["them": Self.theirs])
            let before = dir.contents(of: "visitor-segments.json")
            let log = LineLog()
            let store = FileVisitorSegmentsStore(directory: dir.storage, logger: log)

            #expect(store.segments(forVisitor: "them") == nil, "not read while another process owns the folder")
            let error = try #require(throws: SegmentsError.self) { try store.save(Self.mine, forVisitor: "me") }
            #expect(error.code == .storage)
            #expect(error.message.contains("in use by another process"))
            #expect(error.message.contains("owner.lock"))
            #expect(throws: SegmentsError.self) { try store.save(Self.mine, forVisitor: "me") }
            #expect(dir.contents(of: "visitor-segments.json") == before, "nothing written")
            #expect(log.problems.filter { $0.contains("in use by another process") }.count == 1, "said once, not at every call")

            // The other process updates its visitor, then ends: this store takes the folder and
            // reads the file afresh, so the other process's update is kept beside this one's.
            let updated = VisitorSegments(country: "DE", customSegments: ["theirs", "later"])
            try writeAsAnotherProcess(dir, ["them": updated])
            #expect(otherProcess != nil)
            otherProcess = nil  // the other process ends: the kernel drops its lock

            try store.save(Self.mine, forVisitor: "me")
            #expect(store.segments(forVisitor: "them") == updated)
            #expect(throws: SegmentsError.self, "held now") { try StorageDirectoryLock.acquire(dir.storage) }
        }
    }

    @Test func p5_aSecondVisitorStoreOnAFolderIsRefusedUntilTheFirstEnds() throws {
        try TemporaryDirectory.with { dir in
            var first: FileVisitorSegmentsStore? = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            try first?.save(Self.theirs, forVisitor: "them")
            let second = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(throws: SegmentsError.self) { try second.save(Self.mine, forVisitor: "me") }

            first = nil  // its owner lock ends with it
            try second.save(Self.mine, forVisitor: "me")
            #expect(second.segments(forVisitor: "them") == Self.theirs)
            #expect(second.segments(forVisitor: "me") == Self.mine)
        }
    }
}
