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
        let server = try KeepAliveServer()
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport()
        for _ in 0..<3 {
            let response = try await transport.send(SegmentsHTTPRequest(url: server.url, timeout: 30))
            #expect(response.status == 200)
        }
        #expect(server.requests == 3)
        #expect(server.connections == 1, "each request made a session of its own")
    }
}

/// An HTTP/1.1 peer on 127.0.0.1 that keeps connections alive: each connection is served on its
/// own thread, request after request (`200`, `{}`), until the client closes it. It counts
/// connections and requests.
///
/// As in `LoopbackServer`, only the thread that owns a descriptor closes it: ``stop()`` shuts the
/// connections down and wakes the accept thread through a pipe, then waits for the threads.
private final class KeepAliveServer: Sendable {
    private struct State {
        var connections = 0
        var requests = 0
        var open: Set<Int32> = []
        var stopped = false
    }

    let port: UInt16
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let threads = DispatchGroup()
    private let state = Locked(State())

    init() throws {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SocketError() }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        var ends: [Int32] = [0, 0]
        guard bound, pipe(&ends) == 0 else {
            close(fd)
            throw SocketError()
        }
        for descriptor in [fd] + ends { _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD, 0) | FD_CLOEXEC) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
        listener = fd
        wake = (ends[0], ends[1])
        port = UInt16(bigEndian: address.sin_port)
        threads.enter()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    struct SocketError: Error {}

    var url: URL { URL(string: "http://127.0.0.1:\(port)/webxp/projects/T/segments")! }
    var connections: Int { state.value.connections }
    var requests: Int { state.value.requests }

    func stop() {
        let open: Set<Int32>? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.open
        }
        guard let open else { return }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        if threads.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("the keep-alive server's threads did not finish within 30 s")
        }
        close(wake.write)
    }

    private func acceptLoop() {
        defer {
            close(listener)
            close(wake.read)
            threads.leave()
        }
        while true {
            var polled = [listener, wake.read].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if polled[1].revents != 0 { return }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, fcntl(client, F_GETFD, 0) | FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL, 0) & ~O_NONBLOCK)
            #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let admitted = state.withLock { state in
                guard !state.stopped else { return false }
                state.connections += 1
                state.open.insert(client)
                return true
            }
            guard admitted else {
                close(client)
                return
            }
            threads.enter()
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer { threads.leave() }
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8)
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        serving: while true {
            // Requests without a body (GET): each ends at its blank line.
            while let end = Self.headEnd(in: buffer) {
                buffer.removeFirst(end)
                state.withLock { $0.requests += 1 }
                var offset = 0
                while offset < response.count {
                    #if os(Linux)
                    let written = response[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    #else
                    let written = response[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
                    #endif
                    guard written > 0 else { break serving }
                    offset += written
                }
            }
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[0..<count])
        }
        state.withLock { _ = $0.open.remove(client) }
        close(client)
    }

    /// The length of the first request head in `buffer` (through its blank line), if complete.
    private static func headEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 3..<buffer.count
        where buffer[index - 3] == 13 && buffer[index - 2] == 10 && buffer[index - 1] == 13 && buffer[index] == 10 {
            return index + 1
        }
        return nil
    }
}
