import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// Visitor segments through the user context (see Behaviour V1–V3).
@Suite(Hang.timeLimit(minutes: 2)) struct VisitorContextTests {
    @Test func v1_v2_aContextMergesDefaultsAndAppendsCustomIdsForItsUser() {
        let harness = AudienceHarness()
        let jane = harness.client.createUserContext(userId: "jane")
        jane.setDefaultSegments(["country": "US", "browser": "safari", "planet": "mars"])
        jane.setDefaultSegments(["browser": "chrome"])
        jane.setCustomSegments(["vip", "beta"])
        let after = jane.setCustomSegments(["beta", "gamma"])
        #expect(after == VisitorSegments(country: "US", browser: "chrome", customSegments: ["vip", "beta", "gamma"]))
        #expect(jane.visitorSegments == after)
        #expect(harness.client.createUserContext(userId: "jane").visitorSegments == after)
        #expect(harness.client.createUserContext(userId: "joe").visitorSegments == .empty)
        #expect(harness.logger.entries.filter { $0.level == .warning }.map(\.message).contains {
            $0.hasPrefix("Segments: Ignored unknown default segment keys [\"planet\"]")
        })
    }

    @Test func v1_visitorSegmentsWorkWithoutAnAudienceBackend() {
        let harness = AudienceHarness(enabled: false)
        let user = harness.client.createUserContext(userId: "jane")
        #expect(user.setDefaultSegments(["devices": "mobile"]).devices == "mobile")
    }

    @Test func v3_visitorSegmentsSurviveARestartOfTheClient() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let harness = AudienceHarness(visitorStorage: .directory(directory.url))
            let jane = harness.client.createUserContext(userId: "jane")
            jane.setDefaultSegments(["country": "US"])
            jane.setCustomSegments(["vip"])
            harness.client.visitorSegments.waitUntilSaved()  // saves run on the storage queue (see Behaviour R1)
        }
        do {
            // One owner of the folder at a time (Behaviour P5): this store's lock ends with the block.
            let onDisk = FileVisitorSegmentsStore(directory: directory.url, logger: RecordingLogger())
            #expect(onDisk.segments(forVisitor: "jane") == VisitorSegments(country: "US", customSegments: ["vip"]))
        }
        let restarted = AudienceHarness(visitorStorage: .directory(directory.url))
        let jane = restarted.client.createUserContext(userId: "jane")
        #expect(jane.visitorSegments == VisitorSegments(country: "US", customSegments: ["vip"]))
        #expect(jane.setCustomSegments(["vip", "beta"]).customSegments == ["vip", "beta"])
    }

    @Test func v3_oneChangeEventPerCallForThisUser() async {
        let harness = AudienceHarness()
        let jane = harness.client.createUserContext(userId: "jane")
        let joe = harness.client.createUserContext(userId: "joe")
        var changes = jane.visitorSegmentChanges().makeAsyncIterator()
        jane.setDefaultSegments(["country": "US"])
        joe.setCustomSegments(["other"])
        jane.setCustomSegments(["vip"])
        jane.setCustomSegments(["vip"])
        var received: [VisitorSegmentsChange] = []
        for _ in 0..<3 { if let change = await changes.next() { received.append(change) } }
        #expect(received.map(\.kind) == [.defaultSegments, .customSegments, .customSegments])
        #expect(received.allSatisfy { $0.visitorId == "jane" })
        #expect(received.last?.segments == VisitorSegments(country: "US", customSegments: ["vip"]))
    }

    @Test func v3_hundredConcurrentSetCustomSegmentsCallsOverFilesLoseNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let written = FileVisitorSegmentsStore(directory: directory.url, logger: RecordingLogger())
            let harness = AudienceHarness(visitorStorage: .custom(written))
            let contexts = (0..<4).map { _ in harness.client.createUserContext(userId: "jane") }
            // Off the cooperative pool: 100 durable writes must not hold one of its few threads.
            try await onBackgroundThread {
                DispatchQueue.concurrentPerform(iterations: 100) { index in
                    contexts[index % contexts.count].setCustomSegments(["segment-\(index)"])
                }
            }
            harness.client.visitorSegments.waitUntilSaved()
        }  // the client, its store and the folder's owner lock (Behaviour P5) end here
        // The restart: a new store instance on the folder, so what it holds was read from the file.
        let reread = FileVisitorSegmentsStore(directory: directory.url, logger: RecordingLogger())
        let restarted = AudienceHarness(visitorStorage: .custom(reread))
        let stored = restarted.client.createUserContext(userId: "jane").visitorSegments.customSegments
        #expect(stored.count == 100)
        #expect(Set(stored) == Set((0..<100).map { "segment-\($0)" }))
    }

    @Test func v3_twoClientsOnOneDirectoryNeverOverwriteEachOther() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        do {
            let first = AudienceHarness(visitorStorage: .directory(directory.url))
            let second = AudienceHarness(visitorStorage: .directory(directory.url))
            let contexts = [first, second].map { $0.client.createUserContext(userId: "jane") }
            _ = contexts.map(\.visitorSegments)  // both have read the (empty) visitor before anyone writes
            try await onBackgroundThread {
                DispatchQueue.concurrentPerform(iterations: 40) { index in
                    contexts[index % 2].setCustomSegments(["segment-\(index)"])
                }
            }
            #expect(contexts.allSatisfy { $0.visitorSegments.customSegments.count == 40 })
            first.client.visitorSegments.waitUntilSaved()
            #expect(!first.logger.messages.contains { $0.contains("in use") } && !second.logger.messages.contains { $0.contains("in use") })
        }  // both clients, their shared store and its owner lock (Behaviour P5) end here
        let onDisk = FileVisitorSegmentsStore(directory: directory.url, logger: RecordingLogger())
        #expect(onDisk.segments(forVisitor: "jane")?.customSegments.count == 40)
    }
}
