import Foundation
import RealtimeSegments
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Issue 31, finding 7 (Behaviour P5, rev 4): an audience client's visitor-segments folder had no
/// owner lock, so two processes saving visitors there each rewrote the file from what they had
/// read and lost the other's updates. The folder's `owner.lock` is held by the client's visitor
/// store now; while another process holds it, the client neither reads nor writes the folder, and
/// its saves fail with the `.storage` error of a folder in use (logged: the registry's calls never
/// throw).
///
/// Another process is played by a second descriptor of the lock file in this process: `flock`
/// excludes it as it would another process's.
@Suite(Hang.timeLimit(minutes: 1)) struct VisitorFolderOwnerEndToEndTests {
    @Test func p5_aVisitorFolderAnotherProcessOwnsIsLeftAloneAndTheSavesSaySo() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("visitor-segments.json")
        var otherProcess: StorageDirectoryLock? = try StorageDirectoryLock.acquire(directory.url)
        let harness = AudienceHarness(visitorStorage: .directory(directory.url))
        let jane = harness.client.createUserContext(userId: "jane")

        jane.setDefaultSegments(["country": "US"])
        harness.client.visitorSegments.waitUntilSaved()

        #expect(
            harness.logger.messages.contains {
                $0.contains("Could not save visitor segments") && $0.contains("in use by another process") && $0.contains("owner.lock")
            })
        #expect(!FileManager.default.fileExists(atPath: file.path), "nothing written into the other process's folder")

        #expect(otherProcess != nil)
        otherProcess = nil  // the other process ends
        jane.setCustomSegments(["vip"])
        harness.client.visitorSegments.waitUntilSaved()

        let saved = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        #expect(saved.contains("jane") && saved.contains("vip") && saved.contains("US"))
        #expect(throws: SegmentsError.self, "the client owns the folder now") { try StorageDirectoryLock.acquire(directory.url) }
    }
}
