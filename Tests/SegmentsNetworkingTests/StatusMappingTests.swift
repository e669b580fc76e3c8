import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

@Suite(Hang.timeLimit(minutes: 2)) struct StatusMappingTests {
    private static let path = "/webxp/projects/TOKEN/segments"

    private func fetchError(_ answer: RecordingTransport.Answer) async -> SegmentsError? {
        let harness = Harness()
        harness.transport.respond(to: Self.path, with: answer)
        return await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
    }

    @Test(arguments: [200, 201, 204, 299])
    func wire_2xxIsSuccess(status: Int) async {
        #expect(await fetchError(.json("{}", status: status)) == nil)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func t7_transientStatusesAreRetryableHTTPStatusErrors(status: Int) async {
        let error = await fetchError(.status(status))
        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(error?.isTransient == true)
    }

    @Test(arguments: [401, 403])
    func wire_401And403AreUnauthorized(status: Int) async {
        let error = await fetchError(.status(status))
        #expect(error?.code == .unauthorized)
        #expect(error?.httpStatus == status)
        #expect(error?.isTransient == false)
    }

    @Test(arguments: [300, 304, 400, 404, 405, 409, 410, 413, 422, 451])
    func wire_otherStatusesArePermanent(status: Int) async {
        let error = await fetchError(.status(status))
        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(error?.isTransient == false)
    }

    @Test func wire_errorStatusWithABodyIsStillAnErrorNotADecodedAnswer() async {
        let error = await fetchError(.json(#"{"discovery": []}"#, status: 500))
        #expect(error?.code == .httpStatus)
    }

    @Test(arguments: [
        (URLError(.notConnectedToInternet) as any Error, SegmentsError.Code.network),
        (URLError(.networkConnectionLost), .network),
        (URLError(.cannotFindHost), .network),
        (URLError(.timedOut), .timeout),
        (URLError(.cancelled), .cancelled),
        (CancellationError(), .cancelled),
        (SegmentsError(.timeout, "slow"), .timeout),
        (SegmentsError(.invalidResponse, "too large"), .invalidResponse),
        (CocoaError(.fileReadUnknown), .network),
    ])
    func wire_transportErrorsMapToNetworkTimeoutOrCancelled(thrown: any Error, expected: SegmentsError.Code) async {
        let error = await fetchError(.failure(thrown))
        #expect(error?.code == expected)
        #expect(error?.httpStatus == nil)
    }

    @Test func t7_transportFailuresAndTimeoutsAreTransient() async {
        #expect(await fetchError(.failure(URLError(.notConnectedToInternet)))?.isTransient == true)
        #expect(await fetchError(.failure(URLError(.timedOut)))?.isTransient == true)
    }

    @Test func uploadsMapStatusesTheSameWay() async {
        let harness = Harness(transport: RecordingTransport(fallback: .status(503)))
        let event = TrackedEvent(kind: .event(type: "x"), customerIds: anonymous, properties: [:], timestamp: Harness.now)
        let transient = await segmentsError { try await harness.uploader.upload(event) }
        #expect(transient?.code == .httpStatus && transient?.isTransient == true)
        harness.transport.setFallback(.status(400))
        let permanent = await segmentsError { try await harness.uploader.upload(event) }
        #expect(permanent?.code == .httpStatus && permanent?.isTransient == false)
        harness.transport.setFallback(.json("not json either", status: 202))
        #expect(await segmentsError { try await harness.uploader.upload(event) } == nil)
    }

    @Test(arguments: [(503, true), (429, true), (400, false), (401, false)])
    func c4_linkFailureWrapsItsCauseAndIsAsTransient(status: Int, transient: Bool) async throws {
        let harness = Harness(transport: RecordingTransport(fallback: .status(status, headers: ["Retry-After": "7"])))
        let error = try #require(await segmentsError { try await harness.repository.linkCustomerIds(identified) })
        #expect(error.code == .linkFailed)
        #expect(error.httpStatus == status)
        #expect(error.retryAfter == 7)
        #expect(error.isTransient == transient)
        #expect((error.underlying as? SegmentsError)?.httpStatus == status)
    }

    @Test func c4_linkTransportFailureIsATransientLinkFailure() async {
        let harness = Harness(transport: RecordingTransport(fallback: .failure(URLError(.timedOut))))
        let error = await segmentsError { try await harness.repository.linkCustomerIds(identified) }
        #expect(error?.code == .linkFailed)
        #expect(error?.isTransient == true)
    }

    @Test func p4_errorMessagesCarryNoIdsOrCredentials() async throws {
        let harness = Harness(authorization: .token("SECRET-KEY"), transport: RecordingTransport(fallback: .status(500)))
        let fetch = try #require(await segmentsError { _ = try await harness.repository.fetchSegments(for: identified) })
        let link = try #require(await segmentsError { try await harness.repository.linkCustomerIds(identified) })
        for error in [fetch, link] {
            for secret in ["SECRET-KEY", "jane@example.com", identified.cookie ?? "-"] {
                #expect(!error.description.contains(secret))
            }
        }
    }
}

/// Behaviour P6 at the mapping: whatever transport produced it, a 3xx is a permanent HTTP failure.
@Suite(Hang.timeLimit(minutes: 2)) struct RedirectStatusMappingTests {
    @Test(arguments: [300, 301, 302, 303, 304, 307, 308])
    func p6_a3xxIsAPermanentHTTPFailure(status: Int) async {
        let harness = Harness()
        harness.transport.respond(
            to: "/webxp/projects/TOKEN/segments", with: .status(status, headers: ["Location": "http://127.0.0.1:1/x"]))
        let error = await segmentsError { _ = try await harness.repository.fetchSegments(for: anonymous) }
        #expect(error?.code == .httpStatus)
        #expect(error?.httpStatus == status)
        #expect(error?.isTransient == false)
        #expect(error?.message.contains("redirect") == true)
    }
}
