import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting
import Testing

/// The real-time engine over ODP: listeners, debounce and change delivery with qualified audiences
/// as one category (see Behaviour O5), on virtual time over a scripted transport.
@Suite(Hang.timeLimit(minutes: 2)) struct ODPBackendTests {
    static let path = "/v3/graphql"

    static func answer(_ qualified: [String]) -> RecordingTransport.Answer {
        let edges = ["seg-1", "seg-2"].map { name in
            #"{"node":{"name":"\#(name)","state":"\#(qualified.contains(name) ? "qualified" : "not_qualified")"}}"#
        }.joined(separator: ",")
        return .json(#"{"data":{"customer":{"audiences":{"edges":[\#(edges)]}}}}"#)
    }

    static func configuration(host: String = "https://odp.example.com") -> SegmentsClient.Configuration {
        .init(backend: .odp(ODPConfiguration(apiKey: "PUBLIC_KEY", apiHost: host), candidates: ["seg-1", "seg-2"]))
    }

    static let seg1 = Segment(id: "seg-1", segmentationId: "odp")
    static let seg2 = Segment(id: "seg-2", segmentationId: "odp")

    @Test func o5_listenersHearQualifiedAudiencesAsOneCategory() async throws {
        let harness = ClientHarness()
        harness.transport.respond(to: Self.path, with: Self.answer(["seg-1"]))
        try harness.client.configure(Self.configuration())
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .audiences(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 4.9)
        #expect(told.all.isEmpty, "debounced")
        await harness.advance(by: 0.1)
        #expect(told.all == [[Self.seg1]])
        let request = try #require(harness.transport.requests(to: Self.path).first)
        #expect(request.headers["x-api-key"] == "PUBLIC_KEY")
        let body = try #require(try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any])
        let variables = try #require(body["variables"] as? [String: Any])
        #expect(variables["userId"] as? String == "vuid_\(harness.client.customerCookie!)")
        #expect((body["query"] as? String)?.contains("customer(vuid: $userId)") == true)
        let cached = Recorder<Result<[Segment], SegmentsError>>()
        harness.client.getSegments(category: .audiences()) { cached.record($0) }
        await drained(harness.deliveryQueue)
        #expect(try cached.all.first?.get() == [Self.seg1], "answered from the cache")
    }

    @Test func o5_aChangeOfQualificationIsDeliveredOnceAfterTheDebounce() async throws {
        let harness = ClientHarness()
        harness.transport.respond(to: Self.path, with: Self.answer(["seg-1"]))
        try harness.client.configure(Self.configuration())
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .audiences(), includeFirstLoad: true) { told.record($0) }
        await harness.advance(by: 5)
        harness.transport.respond(to: Self.path, with: Self.answer(["seg-1", "seg-2"]))
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        await harness.advance(by: 5)
        #expect(told.all == [[Self.seg1], [Self.seg1, Self.seg2]])
        #expect(harness.transport.requests(to: Self.path).count == 2, "two events, one coalesced reload")
        try harness.client.trackEvent(properties: [:], timestamp: nil, eventType: "view_item")
        await harness.advance(by: 5)
        #expect(told.count == 2, "unchanged audiences are not delivered again")
        #expect(harness.transport.requests(to: Self.path).count == 3)
    }

    @Test func o5_identifiedCustomersAreAskedAboutByTheirUserIdWithoutALinkRequest() async throws {
        let harness = ClientHarness()
        harness.transport.respond(to: Self.path, with: Self.answer([]))
        try harness.client.configure(Self.configuration())
        try harness.client.identifyCustomer(customerIds: ["registered": "jane@example.com"], properties: [:], timestamp: nil)
        let read = Recorder<Result<[Segment], SegmentsError>>()
        harness.client.getSegments(force: true, category: .audiences()) { read.record($0) }
        await harness.advance()
        #expect(try read.all.first?.get() == [])
        let requests = harness.transport.requests
        #expect(requests.allSatisfy { $0.path == Self.path })
        let body = try #require(try JSONSerialization.jsonObject(with: requests.last?.body ?? Data()) as? [String: Any])
        #expect((body["variables"] as? [String: Any])?["userId"] as? String == "jane@example.com")
        #expect((body["query"] as? String)?.contains("customer(fs_user_id: $userId)") == true)
    }

    @Test func o5_anInvalidIdentifierFailsTheReadAndDeliversNothing() async throws {
        let harness = ClientHarness()
        harness.transport.respond(
            to: Self.path,
            with: .json(#"{"errors":[{"message":"x","extensions":{"code":"INVALID_IDENTIFIER_EXCEPTION","classification":"DataFetchingException"}}],"data":{"customer":null}}"#))
        try harness.client.configure(Self.configuration())
        let told = Recorder<[Segment]>()
        harness.client.addListener(category: .audiences()) { told.record($0) }
        let read = Recorder<Result<[Segment], SegmentsError>>()
        harness.client.getSegments(force: true, category: .audiences()) { read.record($0) }
        await harness.advance()
        guard case .failure(let error)? = read.all.first else {
            Issue.record("the read did not fail")
            return
        }
        #expect(error.code == .invalidIdentifier)
        await harness.advance(by: 120)
        #expect(told.all.isEmpty)
        #expect(
            harness.transport.requests.count == 1,
            "the read's fetch also carries the reload the listener requested; permanent, so no retry")
    }

    @Test func o4_aBadODPHostIsRefusedAtConfigure() {
        let harness = ClientHarness()
        let error = #expect(throws: SegmentsError.self) { try harness.client.configure(Self.configuration(host: "odp.example.com")) }
        #expect(error?.code == .invalidConfiguration)
        #expect(!harness.client.isConfigured)
    }
}
