import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// The test kit's `RecordingODPEndpoint`, driven through the real ODP adapter over `RecordingTransport`
/// (issue 14 item 4; see Behaviour O4, Behaviour, wire format, "ODP audiences query").
@Suite(Hang.timeLimit(minutes: 2)) struct RecordingODPEndpointTests {
    let odp = RecordingODPEndpoint()
    let transport = RecordingTransport()
    let client: ODPAudienceSegmentFetcher

    init() {
        transport.serveODP(odp)
        client = ODPAudienceSegmentFetcher(
            configuration: ODPConfiguration(apiKey: "public-key"), transport: transport, clock: FixedClock(date: Harness.now))
    }

    func fetch(_ userId: String, _ candidates: [String] = ["a", "b", "c"]) async throws -> [String] {
        try await client.fetchQualifiedSegments(userId: userId, candidates: candidates)
    }

    @Test func o4_aKnownUserIsAnsweredPerAudienceInTheOrderAsked() async throws {
        odp.qualify(["c", "a", "not-asked"], forUserId: "user123")
        #expect(try await fetch("user123", ["c", "b", "a"]) == ["c", "a"])
        #expect(odp.queries == [
            .init(field: .fsUserId, userId: "user123", audiences: ["c", "b", "a"], apiKey: "public-key"),
        ])
        #expect(transport.requests(to: RecordingODPEndpoint.path).count == 1)
    }

    @Test func o4_aUserCanBeKnownUnderOneFieldOnly() async throws {
        odp.qualify(["a"], forUserId: "vuid_abc", field: .vuid)
        #expect(try await fetch("vuid_abc") == ["a"])
        let asUser = await segmentsError {
            _ = try await client.fetchQualifiedSegments(for: AudienceIdentifier(field: .fsUserId, value: "vuid_abc"), candidates: ["a"])
        }
        #expect(asUser?.code == .invalidIdentifier, "unknown as fs_user_id")
        #expect(odp.queries.map(\.identifier) == [
            AudienceIdentifier(field: .vuid, value: "vuid_abc"), AudienceIdentifier(field: .fsUserId, value: "vuid_abc"),
        ])
    }

    @Test(arguments: [
        (RecordingODPEndpoint.UnknownUserAnswer.invalidIdentifier, SegmentsError.Code?.some(.invalidIdentifier)),
        (.legacyInvalidIdentifier, .some(.invalidIdentifier)),
        (.nullCustomer, nil),
        (.notQualified, nil),
    ])
    func o4_unknownUsersGetTheChosenAnswer(answer: RecordingODPEndpoint.UnknownUserAnswer, code: SegmentsError.Code?) async {
        odp.unknownUserAnswer = answer
        do {
            #expect(try await fetch("stranger") == [])
            #expect(code == nil)
        } catch let error as SegmentsError {
            #expect(error.code == code)
            #expect(error.reason == .invalidIdentifier)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func o4_scriptedStatusesAndErrorBodiesComeFirstOnceEach() async throws {
        odp.qualify(["a"], forUserId: "user123")
        odp.enqueue(.status(503, headers: ["Retry-After": "2"]))
        odp.enqueue(.graphQLError(classification: "DataFetchingException"))
        odp.enqueue(.body(#"{"data":{}}"#))
        odp.enqueue(.failure(URLError(.notConnectedToInternet)))
        var reasons: [SegmentsError.Reason] = []
        for _ in 0..<4 {
            do {
                _ = try await fetch("user123")
            } catch let error as SegmentsError {
                reasons.append(error.reason)
            }
        }
        #expect(reasons == [.httpStatus(503), SegmentsError.Reason(rawValue: "DataFetchingException"), .decodeError, .networkError])
        #expect(try await fetch("user123") == ["a"], "the script is used up")
        #expect(odp.queries.count == 5)
    }

    @Test func o4_anAPIKeyThatIsNotAcceptedIsRefused() async throws {
        odp.acceptedAPIKeys = ["another-key"]
        odp.qualify(["a"], forUserId: "user123")
        let error = await segmentsError { _ = try await fetch("user123") }
        #expect(error?.code == .unauthorized && error?.httpStatus == 401)
        odp.acceptedAPIKeys = ["public-key"]
        #expect(try await fetch("user123") == ["a"])
    }

    @Test func o4_aBodyThatIsNotAnAudienceQueryIsA400() throws {
        let request = SegmentsHTTPRequest(method: .post, url: URL(string: "https://odp.example.com/v3/graphql")!, body: Data("{}".utf8))
        let response = try odp.respond(to: request)
        #expect(response.status == 400)
        #expect(odp.queries.isEmpty)
    }
}
