import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct BloomreachRequestTests {
    private static let event = TrackedEvent(
        kind: .event(type: "purchase"), customerIds: identified,
        properties: ["price": 9.99, "sku": "A-1", "qty": 2, "gift": nil, "tags": ["a", "b"], "meta": ["ok": true]],
        timestamp: Date(timeIntervalSince1970: 1_732_249_200.123))
    private static let update = TrackedEvent(
        kind: .customerUpdate, customerIds: identified, properties: ["plan": "gold"],
        timestamp: Date(timeIntervalSince1970: 1_732_249_200.5))

    /// Sends one request of every endpoint and returns them in order: fetch, link, event, update.
    private func sendAll(_ harness: Harness) async throws -> [SegmentsHTTPRequest] {
        harness.transport.setFallback(.json("{}"))
        _ = try await harness.repository.fetchSegments(for: identified)
        try await harness.repository.linkCustomerIds(identified)
        try await harness.uploader.upload(Self.event)
        try await harness.uploader.upload(Self.update)
        return harness.transport.requests
    }

    @Test func wire_projectModeEndpoints() async throws {
        let requests = try await sendAll(Harness(.project(token: "TOKEN")))
        let cookie = try #require(identified.cookie)
        #expect(requests.map(\.method) == [.get, .post, .post, .post])
        #expect(requests.map(\.url.absoluteString) == [
            "https://api.exponea.com/webxp/projects/TOKEN/segments?cookie=\(cookie)",
            "https://api.exponea.com/webxp/projects/TOKEN/cookies/\(cookie)/link-ids",
            "https://api.exponea.com/track/v2/projects/TOKEN/customers/events",
            "https://api.exponea.com/track/v2/projects/TOKEN/customers",
        ])
        #expect(requests[0].body == nil)
    }

    @Test func wire_streamModeEndpoints() async throws {
        let requests = try await sendAll(Harness(.stream(id: "STREAM")))
        let cookie = try #require(identified.cookie)
        #expect(requests.map(\.method) == [.get, .post, .post, .post])
        #expect(requests.map(\.url.absoluteString) == [
            "https://api.exponea.com/webxp/streams/STREAM/segments?cookie=\(cookie)",
            "https://api.exponea.com/webxp/streams/STREAM/cookies/\(cookie)/link-ids",
            "https://api.exponea.com/track/u/v1/customers/events?stream_id=STREAM",
            "https://api.exponea.com/track/u/v1/customers?stream_id=STREAM",
        ])
    }

    @Test(arguments: [
        (BloomreachAuthorization.none, nil as String?),
        (.token("API_KEY"), "Token API_KEY"),
        (.bearer("ACCESS"), "Bearer ACCESS"),
    ])
    func wire_everyRequestCarriesJSONHeadersAndAuthorization(
        authorization: BloomreachAuthorization, expected: String?
    ) async throws {
        for integration in [Harness.project, Harness.stream] {
            let requests = try await sendAll(Harness(integration, authorization: authorization))
            #expect(requests.count == 4)
            for request in requests {
                #expect(request.headers["Content-Type"] == "application/json")
                #expect(request.headers["Accept"] == "application/json")
                #expect(request.headers["Authorization"] == expected)
                #expect(request.headers["User-Agent"]?.hasPrefix("RealtimeSegments/") == true)
                #expect(request.timeout == 10)
            }
        }
    }

    @Test func wire_streamModeUsesTheAppJWTAsBearer() async throws {
        let harness = Harness(.stream(id: "S"), authorization: .token("IGNORED"), provider: TokenSequence(["jwt.a.b"]))
        for request in try await sendAll(harness) {
            #expect(request.headers["Authorization"] == "Bearer jwt.a.b")
        }
    }

    @Test func wire_streamModeWithoutAJWTFallsBackToTheStaticAuthorization() async throws {
        let harness = Harness(.stream(id: "S"), authorization: .bearer("STATIC"), provider: TokenSequence([nil]))
        for request in try await sendAll(harness) {
            #expect(request.headers["Authorization"] == "Bearer STATIC")
        }
    }

    @Test func wire_projectModeUsesTheProvidersTokenAsBearerToo() async throws {
        let provider = TokenSequence(["jwt.a.b"])
        let harness = Harness(.project(token: "T"), authorization: .token("KEY"), provider: provider)
        let requests = try await sendAll(harness)
        for request in requests {
            #expect(request.headers["Authorization"] == "Bearer jwt.a.b")
        }
        #expect(provider.timeline.all == Array(repeating: "token jwt.a.b", count: requests.count), "asked once per request")
    }

    @Test func c4_linkBodyCarriesEveryIdExceptCookie() async throws {
        let harness = Harness()
        let customer = CustomerIds(["cookie": "c", "registered": "jane@example.com", "email_id": "j@x"])
        try await harness.repository.linkCustomerIds(customer)
        let body = try #require(harness.transport.requests.first).jsonBody()
        #expect(body.keys.sorted() == ["external_ids"])
        #expect(body["external_ids"] as? [String: String] == ["registered": "jane@example.com", "email_id": "j@x"])
    }

    @Test func c4_linkWithoutHardIdsSendsNothing() async throws {
        let harness = Harness()
        try await harness.repository.linkCustomerIds(anonymous)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test func c5_customerWithoutCookieIsNeverFetchedOrLinked() async {
        let harness = Harness()
        let noCookie = CustomerIds(["registered": "jane@example.com"])
        let fetch = await segmentsError { _ = try await harness.repository.fetchSegments(for: noCookie) }
        let link = await segmentsError { try await harness.repository.linkCustomerIds(noCookie) }
        let empty = await segmentsError { _ = try await harness.repository.fetchSegments(for: CustomerIds(cookie: "")) }
        #expect(fetch?.code == .missingCookie)
        #expect(link?.code == .missingCookie)
        #expect(empty?.code == .missingCookie)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test func e3_eventBodyCarriesIdsPropertiesFractionalTimestampAndType() async throws {
        let harness = Harness()
        try await harness.uploader.upload(Self.event)
        let request = try #require(harness.transport.requests.first)
        let body = try request.jsonBody()
        #expect(body.keys.sorted() == ["customer_ids", "event_type", "properties", "timestamp"])
        #expect(body["customer_ids"] as? [String: String] == identified.values)
        #expect(body["event_type"] as? String == "purchase")
        #expect(body["timestamp"] as? Double == 1_732_249_200.123)
        let properties = try #require(body["properties"] as? [String: Any])
        #expect(properties["price"] as? Double == 9.99)
        #expect(properties["sku"] as? String == "A-1")
        #expect(properties["qty"] as? Int == 2)
        #expect(properties["gift"] is NSNull)
        #expect(properties["tags"] as? [String] == ["a", "b"])
        #expect((properties["meta"] as? [String: Any])?["ok"] as? Bool == true)
        let text = String(decoding: request.body ?? Data(), as: UTF8.self)
        #expect(text.contains(#""timestamp":1732249200.123"#))
    }

    @Test func e3_customerUpdateBodyHasNoEventType() async throws {
        let harness = Harness()
        try await harness.uploader.upload(Self.update)
        let body = try #require(harness.transport.requests.first).jsonBody()
        #expect(body.keys.sorted() == ["customer_ids", "properties", "timestamp"])
        #expect(body["customer_ids"] as? [String: String] == identified.values)
        #expect(body["properties"] as? [String: String] == ["plan": "gold"])
        #expect(body["timestamp"] as? Double == 1_732_249_200.5)
    }

    @Test func e3_uploadUsesTheIdsStampedOnTheItem() async throws {
        let harness = Harness()
        let earlier = CustomerIds(cookie: "old-cookie")
        try await harness.uploader.upload(TrackedEvent(kind: .event(type: "view"), customerIds: earlier, properties: [:], timestamp: Harness.now))
        let body = try #require(harness.transport.requests.first).jsonBody()
        #expect(body["customer_ids"] as? [String: String] == ["cookie": "old-cookie"])
    }

    @Test func e3_propertiesWithoutAJSONFormFailPermanently() async {
        let harness = Harness()
        let event = TrackedEvent(kind: .event(type: "x"), customerIds: anonymous, properties: ["bad": .double(.nan)], timestamp: Harness.now)
        let error = await segmentsError { try await harness.uploader.upload(event) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.isTransient == false)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test func requestTimeoutComesFromTheConfiguration() async throws {
        let transport = RecordingTransport(fallback: .json("{}"))
        let configuration = BloomreachConfiguration(integration: Harness.project, requestTimeout: 3, userAgent: nil)
        let repository = BloomreachSegmentRepository(
            configuration: configuration, transport: transport, scheduler: RecordingSleeper(),
            clock: FixedClock(date: Harness.now), logger: LogRecorder())
        _ = try await repository.fetchSegments(for: anonymous)
        #expect(transport.requests.first?.timeout == 3)
        #expect(transport.requests.first?.headers["User-Agent"] == nil)
    }
}
