import Foundation
import SegmentsDomain
@testable import SegmentsNetworking
import SegmentsTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Behaviour of the Networking module that no other test pinned, each found by a mutant that
/// survived the suite (Docs/MutationSurvivors.tsv lists those no test can kill).
@Suite(Hang.timeLimit(minutes: 1)) struct NetworkingMutationSurvivorTests {
    // MARK: Request bodies (WIRE.md; Docs/CustomTransport.md: "encoded with sorted keys")

    /// An event body is byte-for-byte reproducible: its keys are sorted at every level, so a
    /// signing middleware sees the same bytes for the same event.
    @Test func e3_anEventBodyHasItsKeysSortedAtEveryLevel() async throws {
        let harness = Harness()
        let event = TrackedEvent(
            kind: .event(type: "purchase"),
            customerIds: CustomerIds(["cookie": "c", "registered": "r", "email_id": "e", "phone": "p"]),
            properties: ["zeta": 1, "alpha": "a", "mid": ["y": true, "b": false], "beta": nil, "omega": 2, "kappa": "k"],
            timestamp: Date(timeIntervalSince1970: 1_732_249_200.5))
        try await harness.uploader.upload(event)
        let body = try #require(harness.transport.requests.first?.body)
        let expected = #"{"customer_ids":{"cookie":"c","email_id":"e","phone":"p","registered":"r"},"#
            + #""event_type":"purchase","#
            + #""properties":{"alpha":"a","beta":null,"kappa":"k","mid":{"b":false,"y":true},"omega":2,"zeta":1},"#
            + #""timestamp":1732249200.5}"#
        #expect(String(decoding: body, as: UTF8.self) == expected)
    }

    /// A link-ids body lists the ids in sorted order.
    @Test func c4_aLinkBodyListsTheIdsInSortedOrder() async throws {
        let harness = Harness()
        let customer = CustomerIds(["cookie": "c", "registered": "r", "email_id": "e", "phone": "p", "apple_id": "a"])
        try await harness.repository.linkCustomerIds(customer)
        let body = try #require(harness.transport.requests.first?.body)
        #expect(String(decoding: body, as: UTF8.self) == #"{"external_ids":{"apple_id":"a","email_id":"e","phone":"p","registered":"r"}}"#)
    }

    // MARK: Segment answers (WIRE.md: "Any other shape ... is a failed fetch, never no segments")

    /// A category whose array is cut short is not JSON: the fetch fails, it never reads as a
    /// category with no segments (or none at all).
    @Test(arguments: [
        #"{"discovery":[}"#,
        #"{"discovery":[{"id":"a","segmentation_id":"g"}}"#,
        #"{"content":[],"discovery":[ }"#,
        #"{"discovery":[],"discovery":}"#,
    ])
    func wire_aCategoryWhoseArrayIsNotClosedFailsTheFetch(body: String) async {
        let harness = Harness()
        harness.transport.respond(to: "/webxp/projects/TOKEN/segments", with: .json(body))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .invalidResponse)
        #expect(SegmentsAnswerParser.parse(Data(body.utf8)) == nil, "the fast parser leaves it to Foundation")
    }

    /// The answer parser reads strings of printable ASCII itself, the space (U+0020) included:
    /// segment names such as "Summer sale" are common, and leaving them to the generic decoding
    /// would cost every such answer the slow path (benchmark 5).
    @Test func wire_theAnswerParserReadsStringsWithSpaces() throws {
        let body = #"{"discovery":[{"id":"a b","segmentation_id":" g ","name":"Summer sale"}]}"#
        let parsed = try #require(SegmentsAnswerParser.parse(Data(body.utf8)))
        var expected = SegmentsAnswerParser.Category()
        expected.segments = [Segment(id: "a b", segmentationId: " g ", attributes: ["name": "Summer sale"])]
        #expect(parsed == ["discovery": expected])
    }

    // MARK: Header values (P7; `HeaderValueRules.firstForbidden`: "as `U+000D`")

    /// The error names a forbidden character by its code point in at least four hex digits,
    /// with no padding past four: U+2028, not U+02028.
    @Test func p7_theErrorNamesACharacterOfFourHexDigitsWithoutPadding() {
        #expect(HeaderValueRules.firstForbidden(in: "a\u{2028}b") == "U+2028")
        #expect(HeaderValueRules.firstForbidden(in: "a\u{85}b") == "U+0085")
        let error = #expect(throws: SegmentsError.self) {
            try BloomreachConfiguration(integration: .project(token: "T"), authorization: .token("KEY\u{2029}")).validate()
        }
        #expect(error?.message == "The API key contains a control character (U+2029)")
    }

    // MARK: Proxy environment (P3)

    /// A `no_proxy` entry with a bracket on one side only is no bracketed address: it matches
    /// nothing (the SDK errs towards refusing a loopback request, never towards a proxy).
    @Test(arguments: [
        ("api.example.com", ".example.com]"),
        ("api.example.co", "[.example.com"),
        ("localhost", "xlocalhost]"),
    ])
    func p3_aNoProxyEntryWithOneBracketMatchesNothing(host: String, noProxy: String) throws {
        #expect(!ProxyEnvironment.bypasses(host, noProxy: noProxy))
        let url = try #require(URL(string: "http://\(host)/x"))
        #expect(ProxyEnvironment.proxyVariable(for: url, environment: ["http_proxy": "http://proxy:3128", "no_proxy": noProxy]) == "http_proxy")
    }

    // MARK: Retry-After (T7)

    /// An RFC 850 date whose day-month-year has an empty part (a doubled, leading or trailing
    /// dash) is no HTTP-date.
    @Test(arguments: [
        "Sunday, 06--Nov-94 08:49:37 GMT", "Sunday, -06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-94- 08:49:37 GMT",
        "Sunday, 06-Nov--94 08:49:37 GMT",
    ])
    func t7_anRFC850DateWithAnEmptyPartIsNoDate(value: String) {
        #expect(RetryAfter.seconds(from: value, now: Date(timeIntervalSince1970: 0)) == nil)
    }

    /// Dates in March are measured like any other: a minute before the instant, the wait is a minute.
    @Test(arguments: [
        ("Tue, 01 Mar 2022 00:00:00 GMT", 1_646_092_800.0),
        ("Fri, 31 Mar 2023 12:34:56 GMT", 1_680_266_096),
        ("Sunday, 01-Mar-26 00:00:00 GMT", 1_772_323_200),
        ("Wed Mar  1 00:00:00 2000", 951_868_800),
    ])
    func t7_aDateInMarchIsMeasuredFromNow(value: String, epochSeconds: TimeInterval) {
        #expect(RetryAfter.seconds(from: value, now: Date(timeIntervalSince1970: epochSeconds - 60)) == 60)
    }

    // MARK: ODP identifier fields (O4: "only these known field names (or explicitly configured ones)")

    /// A configured field name that is a GraphQL name with capitals or underscores is accepted
    /// and reaches the query text.
    @Test(arguments: ["customerId", "_id", "user_email", "Email", "_"])
    func o4_aConfiguredGraphQLNameWithCapitalsOrUnderscoresIsAccepted(name: String) async throws {
        let configuration = ODPConfiguration(apiKey: "k", additionalIdentifierFields: [name])
        try configuration.validate()
        let field = AudienceIdentifier.Field(rawValue: name)
        #expect(configuration.allows(field))
        let transport = RecordingTransport(fallback: .json(#"{"data":{"customer":{"audiences":{"edges":[]}}}}"#))
        let fetcher = ODPAudienceSegmentFetcher(configuration: configuration, transport: transport, clock: FixedClock(date: Harness.now))
        _ = try await fetcher.fetchQualifiedSegments(for: AudienceIdentifier(field: field, value: "u"), candidates: ["a"])
        let query = try #require(try transport.requests.first?.jsonBody()["query"] as? String)
        #expect(query.contains("{customer(\(name): $userId) {"))
    }
}

/// The loopback session of `URLSessionSegmentsTransport` (the type's documentation: "It owns its
/// `URLSession`s (one for loopback hosts, without proxies)", made on the first loopback request),
/// seen from a keep-alive peer on 127.0.0.1.
@Suite(Hang.timeLimit(minutes: 1)) struct LoopbackSessionSharingTests {
    /// Requests to a loopback host share the one loopback session, so they share its connection.
    @Test func p3_loopbackRequestsShareOneSessionAndItsConnection() async throws {
        let answer = LoopbackServer.response(
            "200 OK", headers: ["Content-Type: application/json"], body: Data("{}".utf8), keepsAlive: true)
        let server = try LoopbackServer { _ in .keepAlive(after: answer) }
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport()
        for _ in 0..<3 {
            let response = try await transport.send(SegmentsHTTPRequest(url: server.url("/webxp/projects/T/segments"), timeout: 30))
            #expect(response.status == 200)
        }
        #expect(server.received.count == 3)
        #expect(server.connections == 1, "each request made a session of its own")
    }
}
