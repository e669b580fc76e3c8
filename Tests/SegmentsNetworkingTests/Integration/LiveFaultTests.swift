import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

/// One injected fault and the `SegmentsError` the adapters must turn it into.
struct FaultCase: Sendable, CustomTestStringConvertible {
    let name: String
    let fault: EmulatorFault
    let code: SegmentsError.Code
    let isTransient: Bool
    var httpStatus: Int?
    /// The per-request deadline of the failing request (short only for the delay fault).
    var requestTimeout: TimeInterval = LiveHarness.generousTimeout

    var testDescription: String { name }
}

extension LiveIntegrationTests {
    /// Every emulator fault over real loopback HTTP: the mapped error, whether it is transient, that
    /// nothing crashes, and that the next request succeeds once the fault is consumed.
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveFaultTests {
        private static let cookie = anonymous.cookie ?? ""
        private static let answer = ["discovery": (0..<20).map { EmulatorSegment(id: "s\($0)", segmentationId: "g") }]
        private static let decodedAnswer: SegmentsByCategory = [
            .discovery(): (0..<20).map { Segment(id: "s\($0)", segmentationId: "g") },
        ]

        /// The faults every endpoint maps the same way.
        private static let transportAndStatusFaults: [FaultCase] = [
            FaultCase(name: "500", fault: .status(500), code: .httpStatus, isTransient: true, httpStatus: 500),
            FaultCase(name: "502", fault: .status(502), code: .httpStatus, isTransient: true, httpStatus: 502),
            FaultCase(name: "503", fault: .status(503), code: .httpStatus, isTransient: true, httpStatus: 503),
            FaultCase(name: "408", fault: .status(408), code: .httpStatus, isTransient: true, httpStatus: 408),
            FaultCase(name: "429", fault: .status(429), code: .httpStatus, isTransient: true, httpStatus: 429),
            FaultCase(name: "400", fault: .status(400), code: .httpStatus, isTransient: false, httpStatus: 400),
            FaultCase(name: "404", fault: .status(404), code: .httpStatus, isTransient: false, httpStatus: 404),
            FaultCase(name: "401", fault: .status(401), code: .unauthorized, isTransient: false, httpStatus: 401),
            FaultCase(name: "403", fault: .status(403), code: .unauthorized, isTransient: false, httpStatus: 403),
            // The emulator's delay is far beyond the deadline so that a busy machine cannot let the
            // answer win; it costs nothing, since stop() cuts the emulator's wait short. The deadline
            // is long enough for the request to reach the emulator under a sanitizer on a loaded
            // 2-core machine (0.3 s was not under ASan: the fault stayed pending), and longer still
            // where the suites' limits are (`Hang.timeScale`).
            FaultCase(
                name: "delay 1 h vs 1 s deadline", fault: .delay(3600), code: .timeout, isTransient: true,
                requestTimeout: Hang.scaled(1)),
            FaultCase(name: "dropped connection", fault: .dropConnection, code: .network, isTransient: true),
            FaultCase(name: "reset mid-body", fault: .dropMidBody, code: .network, isTransient: true),
            FaultCase(name: "truncated body", fault: .truncatedBody, code: .network, isTransient: true),
            FaultCase(
                name: "1 MB body vs 64 KiB cap", fault: .oversizedBody(bytes: 1_000_000), code: .invalidResponse,
                isTransient: true),
        ]

        /// A 2xx whose body breaks the segments format: a failed fetch, retried like a transient one.
        private static let malformedSuccessFaults: [FaultCase] = [
            FaultCase(name: "malformed JSON", fault: .malformedJSON, code: .invalidResponse, isTransient: true),
            FaultCase(name: "wrong shape", fault: .wrongShape, code: .invalidResponse, isTransient: true),
        ]

        /// A harness for `fault` in `mode`, with a 64 KiB response cap. Stream mode sends a static
        /// bearer token, so an injected 401/403 maps straight to `.unauthorized`; the provider's
        /// refresh-and-retry is covered by `wire_streamInjected401IsRetriedOnceThroughTheProvider`.
        private static func harness(for fault: FaultCase, _ mode: LiveMode) throws -> LiveHarness {
            try LiveHarness(
                mode, requireCredentials: true, refreshesStreamToken: false, requestTimeout: fault.requestTimeout,
                maximumResponseSize: 64 * 1024)
        }

        private static func expect(
            _ error: SegmentsError?, matches fault: FaultCase, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                error?.code == fault.code, "\(fault.name): \(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.isTransient == fault.isTransient, "\(fault.name)", sourceLocation: sourceLocation)
            #expect(error?.httpStatus == fault.httpStatus, "\(fault.name)", sourceLocation: sourceLocation)
        }

        // MARK: Fetch

        @Test(arguments: transportAndStatusFaults + malformedSuccessFaults, LiveMode.allCases)
        func wire_fetchFaultMapsToItsErrorThenTheNextFetchSucceeds(fault: FaultCase, mode: LiveMode) async throws {
            let live = try Self.harness(for: fault, mode)
            defer { live.stop() }
            live.emulator.setFixedSegments(Self.answer, forCookie: Self.cookie)
            live.emulator.injectFault(fault.fault, on: .fetch)

            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            Self.expect(error, matches: fault)
            #expect(live.emulator.pendingFaultCount == 0)
            let recovered = try await live.repository(requestTimeout: LiveHarness.generousTimeout).fetchSegments(for: anonymous)
            #expect(recovered == Self.decodedAnswer)
            #expect(live.requests(on: .fetch).count == 2)
        }

        @Test func wire_503RetryAfterSecondsBecomesRetryAfter() async throws {
            let live = try LiveHarness(.project)
            defer { live.stop() }
            live.emulator.injectFault(.status(503, retryAfter: "7"), on: .fetch)

            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(error?.code == .httpStatus)
            #expect(error?.httpStatus == 503)
            #expect(error?.retryAfter == 7)
            #expect(error?.isTransient == true)
        }

        @Test(arguments: [503, 429])
        func wire_retryAfterHTTPDateIsMeasuredFromTheClock(status: Int) async throws {
            let live = try LiveHarness(.stream)
            defer { live.stop() }
            let retryAt = Live.httpDate(Harness.now.addingTimeInterval(30))
            live.emulator.injectFault(.status(status, retryAfter: retryAt), on: .any)

            let error = await segmentsError { try await live.uploader.upload(Live.purchase) }

            #expect(error?.code == .httpStatus)
            #expect(error?.httpStatus == status)
            #expect(error?.retryAfter == 30)
            #expect(error?.isTransient == true)
            #expect(live.requests(on: .event).first?.header("Authorization") == LiveMode.stream.authorizationHeader)
        }

        @Test func wire_delayBeyondTheDeadlineTimesOutWithoutWaitingForTheServer() async throws {
            let live = try LiveHarness(.project, requestTimeout: 0.3)
            defer { live.stop() }
            // The server answers after an hour (stop() cuts the wait short); the deadline, the
            // only one there is, is 0.3 s. Waiting for the server would pass the suite's time
            // limit, so the outcome shows the deadline ended it; the clock shows only not before.
            live.emulator.injectFault(.delay(3600), on: .fetch)
            let started = Date()

            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(error?.code == .timeout)
            #expect(error?.isTransient == true)
            #expect(Date().timeIntervalSince(started) >= 0.29)
        }

        @Test func wire_delayWithinTheDeadlineIsJustSlow() async throws {
            let live = try LiveHarness(.project, requestTimeout: LiveHarness.generousTimeout)
            defer { live.stop() }
            live.emulator.setFixedSegments(Self.answer, forCookie: Self.cookie)
            live.emulator.injectFault(.delay(0.2), on: .fetch)

            #expect(try await live.repository.fetchSegments(for: anonymous) == Self.decodedAnswer)
        }

        @Test func wire_bodyUnderTheCapIsAcceptedAndOverItIsRefused() async throws {
            let live = try LiveHarness(.project, maximumResponseSize: 64 * 1024)
            defer { live.stop() }
            // A JSON string is the wrong shape for segments: under the cap, the decoder is what refuses it.
            live.emulator.injectFault(.oversizedBody(bytes: 60 * 1024), on: .fetch)
            live.emulator.injectFault(.oversizedBody(bytes: 64 * 1024 + 1), on: .fetch)

            let under = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }
            let over = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(under?.code == .invalidResponse)
            #expect(under?.message.contains("malformed") == true)
            #expect(over?.code == .invalidResponse)
            #expect(over?.message.contains("size limit") == true)
        }

