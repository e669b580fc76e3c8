import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// The facade over the real URLSession transport and the emulator on loopback.
@Suite(Hang.timeLimit(minutes: 2)) struct EndToEndTests {
    @Test func d6_firstLoadArrivesFromTheBackend() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let client = try harness.makeClient()
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        #expect(told.all == [[]])
        #expect(harness.emulator.requests(on: .fetch).first?.header("Authorization") == "Token key")
    }

    @Test func t3_aTrackedEventThatARuleTurnsIntoASegmentReachesTheListener() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let client = try harness.makeClient()
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        try client.trackEvent(properties: ["sku": "A-1", "price": 9.99], timestamp: nil, eventType: "view_item")
        #expect(await eventually { told.count == 2 })
        #expect(told.all.last == [.browsers])
        let event = try #require(harness.emulator.events.first)
        #expect(event.eventType == "view_item")
        #expect(event.customerIds == ["cookie": client.customerCookie!])
        #expect(event.properties["price"] == .number(9.99))
    }

    @Test func c4_identifyLinksBeforeTheFetchAndNotAgain() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let client = try harness.makeClient()
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .content(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        try client.identifyCustomer(customerIds: ["registered": "jane@example.com"], properties: [:], timestamp: nil)
        #expect(await eventually { harness.emulator.requests(on: .fetch).count == 2 })
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "purchase")
        #expect(await eventually { told.all.last == [.buyers] })
        let routes = harness.emulator.requests.compactMap(\.route).filter { $0 == .link || $0 == .fetch }
        #expect(routes.filter { $0 == .link }.count == 1)
        #expect(routes.firstIndex(of: .link)! < routes.lastIndex(of: .fetch)!)
        #expect(harness.emulator.links.first?.externalIds == ["registered": "jane@example.com"])
    }

    @Test func a1_a2_anonymizeTellsListenersEmptyAndStartsANewCookie() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let client = try harness.makeClient()
        defer { client.stop() }
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        #expect(await eventually { told.all.last == [.browsers] })
        let before = client.customerCookie
        client.anonymize()
        #expect(await eventually { told.all.last == [] })
        #expect(client.customerCookie != before)
        let fresh = try await client.getSegments(category: .discovery())
        #expect(fresh == [])
        #expect(harness.emulator.requests(on: .fetch).last?.query["cookie"] == client.customerCookie)
    }

    @Test func g1_readsWithinTheCacheTimeDoNotReachTheBackend() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let clock = TestScheduler()  // freshness on virtual time; the requests themselves are real
        let client = try harness.makeClient(clock: clock)
        defer { client.stop() }
        _ = try await client.getSegments(category: .discovery())
        await clock.advance(by: 4.9)
        _ = try await client.getSegments(category: .content())
        #expect(harness.emulator.requests(on: .fetch).count == 1)
        await clock.advance(by: 0.1)
        _ = try await client.getSegments(category: .discovery())
        #expect(harness.emulator.requests(on: .fetch).count == 2)
        _ = try await client.getSegments(force: true, category: .discovery())
        #expect(harness.emulator.requests(on: .fetch).count == 3)
    }

    @Test func streamModeUsesTheStreamEndpointsAndTheAppsJWT() async throws {
        struct Tokens: BloomreachAuthorizationProvider {
            func token() async -> String? { "jwt-1" }
            func authorizationFailed() async {}
        }
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        harness.emulator.requireAuthorization(nil)
        harness.emulator.acceptBearerTokens(["jwt-1"])
        let client = try harness.makeClient(integration: .stream(id: "stream-1"), authorization: .none, stream: Tokens())
        defer { client.stop() }
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        #expect(await eventually { harness.emulator.events.count == 1 })
        let read = try await client.getSegments(force: true, category: .discovery())
        #expect(read == [.browsers])
        let fetch = try #require(harness.emulator.requests(on: .fetch).last)
        #expect(fetch.path == "/webxp/streams/stream-1/segments")
        #expect(fetch.header("Authorization") == "Bearer jwt-1")
        #expect(harness.emulator.requests(on: .event).first?.query["stream_id"] == "stream-1")
    }

    /// Stop comes with a reload pending (an upload's, T3): nothing of the client is left on its
    /// scheduler afterwards, so no fetch can follow — counted, not watched for a while.
    @Test func a3_stopEndsListenersAndFailsReads() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        let scheduler = OutstandingWorkScheduler()
        let client = try harness.makeClient(scheduler: scheduler)
        let told = Recorder<[Segment]>()
        client.addListener(category: .discovery(), includeFirstLoad: true) { told.record($0) }
        #expect(await eventually { told.count == 1 })
        try client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        #expect(await eventually { harness.emulator.events.count == 1 })  // its upload asks for a reload
        client.stop()
        let fetches = harness.emulator.requests(on: .fetch).count
        await #expect(throws: SegmentsError.self) { try await client.getSegments(category: .discovery()) }
        #expect(client.listenerCount == 0)
        #expect(
            await eventually { scheduler.outstanding == 0 },
            "\(scheduler.outstanding) pieces of work still scheduled or running after stop")
        #expect(harness.emulator.requests(on: .fetch).count == fetches, "a fetch was made after stop")
        #expect(told.count == 1)
    }

    @Test func e4_aRestartOnTheSameDirectoryKeepsTheCookieAndUploadsWhatWasQueued() async throws {
        let harness = try EndToEndHarness()
        defer { harness.tearDown() }
        harness.emulator.injectFault(.status(503), on: .event, count: 1000)  // nothing gets through
        let before = FileStores(harness.directory.url)
        let first = try harness.makeClient(storage: before.storage)
        try first.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "purchase")
        try first.trackEvent(properties: ["n": 2], timestamp: nil, eventType: "purchase")
        let cookie = first.customerCookie
        first.stop()
        harness.emulator.clearFaults()
        #expect(await FileStores.settled(harness.directory.url, cookie: cookie))

        // The restart: new store instances on the same folder, so the cookie and the queue the
        // second client has were read back from the files.
        let after = FileStores(harness.directory.url)
        #expect(after.shareNoInstance(with: before))
        let second = try harness.makeClient(storage: after.storage)
        defer { second.stop() }
        #expect(second.customerCookie == cookie)
        // At least once (E4): an upload the first client had in flight when it stopped may land
        // after the faults are cleared, and the second client, reading the queue from disk, sends
        // that event again. Both events must arrive; a duplicate is allowed.
        #expect(await eventually { Set(harness.emulator.events.map { $0.properties["n"] }) == [.number(1), .number(2)] })
        #expect(harness.emulator.events.count <= 3)
        #expect(Set(harness.emulator.events.map { $0.customerIds["cookie"] }) == [cookie])
    }
}
