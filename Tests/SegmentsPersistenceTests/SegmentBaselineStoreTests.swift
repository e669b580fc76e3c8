import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct SegmentBaselineStoreTests {
    static let fileName = "segment-baseline.json"

    @Test func d1_savedBaselineLoadsBackExactly() throws {
        try TemporaryDirectory.with { dir in
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            #expect(store.load() == .empty)
            try store.save(Fixtures.baseline)
            #expect(store.load() == Fixtures.baseline)
            try store.save(.empty)
            #expect(store.load() == .empty)
        }
    }

    @Test func e4_restartFindsTheSameBaselineAndLinkMemory() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let reopened = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load()
            #expect(reopened == Fixtures.baseline)
            #expect(reopened.snapshot?.fetchedAt == Fixtures.baseline.snapshot?.fetchedAt, "dates round-trip exactly")
            #expect(reopened.linkedCustomers.contains(Fixtures.identified))
        }
    }

    @Test func d1_theIntegrationABaselineBelongsToSurvivesARestartAndAnOlderFileHasNone() throws {
        try TemporaryDirectory.with { dir in
            var owned = Fixtures.baseline
            owned.integration = "digest-of-project-a"
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(owned)
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load().integration == "digest-of-project-a")

            // A file written before baselines named their integration: adopted by any (nil).
            let written = try #require(dir.contents(of: Self.fileName))
            var object = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
            object["integration"] = nil
            try JSONSerialization.data(withJSONObject: object).write(to: dir.file(Self.fileName))
            let older = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load()
            #expect(older.integration == nil)
            #expect(older.snapshot == Fixtures.baseline.snapshot)
        }
    }

    @Test func p1_fileIsVersionedJSONOwnerOnly() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            #expect(try TemporaryDirectory.permissions(of: dir.file(Self.fileName)) == 0o600)
            #expect(try TemporaryDirectory.permissions(of: dir.storage) == 0o700)
            let json = try #require(dir.contents(of: Self.fileName))
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(object["version"] as? Int == 1)
            // Segments keep their wire objects, categories their wire names.
            let text = try #require(dir.text(of: Self.fileName))
            #expect(text.contains(#""segmentation_id":"g1""#))
            #expect(text.contains(#""future-category""#))
        }
    }

    @Test func p1_strayTemporaryFileIsIgnoredAndOldContentSurvives() throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            try dir.write("{\"version\":1,\"snap", to: ".\(Self.fileName).tmp-CRASHED")
            let reopened = FileSegmentBaselineStore(directory: dir.storage, logger: LineLog())
            #expect(reopened.load() == Fixtures.baseline)
            #expect(dir.entries() == [Self.fileName])
        }
    }

    @Test func p2_missingBaselineIsEmpty() throws {
        try TemporaryDirectory.with { dir in
            let log = LineLog(level: .warning)
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: log).load() == .empty)
            #expect(log.lines.isEmpty, "a first start is not a problem")
        }
    }

    @Test(arguments: Damage.allCases)
    func p2_damagedBaselineIsLoggedSetAsideAndRebuilt(damage: Damage) throws {
        try TemporaryDirectory.with { dir in
            try FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).save(Fixtures.baseline)
            let damaged = damage.apply(to: try #require(dir.contents(of: Self.fileName)))
            try dir.write(damaged, to: Self.fileName)

            let log = LineLog(level: .warning)
            let store = FileSegmentBaselineStore(directory: dir.storage, logger: log)
            #expect(store.load() == .empty)

            let line = try #require(log.problems.first)
            #expect(log.problems.count == 1)
            #expect(line.hasPrefix("Segments: "), "Behaviour L1")
            #expect(line.contains("set aside as \(Self.fileName).corrupt-1"))
            #expect(!line.contains(Fixtures.cookie) && !line.contains("jane@example.com"), "Behaviour P4")
            #expect(dir.contents(of: "\(Self.fileName).corrupt-1") == damaged)

            try store.save(Fixtures.baseline)
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: LineLog()).load() == Fixtures.baseline)
        }
    }

    @Test func p2_segmentWithoutRequiredFieldMakesTheFileUnusable() throws {
        try TemporaryDirectory.with { dir in
            let json = #"{"version":1,"linkedCustomers":[],"snapshot":{"customerIds":{"cookie":"c"},"#
                + #""segments":{"discovery":[{"name":"no id"}]},"fetchedAt":1}}"#
            try dir.write(json, to: Self.fileName)
            let log = LineLog(level: .warning)
            #expect(FileSegmentBaselineStore(directory: dir.storage, logger: log).load() == .empty)
            #expect(log.problems.count == 1)
            #expect(dir.entries() == ["\(Self.fileName).corrupt-1"])
        }
    }
}
