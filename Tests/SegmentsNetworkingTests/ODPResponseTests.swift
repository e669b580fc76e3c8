import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// Decoding of ODP answers and the mapping of every error shape (Behaviour, wire format, "ODP audiences query", see Behaviour O4).
@Suite(Hang.timeLimit(minutes: 2)) struct ODPResponseTests {
    private func fetch(_ answer: RecordingTransport.Answer, logger: RecordingLogger? = nil) async throws -> [String] {
        let client = ODPAudienceSegmentFetcher(
            configuration: ODPConfiguration(apiKey: "k"), transport: RecordingTransport(fallback: answer),
            clock: FixedClock(date: Harness.now), logger: logger)
        return try await client.fetchQualifiedSegments(userId: "user123", candidates: ["a", "b", "c"])
    }

    private func failure(_ answer: RecordingTransport.Answer) async -> SegmentsError? {
        await segmentsError { _ = try await fetch(answer) }
    }

    private static func edges(_ nodes: [(String, String)]) -> String {
        let list = nodes.map { #"{"node":{"name":"\#($0.0)","state":"\#($0.1)"}}"# }.joined(separator: ",")
        return #"{"data":{"customer":{"audiences":{"edges":[\#(list)]}}}}"#
    }

    @Test func o4_qualifiedNamesInResponseOrder() async throws {
        #expect(try await fetch(.json(Self.edges([("a", "qualified"), ("b", "not_qualified")]))) == ["a"])
        #expect(try await fetch(.json(Self.edges([("c", "qualified"), ("b", "qualified"), ("a", "qualified")])))
            == ["c", "b", "a"])
        #expect(try await fetch(.json(Self.edges([("a", "QUALIFIED"), ("b", ""), ("c", "pending")]))) == [])
        #expect(try await fetch(.json(Self.edges([]))) == [])
    }

    @Test func o4_aNullCustomerIsAnUnknownUserWithNoSegments() async throws {
        #expect(try await fetch(.json(#"{"data":{"customer":null}}"#)) == [])
        #expect(try await fetch(.json(#"{"errors":[],"data":{"customer":null}}"#)) == [])
    }

    @Test(arguments: [
        #"{"errors":[{"message":"could not resolve _fs_user_id","extensions":{"code":"INVALID_IDENTIFIER_EXCEPTION","classification":"DataFetchingException"}}],"data":{"customer":null}}"#,
        #"{"errors":[{"message":"could not resolve _fs_user_id","extensions":{"classification":"InvalidIdentifierException"}}],"data":{"customer":null}}"#,
        #"{"errors":[{"message":"x","extensions":{"classification":"DataFetchingException"}},{"message":"y","extensions":{"code":"INVALID_IDENTIFIER_EXCEPTION"}}]}"#,
    ])
    func o4_invalidIdentifierInItsCurrentAndLegacyForms(body: String) async {
        let error = await failure(.json(body))
        #expect(error?.code == .invalidIdentifier)
        #expect(error?.reason == .invalidIdentifier)
        #expect(error?.isTransient == false)
        #expect((error?.underlying as? ODPGraphQLError)?.isInvalidIdentifier == true)
        #expect(error.map { !$0.description.contains("_fs_user_id") } ?? false)
    }

    @Test(arguments: ["DataFetchingException", "ValidationError", "InternalServerError"])
    func o4_anotherClassificationFailsTheFetchWithThatClassification(classification: String) async {
        let body = #"{"errors":[{"message":"boom","extensions":{"classification":"\#(classification)"}}],"data":{"customer":null}}"#
        let error = await failure(.json(body))
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains(classification) == true)
        let graphQL = error?.underlying as? ODPGraphQLError
        #expect(graphQL?.classification == classification)
        #expect(error?.reason == SegmentsError.Reason(rawValue: classification))
        #expect(graphQL?.reason == classification)
        #expect(graphQL?.message == "boom")
    }

    @Test func o4_anErrorWithoutClassificationIsADecodeError() async {
        let error = await failure(.json(#"{"errors":[{"message":"odd"}]}"#))
        #expect(error?.code == .invalidResponse)
        #expect((error?.underlying as? ODPGraphQLError)?.reason == "decode error")
        #expect(error?.reason == .decodeError)
    }

    @Test(arguments: [400, 404, 413, 500, 502, 503])
    func o4_anHTTPStatusOf400OrMoreFailsWithTheStatus(status: Int) async {
        let error = await failure(.json(Self.edges([("a", "qualified")]), status: status))
        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(error?.reason == .httpStatus(status) && error?.reason.rawValue == String(status))
    }

    @Test(arguments: [401, 403])
    func o4_refusedKeysAreUnauthorizedWithTheStatus(status: Int) async {
        let error = await failure(.status(status))
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == status)
        #expect(error?.reason == .httpStatus(status))
    }

    @Test(arguments: [
        "",
        "not json",
        "[]",
        "null",
        #"{}"#,
        #"{"data":null}"#,
        #"{"data":{}}"#,
        #"{"data":{"customer":{}}}"#,
        #"{"data":{"customer":{"audiences":{}}}}"#,
        #"{"data":{"customer":{"audiences":{"edges":{}}}}}"#,
        #"{"data":{"customer":"user123"}}"#,
    ])
    func o4_aBodyMissingDataCustomerAudiencesEdgesIsADecodeError(body: String) async {
        let error = await failure(.json(body))
        #expect(error?.code == .invalidResponse)
        #expect(error?.reason == .decodeError)
        #expect(error?.message.contains("decode error") == true)
    }

    /// Issue 14, defect 2: one bad node failed the whole answer with `.invalidResponse`.
    @Test(arguments: [
        #"{"node":{"name":"x"}}"#,
        #"{"node":{"state":"qualified"}}"#,
        #"{"node":{"name":1,"state":"qualified"}}"#,
        #"{"node":{"name":"x","state":null}}"#,
        #"{"name":"x","state":"qualified"}"#,
        #"{"node":null}"#,
        #"null"#,
        #""x""#,
    ])
    func o4_aMalformedNodeIsDroppedWithAWarningAndTheRestKept(badEdge: String) async throws {
        let logger = RecordingLogger()
        let body = #"{"data":{"customer":{"audiences":{"edges":["#
            + #"{"node":{"name":"a","state":"qualified"}},\#(badEdge),{"node":{"name":"b","state":"not_qualified"}},"#
            + #"\#(badEdge),{"node":{"name":"c","state":"qualified"}}]}}}}"#
        #expect(try await fetch(.json(body), logger: logger) == ["a", "c"])
        #expect(logger.messages == ["Segments: Ignored 2 ODP audience node(s) without name or state"])
        #expect(logger.entries.map(\.level) == [.warning])
    }

    @Test func o4_aWellFormedAnswerLogsNothing() async throws {
        let logger = RecordingLogger()
        #expect(try await fetch(.json(Self.edges([("a", "qualified")])), logger: logger) == ["a"])
        #expect(logger.entries.isEmpty)
    }

    @Test(arguments: [
        (URLError(.timedOut) as any Error, SegmentsError.Code.timeout),
        (SegmentsError(.timeout, "slow"), .timeout),
        (URLError(.notConnectedToInternet), .network),
        (CancellationError(), .cancelled),
    ])
    func o4_transportFailuresKeepTheirCodeAndUnderlyingError(thrown: any Error, code: SegmentsError.Code) async {
        let error = await failure(.failure(thrown))
        #expect(error?.code == code)
        #expect(error?.reason == [.timeout: .timeout, .network: .networkError, .cancelled: SegmentsError.Reason(rawValue: "cancelled")][code])
    }
}
