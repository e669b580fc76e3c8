import Foundation
import SegmentsDomain
import SegmentsNetworking
import SegmentsTesting
import Testing

/// `URLSessionSegmentsTransport` against a real socket on 127.0.0.1 (no emulator, no internet).
@Suite(Hang.timeLimit(minutes: 2)) struct URLSessionTransportTests {
    @Test func sendsTheRequestAndReturnsStatusHeadersAndBody() async throws {
        let server = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("200 OK", headers: ["Content-Type: application/json", "X-Custom: v"], body: Data("{}".utf8)))
        }
        defer { server.stop() }
        let request = SegmentsHTTPRequest(
            method: .post, url: server.url("/track/v2/projects/T/customers/events"),
            headers: ["Content-Type": "application/json", "Authorization": "Token K"], body: Data(#"{"a":1}"#.utf8))
        let response = try await URLSessionSegmentsTransport().send(request)
        #expect(response.status == 200)
        #expect(response.headers["x-custom"] == "v")
        #expect(response.body == Data("{}".utf8))
        let received = try #require(server.received.first)
        #expect(received.head.hasPrefix("POST /track/v2/projects/T/customers/events HTTP/1.1\r\n"))
        #expect(received.head.lowercased().contains("authorization: token k"))
        #expect(received.body == Data(#"{"a":1}"#.utf8))
    }

    @Test func errorStatusesAreResponsesNotErrors() async throws {
        let server = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("503 Service Unavailable", headers: ["Retry-After: 3"]))
        }
        defer { server.stop() }
        let response = try await URLSessionSegmentsTransport().send(SegmentsHTTPRequest(url: server.url()))
        #expect(response.status == 503)
        #expect(response.headers["retry-after"] == "3")
    }

    @Test func bodyAtTheCapIsAccepted() async throws {
        let body = Data(repeating: 0x61, count: 1000)
        let server = try LoopbackServer { _ in .close(after: LoopbackServer.response("200 OK", body: body)) }
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport(maximumResponseSize: 1000)
        #expect(try await transport.send(SegmentsHTTPRequest(url: server.url())).body == body)
    }

    @Test func announcedLengthOverTheCapFailsWithoutWaitingForTheBody() async throws {
        // Announces 5 MiB, sends a few bytes and stalls: only an early check can fail fast.
        let server = try LoopbackServer { _ in
            .hang(after: LoopbackServer.response("200 OK", body: Data("{\"a\":".utf8), announcedLength: 5 << 20))
        }
        defer { server.stop() }
        // The outcome proves it, not a clock: the rest of the body never comes, so without the
        // check the answer would be `.timeout`, 300 s later.
        let error = await segmentsError {
            _ = try await URLSessionSegmentsTransport().send(SegmentsHTTPRequest(url: server.url(), timeout: 300))
        }
        #expect(error?.code == .invalidResponse)
    }

    @Test func p7_contentSniffing_anAnnouncedLengthOverTheCapFailsOnTheHeadersAlone() async throws {
        // Apple's condition: no Content-Type, so content sniffing holds a body under 512 bytes back
        // from the data delegate. Here not one body byte is sent — the headers announce 5 MiB, then
        // the server stalls — so only the check made when the headers arrive can answer
        // `.invalidResponse`; without it the answer is `.timeout`, at the 120 s deadline. (The
        // outcome proves it, not a clock: a loaded run under ASan once took 20 s to get here.)
        let head = LoopbackServer.response("200 OK", announcedLength: 5 << 20)
        #expect(!String(decoding: head, as: UTF8.self).lowercased().contains("content-type"))
        #expect(head.suffix(4) == Data("\r\n\r\n".utf8), "the reply is the head and nothing after it")
        let server = try LoopbackServer { _ in .hang(after: head) }
        defer { server.stop() }
        let started = Date()
        let error = await segmentsError {
            _ = try await URLSessionSegmentsTransport().send(SegmentsHTTPRequest(url: server.url(), timeout: 120))
        }
        #expect(error?.code == .invalidResponse, "\(String(describing: error)) after \(Date().timeIntervalSince(started)) s")
        #expect(server.received.count == 1)
    }

    @Test func streamedBodyOverTheCapFails() async throws {
        let server = try LoopbackServer { _ in
            .close(after: LoopbackServer.response("200 OK", body: Data(repeating: 0x61, count: 200_000), sendsLength: false))
        }
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport(maximumResponseSize: 1000)
        let error = await segmentsError { _ = try await transport.send(SegmentsHTTPRequest(url: server.url())) }
        #expect(error?.code == .invalidResponse)
    }

    @Test func silentServerTimesOut() async throws {
        let server = try LoopbackServer { _ in .hang(after: Data()) }
        defer { server.stop() }
        // The request's 0.5 s, not the transport's 300 s (the longest deadline there is): a
        // `.timeout` before 300 s can only be the request's. The bound is that line between the
        // two outcomes, not a guess at speed: on a loaded machine the answer has waited over two
        // minutes for a thread of the cooperative pool.
        let started = Date()
        let error = await segmentsError {
            _ = try await URLSessionSegmentsTransport(timeout: 300).send(SegmentsHTTPRequest(url: server.url(), timeout: 0.5))
        }
        #expect(error?.code == .timeout)
        #expect(Date().timeIntervalSince(started) < 300)
    }

    @Test func transportDefaultTimeoutAppliesWhenTheRequestSetsNone() async throws {
        let server = try LoopbackServer { _ in .hang(after: Data()) }
        defer { server.stop() }
        let error = await segmentsError {
            _ = try await URLSessionSegmentsTransport(timeout: 0.5).send(SegmentsHTTPRequest(url: server.url()))
        }
        #expect(error?.code == .timeout)
    }

    @Test func refusedConnectionIsANetworkError() async throws {
        // A reserved port, not a stopped server's: another test's server may take a freed one.
        let error = try await LoopbackServer.withRefusingPort { port in
            await segmentsError {
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/"))
                _ = try await URLSessionSegmentsTransport().send(SegmentsHTTPRequest(url: url, timeout: 5))
            }
        }
        #expect(error?.code == .network)
    }

    @Test func taskCancellationCancelsTheRequest() async throws {
        let server = try LoopbackServer { _ in .hang(after: Data()) }
        defer { server.stop() }
        let transport = URLSessionSegmentsTransport()
        let ended = LockedValue(false)
        let url = server.url()
        let task = Task {
            defer { ended.withLock { $0 = true } }
            return try await transport.send(SegmentsHTTPRequest(url: url, timeout: 300))
        }
        // Cancelled once the server has the request (the suite's time limit ends a hang).
        while server.received.isEmpty && !ended.value { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.received.count == 1, "the request reached the server before it ended")
        task.cancel()
        let error = await segmentsError { _ = try await task.value }
        #expect(error?.code == .cancelled)  // not `.timeout`, which would come 300 s later
    }
}
