import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P5 and P4 (issue 23, item 11): the ODP folder an older version named after the API
/// key is renamed to its hashed name only under the old folder's owner lock — the mechanism the
/// case-rule migration uses (`StorageLocation.moveEarlierFolder`) — so a process still using it
/// keeps it.
@Suite(Hang.timeLimit(minutes: 1)) struct KeyNamedFolderMoveTests {
    private static func folders(in dir: TemporaryDirectory) -> (legacy: URL, current: URL) {
        (dir.root.appendingPathComponent("odp-SECRET-KEY", isDirectory: true),
         dir.root.appendingPathComponent("odp-0123456789abcdef", isDirectory: true))
    }

    @Test func p5_aKeyNamedFolderWhoseLockAnotherOwnerHoldsIsNotRenamed() throws {
        try TemporaryDirectory.with { dir in
            let (legacy, current) = Self.folders(in: dir)
            try FileCustomerStore(directory: legacy, logger: LineLog()).save(CustomerIds(cookie: "in-use"))
            let held = try StorageDirectoryLock.acquire(legacy)

            let outcome = StorageLocation.moveLegacyFolder(legacy, to: current)

            #expect(outcome == .earlierFolderInUse)
            #expect(FileManager.default.fileExists(atPath: legacy.path), "the owner's folder stays where it is")
            #expect(!FileManager.default.fileExists(atPath: current.path))
            #expect(FileCustomerStore(directory: legacy, logger: LineLog()).load()?.cookie == "in-use")
            withExtendedLifetime(held) {}
        }
    }

    @Test func p5_p4_aKeyNamedFolderNobodyHoldsIsRenamedAndItsLockFollowsIt() throws {
        try TemporaryDirectory.with { dir in
            let (legacy, current) = Self.folders(in: dir)
            try FileCustomerStore(directory: legacy, logger: LineLog()).save(CustomerIds(cookie: "before-the-upgrade"))

            #expect(StorageLocation.moveLegacyFolder(legacy, to: current) == .moved)

            #expect(!FileManager.default.fileExists(atPath: legacy.path))
            #expect(FileCustomerStore(directory: current, logger: LineLog()).load()?.cookie == "before-the-upgrade")
            // The lock taken for the move was released: the folder can be owned again.
            let owner = try StorageDirectoryLock.acquire(current)
            withExtendedLifetime(owner) {}
        }
    }

    /// Both names hold a folder: both are left as they are. Setting the old one aside, as the case
    /// migration does, would keep the key in the set-aside name.
    @Test func p4_whenBothFoldersExistTheKeyNamedOneIsLeftNotSetAside() throws {
        try TemporaryDirectory.with { dir in
            let (legacy, current) = Self.folders(in: dir)
            try FileCustomerStore(directory: legacy, logger: LineLog()).save(CustomerIds(cookie: "old"))
            try FileCustomerStore(directory: current, logger: LineLog()).save(CustomerIds(cookie: "new"))

            #expect(StorageLocation.moveLegacyFolder(legacy, to: current) == .nothingToMove)

            #expect(FileCustomerStore(directory: current, logger: LineLog()).load()?.cookie == "new")
            #expect(FileCustomerStore(directory: legacy, logger: LineLog()).load()?.cookie == "old")
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.root.path)
            #expect(!names.contains { $0.contains(StorageLocation.setAsideSuffix) }, "\(names)")
        }
    }
}
