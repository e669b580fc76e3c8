import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// A storage directory's owner lock can be taken before anything was stored there (see Behaviour
/// P5): taking it creates the directory, however deep.
@Suite(Hang.timeLimit(minutes: 1)) struct DirectoryLockCreationTests {
    @Test func p5_theLockOfADirectoryThatDoesNotExistYetCreatesIt() throws {
        try TemporaryDirectory.with { dir in
            let folder = dir.root.appendingPathComponent("not/yet/there", isDirectory: true)
            #expect(!FileManager.default.fileExists(atPath: folder.path))
            let lock = try StorageDirectoryLock.acquire(folder)
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue)
            withExtendedLifetime(lock) {}
        }
    }
}
