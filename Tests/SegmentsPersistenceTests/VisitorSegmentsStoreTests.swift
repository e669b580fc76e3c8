import Foundation
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// The visitor segments file and the in-memory store (see Behaviour V3, P1, P2).
@Suite(Hang.timeLimit(minutes: 2)) struct VisitorSegmentsStoreTests {
    static let fileName = "visitor-segments.json"
    static let jane = VisitorSegments(country: "US", devices: "mobile", visitorType: "returning", customSegments: ["vip", "beta"])
    static let joe = VisitorSegments(browser: "firefox")

    @Test func v3_segmentsSurviveARestartPerVisitor() throws {
        try TemporaryDirectory.with { dir in
            do {
                let store = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
                #expect(store.segments(forVisitor: "jane") == nil)
                try store.save(Self.jane, forVisitor: "jane")
                try store.save(Self.joe, forVisitor: "joe")
            }
            let reopened = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(reopened.segments(forVisitor: "jane") == Self.jane)
            #expect(reopened.segments(forVisitor: "joe") == Self.joe)
            #expect(reopened.segments(forVisitor: "nobody") == nil)
        }
    }

    @Test func p1_theFileIsVersionedJSONOwnerOnlyWithoutTemporaries() throws {
        try TemporaryDirectory.with { dir in
            try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(Self.jane, forVisitor: "jane")
            #expect(try TemporaryDirectory.permissions(of: dir.file(Self.fileName)) == 0o600)
            #expect(dir.entries() == ["owner.lock", Self.fileName], "the folder's owner lock (P5) and the file")
            let json = try #require(dir.contents(of: Self.fileName))
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(object["version"] as? Int == 1)
            let jane = try #require((object["visitors"] as? [String: Any])?["jane"] as? [String: Any])
            #expect(jane["defaults"] as? [String: String] == ["country": "US", "devices": "mobile", "visitorType": "returning"])
            #expect(jane["customSegments"] as? [String] == ["vip", "beta"])
        }
    }

    @Test func v1_unknownKeysWrittenByANewerSDKAreIgnoredOnRead() throws {
        try TemporaryDirectory.with { dir in
            try dir.write(
                #"{"version":1,"visitors":{"jane":{"defaults":{"country":"US","planet":"mars"},"customSegments":["a","a"]}}}"#,
                to: Self.fileName)
            let store = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            #expect(store.segments(forVisitor: "jane") == VisitorSegments(country: "US", customSegments: ["a"]))
        }
    }

    @Test(arguments: Damage.allCases)
    func p2_aDamagedFileIsLoggedSetAsideAndRebuilt(damage: Damage) throws {
        try TemporaryDirectory.with { dir in
            try FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).save(Self.jane, forVisitor: "jane")
            try dir.write(damage.apply(to: try #require(dir.contents(of: Self.fileName))), to: Self.fileName)
            let log = LineLog(level: .warning)
            do {
                let store = FileVisitorSegmentsStore(directory: dir.storage, logger: log)
                #expect(store.segments(forVisitor: "jane") == nil)
                try store.save(Self.joe, forVisitor: "joe")
            }  // the store, and the folder's owner lock (P5), end here
            let line = try #require(log.problems.first)
            #expect(line.hasPrefix("Segments: "))
            #expect(line.contains("set aside as \(Self.fileName).corrupt-1"))
            #expect(!line.contains("jane"), "no visitor ids above verbose")
            #expect(FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog()).segments(forVisitor: "joe") == Self.joe)
        }
    }

    @Test func p2_anUnwritableDirectoryThrowsAStorageError() throws {
        try TemporaryDirectory.with { dir in
            try Data("x".utf8).write(to: dir.storage)
            let store = FileVisitorSegmentsStore(directory: dir.storage, logger: LineLog())
            let error = try #require(throws: SegmentsError.self) { try store.save(Self.jane, forVisitor: "jane") }
            #expect(error.code == .storage)
            #expect(store.segments(forVisitor: "jane") == nil)
        }
    }

    @Test func v3_theInMemoryStoreKeepsEachVisitor() {
        let store = InMemoryVisitorSegmentsStore(["joe": Self.joe])
        store.save(Self.jane, forVisitor: "jane")
        #expect(store.segments(forVisitor: "jane") == Self.jane)
        #expect(store.segments(forVisitor: "joe") == Self.joe)
        #expect(store.segments(forVisitor: "nobody") == nil)
    }
}
