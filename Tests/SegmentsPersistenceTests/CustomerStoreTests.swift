import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct CustomerStoreTests {
    static let fileName = "customer.json"

    @Test func p1_savedCustomerLoadsBack() throws {
        try TemporaryDirectory.with { dir in
            let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == nil)
            try store.save(Fixtures.anonymous)
            #expect(store.load() == Fixtures.anonymous)
            try store.save(Fixtures.identified)
            #expect(store.load() == Fixtures.identified)
        }
    }

    @Test func e4_restartFindsTheSameCookie() throws {
        try TemporaryDirectory.with { dir in
            do {
                let store = FileCustomerStore(directory: dir.storage, logger: LineLog())
                try store.save(Fixtures.identified)
            }
            let reopened = FileCustomerStore(directory: dir.storage, logger: LineLog())
            #expect(reopened.load() == Fixtures.identified)
            #expect(reopened.load()?.cookie == Fixtures.cookie)
        }
    }

    @Test func p1_fileIsVersionedJSONOwnerOnlyInOwnerOnlyDirectory() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.anonymous)
            #expect(try TemporaryDirectory.permissions(of: dir.file(Self.fileName)) == 0o600)
            #expect(try TemporaryDirectory.permissions(of: dir.storage) == 0o700)
            let json = try #require(dir.contents(of: Self.fileName))
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(object["version"] as? Int == 1)
            #expect(dir.entries() == [Self.fileName], "no temporary file stays behind")
        }
    }

    @Test func p1_strayTemporaryFileIsIgnoredAndOldContentSurvives() throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.anonymous)
            // A crash between writing the temporary file and renaming it leaves this behind.
            try dir.write(#"{"version":1,"customerIds":{"cookie":"half-writ"#, to: ".\(Self.fileName).tmp-CRASHED")

            let log = LineLog()
            let reopened = FileCustomerStore(directory: dir.storage, logger: log)
            #expect(reopened.load() == Fixtures.anonymous)
            #expect(dir.entries() == [Self.fileName])
            #expect(log.problems.isEmpty)
        }
    }

    @Test func p2_missingCustomerFileIsNilAndOnlyVerbose() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog(level: .warning)
            #expect(FileCustomerStore(directory: dir.storage, logger: log).load() == nil)
            #expect(log.lines.isEmpty)
            let verbose = LineLog(level: .verbose)
            #expect(FileCustomerStore(directory: dir.storage, logger: verbose).load() == nil)
            #expect(verbose.lines.count == 1 && verbose.lines[0].contains(Self.fileName))
        }
    }

    @Test(arguments: Damage.allCases)
    func p2_damagedCustomerFileIsLoggedSetAsideAndRebuilt(damage: Damage) throws {
        try TemporaryDirectory.with { dir in
            try FileCustomerStore(directory: dir.storage, logger: LineLog()).save(Fixtures.identified)
            let damaged = damage.apply(to: try #require(dir.contents(of: Self.fileName)))
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileCustomerStore(directory: dir.storage, logger: log)
            #expect(store.load() == nil)

            let line = try #require(log.problems.first)
            #expect(log.problems.count == 1)
            #expect(line.hasPrefix("Tracking: "))
            #expect(line.contains("set aside as \(Self.fileName).corrupt-1"))
            #expect(!line.contains(Fixtures.cookie) && !line.contains("jane@example.com"), "no customer ids above verbose")
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged, "the damaged bytes are kept")
            #expect(dir.contents(of: Self.fileName) == nil)

            try store.save(Fixtures.anonymous)
            #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.anonymous)
        }
    }

    @Test func p2_onlyTheLatestThreeDamagedCopiesAreKept() throws {
        try TemporaryDirectory.with { dir in
            for round in 1...5 {
                try dir.write("garbage \(round)", to: Self.fileName)
                #expect(FileCustomerStore(directory: dir.storage, logger: LineLog()).load() == nil)
            }
            #expect(dir.entries() == (3...5).map { "\(Self.fileName).corrupt-\($0)" })
            #expect(dir.text(of: "\(Self.fileName).corrupt-5") == "garbage 5")
        }
    }

    @Test func p2_unwritableDirectoryThrowsStorageErrorInsteadOfCrashing() throws {
        try TemporaryDirectory.with { dir in
            // A regular file where the directory should be: nothing can be created below it.
            try Data("x".utf8).write(to: dir.storage)
            let log = LineLog()
            let store = FileCustomerStore(directory: dir.storage, logger: log)
            #expect(store.load() == nil)
            #expect(!log.problems.isEmpty)
            let error = try #require(throws: SegmentsError.self) { try store.save(Fixtures.anonymous) }
            #expect(error.code == .storage)
        }
    }
}
