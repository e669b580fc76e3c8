import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Per-visitor default and custom segments: merge, append, persistence, atomicity, change events
/// (see Behaviour V1–V3).
@Suite(Hang.timeLimit(minutes: 2)) struct VisitorSegmentsRegistryTests {
    let store = RecordingVisitorSegmentsStore()
    let logger = RecordingLogger()
    let registry: VisitorSegmentsRegistry

    init() {
        registry = VisitorSegmentsRegistry(store: store, logger: logger)
    }

    /// The next `count` elements of `stream`.
    func take(_ count: Int, from stream: AsyncStream<VisitorSegmentsChange>) async -> [VisitorSegmentsChange] {
        var iterator = stream.makeAsyncIterator()
        var changes: [VisitorSegmentsChange] = []
        while changes.count < count, let change = await iterator.next() { changes.append(change) }
        return changes
    }

    @Test func v1_defaultSegmentsMergeAndKeysNotGivenKeepTheirValue() {
        registry.setDefaultSegments(["country": "US", "browser": "safari"], forVisitor: "v1")
        let after = registry.setDefaultSegments(["browser": "chrome", "devices": "mobile"], forVisitor: "v1")
        #expect(after.defaultSegments == ["country": "US", "browser": "chrome", "devices": "mobile"])
        #expect(registry.segments(forVisitor: "v1") == after)
        #expect(registry.segments(forVisitor: "v2") == .empty)
    }

    @Test func v1_unknownKeysAreWarnedAndIgnored() {
        let after = registry.setDefaultSegments(["country": "US", "plan": "gold", "tier": "1"], forVisitor: "v1")
        #expect(after.defaultSegments == ["country": "US"])
        let warnings = logger.entries.filter { $0.level == .warning }.map(\.message)
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("Segments: Ignored unknown default segment keys [\"plan\", \"tier\"]") == true)
        registry.setDefaultSegments(["country": "DE"], forVisitor: "v1")
        #expect(logger.entries.filter { $0.level == .warning }.count == 1)
    }

    @Test func v2_customSegmentsAppendSkippingIdsAlreadyPresent() {
        registry.setDefaultSegments(["country": "US"], forVisitor: "v1")
        registry.setCustomSegments(["vip", "beta"], forVisitor: "v1")
        let after = registry.setCustomSegments(["beta", "gamma", "gamma"], forVisitor: "v1")
        #expect(after.customSegments == ["vip", "beta", "gamma"])
        #expect(after.country == "US")
    }

    /// Issue 31, finding 6: 700,000 custom segments made the shared file too large to be read
    /// back, and every visitor's segments were lost at the next start. The registry now keeps at
    /// most 10,000 per visitor and says so, rather than failing silently later.
    @Test func v2_p7_aVisitorKeepsAtMost10000CustomSegmentsAndTheRestIsRefusedWithAnError() {
        registry.setCustomSegments(["first"], forVisitor: "v1")
        let ids = (0..<10_050).map { "segment-\($0)" }
        let after = registry.setCustomSegments(["first"] + ids, forVisitor: "v1")
        #expect(after.customSegments.count == 10_000)
        #expect(after.customSegments == ["first"] + ids.prefix(9_999))
        let errors = logger.entries.filter { $0.level == .error }.map(\.message)
        #expect(errors == ["Segments: Refused 51 custom segment ids for a visitor: a visitor keeps at most 10000 custom segments"])
        // Ids already present are still skipped, not refused; other visitors are not limited by it.
        #expect(registry.setCustomSegments(["first"], forVisitor: "v1").customSegments.count == 10_000)
        #expect(registry.setCustomSegments(["vip"], forVisitor: "v2").customSegments == ["vip"])
        #expect(logger.entries.filter { $0.level == .error }.count == 1)
        registry.waitUntilSaved()
        #expect(store.visitors["v1"]?.customSegments.count == 10_000)
    }

    @Test func v3_everyCallIsPersistedPerVisitor() {
        registry.setDefaultSegments(["country": "US"], forVisitor: "v1")
        registry.setCustomSegments(["vip"], forVisitor: "v1")
        registry.setCustomSegments(["beta"], forVisitor: "v2")
        registry.waitUntilSaved()  // saves run on the registry's storage queue, in order (see Behaviour R1)
        #expect(store.saveCount == 3)
        #expect(store.visitors["v1"] == VisitorSegments(country: "US", customSegments: ["vip"]))
    }

    /// A restart from disk: the second registry reads a new file store over the folder the first
    /// one wrote, once the first (and the folder's owner lock its store held, Behaviour P5) ended.
    @Test func v3_segmentsSurviveARestart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("v3-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let first = VisitorSegmentsRegistry(store: FileVisitorSegmentsStore(directory: folder, logger: logger), logger: logger)
            first.setDefaultSegments(["country": "US"], forVisitor: "v1")
            first.setCustomSegments(["vip"], forVisitor: "v1")
            first.setCustomSegments(["beta"], forVisitor: "v2")
            first.waitUntilSaved()
        }

        let secondStore = FileVisitorSegmentsStore(directory: folder, logger: logger)
        let restarted = VisitorSegmentsRegistry(store: secondStore, logger: logger)
        #expect(restarted.segments(forVisitor: "v1") == VisitorSegments(country: "US", customSegments: ["vip"]))
        #expect(restarted.setCustomSegments(["vip", "new"], forVisitor: "v2").customSegments == ["beta", "vip", "new"])
    }

    @Test func v3_exactlyOneChangeEventPerCallEvenWhenNothingChanged() async {
        let stream = registry.changes()
        registry.setDefaultSegments(["country": "US"], forVisitor: "v1")
        registry.setCustomSegments(["vip"], forVisitor: "v1")
        registry.setCustomSegments(["vip"], forVisitor: "v1")
        registry.setDefaultSegments(["unknown": "x"], forVisitor: "v2")
        let changes = await take(4, from: stream)
        #expect(changes.map(\.kind) == [.defaultSegments, .customSegments, .customSegments, .defaultSegments])
        #expect(changes.map(\.visitorId) == ["v1", "v1", "v1", "v2"])
        #expect(changes[2].segments == VisitorSegments(country: "US", customSegments: ["vip"]))
        #expect(changes[3].segments == .empty)
    }

    @Test func v3_aVisitorsStreamHearsOnlyThatVisitor() async {
        let stream = registry.changes(forVisitor: "v2")
        registry.setCustomSegments(["a"], forVisitor: "v1")
        registry.setCustomSegments(["b"], forVisitor: "v2")
        registry.setCustomSegments(["c"], forVisitor: "v1")
        registry.setCustomSegments(["d"], forVisitor: "v2")
        let changes = await take(2, from: stream)
        #expect(changes.map(\.segments.customSegments) == [["b"], ["b", "d"]])
    }

    @Test func v3_hundredConcurrentSetCustomSegmentsCallsLoseNothing() async {
        let stream = registry.changes()
        let registry = self.registry
        // On a thread of its own, so the 100 blocking callers never hold the cooperative pool.
        await onDedicatedThread {
            DispatchQueue.concurrentPerform(iterations: 100) { index in
                registry.setCustomSegments(["segment-\(index)"], forVisitor: "v1")
            }
        }
        let expected = Set((0..<100).map { "segment-\($0)" })
        #expect(Set(registry.segments(forVisitor: "v1").customSegments) == expected)
        #expect(registry.segments(forVisitor: "v1").customSegments.count == 100)
        registry.waitUntilSaved()
        #expect(Set(store.visitors["v1"]?.customSegments ?? []) == expected)
        #expect(store.saveCount == 100)
        // One event per call, in the order the changes were made: each one more id than the last.
        let changes = await take(100, from: stream)
        #expect(changes.map(\.segments.customSegments.count) == Array(1...100))
    }

    @Test func v3_concurrentCallersFromTasksNeverOverwriteEachOther() async {
        let registry = self.registry
        let keys = VisitorSegments.Key.allCases.map(\.rawValue)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        registry.setCustomSegments(["id-\(index)"], forVisitor: "v1")
                    } else {
                        registry.setDefaultSegments([keys[(index / 2) % keys.count]: "value"], forVisitor: "v1")
                    }
                }
            }
        }
        let segments = registry.segments(forVisitor: "v1")
        #expect(segments.customSegments.count == 30)
        #expect(segments.defaultSegments.count == 6)
    }

    @Test func v3_aFailedSaveIsLoggedAndTheChangeKeptForTheSession() {
        store.failSaves(with: SegmentsError(.storage, "disk full"))
        let after = registry.setCustomSegments(["vip"], forVisitor: "v1")
        #expect(after.customSegments == ["vip"])
        #expect(registry.segments(forVisitor: "v1").customSegments == ["vip"])
        registry.waitUntilSaved()
        #expect(store.visitors["v1"] == nil)
        #expect(logger.entries.contains { $0.level == .error && $0.message.hasPrefix("Segments: Could not save visitor segments") })
        store.failSaves(with: nil)
        registry.setCustomSegments(["beta"], forVisitor: "v1")
        registry.waitUntilSaved()
        #expect(store.visitors["v1"]?.customSegments == ["vip", "beta"])
    }

    @Test func v3_endingTheIterationEndsTheSubscription() async {
        do {
            let stream = registry.changes()
            registry.setCustomSegments(["a"], forVisitor: "v1")
            #expect(await take(1, from: stream).count == 1)
        }
        // A dropped stream must not keep the registry from working.
        #expect(registry.setCustomSegments(["b"], forVisitor: "v1").customSegments == ["a", "b"])
    }
}

extension VisitorSegmentsRegistryTests {
    @Test func r1_v3_savesRunOnTheStorageQueueInTheOrderOfTheChanges() {
        let storage = DispatchQueue(label: "test.visitors.storage")
        let registry = VisitorSegmentsRegistry(store: store, logger: logger, storageQueue: storage)
        storage.suspend()  // a busy disk: the calls still return, with the change applied
        registry.setCustomSegments(["a"], forVisitor: "v1")
        let after = registry.setCustomSegments(["b"], forVisitor: "v1")
        #expect(after.customSegments == ["a", "b"])
        #expect(store.saveCount == 0, "nothing was written on the caller's thread")
        storage.resume()
        registry.waitUntilSaved()
        #expect(store.saveCount == 2)
        #expect(store.visitors["v1"]?.customSegments == ["a", "b"], "the last change was saved last")
    }
}