        @Test func wire_malformedSuccessBodiesNeverReadAsNoSegments() async throws {
            let live = try LiveHarness(.project)
            defer { live.stop() }
            live.emulator.injectFault(.malformedJSON, on: .fetch)
            live.emulator.injectFault(.wrongShape, on: .fetch)

            let malformed = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }
            let wrongShape = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }

            #expect(malformed?.message.contains("not JSON") == true)
            #expect(wrongShape?.message.contains("not a JSON object") == true)
            #expect(try await live.repository.fetchSegments(for: anonymous) == [:])
        }

        @Test(arguments: [401, 403])
        func wire_streamInjected401IsRetriedOnceThroughTheProvider(status: Int) async throws {
            let live = try LiveHarness(.stream, requireCredentials: true)
            defer { live.stop() }
            live.emulator.setFixedSegments(Self.answer, forCookie: Self.cookie)
            live.emulator.injectFault(.status(status), on: .fetch)

            #expect(try await live.repository.fetchSegments(for: anonymous) == Self.decodedAnswer)
            #expect(live.scheduler.recordedSleeps == [1])
            #expect(live.requests(on: .fetch).count == 2)

            live.emulator.injectFault(.status(status), on: .fetch, count: 2)
            let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }
            #expect(error?.code == .unauthorized)
            #expect(error?.httpStatus == status)
            #expect(live.scheduler.recordedSleeps == [1, 1])
            #expect(live.requests(on: .fetch).count == 4)
        }

        // MARK: Reused connections

        /// A GET whose kept-alive connection is closed without an answer may be retried by the HTTP
        /// stack on a fresh connection (libcurl does so on Linux); either way it ends at once.
        @Test func wire_fetchDroppedOnAReusedConnectionEndsPromptly() async throws {
            // A 60 s deadline: ending "promptly" means well before it (a .timeout also fails below).
            let live = try LiveHarness(.project, requestTimeout: 60)
            defer { live.stop() }
            live.emulator.setFixedSegments(Self.answer, forCookie: Self.cookie)
            _ = try await live.repository.fetchSegments(for: anonymous)
            live.emulator.injectFault(.dropConnection, on: .fetch)
            let started = Date()

            let result: Result<SegmentsByCategory, SegmentsError>
            do {
                result = .success(try await live.repository.fetchSegments(for: anonymous))
            } catch {
                result = .failure(SegmentsError.wrapping(error))
            }

            #expect(Date().timeIntervalSince(started) < 30)  // hang-only bound, half the deadline
            switch result {
            case .success(let segments): #expect(segments == Self.decodedAnswer)
            case .failure(let error): #expect(error.code == .network && error.isTransient)
            }
            #expect(try await live.repository.fetchSegments(for: anonymous) == Self.decodedAnswer)
        }

        /// A POST on a kept-alive connection that the server drops without an answer (after processing
        /// it). libcurl retries it on a fresh connection, but swift-corelibs-foundation cannot rewind a
        /// `Data` body, so the retry sends the headers without the body and waits: the request ends
        /// only at its deadline, as a transient `.timeout`. Apple's stack fails it with `.network`.
        /// Either way the failure is transient, bounded by the deadline, and the item arrived once.
        @Test func e3_uploadDroppedOnAReusedConnectionFailsTransientlyWithinItsDeadline() async throws {
            let live = try LiveHarness(.project, requestTimeout: 0.5)
            defer { live.stop() }
            try await live.uploader(requestTimeout: LiveHarness.generousTimeout).upload(Live.update)
            live.emulator.injectFault(.dropConnection, on: .event)
            let error = await segmentsError { try await live.uploader.upload(Live.purchase) }

            // Bounded by the 0.5 s deadline (the suite's time limit ends a hang); the code says
            // whether the stack failed at once or at the deadline.
            #expect(error?.code == .network || error?.code == .timeout, "\(String(describing: error))")
            #expect(error?.isTransient == true)
            #expect(live.emulator.events.count == 1)
            try await live.uploader(requestTimeout: LiveHarness.generousTimeout).upload(Live.update)
            #expect(live.emulator.customerUpdates.count == 2)
        }

        /// The emulator closes connections idle for longer than its read time-out, as real servers do;
        /// the transport must notice and open a fresh connection rather than fail or hang.
        @Test func e3_uploadAfterTheServerClosedAnIdleConnectionSucceeds() async throws {
            let live = try LiveHarness(
                .project, requestTimeout: LiveHarness.generousTimeout, emulatorLimits: EmulatorLimits(readTimeout: 0.2))
            defer { live.stop() }
            try await live.uploader.upload(Live.purchase)
            // Ordered, not slept: the next request comes once the server has closed the idle
            // connection (its 0.2 s read time-out), so it is surely closed, not closing.
            let deadline = Date().addingTimeInterval(30)
            while live.emulator.openConnectionCount > 0 && Date() < deadline {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            #expect(live.emulator.openConnectionCount == 0, "the server did not close the idle connection")

            try await live.uploader.upload(Live.purchase)

            #expect(live.emulator.events.count == 2)
        }

        // MARK: Link-ids

        @Test(arguments: transportAndStatusFaults, LiveMode.allCases)
        func c4_linkFaultIsLinkFailedAndAsTransientAsItsCause(fault: FaultCase, mode: LiveMode) async throws {
            let live = try Self.harness(for: fault, mode)
            defer { live.stop() }
            live.emulator.injectFault(fault.fault, on: .link)

            let error = await segmentsError { try await live.repository.linkCustomerIds(identified) }

            #expect(error?.code == .linkFailed, "\(fault.name)")
            #expect((error?.underlying as? SegmentsError)?.code == fault.code, "\(fault.name)")
            #expect(error?.isTransient == fault.isTransient, "\(fault.name)")
            #expect(error?.httpStatus == fault.httpStatus, "\(fault.name)")
            try await live.repository(requestTimeout: LiveHarness.generousTimeout).linkCustomerIds(identified)
            #expect(live.requests(on: .link).count == 2)
        }

        // MARK: Tracking

        @Test(arguments: transportAndStatusFaults, LiveMode.allCases)
        func e3_uploadFaultMapsToItsErrorThenTheNextUploadSucceeds(fault: FaultCase, mode: LiveMode) async throws {
            let live = try Self.harness(for: fault, mode)
            defer { live.stop() }
            live.emulator.injectFault(fault.fault, on: .event)

            let error = await segmentsError { try await live.uploader.upload(Live.purchase) }

            Self.expect(error, matches: fault)
            #expect(live.emulator.pendingFaultCount == 0)
            try await live.uploader(requestTimeout: LiveHarness.generousTimeout).upload(Live.update)
            #expect(live.emulator.customerUpdates.count == 1)
            // A status fault answers before processing; every other fault garbles only the answer of
            // a request the emulator processed, so the event arrived although the client saw a failure.
            let processed: Bool
            if case .status = fault.fault { processed = false } else { processed = true }
            #expect(live.emulator.events.count == (processed ? 1 : 0), "\(fault.name)")
        }

        @Test(arguments: malformedSuccessFaults, LiveMode.allCases)
        func e3_uploadIgnoresTheBodyOfA2xx(fault: FaultCase, mode: LiveMode) async throws {
            let live = try Self.harness(for: fault, mode)
            defer { live.stop() }
            live.emulator.injectFault(fault.fault, on: .event)
            live.emulator.injectFault(fault.fault, on: .customer)

            try await live.uploader.upload(Live.purchase)
            try await live.uploader.upload(Live.update)

            #expect(live.emulator.events.count == 1)
            #expect(live.emulator.customerUpdates.count == 1)
            #expect(live.emulator.pendingFaultCount == 0)
        }

        @Test func e3_failedUploadRetriedAfterRecoveryArrivesOnce() async throws {
            let live = try LiveHarness(.project)
            defer { live.stop() }
            live.emulator.injectFault(.status(500), on: .event, count: 2)

            let first = await segmentsError { try await live.uploader.upload(Live.purchase) }
            let second = await segmentsError { try await live.uploader.upload(Live.purchase) }
            try await live.uploader.upload(Live.purchase)

            #expect(first?.isTransient == true && second?.isTransient == true)
            #expect(live.requests(on: .event).count == 3)
            #expect(live.emulator.events.count == 1)
            #expect(live.emulator.events.first?.timestamp == 1_732_249_200.123)
        }
    }
}
