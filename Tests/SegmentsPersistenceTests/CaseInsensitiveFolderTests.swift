import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsPersistence

/// Behaviour P10: storage folder names are safe on case-insensitive volumes (APFS and HFS+ by
/// default), and a folder named by an earlier version is found after the upgrade.
///
/// Linux's file systems are case-sensitive, so these tests impose Apple's condition: a volume that
/// folds case opens one folder for every spelling of a name, which the tests stand for by using
/// the lower-case spelling of every name (`folded`); or they give one folder two names.
@Suite(Hang.timeLimit(minutes: 2)) struct CaseInsensitiveFolderTests {
    /// The folder a case-folding volume opens for `name` (folder names are ASCII: folding is
    /// lowering).
    private func folded(_ name: String, in root: URL) -> URL {
        root.appendingPathComponent(name.lowercased(), isDirectory: true)
    }

    @Test func p10_idsThatDifferOnlyInLetterCaseNeverNameOneFolderOnACaseInsensitiveVolume() {
        let ids = ["project-ABC", "project-abc", "project-Abc", "stream-X1", "stream-x1", "a/B", "a/b", "A_b", "a_b", String(repeating: "Q", count: 80), String(repeating: "q", count: 80)]
        let folded = ids.map { StorageLocation.folderName(forIntegrationId: $0).lowercased() }
        #expect(Set(folded).count == ids.count, "names that fold to one: \(folded)")
    }

    @Test func p10_folderNamesAreLowerCaseAndAnIdWithoutUpperCaseKeepsItsName() {
        #expect(StorageLocation.folderName(forIntegrationId: "project-abc") == "project-abc")
        #expect(StorageLocation.folderName(forIntegrationId: "a/b") == StorageLocation.earlierFolderName(forIntegrationId: "a/b"))
        for id in ["project-ABC", "Stream-1", "custom-MyApp", "a/B", String(repeating: "Z", count: 100)] {
            let name = StorageLocation.folderName(forIntegrationId: id)
            #expect(name == name.lowercased(), "\(name)")
            #expect(name.count <= StorageLocation.maximumFolderNameLength + 17)
            #expect(name != StorageLocation.earlierFolderName(forIntegrationId: id))
        }
    }

    /// The rule is a fixed function of the id's bytes (Docs/Behaviour.md P10): these names are
    /// what every version on every platform must find.
    @Test func p10_theCaseSafeNameIsStableAcrossVersionsAndPlatforms() {
        #expect(StorageLocation.folderName(forIntegrationId: "project-ABC") == "project-abc-" + StorageLocation.caseSafeHash(of: "project-ABC"))
        #expect(StorageLocation.caseSafeHash(of: "project-ABC") == String(SHA256.hexDigest(Array("RealtimeSegments folder case\nproject-ABC".utf8)).prefix(16)))
        #expect(StorageLocation.folderName(forIntegrationId: "project-ABC") == "project-abc-8705c4230173de1e", "pinned: computed by an independent SHA-256 (Python hashlib)")
    }

    /// An id without upper-case letters but with characters a folder name cannot hold keeps the
    /// name earlier versions gave it: its safe characters, then the 64-bit FNV-1a of its UTF-8
    /// bytes as 16 lower-case hex digits, so an upgrade finds its folder.
    @Test func p10_anIdWithUnsafeCharactersKeepsTheNameEarlierVersionsGaveItsFolder() {
        let pinned = "pinned: computed by an independent FNV-1a (Python)"
        #expect(StorageLocation.folderName(forIntegrationId: "a/b") == "a_b-e620c3190468cf61", "\(pinned)")
        #expect(StorageLocation.folderName(forIntegrationId: "my project/2") == "my_project_2-9366dadf5d3a2fff", "\(pinned)")
    }

    /// Two integrations whose ids differ only in case, on a volume that folds case: each keeps its
    /// own customer, read back from disk by new store instances.
    @Test func p10_twoIntegrationsDifferingOnlyInCaseNeverShareFiles() throws {
        try TemporaryDirectory.with { dir in
            let upper = folded(StorageLocation.folderName(forIntegrationId: "project-ABC"), in: dir.root)
            let lower = folded(StorageLocation.folderName(forIntegrationId: "project-abc"), in: dir.root)
            try FileCustomerStore(directory: upper, logger: LineLog()).save(CustomerIds(cookie: "upper-cookie"))
            try FileCustomerStore(directory: lower, logger: LineLog()).save(CustomerIds(cookie: "lower-cookie"))

            #expect(FileCustomerStore(directory: upper, logger: LineLog()).load()?.cookie == "upper-cookie")
            #expect(FileCustomerStore(directory: lower, logger: LineLog()).load()?.cookie == "lower-cookie")
        }
    }

    /// The upgrade: a folder an earlier version named `project-ABC` is moved to the case-safe name,
    /// and its customer, queued events and baseline are read there by new store instances.
    @Test func p10_aFolderNamedByAnEarlierVersionIsFoundAfterTheUpgrade() throws {
        try TemporaryDirectory.with { dir in
            let id = "project-ABC"
            let earlier = dir.root.appendingPathComponent("project-ABC", isDirectory: true)
            #expect(StorageLocation.earlierFolderName(forIntegrationId: id) == earlier.lastPathComponent, "the name earlier versions used")
            try FileCustomerStore(directory: earlier, logger: LineLog()).save(CustomerIds(cookie: "customer-before-upgrade"))

            #expect(StorageLocation.moveEarlierFolder(integrationId: id, in: dir.root) == .moved)

            let current = dir.root.appendingPathComponent(StorageLocation.folderName(forIntegrationId: id), isDirectory: true)
            #expect(FileCustomerStore(directory: current, logger: LineLog()).load()?.cookie == "customer-before-upgrade")
            #expect(!FileManager.default.fileExists(atPath: earlier.path))
            #expect(StorageLocation.moveEarlierFolder(integrationId: id, in: dir.root) == .nothingToMove, "moved once")
        }
    }

    /// Both names hold a folder (an earlier-version process wrote the old one after the move): the
    /// current one is kept, the earlier one set aside under a name no id maps to, nothing lost.
    @Test func p10_whenBothFoldersExistTheCurrentIsKeptAndTheEarlierSetAside() throws {
        try TemporaryDirectory.with { dir in
            let id = "stream-Mixed"
            let earlier = dir.root.appendingPathComponent(StorageLocation.earlierFolderName(forIntegrationId: id), isDirectory: true)
            let current = dir.root.appendingPathComponent(StorageLocation.folderName(forIntegrationId: id), isDirectory: true)
            try FileCustomerStore(directory: earlier, logger: LineLog()).save(CustomerIds(cookie: "old"))
            try FileCustomerStore(directory: current, logger: LineLog()).save(CustomerIds(cookie: "new"))

            #expect(StorageLocation.moveEarlierFolder(integrationId: id, in: dir.root) == .setAside("stream-Mixed~superseded"))

            #expect(FileCustomerStore(directory: current, logger: LineLog()).load()?.cookie == "new")
            let aside = dir.root.appendingPathComponent("stream-Mixed~superseded", isDirectory: true)
            #expect(FileCustomerStore(directory: aside, logger: LineLog()).load()?.cookie == "old")
            #expect(!FileManager.default.fileExists(atPath: earlier.path))
        }
    }

    /// A process still using the earlier folder (it holds its owner lock, Behaviour P5) keeps it:
    /// nothing is moved from under it.
    @Test func p10_p5_anEarlierFolderInUseIsLeftWhereItIs() throws {
        try TemporaryDirectory.with { dir in
            let id = "project-InUse"
            let earlier = dir.root.appendingPathComponent(StorageLocation.earlierFolderName(forIntegrationId: id), isDirectory: true)
            try FileCustomerStore(directory: earlier, logger: LineLog()).save(CustomerIds(cookie: "in-use"))
            let held = try StorageDirectoryLock.acquire(earlier)

            #expect(StorageLocation.moveEarlierFolder(integrationId: id, in: dir.root) == .earlierFolderInUse)

            #expect(FileCustomerStore(directory: earlier, logger: LineLog()).load()?.cookie == "in-use")
            let current = dir.root.appendingPathComponent(StorageLocation.folderName(forIntegrationId: id), isDirectory: true)
            #expect(!FileManager.default.fileExists(atPath: current.path))
            withExtendedLifetime(held) {}
        }
    }

    /// On a case-insensitive volume the earlier and the current name may open one folder: it is
    /// then left as it is, never renamed onto itself or set aside. (One folder under two names: a
    /// symbolic link stands for the second spelling.)
    @Test func p10_oneFolderUnderBothNamesIsLeftAsItIs() throws {
        try TemporaryDirectory.with { dir in
            let earlier = dir.root.appendingPathComponent("Folder", isDirectory: true)
            let current = dir.root.appendingPathComponent("folder-1", isDirectory: true)
            try FileCustomerStore(directory: earlier, logger: LineLog()).save(CustomerIds(cookie: "one"))
            try FileManager.default.createSymbolicLink(atPath: current.path, withDestinationPath: earlier.path)

            #expect(StorageLocation.moveEarlierFolder(earlier, to: current) == .nothingToMove)

            #expect(FileCustomerStore(directory: earlier, logger: LineLog()).load()?.cookie == "one")
            #expect(FileManager.default.fileExists(atPath: earlier.appendingPathComponent("customer.json").path))
        }
    }

    /// Processes starting side by side move the folder once (the move runs under its lock): in each
    /// of 100 rounds, 4 threads started together either move it, find nothing to move or find it in
    /// use; exactly one moves it, the customer ends up under the current name, and no late attempt
    /// makes the earlier folder again (which would be set aside as a stray at the next start).
    @Test func p10_p5_migrationsSideBySideMoveTheFolderOnce() throws {
        try TemporaryDirectory.with { dir in
            let rounds = 100, threads = 4
            var moved = 0, strays = 0, lost = 0, unexpected: [StorageLocation.EarlierFolderMove] = []
            for round in 0..<rounds {
                let id = "project-Race\(round)"
                let earlier = dir.root.appendingPathComponent(StorageLocation.earlierFolderName(forIntegrationId: id), isDirectory: true)
                let current = dir.root.appendingPathComponent(StorageLocation.folderName(forIntegrationId: id), isDirectory: true)
                try FileCustomerStore(directory: earlier, logger: LineLog()).save(CustomerIds(cookie: "raced-\(round)"))
                let root = dir.root
                let outcomes = Locked<[StorageLocation.EarlierFolderMove]>([])
                DispatchQueue.concurrentPerform(iterations: threads) { _ in
                    let outcome = StorageLocation.moveEarlierFolder(integrationId: id, in: root)
                    outcomes.withLock { $0.append(outcome) }
                }
                moved += outcomes.value.filter { $0 == .moved }.count
                unexpected += outcomes.value.filter { $0 != .moved && $0 != .nothingToMove && $0 != .earlierFolderInUse }
                if FileManager.default.fileExists(atPath: earlier.path) { strays += 1 }
                if FileCustomerStore(directory: current, logger: LineLog()).load()?.cookie != "raced-\(round)" { lost += 1 }
            }
            #expect(moved == rounds, "moves: \(moved) in \(rounds) rounds")
            #expect(unexpected.isEmpty, "\(unexpected)")
            #expect(strays == 0, "rounds that left an earlier folder behind")
            #expect(lost == 0, "rounds whose customer was not under the current name")
        }
    }
}
