import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

extension LiveIntegrationTests {
    /// The four Bloomreach requests over real loopback HTTP, in project and stream mode: what the
    /// emulator received and what the adapters made of its answers.
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveEndpointTests {
        private static let cookie = anonymous.cookie ?? ""

        private static let discovery = EmulatorSegment(
            id: "66140257f4cb337324209871", segmentationId: "66140215fb50effc8a7218b4", attributes: ["name": "Shoe buyers"])
        private static let content = [
            EmulatorSegment(id: "66140258aa11bb22cc33dd44", segmentationId: "66140216ee55ff66aa77bb88"),
            EmulatorSegment(id: "66140259aa11bb22cc33dd45", segmentationId: "66140216ee55ff66aa77bb88"),
        ]

        @Test(arguments: LiveMode.allCases)
        func wire_fetchDecodesFixedSegments(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }
            live.emulator.setFixedSegments(
                ["discovery": [Self.discovery], "merchandising": [], "content": Self.content,
                 "loyalty": [EmulatorSegment(id: "l1", segmentationId: "lg")]],
                forCookie: Self.cookie)

            let segments = try await live.repository.fetchSegments(for: anonymous)

            #expect(segments == [
                .discovery(): [Self.discovery.sdkSegment],
                .merchandising(): [],
                .content(): Self.content.map(\.sdkSegment),
                SegmentCategory("loyalty"): [Segment(id: "l1", segmentationId: "lg")],
            ])
            let request = try #require(live.requests(on: .fetch).first)
            #expect(live.emulator.requests.count == 1)
            #expect(request.method == "GET")
            #expect(request.path == mode.fetchPath())
            #expect(request.rawQuery == "cookie=\(Self.cookie)")
            #expect(request.query == ["cookie": Self.cookie])
            #expect(request.body.isEmpty)
            #expect(request.header("Authorization") == mode.authorizationHeader)
        }

        @Test(arguments: LiveMode.allCases)
        func wire_fetchOfAnUnknownCookieIsEmptyNotAFailure(mode: LiveMode) async throws {
            let live = try LiveHarness(mode)
            defer { live.stop() }
            #expect(try await live.repository.fetchSegments(for: anonymous) == [:])
        }

        @Test(arguments: LiveMode.allCases)
        func wire_fetchFollowsRulesOverTrackedEvents(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }
            let buyers = EmulatorSegmentRule(
                category: "discovery", segmentId: "buyers", segmentationId: "g-buy", attributes: ["name": "Buyers"],
                eventType: "purchase", minimumCount: 2)
            let shoes = EmulatorSegmentRule(
                category: "content", segmentId: "shoes", segmentationId: "g-shoe", eventType: "view_item",
                property: .init(name: "category", equals: "shoes"))
            live.emulator.setRules([buyers, shoes])

            let before = try await live.repository.fetchSegments(for: anonymous)
            try await live.uploader.upload(Live.event("purchase"))
            try await live.uploader.upload(Live.event("view_item", properties: ["category": "hats"]))
            let afterOne = try await live.repository.fetchSegments(for: anonymous)
            try await live.uploader.upload(Live.event("purchase"))
            try await live.uploader.upload(Live.event("view_item", properties: ["category": "shoes"]))
            let afterTwo = try await live.repository.fetchSegments(for: anonymous)

            #expect(before == [.discovery(): [], .content(): []])
            #expect(afterOne == [.discovery(): [], .content(): []])
            #expect(afterTwo == [
                .discovery(): [Segment(id: "buyers", segmentationId: "g-buy", attributes: ["name": "Buyers"])],
                .content(): [Segment(id: "shoes", segmentationId: "g-shoe")],
            ])
            #expect(live.emulator.events(forCookie: Self.cookie).map(\.eventType) == [
                "purchase", "view_item", "purchase", "view_item",
            ])
            #expect(live.emulator.events.allSatisfy { $0.integration == mode.emulatorIntegration })
        }

        @Test(arguments: LiveMode.allCases)
        func c4_linkSendsExternalIdsToTheEmulator(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }
            let cookie = try #require(identified.cookie)

            try await live.repository.linkCustomerIds(identified)

            let link = try #require(live.emulator.links.first)
            #expect(live.emulator.links.count == 1)
            #expect(link.integration == mode.emulatorIntegration)
            #expect(link.cookie == cookie)
            #expect(link.externalIds == ["registered": "jane@example.com"])
            let request = try #require(live.requests(on: .link).first)
            #expect(request.method == "POST")
            #expect(request.path == mode.linkPath(cookie: cookie))
            #expect(request.rawQuery == nil)
            #expect(request.jsonBody == ["external_ids": ["registered": "jane@example.com"]])
            #expect(live.emulator.customer(cookie: cookie)?.linkedIds == [
                EmulatorExternalID(name: "registered", value: "jane@example.com"),
            ])
        }

        @Test(arguments: LiveMode.allCases)
        func c4_linkOfAnAnonymousCustomerSendsNothing(mode: LiveMode) async throws {
            let live = try LiveHarness(mode)
            defer { live.stop() }
            try await live.repository.linkCustomerIds(anonymous)
            #expect(live.emulator.requests.isEmpty)
        }

        @Test(arguments: LiveMode.allCases)
        func c4_afterLinkingEventsTrackedUnderTheHardIdCountForTheCookie(mode: LiveMode) async throws {
            let live = try LiveHarness(mode)
            defer { live.stop() }
            live.emulator.setRules([
                EmulatorSegmentRule(category: "discovery", segmentId: "vip", segmentationId: "g", eventType: "purchase"),
            ])
            // Tracked on another device: only the hard id, no cookie of this app.
            try await live.uploader.upload(Live.event("purchase", for: CustomerIds(["registered": "jane@example.com"])))

            let unlinked = try await live.repository.fetchSegments(for: identified)
            try await live.repository.linkCustomerIds(identified)
            let linked = try await live.repository.fetchSegments(for: identified)

            #expect(unlinked == [.discovery(): []])
            #expect(linked == [.discovery(): [Segment(id: "vip", segmentationId: "g")]])
        }

        @Test(arguments: LiveMode.allCases)
        func e3_eventArrivesWithIdsPropertiesTimestampAndType(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }

            try await live.uploader.upload(Live.purchase)

            let event = try #require(live.emulator.events.first)
            #expect(live.emulator.events.count == 1)
            #expect(event.integration == mode.emulatorIntegration)
            #expect(event.eventType == "purchase")
            #expect(event.customerIds == identified.values)
            #expect(event.timestamp == 1_732_249_200.123)
            #expect(event.properties == [
                "price": 9.99, "sku": "A-1", "qty": 2, "gift": nil, "tags": ["a", "b"], "meta": ["ok": true],
            ])
            let request = try #require(live.requests(on: .event).first)
            #expect(request.method == "POST")
            #expect(request.path == mode.eventPath)
            #expect(request.rawQuery == mode.trackingQuery)
            guard case .object(let body)? = request.jsonBody else {
                Issue.record("the event body is not a JSON object")
                return
            }
            #expect(body.keys.sorted() == ["customer_ids", "event_type", "properties", "timestamp"])
        }

        @Test(arguments: LiveMode.allCases)
        func e3_customerUpdateArrivesWithoutEventType(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }

            try await live.uploader.upload(Live.update)

            let update = try #require(live.emulator.customerUpdates.first)
            #expect(live.emulator.customerUpdates.count == 1)
            #expect(live.emulator.events.isEmpty)
            #expect(update.integration == mode.emulatorIntegration)
            #expect(update.customerIds == identified.values)
            #expect(update.properties == ["plan": "gold", "age": 42])
            #expect(update.timestamp == 1_732_249_200.5)
            let request = try #require(live.requests(on: .customer).first)
            #expect(request.method == "POST")
            #expect(request.path == mode.customerUpdatePath)
            #expect(request.rawQuery == mode.trackingQuery)
            guard case .object(let body)? = request.jsonBody else {
                Issue.record("the customer update body is not a JSON object")
                return
            }
            #expect(body.keys.sorted() == ["customer_ids", "properties", "timestamp"])
            #expect(live.emulator.customer(cookie: identified.cookie ?? "")?.properties == ["plan": "gold", "age": 42])
        }

        @Test(arguments: LiveMode.allCases)
        func wire_everyRequestCarriesJSONHeadersUserAgentAndAuthorization(mode: LiveMode) async throws {
            let live = try LiveHarness(mode, requireCredentials: true)
            defer { live.stop() }

            _ = try await live.repository.fetchSegments(for: identified)
            try await live.repository.linkCustomerIds(identified)
            try await live.uploader.upload(Live.purchase)
            try await live.uploader.upload(Live.update)

            let requests = live.emulator.requests
            #expect(requests.map(\.route) == [.fetch, .link, .event, .customer])
            for request in requests {
                #expect(request.header("Content-Type") == "application/json")
                #expect(request.header("Accept") == "application/json")
                #expect(request.header("Authorization") == mode.authorizationHeader)
                #expect(request.header("User-Agent") == BloomreachConfiguration.defaultUserAgent)
                #expect(request.header("Host") == "127.0.0.1:\(live.emulator.port ?? 0)")
                #expect(request.header("Cookie") == nil)
            }
        }
    }
}
