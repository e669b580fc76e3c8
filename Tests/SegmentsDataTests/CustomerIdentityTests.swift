import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsPersistence
import SegmentsTesting
import Testing

/// Customer identity during a reload (Behaviour C).
@Suite(Hang.timeLimit(minutes: 2)) struct CustomerIdentityTests {
    static let jane = CustomerIds(["cookie": "cookie-a", "registered": "jane"])

    @Test func c1_oneSnapshotIsUsedForLinkFetchAndStorage() async {
        let harness = EngineHarness(customer: Self.jane)
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.repository.calls == [.link(Self.jane), .fetch(Self.jane)])
        #expect(harness.baselineStore.load().snapshot?.customer == Self.jane)
    }

    @Test func c2_customerChangedBeforeTheFetchIsSentCancelsAndReloadsForTheNewCustomer() async {
        let harness = EngineHarness(customer: Self.jane)
        harness.repository.delay = 2  // the link takes 2 s; the customer changes meanwhile
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.repository.calls == [.link(Self.jane)])
        let janeWithPhone = harness.engine.identify(hardIds: ["phone": "123"])!
        await harness.advance(by: 2)
        #expect(harness.logger.count(of: "Segments: Check process was canceled because customer has changed") == 1)
        #expect(harness.repository.fetches.isEmpty)
        await harness.advance(by: 5 + 2 + 2)
        #expect(harness.repository.fetches == [janeWithPhone])
    }

    @Test func c3_responseForTheOldCustomerIsNeverStoredOrDeliveredAndTheNewOneIsFetched() async {
        let harness = EngineHarness()
        harness.repository.delay = 2
        harness.repository.answer([.discovery(): [Fixture.s1]], forCookie: "cookie-a")
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)  // the fetch for A is in flight
        let b = harness.engine.identify(hardIds: ["registered": "b"])!
        harness.repository.answer([.discovery(): [Fixture.s2]], forCookie: "cookie-a")
        await harness.advance(by: 2)  // A's answer arrives after the switch
        #expect(harness.logger.count(of: "Segments: New data are ignored because were loaded for different customer") == 1)
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load().snapshot == nil)
        await harness.advance(by: 5 + 2 + 2)
        #expect(harness.repository.fetches == [Fixture.customerA, b])
        #expect(recorder.all == [[Fixture.s2]])
        #expect(harness.baselineStore.load().snapshot?.customer == b)
    }

    @Test func c4_linkRunsOnlyForHardIdsAndOnlyOncePerExactIds() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.repository.links.isEmpty)  // cookie only: no link
        harness.engine.identify(hardIds: ["registered": "jane"])
        await harness.advance(by: 5)
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(harness.repository.links == [Self.jane])
        #expect(harness.repository.fetches == [Fixture.customerA, Self.jane, Self.jane])
        #expect(harness.baselineStore.load().linkedCustomers == [Self.jane])
    }

    /// A restart from disk: the second engine gets a new file store over the folder the first one
    /// wrote, so only what reached the file can tell it that Jane's ids were linked.
    @Test func c4_linkMemorySurvivesARestart() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("c4-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let firstStore = FileSegmentBaselineStore(directory: folder, logger: RecordingLogger())
        let first = EngineHarness(customer: Self.jane)
        first.engine.configure(first.ports(baselineStore: firstStore))
        first.listen()
        await first.advance(by: 5)
        #expect(first.repository.links == [Self.jane])
        first.drainDeliveries()  // the save ran; the first process "dies" here, without a stop (which forgets links)

        let secondStore = FileSegmentBaselineStore(directory: folder, logger: RecordingLogger())
        #expect(secondStore !== firstStore)
        let second = EngineHarness(customer: Self.jane)
        second.engine.configure(second.ports(baselineStore: secondStore))
        second.listen()
        await second.advance(by: 5)
        #expect(second.repository.links.isEmpty)
        #expect(second.repository.fetches == [Self.jane])
    }

    @Test func c4_linkFailureFailsTheReloadLogsWithoutIdsAndIsRetried() async {
        let harness = EngineHarness(customer: Self.jane)
        harness.logger.logLevel = .warning
        harness.repository.failNextLinks(with: Fixture.transient)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(harness.repository.fetches.isEmpty)
        #expect(harness.logger.count(of: "Segments: Customer IDs [registered] merge failed, unable to fetch segments") == 1)
        #expect(!harness.logger.messages.joined().contains("jane"))
        #expect(harness.logger.messages.contains { $0.hasPrefix("Segments: Fetch of segments failed: ") })
        await harness.advance(by: 2)
        #expect(harness.repository.calls == [.link(Self.jane), .link(Self.jane), .fetch(Self.jane)])
    }

    @Test func c4_linkFailureShowsTheIdsAtVerboseLevel() async {
        let harness = EngineHarness(customer: Self.jane)
        harness.repository.failNextLinks(with: Fixture.permanent)
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        #expect(
            harness.logger.count(of: "Segments: Customer IDs {registered: jane} merge failed, unable to fetch segments")
                == 1)
    }

    @Test func c5_aStoredCustomerWithoutCookieGetsOneBeforeAnyFetch() async {
        let harness = EngineHarness(customer: CustomerIds(["registered": "jane"]))
        harness.configure()
        harness.listen()
        await harness.advance(by: 5)
        let fetched = harness.repository.fetches
        #expect(fetched.count == 1)
        #expect(fetched.allSatisfy { $0.cookie == "new-cookie-1" })
        #expect(harness.customerStore.load()?.cookie == "new-cookie-1")
    }
}
